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

#include "tracebench/export.h"

#ifdef __cplusplus
extern "C" {
#endif

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
