/* Simulator tests: the truth checked against facts (program layout from
 * the ELF symbols, ARM ARM exception entry rules, values the programs
 * compute), not against itself. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tb_test.h"
#include "tracebench/sim.h"

#define PROG(name) TB_BINARY_DIR "/vectors/programs/" name ".elf"
#define SCN(name) TB_SOURCE_DIR "/vectors/programs/" name ".ini"

typedef struct run {
    tb_sim *sim;
    tb_exec_record *rec;
    size_t n, cap;
    tb_sim_result res;
    int rc;
} run_t;

static int collect(void *ctx, const tb_exec_record *r)
{
    run_t *x = ctx;

    if (x->n == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 1024;
        x->rec = realloc(x->rec, x->cap * sizeof *x->rec);
        cr_assert_not_null(x->rec);
    }
    x->rec[x->n++] = *r;
    return 0;
}

/* Runs a program with a scenario file (or extra INI text appended), with
 * data records or not, on the block path or the reference path. */
static void run_prog_ex(run_t *x, const char *elf, const char *scn_path,
                        const char *scn_text, bool data, bool reference)
{
    tb_scenario sc;
    char err[256];

    memset(x, 0, sizeof *x);
    tb_scenario_init(&sc);
    if (scn_path)
        cr_assert_eq(tb_scenario_load(&sc, scn_path, err, sizeof err), 0, "%s", err);
    if (scn_text)
        cr_assert_eq(tb_scenario_parse(&sc, scn_text, strlen(scn_text), err, sizeof err),
                     0, "%s", err);
    x->sim = tb_sim_new(sc.cpu);
    cr_assert_not_null(x->sim);
    cr_assert_eq(tb_sim_load_elf_file(x->sim, elf), 0, "%s: %s", elf,
                 tb_sim_errmsg(x->sim));
    cr_assert_eq(tb_sim_set_scenario(x->sim, &sc), 0, "%s", tb_sim_errmsg(x->sim));
    cr_assert_eq(tb_sim_set_data(x->sim, data), 0);
    cr_assert_eq(tb_sim_set_reference(x->sim, reference), 0);
    x->rc = tb_sim_run(x->sim, collect, x, &x->res);
}

static void run_prog(run_t *x, const char *elf, const char *scn_path,
                     const char *scn_text)
{
    run_prog_ex(x, elf, scn_path, scn_text, false, false);
}

static void run_free(run_t *x)
{
    tb_sim_free(x->sim);
    free(x->rec);
}

static uint32_t sym(run_t *x, const char *name)
{
    uint32_t v = 0;

    cr_assert_eq(tb_sim_symbol(x->sim, name, &v), 0, "symbol %s", name);
    return v & ~1u;
}

static uint32_t reg(run_t *x, unsigned r)
{
    uint32_t v = 0;

    cr_assert_eq(tb_sim_read_reg(x->sim, r, &v), 0);
    return v;
}

static uint32_t mem32(run_t *x, uint32_t addr)
{
    uint32_t v = 0;

    cr_assert_eq(tb_sim_read_mem(x->sim, addr, &v, 4), 0);
    return v;
}

/* Index of the first instruction record at addr. */
static size_t find_insn(run_t *x, uint32_t addr)
{
    for (size_t i = 0; i < x->n; i++)
        if (x->rec[i].kind == TB_REC_INSN && x->rec[i].u.insn.addr == addr)
            return i;
    cr_assert_fail("no record at 0x%08x", addr);
    return 0;
}

/* Flow facts every run must satisfy: consecutive instruction records
 * chain (next_addr/next_isa of one = addr/isa of the next); an exception
 * is preceded by the record whose next address is its preferred return
 * (or the cancelled instruction itself); the run ends with END. */
static void check_flow(run_t *x)
{
    cr_assert(x->n > 0);
    cr_assert_eq(x->rec[x->n - 1].kind, TB_REC_END);
    for (size_t i = 0; i + 1 < x->n; i++) {
        const tb_exec_record *a = &x->rec[i], *b = &x->rec[i + 1];

        if (a->kind != TB_REC_INSN)
            continue;
        if ((b->kind == TB_REC_CONTEXT || b->kind == TB_REC_STATE) && i + 2 < x->n)
            b = &x->rec[i + 2];
        if (b->kind == TB_REC_INSN) {
            cr_assert_eq(b->u.insn.addr, a->u.insn.next_addr, "record %zu", i);
            cr_assert_eq(b->u.insn.isa, a->u.insn.next_isa, "record %zu", i);
        } else if (b->kind == TB_REC_EXCEPTION) {
            uint32_t want = b->u.exc.cancelled ? a->u.insn.addr : a->u.insn.next_addr;

            cr_assert_eq(b->u.exc.pref_return, want, "record %zu", i);
        }
    }
}

struct expect { uint32_t off; uint8_t size; uint8_t flags; };

static void check_sequence(run_t *x, uint32_t base, const struct expect *e,
                           size_t n, uint8_t isa)
{
    size_t i = find_insn(x, base);

    cr_assert(i + n <= x->n);
    for (size_t k = 0; k < n; k++) {
        const tb_exec_record *r = &x->rec[i + k];

        cr_assert_eq(r->kind, TB_REC_INSN, "step %zu", k);
        cr_assert_eq(r->u.insn.addr, base + e[k].off, "step %zu: 0x%08x", k, r->u.insn.addr);
        cr_assert_eq(r->u.insn.size, e[k].size, "step %zu", k);
        cr_assert_eq(r->u.insn.isa, isa, "step %zu", k);
        cr_assert_eq(r->u.insn.flags, e[k].flags, "step %zu: flags %#x", k,
                     r->u.insn.flags);
    }
}

#define T TB_INSN_TAKEN
#define N TB_INSN_COND_FAILED
#define C TB_INSN_CONDITIONAL
#define I (TB_INSN_IN_IT | TB_INSN_CONDITIONAL)

Test(sim, arm_basic_exact_sequence)
{
    run_t x;
    static const struct expect e[] = {
        {0, 4, 0}, {4, 4, 0},
        {8, 4, 0}, {12, 4, C | T}, {8, 4, 0}, {12, 4, C | T}, {8, 4, 0}, {12, 4, C | N},
        {16, 4, 0}, {20, 4, T}, {32, 4, 0}, {36, 4, T}, {24, 4, 0}, {28, 4, T},
    };

    run_prog(&x, PROG("arm_basic"), SCN("arm_basic"), NULL);
    cr_assert_eq(x.rc, 0, "%s", tb_sim_errmsg(x.sim));
    cr_assert_eq(x.res.stop, TB_SIM_STOP_EXIT);
    check_flow(&x);
    check_sequence(&x, sym(&x, "main"), e, sizeof e / sizeof e[0], TB_ISA_ARM);
    {
        size_t i = find_insn(&x, sym(&x, "main") + 28);

        cr_assert_eq(x.rec[i].u.insn.next_addr, sym(&x, "_exit"));
        cr_assert_eq(x.rec[i].u.insn.wp_class, TB_WP_INDIRECT);
        cr_assert_eq(x.rec[i + 1].kind, TB_REC_END);
        cr_assert_eq(x.rec[find_insn(&x, sym(&x, "main") + 20)].u.insn.wp_class,
                     TB_WP_DIRECT_LINK);
    }
    cr_assert_eq(reg(&x, 0), 11);
    cr_assert_eq(x.res.stop_addr, sym(&x, "_exit"));
    run_free(&x);
}

Test(sim, thumb_basic_exact_sequence)
{
    run_t x;
    static const struct expect e[] = {
        {0, 2, 0}, {2, 2, 0}, {4, 2, 0}, {6, 2, N}, {8, 2, T}, {4, 2, 0}, {6, 2, T},
        {10, 4, 0}, {14, 4, T}, {20, 2, 0}, {22, 2, T}, {18, 2, T},
    };
    size_t i;

    run_prog(&x, PROG("thumb_basic"), SCN("thumb_basic"), NULL);
    cr_assert_eq(x.rc, 0, "%s", tb_sim_errmsg(x.sim));
    check_flow(&x);
    check_sequence(&x, sym(&x, "main"), e, sizeof e / sizeof e[0], TB_ISA_THUMB);
    i = find_insn(&x, sym(&x, "main") + 18);
    /* POP {pc} to the ARM caller: interworking return (A2.3.2 LoadWritePC). */
    cr_assert_eq(x.rec[i].u.insn.next_addr, sym(&x, "_exit"));
    cr_assert_eq(x.rec[i].u.insn.next_isa, TB_ISA_ARM);
    cr_assert_eq(reg(&x, 0), 0x1235);
    run_free(&x);
}

Test(sim, arm_condition_codes_match_flags)
{
    run_t x;
    /* Pass/fail fixed by the flags of CMP #0 / CMP #1 (A8.3 conditions). */
    static const struct expect e[] = {
        {0, 4, 0}, {4, 4, C}, {8, 4, C | N}, {12, 4, C | N}, {16, 4, C}, {20, 4, C | N},
        {24, 4, 0}, {28, 4, C}, {32, 4, C | N}, {36, 4, C}, {40, 4, C | N}, {44, 4, C},
        {48, 4, C | N}, {52, 4, C}, {56, 4, C | N}, {60, 4, 0}, {64, 4, C}, {68, 4, C},
        {72, 4, C | N},
    };

    run_prog(&x, PROG("cond_arm"), SCN("cond_arm"), NULL);
    cr_assert_eq(x.rc, 0, "%s", tb_sim_errmsg(x.sim));
    check_flow(&x);
    check_sequence(&x, sym(&x, "cond_block"), e, sizeof e / sizeof e[0], TB_ISA_ARM);
    cr_assert_eq(reg(&x, 0), 20);
    run_free(&x);
}

Test(sim, it_block_pass_fail_matches_flags)
{
    run_t x;
    static const struct expect e[] = {
        {0, 2, 0},                                     /* cmp r1, #0 */
        {2, 2, 0}, {4, 2, I | N}, {6, 2, I},           /* ite ne */
        {8, 2, 0}, {10, 2, I}, {12, 2, I | N}, {14, 4, I}, {18, 2, I | N}, /* itete eq */
        {20, 2, 0},                                    /* cmp r2, #100 */
        {22, 2, 0}, {24, 2, I | N}, {26, 2, I | N}, {28, 2, I | N}, /* ittt hi */
        {30, 2, 0}, {32, 2, I},                        /* it mi */
        {34, 2, 0},                                    /* cmp r2, #86 */
        {36, 2, 0}, {38, 2, I | N}, {40, 2, I | N},    /* itt ne; bne fails */
        {42, 2, 0}, {44, 2, I | T},                    /* it eq; beq taken */
    };
    size_t i;

    run_prog(&x, PROG("it_blocks"), SCN("it_blocks"), NULL);
    cr_assert_eq(x.rc, 0, "%s", tb_sim_errmsg(x.sim));
    check_flow(&x);
    check_sequence(&x, sym(&x, "it_block"), e, sizeof e / sizeof e[0], TB_ISA_THUMB);
    i = find_insn(&x, sym(&x, "it_block") + 40);
    cr_assert_eq(x.rec[i].u.insn.wp_class, TB_WP_DIRECT);
    cr_assert_eq(x.rec[i + 2].u.insn.next_addr, sym(&x, "it_loop"));
    run_free(&x);
}

/* Issue 29: an SVC that is not the last instruction of its IT block.
 * The SVC saves the advanced ITSTATE in SPSR_svc and the handler's
 * exception return restores it (IHI0406C B1.9.4 TakeSVCException,
 * B1.8.10), so the rest of the block runs under its conditions.  The
 * flags of main's instructions, turn by turn (r5 = 4, 3, 2, 1: HS and NE,
 * HS and NE, HS and EQ, LO and NE), come from it_svc.S's source; the
 * handler's instructions are left out.  Then a data abort in an IT block:
 * the SPSR keeps the load's own ITSTATE (B1.9.8), so run again by its
 * handler it passes and the else after it fails.  Both simulator paths. */
Test(sim, svc_inside_it_blocks_returns_into_the_block)
{
    /* Offsets from main; 0xff ends a turn's list. */
    static const struct expect hs_ne[] = {
        {0x08, 2, 0}, {0x0a, 2, 0}, {0x0c, 2, I}, {0x0e, 2, I}, {0x10, 2, I}, {0x12, 2, I},
        {0x14, 2, 0}, {0x16, 2, I | N}, {0x18, 2, I | N}, {0x1a, 2, I}, {0x1c, 2, I},
        {0x1e, 2, 0}, {0x20, 2, I | N}, {0x22, 2, I}, {0x24, 2, I | N}, {0x26, 2, I},
        {0x28, 2, 0}, {0x2a, 2, 0}, {0x2c, 2, I}, {0x2e, 2, I}, {0x30, 2, 0}, {0x32, 2, C | T},
    };
    static const struct expect hs_eq[] = {
        {0x08, 2, 0}, {0x0a, 2, 0}, {0x0c, 2, I}, {0x0e, 2, I}, {0x10, 2, I}, {0x12, 2, I},
        {0x14, 2, 0}, {0x16, 2, I}, {0x18, 2, I}, {0x1a, 2, I | N}, {0x1c, 2, I | N},
        {0x1e, 2, 0}, {0x20, 2, I | N}, {0x22, 2, I}, {0x24, 2, I | N}, {0x26, 2, I},
        {0x28, 2, 0}, {0x2a, 2, 0}, {0x2c, 2, I}, {0x2e, 2, I}, {0x30, 2, 0}, {0x32, 2, C | T},
    };
    static const struct expect lo_ne[] = {
        {0x08, 2, 0}, {0x0a, 2, 0}, {0x0c, 2, I | N}, {0x0e, 2, I | N}, {0x10, 2, I | N},
        {0x12, 2, I | N}, {0x14, 2, 0}, {0x16, 2, I | N}, {0x18, 2, I | N}, {0x1a, 2, I},
        {0x1c, 2, I}, {0x1e, 2, 0}, {0x20, 2, I}, {0x22, 2, I | N}, {0x24, 2, I},
        {0x26, 2, I | N}, {0x28, 2, 0}, {0x2a, 2, 0}, {0x2c, 2, I}, {0x2e, 2, I},
        {0x30, 2, 0}, {0x32, 2, C | N},
    };
    static const struct expect *const turns[] = {hs_ne, hs_ne, hs_eq, lo_ne};

    for (int ref = 0; ref < 2; ref++) {
        run_t x;
        uint32_t m;
        size_t k = 0, svcs = 0, aborts = 0;

        run_prog_ex(&x, PROG("it_svc"), SCN("it_svc"), NULL, false, ref);
        cr_assert_eq(x.rc, 0, "%s", tb_sim_errmsg(x.sim));
        cr_assert_eq(x.res.stop, TB_SIM_STOP_EXIT);
        check_flow(&x);
        m = sym(&x, "main");
        for (size_t i = 0; i < x.n; i++) {
            const tb_exec_record *r = &x.rec[i];
            const struct expect *e;

            if (r->kind == TB_REC_EXCEPTION && r->u.exc.kind == TB_EXC_DATA_ABORT) {
                /* The load in the last IT block: run again under its own
                 * condition (it passes), so the else after it fails. */
                size_t j = i + 1;

                while (j < x.n && (x.rec[j].kind != TB_REC_INSN ||
                                   x.rec[j].u.insn.addr != r->u.exc.pref_return))
                    j++;
                cr_assert_lt(j + 1, x.n, "the aborted load never ran again");
                cr_assert_eq(x.rec[j].u.insn.flags, I);
                cr_assert_eq(x.rec[j + 1].u.insn.addr, sym(&x, "i_else"));
                cr_assert_eq(x.rec[j + 1].u.insn.flags, I | N);
                aborts++;
                continue;
            }
            if (r->kind == TB_REC_EXCEPTION) {
                cr_assert_eq(r->u.exc.kind, TB_EXC_SVC);
                cr_assert_eq(x.rec[i - 1].u.insn.opcode & 0xff00u, 0xdf00u,
                             "an SVC before exception %zu", svcs);
                svcs++;
                continue;
            }
            if (r->kind != TB_REC_INSN || r->u.insn.addr < m + 0x08 ||
                r->u.insn.addr > m + 0x32)
                continue;
            cr_assert_lt(k, 4 * 22, "more of main than four turns");
            e = &turns[k / 22][k % 22];
            cr_assert_eq(r->u.insn.addr, m + e->off, "turn %zu step %zu: 0x%08x", k / 22,
                         k % 22, r->u.insn.addr);
            cr_assert_eq(r->u.insn.flags, e->flags, "turn %zu step %zu (0x%08x): flags %#x",
                         k / 22, k % 22, r->u.insn.addr, r->u.insn.flags);
            k++;
        }
        cr_assert_eq(k, 4 * 22);
        cr_assert_eq(svcs, 14);
        cr_assert_eq(aborts, 1);
        /* 14 handler visits (+0x100 each), the adds that ran, r4 = 4,
         * the word the load got once it ran again, 7. */
        cr_assert_eq(reg(&x, 0), 14 * 0x100 + 19 + 19 + 18 + 18 + 4 + 7);
        run_free(&x);
    }
}

/* Programs whose result register is a fact of their source. */
struct value_case { const char *name; uint32_t r0; };

Test(sim, programs_compute_their_values)
{
    static const struct value_case cases[] = {
        {"interwork", 4}, {"switch_table", 140}, {"returns", 7}, {"far_branch", 6},
        {"recursion", 610 + 0}, {"svc", 31}, {"faults", 0x111},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char elf[512], scn[512];
        run_t x;

        snprintf(elf, sizeof elf, TB_BINARY_DIR "/vectors/programs/%s.elf", cases[k].name);
        snprintf(scn, sizeof scn, TB_SOURCE_DIR "/vectors/programs/%s.ini", cases[k].name);
        run_prog(&x, elf, scn, NULL);
        cr_assert_eq(x.rc, 0, "%s: %s", cases[k].name, tb_sim_errmsg(x.sim));
        cr_assert_eq(x.res.stop, TB_SIM_STOP_EXIT, "%s", cases[k].name);
        check_flow(&x);
        if (strcmp(cases[k].name, "recursion"))
            cr_assert_eq(reg(&x, 0), cases[k].r0, "%s: r0 = %u", cases[k].name, reg(&x, 0));
        run_free(&x);
    }
}

Test(sim, recursion_value)
{
    run_t x;
    uint32_t d = 0;

    /* depth(n) = depth(n-1) ^ 3n, computed here independently. */
    for (uint32_t n = 1; n <= 300; n++)
        d ^= 3 * n;
    run_prog(&x, PROG("recursion"), SCN("recursion"), NULL);
    cr_assert_eq(x.rc, 0, "%s", tb_sim_errmsg(x.sim));
    cr_assert_eq(reg(&x, 0), 610 + d);
    run_free(&x);
}

Test(sim, far_branches_reach_every_region)
{
    run_t x;
    static const uint32_t where[] = {0x3000, 0x180000, 0x0C000000, 0xF0000000, 0xFFFFF000};

    run_prog(&x, PROG("far_branch"), SCN("far_branch"), NULL);
    cr_assert_eq(x.rc, 0, "%s", tb_sim_errmsg(x.sim));
    for (size_t k = 0; k < 5; k++) {
        size_t i = find_insn(&x, where[k]);

        cr_assert_eq(x.rec[i].u.insn.isa, k == 4 ? TB_ISA_THUMB : TB_ISA_ARM);
        cr_assert_eq(x.rec[i - 1].u.insn.wp_class, TB_WP_INDIRECT_LINK);
    }
    run_free(&x);
}

static const tb_exec_record *nth_exc(run_t *x, unsigned n, size_t *at)
{
    for (size_t i = 0; i < x->n; i++)
        if (x->rec[i].kind == TB_REC_EXCEPTION && n-- == 0) {
            if (at)
                *at = i;
            return &x->rec[i];
        }
    cr_assert_fail("no exception %u", n);
    return NULL;
}

Test(sim, irq_fiq_nested_and_back_to_back)
{
    run_t x;
    const tb_exec_record *e;
    uint32_t irq_log, fiq_log;
    size_t at;

    run_prog(&x, PROG("irq_fiq"), SCN("irq_fiq"), NULL);
    cr_assert_eq(x.rc, 0, "%s", tb_sim_errmsg(x.sim));
    cr_assert_eq(x.res.exceptions, 6);
    check_flow(&x);
    irq_log = sym(&x, "irq_log");
    fiq_log = sym(&x, "fiq_log");

    /* IRQ 1 after 200 instructions: vector 0x18, IRQ mode, I and A set
     * (B1.9.10); LR_irq = preferred return + 4. */
    e = nth_exc(&x, 0, &at);
    cr_assert_eq(e->u.exc.kind, TB_EXC_IRQ);
    cr_assert_eq(e->seq, 200);
    cr_assert_eq(e->u.exc.vector, 0x18);
    cr_assert_eq(e->u.exc.cpsr & 0x1F, 0x12);
    cr_assert_eq(e->u.exc.cpsr & 0x1A0, 0x180);
    cr_assert_eq(mem32(&x, irq_log), e->u.exc.pref_return + 4);
    cr_assert_eq(mem32(&x, irq_log + 4) & 0x1F, 0x13); /* from main, SVC mode */

    /* Back-to-back: the FIQ record follows at once, returning to the IRQ
     * vector (IHI0035B 5.2.3); FIQ mode, F set; its SPSR is IRQ mode. */
    cr_assert_eq(x.rec[at + 1].kind, TB_REC_EXCEPTION);
    e = &x.rec[at + 1];
    cr_assert_eq(e->u.exc.kind, TB_EXC_FIQ);
    cr_assert_eq(e->u.exc.pref_return, 0x18);
    cr_assert_eq(e->u.exc.vector, 0x1C);
    cr_assert_eq(e->u.exc.cpsr & 0x1F, 0x11);
    cr_assert(e->u.exc.cpsr & 0x40);
    cr_assert_eq(mem32(&x, fiq_log), 0x1C);
    cr_assert_eq(mem32(&x, fiq_log + 4) & 0x1F, 0x12);
    cr_assert_eq(x.rec[at + 2].u.insn.addr, 0x1C);

    /* Nested IRQ at irq_nest_point, from System mode. */
    e = nth_exc(&x, 2, NULL);
    cr_assert_eq(e->u.exc.kind, TB_EXC_IRQ);
    cr_assert_eq(e->u.exc.pref_return, sym(&x, "irq_nest_point"));
    cr_assert_eq(mem32(&x, irq_log + 8), sym(&x, "irq_nest_point") + 4);
    cr_assert_eq(mem32(&x, irq_log + 12) & 0x1F, 0x1F);

    /* Exception returns are flagged: SUBS pc,lr (FIQ) and LDM ^ (IRQ). */
    {
        unsigned ldm = 0, subs = 0;

        for (size_t i = 0; i < x.n; i++)
            if (x.rec[i].kind == TB_REC_INSN && (x.rec[i].u.insn.flags & TB_INSN_EXC_RETURN)) {
                cr_assert_eq(x.rec[i].u.insn.wp_class, TB_WP_INDIRECT);
                if ((x.rec[i].u.insn.opcode & 0x0E000000u) == 0x08000000u)
                    ldm++;
                else
                    subs++;
            }
        cr_assert_eq(ldm, 4);
        cr_assert_eq(subs, 2);
    }
    run_free(&x);
}

Test(sim, svc_entry_and_rfe_return)
{
    run_t x;
    uint32_t log;
    unsigned n = 0;

    run_prog(&x, PROG("svc"), SCN("svc"), NULL);
    cr_assert_eq(x.rc, 0, "%s", tb_sim_errmsg(x.sim));
    log = sym(&x, "svc_log");
    for (size_t i = 1; i < x.n; i++) {
        const tb_exec_record *e = &x.rec[i], *s = &x.rec[i - 1];

        if (e->kind != TB_REC_EXCEPTION)
            continue;
        /* SVC: LR = next instruction, SVC mode, vector 8 (B1.9.4). */
        cr_assert_eq(e->u.exc.kind, TB_EXC_SVC);
        cr_assert_eq(s->u.insn.opcode & (s->u.insn.size == 2 ? 0xFF00u : 0x0F000000u),
                     s->u.insn.size == 2 ? 0xDF00u : 0x0F000000u);
        cr_assert_eq(e->u.exc.pref_return, s->u.insn.addr + s->u.insn.size);
        cr_assert_eq(e->u.exc.vector, 8);
        cr_assert_eq(e->u.exc.cpsr & 0x1F, 0x13);
        cr_assert_eq(mem32(&x, log + 8 * n), s->u.insn.addr + s->u.insn.size);
        cr_assert_eq((mem32(&x, log + 8 * n + 4) >> 5) & 1, s->u.insn.isa == TB_ISA_THUMB);
        n++;
    }
    cr_assert_eq(n, 3);
    for (size_t i = 0; i < x.n; i++)
        if (x.rec[i].kind == TB_REC_INSN && x.rec[i].u.insn.opcode == 0xF8BD0A00u)
            cr_assert(x.rec[i].u.insn.flags & TB_INSN_EXC_RETURN); /* RFEIA sp! */
    run_free(&x);
}

/* Secure and Non-secure state (docs/ns-hyp.md): SMC enters Monitor mode
 * at MVBAR + 8 with A, I, F masked and LR = the next instruction
 * (IHI0406C B1.9.9, B1.8.1); the state is Secure iff Monitor mode or
 * SCR.NS = 0 (B1.5.1), so it changes at the MOVS out of the Monitor that
 * set SCR.NS and at the SMC from Non-secure code, nowhere else. */
Test(sim, secure_ns_monitor_entry_and_states)
{
    run_t x;
    uint32_t mvbar, ns_part;
    size_t n_exc = 0, n_state = 0;
    bool ns = false;

    /* Without the scenario key an SMC is an error that names it. */
    {
        static const uint8_t smc[] = {0x70, 0x00, 0x60, 0xE1}; /* SMC #0 */
        tb_sim *s = tb_sim_new(TB_SIM_CPU_A15);

        cr_assert_not_null(s);
        cr_assert_eq(tb_sim_load_raw(s, smc, sizeof smc, 0x1000), 0);
        cr_assert_eq(tb_sim_run(s, NULL, NULL, NULL), TB_ERR_FAULT);
        cr_assert(strstr(tb_sim_errmsg(s), "secure = true"), "%s", tb_sim_errmsg(s));
        tb_sim_free(s);
    }

    run_prog(&x, PROG("secure_ns"), SCN("secure_ns"), NULL);
    cr_assert_eq(x.rc, 0, "%s", tb_sim_errmsg(x.sim));
    cr_assert_eq(x.res.stop, TB_SIM_STOP_EXIT);
    cr_assert_eq(reg(&x, 0), 107); /* 3 loop turns + 4 + 100 (svc) */
    check_flow(&x);
    mvbar = sym(&x, "mon_vectors");
    ns_part = sym(&x, "ns_part");
    for (size_t i = 1; i < x.n; i++) {
        const tb_exec_record *r = &x.rec[i], *p = &x.rec[i - 1];

        if (r->kind == TB_REC_INSN) {
            /* Non-secure exactly from ns_part to the SMC before s_back
             * (the program's layout: secure_ns.S). */
            cr_assert_eq(ns, i >= find_insn(&x, ns_part) &&
                                 i <= find_insn(&x, sym(&x, "s_back") - 4),
                         "#%zu 0x%08x", i, r->u.insn.addr);
        } else if (r->kind == TB_REC_STATE) {
            cr_assert_neq(r->u.state.ns, ns, "a state record without a change");
            cr_assert_not(r->u.state.hyp);
            ns = r->u.state.ns;
            if (n_state++ == 0) {
                /* After the exception return that left the Monitor. */
                cr_assert_eq(p->kind, TB_REC_INSN);
                cr_assert(p->u.insn.flags & TB_INSN_EXC_RETURN);
                cr_assert_eq(p->u.insn.next_addr, ns_part);
                cr_assert(ns);
            } else {
                /* Before the entry of the SMC from Non-secure code. */
                cr_assert_eq(x.rec[i + 1].kind, TB_REC_EXCEPTION);
                cr_assert_eq(x.rec[i + 1].u.exc.kind, TB_EXC_SMC);
                cr_assert_not(ns);
            }
        } else if (r->kind == TB_REC_EXCEPTION) {
            const tb_exec_record *s = p->kind == TB_REC_STATE ? &x.rec[i - 2] : p;

            n_exc++;
            if (r->u.exc.kind == TB_EXC_SMC) {
                cr_assert_eq(s->u.insn.opcode, 0xE1600070u); /* SMC #0 */
                cr_assert_eq(r->u.exc.pref_return, s->u.insn.addr + 4);
                cr_assert_eq(r->u.exc.vector, mvbar + 8);
                cr_assert_eq(r->u.exc.cpsr & 0x1F, 0x16);
                cr_assert_eq(r->u.exc.cpsr & 0x1C0, 0x1C0); /* A, I, F */
            } else {
                cr_assert_eq(r->u.exc.kind, TB_EXC_SVC);
                cr_assert_eq(r->u.exc.vector, 8);
                cr_assert_eq(r->u.exc.cpsr & 0x1F, 0x13);
                cr_assert(ns, "the SVC is taken Non-secure");
            }
        }
    }
    cr_assert_eq(n_exc, 3);
    cr_assert_eq(n_state, 2);
    run_free(&x);
}

Test(sim, faults_entry_addresses)
{
    run_t x;
    const tb_exec_record *e;
    uint32_t log;

    run_prog(&x, PROG("faults"), SCN("faults"), NULL);
    cr_assert_eq(x.rc, 0, "%s", tb_sim_errmsg(x.sim));
    check_flow(&x);
    log = sym(&x, "fault_log");
    /* Undefined: preferred return = the instruction, LR = +4 in ARM (B1.9.6). */
    e = nth_exc(&x, 0, NULL);
    cr_assert_eq(e->u.exc.kind, TB_EXC_UNDEF);
    cr_assert_eq(e->u.exc.pref_return, sym(&x, "udf_insn"));
    cr_assert(e->u.exc.cancelled);
    cr_assert_eq(e->u.exc.vector, 4);
    cr_assert_eq(e->u.exc.cpsr & 0x1F, 0x1B);
    cr_assert_eq(mem32(&x, log), sym(&x, "udf_insn") + 4);
    /* Data abort: LR = instruction + 8 (B1.9.8). */
    e = nth_exc(&x, 1, NULL);
    cr_assert_eq(e->u.exc.kind, TB_EXC_DATA_ABORT);
    cr_assert_eq(e->u.exc.pref_return, sym(&x, "load_insn"));
    cr_assert_eq(e->u.exc.vector, 0x10);
    cr_assert_eq(e->u.exc.cpsr & 0x1F, 0x17);
    cr_assert_eq(mem32(&x, log + 4), sym(&x, "load_insn") + 8);
    /* Prefetch abort on the unmapped branch target: LR = target + 4. */
    e = nth_exc(&x, 2, NULL);
    cr_assert_eq(e->u.exc.kind, TB_EXC_PREFETCH_ABORT);
    cr_assert_eq(e->u.exc.pref_return, 0xA0000000u);
    cr_assert(!e->u.exc.cancelled);
    cr_assert_eq(e->u.exc.vector, 0x0C);
    cr_assert_eq(mem32(&x, log + 8), 0xA0000004u);
    run_free(&x);
}

Test(sim, unexpected_fault_names_the_address)
{
    run_t x;
    char want[32];

    run_prog(&x, PROG("faults"), NULL, NULL);
    cr_assert_eq(x.rc, TB_ERR_FAULT);
    snprintf(want, sizeof want, "0x%08x", sym(&x, "udf_insn"));
    cr_assert(strstr(tb_sim_errmsg(x.sim), want), "%s", tb_sim_errmsg(x.sim));
    run_free(&x);

    run_prog(&x, PROG("faults"), NULL, "[sim]\nundef = allow\n");
    cr_assert_eq(x.rc, TB_ERR_FAULT);
    snprintf(want, sizeof want, "0x%08x", sym(&x, "load_insn"));
    cr_assert(strstr(tb_sim_errmsg(x.sim), want), "%s", tb_sim_errmsg(x.sim));
    cr_assert(strstr(tb_sim_errmsg(x.sim), "0x90000000"), "%s", tb_sim_errmsg(x.sim));
    run_free(&x);
}

Test(sim, branch_check_fires_on_stale_decode)
{
    run_t x;
    char want[32];

    run_prog(&x, PROG("smc"), SCN("smc"), NULL);
    cr_assert_eq(x.rc, TB_ERR_MISMATCH);
    snprintf(want, sizeof want, "0x%08x", sym(&x, "patch"));
    cr_assert(strstr(tb_sim_errmsg(x.sim), want), "%s", tb_sim_errmsg(x.sim));
    run_free(&x);
}

Test(sim, context_switches)
{
    run_t x;
    unsigned n = 0;

    run_prog(&x, PROG("ctx_switch"), SCN("ctx_switch"), NULL);
    cr_assert_eq(x.rc, 0, "%s", tb_sim_errmsg(x.sim));
    check_flow(&x);
    for (size_t i = 1; i < x.n; i++) {
        if (x.rec[i].kind != TB_REC_CONTEXT)
            continue;
        /* After the MCR to CONTEXTIDR, alternating task IDs. */
        cr_assert_eq(x.rec[i - 1].kind, TB_REC_INSN);
        cr_assert_eq(x.rec[i - 1].u.insn.opcode & 0x0FFF0FFFu, 0x0E0D0F30u);
        cr_assert_eq(x.rec[i].u.ctx.context_id, (n & 1) ? 0x202u : 0x101u);
        n++;
    }
    cr_assert_eq(n, 8);
    cr_assert_eq(x.res.exceptions, 8);
    /* Task B runs in Thumb, task A in ARM. */
    cr_assert_eq(x.rec[find_insn(&x, sym(&x, "task_b"))].u.insn.isa, TB_ISA_THUMB);
    run_free(&x);
}

Test(sim, cycle_model_is_deterministic_per_seed)
{
    run_t a, b, c;

    run_prog(&a, PROG("data_loop"), SCN("data_loop"), "[sim]\nseed = 7\n");
    run_prog(&b, PROG("data_loop"), SCN("data_loop"), "[sim]\nseed = 7\n");
    run_prog(&c, PROG("data_loop"), SCN("data_loop"), "[sim]\nseed = 8\n");
    cr_assert_eq(a.rc, 0);
    cr_assert_eq(a.n, b.n);
    cr_assert_eq(a.res.cycles, b.res.cycles);
    cr_assert_neq(a.res.cycles, c.res.cycles);
    cr_assert_eq(a.res.insns, c.res.insns);
    /* At least one cycle per instruction, stamps never go back. */
    cr_assert_geq(a.res.cycles, a.res.insns);
    for (size_t i = 1; i < a.n; i++)
        cr_assert_geq(a.rec[i].cycle, a.rec[i - 1].cycle);
    run_free(&a);
    run_free(&b);
    run_free(&c);
}

Test(sim, instruction_budget_stops)
{
    run_t x;

    run_prog(&x, PROG("data_loop"), NULL, "[sim]\nmax_insns = 1000\n");
    cr_assert_eq(x.rc, 0);
    cr_assert_eq(x.res.stop, TB_SIM_STOP_BUDGET);
    cr_assert_eq(x.res.insns, 1000);
    cr_assert_eq(x.n, 1001);
    run_free(&x);
}

Test(sim, cpu_models_run_the_same_program)
{
    static const char *cpus[] = {"a9", "a7", "a15"};

    for (size_t k = 0; k < 3; k++) {
        char text[64];
        run_t x;

        snprintf(text, sizeof text, "[sim]\ncpu = %s\n", cpus[k]);
        run_prog(&x, PROG("arm_basic"), NULL, text);
        cr_assert_eq(x.rc, 0, "%s", cpus[k]);
        cr_assert_eq(reg(&x, 0), 11);
        run_free(&x);
    }
}

static int stop_after_10(void *ctx, const tb_exec_record *r)
{
    (void)r;
    return ++*(int *)ctx >= 10;
}

Test(sim, callback_can_stop)
{
    tb_sim *s = tb_sim_new(TB_SIM_CPU_A15);
    int n = 0;

    cr_assert_eq(tb_sim_load_elf_file(s, PROG("data_loop")), 0);
    cr_assert_eq(tb_sim_run(s, stop_after_10, &n, NULL), TB_ERR_STOPPED);
    cr_assert_eq(n, 10);
    cr_assert_eq(tb_sim_run(s, stop_after_10, &n, NULL), TB_ERR_STATE);
    tb_sim_free(s);
}

Test(sim, raw_image_and_exit_address)
{
    /* mov r0, #7; add r0, r0, #1; b . -- exit at the B. */
    static const uint8_t code[] = {0x07, 0x00, 0xA0, 0xE3, 0x01, 0x00, 0x80, 0xE2,
                                   0xFE, 0xFF, 0xFF, 0xEA};
    tb_scenario sc;
    tb_sim *s = tb_sim_new(TB_SIM_CPU_A15);
    tb_sim_result res;
    uint32_t r0;
    char err[128];

    cr_assert_eq(tb_sim_load_raw(s, code, sizeof code, 0x8000), 0);
    tb_scenario_init(&sc);
    cr_assert_eq(tb_scenario_parse(&sc, "[sim]\nexit = 0x8008\n", 20, err, sizeof err), 0);
    cr_assert_eq(tb_sim_set_scenario(s, &sc), 0);
    cr_assert_eq(tb_sim_run(s, NULL, NULL, &res), 0);
    cr_assert_eq(res.insns, 2);
    cr_assert_eq(res.stop, TB_SIM_STOP_EXIT);
    cr_assert_eq(tb_sim_read_reg(s, 0, &r0), 0);
    cr_assert_eq(r0, 8);
    tb_sim_free(s);
}

Test(sim, bad_inputs_are_errors)
{
    tb_sim *s = tb_sim_new(TB_SIM_CPU_A15);
    tb_scenario sc;
    size_t len;
    uint8_t *elf = tb_test_read_file(PROG("arm_basic"), &len);
    char err[128];

    cr_assert_not_null(elf);
    cr_assert_eq(tb_sim_load_elf(s, elf, 40), TB_ERR_FORMAT);
    elf[44] = 0xFF; /* phnum beyond the file */
    elf[45] = 0xFF;
    cr_assert_eq(tb_sim_load_elf(s, elf, len), TB_ERR_FORMAT);
    cr_assert_eq(tb_sim_run(s, NULL, NULL, NULL), TB_ERR_STATE);
    free(elf);
    tb_scenario_init(&sc);
    cr_assert_eq(tb_scenario_parse(&sc, "[sim]\nbogus = 1\n", 16, err, sizeof err),
                 TB_ERR_FORMAT);
    cr_assert(strstr(err, "line 2"), "%s", err);
    cr_assert_eq(tb_scenario_parse(&sc, "[irq]\nhit = 2\n", 14, err, sizeof err),
                 TB_ERR_FORMAT);
    tb_scenario_init(&sc);
    snprintf(sc.exit, sizeof sc.exit, "no_such_symbol");
    cr_assert_eq(tb_sim_set_scenario(s, &sc), TB_ERR_NOT_FOUND);
    tb_sim_free(s);
}

Test(sim, truth_lines)
{
    tb_exec_record r;
    char buf[512];

    memset(&r, 0, sizeof r);
    r.kind = TB_REC_INSN;
    r.seq = 3;
    r.cycle = 9;
    r.u.insn.addr = 0x100;
    r.u.insn.next_addr = 0x200;
    r.u.insn.opcode = 0xEA00003E;
    r.u.insn.size = 4;
    r.u.insn.isa = TB_ISA_ARM;
    r.u.insn.next_isa = TB_ISA_ARM;
    r.u.insn.wp_class = TB_WP_DIRECT;
    r.u.insn.flags = TB_INSN_TAKEN;
    cr_assert_gt(tb_truth_format_text(&r, buf, sizeof buf), 0);
    cr_assert(strstr(buf, "3 9 I 00000100") == buf, "%s", buf);
    cr_assert(strstr(buf, "ea00003e ET---"), "%s", buf);
    cr_assert(strstr(buf, "-> 00000200"), "%s", buf);
    cr_assert_gt(tb_truth_format_json(&r, buf, sizeof buf), 0);
    cr_assert(strstr(buf, "{\"kind\":\"INSN\",") == buf && strstr(buf, "\"addr\":256,") &&
              strstr(buf, "\"taken\":true") && strstr(buf, "\"next_addr\":512,"), "%s", buf);
    cr_assert_eq(tb_truth_format_json(&r, buf, 10), TB_ERR_NOSPACE);

    /* An exception and a context record: the text form is frozen (the
     * vectors' truth.txt), the JSON form names fields as the element
     * printers do (docs/formats.md). */
    memset(&r, 0, sizeof r);
    r.kind = TB_REC_EXCEPTION;
    r.seq = 4;
    r.cycle = 6;
    r.u.exc.kind = TB_EXC_UNDEF;
    r.u.exc.isa = TB_ISA_ARM;
    r.u.exc.cancelled = true;
    r.u.exc.pref_return = 0x10c;
    r.u.exc.vector = 0x4;
    r.u.exc.cpsr = 0x400001db;
    cr_assert_gt(tb_truth_format_text(&r, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "4 6 X undef ret=0000010c vector=00000004 A32 cpsr=400001db cancelled");
    cr_assert_gt(tb_truth_format_json(&r, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "{\"kind\":\"EXCEPTION\",\"seq\":4,\"cycle\":6,\"exc_kind\":\"undef\","
                          "\"exc_num\":9,\"pref_return\":268,\"vector\":4,\"isa\":\"A32\","
                          "\"cpsr\":1073742299,\"cancelled\":true}");
    memset(&r, 0, sizeof r);
    r.kind = TB_REC_CONTEXT;
    r.seq = 5;
    r.cycle = 8;
    r.u.ctx.context_id = 1;
    cr_assert_gt(tb_truth_format_text(&r, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "5 8 C ctxid=00000001 vmid=0");
    cr_assert_gt(tb_truth_format_json(&r, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "{\"kind\":\"CONTEXT\",\"seq\":5,\"cycle\":8,\"context_id\":1,"
                          "\"vmid\":0}");

    /* A security state record, and back from the text form. */
    memset(&r, 0, sizeof r);
    r.kind = TB_REC_STATE;
    r.seq = 6;
    r.cycle = 11;
    r.u.state.ns = true;
    cr_assert_gt(tb_truth_format_text(&r, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "6 11 S ns=1 hyp=0");
    {
        tb_exec_record back;

        cr_assert_eq(tb_truth_parse_text(buf, &back), 0);
        cr_assert_eq(back.kind, TB_REC_STATE);
        cr_assert_eq(back.seq, 6);
        cr_assert_eq(back.cycle, 11);
        cr_assert(back.u.state.ns && !back.u.state.hyp);
        cr_assert_eq(tb_truth_parse_text("6 11 S ns=2 hyp=0", &back), TB_ERR_FORMAT);
        cr_assert_eq(tb_truth_parse_text("6 11 S ns=1", &back), TB_ERR_FORMAT);
    }
    cr_assert_gt(tb_truth_format_json(&r, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "{\"kind\":\"STATE\",\"seq\":6,\"cycle\":11,\"ns\":true,"
                          "\"hyp\":false}");
}

/* A data transfer's truth line (docs/formats.md), written and read back:
 * a store that failed, in big-endian data, and a plain byte load. */
Test(sim, truth_data_lines)
{
    tb_exec_record r, back;
    char line[256];

    memset(&r, 0, sizeof r);
    r.kind = TB_REC_DATA;
    r.seq = 12;
    r.cycle = 40;
    r.u.data.insn_addr = 0x8010;
    r.u.data.addr = 0x20000100;
    r.u.data.value = 0x12345678;
    r.u.data.size = 4;
    r.u.data.flags = TB_DATA_STORE | TB_DATA_STORE_FAILED | TB_DATA_BE;
    cr_assert_gt(tb_truth_format_text(&r, line, sizeof line), 0);
    cr_assert_str_eq(line, "12 40 D st 20000100 4 12345678 insn=00008010 failed be");
    cr_assert_eq(tb_truth_parse_text(line, &back), 0);
    cr_assert_eq(back.kind, TB_REC_DATA);
    cr_assert_eq(back.u.data.addr, r.u.data.addr);
    cr_assert_eq(back.u.data.value, r.u.data.value);
    cr_assert_eq(back.u.data.insn_addr, r.u.data.insn_addr);
    cr_assert_eq(back.u.data.size, 4);
    cr_assert_eq(back.u.data.flags, r.u.data.flags);
    cr_assert_gt(tb_truth_format_json(&r, line, sizeof line), 0);
    cr_assert_str_eq(line, "{\"kind\":\"DATA\",\"seq\":12,\"cycle\":40,\"store\":true,"
                           "\"data_addr\":536871168,\"data_size\":4,\"data_value\":305419896,"
                           "\"insn_addr\":32784,\"store_failed\":true,\"be\":true}");
    cr_assert_eq(tb_truth_parse_text("3 9 D ld 00001000 1 ab insn=00000100", &back), 0);
    cr_assert_eq(back.u.data.flags, 0);
    cr_assert_eq(back.u.data.size, 1);
    cr_assert_eq(back.u.data.value, 0xAB);
    cr_assert_eq(tb_truth_parse_text("3 9 D ld 00001000 3 ab insn=00000100", &back),
                 TB_ERR_FORMAT);
    cr_assert_eq(tb_truth_parse_text("3 9 D ld 00001000 1 ab insn=00000100 odd", &back),
                 TB_ERR_FORMAT);
}

/* ------------------------------------------------------------------ */
/* Data records (tb_sim_set_data). */

/* One expected transfer: the instruction's label, load or store, data
 * address, size, value, flags beyond TB_DATA_STORE. */
struct dexp {
    const char *insn;
    bool store;
    uint32_t addr;
    uint8_t size;
    uint32_t value;
    uint8_t flags;
};

/* Checks every data record of x from the record of the instruction at
 * from on against want[0..n), in order: each follows the record of its
 * instruction (or another data record of it) with that instruction's
 * seq + 1 and cycle. */
static void check_data(run_t *x, uint32_t from, const struct dexp *want, size_t n)
{
    size_t k = 0, i = find_insn(x, from);
    const tb_exec_record *insn = NULL;

    for (; i < x->n; i++) {
        const tb_exec_record *r = &x->rec[i];

        if (r->kind == TB_REC_INSN) {
            insn = r;
            continue;
        }
        if (r->kind != TB_REC_DATA)
            continue;
        cr_assert(k < n, "data record %zu beyond the %zu expected: insn %08x addr %08x", k,
                  n, r->u.data.insn_addr, r->u.data.addr);
        cr_assert_not_null(insn);
        cr_assert_eq(x->rec[i - 1].kind == TB_REC_INSN || x->rec[i - 1].kind == TB_REC_DATA,
                     true, "data record %zu (%s) does not follow its instruction", k,
                     want[k].insn);
        cr_assert_eq(r->u.data.insn_addr, sym(x, want[k].insn),
                     "data record %zu: insn %08x, want %s", k, r->u.data.insn_addr,
                     want[k].insn);
        cr_assert_eq(r->u.data.insn_addr, insn->u.insn.addr, "data record %zu", k);
        cr_assert_eq(r->seq, insn->seq + 1, "data record %zu (%s) seq", k, want[k].insn);
        cr_assert_eq(r->cycle, insn->cycle, "data record %zu (%s) cycle", k, want[k].insn);
        cr_assert_eq(r->u.data.addr, want[k].addr, "data record %zu (%s): addr %08x want %08x",
                     k, want[k].insn, r->u.data.addr, want[k].addr);
        cr_assert_eq(r->u.data.size, want[k].size, "data record %zu (%s) size", k,
                     want[k].insn);
        cr_assert_eq(r->u.data.value, want[k].value, "data record %zu (%s): value %x want %x",
                     k, want[k].insn, r->u.data.value, want[k].value);
        cr_assert_eq(r->u.data.flags,
                     (want[k].store ? TB_DATA_STORE : 0) | want[k].flags,
                     "data record %zu (%s): flags %#x", k, want[k].insn, r->u.data.flags);
        k++;
    }
    cr_assert_eq(k, n, "%zu data records, want %zu", k, n);
}

/* data_ops.S, transfer by transfer, from its text: addresses from the
 * ELF's symbols (buf; the stack top crt0 gives main; the literal words),
 * values from what the program stores.  Both paths. */
Test(sim, data_ops_records_by_hand)
{
    for (int ref = 0; ref <= 1; ref++) {
        run_t x;
        uint32_t buf, sp, ex, lb, lt, tp;

        run_prog_ex(&x, PROG("data_ops"), SCN("data_ops"), NULL, true, ref);
        cr_assert_eq(x.rc, 0, "%s", tb_sim_errmsg(x.sim));
        cr_assert_eq(x.res.stop, TB_SIM_STOP_EXIT);
        check_flow(&x);
        buf = sym(&x, "buf");
        sp = sym(&x, "_svc_stack_top") - 36; /* PUSH {r4-r11, lr}: 9 words */
        ex = sym(&x, "_exit");               /* main's LR */
        lb = sym(&x, "lit_buf");
        lt = sym(&x, "lit_tpart");
        tp = sym(&x, "t_part") | 1;          /* a Thumb target */
        {
            const struct dexp want[] = {
                /* PUSH: r4 at the lowest address ... lr last (A8.8.199) */
                {"main", 1, sp, 4, 0, 0}, {"main", 1, sp + 4, 4, 0, 0},
                {"main", 1, sp + 8, 4, 0, 0}, {"main", 1, sp + 12, 4, 0, 0},
                {"main", 1, sp + 16, 4, 0, 0}, {"main", 1, sp + 20, 4, 0, 0},
                {"main", 1, sp + 24, 4, 0, 0}, {"main", 1, sp + 28, 4, 0, 0},
                {"main", 1, sp + 32, 4, ex, 0},
                {"i_lit", 0, lb, 4, buf, 0},
                {"i_str", 1, buf, 4, 0x80C0FFEE, 0},
                {"i_strb", 1, buf + 4, 1, 0xEE, 0},
                {"i_strh", 1, buf + 6, 2, 0xFFEE, 0},
                {"i_ldrb", 0, buf + 3, 1, 0x80, 0},
                {"i_ldrsb", 0, buf + 3, 1, 0x80, 0}, /* before sign extension */
                {"i_ldrh", 0, buf + 6, 2, 0xFFEE, 0},
                {"i_ldr", 0, buf + 4, 4, 0xFFEE00EE, 0},
                /* STMIB: from buf + 4 up; LDMDB from buf + 20 down, read
                 * from the lowest address up (A8.8.58-A8.8.61) */
                {"i_stm", 1, buf + 4, 4, 0x11, 0}, {"i_stm", 1, buf + 8, 4, 0x22, 0},
                {"i_stm", 1, buf + 12, 4, 0x33, 0}, {"i_stm", 1, buf + 16, 4, 0x44, 0},
                {"i_ldm", 0, buf + 4, 4, 0x11, 0}, {"i_ldm", 0, buf + 8, 4, 0x22, 0},
                {"i_ldm", 0, buf + 12, 4, 0x33, 0}, {"i_ldm", 0, buf + 16, 4, 0x44, 0},
                {"i_strd", 1, buf + 24, 4, 0x11, 0}, {"i_strd", 1, buf + 28, 4, 0x22, 0},
                {"i_ldrd", 0, buf + 16, 4, 0x44, 0}, {"i_ldrd", 0, buf + 20, 4, 0, 0},
                /* i_ldrne failed its condition: nothing */
                {"i_ldreq", 0, buf + 8, 4, 0x22, 0},
                {"i_ldrex", 0, buf, 4, 0x80C0FFEE, 0},
                {"i_strex", 1, buf, 4, 0x11, 0},
                {"i_strexf", 1, buf, 4, 0x22, TB_DATA_STORE_FAILED},
                {"i_ldrexd", 0, buf + 24, 4, 0x11, 0}, {"i_ldrexd", 0, buf + 28, 4, 0x22, 0},
                {"i_strexd", 1, buf + 24, 4, 0x66, 0}, {"i_strexd", 1, buf + 28, 4, 0x77, 0},
                {"i_swp", 0, buf, 4, 0x11, 0}, {"i_swp", 1, buf, 4, 0x44, 0},
                {"i_swpb", 0, buf, 1, 0x44, 0}, {"i_swpb", 1, buf, 1, 0x22, 0},
                {"i_strbe", 1, buf + 12, 4, 0x80C0FFEE, TB_DATA_BE},
                {"i_ldrhbe", 0, buf + 12, 2, 0x80C0, TB_DATA_BE},
                {"i_ldrpc", 0, lt, 4, tp, 0},
                {"t_ldr", 0, buf + 4, 4, 0x11, 0},
                {"t_strb", 1, buf + 20, 1, 0x11, 0},
                /* t_ldreq skipped in its IT block: nothing */
                {"t_ldrne", 0, buf + 8, 4, 0x22, 0},
                {"t_ldrex", 0, buf + 8, 4, 0x22, 0},
                {"t_strex", 1, buf + 8, 4, 0x44, 0},
                {"t_strexh", 1, buf, 2, 0xFFEE, TB_DATA_STORE_FAILED},
                /* POP {r4-r11, pc}: the PC last, from the highest address */
                {"t_pop", 0, sp, 4, 0, 0}, {"t_pop", 0, sp + 4, 4, 0, 0},
                {"t_pop", 0, sp + 8, 4, 0, 0}, {"t_pop", 0, sp + 12, 4, 0, 0},
                {"t_pop", 0, sp + 16, 4, 0, 0}, {"t_pop", 0, sp + 20, 4, 0, 0},
                {"t_pop", 0, sp + 24, 4, 0, 0}, {"t_pop", 0, sp + 28, 4, 0, 0},
                {"t_pop", 0, sp + 32, 4, ex, 0},
            };

            check_data(&x, sym(&x, "main"), want, sizeof want / sizeof want[0]);
        }
        /* The loads that failed their condition ran as N. */
        cr_assert(x.rec[find_insn(&x, sym(&x, "i_ldrne"))].u.insn.flags & TB_INSN_COND_FAILED);
        cr_assert(x.rec[find_insn(&x, sym(&x, "t_ldreq"))].u.insn.flags & TB_INSN_COND_FAILED);
        /* The flags agree with memory: the failed STREXH left buf as
         * SWPB made it; the T32 STREX and the STREXD stored (the record
         * of STREXD read its Rd before the MOV after it made it 7). */
        cr_assert_eq(mem32(&x, buf), 0x22);
        cr_assert_eq(mem32(&x, buf + 8), 0x44);
        cr_assert_eq(mem32(&x, buf + 24), 0x66);
        cr_assert_eq(mem32(&x, buf + 28), 0x77);
        run_free(&x);
    }
}

/* Data records change nothing else: the other records are the same with
 * and without them (and there are none without), on every program. */
Test(sim, data_records_leave_the_rest_alone)
{
    static const char *const progs[] = {
        "arm_basic", "thumb_basic", "interwork", "cond_arm", "it_blocks", "switch_table",
        "funcptr", "recursion", "returns", "far_branch", "irq_fiq", "svc", "faults",
        "ctx_switch", "data_loop", "smc", "cancel_single", "data_ops",
    };

    for (size_t p = 0; p < sizeof progs / sizeof progs[0]; p++) {
        char elf[512], scn[512];
        run_t a, b;
        size_t j = 0, nd = 0;

        snprintf(elf, sizeof elf, TB_BINARY_DIR "/vectors/programs/%s.elf", progs[p]);
        snprintf(scn, sizeof scn, TB_SOURCE_DIR "/vectors/programs/%s.ini", progs[p]);
        run_prog_ex(&a, elf, scn, NULL, false, false);
        run_prog_ex(&b, elf, scn, NULL, true, false);
        cr_assert_eq(a.rc, b.rc, "%s", progs[p]);
        for (size_t i = 0; i < b.n; i++) {
            if (b.rec[i].kind == TB_REC_DATA) {
                nd++;
                continue;
            }
            cr_assert(j < a.n, "%s", progs[p]);
            cr_assert_eq(memcmp(&a.rec[j], &b.rec[i], sizeof a.rec[j]), 0,
                         "%s: record %zu differs with data records on", progs[p], j);
            cr_assert_neq(a.rec[j].kind, TB_REC_DATA, "%s", progs[p]);
            j++;
        }
        cr_assert_eq(j, a.n, "%s", progs[p]);
        cr_assert_gt(nd, 0, "%s", progs[p]);
        cr_assert_eq(a.res.cycles, b.res.cycles, "%s", progs[p]);
        run_free(&a);
        run_free(&b);
    }
}

/* The data abort cancels its instruction: no data record for it, not the
 * load of faults.S, nor the STM of a raw image whose third word falls
 * off the mapped page (Unicorn hooks, and writes, the first two words
 * and hooks the third before the abort).  The handler's store after it
 * is recorded.  Both paths. */
Test(sim, data_abort_leaves_no_data_records)
{
    /* 0x00 b 0x20; 0x10 (data abort vector) b 0x40;
     * 0x20 mov r1,#1; mov r2,#2; mov r3,#3; mov r4,#0x1000; sub r4,r4,#8;
     * 0x34 stm r4,{r1-r3}; 0x40 str r1,[r4]; 0x44 b . (exit) */
    static const uint32_t words[] = {
        0xEA000006, 0xE320F000, 0xE320F000, 0xE320F000, 0xEA00000A, 0xE320F000,
        0xE320F000, 0xE320F000, 0xE3A01001, 0xE3A02002, 0xE3A03003, 0xE3A04A01,
        0xE2444008, 0xE884000E, 0xE320F000, 0xE320F000, 0xE5841000, 0xEAFFFFFE,
    };
    const char *scn = "[sim]\nexit = 0x44\ndata_abort = allow\n";

    for (int ref = 0; ref <= 1; ref++) {
        uint8_t code[sizeof words];
        tb_scenario sc;
        char err[128];
        run_t x;
        size_t i, nd = 0;

        for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
            for (unsigned b = 0; b < 4; b++)
                code[4 * w + b] = (uint8_t)(words[w] >> (8 * b));
        memset(&x, 0, sizeof x);
        x.sim = tb_sim_new(TB_SIM_CPU_A15);
        cr_assert_eq(tb_sim_load_raw(x.sim, code, sizeof code, 0), 0);
        tb_scenario_init(&sc);
        cr_assert_eq(tb_scenario_parse(&sc, scn, strlen(scn), err, sizeof err), 0, "%s", err);
        cr_assert_eq(tb_sim_set_scenario(x.sim, &sc), 0);
        cr_assert_eq(tb_sim_set_data(x.sim, true), 0);
        cr_assert_eq(tb_sim_set_reference(x.sim, ref), 0);
        x.rc = tb_sim_run(x.sim, collect, &x, &x.res);
        cr_assert_eq(x.rc, 0, "%s", tb_sim_errmsg(x.sim));
        cr_assert_eq(x.res.stop, TB_SIM_STOP_EXIT);
        i = find_insn(&x, 0x34);
        cr_assert_eq(x.rec[i + 1].kind, TB_REC_EXCEPTION);
        cr_assert_eq(x.rec[i + 1].u.exc.kind, TB_EXC_DATA_ABORT);
        cr_assert(x.rec[i + 1].u.exc.cancelled);
        for (size_t k = 0; k < x.n; k++)
            if (x.rec[k].kind == TB_REC_DATA) {
                nd++;
                cr_assert_eq(x.rec[k].u.data.insn_addr, 0x40);
                cr_assert_eq(x.rec[k].u.data.addr, 0xFF8);
                cr_assert_eq(x.rec[k].u.data.value, 1);
                cr_assert_eq(x.rec[k].u.data.flags, TB_DATA_STORE);
                cr_assert_eq(x.rec[k - 1].kind, TB_REC_INSN);
                cr_assert_eq(x.rec[k - 1].u.insn.addr, 0x40);
            }
        cr_assert_eq(nd, 1);
        run_free(&x);

        run_prog_ex(&x, PROG("faults"), SCN("faults"), NULL, true, ref);
        cr_assert_eq(x.rc, 0, "%s", tb_sim_errmsg(x.sim));
        i = find_insn(&x, sym(&x, "load_insn"));
        cr_assert_eq(x.rec[i + 1].kind, TB_REC_EXCEPTION);
        cr_assert(x.rec[i + 1].u.exc.cancelled);
        for (size_t k = 0; k < x.n; k++)
            cr_assert(x.rec[k].kind != TB_REC_DATA ||
                      x.rec[k].u.data.insn_addr != sym(&x, "load_insn"));
        run_free(&x);
    }
}

Test(sim, data_records_only_before_a_run)
{
    tb_sim *s = tb_sim_new(TB_SIM_CPU_A15);
    tb_scenario sc;

    tb_scenario_init(&sc); /* exit at _exit */
    cr_assert_eq(tb_sim_set_data(NULL, true), TB_ERR_INVAL);
    cr_assert_eq(tb_sim_load_elf_file(s, PROG("arm_basic")), 0);
    cr_assert_eq(tb_sim_set_scenario(s, &sc), 0);
    cr_assert_eq(tb_sim_set_data(s, true), 0);
    cr_assert_eq(tb_sim_run(s, NULL, NULL, NULL), 0);
    cr_assert_eq(tb_sim_set_data(s, false), TB_ERR_STATE);
    tb_sim_free(s);
}

/* ---- tb_sim_rewind: one Unicorn instance, many programs ---- */

static bool same_record(const tb_exec_record *a, const tb_exec_record *b)
{
    if (a->kind != b->kind || a->seq != b->seq || a->cycle != b->cycle)
        return false;
    switch (a->kind) {
    case TB_REC_INSN:
        return a->u.insn.addr == b->u.insn.addr && a->u.insn.next_addr == b->u.insn.next_addr &&
               a->u.insn.opcode == b->u.insn.opcode && a->u.insn.size == b->u.insn.size &&
               a->u.insn.isa == b->u.insn.isa && a->u.insn.next_isa == b->u.insn.next_isa &&
               a->u.insn.wp_class == b->u.insn.wp_class && a->u.insn.flags == b->u.insn.flags;
    case TB_REC_EXCEPTION:
        return a->u.exc.kind == b->u.exc.kind && a->u.exc.isa == b->u.exc.isa &&
               a->u.exc.cancelled == b->u.exc.cancelled &&
               a->u.exc.pref_return == b->u.exc.pref_return &&
               a->u.exc.vector == b->u.exc.vector && a->u.exc.cpsr == b->u.exc.cpsr;
    case TB_REC_CONTEXT:
        return a->u.ctx.context_id == b->u.ctx.context_id && a->u.ctx.vmid == b->u.ctx.vmid;
    case TB_REC_DATA:
        return a->u.data.insn_addr == b->u.data.insn_addr && a->u.data.addr == b->u.data.addr &&
               a->u.data.value == b->u.data.value && a->u.data.size == b->u.data.size &&
               a->u.data.flags == b->u.data.flags;
    case TB_REC_STATE:
        return a->u.state.ns == b->u.state.ns && a->u.state.hyp == b->u.state.hyp;
    default:
        return true;
    }
}

/* One simulator rewound between programs that leave the CPU in other
 * states (Secure with the Monitor's vectors, interrupts masked or
 * pending, aborts taken, Thumb) gives each program the records and the
 * final registers a new simulator gives it (sim.h tb_sim_rewind; the
 * round-trip fuzz harness relies on it). */
Test(sim, rewind_gives_what_a_new_simulator_gives)
{
    static const struct {
        const char *prog, *scn;
        bool data;
    } p[] = {
        {PROG("secure_ns"), SCN("secure_ns"), false},
        {PROG("irq_fiq"), SCN("irq_fiq"), false},
        {PROG("faults"), SCN("faults"), true},
        {PROG("thumb_basic"), SCN("thumb_basic"), false},
        {PROG("data_ops"), SCN("data_ops"), true},
        {PROG("secure_ns"), SCN("secure_ns"), true},
        {PROG("arm_basic"), SCN("arm_basic"), false},
    };
    run_t again = {0};

    again.sim = tb_sim_new(TB_SIM_CPU_A15);
    cr_assert_not_null(again.sim);
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        run_t fresh;
        tb_scenario sc;
        char err[256];

        run_prog_ex(&fresh, p[i].prog, p[i].scn, NULL, p[i].data, false);
        cr_assert_eq(fresh.rc, 0, "%s: %s", p[i].prog, tb_sim_errmsg(fresh.sim));
        if (i)
            cr_assert_eq(tb_sim_rewind(again.sim), 0, "%s", tb_sim_errmsg(again.sim));
        again.n = 0;
        tb_scenario_init(&sc);
        cr_assert_eq(tb_scenario_load(&sc, p[i].scn, err, sizeof err), 0, "%s", err);
        cr_assert_eq(sc.cpu, TB_SIM_CPU_A15);
        cr_assert_eq(tb_sim_load_elf_file(again.sim, p[i].prog), 0, "%s",
                     tb_sim_errmsg(again.sim));
        cr_assert_eq(tb_sim_set_scenario(again.sim, &sc), 0, "%s", tb_sim_errmsg(again.sim));
        cr_assert_eq(tb_sim_set_data(again.sim, p[i].data), 0);
        again.rc = tb_sim_run(again.sim, collect, &again, &again.res);
        cr_assert_eq(again.rc, 0, "%s after rewind: %s", p[i].prog, tb_sim_errmsg(again.sim));
        cr_assert_eq(again.n, fresh.n, "%s: %zu records after rewind, %zu new", p[i].prog,
                     again.n, fresh.n);
        for (size_t k = 0; k < fresh.n; k++)
            cr_assert(same_record(&again.rec[k], &fresh.rec[k]),
                      "%s: record %zu differs after rewind", p[i].prog, k);
        for (unsigned r = 0; r < 16; r++)
            cr_assert_eq(reg(&again, r), reg(&fresh, r), "%s: r%u", p[i].prog, r);
        run_free(&fresh);
    }
    run_free(&again);
}

/* Other code at the same addresses after a rewind runs as itself: no
 * translation of the last program's code is kept (sim.h). */
Test(sim, rewind_forgets_the_code_it_ran)
{
    /* mov r0, #N; add r0, r0, #1; b . -- exit at the B. */
    uint8_t code[] = {0x07, 0x00, 0xA0, 0xE3, 0x01, 0x00, 0x80, 0xE2, 0xFE, 0xFF, 0xFF, 0xEA};
    tb_sim *s = tb_sim_new(TB_SIM_CPU_A15);
    char err[128];

    cr_assert_not_null(s);
    for (unsigned n = 1; n <= 3; n++) {
        tb_scenario sc;
        tb_sim_result res;
        uint32_t r0 = 0;

        code[0] = (uint8_t)(10 * n);
        if (n > 1)
            cr_assert_eq(tb_sim_rewind(s), 0, "%s", tb_sim_errmsg(s));
        cr_assert_eq(tb_sim_load_raw(s, code, sizeof code, 0x8000), 0);
        tb_scenario_init(&sc);
        cr_assert_eq(tb_scenario_parse(&sc, "[sim]\nexit = 0x8008\n", 20, err, sizeof err), 0);
        cr_assert_eq(tb_sim_set_scenario(s, &sc), 0);
        cr_assert_eq(tb_sim_run(s, NULL, NULL, &res), 0, "%s", tb_sim_errmsg(s));
        cr_assert_eq(res.stop, TB_SIM_STOP_EXIT);
        cr_assert_eq(tb_sim_read_reg(s, 0, &r0), 0);
        cr_assert_eq(r0, 10 * n + 1, "run %u: r0 = %u", n, r0);
    }
    /* Without a rewind a second run is refused, as before. */
    cr_assert_eq(tb_sim_run(s, NULL, NULL, NULL), TB_ERR_STATE);
    tb_sim_free(s);
}

/* ------------------------------------------------------------------ */
/* Unicorn 2.0.1's no_exit_request (sim/hooks.c tb_sim_tb_new; docs/gen.md,
 * seeds 142, 1813, 2761 and 1589 mixed): its Thumb translator leaves the
 * flag set after a block whose last instruction is in an IT block, and ARM
 * blocks translated then had no exit check, so a store to unmapped memory
 * or a stop asked in a code hook took effect only at the end of the block.
 * The program: Thumb code whose IT block ends with BXEQ to ARM code with
 * side effects after its first instruction (a register, a store to RAM,
 * another register); handlers count their entries and return (data abort:
 * to the instruction after the aborting one, LR - 4, B1.9.8; IRQ: to the
 * interrupted one, LR - 4, B1.9.10).  Hand-assembled (arm-none-eabi-as
 * -march=armv7-a), one word or halfword a row. */
struct pa_word {
    uint32_t addr, enc;
    uint8_t size;
};

static const struct pa_word pa_image[] = {
    {0x000, 0xea00003e, 4}, /* b reset */
    {0x004, 0xeafffffe, 4}, /* b . */
    {0x008, 0xeafffffe, 4}, /* b . */
    {0x00c, 0xeafffffe, 4}, /* b . */
    {0x010, 0xea00000a, 4}, /* b dabt */
    {0x014, 0xeafffffe, 4}, /* b . */
    {0x018, 0xea000010, 4}, /* b irq */
    {0x01c, 0xeafffffe, 4}, /* b . */
    {0x040, 0xe2877001, 4}, /* dabt: add r7, r7, #1 */
    {0x044, 0xe25ef004, 4}, /*       subs pc, lr, #4 */
    {0x060, 0xe2888001, 4}, /* irq:  add r8, r8, #1 */
    {0x064, 0xe25ef004, 4}, /*       subs pc, lr, #4 */
    {0x100, 0xe3a04000, 4}, /* reset: mov r4, #0 */
    {0x104, 0xe3a06000, 4}, /* mov r6, #0 */
    {0x108, 0xe3a07000, 4}, /* mov r7, #0 */
    {0x10c, 0xe3a08000, 4}, /* mov r8, #0 */
    {0x110, 0xe3a03102, 4}, /* mov r3, #0x80000000 (not mapped) */
    {0x114, 0xe3a05b02, 4}, /* mov r5, #0x800 */
    {0x118, 0xf1080080, 4}, /* cpsie i */
    {0x11c, 0xe59f1004, 4}, /* ldr r1, [pc, #4] (0x128) */
    {0x120, 0xe59f2004, 4}, /* ldr r2, [pc, #4] (0x12c) */
    {0x124, 0xe12fff11, 4}, /* bx r1 */
    {0x128, 0x00000201, 4}, /* tcode + 1 (pa_run may change it) */
    {0x12c, 0x00000300, 4}, /* acode (pa_run may change it) */
    {0x200, 0x2000, 2},     /* tcode: movs r0, #0 */
    {0x202, 0x2800, 2},     /* cmp r0, #0 */
    {0x204, 0xbf08, 2},     /* it eq */
    {0x206, 0x4710, 2},     /* bxeq r2: the block ends in the IT block */
    {0x208, 0xe7fe, 2},     /* b . */
    {0x220, 0x2000, 2},     /* tcode2: movs r0, #0 */
    {0x222, 0x2800, 2},     /* cmp r0, #0 */
    {0x224, 0xbf04, 2},     /* itt eq */
    {0x226, 0x601a, 2},     /* streq r2, [r3] (aborts) */
    {0x228, 0x3401, 2},     /* addeq r4, #1 */
    {0x22a, 0xe7fe, 2},     /* b . */
    {0x300, 0xe5832000, 4}, /* acode: str r2, [r3] (aborts) */
    {0x304, 0xe2844001, 4}, /* add r4, r4, #1 */
    {0x308, 0xe5854000, 4}, /* str r4, [r5] */
    {0x30c, 0xe2866001, 4}, /* add r6, r6, #1 */
    {0x310, 0xeafffffe, 4}, /* b . (exit) */
    {0x340, 0xe1a00000, 4}, /* acode2: nop */
    {0x344, 0xe2844001, 4}, /* add r4, r4, #1 (the IRQ is due here) */
    {0x348, 0xe5854000, 4}, /* str r4, [r5] */
    {0x34c, 0xe2866001, 4}, /* add r6, r6, #1 */
    {0x350, 0xeafffffe, 4}, /* b . (exit) */
};

/* Runs the image from reset with BX to thumb (0x201 or 0x221), which goes
 * on to arm, on either path. */
static void pa_run(run_t *x, uint32_t thumb, uint32_t arm, const char *scn, bool reference)
{
    uint8_t img[0x400];
    tb_scenario sc;
    char err[256];

    memset(img, 0, sizeof img);
    for (size_t i = 0; i < sizeof pa_image / sizeof pa_image[0]; i++) {
        uint32_t v = pa_image[i].enc;

        if (pa_image[i].addr == 0x128)
            v = thumb;
        else if (pa_image[i].addr == 0x12c)
            v = arm;
        for (unsigned b = 0; b < pa_image[i].size; b++)
            img[pa_image[i].addr + b] = (uint8_t)(v >> (8 * b));
    }
    memset(x, 0, sizeof *x);
    tb_scenario_init(&sc);
    cr_assert_eq(tb_scenario_parse(&sc, scn, strlen(scn), err, sizeof err), 0, "%s", err);
    x->sim = tb_sim_new(TB_SIM_CPU_A15);
    cr_assert_not_null(x->sim);
    cr_assert_eq(tb_sim_load_raw(x->sim, img, sizeof img, 0), 0);
    cr_assert_eq(tb_sim_set_entry(x->sim, 0x100, TB_ISA_ARM), 0);
    cr_assert_eq(tb_sim_set_scenario(x->sim, &sc), 0, "%s", tb_sim_errmsg(x->sim));
    cr_assert_eq(tb_sim_set_reference(x->sim, reference), 0);
    x->rc = tb_sim_run(x->sim, collect, x, &x->res);
}

/* How many records of the instruction at addr, and that none comes
 * before record index from. */
static unsigned pa_count_after(run_t *x, uint32_t addr, size_t from)
{
    unsigned n = 0;

    for (size_t i = 0; i < x->n; i++)
        if (x->rec[i].kind == TB_REC_INSN && x->rec[i].u.insn.addr == addr) {
            cr_expect_geq(i, from, "0x%08x ran at record %zu, before record %zu", addr, i,
                          from);
            n++;
        }
    return n;
}

Test(sim, store_abort_after_an_it_block_stops_at_the_store)
{
    for (int ref = 0; ref < 2; ref++) {
        run_t x;
        size_t at;
        const tb_exec_record *e;

        pa_run(&x, 0x201, 0x300, "[sim]\nexit = 0x310\ndata_abort = allow\n", ref);
        cr_assert_eq(x.rc, 0, "%s path: %s", ref ? "reference" : "block",
                     tb_sim_errmsg(x.sim));
        cr_assert_eq(x.res.stop, TB_SIM_STOP_EXIT);
        check_flow(&x);
        e = nth_exc(&x, 0, &at);
        cr_assert_eq(e->u.exc.kind, TB_EXC_DATA_ABORT);
        cr_assert_eq(e->u.exc.pref_return, 0x300);
        cr_assert(e->u.exc.cancelled);
        /* Each instruction after the store ran once, after the handler. */
        cr_expect_eq(pa_count_after(&x, 0x304, at), 1, "%s path", ref ? "reference" : "block");
        cr_expect_eq(pa_count_after(&x, 0x308, at), 1);
        cr_expect_eq(pa_count_after(&x, 0x30c, at), 1);
        cr_expect_eq(reg(&x, 7), 1, "aborts taken");
        cr_expect_eq(reg(&x, 4), 1, "r4: the ADD after the store ran %u times", reg(&x, 4));
        cr_expect_eq(reg(&x, 6), 1);
        cr_expect_eq(mem32(&x, 0x800), 1);
        run_free(&x);
    }
}

Test(sim, irq_after_an_it_block_stops_before_its_instruction)
{
    for (int ref = 0; ref < 2; ref++) {
        run_t x;
        size_t at;
        const tb_exec_record *e;

        pa_run(&x, 0x201, 0x340, "[sim]\nexit = 0x350\n[irq]\nat_addr = 0x344\n", ref);
        cr_assert_eq(x.rc, 0, "%s path: %s", ref ? "reference" : "block",
                     tb_sim_errmsg(x.sim));
        cr_assert_eq(x.res.stop, TB_SIM_STOP_EXIT);
        check_flow(&x);
        e = nth_exc(&x, 0, &at);
        cr_assert_eq(e->u.exc.kind, TB_EXC_IRQ);
        cr_assert_eq(e->u.exc.pref_return, 0x344);
        cr_expect_eq(pa_count_after(&x, 0x344, at), 1, "%s path", ref ? "reference" : "block");
        cr_expect_eq(pa_count_after(&x, 0x348, at), 1);
        cr_expect_eq(pa_count_after(&x, 0x34c, at), 1);
        cr_expect_eq(reg(&x, 8), 1, "IRQs taken");
        cr_expect_eq(reg(&x, 4), 1, "r4: the ADD the IRQ is due at ran %u times", reg(&x, 4));
        cr_expect_eq(reg(&x, 6), 1);
        cr_expect_eq(mem32(&x, 0x800), 1);
        run_free(&x);
    }
}

/* The guard (tb_sim_check_past_fault) where Unicorn still runs past a
 * store by design: inside an IT block, which it runs as one instruction
 * (no exit check after its members), so the ADDEQ after an aborting
 * STREQ runs.  The run must fail, naming both, not go on. */
Test(sim, store_abort_inside_an_it_block_is_refused)
{
    for (int ref = 0; ref < 2; ref++) {
        run_t x;
        const char *why;

        pa_run(&x, 0x221, 0x300, "[sim]\nexit = 0x22a\ndata_abort = allow\n", ref);
        why = tb_sim_errmsg(x.sim);
        cr_expect_eq(x.rc, TB_ERR_EMULATOR, "%s path: rc %d, r4 %u: %s",
                     ref ? "reference" : "block", x.rc, reg(&x, 4), why);
        cr_expect(strstr(why, "ran past a data abort"), "%s", why);
        cr_expect(strstr(why, "instruction at 0x00000228"), "%s", why);
        cr_expect(strstr(why, "instruction at 0x00000226"), "%s", why);
        run_free(&x);
    }
}

/* [debug] halts (docs/debug-halt.md): a debug-halt exception record
 * before the instruction (pref_return = that instruction, vector 0, ARM),
 * the clock moved on `cycles`, and otherwise the same run, record for
 * record, as without the halts; the block path and the reference path
 * agree.  Expected values come from the run without halts, not from the
 * halt code. */
Test(sim, debug_halt_records)
{
    static const char *const extra =
        "[debug]\nat_insn = 30\ncycles = 500\n"
        "[debug]\nat_addr = x_thumb\nhit = 2\n"
        "[debug]\nat_insn = 200\nevery = 61\ncount = 3\ncycles = 3\n";
    const char *elf = TB_BINARY_DIR "/vectors/programs/exc_mix.elf";
    const char *ini = TB_SOURCE_DIR "/vectors/programs/exc_mix.ini";
    run_t base, blk, ref;
    size_t i = 0, j = 0, halts = 0;
    uint64_t shift = 0;

    run_prog(&base, elf, ini, NULL);
    run_prog_ex(&blk, elf, ini, extra, true, false);
    run_prog_ex(&ref, elf, ini, extra, true, true);
    cr_assert_eq(base.rc, 0, "%s", tb_sim_errmsg(base.sim));
    cr_assert_eq(blk.rc, 0, "%s", tb_sim_errmsg(blk.sim));
    cr_assert_eq(ref.rc, 0, "%s", tb_sim_errmsg(ref.sim));
    cr_assert_eq(blk.n, ref.n);
    for (size_t k = 0; k < blk.n; k++)
        cr_assert(!memcmp(&blk.rec[k], &ref.rec[k], sizeof blk.rec[k]), "record %zu", k);
    cr_assert_eq(blk.res.insns, base.res.insns);
    cr_assert_eq(blk.res.exceptions, base.res.exceptions, "a halt is no exception taken");
    for (; i < blk.n; i++) {
        const tb_exec_record *r = &blk.rec[i];

        if (r->kind == TB_REC_DATA)
            continue;
        if (r->kind == TB_REC_EXCEPTION && r->u.exc.kind == TB_EXC_DEBUG_HALT) {
            const tb_exec_record *n = &blk.rec[i + 1];
            uint64_t before = 0;

            /* The next record is the instruction it halted before. */
            cr_assert_eq(n->kind, TB_REC_INSN, "halt %zu", halts);
            cr_assert_eq(r->u.exc.pref_return, n->u.insn.addr);
            cr_assert_eq(r->u.exc.vector, 0u);
            cr_assert_eq(r->u.exc.isa, TB_ISA_ARM);
            cr_assert(!r->u.exc.cancelled);
            for (size_t k = i; k-- > 0;)
                if (blk.rec[k].kind == TB_REC_INSN || blk.rec[k].kind == TB_REC_EXCEPTION) {
                    before = blk.rec[k].cycle;
                    break;
                }
            shift += r->cycle - before;
            halts++;
            continue;
        }
        while (j < base.n && base.rec[j].kind == TB_REC_DATA)
            j++;
        cr_assert_lt(j, base.n);
        cr_assert_eq(r->kind, base.rec[j].kind, "record %zu", i);
        cr_assert_eq(r->seq, base.rec[j].seq, "record %zu", i);
        if (r->kind == TB_REC_INSN)
            cr_assert_eq(r->u.insn.addr, base.rec[j].u.insn.addr, "record %zu", i);
        cr_assert_eq(r->cycle, base.rec[j].cycle + shift, "record %zu", i);
        j++;
    }
    /* at_insn 30, the second arrival at x_thumb, three periodic ones. */
    cr_assert_eq(halts, 5);
    cr_assert_eq(shift, 500u + 100u + 3u * 3u);
    run_free(&base);
    run_free(&blk);
    run_free(&ref);
}

/* [debug] keys: cycles only there, at least 1; a halt needs a point. */
static int parse_scn(tb_scenario *sc, const char *text, char *err, size_t errlen)
{
    tb_scenario_init(sc);
    return tb_scenario_parse(sc, text, strlen(text), err, errlen);
}

Test(sim, debug_halt_keys)
{
    tb_scenario sc;
    char err[256];

    cr_assert_eq(parse_scn(&sc, "[debug]\nat_insn = 5\ncycles = 7\n", err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(sc.events[0].kind, TB_EXC_DEBUG_HALT);
    cr_assert_eq(sc.events[0].halt_cycles, 7u);
    cr_assert_eq(parse_scn(&sc, "[debug]\nat_insn = 5\n", err, sizeof err), 0, "%s", err);
    cr_assert_eq(sc.events[0].halt_cycles, 100u, "the default");
    cr_assert_eq(parse_scn(&sc, "[debug]\nat_insn = 5\ncycles = 0\n", err, sizeof err),
                 TB_ERR_FORMAT);
    cr_assert(strstr(err, "cycles"), "%s", err);
    cr_assert_eq(parse_scn(&sc, "[irq]\nat_insn = 5\ncycles = 7\n", err, sizeof err),
                 TB_ERR_FORMAT);
    cr_assert_eq(parse_scn(&sc, "[debug]\ncycles = 7\n", err, sizeof err), TB_ERR_FORMAT,
                 "a halt needs at_insn or at_addr");
}

/* fetch_wait (issue 35): each instruction fetched from the range takes
 * CYCLES more, executed or not, on the block path and the reference
 * path alike; the rest of the cycle model (its draws) is untouched.  The
 * expectation: the plain run's per-record cycle deltas plus the wait of
 * each record's address. */
static void check_fetch_wait(const char *extra, uint32_t lo, uint32_t size, unsigned w,
                             bool reference)
{
    run_t a, b;
    char text[256];
    size_t with = 0;

    snprintf(text, sizeof text, "[sim]\n%s\n", extra);
    run_prog_ex(&a, PROG("cond_arm"), SCN("cond_arm"), NULL, false, reference);
    run_prog_ex(&b, PROG("cond_arm"), SCN("cond_arm"), text, false, reference);
    cr_assert_eq(a.rc, 0);
    cr_assert_eq(b.rc, 0);
    cr_assert_eq(a.n, b.n);
    for (size_t i = 0; i < a.n; i++) {
        uint64_t da = a.rec[i].cycle - (i ? a.rec[i - 1].cycle : 0);
        uint64_t db = b.rec[i].cycle - (i ? b.rec[i - 1].cycle : 0);
        unsigned add = 0;

        cr_assert_eq(a.rec[i].kind, b.rec[i].kind);
        if (a.rec[i].kind == TB_REC_INSN && a.rec[i].u.insn.addr - lo < size) {
            add = w;
            with++;
        }
        cr_assert_eq(db, da + add, "%s: record %zu at 0x%x: %llu cycles, expected %llu + %u",
                     extra, i, a.rec[i].u.insn.addr, (unsigned long long)db,
                     (unsigned long long)da, add);
    }
    cr_assert_gt(with, 0, "%s: no instruction in the range", extra);
    run_free(&a);
    run_free(&b);
}

Test(sim, fetch_wait_adds_cycles_per_fetch)
{
    run_t x;
    uint32_t loop, end;
    char text[128];

    check_fetch_wait("fetch_wait = 1", 0, 0xFFFFFFFFu, 1, false);
    check_fetch_wait("fetch_wait = 1", 0, 0xFFFFFFFFu, 1, true);
    run_prog(&x, PROG("cond_arm"), SCN("cond_arm"), NULL);
    loop = sym(&x, "cond_loop");
    end = loop + 11 * 4; /* the loop body (cond_arm.S) */
    run_free(&x);
    snprintf(text, sizeof text, "fetch_wait = 3 0x%x %u\nfetch_wait = 9", loop, end - loop);
    /* The first entry holding the address counts: 3 in the loop, 9 elsewhere. */
    {
        run_t a, b;
        char t2[256];

        snprintf(t2, sizeof t2, "[sim]\n%s\n", text);
        run_prog(&a, PROG("cond_arm"), SCN("cond_arm"), NULL);
        run_prog(&b, PROG("cond_arm"), SCN("cond_arm"), t2);
        cr_assert_eq(a.n, b.n);
        for (size_t i = 1; i < a.n; i++) {
            uint64_t da = a.rec[i].cycle - a.rec[i - 1].cycle;
            uint64_t db = b.rec[i].cycle - b.rec[i - 1].cycle;
            uint32_t pc = a.rec[i].u.insn.addr;

            if (a.rec[i].kind == TB_REC_INSN)
                cr_assert_eq(db, da + (pc - loop < end - loop ? 3 : 9), "0x%x", pc);
        }
        run_free(&a);
        run_free(&b);
    }
}

Test(sim, fetch_wait_keys)
{
    tb_scenario sc;
    char err[256];

    cr_assert_eq(parse_scn(&sc, "[sim]\nfetch_wait = 2 0x100 0x40\n", err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(sc.n_fetch_waits, 1u);
    cr_assert_eq(sc.fetch_waits[0].cycles, 2u);
    cr_assert_eq(sc.fetch_waits[0].addr, 0x100u);
    cr_assert_eq(sc.fetch_waits[0].size, 0x40u);
    cr_assert_eq(parse_scn(&sc, "[sim]\nfetch_wait = 0\n", err, sizeof err), TB_ERR_FORMAT);
    cr_assert(strstr(err, "fetch_wait"), "%s", err);
    cr_assert_eq(parse_scn(&sc, "[sim]\nfetch_wait = 1001\n", err, sizeof err), TB_ERR_FORMAT);
    cr_assert_eq(parse_scn(&sc, "[sim]\nfetch_wait = 1 0x100\n", err, sizeof err),
                 TB_ERR_FORMAT, "a range needs ADDR and SIZE");
    cr_assert_eq(parse_scn(&sc, "[sim]\nfetch_wait = 1 0x100 0\n", err, sizeof err),
                 TB_ERR_FORMAT);
    cr_assert_eq(parse_scn(&sc, "[sim]\nfetch_wait = x\n", err, sizeof err), TB_ERR_FORMAT);
}

/* ---- ARMv7-M debug monitor, MPU and late arrival (issue 35) ---- */

typedef struct v7m_exc {
    uint16_t num;
    bool cancelled, tailchain;
} v7m_exc;

/* The exception records of a Cortex-M run, in order; with both, that the
 * reference path gives the same records. */
static size_t v7m_excs(const char *prog, const char *scn, v7m_exc *out, size_t max, run_t *x,
                       bool both)
{
    run_t ref;
    size_t n = 0;

    run_prog(x, prog, scn, NULL);
    cr_assert_eq(x->rc, 0, "%s: %s", prog, tb_sim_errmsg(x->sim));
    for (size_t i = 0; i < x->n && n < max; i++)
        if (x->rec[i].kind == TB_REC_EXCEPTION)
            out[n++] = (v7m_exc){x->rec[i].u.exc.num, x->rec[i].u.exc.cancelled,
                                 x->rec[i].u.exc.tailchain};
    if (!both)
        return n;
    run_prog_ex(&ref, prog, scn, NULL, false, true);
    cr_assert_eq(ref.rc, 0, "%s (reference path): %s", prog, tb_sim_errmsg(ref.sim));
    cr_assert_eq(ref.n, x->n, "%s: the reference path gives %zu records, the block path %zu",
                 prog, ref.n, x->n);
    for (size_t i = 0; i < x->n; i++)
        cr_assert(!memcmp(&ref.rec[i], &x->rec[i], sizeof x->rec[i]) ||
                      (ref.rec[i].kind == x->rec[i].kind && ref.rec[i].seq == x->rec[i].seq),
                  "%s: record %zu differs between the paths (kind %d/%d seq %llu/%llu "
                  "addr 0x%08x/0x%08x)", prog, i, ref.rec[i].kind, x->rec[i].kind,
                  (unsigned long long)ref.rec[i].seq, (unsigned long long)x->rec[i].seq,
                  ref.rec[i].u.insn.addr, x->rec[i].u.insn.addr);
    run_free(&ref);
    return n;
}

/* m_debug (vectors/programs/m_debug.S): BKPT without DEMCR.MON_EN
 * escalates to HardFault, with it is the DebugMonitor exception (12),
 * twice; MON_PEND pends the monitor (no BKPT: not cancelled), which pends
 * PendSV, tail-chained; IRQ0 (0x20) is above the monitor (0x80): its
 * BKPT escalates; BASEPRI 0x80 masks the monitor: escalates (ARMv7-M
 * C1.7, B1.5.4).  A BKPT's exception returns to the BKPT itself. */
Test(sim, v7m_bkpt_debugmonitor)
{
    static const v7m_exc want[] = {
        {3, true, false}, {12, true, false}, {12, true, false}, {12, false, false},
        {14, false, true}, {16, false, false}, {3, true, false}, {3, true, false},
    };
    v7m_exc got[16];
    run_t x;
    size_t n = v7m_excs(PROG("m_debug"), SCN("m_debug"), got, 16, &x, true);

    cr_assert_eq(n, sizeof want / sizeof want[0], "%zu exceptions", n);
    for (size_t i = 0; i < n; i++)
        cr_expect(got[i].num == want[i].num && got[i].cancelled == want[i].cancelled &&
                      got[i].tailchain == want[i].tailchain,
                  "exception %zu: %u%s%s, want %u%s%s", i, got[i].num,
                  got[i].cancelled ? " cancelled" : "", got[i].tailchain ? " tail-chain" : "",
                  want[i].num, want[i].cancelled ? " cancelled" : "",
                  want[i].tailchain ? " tail-chain" : "");
    for (size_t i = 0; i < x.n; i++)
        if (x.rec[i].kind == TB_REC_EXCEPTION && x.rec[i].u.exc.cancelled) {
            uint16_t op = 0;

            cr_assert_eq(tb_sim_read_mem(x.sim, x.rec[i].u.exc.pref_return, &op, 2), 0);
            cr_expect_eq(op >> 8, 0xBE, "the return address 0x%08x is no BKPT (0x%04x)",
                         x.rec[i].u.exc.pref_return, op);
        }
    cr_expect_eq(mem32(&x, sym(&x, "mon_count")), 3u);
    cr_expect_eq(mem32(&x, sym(&x, "hard_count")), 3u);
    cr_expect_eq(mem32(&x, sym(&x, "pendsv_count")), 1u);
    cr_expect_eq(mem32(&x, sym(&x, "irq_count")), 1u);
    run_free(&x);
}

/* m_mpu: MPU_TYPE.DREGION 8; MemManage (4) on a load from a no-access
 * region, a store to a read-only one, a load from subregion 0 (each
 * cancelled, returning to the access), a fetch from an execute-never
 * region (not cancelled: it returns to the fetched address, the
 * function's first instruction); with MemManage disabled a HardFault
 * (ARMv7-M B3.5, B1.5.4).  MMFAR keeps the last data fault's address. */
Test(sim, v7m_mpu_memmanage)
{
    static const v7m_exc want[] = {
        {4, true, false}, {4, true, false}, {4, true, false}, {4, false, false},
        {3, true, false},
    };
    v7m_exc got[16];
    run_t x;
    size_t n = v7m_excs(PROG("m_mpu"), SCN("m_mpu"), got, 16, &x, true), k = 0;

    cr_assert_eq(n, sizeof want / sizeof want[0], "%zu exceptions", n);
    for (size_t i = 0; i < n; i++)
        cr_expect(got[i].num == want[i].num && got[i].cancelled == want[i].cancelled,
                  "exception %zu: %u%s, want %u%s", i, got[i].num,
                  got[i].cancelled ? " cancelled" : "", want[i].num,
                  want[i].cancelled ? " cancelled" : "");
    for (size_t i = 0; i < x.n; i++)
        if (x.rec[i].kind == TB_REC_EXCEPTION && ++k == 4)
            cr_expect_eq(x.rec[i].u.exc.pref_return, sym(&x, "ram_func"));
    cr_expect_eq(mem32(&x, sym(&x, "dregion")), 8u);
    cr_expect_eq(mem32(&x, sym(&x, "mm_count")), 4u);
    cr_expect_eq(mem32(&x, sym(&x, "hard_count")), 1u);
    cr_expect_eq(mem32(&x, sym(&x, "last_mmfar")), sym(&x, "sub8k"));
    run_free(&x);
}

/* Late arrival (scenarios/m_nvic.late.ini): IRQ2 arriving as IRQ1's
 * return to IRQ0's handler unstacks preempts IRQ0 (0x80 < 0xA0): the
 * return is pre-empted (tail-chain, preempted) and IRQ2 tail-chains; the
 * other returns of IRQ1 are plain. */
Test(sim, v7m_late_arrival_preempts_the_return)
{
    v7m_exc got[64];
    run_t x;
    size_t pre = 0;

    v7m_excs(PROG("m_nvic"), TB_SOURCE_DIR "/vectors/scenarios/m_nvic.late.ini", got, 64, &x,
             true);
    for (size_t i = 0; i + 1 < x.n; i++) {
        const tb_exec_record *r = &x.rec[i];

        if (r->kind != TB_REC_EXC_RETURN || !r->u.eret.preempted)
            continue;
        pre++;
        cr_expect(r->u.eret.tailchain && r->u.eret.num == 17, "a pre-empted return of %u",
                  r->u.eret.num);
        cr_expect(i > 0 && x.rec[i - 1].kind == TB_REC_INSN &&
                      x.rec[i - 1].u.insn.addr == sym(&x, "irq1_return"),
                  "not IRQ1's BX LR");
        cr_expect(x.rec[i + 1].kind == TB_REC_EXCEPTION && x.rec[i + 1].u.exc.num == 18 &&
                      x.rec[i + 1].u.exc.tailchain && !x.rec[i + 1].u.exc.cancelled,
                  "IRQ2 does not tail-chain after it");
    }
    cr_expect_eq(pre, 1u, "%zu pre-empted returns", pre);
    run_free(&x);
}

/* scenarios/m_debug.late.ini: the first arrival pre-empts the monitor's
 * return to Thread mode; the third comes while that return tail-chains
 * into PendSV already: IRQ1 only pends and preempts PendSV's handler at
 * its first instruction (a new frame, no tail-chain). */
Test(sim, v7m_late_arrival_during_a_tail_chain_pends)
{
    v7m_exc got[64];
    run_t x;
    size_t n, pre = 0, irq1 = 0;

    n = v7m_excs(PROG("m_debug"), TB_SOURCE_DIR "/vectors/scenarios/m_debug.late.ini", got,
                 64, &x, true);
    for (size_t i = 0; i < x.n; i++)
        pre += x.rec[i].kind == TB_REC_EXC_RETURN && x.rec[i].u.eret.preempted;
    cr_expect_eq(pre, 1u);
    for (size_t i = 0; i < n; i++)
        if (got[i].num == 17) {
            irq1++;
            cr_expect_eq(got[i].tailchain, irq1 == 1, "IRQ1 #%zu", irq1);
            if (irq1 == 2)
                cr_expect(i > 0 && got[i - 1].num == 14 && got[i - 1].tailchain,
                          "the second IRQ1 does not come right after PendSV's tail-chain");
        }
    cr_expect_eq(irq1, 2u);
    run_free(&x);
}

Test(sim, v7m_unstack_key)
{
    tb_scenario sc;
    char err[256];
    tb_sim *s;

    cr_assert_eq(parse_scn(&sc, "[irq]\nline = 1\nat_addr = f\nunstack = true\n", err,
                           sizeof err), 0, "%s", err);
    cr_assert(sc.events[0].unstack);
    cr_assert_eq(parse_scn(&sc, "[irq]\nat_insn = 5\nunstack = true\n", err, sizeof err),
                 TB_ERR_FORMAT, "unstack needs at_addr");
    cr_assert(strstr(err, "at_addr"), "%s", err);
    cr_assert_eq(parse_scn(&sc, "[irq]\nat_addr = f\nunstack = maybe\n", err, sizeof err),
                 TB_ERR_FORMAT);
    cr_assert_eq(parse_scn(&sc, "[fiq]\nat_addr = f\nunstack = true\n", err, sizeof err),
                 TB_ERR_FORMAT, "no FIQ on a Cortex-M");
    /* On an A-profile core: refused, naming the cpu. */
    cr_assert_eq(parse_scn(&sc, "[irq]\nat_addr = _exit\nunstack = true\n", err, sizeof err),
                 0, "%s", err);
    s = tb_sim_new(TB_SIM_CPU_A15);
    cr_assert_not_null(s);
    cr_assert_eq(tb_sim_load_elf_file(s, PROG("arm_basic")), 0);
    cr_assert_eq(tb_sim_set_scenario(s, &sc), TB_ERR_CONFIG);
    cr_assert(strstr(tb_sim_errmsg(s), "unstack"), "%s", tb_sim_errmsg(s));
    tb_sim_free(s);
}
