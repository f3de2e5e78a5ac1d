/*
 * `tracebench packets` and `tracebench decode` through the command line,
 * where users meet their failures: every failure names its cause and
 * what to do (the snapshot's own message, the unsupported source and
 * why, the unknown argument value and the accepted ones), exits 1 (an
 * error) or 2 (usage, on stderr), and a write error is never exit 0.
 * Also the inputs users have: a raw trace buffer file with its
 * configuration and memory on the command line (decoded as its snapshot
 * is), --id all (each line tagged with its trace ID), --help.
 *
 * Broken snapshots are copies of committed vectors (vectors/generated)
 * in /tmp with one thing changed.
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

/* ---- scratch snapshots ---- */

static char scratch[256];

static void scratch_init(void)
{
    snprintf(scratch, sizeof scratch, "/tmp/tb_cli_errors_%d", (int)getpid());
    mkdir(scratch, 0777);
}

static void scratch_fini(void)
{
    char cmd[512];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    (void)system(cmd);
}

static const char *vector(const char *name)
{
    static char buf[4][1024];
    static int k;

    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/vectors/generated/%s", TB_SOURCE_DIR, name);
    return buf[k];
}

/* A copy of vector `from` named `name` in the scratch directory, then
 * `edit` (a shell command run inside it). */
static const char *broken(const char *name, const char *from, const char *edit)
{
    static char dir[4][512];
    static int k;
    char cmd[2048];

    k = (k + 1) % 4;
    snprintf(dir[k], sizeof dir[k], "%s/%s", scratch, name);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s' && cd '%s' && %s", dir[k],
             vector(from), dir[k], dir[k], edit);
    cr_assert_eq(system(cmd), 0, "cannot make %s: %s", name, cmd);
    return dir[k];
}

/* Every way of reading a snapshot's trace fails the same way. */
static void all_fail_with(const char *dir, const char *const *texts, size_t n)
{
    static const char *const cmds[] = {
        "packets '%s'",           "packets '%s' --id 0x10",         "packets '%s' --id all",
        "decode '%s'",            "decode '%s' --format json",      "decode '%s' --format addr",
        "decode '%s' --id 0x10",  "decode '%s' --id all --format addr",
    };

    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        char args[1024];
        tb_cli_run o;

        snprintf(args, sizeof args, cmds[c], dir);
        o = tb_test_run("%s", args);
        cr_expect_eq(o.status, 4, "%s: exit %d, not 4", args, o.status);
        cr_expect_eq(o.out_len, 0, "%s printed to stdout:\n%s", args, o.out);
        for (size_t i = 0; i < n; i++)
            tb_test_err_has(&o, texts[i]);
        /* The old messages that hid the cause. */
        tb_test_err_lacks(&o, "no ETMv3/PTM trace source with trace ID");
        tb_test_err_lacks(&o, "choose one with --id");
        tb_test_err_lacks(&o, "0xffffffff");
        tb_test_run_done(&o);
    }
}

TestSuite(cli_errors, .init = scratch_init, .fini = scratch_fini);

Test(cli_errors, missing_register_is_named)
{
    static const char *const regs[] = {"ETMCR", "ETMIDR", "ETMCCER", "ETMTRACEIDR"};

    for (size_t r = 0; r < 4; r++) {
        char edit[128], name[32], want[96];
        const char *texts[3] = {want, "source_0.ini", "ETM_0"};
        const char *dir;

        snprintf(edit, sizeof edit, "sed -i '/^%s(/d' source_0.ini", regs[r]);
        snprintf(name, sizeof name, "no_%s", regs[r]);
        snprintf(want, sizeof want, "register %s missing", regs[r]);
        dir = broken(name, "irq_fiq-etmv3", edit);
        all_fail_with(dir, texts, 3);
    }
}

Test(cli_errors, unsupported_type_is_named)
{
    static const char *const types[] = {"ETE", "ETM4.2", "STM"};

    for (size_t t = 0; t < 3; t++) {
        char edit[128], name[32], want[96];
        const char *texts[3] = {want, "not supported", "tracebench decodes ETMv3"};
        const char *dir;

        snprintf(edit, sizeof edit, "sed -i 's/^type=.*/type=%s/' source_0.ini", types[t]);
        snprintf(name, sizeof name, "type_%zu", t);
        snprintf(want, sizeof want, "source ETM_0 (type %s)", types[t]);
        dir = broken(name, "irq_fiq-etmv3", edit);
        all_fail_with(dir, texts, 3);
    }
}

Test(cli_errors, etmidr_contradicting_the_type_is_named)
{
    const char *dir = broken("contra", "irq_fiq-etmv3",
                             "sed -i 's/^type=.*/type=PTM1.1/' source_0.ini");
    const char *texts[] = {"type PTM1.1", "ETMIDR 0x410CF250 names ETMv3.5", "fix type="};

    all_fail_with(dir, texts, 3);
}

/* A source of another protocol beside an ETMv3/PTM one: a note, and the
 * decodable source is the only one (decode needs no --id). */
Test(cli_errors, unsupported_source_beside_a_good_one)
{
    const char *dir = broken("beside", "two_sources-ptm-etmv3",
                             "sed -i 's/^type=.*/type=ETE/' source_1.ini");
    char want[1100];
    tb_cli_run o;

    o = tb_test_run("decode '%s' --format addr", dir);
    cr_expect_eq(o.status, 0);
    tb_test_err_has(&o, "note: skipped ETM_1");
    tb_test_err_has(&o, "(type ETE) is not supported");
    snprintf(want, sizeof want, "%s/decode-0x10.addr", dir);
    {
        char *w = tb_test_slurp(want, NULL);
        cr_expect_str_eq(o.out, w, "decode differs from %s", want);
        free(w);
    }
    tb_test_run_done(&o);
    o = tb_test_run("decode '%s' --id 0x11", dir);
    cr_expect_eq(o.status, 4);
    tb_test_err_has(&o, "source ETM_1 (type ETE) is not supported");
    tb_test_run_done(&o);
    o = tb_test_run("decode '%s' --id 0x12", dir);
    cr_expect_eq(o.status, 4);
    tb_test_err_has(&o, "no trace source with trace ID 0x12");
    tb_test_err_has(&o, "0x10 (PTM_0)");
    tb_test_run_done(&o);
    o = tb_test_run("packets '%s'", dir);
    cr_expect_eq(o.status, 0);
    tb_test_err_has(&o, "note: skipped ETM_1");
    cr_expect(strstr(o.out, "# source PTM_0"), "%s", o.out);
    tb_test_run_done(&o);
}

/* A dump no decode needs (another core's, past 32 bits and at an odd
 * address) does not stop packets or decode; the decoded core's own one
 * stops decode only, and says why. */
Test(cli_errors, unrelated_dump_address)
{
    const char *dir = broken("odd", "irq_fiq-etmv3",
                             "printf '[device]\\nname=cpu_9\\nclass=core\\ntype=Cortex-A57\\n"
                             "[dump1]\\nfile=mem_0_0.bin\\naddress=0xFFFFFF8000081001\\n' "
                             "> core_9.ini && sed -i 's/^device1=source_0.ini/device1=source_0"
                             ".ini\\ndevice2=core_9.ini/' snapshot.ini");
    char want[1100];
    char *w;
    tb_cli_run o;

    o = tb_test_run("packets '%s'", dir);
    cr_expect_eq(o.status, 0);
    cr_expect(strstr(o.out, "# source ETM_0"));
    tb_test_run_done(&o);
    o = tb_test_run("decode '%s' --format addr", dir);
    cr_expect_eq(o.status, 0);
    snprintf(want, sizeof want, "%s/decode.addr", dir);
    w = tb_test_slurp(want, NULL);
    cr_expect_str_eq(o.out, w);
    free(w);
    tb_test_run_done(&o);

    dir = broken("odd_own", "irq_fiq-etmv3",
                 "printf '\\n[dump2]\\nfile=mem_0_0.bin\\naddress=0x100000001\\n' >> core_0.ini");
    o = tb_test_run("packets '%s'", dir);
    cr_expect_eq(o.status, 0);
    tb_test_run_done(&o);
    o = tb_test_run("decode '%s'", dir);
    cr_expect_eq(o.status, 4);
    tb_test_err_has(&o, "core_0.ini: dump mem_0_0.bin of core cpu_0 is at 0x100000001");
    tb_test_err_has(&o, "beyond the 32-bit address space");
    tb_test_run_done(&o);

    /* The protocol is checked before the memory map. */
    dir = broken("odd_ete", "irq_fiq-etmv3",
                 "printf '\\n[dump2]\\nfile=mem_0_0.bin\\naddress=0x100000001\\n' >> core_0.ini"
                 " && sed -i 's/^type=.*/type=ETE/' source_0.ini");
    o = tb_test_run("decode '%s' --format addr", dir);
    cr_expect_eq(o.status, 4);
    tb_test_err_has(&o, "(type ETE) is not supported");
    tb_test_err_lacks(&o, "beyond");
    tb_test_run_done(&o);
}

Test(cli_errors, bad_values_name_the_accepted_ones)
{
    const char *v = vector("irq_fiq-etmv3");
    static const struct {
        const char *args, *text;
    } cases[] = {
        {"decode '%s' --format xml", "--format xml: use text, json or addr"},
        {"decode '%s' --format", "--format needs a value"},
        {"decode '%s/trace_buffer.bin' --protocol foo", "--protocol foo: use etmv3, ptm, etmv1 or etmv2"},
        {"packets '%s/trace_buffer.bin' --protocol foo", "--protocol foo: use etmv3, ptm, etmv1 or etmv2"},
        {"decode '%s' --id 0x99", "--id 0x99: out of range"},
        {"packets '%s' --id 0x99", "--id 0x99: out of range"},
        {"decode '%s' --id zz", "--id zz: not a trace ID"},
        {"decode '%s' --id", "--id needs a value"},
        {"decode '%s' --bogus", "unknown option '--bogus'"},
        {"decode '%s' --protocol ptm", "--protocol is for a raw trace file"},
        {"decode '%s/trace_buffer.bin'", "give --protocol etmv3|ptm"},
        {"packets '%s/trace_buffer.bin'", "give --protocol etmv3|ptm"},
        {"decode '%s/trace_buffer.bin' --protocol etmv3", "needs the code that ran"},
        {"decode '%s/trace_buffer.bin' --protocol etmv3 --memory 0x1zz:x", "--memory 0x1zz:x"},
        {"packets '%s/trace_buffer.bin' --protocol etmv3 --options ca,zz", "--options ca,zz"},
        {"packets '%s/trace_buffer.bin' --protocol etmv3 --options ca,,ts",
         "--options ca,,ts: an empty item"},
        {"decode '%s/trace_buffer.bin' --protocol etmv3 --memory x --options ca,",
         "--options ca,: an empty item"},
        {"packets '%s/trace_buffer.bin' --protocol etmv3 --etmidr 0x411CF312",
         "names PFT1.1 (PTM), not --protocol etmv3"},
        {"packets '%s/trace_buffer.bin' --protocol etmv3 --etmcr 1x", "--etmcr 1x: not a"},
        {"packets '%s/trace_buffer.bin' --protocol etmv3 --id 0x11 --traceid 0x10",
         "disagree"},
        {"packets '%s/trace_buffer.bin' --protocol etmv3 --formatted --id 0x7f",
         "cannot pick a source in formatted trace"},
        {"decode '%s/trace_buffer.bin' --protocol etmv3 --raw", "--raw ADDR is sim's"},
        {"decode '%s/trace_buffer.bin' --protocol etmv3 --buffer frames",
         "--buffer frames: use coresight"},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[2048];
        tb_cli_run o;

        snprintf(args, sizeof args, cases[i].args, v);
        o = tb_test_run("%s", args);
        cr_expect_eq(o.status, 2, "%s: exit %d, not 2 (usage)", args, o.status);
        cr_expect_eq(o.out_len, 0, "%s: a usage error on stdout", args);
        tb_test_err_has(&o, cases[i].text);
        tb_test_run_done(&o);
    }
}

Test(cli_errors, help_goes_to_stdout)
{
    static const char *const cmds[] = {"packets", "decode"};

    for (size_t c = 0; c < 2; c++) {
        char want[64];
        tb_cli_run o;

        snprintf(want, sizeof want, "usage: tracebench %s", cmds[c]);
        o = tb_test_run("%s --help", cmds[c]);
        cr_expect_eq(o.status, 0);
        cr_expect(strstr(o.out, want), "%s --help: %s", cmds[c], o.out);
        cr_expect(strstr(o.out, "--protocol"), "the raw-file options are not in the usage");
        cr_expect(strstr(o.out, "--id ID|all"));
        cr_expect_str_eq(o.err, "");
        tb_test_run_done(&o);
        o = tb_test_run("%s %s -h", cmds[c], vector("irq_fiq-etmv3"));
        cr_expect_eq(o.status, 0);
        cr_expect(strstr(o.out, want));
        tb_test_run_done(&o);
        /* A usage error: stderr, exit 2, one line naming the argument
         * and where the usage is (not the whole usage). */
        o = tb_test_run("%s --nonsense", cmds[c]);
        cr_expect_eq(o.status, 2);
        cr_expect_eq(o.out_len, 0);
        tb_test_err_has(&o, "unknown option '--nonsense'");
        tb_test_err_has(&o, "--help for usage");
        tb_test_err_lacks(&o, want);
        tb_test_run_done(&o);
    }
}

Test(cli_errors, write_errors_fail)
{
    static const char *const cmds[] = {
        "decode '%s'", "decode '%s' --format json", "decode '%s' --format addr",
        "decode '%s' --id all --format addr", "packets '%s'", "packets '%s' --json",
    };
    const char *v = vector("irq_fiq-etmv3");
    tb_cli_run o;

    if (access("/dev/full", W_OK) != 0) {
        fprintf(stderr, "\n*** SKIPPED: /dev/full absent ***\n\n");
        cr_skip_test("no /dev/full");
    }
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        char args[2048];

        snprintf(args, sizeof args, cmds[c], v);
        o = tb_test_run_to("/dev/full", "%s", args);
        cr_expect_eq(o.status, 4, "%s > /dev/full: exit %d", args, o.status);
        tb_test_err_has(&o, "cannot write the output");
        tb_test_run_done(&o);
    }
    o = tb_test_run_to("/dev/full", "decode --help");
    cr_expect_eq(o.status, 4);
    tb_test_run_done(&o);
}

/* The first dump address of a vector's core_0.ini. */
static unsigned long dump_address(const char *dir)
{
    char path[1100], *text, *a;
    unsigned long addr;

    snprintf(path, sizeof path, "%s/core_0.ini", dir);
    text = tb_test_slurp(path, NULL);
    a = strstr(text, "address=");
    cr_assert(a, "%s has no dump", path);
    addr = strtoul(a + 8, NULL, 0);
    free(text);
    return addr;
}

static void expect_file_eq(const char *out, const char *dir, const char *file, const char *what)
{
    char path[1200];
    char *want;

    snprintf(path, sizeof path, "%s/%s", dir, file);
    want = tb_test_slurp(path, NULL);
    cr_expect_str_eq(out, want, "%s differs from %s", what, path);
    free(want);
}

/* A raw trace buffer file decodes as its snapshot does: the committed
 * decode.addr. */
Test(cli_errors, raw_file_decodes_as_its_snapshot)
{
    const char *v = vector("arm_basic-ptm-raw");
    char elf[1100];
    tb_cli_run o;

    /* Registers and a memory dump, as source_0.ini and core_0.ini have them. */
    o = tb_test_run("decode '%s/trace_buffer.bin' --protocol ptm --etmcr 0 --etmidr 0x410CF310 "
            "--etmccer 0x30C00000 --traceid 0x10 --buffer raw --memory 0x%lx:'%s/mem_0_0.bin' "
            "--format addr", v, dump_address(v), v);
    cr_expect_eq(o.status, 0);
    expect_file_eq(o.out, v, "decode.addr", "raw-file decode (registers)");
    tb_test_run_done(&o);
    /* The defaults are PFT1.1, plain, ID 0x10: the same. */
    o = tb_test_run("decode '%s/trace_buffer.bin' --protocol ptm --memory 0x%lx:'%s/mem_0_0.bin' "
            "--format addr", v, dump_address(v), v);
    cr_expect_eq(o.status, 0);
    expect_file_eq(o.out, v, "decode.addr", "raw-file decode (defaults)");
    tb_test_run_done(&o);
    /* The program's ELF, when the vector programs are built. */
    snprintf(elf, sizeof elf, "%s/vectors/programs/arm_basic.elf", TB_BINARY_DIR);
    if (access(elf, R_OK) == 0) {
        o = tb_test_run("decode '%s/trace_buffer.bin' --protocol ptm --memory '%s' --format addr", v,
                elf);
        cr_expect_eq(o.status, 0);
        expect_file_eq(o.out, v, "decode.addr", "raw-file decode (ELF)");
        tb_test_run_done(&o);
    } else {
        fprintf(stderr, "note: %s not built: the ELF case is not run\n", elf);
    }

    /* CoreSight-formatted, cycle-accurate with timestamps (--options). */
    v = vector("irq_fiq-etmv3-ca-ts");
    o = tb_test_run("decode '%s/trace_buffer.bin' --protocol etmv3 --options ca,ts --formatted "
            "--id 0x10 --memory 0x%lx:'%s/mem_0_0.bin' --format addr", v, dump_address(v), v);
    cr_expect_eq(o.status, 0);
    expect_file_eq(o.out, v, "decode.addr", "raw formatted-file decode (--options)");
    tb_test_run_done(&o);
    {
        tb_cli_run a = tb_test_run("packets '%s/trace_buffer.bin' --protocol etmv3 --options ca,ts "
                        "--formatted --json", v);
        tb_cli_run b = tb_test_run("packets '%s' --json", v);

        cr_expect_eq(a.status, 0);
        cr_expect_eq(b.status, 0);
        cr_expect_str_eq(a.out, b.out, "packets of the raw file differ from the snapshot's");
        tb_test_run_done(&a);
        tb_test_run_done(&b);
    }
    /* DIR/snapshot.ini stands for DIR. */
    o = tb_test_run("decode '%s/snapshot.ini' --format addr", v);
    cr_expect_eq(o.status, 0);
    expect_file_eq(o.out, v, "decode.addr", "decode DIR/snapshot.ini");
    tb_test_run_done(&o);
}

/* The lines of `text` that start with `tag`, without it. */
static char *untag(const char *text, const char *tag)
{
    size_t n = strlen(tag), len = 0;
    char *out = malloc(strlen(text) + 1);

    cr_assert(out);
    while (*text) {
        const char *nl = strchr(text, '\n');
        size_t line = nl ? (size_t)(nl - text) + 1 : strlen(text);

        if (line >= n && !strncmp(text, tag, n)) {
            memcpy(out + len, text + n, line - n);
            len += line - n;
        }
        text += line;
    }
    out[len] = '\0';
    return out;
}

Test(cli_errors, id_all_tags_each_line)
{
    const char *v = vector("two_sources-ptm-etmv3");
    tb_cli_run o, one;
    char *part;

    o = tb_test_run("decode '%s' --id all --format addr", v);
    cr_expect_eq(o.status, 0);
    part = untag(o.out, "0x10: ");
    expect_file_eq(part, v, "decode-0x10.addr", "--id all, 0x10");
    free(part);
    part = untag(o.out, "0x11: ");
    expect_file_eq(part, v, "decode-0x11.addr", "--id all, 0x11");
    free(part);
    tb_test_run_done(&o);

    o = tb_test_run("decode '%s' --id all", v);
    one = tb_test_run("decode '%s' --id 0x11", v);
    cr_expect_eq(o.status, 0);
    part = untag(o.out, "0x11: ");
    cr_expect_str_eq(part, one.out, "--id all text, 0x11, differs from --id 0x11");
    free(part);
    tb_test_run_done(&o);
    tb_test_run_done(&one);

    o = tb_test_run("decode '%s' --id all --format json", v);
    cr_expect_eq(o.status, 0);
    cr_expect(!strncmp(o.out, "{\"id\":16,", 9), "%.80s", o.out);
    cr_expect(strstr(o.out, "\n{\"id\":17,"), "no object of 0x11");
    tb_test_run_done(&o);

    o = tb_test_run("decode '%s' --format addr", v);
    cr_expect_eq(o.status, 4);
    tb_test_err_has(&o, "0x10 (PTM_0), 0x11 (ETM_1)");
    tb_test_err_has(&o, "--id all");
    tb_test_run_done(&o);

    o = tb_test_run("packets '%s' --id all --json", v);
    one = tb_test_run("packets '%s' --json", v);
    cr_expect_eq(o.status, 0);
    cr_expect_str_eq(o.out, one.out, "packets --id all differs from the default (all)");
    tb_test_run_done(&o);
    tb_test_run_done(&one);
}

/* The real snapshots: decode with no --id where exactly one source is
 * decodable, --id all where there are several. */
Test(cli_errors, reference_snapshots)
{
    const char *ref = tb_test_reference_dir("cli_errors: real snapshots");
    char dir[1100];
    tb_cli_run o, one;
    char *part;

    if (!ref)
        return;
    /* trace_cov_a15: five sources named, one captured. */
    snprintf(dir, sizeof dir, "%s/opencsd-snapshots/trace_cov_a15", ref);
    for (int f = 0; f < 3; f++) {
        static const char *const fmts[] = {"text", "json", "addr"};

        o = tb_test_run("decode '%s' --format %s", dir, fmts[f]);
        cr_expect_eq(o.status, 0, "trace_cov_a15 --format %s", fmts[f]);
        cr_expect_gt(o.out_len, 0);
        tb_test_run_done(&o);
    }
    /* TC2: five ETMv3/PTM sources and an ITM. */
    snprintf(dir, sizeof dir, "%s/opencsd-snapshots/TC2", ref);
    o = tb_test_run("decode '%s' --format addr", dir);
    cr_expect_eq(o.status, 4);
    tb_test_err_has(&o, "0x13 (PTM_0)");
    tb_test_err_has(&o, "--id all");
    tb_test_run_done(&o);
    o = tb_test_run("decode '%s' --id all --format addr", dir);
    one = tb_test_run("decode '%s' --id 0x13 --format addr", dir);
    cr_expect_eq(o.status, 0);
    tb_test_err_has(&o, "skipped ITM_0");
    tb_test_err_has(&o, "(type ITM) is not supported");
    part = untag(o.out, "0x13: ");
    cr_expect_str_eq(part, one.out, "TC2 --id all, 0x13, differs from --id 0x13");
    cr_expect_gt(strlen(part), 0);
    free(part);
    tb_test_run_done(&o);
    tb_test_run_done(&one);
    o = tb_test_run("packets '%s'", dir);
    cr_expect_eq(o.status, 0);
    tb_test_err_has(&o, "skipped ITM_0");
    tb_test_run_done(&o);
    o = tb_test_run("decode '%s' --id 0x15", dir);
    cr_expect_eq(o.status, 4);
    tb_test_err_has(&o, "no trace source with trace ID 0x15");
    tb_test_run_done(&o);
}

/* `tracebench --help` and `tracebench CMD --help` print the usage on
 * stdout and exit 0, for every command; a bare `tracebench` is a usage
 * error (stderr, exit 2).  sim, roundtrip, vectors and stats printed it on
 * stderr with exit 2. */
Test(cli_errors, every_command_has_help_on_stdout)
{
    static const char *const cmds[] = {"--help", "packets --help", "decode --help",
                                       "stats --help", "sim --help", "roundtrip --help",
                                       "vectors --help", "gen --help", "decode -h"};

    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char *out, *err;
        int st = tb_test_run_cli(cmds[i], NULL, &out, NULL, &err);

        /* sim, roundtrip and vectors exist only with the simulator. */
        if (st == 2 && strstr(err, "unknown command")) {
            free(out);
            free(err);
            continue;
        }
        cr_expect_eq(st, 0, "tracebench %s: exit %d, stderr: %s", cmds[i], st, err);
        cr_expect(strstr(out, "usage: tracebench"), "tracebench %s: no usage on stdout",
                  cmds[i]);
        cr_expect_str_empty(err, "tracebench %s: stderr: %s", cmds[i], err);
        free(out);
        free(err);
    }
}
