/*
 * ELF reader harness (analysis/elfinfo.c): the input is an ELF file, as
 * `tracebench coverage --memory ELF` reads one (symbols, DWARF line
 * table, loadable segments, through elfutils).  Invariants: a refusal is
 * a known TB_ERR_*; functions and line rows are sorted, non-empty
 * ranges; every lookup returns a range holding the address; segment
 * bytes lie inside the file.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tracebench/elfinfo.h"
#include "tracebench/types.h"

int tb_fuzz_elfinfo(const uint8_t *data, size_t len)
{
    tb_elfinfo *e = NULL;
    char err[256];
    int rc;

    if (len > TB_FUZZ_MAX_INPUT)
        len = TB_FUZZ_MAX_INPUT;
    rc = tb_elfinfo_load_mem(data, len, &e, err, sizeof err);
    TB_FUZZ_CHECK("elfinfo", rc == 0 || rc == TB_ERR_FORMAT || rc == TB_ERR_NOMEM,
                  "load returned %d (%s)", rc, err);
    if (rc < 0)
        return TB_FUZZ_SKIP; /* refused: nothing to check */
    for (size_t i = 0; i < e->nfuncs; i++) {
        const tb_elf_func *f = &e->funcs[i];

        TB_FUZZ_CHECK("elfinfo", f->name && (i == 0 || e->funcs[i - 1].lo < f->lo),
                      "functions not sorted and distinct at %zu", i);
        if (f->lo < f->hi)
            TB_FUZZ_CHECK("elfinfo", tb_elfinfo_func(e, f->lo) == f, "lookup of 0x%x",
                          (unsigned)f->lo);
    }
    for (size_t i = 0; i < e->nlines; i++) {
        const tb_elf_line *l = &e->lines[i], *r;

        TB_FUZZ_CHECK("elfinfo", l->lo < l->hi && l->file < e->nfiles, "line row %zu", i);
        r = tb_elfinfo_line(e, l->lo);
        TB_FUZZ_CHECK("elfinfo", r && r->lo <= l->lo && l->lo < r->hi, "line lookup 0x%x",
                      (unsigned)l->lo);
    }
    for (size_t i = 0; i < e->nsegs; i++) {
        size_t avail;
        const uint8_t *p = tb_elfinfo_bytes(e, e->segs[i].addr, &avail);

        TB_FUZZ_CHECK("elfinfo", e->segs[i].data >= e->image &&
                                     e->segs[i].len <= e->image_len &&
                                     (size_t)(e->segs[i].data - e->image) <=
                                         e->image_len - e->segs[i].len,
                      "segment %zu outside the file", i);
        TB_FUZZ_CHECK("elfinfo", p && avail >= 1, "segment %zu bytes", i);
    }
    tb_elfinfo_free(e);
    return 0;
}
