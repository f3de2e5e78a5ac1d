/*
 * Comparator: the simulator's ground truth against the decoder's
 * elements, as both stream in (rules in roundtrip.h).
 *
 * The truth the decoder has not reached yet waits in a ring that grows
 * with the decoder's lag (a P-header's atoms, a FIFO's bytes), never
 * with the run.  Each side is consumed from the front; the first
 * disagreement freezes the comparator and writes the report.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebench/roundtrip.h"
#include "../common/struct_size.h"

#define HIST 8

/* A truth record waiting for the decoder. */
typedef struct tq {
    uint64_t seq, cycle;
    uint32_t addr;        /* insn: address; exception: preferred return;
                           * data: data address */
    uint32_t iaddr, value; /* data: its instruction, the value */
    uint8_t dexp;         /* data: what the decode must show (DX_*) */
    uint32_t ctx;         /* context: CONTEXTIDR */
    uint16_t exc_num;
    uint8_t kind;         /* tb_rec_kind */
    uint8_t isa, size, wp, flags, vmid;
    bool cancelled;       /* insn cancelled by the exception after it */
    bool untraced;        /* insn outside the ViewInst filter */
    bool ns;              /* insn: ran Non-secure (TB_REC_STATE) */
    bool required;        /* exception taken while trace was on; v7-M
                           * exception return of a traced instruction */
    bool tailchain;       /* v7-M exception: entered by tail-chaining */
    bool resume;          /* the encoder's overflow I-sync resumed here */
    bool debug_resume;    /* insn: the first after a debug halt, traced: the
                           * decode shows an exit from debug state before it */
} tq;

/* What the decode shows of a truth data transfer (roundtrip.h). */
enum { DX_NONE = 0, DX_REQ, DX_VNT };

/* A decoded instruction, for the report. */
typedef struct dq {
    uint32_t addr;
    uint8_t isa;
    char atom;            /* 'E', 'N', or '?' where the protocol is silent */
    uint64_t index;
} dq;

struct tb_compare {
    tb_encoder_opts o;
    char label[256];
    bool ptm;
    bool v7m;                /* a Cortex-M: v7-M numbers, tail-chains and
                              * exception returns checked (o.v7m) */

    tq *q;
    size_t cap, head, len;   /* ring of waiting truth */
    size_t last_insn, prev_last_insn; /* ring positions (absolute counts) */
    uint64_t pushed;         /* records ever queued */
    bool have_last, have_prev_last;
    bool prev_traced;        /* the last truth insn was in the filter */

    /* decode state */
    bool gap_open;           /* a gap element since the last match */
    bool overflow_gap;       /* ... and it was an overflow */
    bool resume_open;        /* ... whose resume point nothing has shown yet */
    bool gap_ctx_shown;      /* ... and the restart's own context matched */
    bool have_dec_ctx;       /* a CONTEXT element has been checked: */
    uint32_t dec_ctx;        /* the context the decoder shows now */
    uint8_t dec_vmid;
    uint32_t ctx;            /* truth context at the front */
    uint8_t vmid;
    bool push_ns;            /* truth security state at the newest record */
    bool dec_ns;             /* decoded security state (context elements) */
    uint64_t last_ts;
    bool have_ts;
    uint64_t cc_sum;         /* decoded cycle counts so far */
    bool cc_started;
    int64_t cc_base;         /* truth cycle minus decoded total */
    tq last_matched;         /* for EXC_RETURN and timestamps */
    bool have_matched;
    unsigned events;         /* trigger EVENT elements seen */
    uint64_t dropped_cycle;  /* the last record consumed unshown */
    bool have_dropped;
    bool lost_tail;          /* overflowed, never resumed */
    bool debug_pending;      /* truth: a debug halt since the last insn */
    bool dec_debug_exit;     /* decode: an exit from debug state (I-sync
                              * reason b11) not yet matched to its restart */

    tq th[HIST];             /* last matched truth instructions */
    unsigned th_n;
    dq dh[HIST];             /* last decoded instructions */
    unsigned dh_n;

    /* Data trace (ETMv3, tb_encoder_opts.data_trace): ETMCR[3:2]. */
    uint8_t dt;
    bool insn_inview;        /* the last truth insn had a transfer in ViewData */
    bool dsup;               /* suppressed: transfers excused up to the next
                              * data element (IHI0014Q 7.4.6) */
    tq ooo[4];               /* truth of each outstanding placeholder, by tag */
    bool ooo_valid[4], ooo_gap[4];
    tq ooo_lost;             /* a placeholder whose value never came */
    bool have_ooo_lost;

    /* Data-only mode (ETMCR[20]): only transfers are queued (donly_truth). */
    bool donly;
    uint32_t donly_insn;     /* the last truth instruction's address ... */
    uint64_t donly_from;     /* ... and the record count before its transfers */

    tb_compare_stats st;
    int err;
    char report[4096];
};

/* ------------------------------------------------------------------ */
/* The truth ring. */

static tq *at(tb_compare *c, size_t i)
{
    return &c->q[(c->head + i) & (c->cap - 1)];
}

/* The ring's next slot, zeroed and counted, or NULL without memory: the
 * truth is built in place, one copy per record rather than three. */
static tq *push_slot(tb_compare *c)
{
    tq *t;

    if (c->len == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 1024, i;
        tq *nq = malloc(nc * sizeof *nq);

        if (!nq)
            return NULL;
        for (i = 0; i < c->len; i++)
            nq[i] = *at(c, i);
        free(c->q);
        c->q = nq;
        c->cap = nc;
        c->head = 0;
    }
    t = &c->q[(c->head + c->len) & (c->cap - 1)];
    memset(t, 0, sizeof *t);
    c->len++;
    c->pushed++;
    return t;
}

/* Ring position of an absolute record number, or NULL once consumed. */
static tq *by_number(tb_compare *c, size_t n)
{
    size_t first = (size_t)c->pushed - c->len;

    if (n < first || n >= c->pushed)
        return NULL;
    return at(c, n - first);
}

static void pop(tb_compare *c)
{
    c->head = (c->head + 1) & (c->cap - 1);
    c->len--;
}

/* ------------------------------------------------------------------ */
/* The report. */

static void add(char *buf, size_t cap, const char *fmt, ...)
{
    size_t n = strlen(buf);
    va_list ap;

    if (n + 1 >= cap)
        return;
    va_start(ap, fmt);
    vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
}

static void truth_line(char *buf, size_t cap, const tq *t)
{
    switch (t->kind) {
    case TB_REC_INSN:
        add(buf, cap, "    #%llu 0x%08x %s %c%s%s%s\n", (unsigned long long)t->seq, t->addr,
            tb_isa_name((tb_isa)t->isa), t->flags & TB_INSN_COND_FAILED ? 'N' : 'E',
            t->wp ? " " : "", t->wp ? tb_wp_class_name((tb_wp_class)t->wp) : "",
            t->cancelled ? " (cancelled)" : t->untraced ? " (outside the filter)" : "");
        break;
    case TB_REC_EXCEPTION:
        add(buf, cap, "    #%llu exception %u%s return 0x%08x%s\n", (unsigned long long)t->seq,
            t->exc_num, t->tailchain ? " (tail-chain)" : "", t->addr,
            t->required ? "" : " (trace off)");
        break;
    case TB_REC_EXC_RETURN:
        add(buf, cap, "    #%llu exception return from %u%s%s\n", (unsigned long long)t->seq,
            t->exc_num, t->tailchain ? " (tail-chains)" : "",
            t->required ? "" : " (trace off)");
        break;
    case TB_REC_CONTEXT:
        add(buf, cap, "    #%llu context 0x%08x vmid %u\n", (unsigned long long)t->seq, t->ctx,
            t->vmid);
        break;
    case TB_REC_DATA:
        add(buf, cap, "    #%llu data %s 0x%08x size %u value 0x%08x%s of 0x%08x%s\n",
            (unsigned long long)t->seq, t->flags & TB_DATA_STORE ? "st" : "ld", t->addr, t->size,
            t->value, t->flags & TB_DATA_STORE_FAILED ? " failed" : "", t->iaddr,
            t->cancelled ? " (cancelled)" : t->dexp == DX_NONE ? " (not traced)"
            : t->dexp == DX_VNT ? " (value not traced)" : "");
        break;
    default:
        add(buf, cap, "    #%llu end\n", (unsigned long long)t->seq);
        break;
    }
}

static int fail(tb_compare *c, const tb_element *el, const char *fmt, ...)
{
    char *r = c->report;
    size_t cap = sizeof c->report, i;
    char line[256];
    va_list ap;

    if (c->err)
        return c->err;
    c->err = TB_ERR_MISMATCH;
    r[0] = '\0';
    add(r, cap, "MISMATCH: ");
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    add(r, cap, "%s\n", line);
    if (el) {
        tb_elem_format(el, line, sizeof line);
        add(r, cap, "  at packet offset %llu, element: %s\n", (unsigned long long)el->index,
            line);
    }
    add(r, cap, "  configuration: %s\n", c->label);
    add(r, cap, "  truth, the last %u instructions matched:\n", c->th_n < HIST ? c->th_n : HIST);
    for (i = c->th_n < HIST ? 0 : c->th_n - HIST; i < c->th_n; i++)
        truth_line(r, cap, &c->th[i % HIST]);
    add(r, cap, "  truth, next:\n");
    for (i = 0; i < c->len && i < 4; i++)
        truth_line(r, cap, at(c, i));
    if (!c->len)
        add(r, cap, "    (nothing left)\n");
    add(r, cap, "  decode, the last %u instructions:\n", c->dh_n < HIST ? c->dh_n : HIST);
    for (i = c->dh_n < HIST ? 0 : c->dh_n - HIST; i < c->dh_n; i++) {
        const dq *d = &c->dh[i % HIST];
        add(r, cap, "    0x%08x %s %c  (packet %llu)\n", d->addr, tb_isa_name((tb_isa)d->isa),
            d->atom, (unsigned long long)d->index);
    }
    return c->err;
}

/* ------------------------------------------------------------------ */
/* Life cycle and the truth side. */


tb_compare *tb_compare_new(const tb_encoder_opts *o, const char *label)
{
    tb_compare *c;

    if (!o || !(c = calloc(1, sizeof *c)))
        return NULL;
    if (tb_struct_take(&c->o, sizeof c->o, o, TB_ENCODER_OPTS_SIZE_MIN, "tb_encoder_opts",
                       NULL, 0) < 0) {
        free(c);
        return NULL;
    }
    o = &c->o;
    c->ptm = o->protocol == TB_PROTO_PTM;
    c->v7m = o->v7m != 0;
    c->dt = o->protocol == TB_PROTO_ETMV3 || o->protocol == TB_PROTO_ETMV1 ||
                    o->protocol == TB_PROTO_ETMV2
                ? (uint8_t)(o->data_trace & 3) : 0;
    c->donly = o->protocol == TB_PROTO_ETMV3 && o->data_only;
    snprintf(c->label, sizeof c->label, "%s", label ? label : "");
    return c;
}

/* Data-only mode (ETMCR[20], IHI0014Q 7.4.10): the trace holds no
 * instruction, exception or context, so the truth's transfers alone are
 * queued, each with what the decode must show (as in tb_compare_truth);
 * an instruction only says whether its transfers are traced (ViewInst)
 * and which ones a cancelling exception takes back. */
static int donly_truth(tb_compare *c, const tb_exec_record *r)
{
    tq *t;

    switch (r->kind) {
    case TB_REC_INSN:
        c->prev_traced = !(c->o.n_ranges && !tb_encoder_in_filter(&c->o, r->u.insn.addr));
        c->insn_inview = false;
        c->st.truth_insns++;
        c->donly_insn = r->u.insn.addr;
        c->donly_from = c->pushed;
        return 0;
    case TB_REC_EXCEPTION:
        /* The instruction it cancels did not execute, nor its transfers
         * (sim.h; the encoder traces none). */
        if (r->u.exc.cancelled && r->u.exc.pref_return == c->donly_insn)
            for (uint64_t k = c->donly_from; k < c->pushed; k++)
                if ((t = by_number(c, (size_t)k)) != NULL)
                    t->cancelled = true;
        return 0;
    case TB_REC_END:
        if (!(t = push_slot(c)))
            return TB_ERR_NOMEM;
        t->kind = TB_REC_END;
        t->seq = r->seq;
        t->cycle = r->cycle;
        return 0;
    default:
        return 0;
    }
}

void tb_compare_free(tb_compare *c)
{
    if (!c)
        return;
    free(c->q);
    free(c);
}

int tb_compare_truth(tb_compare *c, const tb_exec_record *r)
{
    tq *t;
    tq *prev;

    if (!c || !r)
        return TB_ERR_INVAL;
    if (c->err)
        return c->err;
    if (r->kind == TB_REC_DATA) {
        /* Without data trace a run's data records are not compared.  A
         * data record changes no resume point: the encoder emits nothing
         * as it takes one (it goes with its pending instruction). */
        if (!c->dt)
            return 0;
        if (!(t = push_slot(c)))
            return TB_ERR_NOMEM;
        t->kind = TB_REC_DATA;
        t->seq = r->seq;
        t->cycle = r->cycle;
        t->addr = r->u.data.addr;
        t->iaddr = r->u.data.insn_addr;
        t->value = r->u.data.size >= 4 ? r->u.data.value
                                      : r->u.data.value & ((1u << (8 * r->u.data.size)) - 1u);
        t->size = r->u.data.size;
        t->flags = r->u.data.flags;
        /* IHI0014Q 7.4.4: of a traced instruction, the transfers ViewData
         * selects, and after the first of them the others as Value not
         * traced; those before it give nothing. */
        if (!c->prev_traced) {
            t->dexp = DX_NONE;
        } else if (tb_encoder_in_dataview(&c->o, t->addr)) {
            t->dexp = DX_REQ;
            c->insn_inview = true;
        } else {
            t->dexp = c->insn_inview ? DX_VNT : DX_NONE;
        }
        return 0;
    }
    /* Not queued: a return pre-empted while it unstacked is withdrawn
     * by the Cancel of the next exception's packet (DDI0337E 15.5.2), so
     * the decode shows none: an exception return there meets the
     * exception's record and fails. */
    if (r->kind == TB_REC_EXC_RETURN && r->u.eret.preempted)
        return 0;
    /* Not queued: the instructions after it carry the state. */
    if (r->kind == TB_REC_STATE) {
        c->push_ns = r->u.state.ns;
        return 0;
    }
    if (c->donly)
        return donly_truth(c, r);
    if (!(t = push_slot(c)))
        return TB_ERR_NOMEM;
    t->kind = (uint8_t)r->kind;
    t->seq = r->seq;
    t->cycle = r->cycle;
    c->have_prev_last = c->have_last;
    c->prev_last_insn = c->last_insn;
    switch (r->kind) {
    case TB_REC_INSN:
        t->addr = r->u.insn.addr;
        t->isa = r->u.insn.isa;
        t->ns = c->push_ns;
        t->size = r->u.insn.size;
        t->wp = r->u.insn.wp_class;
        t->flags = r->u.insn.flags;
        t->untraced = c->o.n_ranges && !tb_encoder_in_filter(&c->o, t->addr);
        /* The restart after a debug halt: traced, it is announced by an
         * I-sync with reason b11 (IHI0014Q 7.10.5 Table 7.21: only when
         * the first instruction after the exit is traced). */
        t->debug_resume = c->debug_pending && !t->untraced;
        c->debug_pending = false;
        c->prev_traced = !t->untraced;
        c->insn_inview = false;
        c->st.truth_insns++;
        c->last_insn = (size_t)c->pushed - 1; /* this record's number */
        c->have_last = true;
        break;
    case TB_REC_EXC_RETURN:
        /* v7-M: the trace shows it (the exception return packet) when
         * its instruction was traced. */
        t->exc_num = r->u.eret.num;
        t->tailchain = r->u.eret.tailchain;
        t->addr = r->u.eret.target;
        t->required = c->prev_traced;
        break;
    case TB_REC_EXCEPTION:
        t->addr = r->u.exc.pref_return;
        /* v7-M: the architecture's number (the decoder maps the traced
         * value back, DDI0337G Table 14-8). */
        t->exc_num = r->u.exc.kind == TB_EXC_V7M
                        ? r->u.exc.num
                        : (uint16_t)tb_exc_trace_number((tb_exc_kind)r->u.exc.kind);
        t->tailchain = r->u.exc.tailchain;
        /* Traced when trace is on as it is taken, i.e. the instruction
         * before it was traced (encoder.c, process_exc). */
        t->required = c->prev_traced;
        /* Taken at the restart from a debug halt, before any instruction
         * ran: trace is off there (encoder.c, process_exc), as with an
         * exception taken outside the filter. */
        if (c->debug_pending)
            t->required = false;
        if (r->u.exc.kind == TB_EXC_DEBUG_HALT) {
            c->debug_pending = true;
            /* The ETMv1 and ETMv2 ports trace no entry to Debug state,
             * only the exit (encoder/port_model.c, docs/debug-halt.md). */
            if (tb_protocol_is_port(c->o.protocol))
                t->required = false;
        }
        /* The instruction it cancels did not execute (sim.h). */
        if (r->u.exc.cancelled && c->have_last &&
            (prev = by_number(c, c->last_insn)) != NULL && prev->addr == t->addr &&
            !prev->cancelled) {
            size_t k;

            prev->cancelled = true;
            c->st.cancelled++;
            /* Its transfers did not happen either (the encoder traces
             * none). */
            for (k = c->last_insn + 1; k < c->pushed; k++)
                if ((prev = by_number(c, k)) != NULL && prev->kind == TB_REC_DATA)
                    prev->cancelled = true;
        }
        break;
    case TB_REC_CONTEXT:
        t->ctx = r->u.ctx.context_id;
        t->vmid = r->u.ctx.vmid;
        break;
    default:
        break;
    }
    return 0;
}

int tb_compare_truth_many(tb_compare *c, const tb_exec_record *r, size_t n)
{
    int rc;

    if (!c || (!r && n))
        return TB_ERR_INVAL;
    for (size_t i = 0; i < n; i++, r++) {
        tq *t;
        bool untraced;

        if (c->err)
            return c->err;
        /* Data-only mode queues transfers alone (donly_truth): each
         * record goes the one-record way. */
        if (r->kind != TB_REC_INSN || c->donly) {
            if ((rc = tb_compare_truth(c, r)) < 0)
                return rc;
            continue;
        }
        /* An instruction: tb_compare_truth's steps, the slot written
         * whole (no zeroing first). */
        if (c->len == c->cap) {
            if (!push_slot(c)) /* grows the ring */
                return TB_ERR_NOMEM;
        } else {
            c->len++;
            c->pushed++;
        }
        t = &c->q[(c->head + c->len - 1) & (c->cap - 1)];
        untraced = c->o.n_ranges && !tb_encoder_in_filter(&c->o, r->u.insn.addr);
        *t = (tq){.seq = r->seq,
                  .cycle = r->cycle,
                  .addr = r->u.insn.addr,
                  .kind = TB_REC_INSN,
                  .isa = r->u.insn.isa,
                  .size = r->u.insn.size,
                  .wp = r->u.insn.wp_class,
                  .flags = r->u.insn.flags,
                  .untraced = untraced,
                  .ns = c->push_ns,
                  .debug_resume = c->debug_pending && !untraced};
        c->have_prev_last = c->have_last;
        c->prev_last_insn = c->last_insn;
        c->debug_pending = false;
        c->prev_traced = !untraced;
        c->insn_inview = false;
        c->st.truth_insns++;
        c->last_insn = (size_t)c->pushed - 1;
        c->have_last = true;
    }
    return 0;
}

void tb_compare_mark_resume(tb_compare *c)
{
    tq *t;

    if (c && c->have_prev_last && (t = by_number(c, c->prev_last_insn)) != NULL)
        t->resume = true;
}

void tb_compare_mark_resume_last(tb_compare *c)
{
    tq *t;

    if (c && c->have_last && (t = by_number(c, c->last_insn)) != NULL)
        t->resume = true;
}

void tb_compare_mark_lost(tb_compare *c, bool have_shown, uint64_t shown_seq)
{
    size_t i;

    if (!c || !have_shown)
        return;
    /* The encoder runs behind the truth: the cancelling exception, if
     * any, is among the newest records. */
    for (i = c->len; i-- > 0;) {
        tq *t = at(c, i);

        if (t->kind != TB_REC_INSN || t->seq != shown_seq)
            continue;
        if (t->cancelled) {
            size_t k;

            t->cancelled = false;
            c->st.cancelled--;
            /* Its exception went with the lost trace. */
            for (k = i + 1; k < c->len; k++)
                if (at(c, k)->kind == TB_REC_EXCEPTION) {
                    at(c, k)->required = false;
                    break;
                }
        }
        break;
    }
}

void tb_compare_mark_lost_tail(tb_compare *c)
{
    if (c)
        c->lost_tail = true;
}

/* ------------------------------------------------------------------ */
/* The decoded side. */

static void note_matched(tb_compare *c, const tq *t)
{
    c->th[c->th_n++ % HIST] = *t;
    if (c->th_n >= 2 * HIST)
        c->th_n -= HIST;
    c->last_matched = *t;
    c->have_matched = true;
}

static void note_decoded(tb_compare *c, uint32_t addr, uint8_t isa, char atom, uint64_t index)
{
    c->dh[c->dh_n++ % HIST] = (dq){addr, isa, atom, index};
    if (c->dh_n >= 2 * HIST)
        c->dh_n -= HIST;
}

static uint32_t ctx_mask(const tb_compare *c)
{
    return c->o.ctxid_bytes >= 4 ? 0xFFFFFFFFu : (1u << (8 * c->o.ctxid_bytes)) - 1;
}

/* A record the decoder need not show at all: a context record (its value
 * is checked against context elements), an instruction an exception
 * cancelled, and inside a gap an instruction outside the filter. */
static bool passable(const tb_compare *c, const tq *t)
{
    return t->kind == TB_REC_CONTEXT || (t->kind == TB_REC_INSN && t->cancelled) ||
           (t->kind == TB_REC_EXC_RETURN && !t->required) ||
           (t->kind == TB_REC_INSN && t->untraced && c->gap_open) ||
           (t->kind == TB_REC_DATA && (t->dexp == DX_NONE || t->cancelled || c->dsup));
}

/* Drops the front record, noting a context and counting what the gap
 * held. */
static void drop(tb_compare *c)
{
    tq *t = at(c, 0);

    if (t->kind == TB_REC_CONTEXT) {
        c->ctx = t->ctx;
        c->vmid = t->vmid;
    } else if (t->kind == TB_REC_INSN && t->untraced && !t->cancelled) {
        c->st.untraced++;
    } else if (t->kind == TB_REC_DATA && !t->cancelled) {
        c->st.data_untraced++;
    }
    /* A restart an exception cancelled (a data abort at once): the exit
     * the decode showed was for it. */
    if (t->kind == TB_REC_INSN && t->debug_resume)
        c->dec_debug_exit = false;
    /* A timestamp may still name it: the encoder stamps the record it is
     * handling, a cancelled instruction at trace-on too. */
    c->dropped_cycle = t->cycle;
    c->have_dropped = true;
    pop(c);
}

/* Consumes the passable records before the decoder's next item and
 * returns the front record, or NULL when the truth is used up.
 * past_optional: the decoder shows an instruction, or has ended, so the
 * exceptions taken with trace off before it were not shown and go too.
 * Otherwise every exception stays: one taken with trace off may still be
 * the one decoded next (PTM shows it as an I-sync at its preferred
 * return and the exception packet, IHI0035B 5.2.3; encoder.c,
 * process_exc).  An exception taken with trace on is never consumed
 * here: the trace has it, so the decoder must show it, gap or not. */
static tq *front(tb_compare *c, bool past_optional)
{
    while (c->len) {
        tq *t = at(c, 0);

        if (t->kind == TB_REC_END)
            return NULL;
        if (!passable(c, t) && !(past_optional && t->kind == TB_REC_EXCEPTION && !t->required))
            return t;
        drop(c);
    }
    return NULL;
}

/* After an overflow gap: drops the truth up to the instruction the
 * encoder's overflow I-sync resumed at. */
static int skip_overflow(tb_compare *c, const tb_element *el, uint32_t addr, uint8_t isa)
{
    size_t i;

    for (i = 0; i < c->len; i++) {
        const tq *t = at(c, i);

        if (t->kind != TB_REC_INSN)
            continue;
        if (t->resume)
            break;
    }
    if (i == c->len)
        return fail(c, el, "trace resumes after an overflow at 0x%08x %s, but the encoder "
                    "resumed nowhere ahead in the truth", addr, tb_isa_name((tb_isa)isa));
    while (i--) {
        const tq *t = at(c, 0);

        if (t->kind == TB_REC_CONTEXT) {
            c->ctx = t->ctx;
            c->vmid = t->vmid;
        } else if (t->kind == TB_REC_INSN && !t->cancelled) {
            c->st.untraced++;
        } else if (t->kind == TB_REC_DATA && !t->cancelled) {
            c->st.data_untraced++;
        }
        pop(c);
    }
    c->overflow_gap = false;
    c->resume_open = false;
    return 0;
}

/* A second overflow resume before anything was shown after the first:
 * the first was speculative (IHI0014Q 5.9: a BE marked as FIFO overflow
 * may be followed by another, and the first is then discarded; an ETMv2
 * TFO, an ETMv3 or PTM I-sync likewise), so its instruction is lost with
 * everything before it. */
static int discard_resume(tb_compare *c, const tb_element *el)
{
    size_t i;

    for (i = 0; i < c->len; i++)
        if (at(c, i)->kind == TB_REC_INSN && at(c, i)->resume)
            break;
    if (i == c->len)
        return fail(c, el, "trace resumes after an overflow a second time with nothing shown "
                    "since the first, but the encoder resumed nowhere ahead in the truth");
    for (i++; i--;) {
        const tq *t = at(c, 0);

        if (t->kind == TB_REC_CONTEXT) {
            c->ctx = t->ctx;
            c->vmid = t->vmid;
        } else if (t->kind == TB_REC_INSN && !t->cancelled) {
            c->st.untraced++;
        } else if (t->kind == TB_REC_DATA && !t->cancelled) {
            c->st.data_untraced++;
        }
        pop(c);
    }
    c->st.resumes_discarded++;
    return 0;
}

static int compare_insn(tb_compare *c, const tb_element *el, uint32_t addr, unsigned i,
                        bool last)
{
    char atom = '?';
    tq *t;
    int rc;

    if (!c->ptm)
        atom = (el->atom_bits >> i) & 1 ? 'N' : 'E';
    else if (last && el->last_wp != TB_WP_NONE && el->last_wp != TB_WP_BARRIER)
        atom = el->last_atom;
    note_decoded(c, addr, el->isa, atom, el->index);
    if (c->overflow_gap && (rc = skip_overflow(c, el, addr, el->isa)) < 0)
        return rc;
    t = front(c, true);
    if (!t)
        return fail(c, el, "decoded 0x%08x %s beyond the end of the truth (%llu instructions)",
                    addr, tb_isa_name((tb_isa)el->isa),
                    (unsigned long long)c->st.truth_insns);
    if (t->kind == TB_REC_EXCEPTION)
        return fail(c, el, "decoded 0x%08x %s where the truth takes exception %u "
                    "(return 0x%08x): the exception is missing", addr,
                    tb_isa_name((tb_isa)el->isa), t->exc_num, t->addr);
    if (t->kind == TB_REC_EXC_RETURN)
        return fail(c, el, "decoded 0x%08x %s where the truth returns from exception %u: "
                    "the exception return is missing", addr, tb_isa_name((tb_isa)el->isa),
                    t->exc_num);
    if (t->kind == TB_REC_DATA)
        return fail(c, el, "decoded 0x%08x %s where the truth has data transfer #%llu (%s "
                    "0x%08x, %u bytes, of 0x%08x): the transfer is missing", addr,
                    tb_isa_name((tb_isa)el->isa), (unsigned long long)t->seq,
                    t->flags & TB_DATA_STORE ? "store to" : "load from", t->addr, t->size,
                    t->iaddr);
    if (t->untraced)
        return fail(c, el, "decoded 0x%08x %s where the truth runs 0x%08x outside the filter, "
                    "with no gap element before it", addr, tb_isa_name((tb_isa)el->isa),
                    t->addr);
    /* Debug halts: the exit from debug state is shown right before the
     * restart, and nowhere else; an overflow restart there says
     * overflow instead (encoder.c, process_exc). */
    if (t->debug_resume && !t->resume && !c->dec_debug_exit)
        return fail(c, el, "truth #%llu 0x%08x %s is where the core restarted after a debug "
                    "halt, but the decode showed no exit from debug state before it",
                    (unsigned long long)t->seq, t->addr, tb_isa_name((tb_isa)t->isa));
    if (c->dec_debug_exit && !t->debug_resume)
        return fail(c, el, "decoded an exit from debug state before 0x%08x %s, where the "
                    "truth (#%llu) restarts after no debug halt", addr,
                    tb_isa_name((tb_isa)el->isa), (unsigned long long)t->seq);
    c->dec_debug_exit = false;
    if (t->addr != addr || t->isa != el->isa)
        return fail(c, el, "decoded 0x%08x %s, truth #%llu is 0x%08x %s", addr,
                    tb_isa_name((tb_isa)el->isa), (unsigned long long)t->seq, t->addr,
                    tb_isa_name((tb_isa)t->isa));
    if (atom != '?' && (atom == 'N') != ((t->flags & TB_INSN_COND_FAILED) != 0))
        return fail(c, el, "decoded 0x%08x %s %c, truth #%llu executed it %c", addr,
                    tb_isa_name((tb_isa)el->isa), atom, (unsigned long long)t->seq,
                    t->flags & TB_INSN_COND_FAILED ? 'N' : 'E');
    if (t->ns != c->dec_ns)
        return fail(c, el, "decoded 0x%08x %s in %s state, truth #%llu ran it %s", addr,
                    tb_isa_name((tb_isa)el->isa), c->dec_ns ? "Non-secure" : "Secure",
                    (unsigned long long)t->seq, t->ns ? "Non-secure" : "Secure");
    note_matched(c, t);
    pop(c);
    c->gap_open = false;
    c->st.checked++;
    return 0;
}

/* Cycle-accurate trace: the decoded counts, summed from the first one,
 * must follow the truth's cycle stamps exactly at each range end. */
static int check_cycles(tb_compare *c, const tb_element *el, uint64_t ref_cycle,
                        uint64_t alt_cycle)
{
    int64_t base;

    if (!c->o.cycle_accurate || !el->has_cc)
        return 0;
    base = (int64_t)ref_cycle - (int64_t)c->cc_sum;
    if (!c->cc_started) {
        /* Before a cancelled instruction the range may or may not hold
         * its cycles (in the range: yes; alone in its own: they go on,
         * protocol-notes 2.7): a total cannot start at either guess. */
        if (ref_cycle != alt_cycle)
            return 0;
        c->cc_started = true;
        c->cc_base = base;
        return 0;
    }
    if (base != c->cc_base && (int64_t)alt_cycle - (int64_t)c->cc_sum == c->cc_base)
        base = c->cc_base;
    if (base != c->cc_base)
        return fail(c, el, "cycle counts: %llu cycles decoded up to here since they started, "
                    "the truth ran %lld (to cycle %llu)", (unsigned long long)c->cc_sum,
                    (long long)ref_cycle - (long long)c->cc_base,
                    (unsigned long long)ref_cycle);
    c->st.cycle_checks++;
    return 0;
}

/* The decoded atom of instruction i of a range, as compare_insn reads it:
 * ETMv3 one per instruction, PTM only the waypoint's at the end. */
static char range_atom(const tb_compare *c, const tb_element *el, uint32_t i)
{
    if (!c->ptm)
        return (el->atom_bits >> i) & 1 ? 'N' : 'E';
    if (i + 1 == el->count && el->last_wp != TB_WP_NONE && el->last_wp != TB_WP_BARRIER)
        return el->last_atom;
    return '?';
}

/* The common case of a range in bulk: the leading instructions that are,
 * one after the other, the front truth records and pass every check of
 * compare_insn (a traced instruction not cancelled, same address, ISA,
 * condition result, security state), with no overflow gap to skip.  It
 * leaves the comparator as compare_insn would have, one instruction at a
 * time: the history keeps the last HIST of each side (the report shows no
 * more).  Returns how many it matched; compare_insn takes the rest, so
 * any disagreement is found and worded there, exactly as before. */
static uint32_t match_run(tb_compare *c, const tb_element *el, const uint32_t *addrs)
{
    const size_t mask = c->cap - 1;
    uint32_t n = el->count, i, k;

    if (c->overflow_gap || !c->len || c->dec_debug_exit)
        return 0;
    if (n > c->len)
        n = (uint32_t)c->len;
    for (i = 0; i < n; i++) {
        const tq *t = &c->q[(c->head + i) & mask];
        char atom;

        if (t->kind != TB_REC_INSN || t->cancelled || t->untraced || t->addr != addrs[i] ||
            t->isa != el->isa || t->ns != c->dec_ns || t->debug_resume)
            break;
        atom = range_atom(c, el, i);
        if (atom != '?' && (atom == 'N') != ((t->flags & TB_INSN_COND_FAILED) != 0))
            break;
    }
    if (!i)
        return 0;
    for (k = i > HIST ? i - HIST : 0; k < i; k++) {
        note_decoded(c, addrs[k], el->isa, range_atom(c, el, k), el->index);
        note_matched(c, &c->q[(c->head + k) & mask]);
    }
    c->head = (c->head + i) & mask;
    c->len -= i;
    c->gap_open = false;
    c->st.checked += i;
    return i;
}

static int on_range(tb_compare *c, const tb_element *el, const uint32_t *addrs)
{
    uint64_t ref;
    uint32_t i;
    int rc;

    if (!addrs && el->count)
        return TB_ERR_INVAL;
    for (i = match_run(c, el, addrs); i < el->count; i++)
        if ((rc = compare_insn(c, el, addrs[i], i, i + 1 == el->count)) < 0)
            return rc;
    if (el->has_cc)
        c->cc_sum += el->cc;
    /* A range with its own count ends at an atom that carries it; the
     * instructions of a PTM waypoint update wait for the next one. */
    if (!el->count)
        return 0;
    /* A cancelled instruction was traced with an atom, and its cycles
     * (protocol-notes 2.7, 4.2): the range that ends before it may hold
     * them.  The transfers of the range's last instruction (data trace)
     * come between them in the truth, and its DATA elements after the
     * range: look past them (an ETMv1 load to the PC right before an
     * undefined instruction, docs/etmv1.md 5). */
    ref = c->last_matched.cycle;
    for (i = 0; i < c->len; i++) {
        const tq *t = at(c, i);

        /* Past a context change or a data transfer of the last one: the
         * next instruction is the one that may be cancelled. */
        if (t->kind == TB_REC_CONTEXT || t->kind == TB_REC_DATA)
            continue;
        if (t->kind == TB_REC_INSN && t->cancelled)
            ref = t->cycle;
        /* ETMv1 abandon (docs/etmv1.md 4): an exception right after a
         * taken branch came in the branch's first APO cycle, and the
         * branch's other cycles are the exception's, so the range falls
         * short here; the exception's own check (on_exception) holds the
         * total to the truth again. */
        if (t->kind == TB_REC_EXCEPTION && c->o.apo_abandon &&
            c->o.protocol == TB_PROTO_ETMV1 && c->have_matched &&
            (c->last_matched.flags & TB_INSN_TAKEN) &&
            !(c->last_matched.flags & TB_INSN_COND_FAILED))
            return 0;
        break;
    }
    return check_cycles(c, el, ref, c->last_matched.cycle);
}

static int on_exception(tb_compare *c, const tb_element *el)
{
    const tq *t, *nearest = NULL;
    bool match = false;
    uint64_t cycle;
    size_t i;
    int rc;

    if (c->overflow_gap) {
        /* The resume point, if the encoder named one yet (ETMv1: trace
         * resumed at an exception return to a vector, which reads as an
         * exception there, below). */
        for (i = 0; i < c->len; i++)
            if (at(c, i)->kind == TB_REC_INSN && at(c, i)->resume)
                break;
        /* Trace resumed (an overflow I-sync, a TFO, an overflow marker) at
         * an instruction that an exception then cancelled: the exception is
         * the first thing shown after the resume point, with or without a
         * cancelled flag of its own (ETMv3: its atom, then the exception
         * with Cancel, protocol-notes 2.7; ETMv2 6.7.1 E; ETMv1 5.7.1, the
         * aborted load/store's own BE, and any other cancelled instruction,
         * which reports no status: docs/etmv1.md 6 M3; PTM, which traces no
         * cancelled instruction, shows no Cancel: the return address is the
         * I-sync's). */
        bool cancelled_resume = i < c->len && at(c, i)->cancelled &&
                                at(c, i)->addr == el->pref_return;

        if (!cancelled_resume &&
            (c->o.protocol != TB_PROTO_ETMV1 || i == c->len ||
             at(c, i)->addr != el->pref_return || !(at(c, i)->flags & TB_INSN_EXC_RETURN)))
            /* Shown before the resume point is known: accept it only at
             * the resume point itself. */
            return 0;
        if ((rc = skip_overflow(c, el, el->pref_return, at(c, i)->isa)) < 0)
            return rc;
    }
    front(c, false);
    /* Which truth exception this is.  One taken with trace off may be
     * shown or not (front()), so the search passes over it, whatever its
     * number, unless it is exactly the one decoded: a later exception of
     * the same kind must not be held against an earlier one taken with
     * trace off.  It stops at an exception taken with trace on, which
     * the decoder must show before anything after it, and at any other
     * record it must show.  The first exact match is the right one: a
     * trace-on exception further on has a traced instruction before it,
     * which ends the search unless cancelled, and a cancelled one is the
     * return address of the exception that cancelled it (sim.h), so an
     * equal exception before it would have been taken with trace on. */
    for (i = 0; i < c->len; i++) {
        t = at(c, i);
        if (t->kind == TB_REC_EXCEPTION) {
            /* v7-M: a tail-chain is shown as one, and has no return
             * address in the trace (the frame stays, DDI0337E 15.5.2). */
            if (t->exc_num == el->exc_num &&
                (c->v7m ? t->tailchain == el->tailchain &&
                              (t->tailchain || t->addr == el->pref_return)
                        : t->addr == el->pref_return)) {
                match = true;
                break;
            }
            nearest = t;
            if (t->required)
                break;
        } else if (!passable(c, t)) {
            break;
        }
    }
    /* ETMv1 (docs/etmv1.md 4): an exception return to a vector address
     * is a BE to a vector, which the protocol does not tell from an
     * exception, so the decoder shows an exception at the instruction.
     * Accepted for an exception return at pref_return; the instructions
     * after it check where it went.  Its cycles are the instruction's. */
    if (!match && c->o.protocol == TB_PROTO_ETMV1 && i < c->len &&
        at(c, i)->kind == TB_REC_INSN && at(c, i)->addr == el->pref_return &&
        (at(c, i)->flags & TB_INSN_EXC_RETURN)) {
        while (i--)
            drop(c);
        c->last_matched = *at(c, 0);
        c->have_matched = true;
        pop(c);
        c->st.checked++;
        if (el->has_cc) {
            c->cc_sum += el->cc;
            return check_cycles(c, el, c->last_matched.cycle, c->last_matched.cycle);
        }
        return 0;
    }
    if (!match) {
        t = i < c->len ? at(c, i) : NULL;
        if (nearest)
            return fail(c, el, "decoded exception %u%s return 0x%08x, truth #%llu is exception "
                        "%u%s return 0x%08x%s", el->exc_num,
                        el->tailchain ? " (tail-chain)" : "", el->pref_return,
                        (unsigned long long)nearest->seq, nearest->exc_num,
                        nearest->tailchain ? " (tail-chain)" : "", nearest->addr,
                        nearest->required ? "" : " (taken with trace off)");
        return fail(c, el, "decoded exception %u%s (return 0x%08x) where the truth has %s",
                    el->exc_num, el->tailchain ? " (tail-chain)" : "", el->pref_return,
                    !t || t->kind == TB_REC_END ? "nothing more"
                    : t->kind == TB_REC_INSN ? "an instruction"
                    : t->kind == TB_REC_EXC_RETURN ? "an exception return" : "other");
    }
    /* The records passed over were not shown: trace-off exceptions, and
     * what front() would have consumed. */
    while (i--)
        drop(c);
    cycle = at(c, 0)->cycle;
    pop(c);
    c->st.exceptions++;
    if (el->has_cc) {
        c->cc_sum += el->cc;
        if ((rc = check_cycles(c, el, cycle, cycle)) < 0)
            return rc;
    }
    return 0;
}

/* v7-M: an exception return element stands for the truth's return
 * record right after the instruction that made it (IHI0014Q 7.6: the
 * packet follows its atom; on v7-M the return has completed). */
static int on_exc_return(tb_compare *c, const tb_element *el)
{
    tq *t;

    /* Lost trace around it: what the gap held is not expected, and the
     * return may or may not be shown (as for exceptions there). */
    if (c->overflow_gap)
        return 0;
    t = front(c, false);
    if (t && t->kind == TB_REC_EXC_RETURN && c->have_matched &&
        (c->last_matched.flags & TB_INSN_EXC_RETURN)) {
        pop(c);
        c->st.returns++;
        return 0;
    }
    return fail(c, el, "decoded an exception return after 0x%08x where the truth has %s",
                c->last_matched.addr,
                !t || t->kind == TB_REC_END ? "nothing more"
                : t->kind == TB_REC_INSN ? "an instruction"
                : t->kind == TB_REC_EXCEPTION ? "an exception entry"
                : t->kind == TB_REC_EXC_RETURN ? "a return, but after no exception-return "
                                                 "instruction"
                                               : "other");
}

/* Two contexts are the same as far as the trace tells them apart: the
 * context ID bytes traced (ctxid=), the VMID if traced. */
static bool ctx_eq(const tb_compare *c, uint32_t ctx_a, uint8_t vmid_a, uint32_t ctx_b,
                   uint8_t vmid_b)
{
    uint32_t m = ctx_mask(c);

    return (!c->o.ctxid_bytes || (ctx_a & m) == (ctx_b & m)) &&
           (!c->o.vmid || vmid_a == vmid_b);
}

static bool ctx_ok(const tb_compare *c, const tb_element *el, uint32_t ctx, uint8_t vmid)
{
    return ctx_eq(c, el->context_id, el->vmid, ctx, vmid);
}

/* The decoder shows a CONTEXT element only where the context changes:
 * after an overflow whose I-sync carries the context it already had, the
 * I-sync shows none. */
static bool dec_ctx_is(const tb_compare *c, uint32_t ctx, uint8_t vmid)
{
    return c->have_dec_ctx && ctx_eq(c, c->dec_ctx, c->dec_vmid, ctx, vmid);
}

static void context_shown(tb_compare *c, const tb_element *el)
{
    c->dec_ns = el->ns;
    c->st.contexts++;
    c->have_dec_ctx = true;
    c->dec_ctx = el->context_id;
    c->dec_vmid = el->vmid;
}

static int on_context(tb_compare *c, const tb_element *el)
{
    uint32_t ctx;
    uint8_t vmid;
    size_t i;
    bool ok = false;

    front(c, false);
    ctx = c->ctx;
    vmid = c->vmid;
    /* After an overflow the decoder has not reached the resume point:
     * the restart's context ID is the one current there (an ETMv1 reason-2
     * address, IHI0014Q 5.6.3; an ETMv2 TFO, 6.5.7; an ETMv3/PTM I-sync),
     * so the changes the gap held count, and only that context matches. */
    for (i = 0; c->overflow_gap && i < c->len; i++) {
        const tq *t = at(c, i);

        if (t->kind == TB_REC_CONTEXT) {
            ctx = t->ctx;
            vmid = t->vmid;
        } else if (t->kind == TB_REC_INSN && t->resume) {
            size_t j;

            ok = ctx_ok(c, el, ctx, vmid);
            /* PTM: a change after the resume point goes out at once, the
             * instructions before it with the next waypoint (protocol-notes
             * 0.3), so the I-sync's CONTEXT (that one must match) may be
             * followed by a change still ahead of anything shown (seed
             * 349); and when the I-sync's context is the one the decoder
             * already showed, it gives no CONTEXT, and the first one after
             * the gap is such a change (seeds 205, 384). */
            for (j = i; !ok && c->ptm && (c->gap_ctx_shown || dec_ctx_is(c, ctx, vmid)) &&
                        j < c->len; j++) {
                const tq *u = at(c, j);

                if (u->kind == TB_REC_CONTEXT)
                    ok = ctx_ok(c, el, u->ctx, u->vmid);
                else if (u->kind != TB_REC_INSN || (u->wp != TB_WP_NONE &&
                                                    u->wp != TB_WP_BARRIER))
                    break;
            }
            if (!ok)
                return fail(c, el, "decoded context ID 0x%08x VMID %u after an overflow, the "
                            "truth's where trace resumed (0x%08x %s) is 0x%08x VMID %u",
                            el->context_id, el->vmid, t->addr, tb_isa_name((tb_isa)t->isa),
                            ctx, vmid);
            context_shown(c, el);
            c->gap_ctx_shown = true;
            return 0;
        }
    }
    ctx = c->ctx;
    vmid = c->vmid;
    /* The decoder is at the next record it must show, or at a trace-off
     * exception before it that PTM shows with an I-sync, which carries
     * the context of that moment (IHI0035B 5.2.3).  Nothing past the
     * front is consumed: that exception may be the next element. */
    for (i = 0; i < c->len; i++) {
        const tq *t = at(c, i);

        if (t->kind == TB_REC_CONTEXT) {
            ctx = t->ctx;
            vmid = t->vmid;
        } else if (t->kind == TB_REC_EXCEPTION && !t->required) {
            ok = ok || ctx_ok(c, el, ctx, vmid);
        } else if (!passable(c, t)) {
            break;
        }
    }
    ok = ok || ctx_ok(c, el, ctx, vmid);
    /* PTM traces a context change at once, but the instructions before
     * it only with the next waypoint (protocol-notes 0.3): the change may
     * be one still waiting ahead of the decoded instructions. */
    for (; !ok && c->ptm && i < c->len; i++) {
        const tq *t = at(c, i);

        if (t->kind == TB_REC_CONTEXT)
            ok = ctx_ok(c, el, t->ctx, t->vmid);
        else if (t->kind != TB_REC_INSN || (t->wp != TB_WP_NONE && t->wp != TB_WP_BARRIER))
            break;
    }
    if (!ok)
        return fail(c, el, "decoded context ID 0x%08x VMID %u, the truth's is 0x%08x VMID %u",
                    el->context_id, el->vmid, ctx, vmid);
    /* The security state is checked at each instruction after it. */
    context_shown(c, el);
    return 0;
}

/* The timestamp counter's value at a truth cycle stamp: the options'
 * start and rate (tsstart=, tsrate=), cut to 48 bits where timestamps
 * are (ETMv3 ts48, PFT1.0), written here apart from the encoder's
 * tb_encoder_timestamp so that a fault there shows. */
static uint64_t ts_at(const tb_compare *c, uint64_t cycle)
{
    uint64_t t = c->o.ts_start + cycle * (c->o.ts_rate ? c->o.ts_rate : 1u);

    if (c->ptm ? c->o.arch_minor == 0 : c->o.ts48)
        t &= 0xFFFFFFFFFFFFull;
    return t;
}

/* A timestamp is the counter's value at the cycle stamp of the record
 * the encoder was handling: the last one matched, or one still waiting;
 * never earlier than the previous timestamp, unless a 48-bit counter
 * wrapped (then the previous one is more than 2^47 ahead). */
static int on_timestamp(tb_compare *c, const tb_element *el)
{
    size_t i;
    bool seen = (c->have_matched && ts_at(c, c->last_matched.cycle) == el->ts) ||
                (c->have_dropped && ts_at(c, c->dropped_cycle) == el->ts);

    if (c->have_ts && el->ts < c->last_ts && c->last_ts - el->ts < (UINT64_C(1) << 47))
        return fail(c, el, "timestamp %llu goes back from %llu", (unsigned long long)el->ts,
                    (unsigned long long)c->last_ts);
    for (i = 0; i < c->len && !seen; i++)
        seen = ts_at(c, at(c, i)->cycle) == el->ts;
    if (!seen)
        return fail(c, el, "timestamp %llu is not the counter at any cycle stamp of the "
                    "truth around here (last matched instruction at cycle %llu, counter "
                    "%llu)", (unsigned long long)el->ts,
                    (unsigned long long)(c->have_matched ? c->last_matched.cycle : 0),
                    (unsigned long long)(c->have_matched ? ts_at(c, c->last_matched.cycle)
                                                         : 0));
    c->last_ts = el->ts;
    c->have_ts = true;
    c->st.timestamps++;
    if (el->has_cc)
        c->cc_sum += el->cc;
    return 0;
}

/* The front record a data element may show: the passable records before
 * it go, but not a transfer the decode must show (passable under
 * suppression only for the instructions shown meanwhile). */
static tq *front_data(tb_compare *c)
{
    while (c->len) {
        tq *t = at(c, 0);

        if (t->kind == TB_REC_END)
            return NULL;
        if (t->kind == TB_REC_DATA && t->dexp != DX_NONE && !t->cancelled)
            return t;
        if (!passable(c, t))
            return t;
        drop(c);
    }
    return NULL;
}

static const char *dir_name(unsigned flags)
{
    return flags & TB_DATA_STORE ? "store" : "load";
}

/* A DATA element (rules in roundtrip.h). */
static int on_data(tb_compare *c, const tb_element *el)
{
    const unsigned fl = el->data_flags, tag = el->reason & 3u;
    const bool vt = (c->dt & 1) != 0, at_ = (c->dt & 2) != 0;
    tq *t;

    if (!c->dt)
        return fail(c, el, "decoded a data transfer, but the configuration traces no data");
    if ((fl & TB_DATA_SUPPRESSED) && !(fl & TB_DATA_OOO)) {
        /* IHI0014Q 7.4.6: the transfers of the instruction shown last
         * are gone from here, and any until the next data element; a
         * placeholder's value may be among them. */
        for (size_t i = 0; i < c->len; i++) {
            tq *d = at(c, i);

            if (d->kind == TB_REC_DATA)
                d->dexp = DX_NONE;
            else if (!passable(c, d))
                break;
        }
        c->dsup = true;
        for (unsigned k = 1; k < 4; k++)
            c->ooo_gap[k] = c->ooo_gap[k] || c->ooo_valid[k];
        return 0;
    }
    if (fl & TB_DATA_OOO) {
        /* The value of the placeholder with its tag, checked against the
         * transfer that placeholder matched. */
        if (!tag || !c->ooo_valid[tag])
            return fail(c, el, "decoded the out-of-order value of tag %u, but no placeholder "
                        "with that tag is outstanding", tag);
        t = &c->ooo[tag];
        if (el->last_addr != t->iaddr || el->data_size != t->size)
            return fail(c, el, "out-of-order value of tag %u for 0x%08x (%u bytes), its "
                        "placeholder's transfer #%llu was of 0x%08x (%u bytes)", tag,
                        el->last_addr, el->data_size, (unsigned long long)t->seq, t->iaddr,
                        t->size);
        if (fl & TB_DATA_NO_VALUE) {
            /* Lost with no gap or suppression before it: only the end of
             * the trace may excuse it, when the trace was lost there
             * (tb_compare_finish). */
            if (vt && !c->ooo_gap[tag] && !c->have_ooo_lost) {
                c->have_ooo_lost = true;
                c->ooo_lost = *t;
            }
        } else if (vt && !(t->flags & TB_DATA_STORE_FAILED) && el->data_value != t->value) {
            return fail(c, el, "decoded value 0x%08x (out of order, tag %u), truth #%llu "
                        "%s 0x%08x", el->data_value, tag, (unsigned long long)t->seq,
                        dir_name(t->flags), t->value);
        }
        c->ooo_valid[tag] = false;
        /* An OOO data packet ends suppression (7.4.6); the decoder's
         * "value never came" at the end or after a gap is no packet. */
        if (!(fl & TB_DATA_NO_VALUE))
            c->dsup = false;
        return 0;
    }
    if (c->overflow_gap)
        return fail(c, el, "decoded a data transfer of 0x%08x before trace resumed after an "
                    "overflow", el->last_addr);
    t = front_data(c);
    if (!t || t->kind != TB_REC_DATA)
        return fail(c, el, "decoded a %s of 0x%08x at 0x%08x where the truth has %s",
                    dir_name(fl), el->last_addr, el->data_addr,
                    !t ? "nothing more" : t->kind == TB_REC_INSN ? "the next instruction"
                    : t->kind == TB_REC_EXCEPTION ? "an exception" : "other");
    /* Data-only mode: no instruction, direction or size to check (the
     * decode must say it has none). */
    if (c->donly && (!(fl & TB_DATA_NO_DIR) || (fl & TB_DATA_STORE) || el->data_size ||
                     el->last_addr))
        return fail(c, el, "decoded a %u-byte %s of 0x%08x in data-only mode, where the "
                    "trace names no instruction, direction or size", el->data_size,
                    dir_name(fl), el->last_addr);
    if (!c->donly && el->last_addr != t->iaddr)
        return fail(c, el, "decoded a transfer of 0x%08x, truth #%llu is one of 0x%08x",
                    el->last_addr, (unsigned long long)t->seq, t->iaddr);
    if (!c->donly &&
        ((fl & TB_DATA_STORE) != (t->flags & TB_DATA_STORE) || el->data_size != t->size))
        return fail(c, el, "decoded a %u-byte %s, truth #%llu is a %u-byte %s", el->data_size,
                    dir_name(fl), (unsigned long long)t->seq, t->size, dir_name(t->flags));
    if (at_ && (fl & TB_DATA_NO_ADDR))
        return fail(c, el, "the decode has no address for truth #%llu (0x%08x), though "
                    "addresses are traced", (unsigned long long)t->seq, t->addr);
    /* ETMv1/ETMv2 trace no CPSR.E (their cores predate SETEND): no BE
     * flag. */
    if (at_ && (el->data_addr != t->addr ||
                (fl & TB_DATA_BE) != (c->o.protocol == TB_PROTO_ETMV1 ||
                                              c->o.protocol == TB_PROTO_ETMV2 ? 0u
                                      : t->flags & TB_DATA_BE)))
        return fail(c, el, "decoded data address 0x%08x%s, truth #%llu is 0x%08x%s",
                    el->data_addr, fl & TB_DATA_BE ? " BE" : "", (unsigned long long)t->seq,
                    t->addr, t->flags & TB_DATA_BE ? " BE" : "");
    if (t->dexp == DX_VNT) {
        if (!(fl & TB_DATA_NO_VALUE) || tag)
            return fail(c, el, "truth #%llu is outside ViewData after a traced transfer: "
                        "a Value not traced element was due", (unsigned long long)t->seq);
    } else if (tag) {
        /* A placeholder: the value comes with its tag (checked there). */
        if (c->ooo_valid[tag])
            return fail(c, el, "placeholder with tag %u while tag %u is outstanding", tag,
                        tag);
        c->ooo[tag] = *t;
        c->ooo_valid[tag] = true;
        c->ooo_gap[tag] = false;
    } else if (vt && (fl & TB_DATA_NO_VALUE)) {
        return fail(c, el, "the decode has no value for truth #%llu, though values are "
                    "traced", (unsigned long long)t->seq);
    } else if (vt && !(t->flags & TB_DATA_STORE_FAILED) && el->data_value != t->value) {
        return fail(c, el, "decoded value 0x%08x, truth #%llu %s 0x%08x", el->data_value,
                    (unsigned long long)t->seq, dir_name(t->flags), t->value);
    }
    /* Store failed is traced only with values (7.4.7), and not by ETMv1
     * or ETMv2 (no such packet, 5.4, 6.4.1 Table 6.2). */
    if ((fl & TB_DATA_STORE_FAILED) != (vt && t->dexp == DX_REQ &&
                                        c->o.protocol != TB_PROTO_ETMV1 &&
                                        c->o.protocol != TB_PROTO_ETMV2
                                            ? t->flags & TB_DATA_STORE_FAILED : 0u))
        return fail(c, el, "decoded store-failed %s, truth #%llu %s",
                    fl & TB_DATA_STORE_FAILED ? "set" : "clear", (unsigned long long)t->seq,
                    t->flags & TB_DATA_STORE_FAILED ? "failed" : "stored");
    pop(c);
    c->dsup = false;
    c->st.data++;
    return 0;
}

/* A trace port's trigger (IHI0014Q 5.4, 6.1.7): one TR, for the trigger
 * the run asked for: on the status of instruction trigger=T, or with
 * trigdelay=D up to D port cycles after it, where an instruction takes
 * at least one cycle and a cycle that cannot carry the trigger (an ETMv1
 * marker's BE, an ETMv2 TFO) defers it past at most one more; so the
 * last instruction shown before it has a seq below T without a delay,
 * at most T + D + 1 with one. */
static int on_trigger(tb_compare *c, const tb_element *el)
{
    uint64_t t = c->o.trigger_at, d = c->o.trigger_delay;

    if (c->o.protocol != TB_PROTO_ETMV1 && c->o.protocol != TB_PROTO_ETMV2)
        return 0;
    if (!t)
        return fail(c, el, "a trigger the run did not ask for");
    if (++c->events > 1)
        return fail(c, el, "a second trigger (trigger=%llu)", (unsigned long long)t);
    if (c->have_matched && (d ? c->last_matched.seq > t + d + 1 : c->last_matched.seq >= t))
        return fail(c, el, "the trigger for instruction #%llu (trigdelay=%llu) came after "
                    "#%llu", (unsigned long long)t, (unsigned long long)d,
                    (unsigned long long)c->last_matched.seq);
    return 0;
}

int tb_compare_element(tb_compare *c, const tb_element *el, const uint32_t *addrs)
{
    if (!c || !el)
        return TB_ERR_INVAL;
    if (c->err)
        return c->err;
    switch (el->kind) {
    case TB_ELEM_INSN_RANGE:
        return on_range(c, el, addrs);
    case TB_ELEM_DATA:
        return on_data(c, el);
    case TB_ELEM_EXCEPTION:
        return on_exception(c, el);
    case TB_ELEM_EXC_RETURN:
        if (c->v7m)
            return on_exc_return(c, el);
        if (!c->have_matched || !(c->last_matched.flags & TB_INSN_EXC_RETURN))
            return fail(c, el, "exception return after 0x%08x, which is no exception return",
                        c->last_matched.addr);
        return 0;
    case TB_ELEM_CONTEXT:
        return on_context(c, el);
    case TB_ELEM_TIMESTAMP:
        return on_timestamp(c, el);
    case TB_ELEM_CYCLE_COUNT:
        if (el->has_cc)
            c->cc_sum += el->cc;
        return 0;
    case TB_ELEM_NO_SYNC:
    case TB_ELEM_TRACE_ON:
        if (el->kind == TB_ELEM_NO_SYNC && el->reason != TB_GAP_INIT &&
            el->reason != TB_GAP_OVERFLOW && el->reason != TB_GAP_FILTER)
            return fail(c, el, "the decoder lost synchronisation (%s)",
                        tb_gap_reason_name((tb_gap_reason)el->reason));
        if (el->kind == TB_ELEM_TRACE_ON && el->reason == TB_ISYNC_OVERFLOW) {
            int rc;

            if (c->resume_open && (rc = discard_resume(c, el)) < 0)
                return rc;
            c->resume_open = true;
        }
        if ((el->kind == TB_ELEM_NO_SYNC && el->reason == TB_GAP_OVERFLOW) ||
            (el->kind == TB_ELEM_TRACE_ON && el->reason == TB_ISYNC_OVERFLOW))
            c->overflow_gap = true, c->gap_ctx_shown = false,
            c->dec_debug_exit = false; /* a restart from debug state lost with it */
        if (el->kind == TB_ELEM_TRACE_ON && el->has_cc)
            c->cc_sum += el->cc;
        if (el->kind == TB_ELEM_TRACE_ON && el->reason == TB_ISYNC_DEBUG_EXIT)
            c->dec_debug_exit = true;
        /* Cycle totals restart at every gap: what the gap held is lost,
         * placeholders' values too. */
        c->cc_started = false;
        for (unsigned k = 1; k < 4; k++)
            c->ooo_gap[k] = c->ooo_gap[k] || c->ooo_valid[k];
        c->gap_open = true;
        c->st.gaps++;
        return 0;
    case TB_ELEM_ADDR_NACC:
        return fail(c, el, "the decoder found code missing from the image at 0x%08x",
                    el->start);
    case TB_ELEM_ADDR_UNKNOWN:
        return fail(c, el, "the decoder lost the address");
    case TB_ELEM_EVENT:
        return on_trigger(c, el);
    case TB_ELEM_END:
        return 0;
    }
    return 0;
}

int tb_compare_finish(tb_compare *c)
{
    tq *t;

    if (!c)
        return TB_ERR_INVAL;
    if (c->err)
        return c->err;
    if (c->overflow_gap || c->lost_tail) {
        /* Trace lost at the very end: nothing more can be expected. */
        while (c->len) {
            if (at(c, 0)->kind == TB_REC_INSN && !at(c, 0)->cancelled)
                c->st.untraced++;
            else if (at(c, 0)->kind == TB_REC_DATA && !at(c, 0)->cancelled)
                c->st.data_untraced++;
            pop(c);
        }
        return 0;
    }
    c->gap_open = true; /* trace may end switched off */
    t = front(c, true);
    if (t)
        return fail(c, NULL, "the decode ended; truth #%llu (%s 0x%08x) and %zu more records "
                    "were never shown", (unsigned long long)t->seq,
                    t->kind == TB_REC_INSN ? "instruction"
                    : t->kind == TB_REC_DATA ? "data transfer at" : "exception",
                    t->addr, c->len - 1);
    for (unsigned k = 1; k < 4; k++)
        if (c->ooo_valid[k])
            return fail(c, NULL, "the decode ended; the out-of-order value of truth #%llu "
                        "(tag %u) was never shown", (unsigned long long)c->ooo[k].seq, k);
    if (c->have_ooo_lost)
        return fail(c, NULL, "the value of transfer #%llu (out of order, of 0x%08x) never "
                    "came, with no gap, suppression or lost end of trace to take it",
                    (unsigned long long)c->ooo_lost.seq, c->ooo_lost.iaddr);
    return 0;
}

bool tb_compare_matched(const tb_compare *c)
{
    return c && !c->err;
}

const char *tb_compare_report(const tb_compare *c)
{
    return c ? c->report : "";
}

const tb_compare_stats *tb_compare_get_stats(const tb_compare *c)
{
    return c ? &c->st : NULL;
}
