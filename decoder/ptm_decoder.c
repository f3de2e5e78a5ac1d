/*
 * PTM (PFT 1.0/1.1) decompressor: packets + image -> elements.
 *
 * The operations follow IHI0035B B.3.2 (branch_no_excp, branch_with_excp,
 * analyze_atomheader, analyze_waypoint_update, analyze_eret) as restated
 * in protocol-notes 4.3, with the return stack of protocol-notes 3.10 and
 * the exception rules of IHI0035B 5.2.3.  OpenCSD's quirks (4.4) are not
 * copied: A32 ERET is a waypoint, and atoms with no address are reported
 * (DS-5 lists them) rather than dropped.
 *
 * Two address registers (protocol-notes 4.1): the parser merges packet
 * addresses into LastState and hands us full addresses; this file only
 * keeps CurrentState (pc, isa).
 */
#include <stdlib.h>
#include <string.h>

#include "block_cache.h"
#include "dec_util.h"
#include "fused.h"
#include "backend.h"
#include "../common/struct_size.h"

struct tb_ptm_decoder {
    tb_config cfg;
    const tb_memimage *mem;
    tb_block_cache *bc;

    bool started;        /* NO_SYNC(init) emitted */
    bool synced;         /* an I-sync seen since the last loss of sync */
    bool gap;            /* trace lost since the last I-sync */
    bool pc_known;
    uint32_t pc;
    uint8_t isa;

    bool ctx_known;
    bool ns, hyp;
    uint32_t context_id;
    uint8_t vmid;

    /* Return stack (protocol-notes 3.10): circular, oldest overwritten. */
    uint32_t rs_addr[TB_RSTACK_DEPTH];
    uint8_t rs_isa[TB_RSTACK_DEPTH];
    unsigned rs_top, rs_n;

    /* The block the flow last left, and by which edge, for the next
     * lookup (tb_block_follow); NULL after a jump from nowhere known. */
    const tb_block *blk_from;
    unsigned blk_edge;

    /* The range element, its other fields zero for good: emit_range()
     * writes only what a range has (cheaper than a fresh element).  The
     * same for trace-on, one for every I-sync of a trace that is often
     * switched off (192 a pass on Snowball 0x10). */
    tb_element rng, ton;
};

static void reset_state(tb_ptm_decoder *d)
{
    d->started = false;
    d->synced = false;
    d->gap = true;
    d->pc_known = false;
    d->pc = 0;
    d->isa = TB_ISA_UNKNOWN;
    d->ctx_known = false;
    d->ns = d->hyp = false;
    d->context_id = 0;
    d->vmid = 0;
    d->rs_top = d->rs_n = 0;
    d->blk_from = NULL;
}

tb_ptm_decoder *tb_ptm_decoder_new(const tb_config *cfg, const tb_memimage *mem)
{
    tb_ptm_decoder *d;
    unsigned mask = TB_WPMASK_BRANCHES | (1u << TB_WP_ISB);
    tb_config own; /* the caller's, as this build's (struct_size.h) */

    cfg = tb_config_take(&own, cfg, NULL, 0);
    if (!cfg || !mem || cfg->protocol != TB_PROTO_PTM)
        return NULL;
    d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->cfg = *cfg;
    d->mem = mem;
    /* DMB/DSB are waypoints only when ETMCCER[24] says so (3.12). */
    if (cfg->dmb_waypoint)
        mask |= 1u << TB_WP_BARRIER;
    d->bc = tb_block_cache_new(mem, mask);
    if (!d->bc) {
        free(d);
        return NULL;
    }
    tb_elem_init(&d->rng, TB_ELEM_INSN_RANGE, 0);
    tb_elem_init(&d->ton, TB_ELEM_TRACE_ON, 0);
    reset_state(d);
    return d;
}

void tb_ptm_decoder_free(tb_ptm_decoder *d)
{
    if (!d)
        return;
    tb_block_cache_free(d->bc);
    free(d);
}

void tb_ptm_decoder_reset(tb_ptm_decoder *d)
{
    if (d)
        reset_state(d);
}

static void rs_push(tb_ptm_decoder *d, uint32_t addr, uint8_t isa)
{
    d->rs_top = (d->rs_top + 1) % TB_RSTACK_DEPTH;
    d->rs_addr[d->rs_top] = addr;
    d->rs_isa[d->rs_top] = isa;
    if (d->rs_n < TB_RSTACK_DEPTH)
        d->rs_n++;
}

static bool rs_pop(tb_ptm_decoder *d, uint32_t *addr, uint8_t *isa)
{
    if (!d->rs_n)
        return false;
    *addr = d->rs_addr[d->rs_top];
    *isa = d->rs_isa[d->rs_top];
    d->rs_top = (d->rs_top + TB_RSTACK_DEPTH - 1) % TB_RSTACK_DEPTH;
    d->rs_n--;
    return true;
}

/* What the elements of a walk take from the packet behind them: the
 * fused path (tb_ptm_decoder_atoms) has no tb_packet. */
typedef struct pkt_ctx {
    uint64_t index;
    bool has_cc;
    uint32_t cc;
} pkt_ctx;

static inline pkt_ctx ctx_of(const tb_packet *pkt)
{
    return (pkt_ctx){pkt->index, pkt->has_cc, pkt->cc};
}

static void emit_simple(tb_emit *e, tb_elem_kind kind, const tb_packet *pkt)
{
    tb_element el;

    tb_elem_init(&el, kind, pkt->index);
    tb_emit_el(e, &el);
}

static void lose_sync(tb_ptm_decoder *d, tb_emit *e, const pkt_ctx *pc,
                      tb_gap_reason reason, int err)
{
    tb_element el;

    tb_elem_init(&el, TB_ELEM_NO_SYNC, pc->index);
    el.reason = (uint8_t)reason;
    el.err = err;
    el.start = d->pc;
    el.isa = d->isa;
    tb_emit_el(e, &el);
    d->pc_known = false;
    d->blk_from = NULL;
    d->gap = true;
    if (reason == TB_GAP_BAD_PACKET)
        d->synced = false;
}

/* The address left the image (or the ISA cannot be decoded): report it
 * once and wait for the next explicit address (protocol-notes 4.1). */
static void lose_address(tb_ptm_decoder *d, tb_emit *e, const pkt_ctx *pc,
                         uint32_t addr, uint8_t status)
{
    tb_element el;

    tb_elem_init(&el, TB_ELEM_ADDR_NACC, pc->index);
    el.start = addr;
    el.isa = d->isa;
    el.ns = d->ns;
    el.err = status == TB_BLOCK_BAD_ISA ? TB_ERR_UNSUPPORTED : TB_ERR_NOT_IN_IMAGE;
    el.reason = TB_GAP_NO_MEMORY;
    tb_emit_el(e, &el);
    d->pc_known = false;
    d->blk_from = NULL;
}

static void emit_range(tb_ptm_decoder *d, tb_emit *e, const pkt_ctx *pc,
                       uint32_t start, uint32_t end, uint32_t count,
                       uint8_t isa, const tb_insn *last, char atom)
{
    tb_element *el = &d->rng;

    el->index = pc->index;
    el->start = start;
    el->end = end;
    el->count = count;
    el->isa = isa;
    el->last_addr = last->addr;
    el->last_size = last->size;
    el->last_wp = last->wp_class;
    el->last_atom = atom;
    el->atom_bits = atom == 'N';
    el->has_cc = pc->has_cc;
    el->cc = pc->has_cc ? pc->cc : 0;
    tb_emit_el(e, el);
}

/* Walks from pc through non-waypoints to the next waypoint, which gets
 * `atom`; emits the range.  Returns true with *wp pointing at the
 * waypoint (in the block cache: valid until the next block lookup) when
 * one was reached, false when the address was lost (already reported). */
static TB_ALWAYS_INLINE bool walk_to_waypoint(tb_ptm_decoder *d, tb_emit *e,
                             const pkt_ctx *pc, char atom,
                             const tb_insn **wp)
{
    uint32_t start = d->pc, count = 0;
    /* The last instruction of the LIMIT blocks passed, read only after
     * one (count > 0 with an empty block): not zeroed on every call. */
    tb_insn prev_last;

    for (;;) {
        const tb_block *b = tb_block_follow(d->bc, d->blk_from, d->blk_edge,
                                            d->pc, (tb_isa)d->isa);

        d->blk_from = b;
        d->blk_edge = TB_EDGE_ON;
        if (b->status == TB_BLOCK_WP) {
            /* Where take_waypoint() or a branch packet sends the flow. */
            if (atom == 'E')
                d->blk_edge = TB_EDGE_TAKEN;
            count += b->n;
            *wp = &b->last;
            emit_range(d, e, pc, start, b->end, count, d->isa, &b->last, atom);
            d->pc = b->end;
            return true;
        }
        if (b->status == TB_BLOCK_LIMIT && count < TB_WALK_MAX_INSNS) {
            count += b->n;
            prev_last = b->last;
            d->pc = b->end;
            continue;
        }
        if (b->status == TB_BLOCK_LIMIT) {
            lose_sync(d, e, pc, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
            return false;
        }
        /* Code ran out before a waypoint: the instructions up to the
         * hole executed; the waypoint itself is not in the image.  When
         * the hole starts right after a full block, this block is empty
         * and the last instruction is the previous block's (found by
         * fuzzing: the range named last_addr 0, last_size 0). */
        count += b->n;
        if (count) {
            tb_insn last = b->n ? b->last : prev_last;

            emit_range(d, e, pc, start, b->end, count, d->isa, &last, 'E');
        }
        lose_address(d, e, pc, b->end, b->status);
        return false;
    }
}

/* An executed direct branch that only moves the flow to its target:
 * known, and no return address for the return stack. */
static inline bool plain_direct(const tb_ptm_decoder *d, const tb_insn *wp)
{
    return (wp->wp_class == TB_WP_DIRECT || wp->wp_class == TB_WP_DIRECT_LINK) &&
           wp->has_target && !(wp->link && d->cfg.return_stack);
}

/* Applies an executed (E) or failed (N) waypoint to the flow. */
static TB_ALWAYS_INLINE void take_waypoint(tb_ptm_decoder *d, const tb_insn *wp, char atom,
                          bool from_atom)
{
    uint32_t ret = wp->addr + wp->size;
    uint8_t ret_isa = d->isa;

    if (atom == 'N')
        return; /* pc already points past it */
    switch (wp->wp_class) {
    case TB_WP_DIRECT:
    case TB_WP_DIRECT_LINK:
        if (wp->has_target) {
            d->pc = wp->target;
            d->isa = wp->target_isa;
        } else {
            d->pc_known = false;
        }
        break;
    case TB_WP_INDIRECT:
    case TB_WP_INDIRECT_LINK:
        /* An E atom on an indirect branch means the return stack
         * predicted it (3.10); a branch packet never pops. */
        if (from_atom && d->cfg.return_stack) {
            uint32_t a;
            uint8_t isa;

            if (rs_pop(d, &a, &isa)) {
                d->pc = a;
                d->isa = isa;
            } else {
                d->pc_known = false;
            }
        } else if (from_atom) {
            d->pc_known = false;
        }
        break;
    default:
        break; /* ISB, barriers: flow continues */
    }
    if (wp->link && d->cfg.return_stack)
        rs_push(d, ret, ret_isa);
}

static void unknown_atom(tb_ptm_decoder *d, tb_emit *e, const pkt_ctx *pc,
                         char atom)
{
    tb_element el;

    tb_elem_init(&el, TB_ELEM_ADDR_UNKNOWN, pc->index);
    el.last_atom = atom;
    el.count = 1;
    el.isa = d->isa;
    if (pc->has_cc) {
        el.has_cc = true;
        el.cc = pc->cc;
    }
    tb_emit_el(e, &el);
}

/* analyze_atomheader (IHI0035B B.3.2): n atoms, oldest first, bit i of
 * nbits set when atom i is N. */
static TB_ALWAYS_INLINE void run_atoms(tb_ptm_decoder *d, tb_emit *e, const pkt_ctx *pc,
                      unsigned n, unsigned nbits)
{
    for (unsigned i = 0; i < n && !e->err; i++) {
        const char atom = ((nbits >> i) & 1) ? 'N' : 'E';
        const tb_insn *wp;

        if (!d->pc_known) {
            unknown_atom(d, e, pc, atom);
            continue;
        }
        if (walk_to_waypoint(d, e, pc, atom, &wp))
            take_waypoint(d, wp, atom, true);
    }
}

static void do_atoms(tb_ptm_decoder *d, tb_emit *e, const tb_packet *pkt)
{
    const pkt_ctx pc = ctx_of(pkt);
    unsigned n = 0, nbits = 0;

    for (unsigned i = 0; i < pkt->seq_len && i < sizeof pkt->seq; i++) {
        if (pkt->seq[i] == 'N')
            nbits |= 1u << n;
        if (pkt->seq[i] == 'E' || pkt->seq[i] == 'N')
            n++;
    }
    run_atoms(d, e, &pc, n, nbits);
}

/* The walk's position, as tb_ptm_decoder_atoms() holds it in locals. */
typedef struct walk_pos {
    uint32_t pc;
    uint8_t isa;
    const tb_block *from;
    unsigned edge;
} walk_pos;

static inline walk_pos pos_of(const tb_ptm_decoder *d)
{
    const walk_pos w = {d->pc, d->isa, d->blk_from, d->blk_edge};

    return w;
}

static inline void set_pos(tb_ptm_decoder *d, const walk_pos *w)
{
    d->pc = w->pc;
    d->isa = w->isa;
    d->blk_from = w->from;
    d->blk_edge = w->edge;
}

int tb_ptm_decoder_atoms(tb_ptm_decoder *d, const tb_ptm_atom_run *run,
                         tb_element_cb cb, void *ctx, int *nel)
{
    tb_emit e;

    /* Before the first I-sync the packet path has elements to give. */
    if (!d || !run || !d->started || !d->synced)
        return 0;
    tb_emit_init(&e, cb, ctx);
    {
        /* run_atoms() for each packet, with the walk's position in
         * locals while each atom's waypoint ends its one block (the
         * usual case): as fields of d they would be reloaded after every
         * callback, on the path from one block to the next.  Anything
         * else goes through run_atoms() with them written back. */
        walk_pos w = pos_of(d);

        for (unsigned k = 0; k < run->count && !e.err; k++) {
            const pkt_ctx pc = {run->index[k], run->has_cc, run->cc[k]};
            const unsigned n = run->n[k], nbits = run->nbits[k];

            for (unsigned i = 0; i < n && !e.err; i++) {
                const char atom = ((nbits >> i) & 1) ? 'N' : 'E';
                const tb_block *b;

                if (d->pc_known) {
                    b = tb_block_follow(d->bc, w.from, w.edge, w.pc, (tb_isa)w.isa);
                    if (b->status == TB_BLOCK_WP) {
                        const tb_insn *wp = &b->last;

                        emit_range(d, &e, &pc, w.pc, b->end, b->n, w.isa, wp, atom);
                        w.from = b;
                        w.edge = atom == 'E' ? TB_EDGE_TAKEN : TB_EDGE_ON;
                        w.pc = b->end;
                        /* take_waypoint()'s two usual cases on the
                         * locals: an N atom goes on past the waypoint,
                         * an E atom on a plain direct branch to its
                         * target (+4-6% on the real PTM traces).  A
                         * take_waypoint() on the locals for every case
                         * was 3% slower than this. */
                        if (atom == 'N')
                            continue;
                        if (plain_direct(d, wp)) {
                            w.pc = wp->target;
                            w.isa = wp->target_isa;
                            continue;
                        }
                        d->pc = w.pc;
                        d->isa = w.isa;
                        take_waypoint(d, wp, atom, true);
                        w.pc = d->pc;
                        w.isa = d->isa;
                        continue;
                    }
                }
                set_pos(d, &w);
                run_atoms(d, &e, &pc, n - i, nbits >> i);
                w = pos_of(d);
                break;
            }
        }
        set_pos(d, &w);
    }
    return tb_emit_took(&e, (int)run->count, nel);
}

static void emit_context(tb_ptm_decoder *d, tb_emit *e, uint64_t index)
{
    tb_element el;

    tb_elem_init(&el, TB_ELEM_CONTEXT, index);
    el.isa = d->isa;
    el.ns = d->ns;
    el.hyp = d->hyp;
    el.context_id = d->context_id;
    el.vmid = d->vmid;
    tb_emit_el(e, &el);
    d->ctx_known = true;
}

static uint32_t insn_addr(uint32_t addr, uint8_t isa)
{
    return isa == TB_ISA_ARM ? addr & ~3u : addr & ~1u;
}

static TB_ALWAYS_INLINE void do_isync(tb_ptm_decoder *d, tb_emit *e, const tb_ptm_isync *pkt)
{
    bool ctx_changed = !d->ctx_known || pkt->ns != d->ns || pkt->hyp != d->hyp ||
                       (pkt->has_ctxid && pkt->context_id != d->context_id);

    if (!d->synced || d->gap || pkt->reason != TB_ISYNC_PERIODIC) {
        tb_element *el = &d->ton;

        el->index = pkt->index;
        el->reason = pkt->reason;
        el->start = insn_addr(pkt->addr, pkt->isa);
        el->isa = pkt->isa;
        el->has_cc = pkt->has_cc;
        el->cc = pkt->has_cc ? pkt->cc : 0;
        tb_emit_el(e, el);
    }
    d->synced = true;
    d->gap = false;
    d->isa = pkt->isa;
    d->pc = insn_addr(pkt->addr, pkt->isa);
    d->pc_known = true;
    d->blk_from = NULL;
    d->ns = pkt->ns;
    d->hyp = pkt->hyp;
    if (pkt->has_ctxid)
        d->context_id = pkt->context_id;
    /* The PTM empties its return stack at every I-sync (3.4, 4.4 #10). */
    d->rs_n = 0;
    if (ctx_changed)
        emit_context(d, e, pkt->index);
}

static TB_ALWAYS_INLINE void do_branch(tb_ptm_decoder *d, tb_emit *e, const tb_ptm_branch *pkt)
{
    bool ctx_changed = false;
    uint8_t new_isa = pkt->isa;

    if (pkt->has_exc && pkt->exc_num != 0) {
        /* branch_with_excp: nothing executes; the return address is
         * where the flow stood (IHI0035B 5.2.3: back-to-back exceptions
         * give two packets with nothing between). */
        tb_element el;

        d->blk_from = NULL; /* the vector is no edge of the code */
        tb_elem_init(&el, TB_ELEM_EXCEPTION, pkt->index);
        el.exc_num = pkt->exc_num;
        el.pref_return = d->pc_known ? d->pc : 0;
        el.isa = d->isa;
        el.start = insn_addr(pkt->addr, new_isa);
        el.err = d->pc_known ? 0 : TB_ERR_NO_SYNC;
        if (pkt->has_cc) {
            el.has_cc = true;
            el.cc = pkt->cc;
        }
        tb_emit_el(e, &el);
    } else if (d->pc_known) {
        /* branch_no_excp: the next waypoint executed, its target is the
         * packet's address.  No pop; push for a link branch. */
        const pkt_ctx pc = {pkt->index, pkt->has_cc, pkt->cc};
        const tb_insn *wp;

        if (walk_to_waypoint(d, e, &pc, 'E', &wp)) {
            if (wp->link && d->cfg.return_stack)
                rs_push(d, wp->addr + wp->size, d->isa);
        }
    }
    if (pkt->ns_valid && pkt->ns != d->ns) {
        d->ns = pkt->ns;
        ctx_changed = true;
    }
    if (pkt->hyp_valid && pkt->hyp != d->hyp) {
        d->hyp = pkt->hyp;
        ctx_changed = true;
    }
    if (!pkt->addr_known) {
        d->pc_known = false;
        return;
    }
    d->isa = new_isa;
    d->pc = insn_addr(pkt->addr, new_isa);
    d->pc_known = true;
    if (ctx_changed)
        emit_context(d, e, pkt->index);
}

/* The fields do_isync() reads, from a packet of the packet path. */
static tb_ptm_isync isync_of(const tb_packet *pkt)
{
    tb_ptm_isync is;

    memset(&is, 0, sizeof is);
    is.index = pkt->index;
    is.addr = pkt->addr;
    is.isa = pkt->isa;
    is.reason = pkt->reason;
    is.ns = pkt->ns;
    is.hyp = pkt->hyp;
    is.has_cc = pkt->has_cc;
    is.cc = pkt->cc;
    is.has_ctxid = pkt->has_ctxid;
    is.context_id = pkt->context_id;
    return is;
}

int tb_ptm_decoder_isync(tb_ptm_decoder *d, const tb_ptm_isync *is,
                         tb_element_cb cb, void *ctx, int *nel)
{
    tb_emit e;

    /* Before anything else the packet path reports the initial gap. */
    if (!d || !is || !d->started)
        return 0;
    tb_emit_init(&e, cb, ctx);
    do_isync(d, &e, is);
    return tb_emit_took(&e, 1, nel);
}

/* The fields do_branch() reads, from a packet of the packet path. */
static tb_ptm_branch branch_of(const tb_packet *pkt)
{
    tb_ptm_branch br;

    memset(&br, 0, sizeof br);
    br.index = pkt->index;
    br.addr = pkt->addr;
    br.addr_known = pkt->addr_known;
    br.isa = pkt->isa;
    br.ns = pkt->ns;
    br.hyp = pkt->hyp;
    br.has_exc = pkt->has_exc;
    br.exc_num = pkt->exc_num;
    br.ns_valid = pkt->ns_valid;
    br.hyp_valid = pkt->hyp_valid;
    br.has_cc = pkt->has_cc;
    br.cc = pkt->cc;
    return br;
}

int tb_ptm_decoder_branch(tb_ptm_decoder *d, const tb_ptm_branch *br,
                          tb_element_cb cb, void *ctx, int *nel)
{
    tb_emit e;

    /* Before the first I-sync the packet path has elements to give. */
    if (!d || !br || !d->started || !d->synced)
        return 0;
    tb_emit_init(&e, cb, ctx);
    do_branch(d, &e, br);
    return tb_emit_took(&e, 1, nel);
}

/* analyze_waypoint_update: execution went on, up to and including the
 * instruction at the packet's address (protocol-notes 3.8, 4.3).  The
 * walk passes only non-waypoints (IHI0035B B.3.2 analyze_waypoint_update
 * step 5): a waypoint before the address contradicts the image, and a
 * waypoint at it (4.5.5 names an upgraded non-waypoint, so only a
 * corrupt or fuzzed trace does) is not passed either (steps 4 and 6):
 * the flow stays at it, and the atom or branch packet that follows
 * decodes it, as B.3.2's branch_no_excp and analyze_atomheader start at
 * CurrentState.  Shown once, with that atom: the update says it was
 * reached, not whether it passed its condition (4.5.5). */
static void do_wp_update(tb_ptm_decoder *d, tb_emit *e, const tb_packet *pkt)
{
    const pkt_ctx pc = ctx_of(pkt);
    uint32_t target = insn_addr(pkt->addr, d->isa);
    uint32_t start = d->pc, count = 0;
    tb_insn prev_last = {0}; /* last instruction of the blocks passed */

    if (!d->pc_known)
        return;
    if (target < d->pc) {
        /* Execution only moves forward between waypoints. */
        lose_sync(d, e, &pc, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
        return;
    }
    for (;;) {
        const tb_block *b = tb_block_get(d->bc, d->pc, (tb_isa)d->isa);

        if (b->n && target >= b->start && target < b->end) {
            uint32_t a = b->start, before = b->start, k = 0;
            tb_insn last;

            /* Count instructions up to target; it must be a start. */
            while (a < target) {
                before = a;
                a = tb_block_advance(b, a, 1);
                k++;
            }
            if (a != target || tb_block_insn(d->bc, a, (tb_isa)d->isa, &last) < 0) {
                lose_sync(d, e, &pc, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
                return;
            }
            if (b->status == TB_BLOCK_WP && a == b->last.addr) {
                /* The update names the waypoint: the walk stops at it. */
                count += k;
                if (k && tb_block_insn(d->bc, before, (tb_isa)d->isa, &prev_last) < 0) {
                    lose_sync(d, e, &pc, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
                    return;
                }
                if (count)
                    emit_range(d, e, &pc, start, a, count, d->isa, &prev_last, 'E');
                d->pc = a;
                d->blk_from = NULL;
                return;
            }
            count += k + 1;
            emit_range(d, e, &pc, start, a + last.size, count, d->isa, &last, 'E');
            d->pc = a + last.size;
            d->blk_from = NULL; /* mid-block: no edge */
            return;
        }
        if (b->status == TB_BLOCK_LIMIT && count < TB_WALK_MAX_INSNS) {
            count += b->n;
            prev_last = b->last;
            d->pc = b->end;
            continue;
        }
        if (b->status == TB_BLOCK_WP || b->status == TB_BLOCK_LIMIT) {
            /* A waypoint comes first, or the address is behind us: the
             * packet contradicts the image. */
            lose_sync(d, e, &pc, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
            return;
        }
        /* As in walk_to_waypoint: an empty block after full ones. */
        count += b->n;
        if (count)
            emit_range(d, e, &pc, start, b->end, count, d->isa,
                       b->n ? &b->last : &prev_last, 'E');
        lose_address(d, e, &pc, b->end, b->status);
        return;
    }
}

int tb_ptm_decoder_packet(tb_ptm_decoder *d, const tb_packet *pkt,
                          tb_element_cb cb, void *ctx)
{
    tb_emit e;

    if (!d || !pkt)
        return TB_ERR_INVAL;
    tb_emit_init(&e, cb, ctx);
    if (pkt->kind == TB_PKT_ATOM && d->started && d->synced) {
        do_atoms(d, &e, pkt); /* most packets */
        return tb_emit_result(&e);
    }
    if (!d->started) {
        tb_element el;

        tb_elem_init(&el, TB_ELEM_NO_SYNC, pkt->index);
        el.reason = TB_GAP_INIT;
        tb_emit_el(&e, &el);
        d->started = true;
    }

    switch (pkt->kind) {
    case TB_PKT_RESERVED:
    case TB_PKT_BAD_SEQUENCE:
    case TB_PKT_BAD_TRACEMODE: {
        const pkt_ctx pc = ctx_of(pkt);

        lose_sync(d, &e, &pc, TB_GAP_BAD_PACKET, pkt->err ? pkt->err : TB_ERR_BAD_PACKET);
        return tb_emit_result(&e);
    }
    case TB_PKT_INCOMPLETE: {
        const pkt_ctx pc = ctx_of(pkt);

        lose_sync(d, &e, &pc, TB_GAP_BAD_PACKET, TB_ERR_TRUNCATED);
        return tb_emit_result(&e);
    }
    case TB_PKT_ISYNC: {
        const tb_ptm_isync is = isync_of(pkt);

        do_isync(d, &e, &is);
        return tb_emit_result(&e);
    }
    default:
        break;
    }
    /* Until an I-sync there is no address to decode from (3.3): the
     * packets in between are dropped, as DS-5 does. */
    if (!d->synced)
        return tb_emit_result(&e);

    switch (pkt->kind) {
    case TB_PKT_ATOM:
        do_atoms(d, &e, pkt);
        break;
    case TB_PKT_BRANCH: {
        const tb_ptm_branch br = branch_of(pkt);

        do_branch(d, &e, &br);
        break;
    }
    case TB_PKT_WP_UPDATE:
        do_wp_update(d, &e, pkt);
        break;
    case TB_PKT_EXC_RETURN:
        emit_simple(&e, TB_ELEM_EXC_RETURN, pkt);
        break;
    case TB_PKT_TIMESTAMP: {
        tb_element el;

        tb_elem_init(&el, TB_ELEM_TIMESTAMP, pkt->index);
        el.ts = pkt->ts;
        if (pkt->has_cc) {
            el.has_cc = true;
            el.cc = pkt->cc;
        }
        tb_emit_el(&e, &el);
        break;
    }
    case TB_PKT_CONTEXT_ID:
        if (pkt->context_id != d->context_id || !d->ctx_known) {
            d->context_id = pkt->context_id;
            emit_context(d, &e, pkt->index);
        }
        break;
    case TB_PKT_VMID:
        if (pkt->vmid != d->vmid || !d->ctx_known) {
            d->vmid = pkt->vmid;
            emit_context(d, &e, pkt->index);
        }
        break;
    case TB_PKT_TRIGGER:
        emit_simple(&e, TB_ELEM_EVENT, pkt);
        break;
    default:
        break; /* A-sync, ignore, not-sync bytes */
    }
    return tb_emit_result(&e);
}

int tb_ptm_decoder_finish(tb_ptm_decoder *d, tb_element_cb cb, void *ctx)
{
    tb_emit e;
    tb_element el;

    if (!d)
        return TB_ERR_INVAL;
    tb_emit_init(&e, cb, ctx);
    tb_elem_init(&el, TB_ELEM_END, 0);
    tb_emit_el(&e, &el);
    return tb_emit_result(&e);
}

/* ---- behind tb_decoder (backend.h) ---- */

static void *op_make(const tb_config *cfg, const tb_memimage *mem)
{
    return tb_ptm_decoder_new(cfg, mem);
}

static void op_destroy(void *d) { tb_ptm_decoder_free(d); }
static void op_reset(void *d) { tb_ptm_decoder_reset(d); }

static int op_packet(void *d, const tb_packet *pkt, tb_element_cb cb, void *ctx)
{
    return tb_ptm_decoder_packet(d, pkt, cb, ctx);
}

static int op_finish(void *d, tb_element_cb cb, void *ctx)
{
    return tb_ptm_decoder_finish(d, cb, ctx);
}

static int op_push_fused(void *p, void *d, const uint8_t *data, size_t len, tb_span_cur *cur,
                         tb_packet_cb pkt_cb, void *pctx, tb_element_cb cb, void *ctx,
                         int *nel)
{
    tb_ptm_fused_sink sink = {d, cb, ctx, 0};
    int r = tb_ptm_parser_push_fused(p, data, len, cur, pkt_cb, pctx, &sink);

    *nel += sink.nel;
    return r;
}

const tb_decoder_ops tb_ptm_decoder_ops = {
    .protocol = TB_PROTO_PTM,
    .make = op_make,
    .destroy = op_destroy,
    .packet = op_packet,
    .finish = op_finish,
    .reset = op_reset,
    .push_fused = op_push_fused,
    /* A range ends at each atom's waypoint, with that atom's count. */
    .cycles_per_range = true,
};
