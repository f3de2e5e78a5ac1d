/*
 * The conformance kit (`tracebench conform`, issue 33): run any decoder
 * over the vectors and give a verdict per vector and per spec feature.
 *
 * A unit is one trace source of one vector (a two-source vector has two):
 * its snapshot directory, its trace ID, protocol and memory dumps, and
 * its expected decode (decode.addr or decode-0xNN.addr, derived from the
 * ground truth alone by vectors/expect.c; never from our decoder).  The
 * decoder's output is read in one of three forms (docs/vectors.md "Test
 * your decoder"): our `addr` form, OpenCSD's `trc_pkt_lister -decode`
 * listing (ranges expanded with the vector's memory image), or JSON
 * lines; and compared instruction by instruction with the expected
 * decode under the gap rules of docs/vectors.md.
 *
 * This module is tooling beside the vectors, not libtracebench: it runs
 * processes, but like the library it never prints; the CLI
 * (cli/cmd_conform.c) prints what it returns.  The spec-coverage
 * catalogue is reached only through speccov.c.
 */
#ifndef TB_CONFORM_H
#define TB_CONFORM_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebench/types.h"

/* ------------------------------------------------------------------ */
/* Items: what one line of expected or decoder output says. */

typedef enum tb_conform_item_kind {
    TB_CI_NONE = 0,   /* nothing (blank line, comment, another element) */
    TB_CI_INSN,       /* an executed instruction: addr, isa, atom */
    TB_CI_NACC,       /* "0xADDR ? NACC": code the image does not hold */
    TB_CI_UNKNOWN,    /* "? ? E": an atom at an unknown address */
    TB_CI_GAP,        /* "# gap WHY" */
    TB_CI_LOST,       /* "# lost WHY at index N" */
    TB_CI_BAD,        /* a line that is not in the format (why in text) */
} tb_conform_item_kind;

typedef struct tb_conform_item {
    tb_conform_item_kind kind;
    uint32_t addr;
    char isa[8];         /* "A32", "T32", ... (normalised) */
    char atom;           /* 'E' or 'N' ('?' for UNKNOWN without one) */
    int id;              /* the trace ID the line names; -1: none */
    uint64_t index;      /* LOST: the stream index */
    char word[128];      /* GAP / LOST: why; BAD: what is wrong */
} tb_conform_item;

/* The output forms (--format). */
typedef enum tb_conform_format {
    TB_CONFORM_ADDR = 0,
    TB_CONFORM_OPENCSD,
    TB_CONFORM_JSON,
} tb_conform_format;

/* "addr", "opencsd", "json"; -1 for another name. */
int tb_conform_format_parse(const char *name);
const char *tb_conform_format_name(tb_conform_format f);

/* One line of the addr form (docs/vectors.md), NUL-terminated, no
 * newline needed.  With tags, an `0xNN: ` prefix (`tracebench decode
 * --id all`) gives the item's id.  Addresses in any case of hex, ISA
 * names A32/T32 (ARM, Thumb accepted), atom E or N; text after the atom
 * is allowed.  Never fails: a line that is not in the form is TB_CI_BAD. */
void tb_conform_parse_addr(const char *line, bool tags, tb_conform_item *it);

/* The ISA name in s (up to a space, ')' or ';'), normalised into out:
 * A32, T32, or s itself upper-cased (TEE, A64...). */
void tb_conform_isa_norm(const char *s, size_t n, char out[8]);

/* ------------------------------------------------------------------ */
/* The got side: a reader turns lines of decoder output into items. */

struct tb_memimage;
typedef struct tb_conform_reader tb_conform_reader;

/* A reader for the format; protocol ("ptm", "etmv3"...) tells OpenCSD's
 * atoms apart (PTM shows E/N on a waypoint only); mem (may be NULL: then
 * ranges cannot be expanded and are TB_CI_BAD) is the image ranges are
 * walked over, and must outlive the reader.  NULL when out of memory. */
tb_conform_reader *tb_conform_reader_new(tb_conform_format f, const char *protocol,
                                         const struct tb_memimage *mem);
void tb_conform_reader_free(tb_conform_reader *r);

/* Items of one line (no newline) are given to cb one at a time, in order;
 * a non-zero return from cb stops the line.  Returns the number of items
 * given. */
typedef int (*tb_conform_item_cb)(void *ctx, const tb_conform_item *it);
size_t tb_conform_reader_line(tb_conform_reader *r, const char *line, tb_conform_item_cb cb,
                              void *ctx);

/* The first diagnostic the decoder printed in its output (OpenCSD's
 * "OCSD_ERR..." lines), "" when none. */
const char *tb_conform_reader_diag(const tb_conform_reader *r);

/* The item as a line of the addr form, for reports. */
void tb_conform_item_text(const tb_conform_item *it, char *buf, size_t len);

/* ------------------------------------------------------------------ */
/* The comparison: expected decode against items, streaming. */

typedef struct tb_conform_divergence {
    uint64_t exp_line;        /* its line in the expected file; 0: past the end */
    char exp_text[96];        /* that line, or "(end of the expected decode)" */
    uint64_t got_line;        /* the output line; 0: past the end of output */
    char got_text[96];        /* the item as an addr line, or "(end of output)" */
    char got_raw[320];        /* the decoder's own line it came from */
    char why[256];            /* what differs */
    uint64_t agreed;          /* instructions that agreed before it */
    char context[3][96];      /* up to 3 expected lines before it, oldest first */
    unsigned n_context;
    /* Where in the trace (speccov.c), when found: the packet that gives
     * the expected line at exp_line (the last instruction when past the
     * end), its kind and its spec-coverage variants with their spec
     * sections. */
    bool located;
    uint64_t packet_index;
    char packet_kind[32];
    char variants[256];       /* "etmv3.phdr.fmt1 (IHI0014Q 7.3.1 Table 7.2); ..." */
    unsigned var_ids[8];      /* their variant numbers (speccov.c) */
    unsigned n_var_ids;
    char locate_note[160];    /* why not located */
} tb_conform_divergence;

typedef struct tb_conform_cmp tb_conform_cmp;

/* Reads the expected decode from path as the comparison goes.  NULL with
 * the cause in err. */
tb_conform_cmp *tb_conform_cmp_new(const char *path, char *err, size_t errlen);
void tb_conform_cmp_free(tb_conform_cmp *c);

/* The next got item, from output line `line` (raw: that line, for the
 * report).  Returns 1 once the comparison has diverged (later items are
 * ignored), 0 while it agrees, or -1 when the expected file is bad (the
 * cause in tb_conform_cmp_error). */
int tb_conform_cmp_push(tb_conform_cmp *c, const tb_conform_item *it, uint64_t line,
                        const char *raw);
/* The end of output.  Returns 1 diverged, 0 agreed, -1 bad expected file. */
int tb_conform_cmp_finish(tb_conform_cmp *c);

bool tb_conform_cmp_diverged(const tb_conform_cmp *c);
const tb_conform_divergence *tb_conform_cmp_divergence(const tb_conform_cmp *c);
const char *tb_conform_cmp_error(const tb_conform_cmp *c);

typedef struct tb_conform_counts {
    uint64_t exp_insns;       /* expected instructions read */
    uint64_t got_insns;       /* instruction items pushed */
    uint64_t agreed;          /* instructions that agreed */
    uint64_t gap_skipped;     /* got instructions passed over in gaps */
    uint64_t got_markers;     /* got gap/lost lines */
} tb_conform_counts;
const tb_conform_counts *tb_conform_cmp_counts(const tb_conform_cmp *c);

/* ------------------------------------------------------------------ */
/* The vectors. */

#define TB_CONFORM_PATH 1024
#define TB_CONFORM_COV_BYTES 64   /* a variant set: bit v of byte v/8 */

typedef struct tb_conform_unit {
    char name[128];           /* "irq_fiq-ptm", "two_sources-ptm-etmv3:0x10" */
    char vector[96];          /* the vector's directory name */
    char dir[TB_CONFORM_PATH];    /* its path */
    char expect[TB_CONFORM_PATH]; /* the expected decode */
    char protocol[16];        /* "ptm", "etmv3", "etmv1", "etmv2", or the
                               * source's type= lower-cased when unknown */
    int trace_id;             /* the source's trace ID (-1: unknown) */
    unsigned n_sources;       /* of the vector */
    char memory[2048];        /* its core's dumps: "0x%08X:PATH" each, '\n'-separated */
    uint8_t cov[TB_CONFORM_COV_BYTES]; /* the vector's spec-coverage variants */
    bool cov_known;
    char load_error[256];     /* the vector would not load: why */
} tb_conform_unit;

/* The units of every vector under root (each subdirectory holding a
 * snapshot.ini and an expected decode, in name order), or of root itself
 * when it is a vector.  *out is malloc'd (free()).  Returns the count or
 * a negative TB_ERR_* with the cause in err.  A vector that will not load
 * still gives a unit, with load_error set. */
int tb_conform_units(const char *root, tb_conform_unit **out, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* The spec-coverage catalogue, through one seam (speccov.c). */

typedef struct tb_conform_cov tb_conform_cov;

/* The catalogue beside the vectors: root/spec-coverage.tsv, else
 * root/../spec-coverage.tsv (the source tree's vectors/).  NULL when there is
 * none or it does not load (note says why; sections are then not
 * given). */
tb_conform_cov *tb_conform_cov_open(const char *root, char *note, size_t notelen);
void tb_conform_cov_free(tb_conform_cov *c);
unsigned tb_conform_cov_count(void);
const char *tb_conform_cov_name(unsigned v);
/* The spec section of variant v ("" without a catalogue). */
const char *tb_conform_cov_section(const tb_conform_cov *c, unsigned v);
/* The variants a vector holds (all its sources), into u->cov. */
int tb_conform_cov_vector(tb_conform_unit *u, char *err, size_t errlen);
/* The variants of one packet (cfg: its source's) with their sections,
 * into d->variants and d->var_ids.  Returns how many, or TB_ERR_*. */
int tb_conform_cov_packet(const tb_conform_cov *c, const tb_config *cfg, const tb_packet *pkt,
                          tb_conform_divergence *d);

/* Where a divergence is in the trace (locate.c): fills d's located
 * fields with the packet whose arrival makes tracebench's decoder show
 * the expected instruction at d->exp_line (the last one when 0): the
 * shortest run of the source's packets whose decode shows every expected
 * instruction up to that line, and those equal to the expected ones.
 * It places a divergence; it never decides one.  When tracebench's own
 * decode does not agree with the expected decode up to there, nothing
 * is placed and locate_note says why. */
void tb_conform_locate(const tb_conform_cov *c, const tb_conform_unit *u,
                       tb_conform_divergence *d);

/* ------------------------------------------------------------------ */
/* Running a decoder. */

typedef enum tb_conform_status {
    TB_CONFORM_PASS = 0,
    TB_CONFORM_FAIL,          /* a divergence */
    TB_CONFORM_CRASH,         /* killed by a signal */
    TB_CONFORM_TIMEOUT,
    TB_CONFORM_NO_OUTPUT,     /* no instruction where some were expected */
    TB_CONFORM_ERROR,         /* the vector or the run could not be set up */
    TB_CONFORM_UNSUPPORTED,   /* a protocol the decoder does not claim */
    TB_CONFORM_STATUS_COUNT
} tb_conform_status;

/* "PASS", "FAIL", "CRASH", "TIMEOUT", "NO OUTPUT", "ERROR", "UNSUPPORTED". */
const char *tb_conform_status_name(tb_conform_status s);

typedef struct tb_conform_result {
    tb_conform_status status;
    int exit_code;            /* the decoder's exit status (-1: none) */
    int signal;               /* CRASH: the signal */
    double seconds;           /* the run's wall time */
    tb_conform_counts counts;
    tb_conform_divergence div; /* FAIL */
    char note[320];           /* stderr's first line, a diagnostic, the exit */
    bool ran;                 /* a decoder run was made for it */
} tb_conform_result;

typedef struct tb_conform_opts {
    const char *command;      /* the decoder's command line, with placeholders */
    tb_conform_format format;
    const char *const *protocols; /* the protocols claimed; NULL: all */
    size_t n_protocols;
    double timeout;           /* seconds per run (> 0) */
    unsigned jobs;            /* runs at once (>= 1) */
    const tb_conform_cov *cov; /* for the divergences' sections (may be NULL) */
    volatile sig_atomic_t *cancel; /* set (by a signal handler): kill the runs, stop */
} tb_conform_opts;

/* The command for a run: each placeholder {dir} {id} {protocol} {memory}
 * {name} replaced by the unit's value, quoted for /bin/sh in the quoting
 * context it stands in (outside quotes, in '...' or in "...").  {memory}
 * is the dumps as ADDR:FILE words; right after an option word
 * (`--memory {memory}`) the option is repeated before each dump.  {{ and
 * }} are literal braces.  Returns 0, or TB_ERR_NOSPACE / TB_ERR_INVAL
 * (an unknown placeholder: err names it and the known ones). */
int tb_conform_command(const char *tmpl, const tb_conform_unit *u, char *out, size_t len,
                       char *err, size_t errlen);
/* Whether the template names {id}: then each source of a vector gets its
 * own run; else one run per vector, and the output's lines say which
 * source they are from when there are several. */
bool tb_conform_per_source(const char *tmpl);

/* Called after each unit's verdict (from the calling thread). */
typedef void (*tb_conform_done_cb)(void *ctx, size_t unit, const tb_conform_result *r);

/* Runs the decoder over units[0..n), results[i] for units[i].  Returns 0,
 * or a negative TB_ERR_* when runs could not be made at all (err says
 * why).  Vectors of unclaimed protocols are UNSUPPORTED and not run. */
int tb_conform_run(const tb_conform_opts *o, const tb_conform_unit *units, size_t n,
                   tb_conform_result *results, tb_conform_done_cb cb, void *ctx, char *err,
                   size_t errlen);

/* ------------------------------------------------------------------ */
/* The summary. */

typedef struct tb_conform_tally {
    unsigned n[TB_CONFORM_STATUS_COUNT];
    unsigned total;
} tb_conform_tally;

typedef struct tb_conform_proto_row {
    char protocol[16];
    tb_conform_tally t;
} tb_conform_proto_row;

typedef struct tb_conform_var_row {
    unsigned var;             /* the variant */
    unsigned holding;         /* units run that hold it */
    unsigned passed;
    unsigned diverged_here;   /* failures whose divergence packet has it */
} tb_conform_var_row;

typedef struct tb_conform_summary {
    tb_conform_tally all;
    tb_conform_proto_row protos[16];
    size_t n_protos;
    tb_conform_var_row *vars; /* held by some unit that ran, by variant number */
    size_t n_vars;
} tb_conform_summary;

/* Counts the results; free with tb_conform_summary_fini.  Returns 0 or
 * TB_ERR_NOMEM. */
int tb_conform_summarize(const tb_conform_unit *units, const tb_conform_result *res, size_t n,
                         tb_conform_summary *s);
void tb_conform_summary_fini(tb_conform_summary *s);

#endif
