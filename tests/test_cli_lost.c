/*
 * Decoding your own trace with the wrong flags: `packets`, `decode` and
 * `stats` say on stderr that trace was lost, the likely cause and the
 * flag to try, and exit 5; a complete decode, gaps from the filter or a
 * FIFO overflow among it, exits 0 with nothing on stderr.  Every decode
 * format shows where trace was lost (addr: a `# lost WHY at index N`
 * line, docs/vectors.md).
 *
 * Before this, each of these ended with exit 0 and nothing on stderr:
 * TC2's CoreSight-formatted ETB dump read without --formatted (38 of
 * 1057 instructions), with --formatted but without ca (one range), 1 MiB
 * of random bytes as PTM, and one flipped bit in an ETMv3 vector (its
 * addr listing just ended after 365 of 2000 instructions).
 *
 * The real dumps are the reference traces (TB_REFERENCE_DIR, read in
 * place); the raw traces are made here by `tracebench sim`.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb_test.h"

static char scratch[256];

static void scratch_init(void)
{
    snprintf(scratch, sizeof scratch, "/tmp/tb_cli_lost_%d", (int)getpid());
    mkdir(scratch, 0777);
}

static void scratch_fini(void)
{
    char cmd[512];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    (void)system(cmd);
}

TestSuite(cli_lost, .init = scratch_init, .fini = scratch_fini);

/* The three commands on one input (ARGS after the command): each exits
 * `status` and says each of texts on stderr (decode and stats decode;
 * packets parses only, so it sees bad packets and A-syncs, not atoms
 * without an address: packets_too false leaves it out). */
static void all_three(const char *args, bool packets_too, int status,
                      const char *const *texts, size_t n)
{
    static const char *const cmds[] = {"decode", "stats", "packets"};

    for (size_t c = 0; c < (packets_too ? 3u : 2u); c++) {
        tb_cli_run o = tb_test_run("%s %s", cmds[c], args);
        char lead[64];

        cr_expect_eq(o.status, status, "%s %s: exit %d, not %d", cmds[c], args, o.status,
                     status);
        for (size_t i = 0; i < n; i++)
            tb_test_err_has(&o, texts[i]);
        if (!n) {
            /* A complete decode says nothing (a note on a source of
             * another type passed over is no warning). */
            snprintf(lead, sizeof lead, "tracebench %s: ", cmds[c]);
            for (const char *l = o.err; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
                if (!strncmp(l, lead, strlen(lead)))
                    cr_expect(!strncmp(l + strlen(lead), "note: ", 6), "%s: %s", cmds[c], l);
        }
        tb_test_run_done(&o);
    }
}

static const char *tc2(void)
{
    static char dir[1024];
    const char *ref = tb_test_reference_dir("decoding TC2's ETB dump with the wrong flags");

    if (!ref)
        return NULL;
    snprintf(dir, sizeof dir, "%s/opencsd-snapshots/TC2", ref);
    return dir;
}

/* TC2's ETB dump (cstrace.bin, CoreSight frames of sources 0x10-0x14)
 * as a raw trace file, with its memory (kernel_dump.bin at 0xC0008000,
 * cpu_0.ini). */
#define TC2_FILE "'%s/cstrace.bin' --memory '0xC0008000:%s/kernel_dump.bin'"

Test(cli_lost, formatted_dump_read_raw)
{
    const char *d = tc2();
    char args[2048];
    const char *const texts[] = {"bad packets after sync", "looks CoreSight-formatted",
                                 "trace IDs 0x10, 0x11, 0x12 and 0x13",
                                 "give --buffer coresight and --id ID"};

    if (!d)
        return;
    snprintf(args, sizeof args, TC2_FILE " --protocol etmv3 --options ca,ts --id 0x10", d, d);
    all_three(args, true, 5, texts, 4);
    /* The same dump read as it is: complete, exit 0, no warning. */
    snprintf(args, sizeof args,
             TC2_FILE " --protocol etmv3 --options ca,ts --buffer coresight --id 0x10", d, d);
    all_three(args, true, 0, NULL, 0);
    snprintf(args, sizeof args, TC2_FILE " --protocol ptm --options ca,ts --formatted --id 0x13",
             d, d);
    all_three(args, true, 0, NULL, 0);
}

Test(cli_lost, cycle_accurate_read_without_ca)
{
    const char *d = tc2();
    char args[2048];
    const char *const ptm[] = {"5 bad packets after sync", "cycle-accurate (ca)",
                               "--options"};
    const char *const etm[] = {"atoms came with no address", "misread", "cycle-accurate (ca)"};
    tb_cli_run o;

    if (!d)
        return;
    /* PTM: the cycle counts read as other packets break the protocol. */
    snprintf(args, sizeof args, TC2_FILE " --protocol ptm --options ts --formatted --id 0x13", d,
             d);
    all_three(args, true, 5, ptm, 3);
    /* ETMv3: every P-header reads as a valid one of the other form, so
     * nothing is bad, but the atoms fit no address. */
    snprintf(args, sizeof args, TC2_FILE " --protocol etmv3 --formatted --id 0x10", d, d);
    all_three(args, false, 5, etm, 3);
    /* A formatted file with an ID its frames do not carry: a note
     * naming the ones they do. */
    o = tb_test_run("decode " TC2_FILE " --protocol etmv3 --formatted --id 0x20", d, d);
    cr_expect_eq(o.status, 0);
    tb_test_err_has(&o, "no trace for trace ID 0x20");
    tb_test_err_has(&o, "0x10, 0x11, 0x12 and 0x13");
    tb_test_run_done(&o);
}

/* 1 MiB of random bytes (no run of five zeros, so no A-sync). */
static const char *random_file(void)
{
    static char path[512];
    FILE *f;
    uint64_t seed = 1;

    snprintf(path, sizeof path, "%s/random.bin", scratch);
    f = fopen(path, "wb");
    cr_assert_not_null(f);
    for (size_t i = 0; i < (1u << 20); i++)
        fputc((int)((tb_test_rand(&seed) & 0xFF) | (i % 4 == 0)), f);
    fclose(f);
    return path;
}

Test(cli_lost, random_bytes)
{
    const char *f = random_file();
    char args[1024];
    const char *const texts[] = {"no A-sync in 1048576 bytes", "nothing was decoded",
                                 "(--buffer coresight)", "--protocol etmv3|ptm"};
    tb_cli_run o;

    snprintf(args, sizeof args, "'%s' --protocol ptm --memory '0:%s'", f, f);
    all_three(args, true, 5, texts, 4);
    o = tb_test_run("decode %s --format addr", args);
    cr_expect_eq(o.status, 5);
    cr_expect_str_eq(o.out, "# lost no-async at index 0\n");
    tb_test_run_done(&o);
}

/* One bit flipped in a committed vector: the P-header at byte 40 of
 * data_loop-etmv3-trigger-raw (a raw buffer: byte = stream index), 0xBC
 * (format 1, 15 E atoms), becomes 0xBE, reserved outside
 * cycle-accurate trace (IHI0014Q 7.3.1).  Everything after it up to the
 * next A-sync (none) is lost. */
static const char *flipped(void)
{
    static char dir[512];
    char cmd[4096];

    snprintf(dir, sizeof dir, "%s/flipped", scratch);
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s' && cp -r '%s/vectors/generated/data_loop-etmv3-trigger-raw' '%s' && "
             "test \"$(od -An -tx1 -j40 -N1 '%s/trace_buffer.bin')\" = ' bc' && "
             "printf '\\276' | dd of='%s/trace_buffer.bin' bs=1 seek=40 conv=notrunc 2>/dev/null",
             dir, TB_SOURCE_DIR, dir, dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    return dir;
}

Test(cli_lost, one_flipped_bit_every_format)
{
    const char *dir = flipped();
    const char *const texts[] = {"1 bad packet after sync (the first at index 40)",
                                 "the trace after each, up to the next A-sync, is lost"};
    char want_path[1024], args[1024];
    char *want;
    size_t keep = 0;
    tb_cli_run o;

    snprintf(args, sizeof args, "'%s'", dir);
    all_three(args, true, 5, texts, 2);

    /* addr: the instructions before the loss, as the vector's expected
     * decode has them, then where and why the rest was lost. */
    snprintf(want_path, sizeof want_path, "%s/decode.addr", dir);
    want = tb_test_slurp(want_path, NULL);
    o = tb_test_run("decode '%s' --format addr", dir);
    cr_expect_eq(o.status, 5);
    {
        const char *lost = strstr(o.out, "# lost bad-packet at index 40\n");

        cr_assert_not_null(lost, "no # lost line:\n%.300s", o.out);
        keep = (size_t)(lost - o.out);
        cr_expect_str_eq(lost, "# lost bad-packet at index 40\n", "the line is not the last");
        cr_expect_gt(keep, 0);
        cr_expect(!strncmp(o.out, want, keep), "the lines before the loss differ from "
                                               "decode.addr");
        cr_expect_lt(keep, strlen(want), "nothing was lost?");
    }
    tb_test_run_done(&o);
    free(want);
    o = tb_test_run("decode '%s' --format addr --id all", dir);
    cr_expect_eq(o.status, 5);
    tb_test_out_has(&o, "\n0x10: # lost bad-packet at index 40\n");
    tb_test_run_done(&o);
    o = tb_test_run("decode '%s'", dir);
    cr_expect_eq(o.status, 5);
    tb_test_out_has(&o, "\n40 NO_SYNC reason=bad-packet");
    /* END at the trace's last byte (169 bytes): the trace went on
     * after the loss, and none of it was decoded.  It said "0 END". */
    cr_expect(o.out_len > 8 && !strcmp(o.out + o.out_len - 8, "168 END\n"), "%s",
              o.out_len > 40 ? o.out + o.out_len - 40 : o.out);
    tb_test_run_done(&o);
    o = tb_test_run("decode '%s' --format json", dir);
    cr_expect_eq(o.status, 5);
    tb_test_out_has(&o, "{\"index\":40,\"kind\":\"NO_SYNC\",\"reason\":\"bad-packet\"");
    tb_test_run_done(&o);
}

/* Gaps from the ViewInst filter and from a FIFO overflow are part of a
 * correct decode: exit 0, no warning. */
Test(cli_lost, filter_and_overflow_gaps_keep_exit_0)
{
    static const char *const vectors[] = {"irq_fiq-etmv3-exclude", "far_branch-ptm-rs-wp3",
                                          "data_loop-etmv3-data-suppress",
                                          "long_run-etmv3-fifo-ca-ts"};

    for (size_t v = 0; v < sizeof vectors / sizeof vectors[0]; v++) {
        char args[1024], path[1024];
        char *want;
        tb_cli_run o;

        snprintf(args, sizeof args, "'%s/vectors/generated/%s'", TB_SOURCE_DIR, vectors[v]);
        all_three(args, true, 0, NULL, 0);
        snprintf(path, sizeof path, "%s/vectors/generated/%s/decode.addr", TB_SOURCE_DIR,
                 vectors[v]);
        want = tb_test_slurp(path, NULL);
        cr_expect(strstr(want, "# gap "), "%s has no gap: pick another vector", vectors[v]);
        o = tb_test_run("decode %s --format addr", args);
        cr_expect_eq(o.status, 0);
        cr_expect_str_eq(o.out, want, "%s", vectors[v]);
        tb_test_run_done(&o);
        free(want);
    }
}

/* Raw traces of the emulator's runs, long and with small addresses (no
 * reserved trace ID by chance), decoded with the wrong configuration:
 * the warning names the configuration, and never calls them formatted
 * (a frame test alone took them for formatted). */
Test(cli_lost, raw_runs_are_not_called_formatted)
{
    static const struct {
        const char *prog, *proto, *made, *read;
    } runs[] = {
        {"recursion", "etmv3", "ctxid=4", "plain"},
        {"recursion", "ptm", "ca", "plain"},
        {"long_run", "etmv3", "ca", "plain"},
    };

    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        char dir[512], args[2048];
        tb_cli_run o;

        snprintf(dir, sizeof dir, "%s/%s-%s-%zu", scratch, runs[r].prog, runs[r].proto, r);
        o = tb_test_run("sim '%s/vectors/programs/%s.elf' --scenario '%s/vectors/programs/%s.ini' "
                "--protocol %s --options %s --buffer raw --out '%s' --max 200000 --quiet",
                TB_BINARY_DIR, runs[r].prog, TB_SOURCE_DIR, runs[r].prog, runs[r].proto,
                runs[r].made, dir);
        cr_assert_eq(o.status, 0);
        tb_test_run_done(&o);
        snprintf(args, sizeof args,
                 "'%s/trace_buffer.bin' --protocol %s --options %s --memory '%s/vectors/"
                 "programs/%s.elf'",
                 dir, runs[r].proto, runs[r].read, TB_BINARY_DIR, runs[r].prog);
        o = tb_test_run("decode %s --format addr", args);
        cr_expect_eq(o.status, 5, "%s read as %s", runs[r].made, runs[r].read);
        tb_test_err_lacks(&o, "formatted (its");
        tb_test_err_has(&o, "is --options as the trace was made");
        tb_test_run_done(&o);
    }
}
