/*
 * The trace-port capture header shared by ETMv1 and ETMv2
 * (tracebench/etm_port.h; docs/etmv1.md 2).
 */
#include <string.h>

#include "tracebench/etm_port.h"
#include "tracebench/types.h"

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
