/*
 * Dual-issue rule of the cycle model (tb_sim_set_dual; sim.h).  A model
 * in the spirit of the Cortex-A8/R4 pairing, not a description of either
 * core (docs/etmv3-data-model.md, unverified table, D1-D4): an
 * instruction retires in the same cycle as the one before it when
 *  - both are "simple": data processing with an immediate or an
 *    immediate-shifted register (ARM), the 16-bit data-processing forms
 *    (Thumb), and for the first only also a single LDR/STR/LDRB/STRB
 *    (ARM, immediate or register offset) or a 16-bit LDR/STR form
 *    (Thumb); none writes the PC;
 *  - the second is no load or store (one load/store unit) and reads no
 *    flag (not ADC, SBC, RSC, RRX);
 *  - both are unconditional (ARM AL, outside IT blocks), the first is
 *    not itself the second of a pair, and nothing (an exception) comes
 *    between them;
 *  - the second reads no register the first writes, and writes none the
 *    first reads or writes.
 * Only the cycle stamps change: records, their order and the wait-state
 * draws are those of a run without the rule.
 */
#include "sim_internal.h"

enum { K_NONE = 0, K_ALU, K_LDST };

/* What one instruction is for the rule: its kind and register masks
 * (bit n = rn); *flags_in: it reads the carry flag. */
static int classify(uint32_t op, unsigned size, uint8_t isa, uint32_t *rd,
                    uint32_t *wr, bool *flags_in)
{
    *rd = *wr = 0;
    *flags_in = false;
    if (isa == TB_ISA_ARM) {
        unsigned opc = (op >> 21) & 15, rn = (op >> 16) & 15, d = (op >> 12) & 15;
        bool s = (op >> 20) & 1;

        if ((op >> 28) == 15)
            return K_NONE; /* the unconditional space */
        if ((op & 0x0C000000u) == 0) {
            /* Data processing (IHI0406C A5.2.1, A5.2.3): register with
             * an immediate shift (bit 4 clear) or immediate; not the
             * miscellaneous space (opc 10xx without S). */
            if (!(op & 0x02000000u) && (op & 0x10u))
                return K_NONE;
            if ((opc & 0xC) == 0x8 && !s)
                return K_NONE;
            if (opc != 13 && opc != 15)
                *rd |= 1u << rn;
            if (!(op & 0x02000000u)) {
                *rd |= 1u << (op & 15);
                if (((op >> 5) & 3) == 3 && !((op >> 7) & 31))
                    *flags_in = true; /* RRX */
            }
            if ((opc & 0xC) != 0x8) {
                if (d == 15)
                    return K_NONE;
                *wr |= 1u << d;
            }
            if (opc == 5 || opc == 6 || opc == 7)
                *flags_in = true; /* ADC, SBC, RSC */
            return K_ALU;
        }
        if ((op & 0x0C000000u) == 0x04000000u) {
            /* LDR/STR/LDRB/STRB (A5.3); register offset needs bit 4
             * clear (else the media space). */
            if ((op & 0x02000000u) && (op & 0x10u))
                return K_NONE;
            if (d == 15)
                return K_NONE;
            *rd |= 1u << rn;
            if (op & 0x02000000u)
                *rd |= 1u << (op & 15);
            if (op & (1u << 20))
                *wr |= 1u << d;
            else
                *rd |= 1u << d;
            if (!(op & (1u << 24)) || (op & (1u << 21))) {
                if (rn == 15)
                    return K_NONE;
                *wr |= 1u << rn; /* writeback */
            }
            return K_LDST;
        }
        return K_NONE;
    }
    if (size != 2)
        return K_NONE;
    op &= 0xFFFFu;
    if ((op & 0xF800u) == 0x1800u) { /* ADD/SUB register or imm3 */
        *rd |= 1u << ((op >> 3) & 7);
        if (!(op & 0x0400u))
            *rd |= 1u << ((op >> 6) & 7);
        *wr |= 1u << (op & 7);
        return K_ALU;
    }
    if ((op & 0xE000u) == 0x0000u) { /* LSL/LSR/ASR immediate */
        *rd |= 1u << ((op >> 3) & 7);
        *wr |= 1u << (op & 7);
        return K_ALU;
    }
    if ((op & 0xE000u) == 0x2000u) { /* MOV/CMP/ADD/SUB imm8 */
        unsigned r = (op >> 8) & 7, o = (op >> 11) & 3;
        if (o != 0)
            *rd |= 1u << r;
        if (o != 1)
            *wr |= 1u << r;
        return K_ALU;
    }
    if ((op & 0xFC00u) == 0x4000u) { /* data processing (A6.2.2) */
        unsigned o = (op >> 6) & 15, r = op & 7;
        *rd |= 1u << ((op >> 3) & 7);
        if (o != 9 && o != 15) /* RSB (NEG) and MVN read only Rm */
            *rd |= 1u << r;
        if (o != 8 && o != 10 && o != 11) /* TST, CMP, CMN */
            *wr |= 1u << r;
        if (o == 5 || o == 6)
            *flags_in = true; /* ADC, SBC */
        return K_ALU;
    }
    if ((op & 0xF000u) == 0x5000u) { /* LDR/STR register */
        *rd |= 1u << ((op >> 3) & 7) | 1u << ((op >> 6) & 7);
        if (((op >> 9) & 7) >= 3)
            *wr |= 1u << (op & 7);
        else
            *rd |= 1u << (op & 7);
        return K_LDST;
    }
    if ((op & 0xE000u) == 0x6000u || (op & 0xF000u) == 0x8000u) { /* imm5 */
        *rd |= 1u << ((op >> 3) & 7);
        if (op & 0x0800u)
            *wr |= 1u << (op & 7);
        else
            *rd |= 1u << (op & 7);
        return K_LDST;
    }
    if ((op & 0xF000u) == 0x9000u) { /* SP-relative */
        *rd |= 1u << 13;
        if (op & 0x0800u)
            *wr |= 1u << ((op >> 8) & 7);
        else
            *rd |= 1u << ((op >> 8) & 7);
        return K_LDST;
    }
    if ((op & 0xF800u) == 0x4800u) { /* LDR literal */
        *wr |= 1u << ((op >> 8) & 7);
        return K_LDST;
    }
    return K_NONE;
}

unsigned tb_sim_dual_step(tb_sim *s, const tb_centry *e, uint8_t isa, uint8_t flags,
                          uint32_t next)
{
    uint32_t rd = 0, wr = 0;
    bool fin = false, plain = !(flags & (TB_INSN_CONDITIONAL | TB_INSN_COND_FAILED |
                                 TB_INSN_TAKEN | TB_INSN_EXC_RETURN)) &&
                      e->wp == TB_WP_NONE;
    int k = plain ? classify(e->opcode, e->size, isa, &rd, &wr, &fin) : K_NONE;
    unsigned paired = 0;

    if (k == K_ALU && !fin && s->dual_first && s->dual_next == e->addr &&
        !(rd & s->dual_wr) && !(wr & (s->dual_rd | s->dual_wr)))
        paired = 1;
    /* The second of a pair starts none; anything not simple neither. */
    s->dual_first = !paired && k != K_NONE;
    s->dual_rd = rd;
    s->dual_wr = wr;
    s->dual_next = next;
    return paired;
}
