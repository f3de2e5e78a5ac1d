/*
 * Fused parse + decode (private to decoder/): runs of ETMv3 P-headers go
 * from the parser's input straight to the decompressor, without a
 * tb_packet per header.  Behind tb_decoder_push(); the elements are the
 * same, in the same order, as the packet path gives.
 */
#ifndef TB_FUSED_H
#define TB_FUSED_H

#include "tracebench/decoder.h"
#include "tracebench/parser.h"

/* The atom sequence of ETMv3 P-header h under cfg (IHI0014Q 7.3.1
 * tables 7.2/7.3), 'W'/'E'/'N' in time order as in tb_packet.seq.
 * Returns its length, or -1 for a reserved encoding. */
int tb_etmv3_phdr_seq(const tb_config *cfg, uint8_t h, char seq[20]);

/* Takes a run of n valid P-header bytes, hdr[0] at stream index `index`.
 * Returns how many it consumed (all of them, or fewer when the next one
 * must go through the packet path), or TB_ERR_STOPPED. */
typedef int (*tb_phdr_run_fn)(void *ctx, const uint8_t *hdr, size_t n,
                              uint64_t index);

/* tb_etmv3_parser_push(), but runs of valid P-headers met in header
 * position go to fn instead of cb. */
int tb_etmv3_parser_push_fused(tb_etmv3_parser *p, const uint8_t *data,
                               size_t len, uint64_t index, tb_packet_cb cb,
                               void *ctx, tb_phdr_run_fn fn, void *fctx);

/* The decompressor's side: n valid P-header bytes, as fn above.  *nel
 * gets the elements emitted added. */
int tb_etmv3_decoder_phdrs(tb_etmv3_decoder *d, const uint8_t *hdr, size_t n,
                           uint64_t index, tb_element_cb cb, void *ctx,
                           int *nel);

/* The per-protocol objects behind the fronts. */
tb_etmv3_parser *tb_parser_etmv3(tb_parser *p);
tb_etmv3_decoder *tb_decoder_etmv3(tb_decoder *d);

#endif
