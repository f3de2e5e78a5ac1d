/*
 * What a load/store instruction transfers (mem_op.h), decoded from its
 * opcode: A32 and T32 loads, stores, LSMs, swaps, exclusives, VFP.
 */
#include "mem_op.h"

#include "tracebench/classify.h"

static inline uint32_t bits(uint32_t v, unsigned hi, unsigned lo)
{
    return (v >> lo) & ((2u << (hi - lo)) - 1u);
}

static uint8_t popcount16(uint32_t v)
{
    uint8_t n = 0;

    for (v &= 0xFFFF; v; v &= v - 1)
        n++;
    return n;
}

/* VFP loads and stores (VLDR/VSTR/VLDM/VSTM/VPUSH/VPOP): word layout
 * w[27:25] = 110, coprocessor w[11:8] = 101x, the same in A32 and in T32
 * (hw1 << 16 | hw2).  One packet per 32-bit word (7.4). */
static bool vfp_op(uint32_t w, tb_mem_op *m)
{
    const uint32_t puw = bits(w, 24, 21) & 0xD; /* P, U, W */

    if (bits(w, 27, 25) != 6 || (bits(w, 11, 8) & 0xE) != 0xA)
        return false;
    if (bits(w, 24, 21) == 2 || bits(w, 24, 21) == 0)
        return false; /* 64-bit moves to core registers (VMOV), no memory */
    m->store = !bits(w, 20, 20);
    m->size = 4;
    if ((puw & 0x9) == 0x8) /* P = 1, W = 0: VLDR/VSTR */
        m->n = bits(w, 8, 8) ? 2 : 1;
    else
        m->n = (uint8_t)bits(w, 7, 0); /* words (FLDMX: one more, harmless) */
    return m->n > 0;
}

/* A32 (IHI0014Q 7.4: loads, stores, LSMs, swaps; ARM ARM A5.3-A5.4). */
static void arm_op(uint32_t w, tb_mem_op *m)
{
    const uint32_t cond = bits(w, 31, 28), l = bits(w, 20, 20);

    if (cond == 0xF) {
        /* SRS (P U 1 W 0: stores 2 words) / RFE (P U 0 W 1: loads 2);
         * PLD, PLI, NEON: none. */
        if (bits(w, 27, 25) == 4 && bits(w, 22, 22) != l) {
            m->n = 2;
            m->size = 4;
            m->store = !l;
        }
        return;
    }
    switch (bits(w, 27, 25)) {
    case 2: /* LDR/STR(B) immediate */
    case 3: /* ... register; bit 4 set is media */
        if (bits(w, 27, 25) == 3 && bits(w, 4, 4))
            return;
        m->n = 1;
        m->size = bits(w, 22, 22) ? 1 : 4;
        m->store = !l;
        return;
    case 4: /* LDM/STM */
        m->n = popcount16(w);
        m->size = 4;
        m->store = !l;
        m->pc_load = l && bits(w, 15, 15) && m->n >= 2;
        return;
    case 0:
        if (bits(w, 7, 4) == 9 && bits(w, 24, 23) == 2 && !bits(w, 21, 20)) {
            m->n = 2; /* SWP/SWPB: a load, then a store */
            m->size = bits(w, 22, 22) ? 1 : 4;
            m->swap = true;
            return;
        }
        if (bits(w, 7, 4) == 9 && bits(w, 24, 23) == 3) {
            static const uint8_t sz[4] = {4, 4, 1, 2}; /* EX, EXD, EXB, EXH */
            const uint32_t op = bits(w, 22, 21);

            m->n = op == 1 ? 2 : 1;
            m->size = sz[op];
            m->store = !l;
            m->excl = !l;
            return;
        }
        if (bits(w, 7, 7) && bits(w, 4, 4) && bits(w, 6, 5)) {
            /* Extra loads/stores (their unprivileged forms too). */
            const uint32_t op2 = bits(w, 6, 5);

            if (op2 == 1) {        /* STRH / LDRH */
                m->size = 2;
                m->store = !l;
            } else if (!l) {       /* LDRD (op2 2) / STRD (op2 3) */
                m->size = 4;
                m->n = 2;
                m->store = op2 == 3;
                return;
            } else {               /* LDRSB / LDRSH */
                m->size = op2 == 2 ? 1 : 2;
            }
            m->n = 1;
        }
        return;
    case 6:
        (void)vfp_op(w, m);
        return;
    default:
        return;
    }
}

/* T32 (ARM ARM A6.2, A6.3). */
static void thumb_op(uint32_t w, bool wide, tb_mem_op *m)
{
    if (!wide) {
        const uint32_t h = w & 0xFFFF;

        if (bits(h, 15, 12) == 5) {          /* register offset */
            static const uint8_t sz[8] = {4, 2, 1, 1, 4, 2, 1, 2};
            const uint32_t op = bits(h, 11, 9);

            m->n = 1;
            m->size = sz[op];
            m->store = op < 3;
        } else if (bits(h, 15, 13) == 3) {   /* STR/LDR(B) immediate */
            m->n = 1;
            m->size = bits(h, 12, 12) ? 1 : 4;
            m->store = !bits(h, 11, 11);
        } else if (bits(h, 15, 12) == 8) {   /* STRH/LDRH immediate */
            m->n = 1;
            m->size = 2;
            m->store = !bits(h, 11, 11);
        } else if (bits(h, 15, 12) == 9) {   /* SP-relative */
            m->n = 1;
            m->size = 4;
            m->store = !bits(h, 11, 11);
        } else if (bits(h, 15, 11) == 9) {   /* LDR literal */
            m->n = 1;
            m->size = 4;
        } else if ((h & 0xFE00) == 0xB400 || (h & 0xFE00) == 0xBC00) {
            m->n = (uint8_t)(popcount16(h & 0xFF) + bits(h, 8, 8)); /* PUSH/POP */
            m->size = 4;
            m->store = !bits(h, 11, 11);
            m->pc_load = !m->store && bits(h, 8, 8) && m->n >= 2;
        } else if (bits(h, 15, 12) == 0xC) { /* STM/LDM */
            m->n = popcount16(h & 0xFF);
            m->size = 4;
            m->store = !bits(h, 11, 11);
        }
        return;
    }
    if (bits(w, 31, 25) == 0x74) {           /* 1110100x: multiple, dual, exclusive */
        const uint32_t l = bits(w, 20, 20), op1 = bits(w, 24, 23), op2 = bits(w, 21, 20);

        if (!bits(w, 22, 22)) {
            if (op1 == 1 || op1 == 2) {      /* STM/LDM (IA, DB), PUSH.W/POP.W */
                m->n = popcount16(w);
                m->size = 4;
                m->store = !l;
                m->pc_load = l && bits(w, 15, 15) && m->n >= 2;
            } else {                         /* SRS / RFE */
                m->n = 2;
                m->size = 4;
                m->store = !l;
            }
            return;
        }
        if (op1 == 0 && op2 < 2) {           /* STREX / LDREX */
            m->n = 1;
            m->size = 4;
            m->store = m->excl = !l;
        } else if ((op1 & 2) || (op2 & 2)) { /* STRD / LDRD */
            m->n = 2;
            m->size = 4;
            m->store = !l;
        } else if (op1 == 1) {
            const uint32_t op3 = bits(w, 7, 4);

            if (op3 == 0 || op3 == 1) {      /* TBB/TBH: read a table entry */
                if (l) {
                    m->n = 1;
                    m->size = op3 ? 2 : 1;
                }
            } else if (op3 >= 4 && op3 != 6) { /* ..EXB, ..EXH, ..EXD */
                m->n = op3 == 7 ? 2 : 1;
                m->size = op3 == 4 ? 1 : op3 == 5 ? 2 : 4;
                m->store = m->excl = !l;
            }
        }
        return;
    }
    if (bits(w, 31, 25) == 0x7C) {           /* 1111100x: single loads/stores */
        const uint32_t size = bits(w, 22, 21), l = bits(w, 20, 20);

        if (size == 3 || (bits(w, 24, 24) && !l))
            return;
        /* PLD, PLI and hints: byte/halfword loads to PC, no transfer. */
        if (l && size < 2 && bits(w, 15, 12) == 0xF)
            return;
        m->n = 1;
        m->size = (uint8_t)(1u << size);
        m->store = !l;
        return;
    }
    if (bits(w, 31, 29) == 7)
        (void)vfp_op(w, m);
}

tb_mem_op tb_mem_op_at(const tb_memimage *mem, uint32_t addr, uint8_t isa, uint8_t *size)
{
    tb_mem_op m = {0};
    size_t avail = 0;
    const uint8_t *p = tb_memimage_ptr(mem, addr, &avail);

    *size = 0;
    if (!p || avail < 2)
        return m;
    if (isa == TB_ISA_ARM) {
        if (avail < 4)
            return m;
        *size = 4;
        arm_op((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                   (uint32_t)p[3] << 24, &m);
    } else if (isa == TB_ISA_THUMB) {
        const uint16_t h1 = (uint16_t)(p[0] | p[1] << 8);

        if (tb_thumb_size(h1) == 4) {
            if (avail < 4)
                return m;
            *size = 4;
            thumb_op((uint32_t)h1 << 16 | (uint32_t)(p[2] | p[3] << 8), true, &m);
        } else {
            *size = 2;
            thumb_op(h1, false, &m);
        }
    }
    return m;
}
