/* tracebench sim PROGRAM [--scenario S.ini] [--truth FILE] [--format text|json]
 *                        [--cpu a15|a9|a7] [--raw ADDR] [--max N|unlimited] [--quiet]
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
#include <signal.h>
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
    int cut;             /* the signal that cut the run short, or 0 */
};

/* SIGINT / SIGTERM during the run: the run stops at the next instruction
 * and what was traced becomes a whole snapshot, marked as cut short
 * (a second signal kills at once: SA_RESETHAND). */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}

static void catch_signals(bool on, struct sigaction old[2])
{
    static const int sigs[2] = {SIGINT, SIGTERM};

    for (int k = 0; k < 2; k++) {
        if (on) {
            struct sigaction sa;

            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_signal;
            sa.sa_flags = (int)SA_RESETHAND;
            sigemptyset(&sa.sa_mask);
            sigaction(sigs[k], &sa, &old[k]);
        } else {
            sigaction(sigs[k], &old[k], NULL);
        }
    }
}

/* Marks DIR/snapshot.ini as cut short: its [snapshot] section gets a
 * description (a key of the snapshot format that readers show and
 * otherwise pass over).  0, or -1 when it cannot be rewritten. */
static int mark_cut_short(const char *dir, const char *why)
{
    char path[4096], tmp[4200], line[1024];
    FILE *in, *out;
    bool put = false;
    int rc = 0;

    snprintf(path, sizeof path, "%s/snapshot.ini", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    in = fopen(path, "r");
    out = in ? fopen(tmp, "w") : NULL;
    if (!in || !out) {
        if (in)
            fclose(in);
        return -1;
    }
    while (fgets(line, sizeof line, in)) {
        fputs(line, out);
        if (!put && !strncmp(line, "version=", 8)) {
            fprintf(out, "description=cut short: %s\n", why);
            put = true;
        }
    }
    fclose(in);
    if (fclose(out) != 0 || !put || rename(tmp, path) != 0) {
        remove(tmp);
        rc = -1;
    }
    return rc;
}

static int on_record(void *ctx, const tb_exec_record *r)
{
    struct sim_out *o = ctx;
    char line[512];

    /* Stop between instructions (never between one and its data or the
     * exception that cancels it): the trace up to here is whole. */
    if (interrupted && r->kind == TB_REC_INSN) {
        o->cut = interrupted;
        return 1;
    }
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
    fprintf(f,
            "usage: tracebench sim PROGRAM [--scenario S.ini] [--truth FILE] [--format text|json]\n"
            "           [--cpu a15|a9|a7] [--raw ADDR] [--max N|unlimited] [--data] [--quiet]\n"
            "       tracebench sim PROGRAM ... --protocol ptm|etmv3|etmv1|etmv2 [--options LIST]\n"
            "           --out DIR [--buffer coresight|raw] [--vcd FILE]\n"
            "\n"
            "  PROGRAM          an ARM ELF file (32-bit, little-endian), or a raw image (--raw)\n"
            "  --scenario S.ini interrupts, faults, budget, exit symbol (vectors/programs/README.md)\n"
            "  --truth FILE     the ground truth, one record a line (- for stdout); not\n"
            "                   written otherwise (about 70 bytes an instruction)\n"
            "  --format F       the truth as text (default) or json\n"
            "  --cpu C          the core: a15 (default), a9 or a7 (overrides the scenario's)\n"
            "  --raw ADDR       PROGRAM is a raw image loaded at ADDR; bit 0 set: start in Thumb\n"
            "  --max N          the budget, N instructions and N exceptions (default: the\n"
            "                   scenario's max_insns, else %u); 0 or unlimited: none\n"
            "  --data           a data record (D) per memory transfer, in the truth and to the\n"
            "                   encoder (data trace: --options data=...)\n"
            "  --quiet          no progress line (shown only on a terminal)\n"
            "  --protocol P     also encode the run as ptm, etmv3, etmv1 or etmv2 trace ...\n"
            "  --options LIST   ... with these encoder options (README.md: ca, ts, bb, rs, alt,\n"
            "                   vmid, ctxid=N, v=MINOR, id=ID, sync=BYTES, tsper=N, trigger=SEQ,\n"
            "                   fifo=DEPTH[:BYTES/CYCLES], include=/exclude=LO-HI|SYMBOL|SYM-SYM,\n"
            "                   data=, dataview=, ooo=, suppress=, ignore=, ccpkt, dual, pcfirst,\n"
            "                   port=, vectors=, idle) ...\n"
            "  --out DIR        ... into the snapshot DIR, streamed as the trace is made\n"
            "  --buffer B       the snapshot's buffer: coresight frames (default) or raw\n"
            "  --vcd FILE       (etmv1, etmv2) the port capture also as a VCD for a waveform viewer\n"
            "\n"
            "Ctrl-C (SIGINT) or SIGTERM stops the run at the next instruction: the snapshot\n"
            "is finished with what was traced, marked as cut short in snapshot.ini.\n"
            "exit: 0 done, 2 usage, 4 error (the program would not load or run, I/O),\n"
            "      130 / 143 interrupted by SIGINT / SIGTERM (the snapshot is whole)\n",
            TB_CLI_DEFAULT_BUDGET);
    return rc;
}

/* The options that take a value. */
static bool takes_value(const char *a)
{
    static const char *const names[] = {"--scenario", "--truth", "--format", "--protocol",
                                        "--options",  "--out",   "--vcd",    "--buffer",
                                        "--cpu",      "--raw",   "--max"};

    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (!strcmp(a, names[k]))
            return true;
    return false;
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
    struct sigaction old_sig[2];
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
    int rc, status = TB_EXIT_ERROR;

    if (tb_cli_wants_help(argc, argv))
        return usage_to(stdout, 0);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end;

        if (!strcmp(a, "--quiet")) {
            quiet = true;
            continue;
        }
        if (!strcmp(a, "--data")) {
            data = true;
            continue;
        }
        if (a[0] != '-') {
            if (prog)
                return tb_cli_usage_error("sim", "one PROGRAM only, not '%s' and '%s'", prog, a);
            prog = a;
            continue;
        }
        if (!takes_value(a))
            return tb_cli_usage_error("sim", "unknown option '%s'", a);
        if (!v)
            return tb_cli_usage_error("sim", "%s needs a value", a);
        i++;
        if (!strcmp(a, "--scenario")) {
            scn = v;
        } else if (!strcmp(a, "--truth")) {
            truth = v;
        } else if (!strcmp(a, "--format")) {
            if (!strcmp(v, "json"))
                o.json = true;
            else if (strcmp(v, "text"))
                return tb_cli_usage_error("sim", "--format %s: use text or json", v);
        } else if (!strcmp(a, "--protocol")) {
            proto = v;
            if (!tb_cli_protocol(v))
                return tb_cli_usage_error("sim", "--protocol %s: use ptm, etmv3, etmv1 or "
                                          "etmv2", v);
        } else if (!strcmp(a, "--options")) {
            options = v;
            if (tb_cli_options_empty_item(v))
                return tb_cli_usage_error("sim", "--options %s: an empty item (two commas in "
                                          "a row, or one at an end)", v);
        } else if (!strcmp(a, "--out")) {
            out = v;
        } else if (!strcmp(a, "--vcd")) {
            vcd = v;
        } else if (!strcmp(a, "--buffer")) {
            if (!strcmp(v, "raw"))
                raw_buffer = true;
            else if (strcmp(v, "coresight"))
                return tb_cli_usage_error("sim", "--buffer %s: use coresight or raw", v);
        } else if (!strcmp(a, "--cpu")) {
            cpu = v;
        } else if (!strcmp(a, "--raw")) {
            unsigned long long x;

            errno = 0;
            x = *v >= '0' && *v <= '9' ? strtoull(v, &end, 0) : (end = (char *)v, 0);
            if (*end || !*v || errno || x > 0xFFFFFFFFull)
                return tb_cli_usage_error("sim", "--raw %s: give the load address, a 32-bit "
                                          "number (0x... or decimal; bit 0 set: Thumb)", v);
            raw = true;
            raw_addr = (uint32_t)x;
        } else if (!strcmp(a, "--max")) {
            if (tb_cli_parse_budget(v, &max) < 0)
                return tb_cli_usage_error("sim", "--max %s: give a number of instructions "
                                          "(decimal or 0x...; 0: none) or unlimited", v);
            has_max = true;
        }
    }
    if (!prog)
        return tb_cli_usage_error("sim", "no PROGRAM: give an ELF file (or a raw image with "
                                  "--raw ADDR)");
    if (!proto && (options || out || vcd))
        return tb_cli_usage_error("sim", "%s needs --protocol ptm|etmv3|etmv1|etmv2 (the "
                                  "trace to make)", options ? "--options" : out ? "--out"
                                                                                 : "--vcd");
    if (proto && !out)
        return tb_cli_usage_error("sim", "--protocol needs --out DIR (where the snapshot "
                                  "goes)");
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
        else
            tb_encoder_opts_init(&eo, TB_PROTO_ETMV2);
    }
    if (!(img = read_all(prog, &ilen))) {
        fprintf(stderr, "tracebench sim: %s: cannot read: %s\n", prog, strerror(errno));
        return TB_EXIT_ERROR;
    }
    if (!raw) {
        char why[160];
        const char *p = tb_cli_elf_problem(img, ilen, why, sizeof why);

        if (p) {
            fprintf(stderr, "tracebench sim: %s: %s%s\n", prog, p,
                    !strcmp(p, "not an ELF file") ? "; a raw image? give --raw ADDR, the "
                                                     "address it loads at"
                                                   : "");
            free(img);
            return TB_EXIT_ERROR;
        }
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
        return TB_EXIT_ERROR;
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
    s = tb_sim_new(sc.cpu);
    if (!s) {
        fprintf(stderr, "tracebench sim: cannot start the emulator\n");
        free(img);
        return TB_EXIT_ERROR;
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
    interrupted = 0;
    catch_signals(true, old_sig);
    rc = tb_sim_run(s, on_record, &o, &res);
    catch_signals(false, old_sig);
    tb_cli_progress_clear(&pr);
    if (o.cut && rc == TB_ERR_STOPPED) {
        /* Cut short by a signal: a clean stop, not an error. */
        rc = 0;
        memset(&res, 0, sizeof res);
        res.insns = o.insns;
        res.exceptions = o.exceptions;
    }
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
    if (o.cut) {
        char why[160];

        snprintf(why, sizeof why, "the run was interrupted (%s) after %llu instructions",
                 o.cut == SIGINT ? "SIGINT" : "SIGTERM", (unsigned long long)o.insns);
        if (out && mark_cut_short(out, why) < 0) {
            fprintf(stderr, "tracebench sim: %s/snapshot.ini: cannot mark it as cut short\n",
                    out);
            goto done;
        }
        fprintf(stderr, "stop=interrupted insns=%llu exceptions=%llu\n",
                (unsigned long long)o.insns, (unsigned long long)o.exceptions);
        fprintf(stderr, "tracebench sim: %s: %s%s%s\n", prog, why,
                out ? "; the snapshot holds what was traced, marked as cut short in " : "",
                out ? "snapshot.ini (description=)" : "");
        if (o.err)
            fprintf(stderr, "tracebench sim: error writing the truth\n");
        status = o.err ? TB_EXIT_ERROR : 128 + o.cut;
        goto done;
    }
    fprintf(stderr, "stop=%s at 0x%08x insns=%llu cycles=%llu exceptions=%llu\n",
            tb_sim_stop_name(res.stop), res.stop_addr, (unsigned long long)res.insns,
            (unsigned long long)res.cycles, (unsigned long long)res.exceptions);
    stop_note(prog, &res, sc.max_insns);
    if (o.err) {
        fprintf(stderr, "tracebench sim: error writing the truth\n");
        goto done;
    }
    status = TB_EXIT_OK;
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
    return TB_EXIT_ERROR;
}

#endif
