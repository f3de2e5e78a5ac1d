/*
 * ETMv1 trace port (ETM7/ETM9): PIPESTAT + TRACEPKT + TRACESYNC, one
 * sample per TRACECLK cycle (IHI0014Q chapter 5; docs/etmv1.md, which
 * also gives the capture file format and the OpenOCD `etm load` form).
 *
 *   exec records -> tb_encoder (TB_PROTO_ETMV1) -> capture bytes
 *   capture bytes -> tb_parser (TB_PROTO_ETMV1) -> tb_packet (ATOM,
 *                    BRANCH, TRIGGER, DATA)
 *   tb_packet + tb_memimage -> tb_decoder -> tb_element
 * (or tb_pipeline, pipeline.h, for both)
 *
 * Data trace (ETMCR[3:2], IHI0014Q 5.4, 5.7.3): docs/etmv1.md 9.  The
 * sources of the facts are in docs/etmv1-v2-sources.md; the model
 * choices and unverified values are listed in docs/etmv1.md.
 */
#ifndef TRACEBENCH_ETMV1_H
#define TRACEBENCH_ETMV1_H

#include "tracebench/encoder.h"
#include "tracebench/etm_port.h"
#include "tracebench/snapshot.h"
#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* PIPESTAT[2:0] (IHI0014Q 5.1 Table 5.1: b000-b100 [S]; b101 BD, b110 TR,
 * b111 TD as OpenOCD, unverified U11 except TD = 0x7 in 5.10). */
enum tb_etmv1_pipestat {
    TB_ETMV1_IE = 0, /* executed, no packets */
    TB_ETMV1_ID = 1, /* executed, data packets */
    TB_ETMV1_IN = 2, /* condition failed */
    TB_ETMV1_WT = 3, /* wait: no instruction */
    TB_ETMV1_BE = 4, /* branch executed: address packets */
    TB_ETMV1_BD = 5, /* branch with data */
    TB_ETMV1_TR = 6, /* trigger: real status on TRACEPKT[2:0] */
    TB_ETMV1_TD = 7, /* no trace; CA: TRACEPKT[0] = TraceEnable */
};

/* Branch reason codes, 5th address packet bits [6:4] (etmv1-v2-sources
 * 1.5: 0-3 match the ETMv2 TFO reasons, IHI0014Q 6.5.4; 4 periodic from
 * v1.2, 5.6.2; 5-7 reserved, unverified U12). */
enum tb_etmv1_reason {
    TB_ETMV1_R_NORMAL = 0,
    TB_ETMV1_R_TRACE_ON = 1,
    TB_ETMV1_R_OVERFLOW = 2,
    TB_ETMV1_R_DEBUG = 3,
    TB_ETMV1_R_PERIODIC = 4,
};

/* One TRACECLK cycle on the port. */
typedef struct tb_etmv1_sample {
    uint8_t pipestat;   /* PIPESTAT[2:0] (ETMv2: [3:0]) */
    uint8_t tracesync;  /* TRACESYNC, 0 or 1 (ETMv1 only) */
    uint16_t tracepkt;  /* TRACEPKT[width-1:0] */
} tb_etmv1_sample;

/* The trace port configuration: etm_port.h's, with ETMv1's checks. */
typedef tb_etm_port_config tb_etmv1_config;

/* Defaults: ETMv1.3, 8-bit port, plain trace, no context ID, vectors 0. */
static inline void tb_etmv1_config_init(tb_etmv1_config *c)
{
    tb_etm_port_config_init(c, 3);
}
/* TB_ERR_CONFIG for a minor above 3, a width other than 4/8/16, a
 * context ID size other than 0/1/2/4, context IDs before v1.2 (5.6.3) or
 * phantoms (an ETMv2 feature); TB_ERR_INVAL for a size refused. */
TB_API int tb_etmv1_config_check(const tb_etmv1_config *c);
/* The ETMCR c gives (0 for a size refused: tb_etmv1_config_check says). */
TB_API uint32_t tb_etmv1_etmcr(const tb_etmv1_config *c);
/* Fills c (initialised: its size is read) from ETMCR, vector_base left
 * 0; TB_ERR_CONFIG for a port size ETMv1 does not have. */
TB_API int tb_etmv1_config_from_etmcr(tb_etmv1_config *c, uint32_t etmcr,
                               uint8_t minor);

/* The port configuration a tb_config of protocol TB_PROTO_ETMV1 gives
 * (tb_config_from_etmv1) into c (initialised); TB_ERR_CONFIG for another
 * protocol, TB_ERR_INVAL for either size refused or a vector base c has
 * no room for. */
TB_API int tb_etmv1_config_from_tb(tb_etmv1_config *c, const tb_config *cfg);

/* ---- capture file (docs/etmv1.md 2) ---- */
#define TB_ETMV1_HDR_BYTES 16
#define TB_ETMV1_SAMPLE_BYTES 4
/* The header for c (ETMv1): 0, or TB_ERR_INVAL for a size refused (out
 * not written). */
TB_API int tb_etmv1_capture_header(const tb_etmv1_config *c, uint8_t out[16]);
/* Reads a header into c (NULL: only checked; else initialised, its
 * vector_base kept): 0, TB_ERR_FORMAT (magic, version, protocol, width or
 * ETMCR inconsistent) or TB_ERR_INVAL (c's size). */
TB_API int tb_etmv1_capture_parse_header(const uint8_t in[16], tb_etmv1_config *c);
TB_API void tb_etmv1_sample_pack(const tb_etmv1_sample *s, uint8_t out[4]);
/* 0, or TB_ERR_FORMAT when reserved bits are set. */
TB_API int tb_etmv1_sample_unpack(const uint8_t in[4], tb_etmv1_sample *s);
/* The stream index of sample k: its byte offset in the capture. */
static inline uint64_t tb_etmv1_sample_index(uint64_t k)
{
    return TB_ETMV1_HDR_BYTES + TB_ETMV1_SAMPLE_BYTES * k;
}

/* OpenOCD `etm load` form (etmv1-v2-sources 2.3): 12-byte header
 * (status, ETMCR, cycle count; big-endian) then 12 bytes per cycle
 * (pipestat, packet, flags).  A TR cycle becomes its replaced status
 * with flag bit 1.  The header: 0, or TB_ERR_INVAL for c's size refused. */
TB_API int tb_etmv1_openocd_header(const tb_etmv1_config *c, uint32_t n_cycles,
                             uint8_t out[12]);
TB_API void tb_etmv1_openocd_sample(const tb_etmv1_sample *s, uint8_t out[12]);

/* ---- branch address (IHI0014Q 5.5.4 [S]: 1-5 packets, bit 7 = another
 * follows, 7 bits each in packets 1-4, only the changed low bits; bit
 * mapping as OpenOCD, unverified U12: the raw address LSB first, A[0] =
 * Thumb, 5th packet [3:0] = A[31:28], [6:4] = reason, bit 7 = J (v1.3)).
 * Not ETMv2's scheme (pkt_codec.h, IHI0014Q 6.7.1): no
 * shift by the instruction size, no branch marker bit 0, reason inside. */

/* The raw value sent for addr in state isa: ARM bits [1:0] = 0, Thumb
 * A[0] = 1. */
TB_API uint32_t tb_etmv1_addr_raw(uint32_t addr, tb_isa isa);
/* Packets for raw against the last raw value output: the fewest that
 * cover every changed bit, 5 with `full` or a non-zero reason.  Returns
 * the count (1..5). */
TB_API int tb_etmv1_addr_encode(uint32_t raw, uint32_t last, bool full,
                         uint8_t reason, uint8_t out[5]);
/* Address packets complete in b[0..avail): n (1..5), or 0 for more. */
TB_API unsigned tb_etmv1_addr_length(const uint8_t *b, size_t avail);
/* Merges n packets into last: *raw, *reason (0 unless n = 5), *jbit. */
TB_API void tb_etmv1_addr_decode(const uint8_t *b, unsigned n, uint32_t last,
                          uint32_t *raw, uint8_t *reason, bool *jbit);

/* ---- encoder: tb_encoder (encoder.h) with protocol TB_PROTO_ETMV1
 * writes a capture (tb_encoder_opts: port_width, vector_base, keep_idle;
 * arch_minor, cycle_accurate, branch_broadcast, ctxid_bytes, sync_period
 * in cycles, trigger_at, fifo_depth, ranges). ---- */

/* ---- packets: what tb_parser gives for a capture of protocol
 * TB_PROTO_ETMV1 (a tb_config from tb_config_from_etmv1, or from the
 * capture header: tb_etmv1_capture_parse_header), in instruction order:
 *   ATOM     seq[]: 'E' (IE/ID), 'N' (IN), and in CA mode 'W' for each
 *            other cycle counted (WT, APO cycles, TD with TRACEPKT[0]=1)
 *   BRANCH   a BE/BD cycle with its address: addr (merged), addr_bits
 *            (7 a packet, 32 for five), addr_known, isa (A[0]),
 *            reason (5th packet [6:4], else 0), has_ctxid/context_id,
 *            bytes[] = the packets; phdr_format = the cycle's PIPESTAT
 *            (BE or BD); sync_ev = its TRACESYNC event number
 *   TRIGGER  a TR cycle, before the status it replaced
 *   DATA     (ETMCR[3:2] != 0, docs/etmv1.md 9) an ID's marker
 *            (phdr_format ID, size 0), right after the ATOM with its E;
 *            or a cycle's data units (phdr_format 0, bytes[0..size):
 *            TRACEPKT nibbles on a 4-bit port, else the bytes no branch
 *            address took, idle ones included; sync_ev = the TRACESYNC
 *            events up to that cycle).  The decoder measures them.
 *   RESERVED, BAD_SEQUENCE, INCOMPLETE: errors (err); the parser then
 *            forgets pending branches and goes on
 * index is the stream index (byte offset in the capture) of the cycle. */
/* ---- elements: what tb_decoder gives for them (decoder.h conventions:
 * NO_SYNC INIT first; TRACE_ON at the first full address and at each
 * trace-on / overflow / debug marker (reason = I-sync reason); ranges
 * of up to 32 instructions with atom_bits, ending at a taken branch;
 * EXCEPTION for a BE to a vector; CONTEXT; EVENT for a trigger; in CA
 * mode cc on ranges = the cycles from each instruction's status to the
 * next status; with data trace a DATA element per transfer after the
 * range that ends with its instruction, later elements held until its
 * data has come, docs/etmv1.md 9). */
/* ---- VCD view of a capture (docs/etmv1.md 8) ----
 * Capture bytes (header first, any chunking) -> VCD text through sink,
 * in pieces of at most 4 KB (memory flat).  No $date (deterministic).
 * Module etm_port: TRACECLK (1), PIPESTAT (3 bits; 4 for ETMv2),
 * TRACESYNC (1), TRACEPKT (the port width).  Timescale 1 ns = half a
 * TRACECLK period: sample k's values change with TRACECLK falling at 2k,
 * TRACECLK rises at 2k+1 (where an analyser samples), and a last falling
 * edge at 2n.  Only changed values are written; dropped idle cycles are
 * not put back. */
typedef struct tb_etmv1_vcd tb_etmv1_vcd;
/* NULL without a sink or memory. */
TB_API tb_etmv1_vcd *tb_etmv1_vcd_new(tb_trace_sink sink, void *ctx);
TB_API void tb_etmv1_vcd_free(tb_etmv1_vcd *v);
/* 0, or (sticky) TB_ERR_FORMAT (bad header, reserved sample bits),
 * TB_ERR_STOPPED (the sink returned non-zero), TB_ERR_STATE after finish. */
TB_API int tb_etmv1_vcd_push(tb_etmv1_vcd *v, const uint8_t *data, size_t len);
/* Writes the last edge and flushes: TB_ERR_TRUNCATED for a cut header
 * or sample (nothing more is written then). */
TB_API int tb_etmv1_vcd_finish(tb_etmv1_vcd *v);
/* Samples (TRACECLK cycles) converted so far. */
TB_API uint64_t tb_etmv1_vcd_samples(const tb_etmv1_vcd *v);
/* The capture file `capture` as the VCD file `vcd`, streamed: 0, or
 * TB_ERR_IO / TB_ERR_FORMAT / TB_ERR_TRUNCATED with a message in err. */
TB_API int tb_etmv1_vcd_file(const char *capture, const char *vcd, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
