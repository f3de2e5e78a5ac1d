/*
 * One set of flags, one meaning each, and errors that name their cause
 * (issue 31 items 2-5), through the command line:
 *   - sim and roundtrip name the bad argument and the accepted values in
 *     one line, then where the usage is (they printed 20 lines of usage);
 *   - a program file that is not a 32-bit little-endian ARM ELF gets its
 *     real cause, once (roundtrip said "no loadable segment" once per
 *     protocol for /bin/ls, a text file, a big-endian ELF or a raw
 *     image), and `decode --memory` refuses an x86 ELF;
 *   - --format json and --json on packets, decode and stats; stats reads
 *     a raw FILE and takes --id all; --options items that do nothing for
 *     reading trace are named; empty items are a usage error everywhere;
 *   - roundtrip --strict: a run the budget cut short fails (exit 6), and
 *     the summary says how to raise the budget.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb_test.h"

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;

    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static char scratch[256];

static void scratch_init(void)
{
    snprintf(scratch, sizeof scratch, "/tmp/tb_cli_flags_%d", (int)getpid());
    mkdir(scratch, 0777);
}

static void scratch_fini(void)
{
    char cmd[512];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    (void)system(cmd);
}

TestSuite(cli_flags, .init = scratch_init, .fini = scratch_fini);

static const char *elf(const char *name)
{
    static char buf[4][1024];
    static unsigned k;
    char *b = buf[k++ % 4];

    snprintf(b, sizeof buf[0], "%s/vectors/programs/%s.elf", TB_BINARY_DIR, name);
    cr_assert_eq(access(b, R_OK), 0, "%s missing: build the tb_vectors target", b);
    return b;
}

/* ---- item 2: the bad argument, named ---- */

Test(cli_flags, bad_arguments_are_named_in_one_line)
{
    static const struct {
        const char *args, *text;
    } cases[] = {
        {"--protocol etmv4 --out /tmp/x", "--protocol etmv4: use ptm, etmv3, etmv1 or etmv2"},
        {"--max -5", "--max -5: give a number of instructions"},
        {"--max 1e3", "--max 1e3: give a number of instructions"},
        {"--max 99999999999999999999999", "--max 99999999999999999999999: give a number"},
        {"--no-such-flag", "unknown option '--no-such-flag'"},
        {"--scenario", "--scenario needs a value"},
        {"--buffer fast", "--buffer fast: use coresight or raw"},
        {"--options ca,,ts --protocol ptm", "--options ca,,ts: an empty item"},
    };
    static const char *const cmds[] = {"sim", "roundtrip"};

    for (size_t c = 0; c < 2; c++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            tb_cli_run o = tb_test_run("%s '%s' %s", cmds[c], elf("arm_basic"), cases[i].args);
            char help[64];

            snprintf(help, sizeof help, "(tracebench %s --help for usage)\n", cmds[c]);
            cr_expect_eq(o.status, 2, "%s %s: exit %d", cmds[c], cases[i].args, o.status);
            tb_test_err_has(&o, cases[i].text);
            /* One line, then the pointer to the usage: nothing else. */
            cr_expect_eq(count(o.err, "\n"), 2, "%s %s:\n%s", cmds[c], cases[i].args, o.err);
            cr_expect(strstr(o.err, help) && !strcmp(strstr(o.err, help), help), "%s", o.err);
            cr_expect_eq(o.out_len, 0);
            tb_test_run_done(&o);
        }
    /* roundtrip's own. */
    {
        static const char *const rt[][2] = {
            {"--fault addr-bit:3", "--fault addr-bit:3: use addr-bit:N:BIT"},
            {"--fault drop-atom:x", "--fault drop-atom:x: use addr-bit:N:BIT"},
            {"--chunk 12k", "--chunk 12k: give a byte count"},
            {"--reports -1", "--reports -1: give a count"},
        };

        for (size_t i = 0; i < sizeof rt / sizeof rt[0]; i++) {
            tb_cli_run o = tb_test_run("roundtrip '%s' %s", elf("arm_basic"), rt[i][0]);

            cr_expect_eq(o.status, 2);
            tb_test_err_has(&o, rt[i][1]);
            cr_expect_eq(count(o.err, "\n"), 2, "%s", o.err);
            tb_test_run_done(&o);
        }
    }
}

/* ---- item 3: program files ---- */

/* A copy of arm_basic.elf with byte `at` set to `val`. */
static const char *patched(const char *name, size_t at, unsigned val)
{
    static char path[4][512];
    static unsigned k;
    char *p = path[k++ % 4];
    char cmd[2048];

    snprintf(p, sizeof path[0], "%s/%s", scratch, name);
    snprintf(cmd, sizeof cmd,
             "cp '%s' '%s' && printf '\\%03o' | dd of='%s' bs=1 seek=%zu conv=notrunc "
             "2>/dev/null",
             elf("arm_basic"), p, val, p, at);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    return p;
}

Test(cli_flags, program_files_get_their_real_cause_once)
{
    char raw[512], cmd[1200];
    const struct {
        const char *path, *cause, *hint;
    } cases[] = {
        /* /bin/sh is the host's: an x86-64 or AArch64 ELF64 here. */
        {"/bin/sh", "a 64-bit ELF file (ELFCLASS64)", NULL},
        {"/etc/passwd", "not an ELF file", "--raw ADDR"},
        {patched("be.elf", 5, 2), "a big-endian ELF file", "-mlittle-endian"},
        {patched("x86.elf", 18, 3), "an ELF file for x86 (i386) (e_machine 3), not ARM (40)",
         NULL},
        {raw, "not an ELF file", "--raw ADDR"},
    };

    snprintf(raw, sizeof raw, "%s/raw.bin", scratch);
    snprintf(cmd, sizeof cmd, "arm-none-eabi-objcopy -O binary '%s' '%s' 2>/dev/null || "
                              "tail -c +100 '%s' > '%s'", elf("arm_basic"), raw,
             elf("arm_basic"), raw);
    cr_assert_eq(system(cmd), 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_cli_run o = tb_test_run("roundtrip '%s' --quiet", cases[i].path);

        cr_expect_eq(o.status, 4, "%s", cases[i].path);
        tb_test_err_has(&o, cases[i].cause);
        /* Once, not once per protocol; and not the loader's old words. */
        cr_expect_eq(count(o.err, cases[i].cause), 1, "%s", o.err);
        cr_expect(!strstr(o.err, "no loadable segment"), "%s", o.err);
        tb_test_run_done(&o);
        o = tb_test_run("sim '%s' --quiet", cases[i].path);
        cr_expect_eq(o.status, 4, "%s", cases[i].path);
        tb_test_err_has(&o, cases[i].cause);
        if (cases[i].hint)
            tb_test_err_has(&o, cases[i].hint);
        tb_test_run_done(&o);
    }
    /* decode --memory: an ELF for another machine is refused, naming it
     * (it was taken as code without a word). */
    {
        const char *x86 = patched("x86m.elf", 18, 3);
        char v[1024];
        tb_cli_run o;

        snprintf(v, sizeof v, "%s/vectors/generated/arm_basic-ptm-raw", TB_SOURCE_DIR);
        o = tb_test_run("decode '%s/trace_buffer.bin' --protocol ptm --memory '%s'", v, x86);
        cr_expect_eq(o.status, 4);
        tb_test_err_has(&o, "an ELF file for x86 (i386)");
        tb_test_run_done(&o);
        o = tb_test_run("decode '%s/trace_buffer.bin' --protocol ptm --memory '%s' --format addr", v,
                elf("arm_basic"));
        cr_expect_eq(o.status, 0);
        tb_test_run_done(&o);
    }
}

/* ---- item 4: one set of flags ---- */

Test(cli_flags, json_two_ways_and_stats_like_decode)
{
    char v[1024], file[1200];
    static const char *const cmds[] = {"packets", "decode", "stats"};
    tb_cli_run a, b;

    snprintf(v, sizeof v, "%s/vectors/generated/two_sources-ptm-etmv3", TB_SOURCE_DIR);
    for (size_t c = 0; c < 3; c++) {
        a = tb_test_run("%s '%s' --id all --format json", cmds[c], v);
        b = tb_test_run("%s '%s' --id all --json", cmds[c], v);
        cr_expect_eq(a.status, 0, "%s", cmds[c]);
        cr_expect_eq(b.status, 0, "%s", cmds[c]);
        cr_expect_gt(a.out_len, 0);
        cr_expect_str_eq(a.out, b.out, "%s: --format json and --json differ", cmds[c]);
        cr_expect_eq(a.out[0], '{', "%s: not JSON", cmds[c]);
        tb_test_run_done(&a);
        tb_test_run_done(&b);
    }
    /* stats: --id all is the default; one ID; a raw FILE as decode reads it. */
    a = tb_test_run("stats '%s'", v);
    b = tb_test_run("stats '%s' --id all", v);
    cr_expect_str_eq(a.out, b.out);
    tb_test_run_done(&a);
    tb_test_run_done(&b);
    snprintf(v, sizeof v, "%s/vectors/generated/arm_basic-ptm-raw", TB_SOURCE_DIR);
    snprintf(file, sizeof file, "%s/trace_buffer.bin", v);
    a = tb_test_run("stats '%s' --format json", v);
    b = tb_test_run("stats '%s' --protocol ptm --memory '%s' --format json", file, elf("arm_basic"));
    cr_expect_eq(b.status, 0);
    /* The same trace, so the same counts: only the names differ. */
    cr_expect(strstr(b.out, "\"trace_bytes\":15,"), "%s", b.out);
    {
        const char *tail = strstr(b.out, "\"cycle_accurate\"");

        cr_expect(tail && strstr(a.out, tail), "%s\n%s", a.out, b.out);
    }
    tb_test_run_done(&a);
    tb_test_run_done(&b);
    a = tb_test_run("stats '%s' --protocol ptm", file);
    cr_expect_eq(a.status, 2);
    tb_test_err_has(&a, "needs the code that ran: give --memory");
    tb_test_run_done(&a);
    /* packets takes decode's command line: --memory is noted, not refused. */
    a = tb_test_run("packets '%s' --protocol ptm --memory '%s'", file, elf("arm_basic"));
    cr_expect_eq(a.status, 0);
    tb_test_err_has(&a, "note: --memory");
    tb_test_run_done(&a);
}

Test(cli_flags, options_that_do_nothing_are_named)
{
    char file[1200];
    tb_cli_run o;

    snprintf(file, sizeof file, "%s/vectors/generated/arm_basic-ptm-raw/trace_buffer.bin",
             TB_SOURCE_DIR);
    o = tb_test_run("decode '%s' --protocol ptm --options rs,fifo=64,sync=0,include=0-0x100 --memory "
            "'%s' --format addr", file, elf("arm_basic"));
    cr_expect_eq(o.status, 0);
    tb_test_err_has(&o, "warning: --options rs,fifo=64,sync=0,include=0-0x100: fifo=64, sync=0, "
                "include=0-0x100 do nothing for reading trace");
    /* rs (ETMCR[29]) is read: it is not among those named. */
    tb_test_run_done(&o);
    o = tb_test_run("packets '%s' --protocol ptm --options rs,ts", file);
    cr_expect_eq(o.status, 0);
    cr_expect(!strstr(o.err, "warning"), "%s", o.err);
    tb_test_run_done(&o);
}

/* ---- item 5: --strict ---- */

Test(cli_flags, strict_fails_a_run_the_budget_cut)
{
    tb_cli_run o = tb_test_run("roundtrip '%s' --protocol ptm --max 5 --quiet", elf("arm_basic"));

    cr_expect_eq(o.status, 0);
    cr_expect(strstr(o.out, "CUT: stopped after the budget of 5 instructions"), "%s", o.out);
    cr_expect(strstr(o.out, "raise it with --max"), "%s", o.out);
    tb_test_run_done(&o);
    o = tb_test_run("roundtrip '%s' --protocol ptm --max 5 --strict --quiet", elf("arm_basic"));
    cr_expect_eq(o.status, 6);
    cr_expect(strstr(o.out, "--strict: a run the budget cut short is a failure (exit 6)"), "%s",
              o.out);
    tb_test_run_done(&o);
    /* A whole run passes --strict. */
    o = tb_test_run("roundtrip '%s' --strict --quiet", elf("arm_basic"));
    cr_expect_eq(o.status, 0);
    tb_test_run_done(&o);
    /* A mismatch still wins over a cut: 1. */
    o = tb_test_run("roundtrip '%s' --protocol ptm --max 300 --strict --fault drop-atom:2 --quiet",
            elf("recursion"));
    cr_expect_eq(o.status, 1, "%s", o.out);
    cr_expect(strstr(o.out, "CUT:"), "%s", o.out);
    tb_test_run_done(&o);
    o = tb_test_run("roundtrip --suite --programs '%s/vectors/programs' --vectors '%s/vectors' "
            "--only 'arm_basic ptm plain' --max 5 --strict --quiet",
            TB_BINARY_DIR, TB_SOURCE_DIR);
    cr_expect_eq(o.status, 6);
    cr_expect(strstr(o.out, "raise --max"), "%s", o.out);
    cr_expect(strstr(o.out, "--strict fails them"), "%s", o.out);
    tb_test_run_done(&o);
    o = tb_test_run("roundtrip --suite --programs '%s/vectors/programs' --vectors '%s/vectors' "
            "--only 'arm_basic ptm plain' --max 5 --quiet",
            TB_BINARY_DIR, TB_SOURCE_DIR);
    cr_expect_eq(o.status, 0);
    tb_test_run_done(&o);
}
