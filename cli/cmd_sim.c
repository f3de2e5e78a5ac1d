/* tracebench sim PROGRAM [--scenario S.ini] [--truth FILE] [--format text|json]
 *                        [--cpu CPU] [--raw ADDR] [--max N|unlimited] [--quiet]
 *                        [--data]
 *                        [--protocol ptm|etmv3 [--options LIST] --out DIR
 *                         [--buffer coresight|raw] [--vcd FILE]]
 * Runs PROGRAM (ELF, or a raw image at ADDR; bit 0 of ADDR set: Thumb)
 * and writes the ground truth where --truth says (and only then: it is
 * ~70 bytes an instruction); with --protocol, also encodes the run and
 * writes an OpenCSD snapshot into DIR, streamed as the trace is made.
 * The run ends at the exit symbol, at WFI with nothing to come, or at
 * the budget (--max, else the scenario's max_insns, else
 * TB_CLI_DEFAULT_BUDGET), which says so.  --data adds a data record per
 * memory transfer (tb_sim_set_data) to the truth and the encoder's input.
 * --vcd FILE (etmv1 only): the port capture also as a VCD (docs/etmv1.md 8). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tracebench/encoder.h"
#include "tracebench/etmv1.h"
#include "tracebench/sim.h"

#ifdef TB_HAVE_SIM

struct sim_out {
    FILE *f;
    bool json;
    int err;
    tb_encoder *enc;
    tb_cli_progress *prog;
    uint64_t records, insns, exceptions;
};

static int on_record(void *ctx, const tb_exec_record *r)
{
    struct sim_out *o = ctx;
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
    if (r->kind == TB_REC_INSN)
        o->insns++;
    else if (r->kind == TB_REC_EXCEPTION)
        o->exceptions++;
    /* The clock only every 64K records: the line costs nothing. */
    if ((++o->records & 0xFFFF) == 0 && tb_cli_progress_due(o->prog))
        tb_cli_progress_run(o->prog, "sim:", o->insns, o->exceptions,
                            o->enc ? tb_encoder_get_stats(o->enc)->bytes : 0);
    return 0;
}

static int usage_to(FILE *f, int rc)
{
    fprintf(f, "usage: tracebench sim PROGRAM [--scenario S.ini] [--truth FILE]\n"
                    "       [--format text|json] [--cpu CPU] [--raw ADDR] [--max N|unlimited]\n"
                    "       [--quiet] [--data] [--protocol ptm|etmv3|etmv1|etmv2 [--options LIST] --out DIR\n"
                    "       [--buffer coresight|raw] [--vcd FILE]]\n"
                    "  --truth FILE: the ground truth (- for stdout); not written otherwise\n"
                    "  --vcd FILE: (etmv1, etmv2) the port capture also as a VCD for a waveform viewer\n"
                    "  --data: a data record (D) per memory transfer in the run\n"
                    "  --cpu CPU: cortex-a15|cortex-a9|cortex-a7|cortex-m3|cortex-m4, over the\n"
                    "        scenario's cpu; a Cortex-M is traced by ETMv3 only (its ETM-M3/M4)\n"
                    "  --raw ADDR: PROGRAM is a raw image loaded at ADDR; bit 0 set: start in Thumb\n"
                    "  --max N: the budget, N instructions and N exceptions (default: the\n"
                    "        scenario's max_insns, else %u); 0 or unlimited: none\n"
                    "  LIST: comma-separated: ca ts bb rs alt vmid ctxid=N v=MINOR id=ID\n"
                    "        sync=BYTES tsper=N trigger=SEQ fifo=DEPTH[:BYTES/CYCLES]\n"
                    "        include=LO-HI|SYMBOL|SYM-SYM exclude=... (a SYMBOL alone: its\n"
                    "        extent in the ELF symbol table)\n",
            TB_CLI_DEFAULT_BUDGET);
    return rc;
}

static int usage(void)
{
    return usage_to(stderr, 2);
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

/* Why the run stopped, when that needs saying: the budget cut it, or a
 * fault loop ended it. */
static void stop_note(const char *prog, const tb_sim_result *res, uint64_t budget)
{
    bool exc = res->budget_exceptions;

    if (res->stop == TB_SIM_STOP_FAULT)
        fprintf(stderr, "tracebench sim: %s: stopped at 0x%08x: %s\n", prog, res->stop_addr,
                tb_sim_stop_text(res->stop));
    else if (res->stop == TB_SIM_STOP_BUDGET)
        fprintf(stderr, "tracebench sim: %s: stopped after the budget of %llu %s%s; raise "
                "it with --max N (--max unlimited: no budget)\n", prog,
                (unsigned long long)budget,
                exc ? (budget == 1 ? "exception" : "exceptions")
                    : (budget == 1 ? "instruction" : "instructions"),
                exc ? " (exceptions count apart from instructions)" : "");
}

int tb_cli_sim(int argc, char **argv)
{
    const char *prog = NULL, *scn = NULL, *truth = NULL, *cpu = NULL;
    const char *proto = NULL, *options = NULL, *out = NULL, *vcd = NULL;
    bool raw_buffer = false, quiet = false, has_max = false, raw = false, data = false;
    struct sim_out o = {0};
    tb_cli_progress pr;
    tb_encoder_opts eo;
    tb_encoder_snapshot *snap = NULL;
    uint32_t raw_addr = 0;
    uint64_t max = 0;
    uint8_t *img = NULL;
    size_t ilen = 0;
    tb_scenario sc;
    tb_sim_result res;
    tb_sim *s = NULL;
    char err[512];
    int rc, status = 1;

    if (tb_cli_wants_help(argc, argv))
        return usage_to(stdout, 0);

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
        } else if (!strcmp(argv[i], "--vcd") && i + 1 < argc) {
            vcd = argv[++i];
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
            if (tb_cli_parse_budget(argv[++i], &max) < 0)
                return usage();
            has_max = true;
        } else if (!strcmp(argv[i], "--quiet")) {
            quiet = true;
        } else if (!strcmp(argv[i], "--data")) {
            data = true;
        } else if (argv[i][0] == '-' || prog) {
            return usage();
        } else {
            prog = argv[i];
        }
    }
    if (!prog || (!proto && (options || out || vcd)) || (proto && !out))
        return usage();
    if (vcd && strcmp(proto, "etmv1") && strcmp(proto, "etmv2")) {
        fprintf(stderr, "tracebench sim: --vcd: only for --protocol etmv1|etmv2 (a trace port "
                "capture); %s has no port signals\n", proto);
        return 2;
    }
    if (proto) {
        if (!strcmp(proto, "ptm"))
            tb_encoder_opts_init(&eo, TB_PROTO_PTM);
        else if (!strcmp(proto, "etmv3"))
            tb_encoder_opts_init(&eo, TB_PROTO_ETMV3);
        else if (!strcmp(proto, "etmv1"))
            tb_encoder_opts_init(&eo, TB_PROTO_ETMV1);
        else if (!strcmp(proto, "etmv2"))
            tb_encoder_opts_init(&eo, TB_PROTO_ETMV2);
        else
            return usage();
    }
    if (!(img = read_all(prog, &ilen))) {
        fprintf(stderr, "tracebench sim: %s: cannot read: %s\n", prog, strerror(errno));
        return 1;
    }
    if (proto) {
        char list[512];
        tb_config cfg;

        /* Symbols in include=/exclude= come from the ELF's table. */
        if (options && (tb_elf_resolve_ranges(raw ? NULL : img, ilen, options, list,
                                              sizeof list, err, sizeof err) < 0 ||
                        tb_encoder_opts_parse(&eo, list, err, sizeof err) < 0)) {
            fprintf(stderr, "tracebench sim: --options: %s\n", err);
            free(img);
            return 2;
        }
        if (tb_encoder_config_err(&eo, &cfg, err, sizeof err) < 0) {
            fprintf(stderr, "tracebench sim: --options: inconsistent for %s: %s\n", proto,
                    err);
            free(img);
            return 2;
        }
    }
    tb_scenario_init(&sc);
    if (scn && (rc = tb_scenario_load(&sc, scn, err, sizeof err)) < 0) {
        fprintf(stderr, "tracebench sim: %s: %s\n", scn, err);
        free(img);
        return 1;
    }
    if (cpu) {
        char text[64];

        snprintf(text, sizeof text, "[sim]\ncpu = %s\n", cpu);
        if (tb_scenario_parse(&sc, text, strlen(text), err, sizeof err) < 0) {
            fprintf(stderr, "tracebench sim: --cpu: %s\n", err);
            free(img);
            return 2;
        }
    }
    if (has_max)
        sc.max_insns = max;
    else if (!sc.has_max_insns)
        sc.max_insns = TB_CLI_DEFAULT_BUDGET;
    /* A Cortex-M's trace is its ETM-M3/M4's: ETMv3 only. */
    if (proto && (tb_cli_cpu_protocol("sim", sc.cpu, proto) < 0 ||
                  tb_cli_cpu_options("sim", sc.cpu, &eo) < 0)) {
        free(img);
        return 2;
    }
    s = tb_sim_new(sc.cpu);
    if (!s) {
        fprintf(stderr, "tracebench sim: cannot start the emulator\n");
        free(img);
        return 1;
    }
    if (raw) {
        /* Bit 0 of the address picks Thumb, as in an ELF entry point. */
        rc = tb_sim_load_raw(s, img, ilen, raw_addr & ~1u);
        if (rc >= 0 && (raw_addr & 1))
            rc = tb_sim_set_entry(s, raw_addr & ~1u, TB_ISA_THUMB);
    } else {
        rc = tb_sim_load_elf(s, img, ilen);
    }
    if (rc >= 0)
        rc = tb_sim_set_scenario(s, &sc);
    if (rc >= 0 && data)
        rc = tb_sim_set_data(s, true);
    if (rc >= 0 && proto && eo.dual_issue)
        rc = tb_sim_set_dual(s, true); /* --options dual: the cycle model's rule */
    if (rc >= 0 && proto && eo.pc_first)
        rc = tb_sim_set_pcfirst(s, true); /* --options pcfirst: ETMIDR[16] */
    if (rc < 0) {
        fprintf(stderr, "tracebench sim: %s: %s\n", prog,
                tb_sim_errmsg(s)[0] ? tb_sim_errmsg(s) : tb_err_str(rc));
        goto done;
    }
    if (!quiet && !tb_sim_has_exit(s) && strcmp(sc.exit, "none"))
        fprintf(stderr, "tracebench sim: note: %s has no exit symbol '%s': the run ends at "
                "WFI or the budget (%llu)\n", prog, sc.exit,
                (unsigned long long)sc.max_insns);
    if (proto) {
        tb_config cfg;

        tb_encoder_config(&eo, &cfg);
        /* An ETMv1/ETMv2 port capture is never CoreSight-formatted. */
        if (!(snap = tb_encoder_snapshot_open(out, &cfg,
                                              !raw_buffer && !tb_protocol_is_port(cfg.protocol),
                                              err, sizeof err))) {
            fprintf(stderr, "tracebench sim: %s\n", err);
            goto done;
        }
        /* The trace goes to disk as it is made: memory stays flat. */
        o.enc = tb_encoder_new(&eo, tb_encoder_snapshot_sink, snap);
        if (!o.enc) {
            fprintf(stderr, "tracebench sim: cannot start the encoder\n");
            goto done;
        }
    }
    if (truth) {
        o.f = strcmp(truth, "-") ? fopen(truth, "w") : stdout;
        if (!o.f) {
            fprintf(stderr, "tracebench sim: cannot write %s\n", truth);
            goto done;
        }
    }
    tb_cli_progress_init(&pr, quiet);
    o.prog = &pr;
    rc = tb_sim_run(s, on_record, &o, &res);
    tb_cli_progress_clear(&pr);
    if (o.f && o.f != stdout && fclose(o.f))
        o.err = 1;
    o.f = NULL;
    if (o.enc && rc >= 0)
        rc = tb_encoder_finish(o.enc);
    if (rc < 0) {
        int erc = o.enc ? tb_encoder_error(o.enc) : 0;

        fprintf(stderr, "tracebench sim: %s: %s: %s\n", prog,
                tb_err_str(erc ? erc : rc), erc ? "encoder" : tb_sim_errmsg(s));
        goto done;
    }
    if (o.enc) {
        const tb_encoder_stats *st = tb_encoder_get_stats(o.enc);
        tb_snap_region regs[16];
        uint8_t *store = NULL;
        int nr;

        if (raw) {
            /* A raw image: the whole file at its load address. */
            regs[0] = (tb_snap_region){raw_addr & ~1u, img, ilen};
            nr = 1;
        } else {
            nr = tb_encoder_elf_regions(img, ilen, regs, 16, &store);
        }
        rc = nr < 0 ? nr : tb_encoder_snapshot_close(snap, regs, (size_t)nr, err, sizeof err);
        if (nr < 0) {
            snprintf(err, sizeof err, "%s: no loadable segment", prog);
            tb_encoder_snapshot_abort(snap);
        }
        snap = NULL;
        free(store);
        if (rc < 0) {
            fprintf(stderr, "tracebench sim: %s: %s %s\n", out, tb_err_str(rc), err);
            goto done;
        }
        fprintf(stderr, "trace: %llu bytes, %llu packets, %llu of %llu insns traced, "
                "%llu overflows, %.3f bits/insn\n",
                (unsigned long long)st->bytes, (unsigned long long)st->packets,
                (unsigned long long)st->traced, (unsigned long long)st->insns,
                (unsigned long long)st->overflows,
                st->insns ? 8.0 * (double)st->bytes / (double)st->insns : 0.0);
        if (vcd) {
            char cap[4096];

            snprintf(cap, sizeof cap, "%s/trace_buffer.bin", out);
            if (tb_etmv1_vcd_file(cap, vcd, err, sizeof err) < 0) {
                fprintf(stderr, "tracebench sim: --vcd: %s\n", err);
                goto done;
            }
        }
    }
    fprintf(stderr, "stop=%s at 0x%08x insns=%llu cycles=%llu exceptions=%llu\n",
            tb_sim_stop_name(res.stop), res.stop_addr, (unsigned long long)res.insns,
            (unsigned long long)res.cycles, (unsigned long long)res.exceptions);
    stop_note(prog, &res, sc.max_insns);
    if (o.err) {
        fprintf(stderr, "tracebench sim: error writing the truth\n");
        goto done;
    }
    status = 0;
done:
    if (o.f && o.f != stdout)
        fclose(o.f);
    tb_encoder_snapshot_abort(snap);
    tb_encoder_free(o.enc);
    tb_sim_free(s);
    free(img);
    return status;
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
