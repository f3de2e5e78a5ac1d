/* tracebench gen --seed N [--isa arm|thumb|mixed] [--size S] [--cc PATH] [--no-build] -o DIR
 *
 * Writes a generated program (gen/, docs/gen.md) into DIR: gen.S, gen.ld,
 * gen.ini, and builds DIR/gen.elf with arm-none-eabi-gcc.  Prints the
 * round-trip command for it.  Exit codes as the other commands: 0 done, 1
 * failure (cannot write, no compiler, the compiler rejected it), 2 usage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tracebench/gen.h"
#include "tracebench/types.h"

#ifndef TB_ARM_CC_DEFAULT
#define TB_ARM_CC_DEFAULT "arm-none-eabi-gcc"
#endif

static int usage_to(FILE *f, int rc)
{
    fprintf(f,
            "usage: tracebench gen --seed N [--isa arm|thumb|mixed] [--size S] [--cc PATH]\n"
            "           [--no-build] -o DIR\n"
            "  Writes a random, valid, terminating ARM/Thumb program for seed N into DIR:\n"
            "  gen.S (assembler source with its vector table, start-up and handlers),\n"
            "  gen.ld (linker script), gen.ini (scenario: interrupts, faults, budget),\n"
            "  and builds gen.elf with the ARM cross compiler (its output: gen.log).\n"
            "  The same seed, ISA and size give the same files on every host.\n"
            "  --isa: every function ARM, every one Thumb, or mixed (default: the seed\n"
            "        picks, as `roundtrip --suite --seeds` does)\n"
            "  --size S: the number of functions, 1..%u (default %u)\n"
            "  --cc PATH: the compiler (default %s; env TB_ARM_CC)\n"
            "  --no-build: write the three files only\n"
            "  Then: tracebench roundtrip DIR/gen.elf --scenario DIR/gen.ini --protocol P\n"
            "exit: 0 done, 1 failure (cannot write DIR, no compiler, the compiler\n"
            "      rejected the program), 2 usage\n",
            TB_GEN_SIZE_MAX, TB_GEN_SIZE_DEFAULT, TB_ARM_CC_DEFAULT);
    return rc;
}

static bool parse_u64(const char *s, uint64_t *v)
{
    char *end;
    unsigned long long x;

    if (!s || *s < '0' || *s > '9')
        return false;
    errno = 0;
    x = strtoull(s, &end, 0);
    if (errno || *end)
        return false;
    *v = x;
    return true;
}

int tb_cli_gen(int argc, char **argv)
{
    const char *out = NULL, *cc = getenv("TB_ARM_CC");
    bool has_seed = false, build = true;
    tb_gen_opts o = {0, -1, 0};
    tb_gen_program p;
    char err[2048];
    int rc;

    if (tb_cli_wants_help(argc, argv))
        return usage_to(stdout, 0);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t x;

        if (!strcmp(a, "--no-build")) {
            build = false;
            continue;
        }
        if (!v) {
            fprintf(stderr, "tracebench gen: %s needs a value\n", a);
            return usage_to(stderr, 2);
        }
        i++;
        if (!strcmp(a, "--seed")) {
            if (!parse_u64(v, &o.seed)) {
                fprintf(stderr, "tracebench gen: --seed '%s' is not a number (0..2^64-1)\n", v);
                return 2;
            }
            has_seed = true;
        } else if (!strcmp(a, "--isa")) {
            if ((o.isa = tb_gen_isa_parse(v)) < 0) {
                fprintf(stderr, "tracebench gen: --isa '%s': give arm, thumb or mixed\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--size")) {
            if (!parse_u64(v, &x) || x < 1 || x > TB_GEN_SIZE_MAX) {
                fprintf(stderr, "tracebench gen: --size '%s': give 1..%u functions\n", v,
                        TB_GEN_SIZE_MAX);
                return 2;
            }
            o.size = (unsigned)x;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--out")) {
            out = v;
        } else if (!strcmp(a, "--cc")) {
            cc = v;
        } else {
            fprintf(stderr, "tracebench gen: unknown option '%s'\n", a);
            return usage_to(stderr, 2);
        }
    }
    if (!has_seed || !out) {
        fprintf(stderr, "tracebench gen: %s\n", !has_seed ? "--seed N is required"
                                                            : "-o DIR is required");
        return usage_to(stderr, 2);
    }
    if (!cc || !*cc)
        cc = TB_ARM_CC_DEFAULT;
    if ((rc = tb_gen_make(&o, &p, err, sizeof err)) < 0) {
        fprintf(stderr, "tracebench gen: %s\n", *err ? err : tb_err_str(rc));
        return rc == TB_ERR_INVAL ? 2 : 1;
    }
    rc = tb_gen_write(&p, out, err, sizeof err);
    if (rc >= 0 && build)
        rc = tb_gen_build(out, cc, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "tracebench gen: %s\n", *err ? err : tb_err_str(rc));
        tb_gen_program_fini(&p);
        return 1;
    }
    printf("seed %llu, isa %s, size %u: %u functions (%u Thumb, %u far), at most %llu "
           "instructions without interrupts\n",
           (unsigned long long)o.seed, tb_gen_isa_name(p.isa), p.size, p.stats.funcs,
           p.stats.thumb_funcs, p.stats.far_funcs, (unsigned long long)p.stats.est_insns);
    printf("%s/%s %s/%s %s/%s%s%s%s\n", out, TB_GEN_SOURCE, out, TB_GEN_LDSCRIPT, out,
           TB_GEN_SCENARIO, build ? " " : "", build ? out : "", build ? "/" TB_GEN_ELF : "");
    if (build)
        printf("round trip: tracebench roundtrip %s/%s --scenario %s/%s --protocol etmv3\n",
               out, TB_GEN_ELF, out, TB_GEN_SCENARIO);
    tb_gen_program_fini(&p);
    return 0;
}
