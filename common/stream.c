/* A trace source's bytes out of a snapshot buffer (see stream.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "struct_size.h"
#include "tracebench/frame.h"
#include "tracebench/stream.h"

/* Appends printf text to a message, keeping it one line and within
 * errlen (the end is cut with "..." when it does not fit). */
static void append(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void append(char *err, size_t errlen, const char *fmt, ...)
{
    size_t n = strnlen(err, errlen);
    va_list ap;
    int w;

    if (n + 1 >= errlen)
        return;
    va_start(ap, fmt);
    w = vsnprintf(err + n, errlen - n, fmt, ap);
    va_end(ap);
    if (w >= 0 && (size_t)w >= errlen - n && errlen > 4)
        memcpy(err + errlen - 4, "...", 4);
}

/* The ID a source's ETMTRACEIDR names even when the rest of its
 * configuration is broken; -1 when it has none. */
static int raw_trace_id(const tb_snapshot *s, const tb_snap_source *src)
{
    const tb_snap_device *d = tb_snapshot_device(s, src->name);
    uint32_t v;

    if (!d || tb_snap_device_reg(d, "ETMTRACEIDR", &v) < 0)
        return -1;
    return (int)(v & 0x7F);
}

/* Why no source is usable: the one reason when one source was refused,
 * else each refused source's reason (cut to fit). */
static int no_source(const tb_snapshot *s, const char *lead, char *err,
                     size_t errlen)
{
    char e[512];
    size_t i, refused = 0, captured = 0;
    int first_rc = TB_ERR_NOT_FOUND;

    for (i = 0; i < s->n_sources; i++) {
        tb_config cfg;
        int rc;

        if (!s->sources[i].buffer[0])
            continue;
        captured++;
        rc = tb_snapshot_source_config(s, &s->sources[i], &cfg, e, sizeof e);
        if (rc < 0 && !refused++)
            first_rc = rc;
    }
    if (!captured) {
        snprintf(err, errlen, "%sno trace source in %s has captured trace: "
                 "trace.ini [source_buffers] maps none to a buffer", lead,
                 s->dir);
        return TB_ERR_NOT_FOUND;
    }
    if (refused == 1 && !*lead) {
        for (i = 0; i < s->n_sources; i++) {
            tb_config cfg;

            if (s->sources[i].buffer[0] &&
                tb_snapshot_source_config(s, &s->sources[i], &cfg, err,
                                          errlen) < 0)
                return first_rc;
        }
    }
    snprintf(err, errlen, "%sno trace source in %s that tracebench can "
             "decode (ETMv3 or PTM):", lead, s->dir);
    for (i = 0; i < s->n_sources; i++) {
        tb_config cfg;
        const char *why;

        if (!s->sources[i].buffer[0] ||
            tb_snapshot_source_config(s, &s->sources[i], &cfg, e, sizeof e) >= 0)
            continue;
        /* Drop the "DIR/" prefix each reason carries: the lead names it. */
        why = strncmp(e, s->dir, strlen(s->dir)) == 0 && e[strlen(s->dir)] == '/'
                  ? e + strlen(s->dir) + 1 : e;
        append(err, errlen, " %s;", why);
    }
    {
        size_t n = strnlen(err, errlen);

        if (n && err[n - 1] == ';')
            err[n - 1] = '\0';
    }
    return first_rc == TB_ERR_NOT_FOUND ? TB_ERR_UNSUPPORTED : first_rc;
}

/* " 0x10 (ETM_0), 0x13 (PTM_0)" */
static void list_usable(const tb_snapshot *s, char *err, size_t errlen)
{
    const char *sep = " ";
    size_t i;

    for (i = 0; i < s->n_sources; i++) {
        tb_config cfg;
        char e[16];

        if (!s->sources[i].buffer[0] ||
            tb_snapshot_source_config(s, &s->sources[i], &cfg, e, sizeof e) < 0)
            continue;
        append(err, errlen, "%s0x%02x (%s)", sep, (unsigned)cfg.trace_id,
               s->sources[i].name);
        sep = ", ";
    }
}

int tb_stream_select(const tb_snapshot *s, int id, const tb_snap_source **out,
                     size_t max, char *err, size_t errlen)
{
    size_t i, n = 0;
    char lead[64];

    if (!s || !out || !max || !err || !errlen ||
        (id < 0 && id != TB_STREAM_ONLY && id != TB_STREAM_ALL) || id > 0x7F)
        return TB_ERR_INVAL;
    err[0] = '\0';
    for (i = 0; i < s->n_sources; i++) {
        const tb_snap_source *src = &s->sources[i];
        tb_config cfg;
        char e[8];

        if (!src->buffer[0])
            continue; /* named in core_trace_sources but never captured */
        if (tb_snapshot_source_config(s, src, &cfg, e, sizeof e) < 0)
            continue; /* not ETMv3/PTM, or a broken configuration */
        if (id >= 0 && cfg.trace_id != id)
            continue;
        if (id >= 0) {
            out[0] = src; /* the first with the ID, as OpenCSD takes it */
            return 1;
        }
        if (n == max) {
            snprintf(err, errlen, "%s: more than %zu trace sources to "
                     "decode", s->dir, max);
            return TB_ERR_LIMIT;
        }
        out[n++] = src;
    }
    if (id >= 0) {
        /* A source that claims this ID but cannot be decoded: its own
         * reason, not "no such source". */
        for (i = 0; i < s->n_sources; i++) {
            const tb_snap_source *src = &s->sources[i];
            tb_config cfg;

            if (src->buffer[0] && raw_trace_id(s, src) == id)
                return tb_snapshot_source_config(s, src, &cfg, err, errlen);
        }
        snprintf(lead, sizeof lead, "no trace source with trace ID 0x%02x: ",
                 (unsigned)id);
        for (i = 0; i < s->n_sources; i++) {
            tb_config cfg;
            char e[8];

            if (s->sources[i].buffer[0] &&
                tb_snapshot_source_config(s, &s->sources[i], &cfg, e, sizeof e) >= 0)
                break;
        }
        if (i == s->n_sources)
            return no_source(s, lead, err, errlen);
        snprintf(err, errlen, "no trace source with trace ID 0x%02x in %s; "
                 "its ETMv3/PTM sources:", (unsigned)id, s->dir);
        list_usable(s, err, errlen);
        return TB_ERR_NOT_FOUND;
    }
    if (n == 0)
        return no_source(s, "", err, errlen);
    if (id == TB_STREAM_ONLY && n > 1) {
        snprintf(err, errlen, "%zu trace sources in %s:", n, s->dir);
        list_usable(s, err, errlen);
        append(err, errlen, ": choose one by trace ID, or all");
        return TB_ERR_INVAL;
    }
    return (int)n;
}

const tb_snap_source *tb_stream_find_source(const tb_snapshot *s, int id,
                                            char *err, size_t errlen)
{
    const tb_snap_source *src[32];
    char e[8];

    if (!err || !errlen) {
        err = e;
        errlen = sizeof e;
    }
    if (!s) {
        snprintf(err, errlen, "no snapshot");
        return NULL;
    }
    if (tb_stream_select(s, id < 0 ? TB_STREAM_ONLY : id, src,
                         sizeof src / sizeof src[0], err, errlen) < 1)
        return NULL;
    return src[0];
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
    if (len == 0) /* a gap (opts->gaps) */
        return r->cb(r->ctx, index, data, 0) ? 1 : 0;
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

/* The files of one buffer, in order, with how their bytes are framed. */
typedef struct buffer_files {
    const char *dir;          /* joined before each file; NULL: as given */
    const char *const *files;
    size_t n_files;
    const tb_snap_buffer *buf; /* its format; names it in messages */
    uint8_t trace_id;
} buffer_files;

/* The buffer's frame errors, if any, as one line in err: where the first
 * was and what it was, how many followed.  Returns whether there were
 * any. */
static bool bad_frames(const tb_deformatter *dfm, const buffer_files *bf, char *err,
                       size_t errlen)
{
    uint64_t n = 0, first = 0, last = 0;
    char what[64], more[96] = "";
    int id = -1;

    if (tb_deformatter_error_info(dfm, &n, &last) < 1)
        return false;
    (void)tb_deformatter_first_error(dfm, &first, &id);
    if (id >= 0)
        snprintf(what, sizeof what, "reserved trace ID 0x%02x", (unsigned)id);
    else
        snprintf(what, sizeof what, "broken frame sync pattern");
    if (n > 1)
        snprintf(more, sizeof more, " (%llu frame errors in all, the last at byte %llu)",
                 (unsigned long long)n, (unsigned long long)last);
    snprintf(err, errlen, "buffer %s: corrupt CoreSight frames: %s at byte %llu%s; "
             "the bytes up to each next ID byte belong to no source and were dropped, "
             "the rest was read (is the buffer's format, %s, right?)",
             bf->buf->name, what, (unsigned long long)first, more, bf->buf->format);
    return true;
}

/* The caller's options as this build's struct (struct_size.h): *opts
 * then points at o. */
static int take_opts(tb_stream_opts *o, const tb_stream_opts **opts, char *err,
                     size_t errlen)
{
    int r = tb_struct_take(o, sizeof *o, *opts, TB_STREAM_OPTS_SIZE_MIN, "tb_stream_opts",
                           err, errlen);

    *opts = o;
    return r;
}

static int stream_files(const buffer_files *bf, const tb_stream_opts *opts,
                        tb_stream_cb cb, tb_stream_span_cb span_cb, void *ctx,
                        char *err, size_t errlen)
{
    tb_deformatter *dfm = NULL;
    unsigned flags = 0;
    size_t chunk = opts && opts->read_chunk ? opts->read_chunk : 65536;
    uint8_t *block;
    uint64_t offset = 0;
    route r;
    int rc, formatted;
    size_t f;

    formatted = tb_snap_buffer_frame_flags(bf->buf, &flags);
    if (opts && opts->gaps)
        flags |= TB_FRAME_REPORT_GAPS;
    if (formatted < 0) {
        snprintf(err, errlen, "buffer %s has unknown format '%s': use "
                 "coresight, dstream_coresight, tpiu_coresight or source_data",
                 bf->buf->name, bf->buf->format);
        return TB_ERR_FORMAT;
    }
    r = (route){.id = bf->trace_id, .all = formatted == 1,
                .max_chunk = opts ? opts->max_chunk : 0, .cb = cb,
                .span_cb = span_cb, .ctx = ctx};
    if (!r.all) {
        uint8_t id = bf->trace_id;

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
    for (f = 0; f < bf->n_files && rc == 0; f++) {
        char path[1024];
        FILE *fp;
        size_t n;

        if (bf->dir)
            snprintf(path, sizeof path, "%s/%s", bf->dir, bf->files[f]);
        else
            snprintf(path, sizeof path, "%s", bf->files[f]);
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
            /* A corrupt frame: the deformatter has dropped what no ID
             * byte claims and read the whole chunk; the rest of the
             * buffer follows (reported at the end, bad_frames). */
            if (rc == TB_ERR_BAD_FRAME)
                rc = 0;
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
        if (rc < 0 && rc != TB_ERR_BAD_FRAME)
            snprintf(err, errlen, "buffer %s: %s at its end", bf->buf->name,
                     tb_err_str(rc));
        if ((rc == 0 || rc == TB_ERR_BAD_FRAME) && bad_frames(dfm, bf, err, errlen))
            rc = TB_ERR_BAD_FRAME;
    }
    free(block);
    tb_deformatter_free(dfm);
    return rc;
}

static int stream(const tb_snapshot *s, const tb_snap_source *src,
                  const tb_stream_opts *opts, tb_stream_cb cb,
                  tb_stream_span_cb span_cb, void *ctx, char *err,
                  size_t errlen)
{
    const tb_snap_buffer *buf;
    const char *files[4];
    buffer_files bf;
    tb_config cfg;
    size_t f;
    int rc;

    rc = tb_snapshot_source_config(s, src, &cfg, err, errlen);
    if (rc < 0)
        return rc;
    buf = find_buffer(s, src->buffer);
    if (!buf) {
        snprintf(err, errlen, "trace source %s names buffer '%s', which trace.ini does not define",
                 src->name, src->buffer);
        return TB_ERR_FORMAT;
    }
    for (f = 0; f < buf->n_files && f < 4; f++)
        files[f] = buf->files[f];
    bf = (buffer_files){.dir = s->dir, .files = files, .n_files = f,
                        .buf = buf, .trace_id = cfg.trace_id};
    return stream_files(&bf, opts, cb, span_cb, ctx, err, errlen);
}

/* A buffer file outside a snapshot, read as a buffer of that format. */
static int stream_file(const char *path, const char *format, uint8_t id,
                       const tb_stream_opts *opts, tb_stream_cb cb,
                       tb_stream_span_cb span_cb, void *ctx, char *err,
                       size_t errlen)
{
    tb_snap_buffer buf;
    buffer_files bf;
    const char *files[1] = {path};

    memset(&buf, 0, sizeof buf);
    snprintf(buf.name, sizeof buf.name, "%s", "(file)");
    if (strlen(format) >= sizeof buf.format) {
        snprintf(err, errlen, "unknown buffer format '%.40s': use coresight, "
                 "dstream_coresight, tpiu_coresight or source_data", format);
        return TB_ERR_FORMAT;
    }
    memcpy(buf.format, format, strlen(format) + 1);
    if (tb_snap_buffer_frame_flags(&buf, &(unsigned){0}) == 0 &&
        (id == 0 || id >= 0x70)) {
        snprintf(err, errlen, "trace ID 0x%02x is not usable in a formatted "
                 "buffer (0x01-0x6F)", (unsigned)id);
        return TB_ERR_CONFIG;
    }
    bf = (buffer_files){.dir = NULL, .files = files, .n_files = 1,
                        .buf = &buf, .trace_id = id};
    return stream_files(&bf, opts, cb, span_cb, ctx, err, errlen);
}

int tb_stream_file(const char *path, const char *format, uint8_t trace_id,
                   const tb_stream_opts *opts, tb_stream_cb cb, void *ctx,
                   char *err, size_t errlen)
{
    tb_stream_opts o;

    if (!path || !format || !cb || !err || !errlen)
        return TB_ERR_INVAL;
    err[0] = '\0';
    if (opts && take_opts(&o, &opts, err, errlen) < 0)
        return TB_ERR_INVAL;
    return stream_file(path, format, trace_id, opts, cb, NULL, ctx, err, errlen);
}

int tb_stream_file_spans(const char *path, const char *format, uint8_t trace_id,
                         const tb_stream_opts *opts, tb_stream_span_cb cb,
                         void *ctx, char *err, size_t errlen)
{
    tb_stream_opts o;

    if (!path || !format || !cb || !err || !errlen)
        return TB_ERR_INVAL;
    err[0] = '\0';
    if (opts && take_opts(&o, &opts, err, errlen) < 0)
        return TB_ERR_INVAL;
    if (opts && opts->max_chunk)
        return TB_ERR_INVAL;
    return stream_file(path, format, trace_id, opts, NULL, cb, ctx, err, errlen);
}

int tb_stream_source(const tb_snapshot *s, const tb_snap_source *src,
                     const tb_stream_opts *opts, tb_stream_cb cb, void *ctx,
                     char *err, size_t errlen)
{
    tb_stream_opts o;

    if (!s || !src || !cb || (opts && take_opts(&o, &opts, err, errlen) < 0))
        return TB_ERR_INVAL;
    return stream(s, src, opts, cb, NULL, ctx, err, errlen);
}

int tb_stream_source_spans(const tb_snapshot *s, const tb_snap_source *src,
                           const tb_stream_opts *opts, tb_stream_span_cb cb,
                           void *ctx, char *err, size_t errlen)
{
    tb_stream_opts o;

    if (!s || !src || !cb || (opts && take_opts(&o, &opts, err, errlen) < 0) ||
        (opts && opts->max_chunk))
        return TB_ERR_INVAL;
    return stream(s, src, opts, NULL, cb, ctx, err, errlen);
}
