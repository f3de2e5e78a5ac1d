/*
 * PTM (PFT 1.0 / 1.1) packet writer: tb_packet -> trace bytes.
 *
 * The inverse of decoder/ptm_parser.c: each kind is encoded from the
 * fields the parser fills.  Like the macrocell, the writer remembers the
 * last address and timestamp it output, so addresses and timestamps go
 * out with the fewest bytes (protocol-notes 3.7, 3.9, 8 "Address
 * compression"); the compression itself is the shared codec.
 *
 * A packet may ask for more than the minimum: a non-zero addr_bits
 * (branch, WP update) or ts_bits (timestamp), as the parser fills them,
 * is honoured when it is at least what the change needs.  Real PTMs do
 * not always send the minimum timestamp (Snowball sends a partial one
 * right after an A-sync and a full one after the next I-sync; TC2 sends
 * full ones between syncs), so this is what lets a parsed stream be
 * written back byte for byte.
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/pkt_codec.h"
#include "tracebench/writer.h"
#include "writers.h"
#include "../common/struct_size.h"

struct tb_ptm_writer {
    bool ca;
    bool ts64;
    uint8_t ctxid_bytes;

    /* What the parser will hold after our last packet. */
    uint32_t addr;
    tb_isa family; /* ARM, THUMB, JAZELLE or UNKNOWN */
    bool altisa;
    uint64_t ts;
    bool ts_full; /* next timestamp in full (after A-sync / reset) */
};

void tb_ptm_writer_reset(tb_ptm_writer *w)
{
    if (!w)
        return;
    w->addr = 0;
    w->family = TB_ISA_UNKNOWN;
    w->altisa = false;
    w->ts = 0;
    w->ts_full = true;
}

tb_ptm_writer *tb_ptm_writer_new(const tb_config *cfg)
{
    tb_config own; /* the caller's, as this build's (struct_size.h) */
    tb_ptm_writer *w = tb_config_alloc(sizeof *w, &cfg, &own, TB_PROTO_PTM);

    if (!w)
        return NULL;
    w->ca = cfg->cycle_accurate;
    w->ts64 = cfg->ts64 && cfg->arch_minor >= 1; /* protocol-notes 3.1 */
    w->ctxid_bytes = cfg->ctxid_bytes;
    tb_ptm_writer_reset(w);
    return w;
}

void tb_ptm_writer_free(tb_ptm_writer *w)
{
    free(w);
}

/* The PTM cycle-count field (protocol-notes 3.6): CC[3:0] in bits 5:2 of
 * the first byte (whose other bits the caller gives in `first`), C in
 * bit 6; then 7 bits a byte with C in bit 7, five bytes at most. */
static unsigned cc_encode(uint32_t cc, uint8_t first, uint8_t *out)
{
    uint32_t rest = cc >> 4;
    unsigned n = 1;

    out[0] = (uint8_t)(first | ((cc & 0xF) << 2) | (rest ? 0x40 : 0));
    while (rest && n < 5) {
        out[n] = (uint8_t)(rest & 0x7F);
        rest >>= 7;
        if (rest)
            out[n] |= 0x80;
        n++;
    }
    return n;
}

static tb_isa family_of(tb_isa isa)
{
    return isa == TB_ISA_THUMBEE ? TB_ISA_THUMB : isa;
}

static bool aligned(uint32_t addr, tb_isa fam)
{
    if (fam == TB_ISA_ARM)
        return (addr & 3) == 0;
    if (fam == TB_ISA_THUMB)
        return (addr & 1) == 0;
    return true;
}

/* AltISA bit that makes the parser report pkt->isa: it tells Thumb from
 * ThumbEE (protocol-notes 3.7); for other states the packet's own flag. */
static bool altisa_for(const tb_packet *pkt)
{
    if (pkt->isa == TB_ISA_THUMBEE)
        return true;
    if (pkt->isa == TB_ISA_THUMB)
        return false;
    return pkt->altisa;
}

static int write_isync(tb_ptm_writer *w, const tb_packet *pkt, uint8_t *b)
{
    tb_isa fam = family_of(pkt->isa);
    bool alt = altisa_for(pkt);
    uint32_t a = pkt->addr;
    unsigned n = 6, i;

    if ((fam != TB_ISA_ARM && fam != TB_ISA_THUMB) || (a & 1) ||
        pkt->reason > 3 || pkt->lsip || pkt->jazelle)
        return TB_ERR_INVAL;
    if (fam == TB_ISA_THUMB)
        a |= 1; /* T bit (protocol-notes 3.4) */
    b[0] = 0x08;
    for (i = 0; i < 4; i++)
        b[1 + i] = (uint8_t)(a >> (8 * i));
    /* Info: reason 6:5, NS 3, AltISA 2, Hyp 1; bit 0 written as 1 as
     * every real I-sync has it (protocol-notes 3.4). */
    b[5] = (uint8_t)(0x01 | (pkt->reason << 5) | (pkt->ns ? 0x08 : 0) |
                     (alt ? 0x04 : 0) | (pkt->hyp ? 0x02 : 0));
    if (w->ca && pkt->reason != TB_ISYNC_PERIODIC)
        n += cc_encode(pkt->cc, 0x80, b + n); /* bit 7 = 1 as observed */
    else if (pkt->has_cc)
        return TB_ERR_INVAL;
    if (w->ctxid_bytes < 4 && (pkt->context_id >> (8 * w->ctxid_bytes)))
        return TB_ERR_INVAL;
    for (i = 0; i < w->ctxid_bytes; i++)
        b[n++] = (uint8_t)(pkt->context_id >> (8 * i));
    w->addr = pkt->addr;
    w->family = fam;
    w->altisa = alt;
    return (int)n;
}

static int write_atom(const tb_ptm_writer *w, const tb_packet *pkt,
                      uint8_t *b)
{
    unsigned i, n = pkt->seq_len;
    uint8_t h;

    if (n < 1 || n > 5 || (w->ca && n != 1))
        return TB_ERR_INVAL;
    for (i = 0; i < n; i++)
        if (pkt->seq[i] != TB_ATOM_E && pkt->seq[i] != TB_ATOM_N)
            return TB_ERR_INVAL;
    if (w->ca) /* one atom in bit 1, CC in the rest (protocol-notes 3.5) */
        return (int)cc_encode(pkt->cc,
                              (uint8_t)(0x80 | (pkt->seq[0] == TB_ATOM_N ? 2 : 0)),
                              b);
    if (pkt->has_cc)
        return TB_ERR_INVAL;
    /* Marker bit n+1, oldest atom just below it, newest in bit 1; 1 = N
     * (protocol-notes 3.5). */
    h = (uint8_t)(0x80 | (1u << (n + 1)));
    for (i = 0; i < n; i++)
        if (pkt->seq[i] == TB_ATOM_N)
            h |= (uint8_t)(1u << (n - i));
    b[0] = h;
    return 1;
}

/* Branch address (off 0) or waypoint update (off 1, after 0x72). */
static int write_address(tb_ptm_writer *w, const tb_packet *pkt, uint8_t *b,
                         bool wp)
{
    tb_isa fam = family_of(pkt->isa);
    bool alt = altisa_for(pkt);
    bool extra; /* exception bytes / WP AltISA byte */
    unsigned n, off = wp ? 1 : 0, minb;
    int k;

    if (fam != TB_ISA_ARM && fam != TB_ISA_THUMB && fam != TB_ISA_JAZELLE)
        return TB_ERR_INVAL;
    if (!aligned(pkt->addr, fam) || pkt->exc_cancel || pkt->legacy_exc)
        return TB_ERR_INVAL;
    if (wp) {
        if (pkt->has_exc || pkt->exc_bytes > 1 || pkt->has_cc)
            return TB_ERR_INVAL;
        extra = pkt->exc_bytes == 1;
    } else {
        if (pkt->exc_bytes > 2 || pkt->exc_num > 0x1FF ||
            (!pkt->has_exc && pkt->exc_bytes))
            return TB_ERR_INVAL;
        extra = pkt->has_exc;
    }
    /* Only the extra byte can switch Thumb <-> ThumbEE (protocol-notes
     * 3.7), so without it the packet must keep the current AltISA. */
    if (!extra && alt != w->altisa && fam == TB_ISA_THUMB)
        return TB_ERR_INVAL;
    if (!extra)
        alt = w->altisa;

    /* WP update: the AltISA byte only follows a five-byte address
     * (protocol-notes 3.8).  Branch: exceptions need two address bytes,
     * which the codec ensures. */
    if (wp)
        b[0] = 0x72;
    minb = (wp && extra) ? 5 : 0;
    if (pkt->addr_bits) {
        unsigned k0 = 1;
        while (k0 < 5 && tb_addr_bits_for(TB_ADDR_SIXBIT, fam, k0) < pkt->addr_bits)
            k0++;
        if (k0 > minb)
            minb = k0;
    }
    k = tb_addr_encode(TB_ADDR_SIXBIT, pkt->addr, fam, w->addr, w->family,
                       extra, minb, b + off);
    if (k < 0)
        return k;
    n = off + (unsigned)k;
    if (wp) {
        if (extra)
            b[n++] = (uint8_t)(alt ? 0x40 : 0);
    } else {
        if (extra) {
            /* E1: C 7, AltISA 6, number[3:0] 4:1, NS 0; E2: Hyp 5,
             * number[8:4] 4:0 (protocol-notes 3.7). */
            bool e2 = pkt->exc_bytes == 2 || pkt->exc_num > 0xF;
            b[n++] = (uint8_t)((e2 ? 0x80 : 0) | (alt ? 0x40 : 0) |
                               ((pkt->exc_num & 0xF) << 1) | (pkt->ns ? 1 : 0));
            if (e2)
                b[n++] = (uint8_t)((pkt->hyp ? 0x20 : 0) |
                                   ((pkt->exc_num >> 4) & 0x1F));
        }
        if (w->ca)
            n += cc_encode(pkt->cc, 0, b + n);
        else if (pkt->has_cc)
            return TB_ERR_INVAL;
    }
    w->addr = pkt->addr;
    w->family = fam;
    w->altisa = alt;
    return (int)n;
}

static int write_timestamp(tb_ptm_writer *w, const tb_packet *pkt, uint8_t *b)
{
    unsigned n = 1;
    int k;

    b[0] = 0x42;
    k = tb_ts_encode(pkt->ts, w->ts, w->ts64, w->ts_full && !pkt->ts_bits,
                     b + 1);
    if (k < 0)
        return k;
    if (pkt->ts_bits) {
        /* Bytes that carry ts_bits: 7 bits each, the last possible one
         * full width (protocol-notes 3.9). */
        unsigned nmax = w->ts64 ? 9 : 7;
        unsigned want = pkt->ts_bits >= (w->ts64 ? 64 : 48)
                            ? nmax : (pkt->ts_bits + 6u) / 7u;
        if (want > nmax)
            want = nmax;
        if (want > (unsigned)k) {
            /* The codec sends the fewest bytes that turn `last` into the
             * value; a base differing first in bit 7(want-1) makes that
             * exactly `want`. */
            uint64_t base = pkt->ts ^ ((uint64_t)1 << (7 * (want - 1)));
            k = tb_ts_encode(pkt->ts, base, w->ts64, want == nmax, b + 1);
            if (k < 0)
                return k;
        }
    }
    n += (unsigned)k;
    if (w->ca)
        n += cc_encode(pkt->cc, 0, b + n);
    else if (pkt->has_cc)
        return TB_ERR_INVAL;
    w->ts = pkt->ts;
    w->ts_full = false;
    return (int)n;
}

int tb_ptm_writer_write(tb_ptm_writer *w, const tb_packet *pkt, uint8_t *out,
                        size_t cap)
{
    /* Staged here so a failed or too-long packet changes nothing. */
    uint8_t b[TB_PKT_MAX_BYTES + 8];
    tb_ptm_writer saved;
    unsigned i;
    int n;

    if (!w || !pkt || (!out && cap))
        return TB_ERR_INVAL;
    saved = *w;
    switch (pkt->kind) {
    case TB_PKT_ASYNC: {
        /* Five zeros and 0x80; a longer A-sync as parsed keeps its extra
         * zeros (protocol-notes 3.3).  The next timestamp goes out in
         * full, as after every sync on real hardware (protocol-notes 8). */
        unsigned zeros = 5;
        if (pkt->size > 6 && pkt->size <= TB_PKT_MAX_BYTES)
            zeros = pkt->size - 1u;
        for (i = 0; i < zeros; i++)
            b[i] = 0;
        b[zeros] = 0x80;
        n = (int)zeros + 1;
        w->ts_full = true;
        break;
    }
    case TB_PKT_ISYNC:
        n = write_isync(w, pkt, b);
        break;
    case TB_PKT_ATOM:
        n = write_atom(w, pkt, b);
        break;
    case TB_PKT_BRANCH:
        n = write_address(w, pkt, b, false);
        break;
    case TB_PKT_WP_UPDATE:
        n = write_address(w, pkt, b, true);
        break;
    case TB_PKT_TIMESTAMP:
        n = write_timestamp(w, pkt, b);
        break;
    case TB_PKT_CONTEXT_ID:
        if (w->ctxid_bytes < 4 && (pkt->context_id >> (8 * w->ctxid_bytes))) {
            n = TB_ERR_INVAL;
            break;
        }
        b[0] = 0x6E;
        for (i = 0; i < w->ctxid_bytes; i++)
            b[1 + i] = (uint8_t)(pkt->context_id >> (8 * i));
        n = 1 + w->ctxid_bytes;
        break;
    case TB_PKT_VMID:
        b[0] = 0x3C;
        b[1] = pkt->vmid;
        n = 2;
        break;
    case TB_PKT_TRIGGER:
        b[0] = 0x0C;
        n = 1;
        break;
    case TB_PKT_IGNORE:
        b[0] = 0x66;
        n = 1;
        break;
    case TB_PKT_EXC_RETURN:
        b[0] = 0x76;
        n = 1;
        break;
    default:
        n = TB_ERR_INVAL; /* not a PTM packet, or an error report */
        break;
    }
    if (n >= 0 && (size_t)n > cap)
        n = TB_ERR_NOSPACE;
    if (n < 0) {
        *w = saved;
        return n;
    }
    memcpy(out, b, (size_t)n);
    return n;
}
