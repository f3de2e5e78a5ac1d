/* Inside the library: a caller's public struct that may grow starts with
 * its size, as the caller was built (libipt's pt_config.size).  The
 * library reads only that many bytes, the fields after them as zero, so
 * that a caller built against an older, smaller struct still works; a
 * size below the struct's first version, or absurd, is refused. */
#ifndef TB_STRUCT_SIZE_H
#define TB_STRUCT_SIZE_H

#include <stdio.h>
#include <stdlib.h>
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

/* The other way, for a function that changes a caller's struct: dst (the
 * caller's, first member its size, taken into src with tb_struct_take and
 * changed there) gets back the first min(its size, have) bytes of src, its
 * size kept.  A change past the caller's size (src differs from orig, the
 * struct as taken, there) is one its struct has no room for: TB_ERR_INVAL
 * with the message in err, dst unchanged.  orig NULL: what lies past the
 * caller's size is dropped (defaults the older struct has no field for). */
static inline int tb_struct_give(void *dst, const void *src, const void *orig, size_t have,
                                 const char *what, char *err, size_t errlen)
{
    size_t size;

    memcpy(&size, dst, sizeof size);
    if (orig && size < have && memcmp((const char *)src + size, (const char *)orig + size,
                              have - size) != 0) {
        if (err && errlen)
            snprintf(err, errlen, "%s.size is %zu: a setting past it needs this build's "
                     "struct (%zu bytes); rebuild against this library's header", what,
                     size, have);
        return TB_ERR_INVAL;
    }
    memcpy((char *)dst + sizeof size, (const char *)src + sizeof size,
           (size < have ? size : have) - sizeof size);
    return 0;
}

/* A caller's tb_config as this build's, in *own: own, or NULL when cfg
 * is NULL or its size is refused (the reason in err, may be NULL).  For
 * the functions that take a configuration; they copy what they keep, so
 * own may be a local.  Never per packet: only at creation. */
static inline const tb_config *tb_config_take(tb_config *own, const tb_config *cfg,
                                              char *err, size_t errlen)
{
    if (!cfg || tb_struct_take(own, sizeof *own, cfg, TB_CONFIG_SIZE_MIN, "tb_config", err,
                               errlen) < 0)
        return NULL;
    return own;
}

/* A writer's or parser's allocation, for protocol: the caller's
 * configuration taken as this build's into *own (*cfg then points at
 * it), refused (NULL) when it is of another protocol or names a context
 * ID size no packet carries (0, 1, 2 or 4 bytes: IHI0014Q 7.3.6, IHI0035B
 * 4.5.1); else size zeroed bytes (calloc: the caller frees them). */
static inline void *tb_config_alloc(size_t size, const tb_config **cfg, tb_config *own,
                                    tb_protocol protocol)
{
    const tb_config *c = *cfg = tb_config_take(own, *cfg, NULL, 0);

    if (!c || c->protocol != protocol)
        return NULL;
    if (c->ctxid_bytes != 0 && c->ctxid_bytes != 1 && c->ctxid_bytes != 2 &&
        c->ctxid_bytes != 4)
        return NULL;
    return calloc(1, size);
}

#endif
