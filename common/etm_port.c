/*
 * The ETMv1 and ETMv2 trace ports' shared ground, which the encoders and
 * the parsers and decoders both need: the capture header and its framer
 * (tracebench/etm_port.h; docs/etmv1.md 2), each protocol's port
 * configuration and its ETMCR mapping (IHI0014Q 3.5.1), the capture
 * header per protocol and the sample word (tracebench/etmv1.h,
 * etmv2.h).  Here in common/ so that the decoder links without the
 * encoder.
 */
#include <string.h>

#include "tracebench/etm_port.h"
#include "tracebench/etmv1.h"
#include "tracebench/etmv2.h"
#include "tracebench/types.h"
#include "struct_size.h"

static const uint8_t magic[8] = {'T', 'B', 'E', 'T', 'M', 'C', 'A', 'P'};

void tb_etm_port_header_put(uint8_t proto, uint8_t minor, uint8_t width,
                            uint32_t etmcr, uint8_t out[16])
{
    memcpy(out, magic, 8);
    out[8] = 1; /* format version */
    out[9] = proto;
    out[10] = minor;
    out[11] = width;
    out[12] = (uint8_t)etmcr;
    out[13] = (uint8_t)(etmcr >> 8);
    out[14] = (uint8_t)(etmcr >> 16);
    out[15] = (uint8_t)(etmcr >> 24);
}

int tb_etm_port_header_get(const uint8_t in[16], uint8_t *proto, uint8_t *minor,
                           uint8_t *width, uint32_t *etmcr)
{
    if (memcmp(in, magic, 8) || in[8] != 1)
        return TB_ERR_FORMAT;
    *proto = in[9];
    *minor = in[10];
    *width = in[11];
    *etmcr = (uint32_t)in[12] | (uint32_t)in[13] << 8 | (uint32_t)in[14] << 16 |
             (uint32_t)in[15] << 24;
    return 0;
}

int tb_etm_port_framer_next(tb_etm_port_framer *f, const uint8_t *data, size_t len,
                            size_t *i)
{
    while (*i < len && !f->hdr_done) {
        f->hdr[f->hdr_n++] = data[(*i)++];
        f->pos++;
        if (f->hdr_n == TB_ETM_PORT_HDR_BYTES) {
            f->hdr_done = true;
            return TB_ETM_PORT_HEADER;
        }
    }
    while (*i < len) {
        if (!f->part_n)
            f->part_index = f->pos;
        f->part[f->part_n++] = data[(*i)++];
        f->pos++;
        if (f->part_n == TB_ETM_PORT_SAMPLE_BYTES) {
            f->part_n = 0;
            return TB_ETM_PORT_SAMPLE;
        }
    }
    return TB_ETM_PORT_NEED;
}

/* ---- ETMv1: configuration, capture header, sample word ---- */

void tb_etmv1_config_init(tb_etmv1_config *c)
{
    memset(c, 0, sizeof *c);
    c->minor = 3;
    c->port_width = 8;
}

int tb_etmv1_config_check(const tb_etmv1_config *c)
{
    if (!c || c->minor > 3)
        return TB_ERR_CONFIG;
    if (c->port_width != 4 && c->port_width != 8 && c->port_width != 16)
        return TB_ERR_CONFIG;
    if (c->ctxid_bytes != 0 && c->ctxid_bytes != 1 && c->ctxid_bytes != 2 &&
        c->ctxid_bytes != 4)
        return TB_ERR_CONFIG;
    if (c->ctxid_bytes && c->minor < 2) /* context ID from v1.2 (5.6.3) */
        return TB_ERR_CONFIG;
    if ((c->vector_base & 0x1F) || c->data_trace > 3)
        return TB_ERR_CONFIG;
    return 0;
}

uint32_t tb_etmv1_etmcr(const tb_etmv1_config *c)
{
    uint32_t r = 0;

    r |= (uint32_t)(c->port_width == 4 ? 0 : c->port_width == 8 ? 1 : 2) << 4;
    r |= (uint32_t)(c->data_trace & 3) << 2;
    if (c->branch_output)
        r |= 1u << 8;
    if (c->cycle_accurate)
        r |= 1u << 12;
    r |= (uint32_t)(c->ctxid_bytes == 0 ? 0 : c->ctxid_bytes == 1 ? 1
                    : c->ctxid_bytes == 2 ? 2 : 3) << 14;
    return r;
}

int tb_etmv1_config_from_etmcr(tb_etmv1_config *c, uint32_t etmcr,
                               uint8_t minor)
{
    static const uint8_t widths[3] = {4, 8, 16};
    static const uint8_t cid[4] = {0, 1, 2, 4};
    unsigned ps = (etmcr >> 4) & 7;

    tb_etmv1_config_init(c);
    if (ps > 2 || (etmcr & (1u << 21)))
        return TB_ERR_CONFIG;
    c->minor = minor;
    c->port_width = widths[ps];
    c->data_trace = (etmcr >> 2) & 3;
    c->branch_output = (etmcr >> 8) & 1;
    c->cycle_accurate = (etmcr >> 12) & 1;
    c->ctxid_bytes = cid[(etmcr >> 14) & 3];
    return tb_etmv1_config_check(c);
}

int tb_etmv1_config_from_tb(tb_etmv1_config *c, const tb_config *cfg)
{
    tb_config own;
    int rc;

    if (cfg && !(cfg = tb_config_take(&own, cfg, NULL, 0)))
        return TB_ERR_INVAL; /* a size 0 or absurd */
    if (!c || !cfg || cfg->protocol != TB_PROTO_ETMV1)
        return TB_ERR_CONFIG;
    rc = tb_etmv1_config_from_etmcr(c, cfg->etmcr, cfg->arch_minor);
    c->vector_base = cfg->vector_base;
    return rc < 0 ? rc : tb_etmv1_config_check(c);
}

static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

void tb_etmv1_capture_header(const tb_etmv1_config *c, uint8_t out[16])
{
    tb_etm_port_header_put(TB_ETM_PORT_V1, c->minor, c->port_width, tb_etmv1_etmcr(c), out);
}

int tb_etmv1_capture_parse_header(const uint8_t in[16], tb_etmv1_config *c)
{
    tb_etmv1_config t;
    uint8_t proto, minor, width;
    uint32_t etmcr;

    if (tb_etm_port_header_get(in, &proto, &minor, &width, &etmcr) < 0 ||
        proto != TB_ETM_PORT_V1)
        return TB_ERR_FORMAT;
    if (tb_etmv1_config_from_etmcr(&t, etmcr, minor) < 0)
        return TB_ERR_FORMAT;
    if (t.port_width != width)
        return TB_ERR_FORMAT;
    if (c) {
        t.vector_base = c->vector_base;
        *c = t;
    }
    return 0;
}

void tb_etmv1_sample_pack(const tb_etmv1_sample *s, uint8_t out[4])
{
    put_le32(out, (uint32_t)(s->pipestat & 15) | (uint32_t)(s->tracesync & 1) << 4 |
                      (uint32_t)s->tracepkt << 8);
}

int tb_etmv1_sample_unpack(const uint8_t in[4], tb_etmv1_sample *s)
{
    uint32_t v = get_le32(in);

    s->pipestat = v & 15;
    s->tracesync = (v >> 4) & 1;
    s->tracepkt = (uint16_t)(v >> 8);
    return (v & 0xFF0000E0u) ? TB_ERR_FORMAT : 0;
}

/* ---- ETMv2: configuration and capture header ---- */

void tb_etmv2_config_init(tb_etmv2_config *c)
{
    memset(c, 0, sizeof *c);
    c->port_width = 8;
}

int tb_etmv2_config_check(const tb_etmv2_config *c)
{
    if (!c || c->minor != 0) /* ETMv2.0 (ETM10) is the only one known */
        return TB_ERR_CONFIG;
    if (c->port_width != 4 && c->port_width != 8 && c->port_width != 16)
        return TB_ERR_CONFIG;
    if (c->ctxid_bytes != 0 && c->ctxid_bytes != 1 && c->ctxid_bytes != 2 &&
        c->ctxid_bytes != 4)
        return TB_ERR_CONFIG;
    if (c->vector_base & 0x1F || c->data_trace > 3)
        return TB_ERR_CONFIG;
    return 0;
}

uint32_t tb_etmv2_etmcr(const tb_etmv2_config *c)
{
    tb_etmv1_config v1;

    /* Same ETMCR fields as ETMv1 (IHI0014Q 3.5.1). */
    tb_etmv1_config_init(&v1);
    v1.port_width = c->port_width;
    v1.branch_output = c->branch_output;
    v1.cycle_accurate = c->cycle_accurate;
    v1.ctxid_bytes = c->ctxid_bytes;
    v1.data_trace = c->data_trace;
    return tb_etmv1_etmcr(&v1);
}

int tb_etmv2_config_from_etmcr(tb_etmv2_config *c, uint32_t etmcr, uint8_t minor)
{
    tb_etmv1_config v1;

    tb_etmv2_config_init(c);
    /* minor 3 only to borrow ETMv1's field reader (any context ID size). */
    if (tb_etmv1_config_from_etmcr(&v1, etmcr, 3) < 0)
        return TB_ERR_CONFIG;
    c->minor = minor;
    c->port_width = v1.port_width;
    c->branch_output = v1.branch_output;
    c->cycle_accurate = v1.cycle_accurate;
    c->ctxid_bytes = v1.ctxid_bytes;
    c->data_trace = v1.data_trace;
    return tb_etmv2_config_check(c);
}

int tb_etmv2_config_from_tb(tb_etmv2_config *c, const tb_config *cfg)
{
    tb_config own;
    int rc;

    if (cfg && !(cfg = tb_config_take(&own, cfg, NULL, 0)))
        return TB_ERR_INVAL; /* a size 0 or absurd */
    if (!c || !cfg || cfg->protocol != TB_PROTO_ETMV2)
        return TB_ERR_CONFIG;
    rc = tb_etmv2_config_from_etmcr(c, cfg->etmcr, cfg->arch_minor);
    c->vector_base = cfg->vector_base;
    return rc < 0 ? rc : tb_etmv2_config_check(c);
}

void tb_etmv2_capture_header(const tb_etmv2_config *c, uint8_t out[16])
{
    tb_etm_port_header_put(TB_ETM_PORT_V2, c->minor, c->port_width, tb_etmv2_etmcr(c), out);
}

int tb_etmv2_capture_parse_header(const uint8_t in[16], tb_etmv2_config *c)
{
    tb_etmv2_config t;
    uint8_t proto, minor, width;
    uint32_t etmcr;

    if (tb_etm_port_header_get(in, &proto, &minor, &width, &etmcr) < 0 ||
        proto != TB_ETM_PORT_V2)
        return TB_ERR_FORMAT;
    if (tb_etmv2_config_from_etmcr(&t, etmcr, minor) < 0 || t.port_width != width)
        return TB_ERR_FORMAT;
    if (c) {
        t.vector_base = c->vector_base;
        t.phantoms = c->phantoms;
        *c = t;
    }
    return 0;
}
