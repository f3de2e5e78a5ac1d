/* The simulator's block path (the default) against its reference path
 * (one code hook per instruction, tb_sim_set_reference): the full record
 * streams, results, errors and final registers must be identical, on
 * every vector program with its scenario and on scenarios that cut
 * blocks at every position (budgets, interrupts due at every count,
 * interrupts pending while masked, inside IT blocks), with and without
 * data records (tb_sim_set_data; the block path attaches each memory
 * transfer to its instruction apart from the reference path).  test_sim checks
 * the reference path against facts; this file carries those facts over
 * to the fast path.  The block path's records are also taken in batches
 * (tb_sim_run_batch, the round trip's way): the same stream, results and
 * errors as one by one. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tb_test.h"
#include "tracebench/sim.h"

#define PROG(name) TB_BINARY_DIR "/vectors/programs/" name ".elf"
#define SCN(name) TB_SOURCE_DIR "/vectors/programs/" name ".ini"

typedef struct run {
    tb_exec_record *rec;
    size_t n, cap;
    tb_sim_result res;
    int rc;
    char msg[256];
    uint32_t regs[17];
    bool short_batch;        /* collect_batch saw a batch that was not full */
    size_t stop_after;       /* collect_batch asks to stop once it has this many */
} run_t;

static int collect(void *ctx, const tb_exec_record *r)
{
    run_t *x = ctx;

    if (x->n == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 4096;
        x->rec = realloc(x->rec, x->cap * sizeof *x->rec);
        cr_assert_not_null(x->rec);
    }
    x->rec[x->n++] = *r;
    return x->stop_after && x->n >= x->stop_after;
}

/* tb_sim_run_batch: every batch but the run's last is full. */
static int collect_batch(void *ctx, const tb_exec_record *recs, size_t n)
{
    run_t *x = ctx;

    cr_assert(n >= 1 && n <= TB_SIM_BATCH, "a batch of %zu records", n);
    cr_assert(!x->short_batch, "a batch of %zu records after one of fewer than %d", n,
              TB_SIM_BATCH);
    x->short_batch = n < TB_SIM_BATCH;
    for (size_t i = 0; i < n; i++)
        collect(x, &recs[i]);
    return x->stop_after && x->n >= x->stop_after;
}

enum { ONE_BY_ONE, BATCHES };

static void run_how(run_t *x, const char *elf, const tb_scenario *sc, bool reference,
                    bool data, int how, size_t stop_after)
{
    tb_sim *s;

    memset(x, 0, sizeof *x);
    x->stop_after = stop_after;
    s = tb_sim_new(sc->cpu);
    cr_assert_not_null(s);
    cr_assert_eq(tb_sim_load_elf_file(s, elf), 0, "%s: %s", elf, tb_sim_errmsg(s));
    cr_assert_eq(tb_sim_set_scenario(s, sc), 0, "%s", tb_sim_errmsg(s));
    cr_assert_eq(tb_sim_set_reference(s, reference), 0);
    cr_assert_eq(tb_sim_set_data(s, data), 0);
    x->rc = how == BATCHES ? tb_sim_run_batch(s, collect_batch, x, &x->res)
                           : tb_sim_run(s, collect, x, &x->res);
    snprintf(x->msg, sizeof x->msg, "%s", tb_sim_errmsg(s));
    for (unsigned r = 0; r <= 16; r++)
        cr_assert_eq(tb_sim_read_reg(s, r, &x->regs[r]), 0);
    cr_assert_eq(tb_sim_set_reference(s, !reference), TB_ERR_STATE);
    cr_assert_eq(tb_sim_set_data(s, !data), TB_ERR_STATE);
    tb_sim_free(s);
}

static void run_mode(run_t *x, const char *elf, const tb_scenario *sc, bool reference,
                     bool data)
{
    run_how(x, elf, sc, reference, data, ONE_BY_ONE, 0);
}

static void same_record(const tb_exec_record *a, const tb_exec_record *b,
                        const char *what, size_t i)
{
    cr_assert_eq(a->kind, b->kind, "%s: record %zu kind", what, i);
    cr_assert_eq(a->seq, b->seq, "%s: record %zu seq", what, i);
    cr_assert_eq(a->cycle, b->cycle, "%s: record %zu cycle", what, i);
    switch (a->kind) {
    case TB_REC_INSN:
        cr_assert_eq(a->u.insn.addr, b->u.insn.addr, "%s: record %zu addr %08x/%08x",
                     what, i, a->u.insn.addr, b->u.insn.addr);
        cr_assert_eq(a->u.insn.next_addr, b->u.insn.next_addr,
                     "%s: record %zu (%08x) next", what, i, a->u.insn.addr);
        cr_assert_eq(a->u.insn.opcode, b->u.insn.opcode, "%s: record %zu", what, i);
        cr_assert_eq(a->u.insn.size, b->u.insn.size, "%s: record %zu", what, i);
        cr_assert_eq(a->u.insn.isa, b->u.insn.isa, "%s: record %zu", what, i);
        cr_assert_eq(a->u.insn.next_isa, b->u.insn.next_isa,
                     "%s: record %zu (%08x) next isa", what, i, a->u.insn.addr);
        cr_assert_eq(a->u.insn.wp_class, b->u.insn.wp_class, "%s: record %zu", what, i);
        cr_assert_eq(a->u.insn.flags, b->u.insn.flags,
                     "%s: record %zu (%08x) flags %#x/%#x", what, i, a->u.insn.addr,
                     a->u.insn.flags, b->u.insn.flags);
        break;
    case TB_REC_EXCEPTION:
        cr_assert_eq(a->u.exc.kind, b->u.exc.kind, "%s: record %zu", what, i);
        cr_assert_eq(a->u.exc.isa, b->u.exc.isa, "%s: record %zu", what, i);
        cr_assert_eq(a->u.exc.cancelled, b->u.exc.cancelled, "%s: record %zu", what, i);
        cr_assert_eq(a->u.exc.pref_return, b->u.exc.pref_return,
                     "%s: record %zu pref_return", what, i);
        cr_assert_eq(a->u.exc.vector, b->u.exc.vector, "%s: record %zu", what, i);
        cr_assert_eq(a->u.exc.cpsr, b->u.exc.cpsr, "%s: record %zu", what, i);
        cr_assert_eq(a->u.exc.num, b->u.exc.num, "%s: record %zu num", what, i);
        cr_assert_eq(a->u.exc.tailchain, b->u.exc.tailchain, "%s: record %zu", what, i);
        break;
    case TB_REC_EXC_RETURN:
        cr_assert_eq(a->u.eret.num, b->u.eret.num, "%s: record %zu", what, i);
        cr_assert_eq(a->u.eret.tailchain, b->u.eret.tailchain, "%s: record %zu", what, i);
        cr_assert_eq(a->u.eret.to_thread, b->u.eret.to_thread, "%s: record %zu", what, i);
        cr_assert_eq(a->u.eret.exc_return, b->u.eret.exc_return, "%s: record %zu", what, i);
        cr_assert_eq(a->u.eret.target, b->u.eret.target, "%s: record %zu", what, i);
        break;
    case TB_REC_CONTEXT:
        cr_assert_eq(a->u.ctx.context_id, b->u.ctx.context_id, "%s: record %zu", what, i);
        cr_assert_eq(a->u.ctx.vmid, b->u.ctx.vmid, "%s: record %zu", what, i);
        break;
    case TB_REC_DATA:
        cr_assert_eq(a->u.data.insn_addr, b->u.data.insn_addr, "%s: record %zu", what, i);
        cr_assert_eq(a->u.data.addr, b->u.data.addr, "%s: record %zu data addr", what, i);
        cr_assert_eq(a->u.data.value, b->u.data.value, "%s: record %zu value", what, i);
        cr_assert_eq(a->u.data.size, b->u.data.size, "%s: record %zu", what, i);
        cr_assert_eq(a->u.data.flags, b->u.data.flags, "%s: record %zu", what, i);
        break;
    case TB_REC_STATE:
        cr_assert_eq(a->u.state.ns, b->u.state.ns, "%s: record %zu ns", what, i);
        cr_assert_eq(a->u.state.hyp, b->u.state.hyp, "%s: record %zu hyp", what, i);
        break;
    case TB_REC_END:
        break;
    }
}

/* Runs elf under sc both ways (with data records when data) and requires
 * the same everything.  Returns the number of records (so callers can
 * check the run did something); *n_data, when given, the data records. */
static void same_run(const run_t *blk, const run_t *ref, const char *what);

static size_t compare_paths_data(const char *elf, const tb_scenario *sc, const char *what,
                                 bool data, size_t *n_data)
{
    run_t ref, blk, bat;
    size_t n;
    char how[96];

    run_mode(&ref, elf, sc, true, data);
    run_mode(&blk, elf, sc, false, data);
    run_how(&bat, elf, sc, false, data, BATCHES, 0);
    same_run(&blk, &ref, what);
    snprintf(how, sizeof how, "%s, in batches", what);
    same_run(&bat, &blk, how);
    n = ref.n;
    if (n_data) {
        *n_data = 0;
        for (size_t i = 0; i < ref.n; i++)
            *n_data += ref.rec[i].kind == TB_REC_DATA;
    }
    free(ref.rec);
    free(blk.rec);
    free(bat.rec);
    return n;
}

/* blk's run is ref's: rc, message, every record, results, registers. */
static void same_run(const run_t *blk, const run_t *ref, const char *what)
{
    cr_assert_eq(blk->rc, ref->rc, "%s: rc %d (%s) vs reference %d (%s)", what, blk->rc,
                 blk->msg, ref->rc, ref->msg);
    cr_assert_str_eq(blk->msg, ref->msg, "%s", what);
    cr_assert_eq(blk->n, ref->n, "%s: %zu records vs reference %zu", what, blk->n, ref->n);
    for (size_t i = 0; i < ref->n; i++)
        same_record(&blk->rec[i], &ref->rec[i], what, i);
    cr_assert_eq(blk->res.stop, ref->res.stop, "%s", what);
    cr_assert_eq(blk->res.insns, ref->res.insns, "%s", what);
    cr_assert_eq(blk->res.cycles, ref->res.cycles, "%s", what);
    cr_assert_eq(blk->res.exceptions, ref->res.exceptions, "%s", what);
    cr_assert_eq(blk->res.stop_addr, ref->res.stop_addr, "%s", what);
    for (unsigned r = 0; r <= 16; r++)
        cr_assert_eq(blk->regs[r], ref->regs[r], "%s: register %u %08x vs %08x", what, r,
                     blk->regs[r], ref->regs[r]);
}

static size_t compare_paths(const char *elf, const tb_scenario *sc, const char *what)
{
    return compare_paths_data(elf, sc, what, false, NULL);
}

static void load_scn(tb_scenario *sc, const char *name, const char *extra)
{
    char path[512], err[256];

    snprintf(path, sizeof path, TB_SOURCE_DIR "/vectors/programs/%s.ini", name);
    tb_scenario_init(sc);
    cr_assert_eq(tb_scenario_load(sc, path, err, sizeof err), 0, "%s: %s", name, err);
    if (extra)
        cr_assert_eq(tb_scenario_parse(sc, extra, strlen(extra), err, sizeof err), 0,
                     "%s", err);
}

static const char *const programs[] = {
    "arm_basic", "thumb_basic", "interwork", "cond_arm", "it_blocks", "switch_table",
    "funcptr", "recursion", "returns", "far_branch", "irq_fiq", "svc", "faults",
    "ctx_switch", "data_loop", "smc", "long_run", "cancel_single", "data_ops", "secure_ns",
    "xfar", "deep_rec", "exc_mix", "widths", "it_svc", "udf_land", "thumb_vec", "ctx_fold",
    /* Cortex-M3/M4 (their scenarios say so): SysTick read and written
     * through the System Control Space mid-block, the MPU, BKPT. */
    "m_nvic", "m_faults", "m_sensor", "m_rtos", "m_debug", "m_mpu",
};

Test(sim_block, every_program_same_records_as_reference)
{
    for (size_t k = 0; k < sizeof programs / sizeof programs[0]; k++) {
        char elf[512];
        tb_scenario sc;
        size_t n;

        snprintf(elf, sizeof elf, TB_BINARY_DIR "/vectors/programs/%s.elf", programs[k]);
        /* long_run is the benchmark (10^8 instructions): a prefix here. */
        load_scn(&sc, programs[k],
                 strcmp(programs[k], "long_run") ? NULL : "[sim]\nmax_insns = 300000\n");
        n = compare_paths(elf, &sc, programs[k]);
        cr_assert_gt(n, 10, "%s", programs[k]);
    }
}

/* With data records: the same records, data records included, on every
 * program; runs without them have none (the default). */
Test(sim_block, every_program_same_records_with_data)
{
    for (size_t k = 0; k < sizeof programs / sizeof programs[0]; k++) {
        char elf[512], what[64];
        tb_scenario sc;
        size_t n, nd = 0, nd_off = 1;

        snprintf(elf, sizeof elf, TB_BINARY_DIR "/vectors/programs/%s.elf", programs[k]);
        load_scn(&sc, programs[k],
                 strcmp(programs[k], "long_run") ? NULL : "[sim]\nmax_insns = 300000\n");
        snprintf(what, sizeof what, "%s with data", programs[k]);
        n = compare_paths_data(elf, &sc, what, true, &nd);
        cr_assert_gt(n, 10, "%s", programs[k]);
        /* Every program touches memory (crt0's literal loads, at least). */
        cr_assert_gt(nd, 0, "%s: no data records", programs[k]);
        compare_paths_data(elf, &sc, programs[k], false, &nd_off);
        cr_assert_eq(nd_off, 0, "%s: data records without tb_sim_set_data", programs[k]);
    }
}

/* Data records where blocks are cut at every position: budgets and
 * interrupts at every count of the programs full of loads and stores. */
Test(sim_block, data_cut_at_every_count)
{
    static const char *const progs[] = {"data_ops", "data_loop", "irq_fiq", "it_blocks"};

    for (size_t p = 0; p < sizeof progs / sizeof progs[0]; p++) {
        char elf[512], what[96], extra[128];

        snprintf(elf, sizeof elf, TB_BINARY_DIR "/vectors/programs/%s.elf", progs[p]);
        for (unsigned m = 1; m <= 160; m += (m < 90 ? 1 : 7)) {
            tb_scenario sc;

            load_scn(&sc, progs[p], NULL);
            sc.max_insns = m;
            snprintf(what, sizeof what, "%s data max_insns %u", progs[p], m);
            compare_paths_data(elf, &sc, what, true, NULL);
        }
        for (unsigned at = 1; at <= 200; at += (at < 90 ? 1 : 13)) {
            tb_scenario sc;

            snprintf(extra, sizeof extra, "[sim]\nmax_insns = 3000\n[%s]\nat_insn = %u\n",
                     (at & 1) ? "irq" : "fiq", at);
            load_scn(&sc, progs[p], extra);
            snprintf(what, sizeof what, "%s data %s at %u", progs[p], (at & 1) ? "irq" : "fiq",
                     at);
            compare_paths_data(elf, &sc, what, true, NULL);
        }
    }
}

/* A budget ends the run before any instruction: every cut point in the
 * first blocks, inside IT blocks and condition-failed runs included. */
Test(sim_block, budget_at_every_count)
{
    static const char *const progs[] = {"it_blocks", "cond_arm", "thumb_basic", "svc"};

    for (size_t p = 0; p < sizeof progs / sizeof progs[0]; p++) {
        char elf[512], what[64];

        snprintf(elf, sizeof elf, TB_BINARY_DIR "/vectors/programs/%s.elf", progs[p]);
        for (unsigned m = 1; m <= 160; m += (m < 80 ? 1 : 7)) {
            tb_scenario sc;

            load_scn(&sc, progs[p], NULL);
            sc.max_insns = m;
            snprintf(what, sizeof what, "%s max_insns %u", progs[p], m);
            compare_paths(elf, &sc, what);
        }
    }
}

/* Interrupts due at every count: taken at once where unmasked (irq_fiq,
 * ctx_switch), else pending while masked (main runs with I and F set),
 * which sends every later instruction through the slow path. */
Test(sim_block, interrupt_at_every_count)
{
    static const char *const progs[] = {"irq_fiq", "ctx_switch", "it_blocks", "data_loop"};

    for (size_t p = 0; p < sizeof progs / sizeof progs[0]; p++) {
        char elf[512], what[96], extra[128];

        snprintf(elf, sizeof elf, TB_BINARY_DIR "/vectors/programs/%s.elf", progs[p]);
        for (unsigned at = 1; at <= 400; at += (at < 64 ? 1 : 17)) {
            tb_scenario sc;

            snprintf(extra, sizeof extra, "[sim]\nmax_insns = 3000\n[%s]\nat_insn = %u\n",
                     (at & 1) ? "irq" : "fiq", at);
            load_scn(&sc, progs[p], extra);
            snprintf(what, sizeof what, "%s %s at %u", progs[p], (at & 1) ? "irq" : "fiq",
                     at);
            compare_paths(elf, &sc, what);
        }
    }
}

/* Timer-like interrupts every few instructions over a longer run. */
Test(sim_block, periodic_interrupts)
{
    static const unsigned periods[] = {7, 23, 61};

    for (size_t i = 0; i < sizeof periods / sizeof periods[0]; i++) {
        char extra[128], what[64], err[256];
        tb_scenario sc;

        snprintf(extra, sizeof extra, "[sim]\nmax_insns = 20000\n[irq]\nat_insn = 50\n"
                 "every = %u\ncount = 0\n", periods[i]);
        load_scn(&sc, "ctx_switch", NULL);
        sc.n_events = 0;
        cr_assert_eq(tb_scenario_parse(&sc, extra, strlen(extra), err, sizeof err), 0, "%s", err);
        snprintf(what, sizeof what, "ctx_switch every %u", periods[i]);
        compare_paths(PROG("ctx_switch"), &sc, what);
    }
}

Test(sim_block, reference_mode_needs_a_sim)
{
    cr_assert_eq(tb_sim_set_reference(NULL, true), TB_ERR_INVAL);
    cr_assert_eq(tb_sim_set_data(NULL, true), TB_ERR_INVAL);
}

/* One run with data records, load PC first on or off (tb_sim_set_pcfirst),
 * on the block or the reference path. */
static void run_pcfirst(run_t *x, const char *elf, const tb_scenario *sc, bool reference,
                        bool pcfirst)
{
    tb_sim *s;

    memset(x, 0, sizeof *x);
    s = tb_sim_new(sc->cpu);
    cr_assert_not_null(s);
    cr_assert_eq(tb_sim_load_elf_file(s, elf), 0, "%s: %s", elf, tb_sim_errmsg(s));
    cr_assert_eq(tb_sim_set_scenario(s, sc), 0, "%s", tb_sim_errmsg(s));
    cr_assert_eq(tb_sim_set_reference(s, reference), 0);
    cr_assert_eq(tb_sim_set_data(s, true), 0);
    cr_assert_eq(tb_sim_set_pcfirst(s, pcfirst), 0);
    x->rc = tb_sim_run(s, collect, x, &x->res);
    cr_assert_eq(tb_sim_set_pcfirst(s, !pcfirst), TB_ERR_STATE);
    tb_sim_free(s);
}

/* Load PC first (ETMIDR[16], etmv3-data.md 1 and 6): against the
 * architectural order (IHI0406C A8.8.58: lowest register at the lowest
 * address first, the PC last), the transfers of each LDM/POP that loads
 * the PC (an indirect waypoint whose loads end at the highest address
 * with the value it branched to) come with the PC's load first and the
 * others in order; every other record is unchanged.  On both paths, on
 * the programs with ARM LDM {..,pc} and POP {..,pc} and Thumb POP and
 * POP.W {..,pc}. */
Test(sim_block, pcfirst_moves_the_pc_load_first)
{
    static const char *const progs[] = {"returns", "data_ops"};

    for (size_t k = 0; k < sizeof progs / sizeof progs[0]; k++) {
        for (int ref = 0; ref < 2; ref++) {
            char elf[512];
            tb_scenario sc;
            run_t a, b;
            size_t moved = 0, i = 0;

            snprintf(elf, sizeof elf, TB_BINARY_DIR "/vectors/programs/%s.elf", progs[k]);
            load_scn(&sc, progs[k], NULL);
            run_pcfirst(&a, elf, &sc, ref, false);
            run_pcfirst(&b, elf, &sc, ref, true);
            cr_assert_eq(a.rc, b.rc);
            cr_assert_eq(a.n, b.n, "%s: %zu / %zu records", progs[k], a.n, b.n);
            while (i < a.n) {
                size_t j = i + 1, nd, hi;
                const tb_exec_record *in = &a.rec[i];
                bool ldm_pc;

                cr_assert_eq(a.rec[i].kind, b.rec[i].kind);
                if (in->kind != TB_REC_INSN) {
                    same_record(&a.rec[i], &b.rec[i], progs[k], i);
                    i++;
                    continue;
                }
                same_record(&a.rec[i], &b.rec[i], progs[k], i);
                while (j < a.n && a.rec[j].kind == TB_REC_DATA)
                    j++;
                nd = j - i - 1;
                hi = j - 1;
                ldm_pc = nd >= 2 && in->u.insn.wp_class == TB_WP_INDIRECT &&
                         !(in->u.insn.flags & TB_INSN_EXC_RETURN) &&
                         (a.rec[hi].u.data.value & ~1u) == in->u.insn.next_addr;
                for (size_t t = i + 1; t < j; t++) {
                    ldm_pc = ldm_pc && !(a.rec[t].u.data.flags & TB_DATA_STORE) &&
                             a.rec[t].u.data.addr == a.rec[i + 1].u.data.addr + 4 * (t - i - 1);
                }
                if (ldm_pc) {
                    moved++;
                    same_record(&a.rec[hi], &b.rec[i + 1], progs[k], i + 1);
                    for (size_t t = i + 1; t < hi; t++)
                        same_record(&a.rec[t], &b.rec[t + 1], progs[k], t + 1);
                } else {
                    for (size_t t = i + 1; t < j; t++)
                        same_record(&a.rec[t], &b.rec[t], progs[k], t);
                }
                i = j;
            }
            cr_assert_gt(moved, 0, "%s: no LDM loading the PC", progs[k]);
            free(a.rec);
            free(b.rec);
        }
    }
}

/* In batches, a run that fails hands over the records made before the
 * failure (faults without its scenario stops at an undefined
 * instruction), and a callback that asks to stop at a batch's end stops
 * the run there, as one by one at that record: same records, rc, message,
 * results. */
Test(sim_block, batches_on_failure_and_stop)
{
    static const size_t stops[] = {TB_SIM_BATCH, 2 * TB_SIM_BATCH, 40 * TB_SIM_BATCH};
    tb_scenario sc;
    run_t one, bat;

    tb_scenario_init(&sc);
    cr_assert_gt(compare_paths(PROG("faults"), &sc, "faults, no scenario"), 10);
    run_how(&bat, PROG("faults"), &sc, false, false, BATCHES, 0);
    cr_assert_eq(bat.rc, TB_ERR_FAULT, "faults in batches: rc %d (%s)", bat.rc, bat.msg);
    cr_assert(bat.short_batch, "faults in batches: %zu records, all in full batches", bat.n);
    free(bat.rec);

    load_scn(&sc, "long_run", "[sim]\nmax_insns = 300000\n");
    for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++) {
        char what[64];

        snprintf(what, sizeof what, "long_run stopped at record %zu", stops[k]);
        run_how(&one, PROG("long_run"), &sc, false, false, ONE_BY_ONE, stops[k]);
        run_how(&bat, PROG("long_run"), &sc, false, false, BATCHES, stops[k]);
        cr_assert_eq(one.rc, TB_ERR_STOPPED, "%s: rc %d (%s)", what, one.rc, one.msg);
        cr_assert_eq(one.n, stops[k], "%s: %zu records", what, one.n);
        same_run(&bat, &one, what);
        free(one.rec);
        free(bat.rec);
    }
}
