/*
 * What a program's ELF file says about its code (analysis/elfinfo.c):
 * functions from its symbol table, source lines from its DWARF line
 * table (through elfutils' libdw), and the bytes of its loadable
 * segments, to check a trace's code against.  Built only with libdw
 * (libdw-dev); tb_elfinfo_available() says whether it was.
 */
#ifndef TRACEBENCH_ELFINFO_H
#define TRACEBENCH_ELFINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_elf_func {
    uint32_t lo, hi;     /* [lo, hi), Thumb bit cleared */
    const char *name;
} tb_elf_func;

typedef struct tb_elf_line {
    uint32_t lo, hi;     /* [lo, hi): the code of one line-table row */
    uint32_t file;       /* index into files */
    uint32_t line;
} tb_elf_line;

typedef struct tb_elfinfo {
    tb_elf_func *funcs;  /* by lo */
    size_t nfuncs;
    tb_elf_line *lines;  /* by lo */
    size_t nlines;
    char **files;
    size_t nfiles;
    uint32_t entry;      /* e_entry, the Thumb bit cleared */
    bool has_symtab;     /* a symbol table (not stripped) */
    bool has_dwarf;      /* a DWARF line table */
    /* PT_LOAD segments' file bytes */
    struct tb_elf_seg { uint32_t addr; size_t len; const uint8_t *data; } *segs;
    size_t nsegs;
    uint8_t *image;      /* the file */
    size_t image_len;
} tb_elfinfo;

/* True when built with libdw; else tb_elfinfo_load() returns
 * TB_ERR_UNSUPPORTED. */
bool tb_elfinfo_available(void);
/* Loads path.  0 or TB_ERR_* with a reason in err (TB_ERR_FORMAT: not
 * a 32-bit ELF file). */
int tb_elfinfo_load(const char *path, tb_elfinfo **out, char *err, size_t errlen);
/* The same from an ELF image in memory (copied). */
int tb_elfinfo_load_mem(const uint8_t *data, size_t len, tb_elfinfo **out, char *err,
                        size_t errlen);
void tb_elfinfo_free(tb_elfinfo *e);
/* The function / line-table row holding addr, or NULL. */
const tb_elf_func *tb_elfinfo_func(const tb_elfinfo *e, uint32_t addr);
const tb_elf_line *tb_elfinfo_line(const tb_elfinfo *e, uint32_t addr);
/* The ELF's loadable bytes at addr (*avail: how many follow), or NULL. */
const uint8_t *tb_elfinfo_bytes(const tb_elfinfo *e, uint32_t addr, size_t *avail);

#ifdef __cplusplus
}
#endif

#endif
