/*
 * The trace-port parsers' and decoders' shared cores (ETMv1, ETMv2;
 * private).
 *
 * port_parser.c is the parsers' shell: the capture's bytes cut into its
 * header and samples (common/etm_port.c's framer), the configuration the
 * header gives, the ATOM run being filled, the output, errors, finish,
 * reset and life cycle; etmv1_parser.c and etmv2_parser.c turn one
 * sample into packets (their PIPESTAT tables, how TRACEPKT is read, how
 * packets are built) behind tb_port_parser_ops.
 *
 * The decoders:
 * port_decoder.c walks the image for the statuses, builds the ranges,
 * holds the last element while its cycles come (cycle-accurate, port_cc.h),
 * puts out trace-on, context, exception, trigger and loss elements and
 * owns the life cycle; etmv1_decoder.c and etmv2_decoder.c keep what is
 * their protocol's (the packets' meaning, ETMv2's cancel, data trace)
 * behind a small hook table, as the encoder's enc_ops
 * (encoder/encoder_internal.h).  Each protocol's decoder struct starts
 * with its tb_port_dec, so a hook casts the core back to it.
 */
#ifndef TB_PORT_INTERNAL_H
#define TB_PORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tracebench/classify.h"
#include "tracebench/decoder.h"
#include "tracebench/etm_port.h"
#include "tracebench/etmv1.h"
#include "tracebench/etmv2.h"
#include "../common/port_size.h"
#include "backend.h"
#include "dec_util.h"
#include "mem_op.h"

/* Where a wait cycle's count goes (CA): nowhere, the open range, the
 * held element. */
enum { TB_PORT_W_NONE, TB_PORT_W_RNG, TB_PORT_W_HELD };

/* What a walked instruction did to the flow (tb_port_dec_walk). */
enum { TB_PORT_NO_INSN = -1, TB_PORT_SEQ, TB_PORT_DIRECT, TB_PORT_INDIRECT };

typedef struct tb_port_dec tb_port_dec;

/* The protocol's two hot hooks, passed to the core's inline packet
 * function (tb_port_dec_packet) so that each port's copy calls its own
 * directly.  step: one status of an ATOM run that is no wait cycle.
 * packet: every packet kind the core does not take (not ATOM, TRIGGER or
 * a bad packet). */
typedef void (*tb_port_step_fn)(tb_port_dec *c, uint64_t index, char atom);
typedef void (*tb_port_packet_fn)(tb_port_dec *c, const tb_packet *pkt);

typedef struct tb_port_dec_ops {
    tb_protocol protocol;
    /* An element to go out; NULL: straight to the callback
     * (tb_port_dec_deliver).  ETMv1 queues them behind data not come. */
    void (*emit)(tb_port_dec *c, const tb_element *el);
    /* The held element went out: what waits behind it (its data). */
    void (*held_out)(tb_port_dec *c);
    /* Trace was lost (tb_port_dec_lose): the protocol's own sync. */
    void (*lost)(tb_port_dec *c);
    /* Before a bad packet's loss; may be NULL. */
    void (*bad)(tb_port_dec *c);
    /* The end of the trace, before END: close what is open. */
    void (*end)(tb_port_dec *c);
    /* The protocol's part of a reset; may be NULL. */
    void (*reset)(tb_port_dec *c);
    /* Allocates what the protocol needs (its configuration set): 0, or
     * negative; may be NULL.  fini frees it; may be NULL. */
    int (*init)(tb_port_dec *c);
    void (*fini)(tb_port_dec *c);
    bool t_wait;  /* 'T' in an ATOM run is a counted cycle (ETMv1 CA) */
    bool retract; /* the newest instruction can be taken back (ETMv2's E,
                   * IHI0014Q 6.7.1): its range stays open, undo kept */
} tb_port_dec_ops;

struct tb_port_dec {
    const tb_port_dec_ops *ops;
    const tb_memimage *mem;
    tb_classifier *cls;
    bool cycle_accurate;
    uint32_t vector_base;

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
    tb_element undo;     /* retract: rng before its last instruction */
    bool undo_ok;        /* the last instruction is rng's last */
    tb_element held;     /* closed range or exception still counting cycles (CA) */
    bool have_held;
    unsigned w_target;
    bool w_sure;         /* no uncertain wait since the last status (CA) */
    unsigned w_apo;      /* ETMv1: APO cycles of the last status still to come */
    bool w_past;         /* a counted cycle past the status's own (CA) */
    unsigned trig_held;  /* triggers that came while a range was held */
    uint64_t trig_index;

    uint32_t ctxid;
    bool ctx_known;
    tb_element ctx_el;   /* a CONTEXT waiting for its status's range */
    bool ctx_pending;

    tb_element_cb cb;
    void *ctx;
    int emitted;
    bool stop;
};

/* Life cycle: a decoder of `size` bytes starting with its tb_port_dec
 * (NULL: no memory), reset; the tb_decoder_ops entries of both ports. */
void *tb_port_dec_new(size_t size, const tb_port_dec_ops *ops, const tb_memimage *mem,
                      bool cycle_accurate, uint32_t vector_base);
void tb_port_dec_op_destroy(void *d);
void tb_port_dec_op_reset(void *d);
int tb_port_dec_op_finish(void *d, tb_element_cb cb, void *ctx);
void tb_port_dec_op_cycle_ranges(void *d, bool on);

/* A port's public decoder functions (tracebench/etmvN.h), for port v
 * (etmv1, etmv2) of protocol TB_PROTO_<PROTO>, whose hook table is
 * `hooks` (an expression of the configuration cfg), with its step and
 * packet hooks: tb_<v>_decoder_new,
 * _free, _reset, _packet, _finish and tb_<v>_decoder_ops (no fused
 * path), all the core's.  The decoder struct starts with the core `port`
 * and has its `cfg`. */
#define TB_PORT_DECODER_API(v, PROTO, hooks, step_fn, packet_fn)                          \
    tb_##v##_decoder *tb_##v##_decoder_new(const tb_##v##_config *cfg,                   \
                                           const tb_memimage *mem)                       \
    {                                                                                    \
        tb_##v##_config own; /* the caller's, as this build's (port_size.h) */           \
        tb_##v##_decoder *d;                                                             \
                                                                                         \
        if (!mem || !(cfg = tb_etm_port_config_take(&own, cfg)) ||                          \
            tb_##v##_config_check(cfg) < 0)                                              \
            return NULL;                                                                 \
        d = tb_port_dec_new(sizeof *d, hooks, mem, cfg->cycle_accurate, cfg->vector_base); \
        if (!d)                                                                          \
            return NULL;                                                                 \
        d->cfg = *cfg;                                                                   \
        if (d->port.ops->init && d->port.ops->init(&d->port) < 0) {                      \
            tb_port_dec_op_destroy(d);                                                   \
            return NULL;                                                                 \
        }                                                                                \
        return d;                                                                        \
    }                                                                                    \
    void tb_##v##_decoder_free(tb_##v##_decoder *d) { tb_port_dec_op_destroy(d); }       \
    void tb_##v##_decoder_reset(tb_##v##_decoder *d) { tb_port_dec_op_reset(d); }        \
    static int v##_decoder_packet_op(void *d, const tb_packet *pkt, tb_element_cb cb,    \
                                     void *ctx)                                          \
    {                                                                                    \
        return tb_port_dec_packet(d, pkt, cb, ctx, step_fn, packet_fn);                  \
    }                                                                                    \
    int tb_##v##_decoder_packet(tb_##v##_decoder *d, const tb_packet *pkt,               \
                                tb_element_cb cb, void *ctx)                             \
    {                                                                                    \
        return v##_decoder_packet_op(d, pkt, cb, ctx);                                   \
    }                                                                                    \
    int tb_##v##_decoder_finish(tb_##v##_decoder *d, tb_element_cb cb, void *ctx)        \
    {                                                                                    \
        return tb_port_dec_op_finish(d, cb, ctx);                                        \
    }                                                                                    \
    static void *v##_decoder_make(const tb_config *cfg, const tb_memimage *mem)          \
    {                                                                                    \
        tb_##v##_config c;                                                               \
                                                                                         \
        tb_##v##_config_init(&c);                                                        \
        return tb_##v##_config_from_tb(&c, cfg) < 0 ? NULL : tb_##v##_decoder_new(&c, mem); \
    }                                                                                    \
    const tb_decoder_ops tb_##v##_decoder_ops = {                                        \
        .protocol = TB_PROTO_##PROTO, .make = v##_decoder_make,                          \
        .destroy = tb_port_dec_op_destroy, .packet = v##_decoder_packet_op,              \
        .finish = tb_port_dec_op_finish, .reset = tb_port_dec_op_reset,                  \
        .cycle_ranges = tb_port_dec_op_cycle_ranges,                                     \
    }

/* A NO_SYNC for why (err) at index. */
void tb_port_dec_emit_gap(tb_port_dec *c, uint64_t index, tb_gap_reason why, int err);

/* Ranges and held elements (port_cc.h). */
void tb_port_dec_settle(tb_port_dec *c);
void tb_port_dec_settle_open(tb_port_dec *c, bool lost);
void tb_port_dec_emit_counted(tb_port_dec *c, tb_element *el, uint32_t cc);
void tb_port_dec_lose(tb_port_dec *c, uint64_t index, tb_gap_reason why, int err);

/* The packet path's cold parts: its start, a trigger, a bad packet, an
 * instruction the image lacks. */
void tb_port_dec_enter(tb_port_dec *c, tb_element_cb cb, void *ctx, const tb_packet *pkt);
void tb_port_dec_trigger(tb_port_dec *c, const tb_packet *pkt);
void tb_port_dec_bad(tb_port_dec *c, const tb_packet *pkt);
void tb_port_dec_no_insn(tb_port_dec *c, uint64_t index);

/* Exceptions, trace on, context. */
int tb_port_dec_vector_offset(const tb_port_dec *c, uint32_t addr);
uint16_t tb_port_dec_exc_number(int off);
void tb_port_dec_exception(tb_element *el, uint64_t index, int off, bool cancelled,
                           bool known, uint32_t at);
/* Transfer k of a data instruction (at addr, of isa and size) with op:
 * its DATA element but for the value (flags: store, no address). */
void tb_port_dec_data_el(tb_element *el, uint64_t index, uint32_t addr, uint8_t isa,
                         uint8_t size, const tb_mem_op *op, unsigned k, bool addr_ok,
                         uint32_t daddr);
void tb_port_dec_trace_on(tb_port_dec *c, const tb_packet *pkt, uint8_t reason);
void tb_port_dec_context(tb_port_dec *c, const tb_packet *pkt, bool defer);

/* ---- the decoders' hot path, inline: each port's copy calls its own
 * hooks directly (a status costs about as much as a call) ---- */

static inline void tb_port_dec_deliver(tb_port_dec *c, const tb_element *el)
{
    if (c->stop)
        return;
    c->emitted++;
    if (c->cb && c->cb(c->ctx, el))
        c->stop = true;
}

static inline void tb_port_dec_emit(tb_port_dec *c, const tb_element *el)
{
    if (c->ops->emit)
        c->ops->emit(c, el);
    else
        tb_port_dec_deliver(c, el);
}

static inline void tb_port_dec_release_held(tb_port_dec *c)
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

static inline void tb_port_dec_close_range(tb_port_dec *c)
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
static inline void tb_port_dec_release_context(tb_port_dec *c)
{
    if (!c->ctx_pending)
        return;
    tb_port_dec_close_range(c);
    tb_port_dec_release_held(c);
    c->ctx_pending = false;
    tb_port_dec_emit(c, &c->ctx_el);
}

/* Classifies the instruction at the PC; false (after an element) when
 * the image lacks it. */
static inline bool tb_port_dec_insn_at(tb_port_dec *c, uint64_t index, tb_insn *in)
{
    size_t avail = 0;
    const uint8_t *b = tb_memimage_ptr(c->mem, c->pc, &avail);

    if (!b || tb_classifier_decode(c->cls, b, avail, c->pc, c->isa, in) < 0) {
        tb_port_dec_no_insn(c, index);
        return false;
    }
    return true;
}

static inline void tb_port_dec_add_insn(tb_port_dec *c, uint64_t index, const tb_insn *in, char atom)
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
static inline int tb_port_dec_walk(tb_port_dec *c, uint64_t index, char atom, tb_insn *in)
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

static inline void tb_port_dec_goto(tb_port_dec *c, uint32_t addr, tb_isa isa)
{
    c->pc = addr;
    c->isa = isa;
    c->pc_known = true;
}

/* An ATOM run: statuses walk; in CA mode the other counted cycles (W, and
 * ETMv1's T) go to the open range or the held element.  A 'T' is sure
 * to be the last status's (5.10); one of the APO cycles a BE still has
 * (w_apo, 5.6.1) is no cycle past it. */
static inline void tb_port_dec_atoms(tb_port_dec *c, const tb_packet *pkt, tb_port_step_fn step)
{
    unsigned i;

    for (i = 0; i < pkt->seq_len && !c->stop; i++) {
        char a = pkt->seq[i];

        if (a != 'W' && (a != 'T' || !c->ops->t_wait)) {
            step(c, pkt->index, a);
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

/* One packet: the core's kinds here, the rest the protocol's (packet). */
static inline int tb_port_dec_packet(void *d, const tb_packet *pkt, tb_element_cb cb, void *ctx,
                                     tb_port_step_fn step, tb_port_packet_fn packet)
{
    tb_port_dec *c = d;

    if (!c || !pkt)
        return TB_ERR_INVAL;
    tb_port_dec_enter(c, cb, ctx, pkt);
    switch (pkt->kind) {
    case TB_PKT_ATOM:
        tb_port_dec_atoms(c, pkt, step);
        break;
    case TB_PKT_TRIGGER:
        tb_port_dec_trigger(c, pkt);
        break;
    case TB_PKT_RESERVED:
    case TB_PKT_BAD_SEQUENCE:
    case TB_PKT_BAD_TRACEMODE:
    case TB_PKT_INCOMPLETE:
        tb_port_dec_bad(c, pkt);
        break;
    default:
        packet(c, pkt);
        break;
    }
    return c->stop ? TB_ERR_STOPPED : c->emitted;
}


/* ---- the parsers' shell (port_parser.c) ---- */

/* One port's configuration (etm_port.h: both protocols'). */
typedef tb_etm_port_config tb_port_cfg;

typedef struct tb_port_parser tb_port_parser;

/* Statuses wait in a bounded ring until what they need (a branch address,
 * a packet group) has been read, so packets come out in instruction
 * order.  ETMv2: a 4096-byte FIFO drains in 8192 cycles on a 4-bit port;
 * ETMv1: as long, and with data trace each cycle's data units too. */
#define TB_PORT_QMAX 16384u

/* Held entries: an ATOM run's E, N, W (a wait) and T (ETMv1: a counted
 * cycle sure to be the last status's), a trigger, then the protocol's
 * own kinds (the sample hook's), which its `own` hook puts out. */
enum { TB_PORT_Q_E, TB_PORT_Q_N, TB_PORT_Q_W, TB_PORT_Q_T, TB_PORT_Q_TRIG, TB_PORT_Q_OWN };

typedef struct tb_port_qent {
    uint8_t kind;
    uint8_t nb, b[2];       /* the protocol's: e.g. ETMv1's data units */
    uint32_t ref;           /* the protocol's: a branch or group serial */
    uint64_t index;
} tb_port_qent;

/* The protocol's two hot hooks, passed to the shell's inline loops
 * (tb_port_push, tb_port_drain) so that each port's copy calls its own
 * directly.  sample: one sample (its cycle's stream index), 0 or an
 * error.  own: the oldest held entry, of a kind >= TB_PORT_Q_OWN: 1 when
 * it went out (the ring moves on), 0 when it waits or after an error
 * (tb_port_fail emptied the ring), or negative. */
typedef int (*tb_port_sample_fn)(tb_port_parser *c, const tb_etmv1_sample *s, uint64_t index);
typedef int (*tb_port_own_fn)(tb_port_parser *c, const tb_port_qent *e);

typedef struct tb_port_parser_ops {
    tb_protocol protocol;
    /* After an error, the ring emptied: drop the rest of what is held. */
    void (*forget)(tb_port_parser *c);
    /* How many entries may wait for cfg (NULL: TB_PORT_QMAX). */
    unsigned (*qlimit)(const tb_port_cfg *cfg);
    /* The capture header into cfg (its protocol's member); the
     * protocol's defaults; what reset() does beside zeroing (may be
     * NULL). */
    int (*parse_header)(const uint8_t in[16], tb_port_cfg *cfg);
    void (*config_init)(tb_port_cfg *cfg);
    void (*reset)(tb_port_parser *c);
} tb_port_parser_ops;

struct tb_port_parser {
    const tb_port_parser_ops *ops;
    size_t size;            /* of the whole parser (reset) */
    tb_port_cfg cfg;
    bool have_cfg;          /* given, or read from the header */
    bool cfg_given;
    int err;                /* sticky format error */

    tb_etm_port_framer in;  /* byte input */
    tb_port_qent q[TB_PORT_QMAX]; /* held entries (ring) */
    unsigned qh, qn, qlimit;
    tb_packet atom;         /* ATOM being filled */

    /* output */
    tb_packet_cb cb;
    void *ctx;
    int emitted;
    bool stop;
};

/* A parser of `size` bytes starting with its tb_port_parser, with cfg
 * (its protocol's config, of cfg_size bytes) or, NULL, the protocol's
 * defaults to be replaced by the capture header's. */
void *tb_port_parser_new(size_t size, const tb_port_parser_ops *ops, const void *cfg,
                         size_t cfg_size);
void tb_port_parser_op_destroy(void *p);
void tb_port_parser_op_reset(void *p);
int tb_port_parser_op_finish(void *p, tb_packet_cb cb, void *ctx);
/* The push's set-up: 0 to go on, else what push returns. */
int tb_port_parser_enter(tb_port_parser *c, tb_packet_cb cb, void *ctx);
/* A complete capture header (the framer's). */
int tb_port_parser_header(tb_port_parser *c);

/* A port's parser hooks and public functions (tracebench/etmvN.h), for
 * port v (etmv1, etmv2) of protocol TB_PROTO_<PROTO>, given its sample,
 * forget, qlimit and reset hooks: the capture header and default
 * configuration hooks; the hook table; tb_<v>_parser_new, _free, _reset,
 * _config, _push, _push_samples, _finish and tb_<v>_parser_ops, all the
 * shell's.  The parser struct starts with the shell `port`. */
#define TB_PORT_PARSER_API(v, PROTO, sample_fn, forget_fn, qlimit_fn, reset_fn)          \
    static int v##_parse_header(const uint8_t in[16], tb_port_cfg *cfg)                  \
    {                                                                                    \
        return tb_##v##_capture_parse_header(in, cfg);                               \
    }                                                                                    \
    static void v##_config_init(tb_port_cfg *cfg) { tb_##v##_config_init(cfg); }     \
    static const tb_port_parser_ops v##_parser_hooks = {                                 \
        .protocol = TB_PROTO_##PROTO, .forget = forget_fn, .qlimit = qlimit_fn,          \
        .parse_header = v##_parse_header,                                                \
        .config_init = v##_config_init, .reset = reset_fn,                               \
    };                                                                                   \
    tb_##v##_parser *tb_##v##_parser_new(const tb_##v##_config *cfg)                     \
    {                                                                                    \
        tb_##v##_config own; /* the caller's, as this build's (port_size.h) */           \
                                                                                         \
        if (cfg && (!(cfg = tb_etm_port_config_take(&own, cfg)) ||                          \
                    tb_##v##_config_check(cfg) < 0))                                     \
            return NULL;                                                                 \
        return tb_port_parser_new(sizeof(tb_##v##_parser), &v##_parser_hooks, cfg,      \
                                  sizeof *cfg);                                          \
    }                                                                                    \
    void tb_##v##_parser_free(tb_##v##_parser *p) { tb_port_parser_op_destroy(p); }      \
    void tb_##v##_parser_reset(tb_##v##_parser *p) { tb_port_parser_op_reset(p); }       \
    const tb_##v##_config *tb_##v##_parser_config(const tb_##v##_parser *p)              \
    {                                                                                    \
        return p && p->port.have_cfg ? &p->port.cfg : NULL;                            \
    }                                                                                    \
    static int v##_parser_push_op(void *p, const uint8_t *data, size_t len,              \
                                  uint64_t index, tb_packet_cb cb, void *ctx)            \
    {                                                                                    \
        return tb_port_push(p, data, len, index, cb, ctx, sample_fn);                    \
    }                                                                                    \
    int tb_##v##_parser_push(tb_##v##_parser *p, const uint8_t *data, size_t len,        \
                             uint64_t index, tb_packet_cb cb, void *ctx)                 \
    {                                                                                    \
        return v##_parser_push_op(p, data, len, index, cb, ctx);                         \
    }                                                                                    \
    int tb_##v##_parser_push_samples(tb_##v##_parser *p, const tb_##v##_sample *s,       \
                                     size_t n, uint64_t first, tb_packet_cb cb, void *ctx) \
    {                                                                                    \
        return tb_port_push_samples(&p->port, s, n, first, cb, ctx, sample_fn);          \
    }                                                                                    \
    int tb_##v##_parser_finish(tb_##v##_parser *p, tb_packet_cb cb, void *ctx)           \
    {                                                                                    \
        return tb_port_parser_op_finish(p, cb, ctx);                                     \
    }                                                                                    \
    static void *v##_parser_make(const tb_config *cfg)                                   \
    {                                                                                    \
        tb_##v##_config c;                                                               \
                                                                                         \
        tb_##v##_config_init(&c);                                                        \
        return tb_##v##_config_from_tb(&c, cfg) < 0 ? NULL : tb_##v##_parser_new(&c);    \
    }                                                                                    \
    const tb_parser_ops tb_##v##_parser_ops = {                                          \
        .protocol = TB_PROTO_##PROTO, .make = v##_parser_make,                           \
        .destroy = tb_port_parser_op_destroy, .push = v##_parser_push_op,                \
        .finish = tb_port_parser_op_finish, .reset = tb_port_parser_op_reset,            \
    }

/* A packet of only a kind and an error, after the ATOM run; that, then
 * forget what is held. */
int tb_port_emit_simple(tb_port_parser *c, tb_pkt_kind kind, uint64_t index, int err);
int tb_port_fail(tb_port_parser *c, tb_pkt_kind kind, uint64_t index, int err);

/* The hot path, inline: each port's copy calls its own hooks directly
 * (a sample or a status costs about as much as a call). */

/* A packet out: 0, or TB_ERR_STOPPED. */
static inline int tb_port_out(tb_port_parser *c, const tb_packet *pkt)
{
    if (c->stop)
        return TB_ERR_STOPPED;
    c->emitted++;
    if (c->cb && c->cb(c->ctx, pkt)) {
        c->stop = true;
        return TB_ERR_STOPPED;
    }
    return 0;
}

/* A cleared packet of the protocol. */
static inline void tb_port_pkt_init(const tb_port_parser *c, tb_packet *k, tb_pkt_kind kind,
                                    uint64_t index)
{
    memset(k, 0, sizeof *k);
    k->kind = kind;
    k->protocol = c->ops->protocol;
    k->index = index;
}

static inline int tb_port_flush_atom(tb_port_parser *c)
{
    int rc;

    if (!c->atom.seq_len)
        return 0;
    rc = tb_port_out(c, &c->atom);
    tb_port_pkt_init(c, &c->atom, TB_PKT_ATOM, 0);
    return rc;
}

/* One more status or counted cycle ('W', 'T') in the ATOM run. */
static inline int tb_port_add_atom(tb_port_parser *c, char a, uint64_t index)
{
    if (!c->atom.seq_len)
        tb_port_pkt_init(c, &c->atom, TB_PKT_ATOM, index);
    c->atom.seq[c->atom.seq_len++] = a;
    if (a == 'W' || a == 'T')
        c->atom.w_count++;
    else
        c->atom.atom_count++;
    return c->atom.seq_len == sizeof c->atom.seq ? tb_port_flush_atom(c) : 0;
}

/* An entry at the ring's end: 0, or the error when it is full (what it
 * waits for never comes). */
static inline int tb_port_enqueue(tb_port_parser *c, uint8_t kind, uint64_t index, uint32_t ref)
{
    tb_port_qent *e;

    if (c->qn == c->qlimit)
        return tb_port_fail(c, TB_PKT_BAD_SEQUENCE, c->q[c->qh].index, TB_ERR_LIMIT);
    e = &c->q[(c->qh + c->qn++) % TB_PORT_QMAX];
    e->kind = kind;
    e->index = index;
    e->ref = ref;
    e->nb = 0;
    return 0;
}

/* Puts out the held entries up to the first that waits. */
static inline int tb_port_drain(tb_port_parser *c, tb_port_own_fn own)
{
    static const char atom[4] = {'E', 'N', 'W', 'T'}; /* TB_PORT_Q_E.. */
    int rc;

    while (c->qn) {
        const tb_port_qent *e = &c->q[c->qh];

        if (e->kind >= TB_PORT_Q_OWN) {
            if ((rc = own(c, e)) <= 0)
                return rc;
        } else if (e->kind == TB_PORT_Q_TRIG) {
            if ((rc = tb_port_emit_simple(c, TB_PKT_TRIGGER, e->index, 0)) < 0)
                return rc;
        } else if ((rc = tb_port_add_atom(c, atom[e->kind], e->index)) < 0) {
            return rc;
        }
        c->qh = (c->qh + 1) % TB_PORT_QMAX;
        c->qn--;
    }
    return 0;
}

/* The capture's bytes, in chunks of any size: its header, then a sample
 * each 4 bytes (tb_etmv1_sample_unpack: the sample word). */
static inline int tb_port_push(void *p, const uint8_t *data, size_t len, uint64_t index,
                               tb_packet_cb cb, void *ctx, tb_port_sample_fn sample)
{
    tb_port_parser *c = p;
    size_t i = 0;
    int rc, k;

    if (!c || (len && !data))
        return TB_ERR_INVAL;
    if ((rc = tb_port_parser_enter(c, cb, ctx)) != 0)
        return rc;
    c->in.pos = index;
    while ((k = tb_etm_port_framer_next(&c->in, data, len, &i)) != TB_ETM_PORT_NEED) {
        tb_etmv1_sample s;

        if (k == TB_ETM_PORT_HEADER) {
            if ((rc = tb_port_parser_header(c)) < 0)
                return rc;
            continue;
        }
        if (tb_etmv1_sample_unpack(c->in.part, &s) < 0)
            rc = tb_port_fail(c, TB_PKT_RESERVED, c->in.part_index, TB_ERR_FORMAT);
        else
            rc = sample(c, &s, c->in.part_index);
        if (rc < 0)
            return rc;
    }
    return c->emitted;
}

/* Samples already unpacked, the first at sample number `first`. */
static inline int tb_port_push_samples(tb_port_parser *c, const tb_etmv1_sample *s, size_t n,
                                       uint64_t first, tb_packet_cb cb, void *ctx,
                                       tb_port_sample_fn sample)
{
    size_t i;
    int rc;

    if (!c || (n && !s))
        return TB_ERR_INVAL;
    if (!c->have_cfg)
        return TB_ERR_CONFIG;
    c->cb = cb;
    c->ctx = ctx;
    c->emitted = 0;
    for (i = 0; i < n; i++)
        if ((rc = sample(c, &s[i], tb_etmv1_sample_index(first + i))) < 0)
            return rc;
    return c->emitted;
}

#endif /* TB_PORT_INTERNAL_H */
