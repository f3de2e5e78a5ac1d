/*
 * ETMv3 (3.0-3.5) packet writer: tb_packet -> trace bytes.
 *
 * Encodes each kind from the fields decoder/etmv3_parser.c fills, so a
 * written packet parses back to the same fields.  Branch and I-sync
 * addresses are compressed against the last address *output* (IHI0014Q
 * 6.7.1, protocol-notes 2.7), timestamps against the last timestamp
 * output and in full after an A-sync (protocol-notes 8), data addresses
 * against the last data address.  Anything the protocol or the
 * configuration cannot express is TB_ERR_INVAL.
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/pkt_codec.h"
#include "tracebench/writer.h"
#include "writers.h"
#include "../common/struct_size.h"

struct tb_etmv3_writer {
    tb_config cfg;
    tb_addr_scheme scheme;
    uint32_t last_addr;
    tb_isa last_isa;
    uint64_t ts;
    bool ts_full;
    uint32_t data_addr;
    bool data_be;
    bool data_known;
};

static void init_state(tb_etmv3_writer *w)
{
    w->last_addr = 0;
    w->last_isa = TB_ISA_UNKNOWN;
    w->ts = 0;
    w->ts_full = true;
    w->data_addr = 0;
    w->data_be = false;
    w->data_known = false;
}

tb_etmv3_writer *tb_etmv3_writer_new(const tb_config *cfg)
{
    tb_config own; /* the caller's, as this build's (struct_size.h) */
    tb_etmv3_writer *w = tb_config_alloc(sizeof *w, &cfg, &own, TB_PROTO_ETMV3);

    if (!w)
        return NULL;
    w->cfg = *cfg;
    w->scheme = cfg->alt_branch ? TB_ADDR_SIXBIT : TB_ADDR_ORIGINAL;
    init_state(w);
    return w;
}

void tb_etmv3_writer_free(tb_etmv3_writer *w)
{
    free(w);
}

void tb_etmv3_writer_reset(tb_etmv3_writer *w)
{
    if (w)
        init_state(w);
}

/* Output buffer with a hard capacity: the packet is staged here first so
 * a failed write leaves neither partial bytes nor changed state. */
typedef struct {
    uint8_t b[TB_PKT_MAX_BYTES + 8];
    unsigned n;
} obuf;

static void put(obuf *o, uint8_t by)
{
    if (o->n < sizeof o->b)
        o->b[o->n++] = by;
}

/* ETMv3 cycle count (protocol-notes 2.6): minimal 7-bit groups, the 5th
 * byte carries value[31:28]. */
static void put_cc(obuf *o, uint32_t cc)
{
    unsigned i;

    for (i = 0; i < 4; i++) {
        uint32_t rest = cc >> (7 * (i + 1));
        put(o, (uint8_t)(((cc >> (7 * i)) & 0x7F) | (rest ? 0x80 : 0)));
        if (!rest)
            return;
    }
    put(o, (uint8_t)((cc >> 28) & 0x0F));
}

/* Exception information bytes E0 [E1] [E2] (protocol-notes 2.7).  The
 * count honours pkt->exc_bytes when given (the parser fills it), else
 * the fewest that carry the fields. */
static int put_exc(obuf *o, const tb_packet *pkt, bool altisa)
{
    unsigned k = pkt->exc_bytes;
    bool need_e1 = pkt->hyp_valid || (pkt->exc_num >> 4) != 0;
    bool e1, e2;

    if (pkt->exc_num > 0x1FF || pkt->exc_resume > 15)
        return TB_ERR_INVAL;
    if (k == 0)
        k = need_e1 ? (pkt->exc_resume ? 3 : 2) : (pkt->exc_resume ? 2 : 1);
    if (k > 3)
        return TB_ERR_INVAL;
    /* Two bytes are E0 E1 when Hyp/high number bits are needed, else E0
     * E2 (a byte after E0 with bit 6 set is E2). */
    e1 = k == 3 || (k == 2 && need_e1);
    e2 = k == 3 || (k == 2 && !need_e1);
    if ((!e1 && need_e1) || (!e2 && pkt->exc_resume) ||
        (k == 2 && !need_e1 && pkt->hyp_valid))
        return TB_ERR_INVAL;
    put(o, (uint8_t)((pkt->ns ? 1 : 0) | ((pkt->exc_num & 0xF) << 1) |
                     (pkt->exc_cancel ? 0x20 : 0) | (altisa ? 0x40 : 0) |
                     (k > 1 ? 0x80 : 0)));
    if (e1)
        put(o, (uint8_t)(((pkt->exc_num >> 4) & 0x1F) |
                         (pkt->hyp ? 0x20 : 0) | (e2 ? 0x80 : 0)));
    if (e2)
        put(o, (uint8_t)(0x40 | (pkt->exc_resume & 0xF)));
    return TB_OK;
}

static bool thumbish(tb_isa isa)
{
    return isa == TB_ISA_THUMB || isa == TB_ISA_THUMBEE;
}

/* Address + exception bytes, as a branch packet or an LSiP address.  The
 * parser's ThumbEE rule (decode_addr_exc) decides what is expressible:
 * a switch between Thumb and ThumbEE needs exception bytes with AltISA. */
static int put_addr_exc(const tb_etmv3_writer *w, obuf *o,
                        const tb_packet *pkt, uint32_t addr, tb_isa isa,
                        uint32_t base, tb_isa base_isa, uint32_t *out_addr)
{
    uint8_t ab[5];
    int n;
    bool exc = pkt->has_exc && !pkt->legacy_exc;
    bool altisa = pkt->altisa;

    if (isa != TB_ISA_ARM && !thumbish(isa) && isa != TB_ISA_JAZELLE)
        return TB_ERR_INVAL;
    if (exc) {
        if (thumbish(isa) && altisa != (isa == TB_ISA_THUMBEE))
            return TB_ERR_INVAL;
    } else if (isa == TB_ISA_THUMBEE && base_isa != TB_ISA_THUMBEE) {
        return TB_ERR_INVAL;
    } else if (isa == TB_ISA_THUMB && base_isa == TB_ISA_THUMBEE) {
        return TB_ERR_INVAL;
    }
    if (pkt->legacy_exc) {
        /* Deprecated byte-5 form: ARM only, 3-bit code (protocol-notes
         * 2.7).  Written only to test the parser; encoders avoid it. */
        if (isa != TB_ISA_ARM || pkt->exc_num > 7)
            return TB_ERR_INVAL;
        n = tb_addr_encode(w->scheme, addr, isa, base, base_isa, false, 5, ab);
        if (n != 5)
            return TB_ERR_INVAL;
        if (out_addr)
            tb_addr_decode(w->scheme, ab, 5, base, base_isa, out_addr, NULL,
                           NULL, NULL, NULL);
        ab[4] = (uint8_t)(0x80 | (pkt->exc_cancel ? 0x40 : 0) |
                          ((pkt->exc_num & 7) << 3) | (ab[4] & 0x07));
    } else {
        /* ThumbEE shares the Thumb layout: compress as Thumb when the
         * base is Thumb-class so no 5th byte is forced needlessly. */
        tb_isa enc = isa, enc_base = base_isa;
        if (thumbish(isa) && thumbish(base_isa)) {
            enc = TB_ISA_THUMB;
            enc_base = TB_ISA_THUMB;
        }
        n = tb_addr_encode(w->scheme, addr, enc, base, enc_base, exc, 0, ab);
        if (n < 0)
            return n;
    }
    for (int i = 0; i < n; i++)
        put(o, ab[i]);
    if (exc) {
        int r = put_exc(o, pkt, altisa);
        if (r < 0)
            return r;
    }
    if (out_addr && !pkt->legacy_exc)
        tb_addr_decode(w->scheme, ab, (unsigned)n, base, base_isa, out_addr,
                       NULL, NULL, NULL, NULL);
    return TB_OK;
}

static int phdr_byte(const tb_etmv3_writer *w, const tb_packet *pkt,
                     uint8_t *out)
{
    char s[21];
    unsigned n = pkt->seq_len, i, e = 0, wc = 0, nn = 0;

    if (n > 20)
        return TB_ERR_INVAL;
    memcpy(s, pkt->seq, n);
    s[n] = 0;
    for (i = 0; i < n; i++) {
        if (s[i] == 'E')
            e++;
        else if (s[i] == 'N')
            nn++;
        else if (s[i] == 'W')
            wc++;
        else
            return TB_ERR_INVAL;
    }
    /* IHI0014Q 7.3.1 tables 7.2 and 7.3. */
    if (!w->cfg.cycle_accurate) {
        if (wc)
            return TB_ERR_INVAL;
        switch (pkt->phdr_format) {
        case 1: /* E^k N? */
            if (e > 15 || nn > 1 || (nn && s[n - 1] != 'N'))
                return TB_ERR_INVAL;
            *out = (uint8_t)(0x80 | (nn ? 0x40 : 0) | (e << 2));
            return TB_OK;
        case 2:
            if (n != 2)
                return TB_ERR_INVAL;
            *out = (uint8_t)(0x82 | (s[0] == 'N' ? 0x08 : 0) |
                             (s[1] == 'N' ? 0x04 : 0));
            return TB_OK;
        default:
            return TB_ERR_INVAL;
        }
    }
    switch (pkt->phdr_format) {
    case 0:
        if (w->cfg.arch_minor != 0 || strcmp(s, "W") != 0)
            return TB_ERR_INVAL;
        *out = 0x80;
        return TB_OK;
    case 1: /* (WE)^k (WN)?, k <= 7, not empty */
        if (n == 0 || (n & 1) || nn > 1 || e > 7)
            return TB_ERR_INVAL;
        for (i = 0; i < n; i += 2) {
            bool last = i + 2 == n;
            if (s[i] != 'W' || (s[i + 1] == 'N' && !last) || s[i + 1] == 'W')
                return TB_ERR_INVAL;
        }
        *out = (uint8_t)(0x80 | (nn ? 0x40 : 0) | (e << 2));
        return TB_OK;
    case 2: /* W a b */
        if (n != 3 || s[0] != 'W' || s[1] == 'W' || s[2] == 'W')
            return TB_ERR_INVAL;
        *out = (uint8_t)(0x82 | (s[1] == 'N' ? 0x08 : 0) |
                         (s[2] == 'N' ? 0x04 : 0));
        return TB_OK;
    case 3: /* W^m E?, 1 <= m <= 8 */
        if (wc < 1 || wc > 8 || nn || e > 1 || (e && s[n - 1] != 'E'))
            return TB_ERR_INVAL;
        *out = (uint8_t)(0xA0 | (e ? 0x40 : 0) | ((wc - 1) << 2));
        return TB_OK;
    case 4: /* one atom, no W; ETMv3.3+ */
        if (w->cfg.arch_minor < 3 || n != 1 || wc)
            return TB_ERR_INVAL;
        *out = (uint8_t)(0x92 | (s[0] == 'N' ? 0x04 : 0));
        return TB_OK;
    default:
        return TB_ERR_INVAL;
    }
}

static int write_isync(tb_etmv3_writer *w, const tb_packet *pkt, obuf *o,
                       uint32_t *new_addr, tb_isa *new_isa)
{
    bool j = false, t = false, alt = false;
    uint32_t a;
    unsigned i;

    if (pkt->reason > 3)
        return TB_ERR_INVAL;
    if (!w->cfg.data_only) {
        switch (pkt->isa) {
        case TB_ISA_ARM: break;
        case TB_ISA_THUMB: t = true; break;
        case TB_ISA_THUMBEE: t = alt = true; break;
        case TB_ISA_JAZELLE: j = true; break;
        default: return TB_ERR_INVAL;
        }
        /* AltISA exists from ETMv3.3 (IHI0014Q 7.10.5). */
        if (alt && w->cfg.arch_minor < 3)
            return TB_ERR_INVAL;
        if (pkt->isa == TB_ISA_ARM && (pkt->addr & 3))
            return TB_ERR_INVAL;
        if (t && (pkt->addr & 1))
            return TB_ERR_INVAL;
    }
    if (pkt->hyp && !w->cfg.virt)
        return TB_ERR_INVAL;
    if (pkt->has_ctxid && !w->cfg.ctxid_bytes)
        return TB_ERR_INVAL;

    put(o, pkt->has_cc ? 0x70 : 0x08);
    if (pkt->has_cc)
        put_cc(o, pkt->cc);
    for (i = 0; i < w->cfg.ctxid_bytes; i++)
        put(o, (uint8_t)(pkt->context_id >> (8 * i)));
    /* Info bit 0 is 1 in every real I-sync (protocol-notes 2.4). */
    put(o, (uint8_t)((pkt->lsip && !w->cfg.data_only ? 0x80 : 0) |
                     (pkt->reason << 5) | (j ? 0x10 : 0) |
                     (pkt->ns ? 0x08 : 0) | (alt ? 0x04 : 0) |
                     (pkt->hyp ? 0x02 : 0) | 0x01));
    if (w->cfg.data_only) {
        *new_addr = w->last_addr;
        *new_isa = w->last_isa;
        return TB_OK;
    }
    a = pkt->addr | (t ? 1u : 0);
    for (i = 0; i < 4; i++)
        put(o, (uint8_t)(a >> (8 * i)));
    *new_addr = pkt->addr;
    *new_isa = pkt->isa;
    if (pkt->lsip) {
        /* IHI0014Q 7.10.5: compressed against the data instruction's
         * address; the exception-style byte only marks a security-state
         * change, so it carries no number. */
        int r;
        if (pkt->has_exc && (pkt->exc_num || pkt->legacy_exc))
            return TB_ERR_INVAL;
        r = put_addr_exc(w, o, pkt, pkt->lsip_addr, pkt->lsip_isa, pkt->addr,
                         pkt->isa, new_addr);
        if (r < 0)
            return r;
        *new_isa = pkt->lsip_isa;
    }
    return TB_OK;
}

static unsigned size_code(uint8_t size, int *err)
{
    switch (size) {
    case 0: return 0;
    case 1: return 1;
    case 2: return 2;
    case 4: return 3;
    default: *err = TB_ERR_INVAL; return 0;
    }
}

/* Data address (protocol-notes 2.9, UNVERIFIED): fewest 7-bit groups
 * against the last data address; byte 5 (A[31:28], BE in bit 4) when
 * the top bits or the endianness change.  At least the bits the packet
 * says it carries (data_addr_bits, as the parser fills it): a parsed
 * packet writes back to the same bytes, and an encoder asks for a full
 * address (D-sync, IHI0014Q 7.10.6) with 32. */
static void put_daddr(tb_etmv3_writer *w, obuf *o, uint32_t a, bool be,
                      unsigned min_bits)
{
    unsigned n, i, min_n = min_bits >= 32 ? 5 : (min_bits + 6) / 7;

    for (n = 1; n < 5; n++)
        if (n >= min_n && w->data_known && be == w->data_be &&
            ((a ^ w->data_addr) >> (7 * n)) == 0)
            break;
    for (i = 0; i < n && i < 4; i++)
        put(o, (uint8_t)(((a >> (7 * i)) & 0x7F) | (i + 1 < n ? 0x80 : 0)));
    if (n == 5)
        put(o, (uint8_t)(((a >> 28) & 0x0F) | (be ? 0x10 : 0)));
    w->data_addr = a;
    w->data_be = be;
    w->data_known = true;
}

static int write_data(tb_etmv3_writer *w, const tb_packet *pkt, obuf *o)
{
    unsigned dt = w->cfg.data_trace;
    int err = TB_OK;
    unsigned ss, i;
    uint8_t h;

    if (!dt)
        return TB_ERR_INVAL;
    if (pkt->has_data_addr && !(dt & 2))
        return TB_ERR_INVAL;
    /* No value bytes without value trace (ETMCR[2], IHI0014Q 7.4.2): a
     * parser would take them for the packets after it. */
    if ((pkt->kind == TB_PKT_DATA || pkt->kind == TB_PKT_OOO_DATA) && pkt->data_size &&
        !(dt & 1))
        return TB_ERR_INVAL;
    switch (pkt->kind) {
    case TB_PKT_DATA:
        ss = size_code(pkt->data_size, &err);
        h = (uint8_t)(0x02 | (pkt->has_data_addr ? 0x20 : 0) | (ss << 2));
        break;
    case TB_PKT_OOO_DATA:
        if (!(dt & 1) || pkt->has_data_addr || pkt->data_tag < 1 ||
            pkt->data_tag > 3)
            return TB_ERR_INVAL;
        ss = size_code(pkt->data_size, &err);
        h = (uint8_t)((pkt->data_tag << 5) | (ss << 2));
        break;
    case TB_PKT_OOO_PLACEHOLDER:
        if (pkt->data_tag < 1 || pkt->data_tag > 3)
            return TB_ERR_INVAL;
        h = (uint8_t)(0x50 | (pkt->has_data_addr ? 0x20 : 0) |
                      (pkt->data_tag << 2));
        break;
    case TB_PKT_VALUE_NOT_TRACED:
        h = (uint8_t)(0x6A | (pkt->has_data_addr ? 0x10 : 0));
        break;
    default:
        return TB_ERR_INVAL;
    }
    if (err < 0)
        return err;
    if ((pkt->kind == TB_PKT_DATA || pkt->kind == TB_PKT_OOO_DATA) &&
        pkt->data_size < 4 &&
        (pkt->data_value >> (8 * pkt->data_size)) != 0)
        return TB_ERR_INVAL;
    put(o, h);
    if (pkt->has_data_addr)
        put_daddr(w, o, pkt->data_addr, pkt->data_be, pkt->data_addr_bits);
    if (pkt->kind == TB_PKT_DATA || pkt->kind == TB_PKT_OOO_DATA)
        for (i = 0; i < pkt->data_size; i++)
            put(o, (uint8_t)(pkt->data_value >> (8 * i)));
    return TB_OK;
}

int tb_etmv3_writer_write(tb_etmv3_writer *w, const tb_packet *pkt,
                          uint8_t *out, size_t cap)
{
    obuf o;
    uint32_t new_addr;
    tb_isa new_isa;
    bool addr_update = false;
    tb_etmv3_writer save;
    int r = TB_OK;
    unsigned i;

    if (!w || !pkt || !out)
        return TB_ERR_INVAL;
    o.n = 0;
    save = *w;
    new_addr = w->last_addr;
    new_isa = w->last_isa;

    switch (pkt->kind) {
    case TB_PKT_ASYNC:
        for (i = 0; i < 5; i++)
            put(&o, 0x00);
        put(&o, 0x80);
        w->ts_full = true; /* protocol-notes 8: full TS after a sync */
        break;
    case TB_PKT_ISYNC:
        r = write_isync(w, pkt, &o, &new_addr, &new_isa);
        addr_update = true;
        break;
    case TB_PKT_ATOM: {
        uint8_t h = 0;
        r = phdr_byte(w, pkt, &h);
        put(&o, h);
        break;
    }
    case TB_PKT_BRANCH:
        r = put_addr_exc(w, &o, pkt, pkt->addr, pkt->isa, w->last_addr,
                         w->last_isa, &new_addr);
        new_isa = pkt->isa;
        addr_update = true;
        break;
    case TB_PKT_CYCLE_COUNT:
        put(&o, 0x04);
        put_cc(&o, pkt->cc);
        break;
    case TB_PKT_TIMESTAMP: {
        uint8_t tb[9];
        int n = tb_ts_encode(pkt->ts, w->ts, w->cfg.ts64, w->ts_full, tb);
        if (n < 0) {
            r = n;
            break;
        }
        put(&o, 0x42);
        for (i = 0; i < (unsigned)n; i++)
            put(&o, tb[i]);
        w->ts = pkt->ts;
        w->ts_full = false;
        break;
    }
    case TB_PKT_CONTEXT_ID:
        if (!w->cfg.ctxid_bytes ||
            (w->cfg.ctxid_bytes < 4 &&
             (pkt->context_id >> (8 * w->cfg.ctxid_bytes)) != 0)) {
            r = TB_ERR_INVAL;
            break;
        }
        put(&o, 0x6E);
        for (i = 0; i < w->cfg.ctxid_bytes; i++)
            put(&o, (uint8_t)(pkt->context_id >> (8 * i)));
        break;
    case TB_PKT_VMID:
        put(&o, 0x3C);
        put(&o, pkt->vmid);
        break;
    case TB_PKT_TRIGGER: put(&o, 0x0C); break;
    case TB_PKT_IGNORE: put(&o, 0x66); break;
    case TB_PKT_EXC_RETURN: put(&o, 0x76); break;
    case TB_PKT_EXC_ENTRY: put(&o, 0x7E); break;
    case TB_PKT_STORE_FAILED:
        if (!(w->cfg.data_trace & 1))
            r = TB_ERR_INVAL;
        put(&o, 0x50);
        break;
    case TB_PKT_DATA_SUPPRESSED:
        if (!w->cfg.data_trace)
            r = TB_ERR_INVAL;
        put(&o, 0x62);
        break;
    case TB_PKT_DATA:
    case TB_PKT_OOO_DATA:
    case TB_PKT_OOO_PLACEHOLDER:
    case TB_PKT_VALUE_NOT_TRACED:
        r = write_data(w, pkt, &o);
        break;
    default:
        r = TB_ERR_INVAL; /* PTM-only kinds and parser diagnostics */
        break;
    }
    if (r >= 0 && o.n > cap)
        r = TB_ERR_NOSPACE;
    if (r < 0) {
        *w = save;
        return r;
    }
    if (addr_update) {
        w->last_addr = new_addr;
        w->last_isa = new_isa;
    }
    memcpy(out, o.b, o.n);
    return (int)o.n;
}
