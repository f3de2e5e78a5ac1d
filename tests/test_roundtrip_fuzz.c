/*
 * Round-trip fuzz regressions (issue 7): every file in
 * fuzz/regressions/roundtrip/ and every generator seed of
 * fuzz/fuzz_seeds.c goes through tb_fuzz_roundtrip (fuzz/fuzz_roundtrip.c),
 * the function the fuzzers call: a program made from the bytes runs in
 * the simulator, is encoded, decoded and compared instruction by
 * instruction.  A mismatch aborts inside the harness (a crashed test).
 * Kept apart from test_fuzz_regressions.c because it needs the
 * simulator (this file name links it).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tb_test.h"

#include "../fuzz/fuzz.h"
#include "../fuzz/fuzz_util.c"
#include "../fuzz/fuzz_seeds.c"
#include "../fuzz/fuzz_roundtrip.c"

Test(roundtrip_fuzz, every_regression_file_round_trips)
{
    char dir[1024], path[1400];
    DIR *d;
    struct dirent *e;
    int n = 0;

    snprintf(dir, sizeof dir, "%s/fuzz/regressions/roundtrip", TB_SOURCE_DIR);
    d = opendir(dir);
    if (!d)
        return; /* no round-trip finding yet */
    while ((e = readdir(d)) != NULL) {
        uint8_t *data;
        size_t len;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        data = tb_test_read_file(path, &len);
        cr_assert_not_null(data, "cannot read %s", path);
        cr_assert_eq(tb_fuzz_roundtrip(data, len), 0, "%s", path);
        free(data);
        n++;
    }
    closedir(d);
    fprintf(stderr, "%d round-trip regression inputs replayed\n", n);
}

typedef struct counts {
    int seeds, checked;
    size_t insns;
} counts;

static int run_seed(void *ctx, const char *name, const uint8_t *data, size_t len)
{
    counts *c = ctx;
    int rc = tb_fuzz_roundtrip(data, len);

    cr_assert(rc == 0 || rc == TB_FUZZ_SKIP, "seed %s: %d", name, rc);
    c->seeds++;
    c->checked += rc == 0;
    return 0;
}

/* A seed the simulator refuses is skipped (TB_FUZZ_SKIP), not checked:
 * as many must round-trip as run to their exit (below). */
Test(roundtrip_fuzz, generator_seeds_round_trip)
{
    counts c = {0};
    int n = tb_fuzz_seeds("roundtrip", run_seed, &c);

    cr_assert_eq(n, 32);
    cr_assert_eq(c.seeds, 32);
    cr_assert_geq(c.checked, 30, "only %d of 32 seeds round-tripped", c.checked);
}

/* The generator must make programs the simulator runs to their exit
 * (else the harness skips them and checks nothing): count them. */
static int sim_ok;

static int count_rec(void *ctx, const tb_exec_record *rec)
{
    (void)ctx;
    (void)rec;
    return 0;
}

static int check_generated(void *ctx, const char *name, const uint8_t *data,
                           size_t len)
{
    rd r = {data + 3, len - 3};
    bool thumb;
    uint32_t exit_addr = 0;
    bool secure = (data[1] >> 4) & 1; /* as tb_fuzz_roundtrip reads it */
    uint8_t *img = rt_build_image(&r, secure, &thumb, &exit_addr);
    tb_scenario sc;
    tb_sim_result res;
    tb_sim *sim;

    (void)ctx;
    cr_assert_not_null(img, "seed %s: program too long", name);
    tb_scenario_init(&sc);
    sc.max_insns = MAX_INSNS;
    sc.secure = secure;
    snprintf(sc.exit, sizeof sc.exit, "0x%x", (unsigned)exit_addr);
    sim = tb_sim_new(TB_SIM_CPU_A15);
    cr_assert_not_null(sim);
    cr_assert_eq(tb_sim_load_raw(sim, img, IMG_SIZE, 0), 0);
    cr_assert_eq(tb_sim_map(sim, STACK_TOP - 0x1000, 0x1000), 0);
    cr_assert_eq(tb_sim_set_entry(sim, MAIN, thumb ? TB_ISA_THUMB : TB_ISA_ARM), 0);
    cr_assert_eq(tb_sim_set_scenario(sim, &sc), 0);
    if (tb_sim_run(sim, count_rec, NULL, &res) == 0 && res.stop == TB_SIM_STOP_EXIT &&
        res.insns > 3)
        sim_ok++;
    tb_sim_free(sim);
    free(img);
    return 0;
}

Test(roundtrip_fuzz, generated_programs_run_to_their_exit)
{
    sim_ok = 0;
    tb_fuzz_seeds("roundtrip", check_generated, NULL);
    cr_assert_geq(sim_ok, 30, "only %d of 32 generated programs reach their exit", sim_ok);
}

/* Debug halts (issue 35): the generator seeds again with byte 2's bit 2
 * set (a [debug] halt, fuzz_roundtrip.c), with its other bits varied, so
 * halts land at many points of many programs under every option set the
 * first bytes draw; each must still round-trip (the harness aborts on a
 * mismatch). */
static int run_seed_debug(void *ctx, const char *name, const uint8_t *data, size_t len)
{
    counts *c = ctx;
    uint8_t buf[4096];

    cr_assert_leq(len, sizeof buf);
    for (unsigned v = 0; v < 8; v++) {
        int rc;

        memcpy(buf, data, len);
        buf[2] = (uint8_t)(((v * 37u + (unsigned)c->seeds) << 3) | 4u | (buf[2] & 3u));
        rc = tb_fuzz_roundtrip(buf, len);
        cr_assert(rc == 0 || rc == TB_FUZZ_SKIP, "seed %s, halt variant %u: %d", name, v, rc);
        c->checked += rc == 0;
    }
    c->seeds++;
    return 0;
}

Test(roundtrip_fuzz, generator_seeds_with_debug_halts)
{
    counts c = {0};

    cr_assert_eq(tb_fuzz_seeds("roundtrip", run_seed_debug, &c), 32);
    cr_assert_geq(c.checked, 8 * 30, "only %d of 256 runs round-tripped", c.checked);
}
