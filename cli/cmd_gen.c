/* tracebench gen --seed N [--isa arm|thumb|mixed|m] [--size S] [--cc PATH] [--no-build] -o DIR
 *
 * Writes a generated program (gen/, docs/gen.md) into DIR: gen.S, gen.ld,
 * gen.ini, and builds DIR/gen.elf with arm-none-eabi-gcc.  Prints the
 * round-trip command for it.  Exit codes as the other commands (cli.h):
 * 0 done, 2 usage, 4 error (cannot write, no compiler, the compiler
 * rejected it). */
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
            "usage: tracebench gen --seed N [--isa arm|thumb|mixed|m] [--size S] [--cc PATH]\n"
            "           [--no-build] -o DIR\n"
            "\n"
            "  Writes a random, valid, terminating ARM/Thumb program for seed N into DIR:\n"
            "  gen.S (assembler source with its vector table, start-up and handlers),\n"
            "  gen.ld (linker script), gen.ini (scenario: interrupts, faults, budget),\n"
            "  and builds gen.elf with the ARM cross compiler (its output: gen.log).\n"
            "  The same seed, ISA and size give the same files on every host.\n"
            "\n"
            "  --seed N         the seed (required)\n"
            "  --isa I          every function ARM, every one Thumb, or mixed (default: the\n"
            "                   seed picks, as the round-trip suite's generated programs do);\n"
            "                   m: a Cortex-M3/M4 program (ARMv7-M, Thumb; its scenario says\n"
            "                   the cpu; traced by ETMv3 alone)\n"
            "  --size S         the number of functions, 1..%u (default %u)\n"
            "  --cc PATH        the compiler (default %s; env TB_ARM_CC)\n"
            "  --no-build       write the three files only\n"
            "  -o DIR           the directory to write (required)\n"
            "  Then round-trip DIR/gen.elf with its scenario DIR/gen.ini (tracebench roundtrip)\n"
            "\n"
            "exit: 0 done, 2 usage, 4 error (cannot write DIR, no compiler, the compiler\n"
            "      rejected the program)\n",
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
        if (strcmp(a, "--seed") && strcmp(a, "--isa") && strcmp(a, "--size") &&
            strcmp(a, "-o") && strcmp(a, "--out") && strcmp(a, "--cc"))
            return tb_cli_usage_error("gen", "unknown %s '%s'",
                                      a[0] == '-' ? "option" : "argument", a);
        if (!v)
            return tb_cli_usage_error("gen", "%s needs a value", a);
        i++;
        if (!strcmp(a, "--seed")) {
            if (!parse_u64(v, &o.seed))
                return tb_cli_usage_error("gen", "--seed %s: give a number, 0..2^64-1", v);
            has_seed = true;
        } else if (!strcmp(a, "--isa")) {
            if ((o.isa = tb_gen_isa_parse(v)) < 0)
                return tb_cli_usage_error("gen", "--isa %s: use arm, thumb or mixed (or m: a Cortex-M program)", v);
        } else if (!strcmp(a, "--size")) {
            if (!parse_u64(v, &x) || x < 1 || x > TB_GEN_SIZE_MAX)
                return tb_cli_usage_error("gen", "--size %s: give 1..%u functions", v,
                                          TB_GEN_SIZE_MAX);
            o.size = (unsigned)x;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--out")) {
            out = v;
        } else {
            cc = v;
        }
    }
    if (!has_seed || !out)
        return tb_cli_usage_error("gen", "%s", !has_seed ? "no --seed N: give the seed"
                                                         : "no -o DIR: give the directory");
    if (!cc || !*cc)
        cc = TB_ARM_CC_DEFAULT;
    if ((rc = tb_gen_make(&o, &p, err, sizeof err)) < 0) {
        fprintf(stderr, "tracebench gen: %s\n", *err ? err : tb_err_str(rc));
        return rc == TB_ERR_INVAL ? TB_EXIT_USAGE : TB_EXIT_ERROR;
    }
    rc = tb_gen_write(&p, out, err, sizeof err);
    if (rc >= 0 && build)
        rc = tb_gen_build(out, cc, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "tracebench gen: %s\n", *err ? err : tb_err_str(rc));
        tb_gen_program_fini(&p);
        return TB_EXIT_ERROR;
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
    return TB_EXIT_OK;
}
