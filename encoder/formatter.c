/*
 * CoreSight frame formatter (protocol-notes 5.1): interleaves the bytes
 * of several trace sources into 16-byte frames, the inverse of
 * common/deformatter.c.
 *
 * An ID byte is written only when the source changes.  IDs can only sit
 * at even positions; when the change falls on an odd position the even
 * byte before it (the old source's data) moves up one, the ID takes its
 * place, and the aux bit says the byte after the ID is still the old
 * source's.  Even data bytes keep their bit 0 in the aux byte.
 *
 * TPIU style (TB_FRAME_HAS_FSYNC): an FSYNC before the first frame and
 * after every FSYNC_PERIOD frames; TB_FRAME_HAS_HSYNC allows
 * tb_formatter_idle() to insert FF 7F half-word pads.
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/frame.h"

#define FSYNC_PERIOD 16
#define NO_ID 0xFFu

struct tb_formatter {
    unsigned flags;
    unsigned cur_id;          /* ID in force for the next data byte */
    uint8_t frame[TB_FRAME_SIZE];
    unsigned pos;             /* next free position, 0..15 */
    unsigned emitted;         /* frame bytes already written (even) */
    bool synced;              /* this frame's FSYNC is out */
    uint64_t frames;          /* frames completed */
    /* TPIU port clock (tb_formatter_tick): the cycle at which the port
     * has sent every byte put so far, and whether any came yet. */
    uint64_t port_free;
    bool ticked;
};

static const uint8_t FSYNC[4] = {0xFF, 0xFF, 0xFF, 0x7F};
static const uint8_t HSYNC[2] = {0xFF, 0x7F};

tb_formatter *tb_formatter_new(unsigned flags)
{
    tb_formatter *f;

    if (flags & ~(unsigned)(TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC))
        return NULL;
    f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->flags = flags;
    f->cur_id = NO_ID;
    return f;
}

void tb_formatter_free(tb_formatter *f)
{
    free(f);
}

static int sink_write(tb_frame_sink sink, void *ctx, const uint8_t *d,
                      size_t n);

/* FSYNC before the first frame and every FSYNC_PERIOD-th, ahead of any
 * HSYNC, so that it always sits at the frame boundary. */
static int maybe_fsync(tb_formatter *f, tb_frame_sink sink, void *ctx)
{
    if (!(f->flags & TB_FRAME_HAS_FSYNC) || f->synced ||
        f->frames % FSYNC_PERIOD != 0)
        return 0;
    f->synced = true;
    return sink_write(sink, ctx, FSYNC, sizeof FSYNC);
}

static int sink_write(tb_frame_sink sink, void *ctx, const uint8_t *d,
                      size_t n)
{
    int rc;

    if (!n)
        return 0;
    rc = sink(ctx, d, n);
    if (rc < 0)
        return rc;
    return rc ? TB_ERR_STOPPED : 0;
}

/* Writes what is left of the completed frame (aux byte included). */
static int frame_done(tb_formatter *f, tb_frame_sink sink, void *ctx)
{
    int rc;

    rc = maybe_fsync(f, sink, ctx);
    if (rc < 0)
        return rc;
    rc = sink_write(sink, ctx, f->frame + f->emitted,
                    TB_FRAME_SIZE - f->emitted);
    f->frames++;
    f->pos = 0;
    f->emitted = 0;
    f->synced = false;
    memset(f->frame, 0, sizeof f->frame);
    return rc;
}

static void set_aux(tb_formatter *f, unsigned pos, unsigned bit)
{
    if (bit)
        f->frame[15] |= (uint8_t)(1u << (pos / 2));
    else
        f->frame[15] &= (uint8_t)~(1u << (pos / 2));
}

/* Places the ID byte for `id` before the next data byte.  Returns 1 if
 * the frame is now full (ID at byte 14, in force from the next frame). */
static int place_id(tb_formatter *f, unsigned id)
{
    if (f->pos % 2 == 1) {
        /* Odd slot: the old source's byte at pos-1 moves to pos and the
         * ID takes pos-1, aux bit set (protocol-notes 5.1). */
        const unsigned e = f->pos - 1;
        const uint8_t old = (uint8_t)(f->frame[e] | ((f->frame[15] >> (e / 2)) & 1u));
        f->frame[e + 1] = old;
        f->frame[e] = (uint8_t)((id << 1) | 1u);
        set_aux(f, e, 1);
        f->pos = e + 2;
    } else {
        f->frame[f->pos] = (uint8_t)((id << 1) | 1u);
        set_aux(f, f->pos, 0);
        f->pos++;
    }
    f->cur_id = id;
    return f->pos == 15;
}

static void place_data(tb_formatter *f, uint8_t b)
{
    if (f->pos % 2 == 0) {
        f->frame[f->pos] = (uint8_t)(b & 0xFEu);
        set_aux(f, f->pos, b & 1u);
    } else {
        f->frame[f->pos] = b;
    }
    f->pos++;
}

int tb_formatter_put(tb_formatter *f, uint8_t id, const uint8_t *data,
                     size_t len, tb_frame_sink sink, void *ctx)
{
    size_t i;
    int rc;

    if (!f || !sink || (!data && len) || id == TB_TRACE_ID_NULL || id >= 0x70)
        return TB_ERR_INVAL;
    /* The port is busy half a cycle per byte (tb_formatter_tick). */
    f->port_free += (len + 1) / 2;
    for (i = 0; i < len; i++) {
        if (id != f->cur_id && place_id(f, id)) {
            rc = frame_done(f, sink, ctx);
            if (rc < 0)
                return rc;
        }
        place_data(f, data[i]);
        if (f->pos == 15) {
            rc = frame_done(f, sink, ctx);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

int tb_formatter_flush(tb_formatter *f, tb_frame_sink sink, void *ctx)
{
    if (!f || !sink)
        return TB_ERR_INVAL;
    if (f->pos == 0)
        return 0;
    /* The rest of the frame belongs to the null ID, which every
     * deformatter drops; zero bytes after it are its "data". */
    if (!place_id(f, TB_TRACE_ID_NULL))
        while (f->pos < 15)
            place_data(f, 0);
    return frame_done(f, sink, ctx);
}

int tb_formatter_idle(tb_formatter *f, tb_frame_sink sink, void *ctx)
{
    unsigned upto;
    int rc;

    if (!f || !sink)
        return TB_ERR_INVAL;
    if (!(f->flags & TB_FRAME_HAS_HSYNC))
        return TB_ERR_STATE;
    /* HSYNCs sit on the half-word grid: after the last complete pair. */
    upto = f->pos & ~1u;
    rc = maybe_fsync(f, sink, ctx);
    if (rc < 0)
        return rc;
    rc = sink_write(sink, ctx, f->frame + f->emitted, upto - f->emitted);
    if (rc < 0)
        return rc;
    f->emitted = upto;
    return sink_write(sink, ctx, HSYNC, sizeof HSYNC);
}

int tb_formatter_tick(tb_formatter *f, uint64_t cycle, tb_frame_sink sink, void *ctx)
{
    uint64_t idle;
    int rc = 0;

    if (!f || !sink)
        return TB_ERR_INVAL;
    if (!(f->flags & TB_FRAME_HAS_HSYNC))
        return 0;
    /* No idle before the first bytes: a capture starts at trace. */
    idle = f->ticked && cycle > f->port_free ? cycle - f->port_free : 0;
    if (idle > TB_FORMATTER_MAX_IDLE)
        idle = TB_FORMATTER_MAX_IDLE;
    for (; idle && rc >= 0; idle--)
        rc = tb_formatter_idle(f, sink, ctx);
    if (!f->ticked || cycle > f->port_free)
        f->port_free = cycle;
    f->ticked = true;
    return rc < 0 ? rc : 0;
}
