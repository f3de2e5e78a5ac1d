/* tb_decoder: one front for the per-protocol decompressors, the range
 * walker, and the snapshot -> elements convenience. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "fused.h"
#include "tracebench/classify.h"
#include "tracebench/decoder.h"
#include "tracebench/etmv2.h"
#include "tracebench/health.h"
#include "tracebench/parser.h"
#include "tracebench/pipeline.h"
#include "tracebench/stream.h"
#include "../common/struct_size.h"

struct tb_decoder {
    const tb_decoder_ops *ops;
    void *be;           /* the protocol's decoder */
    const tb_memimage *mem;
    tb_health *health;  /* tb_decoder_set_health: the packets go there too */
};

/* Every protocol's decoder (backend.h). */
static const tb_decoder_ops *const decoders[] = {&tb_etmv3_decoder_ops, &tb_ptm_decoder_ops,
                                                 &tb_etmv1_decoder_ops, &tb_etmv2_decoder_ops};

tb_decoder *tb_decoder_new(const tb_config *cfg, const tb_memimage *mem)
{
    const tb_decoder_ops *ops = NULL;
    tb_decoder *d;
    tb_config own; /* the caller's, as this build's (struct_size.h) */

    cfg = tb_config_take(&own, cfg, NULL, 0);
    for (size_t i = 0; cfg && i < sizeof decoders / sizeof decoders[0]; i++)
        if (decoders[i]->protocol == cfg->protocol)
            ops = decoders[i];
    if (!ops || !mem)
        return NULL;
    d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->ops = ops;
    d->mem = mem;
    d->be = ops->make(cfg, mem);
    if (!d->be) {
        free(d);
        return NULL;
    }
    return d;
}

void tb_decoder_set_health(tb_decoder *d, tb_health *h)
{
    if (d)
        d->health = h;
}

int tb_decoder_set_cycle_ranges(tb_decoder *d, bool on)
{
    if (!d)
        return TB_ERR_INVAL;
    if (d->ops->cycle_ranges)
        d->ops->cycle_ranges(d->be, on);
    else if (!d->ops->cycles_per_range && on)
        return TB_ERR_UNSUPPORTED;
    return 0;
}

void tb_decoder_free(tb_decoder *d)
{
    if (!d)
        return;
    d->ops->destroy(d->be);
    free(d);
}

int tb_decoder_packet(tb_decoder *d, const tb_packet *pkt, tb_element_cb cb,
                      void *ctx)
{
    if (!d || !pkt)
        return TB_ERR_INVAL;
    /* Before the decoder, so that its NO_SYNC for a bad packet finds
     * the packet counted (tb_health_element). */
    if (d->health)
        tb_health_packet(d->health, pkt);
    return d->ops->packet(d->be, pkt, cb, ctx);
}

int tb_decoder_finish(tb_decoder *d, tb_element_cb cb, void *ctx)
{
    if (!d)
        return TB_ERR_INVAL;
    return d->ops->finish(d->be, cb, ctx);
}

/* ---- fused parse + decode ---- */

struct fused {
    tb_decoder *d;
    tb_element_cb cb;
    void *ctx;
    int nel;
    int err;
};

static int fused_pkt(void *ctx, const tb_packet *pkt)
{
    struct fused *f = ctx;
    int n = tb_decoder_packet(f->d, pkt, f->cb, f->ctx);

    if (n < 0) {
        f->err = n;
        return 1;
    }
    f->nel += n;
    return 0;
}

static int push_fused(tb_decoder *d, tb_parser *p, const uint8_t *data,
                      size_t len, tb_span_cur *cur, tb_element_cb cb, void *ctx)
{
    struct fused f = {d, cb, ctx, 0, 0};
    int r = d->ops->push_fused(tb_parser_backend(p, d->ops->protocol), d->be, data, len, cur,
                               fused_pkt, &f, cb, ctx, &f.nel);

    if (f.err)
        return f.err;
    return r < 0 ? r : f.nel;
}

/* No fused path (ETMv1, ETMv2): every packet through tb_decoder_packet (map
 * NULL: data[0] at index). */
static int push_packets(tb_decoder *d, tb_parser *p, const uint8_t *data, size_t len,
                        uint64_t index, const tb_span_map *map, tb_element_cb cb,
                        void *ctx)
{
    struct fused f = {d, cb, ctx, 0, 0};
    int r = map ? tb_parser_push_span(p, data, len, map, fused_pkt, &f)
                : tb_parser_push(p, data, len, index, fused_pkt, &f);

    if (f.err)
        return f.err;
    return r < 0 ? r : f.nel;
}

static bool same_protocol(const tb_decoder *d, const tb_parser *p)
{
    return tb_parser_protocol(p) == d->ops->protocol;
}

int tb_decoder_push(tb_decoder *d, tb_parser *p, const uint8_t *data, size_t len,
                    uint64_t index, tb_element_cb cb, void *ctx)
{
    tb_span_cur cur;

    if (!d || !p || (!data && len) || !same_protocol(d, p))
        return TB_ERR_INVAL;
    if (!d->ops->push_fused)
        return push_packets(d, p, data, len, index, NULL, cb, ctx);
    tb_span_cur_flat(&cur, index);
    return push_fused(d, p, data, len, &cur, cb, ctx);
}

int tb_decoder_push_span(tb_decoder *d, tb_parser *p, const uint8_t *data,
                         size_t len, const tb_span_map *map, tb_element_cb cb,
                         void *ctx)
{
    tb_span_cur cur;

    if (!d || !p || (!data && len) || !same_protocol(d, p) ||
        (len && !tb_span_map_ok(map, len)))
        return TB_ERR_INVAL;
    if (!len)
        return 0;
    if (!d->ops->push_fused)
        return push_packets(d, p, data, len, 0, map, cb, ctx);
    tb_span_cur_init(&cur, map);
    return push_fused(d, p, data, len, &cur, cb, ctx);
}

int tb_decoder_push_finish(tb_decoder *d, tb_parser *p, tb_element_cb cb, void *ctx)
{
    struct fused f = {d, cb, ctx, 0, 0};
    int r;

    if (!d || !p || !same_protocol(d, p))
        return TB_ERR_INVAL;
    r = tb_parser_finish(p, fused_pkt, &f);
    if (f.err)
        return f.err;
    if (r < 0)
        return r;
    r = tb_decoder_finish(d, cb, ctx);
    return r < 0 ? r : f.nel + r;
}

int tb_decoder_push_gap(tb_decoder *d, tb_parser *p, uint64_t index, tb_element_cb cb,
                        void *ctx)
{
    tb_packet pkt;

    if (!d || !p || !same_protocol(d, p))
        return TB_ERR_INVAL;
    /* What the parser held belongs to bytes that do not continue: it
     * starts again from an A-sync.  The decoder takes the gap as a bad
     * packet (its sync is lost until the next I-sync), with the cause. */
    tb_parser_reset(p);
    memset(&pkt, 0, sizeof pkt);
    pkt.kind = TB_PKT_BAD_SEQUENCE;
    pkt.protocol = d->ops->protocol;
    pkt.index = index;
    pkt.err = TB_ERR_BAD_FRAME;
    return tb_decoder_packet(d, &pkt, cb, ctx);
}

void tb_decoder_reset(tb_decoder *d)
{
    if (d)
        d->ops->reset(d->be);
}

int tb_range_addrs(const tb_memimage *mem, const tb_element *el,
                   uint32_t *out, size_t max)
{
    uint32_t a;
    size_t n = 0, avail = 0;
    const uint8_t *p = NULL;

    if (!mem || !el || (!out && max) || el->kind != TB_ELEM_INSN_RANGE)
        return TB_ERR_INVAL;
    a = el->start;
    while (n < el->count && n < max) {
        out[n++] = a;
        if (el->isa == TB_ISA_ARM) {
            a += 4;
        } else {
            unsigned size;

            /* The region's bytes from a on, looked up again only when
             * the walk runs out of them. */
            if (avail < 2) {
                p = tb_memimage_ptr(mem, a, &avail);
                if (!p || avail < 2)
                    return TB_ERR_NOT_IN_IMAGE;
            }
            size = tb_thumb_size((uint16_t)(p[0] | p[1] << 8));
            a += size;
            p += size;
            avail = avail > size ? avail - size : 0;
        }
    }
    return (int)n;
}

int tb_decoder_range_addrs(tb_decoder *d, const tb_element *el, uint32_t *out,
                           size_t max)
{
    if (!d)
        return TB_ERR_INVAL;
    return tb_range_addrs(d->mem, el, out, max);
}

/* ---- snapshot -> elements ---- */

/* tb_decode_snapshot_insns()'s element callback: the range's addresses
 * from the image loaded once, in a buffer that grows to the longest
 * range. */
struct insn_run {
    tb_insn_element_cb cb;
    void *ctx;
    const tb_memimage *mem;
    tb_protocol protocol;
    uint8_t trace_id;
    uint32_t *addrs;
    size_t cap;
    int err;            /* why on_insn_elem stopped the decode */
    uint32_t err_addr;  /* the range it was at */
};

static int on_insn_elem(void *ctx, const tb_element *el)
{
    struct insn_run *ir = ctx;
    tb_insn_element ie = {el, NULL, 0, ir->protocol, ir->trace_id};

    if (el->kind == TB_ELEM_INSN_RANGE && el->count) {
        int n;

        if (el->count > ir->cap) {
            uint32_t *a = realloc(ir->addrs, (size_t)el->count * sizeof *a);

            if (!a) {
                ir->err = TB_ERR_NOMEM;
                return 1;
            }
            ir->addrs = a;
            ir->cap = el->count;
        }
        n = tb_range_addrs(ir->mem, el, ir->addrs, el->count);
        if (n < 0) {
            ir->err = n;
            ir->err_addr = el->start;
            return 1;
        }
        ie.addrs = ir->addrs;
        ie.n_addrs = (size_t)n;
    }
    return ir->cb(ir->ctx, &ie);
}

/* Snapshot -> elements; with ir, through on_insn_elem over the image
 * loaded here. */
static int decode_snapshot(const char *dir, int id, tb_element_cb cb, void *ctx,
                           struct insn_run *ir, char *err, size_t errlen)
{
    tb_snapshot snap;
    const tb_snap_source *src;
    tb_config cfg;
    tb_memimage *mem = NULL;
    tb_pipeline *pl = NULL;
    int r;

    if (!dir || (!cb && !ir))
        return TB_ERR_INVAL;
    if (err && errlen)
        err[0] = 0;
    r = tb_snapshot_load(&snap, dir, err, errlen);
    if (r < 0)
        return r;
    src = tb_stream_find_source(&snap, id, err, errlen);
    if (!src) {
        r = TB_ERR_NOT_FOUND;
        goto out;
    }
    r = tb_snapshot_source_config(&snap, src, &cfg, err, errlen);
    if (r < 0)
        goto out;
    r = tb_snapshot_source_memory(&snap, src, &mem, err, errlen);
    if (r < 0)
        goto out;
    if (ir) {
        ir->mem = mem;
        ir->protocol = cfg.protocol;
        ir->trace_id = cfg.trace_id;
        cb = on_insn_elem;
        ctx = ir;
    }
    /* Corrupt frames: decoded past them to the end (NO_SYNC where bytes
     * were lost), then TB_ERR_BAD_FRAME. */
    pl = tb_pipeline_new(&cfg, mem, &(tb_pipeline_opts){.size = sizeof(tb_pipeline_opts),
                                                       .on_element = cb, .ctx = ctx,
                                                       .gaps = true});
    if (!pl) {
        r = TB_ERR_NOMEM;
        goto out;
    }
    r = tb_pipeline_run_source(pl, &snap, src, err, errlen);
    if (r < 0 && r != TB_ERR_BAD_FRAME && err && errlen && !err[0])
        snprintf(err, errlen, "decode: %s", tb_err_str(r));
out:
    tb_pipeline_free(pl);
    tb_memimage_free(mem);
    tb_snapshot_fini(&snap);
    return r;
}

int tb_decode_snapshot(const char *dir, int id, tb_element_cb cb, void *ctx,
                       char *err, size_t errlen)
{
    return decode_snapshot(dir, id, cb, ctx, NULL, err, errlen);
}

int tb_decode_snapshot_insns(const char *dir, int id, tb_insn_element_cb cb,
                             void *ctx, char *err, size_t errlen)
{
    struct insn_run ir = {0};
    int r;

    if (!cb)
        return TB_ERR_INVAL;
    ir.cb = cb;
    ir.ctx = ctx;
    r = decode_snapshot(dir, id, NULL, NULL, &ir, err, errlen);
    /* The addresses' error, not the TB_ERR_STOPPED it caused. */
    if (ir.err && r < 0) {
        r = ir.err;
        if (err && errlen)
            snprintf(err, errlen, "decode: range at 0x%08X: %s", (unsigned)ir.err_addr,
                     tb_err_str(r));
    }
    free(ir.addrs);
    return r;
}
