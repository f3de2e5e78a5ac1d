/* A trace source's bytes out of a snapshot buffer (see stream.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebench/frame.h"
#include "tracebench/stream.h"

const tb_snap_source *tb_stream_find_source(const tb_snapshot *s, int id,
                                            char *err, size_t errlen)
{
    const tb_snap_source *only = NULL;
    size_t i, n = 0;

    for (i = 0; i < s->n_sources; i++) {
        const tb_snap_source *src = &s->sources[i];
        tb_config cfg;
        char e[256];

        if (!src->buffer[0])
            continue; /* named in core_trace_sources but never captured */
        if (tb_snapshot_source_config(s, src, &cfg, e, sizeof e) < 0)
            continue; /* not an ETMv3/PTM source (e.g. an ITM) */
        if (id >= 0 && cfg.trace_id == id)
            return src;
        only = src;
        n++;
    }
    if (id < 0 && n == 1)
        return only;
    if (id < 0)
        snprintf(err, errlen, "%zu trace sources in %s: choose one with --id",
                 n, s->dir);
    else
        snprintf(err, errlen, "no ETMv3/PTM trace source with trace ID 0x%02x in %s",
                 id, s->dir);
    return NULL;
}

typedef struct route {
    uint8_t id;
    bool all;            /* source_data: every byte is the source's */
    size_t max_chunk;
    tb_stream_cb cb;     /* one of these two */
    tb_stream_span_cb span_cb;
    void *ctx;
} route;

static int deliver(const route *r, uint64_t index, const uint8_t *data,
                   size_t len)
{
    if (r->span_cb) {
        /* An unformatted buffer: each read is one segment. */
        const size_t end = len;
        const tb_span_map map = {1, &end, &index};

        return r->span_cb(r->ctx, data, len, &map) ? TB_ERR_STOPPED : 0;
    }
    while (len) {
        size_t n = r->max_chunk && len > r->max_chunk ? r->max_chunk : len;
        if (r->cb(r->ctx, index, data, n))
            return TB_ERR_STOPPED;
        index += n;
        data += n;
        len -= n;
    }
    return 0;
}

static int on_run(void *ctx, uint8_t id, uint64_t index, const uint8_t *data,
                  size_t len)
{
    const route *r = ctx;

    if (id != r->id)
        return 0;
    return deliver(r, index, data, len) < 0 ? 1 : 0;
}

static int on_span(void *ctx, uint8_t id, const uint8_t *data, size_t len,
                   const tb_span_map *map)
{
    const route *r = ctx;

    if (id != r->id)
        return 0;
    return r->span_cb(r->ctx, data, len, map) ? 1 : 0;
}

static const tb_snap_buffer *find_buffer(const tb_snapshot *s, const char *name)
{
    size_t i;

    for (i = 0; i < s->n_buffers; i++)
        if (strcmp(s->buffers[i].name, name) == 0)
            return &s->buffers[i];
    return NULL;
}

static int stream(const tb_snapshot *s, const tb_snap_source *src,
                  const tb_stream_opts *opts, tb_stream_cb cb,
                  tb_stream_span_cb span_cb, void *ctx, char *err,
                  size_t errlen)
{
    const tb_snap_buffer *buf;
    tb_deformatter *dfm = NULL;
    tb_config cfg;
    unsigned flags = 0;
    size_t chunk = opts && opts->read_chunk ? opts->read_chunk : 65536;
    uint8_t *block;
    uint64_t offset = 0;
    route r;
    int rc, formatted;
    size_t f;

    rc = tb_snapshot_source_config(s, src, &cfg, err, errlen);
    if (rc < 0)
        return rc;
    buf = find_buffer(s, src->buffer);
    if (!buf) {
        snprintf(err, errlen, "trace source %s names buffer '%s', which trace.ini does not define",
                 src->name, src->buffer);
        return TB_ERR_FORMAT;
    }
    formatted = tb_snap_buffer_frame_flags(buf, &flags);
    if (formatted < 0) {
        snprintf(err, errlen, "buffer %s has unknown format '%s'", buf->name,
                 buf->format);
        return TB_ERR_FORMAT;
    }
    r = (route){.id = cfg.trace_id, .all = formatted == 1,
                .max_chunk = opts ? opts->max_chunk : 0, .cb = cb,
                .span_cb = span_cb, .ctx = ctx};
    if (!r.all) {
        uint8_t id = (uint8_t)cfg.trace_id;

        dfm = tb_deformatter_new(flags);
        if (!dfm)
            return TB_ERR_NOMEM;
        /* The other sources' bytes need not be copied out at all. */
        if (id != TB_TRACE_ID_NULL && id < 0x70)
            (void)tb_deformatter_set_ids(dfm, &id, 1);
    }
    block = malloc(chunk);
    if (!block) {
        tb_deformatter_free(dfm);
        return TB_ERR_NOMEM;
    }

    rc = 0;
    for (f = 0; f < buf->n_files && rc == 0; f++) {
        char path[1024];
        FILE *fp;
        size_t n;

        snprintf(path, sizeof path, "%s/%s", s->dir, buf->files[f]);
        fp = fopen(path, "rb");
        if (!fp) {
            snprintf(err, errlen, "cannot open trace buffer file %s: %s", path,
                     strerror(errno));
            rc = TB_ERR_IO;
            break;
        }
        while (rc == 0 && (n = fread(block, 1, chunk, fp)) > 0) {
            if (r.all)
                rc = deliver(&r, offset, block, n);
            else if (span_cb)
                rc = tb_deformatter_push_spans(dfm, block, n, offset, on_span, &r);
            else
                rc = tb_deformatter_push(dfm, block, n, offset, on_run, &r);
            if (rc < 0 && rc != TB_ERR_STOPPED)
                snprintf(err, errlen, "%s: %s near buffer offset %llu", path,
                         tb_err_str(rc), (unsigned long long)offset);
            offset += n;
        }
        if (rc == 0 && ferror(fp)) {
            snprintf(err, errlen, "error reading %s", path);
            rc = TB_ERR_IO;
        }
        fclose(fp);
    }
    if (rc == 0 && dfm) {
        rc = span_cb ? tb_deformatter_finish_spans(dfm, on_span, &r)
                     : tb_deformatter_finish(dfm, on_run, &r);
        if (rc < 0)
            snprintf(err, errlen, "buffer %s: %s at its end", buf->name,
                     tb_err_str(rc));
    }
    free(block);
    tb_deformatter_free(dfm);
    return rc;
}

int tb_stream_source(const tb_snapshot *s, const tb_snap_source *src,
                     const tb_stream_opts *opts, tb_stream_cb cb, void *ctx,
                     char *err, size_t errlen)
{
    if (!s || !src || !cb)
        return TB_ERR_INVAL;
    return stream(s, src, opts, cb, NULL, ctx, err, errlen);
}

int tb_stream_source_spans(const tb_snapshot *s, const tb_snap_source *src,
                           const tb_stream_opts *opts, tb_stream_span_cb cb,
                           void *ctx, char *err, size_t errlen)
{
    if (!s || !src || !cb || (opts && opts->max_chunk))
        return TB_ERR_INVAL;
    return stream(s, src, opts, NULL, cb, ctx, err, errlen);
}
