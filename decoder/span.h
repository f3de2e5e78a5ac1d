/*
 * Stream indices inside a span (tb_span_map, types.h), for the parsers
 * and the fused decoders (private to decoder/).  A cursor answers
 * "index of span byte pos" in O(1) amortised for positions that never go
 * backwards, which is how both parsers walk their input.
 */
#ifndef TB_SPAN_H
#define TB_SPAN_H

#include <stdbool.h>
#include <stdint.h>

#include "tracebench/types.h"

typedef struct tb_span_cur {
    const size_t *end;
    const uint64_t *index;
    size_t s;          /* segment of the last position asked */
    size_t seg_end;    /* its end */
    uint64_t base;     /* index of byte pos in segment s: base + pos */
} tb_span_cur;

/* A map is usable when its segments cover exactly len bytes in order.
 * Checked on every span, so without a branch or a carried value per
 * segment (with them it was 2% of a TC2 decode): each end against the
 * one before, the verdicts or'ed. */
static inline bool tb_span_map_ok(const tb_span_map *m, size_t len)
{
    bool bad;

    if (!m || !m->n || !m->end || !m->index)
        return false;
    bad = m->end[0] == 0;
    for (size_t s = 1; s < m->n; s++)
        bad |= m->end[s] <= m->end[s - 1];
    return !bad && m->end[m->n - 1] == len;
}

static inline void tb_span_cur_init(tb_span_cur *c, const tb_span_map *m)
{
    c->end = m->end;
    c->index = m->index;
    c->s = 0;
    c->seg_end = m->end[0];
    c->base = m->index[0];
}

/* One segment without end: byte pos has index index + pos. */
static inline void tb_span_cur_flat(tb_span_cur *c, uint64_t index)
{
    c->end = NULL;
    c->index = NULL;
    c->s = 0;
    c->seg_end = SIZE_MAX;
    c->base = index;
}

/* Index of span byte pos (pos below the span length, never below a
 * position asked before). */
static inline uint64_t tb_span_at(tb_span_cur *c, size_t pos)
{
    while (pos >= c->seg_end) {
        const size_t start = c->seg_end;

        c->s++;
        c->seg_end = c->end[c->s];
        c->base = c->index[c->s] - start; /* modular: base + pos is exact */
    }
    return c->base + pos;
}

#endif
