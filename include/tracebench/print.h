/*
 * Printing packets for people and for scripts.  The library never
 * prints: these format into a caller's buffer.
 */
#ifndef TRACEBENCH_PRINT_H
#define TRACEBENCH_PRINT_H

#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One readable line (no newline): index, kind, raw bytes, decoded
 * fields.  Returns the length it needed (snprintf-style; the output is
 * cut to cap-1 characters and always terminated when cap > 0). */
TB_API int tb_packet_format(const tb_packet *pkt, char *buf, size_t cap);

/* One JSON object (no newline) with every decoded field of the packet,
 * plus "id" when id >= 0.  Same return convention. */
TB_API int tb_packet_format_json(const tb_packet *pkt, int id, char *buf, size_t cap);

/* Atom string of a packet: the W/E/N sequence, e.g. "WEE". */
TB_API const char *tb_packet_atoms(const tb_packet *pkt, char buf[24]);

/* Exception name for an A/R-profile trace exception number. */
TB_API const char *tb_exc_number_name(unsigned num);

#ifdef __cplusplus
}
#endif

#endif
