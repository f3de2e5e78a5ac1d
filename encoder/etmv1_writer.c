/*
 * ETMv1 port configuration, capture file format, OpenOCD `etm load` form
 * and the branch-address codec (docs/etmv1.md; IHI0014Q 5.2, 5.5.4).
 */
#include <string.h>

#include "tracebench/etm_port.h"
#include "tracebench/etmv1.h"

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
    int rc;

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

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
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

void tb_etmv1_openocd_header(const tb_etmv1_config *c, uint32_t n_cycles,
                             uint8_t out[12])
{
    put_be32(out, 0);
    put_be32(out + 4, tb_etmv1_etmcr(c));
    put_be32(out + 8, n_cycles);
}

void tb_etmv1_openocd_sample(const tb_etmv1_sample *s, uint8_t out[12])
{
    uint32_t ps = s->pipestat, flags = s->tracesync ? 1 : 0;

    if (ps == TB_ETMV1_TR) { /* the ETB driver's substitution (etb.c) */
        ps = s->tracepkt & 7;
        flags |= 2;
    }
    put_be32(out, ps);
    put_be32(out + 4, s->tracepkt);
    put_be32(out + 8, flags);
}

/* ---- branch address codec (5.5.4) ---- */

uint32_t tb_etmv1_addr_raw(uint32_t addr, tb_isa isa)
{
    return isa == TB_ISA_THUMB ? (addr | 1u) : (addr & ~3u);
}

int tb_etmv1_addr_encode(uint32_t raw, uint32_t last, bool full,
                         uint8_t reason, uint8_t out[5])
{
    uint32_t diff = raw ^ last;
    unsigned n, i;

    if (full || reason)
        n = 5;
    else if (diff < (1u << 7))
        n = 1;
    else if (diff < (1u << 14))
        n = 2;
    else if (diff < (1u << 21))
        n = 3;
    else if (diff < (1u << 28))
        n = 4;
    else
        n = 5;
    for (i = 0; i < n && i < 4; i++)
        out[i] = (uint8_t)(((raw >> (7 * i)) & 0x7F) | (i + 1 < n ? 0x80 : 0));
    if (n == 5)
        out[4] = (uint8_t)(((raw >> 28) & 0xF) | ((reason & 7u) << 4));
    return (int)n;
}

unsigned tb_etmv1_addr_length(const uint8_t *b, size_t avail)
{
    unsigned i;

    for (i = 0; i < avail && i < 5; i++)
        if (i == 4 || !(b[i] & 0x80))
            return i + 1;
    return 0;
}

void tb_etmv1_addr_decode(const uint8_t *b, unsigned n, uint32_t last,
                          uint32_t *raw, uint8_t *reason, bool *jbit)
{
    uint32_t v = 0, mask;
    unsigned i;

    for (i = 0; i < n && i < 4; i++)
        v |= (uint32_t)(b[i] & 0x7F) << (7 * i);
    if (n >= 5) {
        v |= (uint32_t)(b[4] & 0xF) << 28;
        mask = 0xFFFFFFFFu;
    } else {
        mask = (1u << (7 * n)) - 1;
    }
    if (raw)
        *raw = (last & ~mask) | (v & mask);
    if (reason)
        *reason = n >= 5 ? (uint8_t)((b[4] >> 4) & 7) : 0;
    if (jbit)
        *jbit = n >= 5 && (b[4] & 0x80);
}
