/*
 * Instruction classifier: what the trace protocols
 * need to know of one ARM/Thumb instruction: its size, its waypoint
 * class (PFT IHI0035B: which instructions are waypoints), a direct branch's target, link, condition,
 * IT, exception return.  Capstone 4 does the decoding; callers cache the
 * result per address (Capstone manages ~4 M instr/s, far too slow to call
 * per executed instruction).
 */
#ifndef TRACEBENCH_CLASSIFY_H
#define TRACEBENCH_CLASSIFY_H

#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_insn {
    uint32_t addr;
    uint32_t opcode;      /* A32 word; T32-32: hw1 << 16 | hw2; T32-16: hw */
    uint8_t size;         /* 2 or 4 */
    uint8_t isa;          /* tb_isa of this instruction */
    uint8_t wp_class;     /* tb_wp_class */
    uint8_t cond;         /* condition field 0..15, 14 (AL) when none;
                             for T32 only B<c> has one (IT is tracked
                             separately) */
    bool link;            /* BL, BLX: pushes a return address */
    bool has_target;      /* direct branch with a known target */
    uint32_t target;
    uint8_t target_isa;   /* BLX(imm) switches ARM <-> Thumb */
    bool exc_return;      /* SUBS pc,lr / MOVS pc,lr / RFE / LDM ^ / ERET */
    bool writes_pc;
    bool is_it;           /* T32 IT: it_cond/it_mask as in the encoding */
    uint8_t it_cond, it_mask;
    bool is_svc;          /* SVC (exception, not a waypoint) */
    bool is_wfi;          /* WFI/WFE */
    bool undefined;       /* Capstone cannot decode it */
} tb_insn;

typedef struct tb_classifier tb_classifier;

tb_classifier *tb_classifier_new(void);
void tb_classifier_free(tb_classifier *c);

/* Classifies the instruction whose bytes start at bytes[0] (avail bytes
 * valid), address addr, state isa.  Returns its size (2 or 4), or
 * TB_ERR_TRUNCATED when avail is too short, TB_ERR_UNSUPPORTED for
 * ThumbEE/Jazelle state.  An undecodable word gives size with
 * out->undefined set (the caller decides whether that is an error). */
int tb_classifier_decode(tb_classifier *c, const uint8_t *bytes, size_t avail,
                         uint32_t addr, tb_isa isa, tb_insn *out);

/* Plain instructions (most of a program: no branch, no PC write, no
 * IT/SVC/WFI, defined) are recognised from their bits without Capstone;
 * on by default.  Off: Capstone classifies every instruction (the
 * reference the fast path is tested against). */
void tb_classifier_set_fast(tb_classifier *c, bool on);

/* Thumb instruction size from its first halfword: 4 when its top five
 * bits are 0b11101, 0b11110 or 0b11111 (a 32-bit T32 instruction), else 2. */
static inline unsigned tb_thumb_size(uint16_t hw1)
{
    unsigned top = hw1 >> 11;
    return (top == 0x1D || top == 0x1E || top == 0x1F) ? 4 : 2;
}

/* Does condition code cond (0..15) pass for NZCV flags in cpsr[31:28]? */
bool tb_cond_passed(unsigned cond, uint32_t cpsr);

#ifdef __cplusplus
}
#endif

#endif
