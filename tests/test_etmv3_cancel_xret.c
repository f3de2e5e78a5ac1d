/*
 * ETMv3: a Cancel after an exception exit packet (issue 28, found by the
 * mutation experiment: irq_fiq_storm-etmv3-ca mutant 0, where OpenCSD was
 * right and we were not).
 *
 * IHI0014Q 6.7.1: a branch address packet whose exception information
 * has Cancel set says the most recently traced instruction did not
 * complete.  The exception exit packet (0x76) comes between that
 * instruction's atom and the branch packet (protocol-notes 2.8: atoms,
 * 0x76, then the branch).  We emitted the range at the 0x76 (every other
 * element goes out after the held range) and could no longer retract
 * its last instruction: it stayed in the decode and the exception element
 * only carried an error.  Now the exception exit is held with the range,
 * and a Cancel retracts the instruction and drops the exit it would have
 * made.
 *
 * Expected from the trace and the image alone: 0x8000 and 0x8004 execute;
 * 0x8008 (SUBS pc, lr, #4, the exception return) is cancelled by the data
 * abort (exception 12) whose vector is 0x10.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tb_test.h"
#include "tracebench/decoder.h"
#include "tracebench/parser.h"

typedef struct out {
    tb_element e[32];
    size_t n;
    tb_decoder *d;
    uint32_t addrs[32];
    size_t na;
    tb_memimage *m;
} out;

static int on_el(void *ctx, const tb_element *el)
{
    out *o = ctx;
    uint32_t a[8];
    int n;

    cr_assert_lt(o->n, 32);
    o->e[o->n++] = *el;
    if (el->kind == TB_ELEM_INSN_RANGE) {
        n = tb_range_addrs(o->m, el, a, 8);
        cr_assert_gt(n, 0);
        for (int i = 0; i < n; i++)
            o->addrs[o->na++] = a[i];
    }
    return 0;
}

static void decode(const uint8_t *tail, size_t n, out *o, bool fused)
{
    static const uint8_t head[] = {0x00, 0x00, 0x00, 0x00, 0x00, 0x80,  /* A-sync */
                                   0x08, 0x01, 0x00, 0x80, 0x00, 0x00}; /* I-sync 0x8000 */
    static const uint8_t img[] = {0x00, 0x00, 0xA0, 0xE1,   /* MOV r0,r0 */
                                  0x00, 0x00, 0xA0, 0xE1,   /* MOV r0,r0 */
                                  0x04, 0xF0, 0x5E, 0xE2};  /* SUBS pc,lr,#4 */
    uint8_t trace[64];
    tb_config cfg;
    tb_parser *p;

    memset(o, 0, sizeof *o);
    o->m = tb_memimage_new();
    cr_assert_eq(tb_memimage_add(o->m, 0x8000, img, sizeof img), 0);
    memcpy(trace, head, sizeof head);
    memcpy(trace + sizeof head, tail, n);
    /* ETMv3.4, plain trace, original branch encoding. */
    cr_assert_eq(tb_config_from_regs(&cfg, 0, 0x4100F240, 0, 0x10), 0);
    o->d = tb_decoder_new(&cfg, o->m);
    p = tb_parser_new(&cfg);
    cr_assert(o->d && p);
    if (fused) {
        cr_assert_geq(tb_decoder_push(o->d, p, trace, sizeof head + n, 0, on_el, o), 0);
        cr_assert_geq(tb_decoder_push_finish(o->d, p, on_el, o), 0);
    } else {
        for (size_t k = 0; k < sizeof head + n; k++) /* byte by byte */
            cr_assert_geq(tb_decoder_push(o->d, p, trace + k, 1, k, on_el, o), 0);
        cr_assert_geq(tb_decoder_push_finish(o->d, p, on_el, o), 0);
    }
    tb_parser_free(p);
    tb_decoder_free(o->d);
    tb_memimage_free(o->m);
}

static size_t count_kind(const out *o, tb_elem_kind k)
{
    size_t n = 0;

    for (size_t i = 0; i < o->n; i++)
        n += o->e[i].kind == k;
    return n;
}

Test(etmv3_cancel_xret, cancel_after_exception_exit_retracts_the_return)
{
    /* E E E | exception exit | branch to 0x10, data abort, Cancel. */
    static const uint8_t t[] = {0x8C, 0x76, 0x89, 0x80, 0x80, 0x80, 0x48, 0x38};

    for (int fused = 0; fused < 2; fused++) {
        out o;
        size_t i;

        decode(t, sizeof t, &o, fused);
        cr_assert_eq(o.na, 2, "%zu instructions: 0x8008 was cancelled", o.na);
        cr_assert_eq(o.addrs[0], 0x8000);
        cr_assert_eq(o.addrs[1], 0x8004);
        cr_assert_eq(count_kind(&o, TB_ELEM_EXC_RETURN), 0,
                     "the cancelled return made no exception exit");
        for (i = 0; i < o.n && o.e[i].kind != TB_ELEM_EXCEPTION; i++)
            ;
        cr_assert_lt(i, o.n, "no exception");
        cr_assert_eq(o.e[i].exc_num, 12);
        cr_assert(o.e[i].cancelled);
        cr_assert_eq(o.e[i].err, 0, "error %d on the exception", o.e[i].err);
        cr_assert_eq(o.e[i].pref_return, 0x8008);
    }
}

Test(etmv3_cancel_xret, control_no_cancel_keeps_return_and_exit)
{
    /* The same without Cancel (exception byte 0x18): all three execute,
     * the exception exit after the return instruction, in order. */
    static const uint8_t t[] = {0x8C, 0x76, 0x89, 0x80, 0x80, 0x80, 0x48, 0x18};
    out o;
    size_t i, r = 0, x = 0;

    decode(t, sizeof t, &o, true);
    cr_assert_eq(o.na, 3);
    cr_assert_eq(o.addrs[2], 0x8008);
    for (i = 0; i < o.n; i++) {
        if (o.e[i].kind == TB_ELEM_INSN_RANGE)
            r = i;
        if (o.e[i].kind == TB_ELEM_EXC_RETURN)
            x = i;
    }
    cr_assert_eq(count_kind(&o, TB_ELEM_EXC_RETURN), 1);
    cr_assert_gt(x, r, "the exception exit comes after the range");
}

Test(etmv3_cancel_xret, cancel_after_exception_exit_inside_a_range)
{
    /* E E on two MOVs (the range still open: no waypoint ends it) |
     * exception exit | branch to 0x10 with Cancel: the Cancel names the
     * newest traced instruction, 0x8004, though the exit came between
     * (fuzz finding of ocsd_etmv3, where OpenCSD was right: the exit
     * flushed an open range, and the Cancel found nothing to retract). */
    static const uint8_t t[] = {0x88, 0x76, 0x89, 0x80, 0x80, 0x80, 0x48, 0x38};

    for (int fused = 0; fused < 2; fused++) {
        out o;
        size_t i;

        decode(t, sizeof t, &o, fused);
        cr_assert_eq(o.na, 1, "%zu instructions: 0x8004 was cancelled", o.na);
        cr_assert_eq(o.addrs[0], 0x8000);
        cr_assert_eq(count_kind(&o, TB_ELEM_EXC_RETURN), 0,
                     "the cancelled instruction made no exception exit");
        for (i = 0; i < o.n && o.e[i].kind != TB_ELEM_EXCEPTION; i++)
            ;
        cr_assert_lt(i, o.n, "no exception");
        cr_assert(o.e[i].cancelled);
        cr_assert_eq(o.e[i].err, 0, "error %d on the exception", o.e[i].err);
        cr_assert_eq(o.e[i].pref_return, 0x8004);
    }
}
