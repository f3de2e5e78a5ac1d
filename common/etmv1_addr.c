/*
 * The ETMv1 branch-address codec (IHI0014Q 5.5.4; tracebench/etmv1.h):
 * the encoder writes it, the parser and decoder read it, so it lives in
 * common/.
 */
#include "tracebench/etmv1.h"

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
