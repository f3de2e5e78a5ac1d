/*
 * ELF symbols, DWARF line rows and loadable bytes (elfinfo.h), read with
 * elfutils' libelf and libdw from a copy of the file in memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tracebench/elfinfo.h"
#include "tracebench/types.h"

#ifdef TB_HAVE_LIBDW
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#endif

bool tb_elfinfo_available(void)
{
#ifdef TB_HAVE_LIBDW
    return true;
#else
    return false;
#endif
}

void tb_elfinfo_free(tb_elfinfo *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->nfuncs; i++)
        free((char *)e->funcs[i].name);
    for (size_t i = 0; i < e->nfiles; i++)
        free(e->files[i]);
    free(e->funcs);
    free(e->lines);
    free(e->files);
    free(e->segs);
    free(e->image);
    free(e);
}

const tb_elf_func *tb_elfinfo_func(const tb_elfinfo *e, uint32_t addr)
{
    size_t lo = 0, hi = e ? e->nfuncs : 0;

    /* the last function starting at or before addr */
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;

        if (e->funcs[m].lo <= addr)
            lo = m + 1;
        else
            hi = m;
    }
    if (lo && addr < e->funcs[lo - 1].hi)
        return &e->funcs[lo - 1];
    return NULL;
}

const tb_elf_line *tb_elfinfo_line(const tb_elfinfo *e, uint32_t addr)
{
    size_t lo = 0, hi = e ? e->nlines : 0;

    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;

        if (e->lines[m].lo <= addr)
            lo = m + 1;
        else
            hi = m;
    }
    if (lo && addr < e->lines[lo - 1].hi)
        return &e->lines[lo - 1];
    return NULL;
}

const uint8_t *tb_elfinfo_bytes(const tb_elfinfo *e, uint32_t addr, size_t *avail)
{
    *avail = 0;
    for (size_t i = 0; e && i < e->nsegs; i++) {
        const struct tb_elf_seg *s = &e->segs[i];

        if (addr >= s->addr && addr - s->addr < s->len) {
            *avail = s->len - (addr - s->addr);
            return s->data + (addr - s->addr);
        }
    }
    return NULL;
}

#ifndef TB_HAVE_LIBDW
int tb_elfinfo_load(const char *path, tb_elfinfo **out, char *err, size_t errlen)
{
    *out = NULL;
    snprintf(err, errlen, "%s: cannot read symbols and lines: tracebench was built without "
                          "elfutils' libdw (install libdw-dev and rebuild)", path);
    return TB_ERR_UNSUPPORTED;
}

int tb_elfinfo_load_mem(const uint8_t *data, size_t len, tb_elfinfo **out, char *err,
                        size_t errlen)
{
    (void)data;
    (void)len;
    *out = NULL;
    snprintf(err, errlen, "cannot read symbols and lines: tracebench was built without "
                          "elfutils' libdw (install libdw-dev and rebuild)");
    return TB_ERR_UNSUPPORTED;
}
#else

static int cmp_func(const void *pa, const void *pb)
{
    const tb_elf_func *a = pa, *b = pb;

    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return (a->hi < b->hi) - (a->hi > b->hi); /* the larger first */
}

static int cmp_line(const void *pa, const void *pb)
{
    const tb_elf_line *a = pa, *b = pb;

    if (a->lo != b->lo)
        return a->lo < b->lo ? -1 : 1;
    return (a->hi > b->hi) - (a->hi < b->hi);
}

static int file_index(tb_elfinfo *e, const char *name, size_t *cap)
{
    for (size_t i = e->nfiles; i-- > 0;)
        if (!strcmp(e->files[i], name))
            return (int)i;
    if (e->nfiles == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        char **f = realloc(e->files, nc * sizeof *f);

        if (!f)
            return TB_ERR_NOMEM;
        e->files = f;
        *cap = nc;
    }
    if (!(e->files[e->nfiles] = strdup(name)))
        return TB_ERR_NOMEM;
    return (int)e->nfiles++;
}

/* STT_FUNC symbols; a symbol without a size (assembler code) reaches to
 * the next function or the end of its section. */
static int read_symbols(tb_elfinfo *e, Elf *elf)
{
    Elf_Scn *scn = NULL;
    size_t cap = 0;

    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        Elf_Data *d;

        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
            continue;
        e->has_symtab = true;
        d = elf_getdata(scn, NULL);
        if (!d)
            continue;
        for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym sym;
            GElf_Shdr ssh;
            Elf_Scn *sec;
            const char *name;

            if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
                sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
                continue;
            name = elf_strptr(elf, sh.sh_link, sym.st_name);
            sec = elf_getscn(elf, sym.st_shndx);
            if (!name || !sec || !gelf_getshdr(sec, &ssh))
                continue;
            if (e->nfuncs == cap) {
                size_t nc = cap ? cap * 2 : 64;
                tb_elf_func *f = realloc(e->funcs, nc * sizeof *f);

                if (!f)
                    return TB_ERR_NOMEM;
                e->funcs = f;
                cap = nc;
            }
            tb_elf_func *f = &e->funcs[e->nfuncs];

            f->lo = (uint32_t)sym.st_value & ~1u; /* Thumb bit (IHI0044 5.5.3) */
            f->hi = sym.st_size ? f->lo + (uint32_t)sym.st_size
                                : (uint32_t)(ssh.sh_addr + ssh.sh_size); /* cut below */
            if (!(f->name = strdup(name)))
                return TB_ERR_NOMEM;
            e->nfuncs++;
        }
    }
    if (e->nfuncs) /* qsort wants a non-NULL base even for none */
        qsort(e->funcs, e->nfuncs, sizeof *e->funcs, cmp_func);
    /* Drop aliases (same start: keep the first, the larger), cut sizeless
     * ones at the next function. */
    size_t k = 0;

    for (size_t i = 0; i < e->nfuncs; i++) {
        if (k && e->funcs[k - 1].lo == e->funcs[i].lo) {
            free((char *)e->funcs[i].name);
            continue;
        }
        e->funcs[k++] = e->funcs[i];
    }
    e->nfuncs = k;
    for (size_t i = 0; i + 1 < e->nfuncs; i++)
        if (e->funcs[i].hi > e->funcs[i + 1].lo)
            e->funcs[i].hi = e->funcs[i + 1].lo;
    return 0;
}

/* Every CU's line table: row i covers [addr_i, addr_i+1) within its
 * sequence (DWARF 5, 6.2). */
static int read_lines(tb_elfinfo *e, Dwarf *dw)
{
    Dwarf_Off off = 0, next;
    size_t hsize, cap = 0, fcap = 0;

    while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        Dwarf_Lines *lines;
        size_t n;

        if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_getsrclines(&cu, &lines, &n) == 0) {
            for (size_t i = 0; i + 1 < n; i++) {
                Dwarf_Line *l = dwarf_onesrcline(lines, i), *l2 = dwarf_onesrcline(lines, i + 1);
                Dwarf_Addr a, a2;
                bool end = false;
                int lineno = 0, fi;
                const char *src;

                /* Rows past 32 bits are not ARM code (a 64-bit DWARF
                 * address in a corrupt file): kept, they would wrap in
                 * tb_elf_line's 32-bit bounds (found by the elfinfo fuzz
                 * harness: a row ending below its start). */
                if (!l || !l2 || dwarf_lineendsequence(l, &end) != 0 || end ||
                    dwarf_lineaddr(l, &a) != 0 || dwarf_lineaddr(l2, &a2) != 0 || a2 <= a ||
                    a2 > UINT32_MAX ||
                    dwarf_lineno(l, &lineno) != 0 || lineno <= 0 ||
                    !(src = dwarf_linesrc(l, NULL, NULL)))
                    continue;
                if ((fi = file_index(e, src, &fcap)) < 0)
                    return fi;
                if (e->nlines == cap) {
                    size_t nc = cap ? cap * 2 : 256;
                    tb_elf_line *nl = realloc(e->lines, nc * sizeof *nl);

                    if (!nl)
                        return TB_ERR_NOMEM;
                    e->lines = nl;
                    cap = nc;
                }
                e->lines[e->nlines++] = (tb_elf_line){.lo = (uint32_t)a, .hi = (uint32_t)a2,
                                                      .file = (uint32_t)fi,
                                                      .line = (uint32_t)lineno};
                e->has_dwarf = true;
            }
        }
        off = next;
    }
    if (e->nlines)
        qsort(e->lines, e->nlines, sizeof *e->lines, cmp_line);
    return 0;
}

static int read_segments(tb_elfinfo *e, Elf *elf)
{
    size_t n;

    if (elf_getphdrnum(elf, &n) != 0)
        return 0;
    e->segs = calloc(n ? n : 1, sizeof *e->segs);
    if (!e->segs)
        return TB_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;

        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz ||
            ph.p_offset > e->image_len || ph.p_filesz > e->image_len - ph.p_offset)
            continue;
        e->segs[e->nsegs++] = (struct tb_elf_seg){.addr = (uint32_t)ph.p_vaddr,
                                                  .len = (size_t)ph.p_filesz,
                                                  .data = e->image + ph.p_offset};
    }
    return 0;
}

int tb_elfinfo_load(const char *path, tb_elfinfo **out, char *err, size_t errlen)
{
    uint8_t *data = NULL;
    FILE *f;
    long len = 0;
    int rc;

    *out = NULL;
    f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(data = malloc(len ? (size_t)len : 1)) || fread(data, 1, (size_t)len, f) != (size_t)len) {
        snprintf(err, errlen, "%s: cannot be read: %s", path,
                 f ? "the read failed" : strerror(errno));
        if (f)
            fclose(f);
        free(data);
        return TB_ERR_IO;
    }
    fclose(f);
    rc = tb_elfinfo_load_mem(data, (size_t)len, out, err, errlen);
    if (rc < 0 && (rc == TB_ERR_FORMAT || rc == TB_ERR_NOMEM)) {
        /* name the file */
        char why[256];

        snprintf(why, sizeof why, "%s", err);
        snprintf(err, errlen, "%s: %s", path, why);
    }
    free(data);
    return rc;
}

int tb_elfinfo_load_mem(const uint8_t *data, size_t len, tb_elfinfo **out, char *err,
                        size_t errlen)
{
    tb_elfinfo *e;
    Elf *elf = NULL;
    Dwarf *dw = NULL;
    int rc = 0;

    *out = NULL;
    if (!(e = calloc(1, sizeof *e)) || !(e->image = malloc(len ? len : 1))) {
        free(e);
        snprintf(err, errlen, "out of memory");
        return TB_ERR_NOMEM;
    }
    memcpy(e->image, data, len);
    e->image_len = len;
    elf_version(EV_CURRENT);
    elf = elf_memory((char *)e->image, e->image_len);
    if (!elf || elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS32) {
        snprintf(err, errlen, "not a 32-bit ELF file");
        rc = TB_ERR_FORMAT;
        goto out;
    }
    {
        GElf_Ehdr eh;

        if (gelf_getehdr(elf, &eh))
            e->entry = (uint32_t)eh.e_entry & ~1u;
    }
    if ((rc = read_symbols(e, elf)) < 0 || (rc = read_segments(e, elf)) < 0)
        goto out;
    dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
    if (dw && (rc = read_lines(e, dw)) < 0)
        goto out;
out:
    if (dw)
        dwarf_end(dw);
    if (elf)
        elf_end(elf);
    if (rc < 0) {
        if (rc == TB_ERR_NOMEM)
            snprintf(err, errlen, "out of memory");
        tb_elfinfo_free(e);
        return rc;
    }
    *out = e;
    return 0;
}
#endif
