/*
 * The decode pipeline (pipeline.h): the one place where a source's bytes
 * go through the parser into the decoder, with gaps, health, a packet
 * tap and progress, so that no program writes that loop again.
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/pipeline.h"

struct tb_pipeline {
    tb_parser *parser;
    tb_decoder *dec;          /* NULL: parse only */
    tb_pipeline_opts o;
    /* What the decoder calls: the user's callback itself, or
     * count_elem when the elements are counted into the health first
     * (the fused path then pays no extra call without health). */
    tb_element_cb ecb;
    void *ectx;
    const tb_packet *pkt;     /* being decoded (packet path) */
    uint64_t bytes;
    uint64_t last_index;
    int nel;                  /* elements of the current push (packet path) */
    int err;                  /* the first error the packet path or a
                               * stream callback met */
};

static int count_elem(void *ctx, const tb_element *el)
{
    tb_pipeline *p = ctx;

    tb_health_element(p->o.health, el);
    return p->o.on_element(p->o.ctx, el);
}

tb_pipeline *tb_pipeline_new(const tb_config *cfg, const tb_memimage *mem,
                             const tb_pipeline_opts *opts)
{
    tb_pipeline *p;

    if (!cfg || !opts || opts->size < sizeof(tb_pipeline_opts) ||
        (mem && !opts->on_element))
        return NULL;
    p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->o = *opts;
    p->parser = tb_parser_new(cfg);
    if (mem)
        p->dec = tb_decoder_new(cfg, mem);
    if (!p->parser || (mem && !p->dec)) {
        tb_pipeline_free(p);
        return NULL;
    }
    if (p->dec && p->o.health)
        tb_decoder_set_health(p->dec, p->o.health);
    p->ecb = p->o.health ? count_elem : p->o.on_element;
    p->ectx = p->o.health ? (void *)p : p->o.ctx;
    return p;
}

void tb_pipeline_free(tb_pipeline *p)
{
    if (!p)
        return;
    tb_decoder_free(p->dec);
    tb_parser_free(p->parser);
    free(p);
}

void tb_pipeline_reset(tb_pipeline *p)
{
    if (!p)
        return;
    tb_parser_reset(p->parser);
    if (p->dec)
        tb_decoder_reset(p->dec);
    p->pkt = NULL;
    p->bytes = 0;
    p->last_index = 0;
    p->err = 0;
}

/* The packet path: the tap, then the decoder with the packet current. */
static int on_pkt(void *ctx, const tb_packet *pkt)
{
    tb_pipeline *p = ctx;
    int n;

    if (p->o.on_packet && p->o.on_packet(p->o.ctx, pkt)) {
        p->err = TB_ERR_STOPPED;
        return 1;
    }
    if (!p->dec)
        return 0;
    p->pkt = pkt;
    n = tb_decoder_packet(p->dec, pkt, p->ecb, p->ectx);
    p->pkt = NULL;
    if (n < 0) {
        p->err = n;
        return 1;
    }
    p->nel += n;
    return 0;
}

static bool packet_path(const tb_pipeline *p)
{
    return p->o.on_packet || !p->dec;
}

/* The packet path's result: its own error before the parser's stop. */
static int packet_result(tb_pipeline *p, int r)
{
    int e = p->err;

    p->err = 0;
    if (e)
        return e;
    return r < 0 ? r : p->nel;
}

static void delivered(tb_pipeline *p, size_t len, uint64_t last)
{
    if (len) {
        p->bytes += len;
        p->last_index = last;
        tb_health_bytes(p->o.health, len);
    }
    if (p->o.on_progress)
        p->o.on_progress(p->o.ctx, p->bytes, p->last_index);
}

int tb_pipeline_push(tb_pipeline *p, const uint8_t *data, size_t len, uint64_t index)
{
    int r;

    if (!p || (!data && len))
        return TB_ERR_INVAL;
    if (packet_path(p)) {
        p->nel = 0;
        r = packet_result(p, tb_parser_push(p->parser, data, len, index, on_pkt, p));
    } else {
        r = tb_decoder_push(p->dec, p->parser, data, len, index, p->ecb, p->ectx);
    }
    delivered(p, len, index + len - 1);
    return r;
}

int tb_pipeline_push_span(tb_pipeline *p, const uint8_t *data, size_t len,
                          const tb_span_map *map)
{
    int r;

    if (!p || (!data && len) || (len && !map))
        return TB_ERR_INVAL;
    if (packet_path(p)) {
        p->nel = 0;
        r = packet_result(p, tb_parser_push_span(p->parser, data, len, map, on_pkt, p));
    } else {
        r = tb_decoder_push_span(p->dec, p->parser, data, len, map, p->ecb, p->ectx);
    }
    /* The span's last byte: its last segment's first index plus that
     * segment's length, less one (tb_span_map). */
    if (len && map->n)
        delivered(p, len, map->index[map->n - 1] + map->end[map->n - 1] -
                              (map->n > 1 ? map->end[map->n - 2] : 0) - 1);
    else
        delivered(p, len, 0);
    return r;
}

int tb_pipeline_push_gap(tb_pipeline *p, uint64_t index)
{
    int r = 0;

    if (!p)
        return TB_ERR_INVAL;
    /* The bytes before the gap do not continue: the parser starts again
     * from an A-sync (tb_decoder_push_gap does that with a decoder). */
    if (p->dec)
        r = tb_decoder_push_gap(p->dec, p->parser, index, p->ecb, p->ectx);
    else
        tb_parser_reset(p->parser);
    delivered(p, 0, 0);
    return r;
}

int tb_pipeline_finish(tb_pipeline *p)
{
    int r, f;

    if (!p)
        return TB_ERR_INVAL;
    if (!packet_path(p))
        return tb_decoder_push_finish(p->dec, p->parser, p->ecb, p->ectx);
    p->nel = 0;
    r = packet_result(p, tb_parser_finish(p->parser, on_pkt, p));
    if (r < 0 || !p->dec)
        return r;
    f = tb_decoder_finish(p->dec, p->ecb, p->ectx);
    return f < 0 ? f : r + f;
}

/* A stream callback's result: the error kept for finish_stream. */
static int kept(tb_pipeline *p, int r)
{
    if (r < 0 && !p->err)
        p->err = r;
    return r < 0;
}

int tb_pipeline_on_bytes(void *pipeline, uint64_t index, const uint8_t *data, size_t len)
{
    tb_pipeline *p = pipeline;

    if (!len)
        return p->o.gaps ? kept(p, tb_pipeline_push_gap(p, index)) : 0;
    return kept(p, tb_pipeline_push(p, data, len, index));
}

int tb_pipeline_on_span(void *pipeline, const uint8_t *data, size_t len,
                        const tb_span_map *map)
{
    tb_pipeline *p = pipeline;

    /* len 0: a gap at map->index[0] (stream.h). */
    if (!len)
        return p->o.gaps && map && map->n ? kept(p, tb_pipeline_push_gap(p, map->index[0]))
                                          : 0;
    return kept(p, tb_pipeline_push_span(p, data, len, map));
}

int tb_pipeline_finish_stream(tb_pipeline *p, int stream_rc)
{
    int r = stream_rc, f;

    if (!p)
        return TB_ERR_INVAL;
    if (p->err) {
        r = p->err;
        p->err = 0;
        return r;
    }
    /* Corrupt frames: decoded past them to the end, the error after. */
    if (r < 0 && !(r == TB_ERR_BAD_FRAME && p->o.gaps))
        return r;
    f = tb_pipeline_finish(p);
    return f < 0 ? f : r;
}

int tb_pipeline_run_source(tb_pipeline *p, const tb_snapshot *s, const tb_snap_source *src,
                           char *err, size_t errlen)
{
    tb_stream_opts so = {.size = sizeof so, .gaps = p && p->o.gaps};
    int r;

    if (!p || !s || !src)
        return TB_ERR_INVAL;
    r = tb_stream_source_spans(s, src, &so, tb_pipeline_on_span, p, err, errlen);
    return tb_pipeline_finish_stream(p, r);
}

const tb_packet *tb_pipeline_packet(const tb_pipeline *p)
{
    return p ? p->pkt : NULL;
}

uint64_t tb_pipeline_bytes(const tb_pipeline *p)
{
    return p ? p->bytes : 0;
}

tb_decoder *tb_pipeline_decoder(tb_pipeline *p)
{
    return p ? p->dec : NULL;
}
