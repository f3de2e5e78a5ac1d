/*
 * The seam to the spec-coverage catalogue (vectors/spec-coverage.tsv and its
 * classifier, library tb_speccov, vectors/speccov/speccov.h): the only
 * file of the kit that names that API.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "speccov.h"

_Static_assert(TB_SPECCOV_MAX <= TB_CONFORM_COV_BYTES * 8, "a variant set holds every variant");

struct tb_conform_cov {
    tb_speccov_catalogue cat;
};

static bool readable(const char *path)
{
    FILE *f = fopen(path, "r");

    if (f)
        fclose(f);
    return f != NULL;
}

tb_conform_cov *tb_conform_cov_open(const char *root, char *note, size_t notelen)
{
    char path[TB_CONFORM_PATH + 32], err[256] = "";
    tb_conform_cov *c;

    snprintf(path, sizeof path, "%s/spec-coverage.tsv", root);
    if (!readable(path))
        snprintf(path, sizeof path, "%s/../spec-coverage.tsv", root);
    if (!readable(path)) {
        snprintf(note, notelen, "no spec-coverage catalogue (spec-coverage.tsv) beside %s: "
                                "no spec sections", root);
        return NULL;
    }
    c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(note, notelen, "out of memory");
        return NULL;
    }
    if (tb_speccov_catalogue_load(&c->cat, path, err, sizeof err) < 0) {
        snprintf(note, notelen, "%s: %s: no spec sections", path, err);
        free(c);
        return NULL;
    }
    note[0] = '\0';
    return c;
}

void tb_conform_cov_free(tb_conform_cov *c)
{
    if (!c)
        return;
    tb_speccov_catalogue_free(&c->cat);
    free(c);
}

unsigned tb_conform_cov_count(void)
{
    return tb_speccov_variant_count();
}

const char *tb_conform_cov_name(unsigned v)
{
    return tb_speccov_variant_name((tb_speccov_id)v);
}

const char *tb_conform_cov_section(const tb_conform_cov *c, unsigned v)
{
    for (size_t k = 0; c && k < c->cat.n; k++)
        if (c->cat.rows[k].var == v)
            return c->cat.rows[k].section;
    return "";
}

int tb_conform_cov_vector(tb_conform_unit *u, char *err, size_t errlen)
{
    tb_speccov_tally *t = calloc(1, sizeof *t);
    int r;

    if (!t) {
        snprintf(err, errlen, "out of memory");
        return TB_ERR_NOMEM;
    }
    r = tb_speccov_count_snapshot(u->dir, t, err, errlen);
    if (r >= 0) {
        memset(u->cov, 0, sizeof u->cov);
        for (unsigned v = 0; v < tb_speccov_variant_count(); v++)
            if (t->vectors[v])
                u->cov[v / 8] |= (uint8_t)(1u << (v % 8));
        u->cov_known = true;
    }
    free(t);
    return r;
}

int tb_conform_cov_packet(const tb_conform_cov *c, const tb_config *cfg, const tb_packet *pkt,
                         tb_conform_divergence *d)
{
    tb_speccov_id ids[8];
    int n = tb_speccov_classify_packet(cfg, pkt, ids, sizeof ids / sizeof ids[0]);
    size_t used = 0;

    d->variants[0] = '\0';
    d->n_var_ids = 0;
    for (int k = 0; k < n; k++) {
        const char *sec = tb_conform_cov_section(c, ids[k]);
        int w = snprintf(d->variants + used, sizeof d->variants - used, "%s%s%s%s%s",
                         used ? "; " : "", tb_speccov_variant_name(ids[k]),
                         sec[0] ? " (" : "", sec, sec[0] ? ")" : "");

        if (w < 0 || (size_t)w >= sizeof d->variants - used)
            break;
        used += (size_t)w;
        d->var_ids[d->n_var_ids++] = ids[k];
    }
    return n < 0 ? n : (int)d->n_var_ids;
}
