/*
 * Packet parser: trace bytes -> packets, for every protocol (ETMv3, PTM,
 * and the ETMv1/ETMv2 port captures of etmv1.h and etmv2.h).
 *
 * A push API.  Feed the stream in chunks of any size; the packets, their
 * indices and every field come out the same however the stream is cut.
 * The parser holds at most one packet's bytes, so its memory does not
 * grow with the stream.
 *
 * Bytes before the first A-sync are reported as one NOTSYNC packet
 * (index of the first byte, count).  After a reserved header or a
 * malformed packet it reports that packet (RESERVED / BAD_SEQUENCE) and
 * hunts for the next A-sync, reporting the skipped bytes as NOTSYNC.
 */
#ifndef TRACEBENCH_PARSER_H
#define TRACEBENCH_PARSER_H

#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_parser tb_parser;

/* Chooses ETMv3 or PTM from cfg->protocol.  NULL on bad config or
 * allocation failure. */
TB_API tb_parser *tb_parser_new(const tb_config *cfg);
TB_API void tb_parser_free(tb_parser *p);

/* Parses len bytes; data[0] has stream index `index` (an ETB file offset,
 * or OpenCSD's index when the bytes come from the deformatter).  Calls cb
 * for every packet completed.  Returns the number of packets emitted, or
 * a negative TB_ERR_* (TB_ERR_STOPPED if cb asked to stop). */
TB_API int tb_parser_push(tb_parser *p, const uint8_t *data, size_t len,
                   uint64_t index, tb_packet_cb cb, void *ctx);
/* The same for a span (tb_deformatter_push_spans): byte i has the stream
 * index map gives it.  The packets equal those of pushing each segment
 * on its own with its index.  TB_ERR_INVAL when the map does not cover
 * exactly len bytes. */
TB_API int tb_parser_push_span(tb_parser *p, const uint8_t *data, size_t len,
                        const tb_span_map *map, tb_packet_cb cb, void *ctx);

/* End of stream: reports a packet cut short as TB_PKT_INCOMPLETE and any
 * pending NOTSYNC bytes.  Returns packets emitted or TB_ERR_*. */
TB_API int tb_parser_finish(tb_parser *p, tb_packet_cb cb, void *ctx);

/* Forgets all state, as after construction. */
TB_API void tb_parser_reset(tb_parser *p);

/* The per-protocol parsers behind tb_parser are not part of the API:
 * a tb_config of the protocol chooses one. */

#ifdef __cplusplus
}
#endif

#endif
