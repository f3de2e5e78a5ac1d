/*
 * The round-trip comparator and runner (roundtrip.h).
 *
 * - Fault injection: one address bit flipped in one branch packet, one
 *   atom dropped from one atom packet, on real runs of the vector
 *   programs; the comparator must report the first divergence readably
 *   (what differed, the last 8 instructions of truth and of decode, the
 *   packet offset, the configuration), and the same case without the
 *   fault must match.
 * - The comparison rules on hand-made records and elements: cancelled
 *   instructions, exceptions, filter gaps, overflow resume points,
 *   timestamps, E/N.
 * - The truth text form reads back to the records it was written from.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tb_test.h"
#include "tracebench/roundtrip.h"

static char elf_path[1024], ini_path[1024];

static void program(tb_rt_case *c, const char *name, tb_protocol p)
{
    tb_rt_case_init(c, p);
    snprintf(elf_path, sizeof elf_path, "%s/vectors/programs/%s.elf", TB_BINARY_DIR, name);
    snprintf(ini_path, sizeof ini_path, "%s/vectors/programs/%s.ini", TB_SOURCE_DIR, name);
    c->name = name;
    c->program = elf_path;
    c->scenario = ini_path;
}

static void run(const tb_rt_case *c, tb_rt_result *res)
{
    char err[512];
    int rc = tb_rt_run(c, res, err, sizeof err);

    cr_assert_eq(rc, 0, "%s: %s", tb_err_str(rc), err);
}

/* The report's fixed parts, whatever the fault. */
static void check_report(const tb_rt_result *res)
{
    const char *r = res->report;

    cr_assert(!res->match);
    cr_assert(strncmp(r, "MISMATCH: ", 10) == 0, "%s", r);
    cr_assert(strstr(r, "  at packet offset "), "%s", r);
    cr_assert(strstr(r, "  configuration: "), "%s", r);
    cr_assert(strstr(r, "ETMCR=0x"), "%s", r);
    cr_assert(strstr(r, "  truth, the last 8 instructions matched:\n"), "%s", r);
    cr_assert(strstr(r, "  decode, the last 8 instructions:\n"), "%s", r);
}

static void addr_bit_case(tb_protocol p, bool formatted)
{
    tb_rt_case c;
    tb_rt_result res;
    unsigned dec, tru, bit = 4;
    unsigned long long seq;
    char di[8], ti[8];
    const char *m;

    program(&c, "funcptr", p);
    c.formatted = formatted;
    run(&c, &res);
    cr_assert(res.match, "control run: %s", res.report);
    cr_assert_gt(res.cmp.checked, 400);

    c.fault = (tb_rt_fault){TB_RT_FAULT_ADDR_BIT, 3, (uint8_t)bit};
    run(&c, &res);
    cr_assert(res.fault_applied);
    check_report(&res);
    /* The decoder follows the corrupted target: the first divergence is
     * exactly the truth's instruction with that bit flipped. */
    m = strstr(res.report, "MISMATCH: decoded 0x");
    cr_assert(m, "%s", res.report);
    cr_assert_eq(sscanf(m, "MISMATCH: decoded 0x%x %7s truth #%llu is 0x%x %7s", &dec, di, &seq,
                        &tru, ti), 5, "%s", res.report);
    cr_assert_eq(dec, tru ^ (1u << bit), "%s", res.report);
    cr_assert_str_eq(di, "T32,");
    cr_assert_str_eq(ti, "T32");
    cr_assert_eq(res.cmp.checked, seq, "matched up to the divergence");
}

Test(roundtrip, flipped_address_bit_is_caught_ptm)
{
    addr_bit_case(TB_PROTO_PTM, true);
}

Test(roundtrip, flipped_address_bit_is_caught_etmv3)
{
    addr_bit_case(TB_PROTO_ETMV3, false);
}

static void drop_atom_case(tb_protocol p, const char *opts)
{
    tb_rt_case c;
    tb_rt_result res;
    char err[256];

    program(&c, "recursion", p);
    cr_assert_eq(tb_rt_case_options(&c, opts, err, sizeof err), 0, "%s", err);
    run(&c, &res);
    cr_assert(res.match, "control run: %s", res.report);
    c.fault = (tb_rt_fault){TB_RT_FAULT_DROP_ATOM, 10, 0};
    run(&c, &res);
    cr_assert(res.fault_applied);
    check_report(&res);
    /* Nothing after the dropped atom may be taken as matching for long:
     * the divergence comes before the run's end. */
    cr_assert_lt(res.cmp.checked, res.sim.insns);
}

Test(roundtrip, dropped_atom_is_caught_ptm)
{
    drop_atom_case(TB_PROTO_PTM, "");
}

Test(roundtrip, dropped_atom_is_caught_etmv3_cycle_accurate)
{
    drop_atom_case(TB_PROTO_ETMV3, "ca");
}

/* Issue 23: ETMv1 cycle-accurate round trips against the emulator's
 * truth at each port width: exceptions (svc; faults, with a data abort;
 * irq_fiq under the storm, back to back) and a last instruction whose
 * address is still draining from the FIFO (thumb_basic, 4-bit port).
 * All failed on cycle totals before (docs/etmv1.md 7). */
Test(roundtrip, etmv1_cycle_accurate_exceptions_and_ends)
{
    static const char *const progs[] = {"svc", "faults", "irq_fiq", "thumb_basic"};
    static const char *const opts[] = {"ca,port=4", "ca,port=8", "ca,port=16"};
    char storm[1024], err[256];

    snprintf(storm, sizeof storm, "%s/vectors/scenarios/irq_fiq.storm.ini", TB_SOURCE_DIR);
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++)
        for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
            tb_rt_case c;
            tb_rt_result res;

            program(&c, progs[i], TB_PROTO_ETMV1);
            c.formatted = false; /* a port capture (docs/etmv1.md 7) */
            if (!strcmp(progs[i], "irq_fiq"))
                c.scenario = storm;
            cr_assert_eq(tb_rt_case_options(&c, opts[k], err, sizeof err), 0, "%s", err);
            run(&c, &res);
            cr_assert(res.match, "%s %s: %s", progs[i], opts[k], res.report);
            cr_assert_gt(res.cmp.cycle_checks, 0, "%s %s", progs[i], opts[k]);
            cr_assert_gt(res.cmp.checked, 10, "%s %s", progs[i], opts[k]);
            if (strcmp(progs[i], "thumb_basic"))
                cr_assert_gt(res.cmp.exceptions, 0, "%s %s", progs[i], opts[k]);
        }
}

/* Issue 29, found by the generator (seed 250, etmv3 ts,tsper=40): a
 * periodic timestamp requested at an instruction an exception then
 * cancels went out between that instruction's atom and the exception's
 * branch packet, so the decoder, which holds the last range back only
 * until a packet other than a branch comes (as OpenCSD does,
 * protocol-notes 4, "ETMv3 cancel support"), had already shown it: the
 * cancelled undefined instruction or aborted load appeared and the
 * exception was flagged.  Every timestamp period from 1 (a timestamp
 * after every instruction, so at each cancelled one) on the programs
 * with cancelled instructions. */
Test(roundtrip, periodic_timestamp_at_a_cancelled_instruction)
{
    static const char *const progs[] = {"faults", "cancel_single", "svc", "irq_fiq"};
    static const tb_protocol protos[] = {TB_PROTO_ETMV3, TB_PROTO_PTM};
    char err[256], opts[64];

    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++)
        for (size_t k = 0; k < 2; k++)
            for (unsigned per = 1; per <= 8; per++) {
                tb_rt_case c;
                tb_rt_result res;

                program(&c, progs[i], protos[k]);
                snprintf(opts, sizeof opts, "ts,tsper=%u%s", per, per % 2 ? ",ca" : "");
                cr_assert_eq(tb_rt_case_options(&c, opts, err, sizeof err), 0, "%s", err);
                run(&c, &res);
                cr_expect(res.match, "%s %s %s: %s", progs[i], tb_protocol_name(protos[k]),
                          opts, res.report);
                cr_expect_gt(res.cmp.timestamps, 0, "%s %s", progs[i], opts);
            }
}

/* Any chunking of the decode side gives the same verdict and counts. */
Test(roundtrip, chunking_does_not_matter)
{
    static const size_t chunks[] = {0, 1, 3, 16, 4096};
    uint64_t checked = 0;

    for (size_t k = 0; k < 2; k++) {
        for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
            tb_rt_case c;
            tb_rt_result res;
            char err[256];

            program(&c, "irq_fiq", k ? TB_PROTO_ETMV3 : TB_PROTO_PTM);
            cr_assert_eq(tb_rt_case_options(&c, "ca,ts,sync=64", err, sizeof err), 0);
            c.chunk = chunks[i];
            c.formatted = i % 2;
            run(&c, &res);
            cr_assert(res.match, "%s", res.report);
            if (i == 0)
                checked = res.cmp.checked;
            cr_assert_eq(res.cmp.checked, checked);
            cr_assert_eq(res.cmp.exceptions, 6);
        }
    }
}

/* Issue 29, generated seed 155 (`ctxid=4,fifo=48:1/8`, PTM and ETMv3):
 * ctx_switch writes CONTEXTIDR while a 48-byte FIFO drained at one byte
 * per 16 cycles overflows, so the context changes inside the gap and the
 * overflow I-sync carries the new one (IHI0014Q 7.10.5; IHI0035B 4.5,
 * protocol-notes 3.4).  The encoder told the round trip where it resumed
 * (tb_compare_mark_resume, from its packet callback) only after the
 * I-sync's bytes had reached the decoder, which had already shown its
 * CONTEXT: the comparator, knowing no resume point yet, checked it
 * against the context before the gap.  Raw bytes reach the decoder packet
 * by packet (it failed for both protocols); CoreSight frames only when a
 * frame fills (PTM failed, ETMv3 by luck not). */
Test(roundtrip, context_changed_inside_an_overflow_gap)
{
    static const tb_protocol protos[] = {TB_PROTO_PTM, TB_PROTO_ETMV3};

    for (size_t k = 0; k < 2; k++)
        for (int formatted = 0; formatted < 2; formatted++) {
            tb_rt_case c;
            tb_rt_result res;
            char err[256];

            program(&c, "ctx_switch", protos[k]);
            cr_assert_eq(tb_rt_case_options(&c, "ctxid=4,fifo=48:1/16", err, sizeof err), 0,
                         "%s", err);
            c.formatted = formatted;
            run(&c, &res);
            cr_expect(res.match, "%s %s: %s", tb_protocol_name(protos[k]),
                      formatted ? "coresight" : "raw", res.report);
            /* The case is the one it claims: trace was lost and resumed,
             * and the decode went on to the end after it. */
            cr_expect_gt(res.resumes, 0, "%s: no overflow", tb_protocol_name(protos[k]));
            cr_expect_gt(res.cmp.untraced, 0, "%s: nothing lost", tb_protocol_name(protos[k]));
            cr_expect_gt(res.cmp.checked, 600, "%s", tb_protocol_name(protos[k]));
        }
}

/* ViewInst over irq_fiq's nesting loop only (irq_nest_point up to
 * fiq_handler), under the storm scenario: the first IRQ (in main) is
 * taken with trace off and never shown; the next IRQ, of the same kind,
 * arrives at irq_nest_point with trace still off, but its preferred
 * return is traced, so PTM shows it as an I-sync there and the exception
 * (IHI0035B 5.2.3), and the FIQ at the IRQ vector right after it with
 * trace now on; six later IRQs and FIQs are taken inside the loop with
 * trace on.  ETMv3 shows only those six.  With ctxid the I-sync's
 * context comes before the exception it carries. */
Test(roundtrip, filter_trace_off_exception_before_a_shown_one_of_the_same_kind)
{
    static const char *const extra[] = {"", ",ca", ",ctxid=4"};
    char opts[96], err[256];
    uint32_t lo, hi;
    tb_scenario sc;
    tb_sim *s;

    tb_scenario_init(&sc);
    s = tb_sim_new(sc.cpu);
    cr_assert_not_null(s);
    snprintf(elf_path, sizeof elf_path, "%s/vectors/programs/irq_fiq.elf", TB_BINARY_DIR);
    cr_assert_eq(tb_sim_load_elf_file(s, elf_path), 0);
    cr_assert_eq(tb_sim_symbol(s, "irq_nest_point", &lo), 0);
    cr_assert_eq(tb_sim_symbol(s, "fiq_handler", &hi), 0);
    tb_sim_free(s);
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
            tb_rt_case c;
            tb_rt_result res;

            program(&c, "irq_fiq", k ? TB_PROTO_ETMV3 : TB_PROTO_PTM);
            snprintf(ini_path, sizeof ini_path, "%s/vectors/scenarios/irq_fiq.storm.ini",
                     TB_SOURCE_DIR);
            c.scenario = ini_path;
            snprintf(opts, sizeof opts, "include=0x%x-0x%x%s", lo, hi, extra[i]);
            cr_assert_eq(tb_rt_case_options(&c, opts, err, sizeof err), 0, "%s", err);
            run(&c, &res);
            cr_assert(res.match, "%s %s: %s", k ? "etmv3" : "ptm", opts, res.report);
            cr_assert_gt(res.cmp.checked, 100);
            cr_assert_eq(res.cmp.checked, res.enc.traced);
            cr_assert_gt(res.cmp.untraced, 100);
            /* Six taken with trace on; PTM adds the IRQ at irq_nest_point
             * and the FIQ at the vector after it. */
            cr_assert_eq(res.cmp.exceptions, k ? 6 : 8, "%s %s", k ? "etmv3" : "ptm", opts);
        }
    }
}

/* ---- the rules, on hand-made streams ---- */

static tb_exec_record insn(uint64_t seq, uint32_t addr, uint8_t flags)
{
    tb_exec_record r = {.kind = TB_REC_INSN, .seq = seq, .cycle = seq * 2};

    r.u.insn.addr = addr;
    r.u.insn.next_addr = addr + 4;
    r.u.insn.size = 4;
    r.u.insn.isa = TB_ISA_ARM;
    r.u.insn.next_isa = TB_ISA_ARM;
    r.u.insn.flags = flags;
    return r;
}

static tb_exec_record exc(uint64_t seq, tb_exc_kind k, uint32_t ret, bool cancelled)
{
    tb_exec_record r = {.kind = TB_REC_EXCEPTION, .seq = seq, .cycle = seq * 2 + 1};

    r.u.exc.kind = (uint8_t)k;
    r.u.exc.pref_return = ret;
    r.u.exc.cancelled = cancelled;
    r.u.exc.vector = 0x18;
    return r;
}

static tb_element range(uint32_t start, uint32_t n, uint32_t n_bits)
{
    tb_element e = {.kind = TB_ELEM_INSN_RANGE, .start = start, .end = start + 4 * n,
                    .count = n, .isa = TB_ISA_ARM, .last_addr = start + 4 * (n - 1),
                    .last_size = 4, .last_atom = 'E', .atom_bits = n_bits};
    return e;
}

static int feed_range(tb_compare *c, uint32_t start, uint32_t n, uint32_t n_bits)
{
    uint32_t a[32];
    tb_element e = range(start, n, n_bits);

    for (uint32_t i = 0; i < n; i++)
        a[i] = start + 4 * i;
    return tb_compare_element(c, &e, a);
}

static tb_compare *etm(const char *opts)
{
    tb_encoder_opts o;
    char err[128];

    tb_encoder_opts_init(&o, TB_PROTO_ETMV3);
    cr_assert_eq(tb_encoder_opts_parse(&o, opts, err, sizeof err), 0, "%s", err);
    return tb_compare_new(&o, "hand-made");
}

Test(compare, cancelled_instruction_must_not_appear)
{
    tb_compare *c = etm("");
    tb_exec_record t[] = {insn(0, 0x1000, 0), insn(1, 0x1004, 0),
                          exc(2, TB_EXC_IRQ, 0x1004, true), insn(2, 0x18, 0),
                          {.kind = TB_REC_END, .seq = 3}};
    tb_element x = {.kind = TB_ELEM_EXCEPTION, .exc_num = 14, .pref_return = 0x1004};

    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(tb_compare_truth(c, &t[i]), 0);
    cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
    cr_assert_eq(tb_compare_element(c, &x, NULL), 0, "%s", tb_compare_report(c));
    cr_assert_eq(feed_range(c, 0x18, 1, 0), 0);
    cr_assert_eq(tb_compare_finish(c), 0);
    cr_assert_eq(tb_compare_get_stats(c)->cancelled, 1);
    cr_assert_eq(tb_compare_get_stats(c)->checked, 2);
    tb_compare_free(c);

    /* Showing the cancelled instruction is a divergence. */
    c = etm("");
    for (size_t i = 0; i < 5; i++)
        tb_compare_truth(c, &t[i]);
    cr_assert_eq(feed_range(c, 0x1000, 2, 0), TB_ERR_MISMATCH);
    cr_assert(strstr(tb_compare_report(c), "decoded 0x00001004 A32 where the truth takes "
                                           "exception 14 (return 0x00001004)"),
              "%s", tb_compare_report(c));
    tb_compare_free(c);
}

/* Issue 29, found by the generator (seeds 96, 174, 295: etmv3 ca, ca,dual,
 * v=2,ca): a cancelled instruction's cycles may sit in the range before
 * it (its atom's W's were spent, protocol-notes 2.7), and the check
 * looked for the cancelled instruction right after the range's last
 * one, so a context change between them (an MCR to CONTEXTIDR just
 * before an undefined instruction) made it compare one guess only and
 * report the total off by the cancelled instruction's cycles. */
Test(compare, cancelled_cycles_after_a_context_change)
{
    for (int ctx = 0; ctx < 2; ctx++) {
        tb_compare *c = etm("ca");
        tb_exec_record t[8];
        size_t n = 0;
        tb_element r1 = range(0x1000, 2, 0), r2 = range(0x2000, 1, 0);
        tb_element x = {.kind = TB_ELEM_EXCEPTION, .exc_num = 9, .pref_return = 0x2004,
                        .cancelled = true};
        uint32_t a1[] = {0x1000, 0x1004}, a2[] = {0x2000}, a3[] = {0x4};

        t[n++] = insn(0, 0x1000, 0);                       /* cycle 0 */
        t[n++] = insn(1, 0x1004, 0);                       /* cycle 2 */
        t[n++] = insn(2, 0x2000, 0);                       /* cycle 4 */
        if (ctx)
            t[n++] = (tb_exec_record){.kind = TB_REC_CONTEXT, .seq = 3, .cycle = 4,
                                      .u.ctx = {.context_id = 0x1234}};
        t[n++] = insn(3, 0x2004, 0);                       /* cycle 6, cancelled */
        t[n] = exc(4, TB_EXC_UNDEF, 0x2004, true);         /* cycle 9 */
        t[n].u.exc.vector = 0x4;
        n++;
        t[n] = insn(4, 0x4, 0);
        t[n++].cycle = 12;
        t[n++] = (tb_exec_record){.kind = TB_REC_END, .seq = 5, .cycle = 12};
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(tb_compare_truth(c, &t[i]), 0);
        r1.has_cc = r2.has_cc = true;
        r1.cc = 3;  /* the count starts here: truth cycle 2 */
        r2.cc = 4;  /* 0x2000 and the cancelled 0x2004's W: to cycle 6 */
        cr_assert_eq(tb_compare_element(c, &r1, a1), 0, "%s", tb_compare_report(c));
        cr_assert_eq(tb_compare_element(c, &r2, a2), 0, "%s context %d: %s", "range 2", ctx,
                     tb_compare_report(c));
        cr_assert_eq(tb_compare_get_stats(c)->cycle_checks, 1, "context %d", ctx);
        cr_assert_eq(tb_compare_element(c, &x, NULL), 0, "%s", tb_compare_report(c));
        {
            tb_element r3 = range(0x4, 1, 0);

            r3.has_cc = true;
            r3.cc = 6; /* to cycle 12 */
            cr_assert_eq(tb_compare_element(c, &r3, a3), 0, "%s", tb_compare_report(c));
        }
        cr_assert_eq(tb_compare_finish(c), 0, "%s", tb_compare_report(c));
        tb_compare_free(c);
    }
}

Test(compare, wrong_exception_and_wrong_atom)
{
    tb_compare *c = etm("");
    tb_exec_record t[] = {insn(0, 0x1000, TB_INSN_COND_FAILED), exc(1, TB_EXC_SVC, 0x1004, false)};
    tb_element x = {.kind = TB_ELEM_EXCEPTION, .exc_num = 14, .pref_return = 0x1004};
    char want[160];

    tb_compare_truth(c, &t[0]);
    tb_compare_truth(c, &t[1]);
    cr_assert_eq(feed_range(c, 0x1000, 1, 1), 0, "%s", tb_compare_report(c));
    cr_assert_eq(tb_compare_element(c, &x, NULL), TB_ERR_MISMATCH);
    snprintf(want, sizeof want, "decoded exception 14 return 0x00001004, truth #1 is "
             "exception %d return 0x00001004", tb_exc_trace_number(TB_EXC_SVC));
    cr_assert(strstr(tb_compare_report(c), want), "%s", tb_compare_report(c));
    /* Sticky: nothing after the first divergence changes the report. */
    cr_assert_eq(feed_range(c, 0x2000, 1, 0), TB_ERR_MISMATCH);
    tb_compare_free(c);

    c = etm("");
    tb_compare_truth(c, &t[0]);
    cr_assert_eq(feed_range(c, 0x1000, 1, 0), TB_ERR_MISMATCH);
    cr_assert(strstr(tb_compare_report(c), "decoded 0x00001000 A32 E, truth #0 executed it N"),
              "%s", tb_compare_report(c));
    tb_compare_free(c);
}

/* The security state of every instruction: the truth's state records
 * against the decoder's context elements (roundtrip.h). */
Test(compare, security_state_of_each_instruction)
{
    tb_exec_record t[] = {insn(0, 0x1000, 0), insn(1, 0x1004, TB_INSN_EXC_RETURN),
                          {.kind = TB_REC_STATE, .seq = 2}, insn(2, 0x2000, 0),
                          {.kind = TB_REC_END, .seq = 3}};
    tb_element ns = {.kind = TB_ELEM_CONTEXT, .ns = true};
    tb_compare *c;

    t[2].u.state.ns = true;
    for (int pass = 0; pass < 3; pass++) {
        c = etm("");
        for (size_t i = 0; i < 5; i++)
            cr_assert_eq(tb_compare_truth(c, &t[i]), 0);
        if (pass == 1) {
            /* The change shown one instruction early. */
            cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
            cr_assert_eq(tb_compare_element(c, &ns, NULL), 0);
            cr_assert_eq(feed_range(c, 0x1004, 1, 0), TB_ERR_MISMATCH);
            cr_assert(strstr(tb_compare_report(c), "decoded 0x00001004 A32 in Non-secure "
                                                   "state, truth #1 ran it Secure"),
                      "%s", tb_compare_report(c));
            tb_compare_free(c);
            continue;
        }
        cr_assert_eq(feed_range(c, 0x1000, 2, 0), 0, "%s", tb_compare_report(c));
        if (pass == 0) {
            cr_assert_eq(tb_compare_element(c, &ns, NULL), 0, "%s", tb_compare_report(c));
            cr_assert_eq(feed_range(c, 0x2000, 1, 0), 0, "%s", tb_compare_report(c));
            cr_assert_eq(tb_compare_finish(c), 0);
        } else {
            /* Not shown at all. */
            cr_assert_eq(feed_range(c, 0x2000, 1, 0), TB_ERR_MISMATCH);
            cr_assert(strstr(tb_compare_report(c), "decoded 0x00002000 A32 in Secure state, "
                                                   "truth #2 ran it Non-secure"),
                      "%s", tb_compare_report(c));
        }
        tb_compare_free(c);
    }
}

Test(compare, filter_gap_needs_a_gap_element)
{
    tb_compare *c = etm("include=0x1000-0x1008");
    tb_exec_record t[] = {insn(0, 0x1000, 0), insn(1, 0x1004, 0), insn(2, 0x2000, 0),
                          insn(3, 0x2004, 0), insn(4, 0x1000, 0)};
    tb_element on = {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_TRACE_ON};

    for (size_t i = 0; i < 5; i++)
        tb_compare_truth(c, &t[i]);
    cr_assert_eq(feed_range(c, 0x1000, 2, 0), 0);
    cr_assert_eq(feed_range(c, 0x1000, 1, 0), TB_ERR_MISMATCH);
    cr_assert(strstr(tb_compare_report(c), "outside the filter, with no gap element"), "%s",
              tb_compare_report(c));
    tb_compare_free(c);

    c = etm("include=0x1000-0x1008");
    for (size_t i = 0; i < 5; i++)
        tb_compare_truth(c, &t[i]);
    cr_assert_eq(feed_range(c, 0x1000, 2, 0), 0);
    cr_assert_eq(tb_compare_element(c, &on, NULL), 0);
    cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
    cr_assert_eq(tb_compare_finish(c), 0);
    cr_assert_eq(tb_compare_get_stats(c)->untraced, 2);
    tb_compare_free(c);
}

Test(compare, overflow_resumes_exactly_where_the_encoder_did)
{
    tb_exec_record t[6];
    tb_element ov = {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_OVERFLOW};

    for (unsigned i = 0; i < 6; i++)
        t[i] = insn(i, 0x1000 + 4 * i, 0);
    for (int wrong = 0; wrong < 2; wrong++) {
        tb_compare *c = etm("");

        for (unsigned i = 0; i < 6; i++) {
            tb_compare_truth(c, &t[i]);
            if (i == 4)
                tb_compare_mark_resume(c); /* names record 3: one behind */
        }
        cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
        cr_assert_eq(tb_compare_element(c, &ov, NULL), 0);
        if (!wrong) {
            cr_assert_eq(feed_range(c, 0x100c, 3, 0), 0, "%s", tb_compare_report(c));
            cr_assert_eq(tb_compare_finish(c), 0);
            cr_assert_eq(tb_compare_get_stats(c)->untraced, 2);
        } else {
            cr_assert_eq(feed_range(c, 0x1008, 1, 0), TB_ERR_MISMATCH);
            cr_assert(strstr(tb_compare_report(c), "decoded 0x00001008 A32, truth #3 is "
                                                   "0x0000100c A32"),
                      "%s", tb_compare_report(c));
        }
        tb_compare_free(c);
    }
}

/* Issue 29, found by the generator (ETMv3 fifo=64:1/4,ca,ts, data trace
 * with out-of-order loads and a FIFO; PTM fifo=48:1/64): the overflow
 * I-sync names a load that a data abort then cancels (its E atom, then
 * the exception with Cancel), so the abort is the first thing the
 * decoder shows after the gap; the comparator accepted that only for the
 * trace ports and, for ETMv3 and PTM, left the exception to be called
 * missing at the vector's first instruction. */
Test(compare, overflow_resume_at_an_instruction_an_exception_cancels)
{
    static const tb_protocol protos[] = {TB_PROTO_ETMV3, TB_PROTO_PTM, TB_PROTO_ETMV1};

    for (size_t k = 0; k < 3; k++) {
        tb_encoder_opts o;
        tb_compare *c;
        tb_exec_record t[8];
        tb_element ov = {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_OVERFLOW};
        tb_element x = {.kind = TB_ELEM_EXCEPTION, .exc_num = 12, .pref_return = 0x1008,
                        .cancelled = true};
        char err[64];

        tb_encoder_opts_init(&o, protos[k]);
        cr_assert_eq(tb_encoder_opts_parse(&o, "", err, sizeof err), 0, "%s", err);
        c = tb_compare_new(&o, "hand-made");
        /* PTM traces no cancelled instruction, so its exception packet
         * carries no Cancel (protocol-notes 1, "Exception entry"): the
         * return address alone, the I-sync's, says it. */
        x.cancelled = protos[k] != TB_PROTO_PTM;
        for (unsigned i = 0; i < 3; i++)
            t[i] = insn(i, 0x1000 + 4 * i, 0);
        t[3] = exc(3, TB_EXC_DATA_ABORT, 0x1008, true);
        t[3].u.exc.vector = 0x10;
        t[4] = insn(3, 0x10, 0);
        t[5] = insn(4, 0x14, 0);
        t[6] = (tb_exec_record){.kind = TB_REC_END, .seq = 5};
        for (unsigned i = 0; i < 7; i++) {
            tb_compare_truth(c, &t[i]);
            if (i == 3)
                tb_compare_mark_resume(c); /* the encoder, one behind: 0x1008 */
        }
        cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
        cr_assert_eq(tb_compare_element(c, &ov, NULL), 0);
        cr_assert_eq(tb_compare_element(c, &x, NULL), 0, "%s", tb_compare_report(c));
        cr_assert_eq(feed_range(c, 0x10, 2, 0), 0, "%s: %s", tb_protocol_name(protos[k]),
                     tb_compare_report(c));
        cr_assert_eq(tb_compare_finish(c), 0, "%s", tb_compare_report(c));
        cr_assert_eq(tb_compare_get_stats(c)->exceptions, 1);
        cr_assert_eq(tb_compare_get_stats(c)->untraced, 1, "0x1004 was lost");
        tb_compare_free(c);
    }
}

/* Issue 29: a resume that is lost again before anything was shown is
 * speculative (IHI0014Q 5.9: a second BE marked as FIFO overflow
 * overrides the first): the decoder shows two overflow gaps and resumes
 * at the second point, which the comparator must take, not the first. */
Test(compare, a_second_resume_before_anything_shown_discards_the_first)
{
    tb_exec_record t[8];
    tb_element ov = {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_OVERFLOW};

    for (unsigned i = 0; i < 8; i++)
        t[i] = insn(i, 0x1000 + 4 * i, 0);
    for (int marks = 0; marks <= 2; marks++) {
        tb_compare *c = etm("");

        for (unsigned i = 0; i < 8; i++) {
            tb_compare_truth(c, &t[i]);
            if ((i == 3 && marks) || (i == 6 && marks == 2))
                tb_compare_mark_resume(c); /* names records 2 and 5 */
        }
        cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
        cr_assert_eq(tb_compare_element(c, &ov, NULL), 0);
        if (marks == 2) {
            cr_assert_eq(tb_compare_element(c, &ov, NULL), 0, "%s", tb_compare_report(c));
            cr_assert_eq(feed_range(c, 0x1014, 3, 0), 0, "%s", tb_compare_report(c));
            cr_assert_eq(tb_compare_finish(c), 0, "%s", tb_compare_report(c));
            cr_assert_eq(tb_compare_get_stats(c)->untraced, 4);
        } else if (marks == 0) {
            cr_assert_eq(tb_compare_element(c, &ov, NULL), TB_ERR_MISMATCH);
            cr_assert(strstr(tb_compare_report(c), "a second time with nothing shown"), "%s",
                      tb_compare_report(c));
        } else {
            /* Two resumes decoded, the encoder made one: the first is
             * used up by the second, and the decode resumes nowhere. */
            cr_assert_eq(tb_compare_element(c, &ov, NULL), 0, "%s", tb_compare_report(c));
            cr_assert_eq(feed_range(c, 0x1014, 3, 0), TB_ERR_MISMATCH);
            cr_assert(strstr(tb_compare_report(c), "the encoder resumed nowhere ahead"), "%s",
                      tb_compare_report(c));
            cr_assert_eq(tb_compare_element(c, &ov, NULL), TB_ERR_MISMATCH);
        }
        tb_compare_free(c);
    }
}

/* Issue 29, found by the generator (etmv1-data-ctxid-sync, seeds 17, 155,
 * 284; etmv2-data-ctxid-sync, seed 180; the same with ETMv3 and PTM and a
 * FIFO that overflows): a context ID changed inside an overflow gap.  The
 * restart carries the context current where trace resumes (an ETMv1
 * reason-2 address with its context ID, IHI0014Q 5.6.3; an ETMv2 TFO,
 * 6.5.4/6.5.7; an ETMv3 or PTM I-sync), and the decoder shows it as a
 * CONTEXT right after the TRACE_ON, before the comparator has skipped the
 * lost instructions: it compared it with the context before the gap. */
Test(compare, context_changed_inside_an_overflow_gap)
{
    static const tb_protocol protos[] = {TB_PROTO_ETMV1, TB_PROTO_ETMV2, TB_PROTO_ETMV3,
                                         TB_PROTO_PTM};

    for (size_t k = 0; k < 4; k++) {
        for (int which = 0; which < 3; which++) {
            tb_encoder_opts o;
            tb_compare *c;
            tb_exec_record t[7];
            tb_element ov = {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_OVERFLOW};
            /* which 0: the resume point's context (right); 1: the one
             * before the gap; 2: a change after the resume point */
            static const uint32_t shown[3] = {0x55, 0x11, 0x99};
            tb_element cx = {.kind = TB_ELEM_CONTEXT, .context_id = shown[which]};
            char err[64];
            int rc;

            tb_encoder_opts_init(&o, protos[k]);
            cr_assert_eq(tb_encoder_opts_parse(&o, "ctxid=4", err, sizeof err), 0, "%s", err);
            c = tb_compare_new(&o, "hand-made");
            t[0] = (tb_exec_record){.kind = TB_REC_CONTEXT, .u.ctx = {.context_id = 0x11}};
            t[1] = insn(0, 0x1000, 0);
            t[2] = insn(1, 0x1004, 0); /* lost in the gap, with the change after it */
            t[3] = (tb_exec_record){.kind = TB_REC_CONTEXT, .seq = 2, .cycle = 3,
                                    .u.ctx = {.context_id = 0x55}};
            t[4] = insn(2, 0x1008, 0); /* trace resumes here */
            t[5] = (tb_exec_record){.kind = TB_REC_CONTEXT, .seq = 3, .cycle = 5,
                                    .u.ctx = {.context_id = 0x99}};
            t[6] = insn(3, 0x100c, 0);
            for (unsigned i = 0; i < 7; i++) {
                cr_assert_eq(tb_compare_truth(c, &t[i]), 0);
                if (i == 5)
                    tb_compare_mark_resume(c); /* names 0x1008, one behind */
            }
            cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0, "%s", tb_compare_report(c));
            cr_assert_eq(tb_compare_element(c, &ov, NULL), 0);
            rc = tb_compare_element(c, &cx, NULL);
            if (which) {
                cr_assert_eq(rc, TB_ERR_MISMATCH, "%s: context 0x%x accepted",
                             tb_protocol_name(protos[k]), shown[which]);
                cr_assert(strstr(tb_compare_report(c), "after an overflow, the truth's where "
                                                       "trace resumed (0x00001008 A32) is "
                                                       "0x00000055"),
                          "%s", tb_compare_report(c));
            } else {
                cr_assert_eq(rc, 0, "%s: %s", tb_protocol_name(protos[k]),
                             tb_compare_report(c));
                cr_assert_eq(feed_range(c, 0x1008, 1, 0), 0, "%s", tb_compare_report(c));
                cx.context_id = 0x99;
                cr_assert_eq(tb_compare_element(c, &cx, NULL), 0, "%s", tb_compare_report(c));
                cr_assert_eq(feed_range(c, 0x100c, 1, 0), 0, "%s", tb_compare_report(c));
                cr_assert_eq(tb_compare_finish(c), 0, "%s", tb_compare_report(c));
                cr_assert_eq(tb_compare_get_stats(c)->untraced, 1, "0x1004 was lost");
                cr_assert_eq(tb_compare_get_stats(c)->contexts, 2);
            }
            tb_compare_free(c);
        }
    }
}

/* Issue 29, generated seeds 205, 349, 384 (PTM `ctxid=4,fifo=48:1/8`,
 * `ctxid=4,vmid,fifo=64:1/4,ca,ts`): a context change a few instructions
 * after the overflow I-sync's address, before its first waypoint.  PTM
 * sends the change at once and those instructions only with that
 * waypoint (protocol-notes 0.3), so a second CONTEXT follows the
 * I-sync's before anything is shown; the comparator accepted only the
 * resume point's context there.  ETMv3 gets no such look-ahead (the rule
 * outside a gap is PTM's only too). */
Test(compare, ptm_context_change_right_after_an_overflow_resume_point)
{
    static const tb_protocol protos[] = {TB_PROTO_PTM, TB_PROTO_ETMV3};

    for (size_t k = 0; k < 2; k++) {
        tb_encoder_opts o;
        tb_compare *c;
        tb_exec_record t[10];
        tb_element ov = {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_OVERFLOW};
        tb_element cx = {.kind = TB_ELEM_CONTEXT, .context_id = 0x55};
        char err[64];
        int rc;

        tb_encoder_opts_init(&o, protos[k]);
        cr_assert_eq(tb_encoder_opts_parse(&o, "ctxid=4", err, sizeof err), 0, "%s", err);
        c = tb_compare_new(&o, "hand-made");
        t[0] = (tb_exec_record){.kind = TB_REC_CONTEXT, .u.ctx = {.context_id = 0x11}};
        t[1] = insn(0, 0x1000, 0);
        t[2] = insn(1, 0x1004, 0); /* lost in the gap */
        t[3] = (tb_exec_record){.kind = TB_REC_CONTEXT, .seq = 2, .cycle = 3,
                                .u.ctx = {.context_id = 0x55}};
        t[4] = insn(2, 0x1008, 0); /* trace resumes here */
        t[5] = insn(3, 0x100c, 0);
        t[6] = (tb_exec_record){.kind = TB_REC_CONTEXT, .seq = 4, .cycle = 7,
                                .u.ctx = {.context_id = 0x99}};
        t[7] = insn(4, 0x1010, 0); /* the first waypoint after the resume point */
        t[7].u.insn.wp_class = TB_WP_DIRECT;
        t[8] = insn(5, 0x1014, 0);
        t[9] = (tb_exec_record){.kind = TB_REC_END, .seq = 6};
        for (unsigned i = 0; i < 10; i++) {
            cr_assert_eq(tb_compare_truth(c, &t[i]), 0);
            if (i == 5)
                tb_compare_mark_resume(c); /* names 0x1008, one behind */
        }
        cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0, "%s", tb_compare_report(c));
        cr_assert_eq(tb_compare_element(c, &ov, NULL), 0);
        cr_assert_eq(tb_compare_element(c, &cx, NULL), 0, "%s", tb_compare_report(c));
        cx.context_id = 0x99;
        rc = tb_compare_element(c, &cx, NULL);
        if (protos[k] == TB_PROTO_ETMV3) {
            cr_assert_eq(rc, TB_ERR_MISMATCH, "etmv3: the change ahead accepted");
        } else {
            cr_assert_eq(rc, 0, "%s", tb_compare_report(c));
            cr_assert_eq(feed_range(c, 0x1008, 4, 0), 0, "%s", tb_compare_report(c));
            cr_assert_eq(tb_compare_finish(c), 0, "%s", tb_compare_report(c));
            cr_assert_eq(tb_compare_get_stats(c)->contexts, 2);
            cr_assert_eq(tb_compare_get_stats(c)->untraced, 1, "0x1004 was lost");
        }
        tb_compare_free(c);
    }
}

/* Issue 29: trace resumes at an instruction an exception cancels, whose
 * exception the decoder shows without a cancelled flag (an ETMv1
 * undefined instruction reports no status, only its exception's BE,
 * docs/etmv1.md 4): that exception is the resume point's. */
Test(compare, resume_at_a_cancelled_instruction_shows_its_exception_first)
{
    tb_exec_record t[] = {insn(0, 0x1000, 0), insn(1, 0x1004, 0), insn(2, 0x1008, 0),
                          exc(3, TB_EXC_UNDEF, 0x1008, true), insn(3, 0x04, 0),
                          {.kind = TB_REC_END, .seq = 4}};
    tb_element ov = {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_OVERFLOW};
    tb_element x = {.kind = TB_ELEM_EXCEPTION, .exc_num = (uint16_t)tb_exc_trace_number(
                                                   TB_EXC_UNDEF), .pref_return = 0x1008};
    tb_encoder_opts o;
    tb_compare *c;

    tb_encoder_opts_init(&o, TB_PROTO_ETMV1);
    c = tb_compare_new(&o, "hand-made");
    for (size_t i = 0; i < 6; i++) {
        cr_assert_eq(tb_compare_truth(c, &t[i]), 0);
        if (i == 3)
            tb_compare_mark_resume(c); /* the marker at 0x1008 */
    }
    cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
    cr_assert_eq(tb_compare_element(c, &ov, NULL), 0);
    cr_assert_eq(tb_compare_element(c, &x, NULL), 0, "%s", tb_compare_report(c));
    cr_assert_eq(feed_range(c, 0x04, 1, 0), 0, "%s", tb_compare_report(c));
    cr_assert_eq(tb_compare_finish(c), 0, "%s", tb_compare_report(c));
    cr_assert_eq(tb_compare_get_stats(c)->exceptions, 1);
    tb_compare_free(c);
}

/* Issue 29: with data trace the truth has the transfers of a range's last
 * instruction between it and the cancelled instruction after it, whose
 * cycles the range may hold (its count reaches the cancelled one's
 * stamp): the check must look past them. */
Test(compare, a_range_before_a_cancelled_instruction_holds_its_cycles_past_data)
{
    tb_exec_record ld = insn(1, 0x1004, 0);
    tb_exec_record d = {.kind = TB_REC_DATA, .seq = 2, .cycle = 6};
    tb_exec_record t[6];
    tb_element dat = {.kind = TB_ELEM_DATA, .last_addr = 0x1004, .data_size = 4,
                      .data_addr = 0x8000, .data_value = 7};
    tb_element r0 = range(0x1000, 1, 0), r1 = range(0x1004, 1, 0);
    uint32_t a0 = 0x1000, a1 = 0x1004;
    tb_compare *c = etm("ca,data=both");

    ld.cycle = 6;
    d.u.data.addr = 0x8000;
    d.u.data.insn_addr = 0x1004;
    d.u.data.size = 4;
    d.u.data.value = 7;
    t[0] = insn(0, 0x1000, 0);
    t[1] = ld;
    t[2] = d;
    t[3] = insn(2, 0x1008, 0); /* cycle 4 + 3: stamps 0, 6, 9 */
    t[3].cycle = 9;
    t[4] = exc(3, TB_EXC_UNDEF, 0x1008, true);
    t[5] = insn(3, 0x04, 0);
    for (size_t i = 0; i < 6; i++)
        cr_assert_eq(tb_compare_truth(c, &t[i]), 0);
    r0.has_cc = r1.has_cc = true;
    r0.cc = 1; /* the first total starts the count */
    r1.cc = 9; /* up to the cancelled instruction's stamp: 6 + 3 */
    cr_assert_eq(tb_compare_element(c, &r0, &a0), 0, "%s", tb_compare_report(c));
    cr_assert_eq(tb_compare_element(c, &r1, &a1), 0, "%s", tb_compare_report(c));
    cr_assert_eq(tb_compare_element(c, &dat, NULL), 0, "%s", tb_compare_report(c));
    cr_assert_eq(tb_compare_get_stats(c)->cycle_checks, 1);
    tb_compare_free(c);
}

Test(compare, timestamps_are_cycle_stamps_that_never_go_back)
{
    tb_compare *c = etm("ts");
    tb_exec_record t[] = {insn(1, 0x1000, 0), insn(2, 0x1004, 0), insn(3, 0x1008, 0)};
    tb_element ts = {.kind = TB_ELEM_TIMESTAMP};

    for (size_t i = 0; i < 3; i++)
        tb_compare_truth(c, &t[i]);
    ts.ts = 4; /* cycle of record 2 */
    cr_assert_eq(tb_compare_element(c, &ts, NULL), 0);
    ts.ts = 2;
    cr_assert_eq(tb_compare_element(c, &ts, NULL), TB_ERR_MISMATCH);
    cr_assert(strstr(tb_compare_report(c), "timestamp 2 goes back from 4"), "%s",
              tb_compare_report(c));
    tb_compare_free(c);

    c = etm("ts");
    tb_compare_truth(c, &t[0]);
    ts.ts = 5;
    cr_assert_eq(tb_compare_element(c, &ts, NULL), TB_ERR_MISMATCH);
    tb_compare_free(c);
}

Test(compare, leftover_truth_is_reported_at_the_end)
{
    tb_compare *c = etm("");
    tb_exec_record t[] = {insn(0, 0x1000, 0), insn(1, 0x1004, 0)};

    tb_compare_truth(c, &t[0]);
    tb_compare_truth(c, &t[1]);
    cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
    cr_assert_eq(tb_compare_finish(c), TB_ERR_MISMATCH);
    cr_assert(strstr(tb_compare_report(c), "truth #1 (instruction 0x00001004)"), "%s",
              tb_compare_report(c));
    tb_compare_free(c);
}

static tb_compare *ptm(const char *opts)
{
    tb_encoder_opts o;
    char err[128];

    tb_encoder_opts_init(&o, TB_PROTO_PTM);
    cr_assert_eq(tb_encoder_opts_parse(&o, opts, err, sizeof err), 0, "%s", err);
    return tb_compare_new(&o, "hand-made");
}

/* ViewInst includes 0x1000-0x1100; the vector at 0x18 and the code at
 * 0x2000 are outside.  IRQ #2 is taken with trace off (after 0x2000) and
 * returns outside; IRQ #4 is taken with trace off too, but returns to
 * 0x1010, which is traced, so PTM shows it: I-sync at 0x1010 and the
 * exception (IHI0035B 5.2.3); IRQ #7 is taken with trace on (after
 * 0x1014), so the decoder must show it. */
static const tb_exec_record *irq_truth(size_t *n)
{
    static tb_exec_record t[12];

    t[0] = insn(0, 0x1000, 0);
    t[1] = insn(1, 0x2000, 0);
    t[2] = exc(2, TB_EXC_IRQ, 0x2004, false);
    t[3] = insn(2, 0x18, 0);
    t[4] = insn(3, 0x2004, 0);
    t[5] = exc(4, TB_EXC_IRQ, 0x1010, false);
    t[6] = insn(4, 0x18, 0);
    t[7] = insn(5, 0x1010, 0);
    t[8] = insn(6, 0x1014, 0);
    t[9] = exc(7, TB_EXC_IRQ, 0x1018, false);
    t[10] = insn(7, 0x18, 0);
    t[11] = (tb_exec_record){.kind = TB_REC_END, .seq = 8};
    *n = 12;
    return t;
}

static tb_compare *irq_case(const char *opts)
{
    tb_compare *c = ptm(opts);
    size_t n;
    const tb_exec_record *t = irq_truth(&n);

    for (size_t i = 0; i < n; i++)
        cr_assert_eq(tb_compare_truth(c, &t[i]), 0);
    return c;
}

static const tb_element trace_on = {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_TRACE_ON};

static int irq_elem(tb_compare *c, uint32_t ret)
{
    tb_element x = {.kind = TB_ELEM_EXCEPTION, .exc_num = 14, .pref_return = ret};

    return tb_compare_element(c, &x, NULL);
}

Test(compare, trace_off_exception_before_one_of_the_same_kind)
{
    tb_element ctx = {.kind = TB_ELEM_CONTEXT};
    tb_compare *c;

    /* PTM's decode: the trace-off IRQ #4 shown at trace-on, #2 not. */
    for (int with_ctx = 0; with_ctx < 2; with_ctx++) {
        c = irq_case(with_ctx ? "include=0x1000-0x1100,ctxid=4" : "include=0x1000-0x1100");
        cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
        cr_assert_eq(tb_compare_element(c, &trace_on, NULL), 0);
        /* The I-sync's context comes first: it must not use up #4. */
        if (with_ctx)
            cr_assert_eq(tb_compare_element(c, &ctx, NULL), 0, "%s", tb_compare_report(c));
        cr_assert_eq(irq_elem(c, 0x1010), 0, "%s", tb_compare_report(c));
        cr_assert_eq(tb_compare_element(c, &trace_on, NULL), 0);
        cr_assert_eq(feed_range(c, 0x1010, 2, 0), 0, "%s", tb_compare_report(c));
        cr_assert_eq(irq_elem(c, 0x1018), 0, "%s", tb_compare_report(c));
        cr_assert_eq(tb_compare_finish(c), 0, "%s", tb_compare_report(c));
        cr_assert_eq(tb_compare_get_stats(c)->exceptions, 2);
        cr_assert_eq(tb_compare_get_stats(c)->checked, 3);
        cr_assert_eq(tb_compare_get_stats(c)->untraced, 5);
        tb_compare_free(c);
    }

    /* Neither trace-off IRQ shown (ETMv3 never shows one): a gap, the
     * traced instructions and the trace-on IRQ. */
    c = irq_case("include=0x1000-0x1100");
    cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
    cr_assert_eq(tb_compare_element(c, &trace_on, NULL), 0);
    cr_assert_eq(feed_range(c, 0x1010, 2, 0), 0, "%s", tb_compare_report(c));
    cr_assert_eq(irq_elem(c, 0x1018), 0, "%s", tb_compare_report(c));
    cr_assert_eq(tb_compare_finish(c), 0, "%s", tb_compare_report(c));
    cr_assert_eq(tb_compare_get_stats(c)->exceptions, 1);
    tb_compare_free(c);
}

/* Still strict: a decoded exception must be a truth exception exactly. */
Test(compare, a_decoded_exception_still_matches_exactly)
{
    tb_compare *c;

    /* A wrong return address matches no trace-off IRQ. */
    c = irq_case("include=0x1000-0x1100");
    cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
    cr_assert_eq(tb_compare_element(c, &trace_on, NULL), 0);
    cr_assert_eq(irq_elem(c, 0x1014), TB_ERR_MISMATCH);
    cr_assert(strstr(tb_compare_report(c), "decoded exception 14 return 0x00001014, truth #"),
              "%s", tb_compare_report(c));
    tb_compare_free(c);

    /* ... nor the trace-on IRQ. */
    c = irq_case("include=0x1000-0x1100");
    cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
    cr_assert_eq(tb_compare_element(c, &trace_on, NULL), 0);
    cr_assert_eq(feed_range(c, 0x1010, 2, 0), 0, "%s", tb_compare_report(c));
    cr_assert_eq(irq_elem(c, 0x101c), TB_ERR_MISMATCH);
    cr_assert(strstr(tb_compare_report(c), "decoded exception 14 return 0x0000101c, truth #7 is "
                                           "exception 14 return 0x00001018\n"),
              "%s", tb_compare_report(c));
    tb_compare_free(c);

    /* A trace-off IRQ shown after the instructions that followed it: the
     * trace-on IRQ ahead may not be passed over to reach it. */
    c = irq_case("include=0x1000-0x1100");
    cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
    cr_assert_eq(tb_compare_element(c, &trace_on, NULL), 0);
    cr_assert_eq(feed_range(c, 0x1010, 2, 0), 0, "%s", tb_compare_report(c));
    cr_assert_eq(irq_elem(c, 0x1010), TB_ERR_MISMATCH);
    cr_assert(strstr(tb_compare_report(c), "truth #7 is exception 14 return 0x00001018"), "%s",
              tb_compare_report(c));
    tb_compare_free(c);
}

/* The report names the trace-off exception nearest to where trace came
 * on: the one PTM would show there. */
Test(compare, a_wrong_exception_at_trace_on_is_reported_against_the_nearest)
{
    tb_compare *c = irq_case("include=0x1000-0x1100");

    cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
    cr_assert_eq(tb_compare_element(c, &trace_on, NULL), 0);
    cr_assert_eq(irq_elem(c, 0x1014), TB_ERR_MISMATCH);
    cr_assert(strstr(tb_compare_report(c), "decoded exception 14 return 0x00001014, truth #4 is "
                                           "exception 14 return 0x00001010 (taken with trace "
                                           "off)"),
              "%s", tb_compare_report(c));
    tb_compare_free(c);
}

/* An exception taken with trace on is in the trace: its absence is a
 * divergence even where the decode ends (with trace off)... */
Test(compare, an_exception_taken_with_trace_on_is_never_skipped_at_the_end)
{
    tb_compare *c = irq_case("include=0x1000-0x1100");

    cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
    cr_assert_eq(tb_compare_element(c, &trace_on, NULL), 0);
    cr_assert_eq(feed_range(c, 0x1010, 2, 0), 0, "%s", tb_compare_report(c));
    cr_assert_eq(tb_compare_finish(c), TB_ERR_MISMATCH);
    cr_assert(strstr(tb_compare_report(c), "truth #7 (exception 0x00001018)"), "%s",
              tb_compare_report(c));
    tb_compare_free(c);
}

/* ... or where a gap follows it: the handler returns to 0x1018, and the
 * decode shows a gap and goes on there without the IRQ. */
Test(compare, an_exception_taken_with_trace_on_is_never_skipped_in_a_gap)
{
    tb_exec_record back = insn(8, 0x1018, 0);
    const tb_exec_record *t;
    tb_compare *c = ptm("include=0x1000-0x1100");
    size_t n;

    t = irq_truth(&n);
    for (size_t i = 0; i + 1 < n; i++)
        cr_assert_eq(tb_compare_truth(c, &t[i]), 0);
    cr_assert_eq(tb_compare_truth(c, &back), 0);
    cr_assert_eq(feed_range(c, 0x1000, 1, 0), 0);
    cr_assert_eq(tb_compare_element(c, &trace_on, NULL), 0);
    cr_assert_eq(feed_range(c, 0x1010, 2, 0), 0, "%s", tb_compare_report(c));
    cr_assert_eq(tb_compare_element(c, &trace_on, NULL), 0);
    cr_assert_eq(feed_range(c, 0x1018, 1, 0), TB_ERR_MISMATCH);
    cr_assert(strstr(tb_compare_report(c), "decoded 0x00001018 A32 where the truth takes "
                                           "exception 14 (return 0x00001018): the exception is "
                                           "missing"),
              "%s", tb_compare_report(c));
    tb_compare_free(c);
}

/* ---- truth text ---- */

typedef struct reread {
    unsigned n, kinds[8];
} reread;

static int reparse(void *ctx, const tb_exec_record *r)
{
    reread *rr = ctx;
    char a[256], b[256];
    tb_exec_record back;

    cr_assert_gt(tb_truth_format_text(r, a, sizeof a), 0);
    cr_assert_eq(tb_truth_parse_text(a, &back), 0, "%s", a);
    cr_assert_gt(tb_truth_format_text(&back, b, sizeof b), 0);
    cr_assert_str_eq(a, b);
    cr_assert_eq(back.kind, r->kind);
    if (r->kind == TB_REC_INSN)
        cr_assert(memcmp(&back.u.insn, &r->u.insn, sizeof r->u.insn) == 0, "%s", a);
    rr->n++;
    rr->kinds[r->kind]++;
    return 0;
}

Test(truth, text_reads_back_to_the_same_records)
{
    static const char *const progs[] = {"faults", "ctx_switch", "it_blocks", "secure_ns"};
    reread rr = {0};

    for (size_t i = 0; i < 4; i++) {
        tb_rt_case c;
        tb_scenario sc;
        tb_sim_result res;
        char err[256];
        tb_sim *s;

        program(&c, progs[i], TB_PROTO_PTM);
        tb_scenario_init(&sc);
        cr_assert_eq(tb_scenario_load(&sc, c.scenario, err, sizeof err), 0, "%s", err);
        sc.max_insns = 3000;
        s = tb_sim_new(sc.cpu);
        cr_assert_not_null(s);
        cr_assert_eq(tb_sim_load_elf_file(s, c.program), 0);
        cr_assert_eq(tb_sim_set_scenario(s, &sc), 0);
        cr_assert_eq(tb_sim_run(s, reparse, &rr, &res), 0);
        tb_sim_free(s);
    }
    cr_assert_gt(rr.kinds[TB_REC_INSN], 1000);
    cr_assert_gt(rr.kinds[TB_REC_EXCEPTION], 3);
    cr_assert_gt(rr.kinds[TB_REC_CONTEXT], 2);
    cr_assert_eq(rr.kinds[TB_REC_END], 4);
    cr_assert_eq(rr.kinds[TB_REC_STATE], 2);
    cr_assert_eq(tb_truth_parse_text("0 1 I 00001000 A32 4 e1a00000 Z---- none -> 00001004 A32",
                                     &(tb_exec_record){0}), TB_ERR_FORMAT);
    cr_assert_eq(tb_truth_parse_text("0 1 Q", &(tb_exec_record){0}), TB_ERR_FORMAT);
}

/* on_progress (roundtrip.h: "called every 65536 records"): a sample at
 * each multiple of 65536 records and none between, on one thread and on
 * two, with the instructions and exceptions among them (long_run with no
 * data trace has no other records) and the trace bytes rising.  The
 * runner counts a batch at once unless a sample falls in it (run.c
 * rt_ready). */
typedef struct prog_probe {
    uint64_t samples, bad, last_bytes;
    tb_rt_progress first_bad;
} prog_probe;

static void on_prog(void *ctx, const tb_rt_progress *p)
{
    prog_probe *pp = ctx;

    pp->samples++;
    if (p->records != pp->samples * 65536 || p->insns + p->exceptions != p->records ||
        p->trace_bytes < pp->last_bytes) {
        if (!pp->bad++)
            pp->first_bad = *p;
    }
    pp->last_bytes = p->trace_bytes;
}

Test(roundtrip, progress_every_65536_records)
{
    static const tb_protocol protos[] = {TB_PROTO_PTM, TB_PROTO_ETMV3};

    for (size_t k = 0; k < 2; k++)
        for (unsigned threads = 1; threads <= 2; threads++) {
            tb_rt_case c;
            tb_rt_result res;
            prog_probe pp = {0};
            uint64_t recs;

            program(&c, "long_run", protos[k]);
            c.has_budget = true;
            c.budget = 300000;
            c.threads = threads;
            c.on_progress = on_prog;
            c.progress_ctx = &pp;
            run(&c, &res);
            recs = res.sim.insns + res.sim.exceptions;
            cr_assert_eq(pp.bad, 0, "%s, %u thread(s): sample %llu: %llu records, %llu insns, "
                         "%llu exceptions", tb_protocol_name(protos[k]), threads,
                         (unsigned long long)pp.samples,
                         (unsigned long long)pp.first_bad.records,
                         (unsigned long long)pp.first_bad.insns,
                         (unsigned long long)pp.first_bad.exceptions);
            cr_assert_eq(pp.samples, recs / 65536, "%s, %u thread(s): %llu samples for %llu "
                         "records", tb_protocol_name(protos[k]), threads,
                         (unsigned long long)pp.samples, (unsigned long long)recs);
        }
}
