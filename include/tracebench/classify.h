/*
 * Instruction classifier: what the trace protocols
 * need to know of one ARM/Thumb instruction: its size, its waypoint
 * class (PFT IHI0035B: which instructions are waypoints), a direct branch's target, link, condition,
 * IT, exception return.  Read from the encoding with the ARM ARM's
 * encoding tables (ARMv7-A/R, DDI 0406C; the ARMv7-M Thumb encodings,
 * DDI 0403E, are among them and classify the same), a few nanoseconds an
 * instruction, no disassembler.
 *
 * The answer depends on the bytes, the address and the ISA only: an
 * instruction in an IT block classifies as outside one (the IT condition
 * is the caller's to track; B<c> and CBZ/CBNZ in an IT block are
 * UNPREDICTABLE, A8.8.54).
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
    bool undefined;       /* UNDEFINED (UDF, and the unallocated encodings
                             of the groups that decide a class; an unset
                             flag does not mean the encoding is defined) */
} tb_insn;

typedef struct tb_classifier tb_classifier;

/* Classifies the instruction whose bytes start at bytes[0] (avail bytes
 * valid), address addr, state isa.  Returns its size (2 or 4), or
 * TB_ERR_TRUNCATED when avail is too short, TB_ERR_UNSUPPORTED for
 * ThumbEE/Jazelle state, TB_ERR_INVAL for a NULL pointer or another
 * ISA.  An UNDEFINED word gives its size with out->undefined set (the
 * caller decides whether that is an error).  Stateless. */
TB_API int tb_classify_insn(const uint8_t *bytes, size_t avail, uint32_t addr, tb_isa isa,
                     tb_insn *out);

/* The same behind a handle (it holds nothing; kept for callers that
 * have one).  tb_classifier_decode(NULL, ...) is TB_ERR_INVAL. */
TB_API tb_classifier *tb_classifier_new(void);
TB_API void tb_classifier_free(tb_classifier *c);
TB_API int tb_classifier_decode(tb_classifier *c, const uint8_t *bytes, size_t avail,
                         uint32_t addr, tb_isa isa, tb_insn *out);

/* Thumb instruction size from its first halfword: 4 when its top five
 * bits are 0b11101, 0b11110 or 0b11111 (a 32-bit T32 instruction), else 2. */
static inline unsigned tb_thumb_size(uint16_t hw1)
{
    unsigned top = hw1 >> 11;
    return (top == 0x1D || top == 0x1E || top == 0x1F) ? 4 : 2;
}

/* Does condition code cond (0..15) pass for NZCV flags in cpsr[31:28]? */
TB_API bool tb_cond_passed(unsigned cond, uint32_t cpsr);

#ifdef __cplusplus
}
#endif

#endif
