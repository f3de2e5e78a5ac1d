/* Inside the library: a memory image region that takes over its bytes. */
#ifndef TB_MEMIMAGE_OWN_H
#define TB_MEMIMAGE_OWN_H

#include "tracebench/snapshot.h"

/* As tb_memimage_add, but the image keeps data (malloc'd, len bytes) as
 * the region's bytes instead of a copy: a snapshot's dumps are read into
 * a buffer once, not read and then copied.  On success the image owns
 * data; on an error (the same as tb_memimage_add's) the caller still
 * does. */
int tb_memimage_adopt(tb_memimage *m, uint32_t addr, uint8_t *data, size_t len);

#endif
