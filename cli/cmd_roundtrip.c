/* tracebench roundtrip PROGRAM [--scenario S.ini] [--protocol ptm|etmv3|etmv1|etmv2]
 *                      [--options LIST] [--buffer coresight|raw] [--max N|unlimited]
 *                      [--chunk N] [--out DIR [--vcd FILE]] [--truth FILE] [--quiet]
 *                      [--fault addr-bit:N:BIT|drop-atom:N]
 *                      [--code-coverage FILE [--coverage-format F]]
 *                      [--profile FILE [--profile-format F]]
 * tracebench roundtrip --suite [--programs DIR] [--vectors DIR] [--max N]
 *                      [--protocol P] [--only TEXT] [--reports N] [--quiet]
 *
 * One program: sim -> encoder -> decoder -> comparator, for one protocol
 * or both; the verdict, or the comparator's report of the first
 * divergence.  --suite: the whole matrix (every program with a scenario x
 * protocol x option set x scenario variant) with a progress line and a
 * summary table.  --code-coverage, --profile: the reports of `coverage`
 * and `profile` (analyze.h) from the run's own decode.  Exit codes: RT_EXIT_* below (README.md, "Exit codes"). */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* One table for single runs and the suite, the codes of every command
 * (cli.h).  A run that proved nothing gets its own code so that no
 * script takes it for a pass, a broken setup its own so that it is not
 * taken for a decoder bug, and with --strict a run the budget cut short
 * its own so that CI does not take a partial check for a whole one. */
enum {
    RT_EXIT_MATCH = TB_EXIT_OK,         /* every run matched over >= 1 checked
                                         * instruction */
    RT_EXIT_MISMATCH = TB_EXIT_DIFF,    /* a divergence (with --fault: the fault
                                         * was caught) */
    RT_EXIT_USAGE = TB_EXIT_USAGE,      /* bad command line or option list */
    RT_EXIT_NOTHING = TB_EXIT_NOTHING,  /* a run checked no instruction, or its
                                         * --fault was not applied or not caught;
                                         * the suite ran no case */
    RT_EXIT_ERROR = TB_EXIT_ERROR,      /* the program would not load or run, I/O,
                                         * pipeline */
    RT_EXIT_CUT = TB_EXIT_CUT,          /* --strict: a budget stopped a run that
                                         * otherwise matched */
};

#ifdef TB_HAVE_ROUNDTRIP

#include <sys/stat.h>

#include "analyze.h"
#include "tracebench/etmv1.h"
#include "tracebench/gen.h"
#include "tracebench/roundtrip.h"

#ifndef TB_ARM_CC_DEFAULT
#define TB_ARM_CC_DEFAULT "arm-none-eabi-gcc"
#endif

static int usage_to(FILE *f, int rc)
{
    fprintf(f,
            "usage: tracebench roundtrip PROGRAM [--scenario S.ini] [--protocol ptm|etmv3|etmv1|etmv2]\n"
            "           [--cpu C] [--options LIST] [--buffer coresight|raw] [--max N|unlimited]\n"
            "           [--chunk N] [--out DIR [--vcd FILE]] [--truth FILE] [--fault F] [--strict]\n"
            "           [--code-coverage FILE [--coverage-format F]]\n"
            "           [--profile FILE [--profile-format F]] [--quiet]\n"
            "       tracebench roundtrip --suite [--programs DIR] [--vectors DIR] [--max N]\n"
            "           [--protocol ptm|etmv3|etmv1|etmv2] [--only TEXT] [--reports N] [--strict]\n"
            "           [--quiet] [--seeds SPEC [--gen-only] [--gen-dir DIR] [--known FILE] [--cc PATH]]\n"
            "\n"
            "  PROGRAM          an ARM ELF file (32-bit, little-endian)\n"
            "  --scenario S.ini interrupts, faults, budget, exit symbol (vectors/programs/README.md)\n"
            "  --protocol P     one protocol (default: ptm and etmv3; a Cortex-M: etmv3 alone)\n"
            "  --cpu C          the core: a15, a9, a7, m3 or m4 (cortex-m3 ...; overrides the\n"
            "                   scenario's); a Cortex-M is traced by its ETM-M3/M4, ETMv3 only\n"
            "                   (docs/cortex-m.md)\n"
            "  --options LIST   encoder options (README.md; include=/exclude= take symbols),\n"
            "                   plus `filter`: an include range over the middle half of the program,\n"
            "                   and `tpiu`: the buffer as a TPIU capture, FSYNCs and HSYNCs where\n"
            "                   the port idled (format tpiu_coresight, docs/vectors.md)\n"
            "  --buffer B       the snapshot's buffer: coresight frames (default) or raw\n"
            "  --max N          the budget, N instructions and N exceptions (default: the\n"
            "                   scenario's max_insns, else %u); 0 or unlimited: none.  A run\n"
            "                   the budget cut says CUT under its verdict.  --suite: caps each\n"
            "                   scenario's budget (default 200000)\n"
            "  --chunk N        feed the decoder N bytes at a time\n"
            "  --out DIR        write the snapshot there (streamed; needs --protocol)\n"
            "  --vcd FILE       (etmv1, etmv2, with --out) the port capture also as a VCD\n"
            "  --truth FILE     write the ground truth there\n"
            "  --fault F        corrupt one packet: addr-bit:N:BIT or drop-atom:N\n"
            "  --strict         a run the budget cut short fails (exit 6), for CI\n"
            "  --code-coverage FILE  (needs --protocol) the code coverage of the round trip's\n"
            "                   own decode (no second decode) with PROGRAM's symbols and DWARF\n"
            "                   lines: the file `tracebench coverage` writes for the run's\n"
            "                   snapshot and PROGRAM; --coverage-format lcov (default),\n"
            "                   cobertura, json or text (the formats of `coverage`)\n"
            "  --profile FILE   (needs --protocol) the profile of the same decode, as\n"
            "                   `tracebench profile` writes it; --profile-format callgrind\n"
            "                   (default), folded or text.  Both are of the decode the\n"
            "                   comparator checked: worth as much as its verdict\n"
            "  --quiet          no progress line (shown only on a terminal), no notes\n"
            "  --suite          the whole matrix: programs from --programs DIR (default\n"
            "                   build/vectors/programs), scenarios from --vectors DIR\n"
            "                   (default vectors: programs/NAME.ini, scenarios/NAME.VARIANT.ini);\n"
            "                   --only TEXT: the cases whose name holds TEXT; --reports N:\n"
            "                   divergence reports printed in full (default 3)\n"
            "  --seeds SPEC     (--suite) also generated programs (tracebench gen; docs/gen.md),\n"
            "                   SPEC = N (seeds 1..N), A-B or a comma list; each seed's program\n"
            "                   runs under every protocol with one option set of its matrix\n"
            "                   (every set drawn by 2n-1 consecutive seeds), and its Cortex-M\n"
            "                   program (gen's isa m) under ETMv3 with one v7-M set; a failure\n"
            "                   prints the commands that reproduce it\n"
            "  --gen-only       (--seeds) no vector programs\n"
            "  --gen-dir DIR    (--seeds) keep the programs there (default: a temporary\n"
            "                   directory, removed)\n"
            "  --known FILE     (--seeds) the kept-seed table (roundtrip/gen_seeds.tsv): its\n"
            "                   KNOWN rows may fail (counted apart); one that matches, or no\n"
            "                   longer draws the same program and options, fails the suite\n"
            "  --cc PATH        (--seeds) the ARM compiler (default arm-none-eabi-gcc, or\n"
            "                   TB_ARM_CC)\n"
            "\n"
            "exit: 0 match, 1 mismatch (with --fault: the fault was caught; with --known: a\n"
            "        KNOWN row that matches), 2 usage,\n"
            "      3 nothing checked (0 instructions compared, or the fault was not\n"
            "        applied or not caught; --suite: any such case, or no case ran),\n"
            "      4 error (the program would not load or run, I/O), 6 (--strict) a run\n"
            "        the budget cut short; with both protocols or --suite: 1 if any\n"
            "      mismatch, else 4 if any error, else 3 if any case checked nothing,\n"
            "      else 6 if any was cut (--strict), else 0\n", TB_CLI_DEFAULT_BUDGET);
    return rc;
}

static double bits(uint64_t bytes, uint64_t insns)
{
    return insns ? 8.0 * (double)bytes / (double)insns : 0.0;
}

/* A decimal that fits tb_rt_fault.nth: sscanf's %u would wrap a huge N
 * (2^32 + 1 became 1) and fault an early packet instead of none. */
static bool parse_u32(const char *s, char **end, uint32_t *v)
{
    unsigned long long x;

    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    x = strtoull(s, end, 10);
    if (errno || x > UINT32_MAX)
        return false;
    *v = (uint32_t)x;
    return true;
}

static int parse_fault(const char *s, tb_rt_fault *f)
{
    uint32_t n, b;
    char *end;

    if (!strncmp(s, "addr-bit:", 9) && parse_u32(s + 9, &end, &n) && *end == ':' &&
        parse_u32(end + 1, &end, &b) && !*end && b < 32) {
        *f = (tb_rt_fault){TB_RT_FAULT_ADDR_BIT, n, (uint8_t)b};
        return 0;
    }
    if (!strncmp(s, "drop-atom:", 10) && parse_u32(s + 10, &end, &n) && !*end) {
        *f = (tb_rt_fault){TB_RT_FAULT_DROP_ATOM, n, 0};
        return 0;
    }
    return -1;
}

static void fault_text(const tb_rt_fault *f, char *buf, size_t len)
{
    if (f->kind == TB_RT_FAULT_ADDR_BIT)
        snprintf(buf, len, "addr-bit:%u:%u", (unsigned)f->nth, (unsigned)f->bit);
    else
        snprintf(buf, len, "drop-atom:%u", (unsigned)f->nth);
}

/* Why a run compared no instruction, and what to do about it: one line
 * after "NOTHING CHECKED: " (the counts say which stage lost them). */
static void why_nothing(const tb_rt_case *c, const tb_rt_result *res, const char *opts,
                        FILE *f)
{
    const tb_encoder_opts *o = &c->opts;
    char ranges[512] = "";
    size_t used = 0;

    for (unsigned i = 0; i < o->n_ranges && used < sizeof ranges; i++)
        used += (size_t)snprintf(ranges + used, sizeof ranges - used, "%s%s 0x%x-0x%x",
                                 i ? ", " : "", o->ranges[i].exclude ? "exclude" : "include",
                                 o->ranges[i].lo, o->ranges[i].hi);
    fprintf(f, "0 of %llu instructions were checked: ", (unsigned long long)res->sim.insns);
    if (!res->sim.insns)
        fprintf(f, "the program ran no instruction (stopped: %s at 0x%08x); check its entry "
                   "point, the scenario and --max\n",
                tb_sim_stop_name(res->sim.stop), res->sim.stop_addr);
    else if (!res->enc.traced && o->n_ranges)
        fprintf(f, "none was traced: the ViewInst filter (%s%s) holds no executed "
                   "instruction; give a range over code that runs (`tracebench sim PROGRAM "
                   "--truth FILE` lists the executed addresses)\n",
                ranges, opts && strstr(opts, "filter") ? "; `filter` is the middle half of "
                                                         "the first loadable segment" : "");
    else if (!res->enc.traced)
        fprintf(f, "the encoder traced none of them\n");
    else if (res->enc.overflows)
        fprintf(f, "all %llu traced instructions were lost to %llu FIFO overflow(s); give the "
                   "FIFO more depth or drain (fifo=DEPTH:BYTES/CYCLES)\n",
                (unsigned long long)res->enc.traced, (unsigned long long)res->enc.overflows);
    else
        fprintf(f, "the decoder showed none of the %llu traced instructions\n",
                (unsigned long long)res->enc.traced);
}

/* The line that says what a fault did, when that is not a plain catch. */
static void fault_line(const tb_rt_fault *fault, const tb_rt_result *res, FILE *f)
{
    bool atom = fault->kind == TB_RT_FAULT_DROP_ATOM;
    const char *kind = atom ? "atom packet" : "branch address packet";
    const char *which = atom ? " with an E or N atom" : "";
    char ft[64];

    fault_text(fault, ft, sizeof ft);
    if (!res->fault_applied) {
        fprintf(f, "FAULT NOT APPLIED: %s: ", ft);
        if (res->fault_packets)
            fprintf(f, "the trace has only %llu %s%s%s, so nothing was changed; pick N "
                       "from 0 to %llu",
                    (unsigned long long)res->fault_packets, kind,
                    res->fault_packets == 1 ? "" : "s", which,
                    (unsigned long long)res->fault_packets - 1);
        else
            fprintf(f, "the trace has no %s%s, so nothing was changed; pick the other fault "
                       "kind or a program that makes one", kind, which);
        fprintf(f, "%s\n", res->verdict == TB_RT_FAULT_NOT_APPLIED
                                ? " (the unfaulted decode matched, which shows nothing about "
                                  "the comparator)"
                            : res->verdict == TB_RT_MISMATCH
                                ? " (so the divergence below is a real one, in the unfaulted "
                                  "trace)"
                                : "");
    } else if (res->verdict == TB_RT_FAULT_UNDETECTED) {
        fprintf(f, "FAULT UNDETECTED: %s changed %s %u, yet the decode still matches the "
                   "truth: either the bit is one the decoder ignores (address bit 0 in Thumb "
                   "state, bits 1:0 in ARM state; pick a higher BIT) or the comparator missed "
                   "the change\n",
                ft, kind, (unsigned)fault->nth);
    }
}

/* The worse outcome of two runs: a mismatch over an error over a run
 * that proved nothing over one the budget cut (--strict) over a match. */
static int worse(int a, int b)
{
    return tb_cli_exit_worse(a, b);
}

/* The progress line of a single run (tb_rt_case.on_progress). */
typedef struct run_progress {
    tb_cli_progress *p;
    const char *prefix;
} run_progress;

static void on_progress(void *ctx, const tb_rt_progress *rp)
{
    run_progress *r = ctx;

    if (tb_cli_progress_due(r->p))
        tb_cli_progress_run(r->p, r->prefix, rp->insns, rp->exceptions, rp->trace_bytes);
}

/* Under the verdict: why the run stopped, so that a run the budget cut
 * is never taken for a whole one. */
static void stop_line(const tb_rt_result *res, FILE *f)
{
    const tb_sim_result *sr = &res->sim;

    switch (sr->stop) {
    case TB_SIM_STOP_EXIT:
        fprintf(f, "       stopped: the program reached its exit (0x%08x)\n", sr->stop_addr);
        break;
    case TB_SIM_STOP_WFI:
        fprintf(f, "       stopped: %s (0x%08x)\n", tb_sim_stop_text(sr->stop), sr->stop_addr);
        break;
    case TB_SIM_STOP_BUDGET: {
        bool exc = sr->budget_exceptions, one = res->budget == 1;

        fprintf(f, "       CUT: stopped after the budget of %llu %s at 0x%08x; the program "
                "did not finish, and only that much was checked; raise it with --max\n",
                (unsigned long long)res->budget,
                exc ? (one ? "exception" : "exceptions") : (one ? "instruction" : "instructions"),
                sr->stop_addr);
        break;
    }
    case TB_SIM_STOP_FAULT:
        fprintf(f, "       stopped at 0x%08x: %s\n", sr->stop_addr, tb_sim_stop_text(sr->stop));
        break;
    case TB_SIM_STOP_NONE:
        break;
    }
}

/* --code-coverage, --profile: the accumulators the run's decode feeds
 * (tb_rt_case.decode_*), with the program's ELF for symbols and lines. */
typedef struct rt_analysis {
    const char *cov_path, *prof_path;
    int cov_format, prof_format;
    tb_codecov *cc;
    tb_profile *p;
    tb_elfinfo *elf;
} rt_analysis;

static int an_begin(void *ctx, tb_protocol proto, const tb_memimage *mem)
{
    rt_analysis *a = ctx;
    int r = a->cc ? tb_codecov_begin(a->cc, proto, mem) : 0;

    return r < 0 ? r : a->p ? tb_profile_begin(a->p, proto, mem) : 0;
}

static int an_element(void *ctx, const tb_element *el)
{
    rt_analysis *a = ctx;
    int r = a->cc ? tb_codecov_element(a->cc, el) : 0;

    return r < 0 ? r : a->p ? tb_profile_element(a->p, el) : 0;
}

static int an_end(void *ctx)
{
    rt_analysis *a = ctx;
    int r = a->cc ? tb_codecov_end(a->cc) : 0;

    return r < 0 ? r : a->p ? tb_profile_end(a->p) : 0;
}

static void an_free(rt_analysis *a)
{
    tb_codecov_free(a->cc);
    tb_profile_free(a->p);
    tb_elfinfo_free(a->elf);
    a->cc = NULL;
    a->p = NULL;
    a->elf = NULL;
}

/* The ELF and the accumulators (again for each run).  0 or an exit code
 * after saying why. */
static int an_setup(rt_analysis *a, const char *prog, bool quiet)
{
    tb_cli_analysis_args args = {.elf_path = {prog}, .nelf = 1, .quiet = quiet,
                                 .elf_flag = "program"};
    tb_elfinfo *elf[1];
    int r;

    an_free(a);
    r = tb_cli_analysis_elfs("roundtrip", &args, elf,
                             a->cov_path && tb_cli_coverage_needs_dwarf(a->cov_format));
    if (r)
        return r;
    a->elf = elf[0];
    if (a->cov_path) {
        if (!(a->cc = tb_codecov_new()))
            goto nomem;
        tb_codecov_set_entry(a->cc, a->elf->entry);
    }
    if (a->prof_path) {
        if (!(a->p = tb_profile_new()))
            goto nomem;
        r = tb_cli_profile_add_funcs("roundtrip", a->p, &a->elf, 1);
        if (r) {
            an_free(a);
            return r;
        }
    }
    return 0;
nomem:
    an_free(a);
    fprintf(stderr, "tracebench roundtrip: out of memory\n");
    return RT_EXIT_ERROR;
}

/* After a run that completed: the files.  0 or an exit code. */
static int an_write(rt_analysis *a, bool quiet)
{
    int st = 0;

    if (a->cc)
        st = tb_cli_coverage_write("roundtrip", a->cov_path, a->cov_format, &a->elf, 1, a->cc,
                                   1, quiet);
    if (a->p)
        st = worse(st, tb_cli_profile_write("roundtrip", a->prof_path, a->prof_format, &a->elf,
                                            1, a->p, 1, quiet));
    return st;
}

static int one(const char *prog, const char *scn, const char *proto, const char *opts,
               bool raw, bool has_max, uint64_t max, size_t chunk, const char *out,
               const char *vcd, const char *truth, bool quiet, const tb_rt_fault *fault,
               bool strict, bool has_cpu, tb_sim_cpu cpu, rt_analysis *an)
{
    /* ETMv1/ETMv2 only when asked for by name (--protocol etmv1|etmv2). */
    static const tb_protocol both[] = {TB_PROTO_PTM, TB_PROTO_ETMV3, TB_PROTO_ETMV1,
                                       TB_PROTO_ETMV2};
    int status = RT_EXIT_MATCH;
    tb_cli_progress pr;

    /* A Cortex-M (--cpu, or the scenario's): ETMv3 alone. */
    cpu = tb_cli_cpu_of(scn, has_cpu, cpu);
    if (tb_cli_cpu_protocol("roundtrip", cpu, proto) < 0)
        return RT_EXIT_USAGE;
    if (tb_sim_cpu_is_m(cpu))
        proto = "etmv3";
    tb_cli_progress_init(&pr, quiet);

    for (size_t i = 0; i < sizeof both / sizeof both[0]; i++) {
        tb_protocol p = both[i];
        tb_rt_case c;
        tb_rt_result res;
        char err[512], name[256];
        int rc;

        if (proto ? strcmp(proto, tb_protocol_name(p)) != 0 : tb_protocol_is_port(p))
            continue;
        tb_rt_case_init(&c, p);
        snprintf(name, sizeof name, "%s %s%s%s", prog, tb_protocol_name(p), opts ? " " : "",
                 opts ? opts : "");
        c.name = name;
        c.program = prog;
        c.scenario = scn;
        c.has_budget = has_max;
        c.budget = max;
        c.default_budget = TB_CLI_DEFAULT_BUDGET;
        c.formatted = !raw && !tb_protocol_is_port(p); /* a port capture: never */
        c.chunk = chunk;
        /* Two threads where there are two CPUs: the decode side on the
         * second (tb_rt_case.threads = 2, the same results) took 20-45%
         * off the wall time of long runs (bench_roundtrip, bench/README.md
         * "Issue 36 item 2").  One CPU: one thread. */
        c.threads = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1;
        c.out_dir = out;
        c.no_truth = true; /* the truth only when asked: --truth FILE */
        c.truth_file = truth;
        c.fault = *fault;
        c.has_cpu = has_cpu;
        c.cpu = cpu;
        if (an->cov_path || an->prof_path) {
            int r = an_setup(an, prog, quiet);

            if (r)
                return r;
            c.decode_begin = an_begin;
            c.decode_element = an_element;
            c.decode_end = an_end;
            c.decode_ctx = an;
        }
        if (opts && tb_rt_case_options(&c, opts, err, sizeof err) < 0) {
            /* `filter` reads the program: a missing one is an error, not usage. */
            bool unreadable = access(prog, R_OK) != 0;

            fprintf(stderr, "tracebench roundtrip: --options: %s\n", err);
            return unreadable ? RT_EXIT_ERROR : RT_EXIT_USAGE;
        }
        {
            tb_config cfg;

            /* An option the protocol cannot have is the command line's
             * fault (usage), named, not a pipeline error; so is one a
             * Cortex-M's ETM has not. */
            if (tb_cli_cpu_options("roundtrip", cpu, &c.opts) < 0)
                return RT_EXIT_USAGE;
            if (tb_encoder_config_err(&c.opts, &cfg, err, sizeof err) < 0) {
                fprintf(stderr, "tracebench roundtrip: --options: inconsistent for %s: %s\n",
                        tb_protocol_name(p), err);
                return RT_EXIT_USAGE;
            }
        }
        {
            char prefix[64];
            run_progress rp = {&pr, prefix};

            snprintf(prefix, sizeof prefix, "roundtrip %s:", tb_protocol_name(p));
            c.on_progress = on_progress;
            c.progress_ctx = &rp;
            tb_cli_progress_restart(&pr);
            rc = tb_rt_run(&c, &res, err, sizeof err);
            tb_cli_progress_clear(&pr);
        }
        if (rc < 0) {
            fprintf(stderr, "tracebench roundtrip: %s: %s: %s\n", tb_protocol_name(p),
                    tb_err_str(rc), err);
            status = worse(status, RT_EXIT_ERROR);
            continue;
        }
        if (an->cov_path || an->prof_path)
            status = worse(status, an_write(an, quiet));
        if (vcd) {
            /* The snapshot is complete: its capture, streamed into the VCD. */
            char cap[4096];

            snprintf(cap, sizeof cap, "%s/trace_buffer.bin", out);
            if (tb_etmv1_vcd_file(cap, vcd, err, sizeof err) < 0) {
                fprintf(stderr, "tracebench roundtrip: --vcd: %s\n", err);
                status = worse(status, RT_EXIT_ERROR);
            }
        }
        printf("%-6s %s: %llu instructions run, %llu traced, %llu checked, %llu exceptions, "
               "%llu bytes of trace, %.3f bits/insn\n",
               tb_protocol_name(p), tb_rt_verdict_name(res.verdict),
               (unsigned long long)res.sim.insns, (unsigned long long)res.enc.traced,
               (unsigned long long)res.cmp.checked, (unsigned long long)res.cmp.exceptions,
               (unsigned long long)res.enc.bytes, bits(res.enc.bytes, res.sim.insns));
        printf("       also checked: %llu context changes, %llu timestamps, %llu cycle totals, "
               "%llu data transfers; %llu instructions in gaps, %llu cancelled, "
               "%llu overflows\n",
               (unsigned long long)res.cmp.contexts, (unsigned long long)res.cmp.timestamps,
               (unsigned long long)res.cmp.cycle_checks, (unsigned long long)res.cmp.data,
               (unsigned long long)res.cmp.untraced, (unsigned long long)res.cmp.cancelled,
               (unsigned long long)res.enc.overflows);
        stop_line(&res, stdout);
        switch (res.verdict) {
        case TB_RT_MATCH:
            if (strict && res.sim.stop == TB_SIM_STOP_BUDGET) {
                printf("       --strict: a run the budget cut short is a failure (exit %d)\n",
                       RT_EXIT_CUT);
                status = worse(status, RT_EXIT_CUT);
            }
            break;
        case TB_RT_MISMATCH:
            if (fault->kind != TB_RT_FAULT_NONE) {
                char ft[64];

                fault_text(fault, ft, sizeof ft);
                if (res.fault_applied)
                    printf("       the fault %s was applied and caught:\n", ft);
                else
                    fault_line(fault, &res, stdout);
            }
            printf("%s", res.report);
            status = worse(status, RT_EXIT_MISMATCH);
            break;
        case TB_RT_NOTHING_CHECKED:
            printf("NOTHING CHECKED: ");
            why_nothing(&c, &res, opts, stdout);
            if (fault->kind != TB_RT_FAULT_NONE && !res.fault_applied)
                fault_line(fault, &res, stdout);
            status = worse(status, RT_EXIT_NOTHING);
            break;
        case TB_RT_FAULT_NOT_APPLIED:
        case TB_RT_FAULT_UNDETECTED:
            fault_line(fault, &res, stdout);
            status = worse(status, RT_EXIT_NOTHING);
            break;
        }
    }
    return status;
}

/* ---- the suite ---- */

typedef struct scn_entry {
    char name[64];           /* "" for the program's own, else the variant */
    char path[1024];
} scn_entry;

typedef struct scn_list {
    scn_entry *v;
    size_t n, cap;
} scn_list;

static int scn_add(scn_list *l, const char *name, const char *path)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 8;
        scn_entry *a = realloc(l->v, nc * sizeof *a);

        if (!a)
            return -1;
        l->v = a;
        l->cap = nc;
    }
    snprintf(l->v[l->n].name, sizeof l->v[0].name, "%s", name);
    snprintf(l->v[l->n].path, sizeof l->v[0].path, "%s", path);
    l->n++;
    return 0;
}

static int cmp_scn(const void *a, const void *b)
{
    return strcmp(((const scn_entry *)a)->name, ((const scn_entry *)b)->name);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Program names: every vectors/programs/NAME.ini, sorted. */
static char **list_programs(const char *vdir, size_t *n)
{
    char path[1024];
    char **v = NULL;
    DIR *d;
    struct dirent *e;

    *n = 0;
    snprintf(path, sizeof path, "%s/programs", vdir);
    if (!(d = opendir(path)))
        return NULL;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        char **nv;

        if (l < 5 || strcmp(e->d_name + l - 4, ".ini"))
            continue;
        if (!(nv = realloc(v, (*n + 1) * sizeof *v)))
            break;
        v = nv;
        v[*n] = strndup(e->d_name, l - 4);
        if (v[*n])
            (*n)++;
    }
    closedir(d);
    if (v)
        qsort(v, *n, sizeof *v, cmp_str);
    return v;
}

/* The program's own scenario and its variants scenarios/NAME.VARIANT.ini. */
static void list_scenarios(const char *vdir, const char *prog, scn_list *l)
{
    char path[1024];
    DIR *d;
    struct dirent *e;
    size_t pl = strlen(prog), first;

    snprintf(path, sizeof path, "%s/programs/%s.ini", vdir, prog);
    scn_add(l, "", path);
    first = l->n;
    snprintf(path, sizeof path, "%s/scenarios", vdir);
    if (!(d = opendir(path)))
        return;
    while ((e = readdir(d)) != NULL) {
        size_t el = strlen(e->d_name);
        char file[1024], var[64];

        if (el <= pl + 5 || strncmp(e->d_name, prog, pl) || e->d_name[pl] != '.' ||
            strcmp(e->d_name + el - 4, ".ini"))
            continue;
        snprintf(var, sizeof var, "%.*s", (int)(el - pl - 5), e->d_name + pl + 1);
        snprintf(file, sizeof file, "%s/scenarios/%s", vdir, e->d_name);
        scn_add(l, var, file);
    }
    closedir(d);
    /* readdir order is the file system's: sort the variants by name. */
    qsort(l->v + first, l->n - first, sizeof *l->v, cmp_scn);
}

/* ETMv1 and ETMv2 cores (ARM7/ARM9/ARM10) have no Security Extensions:
 * a scenario that runs Secure and Non-secure code (secure = true) is not
 * traced with them (its SMC vector is no exception vector of theirs). */
/* A Cortex-M scenario (cpu = cortex-m3|m4) runs with the ETM-M3/M4's
 * option sets alone (m_sets), every other one never with them. */
static bool skip_case(const scn_entry *sc, tb_protocol p, bool m_sets)
{
    tb_scenario scn;
    char err[256];

    tb_scenario_init(&scn); /* parsing adds to it: it must start empty */
    if (tb_scenario_load(&scn, sc->path, err, sizeof err) < 0)
        return m_sets; /* the run says why, once */
    if (tb_sim_cpu_is_m(scn.cpu) != m_sets)
        return true;
    if (p != TB_PROTO_ETMV1 && p != TB_PROTO_ETMV2)
        return false;
    return scn.secure;
}

/* "PROGRAM[.VARIANT] PROTOCOL OPTIONS": names a case in the progress line,
 * the failure list and --only. */
static void case_id(char *buf, size_t len, const char *prog, const scn_entry *sc, tb_protocol p,
                    const char *set)
{
    snprintf(buf, len, "%s%s%s %s %s", prog, *sc->name ? "." : "", sc->name,
             tb_protocol_name(p), *set ? set : "plain");
}

typedef struct row {
    unsigned cases, bad;      /* bad: mismatches and errors */
    unsigned empty;           /* checked nothing: failures too, counted apart */
    unsigned known;           /* failed as the kept-seed table expects (not failures) */
    unsigned filtered;        /* generated: the filter held no code that ran (not failures) */
    uint64_t run, checked, bytes;
} row;

/* What the suite runs (tb_cli_roundtrip's flags). */
typedef struct suite_opts {
    const char *pdir, *vdir, *proto, *only;
    uint64_t max;
    unsigned reports;
    bool quiet, strict;
    /* Generated programs (docs/gen.md): seeds[0..nseeds), none when 0. */
    uint64_t *seeds;
    size_t nseeds;
    bool gen_only;            /* no vector programs */
    const char *gen_dir;      /* keep the programs here; NULL: a temporary directory */
    const char *cc;           /* the ARM compiler */
    tb_rt_seed_row *known;    /* the kept-seed table (--known FILE) */
    size_t nknown;
    const char *known_file;
} suite_opts;

/* The suite's running totals and its list of failed cases. */
typedef struct suite_state {
    row rows[5][TB_RT_MAX_SETS]; /* suite_protos: the fifth is v7-M */
    row gen[5];               /* suite_protos; the fifth: the seeds' Cortex-M programs */
    unsigned drawn[5][TB_RT_MAX_SETS]; /* generated cases per option set */
    unsigned reports, errors, mismatches, cut, unexpected, known_failed, filtered;
    char **failed;            /* "TAG  id", maybe with a reproduce line */
    size_t nfailed;
} suite_state;

static void note_failure(suite_state *st, const char *tag, const char *id, const char *extra)
{
    char **nf = realloc(st->failed, (st->nfailed + 1) * sizeof *st->failed);
    size_t len = strlen(tag) + strlen(id) + (extra ? strlen(extra) : 0) + 32;
    char *s;

    if (!nf)
        return;
    st->failed = nf;
    if (!(s = malloc(len)))
        return;
    snprintf(s, len, "%-16s %s%s%s", tag, id, extra ? "\n      " : "", extra ? extra : "");
    st->failed[st->nfailed++] = s;
}

/* Counts one finished case into row r and the failure list; `how` is the
 * reproduce line for a generated program (NULL for vector programs). */
static void tally(suite_state *st, const suite_opts *so, row *r, const tb_rt_case *c,
                  const char *set, int rc, const tb_rt_result *res, const char *err,
                  const char *id, const char *how, const tb_rt_seed_row *known)
{
    bool failed = rc < 0 || res->verdict != TB_RT_MATCH;

    r->cases++;
    if (rc >= 0) {
        if (res->sim.stop == TB_SIM_STOP_BUDGET)
            st->cut++;
        r->run += res->sim.insns;
        r->checked += res->cmp.checked;
        r->bytes += res->enc.bytes;
    }
    if (known) {
        /* The table says this case fails (a known class, not yet fixed):
         * it must still fail, and a match is a loud failure of the list. */
        if (failed) {
            r->known++;
            st->known_failed++;
            printf("KNOWN %s %s: %s line %u, class %s\n",
                   rc < 0 ? "ERROR" : tb_rt_verdict_name(res->verdict), id, so->known_file,
                   known->line, known->cls);
            return;
        }
        st->unexpected++;
        r->bad++;
        {
            char why[512];

            snprintf(why, sizeof why, "%s line %u expects KNOWN:%s, but it MATCHES now: "
                     "the bug is fixed; change the row's expect to MATCH (a regression seed)",
                     so->known_file, known->line, known->cls);
            printf("UNEXPECTED MATCH %s: %s\n", id, why);
            note_failure(st, "UNEXPECTED MATCH", id, why);
        }
        return;
    }
    if (!failed)
        return;
    /* A generated program's `filter` (the middle half of its first
     * segment) may hold no code that ran: nothing to check, which is no
     * failure of the trace, said so and counted apart. */
    if (how && rc >= 0 && res->verdict == TB_RT_NOTHING_CHECKED && !res->enc.traced &&
        c->opts.n_ranges && res->sim.insns) {
        r->filtered++;
        st->filtered++;
        printf("NOTHING CHECKED (no failure) %s: ", id);
        why_nothing(c, res, set, stdout);
        return;
    }
    if (rc >= 0 && res->verdict == TB_RT_NOTHING_CHECKED)
        r->empty++;
    else
        r->bad++;
    if (rc < 0) {
        st->errors++;
        printf("ERROR %s: %s: %s\n", id, tb_err_str(rc), err);
        if (how)
            printf("  reproduce: %s\n", how);
        note_failure(st, "ERROR", id, how);
        return;
    }
    if (res->verdict == TB_RT_NOTHING_CHECKED) {
        printf("NOTHING CHECKED %s: ", id);
        why_nothing(c, res, set, stdout);
    } else {
        st->mismatches++;
        if (st->reports++ < so->reports)
            printf("%s", res->report);
        else { /* the first line of the report: what differed */
            const char *w = res->report + (strncmp(res->report, "MISMATCH: ", 10) ? 0 : 10);

            printf("MISMATCH %s: %.*s\n", id, (int)strcspn(w, "\n"), w);
        }
    }
    if (how)
        printf("  reproduce: %s\n", how);
    note_failure(st, tb_rt_verdict_name(res->verdict), id, how);
}

static void print_row(const char *proto, const char *name, const row *r)
{
    printf("%-6s %-22s %6u %6u %6u %12llu %12llu %10llu %9.3f\n", proto, name, r->cases, r->bad,
           r->empty, (unsigned long long)r->run, (unsigned long long)r->checked,
           (unsigned long long)r->bytes, bits(r->bytes, r->run));
}

static void add_row(row *t, const row *r)
{
    t->cases += r->cases;
    t->bad += r->bad;
    t->empty += r->empty;
    t->known += r->known;
    t->filtered += r->filtered;
    t->run += r->run;
    t->checked += r->checked;
    t->bytes += r->bytes;
}

/* The fifth: ETMv3 on a Cortex-M (its ETM-M3/M4), with its own option
 * sets and the Cortex-M scenarios alone (skip_case); a seed's A-profile
 * program uses the first four, its Cortex-M program (--isa m) the fifth. */
static const tb_protocol suite_protos[] = {TB_PROTO_PTM, TB_PROTO_ETMV3, TB_PROTO_ETMV1,
                                           TB_PROTO_ETMV2, TB_PROTO_ETMV3};
enum { SUITE_NPROTO = sizeof suite_protos / sizeof suite_protos[0], SUITE_V7M = 4 };

static const char *const *suite_sets(size_t k, size_t *n)
{
    return k == SUITE_V7M ? tb_rt_option_sets_v7m(n) : tb_rt_option_sets(suite_protos[k], n);
}

/* The vector programs: every program x protocol x option set x scenario. */
static int suite_vectors(const suite_opts *so, suite_state *st, tb_cli_progress *pr,
                         size_t *nprog)
{
    size_t np = 0, nsets[SUITE_NPROTO];
    const char *const *sets[SUITE_NPROTO];
    char **progs = list_programs(so->vdir, &np);
    unsigned total = 0, done = 0;

    *nprog = np;
    if (!progs || !np) {
        fprintf(stderr, "tracebench roundtrip: no programs (NAME.ini) in %s/programs; give "
                        "the source tree's vectors directory with --vectors DIR\n", so->vdir);
        return RT_EXIT_ERROR;
    }
    for (size_t k = 0; k < SUITE_NPROTO; k++) {
        sets[k] = suite_sets(k, &nsets[k]);
    }

    /* Count the cases first, for the progress line. */
    for (size_t i = 0; i < np; i++) {
        scn_list sl = {0};

        if (!strcmp(progs[i], "smc"))
            continue;
        list_scenarios(so->vdir, progs[i], &sl);
        for (size_t k = 0; k < SUITE_NPROTO; k++)
            if (!so->proto || !strcmp(so->proto, tb_protocol_name(suite_protos[k])))
                for (size_t s = 0; s < nsets[k]; s++)
                    for (size_t v = 0; v < sl.n; v++) {
                        char id[256];

                        case_id(id, sizeof id, progs[i], &sl.v[v], suite_protos[k], sets[k][s]);
                        if ((!so->only || strstr(id, so->only)) &&
                            !skip_case(&sl.v[v], suite_protos[k], k == SUITE_V7M))
                            total++;
                    }
        free(sl.v);
    }

    for (size_t i = 0; i < np; i++) {
        char elf[1024];
        scn_list sl = {0};

        if (!strcmp(progs[i], "smc"))
            continue;
        snprintf(elf, sizeof elf, "%s/%s.elf", so->pdir, progs[i]);
        list_scenarios(so->vdir, progs[i], &sl);
        for (size_t k = 0; k < SUITE_NPROTO; k++) {
            if (so->proto && strcmp(so->proto, tb_protocol_name(suite_protos[k])))
                continue;
            for (size_t s = 0; s < nsets[k]; s++) {
                for (size_t v = 0; v < sl.n; v++) {
                    tb_rt_case c;
                    tb_rt_result res;
                    char id[256], err[512], prefix[300];
                    run_progress rp = {pr, prefix};
                    int rc;

                    case_id(id, sizeof id, progs[i], &sl.v[v], suite_protos[k], sets[k][s]);
                    if ((so->only && !strstr(id, so->only)) ||
                        skip_case(&sl.v[v], suite_protos[k], k == SUITE_V7M))
                        continue;
                    done++;
                    /* Only on a terminal, refreshed 5 times a second at
                     * most: a CI log gets the table alone. */
                    snprintf(prefix, sizeof prefix, "[%4u/%u] %s:", done, total, id);
                    if (tb_cli_progress_due(pr))
                        tb_cli_progress_text(pr, "[%4u/%u] %s", done, total, id);
                    tb_cli_progress_restart(pr);
                    tb_rt_case_init(&c, suite_protos[k]);
                    c.on_progress = on_progress;
                    c.progress_ctx = &rp;
                    c.name = id;
                    c.program = elf;
                    c.scenario = sl.v[v].path;
                    c.max_insns = so->max;
                    /* Alternate the buffer kind and the chunking so both
                     * paths and odd pieces run across the matrix. */
                    c.formatted = (s + v) % 2 == 0 && !tb_protocol_is_port(suite_protos[k]);
                    c.chunk = (s % 3 == 1) ? 7 : 0;
                    /* One thread: the suite's cases are short, and a
                     * second thread's start and hand-over cost more than
                     * it gains on them (measured: 26% more time). */
                    memset(&res, 0, sizeof res);
                    rc = tb_rt_case_options(&c, sets[k][s], err, sizeof err);
                    if (rc >= 0)
                        rc = tb_rt_run(&c, &res, err, sizeof err);
                    if (rc < 0 || res.verdict != TB_RT_MATCH)
                        tb_cli_progress_clear(pr);
                    /* No fault here, so a run is a match, a mismatch or
                     * one that checked nothing, which fails as well. */
                    tally(st, so, &st->rows[k][s], &c, sets[k][s], rc, &res, err, id, NULL,
                          NULL);
                }
            }
        }
        free(sl.v);
    }
    for (size_t i = 0; i < np; i++)
        free(progs[i]);
    free(progs);
    return RT_EXIT_MATCH;
}

/* The kept-seed row for a generated case, or NULL (m: the seed's
 * Cortex-M program, whose rows say isa m). */
static const tb_rt_seed_row *known_row(const suite_opts *so, uint64_t seed, tb_protocol p,
                                       bool m)
{
    for (size_t i = 0; i < so->nknown; i++)
        if (so->known[i].known && so->known[i].seed == seed && so->known[i].protocol == p &&
            (so->known[i].isa == TB_GEN_M) == m)
            return &so->known[i];
    return NULL;
}

static void rm_gen(const char *dir)
{
    static const char *const f[] = {TB_GEN_SOURCE, TB_GEN_LDSCRIPT, TB_GEN_SCENARIO, TB_GEN_ELF,
                                    TB_GEN_LOG};
    char path[1200];

    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, f[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* Generated programs: per seed two programs, its A-profile one (its ISA
 * picked by the seed, the default size) run under each protocol, and its
 * Cortex-M one (--isa m) under ETMv3, each with the option set
 * tb_rt_gen_set (tb_rt_gen_set_v7m) draws; a failure prints the commands
 * that reproduce it. */
static int suite_gen(const suite_opts *so, suite_state *st, tb_cli_progress *pr)
{
    char tmp[1024], root[1024];
    bool own = !so->gen_dir;

    if (own) {
        const char *t = getenv("TMPDIR");

        snprintf(tmp, sizeof tmp, "%s/tb-gen-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(tmp)) {
            fprintf(stderr, "tracebench roundtrip: cannot create a directory %s for the "
                            "generated programs: %s; give one with --gen-dir DIR\n", tmp,
                    strerror(errno));
            return RT_EXIT_ERROR;
        }
        snprintf(root, sizeof root, "%s", tmp);
    } else {
        snprintf(root, sizeof root, "%s", so->gen_dir);
        if (mkdir(root, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "tracebench roundtrip: --gen-dir %s: %s\n", root, strerror(errno));
            return RT_EXIT_ERROR;
        }
    }
    /* A kept row whose program the generator no longer makes is stale:
     * it would test something else, silently. */
    for (size_t i = 0; i < so->nknown; i++) {
        const tb_rt_seed_row *kr = &so->known[i];
        bool in_run = false;

        for (size_t j = 0; j < so->nseeds && !in_run; j++)
            in_run = so->seeds[j] == kr->seed;
        if (!in_run || !kr->known)
            continue;
        if ((kr->isa != (int)tb_gen_seed_isa(kr->seed) && kr->isa != TB_GEN_M) ||
            kr->size != TB_GEN_SIZE_DEFAULT) {
            char why[512];

            snprintf(why, sizeof why, "%s line %u: seed %llu runs in the suite as --isa %s "
                     "--size %u, not as the row says", so->known_file, kr->line,
                     (unsigned long long)kr->seed, tb_gen_isa_name(tb_gen_seed_isa(kr->seed)),
                     TB_GEN_SIZE_DEFAULT);
            printf("STALE ROW %s\n", why);
            note_failure(st, "STALE ROW", "", why);
            st->unexpected++;
        }
    }
    for (size_t si = 0; si < so->nseeds * 2; si++) {
        uint64_t seed = so->seeds[si / 2];
        const bool m = si % 2 == 1; /* the seed's Cortex-M program */
        tb_gen_opts go = {seed, m ? TB_GEN_M : -1, 0};
        tb_gen_program gp;
        char dir[1200], elf[1300], ini[1300], err[2048], how[1024];
        const char *isa;
        int brc;

        snprintf(dir, sizeof dir, "%s/seed-%llu%s", root, (unsigned long long)seed, m ? "-m" : "");
        if ((brc = tb_gen_make(&go, &gp, err, sizeof err)) >= 0) {
            brc = tb_gen_write(&gp, dir, err, sizeof err);
            if (brc >= 0)
                brc = tb_gen_build(dir, so->cc, err, sizeof err);
        }
        isa = tb_gen_isa_name(m ? TB_GEN_M : tb_gen_seed_isa(seed));
        snprintf(elf, sizeof elf, "%s/%s", dir, TB_GEN_ELF);
        snprintf(ini, sizeof ini, "%s/%s", dir, TB_GEN_SCENARIO);
        for (size_t k = m ? SUITE_V7M : 0; k < (m ? SUITE_NPROTO : SUITE_V7M); k++) {
            tb_protocol p = suite_protos[k];
            size_t nsets, s = m ? tb_rt_gen_set_v7m(seed) : tb_rt_gen_set(p, seed);
            const char *set = suite_sets(k, &nsets)[s];
            const tb_rt_seed_row *kr = known_row(so, seed, p, m);
            tb_rt_case c;
            tb_rt_result res;
            char id[256], prefix[300], rerr[2600];
            run_progress rp = {pr, prefix};
            int rc = brc;

            if (so->proto && strcmp(so->proto, tb_protocol_name(p)))
                continue;
            snprintf(id, sizeof id, "gen-%llu/%s %s %s", (unsigned long long)seed, isa,
                     tb_protocol_name(p), *set ? set : "plain");
            if (so->only && !strstr(id, so->only))
                continue;
            /* A row for another option set (the matrix changed since, or
             * a set chosen by hand) is no statement about this case: the
             * replay test (tests/test_roundtrip_gen.c) runs it as written. */
            if (kr && strcmp(kr->options, set))
                kr = NULL;
            if (kr && brc >= 0 && kr->hash != tb_gen_hash(gp.source)) {
                char why[512];

                snprintf(why, sizeof why, "%s line %u: seed %llu generates another program now "
                         "(source hash %016llx, the row has %016llx): the generator changed; "
                         "re-check the case and update or drop the row", so->known_file,
                         kr->line, (unsigned long long)seed,
                         (unsigned long long)tb_gen_hash(gp.source),
                         (unsigned long long)kr->hash);
                printf("STALE ROW %s\n", why);
                note_failure(st, "STALE ROW", id, why);
                st->unexpected++;
                kr = NULL;
            }
            st->drawn[k][s]++;
            /* The commands, and the case as a kept-seed table row (its
             * class to be filled in once it is understood). */
            snprintf(how, sizeof how, "tracebench gen --seed %llu --isa %s -o tb-gen-%llu && "
                     "tracebench roundtrip tb-gen-%llu/%s --scenario tb-gen-%llu/%s "
                     "--protocol %s --options '%s'\n      row: %llu %s %u %016llx %s %s "
                     "KNOWN:CLASS",
                     (unsigned long long)seed, isa, (unsigned long long)seed,
                     (unsigned long long)seed, TB_GEN_ELF, (unsigned long long)seed,
                     TB_GEN_SCENARIO, tb_protocol_name(p), set, (unsigned long long)seed, isa,
                     TB_GEN_SIZE_DEFAULT,
                     gp.source ? (unsigned long long)tb_gen_hash(gp.source) : 0ull,
                     tb_protocol_name(p), *set ? set : "plain");
            snprintf(prefix, sizeof prefix, "[seed %zu/%zu] %s:", si / 2 + 1, so->nseeds, id);
            if (tb_cli_progress_due(pr))
                tb_cli_progress_text(pr, "[seed %zu/%zu] %s", si / 2 + 1, so->nseeds, id);
            tb_cli_progress_restart(pr);
            tb_rt_case_init(&c, p);
            c.on_progress = on_progress;
            c.progress_ctx = &rp;
            c.name = id;
            c.program = elf;
            c.scenario = ini;
            c.formatted = seed % 2 == 0 && !tb_protocol_is_port(p);
            c.chunk = seed % 3 == 1 ? 7 : 0;
            memset(&res, 0, sizeof res);
            if (rc < 0) {
                snprintf(rerr, sizeof rerr, "seed %llu: %s", (unsigned long long)seed, err);
            } else {
                rc = tb_rt_case_options(&c, set, rerr, sizeof rerr);
                if (rc >= 0)
                    rc = tb_rt_run(&c, &res, rerr, sizeof rerr);
                /* The generator bounds every program: one that does not
                 * reach _exit is a generator bug, whatever the trace. */
                if (rc >= 0 && res.sim.stop != TB_SIM_STOP_EXIT) {
                    snprintf(rerr, sizeof rerr, "the generated program did not reach _exit "
                             "(%s at 0x%08x after %llu instructions): a generator bug, or "
                             "the simulator ran it wrong (docs/gen.md)",
                             tb_sim_stop_text(res.sim.stop), res.sim.stop_addr,
                             (unsigned long long)res.sim.insns);
                    rc = TB_ERR_LIMIT;
                }
            }
            if (rc < 0 || res.verdict != TB_RT_MATCH)
                tb_cli_progress_clear(pr);
            tally(st, so, &st->gen[k], &c, set, rc, &res, rerr, id, how, kr);
        }
        if (brc >= 0 || gp.source)
            tb_gen_program_fini(&gp);
        if (own)
            rm_gen(dir);
    }
    if (own)
        rmdir(root);
    return RT_EXIT_MATCH;
}

static int suite(const suite_opts *so)
{
    suite_state *st = calloc(1, sizeof *st);
    size_t np = 0;
    row tot = {0};
    tb_cli_progress pr;
    int rc = RT_EXIT_MATCH;

    if (!st)
        return RT_EXIT_ERROR;
    tb_cli_progress_init(&pr, so->quiet);
    if (!so->gen_only && (rc = suite_vectors(so, st, &pr, &np)) != RT_EXIT_MATCH) {
        free(st);
        return rc;
    }
    if (so->nseeds && (rc = suite_gen(so, st, &pr)) != RT_EXIT_MATCH) {
        free(st);
        return rc;
    }
    tb_cli_progress_clear(&pr);

    if (!so->gen_only)
        printf("\nround trip: sim -> encoder -> decoder -> comparator, %zu programs "
               "(smc left out: the simulator does not follow self-modifying code)%s\n", np - 1,
               so->nseeds ? ", then generated programs" : "");
    else
        printf("\nround trip: sim -> encoder -> decoder -> comparator, generated programs\n");
    printf("\n%-6s %-22s %6s %6s %6s %12s %12s %10s %9s\n", "proto", "options", "cases", "bad",
           "empty", "insns run", "checked", "bytes", "bits/insn");
    if (!so->gen_only) {
        for (size_t k = 0; k < SUITE_NPROTO; k++) {
            size_t nsets;
            const char *const *sets = suite_sets(k, &nsets);

            for (size_t s = 0; s < nsets; s++) {
                const row *r = &st->rows[k][s];

                if (!r->cases)
                    continue;
                print_row(k == SUITE_V7M ? "v7-M" : tb_protocol_name(suite_protos[k]),
                          *sets[s] ? sets[s] : "plain", r);
                add_row(&tot, r);
            }
        }
    }
    if (so->nseeds) {
        printf("%-6s generated programs (docs/gen.md): %zu seeds, one option set each per "
               "protocol\n", "", so->nseeds);
        for (size_t k = 0; k < SUITE_NPROTO; k++) {
            size_t nsets, drawn = 0;
            char name[64];

            if (!st->gen[k].cases)
                continue;
            suite_sets(k, &nsets);
            for (size_t s = 0; s < nsets; s++)
                drawn += st->drawn[k][s] != 0;
            snprintf(name, sizeof name, "gen, %zu/%zu sets", drawn, nsets);
            print_row(k == SUITE_V7M ? "v7-M" : tb_protocol_name(suite_protos[k]), name,
                      &st->gen[k]);
            add_row(&tot, &st->gen[k]);
        }
    }
    print_row("all", "", &tot);
    printf("(bad: mismatches and errors; empty: cases that checked no instruction, "
           "failures too)\n");
    if (st->cut)
        printf("%u of %u cases were cut by their budget (the scenario's max_insns, capped by "
               "--max %llu) before their program ended: checked that far; to check them "
               "whole, raise --max (it caps every case; the default is 200000) and, past "
               "it, the scenario's max_insns%s\n", st->cut, tot.cases,
               (unsigned long long)so->max,
               so->strict ? "; --strict: that is a failure (exit 6)" : "");
    if (so->nseeds)
        for (size_t k = 0; k < SUITE_NPROTO; k++) {
            size_t nsets, miss = 0;
            const char *const *sets = suite_sets(k, &nsets);

            if (!st->gen[k].cases)
                continue;
            for (size_t s = 0; s < nsets; s++)
                miss += !st->drawn[k][s];
            if (miss) {
                printf("%s: %zu of %zu option sets drawn by no seed here (any %zu consecutive "
                       "seeds draw them all)",
                       k == SUITE_V7M ? "v7-M" : tb_protocol_name(suite_protos[k]), miss, nsets,
                       2 * nsets - 1);
                for (size_t s = 0; s < nsets && miss <= 8; s++)
                    if (!st->drawn[k][s])
                        printf(" %s", *sets[s] ? sets[s] : "plain");
                printf("\n");
            }
        }
    if (st->filtered)
        printf("%u generated case(s) checked nothing because their `filter` range held no "
               "code that ran (said above; no failure)\n", st->filtered);
    if (st->known_failed)
        printf("%u case(s) failed as %s expects (known classes, not yet fixed; each still "
               "fails, or this run would say UNEXPECTED MATCH)\n", st->known_failed,
               so->known_file);
    if (tot.bad || tot.empty) {
        printf("\n%u of %u cases FAILED: %u mismatch(es), %u error(s), %u checked nothing",
               tot.bad + tot.empty, tot.cases, st->mismatches, st->errors, tot.empty);
        if (so->known_file)
            printf(", %u against the kept-seed table", st->unexpected);
        printf(":\n");
        for (size_t i = 0; i < st->nfailed; i++)
            printf("  %s\n", st->failed[i]);
    } else if (tot.cases && so->strict && st->cut) {
        printf("\nall %u cases match, but %u of them were cut short by their budget: "
               "--strict fails them\n", tot.cases, st->cut);
    } else if (tot.cases) {
        printf("\nall %u cases match%s\n", tot.cases - tot.known - tot.filtered,
               tot.known || tot.filtered ? " (besides the known failures and filtered cases "
                                           "above)" : "");
    } else {
        printf("\nno case ran%s%s%s\n", so->only ? " (--only " : "", so->only ? so->only : "",
               so->only ? " matches none)" : "");
    }
    rc = st->mismatches || st->unexpected ? RT_EXIT_MISMATCH
         : st->errors                     ? RT_EXIT_ERROR
         : tot.empty || !tot.cases        ? RT_EXIT_NOTHING
         : so->strict && st->cut          ? RT_EXIT_CUT
                                          : RT_EXIT_MATCH;
    for (size_t i = 0; i < st->nfailed; i++)
        free(st->failed[i]);
    free(st->failed);
    free(st);
    return rc;
}

/* --seeds SPEC: N (1..N), A-B, or a comma list of both ("1-300,4711"). */
static int parse_seeds(const char *spec, uint64_t **out, size_t *n)
{
    uint64_t *v = NULL;
    size_t cnt = 0, cap = 0;
    const char *p = spec;

    if (!*p)
        return -1;
    while (*p) {
        char *end;
        uint64_t a, b;

        if (*p < '0' || *p > '9')
            goto bad;
        errno = 0;
        a = strtoull(p, &end, 10);
        if (errno)
            goto bad;
        if (*end == '-') {
            if (end[1] < '0' || end[1] > '9')
                goto bad;
            b = strtoull(end + 1, &end, 10);
            if (errno || b < a)
                goto bad;
        } else if (p == spec && !*end) {
            b = a; /* N alone: 1..N */
            a = 1;
            if (b == 0)
                goto bad;
        } else {
            b = a;
        }
        if (b - a >= 10000000 || cnt + (b - a + 1) > 10000000)
            goto bad;
        for (uint64_t s = a;; s++) {
            if (cnt == cap) {
                size_t nc = cap ? cap * 2 : 1024;
                uint64_t *nv = realloc(v, nc * sizeof *nv);

                if (!nv)
                    goto bad;
                v = nv;
                cap = nc;
            }
            v[cnt++] = s;
            if (s == b)
                break;
        }
        if (*end == ',')
            end++;
        else if (*end)
            goto bad;
        p = end;
    }
    *out = v;
    *n = cnt;
    return 0;
bad:
    free(v);
    return -1;
}

/* The options that take a value. */
static bool takes_value(const char *a)
{
    static const char *const names[] = {"--scenario", "--protocol", "--options", "--buffer",
                                        "--out",      "--programs", "--vectors", "--only",
                                        "--max",      "--truth",    "--vcd",     "--chunk",
                                        "--reports",  "--fault",    "--seeds",   "--gen-dir",
                                        "--known",    "--cc",       "--cpu",
                                        "--code-coverage", "--coverage-format", "--profile",
                                        "--profile-format"};

    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (!strcmp(a, names[k]))
            return true;
    return false;
}

/* A decimal or 0x count that fits a size_t / unsigned. */
static bool parse_count(const char *v, unsigned long long max, unsigned long long *out)
{
    char *end;

    if (*v < '0' || *v > '9')
        return false;
    errno = 0;
    *out = strtoull(v, &end, 0);
    return !*end && !errno && *out <= max;
}

int tb_cli_roundtrip(int argc, char **argv)
{
    const char *prog = NULL, *scn = NULL, *proto = NULL, *opts = NULL, *out = NULL;
    const char *pdir = "build/vectors/programs", *vdir = "vectors", *only = NULL;
    const char *truth = NULL, *vcd = NULL;
    bool raw = false, do_suite = false, quiet = false, has_max = false, strict = false;
    bool has_cpu = false;
    tb_sim_cpu cpu = TB_SIM_CPU_A15;
    uint64_t max = 0;
    size_t chunk = 0;
    unsigned reports = 3;
    tb_rt_fault fault = {TB_RT_FAULT_NONE, 0, 0};
    const char *seeds = NULL, *gen_dir = NULL, *known = NULL, *cc = getenv("TB_ARM_CC");
    bool gen_only = false;
    char why[160];
    rt_analysis an = {.cov_format = -1, .prof_format = -1};
    const char *cov_fmt = NULL, *prof_fmt = NULL;

    if (tb_cli_wants_help(argc, argv))
        return usage_to(stdout, 0);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        unsigned long long n;

        if (!strcmp(a, "--suite")) {
            do_suite = true;
            continue;
        }
        if (!strcmp(a, "--quiet")) {
            quiet = true;
            continue;
        }
        if (!strcmp(a, "--strict")) {
            strict = true;
            continue;
        }
        if (!strcmp(a, "--gen-only")) {
            gen_only = true;
            continue;
        }
        if (a[0] != '-') {
            if (prog)
                return tb_cli_usage_error("roundtrip", "one PROGRAM only, not '%s' and '%s'",
                                          prog, a);
            prog = a;
            continue;
        }
        if (!takes_value(a))
            return tb_cli_usage_error("roundtrip", "unknown option '%s'", a);
        if (!v)
            return tb_cli_usage_error("roundtrip", "%s needs a value", a);
        i++;
        if (!strcmp(a, "--scenario")) {
            scn = v;
        } else if (!strcmp(a, "--protocol")) {
            if (!tb_cli_protocol(v))
                return tb_cli_usage_error("roundtrip", "--protocol %s: use ptm, etmv3, etmv1 "
                                          "or etmv2", v);
            proto = v;
        } else if (!strcmp(a, "--options")) {
            opts = v;
            if (tb_cli_options_empty_item(v))
                return tb_cli_usage_error("roundtrip", "--options %s: an empty item (two "
                                          "commas in a row, or one at an end)", v);
        } else if (!strcmp(a, "--buffer")) {
            if (strcmp(v, "raw") && strcmp(v, "coresight"))
                return tb_cli_usage_error("roundtrip", "--buffer %s: use coresight or raw", v);
            raw = !strcmp(v, "raw");
        } else if (!strcmp(a, "--out")) {
            out = v;
        } else if (!strcmp(a, "--programs")) {
            pdir = v;
        } else if (!strcmp(a, "--vectors")) {
            vdir = v;
        } else if (!strcmp(a, "--only")) {
            only = v;
        } else if (!strcmp(a, "--max")) {
            if (tb_cli_parse_budget(v, &max) < 0)
                return tb_cli_usage_error("roundtrip", "--max %s: give a number of "
                                          "instructions (decimal or 0x...; 0: none) or "
                                          "unlimited", v);
            has_max = true;
        } else if (!strcmp(a, "--truth")) {
            truth = v;
        } else if (!strcmp(a, "--vcd")) {
            vcd = v;
        } else if (!strcmp(a, "--chunk")) {
            if (!parse_count(v, SIZE_MAX, &n))
                return tb_cli_usage_error("roundtrip", "--chunk %s: give a byte count "
                                          "(0: as the encoder makes them)", v);
            chunk = (size_t)n;
        } else if (!strcmp(a, "--reports")) {
            if (!parse_count(v, UINT32_MAX, &n))
                return tb_cli_usage_error("roundtrip", "--reports %s: give a count", v);
            reports = (unsigned)n;
        } else if (!strcmp(a, "--fault")) {
            if (parse_fault(v, &fault) < 0)
                return tb_cli_usage_error("roundtrip", "--fault %s: use addr-bit:N:BIT (flip "
                                          "bit BIT, 0-31, of the Nth branch address packet) "
                                          "or drop-atom:N (drop the last atom of the Nth "
                                          "atom packet)", v);
        } else if (!strcmp(a, "--seeds")) {
            seeds = v;
        } else if (!strcmp(a, "--gen-dir")) {
            gen_dir = v;
        } else if (!strcmp(a, "--known")) {
            known = v;
        } else if (!strcmp(a, "--cc")) {
            cc = v;
        } else if (!strcmp(a, "--cpu")) {
            if (tb_cli_cpu_parse("roundtrip", v, &cpu) < 0)
                return TB_EXIT_USAGE;
            has_cpu = true;
        } else if (!strcmp(a, "--code-coverage")) {
            an.cov_path = v;
        } else if (!strcmp(a, "--profile")) {
            an.prof_path = v;
        } else if (!strcmp(a, "--coverage-format")) {
            if ((an.cov_format = tb_cli_coverage_format(v)) < 0)
                return tb_cli_usage_error("roundtrip", "--coverage-format %s: use lcov, "
                                          "cobertura, json or text", v);
            cov_fmt = v;
        } else if (!strcmp(a, "--profile-format")) {
            if ((an.prof_format = tb_cli_profile_format(v)) < 0)
                return tb_cli_usage_error("roundtrip", "--profile-format %s: use callgrind, "
                                          "folded or text", v);
            prof_fmt = v;
        }
    }
    if (do_suite) {
        suite_opts so = {pdir, vdir, proto, only, max ? max : 200000, reports, quiet, strict,
                         NULL, 0, gen_only, gen_dir, cc && *cc ? cc : TB_ARM_CC_DEFAULT,
                         NULL, 0, known};
        int rc;

        if (prog || truth || vcd || out || fault.kind != TB_RT_FAULT_NONE || has_cpu ||
            an.cov_path || an.prof_path)
            return tb_cli_usage_error("roundtrip", "--suite runs the vector programs: it "
                                      "takes no %s", prog ? "PROGRAM" : truth ? "--truth"
                                      : vcd ? "--vcd" : out ? "--out" : has_cpu ? "--cpu "
                                      "(each scenario names its cpu)"
                                      : an.cov_path ? "--code-coverage"
                                      : an.prof_path ? "--profile" : "--fault");
        if (seeds && parse_seeds(seeds, &so.seeds, &so.nseeds) < 0)
            return tb_cli_usage_error("roundtrip", "--seeds %s: give N (seeds 1..N), A-B or "
                                      "a comma list of them, at most 10 million seeds", seeds);
        if (gen_only && !so.nseeds) {
            free(so.seeds);
            return tb_cli_usage_error("roundtrip", "--gen-only needs --seeds SPEC");
        }
        if (known) {
            size_t len;
            char *text = NULL, err[512];
            FILE *f = fopen(known, "rb");

            if (f && fseek(f, 0, SEEK_END) == 0 && (len = (size_t)ftell(f), 1) &&
                fseek(f, 0, SEEK_SET) == 0 && (text = malloc(len + 1)) &&
                fread(text, 1, len, f) == len) {
                text[len] = '\0';
                rc = tb_rt_seed_table_parse(text, &so.known, &so.nknown, err, sizeof err);
            } else {
                snprintf(err, sizeof err, "cannot read it: %s", strerror(errno));
                rc = TB_ERR_IO;
            }
            if (f)
                fclose(f);
            free(text);
            if (rc < 0) {
                fprintf(stderr, "tracebench roundtrip: --known %s: %s\n", known, err);
                free(so.seeds);
                return rc == TB_ERR_IO ? RT_EXIT_ERROR : RT_EXIT_USAGE;
            }
        }
        rc = suite(&so);
        free(so.seeds);
        free(so.known);
        return rc;
    }
    if (seeds || gen_only || gen_dir || known)
        return tb_cli_usage_error("roundtrip", "--seeds, --gen-only, --gen-dir and --known "
                                  "go with --suite");
    if (!prog)
        return tb_cli_usage_error("roundtrip", "no PROGRAM: give an ARM ELF file, or --suite");
    if (out && !proto)
        return tb_cli_usage_error("roundtrip", "--out needs --protocol (one snapshot, of "
                                  "one protocol)");
    if ((an.cov_path || an.prof_path) && !proto)
        return tb_cli_usage_error("roundtrip", "%s needs --protocol (the report of one "
                                  "decode, of one protocol)",
                                  an.cov_path ? "--code-coverage" : "--profile");
    if ((cov_fmt && !an.cov_path) || (prof_fmt && !an.prof_path))
        return tb_cli_usage_error("roundtrip", "%s goes with %s FILE",
                                  cov_fmt && !an.cov_path ? "--coverage-format"
                                                          : "--profile-format",
                                  cov_fmt && !an.cov_path ? "--code-coverage" : "--profile");
    if (an.cov_format < 0)
        an.cov_format = tb_cli_coverage_format("lcov");
    if (an.prof_format < 0)
        an.prof_format = tb_cli_profile_format("callgrind");
    if (vcd && (!proto || (strcmp(proto, "etmv1") && strcmp(proto, "etmv2")) || !out)) {
        fprintf(stderr, "tracebench roundtrip: --vcd: needs --protocol etmv1|etmv2 (a trace port "
                "capture; %s has no port signals) and --out DIR\n", proto ? proto : "ptm/etmv3");
        return RT_EXIT_USAGE;
    }
    /* The program's real cause, once (not "no loadable segment" once
     * per protocol). */
    if (tb_cli_elf_file_problem(prog, why, sizeof why)) {
        fprintf(stderr, "tracebench roundtrip: %s: %s%s\n", prog, why,
                !strcmp(why, "not an ELF file") ? "; roundtrip runs ELF programs (`tracebench "
                                                  "sim --raw ADDR` runs a raw image)"
                                                : "");
        return RT_EXIT_ERROR;
    }
    if (access(prog, R_OK) != 0) {
        fprintf(stderr, "tracebench roundtrip: %s: cannot read: %s\n", prog, strerror(errno));
        return RT_EXIT_ERROR;
    }
    {
        int rc = one(prog, scn, proto, opts, raw, has_max, max, chunk, out, vcd, truth, quiet,
                     &fault, strict, has_cpu, cpu, &an);

        an_free(&an);
        return rc;
    }
}

#else

int tb_cli_roundtrip(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "tracebench roundtrip: built without the simulator\n");
    return RT_EXIT_ERROR;
}

#endif
