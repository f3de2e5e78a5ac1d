/*
 * Disassembly under `decode --format text --disasm`: after an
 * INSN_RANGE element's line, one line per instruction of the range with
 * its address, its bytes and Capstone's disassembly (docs/formats.md).
 *
 * It lives in cli/ and not in the library: it prints, and no library
 * module wants disassembly text (the classifier, common/classify.c,
 * needs Capstone's ids and operands only).
 */
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "cli.h"
#include "tracebench/classify.h"
#include "tracebench/snapshot.h"

struct tb_cli_disasm {
    const tb_memimage *mem;
    /* One handle per state: Capstone's T32 handle follows IT blocks
     * itself, so instructions inside one show their condition as long
     * as they are disassembled in execution order, as ranges are. */
    csh arm, thumb;
    cs_insn *insn_arm, *insn_thumb;
    uint32_t *addrs; /* tb_range_addrs scratch */
    size_t cap;
    bool ptm;        /* PTM: E/N on waypoints only */
    /* decode --symbols: text after each instruction's line */
    void (*sym)(void *ctx, uint32_t addr, char *buf, size_t len);
    void *sym_ctx;
};

void tb_cli_disasm_set_sym(tb_cli_disasm *d, void (*sym)(void *ctx, uint32_t addr, char *buf,
                                                         size_t len),
                           void *ctx)
{
    if (d) {
        d->sym = sym;
        d->sym_ctx = ctx;
    }
}

void tb_cli_disasm_set_ptm(tb_cli_disasm *d, bool ptm)
{
    if (d)
        d->ptm = ptm;
}

/* Whether instruction i of n in a range failed its condition (N), as
 * the addr format reads the atoms (cli/addr_out.c): ETMv3, ETMv1 and
 * ETMv2 give every instruction an atom, bit i of atom_bits and the last
 * one's last_atom; PTM only a waypoint's, the last one (IHI0035B B.3.2). */
static bool cond_failed(const tb_cli_disasm *d, const tb_element *el, int i, int n)
{
    if (i + 1 == n)
        return el->last_atom == 'N' &&
               (!d->ptm || (el->last_wp != TB_WP_NONE && el->last_wp != TB_WP_BARRIER));
    return !d->ptm && i < 32 && ((el->atom_bits >> i) & 1);
}

tb_cli_disasm *tb_cli_disasm_new(const tb_memimage *mem)
{
    tb_cli_disasm *d = calloc(1, sizeof *d);

    if (!d)
        return NULL;
    d->mem = mem;
    if (cs_open(CS_ARCH_ARM, CS_MODE_ARM, &d->arm) != CS_ERR_OK) {
        d->arm = 0;
        goto fail;
    }
    if (cs_open(CS_ARCH_ARM, CS_MODE_THUMB, &d->thumb) != CS_ERR_OK) {
        d->thumb = 0;
        goto fail;
    }
    d->insn_arm = cs_malloc(d->arm);
    d->insn_thumb = cs_malloc(d->thumb);
    if (!d->insn_arm || !d->insn_thumb)
        goto fail;
    return d;
fail:
    tb_cli_disasm_free(d);
    return NULL;
}

void tb_cli_disasm_free(tb_cli_disasm *d)
{
    if (!d)
        return;
    if (d->insn_arm)
        cs_free(d->insn_arm, 1);
    if (d->insn_thumb)
        cs_free(d->insn_thumb, 1);
    if (d->arm)
        cs_close(&d->arm);
    if (d->thumb)
        cs_close(&d->thumb);
    free(d->addrs);
    free(d);
}

int tb_cli_disasm_insn(tb_cli_disasm *d, uint32_t addr, tb_isa isa, char *buf, size_t len)
{
    uint8_t b[4];
    size_t avail, size;
    char bytes[16];
    const uint8_t *code = b;
    uint64_t at = addr;
    cs_insn *ci;
    csh h;

    if (!d || !buf || !len)
        return TB_ERR_INVAL;
    if (isa != TB_ISA_ARM && isa != TB_ISA_THUMB)
        return snprintf(buf, len, "    0x%08x  %-9s  <%s: not disassembled>", (unsigned)addr,
                        "?", tb_isa_name(isa));
    avail = tb_memimage_read(d->mem, addr, b, sizeof b);
    /* The bytes as listings write them: an A32 word, a T32 halfword, or
     * a 32-bit T32 instruction's two halfwords, the first first (the
     * image is little-endian, as everywhere in tracebench). */
    if (isa == TB_ISA_ARM) {
        size = 4;
        if (avail >= 4)
            snprintf(bytes, sizeof bytes, "%08x",
                     (unsigned)(b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24));
    } else {
        size = avail >= 2 ? tb_thumb_size((uint16_t)(b[0] | b[1] << 8)) : 2;
        if (size == 2 && avail >= 2)
            snprintf(bytes, sizeof bytes, "%04x", (unsigned)(b[0] | b[1] << 8));
        else if (avail >= 4)
            snprintf(bytes, sizeof bytes, "%04x %04x", (unsigned)(b[0] | b[1] << 8),
                     (unsigned)(b[2] | b[3] << 8));
    }
    if (avail < size)
        return snprintf(buf, len, "    0x%08x  %-9s  <no memory>", (unsigned)addr, "?");
    h = isa == TB_ISA_ARM ? d->arm : d->thumb;
    ci = isa == TB_ISA_ARM ? d->insn_arm : d->insn_thumb;
    if (!cs_disasm_iter(h, &code, &size, &at, ci))
        return snprintf(buf, len, "    0x%08x  %-9s  <undefined>", (unsigned)addr, bytes);
    return snprintf(buf, len, "    0x%08x  %-9s  %s%s%s", (unsigned)addr, bytes, ci->mnemonic,
                    ci->op_str[0] ? " " : "", ci->op_str);
}

int tb_cli_disasm_element(tb_cli_disasm *d, const tb_element *el, const char *prefix, FILE *f)
{
    char line[256];
    int n;

    if (!d || !el || !f)
        return TB_ERR_INVAL;
    if (el->kind != TB_ELEM_INSN_RANGE || !el->count)
        return 0;
    if (el->count > d->cap) {
        uint32_t *a = realloc(d->addrs, el->count * sizeof *a);

        if (!a)
            return TB_ERR_NOMEM;
        d->addrs = a;
        d->cap = el->count;
    }
    n = tb_range_addrs(d->mem, el, d->addrs, el->count);
    if (n < 0)
        return n;
    for (int i = 0; i < n; i++) {
        char sym[400] = "";

        tb_cli_disasm_insn(d, d->addrs[i], (tb_isa)el->isa, line, sizeof line);
        if (d->sym)
            d->sym(d->sym_ctx, d->addrs[i], sym, sizeof sym);
        fprintf(f, "%s%s%s%s\n", prefix ? prefix : "", line, sym,
                cond_failed(d, el, i, n) ? "  ; N: condition failed, not executed" : "");
    }
    return 0;
}
