/*
 * ETMv2 packets (etmv2_parser.c) + memory image -> trace elements
 * (decoder.h conventions, as ETMv1's; docs/etmv2.md 5).
 *
 * 'E'/'N' atoms walk the image one instruction each; a direct branch
 * with 'E' goes to its target.  An executed indirect branch waits for
 * the BRANCH of its D status.  A BRANCH of a DW status (no instruction:
 * it belongs to the most recent one, 6.7.1) is an exception, named by
 * its vector; its E bit says the most recent instruction was cancelled,
 * which then leaves the range.  A TFO (ISYNC) gives the full address:
 * periodic (RR 0), it executed the instruction there (6.5.1); else trace
 * starts there (reason 1-3).
 *
 * Cycle-accurate (docs/etmv2.md 5): as ETMv1's (port_cc.h), an
 * element's count runs from its status to the next; the DW cycle of an
 * exception and the cycles of the instruction it cancelled are the
 * EXCEPTION's; before a marker or the end the count is open.
 *
 * Data (docs/etmv2.md 9): data packets belong to the most recently traced
 * data instruction (6.4.2); A marks an instruction's first.  The opcode
 * (mem_op.c, shared with ETMv1/ETMv3) gives the transfers' count, size
 * and direction; with value trace each transfer has its packet (or a
 * Value Not Traced one), with address trace only the first packet's
 * address covers them all.  The range ending with the instruction goes
 * out before its DATA elements.
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/classify.h"
#include "tracebench/etmv2.h"
#include "mem_op.h"
#include "port_cc.h"
#include "backend.h"

/* DATA elements waiting behind a held range (CA): one instruction's. */
#define DQMAX 32u

enum { W_NONE, W_RNG, W_HELD };

struct tb_etmv2_decoder {
    tb_etmv2_config cfg;
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
    tb_element undo;     /* rng before its last instruction */
    bool undo_ok;        /* the last instruction is rng's last */
    bool await_br;       /* an executed indirect branch: its BRANCH next */
    tb_element held;     /* closed range or exception still counting cycles (CA) */
    bool have_held;
    unsigned w_target;
    bool w_sure;         /* no wait cycle since the last status (CA) */
    unsigned trig_held;  /* triggers that came while a range was held */
    uint64_t trig_index;

    uint32_t ctxid;
    bool ctx_known;
    tb_element ctx_el;   /* a context ID packet's CONTEXT, after its status's range */
    bool ctx_pending;

    /* Data trace. */
    bool li_ok;          /* the last instruction walked executed (E) */
    tb_insn li;
    uint64_t li_index;
    bool dx_on;          /* a data instruction whose packets are coming */
    tb_mem_op op;
    tb_insn dx;
    unsigned dk;         /* its transfers shown */
    uint32_t daddr;
    bool daddr_ok, dfull; /* dfull: a full data address since sync */
    tb_element dq[DQMAX];
    unsigned dqn;

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

static void emit(tb_etmv2_decoder *d, const tb_element *el)
{
    if (d->stop)
        return;
    d->emitted++;
    if (d->cb && d->cb(d->ctx, el))
        d->stop = true;
}

static void release_held(tb_etmv2_decoder *d)
{
    tb_element el;
    unsigned i;

    if (!d->have_held)
        return;
    emit(d, &d->held);
    d->have_held = false;
    for (i = 0; i < d->dqn; i++)
        emit(d, &d->dq[i]);
    d->dqn = 0;
    for (; d->trig_held; d->trig_held--) {
        el_init(&el, TB_ELEM_EVENT, d->trig_index);
        emit(d, &el);
    }
    if (d->w_target == W_HELD)
        d->w_target = W_NONE;
}

static void close_range(tb_etmv2_decoder *d)
{
    d->undo_ok = false;
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

/* A context ID packet's CONTEXT goes out once the range holding its
 * status's instruction has (context() below). */
static void release_context(tb_etmv2_decoder *d)
{
    if (!d->ctx_pending)
        return;
    close_range(d);
    release_held(d);
    d->ctx_pending = false;
    emit(d, &d->ctx_el);
}

/* Everything before a new status or event goes out. */
static void settle(tb_etmv2_decoder *d)
{
    close_range(d);
    release_held(d);
    release_context(d);
    d->w_target = W_NONE;
}

/* settle() where no status follows (a trace-on, overflow or debug-exit
 * TFO, the end of the trace): the held count is open (port_cc.h).  ETMv2
 * has no TD with TraceEnable (6.1.6: TRACEPKT[0] of a TD marks a TFO),
 * so any WT or TD after the last status leaves it unknown. */
static void settle_open(tb_etmv2_decoder *d, bool lost)
{
    close_range(d);
    tb_port_cc_open(&d->held, d->have_held, lost, d->w_sure);
    settle(d);
}

/* Emits el (an exception); in CA mode it is held with the `cc` cycles
 * already its own, so that its DW cycle and the waits up to the next
 * status count for it (port_cc.h). */
static void emit_counted(tb_etmv2_decoder *d, tb_element *el, uint32_t cc)
{
    settle(d);
    if (!d->cfg.cycle_accurate) {
        emit(d, el);
        return;
    }
    tb_port_cc_count(el, cc);
    d->held = *el;
    d->have_held = true;
    d->w_target = W_HELD;
    d->w_sure = true;
}

static void lose(tb_etmv2_decoder *d, uint64_t index, tb_gap_reason why, int err)
{
    tb_element el;

    settle(d);
    el_init(&el, TB_ELEM_NO_SYNC, index);
    el.reason = (uint8_t)why;
    el.err = err;
    emit(d, &el);
    d->pc_known = false;
    d->await_br = false;
    d->li_ok = d->dx_on = d->dfull = false;
}

/* Classifies the instruction at the PC; false (after an element) when
 * the image lacks it. */
static bool insn_at(tb_etmv2_decoder *d, uint64_t index, tb_insn *in)
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

static void add_insn(tb_etmv2_decoder *d, uint64_t index, const tb_insn *in, char atom)
{
    tb_element *r = &d->rng;

    /* A full range closes when the next instruction comes, not after
     * its last: the waits after that one's status stay its own and an E bit can still retract it (6.7.1). */
    if (d->rng_open && (r->isa != in->isa || r->end != in->addr || r->count >= d->rmax))
        close_range(d);
    release_held(d);
    release_context(d); /* a new context: a new range */
    d->undo = *r;
    d->undo_ok = true;
    if (!d->rng_open)
        d->undo.count = 0;
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
}

static void step(tb_etmv2_decoder *d, uint64_t index, char atom)
{
    tb_insn in;
    bool direct, indirect;

    if (!d->pc_known) /* nothing to walk from yet */
        return;
    if (d->await_br) {
        /* a branch whose address never came */
        lose(d, index, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
        return;
    }
    d->await_br = false;
    if (!insn_at(d, index, &in))
        return;
    add_insn(d, index, &in, atom);
    /* A failed instruction has no data (6.4.2: a traced data instruction). */
    d->li_ok = atom == 'E';
    d->li = in;
    d->li_index = index;
    direct = in.wp_class == TB_WP_DIRECT || in.wp_class == TB_WP_DIRECT_LINK;
    indirect = in.wp_class == TB_WP_INDIRECT || in.wp_class == TB_WP_INDIRECT_LINK;
    if (atom == 'E' && direct && in.has_target) {
        d->pc = in.target;
        d->isa = (tb_isa)in.target_isa;
        d->await_br = d->cfg.branch_output; /* its address follows (ETMCR[8]) */
        close_range(d);
    } else if (atom == 'E' && indirect) {
        d->await_br = true; /* its D status gave the address (6.7.1) */
        close_range(d);
    } else {
        d->pc += in.size;
    }
}

static int vector_offset(const tb_etmv2_decoder *d, uint32_t a)
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

static void trace_on(tb_etmv2_decoder *d, const tb_packet *pkt, uint8_t reason)
{
    tb_element el;

    el_init(&el, TB_ELEM_TRACE_ON, pkt->index);
    el.reason = reason;
    el.isa = (uint8_t)pkt->isa;
    el.start = pkt->addr;
    emit(d, &el);
}

/* A TFO's context ID (6.5.4) or a context ID packet's (6.4.1, 6.5.7).
 * The packet goes with the first traced status after the change (U17):
 * its instruction stays the newest traced one, which a DW's E may still
 * cancel (6.7.1), and the waits after its status stay its cycles (CA).
 * So nothing closes here: the CONTEXT goes out after the range holding
 * that instruction, before whatever comes next (release_context). */
static void context(tb_etmv2_decoder *d, const tb_packet *pkt)
{
    if (!pkt->has_ctxid || (d->ctx_known && pkt->context_id == d->ctxid))
        return;
    if (pkt->kind != TB_PKT_CONTEXT_ID)
        settle(d);
    else
        release_context(d); /* two changes: the first's goes out first */
    d->ctxid = pkt->context_id;
    d->ctx_known = true;
    el_init(&d->ctx_el, TB_ELEM_CONTEXT, pkt->index);
    d->ctx_el.context_id = d->ctxid;
    d->ctx_pending = true;
    if (pkt->kind != TB_PKT_CONTEXT_ID)
        release_context(d);
}

/* A TFO (6.5.1, 6.5.4). */
static void tfo(tb_etmv2_decoder *d, const tb_packet *pkt)
{
    if (pkt->reason != TB_ETMV2_R_PERIODIC) {
        static const uint8_t why[4] = {0, TB_ISYNC_TRACE_ON, TB_ISYNC_OVERFLOW,
                                       TB_ISYNC_DEBUG_EXIT};

        /* The count before a marker is open.  TRACE_ON before the
         * TFO's CONTEXT (as the ETMv1 and ETMv3 decoders): the context
         * may have changed while trace was off, and a consumer matches
         * it to the run after the gap, not to the last instruction
         * shown (a filter, the generator's seed 110). */
        settle_open(d, pkt->reason == TB_ETMV2_R_OVERFLOW);
        trace_on(d, pkt, why[pkt->reason & 3]);
        context(d, pkt);
        d->pc = pkt->addr;
        d->isa = pkt->isa;
        d->pc_known = true;
        d->await_br = false;
        d->li_ok = d->dx_on = false;
        return;
    }
    /* Periodic: the TFO cycle executed the instruction at addr (7.14.2). */
    context(d, pkt);
    if (!d->pc_known || d->await_br || d->pc != pkt->addr || d->isa != pkt->isa) {
        settle(d);
        trace_on(d, pkt, TB_ISYNC_PERIODIC);
    }
    d->pc = pkt->addr;
    d->isa = pkt->isa;
    d->pc_known = true;
    d->await_br = false;
    step(d, pkt->index, 'E');
}

static void branch(tb_etmv2_decoder *d, const tb_packet *pkt)
{
    tb_element el;
    int off;

    if (pkt->phdr_format != TB_ETMV2_DW) {
        /* The address of the instruction just executed (6.7.1). */
        if (d->pc_known && !d->await_br)
            lose(d, pkt->index, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
        else if (d->pc_known || d->await_br) {
            d->pc = pkt->addr;
            d->isa = pkt->isa;
            d->pc_known = true;
        }
        d->await_br = false;
        return;
    }
    /* DW: an exception after (or, E, instead of) the last instruction. */
    off = vector_offset(d, pkt->addr);
    if (d->await_br && !pkt->exc_cancel) { /* the address never came */
        lose(d, pkt->index, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
    } else if (off >= 0) {
        bool known = d->pc_known;
        uint32_t at = d->pc, cc = 0;

        if (pkt->exc_cancel && d->rng_open && d->undo_ok) {
            /* 6.7.1 E: the last traced instruction was cancelled.  Its
             * status and waits are the exception's cycles (CA), as an
             * ETMv1 aborted load/store's (docs/etmv1.md 6, M6). */
            at = d->rng.last_addr;
            known = true;
            cc = d->rng.cc - (d->undo.count ? d->undo.cc : 0);
            if (d->undo.count) {
                d->rng = d->undo;
            } else {
                d->rng_open = false;
                d->w_target = W_NONE;
            }
            d->undo_ok = false;
        } else if (pkt->exc_cancel) {
            known = false;
        }
        el_init(&el, TB_ELEM_EXCEPTION, pkt->index);
        el.exc_num = exc_number(off);
        el.cancelled = pkt->exc_cancel;
        el.pref_return = known ? at : 0;
        el.err = known ? 0 : TB_ERR_NO_SYNC;
        emit_counted(d, &el, cc);
    }
    /* else: a DW branch that is not an exception: the flow goes on there */
    d->pc = pkt->addr;
    d->isa = pkt->isa;
    d->pc_known = true;
    d->await_br = false;
}

/* A DATA element after the range that ends with its instruction. */
static void data_out(tb_etmv2_decoder *d, const tb_element *el)
{
    close_range(d);
    if (!d->have_held) {
        emit(d, el);
        return;
    }
    if (d->dqn == DQMAX)
        release_held(d);
    if (d->have_held)
        d->dq[d->dqn++] = *el;
    else
        emit(d, el);
}

/* Transfer k of the data instruction: its value from pkt (NULL: not
 * traced, a VNT or address-only trace). */
static void transfer(tb_etmv2_decoder *d, const tb_packet *pkt, unsigned k)
{
    tb_element el;
    unsigned fl = 0;

    el_init(&el, TB_ELEM_DATA, pkt->index);
    el.last_addr = d->dx.addr;
    el.isa = d->dx.isa;
    el.last_size = d->dx.size;
    el.data_size = d->op.size;
    if (d->op.swap ? k == 1 : d->op.store)
        fl |= TB_DATA_STORE;
    if (d->daddr_ok)
        el.data_addr = d->daddr + (d->op.swap ? 0 : k * d->op.size);
    else
        fl |= TB_DATA_NO_ADDR;
    if (pkt->kind == TB_PKT_DATA && (d->cfg.data_trace & 1))
        el.data_value = pkt->data_value;
    else
        fl |= TB_DATA_NO_VALUE;
    el.data_flags = (uint8_t)fl;
    data_out(d, &el);
}

/* A data packet (6.4.2, 6.4.4): DATA or VALUE_NOT_TRACED. */
static void data(tb_etmv2_decoder *d, const tb_packet *pkt)
{
    bool first = pkt->kind == TB_PKT_DATA && (pkt->bytes[0] & 0x20);
    unsigned k;

    if (!d->cfg.data_trace) { /* the parser's configuration was another */
        lose(d, pkt->index, TB_GAP_BAD_PACKET, TB_ERR_MISMATCH);
        return;
    }
    if (!d->pc_known && !d->dx_on && !d->li_ok)
        return; /* before sync: nobody to give it to */
    if (first) {
        uint8_t sz = 0;

        if (!d->li_ok) /* no executed instruction since the last one's data */
            goto bad;
        d->op = tb_mem_op_at(d->mem, d->li.addr, d->li.isa, &sz);
        if (!d->op.n)
            goto bad;
        d->dx = d->li;
        d->li_ok = false;
        d->dx_on = true;
        d->dk = 0;
        if (pkt->has_data_addr) {
            if (pkt->data_addr_bits == 32)
                d->dfull = true;
            d->daddr = pkt->data_addr;
        }
        d->daddr_ok = pkt->has_data_addr && d->dfull;
        if (!(d->cfg.data_trace & 1)) { /* address only: one packet */
            for (k = 0; k < d->op.n; k++)
                transfer(d, pkt, k);
            d->dx_on = false;
            return;
        }
    } else if (!d->dx_on || !(d->cfg.data_trace & 1)) {
        goto bad;
    }
    if (pkt->kind == TB_PKT_DATA && pkt->data_size != d->op.size)
        goto bad; /* SS disagrees with the opcode */
    transfer(d, pkt, d->dk);
    if (++d->dk == d->op.n)
        d->dx_on = false;
    return;
bad:
    lose(d, pkt->index, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
}

int tb_etmv2_decoder_packet(tb_etmv2_decoder *d, const tb_packet *pkt,
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

            if (a != 'W') {
                step(d, pkt->index, a);
            } else if (d->cfg.cycle_accurate) {
                d->w_sure = false;
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
    case TB_PKT_ISYNC:
        tfo(d, pkt);
        break;
    case TB_PKT_CONTEXT_ID:
        context(d, pkt);
        break;
    case TB_PKT_DATA:
    case TB_PKT_VALUE_NOT_TRACED:
        data(d, pkt);
        break;
    case TB_PKT_OOO_PLACEHOLDER:
    case TB_PKT_OOO_DATA:
        /* Load miss packets (U9): the encoder never writes them. */
        lose(d, pkt->index, TB_GAP_BAD_PACKET, TB_ERR_UNSUPPORTED);
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

int tb_etmv2_decoder_finish(tb_etmv2_decoder *d, tb_element_cb cb, void *ctx)
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

void tb_etmv2_decoder_reset(tb_etmv2_decoder *d)
{
    if (!d)
        return;
    d->started = d->pc_known = d->rng_open = d->have_held = false;
    d->undo_ok = d->await_br = false;
    d->w_target = W_NONE;
    d->w_sure = false;
    d->trig_held = 0;
    d->dqn = 0;
    d->li_ok = d->dx_on = d->dfull = false;
    d->ctx_known = false;
    d->ctx_pending = false;
    d->ctxid = 0;
    d->stop = false;
    d->isa = TB_ISA_ARM;
}

tb_etmv2_decoder *tb_etmv2_decoder_new(const tb_etmv2_config *cfg,
                                       const tb_memimage *mem)
{
    tb_etmv2_decoder *d;

    if (!cfg || !mem || tb_etmv2_config_check(cfg) < 0)
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
    tb_etmv2_decoder_reset(d);
    return d;
}

void tb_etmv2_decoder_free(tb_etmv2_decoder *d)
{
    if (!d)
        return;
    tb_classifier_free(d->cls);
    free(d);
}

/* ---- behind tb_decoder (backend.h) ---- */

static void *op_make(const tb_config *cfg, const tb_memimage *mem)
{
    tb_etmv2_config c;

    return tb_etmv2_config_from_tb(&c, cfg) < 0 ? NULL : tb_etmv2_decoder_new(&c, mem);
}

static void op_destroy(void *d) { tb_etmv2_decoder_free(d); }
static void op_reset(void *d) { tb_etmv2_decoder_reset(d); }

static void op_cycle_ranges(void *vd, bool on)
{
    tb_etmv2_decoder *d = vd;

    d->rmax = on && d->cfg.cycle_accurate ? 1 : 32;
}

static int op_packet(void *d, const tb_packet *pkt, tb_element_cb cb, void *ctx)
{
    return tb_etmv2_decoder_packet(d, pkt, cb, ctx);
}

static int op_finish(void *d, tb_element_cb cb, void *ctx)
{
    return tb_etmv2_decoder_finish(d, cb, ctx);
}

/* No fused path: every packet goes through op_packet. */
const tb_decoder_ops tb_etmv2_decoder_ops = {
    .protocol = TB_PROTO_ETMV2,
    .make = op_make,
    .destroy = op_destroy,
    .packet = op_packet,
    .finish = op_finish,
    .reset = op_reset,
    .cycle_ranges = op_cycle_ranges,
};
