/*
 * Code coverage (analysis/codecov.c, `tracebench coverage`).
 *
 * (a) Conditional encodings, by hand from IHI0406C (A8.3 condition
 *     field, A8.8.18 B T1/T3, A8.8.29 CBZ, A8.8.54 IT masks).
 * (b) The accumulator on elements written here: atoms per instruction
 *     (ETMv3) or on waypoints only (PTM: the rest unknown), gaps, merged
 *     sources.
 * (c) On every committed vector without gaps (vectors/generated; at
 *     least three per protocol), the per-address execution counts and
 *     passed/failed condition counts of `tracebench coverage --format
 *     json` equal those tb_truthcov (vectors/truthcov.c, linking nothing
 *     of tracebench) reads off the emulator's truth.txt.  On vectors
 *     with a filter or an overflow no address shows more runs than the
 *     truth has, and where the decode shows fewer (code ran unseen, also
 *     before trace first came on) the coverage must read as incomplete.
 * (d) The lcov tracefile of a C program's vector: genhtml renders it
 *     without a warning and lcov --summary reads it, with the lines hit
 *     that arm-none-eabi-addr2line gives for the truth's addresses.
 * (e) The Cobertura XML of the same vectors is valid by Cobertura's DTD
 *     (tests/cobertura-04.dtd, xmllint), with the truth's lines covered
 *     and lcov's branch totals (no Cobertura reader is packaged in
 *     Debian 12: gcovr 5.2 writes Cobertura but does not read it,
 *     pycobertura is not packaged).
 */
#define _GNU_SOURCE /* strcasestr */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tb_test.h"
#include "tracebench/codecov.h"
#include "tracebench/elfinfo.h"
#include "tracebench/snapshot.h"

/* ---- (a) ---- */

typedef struct cond_case {
    tb_isa isa;
    uint8_t bytes[4];
    bool cond;
    unsigned it_len;
} cond_case;

Test(codecov, conditional_encodings)
{
    static const cond_case cases[] = {
        {TB_ISA_ARM, {0x01, 0x00, 0x80, 0xE0}, false, 0}, /* ADD r0,r0,r1 (AL) */
        {TB_ISA_ARM, {0x01, 0x00, 0x80, 0x10}, true, 0},  /* ADDNE */
        {TB_ISA_ARM, {0xFD, 0xFF, 0xFF, 0x1A}, true, 0},  /* BNE */
        {TB_ISA_ARM, {0x00, 0x00, 0x00, 0xFA}, false, 0}, /* BLX imm (cond 1111) */
        {TB_ISA_THUMB, {0xFE, 0xD1}, true, 0},            /* BNE T1 */
        {TB_ISA_THUMB, {0xFE, 0xDE}, false, 0},           /* UDF (1101 1110) */
        {TB_ISA_THUMB, {0xFE, 0xE7}, false, 0},           /* B T2 */
        {TB_ISA_THUMB, {0x08, 0xB1}, true, 0},            /* CBZ r0 */
        {TB_ISA_THUMB, {0x08, 0xB9}, true, 0},            /* CBNZ r0 */
        {TB_ISA_THUMB, {0x08, 0xBF}, false, 1},           /* IT EQ (mask 1000) */
        {TB_ISA_THUMB, {0x0C, 0xBF}, false, 2},           /* ITE EQ (mask 1100) */
        {TB_ISA_THUMB, {0x01, 0xBF}, false, 4},           /* ITxxx (mask xxx1) */
        {TB_ISA_THUMB, {0x00, 0xBF}, false, 0},           /* NOP */
        {TB_ISA_THUMB, {0x40, 0xF0, 0x00, 0x80}, true, 0},  /* BNE.W T3 */
        {TB_ISA_THUMB, {0x00, 0xF0, 0x00, 0xB8}, false, 0}, /* B.W T4 */
        {TB_ISA_THUMB, {0x00, 0xF0, 0x00, 0xF8}, false, 0}, /* BL */
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned it = 99;
        bool c = tb_codecov_insn_cond(cases[i].isa, cases[i].bytes,
                                      cases[i].isa == TB_ISA_ARM ? 4 : 4, &it);

        cr_expect_eq(c, cases[i].cond, "case %zu: conditional %d, want %d", i, c, cases[i].cond);
        cr_expect_eq(it, cases[i].it_len, "case %zu: IT length %u, want %u", i, it,
                     cases[i].it_len);
    }
}

/* ---- (b) ---- */

/* ARM code at 0x1000: 16 words of ADD (AL), ADDNE at 0x1008, BNE at
 * 0x100C. */
static tb_memimage *arm_image(void)
{
    uint8_t code[64];
    tb_memimage *m = tb_memimage_new();

    for (int i = 0; i < 16; i++) {
        code[4 * i] = 0x01, code[4 * i + 1] = 0x00, code[4 * i + 2] = 0x80;
        code[4 * i + 3] = 0xE0;
    }
    code[8 + 3] = 0x10;                                   /* ADDNE */
    code[12] = 0xFB, code[13] = 0xFF, code[14] = 0xFF, code[15] = 0x1A; /* BNE 0x1000 */
    cr_assert(m);
    cr_assert_eq(tb_memimage_add(m, 0x1000, code, sizeof code), 0);
    return m;
}

static tb_element range(uint32_t start, uint32_t count, uint32_t nbits, char last, uint8_t wp)
{
    tb_element el = {.kind = TB_ELEM_INSN_RANGE, .isa = TB_ISA_ARM, .start = start,
                     .end = start + 4 * count, .count = count,
                     .last_addr = start + 4 * (count - 1), .last_size = 4, .last_wp = wp,
                     .last_atom = last, .atom_bits = nbits};
    return el;
}

static const tb_codecov_insn *find(const tb_codecov_insn *in, size_t n, uint32_t a)
{
    for (size_t i = 0; i < n; i++)
        if (in[i].addr == a)
            return &in[i];
    return NULL;
}

Test(codecov, etmv3_atoms_and_merge)
{
    tb_memimage *m = arm_image();
    tb_codecov *c = tb_codecov_new();
    tb_element e1 = range(0x1000, 4, 0, 'E', TB_WP_DIRECT);   /* ADDNE passed, BNE taken */
    tb_element e2 = range(0x1000, 5, 1u << 2, 'E', TB_WP_NONE); /* ADDNE failed, BNE not
                                                                * taken (bit 3), on to 0x1010 */
    const tb_codecov_insn *in;
    size_t n;

    e2.atom_bits |= 1u << 3;
    cr_assert(c);
    cr_assert_eq(tb_codecov_begin(c, TB_PROTO_ETMV3, m), 0);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(tb_codecov_element(c, &e1), 0);
    cr_assert_eq(tb_codecov_element(c, &e2), 0);
    cr_assert_eq(tb_codecov_end(c), 0);
    /* A second source (another run) merges. */
    cr_assert_eq(tb_codecov_begin(c, TB_PROTO_ETMV3, m), 0);
    cr_assert_eq(tb_codecov_element(c, &e1), 0);
    cr_assert_eq(tb_codecov_end(c), 0);
    in = tb_codecov_insns(c, &n);
    cr_assert_eq(n, 5);
    cr_expect_eq(find(in, n, 0x1000)->count, 5);
    cr_expect_eq(find(in, n, 0x1000)->flags, 0);
    cr_expect_eq(find(in, n, 0x1008)->passed, 4);
    cr_expect_eq(find(in, n, 0x1008)->failed, 1);
    cr_expect_eq(find(in, n, 0x1008)->flags, TB_CODECOV_COND);
    cr_expect_eq(find(in, n, 0x100C)->passed, 4);
    cr_expect_eq(find(in, n, 0x100C)->failed, 1);
    cr_expect_eq(find(in, n, 0x1010)->count, 1);
    cr_expect_eq(tb_codecov_gaps(c), 0);
    tb_codecov_free(c);
    tb_memimage_free(m);
}

Test(codecov, ptm_conditions_unknown_off_waypoints)
{
    tb_memimage *m = arm_image();
    tb_codecov *c = tb_codecov_new();
    tb_element e = range(0x1000, 4, 0, 'N', TB_WP_DIRECT); /* BNE not taken */
    const tb_codecov_insn *in;
    size_t n;

    cr_assert_eq(tb_codecov_begin(c, TB_PROTO_PTM, m), 0);
    cr_assert_eq(tb_codecov_element(c, &e), 0);
    cr_assert_eq(tb_codecov_end(c), 0);
    in = tb_codecov_insns(c, &n);
    cr_assert_eq(n, 4);
    /* ADDNE: ran, condition not traced (IHI0035B B.3.2). */
    cr_expect_eq(find(in, n, 0x1008)->count, 1);
    cr_expect_eq(find(in, n, 0x1008)->flags, TB_CODECOV_COND | TB_CODECOV_COND_UNKNOWN);
    cr_expect_eq(find(in, n, 0x1008)->passed + find(in, n, 0x1008)->failed, 0);
    /* BNE: a waypoint, its atom says failed. */
    cr_expect_eq(find(in, n, 0x100C)->flags, TB_CODECOV_COND);
    cr_expect_eq(find(in, n, 0x100C)->failed, 1);
    tb_codecov_free(c);
    tb_memimage_free(m);
}

typedef struct gap_case {
    const char *what;
    tb_element before, after; /* kind TB_ELEM_END: none */
    uint64_t gaps;
} gap_case;

Test(codecov, gaps)
{
    static const gap_case cases[] = {
        {"trace-on first", {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_TRACE_ON},
         {.kind = TB_ELEM_END}, 0},
        {"init then trace-on", {.kind = TB_ELEM_NO_SYNC, .reason = TB_GAP_INIT},
         {.kind = TB_ELEM_END}, 0},
        {"periodic first: a wrapped buffer",
         {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_PERIODIC}, {.kind = TB_ELEM_END}, 1},
        {"filter re-entry", {.kind = TB_ELEM_END},
         {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_TRACE_ON}, 1},
        {"overflow", {.kind = TB_ELEM_END},
         {.kind = TB_ELEM_NO_SYNC, .reason = TB_GAP_OVERFLOW}, 1},
        {"periodic later", {.kind = TB_ELEM_END},
         {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_PERIODIC}, 0},
        {"bad packet", {.kind = TB_ELEM_NO_SYNC, .reason = TB_GAP_BAD_PACKET},
         {.kind = TB_ELEM_END}, 1},
        {"truncated at the end", {.kind = TB_ELEM_END},
         {.kind = TB_ELEM_NO_SYNC, .reason = TB_GAP_BAD_PACKET, .err = TB_ERR_TRUNCATED}, 0},
        {"code not in the image", {.kind = TB_ELEM_END}, {.kind = TB_ELEM_ADDR_NACC}, 1},
    };
    tb_memimage *m = arm_image();
    tb_element r = range(0x1000, 2, 0, 'E', TB_WP_NONE);

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_codecov *c = tb_codecov_new();

        cr_assert_eq(tb_codecov_begin(c, TB_PROTO_ETMV3, m), 0);
        if (cases[i].before.kind != TB_ELEM_END)
            cr_assert_eq(tb_codecov_element(c, &cases[i].before), 0);
        cr_assert_eq(tb_codecov_element(c, &r), 0);
        if (cases[i].after.kind != TB_ELEM_END)
            cr_assert_eq(tb_codecov_element(c, &cases[i].after), 0);
        cr_assert_eq(tb_codecov_end(c), 0);
        cr_expect_eq(tb_codecov_gaps(c), cases[i].gaps, "%s: %llu gaps, want %llu",
                     cases[i].what, (unsigned long long)tb_codecov_gaps(c),
                     (unsigned long long)cases[i].gaps);
        tb_codecov_free(c);
    }
    /* A source that shows no instruction at all: unknown, not "none ran". */
    {
        tb_codecov *c = tb_codecov_new();

        cr_assert_eq(tb_codecov_begin(c, TB_PROTO_PTM, m), 0);
        cr_assert_eq(tb_codecov_end(c), 0);
        cr_expect_eq(tb_codecov_gaps(c), 1);
        tb_codecov_free(c);
    }
    tb_memimage_free(m);
}

/* A debug halt (docs/debug-halt.md): its exit (I-sync reason b11) is no
 * gap after the halt was shown (exception 1 to address 0, IHI0014Q
 * 7.3.5, IHI0035B 4.5.4): the core ran nothing between them.  An exit
 * without its halt (the ETMv1/ETMv2 trace ports show none; trace off at
 * the halt) may hide code, and so does a halt whose restart is lost. */
Test(codecov, debug_halt_exit_is_no_gap)
{
    static const struct {
        const char *what;
        tb_element seq[3]; /* between two ranges; kind TB_ELEM_END: none */
        uint64_t gaps;
    } cases[] = {
        {"halt, exit", {{.kind = TB_ELEM_EXCEPTION, .exc_num = 1, .pref_return = 0x1008},
                        {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_DEBUG_EXIT},
                        {.kind = TB_ELEM_END}}, 0},
        {"halt, timestamp, exit",
         {{.kind = TB_ELEM_EXCEPTION, .exc_num = 1, .pref_return = 0x1008},
          {.kind = TB_ELEM_TIMESTAMP}, {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_DEBUG_EXIT}},
         0},
        {"exit alone", {{.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_DEBUG_EXIT},
                        {.kind = TB_ELEM_END}}, 1},
        {"IRQ, exit", {{.kind = TB_ELEM_EXCEPTION, .exc_num = 14, .pref_return = 0x1008},
                       {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_DEBUG_EXIT},
                       {.kind = TB_ELEM_END}}, 1},
        {"halt, overflow", {{.kind = TB_ELEM_EXCEPTION, .exc_num = 1, .pref_return = 0x1008},
                            {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_OVERFLOW},
                            {.kind = TB_ELEM_END}}, 1},
        {"halt, overflow, exit",
         {{.kind = TB_ELEM_EXCEPTION, .exc_num = 1, .pref_return = 0x1008},
          {.kind = TB_ELEM_NO_SYNC, .reason = TB_GAP_OVERFLOW},
          {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_DEBUG_EXIT}}, 2},
    };
    tb_memimage *m = arm_image();
    tb_element r1 = range(0x1000, 2, 0, 'E', TB_WP_NONE), r2 = range(0x1008, 2, 0, 'E', 0);

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_codecov *c = tb_codecov_new();

        cr_assert_eq(tb_codecov_begin(c, TB_PROTO_ETMV3, m), 0);
        cr_assert_eq(tb_codecov_element(c, &r1), 0);
        for (int k = 0; k < 3 && cases[i].seq[k].kind != TB_ELEM_END; k++)
            cr_assert_eq(tb_codecov_element(c, &cases[i].seq[k]), 0);
        cr_assert_eq(tb_codecov_element(c, &r2), 0);
        cr_assert_eq(tb_codecov_end(c), 0);
        cr_expect_eq(tb_codecov_gaps(c), cases[i].gaps, "%s: %llu gaps, want %llu",
                     cases[i].what, (unsigned long long)tb_codecov_gaps(c),
                     (unsigned long long)cases[i].gaps);
        tb_codecov_free(c);
    }
    tb_memimage_free(m);
}

/* ---- (c) ---- */

typedef struct row {
    uint32_t addr;
    char isa[8];
    unsigned long long count, passed, failed;
    int known;
} row;

/* tb_truthcov's lines.  Returns the count, -1 when it refused. */
static int truth_rows(const char *dir, bool all, row *out, int max)
{
    char cmd[1024], line[256];
    FILE *p;
    int n = 0;

    snprintf(cmd, sizeof cmd, "%s/tb_truthcov %s%s 2>/dev/null", TB_BINARY_DIR, dir,
             all ? " --all" : "");
    p = popen(cmd, "r");
    cr_assert(p);
    while (fgets(line, sizeof line, p) && n < max) {
        row *r = &out[n];

        cr_assert_eq(sscanf(line, "0x%x %7s %llu %llu %llu %d", &r->addr, r->isa, &r->count,
                            &r->passed, &r->failed, &r->known),
                     6, "tb_truthcov %s: %s", dir, line);
        n++;
    }
    cr_assert_lt(n, max);
    return pclose(p) == 0 ? n : -1;
}

/* `tracebench coverage DIR --format json`'s instructions (the form is
 * ours: cli/cmd_coverage.c put_json).  *complete from the object. */
static int decode_rows(const char *dir, const char *elf, row *out, int max, bool *complete)
{
    char args[2048], *o = NULL, *e = NULL, *s;
    int n = 0, rc;

    snprintf(args, sizeof args, "coverage %s --memory %s --format json --quiet", dir, elf);
    rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
    cr_assert(rc == 0 || rc == 5, "coverage %s: exit %d: %s", dir, rc, e);
    *complete = strstr(o, "\"complete\":true") != NULL;
    for (s = strstr(o, "{\"addr\":"); s && n < max; s = strstr(s + 1, "{\"addr\":")) {
        row *r = &out[n];
        int used = 0;

        memset(r, 0, sizeof *r);
        cr_assert_eq(sscanf(s, "{\"addr\":%u,\"isa\":\"%7[^\"]\",\"count\":%llu%n", &r->addr,
                            r->isa, &r->count, &used),
                     3, "%s: %.60s", dir, s);
        if (!strncmp(s + used, ",\"known\":false", 14))
            r->known = 0;
        else {
            cr_assert_eq(sscanf(s + used, ",\"passed\":%llu,\"failed\":%llu", &r->passed,
                                &r->failed),
                         2, "%s: %.80s", dir, s);
            r->known = 1;
        }
        n++;
    }
    cr_assert_lt(n, max);
    free(o);
    free(e);
    return n;
}

static bool has_file(const char *dir, const char *name)
{
    char p[1024];
    struct stat st;

    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

/* Whether the truth's last instruction (its last I record) ran more
 * often than the decode shows it: the run ended unseen. */
static bool tail_lost(const char *dir, const row *t, int nt, const row *d, int nd)
{
    char p[1024], line[256];
    unsigned addr, last = 0;
    bool have = false;
    FILE *f;

    snprintf(p, sizeof p, "%s/truth.txt", dir);
    f = fopen(p, "r");
    cr_assert(f, "%s", p);
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "%*u %*u I %x", &addr) == 1)
            last = addr, have = true;
    fclose(f);
    cr_assert(have);
    for (int i = 0; i < nt; i++) {
        if (t[i].addr != last)
            continue;
        for (int j = 0; j < nd; j++)
            if (d[j].addr == last && !strcmp(d[j].isa, t[i].isa))
                return d[j].count < t[i].count;
        return true;
    }
    return false;
}

/* The vector's program's ELF in this build, from its README's
 * `| program | `NAME` ...` row. */
static void program_elf(const char *dir, char *elf, size_t len)
{
    char p[1024], name[128];
    char *readme, *s;

    snprintf(p, sizeof p, "%s/README.md", dir);
    readme = tb_test_slurp(p, NULL);
    s = strstr(readme, "| program | `");
    cr_assert(s, "%s: no program row", p);
    cr_assert_eq(sscanf(s, "| program | `%127[^`]", name), 1);
    snprintf(elf, len, "%s/vectors/programs/%s.elf", TB_BINARY_DIR, name);
    free(readme);
}

static int proto_of(const char *name)
{
    return strstr(name, "-ptm") ? 0 : strstr(name, "-etmv1") ? 2 : strstr(name, "-etmv2") ? 3 : 1;
}

#define MAX_ROWS 8192

/* How many times decode.addr (the expected decode, tb_expect's, from the
 * truth alone) shows addr/isa as the last instruction before a `# gap`
 * line.  An overflow can lose the Cancel of an exception that cancelled
 * that instruction: the trace then shows it as run, and nothing in the
 * trace can tell (docs/vectors.md), so coverage counts it. */
static unsigned long long shown_before_gap(const char *dir, uint32_t addr, const char *isa)
{
    char path[1100], line[256], prev[256] = "";
    unsigned long long n = 0;
    FILE *f;

    snprintf(path, sizeof path, "%s/decode.addr", dir);
    if (!(f = fopen(path, "r")))
        return 0;
    while (fgets(line, sizeof line, f)) {
        unsigned a;
        char i[8];

        if (!strncmp(line, "# gap", 5) && sscanf(prev, "0x%x %7s", &a, i) == 2 && a == addr &&
            !strcmp(i, isa))
            n++;
        if (line[0] != '#')
            memcpy(prev, line, sizeof prev);
    }
    fclose(f);
    return n;
}

/* Whether decode.addr (tb_expect's, from the truth alone) has a debug
 * exit. */
static bool debug_exits(const char *dir)
{
    char path[1100], line[256];
    bool any = false;
    FILE *f;

    snprintf(path, sizeof path, "%s/decode.addr", dir);
    if (!(f = fopen(path, "r")))
        return false;
    while (!any && fgets(line, sizeof line, f))
        any = !strncmp(line, "# gap debug-exit", 16);
    fclose(f);
    return any;
}

Test(codecov, truth_equals_decode_on_vectors, .timeout = 600)
{
    static row t[MAX_ROWS], d[MAX_ROWS];
    static const char *const pname[] = {"PTM", "ETMv3", "ETMv1", "ETMv2"};
    char base[512], dir[1024], elf[1024];
    int per[4] = {0}, gapped = 0, checked = 0, tails = 0, dataonly = 0;
    struct dirent **names;
    int nn;

    snprintf(base, sizeof base, "%s/vectors/generated", TB_SOURCE_DIR);
    nn = scandir(base, &names, NULL, alphasort);
    cr_assert_gt(nn, 0);
    for (int k = 0; k < nn; k++) {
        const char *v = names[k]->d_name;
        bool complete;
        int nt, nd;

        snprintf(dir, sizeof dir, "%s/%s", base, v);
        if (v[0] == '.' || !has_file(dir, "truth.txt")) {
            free(names[k]);
            continue;
        }
        program_elf(dir, elf, sizeof elf);
        if (tb_test_vector_has_option(dir, "dataonly")) {
            /* ETMv3 data-only mode (ETMCR[20], IHI0014Q 7.4.10): the
             * trace has data transfers and no instruction, so coverage
             * shows nothing executed and must not read as complete,
             * while the truth ran code. */
            nt = truth_rows(dir, false, t, MAX_ROWS);
            nd = decode_rows(dir, elf, d, MAX_ROWS, &complete);
            cr_expect_gt(nt, 0, "%s: the truth ran nothing", v);
            cr_expect_eq(nd, 0, "%s: data-only trace, yet %d addresses decoded", v, nd);
            cr_expect(!complete, "%s: data-only trace, yet the coverage reads as complete", v);
            dataonly++;
            free(names[k]);
            continue;
        }
        if (has_file(dir, "filter.txt") || has_file(dir, "overflow.txt")) {
            /* Trace may have been off or lost: no address may show
             * more runs than the truth has, and when any shows fewer,
             * the report must say the coverage is incomplete. */
            bool missed = false;
            int j = 0;

            nt = truth_rows(dir, true, t, MAX_ROWS);
            nd = decode_rows(dir, elf, d, MAX_ROWS, &complete);
            if (nt < 0) {
                free(names[k]);
                continue;
            }
            for (int i = 0; i < nt; i++) {
                /* Instructions the truth never ran come first: only those
                 * a gap may have hidden the cancelling of. */
                while (j < nd && d[j].addr < t[i].addr) {
                    cr_expect_leq(d[j].count, shown_before_gap(dir, d[j].addr, d[j].isa),
                                  "%s: 0x%08X %s decoded %llu runs, the truth never ran it", v,
                                  d[j].addr, d[j].isa, d[j].count);
                    j++;
                }
                if (j < nd && d[j].addr == t[i].addr && !strcmp(d[j].isa, t[i].isa)) {
                    cr_expect_leq(d[j].count,
                                  t[i].count + shown_before_gap(dir, t[i].addr, t[i].isa),
                                  "%s: 0x%08X decoded %llu runs, the truth has %llu", v,
                                  t[i].addr, d[j].count, t[i].count);
                    missed |= d[j].count < t[i].count;
                    j++;
                } else {
                    missed = true;
                }
            }
            for (; j < nd; j++)
                cr_expect_leq(d[j].count, shown_before_gap(dir, d[j].addr, d[j].isa),
                              "%s: 0x%08X %s decoded %llu runs, the truth never ran it", v,
                              d[j].addr, d[j].isa, d[j].count);
            /* The trace's end is taken as the program's (codecov.h): a
             * run that went on unseen after trace went off for good
             * (lost-tail overflow, an exclude filter to the end) cannot
             * be told from one that stopped there. */
            if (missed && !complete) {
                gapped++;
            } else if (missed) {
                cr_expect(tail_lost(dir, t, nt, d, nd), "%s: the decode missed what ran, "
                                                        "yet the coverage reads as complete", v);
                tails++;
            }
            free(names[k]);
            continue;
        }
        nt = truth_rows(dir, false, t, MAX_ROWS);
        if (nt < 0) { /* several sources: tb_truthcov reads one */
            free(names[k]);
            continue;
        }
        nd = decode_rows(dir, elf, d, MAX_ROWS, &complete);
        /* A debug halt's exit (decode.addr's `# gap debug-exit`, from the
         * truth) with no halt shown before it, which the ETMv1 and ETMv2
         * ports never show: the decoder cannot tell that nothing ran
         * unseen, so the coverage must read as incomplete; after a shown
         * halt (ETMv3, PTM) it is complete (docs/debug-halt.md). */
        if (proto_of(v) >= 2 && debug_exits(dir))
            cr_expect(!complete, "%s: debug exits with no halt shown, yet the coverage reads "
                                 "as complete", v);
        else
            cr_expect(complete, "%s: no gaps, yet the coverage reads as incomplete", v);
        cr_expect_eq(nd, nt, "%s: %d addresses decoded, the truth has %d", v, nd, nt);
        for (int i = 0; i < nt && i < nd; i++) {
            cr_expect(t[i].addr == d[i].addr && !strcmp(t[i].isa, d[i].isa) &&
                          t[i].count == d[i].count && t[i].known == d[i].known &&
                          t[i].passed == d[i].passed && t[i].failed == d[i].failed,
                      "%s: truth 0x%08X %s ran %llu (E %llu N %llu known %d), decode 0x%08X %s "
                      "%llu (E %llu N %llu known %d)",
                      v, t[i].addr, t[i].isa, t[i].count, t[i].passed, t[i].failed, t[i].known,
                      d[i].addr, d[i].isa, d[i].count, d[i].passed, d[i].failed, d[i].known);
            if (!(t[i].addr == d[i].addr && t[i].count == d[i].count))
                break;
        }
        per[proto_of(v)]++;
        checked++;
        free(names[k]);
    }
    free(names);
    for (int p = 0; p < 4; p++)
        cr_expect_geq(per[p], 3, "only %d %s vectors checked", per[p], pname[p]);
    cr_expect_geq(gapped, 3);
    cr_expect_geq(dataonly, 1, "no data-only vector checked");
    fprintf(stderr, "codecov: %d vectors equal to the truth (PTM %d, ETMv3 %d, ETMv1 %d, "
                    "ETMv2 %d); %d that missed what ran read as incomplete; %d read as "
                    "complete lost only their tail; %d data-only read as no code seen\n",
            checked, per[0], per[1], per[2], per[3], gapped, tails, dataonly);
}

/* ---- (d) ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The distinct source lines of the truth's addresses, by the cross
 * binutils' addr2line (not our DWARF reader). */
static int truth_lines(const char *dir, const char *elf)
{
    static row t[MAX_ROWS];
    int nt = truth_rows(dir, false, t, MAX_ROWS), n = 0, distinct = 0;
    char *cmd, *out, *save = NULL, *lines[MAX_ROWS];
    size_t len = 64 + strlen(elf) + (size_t)nt * 12;

    cr_assert_gt(nt, 0);
    cmd = malloc(len);
    cr_assert(cmd);
    snprintf(cmd, len, "arm-none-eabi-addr2line -e %s", elf);
    for (int i = 0; i < nt; i++)
        snprintf(cmd + strlen(cmd), len - strlen(cmd), " 0x%x", t[i].addr);
    cr_assert_eq(tb_test_sh(cmd, &out), 0, "%s", out);
    for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *d = strstr(l, " (discriminator");

        if (d)
            *d = '\0';
        if (strstr(l, "??") || strstr(l, ":0"))
            continue;
        lines[n++] = l;
    }
    qsort(lines, (size_t)n, sizeof *lines, cmp_str);
    for (int i = 0; i < n; i++)
        distinct += !i || strcmp(lines[i], lines[i - 1]);
    free(out);
    free(cmd);
    return distinct;
}

Test(codecov, lcov_genhtml_and_summary, .timeout = 300)
{
    static const char *const vec[][2] = {
        {"funcptr-ptm-rs", "funcptr"}, {"data_loop-etmv3-ts-tsper", "data_loop"},
        {"cond_arm-etmv3", "cond_arm"}, {"cond_arm-etmv1-v0", "cond_arm"},
    };
    char tmp[] = "/tmp/tb_codecov_XXXXXX";

    cr_assert(mkdtemp(tmp));
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        char dir[1024], elf[1024], args[4096], cmd[4096], *o = NULL, *e = NULL, *s;
        unsigned hit = 0, total = 0;
        int rc, want;

        snprintf(dir, sizeof dir, "%s/vectors/generated/%s", TB_SOURCE_DIR, vec[i][0]);
        snprintf(elf, sizeof elf, "%s/vectors/programs/%s.elf", TB_BINARY_DIR, vec[i][1]);
        snprintf(args, sizeof args, "coverage %s --memory %s --format lcov -o %s/%zu.info", dir,
                 elf, tmp, i);
        rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
        cr_assert_eq(rc, 0, "%s: exit %d: %s", args, rc, e);
        free(o);
        free(e);
        /* genhtml: no warning, no error. */
        snprintf(cmd, sizeof cmd, "genhtml --branch-coverage -q -o %s/html%zu %s/%zu.info", tmp,
                 i, tmp, i);
        rc = tb_test_sh(cmd, &o);
        cr_expect_eq(rc, 0, "%s: %s", cmd, o);
        cr_expect(!strcasestr(o, "warning") && !strcasestr(o, "error"), "%s: %s", cmd, o);
        free(o);
        /* lcov --summary: the lines hit are the truth's lines. */
        snprintf(cmd, sizeof cmd, "lcov --summary --rc lcov_branch_coverage=1 %s/%zu.info", tmp,
                 i);
        rc = tb_test_sh(cmd, &o);
        cr_expect_eq(rc, 0, "%s: %s", cmd, o);
        s = strstr(o, "lines......:");
        cr_assert(s, "%s: %s", cmd, o);
        cr_assert_eq(sscanf(strchr(s, '(') ? strchr(s, '(') : s, "(%u of %u lines)", &hit, &total),
                     2, "%s", s);
        want = truth_lines(dir, elf);
        cr_expect_eq((int)hit, want, "%s: lcov has %u lines hit, addr2line on the truth %d",
                     vec[i][0], hit, want);
        cr_expect_gt(total, hit, "%s: every line hit?", vec[i][0]);
        free(o);
    }
    {
        char cmd[256], *o;

        snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
        (void)!tb_test_sh(cmd, &o);
        free(o);
    }
}

/* ---- (e) ---- */

static unsigned xml_attr(const char *xml, const char *name)
{
    char key[64];
    const char *s;
    unsigned v = 0;

    snprintf(key, sizeof key, " %s=\"", name);
    s = strstr(xml, key);
    cr_assert(s, "no %s in %.200s", name, xml);
    cr_assert_eq(sscanf(s + strlen(key), "%u", &v), 1);
    return v;
}

Test(codecov, cobertura_valid_and_equal_to_truth, .timeout = 300)
{
    static const char *const vec[][2] = {
        {"funcptr-ptm-rs", "funcptr"}, {"data_loop-etmv3-ts-tsper", "data_loop"},
        {"cond_arm-etmv3", "cond_arm"}, {"it_blocks-ptm", "it_blocks"},
    };
    char tmp[] = "/tmp/tb_codecov_XXXXXX";

    cr_assert(mkdtemp(tmp));
    for (size_t i = 0; i < sizeof vec / sizeof vec[0]; i++) {
        char dir[1024], elf[1024], args[4096], cmd[4096], xml_path[1100], *o = NULL, *e = NULL;
        char *xml, *s;
        unsigned bf = 0, bh = 0;
        int rc;

        snprintf(dir, sizeof dir, "%s/vectors/generated/%s", TB_SOURCE_DIR, vec[i][0]);
        snprintf(elf, sizeof elf, "%s/vectors/programs/%s.elf", TB_BINARY_DIR, vec[i][1]);
        snprintf(xml_path, sizeof xml_path, "%s/%zu.xml", tmp, i);
        snprintf(args, sizeof args, "coverage %s --memory %s --format cobertura -o %s", dir, elf,
                 xml_path);
        rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
        cr_assert_eq(rc, 0, "%s: exit %d: %s", args, rc, e);
        free(o);
        free(e);
        /* Valid by the DTD (xmllint says "validity error" otherwise);
         * --nonet: the DOCTYPE's URL is not fetched. */
        snprintf(cmd, sizeof cmd, "xmllint --nonet --noout --dtdvalid %s/tests/cobertura-04.dtd %s",
                 TB_SOURCE_DIR, xml_path);
        rc = tb_test_sh(cmd, &o);
        cr_expect_eq(rc, 0, "%s: %s", cmd, o);
        cr_expect(!strstr(o, "validity error") && !strstr(o, "parser error"), "%s: %s", cmd, o);
        free(o);
        xml = tb_test_slurp(xml_path, NULL);
        cr_assert(xml);
        cr_expect_eq((int)xml_attr(xml, "lines-covered"), truth_lines(dir, elf),
                     "%s: Cobertura's lines covered, addr2line on the truth", vec[i][0]);
        cr_expect_gt(xml_attr(xml, "lines-valid"), xml_attr(xml, "lines-covered"));
        /* Branches: lcov's BRF/BRH of the same run (PTM's unknown
         * conditions are in neither). */
        snprintf(args, sizeof args, "coverage %s --memory %s --format lcov", dir, elf);
        rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
        cr_assert_eq(rc, 0, "%s", e);
        for (s = strstr(o, "BRF:"); s; s = strstr(s + 1, "BRF:")) {
            unsigned f = 0, h = 0;

            cr_assert_eq(sscanf(s, "BRF:%u\nBRH:%u", &f, &h), 2);
            bf += f;
            bh += h;
        }
        cr_expect_eq(xml_attr(xml, "branches-valid"), bf, "%s", vec[i][0]);
        cr_expect_eq(xml_attr(xml, "branches-covered"), bh, "%s", vec[i][0]);
        free(o);
        free(e);
        free(xml);
    }
    {
        char cmd[256], *o;

        snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
        (void)!tb_test_sh(cmd, &o);
        free(o);
    }
}

/* An ELF that is not the traced program, a stripped one, one without
 * DWARF: said, never silent garbage. */
Test(codecov, bad_elf, .timeout = 120)
{
    char tmp[] = "/tmp/tb_codecov_XXXXXX", dir[1024], elf[1024], other[1024], args[4096];
    char cmd[4096], *o = NULL, *e = NULL;
    int rc;

    cr_assert(mkdtemp(tmp));
    snprintf(dir, sizeof dir, "%s/vectors/generated/funcptr-ptm-rs", TB_SOURCE_DIR);
    snprintf(elf, sizeof elf, "%s/vectors/programs/funcptr.elf", TB_BINARY_DIR);
    snprintf(other, sizeof other, "%s/vectors/programs/cond_arm.elf", TB_BINARY_DIR);

    snprintf(args, sizeof args, "coverage %s --memory %s", dir, other);
    rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
    cr_expect_eq(rc, 4, "another program's ELF: exit %d", rc);
    cr_expect(strstr(e, "not the program that ran"), "%s", e);
    free(o);
    free(e);

    snprintf(cmd, sizeof cmd, "arm-none-eabi-strip -o %s/s.elf %s && arm-none-eabi-strip "
                              "--strip-debug -o %s/d.elf %s", tmp, elf, tmp, elf);
    cr_assert_eq(tb_test_sh(cmd, &o), 0, "%s", o);
    free(o);
    snprintf(args, sizeof args, "coverage %s --memory %s/s.elf", dir, tmp);
    rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
    cr_expect_eq(rc, 0);
    cr_expect(strstr(e, "no symbol table (stripped)"), "%s", e);
    free(o);
    free(e);
    snprintf(args, sizeof args, "coverage %s --memory %s/d.elf --format lcov", dir, tmp);
    rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
    cr_expect_eq(rc, 4, "lcov without DWARF: exit %d", rc);
    cr_expect(strstr(e, "no DWARF line table"), "%s", e);
    cr_expect_eq(o[0], '\0', "lcov without DWARF wrote: %s", o);
    free(o);
    free(e);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    (void)!tb_test_sh(cmd, &o);
    free(o);
}

/* Bad command lines: exit 2 and one line naming the argument; inputs
 * that will not load: exit 4 naming them. */
typedef struct cli_case {
    const char *args; /* after "coverage VECTOR" */
    int rc;
    const char *says;
} cli_case;

Test(codecov, cli_errors)
{
    static const cli_case cases[] = {
        {"--format xml", 2, "--format xml: use text, json, lcov or cobertura"},
        {"--format cobertura", 2, "--format cobertura needs the program's ELF"},
        {"--format lcov", 2, "--format lcov needs the program's ELF"},
        {"--bogus", 2, "unknown option '--bogus'"},
        {"--format", 2, "--format needs a value"},
        {"--memory 0x0:mem.bin", 2, "a memory dump is for a raw trace file"},
        {"--memory /nonexistent.elf", 4, "/nonexistent.elf: cannot be read"},
        {"--memory " TB_SOURCE_DIR "/README.md", 4, "not a 32-bit ELF file"},
        {"-o /nonexistent/dir/x", 4, "-o /nonexistent/dir/x"},
        {"--id 0x22", 4, "no trace source with trace ID 0x22"},
    };
    char args[2048], *o, *e;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc;

        snprintf(args, sizeof args, "coverage %s/vectors/generated/funcptr-ptm-rs %s",
                 TB_SOURCE_DIR, cases[i].args);
        rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
        cr_expect_eq(rc, cases[i].rc, "%s: exit %d, want %d", cases[i].args, rc, cases[i].rc);
        cr_expect(strstr(e, cases[i].says), "%s: stderr '%s' does not say '%s'", cases[i].args,
                  e, cases[i].says);
        free(o);
        free(e);
    }
    cr_expect_eq(tb_test_run_cli("coverage", NULL, &o, NULL, &e), 2);
    free(o);
    free(e);
}

/* A data-only source (ETMCR[20]) shows no code: coverage and profile
 * say why, naming the mode, and --quiet keeps it quiet; an instruction
 * trace never gets that note. */
Test(codecov, data_only_note)
{
    static const struct {
        const char *cmd, *vector, *extra;
        bool note;
    } cases[] = {
        {"coverage", "data_ops-etmv3-dataonly", "", true},
        {"profile", "data_ops-etmv3-dataonly", "", true},
        {"coverage", "data_ops-etmv3-dataonly", "--quiet", false},
        {"coverage", "funcptr-ptm-rs", "", false},
    };
    char args[2048], *o, *e;

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc;

        snprintf(args, sizeof args, "%s %s/vectors/generated/%s -o /dev/null %s", cases[i].cmd,
                 TB_SOURCE_DIR, cases[i].vector, cases[i].extra);
        rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
        cr_expect_eq(rc, 0, "%s: exit %d: %s", args, rc, e);
        cr_expect_eq(strstr(e, "is data-only trace (ETMCR[20])") != NULL, cases[i].note,
                     "%s: stderr '%s' %s the data-only note", args, e,
                     cases[i].note ? "lacks" : "has");
        free(o);
        free(e);
    }
}

/* Memory is bounded: at its limit the block table folds into the
 * per-instruction table and starts again, with the same counts as a
 * table that never fills. */
Test(codecov, bounded_block_table_same_counts)
{
    uint8_t code[4096];
    tb_memimage *m = tb_memimage_new();
    tb_codecov *big = tb_codecov_new(), *small = tb_codecov_new();
    const tb_codecov_insn *a, *b;
    size_t na, nb;

    for (size_t i = 0; i < sizeof code; i += 4)
        code[i] = 0x01, code[i + 1] = 0x00, code[i + 2] = 0x80, code[i + 3] = 0x10; /* ADDNE */
    cr_assert_eq(tb_memimage_add(m, 0x8000, code, sizeof code), 0);
    cr_assert_eq(tb_codecov_set_max_blocks(small, 4096), 0);
    cr_assert_eq(tb_codecov_set_max_blocks(small, 1000), TB_ERR_INVAL);
    cr_assert_eq(tb_codecov_begin(big, TB_PROTO_ETMV3, m), 0);
    cr_assert_eq(tb_codecov_begin(small, TB_PROTO_ETMV3, m), 0);
    /* 1024 starts x 8 lengths x 2 atom patterns: 16384 distinct blocks,
     * four times the small table's limit, each seen twice. */
    for (int rep = 0; rep < 2; rep++)
        for (uint32_t s = 0; s < 1024; s++)
            for (uint32_t n = 1; n <= 8; n++)
                for (uint32_t bits = 0; bits < 2; bits++) {
                    uint32_t start = 0x8000 + 4 * ((s * 7) % (1024 - 8));
                    tb_element el = range(start, n, bits, bits ? 'N' : 'E', TB_WP_NONE);

                    cr_assert_eq(tb_codecov_element(big, &el), 0);
                    cr_assert_eq(tb_codecov_element(small, &el), 0);
                }
    cr_assert_eq(tb_codecov_end(big), 0);
    cr_assert_eq(tb_codecov_end(small), 0);
    a = tb_codecov_insns(big, &na);
    b = tb_codecov_insns(small, &nb);
    cr_assert_eq(na, nb);
    cr_assert_gt(na, 1000);
    for (size_t i = 0; i < na; i++)
        cr_expect(a[i].addr == b[i].addr && a[i].count == b[i].count &&
                      a[i].passed == b[i].passed && a[i].failed == b[i].failed &&
                      a[i].flags == b[i].flags,
                  "0x%08X: %llu/%llu/%llu vs 0x%08X: %llu/%llu/%llu", a[i].addr,
                  (unsigned long long)a[i].count, (unsigned long long)a[i].passed,
                  (unsigned long long)a[i].failed, b[i].addr, (unsigned long long)b[i].count,
                  (unsigned long long)b[i].passed, (unsigned long long)b[i].failed);
    tb_codecov_free(big);
    tb_codecov_free(small);
    tb_memimage_free(m);
}

/* The elfinfo fuzz harness's regression inputs (fuzz/regressions/elfinfo,
 * README there): each loads or is refused with a known error, and what
 * loads keeps the harness's invariants (fuzz/fuzz_elfinfo.c): line rows
 * non-empty with a known file, functions sorted. */
Test(elfinfo, fuzz_regressions)
{
    char dir[1024], path[1400], err[256];
    DIR *d;
    struct dirent *de;
    int n = 0;

    snprintf(dir, sizeof dir, "%s/fuzz/regressions/elfinfo", TB_SOURCE_DIR);
    d = opendir(dir);
    cr_assert_not_null(d, "no %s", dir);
    while ((de = readdir(d)) != NULL) {
        tb_elfinfo *e = NULL;
        uint8_t *data;
        size_t len;
        int rc;

        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        data = tb_test_read_file(path, &len);
        cr_assert_not_null(data, "cannot read %s", path);
        rc = tb_elfinfo_load_mem(data, len, &e, err, sizeof err);
        if (rc == TB_ERR_UNSUPPORTED) {
            free(data);
            closedir(d);
            cr_skip_test("built without elfutils' libdw");
        }
        cr_assert(rc == 0 || rc == TB_ERR_FORMAT, "%s: load returned %d (%s)", path, rc, err);
        for (size_t i = 0; rc == 0 && i < e->nlines; i++)
            cr_assert(e->lines[i].lo < e->lines[i].hi && e->lines[i].file < e->nfiles,
                      "%s: line row %zu [0x%x, 0x%x) file %u of %zu", path, i,
                      (unsigned)e->lines[i].lo, (unsigned)e->lines[i].hi,
                      (unsigned)e->lines[i].file, e->nfiles);
        for (size_t i = 1; rc == 0 && i < e->nfuncs; i++)
            cr_assert(e->funcs[i - 1].lo < e->funcs[i].lo, "%s: functions not sorted at %zu",
                      path, i);
        tb_elfinfo_free(e);
        free(data);
        n++;
    }
    closedir(d);
    cr_assert_gt(n, 0, "no regression inputs in %s", dir);
}
