/*
 * CoreSight frame deformatter and formatter (protocol-notes 5.1).
 *
 * Oracles: the real TC2 and Snowball ETB buffers, OpenCSD's
 * trc_pkt_lister -o_raw_unpacked run live (its de-formatted runs with
 * their indices), and round trips through the formatter.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb_test.h"
#include "tracebench/frame.h"
#include "tracebench/snapshot.h"

/* ------------------------------------------------------------------ */
/* Collected runs. */

typedef struct trun {
    uint8_t id;
    uint64_t index;
    uint8_t n;
    uint8_t data[TB_FRAME_SIZE];
} trun;

typedef struct runs {
    trun *v;
    size_t n, cap;
    size_t stop_after; /* 0: never stop */
} runs;

static int collect(void *ctx, uint8_t id, uint64_t index, const uint8_t *data,
                   size_t len)
{
    runs *r = ctx;

    cr_assert(len > 0 && len <= 15, "run of %zu bytes", len);
    cr_assert(id >= 1 && id < 0x70, "run for id 0x%02x", id);
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 256;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
        cr_assert_not_null(r->v);
    }
    r->v[r->n].id = id;
    r->v[r->n].index = index;
    r->v[r->n].n = (uint8_t)len;
    memcpy(r->v[r->n].data, data, len);
    r->n++;
    return r->stop_after && r->n >= r->stop_after;
}

static void runs_free(runs *r)
{
    free(r->v);
    memset(r, 0, sizeof *r);
}

static void assert_runs_equal(const runs *a, const runs *b, const char *what)
{
    size_t i;

    cr_assert_eq(a->n, b->n, "%s: %zu runs vs %zu", what, a->n, b->n);
    for (i = 0; i < a->n; i++) {
        cr_assert_eq(a->v[i].id, b->v[i].id, "%s: run %zu id", what, i);
        cr_assert_eq(a->v[i].index, b->v[i].index,
                     "%s: run %zu index %llu vs %llu", what, i,
                     (unsigned long long)a->v[i].index,
                     (unsigned long long)b->v[i].index);
        cr_assert_eq(a->v[i].n, b->v[i].n, "%s: run %zu (index %llu) length",
                     what, i, (unsigned long long)a->v[i].index);
        cr_assert_arr_eq(a->v[i].data, b->v[i].data, a->v[i].n,
                         "%s: run %zu bytes", what, i);
    }
}

/* Deformats a whole buffer, cut into random chunks of 1..maxchunk bytes
 * (maxchunk 0: one push).  Returns the first error code seen. */
static int deformat(const uint8_t *buf, size_t len, unsigned flags,
                    size_t maxchunk, uint64_t seed, runs *out)
{
    tb_deformatter *d = tb_deformatter_new(flags);
    size_t p = 0;
    int first = 0, rc;

    cr_assert_not_null(d);
    while (p < len) {
        size_t n = len - p;
        if (maxchunk) {
            size_t c = 1 + (size_t)(tb_test_rand(&seed) % maxchunk);
            if (c < n)
                n = c;
        }
        rc = tb_deformatter_push(d, buf + p, n, p, collect, out);
        if (rc < 0 && !first)
            first = rc;
        if (rc == TB_ERR_STOPPED)
            break;
        p += n;
    }
    if (p == len) {
        rc = tb_deformatter_finish(d, collect, out);
        if (rc < 0 && !first)
            first = rc;
    }
    tb_deformatter_free(d);
    return first;
}

static uint8_t *load_ref(const char *snap, const char *file, size_t *len)
{
    const char *ref = tb_test_reference_dir("frame: real ETB buffers");
    char path[1024];
    uint8_t *buf;

    if (!ref)
        return NULL;
    snprintf(path, sizeof path, "%s/opencsd-snapshots/%s/%s", ref, snap, file);
    buf = tb_test_read_file(path, len);
    cr_assert_not_null(buf, "cannot read %s", path);
    return buf;
}

/* ------------------------------------------------------------------ */
/* Worked frames (protocol-notes 5.1), on the real TC2 buffer. */

static const trun *find_run(const runs *r, uint64_t index, uint8_t id)
{
    size_t i;

    for (i = 0; i < r->n; i++)
        if (r->v[i].index == index && r->v[i].id == id)
            return &r->v[i];
    return NULL;
}

Test(deformatter, tc2_worked_frames)
{
    static const uint8_t f864[] = {0x80, 0x42, 0xBD, 0x9A, 0xC3, 0xCE, 0xAF, 0x90,
                                   0x80, 0x80, 0x00, 0xBC, 0xBC, 0xBC, 0xBC};
    static const uint8_t f26560[] = {0x10, 0xCC, 0x01, 0xCE, 0x0E, 0x00, 0x00,
                                     0x00, 0x00, 0x00, 0x80, 0x08, 0x83, 0x8D};
    /* Frame 16: data for no known ID, then ID 0x10 at byte 6 with aux
     * bit 3 set, so byte 7 is still the old ID's: the 0x10 run starts at
     * 16 + 6 = 22 (trc_pkt_lister prints "Index 22; ID_DATA[0x10]"). */
    static const uint8_t f22[] = {0x82, 0xA4, 0x84, 0xA4, 0x84, 0xBC, 0xB0};
    size_t len;
    uint8_t *buf = load_ref("TC2", "cstrace.bin", &len);
    runs r = {0};
    const trun *t;

    if (!buf)
        return;
    cr_assert_eq(len, 32768);
    cr_assert_eq(deformat(buf, len, TB_FRAME_MEM_ALIGNED, 0, 0, &r), 0);

    t = find_run(&r, 864, 0x10);
    cr_assert_not_null(t);
    cr_assert_eq(t->n, sizeof f864);
    cr_assert_arr_eq(t->data, f864, sizeof f864);

    t = find_run(&r, 26560, 0x13);
    cr_assert_not_null(t);
    cr_assert_eq(t->n, sizeof f26560);
    cr_assert_arr_eq(t->data, f26560, sizeof f26560);
    /* The A-sync starts at file offset 26566 but at run position 5:
     * Idx 26565 in trc_pkt_lister. */
    cr_assert_eq(t->index + 5, 26565);
    cr_assert_arr_eq(t->data + 5, ((uint8_t[]){0, 0, 0, 0, 0, 0x80}), 6);

    t = find_run(&r, 22, 0x10);
    cr_assert_not_null(t);
    cr_assert_eq(t->n, sizeof f22);
    cr_assert_arr_eq(t->data, f22, sizeof f22);
    /* Nothing before the first ID byte is attributed to any source. */
    cr_assert_eq(r.v[0].index, 22);
    runs_free(&r);
    free(buf);
}

/* ------------------------------------------------------------------ */
/* Live comparison with OpenCSD. */

static bool have_lister(void)
{
    const char *ci = getenv("CI");

    if (system("command -v trc_pkt_lister >/dev/null 2>&1") == 0)
        return true;
    if (ci && strcmp(ci, "true") == 0)
        cr_assert_fail("trc_pkt_lister (libopencsd-bin) missing under CI=true");
    fprintf(stderr, "\n*** SKIPPED: trc_pkt_lister not installed: live "
                    "OpenCSD comparison not run ***\n\n");
    return false;
}

/* Runs trc_pkt_lister -o_raw_unpacked on a snapshot and keeps its
 * "Frame Data; Index N; ID_DATA[0xNN]; bytes" runs for real sources
 * (ID 0x01-0x6F; "????" is data before any ID, 0x00 the null ID). */
static void lister_runs(const char *dir, const char *extra, runs *out)
{
    char cmd[2048], line[1024];
    FILE *p;
    size_t frames = 0;

    snprintf(cmd, sizeof cmd,
             "trc_pkt_lister -ss_dir '%s' %s -o_raw_unpacked -logstdout 2>&1",
             dir, extra);
    p = popen(cmd, "r");
    cr_assert_not_null(p);
    while (fgets(line, sizeof line, p)) {
        unsigned long long idx;
        unsigned id;
        int pos = 0;
        char *s;
        trun t = {0};

        if (sscanf(line, "Frame Data; Index %llu; ID_DATA[0x%x];%n", &idx,
                   &id, &pos) != 2 || pos == 0)
            continue;
        frames++;
        if (id == 0 || id >= 0x70)
            continue;
        s = line + pos;
        for (;;) {
            unsigned b;
            int used;
            if (sscanf(s, " %2x%n", &b, &used) != 1)
                break;
            cr_assert_lt(t.n, 15);
            t.data[t.n++] = (uint8_t)b;
            s += used;
        }
        if (t.n == 0)
            continue;
        t.id = (uint8_t)id;
        t.index = idx;
        if (out->n == out->cap) {
            out->cap = out->cap ? 2 * out->cap : 256;
            out->v = realloc(out->v, out->cap * sizeof *out->v);
            cr_assert_not_null(out->v);
        }
        out->v[out->n++] = t;
    }
    cr_assert_eq(pclose(p), 0, "trc_pkt_lister failed: %s", cmd);
    cr_assert_gt(frames, 0, "no raw frame lines from: %s", cmd);
}

static void compare_with_lister(const char *snap, size_t expect_runs)
{
    const char *ref = tb_test_reference_dir("frame: OpenCSD comparison");
    char dir[1024];
    size_t len;
    uint8_t *buf;
    runs mine = {0}, theirs = {0};

    if (!ref || !have_lister())
        return;
    snprintf(dir, sizeof dir, "%s/opencsd-snapshots/%s", ref, snap);
    buf = load_ref(snap, "cstrace.bin", &len);
    cr_assert_eq(deformat(buf, len, TB_FRAME_MEM_ALIGNED, 0, 0, &mine), 0);
    lister_runs(dir, "", &theirs);
    assert_runs_equal(&mine, &theirs, snap);
    cr_assert_eq(mine.n, expect_runs, "%s: %zu runs", snap, mine.n);
    runs_free(&mine);
    runs_free(&theirs);
    free(buf);
}

/* Counts: the lister's ID_DATA lines for IDs 0x10-0x13 (TC2: 1211 +
 * 1150 + 508 + 355) and 0x10-0x11 (Snowball: 312 + 229). */
Test(deformatter, tc2_equals_opencsd) { compare_with_lister("TC2", 3224); }
Test(deformatter, snowball_equals_opencsd) { compare_with_lister("Snowball", 541); }

/* ------------------------------------------------------------------ */
/* Streaming: any chunking gives the same runs. */

Test(deformatter, chunking_invariance_real)
{
    static const char *snaps[] = {"TC2", "Snowball"};
    size_t s;

    for (s = 0; s < 2; s++) {
        size_t len;
        uint8_t *buf = load_ref(snaps[s], "cstrace.bin", &len);
        runs whole = {0};
        uint64_t seed;

        if (!buf)
            return;
        cr_assert_eq(deformat(buf, len, 0, 0, 0, &whole), 0);
        for (seed = 1; seed <= 40; seed++) {
            runs cut = {0};
            size_t maxc = seed <= 10 ? 1 + seed : 1 + (size_t)(seed * 37 % 200);
            cr_assert_eq(deformat(buf, len, 0, maxc, seed, &cut), 0);
            assert_runs_equal(&whole, &cut, snaps[s]);
            runs_free(&cut);
        }
        runs_free(&whole);
        free(buf);
    }
}

/* ------------------------------------------------------------------ */
/* ID selection: exactly the unfiltered runs of the selected IDs. */

/* deformat() with only `ids` selected; *nerr gets the frame errors. */
static int deformat_sel(const uint8_t *buf, size_t len, unsigned flags, size_t chunk,
                        const uint8_t *ids, size_t nids, runs *out, uint64_t *nerr)
{
    tb_deformatter *d = tb_deformatter_new(flags);
    int first = 0, rc;

    cr_assert_not_null(d);
    cr_assert_eq(tb_deformatter_set_ids(d, ids, nids), 0);
    /* Kept across reset. */
    tb_deformatter_reset(d);
    for (size_t p = 0; p < len; p += chunk) {
        rc = tb_deformatter_push(d, buf + p, len - p < chunk ? len - p : chunk, p, collect,
                                 out);
        if (rc < 0 && !first)
            first = rc;
    }
    rc = tb_deformatter_finish(d, collect, out);
    if (rc < 0 && !first)
        first = rc;
    tb_deformatter_error_info(d, nerr, NULL);
    tb_deformatter_free(d);
    return first;
}

static void check_selection(const uint8_t *buf, size_t len, unsigned flags, const char *what)
{
    static const uint8_t sets[][3] = {{0x10}, {0x11}, {0x13}, {0x12, 0x14}, {0x01, 0x6F}};
    static const size_t nset[] = {1, 1, 1, 2, 2};
    runs all = {0};
    uint64_t nerr_all = 0;
    int rc_all = deformat_sel(buf, len, flags, len ? len : 1, NULL, 0, &all, &nerr_all);

    for (size_t s = 0; s < sizeof nset / sizeof nset[0]; s++) {
        static const size_t chunks[] = {1, 5, 16, 4096};

        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
            runs sel = {0}, want = {0};
            uint64_t nerr = 0;
            int rc = deformat_sel(buf, len, flags, chunks[c], sets[s], nset[s], &sel, &nerr);

            for (size_t i = 0; i < all.n; i++) {
                if (memchr(sets[s], all.v[i].id, nset[s])) {
                    if (want.n == want.cap) {
                        want.cap = want.cap ? 2 * want.cap : 256;
                        want.v = realloc(want.v, want.cap * sizeof *want.v);
                        cr_assert_not_null(want.v);
                    }
                    want.v[want.n++] = all.v[i];
                }
            }
            assert_runs_equal(&want, &sel, what);
            cr_assert_eq(rc, rc_all, "%s: selected ID set %zu, chunk %zu: %d vs %d", what, s,
                         chunks[c], rc, rc_all);
            cr_assert_eq(nerr, nerr_all, "%s: frame errors", what);
            runs_free(&sel);
            runs_free(&want);
        }
    }
    runs_free(&all);
}

Test(deformatter, id_selection_real_and_corrupt)
{
    static const char *snaps[] = {"TC2", "Snowball"};
    static const unsigned modes[] = {0, TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC};
    size_t len;
    uint8_t *buf, *junk;
    uint64_t seed = 7;
    uint8_t bad = 0x70;
    tb_deformatter *d;

    for (size_t s = 0; s < 2; s++) {
        buf = load_ref(snaps[s], "cstrace.bin", &len);
        if (!buf)
            return;
        check_selection(buf, len, 0, snaps[s]);
        /* Corrupted copies: flipped bytes make reserved IDs and odd ID
         * changes, which must count the same with any selection. */
        for (int it = 0; it < 4; it++) {
            for (int k = 0; k < 40; k++)
                buf[tb_test_rand(&seed) % len] ^= (uint8_t)(1u << (tb_test_rand(&seed) % 8));
            check_selection(buf, len, modes[it % 2], snaps[s]);
        }
        free(buf);
    }
    junk = malloc(2048);
    cr_assert_not_null(junk);
    for (size_t k = 0; k < 2048; k++)
        junk[k] = (uint8_t)tb_test_rand(&seed);
    check_selection(junk, 2048, 0, "random bytes");
    free(junk);

    d = tb_deformatter_new(0);
    cr_assert_not_null(d);
    cr_assert_eq(tb_deformatter_set_ids(d, &bad, 1), TB_ERR_INVAL);
    bad = 0;
    cr_assert_eq(tb_deformatter_set_ids(d, &bad, 1), TB_ERR_INVAL);
    cr_assert_eq(tb_deformatter_set_ids(d, NULL, 1), TB_ERR_INVAL);
    cr_assert_eq(tb_deformatter_set_ids(NULL, NULL, 0), TB_ERR_INVAL);
    tb_deformatter_free(d);
}

/* Frames dense in ID bytes drawn from a few IDs: repeated IDs (no
 * change, so no new run), the null ID, reserved IDs, byte 14 as an ID,
 * aux bits on changes, whole-frame FSYNC pads, and long stretches of frames that name none of
 * the selected IDs.  A one-ID selection skips such stretches in bulk
 * (deformatter.c skip_unwanted), so the ID they leave current, which
 * decides the run indices of the next frame, must be the last one. */
static void dense_frames(uint8_t *buf, size_t nframes, uint64_t *seed)
{
    static const uint8_t ids[] = {0x10, 0x11, 0x13, 0x13, 0x22, 0x00};

    for (size_t k = 0; k < nframes; k++) {
        uint8_t *f = buf + 16 * k;
        /* One stretch in four names only IDs 0x13, 0x22 and null. */
        const size_t lo = (k / 12) % 4 == 0 ? 3 : 0;

        for (size_t i = 0; i < 15; i += 2) {
            const uint64_t r = tb_test_rand(seed);

            if (r % 3 == 0) {
                uint8_t id = ids[lo + (r >> 8) % (sizeof ids - lo)];

                if ((r >> 16) % 97 == 0)
                    id = (uint8_t)(0x70 + (r >> 24) % 16);
                f[i] = (uint8_t)(id << 1 | 1);
            } else {
                f[i] = (uint8_t)(r >> 32) & 0xFE;
            }
            if (i < 14)
                f[i + 1] = (uint8_t)(r >> 40);
        }
        f[15] = (uint8_t)tb_test_rand(seed);
        if (tb_test_rand(seed) % 50 == 0)
            memcpy(f, "\xFF\xFF\xFF\x7F\xFF\xFF\xFF\x7F\xFF\xFF\xFF\x7F\xFF\xFF\xFF\x7F", 16);
    }
}

Test(deformatter, id_selection_dense_ids)
{
    uint64_t seed = 0xD15E;
    uint8_t buf[16 * 400];

    for (int it = 0; it < 6; it++) {
        dense_frames(buf, sizeof buf / 16, &seed);
        check_selection(buf, sizeof buf, 0, "dense ID bytes");
        check_selection(buf, sizeof buf, TB_FRAME_RESET_ON_4FSYNC, "dense ID bytes, 4-FSYNC");
    }
}

/* ------------------------------------------------------------------ */
/* Hand-made frames: every rule of protocol-notes 5.1. */

static void frame_set(uint8_t f[16], const uint8_t bytes[15], uint8_t aux)
{
    memcpy(f, bytes, 15);
    f[15] = aux;
}

Test(deformatter, id_change_rules)
{
    uint8_t buf[48];
    runs r = {0};

    /* Frame 0: ID 0x05 at byte 0 (aux bit 0 clear: byte 1 is 0x05's);
     * ID 0x06 at byte 4 with aux bit 2 set (byte 5 is still 0x05's);
     * data at byte 6 whose bit 0 comes from aux bit 3; ID 0x07 at byte
     * 10; byte 14 = ID 0x08, which applies from the next frame. */
    frame_set(buf,
              (const uint8_t[15]){0x0B, 0x11, 0x12, 0x13, 0x0D, 0x15, 0x16,
                                  0x17, 0x18, 0x19, 0x0F, 0x1B, 0x1C, 0x1D,
                                  0x11},
              0x04 | 0x08 /* bit 3: byte 6 data gets bit 0 = 1 */);
    /* Frame 16: all data for 0x08; aux bit 7 sets bit 0 of byte 14. */
    frame_set(buf + 16,
              (const uint8_t[15]){0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26,
                                  0x27, 0x28, 0x29, 0x2A, 0x2B, 0x2C, 0x2D,
                                  0x2E},
              0x80);
    /* Frame 32: an ID equal to the current one (0x08) changes nothing;
     * the null ID 0x00 at byte 4 (its bytes are dropped); ID 0x09 at byte
     * 8 with aux bit 4 set, so byte 9 goes to the null ID too. */
    frame_set(buf + 32,
              (const uint8_t[15]){0x11, 0x31, 0x32, 0x33, 0x01, 0x35, 0x36,
                                  0x37, 0x13, 0x39, 0x3A, 0x3B, 0x3C, 0x3D,
                                  0x3E},
              0x10);
    cr_assert_eq(deformat(buf, sizeof buf, 0, 0, 0, &r), 0);
    cr_assert_eq(r.n, 6);
    /* No ID before byte 0 in this buffer, so the first run is reused for
     * 0x05 and keeps the frame offset. */
    cr_assert_eq(r.v[0].id, 0x05);
    cr_assert_eq(r.v[0].index, 0);
    cr_assert_eq(r.v[0].n, 4);
    cr_assert_arr_eq(r.v[0].data, ((uint8_t[]){0x11, 0x12, 0x13, 0x15}), 4);
    /* 0x05's run holds data, so 0x06 opens a run at 0 + 4. */
    cr_assert_eq(r.v[1].id, 0x06);
    cr_assert_eq(r.v[1].index, 4);
    cr_assert_eq(r.v[1].n, 4);
    cr_assert_arr_eq(r.v[1].data, ((uint8_t[]){0x17, 0x17, 0x18, 0x19}), 4);
    cr_assert_eq(r.v[2].id, 0x07);
    cr_assert_eq(r.v[2].index, 10);
    cr_assert_arr_eq(r.v[2].data, ((uint8_t[]){0x1B, 0x1C, 0x1D}), 3);
    cr_assert_eq(r.v[2].n, 3);
    cr_assert_eq(r.v[3].id, 0x08);
    cr_assert_eq(r.v[3].index, 16);
    cr_assert_eq(r.v[3].n, 15);
    cr_assert_eq(r.v[3].data[14], 0x2F);
    cr_assert_eq(r.v[4].id, 0x08);
    cr_assert_eq(r.v[4].index, 32);
    cr_assert_arr_eq(r.v[4].data, ((uint8_t[]){0x31, 0x32, 0x33}), 3);
    cr_assert_eq(r.v[4].n, 3);
    cr_assert_eq(r.v[5].id, 0x09);
    cr_assert_eq(r.v[5].index, 40);
    cr_assert_arr_eq(r.v[5].data, ((uint8_t[]){0x3A, 0x3B, 0x3C, 0x3D, 0x3E}), 5);
    runs_free(&r);
}

/* ------------------------------------------------------------------ */
/* Deformatter error handling. */

Test(deformatter, reserved_id_is_an_error)
{
    uint8_t buf[32];
    runs r = {0};

    /* ID 0x10, 3 bytes, then reserved ID 0x75 at byte 4: its bytes are
     * dropped and the push says the stream is corrupt. */
    frame_set(buf, (const uint8_t[15]){0x21, 0x02, 0x04, 0x06, 0xEB, 0x08, 0x0A,
                                       0x0C, 0x0E, 0x10, 0x12, 0x14, 0x16, 0x18,
                                       0x1A}, 0);
    /* Next frame: ID 0x10 again: its data flows again. */
    frame_set(buf + 16, (const uint8_t[15]){0x21, 0x30, 0x32, 0x34, 0x36, 0x38,
                                            0x3A, 0x3C, 0x3E, 0x40, 0x42, 0x44,
                                            0x46, 0x48, 0x4A}, 0);
    cr_assert_eq(deformat(buf, sizeof buf, 0, 0, 0, &r), TB_ERR_BAD_FRAME);
    cr_assert_eq(r.n, 2);
    cr_assert_eq(r.v[0].n, 3);
    cr_assert_eq(r.v[1].index, 16);
    cr_assert_eq(r.v[1].n, 14);
    runs_free(&r);
}

Test(deformatter, truncated_and_unsynced)
{
    uint8_t buf[40] = {0};
    runs r = {0};
    tb_deformatter *d = tb_deformatter_new(TB_FRAME_HAS_FSYNC);
    uint64_t count, off;

    buf[0] = 0x21;
    cr_assert_eq(deformat(buf, 20, 0, 0, 0, &r), TB_ERR_TRUNCATED);
    cr_assert_eq(r.n, 1);
    runs_free(&r);
    /* No FSYNC anywhere in an FSYNC stream. */
    cr_assert_eq(deformat(buf, 40, TB_FRAME_HAS_FSYNC, 0, 0, &r), TB_ERR_NO_SYNC);
    cr_assert_eq(r.n, 0);
    /* HSYNC where none may be. */
    memcpy(buf, (const uint8_t[]){0xFF, 0xFF, 0xFF, 0x7F, 0x21, 0x00, 0xFF, 0x7F}, 8);
    cr_assert_not_null(d);
    cr_assert_eq(tb_deformatter_push(d, buf, 40, 0, collect, &r), TB_ERR_BAD_FRAME);
    cr_assert_eq(tb_deformatter_error_info(d, &count, &off), 1);
    cr_assert_eq(count, 1);
    cr_assert_eq(off, 6);
    tb_deformatter_free(d);
    /* Offsets must continue a partial frame; bad flags are refused. */
    d = tb_deformatter_new(0);
    cr_assert_eq(tb_deformatter_push(d, buf, 5, 100, collect, &r), 0);
    cr_assert_eq(tb_deformatter_push(d, buf, 5, 200, collect, &r), TB_ERR_INVAL);
    tb_deformatter_free(d);
    cr_assert_null(tb_deformatter_new(0x100));
    runs_free(&r);
}

Test(deformatter, stop_from_callback)
{
    size_t len;
    uint8_t *buf = load_ref("TC2", "cstrace.bin", &len);
    runs r = {.stop_after = 10};

    if (!buf)
        return;
    cr_assert_eq(deformat(buf, len, 0, 0, 0, &r), TB_ERR_STOPPED);
    cr_assert_eq(r.n, 10);
    runs_free(&r);
    free(buf);
}

/* Random bytes and bit-flipped real frames in every mode: never a crash,
 * and the runs do not depend on the chunking even then. */
Test(deformatter, corrupt_input_chunk_invariant)
{
    static const unsigned modes[] = {0, TB_FRAME_RESET_ON_4FSYNC, TB_FRAME_HAS_FSYNC,
                                     TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC,
                                     TB_FRAME_HAS_HSYNC};
    size_t len, m;
    uint8_t *ref = load_ref("TC2", "cstrace.bin", &len);
    uint8_t *buf;
    uint64_t seed = 99;
    int iter;

    if (!ref)
        return;
    buf = malloc(4096);
    for (iter = 0; iter < 60; iter++) {
        size_t n = 64 + (size_t)(tb_test_rand(&seed) % 4000), k;
        if (iter % 2) {
            for (k = 0; k < n; k++)
                buf[k] = (uint8_t)tb_test_rand(&seed);
            /* Sprinkle syncs so the sync paths run. */
            for (k = 0; k + 4 <= n; k += 4)
                if (tb_test_rand(&seed) % 8 == 0)
                    memcpy(buf + k, "\xFF\xFF\xFF\x7F", 4);
        } else {
            memcpy(buf, ref + (tb_test_rand(&seed) % (len - n)) / 16 * 16, n);
            for (k = 0; k < 1 + tb_test_rand(&seed) % 20; k++)
                buf[tb_test_rand(&seed) % n] ^= (uint8_t)(1u << (tb_test_rand(&seed) % 8));
        }
        for (m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            runs whole = {0}, cut = {0};
            deformat(buf, n, modes[m], 0, 0, &whole);
            deformat(buf, n, modes[m], 1 + tb_test_rand(&seed) % 23, seed, &cut);
            assert_runs_equal(&whole, &cut, "corrupt");
            runs_free(&whole);
            runs_free(&cut);
        }
    }
    free(buf);
    free(ref);
}

/* ------------------------------------------------------------------ */
/* Formatter. */

typedef struct outbuf {
    uint8_t *d;
    size_t n, cap;
} outbuf;

static int sink(void *ctx, const uint8_t *data, size_t len)
{
    outbuf *o = ctx;

    if (o->n + len > o->cap) {
        o->cap = (o->n + len) * 2 + 64;
        o->d = realloc(o->d, o->cap);
        cr_assert_not_null(o->d);
    }
    memcpy(o->d + o->n, data, len);
    o->n += len;
    return 0;
}

Test(formatter, worked_frames)
{
    tb_formatter *f = tb_formatter_new(0);
    outbuf o = {0};
    runs r = {0};

    /* Source change on an even slot: a plain ID byte. */
    cr_assert_eq(tb_formatter_put(f, 0x10, (const uint8_t[]){0xA1, 0xB2, 0xC3}, 3,
                                  sink, &o), 0);
    cr_assert_eq(tb_formatter_put(f, 0x11, (const uint8_t[]){0xD4}, 1, sink, &o), 0);
    cr_assert_eq(o.n, 0);
    cr_assert_eq(tb_formatter_flush(f, sink, &o), 0);
    cr_assert_eq(o.n, 16);
    cr_assert_arr_eq(o.d, ((uint8_t[]){0x21, 0xA1, 0xB2, 0xC3, 0x23, 0xD4, 0x01, 0,
                                       0, 0, 0, 0, 0, 0, 0, 0}), 16);
    /* On an odd slot: the old source's byte moves behind the ID, aux bit
     * set; the flush does the same for the null ID. */
    o.n = 0;
    cr_assert_eq(tb_formatter_put(f, 0x10, (const uint8_t[]){0xA1, 0xB3}, 2, sink, &o), 0);
    cr_assert_eq(tb_formatter_put(f, 0x11, (const uint8_t[]){0xC4}, 1, sink, &o), 0);
    cr_assert_eq(tb_formatter_flush(f, sink, &o), 0);
    cr_assert_arr_eq(o.d, ((uint8_t[]){0x21, 0xA1, 0x23, 0xB3, 0x01, 0xC4, 0, 0,
                                       0, 0, 0, 0, 0, 0, 0, 0x06}), 16);
    cr_assert_eq(deformat(o.d, o.n, 0, 0, 0, &r), 0);
    cr_assert_eq(r.n, 2);
    cr_assert_eq(r.v[0].id, 0x10);
    cr_assert_eq(r.v[0].n, 2);
    cr_assert_arr_eq(r.v[0].data, ((uint8_t[]){0xA1, 0xB3}), 2);
    cr_assert_eq(r.v[1].id, 0x11);
    cr_assert_eq(r.v[1].index, 2);
    cr_assert_eq(r.v[1].n, 1);
    cr_assert_eq(r.v[1].data[0], 0xC4);
    /* One source: 15 data bytes a frame after the first ID. */
    o.n = 0;
    {
        uint8_t d[29];
        memset(d, 0x55, sizeof d);
        cr_assert_eq(tb_formatter_put(f, 0x22, d, sizeof d, sink, &o), 0);
        cr_assert_eq(o.n, 32);
        cr_assert_eq(o.d[0], 0x45);
        cr_assert_eq(o.d[16], 0x54);
        cr_assert_eq(o.d[31], 0xFF);
    }
    cr_assert_eq(tb_formatter_put(f, 0x70, o.d, 1, sink, &o), TB_ERR_INVAL);
    cr_assert_eq(tb_formatter_put(f, 0, o.d, 1, sink, &o), TB_ERR_INVAL);
    cr_assert_eq(tb_formatter_idle(f, sink, &o), TB_ERR_STATE);
    cr_assert_null(tb_formatter_new(TB_FRAME_RESET_ON_4FSYNC));
    tb_formatter_free(f);
    free(o.d);
    runs_free(&r);
}

/* Many sources, random put sizes, every mode, random chunking back:
 * each source's bytes come back exactly. */
Test(formatter, round_trip_random)
{
    static const unsigned modes[] = {0, TB_FRAME_HAS_FSYNC, TB_FRAME_HAS_HSYNC,
                                     TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC};
    uint64_t seed = 2024;
    int iter;

    for (iter = 0; iter < 400; iter++) {
        const unsigned mode = modes[iter % 4];
        tb_formatter *f = tb_formatter_new(mode);
        static uint8_t src[0x70][2048];
        size_t srclen[0x70] = {0}, got[0x70] = {0};
        uint8_t ids[8];
        unsigned nids = 1 + (unsigned)(tb_test_rand(&seed) % 8), k, puts;
        outbuf o = {0};
        runs r = {0};
        size_t i;

        for (k = 0; k < nids; k++)
            ids[k] = (uint8_t)(1 + tb_test_rand(&seed) % 0x6F);
        puts = 1 + (unsigned)(tb_test_rand(&seed) % 120);
        for (k = 0; k < puts; k++) {
            uint8_t id = ids[tb_test_rand(&seed) % nids];
            size_t n = (size_t)(tb_test_rand(&seed) % 17), j;
            uint8_t d[16];
            if (srclen[id] + n > sizeof src[0])
                continue;
            for (j = 0; j < n; j++)
                d[j] = (uint8_t)tb_test_rand(&seed);
            memcpy(src[id] + srclen[id], d, n);
            srclen[id] += n;
            cr_assert_eq(tb_formatter_put(f, id, d, n, sink, &o), 0);
            if ((mode & TB_FRAME_HAS_HSYNC) && tb_test_rand(&seed) % 4 == 0)
                cr_assert_eq(tb_formatter_idle(f, sink, &o), 0);
        }
        cr_assert_eq(tb_formatter_flush(f, sink, &o), 0);
        tb_formatter_free(f);
        if (mode == 0)
            cr_assert_eq(o.n % 16, 0);
        cr_assert_eq(deformat(o.d, o.n, mode, 1 + tb_test_rand(&seed) % 40,
                              seed, &r), 0, "iter %d", iter);
        for (i = 0; i < r.n; i++) {
            const trun *t = &r.v[i];
            cr_assert_leq(got[t->id] + t->n, srclen[t->id]);
            cr_assert_arr_eq(src[t->id] + got[t->id], t->data, t->n,
                             "iter %d id 0x%02x", iter, t->id);
            got[t->id] += t->n;
            /* A run starts at its frame or at its ID byte. */
            if (mode == 0)
                cr_assert(t->index % 16 == 0 ||
                          (o.d[t->index] & 1 && o.d[t->index] >> 1 == t->id));
        }
        for (k = 0; k < 0x70; k++) {
            cr_assert_eq(got[k], srclen[k], "iter %d id 0x%02x", iter, k);
            srclen[k] = 0;
        }
        free(o.d);
        runs_free(&r);
    }
}

/* ------------------------------------------------------------------ */
/* OpenCSD reads what the formatter writes: real TC2 streams (ETMv3
 * 0x10, PTM 0x13) re-formatted and listed by trc_pkt_lister give the
 * same packets as each stream on its own as source_data. */

typedef struct stream {
    uint8_t *d;
    size_t n;
} stream;

static int stream_cb(void *ctx, uint8_t id, uint64_t index, const uint8_t *data,
                     size_t len)
{
    stream *s = ctx;

    (void)index;
    s[id].d = realloc(s[id].d, s[id].n + len);
    cr_assert_not_null(s[id].d);
    memcpy(s[id].d + s[id].n, data, len);
    s[id].n += len;
    return 0;
}

/* The packet lines of a listing without "Idx:..; ID:..;" (indices differ
 * between framed and raw buffers) and without NOTSYNC (printed once per
 * delivered block).  Returns the line count. */
static size_t lister_packets(const char *dir, const char *extra, char **out)
{
    char cmd[1024], line[1024];
    size_t n = 0, len = 0, cap = 0;
    FILE *p;

    *out = NULL;
    snprintf(cmd, sizeof cmd, "trc_pkt_lister -ss_dir '%s' %s -logstdout 2>&1",
             dir, extra);
    p = popen(cmd, "r");
    cr_assert_not_null(p);
    while (fgets(line, sizeof line, p)) {
        char *s = line;
        size_t l;
        if (strncmp(s, "Idx:", 4) != 0 || strstr(s, "NOTSYNC"))
            continue;
        s = strchr(s, ';');
        s = s ? strchr(s + 1, ';') : NULL;
        cr_assert_not_null(s, "odd line: %s", line);
        l = strlen(s);
        if (len + l + 1 > cap) {
            cap = (len + l + 1) * 2;
            *out = realloc(*out, cap);
        }
        memcpy(*out + len, s, l + 1);
        len += l;
        n++;
    }
    cr_assert_eq(pclose(p), 0, "%s", cmd);
    return n;
}

static void write_snap(const char *dir, const tb_snap_out_source *src, size_t n,
                       const uint8_t *buf, size_t len, const char *format)
{
    char err[512];

    cr_assert_eq(tb_snapshot_write(dir, src, n, buf, len, format, err, sizeof err),
                 0, "%s", err);
}

/* tb_formatter_tick's port model (frame.h, docs/vectors.md), worked by
 * hand: the port is busy (n + 1) / 2 cycles after the cycle n bytes came
 * at; a later tick pads min(idle cycles, TB_FORMATTER_MAX_IDLE) HSYNCs;
 * none before the first bytes or when the cycle goes back; none without
 * TB_FRAME_HAS_HSYNC.  The bytes deformat back unchanged. */
Test(formatter, tick_pads_idle_port_cycles)
{
    static const struct { uint64_t cycle; size_t n; unsigned hsyncs; } steps[] = {
        {5, 3, 0},    /* the first bytes: no idle before; busy until 7 */
        {8, 2, 1},    /* idle 7..8; busy until 9 */
        {9, 1, 0},    /* no idle; busy until 10 */
        {100, 4, 4},  /* idle 90 cycles, 4 kept; busy until 102 */
        {50, 1, 0},   /* back in time: no idle; busy until 103 */
        {106, 1, 3},  /* idle 3 */
    };
    static const unsigned modes[] = {TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC,
                                     TB_FRAME_HAS_FSYNC};

    for (size_t m = 0; m < 2; m++) {
        tb_formatter *f = tb_formatter_new(modes[m]);
        outbuf o = {0};
        uint8_t in[64];
        size_t nin = 0, i;
        unsigned want = 0, got = 0;
        runs r = {0};

        cr_assert_not_null(f);
        for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
            cr_assert_eq(tb_formatter_tick(f, steps[k].cycle, sink, &o), 0);
            for (i = 0; i < steps[k].n; i++)
                in[nin + i] = (uint8_t)(0x10 + 2 * (nin + i)); /* even: aux bits 0 */
            cr_assert_eq(tb_formatter_put(f, 0x21, in + nin, steps[k].n, sink, &o), 0);
            nin += steps[k].n;
            want += m == 0 ? steps[k].hsyncs : 0;
        }
        cr_assert_eq(tb_formatter_flush(f, sink, &o), 0);
        tb_formatter_free(f);
        /* HSYNCs on the half-word grid, FSYNCs apart. */
        for (i = 0; i + 1 < o.n;) {
            if (i + 3 < o.n && !memcmp(o.d + i, "\xFF\xFF\xFF\x7F", 4)) {
                i += 4;
            } else {
                got += o.d[i] == 0xFF && o.d[i + 1] == 0x7F;
                i += 2;
            }
        }
        cr_expect_eq(got, want, "mode %zu: %u HSYNCs, the model gives %u", m, got, want);
        cr_assert_eq(deformat(o.d, o.n, modes[m] | TB_FRAME_HAS_HSYNC, 3, 7, &r), 0);
        cr_assert_gt(r.n, 0);
        {
            size_t at = 0;

            for (i = 0; i < r.n; i++) {
                cr_assert_eq(r.v[i].id, 0x21);
                cr_assert_leq(at + r.v[i].n, nin);
                cr_assert_arr_eq(r.v[i].data, in + at, r.v[i].n);
                at += r.v[i].n;
            }
            cr_assert_eq(at, nin);
        }
        runs_free(&r);
        free(o.d);
    }
}

Test(formatter, opencsd_lists_formatted_buffer)
{
    static const struct { unsigned flags; const char *format, *opt; } modes[] = {
        {TB_FRAME_MEM_ALIGNED, "coresight", ""},
        {TB_FRAME_HAS_FSYNC, "dstream_coresight", ""},
        {TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC, "coresight", "-tpiu_hsync"},
    };
    size_t len, m;
    uint8_t *ref = load_ref("TC2", "cstrace.bin", &len);
    stream st[0x80] = {{0}};
    tb_config etm, ptm;
    char tmp[] = "/tmp/tb_frame_XXXXXX", dir[256];
    tb_snap_out_source srcs[2];
    char *raw_list[2];
    size_t raw_n[2];
    static const uint8_t ids[2] = {0x10, 0x13};
    int i;

    if (!ref || !have_lister())
        return;
    {
        tb_deformatter *d = tb_deformatter_new(0);
        cr_assert_eq(tb_deformatter_push(d, ref, len, 0, stream_cb, st), 0);
        cr_assert_eq(tb_deformatter_finish(d, stream_cb, st), 0);
        tb_deformatter_free(d);
    }
    /* TC2's registers (device_5.ini, device_8.ini). */
    cr_assert_eq(tb_config_from_regs(&etm, 0x10001860, 0x410CF250, 0x344008F2, 0x10), 0);
    cr_assert_eq(tb_config_from_regs(&ptm, 0x10001000, 0x411CF312, 0x34C01AC2, 0x13), 0);
    srcs[0] = (tb_snap_out_source){.name = "ETM_0", .cfg = &etm, .core = "cpu_0",
                                   .core_type = "Cortex-A7"};
    srcs[1] = (tb_snap_out_source){.name = "PTM_0", .cfg = &ptm, .core = "cpu_3",
                                   .core_type = "Cortex-A15"};
    cr_assert_not_null(mkdtemp(tmp));

    /* Each stream alone, unformatted. */
    for (i = 0; i < 2; i++) {
        snprintf(dir, sizeof dir, "%s/raw%d", tmp, i);
        write_snap(dir, &srcs[i], 1, st[ids[i]].d, st[ids[i]].n, "source_data");
        raw_n[i] = lister_packets(dir, "", &raw_list[i]);
        cr_assert_gt(raw_n[i], 1000, "only %zu packets", raw_n[i]);
    }
    for (m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        tb_formatter *f = tb_formatter_new(modes[m].flags);
        outbuf o = {0};
        size_t pos[2] = {0, 0};
        uint64_t seed = 5 + m;
        tb_snapshot s;
        char err[512];

        /* Interleave the two in random slices, idling now and then. */
        while (pos[0] < st[0x10].n || pos[1] < st[0x13].n) {
            int k = (int)(tb_test_rand(&seed) % 2);
            size_t left = st[ids[k]].n - pos[k], n = 1 + tb_test_rand(&seed) % 40;
            if (n > left)
                n = left;
            cr_assert_eq(tb_formatter_put(f, ids[k], st[ids[k]].d + pos[k], n,
                                          sink, &o), 0);
            pos[k] += n;
            if ((modes[m].flags & TB_FRAME_HAS_HSYNC) && tb_test_rand(&seed) % 5 == 0)
                cr_assert_eq(tb_formatter_idle(f, sink, &o), 0);
        }
        cr_assert_eq(tb_formatter_flush(f, sink, &o), 0);
        tb_formatter_free(f);
        snprintf(dir, sizeof dir, "%s/fmt%zu", tmp, m);
        write_snap(dir, srcs, 2, o.d, o.n, modes[m].format);
        /* Our reader sees what we wrote. */
        cr_assert_eq(tb_snapshot_load(&s, dir, err, sizeof err), 0, "%s", err);
        cr_assert_eq(s.n_sources, 2);
        cr_assert_str_eq(s.sources[1].core, "cpu_3");
        tb_snapshot_fini(&s);
        /* Our runs and indices equal OpenCSD's in every mode. */
        {
            runs mine = {0}, theirs = {0};
            cr_assert_eq(deformat(o.d, o.n, modes[m].flags, 0, 0, &mine), 0);
            lister_runs(dir, modes[m].opt, &theirs);
            assert_runs_equal(&mine, &theirs, modes[m].format);
            cr_assert_gt(mine.n, 1000);
            runs_free(&mine);
            runs_free(&theirs);
        }
        for (i = 0; i < 2; i++) {
            char opt[64], *list;
            size_t n;
            snprintf(opt, sizeof opt, "%s -id 0x%x", modes[m].opt, ids[i]);
            n = lister_packets(dir, opt, &list);
            cr_assert_eq(n, raw_n[i], "mode %zu id 0x%x: %zu packets vs %zu", m,
                         ids[i], n, raw_n[i]);
            cr_assert_str_eq(list, raw_list[i], "mode %zu id 0x%x", m, ids[i]);
            free(list);
        }
        free(o.d);
    }
    for (i = 0; i < 2; i++)
        free(raw_list[i]);
    for (i = 0; i < 0x80; i++)
        free(st[i].d);
    {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
        cr_assert_eq(system(cmd), 0);
    }
    free(ref);
}

/* ------------------------------------------------------------------ */
/* Span mode (frame.h tb_deformatter_push_spans / _finish_spans): each
 * span, expanded through its map, must give exactly the (ID, stream
 * index, byte) triples of run mode, in the same order, with the same
 * return from every call and the same frame errors; spans hold at most
 * 4096 bytes and their maps are well formed (types.h tb_span_map).  Run
 * mode is the oracle: it equals OpenCSD's unpacked runs above. */

typedef struct triple {
    uint8_t id, byte;
    bool first;      /* a run (run mode) or segment (span mode) starts here */
    uint64_t index;
    size_t call;     /* the push / finish call that delivered it (0-based) */
} triple;

typedef struct tlist {
    triple *v;
    size_t n, cap;
    int *rc;         /* return of every push / finish call, in order */
    size_t nrc, caprc;
    bool in_finish;
    /* span mode */
    size_t spans, segs, max_span, full_spans;
    size_t finish_spans; /* spans (span mode) or runs (run mode) from finish */
    size_t stop_after; /* the span callback returns 1 on this span (1-based); 0 never */
    bool late;         /* a callback came after the one that stopped */
} tlist;

static void tlist_add(tlist *t, uint8_t id, uint64_t index, const uint8_t *data, size_t len)
{
    if (t->n + len > t->cap) {
        t->cap = (t->n + len) * 2 + 1024;
        t->v = realloc(t->v, t->cap * sizeof *t->v);
        cr_assert_not_null(t->v);
    }
    for (size_t k = 0; k < len; k++)
        t->v[t->n++] = (triple){id, data[k], k == 0, index + k, t->nrc};
}

static void tlist_rc(tlist *t, int rc)
{
    if (t->nrc == t->caprc) {
        t->caprc = t->caprc ? 2 * t->caprc : 256;
        t->rc = realloc(t->rc, t->caprc * sizeof *t->rc);
        cr_assert_not_null(t->rc);
    }
    t->rc[t->nrc++] = rc;
}

static void tlist_free(tlist *t)
{
    free(t->v);
    free(t->rc);
    memset(t, 0, sizeof *t);
}

static int run_triples(void *ctx, uint8_t id, uint64_t index, const uint8_t *data, size_t len)
{
    cr_assert(len > 0 && len <= 15, "run of %zu bytes", len);
    cr_assert(id >= 1 && id < 0x70, "run for id 0x%02x", id);
    ((tlist *)ctx)->finish_spans += ((tlist *)ctx)->in_finish;
    tlist_add(ctx, id, index, data, len);
    return 0;
}

static int span_triples(void *ctx, uint8_t id, const uint8_t *data, size_t len,
                        const tb_span_map *m)
{
    tlist *t = ctx;
    size_t start = 0;

    if (t->stop_after && t->spans >= t->stop_after)
        t->late = true;
    cr_assert(id >= 1 && id < 0x70, "span for id 0x%02x", id);
    cr_assert(len > 0 && len <= 4096, "span of %zu bytes", len);
    cr_assert_not_null(data);
    cr_assert_not_null(m);
    cr_assert(m->n > 0 && m->end && m->index, "span map n %zu", m->n);
    for (size_t s = 0; s < m->n; s++) {
        cr_assert_gt(m->end[s], start, "span of %zu: segment %zu ends at %zu, after %zu",
                     len, s, m->end[s], start);
        cr_assert_leq(m->end[s], len);
        tlist_add(t, id, m->index[s], data + start, m->end[s] - start);
        start = m->end[s];
    }
    cr_assert_eq(start, len, "span of %zu bytes, map ends at %zu", len, start);
    t->spans++;
    t->segs += m->n;
    t->full_spans += len == 4096;
    t->finish_spans += t->in_finish;
    if (len > t->max_span)
        t->max_span = len;
    return t->stop_after && t->spans == t->stop_after;
}

/* One pass in run or span mode, pushed in pieces of `chunk` bytes (0:
 * whole), only `ids` selected (nids 0: all).  Stops pushing after
 * TB_ERR_STOPPED, as a caller must.  *err_ret, *nerr, *last_err: what
 * tb_deformatter_error_info() says at the end. */
static void deformat_triples(const uint8_t *buf, size_t len, unsigned flags, size_t chunk,
                             const uint8_t *ids, size_t nids, bool spans, tlist *out,
                             uint64_t err[3])
{
    tb_deformatter *d = tb_deformatter_new(flags);
    size_t p = 0;
    int rc = 0;

    cr_assert_not_null(d);
    cr_assert_eq(tb_deformatter_set_ids(d, ids, nids), 0);
    while (p < len) {
        size_t n = chunk && len - p > chunk ? chunk : len - p, before = out->spans;

        rc = spans ? tb_deformatter_push_spans(d, buf + p, n, p, span_triples, out)
                   : tb_deformatter_push(d, buf + p, n, p, run_triples, out);
        tlist_rc(out, rc);
        /* TB_ERR_STOPPED exactly from the call whose callback stopped. */
        if (spans && out->stop_after)
            cr_assert_eq(rc == TB_ERR_STOPPED,
                         before < out->stop_after && out->spans >= out->stop_after,
                         "push at %zu returned %d, spans %zu -> %zu, stop at %zu", p, rc,
                         before, out->spans, out->stop_after);
        if (rc == TB_ERR_STOPPED)
            break;
        p += n;
    }
    if (rc != TB_ERR_STOPPED) {
        size_t before = out->spans;

        out->in_finish = true;
        rc = spans ? tb_deformatter_finish_spans(d, span_triples, out)
                   : tb_deformatter_finish(d, run_triples, out);
        out->in_finish = false;
        tlist_rc(out, rc);
        if (spans && out->stop_after)
            cr_assert_eq(rc == TB_ERR_STOPPED,
                         before < out->stop_after && out->spans >= out->stop_after,
                         "finish returned %d, spans %zu -> %zu, stop at %zu", rc, before,
                         out->spans, out->stop_after);
    }
    err[0] = (uint64_t)tb_deformatter_error_info(d, &err[1], &err[2]);
    tb_deformatter_free(d);
}

/* want[0..n) equals got[0..n) triple for triple; every segment of a
 * span starts where a run starts (segments are whole runs). */
static void expect_triples(const char *what, const tlist *want, const tlist *got, size_t n)
{
    cr_assert_leq(n, want->n);
    cr_assert_leq(n, got->n);
    for (size_t i = 0; i < n; i++) {
        const triple *a = &want->v[i], *b = &got->v[i];

        cr_assert(a->id == b->id && a->index == b->index && a->byte == b->byte,
                  "%s: byte %zu: runs give id 0x%02x index %llu 0x%02x, spans id 0x%02x "
                  "index %llu 0x%02x",
                  what, i, a->id, (unsigned long long)a->index, a->byte, b->id,
                  (unsigned long long)b->index, b->byte);
        /* A span never outlives the call that filled it (frame.h). */
        cr_assert_eq(a->call, b->call, "%s: byte %zu (index %llu) from call %zu in run "
                     "mode, %zu in span mode", what, i, (unsigned long long)a->index,
                     a->call, b->call);
        cr_assert(!b->first || a->first, "%s: byte %zu (index %llu): a segment starts "
                  "inside a run", what, i, (unsigned long long)a->index);
    }
}

typedef struct span_stats {
    size_t passes, bytes, spans, segs, full_spans, finish_spans, finish_runs, max_span, errs;
    size_t truncated; /* passes whose finish said TB_ERR_TRUNCATED */
} span_stats;

/* Every chunking and ID selection ({one}, all): spans equal runs. */
static void spans_equal_runs(const uint8_t *buf, size_t len, unsigned flags, uint8_t one,
                             const char *what, span_stats *st)
{
    static const size_t chunks[] = {1, 7, 16, 4096, 0};
    char desc[200];

    for (size_t sel = 0; sel < 2; sel++) {
        for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
            tlist r = {0}, s = {0};
            uint64_t er[3], es[3];

            deformat_triples(buf, len, flags, chunks[c], &one, sel ? 0 : 1, false, &r, er);
            deformat_triples(buf, len, flags, chunks[c], &one, sel ? 0 : 1, true, &s, es);
            snprintf(desc, sizeof desc, "%s, flags %u, %s, chunk %zu", what, flags,
                     sel ? "all IDs" : "one ID", chunks[c]);
            cr_assert_eq(s.n, r.n, "%s: %zu bytes in spans, %zu in runs", desc, s.n, r.n);
            expect_triples(desc, &r, &s, r.n);
            cr_assert_eq(s.nrc, r.nrc, "%s: %zu calls vs %zu", desc, s.nrc, r.nrc);
            for (size_t i = 0; i < r.nrc; i++)
                cr_assert_eq(s.rc[i], r.rc[i], "%s: call %zu returned %d in span mode, %d "
                             "in run mode", desc, i, s.rc[i], r.rc[i]);
            cr_assert(es[0] == er[0] && es[1] == er[1] && es[2] == er[2],
                      "%s: error info %llu/%llu/%llu vs %llu/%llu/%llu", desc,
                      (unsigned long long)es[0], (unsigned long long)es[1],
                      (unsigned long long)es[2], (unsigned long long)er[0],
                      (unsigned long long)er[1], (unsigned long long)er[2]);
            st->passes++;
            st->bytes += s.n;
            st->spans += s.spans;
            st->segs += s.segs;
            st->full_spans += s.full_spans;
            st->finish_spans += s.finish_spans;
            st->finish_runs += r.finish_spans;
            cr_assert_eq(s.finish_spans > 0, r.finish_spans > 0, "%s: finish", desc);
            st->errs += er[1];
            st->truncated += r.rc[r.nrc - 1] == TB_ERR_TRUNCATED;
            if (s.max_span > st->max_span)
                st->max_span = s.max_span;
            tlist_free(&r);
            tlist_free(&s);
        }
    }
}

static void log_stats(const char *what, const span_stats *st)
{
    cr_log_info("%s: %zu passes, %zu bytes compared, %zu spans (%zu segments, %zu of 4096 "
                "bytes, %zu from finish (run mode: %zu runs), longest %zu), %zu frame errors",
                what, st->passes, st->bytes, st->spans, st->segs, st->full_spans,
                st->finish_spans, st->finish_runs, st->max_span, st->errs);
}

Test(deformatter_spans, real_buffers_equal_runs)
{
    static const char *snaps[] = {"TC2", "Snowball"};
    span_stats st = {0};

    for (size_t s = 0; s < 2; s++) {
        size_t len;
        uint8_t *buf = load_ref(snaps[s], "cstrace.bin", &len);

        if (!buf)
            return;
        spans_equal_runs(buf, len, TB_FRAME_MEM_ALIGNED, 0x10, snaps[s], &st);
        free(buf);
    }
    log_stats("real ETB buffers", &st);
    /* TC2 + Snowball: 2 selections x 5 chunkings each; all the trace
     * bytes of both, once with every ID and once with 0x10 only. */
    cr_assert_eq(st.passes, 20u);
    cr_assert_eq(st.errs, 0u);
    /* Runs join into long spans. */
    cr_assert_gt(st.max_span, 4000u);
}

Test(deformatter_spans, corrupt_and_random_equal_runs)
{
    static const char *snaps[] = {"TC2", "Snowball"};
    static const unsigned modes[] = {0, TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC,
                                     TB_FRAME_HAS_FSYNC, TB_FRAME_RESET_ON_4FSYNC};
    uint64_t seed = 0x5A5A;
    span_stats st = {0};
    uint8_t *junk;

    for (size_t s = 0; s < 2; s++) {
        size_t len;
        uint8_t *buf = load_ref(snaps[s], "cstrace.bin", &len);

        if (!buf)
            return;
        for (int it = 0; it < 4; it++) {
            /* Flipped bits, and an ID byte made reserved (0x70-0x7F). */
            for (int k = 0; k < 30; k++)
                buf[tb_test_rand(&seed) % len] ^= (uint8_t)(1u << (tb_test_rand(&seed) % 8));
            for (int k = 0; k < 3; k++)
                buf[tb_test_rand(&seed) % (len / 16) * 16 + 2 * (tb_test_rand(&seed) % 7)] =
                    (uint8_t)(((0x70 + tb_test_rand(&seed) % 16) << 1) | 1);
            spans_equal_runs(buf, len, modes[it], 0x10, snaps[s], &st);
        }
        free(buf);
    }
    junk = malloc(4096);
    cr_assert_not_null(junk);
    for (int it = 0; it < 4; it++) {
        for (size_t k = 0; k < 4096; k++)
            junk[k] = (uint8_t)tb_test_rand(&seed);
        for (size_t k = 0; k + 4 <= 4096; k += 4)
            if (it % 2 && tb_test_rand(&seed) % 8 == 0)
                memcpy(junk + k, "\xFF\xFF\xFF\x7F", 4);
        spans_equal_runs(junk, 4096 - (size_t)it * 5, modes[it], (uint8_t)(1 + it * 0x11),
                         "random bytes", &st);
    }
    free(junk);
    log_stats("corrupt and random", &st);
    cr_assert_gt(st.errs, 0u);
}

/* Dense ID bytes (dense_frames): spans equal runs with one ID selected
 * too, where whole frames of the ID go straight into the span and
 * stretches without it are skipped in bulk. */
Test(deformatter_spans, dense_ids_equal_runs)
{
    static const uint8_t ids[] = {0x10, 0x11, 0x13};
    uint64_t seed = 0xDE5E;
    span_stats st = {0};
    uint8_t buf[16 * 400];

    for (int it = 0; it < 3; it++) {
        dense_frames(buf, sizeof buf / 16, &seed);
        spans_equal_runs(buf, sizeof buf, it == 2 ? TB_FRAME_RESET_ON_4FSYNC : 0, ids[it],
                         "dense ID bytes", &st);
    }
    log_stats("dense ID bytes", &st);
    cr_assert_eq(st.passes, 30u);
    cr_assert_gt(st.segs, 1000u);
}

/* Frames whose every pair starts with an ID byte, the owner turning to
 * and from the selected ID `one`: strictly by turns in stretches of
 * eight frames (`one` on the odd pairs, so also at each frame's start:
 * five runs a frame, twenty in four), at random in between.  A 64-byte group with more than eight runs of the
 * selected ID takes the four-frame span path (deformatter.c
 * span_groups) more than one round of eight. */
static void turning_frames(uint8_t *buf, size_t nframes, uint8_t one, uint64_t *seed)
{
    for (size_t k = 0; k < nframes; k++) {
        uint8_t *f = buf + 16 * k;
        const bool strict = (k / 8) % 2 == 0;

        for (size_t i = 0; i < 15; i += 2) {
            const uint64_t r = tb_test_rand(seed);
            const bool mine = strict ? (i / 2) % 2 == 1 : (r & 1) != 0;
            const uint8_t id = mine ? one : (r & 2) ? 0x21 : 0x22;

            f[i] = (uint8_t)(id << 1 | 1);
            if (i < 14)
                f[i + 1] = (uint8_t)(r >> 8);
        }
        f[15] = (uint8_t)tb_test_rand(seed);
    }
}

Test(deformatter_spans, turning_ids_equal_runs)
{
    uint64_t seed = 0x7E27;
    span_stats st = {0};
    uint8_t buf[16 * 400];

    for (int it = 0; it < 3; it++) {
        const uint8_t one = (uint8_t)(0x10 + it);

        turning_frames(buf, sizeof buf / 16, one, &seed);
        spans_equal_runs(buf, sizeof buf, 0, one, "turning IDs", &st);
    }
    log_stats("turning IDs", &st);
    cr_assert_eq(st.passes, 30u);
    cr_assert_eq(st.errs, 0u);
    /* Three runs of the selected ID a frame on average. */
    cr_assert_gt(st.segs, 3u * 400 * 3 * 10);
}

/* A TPIU-style stream from the formatter (FSYNC, HSYNC idles), three
 * sources, one of them in long stretches so spans fill to 4096 bytes. */
static void tpiu_stream(unsigned flags, uint64_t seed, outbuf *o)
{
    static const uint8_t ids[3] = {0x10, 0x22, 0x35};
    tb_formatter *f = tb_formatter_new(flags);
    uint8_t d[6000];

    cr_assert_not_null(f);
    for (int k = 0; k < 300; k++) {
        uint8_t id = ids[tb_test_rand(&seed) % 3];
        size_t n = k % 50 == 7 ? sizeof d : 1 + (size_t)(tb_test_rand(&seed) % 40);

        for (size_t j = 0; j < n; j++)
            d[j] = (uint8_t)tb_test_rand(&seed);
        cr_assert_eq(tb_formatter_put(f, k % 50 == 7 ? 0x10 : id, d, n, sink, o), 0);
        if ((flags & TB_FRAME_HAS_HSYNC) && tb_test_rand(&seed) % 4 == 0)
            cr_assert_eq(tb_formatter_idle(f, sink, o), 0);
    }
    cr_assert_eq(tb_formatter_flush(f, sink, o), 0);
    tb_formatter_free(f);
}

Test(deformatter_spans, tpiu_stream_equal_runs)
{
    static const unsigned modes[] = {TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC,
                                     TB_FRAME_HAS_FSYNC};
    span_stats st = {0};

    for (size_t m = 0; m < 2; m++) {
        outbuf o = {0};

        tpiu_stream(modes[m], 11 + m, &o);
        spans_equal_runs(o.d, o.n, modes[m], 0x10, "TPIU stream", &st);
        /* Cut short: finish ends on a partial frame. */
        spans_equal_runs(o.d, o.n - 5, modes[m], 0x22, "TPIU stream cut short", &st);
        free(o.d);
    }
    log_stats("TPIU streams", &st);
    cr_assert_eq(st.max_span, 4096u);
    cr_assert_gt(st.full_spans, 0u);
    /* The streams cut short end in partial frames: finish says so (in
     * both modes, compared above), with every chunking and selection. */
    cr_assert_eq(st.truncated, 20u);
}

/* A span callback that stops: TB_ERR_STOPPED from that call (checked in
 * deformat_triples), no callback after it, and the bytes delivered are
 * the first ones of run mode. */
static void stop_spans(const uint8_t *buf, size_t len, unsigned flags, const uint8_t *ids,
                       size_t nids, const char *what, size_t *stops)
{
    static const size_t chunks[] = {7, 4096, 0};
    char desc[200];

    for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        tlist r = {0}, all = {0};
        uint64_t e[3];
        size_t ks[5];

        deformat_triples(buf, len, flags, chunks[c], ids, nids, false, &r, e);
        deformat_triples(buf, len, flags, chunks[c], ids, nids, true, &all, e);
        cr_assert_geq(all.spans, 2u, "%s chunk %zu: %zu spans, %zu bytes, rc %d", what,
                     chunks[c], all.spans, all.n, all.rc[0]);
        ks[0] = 1;
        ks[1] = 2;
        ks[2] = all.spans / 2;
        ks[3] = all.spans - 1;
        ks[4] = all.spans; /* the last: from finish_spans when it gives one */
        for (size_t i = 0; i < 5; i++) {
            tlist s = {.stop_after = ks[i]};

            deformat_triples(buf, len, flags, chunks[c], ids, nids, true, &s, e);
            snprintf(desc, sizeof desc, "%s, chunk %zu, stop at span %zu of %zu", what,
                     chunks[c], ks[i], all.spans);
            cr_assert_eq(s.spans, ks[i], "%s: %zu spans", desc, s.spans);
            cr_assert(!s.late, "%s: callback after the stop", desc);
            cr_assert_eq(s.rc[s.nrc - 1], TB_ERR_STOPPED, "%s", desc);
            cr_assert_gt(s.n, 0u);
            expect_triples(desc, &r, &s, s.n);
            (*stops)++;
            tlist_free(&s);
        }
        tlist_free(&r);
        tlist_free(&all);
    }
}

Test(deformatter_spans, stop_from_callback)
{
    size_t len, stops = 0;
    uint8_t *buf = load_ref("TC2", "cstrace.bin", &len);
    const uint8_t id13 = 0x13;
    outbuf o = {0};

    if (!buf)
        return;
    stop_spans(buf, len, 0, NULL, 0, "TC2 all IDs", &stops);
    stop_spans(buf, len, 0, &id13, 1, "TC2 0x13", &stops);
    tpiu_stream(TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC, 3, &o);
    stop_spans(o.d, o.n, TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC, NULL, 0, "TPIU stream",
               &stops);
    cr_assert_eq(stops, 45u);
    free(o.d);
    free(buf);
}

Test(deformatter_spans, null_deformatter)
{
    tlist t = {0};
    const uint8_t b[16] = {0x21};

    cr_assert_eq(tb_deformatter_push_spans(NULL, b, sizeof b, 0, span_triples, &t),
                 TB_ERR_INVAL);
    cr_assert_eq(tb_deformatter_finish_spans(NULL, span_triples, &t), TB_ERR_INVAL);
    cr_assert_eq(t.spans, 0u);
}
