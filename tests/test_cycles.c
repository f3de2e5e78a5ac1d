/*
 * Per-atom cycle counts: `tracebench decode --cycles`
 * (tb_decoder_set_cycle_ranges; issue 34 item 2).
 *
 * (a) OpenCSD 1.3.3 (trc_pkt_lister -decode), an independent decoder:
 *     on every cycle-accurate ETMv3 and PTM vector whose OpenCSD column
 *     is "match" (vectors/generated/README.md), and on the four sources
 *     of the real TC2 trace (ETMv3.5 and PTM, cycle-accurate), our
 *     ranges equal its INSTR_RANGE elements one for one: start,
 *     instruction count and [CC=].  OpenCSD gives a P-header that holds
 *     W atoms only a CYCLE_COUNT element of its own; DS-5 and we give
 *     those cycles to the next instruction (protocol-notes 6.3: an
 *     instruction's cycles are the W atoms since the previous E/N
 *     atom), so a CYCLE_COUNT's count is added to the next range's
 *     before comparing (a TRACE_ON or NO_SYNC between drops it: we put
 *     the cycles pending at an I-sync on its TRACE_ON).
 * (b) The emulator's truth: on the same vectors (every CA ETMv3 and PTM
 *     vector with no gap in decode.addr, OpenCSD bug or not), a range's
 *     count is the truth's cycles from the stamp of the instruction
 *     before it to that of its last instruction, wherever only
 *     instruction (and data) records lie between and the range follows
 *     another range (the first after a trace-on or an exception starts
 *     from a count the trace does not split).
 * (c) Every cycle-accurate ETMv3 and PTM vector: --cycles gives the same
 *     instructions and the same total of cycles as the default decode;
 *     ETMv3 ranges hold one instruction each, PTM's output is the
 *     default's byte for byte.
 * (d) The command line: --cycles with --format addr is a usage error,
 *     on trace that is not cycle-accurate a warning.
 * (e) ETMv1 and ETMv2 (below): every CA vector and round trips of
 *     several programs and option sets, each instruction's count
 *     against the truth's stamps; the default decode's ranges split.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tb_test.h"

#define VDIR TB_SOURCE_DIR "/vectors/generated"
#define MAX_VEC 256

typedef struct vec {
    char name[96];
    char protocol[16];
    char opencsd[48];
    bool ca;
    bool abandon;   /* ETMv1 option abandon (docs/etmv1.md 4) */
} vec;

/* The vector table of vectors/generated/README.md: name, protocol,
 * whether its option list holds `ca`, the OpenCSD column. */
static size_t load_vectors(vec *v)
{
    FILE *f = fopen(VDIR "/README.md", "r");
    char line[2048];
    size_t n = 0;

    cr_assert(f, "cannot read %s/README.md", VDIR);
    while (fgets(line, sizeof line, f) && n < MAX_VEC) {
        char *fld[12], *save = NULL, *t;
        size_t k = 0;

        if (strncmp(line, "| [", 3))
            continue;
        for (t = strtok_r(line, "|", &save); t && k < 12; t = strtok_r(NULL, "|", &save))
            fld[k++] = t;
        cr_assert_geq(k, 9, "README row: %s", line);
        memset(&v[n], 0, sizeof v[n]);
        sscanf(fld[0], " [%95[^]]", v[n].name);
        sscanf(fld[2], " %15s", v[n].protocol);
        sscanf(fld[8], " %47s", v[n].opencsd);
        {
            char p[600];

            /* One source a vector (a two-source one has decode.0xNN.addr
             * files and needs --id: left out). */
            snprintf(p, sizeof p, "%s/%s/decode.addr", VDIR, v[n].name);
            if (access(p, R_OK) != 0)
                continue;
        }
        {
            char opts[256], *o, *s2 = NULL;

            snprintf(opts, sizeof opts, "%s", fld[3]);
            for (o = strtok_r(opts, " `,", &s2); o; o = strtok_r(NULL, " `,", &s2))
                if (!strcmp(o, "ca"))
                    v[n].ca = true;
                else if (!strcmp(o, "abandon"))
                    v[n].abandon = true;
        }
        n++;
    }
    fclose(f);
    cr_assert_gt(n, 100, "only %zu vectors in the README table", n);
    return n;
}

typedef struct rng {
    uint64_t index;
    uint32_t start, count;
    long cc;            /* -1: none */
    bool after_range;   /* the element before it was a range */
} rng;

typedef struct rngs {
    rng *r;
    size_t n, cap;
    uint64_t insns, cycles;
} rngs;

static void push(rngs *l, rng x)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->r = realloc(l->r, l->cap * sizeof *l->r);
        cr_assert(l->r);
    }
    l->r[l->n++] = x;
    l->insns += x.count;
    if (x.cc > 0)
        l->cycles += (uint64_t)x.cc;
}

/* Our text decode's ranges. */
static void ours(const char *out, rngs *l)
{
    bool prev_range = false;

    for (const char *p = out; p && *p;) {
        const char *nl = strchr(p, '\n');
        char line[1024];
        size_t len = nl ? (size_t)(nl - p) : strlen(p);

        if (len >= sizeof line)
            len = sizeof line - 1;
        memcpy(line, p, len);
        line[len] = '\0';
        p = nl ? nl + 1 : NULL;
        if (strstr(line, " INSN_RANGE ")) {
            rng x = {0};
            const char *c = strstr(line, " cc=");
            unsigned long long idx;

            cr_assert_eq(sscanf(line, "%llu INSN_RANGE start=0x%x end=0x%*x count=%u", &idx,
                                &x.start, &x.count),
                         3, "range line: %s", line);
            x.index = idx;
            x.cc = c ? strtol(c + 4, NULL, 10) : -1;
            x.after_range = prev_range;
            push(l, x);
            prev_range = true;
        } else if (strstr(line, " TIMESTAMP ") == NULL) {
            /* A timestamp says when, not what ran: the count after it
             * still runs from the range before. */
            prev_range = false;
        }
    }
}

/* OpenCSD's INSTR_RANGE elements for trace ID id, CYCLE_COUNT folded
 * into the next range (see the top). */
static void opencsd(const char *dir, unsigned id, rngs *l)
{
    char log[128], cmd[2048], line[1024];
    long carry = 0;
    FILE *f;

    snprintf(log, sizeof log, "/tmp/tb_cycles_%d.ppl", (int)getpid());
    remove(log); /* trc_pkt_lister appends */
    snprintf(cmd, sizeof cmd,
             "trc_pkt_lister -ss_dir '%s' -id 0x%x -decode -no_time_print -logfilename %s "
             ">/dev/null 2>&1",
             dir, id, log);
    cr_assert_eq(system(cmd), 0, "%s: trc_pkt_lister failed", dir);
    f = fopen(log, "r");
    cr_assert(f);
    while (fgets(line, sizeof line, f)) {
        const char *e = strstr(line, "OCSD_GEN_TRC_ELEM_"), *c;

        if (!e)
            continue;
        e += strlen("OCSD_GEN_TRC_ELEM_");
        c = strstr(line, "[CC=");
        if (!strncmp(e, "CYCLE_COUNT", 11)) {
            cr_assert(c, "CYCLE_COUNT without a count: %s", line);
            carry += strtol(c + 4, NULL, 10);
        } else if (!strncmp(e, "TRACE_ON", 8) || !strncmp(e, "NO_SYNC", 7)) {
            carry = 0;
        } else if (!strncmp(e, "INSTR_RANGE", 11)) {
            rng x = {0};
            const char *s = strstr(line, "exec range=0x");

            cr_assert(s && sscanf(s, "exec range=0x%x:", &x.start) == 1, "%s", line);
            s = strstr(line, "num_i(");
            cr_assert(s && sscanf(s, "num_i(%u)", &x.count) == 1, "%s", line);
            x.cc = c ? strtol(c + 4, NULL, 10) + carry : -1;
            carry = 0;
            push(l, x);
        }
    }
    fclose(f);
    remove(log);
}

static bool have_lister(void)
{
    return access("/usr/bin/trc_pkt_lister", X_OK) == 0 ||
           system("trc_pkt_lister -help >/dev/null 2>&1") == 0;
}

static void need_lister(void)
{
    if (have_lister())
        return;
    if (getenv("CI") && !strcmp(getenv("CI"), "true"))
        cr_assert_fail("trc_pkt_lister (libopencsd-bin) is required under CI");
    fprintf(stderr, "\n*** SKIPPED: trc_pkt_lister not available ***\n\n");
    cr_skip_test("trc_pkt_lister not available");
}

/* Ours (--cycles) against OpenCSD's, range for range; the ranges
 * compared. */
static size_t against_opencsd(const char *dir, unsigned id, const char *what)
{
    rngs a = {0}, b = {0};
    tb_cli_run r = tb_test_run("decode '%s' --id 0x%x --cycles --quiet", dir, id);

    cr_assert_eq(r.status, 0, "%s: decode failed: %s", what, r.err);
    ours(r.out, &a);
    opencsd(dir, id, &b);
    cr_assert_gt(a.n, 0, "%s: no ranges", what);
    cr_assert_eq(a.n, b.n, "%s: %zu ranges, OpenCSD %zu", what, a.n, b.n);
    for (size_t i = 0; i < a.n; i++) {
        const rng *x = &a.r[i], *y = &b.r[i];

        cr_assert(x->start == y->start && x->count == y->count && x->cc == y->cc,
                  "%s: range %zu (index %llu): ours 0x%x x%u cc=%ld, OpenCSD 0x%x x%u "
                  "cc=%ld",
                  what, i, (unsigned long long)x->index, x->start, x->count, x->cc, y->start,
                  y->count, y->cc);
    }
    tb_test_run_done(&r);
    free(a.r);
    free(b.r);
    return b.n;
}

Test(cycles, opencsd_vectors, .timeout = 300)
{
    static vec v[MAX_VEC];
    size_t n, done = 0, ranges = 0, bugs = 0;

    need_lister();
    n = load_vectors(v);
    for (size_t i = 0; i < n; i++) {
        char dir[512];

        if (!v[i].ca || (strcmp(v[i].protocol, "etmv3") && strcmp(v[i].protocol, "ptm")))
            continue;
        if (strcmp(v[i].opencsd, "match")) {
            bugs++; /* a documented OpenCSD bug: its ranges differ */
            continue;
        }
        snprintf(dir, sizeof dir, "%s/%s", VDIR, v[i].name);
        ranges += against_opencsd(dir, 0x10, v[i].name);
        done++;
    }
    fprintf(stderr, "cycles: %zu CA vectors, %zu ranges equal to OpenCSD's (%zu with a "
                    "documented OpenCSD bug left out)\n", done, ranges, bugs);
    cr_assert_geq(done, 12, "only %zu cycle-accurate ETMv3/PTM vectors", done);
}

Test(cycles, opencsd_tc2, .timeout = 300)
{
    const char *ref = tb_test_reference_dir("TC2 cycle-accurate trace");
    char dir[1024];
    static const unsigned ids[] = {0x10, 0x11, 0x12, 0x13};
    size_t ranges = 0;

    if (!ref)
        cr_skip_test("no reference directory");
    need_lister();
    snprintf(dir, sizeof dir, "%s/opencsd-snapshots/TC2", ref);
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char what[64];

        snprintf(what, sizeof what, "TC2 0x%02x", ids[i]);
        ranges += against_opencsd(dir, ids[i], what);
    }
    fprintf(stderr, "cycles: TC2, %zu ranges equal to OpenCSD's\n", ranges);
    /* 7205 + 7471 + 1947 ETMv3 instructions, 1554 PTM ranges */
    cr_assert_eq(ranges, 7205u + 7471u + 1947u + 1554u);
}

/* The truth's instruction records: address and cycle stamp, whether
 * only I/D records lie between it and the instruction record before. */
typedef struct tins {
    uint32_t addr;
    uint64_t cycle;
    bool clean;
} tins;

static size_t read_truth(const char *dir, tins **out)
{
    char path[600], line[512];
    size_t n = 0, cap = 0;
    tins *t = NULL;
    bool clean = false;
    FILE *f;

    snprintf(path, sizeof path, "%s/truth.txt", dir);
    f = fopen(path, "r");
    cr_assert(f, "cannot read %s", path);
    while (fgets(line, sizeof line, f)) {
        unsigned long long seq, cyc;
        char kind;
        unsigned addr;

        if (sscanf(line, "%llu %llu %c", &seq, &cyc, &kind) != 3)
            continue;
        if (kind == 'I') {
            cr_assert_eq(sscanf(line, "%*u %*u I %x", &addr), 1, "%s", line);
            if (n == cap) {
                cap = cap ? 2 * cap : 4096;
                t = realloc(t, cap * sizeof *t);
                cr_assert(t);
            }
            t[n++] = (tins){addr, cyc, clean};
            clean = true;
        } else if (kind == 'X' && strstr(line, "cancelled")) {
            /* the instruction before did not complete: not traced */
            cr_assert_gt(n, 0);
            n--;
            clean = false;
        } else if (kind != 'D') {
            clean = false;
        }
    }
    fclose(f);
    *out = t;
    return n;
}

Test(cycles, truth, .timeout = 300)
{
    static vec v[MAX_VEC];
    size_t n, nvec = 0, checked = 0;

    n = load_vectors(v);
    for (size_t i = 0; i < n; i++) {
        char dir[512];
        char *addr;
        tins *t;
        size_t nt, ti = 0;
        rngs a = {0};
        tb_cli_run r;

        if (!v[i].ca || (strcmp(v[i].protocol, "etmv3") && strcmp(v[i].protocol, "ptm")))
            continue;
        snprintf(dir, sizeof dir, "%s/%s", VDIR, v[i].name);
        {
            char p[600];

            snprintf(p, sizeof p, "%s/decode.addr", dir);
            addr = tb_test_slurp(p, NULL);
        }
        if (strstr(addr, "# gap")) {
            free(addr); /* trace lost or filtered: no sequence to walk */
            continue;
        }
        free(addr);
        nt = read_truth(dir, &t);
        r = tb_test_run("decode '%s' --cycles --quiet", dir);
        cr_assert_eq(r.status, 0, "%s: %s", v[i].name, r.err);
        ours(r.out, &a);
        for (size_t k = 0; k < a.n; k++) {
            const rng *x = &a.r[k];
            size_t last;

            /* Trace may start after the truth's first instruction (an
             * LSiP I-sync, a filter): the first range is where it starts. */
            while (k == 0 && ti < nt && t[ti].addr != x->start)
                ti++;
            last = ti + x->count - 1;
            bool clean = ti > 0;

            cr_assert(last < nt && t[ti].addr == x->start,
                      "%s: range %zu at 0x%x, the truth's instruction %zu is at 0x%x",
                      v[i].name, k, x->start, ti, ti < nt ? t[ti].addr : 0);
            for (size_t j = ti; j <= last; j++)
                clean = clean && t[j].clean;
            if (clean && x->after_range && x->cc >= 0) {
                cr_assert_eq((uint64_t)x->cc, t[last].cycle - t[ti - 1].cycle,
                             "%s: range %zu at 0x%x (index %llu): cc=%ld, the truth's "
                             "%llu - %llu",
                             v[i].name, k, x->start, (unsigned long long)x->index, x->cc,
                             (unsigned long long)t[last].cycle,
                             (unsigned long long)t[ti - 1].cycle);
                checked++;
            }
            ti = last + 1;
        }
        tb_test_run_done(&r);
        free(a.r);
        free(t);
        nvec++;
    }
    fprintf(stderr, "cycles: %zu counts on %zu CA vectors equal to the truth's\n", checked,
            nvec);
    cr_assert_geq(nvec, 15);
    cr_assert_geq(checked, 8000);
}

Test(cycles, same_instructions_and_total, .timeout = 300)
{
    static vec v[MAX_VEC];
    size_t n, nvec = 0;

    n = load_vectors(v);
    for (size_t i = 0; i < n; i++) {
        char dir[512];
        rngs a = {0}, b = {0};
        tb_cli_run r1, r2;
        const bool ptm = !strcmp(v[i].protocol, "ptm");

        if (!v[i].ca || (strcmp(v[i].protocol, "etmv3") && !ptm))
            continue;
        snprintf(dir, sizeof dir, "%s/%s", VDIR, v[i].name);
        r1 = tb_test_run("decode '%s' --quiet", dir);
        r2 = tb_test_run("decode '%s' --cycles --quiet", dir);
        cr_assert(r1.status == r2.status, "%s: exit %d, with --cycles %d", v[i].name,
                  r1.status, r2.status);
        ours(r1.out, &a);
        ours(r2.out, &b);
        cr_assert_eq(a.insns, b.insns, "%s: %llu instructions, with --cycles %llu",
                     v[i].name, (unsigned long long)a.insns, (unsigned long long)b.insns);
        cr_assert_eq(a.cycles, b.cycles, "%s: %llu cycles, with --cycles %llu", v[i].name,
                     (unsigned long long)a.cycles, (unsigned long long)b.cycles);
        if (ptm)
            cr_assert_str_eq(r1.out, r2.out, "%s: PTM's --cycles decode differs", v[i].name);
        else
            for (size_t k = 0; k < b.n; k++)
                cr_assert_eq(b.r[k].count, 1, "%s: a range of %u instructions", v[i].name,
                             b.r[k].count);
        cr_assert_gt(b.n, a.n - (ptm ? 1 : 0), "%s: no range was split", v[i].name);
        tb_test_run_done(&r1);
        tb_test_run_done(&r2);
        free(a.r);
        free(b.r);
        nvec++;
    }
    cr_assert_geq(nvec, 18, "only %zu cycle-accurate vectors", nvec);
}

Test(cycles, command_line)
{
    tb_cli_run r = tb_test_run("decode '%s/cond_arm-etmv33-ca' --cycles --format addr", VDIR);

    cr_expect_eq(r.status, 2);
    tb_test_err_has(&r, "--cycles goes with --format text or json");
    tb_test_run_done(&r);
    r = tb_test_run("decode '%s/cond_arm-etmv3' --cycles --quiet", VDIR);
    cr_expect_eq(r.status, 0);
    tb_test_err_has(&r, "is not cycle-accurate trace");
    tb_test_run_done(&r);
    r = tb_test_run("decode '%s/cond_arm-etmv3' --quiet", VDIR);
    tb_test_err_lacks(&r, "cycle-accurate");
    tb_test_run_done(&r);
    r = tb_test_run("decode '%s/arm_basic-etmv2-port4' --cycles --quiet", VDIR);
    cr_expect_eq(r.status, 0);
    tb_test_err_has(&r, "is not cycle-accurate trace");
    tb_test_run_done(&r);
}

/* ---- ETMv1 and ETMv2 (trace ports) ----
 *
 * An element's count runs forward from its status to the next status
 * (docs/etmv1.md 5, docs/etmv2.md 5), and the port keeps the core's time
 * (docs/etmv1.md 4: a record's status first, its waits after): so with
 * --cycles, where an instruction's range or an exception follows the
 * truth record before it with nothing between, its count is the truth's
 * stamp of its own record minus that of the record before.  Two cases
 * split differently: a cancelled instruction reports nothing (ETMv1) or
 * is retracted (ETMv2's E bit) and its cycles go to the element before it
 * or to its exception; there the element before and the exception are
 * checked together, their sum against the stamps around both. */

/* A truth record that the decode shows: an instruction or an exception. */
typedef struct trec {
    char kind;          /* 'I' or 'X' */
    bool cancelled;     /* 'I': an exception cancelled it */
    uint32_t addr;
    uint64_t cycle;
} trec;

static size_t read_truth_port(const char *path, trec **out)
{
    char line[512];
    size_t n = 0, cap = 0;
    trec *t = NULL;
    FILE *f = fopen(path, "r");

    cr_assert(f, "cannot read %s", path);
    while (fgets(line, sizeof line, f)) {
        unsigned long long seq, cyc;
        unsigned addr = 0;
        char kind;

        if (sscanf(line, "%llu %llu %c", &seq, &cyc, &kind) != 3 ||
            (kind != 'I' && kind != 'X'))
            continue;
        if (kind == 'I')
            cr_assert_eq(sscanf(line, "%*u %*u I %x", &addr), 1, "%s", line);
        if (kind == 'X' && strstr(line, " cancelled")) {
            cr_assert(n && t[n - 1].kind == 'I', "%s: cancelled, no instruction: %s", path,
                      line);
            t[n - 1].cancelled = true;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 4096;
            t = realloc(t, cap * sizeof *t);
            cr_assert(t);
        }
        t[n++] = (trec){kind, false, addr, cyc};
    }
    fclose(f);
    *out = t;
    return n;
}

/* What the port check of one decode counted. */
typedef struct pcheck {
    size_t ranges, counts, pairs, open, unaligned;
} pcheck;

/* The decode (--cycles, text) `out` of a run whose truth is `truth`:
 * every range one instruction, and the counts as above. */
static void port_against_truth(const char *what, const char *out, const char *truth,
                               bool abandon, pcheck *pc)
{
    trec *t;
    size_t nt = read_truth_port(truth, &t), tj = 0;
    bool chain = false;      /* the element before matched t[tj - 1] */
    bool abandoned = false;  /* it was a branch an exception abandoned */
    long prev_cc = -1;       /* its count */
    size_t prev_j = 0;

    for (const char *p = out; p && *p;) {
        const char *nl = strchr(p, '\n');
        char line[1024];
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        bool range, exc;
        unsigned start = 0, count = 0;
        const char *c;
        long cc;
        size_t j;

        if (len >= sizeof line)
            len = sizeof line - 1;
        memcpy(line, p, len);
        line[len] = '\0';
        p = nl ? nl + 1 : NULL;
        range = strstr(line, " INSN_RANGE ") != NULL;
        exc = strstr(line, " EXCEPTION ") != NULL;
        if (!range && !exc) {
            /* Trace lost, filtered or not at a known address: the next
             * count starts from a status the truth does not place. */
            if (strstr(line, " TRACE_ON ") || strstr(line, " NO_SYNC ") ||
                strstr(line, " ADDR_NACC "))
                chain = false;
            continue;
        }
        c = strstr(line, " cc=");
        cc = c ? strtol(c + 4, NULL, 10) : -1;
        if (range) {
            cr_assert_eq(sscanf(strstr(line, " INSN_RANGE "),
                                " INSN_RANGE start=0x%x end=0x%*x count=%u", &start, &count),
                         2, "%s: %s", what, line);
            cr_assert_eq(count, 1, "%s: a range of %u instructions with --cycles: %s", what,
                         count, line);
            pc->ranges++;
        }
        /* Its record: the next one the decode shows (cancelled
         * instructions are not in ranges), else (an exception the
         * decode reads where the truth has none, a gap) the next with
         * its address, out of the chain. */
        j = tj;
        while (j < nt && t[j].kind == 'I' && t[j].cancelled)
            j++;
        if (!(j < nt && (range ? t[j].kind == 'I' && t[j].addr == start : t[j].kind == 'X'))) {
            chain = false;
            pc->unaligned++;
            if (exc)
                continue; /* the range after it finds its place */
            for (j = tj; j < nt && !(t[j].kind == 'I' && !t[j].cancelled &&
                                     t[j].addr == start);
                 j++)
                ;
            cr_assert_lt(j, nt, "%s: range at 0x%x: not in the truth after record %zu", what,
                         start, tj);
        }
        if (cc < 0) {
            pc->open++;
        } else if (abandon && range && chain && j == tj && j > 0 && j + 1 < nt &&
                   t[j + 1].kind == 'X' && !t[j + 1].cancelled) {
            /* abandon (docs/etmv1.md 4): an exception right after this
             * instruction may have come in its first APO cycle and taken
             * its other cycles: the pair is checked at the exception. */
            abandoned = true;
            chain = true;
            prev_cc = cc;
            prev_j = j;
            tj = j + 1;
            continue;
        } else if (abandoned && exc && chain && j == tj && prev_cc >= 0 && prev_j > 0) {
            cr_assert_eq((uint64_t)(prev_cc + cc), t[j].cycle - t[prev_j - 1].cycle,
                         "%s: %s: cc=%ld + %ld of the branch before it, the truth's %llu - "
                         "%llu", what, line, cc, prev_cc, (unsigned long long)t[j].cycle,
                         (unsigned long long)t[prev_j - 1].cycle);
            pc->pairs++;
        } else if (chain && j == tj && j > 0 && !(j + 1 < nt && t[j + 1].cancelled)) {
            cr_assert_eq((uint64_t)cc, t[j].cycle - t[j - 1].cycle,
                         "%s: %s: cc=%ld, the truth's %llu - %llu", what, line, cc,
                         (unsigned long long)t[j].cycle,
                         (unsigned long long)t[j - 1].cycle);
            pc->counts++;
        } else if (chain && exc && j > tj && prev_cc >= 0 && prev_j > 0) {
            /* An exception after a cancelled instruction: it and the
             * element before share the span from the latter's status. */
            cr_assert_eq((uint64_t)(prev_cc + cc), t[j].cycle - t[prev_j - 1].cycle,
                         "%s: %s: cc=%ld + %ld before it, the truth's %llu - %llu", what, line,
                         cc, prev_cc, (unsigned long long)t[j].cycle,
                         (unsigned long long)t[prev_j - 1].cycle);
            pc->pairs++;
        }
        chain = true;
        abandoned = false;
        prev_cc = cc;
        prev_j = j;
        tj = j + 1;
    }
    free(t);
}

static bool port_protocol(const char *p)
{
    return !strcmp(p, "etmv1") || !strcmp(p, "etmv2");
}

Test(cycles, port_truth_vectors, .timeout = 300)
{
    static vec v[MAX_VEC];
    size_t n, nvec = 0;
    pcheck pc = {0};

    n = load_vectors(v);
    for (size_t i = 0; i < n; i++) {
        char dir[512], truth[600];
        tb_cli_run r;

        if (!v[i].ca || !port_protocol(v[i].protocol))
            continue;
        snprintf(dir, sizeof dir, "%s/%s", VDIR, v[i].name);
        snprintf(truth, sizeof truth, "%s/truth.txt", dir);
        r = tb_test_run("decode '%s' --cycles --quiet", dir);
        cr_assert_eq(r.status, 0, "%s: %s", v[i].name, r.err);
        {
            pcheck one = {0};

            port_against_truth(v[i].name, r.out, truth, v[i].abandon, &one);
            fprintf(stderr, "cycles: %s: %zu ranges, %zu counts, %zu pairs, %zu open, %zu "
                            "unaligned\n", v[i].name, one.ranges, one.counts, one.pairs,
                    one.open, one.unaligned);
            pc.ranges += one.ranges;
            pc.counts += one.counts;
            pc.pairs += one.pairs;
            pc.open += one.open;
            pc.unaligned += one.unaligned;
        }
        tb_test_run_done(&r);
        nvec++;
    }
    fprintf(stderr, "cycles: ETMv1/ETMv2, %zu CA vectors, %zu ranges: %zu counts and %zu "
                    "exception pairs equal to the truth's (%zu open, %zu out of the "
                    "truth's order)\n",
            nvec, pc.ranges, pc.counts, pc.pairs, pc.open, pc.unaligned);
    cr_assert_geq(nvec, 9, "only %zu cycle-accurate ETMv1/ETMv2 vectors", nvec);
    cr_assert_geq(pc.counts, 4000);
}

/* One line of a text decode at *p (moved on); false at the end. */
static bool next_line(const char **p, char *line, size_t size)
{
    const char *nl;
    size_t len;

    if (!*p || !**p)
        return false;
    nl = strchr(*p, '\n');
    len = nl ? (size_t)(nl - *p) : strlen(*p);
    if (len >= size)
        len = size - 1;
    memcpy(line, *p, len);
    line[len] = '\0';
    *p = nl ? nl + 1 : NULL;
    return true;
}

/* What the split changed, summed over decodes. */
typedef struct split {
    size_t ranges, split_ranges, open_kept;
    uint64_t cycles, split_cycles, extra;
} split;

/* The default decode `a` and the --cycles decode `b` of one source: the
 * same elements but the ranges; each default range's instructions in
 * ranges of one, whose counts sum to its count.  Where the default
 * range has none (open: nothing closes its last instruction's count,
 * docs/etmv1.md 5), the last has none and the others keep theirs: their
 * next statuses are in the trace (added up in extra). */
static void port_split(const char *what, const char *a, const char *b, split *s)
{
    char la[1024], lb[1024];

    while (next_line(&a, la, sizeof la)) {
        unsigned start, end, count, bs, be, bc;
        const char *c = strstr(la, " cc=");
        uint64_t sum = 0;
        bool all = true;

        if (!strstr(la, " INSN_RANGE ")) {
            cr_assert(next_line(&b, lb, sizeof lb), "%s: --cycles ends before: %s", what, la);
            cr_assert_str_eq(lb, la, "%s: --cycles gives another element", what);
            continue;
        }
        cr_assert_eq(sscanf(strstr(la, " INSN_RANGE "),
                            " INSN_RANGE start=0x%x end=0x%x count=%u", &start, &end, &count),
                     3, "%s: %s", what, la);
        s->ranges++;
        for (unsigned k = 0; k < count; k++) {
            const char *cb;

            cr_assert(next_line(&b, lb, sizeof lb) && strstr(lb, " INSN_RANGE "),
                      "%s: instruction %u of %s: no range with --cycles", what, k, la);
            cr_assert_eq(sscanf(strstr(lb, " INSN_RANGE "),
                                " INSN_RANGE start=0x%x end=0x%x count=%u", &bs, &be, &bc),
                         3, "%s: %s", what, lb);
            cr_assert(bs == start && bc == 1 && (k + 1 < count || be == end),
                      "%s: instruction %u of %s: %s", what, k, la, lb);
            start = be;
            s->split_ranges++;
            cb = strstr(lb, " cc=");
            if (cb) {
                sum += strtoull(cb + 4, NULL, 10);
            } else {
                cr_assert(!c && k + 1 == count,
                          "%s: instruction %u of %s has no count: %s", what, k, la, lb);
                all = false;
            }
        }
        if (c) {
            cr_assert(all, "%s: %s", what, la);
            cr_assert_eq(sum, strtoull(c + 4, NULL, 10),
                         "%s: %s: its instructions' counts sum to %llu", what, la,
                         (unsigned long long)sum);
            s->cycles += sum;
        } else if (strstr(la, " cc=") == NULL && count > 1) {
            s->open_kept++;
            s->extra += sum;
        }
        s->split_cycles += sum;
    }
    cr_assert(!next_line(&b, lb, sizeof lb), "%s: --cycles gives more: %s", what, lb);
}

Test(cycles, port_split_vectors, .timeout = 300)
{
    static vec v[MAX_VEC];
    size_t n, nvec = 0;
    split s = {0};

    n = load_vectors(v);
    for (size_t i = 0; i < n; i++) {
        char dir[512];
        tb_cli_run r1, r2;

        if (!v[i].ca || !port_protocol(v[i].protocol))
            continue;
        snprintf(dir, sizeof dir, "%s/%s", VDIR, v[i].name);
        r1 = tb_test_run("decode '%s' --quiet", dir);
        r2 = tb_test_run("decode '%s' --cycles --quiet", dir);
        cr_assert(r1.status == 0 && r2.status == 0, "%s: exit %d, with --cycles %d",
                  v[i].name, r1.status, r2.status);
        tb_test_err_lacks(&r2, "warning");
        port_split(v[i].name, r1.out, r2.out, &s);
        tb_test_run_done(&r1);
        tb_test_run_done(&r2);
        nvec++;
    }
    fprintf(stderr, "cycles: ETMv1/ETMv2, %zu CA vectors: %zu ranges split into %zu, %llu "
                    "cycles in both; %zu open ranges keep %llu cycles of their other "
                    "instructions with --cycles\n",
            nvec, s.ranges, s.split_ranges, (unsigned long long)s.cycles, s.open_kept,
            (unsigned long long)s.extra);
    cr_assert_geq(nvec, 9);
    cr_assert_gt(s.split_ranges, s.ranges);
}

/* Round trips (tracebench roundtrip --out --truth): programs and CA
 * option sets of both protocols, ports of 4, 8 and 16 bits, data trace,
 * the filter, overflows (a small FIFO), context IDs, branch output. */
static const struct {
    const char *program, *protocol, *options;
} port_rt[] = {
    {"exc_mix", "etmv1", "ca,port=4"},
    {"exc_mix", "etmv2", "ca,port=8"},
    {"faults", "etmv2", "ca,port=16"},
    {"data_ops", "etmv1", "ca,data=both,fifo=16,port=4"},
    {"data_ops", "etmv2", "ca,data=both,port=4"},
    {"data_loop", "etmv1", "ca,data=both,fifo=14,port=8"},
    {"recursion", "etmv2", "ca,filter"},
    {"thumb_vec", "etmv1", "ca,port=8"},
    {"thumb_vec", "etmv2", "ca"},
    {"cancel_single", "etmv2", "ca"},
    {"switch_table", "etmv1", "ca,bb"},
    {"funcptr", "etmv2", "ca,port=4"},
    {"ctx_switch", "etmv1", "ca,ctxid=4"},
    {"udf_land", "etmv2", "ca,data=both"},
};

Test(cycles, port_truth_roundtrips, .timeout = 300)
{
    char tmp[] = "/tmp/tb_cycles_XXXXXX";
    pcheck pc = {0};
    split s = {0};

    cr_assert(mkdtemp(tmp));
    for (size_t i = 0; i < sizeof port_rt / sizeof port_rt[0]; i++) {
        char dir[600], truth[700], what[128], cmd[1400];
        tb_cli_run r, r1, r2;
        pcheck one = {0};

        snprintf(what, sizeof what, "%s %s %s", port_rt[i].program, port_rt[i].protocol,
                 port_rt[i].options);
        snprintf(dir, sizeof dir, "%s/%zu", tmp, i);
        snprintf(truth, sizeof truth, "%s/truth.txt", tmp);
        r = tb_test_run("roundtrip '%s/vectors/programs/%s.elf' --scenario "
                        "'%s/vectors/programs/%s.ini' --protocol %s --options %s --max 20000 "
                        "--out '%s' --truth '%s' --quiet",
                        TB_BINARY_DIR, port_rt[i].program, TB_SOURCE_DIR,
                        port_rt[i].program, port_rt[i].protocol, port_rt[i].options, dir,
                        truth);
        cr_assert_eq(r.status, 0, "%s: round trip: %s", what, r.out);
        tb_test_run_done(&r);
        r1 = tb_test_run("decode '%s' --quiet", dir);
        r2 = tb_test_run("decode '%s' --cycles --quiet", dir);
        cr_assert(r1.status == 0 && r2.status == 0, "%s: decode failed", what);
        port_against_truth(what, r2.out, truth, strstr(port_rt[i].options, "abandon") != NULL,
                           &one);
        port_split(what, r1.out, r2.out, &s);
        fprintf(stderr, "cycles: %s: %zu ranges, %zu counts, %zu pairs, %zu open, %zu "
                        "unaligned\n", what, one.ranges, one.counts, one.pairs, one.open,
                one.unaligned);
        pc.ranges += one.ranges;
        pc.counts += one.counts;
        pc.pairs += one.pairs;
        pc.open += one.open;
        pc.unaligned += one.unaligned;
        tb_test_run_done(&r1);
        tb_test_run_done(&r2);
        snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, truth);
        cr_assert_eq(system(cmd), 0);
    }
    rmdir(tmp);
    fprintf(stderr, "cycles: ETMv1/ETMv2, %zu round trips, %zu ranges: %zu counts and %zu "
                    "exception pairs equal to the truth's (%zu open, %zu out of the truth's "
                    "order); %zu default ranges split, %llu cycles in both, %zu open ones "
                    "keep %llu\n",
            sizeof port_rt / sizeof port_rt[0], pc.ranges, pc.counts, pc.pairs, pc.open,
            pc.unaligned, s.ranges, (unsigned long long)s.cycles, s.open_kept,
            (unsigned long long)s.extra);
    cr_assert_geq(pc.counts, 40000);
}
