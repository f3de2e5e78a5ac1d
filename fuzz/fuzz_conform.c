/*
 * Conformance-kit harness (issue 33): the readers of a decoder's output
 * (vectors/conform/reader.c, items.c), which take whatever any decoder
 * prints: the addr form, OpenCSD's trc_pkt_lister listing and JSON lines.
 * The first byte picks the form and the protocol; the rest is the output,
 * one line per '\n'.  A small memory image (ARM words and 16/32-bit Thumb
 * halfwords at 0x8000) lets ranges be walked.  Invariants: every item is
 * of a known kind, its strings end inside their fields, a bad line says
 * why, an instruction has an ISA and an E/N atom, a range never yields
 * more instructions than the image holds, and the addr parser agrees with
 * itself on the same line.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "fuzz.h"
#include "tracebench/snapshot.h"

#define IMAGE_BASE 0x8000u
#define IMAGE_BYTES 256u

typedef struct fz {
    size_t items;
} fz;

static bool ends_in(const char *s, size_t cap)
{
    return memchr(s, '\0', cap) != NULL;
}

static int check_item(void *ctx, const tb_conform_item *it)
{
    fz *f = ctx;
    char text[160];

    f->items++;
    TB_FUZZ_CHECK("conform", it->kind > TB_CI_NONE && it->kind <= TB_CI_BAD, "kind %d",
                  (int)it->kind);
    TB_FUZZ_CHECK("conform", ends_in(it->isa, sizeof it->isa), "isa unterminated");
    TB_FUZZ_CHECK("conform", ends_in(it->word, sizeof it->word), "word unterminated");
    if (it->kind == TB_CI_BAD)
        TB_FUZZ_CHECK("conform", it->word[0], "a bad line without a why");
    if (it->kind == TB_CI_INSN) {
        TB_FUZZ_CHECK("conform", it->isa[0], "an instruction without an ISA");
        TB_FUZZ_CHECK("conform", it->atom == 'E' || it->atom == 'N', "atom %d", it->atom);
    }
    TB_FUZZ_CHECK("conform", it->id >= -1 && it->id <= 0x7F, "id %d", it->id);
    tb_conform_item_text(it, text, sizeof text);
    TB_FUZZ_CHECK("conform", ends_in(text, sizeof text), "text unterminated");
    return 0;
}

int tb_fuzz_conform(const uint8_t *data, size_t len)
{
    static const char *const protos[] = {"etmv3", "ptm", "etmv1", "etmv2"};
    uint8_t image[IMAGE_BYTES];
    tb_memimage *mem;
    tb_conform_reader *r;
    char *text, *line, *next;
    tb_conform_format fmt;

    if (len < 1)
        return TB_FUZZ_SKIP;
    if (len > TB_FUZZ_MAX_INPUT)
        len = TB_FUZZ_MAX_INPUT;
    fmt = (tb_conform_format)(data[0] % 3);
    /* ARM words in the first half; Thumb halfwords, 32-bit ones (0xF000,
     * 0xE800 first halfwords) among 16-bit ones, in the second. */
    for (unsigned i = 0; i < IMAGE_BYTES; i += 2) {
        uint16_t hw = i < IMAGE_BYTES / 2 ? 0xE1A0 : (i % 6 == 0 ? 0xF000 : 0x4600 | i);

        image[i] = (uint8_t)hw;
        image[i + 1] = (uint8_t)(hw >> 8);
    }
    mem = tb_memimage_new();
    if (!mem)
        return TB_FUZZ_SKIP;
    if (tb_memimage_add(mem, IMAGE_BASE, image, sizeof image) < 0) {
        tb_memimage_free(mem);
        return TB_FUZZ_SKIP;
    }
    r = tb_conform_reader_new(fmt, protos[(data[0] >> 2) & 3], (data[0] & 0x10) ? NULL : mem);
    text = malloc(len);
    if (!r || !text) {
        tb_conform_reader_free(r);
        tb_memimage_free(mem);
        free(text);
        return TB_FUZZ_SKIP;
    }
    memcpy(text, data + 1, len - 1);
    text[len - 1] = '\0';
    for (line = text; line; line = next) {
        fz f = {0};
        tb_conform_item a, b;
        size_t n;

        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        n = tb_conform_reader_line(r, line, check_item, &f);
        TB_FUZZ_CHECK("conform", n == f.items, "%zu items said, %zu given", n, f.items);
        /* A range yields at most one item per halfword of the image, plus
         * a bad line. */
        TB_FUZZ_CHECK("conform", n <= IMAGE_BYTES / 2 + 2, "%zu items from one line", n);
        tb_conform_parse_addr(line, true, &a);
        tb_conform_parse_addr(line, true, &b);
        TB_FUZZ_CHECK("conform", a.kind == b.kind && a.addr == b.addr, "addr parse unstable");
        if (a.kind != TB_CI_BAD && a.kind != TB_CI_NONE)
            check_item(&f, &a);
    }
    tb_conform_reader_free(r);
    tb_memimage_free(mem);
    free(text);
    return 0;
}
