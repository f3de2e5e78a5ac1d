/*
 * What a program or memory file is, before it is loaded: the commands
 * that take one (`sim`, `roundtrip`, `decode --memory`) name the real
 * cause when it is not a 32-bit little-endian ARM ELF file (an x86-64
 * binary, a big-endian build, a raw image, a text file) instead of the
 * loader's "no loadable segment" (ELF header fields: System V ABI 4.1,
 * "ELF Header"; ARM ELF: IHI0044 5.2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tracebench/encoder.h"

enum { EI_CLASS = 4, EI_DATA = 5, ELFCLASS32 = 1, ELFDATA2LSB = 1, EM_ARM = 40 };

static const char *machine_name(unsigned m)
{
    switch (m) {
    case 3: return "x86 (i386)";
    case 8: return "MIPS";
    case 20: return "PowerPC";
    case 21: return "PowerPC64";
    case 62: return "x86-64";
    case 183: return "AArch64";
    case 243: return "RISC-V";
    default: return NULL;
    }
}

const char *tb_cli_elf_problem(const uint8_t *data, size_t len, char *buf, size_t buflen)
{
    tb_snap_region regions[TB_SNAP_MAX_DUMPS];
    uint8_t *storage = NULL;
    unsigned machine;
    int n;

    if (len < 4 || memcmp(data, "\x7f" "ELF", 4) != 0)
        return "not an ELF file";
    if (len < 52)
        return "an ELF file cut short (no whole ELF header)";
    if (data[EI_CLASS] != ELFCLASS32)
        return data[EI_CLASS] == 2 ? "a 64-bit ELF file (ELFCLASS64); tracebench runs 32-bit "
                                     "ARM (A32/T32) programs"
                                   : "an ELF file of unknown class";
    if (data[EI_DATA] != ELFDATA2LSB)
        return "a big-endian ELF file; tracebench runs little-endian ARM programs (build with "
               "-mlittle-endian)";
    machine = (unsigned)(data[18] | data[19] << 8);
    if (machine != EM_ARM) {
        const char *name = machine_name(machine);

        if (name)
            snprintf(buf, buflen, "an ELF file for %s (e_machine %u), not ARM (40)", name,
                     machine);
        else
            snprintf(buf, buflen, "an ELF file for machine %u, not ARM (40)", machine);
        return buf;
    }
    n = tb_encoder_elf_regions(data, len, regions, sizeof regions / sizeof regions[0],
                               &storage);
    free(storage);
    if (n == 0)
        return "an ARM ELF file with no loadable segment (no PT_LOAD with bytes in the file)";
    if (n < 0)
        return "an ARM ELF file whose program headers cannot be read (cut short or corrupt)";
    return NULL;
}

const char *tb_cli_elf_file_problem(const char *path, char *buf, size_t buflen)
{
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    long n;
    const char *why = NULL;

    if (!f)
        return NULL; /* the loader says why it cannot be read */
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (data = malloc((size_t)n + 1)) && fread(data, 1, (size_t)n, f) == (size_t)n)
        why = tb_cli_elf_problem(data, (size_t)n, buf, buflen);
    free(data);
    fclose(f);
    if (why && why != buf) {
        snprintf(buf, buflen, "%s", why);
        why = buf;
    }
    return why;
}
