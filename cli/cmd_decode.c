/* tracebench decode DIR|FILE [--id ID|all] [--format text|json|addr]: a
 * snapshot's trace (or a raw trace buffer file's, with its configuration
 * and memory) decoded to instructions.  With --id all every ETMv3/PTM
 * source is decoded in turn and each line tagged with its trace ID: text
 * and addr lines start "0x10: ", JSON objects have "id":16 first.
 * Exit: 0 decoded, 1 an error, 2 usage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "input.h"
#include "tracebench/decoder.h"

enum { FMT_TEXT, FMT_JSON, FMT_ADDR };

struct out {
    FILE *f;
    int format;
    int id;              /* the source's trace ID */
    bool tag;            /* --id all: tag each line with it */
    tb_cli_addr_out addr;
    FILE *mem;           /* addr with tags: one element's lines */
    char *mem_buf;
    size_t mem_len;
    int write_errno;
    bool disasm;         /* --disasm: instructions after each range */
    tb_cli_disasm *dis;  /* for the source being decoded */
    tb_cli_progress pr;  /* on a terminal: trace read, instructions */
    uint64_t insns;      /* decoded so far, for the progress line */
};

/* Copies the lines of text[0..len) to o->f, each after its tag. */
static void put_tagged(struct out *o, const char *text, size_t len)
{
    while (len) {
        const char *nl = memchr(text, '\n', len);
        size_t n = nl ? (size_t)(nl - text) + 1 : len;

        fprintf(o->f, "0x%02x: %.*s%s", (unsigned)o->id, (int)n, text, nl ? "" : "\n");
        text += n;
        len -= n;
    }
}

static int on_elem(void *ctx, const tb_element *el)
{
    struct out *o = ctx;
    char line[512];

    if (el->kind == TB_ELEM_INSN_RANGE)
        o->insns += el->count;
    if (o->format == FMT_TEXT) {
        char tag[8] = "";
        int n;

        tb_elem_format(el, line, sizeof line);
        if (o->tag)
            snprintf(tag, sizeof tag, "0x%02x: ", (unsigned)o->id);
        fprintf(o->f, "%s%s\n", tag, line);
        if (o->dis && (n = tb_cli_disasm_element(o->dis, el, tag, o->f)) < 0) {
            o->addr.err = n; /* reported with the source's name */
            return 1;
        }
    } else if (o->format == FMT_JSON) {
        tb_elem_format_json(el, line, sizeof line);
        if (o->tag && line[0] == '{')
            fprintf(o->f, "{\"id\":%d,%s\n", o->id, line + 1);
        else
            fprintf(o->f, "%s\n", line);
    } else if (!o->tag) {
        if (tb_cli_addr_element(&o->addr, el) < 0)
            return 1;
    } else {
        /* tb_cli_addr_element prints whole lines into o->mem; each goes
         * out tagged, and the stream starts again for the next element. */
        if (tb_cli_addr_element(&o->addr, el) < 0)
            return 1;
        if (fflush(o->mem) != 0) {
            o->addr.err = TB_ERR_NOMEM;
            return 1;
        }
        put_tagged(o, o->mem_buf, o->mem_len);
        if (fseek(o->mem, 0, SEEK_SET) != 0) {
            o->addr.err = TB_ERR_NOMEM;
            return 1;
        }
    }
    o->write_errno = tb_cli_output_check(o->f);
    return o->write_errno != 0;
}

static void usage(FILE *f)
{
    tb_cli_input_usage(f, "decode", true);
}

struct run {
    tb_parser *parser;
    tb_decoder *dec;
    struct out *o;
    int err;
    uint64_t bytes;      /* trace bytes pushed */
};

static int on_span(void *ctx, const uint8_t *data, size_t len, const tb_span_map *map)
{
    struct run *r = ctx;
    /* len 0: a corrupt frame may have cut the bytes (input.c). */
    int n = len ? tb_decoder_push_span(r->dec, r->parser, data, len, map, on_elem, r->o)
                : tb_decoder_push_gap(r->dec, r->parser, map->index[0], on_elem, r->o);
    char prefix[32];

    if (n < 0 && !r->err)
        r->err = n;
    r->bytes += len;
    if (tb_cli_progress_due(&r->o->pr)) {
        snprintf(prefix, sizeof prefix, "decode 0x%02x:", (unsigned)r->o->id);
        tb_cli_progress_run(&r->o->pr, prefix, r->o->insns, 0, r->bytes);
    }
    return n < 0;
}

/* Decodes source k into o.  0, or 1 after printing why (a write error
 * stays in o->write_errno, printed by the caller). */
static int decode_source(const tb_cli_input *in, size_t k, struct out *o)
{
    const tb_cli_source *s = &in->srcs[k];
    tb_memimage *mem = NULL;
    struct run run = {.o = o};
    char err[1024] = "";
    int r;

    r = tb_cli_input_memory(in, k, &mem, err, sizeof err);
    if (r < 0) {
        fprintf(stderr, "tracebench decode: %s\n", err[0] ? err : tb_err_str(r));
        return 1;
    }
    o->id = s->cfg.trace_id;
    o->addr = (tb_cli_addr_out){.f = o->tag ? o->mem : o->f, .mem = mem,
                                .ptm = s->cfg.protocol == TB_PROTO_PTM,
                                .addrs = o->addr.addrs, .cap = o->addr.cap};
    run.parser = tb_parser_new(&s->cfg);
    run.dec = tb_decoder_new(&s->cfg, mem);
    if (o->disasm)
        o->dis = tb_cli_disasm_new(mem);
    if (!run.parser || !run.dec || (o->disasm && !o->dis)) {
        r = TB_ERR_NOMEM;
        snprintf(err, sizeof err, "%s: cannot create a decoder (out of memory)", s->name);
    } else {
        r = tb_cli_input_stream_spans(in, k, on_span, &run, err, sizeof err);
        if (run.err)
            r = run.err;
        /* Corrupt frames: decoded past them to the end (NO_SYNC where
         * bytes were lost), then the error in err is reported. */
        if (r >= 0 || r == TB_ERR_BAD_FRAME) {
            int f = tb_decoder_push_finish(run.dec, run.parser, on_elem, o);

            if (f < 0)
                r = f;
        }
    }
    tb_cli_progress_clear(&o->pr);
    tb_cli_disasm_free(o->dis);
    o->dis = NULL;
    tb_decoder_free(run.dec);
    tb_parser_free(run.parser);
    tb_memimage_free(mem);
    if (o->write_errno)
        return 1;
    if (o->addr.err) {
        fprintf(stderr, "tracebench decode: %s: %s\n", s->name,
                o->addr.err == TB_ERR_NO_MEMORY
                    ? "an instruction range runs into code the memory image does not hold"
                    : tb_err_str(o->addr.err));
        return 1;
    }
    if (r < 0) {
        fprintf(stderr, "tracebench decode: %s: %s\n", s->name, err[0] ? err : tb_err_str(r));
        return 1;
    }
    return 0;
}

int tb_cli_decode(int argc, char **argv)
{
    static tb_cli_input in;
    struct out o = {.f = stdout};
    bool quiet = false;
    int status = 0, i, r;

    tb_cli_input_init(&in, "decode", true, TB_STREAM_ONLY);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return tb_cli_output_end(stdout, "decode", 0);
        }
        if (!strcmp(argv[i], "--format")) {
            const char *f = i + 1 < argc ? argv[++i] : NULL;

            if (!f) {
                fprintf(stderr, "tracebench decode: --format needs a value: text, json or "
                                "addr\n(tracebench decode --help for usage)\n");
                return 2;
            }
            if (!strcmp(f, "text"))
                o.format = FMT_TEXT;
            else if (!strcmp(f, "json"))
                o.format = FMT_JSON;
            else if (!strcmp(f, "addr"))
                o.format = FMT_ADDR;
            else {
                fprintf(stderr, "tracebench decode: --format %s: use text, json or addr\n"
                                "(tracebench decode --help for usage)\n", f);
                return 2;
            }
            continue;
        }
        if (!strcmp(argv[i], "--disasm")) {
            o.disasm = true;
            continue;
        }
        if (!strcmp(argv[i], "--quiet")) {
            quiet = true;
            continue;
        }
        r = tb_cli_input_arg(&in, argc, argv, &i);
        if (r == 2)
            return 2;
        if (r == 0) {
            fprintf(stderr, "tracebench decode: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (o.disasm && o.format != FMT_TEXT) {
        fprintf(stderr, "tracebench decode: --disasm goes with --format text\n");
        return 2;
    }
    r = tb_cli_input_open(&in);
    if (r) {
        tb_cli_input_close(&in);
        return r;
    }
    tb_cli_progress_init(&o.pr, quiet);
    o.tag = in.id == TB_STREAM_ALL;
    if (o.tag && o.format == FMT_ADDR) {
        o.mem = open_memstream(&o.mem_buf, &o.mem_len);
        if (!o.mem) {
            fprintf(stderr, "tracebench decode: out of memory\n");
            tb_cli_input_close(&in);
            return 1;
        }
    }
    for (size_t k = 0; k < in.n && !o.write_errno; k++)
        status |= decode_source(&in, k, &o);
    if (in.refused)
        status = 1;
    if (o.mem)
        fclose(o.mem);
    free(o.mem_buf);
    free(o.addr.addrs);
    tb_cli_input_close(&in);
    if (tb_cli_output_end(stdout, "decode", o.write_errno))
        status = 1;
    return status;
}
