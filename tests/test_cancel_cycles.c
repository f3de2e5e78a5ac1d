/*
 * ETMv3 cycle-accurate Cancel, end to end (sim -> encoder -> decoder ->
 * comparator): the vector program cancel_single runs undefined Thumb
 * instructions that are each alone in their range, right after a taken
 * B and after a BX.  The Cancel (protocol-notes 2.7) retracts the whole
 * one-instruction range, yet the cycles its atom carried were spent
 * (4.2): the round trip must match, cycle totals included.  It used to
 * decode the vector's range one cycle short of the truth.
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "tracebench/roundtrip.h"

#define FAULTS 2 /* cancel_single.S: the UDFs after B and after BX */

static void run_case(const char *opts, bool formatted, size_t chunk)
{
    static char elf[1024], ini[1024];
    tb_rt_case c;
    tb_rt_result res;
    char err[512];
    int rc;

    snprintf(elf, sizeof elf, "%s/vectors/programs/cancel_single.elf", TB_BINARY_DIR);
    snprintf(ini, sizeof ini, "%s/vectors/programs/cancel_single.ini", TB_SOURCE_DIR);
    tb_rt_case_init(&c, TB_PROTO_ETMV3);
    c.name = "cancel_single";
    c.program = elf;
    c.scenario = ini;
    c.formatted = formatted;
    c.chunk = chunk;
    cr_assert_eq(tb_rt_case_options(&c, opts, err, sizeof err), 0, "%s: %s", opts, err);
    rc = tb_rt_run(&c, &res, err, sizeof err);
    cr_assert_eq(rc, 0, "%s: %s: %s", opts, tb_err_str(rc), err);
    cr_assert(res.match, "etmv3 %s: %s", opts, res.report);
    /* Both UDFs cancelled, both exceptions shown, everything else
     * decoded: the match compared the whole run. */
    cr_assert_eq(res.sim.exceptions, FAULTS, "%s", opts);
    cr_assert_eq(res.cmp.cancelled, FAULTS, "%s", opts);
    cr_assert_eq(res.cmp.exceptions, FAULTS, "%s", opts);
    cr_assert_eq(res.cmp.checked, res.sim.insns - FAULTS, "%s", opts);
    if (c.opts.cycle_accurate)
        cr_assert_gt(res.cmp.cycle_checks, 0, "%s: no cycle total checked", opts);
}

/* The cycle-accurate option sets of the round-trip matrix
 * (roundtrip/suite.c) that trace the whole run, both buffer kinds, and
 * a chunked decode. */
Test(cancel_cycles, lone_cancelled_thumb_insn_keeps_its_cycles)
{
    static const char *const sets[] = {"ca", "ca,ts", "alt,ca", "v=3,ca", "sync=64,ca",
                                       "ca,bb,ctxid=2"};

    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        run_case(sets[i], i % 2 == 0, i % 3 == 1 ? 7 : 0);
}

/* Without cycle accuracy the same run matches too (no counts to keep). */
Test(cancel_cycles, plain_trace_control)
{
    run_case("", true, 0);
}

/* A FIFO overflow that falls between a cancelled instruction's atom and
 * the exception packet whose Cancel retracts it: the atom went out, the
 * Cancel did not, so the trace shows the instruction (nothing retracts
 * it) and the exception is lost with the rest.  The comparator took the
 * instruction for a missing exception (it is told what the trace still
 * shows: tb_compare_mark_lost). */
Test(cancel_cycles, cancel_lost_to_an_overflow_leaves_the_instruction)
{
    static char elf[1024], ini[1024];
    tb_rt_case c;
    tb_rt_result res;
    char err[512];

    snprintf(elf, sizeof elf, "%s/vectors/programs/cancel_single.elf", TB_BINARY_DIR);
    snprintf(ini, sizeof ini, "%s/vectors/programs/cancel_single.ini", TB_SOURCE_DIR);
    tb_rt_case_init(&c, TB_PROTO_ETMV3);
    c.program = elf;
    c.scenario = ini;
    cr_assert_eq(tb_rt_case_options(&c, "fifo=48:1/4,ca", err, sizeof err), 0, "%s", err);
    cr_assert_eq(tb_rt_run(&c, &res, err, sizeof err), 0, "%s", err);
    cr_assert(res.match, "%s", res.report);
    cr_assert_eq(res.enc.overflows, 1);
    /* One Cancel shown, one lost with its exception: the second UDF is
     * in the decode. */
    cr_assert_eq(res.cmp.cancelled, FAULTS - 1);
    cr_assert_eq(res.cmp.exceptions, FAULTS - 1);
    cr_assert_gt(res.cmp.untraced, 0);
}

/* Trace that turns on or off around a Cancel.  The comparator started its
 * cycle totals at the range before a lone cancelled instruction with the
 * cancelled one's stamp (right only when the range holds it), and a
 * timestamp after an I-sync at a cancelled instruction named a record it
 * had already dropped: both false mismatches, on decodes that were
 * right. */
Test(cancel_cycles, filters_around_a_cancel)
{
    static const char *const sets[] = {
        "ca,include=0x0-0xcc",       /* the handler outside: trace on at the return */
        "ca,ts,include=0x0-0xcc",
        "ca,exclude=0x20-0xb8",      /* trace on just before the first UDF */
        "ca,ts,exclude=0x0-0xbe",    /* trace on AT the first UDF */
        "ca,ts,include=0xbe-0xcc",
    };
    static char elf[1024], ini[1024];

    snprintf(elf, sizeof elf, "%s/vectors/programs/cancel_single.elf", TB_BINARY_DIR);
    snprintf(ini, sizeof ini, "%s/vectors/programs/cancel_single.ini", TB_SOURCE_DIR);
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        tb_rt_case c;
        tb_rt_result res;
        char err[512];

        tb_rt_case_init(&c, TB_PROTO_ETMV3);
        c.program = elf;
        c.scenario = ini;
        cr_assert_eq(tb_rt_case_options(&c, sets[i], err, sizeof err), 0, "%s", err);
        cr_assert_eq(tb_rt_run(&c, &res, err, sizeof err), 0, "%s", err);
        cr_expect(res.match, "%s: %s", sets[i], res.report);
        cr_expect_gt(res.cmp.checked, 0, "%s", sets[i]);
    }
}
