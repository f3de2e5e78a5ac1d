/*
 * The differential harnesses against OpenCSD (fuzz/fuzz_diff_ocsd.c) as
 * ordinary tests: every file in fuzz/regressions/ocsd_etmv3/ and
 * ocsd_ptm/, and every writer seed of fuzz/fuzz_seeds.c, goes through
 * the same function the fuzzers call; a difference that no documented
 * OpenCSD fault explains aborts inside the harness (a crashed test).
 * Kept apart from test_fuzz_regressions.c because it links OpenCSD's C
 * API (this file name does, tests/CMakeLists.txt).
 *
 * The harness must also be able to fail: the planted slip
 * (TB_FUZZ_OCSD_PLANT=1: our N atoms read as E) must make it abort on
 * a seed that has an N atom, which is checked in a child process.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tb_test.h"

#include "../fuzz/fuzz.h"
#include "../fuzz/fuzz_util.c"
#include "../fuzz/fuzz_seeds.c"
#include "../fuzz/fuzz_diff_ocsd.c"

static int replay(const char *harness, tb_fuzz_fn fn)
{
    char dir[1024], path[1400];
    DIR *d;
    struct dirent *e;
    int n = 0;

    snprintf(dir, sizeof dir, "%s/fuzz/regressions/%s", TB_SOURCE_DIR, harness);
    d = opendir(dir);
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        uint8_t *data;
        size_t len;

        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        data = tb_test_read_file(path, &len);
        cr_assert_not_null(data, "cannot read %s", path);
        fprintf(stderr, "replay %s/%s (%zu bytes)\n", harness, e->d_name, len);
        cr_assert_eq(fn(data, len), 0, "%s", path);
        free(data);
        n++;
    }
    closedir(d);
    return n;
}

/* Each regression input is a difference a documented OpenCSD fault
 * explains: with the signatures off the harness must report it (a child
 * that aborts), or the input proves nothing.  But for those named
 * ours-*: a fault of our decoder, fixed, where the two decoders now
 * agree outright, and harness-*: a false difference of the harness's own
 * comparison, fixed, where they always agreed; with the signatures off
 * the harness must accept both (ours = true: the child must exit
 * normally). */
static int needs_signature_or_none(const char *harness, tb_fuzz_fn fn, bool ours)
{
    char dir[1024], path[1400];
    DIR *d;
    struct dirent *e;
    int n = 0;

    snprintf(dir, sizeof dir, "%s/fuzz/regressions/%s", TB_SOURCE_DIR, harness);
    d = opendir(dir);
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        uint8_t *data;
        size_t len;
        int status;
        pid_t pid;

        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0 ||
            (strncmp(e->d_name, "ours-", 5) == 0 ||
             strncmp(e->d_name, "harness-", 8) == 0) != ours)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        data = tb_test_read_file(path, &len);
        cr_assert_not_null(data);
        fflush(NULL);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
            setenv("TB_FUZZ_OCSD_NO_SIGNATURES", "1", 1);
            fn(data, len);
            _exit(0);
        }
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        if (ours)
            cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "%s: a fault of ours, fixed, yet it differs from OpenCSD's decode "
                      "without the signatures", path);
        else
            cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
                      "%s passes without the fault signatures: it shows no OpenCSD fault",
                      path);
        free(data);
        n++;
    }
    closedir(d);
    return n;
}

Test(fuzz_ocsd, regression_inputs_fail_without_the_signatures)
{
    int n = needs_signature_or_none("ocsd_etmv3", tb_fuzz_ocsd_etmv3, false) +
            needs_signature_or_none("ocsd_ptm", tb_fuzz_ocsd_ptm, false);

    cr_assert_gt(n, 0, "no regression inputs");
    fprintf(stderr, "%d regression inputs need their signature\n", n);
}

Test(fuzz_ocsd, inputs_of_our_fixed_faults_agree_without_the_signatures)
{
    int n = needs_signature_or_none("ocsd_etmv3", tb_fuzz_ocsd_etmv3, true) +
            needs_signature_or_none("ocsd_ptm", tb_fuzz_ocsd_ptm, true);

    cr_assert_gt(n, 0, "no ours-* regression inputs");
    fprintf(stderr, "%d inputs of our fixed faults agree with OpenCSD\n", n);
}

Test(fuzz_ocsd, every_regression_file_passes)
{
    int n = replay("ocsd_etmv3", tb_fuzz_ocsd_etmv3) + replay("ocsd_ptm", tb_fuzz_ocsd_ptm);

    fprintf(stderr, "%d OpenCSD differential regression inputs replayed\n", n);
}

typedef struct seed_run {
    tb_fuzz_fn fn;
    int n;
} seed_run;

static int run_seed(void *ctx, const char *name, const uint8_t *data, size_t len)
{
    seed_run *r = ctx;

    cr_assert_eq(r->fn(data, len), 0, "seed %s", name);
    r->n++;
    return 0;
}

Test(fuzz_ocsd, writer_seeds_agree_with_opencsd)
{
    seed_run e = {tb_fuzz_ocsd_etmv3, 0}, p = {tb_fuzz_ocsd_ptm, 0};

    cr_assert_gt(tb_fuzz_seeds("ocsd_etmv3", run_seed, &e), 0);
    cr_assert_gt(tb_fuzz_seeds("ocsd_ptm", run_seed, &p), 0);
    fprintf(stderr, "%d ETMv3 and %d PTM seeds agree with OpenCSD\n", e.n, p.n);
}

/* The first walk seed (an encoder trace of a walk through the image,
 * with N atoms), run in a child with the planted slip: the child must
 * die by the harness's abort. */
typedef struct first_seed {
    uint8_t buf[8192];
    size_t len;
} first_seed;

static int take_seed(void *ctx, const char *name, const uint8_t *data, size_t len)
{
    first_seed *f = ctx;

    if (f->len || len > sizeof f->buf || !strstr(name, "-walk"))
        return 0;
    memcpy(f->buf, data, len);
    f->len = len;
    return 1;
}

static void planted(const char *harness, tb_fuzz_fn fn)
{
    first_seed f = {.len = 0};
    int status;
    pid_t pid;

    tb_fuzz_seeds(harness, take_seed, &f);
    cr_assert_gt(f.len, 0);
    /* Without the slip the seed agrees. */
    cr_assert_eq(fn(f.buf, f.len), 0);
    fflush(NULL);
    pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        setenv("TB_FUZZ_OCSD_PLANT", "1", 1);
        fn(f.buf, f.len);
        _exit(0); /* the slip went unseen */
    }
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
              "%s: the planted slip (N read as E) was not reported", harness);
}

Test(fuzz_ocsd, planted_slip_is_reported)
{
    planted("ocsd_etmv3", tb_fuzz_ocsd_etmv3);
    planted("ocsd_ptm", tb_fuzz_ocsd_ptm);
}
