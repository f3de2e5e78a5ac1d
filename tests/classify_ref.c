/*
 * The classifier's reference (classify_ref.h).  Capstone 4 decodes; its
 * answer becomes a tb_insn by the rules common/classify.c followed while
 * it called Capstone at run time: the class comes from the instruction
 * id plus "does it write the PC", never from Capstone's groups (Capstone
 * 4 puts no jump group on LDR pc, POP/LDM {pc}, MOV/ADD/SUB pc, SUBS
 * pc,lr, RFE or ERET), and a PC destination counts as a write unless the
 * id is a compare or a store (Capstone's operand access flags are
 * unreliable: T32 SUBS pc,lr reports none).
 *
 * Each instruction is decoded on its own, outside any IT block: the
 * classifier answers from the encoding alone (classify.h).
 */
#include <stdio.h>
#include <string.h>

#include <capstone/capstone.h>

#include "classify_ref.h"

struct tb_cref {
    csh arm, thumb;
    cs_insn *ci_arm, *ci_thumb;
};

static int open_thumb(tb_cref *r)
{
    if (cs_open(CS_ARCH_ARM, CS_MODE_THUMB, &r->thumb) != CS_ERR_OK)
        return -1;
    cs_option(r->thumb, CS_OPT_DETAIL, CS_OPT_ON);
    r->ci_thumb = cs_malloc(r->thumb);
    return r->ci_thumb ? 0 : -1;
}

static void close_thumb(tb_cref *r)
{
    if (r->ci_thumb)
        cs_free(r->ci_thumb, 1);
    if (r->thumb)
        cs_close(&r->thumb);
    r->ci_thumb = NULL;
    r->thumb = 0;
}

tb_cref *tb_cref_new(void)
{
    tb_cref *r = calloc(1, sizeof *r);

    if (!r)
        return NULL;
    if (cs_open(CS_ARCH_ARM, CS_MODE_ARM, &r->arm) != CS_ERR_OK) {
        free(r);
        return NULL;
    }
    cs_option(r->arm, CS_OPT_DETAIL, CS_OPT_ON);
    r->ci_arm = cs_malloc(r->arm);
    if (!r->ci_arm || open_thumb(r) < 0) {
        tb_cref_free(r);
        return NULL;
    }
    return r;
}

void tb_cref_free(tb_cref *r)
{
    if (!r)
        return;
    if (r->ci_arm)
        cs_free(r->ci_arm, 1);
    if (r->arm)
        cs_close(&r->arm);
    close_thumb(r);
    free(r);
}

void tb_cref_bytes(uint32_t op, tb_isa isa, uint8_t b[4])
{
    if (isa == TB_ISA_ARM || op > 0xFFFF) {
        uint32_t w = isa == TB_ISA_ARM ? op : (op >> 16 | op << 16);

        for (int i = 0; i < 4; i++)
            b[i] = (uint8_t)(w >> (8 * i));
    } else {
        b[0] = (uint8_t)op;
        b[1] = (uint8_t)(op >> 8);
        b[2] = b[3] = 0;
    }
}

/* Ids whose PC operand is read, never written. */
static bool reads_pc_only(unsigned id)
{
    switch (id) {
    case ARM_INS_CMP: case ARM_INS_CMN: case ARM_INS_TST: case ARM_INS_TEQ:
    case ARM_INS_STR: case ARM_INS_STRB: case ARM_INS_STRH: case ARM_INS_STRD:
    case ARM_INS_STRT: case ARM_INS_STRBT: case ARM_INS_STRHT:
    case ARM_INS_STREX: case ARM_INS_STREXB: case ARM_INS_STREXH:
    case ARM_INS_STREXD:
    case ARM_INS_STM: case ARM_INS_STMDA: case ARM_INS_STMDB:
    case ARM_INS_STMIB: case ARM_INS_PUSH:
    case ARM_INS_SRSDA: case ARM_INS_SRSDB: case ARM_INS_SRSIA:
    case ARM_INS_SRSIB:
    case ARM_INS_MCR: case ARM_INS_MCRR:
        return true;
    default:
        return false;
    }
}

static bool any_op_is_pc(const cs_arm *a, int from)
{
    for (int i = from; i < a->op_count; i++)
        if (a->operands[i].type == ARM_OP_REG && a->operands[i].reg == ARM_REG_PC)
            return true;
    return false;
}

/* CP15 c7 barrier operations (ARM ARM B4.2.1 / protocol-notes 3.12). */
static tb_wp_class cp15_barrier(const tb_insn *in)
{
    uint32_t op = in->opcode;
    unsigned coproc, opc1, crn, crm, opc2;

    if (in->isa == TB_ISA_THUMB && in->size != 4)
        return TB_WP_NONE;
    coproc = (op >> 8) & 15;
    opc1 = (op >> 21) & 7;
    crn = (op >> 16) & 15;
    crm = op & 15;
    opc2 = (op >> 5) & 7;
    if (coproc != 15 || opc1 != 0 || crn != 7)
        return TB_WP_NONE;
    if (crm == 5 && opc2 == 4)
        return TB_WP_ISB;
    if (crm == 10 && (opc2 == 4 || opc2 == 5))
        return TB_WP_BARRIER;
    return TB_WP_NONE;
}

/* How from_capstone() found a write of the PC. */
enum path { BY_ID, BY_OPERAND };

static enum path from_capstone(const cs_insn *ci, tb_insn *in)
{
    const cs_arm *a = &ci->detail->arm;
    unsigned id = ci->id;
    bool arm = in->isa == TB_ISA_ARM;

    switch (id) {
    case ARM_INS_B:
    case ARM_INS_BL:
    case ARM_INS_CBZ:
    case ARM_INS_CBNZ:
        in->wp_class = id == ARM_INS_BL ? TB_WP_DIRECT_LINK : TB_WP_DIRECT;
        in->link = id == ARM_INS_BL;
        in->writes_pc = true;
        for (int i = 0; i < a->op_count; i++)
            if (a->operands[i].type == ARM_OP_IMM) {
                in->has_target = true;
                in->target = (uint32_t)a->operands[i].imm;
            }
        in->target_isa = in->isa;
        /* T32: only B<c> (T1/T3) carries a condition; Capstone gives
         * ARM_CC_EQ = 1 .. ARM_CC_AL = 15. */
        if (!arm && id == ARM_INS_B && a->cc >= ARM_CC_EQ && a->cc <= ARM_CC_AL)
            in->cond = (uint8_t)(a->cc - 1);
        break;
    case ARM_INS_BLX:
        in->link = true;
        in->writes_pc = true;
        if (a->op_count > 0 && a->operands[0].type == ARM_OP_IMM) {
            in->wp_class = TB_WP_DIRECT_LINK;
            in->has_target = true;
            in->target = (uint32_t)a->operands[0].imm;
            in->target_isa = arm ? TB_ISA_THUMB : TB_ISA_ARM;
            if (!arm)
                in->target &= ~3u;
        } else {
            in->wp_class = TB_WP_INDIRECT_LINK;
        }
        break;
    case ARM_INS_BX:
    case ARM_INS_BXJ:
    case ARM_INS_TBB:
    case ARM_INS_TBH:
        in->wp_class = TB_WP_INDIRECT;
        in->writes_pc = true;
        break;
    case ARM_INS_ERET:
    case ARM_INS_RFEDA: case ARM_INS_RFEDB:
    case ARM_INS_RFEIA: case ARM_INS_RFEIB:
        in->wp_class = TB_WP_INDIRECT;
        in->writes_pc = true;
        in->exc_return = true;
        break;
    case ARM_INS_ISB:
        in->wp_class = TB_WP_ISB;
        break;
    case ARM_INS_DMB:
    case ARM_INS_DSB:
        in->wp_class = TB_WP_BARRIER;
        break;
    case ARM_INS_MCR:
        in->wp_class = (uint8_t)cp15_barrier(in);
        break;
    case ARM_INS_SVC:
        in->is_svc = true;
        break;
    case ARM_INS_WFI:
    case ARM_INS_WFE:
        in->is_wfi = true;
        break;
    case ARM_INS_IT:
        in->is_it = true;
        in->it_cond = (uint8_t)((in->opcode >> 4) & 15);
        in->it_mask = (uint8_t)(in->opcode & 15);
        break;
    case ARM_INS_LDM: case ARM_INS_LDMDA: case ARM_INS_LDMDB:
    case ARM_INS_LDMIB: case ARM_INS_POP:
        if (any_op_is_pc(a, id == ARM_INS_POP ? 0 : 1)) {
            in->wp_class = TB_WP_INDIRECT;
            in->writes_pc = true;
            if (arm && id != ARM_INS_POP && (in->opcode & (1u << 22)))
                in->exc_return = true;
        }
        break;
    default:
        if (a->op_count > 0 && a->operands[0].type == ARM_OP_REG &&
            a->operands[0].reg == ARM_REG_PC && !reads_pc_only(id) &&
            a->operands[0].access != CS_AC_READ) {
            in->wp_class = TB_WP_INDIRECT;
            in->writes_pc = true;
            if (a->update_flags && id != ARM_INS_LDR)
                in->exc_return = true;
            return BY_OPERAND;
        }
        break;
    }
    return BY_ID;
}

static void insn_init(tb_insn *out, uint32_t addr, uint32_t opcode, unsigned size, tb_isa isa)
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

/* What Capstone said of an instruction, beyond the tb_insn. */
struct said {
    unsigned id;          /* ARM_INS_INVALID when it cannot decode */
    enum path path;
    bool reg_shift;       /* an operand shifted by a register */
};

/* Capstone's answer. */
static int capstone(tb_cref *r, uint32_t op, tb_isa isa, uint32_t addr, tb_insn *out,
                    struct said *said)
{
    uint8_t b[4];
    unsigned size = isa == TB_ISA_ARM ? 4 : (op > 0xFFFF ? 4 : 2);
    csh h = isa == TB_ISA_ARM ? r->arm : r->thumb;
    cs_insn *ci = isa == TB_ISA_ARM ? r->ci_arm : r->ci_thumb;
    const uint8_t *code = b;
    size_t len = size;
    uint64_t pc = addr;

    tb_cref_bytes(op, isa, b);
    insn_init(out, addr, op, size, isa);
    memset(said, 0, sizeof *said);
    said->id = ARM_INS_INVALID;
    if (cs_disasm_iter(h, &code, &len, &pc, ci) && ci->size == size) {
        const cs_arm *a = &ci->detail->arm;

        said->id = ci->id;
        said->path = from_capstone(ci, out);
        for (int i = 0; i < a->op_count; i++)
            if (a->operands[i].shift.type >= ARM_SFT_ASR_REG)
                said->reg_shift = true;
        /* LSL/LSR/ASR/ROR Rd, Rn, Rm: the MOV (register-shifted
         * register) forms; Capstone gives the shift as an operand. */
        if (a->op_count == 3 && a->operands[2].type == ARM_OP_REG)
            switch (ci->id) {
            case ARM_INS_LSL: case ARM_INS_LSR: case ARM_INS_ASR: case ARM_INS_ROR:
                said->reg_shift = true;
                break;
            default:
                break;
            }
    } else {
        out->undefined = true;
    }
    /* Capstone carries an IT instruction's state into the next calls:
     * a new handle forgets it. */
    if (isa == TB_ISA_THUMB && size == 2 && (op & 0xFF00) == 0xBF00 && (op & 15)) {
        close_thumb(r);
        if (open_thumb(r) < 0)
            abort();
    }
    return (int)size;
}

int tb_cref_capstone(tb_cref *r, uint32_t op, tb_isa isa, uint32_t addr, tb_insn *out)
{
    struct said said;

    return capstone(r, op, isa, addr, out, &said);
}

static const char *const rule_texts[] = {
    "Capstone and the ARM ARM agree",
#define TB_CREF_RULE(id, text) text,
#include "classify_ref_rules.h"
#undef TB_CREF_RULE
};

const char *tb_cref_rule_text(int rule)
{
    return rule >= 0 && rule < TB_CREF_NRULES ? rule_texts[rule] : "?";
}

/* The instructions whose write of the PC the ARM ARM defines, among
 * those Capstone finds a PC destination in (its operand 0): A32 data
 * processing (A5.2.1/A5.2.3, not the register-shifted register forms,
 * A5.2.2) and LDR (A8.8.63-66); T16 MOV and ADD (register) with a high
 * register (A8.8.103, A8.8.6/9); T32 LDR (A8.8.62-65) and SUBS PC, LR
 * (B9.3.19).  For every other instruction a PC destination is
 * UNPREDICTABLE (its pseudocode: "if d == 15 then UNPREDICTABLE", or t,
 * dHi, dLo; a base register of PC written back, A8.8.332 and others). */
static bool defines_pc_write(uint32_t op, tb_isa isa, const struct said *s)
{
    if (isa == TB_ISA_ARM) {
        switch (s->id) {
        case ARM_INS_AND: case ARM_INS_EOR: case ARM_INS_SUB: case ARM_INS_RSB:
        case ARM_INS_ADD: case ARM_INS_ADC: case ARM_INS_SBC: case ARM_INS_RSC:
        case ARM_INS_ORR: case ARM_INS_MOV: case ARM_INS_BIC: case ARM_INS_MVN:
        case ARM_INS_LSL: case ARM_INS_LSR: case ARM_INS_ASR: case ARM_INS_ROR:
        case ARM_INS_RRX: case ARM_INS_ADR:
            return !s->reg_shift;
        case ARM_INS_LDR:
            return true;
        default:
            return false;
        }
    }
    if (op <= 0xFFFF)
        return s->id == ARM_INS_MOV || s->id == ARM_INS_ADD;
    if (s->id == ARM_INS_SUB)
        return (op & 0xFFF0D000) == 0xF3D08000;
    return s->id == ARM_INS_LDR;
}

/*
 * Should-be bits: the ARM ARM marks fields of some encodings (1) or (0)
 * in its diagrams; other values are UNPREDICTABLE, and the cores (and
 * OpenCSD's classifier) decode the instruction all the same.  Capstone 4
 * rejects these instructions when they are wrong, and accepts others'
 * (T16 BX, TBB, RFE A1, ...), so the reference is Capstone's answer for
 * the same word with them as the diagram shows.  Encodings: an opcode
 * matches when (op & mask) == value; sb_mask, sb_value its should-be
 * bits.
 *
 * The same for a few register combinations the ARM ARM makes
 * UNPREDICTABLE in an instruction that writes the PC (TB_CREF_REGS):
 * Capstone rejects them, the cores load the PC all the same, and the
 * reference is Capstone's answer without the conflicting register.
 */
static const struct should_be {
    bool thumb;
    uint32_t mask, value, sb_mask, sb_value;
    int rule;
} should_be[] = {
    /* A32 BX, BXJ, BLX (register) (A8.8.27/28/26): bits 19:8 (1). */
    {false, 0x0FF000F0, 0x01200010, 0x000FFF00, 0x000FFF00, TB_CREF_SHOULD_BE},
    {false, 0x0FF000F0, 0x01200020, 0x000FFF00, 0x000FFF00, TB_CREF_SHOULD_BE},
    {false, 0x0FF000F0, 0x01200030, 0x000FFF00, 0x000FFF00, TB_CREF_SHOULD_BE},
    /* A32 MOV, MVN (register, immediate) (A8.8.102/103/115/116), and so
     * their shift aliases: Rn (0). */
    {false, 0x0DA00000, 0x01A00000, 0x000F0000, 0x00000000, TB_CREF_SHOULD_BE},
    /* A32 WFE, WFI (A8.8.424/425): bits 15:8 (1)(1)(1)(1)(0)(0)(0)(0). */
    {false, 0x0FFF00FE, 0x03200002, 0x0000FF00, 0x0000F000, TB_CREF_SHOULD_BE},
    /* A32 ERET (B9.3.3): bits 19:8 (0). */
    {false, 0x0FF000FF, 0x0160006E, 0x000FFF00, 0x00000000, TB_CREF_SHOULD_BE},
    /* A32 RFE (B9.3.13): bits 15:0 (0)(0)(0)(0)(1)(0)(1)(0)(0)...(0). */
    {false, 0xFE500000, 0xF8100000, 0x0000FFFF, 0x00000A00, TB_CREF_SHOULD_BE},
    /* A32 DSB, DMB, ISB (A8.8.44/43/54): 19:12 (1), 11:8 (0). */
    {false, 0xFFF000F0, 0xF5700040, 0x000FFF00, 0x000FF000, TB_CREF_SHOULD_BE},
    {false, 0xFFF000F0, 0xF5700050, 0x000FFF00, 0x000FF000, TB_CREF_SHOULD_BE},
    {false, 0xFFF000F0, 0xF5700060, 0x000FFF00, 0x000FF000, TB_CREF_SHOULD_BE},
    /* T16 BLX (register) (A8.8.26): bits 2:0 (0). */
    {true, 0xFFFFFF80, 0x00004780, 0x00000007, 0x00000000, TB_CREF_SHOULD_BE},
    /* T32 RFE T1/T2 (B9.3.13): hw2 (1)(1)(0)...(0). */
    {true, 0xFFD00000, 0xE8100000, 0x0000FFFF, 0x0000C000, TB_CREF_SHOULD_BE},
    {true, 0xFFD00000, 0xE9900000, 0x0000FFFF, 0x0000C000, TB_CREF_SHOULD_BE},
    /* T32 WFE, WFI (A8.8.424/425): hw1[3:0] (1), hw2[13] and [11] (0). */
    {true, 0xFFF0D7FE, 0xF3A08002, 0x000F2800, 0x000F0000, TB_CREF_SHOULD_BE},
    /* T32 BXJ (A8.8.28): hw2[13] (0), hw2[11:0] (1)(1)(1)(1)(0)...(0). */
    {true, 0xFFF0D000, 0xF3C08000, 0x00002FFF, 0x00000F00, TB_CREF_SHOULD_BE},
    /* T32 SUBS PC, LR (B9.3.19): hw1[3:0] (1)(1)(1)(0), hw2[13] (0),
     * hw2[11:8] (1). */
    {true, 0xFFF0D000, 0xF3D08000, 0x000F2F00, 0x000E0F00, TB_CREF_SHOULD_BE},
    /* T32 TBB, TBH (A8.8.238): hw2[15:8] (1)(1)(1)(1)(0)(0)(0)(0). */
    {true, 0xFFF000E0, 0xE8D00000, 0x0000FF00, 0x0000F000, TB_CREF_SHOULD_BE},
    /* T32 LDM T2, LDMDB T1 (A8.8.57/59): hw2[13] (0). */
    {true, 0xFFD00000, 0xE8900000, 0x00002000, 0x00000000, TB_CREF_SHOULD_BE},
    {true, 0xFFD00000, 0xE9100000, 0x00002000, 0x00000000, TB_CREF_SHOULD_BE},
    /* T32 LDM T2, POP.W with both PC and LR (P = M = 1, A8.8.57/131). */
    {true, 0xFFD0C000, 0xE890C000, 0x00004000, 0x00000000, TB_CREF_REGS},
    {true, 0xFFD0C000, 0xE910C000, 0x00004000, 0x00000000, TB_CREF_REGS},
    /* T32 DSB, DMB, ISB: hw1[3:0] (1), hw2[13] (0), hw2[11:8] (1). */
    {true, 0xFFF0D0F0, 0xF3B08040, 0x000F2F00, 0x000F0F00, TB_CREF_SHOULD_BE},
    {true, 0xFFF0D0F0, 0xF3B08050, 0x000F2F00, 0x000F0F00, TB_CREF_SHOULD_BE},
    {true, 0xFFF0D0F0, 0xF3B08060, 0x000F2F00, 0x000F0F00, TB_CREF_SHOULD_BE},
};

static int capstone(tb_cref *r, uint32_t op, tb_isa isa, uint32_t addr, tb_insn *out,
                    struct said *said);

/* The ARM ARM's answer where Capstone's differs: *ref corrected, the
 * rule returned (TB_CREF_SAME: Capstone's answer stands). */
static int correct(tb_cref *r, uint32_t op, tb_isa isa, struct said *s, tb_insn *ref)
{
    if (ref->undefined) {
        uint32_t canon = op;
        int rule = TB_CREF_SAME;
        tb_insn c;

        for (size_t i = 0; i < sizeof should_be / sizeof should_be[0]; i++) {
            const struct should_be *b = &should_be[i];

            if (b->thumb != (isa == TB_ISA_THUMB) || (op & b->mask) != b->value ||
                (canon & b->sb_mask) == b->sb_value)
                continue;
            canon = (canon & ~b->sb_mask) | b->sb_value;
            if (rule != TB_CREF_REGS)
                rule = b->rule;
        }
        if (rule == TB_CREF_SAME)
            return rule;
        capstone(r, canon, isa, ref->addr, &c, s);
        if (c.undefined)
            return TB_CREF_SAME;
        correct(r, canon, isa, s, &c);
        c.opcode = op;
        *ref = c;
        return rule;
    }
    /* UDF (A8.8.247): permanently UNDEFINED, a disassembler's
     * instruction but no processor's (TRAP is its name for UDF #254). */
    if (s->id == ARM_INS_UDF || s->id == ARM_INS_TRAP) {
        ref->undefined = true;
        return TB_CREF_UDF;
    }
    if (s->path == BY_OPERAND && !defines_pc_write(op, isa, s)) {
        ref->wp_class = TB_WP_NONE;
        ref->writes_pc = false;
        ref->exc_return = false;
        return TB_CREF_UNPRED_PC;
    }
    /* ADC, SBC, RSC read the carry flag: Capstone 4 reports them as
     * setting the flags with S = 0 too.  Only with S = 1 is a write of
     * the PC an exception return (B9.3.20). */
    if (s->path == BY_OPERAND && isa == TB_ISA_ARM && ref->exc_return &&
        !(op & (1u << 20)) &&
        (s->id == ARM_INS_ADC || s->id == ARM_INS_SBC || s->id == ARM_INS_RSC)) {
        ref->exc_return = false;
        return TB_CREF_CARRY_FLAGS;
    }
    return TB_CREF_SAME;
}

static bool plain(const tb_insn *x)
{
    return x->wp_class == TB_WP_NONE && !x->link && !x->has_target && !x->exc_return &&
           !x->writes_pc && !x->is_it && !x->is_svc && !x->is_wfi;
}

int tb_cref_check(tb_cref *r, uint32_t op, tb_isa isa, uint32_t addr, const tb_insn *mine,
                  int *rule, char *msg, size_t msg_len)
{
    tb_insn ref;
    struct said said;
    const tb_insn *a = mine, *b = &ref;

    capstone(r, op, isa, addr, &ref, &said);
    *rule = correct(r, op, isa, &said, &ref);
#define SAME(f)                                                                          \
    if (a->f != b->f) {                                                                  \
        snprintf(msg, msg_len, "%s %08x: " #f " %u, reference %u (%s, Capstone id %u)",  \
                 isa == TB_ISA_ARM ? "A32" : "T32", op, (unsigned)a->f, (unsigned)b->f,   \
                 tb_cref_rule_text(*rule), said.id);                                          \
        return -1;                                                                       \
    }
    SAME(addr); SAME(opcode); SAME(size); SAME(isa); SAME(wp_class); SAME(cond);
    SAME(link); SAME(has_target); SAME(target); SAME(target_isa); SAME(exc_return);
    SAME(writes_pc); SAME(is_it); SAME(it_cond); SAME(it_mask); SAME(is_svc);
    SAME(is_wfi);
    /* What Capstone cannot decode is plain to it; the classifier may
     * know it is UNDEFINED or not (it decodes only the groups that
     * decide the class), but what it calls UNDEFINED, Capstone must not
     * decode. */
    if (mine->undefined && !ref.undefined) {
        snprintf(msg, msg_len, "%s %08x: undefined, reference decodes it (%s, Capstone id %u)",
                 isa == TB_ISA_ARM ? "A32" : "T32", op, tb_cref_rule_text(*rule), said.id);
        return -1;
    }
    (void)plain;
#undef SAME
    return 0;
}
