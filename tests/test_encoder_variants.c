/*
 * Encoder variants of issue 22, on hand-made exec records: Ignore
 * packets (ignore=N), the standalone cycle count packet after a periodic
 * I-sync (ccpkt), and ETMv3.0-3.2 (v=0..2: format 0, no format 4).  The
 * expected bytes are worked by hand from IHI0014Q 7.3.1 (P-headers), 7.3.4
 * and protocol-notes 2.2-2.8; each stream is then decoded back by the
 * decoder, which must pass Ignore over and count the cycles.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebench/decoder.h"
#include "tracebench/encoder.h"
#include "tracebench/parser.h"
#include "tracebench/snapshot.h"

static uint64_t cyc;

/* An ARM instruction retiring d cycles after the record before it. */
static tb_exec_record arm(uint32_t addr, uint64_t d, bool failed)
{
    tb_exec_record r;

    memset(&r, 0, sizeof r);
    r.kind = TB_REC_INSN;
    r.cycle = cyc += d;
    r.u.insn.addr = addr;
    r.u.insn.isa = TB_ISA_ARM;
    r.u.insn.size = 4;
    r.u.insn.wp_class = TB_WP_NONE;
    r.u.insn.flags = failed ? (TB_INSN_COND_FAILED | TB_INSN_CONDITIONAL) : 0;
    r.u.insn.next_addr = addr + 4;
    r.u.insn.next_isa = TB_ISA_ARM;
    return r;
}

static tb_exec_record irq(uint32_t ret)
{
    tb_exec_record r;

    memset(&r, 0, sizeof r);
    r.kind = TB_REC_EXCEPTION;
    r.cycle = cyc += 3;
    r.u.exc.kind = TB_EXC_IRQ;
    r.u.exc.isa = TB_ISA_ARM;
    r.u.exc.vector = 0x18;
    r.u.exc.pref_return = ret;
    return r;
}

typedef struct {
    tb_encoder_membuf m;
    tb_config cfg;
} run;

static tb_encoder *mk(const char *opts, run *r)
{
    tb_encoder_opts o;
    char err[160];
    tb_encoder *e;

    memset(r, 0, sizeof *r);
    tb_encoder_opts_init(&o, TB_PROTO_ETMV3);
    cr_assert_eq(tb_encoder_opts_parse(&o, opts, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tb_encoder_config_err(&o, &r->cfg, err, sizeof err), 0, "%s", err);
    e = tb_encoder_new(&o, tb_encoder_mem_sink, &r->m);
    cr_assert(e);
    cyc = 0;
    return e;
}

static void push(tb_encoder *e, tb_exec_record r)
{
    cr_assert_eq(tb_encoder_push(e, &r), 0);
}

static void expect_bytes(const run *r, const uint8_t *want, size_t n)
{
    char got[512] = "";

    for (size_t i = 0; i < r->m.len && i < 100; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%02x ", r->m.buf[i]);
    cr_assert_eq(r->m.len, n, "length %zu, want %zu: %s", r->m.len, n, got);
    cr_assert_eq(memcmp(r->m.buf, want, n), 0, "bytes: %s", got);
}

/* Decodes the stream: instructions seen and the cycles given to them. */
typedef struct {
    uint64_t insns, cycles, gaps_cc;
    unsigned errors;
} dec;

static int on_el(void *ctx, const tb_element *el)
{
    dec *d = ctx;

    if (el->kind == TB_ELEM_INSN_RANGE) {
        d->insns += el->count;
        if (el->has_cc)
            d->cycles += el->cc;
    } else if (el->kind == TB_ELEM_CYCLE_COUNT || el->kind == TB_ELEM_TRACE_ON) {
        if (el->has_cc)
            d->gaps_cc += el->cc;
    } else if (el->kind == TB_ELEM_NO_SYNC && d->insns) {
        d->errors++; /* a gap after trace started: a decode error */
    } else if (el->kind == TB_ELEM_ADDR_NACC || el->kind == TB_ELEM_ADDR_UNKNOWN) {
        d->errors++;
    }
    return 0;
}

static dec decode(const run *r)
{
    static uint8_t nops[0x2000];
    tb_memimage *mem = tb_memimage_new();
    tb_decoder *d;
    tb_parser *p;
    dec out;

    memset(&out, 0, sizeof out);
    /* MOV r0, r0 (0xE1A00000) everywhere: no instruction branches. */
    for (size_t i = 0; i < sizeof nops; i += 4)
        memcpy(nops + i, "\x00\x00\xa0\xe1", 4);
    cr_assert(mem);
    cr_assert_eq(tb_memimage_add(mem, 0, nops, sizeof nops), 0);
    d = tb_decoder_new(&r->cfg, mem);
    p = tb_parser_new(&r->cfg);
    cr_assert(d && p);
    cr_assert_geq(tb_decoder_push(d, p, r->m.buf, r->m.len, 0, on_el, &out), 0);
    cr_assert_geq(tb_decoder_push_finish(d, p, on_el, &out), 0);
    tb_parser_free(p);
    tb_decoder_free(d);
    tb_memimage_free(mem);
    return out;
}

/* ignore=2: an Ignore (0x66, IHI0014Q 7.11.2, protocol-notes 2.8) after
 * every two packets sent: A-sync, I-sync, Ignore, then the P-header. */
Test(encoder_variants, ignore_every_two_packets)
{
    run r;
    tb_encoder *e = mk("ignore=2", &r);
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x80,       /* A-sync (2.3) */
        0x08, 0x21, 0x00, 0x10, 0x00, 0x00,       /* I-sync, trace on, 0x1000 (2.4) */
        0x66,                                     /* Ignore */
        0x8C,                                     /* format 1 b10001100: E E E (2.5) */
    };

    push(e, arm(0x1000, 1, false));
    push(e, arm(0x1004, 1, false));
    push(e, arm(0x1008, 1, false));
    cr_assert_eq(tb_encoder_finish(e), 0);
    expect_bytes(&r, want, sizeof want);
    tb_encoder_free(e);
    /* The decoder passes the Ignore over: all three instructions. */
    dec d = decode(&r);
    cr_assert_eq(d.insns, 3);
    cr_assert_eq(d.errors, 0);
    free(r.m.buf);
}

Test(encoder_variants, ignore_and_ccpkt_are_checked)
{
    tb_encoder_opts o;
    tb_config cfg;
    char err[160];

    tb_encoder_opts_init(&o, TB_PROTO_ETMV3);
    cr_assert_eq(tb_encoder_opts_parse(&o, "ignore=0", err, sizeof err), TB_ERR_INVAL);
    cr_assert_eq(tb_encoder_opts_parse(&o, "ccpkt", err, sizeof err), 0);
    cr_assert_eq(tb_encoder_config_err(&o, &cfg, err, sizeof err), TB_ERR_CONFIG);
    cr_assert(strstr(err, "ca"), "%s", err);
    /* PTM has Ignore packets (IHI0035B 4.5 Table 4.1) but no cycle count
     * packet. */
    tb_encoder_opts_init(&o, TB_PROTO_PTM);
    cr_assert_eq(tb_encoder_opts_parse(&o, "ignore=3", err, sizeof err), 0);
    cr_assert_eq(tb_encoder_config_err(&o, &cfg, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tb_encoder_opts_parse(&o, "ca,ccpkt", err, sizeof err), 0);
    cr_assert_eq(tb_encoder_config_err(&o, &cfg, err, sizeof err), TB_ERR_CONFIG);
    cr_assert(strstr(err, "PTM"), "%s", err);
}

/* ca,ccpkt: A (cycle 1), an IRQ (cycle 4), B at the vector (cycle 5).
 * sync=8: the P-header of A brings the byte count to 8, so B starts with
 * a periodic I-sync (0x08, no CC: protocol-notes 2.4), then the cycle
 * count packet: the cycles since the last count (A, cycle 1) up to the
 * cycle before B, 4 - 1 = 3 (0x04 0x03, encoding 2.6); B's header then
 * gives its last W: WE (0x84), not WWWWE (0xEC). */
Test(encoder_variants, ccpkt_after_periodic_isync)
{
    run r;
    tb_encoder *e = mk("ca,ccpkt,sync=8", &r);
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x80,       /* A-sync */
        0x70, 0x00, 0x21, 0x00, 0x10, 0x00, 0x00, /* I-sync with CC 0, trace on */
        0x84,                                     /* CA format 1: W E (A) */
        /* Exception branch to 0x18: 5 bytes (exception bytes only after a
         * 5-byte address, original encoding 2.7), exc byte IRQ = 14. */
        0x8D, 0x80, 0x80, 0x80, 0x48, 0x1C,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x80,       /* A-sync (period) */
        0x08, 0x01, 0x18, 0x00, 0x00, 0x00,       /* I-sync periodic, 0x18 */
        0x04, 0x03,                               /* cycle count 3 */
        0x84,                                     /* W E (B) */
    };

    push(e, arm(0x1000, 1, false));
    push(e, irq(0x1004));
    push(e, arm(0x18, 1, false));
    cr_assert_eq(tb_encoder_finish(e), 0);
    expect_bytes(&r, want, sizeof want);
    tb_encoder_free(e);
    /* The decoder adds the count to the pending cycles (4.2 step 6): A
     * gets 1, B 3 + 1 = 4, the 5 cycles of the run. */
    dec d = decode(&r);
    cr_assert_eq(d.insns, 2);
    cr_assert_eq(d.errors, 0);
    cr_assert_eq(d.cycles + d.gaps_cc, 5, "cycles %llu + %llu",
                 (unsigned long long)d.cycles, (unsigned long long)d.gaps_cc);
    free(r.m.buf);
}

/* Without ccpkt the same run gives B its four W's in one format 3
 * header, b11101100 (protocol-notes 2.5). */
Test(encoder_variants, no_ccpkt_gives_format3)
{
    run r;
    tb_encoder *e = mk("ca,sync=8", &r);

    push(e, arm(0x1000, 1, false));
    push(e, irq(0x1004));
    push(e, arm(0x18, 1, false));
    cr_assert_eq(tb_encoder_finish(e), 0);
    cr_assert_geq(r.m.len, 1);
    cr_assert_eq(r.m.buf[r.m.len - 1], 0xEC);
    cr_assert_eq(r.m.buf[r.m.len - 7], 0x08); /* the periodic I-sync just before */
    tb_encoder_free(e);
    free(r.m.buf);
}

/* v=0,ca: A one cycle after trace-on, N two cycles after A.  The DP gives
 * A "W E" (format 1, 0x84) and N a lone W then "W N" (format 1, 0xC0);
 * ETMv3.0 writes the lone W as format 0, b10000000 (IHI0014Q 7.3.1
 * Table 7.3, protocol-notes 2.1, 2.5; preferring it to a one-W format 3
 * is the model's choice), ETMv3.3 as format 3, b10100000. */
static void lone_w(const char *opts, uint8_t w_hdr)
{
    run r;
    tb_encoder *e = mk(opts, &r);
    const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x00, 0x00, 0x80,
        0x70, 0x00, 0x21, 0x00, 0x10, 0x00, 0x00,
        0x84, w_hdr, 0xC0,
    };

    push(e, arm(0x1000, 1, false));
    push(e, arm(0x1004, 2, true));
    cr_assert_eq(tb_encoder_finish(e), 0);
    expect_bytes(&r, want, sizeof want);
    tb_encoder_free(e);
    dec d = decode(&r);
    cr_assert_eq(d.insns, 2);
    cr_assert_eq(d.errors, 0);
    cr_assert_eq(d.cycles + d.gaps_cc, 3);
    free(r.m.buf);
}

Test(encoder_variants, v30_lone_w_is_format0)
{
    lone_w("v=0,ca", 0x80);
}

Test(encoder_variants, v33_lone_w_is_format3)
{
    lone_w("v=3,ca", 0xA0);
}

/* ETMv3.1 / 3.2: no format 4 before ETMv3.3 (protocol-notes 2.1), so two
 * instructions in the same cycle get a W each: "W E" "W E" in one format
 * 1 header (0x88), where ETMv3.5 has "W E E" (format 2, 0x82) for the
 * second with no W.  The model adds the cycle (etmv3_encoder.c
 * etm_atom). */
Test(encoder_variants, no_format4_before_v33)
{
    static const char *const v[] = {"v=1,ca", "v=2,ca", "v=5,ca"};
    static const uint8_t hdr[] = {0x88, 0x88, 0x82};

    for (unsigned i = 0; i < 3; i++) {
        run r;
        tb_encoder *e = mk(v[i], &r);

        push(e, arm(0x1000, 1, false));
        push(e, arm(0x1004, 0, false));
        cr_assert_eq(tb_encoder_finish(e), 0);
        cr_assert_eq(r.m.len, 14, "%s", v[i]);
        cr_assert_eq(r.m.buf[13], hdr[i], "%s: 0x%02x", v[i], r.m.buf[13]);
        tb_encoder_free(e);
        cr_assert_eq(decode(&r).insns, 2);
        free(r.m.buf);
    }
}
