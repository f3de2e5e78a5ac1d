/*
 * PTM (PFT 1.0/1.1) packet writer and parser.
 *
 * Oracles: the worked examples of protocol-notes 3.x and 7.1 (decoded by
 * hand and checked there against OpenCSD and DS-5); the real silicon
 * streams (TC2 PTM 0x13, Snowball 0x10/0x11, trace_cov_a15) with totals
 * taken from trc_pkt_lister 1.3.3's listing of them; and the real bytes
 * themselves, which the writer must reproduce from the parsed fields.
 * Then writer->parser round trips over random configurations, random
 * chunkings, and corrupted input.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../decoder/protocols.h"
#include "../encoder/writers.h"
#include "tb_test.h"
#include "tracebench/frame.h"
#include "tracebench/parser.h"
#include "tracebench/writer.h"

/* ------------------------------------------------------------------ */
/* Helpers. */

typedef struct pvec {
    tb_packet *v;
    size_t n, cap;
} pvec;

static int collect(void *ctx, const tb_packet *p)
{
    pvec *pv = ctx;

    if (pv->n == pv->cap) {
        pv->cap = pv->cap ? pv->cap * 2 : 256;
        pv->v = realloc(pv->v, pv->cap * sizeof *pv->v);
        cr_assert_not_null(pv->v);
    }
    pv->v[pv->n++] = *p;
    return 0;
}

static void pvec_free(pvec *pv)
{
    free(pv->v);
    memset(pv, 0, sizeof *pv);
}

static tb_config cfg_of(uint32_t etmcr, uint32_t etmidr, uint32_t etmccer,
                        uint32_t traceid)
{
    tb_config c;

    cr_assert_eq(tb_config_from_regs(&c, etmcr, etmidr, etmccer, traceid), 0);
    cr_assert_eq(c.protocol, TB_PROTO_PTM);
    return c;
}

/* The snapshots' registers (protocol-notes 1.3, 5.2). */
static tb_config cfg_tc2(void) { return cfg_of(0x10001000, 0x411CF312, 0x34C01AC2, 0x13); }
static tb_config cfg_snowball(void) { return cfg_of(0x10001000, 0x411CF301, 0x000008EA, 0x10); }
static tb_config cfg_rstk(void) { return cfg_of(0x20000400, 0x411CF312, 0x34C01AC2, 0x00); }

/* Parses a stream whose byte i has index idx[i] (NULL: base + i), in
 * chunks of 1..maxchunk bytes (0: one push), never across an index jump. */
static void parse_stream(const tb_config *cfg, const uint8_t *d,
                         const uint64_t *idx, uint64_t base, size_t n,
                         size_t maxchunk, uint64_t seed, pvec *out)
{
    tb_ptm_parser *p = tb_ptm_parser_new(cfg);
    size_t i = 0;

    cr_assert_not_null(p);
    while (i < n) {
        size_t c = n - i, j;
        uint64_t at = idx ? idx[i] : base + i;
        if (maxchunk) {
            size_t r = 1 + (size_t)(tb_test_rand(&seed) % maxchunk);
            if (r < c)
                c = r;
        }
        if (idx)
            for (j = 1; j < c; j++)
                if (idx[i + j] != at + j) {
                    c = j;
                    break;
                }
        cr_assert_geq(tb_ptm_parser_push(p, d + i, c, at, collect, out), 0);
        i += c;
    }
    cr_assert_geq(tb_ptm_parser_finish(p, collect, out), 0);
    tb_ptm_parser_free(p);
}

static void parse_bytes(const tb_config *cfg, const uint8_t *d, size_t n,
                        uint64_t base, pvec *out)
{
    parse_stream(cfg, d, NULL, base, n, 0, 0, out);
}

static void assert_same_packets(const pvec *a, const pvec *b, const char *what)
{
    size_t i;

    cr_assert_eq(a->n, b->n, "%s: %zu packets vs %zu", what, a->n, b->n);
    for (i = 0; i < a->n; i++)
        cr_assert(memcmp(&a->v[i], &b->v[i], sizeof a->v[i]) == 0,
                  "%s: packet %zu (index %llu, %s) differs", what, i,
                  (unsigned long long)a->v[i].index,
                  tb_pkt_kind_name(a->v[i].kind));
}

static const char *seq_str(const tb_packet *p, char *buf)
{
    memcpy(buf, p->seq, p->seq_len);
    buf[p->seq_len] = 0;
    return buf;
}

#define ASYNC6 0x00, 0x00, 0x00, 0x00, 0x00, 0x80

/* ------------------------------------------------------------------ */
/* Worked examples. */

/* protocol-notes 7.1: the first 48 bytes of TC2 0x13 from its A-sync
 * (PFT1.1, cycle-accurate, 64-bit timestamps, no CtxtID). */
Test(ptm_worked, tc2_0x13_first_48_bytes)
{
    static const uint8_t s[] = {
        ASYNC6, 0x08, 0x83, 0x8D, 0x01, 0xC0, 0x01,
        0x42, 0xCC, 0x97, 0xC6, 0xCE, 0xAF, 0x90, 0x80, 0x80, 0x00, 0x00,
        0xE8, 0x20, 0xDE, 0x01, 0xBC,
        0x08, 0xDF, 0x8D, 0x01, 0xC0, 0x21, 0xCC, 0x03, 0x84,
        0x08, 0xE5, 0x8D, 0x01, 0xC0, 0x21, 0xE4, 0x07, 0x84, 0xC2, 0x01};
    static const struct {
        tb_pkt_kind kind;
        unsigned off, size;
        char atom;
        int cc; /* -1: none */
    } want[] = {
        {TB_PKT_ASYNC, 0, 6, 0, -1},      {TB_PKT_ISYNC, 6, 6, 0, -1},
        {TB_PKT_TIMESTAMP, 12, 11, 0, 0}, {TB_PKT_ATOM, 23, 2, 'E', 522},
        {TB_PKT_ATOM, 25, 2, 'N', 23},    {TB_PKT_ATOM, 27, 1, 'E', 15},
        {TB_PKT_ISYNC, 28, 8, 0, 51},     {TB_PKT_ATOM, 36, 1, 'E', 1},
        {TB_PKT_ISYNC, 37, 8, 0, 121},    {TB_PKT_ATOM, 45, 1, 'E', 1},
        {TB_PKT_ATOM, 46, 2, 'N', 16},
    };
    tb_config cfg = cfg_tc2();
    pvec pv = {0};
    size_t i;

    cr_assert_eq(sizeof s, 48);
    parse_bytes(&cfg, s, sizeof s, 26566, &pv);
    cr_assert_eq(pv.n, sizeof want / sizeof want[0]);
    for (i = 0; i < pv.n; i++) {
        const tb_packet *p = &pv.v[i];
        cr_assert_eq(p->kind, want[i].kind, "packet %zu", i);
        cr_assert_eq(p->index, 26566 + want[i].off, "packet %zu", i);
        cr_assert_eq(p->size, want[i].size, "packet %zu", i);
        cr_assert(memcmp(p->bytes, s + want[i].off, p->size) == 0);
        cr_assert_eq(p->has_cc, want[i].cc >= 0, "packet %zu", i);
        if (want[i].cc >= 0)
            cr_assert_eq(p->cc, (uint32_t)want[i].cc, "packet %zu", i);
        if (want[i].atom) {
            cr_assert_eq(p->seq_len, 1);
            cr_assert_eq(p->atom_count, 1);
            cr_assert_eq(p->seq[0], want[i].atom, "packet %zu", i);
        }
    }
    /* I-syncs: T bit -> Thumb, PC = address & ~1; info 0x01 / 0x21. */
    cr_assert_eq(pv.v[1].addr, 0xC0018D82);
    cr_assert_eq(pv.v[1].isa, TB_ISA_THUMB);
    cr_assert_eq(pv.v[1].reason, TB_ISYNC_PERIODIC);
    cr_assert_eq(pv.v[1].addr_bits, 32);
    cr_assert(pv.v[1].addr_known);
    cr_assert(!pv.v[1].ns && !pv.v[1].hyp && !pv.v[1].altisa);
    cr_assert(!pv.v[1].has_ctxid);
    cr_assert_eq(pv.v[6].addr, 0xC0018DDE);
    cr_assert_eq(pv.v[6].reason, TB_ISYNC_TRACE_ON);
    cr_assert_eq(pv.v[8].addr, 0xC0018DE4);
    /* Full 64-bit timestamp: 0x82F9D18BCC = 562537008076. */
    cr_assert_eq(pv.v[2].ts, 0x82F9D18BCCull);
    cr_assert_eq(pv.v[2].ts_bits, 64);
    pvec_free(&pv);
}

/* One address packet after an I-sync that sets the compression base. */
static tb_packet one_after_isync(const tb_config *cfg, uint32_t base,
                                 bool thumb, uint8_t info,
                                 const uint8_t *pkt, size_t n)
{
    uint8_t s[64] = {ASYNC6, 0x08};
    uint32_t a = base | (thumb ? 1u : 0u);
    pvec pv = {0};
    tb_packet r;
    size_t len = 7, i;

    for (i = 0; i < 4; i++)
        s[len++] = (uint8_t)(a >> (8 * i));
    s[len++] = info;
    if (cfg->cycle_accurate && ((info >> 5) & 3))
        s[len++] = 0x80; /* I-sync CC = 0 */
    memcpy(s + len, pkt, n);
    len += n;
    parse_bytes(cfg, s, len, 0, &pv);
    cr_assert_eq(pv.n, 3, "%zu packets", pv.n);
    cr_assert_eq(pv.v[2].size, n);
    r = pv.v[2];
    pvec_free(&pv);
    return r;
}

/* protocol-notes 7.1 "Extra PTM snippets" (TC2, CA). */
Test(ptm_worked, tc2_thumb_branches)
{
    tb_config cfg = cfg_tc2();
    static const uint8_t b1[] = {0xBB, 0xB6, 0xBD, 0x01, 0x04};
    static const uint8_t b2[] = {0xA1, 0xAB, 0x8F, 0x00, 0x7C, 0x1F};
    tb_packet p;

    /* From the previous branch, 0xC00185A2 (TC2 Idx 26636). */
    p = one_after_isync(&cfg, 0xC00185A2, true, 0x01, b1, sizeof b1);
    cr_assert_eq(p.kind, TB_PKT_BRANCH);
    cr_assert_eq(p.addr, 0xC02F5B3A);
    cr_assert_eq(p.addr_bits, 27); /* OpenCSD ~[0x2F5B3A]: A[26:0] */
    cr_assert_eq(p.addr & ((1u << p.addr_bits) - 1), 0x2F5B3A);
    cr_assert_eq(p.isa, TB_ISA_THUMB);
    cr_assert(!p.isa_changed && p.addr_known && !p.has_exc);
    cr_assert(p.has_cc);
    cr_assert_eq(p.cc, 1);

    /* A last byte of 00 clears A[26:21]. */
    p = one_after_isync(&cfg, 0xC03E4658, true, 0x01, b2, sizeof b2);
    cr_assert_eq(p.addr, 0xC003D5A0);
    cr_assert_eq(p.cc, 511);
}

/* rstk (PFT1.1, not CA, return stack): ISA change forces 5 bytes; the
 * debug-halt exception packet. */
Test(ptm_worked, rstk_arm_branches)
{
    tb_config cfg = cfg_rstk();
    static const uint8_t arm5[] = {0xBD, 0x85, 0x80, 0x80, 0x0C};
    static const uint8_t halt[] = {0x81, 0x80, 0x80, 0x80, 0x48, 0x02};
    tb_packet p;

    p = one_after_isync(&cfg, 0x80000100, true, 0x01, arm5, sizeof arm5);
    cr_assert_eq(p.addr, 0x80000578);
    cr_assert_eq(p.isa, TB_ISA_ARM);
    cr_assert(p.isa_changed);
    cr_assert_eq(p.addr_bits, 32);
    cr_assert(!p.has_cc);

    p = one_after_isync(&cfg, 0x80000558, false, 0x61, halt, sizeof halt);
    cr_assert_eq(p.addr, 0);
    cr_assert_eq(p.isa, TB_ISA_ARM);
    cr_assert(p.has_exc);
    cr_assert_eq(p.exc_num, 1); /* debug halt */
    cr_assert_eq(p.exc_bytes, 1);
    cr_assert(p.ns_valid && !p.ns);
}

/* Snowball (PFT1.0, CA): WP update then IRQ (protocol-notes 3.7, 7.1). */
Test(ptm_worked, snowball_wp_update_and_irq)
{
    tb_config cfg = cfg_snowball();
    static const uint8_t s[] = {ASYNC6, 0x08, 0xC0, 0x0E, 0x01, 0xC0, 0x29,
                                0x90, /* I-sync 0xC0010EC0 ARM NS, CC 4 */
                                0x72, 0x79,
                                0x8D, 0x80, 0xFE, 0xFF, 0x4F, 0x1D, 0x3C};
    pvec pv = {0};

    parse_bytes(&cfg, s, sizeof s, 0, &pv);
    cr_assert_eq(pv.n, 4);
    cr_assert_eq(pv.v[1].kind, TB_PKT_ISYNC);
    cr_assert(pv.v[1].ns);
    cr_assert_eq(pv.v[1].cc, 4);
    cr_assert_eq(pv.v[2].kind, TB_PKT_WP_UPDATE);
    cr_assert_eq(pv.v[2].addr, 0xC0010EF0);
    cr_assert_eq(pv.v[2].addr_bits, 8); /* OpenCSD ~[0xF0] */
    cr_assert(!pv.v[2].has_cc && !pv.v[2].has_exc);
    cr_assert_eq(pv.v[3].kind, TB_PKT_BRANCH);
    cr_assert_eq(pv.v[3].addr, 0xFFFF0018);
    cr_assert_eq(pv.v[3].isa, TB_ISA_ARM);
    cr_assert(pv.v[3].has_exc);
    cr_assert_eq(pv.v[3].exc_num, 14); /* IRQ */
    cr_assert(pv.v[3].ns_valid && pv.v[3].ns);
    cr_assert_eq(pv.v[3].cc, 15);
    pvec_free(&pv);
}

/* protocol-notes 3.6 CC examples, as CA atoms and a branch CC. */
Test(ptm_worked, cycle_count_fields)
{
    tb_config cfg = cfg_tc2();
    static const uint8_t s[] = {ASYNC6, 0xE8, 0x17,          /* E, 378 */
                                0x79, 0x70, 0xA3, 0x8D, 0x09, /* CC 2386492 */
                                0x80,                         /* E, 0 */
                                0xFE, 0xFF, 0xFF, 0xFF, 0xFF}; /* N, max */
    pvec pv = {0};

    parse_bytes(&cfg, s, sizeof s, 0, &pv);
    cr_assert_eq(pv.n, 5);
    cr_assert_eq(pv.v[1].cc, 10 + (0x17 << 4));
    cr_assert_eq(pv.v[2].kind, TB_PKT_BRANCH);
    cr_assert_eq(pv.v[2].size, 5);
    cr_assert_eq(pv.v[2].cc, 2386492);
    cr_assert_eq(pv.v[3].cc, 0);
    cr_assert_eq(pv.v[3].seq[0], 'E');
    /* Fifth CC byte ends the field whatever its bit 7 says. */
    cr_assert_eq(pv.v[4].size, 5);
    cr_assert_eq(pv.v[4].seq[0], 'N');
    cr_assert_eq(pv.v[4].cc, 0xFFFFFFFFu);
    pvec_free(&pv);
}

/* protocol-notes 3.5: oldest atom in the highest atom bit. */
Test(ptm_worked, atom_bit_order)
{
    tb_config cfg = cfg_rstk();
    static const uint8_t s[] = {ASYNC6, 0xF0, 0xBC, 0x8A, 0x98,
                                0x84, 0x86, 0xC0, 0xFE, 0x80, 0x82};
    static const char *const want[] = {"NNEEE", "NNNE", "EN", "NEE", "E", "N",
                                       "EEEEE", "NNNNN", "E", "N"};
    pvec pv = {0};
    char buf[24];
    size_t i;

    parse_bytes(&cfg, s, sizeof s, 0, &pv);
    cr_assert_eq(pv.n, 11);
    for (i = 0; i < 10; i++) {
        cr_assert_eq(pv.v[1 + i].kind, TB_PKT_ATOM);
        cr_assert_str_eq(seq_str(&pv.v[1 + i], buf), want[i]);
        cr_assert_eq(pv.v[1 + i].atom_count, strlen(want[i]));
        cr_assert(!pv.v[1 + i].has_cc);
    }
    pvec_free(&pv);
}

/* Before any I-sync the ISA is unknown: OpenCSD reads the address in the
 * Thumb layout and prints Snowball 0x10 Idx 1173 (FF 26 04) as
 * "Addr=0x????137E (12:0) ~[0x137E]; Cycles=1". */
Test(ptm_worked, snowball_branch_before_isync)
{
    tb_config cfg = cfg_snowball();
    static const uint8_t s[] = {ASYNC6, 0xBE, 0x86, 0xFF, 0x26, 0x04};
    pvec pv = {0};

    parse_bytes(&cfg, s, sizeof s, 1164, &pv);
    cr_assert_eq(pv.n, 4);
    cr_assert_eq(pv.v[1].seq[0], 'N');
    cr_assert_eq(pv.v[1].cc, 15);
    cr_assert_eq(pv.v[3].kind, TB_PKT_BRANCH);
    cr_assert_eq(pv.v[3].isa, TB_ISA_UNKNOWN);
    cr_assert(!pv.v[3].addr_known);
    cr_assert_eq(pv.v[3].cc, 1);
    cr_assert_eq(pv.v[3].addr_bits, 13,
                 "addr_bits %u: the unknown-ISA layout is Thumb's "
                 "(common/pkt_codec.c uses ARM's)", pv.v[3].addr_bits);
    cr_assert_eq(pv.v[3].addr, 0x137E);
    pvec_free(&pv);
}

/* protocol-notes 3.3: extra leading zeros belong to the A-sync; the
 * bytes before the first A-sync are one NOTSYNC. */
Test(ptm_worked, async_and_notsync)
{
    tb_config cfg = cfg_rstk();
    static const uint8_t s[] = {0x12, 0x00, 0x34, 0x00, 0x00, 0x80, 0x00, 0x00,
                                0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x0C, 0x66,
                                0x76};
    pvec pv = {0};

    parse_bytes(&cfg, s, sizeof s, 100, &pv);
    cr_assert_eq(pv.n, 5);
    cr_assert_eq(pv.v[0].kind, TB_PKT_NOTSYNC);
    cr_assert_eq(pv.v[0].index, 100);
    cr_assert_eq(pv.v[0].count, 6);
    cr_assert_eq(pv.v[1].kind, TB_PKT_ASYNC);
    cr_assert_eq(pv.v[1].index, 106);
    cr_assert_eq(pv.v[1].size, 8);
    cr_assert_eq(pv.v[2].kind, TB_PKT_TRIGGER);
    cr_assert_eq(pv.v[3].kind, TB_PKT_IGNORE);
    cr_assert_eq(pv.v[4].kind, TB_PKT_EXC_RETURN);
    cr_assert_eq(pv.v[4].index, 116);
    pvec_free(&pv);

    /* No A-sync at all: one NOTSYNC at finish. */
    parse_bytes(&cfg, s, 5, 7, &pv);
    cr_assert_eq(pv.n, 1);
    cr_assert_eq(pv.v[0].kind, TB_PKT_NOTSYNC);
    cr_assert_eq(pv.v[0].index, 7);
    cr_assert_eq(pv.v[0].count, 5);
    pvec_free(&pv);
}

/* A wrapped ETB dump starts with hundreds of bytes before the first
 * A-sync (Snowball's: 977; tb_test_junk's bytes hold none): it is all
 * one NOTSYNC, the same in any chunks (the hunt skips to the next zero
 * in one step). */
Test(ptm_worked, long_junk_before_async)
{
    enum { JUNK = 400 };
    static const uint8_t tail[] = {0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x0C, 0x76};
    tb_config cfg = cfg_rstk();
    uint8_t s[JUNK + sizeof tail];
    pvec whole = {0}, part = {0};

    tb_test_junk(s, JUNK);
    memcpy(s + JUNK, tail, sizeof tail);
    parse_bytes(&cfg, s, sizeof s, 1000, &whole);
    cr_assert_eq(whole.n, 4);
    tb_test_expect_junk(whole.v, whole.n, 1000, JUNK);
    cr_assert_eq(whole.v[2].kind, TB_PKT_TRIGGER);
    cr_assert_eq(whole.v[3].kind, TB_PKT_EXC_RETURN);
    for (size_t maxchunk = 1; maxchunk <= 64; maxchunk *= 4) {
        parse_stream(&cfg, s, NULL, 1000, sizeof s, maxchunk, maxchunk, &part);
        assert_same_packets(&whole, &part, "chunked");
        pvec_free(&part);
    }
    /* Junk only: one NOTSYNC at finish, whatever the chunks. */
    parse_stream(&cfg, s, NULL, 7, JUNK, 13, 5, &part);
    cr_assert_eq(part.n, 1);
    tb_test_expect_junk(part.v, part.n, 7, JUNK);
    pvec_free(&part);
    pvec_free(&whole);
}

/* Context ID (per ETMCR[15:14]), VMID, and the I-sync's CtxtID after its
 * info byte and CC (protocol-notes 3.4, 3.9). */
Test(ptm_worked, context_and_vmid)
{
    /* CA, 4-byte CtxtID, VMID on, PFT1.1. */
    tb_config cfg = cfg_of(0x5000D000, 0x411CF312, 0x34C01AC2, 0x13);
    static const uint8_t s[] = {ASYNC6,
                                0x08, 0x00, 0x10, 0x00, 0x80, 0x6B, 0xD4, 0x01,
                                0x78, 0x56, 0x34, 0x12,
                                0x6E, 0xEF, 0xBE, 0xAD, 0xDE, 0x3C, 0x7F};
    pvec pv = {0};

    cr_assert_eq(cfg.ctxid_bytes, 4);
    parse_bytes(&cfg, s, sizeof s, 0, &pv);
    cr_assert_eq(pv.n, 4);
    cr_assert_eq(pv.v[1].kind, TB_PKT_ISYNC);
    cr_assert_eq(pv.v[1].addr, 0x80001000);
    cr_assert_eq(pv.v[1].isa, TB_ISA_ARM);
    cr_assert_eq(pv.v[1].reason, TB_ISYNC_DEBUG_EXIT);
    cr_assert(pv.v[1].ns && pv.v[1].hyp && !pv.v[1].altisa);
    cr_assert_eq(pv.v[1].cc, 5 + (1 << 4));
    cr_assert(pv.v[1].has_ctxid);
    cr_assert_eq(pv.v[1].context_id, 0x12345678);
    cr_assert_eq(pv.v[2].kind, TB_PKT_CONTEXT_ID);
    cr_assert_eq(pv.v[2].context_id, 0xDEADBEEF);
    cr_assert_eq(pv.v[3].kind, TB_PKT_VMID);
    cr_assert_eq(pv.v[3].vmid, 0x7F);
    pvec_free(&pv);
}

/* ------------------------------------------------------------------ */
/* Writer: minimal compression on worked cases. */

static int wr(tb_ptm_writer *w, tb_packet p, uint8_t *out)
{
    return tb_ptm_writer_write(w, &p, out, 64);
}

static tb_packet mk(tb_pkt_kind k)
{
    tb_packet p;

    memset(&p, 0, sizeof p);
    p.kind = k;
    p.protocol = TB_PROTO_PTM;
    return p;
}

static tb_packet mk_addr(tb_pkt_kind k, uint32_t addr, tb_isa isa)
{
    tb_packet p = mk(k);

    p.addr = addr;
    p.isa = isa;
    return p;
}

Test(ptm_writer, minimal_addresses_reproduce_silicon)
{
    tb_config cfg = cfg_tc2();
    tb_ptm_writer *w = tb_ptm_writer_new(&cfg);
    uint8_t out[64];
    tb_packet p;
    int n;

    cr_assert_not_null(w);
    /* I-sync: address first, info bit 0 = 1, no CC when periodic. */
    p = mk_addr(TB_PKT_ISYNC, 0xC00185A2, TB_ISA_THUMB);
    n = wr(w, p, out);
    cr_assert_eq(n, 6);
    cr_assert(memcmp(out, "\x08\xA3\x85\x01\xC0\x01", 6) == 0);
    /* TC2 0x13: 0xC00185A2 -> 0xC02F5B3A is BB B6 BD 01 + CC 04. */
    p = mk_addr(TB_PKT_BRANCH, 0xC02F5B3A, TB_ISA_THUMB);
    p.cc = 1;
    n = wr(w, p, out);
    cr_assert_eq(n, 5);
    cr_assert(memcmp(out, "\xBB\xB6\xBD\x01\x04", 5) == 0);
    /* Same address again: one byte (+ CC). */
    n = wr(w, p, out);
    cr_assert_eq(n, 2);
    /* Seed rule: A[31:20] unchanged, bit 19 changed -> three bytes. */
    p = mk_addr(TB_PKT_BRANCH, 0xC0000000, TB_ISA_THUMB);
    cr_assert_eq(wr(w, p, out), 4 + 1); /* 0x002F5B3A differs: A[26:0] */
    p.addr = 0xC0080000;
    cr_assert_eq(wr(w, p, out), 3 + 1);
    /* ISA change forces five bytes even with equal high bits. */
    p = mk_addr(TB_PKT_BRANCH, 0xC0080000, TB_ISA_ARM);
    cr_assert_eq(wr(w, p, out), 5 + 1);
    cr_assert_eq(out[4] & 0x38, 0x08); /* byte 5 names ARM */
    /* Exception: two address bytes at least (byte 1 has no X bit). */
    p = mk_addr(TB_PKT_BRANCH, 0xC0080000, TB_ISA_ARM);
    p.has_exc = true;
    p.exc_num = 14;
    p.ns = true;
    p.cc = 15;
    n = wr(w, p, out);
    cr_assert_eq(n, 2 + 1 + 1);
    cr_assert_eq(out[1] & 0xC0, 0x40); /* last address byte: X set */
    cr_assert_eq(out[2], 0x1D);        /* IRQ, NS */
    cr_assert_eq(out[3], 0x3C);        /* CC 15 */
    /* TC2 0x13: full TS after sync, then only changed bits. */
    p = mk(TB_PKT_TIMESTAMP);
    p.ts = 0x82F9D18BCCull;
    n = wr(w, p, out);
    cr_assert_eq(n, 11);
    cr_assert(memcmp(out, "\x42\xCC\x97\xC6\xCE\xAF\x90\x80\x80\x00\x00", 11) == 0);
    p.ts = 0x82F9D18BCCull + 3;
    cr_assert_eq(wr(w, p, out), 3);
    /* A-sync: the next timestamp goes out in full again. */
    cr_assert_eq(wr(w, mk(TB_PKT_ASYNC), out), 6);
    cr_assert(memcmp(out, "\x00\x00\x00\x00\x00\x80", 6) == 0);
    cr_assert_eq(wr(w, p, out), 11);
    tb_ptm_writer_free(w);
}

Test(ptm_writer, snowball_wp_update_bytes)
{
    tb_config cfg = cfg_snowball();
    tb_ptm_writer *w = tb_ptm_writer_new(&cfg);
    uint8_t out[64];
    tb_packet p;

    p = mk_addr(TB_PKT_ISYNC, 0xC0010E00, TB_ISA_ARM);
    p.ns = true;
    cr_assert_eq(wr(w, p, out), 6);
    cr_assert_eq(out[5], 0x09);
    p = mk_addr(TB_PKT_WP_UPDATE, 0xC0010EF0, TB_ISA_ARM);
    cr_assert_eq(wr(w, p, out), 2);
    cr_assert(memcmp(out, "\x72\x79", 2) == 0);
    p = mk_addr(TB_PKT_BRANCH, 0xFFFF0018, TB_ISA_ARM);
    p.has_exc = true;
    p.exc_num = 14;
    p.ns = true;
    p.cc = 15;
    cr_assert_eq(wr(w, p, out), 7);
    cr_assert(memcmp(out, "\x8D\x80\xFE\xFF\x4F\x1D\x3C", 7) == 0);
    tb_ptm_writer_free(w);
}

Test(ptm_writer, rejects_what_ptm_cannot_say)
{
    tb_config ca = cfg_tc2(), nca = cfg_rstk();
    tb_ptm_writer *w = tb_ptm_writer_new(&ca), *v = tb_ptm_writer_new(&nca);
    uint8_t out[64];
    tb_packet p;

    cr_assert_null(tb_ptm_writer_new(NULL));
    p = mk(TB_PKT_ATOM);
    p.seq_len = 2;
    memcpy(p.seq, "EN", 2);
    cr_assert_eq(wr(w, p, out), TB_ERR_INVAL); /* CA: one atom a packet */
    cr_assert_eq(wr(v, p, out), 1);
    cr_assert_eq(out[0], 0x8A);
    p.seq_len = 6;
    memcpy(p.seq, "EEEEEE", 6);
    cr_assert_eq(wr(v, p, out), TB_ERR_INVAL);
    p.seq_len = 1;
    p.seq[0] = 'W';
    cr_assert_eq(wr(v, p, out), TB_ERR_INVAL);
    p = mk_addr(TB_PKT_BRANCH, 0x8002, TB_ISA_ARM); /* misaligned */
    cr_assert_eq(wr(v, p, out), TB_ERR_INVAL);
    p = mk_addr(TB_PKT_BRANCH, 0x8000, TB_ISA_ARM);
    p.has_cc = true; /* no CC outside CA mode */
    cr_assert_eq(wr(v, p, out), TB_ERR_INVAL);
    p = mk(TB_PKT_CONTEXT_ID);
    p.context_id = 1; /* no CtxtID bytes configured */
    cr_assert_eq(wr(v, p, out), TB_ERR_INVAL);
    p = mk(TB_PKT_DATA);
    cr_assert_eq(wr(v, p, out), TB_ERR_INVAL);
    p = mk(TB_PKT_TIMESTAMP);
    p.ts = 1ull << 50; /* PFT1.1 with ETMCCER[29]: 64-bit */
    cr_assert_eq(wr(v, p, out), 10);
    p = mk_addr(TB_PKT_ISYNC, 0x8000, TB_ISA_ARM);
    cr_assert_eq(tb_ptm_writer_write(v, &p, out, 5), TB_ERR_NOSPACE);
    /* A failed write leaves the state alone: the I-sync still fits. */
    cr_assert_eq(tb_ptm_writer_write(v, &p, out, 6), 6);
    tb_ptm_writer_free(w);
    tb_ptm_writer_free(v);

    /* PFT1.0: timestamps are 48-bit at most. */
    ca = cfg_snowball();
    w = tb_ptm_writer_new(&ca);
    p = mk(TB_PKT_TIMESTAMP);
    p.ts = 1ull << 48;
    cr_assert_eq(wr(w, p, out), TB_ERR_INVAL);
    p.ts = (1ull << 48) - 1;
    cr_assert_eq(wr(w, p, out), 1 + 7 + 1);
    tb_ptm_writer_free(w);
}

/* ------------------------------------------------------------------ */
/* Random round trips. */

typedef struct gen {
    uint64_t rs;
    tb_config cfg;
    /* What the parser will hold. */
    uint32_t addr;
    tb_isa fam;
    bool altisa, ns, hyp, have_addr;
    uint64_t ts;
} gen;

static uint32_t rnd(gen *g) { return (uint32_t)tb_test_rand(&g->rs); }
static bool coin(gen *g, unsigned one_in) { return rnd(g) % one_in == 0; }

static uint32_t rnd_cc(gen *g)
{
    unsigned bits = rnd(g) % 33;
    return bits == 32 ? rnd(g) : rnd(g) & ((1u << bits) - 1);
}

static tb_isa out_isa(tb_isa fam, bool alt)
{
    return fam == TB_ISA_THUMB && alt ? TB_ISA_THUMBEE : fam;
}

static uint32_t rnd_addr(gen *g, tb_isa fam)
{
    uint32_t a;

    switch (rnd(g) % 3) {
    case 0: a = rnd(g); break;
    case 1: a = g->addr ^ (rnd(g) & ((1u << (rnd(g) % 32)) - 1)); break;
    default: a = g->addr; break;
    }
    if (fam == TB_ISA_ARM)
        a &= ~3u;
    else if (fam == TB_ISA_THUMB)
        a &= ~1u;
    return a;
}

static tb_config rnd_config(gen *g)
{
    static const uint32_t idr[2] = {0x411CF301, 0x411CF312};
    uint32_t etmcr = 0x10000000u | (rnd(g) & ((1u << 12) | (3u << 14) | (1u << 29) | (1u << 30)));
    uint32_t ccer = 0x00C008EAu | (rnd(g) & ((1u << 26) | (1u << 28) | (1u << 29)));

    return cfg_of(etmcr, idr[rnd(g) & 1], ccer, 0x10 + (rnd(g) % 0x50));
}

/* A random packet the writer can express, with the fields the parser
 * will report for it. */
static tb_packet rnd_packet(gen *g)
{
    tb_packet p = mk(TB_PKT_IGNORE);
    unsigned k = rnd(g) % 20, i;
    bool ca = g->cfg.cycle_accurate;

    if (!g->have_addr)
        k = 0; /* start with an I-sync */
    if (k <= 1) {
        p.kind = TB_PKT_ISYNC;
        g->fam = coin(g, 2) ? TB_ISA_ARM : TB_ISA_THUMB;
        g->altisa = coin(g, 3);
        p.isa = out_isa(g->fam, g->altisa);
        p.altisa = g->altisa;
        p.addr = rnd_addr(g, g->fam);
        p.reason = (uint8_t)(rnd(g) % 4);
        p.ns = g->ns = coin(g, 2);
        p.hyp = g->hyp = coin(g, 2);
        if (ca && p.reason) {
            p.has_cc = true;
            p.cc = rnd_cc(g);
        }
        if (g->cfg.ctxid_bytes) {
            p.has_ctxid = true;
            p.context_id = g->cfg.ctxid_bytes == 4 ? rnd(g)
                         : rnd(g) & ((1u << (8 * g->cfg.ctxid_bytes)) - 1);
        }
        g->addr = p.addr;
        g->have_addr = true;
    } else if (k <= 7) {
        p.kind = TB_PKT_ATOM;
        p.seq_len = (uint8_t)(ca ? 1 : 1 + rnd(g) % 5);
        p.atom_count = p.seq_len;
        for (i = 0; i < p.seq_len; i++)
            p.seq[i] = coin(g, 2) ? 'E' : 'N';
        if (ca) {
            p.has_cc = true;
            p.cc = rnd_cc(g);
        }
    } else if (k <= 11) {
        unsigned f = rnd(g) % 9;
        tb_isa fam = f < 4 ? TB_ISA_ARM : (f < 8 ? TB_ISA_THUMB : TB_ISA_JAZELLE);
        p.kind = TB_PKT_BRANCH;
        p.addr = rnd_addr(g, fam);
        p.has_exc = coin(g, 3);
        if (p.has_exc) {
            p.exc_num = (uint16_t)(coin(g, 4) ? rnd(g) % 512 : rnd(g) % 16);
            p.exc_bytes = (p.exc_num > 15 || coin(g, 2)) ? 2 : 1;
            p.ns = g->ns = coin(g, 2);
            p.ns_valid = true;
            if (p.exc_bytes == 2) {
                p.hyp = g->hyp = coin(g, 2);
                p.hyp_valid = true;
            }
            g->altisa = coin(g, 2);
        }
        p.ns = g->ns;
        p.hyp = g->hyp;
        p.altisa = g->altisa;
        p.isa = out_isa(fam, g->altisa);
        if (ca) {
            p.has_cc = true;
            p.cc = rnd_cc(g);
        }
        g->fam = fam;
        g->addr = p.addr;
    } else if (k <= 12) {
        tb_isa fam = coin(g, 2) ? TB_ISA_ARM : TB_ISA_THUMB;
        p.kind = TB_PKT_WP_UPDATE;
        p.addr = rnd_addr(g, fam);
        if (coin(g, 4)) {
            p.exc_bytes = 1;
            g->altisa = coin(g, 2);
        }
        p.altisa = g->altisa;
        p.ns = g->ns;
        p.hyp = g->hyp;
        p.isa = out_isa(fam, g->altisa);
        g->fam = fam;
        g->addr = p.addr;
    } else if (k <= 14) {
        uint64_t m = g->cfg.ts64 ? ~0ull : (1ull << 48) - 1;
        p.kind = TB_PKT_TIMESTAMP;
        if (coin(g, 3))
            p.ts = tb_test_rand(&g->rs) & m;
        else
            p.ts = (g->ts ^ (tb_test_rand(&g->rs) &
                             ((1ull << (rnd(g) % 63)) - 1))) & m;
        if (ca) {
            p.has_cc = true;
            p.cc = rnd_cc(g);
        }
        g->ts = p.ts;
    } else if (k == 15) {
        p.kind = TB_PKT_CONTEXT_ID;
        p.has_ctxid = g->cfg.ctxid_bytes != 0;
        if (g->cfg.ctxid_bytes)
            p.context_id = g->cfg.ctxid_bytes == 4 ? rnd(g)
                         : rnd(g) & ((1u << (8 * g->cfg.ctxid_bytes)) - 1);
    } else if (k == 16) {
        p.kind = TB_PKT_VMID;
        p.vmid = (uint8_t)rnd(g);
    } else if (k == 17) {
        static const tb_pkt_kind bare[3] = {TB_PKT_TRIGGER, TB_PKT_IGNORE,
                                            TB_PKT_EXC_RETURN};
        p.kind = bare[rnd(g) % 3];
    } else if (k == 18) {
        p.kind = TB_PKT_ASYNC;
    } else {
        p.kind = TB_PKT_EXC_RETURN;
    }
    return p;
}

/* The fields a packet of each kind states (the rest is parser state). */
static void assert_fields(const tb_packet *a, const tb_packet *b, size_t i)
{
    cr_assert_eq(a->kind, b->kind, "packet %zu: kind %s vs %s", i,
                 tb_pkt_kind_name(a->kind), tb_pkt_kind_name(b->kind));
    cr_assert_eq(a->has_cc, b->has_cc, "packet %zu", i);
    cr_assert_eq(a->cc, b->cc, "packet %zu", i);
    switch (a->kind) {
    case TB_PKT_ISYNC:
        cr_assert_eq(a->addr, b->addr, "packet %zu", i);
        cr_assert_eq(a->isa, b->isa, "packet %zu", i);
        cr_assert_eq(a->reason, b->reason, "packet %zu", i);
        cr_assert_eq(a->ns, b->ns, "packet %zu", i);
        cr_assert_eq(a->hyp, b->hyp, "packet %zu", i);
        cr_assert_eq(a->altisa, b->altisa, "packet %zu", i);
        cr_assert_eq(a->has_ctxid, b->has_ctxid, "packet %zu", i);
        cr_assert_eq(a->context_id, b->context_id, "packet %zu", i);
        break;
    case TB_PKT_ATOM:
        cr_assert_eq(a->seq_len, b->seq_len, "packet %zu", i);
        cr_assert_eq(a->atom_count, b->atom_count, "packet %zu", i);
        cr_assert(memcmp(a->seq, b->seq, a->seq_len) == 0, "packet %zu", i);
        break;
    case TB_PKT_BRANCH:
    case TB_PKT_WP_UPDATE:
        cr_assert_eq(a->addr, b->addr, "packet %zu: %08x vs %08x", i, a->addr, b->addr);
        cr_assert_eq(a->isa, b->isa, "packet %zu", i);
        cr_assert_eq(a->has_exc, b->has_exc, "packet %zu", i);
        cr_assert_eq(a->exc_num, b->exc_num, "packet %zu", i);
        cr_assert_eq(a->exc_bytes, b->exc_bytes, "packet %zu", i);
        cr_assert_eq(a->ns, b->ns, "packet %zu", i);
        cr_assert_eq(a->hyp, b->hyp, "packet %zu", i);
        cr_assert_eq(a->altisa, b->altisa, "packet %zu", i);
        cr_assert_eq(a->ns_valid, b->ns_valid, "packet %zu", i);
        cr_assert_eq(a->hyp_valid, b->hyp_valid, "packet %zu", i);
        break;
    case TB_PKT_TIMESTAMP:
        cr_assert_eq(a->ts, b->ts, "packet %zu", i);
        break;
    case TB_PKT_CONTEXT_ID:
        cr_assert_eq(a->has_ctxid, b->has_ctxid, "packet %zu", i);
        cr_assert_eq(a->context_id, b->context_id, "packet %zu", i);
        break;
    case TB_PKT_VMID:
        cr_assert_eq(a->vmid, b->vmid, "packet %zu", i);
        break;
    default:
        break;
    }
}

#define RT_MAX_PKTS 80

/* Builds a random stream: A-sync then RT_MAX_PKTS random packets. */
static size_t build_stream(gen *g, tb_packet *pk, size_t *npk, uint8_t *s,
                           size_t *ends)
{
    tb_ptm_writer *w = tb_ptm_writer_new(&g->cfg);
    size_t len = 0, i;

    cr_assert_not_null(w);
    pk[0] = mk(TB_PKT_ASYNC);
    for (i = 0; i < RT_MAX_PKTS; i++) {
        int n;
        if (i)
            pk[i] = rnd_packet(g);
        n = tb_ptm_writer_write(w, &pk[i], s + len, 64);
        cr_assert_gt(n, 0, "packet %zu (%s): %s", i,
                     tb_pkt_kind_name(pk[i].kind), tb_err_str(n));
        len += (size_t)n;
        ends[i] = len;
    }
    *npk = RT_MAX_PKTS;
    tb_ptm_writer_free(w);
    return len;
}

Test(ptm_roundtrip, random_streams_byte_and_field_exact)
{
    static tb_packet pk[RT_MAX_PKTS];
    static uint8_t s[RT_MAX_PKTS * 32], s2[RT_MAX_PKTS * 32];
    static size_t ends[RT_MAX_PKTS];
    uint64_t seed;
    unsigned kinds[TB_PKT_KIND_COUNT] = {0};

    for (seed = 1; seed <= 3000; seed++) {
        gen g;
        pvec pv = {0}, pc = {0};
        size_t npk, len, i, len2 = 0;
        tb_ptm_writer *w2;

        memset(&g, 0, sizeof g);
        g.rs = seed * 0x9E3779B97F4A7C15ull;
        g.cfg = rnd_config(&g);
        len = build_stream(&g, pk, &npk, s, ends);

        parse_bytes(&g.cfg, s, len, 1000, &pv);
        cr_assert_eq(pv.n, npk, "seed %llu: %zu packets for %zu",
                     (unsigned long long)seed, pv.n, npk);
        for (i = 0; i < npk; i++) {
            size_t start = i ? ends[i - 1] : 0;
            kinds[pv.v[i].kind]++;
            cr_assert_eq(pv.v[i].index, 1000 + start, "seed %llu packet %zu",
                         (unsigned long long)seed, i);
            cr_assert_eq(pv.v[i].size, ends[i] - start);
            cr_assert(memcmp(pv.v[i].bytes, s + start, pv.v[i].size) == 0);
            assert_fields(&pk[i], &pv.v[i], i);
        }

        /* The parsed packets written again give the same bytes. */
        w2 = tb_ptm_writer_new(&g.cfg);
        for (i = 0; i < pv.n; i++) {
            int n = tb_ptm_writer_write(w2, &pv.v[i], s2 + len2, 64);
            cr_assert_gt(n, 0);
            len2 += (size_t)n;
        }
        tb_ptm_writer_free(w2);
        cr_assert_eq(len2, len);
        cr_assert(memcmp(s, s2, len) == 0, "seed %llu", (unsigned long long)seed);

        /* Any chunking gives the same packets. */
        parse_stream(&g.cfg, s, NULL, 1000, len, 1 + seed % 13, seed, &pc);
        assert_same_packets(&pv, &pc, "random chunks");
        pvec_free(&pv);
        pvec_free(&pc);
    }
    /* Every kind was exercised many times. */
    cr_assert_gt(kinds[TB_PKT_ISYNC], 1000);
    cr_assert_gt(kinds[TB_PKT_ATOM], 10000);
    cr_assert_gt(kinds[TB_PKT_BRANCH], 10000);
    cr_assert_gt(kinds[TB_PKT_WP_UPDATE], 1000);
    cr_assert_gt(kinds[TB_PKT_TIMESTAMP], 1000);
    cr_assert_gt(kinds[TB_PKT_CONTEXT_ID], 1000);
    cr_assert_gt(kinds[TB_PKT_VMID], 1000);
    cr_assert_gt(kinds[TB_PKT_TRIGGER], 300);
    cr_assert_gt(kinds[TB_PKT_IGNORE], 300);
    cr_assert_gt(kinds[TB_PKT_EXC_RETURN], 1000);
    cr_assert_gt(kinds[TB_PKT_ASYNC], 3000);
}

/* ------------------------------------------------------------------ */
/* Corrupt input. */

/* Every byte is accounted for exactly once, in order; after a broken
 * packet only NOTSYNC or an A-sync may follow. */
static void assert_well_formed(const pvec *pv, uint64_t base, size_t len,
                               const char *what)
{
    uint64_t at = base;
    size_t i;

    for (i = 0; i < pv->n; i++) {
        const tb_packet *p = &pv->v[i];
        cr_assert_eq(p->index, at, "%s: packet %zu at %llu, expected %llu",
                     what, i, (unsigned long long)p->index,
                     (unsigned long long)at);
        cr_assert_leq(p->size, TB_PKT_MAX_BYTES);
        if (p->kind == TB_PKT_NOTSYNC) {
            cr_assert_gt(p->count, 0);
            cr_assert_eq(p->size, 0);
            at += p->count;
            if (i + 1 < pv->n)
                cr_assert_eq(pv->v[i + 1].kind, TB_PKT_ASYNC, "%s", what);
        } else {
            cr_assert_gt(p->size, 0);
            at += p->size;
        }
        if (p->kind == TB_PKT_RESERVED || p->kind == TB_PKT_BAD_SEQUENCE) {
            cr_assert_eq(p->err, TB_ERR_BAD_PACKET);
            if (i + 1 < pv->n)
                cr_assert(pv->v[i + 1].kind == TB_PKT_NOTSYNC ||
                          pv->v[i + 1].kind == TB_PKT_ASYNC, "%s", what);
        }
        if (p->kind == TB_PKT_INCOMPLETE) {
            cr_assert_eq(p->err, TB_ERR_TRUNCATED);
            cr_assert_eq(i + 1, pv->n, "%s: INCOMPLETE is last", what);
        }
    }
    cr_assert_eq(at, base + len, "%s: %llu of %zu bytes accounted", what,
                 (unsigned long long)(at - base), len);
}

Test(ptm_corrupt, specific_cases)
{
    tb_config cfg = cfg_tc2();
    pvec pv = {0};
    /* Reserved header 0x10, junk, then A-sync and a good atom. */
    static const uint8_t r[] = {ASYNC6, 0x84, 0x10, 0x84, 0x05, ASYNC6, 0x86};
    /* A-sync cut by a non-zero byte; too few zeros before 0x80. */
    static const uint8_t a[] = {ASYNC6, 0x00, 0x00, 0x12, 0x84, 0x00, 0x00, 0x80,
                                ASYNC6, 0x84};
    /* Byte 5 naming no ISA (bits 5:3 = 000). */
    static const uint8_t b5[] = {ASYNC6, 0x81, 0x80, 0x80, 0x80, 0x07, 0x84};
    /* Truncated I-sync. */
    static const uint8_t t[] = {ASYNC6, 0x08, 0x00, 0x80};

    parse_bytes(&cfg, r, sizeof r, 0, &pv);
    assert_well_formed(&pv, 0, sizeof r, "reserved");
    cr_assert_eq(pv.n, 6);
    cr_assert_eq(pv.v[2].kind, TB_PKT_RESERVED);
    cr_assert_eq(pv.v[2].index, 7);
    cr_assert_eq(pv.v[3].kind, TB_PKT_NOTSYNC);
    cr_assert_eq(pv.v[3].count, 2);
    cr_assert_eq(pv.v[5].kind, TB_PKT_ATOM);
    cr_assert_eq(pv.v[5].seq[0], 'N');
    pvec_free(&pv);

    parse_bytes(&cfg, a, sizeof a, 0, &pv);
    assert_well_formed(&pv, 0, sizeof a, "bad async");
    cr_assert_eq(pv.v[1].kind, TB_PKT_BAD_SEQUENCE);
    cr_assert_eq(pv.v[1].size, 3);
    cr_assert_eq(pv.v[2].kind, TB_PKT_NOTSYNC);
    cr_assert_eq(pv.v[2].count, 4);
    cr_assert_eq(pv.v[3].kind, TB_PKT_ASYNC);
    cr_assert_eq(pv.v[4].kind, TB_PKT_ATOM);
    cr_assert_eq(pv.n, 5);
    pvec_free(&pv);

    parse_bytes(&cfg, b5, sizeof b5, 0, &pv);
    assert_well_formed(&pv, 0, sizeof b5, "byte 5");
    cr_assert_eq(pv.v[1].kind, TB_PKT_BAD_SEQUENCE);
    cr_assert_eq(pv.v[1].size, 5);
    cr_assert_eq(pv.v[2].kind, TB_PKT_NOTSYNC);
    pvec_free(&pv);

    parse_bytes(&cfg, t, sizeof t, 0, &pv);
    assert_well_formed(&pv, 0, sizeof t, "truncated");
    cr_assert_eq(pv.n, 2);
    cr_assert_eq(pv.v[1].kind, TB_PKT_INCOMPLETE);
    cr_assert_eq(pv.v[1].size, 3);
    pvec_free(&pv);
}

Test(ptm_corrupt, long_zero_runs)
{
    tb_config cfg = cfg_rstk();
    uint8_t s[200];
    pvec pv = {0};

    /* 100 zeros and 0x80: the A-sync keeps 23 zeros, the rest are
     * unsynchronised, in hunting and in synchronised state alike. */
    memset(s, 0, sizeof s);
    s[100] = 0x80;
    parse_bytes(&cfg, s, 101, 0, &pv);
    assert_well_formed(&pv, 0, 101, "zeros unsynced");
    cr_assert_eq(pv.n, 2);
    cr_assert_eq(pv.v[0].count, 100 - (TB_PKT_MAX_BYTES - 1));
    cr_assert_eq(pv.v[1].kind, TB_PKT_ASYNC);
    cr_assert_eq(pv.v[1].size, TB_PKT_MAX_BYTES);
    pvec_free(&pv);

    memset(s, 0, sizeof s);
    s[5] = 0x80;
    s[6] = 0x84;
    s[107] = 0x80;
    parse_bytes(&cfg, s, 108, 0, &pv);
    assert_well_formed(&pv, 0, 108, "zeros synced");
    cr_assert_eq(pv.n, 4);
    cr_assert_eq(pv.v[2].kind, TB_PKT_NOTSYNC);
    cr_assert_eq(pv.v[2].count, 100 - (TB_PKT_MAX_BYTES - 1));
    cr_assert_eq(pv.v[3].kind, TB_PKT_ASYNC);
    pvec_free(&pv);

    /* Zeros to the end: INCOMPLETE (synced) or NOTSYNC (hunting). */
    parse_bytes(&cfg, s, 50, 0, &pv);
    assert_well_formed(&pv, 0, 50, "trailing zeros");
    pvec_free(&pv);
}

Test(ptm_corrupt, truncations_bitflips_random_bytes)
{
    static tb_packet pk[RT_MAX_PKTS];
    static uint8_t s[RT_MAX_PKTS * 32], c[RT_MAX_PKTS * 32];
    static size_t ends[RT_MAX_PKTS];
    uint64_t seed;
    unsigned errors = 0, resyncs = 0;

    for (seed = 1; seed <= 600; seed++) {
        gen g;
        size_t npk, len, i, clen;
        pvec pv = {0}, pc = {0};

        memset(&g, 0, sizeof g);
        g.rs = seed * 0xD1B54A32D192ED03ull;
        g.cfg = rnd_config(&g);
        len = build_stream(&g, pk, &npk, s, ends);

        /* Truncate anywhere. */
        clen = (size_t)(tb_test_rand(&g.rs) % len);
        parse_bytes(&g.cfg, s, clen, 0, &pv);
        assert_well_formed(&pv, 0, clen, "truncated");
        pvec_free(&pv);

        /* Flip bits, overwrite and insert random bytes. */
        memcpy(c, s, len);
        clen = len;
        for (i = 0; i < 1 + seed % 8; i++) {
            size_t at = (size_t)(tb_test_rand(&g.rs) % clen);
            switch (tb_test_rand(&g.rs) % 3) {
            case 0: c[at] ^= (uint8_t)(1u << (tb_test_rand(&g.rs) % 8)); break;
            case 1: c[at] = (uint8_t)tb_test_rand(&g.rs); break;
            default:
                if (clen < sizeof c) {
                    memmove(c + at + 1, c + at, clen - at);
                    c[at] = (uint8_t)tb_test_rand(&g.rs);
                    clen++;
                }
                break;
            }
        }
        parse_bytes(&g.cfg, c, clen, 5, &pv);
        assert_well_formed(&pv, 5, clen, "corrupted");
        for (i = 0; i < pv.n; i++) {
            if (pv.v[i].err)
                errors++;
            if (i && pv.v[i].kind == TB_PKT_ASYNC &&
                pv.v[i - 1].kind == TB_PKT_NOTSYNC)
                resyncs++;
        }
        parse_stream(&g.cfg, c, NULL, 5, clen, 1 + seed % 7, seed, &pc);
        assert_same_packets(&pv, &pc, "corrupted, random chunks");
        pvec_free(&pv);
        pvec_free(&pc);

        /* Pure noise. */
        for (i = 0; i < 512; i++)
            c[i] = (uint8_t)tb_test_rand(&g.rs);
        parse_stream(&g.cfg, c, NULL, 0, 512, 1 + seed % 5, seed, &pv);
        assert_well_formed(&pv, 0, 512, "noise");
        pvec_free(&pv);
    }
    /* The corruptions were noticed and recovered from, often. */
    cr_assert_gt(errors, 200, "%u error packets", errors);
    cr_assert_gt(resyncs, 100, "%u resyncs", resyncs);
}

Test(ptm_corrupt, bad_arguments)
{
    tb_config cfg = cfg_tc2(), etm;
    tb_ptm_parser *p;

    cr_assert_null(tb_ptm_parser_new(NULL));
    cr_assert_eq(tb_config_from_regs(&etm, 0x10001860, 0x410CF250, 0x344008F2, 0x10), 0);
    cr_assert_null(tb_ptm_parser_new(&etm));
    p = tb_ptm_parser_new(&cfg);
    cr_assert_eq(tb_ptm_parser_push(NULL, (const uint8_t *)"", 0, 0, collect, NULL), TB_ERR_INVAL);
    cr_assert_eq(tb_ptm_parser_push(p, NULL, 1, 0, collect, NULL), TB_ERR_INVAL);
    cr_assert_eq(tb_ptm_parser_push(p, NULL, 0, 0, collect, NULL), 0);
    cr_assert_eq(tb_ptm_parser_finish(NULL, collect, NULL), TB_ERR_INVAL);
    tb_ptm_parser_free(p);
}

static int stop_at_second(void *ctx, const tb_packet *pkt)
{
    int *n = ctx;

    (void)pkt;
    return ++*n == 2;
}

Test(ptm_corrupt, callback_stops)
{
    tb_config cfg = cfg_rstk();
    static const uint8_t s[] = {ASYNC6, 0x84, 0x86, 0x88};
    tb_ptm_parser *p = tb_ptm_parser_new(&cfg);
    int n = 0;

    cr_assert_eq(tb_ptm_parser_push(p, s, sizeof s, 0, stop_at_second, &n),
                 TB_ERR_STOPPED);
    cr_assert_eq(n, 2);
    tb_ptm_parser_free(p);
}

/* ------------------------------------------------------------------ */
/* Real silicon. */

typedef struct rstream {
    uint8_t *d;
    uint64_t *idx;
    size_t n, cap;
    uint8_t id;
} rstream;

static int take_id(void *ctx, uint8_t id, uint64_t index, const uint8_t *data,
                   size_t len)
{
    rstream *r = ctx;
    size_t i;

    if (id != r->id)
        return 0;
    if (r->n + len > r->cap) {
        r->cap = (r->n + len) * 2;
        r->d = realloc(r->d, r->cap);
        r->idx = realloc(r->idx, r->cap * sizeof *r->idx);
        cr_assert(r->d && r->idx);
    }
    for (i = 0; i < len; i++) {
        r->d[r->n + i] = data[i];
        r->idx[r->n + i] = index + i;
    }
    r->n += len;
    return 0;
}

/* Loads a source's byte stream: de-formatted for an ETB dump (with
 * OpenCSD's indices), as is for a raw source_data file.  False when the
 * references are absent (the test is then skipped loudly). */
static bool load_source(const char *rel, int id, rstream *r)
{
    const char *ref = tb_test_reference_dir("PTM real traces");
    char path[1200];
    uint8_t *raw;
    size_t len = 0, i;

    memset(r, 0, sizeof *r);
    if (!ref)
        return false;
    snprintf(path, sizeof path, "%s/opencsd-snapshots/%s", ref, rel);
    raw = tb_test_read_file(path, &len);
    cr_assert_not_null(raw, "cannot read %s", path);
    if (id < 0) {
        r->d = raw;
        r->n = len;
        r->idx = malloc(len * sizeof *r->idx);
        cr_assert_not_null(r->idx);
        for (i = 0; i < len; i++)
            r->idx[i] = i;
        return true;
    } else {
        tb_deformatter *d = tb_deformatter_new(TB_FRAME_MEM_ALIGNED);
        r->id = (uint8_t)id;
        cr_assert_not_null(d);
        cr_assert_eq(tb_deformatter_push(d, raw, len, 0, take_id, r), 0);
        cr_assert_eq(tb_deformatter_finish(d, take_id, r), 0);
        tb_deformatter_free(d);
        free(raw);
    }
    return true;
}

static void rstream_free(rstream *r)
{
    free(r->d);
    free(r->idx);
}

/* Totals over trc_pkt_lister 1.3.3's listing of each source (computed
 * from its text: packet counts per type, the sum of every "Cycles=",
 * E and N atoms, the sum of every printed address, of every TS). */
struct listing {
    const char *what, *file;
    int id;
    tb_config (*cfg)(void);
    unsigned notsync, async, isync, atom, branch, wp, ts, eret;
    unsigned n_cc, e, n;
    uint64_t cycles;
    uint32_t addr_sum;
    uint64_t ts_sum;
    unsigned exceptions;
    uint64_t first_async;
};

static const struct listing listings[] = {
    {"TC2 0x13", "TC2/cstrace.bin", 0x13, cfg_tc2, 1, 5, 140, 1283, 315, 0, 42, 4,
     1776, 794, 489, 172579, 0x3c7d6780u, 0x157cfc6166f1ull, 0, 26565},
    {"Snowball 0x10", "Snowball/cstrace.bin", 0x10, cfg_snowball, 1, 4, 195, 513, 230, 4, 14, 0,
     948, 319, 194, 3526151, 0xc4744bc2u, 0x4dcc131651aull, 4, 1164},
    {"Snowball 0x11", "Snowball/cstrace.bin", 0x11, cfg_snowball, 1, 3, 134, 428, 177, 0, 7, 0,
     743, 239, 189, 127680, 0xfb4948e4u, 0x26e61b77d57ull, 0, 0},
    {"trace_cov_a15", "trace_cov_a15/PTM_0_2.bin", -1, cfg_rstk, 0, 1, 2, 5, 3, 0, 0, 0,
     0, 12, 7, 0, 0x80000fb8u, 0, 2, 0},
};

static void check_listing(const struct listing *L)
{
    tb_config cfg = L->cfg();
    rstream r;
    pvec pv = {0}, pc = {0};
    unsigned cnt[TB_PKT_KIND_COUNT] = {0}, n_cc = 0, e = 0, n = 0, exc = 0;
    uint64_t cycles = 0, ts_sum = 0;
    uint32_t addr_sum = 0;
    size_t i, j;
    tb_ptm_writer *w;
    bool started = false;
    unsigned rewritten = 0;

    if (!load_source(L->file, L->id, &r))
        return;
    parse_stream(&cfg, r.d, r.idx, 0, r.n, 0, 0, &pv);
    for (i = 0; i < pv.n; i++) {
        const tb_packet *p = &pv.v[i];
        cnt[p->kind]++;
        if (p->has_cc) {
            n_cc++;
            cycles += p->cc;
        }
        for (j = 0; j < p->seq_len; j++) {
            e += p->seq[j] == 'E';
            n += p->seq[j] == 'N';
        }
        if (p->kind == TB_PKT_ISYNC || p->kind == TB_PKT_BRANCH ||
            p->kind == TB_PKT_WP_UPDATE)
            addr_sum += p->addr;
        if (p->kind == TB_PKT_TIMESTAMP)
            ts_sum += p->ts;
        if (p->has_exc)
            exc++;
        if (p->kind == TB_PKT_ASYNC && cnt[TB_PKT_ASYNC] == 1 && L->first_async)
            cr_assert_eq(p->index, L->first_async, "%s", L->what);
    }
    cr_assert_eq(cnt[TB_PKT_NOTSYNC], L->notsync, "%s", L->what);
    cr_assert_eq(cnt[TB_PKT_ASYNC], L->async, "%s", L->what);
    cr_assert_eq(cnt[TB_PKT_ISYNC], L->isync, "%s", L->what);
    cr_assert_eq(cnt[TB_PKT_ATOM], L->atom, "%s", L->what);
    cr_assert_eq(cnt[TB_PKT_BRANCH], L->branch, "%s", L->what);
    cr_assert_eq(cnt[TB_PKT_WP_UPDATE], L->wp, "%s", L->what);
    cr_assert_eq(cnt[TB_PKT_TIMESTAMP], L->ts, "%s", L->what);
    cr_assert_eq(cnt[TB_PKT_EXC_RETURN], L->eret, "%s", L->what);
    cr_assert_eq(pv.n, L->notsync + L->async + L->isync + L->atom + L->branch +
                       L->wp + L->ts + L->eret, "%s: no other kinds", L->what);
    cr_assert_eq(n_cc, L->n_cc, "%s", L->what);
    cr_assert_eq(cycles, L->cycles, "%s", L->what);
    cr_assert_eq(e, L->e, "%s", L->what);
    cr_assert_eq(n, L->n, "%s", L->what);
    cr_assert_eq(exc, L->exceptions, "%s", L->what);
    cr_assert_eq(ts_sum, L->ts_sum, "%s", L->what);
    cr_assert_eq(addr_sum, L->addr_sum, "%s: address sum %08x", L->what, addr_sum);

    /* Chunked 1..k bytes at a time: identical packets. */
    for (j = 1; j <= 4; j++) {
        parse_stream(&cfg, r.d, r.idx, 0, r.n, j == 1 ? 1 : 7 * j, j, &pc);
        assert_same_packets(&pv, &pc, L->what);
        pvec_free(&pc);
    }

    /* The writer, given the parsed fields from the first I-sync on,
     * reproduces the silicon's bytes: minimal addresses as the PTM sent
     * them (protocol-notes 10), timestamps as long as it sent them. */
    w = tb_ptm_writer_new(&cfg);
    for (i = 0; i < pv.n; i++) {
        uint8_t out[64];
        int k;
        if (pv.v[i].kind == TB_PKT_ISYNC)
            started = true;
        if (!started || pv.v[i].kind == TB_PKT_NOTSYNC)
            continue;
        k = tb_ptm_writer_write(w, &pv.v[i], out, sizeof out);
        cr_assert_eq(k, pv.v[i].size, "%s: packet at %llu", L->what,
                     (unsigned long long)pv.v[i].index);
        cr_assert(memcmp(out, pv.v[i].bytes, (size_t)k) == 0,
                  "%s: packet at %llu", L->what,
                  (unsigned long long)pv.v[i].index);
        rewritten++;
    }
    cr_assert_gt(rewritten, pv.n * 9 / 10);
    tb_ptm_writer_free(w);
    pvec_free(&pv);
    rstream_free(&r);
}

Test(ptm_real, tc2_0x13) { check_listing(&listings[0]); }
Test(ptm_real, snowball_0x10) { check_listing(&listings[1]); }
Test(ptm_real, snowball_0x11) { check_listing(&listings[2]); }
Test(ptm_real, trace_cov_a15) { check_listing(&listings[3]); }

/* trace_cov_a15 whole, packet by packet as trc_pkt_lister lists it. */
Test(ptm_real, trace_cov_a15_listing)
{
    static const struct {
        uint64_t idx;
        tb_pkt_kind kind;
        const char *atoms;
        uint32_t addr;
        int exc;
    } want[] = {
        {0, TB_PKT_ASYNC, NULL, 0, -1},
        {6, TB_PKT_ISYNC, NULL, 0x80000558, -1},
        {12, TB_PKT_ATOM, "E", 0, -1},
        {13, TB_PKT_BRANCH, NULL, 0x00000000, 1},
        {19, TB_PKT_ISYNC, NULL, 0x80000504, -1},
        {25, TB_PKT_ATOM, "ENEEE", 0, -1},
        {26, TB_PKT_ATOM, "ENEEN", 0, -1},
        {27, TB_PKT_ATOM, "NEEEN", 0, -1},
        {28, TB_PKT_ATOM, "NNE", 0, -1},
        {29, TB_PKT_BRANCH, NULL, 0x8000055C, -1},
        {30, TB_PKT_BRANCH, NULL, 0x00000000, 1},
    };
    tb_config cfg = cfg_rstk();
    rstream r;
    pvec pv = {0};
    char buf[24];
    size_t i;

    if (!load_source("trace_cov_a15/PTM_0_2.bin", -1, &r))
        return;
    cr_assert_eq(r.n, 36);
    parse_stream(&cfg, r.d, NULL, 0, r.n, 0, 0, &pv);
    cr_assert_eq(pv.n, sizeof want / sizeof want[0]);
    for (i = 0; i < pv.n; i++) {
        const tb_packet *p = &pv.v[i];
        cr_assert_eq(p->index, want[i].idx, "packet %zu", i);
        cr_assert_eq(p->kind, want[i].kind, "packet %zu", i);
        if (want[i].atoms)
            cr_assert_str_eq(seq_str(p, buf), want[i].atoms);
        if (p->kind == TB_PKT_ISYNC || p->kind == TB_PKT_BRANCH) {
            cr_assert_eq(p->addr, want[i].addr, "packet %zu", i);
            cr_assert_eq(p->isa, TB_ISA_ARM);
            cr_assert(!p->ns);
        }
        if (p->kind == TB_PKT_ISYNC)
            cr_assert_eq(p->reason, TB_ISYNC_DEBUG_EXIT);
        cr_assert_eq(p->has_exc, want[i].exc >= 0, "packet %zu", i);
        if (want[i].exc >= 0)
            cr_assert_eq(p->exc_num, (unsigned)want[i].exc);
    }
    /* ~[0x5C]: one byte, ARM, A[7:0]. */
    cr_assert_eq(pv.v[9].addr_bits, 8);
    pvec_free(&pv);
    rstream_free(&r);
}
