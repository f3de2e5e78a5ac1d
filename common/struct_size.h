/* Inside the library: a caller's public struct that may grow starts with
 * its size, as the caller was built (libipt's pt_config.size).  The
 * library reads only that many bytes, the fields after them as zero, so
 * that a caller built against an older, smaller struct still works; a
 * size below the struct's first version, or absurd, is refused. */
#ifndef TB_STRUCT_SIZE_H
#define TB_STRUCT_SIZE_H

#include <stdio.h>
#include <string.h>

#include "tracebench/types.h"

/* More than this is no struct's size: garbage. */
#define TB_STRUCT_SIZE_MAX 4096

/* Copies the caller's struct src (first member: size_t size) into dst,
 * this build's struct of have bytes: the first min(size, have) bytes, the
 * rest zero, dst's size set to have.  A size below min (the first
 * version's) or above TB_STRUCT_SIZE_MAX: TB_ERR_INVAL, the message in
 * err (may be NULL) naming the struct (what) and its init function. */
static inline int tb_struct_take(void *dst, size_t have, const void *src, size_t min,
                                 const char *what, char *err, size_t errlen)
{
    size_t size;

    memcpy(&size, src, sizeof size);
    if (size < min || size > TB_STRUCT_SIZE_MAX) {
        if (err && errlen)
            snprintf(err, errlen, "%s.size is %zu, not a size this library knows (%zu to "
                     "%zu): call %s_init() before setting its fields", what, size, min,
                     have, what);
        return TB_ERR_INVAL;
    }
    memset(dst, 0, have);
    memcpy(dst, src, size < have ? size : have);
    memcpy(dst, &have, sizeof have);
    return 0;
}

#endif
