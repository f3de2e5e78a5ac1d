/*
 * The comparator's data transfer checks (roundtrip.h rules, issue 22):
 * truth records and decoded elements written by hand; a match, and each
 * kind of divergence caught (wrong value, address, size, direction,
 * store-failed, a missing, an extra transfer, out-of-order values).
 * (test_decoder_data.c checks the decoder; this file links the round
 * trip, as every test_roundtrip* does.)
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tracebench/roundtrip.h"

static tb_exec_record insn(uint64_t seq, uint32_t addr)
{
    tb_exec_record r;

    memset(&r, 0, sizeof r);
    r.kind = TB_REC_INSN;
    r.seq = seq;
    r.cycle = seq;
    r.u.insn.addr = addr;
    r.u.insn.next_addr = addr + 4;
    r.u.insn.opcode = 0xE5832000;
    r.u.insn.size = 4;
    r.u.insn.isa = TB_ISA_ARM;
    r.u.insn.next_isa = TB_ISA_ARM;
    return r;
}

static tb_exec_record data(uint64_t seq, uint32_t iaddr, unsigned flags, uint32_t addr,
                           uint32_t value, uint8_t size)
{
    tb_exec_record r;

    memset(&r, 0, sizeof r);
    r.kind = TB_REC_DATA;
    r.seq = seq;
    r.cycle = seq;
    r.u.data.insn_addr = iaddr;
    r.u.data.addr = addr;
    r.u.data.value = value;
    r.u.data.size = size;
    r.u.data.flags = (uint8_t)flags;
    return r;
}

static tb_element range(uint32_t start, uint32_t count)
{
    tb_element el;

    memset(&el, 0, sizeof el);
    el.kind = TB_ELEM_INSN_RANGE;
    el.isa = TB_ISA_ARM;
    el.start = start;
    el.end = start + 4 * count;
    el.count = count;
    el.last_addr = start + 4 * (count - 1);
    el.last_size = 4;
    el.last_atom = 'E';
    return el;
}

static tb_element del(uint32_t iaddr, unsigned flags, uint32_t addr, uint32_t value,
                      uint8_t size, uint8_t tag)
{
    tb_element el;

    memset(&el, 0, sizeof el);
    el.kind = TB_ELEM_DATA;
    el.isa = TB_ISA_ARM;
    el.last_addr = iaddr;
    el.last_size = 4;
    el.data_flags = (uint8_t)flags;
    el.data_addr = addr;
    el.data_value = value;
    el.data_size = size;
    el.reason = tag;
    return el;
}

/* The run: STR at 0x8000 (0x20000010 <- 0xAB), LDM at 0x8004 (two
 * words from 0x20000100), ADD at 0x8008, LDRB at 0x800C (0x7F from
 * 0x20000200). */
#define NTRUTH 9
static void truth(tb_compare *c)
{
    const tb_exec_record r[NTRUTH] = {
        insn(0, 0x8000),
        data(1, 0x8000, TB_DATA_STORE, 0x20000010, 0xAB, 4),
        insn(1, 0x8004),
        data(2, 0x8004, 0, 0x20000100, 0x11111111, 4),
        data(2, 0x8004, 0, 0x20000104, 0x22222222, 4),
        insn(2, 0x8008),
        insn(3, 0x800C),
        data(4, 0x800C, 0, 0x20000200, 0x7F, 1),
        {.kind = TB_REC_END, .seq = 4},
    };

    for (int i = 0; i < NTRUTH; i++)
        cr_assert_eq(tb_compare_truth(c, &r[i]), 0, "record %d", i);
}

/* The decode that matches it (address and value trace). */
#define NDEC 8
static void decoded(tb_element *v)
{
    v[0] = range(0x8000, 1);
    v[1] = del(0x8000, TB_DATA_STORE, 0x20000010, 0xAB, 4, 0);
    v[2] = range(0x8004, 1);
    v[3] = del(0x8004, 0, 0x20000100, 0x11111111, 4, 0);
    v[4] = del(0x8004, 0, 0x20000104, 0x22222222, 4, 0);
    v[5] = range(0x8008, 2);
    v[6] = del(0x800C, 0, 0x20000200, 0x7F, 1, 0);
    memset(&v[7], 0, sizeof v[7]);
    v[7].kind = TB_ELEM_END;
}

/* Runs the truth against n elements; the comparator's result. */
static int run(const tb_encoder_opts *o, const tb_element *v, int n, tb_compare_stats *st,
               char *report, size_t cap)
{
    tb_compare *c = tb_compare_new(o, "test");
    int rc = 0;

    cr_assert_not_null(c);
    truth(c);
    for (int i = 0; i < n && rc == 0; i++) {
        uint32_t addrs[4];

        for (uint32_t k = 0; v[i].kind == TB_ELEM_INSN_RANGE && k < v[i].count; k++)
            addrs[k] = v[i].start + 4 * k;
        rc = tb_compare_element(c, &v[i], addrs);
    }
    if (rc == 0)
        rc = tb_compare_finish(c);
    if (st)
        *st = *tb_compare_get_stats(c);
    if (report)
        snprintf(report, cap, "%s", tb_compare_report(c));
    tb_compare_free(c);
    return rc;
}

static tb_encoder_opts opts(uint8_t dt)
{
    tb_encoder_opts o;

    tb_encoder_opts_init(&o, TB_PROTO_ETMV3);
    o.data_trace = dt;
    return o;
}

/* A mismatch whose report names what. */
static void expect_mismatch(const tb_element *v, int n, const char *what)
{
    tb_encoder_opts o = opts(3);
    char rep[4096];

    cr_assert_eq(run(&o, v, n, NULL, rep, sizeof rep), TB_ERR_MISMATCH, "no mismatch (%s)",
                 what);
    cr_assert(strstr(rep, what), "report lacks \"%s\":\n%s", what, rep);
}

Test(roundtrip_data, match)
{
    tb_element v[NDEC];
    tb_encoder_opts o = opts(3);
    tb_compare_stats st;

    decoded(v);
    cr_assert_eq(run(&o, v, NDEC, &st, NULL, 0), 0);
    cr_assert_eq(st.checked, 4);
    cr_assert_eq(st.data, 4);
    cr_assert_eq(st.data_untraced, 0);
}

Test(roundtrip_data, wrong_value)
{
    tb_element v[NDEC];

    decoded(v);
    v[4].data_value = 0x22222223;
    expect_mismatch(v, NDEC, "decoded value 0x22222223, truth #2 load 0x22222222");
}

Test(roundtrip_data, wrong_address)
{
    tb_element v[NDEC];

    decoded(v);
    v[1].data_addr = 0x20000014;
    expect_mismatch(v, NDEC, "decoded data address 0x20000014, truth #1 is 0x20000010");
}

Test(roundtrip_data, wrong_size_direction_insn)
{
    tb_element v[NDEC];

    decoded(v);
    v[6].data_size = 4;
    expect_mismatch(v, NDEC, "decoded a 4-byte load, truth #4 is a 1-byte load");
    decoded(v);
    v[1].data_flags = 0;
    expect_mismatch(v, NDEC, "decoded a 4-byte load, truth #1 is a 4-byte store");
    decoded(v);
    v[3].last_addr = 0x8000;
    expect_mismatch(v, NDEC, "decoded a transfer of 0x00008000, truth #2 is one of 0x00008004");
}

/* The LDM's second word missing: caught at the next instruction. */
Test(roundtrip_data, missing_transfer)
{
    tb_element v[NDEC];

    decoded(v);
    memmove(&v[4], &v[5], 3 * sizeof v[0]);
    expect_mismatch(v, NDEC - 1, "the transfer is missing");
}

/* The last transfer missing: caught at the end. */
Test(roundtrip_data, missing_last_transfer)
{
    tb_element v[NDEC];

    decoded(v);
    v[6] = v[7];
    expect_mismatch(v, NDEC - 1, "data transfer at 0x20000200");
}

/* One transfer too many: the STR's shown twice. */
Test(roundtrip_data, extra_transfer)
{
    tb_element v[NDEC + 1];

    decoded(v);
    memmove(&v[2], &v[1], (NDEC - 1) * sizeof v[0]);
    expect_mismatch(v, NDEC + 1, "where the truth has the next instruction");
}

/* Address trace off: the decode has no addresses and that is right;
 * value trace off: no values, and a different value does not matter. */
Test(roundtrip_data, what_is_traced)
{
    tb_element v[NDEC];
    tb_encoder_opts ov = opts(1), oa = opts(2);
    tb_compare_stats st;

    decoded(v);
    for (int i = 0; i < NDEC; i++)
        if (v[i].kind == TB_ELEM_DATA) {
            v[i].data_flags |= TB_DATA_NO_ADDR;
            v[i].data_addr = 0;
        }
    cr_assert_eq(run(&ov, v, NDEC, &st, NULL, 0), 0);
    cr_assert_eq(st.data, 4);
    /* With addresses traced, an element without one is caught. */
    expect_mismatch(v, NDEC, "the decode has no address for truth #1");

    decoded(v);
    for (int i = 0; i < NDEC; i++)
        if (v[i].kind == TB_ELEM_DATA) {
            v[i].data_flags |= TB_DATA_NO_VALUE;
            v[i].data_value = 0;
        }
    cr_assert_eq(run(&oa, v, NDEC, &st, NULL, 0), 0);
    expect_mismatch(v, NDEC, "the decode has no value for truth #1");
}

/* Data trace off: data records are not compared, and a DATA element is
 * an error. */
Test(roundtrip_data, data_trace_off)
{
    tb_element v[NDEC];
    tb_encoder_opts o = opts(0);
    tb_compare_stats st;
    char rep[4096];

    decoded(v);
    {
        tb_element w[4] = {v[0], v[2], v[5], v[7]};

        cr_assert_eq(run(&o, w, 4, &st, NULL, 0), 0);
        cr_assert_eq(st.data, 0);
        cr_assert_eq(st.checked, 4);
    }
    cr_assert_eq(run(&o, v, NDEC, NULL, rep, sizeof rep), TB_ERR_MISMATCH);
    cr_assert(strstr(rep, "the configuration traces no data"), "%s", rep);
}

/* ViewData (dataview=): the LDM's first word outside gives nothing, its
 * second inside is a transfer; with only the first inside, the second
 * is a Value not traced element (IHI0014Q 7.4.4). */
Test(roundtrip_data, dataview)
{
    tb_element v[NDEC];
    tb_encoder_opts o = opts(3);
    tb_compare_stats st;
    tb_element w[NDEC];

    o.n_dranges = 1;
    o.dranges[0].lo = 0x20000104;
    o.dranges[0].hi = 0x20000108;
    decoded(v);
    w[0] = v[0];
    w[1] = v[2];
    w[2] = v[4];
    w[3] = v[5];
    w[4] = v[7];
    {
        tb_compare *c = tb_compare_new(&o, "dv");
        uint32_t a[2] = {0x8008, 0x800C};

        truth(c);
        for (int i = 0; i < 5; i++) {
            uint32_t s[1] = {w[i].start};

            cr_assert_eq(tb_compare_element(c, &w[i], w[i].count == 2 ? a : s), 0,
                         "element %d: %s", i, tb_compare_report(c));
        }
        cr_assert_eq(tb_compare_finish(c), 0, "%s", tb_compare_report(c));
        st = *tb_compare_get_stats(c);
        cr_assert_eq(st.data, 1);
        cr_assert_eq(st.data_untraced, 3);
        tb_compare_free(c);
    }
    /* First word in view: the second must be a Value not traced. */
    o.dranges[0].lo = 0x20000100;
    o.dranges[0].hi = 0x20000104;
    {
        tb_compare *c = tb_compare_new(&o, "dv2");
        tb_element vnt = v[4];

        vnt.data_flags |= TB_DATA_NO_VALUE;
        vnt.data_value = 0;
        truth(c);
        cr_assert_eq(tb_compare_element(c, &v[0], (uint32_t[]){0x8000}), 0);
        cr_assert_eq(tb_compare_element(c, &v[2], (uint32_t[]){0x8004}), 0);
        cr_assert_eq(tb_compare_element(c, &v[3], NULL), 0, "%s", tb_compare_report(c));
        /* A value where the trace can have none: caught. */
        cr_assert_eq(tb_compare_element(c, &v[4], NULL), TB_ERR_MISMATCH);
        cr_assert(strstr(tb_compare_report(c), "a Value not traced element was due"));
        tb_compare_free(c);
        c = tb_compare_new(&o, "dv3");
        truth(c);
        cr_assert_eq(tb_compare_element(c, &v[0], (uint32_t[]){0x8000}), 0);
        cr_assert_eq(tb_compare_element(c, &v[2], (uint32_t[]){0x8004}), 0);
        cr_assert_eq(tb_compare_element(c, &v[3], NULL), 0);
        cr_assert_eq(tb_compare_element(c, &vnt, NULL), 0, "%s", tb_compare_report(c));
        cr_assert_eq(tb_compare_element(c, &v[5], (uint32_t[]){0x8008, 0x800C}), 0);
        cr_assert_eq(tb_compare_element(c, &v[7], NULL), 0);
        cr_assert_eq(tb_compare_finish(c), 0, "%s", tb_compare_report(c));
        tb_compare_free(c);
    }
}

/* Out of order: the LDRB's placeholder in place, its value after the
 * end; a wrong value, a missing value and an unknown tag caught. */
Test(roundtrip_data, out_of_order)
{
    tb_element v[NDEC + 1];
    tb_compare_stats st;
    tb_encoder_opts o = opts(3);

    decoded(v);
    v[8] = v[7];
    v[7] = del(0x800C, TB_DATA_OOO, 0x20000200, 0x7F, 1, 2);
    v[6].data_flags |= TB_DATA_NO_VALUE;
    v[6].data_value = 0;
    v[6].reason = 2;
    cr_assert_eq(run(&o, v, NDEC + 1, &st, NULL, 0), 0);
    cr_assert_eq(st.data, 4);

    v[7].data_value = 0x7E;
    expect_mismatch(v, NDEC + 1, "decoded value 0x0000007e (out of order, tag 2)");
    v[7].data_value = 0x7F;
    v[7].reason = 1;
    expect_mismatch(v, NDEC + 1, "no placeholder with that tag is outstanding");
    /* The value never came, and nothing lost it. */
    v[7].reason = 2;
    v[7].data_flags |= TB_DATA_NO_VALUE;
    expect_mismatch(v, NDEC + 1, "never came");
    /* Never shown at all. */
    v[7] = v[8];
    expect_mismatch(v, NDEC, "was never shown");
}

/* Suppression (7.4.6): the LDM's transfers go, excused by the
 * suppressed element; the LDRB's, after it, must still be shown. */
Test(roundtrip_data, suppression)
{
    tb_element v[NDEC];
    tb_compare_stats st;
    tb_encoder_opts o = opts(3);

    decoded(v);
    v[3] = del(0x8004, TB_DATA_SUPPRESSED | TB_DATA_NO_ADDR | TB_DATA_NO_VALUE, 0, 0, 0, 0);
    v[4] = v[5];
    v[5] = v[6];
    v[6] = v[7];
    cr_assert_eq(run(&o, v, NDEC - 1, &st, NULL, 0), 0);
    cr_assert_eq(st.data, 2);
    cr_assert_eq(st.data_untraced, 2);
}

/* Store failed: the flag must agree; a failed store's value is not
 * compared (IHI0014Q 7.4.7 "the data value traced is 0" is ambiguous). */
Test(roundtrip_data, store_failed)
{
    tb_encoder_opts o = opts(3);
    tb_compare *c = tb_compare_new(&o, "strex");
    tb_exec_record r[3] = {
        insn(0, 0x8000),
        data(1, 0x8000, TB_DATA_STORE | TB_DATA_STORE_FAILED, 0x20000010, 0x1234, 4),
        {.kind = TB_REC_END, .seq = 1},
    };
    tb_element rg = range(0x8000, 1);
    tb_element d = del(0x8000, TB_DATA_STORE | TB_DATA_STORE_FAILED, 0x20000010, 0, 4, 0);

    for (int i = 0; i < 3; i++)
        cr_assert_eq(tb_compare_truth(c, &r[i]), 0);
    cr_assert_eq(tb_compare_element(c, &rg, (uint32_t[]){0x8000}), 0);
    cr_assert_eq(tb_compare_element(c, &d, NULL), 0, "%s", tb_compare_report(c));
    cr_assert_eq(tb_compare_finish(c), 0);
    tb_compare_free(c);

    c = tb_compare_new(&o, "strex2");
    for (int i = 0; i < 3; i++)
        cr_assert_eq(tb_compare_truth(c, &r[i]), 0);
    d.data_flags &= (uint8_t)~TB_DATA_STORE_FAILED;
    cr_assert_eq(tb_compare_element(c, &rg, (uint32_t[]){0x8000}), 0);
    cr_assert_eq(tb_compare_element(c, &d, NULL), TB_ERR_MISMATCH);
    cr_assert(strstr(tb_compare_report(c), "decoded store-failed clear, truth #1 failed"));
    tb_compare_free(c);
}
