/* tracebench packets DIR [--id ID] [--json]: the packet listing of a
 * snapshot, per trace source, with stream indices. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "tracebench/parser.h"
#include "tracebench/print.h"
#include "tracebench/stream.h"

typedef struct listing {
    tb_parser *parser;
    FILE *out;
    int id;
    bool json;
    uint64_t packets, errors;
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
    if (pkt->kind >= TB_PKT_RESERVED)
        l->errors++;
    return 0;
}

static int on_bytes(void *ctx, uint64_t index, const uint8_t *data, size_t len)
{
    listing *l = ctx;
    return tb_parser_push(l->parser, data, len, index, on_packet, l) < 0;
}

static int list_source(const tb_snapshot *snap, const tb_snap_source *src,
                       bool json)
{
    char err[512] = "";
    tb_config cfg;
    listing l = {.out = stdout, .json = json};
    int rc;

    rc = tb_snapshot_source_config(snap, src, &cfg, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "tracebench packets: %s\n", err);
        return 1;
    }
    l.id = cfg.trace_id;
    l.parser = tb_parser_new(&cfg);
    if (!l.parser) {
        fprintf(stderr, "tracebench packets: cannot create a parser for %s\n",
                src->name);
        return 1;
    }
    if (!json)
        printf("# source %s: %s%u, trace ID 0x%02x, buffer %s\n", src->name,
               cfg.protocol == TB_PROTO_PTM ? "PFT1." : "ETMv3.",
               cfg.arch_minor, cfg.trace_id, src->buffer);
    rc = tb_stream_source(snap, src, NULL, on_bytes, &l, err, sizeof err);
    if (rc == 0)
        rc = tb_parser_finish(l.parser, on_packet, &l);
    tb_parser_free(l.parser);
    if (rc < 0) {
        fprintf(stderr, "tracebench packets: %s: %s\n", src->name,
                *err ? err : tb_err_str(rc));
        return 1;
    }
    if (!json)
        printf("# %s: %" PRIu64 " packets, %" PRIu64 " bad\n", src->name,
               l.packets, l.errors);
    if (l.errors)
        fprintf(stderr, "tracebench packets: %s: %" PRIu64
                " bad or incomplete packets (listed)\n", src->name, l.errors);
    return 0;
}

int tb_cli_packets(int argc, char **argv)
{
    const char *dir = NULL;
    int id = -2, i, status = 0;
    bool json = false;
    tb_snapshot snap;
    char err[512] = "";

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--id") && i + 1 < argc) {
            id = tb_cli_parse_id(argv[++i]);
            if (id < 0) {
                fprintf(stderr, "tracebench packets: bad trace ID '%s'\n", argv[i]);
                return 2;
            }
        } else if (argv[i][0] == '-' || dir) {
            fprintf(stderr, "usage: tracebench packets DIR [--id ID] [--json]\n");
            return 2;
        } else
            dir = argv[i];
    }
    if (!dir) {
        fprintf(stderr, "usage: tracebench packets DIR [--id ID] [--json]\n");
        return 2;
    }
    if (tb_snapshot_load(&snap, dir, err, sizeof err) < 0) {
        fprintf(stderr, "tracebench packets: %s\n", err);
        return 1;
    }
    if (id >= 0) {
        const tb_snap_source *src = tb_stream_find_source(&snap, id, err, sizeof err);
        if (!src) {
            fprintf(stderr, "tracebench packets: %s\n", err);
            status = 1;
        } else
            status = list_source(&snap, src, json);
    } else {
        size_t s;
        for (s = 0; s < snap.n_sources; s++) {
            tb_config cfg;
            if (!snap.sources[s].buffer[0])
                continue; /* named, but no trace was captured for it */
            if (tb_snapshot_source_config(&snap, &snap.sources[s], &cfg, err,
                                          sizeof err) < 0)
                continue; /* not ETMv3/PTM, e.g. an ITM */
            status |= list_source(&snap, &snap.sources[s], json);
        }
    }
    tb_snapshot_fini(&snap);
    return status;
}
