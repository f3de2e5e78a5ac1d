/*
 * The trace-port decoders' core (port_internal.h): ranges, held
 * elements and their cycles, the walk, trace-on, context, exceptions,
 * triggers, losses and the life cycle, once for ETMv1 (IHI0014Q chapter
 * 5; docs/etmv1.md 5) and ETMv2 (chapter 6; docs/etmv2.md 5).
 *
 * Cycle-accurate (port_cc.h): an element's count runs from its status
 * to the next, so a closed range or an exception is held while the wait
 * cycles after its status come, and goes out at the next status.
 */
#include <stdlib.h>

#include "dec_util.h"
#include "port_cc.h"
#include "port_internal.h"

void tb_port_dec_deliver(tb_port_dec *c, const tb_element *el)
{
    if (c->stop)
        return;
    c->emitted++;
    if (c->cb && c->cb(c->ctx, el))
        c->stop = true;
}

void tb_port_dec_emit(tb_port_dec *c, const tb_element *el)
{
    if (c->ops->emit)
        c->ops->emit(c, el);
    else
        tb_port_dec_deliver(c, el);
}

void tb_port_dec_emit_gap(tb_port_dec *c, uint64_t index, tb_gap_reason why, int err)
{
    tb_element el;

    tb_elem_init(&el, TB_ELEM_NO_SYNC, index);
    el.reason = (uint8_t)why;
    el.err = err;
    tb_port_dec_emit(c, &el);
}

void tb_port_dec_release_held(tb_port_dec *c)
{
    tb_element el;

    if (!c->have_held)
        return;
    tb_port_dec_emit(c, &c->held);
    c->have_held = false;
    if (c->ops->held_out) /* what waited behind it: its data */
        c->ops->held_out(c);
    for (; c->trig_held; c->trig_held--) {
        tb_elem_init(&el, TB_ELEM_EVENT, c->trig_index);
        tb_port_dec_emit(c, &el);
    }
    if (c->w_target == TB_PORT_W_HELD)
        c->w_target = TB_PORT_W_NONE;
}

void tb_port_dec_close_range(tb_port_dec *c)
{
    c->undo_ok = false;
    if (!c->rng_open)
        return;
    c->rng_open = false;
    if (c->cycle_accurate) { /* later W cycles are its last insn's */
        tb_port_dec_release_held(c);
        c->held = c->rng;
        c->have_held = true;
        if (c->w_target == TB_PORT_W_RNG)
            c->w_target = TB_PORT_W_HELD;
    } else {
        tb_port_dec_emit(c, &c->rng);
    }
}

/* A deferred CONTEXT goes out once the range holding its status's
 * instruction has (tb_port_dec_context). */
void tb_port_dec_release_context(tb_port_dec *c)
{
    if (!c->ctx_pending)
        return;
    tb_port_dec_close_range(c);
    tb_port_dec_release_held(c);
    c->ctx_pending = false;
    tb_port_dec_emit(c, &c->ctx_el);
}

/* Everything before a new status or event goes out. */
void tb_port_dec_settle(tb_port_dec *c)
{
    tb_port_dec_close_range(c);
    tb_port_dec_release_held(c);
    tb_port_dec_release_context(c);
    c->w_target = TB_PORT_W_NONE;
}

/* settle() where no status follows (a trace-on, overflow or debug-exit
 * marker, the end of the trace): the held count is open (port_cc.h);
 * lost: after an overflow, or whatever the protocol says at the end. */
void tb_port_dec_settle_open(tb_port_dec *c, bool lost)
{
    tb_port_dec_close_range(c);
    tb_port_cc_open(&c->held, c->have_held, lost, c->w_sure);
    tb_port_dec_settle(c);
}

/* Emits el (an exception); in CA mode it is held with the `cc` cycles
 * already its own (ETMv1: its BE; ETMv2: the cancelled instruction's),
 * so that the cycles up to the next status count for it (port_cc.h). */
void tb_port_dec_emit_counted(tb_port_dec *c, tb_element *el, uint32_t cc)
{
    tb_port_dec_settle(c);
    if (!c->cycle_accurate) {
        tb_port_dec_emit(c, el);
        return;
    }
    tb_port_cc_count(el, cc);
    c->held = *el;
    c->have_held = true;
    c->w_target = TB_PORT_W_HELD;
    c->w_sure = true;
    c->w_apo = 0;
    c->w_past = false;
}

void tb_port_dec_lose(tb_port_dec *c, uint64_t index, tb_gap_reason why, int err)
{
    tb_port_dec_settle(c);
    tb_port_dec_emit_gap(c, index, why, err);
    c->pc_known = false;
    if (c->ops->lost)
        c->ops->lost(c);
}

/* Classifies the instruction at the PC; false (after an element) when
 * the image lacks it. */
bool tb_port_dec_insn_at(tb_port_dec *c, uint64_t index, tb_insn *in)
{
    size_t avail = 0;
    const uint8_t *b = tb_memimage_ptr(c->mem, c->pc, &avail);

    if (!b || tb_classifier_decode(c->cls, b, avail, c->pc, c->isa, in) < 0) {
        tb_element el;

        tb_port_dec_settle(c);
        tb_elem_init(&el, TB_ELEM_ADDR_NACC, index);
        el.reason = TB_GAP_NO_MEMORY;
        el.start = c->pc;
        el.isa = (uint8_t)c->isa;
        tb_port_dec_emit(c, &el);
        c->pc_known = false;
        return false;
    }
    return true;
}

void tb_port_dec_add_insn(tb_port_dec *c, uint64_t index, const tb_insn *in, char atom)
{
    tb_element *r = &c->rng;

    /* A full range closes when the next instruction comes, not after
     * its last: the waits after that one's status stay its own (and,
     * retract, an E bit can still take it back, 6.7.1). */
    if (c->rng_open && (r->isa != in->isa || r->end != in->addr || r->count >= c->rmax))
        tb_port_dec_close_range(c);
    tb_port_dec_release_held(c);
    tb_port_dec_release_context(c); /* a new context: a new range */
    if (c->ops->retract) {
        c->undo = *r;
        c->undo_ok = true;
        if (!c->rng_open)
            c->undo.count = 0;
    }
    if (!c->rng_open) {
        tb_elem_init(r, TB_ELEM_INSN_RANGE, index);
        r->start = in->addr;
        r->isa = in->isa;
        r->has_cc = c->cycle_accurate;
        r->context_id = c->ctxid;
        c->rng_open = true;
    }
    if (atom == 'N')
        r->atom_bits |= 1u << r->count;
    r->count++;
    r->end = in->addr + in->size;
    r->last_addr = in->addr;
    r->last_size = in->size;
    r->last_wp = in->wp_class;
    r->last_atom = atom;
    if (c->cycle_accurate)
        r->cc++;
    c->w_target = TB_PORT_W_RNG;
    c->w_sure = true;
    c->w_apo = 0;
    c->w_past = false;
    if (!c->ops->retract && r->count == 32)
        tb_port_dec_close_range(c);
}

/* One status at the PC: the instruction there (in) joins the range; an
 * executed direct branch goes to its target (its address is in the
 * code, 5.1) and closes it.  What an executed indirect branch does is
 * the protocol's (TB_PORT_INDIRECT: the PC is not moved). */
int tb_port_dec_walk(tb_port_dec *c, uint64_t index, char atom, tb_insn *in)
{
    bool direct, indirect;

    if (!tb_port_dec_insn_at(c, index, in))
        return TB_PORT_NO_INSN;
    tb_port_dec_add_insn(c, index, in, atom);
    direct = in->wp_class == TB_WP_DIRECT || in->wp_class == TB_WP_DIRECT_LINK;
    indirect = in->wp_class == TB_WP_INDIRECT || in->wp_class == TB_WP_INDIRECT_LINK;
    if (atom == 'E' && direct && in->has_target) {
        c->pc = in->target;
        c->isa = (tb_isa)in->target_isa;
        tb_port_dec_close_range(c);
        return TB_PORT_DIRECT;
    }
    if (atom == 'E' && indirect)
        return TB_PORT_INDIRECT;
    c->pc += in->size;
    return TB_PORT_SEQ;
}

void tb_port_dec_goto(tb_port_dec *c, uint32_t addr, tb_isa isa)
{
    c->pc = addr;
    c->isa = isa;
    c->pc_known = true;
}

/* The vector a branch target is (0x00..0x1C but 0x14, at the configured
 * base or the high vectors), or -1. */
int tb_port_dec_vector_offset(const tb_port_dec *c, uint32_t a)
{
    uint32_t base = a & ~0x1Fu, off = a & 0x1F;

    if ((base != c->vector_base && base != 0xFFFF0000u) || (off & 3) || off == 0x14)
        return -1;
    return (int)off;
}

uint16_t tb_port_dec_exc_number(int off)
{
    static const tb_exc_kind k[8] = {TB_EXC_RESET, TB_EXC_UNDEF, TB_EXC_SVC,
                                     TB_EXC_PREFETCH_ABORT, TB_EXC_DATA_ABORT,
                                     TB_EXC_NONE, TB_EXC_IRQ, TB_EXC_FIQ};

    return (uint16_t)tb_exc_trace_number(k[(off >> 2) & 7]);
}

/* The EXCEPTION of vector offset off; its preferred return at, when
 * known (else the error says the PC was not). */
void tb_port_dec_exception(tb_element *el, uint64_t index, int off, bool cancelled,
                           bool known, uint32_t at)
{
    tb_elem_init(el, TB_ELEM_EXCEPTION, index);
    el->exc_num = tb_port_dec_exc_number(off);
    el->cancelled = cancelled;
    el->pref_return = known ? at : 0;
    el->err = known ? 0 : TB_ERR_NO_SYNC;
}

/* Its address: an LSM's contiguous from the first, SWP's the same twice;
 * direction and size from the opcode (mem_op.h). */
void tb_port_dec_data_el(tb_element *el, uint64_t index, uint32_t addr, uint8_t isa,
                         uint8_t size, const tb_mem_op *op, unsigned k, bool addr_ok,
                         uint32_t daddr)
{
    uint8_t fl = 0;

    tb_elem_init(el, TB_ELEM_DATA, index);
    el->last_addr = addr;
    el->isa = isa;
    el->last_size = size;
    el->data_size = op->size;
    if (op->swap ? k == 1 : op->store)
        fl |= TB_DATA_STORE;
    if (addr_ok)
        el->data_addr = daddr + (op->swap ? 0 : k * op->size);
    else
        fl |= TB_DATA_NO_ADDR;
    el->data_flags = fl;
}

void tb_port_dec_trace_on(tb_port_dec *c, const tb_packet *pkt, uint8_t reason)
{
    tb_element el;

    tb_elem_init(&el, TB_ELEM_TRACE_ON, pkt->index);
    el.reason = reason;
    el.isa = (uint8_t)pkt->isa;
    el.start = pkt->addr;
    tb_port_dec_emit(c, &el);
}

/* A packet's context ID, when it names a new one.  Not deferred, what
 * came before goes out first; deferred (ETMv2's context ID packet), the
 * CONTEXT waits for the range holding its status's instruction
 * (tb_port_dec_release_context), a second change's releasing the
 * first's. */
void tb_port_dec_context(tb_port_dec *c, const tb_packet *pkt, bool defer)
{
    if (!pkt->has_ctxid || (c->ctx_known && pkt->context_id == c->ctxid))
        return;
    if (!defer)
        tb_port_dec_settle(c);
    else
        tb_port_dec_release_context(c);
    c->ctxid = pkt->context_id;
    c->ctx_known = true;
    tb_elem_init(&c->ctx_el, TB_ELEM_CONTEXT, pkt->index);
    c->ctx_el.context_id = c->ctxid;
    c->ctx_pending = true;
    if (!defer)
        tb_port_dec_release_context(c);
}

/* An ATOM run: statuses walk; in CA mode the other counted cycles (W, and
 * ETMv1's T) go to the open range or the held element.  A 'T' is sure
 * to be the last status's (5.10); one of the APO cycles a BE still has
 * (w_apo, 5.6.1) is no cycle past it. */
static void atoms(tb_port_dec *c, const tb_packet *pkt)
{
    unsigned i;

    for (i = 0; i < pkt->seq_len && !c->stop; i++) {
        char a = pkt->seq[i];

        if (a != 'W' && (a != 'T' || !c->ops->t_wait)) {
            c->ops->step(c, pkt->index, a);
        } else if (c->cycle_accurate) {
            c->w_sure = a == 'T';
            if (a == 'T' && c->w_apo)
                c->w_apo--;
            else
                c->w_past = true;
            if (c->w_target == TB_PORT_W_RNG)
                c->rng.cc++;
            else if (c->w_target == TB_PORT_W_HELD)
                c->held.cc++;
        }
    }
}

/* A trigger: after the held element, whose cycles are still counting. */
static void trigger(tb_port_dec *c, const tb_packet *pkt)
{
    tb_element el;

    tb_port_dec_close_range(c);
    if (c->have_held) {
        if (!c->trig_held)
            c->trig_index = pkt->index;
        c->trig_held++;
    } else {
        tb_elem_init(&el, TB_ELEM_EVENT, pkt->index);
        tb_port_dec_emit(c, &el);
    }
}

static void enter(tb_port_dec *c, tb_element_cb cb, void *ctx)
{
    c->cb = cb;
    c->ctx = ctx;
    c->emitted = 0;
}

int tb_port_dec_op_packet(void *d, const tb_packet *pkt, tb_element_cb cb, void *ctx)
{
    tb_port_dec *c = d;

    if (!c || !pkt)
        return TB_ERR_INVAL;
    enter(c, cb, ctx);
    if (!c->started) {
        tb_port_dec_emit_gap(c, pkt->index, TB_GAP_INIT, 0);
        c->started = true;
    }
    switch (pkt->kind) {
    case TB_PKT_ATOM:
        atoms(c, pkt);
        break;
    case TB_PKT_TRIGGER:
        trigger(c, pkt);
        break;
    case TB_PKT_RESERVED:
    case TB_PKT_BAD_SEQUENCE:
    case TB_PKT_BAD_TRACEMODE:
    case TB_PKT_INCOMPLETE:
        if (c->ops->bad)
            c->ops->bad(c);
        tb_port_dec_lose(c, pkt->index, TB_GAP_BAD_PACKET,
                         pkt->kind == TB_PKT_INCOMPLETE ? TB_ERR_TRUNCATED
                         : pkt->err                     ? pkt->err
                                                        : TB_ERR_BAD_PACKET);
        break;
    default:
        c->ops->packet(c, pkt);
        break;
    }
    return c->stop ? TB_ERR_STOPPED : c->emitted;
}

int tb_port_dec_op_finish(void *d, tb_element_cb cb, void *ctx)
{
    tb_port_dec *c = d;
    tb_element el;

    if (!c)
        return TB_ERR_INVAL;
    enter(c, cb, ctx);
    c->ops->end(c);
    tb_elem_init(&el, TB_ELEM_END, 0);
    tb_port_dec_emit(c, &el);
    return c->stop ? TB_ERR_STOPPED : c->emitted;
}

void tb_port_dec_op_reset(void *d)
{
    tb_port_dec *c = d;

    if (!c)
        return;
    c->started = c->pc_known = c->rng_open = c->have_held = c->undo_ok = false;
    c->w_target = TB_PORT_W_NONE;
    c->w_sure = c->w_past = false;
    c->w_apo = 0;
    c->trig_held = 0;
    c->ctx_known = c->ctx_pending = false;
    c->ctxid = 0;
    c->stop = false;
    c->isa = TB_ISA_ARM;
    if (c->ops->reset)
        c->ops->reset(c);
}

void tb_port_dec_op_cycle_ranges(void *d, bool on)
{
    tb_port_dec *c = d;

    c->rmax = on && c->cycle_accurate ? 1 : 32;
}

void *tb_port_dec_new(size_t size, const tb_port_dec_ops *ops, const tb_memimage *mem,
                      bool cycle_accurate, uint32_t vector_base)
{
    tb_port_dec *c;

    if (!(c = calloc(1, size)))
        return NULL;
    if (!(c->cls = tb_classifier_new())) {
        free(c);
        return NULL;
    }
    c->ops = ops;
    c->mem = mem;
    c->cycle_accurate = cycle_accurate;
    c->vector_base = vector_base;
    c->rmax = 32;
    tb_port_dec_op_reset(c);
    return c;
}

void tb_port_dec_op_destroy(void *d)
{
    tb_port_dec *c = d;

    if (!c)
        return;
    if (c->ops->fini)
        c->ops->fini(c);
    tb_classifier_free(c->cls);
    free(c);
}
