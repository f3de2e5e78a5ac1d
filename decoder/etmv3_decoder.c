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
 * packet path only (do_data() and what it calls; docs/formats.md).
 */
#include <stdlib.h>
#include <string.h>

#include "block_cache.h"
#include "dec_util.h"
#include "fused.h"
#include "mem_op.h"

/* Vectors of GCC and Clang (generic: lowered to whatever the target
 * has, SSE2 on every x86-64), for the P-header scan's per-header
 * stores. */
typedef uint16_t tb_v8u16 __attribute__((vector_size(16)));
typedef uint8_t tb_v16u8 __attribute__((vector_size(16)));

/* A P-header's atoms for the bulk walker: n E/N atoms (bit i of nmask
 * set when atom i is N), S[i] the W atoms before atom i-1's cycle ends
 * (so atoms a..b-1 take S[b] - S[a] cycles), wtot all its W atoms. */
typedef struct phdr_atoms {
    uint8_t n, wtot;
    uint8_t S[21];
    uint32_t nmask;
} phdr_atoms;

/* What a data instruction transfers: mem_op.h. */
typedef tb_mem_op mem_op;

struct tb_etmv3_decoder {
    tb_config cfg;
    const tb_memimage *mem;
    tb_block_cache *bc;

    bool started, synced, gap;
    bool pc_known;
    uint32_t pc;
    uint8_t isa;

    bool ctx_known;
    bool ns, hyp;
    uint32_t context_id;
    uint8_t vmid;

    uint32_t pending_cc;   /* W atoms since the last E/N atom */

    /* The current block and the position of pc in it.  A pointer into
     * the block cache: only this decoder looks blocks up in its cache,
     * and it drops the pointer (blk_valid) before the next lookup. */
    bool blk_valid;
    const tb_block *blk;
    uint32_t blk_idx;
    /* The block the flow last left, and by which edge, for the next
     * lookup (tb_block_follow); NULL after a jump from nowhere known. */
    const tb_block *blk_from;
    unsigned blk_edge;

    /* The newest range, not yet emitted.  Only ranges live here, so the
     * fields a range never has stay zero from _new() on, and opening a
     * range writes only the others (cheaper than a fresh element). */
    bool rng_valid, rng_open;
    tb_element rng;
    /* Likewise the trace-on element, one for every I-sync of a trace
     * that is often switched off (136 a pass on TC2 0x10). */
    tb_element ton;
    /* rng (held back, closed) ended at a taken direct branch to its own
     * start: a loop whose next turn, given the same atoms, is the same
     * range again (run_atoms() then only renews index and cc).  Cleared
     * whenever rng is emitted, opened or changed. */
    bool rng_loop;

    /* Each P-header byte's atoms under cfg (IHI0014Q 7.3.1), as the
     * fused path's scan (scan_headers) adds them to a batch: hlim the
     * E/N atoms, or 0xFF for no P-header (so that one room check ends
     * the scan at either); hnm their N flags; hS the W atoms before
     * each atom's end (lanes past the atoms unused); hW the W atoms in
     * every lane. */
    uint8_t hlim[256];
    uint64_t hnm[256];
    tb_v8u16 hS[256], hW[256];

    /* Data trace (IHI0014Q 7.4): packet path only, see do_data().  With
     * data trace off none of it is ever set. */
    bool dhold;             /* dpend waits for a Store failed packet;
                             * started is false meanwhile, so that the
                             * fused entries, which take nothing before
                             * the start, hand the next packet to the
                             * packet path (data_out, data_release) */
    tb_element dpend;
    bool daddr_known;       /* a full data address since sync was lost */
    struct data_insn {
        bool valid;
        uint32_t addr;      /* the data instruction */
        uint8_t isa, size;
        uint64_t rng_index; /* rng.index of the range it was found in */
        mem_op op;
        uint8_t done;       /* its transfers traced so far */
        bool next_known, be;
        uint32_t next;      /* where a transfer without an address is */
    } dx;
    struct ooo_slot {       /* placeholders by tag 1..3 */
        bool valid, maybe_lost;
        tb_element el;
    } ooo[4];
    uint64_t out_index;     /* index of the last element emitted: a lost
                             * placeholder's element takes it (ooo_lost) */
};

/* Atoms of a W/E/N sequence; other letters are skipped, as the
 * per-atom walker always did. */
static void atoms_from_seq(const char *seq, unsigned len, phdr_atoms *a)
{
    unsigned w = 0, n = 0;

    a->nmask = 0;
    a->S[0] = 0;
    for (unsigned i = 0; i < len; i++) {
        if (seq[i] == 'W') {
            w++;
        } else if (seq[i] == 'E' || seq[i] == 'N') {
            if (seq[i] == 'N')
                a->nmask |= 1u << n;
            a->S[++n] = (uint8_t)w;
        }
    }
    a->n = (uint8_t)n;
    a->wtot = (uint8_t)w;
}

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

/* Forgets the data trace state (sync lost, reset). */
static void data_reset(tb_etmv3_decoder *d)
{
    d->dhold = false;
    d->daddr_known = false;
    d->dx.valid = false;
    for (unsigned t = 0; t < 4; t++)
        d->ooo[t].valid = false;
}

static void reset_state(tb_etmv3_decoder *d)
{
    d->started = d->synced = false;
    d->gap = true;
    d->pc_known = false;
    d->pc = 0;
    d->isa = TB_ISA_UNKNOWN;
    d->ctx_known = false;
    d->ns = d->hyp = false;
    d->context_id = 0;
    d->vmid = 0;
    d->pending_cc = 0;
    forget_block(d);
    d->rng_valid = d->rng_open = d->rng_loop = false;
    d->rng.count = 0;
    d->out_index = 0;
    data_reset(d);
}

tb_etmv3_decoder *tb_etmv3_decoder_new(const tb_config *cfg,
                                       const tb_memimage *mem)
{
    tb_etmv3_decoder *d;

    if (!cfg || !mem || cfg->protocol != TB_PROTO_ETMV3)
        return NULL;
    d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->cfg = *cfg;
    d->mem = mem;
    tb_elem_init(&d->rng, TB_ELEM_INSN_RANGE, 0);
    tb_elem_init(&d->ton, TB_ELEM_TRACE_ON, 0);
    for (unsigned h = 0; h < 256; h++) {
        char seq[20];
        const int len = tb_etmv3_phdr_seq(cfg, (uint8_t)h, seq);
        phdr_atoms a = {0};

        d->hlim[h] = 0xFF;
        if (len < 0)
            continue;
        atoms_from_seq(seq, (unsigned)len, &a);
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

void tb_etmv3_decoder_free(tb_etmv3_decoder *d)
{
    if (!d)
        return;
    tb_block_cache_free(d->bc);
    free(d);
}

void tb_etmv3_decoder_reset(tb_etmv3_decoder *d)
{
    if (d)
        reset_state(d);
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

static void flush_range(tb_etmv3_decoder *d, tb_emit *e)
{
    if (d->rng_valid) {
        tb_emit_el(e, &d->rng);
        d->out_index = d->rng.index;
        d->rng_valid = d->rng_open = d->rng_loop = false;
    }
}

/* Every element other than a range goes out through here, after the
 * held-back range, so the element order is the trace order. */
static void emit(tb_etmv3_decoder *d, tb_emit *e, const tb_element *el)
{
    flush_range(d, e);
    tb_emit_el(e, el);
    if (el->kind != TB_ELEM_END)
        d->out_index = el->index;
}

static uint32_t insn_addr(uint32_t addr, uint8_t isa)
{
    if (isa == TB_ISA_ARM)
        return addr & ~3u;
    if (isa == TB_ISA_JAZELLE)
        return addr;
    return addr & ~1u;
}

static void emit_context(tb_etmv3_decoder *d, tb_emit *e, uint64_t index)
{
    tb_element el;

    tb_elem_init(&el, TB_ELEM_CONTEXT, index);
    el.isa = d->isa;
    el.ns = d->ns;
    el.hyp = d->hyp;
    el.context_id = d->context_id;
    el.vmid = d->vmid;
    emit(d, e, &el);
    d->ctx_known = true;
}

/* Appends one traced instruction to the newest range. */
static void add_insn(tb_etmv3_decoder *d, tb_emit *e, uint64_t index,
                     uint32_t addr, uint8_t size, uint8_t wp, char atom,
                     uint32_t cycles)
{
    tb_element *r = &d->rng;

    if (!d->rng_open || r->end != addr || r->isa != d->isa || r->count == 32) {
        flush_range(d, e);
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

static void lose_address(tb_etmv3_decoder *d, tb_emit *e, uint64_t index,
                         uint32_t addr, uint8_t status, uint32_t cycles)
{
    tb_element el;

    tb_elem_init(&el, TB_ELEM_ADDR_NACC, index);
    el.start = addr;
    el.isa = d->isa;
    el.ns = d->ns;
    el.reason = TB_GAP_NO_MEMORY;
    el.err = status == TB_BLOCK_BAD_ISA ? TB_ERR_UNSUPPORTED : TB_ERR_NOT_IN_IMAGE;
    el.count = 1;
    if (d->cfg.cycle_accurate) {
        el.has_cc = true;
        el.cc = cycles;
    }
    emit(d, e, &el);
    d->rng.count = 0; /* the newest instruction is in no range (do_data) */
    d->pc_known = false;
    forget_block(d);
}

/* One E or N atom: the fate of the instruction at pc. */
static void do_atom(tb_etmv3_decoder *d, tb_emit *e, uint64_t index, char atom,
                    uint32_t cycles)
{
    uint32_t addr = d->pc;
    const tb_block *b;
    uint8_t size, wp = TB_WP_NONE;
    bool last;

    if (!d->pc_known) {
        tb_element el;

        tb_elem_init(&el, TB_ELEM_ADDR_UNKNOWN, index);
        el.last_atom = atom;
        el.count = 1;
        el.isa = d->isa;
        if (d->cfg.cycle_accurate) {
            el.has_cc = true;
            el.cc = cycles;
        }
        emit(d, e, &el);
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

/* Bits set in v, without a libgcc call where the target has no
 * popcount instruction. */
static inline uint32_t popcount64(uint64_t v)
{
    v = v - ((v >> 1) & 0x5555555555555555ull);
    v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
    v = (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (uint32_t)((v * 0x0101010101010101ull) >> 56);
}

/* Atoms of one or more P-headers, in time order, for run_atoms(): bit i
 * of nmask set when atom i is N.  With has_S, atom i takes S[i+1] - S[i]
 * cycles (the W atoms since the atom before), atom 0 also the pend ones
 * before the batch; without (no W atoms: plain trace), atom 0 takes the
 * pending cycles and the rest none.  S counts from the batch's start (at
 * most 255 headers of at most 20 W), so 16 bits hold it.  Atom i came in
 * the header hoff[i] bytes after the batch's first, for element indices.
 * batch_add() writes a header's hoff entries in one 16-byte store, past
 * its own atoms (the next header's overwrite them). */
#define BATCH_ATOMS 64
#define HDR_ATOMS_MAX 16 /* IHI0014Q 7.3.1: format 1, 15 E and an N */
typedef struct atom_batch {
    uint64_t nmask;
    unsigned n;
    bool has_S;
    uint32_t pend;                /* cycles pending before atom 0 */
    uint32_t wsum;                /* W atoms of the batch's headers */
    /* Room past the atoms for a header's whole stores (scan_headers:
     * 8 lanes of S, HDR_ATOMS_MAX of hoff). */
    uint16_t S[BATCH_ATOMS + 1 + 8];
    uint8_t hoff[BATCH_ATOMS + HDR_ATOMS_MAX];
} atom_batch;

static inline void batch_init(atom_batch *ab, uint32_t pend, bool has_S)
{
    ab->nmask = 0;
    ab->n = 0;
    ab->has_S = has_S;
    ab->pend = pend;
    ab->wsum = 0;
    ab->S[0] = 0;
}

/* Appends header a, k bytes after the first; the caller checks room. */
static inline void batch_add(atom_batch *ab, const phdr_atoms *a, unsigned k)
{
    const unsigned n0 = ab->n;

    if (a->n) {
        ab->nmask |= (uint64_t)a->nmask << n0;
        memset(&ab->hoff[n0], (int)k, HDR_ATOMS_MAX);
        if (ab->has_S)
            for (unsigned j = 0; j < a->n; j++)
                ab->S[n0 + j + 1] = (uint16_t)(ab->wsum + a->S[j + 1]);
        ab->n = n0 + a->n;
    }
    ab->wsum += a->wtot;
}

/* Cycles of atoms [i, j). */
static inline uint32_t batch_cycles(const atom_batch *ab, unsigned i, unsigned j)
{
    const uint32_t pend = i == 0 && j > 0 ? ab->pend : 0;

    if (ab->has_S)
        return (uint32_t)(ab->S[j] - ab->S[i]) + pend;
    return pend;
}

/* The cycles left pending after the whole batch. */
static inline uint32_t batch_rest(const atom_batch *ab)
{
    if (!ab->n)
        return ab->pend + ab->wsum;
    return ab->has_S ? ab->wsum - ab->S[ab->n] : 0;
}

/* The atoms of a batch (IHI0014Q 7.3.1: one atom per instruction),
 * taken in bulk: each step adds as many atoms as stay inside the current
 * block (its last instruction included) and fit the range, with the N
 * flags as a bit field and the sizes from the block's mask of 32-bit
 * instructions.  The result is exactly what do_atom() gives one atom at
 * a time; anything unusual (address unknown, no code, a long Thumb
 * block) goes through do_atom().  Returns -1, or the atom after which a
 * callback stopped the walk (the rest are dropped, as before).
 * One step per block, even past a branch not taken: steps that cross
 * such ends along a chain of blocks were a third fewer on TC2 and the
 * long trace, yet 2-4% and 10% slower, since the steps saved were the
 * cheap ones (the range goes on) and every other step paid for the
 * chain's lookups.  A loop's turn that repeats the last range is one
 * step whatever its blocks (rng_loop): 3/4 of the long trace's ranges,
 * +25-38% there.  A memo of ranges by start address (any range seen
 * before, not only the last) took 72% of the long trace's ranges, yet
 * its lookups and records cost TC2, where few ranges repeat, 3-5%. */
static TB_ALWAYS_INLINE int run_atoms(tb_etmv3_decoder *d, tb_emit *e, tb_span_cur *cur,
                     size_t pos, const atom_batch *ab)
{
    const bool ca = d->cfg.cycle_accurate;
    const unsigned n = ab->n;
    tb_element *const r = &d->rng;
    tb_block_cache *const bc = d->bc;
    /* The walk's position and the range's length in locals, written
     * back when the walk ends or goes through do_atom(): as fields of d
     * they would be reloaded after every callback (an opaque call) and
     * every store to e's ints (which may alias d's unsigned ones), on the
     * path from one block to the next.  The range's fields are still
     * stored as they change, for the callback.  Keeping isa and
     * pc_known in locals too was 3% slower on TC2 (registers run out);
     * this set is 2-3% faster there and 3-5% on the long traces. */
    uint32_t pc, rend, rcount, bidx;
    bool open, loop;
    const tb_block *b, *from;
    unsigned edge, i = 0;
    int ret = -1;

#define RA_LOAD()                                       \
    (pc = d->pc, b = d->blk_valid ? d->blk : NULL, bidx = d->blk_idx, \
     from = d->blk_from, edge = d->blk_edge,            \
     open = d->rng_open, loop = d->rng_loop, rend = r->end, rcount = r->count)
#define RA_SAVE()                                       \
    (d->pc = pc, d->blk_valid = b != NULL, d->blk = b, d->blk_idx = bidx, \
     d->blk_from = from, d->blk_edge = edge, d->rng_open = open, d->rng_loop = loop)
    RA_LOAD();
    while (i < n) {
        unsigned m, room;
        uint32_t last, bits, cyc;
        uint8_t size;
        bool stop = false;

        if (!d->pc_known)
            goto slow;
        if (loop) {
            /* The loop's next turn (rng_loop): pc is the range's start,
             * and the same atoms walk the same blocks to the same
             * branch.  The first turn of a loop and the turn that
             * leaves it take the steps below. */
            if (rcount <= n - i &&
                (uint32_t)((ab->nmask >> i) & ((1ull << rcount) - 1)) == r->atom_bits) {
                flush_range(d, e);
                if (!e->err) {
                    r->index = tb_span_at(cur, pos + ab->hoff[i]);
                    if (ca)
                        r->cc = batch_cycles(ab, i, i + rcount);
                    d->rng_valid = true;
                    i += rcount;
                    continue;
                }
            }
            loop = false;
        }
        if (!b) {
            b = tb_block_follow(bc, from, edge, pc, (tb_isa)d->isa);
            bidx = 0;
        }
        if (b->n == 0)
            goto slow;
        m = n - i;
        if (m > b->n - bidx)
            m = b->n - bidx;
        if (b->isa != TB_ISA_ARM && bidx + m > 64)
            goto slow; /* sizes beyond the block's mask */
        /* The range the next instruction joins (add_insn's rule). */
        if (!open || rend != pc || r->isa != d->isa || rcount == 32) {
            flush_range(d, e);
            /* open_range(), from the copies. */
            r->index = tb_span_at(cur, pos + ab->hoff[i]);
            r->start = r->end = rend = pc;
            r->isa = d->isa;
            r->count = rcount = 0;
            r->atom_bits = 0;
            r->has_cc = ca;
            r->cc = 0;
            d->rng_valid = open = true;
            loop = false;
            if (e->err) {
                m = 1; /* the callback stopped: as do_atom, one more */
                stop = true;
            }
        }
        room = 32 - rcount;
        if (m > room)
            m = room;
        bits = (uint32_t)((ab->nmask >> i) & ((1ull << m) - 1));
        if (b->isa == TB_ISA_ARM) {
            last = pc + 4 * (m - 1);
            size = 4;
        } else if (bidx + m == b->n) {
            /* The rest of the block (the usual step): its last
             * instruction is known, no sizes to add up. */
            last = b->last.addr;
            size = b->last.size;
        } else {
            const uint64_t w = b->wide >> bidx;

            last = pc + 2 * (m - 1) + 2 * popcount64(w & ((1ull << (m - 1)) - 1));
            size = ((w >> (m - 1)) & 1) ? 4 : 2;
        }
        r->atom_bits |= bits << rcount;
        rcount += m;
        r->count = rcount;
        rend = last + size;
        r->end = rend;
        r->last_addr = last;
        r->last_size = size;
        r->last_atom = ((bits >> (m - 1)) & 1) ? 'N' : 'E';
        if (ca)
            r->cc += batch_cycles(ab, i, i + m);
        pc = rend;
        i += m;
        if (bidx + m < b->n) {
            r->last_wp = TB_WP_NONE;
            bidx += m;
        } else {
            const bool taken = b->status == TB_BLOCK_WP && !((bits >> (m - 1)) & 1);

            r->last_wp = b->last.wp_class;
            /* leave_block() */
            from = b;
            edge = taken ? TB_EDGE_TAKEN : TB_EDGE_ON;
            b = NULL;
            if (taken) {
                /* A taken branch ends the range. */
                open = false;
                if (from->last.has_target) {
                    pc = from->last.target;
                    d->isa = from->last.target_isa;
                    loop = pc == r->start && d->isa == r->isa;
                } else {
                    d->pc_known = false; /* the branch packet brings it */
                }
            }
        }
        if (stop) {
            d->pending_cc = batch_cycles(ab, i - 1, i);
            ret = (int)(i - 1);
            goto out;
        }
        continue;
    slow:
        cyc = batch_cycles(ab, i, i + 1);
        RA_SAVE();
        do_atom(d, e, tb_span_at(cur, pos + ab->hoff[i]),
                ((ab->nmask >> i) & 1) ? 'N' : 'E', cyc);
        RA_LOAD();
        i++;
        if (e->err) {
            d->pending_cc = cyc;
            ret = (int)(i - 1);
            goto out;
        }
    }
    d->pending_cc = batch_rest(ab);
out:
    RA_SAVE();
#undef RA_LOAD
#undef RA_SAVE
    return ret;
}

static void do_pheader(tb_etmv3_decoder *d, tb_emit *e, const tb_packet *pkt)
{
    const unsigned n = pkt->seq_len < sizeof pkt->seq ? pkt->seq_len
                                                      : sizeof pkt->seq;
    phdr_atoms a;
    atom_batch ab;
    tb_span_cur cur;

    if (e->err)
        return;
    atoms_from_seq(pkt->seq, n, &a);
    batch_init(&ab, d->pending_cc, true);
    batch_add(&ab, &a, 0);
    tb_span_cur_flat(&cur, pkt->index);
    (void)run_atoms(d, e, &cur, 0, &ab);
}

/* batch_add() for the valid P-headers at hdr[k..kend), the first
 * k - k0 bytes after the batch's (below 256): returns where it stopped,
 * at the first byte that is no P-header or whose atoms would not fit.
 * Every header costs the same few table loads, adds and stores, with no
 * branch on its kind: its hoff and S entries are written whole, past its
 * own atoms (the next header's overwrite them).  Half of the headers of
 * TC2's cycle-accurate trace have W atoms only, in no order a predictor
 * learns.  The AVX-512 scan this replaced (32 headers at a time, then a
 * turn per header with atoms; a run-time CPU check) was 8% slower on
 * TC2.  ca: the batch has S (cycle-accurate trace), a constant at each
 * call. */
static TB_ALWAYS_INLINE size_t scan_headers(const tb_etmv3_decoder *d, const uint8_t *hdr,
                                            size_t k, size_t kend, size_t k0,
                                            atom_batch *ab, bool ca)
{
    unsigned n0 = 0;
    uint64_t nm = 0;
    tb_v8u16 wv = {0};
    tb_v16u8 kv = {0};
    uint8_t *const ho = ab->hoff;
    uint16_t *const sp = &ab->S[1];

    kv += (uint8_t)(k - k0);
    while (k < kend) {
        const unsigned h = hdr[k];
        const unsigned n1 = n0 + d->hlim[h];

        if (n1 > BATCH_ATOMS)
            break; /* no P-header (0xFF), or no room */
        /* n0 is 64 only for a header without atoms (no N flags). */
        nm |= d->hnm[h] << (n0 & 63);
        memcpy(ho + n0, &kv, sizeof kv);
        kv += 1;
        if (ca) {
            const tb_v8u16 sv = wv + d->hS[h];

            memcpy(sp + n0, &sv, sizeof sv);
        }
        wv += d->hW[h];
        n0 = n1;
        k++;
    }
    ab->n = n0;
    ab->nmask = nm;
    ab->wsum = wv[0];
    return k;
}

int tb_etmv3_decoder_phdrs(tb_etmv3_decoder *d, const uint8_t *hdr, size_t n,
                           tb_span_cur *cur, size_t pos, tb_element_cb cb,
                           void *ctx, int *nel)
{
    tb_emit e;
    size_t k = 0;
    atom_batch ab;

    /* Before the first I-sync the packet path has elements to give. */
    if (!d || !d->started || !d->synced)
        return 0;
    tb_emit_init(&e, cb, ctx);
    while (k < n) {
        /* Up to 64 atoms of consecutive headers in one walk; hoff[] holds
         * byte offsets below 256. */
        const size_t k0 = k, kend = n - k0 > 255 ? k0 + 255 : n;
        int stop;

        if (d->hlim[hdr[k]] == 0xFF)
            break; /* not a P-header here: the packet path decides */
        /* Plain trace has no W atoms (IHI0014Q 7.3.1 table 7.2). */
        batch_init(&ab, d->pending_cc, d->cfg.cycle_accurate);
        k = ab.has_S ? scan_headers(d, hdr, k, kend, k0, &ab, true)
                     : scan_headers(d, hdr, k, kend, k0, &ab, false);
        if (k == k0)
            break; /* cannot happen (a P-header, an empty batch): no loop */
        stop = run_atoms(d, &e, cur, pos + k0, &ab);
        if (stop >= 0) {
            k = k0 + ab.hoff[stop] + 1u;
            break;
        }
    }
    return tb_emit_took(&e, (int)k, nel);
}

static void do_isync(tb_etmv3_decoder *d, tb_emit *e, const tb_etmv3_isync *pkt)
{
    uint8_t isa = pkt->isa;
    bool ctx_changed = !d->ctx_known || pkt->ns != d->ns || pkt->hyp != d->hyp ||
                       (pkt->has_ctxid && pkt->context_id != d->context_id);

    flush_range(d, e);
    /* Data packets after an I-sync belong to an instruction traced after
     * it, or to its LSiP instruction (IHI0014Q 7.10.5; do_data). */
    d->rng.count = 0;
    if (!d->synced || d->gap || pkt->reason != TB_ISYNC_PERIODIC || pkt->has_cc) {
        tb_element *el = &d->ton;

        el->index = pkt->index;
        el->reason = pkt->reason;
        el->isa = isa;
        /* Trace is on from the first instruction shown: an LSiP I-sync's
         * load/store (IHI0014Q 7.14.2), else the address. */
        el->start = insn_addr(pkt->addr, isa);
        /* The I-sync's count covers the time trace was off, with the W
         * atoms still pending (protocol-notes 2.4, 6.3). */
        el->has_cc = pkt->has_cc;
        el->cc = 0;
        if (pkt->has_cc) {
            el->cc = pkt->cc + (d->synced ? d->pending_cc : 0);
            d->pending_cc = 0;
        }
        emit(d, e, el);
    }
    if (!d->synced)
        d->pending_cc = 0; /* W's before the first address belong nowhere */
    d->synced = true;
    d->gap = false;
    d->isa = isa;
    d->ns = pkt->ns;
    d->hyp = pkt->hyp;
    if (pkt->has_ctxid)
        d->context_id = pkt->context_id;
    if (ctx_changed)
        emit_context(d, e, pkt->index);
    d->pc = insn_addr(pkt->addr, isa);
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
        d->pc = insn_addr(pkt->lsip_addr, d->isa);
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
    bool cancelled = false, ctx_changed = false;
    uint32_t cancelled_addr = 0;
    int err = 0;

    if (pkt->x.has_exc && pkt->x.exc_cancel) {
        /* The newest traced instruction did not complete: retract it. */
        d->rng_loop = false;
        if (d->rng_valid && d->rng.count > 0) {
            tb_element *r = &d->rng;

            cancelled = true;
            cancelled_addr = r->last_addr;
            if (r->count == 1) {
                /* The range goes, its cycles stay (protocol-notes 2.7,
                 * 4.2: the cancelled atom's W's were spent): with no
                 * instruction before it to keep them, as retract_last()
                 * does, they go to the next element with a count. */
                d->pending_cc += r->cc;
                d->rng_valid = d->rng_open = false;
                r->count = 0; /* nothing of it executed (do_data) */
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

        tb_elem_init(&el, TB_ELEM_EXCEPTION, pkt->index);
        el.exc_num = pkt->x.exc_num;
        el.cancelled = pkt->x.exc_cancel;
        el.pref_return = cancelled ? cancelled_addr : (d->pc_known ? d->pc : 0);
        el.isa = d->isa;
        el.start = insn_addr(pkt->addr, pkt->isa);
        el.err = err ? err : (cancelled || d->pc_known ? 0 : TB_ERR_NO_SYNC);
        emit(d, e, &el);
    } else {
        flush_range(d, e);
    }
    if (pkt->x.ns_valid && pkt->x.ns != d->ns) {
        d->ns = pkt->x.ns;
        ctx_changed = true;
    }
    if (pkt->x.hyp_valid && pkt->x.hyp != d->hyp) {
        d->hyp = pkt->x.hyp;
        ctx_changed = true;
    }
    if (pkt->x.has_exc)
        forget_block(d); /* the vector is no edge of the code */
    else
        d->blk_valid = false; /* the link of the branch's edge stays */
    if (!pkt->addr_known) {
        d->pc_known = false;
        return;
    }
    d->isa = pkt->isa;
    d->pc = insn_addr(pkt->addr, d->isa);
    d->pc_known = true;
    if (ctx_changed)
        emit_context(d, e, pkt->index);
}

/* The fields do_isync() reads, from a packet of the packet path. */
static tb_etmv3_isync isync_of(const tb_packet *pkt)
{
    tb_etmv3_isync is;

    memset(&is, 0, sizeof is);
    is.index = pkt->index;
    is.addr = pkt->addr;
    is.isa = (uint8_t)pkt->isa;
    is.reason = pkt->reason;
    is.ns = pkt->ns;
    is.hyp = pkt->hyp;
    is.has_cc = pkt->has_cc;
    is.cc = pkt->cc;
    is.has_ctxid = pkt->has_ctxid;
    is.context_id = pkt->context_id;
    is.lsip = pkt->lsip;
    is.lsip_addr = pkt->lsip_addr;
    is.lsip_isa = (uint8_t)pkt->lsip_isa;
    return is;
}

int tb_etmv3_decoder_isync(tb_etmv3_decoder *d, const tb_etmv3_isync *is,
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
static tb_etmv3_branch branch_of(const tb_packet *pkt)
{
    tb_etmv3_branch br;

    memset(&br, 0, sizeof br);
    br.index = pkt->index;
    br.addr = pkt->addr;
    br.isa = (uint8_t)pkt->isa;
    br.addr_known = pkt->addr_known;
    br.x.has_exc = pkt->has_exc;
    br.x.exc_cancel = pkt->exc_cancel;
    br.x.exc_num = pkt->exc_num;
    br.x.ns = pkt->ns;
    br.x.ns_valid = pkt->ns_valid;
    br.x.hyp = pkt->hyp;
    br.x.hyp_valid = pkt->hyp_valid;
    return br;
}

int tb_etmv3_decoder_branch(tb_etmv3_decoder *d, const tb_etmv3_branch *br,
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


/* ------------------------------------------------------------------ */
/* Data trace (IHI0014Q 7.4), on the packet path only: the fused path
 * never sees a data packet (the parser hands every one to the packet
 * path), so with data trace off nothing here runs.
 *
 * A data packet says nothing of direction or size: they come from the
 * opcode of the instruction it belongs to, read from the image
 * (data_op()).  That instruction is the most recently traced data
 * instruction (7.4), found among the instructions of the newest range:
 * every DATA element closes the range it follows, so a packet with no
 * instruction traced since the last one is the next transfer of the same
 * instruction (an LSM: one packet per word, 7.4.4), and otherwise the
 * newest instruction of the newest range with an E atom that accesses
 * memory is it.  No guess: when neither holds (no instruction since the
 * last I-sync that is no LSiP (7.10.5), code missing, a range with no
 * data instruction, more packets than the instruction transfers) the
 * packet is an error element.  Limitation: data of an LSM that goes on
 * under later instructions in a new range (7.4) is such an error too. */

/* The transfers of the instruction at addr (isa), from the image. */
static mem_op data_op(const tb_etmv3_decoder *d, uint32_t addr, uint8_t isa, uint8_t *size)
{
    return tb_mem_op_at(d->mem, addr, isa, size);
}

/* The data instruction of a data packet, with room for one more
 * transfer, in d->dx; 0 or the TB_ERR_* of the error element. */
static int find_data_insn(tb_etmv3_decoder *d)
{
    const tb_element *r = &d->rng;
    uint32_t addrs[32];
    int n;

    if (r->count == 0) {
        d->dx.valid = false; /* no instruction known since sync or I-sync */
        return TB_ERR_MISMATCH;
    }
    if (d->dx.valid && r->index == d->dx.rng_index)
        /* No instruction traced since its last transfer. */
        return d->dx.done < d->dx.op.n ? 0 : TB_ERR_MISMATCH;
    d->dx.valid = false;
    n = tb_range_addrs(d->mem, r, addrs, r->count < 32 ? r->count : 32);
    if (n < 0)
        return TB_ERR_NOT_IN_IMAGE;
    while (n-- > 0) {
        uint8_t size;
        mem_op m;

        if ((r->atom_bits >> n) & 1)
            continue; /* N: failed its condition, transferred nothing */
        m = data_op(d, addrs[n], r->isa, &size);
        if (!m.n)
            continue;
        d->dx.valid = true;
        d->dx.addr = addrs[n];
        d->dx.isa = r->isa;
        d->dx.size = size;
        d->dx.rng_index = r->index;
        d->dx.op = m;
        d->dx.done = 0;
        d->dx.next_known = false;
        return 0;
    }
    return TB_ERR_MISMATCH;
}

/* The held data element: a Store failed packet flags it (7.4.7), any
 * other packet (or none: NULL) sends it as it is first.  True when pkt
 * was consumed. */
static bool data_release(tb_etmv3_decoder *d, tb_emit *e, const tb_packet *pkt)
{
    d->dhold = false;
    d->started = true;
    if (pkt && pkt->kind == TB_PKT_STORE_FAILED) {
        d->dpend.data_flags |= TB_DATA_STORE_FAILED;
        emit(d, e, &d->dpend);
        return true;
    }
    emit(d, e, &d->dpend);
    return false;
}

/* Out of sync, as after a bad packet: an error element, then nothing
 * until the next I-sync.  A held data element goes first (it was good). */
static void lose_sync(tb_etmv3_decoder *d, tb_emit *e, uint64_t index, int err)
{
    tb_element el;

    if (d->dhold)
        (void)data_release(d, e, NULL);
    tb_elem_init(&el, TB_ELEM_NO_SYNC, index);
    el.reason = TB_GAP_BAD_PACKET;
    el.err = err;
    emit(d, e, &el);
    d->synced = false;
    d->gap = true;
    d->pc_known = false;
    forget_block(d);
    d->pending_cc = 0;
    data_reset(d);
}

/* Whether a transfer at a with an address of its own, not contiguous
 * with the one before it (at x->next - 4), has a place in the LDM/POP x
 * that loads the PC (7.4.4: the A bit marks a transfer that is not
 * sequential).  In ascending order (ETMIDR[16] clear) all its transfers
 * are contiguous.  A "load PC first" core (ETMIDR[16] set, etmv3-data.md
 * 1 and 6 [S*]) transfers the PC, at the highest address, first, then
 * the others from the lowest: the one non-sequential step is the second
 * transfer, n - 1 words below the PC's.  Counted back from the final
 * transfer (just below the PC), that places every later packet. */
static bool pc_first_step(const tb_etmv3_decoder *d, const struct data_insn *x, uint32_t a)
{
    const uint32_t pc = x->next - 4;

    return d->cfg.pc_first && x->done == 1 && a == pc - 4u * (uint32_t)(x->op.n - 1);
}

/* A DATA element for the next transfer of d->dx (kind DATA, VALUE NOT
 * TRACED or OOO PLACEHOLDER): instruction, direction, size, address.
 * TB_ERR_MISMATCH for an address no transfer of an LDM loading the PC
 * can have (pc_first_step). */
static int data_elem(tb_etmv3_decoder *d, const tb_packet *pkt, tb_element *el)
{
    struct data_insn *x = &d->dx;
    uint8_t fl = 0;
    bool known;

    tb_elem_init(el, TB_ELEM_DATA, pkt->index);
    el->last_addr = x->addr;
    el->isa = x->isa;
    el->last_size = x->size;
    el->data_size = x->op.size;
    if (x->op.swap ? x->done == 1 : x->op.store)
        fl |= TB_DATA_STORE;
    /* The address: compressed against the last data address output
     * (7.4.2), so known once a full one (D-sync, 7.10.6) came since sync
     * was lost; without the A bit contiguous with the transfer before it
     * (7.4.4). */
    if (pkt->has_data_addr) {
        if (pkt->data_addr_bits >= 32)
            d->daddr_known = true;
        known = d->daddr_known;
        if (x->op.pc_load && known && x->done > 0 && x->next_known &&
            pkt->data_addr != x->next && !pc_first_step(d, x, pkt->data_addr))
            return TB_ERR_MISMATCH;
        el->data_addr = pkt->data_addr;
        x->be = pkt->data_be;
    } else {
        known = (d->cfg.data_trace & 2) && x->done > 0 && x->next_known;
        el->data_addr = x->next;
    }
    if (!known) {
        el->data_addr = 0;
        fl |= TB_DATA_NO_ADDR;
    } else if (x->be) {
        fl |= TB_DATA_BE;
    }
    x->next_known = known;
    x->next = el->data_addr + x->op.size;
    x->done++;
    el->data_flags = fl | TB_DATA_NO_VALUE;
    return 0;
}

/* A value of vbytes bytes for a transfer of size bytes: 0, or the
 * TB_ERR_BAD_PACKET of an impossible size (more bytes than the transfer
 * has; a traced value is never sign-extended, IHI0014Q 4.9.2). */
static int take_value(tb_element *el, const tb_packet *pkt)
{
    if (pkt->data_size > el->data_size)
        return TB_ERR_BAD_PACKET;
    el->data_value = pkt->data_value;
    el->data_flags &= (uint8_t)~TB_DATA_NO_VALUE;
    return 0;
}

/* An element that waits for a Store failed packet (7.4.7: it comes
 * right after the data packet of a failed store-exclusive) or goes out
 * now; while one waits, the fused entries hand over (dhold). */
static void data_out(tb_etmv3_decoder *d, tb_emit *e, const tb_element *el, bool excl)
{
    if (excl && (el->data_flags & TB_DATA_STORE)) {
        flush_range(d, e); /* its instruction goes first */
        d->dpend = *el;
        d->dhold = true;
        d->started = false; /* the fused path hands over (dhold) */
        return;
    }
    emit(d, e, el);
}

/* A placeholder whose value can no longer come: out as OOO data with no
 * value, flagged suppressed when suppression may have deleted it.  Its
 * index is that of the packet that tells (as OOO data has its own
 * packet's), at the end of the trace the last element's: element
 * indices never go back (types.h). */
static void ooo_lost(tb_etmv3_decoder *d, tb_emit *e, unsigned tag, uint64_t index)
{
    tb_element el = d->ooo[tag].el;

    flush_range(d, e); /* the range held back goes first, with its index */
    if (d->out_index > index)
        index = d->out_index;
    if (index > el.index)
        el.index = index;
    el.data_flags |= TB_DATA_OOO | TB_DATA_NO_VALUE;
    if (d->ooo[tag].maybe_lost)
        el.data_flags |= TB_DATA_SUPPRESSED;
    d->ooo[tag].valid = false;
    emit(d, e, &el);
}

static void do_data(tb_etmv3_decoder *d, tb_emit *e, const tb_packet *pkt)
{
    tb_element el;
    int err = 0;

    if (!d->cfg.data_trace) {
        /* ETMCR[3:2] = 0: no data packet can come (IHI0014Q 7.4). */
        lose_sync(d, e, pkt->index, TB_ERR_CONFIG);
        return;
    }
    switch (pkt->kind) {
    case TB_PKT_DATA:
    case TB_PKT_VALUE_NOT_TRACED:
    case TB_PKT_OOO_PLACEHOLDER:
        if ((err = find_data_insn(d)) < 0 || (err = data_elem(d, pkt, &el)) < 0)
            break;
        if (pkt->kind == TB_PKT_DATA && (d->cfg.data_trace & 1) &&
            (err = take_value(&el, pkt)) < 0)
            break;
        if (pkt->kind == TB_PKT_OOO_PLACEHOLDER) {
            /* 7.2 Table 7.1: the value comes later in the OOO data packet
             * with the same tag.  An outstanding one with this tag whose
             * value a gap or suppression may have lost goes first. */
            struct ooo_slot *o = &d->ooo[pkt->data_tag & 3];

            if (!(pkt->data_tag & 3)) {
                err = TB_ERR_BAD_PACKET;
                break;
            }
            if (o->valid) {
                if (!o->maybe_lost && d->ton.index <= o->el.index) {
                    err = TB_ERR_MISMATCH; /* its tag is still out */
                    break;
                }
                ooo_lost(d, e, pkt->data_tag & 3, pkt->index);
            }
            el.reason = pkt->data_tag & 3;
            o->el = el;
            o->valid = true;
            o->maybe_lost = false;
        }
        data_out(d, e, &el, d->dx.op.excl);
        return;
    case TB_PKT_OOO_DATA: {
        struct ooo_slot *o = &d->ooo[pkt->data_tag & 3];

        if (!(pkt->data_tag & 3) || !o->valid) {
            err = TB_ERR_MISMATCH; /* no placeholder with its tag */
            break;
        }
        el = o->el;
        el.index = pkt->index;
        el.data_flags |= TB_DATA_OOO;
        if ((err = take_value(&el, pkt)) < 0)
            break;
        o->valid = false;
        data_out(d, e, &el, false);
        return;
    }
    case TB_PKT_STORE_FAILED:
        /* Only right after a store-exclusive's data (dhold, taken in
         * tb_etmv3_decoder_packet). */
        err = TB_ERR_MISMATCH;
        break;
    case TB_PKT_DATA_SUPPRESSED:
        /* 7.4.6: data packets were deleted from here, those of the data
         * instruction in progress to its end; nothing says how many.  A
         * DATA element flagged SUPPRESSED marks the hole; outstanding
         * placeholders may never get their value. */
        tb_elem_init(&el, TB_ELEM_DATA, pkt->index);
        el.data_flags = TB_DATA_SUPPRESSED | TB_DATA_NO_ADDR | TB_DATA_NO_VALUE;
        if (find_data_insn(d) == 0) {
            el.last_addr = d->dx.addr;
            el.isa = d->dx.isa;
            el.last_size = d->dx.size;
            d->dx.done = d->dx.op.n;
        } else {
            el.isa = TB_ISA_UNKNOWN;
        }
        for (unsigned t = 1; t < 4; t++)
            d->ooo[t].maybe_lost = d->ooo[t].valid;
        emit(d, e, &el);
        return;
    default:
        return;
    }
    lose_sync(d, e, pkt->index, err);
}

int tb_etmv3_decoder_packet(tb_etmv3_decoder *d, const tb_packet *pkt,
                            tb_element_cb cb, void *ctx)
{
    tb_emit e;
    tb_element el;

    if (!d || !pkt)
        return TB_ERR_INVAL;
    tb_emit_init(&e, cb, ctx);
    if (d->dhold && data_release(d, &e, pkt))
        return tb_emit_result(&e);
    if (pkt->kind == TB_PKT_ATOM && d->started && d->synced) {
        /* Most packets: P-headers.  A cycle-accurate one with W atoms
         * only (IHI0014Q 7.3.1 format 3 without E, or format 1 with no
         * atoms) just counts cycles. */
        if (pkt->w_count == pkt->seq_len && pkt->atom_count == 0)
            d->pending_cc += pkt->w_count;
        else
            do_pheader(d, &e, pkt);
        return tb_emit_result(&e);
    }
    if (!d->started) {
        tb_elem_init(&el, TB_ELEM_NO_SYNC, pkt->index);
        el.reason = TB_GAP_INIT;
        emit(d, &e, &el);
        d->started = true;
    }
    switch (pkt->kind) {
    case TB_PKT_RESERVED:
    case TB_PKT_BAD_SEQUENCE:
    case TB_PKT_BAD_TRACEMODE:
    case TB_PKT_INCOMPLETE:
        lose_sync(d, &e, pkt->index,
                  pkt->kind == TB_PKT_INCOMPLETE ? TB_ERR_TRUNCATED
                  : pkt->err ? pkt->err : TB_ERR_BAD_PACKET);
        return tb_emit_result(&e);
    case TB_PKT_ISYNC: {
        const tb_etmv3_isync is = isync_of(pkt);

        do_isync(d, &e, &is);
        return tb_emit_result(&e);
    }
    default:
        break;
    }
    if (!d->synced)
        return tb_emit_result(&e); /* nothing to decode from yet (2.3) */

    switch (pkt->kind) {
    case TB_PKT_ATOM:
        do_pheader(d, &e, pkt);
        break;
    case TB_PKT_BRANCH: {
        const tb_etmv3_branch br = branch_of(pkt);

        do_branch(d, &e, &br);
        break;
    }
    case TB_PKT_CYCLE_COUNT:
        d->pending_cc += pkt->cc;
        break;
    case TB_PKT_EXC_RETURN:
        tb_elem_init(&el, TB_ELEM_EXC_RETURN, pkt->index);
        emit(d, &e, &el);
        break;
    case TB_PKT_EXC_ENTRY:
        /* v7-M data-trace marker: the exception itself comes with the
         * branch packet. */
        break;
    case TB_PKT_TIMESTAMP:
        tb_elem_init(&el, TB_ELEM_TIMESTAMP, pkt->index);
        el.ts = pkt->ts;
        emit(d, &e, &el);
        break;
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
        tb_elem_init(&el, TB_ELEM_EVENT, pkt->index);
        emit(d, &e, &el);
        break;
    case TB_PKT_DATA:
    case TB_PKT_OOO_DATA:
    case TB_PKT_OOO_PLACEHOLDER:
    case TB_PKT_STORE_FAILED:
    case TB_PKT_DATA_SUPPRESSED:
    case TB_PKT_VALUE_NOT_TRACED:
        do_data(d, &e, pkt);
        break;
    default:
        break; /* A-sync, ignore */
    }
    return tb_emit_result(&e);
}

int tb_etmv3_decoder_finish(tb_etmv3_decoder *d, tb_element_cb cb, void *ctx)
{
    tb_emit e;
    tb_element el;

    if (!d)
        return TB_ERR_INVAL;
    tb_emit_init(&e, cb, ctx);
    if (d->dhold)
        (void)data_release(d, &e, NULL);
    /* Placeholders still out: the trace ended before their values. */
    for (;;) {
        unsigned t, first = 0;

        for (t = 1; t < 4; t++)
            if (d->ooo[t].valid && (!first || d->ooo[t].el.index < d->ooo[first].el.index))
                first = t;
        if (!first)
            break;
        ooo_lost(d, &e, first, 0);
    }
    tb_elem_init(&el, TB_ELEM_END, 0);
    emit(d, &e, &el);
    return tb_emit_result(&e);
}
