/*
 * ETMv3 data trace in the decoder (issue 22): hand-made packet bytes,
 * through the parser and the decoder (tb_decoder_push, the fused path
 * included), over a small code image; every DATA field against
 * expectations written by hand.
 *
 * The byte sequences follow the fact sheet's worked examples
 * (etmv3-data.md 17, E1-E3, as tests/test_etmv3_packets.c's data tests):
 * normal data 7.4.2, LSM / Value not traced 7.4.4, out of order
 * (placeholder + OOO data, Table 7.1), store failed 7.4.7, suppression
 * 7.4.6.  Direction and size come from the opcodes below (ARM ARM
 * encodings, written by hand), never from the packets.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebench/decoder.h"
#include "tracebench/parser.h"
#include "tb_test.h"

#define MAXEL 64

typedef struct elems {
    tb_element v[MAXEL];
    int n;
} elems;

static int collect(void *ctx, const tb_element *el)
{
    elems *e = ctx;

    cr_assert_lt(e->n, MAXEL);
    e->v[e->n++] = *el;
    return 0;
}

/* ARM code at 0x8000. */
#define A_STR 0x8000     /* STR r2,[r3]          E5832000: store, 4 bytes */
#define A_LDM 0x8004     /* LDMIA r0,{r4-r7}     E89000F0: 4 loads of 4 */
#define A_LDR 0x8008     /* LDR r0,[r1]          E5910000: load, 4 */
#define A_ADD 0x800C     /* ADD r0,r0,#1         E2800001: no data */
#define A_STR2 0x8010    /* STR r2,[r4]          E5842000: store, 4 */
#define A_STREX 0x8014   /* STREX r1,r2,[r3]     E1831F92: store-exclusive, 4 */
#define A_LDRB 0x8018    /* LDRB r5,[r6]         E5D65000: load, 1 */
#define A_NOP 0x801C     /* NOP                  E320F000 */
#define A_LDRH 0x8020    /* LDRH r5,[r6]         E1D650B0: load, 2 */
#define A_STRD 0x8024    /* STRD r2,r3,[r4]      E1C420F0: 2 stores of 4 */
#define A_SWP 0x8028     /* SWP r0,r1,[r2]       E1020091: load, then store */
#define A_VSTR 0x802C    /* VSTR d0,[r0]         ED800B00: 2 stores of 4 */
#define A_LDMPC 0x8030   /* LDMIA sp!,{r4-r6,pc} E8BD8070: 4 loads of 4, PC last */
/* Thumb code at 0x9000. */
#define T_PUSH 0x9000    /* PUSH {r4,lr}         B510: 2 stores of 4 */
#define T_LDRW 0x9002    /* LDR.W r0,[r1]        F8D1 0000: load, 4 */
#define T_STRB 0x9006    /* STRB r2,[r3]         701A: store, 1 */
#define T_LDRSH 0x9008   /* LDRSH r0,[r1,r2]     5E88: load, 2 */
#define T_POP 0x900A     /* POP {r4,pc}          BD10: 2 loads of 4 */

static tb_memimage *image(void)
{
    static const uint32_t arm[] = {
        0xE5832000, 0xE89000F0, 0xE5910000, 0xE2800001, 0xE5842000, 0xE1831F92,
        0xE5D65000, 0xE320F000, 0xE1D650B0, 0xE1C420F0, 0xE1020091, 0xED800B00,
        0xE8BD8070,
    };
    uint8_t a[sizeof arm], t[12];
    tb_memimage *m = tb_memimage_new();

    cr_assert_not_null(m);
    for (size_t i = 0; i < sizeof arm / sizeof arm[0]; i++)
        tb_test_le32(a + 4 * i, arm[i]);
    tb_test_le16(t + 0, 0xB510);
    tb_test_le16(t + 2, 0xF8D1);
    tb_test_le16(t + 4, 0x0000);
    tb_test_le16(t + 6, 0x701A);
    tb_test_le16(t + 8, 0x5E88);
    tb_test_le16(t + 10, 0xBD10);
    cr_assert_eq(tb_memimage_add(m, 0x8000, a, sizeof a), 0);
    cr_assert_eq(tb_memimage_add(m, 0x9000, t, sizeof t), 0);
    return m;
}

/* ETMv3.4 with ETMCR[3:2] = dt (bit 0 values, bit 1 addresses). */
static tb_config config(unsigned dt)
{
    tb_config cfg;

    cr_assert_eq(tb_config_from_regs(&cfg, dt << 2, 0x41000240u, 0, 0x10), 0);
    cr_assert_eq(cfg.data_trace, dt);
    return cfg;
}

/* config(dt) with ETMIDR[16] set: "load PC first" (etmv3-data.md 1). */
static tb_config config_pc_first(unsigned dt)
{
    tb_config cfg;

    cr_assert_eq(tb_config_from_regs(&cfg, dt << 2, 0x41010240u, 0, 0x10), 0);
    cr_assert(cfg.pc_first);
    return cfg;
}

/* A-sync, then a periodic I-sync at addr (bit 0: Thumb), then b. */
static elems decode(const tb_config *cfg, uint32_t addr, const uint8_t *b, size_t n)
{
    static const uint8_t async[] = {0x00, 0x00, 0x00, 0x00, 0x00, 0x80};
    uint8_t s[256];
    size_t k = 0;
    elems out = {0};
    tb_memimage *m = image();
    tb_decoder *d = tb_decoder_new(cfg, m);
    tb_parser *p = tb_parser_new(cfg);

    cr_assert(d && p);
    memcpy(s, async, sizeof async);
    k = sizeof async;
    s[k++] = 0x08;
    s[k++] = 0x00; /* info: periodic, no LSiP */
    tb_test_le32(s + k, addr);
    k += 4;
    cr_assert_leq(k + n, sizeof s);
    memcpy(s + k, b, n);
    k += n;
    cr_assert_geq(tb_decoder_push(d, p, s, k, 0, collect, &out), 0);
    cr_assert_geq(tb_decoder_push_finish(d, p, collect, &out), 0);
    tb_parser_free(p);
    tb_decoder_free(d);
    tb_memimage_free(m);
    return out;
}

/* The i-th DATA element (fails when there is none). */
static const tb_element *data_el(const elems *e, int i)
{
    for (int k = 0; k < e->n; k++)
        if (e->v[k].kind == TB_ELEM_DATA && i-- == 0)
            return &e->v[k];
    cr_assert_fail("no DATA element %d", i);
    return NULL;
}

static int count_kind(const elems *e, tb_elem_kind kind)
{
    int n = 0;

    for (int k = 0; k < e->n; k++)
        n += e->v[k].kind == kind;
    return n;
}

/* Every field of a DATA element. */
static void expect(const tb_element *el, uint32_t insn, tb_isa isa, unsigned flags,
                   unsigned size, uint32_t addr, uint32_t value, unsigned tag)
{
    cr_assert_eq(el->kind, TB_ELEM_DATA);
    cr_assert_eq(el->last_addr, insn, "insn 0x%08x want 0x%08x", el->last_addr, insn);
    cr_assert_eq(el->isa, isa);
    cr_assert_eq(el->data_flags, flags, "flags 0x%x want 0x%x", el->data_flags, flags);
    cr_assert_eq(el->data_size, size, "size %u want %u", el->data_size, size);
    cr_assert_eq(el->data_addr, addr, "addr 0x%08x want 0x%08x", el->data_addr, addr);
    cr_assert_eq(el->data_value, value, "value 0x%x want 0x%x", el->data_value, value);
    cr_assert_eq(el->reason, tag, "tag %u want %u", el->reason, tag);
    cr_assert_eq(el->err, 0);
}

/* The one error element of a trace: NO_SYNC bad-packet with err. */
static void expect_error(const elems *e, int err)
{
    int n = 0;

    for (int k = 0; k < e->n; k++)
        if (e->v[k].kind == TB_ELEM_NO_SYNC && e->v[k].reason == TB_GAP_BAD_PACKET) {
            cr_assert_eq(e->v[k].err, err, "error %d (%s), want %d (%s)", e->v[k].err,
                         tb_err_str(e->v[k].err), err, tb_err_str(err));
            n++;
        }
    cr_assert_eq(n, 1, "%d error elements", n);
}

/* The element before DATA element el is the range of its instruction. */
static void expect_after_insn(const elems *e, const tb_element *el)
{
    int k = (int)(el - e->v);

    while (k > 0 && e->v[k - 1].kind == TB_ELEM_DATA)
        k--;
    cr_assert_gt(k, 0);
    cr_assert_eq(e->v[k - 1].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(e->v[k - 1].last_addr, el->last_addr);
}

#define ST TB_DATA_STORE
#define NV TB_DATA_NO_VALUE
#define NA TB_DATA_NO_ADDR

/* E1: STR r2,[r3] of 0xAB to 0x20000010, the first data address of the
 * trace in full (D-sync, 7.10.2). */
static const uint8_t e1[] = {
    0x84,                                     /* P-header: E (STR) */
    0x26, 0x90, 0x80, 0x80, 0x80, 0x02, 0xAB, /* data A=1 SS=01, 5-byte addr, AB */
};

Test(decoder_data, single_store)
{
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_STR, e1, sizeof e1);

    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 1);
    expect(data_el(&e, 0), A_STR, TB_ISA_ARM, ST, 4, 0x20000010, 0xAB, 0);
    expect_after_insn(&e, data_el(&e, 0));
    cr_assert_eq(data_el(&e, 0)->index, 13); /* 6 A-sync + 6 I-sync + P-header */
}

/* E2 after E1: LDMIA r0,{r4-r7}: word 2 traced with its address (2
 * bytes against 0x20000010: 0x20001014), word 3 Value not traced (the
 * next word), word 4 value 0 with no address (the next word, SS=00). */
Test(decoder_data, lsm_value_not_traced)
{
    static const uint8_t b[] = {
        0x84, 0x26, 0x90, 0x80, 0x80, 0x80, 0x02, 0xAB, /* E1 */
        0x84,                                           /* E (LDM) */
        0x2E, 0x94, 0x20, 0x78, 0x56, 0x34, 0x12,       /* A=1 SS=11 */
        0x6A,                                           /* VNT, no address */
        0x02,                                           /* A=0 SS=00: value 0 */
    };
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_STR, b, sizeof b);

    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 4);
    expect(data_el(&e, 1), A_LDM, TB_ISA_ARM, 0, 4, 0x20001014, 0x12345678, 0);
    expect(data_el(&e, 2), A_LDM, TB_ISA_ARM, NV, 4, 0x20001018, 0, 0);
    expect(data_el(&e, 3), A_LDM, TB_ISA_ARM, 0, 4, 0x2000101C, 0, 0);
    expect_after_insn(&e, data_el(&e, 3));
    cr_assert_eq(count_kind(&e, TB_ELEM_NO_SYNC), 1); /* the initial one only */
}

/* E3 after E1: LDR r0,[r1] misses (placeholder, tag 1, address
 * 0x20003000), ADD, STR r2,[r4] of 0x55 to 0x20003004 completes, then
 * the load's value 0x1234 out of order. */
Test(decoder_data, out_of_order)
{
    static const uint8_t b[] = {
        0x84, 0x26, 0x90, 0x80, 0x80, 0x80, 0x02, 0xAB, /* E1 at A_STR */
        0x84, 0x02,                                     /* LDM: one word, no addr */
        0x84, 0x74, 0x80, 0x60,                         /* LDR; placeholder tag 1 */
        0x88, 0x26, 0x04, 0x55,                         /* ADD, STR; data */
        0x28, 0x34, 0x12,                               /* OOO data tag 1 */
    };
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_STR, b, sizeof b);
    const tb_element *ph, *st, *oo;

    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 5);
    /* LDM's first packet without the A bit: the address is not known. */
    expect(data_el(&e, 1), A_LDM, TB_ISA_ARM, NA, 4, 0, 0, 0);
    ph = data_el(&e, 2);
    st = data_el(&e, 3);
    oo = data_el(&e, 4);
    expect(ph, A_LDR, TB_ISA_ARM, NV, 4, 0x20003000, 0, 1);
    expect(st, A_STR2, TB_ISA_ARM, ST, 4, 0x20003004, 0x55, 0);
    expect(oo, A_LDR, TB_ISA_ARM, TB_DATA_OOO, 4, 0x20003000, 0x1234, 1);
    cr_assert_eq(oo->index, ph->index + 7); /* the OOO packet's own */
    expect_after_insn(&e, ph);
    expect_after_insn(&e, st);
}

/* A placeholder whose value never comes: at the end, OOO with no value. */
Test(decoder_data, placeholder_value_never_came)
{
    static const uint8_t b[] = {
        0x84, 0x26, 0x90, 0x80, 0x80, 0x80, 0x02, 0xAB, 0x84, 0x02,
        0x84, 0x7C, 0x80, 0x60, /* LDR; placeholder tag 3 */
    };
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_STR, b, sizeof b);

    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 4);
    expect(data_el(&e, 2), A_LDR, TB_ISA_ARM, NV, 4, 0x20003000, 0, 3);
    expect(data_el(&e, 3), A_LDR, TB_ISA_ARM, TB_DATA_OOO | NV, 4, 0x20003000, 0, 3);
    cr_assert_eq(e.v[e.n - 1].kind, TB_ELEM_END);
}

/* A placeholder whose value never comes, with a store traced after it:
 * the element that says so at the end comes after the store's, and its
 * index does not go back (types.h: the packet that produced it; here
 * the last, as OOO data takes its own packet's).  fuzz/regressions/
 * etmv3_decoder/ooo-lost-at-finish-index-goes-back: it kept the
 * placeholder's index. */
Test(decoder_data, placeholder_lost_at_end_keeps_index_order)
{
    static const uint8_t b[] = {
        0x84, 0x26, 0x90, 0x80, 0x80, 0x80, 0x02, 0xAB, 0x84, 0x02,
        0x84, 0x7C, 0x80, 0x60, /* LDR; placeholder tag 3 */
        0x88, 0x26, 0x04, 0x55, /* ADD, STR; data */
    };
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_STR, b, sizeof b);
    const tb_element *st = data_el(&e, 3), *lost = data_el(&e, 4);

    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 5);
    expect(st, A_STR2, TB_ISA_ARM, ST, 4, 0x20003004, 0x55, 0);
    expect(lost, A_LDR, TB_ISA_ARM, TB_DATA_OOO | NV, 4, 0x20003000, 0, 3);
    cr_assert_eq(lost->index, st->index);
    for (int i = 1; i < e.n; i++)
        if (e.v[i].kind != TB_ELEM_END)
            cr_assert_geq(e.v[i].index, e.v[i - 1].index, "element %d (%s)", i,
                          tb_elem_kind_name(e.v[i].kind));
}

/* STREX that failed: its data (value 0, SS=00) then Store failed; and
 * one that stored: the element goes out when the next packet is no
 * Store failed (a P-header, which the fused path hands over). */
Test(decoder_data, store_failed)
{
    static const uint8_t b[] = {
        0x84, 0x22, 0x88, 0x80, 0x80, 0x80, 0x02, /* STREX; A=1 SS=00, 0x20000008 */
        0x50,                                     /* store failed */
    };
    static const uint8_t ok[] = {
        0x84, 0x26, 0x88, 0x80, 0x80, 0x80, 0x02, 0x77, /* STREX stores 0x77 */
        0x84,                                           /* LDRB: E */
    };
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_STREX, b, sizeof b);

    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 1);
    expect(data_el(&e, 0), A_STREX, TB_ISA_ARM, ST | TB_DATA_STORE_FAILED, 4, 0x20000008,
           0, 0);
    expect_after_insn(&e, data_el(&e, 0));

    e = decode(&cfg, A_STREX, ok, sizeof ok);
    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 1);
    expect(data_el(&e, 0), A_STREX, TB_ISA_ARM, ST, 4, 0x20000008, 0x77, 0);
    /* The STREX's data, then the range of the LDRB. */
    cr_assert_eq(e.v[e.n - 2].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(e.v[e.n - 2].start, A_LDRB);
    cr_assert_eq(e.v[e.n - 3].kind, TB_ELEM_DATA);
}

/* Sizes from the opcodes: LDRB 1, LDRH 2, STRD two words, SWP a load
 * then a store to the same address (7.4.4: A bit again), VSTR.64 two
 * words. */
Test(decoder_data, sizes_and_directions)
{
    static const uint8_t b[] = {
        0x84, 0x26, 0x80, 0x80, 0x80, 0x80, 0x03, 0x7F, /* LDRB 0x7F from 0x30000000 */
        0x84, 0x84,                                     /* NOP, LDRH */
        0x2A, 0x02, 0xCD, 0xAB,                         /* 0xABCD from 0x30000002 */
        0x84, 0x2E, 0x10, 0x01, 0x02, 0x03, 0x04,       /* STRD word 1 at 0x30000010 */
        0x0E, 0x05, 0x06, 0x07, 0x08,                   /* word 2 at 0x30000014 */
        0x84, 0x26, 0x20, 0x11,                         /* SWP: load at 0x30000020 */
        0x26, 0x20, 0x22,                               /* store, same address */
        0x84, 0x26, 0x30, 0x01, 0x06, 0x02,             /* VSTR.64: 2 words */
    };
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_LDRB, b, sizeof b);

    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 8);
    expect(data_el(&e, 0), A_LDRB, TB_ISA_ARM, 0, 1, 0x30000000, 0x7F, 0);
    expect(data_el(&e, 1), A_LDRH, TB_ISA_ARM, 0, 2, 0x30000002, 0xABCD, 0);
    expect(data_el(&e, 2), A_STRD, TB_ISA_ARM, ST, 4, 0x30000010, 0x04030201, 0);
    expect(data_el(&e, 3), A_STRD, TB_ISA_ARM, ST, 4, 0x30000014, 0x08070605, 0);
    expect(data_el(&e, 4), A_SWP, TB_ISA_ARM, 0, 4, 0x30000020, 0x11, 0);
    expect(data_el(&e, 5), A_SWP, TB_ISA_ARM, ST, 4, 0x30000020, 0x22, 0);
    expect(data_el(&e, 6), A_VSTR, TB_ISA_ARM, ST, 4, 0x30000030, 0x01, 0);
    expect(data_el(&e, 7), A_VSTR, TB_ISA_ARM, ST, 4, 0x30000034, 0x02, 0);
}

/* Thumb: PUSH {r4,lr} (two words, the second contiguous), LDR.W,
 * STRB, LDRSH (the value before sign extension, 4.9.2), POP {r4,pc}
 * (its data before its branch packet). */
Test(decoder_data, thumb)
{
    static const uint8_t b[] = {
        0x84, 0x26, 0xF8, 0x81, 0x80, 0x80, 0x02, 0x11, /* PUSH at 0x200000F8 */
        0x06, 0x22,                                     /* 0x200000FC */
        0x84, 0x2E, 0x80, 0x02, 0x04, 0x03, 0x02, 0x01, /* LDR.W 0x01020304 from 0x20000100 */
        0x84, 0x26, 0x08, 0x5A,                         /* STRB 0x5A to 0x20000108 */
        0x84, 0x2A, 0x0A, 0x00, 0x80,                   /* LDRSH 0x8000 from 0x2000010A */
        0x84, 0x26, 0xF8, 0x01, 0x44, 0x06, 0x01,       /* POP: r4 at 0x200000F8, pc */
        0x21,                                           /* branch to 0x20 (ARM, 1 byte) */
    };
    tb_config cfg = config(3);
    elems e = decode(&cfg, T_PUSH | 1, b, sizeof b);

    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 7);
    expect(data_el(&e, 0), T_PUSH, TB_ISA_THUMB, ST, 4, 0x200000F8, 0x11, 0);
    expect(data_el(&e, 1), T_PUSH, TB_ISA_THUMB, ST, 4, 0x200000FC, 0x22, 0);
    expect(data_el(&e, 2), T_LDRW, TB_ISA_THUMB, 0, 4, 0x20000100, 0x01020304, 0);
    expect(data_el(&e, 3), T_STRB, TB_ISA_THUMB, ST, 1, 0x20000108, 0x5A, 0);
    expect(data_el(&e, 4), T_LDRSH, TB_ISA_THUMB, 0, 2, 0x2000010A, 0x8000, 0);
    expect(data_el(&e, 5), T_POP, TB_ISA_THUMB, 0, 4, 0x200000F8, 0x44, 0);
    expect(data_el(&e, 6), T_POP, TB_ISA_THUMB, 0, 4, 0x200000FC, 0x01, 0);
}

/* Address trace off (ETMCR[3:2] = 01): no addresses, A bits ignored by
 * the parser; values only.  Value trace off (10): no values. */
Test(decoder_data, what_is_traced)
{
    static const uint8_t v[] = {0x84, 0x26, 0xAB};        /* no address bytes */
    static const uint8_t a[] = {0x84, 0x26, 0x90, 0x80, 0x80, 0x80, 0x02}; /* no value */
    tb_config cv = config(1), ca = config(2);
    elems e = decode(&cv, A_STR, v, sizeof v);

    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 1);
    expect(data_el(&e, 0), A_STR, TB_ISA_ARM, ST | NA, 4, 0, 0xAB, 0);
    e = decode(&ca, A_STR, a, sizeof a);
    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 1);
    expect(data_el(&e, 0), A_STR, TB_ISA_ARM, ST | NV, 4, 0x20000010, 0, 0);
}

/* A compressed address before any full one: the high bits are not
 * known, so no address (never the parser's zero bits). */
Test(decoder_data, no_dsync_no_address)
{
    static const uint8_t b[] = {0x84, 0x26, 0x10, 0xAB};
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_STR, b, sizeof b);

    expect(data_el(&e, 0), A_STR, TB_ISA_ARM, ST | NA, 4, 0, 0xAB, 0);
}

/* Suppression (7.4.6): a DATA element flagged suppressed naming the
 * instruction in progress; the next data belongs to a later one. */
Test(decoder_data, suppressed)
{
    static const uint8_t b[] = {
        0x84, 0x26, 0x90, 0x80, 0x80, 0x80, 0x02, 0xAB, /* E1 */
        0x84, 0x2E, 0x94, 0x20, 0x78, 0x56, 0x34, 0x12, /* LDM word 1 */
        0x62,                                           /* suppressed */
        0x84, 0x26, 0x80, 0x60, 0x99,                   /* LDR at 0x20003000 */
    };
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_STR, b, sizeof b);

    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 4);
    expect(data_el(&e, 2), A_LDM, TB_ISA_ARM, TB_DATA_SUPPRESSED | NA | NV, 0, 0, 0, 0);
    expect(data_el(&e, 3), A_LDR, TB_ISA_ARM, 0, 4, 0x20003000, 0x99, 0);
}

/* ---- errors: an element with its reason, then resync ---- */

/* Data right after the I-sync: no instruction to belong to. */
Test(decoder_data, error_no_instruction)
{
    static const uint8_t b[] = {0x26, 0x90, 0x80, 0x80, 0x80, 0x02, 0xAB, 0x84};
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_STR, b, sizeof b);

    expect_error(&e, TB_ERR_MISMATCH);
    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 0);
    cr_assert_eq(count_kind(&e, TB_ELEM_INSN_RANGE), 0); /* resync: waits for an I-sync */
}

/* LDMIA sp!,{r4-r6,pc} with sp = 0x1000 on a core that loads the PC
 * first (ETMIDR[16]): the PC word 0x100C (value 0x8000) goes first, then
 * r4-r6 at 0x1000-0x1008.  ViewData holds the PC word only.  Packets by
 * 7.4.4 (as the encoder test ldm_pc_first_vnt_address): 84 (E), 2A + the
 * D-sync 8C A0 80 80 00 + value 00 80, then r4 not contiguous with the
 * PC word: 7A + one address byte 00 (0x1000 against 0x100C), then r5, r6
 * 6A 6A, then the branch to 0x8000: 01 (A[7:2] = 0 against 0x8030). */
static const uint8_t ldm_pc_first[] = {
    0x84,                                           /* E (LDM) */
    0x2A, 0x8C, 0xA0, 0x80, 0x80, 0x00, 0x00, 0x80, /* PC word, 0x8000 */
    0x7A, 0x00,                                     /* r4: VNT, address 0x1000 */
    0x6A, 0x6A,                                     /* r5, r6 */
    0x01,                                           /* branch to 0x8000 */
};

/* Counted back from the final transfer (r6, just below the PC word),
 * every packet finds its transfer: the PC word, then r4 n - 1 = 3 words
 * below it, then r5 and r6 after it. */
Test(decoder_data, ldm_pc_first_assignment)
{
    tb_config cfg = config_pc_first(3);
    elems e = decode(&cfg, A_LDMPC, ldm_pc_first, sizeof ldm_pc_first);

    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 4);
    expect(data_el(&e, 0), A_LDMPC, TB_ISA_ARM, 0, 4, 0x100C, 0x8000, 0);
    expect(data_el(&e, 1), A_LDMPC, TB_ISA_ARM, NV, 4, 0x1000, 0, 0);
    expect(data_el(&e, 2), A_LDMPC, TB_ISA_ARM, NV, 4, 0x1004, 0, 0);
    expect(data_el(&e, 3), A_LDMPC, TB_ISA_ARM, NV, 4, 0x1008, 0, 0);
    expect_after_insn(&e, data_el(&e, 0));
    cr_assert_eq(count_kind(&e, TB_ELEM_NO_SYNC), 1); /* the initial one only */
}

/* The same bytes from a core that transfers in ascending order (ETMIDR[16]
 * clear): every transfer after the first is contiguous, so no transfer
 * of the LDM is at 0x1000 after the PC word: an error element, not a
 * guess. */
Test(decoder_data, error_ldm_pc_ascending_no_place)
{
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_LDMPC, ldm_pc_first, sizeof ldm_pc_first);

    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 1);
    expect(data_el(&e, 0), A_LDMPC, TB_ISA_ARM, 0, 4, 0x100C, 0x8000, 0);
    expect_error(&e, TB_ERR_MISMATCH);
}

/* Load PC first, bad input: a VNT with an address where no transfer
 * remains.  (a) r4 must be 3 words below the PC word (0x1000), not at
 * 0x1004 (7A 04).  (b) After PC, r4, r5, r6 all four transfers are done:
 * a fifth packet, 7A 10 (0x1010), has none left. */
Test(decoder_data, error_ldm_pc_first_vnt_address_no_transfer)
{
    static const uint8_t wrong_place[] = {
        0x84, 0x2A, 0x8C, 0xA0, 0x80, 0x80, 0x00, 0x00, 0x80, 0x7A, 0x04, 0x01,
    };
    static const uint8_t none_left[] = {
        0x84, 0x2A, 0x8C, 0xA0, 0x80, 0x80, 0x00, 0x00, 0x80, 0x7A, 0x00, 0x6A, 0x6A,
        0x7A, 0x10, 0x01,
    };
    /* After the wrap (r4 at 0x1000), a second non-contiguous address. */
    static const uint8_t second_step[] = {
        0x84, 0x2A, 0x8C, 0xA0, 0x80, 0x80, 0x00, 0x00, 0x80, 0x7A, 0x00, 0x7A, 0x08, 0x01,
    };
    tb_config cfg = config_pc_first(3);
    elems e = decode(&cfg, A_LDMPC, wrong_place, sizeof wrong_place);

    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 1);
    expect_error(&e, TB_ERR_MISMATCH);
    e = decode(&cfg, A_LDMPC, none_left, sizeof none_left);
    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 4);
    expect_error(&e, TB_ERR_MISMATCH);
    e = decode(&cfg, A_LDMPC, second_step, sizeof second_step);
    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 2);
    expect_error(&e, TB_ERR_MISMATCH);
}

/* Value trace only (no addresses): the packets still go to the LDM's
 * transfers one by one, the PC word's value first. */
Test(decoder_data, ldm_pc_first_values_only)
{
    static const uint8_t b[] = {0x84, 0x0A, 0x00, 0x80, 0x6A, 0x6A, 0x6A, 0x01};
    tb_config cfg = config_pc_first(1);
    elems e = decode(&cfg, A_LDMPC, b, sizeof b);

    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 4);
    expect(data_el(&e, 0), A_LDMPC, TB_ISA_ARM, NA, 4, 0, 0x8000, 0);
    expect(data_el(&e, 3), A_LDMPC, TB_ISA_ARM, NA | NV, 4, 0, 0, 0);
    cr_assert_eq(count_kind(&e, TB_ELEM_NO_SYNC), 1);
}

/* Data after an instruction that accesses no memory (NOP). */
Test(decoder_data, error_not_a_data_instruction)
{
    static const uint8_t b[] = {0x84, 0x26, 0x90, 0x80, 0x80, 0x80, 0x02, 0xAB};
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_NOP, b, sizeof b);

    expect_error(&e, TB_ERR_MISMATCH);
    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 0);
}

/* A second packet for a STR, which transfers one word. */
Test(decoder_data, error_too_many_transfers)
{
    static const uint8_t b[] = {0x84, 0x26, 0x90, 0x80, 0x80, 0x80, 0x02, 0xAB, 0x06, 0xCD};
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_STR, b, sizeof b);

    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 1);
    expect_error(&e, TB_ERR_MISMATCH);
}

/* Two value bytes for LDRB: an impossible size. */
Test(decoder_data, error_impossible_size)
{
    static const uint8_t b[] = {0x84, 0x2A, 0x90, 0x80, 0x80, 0x80, 0x02, 0x34, 0x12};
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_LDRB, b, sizeof b);

    expect_error(&e, TB_ERR_BAD_PACKET);
    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 0);
}

/* OOO data with no placeholder out; Store failed after a plain STR. */
Test(decoder_data, error_unpaired)
{
    static const uint8_t ooo[] = {0x84, 0x28, 0x34, 0x12};
    static const uint8_t sf[] = {0x84, 0x26, 0x90, 0x80, 0x80, 0x80, 0x02, 0xAB, 0x50};
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_LDR, ooo, sizeof ooo);

    expect_error(&e, TB_ERR_MISMATCH);
    e = decode(&cfg, A_STR, sf, sizeof sf);
    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 1);
    expect_error(&e, TB_ERR_MISMATCH);
}

/* A data packet in a trace whose ETMCR turns data trace off: the parser
 * calls it a bad trace mode, and the decoder refuses one handed to it
 * directly; the trace resyncs at the next I-sync. */
Test(decoder_data, error_data_trace_off)
{
    static const uint8_t b[] = {
        0x84, 0x26, 0x90, 0x80, 0x80, 0x80, 0x02, 0xAB,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x08, 0x00, 0x04, 0x80, 0x00, 0x00, 0x84,
    };
    tb_config off = config(0);
    elems e = decode(&off, A_STR, b, sizeof b);
    tb_memimage *m = image();
    tb_decoder *d = tb_decoder_new(&off, m);
    tb_packet is, dp;
    elems e2 = {0};

    expect_error(&e, TB_ERR_CONFIG);
    cr_assert_eq(count_kind(&e, TB_ELEM_DATA), 0);
    /* Resynced: the LDM after the second I-sync is decoded. */
    cr_assert_eq(e.v[e.n - 2].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(e.v[e.n - 2].start, A_LDM);

    memset(&is, 0, sizeof is);
    is.kind = TB_PKT_ISYNC;
    is.addr = A_STR;
    is.addr_known = true;
    is.isa = TB_ISA_ARM;
    memset(&dp, 0, sizeof dp);
    dp.kind = TB_PKT_DATA;
    dp.index = 7;
    cr_assert_geq(tb_decoder_packet(d, &is, collect, &e2), 0);
    cr_assert_geq(tb_decoder_packet(d, &dp, collect, &e2), 0);
    expect_error(&e2, TB_ERR_CONFIG);
    cr_assert_eq(e2.v[e2.n - 1].index, 7);
    tb_decoder_free(d);
    tb_memimage_free(m);
}

/* With data trace off nothing changes: the same P-headers give the same
 * ranges whether data trace is configured or not. */
Test(decoder_data, no_data_same_ranges)
{
    static const uint8_t b[] = {0x8C, 0x84, 0x21};
    tb_config off = config(0), on = config(3);
    elems a = decode(&off, A_STR, b, sizeof b), c = decode(&on, A_STR, b, sizeof b);

    cr_assert_eq(a.n, c.n);
    for (int k = 0; k < a.n; k++)
        cr_assert_eq(memcmp(&a.v[k], &c.v[k], sizeof a.v[k]), 0, "element %d", k);
}

/* The printers: the same names in text and JSON (docs/formats.md). */
Test(decoder_data, print)
{
    tb_config cfg = config(3);
    elems e = decode(&cfg, A_STR, e1, sizeof e1);
    char t[512], j[512];

    cr_assert_gt(tb_elem_format(data_el(&e, 0), t, sizeof t), 0);
    cr_assert_gt(tb_elem_format_json(data_el(&e, 0), j, sizeof j), 0);
    cr_assert_str_eq(t, "13 DATA insn_addr=0x00008000 isa=A32 store data_size=4 "
                        "data_addr=0x20000010 data_value=0x000000ab addr_traced value_traced");
    cr_assert_str_eq(j, "{\"index\":13,\"kind\":\"DATA\",\"insn_addr\":32768,\"isa\":\"A32\","
                        "\"store\":true,\"data_size\":4,\"data_addr\":536870928,"
                        "\"data_value\":171,\"placeholder\":false,\"ooo\":false,"
                        "\"addr_traced\":true,\"value_traced\":true,\"store_failed\":false,"
                        "\"be\":false,\"suppressed\":false}");
}
