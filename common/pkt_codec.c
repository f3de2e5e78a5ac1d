/*
 * Branch-address compression and timestamp fields, shared by the ETMv3
 * and PTM writers and parsers (protocol-notes 2.7, 2.8, 3.7, 3.9).
 *
 * An address packet carries only the low-order bits that differ from the
 * last address *output*; the receiver replaces those bits of its copy
 * (IHI0014Q 6.7.1: no arithmetic, just bit replacement).  The fifth byte
 * names the instruction set, so any change of ISA needs all five.
 */
#include "tracebench/pkt_codec.h"

/* Address bits carried by byte 5 per layout (protocol-notes 2.7 table):
 * ARM A[31:29], Thumb A[31:28], Jazelle A[31:27]. */
static unsigned byte5_bits(tb_isa isa)
{
    switch (isa) {
    case TB_ISA_THUMB:
    case TB_ISA_THUMBEE: return 4;
    case TB_ISA_JAZELLE: return 5;
    default: return 3;
    }
}

/* An unknown ISA is read with the ARM layout, as OpenCSD does before
 * the first I-sync (protocol-notes 4.4 item 16). */
/* Before any I-sync or 5-byte address names the ISA no layout is right;
 * we read such an address in the Thumb layout, as OpenCSD does (Snowball
 * 0x10 Idx 1173 lists as 0x????137E), so listings of the same bytes agree. */
unsigned tb_addr_shift(tb_isa isa)
{
    switch (isa) {
    case TB_ISA_UNKNOWN:
    case TB_ISA_THUMB:
    case TB_ISA_THUMBEE: return 1;
    case TB_ISA_JAZELLE: return 0;
    default: return 2;
    }
}

/* Byte 1 has 6 payload bits; bytes 2-4 have 7, except that under the
 * six-bit scheme a *last* byte 2-4 gives bit 6 to the exception flag
 * (protocol-notes 2.7 "Original vs alternative", 3.7). */
unsigned tb_addr_bits_for(tb_addr_scheme s, tb_isa isa, unsigned k)
{
    unsigned payload;

    if (k == 0)
        return 0;
    if (k >= 5)
        return 32;
    payload = 6 + 7 * (k - 1);
    if (s == TB_ADDR_SIXBIT && k > 1)
        payload -= 1;
    return payload + tb_addr_shift(isa);
}

static uint32_t low_mask(unsigned bits)
{
    return bits >= 32 ? 0xFFFFFFFFu : ((1u << bits) - 1u);
}

static bool isa_valid(tb_isa isa)
{
    return isa == TB_ISA_ARM || isa == TB_ISA_THUMB ||
           isa == TB_ISA_THUMBEE || isa == TB_ISA_JAZELLE;
}

int tb_addr_encode(tb_addr_scheme s, uint32_t addr, tb_isa isa,
                   uint32_t last_addr, tb_isa last_isa, bool want_exc,
                   unsigned min_bytes, uint8_t out[5])
{
    unsigned shift, k, kmin, i, used;
    uint32_t v;

    if (!out || !isa_valid(isa) || min_bytes > 5 ||
        (s != TB_ADDR_ORIGINAL && s != TB_ADDR_SIXBIT))
        return TB_ERR_INVAL;
    shift = tb_addr_shift(isa);
    addr &= ~low_mask(shift);

    /* Where the X bit can live: the original scheme has it only in byte
     * 5; the six-bit scheme in any last byte but the header
     * (protocol-notes 2.7). */
    kmin = min_bytes ? min_bytes : 1;
    if (want_exc) {
        if (s == TB_ADDR_ORIGINAL)
            kmin = 5;
        else if (kmin < 2)
            kmin = 2;
    }
    for (k = kmin; k < 5; k++) {
        if (isa != last_isa)
            continue; /* only byte 5 names the ISA */
        if (((addr ^ last_addr) & ~low_mask(tb_addr_bits_for(s, isa, k))) == 0)
            break;
    }
    if (k > 5)
        k = 5;

    v = addr >> shift;
    out[0] = (uint8_t)(0x01u | ((v & 0x3Fu) << 1) | (k > 1 ? 0x80u : 0));
    used = 6;
    for (i = 1; i < k && i < 4; i++) {
        bool last = (i == k - 1);
        if (last && s == TB_ADDR_SIXBIT) {
            out[i] = (uint8_t)(((v >> used) & 0x3Fu) | (want_exc ? 0x40u : 0));
            used += 6;
        } else {
            out[i] = (uint8_t)(((v >> used) & 0x7Fu) | (last ? 0 : 0x80u));
            used += 7;
        }
    }
    if (k == 5) {
        /* Byte 5: ISA tag, then the top address bits (protocol-notes 2.7
         * table; IHI0014Q 6.7.1 table 6.9 for ARM/Thumb). */
        unsigned nb = byte5_bits(isa);
        uint8_t tag = isa == TB_ISA_JAZELLE ? 0x20
                    : (isa == TB_ISA_ARM ? 0x08 : 0x10);
        out[4] = (uint8_t)(tag | ((addr >> (32 - nb)) & low_mask(nb)) |
                           (want_exc ? 0x40u : 0));
    }
    return (int)k;
}

int tb_addr_decode(tb_addr_scheme s, const uint8_t *b, unsigned n,
                   uint32_t last_addr, tb_isa last_isa, uint32_t *addr,
                   tb_isa *isa, bool *isa_named, unsigned *nbits,
                   bool *exc_follows)
{
    tb_isa use = last_isa;
    bool named = false, x = false;
    unsigned bits, shift;
    uint32_t v;

    if (!b || n < 1 || n > 5)
        return TB_ERR_INVAL;
    if (n == 5) {
        uint8_t b5 = b[4];
        /* OpenCSD's byte-5 masks (protocol-notes 2.7). */
        if ((b5 & 0xB8) == 0x08)
            use = TB_ISA_ARM;
        else if ((b5 & 0xB0) == 0x10)
            use = TB_ISA_THUMB;
        else if ((b5 & 0xA0) == 0x20)
            use = TB_ISA_JAZELLE;
        else
            return TB_ERR_BAD_PACKET;
        named = true;
        x = (b5 & 0x40) != 0;
    }
    shift = tb_addr_shift(use);

    /* Six bits from the header, seven from each byte up to the fourth;
     * in the six-bit scheme the last of those gives six and the X bit
     * (protocol-notes 2.7).  Straight-line: a decoder calls this for
     * every branch packet. */
    v = (uint32_t)((b[0] >> 1) & 0x3F);
    switch (n) {
    case 5:
    case 4:
        v |= (uint32_t)(b[3] & 0x7F) << 20;
        /* fall through */
    case 3:
        v |= (uint32_t)(b[2] & 0x7F) << 13;
        /* fall through */
    case 2:
        v |= (uint32_t)(b[1] & 0x7F) << 6;
        break;
    default:
        break;
    }
    if (s == TB_ADDR_SIXBIT && n >= 2 && n <= 4) {
        v &= ~(0x40u << (6 + 7 * (n - 2)));
        x = (b[n - 1] & 0x40) != 0;
    }
    v <<= shift;
    if (n == 5) {
        unsigned nb = byte5_bits(use);
        v |= (uint32_t)(b[4] & low_mask(nb)) << (32 - nb);
    }
    bits = tb_addr_bits_for(s, use, n);

    if (addr)
        *addr = (last_addr & ~low_mask(bits)) | (v & low_mask(bits));
    if (isa)
        *isa = use;
    if (isa_named)
        *isa_named = named;
    if (nbits)
        *nbits = bits;
    if (exc_follows)
        *exc_follows = x;
    return TB_OK;
}

/* C bit 7 on bytes 1-4; byte 5 always ends the address (IHI0014Q
 * 6.7.1: at most five bytes). */
unsigned tb_addr_length(tb_addr_scheme s, const uint8_t *b, size_t avail)
{
    size_t i;

    (void)s; /* both schemes delimit with the same C bits */
    if (!b)
        return 0;
    for (i = 0; i < avail && i < 5; i++) {
        if (i == 4 || !(b[i] & 0x80))
            return (unsigned)(i + 1);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Timestamps (protocol-notes 2.8, 3.9): 7 bits a byte, LSB first; the
 * last possible byte (7th for 48 bits, 9th for 64) is full width. */

static unsigned ts_max_bytes(bool ts64)
{
    return ts64 ? 9 : 7;
}

static unsigned ts_bits_for(unsigned n, bool ts64)
{
    unsigned nmax = ts_max_bytes(ts64);

    if (n >= nmax)
        return ts64 ? 64 : 48;
    return 7 * n;
}

static uint64_t ts_mask(unsigned bits)
{
    return bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
}

int tb_ts_encode(uint64_t value, uint64_t last, bool ts64, bool full,
                 uint8_t out[9])
{
    unsigned nmax = ts_max_bytes(ts64), n, i;

    if (!out || (!ts64 && (value >> 48) != 0))
        return TB_ERR_INVAL;
    if (full) {
        n = nmax;
    } else {
        for (n = 1; n < nmax; n++)
            if (((value ^ last) & ~ts_mask(7 * n)) == 0)
                break;
    }
    for (i = 0; i < n; i++) {
        uint8_t by;
        if (i == nmax - 1)
            by = (uint8_t)((value >> (7 * i)) & (ts64 ? 0xFF : 0x3F));
        else
            by = (uint8_t)(((value >> (7 * i)) & 0x7F) |
                           (i + 1 < n ? 0x80 : 0));
        out[i] = by;
    }
    return (int)n;
}

unsigned tb_ts_length(const uint8_t *b, size_t avail, bool ts64)
{
    unsigned nmax = ts_max_bytes(ts64);
    size_t i;

    if (!b)
        return 0;
    for (i = 0; i < avail && i < nmax; i++) {
        if (i == nmax - 1 || !(b[i] & 0x80))
            return (unsigned)(i + 1);
    }
    return 0;
}

void tb_ts_decode(const uint8_t *b, unsigned n, bool ts64, uint64_t last,
                  uint64_t *value, unsigned *nbits)
{
    unsigned nmax = ts_max_bytes(ts64), i, bits;
    uint64_t v = 0;

    if (!b)
        n = 0;
    if (n > nmax)
        n = nmax;
    for (i = 0; i < n; i++) {
        uint8_t m = (i == nmax - 1) ? (ts64 ? 0xFF : 0x3F) : 0x7F;
        v |= (uint64_t)(b[i] & m) << (7 * i);
    }
    bits = ts_bits_for(n, ts64);
    if (value)
        *value = (last & ~ts_mask(bits)) | (v & ts_mask(bits));
    if (nbits)
        *nbits = bits;
}
