/*
 * The random program generator (include/tracebench/gen.h, docs/gen.md).
 *
 * A program is a vector table, start-up code, exception handlers and
 * `size` generated functions f0 (main) .. fN-1.  Function i calls only
 * functions j > i (recursive ones call themselves with a depth counter),
 * so the call graph has no cycle; loops count a register (r4, or r5 when
 * nested) that only the loop writes down from a constant.  Every item
 * knows an upper bound of the instructions it runs, so each function has
 * a dynamic cost, and callers take callees only while their budget lasts:
 * the program's length is bounded by construction (stats.est_insns).
 *
 * Registers: r0-r3, r8, r12 are scratch (any item may write them; calls
 * clobber them); r4, r5 loop counters; r6 the data area base (gdata,
 * reloaded after every call because handlers and callees keep it but a
 * function sets its own); r7 a pointer scratch for writeback addressing;
 * every function saves r4-r8 and lr.  Handlers save what they touch, so
 * an interrupt can arrive anywhere.  All data accesses stay inside gdata
 * (1 KiB), except the aborting ones, which go to an unmapped region.
 *
 * Encodings follow IHI0406C (ARM ARM v7-A/R): A8 for instruction forms
 * and their constraints (e.g. A8.8.72 LDRD even register pair in ARM,
 * A8.8.55 IT: a branch only last in the block), B1.8/B1.9 for exception
 * entry and return (LR offsets: B1.9.6 undefined +4/+2, B1.9.8 data
 * abort +8, B1.9.10 IRQ +4).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebench/gen.h"
#include "tracebench/types.h"

#define GDATA_SIZE 1024u
#define MAX_LEAFS 3

enum { ARM = 0, THUMB = 1 };
enum { K_NORMAL = 0, K_REC, K_LEAF };
enum { NSEC = 5 }; /* .text and .far1 .. .far4 */

/* A growing string; out of memory is sticky and reported at the end. */
typedef struct sb {
    char *p;
    size_t n, cap;
    bool oom;
} sb;

static void sb_vadd(sb *b, const char *fmt, va_list ap)
{
    va_list aq;
    int need;

    if (b->oom)
        return;
    va_copy(aq, ap);
    need = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, aq);
    va_end(aq);
    if (need < 0) {
        b->oom = true;
        return;
    }
    if (!b->p || b->n + (size_t)need + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        char *np;

        while (nc < b->n + (size_t)need + 1)
            nc *= 2;
        if (!(np = realloc(b->p, nc))) {
            b->oom = true;
            return;
        }
        b->p = np;
        b->cap = nc;
        vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    }
    b->n += (size_t)need;
}

static void sb_add(sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(sb *b, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    sb_vadd(b, fmt, ap);
    va_end(ap);
}

static void sb_cat(sb *b, const sb *s)
{
    if (s->oom)
        b->oom = true;
    else if (s->p)
        sb_add(b, "%s", s->p);
}

typedef struct fn {
    int isa, sec, kind;
    uint64_t cost;       /* dynamic instructions of one call (REC: per level) */
    bool called;
    char name[16];
    sb text;
} fn;

typedef struct gen {
    uint64_t rng;
    tb_gen_isa isa;
    unsigned n;          /* generated functions */
    fn *fns;
    unsigned nleaf;
    fn leafs[MAX_LEAFS];
    unsigned label;
    uint32_t far[NSEC];  /* far section addresses (index 1..4) */
    bool far_used[NSEC];
    uint32_t abort_base, pabt_base;
    int hisa;            /* the handlers' ISA (THUMB: SCTLR.TE) */
    bool svc_in_it;      /* this program may put SVCs inside IT blocks */
    bool m;              /* TB_GEN_M: a Cortex-M program (ARMv7-M) */
    unsigned mcpu;       /* M: 3 or 4 */
    tb_gen_stats st;
    uint64_t since_pool; /* instructions since the last literal pool */
} gen;

/* splitmix64: one stream per program, the same on every host. */
static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rnd(gen *g)
{
    return mix(g->rng += 0x9E3779B97F4A7C15ull);
}

static unsigned rn(gen *g, unsigned n)
{
    return n ? (unsigned)(rnd(g) % n) : 0;
}

static bool pct(gen *g, unsigned p)
{
    return rn(g, 100) < p;
}

/* ---- emission context ---- */

typedef struct em {
    gen *g;
    sb *o;
    int isa;
    int fi;              /* current function; callees are > fi; -1 in handlers */
    int depth;           /* loop nesting: r4, r5 */
    int nest;            /* item nesting */
    bool safe;           /* no exceptions, no calls (handlers and their leafs) */
    bool shrt;           /* a short-range body (CBZ, TBB case): no pools, loops, switches, calls */
    const char *saved;   /* the function's saved registers (conditional return), or NULL */
    uint64_t budget;     /* dynamic instructions the rest may run */
    unsigned stat;       /* static instructions emitted (range limits) */
} em;

static void ins(em *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ins(em *e, const char *fmt, ...)
{
    va_list ap;

    sb_add(e->o, "\t");
    va_start(ap, fmt);
    sb_vadd(e->o, fmt, ap);
    va_end(ap);
    sb_add(e->o, "\n");
    e->stat++;
    e->g->since_pool++;
}

static unsigned newlabel(gen *g)
{
    return g->label++;
}

static void label(em *e, unsigned l)
{
    sb_add(e->o, ".L%u:\n", l);
}

static const char *const CC[14] = {"eq", "ne", "cs", "cc", "mi", "pl", "vs",
                                   "vc", "hi", "ls", "ge", "lt", "gt", "le"};
static const char *const SCR[6] = {"r0", "r1", "r2", "r3", "r8", "r12"};

/* A scratch register; Thumb prefers the low ones (16-bit encodings). */
static const char *sreg(em *e)
{
    if (e->isa == THUMB && pct(e->g, 70))
        return SCR[rn(e->g, 4)];
    return SCR[rn(e->g, 6)];
}

/* A scratch register other than r12 (which may hold a call target). */
static const char *sreg_no12(em *e)
{
    return SCR[rn(e->g, 5)];
}

/* A modified immediate both instruction sets encode (A5.2.4, A6.3.2):
 * an 8-bit value shifted left by an even amount. */
static unsigned imm(gen *g)
{
    unsigned v = rn(g, 256);

    return pct(g, 70) ? v : v << (2 * rn(g, 12));
}

static const char *shift_text(gen *g, char *buf, size_t len)
{
    static const char *const k[] = {"lsl", "lsr", "asr", "ror"};
    unsigned s = rn(g, 5);

    if (s == 4)
        snprintf(buf, len, "rrx");
    else
        snprintf(buf, len, "%s #%u", k[s], 1 + rn(g, 31));
    return buf;
}

/* Sets the flags from scratch values; writes no register (a call's
 * argument, the recursion depth in r0, may wait across it). */
static void flags(em *e)
{
    gen *g = e->g;

    switch (rn(g, 5)) {
    case 0: ins(e, "cmp %s, %s", sreg(e), sreg(e)); break;
    case 1: ins(e, "cmp %s, #%u", sreg(e), rn(g, 256)); break;
    case 2: ins(e, "tst %s, #%u", sreg(e), imm(g)); break;
    case 3: ins(e, "cmn %s, %s", sreg(e), sreg(e)); break;
    default: ins(e, "teq %s, %s", sreg(e), sreg(e)); break;
    }
}

/* One data-processing instruction on scratch registers, condition c
 * ("" or a suffix); dst: the destination choice (r12 avoided when a call
 * target waits there). */
static void alu_op(em *e, const char *c, bool keep12)
{
    gen *g = e->g;
    bool t = e->isa == THUMB;
    const char *d = keep12 ? sreg_no12(e) : sreg(e), *n = sreg(e), *m = sreg(e);
    const char *s = pct(g, 25) ? "s" : "";
    char sh[24];
    static const char *const op3[] = {"add", "sub", "rsb", "and", "orr", "eor", "bic", "adc", "sbc"};
    unsigned k = rn(g, 18);

    /* 16: ARM-only forms, 17: Thumb-only ones: each ISA draws its own. */
    if (k == 16 && t)
        k = 17;
    else if (k == 17 && !t)
        k = 16;
    switch (k) {
    case 0: ins(e, "%s%s%s %s, %s, #%u", op3[rn(g, 9)], s, c, d, n, imm(g)); break;
    case 1: ins(e, "%s%s%s %s, %s, %s", op3[rn(g, 9)], s, c, d, n, m); break;
    case 2: ins(e, "%s%s%s %s, %s, %s, %s", op3[rn(g, 9)], s, c, d, n, m, shift_text(g, sh, sizeof sh)); break;
    case 3: ins(e, "%s%s%s %s, #%u", pct(g, 50) ? "mov" : "mvn", s, c, d, imm(g)); break;
    case 4:
        if (pct(g, 50))
            ins(e, "mov%s%s %s, %s", s, c, d, m);
        else
            ins(e, "mvn%s%s %s, %s, %s", s, c, d, m, shift_text(g, sh, sizeof sh));
        break;
    case 5: {
        static const char *const sk[] = {"lsl", "lsr", "asr", "ror"};

        ins(e, "%s%s%s %s, %s, #%u", sk[rn(g, 4)], s, c, d, m, 1 + rn(g, 31));
        break;
    }
    case 6: {
        static const char *const sk[] = {"lsl", "lsr", "asr", "ror"};

        ins(e, "%s%s%s %s, %s, %s", sk[rn(g, 4)], s, c, d, n, m);
        break;
    }
    case 7: /* Thumb has no 32-bit MULS (A8.8.114) */
        ins(e, "mul%s%s %s, %s, %s", t ? "" : s, c, d, n, m);
        break;
    case 8: ins(e, "%s%s %s, %s, %s, %s", pct(g, 50) ? "mla" : "mls", c, d, n, m, sreg(e)); break;
    case 9: {
        static const char *const lk[] = {"umull", "smull", "umlal", "smlal"};
        const char *lo = d, *hi;

        do
            hi = keep12 ? sreg_no12(e) : sreg(e);
        while (hi == lo); /* RdLo == RdHi is UNPREDICTABLE (A8.8.257) */
        ins(e, "%s%s %s, %s, %s, %s", lk[rn(g, 4)], c, lo, hi, n, m);
        break;
    }
    case 10: {
        static const char *const uk[] = {"clz", "rev", "rev16", "rbit", "revsh"};

        ins(e, "%s%s %s, %s", uk[rn(g, 5)], c, d, m);
        break;
    }
    case 11: {
        unsigned lsb = rn(g, 31), w = 1 + rn(g, 32 - lsb);

        switch (rn(g, 4)) {
        case 0: ins(e, "ubfx%s %s, %s, #%u, #%u", c, d, n, lsb, w); break;
        case 1: ins(e, "sbfx%s %s, %s, #%u, #%u", c, d, n, lsb, w); break;
        case 2: ins(e, "bfi%s %s, %s, #%u, #%u", c, d, n, lsb, w); break;
        default: ins(e, "bfc%s %s, #%u, #%u", c, d, lsb, w); break;
        }
        break;
    }
    case 12: {
        static const char *const xk[] = {"uxtb", "uxth", "sxtb", "sxth"};

        if (pct(g, 30))
            ins(e, "%s%s %s, %s, ror #%u", xk[rn(g, 4)], c, d, m, 8 * (1 + rn(g, 3)));
        else
            ins(e, "%s%s %s, %s", xk[rn(g, 4)], c, d, m);
        break;
    }
    case 13: ins(e, "%s%s %s, #%u", pct(g, 50) ? "movw" : "movt", c, d, rn(g, 65536)); break;
    case 14: {
        static const char *const ck[] = {"cmp", "cmn", "tst", "teq"};

        if (pct(g, 50))
            ins(e, "%s%s %s, #%u", ck[rn(g, 4)], c, n, imm(g));
        else
            ins(e, "%s%s %s, %s", ck[rn(g, 4)], c, n, m);
        break;
    }
    case 15: {
        unsigned q = rn(g, 4);

        /* QADD/QSUB are the DSP extension's (ARMv7E-M): not on a
         * Cortex-M3 (ARMv7-M ARM A7.7.94). */
        if (g->m && g->mcpu == 3 && q < 2)
            q = 2;
        switch (q) {
        case 0: ins(e, "qadd%s %s, %s, %s", c, d, m, n); break;
        case 1: ins(e, "qsub%s %s, %s, %s", c, d, m, n); break;
        case 2: ins(e, "ssat%s %s, #%u, %s", c, d, 1 + rn(g, 32), m); break;
        default: ins(e, "usat%s %s, #%u, %s", c, d, rn(g, 32), m); break;
        }
        break;
    }
    case 16: /* ARM only: register-shifted register, RSC */
        if (pct(g, 70)) {
            static const char *const sk[] = {"lsl", "lsr", "asr", "ror"};

            ins(e, "%s%s%s %s, %s, %s, %s %s", op3[rn(g, 9)], s, c, d, n, m, sk[rn(g, 4)], sreg(e));
        } else {
            ins(e, "rsc%s%s %s, %s, #%u", s, c, d, n, imm(g));
        }
        break;
    default: /* Thumb only: ORN */
        ins(e, "orn%s%s %s, %s, #%u", s, c, d, n, imm(g));
        break;
    }
}

static uint64_t alu_run(em *e)
{
    unsigned k = 1 + rn(e->g, 6);

    for (unsigned i = 0; i < k; i++)
        alu_op(e, "", false);
    return k;
}

/* r7 := gdata + an offset leaving room either side (64 .. 768). */
static unsigned set_r7(em *e)
{
    unsigned base = 64u * (4 + rn(e->g, 9));

    ins(e, "add r7, r6, #%u", base);
    return base;
}

static const char *ld_kinds[] = {"ldr", "str", "ldrb", "strb", "ldrh", "strh", "ldrsb", "ldrsh", "ldrd", "strd"};
static const unsigned ld_size[] = {4, 4, 1, 1, 2, 2, 1, 2, 8, 8};

/* The register pair of an LDRD/STRD: even/odd in ARM (A8.8.72). */
static void pair(em *e, const char **a, const char **b)
{
    static const char *const p[][2] = {{"r0", "r1"}, {"r2", "r3"}, {"r1", "r3"}, {"r8", "r12"}};
    unsigned k = rn(e->g, e->isa == THUMB ? 4 : 2);

    *a = p[k][0];
    *b = p[k][1];
}

/* One load or store inside gdata with condition c.  imm_only: [r6, #off]
 * forms only (no setup instruction: inside a condition block). */
static void mem_op(em *e, const char *c, bool imm_only, bool keep12)
{
    gen *g = e->g;
    bool t = e->isa == THUMB;
    unsigned k = rn(g, 10), sz = ld_size[k];
    /* k >= 4: ARM's "extra" load/store forms (A5.2.8): 8-bit offsets,
     * no shifted register */
    bool dual = sz == 8, extra = k >= 4, load = !(k & 1) || k == 7;
    const char *rt = keep12 ? sreg_no12(e) : sreg(e), *rt2 = NULL, *x;
    char regs[16];
    unsigned mode, off;

    if (dual) {
        pair(e, &rt, &rt2);
        if (keep12 && !strcmp(rt2, "r12"))
            rt = "r0", rt2 = "r1";
        snprintf(regs, sizeof regs, "%s, %s", rt, rt2);
    } else {
        snprintf(regs, sizeof regs, "%s", rt);
    }
    if (load)
        g->st.loads++;
    else
        g->st.stores++;
    /* ARM halfword, signed and dual forms take an 8-bit offset (A8.8.80). */
    if (imm_only) {
        unsigned lim = (!t && extra) ? 248 : GDATA_SIZE - 16;

        off = (rn(g, lim / 8)) * 8;
        ins(e, "%s%s %s, [r6, #%u]", ld_kinds[k], c, regs, off);
        return;
    }
    set_r7(e);
    mode = rn(g, 6);
    switch (mode) {
    case 0: /* immediate offset, maybe negative */
        off = 8 * rn(g, 24);
        ins(e, "%s%s %s, [r7, #%s%u]", ld_kinds[k], c, regs, pct(g, 30) ? "-" : "", off);
        break;
    case 1: /* pre-indexed with writeback */
        off = 8 * rn(g, 24);
        ins(e, "%s%s %s, [r7, #%s%u]!", ld_kinds[k], c, regs, pct(g, 30) ? "-" : "", off);
        break;
    case 2: /* post-indexed */
        off = 8 * rn(g, 24);
        ins(e, "%s%s %s, [r7], #%s%u", ld_kinds[k], c, regs, pct(g, 30) ? "-" : "", off);
        break;
    default: /* register offset (Thumb: LSL #0-3 only; ARM halfword/dual: none) */
        do
            x = sreg_no12(e);
        while (x == rt || (rt2 && x == rt2));
        if (dual && t) { /* Thumb LDRD has no register form (A8.8.72) */
            ins(e, "%s%s %s, [r7, #%u]", ld_kinds[k], c, regs, 8 * rn(g, 24));
            break;
        }
        if (mode == 3 && !dual && (t || !extra)) {
            /* scaled: index 0..15 times the size */
            unsigned l2 = sz == 4 ? 2 : sz == 2 ? 1 : rn(g, 4);

            ins(e, "and %s, %s, #15", x, sreg(e));
            ins(e, "%s%s %s, [r7, %s, lsl #%u]", ld_kinds[k], c, regs, x, l2);
            break;
        }
        /* plain: an aligned index 0..63 */
        ins(e, "and %s, %s, #0x%x", x, sreg(e), 0x3fu & ~(sz - 1u));
        if (!t && mode == 4)
            ins(e, "%s%s %s, [r7, %s]!", ld_kinds[k], c, regs, x);
        else if (!t && mode == 5)
            ins(e, "%s%s %s, [r7], -%s", ld_kinds[k], c, regs, x);
        else
            ins(e, "%s%s %s, [r7, %s]", ld_kinds[k], c, regs, x);
        break;
    }
}

/* A register list of 2..5 scratch registers, ascending. */
static void reglist(em *e, char *buf, size_t len, bool keep12)
{
    unsigned mask = 0, n = 0, want = 2 + rn(e->g, 4);
    size_t used = 0;

    while (n < want) {
        unsigned r = rn(e->g, keep12 ? 5 : 6);

        if (!(mask & (1u << r))) {
            mask |= 1u << r;
            n++;
        }
    }
    buf[0] = '\0';
    for (unsigned r = 0; r < 6; r++)
        if (mask & (1u << r))
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", SCR[r]);
}

static uint64_t multiple(em *e, const char *c, bool keep12)
{
    gen *g = e->g;
    bool t = e->isa == THUMB;
    static const char *const am[] = {"ia", "db", "ib", "da"};
    const char *mode = am[rn(g, t ? 2 : 4)];
    bool ld = pct(g, 50);
    char list[48];

    reglist(e, list, sizeof list, keep12);
    g->st.multiples++;
    if (ld)
        g->st.loads++;
    else
        g->st.stores++;
    if (!*c)
        set_r7(e);
    if (*c) /* in a condition block: r6 as the base, no writeback */
        ins(e, "%sia%s r6, {%s}", ld ? "ldm" : "stm", c, list);
    else
        ins(e, "%s%s r7%s, {%s}", ld ? "ldm" : "stm", mode, pct(g, 50) ? "!" : "", list);
    return 2;
}

static uint64_t push_pop(em *e)
{
    char list[48];
    bool stm = pct(e->g, 30);

    reglist(e, list, sizeof list, false);
    e->g->st.multiples += 2;
    ins(e, stm ? "stmdb sp!, {%s}" : "push {%s}", list);
    alu_op(e, "", false);
    alu_op(e, "", false);
    ins(e, stm ? "ldmia sp!, {%s}" : "pop {%s}", list);
    return 4;
}

static uint64_t exclusive(em *e)
{
    gen *g = e->g;

    set_r7(e);
    g->st.exclusives++;
    unsigned k = rn(g, 4);

    if (g->m && k == 3) /* ARMv7-M has no LDREXD/STREXD (ARMv7-M ARM A5.3.8) */
        k = 0;
    switch (k) {
    case 0:
        ins(e, "ldrex r0, [r7]");
        ins(e, "add r0, r0, #%u", rn(g, 256));
        ins(e, "strex r1, r0, [r7]");
        return 4;
    case 1:
        ins(e, "ldrexb r2, [r7]");
        ins(e, "strexb r3, r2, [r7]");
        return 3;
    case 2:
        ins(e, "ldrexh r1, [r7]");
        ins(e, "clrex");
        ins(e, "strexh r0, r1, [r7]"); /* fails: the monitor was cleared */
        return 4;
    default:
        ins(e, "ldrexd r2, r3, [r7]");
        ins(e, "eor r2, r2, r3");
        ins(e, "strexd r0, r2, r3, [r7]");
        return 4;
    }
}

static uint64_t mem_item(em *e)
{
    gen *g = e->g;
    unsigned k = rn(g, 10);

    if (k < 6) {
        unsigned n = e->shrt ? 1 : 1 + rn(g, 3);

        for (unsigned i = 0; i < n; i++)
            mem_op(e, "", false, false);
        return 6 * n;
    }
    if (k < 8)
        return multiple(e, "", false);
    if (k == 8) {
        set_r7(e);
        ins(e, "pld [r7, #%u]", 4 * rn(g, 32));
        return 2;
    }
    return push_pop(e);
}

/* ---- exceptions ---- */

static uint64_t svc(em *e, const char *c)
{
    e->g->st.svc++;
    ins(e, "svc%s #%u", c, rn(e->g, e->isa == THUMB ? 256 : 0x1000));
    return 1;
}

static uint64_t udf(em *e)
{
    e->g->st.undef++;
    /* Thumb: the 16-bit UDF only; LR is the address + 2 (B1.9.6), so the
     * handler's MOVS pc, lr resumes after it. */
    if (e->isa == THUMB)
        ins(e, "udf #%u", rn(e->g, 256));
    else
        ins(e, "udf #%u", rn(e->g, 65536));
    return 1;
}

static uint64_t dabt(em *e)
{
    gen *g = e->g;
    bool t = e->isa == THUMB;
    uint32_t a = g->abort_base + 16u * rn(g, 64);
    const char *c = "";
    char list[48];

    g->st.data_aborts++;
    ins(e, "movw r7, #0x%x", a & 0xFFFFu);
    ins(e, "movt r7, #0x%x", a >> 16);
    if (!t && pct(g, 25)) { /* conditional: aborts only when it executes */
        flags(e);
        c = CC[rn(g, 14)];
    }
    switch (rn(g, 9)) {
    case 0: ins(e, "ldr%s %s, [r7]", c, sreg(e)); break;
    case 1: ins(e, "str%s %s, [r7, #4]", c, sreg(e)); break;
    case 2: ins(e, "ldrb%s %s, [r7, #3]", c, sreg(e)); break;
    case 3: ins(e, "strh%s %s, [r7, #2]", c, sreg(e)); break;
    case 4: ins(e, "ldrsh%s %s, [r7]", c, sreg(e)); break;
    case 5: ins(e, "ldrd%s r0, r1, [r7, #8]", c); break;
    case 6:
        reglist(e, list, sizeof list, false);
        ins(e, "ldm%s r7, {%s}", c, list);
        break;
    case 7:
        reglist(e, list, sizeof list, false);
        ins(e, "stmdb%s r7!, {%s}", c, list);
        break;
    default: ins(e, "%s%s r0, [r7, #%u]", t && pct(g, 50) ? "ldr.w" : "ldr", c, 4 * rn(g, 8)); break;
    }
    return *c ? 4 : 3;
}

/* A branch to unmapped code: the prefetch abort handler resumes at the
 * address left in pabt_resume (bit 0: Thumb). */
static uint64_t pabt(em *e)
{
    gen *g = e->g;
    unsigned l = newlabel(g);
    uint32_t a = g->pabt_base + 4u * rn(g, 256) + (pct(g, 40) ? 1u : 0u);

    g->st.prefetch_aborts++;
    ins(e, "ldr r0, =pabt_resume");
    ins(e, "adr r12, .L%u", l);
    if (e->isa == THUMB)
        ins(e, "orr r12, r12, #1");
    ins(e, "str r12, [r0]");
    ins(e, "movw r12, #0x%x", a & 0xFFFFu);
    ins(e, "movt r12, #0x%x", a >> 16);
    ins(e, pct(g, 50) ? "blx r12" : "bx r12");
    label(e, l);
    ins(e, "ldr r6, =gdata");
    return 9;
}

/* M: the program pends an exception itself (ARMv7-M ARM B3.2.4 ICSR
 * PENDSVSET; B3.4, the NVIC's ISPR and STIR), taken at once when its
 * priority allows: PendSV, or one of the NVIC lines 0..7 the start-up
 * enabled. */
static uint64_t swpend(em *e)
{
    gen *g = e->g;
    unsigned line = rn(g, 8);

    g->st.sw_pends++;
    switch (rn(g, 3)) {
    case 0:
        ins(e, "ldr r0, =0xE000ED04");
        ins(e, "mov r1, #0x10000000");
        break;
    case 1:
        ins(e, "ldr r0, =0xE000E200");
        ins(e, "mov r1, #%u", 1u << line);
        break;
    default:
        ins(e, "ldr r0, =0xE000EF00");
        ins(e, "mov r1, #%u", line);
        break;
    }
    ins(e, "str r1, [r0]");
    return 3;
}

static uint64_t ctxid(em *e)
{
    if (e->g->m)
        return swpend(e);
    e->g->st.ctxid_writes++;
    ins(e, "movw r0, #0x%x", rn(e->g, 65536));
    if (pct(e->g, 50))
        ins(e, "movt r0, #0x%x", rn(e->g, 65536));
    ins(e, "mcr p15, 0, r0, c13, c0, 1");
    return 3;
}

static uint64_t barrier(em *e)
{
    static const char *const b[] = {"isb", "dsb", "dmb", "nop"};

    ins(e, "%s", b[rn(e->g, 4)]);
    return 1;
}

/* ---- calls ---- */

static bool far_apart(const gen *g, int a, int b)
{
    /* BL reaches +-16 MiB (Thumb) / 32 MiB (ARM): sections 3 and 4 lie
     * beyond that from the others, so the linker puts a veneer between. */
    (void)g;
    return a != b && (a >= 3 || b >= 3);
}

/* A call to function j (already generated: its cost is known). */
static uint64_t call_to(em *e, unsigned j)
{
    gen *g = e->g;
    fn *f = &g->fns[j], *me = &g->fns[e->fi];
    bool t = e->isa == THUMB, x = f->isa != e->isa;
    unsigned k = rn(g, 9);

    f->called = true;
    g->st.calls++;
    if (x)
        g->st.interworking_calls++;
    if (far_apart(g, me->sec, f->sec))
        g->st.veneer_calls++;
    switch (k) {
    case 0:
    case 1:
        ins(e, "bl %s", f->name);
        break;
    case 2:
        ins(e, x ? "blx %s" : "bl %s", f->name);
        break;
    case 3:
        g->st.indirect_calls++;
        ins(e, "ldr r12, =%s", f->name);
        ins(e, "blx r12");
        break;
    case 4:
        g->st.indirect_calls++;
        ins(e, "movw r12, #:lower16:%s", f->name);
        ins(e, "movt r12, #:upper16:%s", f->name);
        ins(e, "blx r12");
        break;
    case 5: /* through the function pointer table */
        g->st.indirect_calls++;
        ins(e, "ldr r12, =fptab");
        ins(e, "ldr r12, [r12, #%u]", 4 * (j - 1));
        if (!t && pct(g, 50)) {
            ins(e, "mov lr, pc");
            ins(e, "bx r12");
        } else {
            ins(e, "blx r12");
        }
        break;
    case 6: /* ARM: the pre-BLX idioms */
        g->st.indirect_calls++;
        if (!t) {
            if (pct(g, 50)) {
                ins(e, "mov lr, pc");
                ins(e, "ldr pc, =%s", f->name);
            } else {
                ins(e, "ldr r12, =fptab");
                ins(e, "mov lr, pc");
                ins(e, "ldr pc, [r12, #%u]", 4 * (j - 1));
            }
        } else {
            ins(e, "ldr r12, =%s", f->name);
            ins(e, "blx r12");
        }
        break;
    case 7: /* conditional */
        flags(e);
        {
            const char *c = CC[rn(g, 14)];

            g->st.cond_insns++;
            if (x) {
                g->st.indirect_calls++;
                ins(e, "ldr r12, =%s", f->name);
                if (t) {
                    ins(e, "it %s", c);
                    g->st.it_blocks++;
                }
                ins(e, "blx%s r12", c);
            } else {
                if (t) {
                    ins(e, "it %s", c);
                    g->st.it_blocks++;
                }
                ins(e, "bl%s %s", c, f->name);
            }
        }
        break;
    default: /* ARM, same ISA: a plain B with the return address set by hand */
        if (!t && !x) {
            unsigned l = newlabel(g);

            ins(e, "adr lr, .L%u", l);
            ins(e, "b %s", f->name);
            label(e, l);
        } else {
            ins(e, "bl %s", f->name);
        }
        break;
    }
    ins(e, "ldr r6, =gdata");
    return 8;
}

/* A callee for function e->fi within budget, uncalled ones first; -1. */
static int pick_callee(em *e, bool rec)
{
    gen *g = e->g;
    int best = -1;
    unsigned seen = 0;

    for (unsigned pass = 0; pass < 2 && best < 0; pass++)
        for (unsigned j = (unsigned)e->fi + 1; j < g->n; j++) {
            fn *f = &g->fns[j];

            if ((f->kind == K_REC) != rec || (pass == 0 && f->called))
                continue;
            if (f->cost + 12 > e->budget || (rec && 2 * f->cost + 12 > e->budget))
                continue;
            if (rn(g, ++seen) == 0)
                best = (int)j;
        }
    return best;
}

static uint64_t call_item(em *e)
{
    int j = pick_callee(e, false);

    if (j < 0)
        return UINT64_MAX;
    return call_to(e, (unsigned)j) + e->g->fns[j].cost;
}

static uint64_t rec_item(em *e)
{
    int j = pick_callee(e, true);
    uint64_t unit, d;

    if (j < 0)
        return UINT64_MAX;
    unit = e->g->fns[j].cost;
    d = (e->budget - 12) / unit;
    if (d > 40)
        d = 40;
    d = 1 + rn(e->g, (unsigned)d);
    ins(e, "mov r0, #%u", (unsigned)d);
    return 1 + call_to(e, (unsigned)j) + d * unit;
}

/* ---- structure ---- */

static uint64_t items(em *e, unsigned n);

/* Runs body items with a reduced budget; returns their cost. */
static uint64_t sub_items(em *e, unsigned n, uint64_t budget, bool shrt)
{
    em s = *e;
    uint64_t c;

    s.budget = budget;
    s.nest++;
    s.shrt = shrt || e->shrt;
    s.stat = 0;
    c = items(&s, n);
    e->stat += s.stat;
    return c;
}

/* ARM: a run of conditional instructions; Thumb: an IT block. */
static uint64_t cond_block(em *e)
{
    gen *g = e->g;
    bool t = e->isa == THUMB;
    unsigned n = 1 + rn(g, 4), c = rn(g, 14);
    uint64_t cost = 1;
    unsigned lskip = 0;
    int last = -1; /* what ends the block: 0 none, 1 branch, 2 return, 3 call */

    flags(e);
    if (pct(g, 25)) {
        unsigned r = rn(g, 3);

        if (r == 0 && !e->shrt) {
            last = 1;
            lskip = newlabel(g);
        } else if (r == 1 && e->saved && !e->shrt && e->fi != 0) {
            last = 2;
        }
    }
    if (t) {
        char mask[4] = "";
        unsigned conds[4];

        conds[0] = c;
        for (unsigned i = 1; i < n; i++) {
            bool same = pct(g, 60);

            mask[i - 1] = same ? 't' : 'e';
            conds[i] = same ? c : c ^ 1u;
        }
        mask[n - 1] = '\0';
        g->st.it_blocks++;
        ins(e, "it%s %s", mask, CC[c]);
        for (unsigned i = 0; i < n; i++) {
            const char *cc = CC[conds[i]];

            g->st.cond_insns++;
            cost++;
            if (i == n - 1 && last == 1) {
                g->st.cond_branches++;
                ins(e, "b%s .L%u", cc, lskip);
            } else if (i == n - 1 && last == 2) {
                g->st.returns_indirect++;
                ins(e, "pop%s {%s, pc}", cc, e->saved);
            } else if (!e->safe && g->svc_in_it && pct(g, 12)) {
                g->st.svc_in_it++;
                svc(e, cc);
            } else if (pct(g, 25)) {
                mem_op(e, cc, true, false);
            } else {
                alu_op(e, cc, false);
            }
        }
    } else {
        for (unsigned i = 0; i < n; i++) {
            unsigned ci = pct(g, 60) ? c : pct(g, 50) ? c ^ 1u : rn(g, 14);
            const char *cc = CC[ci];

            g->st.cond_insns++;
            cost++;
            if (i == n - 1 && last == 1) {
                g->st.cond_branches++;
                ins(e, "b%s .L%u", cc, lskip);
            } else if (i == n - 1 && last == 2) {
                g->st.returns_indirect++;
                ins(e, pct(g, 50) ? "pop%s {%s, pc}" : "ldmfd%s sp!, {%s, pc}", cc, e->saved);
            } else if (!e->safe && pct(g, 6)) {
                svc(e, cc);
            } else if (pct(g, 15)) {
                multiple(e, cc, false);
            } else if (pct(g, 25)) {
                mem_op(e, cc, true, false);
            } else {
                alu_op(e, cc, false);
            }
        }
    }
    if (last == 1) {
        cost += sub_items(e, 1 + rn(g, 2), e->budget > cost ? e->budget - cost : 0, false);
        label(e, lskip);
    }
    return cost;
}

/* A forward conditional branch over a few items (B<c>, or CBZ/CBNZ). */
static uint64_t skip(em *e)
{
    gen *g = e->g;
    unsigned l = newlabel(g);
    uint64_t cost = 2;

    g->st.cond_branches++;
    if (e->isa == THUMB && pct(g, 40)) {
        /* CBZ/CBNZ: forward, 0..126 bytes (A8.8.29): a short body. */
        ins(e, "%s %s, .L%u", pct(g, 50) ? "cbz" : "cbnz", SCR[rn(g, 4)], l);
        cost += sub_items(e, 1, e->budget - 2, true);
    } else {
        flags(e);
        ins(e, "b%s .L%u", CC[rn(g, 14)], l);
        cost += sub_items(e, 1 + rn(g, 3), e->budget - 2, false);
    }
    label(e, l);
    return cost;
}

static uint64_t loop(em *e)
{
    gen *g = e->g;
    const char *r = e->depth ? "r5" : "r4";
    unsigned n = 1 + rn(g, 8), top = newlabel(g), end = newlabel(g), form;
    uint64_t body_budget, cost;
    em s = *e;

    if (e->budget < 40)
        return UINT64_MAX;
    if (pct(g, 15) && e->budget > 200)
        n = 10 + rn(g, 30); /* a long-running small loop */
    while (n > 1 && e->budget / n < 12)
        n--;
    body_budget = e->budget / n - 6;
    form = rn(g, e->isa == THUMB ? 4 : 3);
    g->st.loops++;
    s.depth++;
    switch (form) {
    case 0: /* count down, SUBS + BNE */
        ins(e, "mov %s, #%u", r, n);
        label(e, top);
        cost = sub_items(&s, 1 + rn(g, 3), body_budget, false);
        ins(e, "subs %s, %s, #1", r, r);
        ins(e, "bne .L%u", top);
        break;
    case 1: /* count up, CMP + BLT */
        ins(e, "mov %s, #0", r);
        label(e, top);
        cost = sub_items(&s, 1 + rn(g, 3), body_budget, false);
        ins(e, "add %s, %s, #1", r, r);
        ins(e, "cmp %s, #%u", r, n);
        ins(e, "blt .L%u", top);
        break;
    case 2: /* test at the top, unconditional branch back */
        ins(e, "mov %s, #%u", r, n);
        label(e, top);
        ins(e, "cmp %s, #0", r);
        ins(e, "beq .L%u", end);
        cost = sub_items(&s, 1 + rn(g, 3), body_budget, false);
        ins(e, "sub %s, %s, #1", r, r);
        ins(e, "b .L%u", top);
        label(e, end);
        break;
    default: /* Thumb: CBZ at the top (a short body) */
        ins(e, "mov %s, #%u", r, n);
        label(e, top);
        ins(e, "cbz %s, .L%u", r, end);
        cost = sub_items(&s, 1, body_budget, true);
        ins(e, "subs %s, %s, #1", r, r);
        ins(e, "b .L%u", top);
        label(e, end);
        break;
    }
    e->stat += s.stat;
    return 2 + (uint64_t)n * (cost + 4);
}

/* A switch on a scratch value through a jump table. */
static uint64_t sw(em *e)
{
    gen *g = e->g;
    bool t = e->isa == THUMB;
    unsigned form = rn(g, 3), n = 2 + rn(g, 6), p2 = n <= 2 ? 2 : n <= 4 ? 4 : 8;
    unsigned tab = newlabel(g), end = newlabel(g), cl[8];
    uint64_t most = 0, cb;
    bool tbb = t && form == 0;
    em s = *e;

    if (tbb && n > 5)
        n = 5, p2 = 8;
    for (unsigned i = 0; i < n; i++)
        cl[i] = newlabel(g);
    if (e->budget < 30)
        return UINT64_MAX;
    cb = (e->budget - 10) / 2;
    g->st.switches++;
    ins(e, "and r12, %s, #%u", sreg_no12(e), p2 - 1);
    if (!t && form == 0) { /* LDR pc from an inline table (PC reads +8) */
        ins(e, "ldr pc, [pc, r12, lsl #2]");
        ins(e, "nop");
        for (unsigned i = 0; i < p2; i++)
            sb_add(e->o, "\t.word .L%u\n", cl[i % n]);
        e->stat += p2;
    } else if (!t && form == 1) { /* ADD pc with a bounds check */
        ins(e, "cmp r12, #%u", n - 1);
        ins(e, "addls pc, pc, r12, lsl #2");
        ins(e, "b .L%u", end);
        for (unsigned i = 0; i < n; i++)
            ins(e, "b .L%u", cl[i]);
    } else if (!t) { /* LDR pc through a register */
        ins(e, "adr r3, .L%u", tab);
        ins(e, "ldr pc, [r3, r12, lsl #2]");
        sb_add(e->o, "\t.balign 4\n.L%u:\n", tab);
        for (unsigned i = 0; i < p2; i++)
            sb_add(e->o, "\t.word .L%u\n", cl[i % n]);
        e->stat += p2 + 1;
    } else if (form == 0) { /* TBB: byte offsets, short cases */
        ins(e, "tbb [pc, r12]");
        label(e, tab);
        for (unsigned i = 0; i < p2; i++)
            sb_add(e->o, "\t.byte (.L%u - .L%u) / 2\n", cl[i % n], tab);
        sb_add(e->o, "\t.balign 2\n");
        e->stat += p2 / 2;
    } else if (form == 1) { /* TBH */
        ins(e, "tbh [pc, r12, lsl #1]");
        label(e, tab);
        for (unsigned i = 0; i < p2; i++)
            sb_add(e->o, "\t.hword (.L%u - .L%u) / 2\n", cl[i % n], tab);
        e->stat += p2 / 2;
    } else { /* Thumb: MOV pc into a table of B.W (BranchWritePC) */
        ins(e, "adr r3, .L%u", tab);
        ins(e, "add r3, r3, r12, lsl #2");
        ins(e, "mov pc, r3");
        sb_add(e->o, "\t.balign 4\n.L%u:\n", tab);
        for (unsigned i = 0; i < p2; i++)
            ins(e, "b.w .L%u", cl[i % n]);
    }
    for (unsigned i = 0; i < n; i++) {
        uint64_t c;

        label(e, cl[i]);
        s.stat = 0;
        c = sub_items(&s, tbb ? 1 : 1 + rn(g, 2), cb, tbb);
        if (c > most)
            most = c;
        if (i + 1 < n)
            ins(e, "b .L%u", end);
    }
    e->stat += s.stat;
    label(e, end);
    return 6 + most;
}

/* ARM: POP/LDM {..., pc}; Thumb IT + POP: a conditional early return. */
static uint64_t cond_return(em *e)
{
    const char *c = CC[rn(e->g, 14)];

    flags(e);
    e->g->st.returns_indirect++;
    e->g->st.cond_insns++;
    if (e->isa == THUMB) {
        e->g->st.it_blocks++;
        ins(e, "it %s", c);
    }
    ins(e, "pop%s {%s, pc}", c, e->saved);
    return 2;
}

/* A literal pool jumped over, before the loads run out of range. */
static void pool(em *e)
{
    unsigned l = newlabel(e->g);

    ins(e, "b .L%u", l);
    sb_add(e->o, "\t.ltorg\n");
    label(e, l);
    e->g->since_pool = 0;
}

enum {
    I_ALU, I_COND, I_SKIP, I_LOOP, I_MEM, I_EXCL, I_CALL, I_REC, I_SWITCH,
    I_SVC, I_UDF, I_DABT, I_PABT, I_CTXID, I_BARRIER, I_CRET, I_N
};

static uint64_t item(em *e)
{
    gen *g = e->g;
    static const unsigned w[I_N] = {
        [I_ALU] = 18, [I_COND] = 14, [I_SKIP] = 8, [I_LOOP] = 9, [I_MEM] = 16, [I_EXCL] = 2,
        [I_CALL] = 14, [I_REC] = 3, [I_SWITCH] = 4, [I_SVC] = 3, [I_UDF] = 2, [I_DABT] = 3,
        [I_PABT] = 1, [I_CTXID] = 1, [I_BARRIER] = 2, [I_CRET] = 1,
    };
    unsigned total = 0, k;
    bool ok[I_N];

    if (!e->shrt && g->since_pool > 200)
        pool(e);
    for (k = 0; k < I_N; k++) {
        bool a = true;

        switch (k) {
        case I_LOOP: a = e->depth < 2 && !e->shrt && e->nest < 4 && e->budget >= 40; break;
        /* A short body (CBZ: 126 bytes forward; TBB: 510) holds one
         * item of a few instructions: no branch over more of them. */
        case I_SKIP: a = e->nest < 5 && !e->shrt; break;
        case I_COND: a = e->nest < 5; break;
        case I_SWITCH: a = !e->shrt && e->nest < 3 && e->budget >= 30; break;
        case I_CALL: case I_REC: a = !e->safe && !e->shrt && e->fi >= 0; break;
        case I_SVC: case I_UDF: case I_DABT: case I_PABT: case I_CTXID:
            /* M: no prefetch aborts (a fetch from unmapped memory is not
             * modelled, docs/cortex-m.md 1.4); I_CTXID pends an exception. */
            a = !e->safe && !(k == I_PABT && g->m);
            break;
        case I_CRET: a = e->saved && !e->shrt && e->fi != 0; break; /* main runs whole */
        default: break;
        }
        ok[k] = a;
        if (a)
            total += w[k];
    }
    for (int tries = 0; tries < 6; tries++) {
        unsigned r = rn(g, total);
        uint64_t c;

        for (k = 0; k < I_N; k++) {
            if (!ok[k])
                continue;
            if (r < w[k])
                break;
            r -= w[k];
        }
        switch (k) {
        case I_ALU: return alu_run(e);
        case I_COND: return cond_block(e);
        case I_SKIP: return skip(e);
        case I_LOOP: c = loop(e); break;
        case I_MEM: return mem_item(e);
        case I_EXCL: return exclusive(e);
        case I_CALL: c = call_item(e); break;
        case I_REC: c = rec_item(e); break;
        case I_SWITCH: c = sw(e); break;
        case I_SVC: return svc(e, "");
        case I_UDF: return udf(e);
        case I_DABT: return dabt(e);
        case I_PABT: return pabt(e);
        case I_CTXID: return ctxid(e);
        case I_BARRIER: return barrier(e);
        case I_CRET: return cond_return(e);
        default: c = UINT64_MAX; break;
        }
        if (c != UINT64_MAX)
            return c;
    }
    return alu_run(e);
}

/* Up to n items while the budget lasts (each item stays within what is
 * left: the ones that could overrun check first, the rest are small). */
static uint64_t items(em *e, unsigned n)
{
    uint64_t used = 0;

    for (unsigned i = 0; i < n; i++) {
        uint64_t c;

        if (e->budget < 24 && i > 0)
            break;
        c = item(e);
        used += c;
        e->budget = e->budget > c ? e->budget - c : 0;
    }
    return used;
}

/* ---- functions ---- */

static const char *const SEC[NSEC] = {".text", ".far1", ".far2", ".far3", ".far4"};

static void fn_head(gen *g, sb *o, const fn *f)
{
    if (f->sec)
        sb_add(o, "\t.section %s, \"ax\", %%progbits\n", SEC[f->sec]);
    else
        sb_add(o, "\t.text\n");
    sb_add(o, "\t.balign 4\n\t.global %s\n\t.type %s, %%function\n", f->name, f->name);
    if (f->isa == THUMB)
        sb_add(o, "\t.thumb\n\t.thumb_func\n");
    else
        sb_add(o, "\t.arm\n");
    sb_add(o, "%s:\n", f->name);
    (void)g;
}

static void fn_tail(gen *g, sb *o, const fn *f)
{
    sb_add(o, "\t.ltorg\n\t.size %s, . - %s\n\n", f->name, f->name);
    g->since_pool = 0;
}

static void gen_normal(gen *g, unsigned i, uint64_t cap)
{
    fn *f = &g->fns[i];
    em e = {g, &f->text, f->isa, (int)i, 0, 0, false, false, "r4-r8", cap, 0};
    uint64_t cost = 6;
    unsigned n = 3 + rn(g, 8);
    unsigned ret = rn(g, 8);

    fn_head(g, e.o, f);
    ins(&e, pct(g, 70) ? "push {r4-r8, lr}" : "stmfd sp!, {r4-r8, lr}");
    if (pct(g, 50)) {
        ins(&e, "ldr r6, =gdata");
    } else {
        ins(&e, "movw r6, #:lower16:gdata");
        ins(&e, "movt r6, #:upper16:gdata");
    }
    e.budget = cap > 20 ? cap - 20 : 0;
    cost += items(&e, n);
    /* Reach what nothing called yet: a share here, the rest from main. */
    for (unsigned j = i + 1; j < g->n; j++) {
        fn *c = &g->fns[j];

        if (c->called || (i != 0 && !pct(g, 40)))
            continue;
        if (c->kind == K_REC) {
            ins(&e, "mov r0, #%u", 1 + rn(g, 4));
            cost += 1 + call_to(&e, j) + 4 * c->cost;
        } else {
            cost += call_to(&e, j) + c->cost;
        }
    }
    /* The return, or a tail call (the callee returns to our caller). */
    g->st.returns_indirect += ret != 0;
    if (ret == 6 && i + 1 < g->n && g->fns[i + 1].kind == K_NORMAL) {
        fn *c = &g->fns[i + 1];

        c->called = true;
        g->st.calls++;
        ins(&e, "pop {r4-r8, lr}");
        if (c->isa == f->isa && !far_apart(g, f->sec, c->sec) && pct(g, 60)) {
            ins(&e, "b %s", c->name);
        } else {
            g->st.indirect_calls++;
            ins(&e, "ldr r12, =%s", c->name);
            ins(&e, "bx r12");
        }
        cost += 3 + c->cost;
    } else {
        switch (ret) {
        case 0: ins(&e, "pop {r4-r8, pc}"); break;
        case 1: ins(&e, "pop {r4-r8, lr}"); ins(&e, "bx lr"); break;
        case 2: ins(&e, "pop {r4-r8}"); ins(&e, "ldr pc, [sp], #4"); break;
        case 3:
            if (f->isa == ARM) { /* ARMv7 ARM state: an ALU write to pc interworks (A2.3.1) */
                ins(&e, "pop {r4-r8, lr}");
                ins(&e, "mov pc, lr");
                break;
            }
            /* fall through */
        case 4: ins(&e, "ldmfd sp!, {r4-r8, pc}"); break;
        default: ins(&e, "pop {r4-r8, pc}"); break;
        }
        cost += 2;
    }
    fn_tail(g, e.o, f);
    f->cost = cost;
}

/* rec(depth r0): calls itself while depth > 1; cost is per level. */
static void gen_rec(gen *g, unsigned i)
{
    fn *f = &g->fns[i];
    em e = {g, &f->text, f->isa, (int)i, 2, 0, false, false, "r4, r5", 0, 0};
    uint64_t cost = 8;
    unsigned l = newlabel(g);

    fn_head(g, e.o, f);
    ins(&e, "push {r4, r5, lr}");
    ins(&e, "mov r4, r0");
    e.fi = (int)g->n; /* no callees */
    e.budget = 30 + rn(g, 40);
    cost += items(&e, 1 + rn(g, 3));
    ins(&e, "subs r0, r4, #1");
    switch (rn(g, 3)) {
    case 0:
        if (f->isa == THUMB) {
            ins(&e, "it gt");
            g->st.it_blocks++;
        }
        ins(&e, "blgt %s", f->name);
        break;
    case 1:
        ins(&e, "ble .L%u", l);
        ins(&e, "bl %s", f->name);
        break;
    default:
        ins(&e, "ble .L%u", l);
        ins(&e, "ldr r12, =%s", f->name);
        ins(&e, "blx r12");
        break;
    }
    label(&e, l);
    g->st.calls++;
    ins(&e, "ldr r6, =gdata");
    e.budget = 30 + rn(g, 40);
    cost += items(&e, 1 + rn(g, 3));
    ins(&e, "pop {r4, r5, pc}");
    fn_tail(g, e.o, f);
    f->cost = cost;
}

/* A handler's helper: no exceptions, no calls, a few dozen instructions. */
static void gen_leaf(gen *g, fn *f)
{
    em e = {g, &f->text, f->isa, -1, 0, 0, true, false, NULL, 40 + rn(g, 60), 0};
    uint64_t cost = 6;

    fn_head(g, e.o, f);
    ins(&e, "push {r4-r8, lr}");
    ins(&e, "ldr r6, =gdata");
    cost += items(&e, 1 + rn(g, 4));
    ins(&e, "pop {r4-r8, pc}");
    fn_tail(g, e.o, f);
    f->cost = cost;
}

/* ---- handlers, start-up, data ---- */

/* Body of an IRQ/FIQ/SVC handler: safe items on saved registers, maybe a
 * leaf call. */
static void handler_body(gen *g, sb *o)
{
    em e = {g, o, g->hisa, -1, 0, 0, true, false, NULL, 20 + rn(g, 40), 0};

    ins(&e, "ldr r6, =gdata");
    items(&e, 1 + rn(g, 3));
    if (g->nleaf && pct(g, 60)) {
        fn *l = &g->leafs[rn(g, g->nleaf)];

        ins(&e, l->isa != g->hisa && pct(g, 50) ? "blx %s" : "bl %s", l->name);
    }
}

static void handlers(gen *g, sb *o)
{
    em e = {g, o, g->hisa, -1, 0, 0, true, false, NULL, 0, 0};
    const char *isa = g->hisa == THUMB ? "\t.thumb\n" : "\t.arm\n";

#define HEAD(name)                                                                  \
    sb_add(o, "\t.balign 4\n%s\t.global " name "\n\t.type " name ", %%function\n%s" name ":\n", \
           isa, g->hisa == THUMB ? "\t.thumb_func\n" : "")

    /* Undefined instruction: LR = its address + 4 (ARM) or + 2 (Thumb,
     * 16-bit UDF only), the next instruction (B1.9.6). */
    HEAD("undef_handler");
    ins(&e, "push {r0, r1}");
    ins(&e, "ldr r0, =exc_count");
    ins(&e, "ldr r1, [r0]");
    ins(&e, "add r1, r1, #1");
    ins(&e, "str r1, [r0]");
    ins(&e, "pop {r0, r1}");
    ins(&e, "movs pc, lr");

    /* Data abort: LR = its address + 8 in both states (B1.9.8); resume
     * at the next instruction, whose size a Thumb halfword tells
     * (A6.1: 0b11101, 0b11110, 0b11111 start a 32-bit one). */
    HEAD("dabt_handler");
    ins(&e, "push {r0, r1}");
    ins(&e, "mrs r0, spsr");
    ins(&e, "tst r0, #0x20");
    ins(&e, "beq 1f");
    ins(&e, "ldrh r1, [lr, #-8]");
    ins(&e, "lsr r1, r1, #11");
    ins(&e, "cmp r1, #0x1d");
    ins(&e, "bhs 1f");
    ins(&e, "sub lr, lr, #2");
    sb_add(o, "1:\n");
    ins(&e, "sub lr, lr, #4");
    ins(&e, "pop {r0, r1}");
    ins(&e, "movs pc, lr");

    /* Prefetch abort: resume where the program said (bit 0: Thumb). */
    HEAD("pabt_handler");
    ins(&e, "push {r0, r1}");
    ins(&e, "ldr lr, =pabt_resume");
    ins(&e, "ldr lr, [lr]");
    ins(&e, "mrs r0, spsr");
    ins(&e, "bic r0, r0, #0x20");
    ins(&e, "and r1, lr, #1");
    ins(&e, "orr r0, r0, r1, lsl #5");
    ins(&e, "bic lr, lr, #1");
    ins(&e, "msr spsr_cxsf, r0");
    ins(&e, "pop {r0, r1}");
    ins(&e, "movs pc, lr");

    /* SVC: LR = the next instruction (B1.9.4). */
    HEAD("svc_handler");
    if (g->hisa == ARM && pct(g, 50)) {
        ins(&e, "push {r0-r8, r12, lr}");
        handler_body(g, o);
        ins(&e, "ldmfd sp!, {r0-r8, r12, pc}^");
    } else {
        ins(&e, "push {r0-r8, r12, lr}");
        handler_body(g, o);
        ins(&e, "pop {r0-r8, r12, lr}");
        ins(&e, "movs pc, lr");
    }

    /* IRQ: LR = the interrupted instruction + 4 (B1.9.10). */
    HEAD("irq_handler");
    switch (rn(g, g->hisa == ARM ? 3 : 2)) {
    case 0:
        ins(&e, "sub lr, lr, #4");
        ins(&e, "srsdb sp!, #0x12");
        ins(&e, "push {r0-r8, r12, lr}");
        handler_body(g, o);
        ins(&e, "pop {r0-r8, r12, lr}");
        ins(&e, "rfeia sp!");
        break;
    case 1:
        ins(&e, "push {r0-r8, r12, lr}");
        handler_body(g, o);
        ins(&e, "pop {r0-r8, r12, lr}");
        ins(&e, "subs pc, lr, #4");
        break;
    default:
        ins(&e, "sub lr, lr, #4");
        ins(&e, "push {r0-r8, r12, lr}");
        handler_body(g, o);
        ins(&e, "ldmfd sp!, {r0-r8, r12, pc}^");
        break;
    }

    /* FIQ: r8-r12 are banked. */
    HEAD("fiq_handler");
    ins(&e, "push {r0-r7, lr}");
    handler_body(g, o);
    ins(&e, "pop {r0-r7, lr}");
    ins(&e, "subs pc, lr, #4");

    HEAD("_unexpected");
    sb_add(o, "\tb .\n"); /* never taken: a run stuck here ends at its budget */
    sb_add(o, "\t.ltorg\n");
#undef HEAD
}

/* Random values in r0-r12 but r6 and r7 (set before their first use),
 * one draw per register in order. */
static void random_regs(gen *g, em *e)
{
    for (unsigned r = 0; r < 13; r++) {
        uint32_t v = (uint32_t)rnd(g);

        if (r == 6 || r == 7)
            continue;
        ins(e, "movw r%u, #0x%x", r, v & 0xFFFFu);
        ins(e, "movt r%u, #0x%x", r, v >> 16);
    }
}

/* M handlers (ARMv7-M ARM B1.5.6-B1.5.8): the core stacks r0-r3, r12,
 * lr, pc and xPSR and puts EXC_RETURN in lr; a handler saves what else it
 * uses and returns by writing EXC_RETURN to the PC. */
static void m_head(sb *o, const char *name)
{
    sb_add(o, "\t.balign 4\n\t.thumb\n\t.global %s\n\t.type %s, %%function\n\t.thumb_func\n%s:\n",
           name, name, name);
}

static void handlers_m(gen *g, sb *o)
{
    em e = {g, o, THUMB, -1, 0, 0, true, false, NULL, 0, 0};
    static const char *const bodies[] = {"SVC_Handler", "PendSV_Handler", "SysTick_Handler",
                                         "NMI_Handler", "IRQ_Handler"};

    /* UsageFault, BusFault and HardFault (a fault escalated while its
     * handler is disabled): resume after the faulting instruction, whose
     * address is the stacked return address (B1.5.6: synchronous faults
     * return to the faulting instruction), the frame on the stack
     * EXC_RETURN bit 2 names; a halfword from 0b11101 up starts a 32-bit
     * instruction (A5.1).  CFSR and HFSR are write-one-to-clear. */
    m_head(o, "Fault_Handler");
    ins(&e, "tst lr, #4");
    ins(&e, "ite eq");
    ins(&e, "mrseq r0, msp");
    ins(&e, "mrsne r0, psp");
    ins(&e, "ldr r1, [r0, #24]");
    ins(&e, "ldrh r2, [r1]");
    ins(&e, "lsrs r2, r2, #11");
    ins(&e, "cmp r2, #0x1d");
    ins(&e, "ite hs");
    ins(&e, "addhs r1, r1, #4");
    ins(&e, "addlo r1, r1, #2");
    ins(&e, "str r1, [r0, #24]");
    ins(&e, "ldr r0, =0xE000ED28");
    ins(&e, "ldr r1, [r0]");
    ins(&e, "str r1, [r0]");
    ins(&e, "ldr r1, [r0, #4]");
    ins(&e, "str r1, [r0, #4]");
    ins(&e, "ldr r0, =exc_count");
    ins(&e, "ldr r1, [r0]");
    ins(&e, "adds r1, r1, #1");
    ins(&e, "str r1, [r0]");
    ins(&e, "bx lr");

    for (unsigned i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        m_head(o, bodies[i]);
        ins(&e, "push {r4-r8, lr}");
        handler_body(g, o);
        if (pct(g, 50)) {
            ins(&e, "pop {r4-r8, pc}");
        } else {
            ins(&e, "pop {r4-r8, lr}");
            ins(&e, "bx lr");
        }
    }

    m_head(o, "_unexpected");
    sb_add(o, "\tb .\n"); /* never taken: a run stuck here ends at its budget */
    sb_add(o, "\t.ltorg\n");
}

/* M start-up: the v7-M vector table at 0 (VTOR resets to 0, B3.2.5;
 * word 0 the initial MSP, then the handlers, B1.5.3), the NVIC lines
 * 0..7 and the system handlers' priorities, the fault handlers enabled
 * or left to escalate, Thread mode on MSP or PSP, then main. */
static void startup_m(gen *g, sb *o)
{
    static const char *const vec[] = {
        "_reset", "NMI_Handler", "Fault_Handler", "_unexpected", "Fault_Handler",
        "Fault_Handler", NULL, NULL, NULL, NULL, "SVC_Handler", "_unexpected", NULL,
        "PendSV_Handler", "SysTick_Handler"};
    em e = {g, o, THUMB, -1, 0, 0, true, false, NULL, 0, 0};

    sb_add(o, "\t.section .vectors, \"a\", %%progbits\n\t.global _vectors\n_vectors:\n");
    sb_add(o, "\t.word _msp_top\n");
    for (unsigned i = 0; i < sizeof vec / sizeof vec[0]; i++)
        sb_add(o, "\t.word %s\n", vec[i] ? vec[i] : "0");
    for (unsigned i = 0; i < 8; i++)
        sb_add(o, "\t.word IRQ_Handler\n");
    sb_add(o, "\n");

    m_head(o, "_reset");
    /* Priorities: NVIC_IPR of lines 0..7, then SHPR2 (SVCall) and SHPR3
     * (PendSV, SysTick), in steps of 0x20 (a Cortex-M3/M4 keeps at least
     * the top 3 bits). */
    for (unsigned i = 0; i < 8; i += 4) {
        uint32_t v = 0;

        for (unsigned b = 0; b < 4; b++)
            v |= (0x20u * rn(g, 8)) << (8 * b);
        ins(&e, "ldr r0, =0x%08x", 0xE000E400u + i);
        ins(&e, "ldr r1, =0x%08x", v);
        ins(&e, "str r1, [r0]");
    }
    ins(&e, "ldr r0, =0xE000ED1C");
    ins(&e, "ldr r1, =0x%08x", (0x20u * rn(g, 8)) << 24);
    ins(&e, "str r1, [r0]");
    ins(&e, "ldr r1, =0x%08x", ((0x20u * rn(g, 8)) << 24) | ((0x20u * rn(g, 8)) << 16));
    ins(&e, "str r1, [r0, #4]");
    ins(&e, "ldr r0, =0xE000E100");
    ins(&e, "mov r1, #0xff");
    ins(&e, "str r1, [r0]");
    if (pct(g, 60)) { /* SHCSR: UsageFault and BusFault handlers enabled */
        ins(&e, "ldr r0, =0xE000ED24");
        ins(&e, "ldr r1, [r0]");
        ins(&e, "orr r1, r1, #0x60000");
        ins(&e, "str r1, [r0]");
    }
    if (pct(g, 50)) { /* Thread mode on the process stack (CONTROL.SPSEL) */
        ins(&e, "ldr r0, =_psp_top");
        ins(&e, "msr psp, r0");
        ins(&e, "movs r0, #2");
        ins(&e, "msr control, r0");
        ins(&e, "isb");
    }
    random_regs(g, &e);
    ins(&e, "bl main");
    sb_add(o, "\t.global _exit\n\t.type _exit, %%function\n\t.thumb_func\n_exit:\n\tb _exit\n"
              "\t.ltorg\n\n");
}

static void startup(gen *g, sb *o)
{
    static const char *const vec[8] = {"_reset", "undef_handler", "svc_handler", "pabt_handler",
                                       "dabt_handler", "_unexpected", "irq_handler", "fiq_handler"};
    em e = {g, o, ARM, -1, 0, 0, true, false, NULL, 0, 0};
    bool lit = pct(g, 40);
    static const struct { unsigned mode; const char *top; } stk[] = {
        {0x12, "_irq_stack_top"}, {0x11, "_fiq_stack_top"}, {0x17, "_abt_stack_top"},
        {0x1b, "_und_stack_top"}, {0x13, "_svc_stack_top"}, {0x1f, "_sys_stack_top"},
    };

    /* The vector table at 0 (the scenario keeps VBAR 0, SCTLR.V 0),
     * executed in the handlers' state (SCTLR.TE). */
    sb_add(o, "\t.section .vectors, \"ax\", %%progbits\n\t.global _vectors\n");
    sb_add(o, g->hisa == THUMB ? "\t.thumb\n" : "\t.arm\n");
    sb_add(o, "_vectors:\n");
    for (unsigned i = 0; i < 8; i++) {
        if (g->hisa == THUMB)
            ins(&e, i == 0 ? "b.w _vectors" : "b.w %s", vec[i]);
        else if (lit)
            ins(&e, "ldr pc, =%s", vec[i]);
        else
            ins(&e, "b %s", vec[i]);
    }
    sb_add(o, "\t.ltorg\n\n");

    sb_add(o, "\t.text\n\t.arm\n\t.balign 4\n\t.global _reset\n\t.type _reset, %%function\n_reset:\n");
    for (unsigned i = 0; i < 6; i++) {
        ins(&e, "cps #0x%x", stk[i].mode);
        ins(&e, "ldr sp, =%s", stk[i].top);
    }
    if (g->hisa == THUMB) { /* SCTLR.TE: exceptions enter in Thumb (B1.8.3) */
        ins(&e, "mrc p15, 0, r0, c1, c0, 0");
        ins(&e, "orr r0, r0, #0x40000000");
        ins(&e, "mcr p15, 0, r0, c1, c0, 0");
        ins(&e, "isb");
    }
    if (pct(g, 50)) {
        ins(&e, "ldr r0, =0x%x", (unsigned)rnd(g));
        ins(&e, "mcr p15, 0, r0, c13, c0, 1");
    }
    random_regs(g, &e);
    /* Interrupts on: the scenario's may arrive from here on (main runs in
     * System mode, so that an SVC does not clobber its lr). */
    ins(&e, "cpsie if");
    ins(&e, "bl main");
    sb_add(o, "\t.global _exit\n\t.type _exit, %%function\n_exit:\n\tb _exit\n\t.ltorg\n\n");
}

static void data(gen *g, sb *o)
{
    sb_add(o, "\t.section .rodata\n\t.balign 4\n\t.global fptab\nfptab:\n");
    for (unsigned j = 1; j < g->n; j++)
        sb_add(o, "\t.word %s\n", g->fns[j].name);
    if (g->n == 1)
        sb_add(o, "\t.word 0\n");
    sb_add(o, "\n\t.data\n\t.balign 8\n\t.global gdata\ngdata:\n");
    for (unsigned i = 0; i < GDATA_SIZE / 4; i++)
        sb_add(o, "%s0x%08x%s", i % 8 ? ", " : "\t.word ", (unsigned)rnd(g), i % 8 == 7 ? "\n" : "");
    if (g->m) {
        sb_add(o, "\n\t.bss\n\t.balign 8\n\t.global exc_count\n"
                  "exc_count:\t.space 4\n\t.balign 8\n"
                  "\t.space 0x2000\n_psp_top:\n"
                  "\t.space 0x2000\n_msp_top:\n");
        return;
    }
    sb_add(o, "\n\t.bss\n\t.balign 8\n\t.global exc_count, pabt_resume\n"
              "exc_count:\t.space 4\npabt_resume:\t.space 4\n"
              "\t.balign 8\n"
              "\t.space 0x400\n_irq_stack_top:\n"
              "\t.space 0x400\n_fiq_stack_top:\n"
              "\t.space 0x400\n_abt_stack_top:\n"
              "\t.space 0x400\n_und_stack_top:\n"
              "\t.space 0x800\n_svc_stack_top:\n"
              "\t.space 0x4000\n_sys_stack_top:\n");
}

static void ldscript(gen *g, sb *o)
{
    sb_add(o, "/* tracebench gen: near code, data and stacks from 0; far sections at\n"
              " * addresses that need every branch-address size (docs/gen.md). */\n"
              "ENTRY(_reset)\nSECTIONS\n{\n    . = 0x0;\n"
              "    .text : { KEEP(*(.vectors)) *(.text*) *(.rodata*) *(.glue_7*) *(.vfp11_veneer) *(.v4_bx) }\n"
              "    . = ALIGN(16);\n    .data : { *(.data*) }\n    .bss : { *(.bss*) *(COMMON) }\n");
    for (unsigned s = 1; s < NSEC; s++)
        if (g->far_used[s])
            sb_add(o, "    %s %s0x%08x%s : { *(%s) }\n", SEC[s], s == 1 ? "MAX(ALIGN(0x1000), " : "",
                   g->far[s], s == 1 ? ")" : "", SEC[s]);
    sb_add(o, "    /DISCARD/ : { *(.ARM.exidx*) *(.ARM.extab*) *(.comment) }\n}\n");
}

/* M: the outside world's exceptions: NVIC lines 0..7 with a priority
 * (the program set its own; the scenario's is the reset value it
 * overwrites), an NMI, SysTick as a boot loader left it running. */
static void scenario_m(gen *g, sb *o, const tb_gen_opts *opt)
{
    uint64_t est = g->st.est_insns, span = est / 2 + 50;
    unsigned nirq = rn(g, 4);

    sb_add(o, "; tracebench gen --seed %llu --isa m --size %u (generated)\n[sim]\n",
           (unsigned long long)opt->seed, g->n);
    sb_add(o, "cpu = cortex-m%u\nseed = %u\n", g->mcpu, 1 + rn(g, 1000000));
    sb_add(o, "max_insns = %llu\n", (unsigned long long)(4 * est + 200000));
    sb_add(o, "undef = allow\ndata_abort = allow\n");
    for (unsigned i = 0; i < nirq; i++) {
        g->st.irqs++;
        sb_add(o, "[irq]\nline = %u\npriority = 0x%02x\n", rn(g, 8), 0x20u * rn(g, 8));
        if (i == 2 && g->n > 1) {
            sb_add(o, "at_addr = %s\nhit = %u\n", g->fns[1 + rn(g, g->n - 1)].name,
                   1 + rn(g, 2));
            continue;
        }
        sb_add(o, "at_insn = %llu\n", (unsigned long long)(20 + rnd(g) % span));
        if (pct(g, 40))
            sb_add(o, "every = %u\ncount = %u\n", 100 + rn(g, 3000), 2 + rn(g, 5));
    }
    if (pct(g, 30)) {
        g->st.fiqs++;
        sb_add(o, "[nmi]\nat_insn = %llu\n", (unsigned long long)(20 + rnd(g) % span));
    }
    if (pct(g, 40)) {
        g->st.systick = true;
        sb_add(o, "[systick]\nevery = %u\n", 150 + rn(g, 3000));
    }
}

static void scenario(gen *g, sb *o, const tb_gen_opts *opt, const char *isa)
{
    static const char *const cpu[] = {"a15", "a9", "a7"};
    uint64_t est = g->st.est_insns, span = est / 2 + 50;
    unsigned nirq = rn(g, 4), nfiq = rn(g, 3);

    sb_add(o, "; tracebench gen --seed %llu --isa %s --size %u (generated)\n[sim]\n",
           (unsigned long long)opt->seed, isa, g->n);
    sb_add(o, "cpu = %s\nseed = %u\n", cpu[rn(g, 3)], 1 + rn(g, 1000000));
    /* Far above what the program can run (est_insns bounds it without
     * interrupts; each interrupt adds a bounded handler): a run that hits
     * the budget is a generator bug, not a long program. */
    sb_add(o, "max_insns = %llu\n", (unsigned long long)(4 * est + 200000));
    sb_add(o, "undef = allow\ndata_abort = allow\nprefetch_abort = allow\n");
    for (unsigned i = 0; i < nirq; i++) {
        g->st.irqs++;
        if (i == 2 && g->n > 1) {
            sb_add(o, "[irq]\nat_addr = %s\nhit = %u\n", g->fns[1 + rn(g, g->n - 1)].name,
                   1 + rn(g, 2));
            continue;
        }
        sb_add(o, "[irq]\nat_insn = %llu\n", (unsigned long long)(20 + rnd(g) % span));
        if (pct(g, 40))
            sb_add(o, "every = %u\ncount = %u\n", 100 + rn(g, 3000), 2 + rn(g, 5));
    }
    for (unsigned i = 0; i < nfiq; i++) {
        g->st.fiqs++;
        if (pct(g, 35)) {
            /* At an exception vector before its first instruction runs:
             * FIQ is not masked by undefined, SVC, abort or IRQ entry. */
            static const unsigned v[] = {0x4, 0x8, 0xc, 0x10, 0x18};
            unsigned k = rn(g, 5);

            sb_add(o, "[fiq]\nat_addr = 0x%x\nhit = %u\n", v[k], 1 + rn(g, 3));
            continue;
        }
        sb_add(o, "[fiq]\nat_insn = %llu\n", (unsigned long long)(20 + rnd(g) % span));
        if (pct(g, 30))
            sb_add(o, "every = %u\ncount = %u\n", 150 + rn(g, 3000), 2 + rn(g, 4));
    }
}

/* ---- the program ---- */

tb_gen_isa tb_gen_seed_isa(uint64_t seed)
{
    return (tb_gen_isa)(mix(seed ^ 0x6A09E667F3BCC908ull) % 3);
}

const char *tb_gen_isa_name(tb_gen_isa isa)
{
    return isa == TB_GEN_ARM     ? "arm"
           : isa == TB_GEN_THUMB ? "thumb"
           : isa == TB_GEN_M     ? "m"
                                 : "mixed";
}

int tb_gen_isa_parse(const char *s)
{
    if (!s)
        return -1;
    if (!strcmp(s, "arm"))
        return TB_GEN_ARM;
    if (!strcmp(s, "thumb"))
        return TB_GEN_THUMB;
    if (!strcmp(s, "mixed"))
        return TB_GEN_MIXED;
    if (!strcmp(s, "m"))
        return TB_GEN_M;
    return -1;
}

uint64_t tb_gen_hash(const char *text)
{
    uint64_t h = 0xCBF29CE484222325ull;

    for (const unsigned char *q = (const unsigned char *)text; q && *q; q++)
        h = (h ^ *q) * 0x100000001B3ull;
    return h;
}

void tb_gen_program_fini(tb_gen_program *p)
{
    if (!p)
        return;
    free(p->source);
    free(p->ldscript);
    free(p->scenario);
    p->source = p->ldscript = p->scenario = NULL;
}

int tb_gen_make(const tb_gen_opts *o, tb_gen_program *p, char *err, size_t errlen)
{
    gen g;
    sb src = {0}, ld = {0}, scn = {0}, body = {0}, secs[NSEC];
    unsigned size;
    uint64_t total;
    int rc = 0;

    if (err && errlen)
        err[0] = '\0';
    if (!o || !p)
        return TB_ERR_INVAL;
    memset(p, 0, sizeof *p);
    size = o->size ? o->size : TB_GEN_SIZE_DEFAULT;
    if (size > TB_GEN_SIZE_MAX) {
        if (err)
            snprintf(err, errlen, "size %u is too large (1..%u functions)", size, TB_GEN_SIZE_MAX);
        return TB_ERR_INVAL;
    }
    if (o->isa < -1 || o->isa > TB_GEN_M) {
        if (err)
            snprintf(err, errlen, "isa %d is none of arm, thumb, mixed, m", o->isa);
        return TB_ERR_INVAL;
    }
    memset(&g, 0, sizeof g);
    memset(secs, 0, sizeof secs);
    g.rng = mix(o->seed ^ 0x243F6A8885A308D3ull);
    g.isa = o->isa < 0 ? tb_gen_seed_isa(o->seed) : (tb_gen_isa)o->isa;
    g.n = size;
    if (!(g.fns = calloc(size, sizeof *g.fns)))
        return TB_ERR_NOMEM;
    g.far[1] = 0x00010000u + 0x1000u * rn(&g, 0xE0);
    g.far[2] = 0x00200000u + 0x10000u * rn(&g, 0xD0);
    g.far[3] = 0x04000000u + 0x100000u * rn(&g, 0xC0);
    g.far[4] = 0xC0000000u + 0x100000u * rn(&g, 0x3F0);
    g.abort_base = 0x90000000u + 0x1000u * rn(&g, 0x10000);
    g.pabt_base = 0xA0000000u + 0x1000u * rn(&g, 0x10000);
    g.hisa = g.isa != TB_GEN_ARM && pct(&g, 40) ? THUMB : ARM;
    g.svc_in_it = g.isa != TB_GEN_ARM && pct(&g, 10);
    g.st.thumb_handlers = g.hisa == THUMB;
    if (g.isa == TB_GEN_M) {
        /* Every draw above stays (the A-profile programs of a seed do not
         * change); M overrides what its memory map and exception model
         * need (ARMv7-M ARM B3.1: code may run from the Code, SRAM and
         * external RAM regions, 0x60000000-0x9FFFFFFF; the Device regions
         * above are execute-never). */
        g.m = true;
        g.mcpu = pct(&g, 50) ? 4 : 3;
        g.far[4] = 0x60000000u + 0x100000u * rn(&g, 0x100);
        g.abort_base = 0x70000000u + 0x1000u * rn(&g, 0x10000);
        g.hisa = THUMB;
        g.svc_in_it = false;
        g.st.thumb_handlers = false;
        g.st.m_cpu = g.mcpu;
    }

    for (unsigned i = 0; i < size; i++) {
        fn *f = &g.fns[i];

        f->isa = g.isa == TB_GEN_ARM ? ARM : g.isa == TB_GEN_MIXED ? (int)rn(&g, 2) : THUMB;
        f->sec = i == 0 || pct(&g, 70) ? 0 : 1 + (int)rn(&g, 4);
        f->kind = i > 0 && pct(&g, 15) ? K_REC : K_NORMAL;
        snprintf(f->name, sizeof f->name, i == 0 ? "main" : f->kind == K_REC ? "rec%u" : "f%u", i);
        g.far_used[f->sec] = true;
        g.st.funcs++;
        g.st.thumb_funcs += f->isa == THUMB;
        g.st.far_funcs += f->sec != 0;
    }
    g.nleaf = 1 + rn(&g, MAX_LEAFS);
    for (unsigned i = 0; i < g.nleaf; i++) {
        fn *f = &g.leafs[i];

        f->isa = g.isa == TB_GEN_ARM ? ARM : g.isa == TB_GEN_MIXED ? (int)rn(&g, 2) : THUMB;
        f->kind = K_LEAF;
        snprintf(f->name, sizeof f->name, "leaf%u", i);
        gen_leaf(&g, f);
    }
    /* Callees first: a caller's budget needs their costs. */
    total = 2000ull * size;
    for (unsigned i = size; i-- > 0;) {
        if (g.fns[i].kind == K_REC)
            gen_rec(&g, i);
        else
            gen_normal(&g, i, i == 0 ? total : 150 + rnd(&g) % (total / 3 + 1));
    }
    g.st.est_insns = g.fns[0].cost + 60;

    sb_add(&src, "@ tracebench gen --seed %llu --isa %s --size %u: a generated program\n"
                 "@ (docs/gen.md).  Built with arm-none-eabi-gcc -mcpu=cortex-a15 -nostdlib\n"
                 "@ -T gen.ld; scenario gen.ini.  At most %llu instructions without interrupts.\n"
                 "\t.syntax unified\n\n",
           (unsigned long long)o->seed, tb_gen_isa_name(g.isa), size,
           (unsigned long long)g.st.est_insns);
    if (g.m) {
        /* The directive outranks the build's -mcpu: the ELF says ARMv7-M
         * (or v7E-M), which the simulator checks against the cpu. */
        sb_add(&src, "\t.cpu cortex-m%u\n\t.thumb\n\n", g.mcpu);
        startup_m(&g, &src);
        sb_add(&src, "\t.text\n");
        handlers_m(&g, &src);
    } else {
        startup(&g, &src);
        sb_add(&src, "\t.text\n");
        handlers(&g, &src);
    }
    sb_add(&src, "\n");
    for (unsigned i = 0; i < g.nleaf; i++)
        sb_cat(&secs[0], &g.leafs[i].text);
    for (unsigned i = 0; i < size; i++)
        sb_cat(&secs[g.fns[i].sec], &g.fns[i].text);
    for (unsigned s = 0; s < NSEC; s++)
        sb_cat(&body, &secs[s]);
    sb_cat(&src, &body);
    data(&g, &src);
    ldscript(&g, &ld);
    if (g.m)
        scenario_m(&g, &scn, o);
    else
        scenario(&g, &scn, o, tb_gen_isa_name(g.isa));

    if (src.oom || ld.oom || scn.oom || !src.p || !ld.p || !scn.p) {
        rc = TB_ERR_NOMEM;
        free(src.p);
        free(ld.p);
        free(scn.p);
    } else {
        p->isa = g.isa;
        p->size = size;
        p->source = src.p;
        p->ldscript = ld.p;
        p->scenario = scn.p;
        p->stats = g.st;
    }
    for (unsigned i = 0; i < size; i++)
        free(g.fns[i].text.p);
    for (unsigned i = 0; i < g.nleaf; i++)
        free(g.leafs[i].text.p);
    for (unsigned s = 0; s < NSEC; s++)
        free(secs[s].p);
    free(body.p);
    free(g.fns);
    return rc;
}
