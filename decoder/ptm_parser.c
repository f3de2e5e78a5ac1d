/*
 * PTM (PFT 1.0 / 1.1) packet parser: trace bytes -> tb_packet.
 *
 * The parser takes one byte at a time into a buffer that holds at most
 * one packet, and asks after each byte whether the packet is complete.
 * That makes the output independent of how the stream is cut into chunks
 * and keeps memory constant.  Field meanings follow protocol-notes
 * section 3 and what OpenCSD's trc_pkt_lister prints (protocol-notes 6.1).
 *
 * Address and timestamp fields go through the shared codec
 * (common/pkt_codec.c, scheme TB_ADDR_SIXBIT for PTM).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "fused.h"
#include "tracebench/parser.h"
#include "tracebench/pkt_codec.h"
#include "backend.h"

/* A-sync is five zeros and 0x80 (protocol-notes 3.3).
 * Extra leading zeros are tolerated as OpenCSD does; an A-sync packet
 * keeps at most this many zeros, older ones count as unsynchronised. */
#define ASYNC_MIN_ZEROS 5
#define ASYNC_MAX_ZEROS (TB_PKT_MAX_BYTES - 1)

enum {
    ST_HUNT = 0, /* looking for an A-sync */
    ST_SYNC,     /* aligned: the next byte is a header */
};

struct tb_ptm_parser {
    /* Configuration (protocol-notes 1.1, 1.3). */
    bool ca;
    bool ts64;
    uint8_t ctxid_bytes;

    int state;
    uint8_t buf[TB_PKT_MAX_BYTES];
    /* The packet being decoded: buf, or in the fast path the caller's
     * chunk itself (saves copying each packet twice). */
    const uint8_t *pk;
    /* hdr_fast[h]: h starts a packet the fast path may take whole (not
     * an A-sync zero, not reserved); worked out once in _new(). */
    uint8_t hdr_fast[256];
    /* Plain atom headers (protocol-notes 3.5): count and N bits (bit i
     * for atom i, oldest first), for the fused path. */
    uint8_t atom_n[256], atom_nbits[256];
    uint64_t idx[TB_PKT_MAX_BYTES]; /* stream index of each buf[] byte */
    unsigned n;

    /* Unsynchronised bytes waiting to be reported as one NOTSYNC. */
    uint64_t skip_count;
    uint64_t skip_index;

    /* Packet-level state carried between packets (protocol-notes 4.1:
     * the last *output* address, not the execution address). */
    uint32_t addr;
    unsigned addr_valid_bits; /* most bits ever supplied since reset */
    tb_isa family;            /* ARM, THUMB, JAZELLE or UNKNOWN */
    bool altisa, ns, hyp;
    uint64_t ts;
};

static void forget_state(tb_ptm_parser *p)
{
    p->addr = 0;
    p->addr_valid_bits = 0;
    p->family = TB_ISA_UNKNOWN;
    p->altisa = p->ns = p->hyp = false;
    p->ts = 0;
}

void tb_ptm_parser_reset(tb_ptm_parser *p)
{
    if (!p)
        return;
    p->state = ST_HUNT;
    p->n = 0;
    p->pk = p->buf;
    p->skip_count = 0;
    p->skip_index = 0;
    forget_state(p);
}

static bool is_reserved(uint8_t h)
{
    if ((h & 1) || (h & 0x80))
        return false; /* branch address or atom */
    switch (h) {
    case 0x00: case 0x08: case 0x0C: case 0x3C: case 0x42: case 0x46:
    case 0x66: case 0x6E: case 0x72: case 0x76:
        return false;
    default:
        return true; /* protocol-notes 3.2: everything else */
    }
}

/* Plain (not cycle-accurate) atom header h: the atom count, and in
 * *nbits bit i set when atom i, oldest first, is N.  The highest set bit
 * of 6..2 marks the field; the oldest atom is just below it, the newest
 * in bit 1 (protocol-notes 3.5).  0x80 and 0x82 have no marker; OpenCSD
 * reads one atom from bit 1. */
static unsigned plain_atoms(uint8_t h, unsigned *nbits)
{
    unsigned cnt, i, b = 0;

    if ((h & 0xF0) == 0x80)
        cnt = (h & 0x08) ? 2 : 1;
    else if ((h & 0xF0) == 0x90)
        cnt = 3;
    else if ((h & 0xE0) == 0xA0)
        cnt = 4;
    else
        cnt = 5;
    for (i = 0; i < cnt; i++)
        if ((h >> (cnt - i)) & 1)
            b |= 1u << i;
    *nbits = b;
    return cnt;
}

tb_ptm_parser *tb_ptm_parser_new(const tb_config *cfg)
{
    tb_config own; /* the caller's, as this build's (struct_size.h) */
    tb_ptm_parser *p = tb_parser_alloc(sizeof *p, &cfg, &own, TB_PROTO_PTM);
    if (!p)
        return NULL;
    p->ca = cfg->cycle_accurate;
    /* PFT1.0 has 48-bit timestamps only (protocol-notes 3.1). */
    p->ts64 = cfg->ts64 && cfg->arch_minor >= 1;
    p->ctxid_bytes = cfg->ctxid_bytes;
    for (unsigned h = 0; h < 256; h++) {
        p->hdr_fast[h] = h != 0x00 && !is_reserved((uint8_t)h);
        if ((h & 0x81) == 0x80) {
            unsigned nbits;

            p->atom_n[h] = (uint8_t)plain_atoms((uint8_t)h, &nbits);
            p->atom_nbits[h] = (uint8_t)nbits;
        }
    }
    tb_ptm_parser_reset(p);
    return p;
}

void tb_ptm_parser_free(tb_ptm_parser *p)
{
    free(p);
}

/* ------------------------------------------------------------------ */
/* Field layouts. */

/* The PTM cycle-count field (protocol-notes 3.6): first byte CC[3:0] in
 * bits 5:2 with the C bit in bit 6, then up to four bytes of 7 bits with
 * C in bit 7; the fifth byte always ends it.  Returns the field length
 * once complete, 0 while more bytes are needed. */
static unsigned cc_length(const uint8_t *b, unsigned avail)
{
    unsigned i;

    if (avail < 1)
        return 0;
    if (!(b[0] & 0x40))
        return 1;
    for (i = 1; i < 5; i++) {
        if (avail <= i)
            return 0;
        if (i == 4 || !(b[i] & 0x80))
            return i + 1;
    }
    return 0;
}

static uint32_t cc_value(const uint8_t *b, unsigned n)
{
    uint32_t v = (uint32_t)((b[0] >> 2) & 0xF);
    unsigned i, shift = 4;

    for (i = 1; i < n; i++, shift += 7)
        v |= (uint32_t)(b[i] & 0x7F) << shift;
    return v;
}

/* Length of the branch address part (address bytes plus exception
 * bytes) of a branch packet, 0 while incomplete, -1 if byte 5 names no
 * ISA (protocol-notes 3.7). */
static int branch_body_length(const uint8_t *b, unsigned n, unsigned *naddr,
                              bool *exc)
{
    unsigned a = tb_addr_length(TB_ADDR_SIXBIT, b, n);
    bool x = false;

    if (!a)
        return 0;
    /* A one-byte address has no X bit (protocol-notes 3.7). */
    if (a > 1 && tb_addr_decode(TB_ADDR_SIXBIT, b, a, 0, TB_ISA_THUMB, NULL,
                                NULL, NULL, NULL, &x) < 0)
        return -1;
    *naddr = a;
    *exc = x;
    if (!x)
        return (int)a;
    if (n <= a)
        return 0;
    /* E1 bit 7 announces E2; OpenCSD reads at most two (protocol-notes
     * 3.7 exception bytes table). */
    return (int)(a + ((b[a] & 0x80) ? 2 : 1));
}

/* Total length of the packet in b[0..n-1] once complete, 0 while more
 * bytes are needed, -1 when the bytes already break the protocol. */
static int packet_length(const tb_ptm_parser *p, const uint8_t *b,
                         unsigned n)
{
    uint8_t h = b[0];
    unsigned len, c, a;
    bool x;
    int r;

    if (h & 1) {
        r = branch_body_length(b, n, &a, &x);
        if (r <= 0)
            return r;
        len = (unsigned)r;
        if (len > n)
            return 0;
        if (!p->ca)
            return (int)len;
        /* CA: a CC field always follows, even after a one-byte address
         * (protocol-notes 3.7). */
        c = cc_length(b + len, n - len);
        return c ? (int)(len + c) : 0;
    }
    if (h & 0x80) {
        /* CA atoms carry the CC field in the header (protocol-notes 3.5). */
        return p->ca ? (int)cc_length(b, n) : 1;
    }
    switch (h) {
    case 0x08:
        /* I-sync: address (4), info, [CC], [CtxtID] (protocol-notes 3.4). */
        if (n < 6)
            return 0;
        len = 6;
        if (p->ca && ((b[5] >> 5) & 3) != TB_ISYNC_PERIODIC) {
            c = cc_length(b + 6, n - 6);
            if (!c)
                return 0;
            len += c;
        }
        len += p->ctxid_bytes;
        return n >= len ? (int)len : 0;
    case 0x72:
        /* Waypoint update: address bytes, and after a five-byte address
         * with bit 6 set one AltISA byte (protocol-notes 3.8). */
        if (n < 2)
            return 0;
        a = tb_addr_length(TB_ADDR_SIXBIT, b + 1, n - 1);
        if (!a)
            return 0;
        len = 1 + a;
        if (a == 5) {
            if (tb_addr_decode(TB_ADDR_SIXBIT, b + 1, 5, 0, TB_ISA_THUMB, NULL,
                               NULL, NULL, NULL, &x) < 0)
                return -1;
            if (x)
                len++;
        }
        return n >= len ? (int)len : 0;
    case 0x42:
    case 0x46:
        /* Timestamp, then a CC field in CA mode (protocol-notes 3.9). */
        if (n < 2)
            return 0;
        c = tb_ts_length(b + 1, n - 1, p->ts64);
        if (!c)
            return 0;
        len = 1 + c;
        if (!p->ca)
            return (int)len;
        c = cc_length(b + len, n - len);
        return c ? (int)(len + c) : 0;
    case 0x6E:
        len = 1u + p->ctxid_bytes;
        return n >= len ? (int)len : 0;
    case 0x3C:
        return n >= 2 ? 2 : 0;
    default:
        return 1; /* trigger, ignore, ERET */
    }
}

/* ------------------------------------------------------------------ */
/* Output. */

static tb_isa out_isa(const tb_ptm_parser *p)
{
    /* AltISA turns Thumb into ThumbEE (protocol-notes 2.4, 3.7). */
    if (p->family == TB_ISA_THUMB && p->altisa)
        return TB_ISA_THUMBEE;
    return p->family;
}

static void pkt_init(const tb_ptm_parser *p, tb_packet *pkt, tb_pkt_kind k,
                     unsigned n)
{
    /* A copy of a zero packet: GCC makes memset of this size a slow
     * `rep stos`, which cost a third of the parse time. */
    static const tb_packet zero;

    *pkt = zero;
    pkt->kind = k;
    pkt->protocol = TB_PROTO_PTM;
    pkt->index = n ? p->idx[0] : 0;
    pkt->size = (uint8_t)n;
    if (n == 1)
        pkt->bytes[0] = p->pk[0];
    else if (n)
        memcpy(pkt->bytes, p->pk, n);
}

static int emit(const tb_packet *pkt, tb_packet_cb cb, void *ctx, int *count)
{
    if (*count < INT_MAX)
        (*count)++;
    if (cb && cb(ctx, pkt))
        return TB_ERR_STOPPED;
    return TB_OK;
}

static void skip_add(tb_ptm_parser *p, uint64_t index, uint64_t count)
{
    if (!count)
        return;
    if (!p->skip_count)
        p->skip_index = index;
    p->skip_count += count;
}

static int flush_skipped(tb_ptm_parser *p, tb_packet_cb cb, void *ctx,
                         int *count)
{
    tb_packet pkt;

    if (!p->skip_count)
        return TB_OK;
    pkt_init(p, &pkt, TB_PKT_NOTSYNC, 0);
    pkt.index = p->skip_index;
    pkt.count = p->skip_count;
    p->skip_count = 0;
    return emit(&pkt, cb, ctx, count);
}

/* A packet that breaks the protocol: report it, forget the packet-level
 * state (its base can no longer be trusted) and hunt for an A-sync. */
static int emit_bad(tb_ptm_parser *p, tb_pkt_kind k, tb_packet_cb cb,
                    void *ctx, int *count)
{
    tb_packet pkt;

    pkt_init(p, &pkt, k, p->n);
    pkt.err = TB_ERR_BAD_PACKET;
    p->n = 0;
    p->state = ST_HUNT;
    forget_state(p);
    return emit(&pkt, cb, ctx, count);
}

static void decode_cc(tb_packet *pkt, const uint8_t *b, unsigned avail)
{
    unsigned c = cc_length(b, avail);

    if (c) {
        pkt->has_cc = true;
        pkt->cc = cc_value(b, c);
    }
}

static void decode_atom(const tb_ptm_parser *p, tb_packet *pkt)
{
    uint8_t h = p->pk[0];
    unsigned cnt, i;

    if (p->ca) {
        /* One atom in bit 1 (0 = E), CC in the rest (protocol-notes 3.5). */
        pkt->seq[0] = (h & 2) ? TB_ATOM_N : TB_ATOM_E;
        cnt = 1;
        decode_cc(pkt, p->pk, p->n);
    } else {
        unsigned nbits;

        cnt = plain_atoms(h, &nbits);
        for (i = 0; i < cnt; i++)
            pkt->seq[i] = ((nbits >> i) & 1) ? TB_ATOM_N : TB_ATOM_E;
    }
    pkt->seq_len = (uint8_t)cnt;
    pkt->atom_count = (uint8_t)cnt;
}

/* I-sync (protocol-notes 3.4): b, n the whole packet (or more).
 * Updates the parser's state and fills is (index aside); returns the
 * packet's length. */
static unsigned decode_isync(tb_ptm_parser *p, const uint8_t *b, unsigned n,
                             tb_ptm_isync *is)
{
    uint32_t a = (uint32_t)b[1] | (uint32_t)b[2] << 8 |
                 (uint32_t)b[3] << 16 | (uint32_t)b[4] << 24;
    uint8_t info = b[5];
    unsigned pos = 6, i;

    /* Address bit 0 is the T bit; info: reason 6:5, NS 3, AltISA 2,
     * Hyp 1 (protocol-notes 3.4; IHI0014Q 7.10.5 for the reasons). */
    p->addr = a & ~1u;
    p->addr_valid_bits = 32;
    p->family = (a & 1) ? TB_ISA_THUMB : TB_ISA_ARM;
    p->ns = (info >> 3) & 1;
    p->altisa = (info >> 2) & 1;
    p->hyp = (info >> 1) & 1;

    is->reason = (info >> 5) & 3;
    is->addr = p->addr;
    is->isa = (uint8_t)out_isa(p);
    is->ns = p->ns;
    is->hyp = p->hyp;
    is->altisa = p->altisa;
    is->has_cc = is->has_ctxid = false;
    is->cc = is->context_id = 0;
    if (p->ca && is->reason != TB_ISYNC_PERIODIC) {
        unsigned c = cc_length(b + pos, n - pos);
        is->has_cc = true;
        is->cc = cc_value(b + pos, c);
        pos += c;
    }
    if (p->ctxid_bytes) {
        is->has_ctxid = true;
        for (i = 0; i < p->ctxid_bytes; i++)
            is->context_id |= (uint32_t)b[pos + i] << (8 * i);
    }
    return pos + p->ctxid_bytes;
}

static void isync_to_packet(const tb_ptm_isync *is, tb_packet *pkt)
{
    TB_ISYNC_TO_PACKET(pkt, is);
    pkt->addr_bits = 32;
    pkt->addr_known = true;
}

/* Branch address and waypoint update share the address layout
 * (protocol-notes 3.7, 3.8).  b: the address bytes (n of the packet's
 * from there); wp: a waypoint update, else a branch, whose exception
 * bytes and CC follow the address.  Updates the parser's address state
 * and fills br (index aside).  Returns the bytes read from b on (the
 * packet's length from there, when n holds it all), or TB_ERR_*
 * without changing any state. */
static int decode_address(tb_ptm_parser *p, const uint8_t *b, unsigned n,
                          bool wp, tb_ptm_branch *br)
{
    unsigned a = tb_addr_length(TB_ADDR_SIXBIT, b, n), bits = 0;
    uint32_t addr = 0;
    tb_isa isa = TB_ISA_UNKNOWN;
    bool named = false, x = false;
    int r;

    r = tb_addr_decode(TB_ADDR_SIXBIT, b, a, p->addr, p->family, &addr, &isa,
                       &named, &bits, &x);
    if (r < 0)
        return r;
    p->addr = addr;
    p->family = isa;
    if (bits > p->addr_valid_bits)
        p->addr_valid_bits = bits;
    br->addr = addr;
    br->addr_bits = (uint8_t)bits;
    br->isa_changed = named;
    br->addr_known = p->addr_valid_bits >= 32;
    br->has_exc = br->ns_valid = br->hyp_valid = false;
    br->exc_bytes = 0;
    br->exc_num = 0;
    br->has_cc = false;
    br->cc = 0;

    if (!wp) {
        /* Branch: exception bytes E1 [E2] (protocol-notes 3.7). */
        if (x) {
            uint8_t e1 = b[a];
            br->has_exc = true;
            br->exc_bytes = 1;
            br->exc_num = (e1 >> 1) & 0xF;
            p->ns = e1 & 1;
            p->altisa = (e1 >> 6) & 1;
            br->ns_valid = true;
            if (e1 & 0x80) {
                uint8_t e2 = b[a + 1];
                br->exc_bytes = 2;
                br->exc_num |= (uint16_t)((e2 & 0x1F) << 4);
                p->hyp = (e2 >> 5) & 1;
                br->hyp_valid = true;
            }
            a += br->exc_bytes;
        }
        if (p->ca) {
            unsigned c = cc_length(b + a, n - a);

            if (c) {
                br->has_cc = true;
                br->cc = cc_value(b + a, c);
                a += c;
            }
        }
    } else if (a == 5 && x) {
        /* WP update: the byte after a five-byte address holds AltISA. */
        p->altisa = (b[5] >> 6) & 1;
        br->exc_bytes = 1;
        a++;
    }
    br->isa = (uint8_t)out_isa(p);
    br->ns = p->ns;
    br->hyp = p->hyp;
    br->altisa = p->altisa;
    return (int)a;
}

static void address_to_packet(const tb_ptm_branch *br, tb_packet *pkt)
{
    TB_BRANCH_TO_PACKET(pkt, br, br);
    pkt->has_cc = br->has_cc;
    pkt->cc = br->cc;
}

static int decode_and_emit(tb_ptm_parser *p, tb_packet_cb cb, void *ctx,
                           int *count)
{
    tb_packet pkt;
    uint8_t h = p->pk[0];
    unsigned i;
    int r = TB_OK;

    pkt_init(p, &pkt, TB_PKT_RESERVED, p->n);
    if (h & 1) {
        tb_ptm_branch br;

        pkt.kind = TB_PKT_BRANCH;
        r = decode_address(p, p->pk, p->n, false, &br);
        if (r >= 0)
            address_to_packet(&br, &pkt);
    } else if (h & 0x80) {
        pkt.kind = TB_PKT_ATOM;
        decode_atom(p, &pkt);
    } else {
        switch (h) {
        case 0x08: {
            tb_ptm_isync is;

            pkt.kind = TB_PKT_ISYNC;
            decode_isync(p, p->pk, p->n, &is);
            isync_to_packet(&is, &pkt);
            break;
        }
        case 0x72: {
            tb_ptm_branch br;

            pkt.kind = TB_PKT_WP_UPDATE;
            r = decode_address(p, p->pk + 1, p->n - 1, true, &br);
            if (r >= 0)
                address_to_packet(&br, &pkt);
            break;
        }
        case 0x42:
        case 0x46: {
            unsigned t = tb_ts_length(p->pk + 1, p->n - 1, p->ts64), bits = 0;
            uint64_t v = 0;
            pkt.kind = TB_PKT_TIMESTAMP;
            tb_ts_decode(p->pk + 1, t, p->ts64, p->ts, &v, &bits);
            p->ts = v;
            pkt.ts = v;
            pkt.ts_bits = (uint8_t)bits;
            if (p->ca)
                decode_cc(&pkt, p->pk + 1 + t, p->n - 1 - t);
            break;
        }
        case 0x6E:
            pkt.kind = TB_PKT_CONTEXT_ID;
            pkt.has_ctxid = p->ctxid_bytes != 0;
            for (i = 0; i < p->ctxid_bytes; i++)
                pkt.context_id |= (uint32_t)p->pk[1 + i] << (8 * i);
            break;
        case 0x3C:
            pkt.kind = TB_PKT_VMID;
            pkt.vmid = p->pk[1];
            break;
        case 0x0C:
            pkt.kind = TB_PKT_TRIGGER;
            break;
        case 0x66:
            pkt.kind = TB_PKT_IGNORE;
            break;
        case 0x76:
            pkt.kind = TB_PKT_EXC_RETURN;
            break;
        default:
            return emit_bad(p, TB_PKT_RESERVED, cb, ctx, count);
        }
    }
    if (r < 0)
        return emit_bad(p, TB_PKT_BAD_SEQUENCE, cb, ctx, count);
    p->n = 0;
    return emit(&pkt, cb, ctx, count);
}

/* ------------------------------------------------------------------ */
/* The byte loop. */

static void drop_oldest_zero(tb_ptm_parser *p)
{
    skip_add(p, p->idx[0], 1);
    memmove(p->buf, p->buf + 1, p->n - 1);
    memmove(p->idx, p->idx + 1, (p->n - 1) * sizeof p->idx[0]);
    p->n--;
}

static int async_found(tb_ptm_parser *p, tb_packet_cb cb, void *ctx,
                       int *count)
{
    tb_packet pkt;
    int r = flush_skipped(p, cb, ctx, count);

    if (r < 0)
        return r;
    pkt_init(p, &pkt, TB_PKT_ASYNC, p->n);
    p->n = 0;
    p->state = ST_SYNC;
    return emit(&pkt, cb, ctx, count);
}

static int feed(tb_ptm_parser *p, uint8_t byte, uint64_t index,
                tb_packet_cb cb, void *ctx, int *count)
{
    int len;

    if (p->state == ST_HUNT) {
        /* buf holds the current run of zeros only. */
        if (byte == 0x00) {
            if (p->n == ASYNC_MAX_ZEROS)
                drop_oldest_zero(p);
            p->buf[p->n] = 0;
            p->idx[p->n++] = index;
            return TB_OK;
        }
        if (byte == 0x80 && p->n >= ASYNC_MIN_ZEROS) {
            p->buf[p->n] = byte;
            p->idx[p->n++] = index;
            return async_found(p, cb, ctx, count);
        }
        if (p->n)
            skip_add(p, p->idx[0], p->n);
        skip_add(p, index, 1);
        p->n = 0;
        return TB_OK;
    }

    if (p->n == 0 && is_reserved(byte)) {
        p->buf[0] = byte;
        p->idx[0] = index;
        p->n = 1;
        return emit_bad(p, TB_PKT_RESERVED, cb, ctx, count);
    }

    if (p->n > 0 && p->buf[0] == 0x00) {
        /* Inside an A-sync. */
        if (byte == 0x00) {
            if (p->n == ASYNC_MAX_ZEROS) {
                /* Padding longer than a packet holds: report the oldest
                 * zeros as unsynchronised, as OpenCSD throws them away,
                 * and keep hunting on the run (protocol-notes 4.4 item 9). */
                drop_oldest_zero(p);
                p->state = ST_HUNT;
            }
            p->buf[p->n] = 0;
            p->idx[p->n++] = index;
            return TB_OK;
        }
        p->buf[p->n] = byte;
        p->idx[p->n++] = index;
        if (byte == 0x80 && p->n - 1 >= ASYNC_MIN_ZEROS)
            return async_found(p, cb, ctx, count);
        return emit_bad(p, TB_PKT_BAD_SEQUENCE, cb, ctx, count);
    }

    if (p->n >= TB_PKT_MAX_BYTES)
        return emit_bad(p, TB_PKT_BAD_SEQUENCE, cb, ctx, count); /* unreachable */
    p->buf[p->n] = byte;
    p->idx[p->n++] = index;
    if (byte == 0x00 && p->n == 1)
        return TB_OK; /* first zero of an A-sync */

    len = packet_length(p, p->buf, p->n);
    if (len < 0)
        return emit_bad(p, TB_PKT_BAD_SEQUENCE, cb, ctx, count);
    if (len == 0)
        return TB_OK;
    return decode_and_emit(p, cb, ctx, count);
}

/* What became of a packet (l bytes at `at`) handed to a fused entry as
 * its fields, br or is: t > 0 taken, t < 0 a stop, t == 0 declined, and
 * then the packet path gets it, built from the fields. */
static int fused_outcome(tb_ptm_parser *p, int t, const uint8_t *at,
                         unsigned l, const tb_ptm_branch *br,
                         const tb_ptm_isync *is, tb_packet_cb cb, void *ctx,
                         int *count)
{
    tb_packet pkt;

    if (t < 0)
        return t;
    if (t > 0) {
        if (*count < INT_MAX)
            (*count)++;
        return TB_OK;
    }
    p->idx[0] = br ? br->index : is->index;
    p->pk = at;
    pkt_init(p, &pkt, br ? TB_PKT_BRANCH : TB_PKT_ISYNC, l);
    p->pk = p->buf;
    if (br)
        address_to_packet(br, &pkt);
    else
        isync_to_packet(is, &pkt);
    return emit(&pkt, cb, ctx, count);
}

/* Fused: the branch or I-sync at b (whole in its first n bytes) to the
 * sink as its fields.  Returns its length, 0 for a bad branch (byte 5
 * names no ISA; decode_address() changed nothing, and the packet path
 * reports it), or the sink's stop. */
static inline int fused_packet(tb_ptm_parser *p, tb_ptm_fused_sink *sink,
                               const uint8_t *b, unsigned n, uint64_t index,
                               tb_packet_cb cb, void *ctx, int *count)
{
    int l, t, r;

    if (b[0] & 1) {
        tb_ptm_branch br;

        l = decode_address(p, b, n, false, &br);
        if (l <= 0)
            return 0;
        br.index = index;
        t = tb_ptm_decoder_branch(sink->d, &br, sink->cb, sink->ctx, &sink->nel);
        r = fused_outcome(p, t, b, (unsigned)l, &br, NULL, cb, ctx, count);
    } else {
        tb_ptm_isync is;

        l = (int)decode_isync(p, b, n, &is);
        is.index = index;
        t = tb_ptm_decoder_isync(sink->d, &is, sink->cb, sink->ctx, &sink->nel);
        r = fused_outcome(p, t, b, (unsigned)l, NULL, &is, cb, ctx, count);
    }
    return r < 0 ? r : l;
}

static inline int push_impl(tb_ptm_parser *p, const uint8_t *data, size_t len,
                            tb_span_cur *cur, tb_packet_cb cb, void *ctx,
                            tb_ptm_fused_sink *sink)
{
    int count = 0, r;
    size_t i;

    for (i = 0; i < len;) {
        if (p->state == ST_HUNT && p->n == 0 && data[i] != 0x00) {
            /* Hunting with no zeros in hand: only a zero can start an
             * A-sync, so the bytes up to the next one are unsynchronised,
             * counted in one step as feed() would one by one (an ETB dump
             * that wrapped starts with hundreds of them). */
            const uint8_t *z = memchr(data + i, 0x00, len - i);
            const size_t k = z ? (size_t)(z - (data + i)) : len - i;

            skip_add(p, tb_span_at(cur, i), k);
            i += k;
            continue;
        }
        /* Fast path: a whole packet inside this chunk.  packet_length()
         * gives the same answer on more bytes as the byte loop finds at
         * the packet's last byte, so the output does not change. */
        if (p->state == ST_SYNC && p->n == 0 && p->hdr_fast[data[i]]) {
            size_t avail = len - i;
            int l;

            if (sink && (data[i] & 0x81) == 0x80) {
                /* Fused: a run of atom packets (the most common) goes
                 * straight to the decompressor.  Atoms change no parser
                 * state, so the packets after the run parse the same. */
                tb_ptm_atom_run run;
                size_t j = i;
                int t;

                run.count = 0;
                run.has_cc = p->ca;
                while (j < len && run.count < TB_PTM_ATOM_RUN && (data[j] & 0x81) == 0x80) {
                    const uint8_t h = data[j];
                    const unsigned k = run.count;
                    unsigned c = 1;

                    if (p->ca) {
                        /* One atom in bit 1, CC in the rest
                         * (protocol-notes 3.5). */
                        c = cc_length(data + j, len - j > 5 ? 5 : (unsigned)(len - j));
                        if (!c)
                            break; /* completed by the next chunk */
                        run.n[k] = 1;
                        run.nbits[k] = (h >> 1) & 1;
                        run.cc[k] = cc_value(data + j, c);
                    } else {
                        run.n[k] = p->atom_n[h];
                        run.nbits[k] = p->atom_nbits[h];
                        run.cc[k] = 0;
                    }
                    run.index[k] = tb_span_at(cur, j);
                    run.count++;
                    j += c;
                }
                t = run.count ? tb_ptm_decoder_atoms(sink->d, &run, sink->cb,
                                                     sink->ctx, &sink->nel)
                              : 0;
                if (t < 0)
                    return t;
                if (t > 0) {
                    /* All taken (the decoder takes all or none). */
                    count = count > INT_MAX - t ? INT_MAX : count + t;
                    i = j;
                    continue;
                }
            }
            if (sink && ((data[i] & 1) || data[i] == 0x08)) {
                /* Fused: a branch or I-sync goes to the decompressor as
                 * its fields.  With 24 bytes left it lies whole in the
                 * chunk (a branch has at most 12, an I-sync 15:
                 * protocol-notes 3.7, 3.4), and reading it gives its
                 * length; nearer the end packet_length() says first. */
                const int n = avail >= TB_PKT_MAX_BYTES
                                  ? TB_PKT_MAX_BYTES
                                  : packet_length(p, data + i, (unsigned)avail);

                if (n > 0) {
                    l = fused_packet(p, sink, data + i, (unsigned)n,
                                     tb_span_at(cur, i), cb, ctx, &count);
                    if (l < 0)
                        return l;
                    if (l > 0) {
                        i += (size_t)l;
                        continue;
                    }
                }
            }
            l = packet_length(p, data + i,
                              avail > TB_PKT_MAX_BYTES ? TB_PKT_MAX_BYTES
                                                       : (unsigned)avail);
            if (l > 0) {
                p->pk = data + i;
                p->idx[0] = tb_span_at(cur, i);
                p->n = (unsigned)l;
                r = decode_and_emit(p, cb, ctx, &count);
                p->pk = p->buf;
                if (r < 0)
                    return r;
                i += (size_t)l;
                continue;
            }
        }
        r = feed(p, data[i], tb_span_at(cur, i), cb, ctx, &count);
        if (r < 0)
            return r;
        i++;
    }
    return count;
}

int tb_ptm_parser_finish(tb_ptm_parser *p, tb_packet_cb cb, void *ctx)
{
    int count = 0, r = TB_OK;

    if (!p)
        return TB_ERR_INVAL;
    if (p->state == ST_HUNT) {
        if (p->n)
            skip_add(p, p->idx[0], p->n);
        p->n = 0;
        r = flush_skipped(p, cb, ctx, &count);
    } else if (p->n) {
        tb_packet pkt;
        pkt_init(p, &pkt, TB_PKT_INCOMPLETE, p->n);
        pkt.err = TB_ERR_TRUNCATED;
        p->n = 0;
        r = emit(&pkt, cb, ctx, &count);
    }
    /* The stream has ended: start afresh for the next one. */
    tb_ptm_parser_reset(p);
    return r < 0 ? r : count;
}

/* The push entries and the backend table (backend.h). */
TB_PARSER_API(ptm, PTM, push_impl);
