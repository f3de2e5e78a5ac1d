/* What `coverage` and `profile` share (cli/analyze.c): the inputs given
 * on the command line (snapshot directories or raw files, the input
 * options per input), each trace source decoded into an analysis's
 * begin/element/end hooks, the program's ELFs loaded with notes on what
 * they lack, and the check that an ELF holds the traced code. */
#ifndef TB_CLI_ANALYZE_H
#define TB_CLI_ANALYZE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "input.h"
#include "tracebench/codecov.h"
#include "tracebench/decoder.h"
#include "tracebench/elfinfo.h"
#include "tracebench/profile.h"

#define TB_CLI_MAX_INPUTS 64

typedef struct tb_cli_analysis {
    const char *cmd;            /* "coverage", "profile" */
    void *ctx;
    int (*begin)(void *ctx, tb_protocol proto, const tb_memimage *mem);
    int (*element)(void *ctx, const tb_element *el);
    int (*end)(void *ctx);
    /* After end, with the source's memory: an exit code (the ELF check). */
    int (*after)(void *ctx, const tb_memimage *mem);
    /* Cycle-accurate sources: the decoder's ranges end where their
     * cycle counts end (tb_decoder_set_cycle_ranges), so that each
     * instruction's cycles are its own (profile --cycles). */
    bool cycle_ranges;
} tb_cli_analysis;

/* The command line's paths, formats and ELFs (first pass): own options
 * own_opts (each taking a value; "--format" and "-o" always), --quiet.
 * Returns 0 or an exit code after saying why. */
typedef struct tb_cli_analysis_args {
    const char *paths[TB_CLI_MAX_INPUTS];
    size_t npaths;
    const char *elf_path[TB_CLI_MAX_MEMORY];
    size_t nelf;
    const char *format, *out_path;
    bool quiet;
    bool cycles;        /* --cycles (profile) */
    /* How the notes name an ELF: "--memory" when NULL ("--symbols" in
     * decode, "program" in roundtrip). */
    const char *elf_flag;
} tb_cli_analysis_args;

int tb_cli_analysis_parse(const char *cmd, int argc, char **argv, tb_cli_analysis_args *a);
/* Loads a->elf_path into elf[] with notes (stripped, no DWARF) unless
 * quiet; need_dwarf: no DWARF is an error.  0 or an exit code (elf[]
 * then freed). */
int tb_cli_analysis_elfs(const char *cmd, const tb_cli_analysis_args *a, tb_elfinfo **elf,
                         bool need_dwarf);
/* Every input's every source through an.  *nsources counts them.  An
 * exit code. */
int tb_cli_analysis_run(const tb_cli_analysis *an, int argc, char **argv,
                        const tb_cli_analysis_args *a, uint64_t *nsources);
/* Whether the ELFs' bytes equal mem's at the n instructions get()
 * gives: 0, or 1 after saying which differs. */
int tb_cli_analysis_check_code(const char *cmd, const tb_memimage *mem, tb_elfinfo **elf,
                               const char *const *elf_path, size_t nelf,
                               void (*get)(const void *arr, size_t i, uint32_t *addr,
                                           unsigned *size),
                               const void *arr, size_t n);
/* Opens -o (or stdout); closes it, 0 or an exit code after saying why. */
FILE *tb_cli_analysis_open_out(const char *cmd, const char *path);
int tb_cli_analysis_close_out(const char *cmd, FILE *f, const char *path);
void tb_cli_json_str(FILE *f, const char *s);

/* The reports behind `coverage` and `profile` (cmd_coverage.c,
 * cmd_profile.c), also written from a round trip's own decode
 * (cmd_roundtrip.c --code-coverage, --profile): one writer each, so
 * that both give the same file for the same decode. */
/* --format NAME's number, or -1. */
int tb_cli_coverage_format(const char *name);
int tb_cli_profile_format(const char *name);
/* Whether the coverage format needs a DWARF line table (lcov, cobertura). */
bool tb_cli_coverage_needs_dwarf(int format);
/* Writes the report to path (NULL: stdout) with its notes on stderr
 * unless quiet.  0 or an exit code after saying why. */
int tb_cli_coverage_write(const char *cmd, const char *path, int format, tb_elfinfo **elf,
                          size_t nelf, tb_codecov *cc, uint64_t nsources, bool quiet);
int tb_cli_profile_write(const char *cmd, const char *path, int format, tb_elfinfo **elf,
                         size_t nelf, tb_profile *p, uint64_t nsources, bool quiet);
/* The ELFs' functions into p (before its first source).  0 or an exit
 * code. */
int tb_cli_profile_add_funcs(const char *cmd, tb_profile *p, tb_elfinfo **elf, size_t nelf);

/* decode --symbols (cmd_decode.c): addr as "func+0xOFF file:LINE"
 * ("?" for no function, no file:line when the line table has none), and
 * as JSON members KEY_func, KEY_offset, KEY_file, KEY_line (each only
 * when known), each after a comma. */
void tb_cli_sym_text(const tb_elfinfo *e, uint32_t addr, char *buf, size_t len);
void tb_cli_sym_json(FILE *f, const tb_elfinfo *e, const char *key, uint32_t addr);
/* Whether the ELF holds the bytes of el (an INSN_RANGE) that the decode
 * read from mem: counts ranges that differ (1 returned) and ranges whose
 * code is not in the ELF's loadable segments, with the first address of
 * each. */
typedef struct tb_cli_sym_check_state {
    uint64_t differ, outside;
    uint32_t first_differ, first_outside;
} tb_cli_sym_check_state;
int tb_cli_sym_check(tb_cli_sym_check_state *s, const tb_elfinfo *e, const tb_memimage *mem,
                     const tb_element *el);

#endif
