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
#include "dec_util.h"
#include "tracebench/etmv2.h"
#include "mem_op.h"
#include "port_internal.h"

/* DATA elements waiting behind a held range (CA): one instruction's. */
#define DQMAX 32u

struct tb_etmv2_decoder {
    tb_port_dec port;    /* first: the core (port_internal.h) */
    tb_etmv2_config cfg;

    bool await_br;       /* an executed indirect branch: its BRANCH next */

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
    /* Load misses (U9, docs/etmv2.md 9): the transfer of each outstanding
     * Load Miss occurred, by tag. */
    bool miss_on[4];
    tb_element miss[4];
    uint64_t last_index; /* of the newest status or packet (indices never go back) */
};

/* A status that is an instruction (the core's step hook). */
static void step(tb_port_dec *c, uint64_t index, char atom)
{
    tb_etmv2_decoder *d = (tb_etmv2_decoder *)c;
    tb_insn in;
    int k;

    if (index > d->last_index)
        d->last_index = index;
    if (!c->pc_known) /* nothing to walk from yet */
        return;
    if (d->await_br) {
        /* a branch whose address never came */
        tb_port_dec_lose(c, index, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
        return;
    }
    if ((k = tb_port_dec_walk(c, index, atom, &in)) == TB_PORT_NO_INSN)
        return;
    /* A failed instruction has no data (6.4.2: a traced data instruction). */
    d->li_ok = atom == 'E';
    d->li = in;
    d->li_index = index;
    if (k == TB_PORT_DIRECT) {
        d->await_br = d->cfg.branch_output; /* its address follows (ETMCR[8]) */
    } else if (k == TB_PORT_INDIRECT) {
        d->await_br = true; /* its D status gave the address (6.7.1) */
        tb_port_dec_close_range(c);
    }
}

static void data_out(tb_etmv2_decoder *d, const tb_element *el);

/* The misses still out whose values can no longer come (trace restarted,
 * M12, or the end): each a DATA element without value, flagged out of
 * order, at index. */
static void misses_lost(tb_etmv2_decoder *d, uint64_t index)
{
    for (unsigned t = 1; t < 4; t++) {
        if (!d->miss_on[t])
            continue;
        tb_element el = d->miss[t];

        if (index > el.index)
            el.index = index;
        el.data_flags |= TB_DATA_OOO | TB_DATA_NO_VALUE;
        d->miss_on[t] = false;
        data_out(d, &el);
    }
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
        tb_port_dec_settle_open(&d->port, pkt->reason == TB_ETMV2_R_OVERFLOW);
        tb_port_dec_trace_on(&d->port, pkt, why[pkt->reason & 3]);
        tb_port_dec_context(&d->port, pkt, false);
        misses_lost(d, pkt->index); /* M12: not traced past a restart */
        tb_port_dec_goto(&d->port, pkt->addr, pkt->isa);
        d->await_br = false;
        d->li_ok = d->dx_on = false;
        return;
    }
    /* Periodic: the TFO cycle executed the instruction at addr (7.14.2). */
    tb_port_dec_context(&d->port, pkt, false);
    if (!d->port.pc_known || d->await_br || d->port.pc != pkt->addr || d->port.isa != pkt->isa) {
        tb_port_dec_settle(&d->port);
        tb_port_dec_trace_on(&d->port, pkt, TB_ISYNC_PERIODIC);
    }
    tb_port_dec_goto(&d->port, pkt->addr, pkt->isa);
    d->await_br = false;
    step(&d->port, pkt->index, 'E');
}

static void branch(tb_etmv2_decoder *d, const tb_packet *pkt)
{
    tb_element el;
    int off;

    if (pkt->phdr_format != TB_ETMV2_DW) {
        /* The address of the instruction just executed (6.7.1). */
        if (d->port.pc_known && !d->await_br)
            tb_port_dec_lose(&d->port, pkt->index, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
        else if (d->port.pc_known || d->await_br)
            tb_port_dec_goto(&d->port, pkt->addr, pkt->isa);
        d->await_br = false;
        return;
    }
    /* DW: an exception after (or, E, instead of) the last instruction. */
    off = tb_port_dec_vector_offset(&d->port, pkt->addr);
    if (d->await_br && !pkt->exc_cancel) { /* the address never came */
        tb_port_dec_lose(&d->port, pkt->index, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
    } else if (off >= 0) {
        bool known = d->port.pc_known;
        uint32_t at = d->port.pc, cc = 0;

        if (pkt->exc_cancel && d->port.rng_open && d->port.undo_ok) {
            /* 6.7.1 E: the last traced instruction was cancelled.  Its
             * status and waits are the exception's cycles (CA), as an
             * ETMv1 aborted load/store's (docs/etmv1.md 6, M6). */
            at = d->port.rng.last_addr;
            known = true;
            cc = d->port.rng.cc - (d->port.undo.count ? d->port.undo.cc : 0);
            if (d->port.undo.count) {
                d->port.rng = d->port.undo;
            } else {
                d->port.rng_open = false;
                d->port.w_target = TB_PORT_W_NONE;
            }
            d->port.undo_ok = false;
        } else if (pkt->exc_cancel) {
            known = false;
        }
        tb_port_dec_exception(&el, pkt->index, off, pkt->exc_cancel, known, at);
        tb_port_dec_emit_counted(&d->port, &el, cc);
    }
    /* else: a DW branch that is not an exception: the flow goes on there */
    tb_port_dec_goto(&d->port, pkt->addr, pkt->isa);
    d->await_br = false;
}

/* An element out now, or queued behind a held one (CA), whose queue a
 * full one releases first. */
static void out_or_queue(tb_etmv2_decoder *d, const tb_element *el)
{
    if (d->port.have_held && d->dqn == DQMAX)
        tb_port_dec_release_held(&d->port);
    if (d->port.have_held)
        d->dq[d->dqn++] = *el;
    else
        tb_port_dec_emit(&d->port, el);
}

/* A DATA element after the range that ends with its instruction. */
static void data_out(tb_etmv2_decoder *d, const tb_element *el)
{
    tb_port_dec_close_range(&d->port);
    out_or_queue(d, el);
}

/* Transfer k of the data instruction: its value from pkt (NULL: not
 * traced, a VNT or address-only trace). */
static void transfer(tb_etmv2_decoder *d, const tb_packet *pkt, unsigned k)
{
    tb_element el;

    tb_port_dec_data_el(&el, pkt->index, d->dx.addr, d->dx.isa, d->dx.size, &d->op, k,
                        d->daddr_ok, d->daddr);
    if (pkt->kind == TB_PKT_DATA && (d->cfg.data_trace & 1))
        el.data_value = pkt->data_value;
    else
        el.data_flags |= TB_DATA_NO_VALUE;
    data_out(d, &el);
}

/* A miss's value (its own tag names its transfer): unlike a DATA element
 * it closes no range, so that a DW's E can still retract the newest
 * instruction (6.7.1), whose status may have carried it (M12).  It goes
 * out before the open range, with that range's index if lower (indices
 * never go back), or behind a held one (CA). */
static void miss_out(tb_etmv2_decoder *d, tb_element *el)
{
    if (d->port.rng_open && d->port.rng.index < el->index)
        el->index = d->port.rng.index;
    out_or_queue(d, el);
}

/* Load Miss data (Table 6.2 bCTT0SS00): the value of the outstanding
 * miss with its tag (U9), whose transfer it completes. */
static void miss_data(tb_etmv2_decoder *d, const tb_packet *pkt)
{
    unsigned t = pkt->data_tag & 3;
    tb_element el;

    if (!(d->cfg.data_trace & 1)) {
        tb_port_dec_lose(&d->port, pkt->index, TB_GAP_BAD_PACKET, TB_ERR_MISMATCH);
        return;
    }
    if (!d->port.pc_known && !d->miss_on[t])
        return; /* before sync: its miss was before it too */
    if (!t || !d->miss_on[t] || pkt->data_size != d->miss[t].data_size) {
        tb_port_dec_lose(&d->port, pkt->index, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
        return;
    }
    el = d->miss[t];
    el.index = pkt->index;
    el.data_flags = (uint8_t)((el.data_flags & ~TB_DATA_NO_VALUE) | TB_DATA_OOO);
    el.data_value = pkt->data_value;
    d->miss_on[t] = false;
    miss_out(d, &el);
}

/* A data packet (6.4.2, 6.4.4): DATA, VALUE_NOT_TRACED or a Load Miss
 * occurred (its transfer's value comes later, miss_data). */
static void data(tb_etmv2_decoder *d, const tb_packet *pkt)
{
    bool first = (pkt->kind == TB_PKT_DATA || pkt->kind == TB_PKT_OOO_PLACEHOLDER) &&
                 (pkt->bytes[0] & 0x20);
    unsigned k;

    if (!d->cfg.data_trace) { /* the parser's configuration was another */
        tb_port_dec_lose(&d->port, pkt->index, TB_GAP_BAD_PACKET, TB_ERR_MISMATCH);
        return;
    }
    if (!d->port.pc_known && !d->dx_on && !d->li_ok)
        return; /* before sync: nobody to give it to */
    if (first) {
        uint8_t sz = 0;

        if (!d->li_ok) /* no executed instruction since the last one's data */
            goto bad;
        d->op = tb_mem_op_at(d->port.mem, d->li.addr, d->li.isa, &sz);
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
        if (pkt->kind == TB_PKT_OOO_PLACEHOLDER) {
            /* A single load (M12) with tag 1..3 not already out (U9). */
            unsigned t = pkt->data_tag & 3;
            tb_element el;

            d->dx_on = false;
            if (!(d->cfg.data_trace & 1) || d->op.n != 1 || d->op.store || !t ||
                d->miss_on[t])
                goto bad;
            tb_port_dec_data_el(&el, pkt->index, d->dx.addr, d->dx.isa, d->dx.size, &d->op, 0,
                                d->daddr_ok, d->daddr);
            el.data_flags |= TB_DATA_NO_VALUE;
            el.reason = (uint8_t)t;
            d->miss[t] = el;
            d->miss_on[t] = true;
            data_out(d, &el);
            return;
        }
        if (!(d->cfg.data_trace & 1)) { /* address only: one packet */
            for (k = 0; k < d->op.n; k++)
                transfer(d, pkt, k);
            d->dx_on = false;
            return;
        }
    } else if (!d->dx_on || !(d->cfg.data_trace & 1) || pkt->kind == TB_PKT_OOO_PLACEHOLDER) {
        goto bad;
    }
    if (pkt->kind == TB_PKT_DATA && pkt->data_size != d->op.size)
        goto bad; /* SS disagrees with the opcode */
    transfer(d, pkt, d->dk);
    if (++d->dk == d->op.n)
        d->dx_on = false;
    return;
bad:
    tb_port_dec_lose(&d->port, pkt->index, TB_GAP_INCONSISTENT, TB_ERR_MISMATCH);
}

/* The packets of ETMv2's own (the core's packet hook). */
static void packet(tb_port_dec *c, const tb_packet *pkt)
{
    tb_etmv2_decoder *d = (tb_etmv2_decoder *)c;

    if (pkt->index > d->last_index)
        d->last_index = pkt->index;
    switch (pkt->kind) {
    case TB_PKT_BRANCH:
        branch(d, pkt);
        break;
    case TB_PKT_ISYNC:
        tfo(d, pkt);
        break;
    case TB_PKT_CONTEXT_ID:
        tb_port_dec_context(c, pkt, true);
        break;
    case TB_PKT_DATA:
    case TB_PKT_VALUE_NOT_TRACED:
    case TB_PKT_OOO_PLACEHOLDER:
        data(d, pkt);
        break;
    case TB_PKT_OOO_DATA:
        miss_data(d, pkt);
        break;
    default:
        break;
    }
}

/* The held range went out: the DATA elements that waited behind it. */
static void held_out(tb_port_dec *c)
{
    tb_etmv2_decoder *d = (tb_etmv2_decoder *)c;
    unsigned i;

    for (i = 0; i < d->dqn; i++)
        tb_port_dec_emit(c, &d->dq[i]);
    d->dqn = 0;
}

static void lost(tb_port_dec *c)
{
    tb_etmv2_decoder *d = (tb_etmv2_decoder *)c;

    d->await_br = false;
    d->li_ok = d->dx_on = d->dfull = false;
    memset(d->miss_on, 0, sizeof d->miss_on);
}

/* The end: ETMv2 has no TD with TraceEnable (6.1.6: TRACEPKT[0] of a TD
 * marks a TFO), so any WT or TD after the last status leaves the count
 * unknown (the core's w_sure), as before a marker. */
static void end(tb_port_dec *c)
{
    tb_etmv2_decoder *d = (tb_etmv2_decoder *)c;

    misses_lost(d, d->last_index);
    tb_port_dec_settle_open(c, false);
}

static void reset(tb_port_dec *c)
{
    tb_etmv2_decoder *d = (tb_etmv2_decoder *)c;

    d->await_br = false;
    d->dqn = 0;
    d->li_ok = d->dx_on = d->dfull = false;
    memset(d->miss_on, 0, sizeof d->miss_on);
    d->last_index = 0;
}

static const tb_port_dec_ops ops = {
    .protocol = TB_PROTO_ETMV2, .held_out = held_out, .lost = lost,
    .end = end, .reset = reset, .retract = true,
};

/* tb_etmv2_decoder_new/_free/_reset/_packet/_finish and
 * tb_etmv2_decoder_ops (no fused path): the core's (port_internal.h). */
TB_PORT_DECODER_API(etmv2, ETMV2, &ops, step, packet);
