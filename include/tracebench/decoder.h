/*
 * Full decoder: packets (from the parser) + a memory image -> trace
 * elements (types.h), for ETMv3 and PTM (the decompression of IHI0014Q
 * chapter 7 and IHI0035B appendix B).
 *
 * A push API like the parser's: feed packets one at a time, in stream
 * order; elements come out through the callback as soon as they are
 * known.  Memory is fixed: the only state is the decompressor's and a
 * fixed-size block cache, whatever the trace length.
 *
 * Errors in the trace are elements, never a silently wrong instruction:
 * NO_SYNC with a tb_gap_reason (bad packet, overflow, an atom that
 * contradicts the image), ADDR_NACC for code missing from the image,
 * ADDR_UNKNOWN for atoms consumed while the address is unknown.  The
 * functions return a negative TB_ERR_* only for misuse, allocation
 * failure or a callback asking to stop (TB_ERR_STOPPED).
 *
 * Instruction ranges (TB_ELEM_INSN_RANGE): [start, end) executed
 * straight-line in state isa, count instructions, the last one at
 * last_addr (last_size bytes) with atom last_atom.  last_wp is its
 * class as a waypoint of the protocol, NONE for any other instruction:
 * ETMv3 flow changes only; PTM also ISB, and DMB/DSB when ETMCCER[24]
 * makes them waypoints (IHI0035B).
 *   PTM: a range is the run up to and including one waypoint (or the
 *   instruction a waypoint update names); only the last instruction has
 *   a known condition result.
 *   ETMv3: a range holds up to 32 instructions, each traced by its own
 *   atom; bit i of atom_bits is set when instruction i was N.  It ends
 *   at a branch that was taken.  cc is the sum of the cycles of its
 *   instructions (cycle-accurate trace).
 * tb_decoder_range_addrs() lists the instruction addresses of a range.
 */
#ifndef TRACEBENCH_DECODER_H
#define TRACEBENCH_DECODER_H


#include "tracebench/health.h"
#include "tracebench/parser.h"
#include "tracebench/snapshot.h"
#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_decoder tb_decoder;

/* The image must stay alive and unchanged while the decoder exists.
 * NULL on a bad configuration or allocation failure. */
TB_API tb_decoder *tb_decoder_new(const tb_config *cfg, const tb_memimage *mem);
TB_API void tb_decoder_free(tb_decoder *d);
/* One packet.  Returns the number of elements emitted or TB_ERR_*. */
TB_API int tb_decoder_packet(tb_decoder *d, const tb_packet *pkt, tb_element_cb cb,
                      void *ctx);
/* End of trace: emits anything held back, then TB_ELEM_END. */
TB_API int tb_decoder_finish(tb_decoder *d, tb_element_cb cb, void *ctx);
/* Counts every packet the decoder is given into h (health.h), also on
 * the fused paths of tb_decoder_push(), which hand it the packets that
 * are not atoms, branches or I-syncs (A-syncs, unsynchronised bytes, bad
 * packets: what tells a lost decode).  NULL: none (the default).  h must
 * outlive its use; the elements are the caller's to count. */
TB_API void tb_decoder_set_health(tb_decoder *d, tb_health *h);
/* Cycle-accurate trace: with on, each instruction range ends where its
 * cycle count ends, so that cc is the count of its last atom alone, as
 * OpenCSD gives it.  ETMv3 traces each instruction by its own atom
 * (IHI0014Q 7.3.1), so its ranges hold one instruction each, with the
 * W atoms since the atom before (pending W-only P-headers included, as
 * DS-5 counts them; OpenCSD gives those a CYCLE_COUNT of their own).  A
 * PTM range already ends at each atom (its waypoint, IHI0035B 4.4): the
 * trace counts no cycles inside it, and nothing changes.  ETMv1 and
 * ETMv2 count forward from each status to the next (IHI0014Q 5.10,
 * 6.1.6): one instruction a range, its status cycle and the waits after
 * it; an open count (before a trace-on or overflow marker, or the end)
 * is left out as in the default, its last instruction's only.  A
 * protocol without it returns TB_ERR_UNSUPPORTED.  Off
 * (the default): ranges of up to 32 instructions whose cc is the sum
 * of theirs.  No effect on trace that is not cycle-accurate.  Takes
 * effect at the next range (call it before the first packet);
 * tb_decoder_reset() keeps it.  Returns 0 or TB_ERR_*. */
TB_API int tb_decoder_set_cycle_ranges(tb_decoder *d, bool on);
/* Forgets all decode state (not the cache), as after construction. */
TB_API void tb_decoder_reset(tb_decoder *d);

/* Parse and decode in one call: trace bytes -> elements through parser
 * p (same configuration as d).  Exactly the elements, in the same order,
 * that tb_parser_push() feeding every packet to tb_decoder_packet()
 * gives, for any chunking; faster, because runs of ETMv3 P-headers and
 * PTM atom packets reach the decompressor without a tb_packet each.  Returns the number of
 * elements emitted or TB_ERR_* (TB_ERR_INVAL when p and d are for
 * different protocols). */
TB_API int tb_decoder_push(tb_decoder *d, tb_parser *p, const uint8_t *data,
                    size_t len, uint64_t index, tb_element_cb cb, void *ctx);
/* tb_decoder_push() for a span (tb_deformatter_push_spans): byte i has
 * the stream index map gives it, as in tb_parser_push_span().  A span
 * joins the deformatter's short runs, so the parser and decompressor
 * are entered once per span, not once per run. */
TB_API int tb_decoder_push_span(tb_decoder *d, tb_parser *p, const uint8_t *data,
                         size_t len, const tb_span_map *map, tb_element_cb cb,
                         void *ctx);
/* Bytes of the stream were lost before stream index `index` (a corrupt
 * CoreSight frame: tb_stream_opts.gaps): p drops any packet begun and
 * waits for the next A-sync, and d reports NO_SYNC (bad-packet, err
 * TB_ERR_BAD_FRAME) and waits for the next I-sync, as after a bad
 * packet.  Returns the elements emitted or TB_ERR_*. */
TB_API int tb_decoder_push_gap(tb_decoder *d, tb_parser *p, uint64_t index, tb_element_cb cb,
                        void *ctx);
/* End of stream for tb_decoder_push(): tb_parser_finish() into d, then
 * tb_decoder_finish().  Returns the elements emitted or TB_ERR_*. */
TB_API int tb_decoder_push_finish(tb_decoder *d, tb_parser *p, tb_element_cb cb,
                           void *ctx);
/* The instruction addresses of an INSN_RANGE element decoded by d, in
 * order, into out (max entries).  Returns the count written (el->count
 * when max allows) or TB_ERR_*. */
TB_API int tb_decoder_range_addrs(tb_decoder *d, const tb_element *el, uint32_t *out,
                           size_t max);

/* The per-protocol decoders behind tb_decoder are not part of the API:
 * a tb_config of the protocol chooses one. */

/* Lists the instruction addresses of a range over an image (Thumb sizes
 * come from the code bytes).  Returns the count or TB_ERR_NOT_IN_IMAGE. */
TB_API int tb_range_addrs(const tb_memimage *mem, const tb_element *el,
                   uint32_t *out, size_t max);

/* ---- whole-snapshot convenience (snapshot -> stream -> parser ->
 * decoder) for the CLI, tests and benchmarks ---- */

/* Decodes trace source `id` (ETMTRACEIDR; < 0: the only source) of the
 * snapshot in dir.  Returns 0 or TB_ERR_* with a reason in err.  Corrupt
 * CoreSight frames: the decode goes on past them with a NO_SYNC where
 * bytes were lost (tb_decoder_push_gap) to the end, and then returns
 * TB_ERR_BAD_FRAME with the first bad frame in err. */
TB_API int tb_decode_snapshot(const char *dir, int id, tb_element_cb cb, void *ctx,
                       char *err, size_t errlen);

/* An element of tb_decode_snapshot_insns(), with what a user of the
 * snapshot would otherwise load the image again for. */
typedef struct tb_insn_element {
    const tb_element *el;   /* the element, as tb_decode_snapshot gives it */
    /* TB_ELEM_INSN_RANGE: the el->count instruction addresses, in
     * execution order (tb_range_addrs); other kinds: NULL and 0.  Valid
     * during the callback only. */
    const uint32_t *addrs;
    size_t n_addrs;
    tb_protocol protocol;   /* of the source: PTM ranges carry E/N on the
                             * last instruction only (types.h) */
    uint8_t trace_id;       /* the source's ETMTRACEIDR */
} tb_insn_element;
/* A non-zero return stops the decode (TB_ERR_STOPPED). */
typedef int (*tb_insn_element_cb)(void *ctx, const tb_insn_element *ie);

/* tb_decode_snapshot(), with each instruction range's addresses: one
 * load of the snapshot, one pass.  Returns 0 or TB_ERR_* with a reason
 * in err (TB_ERR_NOT_IN_IMAGE: a Thumb range runs past the image). */
TB_API int tb_decode_snapshot_insns(const char *dir, int id, tb_insn_element_cb cb,
                             void *ctx, char *err, size_t errlen);

/* ---- element printing (docs/formats.md) ---- */
TB_API const char *tb_elem_kind_name(tb_elem_kind k);
TB_API const char *tb_gap_reason_name(tb_gap_reason r);
/* One readable line (no newline) into buf; returns the length needed. */
TB_API int tb_elem_format(const tb_element *el, char *buf, size_t len);
/* One JSON object (no newline). */
TB_API int tb_elem_format_json(const tb_element *el, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
