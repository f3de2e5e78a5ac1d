/*
 * Spec coverage (vectors/speccov/speccov.c, vectors/spec-coverage.tsv).
 *
 * (a) The classifier, on packets the project's parser makes of byte
 *     streams written here from the spec's examples (IHI0014Q 7.3.1
 *     examples 7.1/7.2 and table 7.4), from the real TC2/Snowball/rstk
 *     bytes of protocol-notes 7.1/7.2 and 3.5-3.7, and from the layout
 *     tables of protocol-notes 2.x/3.x (IHI0014Q 7.3.5, 7.10.5, 7.4;
 *     IHI0035B 4.5).  Every expected variant is read off the spec by
 *     hand, in the comment next to it, never from the code under test.
 * (b) The catalogue loads, and every variant it marks reachable occurs
 *     in some committed vector (vectors/generated).  Fails listing each
 *     one at zero until vectors for them are added.
 * (c) `tracebench vectors --spec-coverage` and its alias --coverage.
 * (d) The catalogue stays out of libtracebench.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tb_test.h"
#include "speccov.h"
#include "tracebench/decoder.h"
#include "tracebench/etmv1.h"
#include "tracebench/etmv2.h"
#include "tracebench/frame.h"
#include "tracebench/parser.h"
#include "tracebench/snapshot.h"

/* Real registers (protocol-notes 1, 5.2): TC2 ETM (ETMv3.5, CA, TS),
 * TC2 PTM (PFT1.1, CA, TS), rstk (PFT1.1, return stack, not CA). */
#define TC2_ETMCR 0x10001860u
#define TC2_ETMIDR 0x410CF250u
#define TC2_ETMCCER 0x344008F2u
#define TC2_PTMCR 0x10001000u
#define TC2_PTMIDR 0x411CF312u
#define TC2_PTMCCER 0x34C01AC2u
#define RSTK_PTMCR 0x20000400u
#define SNOWBALL_IDR 0x411CF301u

#define ASYNC 0x00, 0x00, 0x00, 0x00, 0x00, 0x80

static tb_config regs(uint32_t etmcr, uint32_t etmidr, uint32_t etmccer)
{
    tb_config cfg;

    cr_assert_eq(tb_config_from_regs(&cfg, etmcr, etmidr, etmccer, 0x10), 0);
    return cfg;
}

/* ETMv3.minor, ETMIDR[20] when alt. */
static tb_config etm(uint32_t etmcr, unsigned minor, bool alt, uint32_t ccer)
{
    return regs(etmcr, 0x410CF200u | (minor << 4) | (alt ? 1u << 20 : 0), ccer);
}

/* Space-separated names, sorted, so that a set compares as a string. */
static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void sorted_set(const char *in, char *out, size_t len)
{
    char buf[1024], *tok[64], *save = NULL;
    size_t n = 0;

    snprintf(buf, sizeof buf, "%s", in);
    for (char *t = strtok_r(buf, " ", &save); t && n < 64; t = strtok_r(NULL, " ", &save))
        tok[n++] = t;
    qsort(tok, n, sizeof *tok, cmp_name);
    out[0] = 0;
    for (size_t i = 0; i < n; i++) {
        strncat(out, tok[i], len - strlen(out) - 1);
        if (i + 1 < n)
            strncat(out, " ", len - strlen(out) - 1);
    }
}

typedef struct got {
    const tb_config *cfg;
    char sets[128][1024];
    size_t n;
} got;

static int on_pkt(void *ctx, const tb_packet *pkt)
{
    got *g = ctx;
    tb_speccov_id v[32];
    char joined[1024] = "";
    int n;

    if (pkt->kind == TB_PKT_NOTSYNC)
        return 0;
    cr_assert_lt(pkt->kind, TB_PKT_RESERVED, "bad packet %s at %llu in a hand-built stream",
                 tb_pkt_kind_name(pkt->kind), (unsigned long long)pkt->index);
    n = tb_speccov_classify_packet(g->cfg, pkt, v, 32);
    cr_assert_geq(n, 0);
    for (int i = 0; i < n; i++) {
        if (i)
            strcat(joined, " ");
        strcat(joined, tb_speccov_variant_name(v[i]));
    }
    cr_assert_lt(g->n, 128);
    sorted_set(joined, g->sets[g->n++], sizeof g->sets[0]);
    return 0;
}

/* Parses b with the project's parser and checks each packet's variants
 * against want[i] (space-separated, any order). */
static void expect_stream(const tb_config *cfg, const uint8_t *b, size_t n,
                          const char *const *want, size_t nwant)
{
    static got g;
    tb_parser *p = tb_parser_new(cfg);

    cr_assert_not_null(p);
    memset(&g, 0, sizeof g);
    g.cfg = cfg;
    cr_assert_geq(tb_parser_push(p, b, n, 0, on_pkt, &g), 0);
    cr_assert_geq(tb_parser_finish(p, on_pkt, &g), 0);
    tb_parser_free(p);
    cr_assert_eq(g.n, nwant, "%zu packets, expected %zu", g.n, nwant);
    for (size_t i = 0; i < nwant; i++) {
        char w[1024];

        sorted_set(want[i], w, sizeof w);
        cr_expect_str_eq(g.sets[i], w, "packet %zu: got [%s], expected [%s]", i,
                         g.sets[i], w);
    }
}

#define EXPECT(cfg, bytes, ...)                                                  \
    do {                                                                         \
        static const uint8_t b_[] = bytes;                                       \
        static const char *const w_[] = {__VA_ARGS__};                           \
        tb_config c_ = (cfg);                                                    \
        expect_stream(&c_, b_, sizeof b_, w_, sizeof w_ / sizeof w_[0]);         \
    } while (0)
#define BYTES(...) {__VA_ARGS__}

/* ---- (a) ETMv3 ---- */

/* protocol-notes 7.2: the TC2 ID 0x10 stream from its first A-sync, then
 * the "a few packets later" and exception-return snippets (ETMv3.5, CA,
 * 64-bit timestamps, original branch encoding). */
Test(speccov_etmv3, tc2_worked_example)
{
    EXPECT(regs(TC2_ETMCR, TC2_ETMIDR, TC2_ETMCCER),
           BYTES(ASYNC,
                 0x42, 0xBD, 0x9A, 0xC3, 0xCE, 0xAF, 0x90, 0x80, 0x80, 0x00,
                 0xBC, 0xBC, 0xBC, 0xBC, 0xBC, 0xBC, 0xBC, 0xA8,
                 0x08, 0x01, 0x5D, 0x11, 0x02, 0xC0,
                 0x84, 0xBC, 0xBC, 0xB4, 0x84, 0xA8, 0x84, 0xBC, 0xB4, 0x84, 0xA0, 0x82,
                 0x84, 0xB7, 0xFD, 0xD6, 0x01,
                 0x70, 0x8F, 0x3C, 0x21, 0x99, 0xF6, 0x04, 0xC0,
                 0x88, 0x76, 0x42, 0x85, 0x2B, 0xBC, 0xD7, 0xBA, 0x86, 0xDB, 0x0D),
           "etmv3.async",
           "etmv3.ts.len9",                /* 9 payload bytes, full width */
           "etmv3.phdr.ca.fmt3", "etmv3.phdr.ca.fmt3", "etmv3.phdr.ca.fmt3",
           "etmv3.phdr.ca.fmt3", "etmv3.phdr.ca.fmt3", "etmv3.phdr.ca.fmt3",
           "etmv3.phdr.ca.fmt3", "etmv3.phdr.ca.fmt3", /* BC x7, A8: b1E1WWW00 */
           /* 08 ... info 01: periodic, address bit 0 = T */
           "etmv3.isync.normal etmv3.isync.periodic etmv3.isync.isa.thumb",
           "etmv3.phdr.ca.fmt1",           /* 84: b1N0EEE00, W E */
           "etmv3.phdr.ca.fmt3", "etmv3.phdr.ca.fmt3", "etmv3.phdr.ca.fmt3",
           "etmv3.phdr.ca.fmt1", "etmv3.phdr.ca.fmt3", "etmv3.phdr.ca.fmt1",
           "etmv3.phdr.ca.fmt3", "etmv3.phdr.ca.fmt3", "etmv3.phdr.ca.fmt1",
           "etmv3.phdr.ca.fmt3",           /* A0: one W */
           "etmv3.phdr.ca.fmt2",           /* 82: b1000FF10, W E E */
           "etmv3.phdr.ca.fmt1",
           "etmv3.branch.orig.len4",       /* B7 FD D6 01: 7 bits in the last */
           /* 70: with CC 8F 3C = 7695; info 21: trace enable, Thumb */
           "etmv3.isync.normal_cc etmv3.isync.trace_on etmv3.isync.isa.thumb",
           "etmv3.phdr.ca.fmt1",           /* 88: WE WE */
           "etmv3.exc_return",             /* 76 */
           "etmv3.ts.len2",                /* 42 85 2B */
           "etmv3.phdr.ca.fmt3",
           "etmv3.branch.orig.len5.arm");  /* byte 5 0x0D = b00001101: ARM */
}

/* IHI0014Q 7.3.1 example 7.1 (non-CA): C8 = format 1 EEN, 8A = format 2
 * NE. */
Test(speccov_etmv3, phdr_example_7_1)
{
    EXPECT(etm(0, 5, false, 0), BYTES(ASYNC, 0xC8, 0x8A),
           "etmv3.async", "etmv3.phdr.fmt1", "etmv3.phdr.fmt2");
}

/* IHI0014Q 7.3.1 example 7.2 (CA): C8 = format 1 WEWEWN, 8A = format 2
 * WNE, E8 = format 3 WWWE; table 7.4: 84 format 1, 92 format 4
 * (ETMv3.3+). */
Test(speccov_etmv3, phdr_example_7_2_and_table_7_4)
{
    EXPECT(etm(1u << 12, 3, false, 0), BYTES(ASYNC, 0xC8, 0x8A, 0xE8, 0x84, 0x92),
           "etmv3.async", "etmv3.phdr.ca.fmt1", "etmv3.phdr.ca.fmt2",
           "etmv3.phdr.ca.fmt3", "etmv3.phdr.ca.fmt1", "etmv3.phdr.ca.fmt4");
}

/* IHI0014Q 7.3.1 table 7.3: b10000000 is format 0 (one W) in ETMv3.0. */
Test(speccov_etmv3, phdr_format0_etmv30)
{
    EXPECT(etm(1u << 12, 0, false, 0), BYTES(ASYNC, 0x80),
           "etmv3.async", "etmv3.phdr.ca.fmt0");
}

/* IHI0014Q 7.3.4: header 0x04, then the count; 8F 3C = 7695
 * (protocol-notes 2.6). */
Test(speccov_etmv3, cycle_count_packet)
{
    EXPECT(etm(1u << 12, 5, false, 0), BYTES(ASYNC, 0x04, 0x8F, 0x3C),
           "etmv3.async", "etmv3.cc");
}

/* IHI0014Q 7.3.5, protocol-notes 2.7 (original encoding): 7 address bits
 * in every byte 2-4, so 8D 41 is a plain 2-byte address (bit 6 is A13,
 * not an exception flag); exception bytes only after byte 5. */
Test(speccov_etmv3, branch_original)
{
    EXPECT(etm(0, 5, false, 0),
           BYTES(ASYNC, 0x0D, 0x8D, 0x41, 0x8D, 0x80, 0x01, 0x8D, 0x80, 0x80, 0x01,
                 0x81, 0x80, 0x80, 0x80, 0x10,          /* Thumb: b0X01xxxx */
                 0x81, 0x80, 0x80, 0x80, 0x20,          /* Jazelle: b0X1xxxxx */
                 /* ARM vector 0x18 (A[7:2] = 6 -> 8D), byte 5 b01001000 (X
                  * set), E0 = IRQ 14 << 1 */
                 0x8D, 0x80, 0x80, 0x80, 0x48, 0x1C),
           "etmv3.async", "etmv3.branch.orig.len1", "etmv3.branch.orig.len2",
           "etmv3.branch.orig.len3", "etmv3.branch.orig.len4",
           "etmv3.branch.orig.len5.thumb", "etmv3.branch.len5.jazelle",
           "etmv3.branch.orig.len5.arm etmv3.exc.len1 etmv3.exc.entry");
}

/* protocol-notes 2.7 exception bytes: E0 = C 7, AltISA 6, Cancel 5,
 * number[3:0] 4:1, NS 0; E1 = C 7, 0 6, Hyp 5, number[8:4] 4:0; a byte
 * with bit 6 set after E0 or E1 is E2 (resume 3:0).  Legacy: byte 5
 * with bit 7 set. */
Test(speccov_etmv3, exception_bytes)
{
    EXPECT(regs(TC2_ETMCR & ~(1u << 12), TC2_ETMIDR, TC2_ETMCCER),
           BYTES(ASYNC,
                 /* undef (9) cancelled, NS; E1 Hyp; E2 resume 5 */
                 0x8D, 0x80, 0x80, 0x80, 0x48, 0xB3, 0xA0, 0x45,
                 /* IRQ, then E2 (resume 3) straight after E0 */
                 0x8D, 0x80, 0x80, 0x80, 0x48, 0x9C, 0x43,
                 /* number 0x1F: E0 number[3:0] = F, E1 number[8:4] = 1 */
                 0x8D, 0x80, 0x80, 0x80, 0x48, 0x9E, 0x01,
                 /* Thumb byte 5 b01010000, E0 AltISA only: number 0 */
                 0x81, 0x80, 0x80, 0x80, 0x50, 0x40,
                 /* legacy byte 5: b1 C=0 code 001 A31:29 000 */
                 0x8D, 0x80, 0x80, 0x80, 0x88),
           "etmv3.async",
           "etmv3.branch.orig.len5.arm etmv3.exc.len3 etmv3.exc.cancel etmv3.exc.ns "
           "etmv3.exc.hyp etmv3.exc.resume etmv3.exc.entry",
           "etmv3.branch.orig.len5.arm etmv3.exc.len2 etmv3.exc.resume etmv3.exc.entry",
           "etmv3.branch.orig.len5.arm etmv3.exc.len2 etmv3.exc.num_hi etmv3.exc.entry",
           "etmv3.branch.orig.len5.thumb etmv3.exc.len1 etmv3.exc.altisa etmv3.exc.num0",
           "etmv3.branch.orig.len5.arm etmv3.exc.legacy");
}

/* protocol-notes 2.7, alternative encoding (ETMv3.4+, ETMIDR[20]): a last
 * byte 2-4 has 6 address bits and X in bit 6. */
Test(speccov_etmv3, branch_alternative)
{
    EXPECT(etm(0, 4, true, 0),
           BYTES(ASYNC, 0x0D, 0x8D, 0x01, 0x8D, 0x80, 0x01, 0x8D, 0x80, 0x80, 0x01,
                 0x8D, 0x80, 0x80, 0x80, 0x08,
                 0x81, 0x80, 0x80, 0x80, 0x10,
                 0x8D, 0x40, 0x1C),             /* 2 bytes, X set, E0 IRQ */
           "etmv3.async", "etmv3.branch.alt.len1", "etmv3.branch.alt.len2",
           "etmv3.branch.alt.len3", "etmv3.branch.alt.len4",
           "etmv3.branch.alt.len5.arm", "etmv3.branch.alt.len5.thumb",
           "etmv3.branch.alt.len2 etmv3.branch.alt.exc_short etmv3.exc.len1 "
           "etmv3.exc.entry");
}

/* IHI0014Q 7.10.5: header, [CC], context ID, info (LSiP 7, reason 6:5,
 * J 4, NS 3, AltISA 2, Hyp 1), address (T in bit 0), [LSiP address]. */
Test(speccov_etmv3, isync_forms)
{
    /* 4-byte context ID (ETMCR[15:14] = 11), TC2's virtualization. */
    EXPECT(etm(3u << 14, 5, false, 1u << 26),
           BYTES(ASYNC,
                 0x08, 0x78, 0x56, 0x34, 0x12, 0x21, 0x00, 0x80, 0x00, 0x00,
                 0x08, 0x00, 0x00, 0x00, 0x00, 0x0B, 0x00, 0x80, 0x00, 0x00,
                 0x08, 0x00, 0x00, 0x00, 0x00, 0x61, 0x00, 0x80, 0x00, 0x00,
                 0x08, 0x00, 0x00, 0x00, 0x00, 0x41, 0x00, 0x80, 0x00, 0x00,
                 0x08, 0x00, 0x00, 0x00, 0x00, 0x31, 0x01, 0x80, 0x00, 0x00,
                 0x08, 0x00, 0x00, 0x00, 0x00, 0x25, 0x01, 0x80, 0x00, 0x00,
                 /* LSiP: data insn 0x8000 ARM, current 1 byte: A[7:2] = 4 */
                 0x08, 0x00, 0x00, 0x00, 0x00, 0xA1, 0x00, 0x80, 0x00, 0x00, 0x09),
           "etmv3.async",
           "etmv3.isync.normal etmv3.isync.trace_on etmv3.isync.isa.arm etmv3.isync.ctxid4",
           /* info 0B: periodic, NS, Hyp */
           "etmv3.isync.normal etmv3.isync.periodic etmv3.isync.ns etmv3.isync.hyp "
           "etmv3.isync.isa.arm etmv3.isync.ctxid4",
           "etmv3.isync.normal etmv3.isync.debug_exit etmv3.isync.isa.arm etmv3.isync.ctxid4",
           "etmv3.isync.normal etmv3.isync.overflow etmv3.isync.isa.arm etmv3.isync.ctxid4",
           /* info 31: J = 1 */
           "etmv3.isync.normal etmv3.isync.trace_on etmv3.isync.isa.jazelle "
           "etmv3.isync.ctxid4",
           /* info 25: AltISA with T = 1 (table 7.20) */
           "etmv3.isync.normal etmv3.isync.trace_on etmv3.isync.isa.thumbee "
           "etmv3.isync.ctxid4",
           "etmv3.isync.lsip etmv3.isync.trace_on etmv3.isync.isa.arm etmv3.isync.ctxid4");
    /* CA: LSiP with a cycle count (0x70, CC 05), 1- and 2-byte IDs. */
    EXPECT(etm(1u << 12 | 1u << 14, 5, false, 0),
           BYTES(ASYNC, 0x70, 0x05, 0x7F, 0xA1, 0x00, 0x80, 0x00, 0x00, 0x09),
           "etmv3.async",
           "etmv3.isync.lsip_cc etmv3.isync.trace_on etmv3.isync.isa.arm etmv3.isync.ctxid1");
    EXPECT(etm(2u << 14, 5, false, 0),
           BYTES(ASYNC, 0x08, 0x34, 0x12, 0x21, 0x00, 0x80, 0x00, 0x00),
           "etmv3.async",
           "etmv3.isync.normal etmv3.isync.trace_on etmv3.isync.isa.arm etmv3.isync.ctxid2");
    /* Data-only (ETMCR[20]): header, info, no address. */
    EXPECT(etm(1u << 20 | 1u << 2, 5, false, 0), BYTES(ASYNC, 0x08, 0x21),
           "etmv3.async", "etmv3.isync.dataonly etmv3.isync.trace_on");
}

/* protocol-notes 2.2/2.8: one-byte packets, VMID, context ID (size from
 * ETMCR[15:14]), timestamps (7 bits a byte; 48-bit when ETMCCER[29] = 0). */
Test(speccov_etmv3, other_packets)
{
    EXPECT(etm(1u << 14 | 1u << 28 | 1u << 30, 5, false, 1u << 26 | 1u << 29),
           BYTES(ASYNC, 0x0C, 0x66, 0x76, 0x7E, 0x3C, 0x05, 0x6E, 0x12,
                 0x42, 0x05, 0x42, 0x85, 0x85, 0x05),
           "etmv3.async", "etmv3.trigger", "etmv3.ignore", "etmv3.exc_return",
           "etmv3.exc_entry", "etmv3.vmid", "etmv3.ctxid1", "etmv3.ts.len1",
           "etmv3.ts.len3");
    EXPECT(etm(2u << 14, 5, false, 0), BYTES(ASYNC, 0x6E, 0x34, 0x12, 0x42, 0x05),
           "etmv3.async", "etmv3.ctxid2", "etmv3.ts48");
    EXPECT(etm(3u << 14, 5, false, 0), BYTES(ASYNC, 0x6E, 0x78, 0x56, 0x34, 0x12),
           "etmv3.async", "etmv3.ctxid4");
}

/* protocol-notes 2.9 / IHI0014Q 7.4: data packets with value and address
 * trace on (ETMCR[3:2] = 11); SS = 00/01/10/11 -> 0/1/2/4 value bytes. */
Test(speccov_etmv3, data_packets)
{
    EXPECT(etm(3u << 2, 5, false, 0),
           BYTES(ASYNC,
                 0x02,                         /* b00000010: normal, SS 00 */
                 0x06, 0xAB,                   /* SS 01 */
                 0x2A, 0x10, 0x34, 0x12,       /* A = 1, address 10, SS 10 */
                 0x0E, 0x78, 0x56, 0x34, 0x12, /* SS 11 */
                 0x24, 0xAB,                   /* b0TT0SS00: tag 1, SS 01 */
                 0x58,                         /* b01A1TT00: A 0, tag 2 */
                 0x74, 0x10,                   /* A 1, tag 1, address */
                 0x50, 0x62, 0x6A,
                 0x7A, 0x10),                  /* b011A1010, A 1 */
           "etmv3.async", "etmv3.data.normal etmv3.data.value0",
           "etmv3.data.normal etmv3.data.value1",
           "etmv3.data.normal.addr etmv3.data.value2",
           "etmv3.data.normal etmv3.data.value4", "etmv3.data.ooo etmv3.data.value1",
           "etmv3.data.placeholder", "etmv3.data.placeholder.addr",
           "etmv3.data.store_failed", "etmv3.data.suppressed", "etmv3.data.vnt",
           "etmv3.data.vnt.addr");
}

/* ---- (a) PTM ---- */

/* protocol-notes 7.1: the TC2 ID 0x13 stream (PFT1.1, CA, 64-bit TS),
 * then its extra snippets. */
Test(speccov_ptm, tc2_worked_example)
{
    EXPECT(regs(TC2_PTMCR, TC2_PTMIDR, TC2_PTMCCER),
           BYTES(ASYNC, 0x08, 0x83, 0x8D, 0x01, 0xC0, 0x01,
                 0x42, 0xCC, 0x97, 0xC6, 0xCE, 0xAF, 0x90, 0x80, 0x80, 0x00, 0x00,
                 0xE8, 0x20, 0xDE, 0x01, 0xBC,
                 0x08, 0xDF, 0x8D, 0x01, 0xC0, 0x21, 0xCC, 0x03, 0x84,
                 0x08, 0xE5, 0x8D, 0x01, 0xC0, 0x21, 0xE4, 0x07, 0x84, 0xC2, 0x01,
                 0xBB, 0xB6, 0xBD, 0x01, 0x04,
                 0xA1, 0xAB, 0x8F, 0x00, 0x7C, 0x1F,
                 0x79, 0x70, 0xA3, 0x8D, 0x09,
                 0x42, 0x80, 0x1D, 0x00),
           "ptm.async",
           "ptm.isync.periodic ptm.isync.isa.thumb",     /* info 01, no CC */
           "ptm.ts.len9 ptm.ts.cc",                      /* 9 bytes + CC 00 */
           "ptm.atom.ca.cont", "ptm.atom.ca.cont",       /* E8 20, DE 01 */
           "ptm.atom.ca",                                /* BC */
           "ptm.isync.trace_on ptm.isync.cc ptm.isync.isa.thumb",
           "ptm.atom.ca",
           "ptm.isync.trace_on ptm.isync.cc ptm.isync.isa.thumb",
           "ptm.atom.ca", "ptm.atom.ca.cont",
           "ptm.branch.len4 ptm.branch.cc",              /* BB B6 BD 01 + 04 */
           "ptm.branch.len4 ptm.branch.cc",              /* A1 AB 8F 00 + CC */
           "ptm.branch.len1 ptm.branch.cc",              /* 79 + 4-byte CC */
           "ptm.ts.len2 ptm.ts.cc");                     /* 42 80 1D + 00 */
}

/* protocol-notes 7.1, Snowball (PFT1.0, CA): WP update 72 79, then the
 * IRQ packet 8D 80 FE FF 4F | 1D (NS, number 14) | 3C (CC). */
Test(speccov_ptm, snowball_irq)
{
    EXPECT(regs(TC2_PTMCR, SNOWBALL_IDR, TC2_PTMCCER),
           BYTES(ASYNC, 0x72, 0x79, 0x8D, 0x80, 0xFE, 0xFF, 0x4F, 0x1D, 0x3C),
           "ptm.async", "ptm.wpupdate.len1",
           "ptm.branch.len5.arm ptm.exc.entry ptm.exc.ns ptm.branch.cc");
}

/* protocol-notes 3.5 (rstk, not CA): the atom count is below the leading
 * 1; 3.7: rstk's debug halt 81 80 80 80 48 02, and BD 85 80 80 0C. */
Test(speccov_ptm, rstk_atoms_and_branches)
{
    EXPECT(regs(RSTK_PTMCR, TC2_PTMIDR, TC2_PTMCCER),
           BYTES(ASYNC, 0x84, 0x8A, 0x98, 0xBC, 0xF0,
                 0x81, 0x80, 0x80, 0x80, 0x48, 0x02,
                 0xBD, 0x85, 0x80, 0x80, 0x0C,
                 0x05, 0x85, 0x05, 0x85, 0x85, 0x05,
                 0x81, 0x80, 0x80, 0x80, 0x10,
                 0x81, 0x80, 0x80, 0x80, 0x20,
                 /* E1 = C | 14 << 1, E2 = Hyp */
                 0x8D, 0x80, 0x80, 0x80, 0x48, 0x9C, 0x20,
                 /* Thumb byte 5 with X, E1 AltISA only: number 0 */
                 0x81, 0x80, 0x80, 0x80, 0x50, 0x40),
           "ptm.async", "ptm.atom.n1", "ptm.atom.n2", "ptm.atom.n3", "ptm.atom.n4",
           "ptm.atom.n5",
           "ptm.branch.len5.arm ptm.exc.entry",
           "ptm.branch.len5.arm",
           "ptm.branch.len1", "ptm.branch.len2", "ptm.branch.len3",
           "ptm.branch.len5.thumb", "ptm.branch.len5.jazelle",
           "ptm.branch.len5.arm ptm.exc.len2 ptm.exc.hyp ptm.exc.entry",
           "ptm.branch.len5.thumb ptm.exc.altisa ptm.exc.num0");
}

/* protocol-notes 3.4: 08, address (T in bit 0), info (reason 6:5, NS 3,
 * AltISA 2, Hyp 1), [CC], context ID; observed infos 0x29 (trace enable,
 * NS) and 0x61 (debug exit).  3.8: WP update lengths and the AltISA byte
 * after a 5-byte address with bit 6 set.  3.9: the other packets. */
Test(speccov_ptm, isync_wpupdate_others)
{
    EXPECT(regs(1u << 14 | 1u << 28 | 1u << 30, TC2_PTMIDR, TC2_PTMCCER),
           BYTES(ASYNC,
                 0x08, 0x00, 0x80, 0x00, 0x00, 0x29, 0x11,
                 0x08, 0x00, 0x80, 0x00, 0x00, 0x61, 0x11,
                 0x08, 0x00, 0x80, 0x00, 0x00, 0x43, 0x11,
                 0x08, 0x01, 0x80, 0x00, 0x00, 0x25, 0x11,
                 0x72, 0x85, 0x05, 0x72, 0x85, 0x85, 0x05, 0x72, 0x85, 0x85, 0x85, 0x05,
                 0x72, 0x85, 0x80, 0x80, 0x80, 0x08,
                 0x72, 0x85, 0x80, 0x80, 0x80, 0x48, 0x40,
                 0x0C, 0x66, 0x76, 0x3C, 0x01, 0x6E, 0x44, 0x42, 0x05),
           "ptm.async",
           "ptm.isync.trace_on ptm.isync.ns ptm.isync.isa.arm ptm.isync.ctxid1",
           "ptm.isync.debug_exit ptm.isync.isa.arm ptm.isync.ctxid1",
           /* 43: overflow, Hyp */
           "ptm.isync.overflow ptm.isync.hyp ptm.isync.isa.arm ptm.isync.ctxid1",
           /* T = 1, info 25: AltISA */
           "ptm.isync.trace_on ptm.isync.isa.thumbee ptm.isync.ctxid1",
           "ptm.wpupdate.len2", "ptm.wpupdate.len3", "ptm.wpupdate.len4",
           "ptm.wpupdate.len5", "ptm.wpupdate.len5 ptm.wpupdate.altisa",
           "ptm.trigger", "ptm.ignore", "ptm.exc_return", "ptm.vmid", "ptm.ctxid1",
           "ptm.ts.len1");
    /* PFT1.0: 48-bit timestamps, 7 bytes at most, the 7th full width. */
    EXPECT(regs(2u << 14, SNOWBALL_IDR, TC2_PTMCCER),
           BYTES(ASYNC, 0x42, 0x05, 0x42, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,
                 0x6E, 0x34, 0x12),
           "ptm.async", "ptm.ts48.len1", "ptm.ts48.len7", "ptm.ctxid2");
    EXPECT(regs(3u << 14, TC2_PTMIDR, TC2_PTMCCER),
           BYTES(ASYNC, 0x08, 0x00, 0x80, 0x00, 0x00, 0x01, 0x78, 0x56, 0x34, 0x12,
                 0x6E, 0x78, 0x56, 0x34, 0x12),
           "ptm.async", "ptm.isync.periodic ptm.isync.isa.arm ptm.isync.ctxid4",
           "ptm.ctxid4");
}

/* IHI0035B B.3.2 (seed-004), protocol-notes 3.10: with the return stack
 * on, BL pushes its return address and an E atom on the indirect BX LR
 * pops it, with no address packet.  Image: 0x8000 BL 0x8010
 * (EB000002), 0x8004 NOP, 0x8008 B . ; 0x8010 BX LR (E12FFF1E). */
typedef struct rs_ctx {
    tb_config cfg;
    tb_decoder *dec;
    const tb_packet *pkt;
    unsigned hits, elements;
} rs_ctx;

static int rs_elem(void *ctx, const tb_element *el)
{
    rs_ctx *c = ctx;
    tb_speccov_id v[4];
    int n = tb_speccov_classify_element(&c->cfg, c->pkt, el, v, 4);

    cr_assert_geq(n, 0);
    c->elements++;
    for (int i = 0; i < n; i++) {
        cr_assert_str_eq(tb_speccov_variant_name(v[i]), "ptm.rstack.hit");
        c->hits++;
    }
    return 0;
}

static int rs_pkt(void *ctx, const tb_packet *pkt)
{
    rs_ctx *c = ctx;

    c->pkt = pkt;
    cr_assert_geq(tb_decoder_packet(c->dec, pkt, rs_elem, c), 0);
    return 0;
}

static unsigned rs_hits(const uint8_t *trace, size_t len, unsigned *elements)
{
    static const uint8_t code[] = {
        0x02, 0x00, 0x00, 0xEB, 0x00, 0xF0, 0x20, 0xE3, 0xFE, 0xFF, 0xFF, 0xEA,
        0x00, 0x00, 0x00, 0x00, 0x1E, 0xFF, 0x2F, 0xE1,
    };
    tb_memimage *mem = tb_memimage_new();
    rs_ctx c = {.cfg = regs(RSTK_PTMCR, TC2_PTMIDR, TC2_PTMCCER)};
    tb_parser *p = tb_parser_new(&c.cfg);

    cr_assert(mem && p);
    cr_assert_eq(tb_memimage_add(mem, 0x8000, code, sizeof code), 0);
    c.dec = tb_decoder_new(&c.cfg, mem);
    cr_assert_not_null(c.dec);
    cr_assert_geq(tb_parser_push(p, trace, len, 0, rs_pkt, &c), 0);
    cr_assert_geq(tb_parser_finish(p, rs_pkt, &c), 0);
    tb_decoder_free(c.dec);
    tb_parser_free(p);
    tb_memimage_free(mem);
    *elements = c.elements;
    return c.hits;
}

Test(speccov_ptm, return_stack_hit)
{
    /* I-sync at 0x8000 ARM (trace on), then 88: two atoms E E. */
    static const uint8_t hit[] = {ASYNC, 0x08, 0x00, 0x80, 0x00, 0x00, 0x21, 0x88};
    /* The same return traced by a branch packet to 0x8004 (A[7:2] = 1):
     * no hit. */
    static const uint8_t miss[] = {ASYNC, 0x08, 0x00, 0x80, 0x00, 0x00, 0x21, 0x84, 0x03};
    unsigned el;

    cr_expect_eq(rs_hits(hit, sizeof hit, &el), 1);
    cr_expect_geq(el, 2);
    cr_expect_eq(rs_hits(miss, sizeof miss, &el), 0);
    cr_expect_geq(el, 2);
}

/* ---- (a) formatter ---- */

static unsigned frame_set(const uint8_t *f, unsigned *cur, char *out, size_t len)
{
    tb_speccov_id v[16];
    char joined[512] = "";
    int n = tb_speccov_classify_frame(f, cur, v, 16);

    cr_assert_geq(n, 0);
    for (int i = 0; i < n; i++) {
        if (i)
            strcat(joined, " ");
        strcat(joined, tb_speccov_variant_name(v[i]));
    }
    sorted_set(joined, out, len);
    return (unsigned)n;
}

static void expect_frame(const uint8_t *f, unsigned *cur, const char *want)
{
    char got_s[512], w[512];

    frame_set(f, cur, got_s, sizeof got_s);
    sorted_set(want, w, sizeof w);
    cr_expect_str_eq(got_s, w, "frame: got [%s], expected [%s]", got_s, w);
}

/* protocol-notes 5.1 worked frames (TC2 cstrace.bin offsets 26560 and
 * 864) and its rules: an ID byte at 2k with aux bit k set leaves byte
 * 2k+1 to the old ID (a change at an odd byte); an ID at byte 14 applies
 * from the next frame. */
Test(speccov_formatter, frames)
{
    static const uint8_t f26560[16] = {0x27, 0x10, 0xCC, 0x01, 0xCE, 0x0E, 0x00, 0x00,
                                       0x00, 0x00, 0x00, 0x80, 0x08, 0x83, 0x8C, 0x80};
    static const uint8_t f864[16] = {0x80, 0x42, 0xBC, 0x9A, 0xC2, 0xCE, 0xAE, 0x90,
                                     0x80, 0x80, 0x00, 0xBC, 0xBC, 0xBC, 0xBC, 0x0E};
    /* ID 0x10, data AA; ID 0x11 at byte 2, aux bit 1: BB is still
     * 0x10's; data for 0x11; ID 0x12 at byte 14. */
    static const uint8_t mixed[16] = {0x21, 0xAA, 0x23, 0xBB, 0x02, 0x04, 0x06, 0x08,
                                      0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x14, 0x25, 0x02};
    unsigned cur = 0xFF;

    expect_frame(f26560, &cur, "formatter.frame formatter.id_even");
    cr_expect_eq(cur, 0x13);
    cur = 0x10;
    expect_frame(f864, &cur, "formatter.frame");
    cur = 0xFF;
    expect_frame(mixed, &cur, "formatter.frame formatter.id_even formatter.id_odd "
                              "formatter.id_pos14");
    cr_expect_eq(cur, 0x12);
}

static int find(const char *name)
{
    int v = tb_speccov_variant_find(name);

    cr_assert_geq(v, 0, "%s unknown", name);
    return v;
}

/* Whole buffers: sources from the deformatter's runs; FSYNC / HSYNC in
 * sync mode (protocol-notes 5.1). */
Test(speccov_formatter, buffers)
{
    static const uint8_t mixed[16] = {0x21, 0xAA, 0x23, 0xBB, 0x02, 0x04, 0x06, 0x08,
                                      0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x14, 0x25, 0x02};
    static const uint8_t one[16] = {0x27, 0x10, 0xCC, 0x01, 0xCE, 0x0E, 0x00, 0x00,
                                    0x00, 0x00, 0x00, 0x80, 0x08, 0x83, 0x8C, 0x80};
    uint8_t tpiu[4 + 4 + 2 + 12];
    static uint64_t c[TB_SPECCOV_MAX];

    memset(c, 0, sizeof c);
    cr_assert_eq(tb_speccov_count_buffer(mixed, sizeof mixed, TB_FRAME_MEM_ALIGNED, c), 0);
    cr_expect_eq(c[find("formatter.multi_source")], 1);
    cr_expect_eq(c[find("formatter.frame")], 1);
    memset(c, 0, sizeof c);
    cr_assert_eq(tb_speccov_count_buffer(one, sizeof one, TB_FRAME_MEM_ALIGNED, c), 0);
    cr_expect_eq(c[find("formatter.multi_source")], 0);
    /* FF FF FF 7F, four frame bytes, FF 7F, the other twelve. */
    memcpy(tpiu, (const uint8_t[]){0xFF, 0xFF, 0xFF, 0x7F}, 4);
    memcpy(tpiu + 4, one, 4);
    memcpy(tpiu + 8, (const uint8_t[]){0xFF, 0x7F}, 2);
    memcpy(tpiu + 10, one + 4, 12);
    memset(c, 0, sizeof c);
    cr_assert_eq(tb_speccov_count_buffer(tpiu, sizeof tpiu,
                                          TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC, c), 0);
    cr_expect_eq(c[find("formatter.fsync")], 1);
    cr_expect_eq(c[find("formatter.hsync")], 1);
    cr_expect_eq(c[find("formatter.frame")], 1);
    cr_expect_eq(c[find("formatter.id_even")], 1);
}

/* ---- (a) ETMv1 trace port ---- */

/* A capture file (docs/etmv1.md 2, docs/etmv2.md 2): the header for c
 * (a tb_etmv1_config or tb_etmv2_config, by proto), then the samples (an
 * ETMv2 sample is ETMv1's). */
static size_t port_capture(tb_protocol proto, const void *c, const tb_etmv1_sample *s,
                           size_t n, uint8_t *out, size_t max)
{
    cr_assert_leq(TB_ETMV1_HDR_BYTES + TB_ETMV1_SAMPLE_BYTES * n, max);
    if (proto == TB_PROTO_ETMV1)
        tb_etmv1_capture_header(c, out);
    else
        tb_etmv2_capture_header(c, out);
    for (size_t i = 0; i < n; i++)
        tb_etmv1_sample_pack(&s[i], out + TB_ETMV1_HDR_BYTES + TB_ETMV1_SAMPLE_BYTES * i);
    return TB_ETMV1_HDR_BYTES + TB_ETMV1_SAMPLE_BYTES * n;
}

static size_t etmv1_capture(const tb_etmv1_config *c, const tb_etmv1_sample *s,
                            size_t n, uint8_t *out, size_t max)
{
    return port_capture(TB_PROTO_ETMV1, c, s, n, out, max);
}

static tb_config etmv1_cfg(const tb_etmv1_config *c)
{
    tb_config cfg;

    cr_assert_eq(tb_config_from_etmv1(&cfg, tb_etmv1_etmcr(c), c->minor, c->vector_base), 0);
    return cfg;
}

/* etmv1-v2.md 12, example 1 without data (as tests/test_etmv1.c): two
 * back-to-back indirect branches on an 8-bit port, 1-byte context IDs.
 *   0   BE   80 1   trace-on marker: 80 80 82 80 10 (5 packets, reason 1,
 *                   0x8000 ARM) + CID 42
 *   1   000  80     APO[1:0] = 0
 *   2   000  82     APO[3:2] = 0
 *   3   BE   80     BX r5 -> 0x9000: 80 20 (2 packets); APO 0
 *   4   000  10     APO 0
 *   5   000  42
 *   6   BE   80 1   BX r6 -> 0x9100: 80 22; BX r5's start is queued
 *   7   001  20     APO[1:0] = 1 (an APO cycle, not an ID)
 *   8   000  80 1   APO[3:2] = 0: APO 1
 *   9   IE   22
 *  10   IE   00
 * By IHI0014Q 5.1, 5.5.4, 5.6.1, 5.6.3: three BE, two IE, three
 * TRACESYNC, APO 0 twice and 1 once, one 8-bit capture; packets: a
 * 5-packet ARM address with reason 1 and one CID byte, then two 2-packet
 * ARM addresses, then the atoms (no variant without cycle accuracy). */
static const tb_etmv1_sample v1_ex1[] = {
    {4, 1, 0x80}, {0, 0, 0x80}, {0, 0, 0x82}, {4, 0, 0x80}, {0, 0, 0x10}, {0, 0, 0x42},
    {4, 1, 0x80}, {1, 0, 0x20}, {0, 1, 0x80}, {0, 0, 0x22}, {0, 0, 0x00},
};

static void v1_ex1_config(tb_etmv1_config *c)
{
    tb_etmv1_config_init(c);
    c->minor = 3;
    c->port_width = 8;
    c->ctxid_bytes = 1;
}

/* Example 1's counts: port_cases below.  A cut header is refused, a cut
 * last sample ignored. */
Test(speccov_etmv1, example1_cut)
{
    static uint64_t c[TB_SPECCOV_MAX];
    tb_etmv1_config cf;
    uint8_t cap[128];
    size_t n;

    v1_ex1_config(&cf);
    n = etmv1_capture(&cf, v1_ex1, sizeof v1_ex1 / sizeof v1_ex1[0], cap, sizeof cap);
    cr_expect_eq(tb_speccov_count_etmv1_capture(cap, 10, c), TB_ERR_TRUNCATED);
    memset(c, 0, sizeof c);
    cr_expect_eq(tb_speccov_count_etmv1_capture(cap, n - 2, c), 0);
    cr_expect_eq(c[find("etmv1.pipestat.ie")], 1);
}

/* Fills the stack below the caller with 0x71 (a value no bool may hold),
 * so that a callee reading a local it never set sees that value.  Not
 * instrumented by ASan: its array then lies flat below the frame, where
 * the next call's locals go (ASan would put it among redzones). */
static __attribute__((noinline, no_sanitize("address"))) void paint_stack(void)
{
    volatile uint8_t junk[8192];

    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = 0x71;
}

/* A capture whose header does not parse is refused before its
 * configuration is read (fuzz/regressions/etmv1/speccov-bad-header-
 * uninit-config: the counter loaded the unset cycle_accurate bool, a
 * UBSan report in the ETMv1 harness).  Under -fsanitize=undefined the
 * painted stack makes the old read fail every time. */
Test(speccov_etmv1, bad_header_refused_before_use)
{
    static uint64_t c[TB_SPECCOV_MAX];
    tb_etmv1_config cf;
    uint8_t cap[TB_ETMV1_HDR_BYTES + 8];
    size_t n;

    v1_ex1_config(&cf);
    n = etmv1_capture(&cf, v1_ex1, 2, cap, sizeof cap);
    memset(c, 0, sizeof c);
    for (int bad = 0; bad < 3; bad++) {
        uint8_t b[sizeof cap];

        memcpy(b, cap, n);
        if (bad == 0)
            b[0] ^= 0xFF;                      /* no capture magic */
        else if (bad == 1)
            b[11] = 12;                        /* a width the ETMCR does not give */
        else
            memset(b, 0x71, TB_ETMV1_HDR_BYTES);
        paint_stack();
        cr_expect_lt(tb_speccov_count_etmv1_capture(b, n, c), 0, "header %d", bad);
        paint_stack();
        cr_expect_lt(tb_speccov_count_etmv2_capture(b, n, c), 0, "header %d", bad);
    }
    for (size_t i = 0; i < TB_SPECCOV_MAX; i++)
        cr_expect_eq(c[i], 0, "variant %zu counted for a refused capture", i);
}

/* Statuses around the APO cycles, by IHI0014Q 5.1/5.4/5.6.1/5.10, 4-bit
 * port, no cycle accuracy (TRACEPKT contents do not matter here):
 *   0 BE, 1 001, 2 000      APO 1 (the 001 is APO[1:0], not an ID)
 *   3 IE, 4 IN, 5 WT
 *   6 TR, TRACEPKT 000      a trigger replacing an IE
 *   7 BE, 8 TR/000, 9 000   a trigger in an APO cycle: APO 0
 *  10 BE, 11 BE             a BE in an APO cycle: the first abandoned
 *  12 000, 13 000           the second BE's APO 0
 *  14 TD                    kept without CA: an idle TD (docs/etmv1.md 1) */
static const tb_etmv1_sample v1_statuses[] = {
    {4, 1, 0}, {1, 0, 0}, {0, 0, 0}, {0, 0, 0}, {2, 0, 0}, {3, 0, 0},
    {6, 0, 0}, {4, 1, 0}, {6, 0, 0}, {0, 0, 0}, {4, 1, 0}, {4, 1, 0},
    {0, 0, 0}, {0, 0, 0}, {7, 0, 0},
};

/* Cycle accurate: TD carries TraceEnable in TRACEPKT[0] (IHI0014Q 5.10);
 * 16-bit port. */
static const tb_etmv1_sample v1_ca_td[] = {{0, 0, 0}, {7, 0, 1}, {7, 0, 1}, {7, 0, 0}};

/* Cycle accurate: an ATOM run that counts cycles (5.10): 'W' a WT, 'T'
 * an APO cycle or a TD with TraceEnable (docs/etmv1.md 3).  The parser's
 * ATOM packets carry no bytes (size 0); without CA there are no such
 * letters, and an E/N run alone counts nothing. */
Test(speccov_etmv1, ca_wait_atoms)
{
    static const char *const seqs[] = {"ETTE", "EWE", "EEN"};
    static const int want[2][3] = {{0, 0, 0}, {1, 1, 0}};
    tb_etmv1_config cf;
    tb_config cfg;
    tb_packet p;
    tb_speccov_id v[8];

    for (int ca = 0; ca < 2; ca++) {
        tb_etmv1_config_init(&cf);
        cf.cycle_accurate = ca;
        cfg = etmv1_cfg(&cf);
        for (int k = 0; k < 3; k++) {
            int n, hit = 0;

            memset(&p, 0, sizeof p);
            p.kind = TB_PKT_ATOM;
            p.protocol = TB_PROTO_ETMV1;
            p.seq_len = (uint8_t)strlen(seqs[k]);
            memcpy(p.seq, seqs[k], p.seq_len);
            n = tb_speccov_classify_packet(&cfg, &p, v, 8);
            cr_assert_geq(n, 0);
            for (int i = 0; i < n; i++)
                hit += v[i] == (tb_speccov_id)find("etmv1.ca.wait");
            cr_expect_eq(hit, want[ca][k], "%s, ca %d: etmv1.ca.wait %d", seqs[k], ca, hit);
        }
    }
}

/* A branch packet of a trace port (ETMv1, ETMv2) as the parser gives it,
 * and the variants it must count: the same set, in any order. */
typedef struct branch_case {
    uint32_t addr;
    tb_isa isa;
    uint8_t reason;       /* ETMv1: 1 a trace-on marker */
    uint8_t phdr_format;  /* ETMv2: the PIPESTAT that carried it (DE, DW) */
    const char *want;
    uint8_t bytes[5];
    uint8_t n;
} branch_case;

static void check_branches(const tb_config *cfg, tb_protocol proto, const branch_case *c,
                           size_t n)
{
    for (size_t k = 0; k < n; k++) {
        tb_packet p;
        tb_speccov_id v[16];
        char names[512] = "", want[512];
        int nv;

        memset(&p, 0, sizeof p);
        p.kind = TB_PKT_BRANCH;
        p.protocol = proto;
        p.size = c[k].n;
        memcpy(p.bytes, c[k].bytes, c[k].n);
        p.addr = c[k].addr;
        p.isa = c[k].isa;
        p.reason = c[k].reason;
        p.phdr_format = c[k].phdr_format;
        nv = tb_speccov_classify_packet(cfg, &p, v, 16);
        cr_assert_geq(nv, 0);
        for (int i = 0; i < nv; i++) {
            strcat(names, i ? " " : "");
            strcat(names, tb_speccov_variant_name(v[i]));
        }
        sorted_set(names, names, sizeof names);
        sorted_set(c[k].want, want, sizeof want);
        cr_expect_str_eq(names, want, "0x%08x: got [%s]", (unsigned)c[k].addr, names);
    }
}

/* Exceptions are branches to a vector (docs/etmv1.md 4, M3; no E bit in
 * ETMv1, etmv1-v2 5.3): a 1-packet BE to 0x10 (A[6:0] = 0x10) after
 * 0x8000 is the data abort's; 0xFFFF0018 in five packets, reason 0, is
 * a high-vector IRQ; the same with reason 1 is a trace-on marker, not an
 * exception; 0x14 is not a vector; a Thumb target is not one. */
Test(speccov_etmv1, exception_forms)
{
    static const branch_case cases[] = {
        {0x10, TB_ISA_ARM, 0, 0,
         "etmv1.branch.len1 etmv1.branch.arm etmv1.exc.vector etmv1.exc.data_abort", {0x10}, 1},
        {0xFFFF0018u, TB_ISA_ARM, 0, 0,
         "etmv1.branch.len5 etmv1.branch.arm etmv1.reason.normal etmv1.exc.high_vectors",
         {0x98, 0x80, 0xFC, 0xFF, 0x0F}, 5},
        {0xFFFF0018u, TB_ISA_ARM, 1, 0, "etmv1.branch.len5 etmv1.branch.arm etmv1.reason.trace_on",
         {0x98, 0x80, 0xFC, 0xFF, 0x1F}, 5},
        {0x14, TB_ISA_ARM, 0, 0, "etmv1.branch.len1 etmv1.branch.arm", {0x14}, 1},
        {0x18, TB_ISA_THUMB, 0, 0, "etmv1.branch.len1 etmv1.branch.thumb", {0x19}, 1},
    };
    tb_etmv1_config cf;
    tb_config cfg;

    tb_etmv1_config_init(&cf);
    cfg = etmv1_cfg(&cf);
    check_branches(&cfg, TB_PROTO_ETMV1, cases, sizeof cases / sizeof cases[0]);
}

/* ---- (a) ETMv2 trace port ---- */

static size_t etmv2_capture(const tb_etmv2_config *c, const tb_etmv2_sample *s, size_t n,
                            uint8_t *out, size_t max)
{
    return port_capture(TB_PROTO_ETMV2, c, s, n, out, max);
}

static tb_config etmv2_cfg(const tb_etmv2_config *c)
{
    tb_config cfg;

    cr_assert_eq(tb_config_from_etmv2(&cfg, tb_etmv2_etmcr(c), c->minor, c->vector_base), 0);
    return cfg;
}

/* An ETMv2 atom has no bytes (PIPESTAT gives it, as ETMv1's): in
 * cycle-accurate mode one with a W (a WT, TD or DW cycle, M6) is a wait.
 * Before the fix the classifier dropped it for its size 0. */
Test(speccov_etmv2, ca_wait_atom_without_bytes)
{
    tb_etmv2_config c2;
    tb_config cfg;
    tb_packet p;
    tb_speccov_id v[8];

    memset(&p, 0, sizeof p);
    p.kind = TB_PKT_ATOM;
    p.protocol = TB_PROTO_ETMV2;
    p.seq_len = 3;
    memcpy(p.seq, "EWE", 3);
    p.atom_count = 2;
    p.w_count = 1;
    tb_etmv2_config_init(&c2);
    c2.cycle_accurate = true;
    cfg = etmv2_cfg(&c2);
    cr_assert_eq(tb_speccov_classify_packet(&cfg, &p, v, 8), 1);
    cr_expect_eq(v[0], find("etmv2.ca.wait"));
    /* No W: no variant; without cycle accuracy: none either. */
    memcpy(p.seq, "EEE", 3);
    cr_expect_eq(tb_speccov_classify_packet(&cfg, &p, v, 8), 0);
    memcpy(p.seq, "EWE", 3);
    c2.cycle_accurate = false;
    cfg = etmv2_cfg(&c2);
    cr_expect_eq(tb_speccov_classify_packet(&cfg, &p, v, 8), 0);
}

/* ETMv2 data packets (6.4.1 Table 6.2; docs/etmv2.md 9), as the parser
 * gives them: normal data, Value Not Traced, the two load miss forms. */
Test(speccov_etmv2, data_packets)
{
    static const struct { tb_pkt_kind kind; uint8_t hdr; const char *name; } k[] = {
        {TB_PKT_DATA, 0x2E, "etmv2.data.normal"},
        {TB_PKT_VALUE_NOT_TRACED, 0x6A, "etmv2.data.vnt"},
        {TB_PKT_OOO_PLACEHOLDER, 0x58, "etmv2.data.load_miss"},
        {TB_PKT_OOO_DATA, 0x48, "etmv2.data.load_miss"},
    };
    tb_etmv2_config c2;
    tb_config cfg;
    tb_packet p;
    tb_speccov_id v[8];

    tb_etmv2_config_init(&c2);
    c2.data_trace = 3;
    cfg = etmv2_cfg(&c2);
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        memset(&p, 0, sizeof p);
        p.kind = k[i].kind;
        p.protocol = TB_PROTO_ETMV2;
        p.size = 1;
        p.bytes[0] = k[i].hdr;
        cr_assert_eq(tb_speccov_classify_packet(&cfg, &p, v, 8), 1, "%s", k[i].name);
        cr_expect_eq(v[0], find(k[i].name), "%s", k[i].name);
    }
}

/* Every PIPESTAT form on a 4-bit port, no cycle accuracy, by the codes
 * of docs/etmv2.md 6 (U1: 0 IE, 1 DE, 2 IN, 3 DN, 4 WT, 5 DW, 6 TR, 7 TD,
 * 8-B phantom taken + IE/DE/IN/DN, C-F not taken + the same) and U4 (a
 * 4-bit TFO value in two cycles, the second the next that is not TR):
 *   0 TD, TRACEPKT 0001   a TFO cycle (6.1.6): value[2:0]
 *   1 TR, TRACEPKT 0000   a trigger replacing an IE, between the halves
 *   2 IE, TRACEPKT 0001   value[5:3]: the TFO's second half
 *   3 DE  4 IN  5 DN  6 WT  7 DW
 *   8..15: 8 A B D E F 9 C, one of each phantom form
 *  16 TD, TRACEPKT 0000   kept without CA: idle
 *  17 TR, TRACEPKT 0111   a trigger replacing a TD: 6.1.7 (Cihcehhe)
 *                         makes that a TFO the trigger delayed (U19),
 *                         not an idle cycle
 * So: IE 2 (1, 2), DE DN IN WT DW 1 each, TR 2, TD 3 (0, 16, 17), each
 * phantom form 1, idle TD 1 (16), one split TFO with a TR inside, port4. */
static const tb_etmv2_sample v2_statuses[] = {
    {7, 0, 1}, {6, 0, 0}, {0, 0, 1}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0},
    {4, 0, 0}, {5, 0, 0}, {8, 0, 0}, {10, 0, 0}, {11, 0, 0}, {13, 0, 0},
    {14, 0, 0}, {15, 0, 0}, {9, 0, 0}, {12, 0, 0}, {7, 0, 0}, {6, 0, 7},
};

/* Those counts: port_cases below.  A cut header is refused; an ETMv1
 * capture, or TRACESYNC set (no such pin in ETMv2, 4.3.1), is not an
 * ETMv2 capture. */
Test(speccov_etmv2, refused_captures)
{
    static const tb_etmv2_sample sync[] = {{0, 1, 0}};
    static uint64_t c[TB_SPECCOV_MAX];
    tb_etmv2_config cf;
    tb_etmv1_config c1;
    uint8_t cap[128];
    size_t n;

    tb_etmv2_config_init(&cf);
    cf.port_width = 4;
    n = etmv2_capture(&cf, v2_statuses, sizeof v2_statuses / sizeof v2_statuses[0], cap,
                      sizeof cap);
    cr_assert_eq(tb_speccov_count_etmv2_capture(cap, n, c), 0);
    cr_expect_eq(tb_speccov_count_etmv2_capture(cap, 10, c), TB_ERR_TRUNCATED);
    tb_etmv1_config_init(&c1);
    tb_etmv1_capture_header(&c1, cap);
    cr_expect_eq(tb_speccov_count_etmv2_capture(cap, TB_ETMV1_HDR_BYTES, c), TB_ERR_FORMAT);
    n = etmv2_capture(&cf, sync, 1, cap, sizeof cap);
    cr_expect_eq(tb_speccov_count_etmv2_capture(cap, n, c), TB_ERR_FORMAT);
}

/* Cycle accurate: every TD kept, TRACEPKT[0] = 0 (M6); 16-bit port. */
static const tb_etmv2_sample v2_ca_td[] = {{0, 0, 0}, {7, 0, 0}, {7, 0, 0}, {4, 0, 0x1234}};

/* A capture on an 8-bit port with 1-byte context IDs, written from the
 * layouts of docs/etmv2.md 6 (U2 TFO header b000000RR, U5 value on
 * TRACEPKT[7:1], U7 LSB first) and IHI0014Q 6.4.1 / 6.7.1 Table 6.9:
 *   0     TD, 0x01        TFO, value 0: its packet comes first
 *   1-2   IE, IE          01 (RR 01 trace on) 42 (context ID)
 *   3-6   WT x4           00 80 00 00: address 0x00008000, ARM
 *   7-9   DE, IE, IE      EE 43 (context ID packet, C = 1: more this
 *                         cycle) 09 (a 1-byte branch: A[7:2] = 4, to
 *                         0x8010 after 0x8000)
 *  10-14  DW, WT x4       89 80 80 80 48: 0x00000010 in 5 bytes, byte 5
 *                         b0E001000 with E = 1: the data abort vector
 *                         (base 0), the instruction before cancelled
 * Packets: the TFO; the atoms of cycles 1, 2, 7; the context ID packet;
 * the branch; the atoms of 8, 9; the exception branch. */
static const tb_etmv2_sample v2_ex[] = {
    {7, 0, 0x01}, {0, 0, 0x01}, {0, 0, 0x42}, {4, 0, 0x00}, {4, 0, 0x80},
    {4, 0, 0x00}, {4, 0, 0x00}, {1, 0, 0xEE}, {0, 0, 0x43}, {0, 0, 0x09},
    {5, 0, 0x89}, {4, 0, 0x80}, {4, 0, 0x80}, {4, 0, 0x80}, {4, 0, 0x48},
};

/* Its counts and packets: port_cases below. */

/* IHI0014Q 6.1.7: a trigger with the FIFO empty shows WT as the status it
 * replaced; one showing TD is a TFO the trigger delayed (U19), so neither
 * is an idle TD cycle. */
static const tb_etmv2_sample v2_trigger_replaced[] = {{TB_ETMV2_TR, 0, TB_ETMV2_WT},
                                                      {TB_ETMV2_TR, 0, TB_ETMV2_TD}};

/* Cycle accurate, no context IDs: a periodic TFO (RR 00) at Thumb
 * 0x1000 (address bit 0 = 1, 6.5.4): 00 | 01 10 00 00, sent in five WT
 * cycles, then a TD and an IE.  Packets: the TFO, then one atom of six
 * W (the WT and TD cycles) and an E. */
static const tb_etmv2_sample v2_periodic_thumb[] = {
    {7, 0, 0x01}, {4, 0, 0x00}, {4, 0, 0x01}, {4, 0, 0x10},
    {4, 0, 0x00}, {4, 0, 0x00}, {7, 0, 0x00}, {0, 0, 0x00},
};

/* ---- (a) trace-port captures: one table, one fixture ---- */

/* A variant and the count the capture must give it. */
typedef struct count_want {
    const char *variant;
    uint64_t n;
} count_want;

/* A capture of samples on a port configured by the defaults of proto's
 * config_init, with the fields given here (0: the default); the counts
 * it must give (up to a NULL variant; variants not named may have any
 * count), and the variant set of each packet its parser makes, in order
 * (expect_stream; stream NULL: not checked). */
typedef struct port_case {
    const char *name;
    tb_protocol proto; /* TB_PROTO_ETMV1 or TB_PROTO_ETMV2 */
    uint8_t minor, port_width, ctxid_bytes;
    bool cycle_accurate;
    const tb_etmv1_sample *s;
    size_t ns;
    const count_want *want;
    const char *const *stream;
    size_t nstream;
} port_case;

#define SAMPLES(a) (a), sizeof(a) / sizeof((a)[0])
#define STREAM(a) (a), sizeof(a) / sizeof((a)[0])

/* The counts of each case, read off the comment above its samples. */
static const count_want v1_ex1_counts[] = {
    {"etmv1.pipestat.be", 3}, {"etmv1.pipestat.ie", 2}, {"etmv1.tracesync", 3},
    {"etmv1.apo.zero", 2}, {"etmv1.apo.nonzero", 1}, {"etmv1.port8", 1},
    {"etmv1.pipestat.id", 0}, {"etmv1.pipestat.in", 0}, {"etmv1.pipestat.wt", 0},
    {"etmv1.pipestat.bd", 0}, {"etmv1.pipestat.tr", 0}, {"etmv1.pipestat.td", 0},
    {"etmv1.port4", 0}, {"etmv1.port16", 0}, {"etmv1.apo.trigger", 0},
    {"etmv1.apo.abandoned", 0}, {"etmv1.td.idle", 0}, {NULL, 0}};
static const count_want v1_statuses_counts[] = {
    {"etmv1.pipestat.be", 4}, {"etmv1.pipestat.ie", 2}, /* 3 and the one TR 6 replaced */
    {"etmv1.pipestat.in", 1}, {"etmv1.pipestat.wt", 1}, {"etmv1.pipestat.id", 0},
    {"etmv1.pipestat.tr", 2}, {"etmv1.pipestat.td", 1}, {"etmv1.td.idle", 1},
    {"etmv1.ca.td_enabled", 0}, {"etmv1.tracesync", 4}, {"etmv1.apo.nonzero", 1},
    {"etmv1.apo.zero", 2}, {"etmv1.apo.trigger", 1}, {"etmv1.apo.abandoned", 1},
    {"etmv1.port4", 1}, {NULL, 0}};
static const count_want v1_ca_td_counts[] = {
    {"etmv1.pipestat.td", 3}, {"etmv1.ca.td_enabled", 2}, {"etmv1.ca.td_disabled", 1},
    {"etmv1.td.idle", 0}, {"etmv1.port16", 1}, {NULL, 0}};
static const count_want v2_statuses_counts[] = {
    {"etmv2.pipestat.ie", 2}, {"etmv2.pipestat.tr", 2}, {"etmv2.pipestat.td", 3},
    {"etmv2.td.idle", 1}, {"etmv2.pipestat.de", 1}, {"etmv2.pipestat.in", 1},
    {"etmv2.pipestat.dn", 1}, {"etmv2.pipestat.wt", 1}, {"etmv2.pipestat.dw", 1},
    {"etmv2.phantom.taken.ie", 1}, {"etmv2.phantom.taken.de", 1},
    {"etmv2.phantom.taken.in", 1}, {"etmv2.phantom.taken.dn", 1},
    {"etmv2.phantom.not_taken.ie", 1}, {"etmv2.phantom.not_taken.de", 1},
    {"etmv2.phantom.not_taken.in", 1}, {"etmv2.phantom.not_taken.dn", 1},
    {"etmv2.tfo.split4", 1}, {"etmv2.tfo.split4.trigger", 1}, {"etmv2.port4", 1},
    {"etmv2.ca.td", 0}, {"etmv2.port8", 0}, {"etmv2.port16", 0},
    /* Nothing of ETMv1's. */
    {"etmv1.pipestat.ie", 0}, {"etmv1.port4", 0}, {NULL, 0}};
static const count_want v2_ca_td_counts[] = {
    {"etmv2.pipestat.td", 2}, {"etmv2.ca.td", 2}, {"etmv2.td.idle", 0},
    {"etmv2.port16", 1}, {"etmv2.tfo.split4", 0}, {NULL, 0}};
static const count_want v2_ex_counts[] = {
    {"etmv2.pipestat.td", 1}, /* the TFO cycle */
    {"etmv2.td.idle", 0}, {"etmv2.pipestat.ie", 4}, {"etmv2.pipestat.wt", 8},
    {"etmv2.pipestat.de", 1}, {"etmv2.pipestat.dw", 1}, {"etmv2.port8", 1},
    {"etmv2.tfo.split4", 0}, /* 8-bit: one cycle */
    {NULL, 0}};
static const count_want v2_trigger_replaced_counts[] = {
    {"etmv2.pipestat.tr", 2}, {"etmv2.pipestat.wt", 1}, {"etmv2.td.idle", 0},
    {"etmv2.ca.td", 0}, {NULL, 0}};

static const count_want no_counts[] = {{NULL, 0}};

/* The packets of each case with a stream: by the layouts in the comment
 * above its samples. */
static const char *const v1_ex1_stream[] = {
    "etmv1.branch.len5 etmv1.branch.arm etmv1.reason.trace_on etmv1.ctxid1",
    "etmv1.branch.len2 etmv1.branch.arm",
    "etmv1.branch.len2 etmv1.branch.arm",
    "",
};
static const char *const v2_ex_stream[] = {
    "etmv2.tfo.trace_on etmv2.tfo.isa.arm etmv2.tfo.ctxid1",
    "",
    "etmv2.ctxid1 etmv2.ctxid.more",
    "etmv2.branch.len1",
    "",
    "etmv2.branch.len5.arm etmv2.branch.e etmv2.exc.vector etmv2.exc.data_abort",
};
static const char *const v2_periodic_thumb_stream[] = {
    "etmv2.tfo.periodic etmv2.tfo.isa.thumb", "etmv2.ca.wait"};

static const port_case port_cases[] = {
    {"etmv1 example 1", TB_PROTO_ETMV1, 3, 8, 1, false, SAMPLES(v1_ex1), v1_ex1_counts,
     STREAM(v1_ex1_stream)},
    {"etmv1 statuses and APO", TB_PROTO_ETMV1, 0, 4, 0, false, SAMPLES(v1_statuses),
     v1_statuses_counts, NULL, 0},
    {"etmv1 CA TD", TB_PROTO_ETMV1, 0, 16, 0, true, SAMPLES(v1_ca_td), v1_ca_td_counts, NULL, 0},
    {"etmv2 statuses", TB_PROTO_ETMV2, 0, 4, 0, false, SAMPLES(v2_statuses),
     v2_statuses_counts, NULL, 0},
    {"etmv2 CA TD", TB_PROTO_ETMV2, 0, 16, 0, true, SAMPLES(v2_ca_td), v2_ca_td_counts, NULL, 0},
    {"etmv2 packets", TB_PROTO_ETMV2, 0, 0, 1, false, SAMPLES(v2_ex), v2_ex_counts,
     STREAM(v2_ex_stream)},
    {"etmv2 periodic Thumb CA", TB_PROTO_ETMV2, 0, 0, 0, true, SAMPLES(v2_periodic_thumb),
     no_counts, STREAM(v2_periodic_thumb_stream)},
    {"etmv2 trigger-replaced statuses", TB_PROTO_ETMV2, 0, 0, 0, false,
     SAMPLES(v2_trigger_replaced), v2_trigger_replaced_counts, NULL, 0},
};

/* The case's fields over a port config c (ETMv1's and ETMv2's have them
 * by the same names). */
#define PORT_CASE_CONFIG(c, k)                                                           \
    do {                                                                                 \
        if ((k)->minor)                                                                  \
            (c).minor = (k)->minor;                                                      \
        if ((k)->port_width)                                                             \
            (c).port_width = (k)->port_width;                                            \
        if ((k)->ctxid_bytes)                                                            \
            (c).ctxid_bytes = (k)->ctxid_bytes;                                          \
        (c).cycle_accurate = (k)->cycle_accurate;                                        \
    } while (0)

/* Checks case k: its capture's counts (into c), and its packets. */
static void check_port_case(const port_case *k, uint64_t *c)
{
    uint8_t cap[TB_ETMV1_HDR_BYTES + TB_ETMV1_SAMPLE_BYTES * 32];
    tb_config cfg;
    size_t n;
    int rc;

    if (k->proto == TB_PROTO_ETMV1) {
        tb_etmv1_config cf;

        tb_etmv1_config_init(&cf);
        PORT_CASE_CONFIG(cf, k);
        n = port_capture(k->proto, &cf, k->s, k->ns, cap, sizeof cap);
        cfg = etmv1_cfg(&cf);
    } else {
        tb_etmv2_config cf;

        tb_etmv2_config_init(&cf);
        PORT_CASE_CONFIG(cf, k);
        n = port_capture(k->proto, &cf, k->s, k->ns, cap, sizeof cap);
        cfg = etmv2_cfg(&cf);
    }
    memset(c, 0, TB_SPECCOV_MAX * sizeof *c);
    rc = k->proto == TB_PROTO_ETMV1 ? tb_speccov_count_etmv1_capture(cap, n, c)
                                    : tb_speccov_count_etmv2_capture(cap, n, c);
    cr_assert_eq(rc, 0, "%s: %d", k->name, rc);
    for (const count_want *w = k->want; w->variant; w++)
        cr_expect_eq(c[find(w->variant)], w->n, "%s: %s %llu, want %llu", k->name, w->variant,
                     (unsigned long long)c[find(w->variant)], (unsigned long long)w->n);
    if (k->stream)
        expect_stream(&cfg, cap, n, k->stream, k->nstream);
}

/* Every case of the table (criterion's parameterised tests do not
 * survive link-time optimisation: one test, each failure naming its
 * case). */
Test(speccov_port, captures)
{
    static uint64_t c[TB_SPECCOV_MAX];

    for (size_t i = 0; i < sizeof port_cases / sizeof port_cases[0]; i++)
        check_port_case(&port_cases[i], c);
}

/* Branch forms read from the bytes (6.7.1 Table 6.9): lengths 2-4, a
 * 5-byte Thumb address (byte 5 b0001xxxx), and DW exceptions: to a high
 * vector, and to a non-vector (no exception variant); a DE to a vector
 * is a branch, not an exception (docs/etmv2.md 4). */
Test(speccov_etmv2, branch_forms)
{
    static const branch_case cases[] = {
        {0x1234, TB_ISA_ARM, 0, TB_ETMV2_DE, "etmv2.branch.len2", {0x8D, 0x12}, 2},
        {0x81234, TB_ISA_ARM, 0, TB_ETMV2_DE, "etmv2.branch.len3", {0x8D, 0x92, 0x10}, 3},
        {0x8081234, TB_ISA_ARM, 0, TB_ETMV2_DE, "etmv2.branch.len4", {0x8D, 0x92, 0x90, 0x20},
         4},
        {0x20001000, TB_ISA_THUMB, 0, TB_ETMV2_DE, "etmv2.branch.len5.thumb",
         {0x81, 0xA0, 0x80, 0x80, 0x11}, 5},
        {0xFFFF0018u, TB_ISA_ARM, 0, TB_ETMV2_DW, "etmv2.branch.len5.arm etmv2.exc.high_vectors",
         {0x8D, 0x80, 0xFE, 0xFF, 0x0F}, 5},
        {0x10, TB_ISA_ARM, 0, TB_ETMV2_DE, "etmv2.branch.len1", {0x09}, 1},
        {0x14, TB_ISA_ARM, 0, TB_ETMV2_DW, "etmv2.branch.len1", {0x0B}, 1},
    };
    tb_etmv2_config cf;
    tb_config cfg;

    tb_etmv2_config_init(&cf);
    cfg = etmv2_cfg(&cf);
    check_branches(&cfg, TB_PROTO_ETMV2, cases, sizeof cases / sizeof cases[0]);
}

/* ---- (b) the catalogue and the committed vectors ---- */

static void load_catalogue(tb_speccov_catalogue *cat)
{
    char path[1024], err[512] = "";

    snprintf(path, sizeof path, "%s/vectors/spec-coverage.tsv", TB_SOURCE_DIR);
    cr_assert_eq(tb_speccov_catalogue_load(cat, path, err, sizeof err), 0, "%s", err);
}

Test(speccov_catalogue, loads_and_names_every_variant)
{
    tb_speccov_catalogue cat;

    load_catalogue(&cat);
    cr_expect_eq(cat.n, tb_speccov_variant_count());
    for (size_t i = 0; i < cat.n; i++) {
        cr_expect_str_eq(tb_speccov_variant_name(cat.rows[i].var), cat.rows[i].id);
        cr_expect(tb_speccov_row_reachable(&cat.rows[i]) ||
                      !strncmp(cat.rows[i].status, "unreachable: ", 13),
                  "%s: %s", cat.rows[i].id, cat.rows[i].status);
    }
    tb_speccov_catalogue_free(&cat);
}

/* The committed catalogue with row `id`'s status replaced, loaded: the
 * loader's return, its message in err. */
static int load_with_status(const char *id, const char *status, char *err, size_t len)
{
    char src[1024], dst[64], line[2048];
    tb_speccov_catalogue cat;
    FILE *in, *out;
    int rc;

    snprintf(src, sizeof src, "%s/vectors/spec-coverage.tsv", TB_SOURCE_DIR);
    snprintf(dst, sizeof dst, "/tmp/tb_cov_cat_%d.tsv", (int)getpid());
    cr_assert((in = fopen(src, "r")));
    cr_assert((out = fopen(dst, "w")));
    while (fgets(line, sizeof line, in)) {
        size_t n = strlen(id);
        char *tab = strrchr(line, '\t');

        if (!strncmp(line, id, n) && line[n] == '\t' && tab)
            fprintf(out, "%.*s\t%s\n", (int)(tab - line), line, status);
        else
            fputs(line, out);
    }
    fclose(in);
    cr_assert_eq(fclose(out), 0);
    err[0] = 0;
    rc = tb_speccov_catalogue_load(&cat, dst, err, len);
    if (rc == 0)
        tb_speccov_catalogue_free(&cat);
    remove(dst);
    return rc;
}

/* Statuses: "reachable", or "unreachable: REASON" then "(issue N)",
 * "(issue N, in progress)" (another branch is adding it) or "(no issue
 * yet)"; anything else is refused with the rule in the message. */
Test(speccov_catalogue, status_forms)
{
    char err[512];

    cr_expect_eq(load_with_status("etmv2.tfo.lsm", "unreachable: not yet (issue 23)", err,
                                  sizeof err), 0, "%s", err);
    cr_expect_eq(load_with_status("etmv2.tfo.lsm", "unreachable: not yet (issue 23, in progress)",
                                  err, sizeof err), 0, "%s", err);
    cr_expect_eq(load_with_status("etmv2.tfo.lsm", "unreachable: not yet (no issue yet)", err,
                                  sizeof err), 0, "%s", err);
    cr_expect_eq(load_with_status("etmv2.tfo.lsm", "unreachable: not yet (issue 23, in progres)",
                                  err, sizeof err), TB_ERR_FORMAT);
    cr_expect(strstr(err, "in progress"), "%s", err);
    cr_expect_eq(load_with_status("etmv2.tfo.lsm", "unreachable: not yet (issue 23 in progress)",
                                  err, sizeof err), TB_ERR_FORMAT);
    cr_expect_eq(load_with_status("etmv2.tfo.lsm", "unreachable: not yet (issue , in progress)",
                                  err, sizeof err), TB_ERR_FORMAT);
    cr_expect_eq(load_with_status("etmv2.tfo.lsm", "unreachable: (issue 23)", err, sizeof err),
                 TB_ERR_FORMAT);
}

Test(speccov_catalogue, markdown_has_a_row_per_variant)
{
    static tb_speccov_tally t;
    tb_speccov_catalogue cat;
    size_t lines = 0;
    char *md;
    int need;

    load_catalogue(&cat);
    memset(&t, 0, sizeof t);
    need = tb_speccov_format_markdown(&cat, &t, NULL, 0);
    cr_assert_gt(need, 0);
    md = malloc((size_t)need + 1);
    cr_assert_not_null(md);
    cr_assert_eq(tb_speccov_format_markdown(&cat, &t, md, (size_t)need + 1), need);
    cr_expect_eq(strlen(md), (size_t)need);
    for (const char *s = md; *s; s++)
        lines += *s == '\n';
    cr_expect_eq(lines, cat.n + 2, "header, separator, one row per variant");
    free(md);
    tb_speccov_catalogue_free(&cat);
}

/* Every variant the encoder can produce occurs in some committed vector
 * (the CI rule).  Lists every one at zero. */
Test(speccov_vectors, every_reachable_variant_occurs)
{
    static tb_speccov_tally t;
    tb_speccov_catalogue cat;
    char dir[1024], err[600] = "", missing[8192] = "";
    unsigned zero = 0;
    int n;

    load_catalogue(&cat);
    memset(&t, 0, sizeof t);
    snprintf(dir, sizeof dir, "%s/vectors/generated", TB_SOURCE_DIR);
    n = tb_speccov_count_dir(dir, &t, err, sizeof err);
    cr_assert_gt(n, 0, "no vectors under %s: %s", dir, err);
    cr_expect_eq(t.bad, 0, "bad or incomplete packets in the vectors");
    for (size_t i = 0; i < cat.n; i++) {
        const tb_speccov_row *r = &cat.rows[i];

        if (tb_speccov_row_reachable(r) && !t.count[r->var]) {
            zero++;
            strncat(missing, "\n  ", sizeof missing - strlen(missing) - 1);
            strncat(missing, r->id, sizeof missing - strlen(missing) - 1);
        }
    }
    cr_expect_eq(zero, 0, "%u reachable variant(s) occur in no vector:%s", zero, missing);
    tb_speccov_catalogue_free(&cat);
}

/* ETMv1 data packets are counted from the decoded transfers (the parser
 * cannot tell address bytes from value bytes without the opcode): a
 * transfer with both traced counts both rows, one with the value only
 * counts the value row, an error element counts none. */
Test(speccov_etmv1, data_rows_from_transfers)
{
    tb_config cfg;
    tb_packet pkt;
    tb_element el;
    tb_speccov_id v[4];
    int n;

    memset(&pkt, 0, sizeof pkt);
    memset(&el, 0, sizeof el);
    cr_assert_eq(tb_config_from_etmv1(&cfg, 0x0000001Cu, 3, 0), 0); /* 8-bit, data both */
    pkt.protocol = TB_PROTO_ETMV1;
    pkt.kind = TB_PKT_DATA;
    el.kind = TB_ELEM_DATA;
    n = tb_speccov_classify_element(&cfg, &pkt, &el, v, 4);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(tb_speccov_variant_name(v[0]), "etmv1.data.address");
    cr_assert_str_eq(tb_speccov_variant_name(v[1]), "etmv1.data.value");
    el.data_flags = TB_DATA_NO_ADDR;
    n = tb_speccov_classify_element(&cfg, &pkt, &el, v, 4);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(tb_speccov_variant_name(v[0]), "etmv1.data.value");
    el.data_flags = 0;
    el.err = TB_ERR_TRUNCATED;
    cr_assert_eq(tb_speccov_classify_element(&cfg, &pkt, &el, v, 4), 0);
}

/* ---- (c) the command line ---- */

/* `vectors --spec-coverage` over the committed vectors exits 0, and its
 * old name `--coverage` (kept as an alias) prints the same report.  Over
 * one vector, variants the catalogue marks reachable occur nowhere: it
 * exits 1 and names each (the CI rule of (b), from the command line). */
Test(speccov_cli, flag_alias_and_gate)
{
    char list[1100], args[4096], dir[] = "/tmp/tb_speccov_cli_XXXXXX", link[128], vec[1100];
    char *out, *out2, *err;
    int rc;

    snprintf(list, sizeof list, "'%s/vectors/vectors.ini'", TB_SOURCE_DIR);
    snprintf(args, sizeof args, "vectors --spec-coverage --list %s", list);
    rc = tb_test_run_cli(args, NULL, &out, NULL, &err);
    cr_expect_eq(rc, 0, "%s: exit %d: %s", args, rc, err);
    cr_expect(strstr(out, " reachable, 0 of them in no vector; "), "%s", out);
    free(err);
    snprintf(args, sizeof args, "vectors --coverage --list %s", list);
    rc = tb_test_run_cli(args, NULL, &out2, NULL, &err);
    cr_expect_eq(rc, 0, "%s: exit %d: %s", args, rc, err);
    cr_expect_str_eq(out2, out, "--coverage (the alias) and --spec-coverage differ");
    free(out2);
    free(err);
    free(out);

    cr_assert_not_null(mkdtemp(dir));
    snprintf(vec, sizeof vec, "%s/vectors/generated/arm_basic-ptm-raw", TB_SOURCE_DIR);
    snprintf(link, sizeof link, "%s/arm_basic-ptm-raw", dir);
    cr_assert_eq(symlink(vec, link), 0);
    snprintf(args, sizeof args, "vectors --spec-coverage --list %s --out %s", list, dir);
    rc = tb_test_run_cli(args, NULL, &out, NULL, &err);
    remove(link);
    rmdir(dir);
    cr_expect_eq(rc, 1, "%s: exit %d: %s", args, rc, err);
    cr_expect(strstr(out, " variants over 1 vectors "), "%s", out);
    cr_expect(strstr(err, "spec coverage: reachable variant etmv3.async "), "%s", err);
    free(out);
    free(err);
}

/* ---- (d) outside the library ---- */

/* The catalogue is tooling for the vectors (library tb_speccov), not
 * part of libtracebench: the in-tree archive (the objects the installed
 * archive and the shared library are made of) defines no tb_speccov_
 * symbol.  Read with nm; a symbol every build has (tb_parser_new) shows
 * the listing is real. */
Test(speccov_layering, not_in_libtracebench)
{
    char cmd[1400], line[512];
    unsigned defined = 0, parser_new = 0;
    FILE *p;

    snprintf(cmd, sizeof cmd, "nm -g --defined-only '%s/libtracebench.a' 2>/dev/null",
             TB_BINARY_DIR);
    p = popen(cmd, "r");
    cr_assert_not_null(p);
    while (fgets(line, sizeof line, p)) {
        defined += strstr(line, " tb_speccov_") != NULL;
        parser_new += strstr(line, " tb_parser_new\n") != NULL;
    }
    pclose(p);
    cr_assert_gt(parser_new, 0, "%s listed no tb_parser_new: no symbol listing", cmd);
    cr_expect_eq(defined, 0, "libtracebench.a defines %u tb_speccov_ symbol(s)", defined);
}
