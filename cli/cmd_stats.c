/* tracebench stats DIR|FILE [--id ID|all] [--format text|json]: per trace
 * source of a snapshot (or of a raw trace buffer file, read as `decode`
 * reads it), what its trace holds: bytes, packets by kind, instructions,
 * bits per instruction, gaps by reason, exceptions, the time span of its
 * timestamps (and in cycles when cycle-accurate), errors.
 *
 * One pass per source: stream -> parser -> decoder (the packet path, so
 * that the packets are counted on the way), with the snapshot's memory
 * image.  Field names are those of docs/formats.md.  Exit (cli.h): 0, 2
 * usage, 4 an error, 5 trace was lost (a warning on stderr says why). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "input.h"
#include "tracebench/decoder.h"
#include "tracebench/parser.h"
#include "tracebench/pipeline.h"
#include "tracebench/stream.h"

#define N_GAP 8   /* tb_gap_reason values, with room for an unknown one */
#define N_ISYNC 4 /* I-sync reasons */

typedef struct stats {
    uint64_t bytes;
    uint64_t packets, by_kind[TB_PKT_KIND_COUNT], bad_packets;
    uint64_t insns, ranges, exceptions, exc_returns;
    uint64_t no_sync[N_GAP], trace_on[N_ISYNC];
    /* Gaps as `decode --format addr` marks them: trace missing between
     * two instructions (none before the first or after the last). */
    uint64_t gaps;
    bool gap_open, shown;
    uint64_t timestamps, ts_first, ts_last;
    /* Cycles: the running sum of element cycle counts, and where it
     * stood at the first and the last timestamp. */
    uint64_t cycles, cycles_first_ts, cycles_last_ts;
    uint64_t addr_nacc, addr_unknown, elem_errors;
    tb_health health;  /* was trace lost, and why */
} stats;

static const char *const isync_words[N_ISYNC] = {"periodic", "trace-on", "overflow",
                                                 "debug-exit"};

static int on_elem(void *ctx, const tb_element *el)
{
    stats *s = ctx;

    if (el->has_cc)
        s->cycles += el->cc;
    if (el->err && el->kind != TB_ELEM_ADDR_NACC) /* NACC's err is its reason */
        s->elem_errors++;
    /* What the addr format prints a line for ends any open gap. */
    if ((el->kind == TB_ELEM_INSN_RANGE && el->count) || el->kind == TB_ELEM_ADDR_NACC ||
        el->kind == TB_ELEM_ADDR_UNKNOWN) {
        s->gaps += s->gap_open && s->shown;
        s->gap_open = false;
        s->shown = true;
    }
    switch (el->kind) {
    case TB_ELEM_INSN_RANGE:
        s->insns += el->count;
        s->ranges++;
        break;
    case TB_ELEM_EXCEPTION:
        s->exceptions++;
        break;
    case TB_ELEM_EXC_RETURN:
        s->exc_returns++;
        break;
    case TB_ELEM_NO_SYNC:
        s->no_sync[el->reason < N_GAP ? el->reason : N_GAP - 1]++;
        if (el->reason != TB_GAP_INIT)
            s->gap_open = true;
        break;
    case TB_ELEM_TRACE_ON:
        s->trace_on[el->reason & (N_ISYNC - 1)]++;
        /* A periodic I-sync resumes nothing. */
        if (el->reason != TB_ISYNC_PERIODIC)
            s->gap_open = true;
        break;
    case TB_ELEM_TIMESTAMP:
        if (!s->timestamps++) {
            s->ts_first = el->ts;
            s->cycles_first_ts = s->cycles;
        }
        s->ts_last = el->ts;
        s->cycles_last_ts = s->cycles;
        break;
    case TB_ELEM_ADDR_NACC:
        s->addr_nacc++;
        break;
    case TB_ELEM_ADDR_UNKNOWN:
        s->addr_unknown++;
        break;
    default:
        break;
    }
    return 0;
}

/* The pipeline's packet tap: each packet, before the decoder. */
static int on_packet(void *ctx, const tb_packet *pkt)
{
    stats *s = ctx;

    s->packets++;
    if ((unsigned)pkt->kind < TB_PKT_KIND_COUNT)
        s->by_kind[pkt->kind]++;
    if (pkt->kind >= TB_PKT_RESERVED)
        s->bad_packets++;
    return 0;
}

static uint64_t error_total(const stats *s)
{
    return s->bad_packets + s->addr_nacc + s->addr_unknown + s->elem_errors;
}

static void print_text(const char *name, const char *buffer, const tb_config *cfg,
                       const stats *s)
{
    char label[64];

    tb_cli_source_label(cfg, label, sizeof label);
    printf("source %s: %s, buffer %s%s%s\n", name, label, buffer,
           cfg->cycle_accurate ? ", cycle-accurate" : "", cfg->timestamps ? ", timestamps" : "");
    printf("  %-16s %" PRIu64 "\n", "trace_bytes", s->bytes);
    printf("  %-16s %" PRIu64 "\n", "packets", s->packets);
    for (unsigned k = 0; k < TB_PKT_KIND_COUNT; k++)
        if (s->by_kind[k])
            printf("    %-24s %" PRIu64 "\n", tb_pkt_kind_name((tb_pkt_kind)k), s->by_kind[k]);
    printf("  %-16s %" PRIu64 "\n", "instructions", s->insns);
    printf("  %-16s %" PRIu64 "\n", "insn_ranges", s->ranges);
    if (s->insns)
        printf("  %-16s %.3f\n", "bits_per_insn", (double)s->bytes * 8 / (double)s->insns);
    else
        printf("  %-16s -\n", "bits_per_insn");
    printf("  %-16s %" PRIu64 "\n", "exceptions", s->exceptions);
    printf("  %-16s %" PRIu64 "\n", "exc_returns", s->exc_returns);
    printf("  %-16s %" PRIu64 "\n", "gaps", s->gaps);
    for (unsigned r = 0; r < N_GAP; r++)
        if (s->no_sync[r])
            printf("    NO_SYNC reason=%-11s %" PRIu64 "\n",
                   tb_gap_reason_name((tb_gap_reason)r), s->no_sync[r]);
    for (unsigned r = 1; r < N_ISYNC; r++)
        if (s->trace_on[r])
            printf("    TRACE_ON reason=%-10s %" PRIu64 "\n", isync_words[r], s->trace_on[r]);
    printf("  %-16s %" PRIu64 "\n", "timestamps", s->timestamps);
    if (s->timestamps) {
        printf("  %-16s %" PRIu64 "\n", "ts_first", s->ts_first);
        printf("  %-16s %" PRIu64 "\n", "ts_last", s->ts_last);
        printf("  %-16s %" PRIu64 "\n", "ts_span", s->ts_last - s->ts_first);
    }
    if (cfg->cycle_accurate) {
        printf("  %-16s %" PRIu64 "\n", "cycles", s->cycles);
        if (s->timestamps)
            printf("  %-16s %" PRIu64 "\n", "ts_span_cycles",
                   s->cycles_last_ts - s->cycles_first_ts);
    }
    printf("  %-16s %" PRIu64 "\n", "errors", error_total(s));
    if (error_total(s)) {
        printf("    %-24s %" PRIu64 "\n", "bad_packets", s->bad_packets);
        printf("    %-24s %" PRIu64 "\n", "addr_nacc", s->addr_nacc);
        printf("    %-24s %" PRIu64 "\n", "addr_unknown", s->addr_unknown);
        printf("    %-24s %" PRIu64 "\n", "decode_errors", s->elem_errors);
    }
}

static void json_str(const char *s);

static void print_json(const char *name, const char *buffer, const tb_config *cfg,
                       const stats *s)
{
    const char *sep = "";

    printf("{\"source\":\"");
    json_str(name);
    printf("\",\"id\":%u,\"protocol\":\"%s\",\"buffer\":\"", cfg->trace_id,
           tb_protocol_name(cfg->protocol));
    json_str(buffer);
    printf("\",\"cycle_accurate\":%s,\"trace_bytes\":%" PRIu64 ",\"packets\":{\"total\":%" PRIu64,
           cfg->cycle_accurate ? "true" : "false", s->bytes, s->packets);
    for (unsigned k = 0; k < TB_PKT_KIND_COUNT; k++)
        if (s->by_kind[k])
            printf(",\"%s\":%" PRIu64, tb_pkt_kind_name((tb_pkt_kind)k), s->by_kind[k]);
    printf("},\"instructions\":%" PRIu64 ",\"insn_ranges\":%" PRIu64, s->insns, s->ranges);
    if (s->insns)
        printf(",\"bits_per_insn\":%.3f", (double)s->bytes * 8 / (double)s->insns);
    else
        printf(",\"bits_per_insn\":null");
    printf(",\"exceptions\":%" PRIu64 ",\"exc_returns\":%" PRIu64 ",\"gaps\":{\"total\":%" PRIu64
           ",\"NO_SYNC\":{",
           s->exceptions, s->exc_returns, s->gaps);
    for (unsigned r = 0; r < N_GAP; r++)
        if (s->no_sync[r]) {
            printf("%s\"%s\":%" PRIu64, sep, tb_gap_reason_name((tb_gap_reason)r), s->no_sync[r]);
            sep = ",";
        }
    printf("},\"TRACE_ON\":{");
    sep = "";
    for (unsigned r = 1; r < N_ISYNC; r++)
        if (s->trace_on[r]) {
            printf("%s\"%s\":%" PRIu64, sep, isync_words[r], s->trace_on[r]);
            sep = ",";
        }
    printf("}},\"timestamps\":%" PRIu64, s->timestamps);
    if (s->timestamps)
        printf(",\"ts_first\":%" PRIu64 ",\"ts_last\":%" PRIu64 ",\"ts_span\":%" PRIu64,
               s->ts_first, s->ts_last, s->ts_last - s->ts_first);
    if (cfg->cycle_accurate) {
        printf(",\"cycles\":%" PRIu64, s->cycles);
        if (s->timestamps)
            printf(",\"ts_span_cycles\":%" PRIu64, s->cycles_last_ts - s->cycles_first_ts);
    }
    printf(",\"errors\":{\"total\":%" PRIu64 ",\"bad_packets\":%" PRIu64
           ",\"addr_nacc\":%" PRIu64 ",\"addr_unknown\":%" PRIu64 ",\"decode_errors\":%" PRIu64
           "}}\n",
           error_total(s), s->bad_packets, s->addr_nacc, s->addr_unknown, s->elem_errors);
}

/* A JSON string's contents: the reasons hold paths and quotes. */
static void json_str(const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
}

static void print_skipped(const tb_snap_source *src, const char *why, bool json)
{
    if (json) {
        printf("{\"source\":\"");
        json_str(src->name);
        printf("\",\"skipped\":\"");
        json_str(why);
        printf("\"}\n");
    } else
        printf("source %s: skipped: %s\n", src->name, why);
}

/* Source k of the input.  TB_EXIT_OK, TB_EXIT_LOST (after a warning:
 * the stats are printed), or TB_EXIT_ERROR when it could not be read or
 * decoded (the reason is on stderr). */
static int source_stats(const tb_cli_input *in, size_t k, bool json)
{
    const tb_cli_source *src = &in->srcs[k];
    const tb_config *cfg = &src->cfg;
    const char *buffer = src->src ? src->src->buffer : in->path;
    char err[512] = "";
    tb_memimage *mem = NULL;
    stats s = {0};
    tb_pipeline *pl = NULL;
    int r;

    tb_health_init(&s.health);
    r = tb_cli_input_memory(in, k, &mem, err, sizeof err);
    if (r < 0) {
        fprintf(stderr, "tracebench stats: %s: %s\n", src->name, err[0] ? err : tb_err_str(r));
        return TB_EXIT_ERROR;
    }
    /* The packet path, the packets counted on the way; the decoder counts
     * them into the health.  No gaps: a corrupt frame is an error here. */
    pl = tb_pipeline_new(cfg, mem,
                         &(tb_pipeline_opts){.size = sizeof(tb_pipeline_opts),
                                             .on_element = on_elem, .ctx = &s,
                                             .on_packet = on_packet, .health = &s.health});
    if (!pl) {
        fprintf(stderr, "tracebench stats: %s: cannot create a parser and decoder\n",
                src->name);
        r = TB_EXIT_ERROR;
        goto out;
    }
    r = tb_pipeline_finish_stream(
        pl, tb_cli_input_stream(in, k, tb_pipeline_on_bytes, pl, err, sizeof err));
    s.bytes = tb_pipeline_bytes(pl);
    if (r < 0) {
        fprintf(stderr, "tracebench stats: %s: %s\n", src->name,
                r != TB_ERR_STOPPED && err[0] ? err : tb_err_str(r));
        r = TB_EXIT_ERROR;
        goto out;
    }
    if (json)
        print_json(src->name, buffer, cfg, &s);
    else
        print_text(src->name, buffer, cfg, &s);
    r = tb_cli_health_report(in, k, &s.health);
out:
    tb_pipeline_free(pl);
    tb_memimage_free(mem);
    return r;
}

static void usage(FILE *f)
{
    tb_cli_input_usage(f, "stats");
}

/* Source i of the snapshot: its stats when the input chose it, else (it
 * was passed over: another type, broken registers, no buffer) a line
 * that says why, so that a snapshot's sources are all accounted for. */
static int snapshot_source(const tb_cli_input *in, size_t i, bool json)
{
    const tb_snap_source *src = &in->snap.sources[i];
    tb_config cfg;
    char err[512] = "";

    for (size_t k = 0; k < in->n; k++)
        if (in->srcs[k].src == src)
            return source_stats(in, k, json);
    if (in->id >= 0)
        return TB_EXIT_OK; /* one source asked for: only it */
    if (tb_snapshot_source_config(&in->snap, src, &cfg, err, sizeof err) < 0)
        print_skipped(src, err, json);
    else if (!src->buffer[0])
        print_skipped(src, "no trace buffer was captured for it", json);
    return TB_EXIT_OK;
}

int tb_cli_stats(int argc, char **argv)
{
    static tb_cli_input in;
    static const char *const formats[] = {"text", "json", NULL};
    int status = TB_EXIT_OK, i, r, fmt = 0;
    bool json;

    tb_cli_input_init(&in, "stats", true, TB_STREAM_ALL);
    /* Sources passed over are listed in the output, not noted. */
    in.quiet_skips = true;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return tb_cli_output_end(stdout, "stats", 0);
        }
        r = tb_cli_format_arg(&in, argc, argv, &i, formats, &fmt);
        if (r == 0)
            r = tb_cli_input_arg(&in, argc, argv, &i);
        if (r == 2)
            return TB_EXIT_USAGE;
        if (r == 0)
            return tb_cli_unknown_arg(&in, argv[i]);
    }
    json = fmt == 1;
    r = tb_cli_input_open(&in);
    if (r) {
        tb_cli_input_close(&in);
        return r;
    }
    if (in.is_file)
        status = source_stats(&in, 0, json);
    else
        for (size_t k = 0; k < in.snap.n_sources; k++)
            status = tb_cli_exit_worse(status, snapshot_source(&in, k, json));
    if (in.refused)
        status = tb_cli_exit_worse(status, TB_EXIT_ERROR);
    tb_cli_input_close(&in);
    if (tb_cli_output_end(stdout, "stats", 0))
        status = TB_EXIT_ERROR;
    return status;
}
