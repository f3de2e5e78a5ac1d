/* tracebench decode DIR [--id ID] [--format text|json|addr] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tracebench/decoder.h"
#include "tracebench/snapshot.h"

int tb_cli_decode(int argc, char **argv);

struct out {
    FILE *f;
    int format; /* 0 text, 1 json, 2 addr */
    tb_cli_addr_out addr;
};

static int on_elem(void *ctx, const tb_element *el)
{
    struct out *o = ctx;
    char line[512];

    if (o->format == 0 || o->format == 1) {
        if (o->format == 0)
            tb_elem_format(el, line, sizeof line);
        else
            tb_elem_format_json(el, line, sizeof line);
        fprintf(o->f, "%s\n", line);
        return 0;
    }
    return tb_cli_addr_element(&o->addr, el) < 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: tracebench decode DIR [--id ID] [--format text|json|addr]\n");
    return 2;
}

static int load_image(const char *dir, int id, tb_memimage **mem, bool *ptm, char *err,
                      size_t len)
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
        *ptm = cfg.protocol == TB_PROTO_PTM;
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
    struct out o = {.f = stdout, .addr = {.f = stdout}};
    tb_memimage *mem = NULL;
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
        r = load_image(dir, id, &mem, &o.addr.ptm, err, sizeof err);
        o.addr.mem = mem;
        if (r < 0) {
            fprintf(stderr, "tracebench decode: %s\n", err);
            return 1;
        }
    }
    r = tb_decode_snapshot(dir, id, on_elem, &o, err, sizeof err);
    if (o.addr.err)
        r = o.addr.err;
    free(o.addr.addrs);
    tb_memimage_free(mem);
    if (r < 0) {
        fprintf(stderr, "tracebench decode: %s\n", err[0] ? err : tb_err_str(r));
        return 1;
    }
    return 0;
}
