/*
 * PTM (PFT 1.0/1.1) trace logic model: exec records -> PTM packets.
 *
 * PFT traces waypoints only (protocol-notes 0.3, 3.12): a waypoint that
 * ran gives an E atom, one whose condition failed an N atom; a taken
 * indirect branch gives a branch address packet instead (and, under
 * branch broadcast, every taken branch); non-waypoints give nothing until
 * an exception or trace-off needs the position (WP update, IHI0035B
 * 5.2.3).  The return stack leaves the address out exactly when the
 * decoder's stack predicts it (IHI0035B B.3.2, protocol-notes 3.10).
 */
#include <string.h>

#include "encoder_internal.h"
#include "tracebench/pkt_codec.h"

static void ptm_reset(tb_encoder *e)
{
    enc_ptm *p = &e->p.ptm;

    memset(p, 0, sizeof *p);
    p->base_isa = TB_ISA_UNKNOWN;
    p->last_isa = TB_ISA_UNKNOWN;
}

static int ptm_flush(tb_encoder *e)
{
    enc_ptm *p = &e->p.ptm;
    tb_packet k;

    if (!p->n)
        return 0;
    tb_enc_pkt(e, &k, TB_PKT_ATOM);
    memcpy(k.seq, p->atoms, p->n);
    k.seq_len = (uint8_t)p->n;
    k.atom_count = (uint8_t)p->n;
    p->n = 0;
    tb_enc_completes(e, p->atom_seq);
    return tb_enc_emit(e, &k);
}

/* Non-CA: up to five atoms a packet; CA: one, with its cycles
 * (protocol-notes 3.5). */
static int ptm_atom(tb_encoder *e, char a, uint64_t cycle, uint64_t seq)
{
    enc_ptm *p = &e->p.ptm;
    tb_packet k;

    if (e->cfg.cycle_accurate) {
        tb_enc_pkt(e, &k, TB_PKT_ATOM);
        k.seq[0] = a;
        k.seq_len = 1;
        k.atom_count = 1;
        k.has_cc = true;
        k.cc = tb_enc_take_cc(e, cycle);
        tb_enc_completes(e, seq);
        return tb_enc_emit(e, &k);
    }
    p->atoms[p->n++] = a;
    p->atom_seq = seq;
    return p->n == 5 ? ptm_flush(e) : 0;
}

/* Branch address or WP update to addr.  Right after a WP update the
 * packet carries enough bytes that the merge gives addr against either
 * base (protocol-notes 3.7, 3.8). */
static int ptm_address(tb_encoder *e, tb_packet *k)
{
    enc_ptm *p = &e->p.ptm;
    uint32_t before = p->base;
    tb_isa before_isa = p->base_isa;
    int rc;

    if (p->wp_ambig) {
        uint8_t tmp[5];
        int n = tb_addr_encode(TB_ADDR_SIXBIT, k->addr, k->isa, p->pre_wp_base,
                               p->pre_wp_isa, k->has_exc, 0, tmp);
        if (n < 0)
            return n;
        k->addr_bits = n >= 5 ? 32 : (uint8_t)tb_addr_bits_for(TB_ADDR_SIXBIT, k->isa,
                                                               (unsigned)n);
    }
    if ((rc = tb_enc_emit(e, k)) < 0)
        return rc;
    p->base = k->addr;
    p->base_isa = k->isa;
    p->wp_ambig = k->kind == TB_PKT_WP_UPDATE;
    p->pre_wp_base = before;
    p->pre_wp_isa = before_isa;
    return 0;
}

static int ptm_branch(tb_encoder *e, uint32_t addr, tb_isa isa, uint64_t cycle,
                      uint64_t seq)
{
    tb_packet k;
    int rc;

    if ((rc = ptm_flush(e)) < 0)
        return rc;
    tb_enc_branch_pkt(e, &k, addr, isa);
    /* A security state change on this branch: with exc0, exception
     * bytes with number 0 and the new NS (IHI0035B 4.5.4: only a nonzero
     * Exception field makes an exception branch; a non-exception branch
     * implies its E atom).  Without it (the default), the I-sync before
     * the next instruction tells the change (encoder.c process_insn_full),
     * which every decoder reads alike: OpenCSD 1.3.3 takes any PTM
     * exception byte for an exception (docs/opencsd-bugs.md 17). */
    if (e->o.ns_exc0) {
        tb_enc_state_bytes(e, &k);
        k.exc_bytes = k.has_exc ? 1 : 0;
    }
    if (e->cfg.cycle_accurate) {
        k.has_cc = true;
        k.cc = tb_enc_take_cc(e, cycle);
    }
    tb_enc_completes(e, seq);
    return ptm_address(e, &k);
}

static void rs_push(enc_ptm *p, uint32_t addr, tb_isa isa)
{
    p->rs_head = (p->rs_head + 1) % ENC_RS_DEPTH;
    p->rs_addr[p->rs_head] = addr;
    p->rs_isa[p->rs_head] = (uint8_t)isa;
    if (p->rs_count < ENC_RS_DEPTH)
        p->rs_count++;
}

static bool rs_top_is(const enc_ptm *p, uint32_t addr, tb_isa isa)
{
    return p->rs_count && p->rs_addr[p->rs_head] == addr &&
           p->rs_isa[p->rs_head] == (uint8_t)isa;
}

static void rs_pop(enc_ptm *p)
{
    p->rs_head = (p->rs_head + ENC_RS_DEPTH - 1) % ENC_RS_DEPTH;
    p->rs_count--;
}

static int ptm_insn(tb_encoder *e, const tb_exec_record *r, bool cancelled)
{
    enc_ptm *p = &e->p.ptm;
    tb_wp_class wp = (tb_wp_class)r->u.insn.wp_class;
    uint8_t fl = r->u.insn.flags;
    tb_isa isa = (tb_isa)r->u.insn.isa, next_isa = (tb_isa)r->u.insn.next_isa;
    uint32_t next = r->u.insn.next_addr, ret = r->u.insn.addr + r->u.insn.size;
    bool link = wp == TB_WP_DIRECT_LINK || wp == TB_WP_INDIRECT_LINK;
    int rc;

    /* A cancelled instruction did not complete: PFT has no cancel, the
     * exception's return address (the WP update before it) says so. */
    if (cancelled)
        return 0;
    if (wp == TB_WP_BARRIER && !e->cfg.dmb_waypoint)
        wp = TB_WP_NONE; /* DMB/DSB only with ETMCCER[24] (3.12) */
    if (wp == TB_WP_NONE) {
        p->need_wp = true;
        p->last_addr = r->u.insn.addr;
        p->last_isa = isa;
        p->last_seq = r->seq;
        return 0;
    }
    p->need_wp = false;
    if (fl & TB_INSN_COND_FAILED)
        return ptm_atom(e, TB_ATOM_N, r->cycle, r->seq); /* any class (3.12) */

    switch (wp) {
    case TB_WP_DIRECT:
    case TB_WP_DIRECT_LINK:
        if (e->cfg.branch_broadcast &&
            ((fl & TB_INSN_TAKEN) || next != ret || next_isa != isa))
            rc = ptm_branch(e, next, next_isa, r->cycle, r->seq);
        else
            rc = ptm_atom(e, TB_ATOM_E, r->cycle, r->seq);
        break;
    case TB_WP_INDIRECT:
    case TB_WP_INDIRECT_LINK:
        /* The decoder pops only for an E atom on an indirect waypoint and
         * never for a branch packet (3.10), so the encoder pops only when
         * it leaves the address out.  Exception returns always carry
         * their address, then the ERET packet (3.9). */
        if (e->cfg.return_stack && !e->cfg.branch_broadcast &&
            !(fl & TB_INSN_EXC_RETURN) && rs_top_is(p, next, next_isa)) {
            rs_pop(p);
            rc = ptm_atom(e, TB_ATOM_E, r->cycle, r->seq);
        } else {
            rc = ptm_branch(e, next, next_isa, r->cycle, r->seq);
            if (rc >= 0 && (fl & TB_INSN_EXC_RETURN)) {
                tb_packet k;

                tb_enc_pkt(e, &k, TB_PKT_EXC_RETURN);
                rc = tb_enc_emit(e, &k);
            }
        }
        break;
    default: /* ISB, and DMB/DSB when they are waypoints */
        rc = ptm_atom(e, TB_ATOM_E, r->cycle, r->seq);
        break;
    }
    /* Push on every executed link branch, after any pop (3.10). */
    if (rc >= 0 && link && e->cfg.return_stack)
        rs_push(p, ret, isa);
    return rc;
}

/* insn_run: the waypoints one by one (ptm_insn), of the non-waypoints
 * between them only the last, the one a WP update would name. */
static size_t ptm_insn_run(tb_encoder *e, const tb_exec_record *recs, size_t n, int *rc)
{
    enc_ptm *p = &e->p.ptm;
    const tb_exec_record *last = NULL;
    bool dmb = e->cfg.dmb_waypoint;
    size_t i = 0;

    *rc = 0;
    while (i < n) {
        const tb_exec_record *r = &recs[i++];
        uint8_t wp = r->u.insn.wp_class;

        if (wp == TB_WP_NONE || (wp == TB_WP_BARRIER && !dmb)) {
            last = r;
            continue;
        }
        tb_enc_run_at(e, r);
        if ((*rc = ptm_insn(e, r, false)) < 0 || !tb_enc_plain_state(e))
            break;
    }
    /* As ptm_insn leaves it: the last non-waypoint, and a WP update due
     * when no waypoint came after it. */
    if (last) {
        p->need_wp = last == &recs[i - 1];
        p->last_addr = last->u.insn.addr;
        p->last_isa = (tb_isa)last->u.insn.isa;
        p->last_seq = last->seq;
    }
    e->now = e->prev_cycle = recs[i - 1].cycle;
    e->st.insns += i;
    e->st.traced += i;
    return i;
}

/* The instructions since the last waypoint, up to and including the
 * last one, become a waypoint (IHI0035B 5.2.3 table 5.3, note a). */
static int ptm_wp_update(tb_encoder *e)
{
    enc_ptm *p = &e->p.ptm;
    tb_packet k;
    int rc;

    if ((rc = ptm_flush(e)) < 0 || !p->need_wp)
        return rc;
    p->need_wp = false;
    tb_enc_pkt(e, &k, TB_PKT_WP_UPDATE);
    k.addr = p->last_addr;
    k.isa = p->last_isa;
    tb_enc_completes(e, p->last_seq);
    return ptm_address(e, &k);
}

/* WP update when instructions ran since the last waypoint, then the
 * exception branch packet; back to back there is none between
 * (IHI0035B 5.2.3 tables 5.3-5.5). */
static int ptm_exception(tb_encoder *e, const tb_exec_record *r)
{
    tb_packet k;
    int rc;

    if ((rc = ptm_wp_update(e)) < 0)
        return rc;
    tb_enc_exception_pkt(e, &k, r);
    k.exc_bytes = 1;
    e->ns_traced = k.ns;
    if (e->cfg.cycle_accurate) {
        k.has_cc = true;
        k.cc = tb_enc_take_cc(e, r->cycle);
    }
    return ptm_address(e, &k);
}

static int ptm_trace_off(tb_encoder *e)
{
    return ptm_wp_update(e);
}

/* Both ends empty the return stack at every I-sync (protocol-notes 3.4,
 * 3.10); the I-sync address is the new compression base. */
static void ptm_isync_done(tb_encoder *e, uint32_t addr, tb_isa isa)
{
    enc_ptm *p = &e->p.ptm;

    p->rs_count = 0;
    p->need_wp = false;
    p->base = addr;
    p->base_isa = isa;
    p->wp_ambig = false;
}

/* A periodic I-sync names the address the decoder already predicts, so
 * it can only follow a waypoint (protocol-notes 3.4). */
static bool ptm_sync_point(const tb_encoder *e)
{
    return !e->p.ptm.need_wp;
}

static uint32_t ptm_isync_cc(tb_encoder *e)
{
    return tb_enc_take_cc(e, e->prev_cycle);
}

const enc_ops tb_enc_ptm_ops = {
    ptm_reset, ptm_flush, ptm_insn, ptm_exception, ptm_trace_off,
    ptm_isync_done, ptm_sync_point, ptm_isync_cc,
    NULL, /* no LSiP: PFT has no data trace */
    ptm_insn_run,
};
