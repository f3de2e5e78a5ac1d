/*
 * The decode pipeline: one trace source's bytes -> parser -> decoder ->
 * elements, in one object, for every program that decodes a whole
 * source (tb_decode_snapshot, the CLI's decode, stats, coverage and
 * profile, the spec-coverage catalogue, bench).
 *
 * It takes the bytes the way the stream functions give them (stream.h:
 * flat runs, spans, gaps) and chooses the path: without a packet tap the
 * fused parse + decode (tb_decoder_push / tb_decoder_push_span), with
 * one the packet path (every packet to the tap, then to the decoder),
 * which gives the same elements.  Memory is the parser's and decoder's,
 * fixed: it does not grow with the trace.  Functions return 0 or a
 * count, or a negative TB_ERR_*; nothing is printed.
 */
#ifndef TRACEBENCH_PIPELINE_H
#define TRACEBENCH_PIPELINE_H

#include "tracebench/decoder.h"
#include "tracebench/health.h"
#include "tracebench/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_pipeline tb_pipeline;

/* After each delivery of bytes (or a gap): the bytes given so far and
 * the stream index of the last one (0 before any). */
typedef void (*tb_pipeline_progress_cb)(void *ctx, uint64_t bytes, uint64_t last_index);

typedef struct tb_pipeline_opts {
    size_t size;                 /* sizeof(tb_pipeline_opts): the struct may grow */
    tb_element_cb on_element;    /* each element, in order (not NULL with a decoder) */
    void *ctx;                   /* for every callback here */
    /* Optional packet tap: each packet before the decoder sees it (and
     * then tb_pipeline_packet() is it while its elements come out).  A
     * non-zero return stops the decode (TB_ERR_STOPPED).  It takes the
     * packet path: the same elements, slower than the fused one. */
    tb_packet_cb on_packet;
    /* Optional: counted into it are the bytes, the packets the decoder
     * is given (tb_decoder_set_health) and the elements, each before the
     * callbacks see it.  Must outlive the pipeline. */
    tb_health *health;
    tb_pipeline_progress_cb on_progress; /* optional */
    /* Gaps (stream.h tb_stream_opts.gaps; a delivery of length 0):
     * true: resynchronise there (tb_decoder_push_gap) and decode past
     * corrupt frames to the end (tb_pipeline_finish_stream finishes on
     * TB_ERR_BAD_FRAME and returns it after).  false: a gap delivery is
     * passed over and TB_ERR_BAD_FRAME ends the decode unfinished. */
    bool gaps;
} tb_pipeline_opts;

/* A pipeline for one source of configuration cfg over image mem (both
 * must outlive it).  mem NULL: parse only, the packets to the tap, no
 * decoder and no elements.  NULL on a bad configuration, a missing
 * callback or allocation failure. */
TB_API tb_pipeline *tb_pipeline_new(const tb_config *cfg, const tb_memimage *mem,
                                    const tb_pipeline_opts *opts);
TB_API void tb_pipeline_free(tb_pipeline *p);
/* Forgets all parse and decode state and the byte count (not the
 * decoder's cache), as after construction; clears the error. */
TB_API void tb_pipeline_reset(tb_pipeline *p);

/* Bytes of the source, data[0] at stream index `index`, in any chunking.
 * Returns the number of elements emitted or TB_ERR_*. */
TB_API int tb_pipeline_push(tb_pipeline *p, const uint8_t *data, size_t len, uint64_t index);
/* A span (stream.h tb_stream_source_spans): byte i at the index map
 * gives it. */
TB_API int tb_pipeline_push_span(tb_pipeline *p, const uint8_t *data, size_t len,
                                 const tb_span_map *map);
/* Bytes were lost before stream index `index` (a corrupt frame):
 * tb_decoder_push_gap, whatever opts.gaps says. */
TB_API int tb_pipeline_push_gap(tb_pipeline *p, uint64_t index);
/* End of the source: anything held back, then TB_ELEM_END.  Returns the
 * elements emitted or TB_ERR_*. */
TB_API int tb_pipeline_finish(tb_pipeline *p);

/* Stream callbacks (tb_stream_cb, tb_stream_span_cb) with the pipeline
 * as ctx: a delivery of length 0 is a gap (opts.gaps).  A non-zero
 * return stops the stream; the cause is kept for
 * tb_pipeline_finish_stream. */
TB_API int tb_pipeline_on_bytes(void *pipeline, uint64_t index, const uint8_t *data,
                                size_t len);
TB_API int tb_pipeline_on_span(void *pipeline, const uint8_t *data, size_t len,
                               const tb_span_map *map);
/* After a tb_stream_* call that fed p through those callbacks returned
 * stream_rc: finishes the decode when the stream reached its end (0, or
 * TB_ERR_BAD_FRAME with opts.gaps) and returns 0 or the first error: the
 * pipeline's own (a decode error, a callback's stop) before the
 * stream's, a finish error before TB_ERR_BAD_FRAME. */
TB_API int tb_pipeline_finish_stream(tb_pipeline *p, int stream_rc);
/* The whole of source src of snapshot s (tb_stream_source_spans, gaps
 * passed on with opts.gaps), then tb_pipeline_finish_stream.  0 or
 * TB_ERR_* with a one-line reason in err (required, as for
 * tb_stream_source: TB_ERR_INVAL without). */
TB_API int tb_pipeline_run_source(tb_pipeline *p, const tb_snapshot *s,
                                  const tb_snap_source *src, char *err, size_t errlen);

/* The packet whose decode is emitting elements (the packet path: a tap
 * was given), else NULL (the fused path, or elements of finish). */
TB_API const tb_packet *tb_pipeline_packet(const tb_pipeline *p);
/* Bytes given so far (0 after a reset). */
TB_API uint64_t tb_pipeline_bytes(const tb_pipeline *p);
/* The pipeline's decoder, for its settings (tb_decoder_set_cycle_ranges)
 * before the first push; NULL when it only parses. */
TB_API tb_decoder *tb_pipeline_decoder(tb_pipeline *p);

#ifdef __cplusplus
}
#endif

#endif
