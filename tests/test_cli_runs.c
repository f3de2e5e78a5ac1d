/*
 * Runs that end, through the command line (`tracebench sim` and
 * `tracebench roundtrip`): a budget that stops a runaway run with a
 * message saying so (exceptions count too), an exit symbol the scenario
 * names but the program lacks is an error naming it, `sim --out` writes
 * the snapshot but no truth.txt unless asked, include= takes symbols,
 * --raw ADDR with bit 0 starts in Thumb, the progress line stays off the
 * output when stderr is not a terminal, and an inconsistent option list
 * names the option at fault.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tb_test.h"

/* Both streams are "the output" here; stderr is a file, not a terminal,
 * so no progress line may reach it. */
static bool has_text(const tb_cli_run *r, const char *text)
{
    return strstr(r->out, text) || strstr(r->err, text);
}

static void has(const tb_cli_run *r, const char *text)
{
    cr_expect(has_text(r, text), "the output lacks \"%s\":\n%s%s", text, r->out, r->err);
}

static void lacks(const tb_cli_run *r, const char *text)
{
    cr_expect(!has_text(r, text), "the output has \"%s\":\n%s%s", text, r->out, r->err);
}

static const char *elf(const char *name)
{
    static char buf[4][1024];
    static unsigned k;
    char *b = buf[k++ % 4];

    snprintf(b, sizeof buf[0], "%s/vectors/programs/%s.elf", TB_BINARY_DIR, name);
    cr_assert_eq(access(b, R_OK), 0, "%s missing: build the tb_vectors target", b);
    return b;
}

static const char *ini(const char *name)
{
    static char buf[1024];

    snprintf(buf, sizeof buf, "%s/vectors/programs/%s.ini", TB_SOURCE_DIR, name);
    return buf;
}

/* A scratch file with the given bytes; its path. */
static const char *scratch(const char *tag, const void *data, size_t len)
{
    static char buf[4][256];
    static unsigned k;
    char *p = buf[k++ % 4];
    FILE *f;

    snprintf(p, sizeof buf[0], "/tmp/tb_cli_runs_%d_%s", (int)getpid(), tag);
    f = fopen(p, "wb");
    cr_assert(f, "cannot write %s", p);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
    return p;
}

static const char *scratch_text(const char *tag, const char *text)
{
    return scratch(tag, text, strlen(text));
}

static bool exists(const char *dir, const char *name)
{
    char p[1200];
    struct stat st;

    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

static void rm_tree(const char *dir)
{
    char cmd[1200];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* ARM at 0x8000: MOV PC, #0x100000, into unmapped memory; nothing is
 * mapped at the vectors either, so the prefetch abort aborts again at
 * its own vector for ever without running an instruction. */
static const uint8_t abort_loop[] = {0x01, 0xF6, 0xA0, 0xE3};
/* Thumb: B . (an endless loop of one instruction). */
static const uint8_t thumb_spin[] = {0xFE, 0xE7};
/* Thumb: MOVS r0, #1; WFI (ends: nothing is to come). */
static const uint8_t thumb_wfi[] = {0x01, 0x20, 0x30, 0xBF};

/* ---- the exit symbol ---- */

Test(cli_runs, missing_exit_symbol_is_an_error_naming_it)
{
    const char *scn = scratch_text("exit.ini", "[sim]\nexit = no_such_exit\n");
    tb_cli_run o = tb_test_run("sim '%s' --scenario '%s'", elf("long_run"), scn);

    cr_expect_eq(o.status, 4);
    has(&o, "exit symbol 'no_such_exit' not found in the program's symbol table");
    lacks(&o, "stop=");
    tb_test_run_done(&o);

    o = tb_test_run("roundtrip '%s' --scenario '%s' --protocol ptm", elf("long_run"), scn);
    cr_expect_eq(o.status, 4);
    has(&o, "exit symbol 'no_such_exit' not found in the program's symbol table");
    lacks(&o, "MATCH");
    tb_test_run_done(&o);

    /* `exit = _exit` in a raw image (no symbols at all) is refused too,
     * no longer dropped in silence. */
    scn = scratch_text("exit2.ini", "[sim]\nexit = _exit\n");
    o = tb_test_run("sim '%s' --raw 0x8001 --scenario '%s'",
            scratch("spin.bin", thumb_spin, sizeof thumb_spin), scn);
    cr_expect_eq(o.status, 4);
    has(&o, "exit symbol '_exit' not found");
    tb_test_run_done(&o);
}

/* ---- budgets ---- */

Test(cli_runs, exception_loop_stops)
{
    const char *img = scratch("abort.bin", abort_loop, sizeof abort_loop);
    const char *scn = scratch_text("abort.ini", "[sim]\nprefetch_abort = allow\n");
    tb_cli_run o;

    /* The budget counts exceptions: one is the whole budget here. */
    o = tb_test_run("sim '%s' --raw 0x8000 --scenario '%s' --max 1 --truth -", img, scn);
    cr_expect_eq(o.status, 0);
    has(&o, "stop=budget at 0x0000000c insns=1 cycles=6 exceptions=1");
    has(&o, "stopped after the budget of 1 exception");
    has(&o, "raise it with --max");
    tb_test_run_done(&o);

    /* By default it ends at once, as the loop it is. */
    o = tb_test_run("sim '%s' --raw 0x8000 --scenario '%s' --truth -", img, scn);
    cr_expect_eq(o.status, 0);
    has(&o, "X prefetch-abort ret=0000000c vector=0000000c");
    has(&o, "stop=fault at 0x0000000c insns=1");
    has(&o, "a fault loop: a prefetch abort at the prefetch abort vector itself");
    tb_test_run_done(&o);
}

Test(cli_runs, instruction_budget_default_and_max)
{
    const char *img = scratch("spin2.bin", thumb_spin, sizeof thumb_spin);
    tb_cli_run o;

    o = tb_test_run("sim '%s' --raw 0x8001 --max 5000", img);
    cr_expect_eq(o.status, 0);
    has(&o, "stop=budget at 0x00008000 insns=5000 ");
    has(&o, "stopped after the budget of 5000 instructions; raise it with --max");
    tb_test_run_done(&o);

    /* No --max, no scenario: the default budget ends it. */
    o = tb_test_run("sim '%s' --raw 0x8001", img);
    cr_expect_eq(o.status, 0);
    has(&o, "stop=budget at 0x00008000 insns=10000000 ");
    has(&o, "stopped after the budget of 10000000 instructions");
    tb_test_run_done(&o);

    /* The round trip says a cut run was cut. */
    o = tb_test_run("roundtrip '%s' --protocol ptm --max 20000", elf("long_run"));
    cr_expect_eq(o.status, 0);
    has(&o, "ptm    MATCH: 20000 instructions run");
    has(&o, "CUT: stopped after the budget of 20000 instructions");
    tb_test_run_done(&o);

    /* --max overrides the scenario's budget both ways. */
    o = tb_test_run("roundtrip '%s' --scenario '%s' --protocol etmv3 --max 300", elf("arm_basic"),
            ini("arm_basic"));
    has(&o, "etmv3  MATCH: 27 instructions run");
    has(&o, "stopped: the program reached its exit (0x00000054)");
    lacks(&o, "CUT");
    tb_test_run_done(&o);
    o = tb_test_run("roundtrip '%s' --scenario '%s' --protocol etmv3 --max 10", elf("arm_basic"),
            ini("arm_basic"));
    has(&o, "etmv3  MATCH: 10 instructions run");
    has(&o, "CUT: stopped after the budget of 10 instructions");
    tb_test_run_done(&o);
    o = tb_test_run("roundtrip '%s' --protocol ptm --max unlimited", elf("arm_basic"));
    cr_expect_eq(o.status, 0);
    has(&o, "stopped: the program reached its exit");
    tb_test_run_done(&o);
    o = tb_test_run("sim '%s' --max lots", elf("arm_basic"));
    cr_expect_eq(o.status, 2);
    has(&o, "--max lots: give a number of instructions");
    has(&o, "(tracebench sim --help for usage)");
    tb_test_run_done(&o);
}

/* ---- sim --out ---- */

Test(cli_runs, sim_out_writes_no_truth_unless_asked)
{
    char dir[256], truth[300];
    tb_cli_run o;

    snprintf(dir, sizeof dir, "/tmp/tb_cli_runs_%d_snap", (int)getpid());
    rm_tree(dir);
    o = tb_test_run("sim '%s' --scenario '%s' --protocol ptm --out '%s'", elf("recursion"),
            ini("recursion"), dir);
    cr_expect_eq(o.status, 0);
    has(&o, "stop=exit");
    cr_expect(!exists(dir, "truth.txt"), "truth.txt written without --truth");
    cr_expect(exists(dir, "snapshot.ini"));
    cr_expect(exists(dir, "trace_buffer.bin"));
    cr_expect(!exists(dir, "trace_buffer.bin.part"), "the partial buffer was left");
    tb_test_run_done(&o);

    /* The streamed snapshot decodes: the same instructions as the truth. */
    o = tb_test_run("decode '%s' --format addr", dir);
    cr_expect_eq(o.status, 0);
    tb_test_run_done(&o);

    snprintf(truth, sizeof truth, "%s/the-truth.txt", dir);
    o = tb_test_run("sim '%s' --scenario '%s' --protocol etmv3 --out '%s' --truth '%s'",
            elf("recursion"), ini("recursion"), dir, truth);
    cr_expect_eq(o.status, 0);
    cr_expect(exists(dir, "the-truth.txt"));
    cr_expect(!exists(dir, "truth.txt"));
    tb_test_run_done(&o);

    /* The round trip's --out alike. */
    rm_tree(dir);
    o = tb_test_run("roundtrip '%s' --scenario '%s' --protocol ptm --out '%s'", elf("recursion"),
            ini("recursion"), dir);
    cr_expect_eq(o.status, 0);
    cr_expect(exists(dir, "snapshot.ini"));
    cr_expect(!exists(dir, "truth.txt"));
    tb_test_run_done(&o);
    rm_tree(dir);
}

/* ---- include= with symbols ---- */

Test(cli_runs, include_takes_symbols)
{
    tb_cli_run o, n;
    const char *p = elf("recursion"), *s = ini("recursion");

    /* fib is 0xc4..0x104 in the symbol table (st_value, st_size). */
    o = tb_test_run("roundtrip '%s' --scenario '%s' --protocol ptm --options include=fib", p, s);
    cr_expect_eq(o.status, 0);
    has(&o, "ptm    MATCH:");
    n = tb_test_run("roundtrip '%s' --scenario '%s' --protocol ptm --options include=0xc4-0x104", p, s);
    cr_expect_eq(n.status, 0);
    {
        const char *a = strstr(o.out, "MATCH:"), *b = strstr(n.out, "MATCH:");

        cr_assert(a && b);
        cr_expect_eq(strncmp(a, b, (size_t)(strchr(a, '\n') - a)), 0,
                     "include=fib is not the symbol's extent:\n%s\n%s", a, b);
    }
    lacks(&o, ", 0 instructions in gaps");
    tb_test_run_done(&o);
    tb_test_run_done(&n);

    /* SYM-SYM: from fib up to main (HI exclusive), on both protocols. */
    o = tb_test_run("roundtrip '%s' --scenario '%s' --options include=fib-main,exclude=depth", p, s);
    cr_expect_eq(o.status, 0);
    has(&o, "ptm    MATCH:");
    has(&o, "etmv3  MATCH:");
    tb_test_run_done(&o);

    o = tb_test_run("roundtrip '%s' --scenario '%s' --options include=no_such_fn", p, s);
    cr_expect_eq(o.status, 2);
    has(&o, "include=no_such_fn: no symbol 'no_such_fn' in the program's symbol table");
    tb_test_run_done(&o);

    {
        char dir[256];

        snprintf(dir, sizeof dir, "/tmp/tb_cli_runs_%d_inc", (int)getpid());
        o = tb_test_run("sim '%s' --scenario '%s' --protocol ptm --options include=fib --out '%s'", p,
                s, dir);
        cr_expect_eq(o.status, 0);
        has(&o, "insns traced");
        tb_test_run_done(&o);
        o = tb_test_run("sim '%s' --scenario '%s' --protocol ptm --options include=nope --out '%s'",
                p, s, dir);
        cr_expect_eq(o.status, 2);
        has(&o, "no symbol 'nope'");
        tb_test_run_done(&o);
        rm_tree(dir);
    }
}

/* ---- --raw with bit 0 ---- */

Test(cli_runs, raw_address_bit0_starts_in_thumb)
{
    const char *img = scratch("wfi.bin", thumb_wfi, sizeof thumb_wfi);
    tb_cli_run o = tb_test_run("sim '%s' --raw 0x8001 --truth -", img);

    cr_expect_eq(o.status, 0);
    has(&o, "0 1 I 00008000 T32 2 2001 ");
    has(&o, "1 2 I 00008002 T32 2 bf30 ");
    has(&o, "stop=wfi at 0x00008004 insns=2");
    tb_test_run_done(&o);

    /* Bit 0 clear: ARM, as before (the bytes are then one ARM word). */
    o = tb_test_run("sim '%s' --raw 0x8000 --truth - --max 1", img);
    has(&o, "0 1 I 00008000 A32 4 bf302001");
    tb_test_run_done(&o);
}

/* ---- progress: never in a file, never with --quiet ---- */

Test(cli_runs, no_progress_when_stderr_is_not_a_terminal)
{
    tb_cli_run o;

    /* Long enough for several progress refreshes on a terminal. */
    o = tb_test_run("sim '%s' --protocol ptm --out /tmp/tb_cli_runs_%d_prog --max 3000000",
            elf("long_run"), (int)getpid());
    cr_expect_eq(o.status, 0);
    cr_expect(!strchr(o.err, '\r'), "a progress line reached a file:\n%s", o.err);
    lacks(&o, "insns/s");
    tb_test_run_done(&o);

    o = tb_test_run("roundtrip '%s' --max 3000000", elf("long_run"));
    cr_expect(!strchr(o.err, '\r'));
    lacks(&o, "insns/s");
    cr_expect_eq(o.err[0], '\0', "stderr should be empty:\n%s", o.err);
    tb_test_run_done(&o);

    o = tb_test_run("roundtrip --suite --programs '%s/vectors/programs' --vectors '%s/vectors' "
            "--only 'arm_basic ptm plain'", TB_BINARY_DIR, TB_SOURCE_DIR);
    cr_expect_eq(o.status, 0);
    cr_expect_eq(o.err[0], '\0', "stderr should be empty:\n%s", o.err);
    tb_test_run_done(&o);

    /* --quiet: not even the note about a missing exit symbol. */
    o = tb_test_run("sim '%s' --raw 0x8001 --max 1000 --quiet",
            scratch("spin3.bin", thumb_spin, sizeof thumb_spin));
    cr_expect_eq(o.status, 0);
    lacks(&o, "note:");
    cr_expect(!strchr(o.err, '\r'));
    tb_test_run_done(&o);
    {
        char dir[256];

        snprintf(dir, sizeof dir, "/tmp/tb_cli_runs_%d_prog", (int)getpid());
        rm_tree(dir);
    }
}

/* ---- inconsistent options name the option ---- */

Test(cli_runs, inconsistent_options_name_the_option)
{
    static const struct {
        const char *proto, *opts, *says;
    } cases[] = {
        {"ptm", "alt", "alt: the alternative branch encoding is an ETMv3.4+ feature, not PTM"},
        {"etmv3", "alt,v=3", "alt: the alternative branch encoding needs ETMv3.4 or later"},
        {"etmv3", "rs", "rs: the return stack is a PTM feature"},
        {"etmv3", "exc0", "exc0: a PTM option (ETMv3 always tells"},
        {"etmv1", "exc0", "exc0: a PTM option"},
        {"ptm", "fifo=32", "fifo=32: the FIFO depth must be at least 48 bytes"},
        {"etmv3", "v=3,ts", "ts: timestamps need ETMv3.5, not ETMv3.3"},
        {"etmv3", "v=4,vmid", "vmid: VMID tracing needs ETMv3.5"},
        {"ptm", "v=0,vmid", "vmid: VMID tracing needs PFT1.1"},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_cli_run o = tb_test_run("sim '%s' --protocol %s --options %s --out /tmp/tb_cli_runs_%d_opt",
                        elf("arm_basic"), cases[i].proto, cases[i].opts, (int)getpid());

        cr_expect_eq(o.status, 2, "%s %s", cases[i].proto, cases[i].opts);
        has(&o, cases[i].says);
        lacks(&o, "stop=");
        tb_test_run_done(&o);
        o = tb_test_run("roundtrip '%s' --protocol %s --options %s", elf("arm_basic"), cases[i].proto,
                cases[i].opts);
        cr_expect_eq(o.status, 2, "%s %s", cases[i].proto, cases[i].opts);
        has(&o, cases[i].says);
        lacks(&o, "MATCH");
        tb_test_run_done(&o);
    }
}
