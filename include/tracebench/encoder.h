/*
 * Encoder: models of the ETMv3 and PTM (PFT 1.0/1.1) on-chip trace logic.
 * They consume the simulator's exec records (sim.h) one at a time and
 * emit packets through the packet writer (writer.h); the bytes go to a
 * sink as they are produced.  Memory does not grow with the run.
 *
 * Shared by both: options and the registers they give,
 * the sync counter (ETMSYNCFR), timestamps, the ViewInst filter, the FIFO
 * model, context ID / VMID, the one-record delay that lets a cancelled
 * exception retract the instruction before it.  Per protocol: atoms,
 * branches, exceptions, the return stack.
 */
#ifndef TRACEBENCH_ENCODER_H
#define TRACEBENCH_ENCODER_H

#include <string.h>

#include "tracebench/snapshot.h"
#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TB_ENC_MAX_RANGES 8

/* A ViewInst address range [lo, hi). */
typedef struct tb_encoder_range {
    uint32_t lo, hi;
    bool exclude;
} tb_encoder_range;

typedef struct tb_encoder_opts {
    /* sizeof (tb_encoder_opts) as the caller was built: tb_encoder_opts_init
     * sets it.  Every function that takes the options reads only that many
     * bytes and the fields after them as 0 (off), and those that change
     * them (_parse, _v7m) write only that many; so a caller built against
     * an older, smaller struct still works.  Below
     * TB_ENCODER_OPTS_SIZE_MIN (0: never initialised) or absurd is refused
     * (TB_ERR_INVAL with the reason; NULL from tb_encoder_new, whose
     * reason tb_encoder_config_err gives).  Fields are only ever added at
     * the end.  Embedded (tb_rt_case.opts, and inside the library the
     * port encoders' options) its own size still counts for it. */
    size_t size;
    tb_protocol protocol;
    uint8_t arch_minor;       /* ETMv3.x (0..5) or PFT1.x (0..1) */
    uint8_t trace_id;         /* CoreSight trace ID (ETMTRACEIDR) */
    bool cycle_accurate;      /* ETMCR[12] */
    bool timestamps;          /* ETMCR[28] */
    bool branch_broadcast;    /* ETMCR[8] */
    bool return_stack;        /* ETMCR[29], PTM only */
    bool alt_branch;          /* ETMIDR[20], ETMv3.4+ only */
    bool vmid;                /* ETMCR[30] */
    uint8_t ctxid_bytes;      /* 0, 1, 2 or 4 (ETMCR[15:14]) */
    uint32_t sync_period;     /* bytes between A-syncs (ETMSYNCFR); 0: start only */
    uint32_t ts_period;       /* instructions between timestamps besides the
                               * one after each I-sync; 0: after I-syncs only */
    uint64_t trigger_at;      /* trigger packet before instruction seq N; 0 none */
    uint32_t trigger_delay;   /* trigdelay=N (ETMv1/ETMv2 ports): the trigger
                               * N cycles after instruction trigger_at's
                               * status cycle (docs/etmv1.md 4); 0 on it */
    uint32_t fifo_depth;      /* bytes; 0: no FIFO limit */
    uint32_t fifo_bytes;      /* the port drains fifo_bytes ... */
    uint32_t fifo_cycles;     /* ... every fifo_cycles cycles */
    unsigned n_ranges;        /* ViewInst; no include range = all included */
    tb_encoder_range ranges[TB_ENC_MAX_RANGES];
    /* ETMv1 trace port (docs/etmv1.md; sync_period counts port cycles,
     * fifo_depth 0 = the model's 4096 bytes). */
    uint8_t port_width;       /* port=4|8|16: TRACEPKT pins (ETMCR[6:4]) */
    uint32_t vector_base;     /* vectors=ADDR: exception vectors (0) */
    bool keep_idle;           /* idle: keep the TD cycles a TPA drops */
    /* ETMv3 data trace (IHI0014Q 7.4; docs/etmv3-data-model.md).  PTM
     * has none: any of these with PTM is a configuration error. */
    uint8_t data_trace;       /* ETMCR[3:2] as tb_config.data_trace: bit0
                               * values (data=value), bit1 addresses
                               * (data=addr); 3 = data=both; 0 = off */
    unsigned n_dranges;       /* ViewData data-address ranges [lo, hi);
                               * none = every transfer of a traced insn */
    tb_encoder_range dranges[TB_ENC_MAX_RANGES];
    uint32_t ooo_latency;     /* ooo=N: a single load (not to the PC)
                               * completes N traced instructions later:
                               * placeholder + out-of-order data; 0 off */
    uint32_t suppress_level;  /* suppress=N: ETMCR[18] data suppression,
                               * ETMFFLR = N bytes of free FIFO; 0 off */
    /* ETMv3 only (model choices: docs/etmv3-data-model.md). */
    uint32_t ignore_every;    /* ignore=N: an Ignore packet (0x66) after
                               * every N packets sent; 0 off */
    bool cc_pkt;              /* ccpkt (with ca): a cycle count packet
                               * (0x04) after every periodic I-sync */
    bool dual_issue;          /* dual: the simulator's dual-issue rule
                               * (tb_sim_set_dual): two instructions may
                               * retire in one cycle, which cycle-accurate
                               * ETMv3 shows with P-header format 4 or 2
                               * (ETMv3.3+); the caller applies it */
    uint8_t v7m;              /* the traced core is a Cortex-M3 (3) or M4
                               * (4): ETMv3 as the ETM-M3/M4 has it
                               * (tb_encoder_opts_v7m); 0: an A/R core */
    bool ns_exc0;             /* exc0 (PTM): a security state change on a
                               * branch goes as exception bytes with number
                               * 0 and the new NS on the branch's address
                               * packet (IHI0035B 4.5.4: no exception, the
                               * branch's E atom implied), not as an I-sync
                               * before the next instruction (the default;
                               * ETMv3 always uses number-0 bytes) */
    bool pc_first;            /* pcfirst: a core that transfers the PC
                               * first in an LDM that loads it (ETMIDR[16],
                               * ETMv3; tb_sim_set_pcfirst gives the
                               * simulator's records that order; the
                               * caller applies it) */
    bool apo_abandon;         /* abandon (ETMv1): an exception taken right
                               * after a traced taken branch (before its
                               * target runs) is taken during the branch's
                               * pipeline refill: its BE comes in the
                               * branch's first APO cycle, abandoning the
                               * branch (IHI0014Q 5.6.1; docs/etmv1.md 4) */
    /* The timestamp counter (ETMv3, PTM): the system's, which the trace
     * unit samples (IHI0014Q 7.7, IHI0035B 4.5).  A timestamp names the
     * cycle c of the record being traced as ts_start + ts_rate * c,
     * modulo 2^48 where timestamps are 48-bit; the counter has been
     * running since before the trace started, so its high bits are set
     * (tsstart=N, tsrate=N; defaults 0 and 1: the cycle count). */
    uint64_t ts_start;
    uint32_t ts_rate;
    bool ts48;                /* ts48: ETMv3 48-bit timestamps (ETMCCER[29]
                               * clear); PTM's are 48-bit in PFT1.0 (v=0) */
    bool data_only;           /* dataonly: ETMv3.1+ data-only mode (ETMCR[20],
                               * IHI0014Q 7.4.10): data packets and
                               * address-less I-syncs, no instruction trace
                               * (docs/etmv3-data-model.md "Data-only") */
} tb_encoder_opts;

/* The smallest tb_encoder_opts the library takes: size and protocol. */
#define TB_ENCODER_OPTS_SIZE_MIN (offsetof(tb_encoder_opts, protocol) + sizeof(tb_protocol))

/* The timestamp a trace unit configured by *o gives cycle `cycle` (see
 * ts_start).  This and tb_encoder_in_filter / _in_dataview run per record,
 * so they do not look at o->size: o is this build's struct (as
 * tb_encoder_opts_init makes it). */
TB_API uint64_t tb_encoder_timestamp(const tb_encoder_opts *o, uint64_t cycle);

/* The defaults for protocol into o's first o->size bytes (the rest of
 * the caller's struct is not touched): TB_ERR_INVAL for a size refused.
 * tb_encoder_opts_init is the call to make. */
TB_API int tb_encoder_opts_defaults(tb_encoder_opts *o, tb_protocol protocol);

/* Defaults: ETMv3.5 (ETMv3), PFT1.1 (PTM) or ETMv1.3 with an 8-bit port
 * (ETMv1; sync every 1024 cycles), trace ID 0x10, plain trace,
 * sync every 1024 bytes, no FIFO limit, no filter.  Inline, so that the
 * size is the caller's own struct's, whichever library it runs with. */
static inline void tb_encoder_opts_init(tb_encoder_opts *o, tb_protocol protocol)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    (void)tb_encoder_opts_defaults(o, protocol);
}

/* The traced core is a Cortex-M3 (core 3) or Cortex-M4 (4), or none of
 * them (0): its ETM-M3/M4 implements ETMv3.5 (v=4: the ETMv3.4 of earlier
 * revisions) with the alternative branch encoding, the v7-M exception
 * numbers and the exception return packet, and no cycle-accurate or data
 * trace, context ID or VMID (tb_encoder_config_err names what is
 * refused; docs/cortex-m.md 2).  The caller sets it from the simulated
 * cpu (the scenario's, or --cpu).  TB_ERR_INVAL for another core. */
TB_API int tb_encoder_opts_v7m(tb_encoder_opts *o, unsigned core);

/* Applies a comma-separated option list on top of *o:
 *   ca  ts  bb  rs  alt  vmid  ctxid=0|1|2|4  v=MINOR  id=ID  sync=BYTES
 *   tsper=N  trigger=SEQ  fifo=DEPTH[:BYTES/CYCLES]
 *   include=LO-HI  exclude=LO-HI   (hex or decimal, HI exclusive)
 *   data=addr|value|both  dataview=LO-HI  ooo=N  suppress=BYTES
 *                                  (ETMv3 data trace; dataview= may be
 *                                  given up to 8 times, like include=)
 *   port=4|8|16  vectors=ADDR  idle (ETMv1; for ETMv1 sync= is cycles)
 *   trigdelay=N                    (ETMv1/ETMv2, with trigger=SEQ: the
 *                                  trigger N port cycles after SEQ's
 *                                  status, an APO cycle included)
 *   ignore=N  ccpkt                (Ignore packets, ETMv3 and PTM; ETMv3
 *                                  cycle count packets after periodic
 *                                  I-syncs, ccpkt needs ca)
 *   dual                           (the simulator's dual-issue cycle
 *                                  rule; ETMv3 and PTM; with ca, ETMv3.3+)
 *   pcfirst                        (ETMv3: ETMIDR[16], the core transfers
 *                                  the PC first in an LDM that loads it)
 *   dataonly                       (ETMv3.1+, data=both: ETMCR[20])
 *   abandon                        (ETMv1: an exception right after a
 *                                  taken branch's BE comes in its first
 *                                  APO cycle, abandoning the branch)
 *   tsstart=N  tsrate=N  ts48      (with ts: the timestamp counter's value
 *                                  at cycle 0 and its ticks per cycle;
 *                                  ts48: ETMv3 48-bit timestamps)
 * TB_ERR_INVAL with a reason in err for anything else, an empty item
 * ("ca,,ts", "ca,") among them; "" is no item.  Ranges naming
 * symbols (include=fib, include=main-fib) are turned into numbers first
 * by tb_elf_resolve_ranges (sim.h), which has the ELF; tb_rt_case_options
 * (roundtrip.h) does the same for dataview= (dataview=buf: a data
 * object's extent).  Data trace: docs/etmv3-data-model.md. */
TB_API int tb_encoder_opts_parse(tb_encoder_opts *o, const char *spec, char *err,
                          size_t errlen);

/* The four registers (and decoded flags) the options stand for.
 * TB_ERR_CONFIG for inconsistent options (e.g. alt before ETMv3.4). */
TB_API int tb_encoder_config(const tb_encoder_opts *o, tb_config *cfg);
/* The same, and on TB_ERR_CONFIG a line in err naming the option and
 * why ("alt: the alternative branch encoding is an ETMv3.4+ feature, not
 * PTM ...", "fifo=32: the FIFO depth must be at least 48 bytes ..."). */
TB_API int tb_encoder_config_err(const tb_encoder_opts *o, tb_config *cfg, char *err,
                          size_t errlen);

/* True when the ViewInst ranges trace the instruction at addr. */
TB_API bool tb_encoder_in_filter(const tb_encoder_opts *o, uint32_t addr);
/* True when the ViewData ranges (dataview=) select a transfer at the
 * data address addr (no range: every transfer). */
TB_API bool tb_encoder_in_dataview(const tb_encoder_opts *o, uint32_t addr);

/* Receives trace bytes in stream order; non-zero stops (TB_ERR_STOPPED,
 * or the sink's own negative code). */
typedef int (*tb_trace_sink)(void *ctx, const uint8_t *data, size_t len);

typedef struct tb_encoder_stats {
    uint64_t records;         /* exec records consumed */
    uint64_t insns;           /* instruction records */
    uint64_t traced;          /* instructions traced (filter on, no overflow) */
    uint64_t bytes;           /* bytes sent to the sink */
    uint64_t packets;         /* packets sent to the sink */
    uint64_t dropped_bytes;   /* bytes lost to FIFO overflow */
    uint64_t overflows;
    uint64_t isyncs, asyncs;
} tb_encoder_stats;

typedef struct tb_encoder tb_encoder;

/* NULL on a bad option set (check with tb_encoder_config first) or no
 * memory. */
TB_API tb_encoder *tb_encoder_new(const tb_encoder_opts *o, tb_trace_sink sink,
                           void *ctx);
TB_API void tb_encoder_free(tb_encoder *e);

/* Optional: every packet that reaches the sink, with its bytes, called
 * before those bytes go to the sink (p->index bytes have gone so far); a
 * non-zero return stops the encoder before they do. */
TB_API void tb_encoder_set_packet_cb(tb_encoder *e, tb_packet_cb cb, void *ctx);

/* Optional: told when a FIFO overflow starts losing trace.  shown_seq is
 * the truth seq of the newest instruction whose trace had gone out (its
 * atom, branch or WP update packet): a decoder shows it and everything
 * before it, and nothing after it until the overflow I-sync
 * (have_shown false: nothing had gone out since the last resume).  The
 * trace ports (ETMv1, ETMv2) count an instruction an exception cancelled
 * only until that exception's trace went out, which retracts it. */
typedef void (*tb_overflow_cb)(void *ctx, bool have_shown, uint64_t shown_seq);
TB_API void tb_encoder_set_overflow_cb(tb_encoder *e, tb_overflow_cb cb, void *ctx);

/* Consumes one record.  Errors are sticky: once one is returned every
 * later call returns it. */
TB_API int tb_encoder_push(tb_encoder *e, const tb_exec_record *r);
/* tb_exec_cb adaptor for tb_sim_run (ctx = the encoder): non-zero when
 * tb_encoder_push failed; tb_encoder_error() tells why. */
TB_API int tb_encoder_exec_cb(void *ctx, const tb_exec_record *r);
/* Consumes recs[0..n) as n calls of tb_encoder_push would, with the same
 * trace, packets and callbacks, at less cost a record (no copy of each,
 * one call for all).  A caller that does something per record before it
 * pushes it (the round trip's comparator) passes ready: the encoder calls
 * ready(ctx, k) before anything it sends out (packet and overflow
 * callbacks, sink) while it handles recs[k - 1], so the caller can catch
 * up with recs[0..k) first: every output then finds the same per-record
 * work done as with single pushes.  Non-zero from ready stops the encoder
 * (TB_ERR_STOPPED, sticky).  ready may be NULL.  Errors as
 * tb_encoder_push; recs need stay valid only during the call. */
typedef int (*tb_encoder_ready_cb)(void *ctx, size_t k);
TB_API int tb_encoder_push_many(tb_encoder *e, const tb_exec_record *recs, size_t n,
                                tb_encoder_ready_cb ready, void *ctx);
TB_API int tb_encoder_error(const tb_encoder *e);
/* Ends the trace (as TB_REC_END does; calling it again is harmless). */
TB_API int tb_encoder_finish(tb_encoder *e);
TB_API const tb_encoder_stats *tb_encoder_get_stats(const tb_encoder *e);
TB_API const tb_config *tb_encoder_get_config(const tb_encoder *e);

/* The PT_LOAD segments of an ELF32 little-endian image as snapshot
 * regions: the file bytes and then up to 64 zero bytes of the segment's
 * zero-initialised tail (a decoder reads 4 bytes for a Thumb instruction,
 * so code that ends a segment needs them).  The bytes live in one
 * allocation returned in *storage (free() it).  Returns the count
 * (<= max) or TB_ERR_FORMAT / TB_ERR_NOMEM. */
TB_API int tb_encoder_elf_regions(const uint8_t *elf, size_t len,
                           tb_snap_region *out, size_t max, uint8_t **storage);

/* Writes an OpenCSD snapshot of one source: device "ETM_0" (type from
 * the protocol), core "cpu_0" with the regions, the trace either raw
 * ("source_data") or CoreSight-formatted ("coresight").  0 or a negative
 * code with a reason in err. */
TB_API int tb_encoder_write_snapshot(const char *dir, const tb_config *cfg,
                              const tb_snap_region *regions, size_t n_regions,
                              const uint8_t *trace, size_t len, bool formatted,
                              char *err, size_t errlen);

/* A growable memory buffer as a tb_trace_sink or tb_frame_sink (ctx =
 * the buffer): start it zeroed, free(buf) after.  TB_ERR_NOMEM when it
 * cannot grow. */
typedef struct tb_encoder_membuf {
    uint8_t *buf;
    size_t len, cap;
} tb_encoder_membuf;
TB_API int tb_encoder_mem_sink(void *ctx, const uint8_t *data, size_t len);

/* The same snapshot written as the trace is produced, so that memory
 * stays flat however long the run: open it before the run, give
 * tb_encoder_snapshot_sink as the encoder's sink (ctx = the snapshot),
 * close it after tb_encoder_finish.  The buffer grows in
 * DIR/trace_buffer.bin.part (CoreSight frames when formatted, made as
 * the bytes come) and becomes trace_buffer.bin when close has written
 * the ini files and dumps; a stale DIR/snapshot.ini is removed at open,
 * so an unfinished directory never loads.  The files equal
 * tb_encoder_write_snapshot's for the same trace. */
typedef struct tb_encoder_snapshot tb_encoder_snapshot;
/* NULL with a reason in err (the directory or the file cannot be made). */
TB_API tb_encoder_snapshot *tb_encoder_snapshot_open(const char *dir, const tb_config *cfg,
                                              bool formatted, char *err, size_t errlen);
/* A tb_trace_sink; errors (TB_ERR_IO) are sticky and close reports them. */
TB_API int tb_encoder_snapshot_sink(void *ctx, const uint8_t *data, size_t len);
/* A formatted snapshot as a TPIU capture (format tpiu_coresight:
 * FSYNCs between frames, HSYNCs where the port idled; tb_formatter_tick):
 * call before any byte; TB_ERR_STATE after one or when not formatted. */
TB_API int tb_encoder_snapshot_tpiu(tb_encoder_snapshot *s);
/* tb_encoder_snapshot_sink for bytes the encoder emitted at core cycle
 * `cycle`: a TPIU capture pads the port's idle cycles before them. */
TB_API int tb_encoder_snapshot_sink_at(tb_encoder_snapshot *s, uint64_t cycle,
                                       const uint8_t *data, size_t len);
/* Buffer bytes written so far (frames included). */
TB_API uint64_t tb_encoder_snapshot_bytes(const tb_encoder_snapshot *s);
/* Completes the snapshot and frees s (on error too: the partial buffer is
 * removed).  0 or a negative code with a reason in err. */
TB_API int tb_encoder_snapshot_close(tb_encoder_snapshot *s, const tb_snap_region *regions,
                              size_t n_regions, char *err, size_t errlen);
/* Gives up: removes the partial buffer and frees s. */
TB_API void tb_encoder_snapshot_abort(tb_encoder_snapshot *s);

#ifdef __cplusplus
}
#endif

#endif
