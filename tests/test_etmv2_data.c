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

#include "../decoder/protocols.h"
#include "../encoder/port_encoders.h"
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

/* IHI0014Q 6.4.1 Table 6.2 (page Bhbhibdd, the one ETMv2 table whose every
 * cell survives), transcribed as its bit patterns, bit 7 first: 0/1 fixed,
 * C = more packets this cycle, A = address follows, S/T = SS/TT fields,
 * X = undefined.  Every header byte (bit 0 = 0; 1 is a branch address,
 * the table's note) must match exactly one row, and the parser must read
 * it as that row says.  The SS sizes are U8 and not checked here. */
static const struct {
    const char *pat;
    tb_pkt_kind kind;
} table_6_2[] = {
    {"C0A0SS10", TB_PKT_DATA},
    {"X0X1XX00", TB_PKT_RESERVED},
    {"X0X1XX10", TB_PKT_RESERVED},
    {"X10XXX10", TB_PKT_RESERVED},
    {"X1100X10", TB_PKT_RESERVED},
    {"C1101010", TB_PKT_VALUE_NOT_TRACED},
    {"C1101110", TB_PKT_CONTEXT_ID},
    {"X111XX10", TB_PKT_RESERVED},
    {"C1A1TT00", TB_PKT_OOO_PLACEHOLDER}, /* Load Miss occurred */
    {"CTT0SS00", TB_PKT_OOO_DATA},        /* Load Miss data */
};

static bool pat_match(const char *pat, uint8_t h)
{
    for (int i = 0; i < 8; i++) {
        int bit = (h >> (7 - i)) & 1;

        if ((pat[i] == '0' && bit) || (pat[i] == '1' && !bit))
            return false;
    }
    return true;
}

/* The value of the field letter f in h (its letters in pattern order). */
static unsigned pat_field(const char *pat, uint8_t h, char f)
{
    unsigned v = 0;

    for (int i = 0; i < 8; i++)
        if (pat[i] == f)
            v = v << 1 | ((h >> (7 - i)) & 1u);
    return v;
}

Test(etmv2_data_parser, table_6_2_every_header)
{
    for (unsigned h = 0; h < 256; h += 2) {
        tb_etmv2_sample s[32];
        tb_etmv2_config c;
        size_t n = 0, i, row = 0, rows = 0;
        const tb_packet *k = NULL;
        pbuf b;

        for (i = 0; i < sizeof table_6_2 / sizeof table_6_2[0]; i++)
            if (pat_match(table_6_2[i].pat, (uint8_t)h)) {
                row = i;
                rows++;
            }
        cr_assert_eq(rows, 1, "header 0x%02x matches %zu rows of Table 6.2", h, rows);

        /* Addresses, values and 4-byte context IDs on, so every valid row
         * is allowed; an 8-bit port.  TFO (value 0) at cycle 0, its 9
         * bytes (U2 header, U7 order), a DE at cycle 1 whose group is the
         * header and six zero bytes: enough for any row (a one-byte
         * address, bit 7 = 0, and up to four value or context ID bytes),
         * and after a C = 1 one a zero byte, which is a whole packet with
         * C = 0 (load miss data, TT = SS = 00) that ends the group. */
        cfg_data(&c, 8, 3);
        c.ctxid_bytes = 4;
        s[n++] = (tb_etmv2_sample){TB_ETMV2_TD, 0, 0x01};
        s[n++] = (tb_etmv2_sample){TB_ETMV2_DE, 0,
                                   TB_ETMV2_TFO_HDR_NORMAL | TB_ETMV2_R_TRACE_ON};
        for (i = 0; i < 8; i++)
            s[n++] = (tb_etmv2_sample){TB_ETMV2_WT, 0, i == 5 ? 0x10 : 0x00};
        s[n++] = (tb_etmv2_sample){TB_ETMV2_WT, 0, (uint16_t)h};
        for (i = 0; i < 6; i++)
            s[n++] = (tb_etmv2_sample){TB_ETMV2_WT, 0, 0x00};
        parse(&c, s, n, &b);
        for (i = 0; i < b.n && !k; i++)
            if (b.p[i].kind != TB_PKT_ISYNC && b.p[i].kind != TB_PKT_ATOM)
                k = &b.p[i];
        cr_assert_not_null(k, "header 0x%02x: no packet", h);
        cr_assert_eq(k->kind, table_6_2[row].kind, "header 0x%02x (%s) read as kind %d", h,
                     table_6_2[row].pat, (int)k->kind);
        if (table_6_2[row].kind == TB_PKT_DATA || table_6_2[row].kind == TB_PKT_OOO_PLACEHOLDER)
            cr_assert_eq(k->has_data_addr, pat_field(table_6_2[row].pat, (uint8_t)h, 'A') != 0,
                         "header 0x%02x: A", h);
        if (table_6_2[row].kind == TB_PKT_OOO_PLACEHOLDER ||
            table_6_2[row].kind == TB_PKT_OOO_DATA)
            cr_assert_eq(k->data_tag, pat_field(table_6_2[row].pat, (uint8_t)h, 'T'),
                         "header 0x%02x: TT", h);
    }
}

/* ---- encoder: records -> samples, bytes by the rules above ---- */

typedef struct sbuf {
    tb_etmv2_sample s[256];
    size_t n;
} sbuf;

static int on_samples(void *ctx, const tb_etmv1_sample *s, size_t n)
{
    sbuf *b = ctx;

    for (size_t i = 0; i < n && b->n < 256; i++)
        b->s[b->n++] = s[i];
    return 0;
}

static void insn(tb_etmv2_encoder *e, uint64_t seq, uint32_t addr, uint32_t next, uint8_t wp,
                 uint8_t flags)
{
    tb_exec_record r;

    memset(&r, 0, sizeof r);
    r.kind = TB_REC_INSN;
    r.seq = seq;
    r.cycle = seq;
    r.u.insn.addr = addr;
    r.u.insn.size = 4;
    r.u.insn.next_addr = next;
    r.u.insn.wp_class = wp;
    r.u.insn.flags = flags;
    cr_assert_eq(tb_etmv2_encoder_push(e, &r), 0);
}

static void xfer(tb_etmv2_encoder *e, uint64_t seq, uint32_t iaddr, uint32_t addr,
                 uint32_t value, bool store)
{
    tb_exec_record r;

    memset(&r, 0, sizeof r);
    r.kind = TB_REC_DATA;
    r.seq = seq;
    r.cycle = seq;
    r.u.data.insn_addr = iaddr;
    r.u.data.addr = addr;
    r.u.data.value = value;
    r.u.data.size = 4;
    r.u.data.flags = store ? TB_DATA_STORE : 0;
    cr_assert_eq(tb_etmv2_encoder_push(e, &r), 0);
}

/* 0x1000 LDR r0, [r1] (0x20001004 -> 0xDEADBEEF); 0x1004 LDR pc, [r1, #4]
 * (0x20001008 -> 0x2000); 0x2000 STRBNE r0, [r1] failing its condition;
 * 0x2004 STMIA r1, {r2, r3} (0x11, 0x22 to 0x20001100/4). */
static const uint32_t prog_addr[] = {0x1000, 0x1004, 0x2000, 0x2004};
static const uint32_t prog_op[] = {0xE5910000, 0xE591F004, 0x15C10000, 0xE881000C};

static void program(tb_etmv2_encoder *e)
{
    tb_exec_record r;

    insn(e, 1, 0x1000, 0x1004, TB_WP_NONE, 0);
    xfer(e, 1, 0x1000, 0x20001004, 0xDEADBEEF, false);
    insn(e, 2, 0x1004, 0x2000, TB_WP_INDIRECT, TB_INSN_TAKEN);
    xfer(e, 2, 0x1004, 0x20001008, 0x2000, false);
    insn(e, 3, 0x2000, 0x2004, TB_WP_NONE, TB_INSN_COND_FAILED);
    insn(e, 4, 0x2004, 0x2008, TB_WP_NONE, 0);
    xfer(e, 4, 0x2004, 0x20001100, 0x11, true);
    xfer(e, 4, 0x2004, 0x20001104, 0x22, true);
    memset(&r, 0, sizeof r);
    r.kind = TB_REC_END;
    r.seq = 5;
    r.cycle = 5;
    cr_assert_eq(tb_etmv2_encoder_push(e, &r), 0);
}

/* Expected, 8-bit port, addresses and values (ETMCR[3:2] = 11):
 *   TFO (trace on before the first instruction, 6.5.1), value 0:
 *     01 00 10 00 00 (U2 header RR = 01, address LSB first U7);
 *   0x1000 DE: 2E, full address (first since the TFO, 6.4.2)
 *     84 A0 80 80 02, value EF BE AD DE;
 *   0x1004 DE: AE (C: the branch address follows, 6.4.1), address 08
 *     (0x20001008 against 0x20001004: A[6:0] only), value 00 20 00 00,
 *     branch 0x2000 against the TFO's 0x1000 (6.7.1): 81 20;
 *   0x2000 IN: no packets (a failed instruction has no data);
 *   0x2004 DE: AE, address 80 22 (0x20001100 against 0x20001008 differs
 *     in A[8]: two groups, A[6:0] = 0 with C, A[13:7] = 0x22), value
 *     11 00 00 00; then 0E (C = 0, A = 0, SS = 11), value 22 00 00 00.
 * One byte a cycle from the cycle after the TFO's (6.3). */
static const uint8_t enc_fifo[] = {
    0x01, 0x00, 0x10, 0x00, 0x00,
    0x2E, 0x84, 0xA0, 0x80, 0x80, 0x02, 0xEF, 0xBE, 0xAD, 0xDE,
    0xAE, 0x08, 0x00, 0x20, 0x00, 0x00, 0x81, 0x20,
    0xAE, 0x80, 0x22, 0x11, 0x00, 0x00, 0x00, 0x0E, 0x22, 0x00, 0x00, 0x00,
};

Test(etmv2_data_encoder, bytes_from_the_packet_rules)
{
    static const uint8_t ps[] = {TB_ETMV2_DE, TB_ETMV2_DE, TB_ETMV2_IN, TB_ETMV2_DE};
    tb_etmv2_encoder_opts o;
    tb_etmv2_encoder *e;
    static sbuf got;
    size_t i;

    tb_etmv2_encoder_opts_init(&o);
    o.port_width = 8;
    o.base.sync_period = 0;
    o.base.data_trace = 3;
    got.n = 0;
    cr_assert_not_null(e = tb_etmv2_encoder_new(&o, on_samples, &got));
    program(e);
    tb_etmv2_encoder_free(e);
    cr_assert_eq(got.n, 1 + sizeof enc_fifo, "%zu samples", got.n);
    cr_assert_eq(got.s[0].pipestat, TB_ETMV2_TD);
    cr_assert_eq(got.s[0].tracepkt, 0x01);
    for (i = 0; i < sizeof enc_fifo; i++) {
        cr_assert_eq(got.s[1 + i].pipestat, i < 4 ? ps[i] : TB_ETMV2_WT, "cycle %zu", 1 + i);
        cr_assert_eq(got.s[1 + i].tracepkt, enc_fifo[i], "cycle %zu: 0x%x", 1 + i,
                     got.s[1 + i].tracepkt);
    }
}

/* Address only (ETMCR[3:2] = 10): one packet an instruction, SS = 00:
 * 22 84 A0 80 80 02 | A2 08 81 20 | 22 80 22. */
Test(etmv2_data_encoder, address_only)
{
    static const uint8_t fifo[] = {0x01, 0x00, 0x10, 0x00, 0x00, 0x22, 0x84, 0xA0, 0x80,
                                   0x80, 0x02, 0xA2, 0x08, 0x81, 0x20, 0x22, 0x80, 0x22};
    tb_etmv2_encoder_opts o;
    tb_etmv2_encoder *e;
    static sbuf got;
    size_t i;

    tb_etmv2_encoder_opts_init(&o);
    o.port_width = 8;
    o.base.sync_period = 0;
    o.base.data_trace = 2;
    got.n = 0;
    cr_assert_not_null(e = tb_etmv2_encoder_new(&o, on_samples, &got));
    program(e);
    tb_etmv2_encoder_free(e);
    cr_assert_eq(got.n, 1 + sizeof fifo, "%zu samples", got.n);
    for (i = 0; i < sizeof fifo; i++)
        cr_assert_eq(got.s[1 + i].tracepkt, fifo[i], "cycle %zu: 0x%x", 1 + i,
                     got.s[1 + i].tracepkt);
}

/* ViewData (dataview=, 6.4.4 partial LSM tracing), addresses and values
 * on an 8-bit port.  The loads at 0x20001004/8 are outside: 0x1000 is IE,
 * 0x1004 DE with its branch address alone (81 20).  The STM's two words:
 *   view 0x20001100-4: its first traced, full address (first since the
 *     TFO) AE 80 A2 80 80 02, value 11 00 00 00, then Value Not Traced,
 *     the header alone: 6A (C = 0, Table 6.2 bC1101010);
 *   view 0x20001104-8: the first word before any traced one sends nothing,
 *     the second is the first packet, with A: 2E 84 A2 80 80 02, value
 *     22 00 00 00. */
Test(etmv2_data_encoder, partial_lsm_value_not_traced)
{
    static const uint8_t vnt[] = {0x01, 0x00, 0x10, 0x00, 0x00, 0x81, 0x20, 0xAE, 0x80,
                                  0xA2, 0x80, 0x80, 0x02, 0x11, 0x00, 0x00, 0x00, 0x6A};
    static const uint8_t skip[] = {0x01, 0x00, 0x10, 0x00, 0x00, 0x81, 0x20, 0x2E, 0x84,
                                   0xA2, 0x80, 0x80, 0x02, 0x22, 0x00, 0x00, 0x00};
    static const struct {
        uint32_t lo;
        const uint8_t *fifo;
        size_t n;
    } cases[] = {{0x20001100, vnt, sizeof vnt}, {0x20001104, skip, sizeof skip}};
    static const uint8_t ps[] = {TB_ETMV2_IE, TB_ETMV2_DE, TB_ETMV2_IN, TB_ETMV2_DE};
    static sbuf got;

    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        tb_etmv2_encoder_opts o;
        tb_etmv2_encoder *e;
        size_t i;

        tb_etmv2_encoder_opts_init(&o);
        o.port_width = 8;
        o.base.sync_period = 0;
        o.base.data_trace = 3;
        o.base.n_dranges = 1;
        o.base.dranges[0].lo = cases[c].lo;
        o.base.dranges[0].hi = cases[c].lo + 4;
        got.n = 0;
        cr_assert_not_null(e = tb_etmv2_encoder_new(&o, on_samples, &got));
        program(e);
        tb_etmv2_encoder_free(e);
        cr_assert_eq(got.n, 1 + cases[c].n, "case %zu: %zu samples", c, got.n);
        for (i = 0; i + 1 < got.n; i++) {
            cr_assert_eq(got.s[1 + i].pipestat, i < 4 ? ps[i] : TB_ETMV2_WT,
                         "case %zu cycle %zu", c, 1 + i);
        }
        /* The FIFO bytes in order, one a cycle from the TFO cycle's next
         * (the TFO packet's five bytes first). */
        for (i = 0; i < cases[c].n; i++)
            cr_assert_eq(got.s[1 + i].tracepkt, cases[c].fifo[i], "case %zu cycle %zu: 0x%x",
                         c, 1 + i, got.s[1 + i].tracepkt);
    }
}

/* Load misses (ooo=1, docs/etmv2.md M12), 8-bit port, addresses and
 * values: the LDR at 0x1000 (a single load, not a branch) misses: Load
 * Miss occurred with tag 1 (U9: the lowest free), A and its address,
 * bC1A1TT00 = 0x74, then 84 A0 80 80 02 and no value; its data goes with
 * the next status (0x1004's), first: Load Miss data bCTT0SS00 with C =
 * 0xAC, EF BE AD DE; then 0x1004's own packets as without misses (the
 * LDR pc is a branch: no miss): AE 08 00 20 00 00 81 20; the rest as in
 * bytes_from_the_packet_rules (stores never miss). */
static const uint8_t miss_fifo[] = {
    0x01, 0x00, 0x10, 0x00, 0x00, 0x74, 0x84, 0xA0, 0x80, 0x80, 0x02,
    0xAC, 0xEF, 0xBE, 0xAD, 0xDE, 0xAE, 0x08, 0x00, 0x20, 0x00, 0x00, 0x81, 0x20,
    0xAE, 0x80, 0x22, 0x11, 0x00, 0x00, 0x00, 0x0E, 0x22, 0x00, 0x00, 0x00,
};

Test(etmv2_data_encoder, load_miss)
{
    static const uint8_t ps[] = {TB_ETMV2_DE, TB_ETMV2_DE, TB_ETMV2_IN, TB_ETMV2_DE};
    tb_etmv2_encoder_opts o;
    tb_etmv2_encoder *e;
    static sbuf got;
    size_t i;

    tb_etmv2_encoder_opts_init(&o);
    o.port_width = 8;
    o.base.sync_period = 0;
    o.base.data_trace = 3;
    o.base.ooo_latency = 1;
    got.n = 0;
    cr_assert_not_null(e = tb_etmv2_encoder_new(&o, on_samples, &got));
    program(e);
    tb_etmv2_encoder_free(e);
    cr_assert_eq(got.n, 1 + sizeof miss_fifo, "%zu samples", got.n);
    for (i = 0; i < sizeof miss_fifo; i++) {
        cr_assert_eq(got.s[1 + i].pipestat, i < 4 ? ps[i] : TB_ETMV2_WT, "cycle %zu", 1 + i);
        cr_assert_eq(got.s[1 + i].tracepkt, miss_fifo[i], "cycle %zu: 0x%x", 1 + i,
                     got.s[1 + i].tracepkt);
    }
}

/* ---- decoder: the hand-made samples above -> elements ---- */

typedef struct ebuf {
    tb_element e[64];
    size_t n;
} ebuf;

static int on_elem(void *ctx, const tb_element *el)
{
    ebuf *b = ctx;

    cr_assert_lt(b->n, 64);
    b->e[b->n++] = *el;
    return 0;
}

static void decode_fifo(const uint8_t *fifo, size_t nf, const uint8_t *ps, uint8_t dt, bool ca,
                        ebuf *out)
{
    tb_etmv2_sample s[64];
    static pbuf pk;
    tb_etmv2_config c;
    tb_memimage *m = tb_memimage_new();
    tb_etmv2_decoder *d;
    size_t i, n = 0;

    for (i = 0; i < 4; i++) {
        uint8_t b[4] = {(uint8_t)prog_op[i], (uint8_t)(prog_op[i] >> 8),
                        (uint8_t)(prog_op[i] >> 16), (uint8_t)(prog_op[i] >> 24)};

        cr_assert_eq(tb_memimage_add(m, prog_addr[i], b, 4), 0);
    }
    s[n++] = (tb_etmv2_sample){TB_ETMV2_TD, 0, 0x01};
    cr_assert_lt(nf, 63);
    for (i = 0; i < nf; i++)
        s[n++] = (tb_etmv2_sample){i < 4 ? ps[i] : TB_ETMV2_WT, 0, fifo[i]};
    cfg_data(&c, 8, dt);
    c.cycle_accurate = ca;
    parse(&c, s, n, &pk);
    cr_assert_not_null(d = tb_etmv2_decoder_new(&c, m));
    memset(out, 0, sizeof *out);
    for (i = 0; i < pk.n; i++)
        cr_assert_geq(tb_etmv2_decoder_packet(d, &pk.p[i], on_elem, out), 0);
    cr_assert_geq(tb_etmv2_decoder_finish(d, on_elem, out), 0);
    tb_etmv2_decoder_free(d);
    tb_memimage_free(m);
}

static void decode(uint8_t dt, bool ca, ebuf *out)
{
    static const uint8_t ps[] = {TB_ETMV2_DE, TB_ETMV2_DE, TB_ETMV2_IN, TB_ETMV2_DE};

    decode_fifo(enc_fifo, sizeof enc_fifo, ps, dt, ca, out);
}

static void check_data(const tb_element *el, uint32_t insn_addr, uint32_t addr, uint32_t value,
                       bool store)
{
    cr_assert_eq(el->kind, TB_ELEM_DATA, "kind %d", el->kind);
    cr_assert_eq(el->last_addr, insn_addr, "0x%x", el->last_addr);
    cr_assert_eq(el->data_size, 4);
    cr_assert_eq(el->data_addr, addr, "0x%x", el->data_addr);
    cr_assert_eq(el->data_value, value, "0x%x", el->data_value);
    cr_assert_eq(!!(el->data_flags & TB_DATA_STORE), store);
    cr_assert_eq(el->data_flags & (TB_DATA_NO_ADDR | TB_DATA_NO_VALUE), 0);
}

/* Elements in order: each range ends with its data instruction, whose
 * DATA elements follow it (the STM's two: address + 4, mem_op.c). */
Test(etmv2_data_decoder, elements_from_hand_made_samples)
{
    for (int ca = 0; ca < 2; ca++) {
        static ebuf b;
        size_t i = 0;

        decode(3, ca, &b);
        cr_assert_eq(b.e[i++].kind, TB_ELEM_NO_SYNC);
        cr_assert_eq(b.e[i++].kind, TB_ELEM_TRACE_ON);
        cr_assert_eq(b.e[i].kind, TB_ELEM_INSN_RANGE);
        cr_assert_eq(b.e[i].start, 0x1000);
        cr_assert_eq(b.e[i++].count, 1);
        check_data(&b.e[i++], 0x1000, 0x20001004, 0xDEADBEEF, false);
        cr_assert_eq(b.e[i].kind, TB_ELEM_INSN_RANGE);
        cr_assert_eq(b.e[i++].start, 0x1004);
        check_data(&b.e[i++], 0x1004, 0x20001008, 0x2000, false);
        cr_assert_eq(b.e[i].kind, TB_ELEM_INSN_RANGE);
        cr_assert_eq(b.e[i].start, 0x2000);
        cr_assert_eq(b.e[i].count, 2);
        cr_assert_eq(b.e[i++].atom_bits, 1); /* the STRBNE failed */
        check_data(&b.e[i++], 0x2004, 0x20001100, 0x11, true);
        check_data(&b.e[i++], 0x2004, 0x20001104, 0x22, true);
        cr_assert_eq(b.e[i++].kind, TB_ELEM_END);
        cr_assert_eq(b.n, i, "ca %d: %zu elements", ca, b.n);
    }
}

/* The load miss capture above: the miss is a DATA element with its
 * transfer's address, no value and tag 1 (reason) after its range; its
 * value comes as the same transfer flagged out of order with the next
 * status's packets, before that status's own data (M12). */
Test(etmv2_data_decoder, load_miss_elements)
{
    static const uint8_t ps[] = {TB_ETMV2_DE, TB_ETMV2_DE, TB_ETMV2_IN, TB_ETMV2_DE};
    static ebuf b;
    size_t i = 0;

    decode_fifo(miss_fifo, sizeof miss_fifo, ps, 3, false, &b);
    cr_assert_eq(b.e[i++].kind, TB_ELEM_NO_SYNC);
    cr_assert_eq(b.e[i++].kind, TB_ELEM_TRACE_ON);
    cr_assert_eq(b.e[i].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(b.e[i++].start, 0x1000);
    cr_assert_eq(b.e[i].kind, TB_ELEM_DATA);
    cr_assert_eq(b.e[i].last_addr, 0x1000);
    cr_assert_eq(b.e[i].data_addr, 0x20001004);
    cr_assert_eq(b.e[i].reason, 1);
    cr_assert_eq(b.e[i++].data_flags, TB_DATA_NO_VALUE);
    /* The LDR pc's range closes at its status (an indirect branch). */
    cr_assert_eq(b.e[i].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(b.e[i++].start, 0x1004);
    cr_assert_eq(b.e[i].kind, TB_ELEM_DATA);
    cr_assert_eq(b.e[i].last_addr, 0x1000);
    cr_assert_eq(b.e[i].data_addr, 0x20001004);
    cr_assert_eq(b.e[i].reason, 1);
    cr_assert_eq(b.e[i].data_value, 0xDEADBEEF);
    cr_assert_eq(b.e[i++].data_flags, TB_DATA_OOO);
    check_data(&b.e[i++], 0x1004, 0x20001008, 0x2000, false);
    cr_assert_eq(b.e[i++].start, 0x2000);
    check_data(&b.e[i++], 0x2004, 0x20001100, 0x11, true);
    check_data(&b.e[i++], 0x2004, 0x20001104, 0x22, true);
    cr_assert_eq(b.e[i++].kind, TB_ELEM_END);
    cr_assert_eq(b.n, i, "%zu elements", b.n);
}

/* A data packet the instruction cannot own: the decoder says so (no
 * guess).  The same samples read with the image's 0x1000 a MOV. */
Test(etmv2_data_decoder, packet_for_no_data_instruction)
{
    static const uint8_t ps[] = {TB_ETMV2_DE, TB_ETMV2_DE, TB_ETMV2_IN, TB_ETMV2_DE};
    tb_etmv2_sample s[64];
    static pbuf pk;
    static ebuf out;
    tb_etmv2_config c;
    tb_memimage *m = tb_memimage_new();
    static const uint8_t mov[4] = {0x00, 0x00, 0xA0, 0xE1};
    tb_etmv2_decoder *d;
    size_t i, n = 0;
    bool lost = false;

    cr_assert_eq(tb_memimage_add(m, 0x1000, mov, 4), 0);
    s[n++] = (tb_etmv2_sample){TB_ETMV2_TD, 0, 0x01};
    for (i = 0; i < sizeof enc_fifo; i++)
        s[n++] = (tb_etmv2_sample){i < 4 ? ps[i] : TB_ETMV2_WT, 0, enc_fifo[i]};
    cfg_data(&c, 8, 3);
    parse(&c, s, n, &pk);
    cr_assert_not_null(d = tb_etmv2_decoder_new(&c, m));
    out.n = 0;
    for (i = 0; i < pk.n; i++)
        cr_assert_geq(tb_etmv2_decoder_packet(d, &pk.p[i], on_elem, &out), 0);
    cr_assert_geq(tb_etmv2_decoder_finish(d, on_elem, &out), 0);
    for (i = 0; i < out.n; i++) {
        cr_assert_neq(out.e[i].kind, TB_ELEM_DATA);
        lost |= out.e[i].kind == TB_ELEM_NO_SYNC && out.e[i].reason == TB_GAP_INCONSISTENT;
    }
    cr_assert(lost);
    tb_etmv2_decoder_free(d);
    tb_memimage_free(m);
}
