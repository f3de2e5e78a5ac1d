/*
 * ETMv1 port samples -> packets (IHI0014Q chapter 5; docs/etmv1.md 3).
 *
 * The PIPESTAT stream gives the statuses; the TRACEPKT stream, read in
 * the cycles that carry FIFO data (not TD, not TR, 5.3/5.4), gives the
 * packets, a byte a cycle (8-bit), two (16-bit, low byte first) or a
 * nibble (4-bit, low nibble first) (5.2).  Each TRACESYNC starts a
 * branch address (5.5.4); a BE/BD takes the (APO+1)-th TRACESYNC at or
 * after its own cycle, APO from the next two cycles' PIPESTAT[1:0]
 * (5.6.1).  Statuses after an unresolved branch wait in a bounded queue,
 * so packets come out in instruction order: ATOM runs, BRANCH, TRIGGER.
 * CA mode (5.10) adds the other counted cycles to the ATOM runs: 'W' for
 * a WT, 'T' for an APO cycle or a TD with TraceEnable, which are
 * certainly the last status's (a WT may be the FIFO draining with trace
 * off, 5.8).
 *
 * Data trace (ETMCR[3:2]): how many data packets an ID/BD has depends on
 * its instruction, which only the decoder knows.  So the parser hands on
 * what it cannot tell apart, in cycle order: a DATA marker for each ID,
 * and for each cycle that carries FIFO data the TRACEPKT units (nibbles
 * on a 4-bit port, else bytes) that are no branch address.  An idle
 * cycle's units are among them; the decoder skips them (docs/etmv1.md 9).
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/etm_port.h"

#include "tracebench/etmv1.h"
#include "backend.h"

#define QMAX 16384u /* held statuses and data units (ring size) */
/* Held at most: ~ the FIFO's drain time in cycles; with data trace each
 * cycle may add its data units too. */
#define QLIMIT(p) ((p)->cfg.data_trace ? QMAX : 8192u)
#define PMAX 64u   /* branches waiting for their address */
#define RMAX 32u   /* address reads kept for them */

enum { Q_E, Q_N, Q_W, Q_T, Q_TRIG, Q_BR, Q_ID, Q_UNITS };

typedef struct qent {
    uint8_t kind;
    uint8_t nb, b[2];       /* Q_UNITS: the cycle's data units */
    uint32_t br;            /* Q_BR: branch serial; Q_UNITS: TRACESYNC
                             * events up to this cycle */
    uint64_t index;
} qent;

typedef struct pbr {
    uint32_t serial;
    uint64_t index;
    uint8_t ps;             /* BE or BD */
    uint64_t sync_base;     /* TRACESYNC events before its cycle */
    uint8_t apo, apo_seen;  /* APO bits and APO cycles seen (0..2) */
    bool abandoned;
} pbr;

typedef struct aread {
    uint64_t ev;            /* TRACESYNC event number */
    uint8_t b[9];
    uint8_t n, need;        /* bytes read; total once known (0: not yet) */
    bool done, bad;
} aread;

struct tb_etmv1_parser {
    tb_etmv1_config cfg;
    bool have_cfg;          /* given, or read from the header */
    bool cfg_given;
    int err;                /* sticky format error */

    /* byte input */
    tb_etm_port_framer in;

    /* held statuses (ring) */
    qent q[QMAX];
    unsigned qh, qn;
    pbr pb[PMAX];
    unsigned ph, pn;
    uint32_t serial;
    aread rd[RMAX];
    uint64_t n_sync;        /* TRACESYNC events so far */
    bool reading;           /* rd[(n_sync-1) % RMAX] is being read */
    bool have_low;
    uint8_t low;

    uint32_t last_raw;
    bool addr_known;

    /* Data trace: the data units of the cycle being read. */
    qent units;

    tb_packet atom;         /* ATOM being filled */

    /* output */
    tb_packet_cb cb;
    void *ctx;
    int emitted;
    bool stop;
};

static int out(tb_etmv1_parser *p, const tb_packet *pkt)
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
    k->protocol = TB_PROTO_ETMV1;
    k->index = index;
}

static int flush_atom(tb_etmv1_parser *p)
{
    int rc;

    if (!p->atom.seq_len)
        return 0;
    rc = out(p, &p->atom);
    pkt_init(&p->atom, TB_PKT_ATOM, 0);
    return rc;
}

static int add_atom(tb_etmv1_parser *p, char a, uint64_t index)
{
    if (!p->atom.seq_len) {
        pkt_init(&p->atom, TB_PKT_ATOM, index);
    }
    p->atom.seq[p->atom.seq_len++] = a;
    if (a == 'W' || a == 'T')
        p->atom.w_count++;
    else
        p->atom.atom_count++;
    return p->atom.seq_len == sizeof p->atom.seq ? flush_atom(p) : 0;
}

static int emit_simple(tb_etmv1_parser *p, tb_pkt_kind kind, uint64_t index, int err)
{
    tb_packet k;
    int rc;

    if ((rc = flush_atom(p)) < 0)
        return rc;
    pkt_init(&k, kind, index);
    k.err = err;
    return out(p, &k);
}

/* Drops everything held (after an error): the branch addresses are no
 * longer known. */
static void forget(tb_etmv1_parser *p)
{
    p->qh = p->qn = 0;
    p->ph = p->pn = 0;
    p->reading = false;
    p->have_low = false;
    p->addr_known = false;
    p->units.nb = 0;
}

static int fail(tb_etmv1_parser *p, tb_pkt_kind kind, uint64_t index, int err)
{
    int rc = emit_simple(p, kind, index, err);

    forget(p);
    return rc;
}

static pbr *branch_of(tb_etmv1_parser *p, uint32_t serial)
{
    unsigned i;

    for (i = 0; i < p->pn; i++) {
        pbr *b = &p->pb[(p->ph + i) % PMAX];

        if (b->serial == serial)
            return b;
    }
    return NULL;
}

/* A DATA packet: the marker of an ID (phdr_format ID, no bytes) or a
 * cycle's data units (phdr_format 0, bytes[0..size)). */
static int emit_data(tb_etmv1_parser *p, const qent *e)
{
    tb_packet k;
    int rc;

    if ((rc = flush_atom(p)) < 0)
        return rc;
    pkt_init(&k, TB_PKT_DATA, e->index);
    if (e->kind == Q_ID) {
        k.phdr_format = TB_ETMV1_ID;
    } else {
        k.size = e->nb;
        memcpy(k.bytes, e->b, e->nb);
        k.sync_ev = e->br;
    }
    return out(p, &k);
}

static int emit_branch(tb_etmv1_parser *p, const pbr *b, const aread *r)
{
    tb_packet k;
    uint32_t raw;
    uint8_t reason;
    bool j;
    unsigned na = tb_etmv1_addr_length(r->b, r->n), i;
    int rc;

    if ((rc = flush_atom(p)) < 0)
        return rc;
    tb_etmv1_addr_decode(r->b, na, p->last_raw, &raw, &reason, &j);
    if (reason > TB_ETMV1_R_PERIODIC) /* reserved (U12) */
        return fail(p, TB_PKT_BAD_SEQUENCE, b->index, TB_ERR_BAD_PACKET);
    pkt_init(&k, TB_PKT_BRANCH, b->index);
    k.size = r->n;
    memcpy(k.bytes, r->b, r->n);
    p->last_raw = raw;
    if (na == 5)
        p->addr_known = true;
    k.addr_known = p->addr_known;
    k.addr_bits = (uint8_t)(na == 5 ? 32 : 7 * na);
    k.isa = j ? TB_ISA_JAZELLE : (raw & 1) ? TB_ISA_THUMB : TB_ISA_ARM;
    k.addr = raw & ((raw & 1) ? ~1u : ~3u);
    k.reason = reason;
    k.phdr_format = b->ps;
    k.sync_ev = (uint32_t)r->ev;
    if (r->n > na) {
        k.has_ctxid = true;
        for (i = na; i < r->n; i++)
            k.context_id |= (uint32_t)r->b[i] << (8 * (i - na)); /* U7 */
    }
    return out(p, &k);
}

/* Resolves branches whose address has come, then emits the held
 * statuses up to the first unresolved branch. */
static int drain(tb_etmv1_parser *p)
{
    int rc;

    while (p->qn) {
        qent *e = &p->q[p->qh];

        if (e->kind == Q_BR) {
            pbr *b = branch_of(p, e->br);
            aread *r;

            if (b && !b->abandoned) {
                uint64_t ev;

                if (b->apo_seen < 2)
                    return 0;
                if (b->apo == 15) /* "too large" (5.6.1) */
                    return fail(p, TB_PKT_BAD_SEQUENCE, b->index, TB_ERR_BAD_PACKET);
                ev = b->sync_base + b->apo;
                if (ev >= p->n_sync)
                    return 0;
                r = &p->rd[ev % RMAX];
                if (r->ev != ev || r->bad)
                    return fail(p, TB_PKT_BAD_SEQUENCE, b->index, TB_ERR_BAD_PACKET);
                if (!r->done)
                    return 0;
                if ((rc = emit_branch(p, b, r)) < 0)
                    return rc;
                if (!p->qn) /* emit_branch failed and forgot */
                    return 0;
            }
            /* b is the oldest pending branch */
            if (p->pn) {
                p->ph = (p->ph + 1) % PMAX;
                p->pn--;
            }
        } else if (e->kind == Q_TRIG) {
            if ((rc = emit_simple(p, TB_PKT_TRIGGER, e->index, 0)) < 0)
                return rc;
        } else if (e->kind == Q_ID) { /* 'E', then its marker */
            if ((rc = add_atom(p, 'E', e->index)) < 0 || (rc = emit_data(p, e)) < 0)
                return rc;
        } else if (e->kind == Q_UNITS) {
            if ((rc = emit_data(p, e)) < 0)
                return rc;
        } else if ((rc = add_atom(p, e->kind == Q_E ? 'E' : e->kind == Q_N ? 'N'
                                     : e->kind == Q_W ? 'W' : 'T', e->index)) < 0) {
            return rc;
        }
        p->qh = (p->qh + 1) % QMAX;
        p->qn--;
    }
    return 0;
}

static int enqueue(tb_etmv1_parser *p, uint8_t kind, uint64_t index, uint32_t br)
{
    qent *e;

    if (p->qn == QLIMIT(p)) /* an address that never comes */
        return fail(p, TB_PKT_BAD_SEQUENCE, p->q[p->qh].index, TB_ERR_LIMIT);
    e = &p->q[(p->qh + p->qn++) % QMAX];
    e->kind = kind;
    e->index = index;
    e->br = br;
    e->nb = 0;
    return 0;
}

/* Queues the cycle's data units with the TRACESYNC events so far: the
 * decoder gives none to an instruction while the address of a branch
 * before it is still to come. */
static int units_out(tb_etmv1_parser *p)
{
    if (p->units.nb) {
        int rc = enqueue(p, Q_UNITS, p->units.index, (uint32_t)p->n_sync);
        qent *e;

        if (rc < 0)
            return rc;
        e = &p->q[(p->qh + p->qn - 1) % QMAX];
        e->nb = p->units.nb;
        memcpy(e->b, p->units.b, 2);
    }
    p->units.nb = 0;
    return 0;
}

static void unit(tb_etmv1_parser *p, uint8_t u)
{
    p->units.b[p->units.nb++] = u;
}

static void feed_byte(tb_etmv1_parser *p, uint8_t byte)
{
    aread *r = &p->rd[(p->n_sync - 1) % RMAX];
    unsigned na;

    r->b[r->n++] = byte;
    if (!r->need && (na = tb_etmv1_addr_length(r->b, r->n)) != 0) {
        uint8_t reason = 0;

        if (na == 5)
            tb_etmv1_addr_decode(r->b, 5, 0, NULL, &reason, NULL);
        /* 5.6.3: the CID follows a 5-packet address with reason != 0. */
        r->need = (uint8_t)(na + (na == 5 && reason ? p->cfg.ctxid_bytes : 0));
    }
    if (r->need && r->n >= r->need) {
        r->done = true;
        p->reading = false;
    }
}

static int sample(tb_etmv1_parser *p, const tb_etmv1_sample *s, uint64_t index)
{
    uint8_t ps = s->pipestat;
    uint16_t pkt = s->tracepkt;
    bool data, ca = p->cfg.cycle_accurate;
    pbr *apo_br = NULL;
    int rc;

    if (p->stop)
        return TB_ERR_STOPPED;
    if (ps > 7 || (p->cfg.port_width < 16 && (pkt >> p->cfg.port_width)))
        return fail(p, TB_PKT_RESERVED, index, TB_ERR_BAD_PACKET);
    if (s->tracesync && (ps == TB_ETMV1_TR || ps == TB_ETMV1_TD))
        return fail(p, TB_PKT_BAD_SEQUENCE, index, TB_ERR_BAD_PACKET);
    data = ps != TB_ETMV1_TR && ps != TB_ETMV1_TD;
    if (ps == TB_ETMV1_TR) { /* 5.4: the real status is on TRACEPKT[2:0] */
        if ((rc = enqueue(p, Q_TRIG, index, 0)) < 0)
            return rc;
        ps = pkt & 7;
        if (ps == TB_ETMV1_TR)
            return fail(p, TB_PKT_RESERVED, index, TB_ERR_BAD_PACKET);
    }
    if (p->pn) {
        pbr *b = &p->pb[(p->ph + p->pn - 1) % PMAX];

        if (b->apo_seen < 2 && b->index != index)
            apo_br = b;
    }
    if (apo_br && ps == TB_ETMV1_TD)
        return fail(p, TB_PKT_BAD_SEQUENCE, index, TB_ERR_BAD_PACKET);
    if (apo_br && !(ps & 4)) { /* 5.6.1: APO[1:0], then APO[3:2] */
        apo_br->apo |= (uint8_t)((ps & 3) << (2 * apo_br->apo_seen));
        apo_br->apo_seen++;
        if (ca && (rc = enqueue(p, Q_T, index, 0)) < 0)
            return rc;
    } else {
        if (apo_br) { /* a branch in an APO cycle abandons it (5.6.1) */
            apo_br->abandoned = true;
            apo_br->apo_seen = 2;
        }
        switch (ps) {
        case TB_ETMV1_IE:
            rc = enqueue(p, Q_E, index, 0);
            break;
        case TB_ETMV1_ID:
            rc = enqueue(p, p->cfg.data_trace ? Q_ID : Q_E, index, 0);
            break;
        case TB_ETMV1_IN:
            rc = enqueue(p, Q_N, index, 0);
            break;
        case TB_ETMV1_WT:
            rc = ca ? enqueue(p, Q_W, index, 0) : 0;
            break;
        case TB_ETMV1_TD: /* 5.10: counted when TraceEnable */
            rc = ca && (pkt & 1) ? enqueue(p, Q_T, index, 0) : 0;
            break;
        default: { /* BE, BD */
            pbr *b;

            if (p->pn == PMAX)
                return fail(p, TB_PKT_BAD_SEQUENCE, index, TB_ERR_LIMIT);
            b = &p->pb[(p->ph + p->pn++) % PMAX];
            memset(b, 0, sizeof *b);
            b->serial = ++p->serial;
            b->index = index;
            b->ps = ps;
            b->sync_base = p->n_sync;
            rc = enqueue(p, Q_BR, index, b->serial);
            break;
        }
        }
        if (rc < 0)
            return rc;
    }
    if (data) {
        unsigned w = p->cfg.port_width;
        bool dt = p->cfg.data_trace != 0;

        if (s->tracesync) {
            aread *r;

            if (p->reading) /* the last address was cut short */
                p->rd[(p->n_sync - 1) % RMAX].bad = true;
            r = &p->rd[p->n_sync % RMAX];
            memset(r, 0, sizeof *r);
            r->ev = p->n_sync++;
            p->reading = true;
            p->have_low = false;
        }
        p->units.index = index;
        if (p->reading) {
            if (w == 4) {
                if (!p->have_low) {
                    p->low = pkt & 0xF;
                    p->have_low = true;
                } else {
                    p->have_low = false;
                    feed_byte(p, (uint8_t)(p->low | (pkt & 0xF) << 4));
                }
            } else {
                feed_byte(p, (uint8_t)pkt);
                if (w == 16 && p->reading)
                    feed_byte(p, (uint8_t)(pkt >> 8));
                else if (w == 16 && dt)
                    unit(p, (uint8_t)(pkt >> 8));
            }
        } else if (dt) {
            unit(p, (uint8_t)(w == 4 ? pkt & 0xF : pkt));
            if (w == 16)
                unit(p, (uint8_t)(pkt >> 8));
        }
        if ((rc = units_out(p)) < 0)
            return rc;
    }
    return drain(p);
}

int tb_etmv1_parser_push_samples(tb_etmv1_parser *p, const tb_etmv1_sample *s,
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

int tb_etmv1_parser_push(tb_etmv1_parser *p, const uint8_t *data, size_t len,
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
            tb_etmv1_config c = p->cfg;

            if ((rc = tb_etmv1_capture_parse_header(p->in.hdr, &c)) < 0)
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

int tb_etmv1_parser_finish(tb_etmv1_parser *p, tb_packet_cb cb, void *ctx)
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
        if (p->qn) /* the first branch whose address never came */
            rc = fail(p, TB_PKT_INCOMPLETE, p->q[p->qh].index, TB_ERR_TRUNCATED);
        if (rc >= 0 && p->in.part_n)
            rc = emit_simple(p, TB_PKT_INCOMPLETE, p->in.part_index, TB_ERR_TRUNCATED);
        if (rc >= 0)
            rc = flush_atom(p);
    }
    p->in.part_n = 0;
    return rc < 0 ? rc : p->emitted;
}

void tb_etmv1_parser_reset(tb_etmv1_parser *p)
{
    tb_etmv1_config c;
    bool given;

    if (!p)
        return;
    c = p->cfg;
    given = p->cfg_given;
    memset(p, 0, sizeof *p);
    p->cfg = c;
    p->cfg_given = given;
    p->have_cfg = given;
}

tb_etmv1_parser *tb_etmv1_parser_new(const tb_etmv1_config *cfg)
{
    tb_etmv1_parser *p;

    if (cfg && tb_etmv1_config_check(cfg) < 0)
        return NULL;
    if (!(p = calloc(1, sizeof *p)))
        return NULL;
    if (cfg) {
        p->cfg = *cfg;
        p->cfg_given = p->have_cfg = true;
    } else {
        tb_etmv1_config_init(&p->cfg);
    }
    return p;
}

void tb_etmv1_parser_free(tb_etmv1_parser *p)
{
    free(p);
}

const tb_etmv1_config *tb_etmv1_parser_config(const tb_etmv1_parser *p)
{
    return p && p->have_cfg ? &p->cfg : NULL;
}

/* ---- behind tb_parser (backend.h) ---- */

static void *op_make(const tb_config *cfg)
{
    tb_etmv1_config c;

    return tb_etmv1_config_from_tb(&c, cfg) < 0 ? NULL : tb_etmv1_parser_new(&c);
}

static void op_destroy(void *p) { tb_etmv1_parser_free(p); }
static void op_reset(void *p) { tb_etmv1_parser_reset(p); }

static int op_push(void *p, const uint8_t *data, size_t len, uint64_t index, tb_packet_cb cb,
                   void *ctx)
{
    return tb_etmv1_parser_push(p, data, len, index, cb, ctx);
}

static int op_finish(void *p, tb_packet_cb cb, void *ctx)
{
    return tb_etmv1_parser_finish(p, cb, ctx);
}

const tb_parser_ops tb_etmv1_parser_ops = {
    .protocol = TB_PROTO_ETMV1,
    .make = op_make,
    .destroy = op_destroy,
    .push = op_push,
    .finish = op_finish,
    .reset = op_reset,
};
