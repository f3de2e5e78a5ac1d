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
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/classify.h"
#include "tracebench/etmv1.h"

enum { W_NONE, W_RNG, W_HELD };

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
    tb_element held;     /* closed range or exception still counting cycles (CA) */
    bool have_held;
    unsigned w_target;
    bool w_sure;         /* no WT since the last status (CA) */
    unsigned trig_held;  /* triggers that came while a range was held */
    uint64_t trig_index;

    uint32_t ctxid;
    bool ctx_known;

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

static void emit(tb_etmv1_decoder *d, const tb_element *el)
{
    if (d->stop)
        return;
    d->emitted++;
    if (d->cb && d->cb(d->ctx, el))
        d->stop = true;
}

static void release_held(tb_etmv1_decoder *d)
{
    tb_element el;

    if (!d->have_held)
        return;
    emit(d, &d->held);
    d->have_held = false;
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
 * overflow or a WT last (docs/etmv1.md 5). */
static void settle_open(tb_etmv1_decoder *d, bool lost)
{
    close_range(d);
    if (d->have_held && (lost || !d->w_sure)) {
        d->held.has_cc = false;
        d->held.cc = 0;
    }
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
    el->has_cc = true;
    el->cc = 1;
    d->held = *el;
    d->have_held = true;
    d->w_target = W_HELD;
    d->w_sure = true;
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

    if (d->rng_open && (r->isa != in->isa || r->end != in->addr))
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
    if (r->count == 32)
        close_range(d);
}

static void step(tb_etmv1_decoder *d, uint64_t index, char atom)
{
    tb_insn in;
    bool direct, indirect;

    if (!d->pc_known) /* nothing to walk from yet (5.5.4) */
        return;
    if (!insn_at(d, index, &in))
        return;
    add_insn(d, index, &in, atom);
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

static void branch(tb_etmv1_decoder *d, const tb_packet *pkt)
{
    tb_element el;
    int off;
    bool marker = pkt->reason >= TB_ETMV1_R_TRACE_ON && pkt->reason <= TB_ETMV1_R_DEBUG;

    if (pkt->isa == TB_ISA_JAZELLE) {
        lose(d, pkt->index, TB_GAP_BAD_PACKET, TB_ERR_UNSUPPORTED);
        return;
    }
    if (marker) /* before its CONTEXT: trace was off or lost up to it */
        settle_open(d, pkt->reason == TB_ETMV1_R_OVERFLOW);
    if (pkt->has_ctxid && (!d->ctx_known || pkt->context_id != d->ctxid)) {
        settle(d);
        d->ctxid = pkt->context_id;
        d->ctx_known = true;
        el_init(&el, TB_ELEM_CONTEXT, pkt->index);
        el.context_id = d->ctxid;
        emit(d, &el);
    }
    if (marker) {
        /* A marker: no instruction; the address is the next one. */
        static const uint8_t why[4] = {0, TB_ISYNC_TRACE_ON, TB_ISYNC_OVERFLOW,
                                       TB_ISYNC_DEBUG_EXIT};

        settle(d);
        trace_on(d, pkt, why[pkt->reason]);
    } else {
        bool was_known = d->pc_known;

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
            }
        } else if (off >= 0) {
            el_init(&el, TB_ELEM_EXCEPTION, pkt->index);
            el.exc_num = exc_number(off);
            el.pref_return = was_known ? d->pc : 0;
            el.err = was_known ? 0 : TB_ERR_NO_SYNC;
            emit_counted(d, &el);
        } else if (was_known) {
            tb_insn in;

            if (insn_at(d, pkt->index, &in)) {
                add_insn(d, pkt->index, &in, 'E');
                close_range(d);
            }
        }
        if (!was_known && pkt->addr_known) {
            settle(d);
            trace_on(d, pkt, TB_ISYNC_PERIODIC);
        }
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
                if (d->w_target == W_RNG)
                    d->rng.cc++;
                else if (d->w_target == W_HELD)
                    d->held.cc++;
            }
        }
        break;
    case TB_PKT_BRANCH:
        branch(d, pkt);
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
    settle_open(d, false);
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
    d->trig_held = 0;
    d->ctx_known = false;
    d->ctxid = 0;
    d->stop = false;
    d->isa = TB_ISA_ARM;
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
    tb_etmv1_decoder_reset(d);
    return d;
}

void tb_etmv1_decoder_free(tb_etmv1_decoder *d)
{
    if (!d)
        return;
    tb_classifier_free(d->cls);
    free(d);
}
