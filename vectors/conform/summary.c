/*
 * The verdicts counted per protocol and per spec-coverage variant: for
 * each variant, how many of the vectors that hold it (and were run)
 * pass, and at how many failures the divergence's own packet has it,
 * so that a decoder writer sees which features their decoder gets wrong.
 */
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "tracebench/types.h"

static bool holds(const tb_conform_unit *u, unsigned v)
{
    return u->cov_known && v < TB_CONFORM_COV_BYTES * 8 && (u->cov[v / 8] >> (v % 8)) & 1;
}

int tb_conform_summarize(const tb_conform_unit *units, const tb_conform_result *res, size_t n,
                         tb_conform_summary *s)
{
    unsigned nv = tb_conform_cov_count();
    tb_conform_var_row *rows;

    memset(s, 0, sizeof *s);
    rows = calloc(nv ? nv : 1, sizeof *rows);
    if (!rows)
        return TB_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        const tb_conform_unit *u = &units[i];
        const tb_conform_result *r = &res[i];
        size_t p;

        s->all.n[r->status]++;
        s->all.total++;
        for (p = 0; p < s->n_protos; p++)
            if (!strcmp(s->protos[p].protocol, u->protocol))
                break;
        if (p == s->n_protos && p < sizeof s->protos / sizeof s->protos[0]) {
            memset(&s->protos[p], 0, sizeof s->protos[p]);
            memcpy(s->protos[p].protocol, u->protocol, sizeof s->protos[p].protocol);
            s->n_protos++;
        }
        if (p < s->n_protos) {
            s->protos[p].t.n[r->status]++;
            s->protos[p].t.total++;
        }
        if (!r->ran)
            continue;
        for (unsigned v = 0; v < nv; v++) {
            if (!holds(u, v))
                continue;
            rows[v].holding++;
            rows[v].passed += r->status == TB_CONFORM_PASS;
        }
        if (r->status == TB_CONFORM_FAIL)
            for (unsigned k = 0; k < r->div.n_var_ids; k++)
                if (r->div.var_ids[k] < nv)
                    rows[r->div.var_ids[k]].diverged_here++;
    }
    /* Keep the variants some run unit holds, in catalogue order. */
    for (unsigned v = 0; v < nv; v++)
        if (rows[v].holding || rows[v].diverged_here) {
            rows[s->n_vars] = rows[v];
            rows[s->n_vars++].var = v;
        }
    s->vars = rows;
    return 0;
}

void tb_conform_summary_fini(tb_conform_summary *s)
{
    free(s->vars);
    s->vars = NULL;
    s->n_vars = 0;
}
