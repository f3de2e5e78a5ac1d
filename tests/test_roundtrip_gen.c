/*
 * The random program generator (gen/, docs/gen.md) and what the round
 * trip does with its programs:
 * - the same options give the same bytes; the seed picks the ISA;
 * - over many seeds every feature the header promises appears;
 * - programs build with arm-none-eabi-gcc and run to _exit in the
 *   simulator (a generator bug shows as a rejected source or a run that
 *   stops elsewhere);
 * - the suite's option-set draw reaches every set of every protocol;
 * - the kept-seed table (roundtrip/gen_seeds.tsv) parses, and each row
 *   replays as it says: MATCH rows match (regression seeds), KNOWN rows
 *   still fail (once one matches this test fails: move it to MATCH);
 * - `tracebench gen` on the command line: its files, --help, errors.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb_test.h"
#include "tracebench/gen.h"
#include "tracebench/roundtrip.h"
#include "tracebench/sim.h"

static char scratch[256];

static void scratch_init(void)
{
    tb_test_scratch_make(scratch, sizeof scratch, "gen");
}

static void scratch_fini(void)
{
    tb_test_scratch_remove(scratch);
}

static tb_gen_program make(uint64_t seed, int isa, unsigned size)
{
    tb_gen_opts o = {seed, isa, size};
    tb_gen_program p;
    char err[256];
    int rc = tb_gen_make(&o, &p, err, sizeof err);

    cr_assert_eq(rc, 0, "seed %llu: %s", (unsigned long long)seed, err);
    return p;
}

Test(gen, deterministic_per_seed)
{
    for (uint64_t seed = 0; seed < 40; seed++) {
        tb_gen_program a = make(seed, -1, 0), b = make(seed, -1, 0),
                       c = make(seed + 1000, -1, 0);

        cr_expect_str_eq(a.source, b.source, "seed %llu: two sources", (unsigned long long)seed);
        cr_expect_str_eq(a.ldscript, b.ldscript);
        cr_expect_str_eq(a.scenario, b.scenario);
        cr_expect_str_neq(a.source, c.source, "seeds %llu and +1000 agree",
                          (unsigned long long)seed);
        cr_expect_eq(a.isa, tb_gen_seed_isa(seed), "the seed picks the ISA");
        cr_expect_eq(a.size, TB_GEN_SIZE_DEFAULT);
        cr_expect_eq(tb_gen_hash(a.source), tb_gen_hash(b.source));
        tb_gen_program_fini(&a);
        tb_gen_program_fini(&b);
        tb_gen_program_fini(&c);
    }
    /* FNV-1a 64 of its test vector ("a": af63dc4c8601ec8c). */
    cr_expect_eq(tb_gen_hash("a"), 0xaf63dc4c8601ec8cull);
}

Test(gen, bad_options_and_names)
{
    tb_gen_opts o = {1, -1, TB_GEN_SIZE_MAX + 1};
    tb_gen_program p;
    char err[256];

    cr_expect_eq(tb_gen_make(&o, &p, err, sizeof err), TB_ERR_INVAL);
    cr_expect(strstr(err, "size"), "%s", err);
    o.size = 3;
    o.isa = 7;
    cr_expect_eq(tb_gen_make(&o, &p, err, sizeof err), TB_ERR_INVAL);
    cr_expect(strstr(err, "isa"), "%s", err);
    cr_expect_eq(tb_gen_isa_parse("arm"), TB_GEN_ARM);
    cr_expect_eq(tb_gen_isa_parse("thumb"), TB_GEN_THUMB);
    cr_expect_eq(tb_gen_isa_parse("mixed"), TB_GEN_MIXED);
    cr_expect_eq(tb_gen_isa_parse("Thumb"), -1);
    cr_expect_eq(tb_gen_isa_parse(NULL), -1);
    cr_expect_str_eq(tb_gen_isa_name(TB_GEN_MIXED), "mixed");
    /* Every ISA is picked by some seed. */
    {
        unsigned seen[3] = {0};

        for (uint64_t s = 0; s < 60; s++)
            seen[tb_gen_seed_isa(s)]++;
        cr_expect(seen[0] && seen[1] && seen[2], "%u %u %u", seen[0], seen[1], seen[2]);
    }
}

/* What gen.h promises, summed over the seeds the suite runs first. */
Test(gen, every_feature_appears)
{
    tb_gen_stats t = {0};
    unsigned te = 0, arm_only = 0, thumb_only = 0;

    for (uint64_t seed = 1; seed <= 300; seed++) {
        tb_gen_program p = make(seed, -1, 0);
        const tb_gen_stats *s = &p.stats;

        if (p.isa == TB_GEN_ARM) {
            cr_expect_eq(s->thumb_funcs, 0, "seed %llu: arm with Thumb functions",
                         (unsigned long long)seed);
            cr_expect(!s->thumb_handlers);
            arm_only++;
        }
        if (p.isa == TB_GEN_THUMB) {
            cr_expect_eq(s->thumb_funcs, s->funcs);
            thumb_only++;
        }
        cr_expect(s->est_insns > 0 && s->est_insns < 10000000);
        cr_expect(strstr(p.source, "main:") && strstr(p.source, "_exit:"));
        t.thumb_funcs += s->thumb_funcs;
        t.far_funcs += s->far_funcs;
        t.loops += s->loops;
        t.it_blocks += s->it_blocks;
        t.cond_insns += s->cond_insns;
        t.cond_branches += s->cond_branches;
        t.switches += s->switches;
        t.calls += s->calls;
        t.indirect_calls += s->indirect_calls;
        t.interworking_calls += s->interworking_calls;
        t.veneer_calls += s->veneer_calls;
        t.returns_indirect += s->returns_indirect;
        t.loads += s->loads;
        t.stores += s->stores;
        t.multiples += s->multiples;
        t.exclusives += s->exclusives;
        t.svc += s->svc;
        t.svc_in_it += s->svc_in_it;
        t.undef += s->undef;
        t.data_aborts += s->data_aborts;
        t.prefetch_aborts += s->prefetch_aborts;
        t.ctxid_writes += s->ctxid_writes;
        t.irqs += s->irqs;
        t.fiqs += s->fiqs;
        te += s->thumb_handlers;
        tb_gen_program_fini(&p);
    }
#define HAS(f) cr_expect(t.f > 0, "no seed of 1..300 has " #f)
    HAS(thumb_funcs);
    HAS(far_funcs);
    HAS(loops);
    HAS(it_blocks);
    HAS(cond_insns);
    HAS(cond_branches);
    HAS(switches);
    HAS(calls);
    HAS(indirect_calls);
    HAS(interworking_calls);
    HAS(veneer_calls);
    HAS(returns_indirect);
    HAS(loads);
    HAS(stores);
    HAS(multiples);
    HAS(exclusives);
    HAS(svc);
    HAS(svc_in_it);
    HAS(undef);
    HAS(data_aborts);
    HAS(prefetch_aborts);
    HAS(ctxid_writes);
    HAS(irqs);
    HAS(fiqs);
#undef HAS
    cr_expect(te > 0, "no seed has Thumb handlers (SCTLR.TE)");
    cr_expect(arm_only > 0 && thumb_only > 0);
}

/* Each source mentions the instructions gen.h lists (a text check on
 * the union of seeds: a feature the counters count but never emit would
 * show here). */
Test(gen, sources_hold_the_instruction_kinds)
{
    static const char *const want[] = {
        "\tit", "\tcbz ", "\tcbnz ", "\ttbb ", "\ttbh ", "ldr pc, [pc, r12, lsl #2]", "addls pc",
        "\tmov pc, r3", "\tblx r12", "\tmov lr, pc", "ldr pc, =", "\tbx lr", "pop {r4-r8, pc}",
        "ldr pc, [sp], #4", "\tmov pc, lr", "ldrd", "strd", "ldrsb", "ldrsh", "ldrh", "strb",
        "ldrex", "strexd", "\tldm", "\tstm", "\tpush {", "\tpld ", "\tsvc", "\tudf",
        "movt r7, #0x9", "bx r12", "mcr p15, 0, r0, c13, c0, 1", "\tisb", "\tsrsdb", "\trfeia",
        "pc}^", "\tsubs pc, lr, #4", "\tmovs pc, lr", ".section .far4", "blgt rec", "\tumlal",
        "lsl r", "\tssat", "\tbfi", "\trbit",
    };
    bool seen[sizeof want / sizeof want[0]] = {false};

    for (uint64_t seed = 1; seed <= 120; seed++) {
        tb_gen_program p = make(seed, -1, 0);

        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
            if (!seen[i] && strstr(p.source, want[i]))
                seen[i] = true;
        tb_gen_program_fini(&p);
    }
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_expect(seen[i], "no source of seeds 1..120 holds \"%s\"", want[i]);
}

/* One program built and run in the simulator with its scenario; the
 * simulator's stop, or -1 with the reason printed. */
static int build_and_run(uint64_t seed, int isa, unsigned size, const char *cc,
                         tb_sim_result *res, const char **why)
{
    char dir[512], path[600], err[2048];
    tb_gen_opts o = {seed, isa, size};
    tb_gen_program p;
    tb_scenario sc;
    tb_sim *s;
    int rc;

    *why = "";
    snprintf(dir, sizeof dir, "%s/s%llu-%d-%u", scratch, (unsigned long long)seed, isa, size);
    cr_assert_eq(tb_gen_make(&o, &p, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tb_gen_write(&p, dir, err, sizeof err), 0, "%s", err);
    rc = tb_gen_build(dir, cc, err, sizeof err);
    cr_assert_eq(rc, 0, "seed %llu isa %d size %u does not build: %s", (unsigned long long)seed,
                 isa, size, err);
    tb_scenario_init(&sc);
    snprintf(path, sizeof path, "%s/%s", dir, TB_GEN_SCENARIO);
    cr_assert_eq(tb_scenario_load(&sc, path, err, sizeof err), 0, "%s", err);
    cr_assert_not_null(s = tb_sim_new(sc.cpu));
    snprintf(path, sizeof path, "%s/%s", dir, TB_GEN_ELF);
    cr_assert_eq(tb_sim_load_elf_file(s, path), 0, "%s", tb_sim_errmsg(s));
    cr_assert_eq(tb_sim_set_scenario(s, &sc), 0, "%s", tb_sim_errmsg(s));
    rc = tb_sim_run(s, NULL, NULL, res);
    if (rc < 0) {
        static char msg[512];

        snprintf(msg, sizeof msg, "%s", tb_sim_errmsg(s));
        *why = msg;
    }
    tb_sim_free(s);
    if (rc >= 0 && res->insns > p.stats.est_insns + 50000)
        cr_expect(false, "seed %llu ran %llu instructions, above its bound %llu plus the "
                  "interrupts' share", (unsigned long long)seed, (unsigned long long)res->insns,
                  (unsigned long long)p.stats.est_insns);
    tb_gen_program_fini(&p);
    return rc;
}

/* Programs of every ISA and some sizes build cleanly (assembler warnings
 * are errors) and run to _exit.  Seeds with an SVC inside an IT block are
 * left to the kept-seed table (the simulator cannot run them yet: a known
 * class, replayed below), so each seed here is checked to have none. */
Test(gen, programs_build_and_run_to_exit, .init = scratch_init, .fini = scratch_fini,
     .timeout = 600)
{
    static const struct { uint64_t seed; int isa; unsigned size; } c[] = {
        {1, -1, 0}, {2, -1, 0}, {3, -1, 0}, {5, -1, 0}, {6, -1, 0}, {9, -1, 0}, {11, -1, 0},
        {7, TB_GEN_ARM, 1}, {7, TB_GEN_THUMB, 1}, {7, TB_GEN_MIXED, 1},
        {8, TB_GEN_ARM, 40}, {8, TB_GEN_THUMB, 40}, {12, TB_GEN_MIXED, 40},
        {13, TB_GEN_MIXED, 3}, {14, TB_GEN_THUMB, 20}, {15, TB_GEN_ARM, 20},
    };
    const char *cc = tb_test_arm_cc("gen.programs_build_and_run_to_exit");

    if (!cc)
        return;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        tb_sim_result res;
        const char *why;
        tb_gen_program p = make(c[i].seed, c[i].isa, c[i].size);
        int rc;

        cr_assert_eq(p.stats.svc_in_it, 0, "seed %llu now has an SVC in an IT block: pick "
                     "another for this test", (unsigned long long)c[i].seed);
        tb_gen_program_fini(&p);
        rc = build_and_run(c[i].seed, c[i].isa, c[i].size, cc, &res, &why);
        cr_expect_eq(rc, 0, "seed %llu: %s", (unsigned long long)c[i].seed, why);
        cr_expect_eq(res.stop, TB_SIM_STOP_EXIT, "seed %llu stopped: %s at 0x%08x",
                     (unsigned long long)c[i].seed, tb_sim_stop_name(res.stop), res.stop_addr);
        cr_expect(res.insns > 50, "seed %llu ran only %llu instructions",
                  (unsigned long long)c[i].seed, (unsigned long long)res.insns);
    }
}

/* Issue 29, seeds 1813 and 1589 mixed (docs/gen.md): an ARM block that
 * Unicorn 2.0.1 translated right after a Thumb block ending in an IT block
 * had no exit checks (its no_exit_request stays set, sim/hooks.c
 * tb_sim_tb_new).  1813: the SUBS/BNE after an aborting STMDBGE at 0x748
 * ran before the abort and again after its handler returned; 1589: the
 * SUBS at 0xad4 an FIQ was due at ran before the FIQ and again after.
 * Both loop counters stepped over 0 and the runs went on to the budget;
 * the guards refused them (1813 since h18-rest29, 1589 since this fix).  With
 * those blocks translated again, both run to _exit, the guards silent
 * (tb_sim_run returns their message as an error).  Failed before the fix
 * ("Unicorn ran past a data abort" / "an interrupt stop"). */
Test(gen, sim_runs_past_abort_seeds_to_their_exit, .init = scratch_init,
     .fini = scratch_fini, .timeout = 300)
{
    static const uint64_t seeds[] = {1813, 1589, 142, 2761};
    const char *cc = tb_test_arm_cc("gen.sim_runs_past_abort_seeds_to_their_exit");

    if (!cc)
        return;
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        tb_sim_result res;
        const char *why;
        int rc;

        memset(&res, 0, sizeof res);
        rc = build_and_run(seeds[i], TB_GEN_MIXED, 0, cc, &res, &why);
        cr_expect_eq(rc, 0, "seed %llu mixed: %s", (unsigned long long)seeds[i], why);
        cr_expect_eq(res.stop, TB_SIM_STOP_EXIT, "seed %llu mixed stopped: %s at 0x%08x "
                     "after %llu instructions", (unsigned long long)seeds[i],
                     tb_sim_stop_name(res.stop), res.stop_addr,
                     (unsigned long long)res.insns);
    }
}

/* The simulator's invariant: an IRQ, FIQ or SVC handler's exception
 * return to the preferred return address resumes in the instruction set
 * the interrupted code had (the SPSR.T the entry saved).  Issue 29, found
 * by the generator: Unicorn's CPSR.T read 1 in ARM code after a Thumb
 * interworking branch that was conditional in an IT block (seed 265: a
 * BLXLS to an ARM veneer, an IRQ before it ran; seed 2761: a POPLS {pc}
 * to ARM, a data abort later, whose handler reads SPSR.T), so the return
 * resumed ARM code in Thumb state and ran garbage. */
typedef struct isa_check {
    uint32_t pref[64];
    uint8_t isa[64];
    unsigned n, returns, bad;
    tb_isa next_isa;
    uint64_t bad_seq;
} isa_check;

static int isa_cb(void *ctx, const tb_exec_record *r)
{
    isa_check *k = ctx;

    if (r->kind == TB_REC_EXCEPTION) {
        tb_exc_kind x = (tb_exc_kind)r->u.exc.kind;

        if ((x == TB_EXC_IRQ || x == TB_EXC_FIQ || x == TB_EXC_SVC) && k->n < 64) {
            k->pref[k->n] = r->u.exc.pref_return;
            k->isa[k->n++] = (uint8_t)k->next_isa;
        }
        /* An exception taken at this one's vector interrupts its state. */
        k->next_isa = (tb_isa)r->u.exc.isa;
        return 0;
    }
    if (r->kind != TB_REC_INSN)
        return 0;
    k->next_isa = (tb_isa)r->u.insn.next_isa;
    if ((r->u.insn.flags & TB_INSN_EXC_RETURN) && k->n &&
        r->u.insn.next_addr == k->pref[k->n - 1]) {
        k->n--;
        k->returns++;
        if (r->u.insn.next_isa != k->isa[k->n] && !k->bad++)
            k->bad_seq = r->seq;
    }
    return 0;
}

static void run_isa_check(uint64_t seed, uint64_t hash, const char *cc)
{
    char dir[512], path[600], err[2048];
    tb_gen_opts o = {seed, -1, 0};
    tb_gen_program p;
    tb_scenario sc;
    tb_sim_result res;
    isa_check k = {0};
    tb_sim *s;
    bool svc_in_it;
    int rc;

    snprintf(dir, sizeof dir, "%s/isa%llu", scratch, (unsigned long long)seed);
    cr_assert_eq(tb_gen_make(&o, &p, err, sizeof err), 0, "%s", err);
    svc_in_it = p.stats.svc_in_it > 0;
    if (hash)
        cr_assert_eq(tb_gen_hash(p.source), hash, "seed %llu generates another program now: "
                     "find a seed that shows the case again (an IRQ after a conditional "
                     "interworking branch in an IT block) and update this test",
                     (unsigned long long)seed);
    cr_assert_eq(tb_gen_write(&p, dir, err, sizeof err), 0, "%s", err);
    tb_gen_program_fini(&p);
    cr_assert_eq(tb_gen_build(dir, cc, err, sizeof err), 0, "%s", err);
    tb_scenario_init(&sc);
    snprintf(path, sizeof path, "%s/%s", dir, TB_GEN_SCENARIO);
    cr_assert_eq(tb_scenario_load(&sc, path, err, sizeof err), 0, "%s", err);
    cr_assert_not_null(s = tb_sim_new(sc.cpu));
    snprintf(path, sizeof path, "%s/%s", dir, TB_GEN_ELF);
    cr_assert_eq(tb_sim_load_elf_file(s, path), 0);
    cr_assert_eq(tb_sim_set_scenario(s, &sc), 0);
    rc = tb_sim_run(s, isa_cb, &k, &res);
    if (rc < 0 && svc_in_it) {
        /* The simulator cannot run an SVC inside an IT block yet (issue
         * 29, a known class another change fixes): said, not hidden. */
        fprintf(stderr, "seed %llu: an SVC inside an IT block stops the simulator (%s); "
                "checked up to there\n", (unsigned long long)seed, tb_sim_errmsg(s));
        tb_sim_free(s);
        cr_expect_eq(k.bad, 0, "seed %llu: an exception return resumed in the other "
                     "instruction set at #%llu", (unsigned long long)seed,
                     (unsigned long long)k.bad_seq);
        return;
    }
    cr_assert_eq(rc, 0, "%s", tb_sim_errmsg(s));
    tb_sim_free(s);
    cr_expect_eq(k.bad, 0, "seed %llu: %u of %u exception returns resumed in the other "
                 "instruction set, the first at #%llu", (unsigned long long)seed, k.bad,
                 k.returns, (unsigned long long)k.bad_seq);
    cr_expect_eq(res.stop, TB_SIM_STOP_EXIT, "seed %llu: did not reach _exit",
                 (unsigned long long)seed);
    if (hash)
        cr_expect_gt(k.returns, 0, "seed %llu: no exception return checked",
                     (unsigned long long)seed);
}

Test(gen, exception_returns_resume_in_the_interrupted_state, .init = scratch_init,
     .fini = scratch_fini, .timeout = 600)
{
    const char *cc = tb_test_arm_cc("gen.exception_returns_resume_in_the_interrupted_state");

    if (!cc)
        return;
    run_isa_check(265, 0x349f4f4563bf3ceaull, cc);
    run_isa_check(2761, 0x8090e731706d6c52ull, cc);
    for (uint64_t seed = 1; seed <= 24; seed++)
        run_isa_check(seed, 0, cc);
}

/* Every option set of every protocol is drawn by the CI seeds 1..300,
 * and by any 2n - 1 consecutive seeds; the draw is a function of the
 * seed alone. */
Test(gen, suite_draws_every_option_set)
{
    static const tb_protocol protos[] = {TB_PROTO_PTM, TB_PROTO_ETMV3, TB_PROTO_ETMV1,
                                         TB_PROTO_ETMV2};

    for (size_t k = 0; k < 4; k++) {
        size_t n;
        unsigned hits[256] = {0};

        tb_rt_option_sets(protos[k], &n);
        cr_assert(n > 0 && n <= 256);
        for (uint64_t s = 1; s <= 300; s++) {
            size_t i = tb_rt_gen_set(protos[k], s);

            cr_assert_lt(i, n);
            cr_expect_eq(i, tb_rt_gen_set(protos[k], s));
            hits[i]++;
        }
        for (size_t i = 0; i < n; i++)
            cr_expect(hits[i] > 0, "%s set %zu is drawn by no seed of 1..300",
                      tb_protocol_name(protos[k]), i);
        for (uint64_t start = 7; start < 100000; start += 9973) {
            bool seen[256] = {false};

            for (uint64_t s = start; s < start + 2 * n - 1; s++)
                seen[tb_rt_gen_set(protos[k], s)] = true;
            for (size_t i = 0; i < n; i++)
                cr_expect(seen[i], "%s set %zu: not drawn by seeds %llu..+%zu",
                          tb_protocol_name(protos[k]), i, (unsigned long long)start, 2 * n - 1);
        }
    }
}

Test(gen, seed_table_parses_and_rejects)
{
    tb_rt_seed_row *rows = NULL;
    size_t n = 0;
    char err[256];
    const char *good = "# a comment\n"
                       "\n"
                       "17 mixed 10 0123456789abcdef etmv1 ca,fifo=6 KNOWN:overflow-resume # x\n"
                       "18\tarm\t3\tfedcba9876543210\tptm\tplain\tMATCH\n";

    cr_assert_eq(tb_rt_seed_table_parse(good, &rows, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 2);
    cr_expect_eq(rows[0].seed, 17);
    cr_expect_eq(rows[0].isa, TB_GEN_MIXED);
    cr_expect_eq(rows[0].hash, 0x0123456789abcdefull);
    cr_expect_eq(rows[0].protocol, TB_PROTO_ETMV1);
    cr_expect_str_eq(rows[0].options, "ca,fifo=6");
    cr_expect(rows[0].known);
    cr_expect_str_eq(rows[0].cls, "overflow-resume");
    cr_expect_eq(rows[0].line, 3);
    cr_expect_eq(rows[1].size, 3);
    cr_expect_str_eq(rows[1].options, "");
    cr_expect(!rows[1].known);
    free(rows);
    {
        static const struct { const char *text, *why; } bad[] = {
            {"17 mixed 10 0123456789abcdef etmv1 plain\n", "line 1: want 7 fields"},
            {"x mixed 10 0123456789abcdef etmv1 plain MATCH\n", "bad seed"},
            {"1 risc 10 0123456789abcdef etmv1 plain MATCH\n", "isa"},
            {"1 arm 0 0123456789abcdef etmv1 plain MATCH\n", "bad size"},
            {"1 arm 1 0123 etmv1 plain MATCH\n", "hash"},
            {"1 arm 1 0123456789abcdef etmv4 plain MATCH\n", "protocol"},
            {"\n1 arm 1 0123456789abcdef ptm plain PASS\n", "line 2: expect"},
            {"1 arm 1 0123456789abcdef ptm plain KNOWN:\n", "expect"},
        };

        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            rows = NULL;
            cr_expect_eq(tb_rt_seed_table_parse(bad[i].text, &rows, &n, err, sizeof err),
                         TB_ERR_FORMAT, "accepted: %s", bad[i].text);
            cr_expect(strstr(err, bad[i].why), "'%s' for %s", err, bad[i].text);
            free(rows);
        }
    }
}

/* The kept seeds: each row's program is still the one it was kept for
 * (its source hash), and its round trip gives what the row says. */
Test(gen, kept_seeds_replay, .init = scratch_init, .fini = scratch_fini, .timeout = 900)
{
    char path[512], err[2048];
    char *text;
    tb_rt_seed_row *rows = NULL;
    size_t n = 0;
    const char *cc = tb_test_arm_cc("gen.kept_seeds_replay");

    if (!cc)
        return;
    snprintf(path, sizeof path, "%s/roundtrip/gen_seeds.tsv", TB_SOURCE_DIR);
    text = tb_test_slurp(path, NULL);
    cr_assert_eq(tb_rt_seed_table_parse(text, &rows, &n, err, sizeof err), 0, "%s: %s", path,
                 err);
    free(text);
    cr_expect(n > 0, "%s holds no row", path);
    for (size_t i = 0; i < n; i++) {
        const tb_rt_seed_row *r = &rows[i];
        tb_gen_opts o = {r->seed, r->isa, r->size};
        tb_gen_program p;
        char dir[512], elf[600], ini[600];
        tb_rt_case c;
        tb_rt_result res;
        int rc;

        cr_assert_eq(tb_gen_make(&o, &p, err, sizeof err), 0, "%s", err);
        cr_expect_eq(tb_gen_hash(p.source), r->hash,
                     "gen_seeds.tsv line %u: seed %llu --isa %s --size %u generates another "
                     "program now (hash %016llx, the row has %016llx): the generator changed; "
                     "find a seed that shows the row's case again and update the row",
                     r->line, (unsigned long long)r->seed, tb_gen_isa_name(r->isa), r->size,
                     (unsigned long long)tb_gen_hash(p.source), (unsigned long long)r->hash);
        snprintf(dir, sizeof dir, "%s/row%zu", scratch, i);
        cr_assert_eq(tb_gen_write(&p, dir, err, sizeof err), 0, "%s", err);
        tb_gen_program_fini(&p);
        cr_assert_eq(tb_gen_build(dir, cc, err, sizeof err), 0, "line %u: %s", r->line, err);
        snprintf(elf, sizeof elf, "%s/%s", dir, TB_GEN_ELF);
        snprintf(ini, sizeof ini, "%s/%s", dir, TB_GEN_SCENARIO);
        tb_rt_case_init(&c, r->protocol);
        c.program = elf;
        c.scenario = ini;
        c.name = "kept seed";
        c.formatted = !tb_protocol_is_port(r->protocol);
        cr_assert_eq(tb_rt_case_options(&c, r->options, err, sizeof err), 0, "%s", err);
        memset(&res, 0, sizeof res);
        rc = tb_rt_run(&c, &res, err, sizeof err);
        if (r->known) {
            cr_expect(rc < 0 || res.verdict != TB_RT_MATCH,
                      "gen_seeds.tsv line %u: seed %llu %s '%s' expects KNOWN:%s but MATCHES "
                      "now: the bug is fixed, change the row's expect to MATCH", r->line,
                      (unsigned long long)r->seed, tb_protocol_name(r->protocol), r->options,
                      r->cls);
        } else {
            cr_expect_eq(rc, 0, "line %u: %s", r->line, err);
            cr_expect_eq(res.verdict, TB_RT_MATCH, "gen_seeds.tsv line %u: seed %llu %s '%s': "
                         "%s\n%s", r->line, (unsigned long long)r->seed,
                         tb_protocol_name(r->protocol), r->options,
                         tb_rt_verdict_name(res.verdict), res.report);
            cr_expect_eq(res.sim.stop, TB_SIM_STOP_EXIT, "line %u: did not reach _exit", r->line);
        }
    }
    free(rows);
}

/* `tracebench gen`: the files, the same bytes for the same seed, and
 * clear errors with the documented exit codes. */
Test(gen, command_line, .init = scratch_init, .fini = scratch_fini)
{
    char args[1024], *out, *err, *a, *b;
    int st;
    const char *cc = tb_test_arm_cc("gen.command_line");

    snprintf(args, sizeof args, "gen --seed 5 --isa thumb --size 4 --no-build -o %s/a", scratch);
    st = tb_test_run_cli(args, NULL, &out, NULL, &err);
    cr_expect_eq(st, 0, "%s", err);
    free(out);
    free(err);
    snprintf(args, sizeof args, "gen --seed 5 --isa thumb --size 4 --no-build -o %s/b", scratch);
    st = tb_test_run_cli(args, NULL, &out, NULL, &err);
    cr_expect_eq(st, 0, "%s", err);
    free(out);
    free(err);
    {
        char pa[600], pb[600];

        snprintf(pa, sizeof pa, "%s/a/gen.S", scratch);
        snprintf(pb, sizeof pb, "%s/b/gen.S", scratch);
        a = tb_test_slurp(pa, NULL);
        b = tb_test_slurp(pb, NULL);
        cr_expect_str_eq(a, b, "the same seed gave two sources");
        cr_expect(strstr(a, "--seed 5 --isa thumb --size 4"), "the source names its options");
        free(a);
        free(b);
        snprintf(pa, sizeof pa, "%s/a/gen.ini", scratch);
        a = tb_test_slurp(pa, NULL);
        cr_expect(strstr(a, "undef = allow") && strstr(a, "max_insns = "), "%s", a);
        free(a);
        snprintf(pa, sizeof pa, "%s/a/gen.ld", scratch);
        a = tb_test_slurp(pa, NULL);
        cr_expect(strstr(a, "ENTRY(_reset)"), "%s", a);
        free(a);
    }
    if (cc) {
        char elf[600];

        snprintf(args, sizeof args, "gen --seed 5 -o %s/c", scratch);
        st = tb_test_run_cli(args, NULL, &out, NULL, &err);
        cr_expect_eq(st, 0, "%s", err);
        cr_expect(strstr(out, "tracebench roundtrip"), "no round-trip hint: %s", out);
        free(out);
        free(err);
        snprintf(elf, sizeof elf, "%s/c/gen.elf", scratch);
        cr_expect_eq(access(elf, R_OK), 0, "no %s", elf);
    }
    {
        static const struct { const char *args, *says; int st; } bad[] = {
            {"gen -o /tmp/x", "no --seed N", 2},
            {"gen --seed 1", "no -o DIR", 2},
            {"gen --seed one -o /tmp/x", "--seed one: give a number", 2},
            {"gen --seed 1 --isa risc -o /tmp/x", "use arm, thumb or mixed", 2},
            {"gen --seed 1 --size 0 -o /tmp/x", "give 1..", 2},
            {"gen --seed 1 --size 9999 -o /tmp/x", "give 1..", 2},
            {"gen --seed 1 --frob -o /tmp/x", "unknown option '--frob'", 2},
            {"gen --seed 1 -o /nonexistent/dir/x", "cannot create directory", 4},
        };

        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            st = tb_test_run_cli(bad[i].args, NULL, &out, NULL, &err);
            cr_expect_eq(st, bad[i].st, "%s: exit %d", bad[i].args, st);
            cr_expect(strstr(err, bad[i].says), "%s: stderr lacks '%s': %s", bad[i].args,
                      bad[i].says, err);
            free(out);
            free(err);
        }
    }
    /* No compiler: the message names the Debian package. */
    snprintf(args, sizeof args, "gen --seed 1 --cc /nonexistent/arm-gcc -o %s/d", scratch);
    st = tb_test_run_cli(args, NULL, &out, NULL, &err);
    cr_expect_eq(st, 4);
    cr_expect(strstr(err, "gcc-arm-none-eabi"), "%s", err);
    free(out);
    free(err);
    /* --help on stdout, exit 0. */
    st = tb_test_run_cli("gen --help", NULL, &out, NULL, &err);
    cr_expect_eq(st, 0);
    cr_expect(strstr(out, "usage: tracebench gen"), "%s", out);
    free(out);
    free(err);
}
