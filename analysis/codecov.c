/*
 * Code coverage from decoder elements (codecov.h).  Two tables:
 *   blocks: (start, isa, count, atom_bits, last_atom, known) -> hits,
 *           one lookup per instruction range (the hot path);
 *   insns:  address -> counts, filled from the blocks when a source ends
 *           or the block table is full, with the memory image at hand
 *           (Thumb sizes, condition fields).
 * Both are open-addressed hash tables that double when half full.
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/classify.h"
#include "tracebench/codecov.h"
#include "tracebench/decoder.h"

typedef struct block {
    uint32_t start, count, atom_bits;
    uint8_t isa, last_atom, used;
    uint8_t ptm_last_known; /* PTM: the last instruction is a waypoint */
    uint64_t hits;
} block;

typedef struct ientry {
    tb_codecov_insn in;
    bool used;
} ientry;

struct tb_codecov {
    tb_protocol proto;
    const tb_memimage *mem;
    bool in_source;
    bool shown;        /* the source has shown an instruction */
    bool halted;       /* a debug halt shown since the last range: its
                        * exit is no gap (docs/debug-halt.md) */
    bool has_entry;
    uint32_t entry;    /* the program's entry point */
    block *b;
    size_t bcap, bn;
    size_t max_blocks; /* the block table's limit (entries) */
    ientry *t;
    size_t tcap, tn;
    tb_codecov_insn *sorted;
    size_t nsorted;
    uint64_t gaps;
    uint32_t *addrs;   /* scratch for one range's addresses */
    size_t acap;
    /* The slot last found for a range starting at these address bits:
     * most ranges repeat (loops), and a direct index skips the hash.
     * Always < bcap (the table never shrinks); the slot's key is
     * compared in full, so a stale index only misses. */
    uint32_t memo[256];
};

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

/* A block key's hash from its fields as values: the element path builds
 * no key struct on the stack, whose byte-wise stores read back as wider
 * loads stalled store forwarding there (perf, bench_decode --analysis:
 * the lookup cost more than the decode of its range). */
static inline size_t key_hash(uint32_t start, uint32_t count, uint32_t atom_bits, uint8_t isa,
                              uint8_t last_atom, uint8_t ptm_last_known)
{
    uint64_t h = ((uint64_t)start << 32) ^ ((uint64_t)count << 8) ^ isa ^
                 ((uint64_t)atom_bits * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)last_atom << 16) ^
                 ((uint64_t)ptm_last_known << 24);

    return (size_t)mix(h);
}

static size_t block_hash(const block *k)
{
    return key_hash(k->start, k->count, k->atom_bits, k->isa, k->last_atom, k->ptm_last_known);
}

tb_codecov *tb_codecov_new(void)
{
    tb_codecov *c = calloc(1, sizeof *c);

    if (!c)
        return NULL;
    c->bcap = 4096;
    c->tcap = 4096;
    c->max_blocks = TB_CODECOV_MAX_BLOCKS;
    c->b = calloc(c->bcap, sizeof *c->b);
    c->t = calloc(c->tcap, sizeof *c->t);
    if (!c->b || !c->t) {
        tb_codecov_free(c);
        return NULL;
    }
    return c;
}

void tb_codecov_free(tb_codecov *c)
{
    if (!c)
        return;
    free(c->b);
    free(c->t);
    free(c->sorted);
    free(c->addrs);
    free(c);
}

int tb_codecov_set_max_blocks(tb_codecov *c, size_t max)
{
    if (!c || max < c->bcap || (max & (max - 1)))
        return TB_ERR_INVAL;
    c->max_blocks = max;
    return 0;
}

int tb_codecov_set_entry(tb_codecov *c, uint32_t addr)
{
    if (!c)
        return TB_ERR_INVAL;
    c->has_entry = true;
    c->entry = addr;
    return 0;
}

int tb_codecov_begin(tb_codecov *c, tb_protocol protocol, const tb_memimage *mem)
{
    if (!c || !mem)
        return TB_ERR_INVAL;
    if (c->in_source)
        return TB_ERR_STATE;
    c->proto = protocol;
    c->mem = mem;
    c->in_source = true;
    c->shown = false;
    c->halted = false;
    return 0;
}

/* ---- the per-instruction table ---- */

static int insn_grow(tb_codecov *c)
{
    size_t ncap = c->tcap * 2;
    ientry *nt = calloc(ncap, sizeof *nt);

    if (!nt)
        return TB_ERR_NOMEM;
    for (size_t i = 0; i < c->tcap; i++) {
        if (!c->t[i].used)
            continue;
        size_t j = mix(c->t[i].in.addr) & (ncap - 1);

        while (nt[j].used)
            j = (j + 1) & (ncap - 1);
        nt[j] = c->t[i];
    }
    free(c->t);
    c->t = nt;
    c->tcap = ncap;
    return 0;
}

/* The entry for (addr, isa), made when new; NULL on allocation failure. */
static tb_codecov_insn *insn_get(tb_codecov *c, uint32_t addr, uint8_t isa)
{
    size_t j;

    if ((c->tn + 1) * 2 > c->tcap && insn_grow(c) < 0)
        return NULL;
    j = mix(addr) & (c->tcap - 1);
    while (c->t[j].used) {
        if (c->t[j].in.addr == addr && c->t[j].in.isa == isa)
            return &c->t[j].in;
        j = (j + 1) & (c->tcap - 1);
    }
    c->t[j].used = true;
    c->t[j].in = (tb_codecov_insn){.addr = addr, .isa = isa};
    c->tn++;
    return &c->t[j].in;
}

bool tb_codecov_insn_cond(tb_isa isa, const uint8_t *p, size_t avail, unsigned *it_len)
{
    *it_len = 0;
    if (isa == TB_ISA_ARM) {
        if (avail < 4)
            return false;
        /* IHI0406C A8.3: cond 0b1111 is the unconditional space. */
        return (p[3] >> 4) < 14;
    }
    if (avail < 2)
        return false;
    uint16_t hw = (uint16_t)(p[0] | p[1] << 8);

    if (tb_thumb_size(hw) == 2) {
        /* IT (A8.8.54): firstcond in [7:4], mask in [3:0]; the block is
         * as long as the mask up to its lowest set bit. */
        if ((hw & 0xFF00) == 0xBF00 && (hw & 0xF)) {
            unsigned m = hw & 0xF, n = 4;

            while (!(m & 1)) {
                m >>= 1;
                n--;
            }
            *it_len = n;
            return false;
        }
        /* B<c> T1 (A8.8.18): 1101 cond imm8, cond not 111x. */
        if ((hw & 0xF000) == 0xD000 && ((hw >> 8) & 0xF) < 14)
            return true;
        /* CBZ/CBNZ (A8.8.29): 1011 x0x1 ... */
        return (hw & 0xF500) == 0xB100;
    }
    if (avail < 4)
        return false;
    uint16_t hw2 = (uint16_t)(p[2] | p[3] << 8);

    /* B<c> T3 (A8.8.18): 11110 S cond imm6, 10 J1 0 J2 imm11, cond not 111x. */
    return (hw & 0xF800) == 0xF000 && (hw2 & 0xD000) == 0x8000 && ((hw >> 6) & 0xF) < 14;
}

/* One block's instructions into the per-instruction table. */
static int fold_block(tb_codecov *c, const block *bk)
{
    tb_element el = {.kind = TB_ELEM_INSN_RANGE, .isa = bk->isa, .start = bk->start,
                     .count = bk->count};
    const bool ptm = c->proto == TB_PROTO_PTM;
    const bool atoms = bk->isa == TB_ISA_ARM || bk->isa == TB_ISA_THUMB;
    unsigned it_left = 0;
    int n;

    if (bk->count > c->acap) {
        uint32_t *a = realloc(c->addrs, bk->count * sizeof *a);

        if (!a)
            return TB_ERR_NOMEM;
        c->addrs = a;
        c->acap = bk->count;
    }
    n = tb_range_addrs(c->mem, &el, c->addrs, bk->count);
    if (n < 0)
        return n;
    for (int i = 0; i < n; i++) {
        uint32_t a = c->addrs[i];
        size_t avail = 0;
        const uint8_t *p = tb_memimage_ptr(c->mem, a, &avail);
        tb_codecov_insn *in = insn_get(c, a, bk->isa);
        unsigned it_len = 0;
        char atom = 0; /* 0: no atom tells the condition */

        if (!in)
            return TB_ERR_NOMEM;
        if (!in->size)
            in->size = (uint8_t)(bk->isa == TB_ISA_ARM ? 4
                                 : p && avail >= 2 ? tb_thumb_size((uint16_t)(p[0] | p[1] << 8))
                                                   : 2);
        if (p && atoms && tb_codecov_insn_cond((tb_isa)bk->isa, p, avail, &it_len))
            in->flags |= TB_CODECOV_COND;
        if (it_left) {
            in->flags |= TB_CODECOV_COND;
            it_left--;
        }
        if (it_len)
            it_left = it_len;
        /* Which atom, if any, traced this instruction: as the addr
         * listing reads a range (cli/addr_out.c).  PTM: the last
         * instruction when it is a waypoint other than a barrier
         * (IHI0035B B.3.2); ETMv3 and the ports: every instruction
         * (IHI0014Q 7.3, 5.1), N bits in atom_bits, the last one's in
         * last_atom. */
        if (!atoms)
            atom = 0;
        else if (ptm)
            atom = i + 1 == n && bk->ptm_last_known ? (char)bk->last_atom : 0;
        else if (i + 1 == n)
            atom = (char)bk->last_atom;
        else
            atom = i < 32 && ((bk->atom_bits >> i) & 1) ? 'N' : 'E';
        in->count += bk->hits;
        if (atom == 'N') {
            in->failed += bk->hits;
            in->flags |= TB_CODECOV_COND;
        } else if (atom == 'E') {
            in->passed += bk->hits;
        } else {
            in->flags |= TB_CODECOV_COND_UNKNOWN;
        }
    }
    return 0;
}

static int fold_all(tb_codecov *c)
{
    for (size_t i = 0; i < c->bcap; i++) {
        if (!c->b[i].used)
            continue;
        int r = fold_block(c, &c->b[i]);

        if (r < 0)
            return r;
    }
    memset(c->b, 0, c->bcap * sizeof *c->b);
    c->bn = 0;
    return 0;
}

/* ---- the block table: the hot path ---- */

static int block_grow(tb_codecov *c)
{
    size_t ncap = c->bcap * 2;
    block *nb;

    if (ncap > c->max_blocks)
        return fold_all(c); /* bounded: fold and start again */
    nb = calloc(ncap, sizeof *nb);
    if (!nb)
        return TB_ERR_NOMEM;
    for (size_t i = 0; i < c->bcap; i++) {
        if (!c->b[i].used)
            continue;
        size_t j = block_hash(&c->b[i]) & (ncap - 1);

        while (nb[j].used)
            j = (j + 1) & (ncap - 1);
        nb[j] = c->b[i];
    }
    free(c->b);
    c->b = nb;
    c->bcap = ncap;
    return 0;
}

/* An element that opens a gap in what the trace shows, as the addr
 * listing has them (cli/addr_out.c): trace switched on again by the
 * filter, an overflow, a debug exit whose halt was not shown, and any
 * loss of sync after the start; losses to corrupt trace and code the
 * image lacks anywhere. */
static bool opens_gap(tb_codecov *c, const tb_element *el)
{
    switch (el->kind) {
    case TB_ELEM_TRACE_ON:
        if (!c->shown)
            /* The first sync: trace that starts by being enabled shows
             * everything from there on; a periodic I-sync first means
             * the buffer holds the tail of a longer run. */
            return el->reason == TB_ISYNC_PERIODIC;
        /* A debug halt shown (exception 1, IHI0014Q 7.3.5, IHI0035B
         * 4.5.4) and then its exit (reason b11): the core ran nothing
         * in between (docs/debug-halt.md).  An exit without its halt
         * (ETMv1 and ETMv2 trace none; trace off at it) may hide code
         * that ran while trace was off. */
        return el->reason == TB_ISYNC_TRACE_ON || el->reason == TB_ISYNC_OVERFLOW ||
               (el->reason == TB_ISYNC_DEBUG_EXIT && !c->halted);
    case TB_ELEM_NO_SYNC:
        if (el->err == TB_ERR_TRUNCATED)
            return false; /* the end: nothing that ran before is lost */
        if (el->reason == TB_GAP_BAD_PACKET || el->reason == TB_GAP_INCONSISTENT)
            return true;
        return c->shown && el->reason != TB_GAP_INIT;
    case TB_ELEM_ADDR_NACC:
    case TB_ELEM_ADDR_UNKNOWN:
        return true;
    default:
        return false;
    }
}

int tb_codecov_element(tb_codecov *c, const tb_element *el)
{
    uint32_t start, count, atom_bits = 0;
    uint8_t isa, last_atom, ptm_last_known = 0;
    size_t j;

    if (!c || !el || !c->in_source)
        return TB_ERR_INVAL;
    if (el->kind != TB_ELEM_INSN_RANGE) {
        if (el->kind == TB_ELEM_EXCEPTION && el->exc_num == 1 && !el->tailchain)
            c->halted = true;
        else if (opens_gap(c, el))
            c->gaps++, c->halted = false;
        return 0;
    }
    if (!el->count)
        return 0;
    c->halted = false;
    if (!c->shown && c->has_entry && el->start != c->entry)
        c->gaps++; /* the program ran before the trace began */
    c->shown = true;
    start = el->start;
    count = el->count;
    isa = el->isa;
    last_atom = (uint8_t)el->last_atom;
    if (c->proto == TB_PROTO_PTM)
        ptm_last_known = el->last_wp != TB_WP_NONE && el->last_wp != TB_WP_BARRIER;
    else
        atom_bits = el->atom_bits & (count >= 32 ? ~0u : ((1u << count) - 1));
    {
        uint32_t *m = &c->memo[(start >> 1) & 255];
        block *b = &c->b[*m];

        if (b->used && b->start == start && b->count == count && b->atom_bits == atom_bits &&
            b->isa == isa && b->last_atom == last_atom && b->ptm_last_known == ptm_last_known) {
            b->hits++;
            return 0;
        }
    }
    if ((c->bn + 1) * 2 > c->bcap) {
        int r = block_grow(c);

        if (r < 0)
            return r;
    }
    j = key_hash(start, count, atom_bits, isa, last_atom, ptm_last_known) & (c->bcap - 1);
    while (c->b[j].used) {
        block *b = &c->b[j];

        if (b->start == start && b->count == count && b->atom_bits == atom_bits &&
            b->isa == isa && b->last_atom == last_atom && b->ptm_last_known == ptm_last_known) {
            b->hits++;
            c->memo[(start >> 1) & 255] = (uint32_t)j;
            return 0;
        }
        j = (j + 1) & (c->bcap - 1);
    }
    c->memo[(start >> 1) & 255] = (uint32_t)j;
    c->b[j] = (block){.start = start, .count = count, .atom_bits = atom_bits, .isa = isa,
                      .last_atom = last_atom, .used = 1, .ptm_last_known = ptm_last_known,
                      .hits = 1};
    c->bn++;
    return 0;
}

int tb_codecov_end(tb_codecov *c)
{
    int r;

    if (!c)
        return TB_ERR_INVAL;
    if (!c->in_source)
        return TB_ERR_STATE;
    /* A source that showed no instruction (never synchronised, or all
     * lost): whatever ran is unknown. */
    if (!c->shown)
        c->gaps++;
    r = fold_all(c);
    c->in_source = false;
    c->mem = NULL;
    return r;
}

static int cmp_insn(const void *pa, const void *pb)
{
    const tb_codecov_insn *a = pa, *b = pb;

    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    return (a->isa > b->isa) - (a->isa < b->isa);
}

const tb_codecov_insn *tb_codecov_insns(tb_codecov *c, size_t *n)
{
    size_t k = 0;
    tb_codecov_insn *s;

    if (!c || !n)
        return NULL;
    *n = 0;
    s = realloc(c->sorted, (c->tn ? c->tn : 1) * sizeof *s);
    if (!s)
        return NULL;
    c->sorted = s;
    for (size_t i = 0; i < c->tcap; i++)
        if (c->t[i].used)
            s[k++] = c->t[i].in;
    qsort(s, k, sizeof *s, cmp_insn);
    c->nsorted = k;
    *n = k;
    return s;
}

uint64_t tb_codecov_gaps(const tb_codecov *c)
{
    return c ? c->gaps : 0;
}
