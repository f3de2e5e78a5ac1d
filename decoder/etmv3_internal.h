/* Internal state of the ETMv3 decompressor, shared by its files:
 * etmv3_decoder.c (the core: ranges, I-syncs, branches, the packet
 * path), etmv3_phdr.c (P-header atoms in batches, the fused entry),
 * etmv3_data.c (data trace). */
#ifndef TB_ETMV3_INTERNAL_H
#define TB_ETMV3_INTERNAL_H

#include "dec_core.h"
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
    TB_DEC_STATE;

    uint32_t pending_cc;   /* W atoms since the last E/N atom */
    /* The most instructions a range holds: 32, or 1 when each range is
     * to end where its cycle count ends (tb_decoder_set_cycle_ranges on
     * cycle-accurate trace: every instruction has its own atom and
     * count, IHI0014Q 7.3.1). */
    uint32_t rmax;

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
    /* An exception exit packet (0x76) right after the held range's last
     * instruction (the exception return): held behind it, because a
     * Cancel in the branch packet that follows still retracts that
     * instruction (IHI0014Q 6.7.1: the most recently traced one), and
     * with it this element. */
    bool xret_held;
    tb_element xret;

    /* Each P-header byte's atoms under cfg (IHI0014Q 7.3.1), as the
     * fused path's scan (scan_headers) adds them to a batch: hlim the
     * E/N atoms, or 0xFF for no P-header (so that one room check ends
     * the scan at either); hnm their N flags; hS the W atoms before
     * each atom's end (lanes past the atoms unused); hW the W atoms in
     * every lane. */
    uint8_t hlim[256];
    uint64_t hnm[256];
    tb_v8u16 hS[256], hW[256];

    /* Data trace (IHI0014Q 7.4): packet path only, see tb_etmv3_dec_do_data().  With
     * data trace off none of it is ever set. */
    bool dhold;             /* dpend waits for a Store failed packet;
                             * started is false meanwhile, so that the
                             * fused entries, which take nothing before
                             * the start, hand the next packet to the
                             * packet path (data_out, tb_etmv3_dec_data_release) */
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
                             * placeholder's element takes it (tb_etmv3_dec_ooo_lost) */

    /* v7-M (cfg.v7m): an exception return packet waits for the packet
     * after it, whose Cancel may withdraw it (DDI0337E 15.5.2) and
     * whose exception bytes make the next exception a tail-chain;
     * started is false meanwhile, as with dhold, so that the fused
     * entries hand the next packet to the packet path. */
    bool ehold;
    tb_element eret;
};

/* The newest range and an exception exit held with it go out (core;
 * inline, as the P-header walk calls it for every range). */
static inline void etmv3_flush_range(tb_etmv3_decoder *d, tb_emit *e)
{
    if (d->rng_valid) {
        tb_emit_el(e, &d->rng);
        d->out_index = d->rng.index;
        d->rng_valid = d->rng_open = d->rng_loop = false;
    }
    if (d->xret_held) {
        tb_emit_el(e, &d->xret);
        d->out_index = d->xret.index;
        d->xret_held = false;
    }
}

/* Every element other than a range goes out through here, after the
 * held-back range, so the element order is the trace order. */
static inline void etmv3_emit(tb_etmv3_decoder *d, tb_emit *e, const tb_element *el)
{
    etmv3_flush_range(d, e);
    tb_emit_el(e, el);
    if (el->kind != TB_ELEM_END)
        d->out_index = el->index;
}

/* etmv3_decoder.c */
void tb_etmv3_dec_do_atom(tb_etmv3_decoder *d, tb_emit *e, uint64_t index, char atom,
                          uint32_t cycles);
void tb_etmv3_dec_lose_sync(tb_etmv3_decoder *d, tb_emit *e, uint64_t index, int err);

/* etmv3_phdr.c */
void tb_etmv3_dec_atoms_from_seq(const char *seq, unsigned len, phdr_atoms *a);
void tb_etmv3_dec_do_pheader(tb_etmv3_decoder *d, tb_emit *e, const tb_packet *pkt);

/* etmv3_data.c */
void tb_etmv3_dec_data_reset(tb_etmv3_decoder *d);
bool tb_etmv3_dec_data_release(tb_etmv3_decoder *d, tb_emit *e, const tb_packet *pkt);
void tb_etmv3_dec_ooo_lost(tb_etmv3_decoder *d, tb_emit *e, unsigned tag, uint64_t index);
void tb_etmv3_dec_do_data(tb_etmv3_decoder *d, tb_emit *e, const tb_packet *pkt);

#endif
