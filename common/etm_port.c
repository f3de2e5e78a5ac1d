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

/* ---- the port configuration (etm_port.h; etmv1.h, etmv2.h) ----
 * One struct for both protocols, the same ETMCR mapping; a port_kind
 * holds what differs (the capture's protocol byte, the checks, whether
 * the header reader keeps the caller's phantoms).  The public functions
 * take the caller's struct as this build's (struct_size.h) and give back
 * only its bytes. */

typedef struct port_kind {
    const char *what;       /* the type's name, for tb_struct_take */
    uint8_t proto;          /* capture header protocol byte */
    tb_protocol protocol;
    /* The protocol's own refusals, after the common ones. */
    int (*check)(const tb_etm_port_config *c);
    bool keep_phantoms;     /* an encoder choice, not in the header */
} port_kind;

/* ETMCR [6:4] port size, [3:2] data trace, [8] branch output, [12] cycle
 * accurate, [15:14] context ID size (IHI0014Q 3.5.1; the same for ETMv2). */
static uint32_t etmcr_of(const tb_etm_port_config *c)
{
    uint32_t r = 0;
    uint8_t n = c->ctxid_bytes;

    r |= (uint32_t)(c->port_width == 4 ? 0 : c->port_width == 8 ? 1 : 2) << 4;
    r |= (uint32_t)(c->data_trace & 3) << 2;
    if (c->branch_output)
        r |= 1u << 8;
    if (c->cycle_accurate)
        r |= 1u << 12;
    r |= (uint32_t)(n == 0 ? 0 : n == 1 ? 1 : n == 2 ? 2 : 3) << 14;
    return r;
}

static int check_of(const port_kind *k, const tb_etm_port_config *c)
{
    if (c->port_width != 4 && c->port_width != 8 && c->port_width != 16)
        return TB_ERR_CONFIG;
    if (c->ctxid_bytes != 0 && c->ctxid_bytes != 1 && c->ctxid_bytes != 2 &&
        c->ctxid_bytes != 4)
        return TB_ERR_CONFIG;
    if ((c->vector_base & 0x1F) || c->data_trace > 3)
        return TB_ERR_CONFIG;
    return k->check(c);
}

/* From ETMCR (the reverse of etmcr_of): the defaults, the fields, then
 * the check's verdict. */
static int fill_of(const port_kind *k, tb_etm_port_config *c, uint32_t etmcr, uint8_t minor)
{
    static const uint8_t widths[3] = {4, 8, 16};
    static const uint8_t cid[4] = {0, 1, 2, 4};
    unsigned ps = (etmcr >> 4) & 7;

    tb_etm_port_config_init(c, minor);
    if (ps > 2 || (etmcr & (1u << 21)))
        return TB_ERR_CONFIG;
    c->port_width = widths[ps];
    c->data_trace = (etmcr >> 2) & 3;
    c->branch_output = (etmcr >> 8) & 1;
    c->cycle_accurate = (etmcr >> 12) & 1;
    c->ctxid_bytes = cid[(etmcr >> 14) & 3];
    return check_of(k, c);
}

/* The caller's c as this build's in *own: 0, or TB_ERR_INVAL (NULL, or a
 * size refused). */
static int port_take(const port_kind *k, tb_etm_port_config *own, const void *c)
{
    if (!c || tb_struct_take(own, sizeof *own, c, TB_ETM_PORT_CONFIG_SIZE_MIN, k->what, NULL,
                             0) < 0)
        return TB_ERR_INVAL;
    return 0;
}

/* t back into the caller's c (own: c as taken): rc, or TB_ERR_INVAL for a
 * value past c's size (c then unchanged). */
static int port_give(const port_kind *k, void *c, const tb_etm_port_config *t,
                     const tb_etm_port_config *own, int rc)
{
    return tb_struct_give(c, t, own, sizeof *t, k->what, NULL, 0) < 0 ? TB_ERR_INVAL : rc;
}

static int port_check(const port_kind *k, const void *c)
{
    tb_etm_port_config own;

    if (!c)
        return TB_ERR_CONFIG;
    return port_take(k, &own, c) < 0 ? TB_ERR_INVAL : check_of(k, &own);
}

static uint32_t port_etmcr(const port_kind *k, const void *c)
{
    tb_etm_port_config own;

    return port_take(k, &own, c) < 0 ? 0 : etmcr_of(&own);
}

static int port_from_etmcr(const port_kind *k, void *c, uint32_t etmcr, uint8_t minor)
{
    tb_etm_port_config own, t;

    if (port_take(k, &own, c) < 0)
        return TB_ERR_INVAL;
    return port_give(k, c, &t, &own, fill_of(k, &t, etmcr, minor));
}

static int port_from_tb(const port_kind *k, void *c, const tb_config *cfg)
{
    tb_etm_port_config own, t;
    tb_config ownc;
    int rc;

    if (cfg && !(cfg = tb_config_take(&ownc, cfg, NULL, 0)))
        return TB_ERR_INVAL; /* a size 0 or absurd */
    if (!c || !cfg || cfg->protocol != k->protocol)
        return TB_ERR_CONFIG;
    if (port_take(k, &own, c) < 0)
        return TB_ERR_INVAL;
    rc = fill_of(k, &t, cfg->etmcr, cfg->arch_minor);
    t.vector_base = cfg->vector_base;
    if (rc == 0)
        rc = check_of(k, &t);
    return port_give(k, c, &t, &own, rc);
}

static int port_header(const port_kind *k, const void *c, uint8_t out[16])
{
    tb_etm_port_config own;

    if (port_take(k, &own, c) < 0)
        return TB_ERR_INVAL;
    tb_etm_port_header_put(k->proto, own.minor, own.port_width, etmcr_of(&own), out);
    return 0;
}

static int port_parse_header(const port_kind *k, const uint8_t in[16], void *c)
{
    tb_etm_port_config own, t;
    uint8_t proto, minor, width;
    uint32_t etmcr;

    if (c && port_take(k, &own, c) < 0)
        return TB_ERR_INVAL;
    if (tb_etm_port_header_get(in, &proto, &minor, &width, &etmcr) < 0 || proto != k->proto)
        return TB_ERR_FORMAT;
    if (fill_of(k, &t, etmcr, minor) < 0 || t.port_width != width)
        return TB_ERR_FORMAT;
    if (!c)
        return 0;
    t.vector_base = own.vector_base;
    if (k->keep_phantoms)
        t.phantoms = own.phantoms;
    return port_give(k, c, &t, &own, 0);
}

/* Port N's public configuration functions (etmvN.h), the same for both
 * but for their types, over its N_kind. */
#define PORT_CONFIG_API(N)                                                             \
    int tb_##N##_config_check(const tb_##N##_config *c)                                \
    {                                                                                  \
        return port_check(&N##_kind, c);                                               \
    }                                                                                  \
    uint32_t tb_##N##_etmcr(const tb_##N##_config *c)                                  \
    {                                                                                  \
        return port_etmcr(&N##_kind, c);                                               \
    }                                                                                  \
    int tb_##N##_config_from_etmcr(tb_##N##_config *c, uint32_t etmcr, uint8_t minor)  \
    {                                                                                  \
        return port_from_etmcr(&N##_kind, c, etmcr, minor);                            \
    }                                                                                  \
    int tb_##N##_config_from_tb(tb_##N##_config *c, const tb_config *cfg)              \
    {                                                                                  \
        return port_from_tb(&N##_kind, c, cfg);                                        \
    }                                                                                  \
    int tb_##N##_capture_header(const tb_##N##_config *c, uint8_t out[16])             \
    {                                                                                  \
        return port_header(&N##_kind, c, out);                                         \
    }                                                                                  \
    int tb_##N##_capture_parse_header(const uint8_t in[16], tb_##N##_config *c)        \
    {                                                                                  \
        return port_parse_header(&N##_kind, in, c);                                    \
    }

/* ---- ETMv1's configuration, sample word ---- */

static int etmv1_check(const tb_etm_port_config *c)
{
    if (c->minor > 3 || c->phantoms)
        return TB_ERR_CONFIG;
    if (c->ctxid_bytes && c->minor < 2) /* context ID from v1.2 (5.6.3) */
        return TB_ERR_CONFIG;
    return 0;
}

static const port_kind etmv1_kind = {"tb_etmv1_config", TB_ETM_PORT_V1, TB_PROTO_ETMV1,
                                     etmv1_check, false};

PORT_CONFIG_API(etmv1)

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

/* ---- ETMv2's configuration ---- */

static int etmv2_check(const tb_etm_port_config *c)
{
    return c->minor != 0 ? TB_ERR_CONFIG : 0; /* ETMv2.0 (ETM10) is the only one known */
}

static const port_kind etmv2_kind = {"tb_etmv2_config", TB_ETM_PORT_V2, TB_PROTO_ETMV2,
                                     etmv2_check, true};

PORT_CONFIG_API(etmv2)
