/* tracebench: the command line.  Subcommands live in cli/cmd_*.c. */
#include <stdarg.h>
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
    {"sim", tb_cli_sim, "sim PROGRAM [--scenario S.ini] [--truth FILE] [--protocol P --out DIR] ...\n"
                        "                                  run a program; its ground truth and trace"},
#endif
    {"packets", tb_cli_packets, "packets DIR|FILE [--id ID|all] [--format text|json] ...\n"
                                "                                  list the packets of each trace source"},
#ifdef TB_HAVE_CMD_DECODE
    {"decode", tb_cli_decode, "decode DIR|FILE [--id ID|all] [--format text|json|addr] [--disasm] ...\n"
                              "                                  decode a trace to instructions"},
#endif
#ifdef TB_HAVE_CMD_STATS
    {"stats", tb_cli_stats, "stats DIR|FILE [--id ID|all] [--format text|json] ...\n"
                            "                                  per source: bytes, packets, instructions, bits/insn, gaps"},
#endif
#ifdef TB_HAVE_CMD_COVERAGE
    {"coverage", tb_cli_coverage, "coverage DIR|FILE ... [--memory ELF ...] [--format text|json|lcov|cobertura] ...\n"
                                  "                                  code coverage: instructions, functions, lines"},
#endif
#ifdef TB_HAVE_CMD_PROFILE
    {"profile", tb_cli_profile, "profile DIR|FILE ... [--memory ELF ...] [--format callgrind|folded|text] ...\n"
                                "                                  instructions per function, line, call edge, stack"},
#endif
#ifdef TB_HAVE_CMD_ROUNDTRIP
    {"roundtrip", tb_cli_roundtrip, "roundtrip PROGRAM|--suite ...\n"
                                    "                                  sim + encode + decode + compare with the truth"},
#endif
#ifdef TB_HAVE_CMD_CONFORM
    {"conform", tb_cli_conform, "conform --decoder 'COMMAND ... {dir} ...' [--format addr|opencsd|json] ...\n"
                                "                                  run any decoder over the vectors: a verdict each"},
#endif
#ifdef TB_HAVE_CMD_GEN
    {"gen", tb_cli_gen, "gen --seed N [--isa arm|thumb|mixed] [--size S] -o DIR\n"
                        "                                            a random ARM/Thumb program, its scenario and ELF"},
#endif
#ifdef TB_HAVE_CMD_VECTORS
    {"vectors", tb_cli_vectors, "vectors [--check] [--spec-coverage] ...\n"
                                "                                  regenerate (or check) the conformance vectors"},
#endif
};

static void usage(FILE *f)
{
    size_t i;

    fprintf(f, "usage: tracebench COMMAND [ARGS]\n"
               "       tracebench --version | --help\n\ncommands:\n");
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %s\n", commands[i].usage);
    fprintf(f, "  version                         print the version\n");
    fprintf(f, "\nSee tracebench(1).  `tracebench COMMAND --help` for a command's options.\n"
               "exit codes, one meaning each (README.md \"Exit codes\", tracebench(1)):\n"
               "  0    success (roundtrip: MATCH)\n"
               "  1    a difference: roundtrip MISMATCH, vectors --check, vectors --spec-coverage\n"
               "  2    usage: a bad command line\n"
               "  3    roundtrip: nothing checked (or a fault not applied or not caught)\n"
               "  4    error: an input would not load, an output not be written, a pipeline error\n"
               "  5    packets, decode, stats, coverage, profile: trace lost to corruption, or never synchronised\n"
               "  6    roundtrip --strict: a run cut short by its budget\n"
               "  130  sim interrupted by SIGINT (143: SIGTERM); the snapshot is finished\n");
}


bool tb_cli_options_empty_item(const char *list)
{
    size_t n = list ? strlen(list) : 0;

    return n && (list[0] == ',' || list[n - 1] == ',' || strstr(list, ",,"));
}

tb_protocol tb_cli_protocol(const char *name)
{
    static const tb_protocol all[] = {TB_PROTO_PTM, TB_PROTO_ETMV3, TB_PROTO_ETMV1,
                                      TB_PROTO_ETMV2};

    for (size_t k = 0; name && k < sizeof all / sizeof all[0]; k++)
        if (!strcmp(name, tb_protocol_name(all[k])))
            return all[k];
    return TB_PROTO_NONE;
}

int tb_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "tracebench %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(tracebench %s --help for usage)\n", cmd);
    return TB_EXIT_USAGE;
}

int tb_cli_exit_worse(int a, int b)
{
    /* Rank: what a script must look at first.  A difference is the
     * answer to the question asked; an error says there is no answer;
     * lost trace an incomplete one; nothing checked no answer either but
     * a clean run; a budget cut a partial one. */
    static const int rank[] = {[TB_EXIT_OK] = 0,    [TB_EXIT_CUT] = 1, [TB_EXIT_NOTHING] = 2,
                               [TB_EXIT_LOST] = 3,  [TB_EXIT_ERROR] = 4, [TB_EXIT_USAGE] = 5,
                               [TB_EXIT_DIFF] = 6};
    int ra = a >= 0 && a <= TB_EXIT_CUT ? rank[a] : 7, rb = b >= 0 && b <= TB_EXIT_CUT ? rank[b] : 7;

    return rb > ra ? b : a;
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
