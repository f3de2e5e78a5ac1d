/*
 * The trace-port capture file shared by ETMv1 and ETMv2 (docs/etmv1.md 2,
 * docs/etmv2.md 2): a 16-byte header, then one 4-byte sample per
 * TRACECLK cycle.  Header: magic "TBETMCAP", format version 1, protocol
 * (1 = ETMv1, 2 = ETMv2), minor version, port width, ETMCR (LE).
 */
#ifndef TRACEBENCH_ETM_PORT_H
#define TRACEBENCH_ETM_PORT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TB_ETM_PORT_HDR_BYTES 16
enum { TB_ETM_PORT_V1 = 1, TB_ETM_PORT_V2 = 2 };

void tb_etm_port_header_put(uint8_t proto, uint8_t minor, uint8_t width,
                            uint32_t etmcr, uint8_t out[16]);
/* 0, or TB_ERR_FORMAT for a wrong magic or format version.  The fields
 * are returned unchecked (the protocol's own parser checks them). */
int tb_etm_port_header_get(const uint8_t in[16], uint8_t *proto, uint8_t *minor,
                           uint8_t *width, uint32_t *etmcr);

#ifdef __cplusplus
}
#endif

#endif
