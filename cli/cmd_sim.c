/* tracebench sim PROGRAM [--scenario S.ini] [--truth FILE] [--format text|json]
 *                        [--cpu a15|a9|a7] [--raw ADDR] [--max N]
 *                        [--protocol ptm|etmv3 [--options LIST] --out DIR
 *                         [--buffer coresight|raw]]
 * Runs PROGRAM (ELF, or a raw image at ADDR) and writes the ground truth;
 * with --protocol, also encodes the run and writes an OpenCSD snapshot
 * (and DIR/truth.txt unless --truth names another file). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tracebench/encoder.h"
#include "tracebench/sim.h"

int tb_cli_sim(int argc, char **argv);

#ifdef TB_HAVE_SIM

struct truth_out {
    FILE *f;
    bool json;
    int err;
    tb_encoder *enc;
};

static int on_record(void *ctx, const tb_exec_record *r)
{
    struct truth_out *o = ctx;
    char line[512];

    if (o->f) {
        int n = o->json ? tb_truth_format_json(r, line, sizeof line)
                        : tb_truth_format_text(r, line, sizeof line);

        if (n < 0 || fprintf(o->f, "%s\n", line) < 0) {
            o->err = 1;
            return 1;
        }
    }
    if (o->enc && tb_encoder_push(o->enc, r) < 0)
        return 1;
    return 0;
}

/* The encoded trace, kept for the snapshot writer. */
struct trace_buf {
    uint8_t *buf;
    size_t len, cap;
};

static int trace_sink(void *ctx, const uint8_t *data, size_t len)
{
    struct trace_buf *t = ctx;

    if (t->len + len > t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 65536;
        uint8_t *nb;

        while (nc < t->len + len)
            nc *= 2;
        if (!(nb = realloc(t->buf, nc)))
            return TB_ERR_NOMEM;
        t->buf = nb;
        t->cap = nc;
    }
    memcpy(t->buf + t->len, data, len);
    t->len += len;
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: tracebench sim PROGRAM [--scenario S.ini] [--truth FILE]\n"
                    "       [--format text|json] [--cpu a15|a9|a7] [--raw ADDR] [--max N]\n"
                    "       [--protocol ptm|etmv3 [--options LIST] --out DIR [--buffer coresight|raw]]\n"
                    "  LIST: comma-separated: ca ts bb rs alt vmid ctxid=N v=MINOR id=ID\n"
                    "        sync=BYTES tsper=N trigger=SEQ fifo=DEPTH[:BYTES/CYCLES]\n"
                    "        include=LO-HI exclude=LO-HI\n");
    return 2;
}

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n;

    if (!f)
        return NULL;
    if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
        buf = malloc((size_t)n + 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *len = (size_t)n;
    }
    fclose(f);
    return buf;
}

int tb_cli_sim(int argc, char **argv)
{
    const char *prog = NULL, *scn = NULL, *truth = NULL, *cpu = NULL;
    const char *proto = NULL, *options = NULL, *out = NULL;
    bool raw_buffer = false;
    struct truth_out o = {NULL, false, 0, NULL};
    struct trace_buf tb = {NULL, 0, 0};
    tb_encoder_opts eo;
    char truth_path[1024];
    bool raw = false;
    uint32_t raw_addr = 0;
    uint64_t max = 0;
    tb_scenario sc;
    tb_sim_result res;
    tb_sim *s;
    char err[256];
    int rc;

    for (int i = 1; i < argc; i++) {
        char *end;

        if (!strcmp(argv[i], "--scenario") && i + 1 < argc) {
            scn = argv[++i];
        } else if (!strcmp(argv[i], "--truth") && i + 1 < argc) {
            truth = argv[++i];
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            const char *f = argv[++i];

            if (!strcmp(f, "json"))
                o.json = true;
            else if (strcmp(f, "text"))
                return usage();
        } else if (!strcmp(argv[i], "--protocol") && i + 1 < argc) {
            proto = argv[++i];
        } else if (!strcmp(argv[i], "--options") && i + 1 < argc) {
            options = argv[++i];
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--buffer") && i + 1 < argc) {
            const char *b = argv[++i];

            if (!strcmp(b, "raw"))
                raw_buffer = true;
            else if (strcmp(b, "coresight"))
                return usage();
        } else if (!strcmp(argv[i], "--cpu") && i + 1 < argc) {
            cpu = argv[++i];
        } else if (!strcmp(argv[i], "--raw") && i + 1 < argc) {
            unsigned long long v = strtoull(argv[++i], &end, 0);

            if (*end || v > 0xFFFFFFFFull)
                return usage();
            raw = true;
            raw_addr = (uint32_t)v;
        } else if (!strcmp(argv[i], "--max") && i + 1 < argc) {
            max = strtoull(argv[++i], &end, 0);
            if (*end)
                return usage();
        } else if (argv[i][0] == '-' || prog) {
            return usage();
        } else {
            prog = argv[i];
        }
    }
    if (!prog || (!proto && (options || out)) || (proto && !out))
        return usage();
    if (proto) {
        tb_config cfg;

        if (!strcmp(proto, "ptm"))
            tb_encoder_opts_init(&eo, TB_PROTO_PTM);
        else if (!strcmp(proto, "etmv3"))
            tb_encoder_opts_init(&eo, TB_PROTO_ETMV3);
        else
            return usage();
        if (options && tb_encoder_opts_parse(&eo, options, err, sizeof err) < 0) {
            fprintf(stderr, "tracebench sim: --options: %s\n", err);
            return 2;
        }
        if (tb_encoder_config(&eo, &cfg) < 0) {
            fprintf(stderr, "tracebench sim: --options: inconsistent for %s\n", proto);
            return 2;
        }
        if (!truth) {
            snprintf(truth_path, sizeof truth_path, "%s/truth.txt", out);
            truth = truth_path;
        }
    }
    tb_scenario_init(&sc);
    if (scn && (rc = tb_scenario_load(&sc, scn, err, sizeof err)) < 0) {
        fprintf(stderr, "tracebench sim: %s: %s\n", scn, err);
        return 1;
    }
    if (cpu) {
        char text[64];

        snprintf(text, sizeof text, "[sim]\ncpu = %s\n", cpu);
        if (tb_scenario_parse(&sc, text, strlen(text), err, sizeof err) < 0) {
            fprintf(stderr, "tracebench sim: --cpu: %s\n", err);
            return 2;
        }
    }
    if (max)
        sc.max_insns = max;
    s = tb_sim_new(sc.cpu);
    if (!s) {
        fprintf(stderr, "tracebench sim: cannot start the emulator\n");
        return 1;
    }
    if (raw) {
        size_t len = 0;
        uint8_t *img = read_all(prog, &len);

        rc = img ? tb_sim_load_raw(s, img, len, raw_addr) : TB_ERR_IO;
        free(img);
    } else {
        rc = tb_sim_load_elf_file(s, prog);
    }
    if (rc >= 0)
        rc = tb_sim_set_scenario(s, &sc);
    if (rc < 0) {
        fprintf(stderr, "tracebench sim: %s: %s (%s)\n", prog, tb_err_str(rc),
                tb_sim_errmsg(s));
        tb_sim_free(s);
        return 1;
    }
    if (proto) {
        /* tb_snapshot_write creates DIR, but the truth goes there first. */
        if (mkdir(out, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "tracebench sim: cannot create %s\n", out);
            tb_sim_free(s);
            return 1;
        }
        o.enc = tb_encoder_new(&eo, trace_sink, &tb);
        if (!o.enc) {
            fprintf(stderr, "tracebench sim: cannot start the encoder\n");
            tb_sim_free(s);
            return 1;
        }
    }
    if (truth) {
        o.f = strcmp(truth, "-") ? fopen(truth, "w") : stdout;
        if (!o.f) {
            fprintf(stderr, "tracebench sim: cannot write %s\n", truth);
            tb_sim_free(s);
            return 1;
        }
    }
    rc = tb_sim_run(s, (o.f || o.enc) ? on_record : NULL, &o, &res);
    if (o.f && o.f != stdout && fclose(o.f))
        o.err = 1;
    if (o.enc && rc >= 0)
        rc = tb_encoder_finish(o.enc);
    if (rc < 0) {
        int erc = o.enc ? tb_encoder_error(o.enc) : 0;

        fprintf(stderr, "tracebench sim: %s: %s: %s\n", prog,
                tb_err_str(erc ? erc : rc), erc ? "encoder" : tb_sim_errmsg(s));
        tb_encoder_free(o.enc);
        free(tb.buf);
        tb_sim_free(s);
        return 1;
    }
    if (o.enc) {
        const tb_encoder_stats *st = tb_encoder_get_stats(o.enc);
        tb_snap_region regs[16];
        size_t elen = 0;
        uint8_t *elf = raw ? NULL : read_all(prog, &elen), *store = NULL;
        int nr = elf ? tb_encoder_elf_regions(elf, elen, regs, 16, &store) : 0;

        if (raw) {
            /* A raw image: the whole file at its load address. */
            elf = read_all(prog, &elen);
            regs[0].address = raw_addr;
            regs[0].data = elf;
            regs[0].len = elen;
            nr = elf ? 1 : 0;
        }
        rc = nr < 0 ? nr
                    : tb_encoder_write_snapshot(out, tb_encoder_get_config(o.enc), regs,
                                                (size_t)nr, tb.buf, tb.len, !raw_buffer,
                                                err, sizeof err);
        if (rc < 0)
            fprintf(stderr, "tracebench sim: %s: %s %s\n", out, tb_err_str(rc), err);
        else
            fprintf(stderr, "trace: %llu bytes, %llu packets, %llu of %llu insns traced, "
                    "%llu overflows, %.3f bits/insn\n",
                    (unsigned long long)st->bytes, (unsigned long long)st->packets,
                    (unsigned long long)st->traced, (unsigned long long)st->insns,
                    (unsigned long long)st->overflows,
                    st->insns ? 8.0 * (double)st->bytes / (double)st->insns : 0.0);
        free(elf);
        free(store);
        free(tb.buf);
        tb_encoder_free(o.enc);
        if (rc < 0) {
            tb_sim_free(s);
            return 1;
        }
    }
    fprintf(stderr, "stop=%s at 0x%08x insns=%llu cycles=%llu exceptions=%llu\n",
            tb_sim_stop_name(res.stop), res.stop_addr, (unsigned long long)res.insns,
            (unsigned long long)res.cycles, (unsigned long long)res.exceptions);
    tb_sim_free(s);
    if (o.err) {
        fprintf(stderr, "tracebench sim: error writing the truth\n");
        return 1;
    }
    return 0;
}

#else

int tb_cli_sim(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tracebench sim: built without the simulator\n");
    return 1;
}

#endif
