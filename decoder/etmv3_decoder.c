/*
 * ETMv3 decompressor: packets + image -> elements (protocol-notes 4.2).
 *
 * One atom per instruction (IHI0014Q 7.3.1): E executed, N failed its
 * condition, W a cycle boundary.  Direct branch targets come from the
 * image, indirect ones from branch address packets (IHI0014Q 6.7.1).
 * Instructions are gathered into ranges of up to 32 (atom_bits holds the
 * N flags); a taken branch ends a range.  The newest range is held back
 * until another element is due, so that a branch packet with Cancel
 * (IHI0014Q 6.7.1, exception information) can retract its last
 * instruction.
 *
 * OpenCSD's ETMv3 quirks are not copied (protocol-notes 4.4): the ISA
 * after a BLX(imm) carries across P-headers, and an LSiP I-sync emits
 * its load/store instruction.
 *
 * Data trace (IHI0014Q 7.4): DATA elements, one per transfer, on the
 * packet path only (etmv3_data.c; docs/formats.md).  P-headers are
 * walked in batches (etmv3_phdr.c); etmv3_internal.h has the state.
 */
#include <stdlib.h>
#include <string.h>

#include "etmv3_internal.h"
#include "backend.h"

/* The walk leaves block b by its branch (taken) or past its end: the
 * next lookup follows that edge's link (tb_block_follow). */
static inline void leave_block(tb_etmv3_decoder *d, const tb_block *b, bool taken)
{
    d->blk_valid = false;
    d->blk_from = b;
    d->blk_edge = taken ? TB_EDGE_TAKEN : TB_EDGE_ON;
}

/* The flow jumps to an address no block edge leads to. */
static inline void forget_block(tb_etmv3_decoder *d)
{
    d->blk_valid = false;
    d->blk_from = NULL;
}

/* The shared core's hooks (dec_core.h): an element goes out after the
 * held range; a jump drops the current block and the edge to follow; a
 * branch's exception fields are its x, a Cancel among them; an I-sync
 * has its LSiP address. */
#define TB_DEC tb_etmv3_decoder
#define TB_DEC_ISYNC tb_etmv3_isync
#define TB_DEC_BRANCH tb_etmv3_branch
#define TB_DEC_EXC tb_etmv3_exc
#define TB_DEC_EXC_OF(br) (&(br)->x)
#define TB_DEC_ISYNC_MORE(is, pkt)                                                        \
    ((is)->lsip = (pkt)->lsip, (is)->lsip_addr = (pkt)->lsip_addr,                       \
     (is)->lsip_isa = (uint8_t)(pkt)->lsip_isa)
#define TB_DEC_BRANCH_MORE(br, pkt) ((br)->x.exc_cancel = (pkt)->exc_cancel)
#define TB_DEC_OUT(d, e, el) etmv3_emit(d, e, el)
#define TB_DEC_JUMP(d) forget_block(d)
#define TB_DEC_JAZELLE 1
#include "dec_core.h"

static void reset_state(tb_etmv3_decoder *d)
{
    dec_reset(d);
    d->pending_cc = 0;
    d->rng_valid = d->rng_open = d->rng_loop = false;
    d->rng.count = 0;
    d->xret_held = false;
    d->out_index = 0;
    tb_etmv3_dec_data_reset(d);
}

tb_etmv3_decoder *tb_etmv3_decoder_new(const tb_config *cfg,
                                       const tb_memimage *mem)
{
    tb_config own; /* the caller's, as this build's (struct_size.h) */
    tb_etmv3_decoder *d = tb_dec_alloc(sizeof *d, &cfg, &own, mem, TB_PROTO_ETMV3);
    if (!d)
        return NULL;
    dec_init(d, cfg, mem);
    d->rmax = 32;
    for (unsigned h = 0; h < 256; h++) {
        char seq[20];
        const int len = tb_etmv3_phdr_seq(cfg, (uint8_t)h, seq);
        phdr_atoms a = {0};

        d->hlim[h] = 0xFF;
        if (len < 0)
            continue;
        tb_etmv3_dec_atoms_from_seq(seq, (unsigned)len, &a);
        /* hS has room for 8 atoms, as many as a cycle-accurate header
         * has (IHI0014Q 7.3.1 table 7.3: format 1, 7 E and an N); plain
         * trace needs no W counts, and hoff takes HDR_ATOMS_MAX. */
        if (cfg->cycle_accurate && a.n > 8) {
            free(d);
            return NULL;
        }
        d->hlim[h] = a.n;
        d->hnm[h] = a.nmask;
        for (unsigned t = 0; t < 8; t++) {
            d->hS[h][t] = a.S[t + 1];
            d->hW[h][t] = a.wtot;
        }
    }
    /* Only flow changes end a block: every instruction has its atom. */
    d->bc = tb_block_cache_new(mem, TB_WPMASK_BRANCHES);
    if (!d->bc) {
        free(d);
        return NULL;
    }
    reset_state(d);
    return d;
}

/* Starts the newest range at addr (the caller flushed the last one). */
static inline void open_range(tb_etmv3_decoder *d, uint64_t index, uint32_t addr)
{
    tb_element *r = &d->rng;

    r->index = index;
    r->start = r->end = addr;
    r->isa = d->isa;
    r->count = 0;
    r->atom_bits = 0;
    r->has_cc = d->cfg.cycle_accurate;
    r->cc = 0;
    d->rng_valid = d->rng_open = true;
    d->rng_loop = false;
}

/* Appends one traced instruction to the newest range. */
static void add_insn(tb_etmv3_decoder *d, tb_emit *e, uint64_t index,
                     uint32_t addr, uint8_t size, uint8_t wp, char atom,
                     uint32_t cycles)
{
    tb_element *r = &d->rng;

    if (!d->rng_open || r->end != addr || r->isa != d->isa || r->count >= d->rmax) {
        etmv3_flush_range(d, e);
        open_range(d, index, addr);
    }
    if (atom == 'N')
        r->atom_bits |= 1u << r->count;
    r->count++;
    r->end = addr + size;
    r->last_addr = addr;
    r->last_size = size;
    r->last_wp = wp;
    r->last_atom = atom;
    if (d->cfg.cycle_accurate)
        r->cc += cycles;
}

/* The instruction at addr is not in the image: one instruction lost. */
static void lose_address(tb_etmv3_decoder *d, tb_emit *e, uint64_t index,
                         uint32_t addr, uint8_t status, uint32_t cycles)
{
    dec_lose_address(d, e, index, addr, status, 1, d->cfg.cycle_accurate, cycles);
    d->rng.count = 0; /* the newest instruction is in no range (tb_etmv3_dec_do_data) */
}

/* One E or N atom: the fate of the instruction at pc. */
void tb_etmv3_dec_do_atom(tb_etmv3_decoder *d, tb_emit *e, uint64_t index, char atom,
                          uint32_t cycles)
{
    uint32_t addr = d->pc;
    const tb_block *b;
    uint8_t size, wp = TB_WP_NONE;
    bool last;

    if (!d->pc_known) {
        dec_unknown_atom(d, e, index, atom, d->cfg.cycle_accurate, cycles);
        d->rng.count = 0; /* the newest instruction is in no range */
        return;
    }
    if (!d->blk_valid) {
        d->blk = tb_block_follow(d->bc, d->blk_from, d->blk_edge, addr, (tb_isa)d->isa);
        d->blk_idx = 0;
        d->blk_valid = true;
    }
    b = d->blk;
    if (b->n == 0) {
        lose_address(d, e, index, addr, b->status, cycles);
        return;
    }
    last = d->blk_idx + 1 == b->n;
    if (last) {
        size = b->last.size;
        wp = b->last.wp_class;
    } else {
        size = (uint8_t)tb_block_size_at(b, d->blk_idx, addr);
    }
    add_insn(d, e, index, addr, size, wp, atom, cycles);
    d->pc = addr + size;
    if (!last) {
        d->blk_idx++;
        return;
    }
    leave_block(d, b, b->status == TB_BLOCK_WP && atom == 'E');
    if (b->status != TB_BLOCK_WP || atom == 'N')
        return;
    /* A taken branch ends the range. */
    d->rng_open = false;
    if (b->last.has_target) {
        d->pc = b->last.target;
        d->isa = b->last.target_isa;
    } else {
        d->pc_known = false; /* the branch packet brings the address */
    }
}

static void do_isync(tb_etmv3_decoder *d, tb_emit *e, const tb_etmv3_isync *pkt)
{
    uint8_t isa = pkt->isa;
    bool ctx_changed = dec_isync_new_context(d, pkt);

    etmv3_flush_range(d, e);
    /* Data packets after an I-sync belong to an instruction traced after
     * it, or to its LSiP instruction (IHI0014Q 7.10.5; tb_etmv3_dec_do_data). */
    d->rng.count = 0;
    if (!d->synced || d->gap || pkt->reason != TB_ISYNC_PERIODIC || pkt->has_cc) {
        /* Trace is on from the first instruction shown: an LSiP I-sync's
         * load/store (IHI0014Q 7.14.2), else the address. */
        tb_element *el = dec_trace_on(d, pkt, dec_insn_addr(pkt->addr, isa));

        /* The I-sync's count covers the time trace was off, with the W
         * atoms still pending (protocol-notes 2.4, 6.3). */
        el->has_cc = pkt->has_cc;
        el->cc = 0;
        if (pkt->has_cc) {
            el->cc = pkt->cc + (d->synced ? d->pending_cc : 0);
            d->pending_cc = 0;
        }
        etmv3_emit(d, e, el);
    }
    if (!d->synced)
        d->pending_cc = 0; /* W's before the first address belong nowhere */
    dec_isync_state(d, pkt);
    if (ctx_changed)
        dec_context(d, e, pkt->index);
    if (d->cfg.data_only) {
        /* Data-only I-sync (IHI0014Q 7.10.5): no address, and no
         * instruction trace follows (7.4.10). */
        d->pc_known = false;
        return;
    }
    d->pc = dec_insn_addr(pkt->addr, isa);
    d->pc_known = true;
    forget_block(d);
    if (pkt->lsip) {
        /* IHI0014Q 7.10.5: the address is the load/store in progress,
         * executed as if by an E atom; decoding resumes at the
         * compressed "current instruction" address. */
        tb_insn in;

        if (tb_block_insn(d->bc, d->pc, (tb_isa)isa, &in) > 0) {
            add_insn(d, e, pkt->index, d->pc, in.size, in.wp_class, 'E', 0);
            d->rng_open = false;
        } else {
            lose_address(d, e, pkt->index, d->pc, TB_BLOCK_NACC, 0);
        }
        d->isa = pkt->lsip_isa;
        d->pc = dec_insn_addr(pkt->lsip_addr, d->isa);
        d->pc_known = true;
        forget_block(d);
    }
}

/* Drops the newest instruction of range r (count >= 2) for a Cancel.
 * Cancels are rare, so the instruction before it is found again from
 * the image here instead of being tracked at every step of the walk. */
static bool retract_last(tb_etmv3_decoder *d, tb_element *r)
{
    uint32_t addrs[32];
    const tb_block *b;
    uint32_t prev;

    if (tb_range_addrs(d->mem, r, addrs, r->count) != (int)r->count)
        return false;
    prev = addrs[r->count - 2];
    /* Its waypoint class: a waypoint is a one-instruction block of its
     * own (only flow changes end blocks here). */
    d->blk_valid = false;
    b = tb_block_get(d->bc, prev, (tb_isa)r->isa);
    r->count--;
    r->atom_bits &= ~(1u << r->count);
    r->end = r->last_addr;
    r->last_size = (uint8_t)(r->last_addr - prev);
    r->last_addr = prev;
    r->last_wp = b->n == 1 ? b->last.wp_class : TB_WP_NONE;
    r->last_atom = ((r->atom_bits >> (r->count - 1)) & 1) ? 'N' : 'E';
    return true;
}

static void do_branch(tb_etmv3_decoder *d, tb_emit *e, const tb_etmv3_branch *pkt)
{
    bool cancelled = false, ctx_changed, chain = false, eret_cancel = false;
    uint32_t cancelled_addr = 0;
    int err = 0;

    if (d->ehold) {
        /* v7-M, after an exception return packet: exception bytes make
         * this the entry of the next handler by tail-chaining (the frame
         * stays, so no return address is traced); a Cancel there is the
         * return's, pre-empted as it unstacked: the exception return
         * packet goes, the instruction stays (DDI0337E 15.5.2). */
        d->ehold = false;
        d->started = true;
        chain = pkt->x.has_exc && pkt->x.exc_num != 0;
        eret_cancel = pkt->x.has_exc && pkt->x.exc_cancel;
        if (!eret_cancel)
            etmv3_emit(d, e, &d->eret);
    }
    if (pkt->x.has_exc && pkt->x.exc_cancel && !eret_cancel) {
        /* The newest traced instruction did not complete: retract it,
         * and the exception exit it would have made (xret_held). */
        d->rng_loop = false;
        if (d->rng_valid && d->rng.count > 0) {
            tb_element *r = &d->rng;

            d->xret_held = false;
            cancelled = true;
            cancelled_addr = r->last_addr;
            if (r->count == 1) {
                /* The range goes, its cycles stay (protocol-notes 2.7,
                 * 4.2: the cancelled atom's W's were spent): with no
                 * instruction before it to keep them, as retract_last()
                 * does, they go to the next element with a count. */
                d->pending_cc += r->cc;
                d->rng_valid = d->rng_open = false;
                r->count = 0; /* nothing of it executed (tb_etmv3_dec_do_data) */
            } else if (!retract_last(d, r)) {
                cancelled = false;
                err = TB_ERR_STATE; /* cannot happen: its code was read */
            }
        } else {
            err = TB_ERR_STATE; /* already emitted: flag the element */
        }
    }
    if (pkt->x.has_exc && pkt->x.exc_num != 0) {
        tb_element el;
        uint16_t num = pkt->x.exc_num;

        /* v7-M: the number as the architecture has it (IPSR), from the
         * traced value (DDI0337G Table 14-8). */
        if (d->cfg.v7m && tb_v7m_from_trace(pkt->x.exc_num) > 0)
            num = (uint16_t)tb_v7m_from_trace(pkt->x.exc_num);
        dec_exception(d, &el, pkt, num,
                      cancelled ? cancelled_addr : (d->pc_known && !chain ? d->pc : 0),
                      err ? err : (cancelled || chain || d->pc_known ? 0 : TB_ERR_NO_SYNC));
        el.cancelled = pkt->x.exc_cancel && !eret_cancel;
        el.tailchain = chain;
        etmv3_emit(d, e, &el);
    } else {
        etmv3_flush_range(d, e);
    }
    ctx_changed = dec_branch_state(d, &pkt->x);
    if (pkt->x.has_exc)
        forget_block(d); /* the vector is no edge of the code */
    else
        d->blk_valid = false; /* the link of the branch's edge stays */
    dec_branch_to(d, e, pkt, ctx_changed);
}

/* v7-M: the held exception return goes out (the packet after it does
 * not withdraw it). */
static void eret_release(tb_etmv3_decoder *d, tb_emit *e)
{
    if (!d->ehold)
        return;
    d->ehold = false;
    d->started = true;
    etmv3_emit(d, e, &d->eret);
}

/* Out of sync, as after a bad packet: an error element, then nothing
 * until the next I-sync.  A held data element goes first (it was good). */
void tb_etmv3_dec_lose_sync(tb_etmv3_decoder *d, tb_emit *e, uint64_t index, int err)
{
    if (d->dhold)
        (void)tb_etmv3_dec_data_release(d, e, NULL);
    eret_release(d, e);
    dec_lose_sync(d, e, index, TB_GAP_BAD_PACKET, err, false);
    d->pending_cc = 0;
    tb_etmv3_dec_data_reset(d);
}

/* The packet path's first look (TB_DEC_ENTRIES): the held elements, and
 * P-headers once synchronised.  An Ignore packet means nothing (IHI0014Q
 * 7.11.2): while an element is held it changes nothing at all.  A Store
 * failed after it still belongs to the held data element, an exception
 * return still waits for the packet after it, and the fused path's
 * hand-over (started false) stays, so no later element overtakes the
 * held one (the fuzz smoke at 44bcce2: an Ignore after value-not-traced
 * packets let the fused path emit at 803 before the DATA element of 790;
 * regressions/etmv3_decoder/ignore-while-data-held-keeps-element-order). */
static inline bool packet_first(tb_etmv3_decoder *d, tb_emit *e, const tb_packet *pkt)
{
    if ((d->dhold || d->ehold) && pkt->kind == TB_PKT_IGNORE)
        return true;
    if (d->dhold && tb_etmv3_dec_data_release(d, e, pkt))
        return true;
    if (d->ehold && pkt->kind != TB_PKT_BRANCH)
        eret_release(d, e);
    else if (d->ehold)
        d->started = true; /* do_branch decides what the return was */
    if (pkt->kind != TB_PKT_ATOM || !d->started || !d->synced)
        return false;
    /* Most packets: P-headers.  A cycle-accurate one with W atoms only
     * (IHI0014Q 7.3.1 format 3 without E, or format 1 with no atoms)
     * just counts cycles. */
    if (pkt->w_count == pkt->seq_len && pkt->atom_count == 0)
        d->pending_cc += pkt->w_count;
    else
        tb_etmv3_dec_do_pheader(d, e, pkt);
    return true;
}

static void packet_other(tb_etmv3_decoder *d, tb_emit *e, const tb_packet *pkt)
{
    tb_element el;

    switch (pkt->kind) {
    case TB_PKT_ATOM:
        tb_etmv3_dec_do_pheader(d, e, pkt);
        break;
    case TB_PKT_CYCLE_COUNT:
        d->pending_cc += pkt->cc;
        break;
    case TB_PKT_EXC_RETURN:
        tb_elem_init(&el, TB_ELEM_EXC_RETURN, pkt->index);
        if (d->cfg.v7m) {
            /* v7-M: held for the next packet (ehold). */
            etmv3_flush_range(d, e);
            d->eret = el;
            d->ehold = true;
            d->started = false;
            break;
        }
        if (d->rng_valid && d->rng.count > 0 && !d->xret_held) {
            /* Held with the range (xret_held), which it closes: a new
             * range is opened only after etmv3_flush_range(), so the order
             * stays, and a Cancel next retracts both (a Cancel names the
             * most recently traced instruction, the last atom's, whatever
             * packet came between: protocol-notes 2.7). */
            d->xret = el;
            d->xret_held = true;
            d->rng_open = false;
        } else {
            etmv3_emit(d, e, &el);
        }
        break;
    case TB_PKT_EXC_ENTRY:
        /* v7-M data-trace marker: the exception itself comes with the
         * branch packet. */
        break;
    case TB_PKT_TIMESTAMP:
        tb_elem_init(&el, TB_ELEM_TIMESTAMP, pkt->index);
        el.ts = pkt->ts;
        etmv3_emit(d, e, &el);
        break;
    case TB_PKT_DATA:
    case TB_PKT_OOO_DATA:
    case TB_PKT_OOO_PLACEHOLDER:
    case TB_PKT_STORE_FAILED:
    case TB_PKT_DATA_SUPPRESSED:
    case TB_PKT_VALUE_NOT_TRACED:
        tb_etmv3_dec_do_data(d, e, pkt);
        break;
    default:
        break; /* A-sync, ignore */
    }
}

/* The end of the trace: what is held goes out, and the placeholders
 * still out (the trace ended before their values). */
static void packet_end(tb_etmv3_decoder *d, tb_emit *e)
{
    if (d->dhold)
        (void)tb_etmv3_dec_data_release(d, e, NULL);
    eret_release(d, e);
    for (;;) {
        unsigned t, first = 0;

        for (t = 1; t < 4; t++)
            if (d->ooo[t].valid && (!first || d->ooo[t].el.index < d->ooo[first].el.index))
                first = t;
        if (!first)
            break;
        tb_etmv3_dec_ooo_lost(d, e, first, 0);
    }
}

TB_DEC_ENTRIES(etmv3, packet_first, tb_etmv3_dec_lose_sync, packet_other, packet_end)

/* ---- behind tb_decoder (backend.h) ---- */

static void op_cycle_ranges(void *vd, bool on)
{
    tb_etmv3_decoder *d = vd;

    d->rmax = on && d->cfg.cycle_accurate ? 1 : 32;
}

TB_DECODER_API(etmv3, ETMV3, reset_state, .cycle_ranges = op_cycle_ranges);
