/* bench_sim: simulator throughput with truth recording against Unicorn
 * with no hooks, on the same long program (vectors long_run.elf).  The
 * machine may be shared, so the two are timed alternately over several
 * runs (default 5) and the median ratio is the result (target >= 0.25);
 * the simulator's reference path (one code hook per instruction) is
 * timed once for comparison.  Usage: bench_sim [ELF] [RUNS]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unicorn/unicorn.h>

#include "tracebench/sim.h"

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct sink {
    uint64_t n, sum;
};

static int on_rec(void *ctx, const tb_exec_record *r)
{
    struct sink *s = ctx;

    s->n++;
    s->sum += r->u.insn.addr ^ r->u.insn.flags;
    return 0;
}

/* Hookless Unicorn: the same PT_LOAD image via the sim's loader would
 * add hooks, so this maps the ELF the plain way. */
static double run_plain(const uint8_t *elf, size_t len, uint32_t exit_addr)
{
    uint32_t phoff, entry;
    unsigned phnum, phentsize;
    uc_engine *uc;
    double t;

    memcpy(&entry, elf + 24, 4);
    memcpy(&phoff, elf + 28, 4);
    phentsize = (unsigned)(elf[42] | elf[43] << 8);
    phnum = (unsigned)(elf[44] | elf[45] << 8);
    if (uc_open(UC_ARCH_ARM, UC_MODE_ARM, &uc) != UC_ERR_OK)
        return -1;
    uc_ctl_set_cpu_model(uc, UC_CPU_ARM_CORTEX_A15);
    for (unsigned i = 0; i < phnum; i++) {
        const uint8_t *ph = elf + phoff + (size_t)i * phentsize;
        uint32_t type, off, va, fsz, msz, lo, hi;

        memcpy(&type, ph, 4);
        memcpy(&off, ph + 4, 4);
        memcpy(&va, ph + 8, 4);
        memcpy(&fsz, ph + 16, 4);
        memcpy(&msz, ph + 20, 4);
        if (type != 1 || !msz || off > len || fsz > len - off)
            continue;
        lo = va & ~0xFFFu;
        hi = (va + msz + 0xFFFu) & ~0xFFFu;
        for (uint32_t p = lo; p < hi; p += 0x1000)
            uc_mem_map(uc, p, 0x1000, UC_PROT_ALL); /* overlaps fail harmlessly */
        uc_mem_write(uc, va, elf + off, fsz);
    }
    t = now();
    uc_emu_start(uc, entry, exit_addr, 0, 0);
    t = now() - t;
    uc_close(uc);
    return t;
}

/* Runs the simulator once; returns seconds or < 0. */
static double run_sim(const uint8_t *elf, size_t len, bool reference, tb_sim_result *res,
                      uint32_t *exit_addr)
{
    struct sink sink = {0, 0};
    tb_scenario sc;
    tb_sim *s = tb_sim_new(TB_SIM_CPU_A15);
    double t;
    int rc;

    if (!s || tb_sim_load_elf(s, elf, len) < 0 || tb_sim_symbol(s, "_exit", exit_addr) < 0) {
        fprintf(stderr, "bench_sim: cannot load the program\n");
        tb_sim_free(s);
        return -1;
    }
    tb_scenario_init(&sc);
    tb_sim_set_scenario(s, &sc);
    tb_sim_set_reference(s, reference);
    t = now();
    rc = tb_sim_run(s, on_rec, &sink, res);
    t = now() - t;
    if (rc < 0) {
        fprintf(stderr, "bench_sim: %s\n", tb_sim_errmsg(s));
        t = -1;
    } else if (sink.n < res->insns + 1) {
        fprintf(stderr, "bench_sim: %llu records for %llu instructions\n",
                (unsigned long long)sink.n, (unsigned long long)res->insns);
        t = -1;
    }
    tb_sim_free(s);
    return t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

#define MAX_RUNS 50

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : TB_BINARY_DIR "/vectors/programs/long_run.elf";
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    FILE *f = fopen(path, "rb");
    uint8_t *elf;
    long len;
    tb_sim_result res;
    uint32_t exit_addr = 0;
    double ratio[MAX_RUNS], t_ref;

    if (runs < 1 || runs > MAX_RUNS)
        runs = 5;
    if (!f) {
        fprintf(stderr, "bench_sim: cannot open %s\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    elf = malloc((size_t)len);
    if (!elf || fread(elf, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        return 1;
    }
    fclose(f);
    printf("program      %s\n", path);
    for (int i = 0; i < runs; i++) {
        double t_sim = run_sim(elf, (size_t)len, false, &res, &exit_addr), t_plain;

        if (t_sim < 0)
            return 1;
        t_plain = run_plain(elf, (size_t)len, exit_addr);
        ratio[i] = t_plain / t_sim;
        if (i == 0)
            printf("instructions %llu\n", (unsigned long long)res.insns);
        printf("run %d: sim + truth %.3f s %.1f Minsn/s, unicorn bare %.3f s %.1f Minsn/s, "
               "ratio %.3f\n", i + 1, t_sim, (double)res.insns / t_sim / 1e6, t_plain,
               (double)res.insns / t_plain / 1e6, ratio[i]);
    }
    t_ref = run_sim(elf, (size_t)len, true, &res, &exit_addr);
    if (t_ref < 0)
        return 1;
    printf("reference path (per-instruction hook) %.3f s %.1f Minsn/s\n", t_ref,
           (double)res.insns / t_ref / 1e6);
    free(elf);
    qsort(ratio, (size_t)runs, sizeof ratio[0], cmp_double);
    printf("ratio        %.3f median of %d (min %.3f, max %.3f; target >= 0.25)\n",
           ratio[runs / 2], runs, ratio[0], ratio[runs - 1]);
    return 0;
}
