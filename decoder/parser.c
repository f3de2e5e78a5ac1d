/* tb_parser: one front for the per-protocol packet parsers. */
#include <stdlib.h>

#include "fused.h"
#include "tracebench/etmv2.h"
#include "tracebench/parser.h"

struct tb_parser {
    tb_protocol protocol;
    union {
        tb_etmv3_parser *etmv3;
        tb_ptm_parser *ptm;
        tb_etmv1_parser *etmv1;
        tb_etmv2_parser *etmv2;
    } u;
};

tb_parser *tb_parser_new(const tb_config *cfg)
{
    tb_parser *p;

    tb_etmv1_config v1;
    tb_etmv2_config v2;

    if (!cfg || (cfg->protocol != TB_PROTO_ETMV3 && cfg->protocol != TB_PROTO_PTM &&
                 cfg->protocol != TB_PROTO_ETMV1 && cfg->protocol != TB_PROTO_ETMV2))
        return NULL;
    if (cfg->protocol == TB_PROTO_ETMV1 && tb_etmv1_config_from_tb(&v1, cfg) < 0)
        return NULL;
    if (cfg->protocol == TB_PROTO_ETMV2 && tb_etmv2_config_from_tb(&v2, cfg) < 0)
        return NULL;
    p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->protocol = cfg->protocol;
    if (p->protocol == TB_PROTO_ETMV3)
        p->u.etmv3 = tb_etmv3_parser_new(cfg);
    else if (p->protocol == TB_PROTO_ETMV1)
        p->u.etmv1 = tb_etmv1_parser_new(&v1);
    else if (p->protocol == TB_PROTO_ETMV2)
        p->u.etmv2 = tb_etmv2_parser_new(&v2);
    else
        p->u.ptm = tb_ptm_parser_new(cfg);
    if (!p->u.etmv3 && !p->u.ptm) {
        free(p);
        return NULL;
    }
    return p;
}

void tb_parser_free(tb_parser *p)
{
    if (!p)
        return;
    if (p->protocol == TB_PROTO_ETMV3)
        tb_etmv3_parser_free(p->u.etmv3);
    else if (p->protocol == TB_PROTO_ETMV1)
        tb_etmv1_parser_free(p->u.etmv1);
    else if (p->protocol == TB_PROTO_ETMV2)
        tb_etmv2_parser_free(p->u.etmv2);
    else
        tb_ptm_parser_free(p->u.ptm);
    free(p);
}

int tb_parser_push(tb_parser *p, const uint8_t *data, size_t len,
                   uint64_t index, tb_packet_cb cb, void *ctx)
{
    if (!p || (!data && len))
        return TB_ERR_INVAL;
    if (p->protocol == TB_PROTO_ETMV3)
        return tb_etmv3_parser_push(p->u.etmv3, data, len, index, cb, ctx);
    if (p->protocol == TB_PROTO_ETMV1)
        return tb_etmv1_parser_push(p->u.etmv1, data, len, index, cb, ctx);
    if (p->protocol == TB_PROTO_ETMV2)
        return tb_etmv2_parser_push(p->u.etmv2, data, len, index, cb, ctx);
    return tb_ptm_parser_push(p->u.ptm, data, len, index, cb, ctx);
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
    if (p->protocol == TB_PROTO_ETMV3)
        return tb_etmv3_parser_push_span(p->u.etmv3, data, len, map, cb, ctx);
    if (p->protocol == TB_PROTO_ETMV1 || p->protocol == TB_PROTO_ETMV2)
        return port_span(p, data, len, map, cb, ctx);
    return tb_ptm_parser_push_span(p->u.ptm, data, len, map, cb, ctx);
}

int tb_parser_finish(tb_parser *p, tb_packet_cb cb, void *ctx)
{
    if (!p)
        return TB_ERR_INVAL;
    if (p->protocol == TB_PROTO_ETMV3)
        return tb_etmv3_parser_finish(p->u.etmv3, cb, ctx);
    if (p->protocol == TB_PROTO_ETMV1)
        return tb_etmv1_parser_finish(p->u.etmv1, cb, ctx);
    if (p->protocol == TB_PROTO_ETMV2)
        return tb_etmv2_parser_finish(p->u.etmv2, cb, ctx);
    return tb_ptm_parser_finish(p->u.ptm, cb, ctx);
}

tb_etmv3_parser *tb_parser_etmv3(tb_parser *p)
{
    return p && p->protocol == TB_PROTO_ETMV3 ? p->u.etmv3 : NULL;
}

tb_etmv1_parser *tb_parser_etmv1(tb_parser *p)
{
    return p && p->protocol == TB_PROTO_ETMV1 ? p->u.etmv1 : NULL;
}

tb_etmv2_parser *tb_parser_etmv2(tb_parser *p)
{
    return p && p->protocol == TB_PROTO_ETMV2 ? p->u.etmv2 : NULL;
}

tb_ptm_parser *tb_parser_ptm(tb_parser *p)
{
    return p && p->protocol == TB_PROTO_PTM ? p->u.ptm : NULL;
}

void tb_parser_reset(tb_parser *p)
{
    if (!p)
        return;
    if (p->protocol == TB_PROTO_ETMV3)
        tb_etmv3_parser_reset(p->u.etmv3);
    else if (p->protocol == TB_PROTO_ETMV1)
        tb_etmv1_parser_reset(p->u.etmv1);
    else if (p->protocol == TB_PROTO_ETMV2)
        tb_etmv2_parser_reset(p->u.etmv2);
    else
        tb_ptm_parser_reset(p->u.ptm);
}
