/*
 * `tracebench roundtrip` through the command line, where users meet its
 * verdict: a run that compared no instruction, or whose --fault never
 * found its packet, must say so and exit non-zero, never print MATCH and
 * exit 0.  The exit codes (README.md, "Exit codes"): 0 match,
 * 1 mismatch, 2 usage, 3 nothing checked (or the fault not applied or
 * not caught), 4 error.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tb_test.h"


/* A vector program from this build tree and its scenario, quoted. */
static const char *program(const char *name)
{
    static char buf[2400];
    char elf[1024], ini[1024];

    snprintf(elf, sizeof elf, "%s/vectors/programs/%s.elf", TB_BINARY_DIR, name);
    snprintf(ini, sizeof ini, "%s/vectors/programs/%s.ini", TB_SOURCE_DIR, name);
    cr_assert_eq(access(elf, R_OK), 0, "%s missing: build the tb_vectors target", elf);
    snprintf(buf, sizeof buf, "'%s' --scenario '%s'", elf, ini);
    return buf;
}

typedef struct outcome {
    int status;               /* exit status, -1 when it did not exit */
    char *out;                /* stdout and stderr together */
} outcome;

/* Runs `tracebench roundtrip ARGS`; the output is echoed to stderr so a
 * failing test shows what the command said. */
static outcome roundtrip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static outcome roundtrip(const char *fmt, ...)
{
    char args[4096], cmd[8192], tmp[64];
    outcome o = {-1, NULL};
    size_t len = 0;
    va_list ap;
    int rc;

    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(tmp, sizeof tmp, "/tmp/tb_cli_rt_%d.out", (int)getpid());
    cr_assert_lt(snprintf(cmd, sizeof cmd, "'%s' roundtrip %s > %s 2>&1", tb_test_cli(), args, tmp),
                 (int)sizeof cmd);
    rc = system(cmd);
    if (rc != -1 && WIFEXITED(rc))
        o.status = WEXITSTATUS(rc);
    o.out = (char *)tb_test_read_file(tmp, &len);
    cr_assert(o.out, "no output from: %s", cmd);
    o.out[len] = '\0';
    remove(tmp);
    fprintf(stderr, "$ tracebench roundtrip %s\n%s(exit %d)\n", args, o.out, o.status);
    return o;
}

static void has(const outcome *o, const char *text)
{
    cr_expect(strstr(o->out, text), "the output lacks \"%s\":\n%s", text, o->out);
}

static void lacks(const outcome *o, const char *text)
{
    cr_expect(!strstr(o->out, text), "the output has \"%s\":\n%s", text, o->out);
}

/* Control: a plain run checks instructions and matches. */
Test(cli_roundtrip, plain_run_matches_exit_0)
{
    outcome o = roundtrip("%s", program("arm_basic"));

    cr_expect_eq(o.status, 0);
    has(&o, "ptm    MATCH: 27 instructions run, 27 traced, 27 checked");
    has(&o, "etmv3  MATCH: 27 instructions run, 27 traced, 27 checked");
    lacks(&o, "NOTHING");
    lacks(&o, "FAULT");
    free(o.out);
}

/* An include range that no executed instruction falls in: nothing is
 * traced, nothing compared; that is not a match. */
Test(cli_roundtrip, include_range_with_no_executed_insn_exit_3)
{
    outcome o = roundtrip("%s --options include=0x40000-0x40100", program("arm_basic"));

    cr_expect_eq(o.status, 3);
    has(&o, "ptm    NOTHING CHECKED: 27 instructions run, 0 traced, 0 checked");
    has(&o, "NOTHING CHECKED: 0 of 27 instructions were checked: none was traced: the "
            "ViewInst filter (include 0x40000-0x40100) holds no executed instruction");
    lacks(&o, "MATCH:");
    free(o.out);
}

/* `filter` (the middle half of the program) when the run stops before
 * reaching it: the message names the range `filter` stood for. */
Test(cli_roundtrip, filter_whose_middle_never_runs_exit_3)
{
    outcome o = roundtrip("%s --protocol etmv3 --options filter --max 1", program("arm_basic"));

    cr_expect_eq(o.status, 3);
    has(&o, "NOTHING CHECKED: 0 of 1 instructions were checked");
    has(&o, "`filter` is the middle half of the first loadable segment");
    lacks(&o, "MATCH:");
    free(o.out);
}

/* A fault past the end of the trace changes nothing: it must not pass
 * for a match. */
Test(cli_roundtrip, fault_past_the_end_not_applied_exit_3)
{
    outcome o = roundtrip("%s --fault drop-atom:1000000", program("arm_basic"));

    cr_expect_eq(o.status, 3);
    has(&o, "ptm    FAULT NOT APPLIED:");
    has(&o, "FAULT NOT APPLIED: drop-atom:1000000: the trace has only 1 atom packet with an "
            "E or N atom, so nothing was changed");
    has(&o, "FAULT NOT APPLIED: drop-atom:1000000: the trace has only 4 atom packets with an "
            "E or N atom, so nothing was changed; pick N from 0 to 3");
    lacks(&o, "MATCH:");
    free(o.out);

    o = roundtrip("%s --protocol ptm --fault addr-bit:99:3", program("arm_basic"));
    cr_expect_eq(o.status, 3);
    has(&o, "FAULT NOT APPLIED: addr-bit:99:3: the trace has only 2 branch address packets");
    free(o.out);
}

/* A fault on a bit the decoder ignores (ARM state: address bits 1:0)
 * goes in and the decode still matches: reported, not a pass. */
Test(cli_roundtrip, fault_applied_but_undetected_exit_3)
{
    outcome o = roundtrip("%s --protocol ptm --fault addr-bit:0:0", program("arm_basic"));

    cr_expect_eq(o.status, 3);
    has(&o, "FAULT UNDETECTED: addr-bit:0:0 changed branch address packet 0, yet the decode "
            "still matches the truth");
    lacks(&o, "MATCH:");
    free(o.out);
}

/* A real fault: the comparator catches it. */
Test(cli_roundtrip, injected_fault_mismatch_exit_1)
{
    outcome o = roundtrip("%s --protocol etmv3 --fault drop-atom:1", program("arm_basic"));

    cr_expect_eq(o.status, 1);
    has(&o, "etmv3  MISMATCH:");
    has(&o, "the fault drop-atom:1 was applied and caught");
    has(&o, "MISMATCH: decoded 0x000000d0 A32 E, truth #20 executed it N");
    free(o.out);
}

/* Both protocols: a mismatch outranks a run that proved nothing (PTM's
 * trace of arm_basic has one atom packet, ETMv3's four). */
Test(cli_roundtrip, mismatch_outranks_fault_not_applied_exit_1)
{
    outcome o = roundtrip("%s --fault drop-atom:1", program("arm_basic"));

    cr_expect_eq(o.status, 1);
    has(&o, "ptm    FAULT NOT APPLIED:");
    has(&o, "FAULT NOT APPLIED: drop-atom:1: the trace has only 1 atom packet");
    has(&o, "etmv3  MISMATCH:");
    free(o.out);
}

Test(cli_roundtrip, bad_options_exit_2)
{
    const char *p = program("arm_basic");
    outcome o = roundtrip("%s --no-such-option 1", p);

    cr_expect_eq(o.status, 2);
    has(&o, "unknown option '--no-such-option'");
    has(&o, "(tracebench roundtrip --help for usage)");
    free(o.out);

    o = roundtrip("%s --options no-such-encoder-option", p);
    cr_expect_eq(o.status, 2);
    has(&o, "--options: ");
    free(o.out);

    o = roundtrip("%s --fault drop-atom", p);
    cr_expect_eq(o.status, 2);
    free(o.out);

    /* An N past 32 bits is refused, not wrapped onto packet 1. */
    o = roundtrip("%s --fault drop-atom:4294967297", p);
    cr_expect_eq(o.status, 2);
    has(&o, "--fault drop-atom:4294967297: use addr-bit:N:BIT");
    free(o.out);

    o = roundtrip("%s --fault addr-bit:0:4x", p);
    cr_expect_eq(o.status, 2);
    free(o.out);
}

/* A program that cannot be read is a broken setup, not a mismatch. */
Test(cli_roundtrip, unreadable_program_error_exit_4)
{
    outcome o = roundtrip("'%s/vectors/programs/no_such_program.elf'", TB_BINARY_DIR);

    cr_expect_eq(o.status, 4);
    has(&o, "no_such_program.elf: cannot read");
    free(o.out);

    o = roundtrip("'%s/vectors/programs/no_such_program.elf' --options filter", TB_BINARY_DIR);
    cr_expect_eq(o.status, 4);
    free(o.out);
}

/* The suite counts a case that checked nothing as a failure and shows
 * it in the table (here the run stops before the filter's range). */
Test(cli_roundtrip, suite_counts_nothing_checked_as_failure_exit_3)
{
    outcome o;

    program("arm_basic");
    o = roundtrip("--suite --programs '%s/vectors/programs' --vectors '%s/vectors' "
                  "--only 'arm_basic ptm filter' --max 1",
                  TB_BINARY_DIR, TB_SOURCE_DIR);
    cr_expect_eq(o.status, 3);
    has(&o, "NOTHING CHECKED arm_basic ptm filter: 0 of 1 instructions were checked");
    has(&o, "ptm    filter                      1      0      1");
    has(&o, "2 of 2 cases FAILED: 0 mismatch(es), 0 error(s), 2 checked nothing:");
    has(&o, "  NOTHING CHECKED  arm_basic ptm filter\n");
    lacks(&o, "cases match");
    free(o.out);

    o = roundtrip("--suite --programs '%s/vectors/programs' --vectors '%s/vectors' "
                  "--only 'no case is named like this'",
                  TB_BINARY_DIR, TB_SOURCE_DIR);
    cr_expect_eq(o.status, 3);
    has(&o, "no case ran");
    free(o.out);

    /* The suite's control: the same cases with the whole run match. */
    o = roundtrip("--suite --programs '%s/vectors/programs' --vectors '%s/vectors' "
                  "--only 'arm_basic ptm filter'",
                  TB_BINARY_DIR, TB_SOURCE_DIR);
    cr_expect_eq(o.status, 0);
    has(&o, "all 2 cases match");
    free(o.out);
}

/* ETMv1 and ETMv2 cores have no Security Extensions: the suite leaves the
 * secure scenario out for them, and only it.  The skip test read an
 * uninitialised scenario (tb_scenario_parse sets only the keys a file
 * has), so it used to leave out cases at random (5 of the 22 ETMv2 cases
 * ran in a set) and still ran secure_ns, an ERROR. */
Test(cli_roundtrip, suite_skips_secure_scenarios_for_port_protocols_only)
{
    outcome o;

    program("arm_basic");
    program("secure_ns");
    o = roundtrip("--suite --programs '%s/vectors/programs' --vectors '%s/vectors' "
                  "--protocol etmv2 --only ' etmv2 ca,port=4' --max 50",
                  TB_BINARY_DIR, TB_SOURCE_DIR);
    cr_expect_eq(o.status, 0);
    /* Every program and scenario variant but smc and secure_ns: 27
     * programs (the six of issue 29, thumb_vec and faults_hi among them)
     * and two storm variants. */
    has(&o, "all 29 cases match");
    free(o.out);

    o = roundtrip("--suite --programs '%s/vectors/programs' --vectors '%s/vectors' "
                  "--protocol etmv2 --only secure_ns",
                  TB_BINARY_DIR, TB_SOURCE_DIR);
    cr_expect_eq(o.status, 3);
    has(&o, "no case ran");
    free(o.out);

    o = roundtrip("--suite --programs '%s/vectors/programs' --vectors '%s/vectors' "
                  "--protocol etmv1 --only secure_ns",
                  TB_BINARY_DIR, TB_SOURCE_DIR);
    cr_expect_eq(o.status, 3);
    has(&o, "no case ran");
    free(o.out);

    o = roundtrip("--suite --programs '%s/vectors/programs' --vectors '%s/vectors' "
                  "--only 'secure_ns ptm plain' --max 50",
                  TB_BINARY_DIR, TB_SOURCE_DIR);
    cr_expect_eq(o.status, 0);
    has(&o, "all 1 cases match");
    free(o.out);
}
