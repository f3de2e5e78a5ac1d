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

#include "dec_core.h"
#include "backend.h"

struct tb_ptm_decoder {
    tb_config cfg;
    TB_DEC_STATE;

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

/* The shared core's hooks (dec_core.h): elements go straight out (no
 * range is held), a jump leaves no block edge to follow; a branch has
 * its exception fields itself, and its cycle count. */
#define TB_DEC tb_ptm_decoder
#define TB_DEC_ISYNC tb_ptm_isync
#define TB_DEC_BRANCH tb_ptm_branch
#define TB_DEC_EXC tb_ptm_branch
#define TB_DEC_EXC_OF(br) (br)
#define TB_DEC_ISYNC_MORE(is, pkt) ((void)(is), (void)(pkt))
#define TB_DEC_BRANCH_MORE(br, pkt) ((br)->has_cc = (pkt)->has_cc, (br)->cc = (pkt)->cc)
#define TB_DEC_OUT(d, e, el) tb_emit_el(e, el)
#define TB_DEC_JUMP(d) ((d)->blk_from = NULL)
#define TB_DEC_JAZELLE 0
#include "dec_core.h"

static void reset_state(tb_ptm_decoder *d)
{
    dec_reset(d);
    d->rs_top = d->rs_n = 0;
}

tb_ptm_decoder *tb_ptm_decoder_new(const tb_config *cfg, const tb_memimage *mem)
{
    tb_config own; /* the caller's, as this build's (struct_size.h) */
    unsigned mask = TB_WPMASK_BRANCHES | (1u << TB_WP_ISB);
    tb_ptm_decoder *d = tb_dec_alloc(sizeof *d, &cfg, &own, mem, TB_PROTO_PTM);
    if (!d)
        return NULL;
    /* DMB/DSB are waypoints only when ETMCCER[24] says so (3.12). */
    if (cfg->dmb_waypoint)
        mask |= 1u << TB_WP_BARRIER;
    d->bc = tb_block_cache_new(mem, mask);
    if (!d->bc) {
        free(d);
        return NULL;
    }
    dec_init(d, cfg, mem);
    reset_state(d);
    return d;
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

/* Lost sync, shown where the flow stood. */
static void lose_sync(tb_ptm_decoder *d, tb_emit *e, const pkt_ctx *pc,
                      tb_gap_reason reason, int err)
{
    dec_lose_sync(d, e, pc->index, reason, err, true);
}

static void lose_address(tb_ptm_decoder *d, tb_emit *e, const pkt_ctx *pc,
                         uint32_t addr, uint8_t status)
{
    dec_lose_address(d, e, pc->index, addr, status, 0, false, 0);
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

/* analyze_atomheader (IHI0035B B.3.2): n atoms, oldest first, bit i of
 * nbits set when atom i is N. */
static TB_ALWAYS_INLINE void run_atoms(tb_ptm_decoder *d, tb_emit *e, const pkt_ctx *pc,
                      unsigned n, unsigned nbits)
{
    for (unsigned i = 0; i < n && !e->err; i++) {
        const char atom = ((nbits >> i) & 1) ? 'N' : 'E';
        const tb_insn *wp;

        if (!d->pc_known) {
            dec_unknown_atom(d, e, pc->index, atom, pc->has_cc, pc->cc);
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

static TB_ALWAYS_INLINE void do_isync(tb_ptm_decoder *d, tb_emit *e, const tb_ptm_isync *pkt)
{
    bool ctx_changed = dec_isync_new_context(d, pkt);

    if (!d->synced || d->gap || pkt->reason != TB_ISYNC_PERIODIC) {
        tb_element *el = dec_trace_on(d, pkt, dec_insn_addr(pkt->addr, pkt->isa));

        el->has_cc = pkt->has_cc;
        el->cc = pkt->has_cc ? pkt->cc : 0;
        tb_emit_el(e, el);
    }
    dec_isync_state(d, pkt);
    d->pc = dec_insn_addr(pkt->addr, pkt->isa);
    d->pc_known = true;
    d->blk_from = NULL;
    /* The PTM empties its return stack at every I-sync (3.4, 4.4 #10). */
    d->rs_n = 0;
    if (ctx_changed)
        dec_context(d, e, pkt->index);
}

static TB_ALWAYS_INLINE void do_branch(tb_ptm_decoder *d, tb_emit *e, const tb_ptm_branch *pkt)
{
    bool ctx_changed;

    if (pkt->has_exc && pkt->exc_num != 0) {
        /* branch_with_excp: nothing executes; the return address is
         * where the flow stood (IHI0035B 5.2.3: back-to-back exceptions
         * give two packets with nothing between). */
        tb_element el;

        d->blk_from = NULL; /* the vector is no edge of the code */
        dec_exception(d, &el, pkt, pkt->exc_num, d->pc_known ? d->pc : 0,
                      d->pc_known ? 0 : TB_ERR_NO_SYNC);
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
    ctx_changed = dec_branch_state(d, pkt);
    dec_branch_to(d, e, pkt, ctx_changed);
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
    uint32_t target = dec_insn_addr(pkt->addr, d->isa);
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

/* The packet path's atoms once synchronised: most packets. */
static inline bool packet_first(tb_ptm_decoder *d, tb_emit *e, const tb_packet *pkt)
{
    if (pkt->kind != TB_PKT_ATOM || !d->started || !d->synced)
        return false;
    do_atoms(d, e, pkt);
    return true;
}

static void packet_other(tb_ptm_decoder *d, tb_emit *e, const tb_packet *pkt)
{
    switch (pkt->kind) {
    case TB_PKT_ATOM:
        do_atoms(d, e, pkt);
        break;
    case TB_PKT_WP_UPDATE:
        do_wp_update(d, e, pkt);
        break;
    case TB_PKT_EXC_RETURN:
        emit_simple(e, TB_ELEM_EXC_RETURN, pkt);
        break;
    case TB_PKT_TIMESTAMP: {
        tb_element el;

        tb_elem_init(&el, TB_ELEM_TIMESTAMP, pkt->index);
        el.ts = pkt->ts;
        if (pkt->has_cc) {
            el.has_cc = true;
            el.cc = pkt->cc;
        }
        tb_emit_el(e, &el);
        break;
    }
    default:
        break; /* A-sync, ignore, not-sync bytes */
    }
}

/* A bad packet: sync lost, shown where the flow stood. */
static void packet_lose(tb_ptm_decoder *d, tb_emit *e, uint64_t index, int err)
{
    dec_lose_sync(d, e, index, TB_GAP_BAD_PACKET, err, true);
}

/* Nothing is held at the end. */
static inline void packet_end(tb_ptm_decoder *d, tb_emit *e)
{
    (void)d;
    (void)e;
}

TB_DEC_ENTRIES(ptm, packet_first, packet_lose, packet_other, packet_end)

/* ---- behind tb_decoder (backend.h) ---- */

/* A range ends at each atom's waypoint, with that atom's count. */
TB_DECODER_API(ptm, PTM, reset_state, .cycles_per_range = true);
