/* tracebench roundtrip PROGRAM [--scenario S.ini] [--protocol ptm|etmv3]
 *                      [--options LIST] [--buffer coresight|raw] [--max N]
 *                      [--chunk N] [--out DIR] [--fault addr-bit:N:BIT|drop-atom:N]
 * tracebench roundtrip --suite [--programs DIR] [--vectors DIR] [--max N]
 *                      [--protocol P] [--only TEXT] [--reports N]
 *
 * One program: sim -> encoder -> decoder -> comparator, for one protocol
 * or both; the verdict, or the comparator's report of the first
 * divergence.  --suite: the whole matrix (every program with a scenario x
 * protocol x option set x scenario variant) with a progress line and a
 * summary table.  Exit 1 on any mismatch. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#ifdef TB_HAVE_ROUNDTRIP

#include "tracebench/roundtrip.h"

static int usage(void)
{
    fprintf(stderr,
            "usage: tracebench roundtrip PROGRAM.elf [--scenario S.ini] [--protocol ptm|etmv3]\n"
            "           [--options LIST] [--buffer coresight|raw] [--max N] [--chunk N]\n"
            "           [--out DIR] [--fault addr-bit:N:BIT|drop-atom:N]\n"
            "       tracebench roundtrip --suite [--programs DIR] [--vectors DIR] [--max N]\n"
            "           [--protocol ptm|etmv3] [--only TEXT] [--reports N]   (--max default 200000)\n"
            "  LIST: encoder options (see tracebench sim), plus `filter` for an include\n"
            "        range over the middle half of the program\n"
            "  --suite: programs from DIR (default build/vectors/programs), scenarios\n"
            "        from the vectors DIR (default vectors): programs/NAME.ini and\n"
            "        scenarios/NAME.VARIANT.ini\n");
    return 2;
}

static double bits(uint64_t bytes, uint64_t insns)
{
    return insns ? 8.0 * (double)bytes / (double)insns : 0.0;
}

static int parse_fault(const char *s, tb_rt_fault *f)
{
    unsigned n, b;

    if (sscanf(s, "addr-bit:%u:%u", &n, &b) == 2 && b < 32) {
        *f = (tb_rt_fault){TB_RT_FAULT_ADDR_BIT, n, (uint8_t)b};
        return 0;
    }
    if (sscanf(s, "drop-atom:%u", &n) == 1) {
        *f = (tb_rt_fault){TB_RT_FAULT_DROP_ATOM, n, 0};
        return 0;
    }
    return -1;
}

static int one(const char *prog, const char *scn, const char *proto, const char *opts,
               bool raw, uint64_t max, size_t chunk, const char *out, const tb_rt_fault *fault)
{
    static const tb_protocol both[] = {TB_PROTO_PTM, TB_PROTO_ETMV3};
    int bad = 0;

    for (size_t i = 0; i < 2; i++) {
        tb_protocol p = both[i];
        tb_rt_case c;
        tb_rt_result res;
        char err[512], name[256];
        int rc;

        if (proto && strcmp(proto, tb_protocol_name(p)))
            continue;
        tb_rt_case_init(&c, p);
        snprintf(name, sizeof name, "%s %s%s%s", prog, tb_protocol_name(p), opts ? " " : "",
                 opts ? opts : "");
        c.name = name;
        c.program = prog;
        c.scenario = scn;
        c.max_insns = max;
        c.formatted = !raw;
        c.chunk = chunk;
        c.out_dir = out;
        c.fault = *fault;
        if (opts && tb_rt_case_options(&c, opts, err, sizeof err) < 0) {
            fprintf(stderr, "tracebench roundtrip: --options: %s\n", err);
            return 2;
        }
        rc = tb_rt_run(&c, &res, err, sizeof err);
        if (rc < 0) {
            fprintf(stderr, "tracebench roundtrip: %s: %s\n", tb_err_str(rc), err);
            return 1;
        }
        printf("%-6s %s: %llu instructions run, %llu traced, %llu checked, %llu exceptions, "
               "%llu bytes of trace, %.3f bits/insn\n",
               tb_protocol_name(p), res.match ? "MATCH" : "MISMATCH",
               (unsigned long long)res.sim.insns, (unsigned long long)res.enc.traced,
               (unsigned long long)res.cmp.checked, (unsigned long long)res.cmp.exceptions,
               (unsigned long long)res.enc.bytes, bits(res.enc.bytes, res.sim.insns));
        printf("       also checked: %llu context changes, %llu timestamps, %llu cycle totals; "
               "%llu instructions in gaps, %llu cancelled, %llu overflows\n",
               (unsigned long long)res.cmp.contexts, (unsigned long long)res.cmp.timestamps,
               (unsigned long long)res.cmp.cycle_checks, (unsigned long long)res.cmp.untraced,
               (unsigned long long)res.cmp.cancelled, (unsigned long long)res.enc.overflows);
        if (fault->kind != TB_RT_FAULT_NONE && !res.fault_applied)
            printf("       (the fault found no packet to change)\n");
        if (!res.match) {
            printf("%s", res.report);
            bad = 1;
        }
    }
    return bad;
}

/* ---- the suite ---- */

typedef struct scn_entry {
    char name[64];           /* "" for the program's own, else the variant */
    char path[1024];
} scn_entry;

typedef struct scn_list {
    scn_entry *v;
    size_t n, cap;
} scn_list;

static int scn_add(scn_list *l, const char *name, const char *path)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 8;
        scn_entry *a = realloc(l->v, nc * sizeof *a);

        if (!a)
            return -1;
        l->v = a;
        l->cap = nc;
    }
    snprintf(l->v[l->n].name, sizeof l->v[0].name, "%s", name);
    snprintf(l->v[l->n].path, sizeof l->v[0].path, "%s", path);
    l->n++;
    return 0;
}

static int cmp_scn(const void *a, const void *b)
{
    return strcmp(((const scn_entry *)a)->name, ((const scn_entry *)b)->name);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Program names: every vectors/programs/NAME.ini, sorted. */
static char **list_programs(const char *vdir, size_t *n)
{
    char path[1024];
    char **v = NULL;
    DIR *d;
    struct dirent *e;

    *n = 0;
    snprintf(path, sizeof path, "%s/programs", vdir);
    if (!(d = opendir(path)))
        return NULL;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        char **nv;

        if (l < 5 || strcmp(e->d_name + l - 4, ".ini"))
            continue;
        if (!(nv = realloc(v, (*n + 1) * sizeof *v)))
            break;
        v = nv;
        v[*n] = strndup(e->d_name, l - 4);
        if (v[*n])
            (*n)++;
    }
    closedir(d);
    if (v)
        qsort(v, *n, sizeof *v, cmp_str);
    return v;
}

/* The program's own scenario and its variants scenarios/NAME.VARIANT.ini. */
static void list_scenarios(const char *vdir, const char *prog, scn_list *l)
{
    char path[1024];
    DIR *d;
    struct dirent *e;
    size_t pl = strlen(prog), first;

    snprintf(path, sizeof path, "%s/programs/%s.ini", vdir, prog);
    scn_add(l, "", path);
    first = l->n;
    snprintf(path, sizeof path, "%s/scenarios", vdir);
    if (!(d = opendir(path)))
        return;
    while ((e = readdir(d)) != NULL) {
        size_t el = strlen(e->d_name);
        char file[1024], var[64];

        if (el <= pl + 5 || strncmp(e->d_name, prog, pl) || e->d_name[pl] != '.' ||
            strcmp(e->d_name + el - 4, ".ini"))
            continue;
        snprintf(var, sizeof var, "%.*s", (int)(el - pl - 5), e->d_name + pl + 1);
        snprintf(file, sizeof file, "%s/scenarios/%s", vdir, e->d_name);
        scn_add(l, var, file);
    }
    closedir(d);
    /* readdir order is the file system's: sort the variants by name. */
    qsort(l->v + first, l->n - first, sizeof *l->v, cmp_scn);
}

/* "PROGRAM[.VARIANT] PROTOCOL OPTIONS": names a case in the progress line,
 * the failure list and --only. */
static void case_id(char *buf, size_t len, const char *prog, const scn_entry *sc, tb_protocol p,
                    const char *set)
{
    snprintf(buf, len, "%s%s%s %s %s", prog, *sc->name ? "." : "", sc->name,
             tb_protocol_name(p), *set ? set : "plain");
}

typedef struct row {
    unsigned cases, bad;
    uint64_t run, checked, bytes;
} row;

static int suite(const char *pdir, const char *vdir, const char *proto, uint64_t max,
                 const char *only, unsigned max_reports)
{
    static const tb_protocol protos[] = {TB_PROTO_PTM, TB_PROTO_ETMV3};
    size_t np = 0, nsets[2];
    const char *const *sets[2];
    char **progs = list_programs(vdir, &np);
    row rows[2][64], tot = {0};
    unsigned total = 0, done = 0, reports = 0, errors = 0;
    bool tty = isatty(2);
    char (*failed)[256] = NULL;
    size_t nfailed = 0;

    if (!progs || !np) {
        fprintf(stderr, "tracebench roundtrip: no programs in %s/programs\n", vdir);
        return 2;
    }
    memset(rows, 0, sizeof rows);
    for (size_t k = 0; k < 2; k++) {
        sets[k] = tb_rt_option_sets(protos[k], &nsets[k]);
        if (nsets[k] > 64)
            nsets[k] = 64;
    }

    /* Count the cases first, for the progress line. */
    for (size_t i = 0; i < np; i++) {
        scn_list sl = {0};

        if (!strcmp(progs[i], "smc"))
            continue;
        list_scenarios(vdir, progs[i], &sl);
        for (size_t k = 0; k < 2; k++)
            if (!proto || !strcmp(proto, tb_protocol_name(protos[k])))
                for (size_t s = 0; s < nsets[k]; s++)
                    for (size_t v = 0; v < sl.n; v++) {
                        char id[256];

                        case_id(id, sizeof id, progs[i], &sl.v[v], protos[k], sets[k][s]);
                        if (!only || strstr(id, only))
                            total++;
                    }
        free(sl.v);
    }

    for (size_t i = 0; i < np; i++) {
        char elf[1024];
        scn_list sl = {0};

        if (!strcmp(progs[i], "smc"))
            continue;
        snprintf(elf, sizeof elf, "%s/%s.elf", pdir, progs[i]);
        list_scenarios(vdir, progs[i], &sl);
        for (size_t k = 0; k < 2; k++) {
            if (proto && strcmp(proto, tb_protocol_name(protos[k])))
                continue;
            for (size_t s = 0; s < nsets[k]; s++) {
                for (size_t v = 0; v < sl.n; v++) {
                    tb_rt_case c;
                    tb_rt_result res;
                    char id[256], err[512];
                    int rc;

                    case_id(id, sizeof id, progs[i], &sl.v[v], protos[k], sets[k][s]);
                    if (only && !strstr(id, only))
                        continue;
                    done++;
                    if (tty)
                        fprintf(stderr, "\r\033[K[%4u/%u] %s", done, total, id);
                    else if (done % 50 == 0 || done == total)
                        fprintf(stderr, "[%4u/%u] %s\n", done, total, id);
                    tb_rt_case_init(&c, protos[k]);
                    c.name = id;
                    c.program = elf;
                    c.scenario = sl.v[v].path;
                    c.max_insns = max;
                    /* Alternate the buffer kind and the chunking so both
                     * paths and odd pieces run across the matrix. */
                    c.formatted = (s + v) % 2 == 0;
                    c.chunk = (s % 3 == 1) ? 7 : 0;
                    rc = tb_rt_case_options(&c, sets[k][s], err, sizeof err);
                    if (rc >= 0)
                        rc = tb_rt_run(&c, &res, err, sizeof err);
                    rows[k][s].cases++;
                    if (rc < 0 || !res.match) {
                        char (*nf)[256] = realloc(failed, (nfailed + 1) * sizeof *failed);

                        rows[k][s].bad++;
                        if (nf) {
                            failed = nf;
                            snprintf(failed[nfailed++], sizeof failed[0], "%s", id);
                        }
                        if (tty)
                            fprintf(stderr, "\n");
                        if (rc < 0) {
                            errors++;
                            printf("ERROR %s: %s: %s\n", id, tb_err_str(rc), err);
                        } else if (reports++ < max_reports) {
                            printf("%s", res.report);
                        }
                        if (rc < 0)
                            continue;
                    }
                    rows[k][s].run += res.sim.insns;
                    rows[k][s].checked += res.cmp.checked;
                    rows[k][s].bytes += res.enc.bytes;
                }
            }
        }
        free(sl.v);
    }
    if (tty)
        fprintf(stderr, "\r\033[K");

    printf("\nround trip: sim -> encoder -> decoder -> comparator, %zu programs "
           "(smc left out: the simulator does not follow self-modifying code)\n\n", np - 1);
    printf("%-6s %-22s %6s %6s %12s %12s %10s %9s\n", "proto", "options", "cases", "bad",
           "insns run", "checked", "bytes", "bits/insn");
    for (size_t k = 0; k < 2; k++) {
        for (size_t s = 0; s < nsets[k]; s++) {
            const row *r = &rows[k][s];

            if (!r->cases)
                continue;
            printf("%-6s %-22s %6u %6u %12llu %12llu %10llu %9.3f\n",
                   tb_protocol_name(protos[k]), *sets[k][s] ? sets[k][s] : "plain", r->cases,
                   r->bad, (unsigned long long)r->run, (unsigned long long)r->checked,
                   (unsigned long long)r->bytes, bits(r->bytes, r->run));
            tot.cases += r->cases;
            tot.bad += r->bad;
            tot.run += r->run;
            tot.checked += r->checked;
            tot.bytes += r->bytes;
        }
    }
    printf("%-6s %-22s %6u %6u %12llu %12llu %10llu %9.3f\n", "all", "", tot.cases, tot.bad,
           (unsigned long long)tot.run, (unsigned long long)tot.checked,
           (unsigned long long)tot.bytes, bits(tot.bytes, tot.run));
    if (tot.bad) {
        printf("\n%u of %u cases FAILED (%u errors):\n", tot.bad, tot.cases, errors);
        for (size_t i = 0; i < nfailed; i++)
            printf("  %s\n", failed[i]);
    } else {
        printf("\nall %u cases match\n", tot.cases);
    }
    for (size_t i = 0; i < np; i++)
        free(progs[i]);
    free(progs);
    free(failed);
    return tot.bad || !tot.cases ? 1 : 0;
}

int tb_cli_roundtrip(int argc, char **argv)
{
    const char *prog = NULL, *scn = NULL, *proto = NULL, *opts = NULL, *out = NULL;
    const char *pdir = "build/vectors/programs", *vdir = "vectors", *only = NULL;
    bool raw = false, do_suite = false;
    uint64_t max = 0;
    size_t chunk = 0;
    unsigned reports = 3;
    tb_rt_fault fault = {TB_RT_FAULT_NONE, 0, 0};

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end;

        if (!strcmp(a, "--suite")) {
            do_suite = true;
            continue;
        }
        if (a[0] != '-') {
            if (prog)
                return usage();
            prog = a;
            continue;
        }
        if (!v)
            return usage();
        i++;
        if (!strcmp(a, "--scenario"))
            scn = v;
        else if (!strcmp(a, "--protocol") && (!strcmp(v, "ptm") || !strcmp(v, "etmv3")))
            proto = v;
        else if (!strcmp(a, "--options"))
            opts = v;
        else if (!strcmp(a, "--buffer") && (!strcmp(v, "raw") || !strcmp(v, "coresight")))
            raw = !strcmp(v, "raw");
        else if (!strcmp(a, "--out"))
            out = v;
        else if (!strcmp(a, "--programs"))
            pdir = v;
        else if (!strcmp(a, "--vectors"))
            vdir = v;
        else if (!strcmp(a, "--only"))
            only = v;
        else if (!strcmp(a, "--max") && (max = strtoull(v, &end, 0), !*end))
            ;
        else if (!strcmp(a, "--chunk") && (chunk = strtoull(v, &end, 0), !*end))
            ;
        else if (!strcmp(a, "--reports") && (reports = (unsigned)strtoul(v, &end, 0), !*end))
            ;
        else if (!strcmp(a, "--fault") && parse_fault(v, &fault) == 0)
            ;
        else
            return usage();
    }
    if (do_suite)
        return prog ? usage() : suite(pdir, vdir, proto, max ? max : 200000, only, reports);
    if (!prog || (out && !proto))
        return usage();
    return one(prog, scn, proto, opts, raw, max, chunk, out, &fault);
}

#else

int tb_cli_roundtrip(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tracebench roundtrip: built without the simulator\n");
    return 1;
}

#endif
