/*
 * Round trip (roundtrip/): a program runs in the simulator, the encoder
 * turns the run into trace, our decoder reconstructs it from the trace
 * and the memory image, and the comparator checks the reconstruction
 * against the simulator's ground truth, instruction by instruction.
 * Everything streams: the comparator holds only the truth the decoder
 * has not reached yet (the decoder's lag), never the whole run.
 *
 * Comparison rules (what a decoder can know from the trace):
 * - Instructions: address and ISA always; the condition result (E/N) of
 *   every instruction on ETMv3 (an atom each), of a range's last
 *   instruction on PTM when it is a waypoint (IHI0035B B.3.2).
 * - An instruction an exception cancelled (truth: exception record with
 *   cancelled set, pref_return = its address) did not execute: it must
 *   not appear.
 * - Exceptions: the kind (trace exception number) and the preferred
 *   return address, in order, between the right instructions.
 * - Security state: every decoded instruction runs in the state of the
 *   last context element before it (Secure until one says ns), which
 *   must be the truth's (TB_REC_STATE records, scenario secure).
 * - Context ID / VMID changes where the configuration traces them;
 *   timestamps (the cycle stamp of an adjacent truth record, never going
 *   back); cycle counts (cycle-accurate: the decoded counts summed since
 *   trace start equal the truth's cycles at each range end).
 * - Data transfers (ETMv3 or ETMv1 data trace on, tb_encoder_opts.data_trace):
 *   every transfer of a traced instruction that ViewData selects is a
 *   DATA element in order after its instruction, with its direction,
 *   size, address (address trace on), value (value trace on; a failed
 *   store-exclusive's value is not compared, IHI0014Q 7.4.7 is
 *   ambiguous) and store-failed flag; a transfer ViewData leaves out
 *   after the instruction's first traced one is a Value not traced
 *   element (7.4.4), one before it nothing.  Out of order: the
 *   placeholder element at the transfer's place, its value in the later
 *   OOO element of the same tag.  A suppressed element (7.4.6) excuses
 *   the transfers up to the next data element; one with no value for a
 *   placeholder only after a gap or suppression.
 * - Data-only mode (ETMv3 dataonly, ETMCR[20], IHI0014Q 7.4.10): no
 *   instruction trace, so no instruction is expected; the DATA elements
 *   must be the transfers of the traced instructions, in order, each
 *   with its address, BE flag, value and store-failed flag, and must not
 *   claim an instruction, direction or size (TB_DATA_NO_DIR).  A match
 *   needs one checked transfer rather than one checked instruction.
 * - Gaps: instructions outside the ViewInst filter, and those lost to a
 *   FIFO overflow up to the overflow I-sync, are not expected.  The
 *   decoder may show nothing there, but what it shows must be right, it
 *   must mark the gap (NO_SYNC / TRACE_ON) rather than silently join,
 *   and it must resume at the first traced instruction after it.
 */
#ifndef TRACEBENCH_ROUNDTRIP_H
#define TRACEBENCH_ROUNDTRIP_H

#include "tracebench/decoder.h"
#include "tracebench/encoder.h"
#include "tracebench/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- comparator (roundtrip/compare.c) ---- */

typedef struct tb_compare_stats {
    uint64_t truth_insns;     /* instruction records received */
    uint64_t checked;         /* decoded instructions that matched */
    uint64_t untraced;        /* truth instructions in gaps, not expected */
    uint64_t cancelled;       /* truth instructions cancelled by exceptions */
    uint64_t exceptions;      /* exception elements matched */
    uint64_t returns;         /* v7-M exception return elements matched */
    uint64_t contexts;        /* context elements matched */
    uint64_t timestamps;      /* timestamp elements checked */
    uint64_t cycle_checks;    /* range ends whose cycle total was checked */
    uint64_t gaps;            /* gap elements (NO_SYNC / TRACE_ON) seen */
    uint64_t data;            /* data transfers matched (DATA elements;
                               * with data trace on) */
    uint64_t data_untraced;   /* truth transfers not expected: outside
                               * ViewData, suppressed, in gaps */
    uint64_t resumes_discarded; /* overflow resumes another overflow resume
                               * followed before anything was shown: the
                               * first was speculative (IHI0014Q 5.9) */
} tb_compare_stats;

typedef struct tb_compare tb_compare;

/* o: the encoder options of the run (protocol, filter, what is traced).
 * label: one line naming the case and configuration, quoted in the
 * report.  NULL when out of memory. */
tb_compare *tb_compare_new(const tb_encoder_opts *o, const char *label);
void tb_compare_free(tb_compare *c);

/* Truth side: every exec record of the run, in order.  Give each record
 * here before pushing it to the encoder: the encoder's trace for it can
 * reach the decoder during that push. */
int tb_compare_truth(tb_compare *c, const tb_exec_record *r);
/* As tb_compare_truth for r[0..n) in turn, at less cost a record;
 * stops at the first error. */
int tb_compare_truth_many(tb_compare *c, const tb_exec_record *r, size_t n);
/* Called when the encoder emits an overflow I-sync: trace resumes at the
 * instruction record before the last record given to tb_compare_truth
 * (the encoder runs one record behind: protocol-notes 2.10). */
void tb_compare_mark_resume(tb_compare *c);
/* The encoder's FIFO overflowed after the trace of instruction
 * shown_seq went out (tb_overflow_cb): an instruction up to there that an
 * exception cancelled stays in the decode when the exception's packet,
 * which retracts it, is lost (ETMv3 Cancel, protocol-notes 2.7); call it as
 * the encoder reports it. */
void tb_compare_mark_lost(tb_compare *c, bool have_shown, uint64_t shown_seq);
/* The encoder's last overflow never resumed before the run ended: the
 * truth the decoder has not shown by the end is lost, not missing. */
void tb_compare_mark_lost_tail(tb_compare *c);
/* The same resume point given by record: trace resumed at the last
 * instruction record given to tb_compare_truth (for a saved truth.txt
 * and its overflow.txt, where the encoder is not running). */
void tb_compare_mark_resume_last(tb_compare *c);

/* Decoded side: one element; for INSN_RANGE, addrs lists its el->count
 * instruction addresses (tb_decoder_range_addrs).  index is the packet
 * stream offset quoted in the report. */
int tb_compare_element(tb_compare *c, const tb_element *el, const uint32_t *addrs);

/* Both sides ended: no traced truth instruction may be left over. */
int tb_compare_finish(tb_compare *c);

/* The functions above return 0, or TB_ERR_MISMATCH from the first
 * divergence on (sticky: later input is ignored), or TB_ERR_NOMEM. */
bool tb_compare_matched(const tb_compare *c);
/* "" while matching; else the first divergence: what differed, the
 * previous 8 instructions of truth and of decode, the packet offset and
 * the configuration, several lines. */
const char *tb_compare_report(const tb_compare *c);
const tb_compare_stats *tb_compare_get_stats(const tb_compare *c);

/* ---- runner (roundtrip/run.c) ---- */

/* A fault put into the decoded packet stream, to prove the comparator
 * catches it (the trace written to out_dir stays intact). */
typedef enum tb_rt_fault_kind {
    TB_RT_FAULT_NONE = 0,
    TB_RT_FAULT_ADDR_BIT,     /* flip bit `bit` of the nth branch address */
    TB_RT_FAULT_DROP_ATOM,    /* drop the last E/N atom of the nth atom packet */
} tb_rt_fault_kind;

typedef struct tb_rt_fault {
    tb_rt_fault_kind kind;
    uint32_t nth;             /* 0-based among packets of that kind */
    uint8_t bit;
} tb_rt_fault;

/* How far a run has gone, for a progress line (the library never
 * prints; tb_rt_case.on_progress). */
typedef struct tb_rt_progress {
    uint64_t records;         /* exec records so far */
    uint64_t insns;           /* instruction records */
    uint64_t exceptions;      /* exception records */
    uint64_t trace_bytes;     /* bytes the encoder emitted */
} tb_rt_progress;

typedef struct tb_rt_case {
    const char *name;         /* for the report */
    const char *program;      /* ELF32 ARM executable */
    const char *scenario;     /* scenario INI, or NULL for the defaults */
    uint64_t max_insns;       /* non-zero: caps the budget below */
    /* The budget (sim.h: N instructions, and N exceptions apart): with
     * has_budget exactly `budget` (0: none) whatever the scenario says;
     * else the scenario's max_insns, or default_budget (0: none) when the
     * scenario gives none.  A command line sets the last two; zeroed, the
     * scenario decides as before. */
    bool has_budget;
    uint64_t budget;
    uint64_t default_budget;
    tb_encoder_opts opts;
    /* has_cpu: run on this cpu whatever the scenario says (--cpu).  A
     * Cortex-M (the scenario's or this) sets opts' v7m for the run
     * (tb_encoder_opts_v7m): its options must suit an ETM-M3/M4. */
    bool has_cpu;
    tb_sim_cpu cpu;
    bool formatted;           /* CoreSight frames (else the raw source stream) */
    /* With formatted: the frames as a TPIU capture has them, FSYNCs and
     * HSYNCs where the port idled (tb_formatter_tick; snapshot format
     * tpiu_coresight).  Option list item `tpiu` (tb_rt_case_options). */
    bool tpiu;
    size_t chunk;             /* bytes per push into the decode side; 0: as produced */
    tb_rt_fault fault;
    /* Non-NULL: also write the snapshot, streamed as the trace is made
     * (tb_encoder_snapshot_open: memory stays flat), and DIR/truth.txt
     * unless no_truth or truth_file says otherwise. */
    const char *out_dir;
    bool no_truth;            /* with out_dir: no DIR/truth.txt */
    const char *truth_file;   /* non-NULL: the ground truth (text) goes here */
    /* Optional: called every 65536 records with the run so far. */
    void (*on_progress)(void *ctx, const tb_rt_progress *p);
    void *progress_ctx;
    /* Optional: told the seq of each instruction at which an overflow
     * I-sync resumed trace. */
    void (*on_resume)(void *ctx, uint64_t seq);
    void *resume_ctx;
    /* Optional: told where each overflow's lost trace starts
     * (tb_overflow_cb, encoder.h). */
    tb_overflow_cb on_overflow;
    void *overflow_ctx;
    /* Optional: given each chunk of raw source trace as the encoder emits
     * it, with the cycle stamp of the truth record being pushed (the last
     * record's at the run's end), so that a caller can interleave several
     * sources by time in one formatted buffer (a two-source vector). */
    void (*on_trace)(void *ctx, uint64_t cycle, const uint8_t *data, size_t len);
    void *trace_ctx;
    /* Optional: the decoded elements the comparator gets, for an
     * analysis of the round trip's own decode (coverage, a profile)
     * without a second decode: decode_begin once the decoder has its
     * memory image (alive until decode_end), decode_element for each
     * element in order, decode_end after the decoder's last.  A negative
     * return ends the run with that error (tb_rt_run's err says
     * "analysis").  NULL hooks cost nothing. */
    int (*decode_begin)(void *ctx, tb_protocol protocol, const tb_memimage *mem);
    int (*decode_element)(void *ctx, const tb_element *el);
    int (*decode_end)(void *ctx);
    void *decode_ctx;
    /* 2: the run on two threads, the simulator and the encoder on the
     * caller's, everything after the encoder (formatter, decode side,
     * comparator, truth file, snapshot and every hook above) on a second,
     * in the same order through a bounded queue (memory stays flat).
     * Verdict, report, statistics and outputs are the same as with one;
     * the hooks are all called on the second thread.  A run that ends in
     * an error reports the same error, but the simulator may have run a
     * little past the point where one thread would have stopped it.
     * 0 or 1 (tb_rt_case_init): one thread, none created. */
    unsigned threads;
} tb_rt_case;

/* What a run that completed shows.  A match is only worth something
 * when instructions were compared and, with a fault, when the fault was
 * put in and caught; everything else says why not, so that no caller
 * takes a run that proved nothing for a pass.  One verdict per run; when
 * several hold, MISMATCH wins (a divergence is never hidden), then
 * NOTHING_CHECKED, FAULT_NOT_APPLIED, FAULT_UNDETECTED. */
typedef enum tb_rt_verdict {
    TB_RT_MATCH = 0,          /* decode == truth over >= 1 checked instruction
                               * (data-only mode: >= 1 checked transfer)
                               * (no fault asked for) */
    TB_RT_MISMATCH,           /* the comparator found a divergence (res->report);
                               * with a fault, the fault was caught */
    TB_RT_NOTHING_CHECKED,    /* no divergence, but cmp.checked == 0: no
                               * instruction was compared (nothing ran, the
                               * filter traced nothing, all was lost) */
    TB_RT_FAULT_NOT_APPLIED,  /* a fault was asked for, but the decode side saw
                               * only res->fault_packets packets of its kind */
    TB_RT_FAULT_UNDETECTED,   /* the fault changed its packet and the decode
                               * still matches: the changed bits are ones the
                               * decoder ignores (address bit 0 in Thumb, bits
                               * 1:0 in ARM state) or the comparator missed it */
} tb_rt_verdict;

/* "MATCH", "MISMATCH", "NOTHING CHECKED", "FAULT NOT APPLIED",
 * "FAULT UNDETECTED". */
const char *tb_rt_verdict_name(tb_rt_verdict v);

typedef struct tb_rt_result {
    tb_rt_verdict verdict;    /* what the run shows: use this, not match */
    uint64_t budget;          /* the run's budget (0: none); sim.stop says
                               * why it stopped: TB_SIM_STOP_BUDGET means
                               * the run was cut, the program did not end */
    bool match;               /* the comparator found no divergence (also true
                               * when it compared nothing) */
    tb_sim_result sim;
    tb_encoder_stats enc;
    tb_compare_stats cmp;
    bool fault_applied;       /* the fault found its packet */
    uint64_t fault_packets;   /* packets of the fault's kind the decode side saw
                               * (branch packets; atom packets with an E or N
                               * atom) */
    uint64_t resumes;         /* overflow I-syncs */
    bool lost_tail;           /* the last overflow never resumed */
    char report[4096];        /* the comparator's report when !match */
} tb_rt_result;

/* Initialises a case: no scenario, no cap, formatted, no fault, the
 * protocol's default options. */
void tb_rt_case_init(tb_rt_case *c, tb_protocol protocol);

/* "filter" in an option list stands for an include range over the middle
 * half of the program's first loadable segment (it needs the ELF);
 * include=/exclude= take symbols of the program too (include=fib: the
 * symbol's extent; include=main-fib: from main up to fib;
 * tb_elf_resolve_ranges); the rest goes to tb_encoder_opts_parse.
 * TB_ERR_INVAL with err set. */
int tb_rt_case_options(tb_rt_case *c, const char *list, char *err, size_t errlen);

/* Runs one case.  0 when the round trip ran (res->verdict says what it
 * shows), else TB_ERR_* with a reason in err (the program would not load
 * or run, the encoder failed, the output could not be written;
 * TB_ERR_CONFIG: the encoder options are inconsistent, err names the
 * option). */
int tb_rt_run(const tb_rt_case *c, tb_rt_result *res, char *err, size_t errlen);

/* ---- the matrix (roundtrip/suite.c) ---- */

/* The option sets `make roundtrip` runs for a protocol, as option lists
 * ("" = plain); *n gets the count, at most TB_RT_MAX_SETS (checked when
 * the library is built: a set past it would not run). */
#define TB_RT_MAX_SETS 96
const char *const *tb_rt_option_sets(tb_protocol protocol, size_t *n);
/* The sets for a Cortex-M program (its ETM-M3/M4, ETMv3 only; the cpu
 * comes from the scenario). */
const char *const *tb_rt_option_sets_v7m(size_t *n);

/* The option set (an index into tb_rt_option_sets) that generated
 * program `seed` runs with under `protocol` in the suite: every set once
 * in each block of n consecutive seeds from a multiple of n (suite.c). */
size_t tb_rt_gen_set(tb_protocol protocol, uint64_t seed);
/* The same for the seed's Cortex-M program (--isa m), an index into
 * tb_rt_option_sets_v7m. */
size_t tb_rt_gen_set_v7m(uint64_t seed);

/* ---- kept seeds (roundtrip/gen_seeds.c, roundtrip/gen_seeds.tsv) ---- */

/* One row of the kept-seed table: a generated program (seed, ISA, size,
 * the FNV-1a hash of its source, tb_gen_hash), a protocol and option set,
 * and what the round trip must give: a MATCH (a regression seed: it found
 * a bug that is fixed), or a failure of a known class not yet fixed
 * (known: the suite and the replay test fail loudly once it matches). */
typedef struct tb_rt_seed_row {
    uint64_t seed;
    int isa;                  /* tb_gen_isa */
    unsigned size;
    uint64_t hash;
    tb_protocol protocol;
    char options[160];        /* "" for plain */
    bool known;               /* expect a failure */
    char cls[64];             /* known: its class tag; else "" */
    unsigned line;
} tb_rt_seed_row;

/* Parses the table (docs/gen.md: `seed isa size hash protocol options
 * expect`, whitespace-separated, `#` comments; options `plain` for none;
 * expect MATCH or KNOWN:CLASS).  *rows is malloc'd (free()), *n its count.
 * TB_ERR_FORMAT with "line N: why" in err; TB_ERR_NOMEM. */
int tb_rt_seed_table_parse(const char *text, tb_rt_seed_row **rows, size_t *n, char *err,
                           size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
