/* The tracebench command's subcommands, one file each (cli/cmd_*.c). */
#ifndef TB_CLI_H
#define TB_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tracebench/decoder.h"

int tb_cli_packets(int argc, char **argv);
int tb_cli_decode(int argc, char **argv);
int tb_cli_sim(int argc, char **argv);
int tb_cli_roundtrip(int argc, char **argv);
int tb_cli_vectors(int argc, char **argv);
int tb_cli_stats(int argc, char **argv);
/* `vectors --coverage` (cli/vectors_coverage.c), with vectors' argv. */
int tb_cli_vectors_coverage(int argc, char **argv);
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
 * of each element, into f, and `# gap WHY` lines; with v7m (a Cortex-M
 * source, docs/vectors.md) `# exception N NAME [tail-chain]` and
 * `# return` lines where the trace shows them; ptm: the trace is PTM
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
} tb_cli_addr_out;
int tb_cli_addr_element(tb_cli_addr_out *o, const tb_element *el);

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
/* After an INSN_RANGE element's line: one line per instruction into f,
 * prefix (e.g. "0x10: " for --id all; NULL: none) then
 * "    0xADDR  BYTES  MNEMONIC OPERANDS"; nothing for other elements.
 * Returns 0 or TB_ERR_* (the range's code is not in the image). */
int tb_cli_disasm_element(tb_cli_disasm *d, const tb_element *el, const char *prefix,
                          FILE *f);
/* One such line (no newline) for the instruction at addr in state isa;
 * snprintf's return. */
int tb_cli_disasm_insn(tb_cli_disasm *d, uint32_t addr, tb_isa isa, char *buf, size_t len);

#endif
