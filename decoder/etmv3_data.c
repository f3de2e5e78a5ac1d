/*
 * ETMv3 data trace (IHI0014Q 7.4): DATA elements, one per transfer.
 */
#include "etmv3_internal.h"

/* ------------------------------------------------------------------ */
/* Data trace (IHI0014Q 7.4), on the packet path only: the fused path
 * never sees a data packet (the parser hands every one to the packet
 * path), so with data trace off nothing here runs.
 *
 * A data packet says nothing of direction or size: they come from the
 * opcode of the instruction it belongs to, read from the image
 * (data_op()).  That instruction is the most recently traced data
 * instruction (7.4), found among the instructions of the newest range:
 * every DATA element closes the range it follows, so a packet with no
 * instruction traced since the last one is the next transfer of the same
 * instruction (an LSM: one packet per word, 7.4.4), and otherwise the
 * newest instruction of the newest range with an E atom that accesses
 * memory is it.  No guess: when neither holds (no instruction since the
 * last I-sync that is no LSiP (7.10.5), code missing, a range with no
 * data instruction, more packets than the instruction transfers) the
 * packet is an error element.  Limitation: data of an LSM that goes on
 * under later instructions in a new range (7.4) is such an error too. */

/* The transfers of the instruction at addr (isa), from the image. */
static mem_op data_op(const tb_etmv3_decoder *d, uint32_t addr, uint8_t isa, uint8_t *size)
{
    return tb_mem_op_at(d->mem, addr, isa, size);
}

/* The data instruction of a data packet, with room for one more
 * transfer, in d->dx; 0 or the TB_ERR_* of the error element. */
static int find_data_insn(tb_etmv3_decoder *d)
{
    const tb_element *r = &d->rng;
    uint32_t addrs[32];
    int n;

    if (r->count == 0) {
        d->dx.valid = false; /* no instruction known since sync or I-sync */
        return TB_ERR_MISMATCH;
    }
    if (d->dx.valid && r->index == d->dx.rng_index)
        /* No instruction traced since its last transfer. */
        return d->dx.done < d->dx.op.n ? 0 : TB_ERR_MISMATCH;
    d->dx.valid = false;
    n = tb_range_addrs(d->mem, r, addrs, r->count < 32 ? r->count : 32);
    if (n < 0)
        return TB_ERR_NOT_IN_IMAGE;
    while (n-- > 0) {
        uint8_t size;
        mem_op m;

        if ((r->atom_bits >> n) & 1)
            continue; /* N: failed its condition, transferred nothing */
        m = data_op(d, addrs[n], r->isa, &size);
        if (!m.n)
            continue;
        d->dx.valid = true;
        d->dx.addr = addrs[n];
        d->dx.isa = r->isa;
        d->dx.size = size;
        d->dx.rng_index = r->index;
        d->dx.op = m;
        d->dx.done = 0;
        d->dx.next_known = false;
        return 0;
    }
    return TB_ERR_MISMATCH;
}

/* The held data element: a Store failed packet flags it (7.4.7), any
 * other packet (or none: NULL) sends it as it is first.  True when pkt
 * was consumed. */
bool tb_etmv3_dec_data_release(tb_etmv3_decoder *d, tb_emit *e, const tb_packet *pkt)
{
    d->dhold = false;
    d->started = true;
    if (pkt && pkt->kind == TB_PKT_STORE_FAILED) {
        d->dpend.data_flags |= TB_DATA_STORE_FAILED;
        etmv3_emit(d, e, &d->dpend);
        return true;
    }
    etmv3_emit(d, e, &d->dpend);
    return false;
}

/* Forgets the data trace state (sync lost, reset). */
void tb_etmv3_dec_data_reset(tb_etmv3_decoder *d)
{
    d->dhold = false;
    d->daddr_known = false;
    d->dx.valid = false;
    for (unsigned t = 0; t < 4; t++)
        d->ooo[t].valid = false;
}

/* Whether a transfer at a with an address of its own, not contiguous
 * with the one before it (at x->next - 4), has a place in the LDM/POP x
 * that loads the PC (7.4.4: the A bit marks a transfer that is not
 * sequential).  In ascending order (ETMIDR[16] clear) all its transfers
 * are contiguous.  A "load PC first" core (ETMIDR[16] set, etmv3-data.md
 * 1 and 6 [S*]) transfers the PC, at the highest address, first, then
 * the others from the lowest: the one non-sequential step is the second
 * transfer, n - 1 words below the PC's.  Counted back from the final
 * transfer (just below the PC), that places every later packet. */
static bool pc_first_step(const tb_etmv3_decoder *d, const struct data_insn *x, uint32_t a)
{
    const uint32_t pc = x->next - 4;

    return d->cfg.pc_first && x->done == 1 && a == pc - 4u * (uint32_t)(x->op.n - 1);
}

/* A DATA element for the next transfer of d->dx (kind DATA, VALUE NOT
 * TRACED or OOO PLACEHOLDER): instruction, direction, size, address.
 * TB_ERR_MISMATCH for an address no transfer of an LDM loading the PC
 * can have (pc_first_step). */
static int data_elem(tb_etmv3_decoder *d, const tb_packet *pkt, tb_element *el)
{
    struct data_insn *x = &d->dx;
    uint8_t fl = 0;
    bool known;

    tb_elem_init(el, TB_ELEM_DATA, pkt->index);
    el->last_addr = x->addr;
    el->isa = x->isa;
    el->last_size = x->size;
    el->data_size = x->op.size;
    if (x->op.swap ? x->done == 1 : x->op.store)
        fl |= TB_DATA_STORE;
    /* The address: compressed against the last data address output
     * (7.4.2), so known once a full one (D-sync, 7.10.6) came since sync
     * was lost; without the A bit contiguous with the transfer before it
     * (7.4.4). */
    if (pkt->has_data_addr) {
        if (pkt->data_addr_bits >= 32)
            d->daddr_known = true;
        known = d->daddr_known;
        if (x->op.pc_load && known && x->done > 0 && x->next_known &&
            pkt->data_addr != x->next && !pc_first_step(d, x, pkt->data_addr))
            return TB_ERR_MISMATCH;
        el->data_addr = pkt->data_addr;
        x->be = pkt->data_be;
    } else {
        known = (d->cfg.data_trace & 2) && x->done > 0 && x->next_known;
        el->data_addr = x->next;
    }
    if (!known) {
        el->data_addr = 0;
        fl |= TB_DATA_NO_ADDR;
    } else if (x->be) {
        fl |= TB_DATA_BE;
    }
    x->next_known = known;
    x->next = el->data_addr + x->op.size;
    x->done++;
    el->data_flags = fl | TB_DATA_NO_VALUE;
    return 0;
}

/* A value of vbytes bytes for a transfer of size bytes: 0, or the
 * TB_ERR_BAD_PACKET of an impossible size (more bytes than the transfer
 * has; a traced value is never sign-extended, IHI0014Q 4.9.2). */
static int take_value(tb_element *el, const tb_packet *pkt)
{
    if (pkt->data_size > el->data_size && !(el->data_flags & TB_DATA_NO_DIR))
        return TB_ERR_BAD_PACKET;
    el->data_value = pkt->data_value;
    el->data_flags &= (uint8_t)~TB_DATA_NO_VALUE;
    return 0;
}

/* An element that waits for a Store failed packet (7.4.7: it comes
 * right after the data packet of a failed store-exclusive) or goes out
 * now; while one waits, the fused entries hand over (dhold). */
static void data_out(tb_etmv3_decoder *d, tb_emit *e, const tb_element *el, bool excl)
{
    if (excl && (el->data_flags & TB_DATA_STORE)) {
        etmv3_flush_range(d, e); /* its instruction goes first */
        d->dpend = *el;
        d->dhold = true;
        d->started = false; /* the fused path hands over (dhold) */
        return;
    }
    etmv3_emit(d, e, el);
}

/* A placeholder whose value can no longer come: out as OOO data with no
 * value, flagged suppressed when suppression may have deleted it.  Its
 * index is that of the packet that tells (as OOO data has its own
 * packet's), at the end of the trace the last element's: element
 * indices never go back (types.h). */
void tb_etmv3_dec_ooo_lost(tb_etmv3_decoder *d, tb_emit *e, unsigned tag, uint64_t index)
{
    tb_element el = d->ooo[tag].el;

    etmv3_flush_range(d, e); /* the range held back goes first, with its index */
    if (d->out_index > index)
        index = d->out_index;
    if (index > el.index)
        el.index = index;
    el.data_flags |= TB_DATA_OOO | TB_DATA_NO_VALUE;
    if (d->ooo[tag].maybe_lost)
        el.data_flags |= TB_DATA_SUPPRESSED;
    d->ooo[tag].valid = false;
    etmv3_emit(d, e, &el);
}

/* Data-only mode (ETMCR[20], IHI0014Q 7.4.10): no instruction trace, so
 * no instruction to read a direction or size from: a DATA element is
 * the transfer's address and value alone (TB_DATA_NO_DIR, data_size 0,
 * last_addr 0).  The address is compressed against the last one output
 * as always (7.4.2); a packet without one is the word after the transfer
 * before it: only an LSM's, LDRD/STRD's words go without (7.4.4: every
 * other first transfer, and any not contiguous, carries one; 7.4.10:
 * full data tracing from ETMv3.3), UNVERIFIED for ETMv3.1/3.2
 * (docs/etmv3-data-model.md).  Every element waits for the next packet,
 * which may be a Store failed (7.4.7): no opcode tells a store-exclusive
 * here.  Out-of-order data keeps its pairing by tag. */
static void do_data_only(tb_etmv3_decoder *d, tb_emit *e, const tb_packet *pkt)
{
    tb_element el;
    struct ooo_slot *o = &d->ooo[pkt->data_tag & 3];
    int err = TB_ERR_BAD_PACKET;

    switch (pkt->kind) {
    case TB_PKT_DATA:
    case TB_PKT_VALUE_NOT_TRACED:
    case TB_PKT_OOO_PLACEHOLDER:
        tb_elem_init(&el, TB_ELEM_DATA, pkt->index);
        el.isa = TB_ISA_UNKNOWN;
        el.data_flags = TB_DATA_NO_DIR | TB_DATA_NO_VALUE;
        if (pkt->has_data_addr) {
            if (pkt->data_addr_bits >= 32)
                d->daddr_known = true;
            d->dx.be = pkt->data_be;
            el.data_addr = pkt->data_addr;
        } else {
            el.data_addr = d->dx.next + 4u;
        }
        d->dx.next = el.data_addr;
        if (!d->daddr_known) {
            el.data_addr = 0;
            el.data_flags |= TB_DATA_NO_ADDR;
        } else if (d->dx.be) {
            el.data_flags |= TB_DATA_BE;
        }
        if (pkt->kind == TB_PKT_DATA && (d->cfg.data_trace & 1))
            take_value(&el, pkt);
        if (pkt->kind == TB_PKT_OOO_PLACEHOLDER) {
            if (!(pkt->data_tag & 3) || o->valid)
                break; /* no tag, or its tag still out */
            el.reason = pkt->data_tag & 3;
            o->el = el;
            o->valid = true;
            o->maybe_lost = false;
        }
        d->dpend = el;
        d->dhold = true;
        d->started = false;
        return;
    case TB_PKT_OOO_DATA:
        if (!(pkt->data_tag & 3) || !o->valid)
            break;
        el = o->el;
        el.index = pkt->index;
        el.data_flags |= TB_DATA_OOO;
        take_value(&el, pkt);
        o->valid = false;
        etmv3_emit(d, e, &el);
        return;
    default:
        /* Store failed only right after a data packet (dhold, taken in
         * tb_etmv3_decoder_packet); data-suppressed packets are not
         * output in data-only mode (7.4.10). */
        break;
    }
    tb_etmv3_dec_lose_sync(d, e, pkt->index, err);
}

void tb_etmv3_dec_do_data(tb_etmv3_decoder *d, tb_emit *e, const tb_packet *pkt)
{
    tb_element el;
    int err = 0;

    if (!d->cfg.data_trace) {
        /* ETMCR[3:2] = 0: no data packet can come (IHI0014Q 7.4). */
        tb_etmv3_dec_lose_sync(d, e, pkt->index, TB_ERR_CONFIG);
        return;
    }
    if (d->cfg.data_only) {
        do_data_only(d, e, pkt);
        return;
    }
    switch (pkt->kind) {
    case TB_PKT_DATA:
    case TB_PKT_VALUE_NOT_TRACED:
    case TB_PKT_OOO_PLACEHOLDER:
        if ((err = find_data_insn(d)) < 0 || (err = data_elem(d, pkt, &el)) < 0)
            break;
        if (pkt->kind == TB_PKT_DATA && (d->cfg.data_trace & 1) &&
            (err = take_value(&el, pkt)) < 0)
            break;
        if (pkt->kind == TB_PKT_OOO_PLACEHOLDER) {
            /* 7.2 Table 7.1: the value comes later in the OOO data packet
             * with the same tag.  An outstanding one with this tag whose
             * value a gap or suppression may have lost goes first. */
            struct ooo_slot *o = &d->ooo[pkt->data_tag & 3];

            if (!(pkt->data_tag & 3)) {
                err = TB_ERR_BAD_PACKET;
                break;
            }
            if (o->valid) {
                if (!o->maybe_lost && d->ton.index <= o->el.index) {
                    err = TB_ERR_MISMATCH; /* its tag is still out */
                    break;
                }
                tb_etmv3_dec_ooo_lost(d, e, pkt->data_tag & 3, pkt->index);
            }
            el.reason = pkt->data_tag & 3;
            o->el = el;
            o->valid = true;
            o->maybe_lost = false;
        }
        data_out(d, e, &el, d->dx.op.excl);
        return;
    case TB_PKT_OOO_DATA: {
        struct ooo_slot *o = &d->ooo[pkt->data_tag & 3];

        if (!(pkt->data_tag & 3) || !o->valid) {
            err = TB_ERR_MISMATCH; /* no placeholder with its tag */
            break;
        }
        el = o->el;
        el.index = pkt->index;
        el.data_flags |= TB_DATA_OOO;
        if ((err = take_value(&el, pkt)) < 0)
            break;
        o->valid = false;
        data_out(d, e, &el, false);
        return;
    }
    case TB_PKT_STORE_FAILED:
        /* Only right after a store-exclusive's data (dhold, taken in
         * tb_etmv3_decoder_packet). */
        err = TB_ERR_MISMATCH;
        break;
    case TB_PKT_DATA_SUPPRESSED:
        /* 7.4.6: data packets were deleted from here, those of the data
         * instruction in progress to its end; nothing says how many.  A
         * DATA element flagged SUPPRESSED marks the hole; outstanding
         * placeholders may never get their value. */
        tb_elem_init(&el, TB_ELEM_DATA, pkt->index);
        el.data_flags = TB_DATA_SUPPRESSED | TB_DATA_NO_ADDR | TB_DATA_NO_VALUE;
        if (find_data_insn(d) == 0) {
            el.last_addr = d->dx.addr;
            el.isa = d->dx.isa;
            el.last_size = d->dx.size;
            d->dx.done = d->dx.op.n;
        } else {
            el.isa = TB_ISA_UNKNOWN;
        }
        for (unsigned t = 1; t < 4; t++)
            d->ooo[t].maybe_lost = d->ooo[t].valid;
        etmv3_emit(d, e, &el);
        return;
    default:
        return;
    }
    tb_etmv3_dec_lose_sync(d, e, pkt->index, err);
}
