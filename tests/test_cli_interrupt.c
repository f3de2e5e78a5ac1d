/*
 * Ctrl-C during `tracebench sim --out DIR` (issue 31 item 6): the run
 * stops at the next instruction, the snapshot is finished with what was
 * traced (snapshot.ini written, no trace_buffer.bin.part left), marked
 * as cut short (description= in [snapshot]), the summary is printed, and
 * the exit status is 128 + the signal.  It left a .part file and no
 * snapshot.ini.
 *
 * The program spins for ever (Thumb `b .`, --max unlimited), so only the
 * signal ends it; the test waits until the buffer file has grown before
 * it sends one.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tb_test.h"

static char scratch[256];

static void scratch_init(void)
{
    snprintf(scratch, sizeof scratch, "/tmp/tb_cli_interrupt_%d", (int)getpid());
    mkdir(scratch, 0777);
}

static void scratch_fini(void)
{
    char cmd[512];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    (void)system(cmd);
}

TestSuite(cli_interrupt, .init = scratch_init, .fini = scratch_fini);

static long file_size(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Starts `tracebench sim SPIN --raw 0x8001 --max unlimited ARGS...`,
 * stderr into errpath; waits until `grow` has 64 KiB, sends sig; the
 * exit status (-1: not an exit). */
static int run_and_signal(const char *const *extra, const char *grow, const char *errpath,
                          int sig)
{
    char spin[512];
    const char *argv[24];
    size_t n = 0;
    pid_t pid;
    int st;
    FILE *f;

    /* Thumb: B . (0xE7FE). */
    snprintf(spin, sizeof spin, "%s/spin.bin", scratch);
    f = fopen(spin, "wb");
    cr_assert_not_null(f);
    fwrite("\xfe\xe7", 1, 2, f);
    fclose(f);
    argv[n++] = tb_test_cli();
    argv[n++] = "sim";
    argv[n++] = spin;
    argv[n++] = "--raw";
    argv[n++] = "0x8001";
    argv[n++] = "--max";
    argv[n++] = "unlimited";
    argv[n++] = "--quiet";
    for (size_t k = 0; extra[k]; k++)
        argv[n++] = extra[k];
    argv[n] = NULL;
    pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);

        dup2(fd, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    for (int i = 0; i < 3000 && file_size(grow) < 65536; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};

        nanosleep(&ts, NULL);
    }
    cr_assert_geq(file_size(grow), 65536, "%s did not grow", grow);
    kill(pid, sig);
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* "insns=N" in the summary. */
static unsigned long long summary_insns(const char *err)
{
    const char *p = strstr(err, "stop=interrupted insns=");

    cr_assert_not_null(p, "no summary:\n%s", err);
    return strtoull(p + strlen("stop=interrupted insns="), NULL, 10);
}

static void snapshot_cut_short(int sig, const char *name, const char *proto)
{
    char dir[512], part[600], ini[600], errpath[600], args[1200];
    const char *extra[] = {"--protocol", proto, "--out", dir, NULL};
    char *err, *text, *out, *err2;
    unsigned long long n;
    int status;

    snprintf(dir, sizeof dir, "%s/%s", scratch, name);
    snprintf(part, sizeof part, "%s/trace_buffer.bin.part", dir);
    snprintf(ini, sizeof ini, "%s/snapshot.ini", dir);
    snprintf(errpath, sizeof errpath, "%s/%s.err", scratch, name);
    status = run_and_signal(extra, part, errpath, sig);
    err = tb_test_slurp(errpath, NULL);
    fprintf(stderr, "%s", err);
    cr_expect_eq(status, 128 + sig, "exit %d", status);
    /* The summary, as a run that ended prints it. */
    cr_expect(strstr(err, "trace: "), "%s", err);
    n = summary_insns(err);
    cr_expect_gt(n, 0);
    cr_expect(strstr(err, sig == SIGINT ? "interrupted (SIGINT)" : "interrupted (SIGTERM)"),
              "%s", err);
    /* A whole snapshot: snapshot.ini, no .part, marked. */
    cr_expect_eq(file_size(part), -1, "the .part file is left");
    text = tb_test_slurp(ini, NULL);
    cr_expect(strstr(text, "[snapshot]\nversion=1.0\ndescription=cut short: the run was "
                           "interrupted"),
              "%s", text);
    free(text);
    /* ... that decodes to exactly the instructions the summary counts. */
    snprintf(args, sizeof args, "stats '%s' --json", dir);
    cr_expect_eq(tb_test_run_cli(args, NULL, &out, NULL, &err2), 0, "%s", err2);
    {
        char want[64];

        snprintf(want, sizeof want, "\"instructions\":%llu,", n);
        cr_expect(strstr(out, want), "summary %llu, decode: %s", n, out);
        cr_expect(strstr(out, "\"errors\":{\"total\":0,"), "%s", out);
    }
    free(out);
    free(err2);
    free(err);
}

Test(cli_interrupt, sigint_finishes_a_ptm_snapshot)
{
    snapshot_cut_short(SIGINT, "ptm", "ptm");
}

Test(cli_interrupt, sigterm_finishes_an_etmv3_snapshot)
{
    snapshot_cut_short(SIGTERM, "etmv3", "etmv3");
}

/* Without --out: the truth written so far is flushed, the summary
 * printed. */
Test(cli_interrupt, sigint_flushes_the_truth)
{
    char truth[512], errpath[512];
    const char *extra[] = {"--truth", truth, NULL};
    char *err;
    int status;

    snprintf(truth, sizeof truth, "%s/truth.txt", scratch);
    snprintf(errpath, sizeof errpath, "%s/truth.err", scratch);
    status = run_and_signal(extra, truth, errpath, SIGINT);
    err = tb_test_slurp(errpath, NULL);
    cr_expect_eq(status, 130, "%s", err);
    cr_expect_gt(summary_insns(err), 0);
    /* Whole lines only. */
    {
        size_t len;
        char *t = tb_test_slurp(truth, &len);

        size_t lines = 0;

        cr_expect_gt(len, 0);
        cr_expect_eq(t[len - 1], '\n');
        for (size_t i = 0; i < len; i++)
            lines += t[i] == '\n';
        /* The spin loop: one record per instruction. */
        cr_expect_eq(lines, summary_insns(err));
        free(t);
    }
    free(err);
}
