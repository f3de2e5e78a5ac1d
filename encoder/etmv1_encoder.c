/*
 * ETMv1 trace logic model (IHI0014Q chapter 5): exec records -> one
 * port sample per TRACECLK cycle.  Model choices are in docs/etmv1.md 4.
 *
 * Time: record r occupies max(its cycle stamp span, the cycles its
 * status needs) port cycles: its status first, then waits (a BE/BD
 * needs 3: itself and the two APO cycles, 5.6.1).  Trace-on and
 * overflow-restart markers (a BE with a full address, 5.8, 5.9) add 3
 * cycles before the instruction.  The FIFO takes a cycle's packets in
 * that cycle and the port sends from it in the same cycle (5.2):
 * a nibble (4-bit), a byte (8) or two bytes (16) a cycle, none in a
 * trigger cycle (5.3).  A WT cycle that sends nothing is TD (5.1).
 *
 * Data trace (ETMCR[3:2], docs/etmv1.md 9): a traced load/store reports
 * ID, or BD when it also wrote the PC, and puts its data packets in the
 * FIFO in its status cycle: the data address, then the values, then a
 * BD's branch address (5.4 Table 5.2, 5.7.3).
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/etmv1.h"

#define FIFO_CAP 4096u
#define SBUF 256u
#define SYNC_RETRY 512u /* 5.6.2: the ETM tries for 512 cycles */
#define XMAX 64u        /* transfers of one instruction (LDM of 16: 16) */
#define DMAX (5u + 4u * XMAX) /* its data packets: address + values */

typedef struct v1_xfer {
    uint32_t addr, value;
    uint8_t size;
} v1_xfer;

struct tb_etmv1_encoder {
    tb_etmv1_encoder_opts o;
    tb_etmv1_config cfg;
    tb_etmv1_sample_cb scb;
    void *sctx;
    tb_trace_sink bsink;
    void *bctx;
    bool hdr_done;
    tb_packet_cb pcb;
    void *pctx;
    tb_overflow_cb ocb;
    void *octx;
    int err;
    bool finished;
    tb_encoder_stats st;

    /* FIFO: bytes and "starts a branch address" flags (TRACESYNC). */
    uint8_t fifo[FIFO_CAP];
    uint8_t fsync[FIFO_CAP];
    unsigned head, count, depth;
    bool half;             /* 4-bit port: head's low nibble is out */

    tb_etmv1_sample buf[SBUF];
    unsigned nbuf;
    uint64_t nsamples;

    bool on;               /* trace enabled (ViewInst) and started */
    bool dropping;         /* FIFO overflowed, waiting for it to drain */
    bool last_traced;      /* the last instruction or exception was traced */
    uint32_t last_raw;     /* last branch address output */
    bool have_last;
    uint64_t since_full;   /* cycles since the last full address */
    bool ctx_due;
    uint32_t ctxid;
    bool trig_pending, trig_done;

    bool have_prev_cycle;
    uint64_t prev_cycle;
    bool have_pending;
    tb_exec_record pending;
    uint64_t pending_span;
    bool have_shown;
    uint64_t shown_seq;

    /* Data trace: the pending instruction's transfers (TB_REC_DATA). */
    v1_xfer xfer[XMAX];
    unsigned n_xfer;
    uint32_t last_daddr;   /* last data address output (5.7.3) */
    bool have_daddr;       /* else the next one goes in full (M9) */
};

/* ---- samples out ---- */

static int flush_samples(tb_etmv1_encoder *e)
{
    int rc = 0;

    if (e->bsink && !e->hdr_done) {
        uint8_t h[TB_ETMV1_HDR_BYTES];

        tb_etmv1_capture_header(&e->cfg, h);
        if ((rc = e->bsink(e->bctx, h, sizeof h)) != 0)
            return rc < 0 ? rc : TB_ERR_STOPPED;
        e->st.bytes += sizeof h;
        e->hdr_done = true;
    }
    if (!e->nbuf)
        return 0;
    if (e->bsink) {
        uint8_t b[SBUF * TB_ETMV1_SAMPLE_BYTES];
        unsigned i;

        for (i = 0; i < e->nbuf; i++)
            tb_etmv1_sample_pack(&e->buf[i], b + TB_ETMV1_SAMPLE_BYTES * i);
        rc = e->bsink(e->bctx, b, (size_t)e->nbuf * TB_ETMV1_SAMPLE_BYTES);
        e->st.bytes += (uint64_t)e->nbuf * TB_ETMV1_SAMPLE_BYTES;
    } else if (e->scb) {
        rc = e->scb(e->sctx, e->buf, e->nbuf);
    }
    e->nbuf = 0;
    if (rc != 0)
        return rc < 0 ? rc : TB_ERR_STOPPED;
    return 0;
}

static int put_sample(tb_etmv1_encoder *e, uint8_t ps, uint8_t sync, uint16_t pkt)
{
    tb_etmv1_sample *s = &e->buf[e->nbuf++];

    s->pipestat = ps;
    s->tracesync = sync;
    s->tracepkt = pkt;
    e->nsamples++;
    return e->nbuf == SBUF ? flush_samples(e) : 0;
}

static uint8_t fifo_pop(tb_etmv1_encoder *e, bool *sync)
{
    uint8_t b = e->fifo[e->head];

    *sync = e->fsync[e->head];
    e->head = (e->head + 1) % FIFO_CAP;
    e->count--;
    return b;
}

/* One port cycle with PIPESTAT ps; apo: an APO cycle (never TD);
 * trig: may carry the pending trigger. */
static int port_cycle(tb_etmv1_encoder *e, uint8_t ps, bool apo, bool trig)
{
    uint16_t pkt = 0;
    uint8_t sync = 0;
    bool sent = false, s0, s1;

    if (e->on && !e->dropping)
        e->since_full++;
    if (trig && e->trig_pending) { /* 5.4: status on TRACEPKT[2:0] */
        e->trig_pending = false;
        return put_sample(e, TB_ETMV1_TR, 0, ps & 7);
    }
    if (e->count) {
        sent = true;
        if (e->cfg.port_width == 4) {
            uint8_t b = e->fifo[e->head];

            if (!e->half) {
                pkt = b & 0xF;
                sync = e->fsync[e->head];
                e->half = true;
            } else {
                pkt = b >> 4;
                fifo_pop(e, &s0);
                e->half = false;
            }
        } else {
            pkt = fifo_pop(e, &s0);
            sync = s0;
            /* 16-bit: a second byte, unless it starts an address (which
             * goes on [7:0]: unverified U13). */
            if (e->cfg.port_width == 16 && e->count && !e->fsync[e->head])
                pkt |= (uint16_t)(fifo_pop(e, &s1) << 8);
        }
    }
    if (!sent && ps == TB_ETMV1_WT && !apo) {
        /* TD; TRACEPKT[0] = TraceEnable in CA mode (5.10). */
        bool enabled = e->on || e->dropping;

        if (!(e->cfg.cycle_accurate && enabled) && !e->o.keep_idle)
            return 0; /* the capture drops it */
        return put_sample(e, TB_ETMV1_TD, 0,
                          (uint16_t)(e->cfg.cycle_accurate && enabled));
    }
    return put_sample(e, ps, sync, pkt);
}

static int waits(tb_etmv1_encoder *e, uint64_t n)
{
    int rc;

    while (n--)
        if ((rc = port_cycle(e, TB_ETMV1_WT, false, true)) < 0)
            return rc;
    return 0;
}

/* Address starts still in the FIFO: the APO of a branch now (5.6.1). */
static unsigned pending_starts(const tb_etmv1_encoder *e)
{
    unsigned i, n = 0;

    for (i = 0; i < e->count; i++)
        if (e->fsync[(e->head + i) % FIFO_CAP] && !(i == 0 && e->half))
            n++;
    return n;
}

static void lost(tb_etmv1_encoder *e, unsigned bytes)
{
    if (!e->dropping) {
        e->st.overflows++;
        if (e->ocb)
            e->ocb(e->octx, e->have_shown, e->shown_seq);
    }
    e->dropping = true;
    e->st.dropped_bytes += bytes;
}

/* Puts n bytes in the FIFO, none starting an address. */
static void fifo_put(tb_etmv1_encoder *e, const uint8_t *b, unsigned n)
{
    unsigned i;

    for (i = 0; i < n; i++) {
        unsigned at = (e->head + e->count) % FIFO_CAP;

        e->fifo[at] = b[i];
        e->fsync[at] = 0;
        e->count++;
    }
}

/* The data packets of the pending instruction (5.4 Table 5.2, 5.7.3):
 * with address trace the address of its first transfer (1-5 packets,
 * 7 bits each, compressed against the last data address output, a full
 * one with reason b000; no TRACESYNC), then with value trace every
 * transfer's value, a packet a byte (byte 1, halfword 2, word 4, an LSM
 * 4 a register), LSB first (U17).  Returns the count. */
static unsigned data_packets(const tb_etmv1_encoder *e, uint8_t *b)
{
    unsigned n = 0, i, k;

    if (e->cfg.data_trace & 2)
        n = (unsigned)tb_etmv1_addr_encode(e->xfer[0].addr, e->last_daddr,
                                           !e->have_daddr, 0, b);
    if (e->cfg.data_trace & 1)
        for (i = 0; i < e->n_xfer; i++)
            for (k = 0; k < e->xfer[i].size; k++)
                b[n++] = (uint8_t)(e->xfer[i].value >> (8 * k));
    return n;
}

/* After data packets went into the FIFO. */
static void data_sent(tb_etmv1_encoder *e, unsigned dn)
{
    if (!dn)
        return;
    if (e->cfg.data_trace & 2) {
        e->last_daddr = e->xfer[0].addr;
        e->have_daddr = true;
    }
    e->st.packets++;
}

/* A BE cycle (status ps) with the address raw and its two APO cycles;
 * a BD's dn data packets db go into the FIFO before the address (5.4);
 * with db NULL, dn bytes are only kept free (a marker's instruction).
 * *ok false: the FIFO overflowed, nothing was sent and no cycle used. */
static int branch_cycles(tb_etmv1_encoder *e, uint8_t ps, uint32_t raw,
                         uint8_t reason, bool full, bool trig, const uint8_t *db,
                         unsigned dn, bool *ok)
{
    uint8_t b[9];
    unsigned n, i, apo;
    bool periodic = e->o.base.sync_period &&
                    e->since_full >= e->o.base.sync_period;
    int rc;

    *ok = false;
    if (e->ctx_due || periodic) {
        full = true;
        if (!reason) /* 5.6.2: b100 from v1.2; CID-forced: U16 */
            reason = e->cfg.minor >= 2 ? TB_ETMV1_R_PERIODIC : 0;
    }
    n = (unsigned)tb_etmv1_addr_encode(raw, e->last_raw, full || !e->have_last,
                                       reason, b);
    if (n == 5 && reason && e->cfg.ctxid_bytes) /* 5.6.3 */
        for (i = 0; i < e->cfg.ctxid_bytes; i++)
            b[n++] = (uint8_t)(e->ctxid >> (8 * i)); /* LSB first: U7 */
    apo = pending_starts(e);
    if (apo > 14 || e->count + dn + n > e->depth) {
        lost(e, dn + n);
        return 0;
    }
    if (db) {
        fifo_put(e, db, dn);
        data_sent(e, dn);
    }
    for (i = 0; i < n; i++) {
        unsigned at = (e->head + e->count) % FIFO_CAP;

        e->fifo[at] = b[i];
        e->fsync[at] = i == 0;
        e->count++;
    }
    e->last_raw = raw;
    e->have_last = true;
    if (n >= 5) {
        e->since_full = 0;
        if (reason)
            e->ctx_due = false;
    }
    e->st.packets++;
    if (e->pcb) {
        tb_packet p;

        memset(&p, 0, sizeof p);
        p.kind = TB_PKT_BRANCH;
        p.protocol = TB_PROTO_ETMV1;
        p.index = tb_etmv1_sample_index(e->nsamples);
        p.size = (uint8_t)n;
        memcpy(p.bytes, b, n);
        p.addr = raw & ((raw & 1) ? ~1u : ~3u);
        p.isa = (raw & 1) ? TB_ISA_THUMB : TB_ISA_ARM;
        p.addr_bits = (uint8_t)(n >= 5 ? 32 : 7 * n);
        p.addr_known = true;
        p.reason = reason;
        p.phdr_format = ps;
        p.has_ctxid = n > 5;
        p.context_id = e->ctxid;
        if (e->pcb(e->pctx, &p))
            return TB_ERR_STOPPED;
    }
    *ok = true;
    if ((rc = port_cycle(e, ps, false, trig)) < 0 ||
        (rc = port_cycle(e, (uint8_t)(apo & 3), true, false)) < 0 ||
        (rc = port_cycle(e, (uint8_t)((apo >> 2) & 3), true, false)) < 0)
        return rc;
    return 0;
}

static bool is_vector(const tb_etmv1_encoder *e, uint32_t v)
{
    uint32_t off = v & 0x1F;

    return ((v & ~0x1Fu) == e->cfg.vector_base || (v & ~0x1Fu) == 0xFFFF0000u) &&
           off != 0x14 && !(off & 3);
}

/* Cancel modes of an instruction record. */
enum { RUN = 0, DROPPED = 1, ABORTED = 2 };

static int do_insn(tb_etmv1_encoder *e, const tb_exec_record *r, uint64_t span,
                   int mode, const tb_exec_record *exc)
{
    uint8_t fl = r->u.insn.flags, wp = r->u.insn.wp_class;
    bool failed = fl & TB_INSN_COND_FAILED;
    bool indirect = wp == TB_WP_INDIRECT || wp == TB_WP_INDIRECT_LINK;
    bool direct = (wp == TB_WP_DIRECT || wp == TB_WP_DIRECT_LINK) &&
                  (fl & TB_INSN_TAKEN);
    bool periodic = e->o.base.sync_period &&
                    e->since_full >= e->o.base.sync_period;
    /* Forcing (U16, a model choice): only an instruction whose cycle span
     * holds a BE's three cycles, so port time stays the core's (CA). */
    bool forced = periodic && e->since_full >= e->o.base.sync_period + SYNC_RETRY &&
                  span >= 3;
    bool ok, be;
    uint64_t used;
    uint8_t db[DMAX];
    unsigned dn;
    /* Data: a load/store that passed its condition and completed (an
     * aborted one has no transfers, sim.h), ETMCR[3:2] != 0. */
    bool data = e->cfg.data_trace && e->n_xfer && mode == RUN && !failed;
    int rc;

    e->st.insns++;
    if (e->o.base.trigger_at && !e->trig_done && r->seq >= e->o.base.trigger_at) {
        e->trig_done = true;
        e->trig_pending = true;
    }
    e->last_traced = false;
    if (!tb_encoder_in_filter(&e->o.base, r->u.insn.addr)) {
        e->on = false; /* 5.8: WT while the FIFO drains, then TD */
        return waits(e, span);
    }
    if (e->dropping && e->count)
        return waits(e, span); /* 5.9: WT while draining */
    if (!e->on || e->dropping) {
        uint8_t reason = e->dropping ? TB_ETMV1_R_OVERFLOW : TB_ETMV1_R_TRACE_ON;

        /* A full data address first (M9).  With data trace the marker
         * goes only with room for its instruction's packets too (data,
         * a branch address), else they overflow at once after a marker
         * that names the instruction (M8). */
        e->have_daddr = false;
        dn = data ? data_packets(e, db) : 0;
        if (e->cfg.data_trace && !failed && mode != DROPPED &&
            (mode == ABORTED || indirect || direct))
            dn += 5u + e->cfg.ctxid_bytes;
        e->on = true;
        e->dropping = false;
        if ((rc = branch_cycles(e, TB_ETMV1_BE,
                                tb_etmv1_addr_raw(r->u.insn.addr, (tb_isa)r->u.insn.isa),
                                reason, true, false, NULL, dn, &ok)) < 0)
            return rc;
        if (!ok)
            return waits(e, span);
        e->st.isyncs++;
    }
    if (mode == DROPPED)
        return waits(e, span);
    dn = data ? data_packets(e, db) : 0;
    e->st.traced++;
    e->last_traced = true;
    be = mode == ABORTED || (!failed && (indirect || forced ||
                                         (direct && (e->cfg.branch_output || e->ctx_due))));
    if (be) {
        uint32_t raw = mode == ABORTED
                           ? tb_etmv1_addr_raw(exc->u.exc.vector, (tb_isa)exc->u.exc.isa)
                           : tb_etmv1_addr_raw(r->u.insn.next_addr,
                                               (tb_isa)r->u.insn.next_isa);

        if ((rc = branch_cycles(e, dn ? TB_ETMV1_BD : TB_ETMV1_BE, raw, 0, false, true,
                                db, dn, &ok)) < 0)
            return rc;
        if (!ok) {
            e->last_traced = false;
            return waits(e, span);
        }
        used = 3;
    } else {
        if (dn && e->count + dn > e->depth) {
            /* 5.9: its data does not fit; like a BE's address (M8) the
             * instruction is lost with it. */
            e->last_traced = false;
            lost(e, dn);
            return waits(e, span);
        }
        fifo_put(e, db, dn);
        data_sent(e, dn);
        if ((rc = port_cycle(e, failed ? TB_ETMV1_IN : dn ? TB_ETMV1_ID : TB_ETMV1_IE,
                             false, true)) < 0)
            return rc;
        used = 1;
    }
    /* An aborted load/store's BE is its exception's (M3): the decoder
     * shows it cancelled, never executed, so it is not the newest
     * instruction shown (tb_overflow_cb: an overflow after it must not
     * read as a lost cancel). */
    if (mode != ABORTED) {
        e->have_shown = true;
        e->shown_seq = r->seq;
    }
    return waits(e, span > used ? span - used : 0);
}

static int do_exc(tb_etmv1_encoder *e, const tb_exec_record *r, uint64_t span,
                  bool traced)
{
    bool ok;
    int rc;

    if (!traced || !e->on || e->dropping)
        return waits(e, span);
    if (!is_vector(e, r->u.exc.vector))
        return TB_ERR_CONFIG; /* the decoder could not tell it (docs 4) */
    if ((rc = branch_cycles(e, TB_ETMV1_BE,
                            tb_etmv1_addr_raw(r->u.exc.vector, (tb_isa)r->u.exc.isa),
                            0, false, true, NULL, 0, &ok)) < 0)
        return rc;
    /* Trace is on at the vector: an exception taken there before its
     * first instruction (an FIQ as an undefined instruction enters Undef
     * mode, which masks IRQ only) is traced too, with a BE of its own
     * (5.7.1; docs/etmv1.md 4). */
    e->last_traced = ok;
    return waits(e, ok ? (span > 3 ? span - 3 : 0) : span);
}

static int flush_pending(tb_etmv1_encoder *e, int mode, const tb_exec_record *exc)
{
    int rc;

    if (!e->have_pending)
        return 0;
    e->have_pending = false;
    rc = do_insn(e, &e->pending, e->pending_span, mode, exc);
    e->n_xfer = 0;
    return rc;
}

static int drain(tb_etmv1_encoder *e)
{
    int rc;

    while (e->count)
        if ((rc = port_cycle(e, TB_ETMV1_WT, false, false)) < 0)
            return rc;
    return flush_samples(e);
}

int tb_etmv1_encoder_push(tb_etmv1_encoder *e, const tb_exec_record *r)
{
    uint64_t span;
    int rc = 0;

    if (!e || !r)
        return TB_ERR_INVAL;
    if (e->err)
        return e->err;
    if (e->finished)
        return TB_ERR_STATE;
    e->st.records++;
    span = e->have_prev_cycle && r->cycle > e->prev_cycle ? r->cycle - e->prev_cycle : 1;
    if (r->kind != TB_REC_END) {
        e->prev_cycle = r->cycle;
        e->have_prev_cycle = true;
    }
    switch (r->kind) {
    case TB_REC_INSN:
        rc = flush_pending(e, RUN, NULL);
        e->pending = *r;
        e->pending_span = span;
        e->have_pending = true;
        break;
    case TB_REC_EXCEPTION: {
        bool abort = r->u.exc.cancelled && r->u.exc.kind == TB_EXC_DATA_ABORT;
        bool had = e->have_pending;
        uint64_t ispan = e->pending_span;

        if (abort && had && e->on && !e->dropping &&
            !is_vector(e, r->u.exc.vector)) {
            rc = TB_ERR_CONFIG;
            break;
        }
        /* 5.7.1: an aborted load/store reports the branch itself;
         * another cancelled instruction reports nothing (docs 4). */
        rc = flush_pending(e, abort ? ABORTED : r->u.exc.cancelled ? DROPPED : RUN, r);
        if (rc >= 0 && abort && had) {
            /* Its BE and APO cycles are the refill from the vector, the
             * exception entry's time (5.6.1): what they took beyond the
             * aborted load/store's span comes out of the exception's
             * (docs/etmv1.md 6, M6), so port time stays the core's. */
            uint64_t over = e->last_traced && ispan < 3 ? 3 - ispan : 0;

            rc = waits(e, span > over ? span - over : 0);
        } else if (rc >= 0) {
            rc = do_exc(e, r, span, e->last_traced || (r->u.exc.cancelled && had && e->on));
        }
        break;
    }
    case TB_REC_CONTEXT:
        rc = flush_pending(e, RUN, NULL);
        if (r->u.ctx.context_id != e->ctxid && e->cfg.ctxid_bytes)
            e->ctx_due = true; /* 5.6.3: out on the next branch */
        e->ctxid = r->u.ctx.context_id;
        break;
    case TB_REC_END:
        rc = tb_etmv1_encoder_finish(e);
        break;
    case TB_REC_DATA:
        /* A transfer of the pending instruction (sim.h: right after its
         * record); ignored without data trace, so instruction trace is
         * the same with or without data records. */
        if (!e->cfg.data_trace)
            break;
        if (!e->have_pending || r->u.data.insn_addr != e->pending.u.insn.addr ||
            (r->u.data.size != 1 && r->u.data.size != 2 && r->u.data.size != 4)) {
            rc = TB_ERR_INVAL;
            break;
        }
        if (e->n_xfer >= XMAX) {
            rc = TB_ERR_LIMIT;
            break;
        }
        e->xfer[e->n_xfer].addr = r->u.data.addr;
        e->xfer[e->n_xfer].value = r->u.data.value;
        e->xfer[e->n_xfer++].size = r->u.data.size;
        break;
    default:
        break;
    }
    if (rc < 0)
        e->err = rc;
    return rc < 0 ? rc : 0;
}

int tb_etmv1_encoder_finish(tb_etmv1_encoder *e)
{
    int rc;

    if (!e)
        return TB_ERR_INVAL;
    if (e->err)
        return e->err;
    if (e->finished)
        return 0;
    e->finished = true;
    if ((rc = flush_pending(e, RUN, NULL)) < 0 || (rc = drain(e)) < 0)
        return e->err = rc;
    return 0;
}

void tb_etmv1_encoder_opts_init(tb_etmv1_encoder_opts *o)
{
    memset(o, 0, sizeof *o);
    o->base.protocol = TB_PROTO_ETMV1;
    o->base.arch_minor = 3;
    o->base.sync_period = 1024;
    o->port_width = 8;
}

void tb_etmv1_encoder_opts_from(tb_etmv1_encoder_opts *v, const tb_encoder_opts *o)
{
    tb_etmv1_encoder_opts_init(v);
    v->base = *o;
    v->base.protocol = TB_PROTO_ETMV1;
    v->port_width = o->port_width;
    v->vector_base = o->vector_base;
    v->keep_idle = o->keep_idle;
}

int tb_etmv1_encoder_config(const tb_etmv1_encoder_opts *o, tb_etmv1_config *c)
{
    tb_etmv1_config_init(c);
    c->minor = o->base.arch_minor;
    c->port_width = o->port_width;
    c->cycle_accurate = o->base.cycle_accurate;
    c->branch_output = o->base.branch_broadcast;
    c->ctxid_bytes = o->base.ctxid_bytes;
    c->vector_base = o->vector_base;
    c->data_trace = o->base.data_trace;
    if (o->base.fifo_depth > FIFO_CAP)
        return TB_ERR_CONFIG;
    return tb_etmv1_config_check(c);
}

static tb_etmv1_encoder *make(const tb_etmv1_encoder_opts *o)
{
    tb_etmv1_encoder *e;
    tb_etmv1_config c;

    if (!o || tb_etmv1_encoder_config(o, &c) < 0)
        return NULL;
    if (!(e = calloc(1, sizeof *e)))
        return NULL;
    e->o = *o;
    e->cfg = c;
    e->depth = o->base.fifo_depth ? o->base.fifo_depth : FIFO_CAP;
    return e;
}

tb_etmv1_encoder *tb_etmv1_encoder_new(const tb_etmv1_encoder_opts *o,
                                       tb_etmv1_sample_cb cb, void *ctx)
{
    tb_etmv1_encoder *e = make(o);

    if (e) {
        e->scb = cb;
        e->sctx = ctx;
    }
    return e;
}

tb_etmv1_encoder *tb_etmv1_encoder_new_bytes(const tb_etmv1_encoder_opts *o,
                                             tb_trace_sink sink, void *ctx)
{
    tb_etmv1_encoder *e;

    if (!sink || !(e = make(o)))
        return NULL;
    e->bsink = sink;
    e->bctx = ctx;
    return e;
}

void tb_etmv1_encoder_free(tb_etmv1_encoder *e)
{
    free(e);
}

void tb_etmv1_encoder_set_packet_cb(tb_etmv1_encoder *e, tb_packet_cb cb, void *ctx)
{
    if (e) {
        e->pcb = cb;
        e->pctx = ctx;
    }
}

void tb_etmv1_encoder_set_overflow_cb(tb_etmv1_encoder *e, tb_overflow_cb cb,
                                      void *ctx)
{
    if (e) {
        e->ocb = cb;
        e->octx = ctx;
    }
}

const tb_encoder_stats *tb_etmv1_encoder_get_stats(const tb_etmv1_encoder *e)
{
    return e ? &e->st : NULL;
}

uint64_t tb_etmv1_encoder_cycles(const tb_etmv1_encoder *e)
{
    return e ? e->nsamples : 0;
}
