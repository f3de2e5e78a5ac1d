/*
 * Instruction classifier: hand-checked encodings from the ARM ARM (DDI
 * 0406C A8.8, DDI 0403E for ARMv7-M), every executed instruction of the
 * real TC2 kernel as Arm DS-5 listed it (its Branch column is an oracle
 * nobody here wrote), and Capstone 4 corrected by the ARM ARM
 * (classify_ref.c) on every encoding of the classes that matter plus a
 * random sample of the rest.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classify_ref.h"
#include "tb_test.h"
#include "tracebench/classify.h"

struct hand_case {
    const char *what;
    tb_isa isa;
    uint32_t addr;
    uint32_t opcode;     /* A32 word; T32-32 hw1 << 16 | hw2; T32-16 hw */
    unsigned size;
    tb_wp_class wp;
    bool link, exc_return, has_target;
    uint32_t target;
    tb_isa target_isa;
    unsigned cond;
};

static const struct hand_case hand[] = {
    /* A32 direct branches: target = PC + 8 + imm24 * 4 (A8.8.18/25/26). */
    {"A32 B", TB_ISA_ARM, 0x8000, 0xEA000002, 4, TB_WP_DIRECT, false, false, true, 0x8010, TB_ISA_ARM, 14},
    {"A32 BEQ back", TB_ISA_ARM, 0x8000, 0x0AFFFFFE, 4, TB_WP_DIRECT, false, false, true, 0x8000, TB_ISA_ARM, 0},
    {"A32 BL", TB_ISA_ARM, 0x8000, 0xEB000010, 4, TB_WP_DIRECT_LINK, true, false, true, 0x8048, TB_ISA_ARM, 14},
    {"A32 BLX imm H=0", TB_ISA_ARM, 0x8000, 0xFA000002, 4, TB_WP_DIRECT_LINK, true, false, true, 0x8010, TB_ISA_THUMB, 14},
    {"A32 BLX imm H=1", TB_ISA_ARM, 0x8000, 0xFB000002, 4, TB_WP_DIRECT_LINK, true, false, true, 0x8012, TB_ISA_THUMB, 14},
    /* A32 indirect (protocol-notes 3.12 A32 table). */
    {"A32 BX LR", TB_ISA_ARM, 0x8000, 0xE12FFF1E, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 BXNE LR", TB_ISA_ARM, 0x8000, 0x112FFF1E, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_ARM, 1},
    {"A32 BLX r3", TB_ISA_ARM, 0x8000, 0xE12FFF33, 4, TB_WP_INDIRECT_LINK, true, false, false, 0, TB_ISA_ARM, 14},
    {"A32 LDR pc,[pc]", TB_ISA_ARM, 0x8000, 0xE59FF000, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 POP {pc}", TB_ISA_ARM, 0x8000, 0xE49DF004, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 POP {r4,pc}", TB_ISA_ARM, 0x8000, 0xE8BD8010, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 LDMIA r0,{r1,pc}", TB_ISA_ARM, 0x8000, 0xE8908002, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 LDMEQ sp!,{pc}^", TB_ISA_ARM, 0x8000, 0x08FD8000, 4, TB_WP_INDIRECT, false, true, false, 0, TB_ISA_ARM, 0},
    {"A32 MOV pc,lr", TB_ISA_ARM, 0x8000, 0xE1A0F00E, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 MOVS pc,lr", TB_ISA_ARM, 0x8000, 0xE1B0F00E, 4, TB_WP_INDIRECT, false, true, false, 0, TB_ISA_ARM, 14},
    {"A32 ADD pc,pc,r0,LSL#2", TB_ISA_ARM, 0x8000, 0xE08FF100, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 SUBS pc,lr,#4", TB_ISA_ARM, 0x8000, 0xE25EF004, 4, TB_WP_INDIRECT, false, true, false, 0, TB_ISA_ARM, 14},
    {"A32 RFEIA sp!", TB_ISA_ARM, 0x8000, 0xF8BD0A00, 4, TB_WP_INDIRECT, false, true, false, 0, TB_ISA_ARM, 14},
    /* A32 ERET: an exception return, so a waypoint (OpenCSD misses it). */
    {"A32 ERET", TB_ISA_ARM, 0x8004, 0xE160006E, 4, TB_WP_INDIRECT, false, true, false, 0, TB_ISA_ARM, 14},
    {"A32 ISB", TB_ISA_ARM, 0x8000, 0xF57FF06F, 4, TB_WP_ISB, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 CP15ISB", TB_ISA_ARM, 0x8000, 0xEE070F95, 4, TB_WP_ISB, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 DMB", TB_ISA_ARM, 0x8000, 0xF57FF05F, 4, TB_WP_BARRIER, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 DSB", TB_ISA_ARM, 0x8000, 0xF57FF04F, 4, TB_WP_BARRIER, false, false, false, 0, TB_ISA_ARM, 14},
    /* A32 non-waypoints that name PC. */
    {"A32 CMP pc,r0", TB_ISA_ARM, 0x8000, 0xE15F0000, 4, TB_WP_NONE, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 STR pc,[sp]", TB_ISA_ARM, 0x8000, 0xE58DF000, 4, TB_WP_NONE, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 PUSH {r4,pc}", TB_ISA_ARM, 0x8000, 0xE92D8010, 4, TB_WP_NONE, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 ADD r0,pc,#8", TB_ISA_ARM, 0x8000, 0xE28F0008, 4, TB_WP_NONE, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 SVC", TB_ISA_ARM, 0x8000, 0xEF000000, 4, TB_WP_NONE, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 NOP", TB_ISA_ARM, 0x8000, 0xE320F000, 4, TB_WP_NONE, false, false, false, 0, TB_ISA_ARM, 14},
    {"A32 MOVNE r0,#1", TB_ISA_ARM, 0x8000, 0x13A00001, 4, TB_WP_NONE, false, false, false, 0, TB_ISA_ARM, 1},
    /* T32 direct: B T1 PC+4+imm8*2, B T2, CBZ/CBNZ, BL, BLX(imm)
     * Align(PC,4)+imm (A8.8.18/25/29). */
    {"T32 CBZ (TC2)", TB_ISA_THUMB, 0xC0018D88, 0xB1F3, 2, TB_WP_DIRECT, false, false, true, 0xC0018DC8, TB_ISA_THUMB, 14},
    {"T32 BNE (TC2)", TB_ISA_THUMB, 0xC0018DD4, 0xD1D9, 2, TB_WP_DIRECT, false, false, true, 0xC0018D8A, TB_ISA_THUMB, 1},
    {"T32 B (TC2)", TB_ISA_THUMB, 0xC0018DE4, 0xE7D1, 2, TB_WP_DIRECT, false, false, true, 0xC0018D8A, TB_ISA_THUMB, 14},
    {"T32 CBNZ (TC2)", TB_ISA_THUMB, 0xC0018D94, 0xB90A, 2, TB_WP_DIRECT, false, false, true, 0xC0018D9A, TB_ISA_THUMB, 14},
    {"T32 BL (TC2)", TB_ISA_THUMB, 0xC0018DDA, 0xF281F8B9, 4, TB_WP_DIRECT_LINK, true, false, true, 0xC0299F50, TB_ISA_THUMB, 14},
    {"T32 BNE.W", TB_ISA_THUMB, 0x8000, 0xF0408000, 4, TB_WP_DIRECT, false, false, true, 0x8004, TB_ISA_THUMB, 1},
    {"T32 BLX imm, PC%4=2", TB_ISA_THUMB, 0x8002, 0xF000E802, 4, TB_WP_DIRECT_LINK, true, false, true, 0x8008, TB_ISA_ARM, 14},
    {"T32 BLX imm, PC%4=0", TB_ISA_THUMB, 0x8000, 0xF000E802, 4, TB_WP_DIRECT_LINK, true, false, true, 0x8008, TB_ISA_ARM, 14},
    /* T32 indirect. */
    {"T32 BX LR", TB_ISA_THUMB, 0x8000, 0x4770, 2, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 BLX r3", TB_ISA_THUMB, 0x8000, 0x4798, 2, TB_WP_INDIRECT_LINK, true, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 POP {r4,pc}", TB_ISA_THUMB, 0x8000, 0xBD10, 2, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 MOV pc,r3", TB_ISA_THUMB, 0x8000, 0x469F, 2, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 ADD pc,r3", TB_ISA_THUMB, 0x8000, 0x449F, 2, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 TBB", TB_ISA_THUMB, 0x8000, 0xE8DFF003, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 TBH", TB_ISA_THUMB, 0x8000, 0xE8DFF013, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 LDR.W pc,[sp],#4", TB_ISA_THUMB, 0x8000, 0xF85DFB04, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 LDR.W pc,[pc,#4]", TB_ISA_THUMB, 0x8000, 0xF8DFF004, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 POP.W {r4,pc}", TB_ISA_THUMB, 0x8000, 0xE8BD8010, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 ERET", TB_ISA_THUMB, 0x8000, 0xF3DE8F00, 4, TB_WP_INDIRECT, false, true, false, 0, TB_ISA_THUMB, 14},
    {"T32 SUBS pc,lr,#4", TB_ISA_THUMB, 0x8000, 0xF3DE8F04, 4, TB_WP_INDIRECT, false, true, false, 0, TB_ISA_THUMB, 14},
    {"T32 RFEIA sp! (TC2)", TB_ISA_THUMB, 0xC000C8F4, 0xE9BDC000, 4, TB_WP_INDIRECT, false, true, false, 0, TB_ISA_THUMB, 14},
    {"T32 ISB", TB_ISA_THUMB, 0x8000, 0xF3BF8F6F, 4, TB_WP_ISB, false, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 DMB", TB_ISA_THUMB, 0x8000, 0xF3BF8F5F, 4, TB_WP_BARRIER, false, false, false, 0, TB_ISA_THUMB, 14},
    /* T32 non-waypoints. */
    {"T32 PUSH.W {r4,lr}", TB_ISA_THUMB, 0x8000, 0xE92D4010, 4, TB_WP_NONE, false, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 SVC", TB_ISA_THUMB, 0x8000, 0xDF00, 2, TB_WP_NONE, false, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 WFI", TB_ISA_THUMB, 0x8000, 0xBF30, 2, TB_WP_NONE, false, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 MOV r8,r8", TB_ISA_THUMB, 0x8000, 0x46C0, 2, TB_WP_NONE, false, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 ADD r0,pc (reads)", TB_ISA_THUMB, 0x8000, 0x4478, 2, TB_WP_NONE, false, false, false, 0, TB_ISA_THUMB, 14},
    {"T32 B.W (T4), offset 0", TB_ISA_THUMB, 0x8000, 0xF000B800, 4, TB_WP_DIRECT, false, false, true, 0x8004, TB_ISA_THUMB, 14},
    /* ARMv7-M (DDI 0403E A5.2/A5.3): an exception return is a BX, POP,
     * LDR or LDM of an EXC_RETURN value, an ordinary indirect branch
     * (B1.5.8); system register and mode changes are no waypoints. */
    {"v7-M BX LR", TB_ISA_THUMB, 0x0800, 0x4770, 2, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"v7-M POP {r4,pc}", TB_ISA_THUMB, 0x0800, 0xBD10, 2, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"v7-M LDR pc,[sp],#4", TB_ISA_THUMB, 0x0800, 0xF85DFB04, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"v7-M LDR pc,[r0,#-4]", TB_ISA_THUMB, 0x0800, 0xF850FC04, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"v7-M LDR pc,[r0,r1,LSL #2]", TB_ISA_THUMB, 0x0800, 0xF850F021, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"v7-M POP.W {r4-r11,pc}", TB_ISA_THUMB, 0x0800, 0xE8BD8FF0, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"v7-M LDMDB r0,{r1,pc}", TB_ISA_THUMB, 0x0800, 0xE9108002, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"v7-M TBB [pc,r1]", TB_ISA_THUMB, 0x0800, 0xE8DFF001, 4, TB_WP_INDIRECT, false, false, false, 0, TB_ISA_THUMB, 14},
    {"v7-M MSR PRIMASK,r0", TB_ISA_THUMB, 0x0800, 0xF3808810, 4, TB_WP_NONE, false, false, false, 0, TB_ISA_THUMB, 14},
    {"v7-M MRS r0,IPSR", TB_ISA_THUMB, 0x0800, 0xF3EF8005, 4, TB_WP_NONE, false, false, false, 0, TB_ISA_THUMB, 14},
    {"v7-M CPSID i", TB_ISA_THUMB, 0x0800, 0xB672, 2, TB_WP_NONE, false, false, false, 0, TB_ISA_THUMB, 14},
    {"v7-M SDIV r0,r0,r1", TB_ISA_THUMB, 0x0800, 0xFB90F0F1, 4, TB_WP_NONE, false, false, false, 0, TB_ISA_THUMB, 14},
    {"v7-M DSB SY", TB_ISA_THUMB, 0x0800, 0xF3BF8F4F, 4, TB_WP_BARRIER, false, false, false, 0, TB_ISA_THUMB, 14},
    {"v7-M BL back", TB_ISA_THUMB, 0x1000, 0xF7FFFFFE, 4, TB_WP_DIRECT_LINK, true, false, true, 0x1000, TB_ISA_THUMB, 14},
    {"v7-M BEQ.W forward", TB_ISA_THUMB, 0x1000, 0xF0008010, 4, TB_WP_DIRECT, false, false, true, 0x1024, TB_ISA_THUMB, 0},
};

static size_t put_opcode(uint8_t *b, tb_isa isa, uint32_t op, unsigned size)
{
    if (isa == TB_ISA_THUMB && size == 4) {
        b[0] = (uint8_t)(op >> 16);
        b[1] = (uint8_t)(op >> 24);
        b[2] = (uint8_t)op;
        b[3] = (uint8_t)(op >> 8);
        return 4;
    }
    for (unsigned i = 0; i < size; i++)
        b[i] = (uint8_t)(op >> (8 * i));
    return size;
}

Test(classify, hand_checked_encodings)
{
    tb_classifier *c = tb_classifier_new();

    cr_assert_not_null(c);
    /* Twice: the second pass comes from the cache and must agree. */
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
            const struct hand_case *h = &hand[i];
            uint8_t b[4];
            tb_insn in;
            size_t n = put_opcode(b, h->isa, h->opcode, h->size);
            int r = tb_classifier_decode(c, b, n, h->addr, h->isa, &in);

            cr_assert_eq(r, (int)h->size, "%s: size %d", h->what, r);
            cr_assert(!in.undefined, "%s undefined", h->what);
            cr_assert_eq(in.opcode, h->opcode, "%s: opcode %08x", h->what, in.opcode);
            cr_assert_eq(in.wp_class, h->wp, "%s: class %s", h->what,
                         tb_wp_class_name((tb_wp_class)in.wp_class));
            cr_assert_eq(in.link, h->link, "%s: link", h->what);
            cr_assert_eq(in.exc_return, h->exc_return, "%s: exc_return", h->what);
            cr_assert_eq(in.has_target, h->has_target, "%s: has_target", h->what);
            if (h->has_target) {
                cr_assert_eq(in.target, h->target, "%s: target %08x", h->what, in.target);
                cr_assert_eq(in.target_isa, h->target_isa, "%s: target isa", h->what);
            }
            cr_assert_eq(in.cond, h->cond, "%s: cond %u", h->what, in.cond);
            cr_assert_eq(in.writes_pc, h->wp >= TB_WP_DIRECT && h->wp <= TB_WP_INDIRECT_LINK,
                         "%s: writes_pc", h->what);
        }
    }
    tb_classifier_free(c);
}

Test(classify, flags_it_svc_wfi)
{
    tb_classifier *c = tb_classifier_new();
    uint8_t it[2] = {0x08, 0xBF}; /* IT EQ: firstcond 0000, mask 1000 */
    uint8_t ite[2] = {0x4C, 0xBF}; /* ITE MI: firstcond 0100, mask 1100 */
    uint8_t svc[4] = {0x00, 0x00, 0x00, 0xEF};
    uint8_t wfe[2] = {0x20, 0xBF};
    tb_insn in;

    cr_assert_eq(tb_classifier_decode(c, it, 2, 0x100, TB_ISA_THUMB, &in), 2);
    cr_assert(in.is_it);
    cr_assert_eq(in.it_cond, 0);
    cr_assert_eq(in.it_mask, 8);
    cr_assert_eq(tb_classifier_decode(c, ite, 2, 0x100, TB_ISA_THUMB, &in), 2);
    cr_assert(in.is_it);
    cr_assert_eq(in.it_cond, 4);
    cr_assert_eq(in.it_mask, 0xC);
    cr_assert_eq(tb_classifier_decode(c, svc, 4, 0x100, TB_ISA_ARM, &in), 4);
    cr_assert(in.is_svc);
    cr_assert_eq(in.wp_class, TB_WP_NONE);
    cr_assert_eq(tb_classifier_decode(c, wfe, 2, 0x100, TB_ISA_THUMB, &in), 2);
    cr_assert(in.is_wfi);
    tb_classifier_free(c);
}

Test(classify, errors_and_undefined)
{
    tb_classifier *c = tb_classifier_new();
    uint8_t b[4] = {0x00, 0xF0, 0x00, 0x00};
    uint8_t udf[4] = {0xF0, 0x00, 0xF0, 0xE7}; /* A32 UDF #0 (0xE7F000F0) */
    uint8_t junk[4] = {0xFF, 0xFF, 0xFF, 0xFF};
    tb_insn in;

    cr_assert_eq(tb_classifier_decode(c, b, 3, 0, TB_ISA_ARM, &in), TB_ERR_TRUNCATED);
    cr_assert_eq(tb_classifier_decode(c, b, 1, 0, TB_ISA_THUMB, &in), TB_ERR_TRUNCATED);
    /* 0xF000 starts a 32-bit Thumb instruction: two bytes are not enough. */
    cr_assert_eq(tb_classifier_decode(c, b, 2, 0, TB_ISA_THUMB, &in), TB_ERR_TRUNCATED);
    cr_assert_eq(tb_classifier_decode(c, b, 4, 0, TB_ISA_THUMBEE, &in), TB_ERR_UNSUPPORTED);
    cr_assert_eq(tb_classifier_decode(c, b, 4, 0, TB_ISA_JAZELLE, &in), TB_ERR_UNSUPPORTED);
    cr_assert_eq(tb_classifier_decode(NULL, b, 4, 0, TB_ISA_ARM, &in), TB_ERR_INVAL);
    cr_assert_eq(tb_classifier_decode(c, udf, 4, 0, TB_ISA_ARM, &in), 4);
    cr_assert_eq(in.wp_class, TB_WP_NONE);
    cr_assert(in.undefined); /* A8.8.247: permanently UNDEFINED */
    cr_assert_eq(tb_classifier_decode(c, junk, 4, 0, TB_ISA_ARM, &in), 4);
    cr_assert(in.undefined);
    cr_assert_eq(in.wp_class, TB_WP_NONE);
    tb_classifier_free(c);
}

Test(classify, cache_follows_changed_bytes)
{
    tb_classifier *c = tb_classifier_new();
    uint8_t bx[2] = {0x70, 0x47}, nop[2] = {0xC0, 0x46};
    tb_insn in;

    cr_assert_eq(tb_classifier_decode(c, bx, 2, 0x2000, TB_ISA_THUMB, &in), 2);
    cr_assert_eq(in.wp_class, TB_WP_INDIRECT);
    cr_assert_eq(tb_classifier_decode(c, nop, 2, 0x2000, TB_ISA_THUMB, &in), 2);
    cr_assert_eq(in.wp_class, TB_WP_NONE);
    tb_classifier_free(c);
}

Test(classify, condition_codes)
{
    /* ARM ARM A8.3 table: N Z C V in cpsr[31:28]. */
    const uint32_t Z = 1u << 30, C = 1u << 29, N = 1u << 31, V = 1u << 28;

    cr_assert(tb_cond_passed(0, Z));
    cr_assert(!tb_cond_passed(0, 0));
    cr_assert(tb_cond_passed(1, 0));
    cr_assert(tb_cond_passed(2, C));
    cr_assert(tb_cond_passed(3, 0));
    cr_assert(tb_cond_passed(4, N));
    cr_assert(tb_cond_passed(5, 0));
    cr_assert(tb_cond_passed(6, V));
    cr_assert(tb_cond_passed(7, 0));
    cr_assert(tb_cond_passed(8, C));
    cr_assert(!tb_cond_passed(8, C | Z));
    cr_assert(tb_cond_passed(9, Z));
    cr_assert(tb_cond_passed(10, N | V));
    cr_assert(!tb_cond_passed(10, N));
    cr_assert(tb_cond_passed(11, N));
    cr_assert(tb_cond_passed(12, 0));
    cr_assert(!tb_cond_passed(12, Z));
    cr_assert(tb_cond_passed(13, Z));
    cr_assert(tb_cond_passed(14, 0));
    cr_assert(tb_cond_passed(15, 0));
}

/* ---- DS-5 oracle ---- */

static uint32_t hexval(const char *s)
{
    return (uint32_t)strtoul(s, NULL, 16);
}

static void check_ds5(const char *file, unsigned *branches, unsigned *others)
{
    const char *ref = tb_test_reference_dir("classifier vs DS-5");
    char path[1200];
    uint8_t *img;
    size_t img_len;
    FILE *f;
    char line[1024];
    tb_classifier *c;
    const uint32_t base = 0xC0008000;

    if (!ref)
        return;
    snprintf(path, sizeof path, "%s/opencsd-snapshots/TC2/kernel_dump.bin", ref);
    img = tb_test_read_file(path, &img_len);
    cr_assert_not_null(img, "%s", path);
    snprintf(path, sizeof path, "%s/opencsd-snapshots/TC2/ds5-dumps/%s", ref, file);
    f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    c = tb_classifier_new();
    cr_assert_not_null(c);

    while (fgets(line, sizeof line, f)) {
        char *col[9] = {0};
        int n = 0;
        char *p = line;

        line[strcspn(line, "\r\n")] = 0;
        while (n < 9) {
            col[n++] = p;
            p = strchr(p, '\t');
            if (!p)
                break;
            *p++ = 0;
        }
        if (n < 7 || strcmp(col[0], "Instruction") != 0 ||
            strncmp(col[3], "0x", 2) != 0 || col[3][2] == '?')
            continue;
        uint32_t addr = hexval(strchr(col[2], ':') + 1);
        size_t digits = strlen(col[3]) - 2;
        uint32_t op = hexval(col[3]);
        bool branch = strcmp(col[6], "true") == 0;
        cr_assert(addr >= base && addr - base + 4 <= img_len, "%s: %08x outside image", file, addr);
        const uint8_t *b = img + (addr - base);
        uint32_t word = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
                        (uint32_t)b[3] << 24;
        tb_isa isa;

        /* DS-5 writes T32-32 with the first halfword first; an A32 word
         * reads back equal from the image. */
        if (digits == 4)
            isa = TB_ISA_THUMB;
        else if (word == op)
            isa = TB_ISA_ARM;
        else
            isa = TB_ISA_THUMB;
        tb_insn in;
        int r = tb_classifier_decode(c, b, 4, addr, isa, &in);
        cr_assert_eq(r, (int)digits / 2, "%s %08x: size %d", file, addr, r);
        cr_assert_eq(in.opcode, op, "%s %08x: opcode %08x vs DS-5 %08x", file, addr, in.opcode, op);
        cr_assert(!in.undefined, "%s %08x: undefined %s", file, addr, col[5]);
        bool is_branch = in.wp_class >= TB_WP_DIRECT && in.wp_class <= TB_WP_INDIRECT_LINK;
        cr_assert_eq(is_branch, branch, "%s %08x %s: class %s vs DS-5 Branch=%s", file,
                     addr, col[5], tb_wp_class_name((tb_wp_class)in.wp_class), col[6]);
        if (in.wp_class == TB_WP_ISB)
            cr_assert(strncmp(col[5], "ISB", 3) == 0 || strncmp(col[5], "MCR", 3) == 0,
                      "%s %08x: ISB class for %s", file, addr, col[5]);
        if (in.wp_class == TB_WP_BARRIER)
            cr_assert(strncmp(col[5], "DMB", 3) == 0 || strncmp(col[5], "DSB", 3) == 0 ||
                      strncmp(col[5], "MCR", 3) == 0,
                      "%s %08x: barrier class for %s", file, addr, col[5]);
        /* DS-5 prints a direct branch's target after "; 0x". */
        const char *semi = strstr(col[5], "; 0x");
        if (in.has_target) {
            cr_assert_not_null(semi, "%s %08x: %s has no DS-5 target", file, addr, col[5]);
            cr_assert_eq(in.target, hexval(semi + 2), "%s %08x %s: target %08x", file, addr,
                         col[5], in.target);
        }
        if (branch)
            (*branches)++;
        else
            (*others)++;
    }
    fclose(f);
    tb_classifier_free(c);
    free(img);
}

Test(classify, ds5_tc2_branch_column)
{
    static const struct { const char *file; unsigned branches, others; } want[] = {
        /* Rows with an opcode in each dump (0x? rows have no bytes):
         * Branch=true rows, and the rest. */
        {"etmv3_0x10.txt", 1068, 6137},
        {"etmv3_0x11.txt", 1144, 6327},
        {"etmv3_0x12.txt", 293, 1654},
        {"ptmv1_0x13.txt", 1522, 8026},
    };
    unsigned total = 0;

    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        unsigned b = 0, o = 0;

        check_ds5(want[i].file, &b, &o);
        if (!tb_test_reference_dir("classifier vs DS-5"))
            return;
        cr_assert_eq(b, want[i].branches, "%s: %u branch rows", want[i].file, b);
        cr_assert_eq(o, want[i].others, "%s: %u other rows", want[i].file, o);
        total += b + o;
    }
    /* 7205 + 7471 + 1947 + 9548: every instruction DS-5 could read. */
    cr_assert_eq(total, 26171u);
}

/* ---- against the reference: Capstone 4, corrected by the ARM ARM ----
 * (classify_ref.c).  Every encoding of the classes that matter, as
 * sweeps: the bits that can change an instruction's class (opcode
 * fields, register fields that can be PC, S and L bits) run through all
 * their values, the rest (immediates, other registers, should-be bits)
 * take random values, `samples` times each; then a random sample of the
 * whole space.  `make classify-exhaustive` checks every encoding. */

struct sweep {
    const char *what;
    tb_isa isa;
    uint32_t fixed_mask, fixed_value; /* opcode as tb_insn holds it */
    uint32_t enum_mask;               /* every value of these bits */
    unsigned samples;                 /* random draws of the rest each */
};

static const struct sweep sweeps[] = {
    /* A32 (A5.1), cond random unless fixed. */
    {"A32 Rd/Rt = PC, every op1/op2 (A5.2-A5.6)", TB_ISA_ARM, 0x0000F000, 0x0000F000, 0x0FFF00F0, 2},
    {"A32 Rn = PC (literal loads, ADR)", TB_ISA_ARM, 0x000F0000, 0x000F0000, 0x0FF0F0F0, 1},
    {"A32 miscellaneous: BX, BXJ, BLX, ERET (A5.2.12)", TB_ISA_ARM, 0x0F900000, 0x01000000, 0x006000FF, 64},
    {"A32 load/store multiple (A5.5)", TB_ISA_ARM, 0x0E000000, 0x08000000, 0x01FF8000, 16},
    {"A32 B, BL, every cond", TB_ISA_ARM, 0x0E000000, 0x0A000000, 0xF1000000, 256},
    {"A32 MCR, MRC (CP15 barriers)", TB_ISA_ARM, 0x0F000010, 0x0E000010, 0x00FF0FEF, 1},
    {"A32 MSR (immediate) and hints (A5.2.11)", TB_ISA_ARM, 0x0FB00000, 0x03200000, 0x004F00FF, 8},
    {"A32 SVC, every cond", TB_ISA_ARM, 0x0F000000, 0x0F000000, 0xF0000000, 64},
    {"A32 unconditional (A5.7)", TB_ISA_ARM, 0xF0000000, 0xF0000000, 0x0FF000F0, 16},
    {"A32 DSB, DMB, ISB, CLREX", TB_ISA_ARM, 0xFFF00000, 0xF5700000, 0x000000FF, 64},
    {"A32 RFE, SRS, BLX (imm)", TB_ISA_ARM, 0xFC000000, 0xF8000000, 0x03FF0000, 64},
    /* T32 (A6.3): hw1 << 16 | hw2. */
    {"T32 branches and miscellaneous control (A6.3.4)", TB_ISA_THUMB, 0xF8008000, 0xF0008000, 0x07FF7001, 8},
    {"T32 miscellaneous control, every op", TB_ISA_THUMB, 0xFF80D000, 0xF3808000, 0x007F0FF0, 4},
    {"T32 loads and stores, every Rt and op2 (A6.3.7-10)", TB_ISA_THUMB, 0xFE000000, 0xF8000000, 0x01FFFFC0, 1},
    {"T32 LDM, STM, RFE, SRS, LDRD, TBB (A6.3.5/6)", TB_ISA_THUMB, 0xFE000000, 0xE8000000, 0x01FFE0F0, 4},
    {"T32 data processing (shifted register), Rd = PC", TB_ISA_THUMB, 0xFE000F00, 0xEA000F00, 0x01FF80F0, 2},
    {"T32 data processing (immediate), Rd = PC", TB_ISA_THUMB, 0xF8008F00, 0xF0000F00, 0x07FF7000, 2},
    {"T32 MCR, MRC (CP15 barriers)", TB_ISA_THUMB, 0xEF100000, 0xEE000000, 0x10EF0FFF, 1},
};

typedef struct checker {
    tb_cref *ref;
    uint64_t rng;
    uint64_t checked, rule[TB_CREF_NRULES];
} checker;

static void checker_init(checker *k)
{
    memset(k, 0, sizeof *k);
    k->ref = tb_cref_new();
    cr_assert_not_null(k->ref);
    k->rng = 0x9E3779B97F4A7C15ull;
}

static uint32_t checker_rand(checker *k)
{
    return (uint32_t)(tb_test_rand(&k->rng) >> 16);
}

/* op at an address drawn from it (half the Thumb ones 2 mod 4, where
 * BLX's Align(PC, 4) matters; some near the top, where targets wrap). */
static void check_op(checker *k, tb_isa isa, uint32_t op)
{
    uint8_t b[4];
    tb_insn in;
    char msg[256];
    int rule, r;
    uint32_t h = op * 2654435761u, addr = 0x8000u + (h & 0x0FFFFFFCu);

    if ((h >> 28) == 0xF)
        addr |= 0xF0000000u;
    if (isa == TB_ISA_THUMB && (h & 0x10000u))
        addr += 2;
    tb_cref_bytes(op, isa, b);
    r = tb_classify_insn(b, 4, addr, isa, &in);
    cr_assert_eq(r, isa == TB_ISA_ARM || op > 0xFFFF ? 4 : 2, "%08x: size %d", op, r);
    r = tb_cref_check(k->ref, op, isa, addr, &in, &rule, msg, sizeof msg);
    cr_assert_eq(r, 0, "at 0x%08x: %s", addr, msg);
    k->checked++;
    k->rule[rule]++;
}

static void checker_fini(checker *k, const char *what)
{
    for (int i = 0; i < TB_CREF_NRULES; i++)
        if (k->rule[i])
            cr_log_info("%s: %llu x %s", what, (unsigned long long)k->rule[i],
                        tb_cref_rule_text(i));
    tb_cref_free(k->ref);
}

static void run_sweep(checker *k, const struct sweep *s)
{
    const uint32_t rest = ~(s->fixed_mask | s->enum_mask);
    uint32_t e = 0;

    cr_assert_eq(s->fixed_mask & s->enum_mask, 0u, "%s", s->what);
    do {
        for (unsigned i = 0; i < s->samples; i++) {
            uint32_t op = s->fixed_value | e | (checker_rand(k) & rest);

            if (s->isa == TB_ISA_THUMB)
                cr_assert(tb_thumb_size((uint16_t)(op >> 16)) == 4, "%s: %08x", s->what, op);
            check_op(k, s->isa, op);
        }
        e = (e - s->enum_mask) & s->enum_mask; /* next subset of enum_mask */
    } while (e);
}

Test(classify, reference_every_t16)
{
    checker k;

    checker_init(&k);
    for (uint32_t hw = 0; hw <= 0xFFFF; hw++)
        if (tb_thumb_size((uint16_t)hw) == 2)
            check_op(&k, TB_ISA_THUMB, hw);
    cr_assert_eq(k.checked, 59392u);
    checker_fini(&k, "T16");
}

Test(classify, reference_sweeps_a32)
{
    checker k;

    checker_init(&k);
    for (size_t i = 0; i < sizeof sweeps / sizeof sweeps[0]; i++)
        if (sweeps[i].isa == TB_ISA_ARM)
            run_sweep(&k, &sweeps[i]);
    checker_fini(&k, "A32 sweeps");
}

Test(classify, reference_sweeps_t32)
{
    checker k;

    checker_init(&k);
    for (size_t i = 0; i < sizeof sweeps / sizeof sweeps[0]; i++)
        if (sweeps[i].isa == TB_ISA_THUMB)
            run_sweep(&k, &sweeps[i]);
    checker_fini(&k, "T32 sweeps");
}

Test(classify, reference_random_sample)
{
    checker k;

    checker_init(&k);
    for (int i = 0; i < 2000000; i++)
        check_op(&k, TB_ISA_ARM, checker_rand(&k));
    for (int i = 0; i < 1000000; i++) {
        /* hw1 with a 32-bit prefix: 11101, 11110 or 11111. */
        const uint32_t hw1 = 0xE800u + checker_rand(&k) % 0x1800u;

        check_op(&k, TB_ISA_THUMB, hw1 << 16 | (checker_rand(&k) & 0xFFFF));
    }
    checker_fini(&k, "random");
}
