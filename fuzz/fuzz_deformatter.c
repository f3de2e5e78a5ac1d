/*
 * Deformatter harnesses: input = 1 flags byte (bits 0-2: TB_FRAME_HAS_FSYNC,
 * TB_FRAME_HAS_HSYNC, TB_FRAME_RESET_ON_4FSYNC) + the formatted buffer.
 *
 * deformatter (fast): the buffer once through the span mode the CLI
 * uses (tb_deformatter_push_spans), a deformatter made once per flags
 * value and reset.  Invariants: runs name a real source ID (0x01-0x6F,
 * protocol-notes 5.1) and are non-empty; run indices never go back and
 * runs stay inside the buffer; spans are valid maps of at most 4096
 * bytes; at most 15 data bytes come out of each 16-byte frame; the
 * return codes are known ones and the error count agrees with them.
 *
 * deformatter_full: the same, and the output bytes, their IDs and
 * indices, the error count and the return codes are the same whole
 * through runs (tb_deformatter_push, a new deformatter: the reference),
 * whole in span mode, cut in two, and in small chunks (frame.h: chunks
 * of any size), in both modes; with one ID selected, exactly that ID's
 * bytes and the same errors.
 */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "tracebench/frame.h"

#define H "deformatter"

/* One data byte out: the reference run records them, the others compare. */
typedef struct dbyte {
    uint64_t index;
    uint8_t id, byte;
} dbyte;

typedef struct dstate {
    const char *name;
    size_t len;              /* buffer bytes */
    uint64_t bytes;          /* data bytes delivered */
    bool have_last;
    uint64_t last_index;
    uint8_t sel;             /* reference run: its bytes also kept alone */
    tb_fuzz_vec *rec, *rec_sel; /* the reference run's bytes (and sel's) */
    const tb_fuzz_vec *ref;  /* or compare every byte with these */
    const char *how;
} dstate;

static int dfm_on_run(void *ctx, uint8_t id, uint64_t index, const uint8_t *data,
                      size_t len)
{
    dstate *s = ctx;
    const char *h = s->name;

    TB_FUZZ_CHECK(h, id >= 0x01 && id < 0x70, "run for ID 0x%02x", id);
    TB_FUZZ_CHECK(h, len > 0 && data != NULL, "empty run for ID 0x%02x", id);
    TB_FUZZ_CHECK(h, index + len <= s->len,
                  "run [%llu, +%zu) outside a %zu-byte buffer",
                  (unsigned long long)index, len, s->len);
    /* Run starts never go back.  Bytes of consecutive runs may share
     * indices: OpenCSD numbers a run begun by an ID change from that
     * byte's frame position, while the previous run keeps counting
     * (frame.h), and the aux-bit trick gives the old ID a byte after the
     * change (protocol-notes 5.1). */
    TB_FUZZ_CHECK(h, !s->have_last || index >= s->last_index,
                  "run at index %llu after a run at %llu",
                  (unsigned long long)index, (unsigned long long)s->last_index);
    s->have_last = true;
    s->last_index = index;
    /* Byte by byte, so runs cut differently still compare equal. */
    if (s->rec || s->ref) {
        for (size_t i = 0; i < len; i++) {
            const dbyte b = {index + i, id, data[i]};

            if (s->rec) {
                tb_fuzz_vec_push(s->rec, &b);
                if (id == s->sel)
                    tb_fuzz_vec_push(s->rec_sel, &b);
            } else {
                const dbyte *r;

                TB_FUZZ_CHECK(h, s->bytes + i < s->ref->n,
                              "%s: more data bytes than the reference's %zu", s->how,
                              s->ref->n);
                r = tb_fuzz_vec_at(s->ref, s->bytes + i);
                TB_FUZZ_CHECK(h, r->index == b.index && r->id == b.id && r->byte == b.byte,
                              "%s: data byte %llu is 0x%02x of ID 0x%02x at %llu, the "
                              "reference's 0x%02x of ID 0x%02x at %llu", s->how,
                              (unsigned long long)(s->bytes + i), b.byte, b.id,
                              (unsigned long long)b.index, r->byte, r->id,
                              (unsigned long long)r->index);
            }
        }
    }
    s->bytes += len;
    return 0;
}

/* Span mode: each segment checked (and compared) as a run would be. */
static int dfm_on_span(void *ctx, uint8_t id, const uint8_t *data, size_t len,
                       const tb_span_map *map)
{
    dstate *st = ctx;
    size_t s, start = 0;

    TB_FUZZ_CHECK(st->name, map != NULL && map->n > 0 && len > 0 && len <= 4096,
                  "span of %zu bytes with %zu segments", len, map ? map->n : 0);
    for (s = 0; s < map->n; s++) {
        TB_FUZZ_CHECK(st->name, map->end[s] > start && map->end[s] <= len,
                      "segment %zu ends at %zu after %zu (span %zu)", s,
                      map->end[s], start, len);
        (void)dfm_on_run(ctx, id, map->index[s], data + start, map->end[s] - start);
        start = map->end[s];
    }
    TB_FUZZ_CHECK(st->name, start == len, "segments cover %zu of %zu bytes", start, len);
    return 0;
}

typedef struct dresult {
    uint64_t bytes, errors;
    bool bad_frame;
    int finish;
} dresult;

/* The buffer through d (reset or new, IDs selected by the caller) in the
 * chunks cut[] (ascending ends, the last = len). */
static dresult run(dstate *s, tb_deformatter *d, const uint8_t *buf, const size_t *cut,
                   size_t ncut, bool spans)
{
    dresult r = {0};
    size_t at = 0, i;

    for (i = 0; i < ncut; i++) {
        int rc = spans ? tb_deformatter_push_spans(d, buf + at, cut[i] - at, at,
                                                   dfm_on_span, s)
                       : tb_deformatter_push(d, buf + at, cut[i] - at, at, dfm_on_run, s);
        TB_FUZZ_CHECK(s->name, rc == 0 || rc == TB_ERR_BAD_FRAME,
                      "push at %zu returned %d", at, rc);
        r.bad_frame |= rc == TB_ERR_BAD_FRAME;
        at = cut[i];
    }
    r.finish = spans ? tb_deformatter_finish_spans(d, dfm_on_span, s)
                     : tb_deformatter_finish(d, dfm_on_run, s);
    TB_FUZZ_CHECK(s->name, r.finish == 0 || r.finish == TB_ERR_TRUNCATED ||
                  r.finish == TB_ERR_NO_SYNC || r.finish == TB_ERR_BAD_FRAME,
                  "finish returned %d", r.finish);
    TB_FUZZ_CHECK(s->name, (tb_deformatter_error_info(d, &r.errors, NULL) == 1) ==
                  (r.errors > 0), "error_info disagrees with its count");
    TB_FUZZ_CHECK(s->name, r.bad_frame <= (r.errors > 0),
                  "push said BAD_FRAME but no error was counted");
    /* 15 data bytes per complete frame at most (protocol-notes 5.1). */
    TB_FUZZ_CHECK(s->name, s->bytes <= s->len / TB_FRAME_SIZE * 15,
                  "%llu data bytes out of %zu buffer bytes",
                  (unsigned long long)s->bytes, s->len);
    if (s->ref)
        TB_FUZZ_CHECK(s->name, s->bytes == s->ref->n, "%s: %llu data bytes, the reference %zu",
                      s->how, (unsigned long long)s->bytes, s->ref->n);
    r.bytes = s->bytes;
    return r;
}

static void same(const char *name, const dresult *a, const dresult *b, const char *how)
{
    TB_FUZZ_CHECK(name, a->errors == b->errors && a->bad_frame == b->bad_frame &&
                  a->finish == b->finish,
                  "%s: errors %llu/%d/%d vs whole %llu/%d/%d", how,
                  (unsigned long long)b->errors, b->bad_frame, b->finish,
                  (unsigned long long)a->errors, a->bad_frame, a->finish);
}

/* The deformatter for flags, made once and reset (every ID delivered). */
static tb_deformatter *cached(unsigned flags)
{
    static tb_deformatter *d[8];

    if (!d[flags]) {
        d[flags] = tb_deformatter_new(flags);
        TB_FUZZ_CHECK(H, d[flags] != NULL, "tb_deformatter_new(0x%x) failed", flags);
    } else {
        tb_deformatter_reset(d[flags]);
    }
    return d[flags];
}

static int fuzz_deformatter(const char *name, const uint8_t *data, size_t len, bool full)
{
    static tb_fuzz_vec all = {.size = sizeof(dbyte)}, one = {.size = sizeof(dbyte)};
    unsigned flags;
    size_t cut[80], n, at;
    dresult whole, part;
    uint64_t seed;
    uint8_t sel;
    dstate s;

    if (len < 1)
        return TB_FUZZ_SKIP;
    if (len > TB_FUZZ_MAX_INPUT)
        len = TB_FUZZ_MAX_INPUT;
    flags = data[0] & 7u;
    data++;
    len--;
    cut[0] = len;
    if (!full) {
        s = (dstate){.name = name, .len = len, .how = "spans"};
        (void)run(&s, cached(flags), data, cut, 1, true);
        return 0;
    }

    /* The one-ID selection is checked with the ID of the first ID byte
     * (else 0x10): the bytes the input most likely holds. */
    sel = 0x10;
    for (at = 0; at + 1 < len; at += 2) {
        if ((data[at] & 1) && data[at] >> 1 != 0 && data[at] >> 1 < 0x70) {
            sel = data[at] >> 1;
            break;
        }
    }

    /* The reference: runs, a new deformatter, every byte kept. */
    {
        tb_deformatter *d = tb_deformatter_new(flags);

        TB_FUZZ_CHECK(name, d != NULL, "tb_deformatter_new(0x%x) failed", flags);
        all.n = one.n = 0;
        s = (dstate){.name = name, .len = len, .sel = sel, .rec = &all, .rec_sel = &one};
        whole = run(&s, d, data, cut, 1, false);
        tb_deformatter_free(d);
    }
    s = (dstate){.name = name, .len = len, .ref = &all, .how = "spans"};
    part = run(&s, cached(flags), data, cut, 1, true);
    same(name, &whole, &part, "spans");

    cut[0] = tb_fuzz_split(data, len);
    cut[1] = len;
    s = (dstate){.name = name, .len = len, .ref = &all, .how = "cut in two"};
    part = run(&s, cached(flags), data, cut, 2, false);
    same(name, &whole, &part, "cut in two");
    /* Selecting one ID gives exactly its bytes from the whole (frame.h
     * tb_deformatter_set_ids), with the same errors. */
    for (int spans = 0; spans < 2; spans++) {
        tb_deformatter *d = tb_deformatter_new(flags);

        TB_FUZZ_CHECK(name, d != NULL && tb_deformatter_set_ids(d, &sel, 1) == 0,
                      "set_ids(0x%02x)", sel);
        s = (dstate){.name = name, .len = len, .ref = &one,
                     .how = spans ? "one ID alone (spans)" : "one ID alone"};
        part = run(&s, d, data, cut, 2, spans);
        TB_FUZZ_CHECK(name, part.errors == whole.errors && part.finish == whole.finish,
                      "%s (0x%02x): errors %llu/%d vs all IDs %llu/%d", s.how, sel,
                      (unsigned long long)part.errors, part.finish,
                      (unsigned long long)whole.errors, whole.finish);
        tb_deformatter_free(d);
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
    s = (dstate){.name = name, .len = len, .ref = &all, .how = "small chunks"};
    part = run(&s, cached(flags), data, cut, n, false);
    same(name, &whole, &part, "small chunks");
    s = (dstate){.name = name, .len = len, .ref = &all, .how = "spans in small chunks"};
    part = run(&s, cached(flags), data, cut, n, true);
    same(name, &whole, &part, "spans in small chunks");
    return 0;
}

int tb_fuzz_deformatter(const uint8_t *data, size_t len)
{
    return fuzz_deformatter("deformatter", data, len, false);
}

int tb_fuzz_deformatter_full(const uint8_t *data, size_t len)
{
    return fuzz_deformatter("deformatter_full", data, len, true);
}

#undef H
