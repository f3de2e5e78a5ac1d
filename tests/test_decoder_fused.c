/*
 * The decoder's two ways in give the same elements (decoder.h):
 *   packet path: tb_parser_push() -> tb_decoder_packet() per packet,
 *                then tb_parser_finish() + tb_decoder_finish();
 *   fused path:  tb_decoder_push() + tb_decoder_push_finish() (ETMv3
 *                P-header runs straight into the decompressor).
 *
 * Inputs are real: every committed vector (vectors/generated, traces of
 * the emulator's runs) and the real silicon captures (TC2, Snowball,
 * trace_cov_a15) when the reference directory is present.  The packet
 * path is the oracle for the fused path; the element totals of the real
 * TC2 sources are pinned to the instruction counts of Arm DS-5's decode
 * (TC2/ds5-dumps, also checked row by row in test_decoder_real).
 *
 * Elements are compared field by field (never memcmp: tb_element has
 * padding), and the first difference is reported with its position.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../decoder/protocols.h"
#include "tb_test.h"
#include "tracebench/decoder.h"
#include "tracebench/frame.h"
#include "tracebench/parser.h"
#include "tracebench/snapshot.h"
#include "tracebench/stream.h"

/* ------------------------------------------------------------------ */
/* Element lists and their comparison. */

typedef struct elist {
    tb_element *v;
    size_t n, cap;
} elist;

static void elist_push(elist *l, const tb_element *el)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        cr_assert_not_null(l->v);
    }
    l->v[l->n++] = *el;
}

static void elist_free(elist *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* The first field (types.h order) in which a and b differ, written into
 * buf; false when every field is equal. */
static bool elem_differs(const tb_element *a, const tb_element *b, char *buf, size_t len)
{
#define CMP_U(f)                                                                          \
    if (a->f != b->f) {                                                                   \
        snprintf(buf, len, #f " 0x%llx vs 0x%llx", (unsigned long long)a->f,             \
                 (unsigned long long)b->f);                                               \
        return true;                                                                      \
    }
#define CMP_S(f)                                                                          \
    if (a->f != b->f) {                                                                   \
        snprintf(buf, len, #f " %lld vs %lld", (long long)a->f, (long long)b->f);         \
        return true;                                                                      \
    }
    CMP_U(kind)
    CMP_U(index)
    CMP_U(reason)
    CMP_U(isa)
    CMP_U(start)
    CMP_U(end)
    CMP_U(count)
    CMP_U(last_addr)
    CMP_U(last_size)
    CMP_U(last_wp)
    CMP_S(last_atom)
    CMP_U(atom_bits)
    CMP_U(exc_num)
    CMP_U(pref_return)
    CMP_U(cancelled)
    CMP_U(ts)
    CMP_U(has_cc)
    CMP_U(cc)
    CMP_U(context_id)
    CMP_U(vmid)
    CMP_U(ns)
    CMP_U(hyp)
    CMP_S(err)
#undef CMP_U
#undef CMP_S
    return false;
}

/* want[0..n) and got[0..n) equal element for element; n is want->n
 * unless prefix is non-zero (then the first `prefix` elements). */
static void expect_same(const char *what, const elist *want, const elist *got, size_t prefix)
{
    size_t n = prefix ? prefix : want->n;
    char diff[160], line[256];

    if (!prefix)
        cr_assert_eq(got->n, want->n, "%s: %zu elements, packet path %zu", what, got->n,
                     want->n);
    cr_assert_geq(got->n, n, "%s: %zu elements, want at least %zu", what, got->n, n);
    for (size_t i = 0; i < n; i++)
        if (elem_differs(&got->v[i], &want->v[i], diff, sizeof diff)) {
            tb_elem_format(&want->v[i], line, sizeof line);
            cr_assert_fail("%s: element %zu (%s, index %llu) differs: %s (fused vs packet); "
                           "packet path: %s",
                           what, i, tb_elem_kind_name(want->v[i].kind),
                           (unsigned long long)want->v[i].index, diff, line);
        }
}

/* ------------------------------------------------------------------ */
/* A trace source: configuration, image and its bytes as the
 * deformatter gives them (runs, each with the stream index of its first
 * byte, frame.h). */

typedef struct brun {
    uint64_t index;
    size_t off, len;
} brun;

typedef struct source {
    char name[160];
    tb_config cfg;
    tb_memimage *mem;
    bool own_mem;
    uint8_t *data;
    size_t len, cap;
    brun *runs;
    size_t nruns, capruns;
    /* source_load only: where it came from, and its buffer as stored */
    char dir[1100];
    int id;
    uint8_t *raw;
    size_t rawlen;
    bool formatted;
    unsigned frame_flags;
} source;

static int collect_bytes(void *ctx, uint64_t index, const uint8_t *data, size_t len)
{
    source *s = ctx;

    if (s->len + len > s->cap) {
        s->cap = (s->len + len) * 2;
        s->data = realloc(s->data, s->cap);
        cr_assert_not_null(s->data);
    }
    if (s->nruns == s->capruns) {
        s->capruns = s->capruns ? 2 * s->capruns : 256;
        s->runs = realloc(s->runs, s->capruns * sizeof *s->runs);
        cr_assert_not_null(s->runs);
    }
    memcpy(s->data + s->len, data, len);
    s->runs[s->nruns++] = (brun){index, s->len, len};
    s->len += len;
    return 0;
}

/* Loads source `id` (< 0: the only one) of the snapshot in dir, the way
 * tb_decode_snapshot() does: snapshot -> stream (deformatter) -> bytes. */
static void source_load(source *s, const char *dir, int id, const char *name)
{
    tb_snapshot snap;
    const tb_snap_source *src;
    char err[512];

    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    cr_assert_eq(tb_snapshot_load(&snap, dir, err, sizeof err), 0, "%s: %s", name, err);
    src = tb_stream_find_source(&snap, id, err, sizeof err);
    cr_assert_not_null(src, "%s: %s", name, err);
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    s->id = id;
    for (size_t b = 0; b < snap.n_buffers; b++) {
        int f;

        if (strcmp(snap.buffers[b].name, src->buffer) != 0)
            continue;
        f = tb_snap_buffer_frame_flags(&snap.buffers[b], &s->frame_flags);
        cr_assert_geq(f, 0, "%s: buffer format", name);
        s->formatted = f == 0;
        cr_assert_eq(tb_snapshot_read_buffer(&snap, &snap.buffers[b], &s->raw, &s->rawlen,
                                             err, sizeof err),
                     0, "%s: %s", name, err);
    }
    cr_assert_not_null(s->raw, "%s: no buffer", name);
    cr_assert_eq(tb_snapshot_source_config(&snap, src, &s->cfg, err, sizeof err), 0, "%s: %s",
                 name, err);
    cr_assert_geq(tb_snapshot_source_memory(&snap, src, &s->mem, err, sizeof err), 0,
                  "%s: %s", name, err);
    s->own_mem = true;
    cr_assert_eq(tb_stream_source(&snap, src, NULL, collect_bytes, s, err, sizeof err), 0,
                 "%s: %s", name, err);
    tb_snapshot_fini(&snap);
    cr_assert_gt(s->len, 0u, "%s: no trace bytes", name);
}

/* A source with the same configuration and image but other bytes (one
 * run from index 0), for the corrupt-input cases. */
static void source_from_bytes(source *s, const source *base, const uint8_t *data, size_t len,
                              const char *name)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->cfg = base->cfg;
    s->mem = base->mem;
    if (len)
        collect_bytes(s, 0, data, len);
}

static void source_fini(source *s)
{
    if (s->own_mem)
        tb_memimage_free(s->mem);
    free(s->raw);
    free(s->data);
    free(s->runs);
    memset(s, 0, sizeof *s);
}

static void vector_dir(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/vectors/generated/%s", TB_SOURCE_DIR, name);
}

/* ------------------------------------------------------------------ */
/* The two paths. */

/* How the bytes are cut: as the deformatter gives them (each run with
 * its own index), or all of the source's bytes as one stream from
 * index 0 (so that pieces cross the deformatter's run boundaries). */
enum mode { MODE_RUNS, MODE_FLAT };

/* Where an element was emitted in the packet path: the packet being
 * decoded (its ordinal), or one of the finish calls. */
#define AT_PARSER_FINISH ((size_t)-1)
#define AT_DECODER_FINISH ((size_t)-2)

typedef struct drive {
    tb_parser *p;
    tb_decoder *d;
    elist out;
    size_t stop_at;     /* the callback returns 1 on this element (1-based); 0 never */
    size_t calls;       /* element callbacks */
    size_t pkts;        /* packets the parser delivered (packet path) */
    int dec_neg;        /* first negative tb_decoder_packet() return */
    int first_neg;      /* first negative return of any call */
    size_t calls_at_neg;
    bool late_call;     /* the callback ran after it asked to stop */
    /* packet path, when recording: packet kinds and where elements came from */
    bool record;
    tb_pkt_kind *pk;
    size_t npk, cappk;
    size_t *at;
    size_t nat, capat;
    size_t cur;
} drive;

static int on_elem(void *ctx, const tb_element *el)
{
    drive *dv = ctx;

    if (dv->stop_at && dv->calls >= dv->stop_at)
        dv->late_call = true;
    dv->calls++;
    elist_push(&dv->out, el);
    if (dv->record) {
        if (dv->nat == dv->capat) {
            dv->capat = dv->capat ? 2 * dv->capat : 1024;
            dv->at = realloc(dv->at, dv->capat * sizeof *dv->at);
            cr_assert_not_null(dv->at);
        }
        dv->at[dv->nat++] = dv->cur;
    }
    return dv->stop_at && dv->calls == dv->stop_at;
}

static int on_pkt(void *ctx, const tb_packet *pkt)
{
    drive *dv = ctx;
    size_t before = dv->calls;
    int r;

    if (dv->record) {
        if (dv->npk == dv->cappk) {
            dv->cappk = dv->cappk ? 2 * dv->cappk : 1024;
            dv->pk = realloc(dv->pk, dv->cappk * sizeof *dv->pk);
            cr_assert_not_null(dv->pk);
        }
        dv->cur = dv->npk;
        dv->pk[dv->npk++] = pkt->kind;
    }
    dv->pkts++;
    r = tb_decoder_packet(dv->d, pkt, on_elem, dv);
    if (r < 0) {
        dv->dec_neg = r;
        return 1;
    }
    cr_assert_eq((size_t)r, dv->calls - before,
                 "tb_decoder_packet returned %d, %zu elements delivered", r,
                 dv->calls - before);
    return 0;
}

/* Checks one call's return: a count equal to what was delivered during
 * it, or the first negative (recorded).  Returns true to go on. */
static bool take(drive *dv, const char *what, int r, size_t delivered, size_t before)
{
    if (r < 0) {
        dv->first_neg = r;
        dv->calls_at_neg = dv->calls;
        return false;
    }
    cr_assert_eq((size_t)r, delivered - before, "%s returned %d, %zu delivered", what, r,
                 delivered - before);
    return true;
}

static void drive_open(drive *dv, const source *s, size_t stop_at)
{
    memset(dv, 0, sizeof *dv);
    dv->stop_at = stop_at;
    dv->p = tb_parser_new(&s->cfg);
    dv->d = tb_decoder_new(&s->cfg, s->mem);
    cr_assert_not_null(dv->p);
    cr_assert_not_null(dv->d);
}

static void drive_close(drive *dv)
{
    tb_parser_free(dv->p);
    tb_decoder_free(dv->d);
    elist_free(&dv->out);
    free(dv->pk);
    free(dv->at);
    memset(dv, 0, sizeof *dv);
}

static void drive_finish(drive *dv, bool fused);

/* Pushes the source's bytes in pieces of at most `chunk` bytes (0: each
 * run whole) through the packet path (fused false) or the fused path;
 * stops at the first negative return, as a caller must. */
static void drive_run(drive *dv, const source *s, enum mode mode, size_t chunk, bool fused)
{
    brun flat = {0, 0, s->len};
    const brun *runs = mode == MODE_FLAT ? &flat : s->runs;
    size_t nruns = mode == MODE_FLAT ? 1 : s->nruns;
    size_t before;
    int r;

    for (size_t i = 0; i < nruns; i++) {
        for (size_t k = 0; k < runs[i].len;) {
            size_t n = chunk && runs[i].len - k > chunk ? chunk : runs[i].len - k;
            const uint8_t *data = s->data + runs[i].off + k;
            uint64_t index = runs[i].index + k;

            if (fused) {
                before = dv->calls;
                r = tb_decoder_push(dv->d, dv->p, data, n, index, on_elem, dv);
                if (!take(dv, "tb_decoder_push", r, dv->calls, before))
                    return;
            } else {
                before = dv->pkts;
                r = tb_parser_push(dv->p, data, n, index, on_pkt, dv);
                if (!take(dv, "tb_parser_push", r, dv->pkts, before))
                    return;
            }
            k += n;
        }
    }
    drive_finish(dv, fused);
}

/* The finish calls of either path, after the last push. */
static void drive_finish(drive *dv, bool fused)
{
    size_t before;
    int r;

    if (fused) {
        before = dv->calls;
        dv->cur = AT_PARSER_FINISH;
        r = tb_decoder_push_finish(dv->d, dv->p, on_elem, dv);
        take(dv, "tb_decoder_push_finish", r, dv->calls, before);
        return;
    }
    before = dv->pkts;
    dv->cur = AT_PARSER_FINISH;
    r = tb_parser_finish(dv->p, on_pkt, dv);
    if (!take(dv, "tb_parser_finish", r, dv->pkts, before))
        return;
    before = dv->calls;
    dv->cur = AT_DECODER_FINISH;
    r = tb_decoder_finish(dv->d, on_elem, dv);
    take(dv, "tb_decoder_finish", r, dv->calls, before);
}

/* A whole decode of good or corrupt trace: no negative return (errors
 * in the trace are elements, decoder.h), END last and only there. */
static void decode(const source *s, enum mode mode, size_t chunk, bool fused, elist *out)
{
    drive dv;

    drive_open(&dv, s, 0);
    drive_run(&dv, s, mode, chunk, fused);
    cr_assert_eq(dv.first_neg, 0, "%s (%s, chunk %zu): %s", s->name,
                 fused ? "fused" : "packet path", chunk, tb_err_str(dv.first_neg));
    cr_assert_eq(dv.dec_neg, 0);
    cr_assert_eq(dv.calls, dv.out.n);
    cr_assert_gt(dv.out.n, 0u);
    for (size_t i = 0; i + 1 < dv.out.n; i++)
        cr_assert_neq(dv.out.v[i].kind, TB_ELEM_END, "%s: END at %zu of %zu", s->name, i,
                      dv.out.n);
    cr_assert_eq(dv.out.v[dv.out.n - 1].kind, TB_ELEM_END, "%s: no END last", s->name);
    *out = dv.out;
    dv.out = (elist){0};
    drive_close(&dv);
}

static uint64_t insns_of(const elist *l)
{
    uint64_t n = 0;

    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].kind == TB_ELEM_INSN_RANGE)
            n += l->v[i].count;
    return n;
}

/* ------------------------------------------------------------------ */
/* 1. Both paths, every chunking. */

static const size_t chunks[] = {1, 2, 3, 7, 64, 4096, 0};
#define NCHUNKS (sizeof chunks / sizeof chunks[0])

typedef struct totals {
    size_t sources, elements, insns, compared;
} totals;

/* The packet path once per cut of the stream (runs as the deformatter
 * gives them; the flat stream); the fused path in every chunk size
 * against it.  Totals count the packet path's list over the runs. */
static void both_paths(const source *s, totals *t)
{
    static const enum mode modes[] = {MODE_RUNS, MODE_FLAT};
    char what[256];

    for (size_t m = 0; m < 2; m++) {
        elist ref;

        decode(s, modes[m], 0, false, &ref);
        for (size_t c = 0; c < NCHUNKS; c++) {
            elist got;

            snprintf(what, sizeof what, "%s (%s, fused, chunk %zu)", s->name,
                     modes[m] == MODE_RUNS ? "deformatter runs" : "flat stream", chunks[c]);
            decode(s, modes[m], chunks[c], true, &got);
            expect_same(what, &ref, &got, 0);
            t->compared += got.n;
            elist_free(&got);
        }
        if (modes[m] == MODE_RUNS) {
            t->elements += ref.n;
            t->insns += insns_of(&ref);
        }
        elist_free(&ref);
    }
    t->sources++;
}


/* The trace IDs to decode in a vector: -1 (its only source) for a
 * single-source vector, else each source's ID (a two-source vector). */
static size_t vector_ids(const char *dir, int *ids, size_t max)
{
    tb_snapshot snap;
    char err[512];
    size_t n = 0;

    cr_assert_eq(tb_snapshot_load(&snap, dir, err, sizeof err), 0, "%s: %s", dir, err);
    if (snap.n_sources == 1) {
        ids[n++] = -1;
    } else {
        for (size_t k = 0; k < snap.n_sources && n < max; k++) {
            tb_config cfg;

            cr_assert_eq(tb_snapshot_source_config(&snap, &snap.sources[k], &cfg, err,
                                                   sizeof err), 0, "%s: %s", dir, err);
            ids[n++] = cfg.trace_id;
        }
    }
    tb_snapshot_fini(&snap);
    return n;
}


Test(decoder_fused, every_vector_every_chunking)
{
    char **names, dir[1400];
    size_t n = tb_test_list_vectors(&names), etm = 0, ptm = 0;
    totals t = {0};

    for (size_t i = 0; i < n; i++) {
        int ids[8];
        size_t nid;

        vector_dir(dir, sizeof dir, names[i]);
        nid = vector_ids(dir, ids, 8);
        for (size_t k = 0; k < nid; k++) {
            source s;

            source_load(&s, dir, ids[k], names[i]);
            etm += s.cfg.protocol == TB_PROTO_ETMV3;
            ptm += s.cfg.protocol == TB_PROTO_PTM;
            both_paths(&s, &t);
            source_fini(&s);
        }
    }
    cr_log_info("vectors: %zu (%zu ETMv3, %zu PTM), %zu elements, %zu instructions; "
                "%zu fused elements compared",
                t.sources, etm, ptm, t.elements, t.insns, t.compared);
    /* Both protocols present; the flat stream decodes to as many
     * elements as the deformatter's runs, so 2 cuts x 7 chunkings. */
    cr_assert_gt(etm, 0u);
    cr_assert_gt(ptm, 0u);
    cr_assert_eq(t.compared, 14 * t.elements);
    /* The committed set gave 59 vectors, 13774 elements and 60960
     * instructions; the set may grow, never shrink. */
    cr_assert_geq(t.sources, 59u);
    cr_assert_geq(t.elements, 13774u);
    cr_assert_geq(t.insns, 60960u);
    tb_test_free_names(names, n);
}

/* A real capture's source: exact element and instruction totals (the
 * same through both paths, since the lists are equal). */
/* Loads reference snapshot snap, source id (-1: its only one), named
 * for messages with suffix appended. */
static void real_load(source *s, const char *ref, const char *snap, int id,
                      const char *suffix)
{
    char dir[1100], name[200];

    snprintf(dir, sizeof dir, "%s/opencsd-snapshots/%s", ref, snap);
    if (id < 0)
        snprintf(name, sizeof name, "%s%s", snap, suffix);
    else
        snprintf(name, sizeof name, "%s 0x%x%s", snap, id, suffix);
    source_load(s, dir, id, name);
}

static void real_source(const char *snap, int id, size_t want_elements, uint64_t want_insns)
{
    const char *ref = tb_test_reference_dir("fused decoder on real traces");
    totals t = {0};
    source s;

    if (!ref)
        return;
    real_load(&s, ref, snap, id, "");
    both_paths(&s, &t);
    cr_log_info("%s: %zu elements, %zu instructions, %zu fused elements compared", s.name,
                t.elements, t.insns, t.compared);
    cr_assert_eq(t.elements, want_elements, "%s: %zu elements", s.name, t.elements);
    cr_assert_eq(t.insns, want_insns, "%s: %zu instructions", s.name, t.insns);
    cr_assert_eq(t.compared, 14 * t.elements);
    source_fini(&s);
}

/* Instruction totals: TC2's equal Arm DS-5's dumps (TC2/ds5-dumps);
 * Snowball's and trace_cov_a15's equal the sum of num_i over OpenCSD
 * 1.3.3's INSTR_RANGE elements (trc_pkt_lister -decode).  TC2 0x14
 * carries no trace. */
Test(decoder_fused, tc2_etmv3_0x10) { real_source("TC2", 0x10, 929, 7205); }
Test(decoder_fused, tc2_etmv3_0x11) { real_source("TC2", 0x11, 923, 7471); }
Test(decoder_fused, tc2_etmv3_0x12) { real_source("TC2", 0x12, 229, 1947); }
Test(decoder_fused, tc2_ptm_0x13) { real_source("TC2", 0x13, 1779, 9548); }
Test(decoder_fused, snowball_ptm_0x10) { real_source("Snowball", 0x10, 953, 3968); }
Test(decoder_fused, snowball_ptm_0x11) { real_source("Snowball", 0x11, 746, 3577); }
Test(decoder_fused, trace_cov_a15) { real_source("trace_cov_a15", -1, 27, 57); }

/* ------------------------------------------------------------------ */
/* 2. Corrupt input: flipped bytes and truncations.  Errors in the trace
 * are elements (decoder.h), so both paths must still agree, return no
 * negative, and end with END. */

static bool has_error_element(const elist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const tb_element *e = &l->v[i];

        if ((e->kind == TB_ELEM_NO_SYNC && e->reason != TB_GAP_INIT) ||
            e->kind == TB_ELEM_ADDR_NACC || e->kind == TB_ELEM_ADDR_UNKNOWN || e->err)
            return true;
    }
    return false;
}

static bool lists_equal(const elist *a, const elist *b)
{
    char diff[160];

    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (elem_differs(&a->v[i], &b->v[i], diff, sizeof diff))
            return false;
    return true;
}

typedef struct corrupt_stats {
    size_t mutants, with_error, changed;
    size_t stop_budget; /* mutants with NACC / unknown-address atoms still to stop on */
    size_t stopped;     /* mutants the stop cases ran on */
} corrupt_stats;

static size_t stop_cases(const source *s, size_t step);

static bool has_lost_atoms(const elist *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].kind == TB_ELEM_ADDR_NACC || l->v[i].kind == TB_ELEM_ADDR_UNKNOWN)
            return true;
    return false;
}

/* One mutant: the packet path on the whole stream, the fused path in
 * every chunk size.  Counts mutants that show an error element and
 * mutants whose elements differ from the clean trace's.  The first
 * mutants whose atoms fall on missing code or an unknown address (the
 * ETMv3 walker's one-atom path) also get the stop cases of part 3. */
static void mutant(const source *base, const elist *clean, const uint8_t *data, size_t len,
                   const char *desc, corrupt_stats *st)
{
    char what[400];
    source s;
    elist ref;

    source_from_bytes(&s, base, data, len, desc);
    decode(&s, MODE_FLAT, 0, false, &ref);
    for (size_t c = 0; c < NCHUNKS; c++) {
        elist got;

        snprintf(what, sizeof what, "%s (fused, chunk %zu)", desc, chunks[c]);
        decode(&s, MODE_FLAT, chunks[c], true, &got);
        expect_same(what, &ref, &got, 0);
        elist_free(&got);
    }
    st->mutants++;
    st->with_error += has_error_element(&ref);
    st->changed += !lists_equal(&ref, clean);
    if (st->stop_budget && has_lost_atoms(&ref)) {
        st->stop_budget--;
        st->stopped++;
        stop_cases(&s, 1);
    }
    elist_free(&ref);
    source_fini(&s);
}

/* Deterministic mutants of the source's bytes (after the deformatter,
 * so every change hits the protocol, not the frames). */
static void corrupt_source(const source *base, corrupt_stats *st)
{
    static const uint8_t flips[] = {0xFF, 0x80, 0x01, 0x40, 0x08};
    const char *vec = base->name;
    char desc[300];
    elist clean;
    uint8_t *buf;
    uint64_t rng = 0x5EEDF00Dull;
    size_t len = base->len;

    decode(base, MODE_FLAT, 0, false, &clean);
    buf = malloc(len);
    cr_assert_not_null(buf);

    /* One byte changed at 12 spread positions, 5 patterns each. */
    for (size_t k = 1; k <= 12; k++) {
        size_t pos = k * len / 13;

        for (size_t f = 0; f < sizeof flips; f++) {
            memcpy(buf, base->data, len);
            buf[pos] ^= flips[f];
            snprintf(desc, sizeof desc, "%s: byte %zu ^= 0x%02X", vec, pos, flips[f]);
            mutant(base, &clean, buf, len, desc, st);
        }
    }
    /* Cut short at 9 places, and at one byte before the end. */
    for (size_t k = 1; k <= 10; k++) {
        size_t cut = k < 10 ? k * len / 10 : len - 1;

        snprintf(desc, sizeof desc, "%s: truncated to %zu of %zu bytes", vec, cut, len);
        mutant(base, &clean, base->data, cut, desc, st);
    }
    /* 48 mutants with 1..6 bytes set to pseudo-random values. */
    for (size_t k = 0; k < 48; k++) {
        size_t m = 1 + tb_test_rand(&rng) % 6;

        memcpy(buf, base->data, len);
        for (size_t j = 0; j < m; j++)
            buf[tb_test_rand(&rng) % len] = (uint8_t)tb_test_rand(&rng);
        snprintf(desc, sizeof desc, "%s: random mutant %zu (%zu bytes)", vec, k, m);
        mutant(base, &clean, buf, len, desc, st);
    }
    free(buf);
    elist_free(&clean);
    cr_log_info("%s: %zu mutants, %zu with error elements, %zu changed, %zu also stopped",
                vec, st->mutants, st->with_error, st->changed, st->stopped);
    /* The mutations reach the decoder: nearly all change the elements. */
    cr_assert_gt(st->changed, st->mutants / 2, "%zu of %zu mutants changed the elements",
                 st->changed, st->mutants);
    cr_assert_gt(st->with_error, 0u);
}

static void corrupt_vector(const char *vec, corrupt_stats *st)
{
    char dir[1400];
    source base;

    vector_dir(dir, sizeof dir, vec);
    source_load(&base, dir, -1, vec);
    corrupt_source(&base, st);
    source_fini(&base);
}

Test(decoder_fused, corrupt_etmv3_cycle_accurate)
{
    corrupt_stats st = {.stop_budget = 4};

    corrupt_vector("cond_arm-etmv33-ca", &st);
    cr_assert_gt(st.stopped, 0u);
}

Test(decoder_fused, corrupt_etmv3)
{
    corrupt_stats st = {.stop_budget = 4};

    corrupt_vector("irq_fiq-etmv3", &st);
    cr_assert_gt(st.stopped, 0u);
}

Test(decoder_fused, corrupt_ptm)
{
    corrupt_stats st = {.stop_budget = 2};

    corrupt_vector("irq_fiq-ptm-ca-ts", &st);
}

/* Real silicon: TC2's ETMv3 0x10 and PTM 0x13 mutated the same way. */
static void corrupt_real(int id)
{
    const char *ref = tb_test_reference_dir("fused decoder on corrupt real trace");
    char dir[1100], name[64];
    corrupt_stats st = {0};
    source base;

    if (!ref)
        return;
    snprintf(dir, sizeof dir, "%s/opencsd-snapshots/TC2", ref);
    snprintf(name, sizeof name, "TC2 0x%x", id);
    source_load(&base, dir, id, name);
    corrupt_source(&base, &st);
    source_fini(&base);
}

Test(decoder_fused, corrupt_tc2_etmv3_0x10) { corrupt_real(0x10); }
Test(decoder_fused, corrupt_tc2_ptm_0x13) { corrupt_real(0x13); }

/* ------------------------------------------------------------------ */
/* 3. A callback that stops.  decoder.h promises: the call during which
 * the element callback returned non-zero returns TB_ERR_STOPPED (the
 * packet path: tb_decoder_packet, then the parser whose packet callback
 * stopped, types.h tb_packet_cb); the producer stops, so the callback is
 * not called again; and tb_parser_reset() + tb_decoder_reset() forget
 * all state, as after construction.  Nothing is promised about going on
 * without a reset, so that is not tested.  The elements delivered up to
 * the stop are the first k of the full list on both paths. */

static void rearm(drive *dv, size_t stop_at)
{
    dv->out.n = 0;
    dv->stop_at = stop_at;
    dv->calls = dv->pkts = 0;
    dv->dec_neg = dv->first_neg = 0;
    dv->calls_at_neg = 0;
    dv->late_call = false;
    tb_parser_reset(dv->p);
    tb_decoder_reset(dv->d);
}

/* Stops at element k (1-based) of s's flat stream in pieces of `chunk`,
 * then decodes the whole again after a reset. */
static void stop_once(drive *dv, const source *s, const elist *ref, size_t k, size_t chunk,
                      bool fused, bool in_decoder_finish)
{
    const char *path = fused ? "fused" : "packet path";
    char what[300];

    rearm(dv, k);
    drive_run(dv, s, MODE_FLAT, chunk, fused);
    cr_assert_eq(dv->first_neg, TB_ERR_STOPPED, "%s %s chunk %zu, stop at %zu: returned %d",
                 s->name, path, chunk, k, dv->first_neg);
    cr_assert_eq(dv->calls_at_neg, k, "%s %s chunk %zu: stop at %zu reported after %zu",
                 s->name, path, chunk, k, dv->calls_at_neg);
    cr_assert(!dv->late_call, "%s %s chunk %zu: callback called after stop at %zu", s->name,
              path, chunk, k);
    cr_assert_eq(dv->calls, k);
    /* Packet path: tb_decoder_packet() said STOPPED (and the parser
     * passed it on), unless the stop came in tb_decoder_finish(). */
    if (!fused)
        cr_assert_eq(dv->dec_neg, in_decoder_finish ? 0 : TB_ERR_STOPPED,
                     "%s packet path chunk %zu, stop at %zu: tb_decoder_packet gave %d",
                     s->name, chunk, k, dv->dec_neg);
    snprintf(what, sizeof what, "%s %s chunk %zu, stopped at %zu", s->name, path, chunk, k);
    cr_assert_eq(dv->out.n, k);
    expect_same(what, ref, &dv->out, k);

    rearm(dv, 0);
    drive_run(dv, s, MODE_FLAT, chunk, fused);
    cr_assert_eq(dv->first_neg, 0, "%s after reset: %s", what, tb_err_str(dv->first_neg));
    snprintf(what, sizeof what, "%s %s chunk %zu, after a stop at %zu and reset", s->name,
             path, chunk, k);
    expect_same(what, ref, &dv->out, 0);
}

/* Stops at every step-th element, every element that is not a range,
 * and the last (END), on both paths and in three chunkings.  Returns
 * how many of the stops fell in the middle of a run of P-headers /
 * atoms: the element emitted while the packet path decoded an atom
 * packet with atom packets on both sides. */
static size_t stop_cases(const source *s, size_t step)
{
    static const size_t stop_chunks[] = {0, 1, 7};
    drive ref, pk, fu;
    size_t midrun = 0, tried = 0;

    drive_open(&ref, s, 0);
    ref.record = true;
    drive_run(&ref, s, MODE_FLAT, 0, false);
    cr_assert_eq(ref.first_neg, 0);
    cr_assert_eq(ref.nat, ref.out.n);
    drive_open(&pk, s, 0);
    drive_open(&fu, s, 0);
    for (size_t k = 1; k <= ref.out.n; k++) {
        const size_t o = ref.at[k - 1];

        /* Every step-th element, the last, and every one that is not a
         * range (NACC / unknown-address atoms take the walker's slow
         * path). */
        if ((k - 1) % step && k != ref.out.n && ref.out.v[k - 1].kind == TB_ELEM_INSN_RANGE)
            continue;

        for (size_t c = 0; c < sizeof stop_chunks / sizeof stop_chunks[0]; c++) {
            stop_once(&pk, s, &ref.out, k, stop_chunks[c], false, o == AT_DECODER_FINISH);
            stop_once(&fu, s, &ref.out, k, stop_chunks[c], true, o == AT_DECODER_FINISH);
        }
        if (o < ref.npk && o > 0 && o + 1 < ref.npk && ref.pk[o] == TB_PKT_ATOM &&
            ref.pk[o - 1] == TB_PKT_ATOM && ref.pk[o + 1] == TB_PKT_ATOM)
            midrun++;
        tried++;
    }
    cr_log_info("%s: %zu stops x 3 chunkings x 2 paths, %zu inside a run of atom packets "
                "(of %zu elements)",
                s->name, tried, midrun, ref.out.n);
    drive_close(&ref);
    drive_close(&pk);
    drive_close(&fu);
    return midrun;
}

static size_t stop_vector(const char *vec, size_t step)
{
    char dir[1400];
    source s;
    size_t midrun;

    vector_dir(dir, sizeof dir, vec);
    source_load(&s, dir, -1, vec);
    midrun = stop_cases(&s, step);
    source_fini(&s);
    return midrun;
}

/* Every element of a cycle-accurate ETMv3 vector: many stops fall inside
 * a batch of P-headers (the fused path's run_atoms). */
Test(decoder_fused, stop_every_element_etmv3_cycle_accurate)
{
    cr_assert_gt(stop_vector("cond_arm-etmv33-ca", 1), 0u);
}

Test(decoder_fused, stop_every_element_etmv3)
{
    cr_assert_gt(stop_vector("cond_arm-etmv3", 1), 0u);
}

Test(decoder_fused, stop_every_element_ptm)
{
    stop_vector("irq_fiq-ptm-ca-ts", 1);
}

Test(decoder_fused, stop_tc2_etmv3_0x10)
{
    const char *ref = tb_test_reference_dir("fused decoder stop on real trace");
    char dir[1100];
    source s;

    if (!ref)
        return;
    snprintf(dir, sizeof dir, "%s/opencsd-snapshots/TC2", ref);
    source_load(&s, dir, 0x10, "TC2 0x10");
    cr_assert_gt(stop_cases(&s, 7), 0u);
    source_fini(&s);
}


/* ------------------------------------------------------------------ */
/* 4. Spans (types.h tb_span_map): bytes joined from several segments,
 * each with its own stream index.  parser.h and decoder.h promise that
 * a span gives exactly the packets and elements of pushing each segment
 * on its own at its index; the per-segment path is the oracle. */

/* Spans as a list: span k is segments first[k] .. first[k+1] (or nseg),
 * its bytes data[start[k] ..); rel[] are segment ends relative to their
 * span's start (the map's end[]), index[] their first bytes' indices. */
typedef struct spanset {
    uint8_t *data;
    size_t len, cap;
    size_t *rel;
    uint64_t *index;
    size_t nseg, capseg;
    size_t *first, *start;
    size_t nspan, capspan;
    bool open;
} spanset;

static void ss_seg(spanset *ss, const uint8_t *data, size_t len, uint64_t index)
{
    if (!ss->open) {
        if (ss->nspan == ss->capspan) {
            ss->capspan = ss->capspan ? 2 * ss->capspan : 64;
            ss->first = realloc(ss->first, ss->capspan * sizeof *ss->first);
            ss->start = realloc(ss->start, ss->capspan * sizeof *ss->start);
            cr_assert(ss->first && ss->start);
        }
        ss->first[ss->nspan] = ss->nseg;
        ss->start[ss->nspan] = ss->len;
        ss->open = true;
    }
    if (ss->len + len > ss->cap) {
        ss->cap = (ss->len + len) * 2;
        ss->data = realloc(ss->data, ss->cap);
        cr_assert_not_null(ss->data);
    }
    if (ss->nseg == ss->capseg) {
        ss->capseg = ss->capseg ? 2 * ss->capseg : 256;
        ss->rel = realloc(ss->rel, ss->capseg * sizeof *ss->rel);
        ss->index = realloc(ss->index, ss->capseg * sizeof *ss->index);
        cr_assert(ss->rel && ss->index);
    }
    memcpy(ss->data + ss->len, data, len);
    ss->len += len;
    ss->rel[ss->nseg] = ss->len - ss->start[ss->nspan];
    ss->index[ss->nseg++] = index;
}

static void ss_close(spanset *ss)
{
    if (ss->open)
        ss->nspan++;
    ss->open = false;
}

static void ss_free(spanset *ss)
{
    free(ss->data);
    free(ss->rel);
    free(ss->index);
    free(ss->first);
    free(ss->start);
    memset(ss, 0, sizeof *ss);
}

/* Span k: its bytes, length and map. */
static const uint8_t *ss_span(const spanset *ss, size_t k, size_t *len, tb_span_map *m)
{
    const size_t f = ss->first[k], e = k + 1 < ss->nspan ? ss->first[k + 1] : ss->nseg;

    *m = (tb_span_map){e - f, ss->rel + f, ss->index + f};
    *len = ss->rel[e - 1];
    return ss->data + ss->start[k];
}

/* Segment s of span k: bytes and length (index: ss->index[s]). */
static const uint8_t *ss_segment(const spanset *ss, size_t k, size_t s, size_t *len)
{
    const size_t from = s > ss->first[k] ? ss->rel[s - 1] : 0;

    *len = ss->rel[s] - from;
    return ss->data + ss->start[k] + from;
}

static size_t ss_span_end(const spanset *ss, size_t k)
{
    return k + 1 < ss->nspan ? ss->first[k + 1] : ss->nseg;
}

/* A flat stream cut into segments of 1..40 bytes whose indices jump
 * forward by 0..31 (as frames' runs do, protocol-notes 5.1), grouped
 * into spans of 1..max_segs segments and at most 4096 bytes. */
static void ss_random(spanset *ss, const uint8_t *data, size_t len, uint64_t seed,
                      size_t max_segs)
{
    uint64_t index = 1000 + tb_test_rand(&seed) % 5000;
    size_t p = 0, in_span = 0, span_bytes = 0, want = 0;

    memset(ss, 0, sizeof *ss);
    while (p < len) {
        size_t n = 1 + (size_t)(tb_test_rand(&seed) % 40);

        if (n > len - p)
            n = len - p;
        if (in_span == want || span_bytes + n > 4096) {
            ss_close(ss);
            in_span = span_bytes = 0;
            want = 1 + (size_t)(tb_test_rand(&seed) % max_segs);
        }
        ss_seg(ss, data + p, n, index);
        in_span++;
        span_bytes += n;
        index += n + tb_test_rand(&seed) % 32;
        p += n;
    }
    ss_close(ss);
}

/* The spans of tb_stream_source_spans() on s's snapshot. */
static int ss_stream_cb(void *ctx, const uint8_t *data, size_t len, const tb_span_map *m)
{
    spanset *ss = ctx;
    size_t from = 0;

    cr_assert(m && m->n && m->end[m->n - 1] == len, "stream span map");
    for (size_t i = 0; i < m->n; i++) {
        ss_seg(ss, data + from, m->end[i] - from, m->index[i]);
        from = m->end[i];
    }
    ss_close(ss);
    return 0;
}

static tb_snapshot *open_snap(const source *s, const tb_snap_source **src)
{
    static tb_snapshot snap; /* one at a time; freed by close_snap */
    char err[512];

    cr_assert_eq(tb_snapshot_load(&snap, s->dir, err, sizeof err), 0, "%s: %s", s->name, err);
    *src = tb_stream_find_source(&snap, s->id, err, sizeof err);
    cr_assert_not_null(*src, "%s: %s", s->name, err);
    return &snap;
}

static void ss_from_stream(spanset *ss, const source *s)
{
    const tb_snap_source *src;
    tb_snapshot *snap = open_snap(s, &src);
    char err[512];

    memset(ss, 0, sizeof *ss);
    cr_assert_eq(tb_stream_source_spans(snap, src, NULL, ss_stream_cb, ss, err, sizeof err),
                 0, "%s: %s", s->name, err);
    tb_snapshot_fini(snap);
    cr_assert_eq(ss->len, s->len, "%s: spans hold %zu bytes, runs %zu", s->name, ss->len,
                 s->len);
}

/* ---- packets ---- */

typedef struct plist {
    tb_packet *v;
    size_t n, cap;
    size_t calls;
} plist;

static int on_collect_pkt(void *ctx, const tb_packet *pkt)
{
    plist *l = ctx;

    l->calls++;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        cr_assert_not_null(l->v);
    }
    l->v[l->n++] = *pkt;
    return 0;
}

/* The first field (types.h order) in which two packets differ. */
static bool pkt_differs(const tb_packet *a, const tb_packet *b, char *buf, size_t len)
{
#define CMP_P(f)                                                                          \
    if (a->f != b->f) {                                                                   \
        snprintf(buf, len, #f " 0x%llx vs 0x%llx", (unsigned long long)a->f,             \
                 (unsigned long long)b->f);                                               \
        return true;                                                                      \
    }
    CMP_P(kind) CMP_P(protocol) CMP_P(index) CMP_P(size) CMP_P(count) CMP_P(err)
    CMP_P(atom_count) CMP_P(w_count) CMP_P(seq_len) CMP_P(phdr_format) CMP_P(addr)
    CMP_P(addr_bits) CMP_P(isa) CMP_P(isa_changed) CMP_P(addr_known) CMP_P(has_exc)
    CMP_P(exc_cancel) CMP_P(exc_num) CMP_P(exc_resume) CMP_P(exc_bytes)
    CMP_P(legacy_exc) CMP_P(ns) CMP_P(hyp) CMP_P(altisa) CMP_P(ns_valid)
    CMP_P(hyp_valid) CMP_P(has_cc) CMP_P(cc) CMP_P(ts) CMP_P(ts_bits)
    CMP_P(has_ctxid) CMP_P(context_id) CMP_P(vmid) CMP_P(reason) CMP_P(jazelle)
    CMP_P(lsip) CMP_P(lsip_addr) CMP_P(lsip_isa) CMP_P(has_data_addr)
    CMP_P(data_addr) CMP_P(data_addr_bits) CMP_P(data_be) CMP_P(data_size)
    CMP_P(data_value) CMP_P(data_tag)
#undef CMP_P
    if (a->size <= TB_PKT_MAX_BYTES && memcmp(a->bytes, b->bytes, a->size)) {
        snprintf(buf, len, "bytes");
        return true;
    }
    if (a->seq_len <= sizeof a->seq && memcmp(a->seq, b->seq, a->seq_len)) {
        snprintf(buf, len, "seq");
        return true;
    }
    return false;
}

static void expect_same_packets(const char *what, const plist *want, const plist *got)
{
    char diff[160];

    cr_assert_eq(got->n, want->n, "%s: %zu packets from spans, %zu per segment", what,
                 got->n, want->n);
    for (size_t i = 0; i < want->n; i++)
        cr_assert(!pkt_differs(&got->v[i], &want->v[i], diff, sizeof diff),
                  "%s: packet %zu (%s at index %llu) differs: %s (span vs per segment)", what,
                  i, tb_pkt_kind_name(want->v[i].kind), (unsigned long long)want->v[i].index,
                  diff);
}

/* Parses ss span by span (tb_parser_push_span) or segment by segment
 * (tb_parser_push at each segment's index); each call's return is the
 * packets it delivered. */
static void parse_ss(const tb_config *cfg, const spanset *ss, bool spans, plist *out)
{
    tb_parser *p = tb_parser_new(cfg);
    size_t before;
    int r;

    cr_assert_not_null(p);
    memset(out, 0, sizeof *out);
    for (size_t k = 0; k < ss->nspan; k++) {
        if (spans) {
            tb_span_map m;
            size_t len;
            const uint8_t *d = ss_span(ss, k, &len, &m);

            before = out->n;
            r = tb_parser_push_span(p, d, len, &m, on_collect_pkt, out);
            cr_assert_eq(r, (int)(out->n - before), "tb_parser_push_span: %d for %zu", r,
                         out->n - before);
            continue;
        }
        for (size_t s = ss->first[k]; s < ss_span_end(ss, k); s++) {
            size_t len;
            const uint8_t *d = ss_segment(ss, k, s, &len);

            before = out->n;
            r = tb_parser_push(p, d, len, ss->index[s], on_collect_pkt, out);
            cr_assert_eq(r, (int)(out->n - before), "tb_parser_push: %d for %zu", r,
                         out->n - before);
        }
    }
    before = out->n;
    r = tb_parser_finish(p, on_collect_pkt, out);
    cr_assert_eq(r, (int)(out->n - before), "tb_parser_finish: %d", r);
    tb_parser_free(p);
}

/* ---- elements ---- */

enum how { HOW_PACKET, HOW_FUSED, HOW_SPAN };

/* drive_run() over a spanset: the packet path or tb_decoder_push per
 * segment, or tb_decoder_push_span per span. */
static void drive_ss(drive *dv, const spanset *ss, enum how how)
{
    size_t before;
    int r;

    for (size_t k = 0; k < ss->nspan; k++) {
        if (how == HOW_SPAN) {
            tb_span_map m;
            size_t len;
            const uint8_t *d = ss_span(ss, k, &len, &m);

            before = dv->calls;
            r = tb_decoder_push_span(dv->d, dv->p, d, len, &m, on_elem, dv);
            if (!take(dv, "tb_decoder_push_span", r, dv->calls, before))
                return;
            continue;
        }
        for (size_t s = ss->first[k]; s < ss_span_end(ss, k); s++) {
            size_t len;
            const uint8_t *d = ss_segment(ss, k, s, &len);

            if (how == HOW_FUSED) {
                before = dv->calls;
                r = tb_decoder_push(dv->d, dv->p, d, len, ss->index[s], on_elem, dv);
                if (!take(dv, "tb_decoder_push", r, dv->calls, before))
                    return;
            } else {
                before = dv->pkts;
                r = tb_parser_push(dv->p, d, len, ss->index[s], on_pkt, dv);
                if (!take(dv, "tb_parser_push", r, dv->pkts, before))
                    return;
            }
        }
    }
    drive_finish(dv, how != HOW_PACKET);
}

static void decode_ss(const source *s, const spanset *ss, enum how how, elist *out)
{
    drive dv;

    drive_open(&dv, s, 0);
    drive_ss(&dv, ss, how);
    cr_assert_eq(dv.first_neg, 0, "%s: %s", s->name, tb_err_str(dv.first_neg));
    cr_assert_gt(dv.out.n, 0u);
    cr_assert_eq(dv.out.v[dv.out.n - 1].kind, TB_ELEM_END, "%s: no END last", s->name);
    *out = dv.out;
    dv.out = (elist){0};
    drive_close(&dv);
}

typedef struct span_totals {
    size_t sources, bytes, spans, segs, packets, elements;
} span_totals;

/* Packets and elements of ss: spans equal segments. */
static void spans_vs_segments(const source *s, const spanset *ss, const char *cut,
                              span_totals *t)
{
    char what[300];
    plist a, b;
    elist ea, eb;

    snprintf(what, sizeof what, "%s (%s: %zu spans, %zu segments)", s->name, cut, ss->nspan,
             ss->nseg);
    parse_ss(&s->cfg, ss, false, &a);
    parse_ss(&s->cfg, ss, true, &b);
    expect_same_packets(what, &a, &b);
    decode_ss(s, ss, HOW_FUSED, &ea);
    decode_ss(s, ss, HOW_SPAN, &eb);
    expect_same(what, &ea, &eb, 0);
    t->bytes += ss->len;
    t->spans += ss->nspan;
    t->segs += ss->nseg;
    t->packets += a.n;
    t->elements += ea.n;
    free(a.v);
    free(b.v);
    elist_free(&ea);
    elist_free(&eb);
}

Test(decoder_fused, spans_every_vector)
{
    char **names, dir[1400];
    size_t n = tb_test_list_vectors(&names);
    span_totals t = {0};

    for (size_t i = 0; i < n; i++) {
        int ids[8];
        size_t nid;

        vector_dir(dir, sizeof dir, names[i]);
        nid = vector_ids(dir, ids, 8);
        for (size_t k = 0; k < nid; k++) {
            source s;
            spanset ss;

            source_load(&s, dir, ids[k], names[i]);
            /* Short spans (1..4 segments) and long ones (up to 4096 bytes). */
            ss_random(&ss, s.data, s.len, 0xC0FFEE + i, 4);
            spans_vs_segments(&s, &ss, "random cut, short spans", &t);
            ss_free(&ss);
            ss_random(&ss, s.data, s.len, 0xBEEF + i, 400);
            spans_vs_segments(&s, &ss, "random cut, long spans", &t);
            ss_free(&ss);
            t.sources++;
            source_fini(&s);
        }
    }
    cr_log_info("span vectors: %zu sources x 2 cuts, %zu bytes, %zu spans, %zu segments, "
                "%zu packets and %zu elements compared",
                t.sources, t.bytes, t.spans, t.segs, t.packets, t.elements);
    cr_assert_geq(t.sources, 59u);
    /* Every packet and element of both cuts (test 1's totals, twice). */
    cr_assert_geq(t.elements, 2 * 13774u);
    tb_test_free_names(names, n);
}

/* Real sources: (1) the deformatter's spans (tb_deformatter_push_spans,
 * buffer pushed in several chunkings, straight into
 * tb_decoder_push_span) and tb_stream_source_spans give the packet
 * path's elements over the deformatter's runs; (2) the stream's spans
 * parse and decode as their segments do. */
typedef struct span_drive {
    drive *dv;
    uint8_t id;
    bool failed;
} span_drive;

static int span_to_decoder(void *ctx, uint8_t id, const uint8_t *data, size_t len,
                           const tb_span_map *m)
{
    span_drive *sd = ctx;
    size_t before = sd->dv->calls;
    int r;

    cr_assert_eq(id, sd->id);
    r = tb_decoder_push_span(sd->dv->d, sd->dv->p, data, len, m, on_elem, sd->dv);
    if (!take(sd->dv, "tb_decoder_push_span", r, sd->dv->calls, before)) {
        sd->failed = true;
        return 1;
    }
    return 0;
}

static int stream_to_decoder(void *ctx, const uint8_t *data, size_t len, const tb_span_map *m)
{
    span_drive *sd = ctx;

    return span_to_decoder(ctx, sd->id, data, len, m);
}

static void real_spans(const char *snap, int id)
{
    static const size_t dchunks[] = {1, 7, 64, 4096, 0};
    const char *refdir = tb_test_reference_dir("span path on real traces");
    char what[300];
    span_totals t = {0};
    size_t compared = 0;
    source s;
    elist ref;
    spanset ss;

    if (!refdir)
        return;
    real_load(&s, refdir, snap, id, " (spans)");
    decode(&s, MODE_RUNS, 0, false, &ref);

    for (size_t c = 0; s.formatted && c < sizeof dchunks / sizeof dchunks[0]; c++) {
        tb_deformatter *dfm = tb_deformatter_new(s.frame_flags);
        const uint8_t tid = (uint8_t)s.cfg.trace_id;
        const size_t chunk = dchunks[c] ? dchunks[c] : s.rawlen;
        drive dv;
        span_drive sd = {&dv, tid, false};
        int rc = 0;

        cr_assert_not_null(dfm);
        cr_assert_eq(tb_deformatter_set_ids(dfm, &tid, 1), 0);
        drive_open(&dv, &s, 0);
        for (size_t p = 0; p < s.rawlen && rc == 0; p += chunk)
            rc = tb_deformatter_push_spans(dfm, s.raw + p,
                                           s.rawlen - p < chunk ? s.rawlen - p : chunk, p,
                                           span_to_decoder, &sd);
        cr_assert_eq(rc, 0, "%s: deformatter chunk %zu: %s", s.name, chunk, tb_err_str(rc));
        cr_assert_eq(tb_deformatter_finish_spans(dfm, span_to_decoder, &sd), 0);
        cr_assert(!sd.failed);
        drive_finish(&dv, true);
        cr_assert_eq(dv.first_neg, 0);
        snprintf(what, sizeof what, "%s (deformatter spans, buffer chunk %zu)", s.name, dchunks[c]);
        expect_same(what, &ref, &dv.out, 0);
        compared += dv.out.n;
        drive_close(&dv);
        tb_deformatter_free(dfm);
    }
    {
        static const size_t reads[] = {7, 0};

        for (size_t c = 0; c < 2; c++) {
            const tb_snap_source *src;
            tb_snapshot *sn = open_snap(&s, &src);
            tb_stream_opts o = {.size = sizeof o, .read_chunk = reads[c]};
            char err[512];
            drive dv;
            span_drive sd = {&dv, 0, false};

            drive_open(&dv, &s, 0);
            cr_assert_eq(tb_stream_source_spans(sn, src, &o, stream_to_decoder, &sd, err,
                                                sizeof err), 0, "%s: %s", s.name, err);
            tb_snapshot_fini(sn);
            cr_assert(!sd.failed);
            drive_finish(&dv, true);
            snprintf(what, sizeof what, "%s (tb_stream_source_spans, read %zu)", s.name,
                     reads[c]);
            expect_same(what, &ref, &dv.out, 0);
            compared += dv.out.n;
            drive_close(&dv);
        }
    }
    ss_from_stream(&ss, &s);
    spans_vs_segments(&s, &ss, "stream spans", &t);
    cr_log_info("%s: %zu elements, %zu compared from spans; stream: %zu spans, %zu segments, "
                "%zu packets", s.name, ref.n, compared, ss.nspan, ss.nseg, t.packets);
    {
        spanset cut;

        /* The same bytes cut anywhere, packets crossing segments. */
        ss_random(&cut, s.data, s.len, 0xABCD + (uint64_t)id, 60);
        spans_vs_segments(&s, &cut, "random cut", &t);
        ss_free(&cut);
    }
    cr_assert_eq(compared, (s.formatted ? 7 : 2) * ref.n);
    /* The stream joins the runs of a formatted buffer into spans. */
    if (s.formatted)
        cr_assert_lt(ss.nspan, ss.nseg);
    ss_free(&ss);
    elist_free(&ref);
    source_fini(&s);
}

Test(decoder_fused, spans_tc2_etmv3_0x10) { real_spans("TC2", 0x10); }
Test(decoder_fused, spans_tc2_etmv3_0x11) { real_spans("TC2", 0x11); }
Test(decoder_fused, spans_tc2_etmv3_0x12) { real_spans("TC2", 0x12); }
Test(decoder_fused, spans_tc2_ptm_0x13) { real_spans("TC2", 0x13); }
Test(decoder_fused, spans_snowball_ptm_0x10) { real_spans("Snowball", 0x10); }
Test(decoder_fused, spans_snowball_ptm_0x11) { real_spans("Snowball", 0x11); }
Test(decoder_fused, spans_trace_cov_a15) { real_spans("trace_cov_a15", -1); }

/* Maps that do not cover the span exactly (types.h tb_span_map) are
 * refused with TB_ERR_INVAL before any byte is taken: no callback, and
 * the stream pushed afterwards decodes as if they had never come. */
static int count_pkt(void *ctx, const tb_packet *pkt)
{
    (void)pkt;
    (*(size_t *)ctx)++;
    return 0;
}

static int count_elem(void *ctx, const tb_element *el)
{
    (void)el;
    (*(size_t *)ctx)++;
    return 0;
}

static void bad_maps(const char *vec, size_t *refused)
{
    static const size_t e_ok[2] = {4, 10}, e_flat[2] = {4, 4}, e_down[2] = {6, 3},
                        e_zero[2] = {0, 10}, e_short[2] = {4, 9}, e_long[2] = {4, 11};
    static const uint64_t idx[2] = {100, 200};
    const tb_span_map maps[] = {
        {0, e_ok, idx},      /* n == 0 */
        {2, e_flat, idx},    /* end not strictly rising */
        {2, e_down, idx},    /* end going down */
        {2, e_zero, idx},    /* an empty first segment */
        {2, e_short, idx},   /* end[n-1] < len */
        {2, e_long, idx},    /* end[n-1] > len */
        {1, e_ok + 1, idx},  /* 1 segment, still right: the control */
        {2, NULL, idx},      /* no end[] */
        {2, e_ok, NULL},     /* no index[] */
    };
    char dir[1400];
    source s;
    elist ref, got;
    drive dv;
    tb_etmv3_parser *ep;
    tb_ptm_parser *pp;
    size_t calls = 0;

    vector_dir(dir, sizeof dir, vec);
    source_load(&s, dir, -1, vec);
    cr_assert_geq(s.len, 10u);
    decode(&s, MODE_FLAT, 0, true, &ref);
    drive_open(&dv, &s, 0);
    ep = s.cfg.protocol == TB_PROTO_ETMV3 ? tb_etmv3_parser_new(&s.cfg) : NULL;
    pp = s.cfg.protocol == TB_PROTO_PTM ? tb_ptm_parser_new(&s.cfg) : NULL;
    cr_assert(ep || pp);
    for (size_t i = 0; i <= sizeof maps / sizeof maps[0]; i++) {
        const tb_span_map *m = i < sizeof maps / sizeof maps[0] ? &maps[i] : NULL;

        if (m == &maps[6])
            continue;
        cr_assert_eq(tb_parser_push_span(dv.p, s.data, 10, m, count_pkt, &calls),
                     TB_ERR_INVAL, "%s: map %zu", vec, i);
        cr_assert_eq(ep ? tb_etmv3_parser_push_span(ep, s.data, 10, m, count_pkt, &calls)
                        : tb_ptm_parser_push_span(pp, s.data, 10, m, count_pkt, &calls),
                     TB_ERR_INVAL, "%s: map %zu (per protocol)", vec, i);
        cr_assert_eq(tb_decoder_push_span(dv.d, dv.p, s.data, 10, m, count_elem, &calls),
                     TB_ERR_INVAL, "%s: map %zu (decoder)", vec, i);
        *refused += 3;
    }
    cr_assert_eq(calls, 0u, "%s: %zu callbacks from refused spans", vec, calls);
    /* The control map is taken (so the refusals above are about the
     * maps, not the bytes). */
    {
        tb_parser *p = tb_parser_new(&s.cfg);

        cr_assert_geq(tb_parser_push_span(p, s.data, 10, &maps[6], count_pkt, &calls), 0);
        tb_parser_free(p);
    }
    /* Nothing of the refused calls stayed behind. */
    drive_run(&dv, &s, MODE_FLAT, 0, true);
    cr_assert_eq(dv.first_neg, 0);
    got = dv.out;
    expect_same(vec, &ref, &got, 0);
    tb_etmv3_parser_free(ep);
    tb_ptm_parser_free(pp);
    drive_close(&dv);
    elist_free(&ref);
    source_fini(&s);
}

Test(decoder_fused, span_bad_maps)
{
    size_t refused = 0;

    bad_maps("cond_arm-etmv3", &refused);
    bad_maps("irq_fiq-ptm", &refused);
    cr_assert_eq(refused, 2u * 9 * 3);
}

/* A callback that stops inside a span: TB_ERR_STOPPED from that
 * tb_decoder_push_span, no callback after, the first k elements of the
 * packet path over the same segments; after a reset the whole decode
 * again.  Returns the stops tried. */
static size_t stop_spans(const source *s, const spanset *ss, size_t step)
{
    drive ref, sp;
    size_t tried = 0;
    char what[300];

    drive_open(&ref, s, 0);
    drive_ss(&ref, ss, HOW_PACKET);
    cr_assert_eq(ref.first_neg, 0);
    drive_open(&sp, s, 0);
    for (size_t k = 1; k <= ref.out.n; k++) {
        if ((k - 1) % step && k != ref.out.n && ref.out.v[k - 1].kind == TB_ELEM_INSN_RANGE)
            continue;
        rearm(&sp, k);
        drive_ss(&sp, ss, HOW_SPAN);
        snprintf(what, sizeof what, "%s spans, stop at %zu of %zu", s->name, k, ref.out.n);
        cr_assert_eq(sp.first_neg, TB_ERR_STOPPED, "%s: returned %d", what, sp.first_neg);
        cr_assert_eq(sp.calls_at_neg, k, "%s: reported after %zu", what, sp.calls_at_neg);
        cr_assert(!sp.late_call, "%s: callback after the stop", what);
        expect_same(what, &ref.out, &sp.out, k);
        cr_assert_eq(sp.out.n, k);
        tried++;
    }
    rearm(&sp, 0);
    drive_ss(&sp, ss, HOW_SPAN);
    snprintf(what, sizeof what, "%s spans after stops and reset", s->name);
    expect_same(what, &ref.out, &sp.out, 0);
    drive_close(&ref);
    drive_close(&sp);
    return tried;
}

static size_t stop_spans_vector(const char *vec, size_t step)
{
    char dir[1400];
    source s;
    spanset ss;
    size_t tried;

    vector_dir(dir, sizeof dir, vec);
    source_load(&s, dir, -1, vec);
    ss_random(&ss, s.data, s.len, 77, 30);
    tried = stop_spans(&s, &ss, step);
    cr_log_info("%s: %zu stops inside %zu spans", vec, tried, ss.nspan);
    ss_free(&ss);
    source_fini(&s);
    return tried;
}

Test(decoder_fused, span_stop_every_element)
{
    const char *refdir;

    cr_assert_gt(stop_spans_vector("cond_arm-etmv33-ca", 1), 50u);
    cr_assert_gt(stop_spans_vector("irq_fiq-ptm-ca-ts", 1), 50u);
    refdir = tb_test_reference_dir("span stop on real trace");
    if (refdir) {
        char dir[1100];
        source s;
        spanset ss;

        snprintf(dir, sizeof dir, "%s/opencsd-snapshots/TC2", refdir);
        source_load(&s, dir, 0x10, "TC2 0x10");
        ss_from_stream(&ss, &s);
        cr_assert_gt(stop_spans(&s, &ss, 7), 100u);
        ss_free(&ss);
        source_fini(&s);
    }
}
