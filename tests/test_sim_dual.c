/* The cycle model's dual-issue rule (tb_sim_set_dual, sim/dual.c; the
 * rule as stated in docs/etmv3-data-model.md D1-D4): which instructions
 * of a hand-written program pair, worked out from the rule by hand and
 * seen as the difference between the cycle stamps of the same run with
 * and without it; and the block path equal to the reference path with
 * the rule on. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tb_test.h"
#include "tracebench/sim.h"


#define MAXR 8192

typedef struct run {
    tb_exec_record rec[MAXR];
    size_t n;
} run_t;

static int collect(void *ctx, const tb_exec_record *r)
{
    run_t *x = ctx;

    cr_assert_lt(x->n, MAXR);
    x->rec[x->n++] = *r;
    return 0;
}

/* ARM at 0x8000, exit at the B (0x8028).  pair: 1 where the rule lets
 * the instruction retire with the one before it, and why. */
static const uint32_t code[] = {
    0xE59F1024, /* ldr r1, [pc, #36]  a single load may start a pair    0 */
    0xE3A02001, /* mov r2, #1         independent ALU after it          1 */
    0xE2823001, /* add r3, r2, #1     the one before is a second         0 */
    0xE3A04002, /* mov r4, #2         independent of the add            1 */
    0xE3A06000, /* mov r6, #0         the one before is a second         0 */
    0xE2A55000, /* adc r5, r5, #0     reads the carry flag              0 */
    0xE59F700C, /* ldr r7, [pc, #12]  a load is never the second        0 */
    0xE2878001, /* add r8, r7, #1     reads r7, which the load writes   0 */
    0xE3A08005, /* mov r8, #5         writes r8, which the add writes   0 */
    0xE3A09001, /* mov r9, #1         independent                       1 */
    0xEAFFFFFE, /* b .                exit                                */
    0x00000011, /* literal */
};
static const unsigned pair[] = {0, 1, 0, 1, 0, 0, 0, 0, 0, 1};

static void run_code(run_t *x, bool dual, bool reference)
{
    uint8_t img[sizeof code];
    tb_scenario sc;
    tb_sim_result res;
    char err[128];
    const char *ini = "[sim]\nexit = 0x8028\n";
    tb_sim *s = tb_sim_new(TB_SIM_CPU_A15);

    for (size_t i = 0; i < sizeof code / 4; i++)
        for (unsigned b = 0; b < 4; b++)
            img[4 * i + b] = (uint8_t)(code[i] >> (8 * b));
    cr_assert_not_null(s);
    memset(x, 0, sizeof *x);
    cr_assert_eq(tb_sim_load_raw(s, img, sizeof img, 0x8000), 0);
    tb_scenario_init(&sc);
    cr_assert_eq(tb_scenario_parse(&sc, ini, strlen(ini), err, sizeof err), 0, "%s", err);
    cr_assert_eq(tb_sim_set_scenario(s, &sc), 0);
    cr_assert_eq(tb_sim_set_reference(s, reference), 0);
    cr_assert_eq(tb_sim_set_dual(s, dual), 0);
    cr_assert_eq(tb_sim_run(s, collect, x, &res), 0, "%s", tb_sim_errmsg(s));
    cr_assert_eq(res.stop, TB_SIM_STOP_EXIT);
    cr_assert_eq(tb_sim_set_dual(s, !dual), TB_ERR_STATE);
    tb_sim_free(s);
}

Test(sim_dual, pairs_as_the_rule_says)
{
    static run_t off, on;

    for (int reference = 0; reference < 2; reference++) {
        uint64_t prev_off = 0, prev_on = 0;

        run_code(&off, false, reference);
        run_code(&on, true, reference);
        cr_assert_eq(off.n, on.n);
        cr_assert_eq(off.n, 11); /* 10 instructions and the END */
        for (size_t i = 0; i < 10; i++) {
            uint64_t c_off = off.rec[i].cycle - prev_off, c_on = on.rec[i].cycle - prev_on;

            cr_assert_eq(on.rec[i].kind, TB_REC_INSN);
            cr_assert_eq(on.rec[i].u.insn.addr, 0x8000 + 4 * i);
            cr_assert_eq(c_off - c_on, pair[i], "insn %zu at 0x%x: %llu cycles, %llu "
                         "with dual issue (reference path %d)", i, 0x8000 + 4 * (unsigned)i,
                         (unsigned long long)c_off, (unsigned long long)c_on, reference);
            /* A pair's second retires in its first's cycle. */
            if (pair[i])
                cr_assert_eq(on.rec[i].cycle, on.rec[i - 1].cycle);
            prev_off = off.rec[i].cycle;
            prev_on = on.rec[i].cycle;
        }
    }
}

/* The block path gives the reference path's records with the rule on,
 * on programs that pair (ARM, Thumb, data, interrupts). */
Test(sim_dual, block_path_equals_reference_path)
{
    static const char *const progs[] = {"data_ops", "switch_table", "it_blocks",
                                        "cond_arm", "irq_fiq", "returns"};
    static run_t ref, blk;

    for (size_t k = 0; k < sizeof progs / sizeof progs[0]; k++) {
        size_t same_cycle = 0;
        uint64_t last_cycle = 0;
        bool have_last = false;
        tb_scenario sc;
        char err[256], elf[512], ini[512];

        snprintf(elf, sizeof elf, "%s/vectors/programs/%s.elf", TB_BINARY_DIR, progs[k]);
        snprintf(ini, sizeof ini, "%s/vectors/programs/%s.ini", TB_SOURCE_DIR, progs[k]);
        tb_scenario_init(&sc);
        cr_assert_eq(tb_scenario_load(&sc, ini, err, sizeof err), 0, "%s", err);
        sc.max_insns = 4000;
        for (int reference = 0; reference < 2; reference++) {
            run_t *x = reference ? &ref : &blk;
            tb_sim_result res;
            tb_sim *s = tb_sim_new(sc.cpu);

            memset(x, 0, sizeof *x);
            cr_assert_eq(tb_sim_load_elf_file(s, elf), 0);
            cr_assert_eq(tb_sim_set_scenario(s, &sc), 0);
            cr_assert_eq(tb_sim_set_reference(s, reference), 0);
            cr_assert_eq(tb_sim_set_dual(s, true), 0);
            cr_assert_eq(tb_sim_set_data(s, true), 0);
            cr_assert_geq(tb_sim_run(s, collect, x, &res), 0, "%s", tb_sim_errmsg(s));
            tb_sim_free(s);
        }
        cr_assert_eq(ref.n, blk.n, "%s", progs[k]);
        for (size_t i = 0; i < ref.n; i++) {
            cr_assert_eq(ref.rec[i].kind, blk.rec[i].kind, "%s #%zu", progs[k], i);
            cr_assert_eq(ref.rec[i].seq, blk.rec[i].seq, "%s #%zu", progs[k], i);
            cr_assert_eq(ref.rec[i].cycle, blk.rec[i].cycle, "%s #%zu cycle", progs[k], i);
            /* Data records sit between the two of a pair. */
            if (ref.rec[i].kind == TB_REC_INSN) {
                if (have_last && ref.rec[i].cycle == last_cycle)
                    same_cycle++;
                have_last = true;
                last_cycle = ref.rec[i].cycle;
            } else if (ref.rec[i].kind != TB_REC_DATA) {
                have_last = false;
            }
        }
        /* irq_fiq has no pair the rule allows: it is here for its
         * interrupts, which end any pair. */
        if (strcmp(progs[k], "irq_fiq"))
            cr_assert_gt(same_cycle, 0, "%s: no pair at all", progs[k]);
    }
}

Test(sim_dual, bad_calls)
{
    cr_assert_eq(tb_sim_set_dual(NULL, true), TB_ERR_INVAL);
}
