/* The per-protocol hooks behind the tb_parser and tb_decoder fronts
 * (parser.c, decoder.c): the decode side's counterpart of the encoder's
 * enc_ops (encoder/encoder_internal.h).  Each protocol defines its two
 * tables beside its own parser and decoder; a new protocol is two more
 * tables and a line in each front's list, not another branch in every
 * front function. */
#ifndef TB_DECODER_BACKEND_H
#define TB_DECODER_BACKEND_H

#include "span.h"
#include "tracebench/decoder.h"
#include "tracebench/parser.h"

typedef struct tb_parser_ops {
    tb_protocol protocol;
    void *(*make)(const tb_config *cfg); /* NULL: cfg refused */
    void (*destroy)(void *p);
    int (*push)(void *p, const uint8_t *data, size_t len, uint64_t index, tb_packet_cb cb,
                void *ctx);
    /* NULL: each segment of the span is pushed with its own index (a
     * port capture's parser keeps a cut sample across pushes). */
    int (*push_span)(void *p, const uint8_t *data, size_t len, const tb_span_map *map,
                     tb_packet_cb cb, void *ctx);
    int (*finish)(void *p, tb_packet_cb cb, void *ctx);
    void (*reset)(void *p);
} tb_parser_ops;

typedef struct tb_decoder_ops {
    tb_protocol protocol;
    void *(*make)(const tb_config *cfg, const tb_memimage *mem);
    void (*destroy)(void *d);
    int (*packet)(void *d, const tb_packet *pkt, tb_element_cb cb, void *ctx);
    int (*finish)(void *d, tb_element_cb cb, void *ctx);
    void (*reset)(void *d);
    /* The fused parse + decode of a chunk (fused.h), the protocol's
     * parser p and decoder d: packets it does not take itself go to
     * pkt_cb; *nel gets the elements its own entries emitted.  NULL:
     * every packet goes through packet(). */
    int (*push_fused)(void *p, void *d, const uint8_t *data, size_t len, tb_span_cur *cur,
                      tb_packet_cb pkt_cb, void *pctx, tb_element_cb cb, void *ctx,
                      int *nel);
    /* tb_decoder_set_cycle_ranges(): each range ends where its cycle
     * count ends.  NULL: not supported, unless
     * cycles_per_range says the ranges already do (PTM: one atom, one
     * range). */
    void (*cycle_ranges)(void *d, bool on);
    bool cycles_per_range;
} tb_decoder_ops;

extern const tb_parser_ops tb_etmv3_parser_ops, tb_ptm_parser_ops, tb_etmv1_parser_ops,
    tb_etmv2_parser_ops;
extern const tb_decoder_ops tb_etmv3_decoder_ops, tb_ptm_decoder_ops, tb_etmv1_decoder_ops,
    tb_etmv2_decoder_ops;

/* The protocol of a parser, and its backend when it is of protocol
 * (else NULL). */
tb_protocol tb_parser_protocol(const tb_parser *p);
void *tb_parser_backend(tb_parser *p, tb_protocol protocol);

#endif /* TB_DECODER_BACKEND_H */
