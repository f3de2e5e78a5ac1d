/*
 * tb_expect: a vector's expected decode, derived from its ground truth
 * alone (docs/vectors.md).  It shares no code with tracebench: it reads
 * the text files of a vector directory and knows only what the trace
 * protocols promise to carry, so a decoder (ours included) is checked
 * against the emulator, never against itself.
 *
 *   tb_expect DIR [--id ID] [--out FILE]
 *
 * Reads DIR/truth.txt (the emulator's run, sim/truth.c's text form),
 * DIR/filter.txt (the ViewInst ranges, when the vector has a filter),
 * DIR/overflow.txt (where FIFO overflows lost trace, when any did), and
 * the protocol from the trace source's `type=` in its DIR .ini file.  Writes one
 * line per instruction the trace shows, `0x%08X ISA A`:
 *   - an instruction an exception cancelled did not execute: left out
 *     (unless the exception itself was lost to an overflow: then no trace
 *     retracts it);
 *   - outside the ViewInst filter, or lost to an overflow (after the
 *     newest instruction whose trace went out, up to the instruction the
 *     overflow I-sync resumed at): left out, and a `# gap trace-on` or
 *     `# gap overflow` line stands between the instructions around it;
 *   - A: ETMv3 gives every instruction an atom: E, or N when its
 *     condition failed (IHI0014Q 7.3); so does ETMv1 (`type=ETMv1.x`): a
 *     PIPESTAT per instruction, IE/BE/ID/BD executed, IN condition failed
 *     (IHI0014Q 5.1, Table 5.1); PTM traces waypoints only (IHI0035B
 *     B.3.2): a waypoint's atom, E on every other instruction.
 *   - ETMv1's cancelled instructions follow the same rule: a data abort's
 *     aborted load/store is reported by the abort's own branch status
 *     (IHI0014Q 5.7.1), not as an executed instruction, and any other
 *     cancelled instruction reports nothing (docs/etmv1.md 4, M3).
 *   - ETMv1 has no exception packet: an exception is a branch (BE) to its
 *     vector, told only by the target (docs/etmv1.md 4).  So an instruction
 *     traced as a BE (a taken indirect branch; with branch output,
 *     ETMCR[8], any taken direct one) whose target is an exception vector
 *     (VECTOR_BASE or 0xFFFF0000, + 0x00..0x1C word aligned, not 0x14) reads
 *     as that exception's entry: no decoder can show it, so it is left out
 *     (an exception return to a vector, as back-to-back interrupts give).
 *   - Cortex-M (the core's `type=Cortex-M3` or `Cortex-M4`; docs/vectors.md):
 *     exceptions and returns have lines too, `# exception N NAME` (N the
 *     ARMv7-M number, NAME its name, ` tail-chain` when entered at a
 *     return without a new frame) and `# return` (none for a return
 *     pre-empted as it unstacked, which the trace withdraws), where the
 *     trace shows them: an exception when the instruction before it was traced, as it
 *     was taken while trace was on (and its packet not lost to an
 *     overflow); a return when its instruction was.  A gap line before
 *     them as before an instruction.
 *   - ETMv3 data-only mode (ETMCR[20] in the source's .ini, IHI0014Q
 *     7.4.10): no instruction trace, so no line at all.
 * Exit 0, or 1 with a message naming the file and line.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANGES 16
#define MAX_LOSSES 8192

typedef struct range {
    uint32_t lo, hi; /* [lo, hi) */
    bool exclude;
} range;

typedef struct loss {
    uint64_t from, to; /* instruction seqs [from, to); to = UINT64_MAX: never resumed */
} loss;

typedef struct insn {
    uint64_t seq;
    uint32_t addr;
    char isa[8];
    char atom;       /* E or N, as the truth ran it */
    bool waypoint;   /* a PTM waypoint: a branch or ISB */
    bool as_exc;     /* ETMv1: a BE to a vector, read as an exception */
} insn;

typedef struct ctx {
    bool ptm;
    bool v7m;            /* the core is a Cortex-M3/M4 */
    bool etmv1;          /* type=ETMv1.x */
    bool branch_output;  /* ETMv1: ETMCR[8], direct branches as BE */
    bool data_only;      /* ETMv3: ETMCR[20], data-only mode */
    uint32_t vector_base;
    range r[MAX_RANGES];
    unsigned nr;
    loss l[MAX_LOSSES];
    size_t nl;
    FILE *out;
    bool shown;      /* an instruction was written */
    bool gap;        /* an instruction since then was not traced */
    bool gap_lost;   /* ... and one was lost to an overflow */
    bool debug;      /* a debug halt since the last instruction, and none
                      * untraced since: its exit shows (docs/debug-halt.md) */
} ctx;

static int die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "tb_expect: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

/* The protocol from a trace source's device file: `type=PTM1.x` or
 * `type=ETM3.x` (the OpenCSD snapshot format), or tracebench's
 * `type=ETMv1.x` (docs/etmv1.md 7; ETMv1 has no trace ID, so no --id);
 * with an ID, the source whose ETMTRACEIDR holds it.  ETMv1 is read as
 * ETMv3 is: an atom per instruction. */
static int read_protocol(const char *dir, int id, ctx *c)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int found = 0;

    if (!d)
        return die("%s: %s", dir, strerror(errno));
    /* Every .ini: the source's, and the cores' (a Cortex-M core makes
     * the v7-M lines; the vectors with two sources are A-profile). */
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        char path[4096], line[256];
        int type = 0, tid = -1;
        unsigned v, etmcr = 0, vbase = 0;
        FILE *f;

        if (n < 4 || strcmp(de->d_name + n - 4, ".ini"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (!(f = fopen(path, "r")))
            continue;
        while (fgets(line, sizeof line, f)) {
            if (!strncmp(line, "type=PTM", 8))
                type = 1;
            else if (!strncmp(line, "type=ETM3", 9))
                type = 2;
            else if (!strncmp(line, "type=ETMv1", 10))
                type = 3;
            else if (!strncmp(line, "type=ETMv2", 10))
                type = 4; /* read as ETMv3: an atom per instruction, an
                           * exception packet of its own (docs/etmv2.md 4) */
            else if (!strncmp(line, "type=Cortex-M3", 14) || !strncmp(line, "type=Cortex-M4", 14))
                c->v7m = true; /* a core device of the snapshot */
            else if (sscanf(line, "ETMTRACEIDR(0x080)=%x", &v) == 1)
                tid = (int)(v & 0x7F);
            else if (sscanf(line, "ETMCR(0x000)=%x", &v) == 1)
                etmcr = v;
            else if (sscanf(line, "VECTOR_BASE=%x", &v) == 1)
                vbase = v;
        }
        fclose(f);
        if (type && !found && (id < 0 || tid == id)) {
            found = 1;
            c->ptm = type == 1;
            c->etmv1 = type == 3;
            c->branch_output = (etmcr >> 8) & 1;
            c->data_only = type == 2 && ((etmcr >> 20) & 1);
            c->vector_base = vbase;
        }
    }
    closedir(d);
    if (!found && id >= 0)
        return die("%s: no PTM or ETM3 trace source with ETMTRACEIDR 0x%x in its .ini files",
                   dir, (unsigned)id);
    return found ? 0
                 : die("%s: no trace source of type PTM, ETM3, ETMv1 or ETMv2 in its .ini files",
                       dir);
}

/* DIR/NAME.EXT, or with a trace ID DIR/NAME-0xID.EXT (several sources). */
static void file_of(char *buf, size_t len, const char *dir, const char *name, int id,
                    const char *ext)
{
    if (id < 0)
        snprintf(buf, len, "%s/%s.%s", dir, name, ext);
    else
        snprintf(buf, len, "%s/%s-0x%02x.%s", dir, name, (unsigned)id, ext);
}

/* filter.txt: `include LO HI` / `exclude LO HI` (hex, HI exclusive; 0:
 * the top of the address space). */
static int read_filter(const char *dir, int id, ctx *c)
{
    char path[4096], line[256], kind[16];
    unsigned lo, hi;
    int ln = 0;
    FILE *f;

    file_of(path, sizeof path, dir, "filter", id, "txt");
    if (!(f = fopen(path, "r")))
        return 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (sscanf(line, "%15s %x %x", kind, &lo, &hi) != 3 ||
            (strcmp(kind, "include") && strcmp(kind, "exclude")) || c->nr == MAX_RANGES) {
            fclose(f);
            return die("%s:%d: expected `include LO HI` or `exclude LO HI`", path, ln);
        }
        c->r[c->nr++] = (range){lo, hi, kind[0] == 'e'};
    }
    fclose(f);
    return 0;
}

/* overflow.txt, in order: `lost-after S` (S, the newest instruction
 * already shown; `-`: none since the last resume), `resume R`,
 * `lost-tail`.  Each overflow loses [S + 1, R). */
static int read_overflow(const char *dir, int id, ctx *c)
{
    char path[4096], line[256];
    unsigned long long v;
    uint64_t last_resume = 0;
    bool open = false;
    int ln = 0;
    FILE *f;

    file_of(path, sizeof path, dir, "overflow", id, "txt");
    if (!(f = fopen(path, "r")))
        return 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        if (line[0] == '#' || line[0] == '\n' || !strncmp(line, "lost-tail", 9))
            continue;
        if (!strncmp(line, "lost-after -", 12) || sscanf(line, "lost-after %llu", &v) == 1) {
            if (open || c->nl == MAX_LOSSES)
                break;
            c->l[c->nl].from = line[11] == '-' ? last_resume : (uint64_t)v + 1;
            c->l[c->nl++].to = UINT64_MAX;
            open = true;
        } else if (sscanf(line, "resume %llu", &v) == 1) {
            if (!open)
                break;
            c->l[c->nl - 1].to = last_resume = v;
            open = false;
        } else {
            break;
        }
    }
    if (!feof(f)) {
        fclose(f);
        return die("%s:%d: expected `lost-after S|-`, then `resume R` or the end", path, ln);
    }
    fclose(f);
    return 0;
}

/* ViewInst: traced when in an include range (or there is none) and in
 * no exclude range (protocol-notes 2.10: trace off and on).  HI 0: up to
 * the top of the address space. */
static bool in_filter(const ctx *c, uint32_t a)
{
    bool inc = false, any_inc = false;

    for (unsigned i = 0; i < c->nr; i++) {
        bool in = a >= c->r[i].lo && (c->r[i].hi == 0 || a < c->r[i].hi);

        if (c->r[i].exclude && in)
            return false;
        if (!c->r[i].exclude) {
            any_inc = true;
            inc |= in;
        }
    }
    return !any_inc || inc;
}

static bool lost(const ctx *c, uint64_t seq)
{
    for (size_t i = 0; i < c->nl; i++)
        if (seq >= c->l[i].from && seq < c->l[i].to)
            return true;
    return false;
}

/* ETMv1 (docs/etmv1.md 4): a branch target the decoder takes for an
 * exception vector. */
static bool etmv1_vector(const ctx *c, uint32_t a)
{
    uint32_t base = a & ~0x1Fu, off = a & 0x1F;

    return (base == c->vector_base || base == 0xFFFF0000u) && !(off & 3) && off != 0x14;
}

/* ARMv7-M exception names by number (the architecture's: Arm DUI0471
 * "exception types in the microcontroller profiles"). */
static void v7m_name(unsigned n, char *buf, size_t len)
{
    static const char *const sys[16] = {
        NULL, "Reset", "NMI", "HardFault", "MemManage", "BusFault", "UsageFault", NULL,
        NULL, NULL, NULL, "SVCall", "DebugMonitor", NULL, "PendSV", "SysTick",
    };

    if (n < 16 && sys[n])
        snprintf(buf, len, "%s", sys[n]);
    else if (n < 16)
        snprintf(buf, len, "reserved%u", n);
    else
        snprintf(buf, len, "IRQ%u", n - 16);
}

/* The gap line before the next line shown, if trace was off, lost or
 * halted since the last: an overflow names it whatever else happened,
 * then a debug halt's exit (the I-sync reason b11), then trace-on. */
static void gap_line(ctx *c)
{
    if ((c->gap || c->debug) && c->shown)
        fprintf(c->out, "# gap %s\n", c->gap_lost ? "overflow"
                                      : c->debug  ? "debug-exit"
                                                  : "trace-on");
    c->gap = c->gap_lost = c->debug = false;
    c->shown = true;
}

/* A v7-M exception or return line, when the trace shows it. */
static void show_line(ctx *c, bool traced, const char *text)
{
    if (!traced)
        return;
    gap_line(c);
    fprintf(c->out, "%s\n", text);
}

static void show(ctx *c, const insn *in, bool cancelled)
{
    bool traced = in_filter(c, in->addr) && !lost(c, in->seq);

    /* ETMv3 data-only mode (ETMCR[20], IHI0014Q 7.4.10): no instruction
     * trace, so no instruction shows. */
    if (c->data_only)
        return;
    if (!traced) {
        /* Trace was off or lost here, ran or not: the decoder sees a gap.
         * An exit from debug state shows only when the first instruction
         * after it is traced (IHI0014Q 7.10.5 Table 7.21). */
        c->gap = true;
        c->gap_lost |= lost(c, in->seq);
        c->debug = false;
        return;
    }
    if (cancelled || in->as_exc)
        return;
    gap_line(c);
    fprintf(c->out, "0x%08X %s %c\n", in->addr, in->isa,
            c->ptm && !in->waypoint ? 'E' : in->atom);
}

static int run(const char *dir, int id, ctx *c)
{
    char path[4096], line[512];
    insn held;
    bool have = false, prev_traced = false;
    int ln = 0;
    FILE *f;

    file_of(path, sizeof path, dir, "truth", id, "txt");
    if (!(f = fopen(path, "r")))
        return die("%s: %s", path, strerror(errno));
    while (fgets(line, sizeof line, f)) {
        unsigned long long seq, cyc;
        char kind[8], isa[8], f1[32], f2[32], f3[32], flags[16], wp[32];
        unsigned addr, size, ret, next;
        int n;

        ln++;
        if (sscanf(line, "%llu %llu %7s%n", &seq, &cyc, kind, &n) != 3)
            goto bad;
        if (!strcmp(kind, "I")) {
            /* SEQ CYCLE I ADDR ISA SIZE OPCODE FLAGS WP -> NEXT NEXT_ISA */
            if (sscanf(line + n, " %x %7s %u %31s %15s %31s -> %x", &addr, isa, &size, f2, flags,
                       wp, &next) != 7 ||
                (flags[0] != 'E' && flags[0] != 'N'))
                goto bad;
            if (have)
                show(c, &held, false);
            prev_traced = in_filter(c, addr) && !lost(c, seq);
            held.seq = seq;
            held.addr = addr;
            memcpy(held.isa, isa, sizeof held.isa);
            held.atom = flags[0];
            held.waypoint = strcmp(wp, "none") && strcmp(wp, "barrier");
            /* ETMv1: a taken branch traced as a BE (docs/etmv1.md 4) to
             * an exception vector reads as that exception. */
            held.as_exc = c->etmv1 && flags[0] == 'E' && flags[1] == 'T' &&
                          (!strncmp(wp, "indirect", 8) ||
                           (c->branch_output && !strncmp(wp, "direct", 6))) &&
                          etmv1_vector(c, next);
            have = true;
        } else if (!strcmp(kind, "X")) {
            /* SEQ CYCLE X KIND ret=ADDR vector=ADDR ISA cpsr=V [cancelled]:
             * it cancels the instruction before it, which returns to it,
             * unless the exception's own trace was lost. */
            if (sscanf(line + n, " %31s ret=%x %31s %31s", f1, &ret, f2, f3) != 4)
                goto bad;
            if (have) {
                show(c, &held, strstr(line, " cancelled") && held.addr == ret && !lost(c, seq));
                have = false;
            }
            /* A debug halt: the core restarts at ret; trace says so with
             * an exit from debug state there (docs/debug-halt.md). */
            if (!strcmp(f1, "debug-halt"))
                c->debug = true;
            if (c->v7m) {
                /* v7-M: ... xpsr=V exc=N [tail-chain] [cancelled] */
                const char *x = strstr(line, " exc=");
                unsigned num;
                char nm[24], text[64];

                if (!x || sscanf(x, " exc=%u", &num) != 1 || !num || num > 511)
                    goto bad;
                v7m_name(num, nm, sizeof nm);
                snprintf(text, sizeof text, "# exception %u %s%s", num, nm,
                         strstr(line, " tail-chain") ? " tail-chain" : "");
                show_line(c, prev_traced && !lost(c, seq), text);
            }
        } else if (!strcmp(kind, "R")) {
            /* v7-M: SEQ CYCLE R NAME exc=N excret=V ret=ADDR MODE [tail-chain
             * [preempted]], after the record of its instruction. */
            if (!c->v7m || !have)
                goto bad;
            show(c, &held, false);
            have = false;
            /* ` preempted`: an exception arrived as it unstacked and the
             * next exception's packet withdraws it (DDI0337E 15.5.2): no
             * decoder shows it. */
            if (!strstr(line, " preempted"))
                show_line(c, prev_traced && !lost(c, seq), "# return");
        } else if (!strcmp(kind, "END")) {
            break;
        } else if (strcmp(kind, "C") && strcmp(kind, "D") && strcmp(kind, "S")) {
            goto bad; /* C: context, D: a data transfer, S: security state:
                       * not in the listing */
        }
    }
    if (have)
        show(c, &held, false);
    fclose(f);
    return 0;
bad:
    fclose(f);
    return die("%s:%d: not a truth record (sim/truth.c): %s", path, ln, line);
}

int main(int argc, char **argv)
{
    static ctx c;
    const char *dir = NULL, *out = NULL;
    int rc, id = -1;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: tb_expect DIR [--id ID] [--out FILE]\n"
                   "  the expected `--format addr` decode of the vector in DIR, derived from\n"
                   "  its truth.txt, filter.txt and overflow.txt (docs/vectors.md); with\n"
                   "  --id, of the source with that trace ID in a vector of several:\n"
                   "  truth-0xID.txt, filter-0xID.txt, overflow-0xID.txt\n");
            return 0;
        }
        if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--id") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 0);

            if (*end || v < 1 || v > 0x6F)
                return die("--id %s: a trace ID is 0x01..0x6f", argv[i]), 2;
            id = (int)v;
        }
        else if (argv[i][0] != '-' && !dir)
            dir = argv[i];
        else
            return die("usage: tb_expect DIR [--id ID] [--out FILE] (--help for more)"), 2;
    }
    if (!dir)
        return die("usage: tb_expect DIR [--id ID] [--out FILE] (--help for more)"), 2;
    c.out = stdout;
    if (out && !(c.out = fopen(out, "w")))
        return die("%s: %s", out, strerror(errno));
    rc = read_protocol(dir, id, &c) || read_filter(dir, id, &c) || read_overflow(dir, id, &c) ||
         run(dir, id, &c);
    if (fflush(c.out) != 0 || ferror(c.out))
        rc = die("%s: write failed", out ? out : "standard output");
    if (out && fclose(c.out) != 0)
        rc = die("%s: write failed", out);
    return rc;
}
