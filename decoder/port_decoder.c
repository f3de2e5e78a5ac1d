/*
 * The trace-port decoders' core (port_internal.h): ranges, held
 * elements and their cycles, the walk, trace-on, context, exceptions,
 * triggers, losses and the life cycle, once for ETMv1 (IHI0014Q chapter
 * 5; docs/etmv1.md 5) and ETMv2 (chapter 6; docs/etmv2.md 5).  The hot
 * path (the ATOM run, the walk, ranges) is inline in port_internal.h;
 * the rest is here.
 *
 * Cycle-accurate (port_cc.h): an element's count runs from its status
 * to the next, so a closed range or an exception is held while the wait
 * cycles after its status come, and goes out at the next status.
 */
#include <stdlib.h>

#include "dec_util.h"
#include "port_cc.h"
#include "port_internal.h"

void tb_port_dec_emit_gap(tb_port_dec *c, uint64_t index, tb_gap_reason why, int err)
{
    tb_element el;

    tb_elem_init(&el, TB_ELEM_NO_SYNC, index);
    el.reason = (uint8_t)why;
    el.err = err;
    tb_port_dec_emit(c, &el);
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

/* A trigger: after the held element, whose cycles are still counting. */
void tb_port_dec_trigger(tb_port_dec *c, const tb_packet *pkt)
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

/* A packet's call: the callback; before the first, a NO_SYNC (the
 * trace's start). */
void tb_port_dec_enter(tb_port_dec *c, tb_element_cb cb, void *ctx, const tb_packet *pkt)
{
    enter(c, cb, ctx);
    if (!c->started) {
        tb_port_dec_emit_gap(c, pkt->index, TB_GAP_INIT, 0);
        c->started = true;
    }
}

/* A bad packet: the protocol's, then trace is lost. */
void tb_port_dec_bad(tb_port_dec *c, const tb_packet *pkt)
{
    if (c->ops->bad)
        c->ops->bad(c);
    tb_port_dec_lose(c, pkt->index, TB_GAP_BAD_PACKET,
                     pkt->kind == TB_PKT_INCOMPLETE ? TB_ERR_TRUNCATED
                     : pkt->err                     ? pkt->err
                                                    : TB_ERR_BAD_PACKET);
}

/* The instruction at the PC is not in the image. */
void tb_port_dec_no_insn(tb_port_dec *c, uint64_t index)
{
    tb_element el;

    tb_port_dec_settle(c);
    tb_elem_init(&el, TB_ELEM_ADDR_NACC, index);
    el.reason = TB_GAP_NO_MEMORY;
    el.start = c->pc;
    el.isa = (uint8_t)c->isa;
    tb_port_dec_emit(c, &el);
    c->pc_known = false;
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
