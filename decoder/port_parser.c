/*
 * The trace-port parsers' shell (port_internal.h), once for ETMv1
 * (IHI0014Q chapter 5; docs/etmv1.md 3) and ETMv2 (chapter 6;
 * docs/etmv2.md 3): a capture's bytes, in chunks of any size, cut into
 * its header and its samples (the framer, common/etm_port.c); the
 * configuration the header gives, checked against one given; the ATOM
 * run being filled; the output and the stop; the end, reset and life
 * cycle.  What a sample means is the protocol's sample hook.
 */
#include <stdlib.h>
#include <string.h>

#include "port_internal.h"

int tb_port_out(tb_port_parser *c, const tb_packet *pkt)
{
    if (c->stop)
        return TB_ERR_STOPPED;
    c->emitted++;
    if (c->cb && c->cb(c->ctx, pkt)) {
        c->stop = true;
        return TB_ERR_STOPPED;
    }
    return 0;
}

void tb_port_pkt_init(const tb_port_parser *c, tb_packet *k, tb_pkt_kind kind, uint64_t index)
{
    memset(k, 0, sizeof *k);
    k->kind = kind;
    k->protocol = c->ops->protocol;
    k->index = index;
}

int tb_port_flush_atom(tb_port_parser *c)
{
    int rc;

    if (!c->atom.seq_len)
        return 0;
    rc = tb_port_out(c, &c->atom);
    tb_port_pkt_init(c, &c->atom, TB_PKT_ATOM, 0);
    return rc;
}

int tb_port_add_atom(tb_port_parser *c, char a, uint64_t index)
{
    if (!c->atom.seq_len)
        tb_port_pkt_init(c, &c->atom, TB_PKT_ATOM, index);
    c->atom.seq[c->atom.seq_len++] = a;
    if (a == 'W' || a == 'T')
        c->atom.w_count++;
    else
        c->atom.atom_count++;
    return c->atom.seq_len == sizeof c->atom.seq ? tb_port_flush_atom(c) : 0;
}

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

int tb_port_enqueue(tb_port_parser *c, uint8_t kind, uint64_t index, uint32_t ref)
{
    tb_port_qent *e;

    if (c->qn == c->qlimit) /* what it waits for never comes */
        return tb_port_fail(c, TB_PKT_BAD_SEQUENCE, c->q[c->qh].index, TB_ERR_LIMIT);
    e = &c->q[(c->qh + c->qn++) % TB_PORT_QMAX];
    e->kind = kind;
    e->index = index;
    e->ref = ref;
    e->nb = 0;
    return 0;
}

int tb_port_drain(tb_port_parser *c)
{
    static const char atom[4] = {'E', 'N', 'W', 'T'}; /* TB_PORT_Q_E.. */
    int rc;

    while (c->qn) {
        const tb_port_qent *e = &c->q[c->qh];

        if (e->kind >= TB_PORT_Q_OWN) {
            if ((rc = c->ops->own(c, e)) <= 0)
                return rc;
        } else if (e->kind == TB_PORT_Q_TRIG) {
            if ((rc = tb_port_emit_simple(c, TB_PKT_TRIGGER, e->index, 0)) < 0)
                return rc;
        } else if ((rc = tb_port_add_atom(c, atom[e->kind], e->index)) < 0) {
            return rc;
        }
        c->qh = (c->qh + 1) % TB_PORT_QMAX;
        c->qn--;
    }
    return 0;
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
static int header(tb_port_parser *c)
{
    tb_port_cfg n = c->cfg;
    int rc;

    if ((rc = c->ops->parse_header(c->in.hdr, &n)) < 0)
        return c->err = rc;
    if (c->cfg_given && (c->ops->protocol == TB_PROTO_ETMV1 ? !SAME_PORT(n.etmv1, c->cfg.etmv1)
                                                            : !SAME_PORT(n.etmv2, c->cfg.etmv2)))
        return c->err = TB_ERR_MISMATCH;
    c->cfg = n;
    c->have_cfg = true;
    set_qlimit(c);
    return 0;
}

int tb_port_parser_push_samples(void *p, const tb_etmv1_sample *s, size_t n, uint64_t first,
                                tb_packet_cb cb, void *ctx)
{
    tb_port_parser *c = p;
    size_t i;
    int rc;

    if (!c || (n && !s))
        return TB_ERR_INVAL;
    if (!c->have_cfg)
        return TB_ERR_CONFIG;
    enter(c, cb, ctx);
    for (i = 0; i < n; i++)
        if ((rc = c->ops->sample(c, &s[i], tb_etmv1_sample_index(first + i))) < 0)
            return rc;
    return c->emitted;
}

int tb_port_parser_op_push(void *p, const uint8_t *data, size_t len, uint64_t index,
                           tb_packet_cb cb, void *ctx)
{
    tb_port_parser *c = p;
    size_t i = 0;
    int rc, k;

    if (!c || (len && !data))
        return TB_ERR_INVAL;
    if (c->err)
        return c->err;
    enter(c, cb, ctx);
    c->in.pos = index;
    while ((k = tb_etm_port_framer_next(&c->in, data, len, &i)) != TB_ETM_PORT_NEED) {
        tb_etmv1_sample s;

        if (k == TB_ETM_PORT_HEADER) {
            if ((rc = header(c)) < 0)
                return rc;
            continue;
        }
        if (tb_etmv1_sample_unpack(c->in.part, &s) < 0)
            rc = tb_port_fail(c, TB_PKT_RESERVED, c->in.part_index, TB_ERR_FORMAT);
        else
            rc = c->ops->sample(c, &s, c->in.part_index);
        if (rc < 0)
            return rc;
    }
    return c->emitted;
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
