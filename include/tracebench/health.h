/*
 * Trace health: whether a decode lost trace, and the likely cause.
 *
 * A decode that goes wrong because the configuration does not match the
 * trace (a CoreSight-formatted buffer read as one source's bytes,
 * cycle-accurate trace read without ETMCR[12], the wrong protocol) does
 * not fail: the parser hunts for an A-sync that never comes, or finds
 * packets that break the protocol, and the decoder says NO_SYNC.  This
 * module counts what a parse and a decode show (packets, elements, bytes)
 * and names the cause, so that a caller can tell a complete decode from
 * one that lost trace and say what to change.  It prints nothing.
 *
 * Gaps that are part of a correct decode (the ViewInst filter, a FIFO
 * overflow, code the memory image lacks) are not losses here.
 */
#ifndef TRACEBENCH_HEALTH_H
#define TRACEBENCH_HEALTH_H

#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What tb_health_diagnose() finds, worst first where two apply. */
typedef enum tb_health_cause {
    TB_HEALTH_OK = 0,         /* synchronised and nothing lost to corruption */
    TB_HEALTH_EMPTY,          /* no trace bytes at all */
    TB_HEALTH_NO_ASYNC,       /* bytes, but no A-sync among them: nothing was
                               * decoded (the wrong protocol, a formatted
                               * buffer read raw, not trace) */
    TB_HEALTH_NO_ISYNC,       /* A-sync, but never an address to start from
                               * (I-sync): nothing was decoded */
    TB_HEALTH_BAD_PACKETS,    /* packets that break the protocol after sync:
                               * the trace up to the next A-sync is lost */
    TB_HEALTH_DECODE_ERRORS,  /* packets that parse but cannot be what ran
                               * (an atom the image contradicts, data trace
                               * that fits no instruction) */
    TB_HEALTH_NO_ADDRESS,     /* most atoms came with no address to apply
                               * them to, and missing code does not explain
                               * it: the packets are likely misread */
} tb_health_cause;

/* A short fixed name ("no-async", "bad-packets", ...). */
TB_API const char *tb_health_cause_name(tb_health_cause c);

/* The counts.  Zero it with tb_health_init(), then feed it. */
typedef struct tb_health {
    uint64_t bytes;            /* trace bytes of the source (tb_health_bytes) */
    /* From packets (tb_health_packet): */
    uint64_t packets;          /* packets seen (the decoder's fused paths
                                * hand it only the ones that are not atoms,
                                * branches or I-syncs) */
    uint64_t unsynced_bytes;   /* bytes skipped hunting for an A-sync */
    uint64_t asyncs;           /* A-sync packets */
    uint64_t bad_packets;      /* reserved headers, malformed packets,
                                * headers the configuration forbids */
    uint64_t first_bad_index;  /* stream index of the first of them */
    bool truncated;            /* the trace ended inside a packet (an ETB
                                * that stopped mid-packet: not a loss) */
    /* From elements (tb_health_element): */
    uint64_t elements;
    uint64_t syncs;            /* TRACE_ON elements: an address was found */
    uint64_t insns;            /* instructions in ranges */
    uint64_t unknown_atoms;    /* ADDR_UNKNOWN: atoms with no address */
    uint64_t nacc;             /* ADDR_NACC: code the image lacks */
    uint64_t lost;             /* NO_SYNC for a bad packet or an
                                * inconsistency (not the end's truncation) */
    uint64_t decode_errors;    /* those of them no bad packet explains */
    uint64_t first_lost_index; /* stream index of the first NO_SYNC lost */
    uint8_t first_lost_reason; /* its tb_gap_reason */
    /* Internal: the index of the last bad packet, to tell the decoder's
     * NO_SYNC for it from a decode error of its own. */
    uint64_t last_bad_index;
} tb_health;

TB_API void tb_health_init(tb_health *h);
/* n more bytes of the source's trace. */
TB_API void tb_health_bytes(tb_health *h, uint64_t n);
/* A packet from the parser (tb_parser_push's callback, or the decoder's:
 * tb_decoder_set_health). */
TB_API void tb_health_packet(tb_health *h, const tb_packet *pkt);
/* An element from the decoder. */
TB_API void tb_health_element(tb_health *h, const tb_element *el);

/* The verdict.  port: an ETMv1/ETMv2 port capture, which has no A-sync
 * (its synchronisation is the decoder's TRACE_ON alone). */
typedef struct tb_health_diag {
    tb_health_cause cause;
    bool lost;                 /* trace was lost to corruption or never
                                * synchronised: the decode is incomplete */
    bool config_suspect;       /* the cause looks like a configuration that
                                * does not match the trace (repeated bad
                                * packets, atoms with no address, no A-sync
                                * in a buffer that is not tiny) */
    uint64_t count;            /* the cause's count (bad packets, ...) */
    uint64_t index;            /* the stream index where it first showed */
} tb_health_diag;
TB_API void tb_health_diagnose(const tb_health *h, bool port, tb_health_diag *d);

/* What a trace buffer's bytes look like: CoreSight formatter frames
 * (frame.h) or not.  A formatted buffer read as one source's
 * bytes loses nearly all its trace, and the frames show: 16-byte frames
 * whose ID bytes name a few valid trace IDs, never a reserved one, and
 * whose bytes, split by ID, parse as trace.  One source's own bytes can
 * pass the first test (a short or repetitive trace names no reserved ID
 * by chance), hardly the second. */
#define TB_GUESS_MAX_IDS 16
typedef struct tb_buffer_guess {
    uint64_t frames;           /* whole frames looked at */
    uint64_t frame_errors;     /* reserved IDs, broken syncs */
    unsigned n_ids;            /* trace IDs 0x01-0x6F with data */
    uint8_t ids[TB_GUESS_MAX_IDS];       /* the first of them, ascending */
    uint64_t id_bytes[TB_GUESS_MAX_IDS]; /* their data bytes */
    /* With a configuration: each ID's bytes through a parser. */
    uint64_t id_asyncs[TB_GUESS_MAX_IDS];
    uint64_t id_bad[TB_GUESS_MAX_IDS];   /* bad packets */
    unsigned n_clean;          /* IDs with an A-sync and no bad packet */
    bool formatted;            /* looks formatted */
} tb_buffer_guess;
/* Looks at data[0..len) (a buffer's start; 64 KiB is plenty).  cfg: the
 * configuration to parse each ID's bytes with (its trace ID is not
 * used; NULL: the frames alone decide, which a repetitive raw trace can
 * pass).  Returns 0, or TB_ERR_INVAL / TB_ERR_NOMEM. */
TB_API int tb_health_guess_buffer(const uint8_t *data, size_t len, const tb_config *cfg,
                           tb_buffer_guess *g);

#ifdef __cplusplus
}
#endif

#endif
