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
