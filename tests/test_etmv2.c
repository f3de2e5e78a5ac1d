/*
 * ETMv2 trace port (docs/etmv2.md): hand-made captures whose expected
 * packets come from IHI0014Q chapter 6 (Table 6.9 branch bytes, 6.5.4 TFO
 * packet, 6.1.6 TD/TFO, 6.1.7 trigger), with the PIPESTAT codes and TFO
 * header bytes of the unverified table (etmv2.h U1/U2: the tests name
 * them by constant, so they follow the table); the bad-input paths; and
 * chunking invariance.  Round trips against the emulator's ground truth
 * are in test_roundtrip_etmv2.c.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../decoder/protocols.h"
#include "../encoder/port_encoders.h"
#include "tb_test.h"
#include "tracebench/etmv2.h"

typedef struct pbuf {
    tb_packet p[8192];
    size_t n;
} pbuf;

static int on_packet(void *ctx, const tb_packet *p)
{
    pbuf *b = ctx;

    if (b->n < 8192)
        b->p[b->n++] = *p;
    return 0;
}

static tb_etmv2_sample S(uint8_t ps, uint16_t pkt)
{
    tb_etmv2_sample s = {ps, 0, pkt};
    return s;
}

static void cfg_port(tb_etmv2_config *c, uint8_t width)
{
    tb_etmv2_config_init(c);
    c->port_width = width;
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

/* 8-bit port: a trace-on TFO (value 0: the FIFO was empty), its packet
 * (header RR = 01, 6.5.4: address 0x00001000, 4 bytes, bit 0 = ARM), then
 * an indirect branch (DE) to 0x2000 and an exception (DW) to the data
 * abort vector with E set.  Branch bytes from Table 6.9 by hand:
 *   0x2000 against 0x1000: A[13:12] changed, byte 1 holds A[7:2], byte 2
 *   A[14:8]: 0x81 (bit 0 = branch, C), 0x20.
 *   0x10 with E: five bytes 0x89 (A[7:2] = 4), 0x80, 0x80, 0x80, and byte
 *   5 = 0E001xxx = 0x48. */
static const tb_etmv2_sample ex_tfo[] = {
    {TB_ETMV2_TD, 0, 0x01},                               /* TFO, value 0 */
    {TB_ETMV2_IE, 0, TB_ETMV2_TFO_HDR_NORMAL | TB_ETMV2_R_TRACE_ON},
    {TB_ETMV2_IE, 0, 0x00},                               /* address LSB first (U7) */
    {TB_ETMV2_DE, 0, 0x10},                               /* 0x1008: the branch */
    {TB_ETMV2_WT, 0, 0x00},
    {TB_ETMV2_DW, 0, 0x00},                               /* the exception */
    {TB_ETMV2_WT, 0, 0x81},                               /* the branch's address */
    {TB_ETMV2_WT, 0, 0x20},
    {TB_ETMV2_WT, 0, 0x89},                               /* the exception's */
    {TB_ETMV2_WT, 0, 0x80},
    {TB_ETMV2_WT, 0, 0x80},
    {TB_ETMV2_WT, 0, 0x80},
    {TB_ETMV2_WT, 0, 0x48},
};

Test(etmv2_parser, tfo_branch_and_exception_bytes)
{
    tb_etmv2_config c;
    pbuf b;

    cfg_port(&c, 8);
    parse(&c, ex_tfo, sizeof ex_tfo / sizeof ex_tfo[0], &b);
    cr_assert_eq(b.n, 4, "%zu packets", b.n);
    cr_assert_eq(b.p[0].kind, TB_PKT_ISYNC);
    cr_assert_eq(b.p[0].index, tb_etmv1_sample_index(0));
    cr_assert_eq(b.p[0].addr, 0x1000);
    cr_assert_eq(b.p[0].isa, TB_ISA_ARM);
    cr_assert_eq(b.p[0].reason, TB_ETMV2_R_TRACE_ON);
    cr_assert_eq(b.p[1].kind, TB_PKT_ATOM);
    cr_assert_str_eq(b.p[1].seq, "EEE"); /* cycles 1-3; the DE's last */
    cr_assert_eq(b.p[2].kind, TB_PKT_BRANCH);
    cr_assert_eq(b.p[2].addr, 0x2000, "0x%x", b.p[2].addr);
    cr_assert_eq(b.p[2].phdr_format, TB_ETMV2_DE);
    cr_assert(!b.p[2].exc_cancel);
    cr_assert_eq(b.p[3].kind, TB_PKT_BRANCH);
    cr_assert_eq(b.p[3].addr, 0x10, "0x%x", b.p[3].addr);
    cr_assert(b.p[3].exc_cancel);
    cr_assert_eq(b.p[3].phdr_format, TB_ETMV2_DW);
}

/* The same bytes on a 4-bit port: the TFO value in two halves (U4), the
 * FIFO a nibble a cycle, low nibble first (as ETMv1, 5.2). */
Test(etmv2_parser, four_bit_port)
{
    static const uint8_t fifo[] = {TB_ETMV2_TFO_HDR_NORMAL | TB_ETMV2_R_TRACE_ON, 0x00, 0x10,
                                   0x00, 0x00, 0x81, 0x20};
    tb_etmv2_sample s[32];
    tb_etmv2_config c;
    size_t n = 0;
    pbuf b;

    cfg_port(&c, 4);
    s[n++] = S(TB_ETMV2_TD, 0x1);  /* value[2:0] = 0 */
    s[n++] = S(TB_ETMV2_IE, 0x1);  /* value[5:3] = 0; the 1st instruction */
    for (size_t i = 0; i < sizeof fifo; i++) {
        uint8_t ps = i == 0 ? TB_ETMV2_DE : TB_ETMV2_WT;

        s[n++] = S(ps, fifo[i] & 0xF);
        s[n++] = S(TB_ETMV2_WT, fifo[i] >> 4);
    }
    parse(&c, s, n, &b);
    cr_assert_eq(b.n, 3, "%zu packets", b.n);
    cr_assert_eq(b.p[0].kind, TB_PKT_ISYNC);
    cr_assert_eq(b.p[0].addr, 0x1000);
    cr_assert_str_eq(b.p[1].seq, "EE");
    cr_assert_eq(b.p[2].kind, TB_PKT_BRANCH);
    cr_assert_eq(b.p[2].addr, 0x2000);
}

/* A trigger (6.1.7) puts the real status on TRACEPKT[3:0] and sends no
 * FIFO data; a phantom status (6.1.2) is two instructions. */
Test(etmv2_parser, trigger_and_phantom)
{
    tb_etmv2_sample s[] = {
        {TB_ETMV2_TD, 0, 0x01},
        {TB_ETMV2_IE, 0, TB_ETMV2_TFO_HDR_NORMAL | TB_ETMV2_R_TRACE_ON},
        {TB_ETMV2_TR, 0, TB_ETMV2_PN | TB_ETMV2_IE}, /* no FIFO byte */
        {TB_ETMV2_IE, 0, 0x00},
        {TB_ETMV2_PT | TB_ETMV2_IN, 0, 0x10},
        {TB_ETMV2_WT, 0, 0x00},
        {TB_ETMV2_WT, 0, 0x00},
    };
    tb_etmv2_config c;
    pbuf b;

    cfg_port(&c, 8);
    parse(&c, s, sizeof s / sizeof s[0], &b);
    cr_assert_eq(b.n, 4, "%zu packets", b.n);
    cr_assert_eq(b.p[0].kind, TB_PKT_ISYNC);
    cr_assert_eq(b.p[0].addr, 0x1000, "0x%x", b.p[0].addr);
    cr_assert_eq(b.p[1].kind, TB_PKT_ATOM);
    cr_assert_str_eq(b.p[1].seq, "E"); /* the status of cycle 1 */
    cr_assert_eq(b.p[2].kind, TB_PKT_TRIGGER);
    cr_assert_eq(b.p[3].kind, TB_PKT_ATOM);
    cr_assert_str_eq(b.p[3].seq, "NEEEN");
}

static void expect_error(uint8_t width, const tb_etmv2_sample *s, size_t n, tb_pkt_kind kind)
{
    tb_etmv2_config c;
    pbuf b;
    size_t i;

    cfg_port(&c, width);
    parse(&c, s, n, &b);
    for (i = 0; i < b.n; i++)
        if (b.p[i].kind == kind)
            return;
    cr_assert_fail("no packet of kind %d among %zu", (int)kind, b.n);
}

Test(etmv2_bad, reserved_and_wrong_width_and_sequences)
{
    /* TR whose status is TR again (6.1.7: no such status). */
    tb_etmv2_sample a[] = {{TB_ETMV2_TR, 0, TB_ETMV2_TR}};
    /* TRACEPKT bits above a 4-bit port. */
    tb_etmv2_sample w[] = {{TB_ETMV2_IE, 0, 0x10}};
    /* TRACESYNC: ETMv2 has none (4.3.1). */
    tb_etmv2_sample t[] = {{TB_ETMV2_IE, 1, 0}};
    /* After sync, a WT with the FIFO empty (6.1.6: that is TD). */
    tb_etmv2_sample e[] = {ex_tfo[0], ex_tfo[1], ex_tfo[2], ex_tfo[2], ex_tfo[2], ex_tfo[2],
                           {TB_ETMV2_WT, 0, 0}};
    /* A periodic TFO whose value disagrees with the bytes held (U6). */
    tb_etmv2_sample v[] = {ex_tfo[0], ex_tfo[1], ex_tfo[2], ex_tfo[2], ex_tfo[2], ex_tfo[2],
                           {TB_ETMV2_DE, 0, 0x81}, {TB_ETMV2_TD, 0, (5 << 1) | 1},
                           {TB_ETMV2_WT, 0, 0x20}, {TB_ETMV2_WT, 0, 0x00}};
    /* A data header without data trace (6.4.1 normal data bC0A0SS10). */
    tb_etmv2_sample d[] = {ex_tfo[0], ex_tfo[1], ex_tfo[2], ex_tfo[2], ex_tfo[2], ex_tfo[2],
                           {TB_ETMV2_DE, 0, 0x02}};
    /* A reserved header (6.4.1 Table 6.2: bX0X1XX10). */
    tb_etmv2_sample h[] = {ex_tfo[0], ex_tfo[1], ex_tfo[2], ex_tfo[2], ex_tfo[2], ex_tfo[2],
                           {TB_ETMV2_DE, 0, 0x12}};
    /* An LSM-in-progress TFO (U3: not read) */
    tb_etmv2_sample l[] = {ex_tfo[0], {TB_ETMV2_IE, 0, TB_ETMV2_TFO_HDR_LSM}};

    expect_error(8, a, 1, TB_PKT_RESERVED);
    expect_error(4, w, 1, TB_PKT_RESERVED);
    expect_error(8, t, 1, TB_PKT_RESERVED);
    expect_error(8, e, sizeof e / sizeof e[0], TB_PKT_BAD_SEQUENCE);
    expect_error(8, v, sizeof v / sizeof v[0], TB_PKT_BAD_SEQUENCE);
    expect_error(8, d, sizeof d / sizeof d[0], TB_PKT_BAD_TRACEMODE);
    expect_error(8, h, sizeof h / sizeof h[0], TB_PKT_RESERVED);
    expect_error(8, l, sizeof l / sizeof l[0], TB_PKT_RESERVED);
    /* A status whose packets never came: INCOMPLETE at the end. */
    expect_error(8, ex_tfo, 6, TB_PKT_INCOMPLETE);
}

/* 6.1.7 (Cihcehhe): with the FIFO empty a trigger shows WT as the status
 * it replaced; TD there means a trigger and a TFO were pending together:
 * "uniquely identifiable as a true TFO".  Where that TFO's value then goes
 * is on a page no copy has ("Trigger considerations"), so the parser must
 * say it cannot read it, not take the cycle for an idle TD as it did. */
Test(etmv2_parser, trigger_over_a_tfo_is_refused)
{
    tb_etmv2_sample ok[] = {ex_tfo[0], ex_tfo[1], ex_tfo[2], ex_tfo[2], ex_tfo[2],
                            ex_tfo[2], {TB_ETMV2_TR, 0, TB_ETMV2_WT}, {TB_ETMV2_IE, 0, 0}};
    tb_etmv2_sample td[] = {ex_tfo[0], ex_tfo[1], ex_tfo[2], ex_tfo[2], ex_tfo[2],
                            ex_tfo[2], {TB_ETMV2_TR, 0, TB_ETMV2_TD}, {TB_ETMV2_IE, 0, 0}};
    tb_etmv2_config c;
    pbuf b;
    size_t i;
    bool trig = false;

    cfg_port(&c, 8);
    parse(&c, ok, sizeof ok / sizeof ok[0], &b);
    for (i = 0; i < b.n; i++) {
        cr_assert_eq(b.p[i].err, 0, "packet %zu kind %d err %d", i, (int)b.p[i].kind,
                     b.p[i].err);
        trig |= b.p[i].kind == TB_PKT_TRIGGER;
    }
    cr_assert(trig);

    parse(&c, td, sizeof td / sizeof td[0], &b);
    for (i = 0; i < b.n; i++)
        if (b.p[i].kind == TB_PKT_RESERVED && b.p[i].err == TB_ERR_UNSUPPORTED)
            break;
    cr_assert_lt(i, b.n, "a TR over TD read as an idle cycle (%zu packets)", b.n);
    cr_assert_eq(b.p[i].index, tb_etmv1_sample_index(6));
    for (i = 0; i < b.n; i++)
        if (b.p[i].kind == TB_PKT_TRIGGER)
            break;
    cr_assert_lt(i, b.n, "the trigger itself was lost");
}

/* IHI0014Q 6.7.1 Table 6.9 (seed 000, page Bhbfbhjh): the fifth byte of a
 * branch address is ARM 0E001xxx (xxx = A[31:29], E = the last traced
 * instruction was cancelled) or Thumb 0001xxxx (A[31:28]); every other
 * value is reserved.  Every last-byte value (bit 7 = 0) after four bytes
 * that carry zero address bits, on an 8-bit port after a TFO at 0x1000. */
Test(etmv2_parser, table_6_9_every_fifth_byte)
{
    for (unsigned v = 0; v < 128; v++) {
        bool arm = (v & 0xB8) == 0x08, thumb = (v & 0xF0) == 0x10;
        tb_etmv2_sample s[] = {ex_tfo[0], ex_tfo[1], ex_tfo[2], {TB_ETMV2_DE, 0, 0x10},
                               ex_tfo[2], ex_tfo[2], {TB_ETMV2_WT, 0, 0x81},
                               {TB_ETMV2_WT, 0, 0x80}, {TB_ETMV2_WT, 0, 0x80},
                               {TB_ETMV2_WT, 0, 0x80}, {TB_ETMV2_WT, 0, (uint16_t)v}};
        tb_etmv2_config c;
        const tb_packet *k = NULL;
        size_t i;
        pbuf b;

        cfg_port(&c, 8);
        parse(&c, s, sizeof s / sizeof s[0], &b);
        for (i = 0; i < b.n && !k; i++)
            if (b.p[i].kind != TB_PKT_ISYNC && b.p[i].kind != TB_PKT_ATOM)
                k = &b.p[i];
        cr_assert_not_null(k, "byte 5 0x%02x: no packet", v);
        if (!arm && !thumb) {
            cr_assert_eq(k->kind, TB_PKT_RESERVED, "byte 5 0x%02x: kind %d", v, (int)k->kind);
            continue;
        }
        cr_assert_eq(k->kind, TB_PKT_BRANCH, "byte 5 0x%02x: kind %d", v, (int)k->kind);
        cr_assert_eq(k->isa, arm ? TB_ISA_ARM : TB_ISA_THUMB, "byte 5 0x%02x", v);
        cr_assert_eq(k->addr, arm ? (uint32_t)(v & 7) << 29 : (uint32_t)(v & 0xF) << 28,
                     "byte 5 0x%02x: 0x%x", v, k->addr);
        cr_assert_eq(k->exc_cancel, arm && (v & 0x40), "byte 5 0x%02x: E", v);
    }
}

/* Nothing before the first TFO (fact sheet 11); a cold start skips the
 * bytes the TFO value counts. */
Test(etmv2_parser, cold_start_skips_the_counted_bytes)
{
    tb_etmv2_sample s[] = {
        {TB_ETMV2_DE, 0, 0x55}, {TB_ETMV2_IE, 0, 0x66},           /* before sync */
        {TB_ETMV2_TD, 0, (2 << 1) | 1},                            /* 2 bytes first */
        {TB_ETMV2_IE, 0, 0x77}, {TB_ETMV2_IN, 0, 0x88},           /* the 2 bytes */
        {TB_ETMV2_WT, 0, TB_ETMV2_TFO_HDR_NORMAL | TB_ETMV2_R_PERIODIC},
        {TB_ETMV2_WT, 0, 0x02}, {TB_ETMV2_WT, 0, 0x30}, {TB_ETMV2_WT, 0, 0x00},
        {TB_ETMV2_WT, 0, 0x00},
    };
    tb_etmv2_config c;
    pbuf b;

    cfg_port(&c, 8);
    parse(&c, s, sizeof s / sizeof s[0], &b);
    cr_assert_eq(b.n, 2, "%zu packets", b.n);
    cr_assert_eq(b.p[0].kind, TB_PKT_ISYNC);
    cr_assert_eq(b.p[0].index, tb_etmv1_sample_index(2));
    cr_assert_eq(b.p[0].reason, TB_ETMV2_R_PERIODIC);
    cr_assert_eq(b.p[0].addr, 0x3000, "0x%x", b.p[0].addr); /* 0x3002: bit 0 = 0 (ARM) */
    cr_assert_str_eq(b.p[1].seq, "EN");
}

Test(etmv2_capture, header_and_truncation)
{
    tb_etmv2_config c, r;
    tb_etmv1_config v1;
    uint8_t h[16], h1[16], smp[4];
    tb_etmv2_parser *p;
    pbuf b = {0};

    cfg_port(&c, 16);
    c.ctxid_bytes = 4;
    tb_etmv2_capture_header(&c, h);
    cr_assert_eq(h[9], 2); /* protocol 2 = ETMv2 (docs/etmv1.md 2) */
    cr_assert_eq(h[11], 16);
    tb_etmv2_config_init(&r);
    cr_assert_eq(tb_etmv2_capture_parse_header(h, &r), 0);
    cr_assert_eq(r.port_width, 16);
    cr_assert_eq(r.ctxid_bytes, 4);
    /* An ETMv1 header is not an ETMv2 one, nor the other way round. */
    tb_etmv1_config_init(&v1);
    tb_etmv1_capture_header(&v1, h1);
    cr_assert_eq(tb_etmv2_capture_parse_header(h1, &r), TB_ERR_FORMAT);
    cr_assert_eq(tb_etmv1_capture_parse_header(h, &v1), TB_ERR_FORMAT);
    /* A capture cut inside its header, then inside a sample. */
    p = tb_etmv2_parser_new(NULL);
    cr_assert_geq(tb_etmv2_parser_push(p, h, 10, 0, on_packet, &b), 0);
    cr_assert_geq(tb_etmv2_parser_finish(p, on_packet, &b), 0);
    cr_assert_eq(b.n, 1);
    cr_assert_eq(b.p[0].kind, TB_PKT_INCOMPLETE);
    tb_etmv2_parser_reset(p);
    b.n = 0;
    tb_etmv1_sample_pack(&ex_tfo[0], smp);
    cr_assert_geq(tb_etmv2_parser_push(p, h, 16, 0, on_packet, &b), 0);
    cr_assert_geq(tb_etmv2_parser_push(p, smp, 3, 16, on_packet, &b), 0);
    cr_assert_geq(tb_etmv2_parser_finish(p, on_packet, &b), 0);
    cr_assert_eq(b.n, 1);
    cr_assert_eq(b.p[0].kind, TB_PKT_INCOMPLETE);
    cr_assert_eq(b.p[0].err, TB_ERR_TRUNCATED);
    tb_etmv2_parser_free(p);
    /* A parser given a configuration refuses a header that differs. */
    cfg_port(&r, 8);
    p = tb_etmv2_parser_new(&r);
    cr_assert_eq(tb_etmv2_parser_push(p, h, 16, 0, on_packet, &b), TB_ERR_MISMATCH);
    tb_etmv2_parser_free(p);
}

/* ---- encoder -> capture: chunking invariance and the statuses used ---- */

/* A loop of a conditional direct branch (a phantom candidate, U18), an
 * indirect return, an exception, a context change. */
static void records(tb_etmv2_encoder *e)
{
    tb_exec_record r;
    uint64_t cyc = 0, seq = 0;

    for (int i = 0; i < 400; i++) {
        memset(&r, 0, sizeof r);
        r.kind = TB_REC_INSN;
        r.seq = ++seq;
        r.cycle = cyc += 1;
        r.u.insn.addr = 0x1000;
        r.u.insn.size = 4;
        r.u.insn.next_addr = 0x1004;
        cr_assert_eq(tb_etmv2_encoder_push(e, &r), 0);
        r.seq = ++seq;
        r.cycle = cyc += 3;
        r.u.insn.addr = 0x1004;
        r.u.insn.wp_class = TB_WP_DIRECT;
        r.u.insn.flags = (i % 3) ? TB_INSN_TAKEN : TB_INSN_COND_FAILED;
        r.u.insn.next_addr = (i % 3) ? 0x1010 : 0x1008;
        cr_assert_eq(tb_etmv2_encoder_push(e, &r), 0);
        r.seq = ++seq;
        r.cycle = cyc += 1;
        r.u.insn.addr = r.u.insn.next_addr;
        r.u.insn.wp_class = TB_WP_INDIRECT;
        r.u.insn.flags = TB_INSN_TAKEN;
        r.u.insn.next_addr = 0x1000 + 0x100 * (unsigned)(i % 7);
        r.u.insn.next_addr = 0x1000;
        cr_assert_eq(tb_etmv2_encoder_push(e, &r), 0);
        if (i % 50 == 7) {
            memset(&r, 0, sizeof r);
            r.kind = TB_REC_EXCEPTION;
            r.seq = ++seq;
            r.cycle = cyc += 3;
            r.u.exc.kind = TB_EXC_IRQ;
            r.u.exc.vector = 0x18;
            r.u.exc.pref_return = 0x1000;
            cr_assert_eq(tb_etmv2_encoder_push(e, &r), 0);
        }
    }
    memset(&r, 0, sizeof r);
    r.kind = TB_REC_END;
    r.seq = ++seq;
    r.cycle = cyc;
    cr_assert_eq(tb_etmv2_encoder_push(e, &r), 0);
}

static void capture(uint8_t width, unsigned sync, tb_test_bytes *b)
{
    tb_etmv2_encoder_opts o;
    tb_etmv2_encoder *e;

    tb_etmv2_encoder_opts_init(&o);
    o.port_width = width;
    o.base.sync_period = sync;
    memset(b, 0, sizeof *b);
    e = tb_etmv2_encoder_new_bytes(&o, tb_test_bytes_sink, b);
    cr_assert_not_null(e);
    records(e);
    tb_etmv2_encoder_free(e);
}

Test(etmv2_parser, chunking_invariance_and_statuses)
{
    static const uint8_t widths[] = {4, 8, 16};

    for (size_t w = 0; w < 3; w++) {
        tb_test_bytes cap;
        static pbuf whole, cut;
        bool phantom = false, tfo = false, dw = false;

        capture(widths[w], 64, &cap);
        for (size_t off = 16; off + 4 <= cap.n; off += 4) {
            tb_etmv1_sample s;

            cr_assert_eq(tb_etmv1_sample_unpack(cap.d + off, &s), 0);
            phantom |= s.pipestat >= TB_ETMV2_PT;
            tfo |= s.pipestat == TB_ETMV2_TD && (s.tracepkt & 1);
            dw |= s.pipestat == TB_ETMV2_DW;
        }
        cr_assert(phantom && tfo && dw, "port %u: phantom %d tfo %d dw %d", widths[w],
                  phantom, tfo, dw);
        for (size_t chunk = 1; chunk <= 7; chunk += 3) {
            tb_etmv2_parser *p = tb_etmv2_parser_new(NULL), *q = tb_etmv2_parser_new(NULL);

            whole.n = cut.n = 0;
            cr_assert_geq(tb_etmv2_parser_push(p, cap.d, cap.n, 0, on_packet, &whole), 0);
            cr_assert_geq(tb_etmv2_parser_finish(p, on_packet, &whole), 0);
            for (size_t at = 0; at < cap.n; at += chunk) {
                size_t k = cap.n - at < chunk ? cap.n - at : chunk;

                cr_assert_geq(tb_etmv2_parser_push(q, cap.d + at, k, at, on_packet, &cut), 0);
            }
            cr_assert_geq(tb_etmv2_parser_finish(q, on_packet, &cut), 0);
            cr_assert_eq(whole.n, cut.n);
            cr_assert_gt(whole.n, 10);
            for (size_t i = 0; i < whole.n; i++) {
                cr_assert_eq(whole.p[i].kind, cut.p[i].kind, "packet %zu", i);
                cr_assert(whole.p[i].kind < TB_PKT_RESERVED, "packet %zu: error %d", i,
                          (int)whole.p[i].kind);
                cr_assert_eq(whole.p[i].index, cut.p[i].index);
                cr_assert_eq(whole.p[i].addr, cut.p[i].addr);
            }
            tb_etmv2_parser_free(p);
            tb_etmv2_parser_free(q);
        }
        free(cap.d);
    }
}

/* A full FIFO on the slowest port: 1-cycle indirect branches far apart
 * (5-byte addresses) fill 4096 bytes, many hundreds of packet groups the
 * parser must hold (etmv2_parser.c GMAX); then the overflow restart. */
Test(etmv2_parser, full_fifo_on_a_4_bit_port)
{
    tb_etmv2_encoder_opts o;
    tb_etmv2_encoder *e;
    tb_exec_record r;
    tb_test_bytes cap = {0};
    static pbuf got;
    tb_etmv2_parser *p;
    unsigned isyncs = 0, branches = 0;

    tb_etmv2_encoder_opts_init(&o);
    o.port_width = 4;
    o.base.sync_period = 0;
    e = tb_etmv2_encoder_new_bytes(&o, tb_test_bytes_sink, &cap);
    cr_assert_not_null(e);
    for (unsigned i = 0; i < 20000; i++) {
        memset(&r, 0, sizeof r);
        r.kind = TB_REC_INSN;
        r.seq = i + 1;
        r.cycle = i + 1;
        r.u.insn.addr = (i & 1) ? 0x80000000u : 0x1000;
        r.u.insn.size = 4;
        r.u.insn.wp_class = TB_WP_INDIRECT;
        r.u.insn.flags = TB_INSN_TAKEN;
        r.u.insn.next_addr = (i & 1) ? 0x1000 : 0x80000000u;
        cr_assert_eq(tb_etmv2_encoder_push(e, &r), 0);
    }
    cr_assert_eq(tb_etmv2_encoder_finish(e), 0);
    cr_assert_gt(tb_etmv2_encoder_get_stats(e)->overflows, 0);
    tb_etmv2_encoder_free(e);
    p = tb_etmv2_parser_new(NULL);
    got.n = 0;
    cr_assert_geq(tb_etmv2_parser_push(p, cap.d, cap.n, 0, on_packet, &got), 0);
    cr_assert_geq(tb_etmv2_parser_finish(p, on_packet, &got), 0);
    tb_etmv2_parser_free(p);
    for (size_t i = 0; i < got.n; i++) {
        cr_assert(got.p[i].kind < TB_PKT_RESERVED, "packet %zu: kind %d", i,
                  (int)got.p[i].kind);
        isyncs += got.p[i].kind == TB_PKT_ISYNC;
        branches += got.p[i].kind == TB_PKT_BRANCH;
    }
    cr_assert_geq(isyncs, 2); /* trace on, then the overflow restart */
    /* The FIFO held hundreds of branch packets (the comment above): the
     * parser gave them all back. */
    cr_assert_gt(branches, 300, "%u branch packets", branches);
    free(cap.d);
}

/* ---- cycle-accurate counts around exceptions, markers and the end
 *      (issue 23; docs/etmv2.md 5) ---- */

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

/* 0x8000 MOV r0, r0; 0x8004 LDR r1, [r4]; MOV r0, r0 at the vectors
 * 0x10 (data abort), 0x18 (IRQ), 0x1C (FIQ), at 0x20 and at 0x8008. */
static tb_memimage *ca_image(void)
{
    tb_memimage *m = tb_memimage_new();

    cr_assert_not_null(m);
    tb_test_image_word(m, 0x8000, 0xE1A00000);
    tb_test_image_word(m, 0x8004, 0xE5941000);
    tb_test_image_word(m, 0x8008, 0xE1A00000);
    tb_test_image_word(m, 0x10, 0xE1A00000);
    tb_test_image_word(m, 0x18, 0xE1A00000);
    tb_test_image_word(m, 0x1C, 0xE1A00000);
    tb_test_image_word(m, 0x20, 0xE1A00000);
    return m;
}

/* ctxid: context ID bytes (ETMCR[15:14]); ca: cycle-accurate. */
static void port_decode(const tb_etmv2_sample *s, size_t n, bool ca, uint8_t ctxid,
                        ebuf *out)
{
    static pbuf pk;
    tb_etmv2_config c;
    tb_memimage *m = ca_image();
    tb_etmv2_decoder *d;
    size_t i;

    cfg_port(&c, 8);
    c.cycle_accurate = ca;
    c.ctxid_bytes = ctxid;
    parse(&c, s, n, &pk);
    cr_assert_not_null(d = tb_etmv2_decoder_new(&c, m));
    memset(out, 0, sizeof *out);
    for (i = 0; i < pk.n; i++)
        cr_assert_geq(tb_etmv2_decoder_packet(d, &pk.p[i], on_elem, out), 0);
    cr_assert_geq(tb_etmv2_decoder_finish(d, on_elem, out), 0);
    tb_etmv2_decoder_free(d);
    tb_memimage_free(m);
}

static void ca_decode(const tb_etmv2_sample *s, size_t n, ebuf *out)
{
    port_decode(s, n, true, 0, out);
}

/* 8-bit port, CA: a trace-on TFO (value 0; packet 01, 0x8000 LSB first),
 * the MOV at 0x8000, an IRQ (DW, 6.7.1: 0x18 against the TFO's 0x8000
 * differs in A[15]: three bytes 8D 80 00) and an FIQ taken back to back
 * at the IRQ vector (DW: 0x1C against 0x18, one byte 0F), each entry 3
 * cycles, then the MOVs at 0x1C and 0x20.  One byte a cycle from the
 * cycle a packet is placed (6.3):
 *   0 TD 01 | 1 IE 01 | 2 DW 00 | 3 WT 80 | 4 WT 00 | 5 DW 00 | 6 WT 8D
 *   7 WT 80 | 8 IE 00 | 9 IE 0F
 * Counts from a status to the next (docs/etmv2.md 5): the range 1, each
 * exception its DW and two waits, 3; the last range 2, kept as nothing
 * follows its statuses, unknown (has_cc false) with a TD after them, which
 * may be trace off (6.1.6). */
static const tb_etmv2_sample exc_ca[] = {
    {TB_ETMV2_TD, 0, 0x01}, {TB_ETMV2_IE, 0, TB_ETMV2_TFO_HDR_NORMAL | TB_ETMV2_R_TRACE_ON},
    {TB_ETMV2_DW, 0, 0x00}, {TB_ETMV2_WT, 0, 0x80}, {TB_ETMV2_WT, 0, 0x00},
    {TB_ETMV2_DW, 0, 0x00}, {TB_ETMV2_WT, 0, 0x8D}, {TB_ETMV2_WT, 0, 0x80},
    {TB_ETMV2_IE, 0, 0x00}, {TB_ETMV2_IE, 0, 0x0F}, {TB_ETMV2_TD, 0, 0x00},
};

Test(etmv2_cycles, exception_dw_cycles_are_its_own_back_to_back)
{
    static ebuf el;
    size_t n = sizeof exc_ca / sizeof exc_ca[0];
    unsigned pass;

    for (pass = 0; pass < 2; pass++) { /* without, then with the last TD */
        ca_decode(exc_ca, n - 1 + pass, &el);
        /* NO_SYNC TRACE_ON RANGE EXCEPTION EXCEPTION RANGE END */
        cr_assert_eq(el.n, 7, "%zu elements", el.n);
        cr_assert_eq(el.e[2].kind, TB_ELEM_INSN_RANGE);
        cr_assert_eq(el.e[2].start, 0x8000);
        cr_assert(el.e[2].has_cc);
        cr_assert_eq(el.e[2].cc, 1);
        cr_assert_eq(el.e[3].kind, TB_ELEM_EXCEPTION);
        cr_assert_eq(el.e[3].exc_num, tb_exc_trace_number(TB_EXC_IRQ));
        cr_assert_eq(el.e[3].pref_return, 0x8004);
        cr_assert(el.e[3].has_cc, "the IRQ's DW and wait cycles belong to no element");
        cr_assert_eq(el.e[3].cc, 3);
        cr_assert_eq(el.e[4].kind, TB_ELEM_EXCEPTION);
        cr_assert_eq(el.e[4].exc_num, tb_exc_trace_number(TB_EXC_FIQ));
        cr_assert_eq(el.e[4].pref_return, 0x18);
        cr_assert(el.e[4].has_cc);
        cr_assert_eq(el.e[4].cc, 3);
        cr_assert_eq(el.e[5].start, 0x1C);
        cr_assert_eq(el.e[5].count, 2);
        if (pass == 0) {
            cr_assert(el.e[5].has_cc);
            cr_assert_eq(el.e[5].cc, 2);
        } else {
            cr_assert(!el.e[5].has_cc, "a TD after the last status counted: %u", el.e[5].cc);
        }
        cr_assert_eq(el.e[6].kind, TB_ELEM_END);
    }
}

/* A data abort cancels the LDR at 0x8004 (2 cycles): its IE was traced
 * and the DW's branch to 0x10 carries E (6.7.1: five bytes 89 80 80 80
 * 48), then the handler's MOV, trace off and a trace-on TFO (value 0)
 * back at 0x8000:
 *   0 TD 01 | 1 IE 01 | 2 IE 00 | 3 WT 80 | 4 DW 00 | 5 WT 00 | 6 WT 89
 *   7 IE 80 (0x10) | 8 WT 80 | 9 WT 80 | 10 WT 48 | 11 TD 01 (TFO)
 *   12 IE 01 (0x8000) | 13-16 WT 00 80 00 00
 * The EXCEPTION counts the cancelled LDR's cycles and its own, 2 + 3 (as
 * an ETMv1 aborted load/store, docs/etmv1.md 6 M6); the handler's range
 * before the marker and the last range before the end have WTs after
 * their status that may be the FIFO draining with trace off: unknown. */
static const tb_etmv2_sample abort_ca[] = {
    {TB_ETMV2_TD, 0, 0x01}, {TB_ETMV2_IE, 0, TB_ETMV2_TFO_HDR_NORMAL | TB_ETMV2_R_TRACE_ON},
    {TB_ETMV2_IE, 0, 0x00}, {TB_ETMV2_WT, 0, 0x80}, {TB_ETMV2_DW, 0, 0x00},
    {TB_ETMV2_WT, 0, 0x00}, {TB_ETMV2_WT, 0, 0x89}, {TB_ETMV2_IE, 0, 0x80},
    {TB_ETMV2_WT, 0, 0x80}, {TB_ETMV2_WT, 0, 0x80}, {TB_ETMV2_WT, 0, 0x48},
    {TB_ETMV2_TD, 0, 0x01}, {TB_ETMV2_IE, 0, TB_ETMV2_TFO_HDR_NORMAL | TB_ETMV2_R_TRACE_ON},
    {TB_ETMV2_WT, 0, 0x00}, {TB_ETMV2_WT, 0, 0x80}, {TB_ETMV2_WT, 0, 0x00},
    {TB_ETMV2_WT, 0, 0x00},
};

Test(etmv2_cycles, cancelled_instruction_and_open_counts)
{
    static ebuf el;

    ca_decode(abort_ca, sizeof abort_ca / sizeof abort_ca[0], &el);
    /* NO_SYNC TRACE_ON RANGE EXCEPTION RANGE TRACE_ON RANGE END */
    cr_assert_eq(el.n, 8, "%zu elements", el.n);
    cr_assert_eq(el.e[2].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(el.e[2].count, 1);
    cr_assert(el.e[2].has_cc);
    cr_assert_eq(el.e[2].cc, 1);
    cr_assert_eq(el.e[3].kind, TB_ELEM_EXCEPTION);
    cr_assert_eq(el.e[3].exc_num, tb_exc_trace_number(TB_EXC_DATA_ABORT));
    cr_assert(el.e[3].cancelled);
    cr_assert_eq(el.e[3].pref_return, 0x8004);
    cr_assert(el.e[3].has_cc, "the abort's cycles belong to no element");
    cr_assert_eq(el.e[3].cc, 5);
    cr_assert_eq(el.e[4].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(el.e[4].start, 0x10);
    cr_assert(!el.e[4].has_cc, "waits before a marker counted: %u", el.e[4].cc);
    cr_assert_eq(el.e[5].kind, TB_ELEM_TRACE_ON);
    cr_assert_eq(el.e[6].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(el.e[6].start, 0x8000);
    cr_assert(!el.e[6].has_cc, "the FIFO's drain counted: %u", el.e[6].cc);
    cr_assert_eq(el.e[7].kind, TB_ELEM_END);
}

/* Issue 29, found by the generator (etmv2-ctxid-cancel, seed 295
 * ctxid=1,port=16; etmv2-ca-ctxid-cycles, seed 242 ca,ctxid=4).  A
 * context ID packet (6.4.1 bC1101110, then ETMCR[15:14] bytes) goes with
 * the first traced status after the change (U17), the status of the first
 * instruction in the new context; the instruction is still the newest
 * one traced, so an exception's E after it (6.7.1: the most recent
 * instruction was cancelled) retracts it, and the waits after its status
 * are its cycles (docs/etmv2.md 5).  The decoder closed the range at the
 * context ID packet: the exception's E found no instruction to retract
 * (it showed the cancelled load executed, the exception without a return
 * address), and the waits counted for no element.
 *
 * 8-bit port, 1 context ID byte.  After a trace-on TFO (value 0; packet:
 * header 01, context ID 00, address 0x8000 LSB first) the MOV at 0x8000
 * (think MCR to CONTEXTIDR) and the LDR at 0x8004, whose DE status places
 * the context ID packet 6E 42; then either
 *   cancel: a data abort cancels the LDR: DW, the branch to 0x10 with E
 *           (Table 6.9: 89 80 80 80 48), then the MOV at 0x10;
 *   waits:  the LDR takes 3 cycles (DE, WT, WT), then the MOV at 0x8008.
 * One byte a cycle from the cycle a packet is placed (6.3):
 *   cancel: 0 TD 01 | 1 IE 01 | 2 DE 00 | 3 DW 00 | 4 WT 80 | 5 WT 00
 *           6 IE 00 | 7 WT 6E | 8 WT 42 | 9 WT 89 | 10-12 WT 80 | 13 WT 48
 *   waits:  0 TD 01 | 1 IE 01 | 2 DE 00 | 3 WT 00 | 4 WT 80 | 5 IE 00
 *           6 WT 00 | 7 WT 6E | 8 WT 42 */
static const tb_etmv2_sample ctx_cancel[] = {
    {TB_ETMV2_TD, 0, 0x01}, {TB_ETMV2_IE, 0, TB_ETMV2_TFO_HDR_NORMAL | TB_ETMV2_R_TRACE_ON},
    {TB_ETMV2_DE, 0, 0x00}, {TB_ETMV2_DW, 0, 0x00}, {TB_ETMV2_WT, 0, 0x80},
    {TB_ETMV2_WT, 0, 0x00}, {TB_ETMV2_IE, 0, 0x00}, {TB_ETMV2_WT, 0, 0x6E},
    {TB_ETMV2_WT, 0, 0x42}, {TB_ETMV2_WT, 0, 0x89}, {TB_ETMV2_WT, 0, 0x80},
    {TB_ETMV2_WT, 0, 0x80}, {TB_ETMV2_WT, 0, 0x80}, {TB_ETMV2_WT, 0, 0x48},
};

static const tb_etmv2_sample ctx_waits[] = {
    {TB_ETMV2_TD, 0, 0x01}, {TB_ETMV2_IE, 0, TB_ETMV2_TFO_HDR_NORMAL | TB_ETMV2_R_TRACE_ON},
    {TB_ETMV2_DE, 0, 0x00}, {TB_ETMV2_WT, 0, 0x00}, {TB_ETMV2_WT, 0, 0x80},
    {TB_ETMV2_IE, 0, 0x00}, {TB_ETMV2_WT, 0, 0x00}, {TB_ETMV2_WT, 0, 0x6E},
    {TB_ETMV2_WT, 0, 0x42},
};

Test(etmv2_decoder, context_id_packet_keeps_its_instruction_retractable)
{
    static ebuf el;

    for (int ca = 0; ca < 2; ca++) {
        port_decode(ctx_cancel, sizeof ctx_cancel / sizeof ctx_cancel[0], ca, 1, &el);
        /* NO_SYNC TRACE_ON CONTEXT(0) RANGE(0x8000) CONTEXT(0x42)
         * EXCEPTION(data abort, 0x8004 cancelled) RANGE(0x10) END */
        cr_assert_eq(el.n, 8, "ca %d: %zu elements", ca, el.n);
        cr_assert_eq(el.e[2].kind, TB_ELEM_CONTEXT);
        cr_assert_eq(el.e[2].context_id, 0);
        cr_assert_eq(el.e[3].kind, TB_ELEM_INSN_RANGE);
        cr_assert_eq(el.e[3].start, 0x8000);
        cr_assert_eq(el.e[3].count, 1, "ca %d: the cancelled LDR shown executed", ca);
        cr_assert_eq(el.e[4].kind, TB_ELEM_CONTEXT);
        cr_assert_eq(el.e[4].context_id, 0x42);
        cr_assert_eq(el.e[5].kind, TB_ELEM_EXCEPTION);
        cr_assert_eq(el.e[5].exc_num, tb_exc_trace_number(TB_EXC_DATA_ABORT));
        cr_assert(el.e[5].cancelled);
        cr_assert_eq(el.e[5].err, 0, "ca %d: the exception lost its return address", ca);
        cr_assert_eq(el.e[5].pref_return, 0x8004);
        cr_assert_eq(el.e[6].kind, TB_ELEM_INSN_RANGE);
        cr_assert_eq(el.e[6].start, 0x10);
        cr_assert_eq(el.e[7].kind, TB_ELEM_END);
        if (ca) {
            /* the MOV's 1; the LDR's DE and the DW, two waits: 4 */
            cr_assert(el.e[3].has_cc);
            cr_assert_eq(el.e[3].cc, 1);
            cr_assert(el.e[5].has_cc);
            cr_assert_eq(el.e[5].cc, 4);
        }
    }
}

Test(etmv2_cycles, waits_after_a_context_id_packet_are_its_instructions)
{
    static ebuf el;

    port_decode(ctx_waits, sizeof ctx_waits / sizeof ctx_waits[0], true, 1, &el);
    /* NO_SYNC TRACE_ON CONTEXT(0) RANGE(0x8000-0x8004) CONTEXT(0x42)
     * RANGE(0x8008) END: the context changed before the LDR, the ranges
     * are split where the decoder learns it (after the LDR's status). */
    cr_assert_eq(el.n, 7, "%zu elements", el.n);
    cr_assert_eq(el.e[3].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(el.e[3].start, 0x8000);
    cr_assert_eq(el.e[3].count, 2);
    cr_assert(el.e[3].has_cc);
    /* cycles 1 to 4: the MOV's status, the LDR's and its two waits */
    cr_assert_eq(el.e[3].cc, 4, "%u cycles: the LDR's waits counted for no element",
                 el.e[3].cc);
    cr_assert_eq(el.e[4].kind, TB_ELEM_CONTEXT);
    cr_assert_eq(el.e[4].context_id, 0x42);
    cr_assert_eq(el.e[5].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(el.e[5].start, 0x8008);
    cr_assert(!el.e[5].has_cc, "waits before the end counted: %u", el.e[5].cc);
    cr_assert_eq(el.e[6].kind, TB_ELEM_END);
}
