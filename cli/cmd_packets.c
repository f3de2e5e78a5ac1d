/* tracebench packets DIR|FILE [--id ID|all] [--json]: the packet listing
 * of a snapshot's trace sources, or of a raw trace buffer file, with
 * stream indices.  Exit (cli.h): 0 listed, 2 usage, 4 an error, 5 trace
 * was lost to bad packets or never synchronised (a warning says why). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "input.h"
#include "tracebench/parser.h"
#include "tracebench/print.h"

typedef struct listing {
    tb_parser *parser;
    FILE *out;
    int id;
    bool json;
    int write_errno;     /* writing the listing failed */
    uint64_t packets, errors;
    tb_health health;    /* was trace lost, and why */
} listing;

static int on_packet(void *ctx, const tb_packet *pkt)
{
    listing *l = ctx;
    char line[512];

    if (l->json)
        tb_packet_format_json(pkt, l->id, line, sizeof line);
    else
        tb_packet_format(pkt, line, sizeof line);
    fprintf(l->out, "%s\n", line);
    l->packets++;
    tb_health_packet(&l->health, pkt);
    if (pkt->kind >= TB_PKT_RESERVED)
        l->errors++;
    l->write_errno = tb_cli_output_check(l->out);
    return l->write_errno != 0;
}

static int on_bytes(void *ctx, uint64_t index, const uint8_t *data, size_t len)
{
    listing *l = ctx;

    tb_health_bytes(&l->health, len);
    if (len == 0) {
        /* A corrupt frame may have cut the bytes (input.c): a packet
         * begun is listed INCOMPLETE, then the parser looks for the next
         * A-sync. */
        int r = tb_parser_finish(l->parser, on_packet, l);

        tb_parser_reset(l->parser);
        return r < 0;
    }
    return tb_parser_push(l->parser, data, len, index, on_packet, l) < 0;
}

/* Lists source k.  TB_EXIT_OK, TB_EXIT_LOST after a warning, or
 * TB_EXIT_ERROR after printing why it failed; a write error is left in
 * *write_errno. */
static int list_source(const tb_cli_input *in, size_t k, bool json, int *write_errno)
{
    const tb_cli_source *s = &in->srcs[k];
    char err[512] = "";
    listing l = {.out = stdout, .json = json, .id = s->cfg.trace_id};
    int rc;

    tb_health_init(&l.health);
    l.parser = tb_parser_new(&s->cfg);
    if (!l.parser) {
        fprintf(stderr, "tracebench packets: cannot create a parser for %s (out of memory)\n",
                s->name);
        return TB_EXIT_ERROR;
    }
    if (!json) {
        char label[64];

        tb_cli_source_label(&s->cfg, label, sizeof label);
        printf("# source %s: %s, buffer %s\n", s->name, label,
               s->src ? s->src->buffer : in->path);
        l.write_errno = tb_cli_output_check(stdout);
    }
    rc = l.write_errno ? TB_ERR_IO
                       : tb_cli_input_stream(in, k, on_bytes, &l, err, sizeof err);
    /* Corrupt frames: listed past them to the end, the error after. */
    if (rc == 0 || rc == TB_ERR_BAD_FRAME) {
        int f = tb_parser_finish(l.parser, on_packet, &l);

        if (f < 0)
            rc = f;
    }
    tb_parser_free(l.parser);
    if (l.write_errno) {
        *write_errno = l.write_errno;
        return TB_EXIT_ERROR;
    }
    if (rc < 0) {
        fprintf(stderr, "tracebench packets: %s: %s\n", s->name, *err ? err : tb_err_str(rc));
        /* Listed to the end past the corrupt frames: trace was lost. */
        return rc == TB_ERR_BAD_FRAME ? TB_EXIT_LOST : TB_EXIT_ERROR;
    }
    if (!json) {
        printf("# %s: %" PRIu64 " packets, %" PRIu64 " bad\n", s->name, l.packets, l.errors);
        *write_errno = tb_cli_output_check(stdout);
    }
    if (*write_errno)
        return TB_EXIT_ERROR;
    return tb_cli_health_report(in, k, &l.health);
}

int tb_cli_packets(int argc, char **argv)
{
    static tb_cli_input in;
    static const char *const formats[] = {"text", "json", NULL};
    int status = 0, write_errno = 0, i, r, fmt = 0;

    tb_cli_input_init(&in, "packets", false, TB_STREAM_ALL);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            tb_cli_input_usage(stdout, "packets");
            return tb_cli_output_end(stdout, "packets", 0);
        }
        r = tb_cli_format_arg(&in, argc, argv, &i, formats, &fmt);
        if (r == 0)
            r = tb_cli_input_arg(&in, argc, argv, &i);
        if (r == 2)
            return TB_EXIT_USAGE;
        if (r == 0)
            return tb_cli_unknown_arg(&in, argv[i]);
    }
    r = tb_cli_input_open(&in);
    if (r) {
        tb_cli_input_close(&in);
        return r;
    }
    for (size_t k = 0; k < in.n && !write_errno; k++)
        status = tb_cli_exit_worse(status, list_source(&in, k, fmt == 1, &write_errno));
    if (in.refused)
        status = tb_cli_exit_worse(status, TB_EXIT_ERROR);
    tb_cli_input_close(&in);
    if (tb_cli_output_end(stdout, "packets", write_errno))
        status = TB_EXIT_ERROR;
    return status;
}
