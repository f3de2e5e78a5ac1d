/*
 * tracebench vocabulary: the words every stage shares.
 *
 * ISA state, errors, the trace-source configuration, packets (both
 * protocols), exec records (the simulator's ground truth) and trace
 * elements (the decoder's output).  Nothing here knows how a packet is
 * encoded; that lives in the per-protocol writer and parser.
 */
#ifndef TRACEBENCH_TYPES_H
#define TRACEBENCH_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tracebench/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Errors: 0 or a positive count is success, a negative code an error. */

enum tb_error {
    TB_OK = 0,
    TB_ERR_NOMEM = -1,       /* allocation failed */
    TB_ERR_INVAL = -2,       /* bad argument from the caller */
    TB_ERR_IO = -3,          /* a file could not be read or written */
    TB_ERR_FORMAT = -4,      /* a file is not in the expected format */
    TB_ERR_CONFIG = -5,      /* configuration missing or inconsistent */
    TB_ERR_NOSPACE = -6,     /* output buffer too small */
    TB_ERR_BAD_PACKET = -7,  /* a packet that breaks the protocol */
    TB_ERR_TRUNCATED = -8,   /* input ended inside a packet or record */
    TB_ERR_NO_SYNC = -9,     /* no synchronisation found */
    TB_ERR_NOT_IN_IMAGE = -10, /* code bytes not in the memory image (was
                              * TB_ERR_NO_MEMORY, which read like NOMEM) */
    TB_ERR_UNSUPPORTED = -11,/* valid but not supported (e.g. Jazelle code) */
    TB_ERR_NOT_FOUND = -12,  /* a named item does not exist */
    TB_ERR_EMULATOR = -13,   /* the emulator reported an error */
    TB_ERR_FAULT = -14,      /* the program faulted where no scenario asked */
    TB_ERR_LIMIT = -15,      /* a configured limit was reached */
    TB_ERR_MISMATCH = -16,   /* two streams that must agree do not */
    TB_ERR_STATE = -17,      /* call not valid in the object's state */
    TB_ERR_BAD_FRAME = -18,  /* CoreSight frame stream is corrupt */
    TB_ERR_STOPPED = -19,    /* a callback asked to stop */
};

/* The old name of TB_ERR_NOT_IN_IMAGE, kept for source compatibility:
 * it reads like TB_ERR_NOMEM (allocation failed), which it is not. */
#define TB_ERR_NO_MEMORY TB_ERR_NOT_IN_IMAGE

/* A fixed string for each code; "unknown error" for anything else. */
TB_API const char *tb_err_str(int err);

/* ------------------------------------------------------------------ */
/* Instruction set state. */

typedef enum tb_isa {
    TB_ISA_ARM = 0,
    TB_ISA_THUMB = 1,   /* Thumb and Thumb-2 */
    TB_ISA_THUMBEE = 2, /* decoded only, Unicorn cannot run it */
    TB_ISA_JAZELLE = 3, /* state reported only, no bytecodes */
    TB_ISA_UNKNOWN = 4,
} tb_isa;

TB_API const char *tb_isa_name(tb_isa isa);

/* ------------------------------------------------------------------ */
/* Trace source configuration, derived from the registers a snapshot
 * gives (ETMCR, ETMIDR, ETMCCER, ETMTRACEIDR: IHI0014Q chapter 3,
 * IHI0035B).  The register values are the truth;
 * the flags are decoded from them by tb_config_from_regs(). */

typedef enum tb_protocol {
    TB_PROTO_NONE = 0,
    TB_PROTO_ETMV3 = 1,
    TB_PROTO_PTM = 2,
    TB_PROTO_ETMV1 = 3,  /* ETMv1.x trace port (docs/etmv1.md) */
    TB_PROTO_ETMV2 = 4,  /* ETMv2.0 trace port (docs/etmv2.md) */
} tb_protocol;

TB_API const char *tb_protocol_name(tb_protocol p);

typedef struct tb_config {
    /* sizeof (tb_config) as the caller was built: tb_config_init and the
     * tb_config_from_* functions set it.  Every function that takes a
     * tb_config reads only that many bytes and the fields after them as
     * 0 (off), so a caller built against an older, smaller struct still
     * works; below TB_CONFIG_SIZE_MIN (0: never initialised) or absurd
     * is refused (TB_ERR_INVAL, or NULL from a _new).  Fields are only
     * ever added at the end.  The functions that fill one (from_*,
     * tb_encoder_config, tb_snapshot_source_config) write this build's
     * whole struct. */
    size_t size;
    tb_protocol protocol;
    uint32_t etmcr, etmidr, etmccer, traceidr;

    uint8_t arch_minor;     /* ETMv3.x: x; PFT1.x: x (ETMIDR[7:4]) */
    uint8_t trace_id;       /* ETMTRACEIDR[6:0] */
    uint8_t ctxid_bytes;    /* 0, 1, 2 or 4 (ETMCR[15:14]) */
    uint8_t data_trace;     /* ETMCR[3:2]: bit0 values, bit1 addresses */
    bool cycle_accurate;    /* ETMCR[12] */
    bool branch_broadcast;  /* ETMCR[8] */
    bool data_only;         /* ETMCR[20], ETMv3 */
    bool timestamps;        /* ETMCR[28] */
    bool return_stack;      /* ETMCR[29], PTM */
    bool vmid;              /* ETMCR[30] */
    bool alt_branch;        /* ETMIDR[20] honoured from ETMv3.4 */
    bool pc_first;          /* ETMIDR[16], ETMv3: an LDM that loads the PC
                             * transfers the PC first (docs/etmv3-data-model.md) */
    bool ts64;              /* ETMCCER[29] (forced off for PFT1.0) */
    bool ts_binary;         /* ETMCCER[28] */
    /* The traced core's profile, which no ETM register gives: 0 for an
     * A/R-profile core, 3 or 4 for a Cortex-M3 or Cortex-M4 (ARMv7-M:
     * IHI0014Q 7.5; docs/cortex-m.md).  From the snapshot's core type
     * (tb_snapshot_source_config) or the encoder options (v7m). */
    uint8_t v7m;
    bool virt;              /* ETMCCER[26]: Hyp bits valid */
    bool dmb_waypoint;      /* ETMCCER[24], PTM */
    /* ETMv1 (tb_config_from_etmv1; docs/etmv1.md): no ETMIDR, ETMCCER
     * or trace ID; arch_minor is the ETMv1.x minor version. */
    uint8_t port_width;     /* TRACEPKT pins 4, 8 or 16 (ETMCR[6:4]) */
    uint32_t vector_base;   /* exception vectors (0 or 0xFFFF0000) */
} tb_config;

/* The smallest tb_config the library takes: size, protocol and the four
 * registers; the decoded fields of a caller's struct that ends sooner
 * read as 0. */
#define TB_CONFIG_SIZE_MIN (offsetof(tb_config, traceidr) + sizeof(uint32_t))

/* All fields 0 (off), size set, the protocol given: for a configuration
 * built by hand rather than from the registers. */
static inline void tb_config_init(tb_config *cfg, tb_protocol protocol)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
    cfg->protocol = protocol;
}

/* Decodes the four registers; TB_ERR_CONFIG if ETMIDR names neither
 * ETMv3 (major 2) nor PFT (major 3). */
TB_API int tb_config_from_regs(tb_config *cfg, uint32_t etmcr, uint32_t etmidr,
                        uint32_t etmccer, uint32_t traceidr);
/* ETMv1.minor from ETMCR ([6:4] port size 0/1/2 = 4/8/16 pins, [3:2]
 * data trace, [8] branch output, [12] cycle accurate, [15:14] context ID
 * size; docs/etmv1.md): TB_ERR_CONFIG for a minor above 3,
 * another port size, or a context ID before ETMv1.2 (IHI0014Q 5.6.3). */
TB_API int tb_config_from_etmv1(tb_config *cfg, uint32_t etmcr, uint8_t minor,
                         uint32_t vector_base);
/* ETMv2.minor (docs/etmv2.md): the same ETMCR fields; minor 0 only. */
TB_API int tb_config_from_etmv2(tb_config *cfg, uint32_t etmcr, uint8_t minor,
                         uint32_t vector_base);
/* A trace-port protocol (ETMv1, ETMv2): a capture of port samples, never
 * CoreSight-formatted (docs/etmv1.md 2). */
static inline bool tb_protocol_is_port(tb_protocol p)
{
    return p == TB_PROTO_ETMV1 || p == TB_PROTO_ETMV2;
}
/* The snapshot buffer format of a port capture ("etmv1_port",
 * "etmv2_port"), NULL for the other protocols. */
TB_API const char *tb_port_format_name(tb_protocol p);

/* ------------------------------------------------------------------ */
/* Packets. */

typedef enum tb_pkt_kind {
    TB_PKT_NOTSYNC = 0,      /* bytes before the first A-sync (count) */
    TB_PKT_ASYNC,
    TB_PKT_ISYNC,            /* ETMv3 0x08/0x70, PTM 0x08 */
    TB_PKT_ATOM,             /* ETMv3 P-header, PTM atom */
    TB_PKT_BRANCH,           /* branch address, maybe with exception */
    TB_PKT_WP_UPDATE,        /* PTM 0x72 */
    TB_PKT_CYCLE_COUNT,      /* ETMv3 0x04 */
    TB_PKT_TIMESTAMP,
    TB_PKT_CONTEXT_ID,
    TB_PKT_VMID,
    TB_PKT_TRIGGER,
    TB_PKT_IGNORE,
    TB_PKT_EXC_RETURN,       /* ETMv3 exception exit, PTM ERET (0x76) */
    TB_PKT_EXC_ENTRY,        /* ETMv3 0x7E (v7-M data-trace marker) */
    TB_PKT_DATA,             /* ETMv3 normal data b00A0SS10 */
    TB_PKT_OOO_DATA,         /* ETMv3 out-of-order data b0TT0SS00 */
    TB_PKT_OOO_PLACEHOLDER,  /* ETMv3 b01A1TT00 */
    TB_PKT_STORE_FAILED,     /* ETMv3 0x50 */
    TB_PKT_DATA_SUPPRESSED,  /* ETMv3 0x62 */
    TB_PKT_VALUE_NOT_TRACED, /* ETMv3 b011A1010 */
    TB_PKT_RESERVED,         /* reserved header: sync lost */
    TB_PKT_BAD_SEQUENCE,     /* malformed packet body: sync lost */
    TB_PKT_BAD_TRACEMODE,    /* valid header the configuration forbids */
    TB_PKT_INCOMPLETE,       /* trace ended inside this packet */
    TB_PKT_KIND_COUNT
} tb_pkt_kind;

TB_API const char *tb_pkt_kind_name(tb_pkt_kind k);

/* I-sync reasons (IHI0014Q 7.10.5; same codes in PFT). */
enum tb_isync_reason {
    TB_ISYNC_PERIODIC = 0,
    TB_ISYNC_TRACE_ON = 1,
    TB_ISYNC_OVERFLOW = 2,
    TB_ISYNC_DEBUG_EXIT = 3,
};

/* The longest packet: ETMv3 I-sync with CC (5), CtxtID (4), info,
 * address (4) and an LSiP address with its extra byte (6). */
#define TB_PKT_MAX_BYTES 24

/* Atom values in tb_packet.atoms (oldest first). */
enum tb_atom { TB_ATOM_E = 'E', TB_ATOM_N = 'N', TB_ATOM_W = 'W' };

typedef struct tb_packet {
    tb_pkt_kind kind;
    tb_protocol protocol;
    uint64_t index;          /* stream index of the first byte */
    uint8_t size;            /* bytes in bytes[] (0 for NOTSYNC) */
    uint8_t bytes[TB_PKT_MAX_BYTES];
    uint64_t count;          /* NOTSYNC: bytes skipped */
    int err;                 /* RESERVED/BAD_*: the TB_ERR_* it means */

    /* Atoms.  ETMv3: the P-header's W/E/N sequence in time order.
     * PTM: E/N atoms, oldest first. */
    uint8_t atom_count;      /* E and N atoms only */
    uint8_t w_count;         /* W atoms (ETMv3 cycle-accurate) */
    uint8_t seq_len;         /* entries in seq[] */
    char seq[20];            /* 'W', 'E', 'N' in time order (ETMv1 CA
                              * also 'T', docs/etmv1.md 3) */
    uint8_t phdr_format;     /* ETMv3 P-header format 0..4 */

    /* Addresses (branch, I-sync, WP update).  addr is the full address
     * after merging with the last address output; addr_bits is how many
     * low bits this packet supplied (32 for I-sync). */
    uint32_t addr;
    uint8_t addr_bits;
    tb_isa isa;
    bool isa_changed;        /* branch: the 5-byte form named an ISA */
    bool addr_known;         /* false while high bits were never seen */

    /* Exception information (branch packets, PTM WP update AltISA). */
    bool has_exc;
    bool exc_cancel;         /* ETMv3: last traced instruction cancelled */
    uint16_t exc_num;
    uint8_t exc_resume;      /* v7-M */
    uint8_t exc_bytes;       /* number of exception bytes present */
    bool legacy_exc;         /* ETMv3 deprecated byte-5 form */

    /* Security and mode state carried by I-sync or exception bytes. */
    bool ns, hyp, altisa;
    bool ns_valid, hyp_valid; /* branch: exception bytes set these */

    /* Cycle count (ETMv3 0x04, I-sync 0x70, PTM CC fields). */
    bool has_cc;
    uint32_t cc;

    /* Timestamp: full merged value and the bits this packet replaced. */
    uint64_t ts;
    uint8_t ts_bits;

    /* Context. */
    bool has_ctxid;
    uint32_t context_id;
    uint8_t vmid;

    /* I-sync. */
    uint8_t reason;
    bool jazelle;
    bool lsip;
    uint32_t lsip_addr;      /* LSiP: where execution goes on (the compressed
                              * address after the 4-byte field, which, in
                              * addr, is the LSiP instruction's; 7.10.5) */
    tb_isa lsip_isa;

    /* ETMv3 data trace. */
    bool has_data_addr;
    uint32_t data_addr;
    uint8_t data_addr_bits;
    bool data_be;
    uint8_t data_size;       /* value bytes: 0, 1, 2 or 4 */
    uint32_t data_value;
    uint8_t data_tag;        /* out-of-order tag 1..3 */

    /* ETMv1 (etmv1.h): the TRACESYNC event number of a BRANCH's address;
     * of DATA units, the TRACESYNC events up to their cycle. */
    uint32_t sync_ev;
    /* ETMv1 BRANCH: another branch came in its APO cycles (IHI0014Q
     * 5.6.1), so it was abandoned: its instruction ran, and its address
     * (still sent, the read before its abandoner's) is where it went;
     * addr_bits 0 when that read cannot be told. */
    bool abandoned;
} tb_packet;

/* Called for each packet; a non-zero return stops the producer, which
 * then returns TB_ERR_STOPPED. */
typedef int (*tb_packet_cb)(void *ctx, const tb_packet *pkt);

/* Stream indices of a span: bytes of one source joined from several
 * deformatter runs (tb_deformatter_push_spans), so that the parser sees
 * them in one piece.  Segment s is span bytes [s ? end[s-1] : 0, end[s]);
 * its first byte has stream index index[s] and the rest follow
 * consecutively.  end[] rises strictly and end[n-1] is the span's
 * length. */
typedef struct tb_span_map {
    size_t n;
    const size_t *end;
    const uint64_t *index;
} tb_span_map;

/* ------------------------------------------------------------------ */
/* Exec records: the simulator's ground truth, the encoder's input. */

typedef enum tb_wp_class {
    TB_WP_NONE = 0,          /* not a waypoint */
    TB_WP_DIRECT,            /* B, B<c>, CBZ, ... */
    TB_WP_DIRECT_LINK,       /* BL, BLX(imm) */
    TB_WP_INDIRECT,          /* BX, LDR pc, POP {pc}, MOV pc, SUBS pc,lr ... */
    TB_WP_INDIRECT_LINK,     /* BLX(reg) */
    TB_WP_ISB,               /* ISB: a PTM waypoint (IHI0035B) */
    TB_WP_BARRIER,           /* DMB/DSB: waypoint only if ETMCCER[24] */
} tb_wp_class;

TB_API const char *tb_wp_class_name(tb_wp_class c);

typedef enum tb_exc_kind {
    TB_EXC_NONE = 0,
    TB_EXC_RESET,
    TB_EXC_UNDEF,
    TB_EXC_SVC,
    TB_EXC_PREFETCH_ABORT,
    TB_EXC_DATA_ABORT,
    TB_EXC_IRQ,
    TB_EXC_FIQ,
    TB_EXC_SMC,
    TB_EXC_HVC,
    TB_EXC_ASYNC_ABORT,
    TB_EXC_DEBUG_HALT,
    TB_EXC_V7M,              /* ARMv7-M: the exception number (IPSR) is
                              * in the record's u.exc.num */
} tb_exc_kind;

TB_API const char *tb_exc_kind_name(tb_exc_kind k);
/* The A/R-profile trace exception number (the exception field of an
 * ETMv3 branch address packet, IHI0014Q 7.3.3). */
TB_API int tb_exc_trace_number(tb_exc_kind k);

/* ARMv7-M exceptions (docs/cortex-m.md).  Numbers are the
 * architecture's (IPSR): 1 Reset, 2 NMI, 3 HardFault, 4 MemManage, 5
 * BusFault, 6 UsageFault, 11 SVCall, 12 DebugMonitor, 14 PendSV, 15
 * SysTick, 16 + n IRQn; 7-10 and 13 are reserved. */
#define TB_V7M_MAX_EXC 512   /* IPSR is 9 bits: 16 + 496 interrupts */
/* "NMI", "SysTick", "IRQ5", "reserved7"; NULL above 511. */
TB_API const char *tb_v7m_exc_name(unsigned num, char *buf, size_t len);
/* The value an ETM-M3/M4 traces for exception num (DDI0337G Table 14-8:
 * a permutation below 24, the number itself from 24); negative when num
 * is 0 or above 511. */
TB_API int tb_v7m_trace_number(unsigned num);
/* The inverse: the exception a traced value names (0 for 0: none). */
TB_API int tb_v7m_from_trace(unsigned traced);

typedef enum tb_rec_kind {
    TB_REC_INSN = 0,         /* an instruction reached execution */
    TB_REC_EXCEPTION,        /* exception entry */
    TB_REC_CONTEXT,          /* CONTEXTIDR / VMID change */
    TB_REC_END,              /* end of the run */
    TB_REC_DATA,             /* one memory transfer of the instruction
                              * record before it (only when the simulator
                              * is asked for data records) */
    TB_REC_STATE,            /* security state change: the instructions
                              * from here on run in u.state (only when the
                              * simulator tracks it, scenario secure) */
    TB_REC_EXC_RETURN,       /* ARMv7-M: the instruction record before it
                              * returned from exception u.eret.num (only
                              * with cpu = cortex-m*) */
} tb_rec_kind;

/* tb_exec_record.u.data.flags and tb_element.data_flags. */
enum tb_data_flags {
    TB_DATA_STORE = 1u << 0,        /* a store (else a load) */
    TB_DATA_STORE_FAILED = 1u << 1, /* STREX/STREXB/... that did not store */
    TB_DATA_BE = 1u << 2,           /* big-endian data (CPSR.E) */
    TB_DATA_NO_VALUE = 1u << 3,     /* element: value not traced */
    TB_DATA_NO_ADDR = 1u << 4,      /* element: address not traced */
    TB_DATA_SUPPRESSED = 1u << 5,   /* element: data packets deleted here
                                     * (IHI0014Q 7.4.6), or a placeholder's
                                     * value they may have taken */
    TB_DATA_OOO = 1u << 6,          /* element: the value of the earlier
                                     * placeholder element with tag .reason */
    TB_DATA_NO_DIR = 1u << 7,       /* element: direction, size and
                                     * instruction unknown (data-only
                                     * mode, ETMCR[20]: no instruction
                                     * trace, IHI0014Q 7.4.10) */
};

enum tb_insn_flags {
    TB_INSN_COND_FAILED = 1u << 0, /* condition check failed (N) */
    TB_INSN_TAKEN = 1u << 1,       /* a branch that changed the flow */
    TB_INSN_EXC_RETURN = 1u << 2,  /* SUBS pc,lr / RFE / LDM ^ / ERET */
    TB_INSN_CONDITIONAL = 1u << 3, /* has a condition (cond or in IT) */
    TB_INSN_IN_IT = 1u << 4,       /* inside a Thumb IT block */
};

typedef struct tb_exec_record {
    tb_rec_kind kind;
    uint64_t seq;            /* instruction count at this record */
    uint64_t cycle;          /* cycle stamp from the timing model */
    union {
        struct {
            uint32_t addr;
            uint32_t next_addr; /* where execution went next */
            uint32_t opcode;    /* Thumb-32: first halfword in [31:16] */
            uint8_t size;       /* 2 or 4 */
            uint8_t isa;        /* tb_isa */
            uint8_t next_isa;
            uint8_t wp_class;   /* tb_wp_class */
            uint8_t flags;      /* tb_insn_flags */
        } insn;
        struct {
            uint8_t kind;       /* tb_exc_kind */
            uint8_t isa;        /* ISA at the vector */
            bool cancelled;     /* the interrupted insn did not complete */
            uint32_t pref_return; /* preferred return address */
            uint32_t vector;
            uint32_t cpsr;      /* CPSR after entry (v7-M: xPSR) */
            bool tailchain;     /* v7-M: entered by tail-chaining at an
                                 * exception return, no new frame */
            uint16_t num;       /* v7-M: the exception number (IPSR) */
        } exc;
        /* v7-M exception return: after the record of the instruction
         * that loaded EXC_RETURN into the PC (its flags have
         * TB_INSN_EXC_RETURN).  With tailchain the frame stays and the
         * exception record of the next handler follows. */
        struct {
            uint16_t num;       /* the exception returned from */
            bool tailchain;
            bool preempted;     /* with tailchain: the next exception
                                 * arrived while the return unstacked
                                 * (late arrival), which cancels the
                                 * return (DDI0337E 15.5.2) */
            bool to_thread;     /* back to Thread mode (else Handler) */
            uint32_t exc_return; /* the EXC_RETURN value */
            uint32_t target;    /* the frame's return address */
        } eret;
        struct {
            uint32_t context_id;
            uint8_t vmid;
        } ctx;
        /* Each register of LDM/STM/PUSH/POP/LDRD/STRD is its own transfer,
         * in architectural order; a conditional load/store that failed
         * its condition has none. */
        struct {
            uint32_t insn_addr; /* the instruction that made it */
            uint32_t addr;      /* data address */
            uint32_t value;     /* the value loaded or stored (for a
                                 * failed STREX: the one it would store) */
            uint8_t size;       /* bytes: 1, 2 or 4 */
            uint8_t flags;      /* tb_data_flags */
        } data;
        /* After the instruction that changed it (an exception return,
         * an MCR to SCR), or before the exception record whose entry
         * changed it (SMC into Monitor mode). */
        struct {
            bool ns;            /* Non-secure: SCR.NS = 1, not Monitor */
            bool hyp;           /* Hyp mode (never set: docs/ns-hyp.md) */
        } state;
    } u;
} tb_exec_record;

/* ------------------------------------------------------------------ */
/* Trace elements: the decoder's output (like OpenCSD generic elements). */

typedef enum tb_elem_kind {
    TB_ELEM_NO_SYNC = 0,     /* gap: reason in .reason */
    TB_ELEM_TRACE_ON,
    TB_ELEM_INSN_RANGE,
    TB_ELEM_EXCEPTION,
    TB_ELEM_EXC_RETURN,
    TB_ELEM_CONTEXT,
    TB_ELEM_TIMESTAMP,
    TB_ELEM_CYCLE_COUNT,
    TB_ELEM_EVENT,           /* trigger */
    TB_ELEM_ADDR_NACC,       /* memory not in the image */
    TB_ELEM_ADDR_UNKNOWN,
    TB_ELEM_END,
    TB_ELEM_DATA,            /* one data transfer (ETMv3 data trace) */
} tb_elem_kind;

typedef enum tb_gap_reason {
    TB_GAP_INIT = 0,
    TB_GAP_OVERFLOW,
    TB_GAP_FILTER,
    TB_GAP_NO_MEMORY,
    TB_GAP_BAD_PACKET,
    TB_GAP_DEBUG,
    TB_GAP_INCONSISTENT,     /* an atom contradicts the image */
} tb_gap_reason;

typedef struct tb_element {
    tb_elem_kind kind;
    uint64_t index;          /* index of the packet that produced it */
    uint8_t reason;          /* tb_gap_reason / I-sync reason */
    uint8_t isa;
    uint32_t start, end;     /* INSN_RANGE: [start, end) */
    uint32_t count;          /* instructions in the range */
    uint32_t last_addr;
    uint8_t last_size;
    uint8_t last_wp;         /* tb_wp_class of the last instruction */
    char last_atom;          /* 'E' or 'N' */
    uint32_t atom_bits;      /* ETMv3 ranges: N bits per instruction */
    /* Kind-specific fields share space (the element is copied on every
     * range: it stays 88 bytes).  DATA: last_addr is the instruction
     * that made the transfer (when known), data_* the transfer. */
    union {
        uint16_t exc_num;                  /* EXCEPTION: the trace number
                                            * (A/R), the IPSR number (v7-M) */
        struct {
            uint8_t data_size;             /* DATA: bytes, 0 if unknown */
            uint8_t data_flags;            /* DATA: tb_data_flags */
        };
    };
    uint32_t pref_return;
    bool cancelled;
    bool tailchain;          /* EXCEPTION, v7-M: entered by tail-chaining
                              * (an exception return packet just before;
                              * pref_return is then unknown, 0) */
    union {
        uint64_t ts;                       /* TIMESTAMP */
        struct {
            uint32_t data_addr, data_value; /* DATA */
        };
    };
    bool has_cc;
    uint32_t cc;
    uint32_t context_id;
    uint8_t vmid;
    bool ns, hyp;
    int err;
} tb_element;

typedef int (*tb_element_cb)(void *ctx, const tb_element *el);

#ifdef __cplusplus
}
#endif

#endif /* TRACEBENCH_TYPES_H */
