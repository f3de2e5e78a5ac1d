/*
 * ETMv3 (3.0-3.5) packet parser: trace bytes -> tb_packet.
 *
 * Byte at a time, so any chunking gives the same packets.  The parser
 * holds at most one packet's bytes (TB_PKT_MAX_BYTES) plus counters, so
 * its memory does not grow with the stream.  The header classification
 * is OpenCSD's (protocol-notes 2.2); where OpenCSD accepts encodings the
 * spec reserves (P-headers, IHI0014Q 7.3.1 tables 7.2/7.3) the spec wins.
 */
#include <stdlib.h>
#include <string.h>

#include "fused.h"
#include "tracebench/parser.h"
#include "tracebench/pkt_codec.h"
#include "backend.h"

enum pstate {
    ST_HUNT = 0, /* looking for an A-sync */
    ST_HDR,      /* synchronised, next byte is a header */
    ST_BODY,     /* inside a multi-byte packet */
    ST_ZEROS,    /* synchronised, inside a run of 0x00 (A-sync?) */
};

struct tb_etmv3_parser {
    tb_config cfg;
    tb_addr_scheme scheme;
    enum pstate state;

    /* Unsynchronised bytes waiting to be reported as one NOTSYNC. */
    uint64_t skip_count, skip_index;
    /* Current run of zeros and where its last five began. */
    uint64_t zeros;
    uint64_t zero_idx[5];

    /* The packet being collected. */
    uint8_t buf[TB_PKT_MAX_BYTES];
    unsigned len;
    uint64_t pkt_index;

    /* Packet-level state carried between packets (protocol-notes 4.1:
     * the last *output* address, not the execution address). */
    uint32_t last_addr;
    unsigned addr_valid_bits;
    tb_isa last_isa;
    uint64_t ts;
    uint32_t data_addr;
    bool data_be;

    int emitted;
    bool stopped; /* the callback asked to stop during this call */

    /* Per-header answers, fixed by the configuration and worked out once
     * in _new() so the hot loop does one lookup per header byte: the
     * header class and packet kind (classify()), and each P-header's atom
     * sequence (decode_phdr(); valid == 0 for reserved encodings). */
    uint8_t hcls[256];
    uint8_t hkind[256];
    struct phdr_ent {
        uint8_t valid, fmt, seq_len, atom_count, w_count;
        char seq[20];
    } phdr[256];
};

static void init_state(tb_etmv3_parser *p)
{
    p->state = ST_HUNT;
    p->skip_count = p->skip_index = 0;
    p->zeros = 0;
    p->len = 0;
    p->pkt_index = 0;
    p->last_addr = 0;
    p->addr_valid_bits = 0;
    p->last_isa = TB_ISA_UNKNOWN;
    p->ts = 0;
    p->data_addr = 0;
    p->data_be = false;
}

static void build_tables(tb_etmv3_parser *p);

tb_etmv3_parser *tb_etmv3_parser_new(const tb_config *cfg)
{
    tb_config own; /* the caller's, as this build's (struct_size.h) */
    tb_etmv3_parser *p = tb_parser_alloc(sizeof *p, &cfg, &own, TB_PROTO_ETMV3);
    if (!p)
        return NULL;
    p->cfg = *cfg;
    /* ETMIDR[20] is honoured from ETMv3.4 (protocol-notes 1.2); the
     * config decoder already folds the version in. */
    p->scheme = cfg->alt_branch ? TB_ADDR_SIXBIT : TB_ADDR_ORIGINAL;
    build_tables(p);
    init_state(p);
    return p;
}

void tb_etmv3_parser_free(tb_etmv3_parser *p)
{
    free(p);
}

void tb_etmv3_parser_reset(tb_etmv3_parser *p)
{
    if (p)
        init_state(p);
}

/* ------------------------------------------------------------------ */
/* Emitting. */

static void pkt_init(const tb_etmv3_parser *p, tb_packet *pkt,
                     tb_pkt_kind kind, uint64_t index)
{
    /* A copy of a zero packet: GCC turns a memset of this size into a
     * slow `rep stos` (the PTM parser found the same). */
    static const tb_packet zero;

    *pkt = zero;
    pkt->kind = kind;
    pkt->protocol = TB_PROTO_ETMV3;
    pkt->index = index;
    pkt->isa = p->last_isa;
    pkt->lsip_isa = TB_ISA_UNKNOWN;
}

static int emit(tb_etmv3_parser *p, const tb_packet *pkt, tb_packet_cb cb,
                void *ctx)
{
    /* After a stop request no more packets are delivered; the state
     * still advances past the byte being processed. */
    if (p->stopped)
        return TB_ERR_STOPPED;
    p->emitted++;
    if (cb && cb(ctx, pkt)) {
        p->stopped = true;
        return TB_ERR_STOPPED;
    }
    return TB_OK;
}

static int emit_notsync(tb_etmv3_parser *p, uint64_t count, tb_packet_cb cb,
                        void *ctx)
{
    tb_packet pkt;

    if (count == 0)
        return TB_OK;
    pkt_init(p, &pkt, TB_PKT_NOTSYNC, p->skip_index);
    pkt.count = count;
    return emit(p, &pkt, cb, ctx);
}

/* A run of zero bytes reported as one packet (extra A-sync zeros, or an
 * A-sync cut short). */
static int emit_zero_run(tb_etmv3_parser *p, tb_pkt_kind kind, int err,
                         uint64_t index, uint64_t count, tb_packet_cb cb,
                         void *ctx)
{
    tb_packet pkt;

    pkt_init(p, &pkt, kind, index);
    pkt.count = count;
    pkt.size = (uint8_t)(count < TB_PKT_MAX_BYTES ? count : TB_PKT_MAX_BYTES);
    pkt.err = err;
    return emit(p, &pkt, cb, ctx);
}

static int emit_async(tb_etmv3_parser *p, uint64_t index, tb_packet_cb cb,
                      void *ctx)
{
    static const uint8_t a_sync[6] = {0, 0, 0, 0, 0, 0x80};
    tb_packet pkt;

    pkt_init(p, &pkt, TB_PKT_ASYNC, index);
    pkt.size = 6;
    memcpy(pkt.bytes, a_sync, 6);
    return emit(p, &pkt, cb, ctx);
}

/* Reports the collected bytes as a broken packet and hunts for the next
 * A-sync (the task's resync rule; OpenCSD's listing also stops trusting
 * the stream there).  Address validity is dropped because packets were
 * lost. */
static int emit_bad(tb_etmv3_parser *p, tb_pkt_kind kind, int err,
                    tb_packet_cb cb, void *ctx)
{
    tb_packet pkt;

    pkt_init(p, &pkt, kind, p->pkt_index);
    pkt.size = (uint8_t)p->len;
    memcpy(pkt.bytes, p->buf, p->len);
    pkt.err = err;
    p->len = 0;
    p->state = ST_HUNT;
    p->zeros = 0;
    p->skip_count = 0;
    p->addr_valid_bits = 0;
    return emit(p, &pkt, cb, ctx);
}

/* ------------------------------------------------------------------ */
/* Field helpers. */

/* ETMv3 cycle count (protocol-notes 2.6): bytes 1-4 carry 7 bits with a
 * C bit, byte 5 the last 4 bits. */
static unsigned cc_length(const uint8_t *b, unsigned avail)
{
    unsigned i;

    for (i = 0; i < avail && i < 5; i++)
        if (i == 4 || !(b[i] & 0x80))
            return i + 1;
    return 0;
}

static uint32_t cc_decode(const uint8_t *b, unsigned n)
{
    uint32_t v = 0;
    unsigned i;

    for (i = 0; i < n && i < 5; i++)
        v |= (uint32_t)(b[i] & (i == 4 ? 0x0F : 0x7F)) << (7 * i);
    return v;
}

/* Data address (protocol-notes 2.9): 7 bits a byte with a C bit, byte 5
 * carries A[31:28] in bits 3:0 and the BE flag in bit 4.  UNVERIFIED
 * against real data; OpenCSD's own extraction is buggy here. */
static unsigned daddr_length(const uint8_t *b, unsigned avail)
{
    return cc_length(b, avail);
}

/* Address bytes then exception bytes (branch packets, LSiP).  Returns the
 * total length when complete, 0 when more bytes are needed, or
 * TB_ERR_BAD_PACKET.  Exception bytes: E0 [E1] [E2], each with C in bit
 * 7; a byte after E0 with bit 6 set is E2 itself (protocol-notes 2.7). */
static int addr_exc_length(const tb_etmv3_parser *p, const uint8_t *b,
                           unsigned avail)
{
    unsigned n = tb_addr_length(p->scheme, b, avail), i;
    bool exc = false;

    if (n == 0)
        return 0;
    if (n == 5)
        exc = !(b[4] & 0x80) && (b[4] & 0x40); /* legacy form has none */
    else if (p->scheme == TB_ADDR_SIXBIT && n >= 2)
        exc = (b[n - 1] & 0x40) != 0;
    if (!exc)
        return (int)n;
    i = n;
    if (avail <= i)
        return 0;
    if (!(b[i] & 0x80))
        return (int)(i + 1);
    if (avail <= i + 1)
        return 0;
    if (b[i + 1] & 0x40) /* E2 straight after E0 */
        return (b[i + 1] & 0x80) ? TB_ERR_BAD_PACKET : (int)(i + 2);
    if (!(b[i + 1] & 0x80))
        return (int)(i + 2);
    if (avail <= i + 2)
        return 0;
    return (b[i + 2] & 0x80) ? TB_ERR_BAD_PACKET : (int)(i + 3);
}

static void decode_exc(const uint8_t *e, unsigned k, tb_etmv3_exc *x)
{
    x->has_exc = true;
    x->exc_bytes = (uint8_t)k;
    x->ns = e[0] & 1;
    x->ns_valid = true;
    x->exc_num = (e[0] >> 1) & 0xF;
    x->exc_cancel = (e[0] & 0x20) != 0;
    x->altisa = (e[0] & 0x40) != 0;
    if (k >= 2) {
        if (e[1] & 0x40) {
            x->exc_resume = e[1] & 0xF;
        } else {
            /* Number bits [8:4] are v7-M only; zero on A/R cores. */
            x->exc_num |= (uint16_t)((e[1] & 0x1F) << 4);
            x->hyp = (e[1] & 0x20) != 0;
            x->hyp_valid = true;
            if (k >= 3)
                x->exc_resume = e[2] & 0xF;
        }
    }
}

/* A packet's exception fields (ns, hyp and altisa left to the caller):
 * PTM's, and ETMv3's own. */
static void exc_to_packet(const tb_etmv3_exc *x, tb_packet *pkt)
{
    TB_EXC_TO_PACKET(pkt, x);
    pkt->exc_cancel = x->exc_cancel;
    pkt->legacy_exc = x->legacy_exc;
    pkt->exc_resume = x->exc_resume;
}

/* Decodes an address (+ exception bytes into *x, zeroed by the caller)
 * of total length `total` against base/base_isa.  Thumb-layout targets
 * become ThumbEE when the exception byte sets AltISA, or when they stay
 * in ThumbEE without one (protocol-notes 2.7: ThumbEE uses the Thumb
 * layout plus AltISA). */
static int decode_addr_exc(const tb_etmv3_parser *p, const uint8_t *b,
                           unsigned total, uint32_t base, tb_isa base_isa,
                           tb_etmv3_exc *x, uint32_t *addr, tb_isa *isa,
                           bool *named, unsigned *nbits)
{
    unsigned n = tb_addr_length(p->scheme, b, total);
    bool has_x;
    int r;

    if (n == 5 && (b[4] & 0x80)) {
        /* Deprecated byte-5 form (protocol-notes 2.7): ARM state, a 3-bit
         * exception code in bits 5:3, cancel in bit 6. */
        uint8_t b5 = (uint8_t)(0x08 | (b[4] & 0x07));
        uint8_t tmp[5];
        memcpy(tmp, b, 4);
        tmp[4] = b5;
        r = tb_addr_decode(p->scheme, tmp, 5, base, base_isa, addr, isa,
                           named, nbits, &has_x);
        if (r < 0)
            return r;
        x->has_exc = true;
        x->legacy_exc = true;
        x->exc_num = (b[4] >> 3) & 7;
        x->exc_cancel = (b[4] & 0x40) != 0;
        return TB_OK;
    }
    r = tb_addr_decode(p->scheme, b, n, base, base_isa, addr, isa, named,
                       nbits, &has_x);
    if (r < 0)
        return r;
    if (has_x)
        decode_exc(b + n, total - n, x);
    if (*isa == TB_ISA_THUMB || *isa == TB_ISA_THUMBEE) {
        if (x->has_exc)
            *isa = x->altisa ? TB_ISA_THUMBEE : TB_ISA_THUMB;
        else if (base_isa == TB_ISA_THUMBEE)
            *isa = TB_ISA_THUMBEE;
    }
    return TB_OK;
}

/* ------------------------------------------------------------------ */
/* Header classification (protocol-notes 2.2). */

enum hclass {
    H_RESERVED = 0,
    H_BADMODE,     /* valid header the configuration forbids */
    H_SINGLE,      /* complete in one byte */
    H_MULTI,       /* payload follows */
    H_ASYNC,
};

static enum hclass classify(const tb_etmv3_parser *p, uint8_t h,
                            tb_pkt_kind *kind)
{
    unsigned dt = p->cfg.data_trace;
    bool addr_tr = (dt & 2) != 0;

    if (h & 1) {
        *kind = TB_PKT_BRANCH;
        return (h & 0x80) ? H_MULTI : H_SINGLE;
    }
    if (h & 0x80) {
        *kind = TB_PKT_ATOM;
        return H_SINGLE; /* validity checked by the P-header decoder */
    }
    switch (h) {
    case 0x00: *kind = TB_PKT_ASYNC; return H_ASYNC;
    case 0x04: *kind = TB_PKT_CYCLE_COUNT; return H_MULTI;
    case 0x08:
    case 0x70: *kind = TB_PKT_ISYNC; return H_MULTI;
    case 0x0C: *kind = TB_PKT_TRIGGER; return H_SINGLE;
    case 0x3C: *kind = TB_PKT_VMID; return H_MULTI;
    case 0x42:
    case 0x46: *kind = TB_PKT_TIMESTAMP; return H_MULTI;
    case 0x66: *kind = TB_PKT_IGNORE; return H_SINGLE;
    case 0x6E:
        *kind = TB_PKT_CONTEXT_ID;
        /* No CtxtID bytes configured: the packet cannot be delimited. */
        return p->cfg.ctxid_bytes ? H_MULTI : H_BADMODE;
    case 0x76: *kind = TB_PKT_EXC_RETURN; return H_SINGLE;
    case 0x7E: *kind = TB_PKT_EXC_ENTRY; return H_SINGLE;
    case 0x50:
        /* Value-trace packets need ETMCR[2], as in OpenCSD. */
        *kind = TB_PKT_STORE_FAILED;
        return (dt & 1) ? H_SINGLE : H_BADMODE;
    case 0x62:
        *kind = TB_PKT_DATA_SUPPRESSED;
        return dt ? H_SINGLE : H_BADMODE;
    default: break;
    }
    if ((h & 0xD3) == 0x02) { /* b00A0SS10 normal data */
        *kind = TB_PKT_DATA;
        if (!dt)
            return H_BADMODE;
        /* Value bytes only with value trace on (IHI0014Q 7.4.2). */
        return ((h & 0x20) && addr_tr) || ((h & 0x0C) && (dt & 1)) ? H_MULTI
                                                                   : H_SINGLE;
    }
    if ((h & 0x93) == 0x00 && (h & 0x60)) { /* b0TT0SS00, TT != 0 */
        *kind = TB_PKT_OOO_DATA;
        if (!(dt & 1))
            return H_BADMODE;
        return (h & 0x0C) ? H_MULTI : H_SINGLE;
    }
    if ((h & 0xD3) == 0x50 && (h & 0x0C)) { /* b01A1TT00, TT != 0 */
        *kind = TB_PKT_OOO_PLACEHOLDER;
        if (!dt)
            return H_BADMODE;
        return ((h & 0x20) && addr_tr) ? H_MULTI : H_SINGLE;
    }
    if ((h & 0xEF) == 0x6A) { /* b011A1010 */
        *kind = TB_PKT_VALUE_NOT_TRACED;
        if (!dt)
            return H_BADMODE;
        return ((h & 0x10) && addr_tr) ? H_MULTI : H_SINGLE;
    }
    *kind = TB_PKT_RESERVED;
    return H_RESERVED;
}

static unsigned value_bytes(uint8_t h)
{
    static const unsigned sz[4] = {0, 1, 2, 4};
    return sz[(h >> 2) & 3];
}

/* Bytes a packet needs, from what has arrived: the length when complete,
 * 0 when more are needed, TB_ERR_BAD_PACKET when malformed. */
static int body_length(const tb_etmv3_parser *p, const uint8_t *b,
                       unsigned len)
{
    unsigned pos, n;
    uint8_t h = b[0];
    int r;

    if (h & 1) { /* branch */
        return addr_exc_length(p, b, len);
    }
    switch (h) {
    case 0x04:
        n = cc_length(b + 1, len - 1);
        return n ? (int)(1 + n) : 0;
    case 0x3C:
        return len >= 2 ? 2 : 0;
    case 0x42:
    case 0x46:
        n = tb_ts_length(b + 1, len - 1, p->cfg.ts64);
        return n ? (int)(1 + n) : 0;
    case 0x6E:
        return len >= 1u + p->cfg.ctxid_bytes ? (int)(1 + p->cfg.ctxid_bytes) : 0;
    case 0x08:
    case 0x70:
        /* IHI0014Q 7.10.5: [CC], [CtxtID], info, address, [LSiP addr]. */
        pos = 1;
        if (h == 0x70) {
            n = cc_length(b + 1, len - 1);
            if (!n)
                return 0;
            pos += n;
        }
        pos += p->cfg.ctxid_bytes + 1;
        if (len < pos)
            return 0;
        if (p->cfg.data_only)
            return (int)pos;
        if (len < pos + 4)
            return 0;
        if (!(b[pos - 1] & 0x80))
            return (int)(pos + 4);
        r = addr_exc_length(p, b + pos + 4, len - pos - 4);
        return r > 0 ? (int)(pos + 4) + r : r;
    default: break;
    }
    /* Data packets. */
    pos = 1;
    if (((h & 0xD3) == 0x02 && (h & 0x20)) || ((h & 0xD3) == 0x50) ||
        ((h & 0xEF) == 0x6A)) {
        bool has_addr = (p->cfg.data_trace & 2) &&
                        ((h & 0xEF) == 0x6A ? (h & 0x10) : (h & 0x20));
        if (has_addr) {
            n = daddr_length(b + 1, len - 1);
            if (!n)
                return 0;
            pos += n;
        }
    }
    /* IHI0014Q 7.4.2: the data value is present only when value trace
     * (ETMCR[2]) is on, whatever SS says. */
    if (((h & 0xD3) == 0x02 || ((h & 0x93) == 0x00)) && (p->cfg.data_trace & 1))
        pos += value_bytes(h);
    return len >= pos ? (int)pos : 0;
}

/* ------------------------------------------------------------------ */
/* Decoding a complete packet. */

static void set_seq(tb_packet *pkt, const char *s, unsigned n, uint8_t fmt)
{
    unsigned i;

    pkt->phdr_format = fmt;
    for (i = 0; i < n && i < sizeof pkt->seq; i++) {
        pkt->seq[i] = s[i];
        if (s[i] == 'W')
            pkt->w_count++;
        else
            pkt->atom_count++;
    }
    pkt->seq_len = (uint8_t)i;
}

/* P-headers, IHI0014Q 7.3.1 tables 7.2 (non-CA) and 7.3 (CA); the
 * sequence is in time order as trc_pkt_lister prints it.  Returns false
 * for a reserved encoding. */
static bool decode_phdr(const tb_config *cfg, uint8_t h, tb_packet *pkt)
{
    char s[20];
    unsigned n = 0, i, k;

    if (!cfg->cycle_accurate) {
        if ((h & 0x83) == 0x80) { /* format 1 b1NEEEE00 */
            k = (h >> 2) & 0xF;
            for (i = 0; i < k; i++)
                s[n++] = 'E';
            if (h & 0x40)
                s[n++] = 'N';
            set_seq(pkt, s, n, 1);
            return true;
        }
        if ((h & 0xF3) == 0x82) { /* format 2 b1000FF10 */
            s[n++] = (h & 0x08) ? 'N' : 'E';
            s[n++] = (h & 0x04) ? 'N' : 'E';
            set_seq(pkt, s, n, 2);
            return true;
        }
        return false;
    }
    if (h == 0x80) { /* format 0, ETMv3.0 only */
        if (cfg->arch_minor != 0)
            return false;
        set_seq(pkt, "W", 1, 0);
        return true;
    }
    if ((h & 0xA3) == 0x80) { /* format 1 b1N0EEE00 */
        k = (h >> 2) & 7;
        for (i = 0; i < k; i++) {
            s[n++] = 'W';
            s[n++] = 'E';
        }
        if (h & 0x40) {
            s[n++] = 'W';
            s[n++] = 'N';
        }
        set_seq(pkt, s, n, 1);
        return true;
    }
    if ((h & 0xA3) == 0xA0) { /* format 3 b1E1WWW00 */
        k = ((h >> 2) & 7) + 1;
        for (i = 0; i < k; i++)
            s[n++] = 'W';
        if (h & 0x40)
            s[n++] = 'E';
        set_seq(pkt, s, n, 3);
        return true;
    }
    if ((h & 0xF3) == 0x82) { /* format 2 b1000FF10 */
        s[n++] = 'W';
        s[n++] = (h & 0x08) ? 'N' : 'E';
        s[n++] = (h & 0x04) ? 'N' : 'E';
        set_seq(pkt, s, n, 2);
        return true;
    }
    if ((h & 0xFB) == 0x92 && cfg->arch_minor >= 3) { /* format 4 */
        s[n++] = (h & 0x04) ? 'N' : 'E';
        set_seq(pkt, s, n, 4);
        return true;
    }
    return false;
}

static void build_tables(tb_etmv3_parser *p)
{
    for (unsigned h = 0; h < 256; h++) {
        tb_pkt_kind kind = TB_PKT_RESERVED;
        struct phdr_ent *e = &p->phdr[h];
        tb_packet pkt;

        p->hcls[h] = (uint8_t)classify(p, (uint8_t)h, &kind);
        p->hkind[h] = (uint8_t)kind;
        memset(e, 0, sizeof *e);
        if (kind != TB_PKT_ATOM)
            continue;
        memset(&pkt, 0, sizeof pkt);
        if (!decode_phdr(&p->cfg, (uint8_t)h, &pkt))
            continue;
        e->valid = 1;
        e->fmt = pkt.phdr_format;
        e->seq_len = pkt.seq_len;
        e->atom_count = pkt.atom_count;
        e->w_count = pkt.w_count;
        memcpy(e->seq, pkt.seq, sizeof e->seq);
    }
}

int tb_etmv3_phdr_seq(const tb_config *cfg, uint8_t h, char seq[20])
{
    tb_packet pkt;

    memset(&pkt, 0, sizeof pkt);
    if (!cfg || !decode_phdr(cfg, h, &pkt))
        return -1;
    memcpy(seq, pkt.seq, sizeof pkt.seq);
    return pkt.seq_len;
}

/* Fills an atom packet from the P-header table; false if reserved. */
static bool atom_from_table(const tb_etmv3_parser *p, uint8_t h,
                            tb_packet *pkt)
{
    const struct phdr_ent *e = &p->phdr[h];

    if (!e->valid)
        return false;
    pkt->phdr_format = e->fmt;
    pkt->seq_len = e->seq_len;
    pkt->atom_count = e->atom_count;
    pkt->w_count = e->w_count;
    memcpy(pkt->seq, e->seq, sizeof pkt->seq);
    return true;
}

static void note_addr(tb_etmv3_parser *p, uint32_t addr, tb_isa isa,
                      unsigned bits)
{
    p->last_addr = addr;
    p->last_isa = isa;
    if (bits > p->addr_valid_bits)
        p->addr_valid_bits = bits;
}

/* I-sync (IHI0014Q 7.10.5): b, len the whole packet.  Updates the
 * parser's address state and fills *is (index aside). */
static int decode_isync(tb_etmv3_parser *p, const uint8_t *b, unsigned len,
                        tb_etmv3_isync *is)
{
    unsigned pos = 1, n, i;
    uint8_t info;
    bool j, t, alt;
    uint32_t a = 0;

    memset(is, 0, sizeof *is);
    if (b[0] == 0x70) {
        n = cc_length(b + 1, len - 1);
        is->has_cc = true;
        is->cc = cc_decode(b + 1, n);
        pos += n;
    }
    if (p->cfg.ctxid_bytes) {
        is->has_ctxid = true;
        for (i = 0; i < p->cfg.ctxid_bytes; i++)
            is->context_id |= (uint32_t)b[pos + i] << (8 * i);
        pos += p->cfg.ctxid_bytes;
    }
    info = b[pos++];
    is->reason = (info >> 5) & 3;
    j = (info >> 4) & 1;
    is->jazelle = j;
    is->ns = (info >> 3) & 1;
    /* AltISA from ETMv3.3, Hyp with the virtualization extensions
     * (IHI0014Q 7.10.5). */
    alt = p->cfg.arch_minor >= 3 && ((info >> 2) & 1);
    is->altisa = alt;
    is->hyp = p->cfg.virt && ((info >> 1) & 1);
    is->lsip_isa = TB_ISA_UNKNOWN;

    if (p->cfg.data_only) {
        /* Data-only I-sync: no address (IHI0014Q 7.10.5). */
        is->isa = TB_ISA_UNKNOWN;
        return TB_OK;
    }
    for (i = 0; i < 4; i++)
        a |= (uint32_t)b[pos + i] << (8 * i);
    pos += 4;
    t = a & 1;
    /* IHI0014Q 7.10.5 table 7.20; the reserved J/T/AltISA combinations
     * are errors rather than guesses. */
    if (j) {
        if (alt)
            return TB_ERR_BAD_PACKET;
        is->isa = TB_ISA_JAZELLE; /* T is address bit 0 here */
        is->addr = a;
    } else {
        if (alt && !t)
            return TB_ERR_BAD_PACKET;
        is->isa = t ? (alt ? TB_ISA_THUMBEE : TB_ISA_THUMB) : TB_ISA_ARM;
        is->addr = a & ~1u;
    }
    is->addr_known = true;
    note_addr(p, is->addr, (tb_isa)is->isa, 32);

    if (info & 0x80) {
        /* LSiP: the current instruction's address compressed against the
         * data instruction's (IHI0014Q 7.10.5).  The compressed address
         * becomes the base for the next branch: it is the last address
         * the ETM output (UNVERIFIED, no capture has LSiP). */
        uint32_t la;
        tb_isa lisa;
        bool named;
        unsigned nbits;
        int r;

        r = decode_addr_exc(p, b + pos, len - pos, is->addr, (tb_isa)is->isa,
                            &is->x, &la, &lisa, &named, &nbits);
        if (r < 0)
            return r;
        is->lsip = true;
        is->lsip_addr = la;
        is->lsip_isa = (uint8_t)lisa;
        if (is->x.has_exc) {
            /* The 6-byte form signals the security state where tracing
             * continues; its fields override the info byte's. */
            is->ns = is->x.ns;
            is->altisa = is->x.altisa;
            if (is->x.hyp_valid)
                is->hyp = is->x.hyp;
        }
        note_addr(p, la, lisa, 32);
    }
    return TB_OK;
}

static void isync_to_packet(const tb_etmv3_isync *is, tb_packet *pkt)
{
    exc_to_packet(&is->x, pkt);
    TB_ISYNC_TO_PACKET(pkt, is);
    pkt->jazelle = is->jazelle;
    pkt->addr_bits = is->addr_known ? 32 : 0;
    pkt->addr_known = is->addr_known;
    pkt->lsip = is->lsip;
    pkt->lsip_addr = is->lsip_addr;
    pkt->lsip_isa = (tb_isa)is->lsip_isa;
}

/* Branch address (protocol-notes 2.7): b, len the whole packet.  Updates
 * the parser's address state and fills *br (index aside). */
static int decode_branch(tb_etmv3_parser *p, const uint8_t *b, unsigned len,
                         tb_etmv3_branch *br)
{
    uint32_t a;
    tb_isa isa;
    bool named;
    unsigned nbits;
    int r;

    memset(&br->x, 0, sizeof br->x);
    r = decode_addr_exc(p, b, len, p->last_addr, p->last_isa, &br->x,
                        &a, &isa, &named, &nbits);
    if (r < 0)
        return r;
    br->addr = a;
    br->addr_bits = (uint8_t)nbits;
    br->isa = (uint8_t)isa;
    /* OpenCSD prints "ISA=" for a 5-byte packet; we flag that the packet
     * named it (types.h). */
    br->isa_changed = named;
    note_addr(p, a, isa, nbits);
    br->addr_known = p->addr_valid_bits >= 32;
    return TB_OK;
}

static void branch_to_packet(const tb_etmv3_branch *br, tb_packet *pkt)
{
    TB_BRANCH_TO_PACKET(pkt, br, &br->x);
    pkt->exc_cancel = br->x.exc_cancel;
    pkt->legacy_exc = br->x.legacy_exc;
    pkt->exc_resume = br->x.exc_resume;
}

static void decode_data(tb_etmv3_parser *p, const uint8_t *b, tb_packet *pkt)
{
    uint8_t h = b[0];
    unsigned pos = 1, n, i, vb;
    bool has_addr = false;

    if ((h & 0xD3) == 0x02 || (h & 0xD3) == 0x50)
        has_addr = (h & 0x20) != 0;
    else if ((h & 0xEF) == 0x6A)
        has_addr = (h & 0x10) != 0;
    has_addr = has_addr && (p->cfg.data_trace & 2) &&
               pkt->kind != TB_PKT_OOO_DATA;
    if (pkt->kind == TB_PKT_OOO_DATA || pkt->kind == TB_PKT_OOO_PLACEHOLDER)
        pkt->data_tag = pkt->kind == TB_PKT_OOO_DATA ? (h >> 5) & 3
                                                      : (h >> 2) & 3;
    if (has_addr) {
        uint32_t v = 0, mask;
        unsigned bits;
        n = daddr_length(b + 1, p->len - 1);
        for (i = 0; i < n; i++)
            v |= (uint32_t)(b[1 + i] & (i == 4 ? 0x0F : 0x7F)) << (7 * i);
        if (n == 5)
            p->data_be = (b[5] >> 4) & 1;
        bits = n == 5 ? 32 : 7 * n;
        mask = bits >= 32 ? 0xFFFFFFFFu : ((1u << bits) - 1u);
        p->data_addr = (p->data_addr & ~mask) | (v & mask);
        pkt->has_data_addr = true;
        pkt->data_addr = p->data_addr;
        pkt->data_addr_bits = (uint8_t)bits;
        pkt->data_be = p->data_be;
        pos += n;
    }
    if ((pkt->kind == TB_PKT_DATA || pkt->kind == TB_PKT_OOO_DATA) &&
        (p->cfg.data_trace & 1)) {
        vb = value_bytes(h);
        pkt->data_size = (uint8_t)vb;
        for (i = 0; i < vb; i++)
            pkt->data_value |= (uint32_t)b[pos + i] << (8 * i);
    }
}

/* pkt.bytes = the packet's n bytes b, the rest zero.  When 24 bytes can
 * be read at b, three masked word copies: memcpy of a variable length
 * is a call, and this runs for every packet but a P-header. */
static inline void copy_bytes(uint8_t *dst, const uint8_t *b, unsigned n, bool whole)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (whole) {
        for (unsigned w = 0; w < TB_PKT_MAX_BYTES / 8; w++) {
            const int have = (int)n - 8 * (int)w;
            uint64_t v;

            memcpy(&v, b + 8 * w, 8);
            v = have >= 8 ? v : have <= 0 ? 0 : v & ((1ull << (8 * have)) - 1);
            memcpy(dst + 8 * w, &v, 8);
        }
        return;
    }
#else
    (void)whole;
#endif
    memcpy(dst, b, n);
}

/* Decodes the complete packet of p->len bytes at b (p->buf, or the
 * chunk, whole when 24 bytes can be read there) and emits it. */
static int finish_packet(tb_etmv3_parser *p, tb_pkt_kind kind, const uint8_t *b,
                         bool whole, tb_packet_cb cb, void *ctx)
{
    tb_packet pkt;
    unsigned n;
    int r = TB_OK;

    pkt_init(p, &pkt, kind, p->pkt_index);
    pkt.size = (uint8_t)p->len;
    copy_bytes(pkt.bytes, b, p->len, whole);

    switch (kind) {
    case TB_PKT_BRANCH: {
        tb_etmv3_branch br;

        r = decode_branch(p, b, p->len, &br);
        if (r == TB_OK)
            branch_to_packet(&br, &pkt);
        break;
    }
    case TB_PKT_ISYNC: {
        tb_etmv3_isync is;

        r = decode_isync(p, b, p->len, &is);
        if (r == TB_OK)
            isync_to_packet(&is, &pkt);
        break;
    }
    case TB_PKT_ATOM:
        if (!atom_from_table(p, b[0], &pkt)) {
            p->buf[0] = b[0];
            p->len = 1;
            return emit_bad(p, TB_PKT_RESERVED, TB_ERR_BAD_PACKET, cb, ctx);
        }
        break;
    case TB_PKT_CYCLE_COUNT:
        n = cc_length(b + 1, p->len - 1);
        pkt.has_cc = true;
        pkt.cc = cc_decode(b + 1, n);
        break;
    case TB_PKT_TIMESTAMP: {
        unsigned bits;
        tb_ts_decode(b + 1, p->len - 1, p->cfg.ts64, p->ts, &p->ts, &bits);
        pkt.ts = p->ts;
        pkt.ts_bits = (uint8_t)bits;
        break;
    }
    case TB_PKT_CONTEXT_ID:
        pkt.has_ctxid = true;
        for (n = 0; n < p->cfg.ctxid_bytes; n++)
            pkt.context_id |= (uint32_t)b[1 + n] << (8 * n);
        break;
    case TB_PKT_VMID:
        pkt.vmid = b[1];
        break;
    case TB_PKT_DATA:
    case TB_PKT_OOO_DATA:
    case TB_PKT_OOO_PLACEHOLDER:
    case TB_PKT_VALUE_NOT_TRACED:
        decode_data(p, b, &pkt);
        break;
    default:
        break;
    }
    if (r < 0) {
        if (b != p->buf)
            memcpy(p->buf, b, p->len); /* emit_bad() reports them */
        return emit_bad(p, TB_PKT_BAD_SEQUENCE, r, cb, ctx);
    }
    p->len = 0;
    p->state = ST_HDR;
    return emit(p, &pkt, cb, ctx);
}

/* ------------------------------------------------------------------ */
/* The byte machine. */

static int hunt_byte(tb_etmv3_parser *p, uint8_t by, uint64_t idx,
                     tb_packet_cb cb, void *ctx)
{
    int r;

    if (by == 0x80 && p->zeros >= 5) {
        /* A-sync: at least five zeros then 0x80; extra leading zeros are
         * unsynchronised bytes (protocol-notes 2.3). */
        uint64_t at = p->zero_idx[p->zeros % 5];
        r = emit_notsync(p, p->skip_count - 5, cb, ctx);
        p->skip_count = 0;
        p->zeros = 0;
        p->state = ST_HDR;
        if (r < 0)
            return r;
        return emit_async(p, at, cb, ctx);
    }
    if (p->skip_count == 0)
        p->skip_index = idx;
    p->skip_count++;
    if (by == 0x00) {
        p->zero_idx[p->zeros % 5] = idx;
        p->zeros++;
    } else {
        p->zeros = 0;
    }
    return TB_OK;
}

static int header_byte(tb_etmv3_parser *p, uint8_t by, uint64_t idx,
                       tb_packet_cb cb, void *ctx)
{
    tb_pkt_kind kind = (tb_pkt_kind)p->hkind[by];
    enum hclass hc = (enum hclass)p->hcls[by];

    p->pkt_index = idx;
    p->buf[0] = by;
    p->len = 1;
    switch (hc) {
    case H_ASYNC:
        p->state = ST_ZEROS;
        p->zeros = 1;
        p->zero_idx[0] = idx;
        return TB_OK;
    case H_RESERVED:
        return emit_bad(p, TB_PKT_RESERVED, TB_ERR_BAD_PACKET, cb, ctx);
    case H_BADMODE:
        return emit_bad(p, TB_PKT_BAD_TRACEMODE, TB_ERR_CONFIG, cb, ctx);
    case H_SINGLE:
        return finish_packet(p, kind, p->buf, true, cb, ctx);
    case H_MULTI:
        p->state = ST_BODY;
        return TB_OK;
    }
    return TB_OK;
}

static int zeros_byte(tb_etmv3_parser *p, uint8_t by, uint64_t idx,
                      tb_packet_cb cb, void *ctx)
{
    int r;

    if (by == 0x00) {
        p->zero_idx[p->zeros % 5] = idx;
        p->zeros++;
        return TB_OK;
    }
    if (by == 0x80 && p->zeros >= 5) {
        uint64_t at = p->zero_idx[p->zeros % 5];
        p->state = ST_HDR;
        if (p->zeros > 5) {
            /* OpenCSD reports each extra zero as a bad sequence and then
             * takes the A-sync; we report them as one packet. */
            r = emit_zero_run(p, TB_PKT_BAD_SEQUENCE, TB_ERR_BAD_PACKET,
                              p->pkt_index, p->zeros - 5, cb, ctx);
            if (r < 0) {
                p->zeros = 0;
                return r;
            }
        }
        p->zeros = 0;
        return emit_async(p, at, cb, ctx);
    }
    /* Zeros that are no A-sync: report them and hunt from this byte. */
    r = emit_zero_run(p, TB_PKT_BAD_SEQUENCE, TB_ERR_BAD_PACKET,
                      p->pkt_index, p->zeros, cb, ctx);
    p->state = ST_HUNT;
    p->zeros = 0;
    p->skip_count = 0;
    p->addr_valid_bits = 0;
    p->len = 0;
    if (r < 0) {
        (void)hunt_byte(p, by, idx, cb, ctx); /* keeps the state right */
        return r;
    }
    return hunt_byte(p, by, idx, cb, ctx);
}

static int body_byte(tb_etmv3_parser *p, uint8_t by, tb_packet_cb cb,
                     void *ctx)
{
    tb_pkt_kind kind;
    int n;

    p->buf[p->len++] = by;
    n = body_length(p, p->buf, p->len);
    if (n == 0) {
        if (p->len >= TB_PKT_MAX_BYTES) /* cannot happen: longest is 23 */
            return emit_bad(p, TB_PKT_BAD_SEQUENCE, TB_ERR_BAD_PACKET, cb, ctx);
        return TB_OK;
    }
    if (n < 0)
        return emit_bad(p, TB_PKT_BAD_SEQUENCE, n, cb, ctx);
    kind = (tb_pkt_kind)p->hkind[p->buf[0]];
    return finish_packet(p, kind, p->buf, true, cb, ctx);
}

/* What became of a branch or I-sync (l bytes at b, wholly in the
 * chunk, whole as for copy_bytes) handed to a fused entry as its fields,
 * br or is: t > 0 taken, t < 0 a stop, t == 0 declined, and then the
 * packet path gets it, built from the fields (decoding it again would
 * merge its address twice). */
static int fused_outcome(tb_etmv3_parser *p, int t, const uint8_t *b,
                         unsigned l, bool whole, uint64_t idx,
                         const tb_etmv3_branch *br, const tb_etmv3_isync *is,
                         tb_packet_cb cb, void *ctx)
{
    tb_packet pkt;

    if (t < 0) {
        p->stopped = true;
        return t;
    }
    if (t > 0) {
        p->emitted++;
        return TB_OK;
    }
    pkt_init(p, &pkt, br ? TB_PKT_BRANCH : TB_PKT_ISYNC, idx);
    pkt.size = (uint8_t)l;
    copy_bytes(pkt.bytes, b, l, whole);
    if (br)
        branch_to_packet(br, &pkt);
    else
        isync_to_packet(is, &pkt);
    return emit(p, &pkt, cb, ctx);
}

/* Fused: the branch or I-sync (kind) of n bytes at b, wholly in the
 * chunk, goes to the sink as its fields, without a tb_packet; *r gets
 * the outcome.  False for a bad one (the decoding changed no state):
 * the packet path reports it. */
static inline bool fused_packet(tb_etmv3_parser *p, tb_etmv3_fused_sink *sink,
                                tb_pkt_kind kind, const uint8_t *b, unsigned n,
                                bool whole, uint64_t idx, tb_packet_cb cb, void *ctx,
                                int *r)
{
    tb_etmv3_branch br;
    tb_etmv3_isync is;
    int t;

    if (kind == TB_PKT_BRANCH) {
        if (decode_branch(p, b, n, &br) != TB_OK)
            return false;
        br.index = idx;
        t = tb_etmv3_decoder_branch(sink->d, &br, sink->cb, sink->ctx, &sink->nel);
        *r = fused_outcome(p, t, b, n, whole, idx, &br, NULL, cb, ctx);
    } else {
        if (decode_isync(p, b, n, &is) != TB_OK)
            return false;
        is.index = idx;
        t = tb_etmv3_decoder_isync(sink->d, &is, sink->cb, sink->ctx, &sink->nel);
        *r = fused_outcome(p, t, b, n, whole, idx, NULL, &is, cb, ctx);
    }
    return true;
}

static inline int push_impl(tb_etmv3_parser *p, const uint8_t *data, size_t len,
                            tb_span_cur *cur, tb_packet_cb cb, void *ctx,
                            tb_etmv3_fused_sink *sink)
{
    size_t i;
    int r = TB_OK;

    p->emitted = 0;
    p->stopped = false;
    for (i = 0; i < len && r >= 0; i++) {
        uint8_t by = data[i];
        uint64_t idx = tb_span_at(cur, i);

        if (p->state == ST_HUNT && p->zeros == 0 && by != 0x00) {
            /* Hunting with no zeros in hand: only a zero can start an
             * A-sync, so the bytes up to the next one are unsynchronised,
             * counted in one step as hunt_byte() would one by one (an
             * ETB dump that wrapped starts with hundreds of them). */
            const uint8_t *z = memchr(data + i, 0x00, len - i);
            const size_t k = z ? (size_t)(z - (data + i)) : len - i;

            if (p->skip_count == 0)
                p->skip_index = idx;
            p->skip_count += k;
            i += k - 1;
            continue;
        }
        if (p->state == ST_HDR) {
            /* Fast paths, same output as the byte machine: a P-header
             * (most of the stream) is emitted straight from the table;
             * a multi-byte packet wholly inside this chunk is taken in
             * one step.  body_length() answers the same on more bytes
             * as the byte machine finds at the packet's last byte, since
             * it reads the bytes in order and stops at the first that
             * decides. */
            unsigned hc = p->hcls[by];

            if (hc == H_SINGLE && p->hkind[by] == TB_PKT_ATOM &&
                p->phdr[by].valid) {
                tb_packet pkt;

                if (sink) {
                    /* Fused: the rest of the chunk to the decoder, which
                     * takes the P-headers from here on (the parser's
                     * table and its agree on which bytes are P-headers)
                     * and stops at the first other byte.  A header it
                     * hands back (none taken) goes out as a packet. */
                    int c = tb_etmv3_decoder_phdrs(sink->d, data + i, len - i, cur, i,
                                                   sink->cb, sink->ctx, &sink->nel);

                    if (c < 0) {
                        p->stopped = true;
                        r = c;
                        break;
                    }
                    if (c > 0) {
                        i += (size_t)c - 1;
                        continue;
                    }
                }

                pkt_init(p, &pkt, TB_PKT_ATOM, idx);
                pkt.size = 1;
                pkt.bytes[0] = by;
                (void)atom_from_table(p, by, &pkt);
                r = emit(p, &pkt, cb, ctx);
                continue;
            }
            if (hc == H_MULTI) {
                size_t avail = len - i;
                int n = body_length(p, data + i,
                                    avail > TB_PKT_MAX_BYTES ? TB_PKT_MAX_BYTES
                                                             : (unsigned)avail);
                if (n > 0 && (size_t)n <= avail) {
                    const tb_pkt_kind kind = (tb_pkt_kind)p->hkind[by];
                    const bool whole = avail >= TB_PKT_MAX_BYTES;

                    if (sink && (kind == TB_PKT_BRANCH || kind == TB_PKT_ISYNC) &&
                        fused_packet(p, sink, kind, data + i, (unsigned)n, whole, idx,
                                     cb, ctx, &r)) {
                        i += (size_t)n - 1;
                        continue;
                    }
                    /* Decoded where it lies, not copied to buf first. */
                    p->len = (unsigned)n;
                    p->pkt_index = idx;
                    r = finish_packet(p, kind, data + i, whole, cb, ctx);
                    i += (size_t)n - 1;
                    continue;
                }
            }
        }
        switch (p->state) {
        case ST_HUNT: r = hunt_byte(p, by, idx, cb, ctx); break;
        case ST_HDR: r = header_byte(p, by, idx, cb, ctx); break;
        case ST_BODY: r = body_byte(p, by, cb, ctx); break;
        case ST_ZEROS: r = zeros_byte(p, by, idx, cb, ctx); break;
        }
    }
    if (r < 0)
        return r;
    return p->emitted;
}

int tb_etmv3_parser_finish(tb_etmv3_parser *p, tb_packet_cb cb, void *ctx)
{
    int r = TB_OK;

    if (!p)
        return TB_ERR_INVAL;
    p->emitted = 0;
    p->stopped = false;
    switch (p->state) {
    case ST_HUNT:
        r = emit_notsync(p, p->skip_count, cb, ctx);
        break;
    case ST_BODY: {
        tb_packet pkt;
        pkt_init(p, &pkt, TB_PKT_INCOMPLETE, p->pkt_index);
        pkt.size = (uint8_t)p->len;
        memcpy(pkt.bytes, p->buf, p->len);
        pkt.err = TB_ERR_TRUNCATED;
        r = emit(p, &pkt, cb, ctx);
        break;
    }
    case ST_ZEROS:
        r = emit_zero_run(p, TB_PKT_INCOMPLETE, TB_ERR_TRUNCATED,
                          p->pkt_index, p->zeros, cb, ctx);
        break;
    case ST_HDR:
        break;
    }
    {
        int n = p->emitted;
        init_state(p);
        return r < 0 ? r : n;
    }
}

/* The push entries and the backend table (backend.h). */
TB_PARSER_API(etmv3, ETMV3, push_impl);
