/* The per-protocol hooks behind the tb_parser and tb_decoder fronts
 * (parser.c, decoder.c): the decode side's counterpart of the encoder's
 * enc_ops (encoder/encoder_internal.h).  Each protocol defines its two
 * tables beside its own parser and decoder; a new protocol is two more
 * tables and a line in each front's list, not another branch in every
 * front function. */
#ifndef TB_DECODER_BACKEND_H
#define TB_DECODER_BACKEND_H

#include <stdlib.h>

#include "../common/struct_size.h"
#include "protocols.h"
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

/* An ETMv3 or PTM parser: tb_config_alloc (common/struct_size.h), the
 * same refusals as the protocol's packet writer. */
#define tb_parser_alloc tb_config_alloc

/* The ETMv3 and PTM parsers' shell, for protocol v (etmv3, ptm) of
 * TB_PROTO_<PROTO>, over its push loop impl(p, data, len, cur, cb, ctx,
 * sink) (the fused sink, fused.h, or NULL): tb_<v>_parser_push (one flat
 * run), _push_span, _push_fused and tb_<v>_parser_ops, whose entries call
 * the public functions.  Written once here rather than once a protocol. */
#define TB_PARSER_API(v, PROTO, impl)                                                     \
    int tb_##v##_parser_push(tb_##v##_parser *p, const uint8_t *data, size_t len,        \
                             uint64_t index, tb_packet_cb cb, void *ctx)                 \
    {                                                                                    \
        tb_span_cur cur;                                                                 \
                                                                                         \
        if (!p || (!data && len))                                                        \
            return TB_ERR_INVAL;                                                         \
        tb_span_cur_flat(&cur, index);                                                   \
        return impl(p, data, len, &cur, cb, ctx, NULL);                                  \
    }                                                                                    \
    int tb_##v##_parser_push_span(tb_##v##_parser *p, const uint8_t *data, size_t len,   \
                                  const tb_span_map *map, tb_packet_cb cb, void *ctx)    \
    {                                                                                    \
        tb_span_cur cur;                                                                 \
                                                                                         \
        if (!p || (!data && len) || (len && !tb_span_map_ok(map, len)))                  \
            return TB_ERR_INVAL;                                                         \
        if (!len)                                                                        \
            return 0;                                                                    \
        tb_span_cur_init(&cur, map);                                                     \
        return impl(p, data, len, &cur, cb, ctx, NULL);                                  \
    }                                                                                    \
    int tb_##v##_parser_push_fused(tb_##v##_parser *p, const uint8_t *data, size_t len,  \
                                   tb_span_cur *cur, tb_packet_cb cb, void *ctx,         \
                                   tb_##v##_fused_sink *sink)                            \
    {                                                                                    \
        if (!p || (!data && len))                                                        \
            return TB_ERR_INVAL;                                                         \
        return impl(p, data, len, cur, cb, ctx, sink);                                   \
    }                                                                                    \
    static void *v##_parser_make(const tb_config *cfg) { return tb_##v##_parser_new(cfg); } \
    static void v##_parser_destroy(void *p) { tb_##v##_parser_free(p); }                 \
    static void v##_parser_reset(void *p) { tb_##v##_parser_reset(p); }                  \
    static int v##_parser_push(void *p, const uint8_t *data, size_t len, uint64_t index, \
                               tb_packet_cb cb, void *ctx)                               \
    {                                                                                    \
        return tb_##v##_parser_push(p, data, len, index, cb, ctx);                       \
    }                                                                                    \
    static int v##_parser_push_span(void *p, const uint8_t *data, size_t len,            \
                                    const tb_span_map *map, tb_packet_cb cb, void *ctx)  \
    {                                                                                    \
        return tb_##v##_parser_push_span(p, data, len, map, cb, ctx);                    \
    }                                                                                    \
    static int v##_parser_finish(void *p, tb_packet_cb cb, void *ctx)                   \
    {                                                                                    \
        return tb_##v##_parser_finish(p, cb, ctx);                                       \
    }                                                                                    \
    const tb_parser_ops tb_##v##_parser_ops = {                                          \
        .protocol = TB_PROTO_##PROTO, .make = v##_parser_make,                           \
        .destroy = v##_parser_destroy, .push = v##_parser_push,                          \
        .push_span = v##_parser_push_span, .finish = v##_parser_finish,                  \
        .reset = v##_parser_reset,                                                       \
    }

/* The ETMv3 and PTM decoders' life cycle and backend table, for protocol
 * v of TB_PROTO_<PROTO>, whose decoder struct has its block cache `bc`
 * and whose reset_fn(d) puts it back to the start of a trace:
 * tb_<v>_decoder_free, _reset and tb_<v>_decoder_ops (with the fused
 * path, tb_<v>_parser_push_fused into a tb_<v>_fused_sink), the table's
 * other entries (cycle ranges) given after reset_fn. */
#define TB_DECODER_API(v, PROTO, reset_fn, ...)                                           \
    void tb_##v##_decoder_free(tb_##v##_decoder *d)                                      \
    {                                                                                    \
        if (!d)                                                                          \
            return;                                                                      \
        tb_block_cache_free(d->bc);                                                      \
        free(d);                                                                         \
    }                                                                                    \
    void tb_##v##_decoder_reset(tb_##v##_decoder *d)                                     \
    {                                                                                    \
        if (d)                                                                           \
            reset_fn(d);                                                                 \
    }                                                                                    \
    static void *v##_decoder_make(const tb_config *cfg, const tb_memimage *mem)          \
    {                                                                                    \
        return tb_##v##_decoder_new(cfg, mem);                                           \
    }                                                                                    \
    static void v##_decoder_destroy(void *d) { tb_##v##_decoder_free(d); }               \
    static void v##_decoder_reset(void *d) { tb_##v##_decoder_reset(d); }                \
    static int v##_decoder_packet(void *d, const tb_packet *pkt, tb_element_cb cb,       \
                                  void *ctx)                                             \
    {                                                                                    \
        return tb_##v##_decoder_packet(d, pkt, cb, ctx);                                 \
    }                                                                                    \
    static int v##_decoder_finish(void *d, tb_element_cb cb, void *ctx)                  \
    {                                                                                    \
        return tb_##v##_decoder_finish(d, cb, ctx);                                      \
    }                                                                                    \
    static int v##_decoder_push_fused(void *p, void *d, const uint8_t *data, size_t len, \
                                      tb_span_cur *cur, tb_packet_cb pkt_cb, void *pctx, \
                                      tb_element_cb cb, void *ctx, int *nel)             \
    {                                                                                    \
        tb_##v##_fused_sink sink = {d, cb, ctx, 0};                                      \
        int r = tb_##v##_parser_push_fused(p, data, len, cur, pkt_cb, pctx, &sink);      \
                                                                                         \
        *nel += sink.nel;                                                                \
        return r;                                                                        \
    }                                                                                    \
    const tb_decoder_ops tb_##v##_decoder_ops = {                                        \
        .protocol = TB_PROTO_##PROTO, .make = v##_decoder_make,                          \
        .destroy = v##_decoder_destroy, .packet = v##_decoder_packet,                    \
        .finish = v##_decoder_finish, .reset = v##_decoder_reset,                        \
        .push_fused = v##_decoder_push_fused, __VA_ARGS__                                \
    }

#endif /* TB_DECODER_BACKEND_H */
