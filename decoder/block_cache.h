/*
 * Block cache (libipt's idea, private to the decoders): per (address,
 * ISA), the run of instructions from that address up to and including
 * the next waypoint, so a PTM atom, or a run of ETMv3 atoms, costs one
 * lookup instead of one classification per instruction.
 *
 * Which classes end a block is fixed per cache (PTM: branches, ISB, and
 * DMB/DSB when ETMCCER[24] says so, protocol-notes 3.12; ETMv3: only
 * instructions that can change the flow).  The image is const for the
 * cache's life, so entries never go stale; the table is two-way set
 * associative and fixed in size.
 */
#ifndef TB_BLOCK_CACHE_H
#define TB_BLOCK_CACHE_H

#include "tracebench/classify.h"
#include "tracebench/snapshot.h"

enum tb_block_status {
    TB_BLOCK_WP = 0,     /* ends with a waypoint (last) */
    TB_BLOCK_LIMIT,      /* length limit reached, no waypoint yet */
    TB_BLOCK_NACC,       /* code runs out: the next insn is not mapped */
    TB_BLOCK_BAD_ISA,    /* ThumbEE / Jazelle: cannot be decoded */
};

typedef struct tb_block {
    uint32_t start;
    uint32_t end;          /* address after the last instruction */
    uint16_t n;            /* instructions, the last included */
    uint8_t isa;
    uint8_t status;        /* tb_block_status */
    /* Where the flow went from here last time (tb_block_follow), as pool
     * indices: next[0] past the last instruction, next[1] its branch
     * taken.  A guess, checked on use; the block's own index until the
     * edge is first followed. */
    uint16_t next[2];
    const uint8_t *code;   /* image bytes at start (NULL if n == 0) */
    uint64_t wide;         /* Thumb: bit i set when instruction i (< 64)
                              is 32-bit, so a decoder need not re-read the
                              code to step through the block */
    tb_insn last;          /* the last instruction (n > 0); wp_class
                              NONE unless status is WP (fill()) */
} tb_block;

#define TB_BC_BITS 14 /* at most 65535 blocks: slot is 16-bit */
#define TB_BC_SIZE (1u << TB_BC_BITS)

/* Visible so that a hit is an inline lookup (the decoders look a block
 * up for every waypoint); only block_cache.c changes it.  Hash slot h
 * holds at most one block, pool[slot[h] - 1]; the inline lookup checks
 * h, the miss path the partner slot h ^ 1 (tb_block_miss).  The blocks
 * sit in the pool in the order their slots were first used, so a trace
 * touches memory in proportion to the blocks it needs: a table of
 * blocks indexed by hash would spread even a short trace's few hundred
 * blocks over all of its 1 MiB, a page fault each on first touch. */
typedef struct tb_block_cache {
    const tb_memimage *mem;
    unsigned wp_mask;
    uint16_t *slot;        /* 0: empty, else 1 + pool index */
    tb_block *pool;        /* TB_BC_SIZE blocks, the first `used` made */
    uint32_t used;
} tb_block_cache;

/* wp_mask: bit c set when tb_wp_class c ends a block. */
tb_block_cache *tb_block_cache_new(const tb_memimage *mem, unsigned wp_mask);
void tb_block_cache_free(tb_block_cache *bc);
/* The block at (addr, isa) when it is not in hash slot h: found in the
 * partner slot, or made; either way it then sits in h (the miss path of
 * tb_block_get). */
const tb_block *tb_block_miss(tb_block_cache *bc, uint32_t h, uint32_t addr,
                              tb_isa isa);

/* The hash slot of (addr, isa), the block's own; the partner slot is
 * the hash ^ 1. */
static inline uint32_t tb_block_hash(uint32_t addr, tb_isa isa)
{
    return (((addr >> 1) * 0x9E3779B1u) >> (32 - TB_BC_BITS)) ^ (isa & 1);
}

/* The block at (addr, isa).  The pointer stays valid only until the next
 * lookup.  Never NULL; n == 0 with status NACC when addr is unmapped. */
static inline const tb_block *tb_block_get(tb_block_cache *bc, uint32_t addr,
                                           tb_isa isa)
{
    const uint32_t h = tb_block_hash(addr, isa);
    const unsigned s = bc->slot[h];

    if (s) {
        const tb_block *b = &bc->pool[s - 1];

        if (b->start == addr && b->isa == isa)
            return b;
    }
    return tb_block_miss(bc, h, addr, isa);
}

/* Edges out of a block, for tb_block_follow. */
#define TB_EDGE_ON 0    /* on past the last instruction (not taken, limit) */
#define TB_EDGE_TAKEN 1 /* the waypoint's branch taken, to any address */

/*
 * The block at (addr, isa) when the flow comes to it from block `from`
 * (NULL: from nowhere known) by `edge`.  `from` remembers where that
 * edge led last time; when that block is still the one at addr, finding
 * it is one load from `from`, instead of the hash, slot and pool loads
 * that otherwise stand between one block and the next on the decoders'
 * critical path.  The link is only a guess checked like a slot's block,
 * so `from` may be any block this cache ever gave, even one whose pool
 * entry has since been refilled (then the link just misses).
 */
static inline const tb_block *tb_block_follow(tb_block_cache *bc, const tb_block *from,
                                              unsigned edge, uint32_t addr, tb_isa isa)
{
    const tb_block *b;

    if (from) {
        b = &bc->pool[from->next[edge]];
        if (b->start == addr && b->isa == isa)
            return b;
    }
    b = tb_block_get(bc, addr, isa);
    if (from)
        bc->pool[from - bc->pool].next[edge] = (uint16_t)(b - bc->pool);
    return b;
}

/* Address of the k-th instruction after addr within straight-line code
 * of block b (k < b->n); addr must be an instruction start of b. */
uint32_t tb_block_advance(const tb_block *b, uint32_t addr, uint32_t k);
/* Size of instruction idx of block b, at addr. */
static inline unsigned tb_block_size_at(const tb_block *b, uint32_t idx,
                                        uint32_t addr)
{
    const uint8_t *p;

    if (b->isa == TB_ISA_ARM)
        return 4;
    if (idx < 64)
        return ((b->wide >> idx) & 1) ? 4 : 2;
    p = b->code + (addr - b->start);
    return tb_thumb_size((uint16_t)(p[0] | p[1] << 8));
}

/* Classifies one instruction (for the range walker); size or TB_ERR_*.
 * Its wp_class is NONE unless the class ends this cache's blocks. */
int tb_block_insn(tb_block_cache *bc, uint32_t addr, tb_isa isa, tb_insn *out);

#define TB_WPMASK_BRANCHES ((1u << TB_WP_DIRECT) | (1u << TB_WP_DIRECT_LINK) | \
                            (1u << TB_WP_INDIRECT) | (1u << TB_WP_INDIRECT_LINK))

#endif
