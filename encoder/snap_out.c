/*
 * Snapshot output: a growable memory sink, a whole snapshot written at
 * once (tb_encoder_write_snapshot), and one written as the trace comes
 * (tb_encoder_snapshot_*), optionally CoreSight-formatted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "encoder_internal.h"
#include "../common/struct_size.h"
#include "tracebench/frame.h"

int tb_encoder_mem_sink(void *ctx, const uint8_t *data, size_t len)
{
    tb_encoder_membuf *m = ctx;

    if (m->len + len > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 4096;
        uint8_t *nb;

        while (nc < m->len + len)
            nc *= 2;
        nb = realloc(m->buf, nc);
        if (!nb)
            return TB_ERR_NOMEM;
        m->buf = nb;
        m->cap = nc;
    }
    memcpy(m->buf + m->len, data, len);
    m->len += len;
    return 0;
}

int tb_encoder_write_snapshot(const char *dir, const tb_config *cfg,
                              const tb_snap_region *regions, size_t n_regions,
                              const uint8_t *trace, size_t len, bool formatted,
                              char *err, size_t errlen)
{
    tb_snap_out_source src;
    tb_encoder_membuf m = {NULL, 0, 0};
    tb_config own;
    int rc;
    bool ptm;

    if (!dir || !cfg || (!trace && len))
        return TB_ERR_INVAL;
    if ((rc = tb_struct_take(&own, sizeof own, cfg, TB_CONFIG_SIZE_MIN, "tb_config", err,
                             errlen)) < 0)
        return rc;
    cfg = &own;
    ptm = cfg->protocol == TB_PROTO_PTM;
    memset(&src, 0, sizeof src);
    src.name = ptm ? "PTM_0" : "ETM_0";
    src.cfg = cfg;
    src.core = "cpu_0";
    /* The cores that carry these macrocells on TC2 (protocol-notes 5.2). */
    src.core_type = ptm ? "Cortex-A15" : "Cortex-A7";
    /* A Cortex-M's ETM: the core name is what tells a decoder the
     * profile (OpenCSD too: shared/docs etmv3-v7m.md 4.1). */
    if (cfg->v7m)
        src.core_type = cfg->v7m == 4 ? "Cortex-M4" : "Cortex-M3";
    src.regions = regions;
    src.n_regions = n_regions;
    /* An ETMv1/v2 port capture is never CoreSight-formatted (docs/etmv1.md). */
    if (tb_protocol_is_port(cfg->protocol) && formatted)
        return tb_enc_fail(err, errlen, TB_ERR_INVAL, "snapshot: a trace port capture "
                           "cannot be CoreSight-formatted");
    if (!formatted)
        return tb_snapshot_write(dir, &src, 1, trace, len,
                                 tb_protocol_is_port(cfg->protocol)
                                     ? tb_port_format_name(cfg->protocol)
                                     : "source_data",
                                 err, errlen);
    {
        tb_formatter *f = tb_formatter_new(TB_FRAME_MEM_ALIGNED);

        if (!f)
            return TB_ERR_NOMEM;
        rc = tb_formatter_put(f, cfg->trace_id, trace, len, tb_encoder_mem_sink, &m);
        if (rc >= 0)
            rc = tb_formatter_flush(f, tb_encoder_mem_sink, &m);
        tb_formatter_free(f);
    }
    if (rc >= 0)
        rc = tb_snapshot_write(dir, &src, 1, m.buf, m.len, "coresight", err,
                               errlen);
    else if (err && errlen)
        snprintf(err, errlen, "formatter: %s", tb_err_str(rc));
    free(m.buf);
    return rc;
}

/* ---- a snapshot written as the trace comes (encoder.h) ---- */

struct tb_encoder_snapshot {
    char dir[1024];
    char part[1100];         /* the buffer file while it grows */
    tb_config cfg;
    tb_formatter *fmt;       /* NULL: raw source stream */
    bool tpiu;               /* fmt with FSYNCs and HSYNCs: tpiu_coresight */
    FILE *f;
    uint64_t bytes;          /* buffer bytes written */
    int err;                 /* sticky */
};

tb_encoder_snapshot *tb_encoder_snapshot_open(const char *dir, const tb_config *cfg,
                                              bool formatted, char *err, size_t errlen)
{
    tb_encoder_snapshot *s;
    char stale[1100];
    tb_config own;

    if (err && errlen)
        err[0] = '\0';
    if (cfg && tb_struct_take(&own, sizeof own, cfg, TB_CONFIG_SIZE_MIN, "tb_config", err,
                              errlen) < 0)
        return NULL;
    if (cfg)
        cfg = &own;
    if (!dir || !*dir || !cfg || strlen(dir) >= sizeof s->dir ||
        (formatted && tb_protocol_is_port(cfg->protocol))) {
        tb_enc_fail(err, errlen, TB_ERR_INVAL, "snapshot: bad directory or configuration");
        return NULL;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        tb_enc_fail(err, errlen, TB_ERR_IO, "%s: cannot create: %s", dir, strerror(errno));
        return NULL;
    }
    if (!(s = calloc(1, sizeof *s))) {
        tb_enc_fail(err, errlen, TB_ERR_NOMEM, "snapshot: out of memory");
        return NULL;
    }
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    snprintf(s->part, sizeof s->part, "%s/trace_buffer.bin.part", dir);
    s->cfg = *cfg;
    /* A snapshot.ini left by an earlier run would make the directory
     * look complete while this run's buffer is still growing. */
    snprintf(stale, sizeof stale, "%s/snapshot.ini", dir);
    remove(stale);
    if (formatted && !(s->fmt = tb_formatter_new(TB_FRAME_MEM_ALIGNED))) {
        free(s);
        tb_enc_fail(err, errlen, TB_ERR_NOMEM, "snapshot: out of memory");
        return NULL;
    }
    if (!(s->f = fopen(s->part, "wb"))) {
        tb_enc_fail(err, errlen, TB_ERR_IO, "%s: cannot create: %s", s->part, strerror(errno));
        tb_formatter_free(s->fmt);
        free(s);
        return NULL;
    }
    setvbuf(s->f, NULL, _IOFBF, 1u << 18);
    return s;
}

static int snap_file_sink(void *ctx, const uint8_t *data, size_t len)
{
    tb_encoder_snapshot *s = ctx;

    if (len && fwrite(data, 1, len, s->f) != len)
        return s->err = TB_ERR_IO;
    s->bytes += len;
    return 0;
}

int tb_encoder_snapshot_sink(void *ctx, const uint8_t *data, size_t len)
{
    tb_encoder_snapshot *s = ctx;
    int rc;

    if (!s || (!data && len))
        return TB_ERR_INVAL;
    if (s->err)
        return s->err;
    rc = s->fmt ? tb_formatter_put(s->fmt, s->cfg.trace_id, data, len, snap_file_sink, s)
                : snap_file_sink(s, data, len);
    if (rc < 0 && !s->err)
        s->err = rc;
    return rc < 0 ? rc : 0;
}

int tb_encoder_snapshot_tpiu(tb_encoder_snapshot *s)
{
    tb_formatter *f;

    if (!s)
        return TB_ERR_INVAL;
    if (!s->fmt || s->bytes || s->err)
        return TB_ERR_STATE;
    if (!(f = tb_formatter_new(TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC)))
        return TB_ERR_NOMEM;
    tb_formatter_free(s->fmt);
    s->fmt = f;
    s->tpiu = true;
    return 0;
}

int tb_encoder_snapshot_sink_at(tb_encoder_snapshot *s, uint64_t cycle, const uint8_t *data,
                                size_t len)
{
    int rc;

    if (!s || (!data && len))
        return TB_ERR_INVAL;
    if (s->err)
        return s->err;
    if (s->tpiu && len && (rc = tb_formatter_tick(s->fmt, cycle, snap_file_sink, s)) < 0) {
        if (!s->err)
            s->err = rc;
        return rc;
    }
    return tb_encoder_snapshot_sink(s, data, len);
}

uint64_t tb_encoder_snapshot_bytes(const tb_encoder_snapshot *s)
{
    return s ? s->bytes : 0;
}

static void snap_free(tb_encoder_snapshot *s)
{
    if (s->f)
        fclose(s->f);
    tb_formatter_free(s->fmt);
    free(s);
}

void tb_encoder_snapshot_abort(tb_encoder_snapshot *s)
{
    if (!s)
        return;
    if (s->f) {
        fclose(s->f);
        s->f = NULL;
    }
    remove(s->part);
    snap_free(s);
}

int tb_encoder_snapshot_close(tb_encoder_snapshot *s, const tb_snap_region *regions,
                              size_t n_regions, char *err, size_t errlen)
{
    static const uint8_t none[1];
    tb_snap_out_source src;
    char path[1100];
    bool ptm;
    int rc;

    if (err && errlen)
        err[0] = '\0';
    if (!s)
        return TB_ERR_INVAL;
    if (!s->err && s->fmt)
        tb_formatter_flush(s->fmt, snap_file_sink, s);
    if (s->err) {
        rc = tb_enc_fail(err, errlen, s->err, "%s: %s", s->part, tb_err_str(s->err));
        tb_encoder_snapshot_abort(s);
        return rc;
    }
    rc = fclose(s->f);
    s->f = NULL;
    if (rc != 0) {
        rc = tb_enc_fail(err, errlen, TB_ERR_IO, "%s: write failed", s->part);
        tb_encoder_snapshot_abort(s);
        return rc;
    }
    ptm = s->cfg.protocol == TB_PROTO_PTM;
    memset(&src, 0, sizeof src);
    src.name = ptm ? "PTM_0" : "ETM_0";
    src.cfg = &s->cfg;
    src.core = "cpu_0";
    src.core_type = ptm ? "Cortex-A15" : "Cortex-A7"; /* as tb_encoder_write_snapshot */
    if (s->cfg.v7m)
        src.core_type = s->cfg.v7m == 4 ? "Cortex-M4" : "Cortex-M3";
    src.regions = regions;
    src.n_regions = n_regions;
    /* The ini files and dumps, with an empty buffer that the streamed one
     * then replaces: the same files tb_encoder_write_snapshot writes. */
    rc = tb_snapshot_write(s->dir, &src, 1, none, 0,
                           s->tpiu  ? "tpiu_coresight"
                           : s->fmt ? "coresight"
                           : tb_protocol_is_port(s->cfg.protocol)
                               ? tb_port_format_name(s->cfg.protocol)
                               : "source_data",
                           err, errlen);
    if (rc >= 0) {
        snprintf(path, sizeof path, "%s/trace_buffer.bin", s->dir);
        if (rename(s->part, path) != 0)
            rc = tb_enc_fail(err, errlen, TB_ERR_IO, "%s: cannot rename to %s: %s", s->part,
                             path, strerror(errno));
    }
    if (rc < 0) {
        tb_encoder_snapshot_abort(s);
        return rc;
    }
    snap_free(s);
    return 0;
}
