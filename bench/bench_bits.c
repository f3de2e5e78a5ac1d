/* bench_bits: trace density of the encoder, next to real silicon.
 *
 * Ours: every vector program (build/vectors/programs/NAME.elf with its
 * scenario vectors/programs/NAME.ini, each run capped at MAX_INSNS,
 * default 200000) x both protocols x the option sets of
 * tests/test_encoder_ocsd.c, run sim -> encoder; the trace bytes, the
 * instructions run and traced, and bits per traced instruction.
 *
 * Silicon: the TC2 snapshot (TB_REFERENCE_DIR, default ../shared/reference
 * beside the project): the bytes of each source in the ETB buffer
 * (ETMv3.5 0x10-0x12, PTM1.1 0x13; cycle-accurate with timestamps) over
 * the instructions Arm DS-5 decoded from it (TC2/ds5-dumps), and over the
 * instructions our decoder gives, as a cross-check.
 *
 * Usage: bench_bits [-v] [MAX_INSNS].  -v also lists every run. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tracebench/decoder.h"
#include "tracebench/encoder.h"
#include "tracebench/parser.h"
#include "tracebench/snapshot.h"
#include "tracebench/stream.h"
#ifdef TB_HAVE_SIM
#include "tracebench/sim.h"
#endif

/* The option sets of tests/test_encoder_ocsd.c ("filter": trace the
 * middle half of the image only, as there). */
static const char *const etm_sets[] = {
    "", "ca", "ts", "ca,ts", "ctxid=4,vmid", "bb", "alt", "v=3", "v=3,ca",
    "ca,bb,ctxid=2", "sync=64", "filter", "fifo=48:1/8", "fifo=64:1/4,ca,ts",
};
static const char *const ptm_sets[] = {
    "", "ca", "ts", "ca,ts", "ctxid=4,vmid", "bb", "rs", "rs,ca", "v=0,ts",
    "rs,bb", "sync=64,rs", "filter", "fifo=48:1/64", "fifo=64:1/8,ca,ts,rs",
};
#define N_SETS 14
#define MAX_PROGS 64

typedef struct run {
    uint64_t insns, traced, bytes;
    bool ok;
} run;

static double bpi(uint64_t bytes, uint64_t insns)
{
    return insns ? 8.0 * (double)bytes / (double)insns : 0.0;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf)
        *len = (size_t)n;
    fclose(f);
    return buf;
}

#ifdef TB_HAVE_SIM
static int count_sink(void *ctx, const uint8_t *d, size_t len)
{
    (void)d;
    *(uint64_t *)ctx += len;
    return 0;
}

/* One program under one option set; false (with a message) on failure. */
static bool run_one(const char *prog, tb_protocol proto, const char *opts,
                    uint64_t max_insns, run *out)
{
    char elf[1024], ini[1024], err[256] = "";
    tb_encoder_opts o;
    tb_scenario sc;
    tb_snap_region regs[8];
    tb_sim_result res;
    uint8_t *img, *store = NULL;
    size_t ilen;
    uint64_t bytes = 0;
    tb_encoder *enc = NULL;
    tb_sim *s = NULL;
    int nr, rc = -1;
    bool filter = !strcmp(opts, "filter");

    memset(out, 0, sizeof *out);
    snprintf(elf, sizeof elf, "%s/vectors/programs/%s.elf", TB_BINARY_DIR, prog);
    snprintf(ini, sizeof ini, "%s/vectors/programs/%s.ini", TB_SOURCE_DIR, prog);
    img = read_file(elf, &ilen);
    if (!img) {
        fprintf(stderr, "bench_bits: %s not built\n", elf);
        return false;
    }
    nr = tb_encoder_elf_regions(img, ilen, regs, 8, &store);
    tb_encoder_opts_init(&o, proto);
    if (nr <= 0 || tb_encoder_opts_parse(&o, filter ? "" : opts, err, sizeof err) < 0)
        goto done;
    if (filter) {
        o.n_ranges = 1;
        o.ranges[0] = (tb_encoder_range){regs[0].address + (uint32_t)regs[0].len / 4,
                                         regs[0].address + (uint32_t)regs[0].len * 3 / 4,
                                         false};
    }
    tb_scenario_init(&sc);
    if (tb_scenario_load(&sc, ini, err, sizeof err) < 0)
        goto done;
    if (!sc.max_insns || sc.max_insns > max_insns)
        sc.max_insns = max_insns;
    enc = tb_encoder_new(&o, count_sink, &bytes);
    s = tb_sim_new(sc.cpu);
    if (!enc || !s || tb_sim_load_elf(s, img, ilen) < 0 || tb_sim_set_scenario(s, &sc) < 0)
        goto done;
    rc = tb_sim_run(s, tb_encoder_exec_cb, enc, &res);
    if (rc < 0 && !tb_encoder_error(enc))
        snprintf(err, sizeof err, "simulator: %s", tb_sim_errmsg(s));
    else if (tb_encoder_error(enc) || tb_encoder_finish(enc) < 0)
        snprintf(err, sizeof err, "encoder: %s", tb_err_str(tb_encoder_error(enc)));
    else {
        const tb_encoder_stats *st = tb_encoder_get_stats(enc);

        out->insns = st->insns;
        out->traced = st->traced;
        out->bytes = st->bytes;
        out->ok = bytes == st->bytes;
        if (!out->ok)
            snprintf(err, sizeof err, "sink got %llu bytes, stats say %llu",
                     (unsigned long long)bytes, (unsigned long long)st->bytes);
    }
done:
    if (!out->ok)
        fprintf(stderr, "bench_bits: %s/%s/%s: %s\n", prog,
                proto == TB_PROTO_PTM ? "ptm" : "etmv3", *opts ? opts : "plain",
                *err ? err : "failed");
    tb_sim_free(s);
    tb_encoder_free(enc);
    free(img);
    free(store);
    return out->ok;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* Program names (scenario files), sorted; smc is left out as in
 * test_encoder_ocsd.c: it rewrites its own code, which the simulator
 * refuses by design. */
static size_t list_programs(char names[][64])
{
    char pdir[1024];
    struct dirent *de;
    size_t n = 0;
    DIR *d;

    snprintf(pdir, sizeof pdir, "%s/vectors/programs", TB_SOURCE_DIR);
    d = opendir(pdir);
    if (!d)
        return 0;
    while ((de = readdir(d)) && n < MAX_PROGS) {
        size_t l = strlen(de->d_name);

        if (l < 5 || l - 4 >= 64 || strcmp(de->d_name + l - 4, ".ini"))
            continue;
        memcpy(names[n], de->d_name, l - 4);
        names[n][l - 4] = 0;
        if (strcmp(names[n], "smc"))
            n++;
    }
    closedir(d);
    qsort(names, n, sizeof names[0], cmp_str);
    return n;
}

/* The whole matrix of one protocol; fills the per-set totals. */
static int bench_protocol(tb_protocol proto, char names[][64], size_t nprog,
                          uint64_t max_insns, bool verbose, run tot[N_SETS])
{
    const char *const *sets = proto == TB_PROTO_PTM ? ptm_sets : etm_sets;
    const char *pname = proto == TB_PROTO_PTM ? "PTM (PFT1.1 unless v=0)"
                                              : "ETMv3 (3.5 unless v=3)";
    static run cell[MAX_PROGS][N_SETS];
    int failures = 0;

    memset(tot, 0, N_SETS * sizeof *tot);
    for (size_t p = 0; p < nprog; p++)
        for (size_t i = 0; i < N_SETS; i++) {
            if (!run_one(names[p], proto, sets[i], max_insns, &cell[p][i])) {
                failures++;
                continue;
            }
            tot[i].insns += cell[p][i].insns;
            tot[i].traced += cell[p][i].traced;
            tot[i].bytes += cell[p][i].bytes;
        }

    printf("\n== %s: bits per traced instruction ==\n", pname);
    for (size_t i = 0; i < N_SETS; i++)
        printf("  s%-2zu %s\n", i, *sets[i] ? sets[i] : "plain");
    printf("%-13s", "program");
    for (size_t i = 0; i < N_SETS; i++)
        printf(" %5s%-2zu", "s", i);
    printf("  %9s\n", "insns");
    for (size_t p = 0; p < nprog; p++) {
        printf("%-13.13s", names[p]);
        for (size_t i = 0; i < N_SETS; i++) {
            if (cell[p][i].ok)
                printf(" %7.3f", bpi(cell[p][i].bytes, cell[p][i].traced));
            else
                printf(" %7s", "FAIL");
        }
        printf("  %9llu\n", (unsigned long long)cell[p][0].insns);
    }
    printf("%-13s", "ALL");
    for (size_t i = 0; i < N_SETS; i++)
        printf(" %7.3f", bpi(tot[i].bytes, tot[i].traced));
    printf("  %9llu\n", (unsigned long long)tot[0].insns);

    printf("\n%-22s %10s %10s %10s %9s\n", "option set", "insns", "traced", "bytes",
           "bits/insn");
    for (size_t i = 0; i < N_SETS; i++)
        printf("%-22s %10llu %10llu %10llu %9.3f\n", *sets[i] ? sets[i] : "plain",
               (unsigned long long)tot[i].insns, (unsigned long long)tot[i].traced,
               (unsigned long long)tot[i].bytes, bpi(tot[i].bytes, tot[i].traced));
    if (verbose) {
        printf("\n%-13s %-22s %9s %9s %9s %9s\n", "program", "option set", "insns", "traced",
               "bytes", "bits/insn");
        for (size_t p = 0; p < nprog; p++)
            for (size_t i = 0; i < N_SETS; i++)
                printf("%-13s %-22s %9llu %9llu %9llu %9.3f\n", names[p],
                       *sets[i] ? sets[i] : "plain", (unsigned long long)cell[p][i].insns,
                       (unsigned long long)cell[p][i].traced,
                       (unsigned long long)cell[p][i].bytes,
                       bpi(cell[p][i].bytes, cell[p][i].traced));
    }
    return failures;
}
#endif /* TB_HAVE_SIM */

/* ---- silicon ---- */

typedef struct src_count {
    tb_parser *parser;
    uint64_t bytes, unsynced;
    int err;
} src_count;

static int on_pkt(void *ctx, const tb_packet *p)
{
    src_count *c = ctx;

    if (p->kind == TB_PKT_NOTSYNC)
        c->unsynced += p->count;
    return 0;
}

static int on_bytes(void *ctx, uint64_t index, const uint8_t *d, size_t len)
{
    src_count *c = ctx;
    int rc = tb_parser_push(c->parser, d, len, index, on_pkt, c);

    c->bytes += len;
    if (rc < 0)
        c->err = rc;
    return 0;
}

static int on_elem(void *ctx, const tb_element *el)
{
    if (el->kind == TB_ELEM_INSN_RANGE)
        *(uint64_t *)ctx += el->count;
    return 0;
}

/* Instruction rows of a DS-5 dump (those DS-5 could not read, opcode
 * "0x?", still ran: they count; *unread says how many). */
static long ds5_insns(const char *path, long *unread)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    long n = 0;

    *unread = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "Instruction\t", 12)) {
            n++;
            if (strstr(line, "\t0x?\t"))
                (*unread)++;
        }
    fclose(f);
    return n;
}

typedef struct silicon {
    bool have;
    uint64_t bytes[2], insns[2]; /* [0] ETMv3, [1] PTM: synced bytes, DS-5 insns */
} silicon;

static void bench_silicon(silicon *si)
{
    static const struct {
        int id;
        const char *ds5;
        int ptm;
    } srcs[] = {
        {0x10, "etmv3_0x10.txt", 0},
        {0x11, "etmv3_0x11.txt", 0},
        {0x12, "etmv3_0x12.txt", 0},
        {0x13, "ptmv1_0x13.txt", 1},
    };
    const char *ref = getenv("TB_REFERENCE_DIR");
    char dir[1024], path[1200], err[256] = "";
    struct stat sb;
    tb_snapshot snap;

    memset(si, 0, sizeof *si);
    if (ref && *ref)
        snprintf(dir, sizeof dir, "%s/opencsd-snapshots/TC2", ref);
    else
        snprintf(dir, sizeof dir, "%s/../shared/reference/opencsd-snapshots/TC2",
                 TB_SOURCE_DIR);
    printf("\n== Silicon: TC2 (%s) ==\n", dir);
    if (stat(dir, &sb) != 0 || tb_snapshot_load(&snap, dir, err, sizeof err) < 0) {
        printf("*** SKIPPED: TC2 snapshot not found %s***\n", *err ? err : "");
        return;
    }
    printf("%-5s %-6s %9s %9s %9s %9s %9s %10s %10s\n", "id", "proto", "bytes",
           "synced", "DS-5 ins", "unread", "ours ins", "bits/DS-5", "bits/ours");
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        const tb_snap_source *src = tb_stream_find_source(&snap, srcs[i].id, err, sizeof err);
        src_count c = {0};
        tb_config cfg;
        uint64_t ours = 0;
        long unread, ds5;

        snprintf(path, sizeof path, "%s/ds5-dumps/%s", dir, srcs[i].ds5);
        ds5 = ds5_insns(path, &unread);
        if (!src || tb_snapshot_source_config(&snap, src, &cfg, err, sizeof err) < 0 ||
            !(c.parser = tb_parser_new(&cfg)) ||
            tb_stream_source(&snap, src, NULL, on_bytes, &c, err, sizeof err) < 0 ||
            tb_parser_finish(c.parser, on_pkt, &c) < 0 || c.err ||
            tb_decode_snapshot(dir, srcs[i].id, on_elem, &ours, err, sizeof err) < 0 ||
            ds5 <= 0) {
            printf("0x%02x  failed: %s\n", srcs[i].id, *err ? err : "no DS-5 dump");
            tb_parser_free(c.parser);
            continue;
        }
        tb_parser_free(c.parser);
        /* Bytes before the first A-sync (the wrapped ETB's start) decode
         * to nothing in either decoder: left out of the density. */
        printf("0x%02x  %-6s %9llu %9llu %9ld %9ld %9llu %10.3f %10.3f\n", srcs[i].id,
               srcs[i].ptm ? "PTM" : "ETMv3", (unsigned long long)c.bytes,
               (unsigned long long)(c.bytes - c.unsynced), ds5, unread,
               (unsigned long long)ours, bpi(c.bytes - c.unsynced, (uint64_t)ds5),
               bpi(c.bytes - c.unsynced, ours));
        si->bytes[srcs[i].ptm] += c.bytes - c.unsynced;
        si->insns[srcs[i].ptm] += (uint64_t)ds5;
        si->have = true;
    }
    tb_snapshot_fini(&snap);
    for (int p = 0; p < 2; p++)
        printf("%-12s %9llu synced bytes / %9llu DS-5 insns = %.3f bits/insn\n",
               p ? "PTM 0x13" : "ETMv3 0x10-12", (unsigned long long)si->bytes[p],
               (unsigned long long)si->insns[p], bpi(si->bytes[p], si->insns[p]));
}

int main(int argc, char **argv)
{
    uint64_t max_insns = 200000;
    bool verbose = false;
    silicon si;
    int failures = 0;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v"))
            verbose = true;
        else if (strtoull(argv[i], NULL, 0) > 0)
            max_insns = strtoull(argv[i], NULL, 0);
        else {
            fprintf(stderr, "usage: bench_bits [-v] [MAX_INSNS]\n");
            return 2;
        }
    }
#ifdef TB_HAVE_SIM
    {
        static char names[MAX_PROGS][64];
        size_t nprog = list_programs(names);
        run etm[N_SETS], ptm[N_SETS];

        if (!nprog) {
            fprintf(stderr, "bench_bits: no programs in %s/vectors/programs\n", TB_SOURCE_DIR);
            return 1;
        }
        printf("bench_bits: %zu programs, each run capped at %llu instructions\n", nprog,
               (unsigned long long)max_insns);
        failures += bench_protocol(TB_PROTO_ETMV3, names, nprog, max_insns, verbose, etm);
        failures += bench_protocol(TB_PROTO_PTM, names, nprog, max_insns, verbose, ptm);
        bench_silicon(&si);
        /* Plain is the densest setting; TC2 ran cycle-accurate with
         * timestamps, so "ca,ts" (set 3 for both) is the like-for-like. */
        printf("\n== Summary ==\n");
        for (int p = 0; p < 2; p++) {
            const run *t = p ? ptm : etm;

            char sil[64] = "SKIPPED (no TC2 snapshot), no";

            if (si.have && si.insns[p])
                snprintf(sil, sizeof sil, "%.3f", bpi(si.bytes[p], si.insns[p]));
            printf("%-5s ours plain %.3f bits/insn (ours ca,ts %.3f) vs silicon TC2 %s "
                   "(CA + timestamps) %s bits/insn\n",
                   p ? "PTM" : "ETMv3", bpi(t[0].bytes, t[0].traced),
                   bpi(t[3].bytes, t[3].traced), p ? "PTM1.1 0x13" : "ETMv3.5 0x10-0x12",
                   sil);
        }
    }
#else
    printf("bench_bits: built without the simulator (libunicorn): encoder density not measured\n");
    bench_silicon(&si);
#endif
    return failures ? 1 : 0;
}
