/* Shared state of the trace macrocell models (encoder.c) and the hooks
 * each protocol (etmv3_encoder.c, ptm_encoder.c) provides. */
#ifndef TB_ENCODER_INTERNAL_H
#define TB_ENCODER_INTERNAL_H

#include "tracebench/encoder.h"
#include "tracebench/writer.h"

/* ETMv3 atoms held for the next P-headers: E/N with the W count (cycles)
 * before each (cycle-accurate mode, IHI0014Q 7.3.1). */
#define ENC_ETM_QMAX 64
#define ENC_RS_DEPTH 16 /* OpenCSD's model depth (protocol-notes 3.10) */

struct enc_etm_atom {
    char atom;
    uint32_t cycles;
    uint64_t seq;        /* the instruction's truth seq */
};

/* ETMv3 data trace (etmv3_encoder.c, docs/etmv3-data-model.md): a load
 * completing out of order, waiting for its out-of-order data packet. */
#define ENC_OOO_TAGS 3 /* tags 1..3 (IHI0014Q 7.2 Table 7.1) */

struct enc_ooo {
    uint32_t value;
    uint32_t left;       /* traced instructions until it completes */
    uint8_t size;        /* transfer bytes */
    uint8_t tag;
};

typedef struct enc_etm {
    struct enc_etm_atom q[ENC_ETM_QMAX];
    unsigned n;
    uint64_t cyc_acct; /* cycles already given out as W atoms or CC */
    /* Data trace. */
    bool dsync;          /* the next data address goes in full (D-sync) */
    bool sup;            /* data suppression in progress (0x62 sent) */
    bool sup_insn;       /* ... and the rest of this instruction's data goes */
    unsigned n_ooo;      /* outstanding out-of-order loads, oldest first */
    struct enc_ooo ooo[ENC_OOO_TAGS];
    bool lsip;           /* the instruction being handled is the LSiP
                          * I-sync's: its execution is implied, no atom */
} enc_etm;

/* Transfers of the instruction held in tb_encoder.pending (TB_REC_DATA
 * records after it), at most this many (VLDM of 32 doubles). */
#define ENC_MAX_XFER 64

struct enc_xfer {
    uint32_t addr, value;
    uint8_t size, flags; /* tb_data_flags */
};

typedef struct enc_ptm {
    char atoms[5];       /* held non-CA atoms, oldest first */
    uint64_t atom_seq;   /* truth seq of the newest held atom's waypoint */
    unsigned n;
    bool need_wp;        /* non-waypoints ran since the last waypoint */
    uint32_t last_addr;  /* the last of them */
    uint64_t last_seq;   /* ... and its truth seq */
    tb_isa last_isa;
    /* Return stack (protocol-notes 3.10), circular like OpenCSD's. */
    uint32_t rs_addr[ENC_RS_DEPTH];
    uint8_t rs_isa[ENC_RS_DEPTH];
    unsigned rs_head, rs_count;
    /* Last address output, and the one before a WP update: whether a WP
     * update moves the compression base is unverified (protocol-notes
     * 3.7), so the next address must decode the same either way. */
    uint32_t base;
    tb_isa base_isa;
    bool wp_ambig;
    uint32_t pre_wp_base;
    tb_isa pre_wp_isa;
} enc_ptm;

typedef struct enc_ops {
    void (*reset)(tb_encoder *e);        /* forget held atoms and stack */
    int (*flush)(tb_encoder *e);         /* output held atoms */
    int (*insn)(tb_encoder *e, const tb_exec_record *r, bool cancelled);
    int (*exception)(tb_encoder *e, const tb_exec_record *r);
    int (*trace_off)(tb_encoder *e);     /* last traced insn done */
    void (*isync_done)(tb_encoder *e, uint32_t addr, tb_isa isa);
    bool (*sync_point)(const tb_encoder *e); /* periodic I-sync allowed */
    uint32_t (*isync_cc)(tb_encoder *e); /* CC of a non-periodic I-sync */
    /* Optional (ETMv3): the non-periodic I-sync at the first traced
     * instruction r takes the LSiP form, r its load/store in progress
     * (IHI0014Q 7.10.5); the model then sends no atom for r. */
    bool (*lsip_due)(tb_encoder *e, const tb_exec_record *r);
    /* Optional (PTM): insn(e, r, false) for recs[0], recs[1], ... of a
     * tb_encoder_push_many batch, every one an instruction followed by
     * another (so none cancelled), in the state process_insn's short way
     * takes (tb_enc_plain_state).  It counts each in st.insns and
     * st.traced, keeps e->now and e->prev_cycle as process_insn does
     * (tb_enc_run_at before any output of recs[k]), and stops after the
     * first instruction that leaves that state.  Returns how many it took
     * (at least one when n is not 0), *rc negative on error. */
    size_t (*insn_run)(tb_encoder *e, const tb_exec_record *recs, size_t n, int *rc);
} enc_ops;

struct tb_encoder {
    tb_encoder_opts o;
    tb_config cfg;
    tb_writer *w;
    const enc_ops *ops;
    tb_trace_sink sink;
    void *sink_ctx;
    tb_packet_cb pcb;
    void *pcb_ctx;
    int err;
    bool finished;
    tb_encoder_stats st;
    /* ETMv1, ETMv2 (port_adapter.c): the port model does everything;
     * the rest of this struct is unused. */
    struct port_model *port;

    uint64_t now;        /* cycle stamp of the record being handled */
    uint64_t prev_cycle; /* cycle stamp of the record before it */
    uint64_t cc_base;    /* PTM: cycle of the last cycle count output */

    uint64_t since_async;
    uint32_t since_ignore; /* packets since the last Ignore (ignore=N) */
    bool sync_due;
    bool on;             /* trace enabled and synchronised */
    uint8_t next_reason; /* reason of the next non-periodic I-sync */
    bool have_flow_isa;  /* flow_isa is known */
    uint8_t flow_isa;    /* ISA execution goes on in: the last insn's
                          * next ISA, or the last exception's vector ISA */
    bool dropping;       /* FIFO overflowed, waiting for it to drain */
    bool plain_cfg;      /* no filter ranges, trigger or timestamp period:
                          * process_insn's short way may be taken */
    uint8_t fifo_with;   /* bytes the next packet needs room for besides
                          * its own: a packet that must follow it with
                          * nothing between (ETMv3 Store failed, 7.4.7) */
    /* What the trace shows so far: the truth seq of the newest
     * instruction whose packet went out (have_shown), and the seq the
     * packet being emitted completes (pkt_has_seq), so that an overflow
     * can say where the lost trace starts. */
    bool have_shown, pkt_has_seq;
    uint64_t shown_seq, pkt_seq;
    tb_overflow_cb ocb;
    void *ocb_ctx;
    uint64_t fifo_level, fifo_cycle, fifo_credit;

    uint32_t ctxid;
    uint8_t vmid;
    /* Security state (TB_REC_STATE records): of the instructions now
     * (ns), as the trace last told it (ns_traced: I-sync, exception
     * bytes), and the one a state record announces while the instruction
     * that changed it is processed (ns_next, state_due). */
    bool ns, ns_traced, ns_next, state_due;
    bool ns_prev, ns_at_exc; /* the state before a change a state record
                              * announced right before an exception record */
    bool v7m_chain;      /* v7-M: the pending exception return tail-chains:
                          * its exception return packet, and no branch to the
                          * frame's return address (etmv3_v7m.c) */
    bool v7m_preempt;    /* v7-M: that return was pre-empted as it unstacked:
                          * the next exception's packet has Cancel, which
                          * withdraws the return (DDI0337E 15.5.2) */
    uint64_t insn_since_ts;
    bool trigger_done;

    bool have_pending;
    const tb_exec_record *pend; /* the pending record: &pending, or, during
                                 * tb_encoder_push_many, the caller's */
    tb_exec_record pending;
    /* tb_encoder_push_many: its ready callback, the count to give it
     * before the next output, and the count it has had. */
    tb_encoder_ready_cb ready;
    void *ready_ctx;
    size_t ready_at, ready_done;
    const tb_exec_record *batch; /* its first record */
    unsigned n_xfer;     /* its data transfers (data trace on only) */

    union {
        enc_etm etm;
        enc_ptm ptm;
    } p;

    struct enc_xfer xfer[ENC_MAX_XFER]; /* last: kept off the hot fields */
};

/* ETMv1 and ETMv2 (port_adapter.c): tb_encoder_config_err and
 * tb_encoder_new for protocols TB_PROTO_ETMV1 and TB_PROTO_ETMV2. */
/* A caller's options as this build's struct (common/struct_size.h), and
 * back into the caller's for the functions that change them; the
 * defaults (tb_encoder_opts_init's) into a whole struct of this build. */
int tb_enc_opts_take(tb_encoder_opts *own, const tb_encoder_opts *o, char *err,
                     size_t errlen);
int tb_enc_opts_give(tb_encoder_opts *o, const tb_encoder_opts *own,
                     const tb_encoder_opts *orig, char *err, size_t errlen);
void tb_enc_defaults(tb_encoder_opts *o, tb_protocol protocol);
int tb_enc_port_config_err(const tb_encoder_opts *o, tb_config *cfg, char *err,
                           size_t errlen);
int tb_enc_port_new(tb_encoder *e);
int tb_enc_port_push(tb_encoder *e, const tb_exec_record *r);
int tb_enc_port_finish(tb_encoder *e);
const tb_encoder_stats *tb_enc_port_stats(const tb_encoder *e);
void tb_enc_port_set_cbs(tb_encoder *e); /* pcb, ocb to the port model */
void tb_enc_port_free(tb_encoder *e);

/* ETMv3 on a Cortex-M3/M4 (etmv3_v7m.c; tb_encoder_opts.v7m). */
int tb_enc_v7m_config_err(const tb_encoder_opts *o, char *err, size_t errlen);
uint32_t tb_enc_v7m_etmidr(const tb_encoder_opts *o);
uint16_t tb_enc_v7m_exc_num(const tb_exec_record *r);

extern const enc_ops tb_enc_etmv3_ops;
extern const enc_ops tb_enc_etmv3_do_ops; /* data-only mode (ETMCR[20]) */
extern const enc_ops tb_enc_ptm_ops;

/* process_insn's short way may be taken: trace on, nothing to drain, no
 * I-sync, trigger or timestamp due, no filter to ask. */
static inline bool tb_enc_plain_state(const tb_encoder *e)
{
    return e->plain_cfg && e->on && !e->dropping && !e->sync_due && !e->err &&
           e->ns == e->ns_traced;
}
/* insn_run: recs[k] of the batch is handled now (its cycle), and what it
 * sends out comes while recs[k + 1] is pushed (tb_encoder_ready_cb). */
static inline void tb_enc_run_at(tb_encoder *e, const tb_exec_record *r)
{
    e->now = r->cycle;
    e->ready_at = (size_t)(r - e->batch) + 2;
}

/* Packet with the protocol set and every field zero. */
void tb_enc_pkt(const tb_encoder *e, tb_packet *p, tb_pkt_kind kind);
/* A branch packet to addr in isa (the fields both protocols fill). */
void tb_enc_branch_pkt(const tb_encoder *e, tb_packet *p, uint32_t addr, tb_isa isa);
/* The exception branch packet both protocols send on entry: the vector,
 * its ISA and the trace exception number (protocol-notes 2.7, 3.7). */
void tb_enc_exception_pkt(const tb_encoder *e, tb_packet *p,
                          const tb_exec_record *r);
/* The packet about to be emitted completes the instruction with this
 * truth seq (and every one before it): the decoder can show them once it
 * goes out. */
static inline void tb_enc_completes(tb_encoder *e, uint64_t seq)
{
    e->pkt_seq = seq;
    e->pkt_has_seq = true;
}
/* Exception bytes that tell a security state change on the branch
 * packet p of the instruction that made it (exception number 0,
 * IHI0014Q 7.3.5, IHI0035B 4.5.4; protocol-notes 2.7, 3.7). */
void tb_enc_state_bytes(tb_encoder *e, tb_packet *p);
/* Writes a packet through the FIFO to the sink; 0 when it went out or was
 * lost to an overflow, negative on error (then sticky in e->err). */
int tb_enc_emit(tb_encoder *e, tb_packet *p);
/* tb_enc_emit for an ETMv3 P-header p whose byte the caller made, the
 * one the writer makes of p (tb_etmv3_writer_write, IHI0014Q 7.3.1),
 * which keeps no state for it: the writer is not asked. */
int tb_enc_emit_hdr(tb_encoder *e, tb_packet *p, uint8_t byte);
/* SuppressData (IHI0014Q 7.4.6): data suppression is enabled
 * (suppress=) and the free FIFO space is below the ETMFFLR level now. */
bool tb_enc_suppress_data(tb_encoder *e);
/* Cycles since the last cycle count output, up to `cycle` (PTM CC). */
uint32_t tb_enc_take_cc(tb_encoder *e, uint64_t cycle);

/* Writes the reason into err (when there is one) and returns rc
 * (options.c; snap_out.c uses it too). */
int tb_enc_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
