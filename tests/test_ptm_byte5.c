/*
 * PTM branch address packet whose fifth byte has bit 7 set (issue 28,
 * found by mutating committed vectors: `83 ac ac ac 8c ac`).  Decision
 * (docs/opencsd-bugs.md, "Where the two may rightly differ"): not a PFT
 * packet, reported as a bad packet.
 *
 * IHI0035B 4.5.4: a branch address packet is 1-5 address bytes followed
 * by 0-2 exception information bytes; bytes 1-4 carry the C bit in bit 7,
 * the fifth byte always ends the address and, in each of its three
 * layouts (ARM, Thumb, Jazelle: figures 4.5-4.7, protocol-notes 3.7), has
 * bit 7 = 0, bit 6 = "exception bytes follow" and the state in bits 5:3.
 * So the packet's length is not in doubt (five bytes: 0x8C has bit 6
 * clear, the 0xAC after it is the next packet, an atom header), but a
 * fifth byte with bit 7 set is none of the formats a PTM emits.  OpenCSD
 * (TrcPktProcPtm::pktBranchAddr) ignores bit 7 and reads ARM from bits
 * 5:3; we report the packet as bad, and with it the waypoint it would
 * have implied: a corrupt byte in the one packet that says where the
 * flow went is no ground to decode on.  The decode waits for the next
 * I-sync.  Control: the same packet with bit 7 clear decodes the range.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tb_test.h"
#include "tracebench/decoder.h"
#include "tracebench/parser.h"

typedef struct got {
    tb_packet p[16];
    size_t np;
    tb_element e[16];
    size_t ne;
    tb_decoder *d;
} got;

static int on_el(void *ctx, const tb_element *el)
{
    got *g = ctx;

    cr_assert_lt(g->ne, 16);
    g->e[g->ne++] = *el;
    return 0;
}

static int on_pkt(void *ctx, const tb_packet *p)
{
    got *g = ctx;

    cr_assert_lt(g->np, 16);
    g->p[g->np++] = *p;
    cr_assert_geq(tb_decoder_packet(g->d, p, on_el, g), 0);
    return 0;
}

/* 0x8000..0x801C: eight MOV r0,r0; 0x8020: BX lr (the waypoint). */
static void run(uint8_t byte5, got *g)
{
    static const uint8_t head[] = {0x00, 0x00, 0x00, 0x00, 0x00, 0x80,   /* A-sync */
                                   0x08, 0x00, 0x80, 0x00, 0x00, 0x21};  /* I-sync 0x8000 */
    uint8_t img[0x24], trace[sizeof head + 6];
    tb_memimage *m = tb_memimage_new();
    tb_config cfg;
    tb_parser *p;
    size_t i;

    for (i = 0; i < 0x20; i += 4)
        memcpy(img + i, (const uint8_t[]){0x00, 0x00, 0xA0, 0xE1}, 4);
    memcpy(img + 0x20, (const uint8_t[]){0x1E, 0xFF, 0x2F, 0xE1}, 4);
    cr_assert_eq(tb_memimage_add(m, 0x8000, img, sizeof img), 0);
    memcpy(trace, head, sizeof head);
    memcpy(trace + sizeof head, (const uint8_t[]){0x83, 0xAC, 0xAC, 0xAC, byte5, 0xAC}, 6);
    /* PFT 1.1, plain trace. */
    cr_assert_eq(tb_config_from_regs(&cfg, 0, 0x411CF310, 0, 0x10), 0);
    memset(g, 0, sizeof *g);
    g->d = tb_decoder_new(&cfg, m);
    p = tb_parser_new(&cfg);
    cr_assert(g->d && p);
    cr_assert_geq(tb_parser_push(p, trace, sizeof trace, 0, on_pkt, g), 0);
    cr_assert_geq(tb_parser_finish(p, on_pkt, g), 0);
    cr_assert_geq(tb_decoder_finish(g->d, on_el, g), 0);
    tb_parser_free(p);
    tb_decoder_free(g->d);
    tb_memimage_free(m);
}

static const tb_packet *packet_at(const got *g, uint64_t index)
{
    for (size_t i = 0; i < g->np; i++)
        if (g->p[i].index == index)
            return &g->p[i];
    return NULL;
}

Test(ptm_byte5, bit7_set_is_a_bad_packet_of_five_bytes)
{
    const tb_packet *b, *next;
    got g;
    size_t i;

    run(0x8C, &g);
    b = packet_at(&g, 12);
    cr_assert_not_null(b);
    cr_assert_eq(b->kind, TB_PKT_BAD_SEQUENCE, "kind %s", tb_pkt_kind_name(b->kind));
    cr_assert_eq(b->size, 5, "the fifth byte ends the address: %u bytes", b->size);
    /* The 0xAC after it is no exception byte: the next packet. */
    next = packet_at(&g, 17);
    cr_assert_not_null(next, "nothing parsed at 17");
    for (i = 0; i < g.ne; i++) {
        cr_assert_neq(g.e[i].kind, TB_ELEM_INSN_RANGE, "a range decoded on a bad packet");
        if (g.e[i].kind == TB_ELEM_NO_SYNC && g.e[i].index == 12)
            break;
    }
    cr_assert_lt(i, g.ne, "no NO_SYNC for the bad packet");
    cr_assert_eq(g.e[i].reason, TB_GAP_BAD_PACKET);
}

Test(ptm_byte5, control_bit7_clear_decodes_the_range)
{
    got g;
    size_t i;

    run(0x0C, &g);
    cr_assert_eq(packet_at(&g, 12)->kind, TB_PKT_BRANCH);
    cr_assert_eq(packet_at(&g, 12)->size, 5);
    for (i = 0; i < g.ne && g.e[i].kind != TB_ELEM_INSN_RANGE; i++)
        ;
    cr_assert_lt(i, g.ne, "no range");
    cr_assert_eq(g.e[i].start, 0x8000);
    cr_assert_eq(g.e[i].count, 9, "the nine instructions up to the BX lr");
    cr_assert_eq(g.e[i].last_addr, 0x8020);
    cr_assert_eq(g.e[i].last_atom, 'E');
}
