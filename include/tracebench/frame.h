/*
 * CoreSight trace formatter frames (the CoreSight Architecture
 * Specification, IHI0029): the
 * deformatter splits a formatted buffer into per-trace-ID byte streams,
 * the formatter builds one.
 *
 * Deformatter output is a run of bytes for one ID with the stream index
 * of its first byte.  The index follows OpenCSD's convention so that
 * packet indices match trc_pkt_lister's "Idx": a frame's first run starts
 * at the frame's offset; a run begun by an ID change at frame byte i
 * (when the previous run already had data) starts at frame offset + i;
 * later bytes in a run are numbered consecutively from there.
 */
#ifndef TRACEBENCH_FRAME_H
#define TRACEBENCH_FRAME_H

#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TB_FRAME_SIZE 16
#define TB_TRACE_ID_NULL 0x00

enum tb_frame_flags {
    TB_FRAME_MEM_ALIGNED = 0,      /* ETB/ETF/ETR dumps: frames only */
    TB_FRAME_HAS_FSYNC = 1u << 0,  /* FF FF FF 7F at frame boundaries */
    TB_FRAME_HAS_HSYNC = 1u << 1,  /* FF 7F half-word padding (TPIU) */
    TB_FRAME_RESET_ON_4FSYNC = 1u << 2,
    /* After a frame error, a run of length 0 for each delivered ID before
     * its next bytes (see tb_deformatter_push). */
    TB_FRAME_REPORT_GAPS = 1u << 3,
};

/* One run of de-formatted bytes for trace ID `id` (never 0x00). */
typedef int (*tb_frame_data_cb)(void *ctx, uint8_t id, uint64_t index,
                                const uint8_t *data, size_t len);

typedef struct tb_deformatter tb_deformatter;

TB_API tb_deformatter *tb_deformatter_new(unsigned flags);
TB_API void tb_deformatter_free(tb_deformatter *d);
/* Delivers only the runs of the n trace IDs in ids (n == 0: every valid
 * ID, the default).  The other sources are still followed through the
 * frames, so indices and errors do not change, but their bytes are
 * neither copied nor called back.  Kept across reset.  TB_ERR_INVAL for
 * an ID outside 0x01..0x6F. */
TB_API int tb_deformatter_set_ids(tb_deformatter *d, const uint8_t *ids, size_t n);
/* Feeds len bytes whose first has buffer offset `offset`; chunks of any
 * size.  Returns 0 or TB_ERR_BAD_FRAME (a corrupt sync pattern or a
 * reserved ID; the deformatter then drops data until the next frame it
 * can trust) or TB_ERR_STOPPED.  The whole chunk is processed even when
 * TB_ERR_BAD_FRAME is returned, so a caller may go on pushing; after
 * TB_ERR_STOPPED the rest of the chunk is lost (reset before reuse).
 * TB_ERR_INVAL if offset does not continue a partly consumed frame.
 *
 * A frame error loses bytes: those after a reserved ID or a broken sync
 * belong to no known source until the next ID byte (an ID holds until
 * the next ID byte; a CoreSight formatter repeats the ID after eight
 * frames without a change, DDI0314H 8.12.1, so one comes soon), so any
 * source may have lost some.  With
 * TB_FRAME_REPORT_GAPS each delivered ID's next run after the error is
 * preceded by a run of length 0 at the same index (in span mode: a span
 * of length 0 whose map has one segment, end 0, at that index): its
 * bytes do not continue the previous ones. */
TB_API int tb_deformatter_push(tb_deformatter *d, const uint8_t *data, size_t len,
                        uint64_t offset, tb_frame_data_cb cb, void *ctx);
/* End of buffer: TB_ERR_TRUNCATED if a partial frame is left,
 * TB_ERR_NO_SYNC if an FSYNC stream never showed an FSYNC.  Leaves the
 * deformatter reset for the next buffer. */
TB_API int tb_deformatter_finish(tb_deformatter *d, tb_frame_data_cb cb, void *ctx);
/* Span mode: the same runs, but consecutive runs of one ID are joined
 * into a span of up to 4096 bytes, delivered with the stream index of
 * every byte (tb_span_map), so a parser is entered once per span instead
 * of once per run (at most 15 bytes).  A span never outlives the call
 * that filled it.  Same returns as tb_deformatter_push() and
 * tb_deformatter_finish(); a stop loses the rest of the chunk. */
typedef int (*tb_frame_span_cb)(void *ctx, uint8_t id, const uint8_t *data,
                                size_t len, const tb_span_map *map);
TB_API int tb_deformatter_push_spans(tb_deformatter *d, const uint8_t *data,
                              size_t len, uint64_t offset, tb_frame_span_cb cb,
                              void *ctx);
TB_API int tb_deformatter_finish_spans(tb_deformatter *d, tb_frame_span_cb cb,
                                void *ctx);
TB_API void tb_deformatter_reset(tb_deformatter *d);
/* Frame errors seen so far (kept across finish, cleared by reset):
 * *count of them and the buffer offset of the last.  Returns 1 if there
 * were any, else 0. */
TB_API int tb_deformatter_error_info(const tb_deformatter *d, uint64_t *count,
                              uint64_t *last_offset);
/* The first frame error (kept and cleared as above): its buffer offset
 * and the reserved ID there (0x70-0x7F), or -1 for a broken sync pattern
 * (a bad FSYNC/HSYNC, or a frame of perf padding that is not four
 * FSYNCs).  Returns 1 if there was one, else 0. */
TB_API int tb_deformatter_first_error(const tb_deformatter *d, uint64_t *offset, int *id);

/* Formatter: the inverse, for the encoder's multi-source buffers.
 * flags: TB_FRAME_MEM_ALIGNED (ETB style), or TPIU style with
 * TB_FRAME_HAS_FSYNC (an FSYNC before the first frame and every 16th)
 * and/or TB_FRAME_HAS_HSYNC (tb_formatter_idle pads).  NULL for other
 * flags.  Only changes of source cost an ID byte. */
typedef struct tb_formatter tb_formatter;
TB_API tb_formatter *tb_formatter_new(unsigned flags);
TB_API void tb_formatter_free(tb_formatter *f);
/* Appends bytes of source `id` (0x01..0x6F).  Complete frames are
 * written through the sink as they fill. */
typedef int (*tb_frame_sink)(void *ctx, const uint8_t *data, size_t len);
TB_API int tb_formatter_put(tb_formatter *f, uint8_t id, const uint8_t *data,
                     size_t len, tb_frame_sink sink, void *ctx);
/* Pads the last frame with the null ID and writes it.  The sink's
 * negative return is passed on; a positive one gives TB_ERR_STOPPED. */
TB_API int tb_formatter_flush(tb_formatter *f, tb_frame_sink sink, void *ctx);
/* TPIU idle: an HSYNC (FF 7F) after the last complete half-word of the
 * frame.  TB_ERR_STATE unless made with TB_FRAME_HAS_HSYNC. */
TB_API int tb_formatter_idle(tb_formatter *f, tb_frame_sink sink, void *ctx);
/* The port's clock, for a TPIU capture (TB_FRAME_HAS_HSYNC): tells the
 * formatter that the next bytes come at core cycle `cycle`.  The port
 * model (docs/vectors.md, tracebench's own, [U]): a 16-bit port sends one
 * half-word a cycle, so the bytes put so far keep it busy for half their
 * count in cycles after the cycle they came at; when `cycle` is later
 * than that, the port idled, and each idle cycle is an HSYNC
 * (tb_formatter_idle), at most TB_FORMATTER_MAX_IDLE per gap (a capture
 * keeps a few of a long idle run).  Without TB_FRAME_HAS_HSYNC nothing
 * is written.  Cycles going back count as no idle. */
#define TB_FORMATTER_MAX_IDLE 4
TB_API int tb_formatter_tick(tb_formatter *f, uint64_t cycle, tb_frame_sink sink, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
