/*
 * Where a divergence is in the trace: the packet that carries the
 * expected instruction at the divergence's line.
 *
 * The expected decode has no packet indices, and a decoder's range can
 * span several packets (an ETMv3 range runs across P-headers up to its
 * waypoint), so the packet is found by decoding prefixes of the source's
 * packets with tracebench's decoder: the shortest prefix whose decode
 * (finished, so that nothing is held back) shows the first K expected
 * instructions, equal to them, ends with the packet that made the K-th
 * one known.  A binary search over the prefixes: O(n log n) packets
 * decoded.  Only done for a vector that failed.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "tracebench/decoder.h"
#include "tracebench/parser.h"
#include "tracebench/snapshot.h"
#include "tracebench/stream.h"

typedef struct pkts {
    tb_packet *v;
    size_t n, cap;
    int err;
} pkts;

static int keep_pkt(void *ctx, const tb_packet *p)
{
    pkts *s = ctx;

    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 1024;
        tb_packet *nv = realloc(s->v, nc * sizeof *nv);

        if (!nv) {
            s->err = TB_ERR_NOMEM;
            return 1;
        }
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = *p;
    return 0;
}

typedef struct feed {
    tb_parser *p;
    pkts *s;
} feed;

static int on_bytes(void *ctx, uint64_t index, const uint8_t *data, size_t len)
{
    feed *f = ctx;

    return tb_parser_push(f->p, data, len, index, keep_pkt, f->s) < 0;
}

/* The expected instruction lines up to line `upto` (0: all). */
typedef struct expect {
    tb_conform_item *v;
    size_t n;
} expect;

static int read_expected(const char *path, uint64_t upto, expect *e)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t cap = 0, ecap = 0;
    uint64_t line = 0;

    memset(e, 0, sizeof *e);
    if (!f)
        return TB_ERR_IO;
    while (getline(&buf, &cap, f) >= 0 && (!upto || line < upto)) {
        tb_conform_item it;

        line++;
        tb_conform_parse_addr(buf, false, &it);
        if (it.kind != TB_CI_INSN && it.kind != TB_CI_NACC && it.kind != TB_CI_UNKNOWN)
            continue;
        if (e->n == ecap) {
            size_t nc = ecap ? ecap * 2 : 1024;
            tb_conform_item *nv = realloc(e->v, nc * sizeof *nv);

            if (!nv) {
                free(buf);
                fclose(f);
                return TB_ERR_NOMEM;
            }
            e->v = nv;
            ecap = nc;
        }
        e->v[e->n++] = it;
    }
    free(buf);
    fclose(f);
    return 0;
}

typedef struct shown {
    const tb_memimage *mem;
    const expect *e;
    size_t want;               /* K */
    size_t n;                  /* instructions shown so far */
    bool bad;                  /* one differed from the expected */
    uint64_t bad_line_k;       /* its ordinal */
    uint32_t addrs[4096];
} shown;

static void take(shown *s, tb_conform_item_kind kind, uint32_t addr, const char *isa)
{
    const tb_conform_item *x;

    if (s->bad || s->n >= s->want)
        return;
    x = &s->e->v[s->n];
    if (x->kind != kind || (kind != TB_CI_UNKNOWN && x->addr != addr) ||
        (kind == TB_CI_INSN && strcmp(x->isa, isa))) {
        s->bad = true;
        s->bad_line_k = s->n;
        return;
    }
    s->n++;
}

static int on_elem(void *ctx, const tb_element *el)
{
    shown *s = ctx;
    char isa[8];
    int n;

    if (el->kind == TB_ELEM_ADDR_NACC) {
        take(s, TB_CI_NACC, el->start, "");
        return 0;
    }
    if (el->kind == TB_ELEM_ADDR_UNKNOWN) {
        take(s, TB_CI_UNKNOWN, 0, "");
        return 0;
    }
    if (el->kind != TB_ELEM_INSN_RANGE || s->bad || s->n >= s->want)
        return 0;
    tb_conform_isa_norm(tb_isa_name((tb_isa)el->isa), strlen(tb_isa_name((tb_isa)el->isa)), isa);
    /* (No vector has a range near 4096 instructions: one ends at each
     * waypoint.) */
    n = el->count <= sizeof s->addrs / sizeof s->addrs[0]
            ? tb_range_addrs(s->mem, el, s->addrs, sizeof s->addrs / sizeof s->addrs[0])
            : -1;
    if (n <= 0) {
        s->bad = true;
        s->bad_line_k = s->n;
        return 0;
    }
    for (int k = 0; k < n && !s->bad && s->n < s->want; k++)
        take(s, TB_CI_INSN, s->addrs[k], isa);
    return 0;
}

/* Does the decode of the first m packets show the first K expected
 * instructions? */
static bool shows(const tb_config *cfg, const tb_memimage *mem, const pkts *s, size_t m,
                  const expect *e, size_t k, shown *st)
{
    tb_decoder *d = tb_decoder_new(cfg, mem);

    memset(st, 0, offsetof(shown, addrs));
    st->mem = mem;
    st->e = e;
    st->want = k;
    if (!d) {
        st->bad = true;
        return false;
    }
    for (size_t i = 0; i < m && !st->bad && st->n < k; i++)
        tb_decoder_packet(d, &s->v[i], on_elem, st);
    if (!st->bad && st->n < k)
        tb_decoder_finish(d, on_elem, st);
    tb_decoder_free(d);
    return !st->bad && st->n >= k;
}

void tb_conform_locate(const tb_conform_cov *c, const tb_conform_unit *u,
                       tb_conform_divergence *d)
{
    tb_snapshot snap;
    const tb_snap_source *src;
    tb_config cfg;
    tb_memimage *mem = NULL;
    pkts s = {0};
    expect e;
    feed f;
    shown *st = NULL;
    char err[256] = "";
    size_t lo, hi;

    d->located = false;
    if (read_expected(u->expect, d->exp_line, &e) < 0 || !e.n) {
        snprintf(d->locate_note, sizeof d->locate_note, "%s",
                 e.n ? "the expected decode cannot be read"
                     : "no expected instruction up to that line");
        free(e.v);
        return;
    }
    if (tb_snapshot_load(&snap, u->dir, err, sizeof err) < 0) {
        snprintf(d->locate_note, sizeof d->locate_note, "%.120s", err);
        free(e.v);
        return;
    }
    src = tb_stream_find_source(&snap, u->n_sources > 1 ? u->trace_id : -1, err, sizeof err);
    if (!src || tb_snapshot_source_config(&snap, src, &cfg, err, sizeof err) < 0 ||
        tb_snapshot_source_memory(&snap, src, &mem, err, sizeof err) < 0 ||
        !(f.p = tb_parser_new(&cfg))) {
        snprintf(d->locate_note, sizeof d->locate_note, "tracebench cannot decode it: %.120s",
                 err[0] ? err : "out of memory");
        goto out;
    }
    f.s = &s;
    tb_stream_source(&snap, src, NULL, on_bytes, &f, err, sizeof err);
    tb_parser_finish(f.p, keep_pkt, &s);
    tb_parser_free(f.p);
    st = malloc(sizeof *st);
    if (s.err || !st) {
        snprintf(d->locate_note, sizeof d->locate_note, "out of memory");
        goto out;
    }
    /* tracebench's own decode must agree up to there. */
    if (!shows(&cfg, mem, &s, s.n, &e, e.n, st)) {
        if (st->bad)
            snprintf(d->locate_note, sizeof d->locate_note,
                     "tracebench's decode differs from the expected decode at its instruction "
                     "%zu", (size_t)st->bad_line_k + 1);
        else
            snprintf(d->locate_note, sizeof d->locate_note,
                     "tracebench's decode shows %zu of the %zu expected instructions", st->n,
                     e.n);
        goto out;
    }
    /* The shortest prefix that shows the K-th. */
    lo = 1;
    hi = s.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (shows(&cfg, mem, &s, mid, &e, e.n, st))
            hi = mid;
        else
            lo = mid + 1;
    }
    d->located = true;
    d->packet_index = s.v[lo - 1].index;
    snprintf(d->packet_kind, sizeof d->packet_kind, "%s", tb_pkt_kind_name(s.v[lo - 1].kind));
    tb_conform_cov_packet(c, &cfg, &s.v[lo - 1], d);
out:
    free(st);
    free(s.v);
    free(e.v);
    tb_memimage_free(mem);
    tb_snapshot_fini(&snap);
}
