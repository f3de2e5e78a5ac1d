/*
 * tb_encoder for the trace ports, ETMv1 (docs/etmv1.md) and ETMv2
 * (docs/etmv2.md): the options and registers each port has, and a
 * tb_encoder that hands every record to the port's model (port_model.c
 * and etmvN_encoder.c), whose capture bytes go to the encoder's sink.
 */
#include "encoder_internal.h"
#include "port_model.h"

/* What the two ports accept, and their models. */
typedef struct port_proto {
    const char *name;
    unsigned max_minor;        /* the newest arch_minor modelled ... */
    const char *minor_why;     /* ... and the message beyond it */
    unsigned ctxid_minor;      /* context IDs from this minor on */
    const char *data_more;     /* what else data trace options lack */
    bool dataview;             /* ViewData ranges (dataview=) modelled */
    bool ooo;                  /* load misses (ooo=N) modelled */
    port_model *(*make)(const tb_encoder_opts *o, tb_trace_sink sink, void *ctx);
    int (*config)(const tb_encoder_opts *o, tb_config *cfg);
} port_proto;

static const port_proto etmv1_port = {
    .name = "ETMv1",
    .max_minor = 3, /* ETMv1.0-1.3 (IHI0014Q chapter 5) */
    .minor_why = "ETMv1 goes up to ETMv1.3 (v=3)",
    .ctxid_minor = 2, /* IHI0014Q 5.6.3 */
    /* Data trace (ETMCR[3:2]) is ETMv1's; ViewData ranges are not
     * modelled for it, out-of-order data and suppression are ETMv3's. */
    .data_more = "; dataview, ooo and suppress are not",
    .make = tb_etmv1_port_new,
    .config = tb_etmv1_port_config,
};

static const port_proto etmv2_port = {
    .name = "ETMv2",
    .max_minor = 0, /* ETMv2.0 (ETM10, IHI0014Q chapter 6) */
    .minor_why = "ETMv2.0 (v=0) is the only ETMv2 known",
    .ctxid_minor = 0,
    /* Data trace (docs/etmv2.md 9): ETMCR[3:2]; ViewData with partial
     * LSM tracing (6.4.4: Value Not Traced); load misses (ooo=N, M12);
     * no ETMv3 suppression. */
    .data_more = ", as are dataview and ooo with data=value or data=both",
    .dataview = true,
    .ooo = true,
    .make = tb_etmv2_port_new,
    .config = tb_etmv2_port_config,
};

static const port_proto *port_of(tb_protocol p)
{
    return p == TB_PROTO_ETMV1 ? &etmv1_port : &etmv2_port;
}

/* TB_ERR_CONFIG with the reason in err (options.c). */
#define FAIL(...) tb_enc_fail(err, errlen, TB_ERR_CONFIG, __VA_ARGS__)

int tb_enc_port_config_err(const tb_encoder_opts *o, tb_config *cfg, char *err,
                           size_t errlen)
{
    const port_proto *p = port_of(o->protocol);
    unsigned m = o->arch_minor;
    int rc;

    /* None of ETMv3's extras. */
    if (m > p->max_minor)
        return FAIL("v=%u: %s", m, p->minor_why);
    if (o->port_width != 4 && o->port_width != 8 && o->port_width != 16)
        return FAIL("port=%u: the %s port is 4, 8 or 16 bits wide", (unsigned)o->port_width,
                    p->name);
    if (o->ctxid_bytes != 0 && o->ctxid_bytes != 1 && o->ctxid_bytes != 2 &&
        o->ctxid_bytes != 4)
        return FAIL("ctxid=%u: must be 0, 1, 2 or 4", (unsigned)o->ctxid_bytes);
    if (o->ctxid_bytes && m < p->ctxid_minor)
        return FAIL("ctxid: context IDs need %s.%u or later (IHI0014Q 5.6.3), not %s.%u",
                    p->name, p->ctxid_minor, p->name, m);
    if (o->timestamps || o->return_stack || o->alt_branch || o->vmid)
        return FAIL("%s: not an %s feature (ETMv3/PTM only)",
                    o->timestamps ? "ts" : o->return_stack ? "rs" : o->alt_branch ? "alt"
                                                                                : "vmid",
                    p->name);
    if ((o->n_dranges && !p->dataview) || (o->ooo_latency && !p->ooo) || o->suppress_level)
        return FAIL("%s: not modelled for %s (data= is%s)",
                    o->n_dranges ? "dataview" : o->ooo_latency ? "ooo" : "suppress", p->name,
                    p->data_more);
    /* ETMv2 partial LSM tracing (6.4.4) leaves values out; with
     * addresses alone an LSM has one packet, which could not say where
     * the traced transfers begin. */
    if (o->ooo_latency && !(o->data_trace & 1))
        return FAIL("ooo: an %s load miss's value comes later (IHI0014Q 6.4.1 Table 6.2, Load "
                    "Miss data); use data=value or data=both", p->name);
    if (o->n_dranges && !(o->data_trace & 1))
        return FAIL("dataview: %s ViewData selects transfer values (IHI0014Q 6.4.4); use "
                    "data=value or data=both", p->name);
    if (o->data_trace > 3)
        return FAIL("data: ETMCR[3:2] is two bits");
    if (o->vector_base & 0x1F)
        return FAIL("vectors=0x%x: the vector base must be 32-byte aligned",
                    (unsigned)o->vector_base);
    if (o->n_ranges > TB_ENC_MAX_RANGES)
        return FAIL("include/exclude: at most %u ranges", TB_ENC_MAX_RANGES);
    rc = p->config(o, cfg);
    if (rc == PORT_CFG_FIFO)
        return FAIL("fifo=%u: the %s FIFO model holds at most 4096 bytes",
                    (unsigned)o->fifo_depth, p->name);
    if (rc)
        return FAIL("%s: inconsistent options", p->name);
    return 0;
}

static int null_sink(void *ctx, const uint8_t *data, size_t len)
{
    (void)ctx;
    (void)data;
    (void)len;
    return 0;
}

int tb_enc_port_new(tb_encoder *e)
{
    e->port = port_of(e->o.protocol)->make(&e->o, e->sink ? e->sink : null_sink,
                                           e->sink_ctx);
    return e->port ? 0 : TB_ERR_NOMEM;
}

/* Errors are sticky in both: tb_encoder_error() reads e->err. */
int tb_enc_port_push(tb_encoder *e, const tb_exec_record *r)
{
    int rc = tb_port_push(e->port, r);

    if (rc < 0)
        e->err = rc;
    return rc;
}

int tb_enc_port_finish(tb_encoder *e)
{
    int rc = tb_port_finish(e->port);

    if (rc < 0)
        e->err = rc;
    e->finished = true;
    return rc;
}

const tb_encoder_stats *tb_enc_port_stats(const tb_encoder *e)
{
    return &e->port->st;
}

void tb_enc_port_set_cbs(tb_encoder *e)
{
    e->port->pcb = e->pcb;
    e->port->pctx = e->pcb_ctx;
    e->port->ocb = e->ocb;
    e->port->octx = e->ocb_ctx;
}

void tb_enc_port_free(tb_encoder *e)
{
    free(e->port);
    e->port = NULL;
}
