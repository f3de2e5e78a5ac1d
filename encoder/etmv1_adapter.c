/*
 * tb_encoder for ETMv1 (docs/etmv1.md): the options and registers of the
 * trace port, and a tb_encoder that hands every record to the ETMv1 port
 * model (etmv1_encoder.c), whose capture bytes go to the encoder's sink.
 */
#include <stdarg.h>
#include <stdio.h>

#include "encoder_internal.h"
#include "tracebench/etmv1.h"

static int v1_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int v1_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return TB_ERR_CONFIG;
}

int tb_enc_etmv1_config_err(const tb_encoder_opts *o, tb_config *cfg, char *err,
                            size_t errlen)
{
    tb_etmv1_encoder_opts v;
    tb_etmv1_config c;
    unsigned m = o->arch_minor;

    /* ETMv1.0-1.3 (IHI0014Q chapter 5); none of ETMv3's extras. */
    if (m > 3)
        return v1_fail(err, errlen, "v=%u: ETMv1 goes up to ETMv1.3 (v=3)", m);
    if (o->port_width != 4 && o->port_width != 8 && o->port_width != 16)
        return v1_fail(err, errlen, "port=%u: the ETMv1 port is 4, 8 or 16 bits wide",
                       (unsigned)o->port_width);
    if (o->ctxid_bytes != 0 && o->ctxid_bytes != 1 && o->ctxid_bytes != 2 &&
        o->ctxid_bytes != 4)
        return v1_fail(err, errlen, "ctxid=%u: must be 0, 1, 2 or 4",
                       (unsigned)o->ctxid_bytes);
    if (o->ctxid_bytes && m < 2)
        return v1_fail(err, errlen, "ctxid: context IDs need ETMv1.2 or later "
                       "(IHI0014Q 5.6.3), not ETMv1.%u", m);
    if (o->timestamps || o->return_stack || o->alt_branch || o->vmid)
        return v1_fail(err, errlen, "%s: not an ETMv1 feature (ETMv3/PTM only)",
                       o->timestamps ? "ts" : o->return_stack ? "rs"
                       : o->alt_branch ? "alt" : "vmid");
    /* Data trace (ETMCR[3:2]) is ETMv1's; ViewData ranges are not
     * modelled for it, out-of-order data and suppression are ETMv3's. */
    if (o->n_dranges || o->ooo_latency || o->suppress_level)
        return v1_fail(err, errlen, "%s: not modelled for ETMv1 (data= is; dataview, ooo "
                       "and suppress are not)", o->n_dranges ? "dataview"
                       : o->ooo_latency ? "ooo" : "suppress");
    if (o->data_trace > 3)
        return v1_fail(err, errlen, "data: ETMCR[3:2] is two bits");
    if (o->vector_base & 0x1F)
        return v1_fail(err, errlen, "vectors=0x%x: the vector base must be 32-byte "
                       "aligned", (unsigned)o->vector_base);
    if (o->n_ranges > TB_ENC_MAX_RANGES)
        return v1_fail(err, errlen, "include/exclude: at most %u ranges",
                       TB_ENC_MAX_RANGES);
    tb_etmv1_encoder_opts_from(&v, o);
    if (tb_etmv1_encoder_config(&v, &c) < 0)
        return v1_fail(err, errlen, "fifo=%u: the ETMv1 FIFO model holds at most "
                       "4096 bytes", (unsigned)o->fifo_depth);
    if (tb_config_from_etmv1(cfg, tb_etmv1_etmcr(&c), c.minor, c.vector_base) < 0)
        return v1_fail(err, errlen, "ETMv1: inconsistent options");
    return 0;
}

static int v1_null_sink(void *ctx, const uint8_t *data, size_t len)
{
    (void)ctx;
    (void)data;
    (void)len;
    return 0;
}

int tb_enc_etmv1_new(tb_encoder *e)
{
    tb_etmv1_encoder_opts v;

    tb_etmv1_encoder_opts_from(&v, &e->o);
    e->v1 = tb_etmv1_encoder_new_bytes(&v, e->sink ? e->sink : v1_null_sink,
                                       e->sink_ctx);
    return e->v1 ? 0 : TB_ERR_NOMEM;
}

/* Errors are sticky in both: tb_encoder_error() reads e->err. */
int tb_enc_etmv1_push(tb_encoder *e, const tb_exec_record *r)
{
    int rc = tb_etmv1_encoder_push(e->v1, r);

    if (rc < 0)
        e->err = rc;
    return rc;
}

int tb_enc_etmv1_finish(tb_encoder *e)
{
    int rc = tb_etmv1_encoder_finish(e->v1);

    if (rc < 0)
        e->err = rc;
    e->finished = true;
    return rc;
}

const tb_encoder_stats *tb_enc_etmv1_stats(const tb_encoder *e)
{
    return tb_etmv1_encoder_get_stats(e->v1);
}

void tb_enc_etmv1_set_cbs(tb_encoder *e)
{
    tb_etmv1_encoder_set_packet_cb(e->v1, e->pcb, e->pcb_ctx);
    tb_etmv1_encoder_set_overflow_cb(e->v1, e->ocb, e->ocb_ctx);
}

void tb_enc_etmv1_free(tb_encoder *e)
{
    tb_etmv1_encoder_free(e->v1);
    e->v1 = NULL;
}
