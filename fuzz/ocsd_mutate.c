/*
 * tb_fuzz_ocsd_mutate [--per N] [--seed S] [--keep DIR] VECTOR_DIR...
 *
 * The mutation experiment of issue 28 as a tool: each snapshot's trace
 * buffer (ETMv3/PTM sources without data trace: OpenCSD decodes none
 * with it) is mutated N times (default 30): one to three changes, each a
 * flipped bit or a random byte at a random offset.  Each mutant goes to
 * our decoder and to OpenCSD's in process (fuzz_diff_ocsd.c's
 * comparison: a CoreSight-formatted buffer is deformatted by each side's
 * own deformatter, ours passing on where a corrupt frame lost bytes),
 * and is classified:
 *   agree          the same instructions up to either side's first error
 *   agree+fault    the same up to differences a documented OpenCSD fault
 *                  explains (docs/opencsd-bugs.md; counted per fault)
 *   DIFFER         anything else: the report goes to stderr, and with
 *                  --keep the mutant is written to DIR as a snapshot
 *                  (tracebench decode / trc_pkt_lister -ss_dir on it).
 * The mutations are a function of the seed, the vector's name and the
 * mutant's number: a run can be repeated exactly.  Exit status 1 when any
 * mutant differs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tracebench/frame.h"
#include "tracebench/snapshot.h"
#include "tracebench/stream.h"

typedef struct runs {
    tb_ocsd_run v[1 << 14];
    size_t n;
    uint8_t bytes[1 << 20];
    size_t len;
} runs;

static int on_run(void *ctx, uint8_t id, uint64_t index, const uint8_t *data, size_t len)
{
    runs *r = ctx;

    (void)id;
    if (r->n == sizeof r->v / sizeof r->v[0] || r->len + len > sizeof r->bytes)
        return 1;
    memcpy(r->bytes + r->len, data, len);
    r->v[r->n++] = (tb_ocsd_run){index, r->bytes + r->len, len};
    r->len += len;
    return 0;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;

    while (*s)
        h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
    return h;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *b = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (b = malloc((size_t)n + 1)) && fread(b, 1, (size_t)n, f) == (size_t)n) {
        *len = (size_t)n;
    } else {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

/* The mutant as a snapshot in dir/name: the vector's files, the buffer
 * replaced. */
static void keep(const char *keepdir, const char *vec, const char *base, int k,
                 const char *bufname, const uint8_t *buf, size_t len)
{
    char cmd[4096], path[2048];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s-m%d", keepdir, base, k);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s' && cp '%s'/* '%s'/", path, path,
             vec, path);
    if (system(cmd) != 0)
        return;
    snprintf(cmd, sizeof cmd, "%s/%s", path, bufname);
    f = fopen(cmd, "wb");
    if (f) {
        fwrite(buf, 1, len, f);
        fclose(f);
    }
    fprintf(stderr, "  kept as %s\n", path);
}

int main(int argc, char **argv)
{
    static runs r;
    int per = 30, a, differ = 0, total = 0, agree = 0, explained = 0, skipped = 0;
    int one_sided[2] = {0, 0};
    uint64_t seed = 28;
    const char *keepdir = NULL;

    for (a = 1; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "--per") && a + 1 < argc)
            per = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--seed") && a + 1 < argc)
            seed = strtoull(argv[++a], NULL, 0);
        else if (!strcmp(argv[a], "--keep") && a + 1 < argc)
            keepdir = argv[++a];
        else {
            fprintf(stderr, "usage: %s [--per N] [--seed S] [--keep DIR] VECTOR_DIR...\n",
                    argv[0]);
            return 2;
        }
    }
    if (a == argc) {
        fprintf(stderr, "usage: %s [--per N] [--seed S] [--keep DIR] VECTOR_DIR...\n", argv[0]);
        return 2;
    }
    for (; a < argc; a++) {
        const char *vec = argv[a], *base = strrchr(vec, '/') ? strrchr(vec, '/') + 1 : vec;
        tb_snapshot snap;
        const tb_snap_source *src;
        const tb_snap_buffer *sb = NULL;
        tb_memimage *mem = NULL;
        tb_config cfg;
        char err[512], path[2048];
        uint8_t *orig, *mut;
        size_t len, i;
        unsigned flags = 0;
        int formatted, k;

        if (tb_snapshot_load(&snap, vec, err, sizeof err) < 0) {
            fprintf(stderr, "%s: %s\n", vec, err);
            return 1;
        }
        src = tb_stream_find_source(&snap, -1, err, sizeof err);
        if (!src || tb_snapshot_source_config(&snap, src, &cfg, err, sizeof err) < 0 ||
            tb_snapshot_source_memory(&snap, src, &mem, err, sizeof err) < 0) {
            fprintf(stderr, "%s: %s (skipped)\n", vec, err);
            tb_snapshot_fini(&snap);
            continue;
        }
        if (cfg.data_trace || cfg.data_only) {
            printf("%s: data trace: OpenCSD decodes none (skipped)\n", base);
            tb_memimage_free(mem);
            tb_snapshot_fini(&snap);
            continue;
        }
        for (i = 0; i < snap.n_buffers; i++)
            if (!strcmp(snap.buffers[i].name, src->buffer))
                sb = &snap.buffers[i];
        formatted = sb ? tb_snap_buffer_frame_flags(sb, &flags) : -1;
        if (!sb || sb->n_files != 1 || formatted < 0 || (formatted == 0 && flags)) {
            printf("%s: not one ETB-style buffer file (skipped)\n", base);
            tb_memimage_free(mem);
            tb_snapshot_fini(&snap);
            continue;
        }
        snprintf(path, sizeof path, "%s/%s", vec, sb->files[0]);
        orig = read_file(path, &len);
        mut = orig ? malloc(len) : NULL;
        if (!mut || len == 0) {
            fprintf(stderr, "%s: cannot read %s\n", vec, path);
            return 1;
        }
        for (k = 0; k < per; k++) {
            uint64_t s = seed ^ hash_str(base) ^ (uint64_t)(k + 1) * 0x9e3779b97f4a7c15ull;
            unsigned changes = 1 + (unsigned)(rnd(&s) % 3), c;
            char name[256];
            int rc;

            memcpy(mut, orig, len);
            for (c = 0; c < changes; c++) {
                size_t at = (size_t)(rnd(&s) % len);

                if (rnd(&s) & 1)
                    mut[at] ^= (uint8_t)(1u << (rnd(&s) % 8));
                else
                    mut[at] = (uint8_t)rnd(&s);
            }
            r.n = r.len = 0;
            if (formatted == 0) {
                /* Ours: our deformatter, passing on where bytes were
                 * lost; OpenCSD's: the buffer as it is. */
                tb_deformatter *d = tb_deformatter_new(TB_FRAME_REPORT_GAPS);
                uint8_t id = cfg.trace_id;

                if (!d || tb_deformatter_set_ids(d, &id, 1) < 0)
                    return 1;
                (void)tb_deformatter_push(d, mut, len, 0, on_run, &r);
                (void)tb_deformatter_finish(d, on_run, &r);
                tb_deformatter_free(d);
            } else {
                on_run(&r, 0, 0, mut, len);
            }
            snprintf(name, sizeof name, "%s-m%d", base, k);
            {
                const char *names[32];
                unsigned before[32], after[32];
                size_t nf = tb_ocsd_diff_hits(names, before, 32), f;

                rc = tb_ocsd_diff(name, &cfg, mem, r.v, r.n, mut, len, formatted == 0);
                tb_ocsd_diff_hits(names, after, 32);
                total++;
                if (rc < 0) {
                    skipped++;
                    printf("%s: too long (skipped)\n", name);
                } else if (rc) {
                    differ++;
                    printf("%s: DIFFER\n", name);
                    if (keepdir)
                        keep(keepdir, vec, base, k, sb->files[0], mut, len);
                } else {
                    int any = 0;
                    bool oe, te;
                    const char *ow, *tw;

                    for (f = 0; f < nf && f < 32; f++)
                        if (after[f] != before[f]) {
                            printf("%s%s", any ? "; " : "agree+fault: ", names[f]);
                            any = 1;
                        }
                    if (any) {
                        printf("  (%s)\n", name);
                        explained++;
                    } else {
                        agree++;
                    }
                    /* Where only one side saw an error, the other decoded
                     * on: say which and why (compared up to the error). */
                    tb_ocsd_diff_errors(&oe, &te, &ow, &tw);
                    if (oe != te) {
                        printf("one-sided error (%s): %s: %s\n", name, oe ? "ours" : "OpenCSD",
                               oe ? ow : tw);
                        one_sided[oe ? 0 : 1]++;
                    }
                }
            }
        }
        free(orig);
        free(mut);
        tb_memimage_free(mem);
        tb_snapshot_fini(&snap);
    }
    printf("%d mutants: %d agree, %d agree up to documented OpenCSD faults, %d differ, "
           "%d skipped; an error on one side only: %d ours, %d OpenCSD's\n", total, agree,
           explained, differ, skipped, one_sided[0], one_sided[1]);
    return differ ? 1 : 0;
}
