/*
 * The loadable bytes of a 32-bit little-endian ELF (its PT_LOAD segments),
 * as the memory regions a snapshot dumps (tb_encoder_elf_regions).
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/encoder.h"

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

int tb_encoder_elf_regions(const uint8_t *elf, size_t len, tb_snap_region *out,
                           size_t max, uint8_t **storage)
{
    uint32_t phoff;
    unsigned phentsize, phnum, n = 0;
    size_t total = 0, at = 0;
    uint8_t *mem;

    if (!storage)
        return TB_ERR_INVAL;
    *storage = NULL;
    if (!elf || len < 52 || memcmp(elf, "\x7f" "ELF", 4) || elf[4] != 1 ||
        elf[5] != 1)
        return TB_ERR_FORMAT;
    phoff = rd32(elf + 28);
    phentsize = (unsigned)(elf[42] | elf[43] << 8);
    phnum = (unsigned)(elf[44] | elf[45] << 8);
    if (phentsize < 32 || phoff > len ||
        (uint64_t)phnum * phentsize > len - phoff)
        return TB_ERR_FORMAT;
    /* Two passes: check and size, then copy. */
    for (int pass = 0; pass < 2; pass++) {
        n = 0;
        for (unsigned i = 0; i < phnum && n < max; i++) {
            const uint8_t *ph = elf + phoff + (size_t)i * phentsize;
            uint32_t off = rd32(ph + 4), vaddr = rd32(ph + 8);
            uint32_t filesz = rd32(ph + 16), memsz = rd32(ph + 20);
            size_t l;

            if (rd32(ph) != 1 || !filesz) /* PT_LOAD with bytes in the file */
                continue;
            if (off > len || filesz > len - off || memsz < filesz)
                return TB_ERR_FORMAT;
            l = filesz + (memsz - filesz < 64 ? memsz - filesz : 64);
            /* OpenCSD reads 4 bytes for any T32 instruction: give a
             * 16-bit one at the very end of a segment 2 zero bytes when
             * no other segment is there. */
            if (l < (size_t)filesz + 2 && vaddr + filesz + 2 > vaddr) {
                bool clash = false;
                for (unsigned j = 0; j < phnum; j++) {
                    const uint8_t *q = elf + phoff + (size_t)j * phentsize;
                    uint32_t qa = rd32(q + 8), qm = rd32(q + 20);
                    if (j != i && rd32(q) == 1 && qm && qa < vaddr + filesz + 2 &&
                        qa + qm > vaddr + filesz)
                        clash = true;
                }
                if (!clash)
                    l = (size_t)filesz + 2;
            }
            if (pass == 0) {
                total += l;
            } else {
                memcpy(mem + at, elf + off, filesz);
                memset(mem + at + filesz, 0, l - filesz);
                out[n].address = vaddr;
                out[n].data = mem + at;
                out[n].len = l;
                at += l;
            }
            n++;
        }
        if (pass == 0 && !(mem = calloc(1, total ? total : 1)))
            return TB_ERR_NOMEM;
    }
    *storage = mem;
    return (int)n;
}
