/*
 * Loading: ELF32 little-endian ARM executables (PT_LOAD segments, entry,
 * symbols) and raw images, mapped into Unicorn in 4 KiB pages.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define PAGE 0x1000u
#define MAX_MAP_BYTES (256u << 20)

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static bool page_mapped(const tb_sim *s, uint64_t page)
{
    for (unsigned i = 0; i < s->n_maps; i++)
        if (page >= s->maps[i].lo && page < s->maps[i].hi)
            return true;
    return false;
}

/* Maps [lo, hi) rounded to pages, skipping pages already mapped. */
static int map_range(tb_sim *s, uint64_t lo, uint64_t hi)
{
    uint64_t p, run;

    lo &= ~(uint64_t)(PAGE - 1);
    hi = (hi + PAGE - 1) & ~(uint64_t)(PAGE - 1);
    if (hi > 0x100000000ull || hi - lo > MAX_MAP_BYTES)
        return tb_sim_fail(s, TB_ERR_LIMIT, "mapping 0x%llx..0x%llx too large",
                           (unsigned long long)lo, (unsigned long long)hi);
    for (p = lo; p < hi;) {
        if (page_mapped(s, p)) {
            p += PAGE;
            continue;
        }
        for (run = p; run < hi && !page_mapped(s, run); run += PAGE)
            ;
        if (s->n_maps >= sizeof s->maps / sizeof s->maps[0])
            return tb_sim_fail(s, TB_ERR_LIMIT, "too many memory regions");
        if (uc_mem_map(s->uc, p, (size_t)(run - p), UC_PROT_ALL) != UC_ERR_OK)
            return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot map 0x%08llx..0x%08llx",
                               (unsigned long long)p, (unsigned long long)run);
        s->maps[s->n_maps].lo = (uint32_t)p;
        s->maps[s->n_maps].hi = (uint32_t)(run - 1) + 1;
        if (run == 0x100000000ull)
            s->maps[s->n_maps].hi = 0xFFFFFFFFu; /* top page: hi wraps */
        s->n_maps++;
        p = run;
    }
    return 0;
}

int tb_sim_map(tb_sim *s, uint32_t addr, uint32_t size)
{
    if (!s || !size)
        return TB_ERR_INVAL;
    return map_range(s, addr, (uint64_t)addr + size);
}

int tb_sim_load_raw(tb_sim *s, const uint8_t *data, size_t len, uint32_t addr)
{
    int rc;

    if (!s || (!data && len) || (uint64_t)addr + len > 0x100000000ull)
        return TB_ERR_INVAL;
    if ((rc = map_range(s, addr, (uint64_t)addr + (len ? len : 1))) < 0)
        return rc;
    if (len && uc_mem_write(s->uc, addr, data, len) != UC_ERR_OK)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot write image at 0x%08x", addr);
    if (!s->loaded) {
        s->entry = addr;
        s->entry_isa = TB_ISA_ARM;
    }
    s->loaded = true;
    return 0;
}

int tb_sim_set_entry(tb_sim *s, uint32_t addr, tb_isa isa)
{
    if (!s || (isa != TB_ISA_ARM && isa != TB_ISA_THUMB))
        return TB_ERR_INVAL;
    s->entry = addr & ~1u;
    s->entry_isa = (uint8_t)isa;
    return 0;
}

static int load_symbols(tb_sim *s, const uint8_t *d, size_t len,
                        uint32_t shoff, unsigned shnum, unsigned shentsize)
{
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = d + shoff + (size_t)i * shentsize;
        uint32_t off, size, link, entsize;
        const uint8_t *str;
        size_t n;

        if (rd32(sh + 4) != 2) /* SHT_SYMTAB */
            continue;
        off = rd32(sh + 16);
        size = rd32(sh + 20);
        link = rd32(sh + 24);
        entsize = rd32(sh + 36);
        if (entsize < 16 || link >= shnum || off > len || size > len - off)
            return tb_sim_fail(s, TB_ERR_FORMAT, "ELF: bad symbol table");
        {
            const uint8_t *lsh = d + shoff + (size_t)link * shentsize;
            uint32_t soff = rd32(lsh + 16), ssize = rd32(lsh + 20);

            if (soff > len || ssize > len - soff || ssize == 0 ||
                d[soff + ssize - 1] != 0)
                return tb_sim_fail(s, TB_ERR_FORMAT, "ELF: bad string table");
            str = d + soff;
            free(s->strtab);
            s->strtab = malloc(ssize);
            if (!s->strtab)
                return TB_ERR_NOMEM;
            memcpy(s->strtab, str, ssize);
            s->strtab_len = ssize;
        }
        n = size / entsize;
        free(s->syms);
        s->syms = calloc(n ? n : 1, sizeof *s->syms);
        if (!s->syms)
            return TB_ERR_NOMEM;
        s->n_syms = 0;
        for (size_t k = 0; k < n; k++) {
            const uint8_t *e = d + off + k * entsize;
            uint32_t name = rd32(e);

            if (name == 0 || name >= s->strtab_len)
                continue;
            s->syms[s->n_syms].name = name;
            s->syms[s->n_syms].value = rd32(e + 4);
            s->n_syms++;
        }
        return 0;
    }
    return 0;
}

static unsigned uleb(const uint8_t *p, size_t n, size_t *i)
{
    unsigned v = 0, sh = 0;

    while (*i < n) {
        uint8_t b = p[(*i)++];

        if (sh < 32)
            v |= (unsigned)(b & 0x7F) << sh;
        sh += 7;
        if (!(b & 0x80))
            break;
    }
    return v;
}

/* Tag_CPU_arch (6) and Tag_CPU_arch_profile (7) of the file-scope
 * attributes in an .ARM.attributes section (ARM IHI0045 "Addenda to the
 * ABI": format-version 'A', "aeabi" subsection, Tag_File; tags 4, 5, 67
 * and odd tags from 33 are strings, Tag_compatibility (32) a number and
 * a string, the rest ULEB128).  Anything it cannot read leaves both 0. */
static void arm_attributes(tb_sim *s, const uint8_t *p, size_t n)
{
    size_t i = 1;

    if (n < 1 || p[0] != 'A')
        return;
    while (i + 4 < n) {
        uint32_t sublen = rd32(p + i);
        size_t end = i + sublen, j = i + 4;

        if (sublen < 5 || end > n)
            return;
        if (strncmp((const char *)p + j, "aeabi", end - j) == 0 && j + 6 <= end) {
            j += 6;
            while (j + 5 <= end) {
                uint8_t tag = p[j];
                uint32_t sz = rd32(p + j + 1);
                size_t k = j + 5, e = j + sz;

                if (sz < 5 || e > end)
                    return;
                while (tag == 1 && k < e) { /* Tag_File */
                    unsigned t = uleb(p, e, &k), v;

                    if (t == 4 || t == 5 || t == 67 || (t > 32 && (t & 1))) {
                        while (k < e && p[k])
                            k++;
                        k++;
                    } else if (t == 32) {
                        uleb(p, e, &k);
                        while (k < e && p[k])
                            k++;
                        k++;
                    } else {
                        v = uleb(p, e, &k);
                        if (t == 6)
                            s->elf_arch = (uint8_t)v;
                        else if (t == 7)
                            s->elf_profile = (char)v;
                    }
                }
                j = e;
            }
        }
        i = end;
    }
}

/* An M-profile program on an A-profile core, or the reverse, is refused
 * with the cause: neither would run as written. */
static int check_profile(tb_sim *s)
{
    bool m = tb_sim_cpu_is_m(s->cpu);

    if (s->elf_profile == 'M' && !m)
        return tb_sim_fail(s, TB_ERR_CONFIG, "the program is built for the M profile "
                           "(.ARM.attributes: Tag_CPU_arch_profile 'M') and the cpu is %s: "
                           "run it with cpu = cortex-m3 or cortex-m4 ([sim] cpu = in the "
                           "scenario, or --cpu)", tb_sim_cpu_name(s->cpu));
    if ((s->elf_profile == 'A' || s->elf_profile == 'R') && m)
        return tb_sim_fail(s, TB_ERR_CONFIG, "the program is built for the %c profile "
                           "(.ARM.attributes: Tag_CPU_arch_profile '%c') and the cpu is %s, "
                           "which runs M-profile Thumb code only: run it with cpu = "
                           "cortex-a15, cortex-a9 or cortex-a7", s->elf_profile,
                           s->elf_profile, tb_sim_cpu_name(s->cpu));
    /* Tag_CPU_arch 13 is ARMv7E-M (the DSP instructions of a Cortex-M4);
     * 16 and up ARMv8-M and later, whose trace is ETMv4, not ETMv3. */
    if (m && s->elf_arch == 13 && s->cpu == TB_SIM_CPU_M3)
        return tb_sim_fail(s, TB_ERR_CONFIG, "the program is built for ARMv7E-M "
                           "(Tag_CPU_arch 13, the Cortex-M4's DSP extension): run it with "
                           "cpu = cortex-m4");
    if (m && s->elf_arch >= 16)
        return tb_sim_fail(s, TB_ERR_CONFIG, "the program is built for ARMv8-M or later "
                           "(Tag_CPU_arch %u), not ARMv7-M: a Cortex-M3/M4 cannot run it",
                           s->elf_arch);
    return 0;
}

int tb_sim_load_elf(tb_sim *s, const uint8_t *d, size_t len)
{
    uint32_t phoff, shoff, entry;
    unsigned phnum, phentsize, shnum, shentsize, nload = 0;
    int rc;

    if (!s || !d)
        return TB_ERR_INVAL;
    if (len < 52 || memcmp(d, "\x7f" "ELF", 4))
        return tb_sim_fail(s, TB_ERR_FORMAT, "not an ELF file");
    if (d[4] != 1 || d[5] != 1)
        return tb_sim_fail(s, TB_ERR_FORMAT, "ELF: not 32-bit little-endian");
    if (rd16(d + 16) != 2 || rd16(d + 18) != 40)
        return tb_sim_fail(s, TB_ERR_FORMAT, "ELF: not an ARM executable");
    entry = rd32(d + 24);
    phoff = rd32(d + 28);
    shoff = rd32(d + 32);
    phentsize = rd16(d + 42);
    phnum = rd16(d + 44);
    shentsize = rd16(d + 46);
    shnum = rd16(d + 48);
    if (phentsize < 32 || phoff > len || (uint64_t)phnum * phentsize > len - phoff)
        return tb_sim_fail(s, TB_ERR_FORMAT, "ELF: program headers out of the file");
    for (unsigned i = 0; i < phnum; i++) {
        const uint8_t *ph = d + phoff + (size_t)i * phentsize;
        uint32_t off = rd32(ph + 4), va = rd32(ph + 8), fsz = rd32(ph + 16),
                 msz = rd32(ph + 20);

        if (rd32(ph) != 1) /* PT_LOAD */
            continue;
        if (fsz > msz || off > len || fsz > len - off ||
            (uint64_t)va + msz > 0x100000000ull)
            return tb_sim_fail(s, TB_ERR_FORMAT, "ELF: bad PT_LOAD %u", i);
        if (msz == 0)
            continue;
        if ((rc = map_range(s, va, (uint64_t)va + msz)) < 0)
            return rc;
        if (fsz && uc_mem_write(s->uc, va, d + off, fsz) != UC_ERR_OK)
            return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot write segment at 0x%08x", va);
        nload++;
    }
    if (!nload)
        return tb_sim_fail(s, TB_ERR_FORMAT, "ELF: no PT_LOAD segment");
    if (shnum && shoff) {
        if (shentsize < 40 || shoff > len || (uint64_t)shnum * shentsize > len - shoff)
            return tb_sim_fail(s, TB_ERR_FORMAT, "ELF: section headers out of the file");
        if ((rc = load_symbols(s, d, len, shoff, shnum, shentsize)) < 0)
            return rc;
        for (unsigned i = 0; i < shnum; i++) {
            const uint8_t *sh = d + shoff + (size_t)i * shentsize;
            uint32_t off = rd32(sh + 16), size = rd32(sh + 20);

            if (rd32(sh + 4) == 0x70000003u && off <= len && size <= len - off)
                arm_attributes(s, d + off, size); /* SHT_ARM_ATTRIBUTES */
        }
        if ((rc = check_profile(s)) < 0)
            return rc;
    }
    s->entry = entry & ~1u;
    s->entry_isa = (entry & 1) ? TB_ISA_THUMB : TB_ISA_ARM;
    s->loaded = true;
    return 0;
}

int tb_sim_load_elf_file(tb_sim *s, const char *path)
{
    FILE *f;
    uint8_t *buf;
    long n;
    int rc;

    if (!s || !path)
        return TB_ERR_INVAL;
    f = fopen(path, "rb");
    if (!f)
        return tb_sim_fail(s, TB_ERR_IO, "cannot open %s", path);
    if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || n > (512L << 20) ||
        fseek(f, 0, SEEK_SET)) {
        fclose(f);
        return tb_sim_fail(s, TB_ERR_IO, "cannot read %s", path);
    }
    buf = malloc((size_t)n + 1);
    if (!buf) {
        fclose(f);
        return TB_ERR_NOMEM;
    }
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return tb_sim_fail(s, TB_ERR_IO, "cannot read %s", path);
    }
    fclose(f);
    rc = tb_sim_load_elf(s, buf, (size_t)n);
    free(buf);
    return rc;
}

int tb_sim_symbol(const tb_sim *s, const char *name, uint32_t *value)
{
    if (!s || !name || !value)
        return TB_ERR_INVAL;
    for (size_t i = 0; i < s->n_syms; i++)
        if (!strcmp(s->strtab + s->syms[i].name, name)) {
            *value = s->syms[i].value;
            return 0;
        }
    return TB_ERR_NOT_FOUND;
}

/* ---- symbols of an ELF image in memory (option lists, sim.h) ---- */

int tb_elf_symbol(const uint8_t *d, size_t len, const char *name, uint32_t *value,
                  uint32_t *size)
{
    uint32_t shoff;
    unsigned shnum, shentsize;

    if (!d || !name || !value || !size)
        return TB_ERR_INVAL;
    if (len < 52 || memcmp(d, "\x7f" "ELF", 4) || d[4] != 1 || d[5] != 1)
        return TB_ERR_FORMAT;
    shoff = rd32(d + 32);
    shentsize = rd16(d + 46);
    shnum = rd16(d + 48);
    if (!shnum || !shoff)
        return TB_ERR_NOT_FOUND;
    if (shentsize < 40 || shoff > len || (uint64_t)shnum * shentsize > len - shoff)
        return TB_ERR_FORMAT;
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = d + shoff + (size_t)i * shentsize, *lsh;
        uint32_t off, ssize, link, entsize, soff, slen;

        if (rd32(sh + 4) != 2) /* SHT_SYMTAB */
            continue;
        off = rd32(sh + 16);
        ssize = rd32(sh + 20);
        link = rd32(sh + 24);
        entsize = rd32(sh + 36);
        if (entsize < 16 || link >= shnum || off > len || ssize > len - off)
            return TB_ERR_FORMAT;
        lsh = d + shoff + (size_t)link * shentsize;
        soff = rd32(lsh + 16);
        slen = rd32(lsh + 20);
        if (soff > len || slen > len - soff || slen == 0 || d[soff + slen - 1] != 0)
            return TB_ERR_FORMAT;
        for (size_t k = 0; k < ssize / entsize; k++) {
            const uint8_t *e = d + off + k * entsize;
            uint32_t nm = rd32(e);

            if (nm && nm < slen && !strcmp((const char *)d + soff + nm, name)) {
                *value = rd32(e + 4);
                *size = rd32(e + 8);
                return 0;
            }
        }
    }
    return TB_ERR_NOT_FOUND;
}

static int range_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int range_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static bool is_number(const char *s)
{
    char *end;

    if (!*s || *s == '-')
        return false;
    (void)strtoull(s, &end, 0);
    return *end == '\0';
}

/* One end of a range: a number as it is, or a symbol's address. */
static int range_end(const uint8_t *elf, size_t len, const char *opt, const char *s,
                     char *out, size_t outlen, char *err, size_t errlen)
{
    uint32_t v, sz;
    int rc;

    if (is_number(s)) {
        snprintf(out, outlen, "%s", s);
        return 0;
    }
    if (!elf)
        return range_fail(err, errlen, TB_ERR_NOT_FOUND, "%s: '%s' is not a number, and "
                          "a raw image has no symbols", opt, s);
    if ((rc = tb_elf_symbol(elf, len, s, &v, &sz)) < 0)
        return range_fail(err, errlen, rc, "%s: no symbol '%s' in the program's symbol "
                          "table", opt, s);
    snprintf(out, outlen, "0x%x", v & ~1u);
    return 0;
}

/* The value of one include=/exclude= option, numbers only, into out. */
static int resolve_range(const uint8_t *elf, size_t len, const char *opt, const char *val,
                         char *out, size_t outlen, char *err, size_t errlen)
{
    char lo[64], hi[64], a[64], b[64];
    const char *dash;
    uint32_t v, sz;
    int rc;

    /* A whole symbol first: its extent (a name may hold '-'). */
    if (elf && tb_elf_symbol(elf, len, val, &v, &sz) == 0) {
        if (!sz)
            return range_fail(err, errlen, TB_ERR_NOT_FOUND, "%s=%s: the symbol has no "
                              "size in the symbol table; give LO-HI", opt, val);
        snprintf(out, outlen, "0x%x-0x%llx", v & ~1u,
                 (unsigned long long)(v & ~1u) + sz);
        return 0;
    }
    dash = strchr(val, '-');
    if (!dash) {
        if (is_number(val))
            return range_fail(err, errlen, TB_ERR_INVAL, "%s=%s: a range is LO-HI or a "
                              "symbol", opt, val);
        return range_fail(err, errlen, TB_ERR_NOT_FOUND, elf
                          ? "%s=%s: no symbol '%s' in the program's symbol table"
                          : "%s=%s: '%s' is not LO-HI, and a raw image has no symbols",
                          opt, val, val);
    }
    if ((size_t)(dash - val) >= sizeof a || strlen(dash + 1) >= sizeof b)
        return range_fail(err, errlen, TB_ERR_INVAL, "%s=%s: too long", opt, val);
    snprintf(a, sizeof a, "%.*s", (int)(dash - val), val);
    snprintf(b, sizeof b, "%s", dash + 1);
    if ((rc = range_end(elf, len, opt, a, lo, sizeof lo, err, errlen)) < 0 ||
        (rc = range_end(elf, len, opt, b, hi, sizeof hi, err, errlen)) < 0)
        return rc;
    snprintf(out, outlen, "%s-%s", lo, hi);
    return 0;
}

int tb_elf_resolve_ranges(const uint8_t *elf, size_t len, const char *list, char *out,
                          size_t outlen, char *err, size_t errlen)
{
    size_t at = 0;
    const char *p;

    if (!list || !out || !outlen)
        return TB_ERR_INVAL;
    out[0] = '\0';
    for (p = list; *p;) {
        const char *comma = strchr(p, ','), *eq;
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        char tok[256], val[160];
        int w, rc;

        if (n >= sizeof tok)
            return range_fail(err, errlen, TB_ERR_NOSPACE, "option '%.40s...' too long", p);
        memcpy(tok, p, n);
        tok[n] = '\0';
        p += n + (comma ? 1 : 0);
        eq = strchr(tok, '=');
        if (eq && (!strncmp(tok, "include=", 8) || !strncmp(tok, "exclude=", 8))) {
            tok[7] = '\0';
            if ((rc = resolve_range(elf, len, tok, eq + 1, val, sizeof val, err, errlen)) < 0)
                return rc;
            w = snprintf(out + at, outlen - at, "%s%s=%s", at ? "," : "", tok, val);
        } else {
            w = snprintf(out + at, outlen - at, "%s%s", at ? "," : "", tok);
        }
        if (w < 0 || (size_t)w >= outlen - at)
            return range_fail(err, errlen, TB_ERR_NOSPACE, "option list too long");
        at += (size_t)w;
    }
    return 0;
}
