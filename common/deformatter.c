/*
 * CoreSight frame deformatter (protocol-notes 5.1).
 *
 * Splits a formatted trace buffer into per-trace-ID runs.  Run indices
 * follow OpenCSD's numbering so packet indices equal trc_pkt_lister's
 * "Idx" (see frame.h).  Two input modes:
 *  - memory aligned (ETB/ETF/ETR dumps): back-to-back 16-byte frames,
 *    optionally with whole frames of FSYNCs that reset the ID state
 *    (TB_FRAME_RESET_ON_4FSYNC, Linux perf padding);
 *  - sync mode (TPIU/DSTREAM captures): FSYNCs at frame boundaries and,
 *    with TB_FRAME_HAS_HSYNC, FF 7F half-word idle pads anywhere.
 * State is a frame buffer and a 3-byte look-ahead carry, so memory does
 * not depend on input length, and chunking cannot change the output.
 * It knows no trace protocol (it sits below every parser), so it is in
 * common/, beside stream.c, which reads a snapshot's buffers through it.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tracebench/frame.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
/* The one-ID span path for 64-byte groups of frames (span_groups) needs
 * AVX-512 VBMI2, CD and VPOPCNTDQ, PCLMUL, BMI1/2 and POPCNT, checked at
 * run time. */
#if defined(__x86_64__) && defined(__GNUC__)
#define TB_DF_GROUPS 1
#include <immintrin.h>
#else
#define TB_DF_GROUPS 0
#endif

#define ID_UNKNOWN 0xFFu /* no ID seen since start/reset: data dropped */
/* A span's limits: runs are at most 15 bytes, about 9 on a busy
 * multi-source buffer, so 512 segments rarely end a span first. */
#define SPAN_BYTES 4096
#define SPAN_SEGS 512

struct tb_deformatter {
    /* Settings: kept by reset_state(). */
    unsigned flags;
    uint64_t want[2];        /* IDs delivered: bit id (0x01..0x6F) */
    uint64_t stop[2];        /* want and the reserved IDs 0x70..0x7F */
    unsigned one_id;         /* the only ID wanted, or 0 */
    bool groups;             /* the CPU can run span_groups() */

    /* Stream state: reset_state() clears sync_mode .. before span_len. */
    bool sync_mode;          /* FSYNC and/or HSYNC in the stream */
    bool synced;             /* sync mode: frame boundary known */
    bool in_frame;           /* sync mode: frame start passed */
    unsigned cur_id;         /* 0x00..0x7F or ID_UNKNOWN */
    uint8_t frame[TB_FRAME_SIZE];
    unsigned fill;           /* frame bytes collected */
    uint64_t sof;            /* buffer offset of the frame's start */
    unsigned fsyncs;         /* consecutive FSYNCs at this boundary */

    uint8_t pend[4];         /* sync mode look-ahead carried over */
    unsigned npend;
    uint64_t pend_off;       /* offset of pend[0] */

    bool have_off;
    uint64_t next_off;       /* offset expected by the next push */
    bool saw_data;
    bool ever_synced;

    uint64_t n_errors;
    uint64_t last_err_off;
    bool err_this_call;
    uint64_t first_err_off;
    int first_err_id;        /* reserved ID, -1: sync pattern */

    /* TB_FRAME_REPORT_GAPS: delivered IDs whose bytes a frame error may
     * have cut since their last run (bit id), and the offset of that
     * error; a run of id after lost_from[id] gets a gap before it. */
    uint64_t lost[2];
    bool lost_any;
    uint64_t lost_from[0x80];

    /* Span mode (tb_deformatter_push_spans): consecutive runs of one ID
     * joined, with their indices.  Not cleared by reset_state(), so that
     * finish can hand on what its last frames added; never holds bytes
     * between two calls. */
    size_t span_len, span_segs;
    uint8_t span_id;
    /* Inside push_spans/finish_spans: span_run(), and a frame that is
     * all the current ID's data, append to the span (span_room,
     * span_add); a full span goes to span_cb. */
    bool spans;
    tb_frame_span_cb span_cb;
    void *span_ctx;
    /* + 64: a whole frame is stored as 16 bytes for 15, a group of
     * frames as 64 bytes for up to 60. */
    uint8_t span[SPAN_BYTES + 64];
    /* + 8: span_groups() stores segments eight lanes at a time. */
    size_t span_end[SPAN_SEGS + 8];
    uint64_t span_idx[SPAN_SEGS + 8];
};

static const uint8_t FSYNC[4] = {0xFF, 0xFF, 0xFF, 0x7F};

static int span_flush(tb_deformatter *d, tb_frame_span_cb cb, void *ctx);

/* Span mode: room for a segment of len bytes of ID id, the span so far
 * handed on first if it is another ID's or full. */
static inline int span_room(tb_deformatter *d, unsigned id, size_t len)
{
    if (d->span_len && (id != d->span_id || d->span_len + len > SPAN_BYTES ||
                        d->span_segs == SPAN_SEGS))
        return span_flush(d, d->span_cb, d->span_ctx);
    return 0;
}

/* Span mode: the len bytes written at the span's end become a segment. */
static inline void span_add(tb_deformatter *d, unsigned id, uint64_t index, size_t len)
{
    d->span_idx[d->span_segs] = index;
    d->span_end[d->span_segs++] = d->span_len + len;
    d->span_id = (uint8_t)id;
    d->span_len += len;
}

static void reset_state(tb_deformatter *d)
{
    memset(&d->sync_mode, 0,
           offsetof(tb_deformatter, span_len) - offsetof(tb_deformatter, sync_mode));
    d->sync_mode = (d->flags & (TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC)) != 0;
    d->first_err_id = 0;
    /* Without FSYNCs there is nothing to search for: frames start at the
     * first byte (OpenCSD does the same for HSYNC-only streams). */
    d->synced = !(d->flags & TB_FRAME_HAS_FSYNC);
    d->cur_id = ID_UNKNOWN;
}

tb_deformatter *tb_deformatter_new(unsigned flags)
{
    tb_deformatter *d;

    if (flags & ~(unsigned)(TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC |
                            TB_FRAME_RESET_ON_4FSYNC | TB_FRAME_REPORT_GAPS))
        return NULL;
    d = malloc(sizeof *d);
    if (!d)
        return NULL;
    d->flags = flags;
#if TB_DF_GROUPS
    d->groups = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi") &&
                __builtin_cpu_supports("avx512vbmi2") && __builtin_cpu_supports("avx512cd") &&
                __builtin_cpu_supports("avx512vpopcntdq") && __builtin_cpu_supports("pclmul") &&
                __builtin_cpu_supports("bmi") &&
                __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
#else
    d->groups = false;
#endif
    (void)tb_deformatter_set_ids(d, NULL, 0); /* every ID */
    reset_state(d);
    d->span_len = d->span_segs = 0;
    d->spans = false;
    return d;
}

int tb_deformatter_set_ids(tb_deformatter *d, const uint8_t *ids, size_t n)
{
    uint64_t want[2] = {0, 0};

    if (!d || (!ids && n))
        return TB_ERR_INVAL;
    for (size_t i = 0; i < n; i++) {
        /* 0x00 is the null ID, 0x70-0x7F reserved (protocol-notes 5.1). */
        if (ids[i] == TB_TRACE_ID_NULL || ids[i] >= 0x70)
            return TB_ERR_INVAL;
        want[ids[i] >> 6] |= 1ull << (ids[i] & 63);
    }
    if (n == 0) {
        want[0] = ~1ull;                    /* 0x01..0x3F */
        want[1] = (1ull << (0x70 - 64)) - 1; /* 0x40..0x6F */
    }
    d->want[0] = want[0];
    d->want[1] = want[1];
    d->stop[0] = want[0];
    d->stop[1] = want[1] | 0xFFFFull << (0x70 - 64);
    d->one_id = n == 1 ? ids[0] : 0;
    return 0;
}

void tb_deformatter_free(tb_deformatter *d)
{
    free(d);
}

void tb_deformatter_reset(tb_deformatter *d)
{
    if (d) {
        reset_state(d);
        d->span_len = d->span_segs = 0;
    }
}

int tb_deformatter_error_info(const tb_deformatter *d, uint64_t *count,
                              uint64_t *last_offset)
{
    if (!d)
        return TB_ERR_INVAL;
    if (count)
        *count = d->n_errors;
    if (last_offset)
        *last_offset = d->last_err_off;
    return d->n_errors ? 1 : 0;
}

int tb_deformatter_first_error(const tb_deformatter *d, uint64_t *offset, int *id)
{
    if (!d)
        return TB_ERR_INVAL;
    if (offset)
        *offset = d->first_err_off;
    if (id)
        *id = d->first_err_id;
    return d->n_errors ? 1 : 0;
}

/* id: the reserved ID, or -1 for a broken sync pattern. */
static void frame_error(tb_deformatter *d, uint64_t off, int id)
{
    if (!d->n_errors) {
        d->first_err_off = off;
        d->first_err_id = id;
    }
    d->n_errors++;
    d->last_err_off = off;
    d->err_this_call = true;
    if (d->flags & TB_FRAME_REPORT_GAPS) {
        for (unsigned k = 1; k < 0x70; k++)
            if (!((d->lost[k >> 6] >> (k & 63)) & 1))
                d->lost_from[k] = off;
        d->lost[0] = d->want[0];
        d->lost[1] = d->want[1];
        d->lost_any = true;
    }
}

/* TB_FRAME_REPORT_GAPS: before the first run of id at index after a
 * frame error, a run of length 0 (span mode: cb is span_run, which
 * passes it on as a span of length 0). */
static inline int gap_before(tb_deformatter *d, unsigned id, uint64_t index,
                             const uint8_t *data, tb_frame_data_cb cb, void *ctx)
{
    if (!d->lost_any || !((d->lost[id >> 6] >> (id & 63)) & 1) || index <= d->lost_from[id])
        return 0;
    d->lost[id >> 6] &= ~(1ull << (id & 63));
    d->lost_any = (d->lost[0] | d->lost[1]) != 0;
    return cb && cb(ctx, (uint8_t)id, index, data, 0) ? TB_ERR_STOPPED : 0;
}

/* IDs 0x70-0x7F are reserved (protocol-notes 5.1): a stream that names
 * one is corrupt. */
static void set_id(tb_deformatter *d, unsigned id, uint64_t off)
{
    d->cur_id = id;
    if (id >= 0x70)
        frame_error(d, off, (int)id);
}

/* Spreads four aux bits to bit 0 of bytes 0, 2, 4 and 6 of a word. */
static const uint64_t SPREAD4[16] = {
#define S(x) ((uint64_t)((x) & 1) | (uint64_t)(((x) >> 1) & 1) << 16 | \
              (uint64_t)(((x) >> 2) & 1) << 32 | (uint64_t)(((x) >> 3) & 1) << 48)
    S(0), S(1), S(2), S(3), S(4), S(5), S(6), S(7),
    S(8), S(9), S(10), S(11), S(12), S(13), S(14), S(15),
#undef S
};

/* Little-endian 64-bit access in one move (the frame layout is bytes,
 * so a big-endian host swaps). */
static inline uint64_t load64(const uint8_t *p)
{
    uint64_t v;

    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline void store64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, 8);
}

/* Unknown (before any ID), null and reserved IDs are dropped, and so
 * are those the caller did not select (want never holds those three). */
static inline bool deliverable(const tb_deformatter *d, unsigned id)
{
    return id < 0x80 && ((d->want[id >> 6] >> (id & 63)) & 1);
}

#if defined(__GNUC__)
#define TB_NOINLINE __attribute__((noinline))
#else
#define TB_NOINLINE
#endif

/*
 * The frame's runs, for a frame with ID bytes (ids: bit j for byte 2j)
 * that may hold data for the caller.  The run and index rules restate
 * OpenCSD's so indices agree (frame.h): the first run starts at the frame
 * offset; an ID change opens a new run at frame offset + position only if
 * the current run already holds data.  Out of line: its arrays cost a
 * stack frame that the common frames do without.
 */
static TB_NOINLINE int unpack_runs(tb_deformatter *d, const uint8_t *f,
                                   uint64_t w0, uint64_t w1, unsigned ids,
                                   tb_frame_data_cb cb, void *ctx)
{
    const uint8_t aux = f[15];
    /* Room for a 16-byte move at any offset below 16. */
    uint8_t out[32], d16[32];
    /* Run k is out[start[k] .. start[k+1]), ID id[k], index idx[k]. */
    unsigned start[9], id[8];
    uint64_t idx[8];
    unsigned nr = 0, n = 0, pos = 0, k;

    if (!deliverable(d, d->cur_id)) {
        /* Nothing for the caller unless an ID byte here selects a
         * wanted source: then only the ID changes are followed. */
        unsigned t = ids;

        while (t && !deliverable(d, f[2 * (unsigned)__builtin_ctz(t)] >> 1))
            t &= t - 1;
        if (!t) {
            while (ids) {
                const unsigned i = 2 * (unsigned)__builtin_ctz(ids);

                ids &= ids - 1;
                if (i == 14 || (unsigned)(f[i] >> 1) != d->cur_id)
                    set_id(d, f[i] >> 1, d->sof + i);
            }
            return 0;
        }
    }

    /* ID bytes are rare (about one frame in two has one): walk only
     * them, copying the data between them from the aux-restored frame
     * in fixed 16-byte moves. */
    store64(d16, w0 | SPREAD4[aux & 15]);
    store64(d16 + 8, w1 | SPREAD4[aux >> 4]);
    store64(d16 + 16, 0);
    store64(d16 + 24, 0);
    start[0] = 0;
    id[0] = d->cur_id;
    idx[0] = d->sof;
    while (ids) {
        const unsigned j = (unsigned)__builtin_ctz(ids), i = 2 * j;

        ids &= ids - 1;
        memcpy(out + n, d16 + pos, 16);
        n += i - pos;
        if (i == 14) {
            /* Byte 14 has no partner: as an ID it applies from the next
             * frame. */
            set_id(d, f[14] >> 1, d->sof + 14);
            pos = 15;
            break;
        }
        pos = i + 1;
        if ((unsigned)(f[i] >> 1) != d->cur_id) {
            /* Aux bit set: byte i+1 still belongs to the old ID. */
            if ((aux >> j) & 1u) {
                out[n++] = f[i + 1];
                pos = i + 2;
            }
            set_id(d, f[i] >> 1, d->sof + i);
            if (n > start[nr]) {
                nr++;
                start[nr] = n;
                idx[nr] = d->sof + i;
            }
            id[nr] = d->cur_id;
        }
    }
    if (pos < 15) {
        memcpy(out + n, d16 + pos, 16);
        n += 15 - pos;
    }
    start[nr + 1] = n;

    for (k = 0; k <= nr; k++) {
        if (start[k + 1] == start[k] || !deliverable(d, id[k]))
            continue;
        if (gap_before(d, id[k], idx[k], out + start[k], cb, ctx) < 0)
            return TB_ERR_STOPPED;
        if (cb && cb(ctx, (uint8_t)id[k], idx[k], out + start[k],
                     start[k + 1] - start[k]))
            return TB_ERR_STOPPED;
    }
    return 0;
}

/*
 * Unpacks the complete frame f (buffer offset d->sof) and delivers its
 * runs.  Most frames of a multi-source buffer bring the caller nothing:
 * those are settled here without unpack_runs().
 */
static inline int unpack_frame(tb_deformatter *d, const uint8_t *f,
                               tb_frame_data_cb cb, void *ctx)
{
    const uint64_t w0 = load64(f), w1 = load64(f + 8);
    unsigned ids;

    d->fill = 0;
    if (!((w0 | w1) & 0x0001000100010001ull)) {
        /* No ID byte (bit 0 clear at every even position, protocol-notes
         * 5.1): fifteen data bytes for the current ID, the aux bits
         * restoring bit 0 of the even ones. */
        uint8_t out[16];

        if (!deliverable(d, d->cur_id) || !cb)
            return 0;
        if (gap_before(d, d->cur_id, d->sof, f, cb, ctx) < 0)
            return TB_ERR_STOPPED;
        if (d->spans) {
            /* Straight into the span, without span_run()'s call and
             * variable-length copy out of a stack buffer (Snowball PTM
             * +4-6%). */
            if (span_room(d, d->cur_id, 15) < 0)
                return TB_ERR_STOPPED;
            store64(d->span + d->span_len, w0 | SPREAD4[f[15] & 15]);
            store64(d->span + d->span_len + 8, w1 | SPREAD4[f[15] >> 4]);
            span_add(d, d->cur_id, d->sof, 15);
            return 0;
        }
        store64(out, w0 | SPREAD4[f[15] & 15]);
        store64(out + 8, w1 | SPREAD4[f[15] >> 4]);
        return cb(ctx, (uint8_t)d->cur_id, d->sof, out, 15) ? TB_ERR_STOPPED : 0;
    }
    ids = (unsigned)((w0 & 1) | (w0 >> 15 & 2) | (w0 >> 30 & 4) | (w0 >> 45 & 8) |
                     (w1 << 4 & 16) | (w1 >> 11 & 32) | (w1 >> 26 & 64) |
                     (w1 >> 41 & 128));
    if (!deliverable(d, d->cur_id)) {
        /* Data of other sources only, unless an ID byte names a wanted
         * or a reserved (corrupt) ID: then only the last ID byte
         * matters. */
        unsigned hit = 0;

        for (unsigned t = ids; t; t &= t - 1) {
            const unsigned v = f[2 * (unsigned)__builtin_ctz(t)] >> 1;

            hit |= (unsigned)(d->stop[v >> 6] >> (v & 63)) & 1u;
        }
        if (!hit) {
            d->cur_id = f[2 * (31u - (unsigned)__builtin_clz(ids))] >> 1;
            return 0;
        }
    }
    return unpack_runs(d, f, w0, w1, ids, cb, ctx);
}

/* ---- memory-aligned frames ---- */

/*
 * Whole frames that bring a one-ID caller nothing, while the current ID
 * is not the wanted one: no ID byte names the wanted ID or a reserved one
 * (0x70-0x7F, corrupt; an FSYNC's first byte is one), so all their data
 * is dropped and only the last ID byte counts.  Returns how many of the
 * n frames at f are such, with d->cur_id set past them; unpack_frame()
 * takes the one that stops the scan.  On a multi-source buffer most
 * frames are like this, and SSE2 (in every x86-64) tests one in a few
 * instructions without a data-dependent branch.  Elsewhere 0: every
 * frame goes through unpack_frame(), which gives the same result.
 */
static size_t skip_unwanted(tb_deformatter *d, const uint8_t *f, size_t n)
{
#if defined(__SSE2__)
    /* ID bytes are the even ones with bit 0 set (protocol-notes 5.1);
     * as 16-bit lanes, low byte first. */
    const __m128i even = _mm_set1_epi16(0x00FF), bit0 = _mm_set1_epi16(0x0001);
    const __m128i want = _mm_set1_epi8((char)(d->one_id << 1 | 1));
    /* Bits 7-5 and 0 set: the ID bytes of 0x70-0x7F. */
    const __m128i rsvd = _mm_set1_epi8((char)0xE1);
    size_t k, last = 0;
    unsigned last_ids = 0;

    for (k = 0; k < n; k++) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(f + 16 * k));
        const __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, want),
                                         _mm_cmpeq_epi8(_mm_and_si128(v, rsvd), rsvd));
        unsigned ids;

        if (_mm_movemask_epi8(_mm_and_si128(hit, even)))
            break;
        /* Two mask bits per ID byte: 2j and 2j+1 for byte 2j. */
        ids = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(v, bit0), bit0));
        last = ids ? k : last;
        last_ids = ids ? ids : last_ids;
    }
    if (last_ids)
        d->cur_id = f[16 * last + ((31u - (unsigned)__builtin_clz(last_ids)) & ~1u)] >> 1;
    return k;
#else
    (void)d;
    (void)f;
    (void)n;
    return 0;
#endif
}

#if TB_DF_GROUPS
/*
 * Span mode with one ID wanted (W): four memory-aligned frames at a time
 * as bit masks over their 64 bytes, with no branch per frame or ID byte.
 * The walk of unpack_runs() mispredicts on every frame of a buffer dense
 * in ID changes; this gives the same span bytes and segments.
 *  - ID bytes: even bytes with bit 0 set (protocol-notes 5.1).  The new
 *    ID owns the bytes from the next one on, or from the one after that
 *    when the frame's aux bit for the pair is set (that byte is still
 *    the old ID's).  An ID in byte 14 owns from the next frame, which an
 *    owner change at byte 15 (the aux byte, never data) gives as well.
 *  - Owned by W: a prefix XOR over the positions where the owner turns
 *    to or from W, which are ID changes only (a carry-less multiply by
 *    all ones, one instruction for six shifts and XORs).
 *  - Segments: a W run starts at such a turn or at a frame start.  Its
 *    index is unpack_runs()' run index: the frame offset plus the pair
 *    position of the last ID change at or before the turn that opened a
 *    new run.  A change opens one unless the run before it is empty,
 *    that is the pair before was a change whose aux bit kept the next
 *    byte for the old ID, and this pair's aux bit does not do the same.
 *  - A reserved ID (0x70-0x7F, also an FSYNC's first byte) is an error
 *    unpack_frame() reports: such a group is left to it.
 * Processes up to n groups from f (buffer offset sof); *used gets the
 * bytes taken.
 */
__attribute__((target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,avx512cd,avx512vpopcntdq,bmi,bmi2,popcnt,pclmul")))
static int span_groups(tb_deformatter *d, const uint8_t *f, size_t n, uint64_t sof,
                       size_t *used)
{
    const uint64_t EVEN = 0x5555555555555555ull;
    const uint64_t AUX_BYTES = 0x8000800080008000ull;  /* byte 15 of each frame */
    const uint64_t PAIR7 = 0x4000400040004000ull;      /* byte 14 of each frame */
    const unsigned w = d->one_id;
    const __m512i one = _mm512_set1_epi8(1), low7 = _mm512_set1_epi8(0x7F);
    const __m512i rsvd = _mm512_set1_epi8((char)0xE1);
    const __m512i wid = _mm512_set1_epi8((char)(w << 1 | 1));
    const __m512i wv = _mm512_set1_epi8((char)w);
    /* Lane i takes lane i - 1, for each ID byte's predecessor. */
    const __m512i up1 = _mm512_set_epi8(
        62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48, 47,
        46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31,
        30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15,
        14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0);
    /* Lane i, and lane i takes lane i + 1 (for each run's next). */
    const __m512i lanes = _mm512_set_epi8(
        63, 62, 61, 60, 59, 58, 57, 56, 55, 54, 53, 52, 51, 50, 49, 48,
        47, 46, 45, 44, 43, 42, 41, 40, 39, 38, 37, 36, 35, 34, 33, 32,
        31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16,
        15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i next1 = _mm512_add_epi8(lanes, one);
    unsigned cur = d->cur_id;
    size_t g;

    for (g = 0; g < n; g++, f += 64, sof += 64) {
        const __m512i v = _mm512_loadu_si512((const void *)f);
        const uint64_t id = _mm512_test_epi8_mask(v, one) & EVEN;
        const uint64_t curw = cur == w;
        uint64_t aux, chg, t, dep, owned, m, starts, opens;
        unsigned nid;
        __m512i c, prev;

        if (_mm512_cmpeq_epi8_mask(_mm512_and_si512(v, rsvd), rsvd) & id)
            break;
        nid = (unsigned)_mm_popcnt_u64(id);
        if (!curw && !(_mm512_cmpeq_epi8_mask(v, wid) & id)) {
            /* Nothing of W's here: only the last ID counts. */
            if (nid)
                cur = f[63 - __builtin_clzll(id)] >> 1;
            continue;
        }
        /* Room for 60 bytes and 20 runs (5 a frame: one from its start,
         * four more turns to W among its eight pairs). */
        if (d->span_len > SPAN_BYTES - 60 || d->span_segs > SPAN_SEGS - 20)
            if (span_flush(d, d->span_cb, d->span_ctx) < 0)
                return TB_ERR_STOPPED;
        aux = _pdep_u64((uint64_t)f[15] | (uint64_t)f[31] << 8 |
                        (uint64_t)f[47] << 16 | (uint64_t)f[63] << 24, EVEN);
        /* The IDs in order, each against the one before (cur first). */
        c = _mm512_maskz_compress_epi8(id, _mm512_and_si512(_mm512_srli_epi16(v, 1), low7));
        prev = _mm512_mask_mov_epi8(_mm512_permutexvar_epi8(up1, c), 1,
                                    _mm512_set1_epi8((char)cur));
        {
            const uint64_t live = _bzhi_u64(~0ull, nid);
            const uint64_t wk = _mm512_cmpeq_epi8_mask(c, wv) & live;

            chg = _pdep_u64(_mm512_cmpneq_epi8_mask(c, prev) & live, id);
            /* The owner turns to or from W: at these ID bytes, in effect
             * one or two bytes later. */
            t = _pdep_u64((wk ^ (wk << 1 | curw)) & live, id);
        }
        dep = (t & ~(aux & ~PAIR7)) << 1 | (t & aux & ~PAIR7) << 2;
        /* Bit i of the product: the XOR of dep's bits 0..i. */
        owned = (uint64_t)_mm_cvtsi128_si64(_mm_clmulepi64_si128(
            _mm_cvtsi64_si128((long long)dep), _mm_set1_epi8((char)0xFF), 0));
        owned ^= 0 - curw;
        m = owned & ~id & ~AUX_BYTES;
        opens = chg & (aux | ~((chg & aux) << 2));
        starts = owned & (~(owned << 1) | 0x0001000100010001ull);
        _mm512_storeu_si512((void *)(d->span + d->span_len),
                            _mm512_maskz_compress_epi8(
                                m, _mm512_or_si512(v, _mm512_maskz_mov_epi8(aux, one))));
        {
            /* Each run with data becomes a segment: its start p (a bit of
             * starts), its end (the span bytes below the next start) and
             * its index (the frame offset, or the pair of the last
             * opening change before p in its frame).  In 64-bit lanes,
             * eight runs at a time, with no branch per run: a frame has
             * at most five, and how many there are is anyone's guess. */
            const __m512i ones = _mm512_set1_epi64(-1), mv = _mm512_set1_epi64((long long)m);
            const __m512i ov = _mm512_set1_epi64((long long)opens);
            const unsigned ns = (unsigned)_mm_popcnt_u64(starts);
            const __m512i sp = _mm512_maskz_compress_epi8(starts, lanes);
            /* The next run's start; 64 after the last. */
            const __m512i spn = _mm512_mask_mov_epi8(_mm512_permutexvar_epi8(next1, sp),
                                                     ns ? 1ull << (ns - 1) : 0,
                                                     _mm512_set1_epi8(64));
            size_t segs = d->span_segs;

            for (unsigned r = 0; r < ns; r += 8) {
                const __m512i sel = _mm512_add_epi8(lanes, _mm512_set1_epi8((char)r));
                const __m512i p = _mm512_cvtepu8_epi64(
                    _mm512_castsi512_si128(_mm512_permutexvar_epi8(sel, sp)));
                const __m512i pn = _mm512_cvtepu8_epi64(
                    _mm512_castsi512_si128(_mm512_permutexvar_epi8(sel, spn)));
                const __m512i fb = _mm512_and_si512(p, _mm512_set1_epi64(~15ll));
                const __m512i below = _mm512_sllv_epi64(ones, p); /* bits >= p */
                const __m512i at = _mm512_popcnt_epi64(_mm512_andnot_si512(below, mv));
                const __m512i to = _mm512_popcnt_epi64(
                    _mm512_andnot_si512(_mm512_sllv_epi64(ones, pn), mv));
                /* Opening changes below p, from its frame's start on. */
                const __m512i ob = _mm512_and_si512(_mm512_andnot_si512(below, ov),
                                                    _mm512_sllv_epi64(ones, fb));
                const __m512i off = _mm512_mask_sub_epi64(fb, _mm512_test_epi64_mask(ob, ob),
                                                          _mm512_set1_epi64(63),
                                                          _mm512_lzcnt_epi64(ob));
                /* Lanes past the last run have p = pn = 0: never kept. */
                const __mmask8 keep = _mm512_cmpneq_epi64_mask(at, to);

                _mm512_storeu_si512((void *)&d->span_idx[segs], _mm512_maskz_compress_epi64(
                                        keep, _mm512_add_epi64(off, _mm512_set1_epi64((long long)sof))));
                _mm512_storeu_si512((void *)&d->span_end[segs], _mm512_maskz_compress_epi64(
                                        keep, _mm512_add_epi64(to, _mm512_set1_epi64((long long)d->span_len))));
                segs += (unsigned)_mm_popcnt_u32(keep);
            }
            d->span_segs = segs;
            d->span_len += (size_t)_mm_popcnt_u64(m);
        }
        d->span_id = (uint8_t)w;
        if (nid)
            cur = f[63 - __builtin_clzll(id)] >> 1;
    }
    d->cur_id = cur;
    *used = 64 * g;
    return 0;
}
#endif

static int push_aligned(tb_deformatter *d, const uint8_t *data, size_t len,
                        uint64_t offset, tb_frame_data_cb cb, void *ctx)
{
    size_t p = 0;
#if TB_DF_GROUPS
    unsigned by_frame = 0; /* frames span_groups() left to unpack_frame() */
#endif

    while (p < len) {
        size_t take = TB_FRAME_SIZE - d->fill;
        const uint8_t *f = d->frame;
        int rc;

        if (d->fill == 0 && len - p >= TB_FRAME_SIZE) {
#if TB_DF_GROUPS
            if (d->groups && d->spans && d->one_id && !by_frame && !d->lost_any &&
                len - p >= 64) {
                size_t used = 0;

                if (span_groups(d, data + p, (len - p) / 64, offset + p, &used) < 0)
                    return TB_ERR_STOPPED;
                p += used;
                if (len - p >= 64)
                    by_frame = 4; /* a reserved ID */
                continue;
            }
            if (by_frame)
                by_frame--;
#endif
            /* A whole frame in this chunk: unpack it in place. */
            if (d->one_id && !deliverable(d, d->cur_id)) {
                p += TB_FRAME_SIZE * skip_unwanted(d, data + p, (len - p) / TB_FRAME_SIZE);
                if (len - p < TB_FRAME_SIZE)
                    continue;
            }
            f = data + p;
            d->sof = offset + p;
            p += TB_FRAME_SIZE;
        } else {
            if (take > len - p)
                take = len - p;
            if (d->fill == 0)
                d->sof = offset + p;
            memcpy(d->frame + d->fill, data + p, take);
            d->fill += (unsigned)take;
            p += take;
            if (d->fill < TB_FRAME_SIZE)
                break;
        }
        if ((d->flags & TB_FRAME_RESET_ON_4FSYNC) &&
            memcmp(f, FSYNC, 4) == 0) {
            /* Perf pads with whole frames of four FSYNCs, each block a
             * reset: sources start again with no ID.  A frame that begins
             * with an FSYNC but is not four of them is corrupt. */
            d->fill = 0;
            if (memcmp(f + 4, FSYNC, 4) == 0 &&
                memcmp(f + 8, FSYNC, 4) == 0 &&
                memcmp(f + 12, FSYNC, 4) == 0) {
                d->cur_id = ID_UNKNOWN;
            } else {
                frame_error(d, d->sof, -1);
                d->cur_id = ID_UNKNOWN;
            }
            continue;
        }
        rc = unpack_frame(d, f, cb, ctx);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- sync mode (FSYNC / HSYNC) ---- */

typedef struct view {
    const uint8_t *a;  /* carried-over bytes */
    size_t na;
    const uint8_t *b;  /* this call's bytes */
    size_t total;
} view;

static inline uint8_t vbyte(const view *v, size_t k)
{
    return k < v->na ? v->a[k] : v->b[k - v->na];
}

static bool v_is_fsync(const view *v, size_t p)
{
    size_t k;

    if (v->total - p < 4)
        return false;
    for (k = 0; k < 4; k++)
        if (vbyte(v, p + k) != FSYNC[k])
            return false;
    return true;
}

/* Drops the partial frame after a framing error.  With FSYNCs the
 * boundary is searched again; the ID is unknown until the next ID byte,
 * since the lost bytes may have changed it. */
static void sync_error(tb_deformatter *d, uint64_t off)
{
    frame_error(d, off, -1);
    d->fill = 0;
    d->in_frame = false;
    d->fsyncs = 0;
    d->cur_id = ID_UNKNOWN;
    if (d->flags & TB_FRAME_HAS_FSYNC)
        d->synced = false;
}

/* Processes as much of the view as possible; *used gets the bytes
 * consumed.  Unless `final`, stops where a decision needs bytes not yet
 * here (at most 3 are left over for the next call). */
static int run_sync(tb_deformatter *d, const view *v, uint64_t base,
                    bool final, tb_frame_data_cb cb, void *ctx, size_t *used)
{
    const bool fsync_mode = (d->flags & TB_FRAME_HAS_FSYNC) != 0;
    size_t p = 0;
    int rc = 0;

    while (p < v->total) {
        const size_t left = v->total - p;
        uint8_t b0, b1;

        if (!d->synced) {
            /* Search the first FSYNC byte by byte; what precedes it cannot
             * be framed and is dropped. */
            if (left < 4 && !final)
                break;
            if (v_is_fsync(v, p)) {
                d->synced = d->ever_synced = true;
                d->in_frame = false;
                d->fill = 0;
            } else {
                p++;
            }
            continue;
        }
        if (fsync_mode && d->fill % 4 == 0) {
            /* FSYNCs belong at frame boundaries (protocol-notes 5.1);
             * one inside a frame means bytes were lost. */
            if (left < 4 && !final)
                break;
            if (v_is_fsync(v, p)) {
                if (d->fill == 0) {
                    d->in_frame = false; /* only idle HSYNCs before it */
                    d->fsyncs++;
                    p += 4;
                } else {
                    sync_error(d, base + p); /* search finds this FSYNC */
                }
                continue;
            }
        }
        if (!d->in_frame) {
            /* Four FSYNCs (or a multiple) in a row reset the sources. */
            if ((d->flags & TB_FRAME_RESET_ON_4FSYNC) && d->fsyncs &&
                d->fsyncs % 4 == 0)
                d->cur_id = ID_UNKNOWN;
            d->fsyncs = 0;
            d->in_frame = true;
            d->sof = base + p;
        }
        if (left < 2)
            break; /* a lone byte: wait for more, or finish truncates */
        b0 = vbyte(v, p);
        b1 = vbyte(v, p + 1);
        p += 2;
        if (b0 == 0xFF && b1 == 0x7F) {
            /* HSYNC: an idle half-word pad, or with HSYNCs off the
             * reserved ID 0x7F, which is corrupt. */
            if (!(d->flags & TB_FRAME_HAS_HSYNC))
                sync_error(d, base + p - 2);
            continue;
        }
        d->frame[d->fill] = b0;
        d->frame[d->fill + 1] = b1;
        d->fill += 2;
        if (d->fill == TB_FRAME_SIZE) {
            d->in_frame = false;
            rc = unpack_frame(d, d->frame, cb, ctx);
            if (rc < 0)
                break;
        }
    }
    *used = p;
    return rc;
}

static int push_sync(tb_deformatter *d, const uint8_t *data, size_t len,
                     uint64_t offset, bool final, tb_frame_data_cb cb,
                     void *ctx)
{
    uint8_t carry[4];
    view v;
    size_t used = 0;
    uint64_t base;
    int rc;

    memcpy(carry, d->pend, d->npend);
    v = (view){.a = carry, .na = d->npend, .b = data, .total = d->npend + len};
    base = d->npend ? d->pend_off : offset;
    rc = run_sync(d, &v, base, final, cb, ctx, &used);
    if (rc < 0) {
        d->npend = 0;
        return rc;
    }
    d->npend = (unsigned)(v.total - used);
    d->pend_off = base + used;
    {
        size_t k;
        for (k = 0; k < d->npend; k++)
            d->pend[k] = vbyte(&v, used + k);
    }
    return 0;
}

int tb_deformatter_push(tb_deformatter *d, const uint8_t *data, size_t len,
                        uint64_t offset, tb_frame_data_cb cb, void *ctx)
{
    int rc;

    if (!d || (!data && len))
        return TB_ERR_INVAL;
    if (len == 0)
        return 0;
    /* Look-ahead and partial frames only make sense if this chunk
     * continues the previous one. */
    if (d->have_off && offset != d->next_off && (d->fill || d->npend))
        return TB_ERR_INVAL;
    if (offset + len < offset)
        return TB_ERR_INVAL;
    d->have_off = true;
    d->next_off = offset + len;
    d->saw_data = true;
    d->err_this_call = false;
    if (d->sync_mode)
        rc = push_sync(d, data, len, offset, false, cb, ctx);
    else
        rc = push_aligned(d, data, len, offset, cb, ctx);
    if (rc < 0)
        return rc;
    return d->err_this_call ? TB_ERR_BAD_FRAME : 0;
}

int tb_deformatter_finish(tb_deformatter *d, tb_frame_data_cb cb, void *ctx)
{
    uint64_t n_errors, last_err, first_err;
    int first_id, rc = 0;

    if (!d)
        return TB_ERR_INVAL;
    d->err_this_call = false;
    if (d->sync_mode && d->npend) {
        static const uint8_t none[1] = {0};
        rc = push_sync(d, none, 0, d->pend_off + d->npend, true, cb, ctx);
    }
    if (rc == 0) {
        if (d->err_this_call)
            rc = TB_ERR_BAD_FRAME;
        else if (d->fill || d->npend)
            rc = TB_ERR_TRUNCATED;
        else if ((d->flags & TB_FRAME_HAS_FSYNC) && d->saw_data &&
                 !d->ever_synced)
            rc = TB_ERR_NO_SYNC;
    }
    /* Ready for the next buffer; the error tally stays readable. */
    n_errors = d->n_errors;
    last_err = d->last_err_off;
    first_err = d->first_err_off;
    first_id = d->first_err_id;
    reset_state(d);
    d->n_errors = n_errors;
    d->last_err_off = last_err;
    d->first_err_off = first_err;
    d->first_err_id = first_id;
    return rc;
}

/* ---- spans ---- */

static int span_flush(tb_deformatter *d, tb_frame_span_cb cb, void *ctx)
{
    const tb_span_map map = {d->span_segs, d->span_end, d->span_idx};
    const size_t n = d->span_len;

    d->span_len = d->span_segs = 0;
    if (n && cb && cb(ctx, d->span_id, d->span, n, &map))
        return TB_ERR_STOPPED;
    return 0;
}

/* The run callback of span mode: appends the run to the span as a new
 * segment.  Runs never continue one another's numbering (it restarts at
 * each frame, and a run of another ID always lies between two of one
 * ID in a frame), so there is nothing to merge. */
static int span_run(void *vd, uint8_t id, uint64_t index, const uint8_t *data,
                    size_t len)
{
    tb_deformatter *d = vd;

    if (len == 0) {
        /* A gap (gap_before): the span so far, then an empty one whose
         * one segment, of no bytes, gives the gap's index. */
        const size_t end0 = 0;
        const uint64_t at = index;
        const tb_span_map gap = {1, &end0, &at};

        if (span_flush(d, d->span_cb, d->span_ctx) < 0)
            return 1;
        return d->span_cb && d->span_cb(d->span_ctx, id, data, 0, &gap) ? 1 : 0;
    }

    if (span_room(d, id, len) < 0)
        return 1;
    memcpy(d->span + d->span_len, data, len);
    span_add(d, id, index, len);
    return 0;
}

/* A span-mode call starts: an empty span, which span_run() and whole
 * frames append to until span_end_call(). */
static void span_begin(tb_deformatter *d, tb_frame_span_cb cb, void *ctx)
{
    d->span_len = d->span_segs = 0;
    d->spans = true;
    d->span_cb = cb;
    d->span_ctx = ctx;
}

/* A run-mode result, then the span still gathered. */
static int span_end_call(tb_deformatter *d, int rc, tb_frame_span_cb cb,
                         void *ctx)
{
    d->spans = false;
    if (rc == TB_ERR_STOPPED) {
        d->span_len = d->span_segs = 0;
        return rc;
    }
    if (span_flush(d, cb, ctx) < 0)
        return TB_ERR_STOPPED;
    return rc;
}

int tb_deformatter_push_spans(tb_deformatter *d, const uint8_t *data,
                              size_t len, uint64_t offset, tb_frame_span_cb cb,
                              void *ctx)
{
    if (!d)
        return TB_ERR_INVAL;
    span_begin(d, cb, ctx);
    return span_end_call(d, tb_deformatter_push(d, data, len, offset, span_run, d), cb,
                         ctx);
}

int tb_deformatter_finish_spans(tb_deformatter *d, tb_frame_span_cb cb,
                                void *ctx)
{
    if (!d)
        return TB_ERR_INVAL;
    span_begin(d, cb, ctx);
    return span_end_call(d, tb_deformatter_finish(d, span_run, d), cb, ctx);
}
