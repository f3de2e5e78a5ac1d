/*
 * ETMv2 trace logic model (IHI0014Q chapter 6): exec records -> one port
 * sample per TRACECLK cycle.  Model choices: docs/etmv2.md 4; every
 * unverified value comes from tracebench/etmv2.h (U1..U18).
 *
 * As the ETMv1 model (etmv1_encoder.c): record r occupies max(its cycle
 * stamp span, what its statuses need) port cycles, its status first, then
 * waits; the FIFO takes a cycle's packets in that cycle and sends from it
 * in the same cycle, a nibble, byte or two bytes a cycle (6.3 [S]: as
 * soon as possible, no special 16-bit rules).  ETMv2 differs: packets
 * belong to the status of the cycle that placed them (D statuses, 6.1.3);
 * a branch address is the last packet of its cycle (6.4.1); there is no
 * TRACESYNC and no APO: synchronisation is the TFO (6.5): a TD cycle with
 * TRACEPKT[0] = 1 whose TRACEPKT shows how many FIFO bytes come before
 * the TFO packet (header, context ID, 4-byte address) in the FIFO.
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/etm_port.h"
#include "tracebench/etmv2.h"
#include "tracebench/pkt_codec.h"

#define FIFO_CAP 4096u
#define SBUF 256u
/* Transfers of one instruction: an LDM/STM of 16 registers. */
#define XMAX 16u
/* One status's packets: a context ID (5), the data packets of 16
 * transfers with address and value (1 + 5 + 4 + 15 * 5) and a branch
 * address (5). */
#define PMAX 100u

typedef struct v2_xfer {
    uint32_t addr, value;
    uint8_t size;
} v2_xfer;

unsigned tb_etmv2_tfo_max(unsigned port_width)
{
    return port_width == 4 ? TB_ETMV2_TFO_MAX4
           : port_width == 8 ? TB_ETMV2_TFO_MAX8 : TB_ETMV2_TFO_MAX16;
}

/* ---- the model ---- */

struct tb_etmv2_encoder {
    tb_etmv2_encoder_opts o;
    tb_etmv2_config cfg;
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

    uint8_t fifo[FIFO_CAP];
    unsigned head, count, depth;
    bool half;              /* 4-bit port: head's low nibble is out */
    bool tfo_hi;            /* 4-bit port: the TFO's second half is due */
    uint8_t tfo_hi_val;

    tb_etmv1_sample buf[SBUF];
    unsigned nbuf;
    uint64_t nsamples;

    bool on, dropping, last_traced;
    uint32_t last_addr;     /* last branch or TFO address (6.7.1) */
    tb_isa last_isa;
    uint64_t since_tfo;     /* port cycles since the last TFO */
    bool ctx_due;
    uint32_t ctxid;
    bool trig_pending, trig_done;

    bool have_prev_cycle;
    uint64_t prev_cycle;
    bool have_pending, have_fold;
    tb_exec_record pending, fold;
    uint64_t pending_span, fold_span;
    /* The newest instruction the trace shows as executed (for the
     * overflow callback, encoder.h), and the one before it: an exception
     * that cancels it (E, 6.7.1) retracts it. */
    bool have_shown, prev_have_shown;
    uint64_t shown_seq, prev_shown_seq;

    /* Data trace: the pending instruction's transfers (TB_REC_DATA). */
    v2_xfer xfer[XMAX], fxfer[XMAX];
    unsigned n_xfer, n_fxfer; /* of pending, of fold */
    uint32_t last_daddr;      /* 6.4.2: compressed against it */
    bool have_daddr;          /* a full one went out since the last TFO */
};

static int flush_samples(tb_etmv2_encoder *e)
{
    int rc = 0;

    if (e->bsink && !e->hdr_done) {
        uint8_t h[TB_ETM_PORT_HDR_BYTES];

        tb_etmv2_capture_header(&e->cfg, h);
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

static int put_sample(tb_etmv2_encoder *e, uint8_t ps, uint16_t pkt)
{
    tb_etmv1_sample *s = &e->buf[e->nbuf++];

    s->pipestat = ps;
    s->tracesync = 0;
    s->tracepkt = pkt;
    e->nsamples++;
    return e->nbuf == SBUF ? flush_samples(e) : 0;
}

static uint8_t fifo_pop(tb_etmv2_encoder *e)
{
    uint8_t b = e->fifo[e->head];

    e->head = (e->head + 1) % FIFO_CAP;
    e->count--;
    return b;
}

static void fifo_put(tb_etmv2_encoder *e, const uint8_t *b, unsigned n)
{
    unsigned i;

    for (i = 0; i < n; i++) {
        e->fifo[(e->head + e->count) % FIFO_CAP] = b[i];
        e->count++;
    }
}

/* One port cycle with status ps.  trig: may carry the pending trigger. */
static int port_cycle(tb_etmv2_encoder *e, uint8_t ps, bool trig)
{
    uint16_t pkt = 0;
    bool sent = false;

    if (e->on && !e->dropping)
        e->since_tfo++;
    if (trig && e->trig_pending) { /* 6.1.7: real status on TRACEPKT[3:0] */
        e->trig_pending = false;
        return put_sample(e, TB_ETMV2_TR, ps & 15);
    }
    if (e->tfo_hi) { /* U4: the TFO's second half, no FIFO data */
        e->tfo_hi = false;
        return put_sample(e, ps, (uint16_t)(e->tfo_hi_val << 1 | 1));
    }
    if (e->count) {
        sent = true;
        if (e->cfg.port_width == 4) {
            uint8_t b = e->fifo[e->head];

            if (!e->half) {
                pkt = b & 0xF;
                e->half = true;
            } else {
                pkt = b >> 4;
                fifo_pop(e);
                e->half = false;
            }
        } else {
            pkt = fifo_pop(e);
            if (e->cfg.port_width == 16 && e->count)
                pkt |= (uint16_t)(fifo_pop(e) << 8);
        }
    }
    if (!sent && ps == TB_ETMV2_WT) {
        /* 6.1.6: TD, TRACEPKT[0] = 0 (1 would be a TFO).  Cycle-accurate
         * captures keep every cycle (docs/etmv2.md 4, M6). */
        if (!e->cfg.cycle_accurate && !e->o.keep_idle)
            return 0;
        return put_sample(e, TB_ETMV2_TD, 0);
    }
    return put_sample(e, ps, pkt);
}

static int waits(tb_etmv2_encoder *e, uint64_t n)
{
    int rc;

    while (n--)
        if ((rc = port_cycle(e, TB_ETMV2_WT, true)) < 0)
            return rc;
    return 0;
}

static void lost(tb_etmv2_encoder *e, unsigned bytes)
{
    if (!e->dropping) {
        e->st.overflows++;
        if (e->ocb)
            e->ocb(e->octx, e->have_shown, e->shown_seq);
    }
    e->dropping = true;
    e->st.dropped_bytes += bytes;
}

static int emit_pkt(tb_etmv2_encoder *e, const tb_packet *p)
{
    e->st.packets++;
    if (e->pcb && e->pcb(e->pctx, p))
        return TB_ERR_STOPPED;
    return 0;
}

/* A TFO (6.5.1): its TD cycle(s), and its packet into the FIFO.  Returns
 * 1 if sent, 0 if it cannot go now (FIFO too full for the value). */
static int tfo(tb_etmv2_encoder *e, uint32_t addr, tb_isa isa, uint8_t reason,
               unsigned room)
{
    uint8_t b[9];
    unsigned n = 0, i, v = e->count;
    tb_packet p;
    int rc;

    if (v > tb_etmv2_tfo_max(e->cfg.port_width) ||
        e->count + 5 + e->cfg.ctxid_bytes + room > e->depth)
        return 0;
    b[n++] = (uint8_t)(TB_ETMV2_TFO_HDR_NORMAL | (reason & 3)); /* U2 */
    for (i = 0; i < e->cfg.ctxid_bytes; i++)
        b[n++] = (uint8_t)(e->ctxid >> (8 * i)); /* U7 */
    addr = isa == TB_ISA_THUMB ? (addr & ~1u) | 1u : addr & ~3u; /* 6.5.4: bit 0 Thumb */
    for (i = 0; i < 4; i++)
        b[n++] = (uint8_t)(addr >> (8 * i)); /* U7 */
    e->since_tfo = 0;
    e->ctx_due = false;
    /* 6.4.2: a data address is compressed only against one sent in full
     * in the current sync period (the TFO's). */
    e->have_daddr = false;
    e->last_addr = addr & ~1u;
    e->last_isa = isa;
    memset(&p, 0, sizeof p);
    p.kind = TB_PKT_ISYNC;
    p.protocol = TB_PROTO_ETMV2;
    p.index = tb_etmv1_sample_index(e->nsamples);
    p.size = (uint8_t)n;
    memcpy(p.bytes, b, n);
    p.addr = addr & ~1u;
    p.isa = isa;
    p.addr_bits = 32;
    p.addr_known = true;
    p.reason = reason;
    p.has_ctxid = e->cfg.ctxid_bytes != 0;
    p.context_id = e->ctxid;
    if ((rc = emit_pkt(e, &p)) < 0)
        return rc;
    /* The TFO cycle: no FIFO output (6.1.6), so v bytes precede the
     * packet (U6). */
    if (e->cfg.port_width == 4) {
        rc = put_sample(e, TB_ETMV2_TD, (uint16_t)((v & 7) << 1 | 1));
        e->tfo_hi = true;
        e->tfo_hi_val = (uint8_t)(v >> 3);
    } else {
        rc = put_sample(e, TB_ETMV2_TD, (uint16_t)(v << 1 | 1));
    }
    if (e->on && !e->dropping)
        e->since_tfo = 0;
    fifo_put(e, b, n);
    e->st.isyncs++;
    return rc < 0 ? rc : 1;
}

/* The packets of a status: a context ID packet when due (U17), then the
 * branch address when `br` (6.4.1: always last).  n = 0: none.  Returns
 * false when they do not fit (overflow, 6.10: all or nothing). */
/* The data packets of an instruction's nx transfers x (6.4.2, Table 6.2
 * normal data bC0A0SS10): with value trace one a transfer, A on the
 * first (an address follows it when addresses are traced), SS its size
 * (U8), the value LSB first; with address trace only, one packet, A set,
 * SS = 00.  The data address (U8 layout) is the low 7-bit groups that
 * changed since the last one, all five bytes when none went out in full
 * since the TFO.  C is set on every packet but the last; `more`: other
 * packets follow in this cycle.  Returns the bytes written at b. */
static unsigned data_packets(const tb_etmv2_encoder *e, const v2_xfer *x, unsigned nx,
                             bool more, uint8_t *b)
{
    static const uint8_t ss[5] = {0, 1, 2, 0, 3}; /* bytes -> SS (U8) */
    bool dv = e->cfg.data_trace & 1, da = (e->cfg.data_trace & 2) != 0;
    unsigned n = 0, np = dv ? nx : 1, i, k;

    for (i = 0; i < np; i++) {
        uint8_t h = 0x02;
        unsigned at = n;

        if (dv)
            h |= (uint8_t)(ss[x[i].size] << 2);
        if (i == 0)
            h |= 0x20; /* A: the instruction's first data packet */
        b[n++] = h;
        if (i == 0 && da) {
            uint32_t a = x[0].addr, d = a ^ e->last_daddr;
            unsigned bytes = 5;

            if (e->have_daddr)
                for (bytes = 1; bytes < 5 && (d >> (7 * bytes)); bytes++)
                    ;
            for (k = 0; k < bytes; k++)
                b[n++] = (uint8_t)(k == 4 ? (a >> 28) & 0xF
                                          : ((a >> (7 * k)) & 0x7F) | (k + 1 < bytes ? 0x80 : 0));
        }
        if (dv)
            for (k = 0; k < x[i].size; k++)
                b[n++] = (uint8_t)(x[i].value >> (8 * k));
        if (i + 1 < np || more)
            b[at] |= 0x80; /* C */
    }
    return n;
}

static bool build(tb_etmv2_encoder *e, bool br, uint32_t to, tb_isa isa, bool exc,
                  const v2_xfer *x, unsigned nx, uint8_t *b, unsigned *n, unsigned *na,
                  unsigned *nd, uint8_t *addr5)
{
    unsigned i;

    *n = 0;
    *na = 0;
    *nd = 0;
    if (e->ctx_due && e->cfg.ctxid_bytes) {
        b[(*n)++] = (uint8_t)(0x6E | (br || nx ? 0x80 : 0)); /* bC1101110 */
        for (i = 0; i < e->cfg.ctxid_bytes; i++)
            b[(*n)++] = (uint8_t)(e->ctxid >> (8 * i)); /* U7 */
    }
    if (nx) {
        *nd = data_packets(e, x, nx, br, b + *n);
        *n += *nd;
    }
    if (br) {
        int k = tb_addr_encode(TB_ADDR_ORIGINAL, to, isa, e->last_addr, e->last_isa, exc,
                               0, addr5);

        if (k < 0)
            return false;
        memcpy(b + *n, addr5, (size_t)k);
        *n += (unsigned)k;
        *na = (unsigned)k;
    }
    return e->count + *n <= e->depth;
}

/* Commits packets built by build(); the BRANCH/CONTEXT_ID to pcb. */
static int commit(tb_etmv2_encoder *e, uint8_t ps, const uint8_t *b, unsigned n,
                  unsigned na, unsigned nd, uint32_t to, tb_isa isa, bool exc,
                  const v2_xfer *x, unsigned nx)
{
    tb_packet p;
    int rc;

    fifo_put(e, b, n);
    if (nd) {
        e->st.packets++;
        if (e->cfg.data_trace & 2) {
            e->last_daddr = x[0].addr;
            e->have_daddr = true;
        }
    }
    (void)nx;
    if (n > na + nd) {
        e->ctx_due = false;
        memset(&p, 0, sizeof p);
        p.kind = TB_PKT_CONTEXT_ID;
        p.protocol = TB_PROTO_ETMV2;
        p.index = tb_etmv1_sample_index(e->nsamples);
        p.size = (uint8_t)(n - na - nd);
        memcpy(p.bytes, b, n - na - nd);
        p.has_ctxid = true;
        p.context_id = e->ctxid;
        if ((rc = emit_pkt(e, &p)) < 0)
            return rc;
    }
    if (na) {
        memset(&p, 0, sizeof p);
        p.kind = TB_PKT_BRANCH;
        p.protocol = TB_PROTO_ETMV2;
        p.index = tb_etmv1_sample_index(e->nsamples);
        p.size = (uint8_t)na;
        memcpy(p.bytes, b + n - na, na);
        p.addr = to & (isa == TB_ISA_THUMB ? ~1u : ~3u);
        p.isa = isa;
        p.addr_bits = (uint8_t)tb_addr_bits_for(TB_ADDR_ORIGINAL, isa, na);
        p.addr_known = true;
        p.exc_cancel = exc;
        p.phdr_format = ps;
        e->last_addr = p.addr;
        e->last_isa = isa;
        if ((rc = emit_pkt(e, &p)) < 0)
            return rc;
    }
    return 0;
}

static bool is_vector(const tb_etmv2_encoder *e, uint32_t v)
{
    uint32_t off = v & 0x1F;

    return ((v & ~0x1Fu) == e->cfg.vector_base || (v & ~0x1Fu) == 0xFFFF0000u) &&
           off != 0x14 && !(off & 3);
}

/* Brings trace on (or back after an overflow) before instruction r:
 * 0 = on, 1 = not now (the instruction goes untraced). */
static int ensure_on(tb_etmv2_encoder *e, const tb_exec_record *r, unsigned room)
{
    uint8_t reason;
    int rc;

    if (e->on && !e->dropping)
        return 0;
    if (e->dropping && e->count)
        return 1; /* 6.10: WT while the FIFO drains */
    reason = e->dropping ? TB_ETMV2_R_OVERFLOW : TB_ETMV2_R_TRACE_ON;
    /* U6: never half a byte out at a TFO: finish it first. */
    if (e->half && (rc = port_cycle(e, TB_ETMV2_WT, false)) < 0)
        return rc;
    e->on = true;
    e->dropping = false;
    if ((rc = tfo(e, r->u.insn.addr, (tb_isa)r->u.insn.isa, reason, room)) < 0)
        return rc;
    if (rc == 0) { /* the FIFO holds more than the TFO value can say, or
                    * the TFO and its instruction's data do not fit */
        lost(e, 0);
        return 1;
    }
    e->since_tfo = 0;
    return 0;
}

/* Whether r is a branch the model folds (U18). */
static bool foldable(const tb_etmv2_encoder *e, const tb_exec_record *r)
{
    /* Not in CA mode: a range's cycle counts give each instruction a
     * cycle of its own (decoder.h), a phantom pair has one. */
    return e->cfg.phantoms && !e->cfg.branch_output && !e->cfg.cycle_accurate &&
           r->u.insn.wp_class == TB_WP_DIRECT;
}

enum { RUN = 0, CANCELLED = 1 };

/* Whether instruction r's status carries its branch address (6.7.1). */
static bool branch_out(const tb_etmv2_encoder *e, const tb_exec_record *r)
{
    uint8_t fl = r->u.insn.flags, wp = r->u.insn.wp_class;
    bool indirect = wp == TB_WP_INDIRECT || wp == TB_WP_INDIRECT_LINK;
    bool direct = (wp == TB_WP_DIRECT || wp == TB_WP_DIRECT_LINK) && (fl & TB_INSN_TAKEN);

    return !(fl & TB_INSN_COND_FAILED) && (indirect || (direct && e->cfg.branch_output));
}

/* The status base (IE/DE/IN/DN) and packets of instruction r. */
static int insn_status(tb_etmv2_encoder *e, const tb_exec_record *r, const v2_xfer *x,
                       unsigned nx, uint8_t *ps, uint8_t *b, unsigned *n, unsigned *na,
                       unsigned *nd, uint32_t *to, tb_isa *isa)
{
    bool failed = r->u.insn.flags & TB_INSN_COND_FAILED;
    bool br = branch_out(e, r);
    uint8_t a5[5];

    *to = r->u.insn.next_addr;
    *isa = (tb_isa)r->u.insn.next_isa;
    /* Data (6.4.2): a load/store that passed its condition and
     * completed (an aborted one has no transfers, sim.h). */
    if (failed || !e->cfg.data_trace)
        nx = 0;
    if (!build(e, br, *to, *isa, false, x, nx, b, n, na, nd, a5))
        return 0;
    *ps = (uint8_t)((failed ? TB_ETMV2_IN : TB_ETMV2_IE) | (*n ? 1 : 0));
    return 1;
}

/* Instruction seq went out as executed (encoder.h, tb_overflow_cb). */
static void shown(tb_etmv2_encoder *e, uint64_t seq)
{
    e->prev_have_shown = e->have_shown;
    e->prev_shown_seq = e->shown_seq;
    e->have_shown = true;
    e->shown_seq = seq;
}

static void trigger_check(tb_etmv2_encoder *e, const tb_exec_record *r)
{
    if (e->o.base.trigger_at && !e->trig_done && r->seq >= e->o.base.trigger_at) {
        e->trig_done = true;
        e->trig_pending = true;
    }
}

/* One instruction (and, with `second`, the instruction folded with it). */
static int do_insn(tb_etmv2_encoder *e, const tb_exec_record *r, uint64_t span,
                   const v2_xfer *x, unsigned nx, const tb_exec_record *second,
                   uint64_t span2, const v2_xfer *x2, unsigned nx2)
{
    uint8_t b[PMAX], ps;
    unsigned n, na, nd, room = 0;
    uint32_t to;
    tb_isa isa;
    int rc;

    e->st.insns += second ? 2 : 1;
    trigger_check(e, r);
    if (second)
        trigger_check(e, second);
    e->last_traced = false;
    if (!tb_encoder_in_filter(&e->o.base, r->u.insn.addr)) {
        e->on = false; /* 6.9.2: WT while the FIFO drains, then TD */
        return waits(e, span + span2);
    }
    if (!(e->on && !e->dropping) && e->cfg.data_trace) {
        /* M10: a trace-on TFO goes only with room for the data of the
         * instruction(s) it starts at (its data address in full, 6.4.2),
         * else they would overflow at once after a TFO that names them
         * (as ETMv1's M8). */
        const tb_exec_record *ri = second ? second : r;
        uint8_t tmp[PMAX];

        e->have_daddr = false;
        if (!(r->u.insn.flags & TB_INSN_COND_FAILED))
            room += data_packets(e, x, nx, false, tmp);
        if (second && !(second->u.insn.flags & TB_INSN_COND_FAILED))
            room += data_packets(e, x2, nx2, false, tmp);
        if (room && branch_out(e, ri))
            room += 5; /* and its branch address, at most 5 bytes (6.7.1) */
    }
    if ((rc = ensure_on(e, r, room)) < 0)
        return rc;
    if (rc > 0)
        return waits(e, span + span2);
    if (!second && e->o.base.sync_period && e->since_tfo >= e->o.base.sync_period) {
        bool plain = !(r->u.insn.flags & TB_INSN_COND_FAILED) &&
                     !(r->u.insn.wp_class == TB_WP_INDIRECT ||
                       r->u.insn.wp_class == TB_WP_INDIRECT_LINK) &&
                     !(e->cfg.branch_output && (r->u.insn.flags & TB_INSN_TAKEN) &&
                       r->u.insn.wp_class != TB_WP_NONE) &&
                     !(e->ctx_due && e->cfg.ctxid_bytes) &&
                     !(e->cfg.data_trace && nx); /* it implies an IE: no data */

        if (e->since_tfo >= 2 * (uint64_t)e->o.base.sync_period) {
            /* 6.5.1: the counter ran out again first: overflow, trace lost. */
            lost(e, 0);
            return waits(e, span);
        }
        /* 6.5.1: the TFO replaces an IE, which it implies. */
        if (plain && !e->half && !e->trig_pending) {
            if ((rc = tfo(e, r->u.insn.addr, (tb_isa)r->u.insn.isa, TB_ETMV2_R_PERIODIC,
                          0)) < 0)
                return rc;
            if (rc > 0) {
                e->st.traced++;
                e->last_traced = true;
                shown(e, r->seq);
                return waits(e, span > 1 ? span - 1 : 0);
            }
        }
    }
    if (second) {
        /* 6.1.2: the phantom branch first, then the second's status. */
        uint8_t s2;

        if (!insn_status(e, second, x2, nx2, &s2, b, &n, &na, &nd, &to, &isa)) {
            lost(e, 0);
            return waits(e, span + span2);
        }
        ps = (uint8_t)(((r->u.insn.flags & TB_INSN_COND_FAILED) ? TB_ETMV2_PN : TB_ETMV2_PT) |
                       s2);
        e->st.traced += 2;
        if ((rc = commit(e, ps, b, n, na, nd, to, isa, false, x2, nx2)) < 0 ||
            (rc = port_cycle(e, ps, true)) < 0)
            return rc;
        e->last_traced = true;
        shown(e, second->seq);
        return waits(e, span + span2 > 1 ? span + span2 - 1 : 0);
    }
    if (!insn_status(e, r, x, nx, &ps, b, &n, &na, &nd, &to, &isa)) {
        lost(e, n);
        return waits(e, span);
    }
    e->st.traced++;
    if ((rc = commit(e, ps, b, n, na, nd, to, isa, false, x, nx)) < 0 ||
        (rc = port_cycle(e, ps, true)) < 0)
        return rc;
    e->last_traced = true;
    shown(e, r->seq);
    return waits(e, span > 1 ? span - 1 : 0);
}

/* An instruction an exception to a Thumb vector cancels (below, the
 * exception record): no status of its own, but trace turns on at it as
 * at any instruction (a trace-on TFO implies none, 6.5.1), so that the
 * DW shows the exception with it as the return address. */
static int untraced_cancel(tb_etmv2_encoder *e, const tb_exec_record *r, uint64_t span)
{
    int rc;

    e->st.insns++;
    trigger_check(e, r);
    e->last_traced = false;
    if (!tb_encoder_in_filter(&e->o.base, r->u.insn.addr)) {
        e->on = false; /* 6.9.2 */
        return waits(e, span);
    }
    if ((rc = ensure_on(e, r, 0)) < 0)
        return rc;
    e->last_traced = rc == 0;
    return waits(e, span);
}

/* An exception: a DW cycle with the branch to the vector (6.7.1: E = the
 * most recent traced instruction was cancelled, in the 5th byte). */
static int do_exc(tb_etmv2_encoder *e, const tb_exec_record *r, uint64_t span)
{
    uint8_t b[PMAX], a5[5];
    unsigned n, na, nd;
    bool cancel = r->u.exc.cancelled;
    int rc;

    if (!e->last_traced || !e->on || e->dropping)
        return waits(e, span);
    if (!is_vector(e, r->u.exc.vector))
        return TB_ERR_CONFIG; /* the decoder could not name it (docs/etmv2.md 4) */
    if (!build(e, true, r->u.exc.vector, (tb_isa)r->u.exc.isa, cancel, NULL, 0, b, &n, &na,
               &nd, a5)) {
        lost(e, n);
        return waits(e, span);
    }
    if ((rc = commit(e, TB_ETMV2_DW, b, n, na, nd, r->u.exc.vector, (tb_isa)r->u.exc.isa,
                     cancel, NULL, 0)) < 0 ||
        (rc = port_cycle(e, TB_ETMV2_DW, true)) < 0)
        return rc;
    if (cancel) {
        /* E went out: the decoder retracts the instruction it cancels, so
         * an overflow from here on leaves it cancelled (the comparator's
         * and tb_expect's reading of tb_overflow_cb). */
        e->have_shown = e->prev_have_shown;
        e->shown_seq = e->prev_shown_seq;
    }
    return waits(e, span > 1 ? span - 1 : 0);
}

/* The held instructions go out.  `next_insn`: a later instruction came
 * (so a held branch may fold with the pending one, or the pending one
 * be held); cancel: an exception cancelled the pending one. */
static int flush(tb_etmv2_encoder *e, bool next_insn, bool cancel)
{
    int rc;

    if (!e->have_pending) {
        if (e->have_fold) {
            e->have_fold = false;
            return do_insn(e, &e->fold, e->fold_span, e->fxfer, e->n_fxfer, NULL, 0, NULL, 0);
        }
        return 0;
    }
    e->have_pending = false;
    if (e->have_fold) {
        e->have_fold = false;
        if (!cancel && tb_encoder_in_filter(&e->o.base, e->pending.u.insn.addr))
            return do_insn(e, &e->fold, e->fold_span, e->fxfer, e->n_fxfer, &e->pending,
                           e->pending_span, e->xfer, e->n_xfer);
        if ((rc = do_insn(e, &e->fold, e->fold_span, e->fxfer, e->n_fxfer, NULL, 0, NULL,
                          0)) < 0)
            return rc;
    } else if (next_insn && foldable(e, &e->pending) && e->on && !e->dropping &&
               tb_encoder_in_filter(&e->o.base, e->pending.u.insn.addr) &&
               !(e->o.base.sync_period && e->since_tfo >= e->o.base.sync_period)) {
        e->fold = e->pending;
        e->fold_span = e->pending_span;
        memcpy(e->fxfer, e->xfer, sizeof e->xfer);
        e->n_fxfer = e->n_xfer;
        e->have_fold = true;
        return 0;
    }
    return do_insn(e, &e->pending, e->pending_span, e->xfer, e->n_xfer, NULL, 0, NULL, 0);
}

static int drain(tb_etmv2_encoder *e)
{
    int rc;

    while (e->count || e->tfo_hi)
        if ((rc = port_cycle(e, TB_ETMV2_WT, false)) < 0)
            return rc;
    return flush_samples(e);
}

int tb_etmv2_encoder_push(tb_etmv2_encoder *e, const tb_exec_record *r)
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
        rc = flush(e, true, false);
        e->pending = *r;
        e->pending_span = span;
        e->have_pending = true;
        e->n_xfer = 0;
        break;
    case TB_REC_DATA:
        /* A transfer of the pending instruction (sim.h: right after its
         * record); ignored without data trace, so instruction trace is the
         * same with or without data records. */
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
    case TB_REC_EXCEPTION:
        /* The cancelled instruction is traced; the E bit retracts it.
         * Except before a Thumb vector (SCTLR.TE, ARMv7): Table 6.9's
         * Thumb 5th byte (0001xxxx) has no E bit, ETMv2's cores entering
         * every exception in ARM state, so the instruction the exception
         * cancels gets no status of its own (its cycles are waits) and
         * the DW's return address is the instruction after the last one
         * traced, which is it; a model choice, as ETMv1's undefined
         * instruction (docs/etmv2.md 4). */
        if (r->u.exc.cancelled && r->u.exc.isa == TB_ISA_THUMB && e->have_pending &&
            e->pending.u.insn.addr == r->u.exc.pref_return) {
            e->have_pending = false;
            if ((rc = flush(e, false, false)) >= 0 &&
                (rc = untraced_cancel(e, &e->pending, e->pending_span)) >= 0) {
                tb_exec_record x = *r;

                x.u.exc.cancelled = false;
                rc = do_exc(e, &x, span);
            }
            break;
        }
        if ((rc = flush(e, false, false)) >= 0 && (rc = flush(e, false, false)) >= 0)
            rc = do_exc(e, r, span);
        break;
    case TB_REC_CONTEXT:
        if ((rc = flush(e, false, false)) >= 0)
            rc = flush(e, false, false);
        if (r->u.ctx.context_id != e->ctxid && e->cfg.ctxid_bytes)
            e->ctx_due = true; /* U17: with the next status */
        e->ctxid = r->u.ctx.context_id;
        break;
    case TB_REC_END:
        rc = tb_etmv2_encoder_finish(e);
        break;
    default:
        break;
    }
    if (rc < 0)
        e->err = rc;
    return rc < 0 ? rc : 0;
}

int tb_etmv2_encoder_finish(tb_etmv2_encoder *e)
{
    int rc;

    if (!e)
        return TB_ERR_INVAL;
    if (e->err)
        return e->err;
    if (e->finished)
        return 0;
    e->finished = true;
    if ((rc = flush(e, false, false)) < 0 || (rc = flush(e, false, false)) < 0 ||
        (rc = drain(e)) < 0)
        return e->err = rc;
    return 0;
}

void tb_etmv2_encoder_opts_init(tb_etmv2_encoder_opts *o)
{
    memset(o, 0, sizeof *o);
    o->base.protocol = TB_PROTO_ETMV2;
    o->base.arch_minor = 0;
    o->base.sync_period = 1024;
    o->port_width = 8;
}

void tb_etmv2_encoder_opts_from(tb_etmv2_encoder_opts *v, const tb_encoder_opts *o)
{
    tb_etmv2_encoder_opts_init(v);
    v->base = *o;
    v->base.protocol = TB_PROTO_ETMV2;
    v->port_width = o->port_width;
    v->vector_base = o->vector_base;
    v->keep_idle = o->keep_idle;
}

int tb_etmv2_encoder_config(const tb_etmv2_encoder_opts *o, tb_etmv2_config *c)
{
    tb_etmv2_config_init(c);
    c->minor = o->base.arch_minor;
    c->port_width = o->port_width;
    c->cycle_accurate = o->base.cycle_accurate;
    c->branch_output = o->base.branch_broadcast;
    c->ctxid_bytes = o->base.ctxid_bytes;
    c->data_trace = o->base.data_trace;
    c->vector_base = o->vector_base;
    c->phantoms = !o->no_phantoms;
    if (o->base.fifo_depth > FIFO_CAP)
        return TB_ERR_CONFIG;
    return tb_etmv2_config_check(c);
}

static tb_etmv2_encoder *make(const tb_etmv2_encoder_opts *o)
{
    tb_etmv2_encoder *e;
    tb_etmv2_config c;

    if (!o || tb_etmv2_encoder_config(o, &c) < 0)
        return NULL;
    if (!(e = calloc(1, sizeof *e)))
        return NULL;
    e->o = *o;
    e->cfg = c;
    e->depth = o->base.fifo_depth ? o->base.fifo_depth : FIFO_CAP;
    e->last_isa = TB_ISA_ARM;
    return e;
}

tb_etmv2_encoder *tb_etmv2_encoder_new(const tb_etmv2_encoder_opts *o,
                                       tb_etmv1_sample_cb cb, void *ctx)
{
    tb_etmv2_encoder *e = make(o);

    if (e) {
        e->scb = cb;
        e->sctx = ctx;
    }
    return e;
}

tb_etmv2_encoder *tb_etmv2_encoder_new_bytes(const tb_etmv2_encoder_opts *o,
                                             tb_trace_sink sink, void *ctx)
{
    tb_etmv2_encoder *e;

    if (!sink || !(e = make(o)))
        return NULL;
    e->bsink = sink;
    e->bctx = ctx;
    return e;
}

void tb_etmv2_encoder_free(tb_etmv2_encoder *e)
{
    free(e);
}

void tb_etmv2_encoder_set_packet_cb(tb_etmv2_encoder *e, tb_packet_cb cb, void *ctx)
{
    if (e) {
        e->pcb = cb;
        e->pctx = ctx;
    }
}

void tb_etmv2_encoder_set_overflow_cb(tb_etmv2_encoder *e, tb_overflow_cb cb, void *ctx)
{
    if (e) {
        e->ocb = cb;
        e->octx = ctx;
    }
}

const tb_encoder_stats *tb_etmv2_encoder_get_stats(const tb_etmv2_encoder *e)
{
    return e ? &e->st : NULL;
}

uint64_t tb_etmv2_encoder_cycles(const tb_etmv2_encoder *e)
{
    return e ? e->nsamples : 0;
}
