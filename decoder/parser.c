/* tb_parser: one front for the per-protocol packet parsers. */
#include <stdlib.h>

#include "fused.h"
#include "tracebench/parser.h"

struct tb_parser {
    tb_protocol protocol;
    union {
        tb_etmv3_parser *etmv3;
        tb_ptm_parser *ptm;
    } u;
};

tb_parser *tb_parser_new(const tb_config *cfg)
{
    tb_parser *p;

    if (!cfg || (cfg->protocol != TB_PROTO_ETMV3 && cfg->protocol != TB_PROTO_PTM))
        return NULL;
    p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->protocol = cfg->protocol;
    if (p->protocol == TB_PROTO_ETMV3)
        p->u.etmv3 = tb_etmv3_parser_new(cfg);
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
    return tb_ptm_parser_push(p->u.ptm, data, len, index, cb, ctx);
}

int tb_parser_push_span(tb_parser *p, const uint8_t *data, size_t len,
                        const tb_span_map *map, tb_packet_cb cb, void *ctx)
{
    if (!p)
        return TB_ERR_INVAL;
    if (p->protocol == TB_PROTO_ETMV3)
        return tb_etmv3_parser_push_span(p->u.etmv3, data, len, map, cb, ctx);
    return tb_ptm_parser_push_span(p->u.ptm, data, len, map, cb, ctx);
}

int tb_parser_finish(tb_parser *p, tb_packet_cb cb, void *ctx)
{
    if (!p)
        return TB_ERR_INVAL;
    if (p->protocol == TB_PROTO_ETMV3)
        return tb_etmv3_parser_finish(p->u.etmv3, cb, ctx);
    return tb_ptm_parser_finish(p->u.ptm, cb, ctx);
}

tb_etmv3_parser *tb_parser_etmv3(tb_parser *p)
{
    return p && p->protocol == TB_PROTO_ETMV3 ? p->u.etmv3 : NULL;
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
    else
        tb_ptm_parser_reset(p->u.ptm);
}
