/* tracebench conform --decoder 'COMMAND ... {dir} ...' [--format addr|opencsd|json]
 *                    [--protocols LIST] [--vectors DIR] [--only TEXT] [--timeout S]
 *                    [--json] [-j N] [--quiet]
 *
 * The conformance kit (issue 33): runs any decoder over the vectors and
 * gives a verdict per vector, then per protocol and per spec-coverage
 * variant.  The work is in vectors/conform/ (conform.h); this file reads
 * the command line, finds the vectors, and prints.
 * Exit (cli.h): 0 every vector run passes, 1 any does not, 2 usage,
 * 3 no vector was run, 4 a vector or the runs could not be set up,
 * 130/143 interrupted. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "conform.h"

int tb_cli_conform(int argc, char **argv);

static int usage_to(FILE *f, int rc)
{
    fprintf(f,
            "usage: tracebench conform --decoder 'COMMAND ... {dir} ...' [--format addr|opencsd|json]\n"
            "           [--protocols LIST] [--vectors DIR] [--only TEXT] [--timeout S] [--json]\n"
            "           [-j N] [--quiet]\n"
            "\n"
            "Runs your decoder on each conformance vector and compares what it prints with\n"
            "the vector's expected decode (decode.addr, from the emulator's ground truth),\n"
            "instruction by instruction: address, ISA, E/N.\n"
            "\n"
            "  --decoder CMD    the decoder's command line, run by /bin/sh once per vector\n"
            "                   (once per trace source when it names {id}), with:\n"
            "                     {dir}       the vector's snapshot directory\n"
            "                     {id}        the trace source's ID (0x10)\n"
            "                     {protocol}  ptm, etmv3, etmv1 or etmv2\n"
            "                     {memory}    its memory dumps as ADDR:FILE words\n"
            "                                 (--memory {memory}: --memory before each)\n"
            "                     {name}      the vector's name\n"
            "                   each quoted for the shell; also in the environment as\n"
            "                   TB_CONFORM_DIR, _ID, _PROTOCOL, _MEMORY, _NAME\n"
            "  --format F       what the decoder prints: addr (default; one instruction a\n"
            "                   line, docs/vectors.md), opencsd (trc_pkt_lister -decode's\n"
            "                   listing) or json (JSON lines, docs/vectors.md)\n"
            "  --protocols LIST the protocols the decoder claims (ptm,etmv3,etmv1,etmv2;\n"
            "                   default all): the other vectors are UNSUPPORTED, not run\n"
            "  --vectors DIR    a directory of vectors, or one vector (default: the\n"
            "                   installed share/tracebench/vectors, or the source tree's)\n"
            "  --only TEXT      the vectors whose name holds TEXT\n"
            "  --timeout S      seconds a run may take (default 60): then TIMEOUT\n"
            "  --json           the report as one JSON object (for CI)\n"
            "  -j N, --jobs N   N runs at once (default 1)\n"
            "  --quiet          no progress line (shown only on a terminal)\n"
            "\n"
            "verdicts: PASS; FAIL (the first divergence: expected line, got line, why, and\n"
            "  the packet there with its spec section); CRASH (killed by a signal);\n"
            "  TIMEOUT; NO OUTPUT (no instruction); ERROR (the vector would not load);\n"
            "  UNSUPPORTED (a protocol not in --protocols).  What the decoder prints in a\n"
            "  `# gap` of the expected decode is not an error; skipping traced code is.\n"
            "exit: 0 every vector run passes, 1 any does not, 2 usage, 3 no vector was\n"
            "      run, 4 a vector would not load (and none failed), 130/143 interrupted\n"
            "\n"
            "example (OpenCSD 1.3.3; ETMv1/ETMv2 are UNSUPPORTED):\n"
            "  tracebench conform --decoder 'trc_pkt_lister -ss_dir {dir} -decode\n"
            "      -logfilename /dev/stdout' --format opencsd --protocols etmv3,ptm\n");
    return rc;
}

/* ---- where the vectors are ---- */

static bool is_dir(const char *p)
{
    struct stat st;

    return p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The installed vectors (share/tracebench/vectors beside bin/, or where
 * the build was configured to install them), else the source tree's:
 * the source tree's first when this binary is the build tree's own. */
static bool default_vectors(char *out, size_t len, char *tried, size_t tlen)
{
    char exe[PATH_MAX], dir[PATH_MAX + 64];
    const char *cand[4];
    size_t n = 0;
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    bool in_build = false;

    dir[0] = '\0';
    if (k > 0) {
        char *slash;

        exe[k] = '\0';
        slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
#ifdef TB_CONFORM_BUILD_DIR
        {
            char b[PATH_MAX];

            in_build = realpath(TB_CONFORM_BUILD_DIR, b) && !strcmp(b, exe);
        }
#endif
        snprintf(dir, sizeof dir, "%s/%s", exe, TB_CONFORM_REL_VECTORS);
    }
#ifdef TB_CONFORM_SOURCE_VECTORS
    if (in_build)
        cand[n++] = TB_CONFORM_SOURCE_VECTORS;
#endif
    if (dir[0])
        cand[n++] = dir;
#ifdef TB_CONFORM_INSTALL_VECTORS
    cand[n++] = TB_CONFORM_INSTALL_VECTORS;
#endif
#ifdef TB_CONFORM_SOURCE_VECTORS
    if (!in_build)
        cand[n++] = TB_CONFORM_SOURCE_VECTORS;
#endif
    tried[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(tried);

        if (is_dir(cand[i]) && realpath(cand[i], out))
            return true;
        snprintf(tried + used, tlen - used, "%s%s", used ? ", " : "", cand[i]);
    }
    (void)len;
    return false;
}

/* ---- printing ---- */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20 || c == 0x7F)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

typedef struct report {
    const char *cmd;
    tb_conform_format format;
    const char *protocols;     /* as given, or NULL */
    const char *vdir;
    const char *cov_note;
    const tb_conform_unit *units;
    const tb_conform_result *res;
    size_t n;
    tb_conform_cov *cov;
    tb_conform_summary sum;
    int exit;
} report;

static void print_unit_text(const report *rp, size_t i)
{
    const tb_conform_unit *u = &rp->units[i];
    const tb_conform_result *r = &rp->res[i];
    const tb_conform_divergence *d = &r->div;

    printf("%-12s %-44s %-6s", tb_conform_status_name(r->status), u->name, u->protocol);
    if (r->ran)
        printf(" %7llu/%-7llu %6.2f s", (unsigned long long)r->counts.agreed,
               (unsigned long long)r->counts.exp_insns, r->seconds);
    printf("\n");
    if (r->status == TB_CONFORM_FAIL) {
        if (d->exp_line)
            printf("    expected  line %llu: %s\n", (unsigned long long)d->exp_line, d->exp_text);
        else
            printf("    expected  %s\n", d->exp_text);
        if (d->got_line)
            printf("    got       line %llu: %s\n", (unsigned long long)d->got_line, d->got_text);
        else
            printf("    got       %s\n", d->got_text);
        if (d->got_raw[0] && strcmp(d->got_raw, d->got_text))
            printf("              from: %s\n", d->got_raw);
        printf("    why       %s\n", d->why);
        if (d->n_context) {
            printf("    after    ");
            for (unsigned k = 0; k < d->n_context; k++)
                printf("%s %s", k ? " |" : "", d->context[k]);
            printf("\n");
        }
        if (d->located) {
            printf("    packet    index %llu", (unsigned long long)d->packet_index);
            if (d->packet_kind[0])
                printf(", %s", d->packet_kind);
            if (d->variants[0])
                printf(": %s", d->variants);
            printf("\n");
        } else if (d->locate_note[0]) {
            printf("    packet    not placed: %s\n", d->locate_note);
        }
    }
    if (r->note[0] && r->status != TB_CONFORM_PASS)
        printf("    note      %s\n", r->note);
}

static int cmp_var(const void *a, const void *b)
{
    const tb_conform_var_row *x = a, *y = b;
    double rx = x->holding ? (double)x->passed / x->holding : 1.0;
    double ry = y->holding ? (double)y->passed / y->holding : 1.0;

    if (rx != ry)
        return rx < ry ? -1 : 1;
    if (x->diverged_here != y->diverged_here)
        return x->diverged_here > y->diverged_here ? -1 : 1;
    return x->var < y->var ? -1 : x->var > y->var;
}

static void print_text(report *rp)
{
    const tb_conform_summary *s = &rp->sum;
    static const tb_conform_status cols[] = {TB_CONFORM_PASS, TB_CONFORM_FAIL, TB_CONFORM_CRASH,
                                             TB_CONFORM_TIMEOUT, TB_CONFORM_NO_OUTPUT,
                                             TB_CONFORM_ERROR, TB_CONFORM_UNSUPPORTED};
    tb_conform_var_row *fails;
    size_t nf = 0;

    printf("tracebench conform: %zu traces of the vectors in %s\n", rp->n, rp->vdir);
    printf("decoder: %s\nformat %s, protocols %s\n", rp->cmd, tb_conform_format_name(rp->format),
           rp->protocols ? rp->protocols : "all");
    if (rp->cov_note[0])
        printf("note: %s\n", rp->cov_note);
    printf("\n%-12s %-44s %-6s %15s %8s\n", "verdict", "vector", "proto", "agreed/expected",
           "time");
    for (size_t i = 0; i < rp->n; i++)
        print_unit_text(rp, i);

    printf("\nby protocol  %6s", "total");
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
        printf(" %s", cols[c] == TB_CONFORM_NO_OUTPUT ? "no-output" : tb_conform_status_name(cols[c]));
    printf("\n");
    for (size_t p = 0; p <= s->n_protos; p++) {
        const tb_conform_tally *t = p < s->n_protos ? &s->protos[p].t : &s->all;

        printf("  %-10s %6u", p < s->n_protos ? s->protos[p].protocol : "all", t->total);
        for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
            const char *h = cols[c] == TB_CONFORM_NO_OUTPUT ? "no-output"
                                                             : tb_conform_status_name(cols[c]);

            printf(" %*u", (int)strlen(h), t->n[cols[c]]);
        }
        printf("\n");
    }

    /* The variants of the vectors that did not pass, fewest passing first. */
    fails = malloc((s->n_vars ? s->n_vars : 1) * sizeof *fails);
    if (fails) {
        for (size_t k = 0; k < s->n_vars; k++)
            if (s->vars[k].passed < s->vars[k].holding)
                fails[nf++] = s->vars[k];
        qsort(fails, nf, sizeof *fails, cmp_var);
    }
    printf("\nby spec-coverage variant: ");
    if (!s->n_vars) {
        printf("no variant counts (the vectors' spec coverage could not be read)\n");
    } else if (!nf) {
        printf("every one of the %zu variants the vectors run hold passes\n", s->n_vars);
    } else {
        size_t shown = nf < 25 ? nf : 25;

        printf("%zu of the %zu variants held by the vectors run are in a vector that\n"
               "did not pass (fewest passing first; `here`: the first divergence's packet is one)\n",
               nf, s->n_vars);
        printf("  %-34s %7s %5s %5s  %s\n", "variant", "vectors", "pass", "here", "spec section");
        for (size_t k = 0; k < shown; k++)
            printf("  %-34s %7u %5u %5u  %s\n", tb_conform_cov_name(fails[k].var),
                   fails[k].holding, fails[k].passed, fails[k].diverged_here,
                   tb_conform_cov_section(rp->cov, fails[k].var));
        if (shown < nf)
            printf("  (%zu more: --json has them all)\n", nf - shown);
    }
    free(fails);
    printf("\nsummary: %u pass, %u fail, %u crash, %u timeout, %u no output, %u error, "
           "%u unsupported, of %u: %s\n",
           s->all.n[TB_CONFORM_PASS], s->all.n[TB_CONFORM_FAIL], s->all.n[TB_CONFORM_CRASH],
           s->all.n[TB_CONFORM_TIMEOUT], s->all.n[TB_CONFORM_NO_OUTPUT],
           s->all.n[TB_CONFORM_ERROR], s->all.n[TB_CONFORM_UNSUPPORTED], s->all.total,
           rp->exit == TB_EXIT_OK ? "CONFORMS" : rp->exit == TB_EXIT_NOTHING ? "NOTHING RUN"
                                                                            : "DOES NOT CONFORM");
}

static void json_tally(FILE *f, const tb_conform_tally *t)
{
    static const char *const keys[TB_CONFORM_STATUS_COUNT] = {
        "pass", "fail", "crash", "timeout", "no_output", "error", "unsupported"};

    fprintf(f, "{\"total\":%u", t->total);
    for (int k = 0; k < TB_CONFORM_STATUS_COUNT; k++)
        fprintf(f, ",\"%s\":%u", keys[k], t->n[k]);
    fprintf(f, "}");
}

static void print_json(report *rp)
{
    const tb_conform_summary *s = &rp->sum;
    FILE *f = stdout;

    fprintf(f, "{\"decoder\":");
    json_str(f, rp->cmd);
    fprintf(f, ",\"format\":\"%s\",\"protocols\":", tb_conform_format_name(rp->format));
    if (rp->protocols)
        json_str(f, rp->protocols);
    else
        fprintf(f, "null");
    fprintf(f, ",\"vectors_dir\":");
    json_str(f, rp->vdir);
    fprintf(f, ",\n\"results\":[\n");
    for (size_t i = 0; i < rp->n; i++) {
        const tb_conform_unit *u = &rp->units[i];
        const tb_conform_result *r = &rp->res[i];
        const tb_conform_divergence *d = &r->div;

        fprintf(f, "{\"name\":");
        json_str(f, u->name);
        fprintf(f, ",\"vector\":");
        json_str(f, u->vector);
        fprintf(f, ",\"protocol\":");
        json_str(f, u->protocol);
        fprintf(f, ",\"trace_id\":%d,\"status\":\"%s\"", u->trace_id,
                tb_conform_status_name(r->status));
        if (r->ran)
            fprintf(f, ",\"seconds\":%.3f,\"exit\":%d,\"signal\":%d,\"expected_insns\":%llu,"
                       "\"shown_insns\":%llu,\"agreed\":%llu,\"passed_in_gaps\":%llu",
                    r->seconds, r->exit_code, r->signal,
                    (unsigned long long)r->counts.exp_insns,
                    (unsigned long long)r->counts.got_insns, (unsigned long long)r->counts.agreed,
                    (unsigned long long)r->counts.gap_skipped);
        if (r->note[0]) {
            fprintf(f, ",\"note\":");
            json_str(f, r->note);
        }
        if (r->status == TB_CONFORM_FAIL) {
            fprintf(f, ",\"divergence\":{\"expected_line\":%llu,\"expected\":",
                    (unsigned long long)d->exp_line);
            json_str(f, d->exp_text);
            fprintf(f, ",\"got_line\":%llu,\"got\":", (unsigned long long)d->got_line);
            json_str(f, d->got_text);
            fprintf(f, ",\"got_raw\":");
            json_str(f, d->got_raw);
            fprintf(f, ",\"why\":");
            json_str(f, d->why);
            fprintf(f, ",\"context\":[");
            for (unsigned k = 0; k < d->n_context; k++) {
                fprintf(f, k ? "," : "");
                json_str(f, d->context[k]);
            }
            fprintf(f, "]");
            if (d->located) {
                fprintf(f, ",\"packet_index\":%llu,\"packet_kind\":",
                        (unsigned long long)d->packet_index);
                json_str(f, d->packet_kind);
                fprintf(f, ",\"variants\":[");
                for (unsigned k = 0; k < d->n_var_ids; k++) {
                    fprintf(f, "%s{\"id\":", k ? "," : "");
                    json_str(f, tb_conform_cov_name(d->var_ids[k]));
                    fprintf(f, ",\"section\":");
                    json_str(f, tb_conform_cov_section(rp->cov, d->var_ids[k]));
                    fprintf(f, "}");
                }
                fprintf(f, "]");
            } else {
                fprintf(f, ",\"packet_index\":null,\"locate_note\":");
                json_str(f, d->locate_note);
            }
            fprintf(f, "}");
        }
        fprintf(f, "}%s\n", i + 1 < rp->n ? "," : "");
    }
    fprintf(f, "],\n\"by_protocol\":{");
    for (size_t p = 0; p < s->n_protos; p++) {
        fprintf(f, "%s", p ? "," : "");
        json_str(f, s->protos[p].protocol);
        fprintf(f, ":");
        json_tally(f, &s->protos[p].t);
    }
    fprintf(f, "},\n\"by_variant\":[\n");
    for (size_t k = 0; k < s->n_vars; k++) {
        fprintf(f, "{\"id\":");
        json_str(f, tb_conform_cov_name(s->vars[k].var));
        fprintf(f, ",\"section\":");
        json_str(f, tb_conform_cov_section(rp->cov, s->vars[k].var));
        fprintf(f, ",\"vectors\":%u,\"pass\":%u,\"diverged_here\":%u}%s\n", s->vars[k].holding,
                s->vars[k].passed, s->vars[k].diverged_here, k + 1 < s->n_vars ? "," : "");
    }
    fprintf(f, "],\n\"totals\":");
    json_tally(f, &s->all);
    fprintf(f, ",\"exit\":%d}\n", rp->exit);
}

/* ---- the run ---- */

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}

typedef struct progress {
    tb_cli_progress pr;
    size_t done, total, bad;
} progress;

static void on_done(void *ctx, size_t unit, const tb_conform_result *r)
{
    progress *p = ctx;

    (void)unit;
    p->done++;
    p->bad += r->status != TB_CONFORM_PASS && r->status != TB_CONFORM_UNSUPPORTED;
    if (tb_cli_progress_due(&p->pr))
        tb_cli_progress_text(&p->pr, "conform: %zu/%zu traces, %zu not passing, %.1f s",
                             p->done, p->total, p->bad, tb_cli_progress_elapsed(&p->pr));
}

static bool parse_seconds(const char *v, double *out)
{
    char *end;

    errno = 0;
    *out = strtod(v, &end);
    return *v && !*end && !errno && *out > 0 && *out <= 86400;
}

int tb_cli_conform(int argc, char **argv)
{
    const char *decoder = NULL, *vectors = NULL, *only = NULL, *protocols = NULL;
    tb_conform_format format = TB_CONFORM_ADDR;
    double timeout = 60;
    unsigned long jobs = 1;
    bool json = false, quiet = false;
    char vdir[PATH_MAX], tried[4 * PATH_MAX], err[512] = "", note[512] = "";
    char *plist = NULL;
    const char *protos[16];
    size_t n_protos = 0;
    tb_conform_unit *all = NULL, *units;
    tb_conform_result *res;
    tb_conform_opts o;
    report rp;
    progress pg;
    int n, rc;
    size_t nu = 0;
    struct sigaction sa, old[2];

    if (tb_cli_wants_help(argc, argv))
        return usage_to(stdout, 0);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (!strcmp(a, "--json")) {
            json = true;
            continue;
        }
        if (!strcmp(a, "--quiet")) {
            quiet = true;
            continue;
        }
        if (strcmp(a, "--decoder") && strcmp(a, "--format") && strcmp(a, "--protocols") &&
            strcmp(a, "--vectors") && strcmp(a, "--only") && strcmp(a, "--timeout") &&
            strcmp(a, "-j") && strcmp(a, "--jobs"))
            return tb_cli_usage_error("conform", a[0] == '-' ? "unknown option '%s'"
                                                             : "'%s': conform takes no operand "
                                                               "(the decoder goes in --decoder)",
                                      a);
        if (!v)
            return tb_cli_usage_error("conform", "%s needs a value", a);
        i++;
        if (!strcmp(a, "--decoder")) {
            decoder = v;
        } else if (!strcmp(a, "--format")) {
            int f = tb_conform_format_parse(v);

            if (f < 0)
                return tb_cli_usage_error("conform", "--format %s: use addr, opencsd or json", v);
            format = (tb_conform_format)f;
        } else if (!strcmp(a, "--protocols")) {
            protocols = v;
        } else if (!strcmp(a, "--vectors")) {
            vectors = v;
        } else if (!strcmp(a, "--only")) {
            only = v;
        } else if (!strcmp(a, "--timeout")) {
            if (!parse_seconds(v, &timeout))
                return tb_cli_usage_error("conform", "--timeout %s: give seconds, more than 0 "
                                                     "(e.g. 30 or 0.5)", v);
        } else {
            char *end;

            errno = 0;
            jobs = strtoul(v, &end, 10);
            if (*v < '1' || *v > '9' || *end || errno || jobs > 256)
                return tb_cli_usage_error("conform", "%s %s: give a number of runs at once, "
                                                     "1 to 256", a, v);
        }
    }
    if (!decoder || !*decoder)
        return tb_cli_usage_error("conform", "no --decoder: give the decoder's command line, "
                                             "e.g. --decoder 'mydecoder {dir}'");
    {
        tb_conform_unit probe;

        memset(&probe, 0, sizeof probe);
        snprintf(probe.name, sizeof probe.name, "x");
        if (tb_conform_command(decoder, &probe, tried, sizeof tried, err, sizeof err) ==
            TB_ERR_INVAL)
            return tb_cli_usage_error("conform", "%s", err);
    }
    if (protocols) {
        char *save = NULL;

        if (tb_cli_options_empty_item(protocols) || !*protocols)
            return tb_cli_usage_error("conform", "--protocols %s: an empty item (two commas in "
                                                 "a row, or one at an end)", protocols);
        plist = strdup(protocols);
        if (!plist)
            return TB_EXIT_ERROR;
        for (char *t = strtok_r(plist, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (!tb_cli_protocol(t)) {
                /* t points into plist: report before freeing it. */
                int urc = tb_cli_usage_error("conform", "--protocols: unknown protocol '%s'; use "
                                                        "ptm, etmv3, etmv1 or etmv2, comma-separated",
                                             t);
                free(plist);
                return urc;
            }
            if (n_protos < sizeof protos / sizeof protos[0])
                protos[n_protos++] = t;
        }
    }

    if (vectors) {
        if (!realpath(vectors, vdir)) {
            fprintf(stderr, "tracebench conform: --vectors %s: %s\n", vectors, strerror(errno));
            free(plist);
            return TB_EXIT_ERROR;
        }
    } else if (!default_vectors(vdir, sizeof vdir, tried, sizeof tried)) {
        fprintf(stderr, "tracebench conform: no vectors found (looked in %s): give --vectors "
                        "DIR (vectors/generated in the source tree, or an unpacked "
                        "tracebench-vectors tarball)\n", tried);
        free(plist);
        return TB_EXIT_ERROR;
    }
    n = tb_conform_units(vdir, &all, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "tracebench conform: %s\n", err);
        free(plist);
        return TB_EXIT_ERROR;
    }
    units = all;
    for (int i = 0; i < n; i++)
        if (!only || strstr(all[i].name, only))
            units[nu++] = all[i];
    if (!nu) {
        fprintf(stderr, "tracebench conform: --only %s matches no vector in %s\n", only, vdir);
        free(all);
        free(plist);
        return TB_EXIT_NOTHING;
    }
    res = calloc(nu, sizeof *res);
    if (!res) {
        free(all);
        free(plist);
        return TB_EXIT_ERROR;
    }
    memset(&rp, 0, sizeof rp);
    rp.cov = tb_conform_cov_open(vdir, note, sizeof note);
    for (size_t i = 0; i < nu; i++)
        if (!units[i].load_error[0])
            tb_conform_cov_vector(&units[i], err, sizeof err);

    memset(&o, 0, sizeof o);
    o.command = decoder;
    o.format = format;
    o.protocols = protocols ? protos : NULL;
    o.n_protocols = n_protos;
    o.timeout = timeout;
    o.jobs = (unsigned)jobs;
    o.cov = rp.cov;
    o.cancel = &interrupted;
    memset(&pg, 0, sizeof pg);
    tb_cli_progress_init(&pg.pr, quiet);
    pg.total = nu;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old[0]);
    sigaction(SIGTERM, &sa, &old[1]);
    rc = tb_conform_run(&o, units, nu, res, on_done, &pg, err, sizeof err);
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
    tb_cli_progress_clear(&pg.pr);
    if (rc < 0) {
        int sig = interrupted;

        fprintf(stderr, "tracebench conform: %s%s\n", err,
                sig ? "; the decoder runs were stopped" : "");
        tb_conform_cov_free(rp.cov);
        free(res);
        free(all);
        free(plist);
        return sig ? 128 + sig : TB_EXIT_ERROR;
    }
    rp.cmd = decoder;
    rp.format = format;
    rp.protocols = protocols;
    rp.vdir = vdir;
    rp.cov_note = note;
    rp.units = units;
    rp.res = res;
    rp.n = nu;
    if (tb_conform_summarize(units, res, nu, &rp.sum) < 0) {
        fprintf(stderr, "tracebench conform: out of memory\n");
        rc = TB_EXIT_ERROR;
    } else {
        const tb_conform_tally *t = &rp.sum.all;
        unsigned run = t->total - t->n[TB_CONFORM_UNSUPPORTED] - t->n[TB_CONFORM_ERROR];

        rp.exit = t->n[TB_CONFORM_FAIL] || t->n[TB_CONFORM_CRASH] || t->n[TB_CONFORM_TIMEOUT] ||
                          t->n[TB_CONFORM_NO_OUTPUT]
                      ? TB_EXIT_DIFF
                  : t->n[TB_CONFORM_ERROR] ? TB_EXIT_ERROR
                  : !run                   ? TB_EXIT_NOTHING
                                           : TB_EXIT_OK;
        if (json)
            print_json(&rp);
        else
            print_text(&rp);
        rc = rp.exit;
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "tracebench conform: cannot write the report: %s\n",
                    strerror(errno));
            rc = tb_cli_exit_worse(rc, TB_EXIT_ERROR);
        }
        tb_conform_summary_fini(&rp.sum);
    }
    tb_conform_cov_free(rp.cov);
    free(res);
    free(all);
    free(plist);
    return rc;
}
