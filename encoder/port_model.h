/* The trace-port model core shared by the ETMv1 and ETMv2 encoders
 * (port_model.c): the sample buffer and capture bytes, the FIFO, one
 * TRACECLK cycle, overflow, the record loop; each protocol's status and
 * packet rules sit behind port_ops (etmv1_encoder.c, etmv2_encoder.c),
 * as enc_ops does for ETMv3 and PTM (encoder_internal.h). */
#ifndef TB_PORT_MODEL_H
#define TB_PORT_MODEL_H

#include <stdlib.h>
#include <string.h>

#include "encoder_internal.h"
#include "../common/port_size.h"
#include "tracebench/etm_port.h"
#include "tracebench/etmv1.h"
#include "port_encoders.h"

#define PORT_FIFO_CAP 4096u
#define PORT_SBUF 256u
#define PORT_XMAX 64u /* the larger port's transfers of one instruction */

typedef struct port_xfer {
    uint32_t addr, value;
    uint8_t size;
    bool store; /* TB_DATA_STORE */
} port_xfer;

typedef struct port_model port_model;

typedef struct port_ops {
    tb_protocol proto;   /* of the packets the model reports */
    /* PIPESTAT codes of the shared cycle: wait, trace disabled, trigger;
     * a TR cycle's TRACEPKT is the real status masked by tr_mask. */
    uint8_t wt, td, tr, tr_mask;
    /* An idle CA cycle is TD with TRACEPKT[0] = TraceEnable, kept only
     * while trace is enabled (ETMv1, IHI0014Q 5.10); else every CA TD is
     * kept with TRACEPKT 0 (ETMv2, 6.1.6). */
    bool td_enable;
    unsigned xmax;       /* transfers of one instruction (TB_ERR_LIMIT) */
    /* Held instructions go out: next_insn, an instruction record came
     * (a port may hold one more); else all of them (context, end). */
    int (*flush)(port_model *m, bool next_insn);
    /* An exception record, span its port cycles. */
    int (*exception)(port_model *m, const tb_exec_record *r, uint64_t span);
    /* The end, after the last flush (NULL: nothing more to send). */
    int (*end)(port_model *m);
} port_ops;

/* Cycle flags. */
enum {
    PORT_TRIG = 1, /* may carry the pending trigger */
    PORT_APO = 2,  /* an ETMv1 APO cycle: never TD */
};

struct port_model {
    const port_ops *ops;
    /* Options and configuration the core uses. */
    tb_encoder_opts base;
    uint8_t port_width, ctxid_bytes, data_trace;
    bool cycle_accurate, keep_idle;
    uint32_t vector_base;
    uint8_t hdr[TB_ETM_PORT_HDR_BYTES]; /* the capture header */

    tb_etmv1_sample_cb scb;
    void *sctx;
    tb_trace_sink bsink;
    void *bctx;
    bool hdr_done;
    tb_packet_cb pcb;
    void *pctx;
    tb_overflow_cb ocb;
    void *octx;
    int err;
    bool finished;
    tb_encoder_stats st;

    /* FIFO: bytes and "starts a branch address" flags (ETMv1's
     * TRACESYNC; ETMv2 sets none). */
    uint8_t fifo[PORT_FIFO_CAP];
    uint8_t fsync[PORT_FIFO_CAP];
    unsigned head, count, depth;
    bool half;           /* 4-bit port: head's low nibble is out */
    bool hold;           /* hold_pkt takes the next cycle's TRACEPKT, no */
    uint16_t hold_pkt;   /* FIFO data (ETMv2: a TFO's second half, U4) */

    tb_etmv1_sample buf[PORT_SBUF];
    unsigned nbuf;
    uint64_t nsamples;

    bool on;             /* trace enabled (ViewInst) and started */
    bool dropping;       /* FIFO overflowed, waiting for it to drain */
    bool debug_exit;     /* halted in Debug state since trace was last on:
                          * it comes back with reason 3 (docs/debug-halt.md) */
    bool last_traced;    /* the last instruction or exception was traced */
    uint64_t since_sync; /* port cycles since the last full address/TFO */
    bool ctx_due;        /* a new context ID goes out with the next ... */
    uint32_t ctxid;
    bool trig_pending, trig_done;
    /* trigdelay=N (docs/etmv1.md 4): the trigger event comes N cycles
     * after the status cycle of instruction trigger_at, whatever that
     * cycle shows (an APO cycle too, IHI0014Q 5.6.1). */
    bool trig_counting;
    uint32_t trig_wait;

    bool have_prev_cycle;
    uint64_t prev_cycle;
    bool have_pending;
    tb_exec_record pending;
    uint64_t pending_span;
    /* The newest instruction the trace shows as executed (tb_overflow_cb). */
    bool have_shown;
    uint64_t shown_seq;

    /* Data trace: the pending instruction's transfers (TB_REC_DATA). */
    port_xfer xfer[PORT_XMAX];
    unsigned n_xfer;
    uint32_t last_daddr; /* last data address output */
    bool have_daddr;     /* else the next one goes in full */
};

/* Sets up m (zeroed) from the options and the port's configuration. */
void tb_port_init(port_model *m, const port_ops *ops, const tb_encoder_opts *base,
                  bool keep_idle, uint8_t port_width, bool cycle_accurate,
                  uint8_t ctxid_bytes, uint8_t data_trace, uint32_t vector_base);
/* Samples out through cb, or capture bytes through sink (then sink must
 * be set): m, or NULL (m freed) when it cannot be. */
port_model *tb_port_out(port_model *m, tb_etmv1_sample_cb cb, void *cctx,
                        tb_trace_sink sink, void *sctx);
/* One sample out (buffered). */
int tb_port_put(port_model *m, uint8_t ps, uint8_t sync, uint16_t pkt);
/* One port cycle with PIPESTAT ps (PORT_* flags): the FIFO sends a
 * nibble, byte or two bytes (a second one unless it starts an address);
 * an idle WT is TD, dropped by the capture unless kept. */
int tb_port_cycle(port_model *m, uint8_t ps, unsigned flags);
/* n WT cycles that may carry the trigger. */
int tb_port_waits(port_model *m, uint64_t n);
/* Puts n bytes in the FIFO, none starting an address. */
void tb_port_fifo_put(port_model *m, const uint8_t *b, unsigned n);
/* *p: a packet of kind k, bytes b[0..n), its index the next sample's
 * (the cycle that put it in the FIFO), every other field zero. */
void tb_port_pkt(const port_model *m, tb_packet *p, tb_pkt_kind k, const uint8_t *b,
                 unsigned n);
/* The FIFO overflowed: bytes lost; the first loss tells ocb. */
void tb_port_lost(port_model *m, unsigned bytes);
/* The reason of the marker (ETMv1 5-packet address, ETMv2 TFO) that
 * brings trace on now: 2 overflow restart, 3 exit from debug state, 1
 * trace enabled (ETMv1 and ETMv2 share the codes: IHI0014Q 6.5.4 Table
 * 6.7, etmv1-v2 5.2); the debug exit is spent. */
uint8_t tb_port_on_reason(port_model *m);
/* Whether v is an exception vector the decoder can name (docs/etmv1.md 4). */
bool tb_port_is_vector(const port_model *m, uint32_t v);
/* The trigger fires at instruction r (trigger_at). */
void tb_port_trigger_check(port_model *m, const tb_exec_record *r);
int tb_port_push(port_model *m, const tb_exec_record *r);
int tb_port_finish(port_model *m);

/* Behind tb_encoder (port_adapter.c): port N's model for the generic
 * options, capture bytes to sink; and their tb_config: 0, or why not. */
enum { PORT_CFG_FIFO = 1, PORT_CFG_BAD = 2 };
port_model *tb_etmv1_port_new(const tb_encoder_opts *o, tb_trace_sink sink, void *ctx);
port_model *tb_etmv2_port_new(const tb_encoder_opts *o, tb_trace_sink sink, void *ctx);
int tb_etmv1_port_config(const tb_encoder_opts *o, tb_config *cfg);
int tb_etmv2_port_config(const tb_encoder_opts *o, tb_config *cfg);

/* The public entry points of port N (etmv1, etmv2), the same for both but
 * for their types (tracebench/etmvN.h), so written once.  The protocol's
 * file defines struct tb_N_encoder (a port_model m first, the port's
 * tb_N_config cfg), N_ops and N_config_more (its own configuration bits).
 * A caller's options and configuration are taken as this build's
 * (common/port_size.h) at creation; N_config works on this build's. */
#define TB_PORT_MODEL_API(N, PROTO, MINOR)                                          \
    static void N##_opts_defaults(tb_##N##_encoder_opts *o)                         \
    {                                                                               \
        memset(o, 0, sizeof *o);                                                    \
        o->size = sizeof *o;                                                        \
        o->base.size = sizeof o->base;                                              \
        o->base.protocol = PROTO;                                                   \
        o->base.arch_minor = MINOR;                                                 \
        o->base.sync_period = 1024;                                                 \
        o->port_width = 8;                                                          \
    }                                                                               \
    int tb_##N##_encoder_opts_defaults(tb_##N##_encoder_opts *o)                    \
    {                                                                               \
        tb_##N##_encoder_opts own;                                                  \
                                                                                    \
        if (!tb_##N##_encoder_opts_take(&own, o))                                   \
            return TB_ERR_INVAL;                                                    \
        N##_opts_defaults(&own);                                                    \
        /* Defaults past an older caller's struct: dropped (read as 0). */          \
        return tb_##N##_encoder_opts_give(o, &own, NULL);                           \
    }                                                                               \
    int tb_##N##_encoder_opts_from(tb_##N##_encoder_opts *v, const tb_encoder_opts *o) \
    {                                                                               \
        tb_##N##_encoder_opts own, t;                                               \
                                                                                    \
        if (!tb_##N##_encoder_opts_take(&own, v))                                   \
            return TB_ERR_INVAL;                                                    \
        N##_opts_defaults(&t);                                                      \
        if (!o || tb_enc_opts_take(&t.base, o, NULL, 0) < 0)                        \
            return TB_ERR_INVAL;                                                    \
        t.base.protocol = PROTO;                                                    \
        t.port_width = t.base.port_width;                                           \
        t.vector_base = t.base.vector_base;                                         \
        t.keep_idle = t.base.keep_idle;                                             \
        return tb_##N##_encoder_opts_give(v, &t, &own);                             \
    }                                                                               \
    static int N##_config(const tb_##N##_encoder_opts *o, tb_##N##_config *c)       \
    {                                                                               \
        tb_##N##_config_init(c);                                                    \
        c->minor = o->base.arch_minor;                                              \
        c->port_width = o->port_width;                                              \
        c->cycle_accurate = o->base.cycle_accurate;                                 \
        c->branch_output = o->base.branch_broadcast;                                \
        c->ctxid_bytes = o->base.ctxid_bytes;                                       \
        c->vector_base = o->vector_base;                                            \
        c->data_trace = o->base.data_trace;                                         \
        N##_config_more(o, c);                                                      \
        if (o->base.fifo_depth > PORT_FIFO_CAP)                                     \
            return TB_ERR_CONFIG;                                                   \
        return tb_##N##_config_check(c);                                            \
    }                                                                               \
    int tb_##N##_encoder_config(const tb_##N##_encoder_opts *o, tb_##N##_config *c) \
    {                                                                               \
        tb_##N##_encoder_opts own;                                                  \
        tb_##N##_config ownc, t;                                                    \
        int rc;                                                                     \
                                                                                    \
        if (!(o = tb_##N##_encoder_opts_take(&own, o)) || !tb_etm_port_config_take(&ownc, c)) \
            return TB_ERR_INVAL;                                                    \
        rc = N##_config(o, &t);                                                     \
        return tb_etm_port_config_give(c, &t, &ownc) < 0 ? TB_ERR_INVAL : rc;          \
    }                                                                               \
    static port_model *N##_make(const tb_##N##_encoder_opts *o)                     \
    {                                                                               \
        struct tb_##N##_encoder *e;                                                 \
        tb_##N##_encoder_opts own;                                                  \
        tb_##N##_config c;                                                          \
                                                                                    \
        if (!(o = tb_##N##_encoder_opts_take(&own, o)) || N##_config(o, &c) < 0)    \
            return NULL;                                                            \
        if (!(e = calloc(1, sizeof *e)))                                            \
            return NULL;                                                            \
        e->cfg = c;                                                                 \
        tb_##N##_capture_header(&c, e->m.hdr);                                      \
        tb_port_init(&e->m, &N##_ops, &o->base, o->keep_idle, c.port_width,         \
                     c.cycle_accurate, c.ctxid_bytes, c.data_trace, c.vector_base); \
        return &e->m;                                                               \
    }                                                                               \
    tb_##N##_encoder *tb_##N##_encoder_new(const tb_##N##_encoder_opts *o,          \
                                           tb_etmv1_sample_cb cb, void *ctx)        \
    {                                                                               \
        return (tb_##N##_encoder *)tb_port_out(N##_make(o), cb, ctx, NULL, NULL);   \
    }                                                                               \
    tb_##N##_encoder *tb_##N##_encoder_new_bytes(const tb_##N##_encoder_opts *o,    \
                                                 tb_trace_sink sink, void *ctx)     \
    {                                                                               \
        return sink ? (tb_##N##_encoder *)tb_port_out(N##_make(o), NULL, NULL, sink, ctx) \
                    : NULL;                                                         \
    }                                                                               \
    void tb_##N##_encoder_free(tb_##N##_encoder *e)                                 \
    {                                                                               \
        free(e);                                                                    \
    }                                                                               \
    void tb_##N##_encoder_set_packet_cb(tb_##N##_encoder *e, tb_packet_cb cb, void *ctx) \
    {                                                                               \
        if (e) {                                                                    \
            e->m.pcb = cb;                                                          \
            e->m.pctx = ctx;                                                        \
        }                                                                           \
    }                                                                               \
    void tb_##N##_encoder_set_overflow_cb(tb_##N##_encoder *e, tb_overflow_cb cb,   \
                                          void *ctx)                                \
    {                                                                               \
        if (e) {                                                                    \
            e->m.ocb = cb;                                                          \
            e->m.octx = ctx;                                                        \
        }                                                                           \
    }                                                                               \
    int tb_##N##_encoder_push(tb_##N##_encoder *e, const tb_exec_record *r)         \
    {                                                                               \
        return tb_port_push(e ? &e->m : NULL, r);                                   \
    }                                                                               \
    int tb_##N##_encoder_finish(tb_##N##_encoder *e)                                \
    {                                                                               \
        return tb_port_finish(e ? &e->m : NULL);                                    \
    }                                                                               \
    const tb_encoder_stats *tb_##N##_encoder_get_stats(const tb_##N##_encoder *e)   \
    {                                                                               \
        return e ? &e->m.st : NULL;                                                 \
    }                                                                               \
    uint64_t tb_##N##_encoder_cycles(const tb_##N##_encoder *e)                     \
    {                                                                               \
        return e ? e->m.nsamples : 0;                                               \
    }                                                                               \
    port_model *tb_##N##_port_new(const tb_encoder_opts *o, tb_trace_sink sink,     \
                                  void *ctx)                                        \
    {                                                                               \
        tb_##N##_encoder_opts v;                                                    \
                                                                                    \
        tb_##N##_encoder_opts_init(&v);                                             \
        if (tb_##N##_encoder_opts_from(&v, o) < 0)                                  \
            return NULL;                                                            \
        return tb_port_out(N##_make(&v), NULL, NULL, sink, ctx);                    \
    }                                                                               \
    int tb_##N##_port_config(const tb_encoder_opts *o, tb_config *cfg)              \
    {                                                                               \
        tb_##N##_encoder_opts v;                                                    \
        tb_##N##_config c;                                                          \
                                                                                    \
        tb_##N##_encoder_opts_init(&v);                                             \
        if (tb_##N##_encoder_opts_from(&v, o) < 0 || N##_config(&v, &c) < 0)        \
            return PORT_CFG_FIFO;                                                   \
        if (tb_config_from_##N(cfg, tb_##N##_etmcr(&c), c.minor, c.vector_base) < 0) \
            return PORT_CFG_BAD;                                                    \
        return 0;                                                                   \
    }

#endif
