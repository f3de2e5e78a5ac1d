/* The input and decode loop shared by `coverage` and `profile`
 * (analyze.h): written once, so both read the same inputs with the same
 * flags and say the same things about bad ones. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze.h"
#include "cli.h"
#include "tracebench/health.h"
#include "tracebench/pipeline.h"

/* The options with a value: the analysis commands' and the input's
 * (input.c). */
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

int tb_cli_analysis_parse(const char *cmd, int argc, char **argv, tb_cli_analysis_args *a)
{
    memset(a, 0, sizeof *a);
    /* The paths and the command's own options; the input options are
     * checked per input (tb_cli_analysis_run). */
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (s[0] != '-') {
            if (a->npaths == TB_CLI_MAX_INPUTS)
                return tb_cli_usage_error(cmd, "more than %d inputs", TB_CLI_MAX_INPUTS);
            a->paths[a->npaths++] = s;
            continue;
        }
        if (!strcmp(s, "--quiet")) {
            a->quiet = true;
            continue;
        }
        if (!strcmp(s, "--cycles") && !strcmp(cmd, "profile")) {
            a->cycles = true;
            continue;
        }
        if (!strcmp(s, "--formatted"))
            continue;
        if (!takes_value(s))
            return tb_cli_usage_error(cmd, "unknown option '%s'", s);
        if (!v)
            return tb_cli_usage_error(cmd, "%s needs a value", s);
        i++;
        if (!strcmp(s, "--format")) {
            a->format = v;
        } else if (!strcmp(s, "-o")) {
            a->out_path = v;
        } else if (!strcmp(s, "--memory") && !strchr(v, ':')) {
            if (a->nelf == TB_CLI_MAX_MEMORY)
                return tb_cli_usage_error(cmd, "more than %d --memory options",
                                          TB_CLI_MAX_MEMORY);
            a->elf_path[a->nelf++] = v;
        }
    }
    if (!a->npaths)
        return tb_cli_usage_error(cmd, "give a snapshot directory or trace file");
    return 0;
}

int tb_cli_analysis_elfs(const char *cmd, const tb_cli_analysis_args *a, tb_elfinfo **elf,
                         bool need_dwarf)
{
    const char *flag = a->elf_flag ? a->elf_flag : "--memory";

    for (size_t e = 0; e < a->nelf; e++) {
        char err[512] = "";
        int r = tb_elfinfo_load(a->elf_path[e], &elf[e], err, sizeof err);

        if (r < 0) {
            fprintf(stderr, "tracebench %s: %s %s\n", cmd, flag, err);
            while (e--)
                tb_elfinfo_free(elf[e]);
            return TB_EXIT_ERROR;
        }
        if (!elf[e]->has_symtab && !a->quiet)
            fprintf(stderr, "tracebench %s: note: %s %s has no symbol table "
                            "(stripped): no function names from it\n", cmd, flag,
                    a->elf_path[e]);
        if (!elf[e]->has_dwarf && (need_dwarf || !a->quiet))
            fprintf(stderr, "tracebench %s: %s%s %s has no DWARF line table: "
                            "build it with -g for source lines\n",
                    cmd, need_dwarf ? "" : "note: ", flag, a->elf_path[e]);
        if (!elf[e]->has_dwarf && need_dwarf) {
            for (size_t k = 0; k <= e; k++)
                tb_elfinfo_free(elf[k]);
            return TB_EXIT_ERROR;
        }
    }
    return 0;
}

int tb_cli_analysis_check_code(const char *cmd, const tb_memimage *mem, tb_elfinfo **elf,
                               const char *const *elf_path, size_t nelf,
                               void (*get)(const void *arr, size_t i, uint32_t *addr,
                                           unsigned *size),
                               const void *arr, size_t n)
{
    for (size_t e = 0; e < nelf; e++) {
        uint64_t differ = 0;
        uint32_t first = 0;

        for (size_t i = 0; arr && i < n; i++) {
            size_t am = 0, ae = 0;
            uint32_t addr;
            unsigned size;
            const uint8_t *pm, *pe;

            get(arr, i, &addr, &size);
            pm = tb_memimage_ptr(mem, addr, &am);
            pe = tb_elfinfo_bytes(elf[e], addr, &ae);
            if (!pm || !pe || am < size || ae < size)
                continue;
            if (memcmp(pm, pe, size) && !differ++)
                first = addr;
        }
        if (differ) {
            fprintf(stderr, "tracebench %s: --memory %s: its code differs from the traced "
                            "code at 0x%08X (%llu instructions differ): it is not the program "
                            "that ran; give that program's ELF\n",
                    cmd, elf_path[e], (unsigned)first, (unsigned long long)differ);
            return 1;
        }
    }
    return 0;
}

struct run {
    const tb_cli_analysis *an;
    tb_pipeline *pl;
    tb_health health;
    int err;
};

static int on_elem(void *ctx, const tb_element *el)
{
    struct run *r = ctx;
    int e;

    e = r->an->element(r->an->ctx, el);
    if (e < 0) {
        if (!r->err)
            r->err = e;
        return 1;
    }
    return 0;
}

/* One input's sources.  An exit code. */
static int run_input(const tb_cli_analysis *an, tb_cli_input *in, bool quiet, uint64_t *nsources)
{
    int status = TB_EXIT_OK;

    for (size_t k = 0; k < in->n; k++) {
        const tb_cli_source *s = &in->srcs[k];
        tb_memimage *mem = NULL;
        struct run *run = calloc(1, sizeof *run);
        char err[1024] = "";
        int r;

        if (!run) {
            fprintf(stderr, "tracebench %s: out of memory\n", an->cmd);
            return TB_EXIT_ERROR;
        }
        run->an = an;
        r = tb_cli_input_memory(in, k, &mem, err, sizeof err);
        if (r < 0) {
            fprintf(stderr, "tracebench %s: %s\n", an->cmd, err[0] ? err : tb_err_str(r));
            free(run);
            return TB_EXIT_ERROR;
        }
        tb_health_init(&run->health);
        r = an->begin(an->ctx, s->cfg.protocol, mem);
        /* No gaps: a corrupt frame is an error here (not decoded past). */
        run->pl = tb_pipeline_new(&s->cfg, mem,
                                  &(tb_pipeline_opts){.size = sizeof(tb_pipeline_opts),
                                                      .on_element = on_elem, .ctx = run,
                                                      .health = &run->health});
        if (r >= 0 && !run->pl) {
            r = TB_ERR_NOMEM;
            snprintf(err, sizeof err, "%s: cannot create a decoder (out of memory)", s->name);
        } else if (r >= 0) {
            /* Only where the trace counts cycles, and asked for: a
             * range a instruction costs the profile 1/4 to 1/2 of its
             * speed (bench_decode --analysis --profile-cycles).  A
             * protocol without it keeps its ranges (cycles on each
             * range's last instruction, as profile.h says). */
            if (an->cycle_ranges && s->cfg.cycle_accurate)
                (void)tb_decoder_set_cycle_ranges(tb_pipeline_decoder(run->pl), true);
            r = tb_pipeline_finish_stream(run->pl, tb_cli_input_stream_spans(
                                                       in, k, tb_pipeline_on_span, run->pl,
                                                       err, sizeof err));
        }
        /* The analysis' own error, not the TB_ERR_STOPPED it caused. */
        if (run->err)
            r = run->err;
        {
            int e = an->end(an->ctx);

            if (r >= 0)
                r = e;
        }
        tb_pipeline_free(run->pl);
        if (r < 0) {
            fprintf(stderr, "tracebench %s: %s: %s\n", an->cmd, s->name,
                    r == TB_ERR_NOT_IN_IMAGE
                        ? "an instruction range runs into code the memory image does not hold"
                    : err[0] ? err
                             : tb_err_str(r));
            tb_memimage_free(mem);
            free(run);
            return TB_EXIT_ERROR;
        }
        if (an->after && an->after(an->ctx, mem)) {
            tb_memimage_free(mem);
            free(run);
            return TB_EXIT_ERROR;
        }
        tb_memimage_free(mem);
        (*nsources)++;
        /* Data-only mode (ETMCR[20], IHI0014Q 7.4.10) traces transfers
         * and no instruction: its source shows no code at all, which
         * the gap note alone would put down to a filter or lost trace. */
        if (s->cfg.data_only && !quiet)
            fprintf(stderr,
                    "tracebench %s: note: %s is data-only trace (ETMCR[20]): it carries data "
                    "transfers and no instruction trace, so it shows no code; `tracebench "
                    "decode` lists its transfers\n",
                    an->cmd, s->name);
        status = tb_cli_exit_worse(status, tb_cli_health_report(in, k, &run->health));
        free(run);
    }
    return status;
}

int tb_cli_analysis_run(const tb_cli_analysis *an, int argc, char **argv,
                        const tb_cli_analysis_args *a, uint64_t *nsources)
{
    tb_cli_input *in = calloc(1, sizeof *in);
    int status = TB_EXIT_OK;

    if (!in) {
        fprintf(stderr, "tracebench %s: out of memory\n", an->cmd);
        return TB_EXIT_ERROR;
    }
    for (size_t p = 0; p < a->npaths && status != TB_EXIT_ERROR; p++) {
        struct stat st;
        bool dir = stat(a->paths[p], &st) == 0 && S_ISDIR(st.st_mode);
        int r = 0;

        tb_cli_input_init(in, an->cmd, true, TB_STREAM_ALL);
        in->path = a->paths[p];
        for (int i = 1; i < argc && r != 2; i++) {
            const char *s = argv[i];

            if (s[0] != '-' || !strcmp(s, "--quiet") || (a->cycles && !strcmp(s, "--cycles")))
                continue;
            if (dir && !strcmp(s, "--memory") && i + 1 < argc && strchr(argv[i + 1], ':')) {
                tb_cli_usage_error(an->cmd, "--memory %s: a memory dump is for a raw trace "
                                            "file; %s is a snapshot directory, which gives "
                                            "its own memory (give --memory ELF for symbols "
                                            "and lines)", argv[i + 1], a->paths[p]);
                r = 2;
                break;
            }
            if (own_option(s) && !(!strcmp(s, "--memory") && !dir)) {
                i++;
                continue;
            }
            r = tb_cli_input_arg(in, argc, argv, &i);
            if (r == 0) {
                tb_cli_usage_error(an->cmd, "unknown option '%s'", s);
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
        status = tb_cli_exit_worse(status, run_input(an, in, a->quiet, nsources));
        if (in->refused)
            status = tb_cli_exit_worse(status, TB_EXIT_ERROR);
        tb_cli_input_close(in);
    }
    free(in);
    return status;
}

FILE *tb_cli_analysis_open_out(const char *cmd, const char *path)
{
    FILE *f;

    if (!path)
        return stdout;
    f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "tracebench %s: -o %s: %s\n", cmd, path, strerror(errno));
    return f;
}

int tb_cli_analysis_close_out(const char *cmd, FILE *f, const char *path)
{
    int e;

    if (!f || f == stdout)
        return 0;
    e = ferror(f) ? EIO : 0;
    if (fclose(f) != 0 || e) {
        fprintf(stderr, "tracebench %s: -o %s: the write failed\n", cmd, path);
        return TB_EXIT_ERROR;
    }
    return 0;
}

void tb_cli_json_str(FILE *f, const char *s)
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

/* ---- symbols in the decode (decode --symbols) ---- */

void tb_cli_sym_text(const tb_elfinfo *e, uint32_t addr, char *buf, size_t len)
{
    const tb_elf_func *fn = tb_elfinfo_func(e, addr);
    const tb_elf_line *row = tb_elfinfo_line(e, addr);
    int n;

    if (fn)
        n = snprintf(buf, len, "%s+0x%x", fn->name, (unsigned)(addr - fn->lo));
    else
        n = snprintf(buf, len, "?");
    if (row && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " %s:%u", e->files[row->file], (unsigned)row->line);
}

void tb_cli_sym_json(FILE *f, const tb_elfinfo *e, const char *key, uint32_t addr)
{
    const tb_elf_func *fn = tb_elfinfo_func(e, addr);
    const tb_elf_line *row = tb_elfinfo_line(e, addr);

    if (fn) {
        fprintf(f, ",\"%s_func\":", key);
        tb_cli_json_str(f, fn->name);
        fprintf(f, ",\"%s_offset\":%u", key, (unsigned)(addr - fn->lo));
    }
    if (row) {
        fprintf(f, ",\"%s_file\":", key);
        tb_cli_json_str(f, e->files[row->file]);
        fprintf(f, ",\"%s_line\":%u", key, (unsigned)row->line);
    }
}

int tb_cli_sym_check(tb_cli_sym_check_state *s, const tb_elfinfo *e, const tb_memimage *mem,
                     const tb_element *el)
{
    uint32_t a = el->start;

    /* The range's bytes, [start, end), in the image the decode read and
     * in the ELF: a difference means the names are another program's. */
    while (a < el->end) {
        size_t am = 0, ae = 0, n;
        const uint8_t *pm = tb_memimage_ptr(mem, a, &am);
        const uint8_t *pe = tb_elfinfo_bytes(e, a, &ae);

        if (!pm || !am)
            return 0; /* the decoder says so itself */
        if (!pe || !ae) {
            if (!s->outside++)
                s->first_outside = a;
            return 0;
        }
        n = am < ae ? am : ae;
        if (n > el->end - a)
            n = el->end - a;
        if (memcmp(pm, pe, n)) {
            if (!s->differ++)
                s->first_differ = a;
            return 1;
        }
        a += (uint32_t)n;
    }
    return 0;
}
