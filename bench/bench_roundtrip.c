/* bench_roundtrip: the whole round trip (simulator -> encoder ->
 * formatter -> deformatter -> parser -> decoder -> comparator, as
 * `tracebench roundtrip` runs it) against the simulator alone with its
 * truth records on the same program and budget, as a ratio (sim CPU time
 * over round-trip CPU time: 1.0 would be a free round trip).  Issue 36
 * item 2 goals: >= 0.7 PTM, >= 0.6 ETMv3.  The two sides alternate; each
 * figure is the best (least) CPU time of its runs, as the machine is
 * shared.  Usage: bench_roundtrip [ELF] [MAX_INSNS] [RUNS]. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tracebench/roundtrip.h"
#include "tracebench/sim.h"

static double cpu_now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct sink {
    uint64_t n, sum;
};

/* Touches each record so the loop cannot be dropped; no comparator. */
static int on_rec(void *ctx, const tb_exec_record *r)
{
    struct sink *s = ctx;

    s->n++;
    s->sum += r->seq ^ r->kind;
    return 0;
}

/* The simulator alone, as the round trip sets it up (tb_rt_run): the
 * default scenario, the budget, data records when data trace is on. */
static double run_sim(const uint8_t *elf, size_t len, uint64_t max, bool data,
                      uint64_t *insns)
{
    struct sink sink = {0, 0};
    tb_sim_result res;
    tb_scenario sc;
    tb_sim *s;
    double t;
    int rc;

    tb_scenario_init(&sc);
    sc.max_insns = max;
    s = tb_sim_new(sc.cpu);
    if (!s || tb_sim_load_elf(s, elf, len) < 0 || tb_sim_set_scenario(s, &sc) < 0 ||
        (data && tb_sim_set_data(s, true) < 0)) {
        fprintf(stderr, "bench_roundtrip: cannot set up the simulator\n");
        tb_sim_free(s);
        return -1;
    }
    t = cpu_now();
    rc = tb_sim_run(s, on_rec, &sink, &res);
    t = cpu_now() - t;
    if (rc < 0) {
        fprintf(stderr, "bench_roundtrip: %s\n", tb_sim_errmsg(s));
        t = -1;
    }
    *insns = res.insns;
    tb_sim_free(s);
    return t;
}

/* One round trip; its setup (ELF read, image) is inside the time, a
 * fixed cost well under 1% of a run of millions of instructions. */
static double run_rt(const tb_rt_case *c, uint64_t *insns)
{
    tb_rt_result *res = calloc(1, sizeof *res);
    char err[256];
    double t;
    int rc;

    if (!res)
        return -1;
    t = cpu_now();
    rc = tb_rt_run(c, res, err, sizeof err);
    t = cpu_now() - t;
    if (rc < 0 || res->verdict != TB_RT_MATCH) {
        fprintf(stderr, "bench_roundtrip: %s: %s\n", rc < 0 ? err : "no match",
                rc < 0 ? "" : tb_rt_verdict_name(res->verdict));
        t = -1;
    }
    *insns = res->sim.insns;
    free(res);
    return t;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : TB_BINARY_DIR "/vectors/programs/long_run.elf";
    uint64_t max = argc > 2 ? strtoull(argv[2], NULL, 0) : 5000000;
    int runs = argc > 3 ? atoi(argv[3]) : 3;
    static const struct {
        tb_protocol p;
        double goal;
    } protos[] = {{TB_PROTO_PTM, 0.7}, {TB_PROTO_ETMV3, 0.6}};
    FILE *f = fopen(path, "rb");
    uint8_t *elf;
    long len;
    int bad = 0;

    if (runs < 1 || runs > 100)
        runs = 3;
    if (!f) {
        fprintf(stderr, "bench_roundtrip: cannot open %s (build the vectors first)\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    elf = len > 0 ? malloc((size_t)len) : NULL;
    if (!elf || fread(elf, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        free(elf);
        fprintf(stderr, "bench_roundtrip: cannot read %s\n", path);
        return 1;
    }
    fclose(f);
    printf("program %s, budget %llu instructions, best of %d (CPU time)\n", path,
           (unsigned long long)max, runs);
    printf("%-6s %12s %10s %10s %10s %8s %s\n", "proto", "insns", "sim s", "rt s",
           "rt Minsn/s", "ratio", "goal");
    for (size_t k = 0; k < sizeof protos / sizeof protos[0]; k++) {
        tb_rt_case c;
        double best_sim = 0, best_rt = 0;
        uint64_t n_sim = 0, n_rt = 0;

        tb_rt_case_init(&c, protos[k].p);
        c.program = path;
        c.has_budget = true;
        c.budget = max;
        for (int i = 0; i < runs; i++) {
            double ts = run_sim(elf, (size_t)len, max, c.opts.data_trace != 0, &n_sim);
            double tr = run_rt(&c, &n_rt);

            if (ts < 0 || tr < 0) {
                free(elf);
                return 1;
            }
            if (i == 0 || ts < best_sim)
                best_sim = ts;
            if (i == 0 || tr < best_rt)
                best_rt = tr;
        }
        if (n_sim != n_rt) {
            fprintf(stderr, "bench_roundtrip: the simulator ran %llu instructions alone, "
                    "%llu in the round trip\n", (unsigned long long)n_sim,
                    (unsigned long long)n_rt);
            bad = 1;
        }
        printf("%-6s %12llu %10.3f %10.3f %10.1f %8.3f >= %.1f %s\n",
               tb_protocol_name(protos[k].p), (unsigned long long)n_rt, best_sim, best_rt,
               (double)n_rt / best_rt / 1e6, best_sim / best_rt, protos[k].goal,
               best_sim / best_rt >= protos[k].goal ? "met" : "not met");
    }
    free(elf);
    return bad;
}
