/*
 * Instruction classifier: Capstone 4 decodes, this file turns its answer
 * into what the trace protocols care about (protocol-notes 3.12).
 *
 * Capstone 4 puts no jump group on LDR pc, POP/LDM {pc}, MOV/ADD/SUB pc,
 * SUBS pc,lr, RFE or ERET, so the class comes from the instruction id
 * plus "does it write the PC", never from the groups.  Capstone's operand
 * access flags are unreliable too (T32 SUBS pc,lr reports none), so a
 * PC destination counts as a write unless the id is a compare or a store.
 *
 * Capstone manages a few million instructions per second, so plain
 * instructions are recognised from their bits first (fast_classify), and
 * Capstone's result is cached per (address, ISA) and checked against
 * the opcode, which keeps the cache right when the caller's code bytes
 * change.
 */
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "tracebench/classify.h"

#define CACHE_BITS 13
#define CACHE_SIZE (1u << CACHE_BITS)

struct cache_entry {
    uint32_t addr;
    uint32_t opcode;
    uint8_t isa;
    bool valid;
    tb_insn insn;
};

struct tb_classifier {
    bool fast;           /* plain encodings without Capstone (default) */
    /* Capstone's T32 handle follows IT blocks itself (an instruction in
     * one takes the IT condition): while it is inside one, every Thumb
     * instruction goes to it, as before the fast path, so that its view
     * of the block does not change. */
    unsigned it_left;
    csh arm, thumb;
    cs_insn *ci_arm, *ci_thumb;
    struct cache_entry *cache;
};

tb_classifier *tb_classifier_new(void)
{
    tb_classifier *c = calloc(1, sizeof *c);

    if (!c)
        return NULL;
    c->fast = true;
    c->cache = calloc(CACHE_SIZE, sizeof *c->cache);
    if (!c->cache)
        goto fail;
    if (cs_open(CS_ARCH_ARM, CS_MODE_ARM, &c->arm) != CS_ERR_OK) {
        c->arm = 0;
        goto fail;
    }
    if (cs_open(CS_ARCH_ARM, CS_MODE_THUMB, &c->thumb) != CS_ERR_OK) {
        c->thumb = 0;
        goto fail;
    }
    cs_option(c->arm, CS_OPT_DETAIL, CS_OPT_ON);
    cs_option(c->thumb, CS_OPT_DETAIL, CS_OPT_ON);
    c->ci_arm = cs_malloc(c->arm);
    c->ci_thumb = cs_malloc(c->thumb);
    if (!c->ci_arm || !c->ci_thumb)
        goto fail;
    return c;
fail:
    tb_classifier_free(c);
    return NULL;
}

void tb_classifier_free(tb_classifier *c)
{
    if (!c)
        return;
    if (c->ci_arm)
        cs_free(c->ci_arm, 1);
    if (c->ci_thumb)
        cs_free(c->ci_thumb, 1);
    if (c->arm)
        cs_close(&c->arm);
    if (c->thumb)
        cs_close(&c->thumb);
    free(c->cache);
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

/* CP15 c7 barrier operations (ARM ARM B4.2.1 / protocol-notes 3.12): the
 * MCR forms of ISB, DSB and DMB behave like the instructions. */
static tb_wp_class cp15_barrier(const tb_insn *in)
{
    uint32_t op = in->opcode;
    unsigned coproc, opc1, crn, crm, opc2;

    if (in->isa == TB_ISA_THUMB && in->size != 4)
        return TB_WP_NONE;
    /* A32 cccc 1110 opc1:3 0 CRn Rt 1111 opc2:3 1 CRm; T32 the same
     * low 28 bits in hw1:hw2. */
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

static void classify(const cs_insn *ci, tb_insn *in)
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
            /* BLX(imm) always switches ARM <-> Thumb. */
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
        /* Exception returns.  A32 ERET is a waypoint architecturally;
         * OpenCSD 1.3.3 misses it (protocol-notes 4.4 item 2). */
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
        /* Operand 0 is the base register for LDM; POP lists only
         * registers, so scanning from 0 is right for both (PC as a base
         * is UNPREDICTABLE). */
        if (any_op_is_pc(a, id == ARM_INS_POP ? 0 : 1)) {
            in->wp_class = TB_WP_INDIRECT;
            in->writes_pc = true;
            /* A32 LDM with the S bit (bit 22) and PC: exception return. */
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
            /* A32 data processing with S and Rd = PC (SUBS/MOVS pc, lr)
             * copies SPSR to CPSR; in T32 the only form writing PC with
             * flags is SUBS PC, LR, #imm. */
            if (a->update_flags && id != ARM_INS_LDR)
                in->exc_return = true;
        }
        break;
    }
}

/*
 * The fast path: encodings that are certainly plain instructions (no
 * waypoint, no PC write, no link, IT, SVC, WFI/WFE or exception return,
 * defined), decided from the bits, so most of a program never reaches
 * Capstone.  Anything else, branches included, goes to Capstone.  Each
 * predicate only accepts encodings whose Capstone classification is the
 * plain one (test_classify checks every T16 halfword and samples of A32
 * and T32 against Capstone).  Section numbers: ARM DDI 0406C.
 */

/* T16 (A6.2). */
static bool plain_t16(uint32_t hw)
{
    switch (hw >> 10) {
    case 0x10: /* 010000: data processing, r0-r7 */
        return true;
    case 0x11: /* 010001: special data (A6.2.3) */
        switch ((hw >> 8) & 3) {
        case 0: /* ADD Rdn, Rm: Rdn = D:Rdn */
        case 2: /* MOV Rd, Rm */
            return (((hw >> 4) & 8) | (hw & 7)) != 15;
        case 1: /* CMP */
            return true;
        default: /* BX, BLX */
            return false;
        }
    case 0x2C: case 0x2D: case 0x2E: case 0x2F: /* 1011xx: misc (A6.2.5) */
        switch ((hw >> 8) & 15) {
        case 0x0: /* ADD/SUB SP, SP, #imm */
        case 0x2: /* SXTH, SXTB, UXTH, UXTB */
            return true;
        case 0x4: case 0x5: /* PUSH, not of an empty list */
            return (hw & 0x1FF) != 0;
        case 0xC: /* POP without PC, not of an empty list */
            return (hw & 0xFF) != 0;
        case 0xA: /* REV, REV16, REVSH; 10 is undefined */
            return ((hw >> 6) & 3) != 2;
        default: /* CBZ/CBNZ, SETEND/CPS, POP {..pc}, BKPT, IT and hints */
            return false;
        }
    default:
        break;
    }
    /* 00xxxx shift/add/sub/move/compare, 01001x LDR literal, 0101xx
     * 011xxx 100xxx loads/stores, 1010xx ADR and ADD SP, 1100xx STM/LDM
     * (r0-r7 only); 1101xx B<c>/UDF/SVC and 11100x B are not plain. */
    if (hw >= 0xC000 && hw < 0xD000)
        return (hw & 0xFF) != 0; /* an empty list is undefined */
    return hw < 0x4000 || (hw >= 0x4800 && hw < 0xB000);
}

/* T32 load/store single (A6.3.7-10), hw1 = 1111 100x xxxx Rn: the
 * word, halfword and byte forms; Rt = PC (hints, PC loads) and Rn = PC
 * (literal loads) are left to Capstone. */
static bool plain_t32_ldst(unsigned hw1, unsigned hw2)
{
    const unsigned sz = (hw1 >> 4) & 7, rn = hw1 & 15, rt = hw2 >> 12;

    if (rt == 15 || rn == 15)
        return false;
    if (hw1 & 0x0100) {
        if (sz != 1 && sz != 3)
            return false; /* only LDRSB, LDRSH */
    } else if (sz > 5) {
        return false;
    }
    if (hw1 & 0x0080)
        return true; /* 12-bit offset */
    if (hw2 & 0x0800)
        return (hw2 & 0x0500) != 0; /* 8-bit offset; P = W = 0 undefined */
    /* Register offset: Rm not SP or PC. */
    return (hw2 & 0x07C0) == 0 && (hw2 & 15) != 13 && (hw2 & 15) != 15;
}

/* T32 (A6.3), op = hw1 << 16 | hw2: data processing (immediate and
 * shifted register), load/store single, LDRD/STRD, LDM/STM. */
static bool plain_t32(uint32_t op)
{
    const unsigned hw1 = op >> 16, hw2 = op & 0xFFFF;
    const unsigned rd = (hw2 >> 8) & 15, rt = hw2 >> 12, rn = hw1 & 15;

    if ((hw1 & 0xFE00) == 0xF800)
        return plain_t32_ldst(hw1, hw2);
    if ((hw1 & 0xFE00) == 0xEA00) {
        /* Data processing, shifted register (A6.3.11): as the modified
         * immediate group (PKH, 0110, left to Capstone); hw2[15] (0). */
        const unsigned opc = (hw1 >> 5) & 15;

        return !(hw2 & 0x8000) && rd != 15 && ((0x6D1Fu >> opc) & 1u);
    }
    if ((hw1 & 0xFE40) == 0xE840 && (hw1 & 0x0120)) {
        /* LDRD/STRD (immediate) (A6.3.6): P or W set; not with PC. */
        return rt != 15 && rd != 15 && rn != 15;
    }
    if ((hw1 & 0xFE40) == 0xE800) {
        /* LDM/STM (A6.3.5), IA or DB only (not SRS/RFE); neither PC
         * loaded nor SP in the list, two registers at least. */
        const unsigned opc = (hw1 >> 7) & 3;

        if (opc == 0 || opc == 3 || rn == 15 || (hw2 & 0x2000))
            return false;
        if ((hw1 & 0x10) ? (hw2 & 0x8000) != 0 : (hw2 & 0x8000) != 0)
            return false;
        return (hw2 & (hw2 - 1)) != 0;
    }

    if ((hw1 & 0xF800) == 0xF000 && !(hw2 & 0x8000)) {
        if (rd == 15)
            return false; /* TST/TEQ/CMP/CMN forms, or UNPREDICTABLE */
        if (!(hw1 & 0x0200)) {
            /* Modified immediate (A6.3.1): opcodes 0101-0111, 1001,
             * 1100 and 1111 are undefined. */
            const unsigned opc = (hw1 >> 5) & 15;

            return (0x6D1Fu >> opc) & 1u; /* 0,1,2,3,4,8,10,11,13,14 */
        }
        /* Plain binary immediate (A6.3.3): op even and not 00010,
         * 00110, 01000, 01110, 11110. */
        {
            const unsigned o = (hw1 >> 4) & 0x1F;

            /* SSAT/USAT with ASR (0x12, 0x1A) hide the 16-bit forms. */
            if ((o & 1) || o == 0x02 || o == 0x06 || o == 0x08 ||
                o == 0x0E || o == 0x12 || o == 0x1A || o == 0x1E)
                return false;
            /* Saturate and bit-field forms: no i bit, hw2[5] (0). */
            return o < 0x10 || !((hw1 & 0x0400) || (hw2 & 0x20));
        }
    }
    return false;
}

/* A32 data processing (A5.2.1-3): MOV/MVN need Rn = 0 and the tests
 * Rd = 0 (SBZ fields Capstone holds to). */
static bool a32_dp_fields_ok(uint32_t w)
{
    const unsigned opc = (w >> 21) & 15;

    if (opc == 13 || opc == 15)
        return ((w >> 16) & 15) == 0;
    if (opc >= 8 && opc <= 11)
        return ((w >> 12) & 15) == 0;
    return true;
}

/* A32 (A5.1), cond != 1111. */
static bool plain_a32(uint32_t w)
{
    const unsigned rd = (w >> 12) & 15;

    switch ((w >> 25) & 7) {
    case 0:
        /* Data processing (register): not multiplies and extra loads /
         * stores (bits 7 and 4 set), not the miscellaneous group and the
         * halfword multiplies (op 10xx0, A5.2). */
        if ((w & 0x90) == 0x90 || (w & 0x01900000) == 0x01000000)
            return false;
        return rd != 15 && a32_dp_fields_ok(w);
    case 1:
        /* Data processing (immediate); in op 10xx0 only MOVW/MOVT, not
         * MSR (immediate) and the hints. */
        if ((w & 0x01900000) == 0x01000000)
            return !(w & 0x00200000) && rd != 15; /* MOVW, MOVT */
        return rd != 15 && a32_dp_fields_ok(w);
    case 2:
        return rd != 15; /* LDR/STR (immediate) */
    case 3:
        return !(w & 0x10) && rd != 15; /* register offset; else media */
    case 4:
        /* LDM/STM without the S bit, no PC loaded, a register list. */
        return !(w & (1u << 22)) && !((w & (1u << 20)) && (w & 0x8000)) &&
               (w & 0xFFFF) != 0;
    default:
        return false; /* branches, coprocessor, SVC */
    }
}

static bool fast_classify(uint32_t opcode, tb_isa isa, unsigned size)
{
    if (isa == TB_ISA_ARM)
        return (opcode >> 28) != 15 && plain_a32(opcode);
    return size == 2 ? plain_t16(opcode) : plain_t32(opcode);
}

/* A plain instruction: what both paths start from (A32 carries its
 * condition field, except in the unconditional space). */
static void insn_init(tb_insn *out, uint32_t addr, uint32_t opcode,
                      unsigned size, tb_isa isa)
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

int tb_classifier_decode(tb_classifier *c, const uint8_t *bytes, size_t avail,
                         uint32_t addr, tb_isa isa, tb_insn *out)
{
    uint32_t opcode;
    unsigned size;
    struct cache_entry *e;
    csh h;
    cs_insn *ci;
    const uint8_t *code;
    size_t code_len;
    uint64_t pc;

    if (!c || !bytes || !out)
        return TB_ERR_INVAL;
    if (isa == TB_ISA_THUMBEE || isa == TB_ISA_JAZELLE)
        return TB_ERR_UNSUPPORTED;
    if (isa != TB_ISA_ARM && isa != TB_ISA_THUMB)
        return TB_ERR_INVAL;
    if (isa == TB_ISA_ARM) {
        if (avail < 4)
            return TB_ERR_TRUNCATED;
        size = 4;
        opcode = (uint32_t)bytes[0] | (uint32_t)bytes[1] << 8 |
                 (uint32_t)bytes[2] << 16 | (uint32_t)bytes[3] << 24;
    } else {
        uint16_t hw1;

        if (avail < 2)
            return TB_ERR_TRUNCATED;
        hw1 = (uint16_t)(bytes[0] | bytes[1] << 8);
        size = tb_thumb_size(hw1);
        if (avail < size)
            return TB_ERR_TRUNCATED;
        opcode = hw1;
        if (size == 4)
            opcode = (uint32_t)hw1 << 16 | (uint32_t)(bytes[2] | bytes[3] << 8);
    }

    if (c->fast && !(isa == TB_ISA_THUMB && c->it_left) &&
        fast_classify(opcode, isa, size)) {
        insn_init(out, addr, opcode, size, isa); /* a plain instruction */
        return (int)size;
    }

    e = &c->cache[((addr >> 1) ^ (addr >> (CACHE_BITS + 1))) & (CACHE_SIZE - 1)];
    if (e->valid && e->addr == addr && e->isa == isa && e->opcode == opcode) {
        *out = e->insn;
        return (int)size;
    }

    insn_init(out, addr, opcode, size, isa);

    h = isa == TB_ISA_ARM ? c->arm : c->thumb;
    ci = isa == TB_ISA_ARM ? c->ci_arm : c->ci_thumb;
    code = bytes;
    code_len = size;
    pc = addr;
    if (cs_disasm_iter(h, &code, &code_len, &pc, ci) && ci->size == size)
        classify(ci, out);
    else
        out->undefined = true;
    if (isa == TB_ISA_THUMB && !out->undefined) {
        /* Capstone moves through an IT block only on instructions it
         * decodes. */
        if (c->it_left)
            c->it_left--;
        /* IT (A8.8.54): 4 - trailing zeros of the mask instructions,
         * added to what is left of an enclosing block (Capstone stacks
         * a nested IT's conditions on the old ones). */
        if (out->is_it && out->it_mask)
            c->it_left += 4u - (unsigned)__builtin_ctz(out->it_mask);
    }

    e->addr = addr;
    e->isa = (uint8_t)isa;
    e->opcode = opcode;
    e->insn = *out;
    e->valid = true;
    return (int)size;
}

void tb_classifier_set_fast(tb_classifier *c, bool on)
{
    if (c)
        c->fast = on;
}
