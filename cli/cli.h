/* The tracebench command's subcommands, one file each (cli/cmd_*.c). */
#ifndef TB_CLI_H
#define TB_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebench/decoder.h"

/* The exit codes of every command: one meaning each (README.md "Exit
 * codes", tracebench(1) EXIT STATUS).  Where several runs or sources end
 * differently, the worst wins: 1, then 4, then 5, then 3, then 6. */
enum tb_cli_exit {
    TB_EXIT_OK = 0,       /* success (roundtrip: MATCH) */
    TB_EXIT_DIFF = 1,     /* a check found a difference: roundtrip MISMATCH,
                           * vectors --check, vectors --spec-coverage */
    TB_EXIT_USAGE = 2,    /* bad command line, option list or value */
    TB_EXIT_NOTHING = 3,  /* roundtrip: nothing checked, fault not applied
                           * or not caught */
    TB_EXIT_ERROR = 4,    /* an input would not load, an output not be
                           * written, the pipeline failed */
    TB_EXIT_LOST = 5,     /* decode, packets, stats: trace was lost to
                           * corruption or never synchronised */
    TB_EXIT_CUT = 6,      /* roundtrip --strict: a budget cut a run short */
};
/* An --options list with an empty item ("ca,,ts", "ca,"): a usage error
 * in every command, as tb_encoder_opts_parse has it (sim and roundtrip
 * rewrite the list, resolving symbols, before it gets there). */
bool tb_cli_options_empty_item(const char *list);
/* --protocol's value ("ptm", "etmv3", "etmv1", "etmv2"), or
 * TB_PROTO_NONE. */
tb_protocol tb_cli_protocol(const char *name);
/* A bad command line: "tracebench CMD: MESSAGE" and where the usage is,
 * on stderr (one line naming the argument and what it accepts, not the
 * whole usage).  Returns TB_EXIT_USAGE. */
int tb_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The worse of two exit codes, in the order above. */
int tb_cli_exit_worse(int a, int b);

int tb_cli_packets(int argc, char **argv);
int tb_cli_decode(int argc, char **argv);
int tb_cli_sim(int argc, char **argv);
int tb_cli_roundtrip(int argc, char **argv);
int tb_cli_vectors(int argc, char **argv);
int tb_cli_stats(int argc, char **argv);
int tb_cli_conform(int argc, char **argv);
int tb_cli_gen(int argc, char **argv);
int tb_cli_coverage(int argc, char **argv);
int tb_cli_profile(int argc, char **argv);
/* `vectors --spec-coverage` (alias --coverage; cli/vectors_speccov.c),
 * with vectors' argv. */
int tb_cli_vectors_speccov(int argc, char **argv);
/* The vector list's directory (".": none in the path) into base. */
void tb_cli_vectors_dir(const char *list, char *base, size_t len);

/* True when a command's arguments ask for its usage (--help or -h):
 * then it goes to stdout with exit 0. */
bool tb_cli_wants_help(int argc, char **argv);

/* Parses "0x13" / "19" as a trace ID (0..0x7f); -1 when invalid. */
int tb_cli_parse_id(const char *s);

/* A source's architecture and how it is told apart, for the headers of
 * `packets` and `stats`: "ETMv3.5, trace ID 0x10", "PFT1.1, trace ID
 * 0x13", "ETMv1.3, 8-bit port" (ETMv1 has no trace ID, docs/etmv1.md 7). */
void tb_cli_source_label(const tb_config *cfg, char *buf, size_t len);

/* The `addr` format (cli/addr_out.c): one line per executed instruction
 * of each element, into f, `# gap WHY` lines and `# lost WHY` lines; with
 * v7m (a Cortex-M source, docs/vectors.md) `# exception N NAME
 * [tail-chain]` and `# return` lines where the trace shows them; ptm: the trace is PTM
 * (E/N on waypoints only); addrs/cap is scratch space (free() it).  Zero
 * the rest.  Returns 0, or the error, which also stays in err. */
typedef struct tb_cli_addr_out {
    FILE *f;
    const tb_memimage *mem;
    bool ptm;
    bool v7m;         /* a Cortex-M source: exception and return lines too */
    uint32_t *addrs;
    size_t cap;
    int err;
    const char *gap;  /* marker waiting for the next instruction */
    bool shown;       /* an instruction was printed */
    bool lost_said;   /* a `# lost` line, and no instruction since */
    char tag[8];      /* before every line ("0x10: " for --id all), or "" */
} tb_cli_addr_out;
int tb_cli_addr_element(tb_cli_addr_out *o, const tb_element *el);
/* A `# lost WHY at index N` line: trace lost to corruption (the
 * elements' NO_SYNC for a bad packet gives one by itself), or never
 * synchronised (the caller, after the source's last element). */
void tb_cli_addr_lost(tb_cli_addr_out *o, const char *why, uint64_t index);

/* Why a program file (data[0..len)) is not a 32-bit little-endian ARM
 * ELF file with a loadable segment (cli/program.c): "not an ELF file",
 * "a 64-bit ELF file ...", "an ELF file for x86-64 ...", ...; NULL when
 * it is one.  buf holds the text when it is built. */
const char *tb_cli_elf_problem(const uint8_t *data, size_t len, char *buf, size_t buflen);
/* The same for a file by name (NULL too when it cannot be read: the
 * loader then says why); the text is in buf. */
const char *tb_cli_elf_file_problem(const char *path, char *buf, size_t buflen);

/* The budget of `sim` and `roundtrip` (PROGRAM) when neither --max nor
 * the scenario's max_insns gives one: a run that never reaches its exit
 * ends, with a message, instead of running forever (sim.h: N
 * instructions, and N exceptions apart).  --max N raises it; --max 0 or
 * --max unlimited lifts it. */
#define TB_CLI_DEFAULT_BUDGET 10000000u

/* Parses --max's value: a number (0: none) or "unlimited".  -1 when bad. */
int tb_cli_parse_budget(const char *s, uint64_t *out);

#ifdef TB_HAVE_SIM
#include "tracebench/encoder.h"
#include "tracebench/sim.h"
/* The cpu (cli/cpu.c): --cpu's value (-1 after a message naming it); the
 * run's cpu, --cpu's or the scenario's; a Cortex-M refuses any protocol
 * but ETMv3 and sets the options' v7m, refusing what its ETM has not
 * (-1 after a message, a usage error). */
int tb_cli_cpu_parse(const char *cmd, const char *v, tb_sim_cpu *cpu);
tb_sim_cpu tb_cli_cpu_of(const char *scenario, bool has_cpu, tb_sim_cpu cpu);
int tb_cli_cpu_protocol(const char *cmd, tb_sim_cpu cpu, const char *proto);
int tb_cli_cpu_options(const char *cmd, tb_sim_cpu cpu, tb_encoder_opts *o);
#endif

/* The progress line (cli/progress.c): one line on stderr rewritten in
 * place, at most ~5 times a second; nothing when stderr is not a
 * terminal or with --quiet (on is false then, and every call returns at
 * once).  Clear it before printing anything else to the terminal. */
typedef struct tb_cli_progress {
    bool on;                  /* a terminal, and not --quiet */
    bool shown;               /* a line is on the screen */
    double start, last;       /* CLOCK_MONOTONIC seconds: run start, last line */
} tb_cli_progress;
void tb_cli_progress_init(tb_cli_progress *p, bool quiet);
/* The rate and elapsed time count from here (a new run). */
void tb_cli_progress_restart(tb_cli_progress *p);
/* True when a new line is due (on, and 0.2 s since the last one). */
bool tb_cli_progress_due(tb_cli_progress *p);
double tb_cli_progress_elapsed(const tb_cli_progress *p);
/* "PREFIX 12.3M insns (45.6M insns/s), 7.80 MB of trace, 3.2 s". */
void tb_cli_progress_run(tb_cli_progress *p, const char *prefix, uint64_t insns,
                         uint64_t exceptions, uint64_t trace_bytes);
/* Any text as the line (cut to the terminal's width). */
void tb_cli_progress_text(tb_cli_progress *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void tb_cli_progress_clear(tb_cli_progress *p);

/* Disassembly for `decode --format text --disasm` (cli/disasm_out.c,
 * Capstone): mem must outlive it.  NULL on allocation failure. */
typedef struct tb_cli_disasm tb_cli_disasm;
tb_cli_disasm *tb_cli_disasm_new(const tb_memimage *mem);
void tb_cli_disasm_free(tb_cli_disasm *d);
/* PTM ranges carry an atom on a waypoint only (default: false, every
 * instruction has one, as in ETMv3). */
void tb_cli_disasm_set_ptm(tb_cli_disasm *d, bool ptm);
/* decode --symbols: sym(ctx, addr, buf, len) writes what follows each
 * instruction's line ("" for nothing). */
void tb_cli_disasm_set_sym(tb_cli_disasm *d, void (*sym)(void *ctx, uint32_t addr, char *buf,
                                                         size_t len),
                           void *ctx);
/* After an INSN_RANGE element's line: one line per instruction into f,
 * prefix (e.g. "0x10: " for --id all; NULL: none) then
 * "    0xADDR  BYTES  MNEMONIC OPERANDS", and "  ; N: condition failed,
 * not executed" after one whose atom is N; nothing for other elements.
 * Returns 0 or TB_ERR_* (the range's code is not in the image). */
int tb_cli_disasm_element(tb_cli_disasm *d, const tb_element *el, const char *prefix,
                          FILE *f);
/* One such line (no newline) for the instruction at addr in state isa;
 * snprintf's return. */
int tb_cli_disasm_insn(tb_cli_disasm *d, uint32_t addr, tb_isa isa, char *buf, size_t len);

#endif
