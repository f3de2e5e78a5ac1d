/*
 * Deformatter harness: input = 1 flags byte (bits 0-2: TB_FRAME_HAS_FSYNC,
 * TB_FRAME_HAS_HSYNC, TB_FRAME_RESET_ON_4FSYNC) + the formatted buffer.
 *
 * Invariants: runs name a real source ID (0x01-0x6F, protocol-notes 5.1)
 * and are non-empty; run indices never go back and runs stay inside the
 * buffer; at most 15 data bytes come out of
 * each 16-byte frame; the output bytes, their IDs and indices, the error
 * count and the return codes are the same whole, cut in two, and in
 * small chunks (frame.h: chunks of any size), and in span mode
 * (tb_deformatter_push_spans: valid maps, spans of at most 4096 bytes,
 * segment by segment the same bytes and indices as the runs); with one
 * ID selected, exactly that ID's runs and the same errors.
 */
#include <string.h>

#include "fuzz.h"
#include "tracebench/frame.h"

#define H "deformatter"

typedef struct dstate {
    size_t len;              /* buffer bytes */
    uint64_t hash;
    uint64_t bytes;          /* data bytes delivered */
    bool have_last;
    uint64_t last_index;
    uint8_t sel;             /* with every ID: the one also hashed alone */
    uint64_t sel_hash, sel_bytes;
} dstate;

static int dfm_on_run(void *ctx, uint8_t id, uint64_t index, const uint8_t *data,
                  size_t len)
{
    dstate *s = ctx;
    size_t i;

    TB_FUZZ_CHECK(H, id >= 0x01 && id < 0x70, "run for ID 0x%02x", id);
    TB_FUZZ_CHECK(H, len > 0 && data != NULL, "empty run for ID 0x%02x", id);
    TB_FUZZ_CHECK(H, index + len <= s->len,
                  "run [%llu, +%zu) outside a %zu-byte buffer",
                  (unsigned long long)index, len, s->len);
    /* Run starts never go back.  Bytes of consecutive runs may share
     * indices: OpenCSD numbers a run begun by an ID change from that
     * byte's frame position, while the previous run keeps counting
     * (frame.h), and the aux-bit trick gives the old ID a byte after the
     * change (protocol-notes 5.1). */
    TB_FUZZ_CHECK(H, !s->have_last || index >= s->last_index,
                  "run at index %llu after a run at %llu",
                  (unsigned long long)index, (unsigned long long)s->last_index);
    s->have_last = true;
    s->last_index = index;
    /* Byte by byte, so runs cut differently still compare equal. */
    for (i = 0; i < len; i++) {
        uint8_t rec[10];
        uint64_t at = index + i;
        rec[0] = id;
        memcpy(rec + 1, &at, 8);
        rec[9] = data[i];
        s->hash = tb_fuzz_hash(s->hash, rec, sizeof rec);
        if (id == s->sel)
            s->sel_hash = tb_fuzz_hash(s->sel_hash, rec, sizeof rec);
    }
    s->bytes += len;
    if (id == s->sel)
        s->sel_bytes += len;
    return 0;
}

/* Span mode: each segment checked and hashed as a run would be. */
static int dfm_on_span(void *ctx, uint8_t id, const uint8_t *data, size_t len,
                       const tb_span_map *map)
{
    size_t s, start = 0;

    TB_FUZZ_CHECK(H, map != NULL && map->n > 0 && len > 0 && len <= 4096,
                  "span of %zu bytes with %zu segments", len, map ? map->n : 0);
    for (s = 0; s < map->n; s++) {
        TB_FUZZ_CHECK(H, map->end[s] > start && map->end[s] <= len,
                      "segment %zu ends at %zu after %zu (span %zu)", s,
                      map->end[s], start, len);
        (void)dfm_on_run(ctx, id, map->index[s], data + start, map->end[s] - start);
        start = map->end[s];
    }
    TB_FUZZ_CHECK(H, start == len, "segments cover %zu of %zu bytes", start, len);
    return 0;
}

typedef struct dresult {
    uint64_t hash, bytes, errors;
    uint64_t sel_hash, sel_bytes;
    bool bad_frame;
    int finish;
} dresult;

/* sel: with only, the one ID delivered; else the ID also hashed alone. */
static dresult run(unsigned flags, const uint8_t *buf, size_t len,
                   const size_t *cut, size_t ncut, bool spans, uint8_t sel, bool only)
{
    dstate s = {.len = len, .hash = TB_FUZZ_HASH_INIT, .sel = sel,
                .sel_hash = TB_FUZZ_HASH_INIT};
    dresult r = {0};
    tb_deformatter *d = tb_deformatter_new(flags);
    size_t at = 0, i;

    TB_FUZZ_CHECK(H, d != NULL, "tb_deformatter_new(0x%x) failed", flags);
    if (only)
        TB_FUZZ_CHECK(H, tb_deformatter_set_ids(d, &sel, 1) == 0, "set_ids(0x%02x)", sel);
    for (i = 0; i < ncut; i++) {
        int rc = spans ? tb_deformatter_push_spans(d, buf + at, cut[i] - at, at,
                                                   dfm_on_span, &s)
                       : tb_deformatter_push(d, buf + at, cut[i] - at, at, dfm_on_run, &s);
        TB_FUZZ_CHECK(H, rc == 0 || rc == TB_ERR_BAD_FRAME,
                      "push at %zu returned %d", at, rc);
        r.bad_frame |= rc == TB_ERR_BAD_FRAME;
        at = cut[i];
    }
    r.finish = spans ? tb_deformatter_finish_spans(d, dfm_on_span, &s)
                     : tb_deformatter_finish(d, dfm_on_run, &s);
    TB_FUZZ_CHECK(H, r.finish == 0 || r.finish == TB_ERR_TRUNCATED ||
                  r.finish == TB_ERR_NO_SYNC || r.finish == TB_ERR_BAD_FRAME,
                  "finish returned %d", r.finish);
    TB_FUZZ_CHECK(H, (tb_deformatter_error_info(d, &r.errors, NULL) == 1) ==
                  (r.errors > 0), "error_info disagrees with its count");
    TB_FUZZ_CHECK(H, r.bad_frame <= (r.errors > 0),
                  "push said BAD_FRAME but no error was counted");
    /* 15 data bytes per complete frame at most (protocol-notes 5.1). */
    TB_FUZZ_CHECK(H, s.bytes <= len / TB_FRAME_SIZE * 15,
                  "%llu data bytes out of %zu buffer bytes",
                  (unsigned long long)s.bytes, len);
    tb_deformatter_free(d);
    r.hash = s.hash;
    r.bytes = s.bytes;
    r.sel_hash = s.sel_hash;
    r.sel_bytes = s.sel_bytes;
    return r;
}

static void same(const dresult *a, const dresult *b, const char *how)
{
    TB_FUZZ_CHECK(H, a->hash == b->hash && a->bytes == b->bytes,
                  "%s: %llu data bytes vs %llu whole (or other IDs/indices)",
                  how, (unsigned long long)b->bytes,
                  (unsigned long long)a->bytes);
    TB_FUZZ_CHECK(H, a->errors == b->errors && a->bad_frame == b->bad_frame &&
                  a->finish == b->finish,
                  "%s: errors %llu/%d/%d vs whole %llu/%d/%d", how,
                  (unsigned long long)b->errors, b->bad_frame, b->finish,
                  (unsigned long long)a->errors, a->bad_frame, a->finish);
}

int tb_fuzz_deformatter(const uint8_t *data, size_t len)
{
    unsigned flags;
    size_t cut[80], n, at;
    dresult whole, part;
    uint64_t seed;
    uint8_t sel;

    if (len < 1)
        return TB_FUZZ_SKIP;
    if (len > TB_FUZZ_MAX_INPUT)
        len = TB_FUZZ_MAX_INPUT;
    flags = data[0] & 7u;
    data++;
    len--;

    /* The one-ID selection is checked with the ID of the first ID byte
     * (else 0x10): the bytes the input most likely holds. */
    sel = 0x10;
    for (at = 0; at + 1 < len; at += 2) {
        if ((data[at] & 1) && data[at] >> 1 != 0 && data[at] >> 1 < 0x70) {
            sel = data[at] >> 1;
            break;
        }
    }

    cut[0] = len;
    whole = run(flags, data, len, cut, 1, false, sel, false);
    part = run(flags, data, len, cut, 1, true, sel, false);
    same(&whole, &part, "spans");

    cut[0] = tb_fuzz_split(data, len);
    cut[1] = len;
    part = run(flags, data, len, cut, 2, false, sel, false);
    same(&whole, &part, "cut in two");
    /* Selecting one ID gives exactly its runs from the whole (frame.h
     * tb_deformatter_set_ids), with the same errors. */
    for (int spans = 0; spans < 2; spans++) {
        part = run(flags, data, len, cut, 2, spans, sel, true);
        TB_FUZZ_CHECK(H, part.hash == whole.sel_hash && part.bytes == whole.sel_bytes,
                      "ID 0x%02x alone%s: %llu data bytes vs %llu of all IDs (or other "
                      "indices)", sel, spans ? " (spans)" : "",
                      (unsigned long long)part.bytes, (unsigned long long)whole.sel_bytes);
        TB_FUZZ_CHECK(H, part.errors == whole.errors && part.finish == whole.finish,
                      "ID 0x%02x alone: errors %llu/%d vs all IDs %llu/%d", sel,
                      (unsigned long long)part.errors, part.finish,
                      (unsigned long long)whole.errors, whole.finish);
    }

    seed = tb_fuzz_hash(TB_FUZZ_HASH_INIT ^ 2, data, len);
    for (n = 0, at = 0; at < len && n < 79;) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        at += 1 + (size_t)((seed >> 33) % 24);
        if (at > len)
            at = len;
        cut[n++] = at;
    }
    if (n == 0 || cut[n - 1] != len)
        cut[n++] = len;
    part = run(flags, data, len, cut, n, false, sel, false);
    same(&whole, &part, "small chunks");
    part = run(flags, data, len, cut, n, true, sel, false);
    same(&whole, &part, "spans in small chunks");
    return 0;
}

#undef H
