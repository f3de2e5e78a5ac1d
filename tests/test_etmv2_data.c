/*
 * ETMv2 data trace (docs/etmv2.md 9): hand-made captures whose expected
 * packets come from IHI0014Q 6.4 (Table 6.2 headers: normal data
 * bC0A0SS10, Value Not Traced bC1101010, load miss occurred bC1A1TT00,
 * load miss data bCTT0SS00, C = another packet this cycle; a branch
 * address is always a cycle's last packet; 6.4.2: header, address,
 * value) and the unverified rows of etmv2.h (U1 status codes, U2 TFO
 * header, U8 SS sizes and address layout, U9 TT), named by constant or
 * spelled out below.  Round trips against the emulator's ground truth are
 * in test_roundtrip_etmv2.c.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tb_test.h"
#include "tracebench/etmv2.h"

typedef struct pbuf {
    tb_packet p[256];
    size_t n;
} pbuf;

static int on_packet(void *ctx, const tb_packet *p)
{
    pbuf *b = ctx;

    if (b->n < 256)
        b->p[b->n++] = *p;
    return 0;
}

static void cfg_data(tb_etmv2_config *c, uint8_t width, uint8_t data_trace)
{
    tb_etmv2_config_init(c);
    c->port_width = width;
    c->data_trace = data_trace;
}

static void parse(const tb_etmv2_config *c, const tb_etmv2_sample *s, size_t n, pbuf *out)
{
    tb_etmv2_parser *p = tb_etmv2_parser_new(c);

    cr_assert_not_null(p);
    memset(out, 0, sizeof *out);
    cr_assert_geq(tb_etmv2_parser_push_samples(p, s, n, 0, on_packet, out), 0);
    cr_assert_geq(tb_etmv2_parser_finish(p, on_packet, out), 0);
    tb_etmv2_parser_free(p);
}

/* A trace-on TFO (value 0) at 0x1000 (6.5.4: header RR = 01, address LSB
 * first U7), then on an 8-bit port:
 *   cycle 3, DE: a word load from 0x20001004 that read 0xDEADBEEF:
 *     header C=0 A=1 SS=11 = 0x2E; address 5 bytes (U8) 0x84 0xA0 0x80
 *     0x80 0x02 (A[6:0] = 0x04, A[13:7] = 0x20, A[20:14] = 0x00,
 *     A[27:21] = 0x00, A[31:28] = 2); value EF BE AD DE.
 *   cycle 4, DE: LDR pc from 0x20001008 that read 0x2000: header C=1 A=1
 *     SS=11 = 0xAE, one address byte 0x08 (A[6:0]; the rest from the last
 *     data address), value 00 20 00 00; then the branch address 0x2000
 *     (Table 6.9 against the TFO's 0x1000: 0x81 0x20), last (6.4.1).
 *   cycle 5, DN: a VNT with C (0xEA), then a byte store of 0x5A with no
 *     address (A = 0, SS = 01: 0x06).
 * The FIFO sends a byte a cycle from cycle 1 on. */
static const uint8_t fifo_both[] = {
    TB_ETMV2_TFO_HDR_NORMAL | TB_ETMV2_R_TRACE_ON, 0x00, 0x10, 0x00, 0x00,
    0x2E, 0x84, 0xA0, 0x80, 0x80, 0x02, 0xEF, 0xBE, 0xAD, 0xDE,
    0xAE, 0x08, 0x00, 0x20, 0x00, 0x00, 0x81, 0x20,
    0xEA, 0x06, 0x5A,
};

static size_t build_both(tb_etmv2_sample *s, uint8_t width)
{
    size_t n = 0, i;
    static const uint8_t ps[] = {TB_ETMV2_IE, TB_ETMV2_IE, TB_ETMV2_DE, TB_ETMV2_DE,
                                 TB_ETMV2_DN};
    size_t cyc = width == 4 ? 1 : 0, units = width == 4 ? 2 * sizeof fifo_both : sizeof fifo_both;

    s[n++] = (tb_etmv2_sample){TB_ETMV2_TD, 0, 0x01}; /* TFO, value 0 */
    if (width == 4)
        s[n++] = (tb_etmv2_sample){TB_ETMV2_IE, 0, 0x01}; /* U4: value[5:3] */
    /* Cycle 1 on (2 on a 4-bit port, where the TFO's second cycle is the
     * first instruction's, U4): one unit of the FIFO a cycle. */
    for (i = 0; i < units; i++, cyc++) {
        uint8_t st = cyc < sizeof ps ? ps[cyc] : TB_ETMV2_WT;
        uint16_t pkt;

        if (width == 4)
            pkt = (i & 1) ? fifo_both[i / 2] >> 4 : fifo_both[i / 2] & 0xF;
        else
            pkt = fifo_both[i];
        s[n++] = (tb_etmv2_sample){st, 0, pkt};
    }
    return n;
}

static void check_both(const pbuf *b)
{
    size_t i = 0;

    cr_assert_geq(b->n, 8, "%zu packets", b->n);
    cr_assert_eq(b->p[i].kind, TB_PKT_ISYNC);
    cr_assert_eq(b->p[i++].addr, 0x1000);
    cr_assert_eq(b->p[i].kind, TB_PKT_ATOM);
    i++;
    cr_assert_eq(b->p[i].kind, TB_PKT_DATA, "kind %d", b->p[i].kind);
    cr_assert(b->p[i].has_data_addr);
    cr_assert_eq(b->p[i].data_addr, 0x20001004u, "0x%x", b->p[i].data_addr);
    cr_assert_eq(b->p[i].data_addr_bits, 32);
    cr_assert_eq(b->p[i].data_size, 4);
    cr_assert_eq(b->p[i].data_value, 0xDEADBEEFu);
    cr_assert_eq(b->p[i++].phdr_format, TB_ETMV2_DE);
    cr_assert_eq(b->p[i++].kind, TB_PKT_ATOM);
    cr_assert_eq(b->p[i].kind, TB_PKT_DATA);
    cr_assert_eq(b->p[i].data_addr, 0x20001008u, "0x%x", b->p[i].data_addr);
    cr_assert_eq(b->p[i].data_addr_bits, 7);
    cr_assert_eq(b->p[i++].data_value, 0x2000u);
    cr_assert_eq(b->p[i].kind, TB_PKT_BRANCH);
    cr_assert_eq(b->p[i++].addr, 0x2000u);
    cr_assert_eq(b->p[i++].kind, TB_PKT_ATOM);
    cr_assert_eq(b->p[i++].kind, TB_PKT_VALUE_NOT_TRACED);
    cr_assert_eq(b->p[i].kind, TB_PKT_DATA);
    cr_assert(!b->p[i].has_data_addr);
    cr_assert_eq(b->p[i].data_size, 1);
    cr_assert_eq(b->p[i].data_value, 0x5A);
    cr_assert_eq(b->p[i].phdr_format, TB_ETMV2_DN);
}

Test(etmv2_data_parser, normal_data_vnt_and_branch_8bit)
{
    tb_etmv2_sample s[64];
    tb_etmv2_config c;
    pbuf b;
    size_t n = build_both(s, 8);

    cfg_data(&c, 8, 3);
    parse(&c, s, n, &b);
    check_both(&b);
    cr_assert_eq(b.n, 9, "%zu packets", b.n);
}

Test(etmv2_data_parser, normal_data_vnt_and_branch_4bit)
{
    tb_etmv2_sample s[128];
    tb_etmv2_config c;
    pbuf b;
    size_t n = build_both(s, 4);

    cfg_data(&c, 4, 3);
    parse(&c, s, n, &b);
    check_both(&b);
}

/* Any chunking of the capture bytes gives the same packets. */
Test(etmv2_data_parser, chunking)
{
    tb_etmv2_sample s[64];
    tb_etmv2_config c;
    uint8_t cap[16 + 64 * TB_ETMV1_SAMPLE_BYTES];
    size_t n = build_both(s, 8), len = 16, i, step;
    pbuf whole, b;

    cfg_data(&c, 8, 3);
    tb_etmv2_capture_header(&c, cap);
    for (i = 0; i < n; i++, len += TB_ETMV1_SAMPLE_BYTES)
        tb_etmv1_sample_pack(&s[i], cap + len);
    parse(&c, s, n, &whole);
    for (step = 1; step <= 7; step++) {
        tb_etmv2_parser *p = tb_etmv2_parser_new(NULL);

        memset(&b, 0, sizeof b);
        for (i = 0; i < len; i += step)
            cr_assert_geq(tb_etmv2_parser_push(p, cap + i, len - i < step ? len - i : step, i,
                                               on_packet, &b), 0);
        cr_assert_geq(tb_etmv2_parser_finish(p, on_packet, &b), 0);
        tb_etmv2_parser_free(p);
        cr_assert_eq(b.n, whole.n);
        for (i = 0; i < b.n; i++) {
            cr_assert_eq(b.p[i].kind, whole.p[i].kind);
            cr_assert_eq(b.p[i].data_addr, whole.p[i].data_addr);
            cr_assert_eq(b.p[i].data_value, whole.p[i].data_value);
        }
    }
}

/* Address-only trace (ETMCR[3:2] = 10): no value bytes (U8: SS = 00);
 * load miss occurred with its address and tag, then the load miss data
 * packet is refused without value trace when SS != 00... here with
 * values: load miss occurred bC1A1TT00 (C=1, A=0, TT=10: 0xD8), load miss
 * data bCTT0SS00 (C=0, TT=10, SS=10: 0x48) + 2 bytes 0x34 0x12. */
Test(etmv2_data_parser, address_only_and_load_miss)
{
    tb_etmv2_sample a[] = {
        {TB_ETMV2_TD, 0, 0x01},
        {TB_ETMV2_IE, 0, TB_ETMV2_TFO_HDR_NORMAL | TB_ETMV2_R_TRACE_ON},
        {TB_ETMV2_IE, 0, 0x00},
        {TB_ETMV2_DE, 0, 0x10},
        {TB_ETMV2_WT, 0, 0x00},
        {TB_ETMV2_WT, 0, 0x00},
        {TB_ETMV2_WT, 0, 0x22}, /* C=0 A=1 SS=00 */
        {TB_ETMV2_WT, 0, 0x10}, /* address 0x10 */
    };
    tb_etmv2_sample m[] = {
        {TB_ETMV2_TD, 0, 0x01},
        {TB_ETMV2_IE, 0, TB_ETMV2_TFO_HDR_NORMAL | TB_ETMV2_R_TRACE_ON},
        {TB_ETMV2_IE, 0, 0x00},
        {TB_ETMV2_DE, 0, 0x10},
        {TB_ETMV2_WT, 0, 0x00},
        {TB_ETMV2_WT, 0, 0x00},
        {TB_ETMV2_WT, 0, 0xD8},
        {TB_ETMV2_WT, 0, 0x48},
        {TB_ETMV2_WT, 0, 0x34},
        {TB_ETMV2_WT, 0, 0x12},
    };
    tb_etmv2_config c;
    pbuf b;

    cfg_data(&c, 8, 2);
    parse(&c, a, sizeof a / sizeof a[0], &b);
    cr_assert_eq(b.n, 3, "%zu", b.n);
    cr_assert_eq(b.p[2].kind, TB_PKT_DATA);
    cr_assert(b.p[2].has_data_addr);
    cr_assert_eq(b.p[2].data_addr, 0x10);
    cr_assert_eq(b.p[2].data_size, 0);

    cfg_data(&c, 8, 1);
    parse(&c, m, sizeof m / sizeof m[0], &b);
    cr_assert_eq(b.n, 4, "%zu", b.n);
    cr_assert_eq(b.p[2].kind, TB_PKT_OOO_PLACEHOLDER);
    cr_assert_eq(b.p[2].data_tag, 2);
    cr_assert(!b.p[2].has_data_addr);
    cr_assert_eq(b.p[3].kind, TB_PKT_OOO_DATA);
    cr_assert_eq(b.p[3].data_tag, 2);
    cr_assert_eq(b.p[3].data_size, 2);
    cr_assert_eq(b.p[3].data_value, 0x1234);
}

static void expect_error(uint8_t dt, const tb_etmv2_sample *s, size_t n, tb_pkt_kind kind)
{
    tb_etmv2_config c;
    pbuf b;
    size_t i;

    cfg_data(&c, 8, dt);
    parse(&c, s, n, &b);
    for (i = 0; i < b.n; i++)
        if (b.p[i].kind == kind)
            return;
    cr_assert_fail("no packet of kind %d among %zu", (int)kind, b.n);
}

Test(etmv2_data_bad, refused_and_malformed)
{
#define PRE {TB_ETMV2_TD, 0, 0x01}, {TB_ETMV2_IE, 0, TB_ETMV2_R_TRACE_ON}, {TB_ETMV2_IE, 0, 0}, \
            {TB_ETMV2_DE, 0, 0x10}, {TB_ETMV2_WT, 0, 0}, {TB_ETMV2_WT, 0, 0}
    /* A data header without data trace (6.4.1: a valid header). */
    tb_etmv2_sample nod[] = {PRE, {TB_ETMV2_WT, 0, 0x02}};
    /* Value bytes without value trace (U8). */
    tb_etmv2_sample nov[] = {PRE, {TB_ETMV2_WT, 0, 0x0E}};
    /* A 5th address byte with bits above A[31:28] (U8). */
    tb_etmv2_sample a5[] = {PRE, {TB_ETMV2_WT, 0, 0x22}, {TB_ETMV2_WT, 0, 0x80},
                            {TB_ETMV2_WT, 0, 0x80}, {TB_ETMV2_WT, 0, 0x80},
                            {TB_ETMV2_WT, 0, 0x80}, {TB_ETMV2_WT, 0, 0x30}};
    /* A data packet cut by the end of the trace. */
    tb_etmv2_sample cut[] = {PRE, {TB_ETMV2_WT, 0, 0x2E}, {TB_ETMV2_WT, 0, 0x10},
                             {TB_ETMV2_WT, 0, 0xEF}};
    /* A reserved header among data packets (bX111XX10) after a C. */
    tb_etmv2_sample r[] = {PRE, {TB_ETMV2_WT, 0, 0x86}, {TB_ETMV2_WT, 0, 0x11},
                           {TB_ETMV2_WT, 0, 0x72}};
#undef PRE

    expect_error(0, nod, sizeof nod / sizeof nod[0], TB_PKT_BAD_TRACEMODE);
    expect_error(2, nov, sizeof nov / sizeof nov[0], TB_PKT_RESERVED);
    expect_error(2, a5, sizeof a5 / sizeof a5[0], TB_PKT_RESERVED);
    expect_error(3, cut, sizeof cut / sizeof cut[0], TB_PKT_INCOMPLETE);
    expect_error(1, r, sizeof r / sizeof r[0], TB_PKT_RESERVED);
}
