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

#include "tracebench/etm_port.h"
#include "tracebench/etmv2.h"
#include "tracebench/pkt_codec.h"
#include "backend.h"

/* Held statuses: a 4096-byte FIFO drains in 8192 cycles on a 4-bit port. */
#define QMAX 16384u
/* Groups not yet emitted: each holds at least one byte still in the FIFO
 * (complete ones go out at once, in order), so the encoder's 4096-byte
 * FIFO and a TFO packet fit. */
#define GMAX 4104u
/* Bytes one cycle's packets may take: a 16-register LSM traced with
 * address and value (17 normal data packets, U8) plus a context ID and a
 * branch address. */
#define GBYTES 104u

enum { Q_E, Q_N, Q_W, Q_TRIG, Q_GRP };

typedef struct qent {
    uint8_t kind;
    uint64_t index;
    uint32_t grp;            /* Q_GRP: group serial */
} qent;

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
    tb_etmv2_config cfg;
    bool have_cfg, cfg_given;
    int err;

    tb_etm_port_framer in;

    bool synced;
    qent q[QMAX];
    unsigned qh, qn;
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

    tb_packet atom;
    tb_packet_cb cb;
    void *ctx;
    int emitted;
    bool stop;
};

static int out(tb_etmv2_parser *p, const tb_packet *pkt)
{
    if (p->stop)
        return TB_ERR_STOPPED;
    p->emitted++;
    if (p->cb && p->cb(p->ctx, pkt)) {
        p->stop = true;
        return TB_ERR_STOPPED;
    }
    return 0;
}

static void pkt_init(tb_packet *k, tb_pkt_kind kind, uint64_t index)
{
    memset(k, 0, sizeof *k);
    k->kind = kind;
    k->protocol = TB_PROTO_ETMV2;
    k->index = index;
}

static int flush_atom(tb_etmv2_parser *p)
{
    int rc;

    if (!p->atom.seq_len)
        return 0;
    rc = out(p, &p->atom);
    pkt_init(&p->atom, TB_PKT_ATOM, 0);
    return rc;
}

static int add_atom(tb_etmv2_parser *p, char a, uint64_t index)
{
    if (!p->atom.seq_len)
        pkt_init(&p->atom, TB_PKT_ATOM, index);
    p->atom.seq[p->atom.seq_len++] = a;
    if (a == 'W')
        p->atom.w_count++;
    else
        p->atom.atom_count++;
    return p->atom.seq_len == sizeof p->atom.seq ? flush_atom(p) : 0;
}

static int emit_simple(tb_etmv2_parser *p, tb_pkt_kind kind, uint64_t index, int err)
{
    tb_packet k;
    int rc;

    if ((rc = flush_atom(p)) < 0)
        return rc;
    pkt_init(&k, kind, index);
    k.err = err;
    return out(p, &k);
}

/* After an error: nothing held is trusted; wait for the next TFO. */
static int fail(tb_etmv2_parser *p, tb_pkt_kind kind, uint64_t index, int err)
{
    int rc = emit_simple(p, kind, index, err);

    p->qh = p->qn = 0;
    p->gh = p->gn = p->rd = 0;
    p->synced = false;
    p->have_low = false;
    p->hi_wait = false;
    return rc;
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
    unsigned c = p->cfg.ctxid_bytes, i;
    uint32_t a = 0;

    pkt_init(&k, TB_PKT_ISYNC, g->index);
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
    return out(p, &k);
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
    bool dv = (p->cfg.data_trace & 1) != 0, da = (p->cfg.data_trace & 2) != 0;
    bool has_addr = false;
    unsigned need = 1, i, vb = 0;

    if (h & 1) { /* a branch address, no header (6.7.1) */
        *kind = TB_PKT_BRANCH;
        return (int)tb_addr_length(TB_ADDR_ORIGINAL, b, n);
    }
    if ((h & 0x7F) == 0x6E) { /* context ID bC1101110 */
        *kind = TB_PKT_CONTEXT_ID;
        if (!p->cfg.ctxid_bytes)
            return TB_ERR_UNSUPPORTED;
        need = 1u + p->cfg.ctxid_bytes;
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
    if (!p->cfg.data_trace)
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

    pkt_init(&k, kind, g->index);
    k.size = (uint8_t)(len < TB_PKT_MAX_BYTES ? len : TB_PKT_MAX_BYTES);
    memcpy(k.bytes, b, k.size);
    if (kind == TB_PKT_OOO_DATA)
        k.data_tag = (h >> 5) & 3; /* TT (U9) */
    else if (kind == TB_PKT_OOO_PLACEHOLDER)
        k.data_tag = (h >> 2) & 3; /* TT (U9) */
    if ((kind == TB_PKT_DATA || kind == TB_PKT_OOO_PLACEHOLDER) && (h & 0x20) &&
        (p->cfg.data_trace & 2)) {
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
    if ((kind == TB_PKT_DATA || kind == TB_PKT_OOO_DATA) && (p->cfg.data_trace & 1)) {
        k.data_size = (uint8_t)ss[(h >> 2) & 3];
        for (i = 0; i < k.data_size; i++) /* LSB first (U8) */
            k.data_value |= (uint32_t)b[pos + i] << (8 * i);
    }
    k.phdr_format = g->ps;
    return out(p, &k);
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
        return fail(p, TB_PKT_RESERVED, g->index, TB_ERR_BAD_PACKET);
    if (tb_addr_decode(TB_ADDR_ORIGINAL, b, n, p->last_addr, p->last_isa, &a, &isa,
                       &named, &bits, &x) < 0)
        return fail(p, TB_PKT_RESERVED, g->index, TB_ERR_BAD_PACKET);
    pkt_init(&k, TB_PKT_BRANCH, g->index);
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
    return out(p, &k);
}

/* A complete group: its packets in FIFO order (feed() checked them). */
static int emit_group(tb_etmv2_parser *p, const grp *g)
{
    unsigned at = 0;
    int rc;

    if ((rc = flush_atom(p)) < 0)
        return rc;
    if (g->tfo)
        return emit_tfo(p, g);
    while (at < g->n) {
        tb_pkt_kind kind;
        int len = pkt_length(p, g->b + at, g->n - at, &kind);

        if (len <= 0) /* feed() saw it complete */
            return fail(p, TB_PKT_BAD_SEQUENCE, g->index, TB_ERR_BAD_PACKET);
        if (kind == TB_PKT_BRANCH) {
            rc = emit_branch(p, g, g->b + at, (unsigned)len);
        } else if (kind == TB_PKT_CONTEXT_ID) {
            tb_packet k;
            int i;

            pkt_init(&k, TB_PKT_CONTEXT_ID, g->index);
            k.size = (uint8_t)len;
            memcpy(k.bytes, g->b + at, (size_t)len);
            k.has_ctxid = true;
            for (i = 1; i < len; i++)
                k.context_id |= (uint32_t)g->b[at + i] << (8 * (i - 1)); /* U7 */
            rc = out(p, &k);
        } else {
            rc = emit_data(p, g, g->b + at, (unsigned)len, kind);
        }
        if (rc < 0)
            return rc;
        at += (unsigned)len;
    }
    return 0;
}

/* Emits the held statuses up to the first group not yet read. */
static int drain(tb_etmv2_parser *p)
{
    int rc;

    while (p->qn) {
        qent *e = &p->q[p->qh];

        if (e->kind == Q_GRP) {
            grp *g = grp_of(p, e->grp);

            if (!g || !g->done)
                return 0;
            if ((rc = emit_group(p, g)) < 0)
                return rc;
            if (!p->qn) /* failed and forgot */
                return 0;
            p->gh = (p->gh + 1) % GMAX;
            p->gn--;
            p->rd--;
        } else if (e->kind == Q_TRIG) {
            if ((rc = emit_simple(p, TB_PKT_TRIGGER, e->index, 0)) < 0)
                return rc;
        } else if ((rc = add_atom(p, e->kind == Q_E ? 'E' : e->kind == Q_N ? 'N' : 'W',
                                  e->index)) < 0) {
            return rc;
        }
        p->qh = (p->qh + 1) % QMAX;
        p->qn--;
    }
    return 0;
}

static int enqueue(tb_etmv2_parser *p, uint8_t kind, uint64_t index, uint32_t g)
{
    qent *e;

    if (p->qn == QMAX) /* packets that never come */
        return fail(p, TB_PKT_BAD_SEQUENCE, p->q[p->qh].index, TB_ERR_LIMIT);
    e = &p->q[(p->qh + p->qn++) % QMAX];
    e->kind = kind;
    e->index = index;
    e->grp = g;
    return 0;
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
            return fail(p, TB_PKT_BAD_SEQUENCE, index, TB_ERR_BAD_PACKET);
        if (p->bytes < g->start) {
            if (!g->cold) /* bytes the groups before it did not take */
                return fail(p, TB_PKT_BAD_SEQUENCE, g->index, TB_ERR_BAD_PACKET);
            p->bytes++;
            return 0; /* 6.5.1: data placed before we were in sync */
        }
        if (p->bytes > g->start)
            return fail(p, TB_PKT_BAD_SEQUENCE, g->index, TB_ERR_BAD_PACKET);
    }
    p->bytes++;
    g->b[g->n++] = byte;
    if (g->tfo) {
        if (g->n == 1 && (byte & TB_ETMV2_TFO_HDR_MASK) != TB_ETMV2_TFO_HDR_NORMAL)
            /* U2/U3: the LSM-in-progress form and the rest are not read. */
            return fail(p, TB_PKT_RESERVED, g->index,
                        (byte & TB_ETMV2_TFO_HDR_MASK) == TB_ETMV2_TFO_HDR_LSM
                            ? TB_ERR_UNSUPPORTED : TB_ERR_BAD_PACKET);
        if (g->n == 5 + p->cfg.ctxid_bytes) {
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
            return fail(p, len == TB_ERR_UNSUPPORTED ? TB_PKT_BAD_TRACEMODE : TB_PKT_RESERVED,
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
        return fail(p, TB_PKT_BAD_SEQUENCE, g->index, TB_ERR_BAD_PACKET);
    return 0;
}

static int read_pkt(tb_etmv2_parser *p, uint16_t pkt, uint64_t index)
{
    unsigned w = p->cfg.port_width;
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
        p->qh = p->qn = 0;
        p->gh = p->gn = p->rd = 0;
        p->bytes = 0;
    }
    p->have_low = false; /* U6: a TFO is on a byte boundary */
    if (!(g = new_group(p, index, TB_ETMV2_TD, true)))
        return fail(p, TB_PKT_BAD_SEQUENCE, index, TB_ERR_LIMIT);
    g->cold = !p->synced;
    if ((rc = enqueue(p, Q_GRP, index, g->serial)) < 0)
        return rc;
    p->synced = true; /* the statuses from here on are read */
    if (p->cfg.port_width == 4) {
        p->tfo_lo = (uint8_t)((pkt >> 1) & 7); /* U4 */
        p->hi_wait = true;
    } else {
        g->start = p->bytes + (pkt >> 1); /* U5 */
        g->have_start = true;
    }
    return drain(p);
}

static int sample(tb_etmv2_parser *p, const tb_etmv1_sample *s, uint64_t index)
{
    uint8_t ps = s->pipestat, st;
    uint16_t pkt = s->tracepkt;
    bool data = true, tfo_ok = true, ca = p->cfg.cycle_accurate;
    unsigned w = p->cfg.port_width;
    int rc;

    if (p->stop)
        return TB_ERR_STOPPED;
    if (ps > 15 || s->tracesync || (w < 16 && (pkt >> w)))
        return fail(p, TB_PKT_RESERVED, index, TB_ERR_BAD_PACKET);
    if (ps == TB_ETMV2_TR) { /* 6.1.7: no FIFO data; the status on [3:0] */
        ps = pkt & 15;
        if (ps == TB_ETMV2_TR)
            return fail(p, TB_PKT_RESERVED, index, TB_ERR_BAD_PACKET);
        if (ps == TB_ETMV2_TD) {
            /* 6.1.7: TD here is a TFO the trigger delayed (an idle cycle
             * shows WT); where its value then goes is on no page read
             * (docs/etmv1-v2-sources.md 1.7), so its bytes cannot be
             * placed: out of sync until the next TFO. */
            if (!p->synced)
                return 0;
            if ((rc = fail(p, TB_PKT_RESERVED, index, TB_ERR_UNSUPPORTED)) < 0)
                return rc;
            return emit_simple(p, TB_PKT_TRIGGER, index, 0);
        }
        if (p->synced && (rc = enqueue(p, Q_TRIG, index, 0)) < 0)
            return rc;
        data = tfo_ok = false;
    } else if (p->hi_wait) {
        grp *g = p->gn ? &p->g[(p->gh + p->gn - 1) % GMAX] : NULL;

        /* U4: the TFO's second half, value[5:3] on TRACEPKT[3:1]. */
        p->hi_wait = false;
        if (ps == TB_ETMV2_TD || !(pkt & 1) || !g || !g->tfo)
            return fail(p, TB_PKT_BAD_SEQUENCE, index, TB_ERR_BAD_PACKET);
        g->start = p->bytes + (p->tfo_lo | ((pkt >> 1) & 7u) << 3);
        g->have_start = true;
        data = false;
    }
    if (ps == TB_ETMV2_TD) {
        if (tfo_ok && (pkt & 1))
            return tfo_cycle(p, pkt, index);
        if (ca && p->synced && (rc = enqueue(p, Q_W, index, 0)) < 0)
            return rc;
        return drain(p);
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
            return fail(p, TB_PKT_BAD_SEQUENCE, index, TB_ERR_BAD_PACKET);
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
            return fail(p, TB_PKT_BAD_SEQUENCE, index, TB_ERR_LIMIT);
        if ((rc = enqueue(p, Q_GRP, index, g->serial)) < 0)
            return rc;
        if (ca && st == TB_ETMV2_DW && (rc = enqueue(p, Q_W, index, 0)) < 0)
            return rc;
    }
    if (data && (rc = read_pkt(p, pkt, index)) < 0)
        return rc;
    return drain(p);
}

int tb_etmv2_parser_push_samples(tb_etmv2_parser *p, const tb_etmv2_sample *s,
                                 size_t n, uint64_t first, tb_packet_cb cb,
                                 void *ctx)
{
    size_t i;
    int rc;

    if (!p || (n && !s))
        return TB_ERR_INVAL;
    if (!p->have_cfg)
        return TB_ERR_CONFIG;
    p->cb = cb;
    p->ctx = ctx;
    p->emitted = 0;
    for (i = 0; i < n; i++)
        if ((rc = sample(p, &s[i], tb_etmv1_sample_index(first + i))) < 0)
            return rc;
    return p->emitted;
}

int tb_etmv2_parser_push(tb_etmv2_parser *p, const uint8_t *data, size_t len,
                         uint64_t index, tb_packet_cb cb, void *ctx)
{
    size_t i = 0;
    int rc, k;

    if (!p || (len && !data))
        return TB_ERR_INVAL;
    if (p->err)
        return p->err;
    p->cb = cb;
    p->ctx = ctx;
    p->emitted = 0;
    p->in.pos = index;
    while ((k = tb_etm_port_framer_next(&p->in, data, len, &i)) != TB_ETM_PORT_NEED) {
        tb_etmv1_sample s;

        if (k == TB_ETM_PORT_HEADER) {
            tb_etmv2_config c = p->cfg;

            if ((rc = tb_etmv2_capture_parse_header(p->in.hdr, &c)) < 0)
                return p->err = rc;
            if (p->cfg_given &&
                (c.port_width != p->cfg.port_width || c.minor != p->cfg.minor ||
                 c.cycle_accurate != p->cfg.cycle_accurate ||
                 c.ctxid_bytes != p->cfg.ctxid_bytes ||
                 c.data_trace != p->cfg.data_trace))
                return p->err = TB_ERR_MISMATCH;
            p->cfg = c;
            p->have_cfg = true;
            continue;
        }
        if (tb_etmv1_sample_unpack(p->in.part, &s) < 0)
            rc = fail(p, TB_PKT_RESERVED, p->in.part_index, TB_ERR_FORMAT);
        else
            rc = sample(p, &s, p->in.part_index);
        if (rc < 0)
            return rc;
    }
    return p->emitted;
}

int tb_etmv2_parser_finish(tb_etmv2_parser *p, tb_packet_cb cb, void *ctx)
{
    int rc = 0;

    if (!p)
        return TB_ERR_INVAL;
    p->cb = cb;
    p->ctx = ctx;
    p->emitted = 0;
    if (p->in.hdr_n && !p->in.hdr_done) {
        rc = emit_simple(p, TB_PKT_INCOMPLETE, 0, TB_ERR_TRUNCATED);
    } else {
        if (p->qn) /* the first status whose packets never came */
            rc = fail(p, TB_PKT_INCOMPLETE, p->q[p->qh].index, TB_ERR_TRUNCATED);
        if (rc >= 0 && p->in.part_n)
            rc = emit_simple(p, TB_PKT_INCOMPLETE, p->in.part_index, TB_ERR_TRUNCATED);
        if (rc >= 0)
            rc = flush_atom(p);
    }
    p->in.part_n = 0;
    return rc < 0 ? rc : p->emitted;
}

void tb_etmv2_parser_reset(tb_etmv2_parser *p)
{
    tb_etmv2_config c;
    bool given;

    if (!p)
        return;
    c = p->cfg;
    given = p->cfg_given;
    memset(p, 0, sizeof *p);
    p->cfg = c;
    p->cfg_given = given;
    p->have_cfg = given;
    p->last_isa = TB_ISA_ARM;
}

tb_etmv2_parser *tb_etmv2_parser_new(const tb_etmv2_config *cfg)
{
    tb_etmv2_parser *p;

    if (cfg && tb_etmv2_config_check(cfg) < 0)
        return NULL;
    if (!(p = calloc(1, sizeof *p)))
        return NULL;
    if (cfg) {
        p->cfg = *cfg;
        p->cfg_given = p->have_cfg = true;
    } else {
        tb_etmv2_config_init(&p->cfg);
    }
    p->last_isa = TB_ISA_ARM;
    return p;
}

void tb_etmv2_parser_free(tb_etmv2_parser *p)
{
    free(p);
}

const tb_etmv2_config *tb_etmv2_parser_config(const tb_etmv2_parser *p)
{
    return p && p->have_cfg ? &p->cfg : NULL;
}

/* ---- behind tb_parser (backend.h) ---- */

static void *op_make(const tb_config *cfg)
{
    tb_etmv2_config c;

    return tb_etmv2_config_from_tb(&c, cfg) < 0 ? NULL : tb_etmv2_parser_new(&c);
}

static void op_destroy(void *p) { tb_etmv2_parser_free(p); }
static void op_reset(void *p) { tb_etmv2_parser_reset(p); }

static int op_push(void *p, const uint8_t *data, size_t len, uint64_t index, tb_packet_cb cb,
                   void *ctx)
{
    return tb_etmv2_parser_push(p, data, len, index, cb, ctx);
}

static int op_finish(void *p, tb_packet_cb cb, void *ctx)
{
    return tb_etmv2_parser_finish(p, cb, ctx);
}

const tb_parser_ops tb_etmv2_parser_ops = {
    .protocol = TB_PROTO_ETMV2,
    .make = op_make,
    .destroy = op_destroy,
    .push = op_push,
    .finish = op_finish,
    .reset = op_reset,
};
