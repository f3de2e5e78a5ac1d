/*
 * The round trip on two threads (tb_rt_case.threads = 2) against one:
 * the same verdict, the same first difference (the report byte for
 * byte), the same statistics, the same truth file, and the hooks called
 * with the same arguments in the same order.  The expectation is the
 * one-thread run of the same case, itself checked against the truth by
 * test_roundtrip; this test only says the pipeline changes nothing.
 *
 * Cases: planted faults (a flipped branch address bit, a dropped atom)
 * that the comparator reports, FIFO overflows (the encoder's resume and
 * lost events cross the queue between records), data trace, a filter,
 * a run long enough to fill the queue many times over (back-pressure),
 * and an error from the decode side (an analysis hook failing), which
 * must come back as the same error.  Runs under ASan+UBSan with the rest
 * (build-asan); TSan by hand: docs/architecture.md.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tb_test.h"
#include "tracebench/roundtrip.h"

/* FNV-1a over everything the hooks are told, in order. */
typedef struct trail {
    uint64_t h;
    uint64_t calls[5];        /* trace, resume, overflow, element, progress */
    uint64_t fail_at;         /* decode_element fails at this call (1-based; 0: never) */
} trail;

static void mix(trail *t, const void *p, size_t n)
{
    const uint8_t *b = p;

    for (size_t i = 0; i < n; i++)
        t->h = (t->h ^ b[i]) * 0x100000001b3ull;
}

static void on_trace(void *ctx, uint64_t cycle, const uint8_t *data, size_t len)
{
    trail *t = ctx;

    t->calls[0]++;
    mix(t, "T", 1);
    mix(t, &cycle, sizeof cycle);
    mix(t, data, len);
}

static void on_resume(void *ctx, uint64_t seq)
{
    trail *t = ctx;

    t->calls[1]++;
    mix(t, "R", 1);
    mix(t, &seq, sizeof seq);
}

static void on_overflow(void *ctx, bool have_shown, uint64_t shown_seq)
{
    trail *t = ctx;

    t->calls[2]++;
    mix(t, "O", 1);
    mix(t, &have_shown, sizeof have_shown);
    mix(t, &shown_seq, sizeof shown_seq);
}

static int decode_element(void *ctx, const tb_element *el)
{
    trail *t = ctx;
    char line[256];

    t->calls[3]++;
    mix(t, "E", 1);
    tb_elem_format(el, line, sizeof line);
    mix(t, line, strlen(line));
    return t->fail_at && t->calls[3] == t->fail_at ? TB_ERR_STOPPED : 0;
}

static void on_progress(void *ctx, const tb_rt_progress *p)
{
    trail *t = ctx;

    t->calls[4]++;
    mix(t, "P", 1);
    mix(t, p, sizeof *p);
}

typedef struct tcase {
    const char *program;
    tb_protocol protocol;
    const char *options;
    tb_rt_fault fault;
    uint64_t budget;          /* 0: the scenario's */
    uint64_t fail_at;         /* the analysis hook fails at this element */
    tb_rt_verdict verdict;    /* the one-thread run's, as a check on the case */
    int rc;                   /* the one-thread run's return */
} tcase;

typedef struct outcome {
    int rc;
    char err[512];
    tb_rt_result res;
    trail tr;
    char *truth;              /* the truth file's contents */
    size_t truth_len;
} outcome;

/* trace_hook: on_trace is set.  Without it (nothing else that sees the
 * encoder's writes one by one) two threads join the writes of one cycle
 * that no record separates into one message (run.c pipe_bytes). */
static void run_case(const tcase *k, unsigned threads, bool trace_hook, outcome *o)
{
    char elf[1024], ini[1024], truth[1024], err[512] = "";
    tb_rt_case c;

    snprintf(elf, sizeof elf, "%s/vectors/programs/%s.elf", TB_BINARY_DIR, k->program);
    snprintf(ini, sizeof ini, "%s/vectors/programs/%s.ini", TB_SOURCE_DIR, k->program);
    /* Criterion runs the tests as processes side by side. */
    snprintf(truth, sizeof truth, "%s/test_rt_threads_%ld_%s_%u.truth", TB_BINARY_DIR,
             (long)getpid(), k->program, threads);
    memset(o, 0, sizeof *o);
    tb_rt_case_init(&c, k->protocol);
    c.name = k->program;
    c.program = elf;
    c.scenario = ini;
    if (k->budget) {
        c.has_budget = true;
        c.budget = k->budget;
    }
    cr_assert_eq(tb_rt_case_options(&c, k->options, err, sizeof err), 0, "%s: %s",
                 k->options, err);
    c.fault = k->fault;
    c.threads = threads;
    c.truth_file = truth;
    o->tr.h = 0xcbf29ce484222325ull;
    o->tr.fail_at = k->fail_at;
    if (trace_hook) {
        c.on_trace = on_trace;
        c.trace_ctx = &o->tr;
    }
    c.on_resume = on_resume;
    c.resume_ctx = &o->tr;
    c.on_overflow = on_overflow;
    c.overflow_ctx = &o->tr;
    c.decode_element = decode_element;
    c.decode_ctx = &o->tr;
    c.on_progress = on_progress;
    c.progress_ctx = &o->tr;
    o->rc = tb_rt_run(&c, &o->res, o->err, sizeof o->err);
    if (o->rc == 0) {
        cr_assert_eq(tb_snapshot_read_file(truth, (uint8_t **)&o->truth, &o->truth_len, err,
                                           sizeof err), 0, "%s", err);
    }
    remove(truth);
}

static void same_hooks(const tcase *k, bool trace_hook)
{
    outcome *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    const char *what = k->program;

    cr_assert(a && b);
    run_case(k, 1, trace_hook, a);
    run_case(k, 2, trace_hook, b);
    cr_assert_eq(a->rc, k->rc, "%s %s: one thread returned %d (%s), the case expects %d",
                 what, k->options, a->rc, a->err, k->rc);
    cr_assert_eq(b->rc, a->rc, "%s %s: two threads returned %d (%s), one %d (%s)", what,
                 k->options, b->rc, b->err, a->rc, a->err);
    cr_assert_str_eq(b->err, a->err, "%s %s", what, k->options);
    if (a->rc == 0) {
        cr_assert_eq(a->res.verdict, k->verdict, "%s %s: one thread says %s", what,
                     k->options, tb_rt_verdict_name(a->res.verdict));
        cr_assert_eq(b->res.verdict, a->res.verdict, "%s %s: %s with two threads, %s with one",
                     what, k->options, tb_rt_verdict_name(b->res.verdict),
                     tb_rt_verdict_name(a->res.verdict));
        cr_assert_str_eq(b->res.report, a->res.report, "%s %s: the reports differ", what,
                         k->options);
        cr_assert_eq(memcmp(&b->res.cmp, &a->res.cmp, sizeof a->res.cmp), 0,
                     "%s %s: comparator statistics differ (checked %llu / %llu)", what,
                     k->options, (unsigned long long)b->res.cmp.checked,
                     (unsigned long long)a->res.cmp.checked);
        cr_assert_eq(memcmp(&b->res.enc, &a->res.enc, sizeof a->res.enc), 0,
                     "%s %s: encoder statistics differ", what, k->options);
        cr_assert_eq(b->res.sim.insns, a->res.sim.insns, "%s %s", what, k->options);
        cr_assert_eq(b->res.fault_applied, a->res.fault_applied, "%s %s", what, k->options);
        cr_assert_eq(b->res.fault_packets, a->res.fault_packets, "%s %s", what, k->options);
        cr_assert_eq(b->res.resumes, a->res.resumes, "%s %s", what, k->options);
        cr_assert_eq(b->res.lost_tail, a->res.lost_tail, "%s %s", what, k->options);
        cr_assert_eq(b->truth_len, a->truth_len, "%s %s: truth files of %zu and %zu bytes",
                     what, k->options, b->truth_len, a->truth_len);
        cr_assert(a->truth_len > 0, "%s %s: no truth written", what, k->options);
        cr_assert_eq(memcmp(b->truth, a->truth, a->truth_len), 0, "%s %s: truth files differ",
                     what, k->options);
    }
    /* After an error one thread still hands on the rest of the record's
     * bytes (run.c), two stop at once: the hooks are compared on runs
     * that complete. */
    for (int i = 0; i < 5 && a->rc == 0; i++)
        cr_assert_eq(b->tr.calls[i], a->tr.calls[i], "%s %s: hook %d called %llu times with "
                     "two threads, %llu with one", what, k->options, i,
                     (unsigned long long)b->tr.calls[i], (unsigned long long)a->tr.calls[i]);
    cr_assert(a->rc != 0 || b->tr.h == a->tr.h, "%s %s: the hooks saw something else", what,
              k->options);
    free(a->truth);
    free(b->truth);
    free(a);
    free(b);
}

static const tcase mismatches[] = {
    {"funcptr", TB_PROTO_PTM, "", {TB_RT_FAULT_ADDR_BIT, 3, 4}, 0, 0, TB_RT_MISMATCH, 0},
    {"funcptr", TB_PROTO_ETMV3, "", {TB_RT_FAULT_ADDR_BIT, 3, 4}, 0, 0, TB_RT_MISMATCH, 0},
    {"funcptr", TB_PROTO_ETMV3, "", {TB_RT_FAULT_DROP_ATOM, 10, 0}, 0, 0, TB_RT_MISMATCH, 0},
    {"irq_fiq", TB_PROTO_PTM, "ca,ts", {TB_RT_FAULT_DROP_ATOM, 7, 0}, 0, 0, TB_RT_MISMATCH, 0},
    /* Late in a long run: the difference is found many chunks in. */
    {"long_run", TB_PROTO_PTM, "", {TB_RT_FAULT_DROP_ATOM, 8000, 0}, 300000, 0,
     TB_RT_MISMATCH, 0},
    {"long_run", TB_PROTO_ETMV3, "", {TB_RT_FAULT_DROP_ATOM, 30000, 0}, 300000, 0,
     TB_RT_MISMATCH, 0},
};

static const tcase matches[] = {
    {"long_run", TB_PROTO_PTM, "", {0}, 300000, 0, TB_RT_MATCH, 0},
    {"long_run", TB_PROTO_ETMV3, "ca,ts", {0}, 300000, 0, TB_RT_MATCH, 0},
    {"irq_fiq", TB_PROTO_PTM, "fifo=48:1/64", {0}, 0, 0, TB_RT_MATCH, 0},
    /* Dozens of overflows: resume and lost events between records. */
    {"long_run", TB_PROTO_PTM, "fifo=48:1/64", {0}, 200000, 0, TB_RT_MATCH, 0},
    {"long_run", TB_PROTO_ETMV3, "fifo=48:1/8", {0}, 200000, 0, TB_RT_MATCH, 0},
    {"data_loop", TB_PROTO_ETMV3, "data=both,fifo=96:1/16,suppress=48", {0}, 0, 0,
     TB_RT_MATCH, 0},
    {"faults", TB_PROTO_ETMV3, "data=both,fifo=64:1/4,ca,ts", {0}, 0, 0, TB_RT_MATCH, 0},
    {"data_loop", TB_PROTO_ETMV3, "data=both,ooo=2", {0}, 0, 0, TB_RT_MATCH, 0},
    {"ctx_switch", TB_PROTO_PTM, "ctxid=4,vmid,filter", {0}, 0, 0, TB_RT_MATCH, 0},
    {"cancel_single", TB_PROTO_ETMV3, "ca", {0}, 0, 0, TB_RT_MATCH, 0},
};

/* An error on the decode side (the analysis hook fails at its 5000th
 * element): the same error, whichever thread met it. */
static const tcase errors[] = {
    {"long_run", TB_PROTO_PTM, "", {0}, 300000, 5000, TB_RT_MATCH, TB_ERR_STOPPED},
    {"long_run", TB_PROTO_ETMV3, "", {0}, 300000, 5000, TB_RT_MATCH, TB_ERR_STOPPED},
};

static void same(const tcase *k)
{
    same_hooks(k, true);
}

Test(roundtrip_threads, mismatch_report_is_the_same)
{
    for (size_t i = 0; i < sizeof mismatches / sizeof mismatches[0]; i++)
        same(&mismatches[i]);
}

Test(roundtrip_threads, match_is_the_same)
{
    for (size_t i = 0; i < sizeof matches / sizeof matches[0]; i++)
        same(&matches[i]);
}

Test(roundtrip_threads, decode_side_error_is_the_same)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        same(&errors[i]);
}

/* No on_trace hook: the writes are joined on the way (run.c pipe_bytes),
 * and everything else must still come out as with one thread. */
Test(roundtrip_threads, joined_writes_change_nothing)
{
    for (size_t i = 0; i < sizeof mismatches / sizeof mismatches[0]; i++)
        same_hooks(&mismatches[i], false);
    for (size_t i = 0; i < sizeof matches / sizeof matches[0]; i++)
        same_hooks(&matches[i], false);
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        same_hooks(&errors[i], false);
}
