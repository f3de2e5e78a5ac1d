/*
 * Trace health (health.h): the cause the library names when a decode
 * lost trace, and whether a buffer's bytes look like CoreSight frames.
 *
 * 1. Hand-made event sequences, table-driven: each cause, and the gaps a
 *    correct decode has (filter, overflow, missing code, an ETB stopped
 *    mid-packet) that are no loss.
 * 2. Real trace through the parser and the decoder (the fused path, with
 *    tb_decoder_set_health): a committed vector decodes clean; the same
 *    vector with one P-header turned reserved has one bad packet at its
 *    index; 1 MiB of random bytes read as PTM has no A-sync.
 * 3. The buffer guess: every committed CoreSight-formatted vector of 4
 *    frames or more looks formatted, with its own configuration; the raw
 *    (source_data) vectors, raw traces of the emulator's runs made here
 *    and random bytes do not; TC2's real ETB dump does.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tb_test.h"
#include "tracebench/decoder.h"
#include "tracebench/encoder.h"
#include "tracebench/health.h"
#include "tracebench/parser.h"
#include "tracebench/snapshot.h"
#include "tracebench/stream.h"

/* ---- 1. hand-made sequences ---- */

/* One event: bytes, a packet of a kind, or an element of a kind. */
typedef struct ev {
    char what;            /* 'b' bytes (n), 'p' packet (kind), 'e' element (kind) */
    int kind;
    uint64_t n;           /* bytes; NOTSYNC count; INSN_RANGE count */
    uint64_t index;
    uint8_t reason;       /* NO_SYNC gap reason, TRACE_ON I-sync reason */
    int err;
} ev;

#define B(n_) {'b', 0, (n_), 0, 0, 0}
#define P(k_, i_) {'p', (k_), 0, (i_), 0, 0}
#define NOTSYNC(n_) {'p', TB_PKT_NOTSYNC, (n_), 0, 0, 0}
#define E(k_, i_) {'e', (k_), 0, (i_), 0, 0}
#define RANGE(n_) {'e', TB_ELEM_INSN_RANGE, (n_), 0, 0, 0}
#define GAP(r_, i_, e_) {'e', TB_ELEM_NO_SYNC, 0, (i_), (r_), (e_)}
#define END {0, 0, 0, 0, 0, 0}

typedef struct row {
    const char *name;
    bool port;
    ev evs[12];
    tb_health_cause cause;
    bool lost, suspect;
    uint64_t count, index;
} row;

static const row rows[] = {
    {"no bytes", false, {END}, TB_HEALTH_EMPTY, false, false, 0, 0},
    {"synchronised, clean", false,
     {B(4096), NOTSYNC(3), P(TB_PKT_ASYNC, 3), P(TB_PKT_ISYNC, 9), GAP(TB_GAP_INIT, 3, 0),
      E(TB_ELEM_TRACE_ON, 9), RANGE(100), E(TB_ELEM_END, 4095), END},
     TB_HEALTH_OK, false, false, 0, 0},
    /* Gaps a correct decode has: the filter, an overflow, code missing
     * from the image, the end of an ETB that stopped inside a packet. */
    {"filter, overflow, no memory, truncated end: no loss", false,
     {B(4096), P(TB_PKT_ASYNC, 0), E(TB_ELEM_TRACE_ON, 6), RANGE(50),
      GAP(TB_GAP_FILTER, 100, 0), GAP(TB_GAP_OVERFLOW, 200, 0), GAP(TB_GAP_NO_MEMORY, 300, 0),
      E(TB_ELEM_ADDR_NACC, 300), P(TB_PKT_INCOMPLETE, 4090),
      GAP(TB_GAP_BAD_PACKET, 4090, TB_ERR_TRUNCATED), END},
     TB_HEALTH_OK, false, false, 0, 0},
    {"no A-sync in a big buffer", false,
     {B(1 << 20), NOTSYNC(1 << 20), GAP(TB_GAP_INIT, 0, 0), E(TB_ELEM_END, 0), END},
     TB_HEALTH_NO_ASYNC, true, true, 1 << 20, 0},
    {"no A-sync in a few bytes: not suspect", false,
     {B(40), NOTSYNC(40), END}, TB_HEALTH_NO_ASYNC, true, false, 40, 0},
    {"A-sync, no I-sync", false,
     {B(5000), P(TB_PKT_ASYNC, 0), GAP(TB_GAP_INIT, 0, 0), E(TB_ELEM_END, 0), END},
     TB_HEALTH_NO_ISYNC, true, true, 5000, 0},
    /* A port capture has no A-sync: only the decoder's sync counts. */
    {"port capture, synchronised", true,
     {B(600), P(TB_PKT_ATOM, 0), E(TB_ELEM_TRACE_ON, 16), RANGE(9), END},
     TB_HEALTH_OK, false, false, 0, 0},
    {"port capture, never synchronised", true,
     {B(600), P(TB_PKT_ATOM, 0), GAP(TB_GAP_INIT, 0, 0), E(TB_ELEM_END, 0), END},
     TB_HEALTH_NO_ISYNC, true, false, 600, 0},
    {"one bad packet", false,
     {B(4096), P(TB_PKT_ASYNC, 0), E(TB_ELEM_TRACE_ON, 6), RANGE(300),
      P(TB_PKT_RESERVED, 40), GAP(TB_GAP_BAD_PACKET, 40, TB_ERR_BAD_PACKET), END},
     TB_HEALTH_BAD_PACKETS, true, false, 1, 40},
    {"repeated bad packets: suspect", false,
     {B(4096), P(TB_PKT_ASYNC, 0), E(TB_ELEM_TRACE_ON, 6), RANGE(30),
      P(TB_PKT_BAD_SEQUENCE, 77), GAP(TB_GAP_BAD_PACKET, 77, TB_ERR_BAD_PACKET),
      P(TB_PKT_BAD_TRACEMODE, 900), GAP(TB_GAP_BAD_PACKET, 900, TB_ERR_BAD_PACKET), END},
     TB_HEALTH_BAD_PACKETS, true, true, 2, 77},
    /* The decoder's own losses, no bad packet behind them. */
    {"an atom the image contradicts", false,
     {B(4096), P(TB_PKT_ASYNC, 0), E(TB_ELEM_TRACE_ON, 6), RANGE(30),
      GAP(TB_GAP_INCONSISTENT, 55, 0), END},
     TB_HEALTH_DECODE_ERRORS, true, false, 1, 55},
    {"data trace that fits no instruction", false,
     {B(4096), P(TB_PKT_ASYNC, 0), E(TB_ELEM_TRACE_ON, 6), RANGE(30),
      GAP(TB_GAP_BAD_PACKET, 70, TB_ERR_MISMATCH), GAP(TB_GAP_BAD_PACKET, 90, TB_ERR_CONFIG),
      END},
     TB_HEALTH_DECODE_ERRORS, true, true, 2, 70},
    {"elements only (no packets): a bad packet is a decode error", false,
     {B(4096), E(TB_ELEM_TRACE_ON, 6), RANGE(30), GAP(TB_GAP_BAD_PACKET, 70, TB_ERR_BAD_PACKET),
      END},
     TB_HEALTH_DECODE_ERRORS, true, false, 1, 70},
};

/* Atoms with no address: many against few instructions, and missing
 * code that does not explain them (rows with counts too big for ev[]). */
static void feed(tb_health *h, const ev *e)
{
    for (; e->what; e++) {
        if (e->what == 'b') {
            tb_health_bytes(h, e->n);
        } else if (e->what == 'p') {
            tb_packet pkt;

            memset(&pkt, 0, sizeof pkt);
            pkt.kind = (tb_pkt_kind)e->kind;
            pkt.index = e->index;
            pkt.count = e->n;
            tb_health_packet(h, &pkt);
        } else {
            tb_element el;

            memset(&el, 0, sizeof el);
            el.kind = (tb_elem_kind)e->kind;
            el.index = e->index;
            el.count = (uint32_t)e->n;
            el.reason = e->reason;
            el.err = e->err;
            tb_health_element(h, &el);
        }
    }
}

Test(health, causes)
{
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const row *w = &rows[r];
        tb_health h;
        tb_health_diag d;

        tb_health_init(&h);
        feed(&h, w->evs);
        tb_health_diagnose(&h, w->port, &d);
        cr_expect_eq(d.cause, w->cause, "%s: cause %s, not %s", w->name,
                     tb_health_cause_name(d.cause), tb_health_cause_name(w->cause));
        cr_expect_eq(d.lost, w->lost, "%s: lost %d", w->name, d.lost);
        cr_expect_eq(d.config_suspect, w->suspect, "%s: suspect %d", w->name,
                     d.config_suspect);
        if (w->count)
            cr_expect_eq(d.count, w->count, "%s: count %llu", w->name,
                         (unsigned long long)d.count);
        cr_expect_eq(d.index, w->index, "%s: index %llu", w->name, (unsigned long long)d.index);
    }
}

Test(health, atoms_without_address)
{
    static const struct {
        unsigned unknown, insns, nacc;
        bool lost;
    } cases[] = {
        {43447, 12835, 40, true},     /* TC2 0x10 read without ca: the packets are misread */
        {347501, 543763, 59, true},   /* long_run (200000 ran) read without ca */
        {23, 20000, 16, false},       /* TC2 0x13: after code the image lacks */
        {500, 100, 40, false},        /* missing code explains them */
        {63, 10, 0, false},           /* too few to say */
        {100, 401, 0, false},         /* under a fifth of the instructions */
        {100, 400, 0, true},          /* a fifth */
    };

    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        tb_health h;
        tb_health_diag d;
        tb_element el;
        tb_packet pkt;

        tb_health_init(&h);
        tb_health_bytes(&h, 10000);
        memset(&pkt, 0, sizeof pkt);
        pkt.kind = TB_PKT_ASYNC;
        tb_health_packet(&h, &pkt);
        memset(&el, 0, sizeof el);
        el.kind = TB_ELEM_TRACE_ON;
        tb_health_element(&h, &el);
        el.kind = TB_ELEM_INSN_RANGE;
        el.count = cases[c].insns;
        tb_health_element(&h, &el);
        el.count = 0;
        el.kind = TB_ELEM_ADDR_UNKNOWN;
        for (unsigned i = 0; i < cases[c].unknown; i++)
            tb_health_element(&h, &el);
        el.kind = TB_ELEM_ADDR_NACC;
        for (unsigned i = 0; i < cases[c].nacc; i++)
            tb_health_element(&h, &el);
        tb_health_diagnose(&h, false, &d);
        cr_expect_eq(d.lost, cases[c].lost, "case %zu: %s", c, tb_health_cause_name(d.cause));
        cr_expect_eq(d.cause, cases[c].lost ? TB_HEALTH_NO_ADDRESS : TB_HEALTH_OK, "case %zu",
                     c);
    }
}

/* ---- 2. real trace through the decoder ---- */

typedef struct decoded {
    tb_health h;
    uint64_t insns;
} decoded;

static int on_elem(void *ctx, const tb_element *el)
{
    decoded *d = ctx;

    tb_health_element(&d->h, el);
    if (el->kind == TB_ELEM_INSN_RANGE)
        d->insns += el->count;
    return 0;
}

/* bytes through a parser and decoder for cfg (fused path, chunks of
 * `chunk` bytes), the decoder counting its packets into the health. */
static void decode_bytes(const tb_config *cfg, const tb_memimage *mem, const uint8_t *data,
                         size_t len, size_t chunk, decoded *out)
{
    tb_parser *p = tb_parser_new(cfg);
    tb_decoder *d = tb_decoder_new(cfg, mem);

    cr_assert(p && d);
    memset(out, 0, sizeof *out);
    tb_health_init(&out->h);
    tb_decoder_set_health(d, &out->h);
    for (size_t at = 0; at < len; at += chunk) {
        size_t n = len - at < chunk ? len - at : chunk;

        tb_health_bytes(&out->h, n);
        cr_assert_geq(tb_decoder_push(d, p, data + at, n, at, on_elem, out), 0);
    }
    cr_assert_geq(tb_decoder_push_finish(d, p, on_elem, out), 0);
    tb_decoder_free(d);
    tb_parser_free(p);
}

/* A raw (source_data) ETMv3 vector: its buffer is the source's bytes,
 * file offset = stream index. */
#define RAW_VECTOR TB_SOURCE_DIR "/vectors/generated/data_loop-etmv3-trigger-raw"

static void load_vector(const char *dir, tb_snapshot *s, tb_config *cfg, tb_memimage **mem,
                        uint8_t **trace, size_t *len)
{
    char err[512], path[1024];

    cr_assert_eq(tb_snapshot_load(s, dir, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tb_snapshot_source_config(s, &s->sources[0], cfg, err, sizeof err), 0, "%s",
                 err);
    cr_assert_geq(tb_snapshot_source_memory(s, &s->sources[0], mem, err, sizeof err), 0, "%s",
                  err);
    snprintf(path, sizeof path, "%s/trace_buffer.bin", dir);
    *trace = tb_test_read_file(path, len);
    cr_assert_not_null(*trace);
}

Test(health, vector_clean_then_one_bad_packet)
{
    tb_snapshot s;
    tb_config cfg;
    tb_memimage *mem;
    uint8_t *trace;
    size_t len;
    decoded a, b;
    tb_health_diag d;

    load_vector(RAW_VECTOR, &s, &cfg, &mem, &trace, &len);
    for (size_t chunk = 1; chunk <= len; chunk = chunk * 3 + 1) {
        decode_bytes(&cfg, mem, trace, len, chunk, &a);
        tb_health_diagnose(&a.h, false, &d);
        cr_expect_eq(d.cause, TB_HEALTH_OK, "chunk %zu: %s", chunk, tb_health_cause_name(d.cause));
        cr_expect_eq(a.insns, 2000, "chunk %zu", chunk);
        cr_expect_eq(a.h.bytes, len);
        cr_expect_eq(a.h.asyncs, 1);
    }
    /* Byte 40 is the P-header 0xBC (format 1, 15 E atoms); 0xBE is
     * reserved in trace that is not cycle-accurate (IHI0014Q 7.3.1:
     * b1xxxxx10 other than format 2, b1000FF10). */
    cr_assert_eq(trace[40], 0xBC);
    trace[40] = 0xBE;
    for (size_t chunk = 1; chunk <= len; chunk = chunk * 3 + 1) {
        decode_bytes(&cfg, mem, trace, len, chunk, &b);
        tb_health_diagnose(&b.h, false, &d);
        cr_expect_eq(d.cause, TB_HEALTH_BAD_PACKETS, "chunk %zu: %s", chunk,
                     tb_health_cause_name(d.cause));
        cr_expect(d.lost);
        cr_expect_not(d.config_suspect);
        cr_expect_eq(d.count, 1);
        cr_expect_eq(d.index, 40);
        cr_expect_eq(b.h.decode_errors, 0, "the decoder's NO_SYNC is the bad packet's");
        cr_expect_lt(b.insns, 2000);
    }
    free(trace);
    tb_memimage_free(mem);
    tb_snapshot_fini(&s);
}

Test(health, random_bytes_as_ptm_have_no_async)
{
    tb_encoder_opts o;
    tb_config cfg;
    tb_memimage *mem = tb_memimage_new();
    size_t len = 1u << 20;
    uint8_t *buf = malloc(len);
    uint64_t seed = 31;
    decoded r;
    tb_health_diag d;

    cr_assert(mem && buf);
    /* Random, but with no run of five zeros: an A-sync is 5 zero bytes
     * and 0x80 (IHI0035B 4.4.1), which uniform random bytes hold about
     * once in 10^12 bytes anyway. */
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(tb_test_rand(&seed) | (i % 4 == 0));
    tb_encoder_opts_init(&o, TB_PROTO_PTM);
    cr_assert_eq(tb_encoder_config(&o, &cfg), 0);
    decode_bytes(&cfg, mem, buf, len, 65536, &r);
    tb_health_diagnose(&r.h, false, &d);
    cr_expect_eq(d.cause, TB_HEALTH_NO_ASYNC, "%s", tb_health_cause_name(d.cause));
    cr_expect(d.lost);
    cr_expect(d.config_suspect);
    cr_expect_eq(d.count, len);
    cr_expect_eq(r.h.unsynced_bytes, len);
    free(buf);
    tb_memimage_free(mem);
}

/* ---- 3. does a buffer look formatted? ---- */

static bool guess_file(const char *path, const tb_config *cfg, tb_buffer_guess *g)
{
    size_t len;
    uint8_t *data = tb_test_read_file(path, &len);

    cr_assert_not_null(data, "%s", path);
    cr_assert_eq(tb_health_guess_buffer(data, len > 65536 ? 65536 : len, cfg, g), 0);
    free(data);
    return g->formatted;
}

Test(health, guess_on_the_vectors)
{
    char dir[1024];
    DIR *d;
    struct dirent *e;
    unsigned formatted = 0, raw = 0;

    snprintf(dir, sizeof dir, "%s/vectors/generated", TB_SOURCE_DIR);
    d = opendir(dir);
    cr_assert_not_null(d);
    while ((e = readdir(d))) {
        char vdir[1400], path[1700], err[512];
        tb_snapshot s;
        tb_config cfg;
        tb_buffer_guess g;
        const char *fmt;

        if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md"))
            continue;
        snprintf(vdir, sizeof vdir, "%s/%s", dir, e->d_name);
        cr_assert_eq(tb_snapshot_load(&s, vdir, err, sizeof err), 0, "%s", err);
        fmt = s.n_buffers ? s.buffers[0].format : "";
        if ((strcmp(fmt, "coresight") && strcmp(fmt, "source_data")) ||
            tb_snapshot_source_config(&s, &s.sources[0], &cfg, err, sizeof err) < 0) {
            tb_snapshot_fini(&s);
            continue; /* port captures, FSYNC streams */
        }
        snprintf(path, sizeof path, "%s/%s", vdir, s.buffers[0].files[0]);
        guess_file(path, &cfg, &g);
        if (!strcmp(fmt, "coresight") && g.frames >= 4) {
            cr_expect(g.formatted, "%s: formatted, yet not guessed so (%u IDs, %llu errors)",
                      e->d_name, g.n_ids, (unsigned long long)g.frame_errors);
            cr_expect_eq(g.frame_errors, 0, "%s", e->d_name);
            formatted++;
        } else if (!strcmp(fmt, "source_data")) {
            cr_expect_not(g.formatted, "%s: a raw buffer guessed formatted", e->d_name);
            raw++;
        }
        tb_snapshot_fini(&s);
    }
    closedir(d);
    cr_expect_geq(formatted, 40, "only %u formatted vectors", formatted);
    cr_expect_geq(raw, 5, "only %u raw vectors", raw);
}

/* Random bytes, and a raw trace.  (Raw traces of longer runs, whose
 * small addresses name no reserved ID by chance, so that a frame test
 * alone took several for formatted: test_cli_lost, which runs the
 * emulator.) */
Test(health, guess_on_raw_and_random)
{
    tb_buffer_guess g;
    uint8_t *buf = malloc(65536);
    uint64_t seed = 7;
    tb_encoder_opts o;
    tb_config cfg;

    cr_assert_not_null(buf);
    for (size_t i = 0; i < 65536; i++)
        buf[i] = (uint8_t)tb_test_rand(&seed);
    tb_encoder_opts_init(&o, TB_PROTO_PTM);
    tb_encoder_config(&o, &cfg);
    cr_assert_eq(tb_health_guess_buffer(buf, 65536, &cfg, &g), 0);
    cr_expect_not(g.formatted);
    cr_expect_gt(g.frame_errors, 0);
    free(buf);
    tb_encoder_opts_init(&o, TB_PROTO_ETMV3);
    tb_encoder_config(&o, &cfg);
    cr_expect_not(guess_file(RAW_VECTOR "/trace_buffer.bin", &cfg, &g));
}

Test(health, guess_on_tc2)
{
    const char *ref = tb_test_reference_dir("the buffer guess on TC2's ETB dump");
    char path[1024];
    tb_buffer_guess g;
    tb_encoder_opts o;
    tb_config cfg;

    if (!ref)
        return;
    snprintf(path, sizeof path, "%s/opencsd-snapshots/TC2/cstrace.bin", ref);
    /* ETMv3 with ca and ts, as TC2's ETM_0 (ETMCR 0x10001860). */
    tb_encoder_opts_init(&o, TB_PROTO_ETMV3);
    cr_assert_eq(tb_encoder_opts_parse(&o, "ca,ts", NULL, 0), 0);
    cr_assert_eq(tb_encoder_config(&o, &cfg), 0);
    cr_expect(guess_file(path, &cfg, &g));
    cr_expect_eq(g.n_ids, 4, "%u", g.n_ids);
    cr_expect_eq(g.ids[0], 0x10);
    cr_expect_eq(g.ids[3], 0x13);
    cr_expect_eq(g.frame_errors, 0);
    cr_expect_geq(g.n_clean, 1);
    /* Without a configuration the frames alone decide. */
    cr_expect(guess_file(path, NULL, &g));
}
