/*
 * Instruction classifier: what the trace protocols need of an ARM or
 * Thumb instruction (protocol-notes 3.12), read from its encoding with
 * the ARM ARM's encoding tables (ARM DDI 0406C chapters A5/A6; the
 * ARMv7-M Thumb encodings of DDI 0403E A5 are the same ones, see
 * classify.h).  No disassembler: a table lookup and a few field reads.
 *
 * The tables (classify_tables.h) list, per group of the ARM ARM's
 * top-level decode, the encodings that matter to a trace decoder as
 * rows of (mask, value, kind), first match wins, in the ARM ARM's
 * order; everything no row claims is a plain instruction.  This file
 * turns a row's kind into the tb_insn fields.
 *
 * tests/classify_ref.c holds the reference (Capstone 4, corrected where
 * it disagrees with the ARM ARM); test_classify compares the two on
 * every encoding of the classes that matter plus a large random sample,
 * `make classify-exhaustive` on all 2^32 A32 words and every T16 and
 * T32 encoding.
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/classify.h"

#include "classify_tables.h"

/* Nothing to hold: the classifier is a pure function of the bytes; the
 * handle stays for the API (a NULL handle is an error, as before). */
struct tb_classifier {
    char unused;
};

tb_classifier *tb_classifier_new(void)
{
    return calloc(1, sizeof(tb_classifier));
}

void tb_classifier_free(tb_classifier *c)
{
    free(c);
}

bool tb_cond_passed(unsigned cond, uint32_t cpsr)
{
    bool n = (cpsr >> 31) & 1, z = (cpsr >> 30) & 1;
    bool cf = (cpsr >> 29) & 1, v = (cpsr >> 28) & 1;
    bool r;

    /* ARM ARM A8.3: pairs of codes, the odd one inverts (except 15). */
    switch ((cond & 15) >> 1) {
    case 0: r = z; break;
    case 1: r = cf; break;
    case 2: r = n; break;
    case 3: r = v; break;
    case 4: r = cf && !z; break;
    case 5: r = n == v; break;
    case 6: r = !z && n == v; break;
    default: return true; /* AL, and the unconditional space */
    }
    return (cond & 1) ? !r : r;
}

static inline uint32_t sext(uint32_t v, unsigned bits)
{
    const uint32_t m = 1u << (bits - 1);

    return (v ^ m) - m;
}

/* The first row of a group that op matches (every group ends in a row
 * that matches anything). */
static inline const struct cls_row *lookup(const struct cls_row *r, uint32_t op)
{
    while ((op & r->mask) != r->value)
        r++;
    return r;
}

/* T32 B (T4), BL and BLX (imm) offset: S:I1:I2:imm10:imm11:'0', I1 =
 * NOT(J1 XOR S), I2 = NOT(J2 XOR S) (A8.8.18, A8.8.25). */
static inline uint32_t t32_imm25(uint32_t op)
{
    const uint32_t s = (op >> 26) & 1, j1 = (op >> 13) & 1, j2 = (op >> 11) & 1;
    const uint32_t i1 = !(j1 ^ s), i2 = !(j2 ^ s);

    return sext(s << 24 | i1 << 23 | i2 << 22 | ((op >> 16) & 0x3FF) << 12 | (op & 0x7FF) << 1,
                25);
}

/* CP15 c7 barrier operations, MCR p15,0,Rt,c7,c5,4 (ISB) and c7,c10,4/5
 * (DSB/DMB) (ARM ARM B4.2.1, protocol-notes 3.12): the same fields in
 * A32 and T32 (hw1:hw2). */
static uint8_t cp15_barrier(uint32_t op)
{
    const unsigned coproc = (op >> 8) & 15, opc1 = (op >> 21) & 7, crn = (op >> 16) & 15;
    const unsigned crm = op & 15, opc2 = (op >> 5) & 7;

    if (coproc != 15 || opc1 != 0 || crn != 7)
        return TB_WP_NONE;
    if (crm == 5 && opc2 == 4)
        return TB_WP_ISB;
    if (crm == 10 && (opc2 == 4 || opc2 == 5))
        return TB_WP_BARRIER;
    return TB_WP_NONE;
}

static inline void branch(tb_insn *out, uint8_t wp, uint32_t target)
{
    out->wp_class = wp;
    out->writes_pc = true;
    out->has_target = true;
    out->target = target;
    out->link = wp == TB_WP_DIRECT_LINK;
}

static inline void indirect(tb_insn *out)
{
    out->wp_class = TB_WP_INDIRECT;
    out->writes_pc = true;
}

/* Fills out (already a plain instruction) from the row kind k. */
static void apply(unsigned k, uint32_t op, uint32_t addr, tb_insn *out)
{
    switch (k) {
    case K_PLAIN:
        break;
    case K_UNDEF:
        out->undefined = true;
        break;
    /* A32 (A8.8.18/25/26): PC + 8 + imm24:'00'; BLX adds H:'0'. */
    case K_A32_B:
        branch(out, (op >> 24) & 1 ? TB_WP_DIRECT_LINK : TB_WP_DIRECT,
               addr + 8 + sext((op & 0xFFFFFF) << 2, 26));
        break;
    case K_A32_BLX_IMM:
        branch(out, TB_WP_DIRECT_LINK,
               addr + 8 + sext((op & 0xFFFFFF) << 2, 26) + ((op >> 23) & 2));
        out->target_isa = TB_ISA_THUMB;
        break;
    case K_BX:
    case K_BXJ:
    case K_TB:
    case K_PC_WRITE:
        indirect(out);
        break;
    case K_BLX_REG:
        out->wp_class = TB_WP_INDIRECT_LINK;
        out->writes_pc = true;
        out->link = true;
        break;
    case K_EXC_RETURN:
        indirect(out);
        out->exc_return = true;
        break;
    case K_A32_DP_PC:
        /* S set: SUBS PC, LR and related (B9.3.20), an exception return. */
        indirect(out);
        out->exc_return = (op >> 20) & 1;
        break;
    case K_A32_LDM_PC:
        /* With the S bit: LDM (exception return) (B9.3.5). */
        indirect(out);
        out->exc_return = (op >> 22) & 1;
        break;
    case K_ISB:
        out->wp_class = TB_WP_ISB;
        break;
    case K_BARRIER:
        out->wp_class = TB_WP_BARRIER;
        break;
    case K_MCR:
        out->wp_class = cp15_barrier(op);
        break;
    case K_SVC:
        out->is_svc = true;
        break;
    case K_WFI:
        out->is_wfi = true;
        break;
    /* T16 (A8.8.18, A8.8.29): PC + 4 + offset. */
    case K_T16_BCOND:
        branch(out, TB_WP_DIRECT, addr + 4 + sext((op & 0xFF) << 1, 9));
        out->cond = (uint8_t)((op >> 8) & 15);
        break;
    case K_T16_B:
        branch(out, TB_WP_DIRECT, addr + 4 + sext((op & 0x7FF) << 1, 12));
        break;
    case K_CBZ:
        branch(out, TB_WP_DIRECT, addr + 4 + (((op >> 3) & 0x1F) << 1 | ((op >> 9) & 1) << 6));
        break;
    case K_IT:
        out->is_it = true;
        out->it_cond = (uint8_t)((op >> 4) & 15);
        out->it_mask = (uint8_t)(op & 15);
        break;
    /* T32 (A8.8.18, A8.8.25): B<c> T3 S:J2:J1:imm6:imm11:'0'. */
    case K_T32_BCOND:
        branch(out, TB_WP_DIRECT,
               addr + 4 + sext(((op >> 26) & 1) << 20 | ((op >> 11) & 1) << 19 |
                               ((op >> 13) & 1) << 18 | ((op >> 16) & 0x3F) << 12 |
                               (op & 0x7FF) << 1, 21));
        out->cond = (uint8_t)((op >> 22) & 15);
        break;
    case K_T32_B:
        branch(out, TB_WP_DIRECT, addr + 4 + t32_imm25(op));
        break;
    case K_T32_BL:
        branch(out, TB_WP_DIRECT_LINK, addr + 4 + t32_imm25(op));
        break;
    case K_T32_BLX_IMM:
        /* Align(PC, 4) + imm32; imm32 is a multiple of 4 (H = 0). */
        branch(out, TB_WP_DIRECT_LINK, ((addr + 4) & ~3u) + t32_imm25(op));
        out->target_isa = TB_ISA_ARM;
        break;
    default:
        break;
    }
}

/* A plain instruction: what every classification starts from (A32
 * carries its condition field, except in the unconditional space). */
static inline void insn_init(tb_insn *out, uint32_t addr, uint32_t opcode, unsigned size,
                             tb_isa isa)
{
    memset(out, 0, sizeof *out);
    out->addr = addr;
    out->opcode = opcode;
    out->size = (uint8_t)size;
    out->isa = (uint8_t)isa;
    out->cond = 14;
    out->target_isa = (uint8_t)isa;
    if (isa == TB_ISA_ARM && (opcode >> 28) != 15)
        out->cond = (uint8_t)(opcode >> 28);
}

int tb_classify_insn(const uint8_t *bytes, size_t avail, uint32_t addr, tb_isa isa,
                     tb_insn *out)
{
    uint32_t op;
    unsigned size;
    const struct cls_row *r;

    if (!bytes || !out)
        return TB_ERR_INVAL;
    if (isa == TB_ISA_ARM) {
        if (avail < 4)
            return TB_ERR_TRUNCATED;
        size = 4;
        op = (uint32_t)bytes[0] | (uint32_t)bytes[1] << 8 | (uint32_t)bytes[2] << 16 |
             (uint32_t)bytes[3] << 24;
        /* A5.1: op1 = bits [27:25]; cond 1111 is a space of its own (A5.7). */
        r = lookup((op >> 28) == 15 ? cls_a32_uncond[(op >> 25) & 7]
                                    : cls_a32[(op >> 25) & 7], op);
    } else if (isa == TB_ISA_THUMB) {
        uint16_t hw1;

        if (avail < 2)
            return TB_ERR_TRUNCATED;
        hw1 = (uint16_t)(bytes[0] | bytes[1] << 8);
        size = tb_thumb_size(hw1);
        if (avail < size)
            return TB_ERR_TRUNCATED;
        op = hw1;
        if (size == 4) {
            op = (uint32_t)hw1 << 16 | (uint32_t)(bytes[2] | bytes[3] << 8);
            /* A6.3: op1 = hw1[12:11] and the top of op2, hw1[10:9]. */
            r = lookup(cls_t32[(op >> 25) & 15], op);
        } else {
            r = lookup(cls_t16[op >> 12], op); /* A6.2: opcode hw[15:10] */
        }
    } else if (isa == TB_ISA_THUMBEE || isa == TB_ISA_JAZELLE) {
        return TB_ERR_UNSUPPORTED;
    } else {
        return TB_ERR_INVAL;
    }
    insn_init(out, addr, op, size, isa);
    if (r->kind != K_PLAIN)
        apply(r->kind, op, addr, out);
    return (int)size;
}

int tb_classifier_decode(tb_classifier *c, const uint8_t *bytes, size_t avail,
                         uint32_t addr, tb_isa isa, tb_insn *out)
{
    if (!c)
        return TB_ERR_INVAL;
    return tb_classify_insn(bytes, avail, addr, isa, out);
}
