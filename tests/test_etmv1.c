/*
 * ETMv1 trace port: capture format, encoder, parser, decoder
 * (include/tracebench/etmv1.h, docs/etmv1.md).
 *
 * (a) worked examples derived by hand from the spec text (section cited
 *     per test), samples, packets and elements written out;
 * (b) encoder -> parser -> decoder on hand-made exec records;
 * (c) chunking invariance; (d) bad input;
 * (e) OpenOCD `etm analyze` as an independent ETMv1 decoder (skipped
 *     loudly without openocd).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../decoder/protocols.h"
#include "../encoder/port_encoders.h"
#include "tb_test.h"
#include "tracebench/decoder.h"
#include "tracebench/etmv1.h"

/* ------------------------------------------------------------------ */
/* helpers */

#define MAXS 4096
#define MAXP 2048
#define MAXE 2048

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

static tb_etmv1_sample S(uint8_t ps, uint8_t sync, uint16_t pkt)
{
    tb_etmv1_sample s = {ps, sync, pkt};
    return s;
}

static void parse_samples(const tb_etmv1_config *c, const tb_etmv1_sample *s,
                          size_t n, pbuf *out)
{
    tb_etmv1_parser *p = tb_etmv1_parser_new(c);

    cr_assert_not_null(p);
    out->n = 0;
    cr_assert_geq(tb_etmv1_parser_push_samples(p, s, n, 0, on_packet, out), 0);
    cr_assert_geq(tb_etmv1_parser_finish(p, on_packet, out), 0);
    tb_etmv1_parser_free(p);
}

static void decode_packets(const tb_etmv1_config *c, const tb_memimage *m,
                           const pbuf *pk, ebuf *out)
{
    tb_etmv1_decoder *d = tb_etmv1_decoder_new(c, m);
    size_t i;

    cr_assert_not_null(d);
    out->n = 0;
    for (i = 0; i < pk->n; i++)
        cr_assert_geq(tb_etmv1_decoder_packet(d, &pk->p[i], on_elem, out), 0);
    cr_assert_geq(tb_etmv1_decoder_finish(d, on_elem, out), 0);
    tb_etmv1_decoder_free(d);
}

static void expect_samples(const sbuf *got, const tb_etmv1_sample *want, size_t n)
{
    size_t i;

    cr_assert_eq(got->n, n, "%zu samples, want %zu", got->n, n);
    for (i = 0; i < n; i++)
        cr_assert(got->s[i].pipestat == want[i].pipestat &&
                      got->s[i].tracesync == want[i].tracesync &&
                      got->s[i].tracepkt == want[i].tracepkt,
                  "cycle %zu: got ps %u sync %u pkt 0x%X, want ps %u sync %u pkt 0x%X",
                  i, got->s[i].pipestat, got->s[i].tracesync, got->s[i].tracepkt,
                  want[i].pipestat, want[i].tracesync, want[i].tracepkt);
}

#define IDX(k) tb_etmv1_sample_index(k)

/* Exec records with the sim's cycle model (sim.h: 1 a cycle, +2 for a
 * taken branch, 3 for exception entry). */
typedef struct recs {
    tb_exec_record r[256];
    size_t n;
    uint64_t cycle, seq;
} recs;

static void rec_insn(recs *R, uint32_t addr, uint8_t size, tb_isa isa, uint32_t next,
                     tb_isa next_isa, tb_wp_class wp, uint8_t flags)
{
    tb_exec_record *r = &R->r[R->n++];

    memset(r, 0, sizeof *r);
    R->cycle += (flags & TB_INSN_TAKEN) ? 3 : 1;
    r->kind = TB_REC_INSN;
    r->seq = R->seq++;
    r->cycle = R->cycle;
    r->u.insn.addr = addr;
    r->u.insn.size = size;
    r->u.insn.isa = (uint8_t)isa;
    r->u.insn.next_addr = next;
    r->u.insn.next_isa = (uint8_t)next_isa;
    r->u.insn.wp_class = (uint8_t)wp;
    r->u.insn.flags = flags;
}

static void rec_arm(recs *R, uint32_t addr)
{
    rec_insn(R, addr, 4, TB_ISA_ARM, addr + 4, TB_ISA_ARM, TB_WP_NONE, 0);
}

static void rec_exc(recs *R, tb_exc_kind k, uint32_t vector, uint32_t pref, bool cancelled)
{
    tb_exec_record *r = &R->r[R->n++];

    memset(r, 0, sizeof *r);
    R->cycle += 3;
    r->kind = TB_REC_EXCEPTION;
    r->seq = R->seq;
    r->cycle = R->cycle;
    r->u.exc.kind = (uint8_t)k;
    r->u.exc.vector = vector;
    r->u.exc.isa = TB_ISA_ARM;
    r->u.exc.pref_return = pref;
    r->u.exc.cancelled = cancelled;
}

static void rec_ctx(recs *R, uint32_t id)
{
    tb_exec_record *r = &R->r[R->n++];

    memset(r, 0, sizeof *r);
    r->kind = TB_REC_CONTEXT;
    r->seq = R->seq;
    r->cycle = R->cycle;
    r->u.ctx.context_id = id;
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

/* ------------------------------------------------------------------ */
/* (a) codec and capture format */

/* IHI0014Q 5.5.4: a full address is 5 packets, 7 bits in packets 1-4
 * with bit 7 set, the 5th with A[31:28] in [3:0]; reason in [6:4]
 * (etmv1-v2.md 5.1, 5.2).  0x12345678 = ...:
 *   A[6:0] = 0x78 -> F8, A[13:7] = 0x2C -> AC, A[20:14] = 0x51 -> D1,
 *   A[27:21] = 0x11 -> 91, A[31:28] = 1 with reason 4 (periodic) -> 41. */
Test(etmv1_codec, five_packet_address_with_reason)
{
    uint8_t b[5];
    uint32_t raw;
    uint8_t reason;
    bool j;
    static const uint8_t want[5] = {0xF8, 0xAC, 0xD1, 0x91, 0x41};

    cr_assert_eq(tb_etmv1_addr_encode(0x12345678, 0, true, 4, b), 5);
    cr_assert_arr_eq(b, want, 5);
    cr_assert_eq(tb_etmv1_addr_length(b, 5), 5);
    cr_assert_eq(tb_etmv1_addr_length(b, 4), 0);
    tb_etmv1_addr_decode(b, 5, 0xFFFFFFFF, &raw, &reason, &j);
    cr_assert_eq(raw, 0x12345678);
    cr_assert_eq(reason, 4);
    cr_assert_not(j);
    /* reasons 1 (trace on), 2 (overflow), 3 (debug) in the same field */
    tb_etmv1_addr_encode(0x12345678, 0, true, 2, b);
    cr_assert_eq(b[4], 0x21);
}

/* 5.5.4: only the changed low bits; "A[19] the highest changed -> 3
 * packets".  0x9000 vs 0x8000 (etmv1-v2.md 12, example 1) -> 80 20. */
Test(etmv1_codec, compression)
{
    uint8_t b[5];
    uint32_t raw;

    cr_assert_eq(tb_etmv1_addr_encode(0x9000, 0x8000, false, 0, b), 2);
    cr_assert_eq(b[0], 0x80);
    cr_assert_eq(b[1], 0x20);
    cr_assert_eq(tb_etmv1_addr_encode(0x00080000, 0, false, 0, b), 3); /* A[19] */
    cr_assert_eq(tb_etmv1_addr_encode(0x10000000, 0, false, 0, b), 5);
    /* Thumb: A[0] = 1 (U12) -> an ARM->Thumb change sends at least 1 */
    cr_assert_eq(tb_etmv1_addr_raw(0x9002, TB_ISA_THUMB), 0x9003);
    cr_assert_eq(tb_etmv1_addr_encode(0x9003, 0x9000, false, 0, b), 1);
    cr_assert_eq(b[0], 0x03);
    tb_etmv1_addr_decode(b, 1, 0x9000, &raw, NULL, NULL);
    cr_assert_eq(raw, 0x9003);
}

/* docs/etmv1.md 2: header and sample bytes; etmv1-v2-sources 2.3: the
 * OpenOCD form (big-endian; TR -> replaced status + flag bit 1). */
Test(etmv1_capture, format)
{
    tb_etmv1_config c, d;
    uint8_t h[16], s4[4], o[12];
    tb_etmv1_sample s = S(TB_ETMV1_BE, 1, 0xA4), t;
    static const uint8_t want_h[16] = {'T', 'B', 'E', 'T', 'M', 'C', 'A', 'P',
                                       1, 1, 3, 16, 0x20, 0x10, 0, 0};

    tb_etmv1_config_init(&c);
    c.port_width = 16;
    c.cycle_accurate = true;
    tb_etmv1_capture_header(&c, h);
    cr_assert_arr_eq(h, want_h, 16);
    tb_etmv1_config_init(&d);
    cr_assert_eq(tb_etmv1_capture_parse_header(h, &d), 0);
    cr_assert_eq(d.port_width, 16);
    cr_assert(d.cycle_accurate);
    tb_etmv1_sample_pack(&s, s4);
    cr_assert_eq(s4[0], 0x14);
    cr_assert_eq(s4[1], 0xA4);
    cr_assert_eq(s4[2], 0);
    cr_assert_eq(s4[3], 0);
    cr_assert_eq(tb_etmv1_sample_unpack(s4, &t), 0);
    cr_assert_eq(t.pipestat, 4);
    cr_assert_eq(t.tracesync, 1);
    cr_assert_eq(t.tracepkt, 0xA4);
    s = S(TB_ETMV1_TR, 0, 0x3);
    tb_etmv1_openocd_sample(&s, o);
    cr_assert_eq(o[3], 3);   /* pipestat: the replaced WT */
    cr_assert_eq(o[7], 3);   /* packet */
    cr_assert_eq(o[11], 2);  /* flags: trigger */
    tb_etmv1_openocd_header(&c, 7, o);
    cr_assert_eq(o[6], 0x10); /* ETMCR 0x1020 big-endian */
    cr_assert_eq(o[7], 0x20);
    cr_assert_eq(o[11], 7);
}

/* ------------------------------------------------------------------ */
/* (a) worked examples */

/* etmv1-v2.md 12, example 1 without data: two back-to-back indirect
 * branches, 8-bit port, APO = 1 (IHI0014Q 5.6.1).  The FIFO bytes the
 * example's data held are here the trace-on address (5.8: BE with a full
 * address, reason 1) and a 1-byte context ID (5.6.3), so that the first
 * branch's address is still queued when the second branch executes.
 *   0x8000 BX r5 -> 0x9000;  0x9000 BX r6 -> 0x9100;  0x9100, 0x9104 MOV
 *   trace-on 0x8000: 80 80 82 80 10 + CID 42;  0x9000: 80 20;  0x9100: 80 22
 * cycle PIPESTAT TRACEPKT TRACESYNC
 *   0   BE   80 1   trace-on marker (no instruction), FIFO <- 80 80 82 80 10 42
 *   1   000  80     APO[1:0] = 0
 *   2   000  82     APO[3:2] = 0
 *   3   BE   80     BX r5; FIFO <- 80 20; no start queued -> APO 0
 *   4   000  10
 *   5   000  42     the context ID
 *   6   BE   80 1   BX r6; FIFO <- 80 22; BX r5's start is queued -> APO 1
 *   7   001  20     APO[1:0] = 1
 *   8   000  80 1   BX r6's address: the second TRACESYNC from cycle 6
 *   9   IE   22     MOV at 0x9100
 *  10   IE   00     MOV at 0x9104; FIFO empty */
static const tb_etmv1_sample ex1[] = {
    {4, 1, 0x80}, {0, 0, 0x80}, {0, 0, 0x82}, {4, 0, 0x80}, {0, 0, 0x10}, {0, 0, 0x42},
    {4, 1, 0x80}, {1, 0, 0x20}, {0, 1, 0x80}, {0, 0, 0x22}, {0, 0, 0x00},
};

static void ex1_image(tb_memimage *m)
{
    static const uint32_t a[] = {0xE12FFF15};            /* BX r5 */
    static const uint32_t b[] = {0xE12FFF16};            /* BX r6 */
    static const uint32_t c[] = {0xE1A00000, 0xE1A00000}; /* MOV r0, r0 */

    tb_test_image_words(m, 0x8000, a, 1);
    tb_test_image_words(m, 0x9000, b, 1);
    tb_test_image_words(m, 0x9100, c, 2);
}

static void ex1_config(tb_etmv1_config *c)
{
    tb_etmv1_config_init(c);
    c->minor = 3;
    c->port_width = 8;
    c->ctxid_bytes = 1;
}

Test(etmv1_examples, example1_apo1_packets_and_elements)
{
    tb_etmv1_config c;
    tb_memimage *m = tb_memimage_new();
    static pbuf pk;
    static ebuf el;

    ex1_config(&c);
    ex1_image(m);
    parse_samples(&c, ex1, sizeof ex1 / sizeof ex1[0], &pk);
    cr_assert_eq(pk.n, 4, "%zu packets", pk.n);
    cr_assert_eq(pk.p[0].kind, TB_PKT_BRANCH);
    cr_assert_eq(pk.p[0].index, IDX(0));
    cr_assert_eq(pk.p[0].addr, 0x8000);
    cr_assert_eq(pk.p[0].reason, TB_ETMV1_R_TRACE_ON);
    cr_assert_eq(pk.p[0].addr_bits, 32);
    cr_assert(pk.p[0].has_ctxid);
    cr_assert_eq(pk.p[0].context_id, 0x42);
    cr_assert_eq(pk.p[1].kind, TB_PKT_BRANCH);
    cr_assert_eq(pk.p[1].index, IDX(3));
    cr_assert_eq(pk.p[1].addr, 0x9000);
    cr_assert_eq(pk.p[1].addr_bits, 14);
    cr_assert_eq(pk.p[2].kind, TB_PKT_BRANCH);
    cr_assert_eq(pk.p[2].index, IDX(6));
    cr_assert_eq(pk.p[2].addr, 0x9100);
    cr_assert_eq(pk.p[3].kind, TB_PKT_ATOM);
    cr_assert_eq(pk.p[3].index, IDX(9));
    cr_assert_eq(pk.p[3].seq_len, 2);
    cr_assert_eq(memcmp(pk.p[3].seq, "EE", 2), 0);

    decode_packets(&c, m, &pk, &el);
    cr_assert_eq(el.n, 7, "%zu elements", el.n);
    cr_assert_eq(el.e[0].kind, TB_ELEM_NO_SYNC);
    /* TRACE_ON, then the marker's CONTEXT (as the ETMv3 decoder orders
     * an I-sync's): the context belongs to the run after the gap. */
    cr_assert_eq(el.e[1].kind, TB_ELEM_TRACE_ON);
    cr_assert_eq(el.e[1].reason, TB_ISYNC_TRACE_ON);
    cr_assert_eq(el.e[1].start, 0x8000);
    cr_assert_eq(el.e[2].kind, TB_ELEM_CONTEXT);
    cr_assert_eq(el.e[2].context_id, 0x42);
    cr_assert_eq(el.e[3].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(el.e[3].start, 0x8000);
    cr_assert_eq(el.e[3].count, 1);
    cr_assert_eq(el.e[3].last_atom, 'E');
    cr_assert_eq(el.e[4].start, 0x9000);
    cr_assert_eq(el.e[4].count, 1);
    cr_assert_eq(el.e[5].start, 0x9100);
    cr_assert_eq(el.e[5].count, 2);
    cr_assert_eq(el.e[5].atom_bits, 0);
    cr_assert_eq(el.e[6].kind, TB_ELEM_END);
    tb_memimage_free(m);
}

/* The same cycles from the encoder model, from exec records. */
Test(etmv1_examples, example1_from_encoder)
{
    tb_etmv1_encoder_opts o;
    static recs R;
    static sbuf sb;

    tb_etmv1_encoder_opts_init(&o);
    o.base.ctxid_bytes = 1;
    memset(&R, 0, sizeof R);
    rec_ctx(&R, 0x42);
    rec_insn(&R, 0x8000, 4, TB_ISA_ARM, 0x9000, TB_ISA_ARM, TB_WP_INDIRECT, TB_INSN_TAKEN);
    rec_insn(&R, 0x9000, 4, TB_ISA_ARM, 0x9100, TB_ISA_ARM, TB_WP_INDIRECT, TB_INSN_TAKEN);
    rec_arm(&R, 0x9100);
    rec_arm(&R, 0x9104);
    encode(&o, &R, &sb);
    expect_samples(&sb, ex1, sizeof ex1 / sizeof ex1[0]);
}

/* etmv1-v2.md 12, example 3 without data (a BE for the BD): 8-bit port,
 * cycle accurate, trigger in the second APO cycle.  IHI0014Q 5.4: TR
 * with the replaced status (here APO[3:2] = 00) on TRACEPKT[2:0] and no
 * FIFO byte that cycle (5.3); 5.10: TD with TRACEPKT[0] = 1.
 *   trace-on 0xA000: 80 C0 82 80 10;  LDR pc at 0xA000 -> 0xA124: A4 42
 *   0 BE 80 1 marker | 1 000 C0 | 2 000 82 | 3 BE 80 (LDR pc, APO 0)
 *   4 000 10 | 5 TR xxxxx000 | 6 IE A4 1 (0xA124) | 7 IE 42 (0xA128)
 *   8 TD xxxxxxx1 */
static const tb_etmv1_sample ex3[] = {
    {4, 1, 0x80}, {0, 0, 0xC0}, {0, 0, 0x82}, {4, 0, 0x80}, {0, 0, 0x10},
    {6, 0, 0x00}, {0, 1, 0xA4}, {0, 0, 0x42}, {7, 0, 0x01},
};

Test(etmv1_examples, example3_trigger_in_apo_cycle_ca)
{
    tb_etmv1_config c;
    tb_memimage *m = tb_memimage_new();
    static const uint32_t a[] = {0xE49DF004};              /* LDR pc, [sp], #4 */
    static const uint32_t b[] = {0xE1A00000, 0xE1A00000};
    static pbuf pk;
    static ebuf el;

    tb_test_image_words(m, 0xA000, a, 1);
    tb_test_image_words(m, 0xA124, b, 2);
    tb_etmv1_config_init(&c);
    c.cycle_accurate = true;
    parse_samples(&c, ex3, sizeof ex3 / sizeof ex3[0], &pk);
    /* BRANCH(0) ATOM(TT) BRANCH(3) ATOM(T) TRIGGER(5) ATOM(T E E T): the
     * APO cycles (5.6.1) and the TD with TraceEnable (5.10) are 'T' */
    cr_assert_eq(pk.n, 6, "%zu packets", pk.n);
    cr_assert_eq(pk.p[0].kind, TB_PKT_BRANCH);
    cr_assert_eq(pk.p[1].kind, TB_PKT_ATOM);
    cr_assert_eq(memcmp(pk.p[1].seq, "TT", 2), 0);
    cr_assert_eq(pk.p[2].kind, TB_PKT_BRANCH);
    cr_assert_eq(pk.p[2].addr, 0xA124);
    cr_assert_eq(pk.p[2].index, IDX(3));
    cr_assert_eq(pk.p[3].seq_len, 1);
    cr_assert_eq(pk.p[4].kind, TB_PKT_TRIGGER);
    cr_assert_eq(pk.p[4].index, IDX(5));
    cr_assert_eq(pk.p[5].seq_len, 4);
    cr_assert_eq(memcmp(pk.p[5].seq, "TEET", 4), 0);

    decode_packets(&c, m, &pk, &el);
    /* NO_SYNC, TRACE_ON, range 0xA000 (1 + 2 APO cycles = 3), EVENT,
     * range 0xA124 x2 (1 + 1 + the TD, open: at the end the TD may be a
     * lost instruction's, 5.9, docs/etmv1.md 5), END */
    cr_assert_eq(el.n, 6, "%zu elements", el.n);
    cr_assert_eq(el.e[1].kind, TB_ELEM_TRACE_ON);
    cr_assert_eq(el.e[2].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(el.e[2].start, 0xA000);
    cr_assert(el.e[2].has_cc);
    cr_assert_eq(el.e[2].cc, 3);
    cr_assert_eq(el.e[3].kind, TB_ELEM_EVENT);
    cr_assert_eq(el.e[3].index, IDX(5));
    cr_assert_eq(el.e[4].start, 0xA124);
    cr_assert_eq(el.e[4].count, 2);
    cr_assert(!el.e[4].has_cc, "cc %u", el.e[4].cc);
    cr_assert_eq(el.e[5].kind, TB_ELEM_END);
    tb_memimage_free(m);
}

/* IHI0014Q 5.2: a 4-bit port sends packet[3:0] then packet[7:4];
 * TRACESYNC with the first (low) nibble of an address.  Trace on at
 * 0x8000 (80 80 82 80 10), two MOVs, then the FIFO drains (WT).
 *   0 BE 0 1 | 1 000 8 | 2 000 0 | 3 IE 8 | 4 IE 2 | 5-9 WT 8 0 8 0 1 */
Test(etmv1_examples, four_bit_port_packing)
{
    static const tb_etmv1_sample want[] = {
        {4, 1, 0x0}, {0, 0, 0x8}, {0, 0, 0x0}, {0, 0, 0x8}, {0, 0, 0x2},
        {3, 0, 0x8}, {3, 0, 0x0}, {3, 0, 0x8}, {3, 0, 0x0}, {3, 0, 0x1},
    };
    tb_etmv1_encoder_opts o;
    tb_etmv1_config c;
    static recs R;
    static sbuf sb;
    static pbuf pk;

    tb_etmv1_encoder_opts_init(&o);
    o.port_width = 4;
    memset(&R, 0, sizeof R);
    rec_arm(&R, 0x8000);
    rec_arm(&R, 0x8004);
    encode(&o, &R, &sb);
    expect_samples(&sb, want, sizeof want / sizeof want[0]);
    tb_etmv1_config_init(&c);
    cr_assert_eq(tb_etmv1_encoder_config(&o, &c), 0);
    parse_samples(&c, sb.s, sb.n, &pk);
    cr_assert_eq(pk.n, 2);
    cr_assert_eq(pk.p[0].addr, 0x8000);
    cr_assert_eq(pk.p[0].size, 5);
    cr_assert_eq(memcmp(pk.p[1].seq, "EE", 2), 0);
}

/* IHI0014Q 5.2: a 16-bit port sends two packets a cycle, the first on
 * [7:0]; an address start goes on [7:0] of its TRACESYNC cycle (U13).
 * Trace on at 0x8000 (80 80 82 80 10 + CID 42 via ctxid=1), then a BX
 * to 0x9000 at once (80 20):
 *   0 BE 8080 1 | 1 000 8082 | 2 000 4210 | 3 BE 2080 1 (BX, APO 0)
 *   4 000 0 | 5 000 0 */
Test(etmv1_examples, sixteen_bit_port)
{
    static const tb_etmv1_sample want[] = {
        {4, 1, 0x8080}, {0, 0, 0x8082}, {0, 0, 0x4210}, {4, 1, 0x2080},
        {0, 0, 0}, {0, 0, 0},
    };
    tb_etmv1_encoder_opts o;
    static recs R;
    static sbuf sb;

    tb_etmv1_encoder_opts_init(&o);
    o.port_width = 16;
    o.base.ctxid_bytes = 1;
    memset(&R, 0, sizeof R);
    rec_ctx(&R, 0x42);
    rec_insn(&R, 0x8000, 4, TB_ISA_ARM, 0x9000, TB_ISA_ARM, TB_WP_INDIRECT, TB_INSN_TAKEN);
    encode(&o, &R, &sb);
    expect_samples(&sb, want, sizeof want / sizeof want[0]);
}

/* The U13 rule: a second byte that starts an address waits for the
 * next cycle's [7:0].  Trace on at 0x8000 with a 2-byte context ID
 * 0x1234 (80 80 82 80 10 34 12), then a BX to 0x9000 (80 20) in cycle
 * 3, when one byte (12) is left: cycle 3 sends it alone, the address
 * starts on [7:0] of cycle 4 with TRACESYNC.
 *   0 BE 8080 1 | 1 000 8082 | 2 000 3410 | 3 BE 0012 0 (APO 0)
 *   4 000 2080 1 | 5 000 0 */
Test(etmv1_examples, sixteen_bit_start_on_low_byte)
{
    static const tb_etmv1_sample want[] = {
        {4, 1, 0x8080}, {0, 0, 0x8082}, {0, 0, 0x3410}, {4, 0, 0x0012},
        {0, 1, 0x2080}, {0, 0, 0},
    };
    tb_etmv1_encoder_opts o;
    tb_etmv1_config c;
    static recs R;
    static sbuf sb;
    static pbuf pk;

    tb_etmv1_encoder_opts_init(&o);
    o.port_width = 16;
    o.base.ctxid_bytes = 2;
    memset(&R, 0, sizeof R);
    rec_ctx(&R, 0x1234);
    rec_insn(&R, 0x8000, 4, TB_ISA_ARM, 0x9000, TB_ISA_ARM, TB_WP_INDIRECT, TB_INSN_TAKEN);
    encode(&o, &R, &sb);
    expect_samples(&sb, want, sizeof want / sizeof want[0]);
    tb_etmv1_config_init(&c);
    tb_etmv1_encoder_config(&o, &c);
    parse_samples(&c, sb.s, sb.n, &pk);
    cr_assert_eq(pk.n, 2);
    cr_assert_eq(pk.p[0].context_id, 0x1234);
    cr_assert_eq(pk.p[1].addr, 0x9000);
    cr_assert_eq(pk.p[1].index, IDX(3));
}

/* Issue 35: the encoder makes example 3's capture (above, from the
 * spec's worked example, etmv1-v2.md 12) when the trigger event comes two
 * cycles after the LDR pc's BE (trigdelay=2): TR in the second APO cycle
 * with APO[3:2] on TRACEPKT[2:0] and no FIFO byte that cycle (5.4,
 * 5.6.1), then the IEs, a CA TD with TraceEnable, and the last IE. */
Test(etmv1_examples, example3_trigger_in_apo_cycle_encoded)
{
    static const tb_etmv1_sample last = {0, 0, 0x00};
    tb_etmv1_encoder_opts o;
    static recs R;
    static sbuf sb;

    tb_etmv1_encoder_opts_init(&o);
    o.base.cycle_accurate = true;
    o.base.trigger_at = 1;
    o.base.trigger_delay = 2;
    memset(&R, 0, sizeof R);
    R.seq = 1;
    rec_insn(&R, 0xA000, 4, TB_ISA_ARM, 0xA124, TB_ISA_ARM, TB_WP_INDIRECT, TB_INSN_TAKEN);
    rec_arm(&R, 0xA124);
    R.cycle++; /* 0xA128 takes two cycles: its IE, then the TD of cycle 8 */
    rec_arm(&R, 0xA128);
    rec_arm(&R, 0xA12C);
    encode(&o, &R, &sb);
    cr_assert_eq(sb.n, 10, "%zu samples", sb.n);
    sb.n = 9;
    expect_samples(&sb, ex3, sizeof ex3 / sizeof ex3[0]);
    cr_assert(sb.s[9].pipestat == last.pipestat && sb.s[9].tracepkt == last.tracepkt);
}

/* Trigger (IHI0014Q 5.4, 5.3): trigger=1 puts TR on the status cycle of
 * instruction seq 1 with IE on TRACEPKT[2:0]; the FIFO pauses a cycle.
 * 8-bit: 0 BE 80 1 | 1 000 80 | 2 000 82 | 3 IE 80 (seq 0) |
 *        4 TR 000 (seq 1's IE) | 5 IE 10 (seq 2) */
Test(etmv1_examples, trigger_cycle)
{
    static const tb_etmv1_sample want[] = {
        {4, 1, 0x80}, {0, 0, 0x80}, {0, 0, 0x82}, {0, 0, 0x80}, {6, 0, 0x0}, {0, 0, 0x10},
    };
    tb_etmv1_encoder_opts o;
    tb_etmv1_config c;
    tb_memimage *m = tb_memimage_new();
    static const uint32_t w[] = {0xE1A00000, 0xE1A00000, 0xE1A00000};
    static recs R;
    static sbuf sb;
    static pbuf pk;
    static ebuf el;

    tb_etmv1_encoder_opts_init(&o);
    o.base.trigger_at = 1;
    memset(&R, 0, sizeof R);
    rec_arm(&R, 0x8000);
    rec_arm(&R, 0x8004);
    rec_arm(&R, 0x8008);
    encode(&o, &R, &sb);
    expect_samples(&sb, want, sizeof want / sizeof want[0]);
    tb_test_image_words(m, 0x8000, w, 3);
    tb_etmv1_config_init(&c);
    tb_etmv1_encoder_config(&o, &c);
    parse_samples(&c, sb.s, sb.n, &pk);
    decode_packets(&c, m, &pk, &el);
    /* NO_SYNC TRACE_ON RANGE(0x8000 x1) EVENT RANGE(0x8004 x2) END */
    cr_assert_eq(el.n, 6);
    cr_assert_eq(el.e[2].count, 1);
    cr_assert_eq(el.e[3].kind, TB_ELEM_EVENT);
    cr_assert_eq(el.e[4].start, 0x8004);
    cr_assert_eq(el.e[4].count, 2);
    tb_memimage_free(m);
}

/* ---- cycle-accurate counts around exceptions and trace-off (issue 23) ---- */

static const uint32_t nops[] = {0xE1A00000, 0xE1A00000}; /* MOV r0, r0 */

static tb_memimage *exc_image(void)
{
    tb_memimage *m = tb_memimage_new();
    static const uint32_t ldr[] = {0xE5941000}; /* 8004 LDR r1, [r4] */

    tb_test_image_words(m, 0x8000, nops, 1);
    tb_test_image_words(m, 0x8004, ldr, 1);
    tb_test_image_words(m, 0x10, nops, 1);
    tb_test_image_words(m, 0x18, nops, 2);
    return m;
}

static void ca8(tb_etmv1_config *c)
{
    tb_etmv1_config_init(c);
    c->port_width = 8;
    c->cycle_accurate = true;
}

/* An IRQ between two instructions, 8-bit port, CA.  IHI0014Q 5.6.1: the
 * exception's BE to 0x18 (0x18 ^ 0x8000 < 2^21: 3 packets 98 80 00) and
 * its two APO cycles (APO 0: the marker's last byte is no address
 * start); the sim charges exception entry 3 cycles, the BE's 3.
 *   0 BE 80 1 marker 0x8000 | 1 000 80 | 2 000 82 | 3 IE 80 (0x8000)
 *   4 BE 10 (IRQ) | 5 000 98 1 | 6 000 80 | 7 IE 00 (0x18) | 8 IE (0x1C)
 * The EXCEPTION's cycles are its BE's to the next status, 3 (docs/etmv1.md
 * 5): the counts sum to the truth's 1 + 3 + 2. */
static const tb_etmv1_sample exc_ca[] = {
    {4, 1, 0x80}, {0, 0, 0x80}, {0, 0, 0x82}, {0, 0, 0x80}, {4, 0, 0x10},
    {0, 1, 0x98}, {0, 0, 0x80}, {0, 0, 0x00}, {0, 0, 0x00},
};

Test(etmv1_cycles, exception_be_and_apo_cycles_are_its_own)
{
    tb_etmv1_encoder_opts o;
    tb_etmv1_config c;
    tb_memimage *m = exc_image();
    static recs R;
    static sbuf sb;
    static pbuf pk;
    static ebuf el;

    tb_etmv1_encoder_opts_init(&o);
    o.base.cycle_accurate = true;
    memset(&R, 0, sizeof R);
    rec_arm(&R, 0x8000);
    rec_exc(&R, TB_EXC_IRQ, 0x18, 0x8004, false);
    rec_arm(&R, 0x18);
    rec_arm(&R, 0x1C);
    encode(&o, &R, &sb);
    expect_samples(&sb, exc_ca, sizeof exc_ca / sizeof exc_ca[0]);
    ca8(&c);
    parse_samples(&c, exc_ca, sizeof exc_ca / sizeof exc_ca[0], &pk);
    decode_packets(&c, m, &pk, &el);
    /* NO_SYNC TRACE_ON RANGE(0x8000, 1) EXCEPTION(IRQ, 3) RANGE(0x18 x2, 2) END */
    cr_assert_eq(el.n, 6, "%zu elements", el.n);
    cr_assert_eq(el.e[2].kind, TB_ELEM_INSN_RANGE);
    cr_assert(el.e[2].has_cc);
    cr_assert_eq(el.e[2].cc, 1);
    cr_assert_eq(el.e[3].kind, TB_ELEM_EXCEPTION);
    cr_assert_eq(el.e[3].pref_return, 0x8004);
    cr_assert(el.e[3].has_cc, "the exception's BE and APO cycles belong to no element");
    cr_assert_eq(el.e[3].cc, 3);
    cr_assert_eq(el.e[4].start, 0x18);
    cr_assert_eq(el.e[4].count, 2);
    cr_assert(el.e[4].has_cc);
    cr_assert_eq(el.e[4].cc, 2);
    cr_assert_eq(el.e[2].cc + el.e[3].cc + el.e[4].cc, R.r[R.n - 1].cycle);
    tb_memimage_free(m);
}

/* Back to back (irq_fiq.storm): an FIQ taken at the IRQ vector before its
 * first instruction.  Each BE to a vector is an exception with its own 3
 * cycles (5.6.1); 0x1C ^ 0x18 < 2^7: one packet 1C. */
Test(etmv1_cycles, back_to_back_exceptions)
{
    tb_etmv1_encoder_opts o;
    tb_etmv1_config c;
    tb_memimage *m = exc_image();
    static recs R;
    static sbuf sb;
    static pbuf pk;
    static ebuf el;
    uint64_t sum = 0;
    size_t i, nexc = 0;

    tb_etmv1_encoder_opts_init(&o);
    o.base.cycle_accurate = true;
    memset(&R, 0, sizeof R);
    rec_arm(&R, 0x8000);
    rec_exc(&R, TB_EXC_IRQ, 0x18, 0x8004, false);
    rec_exc(&R, TB_EXC_FIQ, 0x1C, 0x18, false);
    rec_arm(&R, 0x1C);
    encode(&o, &R, &sb);
    ca8(&c);
    parse_samples(&c, sb.s, sb.n, &pk);
    decode_packets(&c, m, &pk, &el);
    for (i = 0; i < el.n; i++) {
        if (el.e[i].kind == TB_ELEM_EXCEPTION) {
            cr_assert(el.e[i].has_cc);
            cr_assert_eq(el.e[i].cc, 3, "exception %zu: %u cycles", nexc, el.e[i].cc);
            cr_assert_eq(el.e[i].pref_return, nexc ? 0x18u : 0x8004u);
            nexc++;
        }
        if (el.e[i].has_cc)
            sum += el.e[i].cc;
    }
    cr_assert_eq(nexc, 2);
    cr_assert_eq(sum, R.r[R.n - 1].cycle);
    tb_memimage_free(m);
}

/* Abandoned branch (option abandon, docs/etmv1.md 4): BX lr at 0x8004 to
 * 0x9000, then an IRQ before 0x9000 runs, taken in the branch's pipeline
 * refill: the IRQ's BE comes in the BX's first APO cycle, abandoning it
 * (IHI0014Q 5.6.1).  The BX's address is still sent (0x9000 ^ 0x8000 <
 * 2^14: 80 20), in the FIFO before the IRQ's (0x18 ^ 0x9000 < 2^21: 98
 * 80 00), so the IRQ's APO counts it: 1 (5.6.1, from the IRQ's own
 * cycle).  The BX's other two cycles follow the IRQ's APO cycles.
 *   0-2 marker | 3 IE 80 (0x8000) | 4 BE 10 (BX) | 5 BE 80 1 (IRQ)
 *   6 001 20 | 7 000 98 1 | 8 WT 80 | 9 WT 00 | 10 IE (0x18) | 11 IE (0x1C)
 * Without abandon: 4 BE 10 | 5 000 80 1 | 6 000 20 | 7 BE 98 1 | ... */
static const tb_etmv1_sample abandon_ca[] = {
    {4, 1, 0x80}, {0, 0, 0x80}, {0, 0, 0x82}, {0, 0, 0x80}, {4, 0, 0x10}, {4, 1, 0x80},
    {1, 0, 0x20}, {0, 1, 0x98}, {3, 0, 0x80}, {3, 0, 0x00}, {0, 0, 0x00}, {0, 0, 0x00},
};

Test(etmv1_cycles, exception_in_an_apo_cycle_abandons_the_branch)
{
    static const uint32_t bx[] = {0xE12FFF1E}; /* 8004 BX lr */
    tb_etmv1_encoder_opts o;
    tb_etmv1_config c;
    tb_memimage *m = tb_memimage_new();
    static recs R;
    static sbuf sb;
    static pbuf pk;
    static ebuf el;
    size_t i, nbr = 0;

    tb_test_image_words(m, 0x8000, nops, 1);
    tb_test_image_words(m, 0x8004, bx, 1);
    tb_test_image_words(m, 0x18, nops, 2);
    tb_etmv1_encoder_opts_init(&o);
    o.base.cycle_accurate = true;
    o.base.apo_abandon = true;
    memset(&R, 0, sizeof R);
    rec_arm(&R, 0x8000);
    rec_insn(&R, 0x8004, 4, TB_ISA_ARM, 0x9000, TB_ISA_ARM, TB_WP_INDIRECT, TB_INSN_TAKEN);
    rec_exc(&R, TB_EXC_IRQ, 0x18, 0x9000, false);
    rec_arm(&R, 0x18);
    rec_arm(&R, 0x1C);
    encode(&o, &R, &sb);
    expect_samples(&sb, abandon_ca, sizeof abandon_ca / sizeof abandon_ca[0]);
    ca8(&c);
    parse_samples(&c, abandon_ca, sizeof abandon_ca / sizeof abandon_ca[0], &pk);
    /* The marker, the abandoned BX with its address, the IRQ's BE. */
    for (i = 0; i < pk.n; i++) {
        if (pk.p[i].kind != TB_PKT_BRANCH)
            continue;
        if (nbr == 1) {
            cr_assert(pk.p[i].abandoned, "the BX's BRANCH is abandoned");
            cr_assert_eq(pk.p[i].addr, 0x9000);
            cr_assert_eq(pk.p[i].index, IDX(4));
        } else {
            cr_assert(!pk.p[i].abandoned);
        }
        if (nbr == 2)
            cr_assert_eq(pk.p[i].addr, 0x18);
        nbr++;
    }
    cr_assert_eq(nbr, 3);
    decode_packets(&c, m, &pk, &el);
    /* NO_SYNC TRACE_ON RANGE(0x8000 0x8004, 2) EXCEPTION(IRQ ret 0x9000, 5)
     * RANGE(0x18 0x1C) END */
    cr_assert_eq(el.n, 6, "%zu elements", el.n);
    cr_assert_eq(el.e[2].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(el.e[2].start, 0x8000);
    cr_assert_eq(el.e[2].count, 2, "the abandoned BX is kept");
    cr_assert_eq(el.e[2].cc, 2);
    cr_assert_eq(el.e[3].kind, TB_ELEM_EXCEPTION);
    cr_assert_eq(el.e[3].pref_return, 0x9000, "the abandoned branch's address");
    cr_assert_eq(el.e[3].cc, 5, "its BE, APO cycles and the BX's other two");
    cr_assert_eq(el.e[2].cc + el.e[3].cc, R.r[2].cycle);
    cr_assert_eq(el.e[4].start, 0x18);
    cr_assert_eq(el.e[4].count, 2);
    tb_memimage_free(m);
}

/* Three BEs in a row, each in the first APO cycle of the one before
 * (5.6.1): the first's abandoner is abandoned too, so its address read is
 * not told apart (a BRANCH with abandoned set and no address); the
 * second's is the read before the third's (APO 1 from its cycle 6: the
 * TRACESYNCs at 8 and 10).  8-bit port; addresses 0x9000 (80 20, cycle
 * 5), 0x9100 (80 22, cycle 8), 0x18 (98 80 00, cycle 10). */
Test(etmv1_parser, abandoner_abandoned_gives_a_branch_without_address)
{
    static const tb_etmv1_sample s[] = {
        {4, 1, 0x80}, {0, 0, 0x80}, {0, 0, 0x82}, {0, 0, 0x80}, {4, 0, 0x10},
        {4, 1, 0x80}, {4, 0, 0x20}, {1, 0, 0x00}, {0, 1, 0x80}, {0, 0, 0x22},
        {0, 1, 0x98}, {0, 0, 0x80}, {0, 0, 0x00},
    };
    tb_etmv1_config c;
    static pbuf pk;
    size_t i, nbr = 0;

    tb_etmv1_config_init(&c);
    c.port_width = 8;
    parse_samples(&c, s, sizeof s / sizeof s[0], &pk);
    for (i = 0; i < pk.n; i++) {
        const tb_packet *p = &pk.p[i];

        cr_assert(p->kind == TB_PKT_ATOM || p->kind == TB_PKT_BRANCH, "packet %zu: %s", i,
                  tb_pkt_kind_name(p->kind));
        if (p->kind != TB_PKT_BRANCH)
            continue;
        switch (nbr++) {
        case 0:
            cr_assert(!p->abandoned && p->addr == 0x8000 && p->reason == 1);
            break;
        case 1:
            cr_assert(p->abandoned && p->addr_bits == 0 && p->size == 0 && !p->addr_known);
            cr_assert_eq(p->index, IDX(4));
            break;
        case 2:
            cr_assert(p->abandoned && p->addr_bits == 14);
            cr_assert_eq(p->addr, 0x9100);
            cr_assert_eq(p->index, IDX(5));
            break;
        default:
            cr_assert(!p->abandoned);
            cr_assert_eq(p->addr, 0x18);
            cr_assert_eq(p->index, IDX(6));
        }
    }
    cr_assert_eq(nbr, 4);
}

/* A data abort with the sim's cycle stamps (faults.elf's truth: the LDR
 * 2 cycles, the abort's entry 3).  5.7.1: the aborted LDR reports the BE
 * to 0x10 itself (0x10 ^ 0x8000: 90 80 00), its APO cycles the refill
 * from the vector, the entry's time (docs/etmv1.md 6, M6): 5 cycles in
 * all, not 3 + 3.
 *   0-2 marker | 3 IE 80 | 4 BE 10 (LDR) | 5 000 90 1 | 6 000 80
 *   7 WT 00 | 8 TD 1 | 9 IE (0x10) */
Test(etmv1_cycles, data_abort_be_shares_the_entry_cycles)
{
    static const tb_etmv1_sample want[] = {
        {4, 1, 0x80}, {0, 0, 0x80}, {0, 0, 0x82}, {0, 0, 0x80}, {4, 0, 0x10},
        {0, 1, 0x90}, {0, 0, 0x80}, {3, 0, 0x00}, {7, 0, 0x01}, {0, 0, 0x00},
    };
    tb_etmv1_encoder_opts o;
    tb_etmv1_config c;
    tb_memimage *m = exc_image();
    static recs R;
    static sbuf sb;
    static pbuf pk;
    static ebuf el;

    tb_etmv1_encoder_opts_init(&o);
    o.base.cycle_accurate = true;
    memset(&R, 0, sizeof R);
    rec_arm(&R, 0x8000);
    rec_arm(&R, 0x8004);
    R.r[R.n - 1].cycle = ++R.cycle; /* a load: 2 cycles */
    rec_exc(&R, TB_EXC_DATA_ABORT, 0x10, 0x8004, true);
    rec_arm(&R, 0x10);
    encode(&o, &R, &sb);
    expect_samples(&sb, want, sizeof want / sizeof want[0]);
    ca8(&c);
    parse_samples(&c, want, sizeof want / sizeof want[0], &pk);
    decode_packets(&c, m, &pk, &el);
    /* NO_SYNC TRACE_ON RANGE(0x8000, 1) EXCEPTION(cancelled, 5) RANGE(0x10, 1) END */
    cr_assert_eq(el.n, 6, "%zu elements", el.n);
    cr_assert_eq(el.e[3].kind, TB_ELEM_EXCEPTION);
    cr_assert(el.e[3].cancelled);
    cr_assert_eq(el.e[3].pref_return, 0x8004);
    cr_assert_eq(el.e[3].cc, 5);
    cr_assert_eq(el.e[2].cc + el.e[3].cc + el.e[4].cc, R.r[R.n - 1].cycle);
    tb_memimage_free(m);
}

/* With no status after it, an instruction's count is not closed: a WT
 * may be the FIFO draining with trace off (5.8) or lost (5.9), so the
 * count is unknown; before a trace-on marker a TD with TraceEnable
 * (5.10) last shows trace stayed on (it comes back only with a marker,
 * 5.8), so the count holds; after an overflow restart (reason 2) it
 * never does, nor at the end, which may cut off an overflow's restart
 * (5.9; test open_count_at_the_end_after_a_lost_instruction).  8-bit
 * port, CA:
 *   0-2 marker 0x8000 | 3 IE 80 (0x8000) | 4 WT 10 | then one of
 *   (a) the end;  (b) 5 TD 1, the end;  (c) a marker 0x8004 reason 1;
 *   (d) 5 TD 1, a marker 0x8004 reason 2 (80 81 82 80 20);
 *   (e) 5 TD 1, a marker 0x8004 reason 1. */
Test(etmv1_cycles, open_count_before_trace_off_or_end)
{
    static const tb_etmv1_sample head[] = {
        {4, 1, 0x80}, {0, 0, 0x80}, {0, 0, 0x82}, {0, 0, 0x80}, {3, 0, 0x10},
    };
    static const tb_etmv1_sample td = {7, 0, 0x01};
    static const tb_etmv1_sample on1[] = {
        {4, 1, 0x84}, {0, 0, 0x80}, {0, 0, 0x82}, {3, 0, 0x80}, {3, 0, 0x10},
    };
    static const tb_etmv1_sample on2[] = {
        {4, 1, 0x84}, {0, 0, 0x80}, {0, 0, 0x82}, {3, 0, 0x80}, {3, 0, 0x20},
    };
    static const struct {
        bool td;
        const tb_etmv1_sample *tail;
        bool has_cc;
        uint32_t cc;
    } cases[] = {
        {false, NULL, false, 0}, {true, NULL, false, 0}, {false, on1, false, 0},
        {true, on2, false, 0}, {true, on1, true, 3},
    };
    tb_etmv1_config c;
    tb_memimage *m = exc_image();
    static tb_etmv1_sample s[32];
    static pbuf pk;
    static ebuf el;

    ca8(&c);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t n = 0, i, nr = 0;

        memcpy(s, head, sizeof head);
        n = sizeof head / sizeof head[0];
        if (cases[k].td)
            s[n++] = td;
        if (cases[k].tail) {
            memcpy(s + n, cases[k].tail, sizeof on1);
            n += sizeof on1 / sizeof on1[0];
        }
        parse_samples(&c, s, n, &pk);
        decode_packets(&c, m, &pk, &el);
        for (i = 0; i < el.n; i++)
            if (el.e[i].kind == TB_ELEM_INSN_RANGE && el.e[i].start == 0x8000) {
                nr++;
                cr_assert_eq(el.e[i].has_cc, cases[k].has_cc, "case %zu", k);
                cr_assert_eq(el.e[i].cc, cases[k].cc, "case %zu: cc %u", k, el.e[i].cc);
            }
        cr_assert_eq(nr, 1, "case %zu", k);
    }
    tb_memimage_free(m);
}

/* The end of the trace after a lost instruction (issue 23).  With data
 * trace an ID's packets may not fit the FIFO even when it is empty; the
 * load/store is lost with them (M8) and, as every overflow (5.9), shows
 * no status until its restart marker, which the end cuts off; its cycles
 * are WT while the FIFO drains and TD with TraceEnable (5.10) once it is
 * empty.  So at the end a 'T' no longer tells the last status's waits
 * from a lost instruction's: the count is open unless nothing but the
 * status's own cycles (a BE's two APO cycles, 5.6.1) came after it.
 * The emulator's run behind it: arm_basic, `ca,data=both,fifo=12,port=8`:
 * ADD r1 at 0xDC (cycle 44) then LDMFD sp!, {r4, pc} at 0xE0 (cycle 48,
 * the end), whose 13+ data bytes do not fit 12; the capture ends IE, then
 * four TD 1, and the decode gave the ADD 5 cycles, the truth 4.
 * 8-bit port, CA, data=both; exc_image(): MOV 0x8000, LDR r1, [r4] 0x8004:
 *   0-2 marker 0x8000 | 3 IE 80 (0x8000) | 4 WT 10 | 5 TD 1 | 6 TD 1: the end
 *   (the LDR lost in cycle 5) -> the 0x8000 range has no count;
 *   exc_ca, which ends at a status (IE 0x1C): the range 0x18..0x1C keeps
 *   its 2 (nothing came after its last IE). */
Test(etmv1_cycles, open_count_at_the_end_after_a_lost_instruction)
{
    static const tb_etmv1_sample lost[] = {
        {4, 1, 0x80}, {0, 0, 0x80}, {0, 0, 0x82}, {0, 0, 0x80}, {3, 0, 0x10},
        {7, 0, 0x01}, {7, 0, 0x01},
    };
    tb_etmv1_config c;
    tb_memimage *m = exc_image();
    static pbuf pk;
    static ebuf el;
    size_t i, nr = 0;

    ca8(&c);
    c.data_trace = 3;
    parse_samples(&c, lost, sizeof lost / sizeof lost[0], &pk);
    decode_packets(&c, m, &pk, &el);
    for (i = 0; i < el.n; i++)
        if (el.e[i].kind == TB_ELEM_INSN_RANGE) {
            nr++;
            cr_assert_eq(el.e[i].start, 0x8000);
            cr_assert(!el.e[i].has_cc, "a T at the end may be a lost instruction's (cc %u)",
                      el.e[i].cc);
        }
    cr_assert_eq(nr, 1);

    ca8(&c);
    parse_samples(&c, exc_ca, sizeof exc_ca / sizeof exc_ca[0], &pk);
    decode_packets(&c, m, &pk, &el);
    cr_assert_eq(el.n, 6, "%zu elements", el.n);
    cr_assert_eq(el.e[4].start, 0x18);
    cr_assert(el.e[4].has_cc, "nothing after the last status: its count holds");
    cr_assert_eq(el.e[4].cc, 2);
    tb_memimage_free(m);
}

/* The same before a marker that also changes the context ID (5.6.3: the
 * CID after a 5-packet address with reason != 0): the count stays open.  8-bit, CA, 1-byte CIDs:
 *   0 BE 80 1 (0x8000, CID 01: 80 80 82 80 10 01) | 1-2 APO 80 82
 *   3 IE 80 | 4 WT 10 | 5 WT 01 | 6 BE 84 1 (0x8004, CID 02)
 *   7-8 APO 80 82 | 9-11 WT 80 10 02 */
Test(etmv1_cycles, open_count_before_a_marker_with_a_new_context)
{
    static const tb_etmv1_sample s[] = {
        {4, 1, 0x80}, {0, 0, 0x80}, {0, 0, 0x82}, {0, 0, 0x80}, {3, 0, 0x10}, {3, 0, 0x01},
        {4, 1, 0x84}, {0, 0, 0x80}, {0, 0, 0x82}, {3, 0, 0x80}, {3, 0, 0x10}, {3, 0, 0x02},
    };
    tb_etmv1_config c;
    tb_memimage *m = exc_image();
    static pbuf pk;
    static ebuf el;

    ca8(&c);
    c.ctxid_bytes = 1;
    parse_samples(&c, s, sizeof s / sizeof s[0], &pk);
    decode_packets(&c, m, &pk, &el);
    /* NO_SYNC TRACE_ON CONTEXT(1) RANGE(0x8000) TRACE_ON CONTEXT(2) END */
    cr_assert_eq(el.n, 7, "%zu elements", el.n);
    cr_assert_eq(el.e[3].kind, TB_ELEM_INSN_RANGE);
    cr_assert_eq(el.e[4].kind, TB_ELEM_TRACE_ON);
    cr_assert_eq(el.e[5].kind, TB_ELEM_CONTEXT);
    cr_assert_eq(el.e[5].context_id, 2);
    cr_assert(!el.e[3].has_cc, "a WT before a marker: the count is open (cc %u)", el.e[3].cc);
    tb_memimage_free(m);
}

/* ------------------------------------------------------------------ */
/* (b) encoder -> parser -> decoder */

/* ARM at 0x8000: a loop, BLX r1 to Thumb (interworking), BX lr back, an
 * IRQ (vector 0x18, SUBS pc, lr, #4), B . at the end. */
static const uint32_t prog_arm[] = {
    0xE3A00003, /* 8000 MOV r0, #3 */
    0xE2500001, /* 8004 SUBS r0, r0, #1 */
    0x1AFFFFFD, /* 8008 BNE 8004 */
    0xE3A01A09, /* 800C MOV r1, #0x9000 */
    0xE3811001, /* 8010 ORR r1, r1, #1 */
    0xE12FFF31, /* 8014 BLX r1 */
    0xE3A02000, /* 8018 MOV r2, #0 */
    0xEAFFFFFE, /* 801C B . */
};
static const uint8_t prog_thumb[] = {
    0x01, 0x23, /* 9000 MOVS r3, #1 */
    0x01, 0x33, /* 9002 ADDS r3, #1 */
    0x70, 0x47, /* 9004 BX lr */
    0x00, 0xBF, /* 9006 NOP (classifier reads ahead) */
};
static const uint32_t prog_vec[] = {0xE25EF004}; /* 0018 SUBS pc, lr, #4 */

static tb_memimage *prog_image(void)
{
    tb_memimage *m = tb_memimage_new();

    tb_test_image_words(m, 0x8000, prog_arm, 8);
    cr_assert_eq(tb_memimage_add(m, 0x9000, prog_thumb, sizeof prog_thumb), 0);
    tb_test_image_words(m, 0x18, prog_vec, 1);
    return m;
}

static void prog_records(recs *R, bool irq)
{
    int i;

    memset(R, 0, sizeof *R);
    rec_arm(R, 0x8000);
    for (i = 3; i > 0; i--) {
        rec_arm(R, 0x8004);
        rec_insn(R, 0x8008, 4, TB_ISA_ARM, i > 1 ? 0x8004 : 0x800C, TB_ISA_ARM,
                 TB_WP_DIRECT, i > 1 ? TB_INSN_TAKEN | TB_INSN_CONDITIONAL
                                     : TB_INSN_COND_FAILED | TB_INSN_CONDITIONAL);
    }
    rec_arm(R, 0x800C);
    rec_arm(R, 0x8010);
    rec_insn(R, 0x8014, 4, TB_ISA_ARM, 0x9000, TB_ISA_THUMB, TB_WP_INDIRECT_LINK,
             TB_INSN_TAKEN);
    rec_insn(R, 0x9000, 2, TB_ISA_THUMB, 0x9002, TB_ISA_THUMB, TB_WP_NONE, 0);
    rec_insn(R, 0x9002, 2, TB_ISA_THUMB, 0x9004, TB_ISA_THUMB, TB_WP_NONE, 0);
    rec_insn(R, 0x9004, 2, TB_ISA_THUMB, 0x8018, TB_ISA_ARM, TB_WP_INDIRECT, TB_INSN_TAKEN);
    rec_arm(R, 0x8018);
    if (irq) {
        rec_exc(R, TB_EXC_IRQ, 0x18, 0x801C, false);
        rec_insn(R, 0x18, 4, TB_ISA_ARM, 0x801C, TB_ISA_ARM, TB_WP_INDIRECT,
                 TB_INSN_TAKEN | TB_INSN_EXC_RETURN);
    }
    rec_insn(R, 0x801C, 4, TB_ISA_ARM, 0x801C, TB_ISA_ARM, TB_WP_DIRECT, TB_INSN_TAKEN);
    rec_insn(R, 0x801C, 4, TB_ISA_ARM, 0x801C, TB_ISA_ARM, TB_WP_DIRECT, TB_INSN_TAKEN);
}

/* The decode as a flat list: instruction addresses (| 1 for N), and
 * 0xEEEE0000 | exc_num for an exception. */
static size_t flatten(const tb_memimage *m, const ebuf *el, uint32_t *out, size_t max)
{
    size_t i, n = 0;

    for (i = 0; i < el->n; i++) {
        const tb_element *e = &el->e[i];

        if (e->kind == TB_ELEM_INSN_RANGE) {
            uint32_t a[32];
            int k = tb_range_addrs(m, e, a, 32), j;

            cr_assert_eq(k, (int)e->count);
            for (j = 0; j < k && n < max; j++)
                out[n++] = a[j] | ((e->atom_bits >> j) & 1);
        } else if (e->kind == TB_ELEM_EXCEPTION && n < max) {
            out[n++] = 0xEEEE0000u | e->exc_num;
        } else {
            cr_assert(e->kind != TB_ELEM_NO_SYNC || i == 0, "unexpected gap at %zu", i);
        }
    }
    return n;
}

static size_t truth(const recs *R, uint32_t *out)
{
    size_t i, n = 0;

    for (i = 0; i < R->n; i++) {
        const tb_exec_record *r = &R->r[i];

        if (r->kind == TB_REC_INSN)
            out[n++] = r->u.insn.addr | ((r->u.insn.flags & TB_INSN_COND_FAILED) ? 1 : 0);
        else if (r->kind == TB_REC_EXCEPTION)
            out[n++] = 0xEEEE0000u | (uint32_t)tb_exc_trace_number((tb_exc_kind)r->u.exc.kind);
    }
    return n;
}

static void roundtrip(const tb_etmv1_encoder_opts *o, const recs *R)
{
    tb_etmv1_config c;
    tb_memimage *m = prog_image();
    static sbuf sb;
    static pbuf pk;
    static ebuf el;
    uint32_t got[512], want[512];
    size_t ng, nw, i;

    tb_etmv1_config_init(&c);
    cr_assert_eq(tb_etmv1_encoder_config(o, &c), 0);
    encode(o, R, &sb);
    parse_samples(&c, sb.s, sb.n, &pk);
    decode_packets(&c, m, &pk, &el);
    ng = flatten(m, &el, got, 512);
    nw = truth(R, want);
    for (i = 0; i < ng && i < nw; i++)
        cr_assert_eq(got[i], want[i], "width %u ca %d: item %zu: 0x%08X, want 0x%08X",
                     c.port_width, c.cycle_accurate, i, got[i], want[i]);
    cr_assert_eq(ng, nw, "width %u ca %d: %zu items, want %zu", c.port_width,
                 c.cycle_accurate, ng, nw);
    tb_memimage_free(m);
}

Test(etmv1_roundtrip, loop_interworking_irq_all_ports)
{
    static const uint8_t widths[3] = {4, 8, 16};
    tb_etmv1_encoder_opts o;
    static recs R;
    int w, ca, irq;

    for (irq = 0; irq < 2; irq++)
        for (w = 0; w < 3; w++)
            for (ca = 0; ca < 2; ca++) {
                prog_records(&R, irq);
                tb_etmv1_encoder_opts_init(&o);
                o.port_width = widths[w];
                o.base.cycle_accurate = ca;
                roundtrip(&o, &R);
            }
}

/* Cycle counts: each range's cc is the sum of its instructions' spans
 * (record cycle stamps), when no marker or APO stretches them; the last
 * (B ., IE and its two waits) is open at the end (docs/etmv1.md 5). */
Test(etmv1_roundtrip, cycle_counts)
{
    tb_etmv1_encoder_opts o;
    tb_etmv1_config c;
    tb_memimage *m = prog_image();
    static recs R;
    static sbuf sb;
    static pbuf pk;
    static ebuf el;
    uint64_t sum = 0, want;
    size_t i, last = 0;

    prog_records(&R, false);
    tb_etmv1_encoder_opts_init(&o);
    o.base.cycle_accurate = true;
    tb_etmv1_config_init(&c);
    tb_etmv1_encoder_config(&o, &c);
    encode(&o, &R, &sb);
    parse_samples(&c, sb.s, sb.n, &pk);
    decode_packets(&c, m, &pk, &el);
    for (i = 0; i < el.n; i++)
        if (el.e[i].kind == TB_ELEM_INSN_RANGE)
            last = i;
    for (i = 0; i < el.n; i++)
        if (el.e[i].kind == TB_ELEM_INSN_RANGE) {
            cr_assert_eq(el.e[i].has_cc, i != last, "range %zu", i);
            sum += el.e[i].cc;
        }
    /* every instruction but the last: its span */
    want = R.r[R.n - 2].cycle;
    cr_assert_eq(sum, want, "cc sum %llu, want %llu", (unsigned long long)sum,
                 (unsigned long long)want);
    tb_memimage_free(m);
}

/* ViewInst: only 0x9000-0x9006 traced -> TRACE_ON at 0x9000, the three
 * Thumb instructions, then nothing. */
Test(etmv1_roundtrip, filter)
{
    tb_etmv1_encoder_opts o;
    tb_etmv1_config c;
    tb_memimage *m = prog_image();
    static recs R;
    static sbuf sb;
    static pbuf pk;
    static ebuf el;
    uint32_t got[64];
    size_t n, i, ton = 0;

    prog_records(&R, true);
    tb_etmv1_encoder_opts_init(&o);
    o.base.n_ranges = 1;
    o.base.ranges[0].lo = 0x9000;
    o.base.ranges[0].hi = 0x9006;
    tb_etmv1_config_init(&c);
    tb_etmv1_encoder_config(&o, &c);
    encode(&o, &R, &sb);
    parse_samples(&c, sb.s, sb.n, &pk);
    decode_packets(&c, m, &pk, &el);
    for (i = 0; i < el.n; i++)
        if (el.e[i].kind == TB_ELEM_TRACE_ON) {
            ton++;
            cr_assert_eq(el.e[i].start, 0x9000);
            cr_assert_eq(el.e[i].isa, TB_ISA_THUMB);
        }
    cr_assert_eq(ton, 1);
    n = flatten(m, &el, got, 64);
    cr_assert_eq(n, 3);
    cr_assert_eq(got[0], 0x9000);
    cr_assert_eq(got[2], 0x9004);
    tb_memimage_free(m);
}

/* Periodic sync (5.6.2) every 16 cycles, context ID change (5.6.3): the
 * decode still equals the truth; full addresses with reason 4 appear. */
Test(etmv1_roundtrip, periodic_sync_and_context)
{
    tb_etmv1_encoder_opts o;
    tb_etmv1_config c;
    tb_memimage *m = prog_image();
    static recs R;
    static sbuf sb;
    static pbuf pk;
    static ebuf el;
    size_t i, periodic = 0, ctx = 0;

    prog_records(&R, true);
    /* a context change after the MOV at 0x8018 */
    for (i = 0; i < R.n; i++)
        if (R.r[i].kind == TB_REC_INSN && R.r[i].u.insn.addr == 0x8018)
            break;
    cr_assert_lt(i, R.n);
    memmove(&R.r[i + 2], &R.r[i + 1], (R.n - i - 1) * sizeof R.r[0]);
    memset(&R.r[i + 1], 0, sizeof R.r[0]);
    R.r[i + 1].kind = TB_REC_CONTEXT;
    R.r[i + 1].seq = R.r[i].seq + 1;
    R.r[i + 1].cycle = R.r[i].cycle;
    R.r[i + 1].u.ctx.context_id = 0x1234;
    R.n++;
    tb_etmv1_encoder_opts_init(&o);
    o.base.sync_period = 16;
    o.base.ctxid_bytes = 2;
    roundtrip(&o, &R);
    tb_etmv1_config_init(&c);
    tb_etmv1_encoder_config(&o, &c);
    encode(&o, &R, &sb);
    parse_samples(&c, sb.s, sb.n, &pk);
    for (i = 0; i < pk.n; i++)
        if (pk.p[i].kind == TB_PKT_BRANCH && pk.p[i].reason == TB_ETMV1_R_PERIODIC)
            periodic++;
    cr_assert_geq(periodic, 1);
    decode_packets(&c, m, &pk, &el);
    for (i = 0; i < el.n; i++)
        if (el.e[i].kind == TB_ELEM_CONTEXT && el.e[i].context_id == 0x1234)
            ctx++;
    cr_assert_eq(ctx, 1);
    tb_memimage_free(m);
}

/* FIFO overflow (5.9): a 4-bit port and a 5-byte FIFO.  The trace-on
 * address (5 bytes) fills it; BLX r1's address (2 bytes) two cycles
 * later does not fit: trace is lost (WT) until the FIFO drains, then a
 * full address with reason 2 restarts it.  The decode shows
 * TRACE_ON(overflow) and a subsequence of the truth. */
Test(etmv1_roundtrip, overflow)
{
    tb_etmv1_encoder_opts o;
    tb_etmv1_config c;
    tb_memimage *m = prog_image();
    static recs R;
    static sbuf sb;
    static pbuf pk;
    static ebuf el;
    uint32_t got[128], want[128];
    size_t i, j, ov = 0, ng, nw;

    memset(&R, 0, sizeof R);
    rec_insn(&R, 0x8014, 4, TB_ISA_ARM, 0x9000, TB_ISA_THUMB, TB_WP_INDIRECT_LINK,
             TB_INSN_TAKEN);
    rec_insn(&R, 0x9000, 2, TB_ISA_THUMB, 0x9002, TB_ISA_THUMB, TB_WP_NONE, 0);
    rec_insn(&R, 0x9002, 2, TB_ISA_THUMB, 0x9004, TB_ISA_THUMB, TB_WP_NONE, 0);
    rec_insn(&R, 0x9004, 2, TB_ISA_THUMB, 0x8018, TB_ISA_ARM, TB_WP_INDIRECT, TB_INSN_TAKEN);
    rec_arm(&R, 0x8018);
    for (i = 0; i < 12; i++)
        rec_insn(&R, 0x801C, 4, TB_ISA_ARM, 0x801C, TB_ISA_ARM, TB_WP_DIRECT, TB_INSN_TAKEN);
    tb_etmv1_encoder_opts_init(&o);
    o.port_width = 4;
    o.base.fifo_depth = 5;
    tb_etmv1_config_init(&c);
    tb_etmv1_encoder_config(&o, &c);
    encode(&o, &R, &sb);
    parse_samples(&c, sb.s, sb.n, &pk);
    decode_packets(&c, m, &pk, &el);
    for (i = 0; i < el.n; i++) {
        if (el.e[i].kind == TB_ELEM_TRACE_ON && el.e[i].reason == TB_ISYNC_OVERFLOW)
            ov++;
        cr_assert(el.e[i].kind != TB_ELEM_NO_SYNC || i == 0);
    }
    cr_assert_eq(ov, 1);
    ng = flatten(m, &el, got, 128);
    nw = truth(&R, want);
    cr_assert_gt(ng, 5);
    cr_assert_lt(ng, nw);
    for (i = j = 0; i < ng; i++, j++) { /* a subsequence, in order */
        while (j < nw && want[j] != got[i])
            j++;
        cr_assert_lt(j, nw, "decoded 0x%08X (item %zu) not in the truth order", got[i], i);
    }
    tb_memimage_free(m);
}

/* ------------------------------------------------------------------ */
/* (c) chunking */

static void capture_bytes(const tb_etmv1_encoder_opts *o, const recs *R, tb_test_bytes *b)
{
    tb_etmv1_encoder *e = tb_etmv1_encoder_new_bytes(o, tb_test_bytes_sink, b);
    size_t i;

    cr_assert_not_null(e);
    for (i = 0; i < R->n; i++)
        cr_assert_eq(tb_etmv1_encoder_push(e, &R->r[i]), 0);
    cr_assert_eq(tb_etmv1_encoder_finish(e), 0);
    tb_etmv1_encoder_free(e);
}

Test(etmv1_parser, chunking_invariance)
{
    static const uint8_t widths[3] = {4, 8, 16};
    tb_etmv1_encoder_opts o;
    static recs R;
    static pbuf whole, cut;
    uint64_t seed = 42;
    int w, round;

    for (w = 0; w < 3; w++) {
        tb_test_bytes b = {0};
        tb_etmv1_parser *p;

        prog_records(&R, true);
        tb_etmv1_encoder_opts_init(&o);
        o.port_width = widths[w];
        o.base.cycle_accurate = w == 1;
        o.base.trigger_at = 5;
        o.base.sync_period = 20;
        capture_bytes(&o, &R, &b);
        cr_assert_eq((b.n - 16) % 4, 0);
        whole.n = 0;
        p = tb_etmv1_parser_new(NULL); /* config from the header */
        cr_assert_geq(tb_etmv1_parser_push(p, b.d, b.n, 0, on_packet, &whole), 0);
        cr_assert_geq(tb_etmv1_parser_finish(p, on_packet, &whole), 0);
        cr_assert_eq(tb_etmv1_parser_config(p)->port_width, widths[w]);
        tb_etmv1_parser_free(p);
        cr_assert_gt(whole.n, 5);
        for (round = 0; round < 20; round++) {
            size_t at = 0;

            cut.n = 0;
            p = tb_etmv1_parser_new(NULL);
            while (at < b.n) {
                size_t k = round == 0 ? 1 : 1 + tb_test_rand(&seed) % 23;

                if (k > b.n - at)
                    k = b.n - at;
                cr_assert_geq(tb_etmv1_parser_push(p, b.d + at, k, at, on_packet, &cut), 0);
                at += k;
            }
            cr_assert_geq(tb_etmv1_parser_finish(p, on_packet, &cut), 0);
            tb_etmv1_parser_free(p);
            cr_assert_eq(cut.n, whole.n);
            cr_assert_eq(memcmp(cut.p, whole.p, whole.n * sizeof whole.p[0]), 0,
                         "width %u round %d", widths[w], round);
        }
        free(b.d);
    }
}

/* ------------------------------------------------------------------ */
/* (d) bad input */

static void expect_gap(const tb_etmv1_config *c, const tb_etmv1_sample *s, size_t n,
                       tb_pkt_kind kind)
{
    tb_memimage *m = prog_image();
    static pbuf pk;
    static ebuf el;
    size_t i, bad = 0, gaps = 0;

    parse_samples(c, s, n, &pk);
    for (i = 0; i < pk.n; i++)
        if (pk.p[i].kind == kind)
            bad++;
    cr_assert_eq(bad, 1, "want one %s", tb_pkt_kind_name(kind));
    decode_packets(c, m, &pk, &el);
    for (i = 0; i < el.n; i++)
        if (el.e[i].kind == TB_ELEM_NO_SYNC && el.e[i].reason == TB_GAP_BAD_PACKET)
            gaps++;
    cr_assert_eq(gaps, 1);
    tb_memimage_free(m);
}

/* A PIPESTAT value a 3-bit port cannot carry, and TRACEPKT bits above a
 * 4-bit port: RESERVED, then a BAD_PACKET gap. */
Test(etmv1_bad, reserved_pipestat_and_wide_packet)
{
    tb_etmv1_config c;
    tb_etmv1_sample s[sizeof ex1 / sizeof ex1[0]];

    ex1_config(&c);
    memcpy(s, ex1, sizeof s);
    s[9].pipestat = 9;
    expect_gap(&c, s, 11, TB_PKT_RESERVED);
    /* 4-bit port (the four_bit_port_packing capture), one 5-bit value */
    {
        static const tb_etmv1_sample s4[] = {
            {4, 1, 0x0}, {0, 0, 0x8}, {0, 0, 0x0}, {0, 0, 0x18}, {0, 0, 0x2},
            {3, 0, 0x8}, {3, 0, 0x0}, {3, 0, 0x8}, {3, 0, 0x0}, {3, 0, 0x1},
        };

        tb_etmv1_config_init(&c);
        c.port_width = 4;
        expect_gap(&c, s4, 10, TB_PKT_RESERVED);
    }
}

/* TD in an APO cycle cannot happen (5.6.1); TRACESYNC in a TD cycle. */
Test(etmv1_bad, bad_sequences)
{
    tb_etmv1_config c;
    tb_etmv1_sample s[sizeof ex1 / sizeof ex1[0]];

    ex1_config(&c);
    memcpy(s, ex1, sizeof s);
    s[7] = S(TB_ETMV1_TD, 0, 0);
    expect_gap(&c, s, 11, TB_PKT_BAD_SEQUENCE);
    memcpy(s, ex1, sizeof s);
    s[10] = S(TB_ETMV1_TD, 1, 0);
    expect_gap(&c, s, 11, TB_PKT_BAD_SEQUENCE);
    /* reserved reason code 5 (U12) in the trace-on address */
    memcpy(s, ex1, sizeof s);
    s[4].tracepkt = 0x50;
    expect_gap(&c, s, 11, TB_PKT_BAD_SEQUENCE);
}

/* Captures cut short: inside the header, inside a sample, before the
 * address of a branch. */
Test(etmv1_bad, truncated)
{
    tb_etmv1_config c;
    tb_etmv1_parser *p;
    uint8_t buf[16 + 4 * 11];
    static pbuf pk;
    size_t i;

    ex1_config(&c);
    tb_etmv1_capture_header(&c, buf);
    for (i = 0; i < 11; i++)
        tb_etmv1_sample_pack(&ex1[i], buf + 16 + 4 * i);
    /* header cut */
    p = tb_etmv1_parser_new(NULL);
    pk.n = 0;
    cr_assert_eq(tb_etmv1_parser_push(p, buf, 10, 0, on_packet, &pk), 0);
    cr_assert_eq(tb_etmv1_parser_finish(p, on_packet, &pk), 1);
    cr_assert_eq(pk.p[0].kind, TB_PKT_INCOMPLETE);
    cr_assert_eq(pk.p[0].err, TB_ERR_TRUNCATED);
    tb_etmv1_parser_free(p);
    /* cut inside sample 9 (cycles 0..8 whole) and before BX r6's
     * address completes: the branch at cycle 6 is INCOMPLETE */
    p = tb_etmv1_parser_new(&c);
    pk.n = 0;
    cr_assert_geq(tb_etmv1_parser_push(p, buf, 16 + 4 * 8 + 2, 0, on_packet, &pk), 0);
    cr_assert_geq(tb_etmv1_parser_finish(p, on_packet, &pk), 0);
    tb_etmv1_parser_free(p);
    cr_assert_eq(pk.p[pk.n - 2].kind, TB_PKT_INCOMPLETE);
    cr_assert_eq(pk.p[pk.n - 2].index, IDX(6));
    cr_assert_eq(pk.p[pk.n - 1].kind, TB_PKT_INCOMPLETE);
    cr_assert_eq(pk.p[pk.n - 1].index, IDX(8));
}

/* A header with a port width ETMv1 does not have, one that disagrees
 * with its ETMCR, one that disagrees with the caller's configuration. */
Test(etmv1_bad, wrong_port_width)
{
    tb_etmv1_config c, d;
    tb_etmv1_parser *p;
    uint8_t h[16];

    tb_etmv1_config_init(&c);
    tb_etmv1_capture_header(&c, h);
    h[11] = 5;
    p = tb_etmv1_parser_new(NULL);
    cr_assert_eq(tb_etmv1_parser_push(p, h, 16, 0, NULL, NULL), TB_ERR_FORMAT);
    cr_assert_eq(tb_etmv1_parser_push(p, h, 1, 16, NULL, NULL), TB_ERR_FORMAT);
    tb_etmv1_parser_free(p);
    h[11] = 8;
    h[12] = 0x30; /* ETMCR port size 3: not ETMv1 */
    tb_etmv1_config_init(&d);
    cr_assert_eq(tb_etmv1_capture_parse_header(h, &d), TB_ERR_FORMAT);
    c.port_width = 16;
    tb_etmv1_capture_header(&c, h);
    c.port_width = 8;
    p = tb_etmv1_parser_new(&c);
    cr_assert_eq(tb_etmv1_parser_push(p, h, 16, 0, NULL, NULL), TB_ERR_MISMATCH);
    tb_etmv1_parser_free(p);
    c.port_width = 12;
    cr_assert_null(tb_etmv1_parser_new(&c));
    cr_assert_eq(tb_etmv1_config_check(&c), TB_ERR_CONFIG);
}

/* Random samples: never a crash, every error an element. */
Test(etmv1_bad, random_samples)
{
    static const uint8_t widths[3] = {4, 8, 16};
    tb_etmv1_config c;
    tb_memimage *m = prog_image();
    static tb_etmv1_sample s[2000];
    static pbuf pk;
    static ebuf el;
    uint64_t seed = 7;
    int round;
    size_t i;

    for (round = 0; round < 30; round++) {
        tb_etmv1_config_init(&c);
        c.port_width = widths[round % 3];
        c.cycle_accurate = round & 1;
        c.ctxid_bytes = (round / 3) % 2 ? 4 : 0;
        for (i = 0; i < 2000; i++) {
            uint64_t r = tb_test_rand(&seed);

            s[i].pipestat = (uint8_t)(r & 7);
            s[i].tracesync = (r >> 3) % 5 == 0;
            s[i].tracepkt = (uint16_t)((r >> 8) & ((1u << c.port_width) - 1));
        }
        parse_samples(&c, s, 2000, &pk);
        decode_packets(&c, m, &pk, &el);
        cr_assert_eq(el.e[el.n - 1].kind, TB_ELEM_END);
    }
    tb_memimage_free(m);
}

/* ------------------------------------------------------------------ */
/* (e) OpenOCD `etm analyze` (docs/etmv1-v2-sources.md 2) */

static const uint32_t oo_prog[] = {
    0xE3A00003, /* 8000 MOV r0, #3 */
    0xE2500001, /* 8004 SUBS r0, r0, #1 */
    0x1AFFFFFD, /* 8008 BNE 8004 */
    0xE3A01902, /* 800C MOV r1, #0x8000 */
    0xE3811020, /* 8010 ORR r1, r1, #0x20 */
    0xE12FFF11, /* 8014 BX r1 */
    0xE1A00000, /* 8018 */
    0xE1A00000, /* 801C */
    0xE3A02000, /* 8020 MOV r2, #0 */
    0xE1A00000, /* 8024 NOP */
    0xEAFFFFFE, /* 8028 B . */
};

static void oo_records(recs *R)
{
    int i;

    memset(R, 0, sizeof *R);
    rec_arm(R, 0x8000);
    for (i = 3; i > 0; i--) {
        rec_arm(R, 0x8004);
        rec_insn(R, 0x8008, 4, TB_ISA_ARM, i > 1 ? 0x8004 : 0x800C, TB_ISA_ARM,
                 TB_WP_DIRECT, i > 1 ? TB_INSN_TAKEN : TB_INSN_COND_FAILED);
    }
    rec_arm(R, 0x800C);
    rec_arm(R, 0x8010);
    rec_insn(R, 0x8014, 4, TB_ISA_ARM, 0x8020, TB_ISA_ARM, TB_WP_INDIRECT, TB_INSN_TAKEN);
    rec_arm(R, 0x8020);
    rec_arm(R, 0x8024);
    rec_insn(R, 0x8028, 4, TB_ISA_ARM, 0x8028, TB_ISA_ARM, TB_WP_DIRECT, TB_INSN_TAKEN);
}

static void openocd_check(uint8_t width, bool ca)
{
    char dir[] = "/tmp/tb_etmv1_XXXXXX", path[256], cmd[1024], line[512];
    tb_etmv1_encoder_opts o;
    tb_etmv1_config c;
    static recs R;
    static sbuf sb;
    uint8_t b[12], img[sizeof oo_prog];
    uint32_t addrs[128];
    size_t n = 0, i, want_n = 0;
    FILE *f;

    cr_assert_not_null(mkdtemp(dir));
    oo_records(&R);
    tb_etmv1_encoder_opts_init(&o);
    o.port_width = width;
    o.base.cycle_accurate = ca;
    tb_etmv1_config_init(&c);
    tb_etmv1_encoder_config(&o, &c);
    encode(&o, &R, &sb);
    snprintf(path, sizeof path, "%s/trace.etm", dir);
    f = fopen(path, "wb");
    cr_assert_not_null(f);
    tb_etmv1_openocd_header(&c, (uint32_t)sb.n, b);
    fwrite(b, 1, 12, f);
    for (i = 0; i < sb.n; i++) {
        tb_etmv1_openocd_sample(&sb.s[i], b);
        fwrite(b, 1, 12, f);
    }
    fclose(f);
    for (i = 0; i < sizeof oo_prog / 4; i++) {
        img[4 * i] = (uint8_t)oo_prog[i];
        img[4 * i + 1] = (uint8_t)(oo_prog[i] >> 8);
        img[4 * i + 2] = (uint8_t)(oo_prog[i] >> 16);
        img[4 * i + 3] = (uint8_t)(oo_prog[i] >> 24);
    }
    snprintf(path, sizeof path, "%s/prog.bin", dir);
    f = fopen(path, "wb");
    fwrite(img, 1, sizeof img, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/etm.cfg", dir);
    f = fopen(path, "w");
    fprintf(f, "adapter driver dummy\nadapter speed 1000\ntransport select jtag\n"
               "gdb_port disabled\ntelnet_port disabled\ntcl_port disabled\n"
               "jtag newtap arm cpu -irlen 4 -ircapture 0x0f -irmask 0x0f "
               "-ignore-version -ignore-bypass\n"
               "target create arm.cpu arm7tdmi -endian little -chain-position arm.cpu "
               "-defer-examine\netm config arm.cpu %u normal full dummy\n"
               "etm_dummy config arm.cpu\n", width);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "cd %s && timeout 60 openocd -f etm.cfg -c init -c 'etm load trace.etm' "
             "-c 'etm image prog.bin 0x8000 bin' -c 'etm analyze' -c shutdown 2>&1",
             dir);
    f = popen(cmd, "r");
    cr_assert_not_null(f);
    while (fgets(line, sizeof line, f)) {
        unsigned long a, op;

        /* "0x%08x\t0x%08x\t..." one line an instruction */
        if (sscanf(line, "0x%lx\t0x%lx", &a, &op) == 2 && n < 128)
            addrs[n++] = (uint32_t)a;
    }
    cr_assert_eq(pclose(f), 0, "openocd failed");
    for (i = 0; i < R.n; i++) {
        cr_assert_lt(want_n, n, "openocd gave %zu instructions", n);
        cr_assert_eq(addrs[want_n], R.r[i].u.insn.addr, "width %u: insn %zu 0x%08X, want 0x%08X",
                     width, want_n, addrs[want_n], R.r[i].u.insn.addr);
        want_n++;
    }
    cr_assert_eq(n, want_n, "width %u: openocd %zu instructions, truth %zu", width, n, want_n);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(etmv1_openocd, etm_analyze_agrees)
{
    if (system("command -v openocd >/dev/null 2>&1") != 0) {
        const char *ci = getenv("CI");

        /* The oracle nobody here wrote: scripts/deps.sh installs it, so CI
         * must have it. */
        if (ci && !strcmp(ci, "true"))
            cr_assert_fail("openocd (Debian package) is required under CI");
        fprintf(stderr, "\n*** SKIPPED: etmv1_openocd: openocd not installed "
                        "(scripts/deps.sh installs it; docs/etmv1-v2-sources.md 2) ***\n\n");
        cr_skip_test("openocd not installed");
    }
    openocd_check(8, false);
    openocd_check(4, false);
    openocd_check(16, false);
    openocd_check(8, true);
}

/* ---- debug halts (docs/debug-halt.md, issue 35) ---- */

/* A debug halt: no entry is traced; the restart is a 5-packet marker with
 * reason b011 "exit from debug state" (etmv1-v2 5.2, U12), unless the
 * restart is outside the filter: then the later marker says trace
 * enabled (b001), as IHI0014Q 7.10.5 Table 7.21 has it for ETMv3. */
Test(etmv1_debug, exit_marker_reason_b011)
{
    static const struct {
        const char *what;
        uint32_t hi;      /* the filter's top: 0 none */
        uint8_t reasons[3];
        size_t n;
    } cases[] = {
        {"traced restart", 0, {TB_ETMV1_R_TRACE_ON, TB_ETMV1_R_DEBUG}, 2},
        {"restart outside the filter", 0x8004, {TB_ETMV1_R_TRACE_ON, TB_ETMV1_R_TRACE_ON}, 2},
    };

    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tb_etmv1_encoder_opts o;
        tb_etmv1_config c;
        static recs R;
        static sbuf sb;
        static pbuf pk;
        tb_exec_record *h;
        size_t i, n = 0;

        memset(&R, 0, sizeof R);
        rec_arm(&R, 0x8000);
        h = &R.r[R.n++];
        memset(h, 0, sizeof *h);
        R.cycle += 50;
        h->kind = TB_REC_EXCEPTION;
        h->seq = R.seq;
        h->cycle = R.cycle;
        h->u.exc.kind = TB_EXC_DEBUG_HALT;
        h->u.exc.isa = TB_ISA_ARM;
        h->u.exc.pref_return = 0x8004;
        rec_arm(&R, 0x8004);
        rec_arm(&R, 0x8000); /* back in any filter */
        tb_etmv1_encoder_opts_init(&o);
        if (cases[k].hi) {
            o.base.n_ranges = 1;
            o.base.ranges[0].lo = 0x8000;
            o.base.ranges[0].hi = cases[k].hi;
        }
        tb_etmv1_config_init(&c);
        cr_assert_eq(tb_etmv1_encoder_config(&o, &c), 0);
        encode(&o, &R, &sb);
        parse_samples(&c, sb.s, sb.n, &pk);
        for (i = 0; i < pk.n; i++) {
            if (pk.p[i].kind != TB_PKT_BRANCH || !pk.p[i].reason)
                continue;
            cr_assert_lt(n, cases[k].n, "%s: more markers than %zu", cases[k].what,
                         cases[k].n);
            cr_expect_eq(pk.p[i].reason, cases[k].reasons[n], "%s: marker %zu reason %u",
                         cases[k].what, n, pk.p[i].reason);
            n++;
        }
        cr_expect_eq(n, cases[k].n, "%s: %zu markers", cases[k].what, n);
    }
}
