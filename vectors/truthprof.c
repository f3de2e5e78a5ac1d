/*
 * tb_truthprof: a vector's expected profile from its ground truth
 * alone, for test_profile.  Like tb_truthcov (truthcov.c) it links
 * nothing of tracebench: it reads DIR/truth.txt (sim/truth.c's text
 * form), the protocol from DIR's .ini files, and the program's functions
 * from `arm-none-eabi-readelf -sSW ELF` output (SYMS), so the profile
 * `tracebench profile` gives is checked against the emulator's run.
 *
 *   tb_truthprof DIR SYMS
 *
 * Output, one line each:
 *   total N                               instructions the trace shows
 *   func NAME N                           exclusive instructions
 *   call CALLER CALLEE CALLS INCLUSIVE    per caller/callee pair
 * NAME: the FUNC symbol holding the code (one without a size reaches to
 * the next FUNC symbol or its section's end), else the entry address
 * (0x%08X) of the call or exception that entered the code.  The rules
 * are profile.h's, applied to the truth's records:
 *   - an instruction an exception cancelled (`cancelled`, ret= its
 *     address) did not run (as tb_truthcov);
 *   - a call is a taken branch with link (direct-link, indirect-link),
 *     an exception record another kind of call; the callee is the
 *     function of the next instruction that runs; it returns when an
 *     instruction that runs after a taken branch or an exception is at
 *     the return address (the link instruction's next address, the
 *     exception's ret=) of a frame on the stack, topmost first, ending
 *     every frame above (one an exception cancelled neither enters nor
 *     returns: the trace never shows it);
 *   - a debug halt (`debug-halt`) is neither a call nor a return: the
 *     core stops and restarts where it was (docs/debug-halt.md);
 *   - a tail-chained exception (v7-M) replaces an exception frame on top;
 *   - at most 1024 frames: a deeper call counts, but pushes none;
 *   - INCLUSIVE: the instructions from the call's first to its return,
 *     frames still open at the end closing there.
 * Only vectors without gaps (no filter.txt, overflow.txt) of one PTM or
 * ETMv3 source; otherwise it says so and exits 1.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDEPTH 1024

typedef struct sym {
    uint32_t lo, hi;
    char name[128];
} sym;

typedef struct fent {
    char name[128];
    unsigned long long n;
} fent;

typedef struct cent {
    char caller[128], callee[128];
    unsigned long long calls, incl;
} cent;

typedef struct frame {
    uint32_t ret;
    bool exc;
    char callee[128]; /* the function of code under it */
    cent *edge;
    unsigned long long n0;
} frame;

static sym *syms;
static size_t nsyms;
static fent *funcs;
static size_t nfuncs;
static cent *calls;
static size_t ncalls;
static frame stk[MAXDEPTH];
static size_t depth;
static char root[128];
static unsigned long long counter;

static int die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "tb_truthprof: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 1;
}

static void *grow(void *p, size_t n, size_t size)
{
    /* One more entry: doubling at powers of two. */
    if (n && (n & (n - 1)))
        return p;
    p = realloc(p, (n ? n * 2 : 16) * size);
    if (!p)
        exit(1);
    return p;
}

static int cmp_sym(const void *a, const void *b)
{
    const sym *x = a, *y = b;

    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* readelf -sSW: section headers ([Nr] Name Type Addr Off Size ...) and
 * symbols (Num: Value Size Type Bind Vis Ndx Name). */
static int read_syms(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[1024];
    struct { unsigned addr, size; } sec[256] = {{0, 0}};
    unsigned *symsec = NULL;

    if (!f)
        return die("%s: cannot be read", path);
    while (fgets(line, sizeof line, f)) {
        unsigned nr, addr, off, size, ndx;
        char name[128], type[32];
        char *b = strchr(line, '[');

        if (b && sscanf(b, "[%u] %127s %31s %x %x %x", &nr, name, type, &addr, &off, &size) == 6 &&
            nr < 256) {
            sec[nr].addr = addr;
            sec[nr].size = size;
            continue;
        }
        if (sscanf(line, " %*u: %x %u FUNC %*s %*s %u %127s", &addr, &size, &ndx, name) == 4) {
            syms = grow(syms, nsyms, sizeof *syms);
            symsec = grow(symsec, nsyms, sizeof *symsec);
            syms[nsyms].lo = addr & ~1u;
            syms[nsyms].hi = size ? (addr & ~1u) + size : 0;
            symsec[nsyms] = ndx;
            snprintf(syms[nsyms].name, sizeof syms[nsyms].name, "%s", name);
            nsyms++;
        }
    }
    fclose(f);
    for (size_t i = 0; i < nsyms; i++)
        if (!syms[i].hi && symsec[i] < 256)
            syms[i].hi = sec[symsec[i]].addr + sec[symsec[i]].size;
    free(symsec);
    qsort(syms, nsyms, sizeof *syms, cmp_sym);
    /* Same start: the first listed stays (qsort is not stable, but
     * aliases name the same code); a range reaching past the next
     * symbol's start ends there. */
    size_t k = 0;

    for (size_t i = 0; i < nsyms; i++)
        if (!k || syms[k - 1].lo != syms[i].lo)
            syms[k++] = syms[i];
    nsyms = k;
    for (size_t i = 0; i + 1 < nsyms; i++)
        if (syms[i].hi > syms[i + 1].lo)
            syms[i].hi = syms[i + 1].lo;
    return 0;
}

static const char *sym_name(uint32_t a)
{
    for (size_t i = 0; i < nsyms; i++)
        if (a >= syms[i].lo && a < syms[i].hi)
            return syms[i].name;
    return NULL;
}

/* The function of code at a: its symbol, else the current frame's. */
static const char *func_of(uint32_t a)
{
    const char *s = sym_name(a);

    if (s)
        return s;
    return depth ? stk[depth - 1].callee : root;
}

static void target_name(uint32_t a, char *out)
{
    const char *s = sym_name(a);

    if (s)
        snprintf(out, 128, "%s", s);
    else
        snprintf(out, 128, "0x%08X", (unsigned)a);
}

static void add_func(const char *name)
{
    for (size_t i = 0; i < nfuncs; i++)
        if (!strcmp(funcs[i].name, name)) {
            funcs[i].n++;
            return;
        }
    funcs = grow(funcs, nfuncs, sizeof *funcs);
    snprintf(funcs[nfuncs].name, sizeof funcs[nfuncs].name, "%s", name);
    funcs[nfuncs++].n = 1;
}

static size_t edge(const char *caller, const char *callee)
{
    for (size_t i = 0; i < ncalls; i++)
        if (!strcmp(calls[i].caller, caller) && !strcmp(calls[i].callee, callee))
            return i;
    calls = grow(calls, ncalls, sizeof *calls);
    memset(&calls[ncalls], 0, sizeof calls[ncalls]);
    snprintf(calls[ncalls].caller, 128, "%s", caller);
    snprintf(calls[ncalls].callee, 128, "%s", callee);
    return ncalls++;
}

static void pop(void)
{
    depth--;
    calls[(size_t)stk[depth].edge].incl += counter - stk[depth].n0;
}

/* A call or exception pending until the next instruction runs. */
static struct {
    bool have, exc;
    uint32_t ret;
    char caller[128];
} pend;

static void enter(uint32_t target)
{
    char callee[128];
    size_t e;

    pend.have = false;
    target_name(target, callee);
    e = edge(pend.caller, callee);
    calls[e].calls++;
    if (depth == MAXDEPTH)
        return;
    stk[depth] = (frame){.ret = pend.ret, .exc = pend.exc, .edge = (cent *)(uintptr_t)e,
                         .n0 = counter};
    snprintf(stk[depth].callee, 128, "%s", callee);
    depth++;
}

typedef struct held {
    bool have, link_taken, taken;
    bool disc; /* after a taken branch or an exception */
    uint32_t addr, next;
} held;

static uint32_t last_addr;

/* The held instruction ran (an exception did not cancel it): it enters
 * a pending call, or returns when it follows a taken branch or an
 * exception; count it; a taken link makes a call. */
static void run(held *h)
{
    if (!h->have)
        return;
    if (pend.have) {
        enter(h->addr);
    } else if (h->disc) {
        for (size_t i = depth; i-- > 0;) {
            if (stk[i].ret != h->addr)
                continue;
            while (depth > i)
                pop();
            break;
        }
    }
    if (!root[0])
        target_name(h->addr, root);
    add_func(func_of(h->addr));
    counter++;
    last_addr = h->addr;
    if (h->link_taken) {
        pend.have = true;
        pend.exc = false;
        pend.ret = h->next;
        snprintf(pend.caller, 128, "%s", func_of(h->addr));
    }
    h->have = false;
}

static int protocol(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int type = 0, n = 0;

    if (!d)
        return 0;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        char path[4096], line[256];
        FILE *f;

        if (len < 4 || strcmp(de->d_name + len - 4, ".ini"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (!(f = fopen(path, "r")))
            continue;
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "type=PTM", 8))
                type = 1, n++;
            else if (!strncmp(line, "type=ETM3", 9)) /* ETM3.x: ETMv3 */
                type = 2, n++;
            else if (!strncmp(line, "type=ETM", 8)) /* ETMv1.x, ETMv2.x */
                type = 3, n++;
        fclose(f);
    }
    closedir(d);
    return n == 1 ? type : n ? -1 : 0;
}

int main(int argc, char **argv)
{
    char path[4096], line[512];
    FILE *f;
    long ln = 0;
    held h = {0};
    bool disc = true; /* the next instruction follows a taken branch or
                       * an exception */
    int proto;

    if (argc != 3) {
        fprintf(stderr, "usage: tb_truthprof DIR SYMS\n");
        return 2;
    }
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", argv[1], k ? "overflow.txt" : "filter.txt");
        if ((f = fopen(path, "r"))) {
            fclose(f);
            return die("%s: the vector has gaps, which this reader does not model", path);
        }
    }
    proto = protocol(argv[1]);
    if (proto != 1 && proto != 2)
        return die("%s: not one PTM or ETMv3 source", argv[1]);
    if (read_syms(argv[2]))
        return 1;
    snprintf(path, sizeof path, "%s/truth.txt", argv[1]);
    if (!(f = fopen(path, "r")))
        return die("%s: cannot be read", path);
    while (fgets(line, sizeof line, f)) {
        unsigned long long seq, cyc;
        char kind[4], isa[8], flags[8], wp[24];
        unsigned addr, size, next;

        ln++;
        if (sscanf(line, "%llu %llu %3s", &seq, &cyc, kind) != 3)
            return die("%s:%ld: not a truth record", path, ln);
        if (!strcmp(kind, "I")) {
            if (sscanf(line, "%llu %llu I %x %7s %u %*x %7s %23s -> %x", &seq, &cyc, &addr, isa,
                       &size, flags, wp, &next) != 8)
                return die("%s:%ld: not an instruction record", path, ln);
            if (h.have) {
                disc = h.taken;
                run(&h);
            }
            h.have = true;
            h.disc = disc;
            h.addr = addr;
            h.next = addr + size;
            h.taken = flags[1] == 'T';
            h.link_taken = h.taken && strstr(wp, "-link") != NULL;
            disc = false;
        } else if (!strcmp(kind, "X")) {
            unsigned ret;
            bool cancelled = strstr(line, " cancelled") != NULL;
            char xk[24];

            /* A halt into Debug state (docs/debug-halt.md) is no edge
             * of the program: the core restarts where it stopped, no
             * call, no return, and nothing held changes. */
            if (sscanf(line, "%*u %*u X %23s", xk) == 1 && !strcmp(xk, "debug-halt"))
                continue;
            if (sscanf(line, "%*u %*u X %*s ret=%x", &ret) != 1)
                return die("%s:%ld: not an exception record", path, ln);
            if (cancelled && h.have && h.addr == ret)
                h.have = false;
            run(&h);
            if (pend.have)
                enter(ret);
            if (!root[0])
                continue; /* before any code */
            if (strstr(line, " tail-chain") && depth && stk[depth - 1].exc) {
                ret = stk[depth - 1].ret;
                pop();
            }
            pend.have = true;
            pend.exc = true;
            pend.ret = ret;
            snprintf(pend.caller, 128, "%s", func_of(last_addr));
            disc = true;
        }
    }
    run(&h);
    fclose(f);
    while (depth)
        pop();
    printf("total %llu\n", counter);
    for (size_t i = 0; i < nfuncs; i++)
        printf("func %s %llu\n", funcs[i].name, funcs[i].n);
    for (size_t i = 0; i < ncalls; i++)
        printf("call %s %s %llu %llu\n", calls[i].caller, calls[i].callee, calls[i].calls,
               calls[i].incl);
    free(syms);
    free(funcs);
    free(calls);
    return 0;
}
