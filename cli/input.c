/* The input of `packets` and `decode`: a snapshot directory or a raw
 * trace buffer file (cli/input.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "input.h"
#include "tracebench/encoder.h"
#include "tracebench/etm_port.h"
#include "tracebench/etmv2.h"

static const char *const reg_flags[4] = {"--etmcr", "--etmidr", "--etmccer", "--traceid"};

void tb_cli_input_init(tb_cli_input *in, const char *cmd, bool need_memory,
                       int default_id)
{
    memset(in, 0, sizeof *in);
    in->cmd = cmd;
    in->need_memory = need_memory;
    in->default_id = default_id;
    in->id = default_id;
    in->formatted = -1;
}

void tb_cli_input_usage(FILE *f, const char *cmd)
{
    const bool decode = !strcmp(cmd, "decode"), stats = !strcmp(cmd, "stats");
    const bool memory = decode || stats;
    const char *fmt = decode ? " [--format text|json|addr] [--disasm] [--symbols [ELF]]\n"
                               "           [--cycles] [--quiet]"
                             : " [--format text|json]";

    fprintf(f,
            "usage: tracebench %s DIR [--id ID|all]%s\n"
            "       tracebench %s FILE --protocol etmv3|ptm|etmv1|etmv2 [--options LIST]\n"
            "              [--etmcr X] [--etmidr X] [--etmccer X] [--traceid X]\n"
            "              [--buffer coresight|raw] [--id ID|all]%s%s\n"
            "\n"
            "  DIR              an OpenCSD / DS-5 trace snapshot directory (snapshot.ini, ...)\n"
            "  --id ID|all      the trace source with trace ID ID (0x01-0x6f, hex or decimal),\n"
            "                   or all: every ETMv3/PTM source, told apart by trace ID\n"
            "                   (%s)\n"
            "                   (default: %s)\n",
            cmd, fmt, cmd, memory ? "\n              --memory ELF|ADDR:FILE ..." : "", fmt,
            decode  ? "text, addr: \"0x10: \" before the line; json: \"id\":16 first"
            : stats ? "one block (json: one object) per source, with its trace ID"
                    : "text: a \"# source\" header per source; json: \"id\" in each object",
            decode ? "the only ETMv3/PTM source with captured trace" : "all");
    if (decode)
        fprintf(f, "  --format F       text (one element a line), json (one object a line) or\n"
                   "                   addr (one instruction a line, docs/vectors.md)\n"
                   "  --json           --format json\n"
                   "  --disasm         text: each range's instructions, disassembled\n"
                   "  --symbols [ELF]  the program's ELF: each range's first and last\n"
                   "                   instruction as function+offset (its symbols) and\n"
                   "                   file:line (its DWARF line table, built with -g), in\n"
                   "                   text and json; with --disasm each instruction's.  A\n"
                   "                   warning names an ELF whose code differs from the traced\n"
                   "                   code, or that has no symbols or no line table.  Without\n"
                   "                   ELF (--symbols last, or before another option): the ELF\n"
                   "                   given with --memory\n"
                   "  --cycles         cycle-accurate trace: each range ends where its cycle\n"
                   "                   count ends, so cc is one atom's, as OpenCSD gives it:\n"
                   "                   ETMv3 one instruction a range (each has its own atom);\n"
                   "                   PTM unchanged (a range is one atom, its waypoint's: the\n"
                   "                   trace counts nothing inside it); ETMv1/ETMv2 one\n"
                   "                   instruction a range, its status and the waits after it.\n"
                   "                   Text and json; a warning for trace that is not\n"
                   "                   cycle-accurate\n"
                   "  --quiet          no progress line (shown only on a terminal)\n");
    else
        fprintf(f, "  --format F       text (the default) or json (one object a line)\n"
                   "  --json           --format json\n");
    fprintf(f,
            "\n"
            "A raw trace buffer FILE (an ETB/ETR dump, no snapshot directory):\n"
            "  --protocol P     etmv3, ptm, etmv1 or etmv2 (required; an etmv1/etmv2 FILE\n"
            "                   is a port capture, docs/etmv1.md, docs/etmv2.md, whose\n"
            "                   header gives the configuration: --options gives only\n"
            "                   vectors=ADDR)\n"
            "  --options LIST   the configuration as an encoder option list: ca, ts, bb, rs,\n"
            "                   alt, vmid, ctxid=N, v=MINOR, id=ID, data=..., pcfirst\n"
            "                   (README.md; the encoder's own items, such as fifo=, are\n"
            "                   named in a warning and do nothing here)\n"
            "  --etmcr X, --etmidr X, --etmccer X, --traceid X\n"
            "                   the registers themselves; they override --options.  Default:\n"
            "                   ETMv3.5 or PFT1.1, plain trace, trace ID 0x10 (or --id)\n"
            "  --buffer B       coresight: CoreSight frames, as an ETB/ETR stores them (--id\n"
            "                   picks the source); raw: one source's bytes (the default)\n"
            "  --formatted      --buffer coresight\n");
    if (memory)
        fprintf(f,
                "  --memory ELF     the program's ELF file (its PT_LOAD segments)\n"
                "  --memory ADDR:FILE  a raw memory dump mapped at ADDR; repeat as needed\n");
    else
        fprintf(f,
                "  --memory ...     noted and ignored: packets reads no memory (so that\n"
                "                   decode's command line works here too)\n");
    fprintf(f,
            "\n"
            "exit: 0 done, 2 usage, 4 error, 5 trace was lost to corruption or never\n"
            "      synchronised (a warning on stderr says why and what to check)\n");
}

int tb_cli_unknown_arg(const tb_cli_input *in, const char *arg)
{
    fprintf(stderr, "tracebench %s: unknown option '%s'\n(tracebench %s --help for usage)\n",
            in->cmd, arg, in->cmd);
    return TB_EXIT_USAGE;
}

int tb_cli_format_arg(const tb_cli_input *in, int argc, char **argv, int *i,
                      const char *const *names, int *fmt)
{
    const char *a = argv[*i], *v;
    int k;

    if (!strcmp(a, "--json")) {
        for (k = 0; names[k] && strcmp(names[k], "json"); k++)
            ;
        *fmt = k;
        return 1;
    }
    if (strcmp(a, "--format"))
        return 0;
    v = *i + 1 < argc ? argv[++*i] : NULL;
    for (k = 0; v && names[k]; k++)
        if (!strcmp(v, names[k])) {
            *fmt = k;
            return 1;
        }
    if (v)
        fprintf(stderr, "tracebench %s: --format %s: use ", in->cmd, v);
    else
        fprintf(stderr, "tracebench %s: --format needs a value: ", in->cmd);
    for (k = 0; names[k]; k++)
        fprintf(stderr, "%s%s", k ? (names[k + 1] ? ", " : " or ") : "", names[k]);
    fprintf(stderr, "\n(tracebench %s --help for usage)\n", in->cmd);
    return 2;
}

static int usage_error(const tb_cli_input *in, const char *msg, const char *arg)
{
    fprintf(stderr, "tracebench %s: ", in->cmd);
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\n(tracebench %s --help for usage)\n", in->cmd);
    return 2;
}

static bool parse_u32(const char *s, uint32_t *out)
{
    char *end;
    unsigned long long v;

    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
        return false;
    errno = 0;
    v = strtoull(s, &end, 0);
    if (errno || *end || v > 0xFFFFFFFFull)
        return false;
    *out = (uint32_t)v;
    return true;
}

/* "ADDR:FILE" -> addr and file; "FILE" -> an ELF (returns 0); -1 when
 * ADDR looks like a number but is not a 32-bit one. */
static int split_memory(const char *spec, uint32_t *addr, const char **file)
{
    const char *colon = strchr(spec, ':');
    char num[32];
    size_t n;

    *file = spec;
    if (!colon || spec[0] < '0' || spec[0] > '9')
        return 0;
    n = (size_t)(colon - spec);
    if (n >= sizeof num)
        return -1;
    memcpy(num, spec, n);
    num[n] = '\0';
    if (!parse_u32(num, addr) || !colon[1])
        return -1;
    *file = colon + 1;
    return 1;
}

const char *tb_cli_input_memory_elf(const tb_cli_input *in)
{
    for (size_t i = 0; i < in->n_memory; i++) {
        uint32_t addr;
        const char *file;

        if (split_memory(in->memory[i], &addr, &file) == 0)
            return file;
    }
    return NULL;
}

int tb_cli_input_arg(tb_cli_input *in, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    size_t r;

    if (a[0] != '-') {
        if (in->path) {
            fprintf(stderr, "tracebench %s: one input only, not '%s' and '%s'\n"
                            "(tracebench %s --help for usage)\n",
                    in->cmd, in->path, a, in->cmd);
            return 2;
        }
        in->path = a;
        return 1;
    }
    if (!strcmp(a, "--formatted")) {
        in->formatted = 1;
        return 1;
    }
    if (!strcmp(a, "--raw"))
        /* One meaning per flag: --raw ADDR is sim's raw program image. */
        return usage_error(in, "%s: here the buffer's format is --buffer coresight|raw "
                               "(raw, one source's bytes, is the default); --raw ADDR is "
                               "sim's raw program image", a);
    if (!strcmp(a, "--buffer")) {
        if (!v)
            return usage_error(in, "%s needs a value: coresight or raw", a);
        if (strcmp(v, "coresight") && strcmp(v, "raw"))
            return usage_error(in, "--buffer %s: use coresight (CoreSight frames, as an "
                                   "ETB/ETR stores them) or raw (one source's bytes)", v);
        in->formatted = v[0] == 'c';
        (*i)++;
        return 1;
    }
    for (r = 0; r < 4; r++)
        if (!strcmp(a, reg_flags[r]))
            break;
    if (r == 4 && strcmp(a, "--id") && strcmp(a, "--protocol") && strcmp(a, "--options") &&
        strcmp(a, "--memory"))
        return 0;
    if (!v)
        return usage_error(in, "%s needs a value", a);
    (*i)++;
    if (r < 4) {
        if (!parse_u32(v, &in->reg[r])) {
            fprintf(stderr, "tracebench %s: %s %s: not a 32-bit number (give 0x... or "
                            "decimal)\n", in->cmd, a, v);
            return 2;
        }
        in->have_reg[r] = true;
    } else if (!strcmp(a, "--id")) {
        uint32_t id;

        in->id_given = true;
        if (!strcmp(v, "all")) {
            in->id = TB_STREAM_ALL;
        } else if (!parse_u32(v, &id)) {
            return usage_error(in, "--id %s: not a trace ID: give one (0x01-0x6f, hex or "
                                   "decimal) or all", v);
        } else if (id > 0x7F) {
            return usage_error(in, "--id %s: out of range: a trace ID is 7 bits, "
                                   "0x01-0x6f in formatted trace (0x00 and 0x70-0x7f are "
                                   "reserved)", v);
        } else {
            in->id = (int)id;
        }
    } else if (!strcmp(a, "--protocol")) {
        if (strcmp(v, "etmv3") && strcmp(v, "ptm") && strcmp(v, "etmv1") && strcmp(v, "etmv2"))
            return usage_error(in, "--protocol %s: use etmv3, ptm, etmv1 or etmv2", v);
        in->protocol = v;
    } else if (!strcmp(a, "--options")) {
        in->options = v;
    } else {
        uint32_t addr;
        const char *file;

        if (!in->need_memory) {
            /* One command line for packets, decode and stats: said, not
             * refused. */
            fprintf(stderr, "tracebench %s: note: --memory %s is ignored: %s reads no memory "
                            "(decode and stats do)\n", in->cmd, v, in->cmd);
            return 1;
        }
        if (in->n_memory == TB_CLI_MAX_MEMORY)
            return usage_error(in, "--memory %s: more than 32 --memory options", v);
        if (split_memory(v, &addr, &file) < 0)
            return usage_error(in, "--memory %s: give ADDR:FILE with a 32-bit ADDR (0x... "
                                   "or decimal), or an ELF file", v);
        in->memory[in->n_memory++] = v;
    }
    return 1;
}

static bool raw_options_given(const tb_cli_input *in, const char **which)
{
    *which = in->protocol ? "--protocol" : in->options ? "--options"
             : in->have_reg[0] ? "--etmcr" : in->have_reg[1] ? "--etmidr"
             : in->have_reg[2] ? "--etmccer" : in->have_reg[3] ? "--traceid"
             : in->formatted >= 0 ? "--buffer"
             : in->n_memory ? "--memory" : NULL;
    return *which != NULL;
}

/* An ETMv1/ETMv2 port capture: the configuration from its header
 * (docs/etmv1.md 2, docs/etmv2.md 2), the vector base from --options. */
static int port_file_config(tb_cli_input *in, tb_protocol proto, const tb_encoder_opts *o,
                            tb_config *cfg)
{
    uint8_t hdr[TB_ETM_PORT_HDR_BYTES];
    FILE *f = fopen(in->path, "rb");
    size_t n = f ? fread(hdr, 1, sizeof hdr, f) : 0;
    unsigned v = proto == TB_PROTO_ETMV2 ? 2 : 1;
    uint32_t etmcr = 0;
    uint8_t minor = 0;
    int bad;

    if (f)
        fclose(f);
    if (in->have_reg[1] || in->have_reg[2] || in->have_reg[3] || in->formatted == 1 ||
        in->id_given) {
        fprintf(stderr, "tracebench %s: an ETMv%u port capture has no ETMIDR, ETMCCER or "
                        "trace ID and is never CoreSight-formatted\n", in->cmd, v);
        return 2;
    }
    if (proto == TB_PROTO_ETMV2) {
        tb_etmv2_config c;

        /* The header parser keeps c's vector base and phantom flag. */
        tb_etmv2_config_init(&c);
        bad = n != sizeof hdr || tb_etmv2_capture_parse_header(hdr, &c) < 0;
        if (!bad) {
            etmcr = tb_etmv2_etmcr(&c);
            minor = c.minor;
        }
    } else {
        tb_etmv1_config c;

        tb_etmv1_config_init(&c); /* its size: the parser reads it */
        bad = n != sizeof hdr || tb_etmv1_capture_parse_header(hdr, &c) < 0;
        if (!bad) {
            etmcr = tb_etmv1_etmcr(&c);
            minor = c.minor;
        }
    }
    if (bad) {
        fprintf(stderr, "tracebench %s: %s: not an ETMv%u port capture (docs/etmv1.md 2: "
                        "16-byte header, magic TBETMCAP, protocol %u)\n", in->cmd, in->path,
                v, v);
        return TB_EXIT_ERROR;
    }
    if (in->have_reg[0] && in->reg[0] != etmcr) {
        fprintf(stderr, "tracebench %s: --etmcr 0x%08X disagrees with the capture's ETMCR "
                        "0x%08X\n", in->cmd, (unsigned)in->reg[0], (unsigned)etmcr);
        return 2;
    }
    if ((proto == TB_PROTO_ETMV2 ? tb_config_from_etmv2 : tb_config_from_etmv1)(
            cfg, etmcr, minor, o->vector_base) < 0 || (o->vector_base & 0x1F)) {
        fprintf(stderr, "tracebench %s: --options %s: vectors= must be 32-byte aligned\n",
                in->cmd, in->options ? in->options : "");
        return 2;
    }
    return 0;
}

/* --options items that set none of the registers a decoder reads (the
 * encoder's own: the FIFO, the filter, sync periods, ...): named in a
 * warning, since they do nothing here.  A port capture's header gives
 * its configuration: only vectors= is read. */
static void warn_encoder_only(const tb_cli_input *in, bool port)
{
    static const char *const decoder_items[] = {"plain", "ca",   "ts", "bb",   "rs",
                                                "alt",   "vmid", "ctxid", "v", "id",
                                                "data",  "pcfirst"};
    char list[512], *tok, *save = NULL;
    char ignored[512] = "";
    size_t used = 0;

    snprintf(list, sizeof list, "%s", in->options ? in->options : "");
    for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        size_t n = strcspn(tok, "=");
        bool read = false;

        if (port)
            read = n == 7 && !strncmp(tok, "vectors", 7);
        else
            for (size_t k = 0; k < sizeof decoder_items / sizeof decoder_items[0]; k++)
                read |= strlen(decoder_items[k]) == n && !strncmp(tok, decoder_items[k], n);
        if (!read && used < sizeof ignored)
            used += (size_t)snprintf(ignored + used, sizeof ignored - used, "%s%s",
                                     used ? ", " : "", tok);
    }
    if (used)
        fprintf(stderr, "tracebench %s: warning: --options %s: %s %s nothing for reading "
                        "trace (%s); ignored\n", in->cmd, in->options, ignored,
                strchr(ignored, ',') ? "do" : "does",
                port ? "a port capture's header gives its configuration; only vectors= is "
                       "read"
                     : "the encoder's own: the decoder reads the registers ca, ts, bb, rs, "
                       "alt, vmid, ctxid=, v=, id=, data=, pcfirst set");
}

/* A raw file's one source: its configuration from the options. */
static int open_file(tb_cli_input *in)
{
    tb_protocol proto;
    tb_encoder_opts o;
    tb_config cfg;
    uint32_t reg[4];
    char err[512] = "";
    const char *base = strrchr(in->path, '/');
    size_t r;

    if (!in->protocol) {
        fprintf(stderr,
                "tracebench %s: %s is a file, not a snapshot directory: to read it as a raw "
                "trace buffer (an ETB/ETR dump) give --protocol etmv3|ptm and its "
                "configuration (--options LIST, or --etmcr/--etmidr/--etmccer/--traceid)%s\n"
                "(tracebench %s --help for usage)\n",
                in->cmd, in->path, in->need_memory ? " and --memory" : "", in->cmd);
        return 2;
    }
    proto = !strcmp(in->protocol, "etmv1")   ? TB_PROTO_ETMV1
            : !strcmp(in->protocol, "etmv2") ? TB_PROTO_ETMV2
            : strcmp(in->protocol, "ptm")    ? TB_PROTO_ETMV3 : TB_PROTO_PTM;
    tb_encoder_opts_init(&o, proto);
    if (in->options && tb_encoder_opts_parse(&o, in->options, err, sizeof err) < 0) {
        fprintf(stderr, "tracebench %s: --options %s: %s\n(tracebench %s --help for usage)\n",
                in->cmd, in->options, err, in->cmd);
        return 2;
    }
    warn_encoder_only(in, tb_protocol_is_port(proto));
    if (tb_protocol_is_port(proto)) {
        int rc = port_file_config(in, proto, &o, &cfg);

        if (rc)
            return rc;
        goto have_cfg;
    }
    if (tb_encoder_config(&o, &cfg) < 0) {
        fprintf(stderr, "tracebench %s: --options %s: these options do not make a valid %s "
                        "configuration (e.g. alt needs v=4 or later)\n",
                in->cmd, in->options ? in->options : "", in->protocol);
        return 2;
    }
    reg[0] = cfg.etmcr;
    reg[1] = cfg.etmidr;
    reg[2] = cfg.etmccer;
    reg[3] = cfg.traceidr;
    for (r = 0; r < 4; r++)
        if (in->have_reg[r])
            reg[r] = in->reg[r];
    if (in->id >= 0) {
        if (in->have_reg[3] && (int)(reg[3] & 0x7F) != in->id) {
            fprintf(stderr, "tracebench %s: --id 0x%02x and --traceid 0x%X disagree: give "
                            "one of them\n", in->cmd, (unsigned)in->id, (unsigned)reg[3]);
            return 2;
        }
        if (!in->have_reg[3])
            reg[3] = (uint32_t)in->id;
    }
    if (tb_config_from_regs(&cfg, reg[0], reg[1], reg[2], reg[3]) < 0 ||
        cfg.protocol != proto) {
        unsigned major = (reg[1] >> 8) & 0xF, minor = (reg[1] >> 4) & 0xF;
        char named[64];

        if (major == 2)
            snprintf(named, sizeof named, "ETMv3.%u", minor);
        else if (major == 3)
            snprintf(named, sizeof named, "PFT1.%u (PTM)", minor);
        else
            snprintf(named, sizeof named, "neither ETMv3 nor PTM (architecture %u.%u)",
                     major, minor);
        fprintf(stderr, "tracebench %s: ETMIDR 0x%08X (%s) names %s, not --protocol %s: "
                        "fix --protocol or --etmidr\n",
                in->cmd, (unsigned)reg[1], in->have_reg[1] ? "--etmidr" : "from --options",
                named, in->protocol);
        return 2;
    }
    if (in->formatted == 1 && (cfg.trace_id == 0 || cfg.trace_id >= 0x70)) {
        fprintf(stderr, "tracebench %s: trace ID 0x%02x cannot pick a source in formatted "
                        "trace: give --id (or --traceid) 0x01-0x6f\n",
                in->cmd, (unsigned)cfg.trace_id);
        return 2;
    }
have_cfg:
    if (in->need_memory && !in->n_memory) {
        fprintf(stderr, "tracebench %s: decoding %s needs the code that ran: give --memory "
                        "ELF (the program) or --memory ADDR:FILE (a dump)\n",
                in->cmd, in->path);
        return 2;
    }
    in->is_file = true;
    in->n = 1;
    in->srcs[0].src = NULL;
    in->srcs[0].cfg = cfg;
    snprintf(in->srcs[0].name, sizeof in->srcs[0].name, "%s", base ? base + 1 : in->path);
    return 0;
}

static int open_snapshot(tb_cli_input *in, const char *dir)
{
    const tb_snap_source *sel[TB_CLI_MAX_SOURCES];
    char err[1024] = "";
    int n, k;
    size_t i;

    if (tb_snapshot_load_flags(&in->snap, dir, TB_SNAP_LOAD_DEFER_DUMPS, err, sizeof err) < 0) {
        fprintf(stderr, "tracebench %s: %s\n", in->cmd, err);
        return TB_EXIT_ERROR;
    }
    in->snap_loaded = true;
    n = tb_stream_select(&in->snap, in->id, sel, TB_CLI_MAX_SOURCES, err, sizeof err);
    if (n < 0) {
        /* The library names the sources; the flag that picks one is
         * the command line's word. */
        fprintf(stderr, "tracebench %s: %s%s\n", in->cmd, err,
                n == TB_ERR_NOT_FOUND ? "; give --id with one of them"
                : n == TB_ERR_INVAL && in->id == TB_STREAM_ONLY ? " (give --id ID, or --id all)"
                                                                : "");
        return TB_EXIT_ERROR;
    }
    for (k = 0; k < n; k++) {
        in->srcs[k].src = sel[k];
        if (tb_snapshot_source_config(&in->snap, sel[k], &in->srcs[k].cfg, err,
                                      sizeof err) < 0) {
            fprintf(stderr, "tracebench %s: %s\n", in->cmd, err);
            return TB_EXIT_ERROR;
        }
        snprintf(in->srcs[k].name, sizeof in->srcs[k].name, "%s", sel[k]->name);
    }
    in->n = (size_t)n;
    if (in->id >= 0)
        return 0;
    /* The captured sources passed over: an unsupported type is a note;
     * a supported one with a broken configuration an error. */
    for (i = 0; i < in->snap.n_sources; i++) {
        const tb_snap_source *src = &in->snap.sources[i];
        tb_config cfg;
        int rc;

        if (!src->buffer[0])
            continue;
        rc = tb_snapshot_source_config(&in->snap, src, &cfg, err, sizeof err);
        if (rc == TB_ERR_UNSUPPORTED) {
            if (!in->quiet_skips)
                fprintf(stderr, "tracebench %s: note: skipped %s: %s\n", in->cmd, src->name, err);
        } else if (rc < 0) {
            fprintf(stderr, "tracebench %s: %s\n", in->cmd, err);
            in->refused = true;
        }
    }
    return 0;
}

int tb_cli_input_open(tb_cli_input *in)
{
    struct stat st;
    const char *which, *base;
    bool raw = raw_options_given(in, &which);

    if (!in->path) {
        fprintf(stderr, "tracebench %s: no input: give a snapshot directory or a trace file\n"
                        "(tracebench %s --help for usage)\n", in->cmd, in->cmd);
        return 2;
    }
    if (stat(in->path, &st) != 0) {
        fprintf(stderr, "tracebench %s: cannot read %s: %s\n", in->cmd, in->path,
                strerror(errno));
        return TB_EXIT_ERROR;
    }
    if (S_ISDIR(st.st_mode)) {
        if (raw) {
            fprintf(stderr, "tracebench %s: %s is for a raw trace file; %s is a snapshot "
                            "directory, which gives its own configuration and memory\n",
                    in->cmd, which, in->path);
            return 2;
        }
        return open_snapshot(in, in->path);
    }
    base = strrchr(in->path, '/');
    if (!raw && !strcmp(base ? base + 1 : in->path, "snapshot.ini")) {
        /* DIR/snapshot.ini: the snapshot in DIR. */
        char dir[1024];
        size_t n = base ? (size_t)(base - in->path) : 0;

        if (n >= sizeof dir)
            n = sizeof dir - 1;
        memcpy(dir, in->path, n);
        dir[n] = '\0';
        return open_snapshot(in, n ? dir : base ? "/" : ".");
    }
    return open_file(in);
}

void tb_cli_input_close(tb_cli_input *in)
{
    if (in->snap_loaded)
        tb_snapshot_fini(&in->snap);
    in->snap_loaded = false;
}

static const char *file_format(const tb_cli_input *in)
{
    if (in->n && tb_protocol_is_port(in->srcs[0].cfg.protocol))
        return tb_port_format_name(in->srcs[0].cfg.protocol);
    return in->formatted == 1 ? "coresight" : "source_data";
}

/* Both pass gaps on (a call with len 0 where a corrupt frame may have
 * cut the source's bytes, stream.h): decode and packets resynchronise
 * there. */
static const tb_stream_opts gap_opts = {.size = sizeof(tb_stream_opts), .gaps = true};

int tb_cli_input_stream_spans(const tb_cli_input *in, size_t k, tb_stream_span_cb cb,
                              void *ctx, char *err, size_t errlen)
{
    if (in->is_file)
        return tb_stream_file_spans(in->path, file_format(in), in->srcs[k].cfg.trace_id,
                                    &gap_opts, cb, ctx, err, errlen);
    return tb_stream_source_spans(&in->snap, in->srcs[k].src, &gap_opts, cb, ctx, err, errlen);
}

int tb_cli_input_stream(const tb_cli_input *in, size_t k, tb_stream_cb cb, void *ctx,
                        char *err, size_t errlen)
{
    if (in->is_file)
        return tb_stream_file(in->path, file_format(in), in->srcs[k].cfg.trace_id, &gap_opts,
                              cb, ctx, err, errlen);
    return tb_stream_source(&in->snap, in->srcs[k].src, &gap_opts, cb, ctx, err, errlen);
}

/* The PT_LOAD segments of an ELF file into m. */
static int add_elf(tb_memimage *m, const char *path, char *err, size_t errlen)
{
    tb_snap_region regions[TB_SNAP_MAX_DUMPS];
    uint8_t *data, *storage = NULL;
    size_t len;
    int n, rc;

    rc = tb_snapshot_read_file(path, &data, &len, err, errlen);
    if (rc < 0)
        return rc;
    {
        char buf[160];
        const char *why = tb_cli_elf_problem(data, len, buf, sizeof buf);

        if (why) {
            snprintf(err, errlen, "--memory %s: %s%s", path, why,
                     !strcmp(why, "not an ELF file") ? "; to map a raw memory dump give "
                                                       "--memory ADDR:FILE"
                                                     : "");
            free(data);
            return TB_ERR_FORMAT;
        }
    }
    n = tb_encoder_elf_regions(data, len, regions, TB_SNAP_MAX_DUMPS, &storage);
    free(data);
    if (n < 0) {
        snprintf(err, errlen, "--memory %s: its loadable segments cannot be read", path);
        return n;
    }
    rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        rc = tb_memimage_add(m, regions[i].address, regions[i].data, regions[i].len);
        if (rc < 0)
            snprintf(err, errlen, "--memory %s: its segment at 0x%08X (%zu bytes) overlaps "
                                  "memory already mapped", path, (unsigned)regions[i].address,
                     regions[i].len);
    }
    free(storage);
    return rc;
}

int tb_cli_input_memory(const tb_cli_input *in, size_t k, tb_memimage **mem, char *err,
                        size_t errlen)
{
    tb_memimage *m;
    int rc = 0;

    *mem = NULL;
    if (!in->is_file)
        return tb_snapshot_source_memory(&in->snap, in->srcs[k].src, mem, err, errlen);
    m = tb_memimage_new();
    if (!m)
        return TB_ERR_NOMEM;
    for (size_t i = 0; i < in->n_memory && rc >= 0; i++) {
        uint32_t addr = 0;
        const char *file;

        if (split_memory(in->memory[i], &addr, &file) == 1) {
            char e[512];

            rc = tb_memimage_add_file(m, addr, file, e, sizeof e);
            if (rc < 0)
                snprintf(err, errlen, "--memory %s: %s", in->memory[i], e);
        } else
            rc = add_elf(m, file, err, errlen);
    }
    if (rc < 0) {
        tb_memimage_free(m);
        return rc;
    }
    *mem = m;
    return (int)in->n_memory;
}

int tb_cli_output_check(FILE *f)
{
    if (!ferror(f))
        return 0;
    return errno ? errno : EIO;
}

int tb_cli_output_end(FILE *f, const char *cmd, int err_no)
{
    errno = 0;
    if (fflush(f) != 0 && !err_no)
        err_no = errno ? errno : EIO;
    if (ferror(f) && !err_no)
        err_no = EIO;
    if (!err_no)
        return 0;
    fprintf(stderr, "tracebench %s: cannot write the output: %s\n", cmd, strerror(err_no));
    return TB_EXIT_ERROR;
}
