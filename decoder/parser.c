/* tb_parser: one front for the per-protocol packet parsers. */
#include <stdlib.h>

#include "backend.h"
#include "fused.h"
#include "tracebench/etmv2.h"
#include "tracebench/parser.h"
#include "../common/struct_size.h"

struct tb_parser {
    const tb_parser_ops *ops;
    void *be; /* the protocol's parser */
};

/* Every protocol's parser (backend.h). */
static const tb_parser_ops *const parsers[] = {&tb_etmv3_parser_ops, &tb_ptm_parser_ops,
                                               &tb_etmv1_parser_ops, &tb_etmv2_parser_ops};

tb_parser *tb_parser_new(const tb_config *cfg)
{
    const tb_parser_ops *ops = NULL;
    tb_parser *p;
    tb_config own; /* the caller's, as this build's (struct_size.h) */

    cfg = tb_config_take(&own, cfg, NULL, 0);
    for (size_t i = 0; cfg && i < sizeof parsers / sizeof parsers[0]; i++)
        if (parsers[i]->protocol == cfg->protocol)
            ops = parsers[i];
    if (!ops)
        return NULL;
    p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->ops = ops;
    p->be = ops->make(cfg);
    if (!p->be) {
        free(p);
        return NULL;
    }
    return p;
}

void tb_parser_free(tb_parser *p)
{
    if (!p)
        return;
    p->ops->destroy(p->be);
    free(p);
}

int tb_parser_push(tb_parser *p, const uint8_t *data, size_t len,
                   uint64_t index, tb_packet_cb cb, void *ctx)
{
    if (!p || (!data && len))
        return TB_ERR_INVAL;
    return p->ops->push(p->be, data, len, index, cb, ctx);
}

/* An ETMv1/ETMv2 port capture comes from one unformatted buffer
 * (docs/etmv1.md 2): a span is its segments one after the other, each
 * pushed with its own stream index (tb_parser_push_span's contract).  The
 * port parsers keep a cut sample across pushes. */
static int port_span(tb_parser *p, const uint8_t *data, size_t len,
                     const tb_span_map *map, tb_packet_cb cb, void *ctx)
{
    size_t s, at = 0;
    int n = 0, r;

    if ((!data && len) || (len && !tb_span_map_ok(map, len)))
        return TB_ERR_INVAL;
    for (s = 0; len && s < map->n; s++) {
        r = tb_parser_push(p, data + at, map->end[s] - at, map->index[s], cb, ctx);
        if (r < 0)
            return r;
        n += r;
        at = map->end[s];
    }
    return n;
}

int tb_parser_push_span(tb_parser *p, const uint8_t *data, size_t len,
                        const tb_span_map *map, tb_packet_cb cb, void *ctx)
{
    if (!p)
        return TB_ERR_INVAL;
    if (!p->ops->push_span)
        return port_span(p, data, len, map, cb, ctx);
    return p->ops->push_span(p->be, data, len, map, cb, ctx);
}

int tb_parser_finish(tb_parser *p, tb_packet_cb cb, void *ctx)
{
    if (!p)
        return TB_ERR_INVAL;
    return p->ops->finish(p->be, cb, ctx);
}

tb_protocol tb_parser_protocol(const tb_parser *p)
{
    return p ? p->ops->protocol : TB_PROTO_NONE;
}

void *tb_parser_backend(tb_parser *p, tb_protocol protocol)
{
    return p && p->ops->protocol == protocol ? p->be : NULL;
}

void tb_parser_reset(tb_parser *p)
{
    if (p)
        p->ops->reset(p->be);
}
