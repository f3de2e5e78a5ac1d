/* tracebench coverage DIR|FILE ... [--memory ELF ...] [--id ID|all]
 *                    [--format text|json|lcov] [-o FILE]
 * Code coverage of one or more traces (merged): instruction counts
 * (analysis/codecov.c), and with the program's ELF, function coverage
 * from its symbols and line coverage from its DWARF line table
 * (analysis/elfinfo.c).  Unknown stays unknown: PTM's non-waypoint
 * conditions, and after a trace gap any code not seen (left out of the
 * lcov listing, said on stderr).
 * Exit (cli.h): 0 done, 2 usage, 4 an error (an ELF that is not the
 * traced program, an input that would not load), 5 trace was lost. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "analyze.h"
#include "input.h"
#include "tracebench/codecov.h"
#include "tracebench/decoder.h"
#include "tracebench/elfinfo.h"

enum { FMT_TEXT, FMT_JSON, FMT_LCOV, FMT_COBERTURA };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tracebench coverage DIR|FILE ... [--memory ELF ...] [--id ID|all]\n"
            "              [--format text|json|lcov] [-o FILE] [--quiet]\n"
            "              [raw FILE options, as in tracebench decode --help]\n"
            "\n"
            "Code coverage of the traces given, merged: how often each instruction ran,\n"
            "and each conditional instruction seen passing and failing its condition.\n"
            "  DIR|FILE         snapshot directories or raw trace files (as decode reads)\n"
            "  --memory ELF     the program's ELF: its symbols give function coverage, its\n"
            "                   DWARF line table (built with -g) line coverage, its entry\n"
            "                   point where the program started (trace that starts later\n"
            "                   missed what ran before); its code must equal the traced\n"
            "                   code.  For a raw FILE also its memory\n"
            "  --id ID|all      the trace source(s) to count (default: all)\n"
            "  --format F       text (a summary and one line per function, the default),\n"
            "                   json (one object: instructions, functions, lines) or lcov\n"
            "                   (a tracefile for genhtml and lcov; needs --memory ELF)\n"
            "  -o FILE          write there instead of standard output\n"
            "  --quiet          no note on what could not be known\n"
            "\n"
            "Unknown is never \"not executed\": PTM traces conditions of waypoints only, so\n"
            "other conditional instructions have no branch data; after a trace gap (filter,\n"
            "overflow, lost trace) code not seen may have run, so it is left out of the\n"
            "lines and functions listed as not executed, with a note on stderr.\n"
            "\n"
            "exit: 0 done, 2 usage, 4 error (an input would not load, the ELF is not the\n"
            "      traced program, the output not written), 5 trace was lost to corruption\n"
            "      or never synchronised (a warning on stderr says why)\n");
}

typedef struct line_ent {
    uint32_t file, line;
    uint64_t count;
    bool seen;
    uint32_t nbr;   /* BRDA entries written, for their numbers */
} line_ent;

/* The analysis hooks (analyze.h) over tb_codecov. */
struct cov {
    tb_codecov *cc;
    tb_elfinfo **elf;
    const char *const *elf_path;
    size_t nelf;
};

static int cov_begin(void *ctx, tb_protocol proto, const tb_memimage *mem)
{
    return tb_codecov_begin(((struct cov *)ctx)->cc, proto, mem);
}

static int cov_element(void *ctx, const tb_element *el)
{
    return tb_codecov_element(((struct cov *)ctx)->cc, el);
}

static int cov_end(void *ctx)
{
    return tb_codecov_end(((struct cov *)ctx)->cc);
}

static void insn_at(const void *arr, size_t i, uint32_t *addr, unsigned *size)
{
    const tb_codecov_insn *in = arr;

    *addr = in[i].addr;
    *size = in[i].size;
}

/* An ELF that is not the traced program gives lines and functions of
 * another program, so it is refused. */
static int cov_after(void *ctx, const tb_memimage *mem)
{
    struct cov *c = ctx;
    size_t n;
    const tb_codecov_insn *ins = tb_codecov_insns(c->cc, &n);

    return tb_cli_analysis_check_code("coverage", mem, c->elf, c->elf_path, c->nelf, insn_at,
                                      ins, ins ? n : 0);
}

/* ---- reports ---- */

static const tb_elf_func *find_func(tb_elfinfo **elf, size_t nelf, uint32_t a, size_t *which)
{
    for (size_t e = 0; e < nelf; e++) {
        const tb_elf_func *f = tb_elfinfo_func(elf[e], a);

        if (f) {
            *which = e;
            return f;
        }
    }
    return NULL;
}

/* The instructions of [lo, hi) among ins[0..n) (sorted). */
static size_t lower(const tb_codecov_insn *ins, size_t n, uint32_t a)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;

        if (ins[m].addr < a)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

/* A function's count: how often its first instruction ran (its entries);
 * when that never ran, the most any of its instructions ran (code
 * reached only by branches into its middle).  seen: any ran. */
static uint64_t func_count(const tb_codecov_insn *ins, size_t n, const tb_elf_func *f, bool *seen)
{
    uint64_t entry = 0, most = 0;

    *seen = false;
    for (size_t i = lower(ins, n, f->lo); i < n && ins[i].addr < f->hi; i++) {
        *seen = true;
        if (ins[i].addr == f->lo)
            entry += ins[i].count;
        if (ins[i].count > most)
            most = ins[i].count;
    }
    return entry ? entry : most;
}

static int cmp_line_ent(const void *pa, const void *pb)
{
    const line_ent *a = pa, *b = pb;

    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    return (a->line > b->line) - (a->line < b->line);
}

static line_ent *find_line(line_ent *L, size_t n, uint32_t file, uint32_t line)
{
    line_ent key = {.file = file, .line = line};

    return bsearch(&key, L, n, sizeof *L, cmp_line_ent);
}

/* Every line of e's line table, with the most any of its instructions
 * ran (count) and whether any ran (seen).  *out, *nout; 0 or -1. */
static int line_table(const tb_elfinfo *e, const tb_codecov_insn *ins, size_t n, line_ent **out,
                      size_t *nout)
{
    line_ent *L = malloc((e->nlines ? e->nlines : 1) * sizeof *L);
    size_t k = 0;

    if (!L)
        return -1;
    for (size_t i = 0; i < e->nlines; i++)
        L[k++] = (line_ent){.file = e->lines[i].file, .line = e->lines[i].line};
    qsort(L, k, sizeof *L, cmp_line_ent);
    {
        size_t u = 0;

        for (size_t i = 0; i < k; i++)
            if (!u || cmp_line_ent(&L[u - 1], &L[i]))
                L[u++] = L[i];
        k = u;
    }
    for (size_t i = 0; i < n; i++) {
        const tb_elf_line *row = tb_elfinfo_line(e, ins[i].addr);
        line_ent *le;

        if (!row || !(le = find_line(L, k, row->file, row->line)))
            continue;
        le->seen = true;
        if (ins[i].count > le->count)
            le->count = ins[i].count;
    }
    *out = L;
    *nout = k;
    return 0;
}

static void put_lcov(FILE *f, tb_elfinfo **elf, size_t nelf, const tb_codecov_insn *ins, size_t n,
                     bool complete, uint64_t *unknown_lines)
{
    for (size_t e = 0; e < nelf; e++) {
        const tb_elfinfo *E = elf[e];
        line_ent *L;
        size_t nl;

        if (line_table(E, ins, n, &L, &nl) < 0)
            continue;
        for (uint32_t file = 0; file < E->nfiles; file++) {
            size_t lf = 0, lh = 0, fnf = 0, fnh = 0, brf = 0, brh = 0;
            bool any = false;

            for (size_t i = 0; i < nl; i++)
                any |= L[i].file == file;
            if (!any)
                continue;
            fprintf(f, "TN:\nSF:%s\n", E->files[file]);
            /* Functions whose first instruction has a line in this file. */
            for (size_t i = 0; i < E->nfuncs; i++) {
                const tb_elf_func *fn = &E->funcs[i];
                const tb_elf_line *row = tb_elfinfo_line(E, fn->lo);
                bool seen;
                uint64_t cnt;

                if (!row || row->file != file)
                    continue;
                cnt = func_count(ins, n, fn, &seen);
                if (!seen && !complete)
                    continue;
                fprintf(f, "FN:%u,%s\nFNDA:%llu,%s\n", row->line, fn->name,
                        (unsigned long long)cnt, fn->name);
                fnf++;
                fnh += seen;
            }
            fprintf(f, "FNF:%zu\nFNH:%zu\n", fnf, fnh);
            /* Branch data: each conditional instruction seen, with every
             * run's condition traced, is a block of two branches (passed,
             * failed) on its line. */
            for (size_t i = 0; i < n; i++) {
                const tb_elf_line *row;
                line_ent *le;

                if (!(ins[i].flags & TB_CODECOV_COND) ||
                    (ins[i].flags & TB_CODECOV_COND_UNKNOWN) ||
                    !(row = tb_elfinfo_line(E, ins[i].addr)) || row->file != file ||
                    !(le = find_line(L, nl, file, row->line)))
                    continue;
                fprintf(f, "BRDA:%u,%u,0,%llu\nBRDA:%u,%u,1,%llu\n", row->line, le->nbr,
                        (unsigned long long)ins[i].passed, row->line, le->nbr,
                        (unsigned long long)ins[i].failed);
                le->nbr++;
                brf += 2;
                brh += (ins[i].passed != 0) + (ins[i].failed != 0);
            }
            fprintf(f, "BRF:%zu\nBRH:%zu\n", brf, brh);
            for (size_t i = 0; i < nl; i++) {
                if (L[i].file != file)
                    continue;
                if (!L[i].seen && !complete) {
                    (*unknown_lines)++;
                    continue;
                }
                fprintf(f, "DA:%u,%llu\n", L[i].line, (unsigned long long)L[i].count);
                lf++;
                lh += L[i].seen;
            }
            fprintf(f, "LF:%zu\nLH:%zu\nend_of_record\n", lf, lh);
        }
        free(L);
    }
}

static void xml_str(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t')
                fputc(*s, f);
        }
    }
}

static double rate(size_t hit, size_t total)
{
    return total ? (double)hit / (double)total : 1.0;
}

/* Branch counts of one line: conditional instructions whose every run's
 * condition the trace carries, two branches each (passed, failed);
 * PTM's unknown conditions count neither way. */
static void line_branches(const tb_elfinfo *E, const tb_codecov_insn *ins, size_t n,
                          uint32_t file, uint32_t line, size_t *valid, size_t *covered)
{
    *valid = *covered = 0;
    for (size_t i = 0; i < n; i++) {
        const tb_elf_line *row;

        if (!(ins[i].flags & TB_CODECOV_COND) || (ins[i].flags & TB_CODECOV_COND_UNKNOWN) ||
            !(row = tb_elfinfo_line(E, ins[i].addr)) || row->file != file || row->line != line)
            continue;
        *valid += 2;
        *covered += (ins[i].passed != 0) + (ins[i].failed != 0);
    }
}

/* Whether line L of `file` is one of function fn's (a line-table row of
 * it starts inside fn) and is reported at all (seen, or the coverage is
 * complete so unseen means not run). */
static bool method_line(const tb_elfinfo *E, const line_ent *L, uint32_t file,
                        const tb_elf_func *fn, bool complete)
{
    if (L->file != file || (!L->seen && !complete))
        return false;
    for (size_t r = 0; r < E->nlines; r++)
        if (E->lines[r].file == file && E->lines[r].line == L->line &&
            E->lines[r].lo >= fn->lo && E->lines[r].lo < fn->hi)
            return true;
    return false;
}

static void put_cob_line(FILE *f, const tb_elfinfo *E, const tb_codecov_insn *ins, size_t n,
                         const line_ent *le, const char *ind)
{
    size_t bv, bc;

    line_branches(E, ins, n, le->file, le->line, &bv, &bc);
    fprintf(f, "%s<line number=\"%u\" hits=\"%llu\" branch=\"%s\"", ind, le->line,
            (unsigned long long)le->count, bv ? "true" : "false");
    if (!bv) {
        fprintf(f, "/>\n");
        return;
    }
    fprintf(f, " condition-coverage=\"%d%% (%zu/%zu)\">\n%s  <conditions>\n",
            (int)(100 * bc / bv), bc, bv, ind);
    fprintf(f, "%s    <condition number=\"0\" type=\"jump\" coverage=\"%d%%\"/>\n", ind,
            (int)(100 * bc / bv));
    fprintf(f, "%s  </conditions>\n%s</line>\n", ind, ind);
}

/* Cobertura XML (coverage-04.dtd): one package per ELF, one class per
 * source file, its functions as methods.  Lines that a gap may have
 * hidden are left out, as in the lcov form. */
static void put_cobertura(FILE *f, tb_elfinfo **elf, size_t nelf, const tb_codecov_insn *ins,
                          size_t n, bool complete, uint64_t *unknown_lines)
{
    size_t lv = 0, lc = 0, bv = 0, bc = 0;
    line_ent **Ls = calloc(nelf ? nelf : 1, sizeof *Ls);
    size_t *nls = calloc(nelf ? nelf : 1, sizeof *nls);

    if (!Ls || !nls) {
        free(Ls);
        free(nls);
        return;
    }
    for (size_t e = 0; e < nelf; e++) {
        if (line_table(elf[e], ins, n, &Ls[e], &nls[e]) < 0)
            continue;
        for (size_t i = 0; i < nls[e]; i++) {
            size_t v, c;

            if (!Ls[e][i].seen && !complete) {
                (*unknown_lines)++;
                continue;
            }
            lv++;
            lc += Ls[e][i].seen;
            line_branches(elf[e], ins, n, Ls[e][i].file, Ls[e][i].line, &v, &c);
            bv += v;
            bc += c;
        }
    }
    fprintf(f, "<?xml version=\"1.0\" ?>\n"
               "<!DOCTYPE coverage SYSTEM "
               "\"http://cobertura.sourceforge.net/xml/coverage-04.dtd\">\n");
    fprintf(f, "<coverage line-rate=\"%.4f\" branch-rate=\"%.4f\" lines-covered=\"%zu\" "
               "lines-valid=\"%zu\" branches-covered=\"%zu\" branches-valid=\"%zu\" "
               "complexity=\"0\" version=\"tracebench\" timestamp=\"0\">\n"
               "  <sources>\n    <source>.</source>\n  </sources>\n  <packages>\n",
            rate(lc, lv), rate(bc, bv), lc, lv, bc, bv);
    for (size_t e = 0; e < nelf; e++) {
        const tb_elfinfo *E = elf[e];
        const line_ent *L = Ls[e];

        if (!L)
            continue;
        fprintf(f, "    <package name=\"elf%zu\" line-rate=\"%.4f\" branch-rate=\"%.4f\" "
                   "complexity=\"0\">\n      <classes>\n", e, rate(lc, lv), rate(bc, bv));
        for (uint32_t file = 0; file < E->nfiles; file++) {
            size_t fv = 0, fc = 0, fbv = 0, fbc = 0;

            for (size_t i = 0; i < nls[e]; i++) {
                size_t v, c;

                if (L[i].file != file || (!L[i].seen && !complete))
                    continue;
                fv++;
                fc += L[i].seen;
                line_branches(E, ins, n, file, L[i].line, &v, &c);
                fbv += v;
                fbc += c;
            }
            if (!fv)
                continue;
            fprintf(f, "        <class name=\"");
            xml_str(f, E->files[file]);
            fprintf(f, "\" filename=\"");
            xml_str(f, E->files[file]);
            fprintf(f, "\" line-rate=\"%.4f\" branch-rate=\"%.4f\" complexity=\"0\">\n"
                       "          <methods>\n", rate(fc, fv), rate(fbc, fbv));
            for (size_t k = 0; k < E->nfuncs; k++) {
                const tb_elf_func *fn = &E->funcs[k];
                const tb_elf_line *row = tb_elfinfo_line(E, fn->lo);
                size_t mv = 0, mc = 0;
                bool seen;

                if (!row || row->file != file)
                    continue;
                func_count(ins, n, fn, &seen);
                if (!seen && !complete)
                    continue;
                /* The method's lines: its rows' distinct lines. */
                for (size_t i = 0; i < nls[e]; i++) {
                    if (method_line(E, &L[i], file, fn, complete)) {
                        mv++;
                        mc += L[i].seen;
                    }
                }
                fprintf(f, "            <method name=\"");
                xml_str(f, fn->name);
                fprintf(f, "\" signature=\"\" line-rate=\"%.4f\" branch-rate=\"1.0\" "
                           "complexity=\"0\">\n              <lines>\n", rate(mc, mv));
                for (size_t i = 0; i < nls[e]; i++)
                    if (method_line(E, &L[i], file, fn, complete))
                        put_cob_line(f, E, ins, n, &L[i], "                ");
                fprintf(f, "              </lines>\n            </method>\n");
            }
            fprintf(f, "          </methods>\n          <lines>\n");
            for (size_t i = 0; i < nls[e]; i++)
                if (L[i].file == file && (L[i].seen || complete))
                    put_cob_line(f, E, ins, n, &L[i], "            ");
            fprintf(f, "          </lines>\n        </class>\n");
        }
        fprintf(f, "      </classes>\n    </package>\n");
    }
    fprintf(f, "  </packages>\n</coverage>\n");
    for (size_t e = 0; e < nelf; e++)
        free(Ls[e]);
    free(Ls);
    free(nls);
}

static void put_json(FILE *f, tb_elfinfo **elf, size_t nelf, const tb_codecov_insn *ins, size_t n,
                     uint64_t nsources, uint64_t gaps)
{
    fprintf(f, "{\"sources\":%llu,\"gaps\":%llu,\"complete\":%s,\"insns\":[",
            (unsigned long long)nsources, (unsigned long long)gaps, gaps ? "false" : "true");
    for (size_t i = 0; i < n; i++) {
        const tb_codecov_insn *in = &ins[i];
        size_t w;
        const tb_elf_func *fn = find_func(elf, nelf, in->addr, &w);

        fprintf(f, "%s{\"addr\":%u,\"isa\":\"%s\",\"count\":%llu", i ? "," : "",
                (unsigned)in->addr, tb_isa_name((tb_isa)in->isa), (unsigned long long)in->count);
        /* passed/failed: runs whose condition the trace carries (all
         * of them, or "known":false: PTM's non-waypoints). */
        if (in->flags & TB_CODECOV_COND_UNKNOWN)
            fprintf(f, ",\"known\":false");
        else
            fprintf(f, ",\"passed\":%llu,\"failed\":%llu", (unsigned long long)in->passed,
                    (unsigned long long)in->failed);
        if (in->flags & TB_CODECOV_COND)
            fprintf(f, ",\"cond\":true");
        if (fn) {
            const tb_elf_line *row = tb_elfinfo_line(elf[w], in->addr);

            fprintf(f, ",\"func\":");
            tb_cli_json_str(f, fn->name);
            if (row) {
                fprintf(f, ",\"file\":");
                tb_cli_json_str(f, elf[w]->files[row->file]);
                fprintf(f, ",\"line\":%u", row->line);
            }
        }
        fputc('}', f);
    }
    fprintf(f, "],\"functions\":[");
    for (size_t e = 0, k = 0; e < nelf; e++)
        for (size_t i = 0; i < elf[e]->nfuncs; i++) {
            bool seen;
            uint64_t cnt = func_count(ins, n, &elf[e]->funcs[i], &seen);

            fprintf(f, "%s{\"name\":", k++ ? "," : "");
            tb_cli_json_str(f, elf[e]->funcs[i].name);
            fprintf(f, ",\"lo\":%u,\"hi\":%u,", (unsigned)elf[e]->funcs[i].lo,
                    (unsigned)elf[e]->funcs[i].hi);
            if (seen || !gaps)
                fprintf(f, "\"count\":%llu}", (unsigned long long)cnt);
            else
                fprintf(f, "\"count\":null}");
        }
    fprintf(f, "]}\n");
}

static void put_text(FILE *f, tb_elfinfo **elf, size_t nelf, const tb_codecov_insn *ins, size_t n,
                     uint64_t nsources, uint64_t gaps)
{
    uint64_t cond = 0, both = 0, unk = 0, total = 0;

    for (size_t i = 0; i < n; i++) {
        total += ins[i].count;
        if (!(ins[i].flags & TB_CODECOV_COND))
            continue;
        if (ins[i].flags & TB_CODECOV_COND_UNKNOWN)
            unk++;
        else {
            cond++;
            both += ins[i].passed && ins[i].failed;
        }
    }
    fprintf(f, "sources: %llu\n", (unsigned long long)nsources);
    fprintf(f, "instructions: %zu addresses seen, %llu executed\n", n, (unsigned long long)total);
    fprintf(f, "conditional: %llu traced (%llu seen passing and failing), %llu unknown\n",
            (unsigned long long)cond, (unsigned long long)both, (unsigned long long)unk);
    fprintf(f, "gaps: %llu (%s)\n", (unsigned long long)gaps,
            gaps ? "incomplete: code not seen may have run" : "complete");
    for (size_t e = 0; e < nelf; e++) {
        size_t hit = 0;

        for (size_t i = 0; i < elf[e]->nfuncs; i++) {
            bool seen;

            func_count(ins, n, &elf[e]->funcs[i], &seen);
            hit += seen;
        }
        fprintf(f, "functions: %zu of %zu entered\n", hit, elf[e]->nfuncs);
        for (size_t i = 0; i < elf[e]->nfuncs; i++) {
            const tb_elf_func *fn = &elf[e]->funcs[i];
            bool seen;
            uint64_t cnt = func_count(ins, n, fn, &seen);

            if (seen || !gaps)
                fprintf(f, "  %-24s 0x%08X-0x%08X %llu\n", fn->name, (unsigned)fn->lo,
                        (unsigned)fn->hi, (unsigned long long)cnt);
            else
                fprintf(f, "  %-24s 0x%08X-0x%08X unknown\n", fn->name, (unsigned)fn->lo,
                        (unsigned)fn->hi);
        }
    }
}

static const char *const cov_formats[] = {"text", "json", "lcov", "cobertura", NULL};

int tb_cli_coverage_format(const char *name)
{
    for (int k = 0; cov_formats[k]; k++)
        if (!strcmp(cov_formats[k], name))
            return k;
    return -1;
}

bool tb_cli_coverage_needs_dwarf(int format)
{
    return format == FMT_LCOV || format == FMT_COBERTURA;
}

int tb_cli_coverage_write(const char *cmd, const char *path, int format, tb_elfinfo **elf,
                          size_t nelf, tb_codecov *cc, uint64_t nsources, bool quiet)
{
    size_t n;
    const tb_codecov_insn *ins = tb_codecov_insns(cc, &n);
    uint64_t gaps = tb_codecov_gaps(cc), unknown_lines = 0;
    FILE *f;

    if (!ins) {
        fprintf(stderr, "tracebench %s: out of memory\n", cmd);
        return TB_EXIT_ERROR;
    }
    if (!(f = tb_cli_analysis_open_out(cmd, path)))
        return TB_EXIT_ERROR;
    if (format == FMT_LCOV)
        put_lcov(f, elf, nelf, ins, n, gaps == 0, &unknown_lines);
    else if (format == FMT_COBERTURA)
        put_cobertura(f, elf, nelf, ins, n, gaps == 0, &unknown_lines);
    else if (format == FMT_JSON)
        put_json(f, elf, nelf, ins, n, nsources, gaps);
    else
        put_text(f, elf, nelf, ins, n, nsources, gaps);
    if (gaps && !quiet)
        fprintf(stderr, "tracebench %s: note: the trace has %llu gap%s (filter, "
                        "overflow or lost trace): code not seen may have run there, so it "
                        "is not reported as not executed%s\n",
                cmd, (unsigned long long)gaps, gaps == 1 ? "" : "s",
                tb_cli_coverage_needs_dwarf(format) ? " (those lines are left out)" : "");
    return tb_cli_analysis_close_out(cmd, f, path);
}

int tb_cli_coverage(int argc, char **argv)
{
    tb_cli_analysis_args a;
    tb_elfinfo *elf[TB_CLI_MAX_MEMORY];
    int format = FMT_TEXT, status = TB_EXIT_OK;
    struct cov c = {0};
    tb_cli_analysis an = {.cmd = "coverage", .ctx = &c, .begin = cov_begin,
                          .element = cov_element, .end = cov_end, .after = cov_after};
    uint64_t nsources = 0;
    size_t nelf;

    if (tb_cli_wants_help(argc, argv)) {
        usage(stdout);
        return tb_cli_output_end(stdout, "coverage", 0);
    }
    status = tb_cli_analysis_parse("coverage", argc, argv, &a);
    if (status)
        return status;
    if (a.format && (format = tb_cli_coverage_format(a.format)) < 0)
        return tb_cli_usage_error("coverage", "--format %s: use text, json, lcov or "
                                              "cobertura", a.format);
    if (tb_cli_coverage_needs_dwarf(format) && !a.nelf)
        return tb_cli_usage_error("coverage", "--format %s needs the program's ELF "
                                              "(--memory ELF) for its source lines",
                                  cov_formats[format]);
    status = tb_cli_analysis_elfs("coverage", &a, elf, tb_cli_coverage_needs_dwarf(format));
    if (status)
        return status;
    nelf = a.nelf;
    c.elf = elf;
    c.elf_path = a.elf_path;
    c.nelf = nelf;
    c.cc = tb_codecov_new();
    if (!c.cc) {
        fprintf(stderr, "tracebench coverage: out of memory\n");
        status = TB_EXIT_ERROR;
        goto done;
    }
    if (nelf)
        tb_codecov_set_entry(c.cc, elf[0]->entry);
    status = tb_cli_analysis_run(&an, argc, argv, &a, &nsources);
    if (status == TB_EXIT_OK || status == TB_EXIT_LOST)
        status = tb_cli_exit_worse(status, tb_cli_coverage_write("coverage", a.out_path, format,
                                                                 elf, nelf, c.cc, nsources,
                                                                 a.quiet));
done:
    for (size_t e = 0; e < nelf; e++)
        tb_elfinfo_free(elf[e]);
    tb_codecov_free(c.cc);
    if (tb_cli_output_end(stdout, "coverage", 0))
        status = TB_EXIT_ERROR;
    return status;
}
