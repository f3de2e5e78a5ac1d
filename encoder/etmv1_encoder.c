/*
 * ETMv1 trace logic model (IHI0014Q chapter 5): exec records -> one
 * port sample per TRACECLK cycle.  Model choices are in docs/etmv1.md 4.
 * The port core (samples, FIFO, port cycle, record loop) is
 * port_model.c; here are ETMv1's statuses and packets (port_ops).
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
#include "port_model.h"

#define SYNC_RETRY 512u /* 5.6.2: the ETM tries for 512 cycles */
#define DMAX (5u + 4u * PORT_XMAX) /* one instruction's data packets: address + values */

struct tb_etmv1_encoder {
    port_model m;          /* first: the port core (port_model.h) */
    tb_etmv1_config cfg;
    uint32_t last_raw;     /* last branch address output */
    bool have_last;
    /* abandon (5.6.1): a taken branch's BE went out without its APO
     * cycles, which wait for the exception after it; carry: the
     * branch's cycles beyond its BE cycle, which the exception's waits
     * take over so that port time stays the core's. */
    bool held;
    uint8_t held_apo;
    uint64_t carry;
};

/* Address starts still in the FIFO: the APO of a branch now (5.6.1). */
static unsigned pending_starts(const tb_etmv1_encoder *e)
{
    unsigned i, n = 0;

    for (i = 0; i < e->m.count; i++)
        if (e->m.fsync[(e->m.head + i) % PORT_FIFO_CAP] && !(i == 0 && e->m.half))
            n++;
    return n;
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
        n = (unsigned)tb_etmv1_addr_encode(e->m.xfer[0].addr, e->m.last_daddr,
                                           !e->m.have_daddr, 0, b);
    if (e->cfg.data_trace & 1)
        for (i = 0; i < e->m.n_xfer; i++)
            for (k = 0; k < e->m.xfer[i].size; k++)
                b[n++] = (uint8_t)(e->m.xfer[i].value >> (8 * k));
    return n;
}

/* After data packets went into the FIFO. */
static void data_sent(tb_etmv1_encoder *e, unsigned dn)
{
    if (!dn)
        return;
    if (e->cfg.data_trace & 2) {
        e->m.last_daddr = e->m.xfer[0].addr;
        e->m.have_daddr = true;
    }
    e->m.st.packets++;
}

/* A BE cycle (status ps) with the address raw and its two APO cycles;
 * a BD's dn data packets db go into the FIFO before the address (5.4);
 * with db NULL, dn bytes are only kept free (a marker's instruction).
 * *ok false: the FIFO overflowed, nothing was sent and no cycle used. */
static int branch_cycles(tb_etmv1_encoder *e, uint8_t ps, uint32_t raw,
                         uint8_t reason, bool full, bool trig, const uint8_t *db,
                         unsigned dn, bool hold, bool *ok)
{
    uint8_t b[9];
    unsigned n, i, apo;
    bool periodic = e->m.base.sync_period &&
                    e->m.since_sync >= e->m.base.sync_period;
    int rc;

    *ok = false;
    if (e->m.ctx_due || periodic) {
        full = true;
        if (!reason) /* 5.6.2: b100 from v1.2; CID-forced: U16 */
            reason = e->cfg.minor >= 2 ? TB_ETMV1_R_PERIODIC : 0;
    }
    n = (unsigned)tb_etmv1_addr_encode(raw, e->last_raw, full || !e->have_last,
                                       reason, b);
    if (n == 5 && reason && e->cfg.ctxid_bytes) /* 5.6.3 */
        for (i = 0; i < e->cfg.ctxid_bytes; i++)
            b[n++] = (uint8_t)(e->m.ctxid >> (8 * i)); /* LSB first: U7 */
    apo = pending_starts(e);
    if (apo > 14 || e->m.count + dn + n > e->m.depth) {
        tb_port_lost(&e->m, dn + n);
        return 0;
    }
    if (db) {
        tb_port_fifo_put(&e->m, db, dn);
        data_sent(e, dn);
    }
    for (i = 0; i < n; i++) {
        unsigned at = (e->m.head + e->m.count) % PORT_FIFO_CAP;

        e->m.fifo[at] = b[i];
        e->m.fsync[at] = i == 0;
        e->m.count++;
    }
    e->last_raw = raw;
    e->have_last = true;
    if (n >= 5) {
        e->m.since_sync = 0;
        if (reason)
            e->m.ctx_due = false;
    }
    e->m.st.packets++;
    if (e->m.pcb) {
        tb_packet p;

        tb_port_pkt(&e->m, &p, TB_PKT_BRANCH, b, n);
        p.addr = raw & ((raw & 1) ? ~1u : ~3u);
        p.isa = (raw & 1) ? TB_ISA_THUMB : TB_ISA_ARM;
        p.addr_bits = (uint8_t)(n >= 5 ? 32 : 7 * n);
        p.addr_known = true;
        p.reason = reason;
        p.phdr_format = ps;
        p.has_ctxid = n > 5;
        p.context_id = e->m.ctxid;
        if (e->m.pcb(e->m.pctx, &p))
            return TB_ERR_STOPPED;
    }
    *ok = true;
    if (hold) { /* its APO cycles wait for the next record */
        e->held = true;
        e->held_apo = (uint8_t)apo;
        return tb_port_cycle(&e->m, ps, trig ? PORT_TRIG : 0);
    }
    if ((rc = tb_port_cycle(&e->m, ps, trig ? PORT_TRIG : 0)) < 0 ||
        (rc = tb_port_cycle(&e->m, (uint8_t)(apo & 3), PORT_APO)) < 0 ||
        (rc = tb_port_cycle(&e->m, (uint8_t)((apo >> 2) & 3), PORT_APO)) < 0)
        return rc;
    return 0;
}

/* Cancel modes of an instruction record. */
enum { RUN = 0, DROPPED = 1, ABORTED = 2 };

/* The held APO cycles of a branch no exception abandoned after all,
 * then the waits it carried. */
static int release_apo(tb_etmv1_encoder *e)
{
    uint64_t carry = e->carry;
    int rc;

    if (!e->held)
        return 0;
    e->held = false;
    e->carry = 0;
    if ((rc = tb_port_cycle(&e->m, (uint8_t)(e->held_apo & 3), PORT_APO)) < 0 ||
        (rc = tb_port_cycle(&e->m, (uint8_t)((e->held_apo >> 2) & 3), PORT_APO)) < 0)
        return rc;
    return tb_port_waits(&e->m, carry > 2 ? carry - 2 : 0);
}

/* exc: with mode RUN, the exception record that comes right after r (its
 * target not run), or NULL. */
static int do_insn(tb_etmv1_encoder *e, const tb_exec_record *r, uint64_t span,
                   int mode, const tb_exec_record *exc)
{
    uint8_t fl = r->u.insn.flags, wp = r->u.insn.wp_class;
    bool failed = fl & TB_INSN_COND_FAILED;
    bool indirect = wp == TB_WP_INDIRECT || wp == TB_WP_INDIRECT_LINK;
    bool direct = (wp == TB_WP_DIRECT || wp == TB_WP_DIRECT_LINK) &&
                  (fl & TB_INSN_TAKEN);
    bool periodic = e->m.base.sync_period &&
                    e->m.since_sync >= e->m.base.sync_period;
    /* Forcing (U16, a model choice): only an instruction whose cycle span
     * holds a BE's three cycles, so port time stays the core's (CA). */
    bool forced = periodic && e->m.since_sync >= e->m.base.sync_period + SYNC_RETRY &&
                  span >= 3;
    bool ok, be;
    uint64_t used;
    uint8_t db[DMAX];
    unsigned dn;
    /* Data: a load/store that passed its condition and completed (an
     * aborted one has no transfers, sim.h), ETMCR[3:2] != 0. */
    bool data = e->cfg.data_trace && e->m.n_xfer && mode == RUN && !failed;
    int rc;

    e->m.st.insns++;
    tb_port_trigger_check(&e->m, r);
    e->m.last_traced = false;
    if (!tb_encoder_in_filter(&e->m.base, r->u.insn.addr)) {
        e->m.on = false; /* 5.8: WT while the FIFO drains, then TD */
        return tb_port_waits(&e->m, span);
    }
    if (e->m.dropping && e->m.count)
        return tb_port_waits(&e->m, span); /* 5.9: WT while draining */
    if (!e->m.on || e->m.dropping) {
        uint8_t reason = tb_port_on_reason(&e->m); /* b010, b011 or b001 */

        /* A full data address first (M9).  With data trace the marker
         * goes only with room for its instruction's packets too (data,
         * a branch address), else they overflow at once after a marker
         * that names the instruction (M8). */
        e->m.have_daddr = false;
        dn = data ? data_packets(e, db) : 0;
        if (e->cfg.data_trace && !failed && mode != DROPPED &&
            (mode == ABORTED || indirect || direct))
            dn += 5u + e->cfg.ctxid_bytes;
        e->m.on = true;
        e->m.dropping = false;
        if ((rc = branch_cycles(e, TB_ETMV1_BE,
                                tb_etmv1_addr_raw(r->u.insn.addr, (tb_isa)r->u.insn.isa),
                                reason, true, false, NULL, dn, false, &ok)) < 0)
            return rc;
        if (!ok)
            return tb_port_waits(&e->m, span);
        e->m.st.isyncs++;
    }
    if (mode == DROPPED)
        return tb_port_waits(&e->m, span);
    dn = data ? data_packets(e, db) : 0;
    e->m.st.traced++;
    e->m.last_traced = true;
    be = mode == ABORTED || (!failed && (indirect || forced ||
                                         (direct && (e->cfg.branch_output || e->m.ctx_due))));
    if (be) {
        uint32_t raw = mode == ABORTED
                           ? tb_etmv1_addr_raw(exc->u.exc.vector, (tb_isa)exc->u.exc.isa)
                           : tb_etmv1_addr_raw(r->u.insn.next_addr,
                                               (tb_isa)r->u.insn.next_isa);

        /* abandon (5.6.1): a taken branch (no data, a BE) with an
         * exception right after it, taken in its pipeline refill: the
         * exception's BE (do_exc) takes its first APO cycle.  Not a
         * branch to a vector address, which reads as an exception
         * (docs 4) and so would show as one with no cycles of its own. */
        bool hold = e->m.base.apo_abandon && mode == RUN && exc && !dn &&
                    (fl & TB_INSN_TAKEN) && span >= 1 &&
                    !tb_port_is_vector(&e->m, r->u.insn.next_addr);

        if ((rc = branch_cycles(e, dn ? TB_ETMV1_BD : TB_ETMV1_BE, raw, 0, false, true,
                                db, dn, hold, &ok)) < 0)
            return rc;
        if (!ok) {
            e->m.last_traced = false;
            return tb_port_waits(&e->m, span);
        }
        if (hold) {
            e->m.have_shown = true;
            e->m.shown_seq = r->seq;
            e->carry = span - 1;
            return 0;
        }
        used = 3;
    } else {
        if (dn && e->m.count + dn > e->m.depth) {
            /* 5.9: its data does not fit; like a BE's address (M8) the
             * instruction is lost with it. */
            e->m.last_traced = false;
            tb_port_lost(&e->m, dn);
            return tb_port_waits(&e->m, span);
        }
        tb_port_fifo_put(&e->m, db, dn);
        data_sent(e, dn);
        if ((rc = tb_port_cycle(&e->m, failed ? TB_ETMV1_IN : dn ? TB_ETMV1_ID : TB_ETMV1_IE,
                                PORT_TRIG)) < 0)
            return rc;
        used = 1;
    }
    /* An aborted load/store's BE is its exception's (M3): the decoder
     * shows it cancelled, never executed, so it is not the newest
     * instruction shown (tb_overflow_cb: an overflow after it must not
     * read as a lost cancel). */
    if (mode != ABORTED) {
        e->m.have_shown = true;
        e->m.shown_seq = r->seq;
    }
    return tb_port_waits(&e->m, span > used ? span - used : 0);
}

static int do_exc(tb_etmv1_encoder *e, const tb_exec_record *r, uint64_t span,
                  bool traced)
{
    bool ok;
    uint64_t carry = 0;
    int rc;

    if (!traced || !e->m.on || e->m.dropping || !tb_port_is_vector(&e->m, r->u.exc.vector)) {
        if ((rc = release_apo(e)) < 0)
            return rc;
        if (!traced || !e->m.on || e->m.dropping)
            return tb_port_waits(&e->m, span);
        return TB_ERR_CONFIG; /* the decoder could not tell it (docs 4) */
    }
    if (e->held) { /* in the branch's first APO cycle: it is abandoned */
        e->held = false;
        carry = e->carry;
        e->carry = 0;
    }
    if ((rc = branch_cycles(e, TB_ETMV1_BE,
                            tb_etmv1_addr_raw(r->u.exc.vector, (tb_isa)r->u.exc.isa),
                            0, false, true, NULL, 0, false, &ok)) < 0)
        return rc;
    if (!ok && carry) { /* not sent: the branch keeps its APO cycles */
        e->held = true;
        e->carry = carry;
        if ((rc = release_apo(e)) < 0)
            return rc;
        carry = 0;
    }
    span += carry;
    /* Trace is on at the vector: an exception taken there before its
     * first instruction (an FIQ as an undefined instruction enters Undef
     * mode, which masks IRQ only) is traced too, with a BE of its own
     * (5.7.1; docs/etmv1.md 4). */
    e->m.last_traced = ok;
    return tb_port_waits(&e->m, ok ? (span > 3 ? span - 3 : 0) : span);
}

static int flush_pending(tb_etmv1_encoder *e, int mode, const tb_exec_record *exc)
{
    int rc;

    if (!e->m.have_pending)
        return 0;
    e->m.have_pending = false;
    rc = do_insn(e, &e->m.pending, e->m.pending_span, mode, exc);
    e->m.n_xfer = 0;
    return rc;
}

static int v1_flush(port_model *m, bool next_insn)
{
    (void)next_insn;
    return flush_pending((tb_etmv1_encoder *)m, RUN, NULL);
}

static int v1_exception(port_model *m, const tb_exec_record *r, uint64_t span)
{
    tb_etmv1_encoder *e = (tb_etmv1_encoder *)m;
    bool abort = r->u.exc.cancelled && r->u.exc.kind == TB_EXC_DATA_ABORT;
    bool had = m->have_pending;
    uint64_t ispan = m->pending_span;
    int rc;

    if (abort && had && m->on && !m->dropping && !tb_port_is_vector(m, r->u.exc.vector))
        return TB_ERR_CONFIG;
    /* 5.7.1: an aborted load/store reports the branch itself;
     * another cancelled instruction reports nothing (docs 4).  With
     * mode RUN the exception comes after the instruction (abandon). */
    rc = flush_pending(e, abort ? ABORTED : r->u.exc.cancelled ? DROPPED : RUN, r);
    if (rc < 0)
        return rc;
    if (abort && had) {
        /* Its BE and APO cycles are the refill from the vector, the
         * exception entry's time (5.6.1): what they took beyond the
         * aborted load/store's span comes out of the exception's
         * (docs/etmv1.md 6, M6), so port time stays the core's. */
        uint64_t over = m->last_traced && ispan < 3 ? 3 - ispan : 0;

        return tb_port_waits(m, span > over ? span - over : 0);
    }
    return do_exc(e, r, span, m->last_traced || (r->u.exc.cancelled && had && m->on));
}

/* 5.4: a TR cycle's TRACEPKT[2:0] is the real status; 5.10: a CA TD
 * cycle's TRACEPKT[0] is TraceEnable. */
static const port_ops etmv1_ops = {
    .proto = TB_PROTO_ETMV1, .wt = TB_ETMV1_WT, .td = TB_ETMV1_TD, .tr = TB_ETMV1_TR,
    .tr_mask = 7, .td_enable = true, .xmax = PORT_XMAX, .flush = v1_flush,
    .exception = v1_exception,
};

/* Nothing beyond the shared configuration. */
static void etmv1_config_more(const tb_etmv1_encoder_opts *o, tb_etmv1_config *c)
{
    (void)o;
    (void)c;
}

TB_PORT_MODEL_API(etmv1, TB_PROTO_ETMV1, 3)
