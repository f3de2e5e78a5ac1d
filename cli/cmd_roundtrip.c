/* tracebench roundtrip PROGRAM [--scenario S.ini] [--protocol ptm|etmv3|etmv1|etmv2]
 *                      [--options LIST] [--buffer coresight|raw] [--max N|unlimited]
 *                      [--chunk N] [--out DIR [--vcd FILE]] [--truth FILE] [--quiet]
 *                      [--fault addr-bit:N:BIT|drop-atom:N]
 * tracebench roundtrip --suite [--programs DIR] [--vectors DIR] [--max N]
 *                      [--protocol P] [--only TEXT] [--reports N] [--quiet]
 *
 * One program: sim -> encoder -> decoder -> comparator, for one protocol
 * or both; the verdict, or the comparator's report of the first
 * divergence.  --suite: the whole matrix (every program with a scenario x
 * protocol x option set x scenario variant) with a progress line and a
 * summary table.  Exit codes: RT_EXIT_* below (README.md, "Exit codes"). */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* One table for single runs and the suite; 1 and 2 mean what they mean
 * for the other subcommands (failure, usage).  A run that proved nothing
 * gets its own code so that no script takes it for a pass, and a broken
 * setup its own so that it is not taken for a decoder bug. */
enum {
    RT_EXIT_MATCH = 0,       /* every run matched over >= 1 checked instruction */
    RT_EXIT_MISMATCH = 1,    /* a divergence (with --fault: the fault was caught) */
    RT_EXIT_USAGE = 2,       /* bad command line or option list */
    RT_EXIT_NOTHING = 3,     /* a run checked no instruction, or its --fault was
                              * not applied or not caught; the suite ran no case */
    RT_EXIT_ERROR = 4,       /* the program would not load or run, I/O, pipeline */
};

#ifdef TB_HAVE_ROUNDTRIP

#include "tracebench/etmv1.h"
#include "tracebench/roundtrip.h"

static int usage_to(FILE *f, int rc)
{
    fprintf(f,
            "usage: tracebench roundtrip PROGRAM.elf [--scenario S.ini] [--protocol ptm|etmv3|etmv1|etmv2]\n"
            "           [--cpu CPU] [--options LIST] [--buffer coresight|raw] [--max N|unlimited] [--chunk N]\n"
            "           [--out DIR [--vcd FILE]] [--truth FILE] [--quiet]\n"
            "           [--fault addr-bit:N:BIT|drop-atom:N]\n"
            "       tracebench roundtrip --suite [--programs DIR] [--vectors DIR] [--max N]\n"
            "           [--protocol ptm|etmv3|etmv1|etmv2] [--only TEXT] [--reports N] [--quiet]\n"
            "           (--suite: --max caps each scenario's budget, default 200000)\n"
            "  --max N: the budget, N instructions and N exceptions (default: the scenario's\n"
            "        max_insns, else %u); 0 or unlimited: none.  A run the budget cut\n"
            "        says so under its verdict\n"
            "  --cpu CPU: cortex-a15|cortex-a9|cortex-a7|cortex-m3|cortex-m4, over the\n"
            "        scenario's cpu; a Cortex-M is traced by ETMv3 alone (its ETM-M3/M4)\n"
            "  --out DIR: the snapshot (streamed); --truth FILE: the ground truth\n"
            "  --vcd FILE: (--protocol etmv1|etmv2, with --out) the port capture also as a VCD\n"
            "  LIST: encoder options (see tracebench sim; include=/exclude= take symbols),\n"
            "        plus `filter` for an include range over the middle half of the program\n"
            "  --suite: programs from DIR (default build/vectors/programs), scenarios\n"
            "        from the vectors DIR (default vectors): programs/NAME.ini and\n"
            "        scenarios/NAME.VARIANT.ini\n"
            "exit: 0 match, 1 mismatch (with --fault: the fault was caught), 2 usage,\n"
            "      3 nothing checked (0 instructions compared, or the fault was not\n"
            "        applied or not caught; --suite: any such case, or no case ran),\n"
            "      4 error (the program would not load or run, I/O); with both protocols\n"
            "      or --suite: 1 if any mismatch, else 4 if any error, else 3 if any\n"
            "      case checked nothing, else 0\n", TB_CLI_DEFAULT_BUDGET);
    return rc;
}

static int usage(void)
{
    return usage_to(stderr, RT_EXIT_USAGE);
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

/* The worse outcome of two runs, as the suite ranks them: a mismatch over
 * an error over a run that proved nothing over a match. */
static int worse(int a, int b)
{
    static const int rank[] = {[RT_EXIT_MATCH] = 0, [RT_EXIT_NOTHING] = 1,
                               [RT_EXIT_ERROR] = 2, [RT_EXIT_MISMATCH] = 3};

    return rank[b] > rank[a] ? b : a;
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

static int one(const char *prog, const char *scn, const char *proto, const char *opts,
               bool raw, bool has_max, uint64_t max, size_t chunk, const char *out,
               const char *vcd, const char *truth, bool quiet, const tb_rt_fault *fault,
               bool has_cpu, tb_sim_cpu cpu)
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
        c.out_dir = out;
        c.no_truth = true; /* the truth only when asked: --truth FILE */
        c.truth_file = truth;
        c.fault = *fault;
        c.has_cpu = has_cpu;
        c.cpu = cpu;
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
    return (p == TB_PROTO_ETMV1 || p == TB_PROTO_ETMV2) && scn.secure;
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
    uint64_t run, checked, bytes;
} row;

static int suite(const char *pdir, const char *vdir, const char *proto, uint64_t max,
                 const char *only, unsigned max_reports, bool quiet)
{
    /* The fifth: ETMv3 on a Cortex-M (its ETM-M3/M4), with its own sets. */
    static const tb_protocol protos[] = {TB_PROTO_PTM, TB_PROTO_ETMV3, TB_PROTO_ETMV1,
                                         TB_PROTO_ETMV2, TB_PROTO_ETMV3};
    enum { NPROTO = sizeof protos / sizeof protos[0] };
    size_t np = 0, nsets[NPROTO];
    const char *const *sets[NPROTO];
    char **progs = list_programs(vdir, &np);
    row rows[NPROTO][64], tot = {0};
    unsigned total = 0, done = 0, reports = 0, errors = 0, mismatches = 0, cut = 0;
    tb_cli_progress pr;
    char (*failed)[288] = NULL; /* "TAG  id" */
    size_t nfailed = 0;

    if (!progs || !np) {
        fprintf(stderr, "tracebench roundtrip: no programs (NAME.ini) in %s/programs; give "
                        "the source tree's vectors directory with --vectors DIR\n", vdir);
        return RT_EXIT_ERROR;
    }
    memset(rows, 0, sizeof rows);
    tb_cli_progress_init(&pr, quiet);
    for (size_t k = 0; k < NPROTO; k++) {
        sets[k] = k == 4 ? tb_rt_option_sets_v7m(&nsets[k])
                         : tb_rt_option_sets(protos[k], &nsets[k]);
        if (nsets[k] > 64)
            nsets[k] = 64;
    }

    /* Count the cases first, for the progress line. */
    for (size_t i = 0; i < np; i++) {
        scn_list sl = {0};

        if (!strcmp(progs[i], "smc"))
            continue;
        list_scenarios(vdir, progs[i], &sl);
        for (size_t k = 0; k < NPROTO; k++)
            if (!proto || !strcmp(proto, tb_protocol_name(protos[k])))
                for (size_t s = 0; s < nsets[k]; s++)
                    for (size_t v = 0; v < sl.n; v++) {
                        char id[256];

                        case_id(id, sizeof id, progs[i], &sl.v[v], protos[k], sets[k][s]);
                        if ((!only || strstr(id, only)) && !skip_case(&sl.v[v], protos[k], k == 4))
                            total++;
                    }
        free(sl.v);
    }

    for (size_t i = 0; i < np; i++) {
        char elf[1024];
        scn_list sl = {0};

        if (!strcmp(progs[i], "smc"))
            continue;
        snprintf(elf, sizeof elf, "%s/%s.elf", pdir, progs[i]);
        list_scenarios(vdir, progs[i], &sl);
        for (size_t k = 0; k < NPROTO; k++) {
            if (proto && strcmp(proto, tb_protocol_name(protos[k])))
                continue;
            for (size_t s = 0; s < nsets[k]; s++) {
                for (size_t v = 0; v < sl.n; v++) {
                    tb_rt_case c;
                    tb_rt_result res;
                    char id[256], err[512], prefix[300];
                    run_progress rp = {&pr, prefix};
                    int rc;

                    case_id(id, sizeof id, progs[i], &sl.v[v], protos[k], sets[k][s]);
                    if ((only && !strstr(id, only)) || skip_case(&sl.v[v], protos[k], k == 4))
                        continue;
                    done++;
                    /* Only on a terminal, refreshed 5 times a second at
                     * most: a CI log gets the table alone. */
                    snprintf(prefix, sizeof prefix, "[%4u/%u] %s:", done, total, id);
                    if (tb_cli_progress_due(&pr))
                        tb_cli_progress_text(&pr, "[%4u/%u] %s", done, total, id);
                    tb_cli_progress_restart(&pr);
                    tb_rt_case_init(&c, protos[k]);
                    c.on_progress = on_progress;
                    c.progress_ctx = &rp;
                    c.name = id;
                    c.program = elf;
                    c.scenario = sl.v[v].path;
                    c.max_insns = max;
                    /* Alternate the buffer kind and the chunking so both
                     * paths and odd pieces run across the matrix. */
                    c.formatted = (s + v) % 2 == 0 && !tb_protocol_is_port(protos[k]);
                    c.chunk = (s % 3 == 1) ? 7 : 0;
                    rc = tb_rt_case_options(&c, sets[k][s], err, sizeof err);
                    if (rc >= 0)
                        rc = tb_rt_run(&c, &res, err, sizeof err);
                    rows[k][s].cases++;
                    /* No fault here, so a run is a match, a mismatch or
                     * one that checked nothing, which fails as well. */
                    if (rc < 0 || res.verdict != TB_RT_MATCH) {
                        char (*nf)[288] = realloc(failed, (nfailed + 1) * sizeof *failed);
                        const char *tag = rc < 0 ? "ERROR" : tb_rt_verdict_name(res.verdict);

                        if (rc >= 0 && res.verdict == TB_RT_NOTHING_CHECKED)
                            rows[k][s].empty++;
                        else
                            rows[k][s].bad++;
                        if (nf) {
                            failed = nf;
                            snprintf(failed[nfailed++], sizeof failed[0], "%-16s %s", tag, id);
                        }
                        tb_cli_progress_clear(&pr);
                        if (rc < 0) {
                            errors++;
                            printf("ERROR %s: %s: %s\n", id, tb_err_str(rc), err);
                            continue;
                        }
                        if (res.verdict == TB_RT_NOTHING_CHECKED) {
                            printf("NOTHING CHECKED %s: ", id);
                            why_nothing(&c, &res, sets[k][s], stdout);
                        } else {
                            mismatches++;
                            if (reports++ < max_reports)
                                printf("%s", res.report);
                        }
                    }
                    if (res.sim.stop == TB_SIM_STOP_BUDGET)
                        cut++;
                    rows[k][s].run += res.sim.insns;
                    rows[k][s].checked += res.cmp.checked;
                    rows[k][s].bytes += res.enc.bytes;
                }
            }
        }
        free(sl.v);
    }
    tb_cli_progress_clear(&pr);

    printf("\nround trip: sim -> encoder -> decoder -> comparator, %zu programs "
           "(smc left out: the simulator does not follow self-modifying code)\n\n", np - 1);
    printf("%-6s %-22s %6s %6s %6s %12s %12s %10s %9s\n", "proto", "options", "cases", "bad",
           "empty", "insns run", "checked", "bytes", "bits/insn");
    for (size_t k = 0; k < NPROTO; k++) {
        for (size_t s = 0; s < nsets[k]; s++) {
            const row *r = &rows[k][s];

            if (!r->cases)
                continue;
            printf("%-6s %-22s %6u %6u %6u %12llu %12llu %10llu %9.3f\n",
                   k == 4 ? "v7-M" : tb_protocol_name(protos[k]), *sets[k][s] ? sets[k][s] : "plain", r->cases,
                   r->bad, r->empty, (unsigned long long)r->run,
                   (unsigned long long)r->checked, (unsigned long long)r->bytes,
                   bits(r->bytes, r->run));
            tot.cases += r->cases;
            tot.bad += r->bad;
            tot.empty += r->empty;
            tot.run += r->run;
            tot.checked += r->checked;
            tot.bytes += r->bytes;
        }
    }
    printf("%-6s %-22s %6u %6u %6u %12llu %12llu %10llu %9.3f\n", "all", "", tot.cases,
           tot.bad, tot.empty, (unsigned long long)tot.run, (unsigned long long)tot.checked,
           (unsigned long long)tot.bytes, bits(tot.bytes, tot.run));
    printf("(bad: mismatches and errors; empty: cases that checked no instruction, "
           "failures too)\n");
    if (cut)
        printf("%u of %u cases were cut by their budget (the scenario's max_insns, capped by "
               "--max %llu) before their program ended: checked that far\n", cut, tot.cases,
               (unsigned long long)max);
    if (tot.bad || tot.empty) {
        printf("\n%u of %u cases FAILED: %u mismatch(es), %u error(s), %u checked nothing:\n",
               tot.bad + tot.empty, tot.cases, mismatches, errors, tot.empty);
        for (size_t i = 0; i < nfailed; i++)
            printf("  %s\n", failed[i]);
    } else if (tot.cases) {
        printf("\nall %u cases match\n", tot.cases);
    } else {
        printf("\nno case ran%s%s%s\n", only ? " (--only " : "", only ? only : "",
               only ? " matches none)" : "");
    }
    for (size_t i = 0; i < np; i++)
        free(progs[i]);
    free(progs);
    free(failed);
    return mismatches ? RT_EXIT_MISMATCH
           : errors   ? RT_EXIT_ERROR
           : tot.empty || !tot.cases ? RT_EXIT_NOTHING
                                     : RT_EXIT_MATCH;
}

int tb_cli_roundtrip(int argc, char **argv)
{
    const char *prog = NULL, *scn = NULL, *proto = NULL, *opts = NULL, *out = NULL;
    const char *pdir = "build/vectors/programs", *vdir = "vectors", *only = NULL;
    const char *truth = NULL, *vcd = NULL;
    bool raw = false, do_suite = false, quiet = false, has_max = false, has_cpu = false;
    tb_sim_cpu cpu = TB_SIM_CPU_A15;
    uint64_t max = 0;
    size_t chunk = 0;
    unsigned reports = 3;
    tb_rt_fault fault = {TB_RT_FAULT_NONE, 0, 0};

    if (tb_cli_wants_help(argc, argv))
        return usage_to(stdout, 0);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end;

        if (!strcmp(a, "--suite")) {
            do_suite = true;
            continue;
        }
        if (!strcmp(a, "--quiet")) {
            quiet = true;
            continue;
        }
        if (a[0] != '-') {
            if (prog)
                return usage();
            prog = a;
            continue;
        }
        if (!v)
            return usage();
        i++;
        if (!strcmp(a, "--scenario"))
            scn = v;
        else if (!strcmp(a, "--protocol") &&
                 (!strcmp(v, "ptm") || !strcmp(v, "etmv3") || !strcmp(v, "etmv1") ||
                  !strcmp(v, "etmv2")))
            proto = v;
        else if (!strcmp(a, "--options"))
            opts = v;
        else if (!strcmp(a, "--buffer") && (!strcmp(v, "raw") || !strcmp(v, "coresight")))
            raw = !strcmp(v, "raw");
        else if (!strcmp(a, "--out"))
            out = v;
        else if (!strcmp(a, "--programs"))
            pdir = v;
        else if (!strcmp(a, "--vectors"))
            vdir = v;
        else if (!strcmp(a, "--only"))
            only = v;
        else if (!strcmp(a, "--max") && tb_cli_parse_budget(v, &max) == 0)
            has_max = true;
        else if (!strcmp(a, "--truth"))
            truth = v;
        else if (!strcmp(a, "--vcd"))
            vcd = v;
        else if (!strcmp(a, "--cpu")) {
            if (tb_cli_cpu_parse("roundtrip", v, &cpu) < 0)
                return RT_EXIT_USAGE;
            has_cpu = true;
        }
        else if (!strcmp(a, "--chunk") && (chunk = strtoull(v, &end, 0), !*end))
            ;
        else if (!strcmp(a, "--reports") && (reports = (unsigned)strtoul(v, &end, 0), !*end))
            ;
        else if (!strcmp(a, "--fault") && parse_fault(v, &fault) == 0)
            ;
        else
            return usage();
    }
    if (do_suite)
        return prog || truth || vcd || has_cpu ? usage()
                             : suite(pdir, vdir, proto, max ? max : 200000, only, reports, quiet);
    if (!prog || (out && !proto))
        return usage();
    if (vcd && (!proto || (strcmp(proto, "etmv1") && strcmp(proto, "etmv2")) || !out)) {
        fprintf(stderr, "tracebench roundtrip: --vcd: needs --protocol etmv1|etmv2 (a trace port "
                "capture; %s has no port signals) and --out DIR\n", proto ? proto : "ptm/etmv3");
        return RT_EXIT_USAGE;
    }
    return one(prog, scn, proto, opts, raw, has_max, max, chunk, out, vcd, truth, quiet, &fault,
               has_cpu, cpu);
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
