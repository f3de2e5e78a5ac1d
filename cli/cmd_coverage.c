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
#include "input.h"
#include "tracebench/codecov.h"
#include "tracebench/decoder.h"
#include "tracebench/elfinfo.h"

#define MAX_INPUTS 64

enum { FMT_TEXT, FMT_JSON, FMT_LCOV };

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

struct cov {
    tb_codecov *cc;
    tb_health health;
    int err;
};

static int on_elem(void *ctx, const tb_element *el)
{
    struct cov *c = ctx;
    int r;

    tb_health_element(&c->health, el);
    r = tb_codecov_element(c->cc, el);
    if (r < 0) {
        c->err = r;
        return 1;
    }
    return 0;
}

struct run {
    tb_parser *parser;
    tb_decoder *dec;
    struct cov *c;
    int err;
};

static int on_span(void *ctx, const uint8_t *data, size_t len, const tb_span_map *map)
{
    struct run *r = ctx;
    int n = tb_decoder_push_span(r->dec, r->parser, data, len, map, on_elem, r->c);

    if (n < 0 && !r->err)
        r->err = n;
    tb_health_bytes(&r->c->health, len);
    return n < 0;
}

/* The code of the seen instructions in mem against each ELF's: an ELF
 * that is not the traced program gives lines and functions of another
 * program, so it is refused.  Returns 0 or 1 after saying why. */
static int check_elfs(tb_codecov *cc, const tb_memimage *mem, tb_elfinfo **elf,
                      const char **elf_path, size_t nelf)
{
    size_t n;
    const tb_codecov_insn *ins = tb_codecov_insns(cc, &n);

    for (size_t e = 0; e < nelf; e++) {
        uint64_t differ = 0;
        uint32_t first = 0;

        for (size_t i = 0; ins && i < n; i++) {
            size_t am = 0, ae = 0;
            const uint8_t *pm = tb_memimage_ptr(mem, ins[i].addr, &am);
            const uint8_t *pe = tb_elfinfo_bytes(elf[e], ins[i].addr, &ae);

            if (!pm || !pe || am < ins[i].size || ae < ins[i].size)
                continue;
            if (memcmp(pm, pe, ins[i].size)) {
                if (!differ++)
                    first = ins[i].addr;
            }
        }
        if (differ) {
            fprintf(stderr, "tracebench coverage: --memory %s: its code differs from the traced "
                            "code at 0x%08X (%llu instructions differ): it is not the program "
                            "that ran; give that program's ELF\n",
                    elf_path[e], (unsigned)first, (unsigned long long)differ);
            return 1;
        }
    }
    return 0;
}

/* One input's sources into c.  An exit code. */
static int cover_input(tb_cli_input *in, struct cov *c, tb_elfinfo **elf,
                       const char **elf_path, size_t nelf, uint64_t *nsources)
{
    int status = TB_EXIT_OK;

    for (size_t k = 0; k < in->n; k++) {
        const tb_cli_source *s = &in->srcs[k];
        tb_memimage *mem = NULL;
        struct run run = {.c = c};
        char err[1024] = "";
        int r;

        r = tb_cli_input_memory(in, k, &mem, err, sizeof err);
        if (r < 0) {
            fprintf(stderr, "tracebench coverage: %s\n", err[0] ? err : tb_err_str(r));
            return TB_EXIT_ERROR;
        }
        tb_health_init(&c->health);
        r = tb_codecov_begin(c->cc, s->cfg.protocol, mem);
        run.parser = tb_parser_new(&s->cfg);
        run.dec = tb_decoder_new(&s->cfg, mem);
        if (run.dec)
            tb_decoder_set_health(run.dec, &c->health);
        if (r >= 0 && (!run.parser || !run.dec)) {
            r = TB_ERR_NOMEM;
            snprintf(err, sizeof err, "%s: cannot create a decoder (out of memory)", s->name);
        } else if (r >= 0) {
            r = tb_cli_input_stream_spans(in, k, on_span, &run, err, sizeof err);
            if (run.err)
                r = run.err;
            if (r >= 0)
                r = tb_decoder_push_finish(run.dec, run.parser, on_elem, c);
        }
        if (c->err && r >= 0)
            r = c->err;
        {
            int e = tb_codecov_end(c->cc);

            if (r >= 0)
                r = e;
        }
        tb_decoder_free(run.dec);
        tb_parser_free(run.parser);
        if (r < 0) {
            fprintf(stderr, "tracebench coverage: %s: %s\n", s->name,
                    r == TB_ERR_NOT_IN_IMAGE
                        ? "an instruction range runs into code the memory image does not hold"
                    : err[0] ? err
                             : tb_err_str(r));
            tb_memimage_free(mem);
            return TB_EXIT_ERROR;
        }
        if (check_elfs(c->cc, mem, elf, elf_path, nelf)) {
            tb_memimage_free(mem);
            return TB_EXIT_ERROR;
        }
        tb_memimage_free(mem);
        (*nsources)++;
        status = tb_cli_exit_worse(status, tb_cli_health_report(in, k, &c->health));
    }
    return status;
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

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
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
            json_str(f, fn->name);
            if (row) {
                fprintf(f, ",\"file\":");
                json_str(f, elf[w]->files[row->file]);
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
            json_str(f, elf[e]->funcs[i].name);
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

/* The options with a value: this command's and the input's (input.c). */
static bool takes_value(const char *a)
{
    static const char *const v[] = {"--format", "-o", "--memory", "--id", "--protocol",
                                    "--options", "--etmcr", "--etmidr", "--etmccer",
                                    "--traceid", "--buffer", NULL};

    for (size_t i = 0; v[i]; i++)
        if (!strcmp(a, v[i]))
            return true;
    return false;
}

static bool own_option(const char *a)
{
    return !strcmp(a, "--format") || !strcmp(a, "-o") || !strcmp(a, "--memory");
}

int tb_cli_coverage(int argc, char **argv)
{
    static const char *const formats[] = {"text", "json", "lcov", NULL};
    const char *paths[MAX_INPUTS], *elf_path[TB_CLI_MAX_MEMORY], *out_path = NULL;
    tb_elfinfo *elf[TB_CLI_MAX_MEMORY];
    size_t npaths = 0, nelf = 0;
    int format = FMT_TEXT, status = TB_EXIT_OK;
    bool quiet = false;
    struct cov c = {0};
    tb_cli_input *in;
    FILE *f = stdout;
    uint64_t nsources = 0;

    if (tb_cli_wants_help(argc, argv)) {
        usage(stdout);
        return tb_cli_output_end(stdout, "coverage", 0);
    }
    /* First pass: the paths and this command's own options; the input
     * options are checked per input below. */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (a[0] != '-') {
            if (npaths == MAX_INPUTS)
                return tb_cli_usage_error("coverage", "more than %d inputs", MAX_INPUTS);
            paths[npaths++] = a;
            continue;
        }
        if (!strcmp(a, "--quiet")) {
            quiet = true;
            continue;
        }
        if (!strcmp(a, "--formatted"))
            continue;
        if (!takes_value(a))
            return tb_cli_usage_error("coverage", "unknown option '%s'", a);
        if (!v)
            return tb_cli_usage_error("coverage", "%s needs a value", a);
        i++;
        if (!strcmp(a, "--format")) {
            int k;

            for (k = 0; formats[k] && strcmp(formats[k], v); k++)
                ;
            if (!formats[k])
                return tb_cli_usage_error("coverage", "--format %s: use text, json or lcov", v);
            format = k;
        } else if (!strcmp(a, "-o")) {
            out_path = v;
        } else if (!strcmp(a, "--memory") && !strchr(v, ':')) {
            if (nelf == TB_CLI_MAX_MEMORY)
                return tb_cli_usage_error("coverage", "more than %d --memory options",
                                          TB_CLI_MAX_MEMORY);
            elf_path[nelf++] = v;
        }
    }
    if (!npaths)
        return tb_cli_usage_error("coverage", "give a snapshot directory or trace file");
    if (format == FMT_LCOV && !nelf)
        return tb_cli_usage_error("coverage", "--format lcov needs the program's ELF "
                                              "(--memory ELF) for its source lines");
    for (size_t e = 0; e < nelf; e++) {
        char err[512] = "";
        int r = tb_elfinfo_load(elf_path[e], &elf[e], err, sizeof err);

        if (r < 0) {
            fprintf(stderr, "tracebench coverage: --memory %s\n", err);
            while (e--)
                tb_elfinfo_free(elf[e]);
            return TB_EXIT_ERROR;
        }
        if (!elf[e]->has_symtab && !quiet)
            fprintf(stderr, "tracebench coverage: note: --memory %s has no symbol table "
                            "(stripped): no function coverage from it\n", elf_path[e]);
        if (!elf[e]->has_dwarf && (format == FMT_LCOV || !quiet))
            fprintf(stderr, "tracebench coverage: %s --memory %s has no DWARF line table: "
                            "build it with -g for line coverage\n",
                    format == FMT_LCOV ? "" : "note:", elf_path[e]);
        if (!elf[e]->has_dwarf && format == FMT_LCOV) {
            nelf = e + 1;
            status = TB_EXIT_ERROR;
            goto done;
        }
    }
    c.cc = tb_codecov_new();
    in = calloc(1, sizeof *in);
    if (c.cc && nelf)
        tb_codecov_set_entry(c.cc, elf[0]->entry);
    if (!c.cc || !in) {
        fprintf(stderr, "tracebench coverage: out of memory\n");
        free(in);
        status = TB_EXIT_ERROR;
        goto done;
    }
    for (size_t p = 0; p < npaths && status != TB_EXIT_ERROR; p++) {
        struct stat st;
        bool dir = stat(paths[p], &st) == 0 && S_ISDIR(st.st_mode);
        int r = 0;

        tb_cli_input_init(in, "coverage", true, TB_STREAM_ALL);
        in->path = paths[p];
        for (int i = 1; i < argc && r != 2; i++) {
            const char *a = argv[i];

            if (a[0] != '-' || !strcmp(a, "--quiet"))
                continue;
            if (dir && !strcmp(a, "--memory") && i + 1 < argc && strchr(argv[i + 1], ':')) {
                tb_cli_usage_error("coverage", "--memory %s: a memory dump is for a raw trace "
                                               "file; %s is a snapshot directory, which gives "
                                               "its own memory (give --memory ELF for symbols "
                                               "and lines)", argv[i + 1], paths[p]);
                r = 2;
                break;
            }
            if (own_option(a) && !(!strcmp(a, "--memory") && !dir)) {
                i++;
                continue;
            }
            r = tb_cli_input_arg(in, argc, argv, &i);
            if (r == 0) {
                tb_cli_usage_error("coverage", "unknown option '%s'", a);
                r = 2;
            }
        }
        if (r == 2) {
            status = TB_EXIT_USAGE;
            break;
        }
        r = tb_cli_input_open(in);
        if (r) {
            tb_cli_input_close(in);
            status = r;
            break;
        }
        status = tb_cli_exit_worse(status, cover_input(in, &c, elf, elf_path, nelf, &nsources));
        if (in->refused)
            status = tb_cli_exit_worse(status, TB_EXIT_ERROR);
        tb_cli_input_close(in);
    }
    free(in);
    if (status == TB_EXIT_OK || status == TB_EXIT_LOST) {
        size_t n;
        const tb_codecov_insn *ins = tb_codecov_insns(c.cc, &n);
        uint64_t gaps = tb_codecov_gaps(c.cc), unknown_lines = 0;

        if (!ins) {
            fprintf(stderr, "tracebench coverage: out of memory\n");
            status = TB_EXIT_ERROR;
            goto done;
        }
        if (out_path && !(f = fopen(out_path, "w"))) {
            fprintf(stderr, "tracebench coverage: -o %s: %s\n", out_path, strerror(errno));
            f = stdout;
            status = TB_EXIT_ERROR;
            goto done;
        }
        if (format == FMT_LCOV)
            put_lcov(f, elf, nelf, ins, n, gaps == 0, &unknown_lines);
        else if (format == FMT_JSON)
            put_json(f, elf, nelf, ins, n, nsources, gaps);
        else
            put_text(f, elf, nelf, ins, n, nsources, gaps);
        if (gaps && !quiet)
            fprintf(stderr, "tracebench coverage: note: the trace has %llu gap%s (filter, "
                            "overflow or lost trace): code not seen may have run there, so it "
                            "is not reported as not executed%s\n",
                    (unsigned long long)gaps, gaps == 1 ? "" : "s",
                    format == FMT_LCOV ? " (those lines are left out)" : "");
        if (f != stdout) {
            int e = ferror(f) ? EIO : 0;

            if (fclose(f) != 0 || e) {
                fprintf(stderr, "tracebench coverage: -o %s: the write failed\n", out_path);
                status = TB_EXIT_ERROR;
            }
            f = stdout;
        }
    }
done:
    for (size_t e = 0; e < nelf; e++)
        tb_elfinfo_free(elf[e]);
    tb_codecov_free(c.cc);
    if (tb_cli_output_end(stdout, "coverage", 0))
        status = TB_EXIT_ERROR;
    return status;
}
