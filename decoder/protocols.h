/* The per-protocol parsers and decoders behind the tb_parser and
 * tb_decoder fronts (parser.c, decoder.c, backend.h).  Inside the
 * library: users reach them through the fronts, with a tb_config of the
 * protocol; the tests and fuzz harnesses call them directly.  Same
 * contracts as tracebench/parser.h and decoder.h; the packets and
 * elements each protocol gives are described in its public header
 * (tracebench/etmv1.h, etmv2.h) or in types.h.
 *
 * Declared by one macro a protocol, with the extras of its family, so
 * that the four sets cannot drift apart. */
#ifndef TB_DECODER_PROTOCOLS_H
#define TB_DECODER_PROTOCOLS_H

#include "tracebench/decoder.h"
#include "tracebench/etmv1.h"
#include "tracebench/etmv2.h"
#include "tracebench/parser.h"

/* Protocol v's parser and decoder, created from a cfg_t (tb_config for
 * ETMv3 and PTM, the port's own configuration for ETMv1 and ETMv2). */
#define TB_PROTOCOL_DECLARE(v, cfg_t)                                                      \
    typedef struct tb_##v##_parser tb_##v##_parser;                                      \
    tb_##v##_parser *tb_##v##_parser_new(const cfg_t *cfg);                              \
    void tb_##v##_parser_free(tb_##v##_parser *p);                                       \
    int tb_##v##_parser_push(tb_##v##_parser *p, const uint8_t *data, size_t len,        \
                             uint64_t index, tb_packet_cb cb, void *ctx);                \
    int tb_##v##_parser_finish(tb_##v##_parser *p, tb_packet_cb cb, void *ctx);          \
    void tb_##v##_parser_reset(tb_##v##_parser *p);                                      \
    typedef struct tb_##v##_decoder tb_##v##_decoder;                                    \
    tb_##v##_decoder *tb_##v##_decoder_new(const cfg_t *cfg, const tb_memimage *mem);    \
    void tb_##v##_decoder_free(tb_##v##_decoder *d);                                     \
    int tb_##v##_decoder_packet(tb_##v##_decoder *d, const tb_packet *pkt,               \
                                tb_element_cb cb, void *ctx);                            \
    int tb_##v##_decoder_finish(tb_##v##_decoder *d, tb_element_cb cb, void *ctx);       \
    void tb_##v##_decoder_reset(tb_##v##_decoder *d)

/* ETMv3 and PTM: tb_parser_push_span()'s contract. */
#define TB_PROTOCOL_DECLARE_SPAN(v)                                                        \
    int tb_##v##_parser_push_span(tb_##v##_parser *p, const uint8_t *data, size_t len,   \
                                  const tb_span_map *map, tb_packet_cb cb, void *ctx)

/* ETMv1 and ETMv2, whose parsers read a capture (docs/etmv1.md 2):
 * cfg NULL at creation takes the configuration from the capture header
 * (push only); push_samples takes samples, s[0] being sample number
 * `first`, with no header; config is the configuration in use (NULL
 * before the header when cfg was NULL). */
#define TB_PROTOCOL_DECLARE_PORT(v)                                                        \
    int tb_##v##_parser_push_samples(tb_##v##_parser *p, const tb_##v##_sample *s,       \
                                     size_t n, uint64_t first, tb_packet_cb cb,          \
                                     void *ctx);                                         \
    const tb_##v##_config *tb_##v##_parser_config(const tb_##v##_parser *p)

TB_PROTOCOL_DECLARE(etmv3, tb_config);
TB_PROTOCOL_DECLARE_SPAN(etmv3);
TB_PROTOCOL_DECLARE(ptm, tb_config);
TB_PROTOCOL_DECLARE_SPAN(ptm);
TB_PROTOCOL_DECLARE(etmv1, tb_etmv1_config);
TB_PROTOCOL_DECLARE_PORT(etmv1);
TB_PROTOCOL_DECLARE(etmv2, tb_etmv2_config);
TB_PROTOCOL_DECLARE_PORT(etmv2);

#endif /* TB_DECODER_PROTOCOLS_H */
