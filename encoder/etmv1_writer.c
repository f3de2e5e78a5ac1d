/*
 * ETMv1 OpenOCD `etm load` form (docs/etmv1.md; etmv1-v2-sources 2.3).
 * The port configuration, capture file and sample word are in
 * common/etm_port.c, the branch-address codec in common/etmv1_addr.c.
 */
#include "tracebench/etmv1.h"
#include "../common/port_size.h"

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

int tb_etmv1_openocd_header(const tb_etmv1_config *c, uint32_t n_cycles,
                            uint8_t out[12])
{
    tb_etmv1_config own;

    if (!(c = tb_etm_port_config_take(&own, c)))
        return TB_ERR_INVAL;
    put_be32(out, 0);
    put_be32(out + 4, tb_etmv1_etmcr(c));
    put_be32(out + 8, n_cycles);
    return 0;
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
