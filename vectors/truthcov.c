/*
 * tb_truthcov: a vector's expected code coverage from its ground truth
 * alone.  Like tb_expect (expect.c) it links nothing of tracebench: it
 * reads DIR/truth.txt (sim/truth.c's frozen text form) and the protocol
 * from `type=` in DIR's .ini files, so the coverage the decoder gives is
 * checked against the emulator's run, never against itself.
 *
 *   tb_truthcov DIR [--all]
 *
 * One line per instruction address that ran, by address:
 *   0xADDR ISA COUNT PASSED FAILED KNOWN
 * COUNT: times it ran; an instruction an exception cancelled (the
 * exception's `cancelled` with ret= its address) did not.  PASSED /
 * FAILED: of those, with its condition passed (E) or failed (N), counted
 * only where the trace carries the condition: every instruction in
 * ETMv3, ETMv1 and ETMv2 (IHI0014Q 7.3, 5.1), waypoints other than
 * barriers in PTM (IHI0035B B.3.2).  KNOWN: 0 when some run of it left
 * its condition untraced (PTM non-waypoints), else 1.
 * ETMv1 has no exception packet (docs/etmv1.md 4): a taken branch traced
 * as a BE (indirect; with ETMCR[8] direct too) to an exception vector
 * (VECTOR_BASE or 0xFFFF0000, + 0x00..0x1C word aligned, not 0x14)
 * reads as that exception's entry, so no decoder shows it: not counted.
 * The vector must have no filter.txt or overflow.txt (no gaps): this
 * reader does not model what a gap hides; it says so and exits 1.
 * --all: count every instruction that ran all the same (what a decode
 * of a trace with gaps can at most show).
 * Exit 0, or 1 with a message naming the file and line.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ent {
    uint32_t addr;
    char isa[8];
    unsigned long long count, passed, failed;
    bool unknown;
} ent;

static ent *tab;
static size_t ntab, cap;

static int die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "tb_truthcov: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 1;
}

static ent *get(uint32_t addr, const char *isa)
{
    for (size_t i = ntab; i-- > 0;) /* recent first: loops */
        if (tab[i].addr == addr && !strcmp(tab[i].isa, isa))
            return &tab[i];
    if (ntab == cap) {
        cap = cap ? cap * 2 : 256;
        tab = realloc(tab, cap * sizeof *tab);
        if (!tab)
            exit(1);
    }
    memset(&tab[ntab], 0, sizeof tab[ntab]);
    tab[ntab].addr = addr;
    snprintf(tab[ntab].isa, sizeof tab[ntab].isa, "%s", isa);
    return &tab[ntab++];
}

static int cmp(const void *pa, const void *pb)
{
    const ent *a = pa, *b = pb;

    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    return strcmp(a->isa, b->isa);
}

/* ETMv1 (type=ETMv1.x): ETMCR and the vector base, for the one rule
 * below. */
static bool etmv1, branch_output;
static uint32_t vector_base;

/* 1 PTM, 2 any ETM, 0 none found. */
static int protocol(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int type = 0;

    if (!d)
        return 0;
    while (!type && (de = readdir(d))) {
        size_t n = strlen(de->d_name);
        char path[4096], line[256];
        FILE *f;

        if (n < 4 || strcmp(de->d_name + n - 4, ".ini"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (!(f = fopen(path, "r")))
            continue;
        unsigned v;

        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "type=PTM", 8))
                type = 1;
            else if (!strncmp(line, "type=ETM", 8))
                type = 2, etmv1 = !strncmp(line, "type=ETMv1", 10);
            else if (sscanf(line, "ETMCR(0x000)=%x", &v) == 1)
                branch_output = (v >> 8) & 1; /* ETMv1: direct branches as BE */
            else if (sscanf(line, "VECTOR_BASE=%x", &v) == 1)
                vector_base = v;
        fclose(f);
    }
    closedir(d);
    return type;
}

typedef struct held {
    bool have;
    uint32_t addr;
    char isa[8];
    char atom;
    bool traced; /* its condition is in the trace */
} held;

static void count(const held *h)
{
    ent *e;

    if (!h->have)
        return;
    e = get(h->addr, h->isa);
    e->count++;
    if (!h->traced)
        e->unknown = true;
    else if (h->atom == 'N')
        e->failed++;
    else
        e->passed++;
}

int main(int argc, char **argv)
{
    char path[4096], line[512];
    FILE *f;
    int proto;
    long ln = 0;
    held h = {0};

    if (argc != 2 && !(argc == 3 && !strcmp(argv[2], "--all"))) {
        fprintf(stderr, "usage: tb_truthcov DIR [--all]\n");
        return 2;
    }
    for (int k = 0; k < 2 && argc == 2; k++) {
        snprintf(path, sizeof path, "%s/%s", argv[1], k ? "overflow.txt" : "filter.txt");
        if ((f = fopen(path, "r"))) {
            fclose(f);
            return die("%s: the vector has gaps, which this reader does not model", path);
        }
    }
    proto = protocol(argv[1]);
    if (!proto)
        return die("%s: no PTM or ETM trace source in its .ini files", argv[1]);
    snprintf(path, sizeof path, "%s/truth.txt", argv[1]);
    if (!(f = fopen(path, "r")))
        return die("%s: cannot be read", path);
    while (fgets(line, sizeof line, f)) {
        unsigned long long seq, cyc;
        char kind[4], isa[8], flags[8], wp[24], rest[256];
        unsigned addr, size;

        ln++;
        if (sscanf(line, "%llu %llu %3s", &seq, &cyc, kind) != 3)
            return die("%s:%ld: not a truth record", path, ln);
        if (!strcmp(kind, "I")) {
            if (sscanf(line, "%llu %llu I %x %7s %u %*x %7s %23s", &seq, &cyc, &addr, isa, &size,
                       flags, wp) != 7)
                return die("%s:%ld: not an instruction record", path, ln);
            count(&h);
            h.have = true;
            h.addr = addr;
            snprintf(h.isa, sizeof h.isa, "%s", isa);
            h.atom = flags[0];
            h.traced = proto == 2 || (strcmp(wp, "none") && strcmp(wp, "barrier"));
            if (etmv1 && flags[0] == 'E' && flags[1] == 'T' &&
                (!strncmp(wp, "indirect", 8) || (branch_output && !strncmp(wp, "direct", 6)))) {
                unsigned next, off;

                if (sscanf(line, "%*u %*u I %*x %*s %*u %*x %*s %*s -> %x", &next) == 1 &&
                    ((next & ~0x1Fu) == vector_base || (next & ~0x1Fu) == 0xFFFF0000u) &&
                    !((off = next & 0x1F) & 3) && off != 0x14)
                    h.have = false; /* read as the exception: not shown */
            }
        } else if (!strcmp(kind, "X")) {
            unsigned ret;

            /* SEQ CYCLE X KIND ret=ADDR ...: a cancelled exception
             * cancels the instruction it returns to, the one before it. */
            if (sscanf(line, "%*u %*u X %*s ret=%x %255[^\n]", &ret, rest) == 2 &&
                strstr(rest, " cancelled") && h.have && h.addr == ret)
                h.have = false;
        }
    }
    count(&h);
    fclose(f);
    qsort(tab, ntab, sizeof *tab, cmp);
    for (size_t i = 0; i < ntab; i++)
        printf("0x%08X %s %llu %llu %llu %d\n", (unsigned)tab[i].addr, tab[i].isa, tab[i].count,
               tab[i].passed, tab[i].failed, !tab[i].unknown);
    free(tab);
    return 0;
}
