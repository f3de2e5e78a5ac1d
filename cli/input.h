/* What `packets` and `decode` read (cli/input.c): a snapshot directory,
 * or a raw trace buffer file (an ETB/ETR dump) with its configuration
 * and memory on the command line; the trace sources chosen by --id; and
 * the end-of-output check shared by both commands. */
#ifndef TB_CLI_INPUT_H
#define TB_CLI_INPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "tracebench/health.h"
#include "tracebench/snapshot.h"
#include "tracebench/stream.h"

#define TB_CLI_MAX_SOURCES 32
#define TB_CLI_MAX_MEMORY 32

typedef struct tb_cli_source {
    const tb_snap_source *src;  /* NULL for a raw file */
    tb_config cfg;
    char name[TB_SNAP_MAX_NAME];
} tb_cli_source;

typedef struct tb_cli_input {
    const char *cmd;            /* "packets" or "decode", for messages */
    bool need_memory;           /* decode, stats: --memory is accepted */
    bool quiet_skips;           /* no note on sources passed over (stats
                                 * lists them in its output) */
    int default_id;             /* TB_STREAM_ONLY or TB_STREAM_ALL */
    const char *path;
    int id;                     /* 0..0x7F, TB_STREAM_ONLY, TB_STREAM_ALL */
    bool id_given;
    /* raw file: */
    const char *protocol, *options;
    bool have_reg[4];           /* ETMCR, ETMIDR, ETMCCER, ETMTRACEIDR */
    uint32_t reg[4];
    int formatted;              /* -1 not given, 0 --raw, 1 --formatted */
    const char *memory[TB_CLI_MAX_MEMORY];
    size_t n_memory;
    /* after tb_cli_input_open(): */
    bool is_file;
    bool snap_loaded;
    bool refused;               /* a captured source was refused */
    tb_snapshot snap;
    size_t n;
    tb_cli_source srcs[TB_CLI_MAX_SOURCES];
} tb_cli_input;

/* Zeroes in and sets what the command wants. */
void tb_cli_input_init(tb_cli_input *in, const char *cmd, bool need_memory,
                       int default_id);
/* argv[*i] as one of the input's options (--id, the raw-file options,
 * --memory) or the input path: consumes it and its value and returns 1;
 * 0 when it is none of them; 2 after printing a usage error. */
int tb_cli_input_arg(tb_cli_input *in, int argc, char **argv, int *i);
/* The first --memory that names an ELF (not ADDR:FILE), or NULL: what a
 * bare `decode --symbols` reads. */
const char *tb_cli_input_memory_elf(const tb_cli_input *in);
/* Opens the input and chooses its sources.  0, or 1 (an error) or 2 (a
 * usage error) after printing why.  Notes on sources passed over go to
 * stderr. */
int tb_cli_input_open(tb_cli_input *in);
void tb_cli_input_close(tb_cli_input *in);
/* Source k's bytes (tb_stream_source_spans / tb_stream_file_spans). */
int tb_cli_input_stream_spans(const tb_cli_input *in, size_t k,
                              tb_stream_span_cb cb, void *ctx, char *err,
                              size_t errlen);
int tb_cli_input_stream(const tb_cli_input *in, size_t k, tb_stream_cb cb,
                        void *ctx, char *err, size_t errlen);
/* Source k's memory image (the snapshot's dumps, or --memory). */
int tb_cli_input_memory(const tb_cli_input *in, size_t k, tb_memimage **mem,
                        char *err, size_t errlen);
/* The usage of `packets`, `decode` or `stats` (cmd), for --help. */
void tb_cli_input_usage(FILE *f, const char *cmd);
/* "unknown option 'ARG'" and where the usage is, on stderr: one line
 * naming it, not the whole usage.  Returns TB_EXIT_USAGE. */
int tb_cli_unknown_arg(const tb_cli_input *in, const char *arg);
/* --format NAME (one of names[], NULL-terminated) or --json (the index
 * of "json" in names): *fmt gets the index.  1 consumed, 0 neither, 2
 * after a usage error naming the value and the accepted ones. */
int tb_cli_format_arg(const tb_cli_input *in, int argc, char **argv, int *i,
                      const char *const *names, int *fmt);

/* After source k was read (cli/health_out.c): when trace was lost
 * (tb_health_diagnose), a warning on stderr naming what was lost, where,
 * and the option to check, and TB_EXIT_LOST; else TB_EXIT_OK (a source
 * with no bytes at all gets a note when --formatted names an ID the
 * file's frames do not carry). */
int tb_cli_health_report(const tb_cli_input *in, size_t k, const tb_health *h);

/* The end of a command's output: flushes f and returns 0, or prints why
 * writing failed (err_no: the errno of an earlier failed write, 0 if
 * none) and returns 1. */
int tb_cli_output_end(FILE *f, const char *cmd, int err_no);
/* After a write to f: 0, or errno (never 0) when f has failed. */
int tb_cli_output_check(FILE *f);

#endif
