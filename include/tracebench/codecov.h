/*
 * Code coverage from a decoded trace (analysis/codecov.c): how many
 * times each instruction ran, and for each conditional instruction
 * whether it was seen passing and seen failing its condition.
 *
 * Not the spec-coverage catalogue (tb_speccov_*, a test tool beside the
 * vectors), which counts packet kinds.  This module sits above decoder/:
 * it takes the decoder's elements (decoder.h) and a memory image, and
 * knows nothing of a protocol beyond what an element says.
 *
 * Accumulated per block, not per instruction: an instruction range is
 * one hash lookup keyed by (start, isa, count, atoms), whose hit count
 * goes up; the per-instruction table is built from the blocks when a
 * source ends (tb_codecov_end), or when the block table reaches its
 * limit.  Memory is bounded by the code: at most TB_CODECOV_MAX_BLOCKS
 * blocks, plus one entry per distinct instruction address seen.
 *
 * What the trace cannot say stays unknown, never "not executed":
 *   - PTM traces the condition of waypoints only (IHI0035B B.3.2): any
 *     other conditional instruction's outcome is unknown
 *     (TB_CODECOV_COND_UNKNOWN).
 *   - Instructions inside a trace gap (ViewInst filter, overflow, lost
 *     or unreadable trace, code not in the image) are not counted, and
 *     the coverage is then incomplete (tb_codecov_gaps() > 0): an
 *     address with count 0 may have run in the gap.  A gap before the
 *     first instruction of a source counts when the trace did not start
 *     with trace being enabled (a wrapped buffer, whose first I-sync is
 *     periodic, or trace lost before the first sync), or, with the
 *     entry point given (tb_codecov_set_entry), did not start there.
 *   - A debug halt (an EXCEPTION with A/R trace number 1) and its exit
 *     (TRACE_ON, reason TB_ISYNC_DEBUG_EXIT) are no gap: the core ran
 *     nothing while halted (docs/debug-halt.md).  An exit whose halt
 *     was not shown (the ETMv1 and ETMv2 ports trace none) is a gap.
 *   - The trace's end is taken as where the program stopped: code that
 *     ran after trace went off for good (an overflow that never resumed,
 *     a filter the run never came back into) is not seen and cannot be
 *     told from code that never ran.  The trace carries nothing of it.
 */
#ifndef TRACEBENCH_CODECOV_H
#define TRACEBENCH_CODECOV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebench/snapshot.h"
#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The block table's limit (entries): at it, blocks fold into the
 * per-instruction table and the table starts again. */
#define TB_CODECOV_MAX_BLOCKS (1u << 20)

enum tb_codecov_flags {
    TB_CODECOV_COND = 1u << 0,         /* a conditional instruction: a
                                        * condition field other than AL,
                                        * inside an IT block, CBZ/CBNZ,
                                        * or seen failing */
    TB_CODECOV_COND_UNKNOWN = 1u << 1, /* ran at least once with no atom
                                        * telling its condition (PTM) */
};

typedef struct tb_codecov_insn {
    uint32_t addr;
    uint8_t isa;        /* tb_isa */
    uint8_t size;       /* 2 or 4 */
    uint8_t flags;      /* tb_codecov_flags */
    uint64_t count;     /* times it ran (condition passed or failed) */
    uint64_t passed;    /* of which, traced as passing its condition (E) */
    uint64_t failed;    /* of which, traced as failing it (N) */
} tb_codecov_insn;

typedef struct tb_codecov tb_codecov;

tb_codecov *tb_codecov_new(void);
void tb_codecov_free(tb_codecov *c);
/* Starts a trace source: its protocol and the memory image its decode
 * uses, which must stay alive until tb_codecov_end(). */
int tb_codecov_begin(tb_codecov *c, tb_protocol protocol, const tb_memimage *mem);
/* A lower limit on the block table (a power of two, >= 4096): for
 * tests of the fold, which gives the same counts. */
int tb_codecov_set_max_blocks(tb_codecov *c, size_t max);
/* The address the program starts at (an ELF's entry point): a source
 * whose first instruction is elsewhere began after the program did, so
 * what ran before it is unknown (a gap).  Without it, a trace that
 * starts with trace being enabled is taken to start with the program. */
int tb_codecov_set_entry(tb_codecov *c, uint32_t addr);
/* One decoder element (any kind; the ones that carry no instruction
 * only mark gaps).  0 or TB_ERR_*. */
int tb_codecov_element(tb_codecov *c, const tb_element *el);
/* Ends the source: its blocks fold into the per-instruction table.  0
 * or TB_ERR_* (TB_ERR_NOT_IN_IMAGE: a Thumb range ran out of the image). */
int tb_codecov_end(tb_codecov *c);
/* After tb_codecov_end(): the instructions seen, by address (then ISA);
 * *n gets their number.  Valid until the next call on c. */
const tb_codecov_insn *tb_codecov_insns(tb_codecov *c, size_t *n);
/* Gaps seen so far in all sources: 0 when the coverage is complete. */
uint64_t tb_codecov_gaps(const tb_codecov *c);

/* Whether the instruction at p (isa, as read from an image) is
 * conditional by its encoding (IT-block membership aside): ARM condition
 * field < AL, Thumb B<c> (T1, T3), CBZ/CBNZ.  it_len gets the number of
 * instructions an IT instruction makes conditional (0 for any other). */
bool tb_codecov_insn_cond(tb_isa isa, const uint8_t *p, size_t avail, unsigned *it_len);

#ifdef __cplusplus
}
#endif

#endif
