/*
 * What the ETMv3 and PTM decompressors share (private): the flow and
 * context state both keep, and what both do with it (trace on, context,
 * lost addresses and sync, where a branch or I-sync sends the flow, the
 * packet path's fields for the fused entries).
 *
 * The part below TB_DEC_CORE_H is a template: each decoder defines
 *   TB_DEC            its struct (which holds TB_DEC_STATE, cfg, rng, ton),
 *   TB_DEC_ISYNC      its fused I-sync fields (fused.h),
 *   TB_DEC_BRANCH     its fused branch fields,
 *   TB_DEC_EXC        the type holding a branch's exception number, ns,
 *                     hyp and their valid bits (PTM: the branch itself;
 *                     ETMv3: its x), and TB_DEC_EXC_OF(br) that part of br,
 *   TB_DEC_ISYNC_MORE(is, pkt), TB_DEC_BRANCH_MORE(br, pkt)  the fields
 *                     of the protocol's own that a packet gives an I-sync
 *                     or a branch of the packet path,
 *   TB_DEC_OUT(d, e, el)  how an element other than a range leaves (ETMv3
 *                     first lets out its held range),
 *   TB_DEC_JUMP(d)    the flow went where no block edge leads,
 *   TB_DEC_JAZELLE    1 when Jazelle addresses keep bit 0 (ETMv3),
 * and then includes this header, so that every function here is its own,
 * static, with its hooks inlined: the shared code lives once in the
 * source, yet the hot paths (I-syncs, branches) stay inlined into each
 * protocol's decoder (through function pointers PTM lost 1-2%, issue 30).
 * The fields are named alike in both protocols' structs; that is the
 * whole contract.
 */
#ifndef TB_DEC_CORE_H
#define TB_DEC_CORE_H

#include <stdlib.h>
#include <string.h>

#include "../common/struct_size.h"
#include "block_cache.h"
#include "dec_util.h"
#include "fused.h"

/* The state both decompressors keep, in this order (after their cfg). */
#define TB_DEC_STATE                                                                      \
    const tb_memimage *mem;                                                              \
    tb_block_cache *bc;                                                                  \
    bool started; /* NO_SYNC(init) emitted */                                            \
    bool synced;  /* an I-sync seen since the last loss of sync */                       \
    bool gap;     /* trace lost since the last I-sync */                                 \
    bool pc_known;                                                                       \
    uint32_t pc;                                                                         \
    uint8_t isa;                                                                         \
    bool ctx_known;                                                                      \
    bool ns, hyp;                                                                        \
    uint32_t context_id;                                                                 \
    uint8_t vmid

/* A decoder of `size` bytes, zeroed, for *cfg (taken as this build's
 * into *own, *cfg then pointing at it: common/struct_size.h) of protocol
 * and mem; NULL when either is missing, refused or of another protocol,
 * or without memory. */
static inline void *tb_dec_alloc(size_t size, const tb_config **cfg, tb_config *own,
                                 const tb_memimage *mem, tb_protocol protocol)
{
    const tb_config *c = *cfg = tb_config_take(own, *cfg, NULL, 0);

    if (!c || !mem || c->protocol != protocol)
        return NULL;
    return calloc(1, size);
}

/* The error of a bad packet (reserved, bad sequence or trace mode,
 * incomplete): its own, else what its kind says. */
static inline int tb_dec_bad_err(const tb_packet *pkt)
{
    if (pkt->kind == TB_PKT_INCOMPLETE)
        return TB_ERR_TRUNCATED;
    return pkt->err ? pkt->err : TB_ERR_BAD_PACKET;
}

#endif /* TB_DEC_CORE_H */

#ifdef TB_DEC

/* Where an instruction address starts: the ISA's alignment (ARM 4,
 * Thumb 2; Jazelle's bytecodes any, in ETMv3). */
static inline uint32_t dec_insn_addr(uint32_t addr, uint8_t isa)
{
    if (isa == TB_ISA_ARM)
        return addr & ~3u;
    if (TB_DEC_JAZELLE && isa == TB_ISA_JAZELLE)
        return addr;
    return addr & ~1u;
}

/* d at its creation (zeroed): its configuration and image, the range
 * and trace-on elements it renews in place. */
static void dec_init(TB_DEC *d, const tb_config *cfg, const tb_memimage *mem)
{
    d->cfg = *cfg;
    d->mem = mem;
    tb_elem_init(&d->rng, TB_ELEM_INSN_RANGE, 0);
    tb_elem_init(&d->ton, TB_ELEM_TRACE_ON, 0);
}

/* The shared state as at the start of a trace. */
static void dec_reset(TB_DEC *d)
{
    d->started = d->synced = false;
    d->gap = true;
    d->pc_known = false;
    d->pc = 0;
    d->isa = TB_ISA_UNKNOWN;
    d->ctx_known = false;
    d->ns = d->hyp = false;
    d->context_id = 0;
    d->vmid = 0;
    TB_DEC_JUMP(d);
}

/* The first packet of a trace: the initial gap goes out first. */
static inline void dec_start(TB_DEC *d, tb_emit *e, uint64_t index)
{
    tb_element el;

    if (d->started)
        return;
    tb_elem_init(&el, TB_ELEM_NO_SYNC, index);
    el.reason = TB_GAP_INIT;
    TB_DEC_OUT(d, e, &el);
    d->started = true;
}

static void dec_context(TB_DEC *d, tb_emit *e, uint64_t index)
{
    tb_element el;

    tb_elem_init(&el, TB_ELEM_CONTEXT, index);
    el.isa = d->isa;
    el.ns = d->ns;
    el.hyp = d->hyp;
    el.context_id = d->context_id;
    el.vmid = d->vmid;
    TB_DEC_OUT(d, e, &el);
    d->ctx_known = true;
}

/* A Context ID or a VMID packet: a context element when it changes
 * what the decode last showed. */
static void dec_context_packet(TB_DEC *d, tb_emit *e, const tb_packet *pkt)
{
    if (pkt->kind == TB_PKT_CONTEXT_ID) {
        if (pkt->context_id == d->context_id && d->ctx_known)
            return;
        d->context_id = pkt->context_id;
    } else {
        if (pkt->vmid == d->vmid && d->ctx_known)
            return;
        d->vmid = pkt->vmid;
    }
    dec_context(d, e, pkt->index);
}

/* Out of sync (why: reason, err), shown at the address the flow stood
 * at when at_pc; a bad packet also waits for the next I-sync. */
static void dec_lose_sync(TB_DEC *d, tb_emit *e, uint64_t index, tb_gap_reason reason, int err,
                          bool at_pc)
{
    tb_element el;

    tb_elem_init(&el, TB_ELEM_NO_SYNC, index);
    el.reason = (uint8_t)reason;
    el.err = err;
    if (at_pc) {
        el.start = d->pc;
        el.isa = d->isa;
    }
    TB_DEC_OUT(d, e, &el);
    d->pc_known = false;
    TB_DEC_JUMP(d);
    d->gap = true;
    if (reason == TB_GAP_BAD_PACKET)
        d->synced = false;
}

/* The address left the image at addr (or the ISA cannot be decoded):
 * reported once, then nothing until the next explicit address
 * (protocol-notes 4.1).  count and cc: the instruction it stands for. */
static void dec_lose_address(TB_DEC *d, tb_emit *e, uint64_t index, uint32_t addr,
                             uint8_t status, uint32_t count, bool has_cc, uint32_t cc)
{
    tb_element el;

    tb_elem_init(&el, TB_ELEM_ADDR_NACC, index);
    el.start = addr;
    el.isa = d->isa;
    el.ns = d->ns;
    el.reason = TB_GAP_NO_MEMORY;
    el.err = status == TB_BLOCK_BAD_ISA ? TB_ERR_UNSUPPORTED : TB_ERR_NOT_IN_IMAGE;
    el.count = count;
    if (has_cc) {
        el.has_cc = true;
        el.cc = cc;
    }
    TB_DEC_OUT(d, e, &el);
    d->pc_known = false;
    TB_DEC_JUMP(d);
}

/* An atom while the address is not known: its fate without one. */
static void dec_unknown_atom(TB_DEC *d, tb_emit *e, uint64_t index, char atom, bool has_cc,
                             uint32_t cc)
{
    tb_element el;

    tb_elem_init(&el, TB_ELEM_ADDR_UNKNOWN, index);
    el.last_atom = atom;
    el.count = 1;
    el.isa = d->isa;
    if (has_cc) {
        el.has_cc = true;
        el.cc = cc;
    }
    TB_DEC_OUT(d, e, &el);
}

/* Whether I-sync is changes the context the decode last showed. */
static TB_ALWAYS_INLINE bool dec_isync_new_context(const TB_DEC *d, const TB_DEC_ISYNC *is)
{
    return !d->ctx_known || is->ns != d->ns || is->hyp != d->hyp ||
           (is->has_ctxid && is->context_id != d->context_id);
}

/* The trace-on element of I-sync is (at start, its cycles to be set by
 * the caller), to go out. */
static TB_ALWAYS_INLINE tb_element *dec_trace_on(TB_DEC *d, const TB_DEC_ISYNC *is,
                                                 uint32_t start)
{
    tb_element *el = &d->ton;

    el->index = is->index;
    el->reason = is->reason;
    el->start = start;
    el->isa = is->isa;
    return el;
}

/* I-sync is synchronises: its ISA, security state and context. */
static TB_ALWAYS_INLINE void dec_isync_state(TB_DEC *d, const TB_DEC_ISYNC *is)
{
    d->synced = true;
    d->gap = false;
    d->isa = is->isa;
    d->ns = is->ns;
    d->hyp = is->hyp;
    if (is->has_ctxid)
        d->context_id = is->context_id;
}

/* A branch's security state and Hyp bits (x): true when they changed. */
static TB_ALWAYS_INLINE bool dec_branch_state(TB_DEC *d, const TB_DEC_EXC *x)
{
    bool changed = false;

    if (x->ns_valid && x->ns != d->ns) {
        d->ns = x->ns;
        changed = true;
    }
    if (x->hyp_valid && x->hyp != d->hyp) {
        d->hyp = x->hyp;
        changed = true;
    }
    return changed;
}

/* The flow goes to branch br's address, when it has one whole; a
 * context change (ctx_changed) shows after. */
static TB_ALWAYS_INLINE void dec_branch_to(TB_DEC *d, tb_emit *e, const TB_DEC_BRANCH *br,
                                           bool ctx_changed)
{
    if (!br->addr_known) {
        d->pc_known = false;
        return;
    }
    d->isa = br->isa;
    d->pc = dec_insn_addr(br->addr, d->isa);
    d->pc_known = true;
    if (ctx_changed)
        dec_context(d, e, br->index);
}

/* The exception element of a branch with exception number num to its
 * vector (br's address), returning to pref_return (0: not known), with
 * err. */
static inline void dec_exception(TB_DEC *d, tb_element *el, const TB_DEC_BRANCH *br,
                                 uint16_t num, uint32_t pref_return, int err)
{
    tb_elem_init(el, TB_ELEM_EXCEPTION, br->index);
    el->exc_num = num;
    el->pref_return = pref_return;
    el->isa = d->isa;
    el->start = dec_insn_addr(br->addr, br->isa);
    el->err = err;
}

/* The fields do_isync() reads, from a packet of the packet path (the
 * rest zero). */
static inline TB_DEC_ISYNC dec_isync_of(const tb_packet *pkt)
{
    TB_DEC_ISYNC is;

    memset(&is, 0, sizeof is);
    is.index = pkt->index;
    is.addr = pkt->addr;
    is.isa = (uint8_t)pkt->isa;
    is.reason = pkt->reason;
    is.ns = pkt->ns;
    is.hyp = pkt->hyp;
    is.has_cc = pkt->has_cc;
    is.cc = pkt->cc;
    is.has_ctxid = pkt->has_ctxid;
    is.context_id = pkt->context_id;
    TB_DEC_ISYNC_MORE(&is, pkt);
    return is;
}

/* The fields do_branch() reads, from a packet of the packet path (the
 * rest zero). */
static inline TB_DEC_BRANCH dec_branch_of(const tb_packet *pkt)
{
    TB_DEC_BRANCH br;
    TB_DEC_EXC *x = TB_DEC_EXC_OF(&br);

    memset(&br, 0, sizeof br);
    br.index = pkt->index;
    br.addr = pkt->addr;
    br.isa = (uint8_t)pkt->isa;
    br.addr_known = pkt->addr_known;
    x->has_exc = pkt->has_exc;
    x->exc_num = pkt->exc_num;
    x->ns = pkt->ns;
    x->ns_valid = pkt->ns_valid;
    x->hyp = pkt->hyp;
    x->hyp_valid = pkt->hyp_valid;
    TB_DEC_BRANCH_MORE(&br, pkt);
    return br;
}

/* The public entries of protocol v's decoder, over its do_isync() and
 * do_branch() and these hooks:
 *   first(d, e, pkt)  true when it took pkt before anything else (its
 *                     held elements, its atoms once synchronised),
 *   lose(d, e, index, err)  a bad packet: sync lost,
 *   other(d, e, pkt)  every packet after the first I-sync that is no
 *                     branch, context or trigger,
 *   end(d, e)         at the end of the trace, before its END.
 * tb_<v>_decoder_packet: the initial gap, bad packets, I-syncs; until an
 * I-sync nothing else, as there is no address to decode from (ETMv3
 * protocol-notes 2.3, PTM 3.3; DS-5 drops them too).
 * tb_<v>_decoder_finish.  The fused path's tb_<v>_decoder_isync and
 * _branch (fused.h): 0 before the first packet (the packet path reports
 * the initial gap), and for a branch before the first I-sync (the packet
 * path has elements to give). */
#define TB_DEC_ENTRIES(v, first, lose, other, end)                                        \
    int tb_##v##_decoder_packet(tb_##v##_decoder *d, const tb_packet *pkt,               \
                                tb_element_cb cb, void *ctx)                             \
    {                                                                                    \
        tb_emit e;                                                                       \
                                                                                         \
        if (!d || !pkt)                                                                  \
            return TB_ERR_INVAL;                                                         \
        tb_emit_init(&e, cb, ctx);                                                       \
        if (first(d, &e, pkt))                                                           \
            return tb_emit_result(&e);                                                   \
        dec_start(d, &e, pkt->index);                                                    \
        switch (pkt->kind) {                                                             \
        case TB_PKT_RESERVED:                                                            \
        case TB_PKT_BAD_SEQUENCE:                                                        \
        case TB_PKT_BAD_TRACEMODE:                                                       \
        case TB_PKT_INCOMPLETE:                                                          \
            lose(d, &e, pkt->index, tb_dec_bad_err(pkt));                                \
            return tb_emit_result(&e);                                                   \
        case TB_PKT_ISYNC: {                                                             \
            const TB_DEC_ISYNC is = dec_isync_of(pkt);                                   \
                                                                                         \
            do_isync(d, &e, &is);                                                        \
            return tb_emit_result(&e);                                                   \
        }                                                                                \
        default:                                                                         \
            break;                                                                       \
        }                                                                                \
        if (!d->synced)                                                                  \
            return tb_emit_result(&e);                                                   \
        switch (pkt->kind) {                                                             \
        case TB_PKT_BRANCH: {                                                            \
            const TB_DEC_BRANCH br = dec_branch_of(pkt);                                 \
                                                                                         \
            do_branch(d, &e, &br);                                                       \
            break;                                                                       \
        }                                                                                \
        case TB_PKT_CONTEXT_ID:                                                          \
        case TB_PKT_VMID:                                                                \
            dec_context_packet(d, &e, pkt);                                              \
            break;                                                                       \
        case TB_PKT_TRIGGER: {                                                           \
            tb_element el;                                                               \
                                                                                         \
            tb_elem_init(&el, TB_ELEM_EVENT, pkt->index);                                \
            TB_DEC_OUT(d, &e, &el);                                                      \
            break;                                                                       \
        }                                                                                \
        default:                                                                         \
            other(d, &e, pkt);                                                           \
            break;                                                                       \
        }                                                                                \
        return tb_emit_result(&e);                                                       \
    }                                                                                    \
    int tb_##v##_decoder_finish(tb_##v##_decoder *d, tb_element_cb cb, void *ctx)        \
    {                                                                                    \
        tb_emit e;                                                                       \
        tb_element el;                                                                   \
                                                                                         \
        if (!d)                                                                          \
            return TB_ERR_INVAL;                                                         \
        tb_emit_init(&e, cb, ctx);                                                       \
        end(d, &e);                                                                      \
        tb_elem_init(&el, TB_ELEM_END, 0);                                               \
        TB_DEC_OUT(d, &e, &el);                                                          \
        return tb_emit_result(&e);                                                       \
    }                                                                                    \
    int tb_##v##_decoder_isync(tb_##v##_decoder *d, const tb_##v##_isync *is,            \
                               tb_element_cb cb, void *ctx, int *nel)                    \
    {                                                                                    \
        tb_emit e;                                                                       \
                                                                                         \
        if (!d || !is || !d->started)                                                    \
            return 0;                                                                    \
        tb_emit_init(&e, cb, ctx);                                                       \
        do_isync(d, &e, is);                                                             \
        return tb_emit_took(&e, 1, nel);                                                 \
    }                                                                                    \
    int tb_##v##_decoder_branch(tb_##v##_decoder *d, const tb_##v##_branch *br,          \
                                tb_element_cb cb, void *ctx, int *nel)                   \
    {                                                                                    \
        tb_emit e;                                                                       \
                                                                                         \
        if (!d || !br || !d->started || !d->synced)                                      \
            return 0;                                                                    \
        tb_emit_init(&e, cb, ctx);                                                       \
        do_branch(d, &e, br);                                                            \
        return tb_emit_took(&e, 1, nel);                                                 \
    }

#endif /* TB_DEC */
