/*
 * Trace macrocell model, the part both protocols share: the record loop
 * (with the one-record delay that lets a cancelled exception reach back
 * to its instruction), trace enable from the ViewInst ranges,
 * synchronisation, timestamps, context ID / VMID, the FIFO and its
 * overflow.  Its options and registers are in options.c, ELF reading in
 * elf_load.c, snapshot output in snap_out.c.
 *
 * The per-protocol files decide which packets an instruction or an
 * exception gives; everything goes out through tb_enc_emit().
 */
#include <stdlib.h>
#include <string.h>

#include "encoder_internal.h"

/* ------------------------------------------------------------------ */
/* Packet output through the FIFO. */

void tb_enc_pkt(const tb_encoder *e, tb_packet *p, tb_pkt_kind kind)
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->protocol = e->cfg.protocol;
}

void tb_enc_branch_pkt(const tb_encoder *e, tb_packet *p, uint32_t addr, tb_isa isa)
{
    tb_enc_pkt(e, p, TB_PKT_BRANCH);
    p->addr = addr;
    p->isa = isa;
}

void tb_enc_exception_pkt(const tb_encoder *e, tb_packet *p,
                          const tb_exec_record *r)
{
    tb_enc_pkt(e, p, TB_PKT_BRANCH);
    p->addr = r->u.exc.vector;
    p->isa = (tb_isa)r->u.exc.isa;
    p->has_exc = true;
    p->exc_num = r->u.exc.kind == TB_EXC_V7M
                     ? tb_enc_v7m_exc_num(r)
                     : (uint16_t)tb_exc_trace_number((tb_exc_kind)r->u.exc.kind);
    /* The state at the vector (a state record before the exception
     * record announced a change, sim.h). */
    p->ns = e->ns;
    p->ns_valid = true;
}

void tb_enc_state_bytes(tb_encoder *e, tb_packet *p)
{
    if (!e->state_due || e->ns_next == e->ns_traced || p->has_exc)
        return;
    p->has_exc = true;
    p->exc_num = 0;
    p->ns = e->ns_next;
    p->ns_valid = true;
    e->ns_traced = e->ns_next;
}

/* The port drains fifo_bytes every fifo_cycles cycles. */
static void fifo_drain(tb_encoder *e)
{
    uint64_t el;

    if (!e->o.fifo_depth || e->now <= e->fifo_cycle) {
        return;
    }
    el = e->now - e->fifo_cycle;
    e->fifo_cycle = e->now;
    if (el > ((uint64_t)1 << 40))
        el = (uint64_t)1 << 40;
    e->fifo_credit += el * e->o.fifo_bytes;
    if (e->fifo_credit / e->o.fifo_cycles >= e->fifo_level) {
        e->fifo_level = 0;
        e->fifo_credit = 0; /* an idle port saves no bandwidth */
    } else {
        e->fifo_level -= e->fifo_credit / e->o.fifo_cycles;
        e->fifo_credit %= e->o.fifo_cycles;
    }
}

bool tb_enc_suppress_data(tb_encoder *e)
{
    if (!e->o.suppress_level || !e->o.fifo_depth)
        return false;
    fifo_drain(e);
    return e->fifo_level + e->o.suppress_level > e->o.fifo_depth;
}

uint32_t tb_enc_take_cc(tb_encoder *e, uint64_t cycle)
{
    uint64_t d = cycle > e->cc_base ? cycle - e->cc_base : 0;

    e->cc_base = cycle > e->cc_base ? cycle : e->cc_base;
    return d > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)d;
}

/* tb_enc_emit and tb_enc_emit_hdr: hdr < 0, the writer makes the bytes;
 * else hdr is the packet's one byte.  Inlined into both, so neither pays
 * for the other's case. */
static inline __attribute__((always_inline)) int emit_pkt(tb_encoder *e, tb_packet *p,
                                                          int hdr)
{
    uint8_t buf[TB_PKT_MAX_BYTES + 8];
    int n, rc;
    bool completes = e->pkt_has_seq;
    unsigned with = e->fifo_with;

    e->pkt_has_seq = false;
    e->fifo_with = 0;
    /* tb_encoder_push_many: the caller catches up with the records up to
     * the one being handled before any output (the packet and overflow
     * callbacks, the sink), as it would have with single pushes. */
    if (e->ready && e->ready_done < e->ready_at) {
        e->ready_done = e->ready_at;
        if (e->ready(e->ready_ctx, e->ready_at))
            return e->err = TB_ERR_STOPPED;
    }
    if (e->err)
        return e->err;
    if (e->dropping)
        return 0;
    if (hdr >= 0) {
        buf[0] = (uint8_t)hdr;
        n = 1;
    } else if ((n = tb_writer_write(e->w, p, buf, sizeof buf)) < 0) {
        return e->err = n;
    }
    if (e->o.fifo_depth) {
        fifo_drain(e);
        if (e->fifo_level + (uint64_t)n + with > e->o.fifo_depth) {
            /* No room: this and all trace until the FIFO has drained is
             * lost; an overflow I-sync resumes it (protocol-notes 2.10). */
            e->dropping = true;
            e->st.overflows++;
            e->st.dropped_bytes += (uint64_t)n;
            if (e->ocb)
                e->ocb(e->ocb_ctx, e->have_shown, e->shown_seq);
            e->have_shown = false;
            return 0;
        }
        e->fifo_level += (uint64_t)n;
    }
    if (completes) {
        e->shown_seq = e->pkt_seq;
        e->have_shown = true;
    }
    /* The callback before the sink: whatever the sink feeds (the round
     * trip's decoder) must not act on a packet its watcher has not seen;
     * the round trip marks the resume point of an overflow I-sync, whose
     * context ID the decoder shows at once (IHI0014Q 7.10.5; PTM:
     * IHI0035B 4.5, protocol-notes 3.4).  ETMv1 and ETMv2 call theirs
     * before the port cycles too. */
    if (e->pcb) {
        p->index = e->st.bytes;
        p->size = (uint8_t)n;
        memcpy(p->bytes, buf, (size_t)n);
        rc = e->pcb(e->pcb_ctx, p);
        if (rc)
            return e->err = TB_ERR_STOPPED;
    }
    if (e->sink) {
        rc = e->sink(e->sink_ctx, buf, (size_t)n);
        if (rc)
            return e->err = rc < 0 ? rc : TB_ERR_STOPPED;
    }
    e->st.bytes += (uint64_t)n;
    e->st.packets++;
    if (p->kind == TB_PKT_ASYNC) {
        e->since_async = 0;
        e->st.asyncs++;
    } else {
        e->since_async += (uint64_t)n;
        if (e->o.sync_period && e->since_async >= e->o.sync_period)
            e->sync_due = true;
    }
    /* ignore=N: an Ignore packet (0x66, no payload) after every N packets
     * sent.  IHI0014Q 7.11.2 / protocol-notes 2.8: Ignore is padding that
     * a decompressor skips, legal between any two packets; when a real
     * ETM sends one (port-width padding) is not modelled: the period is
     * a model choice, counted in packets (not bytes) so that no packet is
     * ever split.  The Ignore goes through the FIFO like any packet. */
    if (e->o.ignore_every && p->kind != TB_PKT_IGNORE &&
        ++e->since_ignore >= e->o.ignore_every) {
        tb_packet ig;

        e->since_ignore = 0;
        tb_enc_pkt(e, &ig, TB_PKT_IGNORE);
        return tb_enc_emit(e, &ig);
    }
    return 0;
}

int tb_enc_emit(tb_encoder *e, tb_packet *p)
{
    return emit_pkt(e, p, -1);
}

int tb_enc_emit_hdr(tb_encoder *e, tb_packet *p, uint8_t byte)
{
    return emit_pkt(e, p, byte);
}

/* ccpkt: the standalone cycle count packet (0x04 + count, IHI0014Q 7.3.4;
 * count encoding protocol-notes 2.6) after a periodic I-sync in
 * cycle-accurate mode.  A periodic I-sync (0x08) carries no count
 * (protocol-notes 2.4, 8); the facts sheet lists the 0x04 packet (2.2)
 * and says a decompressor adds it to the pending cycles (4.2 step 6), but
 * not when a real ETM emits one: UNVERIFIED, so when and what is a model
 * choice.  The packet carries the cycles since the last cycle count given
 * out (W atoms or a count) up to the cycle before the next traced
 * instruction retires; that instruction's P-header then gives its last
 * W, so formats 1-3 still fit before ETMv3.3 and the total per
 * instruction is unchanged (decoder: pending cycles, 4.2). */
static int emit_ccpkt(tb_encoder *e)
{
    enc_etm *s = &e->p.etm;
    uint64_t upto = e->now ? e->now - 1 : 0, c = upto > s->cyc_acct ? upto - s->cyc_acct : 0;
    tb_packet p;

    if (upto > s->cyc_acct)
        s->cyc_acct = upto;
    tb_enc_pkt(e, &p, TB_PKT_CYCLE_COUNT);
    p.has_cc = true;
    p.cc = c > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)c;
    return tb_enc_emit(e, &p);
}

/* ------------------------------------------------------------------ */
/* Synchronisation, timestamps, context. */

static int emit_ts(tb_encoder *e)
{
    tb_packet p;

    tb_enc_pkt(e, &p, TB_PKT_TIMESTAMP);
    p.ts = tb_encoder_timestamp(&e->o, e->now);
    if (e->cfg.cycle_accurate && e->cfg.protocol == TB_PROTO_PTM) {
        p.has_cc = true; /* PTM timestamps carry a CC (protocol-notes 3.9) */
        p.cc = tb_enc_take_cc(e, e->now);
    }
    e->insn_since_ts = 0;
    return tb_enc_emit(e, &p);
}

static uint32_t ctxid_value(const tb_encoder *e)
{
    if (e->cfg.ctxid_bytes >= 4)
        return e->ctxid;
    return e->ctxid & ((1u << (8 * e->cfg.ctxid_bytes)) - 1u);
}

/* A-sync when due (and always the first time), then the I-sync, then a
 * full timestamp: the order TC2 shows (protocol-notes 3.4, 8).  lsip:
 * the LSiP form for that instruction (IHI0014Q 7.10.5): addr is its
 * address, execution goes on at its next address. */
static int enc_isync(tb_encoder *e, uint8_t reason, uint32_t addr, tb_isa isa,
                     const tb_exec_record *lsip)
{
    tb_packet p;
    int rc;

    if ((rc = e->ops->flush(e)) < 0)
        return rc;
    if (e->sync_due || !e->st.isyncs) {
        tb_enc_pkt(e, &p, TB_PKT_ASYNC);
        if ((rc = tb_enc_emit(e, &p)) < 0)
            return rc;
        e->sync_due = false;
    }
    tb_enc_pkt(e, &p, TB_PKT_ISYNC);
    p.reason = reason;
    p.addr = addr;
    p.isa = isa;
    p.ns = e->ns; /* IHI0014Q 7.10.5, IHI0035B 4.5: info bit 3 */
    e->ns_traced = e->ns;
    if (lsip) {
        p.lsip = true;
        p.lsip_addr = lsip->u.insn.next_addr;
        p.lsip_isa = (tb_isa)lsip->u.insn.next_isa;
    }
    if (e->cfg.ctxid_bytes) {
        p.has_ctxid = true;
        p.context_id = ctxid_value(e);
    }
    /* CC in every non-periodic I-sync in CA mode, never in periodic ones
     * (protocol-notes 2.4, 3.4). */
    if (e->cfg.cycle_accurate && reason != TB_ISYNC_PERIODIC) {
        p.has_cc = true;
        p.cc = e->ops->isync_cc(e);
    }
    if ((rc = tb_enc_emit(e, &p)) < 0)
        return rc;
    if (!e->dropping)
        e->st.isyncs++;
    if (e->o.cc_pkt && e->cfg.cycle_accurate && e->cfg.protocol == TB_PROTO_ETMV3 &&
        reason == TB_ISYNC_PERIODIC && (rc = emit_ccpkt(e)) < 0)
        return rc;
    e->ops->isync_done(e, addr, isa);
    if (e->cfg.timestamps && (rc = emit_ts(e)) < 0)
        return rc;
    if (e->cfg.vmid) {
        tb_enc_pkt(e, &p, TB_PKT_VMID);
        p.vmid = e->vmid;
        if ((rc = tb_enc_emit(e, &p)) < 0)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* The record loop. */

static __attribute__((noinline)) int process_insn_full(tb_encoder *e,
                                                       const tb_exec_record *r,
                                                       bool cancelled)
{
    int rc = 0;
    tb_isa isa = (tb_isa)r->u.insn.isa;

    e->st.insns++;
    e->now = r->cycle;
    if (e->dropping) {
        fifo_drain(e);
        if (e->fifo_level)
            goto done;
        /* Drained: start again with nothing held (protocol-notes 2.10). */
        e->dropping = false;
        e->ops->reset(e);
        tb_writer_reset(e->w);
        e->on = false;
        e->next_reason = TB_ISYNC_OVERFLOW;
    }
    /* No range: everything is in (tb_encoder_in_filter), without the call. */
    if (e->o.n_ranges && !tb_encoder_in_filter(&e->o, r->u.insn.addr)) {
        if (e->on) {
            rc = e->ops->trace_off(e);
            e->on = false;
            if (e->next_reason != TB_ISYNC_OVERFLOW)
                e->next_reason = TB_ISYNC_TRACE_ON;
        } else if (e->next_reason == TB_ISYNC_DEBUG_EXIT) {
            /* b11 only when the first instruction after the exit is
             * traced (IHI0014Q 7.10.5 Table 7.21): this one is not. */
            e->next_reason = TB_ISYNC_TRACE_ON;
        }
        goto done;
    }
    if (!e->on) {
        /* Trace on or an overflow restart, never a periodic I-sync,
         * may be LSiP (protocol-notes 2.4). */
        bool lsip = !cancelled && e->ops->lsip_due && e->ops->lsip_due(e, r);

        rc = enc_isync(e, e->next_reason, r->u.insn.addr, isa, lsip ? r : NULL);
        e->on = true;
        e->next_reason = TB_ISYNC_TRACE_ON;
    } else if (e->ns != e->ns_traced) {
        /* A security state change no packet told (PTM exception returns,
         * an MCR to SCR outside Monitor mode): an I-sync before the next
         * instruction carries it (IHI0014Q 7.10.5, IHI0035B 4.5 info bit
         * 3), after a PTM WP update for the instructions since the last
         * waypoint (trace_off), which the I-sync would otherwise drop. */
        if (!e->ops->sync_point(e))
            rc = e->ops->trace_off(e);
        if (rc >= 0)
            rc = enc_isync(e, TB_ISYNC_PERIODIC, r->u.insn.addr, isa, NULL);
    } else if (e->sync_due && e->ops->sync_point(e)) {
        rc = enc_isync(e, TB_ISYNC_PERIODIC, r->u.insn.addr, isa, NULL);
    }
    if (rc < 0 || e->dropping)
        goto done;
    if (e->o.trigger_at && !e->trigger_done && r->seq >= e->o.trigger_at) {
        tb_packet p;

        e->trigger_done = true;
        if ((rc = e->ops->flush(e)) < 0)
            goto done;
        tb_enc_pkt(e, &p, TB_PKT_TRIGGER);
        if ((rc = tb_enc_emit(e, &p)) < 0)
            goto done;
    }
    if (!cancelled)
        e->st.traced++;
    if ((rc = e->ops->insn(e, r, cancelled)) < 0)
        goto done;
    /* Not at an instruction an exception cancels: its atom and the
     * exception's branch packet, whose Cancel retracts it, stay together
     * (a decoder holds the last range back only until a packet other than
     * a branch, protocol-notes 4 "ETMv3 cancel support"); nor between a
     * v7-M exception return packet and the tail-chained exception's
     * packet, which follows it at once (IHI0014Q 7.6).  The timestamp
     * goes out at the next instruction. */
    if (e->cfg.timestamps && e->o.ts_period && ++e->insn_since_ts >= e->o.ts_period &&
        !cancelled && !e->v7m_chain && e->ops->sync_point(e)) {
        if ((rc = e->ops->flush(e)) < 0)
            goto done;
        rc = emit_ts(e);
    }
done:
    e->prev_cycle = r->cycle;
    return rc < 0 ? rc : 0;
}

/* Nearly every instruction: trace on, nothing to drain, no I-sync,
 * trigger or timestamp due, no filter to ask.  The same steps as
 * process_insn_full takes in that state, without its tests, and apart
 * from it so that this way stays short. */
static inline int process_insn(tb_encoder *e, const tb_exec_record *r, bool cancelled)
{
    int rc;

    if (cancelled || !tb_enc_plain_state(e))
        return process_insn_full(e, r, cancelled);
    e->st.insns++;
    e->now = r->cycle;
    e->st.traced++;
    rc = e->ops->insn(e, r, false);
    e->prev_cycle = r->cycle;
    return rc < 0 ? rc : 0;
}

static int process_exc(tb_encoder *e, const tb_exec_record *r)
{
    int rc = 0;

    e->now = r->cycle;
    /* Traced when trace is on at the time it is taken; one taken while
     * trace is off shows as the I-sync at the first traced instruction
     * (IHI0035B 5.2.3, "Turning trace on between two back-to-back
     * exceptions"). */
    if (!e->on && !e->dropping && e->cfg.protocol == TB_PROTO_PTM &&
        tb_encoder_in_filter(&e->o, r->u.exc.pref_return) &&
        (r->u.exc.cancelled || e->have_flow_isa)) {
        /* ...unless the preferred return address is itself traced (the
         * IRQ vector when the FIQ comes before its first instruction):
         * trace turns on there, so an I-sync at that address and then
         * the exception packet, with no WP update (IHI0035B 5.2.3, same
         * section).  The section is PFT's; ETMv3 is left as it was. */
        tb_isa isa = r->u.exc.cancelled ? (tb_isa)e->pend->u.insn.isa
                                        : (tb_isa)e->flow_isa;
        bool ns = e->ns;

        /* The I-sync names the return address: its state is the one
         * before the entry changed it (SMC from Non-secure). */
        if (e->ns_at_exc)
            e->ns = e->ns_prev;
        rc = enc_isync(e, e->next_reason, r->u.exc.pref_return, isa, NULL);
        e->ns = ns;
        e->on = true;
        e->next_reason = TB_ISYNC_TRACE_ON;
    }
    if (rc >= 0 && e->on && !e->dropping)
        rc = e->ops->exception(e, r);
    e->prev_cycle = r->cycle;
    if (r->u.exc.kind == TB_EXC_DEBUG_HALT) {
        /* Entry to Debug state: traced as an exception (number 1, to
         * address 0: the Cortex-A15 PTM reference trace, shared
         * trace_cov_a15), then no trace while the core is halted; the
         * restart is an I-sync with reason b11 "exit from debug state"
         * at the instruction it restarts at (IHI0014Q 7.10.5 Table 7.21,
         * IHI0035B 4.5 I-sync; the reference trace has it: 08 .. 61).
         * b10 is not used after a debug exit (Table 7.21), but a FIFO
         * still dropping keeps its overflow restart (the model does not
         * drain it while halted, docs/debug-halt.md).  The restart is
         * where the core was, in the state it was: the flow's ISA stays. */
        if (e->on && !e->dropping && rc >= 0)
            e->on = false;
        if (!e->dropping && e->next_reason != TB_ISYNC_OVERFLOW)
            e->next_reason = TB_ISYNC_DEBUG_EXIT;
        return rc;
    }
    e->flow_isa = r->u.exc.isa;
    e->have_flow_isa = true;
    return rc;
}

static int process_ctx(tb_encoder *e, const tb_exec_record *r)
{
    bool cid = r->u.ctx.context_id != e->ctxid, vm = r->u.ctx.vmid != e->vmid;
    tb_packet p;
    int rc;

    e->now = r->cycle;
    e->ctxid = r->u.ctx.context_id;
    e->vmid = r->u.ctx.vmid;
    if (!e->on || e->dropping)
        return 0; /* the next I-sync carries it */
    if ((cid && e->cfg.ctxid_bytes) || (vm && e->cfg.vmid))
        if ((rc = e->ops->flush(e)) < 0)
            return rc;
    if (cid && e->cfg.ctxid_bytes) {
        tb_enc_pkt(e, &p, TB_PKT_CONTEXT_ID);
        p.has_ctxid = true;
        p.context_id = ctxid_value(e);
        if ((rc = tb_enc_emit(e, &p)) < 0)
            return rc;
    }
    if (vm && e->cfg.vmid) {
        tb_enc_pkt(e, &p, TB_PKT_VMID);
        p.vmid = e->vmid;
        if ((rc = tb_enc_emit(e, &p)) < 0)
            return rc;
    }
    return 0;
}

static int flush_pending(tb_encoder *e, bool cancelled)
{
    int rc;

    if (!e->have_pending)
        return 0;
    e->have_pending = false;
    rc = process_insn(e, e->pend, cancelled);
    e->n_xfer = 0;
    return rc;
}

int tb_encoder_finish(tb_encoder *e)
{
    int rc;

    if (!e)
        return TB_ERR_INVAL;
    if (e->port)
        return tb_enc_port_finish(e);
    if (e->err)
        return e->err;
    if (e->finished)
        return 0;
    if ((rc = flush_pending(e, false)) < 0)
        return e->err = rc;
    /* Trace ends as if disabled: held atoms and the position reached go
     * out (PTM: WP update, protocol-notes 3.8). */
    if (e->on && !e->dropping && (rc = e->ops->trace_off(e)) < 0)
        return e->err = rc;
    e->on = false;
    e->finished = true;
    return 0;
}

/* One record of tb_encoder_push (ETMv3, PTM).  keep: r stays valid
 * until the next record (tb_encoder_push_many's), so a pending
 * instruction is pointed at, not copied. */
static inline int push_rec(tb_encoder *e, const tb_exec_record *r, bool keep)
{
    int rc = 0;

    if (e->err)
        return e->err;
    if (e->finished)
        return e->err = TB_ERR_STATE;
    e->st.records++;
    if (r->kind != TB_REC_EXCEPTION)
        e->ns_at_exc = false;
    switch (r->kind) {
    case TB_REC_INSN:
        if (r->u.insn.isa != TB_ISA_ARM && r->u.insn.isa != TB_ISA_THUMB)
            return e->err = TB_ERR_UNSUPPORTED;
        if (r->u.insn.size != 2 && r->u.insn.size != 4)
            return e->err = TB_ERR_INVAL;
        rc = flush_pending(e, false);
        if (keep) {
            e->pend = r;
        } else {
            e->pending = *r;
            e->pend = &e->pending;
        }
        e->have_pending = true;
        e->flow_isa = r->u.insn.next_isa;
        e->have_flow_isa = true;
        break;
    case TB_REC_EXCEPTION:
        if (r->u.exc.isa != TB_ISA_ARM && r->u.exc.isa != TB_ISA_THUMB)
            return e->err = TB_ERR_UNSUPPORTED;
        rc = flush_pending(e, r->u.exc.cancelled);
        if (rc >= 0)
            rc = process_exc(e, r);
        e->ns_at_exc = false;
        e->v7m_preempt = false;
        break;
    case TB_REC_CONTEXT:
        rc = flush_pending(e, false);
        if (rc >= 0)
            rc = process_ctx(e, r);
        break;
    case TB_REC_STATE:
        /* The instruction that changed the state is still pending: its
         * branch packet, if it has one, tells the change
         * (tb_enc_state_bytes); else the next I-sync does. */
        e->ns_next = r->u.state.ns;
        e->state_due = true;
        rc = flush_pending(e, false);
        e->state_due = false;
        e->ns_prev = e->ns;
        e->ns = r->u.state.ns;
        e->ns_at_exc = true; /* until the next record (process_exc) */
        return rc < 0 ? (e->err = rc) : 0;
    case TB_REC_END:
        return tb_encoder_finish(e);
    case TB_REC_EXC_RETURN:
        /* v7-M: the return instruction is still pending; with a
         * tail-chain its exception return packet is followed by the next
         * exception's branch packet, not by a branch to the frame's
         * return address (DDI0337E 15.5.2; docs/cortex-m.md 2). */
        if (!e->have_pending || !(e->pend->u.insn.flags & TB_INSN_EXC_RETURN))
            return e->err = TB_ERR_INVAL;
        e->v7m_chain = r->u.eret.tailchain;
        rc = flush_pending(e, false);
        e->v7m_chain = false;
        e->v7m_preempt = r->u.eret.tailchain && r->u.eret.preempted;
        break;
    case TB_REC_DATA:
        /* A transfer of the instruction just pushed (still pending, so
         * that its atom and its data go out together); ignored without
         * data trace, so instruction trace is the same with or without
         * data records. */
        if (!e->cfg.data_trace)
            return 0;
        if (!e->have_pending || r->u.data.insn_addr != e->pend->u.insn.addr ||
            (r->u.data.size != 1 && r->u.data.size != 2 && r->u.data.size != 4))
            return e->err = TB_ERR_INVAL;
        if (e->n_xfer >= ENC_MAX_XFER)
            return e->err = TB_ERR_LIMIT;
        e->xfer[e->n_xfer].addr = r->u.data.addr;
        e->xfer[e->n_xfer].value = r->u.data.value;
        e->xfer[e->n_xfer].size = r->u.data.size;
        e->xfer[e->n_xfer].flags = r->u.data.flags;
        e->n_xfer++;
        return 0;
    default:
        return e->err = TB_ERR_INVAL;
    }
    if (rc < 0)
        e->err = rc;
    return rc < 0 ? rc : 0;
}

int tb_encoder_push(tb_encoder *e, const tb_exec_record *r)
{
    if (!e || !r)
        return TB_ERR_INVAL;
    if (e->port)
        return tb_enc_port_push(e, r);
    return push_rec(e, r, false);
}

int tb_encoder_push_many(tb_encoder *e, const tb_exec_record *recs, size_t n,
                         tb_encoder_ready_cb ready, void *ctx)
{
    int rc = 0;
    size_t i;

    if (!e || (!recs && n))
        return TB_ERR_INVAL;
    if (e->port) {
        /* The port model has no ready hook: the caller catches up
         * before each record. */
        for (i = 0; i < n && rc >= 0; i++) {
            if (ready && ready(ctx, i + 1))
                return TB_ERR_STOPPED;
            rc = tb_encoder_push(e, &recs[i]);
        }
        return rc;
    }
    e->ready = ready;
    e->ready_ctx = ctx;
    e->ready_done = 0;
    e->batch = recs;
    for (i = 0; i < n && rc >= 0; i++) {
        size_t j, m;

        e->ready_at = i + 1;
        rc = push_rec(e, &recs[i], true);
        /* A run of instructions, each followed by another: the protocol
         * takes them in one call (insn_run) while the state allows, as
         * the pushes of recs[i + 1 .. j] would handle recs[i .. j - 1]. */
        if (rc < 0 || !e->ops->insn_run || recs[i].kind != TB_REC_INSN)
            continue;
        _Static_assert(TB_ISA_ARM == 0 && TB_ISA_THUMB == 1, "the isa test below");
        /* push_rec's checks of an instruction: isa is ARM (0) or Thumb
         * (1), size 2 or 4, i.e. size - 2 is 0 or 2 (as a byte). */
        for (j = i; j + 1 < n && recs[j + 1].kind == TB_REC_INSN &&
                    recs[j + 1].u.insn.isa <= TB_ISA_THUMB &&
                    !((uint8_t)(recs[j + 1].u.insn.size - 2) & 0xFD);
             j++)
            ;
        while (i < j && rc >= 0 && tb_enc_plain_state(e)) {
            m = e->ops->insn_run(e, &recs[i], j - i, &rc);
            e->st.records += m;
            i += m;
            e->pend = &recs[i];
            e->flow_isa = recs[i].u.insn.next_isa;
        }
    }
    e->ready = NULL;
    /* The batch is the caller's: the last instruction (pending, or read
     * by a cancelling exception after it) is kept. */
    if (e->pend != &e->pending) {
        e->pending = *e->pend;
        e->pend = &e->pending;
    }
    return rc;
}

int tb_encoder_exec_cb(void *ctx, const tb_exec_record *r)
{
    return tb_encoder_push(ctx, r) < 0;
}

int tb_encoder_error(const tb_encoder *e)
{
    return e ? e->err : TB_ERR_INVAL;
}

const tb_encoder_stats *tb_encoder_get_stats(const tb_encoder *e)
{
    return e ? (e->port ? tb_enc_port_stats(e) : &e->st) : NULL;
}

const tb_config *tb_encoder_get_config(const tb_encoder *e)
{
    return e ? &e->cfg : NULL;
}

tb_encoder *tb_encoder_new(const tb_encoder_opts *o, tb_trace_sink sink,
                           void *ctx)
{
    tb_encoder *e;
    tb_encoder_opts own;

    /* A refused size: tb_encoder_config_err gives the reason. */
    if (!o || tb_enc_opts_take(&own, o, NULL, 0) < 0)
        return NULL;
    o = &own;
    e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->o = *o;
    if (o->protocol == TB_PROTO_ETMV1 || o->protocol == TB_PROTO_ETMV2) {
        e->sink = sink;
        e->sink_ctx = ctx;
        if (tb_encoder_config(o, &e->cfg) < 0 || tb_enc_port_new(e) < 0) {
            free(e);
            return NULL;
        }
        return e;
    }
    if (tb_encoder_config(o, &e->cfg) < 0 || !(e->w = tb_writer_new(&e->cfg))) {
        free(e);
        return NULL;
    }
    e->ops = e->cfg.protocol == TB_PROTO_PTM ? &tb_enc_ptm_ops
             : e->cfg.data_only                ? &tb_enc_etmv3_do_ops
                                                : &tb_enc_etmv3_ops;
    e->plain_cfg = !e->o.n_ranges && !e->o.trigger_at && !(e->cfg.timestamps && e->o.ts_period);
    e->sink = sink;
    e->sink_ctx = ctx;
    e->next_reason = TB_ISYNC_TRACE_ON;
    e->pend = &e->pending;
    e->ops->reset(e);
    return e;
}

void tb_encoder_set_packet_cb(tb_encoder *e, tb_packet_cb cb, void *ctx)
{
    if (e) {
        e->pcb = cb;
        e->pcb_ctx = ctx;
        if (e->port)
            tb_enc_port_set_cbs(e);
    }
}

void tb_encoder_set_overflow_cb(tb_encoder *e, tb_overflow_cb cb, void *ctx)
{
    if (e) {
        e->ocb = cb;
        e->ocb_ctx = ctx;
        if (e->port)
            tb_enc_port_set_cbs(e);
    }
}

void tb_encoder_free(tb_encoder *e)
{
    if (!e)
        return;
    tb_enc_port_free(e);
    tb_writer_free(e->w);
    free(e);
}
