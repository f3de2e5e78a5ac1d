/*
 * ETMv1 data trace (ETMCR[3:2]; docs/etmv1.md 9): the worked examples 1-3
 * of shared/docs/etmv1-v2.md 12, derived by hand from IHI0014Q 5.2, 5.4
 * (Table 5.2), 5.6.1 and 5.7.3 (data address, then values, then a BD's
 * branch address; no TRACESYNC on data), byte for byte, through the
 * encoder (examples 1, 2) and the parser + decoder (1, 2, 3); and bad
 * data input.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../decoder/protocols.h"
#include "../encoder/port_encoders.h"
#include "tb_test.h"
#include "tracebench/decoder.h"
#include "tracebench/etmv1.h"

#define MAXS 1024
#define MAXP 1024
#define MAXE 1024

typedef struct sbuf {
    tb_etmv1_sample s[MAXS];
    size_t n;
} sbuf;

static int on_samples(void *ctx, const tb_etmv1_sample *s, size_t n)
{
    sbuf *b = ctx;

    cr_assert_leq(b->n + n, MAXS);
    memcpy(b->s + b->n, s, n * sizeof *s);
    b->n += n;
    return 0;
}

typedef struct pbuf {
    tb_packet p[MAXP];
    size_t n;
} pbuf;

static int on_packet(void *ctx, const tb_packet *p)
{
    pbuf *b = ctx;

    cr_assert_lt(b->n, MAXP);
    b->p[b->n++] = *p;
    return 0;
}

typedef struct ebuf {
    tb_element e[MAXE];
    size_t n;
} ebuf;

static int on_elem(void *ctx, const tb_element *el)
{
    ebuf *b = ctx;

    cr_assert_lt(b->n, MAXE);
    b->e[b->n++] = *el;
    return 0;
}

static void parse_decode(const tb_etmv1_config *c, const tb_memimage *m,
                         const tb_etmv1_sample *s, size_t n, ebuf *out)
{
    static pbuf pk;
    tb_etmv1_parser *p = tb_etmv1_parser_new(c);
    tb_etmv1_decoder *d = tb_etmv1_decoder_new(c, m);
    size_t i;

    cr_assert_not_null(p);
    cr_assert_not_null(d);
    pk.n = 0;
    cr_assert_geq(tb_etmv1_parser_push_samples(p, s, n, 0, on_packet, &pk), 0);
    cr_assert_geq(tb_etmv1_parser_finish(p, on_packet, &pk), 0);
    out->n = 0;
    for (i = 0; i < pk.n; i++)
        cr_assert_geq(tb_etmv1_decoder_packet(d, &pk.p[i], on_elem, out), 0);
    cr_assert_geq(tb_etmv1_decoder_finish(d, on_elem, out), 0);
    tb_etmv1_parser_free(p);
    tb_etmv1_decoder_free(d);
}

static void expect_samples(const tb_etmv1_sample *got, const tb_etmv1_sample *want, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        cr_assert(got[i].pipestat == want[i].pipestat && got[i].tracesync == want[i].tracesync &&
                      got[i].tracepkt == want[i].tracepkt,
                  "cycle %zu: got ps %u sync %u pkt 0x%X, want ps %u sync %u pkt 0x%X", i,
                  got[i].pipestat, got[i].tracesync, got[i].tracepkt, want[i].pipestat,
                  want[i].tracesync, want[i].tracepkt);
}

/* Exec records, cycle stamps given per instruction (span = cycles). */
typedef struct recs {
    tb_exec_record r[128];
    size_t n;
    uint64_t cycle, seq;
} recs;

static void insn(recs *R, uint32_t addr, uint32_t next, tb_wp_class wp, uint8_t flags,
                 unsigned span)
{
    tb_exec_record *r = &R->r[R->n++];

    memset(r, 0, sizeof *r);
    R->cycle += span;
    r->kind = TB_REC_INSN;
    r->seq = R->seq++;
    r->cycle = R->cycle;
    r->u.insn.addr = addr;
    r->u.insn.size = 4;
    r->u.insn.isa = TB_ISA_ARM;
    r->u.insn.next_addr = next;
    r->u.insn.next_isa = TB_ISA_ARM;
    r->u.insn.wp_class = (uint8_t)wp;
    r->u.insn.flags = flags;
}

static void mov(recs *R, uint32_t addr, unsigned span)
{
    insn(R, addr, addr + 4, TB_WP_NONE, 0, span);
}

/* A transfer of the instruction just added (sim.h). */
static void xfer(recs *R, uint32_t addr, uint32_t value, uint8_t size, bool store)
{
    tb_exec_record *r = &R->r[R->n++];
    const tb_exec_record *i = &R->r[R->n - 2];

    memset(r, 0, sizeof *r);
    r->kind = TB_REC_DATA;
    r->seq = R->seq;
    r->cycle = R->cycle;
    r->u.data.insn_addr = i->kind == TB_REC_INSN ? i->u.insn.addr : i->u.data.insn_addr;
    r->u.data.addr = addr;
    r->u.data.value = value;
    r->u.data.size = size;
    r->u.data.flags = store ? TB_DATA_STORE : 0;
}

static void encode(const tb_etmv1_encoder_opts *o, const recs *R, sbuf *out)
{
    tb_etmv1_encoder *e = tb_etmv1_encoder_new(o, on_samples, out);
    size_t i;

    cr_assert_not_null(e);
    out->n = 0;
    for (i = 0; i < R->n; i++)
        cr_assert_eq(tb_etmv1_encoder_push(e, &R->r[i]), 0, "record %zu", i);
    cr_assert_eq(tb_etmv1_encoder_finish(e), 0);
    tb_etmv1_encoder_free(e);
}

static void expect_data(const tb_element *el, uint32_t insn_addr, bool store, uint8_t size,
                        bool has_addr, uint32_t addr, bool has_value, uint32_t value)
{
    cr_assert_eq(el->kind, TB_ELEM_DATA, "kind %d", el->kind);
    cr_assert_eq(el->last_addr, insn_addr, "insn 0x%x", el->last_addr);
    cr_assert_eq(!!(el->data_flags & TB_DATA_STORE), store);
    cr_assert_eq(el->data_size, size);
    cr_assert_eq(!(el->data_flags & TB_DATA_NO_ADDR), has_addr);
    if (has_addr)
        cr_assert_eq(el->data_addr, addr, "addr 0x%x want 0x%x", el->data_addr, addr);
    cr_assert_eq(!(el->data_flags & TB_DATA_NO_VALUE), has_value);
    if (has_value)
        cr_assert_eq(el->data_value, value, "value 0x%x want 0x%x", el->data_value, value);
}

/* The DATA elements of els, in order. */
static size_t data_of(const ebuf *els, const tb_element **out, size_t max)
{
    size_t i, n = 0;

    for (i = 0; i < els->n && n < max; i++)
        if (els->e[i].kind == TB_ELEM_DATA)
            out[n++] = &els->e[i];
    return n;
}

/* ------------------------------------------------------------------ */
/* Example 1 (etmv1-v2.md 12): 8-bit port, values only (ETMCR[3:2] = 01).
 * LDMIA r0,{r1,r2} loads 0x11111111, 0x22222222 (ID: 4 packets a
 * register, 5.4 Table 5.2), BX r5 -> 0x9000 (BE, 80 20 against 0x8000),
 * BX r6 at 0x9000 -> 0x9100 (BE, 80 22; APO = 1: BE#1's address still
 * waits, 5.6.1).  Before it here: trace on at 0x8000 (a BE marker with a
 * full address 80 80 82 80 10, 5.8) and two MOVs that drain it, so the
 * example starts with the FIFO empty and 0x8000 the last address. */
static const uint32_t ex1_code[] = {
    0xE1A00000, 0xE1A00000, /* 8000 MOV; 8004 MOV */
    0xE8900006,             /* 8008 LDMIA r0, {r1, r2} */
    0xE12FFF15,             /* 800C BX r5 */
};
static const uint32_t ex1_bx6[] = {0xE12FFF16}; /* 9000 BX r6 */
static const uint32_t ex1_movs[] = {0xE1A00000, 0xE1A00000, 0xE1A00000, 0xE1A00000};

static const tb_etmv1_sample ex1[] = {
    /* trace-on marker and the two MOVs */
    {4, 1, 0x80}, {0, 0, 0x80}, {0, 0, 0x82}, {0, 0, 0x80}, {0, 0, 0x10},
    /* the example's cycles 0-11 (12: TD, dropped by the capture) */
    {1, 0, 0x11}, {3, 0, 0x11}, {4, 0, 0x11}, {0, 0, 0x11}, {0, 0, 0x22}, {4, 0, 0x22},
    {1, 0, 0x22}, {0, 0, 0x22}, {0, 1, 0x80}, {0, 0, 0x20}, {0, 1, 0x80}, {0, 0, 0x22},
};

static void ex1_records(recs *R)
{
    memset(R, 0, sizeof *R);
    mov(R, 0x8000, 1);
    mov(R, 0x8004, 1);
    insn(R, 0x8008, 0x800C, TB_WP_NONE, 0, 2); /* LDM: 2 cycles */
    xfer(R, 0x1000, 0x11111111, 4, false);
    xfer(R, 0x1004, 0x22222222, 4, false);
    insn(R, 0x800C, 0x9000, TB_WP_INDIRECT, TB_INSN_TAKEN, 3);
    insn(R, 0x9000, 0x9100, TB_WP_INDIRECT, TB_INSN_TAKEN, 3);
    mov(R, 0x9100, 1);
    mov(R, 0x9104, 1);
    mov(R, 0x9108, 1);
    mov(R, 0x910C, 1);
}

Test(etmv1_data, example1_value_only_encoder)
{
    tb_etmv1_encoder_opts o;
    static recs R;
    static sbuf sb;

    tb_etmv1_encoder_opts_init(&o);
    o.base.data_trace = 1;
    ex1_records(&R);
    encode(&o, &R, &sb);
    cr_assert_eq(sb.n, sizeof ex1 / sizeof ex1[0], "%zu samples", sb.n);
    expect_samples(sb.s, ex1, sb.n);
}

Test(etmv1_data, example1_value_only_decoder)
{
    tb_etmv1_config c;
    tb_memimage *m = tb_memimage_new();
    static ebuf el;
    const tb_element *d[4];

    tb_test_image_words(m, 0x8000, ex1_code, 4);
    tb_test_image_words(m, 0x9000, ex1_bx6, 1);
    tb_test_image_words(m, 0x9100, ex1_movs, 4);
    tb_etmv1_config_init(&c);
    c.data_trace = 1;
    parse_decode(&c, m, ex1, sizeof ex1 / sizeof ex1[0], &el);
    cr_assert_eq(data_of(&el, d, 4), 2);
    expect_data(d[0], 0x8008, false, 4, false, 0, true, 0x11111111);
    expect_data(d[1], 0x8008, false, 4, false, 0, true, 0x22222222);
    /* Each follows the range that ends with its instruction. */
    cr_assert_eq(d[0][-1].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(d[0][-1].last_addr, 0x8008);
    cr_assert_eq(d[1][1].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(d[1][1].start, 0x800C);
    for (size_t i = 1; i < el.n; i++)
        cr_assert_neq(el.e[i].kind, TB_ELEM_NO_SYNC, "element %zu: %d", i, el.e[i].reason);
    tb_memimage_free(m);
}

/* ------------------------------------------------------------------ */
/* Example 2: 4-bit port, address and value (ETMCR[3:2] = 11).  Last data
 * address 0x4000; LDR r0,[r1] from 0x4004 (address 04: only A[2]
 * changed, 5.7.3; value 5A 5A 5A 5A), ADDNE fails (IN), STRB r3,[r1,#1]
 * of 0xC3 to 0x4005 (05 C3).  A packet in two cycles, low nibble first
 * (5.2); no TRACESYNC.  Before it here: trace on at 0x1000, an LDR from
 * 0x4000 (a full data address: FIFO 00 80 80 80 00, value 78 56 34 12)
 * and a MOV long enough for the FIFO to drain. */
static const uint32_t ex2_code[] = {
    0xE5920000, /* 1000 LDR r0, [r2] */
    0xE1A00000, /* 1004 MOV */
    0xE5910000, /* 1008 LDR r0, [r1] */
    0x12800001, /* 100C ADDNE r0, r0, #1 */
    0xE5C13001, /* 1010 STRB r3, [r1, #1] */
    0xE1A00000, 0xE1A00000, 0xE1A00000, 0xE1A00000, 0xE1A00000, 0xE1A00000,
    0xE1A00000, 0xE1A00000, 0xE1A00000, 0xE1A00000, 0xE1A00000,
};

/* The example's cycles 0-13: ID 4, IN 0, ID A, then IEs 5 A 5 A 5 A 5 5
 * 0 3 C. */
static const tb_etmv1_sample ex2[] = {
    {1, 0, 0x4}, {2, 0, 0x0}, {1, 0, 0xA}, {0, 0, 0x5}, {0, 0, 0xA}, {0, 0, 0x5},
    {0, 0, 0xA}, {0, 0, 0x5}, {0, 0, 0xA}, {0, 0, 0x5}, {0, 0, 0x5}, {0, 0, 0x0},
    {0, 0, 0x3}, {0, 0, 0xC},
};

static void ex2_records(recs *R)
{
    unsigned i;

    memset(R, 0, sizeof *R);
    insn(R, 0x1000, 0x1004, TB_WP_NONE, 0, 1);
    xfer(R, 0x4000, 0x12345678, 4, false);
    mov(R, 0x1004, 40);
    insn(R, 0x1008, 0x100C, TB_WP_NONE, 0, 1);
    xfer(R, 0x4004, 0x5A5A5A5A, 4, false);
    insn(R, 0x100C, 0x1010, TB_WP_NONE, TB_INSN_COND_FAILED | TB_INSN_CONDITIONAL, 1);
    insn(R, 0x1010, 0x1014, TB_WP_NONE, 0, 1);
    xfer(R, 0x4005, 0xC3, 1, true);
    for (i = 0; i < 11; i++)
        mov(R, 0x1014 + 4 * i, 1);
}

Test(etmv1_data, example2_address_and_value_4bit)
{
    tb_etmv1_encoder_opts o;
    tb_etmv1_config c;
    tb_memimage *m = tb_memimage_new();
    static recs R;
    static sbuf sb;
    static ebuf el;
    const tb_element *d[4];
    size_t n = sizeof ex2 / sizeof ex2[0];

    tb_etmv1_encoder_opts_init(&o);
    o.base.data_trace = 3;
    o.port_width = 4;
    ex2_records(&R);
    encode(&o, &R, &sb);
    cr_assert_geq(sb.n, n);
    expect_samples(sb.s + sb.n - n, ex2, n);
    /* The cycle before the example is the last draining WT. */
    cr_assert_eq(sb.s[sb.n - n - 1].pipestat, TB_ETMV1_WT);

    tb_test_image_words(m, 0x1000, ex2_code, sizeof ex2_code / 4);
    tb_etmv1_config_init(&c);
    c.port_width = 4;
    c.data_trace = 3;
    parse_decode(&c, m, sb.s, sb.n, &el);
    cr_assert_eq(data_of(&el, d, 4), 3);
    expect_data(d[0], 0x1000, false, 4, true, 0x4000, true, 0x12345678);
    expect_data(d[1], 0x1008, false, 4, true, 0x4004, true, 0x5A5A5A5A);
    expect_data(d[2], 0x1010, true, 1, true, 0x4005, true, 0xC3);
    tb_memimage_free(m);
}

/* ------------------------------------------------------------------ */
/* Example 3: 8-bit port, address and value, cycle accurate; LDR pc,
 * [sp],#4 with sp = 0x3FF8 loads 0xA124: BD (5.7.1) with data address 78
 * (against 0x3FFC), value 24 A1 00 00, then the branch address A4 42
 * (against 0xA000), data first (5.4); a trigger in the second APO cycle
 * (TR, APO[3:2] = 00 on TRACEPKT[2:0]; no FIFO byte then, 5.3); TD with
 * TRACEPKT[0] = 1 (5.10).  Written by hand, with a preamble: trace on at
 * 0xA000 (80 C0 82 80 10) and LDR r1,[r2] at 0xA000 from 0x3FFC (a full
 * data address FC FF 80 80 00, value 44 33 22 11). */
static const tb_etmv1_sample ex3[] = {
    /* preamble: marker, its APO cycles, the LDR (ID), WTs draining */
    {4, 1, 0x80}, {0, 0, 0xC0}, {0, 0, 0x82}, {1, 0, 0x80}, {3, 0, 0x10}, {3, 0, 0xFC},
    {3, 0, 0xFF}, {3, 0, 0x80}, {3, 0, 0x80}, {3, 0, 0x00}, {3, 0, 0x44}, {3, 0, 0x33},
    {3, 0, 0x22}, {3, 0, 0x11},
    /* the example's cycles 0-8 */
    {5, 0, 0x78}, {0, 0, 0x24}, {6, 0, 0x00}, {0, 0, 0xA1}, {0, 0, 0x00}, {0, 0, 0x00},
    {0, 1, 0xA4}, {0, 0, 0x42}, {7, 0, 0x01},
};

Test(etmv1_data, example3_bd_trigger_ca)
{
    static const uint32_t a[] = {0xE5921000, 0xE49DF004}; /* LDR r1,[r2]; LDR pc,[sp],#4 */
    static const uint32_t b[] = {0xE1A00000, 0xE1A00000, 0xE1A00000, 0xE1A00000,
                                 0xE1A00000};
    tb_etmv1_config c;
    tb_memimage *m = tb_memimage_new();
    static ebuf el;
    const tb_element *d[4];
    size_t i, ev = 0, bd_range = 0;

    tb_test_image_words(m, 0xA000, a, 2);
    tb_test_image_words(m, 0xA124, b, 5);
    tb_etmv1_config_init(&c);
    c.cycle_accurate = true;
    c.data_trace = 3;
    parse_decode(&c, m, ex3, sizeof ex3 / sizeof ex3[0], &el);
    cr_assert_eq(data_of(&el, d, 4), 2);
    expect_data(d[0], 0xA000, false, 4, true, 0x3FFC, true, 0x11223344);
    expect_data(d[1], 0xA004, false, 4, true, 0x3FF8, true, 0x0000A124);
    for (i = 0; i < el.n; i++) {
        if (i > 0)
            cr_assert_neq(el.e[i].kind, TB_ELEM_NO_SYNC, "element %zu", i);
        if (el.e[i].kind == TB_ELEM_EVENT)
            ev++;
        if (el.e[i].kind == TB_ELEM_INSN_RANGE && el.e[i].last_addr == 0xA004) {
            bd_range = i;
            cr_assert_eq(el.e[i + 1].kind, TB_ELEM_DATA);
        }
        if (el.e[i].kind == TB_ELEM_INSN_RANGE && el.e[i].start == 0xA124)
            cr_assert_eq(el.e[i].count, 5);
    }
    cr_assert_eq(ev, 1);
    cr_assert_gt(bd_range, 0);
    tb_memimage_free(m);
}

/* ------------------------------------------------------------------ */
/* Bad data input: an error element, never a guess. */

/* A 5-packet data address must have reason b000 (5.7.3). */
Test(etmv1_data, data_address_with_reason_is_an_error)
{
    static const uint32_t a[] = {0xE5921000, 0xE1A00000};
    static const tb_etmv1_sample s[] = {
        {4, 1, 0x80}, {0, 0, 0xC0}, {0, 0, 0x82}, {1, 0, 0x80}, {3, 0, 0x10},
        {3, 0, 0xFC}, {3, 0, 0xFF}, {3, 0, 0x80}, {3, 0, 0x80}, {3, 0, 0x10},
        {0, 0, 0x00},
    };
    tb_etmv1_config c;
    tb_memimage *m = tb_memimage_new();
    static ebuf el;
    size_t i, bad = 0;

    tb_test_image_words(m, 0xA000, a, 2);
    tb_etmv1_config_init(&c);
    c.data_trace = 2;
    parse_decode(&c, m, s, sizeof s / sizeof s[0], &el);
    for (i = 0; i < el.n; i++) {
        cr_assert_neq(el.e[i].kind, TB_ELEM_DATA);
        if (el.e[i].kind == TB_ELEM_NO_SYNC && el.e[i].err == TB_ERR_BAD_PACKET)
            bad++;
    }
    cr_assert_eq(bad, 1);
    tb_memimage_free(m);
}

/* The trace ends before an ID's data: TB_ERR_TRUNCATED, no element made
 * up; an ID on an instruction that transfers nothing: inconsistent. */
Test(etmv1_data, truncated_and_inconsistent)
{
    static const uint32_t a[] = {0xE5921000, 0xE1A00000};
    static const tb_etmv1_sample cut[] = {
        {4, 1, 0x80}, {0, 0, 0xC0}, {0, 0, 0x82}, {1, 0, 0x80}, {3, 0, 0x10},
        {3, 0, 0xFC}, {3, 0, 0xFF},
    };
    static const tb_etmv1_sample noxfer[] = {
        {4, 1, 0x80}, {0, 0, 0xC0}, {0, 0, 0x82}, {0, 0, 0x80}, {1, 0, 0x10},
    };
    tb_etmv1_config c;
    tb_memimage *m = tb_memimage_new();
    static ebuf el;
    size_t i, n;

    tb_test_image_words(m, 0xA000, a, 2);
    tb_etmv1_config_init(&c);
    c.data_trace = 3;
    parse_decode(&c, m, cut, sizeof cut / sizeof cut[0], &el);
    for (i = n = 0; i < el.n; i++) {
        cr_assert_neq(el.e[i].kind, TB_ELEM_DATA);
        n += el.e[i].kind == TB_ELEM_NO_SYNC && el.e[i].err == TB_ERR_TRUNCATED;
    }
    cr_assert_eq(n, 1);
    cr_assert_eq(el.e[el.n - 1].kind, TB_ELEM_END); /* nothing held back */
    /* ID on the MOV at 0xA004 */
    parse_decode(&c, m, noxfer, sizeof noxfer / sizeof noxfer[0], &el);
    for (i = n = 0; i < el.n; i++) {
        cr_assert_neq(el.e[i].kind, TB_ELEM_DATA);
        n += el.e[i].kind == TB_ELEM_NO_SYNC && el.e[i].reason == TB_GAP_INCONSISTENT;
    }
    cr_assert_eq(n, 1);
    tb_memimage_free(m);
}

/* Parser chunking: the same packets for any split of the capture. */
Test(etmv1_data, chunking_invariance)
{
    tb_etmv1_encoder_opts o;
    static recs R;
    static uint8_t cap[16 + 4 * MAXS];
    static pbuf whole, part;
    tb_etmv1_config c;
    size_t n, i, k;

    tb_etmv1_encoder_opts_init(&o);
    o.base.data_trace = 3;
    o.port_width = 16;
    ex1_records(&R);
    {
        static sbuf sb;

        encode(&o, &R, &sb);
        tb_etmv1_config_init(&c);
        cr_assert_eq(tb_etmv1_encoder_config(&o, &c), 0);
        tb_etmv1_capture_header(&c, cap);
        for (i = 0; i < sb.n; i++)
            tb_etmv1_sample_pack(&sb.s[i], cap + 16 + 4 * i);
        n = 16 + 4 * sb.n;
    }
    for (k = 0; k < 8; k++) {
        size_t chunk = k ? k : n;
        pbuf *b = k ? &part : &whole;
        tb_etmv1_parser *p = tb_etmv1_parser_new(NULL);

        b->n = 0;
        for (i = 0; i < n; i += chunk)
            cr_assert_geq(tb_etmv1_parser_push(p, cap + i, i + chunk > n ? n - i : chunk, i,
                                               on_packet, b), 0);
        cr_assert_geq(tb_etmv1_parser_finish(p, on_packet, b), 0);
        tb_etmv1_parser_free(p);
        if (k) {
            cr_assert_eq(part.n, whole.n);
            for (i = 0; i < whole.n; i++)
                cr_assert(whole.p[i].kind == part.p[i].kind &&
                              whole.p[i].index == part.p[i].index &&
                              whole.p[i].size == part.p[i].size &&
                              !memcmp(whole.p[i].bytes, part.p[i].bytes, whole.p[i].size),
                          "chunk %zu packet %zu", chunk, i);
        }
    }
    cr_assert_gt(whole.n, 0);
}
