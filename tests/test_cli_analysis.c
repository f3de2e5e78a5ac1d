/*
 * Coverage, profiles and symbols from the CLI's other commands (issue 34):
 * `roundtrip --code-coverage FILE --profile FILE` and `decode --symbols ELF`.
 *
 * (a) The round trip's reports equal what `tracebench coverage` and
 *     `profile` write for the snapshot the same round trip leaves
 *     (--out): the same decode, fed to the accumulators inside the run
 *     instead of by a second decode, gives the same file, byte for byte,
 *     in every format.
 * (b) The same reports against the emulator's truth by a separate path
 *     (ETMv1 and ETMv2 too, but for the profile, which tb_truthprof reads
 *     for PTM and ETMv3 only):
 *     the JSON coverage's per-address counts and condition counts equal
 *     tb_truthcov's (vectors/truthcov.c), the callgrind profile's
 *     functions, call edges and total equal tb_truthprof's
 *     (vectors/truthprof.c), both linking nothing of tracebench.
 * (c) decode --symbols: each range's start and last instruction named
 *     as binutils names them (arm-none-eabi-addr2line -f for file:line
 *     and the function where that is a FUNC symbol, arm-none-eabi-readelf
 *     for its address and so the offset), in text and JSON; without the flag the output is
 *     the plain decode's; the same lines with the annotation cut off.
 * (d) Bad input: command lines (exit 2), a stripped program or one with
 *     no DWARF, another program's ELF (a warning naming it), unwritable
 *     reports (exit 4).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tb_test.h"
#include "tb_truth.h"

/* The programs: a -g C program with an interrupt (examples/program),
 * ARM/Thumb interworking and Thumb IT blocks (vectors/programs), with
 * their scenarios.  PROTOS: each runs under these. */
typedef struct prog {
    const char *name;   /* NULL: examples/program's irq_counter */
    const char *protos[6];
} prog;

static const prog progs[] = {
    {NULL, {"ptm", "etmv3", "ptm --options ca", "etmv3 --options ca", "etmv1", "etmv2"}},
    {"interwork", {"ptm", "etmv3", NULL, NULL}},
    {"it_blocks", {"ptm", "etmv3 --options ca", NULL, NULL}},
};

static void sh_ok(const char *cmd)
{
    char *o;
    int rc = tb_test_sh(cmd, &o);

    cr_assert_eq(rc, 0, "%s: %s", cmd, o);
    free(o);
}

/* The program's ELF and scenario; the example is built into tmp. */
static void prog_paths(const prog *p, const char *tmp, char *elf, char *ini, size_t len)
{
    if (!p->name) {
        snprintf(elf, len, "%s/irq.elf", tmp);
        snprintf(ini, len, "%s/examples/program/irq_counter.ini", TB_SOURCE_DIR);
    } else {
        snprintf(elf, len, "%s/vectors/programs/%s.elf", TB_BINARY_DIR, p->name);
        snprintf(ini, len, "%s/vectors/programs/%s.ini", TB_SOURCE_DIR, p->name);
    }
}

static char *make_tmp(void)
{
    static char tmp[64];
    char cmd[512];

    snprintf(tmp, sizeof tmp, "/tmp/tb_cli_analysis_XXXXXX");
    cr_assert(mkdtemp(tmp));
    snprintf(cmd, sizeof cmd, "sh %s/examples/program/build.sh %s/irq.elf", TB_SOURCE_DIR, tmp);
    sh_ok(cmd);
    return tmp;
}

static void rm_tmp(const char *tmp)
{
    char cmd[256];

    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    sh_ok(cmd);
}

static void expect_same_file(const char *what, const char *a, const char *b)
{
    size_t la, lb;
    char *x = tb_test_slurp(a, &la), *y = tb_test_slurp(b, &lb);

    cr_expect(la > 0, "%s: %s is empty", what, a);
    cr_expect(la == lb && !memcmp(x, y, la), "%s: the round trip's %s differs from %s", what, a,
              b);
    free(x);
    free(y);
}

/* ---- (a) and (b) ---- */

typedef struct row {
    uint32_t addr;
    char isa[8];
    unsigned long long count, passed, failed;
    int known;
} row;

#define MAX_ROWS 8192

static int truth_rows(const char *dir, row *out)
{
    char cmd[1024], *o, *save = NULL;
    int n = 0;

    snprintf(cmd, sizeof cmd, "%s/tb_truthcov %s", TB_BINARY_DIR, dir);
    cr_assert_eq(tb_test_sh(cmd, &o), 0, "%s: %s", cmd, o);
    for (char *l = strtok_r(o, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        row *r = &out[n];

        cr_assert_lt(n, MAX_ROWS);
        cr_assert_eq(sscanf(l, "0x%x %7s %llu %llu %llu %d", &r->addr, r->isa, &r->count,
                            &r->passed, &r->failed, &r->known),
                     6, "%s: %s", cmd, l);
        n++;
    }
    free(o);
    return n;
}

/* The JSON coverage's instructions (cli/cmd_coverage.c put_json). */
static int json_rows(const char *path, row *out)
{
    char *o = tb_test_slurp(path, NULL), *s;
    int n = 0;

    for (s = strstr(o, "{\"addr\":"); s; s = strstr(s + 1, "{\"addr\":")) {
        row *r = &out[n];
        int used = 0;

        cr_assert_lt(n, MAX_ROWS);
        memset(r, 0, sizeof *r);
        cr_assert_eq(sscanf(s, "{\"addr\":%u,\"isa\":\"%7[^\"]\",\"count\":%llu%n", &r->addr,
                            r->isa, &r->count, &used),
                     3, "%s: %.60s", path, s);
        if (!strncmp(s + used, ",\"known\":false", 14)) {
            r->known = 0;
        } else {
            cr_assert_eq(sscanf(s + used, ",\"passed\":%llu,\"failed\":%llu", &r->passed,
                                &r->failed),
                         2, "%s: %.80s", path, s);
            r->known = 1;
        }
        n++;
    }
    cr_expect(strstr(o, "\"complete\":true"), "%s: coverage incomplete", path);
    free(o);
    return n;
}

static void expect_rows_equal(const char *what, const row *t, int nt, const row *d, int nd)
{
    cr_expect_eq(nd, nt, "%s: %d addresses covered, the truth %d", what, nd, nt);
    for (int i = 0; i < nt && i < nd; i++) {
        const row *a = &t[i], *b = &d[i];

        cr_expect(a->addr == b->addr && !strcmp(a->isa, b->isa) && a->count == b->count &&
                      a->known == b->known &&
                      (!a->known || (a->passed == b->passed && a->failed == b->failed)),
                  "%s: 0x%08x %s ran %llu (%llu E, %llu N, known %d); the truth: 0x%08x %s "
                  "%llu (%llu E, %llu N, known %d)",
                  what, b->addr, b->isa, b->count, b->passed, b->failed, b->known, a->addr,
                  a->isa, a->count, a->passed, a->failed, a->known);
    }
}

/* Each program and protocol: two round trips (lcov + callgrind, then json
 * + folded; cobertura + text on the first program), each compared with
 * the snapshot's coverage and profile, then the json and callgrind files
 * with the truth. */
Test(cli_analysis, roundtrip_reports_equal_snapshot_and_truth, .timeout = 600)
{
    static const char *const pairs[][2] = {{"lcov", "callgrind"}, {"json", "folded"},
                                           {"cobertura", "text"}, {"text", "callgrind"}};
    char *tmp = make_tmp();
    static row t[MAX_ROWS], d[MAX_ROWS];
    static tb_prof tp, dp;
    int checked = 0;

    for (size_t k = 0; k < sizeof progs / sizeof progs[0]; k++) {
        char elf[1024], ini[1024], syms[1100], cmd[4096];

        prog_paths(&progs[k], tmp, elf, ini, sizeof elf);
        snprintf(syms, sizeof syms, "%s/%zu.syms", tmp, k);
        snprintf(cmd, sizeof cmd, "arm-none-eabi-readelf -sSW %s > %s", elf, syms);
        sh_ok(cmd);
        for (size_t i = 0; i < 6 && progs[k].protos[i]; i++) {
            const char *proto = progs[k].protos[i];
            size_t npairs = k == 0 && i == 0 ? 4 : 2;

            for (size_t f = 0; f < npairs; f++) {
                const char *cf = pairs[f][0], *pf = pairs[f][1];
                char dir[1100], cov[1200], pro[1200], cov2[1200], pro2[1200], what[256];
                tb_cli_run r;

                snprintf(what, sizeof what, "%s %s %s/%s", progs[k].name ? progs[k].name : "irq",
                         proto, cf, pf);
                snprintf(dir, sizeof dir, "%s/s%zu_%zu_%zu", tmp, k, i, f);
                snprintf(cov, sizeof cov, "%s.cov", dir);
                snprintf(pro, sizeof pro, "%s.prof", dir);
                snprintf(cov2, sizeof cov2, "%s.cov2", dir);
                snprintf(pro2, sizeof pro2, "%s.prof2", dir);
                r = tb_test_run("roundtrip %s --scenario %s --protocol %s --out %s --truth "
                                "%s/truth.txt --code-coverage %s --coverage-format %s "
                                "--profile %s --profile-format %s --quiet",
                                elf, ini, proto, dir, dir, cov, cf, pro, pf);
                cr_assert_eq(r.status, 0, "%s: exit %d", what, r.status);
                tb_test_out_has(&r, "MATCH");
                tb_test_run_done(&r);
                /* (a) the snapshot through the commands */
                r = tb_test_run("coverage %s --memory %s --format %s -o %s --quiet", dir, elf,
                                cf, cov2);
                cr_assert_eq(r.status, 0, "%s: coverage exit %d", what, r.status);
                tb_test_run_done(&r);
                r = tb_test_run("profile %s --memory %s --format %s -o %s --quiet", dir, elf,
                                pf, pro2);
                cr_assert_eq(r.status, 0, "%s: profile exit %d", what, r.status);
                tb_test_run_done(&r);
                expect_same_file(what, cov, cov2);
                expect_same_file(what, pro, pro2);
                /* (b) the truth */
                if (!strcmp(cf, "json")) {
                    int nt = truth_rows(dir, t), nd = json_rows(cov, d);

                    cr_expect_gt(nt, 0, "%s: the truth ran nothing", what);
                    expect_rows_equal(what, t, nt, d, nd);
                    checked++;
                }
                /* tb_truthprof reads PTM and ETMv3 vectors only */
                if (!strcmp(pf, "callgrind") && strncmp(proto, "etmv1", 5) &&
                    strncmp(proto, "etmv2", 5)) {
                    cr_assert(tb_prof_truth(dir, syms, &tp), "%s: tb_truthprof refused it", what);
                    tb_prof_callgrind(pro, &dp);
                    cr_expect_gt(tp.total, 0, "%s: the truth ran nothing", what);
                    tb_prof_expect_equal(what, &tp, &dp);
                    checked++;
                }
            }
        }
    }
    cr_expect_geq(checked, 16, "only %d checks against the truth", checked);
    rm_tmp(tmp);
}

/* ---- (c) ---- */

/* binutils' view of addr: function (addr2line -f, "??" when it has
 * none), file:line. */
typedef struct binsym {
    char func[128], file[512];
    unsigned line;
} binsym;

static void addr2line(const char *elf, const uint32_t *a, size_t n, binsym *out)
{
    size_t len = 256 + n * 12;
    char *cmd = malloc(len), *o, *save = NULL, *l;

    cr_assert(cmd);
    snprintf(cmd, len, "arm-none-eabi-addr2line -f -e %s", elf);
    for (size_t i = 0; i < n; i++)
        snprintf(cmd + strlen(cmd), len - strlen(cmd), " 0x%x", a[i]);
    cr_assert_eq(tb_test_sh(cmd, &o), 0, "%s", o);
    l = strtok_r(o, "\n", &save);
    for (size_t i = 0; i < n; i++) {
        char *fl, *colon, *disc;

        cr_assert(l, "addr2line: too few lines");
        snprintf(out[i].func, sizeof out[i].func, "%s", l);
        fl = strtok_r(NULL, "\n", &save);
        cr_assert(fl, "addr2line: too few lines");
        if ((disc = strstr(fl, " (discriminator")))
            *disc = '\0';
        colon = strrchr(fl, ':');
        cr_assert(colon, "%s", fl);
        *colon = '\0';
        snprintf(out[i].file, sizeof out[i].file, "%s", fl);
        out[i].line = (unsigned)strtoul(colon + 1, NULL, 10);
        l = strtok_r(NULL, "\n", &save);
    }
    free(o);
    free(cmd);
}

/* The FUNC symbol named func in `readelf -sW` output (its address, the
 * Thumb bit cleared); false when func is no FUNC symbol (a label of
 * another type, which addr2line names too but a function table has not). */
static bool func_addr(const char *syms, const char *func, uint32_t *addr)
{
    char *copy = strdup(syms), *save = NULL;
    bool found = false;

    cr_assert(copy);
    for (char *l = strtok_r(copy, "\n", &save); l && !found; l = strtok_r(NULL, "\n", &save)) {
        unsigned num, value, size;
        char type[16], name[200];

        if (sscanf(l, " %u: %x %u %15s %*s %*s %*s %199s", &num, &value, &size, type, name) == 5 &&
            !strcmp(type, "FUNC") && !strcmp(name, func)) {
            *addr = value & ~1u;
            found = true;
        }
    }
    free(copy);
    return found;
}

/* One annotation "FUNC+0xOFF FILE:LINE" against binutils.  Returns
 * whether the function was compared. */
static bool expect_sym(const char *what, const char *syms, uint32_t addr, const char *func,
                       unsigned off, const char *file, unsigned line, const binsym *b)
{
    uint32_t fa = 0;
    bool named = strcmp(b->func, "??") && func_addr(syms, b->func, &fa);

    if (named) {
        cr_expect_str_eq(func, b->func, "%s: 0x%08x in %s, binutils: %s", what, addr, func,
                         b->func);
        cr_expect_eq(off, addr - fa, "%s: 0x%08x is %s+0x%x, binutils +0x%x", what, addr, func,
                     off, addr - fa);
    }
    if (b->line) {
        cr_expect_str_eq(file, b->file, "%s: 0x%08x in %s, binutils %s", what, addr, file,
                         b->file);
        cr_expect_eq(line, b->line, "%s: 0x%08x at line %u, binutils %u", what, addr, line,
                     b->line);
    } else {
        cr_expect_eq(line, 0, "%s: 0x%08x at %s:%u, binutils has no line", what, addr, file,
                     line);
    }
    return named;
}

#define MAX_RANGES 4096

/* Text and JSON: every range's start and last instruction. */
Test(cli_analysis, decode_symbols_as_binutils_names_them, .timeout = 300)
{
    char *tmp = make_tmp();
    int ranges = 0, named = 0, lined = 0;

    for (size_t k = 0; k < sizeof progs / sizeof progs[0]; k++) {
        char elf[1024], ini[1024], dir[1100], cmd[2048], *syms;
        static uint32_t addr[2 * MAX_RANGES];
        static binsym bs[2 * MAX_RANGES];
        static struct { char func[128], file[512]; unsigned off, line; } got[2 * MAX_RANGES];
        size_t n = 0;
        tb_cli_run r, plain, js;
        char *save = NULL, *l, *copy;

        prog_paths(&progs[k], tmp, elf, ini, sizeof elf);
        snprintf(dir, sizeof dir, "%s/d%zu", tmp, k);
        r = tb_test_run("roundtrip %s --scenario %s --protocol etmv3 --out %s --quiet", elf,
                        ini, dir);
        cr_assert_eq(r.status, 0);
        tb_test_run_done(&r);
        snprintf(cmd, sizeof cmd, "arm-none-eabi-readelf -sW %s", elf);
        cr_assert_eq(tb_test_sh(cmd, &syms), 0, "%s", syms);

        r = tb_test_run("decode %s --symbols %s --quiet", dir, elf);
        cr_assert_eq(r.status, 0);
        cr_expect_eq(r.err[0], '\0', "a matching ELF with symbols and lines: %s", r.err);
        plain = tb_test_run("decode %s --quiet", dir);
        cr_assert_eq(plain.status, 0);
        cr_expect(!strstr(plain.out, "  ; "), "decode without --symbols annotates");
        /* The annotated text, cut at "  ; ", is the plain decode. */
        copy = strdup(r.out);
        {
            size_t w = 0;

            for (char *p = copy; *p;) {
                char *nl = strchr(p, '\n'), *semi = strstr(p, "  ; ");
                size_t keep = semi && (!nl || semi < nl) ? (size_t)(semi - p)
                                                         : (size_t)(nl ? nl - p : (long)strlen(p));

                memmove(copy + w, p, keep);
                w += keep;
                if (!nl)
                    break;
                copy[w++] = '\n';
                p = nl + 1;
            }
            copy[w] = '\0';
        }
        cr_expect_str_eq(copy, plain.out, "%s: --symbols changed the decode's lines", elf);
        free(copy);
        for (l = strtok_r(r.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
            unsigned start, last, count;
            char *semi = strstr(l, "  ; ");

            if (!strstr(l, " INSN_RANGE "))
                continue;
            cr_assert(semi, "a range without symbols: %s", l);
            cr_assert_eq(sscanf(strstr(l, "start="), "start=0x%x", &start), 1);
            cr_assert_eq(sscanf(strstr(l, "count="), "count=%u", &count), 1);
            cr_assert_eq(sscanf(strstr(l, "last_addr="), "last_addr=0x%x", &last), 1);
            cr_assert_lt(n + 2, 2 * MAX_RANGES);
            /* "  ; F+0xO FILE:LINE[ .. F+0xO FILE:LINE]" */
            for (int side = 0; side < (count > 1 ? 2 : 1); side++) {
                char *p = side ? strstr(semi, " .. ") + 4 : semi + 4, *plus, *sp, *colon;
                char *end = side ? p + strlen(p) : strstr(p, " .. ");

                if (!end)
                    end = p + strlen(p);
                addr[n] = side ? last : start;
                memset(&got[n], 0, sizeof got[n]);
                if (*p == '?') { /* no function holds it */
                    sp = p + 1;
                } else {
                    plus = strstr(p, "+0x");
                    cr_assert(plus && plus < end, "%s", l);
                    snprintf(got[n].func, sizeof got[n].func, "%.*s", (int)(plus - p), p);
                    got[n].off = (unsigned)strtoul(plus + 3, &sp, 16);
                }
                if (*sp == ' ' && sp < end) {
                    colon = sp + 1;
                    for (char *c = sp + 1; c < end; c++)
                        if (*c == ':')
                            colon = c;
                    snprintf(got[n].file, sizeof got[n].file, "%.*s", (int)(colon - sp - 1),
                             sp + 1);
                    got[n].line = (unsigned)strtoul(colon + 1, NULL, 10);
                }
                n++;
            }
        }
        cr_assert_gt(n, 0);
        addr2line(elf, addr, n, bs);
        for (size_t i = 0; i < n; i++) {
            named += expect_sym(elf, syms, addr[i], got[i].func, got[i].off, got[i].file,
                                got[i].line, &bs[i]);
            lined += bs[i].line != 0;
        }
        ranges += (int)n;

        /* JSON: the same names, as members of each range's object. */
        js = tb_test_run("decode %s --symbols %s --format json --quiet", dir, elf);
        cr_assert_eq(js.status, 0);
        {
            size_t i = 0;

            save = NULL;
            for (l = strtok_r(js.out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                unsigned count;

                if (!strstr(l, "\"kind\":\"INSN_RANGE\""))
                    continue;
                cr_assert_eq(sscanf(strstr(l, "\"count\":"), "\"count\":%u", &count), 1);
                for (int side = 0; side < (count > 1 ? 2 : 1); side++, i++) {
                    char key[32], want[700];

                    cr_assert_lt(i, n);
                    snprintf(key, sizeof key, "\"%s_func\":\"", side ? "last" : "start");
                    snprintf(want, sizeof want, "%s%s\",\"%s_offset\":%u", key, got[i].func,
                             side ? "last" : "start", got[i].off);
                    if (got[i].func[0])
                        cr_expect(strstr(l, want), "json lacks %s: %s", want, l);
                    else
                        cr_expect(!strstr(l, key), "json has %s: %s", key, l);
                    if (got[i].line) {
                        snprintf(want, sizeof want, "\"%s_file\":\"%s\",\"%s_line\":%u",
                                 side ? "last" : "start", got[i].file, side ? "last" : "start",
                                 got[i].line);
                        cr_expect(strstr(l, want), "json lacks %s: %s", want, l);
                    }
                }
            }
            cr_expect_eq(i, n, "json: %zu range ends, text %zu", i, n);
        }
        tb_test_run_done(&js);
        tb_test_run_done(&r);
        tb_test_run_done(&plain);
        free(syms);
    }
    cr_expect_gt(named, 100, "only %d instructions named by binutils", named);
    cr_expect_gt(lined, 100, "only %d instructions with lines", lined);
    fprintf(stderr, "cli_analysis: %d range ends checked against binutils (%d named, %d with "
                    "lines)\n", ranges, named, lined);
    rm_tmp(tmp);
}

/* ---- (d) ---- */

Test(cli_analysis, bad_input, .timeout = 300)
{
    char *tmp = make_tmp(), elf[1024], ini[1024], cmd[4096];
    tb_cli_run r;

    prog_paths(&progs[0], tmp, elf, ini, sizeof elf);
    snprintf(cmd, sizeof cmd, "arm-none-eabi-strip -o %s/s.elf %s && arm-none-eabi-strip "
                              "--strip-debug -o %s/d.elf %s", tmp, elf, tmp, elf);
    sh_ok(cmd);

    /* Command lines: exit 2, naming the flag. */
    {
        static const struct { const char *args, *says; } bad[] = {
            {"--code-coverage X", "--code-coverage needs --protocol"},
            {"--profile X", "--profile needs --protocol"},
            {"--protocol ptm --code-coverage X --coverage-format xml",
             "--coverage-format xml: use lcov, cobertura, json or text"},
            {"--protocol ptm --profile X --profile-format dot",
             "--profile-format dot: use callgrind, folded or text"},
            {"--protocol ptm --coverage-format json", "--coverage-format goes with "
                                                      "--code-coverage FILE"},
            {"--protocol ptm --profile-format folded", "--profile-format goes with --profile"},
            {"--protocol ptm --code-coverage", "--code-coverage needs a value"},
        };

        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            r = tb_test_run("roundtrip %s %s", elf, bad[i].args);
            cr_expect_eq(r.status, 2, "%s: exit %d", bad[i].args, r.status);
            tb_test_err_has(&r, bad[i].says);
            tb_test_run_done(&r);
        }
        r = tb_test_run("roundtrip --suite --code-coverage X");
        cr_expect_eq(r.status, 2);
        tb_test_err_has(&r, "takes no --code-coverage");
        tb_test_run_done(&r);
    }
    /* A stripped program: lcov has no lines to give (exit 4, before the
     * run); a profile names functions by entry address, with a note. */
    r = tb_test_run("roundtrip %s/s.elf --scenario %s --protocol ptm --code-coverage %s/c.info",
                    tmp, ini, tmp);
    cr_expect_eq(r.status, 4);
    tb_test_err_has(&r, "program ");
    tb_test_err_has(&r, "s.elf has no DWARF line table");
    tb_test_run_done(&r);
    r = tb_test_run("roundtrip %s/s.elf --scenario %s --protocol ptm --profile %s/p.cg", tmp,
                    ini, tmp);
    cr_expect_eq(r.status, 0);
    tb_test_err_has(&r, "s.elf has no symbol table (stripped)");
    {
        char p[1100], *txt;

        snprintf(p, sizeof p, "%s/p.cg", tmp);
        txt = tb_test_slurp(p, NULL);
        cr_expect(strstr(txt, "fn=0x"), "stripped: no entry-address names: %s", txt);
        cr_expect(!strstr(txt, "fn=main"), "stripped: a symbol's name: %s", txt);
        free(txt);
    }
    tb_test_run_done(&r);
    /* Unwritable reports: exit 4 naming them, after the run. */
    r = tb_test_run("roundtrip %s --scenario %s --protocol ptm --profile /nonexistent/dir/p "
                    "--quiet", elf, ini);
    cr_expect_eq(r.status, 4);
    tb_test_err_has(&r, "/nonexistent/dir/p");
    tb_test_run_done(&r);

    /* decode --symbols */
    {
        char dir[1100];

        snprintf(dir, sizeof dir, "%s/snap", tmp);
        r = tb_test_run("roundtrip %s --scenario %s --protocol ptm --out %s --quiet", elf, ini,
                        dir);
        cr_assert_eq(r.status, 0);
        tb_test_run_done(&r);
        r = tb_test_run("decode %s --symbols", dir);
        cr_expect_eq(r.status, 2);
        tb_test_err_has(&r, "--symbols needs a value");
        tb_test_run_done(&r);
        r = tb_test_run("decode %s --symbols %s --format addr", dir, elf);
        cr_expect_eq(r.status, 2);
        tb_test_err_has(&r, "--symbols goes with --format text or json");
        tb_test_run_done(&r);
        r = tb_test_run("decode %s --symbols %s --symbols %s", dir, elf, elf);
        cr_expect_eq(r.status, 2);
        tb_test_err_has(&r, "one --symbols ELF only");
        tb_test_run_done(&r);
        r = tb_test_run("decode %s --symbols /nonexistent.elf", dir);
        cr_expect_eq(r.status, 4);
        tb_test_err_has(&r, "--symbols /nonexistent.elf: cannot be read");
        tb_test_run_done(&r);
        r = tb_test_run("decode %s --symbols %s/README.md", dir, TB_SOURCE_DIR);
        cr_expect_eq(r.status, 4);
        tb_test_err_has(&r, "not a 32-bit ELF file");
        tb_test_run_done(&r);
        /* --symbols without ELF (issue 34 item 3): a raw trace file's
         * --memory ELF, the same output as --symbols ELF; none: said */
        {
            char raw[1200];
            tb_cli_run ex;

            snprintf(raw, sizeof raw, "%s/raw", tmp);
            r = tb_test_run("roundtrip %s --scenario %s --protocol etmv3 --buffer raw --out %s "
                            "--quiet", elf, ini, raw);
            cr_assert_eq(r.status, 0);
            tb_test_run_done(&r);
            ex = tb_test_run("decode %s/trace_buffer.bin --protocol etmv3 --memory %s "
                             "--symbols %s --quiet", raw, elf, elf);
            cr_assert_eq(ex.status, 0, "%s", ex.err);
            cr_expect(strstr(ex.out, "  ; main+0x"), "no symbols: %s", ex.out);
            r = tb_test_run("decode %s/trace_buffer.bin --protocol etmv3 --memory %s "
                            "--symbols --quiet", raw, elf);
            cr_expect_eq(r.status, 0);
            cr_expect_str_eq(r.out, ex.out, "bare --symbols: not the --memory ELF's names");
            tb_test_run_done(&r);
            r = tb_test_run("decode %s/trace_buffer.bin --symbols --protocol etmv3 --memory %s "
                            "--quiet", raw, elf);
            cr_expect_eq(r.status, 0);
            cr_expect_str_eq(r.out, ex.out, "bare --symbols before an option");
            tb_test_run_done(&r);
            tb_test_run_done(&ex);
            r = tb_test_run("decode %s/trace_buffer.bin --protocol etmv3 --memory "
                            "0:%s/mem_0_0.bin --symbols", raw, raw);
            cr_expect_eq(r.status, 2);
            tb_test_err_has(&r, "it takes the ELF given with --memory, and none was");
            tb_test_run_done(&r);
        }
        /* stripped, no DWARF: said even under --quiet */
        r = tb_test_run("decode %s --symbols %s/s.elf --quiet", dir, tmp);
        cr_expect_eq(r.status, 0);
        tb_test_err_has(&r, "--symbols");
        tb_test_err_has(&r, "s.elf has no symbol table (stripped)");
        tb_test_err_has(&r, "s.elf has no DWARF line table");
        cr_expect(!strstr(r.out, "main+0x"), "stripped: a name");
        tb_test_run_done(&r);
        r = tb_test_run("decode %s --symbols %s/d.elf --quiet", dir, tmp);
        cr_expect_eq(r.status, 0);
        tb_test_err_has(&r, "d.elf has no DWARF line table");
        tb_test_err_lacks(&r, "no symbol table");
        tb_test_out_has(&r, "main+0x");
        cr_expect(!strstr(r.out, ".c:"), "no DWARF: a line");
        tb_test_run_done(&r);
        /* another program's ELF: a warning naming it and where */
        r = tb_test_run("decode %s --symbols %s/vectors/programs/cond_arm.elf --quiet", dir,
                        TB_BINARY_DIR);
        cr_expect_eq(r.status, 0);
        tb_test_err_has(&r, "warning: --symbols");
        tb_test_err_has(&r, "cond_arm.elf: its code differs from the traced code at 0x");
        tb_test_err_has(&r, "not the program that ran");
        tb_test_run_done(&r);
        /* an ELF loaded elsewhere (at 0x100000): none of the code is in it */
        r = tb_test_run("decode %s --symbols %s/vectors/programs/cond_arm_hi.elf --quiet", dir,
                        TB_BINARY_DIR);
        cr_expect_eq(r.status, 0);
        tb_test_err_has(&r, "cond_arm_hi.elf: ");
        tb_test_err_has(&r, "of traced code lie outside its loadable segments (the first at "
                            "0x00000020)");
        tb_test_run_done(&r);
        /* the program itself: no warning */
        r = tb_test_run("decode %s --symbols %s --quiet", dir, elf);
        cr_expect_eq(r.status, 0);
        cr_expect_eq(r.err[0], '\0', "%s", r.err);
        tb_test_run_done(&r);
    }
    rm_tmp(tmp);
}
