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

#include "tracebench/classify.h"
#include "tracebench/decoder.h"
#include "tracebench/etm_port.h"
#include "tracebench/etmv1.h"
#include "tracebench/etmv2.h"
#include "backend.h"
#include "mem_op.h"

/* Where a wait cycle's count goes (CA): nowhere, the open range, the
 * held element. */
enum { TB_PORT_W_NONE, TB_PORT_W_RNG, TB_PORT_W_HELD };

/* What a walked instruction did to the flow (tb_port_dec_walk). */
enum { TB_PORT_NO_INSN = -1, TB_PORT_SEQ, TB_PORT_DIRECT, TB_PORT_INDIRECT };

typedef struct tb_port_dec tb_port_dec;

typedef struct tb_port_dec_ops {
    tb_protocol protocol;
    /* An element to go out; NULL: straight to the callback
     * (tb_port_dec_deliver).  ETMv1 queues them behind data not come. */
    void (*emit)(tb_port_dec *c, const tb_element *el);
    /* The held element went out: what waits behind it (its data). */
    void (*held_out)(tb_port_dec *c);
    /* Trace was lost (tb_port_dec_lose): the protocol's own sync. */
    void (*lost)(tb_port_dec *c);
    /* One status of an ATOM run that is no wait cycle. */
    void (*step)(tb_port_dec *c, uint64_t index, char atom);
    /* Every packet kind the core does not take (not ATOM, TRIGGER or a
     * bad packet). */
    void (*packet)(tb_port_dec *c, const tb_packet *pkt);
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
int tb_port_dec_op_packet(void *d, const tb_packet *pkt, tb_element_cb cb, void *ctx);
int tb_port_dec_op_finish(void *d, tb_element_cb cb, void *ctx);
void tb_port_dec_op_cycle_ranges(void *d, bool on);

/* A port's public decoder functions (tracebench/etmvN.h), for port v
 * (etmv1, etmv2) of protocol TB_PROTO_<PROTO>, whose hook table is
 * `hooks` (an expression of the configuration cfg): tb_<v>_decoder_new,
 * _free, _reset, _packet, _finish and tb_<v>_decoder_ops (no fused
 * path), all the core's.  The decoder struct starts with the core `port`
 * and has its `cfg`. */
#define TB_PORT_DECODER_API(v, PROTO, hooks)                                              \
    tb_##v##_decoder *tb_##v##_decoder_new(const tb_##v##_config *cfg,                   \
                                           const tb_memimage *mem)                       \
    {                                                                                    \
        tb_##v##_decoder *d;                                                             \
                                                                                         \
        if (!cfg || !mem || tb_##v##_config_check(cfg) < 0)                              \
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
    int tb_##v##_decoder_packet(tb_##v##_decoder *d, const tb_packet *pkt,               \
                                tb_element_cb cb, void *ctx)                             \
    {                                                                                    \
        return tb_port_dec_op_packet(d, pkt, cb, ctx);                                   \
    }                                                                                    \
    int tb_##v##_decoder_finish(tb_##v##_decoder *d, tb_element_cb cb, void *ctx)        \
    {                                                                                    \
        return tb_port_dec_op_finish(d, cb, ctx);                                        \
    }                                                                                    \
    static void *v##_decoder_make(const tb_config *cfg, const tb_memimage *mem)          \
    {                                                                                    \
        tb_##v##_config c;                                                               \
                                                                                         \
        return tb_##v##_config_from_tb(&c, cfg) < 0 ? NULL : tb_##v##_decoder_new(&c, mem); \
    }                                                                                    \
    const tb_decoder_ops tb_##v##_decoder_ops = {                                        \
        .protocol = TB_PROTO_##PROTO, .make = v##_decoder_make,                          \
        .destroy = tb_port_dec_op_destroy, .packet = tb_port_dec_op_packet,              \
        .finish = tb_port_dec_op_finish, .reset = tb_port_dec_op_reset,                  \
        .cycle_ranges = tb_port_dec_op_cycle_ranges,                                     \
    }

/* Output. */
void tb_port_dec_deliver(tb_port_dec *c, const tb_element *el);
void tb_port_dec_emit(tb_port_dec *c, const tb_element *el);
/* A NO_SYNC for why (err) at index. */
void tb_port_dec_emit_gap(tb_port_dec *c, uint64_t index, tb_gap_reason why, int err);

/* Ranges and held elements (port_cc.h). */
void tb_port_dec_release_held(tb_port_dec *c);
void tb_port_dec_close_range(tb_port_dec *c);
void tb_port_dec_release_context(tb_port_dec *c);
void tb_port_dec_settle(tb_port_dec *c);
void tb_port_dec_settle_open(tb_port_dec *c, bool lost);
void tb_port_dec_emit_counted(tb_port_dec *c, tb_element *el, uint32_t cc);
void tb_port_dec_lose(tb_port_dec *c, uint64_t index, tb_gap_reason why, int err);

/* The walk. */
bool tb_port_dec_insn_at(tb_port_dec *c, uint64_t index, tb_insn *in);
void tb_port_dec_add_insn(tb_port_dec *c, uint64_t index, const tb_insn *in, char atom);
int tb_port_dec_walk(tb_port_dec *c, uint64_t index, char atom, tb_insn *in);
void tb_port_dec_goto(tb_port_dec *c, uint32_t addr, tb_isa isa);

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

/* ---- the parsers' shell (port_parser.c) ---- */

/* One port's configuration: the parser's protocol's member. */
typedef union tb_port_cfg {
    tb_etmv1_config etmv1;
    tb_etmv2_config etmv2;
} tb_port_cfg;

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

typedef struct tb_port_parser_ops {
    tb_protocol protocol;
    /* One sample (its cycle's stream index): 0, or an error. */
    int (*sample)(tb_port_parser *c, const tb_etmv1_sample *s, uint64_t index);
    /* The oldest held entry, of a kind >= TB_PORT_Q_OWN: 1 when it went
     * out (the ring moves on), 0 when it waits or after an error
     * (tb_port_fail emptied the ring), or negative. */
    int (*own)(tb_port_parser *c, const tb_port_qent *e);
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
int tb_port_parser_op_push(void *p, const uint8_t *data, size_t len, uint64_t index,
                           tb_packet_cb cb, void *ctx);
int tb_port_parser_op_finish(void *p, tb_packet_cb cb, void *ctx);
int tb_port_parser_push_samples(void *p, const tb_etmv1_sample *s, size_t n, uint64_t first,
                                tb_packet_cb cb, void *ctx);

/* A port's parser hooks and public functions (tracebench/etmvN.h), for
 * port v (etmv1, etmv2) of protocol TB_PROTO_<PROTO>, given its sample,
 * own, forget, qlimit and reset hooks: the capture header and default
 * configuration hooks; the hook table; tb_<v>_parser_new, _free, _reset,
 * _config, _push, _push_samples, _finish and tb_<v>_parser_ops, all the
 * shell's.  The parser struct starts with the shell `port`. */
#define TB_PORT_PARSER_API(v, PROTO, sample_fn, own_fn, forget_fn, qlimit_fn, reset_fn)  \
    static int v##_parse_header(const uint8_t in[16], tb_port_cfg *cfg)                  \
    {                                                                                    \
        return tb_##v##_capture_parse_header(in, &cfg->v);                               \
    }                                                                                    \
    static void v##_config_init(tb_port_cfg *cfg) { tb_##v##_config_init(&cfg->v); }     \
    static const tb_port_parser_ops v##_parser_hooks = {                                 \
        .protocol = TB_PROTO_##PROTO, .sample = sample_fn, .own = own_fn,                \
        .forget = forget_fn, .qlimit = qlimit_fn, .parse_header = v##_parse_header,      \
        .config_init = v##_config_init, .reset = reset_fn,                               \
    };                                                                                   \
    tb_##v##_parser *tb_##v##_parser_new(const tb_##v##_config *cfg)                     \
    {                                                                                    \
        if (cfg && tb_##v##_config_check(cfg) < 0)                                       \
            return NULL;                                                                 \
        return tb_port_parser_new(sizeof(tb_##v##_parser), &v##_parser_hooks, cfg,      \
                                  sizeof *cfg);                                          \
    }                                                                                    \
    void tb_##v##_parser_free(tb_##v##_parser *p) { tb_port_parser_op_destroy(p); }      \
    void tb_##v##_parser_reset(tb_##v##_parser *p) { tb_port_parser_op_reset(p); }       \
    const tb_##v##_config *tb_##v##_parser_config(const tb_##v##_parser *p)              \
    {                                                                                    \
        return p && p->port.have_cfg ? &p->port.cfg.v : NULL;                            \
    }                                                                                    \
    int tb_##v##_parser_push(tb_##v##_parser *p, const uint8_t *data, size_t len,        \
                             uint64_t index, tb_packet_cb cb, void *ctx)                 \
    {                                                                                    \
        return tb_port_parser_op_push(p, data, len, index, cb, ctx);                     \
    }                                                                                    \
    int tb_##v##_parser_push_samples(tb_##v##_parser *p, const tb_##v##_sample *s,       \
                                     size_t n, uint64_t first, tb_packet_cb cb, void *ctx) \
    {                                                                                    \
        return tb_port_parser_push_samples(p, s, n, first, cb, ctx);                     \
    }                                                                                    \
    int tb_##v##_parser_finish(tb_##v##_parser *p, tb_packet_cb cb, void *ctx)           \
    {                                                                                    \
        return tb_port_parser_op_finish(p, cb, ctx);                                     \
    }                                                                                    \
    static void *v##_parser_make(const tb_config *cfg)                                   \
    {                                                                                    \
        tb_##v##_config c;                                                               \
                                                                                         \
        return tb_##v##_config_from_tb(&c, cfg) < 0 ? NULL : tb_##v##_parser_new(&c);    \
    }                                                                                    \
    const tb_parser_ops tb_##v##_parser_ops = {                                          \
        .protocol = TB_PROTO_##PROTO, .make = v##_parser_make,                           \
        .destroy = tb_port_parser_op_destroy, .push = tb_port_parser_op_push,            \
        .finish = tb_port_parser_op_finish, .reset = tb_port_parser_op_reset,            \
    }

/* Output: a packet (0, or TB_ERR_STOPPED); a cleared one of the
 * protocol; the ATOM run ('W' and 'T' are counted cycles); a packet of
 * only a kind and an error, after the ATOM run; that, then forget. */
int tb_port_out(tb_port_parser *c, const tb_packet *pkt);
void tb_port_pkt_init(const tb_port_parser *c, tb_packet *k, tb_pkt_kind kind, uint64_t index);
int tb_port_flush_atom(tb_port_parser *c);
int tb_port_add_atom(tb_port_parser *c, char a, uint64_t index);
int tb_port_emit_simple(tb_port_parser *c, tb_pkt_kind kind, uint64_t index, int err);
int tb_port_fail(tb_port_parser *c, tb_pkt_kind kind, uint64_t index, int err);

/* The ring: an entry at its end (0, or the error when it is full); puts
 * out the held entries up to the first that waits. */
int tb_port_enqueue(tb_port_parser *c, uint8_t kind, uint64_t index, uint32_t ref);
int tb_port_drain(tb_port_parser *c);

#endif /* TB_PORT_INTERNAL_H */
