/*
 * ETMv2 trace logic model (IHI0014Q chapter 6): exec records -> one port
 * sample per TRACECLK cycle.  Model choices: docs/etmv2.md 4; every
 * unverified value comes from tracebench/etmv2.h (U1..U18).
 *
 * On the port core shared with ETMv1 (port_model.c): record r occupies max(its cycle
 * stamp span, what its statuses need) port cycles, its status first, then
 * waits; the FIFO takes a cycle's packets in that cycle and sends from it
 * in the same cycle, a nibble, byte or two bytes a cycle (6.3 [S]: as
 * soon as possible, no special 16-bit rules).  ETMv2 differs: packets
 * belong to the status of the cycle that placed them (D statuses, 6.1.3);
 * a branch address is the last packet of its cycle (6.4.1); there is no
 * TRACESYNC and no APO: synchronisation is the TFO (6.5): a TD cycle with
 * TRACEPKT[0] = 1 whose TRACEPKT shows how many FIFO bytes come before
 * the TFO packet (header, context ID, 4-byte address) in the FIFO.
 */
#include "port_model.h"
#include "tracebench/etmv2.h"
#include "tracebench/pkt_codec.h"

/* Transfers of one instruction: an LDM/STM of 16 registers. */
#define XMAX 16u
/* One status's packets: a context ID (5), the data packets of 16
 * transfers with address and value (1 + 5 + 4 + 15 * 5) and a branch
 * address (5). */
#define PMAX 100u

unsigned tb_etmv2_tfo_max(unsigned port_width)
{
    return port_width == 4 ? TB_ETMV2_TFO_MAX4
           : port_width == 8 ? TB_ETMV2_TFO_MAX8 : TB_ETMV2_TFO_MAX16;
}

struct tb_etmv2_encoder {
    port_model m;           /* first: the port core (port_model.h) */
    tb_etmv2_config cfg;
    uint32_t last_addr;     /* last branch or TFO address (6.7.1) */
    tb_isa last_isa;        /* TB_ISA_ARM (0) at first */
    /* A direct branch held to fold with the next instruction (U18). */
    bool have_fold;
    tb_exec_record fold;
    uint64_t fold_span;
    port_xfer fxfer[XMAX];
    unsigned n_fxfer;
    /* The instruction shown before the newest (port_model.have_shown):
     * an exception that cancels the newest (E, 6.7.1) retracts it. */
    bool prev_have_shown;
    uint64_t prev_shown_seq;
    /* Load misses (ooo=N, M12): outstanding by tag 1..3 (U9), each with
     * its value, size, statuses left and age; due: the tags whose Load
     * Miss data goes with the status being built; new_tag: the tag of
     * that status's own Load Miss occurred packet (0: none). */
    struct {
        bool valid;
        uint8_t size;
        uint32_t value;
        uint32_t left;
        uint64_t age;
    } miss[4];
    uint64_t miss_age;
    uint8_t due, new_tag;
};

static int emit_pkt(tb_etmv2_encoder *e, const tb_packet *p)
{
    e->m.st.packets++;
    if (e->m.pcb && e->m.pcb(e->m.pctx, p))
        return TB_ERR_STOPPED;
    return 0;
}

/* A TFO (6.5.1): its TD cycle(s), and its packet into the FIFO.  Returns
 * 1 if sent, 0 if it cannot go now (FIFO too full for the value). */
static int tfo(tb_etmv2_encoder *e, uint32_t addr, tb_isa isa, uint8_t reason,
               unsigned room)
{
    uint8_t b[9];
    unsigned n = 0, i, v = e->m.count;
    tb_packet p;
    int rc;

    if (v > tb_etmv2_tfo_max(e->cfg.port_width) ||
        e->m.count + 5 + e->cfg.ctxid_bytes + room > e->m.depth)
        return 0;
    if (reason != TB_ETMV2_R_PERIODIC)
        for (i = 1; i < 4; i++) /* M12: misses out at a restart are not traced */
            e->miss[i].valid = false;
    b[n++] = (uint8_t)(TB_ETMV2_TFO_HDR_NORMAL | (reason & 3)); /* U2 */
    for (i = 0; i < e->cfg.ctxid_bytes; i++)
        b[n++] = (uint8_t)(e->m.ctxid >> (8 * i)); /* U7 */
    addr = isa == TB_ISA_THUMB ? (addr & ~1u) | 1u : addr & ~3u; /* 6.5.4: bit 0 Thumb */
    for (i = 0; i < 4; i++)
        b[n++] = (uint8_t)(addr >> (8 * i)); /* U7 */
    e->m.since_sync = 0;
    e->m.ctx_due = false;
    /* 6.4.2: a data address is compressed only against one sent in full
     * in the current sync period (the TFO's). */
    e->m.have_daddr = false;
    e->last_addr = addr & ~1u;
    e->last_isa = isa;
    tb_port_pkt(&e->m, &p, TB_PKT_ISYNC, b, n);
    p.addr = addr & ~1u;
    p.isa = isa;
    p.addr_bits = 32;
    p.addr_known = true;
    p.reason = reason;
    p.has_ctxid = e->cfg.ctxid_bytes != 0;
    p.context_id = e->m.ctxid;
    if ((rc = emit_pkt(e, &p)) < 0)
        return rc;
    /* The TFO cycle: no FIFO output (6.1.6), so v bytes precede the
     * packet (U6). */
    if (e->cfg.port_width == 4) {
        rc = tb_port_put(&e->m, TB_ETMV2_TD, 0, (uint16_t)((v & 7) << 1 | 1));
        e->m.hold = true; /* U4: the TFO's second half, no FIFO data */
        e->m.hold_pkt = (uint16_t)((uint8_t)(v >> 3) << 1 | 1);
    } else {
        rc = tb_port_put(&e->m, TB_ETMV2_TD, 0, (uint16_t)(v << 1 | 1));
    }
    if (e->m.on && !e->m.dropping)
        e->m.since_sync = 0;
    tb_port_fifo_put(&e->m, b, n);
    e->m.st.isyncs++;
    return rc < 0 ? rc : 1;
}

/* The packets of a status: a context ID packet when due (U17), then the
 * branch address when `br` (6.4.1: always last).  n = 0: none.  Returns
 * false when they do not fit (overflow, 6.10: all or nothing). */
/* The data packets of an instruction's nx transfers x (6.4.2, Table 6.2
 * normal data bC0A0SS10): with value trace one a transfer, A on the
 * first (an address follows it when addresses are traced), SS its size
 * (U8), the value LSB first; with address trace only, one packet, A set,
 * SS = 00.  The data address (U8 layout) is the low 7-bit groups that
 * changed since the last one, all five bytes when none went out in full
 * since the TFO.  C is set on every packet but the last; `more`: other
 * packets follow in this cycle.  Returns the bytes written at b. */
static unsigned data_packets(const tb_etmv2_encoder *e, const port_xfer *x, unsigned nx,
                             bool more, uint8_t *b)
{
    static const uint8_t ss[5] = {0, 1, 2, 0, 3}; /* bytes -> SS (U8) */
    bool dv = e->cfg.data_trace & 1, da = (e->cfg.data_trace & 2) != 0;
    unsigned n = 0, np = dv ? nx : 1, i, k;

    for (i = 0; i < np; i++) {
        uint8_t h = 0x02;
        unsigned at = n;

        if (i > 0 && !tb_encoder_in_dataview(&e->m.base, x[i].addr)) {
            /* 6.4.4: a transfer of a partly traced LSM that the filter
             * excludes, after the first traced one: Value Not Traced,
             * the header alone (bC1101010, Table 6.2). */
            b[n++] = (uint8_t)(0x6A | (i + 1 < np || more ? 0x80 : 0));
            continue;
        }
        if (e->new_tag)
            h = (uint8_t)(0x50 | e->new_tag << 2); /* Load Miss occurred bC1A1TT00 */
        else if (dv)
            h |= (uint8_t)(ss[x[i].size] << 2);
        if (i == 0)
            h |= 0x20; /* A: the instruction's first data packet */
        b[n++] = h;
        if (i == 0 && da) {
            uint32_t a = x[0].addr, d = a ^ e->m.last_daddr;
            unsigned bytes = 5;

            if (e->m.have_daddr)
                for (bytes = 1; bytes < 5 && (d >> (7 * bytes)); bytes++)
                    ;
            for (k = 0; k < bytes; k++)
                b[n++] = (uint8_t)(k == 4 ? (a >> 28) & 0xF
                                          : ((a >> (7 * k)) & 0x7F) | (k + 1 < bytes ? 0x80 : 0));
        }
        if (dv && !e->new_tag) /* a miss's value comes later */
            for (k = 0; k < x[i].size; k++)
                b[n++] = (uint8_t)(x[i].value >> (8 * k));
        if (i + 1 < np || more)
            b[at] |= 0x80; /* C */
    }
    return n;
}

static bool build(tb_etmv2_encoder *e, bool br, uint32_t to, tb_isa isa, bool exc,
                  const port_xfer *x, unsigned nx, uint8_t *b, unsigned *n, unsigned *na,
                  unsigned *nd, uint8_t *addr5)
{
    unsigned i;

    *n = 0;
    *na = 0;
    *nd = 0;
    if (e->m.ctx_due && e->cfg.ctxid_bytes) {
        b[(*n)++] = (uint8_t)(0x6E | (br || nx || e->due ? 0x80 : 0)); /* bC1101110 */
        for (i = 0; i < e->cfg.ctxid_bytes; i++)
            b[(*n)++] = (uint8_t)(e->m.ctxid >> (8 * i)); /* U7 */
    }
    if (e->due) {
        /* M12: the Load Miss data of the misses due, oldest first,
         * before this status's own packets: bCTT0SS00, the value LSB
         * first (U8, U9). */
        static const uint8_t ss[5] = {0, 1, 2, 0, 3};
        uint8_t left = e->due;

        while (left) {
            unsigned t = 0, k;

            for (k = 1; k < 4; k++)
                if ((left >> k & 1) && (!t || e->miss[k].age < e->miss[t].age))
                    t = k;
            left = (uint8_t)(left & ~(1u << t));
            b[(*n)++] = (uint8_t)(t << 5 | ss[e->miss[t].size] << 2 |
                                  (left || nx || br ? 0x80 : 0));
            for (k = 0; k < e->miss[t].size; k++)
                b[(*n)++] = (uint8_t)(e->miss[t].value >> (8 * k));
        }
        *nd = *n;
    }
    if (nx) {
        unsigned k = data_packets(e, x, nx, br, b + *n);

        *nd += k;
        *n += k;
    }
    if (br) {
        int k = tb_addr_encode(TB_ADDR_ORIGINAL, to, isa, e->last_addr, e->last_isa, exc,
                               0, addr5);

        if (k < 0)
            return false;
        memcpy(b + *n, addr5, (size_t)k);
        *n += (unsigned)k;
        *na = (unsigned)k;
    }
    return e->m.count + *n <= e->m.depth;
}

/* Load misses (ooo=N, M12) after a status went out: the due ones are
 * done, the others wait one status less (`counted`: an instruction's
 * status, not a DW), and the status's own miss is outstanding. */
static void miss_commit(tb_etmv2_encoder *e, bool counted, const port_xfer *x, unsigned nx)
{
    unsigned t;

    for (t = 1; t < 4; t++) {
        if (e->due >> t & 1)
            e->miss[t].valid = false;
        else if (e->miss[t].valid && counted && e->miss[t].left > 1)
            e->miss[t].left--;
    }
    e->due = 0;
    if (e->new_tag && nx) {
        t = e->new_tag;
        e->miss[t].valid = true;
        e->miss[t].size = x[0].size;
        e->miss[t].value = x[0].value;
        e->miss[t].left = e->m.base.ooo_latency;
        e->miss[t].age = e->miss_age++;
    }
    e->new_tag = 0;
}

/* Sets e->due (the misses whose data goes with the next status) and
 * e->new_tag (the tag of r's own miss, when r misses) before build():
 * with ooo=N every single load from memory that is not a branch misses
 * (ETMv3's rule, 7.4.3; U9: a tag 1..3, the lowest free), its data
 * going with the Nth instruction status after its own; with all three
 * tags out, the oldest completes first, in this status. */
static void miss_plan(tb_etmv2_encoder *e, const tb_exec_record *r, const port_xfer *x,
                      unsigned nx)
{
    unsigned t, used = 0, oldest = 0;

    e->due = 0;
    e->new_tag = 0;
    if (!e->m.base.ooo_latency)
        return;
    for (t = 1; t < 4; t++) {
        if (!e->miss[t].valid)
            continue;
        used |= 1u << t;
        if (e->miss[t].left <= 1)
            e->due = (uint8_t)(e->due | 1u << t);
        if (!oldest || e->miss[t].age < e->miss[oldest].age)
            oldest = t;
    }
    if (!r || nx != 1 || x[0].store || r->u.insn.wp_class != TB_WP_NONE ||
        (r->u.insn.flags & TB_INSN_COND_FAILED) || !(e->cfg.data_trace & 1))
        return;
    if (used == 0xE) { /* all out: the oldest's data first */
        e->due = (uint8_t)(e->due | 1u << oldest);
        used &= ~(1u << oldest);
    }
    for (t = 1; used >> t & 1; t++)
        ;
    e->new_tag = (uint8_t)t;
}

/* Whether a miss's data is due with the next status (then it is no
 * plain IE a periodic TFO could replace). */
static bool miss_due(const tb_etmv2_encoder *e)
{
    for (unsigned t = 1; t < 4; t++)
        if (e->miss[t].valid && e->miss[t].left <= 1)
            return true;
    return false;
}

/* Commits packets built by build(); the BRANCH/CONTEXT_ID to pcb. */
static int commit(tb_etmv2_encoder *e, uint8_t ps, const uint8_t *b, unsigned n,
                  unsigned na, unsigned nd, uint32_t to, tb_isa isa, bool exc,
                  const port_xfer *x, unsigned nx)
{
    tb_packet p;
    int rc;

    tb_port_fifo_put(&e->m, b, n);
    if (nd) {
        e->m.st.packets++;
        if (nx && (e->cfg.data_trace & 2)) {
            e->m.last_daddr = x[0].addr;
            e->m.have_daddr = true;
        }
    }
    miss_commit(e, ps != TB_ETMV2_DW, x, nx);
    if (n > na + nd) {
        e->m.ctx_due = false;
        tb_port_pkt(&e->m, &p, TB_PKT_CONTEXT_ID, b, n - na - nd);
        p.has_ctxid = true;
        p.context_id = e->m.ctxid;
        if ((rc = emit_pkt(e, &p)) < 0)
            return rc;
    }
    if (na) {
        tb_port_pkt(&e->m, &p, TB_PKT_BRANCH, b + n - na, na);
        p.addr = to & (isa == TB_ISA_THUMB ? ~1u : ~3u);
        p.isa = isa;
        p.addr_bits = (uint8_t)tb_addr_bits_for(TB_ADDR_ORIGINAL, isa, na);
        p.addr_known = true;
        p.exc_cancel = exc;
        p.phdr_format = ps;
        e->last_addr = p.addr;
        e->last_isa = isa;
        if ((rc = emit_pkt(e, &p)) < 0)
            return rc;
    }
    return 0;
}

/* Brings trace on (or back after an overflow) before instruction r:
 * 0 = on, 1 = not now (the instruction goes untraced). */
static int ensure_on(tb_etmv2_encoder *e, const tb_exec_record *r, unsigned room)
{
    uint8_t reason;
    int rc;

    if (e->m.on && !e->m.dropping)
        return 0;
    if (e->m.dropping && e->m.count)
        return 1; /* 6.10: WT while the FIFO drains */
    reason = tb_port_on_reason(&e->m); /* 10, 11 or 01 */
    /* U6: never half a byte out at a TFO: finish it first. */
    if (e->m.half && (rc = tb_port_cycle(&e->m, TB_ETMV2_WT, 0)) < 0)
        return rc;
    e->m.on = true;
    e->m.dropping = false;
    if ((rc = tfo(e, r->u.insn.addr, (tb_isa)r->u.insn.isa, reason, room)) < 0)
        return rc;
    if (rc == 0) { /* the FIFO holds more than the TFO value can say, or
                    * the TFO and its instruction's data do not fit */
        tb_port_lost(&e->m, 0);
        return 1;
    }
    e->m.since_sync = 0;
    return 0;
}

/* Whether r is a branch the model folds (U18). */
static bool foldable(const tb_etmv2_encoder *e, const tb_exec_record *r)
{
    /* Not in CA mode: a range's cycle counts give each instruction a
     * cycle of its own (decoder.h), a phantom pair has one. */
    return e->cfg.phantoms && !e->cfg.branch_output && !e->cfg.cycle_accurate &&
           r->u.insn.wp_class == TB_WP_DIRECT;
}

enum { RUN = 0, CANCELLED = 1 };

/* Whether instruction r's status carries its branch address (6.7.1). */
static bool branch_out(const tb_etmv2_encoder *e, const tb_exec_record *r)
{
    uint8_t fl = r->u.insn.flags, wp = r->u.insn.wp_class;
    bool indirect = wp == TB_WP_INDIRECT || wp == TB_WP_INDIRECT_LINK;
    bool direct = (wp == TB_WP_DIRECT || wp == TB_WP_DIRECT_LINK) && (fl & TB_INSN_TAKEN);

    return !(fl & TB_INSN_COND_FAILED) && (indirect || (direct && e->cfg.branch_output));
}

/* The status base (IE/DE/IN/DN) and packets of instruction r. */
static int insn_status(tb_etmv2_encoder *e, const tb_exec_record *r, const port_xfer *x,
                       unsigned nx, uint8_t *ps, uint8_t *b, unsigned *n, unsigned *na,
                       unsigned *nd, uint32_t *to, tb_isa *isa)
{
    bool failed = r->u.insn.flags & TB_INSN_COND_FAILED;
    bool br = branch_out(e, r);
    uint8_t a5[5];

    *to = r->u.insn.next_addr;
    *isa = (tb_isa)r->u.insn.next_isa;
    /* Data (6.4.2): a load/store that passed its condition and
     * completed (an aborted one has no transfers, sim.h). */
    if (failed || !e->cfg.data_trace)
        nx = 0;
    miss_plan(e, r, x, nx);
    if (!build(e, br, *to, *isa, false, x, nx, b, n, na, nd, a5)) {
        e->due = 0;
        e->new_tag = 0;
        return 0;
    }
    *ps = (uint8_t)((failed ? TB_ETMV2_IN : TB_ETMV2_IE) | (*n ? 1 : 0));
    return 1;
}

/* Instruction seq went out as executed (encoder.h, tb_overflow_cb). */
static void shown(tb_etmv2_encoder *e, uint64_t seq)
{
    e->prev_have_shown = e->m.have_shown;
    e->prev_shown_seq = e->m.shown_seq;
    e->m.have_shown = true;
    e->m.shown_seq = seq;
}

/* ViewData (dataview=, the ETMv2 data filter; 6.4.4): the transfers
 * before the first one it selects give no packet, so x/nx start there
 * (none selected: no data, a plain IE/IN).  The later ones it excludes
 * are Value Not Traced (data_packets); the decoder counts back from the
 * last transfer (6.4.4).  Without dataview every transfer is selected. */
static void view_trim(const tb_etmv2_encoder *e, const port_xfer **x, unsigned *nx)
{
    unsigned f = 0;

    if (!e->m.base.n_dranges || !*nx)
        return;
    while (f < *nx && !tb_encoder_in_dataview(&e->m.base, (*x)[f].addr))
        f++;
    *x += f;
    *nx -= f;
}

/* One instruction (and, with `second`, the instruction folded with it). */
static int do_insn(tb_etmv2_encoder *e, const tb_exec_record *r, uint64_t span,
                   const port_xfer *x, unsigned nx, const tb_exec_record *second,
                   uint64_t span2, const port_xfer *x2, unsigned nx2)
{
    uint8_t b[PMAX], ps;
    unsigned n, na, nd, room = 0;
    uint32_t to;
    tb_isa isa;
    int rc;

    view_trim(e, &x, &nx);
    view_trim(e, &x2, &nx2);

    e->m.st.insns += second ? 2 : 1;
    tb_port_trigger_check(&e->m, r);
    if (second)
        tb_port_trigger_check(&e->m, second);
    e->m.last_traced = false;
    if (!tb_encoder_in_filter(&e->m.base, r->u.insn.addr)) {
        e->m.on = false; /* 6.9.2: WT while the FIFO drains, then TD */
        return tb_port_waits(&e->m, span + span2);
    }
    if (!(e->m.on && !e->m.dropping) && e->cfg.data_trace) {
        /* M10: a trace-on TFO goes only with room for the data of the
         * instruction(s) it starts at (its data address in full, 6.4.2),
         * else they would overflow at once after a TFO that names them
         * (as ETMv1's M8). */
        const tb_exec_record *ri = second ? second : r;
        uint8_t tmp[PMAX];

        e->m.have_daddr = false;
        if (!(r->u.insn.flags & TB_INSN_COND_FAILED))
            room += data_packets(e, x, nx, false, tmp);
        if (second && !(second->u.insn.flags & TB_INSN_COND_FAILED))
            room += data_packets(e, x2, nx2, false, tmp);
        if (room && branch_out(e, ri))
            room += 5; /* and its branch address, at most 5 bytes (6.7.1) */
    }
    if ((rc = ensure_on(e, r, room)) < 0)
        return rc;
    if (rc > 0)
        return tb_port_waits(&e->m, span + span2);
    if (!second && e->m.base.sync_period && e->m.since_sync >= e->m.base.sync_period) {
        bool plain = !(r->u.insn.flags & TB_INSN_COND_FAILED) &&
                     !(r->u.insn.wp_class == TB_WP_INDIRECT ||
                       r->u.insn.wp_class == TB_WP_INDIRECT_LINK) &&
                     !(e->cfg.branch_output && (r->u.insn.flags & TB_INSN_TAKEN) &&
                       r->u.insn.wp_class != TB_WP_NONE) &&
                     !(e->m.ctx_due && e->cfg.ctxid_bytes) &&
                     !(e->cfg.data_trace && nx) && /* it implies an IE: no data */
                     !miss_due(e);

        if (e->m.since_sync >= 2 * (uint64_t)e->m.base.sync_period) {
            /* 6.5.1: the counter ran out again first: overflow, trace lost. */
            tb_port_lost(&e->m, 0);
            return tb_port_waits(&e->m, span);
        }
        /* 6.5.1: the TFO replaces an IE, which it implies. */
        if (plain && !e->m.half && !e->m.trig_pending) {
            if ((rc = tfo(e, r->u.insn.addr, (tb_isa)r->u.insn.isa, TB_ETMV2_R_PERIODIC,
                          0)) < 0)
                return rc;
            if (rc > 0) {
                e->m.st.traced++;
                e->m.last_traced = true;
                shown(e, r->seq);
                return tb_port_waits(&e->m, span > 1 ? span - 1 : 0);
            }
        }
    }
    if (second) {
        /* 6.1.2: the phantom branch first, then the second's status. */
        uint8_t s2;

        if (!insn_status(e, second, x2, nx2, &s2, b, &n, &na, &nd, &to, &isa)) {
            tb_port_lost(&e->m, 0);
            return tb_port_waits(&e->m, span + span2);
        }
        ps = (uint8_t)(((r->u.insn.flags & TB_INSN_COND_FAILED) ? TB_ETMV2_PN : TB_ETMV2_PT) |
                       s2);
        e->m.st.traced += 2;
        if ((rc = commit(e, ps, b, n, na, nd, to, isa, false, x2, nx2)) < 0 ||
            (rc = tb_port_cycle(&e->m, ps, PORT_TRIG)) < 0)
            return rc;
        e->m.last_traced = true;
        shown(e, second->seq);
        return tb_port_waits(&e->m, span + span2 > 1 ? span + span2 - 1 : 0);
    }
    if (!insn_status(e, r, x, nx, &ps, b, &n, &na, &nd, &to, &isa)) {
        tb_port_lost(&e->m, n);
        return tb_port_waits(&e->m, span);
    }
    e->m.st.traced++;
    if ((rc = commit(e, ps, b, n, na, nd, to, isa, false, x, nx)) < 0 ||
        (rc = tb_port_cycle(&e->m, ps, PORT_TRIG)) < 0)
        return rc;
    e->m.last_traced = true;
    shown(e, r->seq);
    return tb_port_waits(&e->m, span > 1 ? span - 1 : 0);
}

/* An instruction an exception to a Thumb vector cancels (below, the
 * exception record): no status of its own, but trace turns on at it as
 * at any instruction (a trace-on TFO implies none, 6.5.1), so that the
 * DW shows the exception with it as the return address. */
static int untraced_cancel(tb_etmv2_encoder *e, const tb_exec_record *r, uint64_t span)
{
    int rc;

    e->m.st.insns++;
    tb_port_trigger_check(&e->m, r);
    e->m.last_traced = false;
    if (!tb_encoder_in_filter(&e->m.base, r->u.insn.addr)) {
        e->m.on = false; /* 6.9.2 */
        return tb_port_waits(&e->m, span);
    }
    if ((rc = ensure_on(e, r, 0)) < 0)
        return rc;
    e->m.last_traced = rc == 0;
    return tb_port_waits(&e->m, span);
}

/* An exception: a DW cycle with the branch to the vector (6.7.1: E = the
 * most recent traced instruction was cancelled, in the 5th byte). */
static int do_exc(tb_etmv2_encoder *e, const tb_exec_record *r, uint64_t span)
{
    uint8_t b[PMAX], a5[5];
    unsigned n, na, nd;
    bool cancel = r->u.exc.cancelled;
    int rc;

    if (!e->m.last_traced || !e->m.on || e->m.dropping)
        return tb_port_waits(&e->m, span);
    if (!tb_port_is_vector(&e->m, r->u.exc.vector))
        return TB_ERR_CONFIG; /* the decoder could not name it (docs/etmv2.md 4) */
    if (!build(e, true, r->u.exc.vector, (tb_isa)r->u.exc.isa, cancel, NULL, 0, b, &n, &na,
               &nd, a5)) {
        tb_port_lost(&e->m, n);
        return tb_port_waits(&e->m, span);
    }
    if ((rc = commit(e, TB_ETMV2_DW, b, n, na, nd, r->u.exc.vector, (tb_isa)r->u.exc.isa,
                     cancel, NULL, 0)) < 0 ||
        (rc = tb_port_cycle(&e->m, TB_ETMV2_DW, PORT_TRIG)) < 0)
        return rc;
    if (cancel) {
        /* E went out: the decoder retracts the instruction it cancels, so
         * an overflow from here on leaves it cancelled (the comparator's
         * and tb_expect's reading of tb_overflow_cb). */
        e->m.have_shown = e->prev_have_shown;
        e->m.shown_seq = e->prev_shown_seq;
    }
    return tb_port_waits(&e->m, span > 1 ? span - 1 : 0);
}

/* The held instructions go out.  `next_insn`: a later instruction came
 * (so a held branch may fold with the pending one, or the pending one
 * be held); cancel: an exception cancelled the pending one. */
static int flush(tb_etmv2_encoder *e, bool next_insn, bool cancel)
{
    int rc;

    if (!e->m.have_pending) {
        if (e->have_fold) {
            e->have_fold = false;
            return do_insn(e, &e->fold, e->fold_span, e->fxfer, e->n_fxfer, NULL, 0, NULL, 0);
        }
        return 0;
    }
    e->m.have_pending = false;
    if (e->have_fold) {
        e->have_fold = false;
        if (!cancel && tb_encoder_in_filter(&e->m.base, e->m.pending.u.insn.addr))
            return do_insn(e, &e->fold, e->fold_span, e->fxfer, e->n_fxfer, &e->m.pending,
                           e->m.pending_span, e->m.xfer, e->m.n_xfer);
        if ((rc = do_insn(e, &e->fold, e->fold_span, e->fxfer, e->n_fxfer, NULL, 0, NULL,
                          0)) < 0)
            return rc;
    } else if (next_insn && foldable(e, &e->m.pending) && e->m.on && !e->m.dropping &&
               tb_encoder_in_filter(&e->m.base, e->m.pending.u.insn.addr) &&
               !(e->m.base.sync_period && e->m.since_sync >= e->m.base.sync_period)) {
        e->fold = e->m.pending;
        e->fold_span = e->m.pending_span;
        memcpy(e->fxfer, e->m.xfer, sizeof e->fxfer);
        e->n_fxfer = e->m.n_xfer;
        e->have_fold = true;
        return 0;
    }
    return do_insn(e, &e->m.pending, e->m.pending_span, e->m.xfer, e->m.n_xfer, NULL, 0, NULL, 0);
}

static int v2_flush(port_model *m, bool next_insn)
{
    int rc;

    if (next_insn)
        return flush((tb_etmv2_encoder *)m, true, false);
    /* All out: the pending instruction, then a branch held to fold. */
    if ((rc = flush((tb_etmv2_encoder *)m, false, false)) < 0)
        return rc;
    return flush((tb_etmv2_encoder *)m, false, false);
}

static int v2_exception(port_model *m, const tb_exec_record *r, uint64_t span)
{
    tb_etmv2_encoder *e = (tb_etmv2_encoder *)m;
    int rc;

    /* The cancelled instruction is traced; the E bit retracts it.
     * Except before a Thumb vector (SCTLR.TE, ARMv7): Table 6.9's
     * Thumb 5th byte (0001xxxx) has no E bit, ETMv2's cores entering
     * every exception in ARM state, so the instruction the exception
     * cancels gets no status of its own (its cycles are waits) and
     * the DW's return address is the instruction after the last one
     * traced, which is it; a model choice, as ETMv1's undefined
     * instruction (docs/etmv2.md 4). */
    if (r->u.exc.cancelled && r->u.exc.isa == TB_ISA_THUMB && m->have_pending &&
        m->pending.u.insn.addr == r->u.exc.pref_return) {
        m->have_pending = false;
        if ((rc = flush(e, false, false)) >= 0 &&
            (rc = untraced_cancel(e, &m->pending, m->pending_span)) >= 0) {
            tb_exec_record x = *r;

            x.u.exc.cancelled = false;
            rc = do_exc(e, &x, span);
        }
        return rc;
    }
    if ((rc = v2_flush(m, false)) < 0)
        return rc;
    return do_exc(e, r, span);
}

/* The end (M12): the misses still out complete in a DW cycle of their
 * own (a status that placed packets and is no instruction, 6.1), unless
 * the FIFO is dropping (their data lost with the overflow). */
static int v2_end(port_model *m)
{
    tb_etmv2_encoder *e = (tb_etmv2_encoder *)m;
    uint8_t b[PMAX], a5[5];
    unsigned n, na, nd, t;
    int rc;

    e->due = 0;
    e->new_tag = 0;
    for (t = 1; t < 4; t++)
        if (e->miss[t].valid)
            e->due = (uint8_t)(e->due | 1u << t);
    if (!e->due || m->dropping)
        return 0;
    if (!build(e, false, 0, TB_ISA_ARM, false, NULL, 0, b, &n, &na, &nd, a5)) {
        e->due = 0;
        tb_port_lost(m, n);
        return 0;
    }
    if ((rc = commit(e, TB_ETMV2_DW, b, n, na, nd, 0, TB_ISA_ARM, false, NULL, 0)) < 0)
        return rc;
    return tb_port_cycle(m, TB_ETMV2_DW, 0);
}

/* 6.1.7: a TR cycle's TRACEPKT[3:0] is the real status; 6.1.6: a TD
 * cycle's TRACEPKT[0] is 0 (1 is a TFO), CA captures keep every cycle
 * (docs/etmv2.md 4, M6). */
static const port_ops etmv2_ops = {
    .proto = TB_PROTO_ETMV2, .wt = TB_ETMV2_WT, .td = TB_ETMV2_TD, .tr = TB_ETMV2_TR,
    .tr_mask = 15, .td_enable = false, .xmax = XMAX, .flush = v2_flush,
    .exception = v2_exception, .end = v2_end,
};

/* Phantom branches (U18) unless no_phantoms. */
static void etmv2_config_more(const tb_etmv2_encoder_opts *o, tb_etmv2_config *c)
{
    c->phantoms = !o->no_phantoms;
}

TB_PORT_MODEL_API(etmv2, TB_PROTO_ETMV2, 0)
