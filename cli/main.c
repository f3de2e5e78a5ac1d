/* tracebench: the command line.  Subcommands live in cli/cmd_*.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tracebench/version.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;
} command;

static const command commands[] = {
#ifdef TB_HAVE_CMD_SIM
    {"sim", tb_cli_sim, "sim PROGRAM [--scenario S.ini] [--truth FILE] ...   run a program, record the ground truth"},
#endif
    {"packets", tb_cli_packets, "packets DIR|FILE [--id ID] [--json]          list the packets of a snapshot's trace sources"},
#ifdef TB_HAVE_CMD_DECODE
    {"decode", tb_cli_decode, "decode DIR|FILE [--id ID|all] [--format text|json|addr] [--disasm]\n"
                              "                                            decode a snapshot's trace to instructions"},
#endif
#ifdef TB_HAVE_CMD_STATS
    {"stats", tb_cli_stats, "stats DIR [--id ID] [--json]                per source: bytes, packets, instructions, bits/insn, gaps, time span"},
#endif
#ifdef TB_HAVE_CMD_ROUNDTRIP
    {"roundtrip", tb_cli_roundtrip, "roundtrip PROGRAM|--suite ...            sim + encode + decode + compare"},
#endif
#ifdef TB_HAVE_CMD_GEN
    {"gen", tb_cli_gen, "gen --seed N [--isa arm|thumb|mixed] [--size S] -o DIR\n"
                        "                                            a random ARM/Thumb program, its scenario and ELF"},
#endif
#ifdef TB_HAVE_CMD_VECTORS
    {"vectors", tb_cli_vectors, "vectors [--out DIR]                         regenerate the conformance vectors"},
#endif
};

static void usage(FILE *f)
{
    size_t i;

    fprintf(f, "usage: tracebench COMMAND [ARGS]\n"
               "       tracebench --version | --help\n\ncommands:\n");
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %s\n", commands[i].usage);
    fprintf(f, "  version                                     print the version\n");
    fprintf(f, "\nSee tracebench(1).  `tracebench COMMAND --help` for a command's options.\n"
               "exit codes (README.md): 0 success (roundtrip: MATCH); 1 failure or error\n"
               "  (roundtrip: MISMATCH); 2 usage; roundtrip only: 3 nothing checked, fault\n"
               "  not applied or not caught, 4 error\n");
}

bool tb_cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return true;
    return false;
}

void tb_cli_source_label(const tb_config *cfg, char *buf, size_t len)
{
    if (cfg->protocol == TB_PROTO_ETMV1 || cfg->protocol == TB_PROTO_ETMV2)
        snprintf(buf, len, "ETMv%c.%u, %u-bit port", cfg->protocol == TB_PROTO_ETMV1 ? '1' : '2',
                 cfg->arch_minor, cfg->port_width);
    else
        snprintf(buf, len, "%s%u, trace ID 0x%02x",
                 cfg->protocol == TB_PROTO_PTM ? "PFT1." : "ETMv3.", cfg->arch_minor,
                 cfg->trace_id);
}

int tb_cli_parse_id(const char *s)
{
    char *end;
    long v;

    if (!s || !*s)
        return -1;
    v = strtol(s, &end, 0);
    if (*end || v < 0 || v > 0x7f)
        return -1;
    return (int)v;
}

int main(int argc, char **argv)
{
    size_t i;

    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        if (argc > 2) {
            usage(stderr);
            return 2;
        }
        printf("tracebench %s\n", TB_VERSION_STRING);
        return 0;
    }
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "tracebench: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
