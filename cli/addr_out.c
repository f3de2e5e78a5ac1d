/* The `addr` output format, shared by `tracebench decode --format addr`
 * and the vectors' decode.addr: one executed instruction per line
 * (address, ISA, E/N), so that any two decoders can be diffed. */
#include <stdlib.h>

#include "cli.h"

int tb_cli_addr_element(tb_cli_addr_out *o, const tb_element *el)
{
    int n;

    /* ADDR_NACC / ADDR_UNKNOWN atoms keep their place. */
    if (el->kind == TB_ELEM_ADDR_NACC) {
        fprintf(o->f, "0x%08X ? NACC\n", (unsigned)el->start);
        return 0;
    }
    if (el->kind == TB_ELEM_ADDR_UNKNOWN) {
        fprintf(o->f, "? ? %c\n", el->last_atom ? el->last_atom : '?');
        return 0;
    }
    if (el->kind != TB_ELEM_INSN_RANGE)
        return 0;
    if (el->count > o->cap) {
        uint32_t *a = realloc(o->addrs, el->count * sizeof *a);

        if (!a)
            return o->err = TB_ERR_NOMEM;
        o->addrs = a;
        o->cap = el->count;
    }
    n = tb_range_addrs(o->mem, el, o->addrs, el->count);
    if (n < 0)
        return o->err = n;
    for (int i = 0; i < n; i++) {
        char atom = 'E';

        if (el->isa != TB_ISA_ARM && el->isa != TB_ISA_THUMB)
            atom = '?';
        else if (i + 1 == n)
            atom = el->last_atom;
        else if (i < 32 && ((el->atom_bits >> i) & 1))
            atom = 'N';
        fprintf(o->f, "0x%08X %s %c\n", (unsigned)o->addrs[i], tb_isa_name((tb_isa)el->isa),
                atom);
    }
    return 0;
}
