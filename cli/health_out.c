/*
 * The warning `packets`, `decode` and `stats` print when a source lost
 * trace (health.h counts, the library names the cause): what was lost,
 * where, and the option to check.  A decode of the wrong configuration
 * does not fail by itself (the parser hunts for an A-sync, the decoder
 * says NO_SYNC), so without this it would end with exit 0 and a few
 * instructions.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "input.h"
#include "tracebench/health.h"

/* The start of a raw FILE, to tell whether it holds CoreSight frames. */
#define GUESS_BYTES 65536

static bool guess_file(const char *path, const tb_config *cfg, tb_buffer_guess *g)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = malloc(GUESS_BYTES);
    size_t n = 0;
    bool ok = false;

    if (f && buf) {
        n = fread(buf, 1, GUESS_BYTES, f);
        ok = tb_health_guess_buffer(buf, n, cfg, g) == 0;
    }
    if (f)
        fclose(f);
    free(buf);
    return ok;
}

/* "0x10, 0x11 and 0x13" for the IDs the frames carry. */
static void id_list(const tb_buffer_guess *g, char *buf, size_t len)
{
    size_t used = 0;
    unsigned n = g->n_ids < TB_GUESS_MAX_IDS ? g->n_ids : TB_GUESS_MAX_IDS;

    buf[0] = '\0';
    for (unsigned k = 0; k < n && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "%s0x%02x",
                                 !k ? "" : k + 1 == n ? " and " : ", ", g->ids[k]);
}

/* What the configuration is called where the user gives it. */
static const char *config_words(const tb_cli_input *in, const tb_config *cfg)
{
    if (!in->is_file)
        return "do the snapshot's registers (ETMCR, ETMCCER in the source's .ini) match "
               "the trace's configuration?";
    if (cfg->protocol == TB_PROTO_PTM)
        return "is --options as the trace was made: cycle-accurate (ca), timestamps (ts), "
               "context ID bytes (ctxid=N), VMID (vmid), return stack (rs)?";
    if (cfg->protocol == TB_PROTO_ETMV3)
        return "is --options as the trace was made: cycle-accurate (ca), timestamps (ts), "
               "context ID bytes (ctxid=N), data trace (data=...), the version (v=MINOR)?";
    return "is the capture's header (its ETMCR) the configuration the trace was made with?";
}

int tb_cli_health_report(const tb_cli_input *in, size_t k, const tb_health *h)
{
    const tb_cli_source *s = &in->srcs[k];
    bool port = tb_protocol_is_port(s->cfg.protocol);
    tb_health_diag d;
    tb_buffer_guess g;
    char ids[256] = "";
    const char *cmd = in->cmd, *name = s->name;
    bool looks_formatted = false;

    tb_health_diagnose(h, port, &d);
    if (d.cause == TB_HEALTH_EMPTY) {
        if (in->is_file && in->formatted == 1 && guess_file(in->path, &s->cfg, &g) && g.n_ids) {
            id_list(&g, ids, sizeof ids);
            fprintf(stderr, "tracebench %s: %s: note: no trace for trace ID 0x%02x; the "
                            "file's frames carry %s: give --id\n",
                    cmd, name, (unsigned)s->cfg.trace_id, ids);
        }
        return TB_EXIT_OK;
    }
    if (!d.lost)
        return TB_EXIT_OK;
    /* A raw file that trouble came from: are its bytes formatter frames? */
    if (in->is_file && in->formatted != 1 && !port && guess_file(in->path, &s->cfg, &g) &&
        g.formatted) {
        looks_formatted = true;
        id_list(&g, ids, sizeof ids);
    }
    switch (d.cause) {
    case TB_HEALTH_NO_ASYNC:
        fprintf(stderr, "tracebench %s: %s: no A-sync in %" PRIu64 " bytes: nothing was "
                        "decoded\n", cmd, name, d.count);
        break;
    case TB_HEALTH_NO_ISYNC:
        fprintf(stderr, "tracebench %s: %s: %s in %" PRIu64 " bytes: nothing was decoded\n",
                cmd, name, port ? "no synchronisation (no TRACESYNC address)"
                                : "A-sync but no I-sync (no address to start from)",
                d.count);
        break;
    case TB_HEALTH_BAD_PACKETS:
        fprintf(stderr, "tracebench %s: %s: %" PRIu64 " bad packet%s after sync (the first "
                        "at index %" PRIu64 "): the trace after each, up to the next "
                        "A-sync, is lost\n",
                cmd, name, d.count, d.count == 1 ? "" : "s", d.index);
        break;
    case TB_HEALTH_DECODE_ERRORS:
        fprintf(stderr, "tracebench %s: %s: %" PRIu64 " packet%s that cannot be what ran "
                        "(the first at index %" PRIu64 "): the trace after each, up to the "
                        "next sync, is lost; is the memory image the code that ran?\n",
                cmd, name, d.count, d.count == 1 ? "" : "s", d.index);
        break;
    case TB_HEALTH_NO_ADDRESS:
        fprintf(stderr, "tracebench %s: %s: %" PRIu64 " atoms came with no address to apply "
                        "them to, against %" PRIu64 " instructions decoded: the packets look "
                        "misread", cmd, name, d.count, h->insns);
        if (h->nacc)
            fprintf(stderr, " (or the memory image lacks code: %" PRIu64 " address%s not "
                            "in it)", h->nacc, h->nacc == 1 ? " was" : "es were");
        fprintf(stderr, "\n");
        break;
    default:
        break;
    }
    if (looks_formatted)
        fprintf(stderr, "tracebench %s: %s: the file looks CoreSight-formatted (its 16-byte "
                        "frames carry trace IDs %s): give --buffer coresight and --id ID\n",
                cmd, name, ids);
    else if (d.cause == TB_HEALTH_NO_ASYNC && in->is_file && !port)
        fprintf(stderr, "tracebench %s: %s: is it CoreSight-formatted, an ETB/ETR dump of "
                        "several sources (--buffer coresight)? is the protocol right (--protocol etmv3|ptm)? is it "
                        "trace at all?\n", cmd, name);
    else if (d.cause == TB_HEALTH_NO_ASYNC)
        fprintf(stderr, "tracebench %s: %s: is the source's type (ETMv3 or PTM) right, and "
                        "the buffer's format (coresight or source_data in trace.ini)?\n",
                cmd, name);
    else if (d.cause == TB_HEALTH_NO_ISYNC && in->is_file && !port)
        fprintf(stderr, "tracebench %s: %s: is the protocol right (--protocol etmv3|ptm)?\n",
                cmd, name);
    else if (d.config_suspect)
        fprintf(stderr, "tracebench %s: %s: %s\n", cmd, name, config_words(in, &s->cfg));
    return TB_EXIT_LOST;
}
