/* The block cache (decoder/block_cache.h, private to the decoders) keeps
 * two blocks whose addresses share a hash slot, so a loop through both
 * does not classify their code again on every turn: a TC2 PTM pass
 * refilled 42 such blocks each time when the table was direct mapped.
 * The blocks' contents are checked against the image they came from. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>

#include "../decoder/block_cache.h"

#define BASE 0x10000u
#define SIZE 0x100000u

/* An image of ARM code: a MOV then a BX LR at every 8 bytes, so each
 * block is two instructions ending with an indirect branch. */
static tb_memimage *code_image(void)
{
    tb_memimage *m = tb_memimage_new();
    uint8_t *buf = malloc(SIZE);

    cr_assert(m && buf);
    for (uint32_t off = 0; off < SIZE; off += 8) {
        static const uint8_t mov_bx[8] = {0x00, 0x00, 0xA0, 0xE1,  /* mov r0, r0 */
                                          0x1E, 0xFF, 0x2F, 0xE1}; /* bx lr */
        memcpy(buf + off, mov_bx, 8);
    }
    cr_assert_eq(tb_memimage_add(m, BASE, buf, SIZE), 0);
    free(buf);
    return m;
}

/* n block starts (8-byte aligned, inside the image) with one hash slot:
 * they compete for one set of the cache, that slot and its partner. */
static void same_slot(uint32_t *out, unsigned n)
{
    const uint32_t h = tb_block_hash(BASE, TB_ISA_ARM);
    unsigned k = 0;

    for (uint32_t a = BASE; a < BASE + SIZE && k < n; a += 8)
        if (tb_block_hash(a, TB_ISA_ARM) == h)
            out[k++] = a;
    cr_assert_eq(k, n, "only %u addresses of one set in the image", k);
}

static void check_block(const tb_block *b, uint32_t addr)
{
    cr_assert_eq(b->start, addr);
    cr_assert_eq(b->isa, TB_ISA_ARM);
    cr_assert_eq(b->n, 2);
    cr_assert_eq(b->status, TB_BLOCK_WP);
    cr_assert_eq(b->end, addr + 8);
    cr_assert_eq(b->last.addr, addr + 4);
    cr_assert_eq(b->last.wp_class, TB_WP_INDIRECT);
}

Test(block_cache, two_blocks_of_one_set_stay)
{
    tb_memimage *m = code_image();
    tb_block_cache *bc = tb_block_cache_new(m, TB_WPMASK_BRANCHES);
    uint32_t a[3];
    const tb_block *pa, *pb;

    cr_assert(bc);
    same_slot(a, 3);
    pa = tb_block_get(bc, a[0], TB_ISA_ARM);
    check_block(pa, a[0]);
    pb = tb_block_get(bc, a[1], TB_ISA_ARM);
    check_block(pb, a[1]);
    cr_assert_neq(pa, pb, "the second block of a set replaced the first");
    /* Alternating: each found where it was made, nothing new made. */
    for (int turn = 0; turn < 4; turn++) {
        cr_assert_eq(tb_block_get(bc, a[0], TB_ISA_ARM), pa);
        cr_assert_eq(tb_block_get(bc, a[1], TB_ISA_ARM), pb);
    }
    check_block(pa, a[0]);
    check_block(pb, a[1]);
    cr_assert_eq(bc->used, 2);

    /* A third: the block used less recently (a[0], in the partner slot
     * since a[1] took the own slot back) makes way, a[1] stays. */
    cr_assert_eq(tb_block_get(bc, a[2], TB_ISA_ARM), pa);
    check_block(pa, a[2]);
    cr_assert_eq(tb_block_get(bc, a[1], TB_ISA_ARM), pb);
    check_block(pb, a[1]);
    cr_assert_eq(bc->used, 2);
    /* And a[0] comes back in place of a[2], now the older. */
    cr_assert_eq(tb_block_get(bc, a[0], TB_ISA_ARM), pa);
    check_block(pa, a[0]);
    check_block(tb_block_get(bc, a[1], TB_ISA_ARM), a[1]);
    cr_assert_eq(bc->used, 2);
    tb_block_cache_free(bc);
    tb_memimage_free(m);
}

/* More blocks than slots, twice over, as a decoder walks a long trace:
 * every lookup, a hit, a partner hit or a replacement, gives the block
 * at its address, and the pool never outgrows the table. */
Test(block_cache, more_blocks_than_slots)
{
    tb_memimage *m = code_image();
    tb_block_cache *bc = tb_block_cache_new(m, TB_WPMASK_BRANCHES);

    cr_assert(bc);
    cr_assert_gt(SIZE / 8, 4 * TB_BC_SIZE);
    for (int turn = 0; turn < 2; turn++)
        for (uint32_t a = BASE; a < BASE + SIZE; a += 8)
            check_block(tb_block_get(bc, a, TB_ISA_ARM), a);
    cr_assert_leq(bc->used, TB_BC_SIZE);
    /* Unmapped code: an empty NACC block, also cached. */
    cr_assert_eq(tb_block_get(bc, BASE + SIZE, TB_ISA_ARM)->n, 0);
    cr_assert_eq(tb_block_get(bc, BASE + SIZE, TB_ISA_ARM)->status, TB_BLOCK_NACC);
    tb_block_cache_free(bc);
    tb_memimage_free(m);
}

/* tb_block_follow: a block remembers where each edge led, and the link
 * is only a guess.  An edge that goes somewhere new (an indirect branch
 * with another target) gives the block at the new address; following
 * the same edge again makes nothing new. */
Test(block_cache, follow_link_is_checked)
{
    tb_memimage *m = code_image();
    tb_block_cache *bc = tb_block_cache_new(m, TB_WPMASK_BRANCHES);
    const tb_block *from, *x, *y;
    uint32_t used;

    cr_assert(bc);
    from = tb_block_get(bc, BASE, TB_ISA_ARM);
    x = tb_block_follow(bc, from, TB_EDGE_TAKEN, BASE + 0x800, TB_ISA_ARM);
    check_block(x, BASE + 0x800);
    cr_assert_eq(from->next[TB_EDGE_TAKEN], (uint16_t)(x - bc->pool));
    used = bc->used;
    cr_assert_eq(tb_block_follow(bc, from, TB_EDGE_TAKEN, BASE + 0x800, TB_ISA_ARM), x);
    cr_assert_eq(bc->used, used);
    /* The other edge has its own link: none yet, so a lookup. */
    check_block(tb_block_follow(bc, from, TB_EDGE_ON, BASE + 8, TB_ISA_ARM), BASE + 8);
    cr_assert_eq(from->next[TB_EDGE_TAKEN], (uint16_t)(x - bc->pool));
    /* A new target on the same edge, then another ISA at the old one. */
    y = tb_block_follow(bc, from, TB_EDGE_TAKEN, BASE + 0x1000, TB_ISA_ARM);
    check_block(y, BASE + 0x1000);
    cr_assert_eq(tb_block_follow(bc, from, TB_EDGE_TAKEN, BASE + 0x1000, TB_ISA_ARM), y);
    x = tb_block_follow(bc, from, TB_EDGE_TAKEN, BASE + 0x1000, TB_ISA_THUMB);
    cr_assert_eq(x->start, BASE + 0x1000);
    cr_assert_eq(x->isa, TB_ISA_THUMB);
    /* From nowhere: a plain lookup. */
    check_block(tb_block_follow(bc, NULL, TB_EDGE_TAKEN, BASE + 0x800, TB_ISA_ARM),
                BASE + 0x800);
    /* A block that loops to itself finds itself before any link. */
    x = tb_block_get(bc, BASE + 0x2000, TB_ISA_ARM);
    cr_assert_eq(tb_block_follow(bc, x, TB_EDGE_TAKEN, BASE + 0x2000, TB_ISA_ARM), x);
    tb_block_cache_free(bc);
    tb_memimage_free(m);
}

/* A link into a pool entry that a replacement has since refilled with
 * another block must miss, and so must the links of a `from` whose own
 * entry was refilled. */
Test(block_cache, follow_after_refill)
{
    tb_memimage *m = code_image();
    tb_block_cache *bc = tb_block_cache_new(m, TB_WPMASK_BRANCHES);
    uint32_t a[3];
    const tb_block *from, *pa, *b;

    cr_assert(bc);
    same_slot(a, 3);
    from = tb_block_get(bc, BASE + 0x10, TB_ISA_ARM);
    pa = tb_block_follow(bc, from, TB_EDGE_TAKEN, a[0], TB_ISA_ARM);
    check_block(pa, a[0]);
    /* a[1] takes the partner slot, a[2] then replaces a[0] in place. */
    check_block(tb_block_get(bc, a[1], TB_ISA_ARM), a[1]);
    cr_assert_eq(tb_block_get(bc, a[2], TB_ISA_ARM), pa);
    check_block(pa, a[2]);
    b = tb_block_follow(bc, from, TB_EDGE_TAKEN, a[0], TB_ISA_ARM);
    check_block(b, a[0]);
    /* pa, refilled, kept no link of the block it held before. */
    check_block(tb_block_follow(bc, pa, TB_EDGE_TAKEN, a[0], TB_ISA_ARM), a[0]);
    tb_block_cache_free(bc);
    tb_memimage_free(m);
}
