/*
 * tb_pipeline (pipeline.h): the one decode loop.  The reference for its
 * elements is the decoder's plain packet path, driven here by hand
 * (tb_parser_push -> tb_decoder_packet -> tb_decoder_finish), over every
 * committed vector; the pipeline must give exactly those elements for
 * any chunking, on its fused path and on its packet path (a tap), and
 * from a snapshot (tb_pipeline_run_source).  Then its contracts: bad
 * arguments, a bad source ID, stops, gaps, health, the current packet,
 * parse only, reset.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tb_test.h"
#include "tracebench/pipeline.h"

/* ---- the elements of a decode, as a hash of every field ---- */

typedef struct digest {
    uint64_t hash, n, insns, ends;
    /* packet tap and tb_pipeline_packet() checks */
    uint64_t packets, with_pkt, without_pkt;
    tb_pipeline *pl;
    int stop_after;        /* > 0: the element callback stops there */
    int stop_tap_after;    /* > 0: the tap stops there */
} digest;

static uint64_t fnv(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        h = (h ^ (v & 0xFF)) * 0x100000001B3ull;
    return h;
}

static int on_elem(void *ctx, const tb_element *el)
{
    digest *d = ctx;
    const uint64_t f[] = {
        (uint64_t)el->kind, el->index, el->reason, el->isa, el->start, el->end,
        el->count, el->last_addr, el->last_size, el->last_wp,
        (uint64_t)(uint8_t)el->last_atom, el->atom_bits, el->exc_num, el->pref_return,
        el->cancelled, el->ts, el->has_cc, el->cc, el->context_id, el->vmid, el->ns,
        el->hyp, (uint64_t)(int64_t)el->err,
    };

    if (!d->hash)
        d->hash = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        d->hash = fnv(d->hash, f[i]);
    d->n++;
    if (el->kind == TB_ELEM_INSN_RANGE)
        d->insns += el->count;
    if (el->kind == TB_ELEM_END)
        d->ends++;
    if (d->pl) {
        if (tb_pipeline_packet(d->pl))
            d->with_pkt++;
        else
            d->without_pkt++;
    }
    return d->stop_after > 0 && d->n >= (uint64_t)d->stop_after;
}

static int on_tap(void *ctx, const tb_packet *pkt)
{
    digest *d = ctx;

    (void)pkt;
    d->packets++;
    return d->stop_tap_after > 0 && d->packets >= (uint64_t)d->stop_tap_after;
}

/* ---- a source's bytes, kept as the stream gives them ---- */

typedef struct run_bytes {
    uint64_t index;
    size_t len;
    uint8_t *data;
} run_bytes;

typedef struct source_bytes {
    run_bytes *v;
    size_t n, total;
} source_bytes;

static int keep_bytes(void *ctx, uint64_t index, const uint8_t *data, size_t len)
{
    source_bytes *s = ctx;
    run_bytes *v = realloc(s->v, (s->n + 1) * sizeof *v);

    cr_assert_not_null(v);
    s->v = v;
    v[s->n].index = index;
    v[s->n].len = len;
    v[s->n].data = malloc(len ? len : 1);
    cr_assert_not_null(v[s->n].data);
    memcpy(v[s->n].data, data, len);
    s->n++;
    s->total += len;
    return 0;
}

static void free_bytes(source_bytes *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].data);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* The reference: the parser's packets into the decoder, one at a time. */
typedef struct ref_ctx {
    tb_decoder *dec;
    digest *d;
} ref_ctx;

static int ref_pkt(void *ctx, const tb_packet *pkt)
{
    ref_ctx *r = ctx;

    return tb_decoder_packet(r->dec, pkt, on_elem, r->d) < 0;
}

static void reference(const tb_config *cfg, const tb_memimage *mem, const source_bytes *s,
                      digest *d)
{
    tb_parser *p = tb_parser_new(cfg);
    ref_ctx r = {tb_decoder_new(cfg, mem), d};

    cr_assert(p && r.dec);
    for (size_t i = 0; i < s->n; i++)
        cr_assert_geq(tb_parser_push(p, s->v[i].data, s->v[i].len, s->v[i].index, ref_pkt, &r),
                      0);
    cr_assert_geq(tb_parser_finish(p, ref_pkt, &r), 0);
    cr_assert_geq(tb_decoder_finish(r.dec, on_elem, d), 0);
    tb_decoder_free(r.dec);
    tb_parser_free(p);
}

/* The pipeline over the same bytes, each run cut into pieces of
 * `chunk` bytes (0: whole); tap: the packet path. */
static void piped(const tb_config *cfg, const tb_memimage *mem, const source_bytes *s,
                  size_t chunk, bool tap, digest *d, tb_health *h)
{
    tb_pipeline_opts o = {.size = sizeof o, .on_element = on_elem, .ctx = d,
                          .on_packet = tap ? on_tap : NULL, .health = h};
    tb_pipeline *pl = tb_pipeline_new(cfg, mem, &o);
    int total = 0, r;

    cr_assert_not_null(pl);
    d->pl = pl;
    for (size_t i = 0; i < s->n; i++) {
        for (size_t k = 0; k < s->v[i].len;) {
            size_t n = chunk && s->v[i].len - k > chunk ? chunk : s->v[i].len - k;

            r = tb_pipeline_push(pl, s->v[i].data + k, n, s->v[i].index + k);
            cr_assert_geq(r, 0, "push: %d", r);
            total += r;
            k += n;
        }
    }
    r = tb_pipeline_finish(pl);
    cr_assert_geq(r, 0);
    total += r;
    /* The counts the functions return are the elements emitted. */
    cr_expect_eq((uint64_t)total, d->n);
    cr_expect_eq(tb_pipeline_bytes(pl), s->total);
    d->pl = NULL;
    tb_pipeline_free(pl);
}

/* ---- the committed vectors ---- */


static bool same(const digest *a, const digest *b)
{
    return a->hash == b->hash && a->n == b->n;
}

Test(pipeline, every_vector_every_chunking_both_paths)
{
    static const size_t chunks[] = {0, 1, 3, 64};
    char **names, dir[1400], err[512];
    size_t n = tb_test_list_vectors(&names), sources = 0;
    uint64_t insns = 0;

    cr_assert_gt(n, 100, "the committed vectors are missing");
    for (size_t i = 0; i < n; i++) {
        tb_snapshot snap;
        const tb_snap_source *src[8];
        int ns;

        snprintf(dir, sizeof dir, "%s/vectors/generated/%s", TB_SOURCE_DIR, names[i]);
        cr_assert_eq(tb_snapshot_load(&snap, dir, err, sizeof err), 0, "%s: %s", dir, err);
        ns = tb_stream_select(&snap, TB_STREAM_ALL, src, 8, err, sizeof err);
        cr_assert_gt(ns, 0, "%s: %s", dir, err);
        for (int k = 0; k < ns; k++) {
            tb_config cfg;
            tb_memimage *mem = NULL;
            source_bytes sb = {0};
            digest ref = {0}, snapd = {0};
            tb_pipeline *pl;
            tb_pipeline_opts o = {.size = sizeof o, .on_element = on_elem, .ctx = &snapd};

            cr_assert_geq(tb_snapshot_source_config(&snap, src[k], &cfg, err, sizeof err), 0);
            cr_assert_geq(tb_snapshot_source_memory(&snap, src[k], &mem, err, sizeof err), 0, "%s", err);
            cr_assert_eq(tb_stream_source(&snap, src[k], NULL, keep_bytes, &sb, err,
                                          sizeof err), 0, "%s: %s", dir, err);
            reference(&cfg, mem, &sb, &ref);
            cr_assert_gt(ref.n, 0);
            for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
                for (int tap = 0; tap < 2; tap++) {
                    digest d = {0};

                    piped(&cfg, mem, &sb, chunks[c], tap, &d, NULL);
                    cr_expect(same(&d, &ref),
                              "%s source %s, chunk %zu, %s path: %llu elements, reference %llu",
                              names[i], src[k]->name, chunks[c], tap ? "packet" : "fused",
                              (unsigned long long)d.n, (unsigned long long)ref.n);
                }
            }
            /* From the snapshot itself (spans, as decode reads it). */
            pl = tb_pipeline_new(&cfg, mem, &o);
            cr_assert_not_null(pl);
            cr_expect_eq(tb_pipeline_run_source(pl, &snap, src[k], err, sizeof err), 0, "%s",
                         err);
            cr_expect(same(&snapd, &ref), "%s source %s: run_source differs", names[i],
                      src[k]->name);
            tb_pipeline_free(pl);
            insns += ref.insns;
            sources++;
            free_bytes(&sb);
            tb_memimage_free(mem);
        }
        tb_snapshot_fini(&snap);
    }
    tb_test_free_names(names, n);
    cr_log_info("pipeline: %zu sources, %llu instructions, 4 chunkings x 2 paths", sources,
                (unsigned long long)insns);
    cr_expect_gt(insns, 100000);
}

/* ---- contracts, on one small vector ---- */

typedef struct fixture {
    tb_snapshot snap;
    const tb_snap_source *src;
    tb_config cfg;
    tb_memimage *mem;
    source_bytes sb;
} fixture;

static void fixture_open(fixture *f, const char *name)
{
    char dir[1024], err[512];

    memset(f, 0, sizeof *f);
    snprintf(dir, sizeof dir, "%s/vectors/generated/%s", TB_SOURCE_DIR, name);
    cr_assert_eq(tb_snapshot_load(&f->snap, dir, err, sizeof err), 0, "%s: %s", dir, err);
    f->src = tb_stream_find_source(&f->snap, -1, err, sizeof err);
    cr_assert_not_null(f->src, "%s", err);
    cr_assert_geq(tb_snapshot_source_config(&f->snap, f->src, &f->cfg, err, sizeof err), 0);
    cr_assert_geq(tb_snapshot_source_memory(&f->snap, f->src, &f->mem, err, sizeof err), 0,
                  "%s", err);
    cr_assert_eq(tb_stream_source(&f->snap, f->src, NULL, keep_bytes, &f->sb, err,
                                  sizeof err), 0);
}

static void fixture_close(fixture *f)
{
    free_bytes(&f->sb);
    tb_memimage_free(f->mem);
    tb_snapshot_fini(&f->snap);
}

/* A raw ETMv3 trace of 1949 bytes, an A-sync and I-sync every 64. */
#define SMALL "m_rtos-etmv3-bb-sync64"

Test(pipeline, refuses_bad_arguments)
{
    fixture f;
    digest d = {0};
    tb_pipeline_opts o = {.size = sizeof o, .on_element = on_elem, .ctx = &d};
    tb_pipeline_opts small = o, no_cb = o;
    tb_config bad;
    tb_pipeline *pl;

    fixture_open(&f, SMALL);
    small.size = sizeof small - 1;
    no_cb.on_element = NULL;
    bad = f.cfg;
    bad.protocol = (tb_protocol)99;
    cr_expect_null(tb_pipeline_new(NULL, f.mem, &o));
    cr_expect_null(tb_pipeline_new(&f.cfg, f.mem, NULL));
    cr_expect_null(tb_pipeline_new(&f.cfg, f.mem, &small), "an opts of an older size");
    cr_expect_null(tb_pipeline_new(&f.cfg, f.mem, &no_cb), "a decoder with no callback");
    cr_expect_null(tb_pipeline_new(&bad, f.mem, &o), "an unknown protocol");
    pl = tb_pipeline_new(&f.cfg, f.mem, &o);
    cr_assert_not_null(pl);
    cr_expect_eq(tb_pipeline_push(pl, NULL, 4, 0), TB_ERR_INVAL);
    cr_expect_eq(tb_pipeline_push_span(pl, f.sb.v[0].data, 4, NULL), TB_ERR_INVAL);
    cr_expect_eq(tb_pipeline_push(NULL, f.sb.v[0].data, 4, 0), TB_ERR_INVAL);
    cr_expect_eq(tb_pipeline_finish(NULL), TB_ERR_INVAL);
    cr_expect_eq(tb_pipeline_run_source(pl, NULL, f.src, NULL, 0), TB_ERR_INVAL);
    cr_expect_eq(tb_pipeline_run_source(pl, &f.snap, f.src, NULL, 0), TB_ERR_INVAL,
                 "no room for the reason");
    cr_expect_null(tb_pipeline_packet(NULL));
    cr_expect_eq(tb_pipeline_bytes(NULL), 0);
    tb_pipeline_free(pl);
    tb_pipeline_free(NULL);
    fixture_close(&f);
}

/* A trace ID the snapshot does not have: an error naming the IDs there
 * are, and no element. */
Test(pipeline, bad_source_id_is_an_error)
{
    char dir[1024], err[512] = "";
    digest d = {0};
    int r;

    snprintf(dir, sizeof dir, "%s/vectors/generated/%s", TB_SOURCE_DIR, SMALL);
    r = tb_decode_snapshot(dir, 0x55, on_elem, &d, err, sizeof err);
    cr_expect_eq(r, TB_ERR_NOT_FOUND, "%d: %s", r, err);
    cr_expect_neq(err[0], 0, "no reason given");
    cr_expect_eq(d.n, 0);
    r = tb_decode_snapshot(dir, 0x200, on_elem, &d, err, sizeof err);
    cr_expect_lt(r, 0, "an ID out of range");
    /* The only source, as -1 asks: the decode works. */
    cr_expect_eq(tb_decode_snapshot(dir, -1, on_elem, &d, err, sizeof err), 0, "%s", err);
    cr_expect_gt(d.n, 0);
}

/* A callback's stop ends the decode with TB_ERR_STOPPED, on both paths
 * and from the tap, through the stream callbacks too. */
Test(pipeline, callbacks_stop_the_decode)
{
    fixture f;

    fixture_open(&f, SMALL);
    for (int tap = 0; tap < 3; tap++) {
        digest d = {.stop_after = tap < 2 ? 5 : 0, .stop_tap_after = tap == 2 ? 3 : 0};
        tb_pipeline_opts o = {.size = sizeof o, .on_element = on_elem, .ctx = &d,
                              .on_packet = tap ? on_tap : NULL};
        tb_pipeline *pl = tb_pipeline_new(&f.cfg, f.mem, &o);
        char err[256] = "";
        int r;

        cr_assert_not_null(pl);
        r = tb_pipeline_run_source(pl, &f.snap, f.src, err, sizeof err);
        cr_expect_eq(r, TB_ERR_STOPPED, "case %d: %d", tap, r);
        if (tap < 2)
            cr_expect_eq(d.n, 5, "case %d: %llu elements after the stop", tap,
                         (unsigned long long)d.n);
        else
            cr_expect_eq(d.packets, 3);
        cr_expect_eq(d.ends, 0, "finished after a stop");
        tb_pipeline_free(pl);
    }
    fixture_close(&f);
}

/* The packet path names the packet of each element it decodes; finish's
 * elements (END) and the fused path's have none. */
Test(pipeline, current_packet)
{
    fixture f;
    digest fused = {0}, tapped = {0};

    fixture_open(&f, SMALL);
    piped(&f.cfg, f.mem, &f.sb, 0, false, &fused, NULL);
    piped(&f.cfg, f.mem, &f.sb, 0, true, &tapped, NULL);
    cr_expect_eq(fused.with_pkt, 0);
    cr_expect_eq(fused.without_pkt, fused.n);
    cr_expect_gt(tapped.with_pkt, 0);
    cr_expect_geq(tapped.without_pkt, 1, "END comes from finish");
    cr_expect_eq(tapped.with_pkt + tapped.without_pkt, tapped.n);
    cr_expect_gt(tapped.packets, 0);
    fixture_close(&f);
}

/* Health: the bytes, packets and elements, the same on both paths. */
Test(pipeline, health_counts)
{
    fixture f;
    tb_health h[2];

    fixture_open(&f, SMALL);
    for (int tap = 0; tap < 2; tap++) {
        digest d = {0};

        tb_health_init(&h[tap]);
        piped(&f.cfg, f.mem, &f.sb, 7, tap, &d, &h[tap]);
        cr_expect_eq(h[tap].bytes, f.sb.total);
        cr_expect_eq(h[tap].elements, d.n);
        cr_expect_eq(h[tap].insns, d.insns);
        cr_expect_gt(h[tap].asyncs, 0, "the decoder's packets are counted");
    }
    /* The fused path hands the decoder no atoms, branches or I-syncs
     * (health.h): what tells a loss is counted on both. */
    cr_expect_leq(h[0].packets, h[1].packets);
    cr_expect_eq(h[0].asyncs, h[1].asyncs);
    cr_expect_eq(h[0].bad_packets, h[1].bad_packets);
    fixture_close(&f);
}

/* Gaps: with opts.gaps a delivery of length 0 resynchronises (a NO_SYNC
 * for the lost bytes, err TB_ERR_BAD_FRAME); without, it is passed
 * over.  finish_stream finishes after TB_ERR_BAD_FRAME only with gaps. */
static int count_bad_frame(void *ctx, const tb_element *el)
{
    int *n = ctx;

    if (el->kind == TB_ELEM_NO_SYNC && el->err == TB_ERR_BAD_FRAME)
        (*n)++;
    if (el->kind == TB_ELEM_END)
        *n += 1000;
    return 0;
}

Test(pipeline, gaps)
{
    fixture f;

    fixture_open(&f, SMALL);
    for (int gaps = 0; gaps < 2; gaps++) {
        int nsync = 0;
        tb_pipeline_opts o = {.size = sizeof o, .on_element = count_bad_frame,
                              .ctx = &nsync, .gaps = gaps};
        tb_pipeline *pl = tb_pipeline_new(&f.cfg, f.mem, &o);
        size_t half = f.sb.v[0].len / 2;
        uint64_t idx[1] = {f.sb.v[0].index + half};
        size_t end[1] = {0};
        tb_span_map gap = {1, end, idx};

        cr_assert_not_null(pl);
        cr_assert_gt(half, 16);
        cr_expect_eq(tb_pipeline_on_bytes(pl, f.sb.v[0].index, f.sb.v[0].data, half), 0);
        cr_expect_eq(tb_pipeline_on_span(pl, NULL, 0, &gap), 0);
        cr_expect_eq(nsync, gaps ? 1 : 0, "gaps %d: %d NO_SYNCs", gaps, nsync);
        cr_expect_eq(tb_pipeline_bytes(pl), half);
        cr_expect_eq(tb_pipeline_on_bytes(pl, f.sb.v[0].index + half, f.sb.v[0].data + half,
                                          f.sb.v[0].len - half), 0);
        cr_expect_eq(tb_pipeline_finish_stream(pl, TB_ERR_BAD_FRAME), TB_ERR_BAD_FRAME);
        cr_expect_eq(nsync >= 1000, gaps, "gaps %d: finished %d", gaps, nsync >= 1000);
        tb_pipeline_free(pl);
    }
    fixture_close(&f);
}

/* Parse only (no image): the packets to the tap, as the parser gives
 * them; reset starts again from nothing. */
static int count_pkt(void *ctx, const tb_packet *pkt)
{
    (void)pkt;
    ++*(uint64_t *)ctx;
    return 0;
}

Test(pipeline, parse_only_and_reset)
{
    fixture f;
    uint64_t direct = 0, piped_n = 0;
    tb_parser *p;
    tb_pipeline *pl;
    tb_pipeline_opts o = {.size = sizeof o, .ctx = &piped_n, .on_packet = count_pkt};
    digest a = {0}, b = {0};
    char err[256] = "";
    tb_pipeline_opts eo = {.size = sizeof eo, .on_element = on_elem, .ctx = &a};

    fixture_open(&f, SMALL);
    p = tb_parser_new(&f.cfg);
    cr_assert_not_null(p);
    for (size_t i = 0; i < f.sb.n; i++)
        tb_parser_push(p, f.sb.v[i].data, f.sb.v[i].len, f.sb.v[i].index, count_pkt, &direct);
    tb_parser_finish(p, count_pkt, &direct);
    tb_parser_free(p);
    pl = tb_pipeline_new(&f.cfg, NULL, &o);
    cr_assert_not_null(pl);
    cr_expect_eq(tb_pipeline_run_source(pl, &f.snap, f.src, err, sizeof err), 0);
    cr_expect_eq(piped_n, direct);
    cr_expect_gt(direct, 100);
    tb_pipeline_free(pl);

    /* Reset: a second pass over the same bytes, the same elements. */
    pl = tb_pipeline_new(&f.cfg, f.mem, &eo);
    cr_assert_not_null(pl);
    /* Half a pass first, so that reset has state to forget. */
    tb_pipeline_push(pl, f.sb.v[0].data, f.sb.v[0].len / 2, f.sb.v[0].index);
    tb_pipeline_reset(pl);
    cr_expect_eq(tb_pipeline_bytes(pl), 0);
    a = (digest){0};
    cr_expect_eq(tb_pipeline_run_source(pl, &f.snap, f.src, err, sizeof err), 0);
    tb_pipeline_free(pl);
    pl = tb_pipeline_new(&f.cfg, f.mem, &(tb_pipeline_opts){.size = sizeof eo,
                                                           .on_element = on_elem, .ctx = &b});
    cr_expect_eq(tb_pipeline_run_source(pl, &f.snap, f.src, err, sizeof err), 0);
    cr_expect(same(&a, &b), "after a reset: %llu elements, fresh: %llu",
              (unsigned long long)a.n, (unsigned long long)b.n);
    tb_pipeline_free(pl);
    fixture_close(&f);
}
