/*
 * The trace-port parsers' shell (port_internal.h), once for ETMv1
 * (IHI0014Q chapter 5; docs/etmv1.md 3) and ETMv2 (chapter 6;
 * docs/etmv2.md 3): a capture's bytes, in chunks of any size, cut into
 * its header and its samples (the framer, common/etm_port.c); the
 * configuration the header gives, checked against one given; the ATOM
 * run being filled; the output and the stop; the end, reset and life
 * cycle.  What a sample means is the protocol's sample hook.  The hot
 * loops (push, the ring's drain) are inline in port_internal.h; the rest
 * is here.
 */
#include <stdlib.h>
#include <string.h>

#include "port_internal.h"

int tb_port_emit_simple(tb_port_parser *c, tb_pkt_kind kind, uint64_t index, int err)
{
    tb_packet k;
    int rc;

    if ((rc = tb_port_flush_atom(c)) < 0)
        return rc;
    tb_port_pkt_init(c, &k, kind, index);
    k.err = err;
    return tb_port_out(c, &k);
}

/* After an error: nothing held is trusted (the protocol says how it
 * finds its way back). */
int tb_port_fail(tb_port_parser *c, tb_pkt_kind kind, uint64_t index, int err)
{
    int rc = tb_port_emit_simple(c, kind, index, err);

    c->qh = c->qn = 0;
    c->ops->forget(c);
    return rc;
}

static void set_qlimit(tb_port_parser *c)
{
    c->qlimit = c->ops->qlimit ? c->ops->qlimit(&c->cfg) : TB_PORT_QMAX;
}

static void enter(tb_port_parser *c, tb_packet_cb cb, void *ctx)
{
    c->cb = cb;
    c->ctx = ctx;
    c->emitted = 0;
}

/* The port's fields a given configuration and the capture's header must
 * agree on. */
#define SAME_PORT(a, b)                                                                  \
    ((a).port_width == (b).port_width && (a).minor == (b).minor &&                       \
     (a).cycle_accurate == (b).cycle_accurate && (a).ctxid_bytes == (b).ctxid_bytes &&   \
     (a).data_trace == (b).data_trace)

/* A complete capture header: its configuration, unless it contradicts
 * the one given (a sticky error either way). */
int tb_port_parser_header(tb_port_parser *c)
{
    tb_port_cfg n = c->cfg;
    int rc;

    if ((rc = c->ops->parse_header(c->in.hdr, &n)) < 0)
        return c->err = rc;
    if (c->cfg_given && !SAME_PORT(n, c->cfg))
        return c->err = TB_ERR_MISMATCH;
    c->cfg = n;
    c->have_cfg = true;
    set_qlimit(c);
    return 0;
}

/* push(): the callback, unless a format error stays. */
int tb_port_parser_enter(tb_port_parser *c, tb_packet_cb cb, void *ctx)
{
    if (c->err)
        return c->err;
    enter(c, cb, ctx);
    return 0;
}

int tb_port_parser_op_finish(void *p, tb_packet_cb cb, void *ctx)
{
    tb_port_parser *c = p;
    int rc = 0;

    if (!c)
        return TB_ERR_INVAL;
    enter(c, cb, ctx);
    if (c->in.hdr_n && !c->in.hdr_done) {
        rc = tb_port_emit_simple(c, TB_PKT_INCOMPLETE, 0, TB_ERR_TRUNCATED);
    } else {
        if (c->qn) /* the first status whose packets never came */
            rc = tb_port_fail(c, TB_PKT_INCOMPLETE, c->q[c->qh].index, TB_ERR_TRUNCATED);
        if (rc >= 0 && c->in.part_n)
            rc = tb_port_emit_simple(c, TB_PKT_INCOMPLETE, c->in.part_index, TB_ERR_TRUNCATED);
        if (rc >= 0)
            rc = tb_port_flush_atom(c);
    }
    c->in.part_n = 0;
    return rc < 0 ? rc : c->emitted;
}

/* Back to the start of a capture, keeping a given configuration. */
void tb_port_parser_op_reset(void *p)
{
    tb_port_parser *c = p;
    const tb_port_parser_ops *ops;
    tb_port_cfg cfg;
    size_t size;
    bool given;

    if (!c)
        return;
    ops = c->ops;
    size = c->size;
    cfg = c->cfg;
    given = c->cfg_given;
    memset(c, 0, size);
    c->ops = ops;
    c->size = size;
    c->cfg = cfg;
    c->cfg_given = given;
    c->have_cfg = given;
    set_qlimit(c);
    if (ops->reset)
        ops->reset(c);
}

void *tb_port_parser_new(size_t size, const tb_port_parser_ops *ops, const void *cfg,
                         size_t cfg_size)
{
    tb_port_parser *c;

    if (!(c = calloc(1, size)))
        return NULL;
    c->ops = ops;
    c->size = size;
    if (cfg) {
        memcpy(&c->cfg, cfg, cfg_size);
        c->cfg_given = c->have_cfg = true;
    } else {
        ops->config_init(&c->cfg);
    }
    set_qlimit(c);
    if (ops->reset)
        ops->reset(c);
    return c;
}

void tb_port_parser_op_destroy(void *p)
{
    free(p);
}
