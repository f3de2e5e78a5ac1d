/*
 * Profiles (analysis/profile.c, `tracebench profile`).
 *
 * (a) The accumulator on elements written here, expectations worked by
 *     hand from profile.h's rules: calls and returns by return address,
 *     an exception edge, a gap emptying the stack, the depth bound.
 * (b) On every committed PTM and ETMv3 vector of one source without gaps
 *     (vectors/generated), the callgrind output's exclusive instructions
 *     per function, calls and inclusive instructions per caller/callee
 *     pair and total equal those tb_truthprof (vectors/truthprof.c,
 *     linking nothing of tracebench) computes from the emulator's
 *     truth.txt and the ELF's symbols as arm-none-eabi-readelf lists
 *     them; callgrind_annotate (valgrind) reads the file with the same
 *     total (skipped loudly when absent, failed under CI=true).
 *     The same for examples/program/irq_counter.c (-g, built by its
 *     build.sh) run by `tracebench sim` for PTM and ETMv3, with and
 *     without cycle accuracy.
 * (c) Folded stacks sum to the total; bad ELFs are said.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb_test.h"
#include "tb_truth.h"
#include "tracebench/profile.h"
#include "tracebench/snapshot.h"

/* ---- (a) ---- */

/* ARM NOPs (MOV r0,r0) at 0x1000..0x1FFF. */
static tb_memimage *nop_image(void)
{
    static uint8_t code[4096];
    tb_memimage *m = tb_memimage_new();

    for (size_t i = 0; i < sizeof code; i += 4)
        code[i] = 0x00, code[i + 1] = 0x00, code[i + 2] = 0xA0, code[i + 3] = 0xE1;
    cr_assert(m);
    cr_assert_eq(tb_memimage_add(m, 0x1000, code, sizeof code), 0);
    return m;
}

/* A range of count ARM instructions at start, its last one a waypoint
 * of class wp, E. */
static tb_element arm_range(uint32_t start, uint32_t count, uint8_t wp)
{
    return (tb_element){.kind = TB_ELEM_INSN_RANGE, .isa = TB_ISA_ARM, .start = start,
                        .end = start + 4 * count, .count = count,
                        .last_addr = start + 4 * (count - 1), .last_size = 4, .last_wp = wp,
                        .last_atom = 'E'};
}

static const tb_profile_call *find_call(const tb_profile_call *c, size_t n, uint32_t caller,
                                        uint32_t callee)
{
    for (size_t i = 0; i < n; i++)
        if (c[i].caller == caller && c[i].callee == callee)
            return &c[i];
    return NULL;
}

static uint64_t func_insns(const tb_profile_insn *in, size_t n, uint32_t func)
{
    uint64_t s = 0;

    for (size_t i = 0; i < n; i++)
        if (in[i].func == func)
            s += in[i].count;
    return s;
}

Test(profile, calls_returns_exception_gap)
{
    tb_memimage *m = nop_image();
    tb_profile *p = tb_profile_new();
    const tb_profile_call *c, *e;
    const tb_profile_insn *in;
    size_t nc, ni;
    tb_profile_stats st;
    tb_element el;

    /* main [0x1000,0x1100) a symbol; f at 0x1800 none. */
    cr_assert_eq(tb_profile_add_func(p, 0x1000, 0x1100), 0);
    cr_assert_eq(tb_profile_begin(p, TB_PROTO_ETMV3, m), 0);
    el = arm_range(0x1000, 4, TB_WP_DIRECT_LINK); /* main: 4, BL at 0x100C */
    cr_assert_eq(tb_profile_element(p, &el), 0);
    el = arm_range(0x1800, 3, TB_WP_DIRECT_LINK); /* f: 3, BL again at 0x1808 */
    cr_assert_eq(tb_profile_element(p, &el), 0);
    el = arm_range(0x1900, 2, TB_WP_INDIRECT); /* g: 2, returns */
    cr_assert_eq(tb_profile_element(p, &el), 0);
    el = arm_range(0x180C, 2, TB_WP_INDIRECT); /* f again: 2, returns */
    cr_assert_eq(tb_profile_element(p, &el), 0);
    el = arm_range(0x1010, 1, TB_WP_NONE); /* main: 1 */
    cr_assert_eq(tb_profile_element(p, &el), 0);
    el = (tb_element){.kind = TB_ELEM_EXCEPTION, .pref_return = 0x1014};
    cr_assert_eq(tb_profile_element(p, &el), 0);
    el = arm_range(0x1018 + 0x800, 5, TB_WP_INDIRECT); /* handler 0x1818: 5 */
    cr_assert_eq(tb_profile_element(p, &el), 0);
    el = arm_range(0x1014, 2, TB_WP_DIRECT_LINK); /* main: 2, BL at 0x1018 */
    cr_assert_eq(tb_profile_element(p, &el), 0);
    el = arm_range(0x1A00, 7, TB_WP_NONE); /* h: 7, then the trace is lost */
    cr_assert_eq(tb_profile_element(p, &el), 0);
    el = (tb_element){.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_OVERFLOW};
    cr_assert_eq(tb_profile_element(p, &el), 0);
    el = arm_range(0x101C, 3, TB_WP_NONE); /* a return after the gap: not one */
    cr_assert_eq(tb_profile_element(p, &el), 0);
    cr_assert_eq(tb_profile_end(p), 0);

    st = tb_profile_get_stats(p);
    cr_expect_eq(st.insns, 4 + 3 + 2 + 2 + 1 + 5 + 2 + 7 + 3);
    cr_expect_eq(st.gaps, 1);
    cr_expect(!st.has_cycles);
    in = tb_profile_insns(p, &ni);
    c = tb_profile_calls(p, &nc);
    cr_expect_eq(func_insns(in, ni, 0x1000), 4 + 1 + 2 + 3);
    cr_expect_eq(func_insns(in, ni, 0x1800), 3 + 2);
    cr_expect_eq(func_insns(in, ni, 0x1900), 2);
    cr_expect_eq(func_insns(in, ni, 0x1818), 5);
    cr_expect_eq(func_insns(in, ni, 0x1A00), 7);
    cr_assert_eq(nc, 4);
    e = find_call(c, nc, 0x1000, 0x1800);
    cr_assert(e);
    cr_expect(e->calls == 1 && e->insns == 3 + 2 + 2 && e->site == 0x100C &&
              e->kind == TB_PROFILE_CALL);
    e = find_call(c, nc, 0x1800, 0x1900);
    cr_assert(e);
    cr_expect(e->calls == 1 && e->insns == 2 && e->site == 0x1808);
    e = find_call(c, nc, 0x1000, 0x1818);
    cr_assert(e);
    cr_expect(e->calls == 1 && e->insns == 5 && e->kind == TB_PROFILE_EXC && e->site == 0x1010);
    /* h's frame ends at the gap: 7 instructions. */
    e = find_call(c, nc, 0x1000, 0x1A00);
    cr_assert(e);
    cr_expect(e->calls == 1 && e->insns == 7);
    /* Stacks: main / main;f / main;f;g / main;exc / main;h / [gap] main. */
    {
        size_t ns;
        const tb_profile_stack *s = tb_profile_stacks(p, &ns);
        uint64_t gap_insns = 0, sum = 0;

        for (size_t i = 0; i < ns; i++) {
            uint32_t fr[8];
            unsigned root = 99;
            int d = tb_profile_frames(p, s[i].node, fr, 8, &root);

            cr_assert_gt(d, 0);
            sum += s[i].insns;
            if (root == TB_PROFILE_ROOT_GAP) {
                cr_expect_eq(d, 1);
                cr_expect_eq(fr[0], 0x1000);
                gap_insns += s[i].insns;
            }
            if (d == 3)
                cr_expect(fr[0] == 0x1000 && fr[1] == 0x1800 && fr[2] == 0x1900 &&
                          s[i].insns == 2);
        }
        cr_expect_eq(gap_insns, 3);
        cr_expect_eq(sum, st.insns);
    }
    tb_profile_free(p);
    tb_memimage_free(m);
}

/* Debug halts (docs/debug-halt.md): the halt (exception 1, IHI0014Q
 * 7.3.5, IHI0035B 4.5.4) and its exit (I-sync reason b11) are neither an
 * edge nor a gap: a halt right after a BL leaves the call to be entered
 * by the callee's first instruction; a restart at another address than
 * the halt's (ETMv3: an exception taken at the restart shows only as the
 * exit's I-sync at its vector) is that exception's edge; an exit whose
 * halt was not shown is a gap. */
Test(profile, debug_halt_no_edge)
{
    tb_memimage *m = nop_image();
    tb_profile *p = tb_profile_new();
    const tb_profile_call *c, *e;
    size_t nc;
    tb_element el, halt = {.kind = TB_ELEM_EXCEPTION, .exc_num = 1},
                   exit = {.kind = TB_ELEM_TRACE_ON, .reason = TB_ISYNC_DEBUG_EXIT};

    cr_assert_eq(tb_profile_add_func(p, 0x1000, 0x1100), 0);
    cr_assert_eq(tb_profile_begin(p, TB_PROTO_ETMV3, m), 0);
    el = arm_range(0x1000, 4, TB_WP_DIRECT_LINK); /* main: 4, BL f at 0x100C */
    cr_assert_eq(tb_profile_element(p, &el), 0);
    halt.pref_return = 0x1800; /* halted at f's first instruction */
    cr_assert_eq(tb_profile_element(p, &halt), 0);
    cr_assert_eq(tb_profile_element(p, &exit), 0);
    el = arm_range(0x1800, 3, TB_WP_NONE); /* f: 3 */
    cr_assert_eq(tb_profile_element(p, &el), 0);
    halt.pref_return = 0x180C; /* halted again in f; an IRQ at the restart */
    cr_assert_eq(tb_profile_element(p, &halt), 0);
    cr_assert_eq(tb_profile_element(p, &exit), 0);
    el = arm_range(0x1C00, 2, TB_WP_INDIRECT); /* the IRQ handler: 2, returns */
    cr_assert_eq(tb_profile_element(p, &el), 0);
    el = arm_range(0x180C, 2, TB_WP_INDIRECT); /* f: 2, returns to main */
    cr_assert_eq(tb_profile_element(p, &el), 0);
    el = arm_range(0x1010, 1, TB_WP_NONE); /* main: 1 */
    cr_assert_eq(tb_profile_element(p, &el), 0);
    cr_assert_eq(tb_profile_element(p, &exit), 0); /* an exit, no halt shown */
    el = arm_range(0x1014, 1, TB_WP_NONE);
    cr_assert_eq(tb_profile_element(p, &el), 0);
    cr_assert_eq(tb_profile_end(p), 0);

    cr_expect_eq(tb_profile_get_stats(p).gaps, 1);
    c = tb_profile_calls(p, &nc);
    cr_expect_eq(nc, 2);
    e = find_call(c, nc, 0x1000, 0x1800);
    cr_assert(e, "the call to f");
    cr_expect(e->calls == 1 && e->kind == TB_PROFILE_CALL && e->insns == 3 + 2 + 2,
              "calls %llu insns %llu kind %u", (unsigned long long)e->calls,
              (unsigned long long)e->insns, (unsigned)e->kind);
    e = find_call(c, nc, 0x1800, 0x1C00);
    cr_assert(e, "the IRQ taken at the restart");
    cr_expect(e->calls == 1 && e->kind == TB_PROFILE_EXC && e->insns == 2);
    tb_profile_free(p);
    tb_memimage_free(m);
}

/* Deeper than TB_PROFILE_MAX_DEPTH: calls counted, no frames pushed, and
 * the returns of the frames that were pushed still match. */
Test(profile, depth_bound)
{
    tb_memimage *m = nop_image();
    tb_profile *p = tb_profile_new();
    const unsigned extra = 10, n = TB_PROFILE_MAX_DEPTH + extra;
    const tb_profile_call *c;
    size_t nc;
    tb_element el;

    cr_assert_eq(tb_profile_begin(p, TB_PROTO_PTM, m), 0);
    el = arm_range(0x1000, 1, TB_WP_DIRECT_LINK); /* the root calls r */
    cr_assert_eq(tb_profile_element(p, &el), 0);
    /* r at 0x1100: BL r at 0x1100 itself, n times, returning to 0x1104. */
    for (unsigned i = 0; i < n; i++) {
        el = arm_range(0x1100, 1, TB_WP_DIRECT_LINK);
        cr_assert_eq(tb_profile_element(p, &el), 0);
    }
    el = arm_range(0x1100, 1, TB_WP_NONE);
    cr_assert_eq(tb_profile_element(p, &el), 0);
    el = arm_range(0x1104, 1, TB_WP_INDIRECT); /* returns, one per frame */
    for (unsigned i = 0; i < TB_PROFILE_MAX_DEPTH; i++)
        cr_assert_eq(tb_profile_element(p, &el), 0);
    cr_assert_eq(tb_profile_end(p), 0);
    cr_expect_eq(tb_profile_get_stats(p).deep_calls, extra + 1);
    c = tb_profile_calls(p, &nc);
    cr_assert_eq(nc, 2);
    cr_expect_eq(find_call(c, nc, 0x1100, 0x1100)->calls, n);
    cr_expect_eq(find_call(c, nc, 0x1000, 0x1100)->calls, 1);
    tb_profile_free(p);
    tb_memimage_free(m);
}

/* Memory is bounded: at its limit the block table unfolds into the
 * per-instruction and per-stack tables and starts again, with the same
 * counts as a table that never fills. */
Test(profile, bounded_block_table_same_counts)
{
    tb_memimage *m = nop_image();
    tb_profile *big = tb_profile_new(), *small = tb_profile_new();
    const tb_profile_insn *a, *b;
    const tb_profile_stack *sa, *sb;
    size_t na, nb, nsa, nsb;

    cr_assert_eq(tb_profile_set_max_blocks(small, 4096), 0);
    cr_assert_eq(tb_profile_set_max_blocks(small, 1000), TB_ERR_INVAL);
    cr_assert_eq(tb_profile_begin(big, TB_PROTO_ETMV3, m), 0);
    cr_assert_eq(tb_profile_begin(small, TB_PROTO_ETMV3, m), 0);
    /* 1000 starts x 16 lengths, each seen twice, some calling: 16000
     * distinct blocks under a few stacks, four times the small limit. */
    for (int rep = 0; rep < 2; rep++)
        for (uint32_t s = 0; s < 1000; s++)
            for (uint32_t n = 1; n <= 16; n++) {
                tb_element el = arm_range(0x1000 + 4 * s, n,
                                          (s % 97) == 0 && n == 1 ? TB_WP_DIRECT_LINK
                                          : n == 16              ? TB_WP_INDIRECT
                                                                 : TB_WP_DIRECT);

                cr_assert_eq(tb_profile_element(big, &el), 0);
                cr_assert_eq(tb_profile_element(small, &el), 0);
            }
    cr_assert_eq(tb_profile_end(big), 0);
    cr_assert_eq(tb_profile_end(small), 0);
    a = tb_profile_insns(big, &na);
    b = tb_profile_insns(small, &nb);
    cr_assert_eq(na, nb);
    cr_assert_gt(na, 1000);
    for (size_t i = 0; i < na; i++)
        cr_expect(a[i].func == b[i].func && a[i].addr == b[i].addr && a[i].count == b[i].count,
                  "0x%08X in 0x%08X: %llu vs 0x%08X in 0x%08X: %llu", a[i].addr, a[i].func,
                  (unsigned long long)a[i].count, b[i].addr, b[i].func,
                  (unsigned long long)b[i].count);
    sa = tb_profile_stacks(big, &nsa);
    sb = tb_profile_stacks(small, &nsb);
    cr_assert_eq(nsa, nsb);
    cr_assert_gt(nsa, 1);
    for (size_t i = 0; i < nsa; i++)
        cr_expect(sa[i].node == sb[i].node && sa[i].leaf == sb[i].leaf &&
                  sa[i].insns == sb[i].insns);
    cr_expect_eq(tb_profile_get_stats(big).insns, tb_profile_get_stats(small).insns);
    tb_profile_free(big);
    tb_profile_free(small);
    tb_memimage_free(m);
}

/* ---- (b) ---- */

static bool has_file(const char *dir, const char *name)
{
    char p[1100];
    struct stat st;

    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

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

/* callgrind_annotate's PROGRAM TOTALS line. */
static unsigned long long annotate_total(const char *path)
{
    char cmd[2048], *o, *s;
    unsigned long long t = 0;
    int rc;

    snprintf(cmd, sizeof cmd, "callgrind_annotate %s", path);
    rc = tb_test_sh(cmd, &o);
    cr_assert_eq(rc, 0, "%s: %s", cmd, o);
    s = strstr(o, "PROGRAM TOTALS");
    cr_assert(s, "%s: %s", cmd, o);
    while (s > o && s[-1] != '\n')
        s--;
    while (*s == ' ')
        s++;
    /* "3,000 (100.0%)  PROGRAM TOTALS" (or without the percentage) */
    for (; *s && *s != ' ' && *s != '('; s++)
        if (*s >= '0' && *s <= '9')
            t = t * 10 + (unsigned long long)(*s - '0');
    free(o);
    return t;
}

Test(profile, truth_equals_callgrind_on_vectors, .timeout = 900)
{
    static tb_prof t, d;
    char base[512], tmp[] = "/tmp/tb_profile_XXXXXX";
    struct dirent **names;
    int nn, per[2] = {0}, annotated = 0, nonsym = 0, dataonly = 0;
    bool annotate = system("command -v callgrind_annotate >/dev/null 2>&1") == 0;
    const char *ci = getenv("CI");

    if (!annotate) {
        fprintf(stderr, "profile: SKIPPING the callgrind_annotate check: callgrind_annotate "
                        "(Debian: valgrind, scripts/deps.sh) is not installed\n");
        cr_expect(!(ci && !strcmp(ci, "true")), "CI=true needs callgrind_annotate (valgrind)");
    }
    cr_assert(mkdtemp(tmp));
    snprintf(base, sizeof base, "%s/vectors/generated", TB_SOURCE_DIR);
    nn = scandir(base, &names, NULL, alphasort);
    cr_assert_gt(nn, 0);
    for (int k = 0; k < nn; k++) {
        const char *v = names[k]->d_name;
        char dir[1024], elf[1024], syms[1100], cg[1100], cmd[4096], args[4096], *o, *e;
        int rc;

        snprintf(dir, sizeof dir, "%s/%s", base, v);
        if (v[0] == '.' || !has_file(dir, "truth.txt") ||
            (!strstr(v, "-ptm") && !strstr(v, "-etmv3"))) {
            free(names[k]);
            continue;
        }
        program_elf(dir, elf, sizeof elf);
        snprintf(syms, sizeof syms, "%s/%s.syms", tmp, v);
        snprintf(cmd, sizeof cmd, "arm-none-eabi-readelf -sSW %s > %s", elf, syms);
        cr_assert_eq(system(cmd), 0, "%s", cmd);
        if (!tb_prof_truth(dir, syms, &t)) { /* gaps, several sources */
            free(names[k]);
            continue;
        }
        snprintf(cg, sizeof cg, "%s/%s.cg", tmp, v);
        snprintf(args, sizeof args, "profile %s --memory %s --format callgrind -o %s --quiet",
                 dir, elf, cg);
        rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
        cr_assert(rc == 0, "%s: exit %d: %s", args, rc, e);
        free(o);
        free(e);
        tb_prof_callgrind(cg, &d);
        if (tb_test_vector_has_option(dir, "dataonly")) {
            /* ETMv3 data-only mode (ETMCR[20], IHI0014Q 7.4.10): no
             * instruction is traced, so the profile has none, while
             * the truth ran code. */
            cr_expect_gt(t.total, 0, "%s: the truth ran nothing", v);
            cr_expect(d.total == 0 && d.nf == 0, "%s: data-only trace, yet the profile has "
                      "%llu instructions in %d functions", v, d.total, d.nf);
            dataonly++;
            free(names[k]);
            continue;
        }
        tb_prof_expect_equal(v, &t, &d);
        for (int i = 0; i < t.nf; i++)
            nonsym += !strncmp(t.f[i].name, "0x", 2);
        if (annotate && annotated < 12) {
            unsigned long long a = annotate_total(cg);

            cr_expect_eq(a, t.total, "%s: callgrind_annotate's total %llu, the truth %llu", v, a,
                         t.total);
            annotated++;
        }
        per[strstr(v, "-ptm") ? 0 : 1]++;
        free(names[k]);
    }
    free(names);
    cr_expect_geq(per[0], 3, "only %d PTM vectors", per[0]);
    cr_expect_geq(per[1], 3, "only %d ETMv3 vectors", per[1]);
    cr_expect_gt(nonsym, 0, "no vector has code outside the symbols (entry-address names)");
    cr_expect_geq(dataonly, 1, "no data-only vector checked");
    fprintf(stderr, "profile: %d PTM and %d ETMv3 vectors equal to the truth; "
                    "callgrind_annotate's total checked on %d; %d functions named by entry "
                    "address\n", per[0], per[1], annotated, nonsym);
    {
        char cmd[256], *o;

        snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
        (void)!tb_test_sh(cmd, &o);
        free(o);
    }
}

/* examples/program/irq_counter.c, a -g C program of one's own built with
 * its documented build.sh, run by `tracebench sim` for each protocol:
 * the profile equals the truth's, with its interrupt handler's calls. */
Test(profile, example_program_equals_truth, .timeout = 300)
{
    static const char *const protos[] = {"ptm", "etmv3", "ptm --options ca",
                                         "etmv3 --options ca"};
    char tmp[] = "/tmp/tb_profile_XXXXXX", cmd[4096], *o, *e;
    static tb_prof t, d;

    cr_assert(mkdtemp(tmp));
    snprintf(cmd, sizeof cmd, "sh %s/examples/program/build.sh %s/irq.elf && "
                              "arm-none-eabi-readelf -sSW %s/irq.elf > %s/syms",
             TB_SOURCE_DIR, tmp, tmp, tmp);
    cr_assert_eq(tb_test_sh(cmd, &o), 0, "%s: %s", cmd, o);
    free(o);
    for (size_t i = 0; i < sizeof protos / sizeof protos[0]; i++) {
        char args[4096], dir[1100], cg[1100], syms[1100];
        int rc;
        bool has_exc = false;

        snprintf(dir, sizeof dir, "%s/snap%zu", tmp, i);
        snprintf(cg, sizeof cg, "%s/%zu.cg", tmp, i);
        snprintf(syms, sizeof syms, "%s/syms", tmp);
        snprintf(args, sizeof args, "sim %s/irq.elf --scenario %s/examples/program/"
                                    "irq_counter.ini --protocol %s --out %s --truth %s/truth.txt "
                                    "--quiet", tmp, TB_SOURCE_DIR, protos[i], dir, dir);
        rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
        cr_assert_eq(rc, 0, "%s: %s", args, e);
        free(o);
        free(e);
        cr_assert(tb_prof_truth(dir, syms, &t), "%s: tb_truthprof refused it", dir);
        snprintf(args, sizeof args, "profile %s --memory %s/irq.elf --format callgrind -o %s",
                 dir, tmp, cg);
        rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
        cr_assert_eq(rc, 0, "%s: %s", args, e);
        free(o);
        free(e);
        tb_prof_callgrind(cg, &d);
        tb_prof_expect_equal(protos[i], &t, &d);
        for (int k = 0; k < t.nc; k++)
            has_exc |= !strcmp(t.c[k].callee, "0x00000018");
        cr_expect(has_exc, "%s: no interrupt in the truth's calls", protos[i]);
        if (strstr(protos[i], "ca")) {
            char *txt = tb_test_slurp(cg, NULL);

            cr_expect(strstr(txt, "events: Instructions Cycles\n"), "%s", protos[i]);
            free(txt);
        }
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    (void)!tb_test_sh(cmd, &o);
    free(o);
}

/* ---- (c) ---- */

Test(profile, folded_sums_and_cycles)
{
    char args[2048], *o, *e;
    unsigned long long sum = 0, total = 0;
    int rc;

    snprintf(args, sizeof args, "profile %s/vectors/generated/recursion-ptm-rs --memory "
                                "%s/vectors/programs/recursion.elf --format folded",
             TB_SOURCE_DIR, TB_BINARY_DIR);
    rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
    cr_assert_eq(rc, 0, "%s", e);
    cr_expect(strstr(o, "_reset;main;fib;fib;fib "), "%s", o);
    for (char *l = o; *l;) {
        char *nl = strchr(l, '\n'), *sp;

        cr_assert(nl);
        *nl = '\0';
        sp = strrchr(l, ' ');
        cr_assert(sp, "%s", l);
        sum += strtoull(sp + 1, NULL, 10);
        cr_expect(!strncmp(l, "_reset", 6), "a stack not from _reset: %s", l);
        l = nl + 1;
    }
    free(o);
    free(e);
    snprintf(args, sizeof args, "profile %s/vectors/generated/recursion-ptm-rs", TB_SOURCE_DIR);
    rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
    cr_assert_eq(rc, 0, "%s", e);
    cr_assert_eq(sscanf(strstr(o, "instructions: "), "instructions: %llu", &total), 1);
    cr_expect_eq(sum, total);
    cr_expect(strstr(o, "not cycle-accurate"), "%s", o);
    free(o);
    free(e);
    /* A cycle-accurate trace: cycles as a second event. */
    snprintf(args, sizeof args, "profile %s/vectors/generated/cond_arm-etmv30-ca --format "
                                "callgrind", TB_SOURCE_DIR);
    rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
    cr_assert_eq(rc, 0, "%s", e);
    cr_expect(strstr(o, "events: Instructions Cycles\n"), "%s", o);
    free(o);
    free(e);
}

Test(profile, bad_elf, .timeout = 120)
{
    char tmp[] = "/tmp/tb_profile_XXXXXX", dir[1024], elf[1024], other[1024], args[4096];
    char cmd[4096], *o = NULL, *e = NULL;
    int rc;

    cr_assert(mkdtemp(tmp));
    snprintf(dir, sizeof dir, "%s/vectors/generated/funcptr-ptm-rs", TB_SOURCE_DIR);
    snprintf(elf, sizeof elf, "%s/vectors/programs/funcptr.elf", TB_BINARY_DIR);
    snprintf(other, sizeof other, "%s/vectors/programs/cond_arm.elf", TB_BINARY_DIR);
    snprintf(args, sizeof args, "profile %s --memory %s", dir, other);
    rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
    cr_expect_eq(rc, 4, "another program's ELF: exit %d", rc);
    cr_expect(strstr(e, "not the program that ran"), "%s", e);
    cr_expect_eq(o[0], '\0', "%s", o);
    free(o);
    free(e);
    snprintf(cmd, sizeof cmd, "arm-none-eabi-strip -o %s/s.elf %s", tmp, elf);
    cr_assert_eq(tb_test_sh(cmd, &o), 0, "%s", o);
    free(o);
    snprintf(args, sizeof args, "profile %s --memory %s/s.elf", dir, tmp);
    rc = tb_test_run_cli(args, NULL, &o, NULL, &e);
    cr_expect_eq(rc, 0);
    cr_expect(strstr(e, "no symbol table (stripped)"), "%s", e);
    cr_expect(strstr(o, "0x000000C4 -> 0x000000A8"), "entry-address names: %s", o);
    free(o);
    free(e);
    cr_expect_eq(tb_test_run_cli("profile", NULL, &o, NULL, &e), 2);
    free(o);
    free(e);
    snprintf(args, sizeof args, "profile %s --format xml", dir);
    cr_expect_eq(tb_test_run_cli(args, NULL, &o, NULL, &e), 2);
    cr_expect(strstr(e, "--format xml: use text, callgrind or folded"), "%s", e);
    free(o);
    free(e);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    (void)!tb_test_sh(cmd, &o);
    free(o);
}

/* ---- (d) cycles per instruction ----
 *
 * On every cycle-accurate ETMv3, ETMv1 and ETMv2 vector of one source
 * without gaps, `profile --cycles`'s callgrind exclusive cycles per
 * source line equal the truth's: each instruction's cycles from the emulator's
 * stamps (ETMv3 counts backward, the cycles since the instruction
 * before, protocol-notes 6.3; ETMv1/ETMv2 forward, from its status to
 * the next, docs/etmv1.md 5: the stamp of its record minus that of the
 * record before, an exception's included), each address's line from
 * arm-none-eabi-addr2line.  A line is compared where every run of its
 * instructions has a count the trace gives exactly (not the first, not
 * the last one's open count, not beside an instruction an exception
 * cancelled) and the profile ran it as often as the truth did (it did
 * not where an ETMv1 return to a vector reads as an exception,
 * docs/etmv1.md 4). */

typedef struct lcyc {
    char key[300];          /* file:line */
    unsigned long long insns, cycles;
    bool unsure;            /* some run of it has no exact count */
    unsigned long long p_insns, p_cycles; /* the profile's */
} lcyc;

typedef struct tr {
    char kind;              /* 'I' or 'X' */
    bool cancelled;
    uint32_t addr;
    unsigned long long cycle;
} tr;

static lcyc *lc_get(lcyc *l, size_t *n, size_t cap, const char *key)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(l[i].key, key))
            return &l[i];
    cr_assert_lt(*n, cap);
    memset(&l[*n], 0, sizeof l[*n]);
    snprintf(l[*n].key, sizeof l[*n].key, "%s", key);
    return &l[(*n)++];
}

#define LMAX 4096

Test(profile, cycles_per_line_equal_truth, .timeout = 300)
{
    char base[512], tmp[] = "/tmp/tb_profile_XXXXXX";
    struct dirent **names;
    int nn, nvec = 0;
    size_t lines_eq = 0, lines_unsure = 0, lines_runs = 0, lumped_differ = 0;
    static lcyc l[LMAX];

    cr_assert(mkdtemp(tmp));
    snprintf(base, sizeof base, "%s/vectors/generated", TB_SOURCE_DIR);
    nn = scandir(base, &names, NULL, alphasort);
    cr_assert_gt(nn, 0);
    for (int k = 0; k < nn; k++) {
        const char *v = names[k]->d_name;
        char dir[1024], elf[1024], p[1200], cmd[4096], *txt, *save = NULL, *o, *e;
        bool etmv3 = strstr(v, "-etmv3") != NULL;
        bool abandon = false; /* ETMv1 abandon: docs/etmv1.md 4 */
        bool port = strstr(v, "-etmv1") || strstr(v, "-etmv2");
        tr *t = NULL;
        size_t nt = 0, cap = 0, nl = 0;
        char fl[300] = "";
        bool after_calls = false;
        unsigned first = 0;
        size_t t0 = 0, tlast = 0;
        FILE *f;
        int rc;

        snprintf(dir, sizeof dir, "%s/%s", base, v);
        if (v[0] == '.' || (!etmv3 && !port) || !has_file(dir, "truth.txt") ||
            !has_file(dir, "decode.addr")) {
            free(names[k]);
            continue;
        }
        {
            bool ca = tb_test_vector_has_option(dir, "ca");

            abandon = tb_test_vector_has_option(dir, "abandon");
            snprintf(p, sizeof p, "%s/decode.addr", dir);
            txt = tb_test_slurp(p, NULL);
            if (!ca || strstr(txt, "# gap")) {
                free(txt);
                free(names[k]);
                continue;
            }
            /* Where trace starts (an LSiP I-sync may start it late):
             * decode.addr, the truth's traced instructions
             * (vectors/expect.c). */
            cr_assert_eq(sscanf(txt, "0x%x", &first), 1, "%s: %s", p, txt);
            free(txt);
        }
        /* The truth's records. */
        snprintf(p, sizeof p, "%s/truth.txt", dir);
        f = fopen(p, "r");
        cr_assert(f);
        while (fgets(cmd, sizeof cmd, f)) {
            unsigned long long seq, cyc;
            unsigned addr = 0;
            char kind;

            if (sscanf(cmd, "%llu %llu %c", &seq, &cyc, &kind) != 3 || kind == 'D')
                continue;
            if (kind == 'I')
                cr_assert_eq(sscanf(cmd, "%*u %*u I %x", &addr), 1);
            if (kind == 'X' && strstr(cmd, " cancelled"))
                t[nt - 1].cancelled = true;
            if (nt == cap) {
                cap = cap ? 2 * cap : 4096;
                t = realloc(t, cap * sizeof *t);
                cr_assert(t);
            }
            /* other records (context changes): a count does not run
             * across them exactly, they stand as unknown ones */
            t[nt++] = (tr){kind == 'I' || kind == 'X' ? kind : '?', false, addr, cyc};
        }
        fclose(f);
        while (t0 < nt && !(t[t0].kind == 'I' && t[t0].addr == first))
            t0++;
        cr_assert_lt(t0, nt, "%s: trace starts at 0x%x, not in the truth", v, first);
        for (size_t i = t0; i < nt; i++)
            if (t[i].kind == 'I' && !t[i].cancelled)
                tlast = i;
        /* Each address's line (one addr2line run). */
        program_elf(dir, elf, sizeof elf);
        snprintf(p, sizeof p, "%s/addrs", tmp);
        f = fopen(p, "w");
        cr_assert(f);
        for (size_t i = t0; i < nt; i++)
            if (t[i].kind == 'I')
                fprintf(f, "0x%x\n", (unsigned)t[i].addr);
        fclose(f);
        snprintf(cmd, sizeof cmd, "arm-none-eabi-addr2line -e %s < %s/addrs", elf, tmp);
        cr_assert_eq(tb_test_sh(cmd, &o), 0, "%s: %s", cmd, o);
        {
            char *s2 = NULL, *ln = strtok_r(o, "\n", &s2);

            for (size_t i = t0; i < nt; i++) {
                lcyc *x;
                bool sure;
                unsigned long long c = 0;

                if (t[i].kind != 'I')
                    continue;
                cr_assert(ln, "%s: addr2line gave fewer lines", v);
                if (t[i].cancelled || strstr(ln, "??")) {
                    ln = strtok_r(NULL, "\n", &s2);
                    continue; /* did not run; or no line: fl=??? */
                }
                x = lc_get(l, &nl, LMAX, ln);
                ln = strtok_r(NULL, "\n", &s2);
                x->insns++;
                /* The first traced one's count starts where trace
                 * does; ETMv1/ETMv2's last one's may stay open. */
                if (etmv3) {
                    sure = i > t0 && t[i - 1].kind == 'I' && !t[i - 1].cancelled;
                } else {
                    /* abandon: an exception right after may have come in
                     * the instruction's first APO cycle and taken its
                     * other cycles (docs/etmv1.md 4). */
                    sure = i > t0 && i < tlast && t[i - 1].kind != '?' &&
                           !(t[i - 1].kind == 'I' && t[i - 1].cancelled) &&
                           !(t[i + 1].kind == 'I' && t[i + 1].cancelled) &&
                           !(abandon && t[i + 1].kind == 'X');
                }
                if (sure)
                    c = t[i].cycle - t[i - 1].cycle;
                x->cycles += c;
                x->unsure |= !sure;
            }
        }
        free(o);
        /* The profile's exclusive cost lines: with --cycles, and
         * without (a control: cycles per range differ). */
        for (int pass = 0; pass < 2; pass++) {
            for (size_t i = 0; i < nl; i++)
                l[i].p_insns = l[i].p_cycles = 0;
            fl[0] = '\0';
            after_calls = false;
            /* The profile's exclusive cost lines. */
            snprintf(p, sizeof p, "%s/cg", tmp);
            snprintf(cmd, sizeof cmd, "profile %s --memory %s --format callgrind -o %s %s --quiet",
                     dir, elf, p, pass ? "" : "--cycles");
            rc = tb_test_run_cli(cmd, NULL, &o, NULL, &e);
            cr_assert_eq(rc, 0, "%s: %s", cmd, e);
            free(o);
            free(e);
            txt = tb_test_slurp(p, NULL);
            cr_assert(strstr(txt, "events: Instructions Cycles\n"), "%s: no cycles", v);
            for (char *ln = strtok_r(txt, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
                unsigned line;
                unsigned long long a, b;

                if (!strncmp(ln, "fl=", 3)) {
                    snprintf(fl, sizeof fl, "%s", ln + 3);
                } else if (!strncmp(ln, "calls=", 6)) {
                    after_calls = true;
                } else if (sscanf(ln, "%u %llu %llu", &line, &a, &b) == 3) {
                    char key[400];

                    if (!after_calls && strcmp(fl, "???")) {
                        lcyc *x;

                        snprintf(key, sizeof key, "%s:%u", fl, line);
                        x = lc_get(l, &nl, LMAX, key);
                        x->p_insns += a;
                        x->p_cycles += b;
                    }
                    after_calls = false;
                }
            }
            free(txt);
            for (size_t i = 0; i < nl; i++) {
                if (l[i].unsure || l[i].p_insns != l[i].insns) {
                    lines_unsure += !pass;
                    continue;
                }
                if (pass) { /* each range's cycles on its last instruction */
                    lumped_differ += l[i].p_cycles != l[i].cycles;
                    continue;
                }
                cr_expect_eq(l[i].p_cycles, l[i].cycles,
                             "%s: %s ran %llu times: %llu cycles, the truth's %llu", v, l[i].key,
                             l[i].insns, l[i].p_cycles, l[i].cycles);
                lines_eq++;
                lines_runs += l[i].insns;
            }
        }
        free(t);
        nvec++;
        free(names[k]);
    }
    free(names);
    fprintf(stderr, "profile: %d CA ETMv3/ETMv1/ETMv2 vectors: %zu lines (%zu runs) with the "
                    "truth's cycles with --cycles (%zu of them differ without), %zu lines with "
                    "a run the trace does not count exactly\n",
            nvec, lines_eq, lines_runs, lumped_differ, lines_unsure);
    cr_expect_geq(nvec, 10);
    cr_expect_gt(lumped_differ, lines_eq / 2, "the control: per-range cycles differ on only "
                 "%zu lines", lumped_differ);
    cr_expect_geq(lines_eq, 300);
    {
        char cmd[256], *o;

        snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
        (void)!tb_test_sh(cmd, &o);
        free(o);
    }
}
