/*
 * The progress line of the long commands (sim, roundtrip, vectors): one
 * line on stderr rewritten in place with \r, at most five times a
 * second, so a long run shows that it is alive and how fast it goes.
 * Nothing at all when stderr is not a terminal (CI logs, pipes, tests)
 * or with --quiet: a log full of \r lines is unreadable.  The library
 * never prints; the commands sample its counters and call these.
 */
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define REFRESH_S 0.2

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tb_cli_progress_init(tb_cli_progress *p, bool quiet)
{
    memset(p, 0, sizeof *p);
    p->on = !quiet && isatty(STDERR_FILENO);
    p->start = p->last = now_s();
    p->last -= REFRESH_S; /* the first call may show at once */
}

void tb_cli_progress_restart(tb_cli_progress *p)
{
    p->start = now_s();
}

bool tb_cli_progress_due(tb_cli_progress *p)
{
    double t;

    if (!p->on)
        return false;
    t = now_s();
    if (t - p->last < REFRESH_S)
        return false;
    p->last = t;
    return true;
}

double tb_cli_progress_elapsed(const tb_cli_progress *p)
{
    return now_s() - p->start;
}

/* 1234567 insns -> "1.23M insns", bytes -> "1.23 MB" */
static void human(char *buf, size_t len, double v, const char *unit)
{
    static const char *const sfx[] = {"", "k", "M", "G", "T"};
    unsigned i = 0;

    while (v >= 1000.0 && i < 4) {
        v /= 1000.0;
        i++;
    }
    if (i == 0)
        snprintf(buf, len, "%.0f %s", v, unit);
    else if (!strcmp(unit, "B")) /* "7.80 MB" */
        snprintf(buf, len, "%.*f %sB", v < 10 ? 2 : v < 100 ? 1 : 0, v, sfx[i]);
    else /* "12.3M insns" */
        snprintf(buf, len, "%.*f%s %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, sfx[i], unit);
}

void tb_cli_progress_text(tb_cli_progress *p, const char *fmt, ...)
{
    char line[512];
    struct winsize ws;
    size_t width = 80, n;
    va_list ap;

    if (!p->on)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* A line longer than the terminal wraps, and \r then rewrites only
     * its last part: cut it to the width. */
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
        width = ws.ws_col;
    n = strlen(line);
    if (n > width - 1)
        line[width - 1] = '\0';
    fprintf(stderr, "\r\033[K%s", line);
    fflush(stderr);
    p->shown = true;
}

void tb_cli_progress_run(tb_cli_progress *p, const char *prefix, uint64_t insns,
                         uint64_t exceptions, uint64_t trace_bytes)
{
    char a[32], r[32], b[32], x[48] = "";
    double t;

    if (!p->on)
        return;
    t = tb_cli_progress_elapsed(p);
    human(a, sizeof a, (double)insns, "insns");
    human(r, sizeof r, t > 0 ? (double)insns / t : 0.0, "insns/s");
    human(b, sizeof b, (double)trace_bytes, "B");
    if (exceptions)
        snprintf(x, sizeof x, ", %llu exceptions", (unsigned long long)exceptions);
    tb_cli_progress_text(p, "%s%s%s%s (%s), %s of trace, %.1f s", prefix ? prefix : "",
                         prefix && *prefix ? " " : "", a, x, r, b, t);
}

void tb_cli_progress_clear(tb_cli_progress *p)
{
    if (!p->on || !p->shown)
        return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    p->shown = false;
}

int tb_cli_parse_budget(const char *s, uint64_t *out)
{
    char *end;

    if (!s || !*s)
        return -1;
    if (!strcmp(s, "unlimited") || !strcmp(s, "none")) {
        *out = 0;
        return 0;
    }
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    *out = strtoull(s, &end, 0);
    return *end || errno ? -1 : 0;
}
