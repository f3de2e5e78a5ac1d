/*
 * A trace source's byte stream out of a snapshot: reads the source's
 * buffer files in fixed-size chunks, de-formats CoreSight frames when
 * the buffer is formatted, and hands on only this source's bytes with
 * their stream indices (OpenCSD's convention, see frame.h).  Memory does
 * not depend on the buffer's size.
 */
#ifndef TRACEBENCH_STREAM_H
#define TRACEBENCH_STREAM_H

#include "tracebench/snapshot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of the source, data[0] at stream index `index`.  Non-zero return
 * stops the stream (TB_ERR_STOPPED). */
typedef int (*tb_stream_cb)(void *ctx, uint64_t index, const uint8_t *data,
                            size_t len);

typedef struct tb_stream_opts {
    size_t read_chunk;   /* file read size; 0 = 64 KiB */
    size_t max_chunk;    /* split every delivery to at most this; 0 = no */
} tb_stream_opts;

/* Finds a trace source by its trace ID (ETMTRACEIDR), or the only source
 * when id < 0 and there is exactly one.  NULL when none matches. */
const tb_snap_source *tb_stream_find_source(const tb_snapshot *s, int id,
                                            char *err, size_t errlen);

/* Streams the source's bytes.  Returns 0, or a negative TB_ERR_* with a
 * one-line reason in err (a frame error names its buffer offset). */
int tb_stream_source(const tb_snapshot *s, const tb_snap_source *src,
                     const tb_stream_opts *opts, tb_stream_cb cb, void *ctx,
                     char *err, size_t errlen);

/* The same bytes as spans (tb_deformatter_push_spans): the source's runs
 * joined, with each byte's stream index in map; an unformatted buffer
 * gives one segment per read.  For tb_parser_push_span() and
 * tb_decoder_push_span().  TB_ERR_INVAL with opts->max_chunk set. */
typedef int (*tb_stream_span_cb)(void *ctx, const uint8_t *data, size_t len,
                                 const tb_span_map *map);
int tb_stream_source_spans(const tb_snapshot *s, const tb_snap_source *src,
                           const tb_stream_opts *opts, tb_stream_span_cb cb,
                           void *ctx, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
