/* Shared by test_profile and test_cli_analysis (tb_truth.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tb_test.h"
#include "tb_truth.h"

static void add_f(tb_prof *p, const char *name, unsigned long long n)
{
    for (int i = 0; i < p->nf; i++)
        if (!strcmp(p->f[i].name, name)) {
            p->f[i].n += n;
            return;
        }
    cr_assert_lt(p->nf, TB_PROF_MAXF);
    snprintf(p->f[p->nf].name, 128, "%s", name);
    p->f[p->nf++].n = n;
}

static void add_c(tb_prof *p, const char *a, const char *b, unsigned long long calls,
                  unsigned long long incl)
{
    for (int i = 0; i < p->nc; i++)
        if (!strcmp(p->c[i].caller, a) && !strcmp(p->c[i].callee, b)) {
            p->c[i].calls += calls;
            p->c[i].incl += incl;
            return;
        }
    cr_assert_lt(p->nc, TB_PROF_MAXF);
    snprintf(p->c[p->nc].caller, 128, "%s", a);
    snprintf(p->c[p->nc].callee, 128, "%s", b);
    p->c[p->nc].calls = calls;
    p->c[p->nc++].incl = incl;
}

bool tb_prof_truth(const char *dir, const char *syms, tb_prof *p)
{
    char cmd[4096], *o, *save = NULL;
    int rc;

    memset(p, 0, sizeof *p);
    snprintf(cmd, sizeof cmd, "%s/tb_truthprof %s %s", TB_BINARY_DIR, dir, syms);
    rc = tb_test_sh(cmd, &o);
    if (rc == 1 && strstr(o, "tb_truthprof: ")) {
        free(o);
        return false;
    }
    cr_assert_eq(rc, 0, "%s: %s", cmd, o);
    for (char *l = strtok_r(o, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char a[128], b[128];
        unsigned long long x, y;

        if (sscanf(l, "total %llu", &x) == 1)
            p->total = x;
        else if (sscanf(l, "func %127s %llu", a, &x) == 2)
            add_f(p, a, x);
        else if (sscanf(l, "call %127s %127s %llu %llu", a, b, &x, &y) == 4)
            add_c(p, a, b, x, y);
        else
            cr_assert_fail("%s: %s", cmd, l);
    }
    free(o);
    return true;
}

/* A callgrind file by the format's rules (valgrind's docs/cl-format): a
 * cost line after calls= is the call's inclusive cost, any other one the
 * current fn's exclusive cost (its first event: instructions). */
void tb_prof_callgrind(const char *path, tb_prof *p)
{
    char *txt = tb_test_slurp(path, NULL), *save = NULL, fn[128] = "", cfn[128] = "";
    unsigned long long calls = 0;
    bool after_calls = false;

    memset(p, 0, sizeof *p);
    for (char *l = strtok_r(txt, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        unsigned line;
        unsigned long long cost;

        if (sscanf(l, "summary: %llu", &cost) == 1)
            p->total = cost;
        else if (!strncmp(l, "fn=", 3))
            snprintf(fn, sizeof fn, "%s", l + 3);
        else if (!strncmp(l, "cfn=", 4))
            snprintf(cfn, sizeof cfn, "%s", l + 4);
        else if (sscanf(l, "calls=%llu", &calls) == 1)
            after_calls = true;
        else if (sscanf(l, "%u %llu", &line, &cost) == 2) {
            if (after_calls)
                add_c(p, fn, cfn, calls, cost);
            else
                add_f(p, fn, cost);
            after_calls = false;
        }
    }
    free(txt);
}

void tb_prof_expect_equal(const char *v, const tb_prof *t, const tb_prof *d)
{
    cr_expect_eq(d->total, t->total, "%s: total %llu, the truth %llu", v, d->total, t->total);
    cr_expect_eq(d->nf, t->nf, "%s: %d functions, the truth %d", v, d->nf, t->nf);
    for (int i = 0; i < t->nf; i++) {
        int j;

        for (j = 0; j < d->nf && strcmp(d->f[j].name, t->f[i].name); j++)
            ;
        cr_expect(j < d->nf && d->f[j].n == t->f[i].n, "%s: %s ran %llu, the truth %llu", v,
                  t->f[i].name, j < d->nf ? d->f[j].n : 0, t->f[i].n);
    }
    cr_expect_eq(d->nc, t->nc, "%s: %d call edges, the truth %d", v, d->nc, t->nc);
    for (int i = 0; i < t->nc; i++) {
        int j;

        for (j = 0; j < d->nc && (strcmp(d->c[j].caller, t->c[i].caller) ||
                                  strcmp(d->c[j].callee, t->c[i].callee));
             j++)
            ;
        cr_expect(j < d->nc && d->c[j].calls == t->c[i].calls && d->c[j].incl == t->c[i].incl,
                  "%s: %s -> %s: %llu calls, %llu inclusive; the truth %llu, %llu", v,
                  t->c[i].caller, t->c[i].callee, j < d->nc ? d->c[j].calls : 0,
                  j < d->nc ? d->c[j].incl : 0, t->c[i].calls, t->c[i].incl);
    }
}

