/*
 * ETMv1 OpenOCD `etm load` form and the branch-address codec
 * (docs/etmv1.md; IHI0014Q 5.5.4).  The port configuration, capture file
 * and sample word are in common/etm_port.c.
 */
#include "tracebench/etmv1.h"

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
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
