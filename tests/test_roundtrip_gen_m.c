/*
 * The generator's Cortex-M programs (tb_gen --isa m, issue 32): ARMv7-M
 * Thumb code only, with the v7-M vector table, and runs that take the
 * v7-M exceptions the program and its scenario set up.  What a program
 * holds is read from its source text and its run from the simulator's
 * records (the v7-M exception numbers, ARMv7-M ARM B1.5.2), not from the
 * generator's own counts.  The round trips themselves (every seed of
 * `make roundtrip` and the ctest roundtrip_gen) check the trace.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb_test.h"
#include "tracebench/gen.h"
#include "tracebench/sim.h"

static char scratch[256];

static void scratch_init(void)
{
    tb_test_scratch_make(scratch, sizeof scratch, "gen_m");
}

static void scratch_fini(void)
{
    tb_test_scratch_remove(scratch);
}

static tb_gen_program make_m(uint64_t seed)
{
    tb_gen_opts o = {seed, TB_GEN_M, 0};
    tb_gen_program p;
    char err[256];

    cr_assert_eq(tb_gen_make(&o, &p, err, sizeof err), 0, "seed %llu: %s",
                 (unsigned long long)seed, err);
    return p;
}

Test(gen_m, name_and_parse)
{
    cr_expect_eq(tb_gen_isa_parse("m"), TB_GEN_M);
    cr_expect_str_eq(tb_gen_isa_name(TB_GEN_M), "m");
    /* The suite's A-profile draw never picks it. */
    for (uint64_t s = 0; s < 1000; s++)
        cr_expect_neq(tb_gen_seed_isa(s), TB_GEN_M, "seed %llu", (unsigned long long)s);
}

/* What an ARMv7-M core cannot run must not be in the source: ARM state,
 * CP15, CPS and the A-profile exception returns (SRS, RFE, LDM ^, SUBS
 * pc / MOVS pc), doubleword exclusives; on a Cortex-M3 no DSP
 * saturating arithmetic (ARMv7-M ARM A5.3, A7.7). */
Test(gen_m, sources_are_armv7m_thumb)
{
    static const char *const banned[] = {"\t.arm\n", "mcr p15", "mrc p15", "\tcps",
                                         "\tsrsdb", "\trfeia", "pc}^", "\tsubs pc",
                                         "\tmovs pc", "ldrexd", "strexd", "spsr"};

    for (uint64_t seed = 1; seed <= 80; seed++) {
        tb_gen_program p = make_m(seed);
        char cpu[32];

        for (size_t i = 0; i < sizeof banned / sizeof banned[0]; i++)
            cr_expect(!strstr(p.source, banned[i]), "seed %llu holds \"%s\"",
                      (unsigned long long)seed, banned[i]);
        cr_expect(p.stats.m_cpu == 3 || p.stats.m_cpu == 4, "seed %llu m_cpu %u",
                  (unsigned long long)seed, p.stats.m_cpu);
        snprintf(cpu, sizeof cpu, "\t.cpu cortex-m%u\n", p.stats.m_cpu);
        cr_expect(strstr(p.source, cpu), "seed %llu: no %s", (unsigned long long)seed, cpu);
        snprintf(cpu, sizeof cpu, "cpu = cortex-m%u\n", p.stats.m_cpu);
        cr_expect(strstr(p.scenario, cpu), "seed %llu: scenario without %s",
                  (unsigned long long)seed, cpu);
        if (p.stats.m_cpu == 3)
            cr_expect(!strstr(p.source, "\tqadd") && !strstr(p.source, "\tqsub"),
                      "seed %llu: DSP arithmetic on a Cortex-M3", (unsigned long long)seed);
        cr_expect_eq(p.stats.thumb_funcs, p.stats.funcs);
        tb_gen_program_fini(&p);
    }
}

/* Over the seeds the suite runs first, every v7-M feature the generator
 * promises is in some program. */
Test(gen_m, every_feature_appears)
{
    static const char *const want[] = {
        "\tsvc", "\tudf", "=0xE000ED04", "=0xE000E200", "=0xE000EF00", "msr psp",
        "orr r1, r1, #0x60000", "\ttbb ", "\ttbh ", "\tit", "\tcbz ", "\tldrex", ".section .far4",
        "\tmrseq r0, msp", "pop {r4-r8, pc}", "\tbx lr", "\tldm", "\tstmdb",
    };
    static const char *const scn[] = {"[irq]\nline = ", "[nmi]\n", "[systick]\n",
                                      "at_addr = ", "cpu = cortex-m3", "cpu = cortex-m4"};
    bool seen[sizeof want / sizeof want[0]] = {false}, sseen[sizeof scn / sizeof scn[0]] = {false};

    for (uint64_t seed = 1; seed <= 120; seed++) {
        tb_gen_program p = make_m(seed);

        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
            seen[i] = seen[i] || strstr(p.source, want[i]);
        for (size_t i = 0; i < sizeof scn / sizeof scn[0]; i++)
            sseen[i] = sseen[i] || strstr(p.scenario, scn[i]);
        tb_gen_program_fini(&p);
    }
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_expect(seen[i], "no source of seeds 1..120 holds \"%s\"", want[i]);
    for (size_t i = 0; i < sizeof scn / sizeof scn[0]; i++)
        cr_expect(sseen[i], "no scenario of seeds 1..120 holds \"%s\"", scn[i]);
}

typedef struct exc_seen {
    unsigned by_num[64];
    unsigned tail_chains, returns, cancelled;
    /* A fault handler resumes after the faulting instruction: the
     * instruction record before a cancelled fault's entry, and, once the
     * handler returns straight to Thread or Handler mode, the next one. */
    uint32_t last_addr, last_size;
    uint32_t want[8];
    uint16_t want_num[8];
    unsigned nwant;
    uint32_t check;           /* the address the next instruction must have, or 0 */
    unsigned resumes_checked, resumes_wrong;
    uint32_t wrong_at;
} exc_seen;

static int on_record(void *ctx, const tb_exec_record *r)
{
    exc_seen *x = ctx;

    if (r->kind == TB_REC_INSN) {
        if (x->check) {
            x->resumes_checked++;
            if (r->u.insn.addr != x->check && !x->resumes_wrong++)
                x->wrong_at = r->u.insn.addr;
            x->check = 0;
        }
        x->last_addr = r->u.insn.addr;
        x->last_size = r->u.insn.size;
    } else if (r->kind == TB_REC_EXCEPTION) {
        const uint16_t n = r->u.exc.num;

        x->by_num[n < 64 ? n : 63]++;
        x->tail_chains += r->u.exc.tailchain;
        x->cancelled += r->u.exc.cancelled;
        x->check = 0;
        if ((n == 3 || n == 5 || n == 6) && r->u.exc.cancelled && !r->u.exc.tailchain &&
            x->nwant < 8 && r->u.exc.pref_return == x->last_addr) {
            x->want[x->nwant] = x->last_addr + x->last_size;
            x->want_num[x->nwant++] = n;
        }
    } else if (r->kind == TB_REC_EXC_RETURN) {
        x->returns++;
        if (x->nwant && x->want_num[x->nwant - 1] == r->u.eret.num) {
            x->nwant--;
            if (!r->u.eret.tailchain)
                x->check = x->want[x->nwant];
        }
    }
    return 0;
}

/* Programs build cleanly (assembler warnings are errors), run to _exit on
 * their core, and between them take SVCall, PendSV, faults (UsageFault,
 * BusFault or the HardFault they escalate to, the faulting instruction
 * cancelled, then resumed at the next instruction), NVIC interrupts and
 * tail-chains. */
Test(gen_m, programs_build_and_run_to_exit, .init = scratch_init, .fini = scratch_fini,
     .timeout = 600)
{
    const char *cc = tb_test_arm_cc("gen_m.programs_build_and_run_to_exit");
    exc_seen x;
    unsigned faults;

    if (!cc)
        return;
    memset(&x, 0, sizeof x);
    for (uint64_t seed = 1; seed <= 12; seed++) {
        char dir[512], path[600], err[2048];
        tb_gen_program p = make_m(seed);
        tb_scenario sc;
        tb_sim_result res;
        tb_sim *s;

        snprintf(dir, sizeof dir, "%s/m%llu", scratch, (unsigned long long)seed);
        cr_assert_eq(tb_gen_write(&p, dir, err, sizeof err), 0, "%s", err);
        cr_assert_eq(tb_gen_build(dir, cc, err, sizeof err), 0, "seed %llu does not build: %s",
                     (unsigned long long)seed, err);
        tb_scenario_init(&sc);
        snprintf(path, sizeof path, "%s/%s", dir, TB_GEN_SCENARIO);
        cr_assert_eq(tb_scenario_load(&sc, path, err, sizeof err), 0, "%s", err);
        cr_assert_not_null(s = tb_sim_new(sc.cpu));
        snprintf(path, sizeof path, "%s/%s", dir, TB_GEN_ELF);
        cr_assert_eq(tb_sim_load_elf_file(s, path), 0, "seed %llu: %s",
                     (unsigned long long)seed, tb_sim_errmsg(s));
        cr_assert_eq(tb_sim_set_scenario(s, &sc), 0, "%s", tb_sim_errmsg(s));
        cr_expect_geq(tb_sim_run(s, on_record, &x, &res), 0, "seed %llu: %s",
                      (unsigned long long)seed, tb_sim_errmsg(s));
        cr_expect_eq(res.stop, TB_SIM_STOP_EXIT, "seed %llu stopped: %s at 0x%08x",
                     (unsigned long long)seed, tb_sim_stop_name(res.stop), res.stop_addr);
        cr_expect(res.insns > 50 && res.insns <= 4 * p.stats.est_insns + 200000,
                  "seed %llu ran %llu instructions (bound %llu)", (unsigned long long)seed,
                  (unsigned long long)res.insns, (unsigned long long)p.stats.est_insns);
        tb_sim_free(s);
        tb_gen_program_fini(&p);
    }
    faults = x.by_num[3] + x.by_num[5] + x.by_num[6];
    cr_expect(x.by_num[11], "no SVCall taken");
    cr_expect(x.by_num[14], "no PendSV taken");
    cr_expect(faults && x.cancelled >= faults, "faults %u, cancelled %u", faults, x.cancelled);
    {
        unsigned irqs = 0;

        for (unsigned n = 16; n < 64; n++)
            irqs += x.by_num[n];
        cr_expect(irqs, "no NVIC interrupt taken");
    }
    cr_expect(x.tail_chains, "no tail-chain");
    cr_expect(x.returns, "no exception return");
    cr_expect(x.resumes_checked > 10 && !x.resumes_wrong,
              "%u fault returns checked, %u not to the next instruction (first at 0x%08x)",
              x.resumes_checked, x.resumes_wrong, x.wrong_at);
}
