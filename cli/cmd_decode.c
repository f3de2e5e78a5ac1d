/* tracebench decode DIR|FILE [--id ID|all] [--format text|json|addr]
 *                  [--symbols [ELF]]: a
 * snapshot's trace (or a raw trace buffer file's, with its configuration
 * and memory) decoded to instructions.  With --id all every ETMv3/PTM
 * source is decoded in turn and each line tagged with its trace ID: text
 * and addr lines start "0x10: ", JSON objects have "id":16 first.
 * --symbols ELF: each range's first and last instruction as function+offset
 * and file:line (the ELF's symbols and DWARF line table), also under
 * --disasm per instruction (without ELF: the --memory ELF); without it no
 * symbol work is done at all.
 * Exit (cli.h): 0 decoded, 2 usage, 4 an error, 5 trace was lost to
 * corruption or never synchronised (a warning on stderr says why). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze.h"
#include "cli.h"
#include "input.h"
#include "tracebench/decoder.h"
#include "tracebench/pipeline.h"

enum { FMT_TEXT, FMT_JSON, FMT_ADDR };

struct out {
    FILE *f;
    int format;
    int id;              /* the source's trace ID */
    bool tag;            /* --id all: tag each line with it */
    tb_cli_addr_out addr;
    int write_errno;
    bool disasm;         /* --disasm: instructions after each range */
    bool cycles;         /* --cycles: ranges split where their counts end */
    tb_cli_disasm *dis;  /* for the source being decoded */
    tb_cli_progress pr;  /* on a terminal: trace read, instructions */
    uint64_t insns;      /* decoded so far, for the progress line */
    tb_health health;    /* the source's: was trace lost, and why */
    uint64_t last_index; /* the stream index of the source's last byte */
    /* --symbols ELF: NULL without it (no symbol work at all) */
    tb_elfinfo *sym;
    const char *sym_path;
    const tb_memimage *mem;      /* the source's, for the byte check */
    tb_cli_sym_check_state symck; /* the source's */
};

/* Text: "  ; main+0x10 main.c:12 .. main+0x2c main.c:15" after a range. */
static void sym_range_text(const struct out *o, const tb_element *el, char *buf, size_t len)
{
    char a[320], b[320];

    tb_cli_sym_text(o->sym, el->start, a, sizeof a);
    if (el->count > 1) {
        tb_cli_sym_text(o->sym, el->last_addr, b, sizeof b);
        snprintf(buf, len, "  ; %s .. %s", a, b);
    } else {
        snprintf(buf, len, "  ; %s", a);
    }
}

static void sym_insn(void *ctx, uint32_t addr, char *buf, size_t len)
{
    const struct out *o = ctx;
    char a[320];

    tb_cli_sym_text(o->sym, addr, a, sizeof a);
    snprintf(buf, len, "  ; %s", a);
}

static int on_elem(void *ctx, const tb_element *in_el)
{
    struct out *o = ctx;
    const tb_element *el = in_el;
    tb_element end;
    char line[512];

    /* END at the index of the trace's last byte (the decoder has no
     * byte to give it): where the trace given ends, after a loss that
     * no later element shows. */
    if (el->kind == TB_ELEM_END) {
        end = *el;
        end.index = o->last_index;
        el = &end;
    }
    if (el->kind == TB_ELEM_INSN_RANGE)
        o->insns += el->count;
    if (o->sym && el->kind == TB_ELEM_INSN_RANGE && el->count)
        tb_cli_sym_check(&o->symck, o->sym, o->mem, el);
    if (o->format == FMT_TEXT) {
        char tag[8] = "";
        int n;

        tb_elem_format(el, line, sizeof line);
        if (o->tag)
            snprintf(tag, sizeof tag, "0x%02x: ", (unsigned)o->id);
        if (o->sym && el->kind == TB_ELEM_INSN_RANGE && el->count) {
            char st[700];

            sym_range_text(o, el, st, sizeof st);
            fprintf(o->f, "%s%s%s\n", tag, line, st);
        } else {
            fprintf(o->f, "%s%s\n", tag, line);
        }
        if (o->dis && (n = tb_cli_disasm_element(o->dis, el, tag, o->f)) < 0) {
            o->addr.err = n; /* reported with the source's name */
            return 1;
        }
    } else if (o->format == FMT_JSON) {
        tb_elem_format_json(el, line, sizeof line);
        if (o->sym && el->kind == TB_ELEM_INSN_RANGE && el->count) {
            size_t l = strlen(line);

            /* The object's members, then the symbols' before its '}'. */
            if (l && line[l - 1] == '}')
                line[l - 1] = '\0';
            if (o->tag && line[0] == '{')
                fprintf(o->f, "{\"id\":%d,%s", o->id, line + 1);
            else
                fprintf(o->f, "%s", line);
            tb_cli_sym_json(o->f, o->sym, "start", el->start);
            tb_cli_sym_json(o->f, o->sym, "last", el->last_addr);
            fprintf(o->f, "}\n");
        } else if (o->tag && line[0] == '{')
            fprintf(o->f, "{\"id\":%d,%s\n", o->id, line + 1);
        else
            fprintf(o->f, "%s\n", line);
    } else if (tb_cli_addr_element(&o->addr, el) < 0) {
        return 1;
    }
    o->write_errno = tb_cli_output_check(o->f);
    return o->write_errno != 0;
}

static void usage(FILE *f)
{
    tb_cli_input_usage(f, "decode");
}

/* After each delivery: where the trace read ends (END's index), and the
 * progress line on a terminal. */
static void on_progress(void *ctx, uint64_t bytes, uint64_t last_index)
{
    struct out *o = ctx;
    char prefix[32];

    o->last_index = last_index;
    if (tb_cli_progress_due(&o->pr)) {
        snprintf(prefix, sizeof prefix, "decode 0x%02x:", (unsigned)o->id);
        tb_cli_progress_run(&o->pr, prefix, o->insns, 0, bytes);
    }
}

/* Decodes source k into o.  TB_EXIT_OK, TB_EXIT_LOST after a warning
 * (tb_cli_health_report), or TB_EXIT_ERROR after printing why (a write
 * error stays in o->write_errno, printed by the caller). */
static int decode_source(const tb_cli_input *in, size_t k, struct out *o)
{
    const tb_cli_source *s = &in->srcs[k];
    tb_memimage *mem = NULL;
    tb_pipeline *pl = NULL;
    char err[1024] = "";
    int r;

    r = tb_cli_input_memory(in, k, &mem, err, sizeof err);
    if (r < 0) {
        fprintf(stderr, "tracebench decode: %s\n", err[0] ? err : tb_err_str(r));
        return TB_EXIT_ERROR;
    }
    tb_health_init(&o->health);
    o->last_index = 0;
    o->mem = mem;
    memset(&o->symck, 0, sizeof o->symck);
    o->id = s->cfg.trace_id;
    o->addr = (tb_cli_addr_out){.f = o->f, .mem = mem,
                                .ptm = s->cfg.protocol == TB_PROTO_PTM,
                                .v7m = s->cfg.v7m != 0,
                                .addrs = o->addr.addrs, .cap = o->addr.cap};
    /* --id all: every line after its source's ID, as text and json */
    if (o->tag)
        snprintf(o->addr.tag, sizeof o->addr.tag, "0x%02x: ", (unsigned)o->id);
    /* Gaps: decoded past corrupt frames to the end (NO_SYNC where bytes
     * were lost), then the error in err is reported. */
    pl = tb_pipeline_new(&s->cfg, mem,
                         &(tb_pipeline_opts){.size = sizeof(tb_pipeline_opts),
                                             .on_element = on_elem, .ctx = o,
                                             .health = &o->health,
                                             .on_progress = on_progress, .gaps = true});
    if (pl && o->cycles) {
        if (tb_decoder_set_cycle_ranges(tb_pipeline_decoder(pl), true) == TB_ERR_UNSUPPORTED)
            fprintf(stderr, "tracebench decode: warning: %s: --cycles is not supported for "
                            "its protocol; its ranges keep the sum of their instructions' "
                            "cycles\n", s->name);
        else if (!s->cfg.cycle_accurate)
            fprintf(stderr, "tracebench decode: warning: %s is not cycle-accurate trace "
                            "(ETMCR[12] clear): --cycles has no counts to give\n", s->name);
    }
    if (o->disasm) {
        o->dis = tb_cli_disasm_new(mem);
        tb_cli_disasm_set_ptm(o->dis, s->cfg.protocol == TB_PROTO_PTM);
        if (o->sym)
            tb_cli_disasm_set_sym(o->dis, sym_insn, o);
    }
    if (!pl || (o->disasm && !o->dis)) {
        r = TB_ERR_NOMEM;
        snprintf(err, sizeof err, "%s: cannot create a decoder (out of memory)", s->name);
    } else {
        r = tb_pipeline_finish_stream(
            pl, tb_cli_input_stream_spans(in, k, tb_pipeline_on_span, pl, err, sizeof err));
    }
    tb_cli_progress_clear(&o->pr);
    tb_cli_disasm_free(o->dis);
    o->dis = NULL;
    tb_pipeline_free(pl);
    tb_memimage_free(mem);
    o->mem = NULL;
    if (o->write_errno)
        return TB_EXIT_ERROR;
    /* An ELF that is not the program that ran names another program's
     * functions and lines: said, with where (the decode itself stands). */
    if (o->symck.differ)
        fprintf(stderr, "tracebench decode: %s: warning: --symbols %s: its code differs from "
                        "the traced code at 0x%08X (%llu range%s differ): it is not the "
                        "program that ran, so the function names and lines shown are wrong; "
                        "give that program's ELF\n",
                s->name, o->sym_path, (unsigned)o->symck.first_differ,
                (unsigned long long)o->symck.differ, o->symck.differ == 1 ? "" : "s");
    if (o->symck.outside)
        fprintf(stderr, "tracebench decode: %s: warning: --symbols %s: %llu range%s of traced "
                        "code lie outside its loadable segments (the first at 0x%08X): no "
                        "names or lines for them; is it the program that ran?\n",
                s->name, o->sym_path, (unsigned long long)o->symck.outside,
                o->symck.outside == 1 ? "" : "s", (unsigned)o->symck.first_outside);
    if (o->addr.err) {
        fprintf(stderr, "tracebench decode: %s: %s\n", s->name,
                o->addr.err == TB_ERR_NOT_IN_IMAGE
                    ? "an instruction range runs into code the memory image does not hold"
                    : tb_err_str(o->addr.err));
        return TB_EXIT_ERROR;
    }
    if (r < 0) {
        fprintf(stderr, "tracebench decode: %s: %s\n", s->name, err[0] ? err : tb_err_str(r));
        if (r == TB_ERR_BAD_FRAME && in->is_file)
            fprintf(stderr, "tracebench decode: %s: does the file hold one source's bytes, "
                            "not CoreSight frames? then give --buffer raw\n", s->name);
        /* Decoded to the end past the corrupt frames: trace was lost. */
        return r == TB_ERR_BAD_FRAME ? TB_EXIT_LOST : TB_EXIT_ERROR;
    }
    r = tb_cli_health_report(in, k, &o->health);
    if (r == TB_EXIT_LOST && o->format == FMT_ADDR) {
        /* Nothing decoded: the addr listing says so too (a loss to a bad
         * packet already has its line, where it happened). */
        tb_health_diag d;

        tb_health_diagnose(&o->health, tb_protocol_is_port(s->cfg.protocol), &d);
        if (d.cause == TB_HEALTH_NO_ASYNC || d.cause == TB_HEALTH_NO_ISYNC) {
            o->addr.lost_said = false;
            tb_cli_addr_lost(&o->addr, tb_health_cause_name(d.cause), d.index);
            o->write_errno = tb_cli_output_check(o->f);
            if (o->write_errno)
                return TB_EXIT_ERROR;
        }
    }
    return r;
}

static bool is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int tb_cli_decode(int argc, char **argv)
{
    static tb_cli_input in;
    /* In the order of FMT_*. */
    static const char *const formats[] = {"text", "json", "addr", NULL};
    struct out o = {.f = stdout};
    tb_cli_analysis_args sym_args = {0};
    bool quiet = false, sym_bare = false;
    int status = 0, i, r;

    tb_cli_input_init(&in, "decode", true, TB_STREAM_ONLY);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return tb_cli_output_end(stdout, "decode", 0);
        }
        r = tb_cli_format_arg(&in, argc, argv, &i, formats, &o.format);
        if (r == 2)
            return TB_EXIT_USAGE;
        if (r == 1)
            continue;
        if (!strcmp(argv[i], "--disasm")) {
            o.disasm = true;
            continue;
        }
        if (!strcmp(argv[i], "--cycles")) {
            o.cycles = true;
            continue;
        }
        if (!strcmp(argv[i], "--quiet")) {
            quiet = true;
            continue;
        }
        if (!strcmp(argv[i], "--symbols")) {
            if (sym_args.nelf || sym_bare)
                return tb_cli_usage_error("decode", "one --symbols ELF only");
            /* Its value is optional (issue 34 item 3): the next word,
             * unless that is an option or a snapshot directory (the
             * input). */
            if (i + 1 < argc && argv[i + 1][0] != '-' && !is_dir(argv[i + 1]))
                sym_args.elf_path[sym_args.nelf++] = argv[++i];
            else
                sym_bare = true;
            continue;
        }
        r = tb_cli_input_arg(&in, argc, argv, &i);
        if (r == 2)
            return TB_EXIT_USAGE;
        if (r == 0)
            return tb_cli_unknown_arg(&in, argv[i]);
    }
    if (o.disasm && o.format != FMT_TEXT) {
        fprintf(stderr, "tracebench decode: --disasm goes with --format text\n"
                        "(tracebench decode --help for usage)\n");
        return TB_EXIT_USAGE;
    }
    if (o.cycles && o.format == FMT_ADDR)
        return tb_cli_usage_error("decode", "--cycles goes with --format text or json (the "
                                            "addr format carries no cycle counts)");
    if (sym_bare) {
        /* --symbols without ELF: the program's ELF given with --memory. */
        const char *elf = tb_cli_input_memory_elf(&in);

        if (!elf)
            return tb_cli_usage_error("decode", "--symbols needs a value: the program's ELF "
                                                "file (without one it takes the ELF given "
                                                "with --memory, and none was)");
        sym_args.elf_path[sym_args.nelf++] = elf;
    }
    if (sym_args.nelf && o.format == FMT_ADDR)
        return tb_cli_usage_error("decode", "--symbols goes with --format text or json (the "
                                            "addr format is for comparing with other "
                                            "decoders' address lists)");
    if (sym_args.nelf) {
        tb_elfinfo *e[1];

        /* Said even under --quiet (which is about the progress line):
         * an ELF with no symbols or lines annotates nothing. */
        sym_args.elf_flag = "--symbols";
        r = tb_cli_analysis_elfs("decode", &sym_args, e, false);
        if (r)
            return r;
        o.sym = e[0];
        o.sym_path = sym_args.elf_path[0];
    }
    r = tb_cli_input_open(&in);
    if (r) {
        tb_cli_input_close(&in);
        tb_elfinfo_free(o.sym);
        return r;
    }
    tb_cli_progress_init(&o.pr, quiet);
    o.tag = in.id == TB_STREAM_ALL;
    for (size_t k = 0; k < in.n && !o.write_errno; k++)
        status = tb_cli_exit_worse(status, decode_source(&in, k, &o));
    if (in.refused)
        status = tb_cli_exit_worse(status, TB_EXIT_ERROR);
    free(o.addr.addrs);
    tb_elfinfo_free(o.sym);
    tb_cli_input_close(&in);
    if (tb_cli_output_end(stdout, "decode", o.write_errno))
        status = TB_EXIT_ERROR;
    return status;
}
