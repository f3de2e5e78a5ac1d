/* tracebench decode DIR [--id ID] [--format text|json|addr] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebench/decoder.h"
#include "tracebench/snapshot.h"

int tb_cli_decode(int argc, char **argv);

struct out {
    FILE *f;
    int format; /* 0 text, 1 json, 2 addr */
    tb_memimage *mem;
    uint32_t *addrs;
    size_t cap;
    int err;
};

static int on_elem(void *ctx, const tb_element *el)
{
    struct out *o = ctx;
    char line[512];
    int n;

    if (o->format == 0 || o->format == 1) {
        if (o->format == 0)
            tb_elem_format(el, line, sizeof line);
        else
            tb_elem_format_json(el, line, sizeof line);
        fprintf(o->f, "%s\n", line);
        return 0;
    }
    /* addr: one executed instruction per line, so decoders can be
     * diffed; ADDR_NACC / ADDR_UNKNOWN atoms keep their place. */
    if (el->kind == TB_ELEM_ADDR_NACC) {
        fprintf(o->f, "0x%08X ? NACC\n", (unsigned)el->start);
        return 0;
    }
    if (el->kind == TB_ELEM_ADDR_UNKNOWN) {
        fprintf(o->f, "? ? %c\n", el->last_atom ? el->last_atom : '?');
        return 0;
    }
    if (el->kind != TB_ELEM_INSN_RANGE)
        return 0;
    if (el->count > o->cap) {
        uint32_t *a = realloc(o->addrs, el->count * sizeof *a);

        if (!a) {
            o->err = TB_ERR_NOMEM;
            return 1;
        }
        o->addrs = a;
        o->cap = el->count;
    }
    n = tb_range_addrs(o->mem, el, o->addrs, el->count);
    if (n < 0) {
        o->err = n;
        return 1;
    }
    for (int i = 0; i < n; i++) {
        char atom = 'E';

        if (el->isa != TB_ISA_ARM && el->isa != TB_ISA_THUMB)
            atom = '?';
        else if (i + 1 == n)
            atom = el->last_atom;
        else if (i < 32 && ((el->atom_bits >> i) & 1))
            atom = 'N';
        fprintf(o->f, "0x%08X %s %c\n", (unsigned)o->addrs[i],
                tb_isa_name((tb_isa)el->isa), atom);
    }
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: tracebench decode DIR [--id ID] [--format text|json|addr]\n");
    return 2;
}

static int load_image(const char *dir, int id, tb_memimage **mem, char *err, size_t len)
{
    tb_snapshot s;
    int r = tb_snapshot_load(&s, dir, err, len);

    if (r < 0)
        return r;
    r = TB_ERR_NOT_FOUND;
    snprintf(err, len, "%s: no trace source with ID 0x%x", dir, (unsigned)id);
    for (size_t i = 0; i < s.n_sources; i++) {
        tb_config cfg;

        if (tb_snapshot_source_config(&s, &s.sources[i], &cfg, err, len) < 0)
            continue;
        if (id >= 0 && cfg.trace_id != id)
            continue;
        if (id < 0 && s.n_sources != 1)
            continue;
        r = tb_snapshot_source_memory(&s, &s.sources[i], mem, err, len);
        break;
    }
    tb_snapshot_fini(&s);
    return r;
}

int tb_cli_decode(int argc, char **argv)
{
    const char *dir = NULL;
    int id = -1;
    struct out o = {stdout, 0, NULL, NULL, 0, 0};
    char err[512] = "";
    int r;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--id") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 0);

            if (*end || v < 0 || v > 0x7F)
                return usage();
            id = (int)v;
        } else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
            const char *f = argv[++i];

            if (strcmp(f, "text") == 0)
                o.format = 0;
            else if (strcmp(f, "json") == 0)
                o.format = 1;
            else if (strcmp(f, "addr") == 0)
                o.format = 2;
            else
                return usage();
        } else if (argv[i][0] == '-' || dir) {
            return usage();
        } else {
            dir = argv[i];
        }
    }
    if (!dir)
        return usage();
    if (o.format == 2) {
        r = load_image(dir, id, &o.mem, err, sizeof err);
        if (r < 0) {
            fprintf(stderr, "tracebench decode: %s\n", err);
            return 1;
        }
    }
    r = tb_decode_snapshot(dir, id, on_elem, &o, err, sizeof err);
    if (o.err)
        r = o.err;
    free(o.addrs);
    tb_memimage_free(o.mem);
    if (r < 0) {
        fprintf(stderr, "tracebench decode: %s\n", err[0] ? err : tb_err_str(r));
        return 1;
    }
    return 0;
}
