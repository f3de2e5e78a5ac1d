/*
 * tb_fuzz_seedgen HARNESS OUTDIR [SNAPSHOT_DIR...]
 *
 * Writes HARNESS's seed inputs into OUTDIR: those of fuzz_seeds.c (made
 * by the project's own writers), and, for each snapshot directory given
 * (the real-silicon references, read in place at run time, never copied
 * into the project), the first bytes of each source's stream in the
 * harness's input format.  Run by fuzz/run.sh and fuzz/oss-fuzz-build.sh.
 * A _full harness (fuzz.h) gets the seeds of the fast one it is named
 * after: the same input format.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tracebench/stream.h"

#define REAL_BYTES 3000

static const char *outdir;

static int write_seed(void *ctx, const char *name, const uint8_t *data,
                      size_t len)
{
    char path[1024];
    FILE *f;

    (void)ctx;
    snprintf(path, sizeof path, "%s/%s", outdir, name);
    f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len)) {
        fprintf(stderr, "seedgen: cannot write %s\n", path);
        if (f)
            fclose(f);
        return 1;
    }
    fclose(f);
    return 0;
}

typedef struct grab {
    uint8_t buf[TB_FUZZ_CFG_BYTES + REAL_BYTES];
    size_t len;
} grab;

static int on_bytes(void *ctx, uint64_t index, const uint8_t *data, size_t len)
{
    grab *g = ctx;
    size_t room = sizeof g->buf - g->len;

    (void)index;
    if (len > room)
        len = room;
    memcpy(g->buf + g->len, data, len);
    g->len += len;
    return g->len == sizeof g->buf; /* enough: stop */
}

/* Real-trace seeds for the parser and decoder harnesses. */
static int real_seeds(const char *harness, const char *dir)
{
    tb_protocol want = strstr(harness, "etmv3") ? TB_PROTO_ETMV3
                       : strstr(harness, "ptm") ? TB_PROTO_PTM
                                                : TB_PROTO_NONE;
    char base[256];
    const char *tail;
    tb_snapshot s;
    char err[512];
    size_t i;
    int n = 0;

    if (want == TB_PROTO_NONE)
        return 0;
    if (tb_snapshot_load(&s, dir, err, sizeof err) < 0) {
        fprintf(stderr, "seedgen: %s\n", err);
        return 0;
    }
    /* Seed names carry the snapshot's folder name. */
    snprintf(base, sizeof base, "%s", dir);
    while (strlen(base) > 1 && base[strlen(base) - 1] == '/')
        base[strlen(base) - 1] = '\0';
    tail = strrchr(base, '/') ? strrchr(base, '/') + 1 : base;
    for (i = 0; i < s.n_sources; i++) {
        tb_config cfg;
        grab g;
        char name[128];
        int rc;

        if (!s.sources[i].buffer[0] ||
            tb_snapshot_source_config(&s, &s.sources[i], &cfg, err, sizeof err) < 0 ||
            cfg.protocol != want)
            continue;
        tb_fuzz_config_bytes(want, cfg.arch_minor, cfg.alt_branch, cfg.etmcr,
                             cfg.etmccer, g.buf);
        g.len = TB_FUZZ_CFG_BYTES;
        rc = tb_stream_source(&s, &s.sources[i], NULL, on_bytes, &g, err,
                              sizeof err);
        if ((rc < 0 && rc != TB_ERR_STOPPED) || g.len == TB_FUZZ_CFG_BYTES)
            continue;
        snprintf(name, sizeof name, "real-%s-0x%02x", tail, cfg.trace_id);
        if (write_seed(NULL, name, g.buf, g.len))
            break;
        n++;
    }
    tb_snapshot_fini(&s);
    return n;
}

int main(int argc, char **argv)
{
    int n, i;

    if (argc < 3) {
        fprintf(stderr, "usage: %s HARNESS OUTDIR [SNAPSHOT_DIR...]\n", argv[0]);
        return 2;
    }
    outdir = argv[2];
    n = tb_fuzz_seeds(argv[1], write_seed, NULL);
    if (n < 0) {
        fprintf(stderr, "seedgen: no harness %s\n", argv[1]);
        return 2;
    }
    for (i = 3; i < argc; i++)
        n += real_seeds(argv[1], argv[i]);
    printf("%d seeds for %s in %s\n", n, argv[1], outdir);
    return 0;
}
