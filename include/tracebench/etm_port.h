/*
 * The trace-port capture file shared by ETMv1 and ETMv2 (docs/etmv1.md 2,
 * docs/etmv2.md 2): a 16-byte header, then one 4-byte sample per
 * TRACECLK cycle.  Header: magic "TBETMCAP", format version 1, protocol
 * (1 = ETMv1, 2 = ETMv2), minor version, port width, ETMCR (LE).
 */
#ifndef TRACEBENCH_ETM_PORT_H
#define TRACEBENCH_ETM_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tracebench/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The trace port configuration of both protocols (ETMCR fields, IHI0014Q
 * 3.5.1 as read by OpenOCD etm.h: [6:4] port size, [8] branch output,
 * [12] cycle accurate, [15:14] context ID size; [3:2] data trace), named
 * tb_etmv1_config and tb_etmv2_config by their headers, whose functions
 * check it for their protocol. */
typedef struct tb_etm_port_config {
    /* sizeof (tb_etm_port_config) as the caller was built, as tb_config's
     * (types.h): tb_etmv1_config_init / tb_etmv2_config_init set it; every
     * function reads only that many bytes, the later fields as 0, and
     * those that fill one (from_etmcr, from_tb, capture_parse_header)
     * write only that many, TB_ERR_INVAL when a value set
     * past it would be lost.  Below TB_ETM_PORT_CONFIG_SIZE_MIN (0: never
     * initialised) or absurd: TB_ERR_INVAL (NULL from a _new).  Fields
     * only ever added at the end. */
    size_t size;
    uint8_t minor;        /* ETMv1.x 0..3; ETMv2.x 0 (ETM10) */
    uint8_t port_width;   /* 4, 8 or 16 */
    uint8_t data_trace;   /* ETMCR[3:2]: bit0 values, bit1 addresses (the
                           * ETMv2 parser reads data packets; its encoder
                           * does not write them yet) */
    bool cycle_accurate;  /* ETMCR[12] */
    bool branch_output;   /* ETMCR[8]: direct branches traced as BE */
    uint8_t ctxid_bytes;  /* 0, 1, 2 or 4 (ETMCR[15:14]); ETMv1 from v1.2 */
    /* Where the exception vectors are: a branch to base+0x00..0x1C is
     * read as an exception (docs/etmv1.md 4).  0xFFFF0000 is always one. */
    uint32_t vector_base;
    /* ETMv2 only: the encoder folds branches into phantom statuses (U18,
     * etmv2.h); decoders always accept them.  Not in ETMCR: the capture
     * header reader keeps the caller's. */
    bool phantoms;
} tb_etm_port_config;

/* The smallest tb_etm_port_config taken: size, minor and port width (the
 * fields whose 0 is no setting); the rest read as 0 (off). */
#define TB_ETM_PORT_CONFIG_SIZE_MIN \
    (offsetof(tb_etm_port_config, port_width) + sizeof(uint8_t))

/* Cleared, this build's size, the given minor version and an 8-bit port.
 * Inline, so that the size is the caller's own struct's. */
static inline void tb_etm_port_config_init(tb_etm_port_config *c, uint8_t minor)
{
    memset(c, 0, sizeof *c);
    c->size = sizeof *c;
    c->minor = minor;
    c->port_width = 8;
}

#define TB_ETM_PORT_HDR_BYTES 16
enum { TB_ETM_PORT_V1 = 1, TB_ETM_PORT_V2 = 2 };

TB_API void tb_etm_port_header_put(uint8_t proto, uint8_t minor, uint8_t width,
                            uint32_t etmcr, uint8_t out[16]);
/* 0, or TB_ERR_FORMAT for a wrong magic or format version.  The fields
 * are returned unchecked (the protocol's own parser checks them). */
TB_API int tb_etm_port_header_get(const uint8_t in[16], uint8_t *proto, uint8_t *minor,
                           uint8_t *width, uint32_t *etmcr);

/* Cuts a capture's bytes, arriving in chunks of any size, into its
 * header and its 4-byte samples, for the ETMv1 and ETMv2 parsers.  pos is
 * the stream index of the next byte: set it to the chunk's index before
 * each chunk. */
#define TB_ETM_PORT_SAMPLE_BYTES 4
typedef struct tb_etm_port_framer {
    uint64_t pos;
    uint8_t hdr[TB_ETM_PORT_HDR_BYTES];
    unsigned hdr_n;
    bool hdr_done;
    uint8_t part[TB_ETM_PORT_SAMPLE_BYTES];
    unsigned part_n;
    uint64_t part_index;     /* stream index of part[0] */
} tb_etm_port_framer;

enum { TB_ETM_PORT_NEED = 0, TB_ETM_PORT_HEADER = 1, TB_ETM_PORT_SAMPLE = 2 };

/* Takes data[*i..len) up to the next complete piece: returns
 * TB_ETM_PORT_HEADER when hdr is complete, TB_ETM_PORT_SAMPLE when part
 * holds a sample (at part_index), TB_ETM_PORT_NEED when the chunk is used
 * up. */
TB_API int tb_etm_port_framer_next(tb_etm_port_framer *f, const uint8_t *data, size_t len,
                            size_t *i);

#ifdef __cplusplus
}
#endif

#endif
