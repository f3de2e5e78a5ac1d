/* The per-protocol packet writers behind tb_writer (writer.c).  Inside
 * the library: users choose one with a tb_config of the protocol; the
 * tests call them directly.  Same contracts as tracebench/writer.h. */
#ifndef TB_ENCODER_WRITERS_H
#define TB_ENCODER_WRITERS_H

#include "tracebench/writer.h"

#define TB_WRITER_DECLARE(v)                                                              \
    typedef struct tb_##v##_writer tb_##v##_writer;                                      \
    tb_##v##_writer *tb_##v##_writer_new(const tb_config *cfg);                          \
    void tb_##v##_writer_free(tb_##v##_writer *w);                                       \
    int tb_##v##_writer_write(tb_##v##_writer *w, const tb_packet *pkt, uint8_t *out,    \
                              size_t cap);                                               \
    void tb_##v##_writer_reset(tb_##v##_writer *w)

TB_WRITER_DECLARE(etmv3);
TB_WRITER_DECLARE(ptm);

#endif /* TB_ENCODER_WRITERS_H */
