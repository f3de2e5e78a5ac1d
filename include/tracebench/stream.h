/*
 * A trace source's byte stream out of a snapshot: reads the source's
 * buffer files in fixed-size chunks, de-formats CoreSight frames when
 * the buffer is formatted, and hands on only this source's bytes with
 * their stream indices (OpenCSD's convention, see frame.h).  Memory does
 * not depend on the buffer's size.
 */
#ifndef TRACEBENCH_STREAM_H
#define TRACEBENCH_STREAM_H

#include <string.h>

#include "tracebench/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of the source, data[0] at stream index `index`.  Non-zero return
 * stops the stream (TB_ERR_STOPPED). */
typedef int (*tb_stream_cb)(void *ctx, uint64_t index, const uint8_t *data,
                            size_t len);

typedef struct tb_stream_opts {
    /* sizeof (tb_stream_opts) as the caller was built: tb_stream_opts_init
     * sets it.  The library reads only that many bytes and takes the
     * fields after them as 0, so a caller built against an older, smaller
     * struct still works; a size below TB_STREAM_OPTS_SIZE_MIN (0, or
     * garbage) gives TB_ERR_INVAL with the reason.  Fields are only ever
     * added at the end. */
    size_t size;
    size_t read_chunk;   /* file read size; 0 = 64 KiB */
    size_t max_chunk;    /* split every delivery to at most this; 0 = no */
    /* Pass on where a corrupt frame may have cut the source's bytes: a
     * call with len 0 at the index of the bytes that follow the gap
     * (spans: len 0, a map of one segment with end 0 at that index;
     * frame.h TB_FRAME_REPORT_GAPS).  Off: the bytes just go on. */
    bool gaps;
} tb_stream_opts;

/* The oldest struct the library takes: size and read_chunk; a caller's
 * struct that ends before max_chunk or gaps gets their defaults (0). */
#define TB_STREAM_OPTS_SIZE_MIN (2 * sizeof(size_t))

/* All fields 0 (the defaults), size set. */
static inline void tb_stream_opts_init(tb_stream_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
}

/* Which sources tb_stream_select() picks besides a trace ID (0..0x7F). */
#define TB_STREAM_ONLY (-1) /* the one decodable source, if there is one */
#define TB_STREAM_ALL (-2)  /* every decodable source */

/* The captured ETMv3/PTM sources of a snapshot whose configuration is
 * good ("decodable"; sources no buffer captured, of another type such as
 * ETE, ETMv4, STM or ITM, or with broken registers are passed over), in
 * snapshot order: the one with trace ID id, the only one, or all.  Fills
 * out[0..max) and returns the count (>= 1), or a negative TB_ERR_* with
 * the cause in err: a source that has the ID but cannot be decoded gives
 * its own reason (tb_snapshot_source_config); no decodable source gives
 * each refused source's reason; TB_STREAM_ONLY with several lists their
 * IDs (TB_ERR_INVAL); an unknown ID lists the IDs there are
 * (TB_ERR_NOT_FOUND). */
TB_API int tb_stream_select(const tb_snapshot *s, int id, const tb_snap_source **out,
                     size_t max, char *err, size_t errlen);

/* Finds a trace source by its trace ID (ETMTRACEIDR), or the only
 * decodable source when id < 0 (tb_stream_select).  NULL when none
 * matches, with the cause in err. */
TB_API const tb_snap_source *tb_stream_find_source(const tb_snapshot *s, int id,
                                            char *err, size_t errlen);

/* Streams the source's bytes.  Returns 0, or a negative TB_ERR_* with a
 * one-line reason in err.  Corrupt CoreSight frames (a reserved trace ID,
 * a broken sync pattern) do not stop the stream: the deformatter drops
 * the bytes no ID byte claims and goes on to the end of the buffer (an ID
 * holds until the next ID byte, so the next one re-establishes the
 * sources: frame.h), then TB_ERR_BAD_FRAME is returned with the first bad
 * frame's byte offset and cause in err. */
TB_API int tb_stream_source(const tb_snapshot *s, const tb_snap_source *src,
                     const tb_stream_opts *opts, tb_stream_cb cb, void *ctx,
                     char *err, size_t errlen);

/* The same bytes as spans (tb_deformatter_push_spans): the source's runs
 * joined, with each byte's stream index in map; an unformatted buffer
 * gives one segment per read.  For tb_parser_push_span() and
 * tb_decoder_push_span().  TB_ERR_INVAL with opts->max_chunk set. */
typedef int (*tb_stream_span_cb)(void *ctx, const uint8_t *data, size_t len,
                                 const tb_span_map *map);
TB_API int tb_stream_source_spans(const tb_snapshot *s, const tb_snap_source *src,
                           const tb_stream_opts *opts, tb_stream_span_cb cb,
                           void *ctx, char *err, size_t errlen);

/* A trace buffer file outside any snapshot (an ETB/ETR dump): the bytes
 * of trace ID trace_id, read as a snapshot buffer of that format:
 * "coresight" (CoreSight frames, as an ETB/ETR stores them),
 * "dstream_coresight" (frames with FSYNCs), "tpiu_coresight" (FSYNCs and
 * HSYNC idle pads) or "source_data" (one
 * source's raw bytes; the ID is not looked at).  Same callbacks and
 * errors as tb_stream_source() / tb_stream_source_spans(). */
TB_API int tb_stream_file(const char *path, const char *format, uint8_t trace_id,
                   const tb_stream_opts *opts, tb_stream_cb cb, void *ctx,
                   char *err, size_t errlen);
TB_API int tb_stream_file_spans(const char *path, const char *format, uint8_t trace_id,
                         const tb_stream_opts *opts, tb_stream_span_cb cb,
                         void *ctx, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
