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
#include <string.h>

#include "mem_op.h"
#include "tracebench/classify.h"
#include "tracebench/etmv1.h"
#include "port_cc.h"
#include "backend.h"

enum { W_NONE, W_RNG, W_HELD };

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
    tb_etmv1_config cfg;
    const tb_memimage *mem;
    tb_classifier *cls;

    bool started;
    bool pc_known;
    uint32_t pc;
    tb_isa isa;

    tb_element rng;      /* open range */
    bool rng_open;
    /* The most instructions a range holds: 32, or 1 with cycle ranges
     * (tb_decoder_set_cycle_ranges on cycle-accurate trace: each
     * instruction's count runs from its status to the next, 5.10). */
    uint32_t rmax;
    tb_element held;     /* closed range or exception still counting cycles (CA) */
    bool have_held;
    unsigned w_target;
    bool w_sure;         /* no WT since the last status (CA) */
    unsigned w_apo;      /* APO cycles of the last status still to come */
    bool w_past;         /* a counted cycle past the status's own (CA) */
    unsigned trig_held;  /* triggers that came while a range was held */
    uint64_t trig_index;

    uint32_t ctxid;
    bool ctx_known;

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

    tb_element_cb cb;
    void *ctx;
    int emitted;
    bool stop;
};

static void el_init(tb_element *el, tb_elem_kind k, uint64_t index)
{
    memset(el, 0, sizeof *el);
    el->kind = k;
    el->index = index;
}

static void deliver(tb_etmv1_decoder *d, const tb_element *el)
{
    if (d->stop)
        return;
    d->emitted++;
    if (d->cb && d->cb(d->ctx, el))
        d->stop = true;
}

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

/* Elements go out unless some wait behind data not come yet. */
static void emit(tb_etmv1_decoder *d, const tb_element *el)
{
    if (d->oq_n)
        oq_push(d, el, false, 0);
    else
        deliver(d, el);
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
        el_init(&el, TB_ELEM_NO_SYNC, x->index);
        el.reason = TB_GAP_BAD_PACKET;
        el.err = x->done ? TB_ERR_BAD_PACKET : TB_ERR_TRUNCATED;
        deliver(d, &el);
        return;
    }
    for (k = 0; k < x->op.n; k++) {
        uint8_t fl = 0;

        el_init(&el, TB_ELEM_DATA, x->index);
        el.last_addr = x->addr;
        el.isa = x->isa;
        el.last_size = x->size;
        el.data_size = x->op.size;
        if (x->op.swap ? k == 1 : x->op.store)
            fl |= TB_DATA_STORE;
        if (x->daddr_ok)
            el.data_addr = x->daddr + (x->op.swap ? 0 : k * x->op.size);
        else
            fl |= TB_DATA_NO_ADDR;
        if (d->cfg.data_trace & 1) {
            unsigned i;

            for (i = 0; i < x->op.size; i++) /* LSB first (U17) */
                el.data_value |= (uint32_t)x->b[at + k * x->op.size + i] << (8 * i);
        } else {
            fl |= TB_DATA_NO_VALUE;
        }
        el.data_flags = fl;
        deliver(d, &el);
    }
}

/* Sends what no longer waits. */
static void oq_flush(tb_etmv1_decoder *d)
{
    while (d->oq_n && !d->stop) {
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
            deliver(d, &o->el);
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

static void release_held(tb_etmv1_decoder *d)
{
    tb_element el;

    if (!d->have_held)
        return;
    emit(d, &d->held);
    d->have_held = false;
    if (d->held_data) { /* its last instruction's data follows it */
        oq_push(d, NULL, true, d->held_serial);
        d->held_data = false;
        oq_flush(d);
    }
    for (; d->trig_held; d->trig_held--) {
        el_init(&el, TB_ELEM_EVENT, d->trig_index);
        emit(d, &el);
    }
    if (d->w_target == W_HELD)
        d->w_target = W_NONE;
}

static void close_range(tb_etmv1_decoder *d)
{
    if (!d->rng_open)
        return;
    d->rng_open = false;
    if (d->cfg.cycle_accurate) { /* later W cycles are its last insn's */
        release_held(d);
        d->held = d->rng;
        d->have_held = true;
        if (d->w_target == W_RNG)
            d->w_target = W_HELD;
    } else {
        emit(d, &d->rng);
    }
}

/* Everything before a new status or event goes out. */
static void settle(tb_etmv1_decoder *d)
{
    close_range(d);
    release_held(d);
    d->w_target = W_NONE;
}

/* settle() where no status follows (a trace-on, overflow or debug-exit
 * marker, the end of the trace): the last status's cycles are not
 * closed.  A WT after it may be the FIFO draining with trace off or lost
 * (5.8, 5.9), which nothing tells from its own waits; a TD with
 * TraceEnable ('T', 5.10) last says trace stayed on, since it comes back
 * only with a marker.  So the held element has no cycle count after an
 * overflow or a WT last, nor at the end after any cycle but its APO ones
 * (lost: tb_etmv1_decoder_finish; docs/etmv1.md 5). */
static void settle_open(tb_etmv1_decoder *d, bool lost)
{
    close_range(d);
    tb_port_cc_open(&d->held, d->have_held, lost, d->w_sure);
    settle(d);
}

/* Emits el (an exception); in CA mode it is held so that its BE cycle
 * and the cycles up to the next status (APO, waits) are its own, as a
 * range's BE and APO cycles are (docs/etmv1.md 5). */
static void emit_counted(tb_etmv1_decoder *d, tb_element *el)
{
    settle(d);
    if (!d->cfg.cycle_accurate) {
        emit(d, el);
        return;
    }
    tb_port_cc_count(el, 1); /* the BE */
    d->held = *el;
    d->have_held = true;
    d->w_target = W_HELD;
    d->w_sure = true;
    d->w_apo = 0;
    d->w_past = false;
}

static void lose(tb_etmv1_decoder *d, uint64_t index, tb_gap_reason why, int err)
{
    tb_element el;

    settle(d);
    el_init(&el, TB_ELEM_NO_SYNC, index);
    el.reason = (uint8_t)why;
    el.err = err;
    emit(d, &el);
    d->pc_known = false;
}

/* Classifies the instruction at the PC; false (after an element) when
 * the image lacks it. */
static bool insn_at(tb_etmv1_decoder *d, uint64_t index, tb_insn *in)
{
    size_t avail = 0;
    const uint8_t *b = tb_memimage_ptr(d->mem, d->pc, &avail);

    if (!b || tb_classifier_decode(d->cls, b, avail, d->pc, d->isa, in) < 0) {
        tb_element el;

        settle(d);
        el_init(&el, TB_ELEM_ADDR_NACC, index);
        el.reason = TB_GAP_NO_MEMORY;
        el.start = d->pc;
        el.isa = (uint8_t)d->isa;
        emit(d, &el);
        d->pc_known = false;
        return false;
    }
    return true;
}

static void add_insn(tb_etmv1_decoder *d, uint64_t index, const tb_insn *in, char atom)
{
    tb_element *r = &d->rng;

    /* A full range closes when the next instruction comes, not after
     * its last: the waits after that one's status stay its own. */
    if (d->rng_open && (r->isa != in->isa || r->end != in->addr || r->count >= d->rmax))
        close_range(d);
    release_held(d);
    if (!d->rng_open) {
        el_init(r, TB_ELEM_INSN_RANGE, index);
        r->start = in->addr;
        r->isa = in->isa;
        r->has_cc = d->cfg.cycle_accurate;
        r->context_id = d->ctxid;
        d->rng_open = true;
    }
    if (atom == 'N')
        r->atom_bits |= 1u << r->count;
    r->count++;
    r->end = in->addr + in->size;
    r->last_addr = in->addr;
    r->last_size = in->size;
    r->last_wp = in->wp_class;
    r->last_atom = atom;
    if (d->cfg.cycle_accurate)
        r->cc++;
    d->w_target = W_RNG;
    d->w_sure = true;
    d->w_apo = 0;
    d->w_past = false;
    if (r->count == 32)
        close_range(d);
}

/* A data instruction in (status cycle index): its data packets are
 * awaited; its DATA elements go after the held range when in is its last
 * instruction (after_held, CA), else after what went out so far. */
static void data_begin(tb_etmv1_decoder *d, uint64_t index, const tb_insn *in, bool after_held)
{
    dinsn *x;
    uint8_t size;
    tb_mem_op op = tb_mem_op_at(d->mem, in->addr, in->isa, &size);
    uint32_t serial;

    if (!d->dsync)
        return;
    if (!op.n || op.n > XMAX || d->dq_n == DQMAX) {
        /* An ID/BD on an instruction that transfers nothing: the trace
         * and the image disagree, and its data cannot be measured. */
        tb_element el;

        /* What the instruction's range (held in CA mode) holds goes
         * out first: elements keep the order of their indices. */
        settle(d);
        data_drop(d, false);
        el_init(&el, TB_ELEM_NO_SYNC, index);
        el.reason = TB_GAP_INCONSISTENT;
        el.err = op.n ? TB_ERR_LIMIT : TB_ERR_MISMATCH;
        emit(d, &el);
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
    if (after_held && d->have_held) {
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
    close_range(d); /* its DATA elements follow it */
    data_begin(d, pkt->index, &d->last_in, true);
}

static void step(tb_etmv1_decoder *d, uint64_t index, char atom)
{
    tb_insn in;
    bool direct, indirect;

    d->last_ok = false;
    if (!d->pc_known) /* nothing to walk from yet (5.5.4) */
        return;
    if (!insn_at(d, index, &in))
        return;
    add_insn(d, index, &in, atom);
    d->last_ok = true;
    d->last_in = in;
    direct = in.wp_class == TB_WP_DIRECT || in.wp_class == TB_WP_DIRECT_LINK;
    indirect = in.wp_class == TB_WP_INDIRECT || in.wp_class == TB_WP_INDIRECT_LINK;
    if (atom == 'E' && direct && in.has_target) {
        d->pc = in.target;
        d->isa = (tb_isa)in.target_isa;
        close_range(d);
    } else if (atom == 'E' && indirect) {
        /* An executed indirect branch reports BE (5.1). */
        lose(d, index, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
    } else {
        d->pc += in.size;
    }
}

static int vector_offset(const tb_etmv1_decoder *d, uint32_t a)
{
    uint32_t base = a & ~0x1Fu, off = a & 0x1F;

    if ((base != d->cfg.vector_base && base != 0xFFFF0000u) || (off & 3) ||
        off == 0x14)
        return -1;
    return (int)off;
}

static uint16_t exc_number(int off)
{
    static const tb_exc_kind k[8] = {TB_EXC_RESET, TB_EXC_UNDEF, TB_EXC_SVC,
                                     TB_EXC_PREFETCH_ABORT, TB_EXC_DATA_ABORT,
                                     TB_EXC_NONE, TB_EXC_IRQ, TB_EXC_FIQ};

    return (uint16_t)tb_exc_trace_number(k[(off >> 2) & 7]);
}

static void trace_on(tb_etmv1_decoder *d, const tb_packet *pkt, uint8_t reason)
{
    tb_element el;

    el_init(&el, TB_ELEM_TRACE_ON, pkt->index);
    el.reason = reason;
    el.isa = (uint8_t)pkt->isa;
    el.start = pkt->addr;
    emit(d, &el);
}

/* A BE's context ID, when it names a new one. */
static void context(tb_etmv1_decoder *d, const tb_packet *pkt)
{
    tb_element el;

    if (!pkt->has_ctxid || (d->ctx_known && pkt->context_id == d->ctxid))
        return;
    settle(d);
    d->ctxid = pkt->context_id;
    d->ctx_known = true;
    el_init(&el, TB_ELEM_CONTEXT, pkt->index);
    el.context_id = d->ctxid;
    emit(d, &el);
}

static void branch(tb_etmv1_decoder *d, const tb_packet *pkt)
{
    tb_element el;
    int off;
    bool marker = pkt->reason >= TB_ETMV1_R_TRACE_ON && pkt->reason <= TB_ETMV1_R_DEBUG;

    if (pkt->isa == TB_ISA_JAZELLE) {
        lose(d, pkt->index, TB_GAP_BAD_PACKET, TB_ERR_UNSUPPORTED);
        return;
    }
    if (marker) /* trace was off or lost up to it */
        settle_open(d, pkt->reason == TB_ETMV1_R_OVERFLOW);
    else
        context(d, pkt);
    if (marker) {
        /* A marker: no instruction; the address is the next one. */
        static const uint8_t why[4] = {0, TB_ISYNC_TRACE_ON, TB_ISYNC_OVERFLOW,
                                       TB_ISYNC_DEBUG_EXIT};

        settle(d);
        if (pkt->reason == TB_ETMV1_R_OVERFLOW && d->dq) {
            /* 5.9: trace restarts once the FIFO has drained: from here
             * data units are known again. */
            data_drop(d, false);
            d->dsync = true;
        }
        trace_on(d, pkt, why[pkt->reason]);
        /* Its CONTEXT after the TRACE_ON: the context may have changed
         * while trace was off, and a consumer matches it to the run
         * after the gap (a filter that leaves out the CONTEXTIDR write:
         * ctx_switch, test_roundtrip_port). */
        context(d, pkt);
    } else {
        bool was_known = d->pc_known;
        bool bd = pkt->phdr_format == TB_ETMV1_BD && d->cfg.data_trace;

        off = pkt->addr_known ? vector_offset(d, pkt->addr) : -1;
        if (off == 0x10 && was_known) {
            /* Data abort: the BE is the aborted load/store (5.7.1).  It
             * did not complete: as a cancelled instruction elsewhere
             * (decoder.h), it is not in a range; the exception names it
             * (pref_return, cancelled). */
            tb_insn in;
            uint32_t at = d->pc;

            if (insn_at(d, pkt->index, &in)) {
                el_init(&el, TB_ELEM_EXCEPTION, pkt->index);
                el.exc_num = exc_number(off);
                el.cancelled = true;
                el.pref_return = at;
                emit_counted(d, &el);
                if (bd) /* its data follows the exception (5.4) */
                    data_begin(d, pkt->index, &in, true);
            }
        } else if (off >= 0) {
            tb_insn in;

            el_init(&el, TB_ELEM_EXCEPTION, pkt->index);
            el.exc_num = exc_number(off);
            el.pref_return = was_known ? d->pc : 0;
            el.err = was_known ? 0 : TB_ERR_NO_SYNC;
            emit_counted(d, &el);
            /* A load to the PC that reads as an exception (docs 4). */
            if (bd && was_known && insn_at(d, pkt->index, &in))
                data_begin(d, pkt->index, &in, true);
            else if (bd)
                data_drop(d, false);
        } else if (was_known) {
            tb_insn in;

            if (insn_at(d, pkt->index, &in)) {
                add_insn(d, pkt->index, &in, 'E');
                close_range(d);
                if (bd) /* its data came first (5.4) */
                    data_begin(d, pkt->index, &in, true);
            }
        } else if (bd) {
            data_drop(d, false); /* its length is not known */
        }
        if (!was_known && pkt->addr_known) {
            settle(d);
            trace_on(d, pkt, TB_ISYNC_PERIODIC);
        }
        d->w_apo = 2; /* its status's next two cycles (5.6.1) */
    }
    if (pkt->addr_known) {
        d->pc = pkt->addr;
        d->isa = pkt->isa;
        d->pc_known = true;
    }
}

int tb_etmv1_decoder_packet(tb_etmv1_decoder *d, const tb_packet *pkt,
                            tb_element_cb cb, void *ctx)
{
    tb_element el;
    unsigned i;

    if (!d || !pkt)
        return TB_ERR_INVAL;
    d->cb = cb;
    d->ctx = ctx;
    d->emitted = 0;
    if (!d->started) {
        el_init(&el, TB_ELEM_NO_SYNC, pkt->index);
        el.reason = TB_GAP_INIT;
        emit(d, &el);
        d->started = true;
    }
    switch (pkt->kind) {
    case TB_PKT_ATOM:
        for (i = 0; i < pkt->seq_len && !d->stop; i++) {
            char a = pkt->seq[i];

            if (a != 'W' && a != 'T') {
                step(d, pkt->index, a);
            } else if (d->cfg.cycle_accurate) {
                d->w_sure = a == 'T';
                if (a == 'T' && d->w_apo)
                    d->w_apo--; /* the BE's own APO cycle (5.6.1) */
                else
                    d->w_past = true;
                if (d->w_target == W_RNG)
                    d->rng.cc++;
                else if (d->w_target == W_HELD)
                    d->held.cc++;
            }
        }
        break;
    case TB_PKT_BRANCH:
        branch(d, pkt);
        d->have_br_ev = true; /* after a BD's data_begin: its data is first */
        d->br_ev = pkt->sync_ev;
        break;
    case TB_PKT_DATA:
        if (pkt->phdr_format == TB_ETMV1_ID)
            data_marker(d, pkt);
        else if (d->dq)
            data_units(d, pkt);
        break;
    case TB_PKT_TRIGGER:
        close_range(d);
        if (d->have_held) {
            if (!d->trig_held)
                d->trig_index = pkt->index;
            d->trig_held++;
        } else {
            el_init(&el, TB_ELEM_EVENT, pkt->index);
            emit(d, &el);
        }
        break;
    case TB_PKT_RESERVED:
    case TB_PKT_BAD_SEQUENCE:
    case TB_PKT_BAD_TRACEMODE:
    case TB_PKT_INCOMPLETE:
        data_drop(d, false); /* the parser forgot its units */
        lose(d, pkt->index, TB_GAP_BAD_PACKET,
             pkt->kind == TB_PKT_INCOMPLETE ? TB_ERR_TRUNCATED
             : pkt->err ? pkt->err : TB_ERR_BAD_PACKET);
        break;
    default:
        break;
    }
    return d->stop ? TB_ERR_STOPPED : d->emitted;
}

int tb_etmv1_decoder_finish(tb_etmv1_decoder *d, tb_element_cb cb, void *ctx)
{
    tb_element el;

    if (!d)
        return TB_ERR_INVAL;
    d->cb = cb;
    d->ctx = ctx;
    d->emitted = 0;
    /* The end: an overflow shows no status until its restart marker
     * (5.9), which the end cuts off, and the lost instruction's cycles
     * are WT, then (the FIFO drained) TD with TraceEnable (5.10): so any
     * counted cycle past the last status's own (its APO cycles) may be
     * one, 'T' included (docs/etmv1.md 5). */
    settle_open(d, d->w_past);
    data_drop(d, true); /* data that never came */
    el_init(&el, TB_ELEM_END, 0);
    emit(d, &el);
    return d->stop ? TB_ERR_STOPPED : d->emitted;
}

void tb_etmv1_decoder_reset(tb_etmv1_decoder *d)
{
    if (!d)
        return;
    d->started = d->pc_known = d->rng_open = d->have_held = false;
    d->w_target = W_NONE;
    d->w_apo = 0;
    d->w_past = false;
    d->trig_held = 0;
    d->ctx_known = false;
    d->ctxid = 0;
    d->stop = false;
    d->isa = TB_ISA_ARM;
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

tb_etmv1_decoder *tb_etmv1_decoder_new(const tb_etmv1_config *cfg,
                                       const tb_memimage *mem)
{
    tb_etmv1_decoder *d;

    if (!cfg || !mem || tb_etmv1_config_check(cfg) < 0)
        return NULL;
    if (!(d = calloc(1, sizeof *d)))
        return NULL;
    if (!(d->cls = tb_classifier_new())) {
        free(d);
        return NULL;
    }
    d->cfg = *cfg;
    d->mem = mem;
    d->rmax = 32;
    if (cfg->data_trace && (!(d->dq = malloc(DQMAX * sizeof *d->dq)) ||
                            !(d->oq = malloc(OQMAX * sizeof *d->oq)))) {
        tb_etmv1_decoder_free(d);
        return NULL;
    }
    tb_etmv1_decoder_reset(d);
    return d;
}

void tb_etmv1_decoder_free(tb_etmv1_decoder *d)
{
    if (!d)
        return;
    tb_classifier_free(d->cls);
    free(d->dq);
    free(d->oq);
    free(d);
}

/* ---- behind tb_decoder (backend.h) ---- */

static void *op_make(const tb_config *cfg, const tb_memimage *mem)
{
    tb_etmv1_config c;

    return tb_etmv1_config_from_tb(&c, cfg) < 0 ? NULL : tb_etmv1_decoder_new(&c, mem);
}

static void op_destroy(void *d) { tb_etmv1_decoder_free(d); }
static void op_reset(void *d) { tb_etmv1_decoder_reset(d); }

static void op_cycle_ranges(void *vd, bool on)
{
    tb_etmv1_decoder *d = vd;

    d->rmax = on && d->cfg.cycle_accurate ? 1 : 32;
}

static int op_packet(void *d, const tb_packet *pkt, tb_element_cb cb, void *ctx)
{
    return tb_etmv1_decoder_packet(d, pkt, cb, ctx);
}

static int op_finish(void *d, tb_element_cb cb, void *ctx)
{
    return tb_etmv1_decoder_finish(d, cb, ctx);
}

/* No fused path: every packet goes through op_packet. */
const tb_decoder_ops tb_etmv1_decoder_ops = {
    .protocol = TB_PROTO_ETMV1,
    .make = op_make,
    .destroy = op_destroy,
    .packet = op_packet,
    .finish = op_finish,
    .reset = op_reset,
    .cycle_ranges = op_cycle_ranges,
};
