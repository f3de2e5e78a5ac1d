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

#include "tracebench/etmv1.h"
#include "port_internal.h"

#define PMAX 64u   /* branches waiting for their address */
#define RMAX 32u   /* address reads kept for them */

/* Held entries of ETMv1's own (the shell's ring, port_internal.h): a
 * BE/BD (ref: its branch serial), an ID (its DATA marker after its 'E')
 * and a cycle's data units (nb, b; ref: the TRACESYNC events up to it). */
enum { Q_E = TB_PORT_Q_E, Q_N = TB_PORT_Q_N, Q_W = TB_PORT_Q_W, Q_T = TB_PORT_Q_T,
       Q_TRIG = TB_PORT_Q_TRIG, Q_BR = TB_PORT_Q_OWN, Q_ID, Q_UNITS };

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
    tb_port_parser port;    /* first: the shell (port_internal.h) */

    /* branches waiting for their address */
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
    tb_port_qent units;
};

/* Drops everything held (after an error): the branch addresses are no
 * longer known. */
static void forget(tb_port_parser *c)
{
    tb_etmv1_parser *p = (tb_etmv1_parser *)c;

    p->ph = p->pn = 0;
    p->reading = false;
    p->have_low = false;
    p->addr_known = false;
    p->units.nb = 0;
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
static int emit_data(tb_etmv1_parser *p, const tb_port_qent *e)
{
    tb_packet k;
    int rc;

    if ((rc = tb_port_flush_atom(&p->port)) < 0)
        return rc;
    tb_port_pkt_init(&p->port, &k, TB_PKT_DATA, e->index);
    if (e->kind == Q_ID) {
        k.phdr_format = TB_ETMV1_ID;
    } else {
        k.size = e->nb;
        memcpy(k.bytes, e->b, e->nb);
        k.sync_ev = e->ref;
    }
    return tb_port_out(&p->port, &k);
}

static int emit_branch(tb_etmv1_parser *p, const pbr *b, const aread *r)
{
    tb_packet k;
    uint32_t raw;
    uint8_t reason;
    bool j;
    unsigned na = tb_etmv1_addr_length(r->b, r->n), i;
    int rc;

    if ((rc = tb_port_flush_atom(&p->port)) < 0)
        return rc;
    tb_etmv1_addr_decode(r->b, na, p->last_raw, &raw, &reason, &j);
    if (reason > TB_ETMV1_R_PERIODIC) /* reserved (U12) */
        return tb_port_fail(&p->port, TB_PKT_BAD_SEQUENCE, b->index, TB_ERR_BAD_PACKET);
    tb_port_pkt_init(&p->port, &k, TB_PKT_BRANCH, b->index);
    k.abandoned = b->abandoned;
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
    return tb_port_out(&p->port, &k);
}

/* An abandoned branch whose address read cannot be told (its abandoner
 * was abandoned too, or no read lies between the two): the instruction
 * ran, where it went is not known. */
static int emit_abandoned_blind(tb_etmv1_parser *p, const pbr *b)
{
    tb_packet k;
    int rc;

    if ((rc = tb_port_flush_atom(&p->port)) < 0)
        return rc;
    tb_port_pkt_init(&p->port, &k, TB_PKT_BRANCH, b->index);
    k.abandoned = true;
    k.phdr_format = b->ps;
    return tb_port_out(&p->port, &k);
}

/* An abandoned branch b (5.6.1): its address is still sent, into the
 * FIFO before its abandoner's, so it is the read right before the one
 * the abandoner's APO names (and at or after b's own cycle).  0: wait,
 * 1: out (or failed and forgot), or negative. */
static int abandoned_out(tb_etmv1_parser *p, const pbr *b)
{
    const pbr *nb;
    const aread *r;
    uint64_t ev;
    int rc;

    if (p->pn < 2) /* its abandoner is queued with it: not yet seen */
        return 0;
    nb = &p->pb[(p->ph + 1) % PMAX];
    if (!nb->abandoned) {
        if (nb->apo_seen < 2)
            return 0;
        if (nb->apo == 15) {
            rc = tb_port_fail(&p->port, TB_PKT_BAD_SEQUENCE, nb->index, TB_ERR_BAD_PACKET);
            return rc < 0 ? rc : 1;
        }
        ev = nb->sync_base + nb->apo;
        if (ev > b->sync_base) {
            if (ev - 1 >= p->n_sync)
                return 0;
            r = &p->rd[(ev - 1) % RMAX];
            if (r->ev != ev - 1 || r->bad) {
                rc = tb_port_fail(&p->port, TB_PKT_BAD_SEQUENCE, b->index, TB_ERR_BAD_PACKET);
                return rc < 0 ? rc : 1;
            }
            if (!r->done)
                return 0;
            rc = emit_branch(p, b, r);
            return rc < 0 ? rc : 1;
        }
    }
    rc = emit_abandoned_blind(p, b);
    return rc < 0 ? rc : 1;
}

/* The oldest held entry of ETMv1's own (the shell's own hook): a branch
 * once its address has come (it waits until then), or an ID's or data
 * units' DATA packet. */
static int own(tb_port_parser *c, const tb_port_qent *e)
{
    tb_etmv1_parser *p = (tb_etmv1_parser *)c;
    int rc;

    if (e->kind == Q_BR) {
        pbr *b = branch_of(p, e->ref);
        aread *r;

        if (b && !b->abandoned) {
            uint64_t ev;

            if (b->apo_seen < 2)
                return 0;
            if (b->apo == 15) /* "too large" (5.6.1) */
                return tb_port_fail(c, TB_PKT_BAD_SEQUENCE, b->index, TB_ERR_BAD_PACKET);
            ev = b->sync_base + b->apo;
            if (ev >= p->n_sync)
                return 0;
            r = &p->rd[ev % RMAX];
            if (r->ev != ev || r->bad)
                return tb_port_fail(c, TB_PKT_BAD_SEQUENCE, b->index, TB_ERR_BAD_PACKET);
            if (!r->done)
                return 0;
            if ((rc = emit_branch(p, b, r)) < 0)
                return rc;
            if (!c->qn) /* emit_branch failed and forgot */
                return 0;
        } else if (b) {
            if ((rc = abandoned_out(p, b)) <= 0)
                return rc;
            if (!c->qn) /* failed and forgot */
                return 0;
        }
        /* b is the oldest pending branch */
        if (p->pn) {
            p->ph = (p->ph + 1) % PMAX;
            p->pn--;
        }
        return 1;
    }
    if (e->kind == Q_ID && (rc = tb_port_add_atom(c, 'E', e->index)) < 0) /* 'E', then its marker */
        return rc;
    return (rc = emit_data(p, e)) < 0 ? rc : 1;
}

static int enqueue(tb_etmv1_parser *p, uint8_t kind, uint64_t index, uint32_t ref)
{
    return tb_port_enqueue(&p->port, kind, index, ref);
}

/* Held at most: ~ the FIFO's drain time in cycles; with data trace each
 * cycle may add its data units too (the shell's qlimit hook). */
static unsigned qlimit(const tb_port_cfg *cfg)
{
    return cfg->data_trace ? TB_PORT_QMAX : 8192u;
}

/* Queues the cycle's data units with the TRACESYNC events so far: the
 * decoder gives none to an instruction while the address of a branch
 * before it is still to come. */
static int units_out(tb_etmv1_parser *p)
{
    if (p->units.nb) {
        int rc = enqueue(p, Q_UNITS, p->units.index, (uint32_t)p->n_sync);
        tb_port_qent *e;

        if (rc < 0)
            return rc;
        e = &p->port.q[(p->port.qh + p->port.qn - 1) % TB_PORT_QMAX];
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
        r->need = (uint8_t)(na + (na == 5 && reason ? p->port.cfg.ctxid_bytes : 0));
    }
    if (r->need && r->n >= r->need) {
        r->done = true;
        p->reading = false;
    }
}

/* One sample (the shell's sample hook). */
static int sample(tb_port_parser *c, const tb_etmv1_sample *s, uint64_t index)
{
    tb_etmv1_parser *p = (tb_etmv1_parser *)c;
    uint8_t ps = s->pipestat;
    uint16_t pkt = s->tracepkt;
    bool data, ca = p->port.cfg.cycle_accurate;
    pbr *apo_br = NULL;
    int rc;

    if (p->port.stop)
        return TB_ERR_STOPPED;
    if (ps > 7 || (p->port.cfg.port_width < 16 && (pkt >> p->port.cfg.port_width)))
        return tb_port_fail(&p->port, TB_PKT_RESERVED, index, TB_ERR_BAD_PACKET);
    if (s->tracesync && (ps == TB_ETMV1_TR || ps == TB_ETMV1_TD))
        return tb_port_fail(&p->port, TB_PKT_BAD_SEQUENCE, index, TB_ERR_BAD_PACKET);
    data = ps != TB_ETMV1_TR && ps != TB_ETMV1_TD;
    if (ps == TB_ETMV1_TR) { /* 5.4: the real status is on TRACEPKT[2:0] */
        if ((rc = enqueue(p, Q_TRIG, index, 0)) < 0)
            return rc;
        ps = pkt & 7;
        if (ps == TB_ETMV1_TR)
            return tb_port_fail(&p->port, TB_PKT_RESERVED, index, TB_ERR_BAD_PACKET);
    }
    if (p->pn) {
        pbr *b = &p->pb[(p->ph + p->pn - 1) % PMAX];

        if (b->apo_seen < 2 && b->index != index)
            apo_br = b;
    }
    if (apo_br && ps == TB_ETMV1_TD)
        return tb_port_fail(&p->port, TB_PKT_BAD_SEQUENCE, index, TB_ERR_BAD_PACKET);
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
            rc = enqueue(p, p->port.cfg.data_trace ? Q_ID : Q_E, index, 0);
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
                return tb_port_fail(&p->port, TB_PKT_BAD_SEQUENCE, index, TB_ERR_LIMIT);
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
        unsigned w = p->port.cfg.port_width;
        bool dt = p->port.cfg.data_trace != 0;

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
    return tb_port_drain(&p->port, own);
}

/* The hook table, tb_etmv1_parser_new/_free/_reset/_config/_push/
 * _push_samples/_finish and tb_etmv1_parser_ops: the shell's
 * (port_internal.h). */
TB_PORT_PARSER_API(etmv1, ETMV1, sample, forget, qlimit, NULL);
