/*
 * ETMv3 P-headers (IHI0014Q 7.3.1), many at a time: a run of them becomes
 * one batch of atoms, walked a block at a time (the fused entry
 * tb_etmv3_decoder_phdrs, and the packet path's P-header packets).
 */
#include <string.h>

#include "etmv3_internal.h"

/* Atoms of a W/E/N sequence; other letters are skipped, as the
 * per-atom walker always did. */
void tb_etmv3_dec_atoms_from_seq(const char *seq, unsigned len, phdr_atoms *a)
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
 * instructions.  The result is exactly what tb_etmv3_dec_do_atom() gives one atom at
 * a time; anything unusual (address unknown, no code, a long Thumb
 * block) goes through tb_etmv3_dec_do_atom().  Returns -1, or the atom after which a
 * callback stopped the walk (the rest are dropped, as before).
 * One step per block, even past a branch not taken: steps that cross
 * such ends along a chain of blocks were a third fewer on TC2 and the
 * long trace, yet 2-4% and 10% slower, since the steps saved were the
 * cheap ones (the range goes on) and every other step paid for the
 * chain's lookups.  A loop's turn that repeats the last range is one
 * step whatever its blocks (rng_loop): 3/4 of the long trace's ranges,
 * +25-38% there.  A memo of ranges by start address (any range seen
 * before, not only the last) took 72% of the long trace's ranges, yet
 * its lookups and records cost TC2, where few ranges repeat, 3-5%.
 * rmax: d->rmax, a constant at the fused entry's calls, so that the
 * default (32) costs nothing for the option (1). */
static TB_ALWAYS_INLINE int run_atoms(tb_etmv3_decoder *d, tb_emit *e, tb_span_cur *cur,
                     size_t pos, const atom_batch *ab, const uint32_t rmax)
{
    const bool ca = d->cfg.cycle_accurate;
    const unsigned n = ab->n;
    tb_element *const r = &d->rng;
    tb_block_cache *const bc = d->bc;
    /* The walk's position and the range's length in locals, written
     * back when the walk ends or goes through tb_etmv3_dec_do_atom(): as fields of d
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
                etmv3_flush_range(d, e);
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
        if (!open || rend != pc || r->isa != d->isa || rcount >= rmax) {
            etmv3_flush_range(d, e);
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
                m = 1; /* the callback stopped: as tb_etmv3_dec_do_atom, one more */
                stop = true;
            }
        }
        room = rmax - rcount;
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
        tb_etmv3_dec_do_atom(d, e, tb_span_at(cur, pos + ab->hoff[i]),
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

void tb_etmv3_dec_do_pheader(tb_etmv3_decoder *d, tb_emit *e, const tb_packet *pkt)
{
    const unsigned n = pkt->seq_len < sizeof pkt->seq ? pkt->seq_len
                                                      : sizeof pkt->seq;
    phdr_atoms a;
    atom_batch ab;
    tb_span_cur cur;

    if (e->err)
        return;
    tb_etmv3_dec_atoms_from_seq(pkt->seq, n, &a);
    batch_init(&ab, d->pending_cc, true);
    batch_add(&ab, &a, 0);
    tb_span_cur_flat(&cur, pkt->index);
    (void)run_atoms(d, e, &cur, 0, &ab, d->rmax);
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
        stop = d->rmax == 32 ? run_atoms(d, &e, cur, pos + k0, &ab, 32)
                             : run_atoms(d, &e, cur, pos + k0, &ab, 1);
        if (stop >= 0) {
            k = k0 + ab.hoff[stop] + 1u;
            break;
        }
    }
    return tb_emit_took(&e, (int)k, nel);
}
