/*
 * The classifier's encoding tables (common/classify.c), from the ARM
 * ARM: ARM DDI 0406C.c chapter A5 (A32) and A6 (T32), whose T32 tables
 * contain ARMv7-M's (DDI 0403E.b A5).
 *
 * One group per entry of the top-level decode (A32: op1 = bits [27:25],
 * A5.1, and again for the unconditional space, A5.7; T16: bits [15:12],
 * A6.2; T32: hw1[12:9], A6.3), each a list of rows (mask, value, kind)
 * tried in order, the first match deciding; the last row matches
 * anything.  Rows name only the encodings a trace decoder must tell
 * apart: branches, every defined write of the PC, exception returns,
 * ISB/DMB/DSB, SVC, WFI/WFE and IT.  What no row claims is a plain
 * instruction.
 *
 * UNPREDICTABLE encodings (ARM ARM A5.1.1, A6.1):
 * - Should-be-one/zero fields ((1)/(0) in the encoding diagrams) holding
 *   the other value: the rows do not look at them, as the cores and
 *   OpenCSD's classifier do not, so the instruction classifies as with
 *   them right.
 * - A PC destination where the ARM ARM defines no write of the PC (d ==
 *   15 in a multiply, LDRB, LDRH, MOVW, a register-shifted-register data
 *   processing operation, a Thumb-2 MOV.W, ...): no row names it, plain.
 * - Register combinations it forbids in an instruction that does write
 *   the PC (LDM with writeback and the base in the list, POP.W with both
 *   PC and LR, ...): the instruction's class, the PC is loaded all the
 *   same.
 * K_UNDEF marks UNDEFINED encodings (UDF and the unallocated ones met in
 * the groups below).
 *
 * Opcodes as tb_insn holds them: an A32 word, a T16 halfword, a T32
 * instruction as hw1 << 16 | hw2.
 */
#ifndef TB_CLASSIFY_TABLES_H
#define TB_CLASSIFY_TABLES_H

#include <stdint.h>

enum cls_kind {
    K_PLAIN = 0,     /* nothing a trace decoder cares about */
    K_UNDEF,         /* UNDEFINED */
    K_A32_B,         /* B, BL: direct, BL links (bit 24) */
    K_A32_BLX_IMM,   /* BLX (imm): direct, links, to Thumb */
    K_BX,            /* BX: indirect */
    K_BXJ,           /* BXJ: indirect (Jazelle absent: a BX) */
    K_BLX_REG,       /* BLX (register): indirect, links */
    K_TB,            /* TBB, TBH: indirect */
    K_PC_WRITE,      /* any other defined write of the PC: indirect */
    K_EXC_RETURN,    /* ERET, RFE, SUBS PC, LR (T32): indirect, exception return */
    K_A32_DP_PC,     /* A32 data processing, Rd = PC: indirect; S set: exception return */
    K_A32_LDM_PC,    /* A32 LDM with PC: indirect; S bit (22): exception return */
    K_ISB,           /* ISB */
    K_BARRIER,       /* DMB, DSB */
    K_MCR,           /* MCR: CP15 c7 barrier operations are ISB/DMB/DSB */
    K_SVC,           /* SVC: an exception, not a waypoint */
    K_WFI,           /* WFI, WFE */
    K_T16_BCOND,     /* B<c> T1 */
    K_T16_B,         /* B T2 */
    K_CBZ,           /* CBZ, CBNZ */
    K_IT,            /* IT */
    K_T32_BCOND,     /* B<c> T3 */
    K_T32_B,         /* B T4 */
    K_T32_BL,        /* BL */
    K_T32_BLX_IMM,   /* BLX (imm) T2: to ARM */
};

struct cls_row {
    uint32_t mask, value;
    uint8_t kind;
};

#define ROW(m, v, k) {(m), (v), (k)}
#define END {0, 0, K_PLAIN}

/* ---- A32, cond != 1111 (A5.1) ---- */

/* op1 = 000: data processing (register, register-shifted register),
 * miscellaneous, multiplies, extra loads/stores (A5.2, op = 0). */
static const struct cls_row cls_a32_000[] = {
    /* Miscellaneous (A5.2.12: op1 = 10xx0, op2 = 0xxx). */
    ROW(0x0FF000F0, 0x01200010, K_BX),          /* BX A8.8.27 */
    ROW(0x0FF000F0, 0x01200020, K_BXJ),         /* BXJ A8.8.28 */
    ROW(0x0FF000F0, 0x01200030, K_BLX_REG),     /* BLX (register) A8.8.26 */
    ROW(0x0FF000FF, 0x0160006E, K_EXC_RETURN),  /* ERET B9.3.3 */
    ROW(0x01900080, 0x01000000, K_PLAIN),       /* MRS, MSR, CLZ, QADD, BKPT, HVC, SMC */
    ROW(0x01900090, 0x01000080, K_PLAIN),       /* halfword multiply (A5.2.7) */
    /* Multiply (A5.2.5), synchronization primitives (A5.2.10), extra
     * load/store (A5.2.8/9): op2 = 1xx1; no defined write of the PC. */
    ROW(0x00000090, 0x00000090, K_PLAIN),
    /* Data processing (register) (A5.2.1) and (register-shifted
     * register) (A5.2.2): TST, TEQ, CMP, CMN (op = 10xx1) write no
     * register; the register-shifted forms make d == 15 UNPREDICTABLE. */
    ROW(0x01900000, 0x01100000, K_PLAIN),
    ROW(0x00000090, 0x00000010, K_PLAIN),
    ROW(0x0000F000, 0x0000F000, K_A32_DP_PC),   /* Rd = PC: ALUWritePC (MOV too) */
    END,
};

/* op1 = 001: data processing (immediate), MOVW/MOVT, MSR (immediate)
 * and hints (A5.2, op = 1). */
static const struct cls_row cls_a32_001[] = {
    /* MSR (immediate) and hints (A5.2.11: op1 = 10x10): WFE, WFI
     * (A8.8.424/425). */
    ROW(0x0FFF00FE, 0x03200002, K_WFI),
    ROW(0x01B00000, 0x01200000, K_PLAIN),
    ROW(0x01B00000, 0x01000000, K_PLAIN),       /* MOVW, MOVT: d == 15 UNPREDICTABLE */
    ROW(0x01900000, 0x01100000, K_PLAIN),       /* TST, TEQ, CMP, CMN (A5.2.3) */
    ROW(0x0000F000, 0x0000F000, K_A32_DP_PC),   /* Rd = PC (ADR, MOV too) */
    END,
};

/* op1 = 010: load/store word and unsigned byte, immediate (A5.3, A = 0). */
static const struct cls_row cls_a32_010[] = {
    ROW(0x01700000, 0x00300000, K_PLAIN),       /* LDRT: t == 15 UNPREDICTABLE */
    /* LDR (immediate) A8.8.63 and (literal) A8.8.64, Rt = PC. */
    ROW(0x0050F000, 0x0010F000, K_PC_WRITE),
    END,
};

/* op1 = 011: load/store word and unsigned byte, register (A5.3, A = 1,
 * B = 0), media (A5.4, B = 1). */
static const struct cls_row cls_a32_011[] = {
    ROW(0x0FF000F0, 0x07F000F0, K_UNDEF),       /* UDF A8.8.247: permanently UNDEFINED */
    ROW(0x00000010, 0x00000010, K_PLAIN),       /* media */
    ROW(0x01700000, 0x00300000, K_PLAIN),       /* LDRT */
    ROW(0x0050F000, 0x0010F000, K_PC_WRITE),    /* LDR (register) A8.8.66, Rt = PC */
    END,
};

/* op1 = 100: load/store multiple (A5.5). */
static const struct cls_row cls_a32_100[] = {
    ROW(0x00108000, 0x00108000, K_A32_LDM_PC),  /* LDM* with PC (A8.8.58-61, B9.3.5) */
    END,
};

/* op1 = 101: B, BL (A5.5). */
static const struct cls_row cls_a32_101[] = {
    ROW(0x00000000, 0x00000000, K_A32_B),
};

/* op1 = 110: coprocessor loads/stores, 64-bit transfers (A5.6). */
static const struct cls_row cls_a32_110[] = {
    END,
};

/* op1 = 111: SVC, coprocessor data and register transfers (A5.6). */
static const struct cls_row cls_a32_111[] = {
    ROW(0x0F000000, 0x0F000000, K_SVC),         /* SVC A8.8.228 */
    ROW(0x0F100010, 0x0E000010, K_MCR),         /* MCR A8.8.99 */
    END,
};

static const struct cls_row *const cls_a32[8] = {
    cls_a32_000, cls_a32_001, cls_a32_010, cls_a32_011,
    cls_a32_100, cls_a32_101, cls_a32_110, cls_a32_111,
};

/* ---- A32, cond = 1111: unconditional instructions (A5.7) ---- */

/* op1 = 0xxxxxxx: memory hints, Advanced SIMD, miscellaneous (A5.7.1):
 * DSB, DMB, ISB (A8.8.44/43/54). */
static const struct cls_row cls_a32_u_0xx[] = {
    ROW(0xFFF000F0, 0xF5700040, K_BARRIER),     /* DSB */
    ROW(0xFFF000F0, 0xF5700050, K_BARRIER),     /* DMB */
    ROW(0xFFF000F0, 0xF5700060, K_ISB),         /* ISB */
    END,
};

/* op1 = 100xxxxx: SRS, RFE (B9.3.13/B9.3.16): RFE is 100xx0x1. */
static const struct cls_row cls_a32_u_100[] = {
    ROW(0xFE500000, 0xF8100000, K_EXC_RETURN),
    END,
};

static const struct cls_row cls_a32_u_101[] = {
    ROW(0x00000000, 0x00000000, K_A32_BLX_IMM), /* BLX (imm) A8.8.25 */
};

/* op1 = 11xxxxxx: coprocessor (LDC2, STC2, MCR2, ...), and 1111xxxx
 * UNDEFINED. */
static const struct cls_row cls_a32_u_11x[] = {
    ROW(0x0F000000, 0x0F000000, K_UNDEF),
    END,
};

static const struct cls_row *const cls_a32_uncond[8] = {
    cls_a32_u_0xx, cls_a32_u_0xx, cls_a32_u_0xx, cls_a32_u_0xx,
    cls_a32_u_100, cls_a32_u_101, cls_a32_u_11x, cls_a32_u_11x,
};

/* ---- T16 (A6.2), by hw[15:12] ---- */

static const struct cls_row cls_t16_plain[] = {
    END,
};

/* 0100: data processing, special data and branch and exchange (A6.2.3). */
static const struct cls_row cls_t16_0100[] = {
    ROW(0xFF80, 0x4700, K_BX),                  /* BX A8.8.27 */
    ROW(0xFF80, 0x4780, K_BLX_REG),             /* BLX (register) A8.8.26 */
    ROW(0xFF87, 0x4687, K_PC_WRITE),            /* MOV PC, Rm A8.8.103 T1 */
    ROW(0xFF87, 0x4487, K_PC_WRITE),            /* ADD PC, Rm A8.8.6 T2 */
    END,
};

/* 1011: miscellaneous 16-bit instructions (A6.2.5). */
static const struct cls_row cls_t16_1011[] = {
    ROW(0xFF00, 0xBD00, K_PC_WRITE),            /* POP with PC A8.8.131 */
    ROW(0xF500, 0xB100, K_CBZ),                 /* CBZ, CBNZ A8.8.29 */
    ROW(0xFFEF, 0xBF20, K_WFI),                 /* WFE, WFI A8.8.424/425 */
    ROW(0xFF0F, 0xBF00, K_PLAIN),               /* other hints */
    ROW(0xFF00, 0xBF00, K_IT),                  /* IT A8.8.54 */
    END,
};

/* 1101: conditional branch, UDF, SVC (A6.2.6). */
static const struct cls_row cls_t16_1101[] = {
    ROW(0xFF00, 0xDE00, K_UNDEF),               /* UDF A8.8.247 */
    ROW(0xFF00, 0xDF00, K_SVC),                 /* SVC A8.8.228 */
    ROW(0x0000, 0x0000, K_T16_BCOND),           /* B<c> A8.8.18 T1 */
};

/* 1110: B T2 (11100; 11101 is 32-bit). */
static const struct cls_row cls_t16_1110[] = {
    ROW(0x0000, 0x0000, K_T16_B),
};

static const struct cls_row *const cls_t16[16] = {
    cls_t16_plain, cls_t16_plain, cls_t16_plain, cls_t16_plain,
    cls_t16_0100, cls_t16_plain, cls_t16_plain, cls_t16_plain,
    cls_t16_plain, cls_t16_plain, cls_t16_plain, cls_t16_1011,
    cls_t16_plain, cls_t16_1101, cls_t16_1110, cls_t16_plain,
};

/* ---- T32 (A6.3), by hw1[12:9] ---- */

/* hw1 1110 100x: load/store multiple (A6.3.5), load/store dual,
 * exclusive, table branch (A6.3.6). */
static const struct cls_row cls_t32_e8[] = {
    /* RFE T1 (DB) / T2 (IA) B9.3.13. */
    ROW(0xFFD00000, 0xE8100000, K_EXC_RETURN),
    ROW(0xFFD00000, 0xE9900000, K_EXC_RETURN),
    /* LDM/LDMIA/POP.W T2, LDMDB T1 with PC (A8.8.57/59, A8.8.131). */
    ROW(0xFFD08000, 0xE8908000, K_PC_WRITE),
    ROW(0xFFD08000, 0xE9108000, K_PC_WRITE),
    /* TBB, TBH A8.8.238: hw2 should-be bits, 000 H Rm. */
    ROW(0xFFF000E0, 0xE8D00000, K_TB),
    END,
};

/* hw1 1110 11xx: coprocessor (A6.3.18). */
static const struct cls_row cls_t32_ec[] = {
    ROW(0xFF100010, 0xEE000010, K_MCR),         /* MCR T1 A8.8.99 */
    END,
};

/* hw1 11110: data processing (immediate) when hw2[15] = 0 (A6.3.1/3),
 * else branches and miscellaneous control (A6.3.4): op = hw1[10:4],
 * op1 = hw2[14:12]. */
static const struct cls_row cls_t32_f0[] = {
    ROW(0x00008000, 0x00000000, K_PLAIN),
    ROW(0x0000D000, 0x0000D000, K_T32_BL),      /* op1 1x1: BL A8.8.25 T1 */
    ROW(0x0000D001, 0x0000C001, K_UNDEF),       /* BLX (imm) with H = 1 */
    ROW(0x0000D000, 0x0000C000, K_T32_BLX_IMM), /* op1 1x0: BLX (imm) T2 */
    ROW(0x0000D000, 0x00009000, K_T32_B),       /* op1 0x1: B T4 */
    /* op1 0x0, op x111xxx: miscellaneous control. */
    ROW(0xFFF0D7FE, 0xF3A08002, K_WFI),         /* WFE, WFI T2 A8.8.424/425 */
    ROW(0xFFF0D0F0, 0xF3B08040, K_BARRIER),     /* DSB A8.8.44 */
    ROW(0xFFF0D0F0, 0xF3B08050, K_BARRIER),     /* DMB A8.8.43 */
    ROW(0xFFF0D0F0, 0xF3B08060, K_ISB),         /* ISB A8.8.54 */
    ROW(0xFFF0D000, 0xF3C08000, K_BXJ),         /* BXJ A8.8.28 */
    ROW(0xFFF0D000, 0xF3D08000, K_EXC_RETURN),  /* SUBS PC, LR, #imm8 B9.3.19 (ERET) */
    ROW(0xFFF0F000, 0xF7F0A000, K_UNDEF),       /* UDF T2 (op1 010, op 1111111) */
    ROW(0x0380D000, 0x03808000, K_PLAIN),       /* the rest of op x111xxx */
    ROW(0x0000D000, 0x00008000, K_T32_BCOND),   /* op1 0x0: B<c> T3 */
    END,
};

/* hw1 1111 100x: loads and stores (A6.3.7-10). */
static const struct cls_row cls_t32_f8[] = {
    /* Load word (A6.3.7): hw1 1111 100 op1:2 101 Rn; Rt = PC. */
    ROW(0xFF7FF000, 0xF85FF000, K_PC_WRITE),    /* LDR (literal) T2 A8.8.64 */
    ROW(0xFFF0F000, 0xF8D0F000, K_PC_WRITE),    /* LDR (immediate) T3 A8.8.62 */
    ROW(0xFFF0FF00, 0xF850FE00, K_PLAIN),       /* LDRT: t == 15 UNPREDICTABLE */
    ROW(0xFFF0FD00, 0xF850F800, K_UNDEF),       /* P = W = 0: UNDEFINED */
    ROW(0xFFF0F800, 0xF850F800, K_PC_WRITE),    /* LDR (immediate) T4, POP T3 */
    ROW(0xFFF0FFC0, 0xF850F000, K_PC_WRITE),    /* LDR (register) T2 A8.8.65 */
    END,
};

static const struct cls_row *const cls_t32[16] = {
    /* hw1[12:9] 00xx cannot occur (hw1[15:11] = 11101, 11110, 11111). */
    cls_t16_plain, cls_t16_plain, cls_t16_plain, cls_t16_plain,
    cls_t32_e8, cls_t16_plain, cls_t32_ec, cls_t32_ec,           /* 11101 */
    cls_t32_f0, cls_t32_f0, cls_t32_f0, cls_t32_f0,              /* 11110 */
    cls_t32_f8, cls_t16_plain, cls_t16_plain, cls_t16_plain,     /* 11111 */
};

#undef ROW
#undef END

#endif
