/*
 * A profile from a decoded trace (analysis/profile.c): instructions (and
 * cycles, where the trace counts them) per function, per instruction
 * address, per call edge and per call stack.
 *
 * Functions: the ranges given with tb_profile_add_func() (an ELF's
 * symbols); code outside all of them belongs to the function the
 * current call entered, named by its entry address (the target of the
 * call).  A function's id is its lowest address either way.
 *
 * Calls: a taken branch with link (BL, BLX; the range's last
 * instruction, its atom E) enters the function at the next range's
 * start; an exception (an EXCEPTION element) enters its handler the same
 * way, as a call edge of its own kind.  Each call pushes a frame on a
 * shadow stack holding its return address (the instruction after the
 * BL; an exception's preferred return address); a range that starts at
 * a return address in the stack, after a taken branch or an exception,
 * returns from that frame and every frame above it.  A branch to a
 * return address nobody pushed is a branch; code that falls through to
 * one (the exit of a loop in a handler interrupted there) is not a
 * return.
 *   - The stack is bounded (TB_PROFILE_MAX_DEPTH frames): a call made
 *     deeper is counted as a call but pushes no frame, so it has no
 *     inclusive cost and its instructions stay with the deepest frame's
 *     stack (tb_profile_stats.deep_calls counts them).
 *   - A trace gap (filter, overflow, lost or unreadable trace) ends
 *     every open frame there (their inclusive cost counts up to the gap)
 *     and empties the stack: what ran in the gap is unknown, so the code
 *     after it starts a new root, marked as after a gap
 *     (TB_PROFILE_ROOT_GAP).  The start of each source is a root too.
 *   - A debug halt (an EXCEPTION with A/R trace number 1) is neither a
 *     call nor a gap, nor is its exit (TRACE_ON, TB_ISYNC_DEBUG_EXIT)
 *     after it; a restart at another address than the halt's is an
 *     exception taken there (ETMv3 shows it only as the exit's I-sync
 *     at its vector), returning to the halt's address.  An exit whose
 *     halt was not shown (ETMv1, ETMv2) is a gap (docs/debug-halt.md).
 *   - Frames still open when a source ends close there.
 *
 * Accumulated per block, not per instruction: one hash lookup per
 * instruction range keyed by (stack, start, isa, count), unfolded into
 * per-instruction counts when a source ends or the table is full.
 * Memory is bounded by the code and the distinct call stacks
 * (TB_PROFILE_MAX_STACKS; past it a new stack shares its caller's),
 * never by the trace's length.
 *
 * Cycles: where the decoder's ranges carry cycle counts (cycle-accurate
 * trace: tb_element.has_cc), a range's cycles belong to its last
 * instruction.  For each instruction's own, decode with
 * tb_decoder_set_cycle_ranges (ETMv3, ETMv1, ETMv2: one instruction a
 * range; `tracebench profile` does); PTM's trace counts none inside a
 * range.  An EXCEPTION's own count (ETMv1/ETMv2: its entry) is not
 * charged.  tb_profile_stats.has_cycles says whether any range had
 * them.
 */
#ifndef TRACEBENCH_PROFILE_H
#define TRACEBENCH_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebench/snapshot.h"
#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TB_PROFILE_MAX_DEPTH 1024u
#define TB_PROFILE_MAX_STACKS (1u << 16)
#define TB_PROFILE_MAX_BLOCKS (1u << 20)

/* A stack node's kind: how its function was entered. */
enum tb_profile_kind {
    TB_PROFILE_CALL = 0,  /* a branch with link */
    TB_PROFILE_EXC = 1,   /* an exception */
    TB_PROFILE_ROOT = 2,  /* where a source's trace starts */
    TB_PROFILE_ROOT_GAP = 3, /* where trace resumes after a gap */
};

typedef struct tb_profile_insn {
    uint32_t func;      /* the function's id (lowest address) */
    uint32_t addr;
    uint8_t isa;
    uint64_t count;     /* times it ran */
    uint64_t cycles;    /* cycles of ranges it ended */
} tb_profile_insn;

typedef struct tb_profile_call {
    uint32_t caller, callee; /* function ids */
    uint32_t site;      /* the calling instruction (an exception: the
                         * last instruction before it) */
    uint8_t kind;       /* TB_PROFILE_CALL or TB_PROFILE_EXC */
    uint64_t calls;
    uint64_t insns;     /* inclusive: instructions from entry to return */
    uint64_t cycles;    /* inclusive cycles, likewise */
} tb_profile_call;

typedef struct tb_profile_stack {
    uint32_t node;      /* for tb_profile_frames() */
    uint32_t leaf;      /* the function the instructions belong to */
    uint64_t insns, cycles;
} tb_profile_stack;

typedef struct tb_profile_stats {
    uint64_t insns, cycles; /* in all */
    bool has_cycles;
    uint64_t gaps;          /* stacks emptied by a gap */
    uint64_t deep_calls;    /* calls past TB_PROFILE_MAX_DEPTH */
    uint64_t shared_stacks; /* calls past TB_PROFILE_MAX_STACKS */
} tb_profile_stats;

typedef struct tb_profile tb_profile;

tb_profile *tb_profile_new(void);
void tb_profile_free(tb_profile *p);
/* A lower limit on the block table (a power of two, >= 4096): for
 * tests of the unfolding, which gives the same counts. */
int tb_profile_set_max_blocks(tb_profile *p, size_t max);
/* A function [lo, hi) (an ELF symbol): before the first begin.  Of
 * overlapping ranges the lowest (then first sorted) one names the code;
 * the others are dropped. */
int tb_profile_add_func(tb_profile *p, uint32_t lo, uint32_t hi);
/* Starts a trace source (its memory image stays alive until end). */
int tb_profile_begin(tb_profile *p, tb_protocol protocol, const tb_memimage *mem);
/* One decoder element.  0 or TB_ERR_*. */
int tb_profile_element(tb_profile *p, const tb_element *el);
/* Ends the source: open frames close, blocks unfold.  0 or TB_ERR_*. */
int tb_profile_end(tb_profile *p);
/* After end: results, sorted (insns by func then addr; calls by caller,
 * site, callee; stacks by node then leaf).  Valid until the next call
 * on p. */
const tb_profile_insn *tb_profile_insns(tb_profile *p, size_t *n);
const tb_profile_call *tb_profile_calls(tb_profile *p, size_t *n);
const tb_profile_stack *tb_profile_stacks(tb_profile *p, size_t *n);
/* The functions of stack node (root first) into out (max entries), the
 * root's kind in *root_kind.  Returns the depth or TB_ERR_*. */
int tb_profile_frames(const tb_profile *p, uint32_t node, uint32_t *out, size_t max,
                      unsigned *root_kind);
tb_profile_stats tb_profile_get_stats(const tb_profile *p);
/* Whether func is one given with tb_profile_add_func() (else an entry
 * address). */
bool tb_profile_is_symbol(const tb_profile *p, uint32_t func);

#ifdef __cplusplus
}
#endif

#endif
