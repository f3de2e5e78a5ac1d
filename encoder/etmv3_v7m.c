/*
 * ETMv3 as the ETM-M3/ETM-M4 of a Cortex-M3/M4 implements it (IHI0014Q
 * 7.5 "Additional trace features for ARMv7-M processors", 7.6; Cortex-M3
 * TRM DDI0337G 14, DDI0337I 10; docs/cortex-m.md 2): the options it has,
 * its ID register, the v7-M exception numbers in the exception bytes and
 * the exception return packet of a tail-chain.  encoder.c and
 * etmv3_encoder.c call in here only when tb_encoder_opts.v7m is set.
 */
#include <stdio.h>
#include <string.h>

#include "encoder_internal.h"

static int fail(char *err, size_t errlen, const char *fmt, const char *what, const char *why)
{
    if (err && errlen)
        snprintf(err, errlen, fmt, what, why);
    return TB_ERR_CONFIG;
}

int tb_encoder_opts_v7m(tb_encoder_opts *o, unsigned core)
{
    tb_encoder_opts own, orig;

    if (!o || (core != 0 && core != 3 && core != 4) || tb_enc_opts_take(&own, o, NULL, 0) < 0)
        return TB_ERR_INVAL;
    orig = own;
    own.v7m = (uint8_t)core;
    /* The M ETMs implement the alternative branch encoding (ETMIDR[20]
     * = 1, DDI0337I Table 10.11), which the v7-M exception bytes after a
     * short address need (IHI0014Q 7.3.5; shared/docs etmv3-v7m.md 3.2). */
    if (core)
        own.alt_branch = true;
    return tb_enc_opts_give(o, &own, &orig, NULL, 0);
}

/* What the ETM-M3/M4 has not (DDI0337I 10.3.3 ETMCR, Table 10.11
 * ETMIDR; DDI0337E 15.5: instruction trace only). */
int tb_enc_v7m_config_err(const tb_encoder_opts *o, char *err, size_t errlen)
{
    const char *fmt = "%s: %s";

    if (o->protocol != TB_PROTO_ETMV3)
        return fail(err, errlen, fmt, tb_protocol_name(o->protocol),
                    "a Cortex-M3/M4 is traced by its ETM-M3/ETM-M4, ETMv3 only (use "
                    "--protocol etmv3)");
    if (o->arch_minor < 4)
        return fail(err, errlen, fmt, "v",
                    "the ETMv3 support for ARMv7-M (exception numbers to 511, the exception "
                    "return packet) starts with ETMv3.4 (IHI0014Q 7.5): v=4 or v=5");
    if (!o->alt_branch)
        return fail(err, errlen, fmt, "alt",
                    "the ETM-M3/M4 use the alternative branch encoding (ETMIDR[20] = 1)");
    if (o->cycle_accurate)
        return fail(err, errlen, fmt, "ca",
                    "the ETM-M3/M4 have no cycle-accurate tracing (ETMCR[12] is reserved, "
                    "DDI0337I 10.3.3)");
    if (o->data_trace || o->n_dranges || o->ooo_latency || o->suppress_level || o->pc_first)
        return fail(err, errlen, fmt,
                    o->data_trace ? "data" : o->n_dranges ? "dataview" : o->ooo_latency ? "ooo"
                    : o->suppress_level ? "suppress" : "pcfirst",
                    "the ETM-M3/M4 trace instructions only (ETMIDR[16]: data tracing not "
                    "supported, DDI0337I Table 10.11)");
    if (o->ctxid_bytes)
        return fail(err, errlen, fmt, "ctxid",
                    "the ETM-M3/M4 have no context ID (ETMCR[15:14] reserved, DDI0337I "
                    "10.3.3)");
    if (o->vmid)
        return fail(err, errlen, fmt, "vmid", "ARMv7-M has no virtualization");
    if (o->dual_issue)
        return fail(err, errlen, fmt, "dual",
                    "the Cortex-M3/M4 retire one instruction at a time");
    return 0;
}

/* ETMIDR of the ETM-M3 r2p1 (DDI0337I Table 10.11): Arm, [20]
 * alternative branch encoding, [19] 0 (no Security Extensions: always
 * Secure), [18] a 32-bit Thumb instruction traced as one, [16] 0 (no data
 * trace), family 0xF, major 2 (ETMv3), minor 5; the revision nibble was
 * cut from the page read: 0 ([U]).  v=4 gives the earlier ETM-M3 (r1,
 * r2p0: ETMv3.4, DDI0337E 15.5). */
uint32_t tb_enc_v7m_etmidr(const tb_encoder_opts *o)
{
    return 0x41000000u | (1u << 20) | (1u << 18) | 0xF000u | 0x200u |
           ((uint32_t)o->arch_minor << 4);
}

/* The traced exception number of an exception record (DDI0337G Table
 * 14-8: not the IPSR number). */
uint16_t tb_enc_v7m_exc_num(const tb_exec_record *r)
{
    int t = tb_v7m_trace_number(r->u.exc.num);

    return t < 0 ? 0 : (uint16_t)t;
}
