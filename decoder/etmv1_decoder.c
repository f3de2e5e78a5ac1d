/*
 * ETMv1 packets (etmv1_parser.c) + memory image -> trace elements
 * (decoder.h conventions; docs/etmv1.md 5).
 *
 * 'E'/'N' statuses walk the image one instruction each; a direct branch
 * with 'E' goes to its target (its address is in the code, 5.1).  A
 * BRANCH is an instruction executed that went to the address, or with
 * reason 1-3 a marker with no instruction (trace on, overflow, debug
 * exit), or a BE to an exception vector: the exception (docs 4).  The PC
 * is known after the first 5-packet address (5.5.4).
 *
 * Data trace (docs/etmv1.md 9): an ID (DATA marker) or BD names its
 * instruction, whose opcode gives how many bytes of data packets it has
 * (5.4 Table 5.2).  Its packets start at the first data unit at or
 * after its status cycle, or right after the previous data instruction's
 * when the FIFO was still sending those (the FIFO keeps order and sends
 * whenever it holds something); units no instruction can own are idle
 * cycles' and are skipped.  Elements wait in a queue behind an
 * instruction whose data has not all come, so that its DATA elements
 * follow its range.
 */
#include <stdlib.h>

#include "dec_util.h"
#include "mem_op.h"
#include "tracebench/etmv1.h"
#include "port_internal.h"

#define XMAX 64u                /* transfers of one instruction */
#define DBYTES (5u + 4u * XMAX) /* its data packets at most */
#define DQMAX 4096u             /* data instructions waiting for data */
#define OQMAX 16384u            /* elements waiting behind them */

/* A data instruction (ID or BD) and its data packets so far. */
typedef struct dinsn {
    uint64_t index;       /* its status cycle */
    uint32_t addr;        /* the instruction */
    uint8_t isa, size;
    tb_mem_op op;
    uint8_t b[DBYTES];
    unsigned n, need;     /* bytes; need 0: address not complete yet */
    bool started, done, dead;
    bool have_lo;         /* 4-bit port: a low nibble is in lo */
    uint8_t lo;
    uint32_t daddr;       /* the data address, when daddr_ok */
    bool daddr_ok, bad;
    bool has_floor;       /* branches came before it: their addresses */
    uint32_t floor;       /* precede its data (TRACESYNC events < floor) */
} dinsn;

/* An element, or (data) the DATA elements of dq entry `serial`. */
typedef struct oent {
    tb_element el;
    bool data;
    uint32_t serial;
} oent;

struct tb_etmv1_decoder {
    tb_port_dec port;     /* first: the core (port_internal.h) */
    tb_etmv1_config cfg;

    /* Data trace (allocated when ETMCR[3:2] != 0). */
    bool last_ok;         /* last_in: the instruction the last atom walked */
    tb_insn last_in;
    bool dsync;           /* data units can be given to instructions */
    uint32_t last_daddr;  /* last data address (5.7.3) */
    bool daddr_known;     /* after a 5-packet one */
    dinsn *dq;            /* ring: data instructions not yet out */
    unsigned dq_h, dq_n, dq_cur; /* dq_cur: the first not done */
    uint32_t dq_serial;   /* serial of dq[dq_h] */
    oent *oq;             /* ring: elements waiting for data */
    unsigned oq_h, oq_n;
    bool held_data;       /* the held range's last instruction has data */
    uint32_t held_serial;
    bool have_br_ev;      /* the TRACESYNC event of the last BRANCH */
    uint32_t br_ev;
};

static void data_drop(tb_etmv1_decoder *d, bool truncated);

static void oq_push(tb_etmv1_decoder *d, const tb_element *el, bool data, uint32_t serial)
{
    oent *o;

    if (d->oq_n == OQMAX) /* data that does not come: give up on it */
        data_drop(d, true);
    o = &d->oq[(d->oq_h + d->oq_n++) % OQMAX];
    if (el)
        o->el = *el;
    o->data = data;
    o->serial = serial;
}

/* Elements go out unless some wait behind data not come yet (the
 * core's emit hook, with data trace). */
static void emit(tb_port_dec *c, const tb_element *el)
{
    tb_etmv1_decoder *d = (tb_etmv1_decoder *)c;

    if (d->oq_n)
        oq_push(d, el, false, 0);
    else
        tb_port_dec_deliver(&d->port, el);
}

static dinsn *dq_at(tb_etmv1_decoder *d, unsigned i)
{
    return &d->dq[(d->dq_h + i) % DQMAX];
}

/* The DATA elements of a data instruction: each transfer in order, its
 * address (an LSM's contiguous from the first, SWP's the same twice),
 * direction and size from the opcode. */
static void data_elements(tb_etmv1_decoder *d, const dinsn *x)
{
    tb_element el;
    unsigned k, at = x->need - (d->cfg.data_trace & 1 ? x->op.n * x->op.size : 0);

    if (x->dead)
        return;
    if (x->bad) {
        tb_elem_init(&el, TB_ELEM_NO_SYNC, x->index);
        el.reason = TB_GAP_BAD_PACKET;
        el.err = x->done ? TB_ERR_BAD_PACKET : TB_ERR_TRUNCATED;
        tb_port_dec_deliver(&d->port, &el);
        return;
    }
    for (k = 0; k < x->op.n; k++) {
        tb_port_dec_data_el(&el, x->index, x->addr, x->isa, x->size, &x->op, k, x->daddr_ok,
                            x->daddr);
        if (d->cfg.data_trace & 1) {
            unsigned i;

            for (i = 0; i < x->op.size; i++) /* LSB first (U17) */
                el.data_value |= (uint32_t)x->b[at + k * x->op.size + i] << (8 * i);
        } else {
            el.data_flags |= TB_DATA_NO_VALUE;
        }
        tb_port_dec_deliver(&d->port, &el);
    }
}

/* Sends what no longer waits. */
static void oq_flush(tb_etmv1_decoder *d)
{
    while (d->oq_n && !d->port.stop) {
        oent *o = &d->oq[d->oq_h];

        if (o->data) {
            dinsn *x;

            if (!d->dq_n || o->serial != d->dq_serial)
                break; /* cannot happen: placeholders follow dq order */
            x = dq_at(d, 0);
            if (!x->done && !x->dead && !x->bad)
                break;
            data_elements(d, x);
            d->dq_h = (d->dq_h + 1) % DQMAX;
            d->dq_n--;
            d->dq_serial++;
            if (d->dq_cur)
                d->dq_cur--;
        } else {
            tb_port_dec_deliver(&d->port, &o->el);
        }
        d->oq_h = (d->oq_h + 1) % OQMAX;
        d->oq_n--;
    }
}

/* Data can no longer be followed: what waits goes out (truncated: an
 * error element each), the rest is not given to any instruction. */
static void data_drop(tb_etmv1_decoder *d, bool truncated)
{
    unsigned i;

    if (!d->dq)
        return;
    for (i = d->dq_cur; i < d->dq_n; i++) {
        dinsn *x = dq_at(d, i);

        x->dead = !truncated;
        x->bad = truncated;
    }
    d->dq_cur = d->dq_n;
    d->dsync = false;
    d->daddr_known = false;
    oq_flush(d);
}

/* A data instruction in (status cycle index): its data packets are
 * awaited; its DATA elements go after the held range when in is its last
 * instruction (after_held, CA), else after what went out so far. */
static void data_begin(tb_etmv1_decoder *d, uint64_t index, const tb_insn *in, bool after_held)
{
    dinsn *x;
    uint8_t size;
    tb_mem_op op = tb_mem_op_at(d->port.mem, in->addr, in->isa, &size);
    uint32_t serial;

    if (!d->dsync)
        return;
    if (!op.n || op.n > XMAX || d->dq_n == DQMAX) {
        /* An ID/BD on an instruction that transfers nothing: the trace
         * and the image disagree, and its data cannot be measured. */

        /* What the instruction's range (held in CA mode) holds goes
         * out first: elements keep the order of their indices. */
        tb_port_dec_settle(&d->port);
        data_drop(d, false);
        tb_port_dec_emit_gap(&d->port, index, TB_GAP_INCONSISTENT,
                             op.n ? TB_ERR_LIMIT : TB_ERR_MISMATCH);
        return;
    }
    serial = d->dq_serial + d->dq_n;
    x = dq_at(d, d->dq_n++);
    x->n = x->need = 0;
    x->started = x->done = x->dead = x->have_lo = x->daddr_ok = x->bad = false;
    x->index = index;
    x->addr = in->addr;
    x->isa = in->isa;
    x->size = size;
    x->op = op;
    x->has_floor = d->have_br_ev;
    x->floor = d->br_ev + 1;
    if (!(d->cfg.data_trace & 2)) /* values only: no address part */
        x->need = op.n * op.size;
    if (after_held && d->port.have_held) {
        d->held_data = true;
        d->held_serial = serial;
    } else {
        oq_push(d, NULL, true, serial);
    }
}

/* x has all its bytes: its data address (compressed against the last
 * one, 5.7.3: a 5-packet one has reason b000). */
static void data_done(tb_etmv1_decoder *d, dinsn *x)
{
    x->done = true;
    if (d->cfg.data_trace & 2) {
        unsigned na = tb_etmv1_addr_length(x->b, x->n);
        uint8_t reason;
        bool j;

        tb_etmv1_addr_decode(x->b, na, d->last_daddr, &d->last_daddr, &reason, &j);
        if (reason || j) {
            x->bad = true;
            d->daddr_known = false;
            return;
        }
        if (na == 5)
            d->daddr_known = true;
        x->daddr = d->last_daddr;
        x->daddr_ok = d->daddr_known;
    }
}

/* One data byte for x. */
static void data_byte(tb_etmv1_decoder *d, dinsn *x, uint8_t b)
{
    x->b[x->n++] = b;
    if (!x->need && ((b & 0x80) == 0 || x->n == 5)) /* address complete */
        x->need = x->n + (d->cfg.data_trace & 1 ? x->op.n * x->op.size : 0);
    if (x->need && x->n >= x->need)
        data_done(d, x);
}

/* The data units (nibbles on a 4-bit port, else bytes) of one cycle. */
static void data_units(tb_etmv1_decoder *d, const tb_packet *pkt)
{
    unsigned i;

    for (i = 0; i < pkt->size && d->dsync; i++) {
        dinsn *x;
        uint8_t u = pkt->bytes[i];

        if (d->dq_cur == d->dq_n)
            break; /* no data instruction waits: an idle cycle's */
        x = dq_at(d, d->dq_cur);
        if (!x->started) {
            if (pkt->index < x->index)
                continue; /* before its status: idle */
            /* While the address of a branch before x is still to come,
             * it is ahead of x's data in the FIFO: a unit now is not
             * x's (on a 16-bit port, the empty high byte before an
             * address start, U13). */
            if (x->has_floor && (int32_t)(pkt->sync_ev - x->floor) < 0)
                continue;
            x->started = true;
        }
        if (d->cfg.port_width == 4) {
            if (!x->have_lo) {
                x->lo = u & 0xF;
                x->have_lo = true;
                continue;
            }
            x->have_lo = false;
            u = (uint8_t)(x->lo | (u & 0xF) << 4);
        }
        data_byte(d, x, u);
        if (x->done)
            d->dq_cur++;
    }
    oq_flush(d);
}

/* The DATA marker of an ID: the instruction the atom before it walked. */
static void data_marker(tb_etmv1_decoder *d, const tb_packet *pkt)
{
    if (!d->cfg.data_trace)
        return;
    if (!d->last_ok) { /* its instruction is not known: nor its length */
        data_drop(d, false);
        return;
    }
    d->last_ok = false;
    tb_port_dec_close_range(&d->port); /* its DATA elements follow it */
    data_begin(d, pkt->index, &d->last_in, true);
}

/* A status that is an instruction (the core's step hook). */
static void step(tb_port_dec *c, uint64_t index, char atom)
{
    tb_etmv1_decoder *d = (tb_etmv1_decoder *)c;
    tb_insn in;
    int k;

    d->last_ok = false;
    if (!c->pc_known) /* nothing to walk from yet (5.5.4) */
        return;
    if ((k = tb_port_dec_walk(c, index, atom, &in)) == TB_PORT_NO_INSN)
        return;
    d->last_ok = true;
    d->last_in = in;
    if (k == TB_PORT_INDIRECT) /* an executed indirect branch reports BE (5.1) */
        tb_port_dec_lose(c, index, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
}

static void branch(tb_etmv1_decoder *d, const tb_packet *pkt)
{
    tb_element el;
    int off;
    bool marker = pkt->reason >= TB_ETMV1_R_TRACE_ON && pkt->reason <= TB_ETMV1_R_DEBUG;

    if (pkt->abandoned && !pkt->addr_bits) {
        /* Abandoned, its address not told apart (5.6.1): the
         * instruction ran; a direct branch's target is in the code, an
         * indirect one's is lost. */
        tb_insn in;

        d->last_ok = false;
        if (d->port.pc_known &&
            tb_port_dec_walk(&d->port, pkt->index, 'E', &in) == TB_PORT_INDIRECT)
            tb_port_dec_lose(&d->port, pkt->index, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
        return;
    }
    if (pkt->isa == TB_ISA_JAZELLE) {
        tb_port_dec_lose(&d->port, pkt->index, TB_GAP_BAD_PACKET, TB_ERR_UNSUPPORTED);
        return;
    }
    if (marker) /* trace was off or lost up to it */
        tb_port_dec_settle_open(&d->port, pkt->reason == TB_ETMV1_R_OVERFLOW);
    else
        tb_port_dec_context(&d->port, pkt, false);
    if (marker) {
        /* A marker: no instruction; the address is the next one. */
        static const uint8_t why[4] = {0, TB_ISYNC_TRACE_ON, TB_ISYNC_OVERFLOW,
                                       TB_ISYNC_DEBUG_EXIT};

        tb_port_dec_settle(&d->port);
        if (pkt->reason == TB_ETMV1_R_OVERFLOW && d->dq) {
            /* 5.9: trace restarts once the FIFO has drained: from here
             * data units are known again. */
            data_drop(d, false);
            d->dsync = true;
        }
        tb_port_dec_trace_on(&d->port, pkt, why[pkt->reason]);
        /* Its CONTEXT after the TRACE_ON: the context may have changed
         * while trace was off, and a consumer matches it to the run
         * after the gap (a filter that leaves out the CONTEXTIDR write:
         * ctx_switch, test_roundtrip_port). */
        tb_port_dec_context(&d->port, pkt, false);
    } else {
        bool was_known = d->port.pc_known;
        bool bd = pkt->phdr_format == TB_ETMV1_BD && d->cfg.data_trace;

        off = pkt->addr_known ? tb_port_dec_vector_offset(&d->port, pkt->addr) : -1;
        if (off == 0x10 && was_known) {
            /* Data abort: the BE is the aborted load/store (5.7.1).  It
             * did not complete: as a cancelled instruction elsewhere
             * (decoder.h), it is not in a range; the exception names it
             * (pref_return, cancelled). */
            tb_insn in;
            uint32_t at = d->port.pc;

            if (tb_port_dec_insn_at(&d->port, pkt->index, &in)) {
                tb_port_dec_exception(&el, pkt->index, off, true, true, at);
                tb_port_dec_emit_counted(&d->port, &el, 1); /* its BE */
                if (bd) /* its data follows the exception (5.4) */
                    data_begin(d, pkt->index, &in, true);
            }
        } else if (off >= 0) {
            tb_insn in;

            tb_port_dec_exception(&el, pkt->index, off, false, was_known, d->port.pc);
            tb_port_dec_emit_counted(&d->port, &el, 1); /* its BE */
            /* A load to the PC that reads as an exception (docs 4). */
            if (bd && was_known && tb_port_dec_insn_at(&d->port, pkt->index, &in))
                data_begin(d, pkt->index, &in, true);
            else if (bd)
                data_drop(d, false);
        } else if (was_known) {
            tb_insn in;

            if (tb_port_dec_insn_at(&d->port, pkt->index, &in)) {
                tb_port_dec_add_insn(&d->port, pkt->index, &in, 'E');
                tb_port_dec_close_range(&d->port);
                if (bd) /* its data came first (5.4) */
                    data_begin(d, pkt->index, &in, true);
            }
        } else if (bd) {
            data_drop(d, false); /* its length is not known */
        }
        if (!was_known && pkt->addr_known) {
            tb_port_dec_settle(&d->port);
            tb_port_dec_trace_on(&d->port, pkt, TB_ISYNC_PERIODIC);
        }
        /* its status's next two cycles (5.6.1); an abandoned branch
         * had none: the status abandoning it came in the first */
        d->port.w_apo = pkt->abandoned ? 0 : 2;
    }
    if (pkt->addr_known)
        tb_port_dec_goto(&d->port, pkt->addr, pkt->isa);
}

/* The packets of ETMv1's own (the core's packet hook). */
static void packet(tb_port_dec *c, const tb_packet *pkt)
{
    tb_etmv1_decoder *d = (tb_etmv1_decoder *)c;

    if (pkt->kind == TB_PKT_BRANCH) {
        branch(d, pkt);
        d->have_br_ev = true; /* after a BD's data_begin: its data is first */
        d->br_ev = pkt->sync_ev;
    } else if (pkt->kind == TB_PKT_DATA) {
        if (pkt->phdr_format == TB_ETMV1_ID)
            data_marker(d, pkt);
        else if (d->dq)
            data_units(d, pkt);
    }
}

/* The held range went out: its last instruction's data follows it. */
static void held_out(tb_port_dec *c)
{
    tb_etmv1_decoder *d = (tb_etmv1_decoder *)c;

    if (d->held_data) {
        oq_push(d, NULL, true, d->held_serial);
        d->held_data = false;
        oq_flush(d);
    }
}

/* A bad packet: the parser forgot its units. */
static void bad(tb_port_dec *c)
{
    data_drop((tb_etmv1_decoder *)c, false);
}

/* The end: an overflow shows no status until its restart marker (5.9),
 * which the end cuts off, and the lost instruction's cycles are WT, then
 * (the FIFO drained) TD with TraceEnable (5.10): so any counted cycle
 * past the last status's own (its APO cycles) may be one, 'T' included
 * (docs/etmv1.md 5).  Data that never came is an error. */
static void end(tb_port_dec *c)
{
    tb_port_dec_settle_open(c, c->w_past);
    data_drop((tb_etmv1_decoder *)c, true);
}

static void reset(tb_port_dec *c)
{
    tb_etmv1_decoder *d = (tb_etmv1_decoder *)c;

    d->last_ok = false;
    d->dsync = true; /* the capture starts with the FIFO empty */
    d->daddr_known = false;
    d->last_daddr = 0;
    d->dq_h = d->dq_n = d->dq_cur = 0;
    d->dq_serial = 0;
    d->oq_h = d->oq_n = 0;
    d->held_data = false;
    d->have_br_ev = false;
}

static int init(tb_port_dec *c)
{
    tb_etmv1_decoder *d = (tb_etmv1_decoder *)c;

    if (!(d->dq = malloc(DQMAX * sizeof *d->dq)) || !(d->oq = malloc(OQMAX * sizeof *d->oq)))
        return TB_ERR_NOMEM;
    return 0;
}

static void fini(tb_port_dec *c)
{
    tb_etmv1_decoder *d = (tb_etmv1_decoder *)c;

    free(d->dq);
    free(d->oq);
}

/* Without data trace nothing waits: elements go straight out. */
static const tb_port_dec_ops plain_ops = {
    .protocol = TB_PROTO_ETMV1, .end = end,
    .reset = reset, .t_wait = true,
};
static const tb_port_dec_ops data_ops = {
    .protocol = TB_PROTO_ETMV1, .emit = emit, .held_out = held_out,
    .bad = bad, .end = end, .reset = reset, .init = init,
    .fini = fini, .t_wait = true,
};

/* tb_etmv1_decoder_new/_free/_reset/_packet/_finish and
 * tb_etmv1_decoder_ops (no fused path): the core's (port_internal.h). */
TB_PORT_DECODER_API(etmv1, ETMV1, cfg->data_trace ? &data_ops : &plain_ops, step, packet);
