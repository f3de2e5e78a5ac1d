/*
 * Runner: one round trip, streaming end to end.
 *
 *   sim --records--> comparator (truth side)
 *    \--records--> encoder --bytes--> [formatter -> deformatter] -> parser
 *                  --packets--> [fault] -> decoder --elements--> comparator
 *
 * Each record goes to the comparator before the encoder, so whatever the
 * decoder makes of it finds its truth waiting (roundtrip.h).
 *
 * With tb_rt_case.threads = 2 the line is cut after the encoder: the
 * caller's thread runs the simulator and the encoder and writes, in the
 * order they happen, the records (copied a batch at a time) and the
 * trace bytes and encoder events between them into a ring of RT_CHUNKS
 * chunks; a second thread replays them into the same code as one thread
 * calls directly (rt_back_*), so the decode side sees exactly the
 * sequence it would have seen.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebench/frame.h"
#include "tracebench/parser.h"
#include "tracebench/roundtrip.h"
#include "tracebench/snapshot.h"

/* What crosses from the simulator's thread to the decode side's, in the
 * order it happened there: the records of a chunk lie in its own array,
 * and each message says how many of them came before it (at), so the
 * decode side gives the comparator its truth in runs, as one thread
 * does, not a message a record. */
enum { M_BYTES, M_RESUME, M_LOST, M_PROGRESS, M_ERR };

typedef struct rt_msg {
    int tag;
    uint32_t at;                                        /* records before it */
    union {
        struct { uint32_t off, len; uint64_t cycle; } bytes; /* M_BYTES */
        struct { uint64_t seq; bool have; } ev;         /* M_RESUME, M_LOST */
        tb_rt_progress prog;                            /* M_PROGRESS */
        struct { int rc; const char *where; } err;      /* M_ERR */
    } u;
} rt_msg;

/* A chunk: up to 2048 records, 2048 messages and the bytes of its
 * M_BYTES; eight chunks (about 1.5 MiB) bound the memory.  A side that
 * has to wait sleeps until half the ring (RT_WAKE chunks) is there for
 * it, so that the two threads wake each other a few hundred times a
 * million records, not at every chunk. */
#define RT_CHUNK 2048
#define RT_CHUNKS 8
#define RT_WAKE 4

typedef struct rt_chunk {
    rt_msg m[RT_CHUNK];
    size_t n;
    tb_exec_record *rec;
    size_t nrec;
    uint8_t *bytes;
    size_t nbytes, cap;
} rt_chunk;

/* Chunks go round in order: the simulator's side fills chunk w % RT_CHUNKS
 * while w - r < RT_CHUNKS, the decode side empties chunk r % RT_CHUNKS
 * while r < w (both counts under mu); a side that waits is woken only
 * once RT_WAKE chunks are there for it (or the run is done). */
typedef struct rt_pipe {
    rt_chunk ch[RT_CHUNKS];
    pthread_mutex_t mu;
    pthread_cond_t cv_full, cv_free;
    uint64_t w, r;
    bool w_waits, r_waits;   /* a side sleeps on its condition */
    bool done;               /* no more chunks will come */
    atomic_bool stop;        /* the decode side failed: stop the simulator */
} rt_pipe;

typedef struct rt {
    const tb_rt_case *c;
    tb_rt_result *res;
    tb_compare *cmp;
    tb_encoder *enc;
    tb_formatter *fmt;
    tb_deformatter *dfm;
    tb_parser *parser;
    tb_decoder *dec;
    uint8_t trace_id;
    uint64_t in_index;       /* bytes given to the decode side */
    uint32_t *addrs;
    size_t addrs_cap;
    uint32_t nth_branch, nth_atom;
    uint64_t resumes;        /* overflow I-syncs the encoder emitted */
    uint64_t last_insn_seq, resume_seq; /* see on_record */
    int err;                 /* first pipeline error (not a mismatch) */
    const char *err_where;
    FILE *truth;
    tb_encoder_snapshot *snap; /* out_dir: the snapshot, streamed */
    uint64_t cycle;          /* of the record being pushed (on_trace) */
    tb_rt_progress prog;     /* on_progress */
    rt_pipe *pipe;           /* non-NULL while the second thread runs */
    bool merge;              /* pipe_bytes may join writes (see there) */
    /* The simulator's records, TB_SIM_BATCH at a time in its own array
     * (tb_sim_run_batch), go to the encoder in one call
     * (tb_encoder_push_many); each one's own work (truth, comparator or
     * queue) is done before the encoder's next output (rt_ready), so
     * everything happens in the order single pushes give. */
    const tb_exec_record *batch;
    size_t nb, nb_done;
} rt;

static int set_err(rt *r, int rc, const char *where)
{
    if (!r->err) {
        r->err = rc;
        r->err_where = where;
    }
    return rc;
}

/* ---- decoded side ---- */

static int on_element(void *ctx, const tb_element *el)
{
    rt *r = ctx;
    int n = 0;

    if (el->kind == TB_ELEM_INSN_RANGE && el->count) {
        if (el->count > r->addrs_cap) {
            uint32_t *a = realloc(r->addrs, el->count * sizeof *a);

            if (!a)
                return set_err(r, TB_ERR_NOMEM, "decoder");
            r->addrs = a;
            r->addrs_cap = el->count;
        }
        n = tb_decoder_range_addrs(r->dec, el, r->addrs, r->addrs_cap);
        if (n < 0)
            return set_err(r, n, "decoder range");
    }
    /* A mismatch is the comparator's verdict, not a pipeline error: the
     * rest of the run is still useful for the statistics. */
    tb_compare_element(r->cmp, el, r->addrs);
    if (r->c->decode_element && (n = r->c->decode_element(r->c->decode_ctx, el)) < 0)
        return set_err(r, n, "analysis");
    return 0;
}

static void apply_fault(rt *r, tb_packet *p)
{
    const tb_rt_fault *f = &r->c->fault;

    if (f->kind == TB_RT_FAULT_ADDR_BIT && p->kind == TB_PKT_BRANCH &&
        r->nth_branch++ == f->nth) {
        p->addr ^= 1u << (f->bit & 31);
        r->res->fault_applied = true;
    } else if (f->kind == TB_RT_FAULT_DROP_ATOM && p->kind == TB_PKT_ATOM && p->atom_count &&
               r->nth_atom++ == f->nth) {
        /* The newest E/N atom goes; W atoms (ETMv3 cycle-accurate) stay. */
        for (int i = p->seq_len - 1; i >= 0; i--) {
            if (p->seq[i] == 'E' || p->seq[i] == 'N') {
                memmove(p->seq + i, p->seq + i + 1, (size_t)(p->seq_len - i - 1));
                p->seq_len--;
                p->atom_count--;
                break;
            }
        }
        r->res->fault_applied = true;
    }
}

static int on_packet(void *ctx, const tb_packet *pkt)
{
    rt *r = ctx;
    int rc;

    if (r->c->fault.kind != TB_RT_FAULT_NONE) {
        tb_packet p = *pkt;

        apply_fault(r, &p);
        rc = tb_decoder_packet(r->dec, &p, on_element, r);
    } else {
        rc = tb_decoder_packet(r->dec, pkt, on_element, r);
    }
    return rc < 0 ? set_err(r, rc, "decoder") : 0;
}

static int on_frame(void *ctx, uint8_t id, uint64_t index, const uint8_t *data, size_t len)
{
    rt *r = ctx;
    int rc;

    if (id != r->trace_id)
        return 0; /* no other source is in the buffer */
    rc = tb_parser_push(r->parser, data, len, index, on_packet, r);
    return rc < 0 ? set_err(r, rc, "parser") : 0;
}

/* Bytes for the decode side, cut into the case's chunk size. */
static int feed(rt *r, const uint8_t *data, size_t len)
{
    size_t step = r->c->chunk ? r->c->chunk : len;
    int rc;

    while (len) {
        size_t n = len < step ? len : step;

        rc = r->dfm ? tb_deformatter_push(r->dfm, data, n, r->in_index, on_frame, r)
                    : tb_parser_push(r->parser, data, n, r->in_index, on_packet, r);
        if (rc < 0)
            return set_err(r, rc, r->dfm ? "deformatter" : "parser");
        if (r->err)
            return r->err;
        r->in_index += n;
        data += n;
        len -= n;
    }
    return 0;
}

static int frame_sink(void *ctx, const uint8_t *data, size_t len)
{
    return feed(ctx, data, len);
}

/* ---- encoder side ---- */

static inline rt_msg *pipe_msg(rt *r, int tag);
static int pipe_bytes(rt *r, const uint8_t *data, size_t len);

/* The encoder's bytes, on the decode side. */
static int rt_back_bytes(rt *r, uint64_t cycle, const uint8_t *data, size_t len)
{
    int rc;

    if (r->c->on_trace)
        r->c->on_trace(r->c->trace_ctx, cycle, data, len);
    if (r->snap && (rc = tb_encoder_snapshot_sink_at(r->snap, cycle, data, len)) < 0)
        return set_err(r, rc, "snapshot trace_buffer.bin");
    /* A TPIU capture: the port's idle cycles before these bytes. */
    if (r->c->tpiu && len && (rc = tb_formatter_tick(r->fmt, cycle, frame_sink, r)) < 0)
        return set_err(r, rc, "formatter");
    rc = r->fmt ? tb_formatter_put(r->fmt, r->trace_id, data, len, frame_sink, r)
                : feed(r, data, len);
    return rc < 0 ? set_err(r, rc, r->fmt ? "formatter" : "decode") : 0;
}

static int trace_sink(void *ctx, const uint8_t *data, size_t len)
{
    rt *r = ctx;

    if (r->pipe)
        return pipe_bytes(r, data, len);
    return rt_back_bytes(r, r->cycle, data, len);
}

static void rt_back_resume(rt *r, uint64_t seq)
{
    tb_compare_mark_resume(r->cmp);
    if (r->c->on_resume)
        r->c->on_resume(r->c->resume_ctx, seq);
}

static int on_enc_packet(void *ctx, const tb_packet *p)
{
    rt *r = ctx;

    /* ETMv1 resumes with a 5-packet address of reason 2 (IHI0014Q 5.9). */
    if ((p->kind == TB_PKT_ISYNC && p->reason == TB_ISYNC_OVERFLOW) ||
        (p->kind == TB_PKT_BRANCH && p->protocol == TB_PROTO_ETMV1 &&
         p->reason == TB_ISYNC_OVERFLOW)) {
        r->resumes++;
        if (r->pipe) {
            rt_msg *m = pipe_msg(r, M_RESUME);

            m->u.ev.seq = r->resume_seq;
        } else {
            rt_back_resume(r, r->resume_seq);
        }
    }
    return 0;
}

/* The FIFO overflowed: the comparator learns what the trace still shows
 * (a Cancel lost with it retracts nothing), then the case's own hook. */
static void rt_back_lost(rt *r, bool have_shown, uint64_t shown_seq)
{
    tb_compare_mark_lost(r->cmp, have_shown, shown_seq);
    if (r->c->on_overflow)
        r->c->on_overflow(r->c->overflow_ctx, have_shown, shown_seq);
}

static void on_overflow(void *ctx, bool have_shown, uint64_t shown_seq)
{
    rt *r = ctx;

    if (r->pipe) {
        rt_msg *m = pipe_msg(r, M_LOST);

        m->u.ev.have = have_shown;
        m->u.ev.seq = shown_seq;
    } else {
        rt_back_lost(r, have_shown, shown_seq);
    }
}

/* A record's truth, on the decode side: the truth file (formatted here,
 * off the simulator's thread when there are two), the comparator.
 * Nonzero: the run stops. */
static int rt_back_truth_file(rt *r, const tb_exec_record *rec)
{
    char line[256];

    if (tb_truth_format_text(rec, line, sizeof line) < 0 ||
        fprintf(r->truth, "%s\n", line) < 0) {
        set_err(r, TB_ERR_IO, "truth.txt");
        return 1;
    }
    return 0;
}

/* Records' truth, in order: the truth file when there is one, then the
 * comparator, all n in one call.  Nonzero: the run stops. */
static int rt_back_truth(rt *r, const tb_exec_record *recs, size_t n)
{
    int rc;

    if (r->truth)
        for (size_t i = 0; i < n; i++)
            if (rt_back_truth_file(r, &recs[i]))
                return 1;
    if ((rc = tb_compare_truth_many(r->cmp, recs, n)) < 0 && rc != TB_ERR_MISMATCH) {
        set_err(r, rc, "comparator");
        return 1;
    }
    return 0;
}

/* ---- the second thread ---- */

/* Hands the chunk being filled to the decode side and waits for the next
 * one to be free.  Simulator's side only. */
static __attribute__((noinline)) void pipe_publish(rt_pipe *p)
{
    pthread_mutex_lock(&p->mu);
    p->w++;
    if (p->r_waits && p->w - p->r >= RT_WAKE)
        pthread_cond_signal(&p->cv_full);
    if (p->w - p->r >= RT_CHUNKS) {
        p->w_waits = true;
        while (p->w - p->r > RT_CHUNKS - RT_WAKE)
            pthread_cond_wait(&p->cv_free, &p->mu);
        p->w_waits = false;
    }
    pthread_mutex_unlock(&p->mu);
}

/* The next message slot: a store and a count on the way of every record,
 * the hand-over once a chunk. */
static inline rt_msg *pipe_msg(rt *r, int tag)
{
    rt_pipe *p = r->pipe;
    rt_chunk *ch = &p->ch[p->w % RT_CHUNKS];
    rt_msg *m;

    if (__builtin_expect(ch->n == RT_CHUNK, 0)) {
        pipe_publish(p);
        ch = &p->ch[p->w % RT_CHUNKS];
    }
    m = &ch->m[ch->n++];
    m->tag = tag;
    m->at = (uint32_t)ch->nrec;
    return m;
}

static int pipe_bytes(rt *r, const uint8_t *data, size_t len)
{
    rt_pipe *p = r->pipe;
    rt_chunk *ch = &p->ch[p->w % RT_CHUNKS];
    rt_msg *m;

    if (len > UINT32_MAX)
        return TB_ERR_LIMIT;
    if (ch->nbytes + len > ch->cap || ch->n == RT_CHUNK) {
        if (ch->n || ch->nrec) {
            pipe_publish(p);
            ch = &p->ch[p->w % RT_CHUNKS];
        }
        if (len > ch->cap) {
            /* One write larger than a chunk's bytes: that chunk grows to
             * it (the encoder writes a FIFO's worth at most). */
            uint8_t *b = realloc(ch->bytes, len);

            if (!b)
                return TB_ERR_NOMEM;
            ch->bytes = b;
            ch->cap = len;
        }
    }
    if (len == 1)
        ch->bytes[ch->nbytes] = *data; /* a P-header: no call */
    else
        memcpy(ch->bytes + ch->nbytes, data, len);
    /* Bytes right after bytes with no record between: one message, one
     * rt_back_bytes for both.  Only where nothing sees the writes'
     * boundaries or their cycles (r->merge): the case's on_trace, the
     * snapshot's sink, the TPIU port's time (half a cycle a byte, rounded
     * up each put) and the chunk size cut the decoder's input by them. */
    m = ch->n ? &ch->m[ch->n - 1] : NULL;
    if (r->merge && m && m->tag == M_BYTES && m->at == ch->nrec &&
        (size_t)m->u.bytes.len + len <= UINT32_MAX) {
        m->u.bytes.len += (uint32_t)len;
        ch->nbytes += len;
        return 0;
    }
    m = &ch->m[ch->n++];
    m->tag = M_BYTES;
    m->at = (uint32_t)ch->nrec;
    m->u.bytes.off = (uint32_t)ch->nbytes;
    m->u.bytes.len = (uint32_t)len;
    m->u.bytes.cycle = r->cycle;
    ch->nbytes += len;
    return 0;
}

/* Records [0, n) into the ring, after whatever is there: their truth
 * comes before the messages that follow. */
static void pipe_recs(rt *r, const tb_exec_record *recs, size_t n)
{
    rt_pipe *p = r->pipe;

    while (n) {
        rt_chunk *ch = &p->ch[p->w % RT_CHUNKS];
        size_t k = RT_CHUNK - ch->nrec;

        if (!k) {
            pipe_publish(p);
            continue;
        }
        if (k > n)
            k = n;
        memcpy(ch->rec + ch->nrec, recs, k * sizeof *recs);
        ch->nrec += k;
        recs += k;
        n -= k;
    }
}

static void rt_back_msg(rt *r, const rt_chunk *ch, const rt_msg *m)
{
    switch (m->tag) {
    case M_BYTES:
        rt_back_bytes(r, m->u.bytes.cycle, ch->bytes + m->u.bytes.off, m->u.bytes.len);
        break;
    case M_RESUME:
        rt_back_resume(r, m->u.ev.seq);
        break;
    case M_LOST:
        rt_back_lost(r, m->u.ev.have, m->u.ev.seq);
        break;
    case M_PROGRESS:
        r->c->on_progress(r->c->progress_ctx, &m->u.prog);
        break;
    case M_ERR:
        set_err(r, m->u.err.rc, m->u.err.where);
        break;
    }
}

/* The decode side: replays each chunk in order.  After the first error
 * (its own, or one the simulator's side sent) it only empties the chunks,
 * as one thread would have stopped there; the simulator's side sees stop
 * at its next record. */
static void *decode_side(void *arg)
{
    rt *r = arg;
    rt_pipe *p = r->pipe;

    for (;;) {
        rt_chunk *ch;
        size_t done;

        pthread_mutex_lock(&p->mu);
        if (p->r == p->w && !p->done) {
            p->r_waits = true;
            while (p->w - p->r < RT_WAKE && !p->done)
                pthread_cond_wait(&p->cv_full, &p->mu);
            p->r_waits = false;
        }
        if (p->r == p->w) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        pthread_mutex_unlock(&p->mu);
        ch = &p->ch[p->r % RT_CHUNKS];
        done = 0;
        for (size_t i = 0; i < ch->n && !r->err; i++) {
            const rt_msg *m = &ch->m[i];

            if (m->at > done && rt_back_truth(r, ch->rec + done, m->at - done))
                break;
            done = m->at;
            rt_back_msg(r, ch, m);
        }
        if (!r->err && ch->nrec > done)
            rt_back_truth(r, ch->rec + done, ch->nrec - done);
        if (r->err)
            atomic_store_explicit(&p->stop, true, memory_order_relaxed);
        ch->n = ch->nrec = 0;
        ch->nbytes = 0;
        pthread_mutex_lock(&p->mu);
        p->r++;
        if (p->w_waits && p->w - p->r <= RT_CHUNKS - RT_WAKE)
            pthread_cond_signal(&p->cv_free);
        pthread_mutex_unlock(&p->mu);
    }
    return NULL;
}

static void pipe_free(rt_pipe *p)
{
    if (!p)
        return;
    for (int i = 0; i < RT_CHUNKS; i++) {
        free(p->ch[i].bytes);
        free(p->ch[i].rec);
    }
    pthread_cond_destroy(&p->cv_full);
    pthread_cond_destroy(&p->cv_free);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

/* Starts the decode side on its own thread; 0, or negative when it could
 * not (the run then goes on one thread, with the same result). */
static int pipe_start(rt *r, pthread_t *th)
{
    rt_pipe *p = calloc(1, sizeof *p);

    if (!p)
        return TB_ERR_NOMEM;
    if (pthread_mutex_init(&p->mu, NULL)) {
        free(p);
        return TB_ERR_NOMEM;
    }
    pthread_cond_init(&p->cv_full, NULL);
    pthread_cond_init(&p->cv_free, NULL);
    atomic_init(&p->stop, false);
    for (int i = 0; i < RT_CHUNKS; i++) {
        p->ch[i].cap = 16384;
        p->ch[i].bytes = malloc(p->ch[i].cap);
        p->ch[i].rec = malloc(RT_CHUNK * sizeof *p->ch[i].rec);
        if (!p->ch[i].bytes || !p->ch[i].rec) {
            pipe_free(p);
            return TB_ERR_NOMEM;
        }
    }
    r->pipe = p;
    if (pthread_create(th, NULL, decode_side, r)) {
        r->pipe = NULL;
        pipe_free(p);
        return TB_ERR_NOMEM;
    }
    return 0;
}

/* The last chunk goes, then the decode side ends and the caller's thread
 * has everything to itself again. */
static void pipe_finish(rt *r, pthread_t th)
{
    rt_pipe *p = r->pipe;

    pthread_mutex_lock(&p->mu);
    if (p->ch[p->w % RT_CHUNKS].n || p->ch[p->w % RT_CHUNKS].nrec)
        p->w++;
    p->done = true;
    pthread_cond_signal(&p->cv_full);
    pthread_mutex_unlock(&p->mu);
    pthread_join(th, NULL);
    r->pipe = NULL;
    pipe_free(p);
}

/* ---- the simulator's records ---- */

/* The instructions and exceptions among n records, into the progress
 * counts (no branch a record: the kinds mix at random). */
static void rt_count_kinds(tb_rt_progress *p, const tb_exec_record *b, size_t n)
{
    uint64_t insns = 0, exc = 0;

    for (size_t i = 0; i < n; i++) {
        insns += b[i].kind == TB_REC_INSN;
        exc += b[i].kind == TB_REC_EXCEPTION;
    }
    p->insns += insns;
    p->exceptions += exc;
}

/* tb_encoder_ready_cb: the encoder is about to send out what it makes of
 * batch[k - 1]; the records up to it get their own work done first: the
 * progress sample, what the encoder's callbacks read of them, then their
 * truth (one thread) or their copy into the queue (two).  One thread: a
 * decode side's error stops the encoder here, as it stopped the
 * simulator at the record after it.  Nonzero: the run stops. */
static int rt_ready(void *ctx, size_t k)
{
    rt *r = ctx;
    const tb_exec_record *b = r->batch + r->nb_done;
    size_t n = k - r->nb_done;
    uint64_t last = r->last_insn_seq, resume = r->resume_seq;

    if (!r->pipe && r->err)
        return 1;
    if (!n)
        return 0;
    if (!r->c->on_progress || (r->prog.records & 0xFFFF) + n < 0x10000) {
        /* No progress sample falls in these records: the same counts
         * without the per-record steps below. */
        size_t j = n;

        /* The counts are read only by on_progress. */
        if (r->c->on_progress)
            rt_count_kinds(&r->prog, b, n);
        r->prog.records += n;
        /* last: the newest instruction's seq; resume: last as it stood
         * before b[n - 1] (the loop below sets it so at each record). */
        while (j && b[j - 1].kind != TB_REC_INSN)
            j--;
        if (j == n) {
            last = b[n - 1].seq;
            while (--j && b[j - 1].kind != TB_REC_INSN)
                ;
            resume = j ? b[j - 1].seq : r->last_insn_seq;
        } else {
            last = resume = j ? b[j - 1].seq : r->last_insn_seq;
        }
        n = 0; /* skip the loop */
    }
    for (size_t i = 0; i < n; i++) {
        r->prog.records++;
        resume = last;
        if (b[i].kind == TB_REC_INSN) {
            r->prog.insns++;
            last = b[i].seq;
        } else if (b[i].kind == TB_REC_EXCEPTION) {
            r->prog.exceptions++;
        }
        /* A sample now and then: the caller decides what to show and
         * how often (the library never prints). */
        if ((r->prog.records & 0xFFFF) == 0 && r->c->on_progress) {
            r->prog.trace_bytes = tb_encoder_get_stats(r->enc)->bytes;
            if (r->pipe)
                pipe_msg(r, M_PROGRESS)->u.prog = r->prog;
            else
                r->c->on_progress(r->c->progress_ctx, &r->prog);
        }
    }
    /* The encoder runs one record behind: an I-sync it emits now names
     * the instruction before the last of these (tb_compare_mark_resume). */
    n = k - r->nb_done;
    r->last_insn_seq = last;
    r->resume_seq = resume;
    r->cycle = b[n - 1].cycle;
    r->nb_done = k;
    if (r->pipe) {
        pipe_recs(r, b, n);
        return 0;
    }
    return rt_back_truth(r, b, n);
}

/* The waiting records to the encoder.  Nonzero: the run stops. */
static int rt_flush(rt *r)
{
    int rc = r->nb ? tb_encoder_push_many(r->enc, r->batch, r->nb, rt_ready, r) : 0;

    if (rc >= 0)
        rc = rt_ready(r, r->nb) ? TB_ERR_STOPPED : 0;
    r->nb = r->nb_done = 0;
    if (rc < 0 && rc != TB_ERR_STOPPED) {
        if (r->pipe) {
            rt_msg *m = pipe_msg(r, M_ERR);

            m->u.err.rc = tb_encoder_error(r->enc) ? tb_encoder_error(r->enc) : rc;
            m->u.err.where = "encoder";
        } else {
            set_err(r, tb_encoder_error(r->enc) ? tb_encoder_error(r->enc) : rc, "encoder");
        }
    }
    /* Two threads: the decode side's errors come back as stop. */
    return rc < 0 || (!r->pipe && r->err != 0);
}

static int on_records(void *ctx, const tb_exec_record *recs, size_t n)
{
    rt *r = ctx;

    if (r->pipe && atomic_load_explicit(&r->pipe->stop, memory_order_relaxed))
        return 1;
    r->batch = recs;
    r->nb = n;
    return rt_flush(r);
}

/* ---- the case ---- */

/* The whole file, or NULL: the callers word the error. */
static uint8_t *read_file(const char *path, size_t *len)
{
    char why[256];
    uint8_t *buf;

    return tb_snapshot_read_file(path, &buf, len, why, sizeof why) < 0 ? NULL : buf;
}

void tb_rt_case_init(tb_rt_case *c, tb_protocol protocol)
{
    memset(c, 0, sizeof *c);
    tb_encoder_opts_init(&c->opts, protocol);
    c->formatted = true;
}

int tb_rt_case_options(tb_rt_case *c, const char *list, char *err, size_t errlen)
{
    char buf[512], rest[512] = "";
    bool filter = false;
    char *tok, *save = NULL;

    if (!c || !list)
        return TB_ERR_INVAL;
    if (strlen(list) >= sizeof buf) {
        snprintf(err, errlen, "option list too long");
        return TB_ERR_INVAL;
    }
    strcpy(buf, list);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "filter")) {
            filter = true;
            continue;
        }
        /* The buffer as a TPIU capture sends it (FSYNCs, HSYNC idles;
         * tb_rt_case.tpiu): a round trip's item, not the encoder's. */
        if (!strcmp(tok, "tpiu")) {
            if (tb_protocol_is_port(c->opts.protocol)) {
                snprintf(err, errlen, "tpiu: an ETMv1/ETMv2 trace port capture has no "
                         "CoreSight frames (leave tpiu out)");
                return TB_ERR_INVAL;
            }
            c->formatted = c->tpiu = true;
            continue;
        }
        if (rest[0])
            strcat(rest, ",");
        if (!strncmp(tok, "dataview=", 9)) {
            /* ViewData ranges may name symbols (a data object's extent)
             * as include= ranges do: resolved the same way. */
            char one[200], res[200];
            size_t len = 0;
            uint8_t *elf = c->program ? read_file(c->program, &len) : NULL;
            int rc;

            snprintf(one, sizeof one, "include=%s", tok + 9);
            rc = tb_elf_resolve_ranges(elf, len, one, res, sizeof res, err, errlen);
            free(elf);
            if (rc < 0) {
                /* The resolver names the option include=: say dataview=. */
                snprintf(one, sizeof one, "%s", err);
                snprintf(err, errlen, "dataview%s",
                         strncmp(one, "include", 7) ? one : one + 7);
                return TB_ERR_INVAL;
            }
            if (strlen(rest) + 9 + strlen(res + 8) >= sizeof rest) {
                snprintf(err, errlen, "option list too long");
                return TB_ERR_INVAL;
            }
            strcat(rest, "dataview=");
            strcat(rest, res + 8);
            continue;
        }
        strcat(rest, tok);
    }
    if (strstr(rest, "include=") || strstr(rest, "exclude=")) {
        /* Symbols in ranges need the ELF; numbers do not. */
        char resolved[512];
        size_t len = 0;
        uint8_t *elf = c->program ? read_file(c->program, &len) : NULL;
        int rc = tb_elf_resolve_ranges(elf, len, rest, resolved, sizeof resolved, err,
                                       errlen);

        free(elf);
        if (rc < 0 && !elf && c->program && strchr(err, '\''))
            snprintf(err, errlen, "include/exclude: cannot read the program %s for its "
                     "symbols", c->program);
        if (rc < 0)
            return TB_ERR_INVAL;
        strcpy(rest, resolved);
    }
    if (tb_encoder_opts_parse(&c->opts, rest, err, errlen) < 0)
        return TB_ERR_INVAL;
    if (filter) {
        tb_snap_region regs[16];
        uint8_t *store = NULL, *elf;
        size_t len = 0;
        int n;

        if (!c->program || !(elf = read_file(c->program, &len))) {
            snprintf(err, errlen, "filter: cannot read the program %s",
                     c->program ? c->program : "(none)");
            return TB_ERR_INVAL;
        }
        n = tb_encoder_elf_regions(elf, len, regs, 16, &store);
        free(elf);
        if (n <= 0 || c->opts.n_ranges >= TB_ENC_MAX_RANGES) {
            free(store);
            snprintf(err, errlen, "filter: %s has no loadable segment", c->program);
            return TB_ERR_INVAL;
        }
        /* The middle half of the code: the filter turns trace off and on
         * inside the program, not just at its ends. */
        c->opts.ranges[c->opts.n_ranges++] =
            (tb_encoder_range){regs[0].address + (uint32_t)regs[0].len / 4,
                               regs[0].address + (uint32_t)regs[0].len * 3 / 4, false};
        free(store);
    }
    return 0;
}

const char *tb_rt_verdict_name(tb_rt_verdict v)
{
    switch (v) {
    case TB_RT_MATCH: return "MATCH";
    case TB_RT_MISMATCH: return "MISMATCH";
    case TB_RT_NOTHING_CHECKED: return "NOTHING CHECKED";
    case TB_RT_FAULT_NOT_APPLIED: return "FAULT NOT APPLIED";
    case TB_RT_FAULT_UNDETECTED: return "FAULT UNDETECTED";
    }
    return "?";
}

/* A match counts only when it compared something and, with a fault, when
 * the fault went in and was caught (roundtrip.h). */
static tb_rt_verdict verdict(const tb_rt_case *c, const tb_rt_result *res)
{
    if (!res->match)
        return TB_RT_MISMATCH;
    /* Data-only mode traces no instruction: its transfers are what is
     * checked (tb_compare). */
    if (!res->cmp.checked && !(c->opts.data_only && res->cmp.data))
        return TB_RT_NOTHING_CHECKED;
    if (c->fault.kind != TB_RT_FAULT_NONE)
        return res->fault_applied ? TB_RT_FAULT_UNDETECTED : TB_RT_FAULT_NOT_APPLIED;
    return TB_RT_MATCH;
}

static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Writes the reason into err and returns rc. */
static int fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    va_list ap;

    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

int tb_rt_run(const tb_rt_case *c, tb_rt_result *res, char *err, size_t errlen)
{
    rt r;
    tb_config cfg;
    tb_scenario sc;
    tb_snap_region regs[16];
    tb_encoder_opts opts;
    uint8_t *elf = NULL, *store = NULL;
    size_t elen = 0;
    tb_memimage *mem = NULL;
    tb_sim *sim = NULL;
    char label[256], msg[256];
    pthread_t th;
    bool threaded;
    int nr, rc;

    if (!c || !res || !c->program)
        return TB_ERR_INVAL;
    memset(res, 0, sizeof *res);
    memset(&r, 0, sizeof r);
    r.c = c;
    r.res = res;
    if (err && errlen)
        err[0] = '\0';
    tb_scenario_init(&sc);
    if (c->scenario && (rc = tb_scenario_load(&sc, c->scenario, msg, sizeof msg)) < 0)
        return fail(err, errlen, rc, "%s: %s", c->scenario, msg);
    /* The cpu: the case's (--cpu) over the scenario's.  A Cortex-M is
     * traced by its ETM-M3/M4 (tb_encoder_opts_v7m), which the options
     * must suit. */
    if (c->has_cpu)
        sc.cpu = c->cpu;
    opts = c->opts;
    if (tb_sim_cpu_is_m(sc.cpu))
        tb_encoder_opts_v7m(&opts, sc.cpu == TB_SIM_CPU_M4 ? 4 : 3);
    if (tb_encoder_config_err(&opts, &cfg, msg, sizeof msg) < 0)
        return fail(err, errlen, TB_ERR_CONFIG, "%s%s: %s",
                    tb_sim_cpu_is_m(sc.cpu) ? "cpu = " : "inconsistent encoder options",
                    tb_sim_cpu_is_m(sc.cpu) ? tb_sim_cpu_name(sc.cpu) : "", msg);
    r.trace_id = cfg.trace_id;
    if (c->has_budget)
        sc.max_insns = c->budget;
    else if (!sc.has_max_insns)
        sc.max_insns = c->default_budget;
    if (c->max_insns && (!sc.max_insns || sc.max_insns > c->max_insns))
        sc.max_insns = c->max_insns;
    res->budget = sc.max_insns;

    if (!(elf = read_file(c->program, &elen)))
        return fail(err, errlen, TB_ERR_IO, "%s: cannot read", c->program);
    nr = tb_encoder_elf_regions(elf, elen, regs, 16, &store);
    if (nr <= 0) {
        rc = fail(err, errlen, nr < 0 ? nr : TB_ERR_FORMAT, "%s: %s", c->program,
                  "no loadable segment");
        goto out;
    }
    mem = tb_memimage_new();
    rc = mem ? 0 : TB_ERR_NOMEM;
    for (int i = 0; i < nr && rc >= 0; i++)
        rc = tb_memimage_add(mem, regs[i].address, regs[i].data, regs[i].len);
    if (rc < 0) {
        fail(err, errlen, rc, "%s: memory image", c->program);
        goto out;
    }

    sim = tb_sim_new(sc.cpu);
    if (!sim) {
        rc = fail(err, errlen, TB_ERR_EMULATOR, "cannot start the emulator");
        goto out;
    }
    if ((rc = tb_sim_load_elf(sim, elf, elen)) < 0 ||
        (rc = tb_sim_set_scenario(sim, &sc)) < 0) {
        fail(err, errlen, rc, "%s: %s", c->program, tb_sim_errmsg(sim));
        goto out;
    }

    /* The configuration as the registers say it, so a report can be
     * reproduced with any decoder. */
    snprintf(label, sizeof label,
             "%s: %s %s%u.%u ETMCR=0x%08x ETMIDR=0x%08x ETMCCER=0x%08x trace ID 0x%02x, "
             "%s buffer, %u filter range(s), FIFO %u bytes, sync every %u bytes%s%s",
             c->name ? c->name : c->program, tb_protocol_name(opts.protocol),
             opts.protocol == TB_PROTO_PTM ? "PFT" : "ETMv",
             opts.protocol == TB_PROTO_PTM || opts.protocol == TB_PROTO_ETMV1 ? 1
             : opts.protocol == TB_PROTO_ETMV2 ? 2 : 3,
             opts.arch_minor, cfg.etmcr, cfg.etmidr, cfg.etmccer, cfg.trace_id,
             c->tpiu ? "TPIU (FSYNC, HSYNC)" : c->formatted ? "CoreSight" : "raw", opts.n_ranges, opts.fifo_depth,
             opts.sync_period, c->scenario ? ", scenario " : "",
             c->scenario ? c->scenario : "");
    r.cmp = tb_compare_new(&opts, label);
    r.enc = tb_encoder_new(&opts, trace_sink, &r);
    r.parser = tb_parser_new(&cfg);
    r.dec = tb_decoder_new(&cfg, mem);
    if (c->formatted) {
        unsigned ff = c->tpiu ? TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC : TB_FRAME_MEM_ALIGNED;

        r.fmt = tb_formatter_new(ff);
        r.dfm = tb_deformatter_new(ff);
    }
    if (!r.cmp || !r.enc || !r.parser || !r.dec || (c->formatted && (!r.fmt || !r.dfm))) {
        rc = fail(err, errlen, TB_ERR_NOMEM, "cannot set up the pipeline");
        goto out;
    }
    if (c->decode_begin && (rc = c->decode_begin(c->decode_ctx, cfg.protocol, mem)) < 0) {
        fail(err, errlen, rc, "analysis: %s", tb_err_str(rc));
        goto out;
    }
    tb_encoder_set_packet_cb(r.enc, on_enc_packet, &r);
    tb_encoder_set_overflow_cb(r.enc, on_overflow, &r);

    if (c->out_dir) {
        if (!(r.snap = tb_encoder_snapshot_open(c->out_dir, &cfg, c->formatted, msg,
                                                sizeof msg))) {
            rc = fail(err, errlen, TB_ERR_IO, "%s", msg);
            goto out;
        }
        if (c->tpiu && (rc = tb_encoder_snapshot_tpiu(r.snap)) < 0) {
            fail(err, errlen, rc, "snapshot: %s", tb_err_str(rc));
            goto out;
        }
    }
    if (c->truth_file || (c->out_dir && !c->no_truth)) {
        char path[1024];

        if (c->truth_file)
            snprintf(path, sizeof path, "%s", c->truth_file);
        else
            snprintf(path, sizeof path, "%s/truth.txt", c->out_dir);
        if (!(r.truth = fopen(path, "w"))) {
            rc = fail(err, errlen, TB_ERR_IO, "%s: cannot write", path);
            goto out;
        }
    }

    /* Data trace needs the run's memory transfers as ground truth. */
    if (opts.data_trace && (rc = tb_sim_set_data(sim, true)) < 0) {
        fail(err, errlen, rc, "%s: cannot record data transfers", c->program);
        goto out;
    }
    /* dual: the cycle model's dual-issue rule (sim/dual.c). */
    if (opts.dual_issue && (rc = tb_sim_set_dual(sim, true)) < 0) {
        fail(err, errlen, rc, "%s: %s", c->program, tb_sim_errmsg(sim));
        goto out;
    }
    /* pcfirst: the core's LDM order, PC first (ETMIDR[16]); the truth
     * is the order this core transfers in. */
    if (opts.pc_first && (rc = tb_sim_set_pcfirst(sim, true)) < 0) {
        fail(err, errlen, rc, "%s: %s", c->program, tb_sim_errmsg(sim));
        goto out;
    }
    /* Two threads when asked for and one can be started (else one: the
     * same run).  The simulator hands over the records it made before a
     * failure too, as single pushes had handled them. */
    r.merge = !c->on_trace && !r.snap && !c->tpiu && !c->chunk;
    threaded = c->threads >= 2 && pipe_start(&r, &th) == 0;
    rc = tb_sim_run_batch(sim, on_records, &r, &res->sim);
    if (threaded) {
        /* The encoder's last bytes still go through the queue; an error
         * of the decode side before them wins (set_err keeps the first). */
        if (rc >= 0 && !atomic_load_explicit(&r.pipe->stop, memory_order_relaxed)) {
            int frc = tb_encoder_finish(r.enc);

            if (frc < 0) {
                rt_msg *m = pipe_msg(&r, M_ERR);

                m->u.err.rc = tb_encoder_error(r.enc) ? tb_encoder_error(r.enc) : frc;
                m->u.err.where = "encoder";
            }
        }
        pipe_finish(&r, th);
    }
    if (rc < 0 && !r.err) {
        fail(err, errlen, rc, "%s: %s", c->program, tb_sim_errmsg(sim));
        goto out;
    }
    if (!threaded && !r.err && (rc = tb_encoder_finish(r.enc)) < 0)
        set_err(&r, tb_encoder_error(r.enc) ? tb_encoder_error(r.enc) : rc, "encoder");
    if (!r.err && r.fmt && (rc = tb_formatter_flush(r.fmt, frame_sink, &r)) < 0)
        set_err(&r, rc, "formatter");
    if (!r.err && r.dfm && (rc = tb_deformatter_finish(r.dfm, on_frame, &r)) < 0)
        set_err(&r, rc, "deformatter");
    if (!r.err && (rc = tb_parser_finish(r.parser, on_packet, &r)) < 0)
        set_err(&r, rc, "parser");
    if (!r.err && (rc = tb_decoder_finish(r.dec, on_element, &r)) < 0)
        set_err(&r, rc, "decoder");
    if (!r.err && c->decode_end && (rc = c->decode_end(c->decode_ctx)) < 0)
        set_err(&r, rc, "analysis");
    if (r.err) {
        rc = fail(err, errlen, r.err, "%s: %s", r.err_where, tb_err_str(r.err));
        goto out;
    }
    res->resumes = r.resumes;
    res->lost_tail = tb_encoder_get_stats(r.enc)->overflows > r.resumes;
    if (res->lost_tail)
        tb_compare_mark_lost_tail(r.cmp);
    tb_compare_finish(r.cmp);
    res->match = tb_compare_matched(r.cmp);
    res->enc = *tb_encoder_get_stats(r.enc);
    res->cmp = *tb_compare_get_stats(r.cmp);
    snprintf(res->report, sizeof res->report, "%s", tb_compare_report(r.cmp));
    /* The counters go on past the fault's packet: all of its kind seen. */
    res->fault_packets = c->fault.kind == TB_RT_FAULT_ADDR_BIT ? r.nth_branch : r.nth_atom;
    res->verdict = verdict(c, res);

    if (r.truth) {
        int bad = fclose(r.truth);

        r.truth = NULL;
        if (bad) {
            rc = fail(err, errlen, TB_ERR_IO, "%s: write failed",
                      c->truth_file ? c->truth_file : "truth.txt");
            goto out;
        }
    }
    if (r.snap) {
        rc = tb_encoder_snapshot_close(r.snap, regs, (size_t)nr, msg, sizeof msg);
        r.snap = NULL;
        if (rc < 0) {
            fail(err, errlen, rc, "%s: %s", c->out_dir, msg);
            goto out;
        }
    }
    rc = 0;
out:
    if (r.truth)
        fclose(r.truth);
    tb_encoder_snapshot_abort(r.snap);
    tb_compare_free(r.cmp);
    tb_encoder_free(r.enc);
    tb_parser_free(r.parser);
    tb_decoder_free(r.dec);
    tb_formatter_free(r.fmt);
    tb_deformatter_free(r.dfm);
    tb_memimage_free(mem);
    tb_sim_free(sim);
    free(r.addrs);
    free(store);
    free(elf);
    return rc;
}
