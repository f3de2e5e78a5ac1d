/*
 * Decode throughput: tracebench's full decoder against OpenCSD's C API,
 * same trace bytes, same image, in one run, neither side printing.
 *
 * Both sides take the formatted ETB buffer from memory (no file I/O in
 * the timed loop), de-format it, parse and decode one trace ID, and only
 * count instructions in their element callback (ours as a user would:
 * deformatter spans into tb_decoder_push_span).  The real traces are
 * small (32 KiB buffers), so each is decoded repeatedly with the decoder
 * reset between passes; both sides keep their warm caches, which is the
 * steady state of a long trace.  The two sides take turns, four windows
 * each, and each keeps its best batch of passes.
 *
 * Then a generated trace of >= 10^8 instructions: the long_run vector
 * program through the simulator and the encoder (PTM and ETMv3), written
 * once as a snapshot in the build directory (bench/long_run_<proto>) and
 * decoded once by each side.
 *
 * usage: bench_decode [REFDIR] [--seconds S] [--passes N] [--stages]
 *                     [--only NAME] [--no-opencsd] [--no-long] [--dec-only]
 *                     [--digest] [--setup] [--analysis [--profile-cycles]]
 *   REFDIR defaults to $TB_REFERENCE_DIR or ../shared/reference.
 *   --passes N: exactly N passes per measurement (for callgrind).
 *   --stages: also time de-format only and de-format + parse.
 *   --dec-only: only the decompressor on pre-parsed packets.
 *   --no-dec-only: skip that measurement (for profiling the full path).
 *   --digest: no timing; a hash of every element field per trace (to
 *     check that a speed change leaves the elements as they were), also
 *     with the parser fed 1, 7 and 4096 bytes at a time.
 *   --setup: fixed costs per snapshot (real traces): load, create, first
 *     (cold-cache) pass against a warm pass, both sides; "cold x" is
 *     OpenCSD's create + first pass over ours (issue 36: >= 5x).
 *   --analysis: code coverage (tb_codecov) and profile (tb_profile) fed
 *     from the decode, side by side with the plain decode in one run, as
 *     a ratio of its speed (issue 34 item 4: >= 0.5 on the long traces).
 *     The three sides take turns; each long-trace pass starts from a new
 *     coverage or profile (a one-shot run: its tables grow from empty),
 *     the real traces reuse theirs (warm, as the decoder is).  The
 *     profile gets long_run.elf's functions (tb_elfinfo) as `tracebench
 *     profile --memory` would; the real traces have no ELF.  With
 *     --profile-cycles the profile's decoder gives each instruction its
 *     own range on cycle-accurate traces (tb_decoder_set_cycle_ranges),
 *     as `tracebench profile --cycles` does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracebench/codecov.h"
#include "tracebench/decoder.h"
#include "tracebench/elfinfo.h"
#include "tracebench/frame.h"
#include "tracebench/parser.h"
#include "tracebench/profile.h"
#include "tracebench/snapshot.h"
#include "tracebench/stream.h"

#ifdef TB_HAVE_OPENCSD
#include <opencsd/c_api/opencsd_c_api.h>
#endif
#ifdef TB_HAVE_SIM
#include <sys/stat.h>

#include "tracebench/encoder.h"
#include "tracebench/sim.h"
#endif

static double now(void)
{
    struct timespec ts;

    /* CPU time of this process: on the shared machine wall time also
     * counts the time other jobs held the core. */
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct job {
    const char *name;
    tb_config cfg;
    tb_memimage *mem;
    uint8_t *buf;
    size_t len;
    unsigned frame_flags;
    bool formatted;
    /* image as flat regions for OpenCSD */
    size_t n_dumps;
    struct { uint32_t addr; uint8_t *data; size_t len; } dumps[16];
} job;

/* ---- tracebench ---- */

typedef struct ours {
    tb_deformatter *df;
    tb_parser *p;
    tb_decoder *d;
    uint8_t id;
    uint64_t insns;
    uint64_t src_bytes;
    tb_packet *pk;       /* packets kept by the warm-up pass */
    size_t npk, cappk;
    bool keep;
    int stop_at;         /* 0 full decode, 1 parse only, 2 de-format only */
    uint64_t npkts;
    /* --digest: every element field hashed, source bytes pushed to the
     * parser in pieces of `chunk` bytes (0: as the deformatter gives). */
    bool digest;
    uint64_t hash, nel;
    size_t chunk;
    bool fused;          /* tb_decoder_push (else parser -> packets) */
    bool spans;          /* deformatter spans (else its runs) */
    tb_element_cb cb;    /* the fused path's element callback (o_elem) */
    /* --analysis: the coverage or profile the elements go into. */
    tb_codecov *cc;
    tb_profile *pf;
    bool fresh;          /* a new one for every pass */
    const tb_elfinfo *elf; /* the profile's functions, if any */
    bool prof_cycles;    /* --profile-cycles */
} ours;

static uint64_t fnv(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        h = (h ^ (v & 0xFF)) * 0x100000001B3ull;
    return h;
}

/* All fields of an element, one by one (padding is not hashed), so that
 * a speed change can be checked to leave the element stream as it was. */
static void hash_elem(ours *o, const tb_element *el)
{
    const uint64_t f[] = {
        (uint64_t)el->kind, el->index, el->reason, el->isa, el->start, el->end,
        el->count, el->last_addr, el->last_size, el->last_wp,
        (uint64_t)(uint8_t)el->last_atom, el->atom_bits, el->exc_num, el->pref_return,
        el->cancelled, el->ts, el->has_cc, el->cc, el->context_id, el->vmid, el->ns,
        el->hyp, (uint64_t)(int64_t)el->err,
    };
    uint64_t h = o->hash;

    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        h = fnv(h, f[i]);
    o->hash = h;
    o->nel++;
}

static int o_elem(void *ctx, const tb_element *el)
{
    ours *o = ctx;

    if (el->kind == TB_ELEM_INSN_RANGE)
        o->insns += el->count;
    if (o->digest)
        hash_elem(o, el);
    return 0;
}

/* --analysis: what `tracebench coverage` and `profile` do per element
 * (cli/analyze.c), the count aside. */
static int o_elem_cov(void *ctx, const tb_element *el)
{
    ours *o = ctx;

    if (el->kind == TB_ELEM_INSN_RANGE)
        o->insns += el->count;
    return tb_codecov_element(o->cc, el) < 0;
}

static int o_elem_prof(void *ctx, const tb_element *el)
{
    ours *o = ctx;

    if (el->kind == TB_ELEM_INSN_RANGE)
        o->insns += el->count;
    return tb_profile_element(o->pf, el) < 0;
}

static int o_pkt(void *ctx, const tb_packet *pkt)
{
    ours *o = ctx;

    o->npkts++;
    if (o->stop_at)
        return 0;
    if (o->keep) {
        if (o->npk == o->cappk) {
            o->cappk = o->cappk ? 2 * o->cappk : 4096;
            o->pk = realloc(o->pk, o->cappk * sizeof *o->pk);
            if (!o->pk)
                return 1;
        }
        o->pk[o->npk++] = *pkt;
    }
    return tb_decoder_packet(o->d, pkt, o_elem, o) < 0;
}

static int o_bytes(void *ctx, uint8_t id, uint64_t index, const uint8_t *data, size_t len)
{
    ours *o = ctx;

    if (id != o->id)
        return 0;
    o->src_bytes += len;
    if (o->stop_at == 2)
        return 0;
    for (size_t k = 0; k < len;) {
        size_t n = o->chunk && len - k > o->chunk ? o->chunk : len - k;

        /* The library's fused parse + decode, unless this pass keeps or
         * counts packets. */
        if (o->fused ? tb_decoder_push(o->d, o->p, data + k, n, index + k, o->cb, o) < 0
                     : tb_parser_push(o->p, data + k, n, index + k, o_pkt, o) < 0)
            return 1;
        k += n;
    }
    return 0;
}

/* Span mode: the parser entered once per span of joined runs. */
static int o_span(void *ctx, uint8_t id, const uint8_t *data, size_t len,
                  const tb_span_map *map)
{
    ours *o = ctx;

    if (id != o->id)
        return 0;
    o->src_bytes += len;
    if (o->stop_at == 2)
        return 0;
    if (o->fused)
        return tb_decoder_push_span(o->d, o->p, data, len, map, o->cb, o) < 0;
    return tb_parser_push_span(o->p, data, len, map, o_pkt, o) < 0;
}

static int ours_pass(ours *o, const job *j)
{
    if (!o->cb)
        o->cb = o_elem;
    tb_parser_reset(o->p);
    tb_decoder_reset(o->d);
    if (j->formatted && o->spans && !o->chunk) {
        tb_deformatter_reset(o->df);
        if (tb_deformatter_push_spans(o->df, j->buf, j->len, 0, o_span, o) < 0)
            return -1;
        tb_deformatter_finish_spans(o->df, o_span, o);
    } else if (j->formatted) {
        tb_deformatter_reset(o->df);
        if (tb_deformatter_push(o->df, j->buf, j->len, 0, o_bytes, o) < 0)
            return -1;
        tb_deformatter_finish(o->df, o_bytes, o);
    } else if (o_bytes(o, o->id, 0, j->buf, j->len)) {
        return -1;
    }
    if (o->fused) {
        tb_decoder_push_finish(o->d, o->p, o->cb, o);
    } else {
        tb_parser_finish(o->p, o_pkt, o);
        tb_decoder_finish(o->d, o_elem, o);
    }
    return 0;
}

/* ---- OpenCSD ---- */

#ifdef TB_HAVE_OPENCSD
typedef struct theirs {
    dcd_tree_handle_t tree;
    uint64_t insns;
} theirs;

static ocsd_datapath_resp_t t_elem(const void *ctx, const ocsd_trc_index_t index,
                                   const uint8_t chan, const ocsd_generic_trace_elem *el)
{
    theirs *t = (theirs *)(uintptr_t)ctx;

    (void)index;
    (void)chan;
    if (el->elem_type == OCSD_GEN_TRC_ELEM_INSTR_RANGE)
        t->insns += el->num_instr_range;
    return OCSD_RESP_CONT;
}

static int theirs_open(theirs *t, const job *j)
{
    uint8_t csid = 0;
    ocsd_err_t err;

    t->tree = ocsd_create_dcd_tree(j->formatted ? OCSD_TRC_SRC_FRAME_FORMATTED
                                                : OCSD_TRC_SRC_SINGLE,
                                   j->formatted ? OCSD_DFRMTR_FRAME_MEM_ALIGN : 0);
    if (!t->tree)
        return -1;
    if (j->cfg.protocol == TB_PROTO_ETMV3) {
        ocsd_etmv3_cfg c = {j->cfg.etmidr, j->cfg.etmcr, j->cfg.etmccer, j->cfg.traceidr,
                            ARCH_V7, profile_CortexA};

        err = ocsd_dt_create_decoder(t->tree, OCSD_BUILTIN_DCD_ETMV3,
                                     OCSD_CREATE_FLG_FULL_DECODER, &c, &csid);
    } else {
        ocsd_ptm_cfg c = {j->cfg.etmidr, j->cfg.etmcr, j->cfg.etmccer, j->cfg.traceidr,
                          ARCH_V7, profile_CortexA};

        err = ocsd_dt_create_decoder(t->tree, OCSD_BUILTIN_DCD_PTM,
                                     OCSD_CREATE_FLG_FULL_DECODER, &c, &csid);
    }
    if (err != OCSD_OK)
        return -1;
    ocsd_dt_set_gen_elem_outfn(t->tree, t_elem, t);
    for (size_t i = 0; i < j->n_dumps; i++)
        if (ocsd_dt_add_buffer_mem_acc(t->tree, j->dumps[i].addr, OCSD_MEM_SPACE_ANY,
                                       j->dumps[i].data, (uint32_t)j->dumps[i].len) != OCSD_OK)
            return -1;
    return 0;
}

static int theirs_pass(theirs *t, const job *j)
{
    size_t done = 0;
    uint32_t used;
    ocsd_datapath_resp_t r;

    r = ocsd_dt_process_data(t->tree, OCSD_OP_RESET, 0, 0, NULL, &used);
    while (done < j->len) {
        used = 0;
        r = ocsd_dt_process_data(t->tree, OCSD_OP_DATA, done, (uint32_t)(j->len - done),
                                 j->buf + done, &used);
        if (OCSD_DATA_RESP_IS_FATAL(r))
            return -1;
        if (OCSD_DATA_RESP_IS_WAIT(r))
            ocsd_dt_process_data(t->tree, OCSD_OP_FLUSH, 0, 0, NULL, NULL);
        done += used;
    }
    ocsd_dt_process_data(t->tree, OCSD_OP_EOT, 0, 0, NULL, NULL);
    return 0;
}
#endif

static int load_job(job *j, const char *dir, int id, const char *name)
{
    tb_snapshot s;
    char err[512];
    const tb_snap_source *src;
    const tb_snap_buffer *b = NULL;
    const tb_snap_device *core;
    int r;

    memset(j, 0, sizeof *j);
    j->name = name;
    if (tb_snapshot_load(&s, dir, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", name, err);
        return -1;
    }
    src = tb_stream_find_source(&s, id, err, sizeof err);
    r = src ? 0 : -1;
    if (!r)
        r = tb_snapshot_source_config(&s, src, &j->cfg, err, sizeof err) < 0 ? -1 : 0;
    if (!r)
        r = tb_snapshot_source_memory(&s, src, &j->mem, err, sizeof err) < 0 ? -1 : 0;
    for (size_t i = 0; !r && i < s.n_buffers; i++)
        if (strcmp(s.buffers[i].name, src->buffer) == 0)
            b = &s.buffers[i];
    if (!r && !b)
        r = -1;
    if (!r)
        r = tb_snapshot_read_buffer(&s, b, &j->buf, &j->len, err, sizeof err) < 0 ? -1 : 0;
    if (!r) {
        int f = tb_snap_buffer_frame_flags(b, &j->frame_flags);

        j->formatted = f == 0;
        r = f < 0 ? -1 : 0;
    }
    core = !r ? tb_snapshot_device(&s, src->core) : NULL;
    for (size_t i = 0; core && i < core->n_dumps && i < 16; i++) {
        const tb_snap_dump *dp = &core->dumps[i];
        size_t avail = 0;
        const uint8_t *p = tb_memimage_ptr(j->mem, dp->address, &avail);

        if (!p)
            continue;
        j->dumps[j->n_dumps].addr = dp->address;
        j->dumps[j->n_dumps].data = malloc(avail);
        memcpy(j->dumps[j->n_dumps].data, p, avail);
        j->dumps[j->n_dumps].len = avail;
        j->n_dumps++;
    }
    if (r)
        fprintf(stderr, "%s: %s\n", name, err);
    tb_snapshot_fini(&s);
    return r;
}

static void free_job(job *j)
{
    tb_memimage_free(j->mem);
    free(j->buf);
    for (size_t i = 0; i < j->n_dumps; i++)
        free(j->dumps[i].data);
}

#ifdef TB_HAVE_SIM
/* ---- the generated long trace ---- */

typedef struct growbuf {
    uint8_t *p;
    size_t n, cap;
} growbuf;

static int gb_sink(void *ctx, const uint8_t *data, size_t len)
{
    growbuf *g = ctx;

    if (g->n + len > g->cap) {
        size_t cap = g->cap ? g->cap : 1u << 20;
        uint8_t *q;

        while (cap < g->n + len)
            cap *= 2;
        q = realloc(g->p, cap);
        if (!q)
            return TB_ERR_NOMEM;
        g->p = q;
        g->cap = cap;
    }
    memcpy(g->p + g->n, data, len);
    g->n += len;
    return 0;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *b = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
        b = malloc((size_t)n);
        if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
            free(b);
            b = NULL;
        }
        *len = (size_t)n;
    }
    fclose(f);
    return b;
}

/* Runs long_run.elf through sim + encoder and writes the snapshot into
 * dir, unless a snapshot is already there. */
static int make_long_snapshot(const char *dir, tb_protocol proto, const char *opts)
{
    char path[1200], err[256];
    struct stat st;
    size_t elf_len = 0;
    uint8_t *elf, *storage = NULL;
    tb_snap_region regs[16];
    tb_encoder_opts eo;
    tb_config cfg;
    tb_encoder *enc;
    tb_sim *sim;
    tb_scenario sc;
    tb_sim_result res;
    growbuf g = {0};
    double t0;
    int n, r;

    snprintf(path, sizeof path, "%s/snapshot.ini", dir);
    if (stat(path, &st) == 0)
        return 0;
    elf = read_file(TB_BINARY_DIR "/vectors/programs/long_run.elf", &elf_len);
    if (!elf) {
        fprintf(stderr, "long trace: no %s\n", TB_BINARY_DIR "/vectors/programs/long_run.elf");
        return -1;
    }
    tb_encoder_opts_init(&eo, proto);
    if (opts && tb_encoder_opts_parse(&eo, opts, err, sizeof err) < 0) {
        fprintf(stderr, "long trace: %s\n", err);
        return -1;
    }
    if (tb_encoder_config(&eo, &cfg) < 0 || !(enc = tb_encoder_new(&eo, gb_sink, &g)))
        return -1;
    sim = tb_sim_new(TB_SIM_CPU_A15);
    tb_scenario_init(&sc);
    snprintf(path, sizeof path, "%s/vectors/programs/long_run.ini", TB_SOURCE_DIR);
    if (!sim || tb_scenario_load(&sc, path, err, sizeof err) < 0 ||
        tb_sim_load_elf(sim, elf, elf_len) < 0 || tb_sim_set_scenario(sim, &sc) < 0) {
        fprintf(stderr, "long trace: sim setup failed\n");
        return -1;
    }
    t0 = now();
    r = tb_sim_run(sim, tb_encoder_exec_cb, enc, &res);
    if (r < 0 || tb_encoder_finish(enc) < 0) {
        fprintf(stderr, "long trace: %s\n", r < 0 ? tb_sim_errmsg(sim) : "encoder failed");
        return -1;
    }
    fprintf(stderr, "long trace: %s %s, %llu instructions, %zu bytes, made in %.1f s\n",
            tb_protocol_name(proto), opts ? opts : "", (unsigned long long)res.insns, g.n,
            now() - t0);
    n = tb_encoder_elf_regions(elf, elf_len, regs, 16, &storage);
    mkdir(dir, 0777);
    if (n < 0 || tb_encoder_write_snapshot(dir, tb_encoder_get_config(enc), regs, (size_t)n,
                                           g.p, g.n, true, err, sizeof err) < 0) {
        fprintf(stderr, "long trace: %s\n", n < 0 ? "no ELF regions" : err);
        return -1;
    }
    tb_sim_free(sim);
    tb_encoder_free(enc);
    free(storage);
    free(elf);
    free(g.p);
    return 0;
}
#endif

/* Turns per side on a real trace (timed() windows of seconds / ROUNDS). */
#define ROUNDS 4

/* Runs fn until `seconds` have passed, or exactly `passes` times when
 * passes > 0 (repeatable instruction counts under callgrind).  The time
 * is measured in batches of about 2 ms and the fastest batch is kept:
 * this machine is shared, and the best batch is the one least disturbed
 * by other work (both decoders are measured the same way).  Returns the
 * best time per pass; *n gets the passes done. */
static double timed(int (*fn)(void *, const job *), void *obj, const job *j,
                    double seconds, uint64_t passes, uint64_t *n)
{
    double start = now(), best = 1e30, t0, t1;
    uint64_t batch = 1;

    *n = 0;
    for (;;) {
        t0 = now();
        for (uint64_t k = 0; k < batch; k++)
            fn(obj, j);
        t1 = now();
        *n += batch;
        if ((t1 - t0) / (double)batch < best)
            best = (t1 - t0) / (double)batch;
        if (passes ? *n >= passes : t1 - start >= seconds)
            break;
        if (!passes && t1 - t0 < 2e-3 && batch < (1u << 20))
            batch *= 2;
    }
    return best;
}

static int ours_pass_v(void *o, const job *j)
{
    return ours_pass(o, j);
}

static int dec_only_pass(void *obj, const job *j)
{
    ours *o = obj;

    (void)j;
    tb_decoder_reset(o->d);
    for (size_t i = 0; i < o->npk; i++)
        tb_decoder_packet(o->d, &o->pk[i], o_elem, o);
    tb_decoder_finish(o->d, o_elem, o);
    return 0;
}

#ifdef TB_HAVE_OPENCSD
static int theirs_pass_v(void *t, const job *j)
{
    return theirs_pass(t, j);
}
#endif

/* ---- --analysis: coverage and profile against the plain decode ---- */

static int cov_pass_v(void *obj, const job *j)
{
    ours *o = obj;
    int r;

    if (o->fresh || !o->cc) {
        tb_codecov_free(o->cc);
        if (!(o->cc = tb_codecov_new()))
            return -1;
    }
    if (tb_codecov_begin(o->cc, j->cfg.protocol, j->mem) < 0)
        return -1;
    o->cb = o_elem_cov;
    r = ours_pass(o, j);
    o->cb = o_elem;
    return tb_codecov_end(o->cc) < 0 ? -1 : r;
}

static int prof_pass_v(void *obj, const job *j)
{
    ours *o = obj;
    int r;

    if (o->fresh || !o->pf) {
        tb_profile_free(o->pf);
        if (!(o->pf = tb_profile_new()))
            return -1;
        for (size_t i = 0; o->elf && i < o->elf->nfuncs; i++)
            if (o->elf->funcs[i].hi > o->elf->funcs[i].lo &&
                tb_profile_add_func(o->pf, o->elf->funcs[i].lo, o->elf->funcs[i].hi) < 0)
                return -1;
    }
    if (tb_profile_begin(o->pf, j->cfg.protocol, j->mem) < 0)
        return -1;
    /* --profile-cycles: as `tracebench profile --cycles` decodes
     * (cli/analyze.c), each instruction its own cycles where the trace
     * counts them. */
    if (o->prof_cycles && j->cfg.cycle_accurate && tb_decoder_set_cycle_ranges(o->d, true) < 0)
        return -1;
    o->cb = o_elem_prof;
    r = ours_pass(o, j);
    o->cb = o_elem;
    (void)tb_decoder_set_cycle_ranges(o->d, false);
    return tb_profile_end(o->pf) < 0 ? -1 : r;
}

/* One trace's row: the plain decode, decode + coverage, decode +
 * profile, in turns (the long traces: three rounds of one pass each).
 * First one checked pass of each analysis from new: it must have seen
 * every instruction the decode did.  Returns the smaller ratio, or -1. */
static double analysis_row(ours *o, const job *j, const char *name, bool is_long,
                           uint64_t insn_pass, double seconds, uint64_t passes)
{
    const unsigned rounds = passes ? 1 : is_long ? 3 : ROUNDS;
    const uint64_t np = is_long ? 1 : passes;
    double t_d = 1e30, t_c = 1e30, t_p = 1e30, t;
    uint64_t n, sum = 0;
    size_t ni;
    const tb_codecov_insn *ci;

    o->fresh = true;
    o->insns = 0;
    if (cov_pass_v(o, j) < 0 || prof_pass_v(o, j) < 0 || !(ci = tb_codecov_insns(o->cc, &ni))) {
        printf("%-22s coverage or profile failed\n", name);
        return -1;
    }
    for (size_t i = 0; i < ni; i++)
        sum += ci[i].count;
    if (o->insns != 2 * insn_pass || sum != insn_pass ||
        tb_profile_get_stats(o->pf).insns != insn_pass) {
        printf("%-22s the analyses saw %llu / %llu / %llu instructions, the decode %llu\n",
               name, (unsigned long long)o->insns, (unsigned long long)sum,
               (unsigned long long)tb_profile_get_stats(o->pf).insns,
               (unsigned long long)insn_pass);
        return -1;
    }
    o->fresh = is_long;
    for (unsigned r = 0; r < rounds; r++) {
        t = timed(ours_pass_v, o, j, seconds / rounds, np, &n);
        t_d = t < t_d ? t : t_d;
        t = timed(cov_pass_v, o, j, seconds / rounds, np, &n);
        t_c = t < t_c ? t : t_c;
        t = timed(prof_pass_v, o, j, seconds / rounds, np, &n);
        t_p = t < t_p ? t : t_p;
    }
    printf("%-22s %10llu %10.1f | %10.1f %6.2f | %10.1f %6.2f\n", name,
           (unsigned long long)insn_pass, (double)insn_pass / t_d / 1e6,
           (double)insn_pass / t_c / 1e6, t_d / t_c, (double)insn_pass / t_p / 1e6, t_d / t_p);
    tb_codecov_free(o->cc);
    tb_profile_free(o->pf);
    o->cc = NULL;
    o->pf = NULL;
    return t_d / t_c < t_d / t_p ? t_d / t_c : t_d / t_p;
}

/* Fixed costs of one snapshot, the best of `reps` runs each: snapshot
 * load (ini files, buffer, image), object creation (our classifier and
 * block cache; OpenCSD's tree, decoder and memory accessors), the first
 * pass on cold caches, then a warm pass.  Setup share = what a one-shot
 * decode pays beyond the warm pass. */
static int setup_costs(const char *ref, const char *only, bool no_ocsd)
{
    static const struct { const char *sub; int id; const char *name; } srcs[] = {
        {"TC2", 0x10, "TC2 ETMv3.5 0x10"}, {"TC2", 0x11, "TC2 ETMv3.5 0x11"},
        {"TC2", 0x12, "TC2 ETMv3.5 0x12"}, {"TC2", 0x13, "TC2 PTM1.1 0x13"},
        {"Snowball", 0x10, "Snowball PTM1.0 0x10"}, {"Snowball", 0x11, "Snowball PTM1.0 0x11"},
    };
    const int reps = 20;
    char dir[1024];

    (void)no_ocsd;
    printf("%-22s %9s %9s %9s %9s %7s | %9s %9s %9s %7s | %7s\n", "trace (us)", "load",
           "create", "cold", "warm", "setup%", "OCSD crt", "cold", "warm", "setup%",
           "cold x");
    for (size_t k = 0; k < sizeof srcs / sizeof srcs[0]; k++) {
        double t_load = 1e30, t_new = 1e30, t_cold = 1e30, t_warm = 1e30, t0, t1, t2, t3, t4;
        double tot;

        if (only && !strstr(srcs[k].name, only))
            continue;
        snprintf(dir, sizeof dir, "%s/opencsd-snapshots/%s", ref, srcs[k].sub);
        for (int r = 0; r < reps; r++) {
            job j;
            ours o = {0};

            t0 = now();
            if (load_job(&j, dir, srcs[k].id, srcs[k].name) < 0)
                return 1;
            t1 = now();
            o.id = (uint8_t)srcs[k].id;
            o.fused = true;
            o.spans = true;
            o.df = tb_deformatter_new(j.frame_flags);
            if (o.df)
                (void)tb_deformatter_set_ids(o.df, &o.id, 1);
            o.p = tb_parser_new(&j.cfg);
            o.d = tb_decoder_new(&j.cfg, j.mem);
            if (!o.df || !o.p || !o.d)
                return 1;
            t2 = now();
            ours_pass(&o, &j);
            t3 = now();
            ours_pass(&o, &j);
            t4 = now();
            t_load = t1 - t0 < t_load ? t1 - t0 : t_load;
            t_new = t2 - t1 < t_new ? t2 - t1 : t_new;
            t_cold = t3 - t2 < t_cold ? t3 - t2 : t_cold;
            t_warm = t4 - t3 < t_warm ? t4 - t3 : t_warm;
            tb_deformatter_free(o.df);
            tb_parser_free(o.p);
            tb_decoder_free(o.d);
            if (r + 1 < reps)
                free_job(&j);
            else
                break;
        }
        tot = t_load + t_new + t_cold;
        printf("%-22s %9.1f %9.1f %9.1f %9.1f %6.0f%% |", srcs[k].name, t_load * 1e6,
               t_new * 1e6, t_cold * 1e6, t_warm * 1e6, 100 * (tot - t_warm) / tot);
#ifdef TB_HAVE_OPENCSD
        if (!no_ocsd) {
            double c_new = 1e30, c_cold = 1e30, c_warm = 1e30;
            job j;

            if (load_job(&j, dir, srcs[k].id, srcs[k].name) < 0)
                return 1;
            for (int r = 0; r < reps; r++) {
                theirs th = {0};

                t0 = now();
                if (theirs_open(&th, &j) < 0)
                    return 1;
                t1 = now();
                theirs_pass(&th, &j);
                t2 = now();
                theirs_pass(&th, &j);
                t3 = now();
                ocsd_destroy_dcd_tree(th.tree);
                c_new = t1 - t0 < c_new ? t1 - t0 : c_new;
                c_cold = t2 - t1 < c_cold ? t2 - t1 : c_cold;
                c_warm = t3 - t2 < c_warm ? t3 - t2 : c_warm;
            }
            tot = c_new + c_cold;
            printf(" %9.1f %9.1f %9.1f %6.0f%% | %6.1fx", c_new * 1e6, c_cold * 1e6,
                   c_warm * 1e6, 100 * (tot - c_warm) / tot, tot / (t_new + t_cold));
            free_job(&j);
        }
#endif
        printf("\n");
    }
    printf("(OpenCSD's load: its snapshot reader is not used here, so no load column)\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *ref = getenv("TB_REFERENCE_DIR");
    double seconds = 1.0;
    uint64_t passes = 0;
    bool stages = false, no_ocsd = false, no_long = false, dec_only = false, digest = false;
    bool analysis = false, prof_cycles = false;
    tb_elfinfo *long_elf = NULL;
    double worst_long = 1e30;
    bool no_dec_only = false;
    bool setup = false;
    const char *only = NULL;
    char dir[1024];
    /* proto != 0: the generated long trace, made on first use. */
    /* The _ca traces use TC2's settings (cycle-accurate, timestamps). */
    static const struct {
        const char *sub; int id; const char *name; int proto; const char *opts;
    } srcs[] = {
        {"TC2", 0x10, "TC2 ETMv3.5 0x10", 0, NULL},
        {"TC2", 0x11, "TC2 ETMv3.5 0x11", 0, NULL},
        {"TC2", 0x12, "TC2 ETMv3.5 0x12", 0, NULL},
        {"TC2", 0x13, "TC2 PTM1.1 0x13", 0, NULL},
        {"Snowball", 0x10, "Snowball PTM1.0 0x10", 0, NULL},
        {"Snowball", 0x11, "Snowball PTM1.0 0x11", 0, NULL},
        {"long_run_ptm", 0x10, "long_run PTM1.1", TB_PROTO_PTM, NULL},
        {"long_run_etmv3", 0x10, "long_run ETMv3.5", TB_PROTO_ETMV3, NULL},
        {"long_run_ptm_ca", 0x10, "long_run PTM1.1 CA", TB_PROTO_PTM, "ca,ts"},
        {"long_run_etmv3_ca", 0x10, "long_run ETMv3.5 CA", TB_PROTO_ETMV3, "ca,ts"},
    };
    double tot_o_i = 0, tot_o_t = 0, tot_t_i = 0, tot_t_t = 0, tot_d_i = 0, tot_d_t = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--passes") == 0 && i + 1 < argc)
            passes = strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--stages") == 0)
            stages = true;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--no-opencsd") == 0)
            no_ocsd = true;
        else if (strcmp(argv[i], "--no-long") == 0)
            no_long = true;
        else if (strcmp(argv[i], "--no-dec-only") == 0)
            no_dec_only = true;
        else if (strcmp(argv[i], "--dec-only") == 0)
            dec_only = true; /* for profiling the decompressor */
        else if (strcmp(argv[i], "--digest") == 0)
            digest = true;
        else if (strcmp(argv[i], "--setup") == 0)
            setup = true;
        else if (strcmp(argv[i], "--analysis") == 0)
            analysis = true;
        else if (strcmp(argv[i], "--profile-cycles") == 0)
            prof_cycles = true;
        else
            ref = argv[i];
    }
    if (!ref)
        ref = TB_SOURCE_DIR "/../shared/reference";

    if (setup)
        return setup_costs(ref, only, no_ocsd);
    if (analysis) {
        char err[512];

        if (tb_elfinfo_load(TB_BINARY_DIR "/vectors/programs/long_run.elf", &long_elf, err,
                            sizeof err) < 0)
            fprintf(stderr, "note: the long traces' profile has no functions: %s\n", err);
        printf("%-22s %10s %10s | %10s %6s | %10s %6s\n", "trace", "instr/pass",
               "decode", "+coverage", "ratio", "+profile", "ratio");
        printf("%-22s %10s %10s | %10s %6s | %10s %6s\n", "", "", "Mi/s", "Mi/s", "",
               "Mi/s", "");
    } else if (!digest)
        printf("%-22s %10s %10s %10s %10s | %12s %10s | %7s\n", "trace", "instr/pass",
               "ours Mi/s", "ours MB/s", "dec-only", "OpenCSD Mi/s", "MB/s", "ratio");
    for (size_t k = 0; k < sizeof srcs / sizeof srcs[0]; k++) {
        job j;
        ours o = {0};
        double t, o_rate, o_mb, dec_rate;
        uint64_t n, insn_pass;

        /* The long trace is decoded once per side: it is its own
         * steady state, and its packets are not kept. */
        const bool is_long = srcs[k].proto != 0;
        const uint64_t np = is_long ? 1 : passes;

        if (only && !strstr(srcs[k].name, only))
            continue;
        o.prof_cycles = prof_cycles;
        if (is_long) {
#ifdef TB_HAVE_SIM
            if (no_long)
                continue;
            snprintf(dir, sizeof dir, "%s/bench/%s", TB_BINARY_DIR, srcs[k].sub);
            if (make_long_snapshot(dir, (tb_protocol)srcs[k].proto, srcs[k].opts) < 0)
                continue;
#else
            (void)no_long;
            printf("%-22s (needs the simulator library)\n", srcs[k].name);
            continue;
#endif
        } else {
            snprintf(dir, sizeof dir, "%s/opencsd-snapshots/%s", ref, srcs[k].sub);
        }
        if (load_job(&j, dir, srcs[k].id, srcs[k].name) < 0)
            return 1;
        o.id = (uint8_t)srcs[k].id;
        o.df = tb_deformatter_new(j.frame_flags);
        /* As OpenCSD's tree, which only has a decoder for this ID. */
        if (o.df)
            (void)tb_deformatter_set_ids(o.df, &o.id, 1);
        o.p = tb_parser_new(&j.cfg);
        o.d = tb_decoder_new(&j.cfg, j.mem);
        if (!o.df || !o.p || !o.d)
            return 1;
        if (digest) {
            /* Element stream digest through the packet path as the
             * deformatter chunks it, then the fused path in those and
             * in 1, 7 and 4096-byte pieces: all must agree. */
            static const size_t chunks[] = {0, 0, 0, 1, 7, 4096};
            uint64_t h0 = 0;

            o.digest = true;
            for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
                o.chunk = chunks[c];
                o.fused = c > 0;
                o.spans = c == 2; /* the fused path on spans */
                o.hash = 0xCBF29CE484222325ull;
                o.nel = o.insns = 0;
                ours_pass(&o, &j);
                if (c == 0) {
                    h0 = o.hash;
                    printf("%-22s %10llu instructions %9llu elements digest %016llx\n",
                           srcs[k].name, (unsigned long long)o.insns,
                           (unsigned long long)o.nel, (unsigned long long)h0);
                } else if (o.hash != h0) {
                    printf("%-22s FUSED PATH / CHUNKING CHANGES THE ELEMENTS "
                           "(chunk %zu%s: %016llx)\n",
                           srcs[k].name, chunks[c], o.spans ? ", spans" : "",
                           (unsigned long long)o.hash);
                }
            }
            goto next;
        }
        o.spans = true;
        o.keep = !is_long;
        o.fused = is_long; /* long: no packets kept, warm-up as timed */
        ours_pass(&o, &j); /* warm-up, and the per-pass count */
        o.keep = false;
        o.fused = true;
        insn_pass = o.insns;
        if (analysis) {
            double w;

            o.elf = is_long ? long_elf : NULL;
            w = analysis_row(&o, &j, srcs[k].name, is_long, insn_pass, seconds, passes);
            if (w < 0)
                return 1;
            if (is_long && w < worst_long)
                worst_long = w;
            goto next;
        }
        /* The decompressor alone, on the packets parsed once. */
        dec_rate = 0;
        if (!is_long && !no_dec_only) {
            t = timed(dec_only_pass, &o, &j, seconds / 2, passes, &n);
            dec_rate = (double)insn_pass / t;
            tot_d_i += (double)insn_pass;
            tot_d_t += t;
        }
        if (dec_only) {
            printf("%-22s %10llu %10s %10s %10.1f\n", srcs[k].name,
                   (unsigned long long)insn_pass, "-", "-", dec_rate / 1e6);
            goto next;
        }
        /* Both sides in turns (real traces: ROUNDS windows each, the
         * best batch of all kept), so that a spell of other work on
         * this shared machine slows both or neither, not one side's
         * whole window. */
        {
            const unsigned rounds = is_long || passes ? 1 : ROUNDS;
            double t_o = 1e30, t_t = 1e30;
            uint64_t n_t = 0;
            bool have_t = false;
#ifdef TB_HAVE_OPENCSD
            theirs th = {0};

            if (!no_ocsd && theirs_open(&th, &j) == 0) {
                have_t = true;
                if (!is_long) {
                    theirs_pass(&th, &j); /* warm-up */
                    n_t = 1;
                }
            }
#endif
            for (unsigned r = 0; r < rounds; r++) {
                t = timed(ours_pass_v, &o, &j, seconds / rounds, np, &n);
                t_o = t < t_o ? t : t_o;
#ifdef TB_HAVE_OPENCSD
                if (have_t) {
                    t = timed(theirs_pass_v, &th, &j, seconds / rounds, np, &n);
                    t_t = t < t_t ? t : t_t;
                    n_t += n;
                }
#endif
            }
            (void)have_t; /* without OpenCSD */
            (void)n_t;
            (void)t_t;
            o_rate = (double)insn_pass / t_o;
            o_mb = (double)j.len / t_o / 1e6;
            tot_o_i += is_long ? 0 : (double)insn_pass;
            tot_o_t += is_long ? 0 : t_o;
            printf("%-22s %10llu %10.1f %10.1f ", srcs[k].name,
                   (unsigned long long)insn_pass, o_rate / 1e6, o_mb);
            if (is_long)
                printf("%10s |", "-");
            else
                printf("%10.1f |", dec_rate / 1e6);
#ifdef TB_HAVE_OPENCSD
            if (have_t) {
                const uint64_t t_pass = th.insns / n_t;
                const double t_rate = (double)t_pass / t_t;

                tot_t_i += is_long ? 0 : (double)t_pass;
                tot_t_t += is_long ? 0 : t_t;
                printf(" %12.1f %10.1f | %6.1fx", t_rate / 1e6, (double)j.len / t_t / 1e6,
                       o_rate / t_rate);
                if (t_pass != insn_pass)
                    printf("  (OpenCSD counts %llu instructions)", (unsigned long long)t_pass);
                printf("\n");
            } else if (!no_ocsd) {
                printf(" OpenCSD setup failed\n");
            } else
#endif
            {
                printf(" %12s %10s | %7s\n", "n/a", "n/a", "n/a");
            }
#ifdef TB_HAVE_OPENCSD
            if (th.tree)
                ocsd_destroy_dcd_tree(th.tree);
#endif
        }
        if (stages && !is_long) {
            /* Where the time goes: de-format only, then + parse. */
            double t_df, t_pp;
            uint64_t n_df, n_pp, pk_pass, src_pass;

            o.fused = false;
            o.stop_at = 2;
            o.src_bytes = 0;
            ours_pass(&o, &j);
            src_pass = o.src_bytes;
            t_df = timed(ours_pass_v, &o, &j, seconds / 2, passes, &n_df);
            o.stop_at = 1;
            o.npkts = 0;
            ours_pass(&o, &j);
            pk_pass = o.npkts;
            t_pp = timed(ours_pass_v, &o, &j, seconds / 2, passes, &n_pp);
            o.stop_at = 0;
            printf("  %-20s per pass: %llu source bytes, %llu packets; deformat %.1f us, "
                   "+parse %.1f us, +decode %.1f us\n", "",
                   (unsigned long long)src_pass, (unsigned long long)pk_pass,
                   t_df * 1e6, t_pp * 1e6, (double)insn_pass / o_rate * 1e6);
        }
    next:
        tb_deformatter_free(o.df);
        tb_parser_free(o.p);
        tb_decoder_free(o.d);
        free(o.pk);
        free_job(&j);
    }
    if (analysis) {
        tb_elfinfo_free(long_elf);
        if (worst_long < 1e30)
            printf("long traces: the slower analysis runs at %.2f of the decode's speed "
                   "(goal >= 0.5: %s)\n", worst_long, worst_long >= 0.5 ? "met" : "not met");
        return 0;
    }
    if (tot_d_t > 0)
        printf("decompressor alone (packets parsed once): %.1f Mi/s\n", tot_d_i / tot_d_t / 1e6);
    if (tot_o_t <= 0)
        return 0;
    if (tot_t_t > 0)
        printf("real traces overall: ours %.1f Mi/s, OpenCSD %.1f Mi/s, ratio %.1fx\n",
               tot_o_i / tot_o_t / 1e6, tot_t_i / tot_t_t / 1e6,
               (tot_o_i / tot_o_t) / (tot_t_i / tot_t_t));
    else
        printf("overall: ours %.1f Mi/s (OpenCSD not run)\n", tot_o_i / tot_o_t / 1e6);
    return 0;
}
