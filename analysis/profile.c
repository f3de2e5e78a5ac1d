/*
 * A profile from decoder elements (profile.h).  Five tables, one
 * open-addressed hash type keyed by four words:
 *   nodes:  (parent, func, kind)          -> stack node id
 *   blocks: (node, start, count, isa)     -> hits, cycles (the hot path)
 *   edges:  (caller, site, callee, kind)  -> calls, inclusive insns, cycles
 *   insns:  (func, addr, isa)             -> count, cycles
 *   stacks: (node, leaf)                  -> insns, cycles
 * Blocks unfold into insns and stacks when a source ends or the block
 * table reaches its limit.
 */
#include <stdlib.h>
#include <string.h>

#include "tracebench/decoder.h"
#include "tracebench/profile.h"

#define NONE 0xFFFFFFFFu

typedef struct hent {
    uint32_t k[4];
    uint64_t v[3];
    bool used;
} hent;

typedef struct htab {
    hent *e;
    size_t cap, n;
} htab;

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

/* One mix of the key's two halves, the second spread by a multiply that
 * runs beside the first half's shifts: the block lookup sits on the
 * element path, where a chain of two mixes cost more than the decode of
 * the range (perf, bench_decode --analysis). */
static inline size_t hkey4(uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    return (size_t)mix(((uint64_t)a << 32 | b) ^
                       (((uint64_t)c << 32 | d) * 0x9e3779b97f4a7c15ull));
}

static inline size_t hkey(const uint32_t k[4])
{
    return hkey4(k[0], k[1], k[2], k[3]);
}

static int ht_init(htab *t, size_t cap)
{
    t->e = calloc(cap, sizeof *t->e);
    t->cap = cap;
    t->n = 0;
    return t->e ? 0 : TB_ERR_NOMEM;
}

static int ht_grow(htab *t)
{
    size_t ncap = t->cap * 2;
    hent *ne = calloc(ncap, sizeof *ne);

    if (!ne)
        return TB_ERR_NOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->e[i].used)
            continue;
        size_t j = hkey(t->e[i].k) & (ncap - 1);

        while (ne[j].used)
            j = (j + 1) & (ncap - 1);
        ne[j] = t->e[i];
    }
    free(t->e);
    t->e = ne;
    t->cap = ncap;
    return 0;
}

/* The entry of key k, made (zeroed) when new; NULL when out of memory. */
static hent *ht_get(htab *t, uint32_t a, uint32_t b, uint32_t c, uint32_t d, bool *made)
{
    size_t j;

    if ((t->n + 1) * 2 > t->cap && ht_grow(t) < 0)
        return NULL;
    j = hkey4(a, b, c, d) & (t->cap - 1);
    /* The key compared as values, not as an array on the stack read back
     * by memcmp (a store-forwarding stall on the element path). */
    while (t->e[j].used) {
        const uint32_t *k = t->e[j].k;

        if (k[0] == a && k[1] == b && k[2] == c && k[3] == d) {
            if (made)
                *made = false;
            return &t->e[j];
        }
        j = (j + 1) & (t->cap - 1);
    }
    t->e[j].k[0] = a;
    t->e[j].k[1] = b;
    t->e[j].k[2] = c;
    t->e[j].k[3] = d;
    t->e[j].used = true;
    t->n++;
    if (made)
        *made = true;
    return &t->e[j];
}

static void ht_clear(htab *t)
{
    memset(t->e, 0, t->cap * sizeof *t->e);
    t->n = 0;
}

typedef struct node {
    uint32_t parent, func;
    uint8_t kind;
} node;

typedef struct frame {
    uint32_t ret;       /* return address */
    uint32_t node;      /* the stack node of the callee */
    uint32_t caller, site, callee;
    uint8_t kind;
    uint64_t insns0, cycles0; /* the counters at entry */
} frame;

typedef struct pending {
    bool have;
    uint8_t kind;
    uint32_t ret, caller, site;
} pending;

struct tb_profile {
    const tb_memimage *mem;
    bool in_source, started;
    /* symbols, sorted by lo */
    uint32_t (*sym)[2];
    size_t nsym, symcap;
    bool sym_sorted;
    node *nodes;
    size_t nnodes, nodecap;
    htab node_ix, blocks, edges, insns, stacks;
    size_t max_blocks;
    frame *stk;
    size_t depth;
    uint32_t cur_node;  /* the stack node now running (NONE: no code yet) */
    uint32_t root;      /* the node of the stack's bottom */
    bool after_gap;
    bool disc;          /* the next range follows a taken branch or an
                         * exception: it may be a return */
    pending pend;
    /* A debug halt (exception number 1, IHI0014Q 7.3.5, IHI0035B 4.5.4)
     * shown since the last range: no edge of the program (the core
     * restarts where it stopped, docs/debug-halt.md), and its exit
     * (I-sync reason b11) no gap.  halt_exc: no exception shown since
     * it, so a restart elsewhere than halt_ret is an exception taken
     * there that ETMv3 does not show (trace is off at the restart). */
    bool halted, halt_exc;
    uint32_t halt_ret;
    uint32_t last_addr; /* the last instruction that ran */
    uint8_t bloom[256]; /* return addresses in stk, by hash: counts */
    /* The blocks slot last found for a range starting at these address
     * bits: loops repeat their ranges, and a direct index skips the
     * hash.  Always < blocks.cap (it never shrinks); the slot's key is
     * compared in full, so a stale index only misses. */
    uint32_t bmemo[256];
    tb_profile_stats st;
    uint32_t *addrs;
    size_t acap;
    tb_profile_insn *out_i;
    tb_profile_call *out_c;
    tb_profile_stack *out_s;
};

tb_profile *tb_profile_new(void)
{
    tb_profile *p = calloc(1, sizeof *p);

    if (!p)
        return NULL;
    p->max_blocks = TB_PROFILE_MAX_BLOCKS;
    p->stk = calloc(TB_PROFILE_MAX_DEPTH, sizeof *p->stk);
    if (!p->stk || ht_init(&p->node_ix, 1024) || ht_init(&p->blocks, 4096) ||
        ht_init(&p->edges, 256) || ht_init(&p->insns, 4096) || ht_init(&p->stacks, 256)) {
        tb_profile_free(p);
        return NULL;
    }
    p->cur_node = NONE;
    return p;
}

void tb_profile_free(tb_profile *p)
{
    if (!p)
        return;
    free(p->sym);
    free(p->nodes);
    free(p->node_ix.e);
    free(p->blocks.e);
    free(p->edges.e);
    free(p->insns.e);
    free(p->stacks.e);
    free(p->stk);
    free(p->addrs);
    free(p->out_i);
    free(p->out_c);
    free(p->out_s);
    free(p);
}

static int cmp_sym(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;

    return (x[0] > y[0]) - (x[0] < y[0]);
}

int tb_profile_set_max_blocks(tb_profile *p, size_t max)
{
    if (!p || max < p->blocks.cap || (max & (max - 1)))
        return TB_ERR_INVAL;
    p->max_blocks = max;
    return 0;
}

int tb_profile_add_func(tb_profile *p, uint32_t lo, uint32_t hi)
{
    if (!p || hi <= lo || p->started)
        return TB_ERR_INVAL;
    if (p->nsym == p->symcap) {
        size_t ncap = p->symcap ? p->symcap * 2 : 64;
        uint32_t(*ns)[2] = realloc(p->sym, ncap * sizeof *ns);

        if (!ns)
            return TB_ERR_NOMEM;
        p->sym = ns;
        p->symcap = ncap;
    }
    p->sym[p->nsym][0] = lo;
    p->sym[p->nsym][1] = hi;
    p->nsym++;
    p->sym_sorted = false;
    return 0;
}

/* The symbol holding a, or NONE. */
static uint32_t sym_of(const tb_profile *p, uint32_t a)
{
    size_t lo = 0, hi = p->nsym;

    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;

        if (p->sym[m][0] <= a)
            lo = m + 1;
        else
            hi = m;
    }
    return lo && a < p->sym[lo - 1][1] ? p->sym[lo - 1][0] : NONE;
}

bool tb_profile_is_symbol(const tb_profile *p, uint32_t func)
{
    return p && sym_of(p, func) == func;
}

/* The function of an instruction at a under stack node n. */
static uint32_t func_at(const tb_profile *p, uint32_t n, uint32_t a)
{
    uint32_t s = sym_of(p, a);

    if (s != NONE)
        return s;
    return n == NONE ? a : p->nodes[n].func;
}

/* The node (parent, func, kind), made when new; NONE when the table is
 * full (the caller then keeps the parent's). */
static int node_get(tb_profile *p, uint32_t parent, uint32_t func, uint8_t kind, uint32_t *id)
{
    bool made;
    hent *h;

    if (p->nnodes >= TB_PROFILE_MAX_STACKS) {
        hent *e = NULL;
        /* Known nodes are still found. */
        uint32_t k[4] = {parent, func, kind, 0};
        size_t j = hkey(k) & (p->node_ix.cap - 1);

        while (p->node_ix.e[j].used) {
            if (!memcmp(p->node_ix.e[j].k, k, sizeof k)) {
                e = &p->node_ix.e[j];
                break;
            }
            j = (j + 1) & (p->node_ix.cap - 1);
        }
        *id = e ? (uint32_t)e->v[0] : NONE;
        return 0;
    }
    h = ht_get(&p->node_ix, parent, func, kind, 0, &made);
    if (!h)
        return TB_ERR_NOMEM;
    if (made) {
        if (p->nnodes == p->nodecap) {
            size_t ncap = p->nodecap ? p->nodecap * 2 : 256;
            node *nn = realloc(p->nodes, ncap * sizeof *nn);

            if (!nn)
                return TB_ERR_NOMEM;
            p->nodes = nn;
            p->nodecap = ncap;
        }
        p->nodes[p->nnodes] = (node){.parent = parent, .func = func, .kind = kind};
        h->v[0] = p->nnodes++;
    }
    *id = (uint32_t)h->v[0];
    return 0;
}

int tb_profile_begin(tb_profile *p, tb_protocol protocol, const tb_memimage *mem)
{
    (void)protocol;
    if (!p || !mem)
        return TB_ERR_INVAL;
    if (p->in_source)
        return TB_ERR_STATE;
    if (!p->sym_sorted) {
        size_t k = 0;

        /* By address; a range overlapping the one before it (an alias,
         * a nested symbol) is dropped: the first one there names the
         * code. */
        if (p->nsym) /* qsort wants a non-NULL base even for none */
            qsort(p->sym, p->nsym, sizeof *p->sym, cmp_sym);
        for (size_t i = 0; i < p->nsym; i++)
            if (!k || p->sym[i][0] >= p->sym[k - 1][1]) {
                p->sym[k][0] = p->sym[i][0];
                p->sym[k][1] = p->sym[i][1];
                k++;
            }
        p->nsym = k;
        p->sym_sorted = true;
    }
    p->started = true;
    p->in_source = true;
    p->mem = mem;
    p->depth = 0;
    p->cur_node = NONE;
    p->after_gap = false;
    p->pend.have = false;
    p->halted = p->halt_exc = false;
    memset(p->bloom, 0, sizeof p->bloom);
    return 0;
}

static inline unsigned bloom_ix(uint32_t a)
{
    return (unsigned)((a * 0x9E3779B1u) >> 24);
}

/* Closes the top frame: its inclusive cost up to now. */
static int pop(tb_profile *p)
{
    frame *f = &p->stk[--p->depth];
    hent *e = ht_get(&p->edges, f->caller, f->site, f->callee, f->kind, NULL);

    if (!e)
        return TB_ERR_NOMEM;
    e->v[1] += p->st.insns - f->insns0;
    e->v[2] += p->st.cycles - f->cycles0;
    p->bloom[bloom_ix(f->ret)]--;
    p->cur_node = p->depth ? p->stk[p->depth - 1].node : p->root;
    return 0;
}

static int unwind_all(tb_profile *p)
{
    while (p->depth) {
        int r = pop(p);

        if (r < 0)
            return r;
    }
    return 0;
}

/* The pending call or exception enters target. */
static int enter(tb_profile *p, uint32_t target)
{
    pending c = p->pend;
    uint32_t callee = sym_of(p, target), n;
    hent *e;
    int r;

    p->pend.have = false;
    if (callee == NONE)
        callee = target;
    e = ht_get(&p->edges, c.caller, c.site, callee, c.kind, NULL);
    if (!e)
        return TB_ERR_NOMEM;
    e->v[0]++;
    if (p->depth == TB_PROFILE_MAX_DEPTH) {
        p->st.deep_calls++;
        return 0;
    }
    r = node_get(p, p->cur_node, callee, c.kind, &n);
    if (r < 0)
        return r;
    if (n == NONE) {
        p->st.shared_stacks++;
        n = p->cur_node;
    }
    p->stk[p->depth++] = (frame){.ret = c.ret, .node = n, .caller = c.caller, .site = c.site,
                                 .callee = callee, .kind = c.kind, .insns0 = p->st.insns,
                                 .cycles0 = p->st.cycles};
    p->bloom[bloom_ix(c.ret)]++;
    p->cur_node = n;
    return 0;
}

/* ---- unfolding blocks ---- */

static int unfold(tb_profile *p)
{
    for (size_t i = 0; i < p->blocks.cap; i++) {
        const hent *b = &p->blocks.e[i];
        tb_element el;
        int n;

        if (!b->used)
            continue;
        el = (tb_element){.kind = TB_ELEM_INSN_RANGE, .start = b->k[1], .count = b->k[2],
                          .isa = (uint8_t)b->k[3]};
        if (el.count > p->acap) {
            uint32_t *a = realloc(p->addrs, el.count * sizeof *a);

            if (!a)
                return TB_ERR_NOMEM;
            p->addrs = a;
            p->acap = el.count;
        }
        n = tb_range_addrs(p->mem, &el, p->addrs, el.count);
        if (n < 0)
            return n;
        for (int k = 0; k < n; k++) {
            uint32_t f = func_at(p, b->k[0], p->addrs[k]);
            uint64_t cyc = k + 1 == n ? b->v[1] : 0;
            hent *in = ht_get(&p->insns, f, p->addrs[k], el.isa, 0, NULL);
            hent *s = ht_get(&p->stacks, b->k[0], f, 0, 0, NULL);

            if (!in || !s)
                return TB_ERR_NOMEM;
            in->v[0] += b->v[0];
            in->v[1] += cyc;
            s->v[0] += b->v[0];
            s->v[1] += cyc;
        }
    }
    ht_clear(&p->blocks);
    return 0;
}

/* An element after which what ran is unknown (as codecov.c has them):
 * trace on again after a filter, overflow or debug, a loss of sync
 * other than the trace's end, code the image lacks. */
static bool is_gap(const tb_profile *p, const tb_element *el)
{
    switch (el->kind) {
    case TB_ELEM_TRACE_ON:
        /* An exit from debug state after its halt was shown: nothing ran
         * unseen.  Without the halt (ETMv1, ETMv2 trace none; or trace
         * was off at it) it is a gap. */
        return p->cur_node != NONE &&
               (el->reason == TB_ISYNC_TRACE_ON || el->reason == TB_ISYNC_OVERFLOW ||
                (el->reason == TB_ISYNC_DEBUG_EXIT && !p->halted));
    case TB_ELEM_NO_SYNC:
        return el->err != TB_ERR_TRUNCATED && p->cur_node != NONE;
    case TB_ELEM_ADDR_NACC:
    case TB_ELEM_ADDR_UNKNOWN:
        return p->cur_node != NONE;
    default:
        return false;
    }
}

int tb_profile_element(tb_profile *p, const tb_element *el)
{
    hent *b;
    int r;

    if (!p || !el || !p->in_source)
        return TB_ERR_INVAL;
    if (el->kind == TB_ELEM_EXCEPTION && el->exc_num == 1 && !el->tailchain) {
        p->halted = p->halt_exc = p->cur_node != NONE;
        p->halt_ret = el->pref_return;
        return 0;
    }
    if (el->kind == TB_ELEM_EXCEPTION) {
        uint32_t ret = el->pref_return;

        p->halt_exc = false;
        if (p->pend.have && ret) {
            /* A call whose target never ran: the exception came first,
             * at the callee's first instruction. */
            r = enter(p, ret);
            if (r < 0)
                return r;
        }
        if (p->cur_node == NONE)
            return 0; /* before any code: no caller to charge */
        if (el->tailchain && p->depth && p->stk[p->depth - 1].kind == TB_PROFILE_EXC) {
            /* v7-M tail-chaining: the next handler takes the place of
             * the one that ended, returning where it would have. */
            ret = p->stk[p->depth - 1].ret;
            if ((r = pop(p)) < 0)
                return r;
        }
        p->disc = true;
        p->pend = (pending){.have = true, .kind = TB_PROFILE_EXC, .ret = ret,
                            .caller = func_at(p, p->cur_node, p->last_addr),
                            .site = p->last_addr};
        return 0;
    }
    if (el->kind != TB_ELEM_INSN_RANGE) {
        if (is_gap(p, el)) {
            p->halted = p->halt_exc = false;
            if ((r = unwind_all(p)) < 0)
                return r;
            p->cur_node = NONE;
            p->after_gap = true;
            p->pend.have = false;
            p->st.gaps++;
        }
        return 0;
    }
    if (!el->count)
        return 0;
    if (p->halted) {
        bool unseen = p->halt_exc && el->start != p->halt_ret;

        p->halted = p->halt_exc = false;
        if (unseen) {
            /* ETMv3: an exception taken at the restart, before its
             * first instruction, shows only as the exit's I-sync at its
             * vector (docs/debug-halt.md): its edge, returning to the
             * restart address. */
            tb_element x = {.kind = TB_ELEM_EXCEPTION, .pref_return = p->halt_ret};

            if ((r = tb_profile_element(p, &x)) < 0)
                return r;
        }
    }
    if (p->cur_node == NONE) {
        uint32_t f = sym_of(p, el->start);

        r = node_get(p, NONE, f == NONE ? el->start : f,
                     p->after_gap ? TB_PROFILE_ROOT_GAP : TB_PROFILE_ROOT, &p->cur_node);
        if (r < 0)
            return r;
        if (p->cur_node == NONE) /* the table is full: charge any root */
            p->cur_node = 0;
        p->root = p->cur_node;
        p->pend.have = false;
    } else if (p->pend.have) {
        if ((r = enter(p, el->start)) < 0)
            return r;
    } else if (p->disc && p->depth && p->bloom[bloom_ix(el->start)]) {
        /* A return: to the topmost frame whose return address this is.
         * Only after a taken branch: code that falls through to a
         * return address (a loop's exit in a handler interrupted just
         * there) has not returned. */
        for (size_t i = p->depth; i-- > 0;) {
            if (p->stk[i].ret != el->start)
                continue;
            while (p->depth > i)
                if ((r = pop(p)) < 0)
                    return r;
            break;
        }
    }
    b = &p->blocks.e[p->bmemo[(el->start >> 1) & 255]];
    if (!(b->used && b->k[0] == p->cur_node && b->k[1] == el->start && b->k[2] == el->count &&
          b->k[3] == el->isa)) {
        if ((p->blocks.n + 1) * 2 > p->blocks.cap && p->blocks.cap * 2 > p->max_blocks &&
            (r = unfold(p)) < 0)
            return r;
        b = ht_get(&p->blocks, p->cur_node, el->start, el->count, el->isa, NULL);
        if (!b)
            return TB_ERR_NOMEM;
        p->bmemo[(el->start >> 1) & 255] = (uint32_t)(b - p->blocks.e);
    }
    b->v[0]++;
    p->st.insns += el->count;
    if (el->has_cc) {
        b->v[1] += el->cc;
        p->st.cycles += el->cc;
        p->st.has_cycles = true;
    }
    p->last_addr = el->last_addr;
    p->disc = el->last_atom == 'E' && el->last_wp != TB_WP_NONE && el->last_wp != TB_WP_ISB &&
              el->last_wp != TB_WP_BARRIER;
    if ((el->last_wp == TB_WP_DIRECT_LINK || el->last_wp == TB_WP_INDIRECT_LINK) &&
        el->last_atom == 'E')
        p->pend = (pending){.have = true, .kind = TB_PROFILE_CALL,
                            .ret = el->last_addr + el->last_size,
                            .caller = func_at(p, p->cur_node, el->last_addr),
                            .site = el->last_addr};
    return 0;
}

int tb_profile_end(tb_profile *p)
{
    int r;

    if (!p)
        return TB_ERR_INVAL;
    if (!p->in_source)
        return TB_ERR_STATE;
    r = unwind_all(p);
    if (r >= 0)
        r = unfold(p);
    p->in_source = false;
    p->mem = NULL;
    p->cur_node = NONE;
    p->pend.have = false;
    return r;
}

static int cmp_insn(const void *a, const void *b)
{
    const tb_profile_insn *x = a, *y = b;

    if (x->func != y->func)
        return x->func < y->func ? -1 : 1;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return (x->isa > y->isa) - (x->isa < y->isa);
}

static int cmp_call(const void *a, const void *b)
{
    const tb_profile_call *x = a, *y = b;

    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    if (x->site != y->site)
        return x->site < y->site ? -1 : 1;
    if (x->callee != y->callee)
        return x->callee < y->callee ? -1 : 1;
    return (x->kind > y->kind) - (x->kind < y->kind);
}

static int cmp_stack(const void *a, const void *b)
{
    const tb_profile_stack *x = a, *y = b;

    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return (x->leaf > y->leaf) - (x->leaf < y->leaf);
}

const tb_profile_insn *tb_profile_insns(tb_profile *p, size_t *n)
{
    tb_profile_insn *o;
    size_t k = 0;

    if (!p || !n)
        return NULL;
    o = realloc(p->out_i, (p->insns.n ? p->insns.n : 1) * sizeof *o);
    if (!o)
        return NULL;
    p->out_i = o;
    for (size_t i = 0; i < p->insns.cap; i++) {
        const hent *e = &p->insns.e[i];

        if (e->used)
            o[k++] = (tb_profile_insn){.func = e->k[0], .addr = e->k[1], .isa = (uint8_t)e->k[2],
                                       .count = e->v[0], .cycles = e->v[1]};
    }
    qsort(o, k, sizeof *o, cmp_insn);
    *n = k;
    return o;
}

const tb_profile_call *tb_profile_calls(tb_profile *p, size_t *n)
{
    tb_profile_call *o;
    size_t k = 0;

    if (!p || !n)
        return NULL;
    o = realloc(p->out_c, (p->edges.n ? p->edges.n : 1) * sizeof *o);
    if (!o)
        return NULL;
    p->out_c = o;
    for (size_t i = 0; i < p->edges.cap; i++) {
        const hent *e = &p->edges.e[i];

        if (e->used)
            o[k++] = (tb_profile_call){.caller = e->k[0], .site = e->k[1], .callee = e->k[2],
                                       .kind = (uint8_t)e->k[3], .calls = e->v[0],
                                       .insns = e->v[1], .cycles = e->v[2]};
    }
    qsort(o, k, sizeof *o, cmp_call);
    *n = k;
    return o;
}

const tb_profile_stack *tb_profile_stacks(tb_profile *p, size_t *n)
{
    tb_profile_stack *o;
    size_t k = 0;

    if (!p || !n)
        return NULL;
    o = realloc(p->out_s, (p->stacks.n ? p->stacks.n : 1) * sizeof *o);
    if (!o)
        return NULL;
    p->out_s = o;
    for (size_t i = 0; i < p->stacks.cap; i++) {
        const hent *e = &p->stacks.e[i];

        if (e->used)
            o[k++] = (tb_profile_stack){.node = e->k[0], .leaf = e->k[1], .insns = e->v[0],
                                        .cycles = e->v[1]};
    }
    qsort(o, k, sizeof *o, cmp_stack);
    *n = k;
    return o;
}

int tb_profile_frames(const tb_profile *p, uint32_t n, uint32_t *out, size_t max,
                      unsigned *root_kind)
{
    size_t d = 0;

    if (!p || n >= p->nnodes)
        return TB_ERR_INVAL;
    for (uint32_t i = n; i != NONE; i = p->nodes[i].parent) {
        d++;
        if (root_kind)
            *root_kind = p->nodes[i].kind;
    }
    if (d > max)
        return TB_ERR_INVAL;
    {
        size_t k = d;

        for (uint32_t i = n; i != NONE; i = p->nodes[i].parent)
            out[--k] = p->nodes[i].func;
    }
    return (int)d;
}

tb_profile_stats tb_profile_get_stats(const tb_profile *p)
{
    tb_profile_stats s = {0};

    return p ? p->st : s;
}
