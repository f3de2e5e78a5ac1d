/* Inside the library: the trace-port structs' size fields (etmv1.h,
 * etmv2.h, etm_port.h), as struct_size.h does tb_config's.  A caller's struct is
 * taken as this build's at creation only (never per sample or packet);
 * the functions that fill a caller's struct give back only its bytes. */
#ifndef TB_PORT_SIZE_H
#define TB_PORT_SIZE_H

#include "struct_size.h"
#include "tracebench/etm_port.h"

/* tb_<T>_take(own, c): the caller's c as this build's struct in *own:
 * own, or NULL when c is NULL or its size is refused; `base_ok` is the
 * further condition on own (the encoder options' base: held by value, so
 * this build's, etmv1.h).  tb_<T>_give(c, src, orig): src (this build's,
 * c as taken is orig) back into the caller's c: 0 or TB_ERR_INVAL (a
 * value set past c's size, c unchanged). */
#define TB_PORT_SIZE_FNS(T, MIN, base_ok)                                                 \
    static inline T *T##_take(T *own, const T *c)                                      \
    {                                                                                     \
        if (!c || tb_struct_take(own, sizeof *own, c, MIN, #T, NULL, 0) < 0 || !(base_ok)) \
            return NULL;                                                                  \
        return own;                                                                       \
    }                                                                                     \
    static inline int T##_give(T *c, const T *src, const T *orig)                         \
    {                                                                                     \
        return tb_struct_give(c, src, orig, sizeof *src, #T, NULL, 0);                    \
    }

TB_PORT_SIZE_FNS(tb_etm_port_config, TB_ETM_PORT_CONFIG_SIZE_MIN, true)

#endif
