/* Block cache: see block_cache.h. */
#include <stdlib.h>
#include <string.h>

#include "block_cache.h"

/* Longest block before a LIMIT split; the walker chains blocks, so this
 * only bounds the work of one miss. */
#define BC_MAX_INSNS 512

tb_block_cache *tb_block_cache_new(const tb_memimage *mem, unsigned wp_mask)
{
    tb_block_cache *bc = calloc(1, sizeof *bc);

    if (!bc)
        return NULL;
    bc->mem = mem;
    bc->wp_mask = wp_mask;
    bc->cls = tb_classifier_new();
    bc->slot = calloc(TB_BC_SIZE, sizeof *bc->slot);
    /* Not zeroed: fill() writes a block before any read of it.  One
     * cache line per block (64 bytes), so a lookup touches one line. */
    bc->pool = aligned_alloc(64, TB_BC_SIZE * sizeof *bc->pool);
    if (!bc->cls || !bc->slot || !bc->pool) {
        tb_block_cache_free(bc);
        return NULL;
    }
    return bc;
}

void tb_block_cache_free(tb_block_cache *bc)
{
    if (!bc)
        return;
    tb_classifier_free(bc->cls);
    free(bc->slot);
    free(bc->pool);
    free(bc);
}

int tb_block_insn(tb_block_cache *bc, uint32_t addr, tb_isa isa, tb_insn *out)
{
    size_t avail = 0;
    const uint8_t *p = tb_memimage_ptr(bc->mem, addr, &avail);

    if (!p)
        return TB_ERR_NOT_IN_IMAGE;
    if (isa == TB_ISA_THUMBEE || isa == TB_ISA_JAZELLE)
        return TB_ERR_UNSUPPORTED;
    {
        int r = tb_classifier_decode(bc->cls, p, avail, addr, isa, out);

        /* Its class as this protocol's waypoint, as fill() gives it. */
        if (r > 0 && !(bc->wp_mask & (1u << out->wp_class)))
            out->wp_class = TB_WP_NONE;
        /* An instruction cut by the end of a region is missing memory. */
        return r == TB_ERR_TRUNCATED ? TB_ERR_NOT_IN_IMAGE : r;
    }
}

static void fill_insns(tb_block_cache *bc, tb_block *b, uint32_t addr, tb_isa isa)
{
    size_t avail = 0;
    const uint8_t *p = tb_memimage_ptr(bc->mem, addr, &avail);
    uint32_t a = addr;

    b->start = addr;
    b->end = addr;
    b->n = 0;
    b->wide = 0;
    b->isa = (uint8_t)isa;
    b->code = p;
    memset(&b->last, 0, sizeof b->last); /* defined even when n == 0 */
    /* No link yet: the block itself, right only for a loop to itself. */
    b->next[0] = b->next[1] = (uint16_t)(b - bc->pool);
    if (isa == TB_ISA_THUMBEE || isa == TB_ISA_JAZELLE) {
        b->status = TB_BLOCK_BAD_ISA;
        return;
    }
    b->status = TB_BLOCK_NACC;
    while (p && b->n < BC_MAX_INSNS) {
        size_t off = a - addr;
        int r;

        if (off >= avail)
            return; /* the region ends: next instruction is NACC */
        r = tb_classifier_decode(bc->cls, p + off, avail - off, a, isa, &b->last);
        if (r < 0)
            return; /* truncated at the end of the region */
        if (r == 4 && b->n < 64)
            b->wide |= 1ull << b->n;
        b->n++;
        a += (uint32_t)r;
        b->end = a;
        if (bc->wp_mask & (1u << b->last.wp_class)) {
            b->status = TB_BLOCK_WP;
            return;
        }
        if (a < addr) /* wrapped past 4 GiB */
            return;
    }
    if (p)
        b->status = TB_BLOCK_LIMIT;
}

/* The block at (addr, isa) into b.  A last instruction that is not a
 * waypoint of this cache's protocol (a LIMIT or NACC end) gets class
 * NONE, as every instruction inside a block has: an ISB is ordinary code
 * to ETMv3, so a range ending at it must not report ISB only when it
 * happens to end a block (decoder.h: last_wp). */
static void fill(tb_block_cache *bc, tb_block *b, uint32_t addr, tb_isa isa)
{
    fill_insns(bc, b, addr, isa);
    if (b->status != TB_BLOCK_WP)
        b->last.wp_class = TB_WP_NONE;
}

/*
 * Slots h and h ^ 1 form a set of two: a block lives in its own slot or
 * in the partner, and the one used last sits in its own slot, where the
 * inline lookup finds it.  With one block per slot, the 949 blocks of
 * TC2's PTM trace had dozens of hot pairs sharing a slot, each refilling
 * the other (a classification per instruction) on every pass.
 */
const tb_block *tb_block_miss(tb_block_cache *bc, uint32_t h, uint32_t addr,
                              tb_isa isa)
{
    const uint32_t h2 = h ^ 1u;
    const uint16_t own = bc->slot[h], other = bc->slot[h2];
    tb_block *b;

    if (other) {
        b = &bc->pool[other - 1];
        if (b->start == addr && b->isa == isa) {
            bc->slot[h] = other;
            bc->slot[h2] = own;
            return b;
        }
    }
    if (!own) {
        bc->slot[h] = (uint16_t)++bc->used;
    } else if (!other) {
        bc->slot[h2] = own;
        bc->slot[h] = (uint16_t)++bc->used;
    } else {
        /* Both taken: the partner's block, used less recently, makes way;
         * the block in h moves over. */
        bc->slot[h] = other;
        bc->slot[h2] = own;
    }
    b = &bc->pool[bc->slot[h] - 1];
    fill(bc, b, addr, isa);
    return b;
}

uint32_t tb_block_advance(const tb_block *b, uint32_t addr, uint32_t k)
{
    const uint8_t *p;

    if (b->isa == TB_ISA_ARM)
        return addr + 4 * k;
    p = b->code + (addr - b->start);
    while (k--) {
        unsigned s = tb_thumb_size((uint16_t)(p[0] | p[1] << 8));

        p += s;
        addr += s;
    }
    return addr;
}
