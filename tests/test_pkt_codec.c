/*
 * Branch-address and timestamp codecs (common/pkt_codec.c).
 *
 * Worked examples are real packets from the TC2 and Snowball captures as
 * listed in protocol-notes 2.7, 3.7 and 7.x (decoded values agree with
 * OpenCSD and DS-5 there); the minimal-compression cases come from the
 * seed-000 rule (IHI0014Q 6.7.1).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tb_test.h"
#include "tracebench/pkt_codec.h"

static void decode_ok(tb_addr_scheme s, const uint8_t *b, unsigned n,
                      uint32_t last, tb_isa last_isa, uint32_t want_addr,
                      tb_isa want_isa, bool want_named, unsigned want_bits,
                      bool want_exc)
{
    uint32_t addr = 0;
    tb_isa isa = TB_ISA_UNKNOWN;
    bool named = !want_named, exc = !want_exc;
    unsigned bits = 0;

    cr_assert_eq(tb_addr_length(s, b, n), n, "length of %u-byte address", n);
    cr_assert_eq(tb_addr_length(s, b, n - 1), 0, "incomplete address");
    cr_assert_eq(tb_addr_decode(s, b, n, last, last_isa, &addr, &isa, &named,
                                &bits, &exc), 0);
    cr_assert_eq(addr, want_addr, "addr 0x%08X, want 0x%08X", addr, want_addr);
    cr_assert_eq(isa, want_isa);
    cr_assert_eq(named, want_named);
    cr_assert_eq(bits, want_bits, "bits %u, want %u", bits, want_bits);
    cr_assert_eq(exc, want_exc);
}

/* TC2 0x10 (ETMv3.5, original scheme): B7 FD D6 01 after the I-sync at
 * 0xC002115C Thumb.  OpenCSD: "Addr=0xC035BEB6 ~[0x35BEB6]" (28 bits). */
Test(pkt_codec, etmv3_original_thumb_4byte)
{
    static const uint8_t b[] = {0xB7, 0xFD, 0xD6, 0x01};
    decode_ok(TB_ADDR_ORIGINAL, b, 4, 0xC002115C, TB_ISA_THUMB, 0xC035BEB6,
              TB_ISA_THUMB, false, 28, false);
}

/* Same packet read with the six-bit scheme: the last byte then gives bit
 * 6 to X, which is why TC2 must be decoded with the original scheme
 * (protocol-notes 10). */
Test(pkt_codec, etmv3_scheme_matters)
{
    static const uint8_t b[] = {0xB7, 0xFD, 0xD6, 0x41};
    uint32_t a1, a2;
    bool x1, x2;
    unsigned n1, n2;

    cr_assert_eq(tb_addr_decode(TB_ADDR_ORIGINAL, b, 4, 0xC002115C,
                                TB_ISA_THUMB, &a1, NULL, NULL, &n1, &x1), 0);
    cr_assert_eq(tb_addr_decode(TB_ADDR_SIXBIT, b, 4, 0xC002115C,
                                TB_ISA_THUMB, &a2, NULL, NULL, &n2, &x2), 0);
    cr_assert_eq(a1, 0xC835BEB6);
    cr_assert_not(x1);
    cr_assert_eq(n1, 28);
    cr_assert_eq(a2, 0xC035BEB6);
    cr_assert(x2);
    cr_assert_eq(n2, 27);
}

/* TC2 0x10 exception return: D7 BA 86 DB 0D, Thumb -> ARM, 0xB6C33AAC
 * (protocol-notes 7.2). */
Test(pkt_codec, etmv3_5byte_isa_change)
{
    static const uint8_t b[] = {0xD7, 0xBA, 0x86, 0xDB, 0x0D};
    decode_ok(TB_ADDR_ORIGINAL, b, 5, 0xC000CD82, TB_ISA_THUMB, 0xB6C33AAC,
              TB_ISA_ARM, true, 32, false);
}

/* TC2 0x13 PTM: BB B6 BD 01 -> 0xC02F5B3A (27 bits, protocol-notes 7.1). */
Test(pkt_codec, ptm_sixbit_thumb_4byte)
{
    static const uint8_t b[] = {0xBB, 0xB6, 0xBD, 0x01};
    decode_ok(TB_ADDR_SIXBIT, b, 4, 0xC0018DE4, TB_ISA_THUMB, 0xC02F5B3A,
              TB_ISA_THUMB, false, 27, false);
}

/* A1 AB 8F 00: the zero last byte clears A[26:21] going from 0xC03E4658
 * to 0xC003D5A0 (protocol-notes 7.1). */
Test(pkt_codec, ptm_zero_last_byte)
{
    static const uint8_t b[] = {0xA1, 0xAB, 0x8F, 0x00};
    uint8_t out[5];

    decode_ok(TB_ADDR_SIXBIT, b, 4, 0xC03E4658, TB_ISA_THUMB, 0xC003D5A0,
              TB_ISA_THUMB, false, 27, false);
    cr_assert_eq(tb_addr_encode(TB_ADDR_SIXBIT, 0xC003D5A0, TB_ISA_THUMB,
                                0xC03E4658, TB_ISA_THUMB, false, 0, out), 4);
    cr_assert_arr_eq(out, b, 4);
}

/* Snowball IRQ: 8D 80 FE FF 4F -> 0xFFFF0018 ARM, exception bytes follow
 * (protocol-notes 3.7). */
Test(pkt_codec, ptm_exception_vector)
{
    static const uint8_t b[] = {0x8D, 0x80, 0xFE, 0xFF, 0x4F};
    uint8_t out[5];

    decode_ok(TB_ADDR_SIXBIT, b, 5, 0xC0010EF0, TB_ISA_ARM, 0xFFFF0018,
              TB_ISA_ARM, true, 32, true);
    /* Same ISA but an exception: the encoder may not drop to fewer bytes
     * than the six-bit X bit allows; here all high bits differ anyway. */
    cr_assert_eq(tb_addr_encode(TB_ADDR_SIXBIT, 0xFFFF0018, TB_ISA_ARM,
                                0xC0010EF0, TB_ISA_ARM, true, 0, out), 5);
    cr_assert_arr_eq(out, b, 5);
}

/* PTM ARM<->Thumb change forces 5 bytes: BD 85 80 80 0C = 0x80000578 ARM
 * (protocol-notes 3.7). */
Test(pkt_codec, isa_change_forces_five)
{
    static const uint8_t b[] = {0xBD, 0x85, 0x80, 0x80, 0x0C};
    uint8_t out[5];

    decode_ok(TB_ADDR_SIXBIT, b, 5, 0x80000570, TB_ISA_THUMB, 0x80000578,
              TB_ISA_ARM, true, 32, false);
    cr_assert_eq(tb_addr_encode(TB_ADDR_SIXBIT, 0x80000578, TB_ISA_ARM,
                                0x80000570, TB_ISA_THUMB, false, 0, out), 5);
    cr_assert_arr_eq(out, b, 5);
    /* Same ISA: a single byte does. */
    cr_assert_eq(tb_addr_encode(TB_ADDR_SIXBIT, 0x80000578, TB_ISA_ARM,
                                0x80000570, TB_ISA_ARM, false, 0, out), 1);
    cr_assert_eq(out[0], 0x3D);
}

/* Seed-000 (IHI0014Q 6.7.1): upper 12 bits unchanged, bit 19 changed ->
 * only A[19:0], three bytes instead of five.  Holds for both schemes and
 * for ARM and Thumb; one more changed bit (20) needs a fourth byte where
 * the three-byte form stops at 20 bits (Thumb, six-bit scheme). */
Test(pkt_codec, seed000_three_bytes_for_bit19)
{
    static const tb_addr_scheme schemes[] = {TB_ADDR_ORIGINAL, TB_ADDR_SIXBIT};
    static const tb_isa isas[] = {TB_ISA_ARM, TB_ISA_THUMB};
    const uint32_t last = 0xC0012344;
    uint8_t out[5];

    for (int si = 0; si < 2; si++) {
        for (int ii = 0; ii < 2; ii++) {
            uint32_t addr = last ^ 0x00080000u;
            uint32_t got;
            int n = tb_addr_encode(schemes[si], addr, isas[ii], last, isas[ii],
                                   false, 0, out);
            cr_assert_eq(n, 3, "scheme %d isa %d: %d bytes", si, ii, n);
            cr_assert_eq(tb_addr_decode(schemes[si], out, 3, last, isas[ii],
                                        &got, NULL, NULL, NULL, NULL), 0);
            cr_assert_eq(got, addr);
            /* An ISA change forces five whatever changed. */
            n = tb_addr_encode(schemes[si], last, isas[ii], last,
                               isas[1 - ii], false, 0, out);
            cr_assert_eq(n, 5);
        }
    }
    cr_assert_eq(tb_addr_encode(TB_ADDR_SIXBIT, last ^ 0x00100000u,
                                TB_ISA_THUMB, last, TB_ISA_THUMB, false, 0,
                                out), 4);
    cr_assert_eq(tb_addr_encode(TB_ADDR_ORIGINAL, last ^ 0x00100000u,
                                TB_ISA_THUMB, last, TB_ISA_THUMB, false, 0,
                                out), 3);
}

Test(pkt_codec, bits_table)
{
    /* protocol-notes 2.7: original ARM 8,15,22,29 Thumb 7,14,21,28;
     * alternative / PTM ARM 8,14,21,28 Thumb 7,13,20,27. */
    static const unsigned orig_arm[] = {8, 15, 22, 29, 32};
    static const unsigned orig_thumb[] = {7, 14, 21, 28, 32};
    static const unsigned six_arm[] = {8, 14, 21, 28, 32};
    static const unsigned six_thumb[] = {7, 13, 20, 27, 32};
    static const unsigned six_jaz[] = {6, 12, 19, 26, 32};

    for (unsigned k = 1; k <= 5; k++) {
        cr_assert_eq(tb_addr_bits_for(TB_ADDR_ORIGINAL, TB_ISA_ARM, k), orig_arm[k - 1]);
        cr_assert_eq(tb_addr_bits_for(TB_ADDR_ORIGINAL, TB_ISA_THUMB, k), orig_thumb[k - 1]);
        cr_assert_eq(tb_addr_bits_for(TB_ADDR_SIXBIT, TB_ISA_ARM, k), six_arm[k - 1]);
        cr_assert_eq(tb_addr_bits_for(TB_ADDR_SIXBIT, TB_ISA_THUMB, k), six_thumb[k - 1]);
        cr_assert_eq(tb_addr_bits_for(TB_ADDR_SIXBIT, TB_ISA_JAZELLE, k), six_jaz[k - 1]);
    }
    cr_assert_eq(tb_addr_shift(TB_ISA_ARM), 2);
    cr_assert_eq(tb_addr_shift(TB_ISA_THUMB), 1);
    cr_assert_eq(tb_addr_shift(TB_ISA_THUMBEE), 1);
    cr_assert_eq(tb_addr_shift(TB_ISA_JAZELLE), 0);
}

Test(pkt_codec, exception_flag_placement)
{
    uint8_t out[5];
    bool x;

    /* Original scheme: X only in byte 5. */
    cr_assert_eq(tb_addr_encode(TB_ADDR_ORIGINAL, 0x1004, TB_ISA_ARM, 0x1000,
                                TB_ISA_ARM, true, 0, out), 5);
    cr_assert_eq(out[4] & 0x40, 0x40);
    /* Six-bit scheme: a 1-byte header has no X bit, so 2 bytes. */
    cr_assert_eq(tb_addr_encode(TB_ADDR_SIXBIT, 0x1004, TB_ISA_ARM, 0x1000,
                                TB_ISA_ARM, true, 0, out), 2);
    cr_assert_eq(out[1], 0x50); /* A[13:8] = 0x10, X */
    cr_assert_eq(tb_addr_decode(TB_ADDR_SIXBIT, out, 2, 0x1000, TB_ISA_ARM,
                                NULL, NULL, NULL, NULL, &x), 0);
    cr_assert(x);
    /* min_bytes floor. */
    cr_assert_eq(tb_addr_encode(TB_ADDR_SIXBIT, 0x1004, TB_ISA_ARM, 0x1000,
                                TB_ISA_ARM, false, 3, out), 3);
    cr_assert_eq(out[0] & 0x80, 0x80);
    cr_assert_eq(out[1] & 0x80, 0x80);
    cr_assert_eq(out[2], 0x00);
}

Test(pkt_codec, bad_byte5_and_bad_args)
{
    static const uint8_t bad[] = {0x81, 0x80, 0x80, 0x80, 0x00};
    uint8_t out[5];

    cr_assert_eq(tb_addr_decode(TB_ADDR_ORIGINAL, bad, 5, 0, TB_ISA_ARM, NULL,
                                NULL, NULL, NULL, NULL), TB_ERR_BAD_PACKET);
    cr_assert_eq(tb_addr_decode(TB_ADDR_ORIGINAL, bad, 0, 0, TB_ISA_ARM, NULL,
                                NULL, NULL, NULL, NULL), TB_ERR_INVAL);
    cr_assert_eq(tb_addr_encode(TB_ADDR_ORIGINAL, 0, TB_ISA_UNKNOWN, 0,
                                TB_ISA_ARM, false, 0, out), TB_ERR_INVAL);
    cr_assert_eq(tb_addr_encode(TB_ADDR_ORIGINAL, 0, TB_ISA_ARM, 0,
                                TB_ISA_ARM, false, 6, out), TB_ERR_INVAL);
    /* Byte 5 ends an address even with its bit 7 set (legacy form). */
    cr_assert_eq(tb_addr_length(TB_ADDR_ORIGINAL,
                                (const uint8_t[]){0x81, 0x80, 0x80, 0x80, 0xC8, 0x00}, 6), 5);
}

static const tb_isa rand_isas[] = {TB_ISA_ARM, TB_ISA_THUMB, TB_ISA_THUMBEE,
                                   TB_ISA_JAZELLE};

static uint32_t rand_addr(uint64_t *st, uint32_t base)
{
    uint64_t r = tb_test_rand(st);
    /* Mostly near the base so every length occurs. */
    switch (r & 3) {
    case 0: return (uint32_t)(r >> 32);
    default: return base ^ ((uint32_t)(r >> 32) >> (unsigned)((r >> 8) % 32));
    }
}

Test(pkt_codec, address_round_trip_random)
{
    uint64_t st = 0x1234567;
    unsigned hist[6] = {0};

    for (int it = 0; it < 200000; it++) {
        tb_addr_scheme s = (tb_addr_scheme)(tb_test_rand(&st) & 1);
        tb_isa last_isa = rand_isas[tb_test_rand(&st) & 3];
        tb_isa isa = (tb_test_rand(&st) & 3) ? last_isa
                                             : rand_isas[tb_test_rand(&st) & 3];
        uint32_t last = (uint32_t)tb_test_rand(&st);
        uint32_t addr = rand_addr(&st, last);
        bool want_exc = (tb_test_rand(&st) & 7) == 0;
        unsigned minb = (tb_test_rand(&st) & 7) == 0 ? (unsigned)(tb_test_rand(&st) % 6) : 0;
        uint8_t out[5];
        uint32_t got;
        tb_isa gisa;
        bool named, x;
        unsigned bits;
        unsigned shift = tb_addr_shift(isa);
        uint32_t aligned = addr & ~((1u << shift) - 1u);
        int n = tb_addr_encode(s, addr, isa, last, last_isa, want_exc, minb, out);

        cr_assert(n >= 1 && n <= 5);
        hist[n]++;
        cr_assert_eq(tb_addr_length(s, out, 5), (unsigned)n);
        cr_assert_eq(out[0] & 1, 1);
        cr_assert_eq(tb_addr_decode(s, out, (unsigned)n, last, last_isa, &got,
                                    &gisa, &named, &bits, &x), 0);
        cr_assert_eq(got, aligned, "it %d: 0x%08X -> 0x%08X (n %d)", it,
                     aligned, got, n);
        cr_assert_eq(x, want_exc);
        cr_assert_eq(named, n == 5);
        cr_assert_eq(bits, tb_addr_bits_for(s, gisa, (unsigned)n));
        if (n == 5)
            cr_assert_eq(gisa, isa == TB_ISA_THUMBEE ? TB_ISA_THUMB : isa);
        else
            cr_assert_eq(gisa, last_isa);
        /* Minimal: one byte fewer would not do (unless a floor set it). */
        if (n > 1 && (unsigned)n > minb && !(want_exc && (s == TB_ADDR_ORIGINAL || n == 2))) {
            if (isa == last_isa) {
                unsigned fewer = tb_addr_bits_for(s, isa, (unsigned)n - 1);
                cr_assert_neq((aligned ^ last) >> fewer, 0,
                              "it %d: %d bytes not minimal", it, n);
            }
        }
    }
    for (int k = 1; k <= 5; k++)
        cr_assert_gt(hist[k], 1000, "length %d seldom produced", k);
}

/* TC2 0x10 timestamps (protocol-notes 7.2, /tmp listing of trc_pkt_lister):
 * full 9-byte value after the A-sync, then two compressed updates. */
Test(pkt_codec, ts_tc2_examples)
{
    static const uint8_t full[] = {0xBD, 0x9A, 0xC3, 0xCE, 0xAF, 0x90, 0x80, 0x80, 0x00};
    static const uint8_t upd1[] = {0xDF, 0x1E};
    static const uint8_t upd2[] = {0x85, 0x2B};
    uint64_t v;
    unsigned bits;
    uint8_t out[9];

    cr_assert_eq(tb_ts_length(full, 9, true), 9);
    cr_assert_eq(tb_ts_length(full, 8, true), 0);
    tb_ts_decode(full, 9, true, 0, &v, &bits);
    cr_assert_eq(v, 0x82F9D0CD3Dull);
    cr_assert_eq(bits, 64);
    cr_assert_eq(tb_ts_encode(0x82F9D0CD3Dull, 0, true, true, out), 9);
    cr_assert_arr_eq(out, full, 9);

    tb_ts_decode(upd1, 2, true, 0x82F9D0CD3Dull, &v, &bits);
    cr_assert_eq(v, 0x82F9D0CF5Full);
    cr_assert_eq(bits, 14);
    cr_assert_eq(tb_ts_encode(0x82F9D0CF5Full, 0x82F9D0CD3Dull, true, false, out), 2);
    cr_assert_arr_eq(out, upd1, 2);

    tb_ts_decode(upd2, 2, true, 0x82F9D0D544ull, &v, &bits);
    cr_assert_eq(v, 0x82F9D0D585ull);
    cr_assert_eq(tb_ts_encode(0x82F9D0D585ull, 0x82F9D0D544ull, true, false, out), 2);
    cr_assert_arr_eq(out, upd2, 2);

    /* PTM 0x13: 42 CC 97 C6 CE AF 90 80 80 00 -> 0x82F9D18BCC. */
    tb_ts_decode((const uint8_t[]){0xCC, 0x97, 0xC6, 0xCE, 0xAF, 0x90, 0x80, 0x80, 0x00},
                 9, true, 0, &v, &bits);
    cr_assert_eq(v, 0x82F9D18BCCull);
}

Test(pkt_codec, ts_last_byte_full_width)
{
    uint8_t out[9];
    uint64_t v;
    unsigned bits;

    /* 64-bit: the 9th byte carries bits 63:56, its bit 7 is data. */
    cr_assert_eq(tb_ts_encode(0xFF00000000000000ull, 0, true, false, out), 9);
    cr_assert_eq(out[8], 0xFF);
    cr_assert_eq(tb_ts_length(out, 9, true), 9);
    tb_ts_decode(out, 9, true, 0x1234, &v, &bits);
    cr_assert_eq(v, 0xFF00000000000000ull);
    /* 48-bit: the 7th byte carries bits 47:42 only. */
    cr_assert_eq(tb_ts_encode(0xFC0000000000ull, 0, false, false, out), 7);
    cr_assert_eq(out[6], 0x3F);
    tb_ts_decode(out, 7, false, 0, &v, &bits);
    cr_assert_eq(v, 0xFC0000000000ull);
    cr_assert_eq(bits, 48);
    cr_assert_eq(tb_ts_encode(1ull << 48, 0, false, false, out), TB_ERR_INVAL);
    /* Unchanged value still needs one byte. */
    cr_assert_eq(tb_ts_encode(77, 77, true, false, out), 1);
    cr_assert_eq(out[0], 77);
}

Test(pkt_codec, ts_round_trip_random)
{
    uint64_t st = 42;

    for (int it = 0; it < 100000; it++) {
        bool ts64 = tb_test_rand(&st) & 1;
        uint64_t lim = ts64 ? ~0ull : ((1ull << 48) - 1);
        uint64_t last = tb_test_rand(&st) & lim;
        uint64_t value = (last ^ (tb_test_rand(&st) >> (tb_test_rand(&st) % 64))) & lim;
        bool full = (tb_test_rand(&st) & 7) == 0;
        uint8_t out[9];
        uint64_t got;
        unsigned bits;
        int n = tb_ts_encode(value, last, ts64, full, out);

        cr_assert(n >= 1 && n <= (ts64 ? 9 : 7));
        cr_assert_eq(tb_ts_length(out, 9, ts64), (unsigned)n);
        tb_ts_decode(out, (unsigned)n, ts64, last, &got, &bits);
        cr_assert_eq(got, value, "it %d", it);
        if (full)
            cr_assert_eq(n, ts64 ? 9 : 7);
        else if (n > 1)
            cr_assert_neq((value ^ last) >> (7 * (n - 1)), 0, "not minimal");
    }
}
