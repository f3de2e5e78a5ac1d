/*
 * Running the decoder: one /bin/sh -c process group per run, stdout and
 * stderr read through pipes as they come (the comparison streams, so
 * memory does not grow with the output), at most `jobs` at once, each
 * killed at its deadline.  A run is one unit (the command names {id}) or
 * all the claimed sources of one vector (then lines say which source
 * they are from).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conform.h"
#include "tracebench/snapshot.h"
#include "tracebench/types.h"

#define MAX_RUN_UNITS 32
#define LINE_MAX_BYTES 65536

const char *tb_conform_status_name(tb_conform_status s)
{
    switch (s) {
    case TB_CONFORM_PASS: return "PASS";
    case TB_CONFORM_FAIL: return "FAIL";
    case TB_CONFORM_CRASH: return "CRASH";
    case TB_CONFORM_TIMEOUT: return "TIMEOUT";
    case TB_CONFORM_NO_OUTPUT: return "NO OUTPUT";
    case TB_CONFORM_ERROR: return "ERROR";
    case TB_CONFORM_UNSUPPORTED: return "UNSUPPORTED";
    case TB_CONFORM_STATUS_COUNT: break;
    }
    return "?";
}

struct job;

typedef struct ujob {
    size_t unit;
    const tb_conform_unit *u;
    tb_conform_cmp *cmp;
    tb_conform_reader *rd;
    tb_memimage *mem;
    struct job *job;
    bool bad_expect;           /* the expected file is broken */
} ujob;

typedef struct job {
    bool active;
    pid_t pid;
    int fd_out, fd_err;
    double start, deadline;
    bool timed_out, exited;
    int status;
    size_t nu;
    ujob u[MAX_RUN_UNITS];
    char line[LINE_MAX_BYTES];
    size_t line_len;
    bool line_skip;            /* past a line too long: up to its end */
    uint64_t lineno;
    const char *cur_raw;
    char err_first[200];       /* stderr's first line */
    size_t err_len;
    bool err_done;
    uint64_t out_bytes;
} job;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool claimed(const tb_conform_opts *o, const char *protocol)
{
    if (!o->protocols)
        return true;
    for (size_t k = 0; k < o->n_protocols; k++)
        if (!strcmp(o->protocols[k], protocol))
            return true;
    return false;
}

/* The dumps of u->memory as an image (mem_*.bin at their addresses). */
static tb_memimage *load_memory(const tb_conform_unit *u)
{
    tb_memimage *m = tb_memimage_new();
    const char *p = u->memory;
    char err[256];

    if (!m)
        return NULL;
    while (*p) {
        size_t n = strcspn(p, "\n");
        char word[TB_CONFORM_PATH + 16];
        char *colon;

        snprintf(word, sizeof word, "%.*s", (int)n, p);
        colon = strchr(word, ':');
        if (colon) {
            *colon = '\0';
            tb_memimage_add_file(m, (uint32_t)strtoul(word, NULL, 16), colon + 1, err,
                                 sizeof err);
        }
        p += n;
        if (*p)
            p++;
    }
    return m;
}

/* The values a run's placeholders take: the unit's, or for one run over
 * a vector's sources, their protocols joined and their dumps together. */
static void run_unit(const job *j, tb_conform_unit *ru)
{
    *ru = *j->u[0].u;
    if (j->nu == 1)
        return;
    ru->trace_id = -1;
    snprintf(ru->name, sizeof ru->name, "%s", ru->vector);
    for (size_t k = 1; k < j->nu; k++) {
        const tb_conform_unit *u = j->u[k].u;
        const char *p;
        size_t used;

        if (!strstr(ru->protocol, u->protocol)) {
            used = strlen(ru->protocol);
            snprintf(ru->protocol + used, sizeof ru->protocol - used, ",%s", u->protocol);
        }
        for (p = u->memory; *p;) {
            size_t n = strcspn(p, "\n");
            char word[TB_CONFORM_PATH + 16];

            snprintf(word, sizeof word, "%.*s", (int)n, p);
            if (!strstr(ru->memory, word)) {
                used = strlen(ru->memory);
                snprintf(ru->memory + used, sizeof ru->memory - used, "%s%s", used ? "\n" : "",
                         word);
            }
            p += n;
            if (*p)
                p++;
        }
    }
}

static void setenv_unit(const tb_conform_unit *u)
{
    char id[8] = "";

    if (u->trace_id >= 0)
        snprintf(id, sizeof id, "0x%02x", (unsigned)u->trace_id);
    setenv("TB_CONFORM_DIR", u->dir, 1);
    setenv("TB_CONFORM_ID", id, 1);
    setenv("TB_CONFORM_PROTOCOL", u->protocol, 1);
    setenv("TB_CONFORM_MEMORY", u->memory, 1);
    setenv("TB_CONFORM_NAME", u->name, 1);
}

static int spawn(job *j, const char *cmd, const tb_conform_unit *ru, char *err, size_t errlen)
{
    int po[2], pe[2];

    if (pipe(po) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return TB_ERR_IO;
    }
    if (pipe(pe) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        close(po[0]);
        close(po[1]);
        return TB_ERR_IO;
    }
    fflush(NULL);
    j->pid = fork();
    if (j->pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(po[0]);
        close(po[1]);
        close(pe[0]);
        close(pe[1]);
        return TB_ERR_IO;
    }
    if (j->pid == 0) {
        int devnull = open("/dev/null", O_RDONLY);

        /* Its own process group, so that a timeout ends the decoder and
         * whatever it started, not only the shell. */
        setpgid(0, 0);
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        if (devnull >= 0) {
            dup2(devnull, 0);
            close(devnull);
        }
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]);
        close(po[1]);
        close(pe[0]);
        close(pe[1]);
        setenv_unit(ru);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    setpgid(j->pid, j->pid); /* also here: whichever runs first */
    close(po[1]);
    close(pe[1]);
    j->fd_out = po[0];
    j->fd_err = pe[0];
    fcntl(j->fd_out, F_SETFL, fcntl(j->fd_out, F_GETFL) | O_NONBLOCK);
    fcntl(j->fd_err, F_SETFL, fcntl(j->fd_err, F_GETFL) | O_NONBLOCK);
    fcntl(j->fd_out, F_SETFD, FD_CLOEXEC);
    fcntl(j->fd_err, F_SETFD, FD_CLOEXEC);
    return 0;
}

/* An item of the line for unit uj: only its own source's. */
static int route(void *ctx, const tb_conform_item *it)
{
    ujob *uj = ctx;
    job *j = uj->job;
    tb_conform_item copy;

    if (j->nu == 1) {
        /* One source asked for: a line naming another source of a
         * multi-source vector is that source's; on a one-source vector
         * the ID conventions may differ (a raw source), so it counts. */
        if (it->id >= 0 && uj->u->n_sources > 1 && it->id != uj->u->trace_id)
            return 0;
    } else if (it->id < 0) {
        copy = *it;
        copy.kind = TB_CI_BAD;
        snprintf(copy.word, sizeof copy.word, "the line names no trace source; put {id} in the "
                                              "command");
        it = &copy;
    } else if (it->id != uj->u->trace_id) {
        return 0;
    }
    if (tb_conform_cmp_push(uj->cmp, it, j->lineno, j->cur_raw) < 0)
        uj->bad_expect = true;
    return 0;
}

static void out_line(job *j)
{
    j->line[j->line_len] = '\0';
    if (j->line_len && j->line[j->line_len - 1] == '\r')
        j->line[--j->line_len] = '\0';
    j->lineno++;
    j->cur_raw = j->line;
    for (size_t k = 0; k < j->nu; k++) {
        ujob *uj = &j->u[k];

        if (!tb_conform_cmp_diverged(uj->cmp) && !uj->bad_expect)
            tb_conform_reader_line(uj->rd, j->line, route, uj);
    }
    j->line_len = 0;
}

static void take_out(job *j, const char *data, size_t n)
{
    j->out_bytes += n;
    for (size_t k = 0; k < n; k++) {
        char c = data[k];

        if (c == '\n') {
            if (j->line_skip)
                j->line_skip = false;
            else
                out_line(j);
            continue;
        }
        if (j->line_skip)
            continue;
        if (j->line_len + 1 >= sizeof j->line) {
            /* A line longer than any form has: read as far as it goes. */
            out_line(j);
            j->line_skip = true;
            continue;
        }
        j->line[j->line_len++] = c;
    }
}

static void take_err(job *j, const char *data, size_t n)
{
    for (size_t k = 0; k < n && !j->err_done; k++) {
        if (data[k] == '\n') {
            if (j->err_len)
                j->err_done = true;
            continue;
        }
        if (j->err_len + 1 < sizeof j->err_first)
            j->err_first[j->err_len++] = data[k];
        j->err_first[j->err_len] = '\0';
    }
}

/* Reads what fd has; closes it at EOF. */
static void drain(job *j, int *fd, bool out)
{
    char buf[16384];

    for (;;) {
        ssize_t n = read(*fd, buf, sizeof buf);

        if (n > 0) {
            if (out)
                take_out(j, buf, (size_t)n);
            else
                take_err(j, buf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        close(*fd);
        *fd = -1;
        if (out && j->line_len && !j->line_skip)
            out_line(j); /* the last line, without its newline */
        return;
    }
}

/* Signals that mean the program died of a fault, as a shell reports
 * them (128 + N) when it does not exec the decoder itself. */
static bool crash_signal(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT || sig == SIGFPE || sig == SIGILL ||
           sig == SIGKILL || sig == SIGTRAP || sig == SIGSYS;
}

static void add_note(tb_conform_result *r, const char *fmt, const char *a, const char *b)
{
    size_t used = strlen(r->note);

    if (used + 3 >= sizeof r->note)
        return;
    snprintf(r->note + used, sizeof r->note - used, used ? "; " : "");
    used = strlen(r->note);
    snprintf(r->note + used, sizeof r->note - used, fmt, a, b);
}

static void finish_job(const tb_conform_opts *o, job *j, tb_conform_result *results,
                       tb_conform_done_cb cb, void *ctx)
{
    double secs = now() - j->start;
    int sig = 0, code = -1;

    if (WIFSIGNALED(j->status)) {
        sig = WTERMSIG(j->status);
    } else if (WIFEXITED(j->status)) {
        code = WEXITSTATUS(j->status);
        if (code > 128 && code < 128 + 65 && crash_signal(code - 128))
            sig = code - 128;
    }
    for (size_t k = 0; k < j->nu; k++) {
        ujob *uj = &j->u[k];
        tb_conform_result *r = &results[uj->unit];
        int f = uj->bad_expect ? -1 : tb_conform_cmp_finish(uj->cmp);
        char num[32];

        memset(r, 0, sizeof *r);
        r->ran = true;
        r->seconds = secs;
        r->exit_code = code;
        r->signal = sig;
        r->counts = *tb_conform_cmp_counts(uj->cmp);
        if (f < 0) {
            r->status = TB_CONFORM_ERROR;
            add_note(r, "%s%s", tb_conform_cmp_error(uj->cmp), "");
        } else if (j->timed_out) {
            r->status = TB_CONFORM_TIMEOUT;
            snprintf(num, sizeof num, "%g", o->timeout);
            add_note(r, "no end after %s s (--timeout); killed%s", num, "");
        } else if (sig) {
            r->status = TB_CONFORM_CRASH;
            add_note(r, "killed by %s%s", strsignal(sig), WIFSIGNALED(j->status) ? "" :
                     " (as its shell reports it)");
        } else if (!r->counts.got_insns && r->counts.exp_insns) {
            r->status = TB_CONFORM_NO_OUTPUT;
        } else if (f > 0) {
            r->status = TB_CONFORM_FAIL;
            r->div = *tb_conform_cmp_divergence(uj->cmp);
            tb_conform_locate(o->cov, uj->u, &r->div);
        } else {
            r->status = TB_CONFORM_PASS;
        }
        if (r->status != TB_CONFORM_PASS && r->status != TB_CONFORM_ERROR) {
            if (code > 0 && !sig) {
                snprintf(num, sizeof num, "%d", code);
                add_note(r, "exit %s%s", num, code == 127 ? " (command not found?)" : "");
            }
            if (tb_conform_reader_diag(uj->rd)[0])
                add_note(r, "it printed: %s%s", tb_conform_reader_diag(uj->rd), "");
            if (j->err_first[0])
                add_note(r, "stderr: %s%s", j->err_first, "");
            if (r->status == TB_CONFORM_NO_OUTPUT && !j->out_bytes)
                add_note(r, "stdout was empty%s%s", "", "");
        }
        tb_conform_cmp_free(uj->cmp);
        tb_conform_reader_free(uj->rd);
        tb_memimage_free(uj->mem);
        uj->cmp = NULL;
        uj->rd = NULL;
        uj->mem = NULL;
        if (cb)
            cb(ctx, uj->unit, r);
    }
    j->active = false;
}

static void fail_unit(size_t i, tb_conform_status st, const char *why, tb_conform_result *results,
                      tb_conform_done_cb cb, void *ctx)
{
    tb_conform_result *r = &results[i];

    memset(r, 0, sizeof *r);
    r->status = st;
    r->exit_code = -1;
    snprintf(r->note, sizeof r->note, "%s", why);
    if (cb)
        cb(ctx, i, r);
}

/* Starts the run of units[idx[0..n)].  On failure every unit is ERROR. */
static void start_job(const tb_conform_opts *o, job *j, const tb_conform_unit *units,
                      const size_t *idx, size_t n, tb_conform_result *results,
                      tb_conform_done_cb cb, void *ctx)
{
    tb_conform_unit ru;
    char *cmd = malloc(16384);
    char err[512] = "";
    size_t k;

    memset(j, 0, sizeof *j);
    j->fd_out = j->fd_err = -1;
    j->nu = n;
    for (k = 0; k < n; k++) {
        ujob *uj = &j->u[k];

        uj->unit = idx[k];
        uj->u = &units[idx[k]];
        uj->job = j;
        if (o->format != TB_CONFORM_ADDR)
            uj->mem = load_memory(uj->u);
        uj->rd = tb_conform_reader_new(o->format, uj->u->protocol, uj->mem);
        uj->cmp = tb_conform_cmp_new(uj->u->expect, err, sizeof err);
        if (!uj->rd || !uj->cmp)
            break;
    }
    if (k == n && cmd) {
        run_unit(j, &ru);
        if (tb_conform_command(o->command, &ru, cmd, 16384, err, sizeof err) >= 0 &&
            spawn(j, cmd, &ru, err, sizeof err) >= 0) {
            free(cmd);
            j->active = true;
            j->start = now();
            j->deadline = j->start + o->timeout;
            return;
        }
    }
    free(cmd);
    for (k = 0; k < n; k++) {
        tb_conform_cmp_free(j->u[k].cmp);
        tb_conform_reader_free(j->u[k].rd);
        tb_memimage_free(j->u[k].mem);
        fail_unit(idx[k], TB_CONFORM_ERROR, err[0] ? err : "out of memory", results, cb, ctx);
    }
}

int tb_conform_run(const tb_conform_opts *o, const tb_conform_unit *units, size_t n,
                   tb_conform_result *results, tb_conform_done_cb cb, void *ctx, char *err,
                   size_t errlen)
{
    bool per_source = tb_conform_per_source(o->command);
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    size_t *run_start = malloc((n + 1) * sizeof *run_start);
    size_t n_runs = 0, n_idx = 0, next = 0, jobs = o->jobs ? o->jobs : 1;
    job *js = calloc(jobs, sizeof *js);
    struct pollfd *pfd = calloc(2 * jobs, sizeof *pfd);
    int rc = 0;

    if (!idx || !run_start || !js || !pfd) {
        free(idx);
        free(run_start);
        free(js);
        free(pfd);
        snprintf(err, errlen, "out of memory");
        return TB_ERR_NOMEM;
    }
    /* The runs: claimed, loadable units; a vector's together unless the
     * command names {id}. */
    for (size_t i = 0; i < n; i++) {
        const tb_conform_unit *u = &units[i];

        if (u->load_error[0]) {
            fail_unit(i, TB_CONFORM_ERROR, u->load_error, results, cb, ctx);
            continue;
        }
        if (!claimed(o, u->protocol)) {
            fail_unit(i, TB_CONFORM_UNSUPPORTED, "", results, cb, ctx);
            continue;
        }
        if (per_source || !n_runs || strcmp(units[idx[run_start[n_runs - 1]]].dir, u->dir) ||
            n_idx - run_start[n_runs - 1] >= MAX_RUN_UNITS)
            run_start[n_runs++] = n_idx;
        idx[n_idx++] = i;
    }
    run_start[n_runs] = n_idx;

    for (;;) {
        size_t active = 0, np = 0;
        double t = now(), wait = 1.0;
        bool fdless = false, freed = false;

        for (size_t k = 0; k < jobs; k++)
            active += js[k].active;
        if (o->cancel && *o->cancel) {
            rc = TB_ERR_STOPPED;
            snprintf(err, errlen, "interrupted");
            break;
        }
        for (size_t k = 0; k < jobs && next < n_runs; k++)
            if (!js[k].active) {
                start_job(o, &js[k], units, idx + run_start[next],
                          run_start[next + 1] - run_start[next], results, cb, ctx);
                next++;
                active += js[k].active;
            }
        if (!active && next >= n_runs)
            break;
        for (size_t k = 0; k < jobs; k++) {
            job *j = &js[k];
            int st;

            if (!j->active)
                continue;
            if (!j->exited) {
                siginfo_t si;

                memset(&si, 0, sizeof si);
                if (waitid(P_PID, (id_t)j->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                    si.si_pid == j->pid) {
                    /* Whatever it left running in its group goes too (its
                     * output so far stays readable in the pipes); killed
                     * before the reaping, while its ID cannot be reused. */
                    kill(-j->pid, SIGKILL);
                    waitpid(j->pid, &st, 0);
                    j->exited = true;
                    j->status = st;
                }
            }
            if (t >= j->deadline) {
                if (!j->exited && !j->timed_out) {
                    j->timed_out = true;
                    kill(-j->pid, SIGKILL);
                    kill(j->pid, SIGKILL);
                } else if (j->exited && t >= j->deadline + 1.0) {
                    /* Something outside its group holds its pipes. */
                    if (j->fd_out >= 0)
                        drain(j, &j->fd_out, true);
                    if (j->fd_err >= 0)
                        drain(j, &j->fd_err, false);
                    if (j->fd_out >= 0)
                        close(j->fd_out);
                    if (j->fd_err >= 0)
                        close(j->fd_err);
                    j->fd_out = j->fd_err = -1;
                }
            }
            if (j->exited && j->fd_out < 0 && j->fd_err < 0) {
                finish_job(o, j, results, cb, ctx);
                freed = true;
                continue;
            }
            if (j->fd_out < 0 && j->fd_err < 0)
                fdless = true;
            if (j->fd_out >= 0)
                pfd[np++] = (struct pollfd){.fd = j->fd_out, .events = POLLIN};
            if (j->fd_err >= 0)
                pfd[np++] = (struct pollfd){.fd = j->fd_err, .events = POLLIN};
            if (j->deadline - t < wait)
                wait = j->deadline - t;
            if (j->exited && j->deadline + 1.0 - t < wait)
                wait = j->deadline + 1.0 - t;
        }
        if (freed)
            continue; /* a slot is free: start the next run first */
        if (fdless && wait > 0.01)
            wait = 0.01; /* its pipes closed, its exit not yet seen */
        if (wait < 0)
            wait = 0;
        if (poll(pfd, np, (int)(wait * 1000) + 1) < 0 && errno != EINTR) {
            rc = TB_ERR_IO;
            snprintf(err, errlen, "poll: %s", strerror(errno));
            break;
        }
        for (size_t k = 0; k < jobs; k++) {
            job *j = &js[k];

            if (!j->active)
                continue;
            if (j->fd_out >= 0)
                drain(j, &j->fd_out, true);
            if (j->fd_err >= 0)
                drain(j, &j->fd_err, false);
        }
    }
    if (rc < 0) {
        /* Interrupted: nothing keeps running. */
        for (size_t k = 0; k < jobs; k++) {
            job *j = &js[k];

            if (!j->active)
                continue;
            kill(-j->pid, SIGKILL);
            if (!j->exited)
                waitpid(j->pid, NULL, 0);
            if (j->fd_out >= 0)
                close(j->fd_out);
            if (j->fd_err >= 0)
                close(j->fd_err);
            for (size_t u = 0; u < j->nu; u++) {
                tb_conform_cmp_free(j->u[u].cmp);
                tb_conform_reader_free(j->u[u].rd);
                tb_memimage_free(j->u[u].mem);
            }
        }
    }
    free(idx);
    free(run_start);
    free(js);
    free(pfd);
    return rc;
}
