/*
 * Packet writer: packets -> trace bytes, for ETMv3 and PTM.
 *
 * Stateful like the trace macrocell it models: branch, I-sync and (PTM)
 * waypoint-update addresses are compressed against the last address
 * *output* (IHI0014Q 7.3.3, IHI0035B), timestamps against
 * the last timestamp output, with the minimum number of bytes.  An A-sync
 * resets the timestamp base, so the first timestamp after it goes out in
 * full.
 */
#ifndef TRACEBENCH_WRITER_H
#define TRACEBENCH_WRITER_H

#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_writer tb_writer;

TB_API tb_writer *tb_writer_new(const tb_config *cfg);
TB_API void tb_writer_free(tb_writer *w);

/* Encodes one packet from its fields into out (cap bytes).  The fields
 * used per kind are those the parser fills: e.g. BRANCH takes addr, isa
 * and the exception fields; ATOM takes seq[]/seq_len (ETMv3: phdr_format
 * names the format and must be able to carry seq; PTM: E/N atoms, one
 * with its cc in cycle-accurate mode).  Returns the byte count, or
 * TB_ERR_INVAL (fields the protocol cannot express), TB_ERR_NOSPACE. */
TB_API int tb_writer_write(tb_writer *w, const tb_packet *pkt, uint8_t *out,
                    size_t cap);

/* Forgets the compression state (next address and timestamp go out in
 * full). */
TB_API void tb_writer_reset(tb_writer *w);

/* The per-protocol writers behind tb_writer are not part of the API: a
 * tb_config of the protocol chooses one. */

#ifdef __cplusplus
}
#endif

#endif
