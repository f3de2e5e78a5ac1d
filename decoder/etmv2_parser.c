/*
 * ETMv2 port samples -> packets (IHI0014Q chapter 6; docs/etmv2.md 3).
 *
 * PIPESTAT gives one status a cycle; a D status (6.1.3) placed a group of
 * packets in the FIFO that cycle, the last of them a branch address when
 * there is one (6.4.1: headers carry C = more packets this cycle; a
 * branch address has bit 0 = 1 and no header).  TRACEPKT sends the FIFO
 * in order, a nibble (low first), byte or two bytes a cycle, whenever it
 * holds data and the cycle is not TD or TR (6.1.6, 6.1.7).  So the bytes
 * fill the groups in the order of their statuses.  Synchronisation is
 * the TFO (6.5.1, fact sheet 11): a TD cycle with TRACEPKT[0] = 1 whose
 * value says how many FIFO bytes precede its packet; nothing comes out
 * before the first TFO or after an error until the next one.  Statuses
 * wait in a bounded queue until their packets are read, so packets come
 * out in instruction order.  The unverified codes are etmv2.h's.
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/etmv2.h"
#include "tracebench/pkt_codec.h"
#include "port_internal.h"

/* Groups not yet emitted: each holds at least one byte still in the FIFO
 * (complete ones go out at once, in order), so the encoder's 4096-byte
 * FIFO and a TFO packet fit. */
#define GMAX 4104u
/* Bytes one cycle's packets may take: a 16-register LSM traced with
 * address and value (17 normal data packets, U8) plus a context ID and a
 * branch address. */
#define GBYTES 104u

/* Held entries (the shell's ring, port_internal.h); ETMv2's own: a D
 * status's or TFO's packet group (ref: its serial). */
enum { Q_E = TB_PORT_Q_E, Q_N = TB_PORT_Q_N, Q_W = TB_PORT_Q_W, Q_TRIG = TB_PORT_Q_TRIG,
       Q_GRP = TB_PORT_Q_OWN };

typedef struct grp {
    uint32_t serial;
    uint64_t index;
    uint8_t ps;              /* the D status, or TD for a TFO */
    bool tfo, cold;          /* TFO; found while not in sync */
    bool have_start;         /* tfo: start known (4-bit: after 2nd half) */
    uint64_t start;          /* tfo: byte count at which its header comes */
    uint8_t b[GBYTES];
    uint8_t n;
    uint8_t pkt_at;          /* D: where the current packet starts */
    bool done;
} grp;

struct tb_etmv2_parser {
    tb_port_parser port;     /* first: the shell (port_internal.h) */

    bool synced;
    grp g[GMAX];
    unsigned gh, gn;         /* groups held (oldest gh) */
    unsigned rd;             /* groups completely read, counted from gh */
    uint32_t serial;
    uint64_t bytes;          /* FIFO bytes read since the first TFO */
    bool have_low;
    uint8_t low;
    bool hi_wait;            /* 4-bit: the TFO's second half is next */
    uint8_t tfo_lo;

    uint32_t last_addr;
    tb_isa last_isa;
    uint32_t data_addr;      /* last data address (6.4.2: compressed against it) */
};

/* After an error (the shell's forget hook): nothing held is trusted;
 * wait for the next TFO. */
static void forget(tb_port_parser *c)
{
    tb_etmv2_parser *p = (tb_etmv2_parser *)c;

    p->gh = p->gn = p->rd = 0;
    p->synced = false;
    p->have_low = false;
    p->hi_wait = false;
}

static grp *grp_of(tb_etmv2_parser *p, uint32_t serial)
{
    unsigned i;

    for (i = 0; i < p->gn; i++)
        if (p->g[(p->gh + i) % GMAX].serial == serial)
            return &p->g[(p->gh + i) % GMAX];
    return NULL;
}

static int emit_tfo(tb_etmv2_parser *p, const grp *g)
{
    tb_packet k;
    unsigned c = p->port.cfg.ctxid_bytes, i;
    uint32_t a = 0;

    tb_port_pkt_init(&p->port, &k, TB_PKT_ISYNC, g->index);
    k.size = g->n;
    memcpy(k.bytes, g->b, g->n);
    for (i = 0; i < 4; i++)
        a |= (uint32_t)g->b[1 + c + i] << (8 * i); /* U7 */
    for (i = 0; i < c; i++)
        k.context_id |= (uint32_t)g->b[1 + i] << (8 * i); /* U7 */
    k.has_ctxid = c != 0;
    k.reason = g->b[0] & 3;
    k.isa = (a & 1) ? TB_ISA_THUMB : TB_ISA_ARM; /* 6.5.4 */
    k.addr = (a & 1) ? a & ~1u : a & ~3u;
    k.addr_bits = 32;
    k.addr_known = true;
    p->last_addr = k.addr;
    p->last_isa = k.isa;
    return tb_port_out(&p->port, &k);
}

/* A packet in a D group (6.4.1 Table 6.2): its kind from the header
 * byte, and its length from the bytes so far: the length when complete,
 * 0 when more are needed, TB_ERR_BAD_PACKET for a reserved header,
 * TB_ERR_UNSUPPORTED for a valid one the configuration forbids.  A data
 * address is 1-5 bytes with bit 7 = another follows (6.4.2), the low
 * bits first (derived, docs/etmv1-v2-sources.md 1.7; byte 5's bits
 * [6:4] U8); the value is SS bytes (U8) with value trace on. */
static int pkt_length(const tb_etmv2_parser *p, const uint8_t *b, unsigned n,
                      tb_pkt_kind *kind)
{
    static const unsigned ss[4] = {0, 1, 2, 4}; /* U8 */
    uint8_t h = b[0];
    bool dv = (p->port.cfg.data_trace & 1) != 0, da = (p->port.cfg.data_trace & 2) != 0;
    bool has_addr = false;
    unsigned need = 1, i, vb = 0;

    if (h & 1) { /* a branch address, no header (6.7.1) */
        *kind = TB_PKT_BRANCH;
        return (int)tb_addr_length(TB_ADDR_ORIGINAL, b, n);
    }
    if ((h & 0x7F) == 0x6E) { /* context ID bC1101110 */
        *kind = TB_PKT_CONTEXT_ID;
        if (!p->port.cfg.ctxid_bytes)
            return TB_ERR_UNSUPPORTED;
        need = 1u + p->port.cfg.ctxid_bytes;
        return n >= need ? (int)need : 0;
    }
    if ((h & 0x53) == 0x02) { /* normal data bC0A0SS10 */
        *kind = TB_PKT_DATA;
        has_addr = (h & 0x20) != 0;
        vb = ss[(h >> 2) & 3];
    } else if ((h & 0x7F) == 0x6A) { /* value not traced bC1101010 (6.4.4) */
        *kind = TB_PKT_VALUE_NOT_TRACED;
    } else if ((h & 0x53) == 0x50) { /* load miss occurred bC1A1TT00 */
        *kind = TB_PKT_OOO_PLACEHOLDER;
        has_addr = (h & 0x20) != 0;
    } else if ((h & 0x13) == 0x00) { /* load miss data bCTT0SS00 */
        *kind = TB_PKT_OOO_DATA;
        vb = ss[(h >> 2) & 3];
    } else {
        *kind = TB_PKT_RESERVED;
        return TB_ERR_BAD_PACKET;
    }
    if (!p->port.cfg.data_trace)
        return TB_ERR_UNSUPPORTED; /* a data packet without data trace */
    if (!dv && vb) /* U8: no value bytes without value trace */
        return TB_ERR_BAD_PACKET;
    if (has_addr && da) {
        for (i = 0; i < 5; i++) {
            if (n < need + 1)
                return 0;
            need++;
            if (!(b[need - 1] & 0x80))
                break;
        }
        if (need == 6 && (b[5] & 0xF0)) /* byte 5: A[31:28] only (U8) */
            return TB_ERR_BAD_PACKET;
    }
    if (dv)
        need += vb;
    return n >= need ? (int)need : 0;
}

static int emit_data(tb_etmv2_parser *p, const grp *g, const uint8_t *b, unsigned len,
                     tb_pkt_kind kind)
{
    static const unsigned ss[4] = {0, 1, 2, 4}; /* U8 */
    tb_packet k;
    uint8_t h = b[0];
    unsigned pos = 1, i;

    tb_port_pkt_init(&p->port, &k, kind, g->index);
    k.size = (uint8_t)(len < TB_PKT_MAX_BYTES ? len : TB_PKT_MAX_BYTES);
    memcpy(k.bytes, b, k.size);
    if (kind == TB_PKT_OOO_DATA)
        k.data_tag = (h >> 5) & 3; /* TT (U9) */
    else if (kind == TB_PKT_OOO_PLACEHOLDER)
        k.data_tag = (h >> 2) & 3; /* TT (U9) */
    if ((kind == TB_PKT_DATA || kind == TB_PKT_OOO_PLACEHOLDER) && (h & 0x20) &&
        (p->port.cfg.data_trace & 2)) {
        uint32_t v = 0, mask;
        unsigned n = 0, bits;

        while (n < 5) {
            v |= (uint32_t)(b[1 + n] & (n == 4 ? 0x0F : 0x7F)) << (7 * n);
            if (!(b[1 + n++] & 0x80))
                break;
        }
        bits = n == 5 ? 32 : 7 * n;
        mask = bits >= 32 ? 0xFFFFFFFFu : ((1u << bits) - 1u);
        p->data_addr = (p->data_addr & ~mask) | (v & mask);
        k.has_data_addr = true;
        k.data_addr = p->data_addr;
        k.data_addr_bits = (uint8_t)bits;
        pos += n;
    }
    if ((kind == TB_PKT_DATA || kind == TB_PKT_OOO_DATA) && (p->port.cfg.data_trace & 1)) {
        k.data_size = (uint8_t)ss[(h >> 2) & 3];
        for (i = 0; i < k.data_size; i++) /* LSB first (U8) */
            k.data_value |= (uint32_t)b[pos + i] << (8 * i);
    }
    k.phdr_format = g->ps;
    return tb_port_out(&p->port, &k);
}

static int emit_branch(tb_etmv2_parser *p, const grp *g, const uint8_t *b, unsigned n)
{
    tb_packet k;
    unsigned bits = 0;
    uint32_t a = 0;
    tb_isa isa = p->last_isa;
    bool named = false, x = false;

    /* 6.7.1 Table 6.9: byte 5 is ARM 0E001xxx or Thumb 0001xxxx. */
    if (n == 5 && (b[4] & 0xB8) != 0x08 && (b[4] & 0xF0) != 0x10)
        return tb_port_fail(&p->port, TB_PKT_RESERVED, g->index, TB_ERR_BAD_PACKET);
    if (tb_addr_decode(TB_ADDR_ORIGINAL, b, n, p->last_addr, p->last_isa, &a, &isa,
                       &named, &bits, &x) < 0)
        return tb_port_fail(&p->port, TB_PKT_RESERVED, g->index, TB_ERR_BAD_PACKET);
    tb_port_pkt_init(&p->port, &k, TB_PKT_BRANCH, g->index);
    k.size = (uint8_t)n;
    memcpy(k.bytes, b, n);
    k.addr = a;
    k.isa = isa;
    k.isa_changed = named;
    k.addr_bits = (uint8_t)bits;
    k.addr_known = true;
    k.exc_cancel = x;
    k.phdr_format = g->ps;
    p->last_addr = a;
    p->last_isa = isa;
    return tb_port_out(&p->port, &k);
}

/* A complete group: its packets in FIFO order (feed() checked them). */
static int emit_group(tb_etmv2_parser *p, const grp *g)
{
    unsigned at = 0;
    int rc;

    if ((rc = tb_port_flush_atom(&p->port)) < 0)
        return rc;
    if (g->tfo)
        return emit_tfo(p, g);
    while (at < g->n) {
        tb_pkt_kind kind;
        int len = pkt_length(p, g->b + at, g->n - at, &kind);

        if (len <= 0) /* feed() saw it complete */
            return tb_port_fail(&p->port, TB_PKT_BAD_SEQUENCE, g->index, TB_ERR_BAD_PACKET);
        if (kind == TB_PKT_BRANCH) {
            rc = emit_branch(p, g, g->b + at, (unsigned)len);
        } else if (kind == TB_PKT_CONTEXT_ID) {
            tb_packet k;
            int i;

            tb_port_pkt_init(&p->port, &k, TB_PKT_CONTEXT_ID, g->index);
            k.size = (uint8_t)len;
            memcpy(k.bytes, g->b + at, (size_t)len);
            k.has_ctxid = true;
            for (i = 1; i < len; i++)
                k.context_id |= (uint32_t)g->b[at + i] << (8 * (i - 1)); /* U7 */
            rc = tb_port_out(&p->port, &k);
        } else {
            rc = emit_data(p, g, g->b + at, (unsigned)len, kind);
        }
        if (rc < 0)
            return rc;
        at += (unsigned)len;
    }
    return 0;
}

/* The oldest held group (the shell's own hook): its packets once it has
 * been read (it waits until then). */
static int own(tb_port_parser *c, const tb_port_qent *e)
{
    tb_etmv2_parser *p = (tb_etmv2_parser *)c;
    grp *g = grp_of(p, e->ref);
    int rc;

    if (!g || !g->done)
        return 0;
    if ((rc = emit_group(p, g)) < 0)
        return rc;
    if (!c->qn) /* failed and forgot */
        return 0;
    p->gh = (p->gh + 1) % GMAX;
    p->gn--;
    p->rd--;
    return 1;
}

static int enqueue(tb_etmv2_parser *p, uint8_t kind, uint64_t index, uint32_t ref)
{
    return tb_port_enqueue(&p->port, kind, index, ref);
}

static grp *new_group(tb_etmv2_parser *p, uint64_t index, uint8_t ps, bool tfo)
{
    grp *g;

    if (p->gn == GMAX)
        return NULL;
    g = &p->g[(p->gh + p->gn++) % GMAX];
    memset(g, 0, sizeof *g);
    g->serial = ++p->serial;
    g->index = index;
    g->ps = ps;
    g->tfo = tfo;
    return g;
}

/* One FIFO byte for the oldest group not yet read.  0, or an error. */
static int feed(tb_etmv2_parser *p, uint8_t byte, uint64_t index)
{
    grp *g;

    if (p->rd == p->gn) /* the FIFO is empty: nothing was sent */
        return 0;
    g = &p->g[(p->gh + p->rd) % GMAX];
    if (g->tfo && g->n == 0) { /* where its header must come (U6) */
        if (!g->have_start)
            return tb_port_fail(&p->port, TB_PKT_BAD_SEQUENCE, index, TB_ERR_BAD_PACKET);
        if (p->bytes < g->start) {
            if (!g->cold) /* bytes the groups before it did not take */
                return tb_port_fail(&p->port, TB_PKT_BAD_SEQUENCE, g->index, TB_ERR_BAD_PACKET);
            p->bytes++;
            return 0; /* 6.5.1: data placed before we were in sync */
        }
        if (p->bytes > g->start)
            return tb_port_fail(&p->port, TB_PKT_BAD_SEQUENCE, g->index, TB_ERR_BAD_PACKET);
    }
    p->bytes++;
    g->b[g->n++] = byte;
    if (g->tfo) {
        if (g->n == 1 && (byte & TB_ETMV2_TFO_HDR_MASK) != TB_ETMV2_TFO_HDR_NORMAL)
            /* U2/U3: the LSM-in-progress form and the rest are not read. */
            return tb_port_fail(&p->port, TB_PKT_RESERVED, g->index,
                        (byte & TB_ETMV2_TFO_HDR_MASK) == TB_ETMV2_TFO_HDR_LSM
                            ? TB_ERR_UNSUPPORTED : TB_ERR_BAD_PACKET);
        if (g->n == 5 + p->port.cfg.ctxid_bytes) {
            g->done = true;
            p->rd++;
            p->synced = true;
        }
        return 0;
    }
    /* A D group: packets until one ends without C, or a branch address,
     * which is always last (6.4.1). */
    {
        tb_pkt_kind kind;
        int len = pkt_length(p, g->b + g->pkt_at, (unsigned)(g->n - g->pkt_at), &kind);

        if (len < 0)
            return tb_port_fail(&p->port, len == TB_ERR_UNSUPPORTED ? TB_PKT_BAD_TRACEMODE : TB_PKT_RESERVED,
                        g->index, TB_ERR_BAD_PACKET);
        if (len > 0) {
            if (kind != TB_PKT_BRANCH && (g->b[g->pkt_at] & 0x80)) {
                g->pkt_at = g->n; /* C: another packet this cycle */
            } else {
                g->done = true;
                p->rd++;
            }
        }
    }
    if (!g->done && g->n == GBYTES)
        return tb_port_fail(&p->port, TB_PKT_BAD_SEQUENCE, g->index, TB_ERR_BAD_PACKET);
    return 0;
}

static int read_pkt(tb_etmv2_parser *p, uint16_t pkt, uint64_t index)
{
    unsigned w = p->port.cfg.port_width;
    int rc;

    if (p->rd == p->gn) {
        p->have_low = false;
        return 0; /* the FIFO is empty: TRACEPKT carries nothing */
    }
    if (w == 4) {
        if (!p->have_low) {
            p->low = pkt & 0xF;
            p->have_low = true;
            return 0;
        }
        p->have_low = false;
        return feed(p, (uint8_t)(p->low | (pkt & 0xF) << 4), index);
    }
    if ((rc = feed(p, (uint8_t)pkt, index)) < 0)
        return rc;
    /* 16-bit: a second byte when the FIFO still held one (6.3). */
    if (w == 16 && p->synced && p->rd < p->gn)
        return feed(p, (uint8_t)(pkt >> 8), index);
    return 0;
}

/* A TFO cycle (6.1.6: TD with TRACEPKT[0] = 1). */
static int tfo_cycle(tb_etmv2_parser *p, uint16_t pkt, uint64_t index)
{
    grp *g;
    int rc;

    if (!p->synced) { /* cold start (fact sheet 11): from here on */
        p->port.qh = p->port.qn = 0;
        p->gh = p->gn = p->rd = 0;
        p->bytes = 0;
    }
    p->have_low = false; /* U6: a TFO is on a byte boundary */
    if (!(g = new_group(p, index, TB_ETMV2_TD, true)))
        return tb_port_fail(&p->port, TB_PKT_BAD_SEQUENCE, index, TB_ERR_LIMIT);
    g->cold = !p->synced;
    if ((rc = enqueue(p, Q_GRP, index, g->serial)) < 0)
        return rc;
    p->synced = true; /* the statuses from here on are read */
    if (p->port.cfg.port_width == 4) {
        p->tfo_lo = (uint8_t)((pkt >> 1) & 7); /* U4 */
        p->hi_wait = true;
    } else {
        g->start = p->bytes + (pkt >> 1); /* U5 */
        g->have_start = true;
    }
    return tb_port_drain(&p->port, own);
}

/* One sample (the shell's sample hook). */
static int sample(tb_port_parser *c, const tb_etmv1_sample *s, uint64_t index)
{
    tb_etmv2_parser *p = (tb_etmv2_parser *)c;
    uint8_t ps = s->pipestat, st;
    uint16_t pkt = s->tracepkt;
    bool data = true, tfo_ok = true, ca = p->port.cfg.cycle_accurate;
    unsigned w = p->port.cfg.port_width;
    int rc;

    if (p->port.stop)
        return TB_ERR_STOPPED;
    if (ps > 15 || s->tracesync || (w < 16 && (pkt >> w)))
        return tb_port_fail(&p->port, TB_PKT_RESERVED, index, TB_ERR_BAD_PACKET);
    if (ps == TB_ETMV2_TR) { /* 6.1.7: no FIFO data; the status on [3:0] */
        ps = pkt & 15;
        if (ps == TB_ETMV2_TR)
            return tb_port_fail(&p->port, TB_PKT_RESERVED, index, TB_ERR_BAD_PACKET);
        if (ps == TB_ETMV2_TD) {
            /* 6.1.7: TD here is a TFO the trigger delayed (an idle cycle
             * shows WT); where its value then goes is on no page read
             * (docs/etmv1-v2-sources.md 1.7), so its bytes cannot be
             * placed: out of sync until the next TFO. */
            if (!p->synced)
                return 0;
            if ((rc = tb_port_fail(&p->port, TB_PKT_RESERVED, index, TB_ERR_UNSUPPORTED)) < 0)
                return rc;
            return tb_port_emit_simple(&p->port, TB_PKT_TRIGGER, index, 0);
        }
        if (p->synced && (rc = enqueue(p, Q_TRIG, index, 0)) < 0)
            return rc;
        data = tfo_ok = false;
    } else if (p->hi_wait) {
        grp *g = p->gn ? &p->g[(p->gh + p->gn - 1) % GMAX] : NULL;

        /* U4: the TFO's second half, value[5:3] on TRACEPKT[3:1]. */
        p->hi_wait = false;
        if (ps == TB_ETMV2_TD || !(pkt & 1) || !g || !g->tfo)
            return tb_port_fail(&p->port, TB_PKT_BAD_SEQUENCE, index, TB_ERR_BAD_PACKET);
        g->start = p->bytes + (p->tfo_lo | ((pkt >> 1) & 7u) << 3);
        g->have_start = true;
        data = false;
    }
    if (ps == TB_ETMV2_TD) {
        if (tfo_ok && (pkt & 1))
            return tfo_cycle(p, pkt, index);
        if (ca && p->synced && (rc = enqueue(p, Q_W, index, 0)) < 0)
            return rc;
        return tb_port_drain(&p->port, own);
    }
    if (!p->synced)
        return 0;
    st = ps;
    if (ps >= TB_ETMV2_PT) { /* 6.1.2: the phantom branch first */
        if ((rc = enqueue(p, ps >= TB_ETMV2_PN ? Q_N : Q_E, index, 0)) < 0)
            return rc;
        st = ps & 3;
    }
    switch (st) {
    case TB_ETMV2_IE:
    case TB_ETMV2_DE:
        rc = enqueue(p, Q_E, index, 0);
        break;
    case TB_ETMV2_IN:
    case TB_ETMV2_DN:
        rc = enqueue(p, Q_N, index, 0);
        break;
    default: /* WT, DW */
        /* 6.1.6: a WT means the FIFO holds data (else it is TD) */
        if (st == TB_ETMV2_WT && data && p->rd == p->gn)
            return tb_port_fail(&p->port, TB_PKT_BAD_SEQUENCE, index, TB_ERR_BAD_PACKET);
        /* A DW's 'W' follows its packets: an exception's DW cycle is
         * then its own (docs/etmv2.md 5). */
        rc = ca && st == TB_ETMV2_WT ? enqueue(p, Q_W, index, 0) : 0;
        break;
    }
    if (rc < 0)
        return rc;
    if (st & 1) { /* D: packets placed this cycle (6.1.3) */
        grp *g = new_group(p, index, ps, false);

        if (!g)
            return tb_port_fail(&p->port, TB_PKT_BAD_SEQUENCE, index, TB_ERR_LIMIT);
        if ((rc = enqueue(p, Q_GRP, index, g->serial)) < 0)
            return rc;
        if (ca && st == TB_ETMV2_DW && (rc = enqueue(p, Q_W, index, 0)) < 0)
            return rc;
    }
    if (data && (rc = read_pkt(p, pkt, index)) < 0)
        return rc;
    return tb_port_drain(&p->port, own);
}

/* Addresses are compressed against an ARM one until the first TFO. */
static void reset(tb_port_parser *c)
{
    ((tb_etmv2_parser *)c)->last_isa = TB_ISA_ARM;
}

/* The hook table, tb_etmv2_parser_new/_free/_reset/_config/_push/
 * _push_samples/_finish and tb_etmv2_parser_ops: the shell's
 * (port_internal.h). */
TB_PORT_PARSER_API(etmv2, ETMV2, sample, forget, NULL, reset);
