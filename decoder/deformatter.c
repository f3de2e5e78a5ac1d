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
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/frame.h"

#define ID_UNKNOWN 0xFFu /* no ID seen since start/reset: data dropped */

struct tb_deformatter {
    unsigned flags;
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
};

static const uint8_t FSYNC[4] = {0xFF, 0xFF, 0xFF, 0x7F};

static void reset_state(tb_deformatter *d)
{
    unsigned flags = d->flags;

    memset(d, 0, sizeof *d);
    d->flags = flags;
    d->sync_mode = (flags & (TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC)) != 0;
    /* Without FSYNCs there is nothing to search for: frames start at the
     * first byte (OpenCSD does the same for HSYNC-only streams). */
    d->synced = !(flags & TB_FRAME_HAS_FSYNC);
    d->cur_id = ID_UNKNOWN;
}

tb_deformatter *tb_deformatter_new(unsigned flags)
{
    tb_deformatter *d;

    if (flags & ~(unsigned)(TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC |
                            TB_FRAME_RESET_ON_4FSYNC))
        return NULL;
    d = malloc(sizeof *d);
    if (!d)
        return NULL;
    d->flags = flags;
    reset_state(d);
    return d;
}

void tb_deformatter_free(tb_deformatter *d)
{
    free(d);
}

void tb_deformatter_reset(tb_deformatter *d)
{
    if (d)
        reset_state(d);
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

static void frame_error(tb_deformatter *d, uint64_t off)
{
    d->n_errors++;
    d->last_err_off = off;
    d->err_this_call = true;
}

/* IDs 0x70-0x7F are reserved (protocol-notes 5.1): a stream that names
 * one is corrupt. */
static void set_id(tb_deformatter *d, unsigned id, uint64_t off)
{
    d->cur_id = id;
    if (id >= 0x70)
        frame_error(d, off);
}

typedef struct run {
    unsigned id;
    uint64_t index;
    uint8_t n;
    uint8_t data[TB_FRAME_SIZE];
} run;

/*
 * Unpacks the complete frame in d->frame and delivers its runs.  The run
 * and index rules restate OpenCSD's so indices agree (frame.h): the first
 * run starts at the frame offset; an ID change opens a new run at frame
 * offset + position only if the current run already holds data.
 */
static int unpack_frame(tb_deformatter *d, tb_frame_data_cb cb, void *ctx)
{
    const uint8_t *f = d->frame;
    const uint8_t aux = f[15];
    run runs[8];
    unsigned nr = 0, i, k;

    runs[0].id = d->cur_id;
    runs[0].index = d->sof;
    runs[0].n = 0;
    for (i = 0; i < 14; i += 2) {
        const unsigned bit = (aux >> (i / 2)) & 1u;
        bool second_to_old = false;

        if (f[i] & 1u) {
            const unsigned id = f[i] >> 1;
            if (id != d->cur_id) {
                /* Aux bit set: byte i+1 still belongs to the old ID. */
                if (bit) {
                    runs[nr].data[runs[nr].n++] = f[i + 1];
                    second_to_old = true;
                }
                set_id(d, id, d->sof + i);
                if (runs[nr].n > 0) {
                    nr++;
                    runs[nr].index = d->sof + i;
                    runs[nr].n = 0;
                }
                runs[nr].id = d->cur_id;
            }
        } else {
            /* Data at an even position: the aux bit is its bit 0. */
            runs[nr].data[runs[nr].n++] = (uint8_t)(f[i] | bit);
        }
        if (!second_to_old)
            runs[nr].data[runs[nr].n++] = f[i + 1];
    }
    /* Byte 14 has no partner: as an ID it applies from the next frame. */
    if (f[14] & 1u)
        set_id(d, f[14] >> 1, d->sof + 14);
    else
        runs[nr].data[runs[nr].n++] = (uint8_t)(f[14] | ((aux >> 7) & 1u));

    d->fill = 0;
    for (k = 0; k <= nr; k++) {
        const run *r = &runs[k];
        /* Unknown (before any ID), null and reserved IDs are dropped. */
        if (r->n == 0 || r->id == ID_UNKNOWN || r->id == TB_TRACE_ID_NULL ||
            r->id >= 0x70)
            continue;
        if (cb && cb(ctx, (uint8_t)r->id, r->index, r->data, r->n))
            return TB_ERR_STOPPED;
    }
    return 0;
}

/* ---- memory-aligned frames ---- */

static int push_aligned(tb_deformatter *d, const uint8_t *data, size_t len,
                        uint64_t offset, tb_frame_data_cb cb, void *ctx)
{
    size_t p = 0;

    while (p < len) {
        size_t take = TB_FRAME_SIZE - d->fill;
        int rc;

        if (take > len - p)
            take = len - p;
        if (d->fill == 0)
            d->sof = offset + p;
        memcpy(d->frame + d->fill, data + p, take);
        d->fill += (unsigned)take;
        p += take;
        if (d->fill < TB_FRAME_SIZE)
            break;
        if ((d->flags & TB_FRAME_RESET_ON_4FSYNC) &&
            memcmp(d->frame, FSYNC, 4) == 0) {
            /* Perf pads with whole frames of four FSYNCs, each block a
             * reset: sources start again with no ID.  A frame that begins
             * with an FSYNC but is not four of them is corrupt. */
            d->fill = 0;
            if (memcmp(d->frame + 4, FSYNC, 4) == 0 &&
                memcmp(d->frame + 8, FSYNC, 4) == 0 &&
                memcmp(d->frame + 12, FSYNC, 4) == 0) {
                d->cur_id = ID_UNKNOWN;
            } else {
                frame_error(d, d->sof);
                d->cur_id = ID_UNKNOWN;
            }
            continue;
        }
        rc = unpack_frame(d, cb, ctx);
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
    frame_error(d, off);
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
            rc = unpack_frame(d, cb, ctx);
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
    uint64_t n_errors, last_err;
    int rc = 0;

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
    reset_state(d);
    d->n_errors = n_errors;
    d->last_err_off = last_err;
    return rc;
}
