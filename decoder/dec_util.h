/* Helpers shared by the two decompressors (private). */
#ifndef TB_DEC_UTIL_H
#define TB_DEC_UTIL_H

#include <string.h>

#include "tracebench/decoder.h"

/* For the few hot functions whose call costs more than their code: the
 * walker called once per waypoint spills and reloads the decoder state
 * around the call. */
#if defined(__GNUC__)
#define TB_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define TB_ALWAYS_INLINE inline
#endif

/* Where elements go: counts them and latches a callback's stop. */
typedef struct tb_emit {
    tb_element_cb cb;
    void *ctx;
    int n;
    int err;
} tb_emit;

static inline void tb_emit_init(tb_emit *e, tb_element_cb cb, void *ctx)
{
    e->cb = cb;
    e->ctx = ctx;
    e->n = 0;
    e->err = 0;
}

static inline void tb_emit_el(tb_emit *e, const tb_element *el)
{
    if (e->err)
        return;
    if (e->cb && e->cb(e->ctx, el))
        e->err = TB_ERR_STOPPED;
    else
        e->n++;
}

static inline int tb_emit_result(const tb_emit *e)
{
    return e->err ? e->err : e->n;
}

/* The result of a fused entry that took k packets (fused.h): k, or the
 * stop; *nel gets the elements emitted added. */
static inline int tb_emit_took(const tb_emit *e, int k, int *nel)
{
    *nel += e->n;
    return e->err ? e->err : k;
}

static inline void tb_elem_init(tb_element *el, tb_elem_kind kind, uint64_t index)
{
    /* A copy of a zero element: GCC makes a memset of this size a slow
     * `rep stos`, half the cost of emitting a range. */
    static const tb_element zero;

    *el = zero;
    el->kind = kind;
    el->index = index;
}

/* Instruction-address bound for one walk with no waypoint: far more
 * straight-line code than any program has, so hitting it means the
 * trace and the image disagree (a walk through zero-filled memory). */
#define TB_WALK_MAX_INSNS (1u << 20)

#define TB_RSTACK_DEPTH 16

#endif
