/* tracebench profile DIR|FILE ... [--memory ELF ...] [--id ID|all]
 *                   [--format callgrind|folded|text] [-o FILE]
 * Where the instructions (and, in cycle-accurate trace, the cycles)
 * went: per function, per line, per call edge and per call stack
 * (analysis/profile.c), from the same inputs as `coverage` (analyze.c).
 * Exit (cli.h): 0 done, 2 usage, 4 an error (an ELF that is not the
 * traced program, an input that would not load), 5 trace was lost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "cli.h"
#include "tracebench/classify.h"
#include "tracebench/elfinfo.h"
#include "tracebench/profile.h"

enum { FMT_TEXT, FMT_CALLGRIND, FMT_FOLDED };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tracebench profile DIR|FILE ... [--memory ELF ...] [--id ID|all]\n"
            "              [--format callgrind|folded|text] [-o FILE] [--cycles] [--quiet]\n"
            "              [raw FILE options, as in tracebench decode --help]\n"
            "\n"
            "Where the traced instructions went, merged over the traces given:\n"
            "instructions (and cycles, where the trace is cycle-accurate) per function,\n"
            "per source line, per call edge (branch with link and exceptions, returns\n"
            "matched by return address) and per call stack.\n"
            "  DIR|FILE         snapshot directories or raw trace files (as decode reads)\n"
            "  --memory ELF     the program's ELF: its symbols name the functions, its\n"
            "                   DWARF line table (built with -g) gives the lines; without\n"
            "                   symbols a function is named by its entry address (the\n"
            "                   target of the call that entered it).  Its code must equal\n"
            "                   the traced code.  For a raw FILE also its memory\n"
            "  --id ID|all      the trace source(s) to count (default: all)\n"
            "  --format F       text (a summary, functions and call edges, the default),\n"
            "                   callgrind (for KCacheGrind and callgrind_annotate:\n"
            "                   exclusive costs per line, calls= with inclusive costs) or\n"
            "                   folded (\"main;f;g N\" per stack, for flamegraph.pl)\n"
            "  -o FILE          write there instead of standard output\n"
            "  --cycles         cycle-accurate trace: each instruction's own cycles, from\n"
            "                   the decode that decode --cycles gives (ETMv3, ETMv1,\n"
            "                   ETMv2), so per-line and per-function cycles are exact;\n"
            "                   slower (one range an instruction).  Without it, and for\n"
            "                   PTM (which counts cycles per waypoint), a range's cycles\n"
            "                   go to its last instruction\n"
            "  --quiet          no note on what could not be known\n"
            "\n"
            "Returns are matched to a shadow stack of at most 1024 frames; a call made\n"
            "deeper counts as a call but has no inclusive cost.  A trace gap (filter,\n"
            "overflow, lost trace) ends every open frame and empties the stack: the code\n"
            "after it starts a new root, shown as \"[gap]\" in folded stacks.\n"
            "\n"
            "exit: 0 done, 2 usage, 4 error (an input would not load, the ELF is not the\n"
            "      traced program, the output not written), 5 trace was lost to corruption\n"
            "      or never synchronised (a warning on stderr says why)\n");
}

struct prof {
    tb_profile *p;
    tb_elfinfo **elf;
    const char *const *elf_path;
    size_t nelf;
};

static int prof_begin(void *ctx, tb_protocol proto, const tb_memimage *mem)
{
    return tb_profile_begin(((struct prof *)ctx)->p, proto, mem);
}

static int prof_element(void *ctx, const tb_element *el)
{
    return tb_profile_element(((struct prof *)ctx)->p, el);
}

static int prof_end(void *ctx)
{
    return tb_profile_end(((struct prof *)ctx)->p);
}

static void insn_at(const void *arr, size_t i, uint32_t *addr, unsigned *size)
{
    const tb_profile_insn *in = arr;

    *addr = in[i].addr;
    *size = in[i].isa == TB_ISA_ARM ? 4 : 2; /* Thumb: the first halfword */
}

static int prof_after(void *ctx, const tb_memimage *mem)
{
    struct prof *c = ctx;
    size_t n;
    const tb_profile_insn *ins = tb_profile_insns(c->p, &n);

    return tb_cli_analysis_check_code("profile", mem, c->elf, c->elf_path, c->nelf, insn_at,
                                      ins, ins ? n : 0);
}

/* A function's name: its symbol's, else its entry address. */
static const char *name_of(const struct prof *c, uint32_t func, char *buf, size_t len)
{
    for (size_t e = 0; e < c->nelf; e++) {
        const tb_elf_func *f = tb_elfinfo_func(c->elf[e], func);

        if (f && f->lo == func && tb_profile_is_symbol(c->p, func))
            return f->name;
    }
    snprintf(buf, len, "0x%08X", (unsigned)func);
    return buf;
}

/* The source line of addr: its file's name (NULL: none) and line. */
static const char *line_of(const struct prof *c, uint32_t addr, unsigned *line)
{
    for (size_t e = 0; e < c->nelf; e++) {
        const tb_elf_line *row = tb_elfinfo_line(c->elf[e], addr);

        if (row) {
            *line = row->line;
            return c->elf[e]->files[row->file];
        }
    }
    *line = 0;
    return NULL;
}

static void put_cost(FILE *f, uint64_t insns, uint64_t cycles, bool cyc)
{
    if (cyc)
        fprintf(f, " %llu %llu\n", (unsigned long long)insns, (unsigned long long)cycles);
    else
        fprintf(f, " %llu\n", (unsigned long long)insns);
}

/* KCacheGrind's callgrind format (valgrind's docs/cl-format): positions
 * are source lines (0 without DWARF); each function's exclusive cost per
 * line, then its calls with their inclusive costs. */
static void put_callgrind(FILE *f, const struct prof *c, const tb_profile_insn *ins, size_t n,
                          const tb_profile_call *calls, size_t nc, tb_profile_stats st)
{
    bool cyc = st.has_cycles;
    size_t j = 0;

    fprintf(f, "# callgrind format\nversion: 1\ncreator: tracebench profile\n"
               "positions: line\nevents: Instructions%s\n", cyc ? " Cycles" : "");
    fprintf(f, "summary:");
    put_cost(f, st.insns, st.cycles, cyc);
    for (size_t i = 0; i < n;) {
        uint32_t func = ins[i].func;
        char nb[16];
        unsigned line;
        const char *file = line_of(c, func, &line), *cur;

        fprintf(f, "\nfl=%s\nfn=%s\n", file ? file : "???", name_of(c, func, nb, sizeof nb));
        cur = file;
        for (; i < n && ins[i].func == func; i++) {
            uint64_t ni = 0, nc2 = 0;
            const char *fi = line_of(c, ins[i].addr, &line);
            unsigned l = line;

            /* Instructions of one line in a row: one cost line. */
            do {
                ni += ins[i].count;
                nc2 += ins[i].cycles;
                i++;
            } while (i < n && ins[i].func == func && line_of(c, ins[i].addr, &line) == fi &&
                     line == l);
            i--;
            if (fi != cur) {
                fprintf(f, "fi=%s\n", fi ? fi : "???");
                cur = fi;
            }
            fprintf(f, "%u", l);
            put_cost(f, ni, nc2, cyc);
        }
        /* Its calls, in the file of each site. */
        while (j < nc && calls[j].caller < func)
            j++;
        for (; j < nc && calls[j].caller == func; j++) {
            unsigned sl, tl;
            const char *sf = line_of(c, calls[j].site, &sl);
            const char *tf = line_of(c, calls[j].callee, &tl);

            if (sf != cur) {
                fprintf(f, "fi=%s\n", sf ? sf : "???");
                cur = sf;
            }
            fprintf(f, "cfl=%s\ncfn=%s\ncalls=%llu %u\n%u", tf ? tf : "???",
                    name_of(c, calls[j].callee, nb, sizeof nb),
                    (unsigned long long)calls[j].calls, tl, sl);
            put_cost(f, calls[j].insns, calls[j].cycles, cyc);
        }
    }
    /* Callers whose own code never ran (cannot be: a call runs the
     * caller's BL), left for completeness: none expected. */
    fprintf(f, "\ntotals:");
    put_cost(f, st.insns, st.cycles, cyc);
}

static void put_folded(FILE *f, const struct prof *c, tb_profile *p)
{
    size_t n;
    const tb_profile_stack *s = tb_profile_stacks(p, &n);
    uint32_t frames[TB_PROFILE_MAX_DEPTH + 2];

    for (size_t i = 0; s && i < n; i++) {
        unsigned root = 0;
        int d = tb_profile_frames(p, s[i].node, frames, TB_PROFILE_MAX_DEPTH + 2, &root);
        char nb[16];

        if (d < 0 || !s[i].insns)
            continue;
        if (root == TB_PROFILE_ROOT_GAP)
            fprintf(f, "[gap];");
        for (int k = 0; k < d; k++)
            fprintf(f, "%s%s", k ? ";" : "", name_of(c, frames[k], nb, sizeof nb));
        /* Code of another function reached without a call (a tail
         * branch): its own frame on top. */
        if (d == 0 || frames[d - 1] != s[i].leaf)
            fprintf(f, "%s%s", d ? ";" : "", name_of(c, s[i].leaf, nb, sizeof nb));
        fprintf(f, " %llu\n", (unsigned long long)s[i].insns);
    }
}

static void put_text(FILE *f, const struct prof *c, const tb_profile_insn *ins, size_t n,
                     const tb_profile_call *calls, size_t nc, tb_profile_stats st,
                     uint64_t nsources)
{
    fprintf(f, "sources: %llu\ninstructions: %llu\n", (unsigned long long)nsources,
            (unsigned long long)st.insns);
    if (st.has_cycles)
        fprintf(f, "cycles: %llu\n", (unsigned long long)st.cycles);
    else
        fprintf(f, "cycles: not in the trace (not cycle-accurate)\n");
    fprintf(f, "gaps: %llu\n", (unsigned long long)st.gaps);
    if (st.deep_calls)
        fprintf(f, "calls past the stack's depth (no inclusive cost): %llu\n",
                (unsigned long long)st.deep_calls);
    fprintf(f, "functions (exclusive instructions%s):\n", st.has_cycles ? ", cycles" : "");
    for (size_t i = 0; i < n;) {
        uint32_t func = ins[i].func;
        uint64_t ni = 0, cy = 0;
        char nb[16];

        for (; i < n && ins[i].func == func; i++) {
            ni += ins[i].count;
            cy += ins[i].cycles;
        }
        fprintf(f, "  %-24s %12llu", name_of(c, func, nb, sizeof nb), (unsigned long long)ni);
        if (st.has_cycles)
            fprintf(f, " %12llu", (unsigned long long)cy);
        fputc('\n', f);
    }
    fprintf(f, "calls (caller -> callee: calls, inclusive instructions%s):\n",
            st.has_cycles ? ", cycles" : "");
    for (size_t i = 0; i < nc; i++) {
        char a[16], b[16];

        fprintf(f, "  %s -> %s%s at 0x%08X: %llu, %llu", name_of(c, calls[i].caller, a, sizeof a),
                name_of(c, calls[i].callee, b, sizeof b),
                calls[i].kind == TB_PROFILE_EXC ? " (exception)" : "", (unsigned)calls[i].site,
                (unsigned long long)calls[i].calls, (unsigned long long)calls[i].insns);
        if (st.has_cycles)
            fprintf(f, ", %llu", (unsigned long long)calls[i].cycles);
        fputc('\n', f);
    }
}

static const char *const prof_formats[] = {"text", "callgrind", "folded", NULL};

int tb_cli_profile_format(const char *name)
{
    for (int k = 0; prof_formats[k]; k++)
        if (!strcmp(prof_formats[k], name))
            return k;
    return -1;
}

int tb_cli_profile_add_funcs(const char *cmd, tb_profile *p, tb_elfinfo **elf, size_t nelf)
{
    for (size_t e = 0; e < nelf; e++)
        for (size_t i = 0; i < elf[e]->nfuncs; i++)
            if (elf[e]->funcs[i].hi > elf[e]->funcs[i].lo &&
                tb_profile_add_func(p, elf[e]->funcs[i].lo, elf[e]->funcs[i].hi) < 0) {
                fprintf(stderr, "tracebench %s: out of memory\n", cmd);
                return TB_EXIT_ERROR;
            }
    return 0;
}

int tb_cli_profile_write(const char *cmd, const char *path, int format, tb_elfinfo **elf,
                         size_t nelf, tb_profile *p, uint64_t nsources, bool quiet)
{
    struct prof c = {.p = p, .elf = elf, .nelf = nelf};
    size_t n, nc;
    const tb_profile_insn *ins = tb_profile_insns(p, &n);
    const tb_profile_call *calls = tb_profile_calls(p, &nc);
    tb_profile_stats st = tb_profile_get_stats(p);
    FILE *f;

    if (!ins || !calls) {
        fprintf(stderr, "tracebench %s: out of memory\n", cmd);
        return TB_EXIT_ERROR;
    }
    if (!(f = tb_cli_analysis_open_out(cmd, path)))
        return TB_EXIT_ERROR;
    if (format == FMT_CALLGRIND)
        put_callgrind(f, &c, ins, n, calls, nc, st);
    else if (format == FMT_FOLDED)
        put_folded(f, &c, p);
    else
        put_text(f, &c, ins, n, calls, nc, st, nsources);
    if (!quiet && st.gaps)
        fprintf(stderr, "tracebench %s: note: the trace has %llu gap%s (filter, "
                        "overflow or lost trace): the call stack was emptied at each, and "
                        "what ran in it is not counted\n",
                cmd, (unsigned long long)st.gaps, st.gaps == 1 ? "" : "s");
    if (!quiet && st.deep_calls)
        fprintf(stderr, "tracebench %s: note: %llu call%s past the stack's depth of "
                        "%u frames: counted as calls, with no inclusive cost\n",
                cmd, (unsigned long long)st.deep_calls, st.deep_calls == 1 ? "" : "s",
                TB_PROFILE_MAX_DEPTH);
    return tb_cli_analysis_close_out(cmd, f, path);
}

int tb_cli_profile(int argc, char **argv)
{
    tb_cli_analysis_args a;
    tb_elfinfo *elf[TB_CLI_MAX_MEMORY];
    int format = FMT_TEXT, status;
    struct prof c = {0};
    tb_cli_analysis an = {.cmd = "profile", .ctx = &c, .begin = prof_begin,
                          .element = prof_element, .end = prof_end, .after = prof_after};
    uint64_t nsources = 0;
    size_t nelf;

    if (tb_cli_wants_help(argc, argv)) {
        usage(stdout);
        return tb_cli_output_end(stdout, "profile", 0);
    }
    status = tb_cli_analysis_parse("profile", argc, argv, &a);
    if (status)
        return status;
    an.cycle_ranges = a.cycles;
    if (a.format && (format = tb_cli_profile_format(a.format)) < 0)
        return tb_cli_usage_error("profile", "--format %s: use text, callgrind or folded",
                                  a.format);
    status = tb_cli_analysis_elfs("profile", &a, elf, false);
    if (status)
        return status;
    nelf = a.nelf;
    c.elf = elf;
    c.elf_path = a.elf_path;
    c.nelf = nelf;
    c.p = tb_profile_new();
    if (!c.p) {
        fprintf(stderr, "tracebench profile: out of memory\n");
        status = TB_EXIT_ERROR;
        goto done;
    }
    status = tb_cli_profile_add_funcs("profile", c.p, elf, nelf);
    if (status)
        goto done;
    status = tb_cli_analysis_run(&an, argc, argv, &a, &nsources);
    if (status == TB_EXIT_OK || status == TB_EXIT_LOST)
        status = tb_cli_exit_worse(status, tb_cli_profile_write("profile", a.out_path, format,
                                                                elf, nelf, c.p, nsources,
                                                                a.quiet));
done:
    for (size_t e = 0; e < nelf; e++)
        tb_elfinfo_free(elf[e]);
    tb_profile_free(c.p);
    if (tb_cli_output_end(stdout, "profile", 0))
        status = TB_EXIT_ERROR;
    return status;
}
