/*
 * tb_encoder for ETMv2 (docs/etmv2.md): as etmv2_adapter.c, a tb_encoder
 * that hands every record to the ETMv2 port model (etmv2_encoder.c).
 */
#include <stdarg.h>
#include <stdio.h>

#include "encoder_internal.h"
#include "tracebench/etmv2.h"

static int v2_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int v2_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return TB_ERR_CONFIG;
}

int tb_enc_etmv2_config_err(const tb_encoder_opts *o, tb_config *cfg, char *err,
                            size_t errlen)
{
    tb_etmv2_encoder_opts v;
    tb_etmv2_config c;
    unsigned m = o->arch_minor;

    /* ETMv2.0 (ETM10, IHI0014Q chapter 6); none of ETMv3's extras. */
    if (m != 0)
        return v2_fail(err, errlen, "v=%u: ETMv2.0 (v=0) is the only ETMv2 known", m);
    if (o->port_width != 4 && o->port_width != 8 && o->port_width != 16)
        return v2_fail(err, errlen, "port=%u: the ETMv2 port is 4, 8 or 16 bits wide",
                       (unsigned)o->port_width);
    if (o->ctxid_bytes != 0 && o->ctxid_bytes != 1 && o->ctxid_bytes != 2 &&
        o->ctxid_bytes != 4)
        return v2_fail(err, errlen, "ctxid=%u: must be 0, 1, 2 or 4",
                       (unsigned)o->ctxid_bytes);
    if (o->timestamps || o->return_stack || o->alt_branch || o->vmid)
        return v2_fail(err, errlen, "%s: not an ETMv2 feature (ETMv3/PTM only)",
                       o->timestamps ? "ts" : o->return_stack ? "rs"
                       : o->alt_branch ? "alt" : "vmid");
    /* Data trace (docs/etmv2.md 9): ETMCR[3:2]; no ViewData (ETMv2 has
     * partial LSM tracing, 6.4.4, not modelled), load misses (U9) nor
     * ETMv3's suppression. */
    if (o->n_dranges || o->ooo_latency || o->suppress_level)
        return v2_fail(err, errlen, "%s: not modelled for ETMv2 (data= is)",
                       o->n_dranges ? "dataview" : o->ooo_latency ? "ooo" : "suppress");
    if (o->data_trace > 3)
        return v2_fail(err, errlen, "data: ETMCR[3:2] is two bits");
    if (o->vector_base & 0x1F)
        return v2_fail(err, errlen, "vectors=0x%x: the vector base must be 32-byte "
                       "aligned", (unsigned)o->vector_base);
    if (o->n_ranges > TB_ENC_MAX_RANGES)
        return v2_fail(err, errlen, "include/exclude: at most %u ranges",
                       TB_ENC_MAX_RANGES);
    tb_etmv2_encoder_opts_from(&v, o);
    if (tb_etmv2_encoder_config(&v, &c) < 0)
        return v2_fail(err, errlen, "fifo=%u: the ETMv2 FIFO model holds at most "
                       "4096 bytes", (unsigned)o->fifo_depth);
    if (tb_config_from_etmv2(cfg, tb_etmv2_etmcr(&c), c.minor, c.vector_base) < 0)
        return v2_fail(err, errlen, "ETMv2: inconsistent options");
    return 0;
}

static int v2_null_sink(void *ctx, const uint8_t *data, size_t len)
{
    (void)ctx;
    (void)data;
    (void)len;
    return 0;
}

int tb_enc_etmv2_new(tb_encoder *e)
{
    tb_etmv2_encoder_opts v;

    tb_etmv2_encoder_opts_from(&v, &e->o);
    e->v2 = tb_etmv2_encoder_new_bytes(&v, e->sink ? e->sink : v2_null_sink,
                                       e->sink_ctx);
    return e->v2 ? 0 : TB_ERR_NOMEM;
}

/* Errors are sticky in both: tb_encoder_error() reads e->err. */
int tb_enc_etmv2_push(tb_encoder *e, const tb_exec_record *r)
{
    int rc = tb_etmv2_encoder_push(e->v2, r);

    if (rc < 0)
        e->err = rc;
    return rc;
}

int tb_enc_etmv2_finish(tb_encoder *e)
{
    int rc = tb_etmv2_encoder_finish(e->v2);

    if (rc < 0)
        e->err = rc;
    e->finished = true;
    return rc;
}

const tb_encoder_stats *tb_enc_etmv2_stats(const tb_encoder *e)
{
    return tb_etmv2_encoder_get_stats(e->v2);
}

void tb_enc_etmv2_set_cbs(tb_encoder *e)
{
    tb_etmv2_encoder_set_packet_cb(e->v2, e->pcb, e->pcb_ctx);
    tb_etmv2_encoder_set_overflow_cb(e->v2, e->ocb, e->ocb_ctx);
}

void tb_enc_etmv2_free(tb_encoder *e)
{
    tb_etmv2_encoder_free(e->v2);
    e->v2 = NULL;
}
