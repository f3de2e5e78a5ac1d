/*
 * The trace-port model core of ETMv1 and ETMv2 (IHI0014Q chapters 5 and
 * 6; docs/etmv1.md 4, docs/etmv2.md 4): one port sample per TRACECLK
 * cycle, buffered and written as capture bytes (etm_port.h) or handed to
 * a sample callback; the FIFO, which takes a cycle's packets in that
 * cycle and sends from it in the same cycle, a nibble (4-bit port), a
 * byte (8) or two bytes (16) a cycle, none in a trigger cycle (5.3,
 * 6.1.7); overflow (5.9, 6.10); the record loop.  Record r occupies
 * max(its cycle stamp span, the cycles its statuses need) port cycles;
 * what a record's statuses and packets are is the protocol's (port_ops).
 */
#include "port_model.h"

void tb_port_init(port_model *m, const port_ops *ops, const tb_encoder_opts *base,
                  bool keep_idle, uint8_t port_width, bool cycle_accurate,
                  uint8_t ctxid_bytes, uint8_t data_trace, uint32_t vector_base)
{
    m->ops = ops;
    m->base = *base;
    m->keep_idle = keep_idle;
    m->port_width = port_width;
    m->cycle_accurate = cycle_accurate;
    m->ctxid_bytes = ctxid_bytes;
    m->data_trace = data_trace;
    m->vector_base = vector_base;
    m->depth = base->fifo_depth ? base->fifo_depth : PORT_FIFO_CAP;
}

port_model *tb_port_out(port_model *m, tb_etmv1_sample_cb cb, void *cctx,
                        tb_trace_sink sink, void *sctx)
{
    if (m) {
        m->scb = cb;
        m->sctx = cctx;
        m->bsink = sink;
        m->bctx = sctx;
    }
    return m;
}

/* ---- samples out ---- */

static int flush_samples(port_model *m)
{
    int rc = 0;

    if (m->bsink && !m->hdr_done) {
        if ((rc = m->bsink(m->bctx, m->hdr, sizeof m->hdr)) != 0)
            return rc < 0 ? rc : TB_ERR_STOPPED;
        m->st.bytes += sizeof m->hdr;
        m->hdr_done = true;
    }
    if (!m->nbuf)
        return 0;
    if (m->bsink) {
        uint8_t b[PORT_SBUF * TB_ETMV1_SAMPLE_BYTES];
        unsigned i;

        for (i = 0; i < m->nbuf; i++)
            tb_etmv1_sample_pack(&m->buf[i], b + TB_ETMV1_SAMPLE_BYTES * i);
        rc = m->bsink(m->bctx, b, (size_t)m->nbuf * TB_ETMV1_SAMPLE_BYTES);
        m->st.bytes += (uint64_t)m->nbuf * TB_ETMV1_SAMPLE_BYTES;
    } else if (m->scb) {
        rc = m->scb(m->sctx, m->buf, m->nbuf);
    }
    m->nbuf = 0;
    if (rc != 0)
        return rc < 0 ? rc : TB_ERR_STOPPED;
    return 0;
}

int tb_port_put(port_model *m, uint8_t ps, uint8_t sync, uint16_t pkt)
{
    tb_etmv1_sample *s = &m->buf[m->nbuf++];

    s->pipestat = ps;
    s->tracesync = sync;
    s->tracepkt = pkt;
    m->nsamples++;
    return m->nbuf == PORT_SBUF ? flush_samples(m) : 0;
}

/* ---- the FIFO and the port ---- */

static uint8_t fifo_pop(port_model *m)
{
    uint8_t b = m->fifo[m->head];

    m->head = (m->head + 1) % PORT_FIFO_CAP;
    m->count--;
    return b;
}

void tb_port_fifo_put(port_model *m, const uint8_t *b, unsigned n)
{
    unsigned i;

    for (i = 0; i < n; i++) {
        unsigned at = (m->head + m->count) % PORT_FIFO_CAP;

        m->fifo[at] = b[i];
        m->fsync[at] = 0;
        m->count++;
    }
}

/* trigdelay=N: whether the delayed trigger goes in this cycle.  The
 * count starts at the first cycle that could carry the trigger (the
 * status of instruction trigger_at) and runs over every port cycle, the
 * capture's dropped TD cycles too; at zero the first cycle that may
 * carry it does, an APO cycle included (5.6.1: the APO bits then go on
 * TRACEPKT[2:0], 5.4). */
static bool trig_delayed(port_model *m, unsigned flags)
{
    if (!m->trig_counting) {
        if (flags & PORT_TRIG) {
            m->trig_counting = true;
            m->trig_wait = m->base.trigger_delay;
        }
        return false;
    }
    if (m->trig_wait)
        m->trig_wait--;
    return m->trig_wait == 0 && (flags & (PORT_TRIG | PORT_APO));
}

int tb_port_cycle(port_model *m, uint8_t ps, unsigned flags)
{
    uint16_t pkt = 0;
    uint8_t sync = 0;
    bool ca;

    if (m->on && !m->dropping)
        m->since_sync++;
    if (m->trig_pending && (m->base.trigger_delay ? trig_delayed(m, flags)
                                                  : (flags & PORT_TRIG) != 0)) {
        /* 5.4, 6.1.7 */
        m->trig_pending = false;
        return tb_port_put(m, m->ops->tr, 0, ps & m->ops->tr_mask);
    }
    if (m->hold) {
        m->hold = false;
        return tb_port_put(m, ps, 0, m->hold_pkt);
    }
    if (m->count) {
        if (m->port_width == 4) {
            uint8_t b = m->fifo[m->head];

            if (!m->half) {
                pkt = b & 0xF;
                sync = m->fsync[m->head];
                m->half = true;
            } else {
                pkt = b >> 4;
                fifo_pop(m);
                m->half = false;
            }
        } else {
            sync = m->fsync[m->head];
            pkt = fifo_pop(m);
            /* 16-bit: a second byte, unless it starts an address (which
             * goes on [7:0]: ETMv1's unverified U13; ETMv2 sends as soon
             * as possible, 6.3). */
            if (m->port_width == 16 && m->count && !m->fsync[m->head])
                pkt |= (uint16_t)(fifo_pop(m) << 8);
        }
        return tb_port_put(m, ps, sync, pkt);
    }
    if (ps != m->ops->wt || (flags & PORT_APO))
        return tb_port_put(m, ps, 0, 0);
    /* Nothing sent in a WT cycle: TD (5.1, 6.1.6). */
    ca = m->cycle_accurate && (!m->ops->td_enable || m->on || m->dropping);
    if (!ca && !m->keep_idle)
        return 0; /* the capture drops it */
    return tb_port_put(m, m->ops->td, 0, (uint16_t)(m->ops->td_enable && ca));
}

int tb_port_waits(port_model *m, uint64_t n)
{
    int rc;

    while (n--)
        if ((rc = tb_port_cycle(m, m->ops->wt, PORT_TRIG)) < 0)
            return rc;
    return 0;
}

static int drain(port_model *m)
{
    int rc;

    while (m->count || m->hold)
        if ((rc = tb_port_cycle(m, m->ops->wt, 0)) < 0)
            return rc;
    return flush_samples(m);
}

void tb_port_pkt(const port_model *m, tb_packet *p, tb_pkt_kind k, const uint8_t *b,
                 unsigned n)
{
    memset(p, 0, sizeof *p);
    p->kind = k;
    p->protocol = m->ops->proto;
    p->index = tb_etmv1_sample_index(m->nsamples);
    p->size = (uint8_t)n;
    memcpy(p->bytes, b, n);
}

void tb_port_lost(port_model *m, unsigned bytes)
{
    if (!m->dropping) {
        m->st.overflows++;
        if (m->ocb)
            m->ocb(m->octx, m->have_shown, m->shown_seq);
    }
    m->dropping = true;
    m->st.dropped_bytes += bytes;
}

bool tb_port_is_vector(const port_model *m, uint32_t v)
{
    uint32_t off = v & 0x1F;

    return ((v & ~0x1Fu) == m->vector_base || (v & ~0x1Fu) == 0xFFFF0000u) &&
           off != 0x14 && !(off & 3);
}

void tb_port_trigger_check(port_model *m, const tb_exec_record *r)
{
    if (m->base.trigger_at && !m->trig_done && r->seq >= m->base.trigger_at) {
        m->trig_done = true;
        m->trig_pending = true;
    }
}

uint8_t tb_port_on_reason(port_model *m)
{
    uint8_t r = m->dropping ? 2 : m->debug_exit ? 3 : 1;

    m->debug_exit = false;
    return r;
}

/* ---- records ---- */

/* A halt into Debug state (docs/debug-halt.md): the ETMv1 and ETMv2
 * ports trace no entry (IHI0014Q chapters 5 and 6 name none: [U]).  The
 * instruction before it goes out as it ran, then trace is off while the
 * core is halted (WT while the FIFO drains, then TD, as when trace is
 * disabled: 5.8, 6.9.2), and comes back at the restart with the reason
 * "exit from debug state" (ETMv1 b011, etmv1-v2 5.2 [U12]; ETMv2 TFO
 * reason 11, 6.5.4 Table 6.7), unless the FIFO still drops (the overflow
 * restart, as ETMv3's model).  The reason is only used when the first
 * instruction after the exit is traced (ETMv3's rule, IHI0014Q 7.10.5
 * Table 7.21, taken for the ports [U]): one outside the filter spends it
 * (tb_port_push). */
static int debug_halt(port_model *m, uint64_t span)
{
    int rc = m->ops->flush(m, false);

    if (rc < 0)
        return rc;
    m->on = false;
    m->last_traced = false;
    m->debug_exit = !m->dropping;
    return tb_port_waits(m, span);
}

int tb_port_push(port_model *m, const tb_exec_record *r)
{
    uint64_t span;
    int rc = 0;

    if (!m || !r)
        return TB_ERR_INVAL;
    if (m->err)
        return m->err;
    if (m->finished)
        return TB_ERR_STATE;
    m->st.records++;
    span = m->have_prev_cycle && r->cycle > m->prev_cycle ? r->cycle - m->prev_cycle : 1;
    if (r->kind != TB_REC_END) {
        m->prev_cycle = r->cycle;
        m->have_prev_cycle = true;
    }
    switch (r->kind) {
    case TB_REC_INSN:
        rc = m->ops->flush(m, true);
        if (m->debug_exit && !tb_encoder_in_filter(&m->base, r->u.insn.addr))
            m->debug_exit = false; /* the restart is not traced */
        m->pending = *r;
        m->pending_span = span;
        m->have_pending = true;
        m->n_xfer = 0;
        break;
    case TB_REC_DATA:
        /* A transfer of the pending instruction (sim.h: right after its
         * record); ignored without data trace, so instruction trace is
         * the same with or without data records. */
        if (!m->data_trace)
            break;
        if (!m->have_pending || r->u.data.insn_addr != m->pending.u.insn.addr ||
            (r->u.data.size != 1 && r->u.data.size != 2 && r->u.data.size != 4)) {
            rc = TB_ERR_INVAL;
            break;
        }
        if (m->n_xfer >= m->ops->xmax) {
            rc = TB_ERR_LIMIT;
            break;
        }
        m->xfer[m->n_xfer].addr = r->u.data.addr;
        m->xfer[m->n_xfer].value = r->u.data.value;
        m->xfer[m->n_xfer].store = (r->u.data.flags & TB_DATA_STORE) != 0;
        m->xfer[m->n_xfer++].size = r->u.data.size;
        break;
    case TB_REC_EXCEPTION:
        if (r->u.exc.kind == TB_EXC_DEBUG_HALT)
            rc = debug_halt(m, span);
        else
            rc = m->ops->exception(m, r, span);
        break;
    case TB_REC_CONTEXT:
        rc = m->ops->flush(m, false);
        if (r->u.ctx.context_id != m->ctxid && m->ctxid_bytes)
            m->ctx_due = true; /* 5.6.3, U17: out with the next branch/status */
        m->ctxid = r->u.ctx.context_id;
        break;
    case TB_REC_END:
        rc = tb_port_finish(m);
        break;
    default:
        break;
    }
    if (rc < 0)
        m->err = rc;
    return rc < 0 ? rc : 0;
}

int tb_port_finish(port_model *m)
{
    int rc;

    if (!m)
        return TB_ERR_INVAL;
    if (m->err)
        return m->err;
    if (m->finished)
        return 0;
    m->finished = true;
    if ((rc = m->ops->flush(m, false)) < 0 || (m->ops->end && (rc = m->ops->end(m)) < 0) ||
        (rc = drain(m)) < 0)
        return m->err = rc;
    return 0;
}
