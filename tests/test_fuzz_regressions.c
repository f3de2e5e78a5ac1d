/*
 * Fuzz regressions (issue 7): every file in fuzz/regressions/<harness>/
 * is replayed through the same harness function the libFuzzer and AFL++
 * drivers call (fuzz/fuzz.h), so an input that ever broke an invariant
 * stays fixed.  A broken invariant aborts inside the harness, which
 * Criterion reports as a crashed test.  The writer-made seed inputs of
 * fuzz/fuzz_seeds.c are replayed too, and must be rich enough to decode
 * real instruction ranges (otherwise the decoder harnesses would start
 * from nothing).
 *
 * The harness sources are compiled into this test directly (they are
 * not part of the library).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../decoder/protocols.h"
#include "tb_test.h"

#include "../fuzz/fuzz.h"
#include "../fuzz/fuzz_util.c"
#include "../fuzz/fuzz_table.c"
#include "../fuzz/fuzz_parser.c"
#include "../fuzz/fuzz_deformatter.c"
#include "../fuzz/fuzz_snapshot.c"
#include "../fuzz/fuzz_decoder.c"
#include "../fuzz/fuzz_etmv1.c"
#include "../fuzz/fuzz_etmv2.c"
#include "../fuzz/fuzz_seeds.c"

#include "tracebench/decoder.h"
#include "tracebench/parser.h"

static int replay_dir(const char *harness, tb_fuzz_fn fn)
{
    char dir[1024], path[1400];
    DIR *d;
    struct dirent *e;
    int n = 0;

    snprintf(dir, sizeof dir, "%s/fuzz/regressions/%s", TB_SOURCE_DIR, harness);
    d = opendir(dir);
    if (!d)
        return 0;
    while ((e = readdir(d)) != NULL) {
        uint8_t *data;
        size_t len;
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        data = tb_test_read_file(path, &len);
        cr_assert_not_null(data, "cannot read %s", path);
        fprintf(stderr, "replay %s/%s (%zu bytes)\n", harness, e->d_name, len);
        /* 0: the harness checked it (TB_FUZZ_SKIP would keep nothing). */
        cr_assert_eq(fn(data, len), 0, "%s", path);
        free(data);
        n++;
    }
    closedir(d);
    return n;
}

/* A regression folder's inputs go through every harness of its input
 * format (fuzz.h tb_fuzz_harness.format): a fast harness and its full
 * one read the same inputs. */
Test(fuzz_regressions, every_regression_file_passes_its_harness)
{
    const tb_fuzz_harness *h, *dir;
    int total = 0;

    for (dir = tb_fuzz_harnesses; dir->name; dir++)
        for (h = tb_fuzz_harnesses; h->name; h++)
            if (strcmp(h->format, dir->format) == 0)
                total += replay_dir(dir->name, h->fn);
    fprintf(stderr, "%d regression inputs replayed\n", total);
    cr_assert_gt(total, 0);
}

Test(fuzz_regressions, regression_folders_name_real_harnesses)
{
    char dir[1024];
    DIR *d;
    struct dirent *e;

    snprintf(dir, sizeof dir, "%s/fuzz/regressions", TB_SOURCE_DIR);
    d = opendir(dir);
    cr_assert_not_null(d, "%s missing", dir);
    while ((e = readdir(d)) != NULL) {
        const tb_fuzz_harness *h;
        bool known = false;
        if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0)
            continue;
        for (h = tb_fuzz_harnesses; h->name; h++)
            known |= strcmp(h->name, e->d_name) == 0;
        /* A misspelt folder would silently never be replayed.  roundtrip
         * and conform are replayed by test_roundtrip_fuzz, test_conform,
         * ocsd_* (OpenCSD differential) by test_fuzz_ocsd, elfinfo by
         * test_codecov (elfinfo/fuzz_regressions). */
        cr_assert(known || strncmp(e->d_name, "roundtrip", 9) == 0 ||
                      strcmp(e->d_name, "conform") == 0 || strcmp(e->d_name, "elfinfo") == 0 ||
                      strcmp(e->d_name, "ocsd_etmv3") == 0 || strcmp(e->d_name, "ocsd_ptm") == 0,
                  "fuzz/regressions/%s is no harness", e->d_name);
    }
    closedir(d);
}

typedef struct seed_run {
    tb_fuzz_fn fn;
    int n;
} seed_run;

static int run_seed(void *ctx, const char *name, const uint8_t *data,
                    size_t len)
{
    seed_run *r = ctx;

    cr_assert_gt(len, 0, "empty seed %s", name);
    cr_assert_eq(r->fn(data, len), 0, "seed %s", name);
    r->n++;
    return 0;
}

Test(fuzz_regressions, writer_seeds_pass_every_harness)
{
    const tb_fuzz_harness *h;

    for (h = tb_fuzz_harnesses; h->name; h++) {
        seed_run r = {h->fn, 0};
        int n = tb_fuzz_seeds(h->name, run_seed, &r);
        cr_assert_gt(n, 0, "no seeds for %s", h->name);
        cr_assert_eq(n, r.n);
    }
}

static int note_seed(void *ctx, const char *name, const uint8_t *data, size_t len)
{
    char *names = ctx;

    (void)data;
    (void)len;
    if (strlen(names) + strlen(name) + 2 < 4096) {
        strcat(names, name);
        strcat(names, " ");
    }
    return 0;
}

/* The snapshot harness starts from every buffer format the reader knows,
 * the TPIU capture's (FSYNCs and HSYNC idles, issue 35) too. */
Test(fuzz_regressions, snapshot_seeds_cover_every_buffer_format)
{
    static const char *const formats[] = {"coresight", "dstream_coresight", "source_data",
                                          "tpiu_coresight"};
    static char names[4096];
    char want[64];

    names[0] = '\0';
    cr_assert_gt(tb_fuzz_seeds("snapshot", note_seed, names), 0);
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        snprintf(want, sizeof want, "snapshot-%s ", formats[i]);
        cr_expect(strstr(names, want), "no snapshot seed of format %s (seeds: %s)", formats[i],
                  names);
    }
}

/* The decoder seeds are worth starting from only if they reach code in
 * the fixed image: count instruction ranges per seed. */
typedef struct range_count {
    int ranges, nacc;
    tb_decoder *d;
} range_count;

static int count_el(void *ctx, const tb_element *el)
{
    range_count *c = ctx;

    c->ranges += el->kind == TB_ELEM_INSN_RANGE;
    c->nacc += el->kind == TB_ELEM_ADDR_NACC;
    return 0;
}

static int count_pkt(void *ctx, const tb_packet *p)
{
    range_count *c = ctx;

    cr_assert_geq(tb_decoder_packet(c->d, p, count_el, c), 0);
    return 0;
}

static int decode_seed(void *ctx, const char *name, const uint8_t *data,
                       size_t len)
{
    tb_protocol proto = *(const tb_protocol *)ctx;
    range_count c = {0};
    tb_config cfg;
    tb_parser *p;

    tb_fuzz_config(proto, data, &cfg);
    p = tb_parser_new(&cfg);
    c.d = tb_decoder_new(&cfg, tb_fuzz_image());
    cr_assert(p && c.d);
    cr_assert_geq(tb_parser_push(p, data + 4, len - 4, 0, count_pkt, &c), 0);
    cr_assert_geq(tb_parser_finish(p, count_pkt, &c), 0);
    cr_assert_geq(tb_decoder_finish(c.d, count_el, &c), 1);
    /* ETMv3 data-only trace has no instruction trace (protocol-notes 1.1). */
    if (!cfg.data_only)
        cr_assert_geq(c.ranges, 3, "seed %s decodes %d ranges", name, c.ranges);
    tb_parser_free(p);
    tb_decoder_free(c.d);
    return 0;
}

Test(fuzz_regressions, decoder_seeds_reach_the_image)
{
    tb_protocol etm = TB_PROTO_ETMV3, ptm = TB_PROTO_PTM;

    cr_assert_gt(tb_fuzz_seeds("etmv3_decoder", decode_seed, &etm), 0);
    cr_assert_gt(tb_fuzz_seeds("ptm_decoder", decode_seed, &ptm), 0);
}

/* The image must hold what the harness comments promise: code where the
 * seeds point, and bytes up to the end of the address space. */
Test(fuzz_regressions, fixed_image_layout)
{
    const tb_memimage *m = tb_fuzz_image();
    size_t avail;

    cr_assert_not_null(tb_memimage_ptr(m, TB_FUZZ_ARM_BASE, &avail));
    cr_assert_eq(avail, TB_FUZZ_CODE_BYTES);
    cr_assert_not_null(tb_memimage_ptr(m, TB_FUZZ_THUMB_BASE, &avail));
    cr_assert_eq(avail, TB_FUZZ_CODE_BYTES);
    cr_assert_not_null(tb_memimage_ptr(m, 0xFFFFFFFFu, &avail));
    cr_assert_eq(avail, 1);
    cr_assert_null(tb_memimage_ptr(m, TB_FUZZ_ARM_BASE + TB_FUZZ_CODE_BYTES, &avail));
}

/* The ETMv1 seeds are encoder captures of walks through the fixed image:
 * they must decode to many ranges with no error (the walk and the
 * decoder follow the same code). */
typedef struct e1_count {
    int ranges, errors, exceptions;
    tb_etmv1_decoder *d;
    tb_etmv2_decoder *d2; /* the ETMv2 seeds */
} e1_count;

static int e1_count_el(void *ctx, const tb_element *el)
{
    e1_count *c = ctx;

    c->ranges += el->kind == TB_ELEM_INSN_RANGE;
    c->exceptions += el->kind == TB_ELEM_EXCEPTION;
    c->errors += (el->kind == TB_ELEM_NO_SYNC && el->reason != TB_GAP_INIT) ||
                 el->kind == TB_ELEM_ADDR_NACC || el->err != 0;
    return 0;
}

static int e1_count_pkt(void *ctx, const tb_packet *p)
{
    e1_count *c = ctx;

    cr_assert_geq(tb_etmv1_decoder_packet(c->d, p, e1_count_el, c), 0);
    return 0;
}

static int e1_decode_seed(void *ctx, const char *name, const uint8_t *data,
                          size_t len)
{
    tb_etmv1_config cfg;
    tb_config g;
    e1_count c = {0};
    tb_etmv1_parser *p;
    bool own = tb_fuzz_etmv1_config(data, &cfg, &g);
    uint8_t hdr[TB_ETMV1_HDR_BYTES];

    (void)ctx;
    if (strncmp(name, "etmv1-loop-", 11) == 0) /* hand-made limit seeds */
        return 0;
    p = tb_etmv1_parser_new(own ? NULL : &cfg);
    if (own)
        cr_assert_eq(tb_etmv1_capture_parse_header(data + 4, &cfg), 0, "%s", name);
    c.d = tb_etmv1_decoder_new(&cfg, tb_fuzz_image());
    cr_assert(p && c.d);
    if (!own) {
        tb_etmv1_capture_header(&cfg, hdr);
        cr_assert_geq(tb_etmv1_parser_push(p, hdr, sizeof hdr, 0, e1_count_pkt, &c), 0);
    }
    cr_assert_geq(tb_etmv1_parser_push(p, data + 4, len - 4, own ? 0 : sizeof hdr,
                                       e1_count_pkt, &c), 0);
    cr_assert_geq(tb_etmv1_parser_finish(p, e1_count_pkt, &c), 0);
    cr_assert_geq(tb_etmv1_decoder_finish(c.d, e1_count_el, &c), 1);
    fprintf(stderr, "etmv1 seed %s: %zu bytes, %d ranges, %d exceptions, %d errors\n",
            name, len, c.ranges, c.exceptions, c.errors);
    cr_assert_geq(c.ranges, 20, "seed %s decodes %d ranges", name, c.ranges);
    cr_assert_geq(c.exceptions, 1, "seed %s decodes no exception", name);
    cr_assert_eq(c.errors, 0, "seed %s decodes with %d errors", name, c.errors);
    tb_etmv1_parser_free(p);
    tb_etmv1_decoder_free(c.d);
    return 0;
}

Test(fuzz_regressions, etmv1_seeds_reach_the_image)
{
    int n = tb_fuzz_seeds("etmv1", e1_decode_seed, NULL);

    /* Each port width, plain and cycle-accurate. */
    cr_assert_geq(n, 6);
}

static int e2_count_pkt(void *ctx, const tb_packet *p)
{
    e1_count *c = ctx;

    cr_assert_geq(tb_etmv2_decoder_packet(c->d2, p, e1_count_el, c), 0);
    return 0;
}

typedef struct pktcount {
    int data, bad;
} pktcount;

static int e2_data_pkt(void *ctx, const tb_packet *p)
{
    pktcount *c = ctx;

    /* Every data packet kind of Table 6.2 (normal, Value Not Traced,
     * load miss occurred and its data). */
    c->data += p->kind == TB_PKT_DATA || p->kind == TB_PKT_VALUE_NOT_TRACED ||
               p->kind == TB_PKT_OOO_PLACEHOLDER || p->kind == TB_PKT_OOO_DATA;
    c->bad += p->kind >= TB_PKT_RESERVED;
    return 0;
}

/* The ETMv2 seeds: decoded straight (their encoder output over the fixed
 * image), they reach the image, with exceptions, and no error. */
static int e2_decode_seed(void *ctx, const char *name, const uint8_t *data, size_t len)
{
    tb_etmv2_config cfg;
    tb_config g;
    e1_count c = {0};
    tb_etmv2_parser *p;
    bool own = tb_fuzz_etmv2_config(data, &cfg, &g);
    uint8_t hdr[TB_ETMV1_HDR_BYTES];

    (void)ctx;
    if (strncmp(name, "etmv2-loop-", 11) == 0) /* hand-made limit seed */
        return 0;
    if (strncmp(name, "etmv2-data-", 11) == 0) {
        /* Hand-made data captures (not walks of the image): they keep
         * the harness's invariants and give data packets. */
        pktcount pc = {0};

        cr_assert_eq(tb_fuzz_etmv2(data, len), 0);
        p = tb_etmv2_parser_new(&cfg);
        tb_etmv2_capture_header(&cfg, hdr);
        cr_assert_geq(tb_etmv2_parser_push(p, hdr, sizeof hdr, 0, e2_data_pkt, &pc), 0);
        cr_assert_geq(tb_etmv2_parser_push(p, data + 4, len - 4, sizeof hdr, e2_data_pkt, &pc),
                      0);
        cr_assert_geq(tb_etmv2_parser_finish(p, e2_data_pkt, &pc), 0);
        tb_etmv2_parser_free(p);
        cr_assert_eq(pc.bad, 0, "seed %s: %d error packets", name, pc.bad);
        cr_assert_geq(pc.data, 2, "seed %s: %d data packets", name, pc.data);
        return 0;
    }
    p = tb_etmv2_parser_new(own ? NULL : &cfg);
    if (own)
        cr_assert_eq(tb_etmv2_capture_parse_header(data + 4, &cfg), 0, "%s", name);
    c.d2 = tb_etmv2_decoder_new(&cfg, tb_fuzz_image());
    cr_assert(p && c.d2);
    if (!own) {
        tb_etmv2_capture_header(&cfg, hdr);
        cr_assert_geq(tb_etmv2_parser_push(p, hdr, sizeof hdr, 0, e2_count_pkt, &c), 0);
    }
    cr_assert_geq(tb_etmv2_parser_push(p, data + 4, len - 4, own ? 0 : sizeof hdr,
                                       e2_count_pkt, &c), 0);
    cr_assert_geq(tb_etmv2_parser_finish(p, e2_count_pkt, &c), 0);
    cr_assert_geq(tb_etmv2_decoder_finish(c.d2, e1_count_el, &c), 1);
    fprintf(stderr, "etmv2 seed %s: %zu bytes, %d ranges, %d exceptions, %d errors\n",
            name, len, c.ranges, c.exceptions, c.errors);
    cr_assert_geq(c.ranges, 20, "seed %s decodes %d ranges", name, c.ranges);
    cr_assert_geq(c.exceptions, 1, "seed %s decodes no exception", name);
    cr_assert_eq(c.errors, 0, "seed %s decodes with %d errors", name, c.errors);
    tb_etmv2_parser_free(p);
    tb_etmv2_decoder_free(c.d2);
    return 0;
}

Test(fuzz_regressions, etmv2_seeds_reach_the_image)
{
    int n = tb_fuzz_seeds("etmv2", e2_decode_seed, NULL);

    cr_assert_geq(n, 6);
}

/* Issue 35: the ETMv2 forms a context ID change next to a failed
 * instruction or a branch gives (IHI0014Q 6.1.2, 6.4.1: DN, a phantom
 * whose second instruction failed, with and without packets, and a
 * context ID packet with C = 1) are in the harness's seeds, so the
 * fuzzer starts from them: counted by the spec-coverage classifier, a
 * path apart from the encoder that wrote the seeds. */
typedef struct e2_cov {
    tb_config g;
    uint64_t counts[TB_SPECCOV_MAX];
} e2_cov;

static int e2_cov_pkt(void *ctx, const tb_packet *p)
{
    e2_cov *c = ctx;
    tb_speccov_id v[16];
    int n = tb_speccov_classify_packet(&c->g, p, v, 16);

    cr_assert_geq(n, 0);
    for (int i = 0; i < n; i++)
        c->counts[v[i]]++;
    return 0;
}

static int e2_cov_seed(void *ctx, const char *name, const uint8_t *data, size_t len)
{
    e2_cov *c = ctx;
    tb_etmv2_config cfg;
    tb_etmv2_parser *p;
    uint8_t *cap;
    size_t n;

    if (strncmp(name, "etmv2-w", 7) != 0 || tb_fuzz_etmv2_config(data, &cfg, &c->g))
        return 0; /* walks of the image with the harness's header only */
    n = TB_ETMV1_HDR_BYTES + len - 4;
    cr_assert((cap = malloc(n)));
    tb_etmv2_capture_header(&cfg, cap);
    memcpy(cap + TB_ETMV1_HDR_BYTES, data + 4, len - 4);
    cr_assert_eq(tb_speccov_count_etmv2_capture(cap, n, c->counts), 0, "%s", name);
    cr_assert((p = tb_etmv2_parser_new(&cfg)));
    cr_assert_geq(tb_etmv2_parser_push(p, cap, n, 0, e2_cov_pkt, c), 0);
    cr_assert_geq(tb_etmv2_parser_finish(p, e2_cov_pkt, c), 0);
    tb_etmv2_parser_free(p);
    free(cap);
    return 0;
}

Test(fuzz_regressions, etmv2_seeds_reach_context_forms)
{
    /* Not etmv2.phantom.not_taken.dn: the fixed image seldom has a
     * conditional instruction after a not-taken B<c> (none in these
     * walks); its PIPESTAT code is one bit from the taken form's (U1:
     * 0xB, 0xF), a mutation away from the seeds. */
    static const char *const want[] = {"etmv2.pipestat.dn", "etmv2.phantom.taken.in",
                                        "etmv2.phantom.taken.dn", "etmv2.ctxid.more"};
    static e2_cov c;

    cr_assert_gt(tb_fuzz_seeds("etmv2", e2_cov_seed, &c), 0);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int v = tb_speccov_variant_find(want[i]);

        cr_assert_geq(v, 0, "%s", want[i]);
        fprintf(stderr, "etmv2 seeds: %s %llu\n", want[i], (unsigned long long)c.counts[v]);
        cr_expect_gt(c.counts[v], 0, "no ETMv2 seed has %s", want[i]);
    }
}

/* Issue 35: the ETMv3 parser's seeds hold an ETMv3.0 format-0 P-header
 * (one W, IHI0014Q 7.3.1 Table 7.3; the cycle-accurate ETMv3.0
 * configuration's seeds), counted by the spec-coverage classifier. */
static int e3_cov_seed(void *ctx, const char *name, const uint8_t *data, size_t len)
{
    e2_cov *c = ctx;
    tb_parser *p;

    (void)name;
    cr_assert_geq(len, (size_t)TB_FUZZ_CFG_BYTES);
    tb_fuzz_config(TB_PROTO_ETMV3, data, &c->g);
    cr_assert((p = tb_parser_new(&c->g)));
    cr_assert_geq(tb_parser_push(p, data + TB_FUZZ_CFG_BYTES, len - TB_FUZZ_CFG_BYTES, 0,
                                 e2_cov_pkt, c), 0);
    cr_assert_geq(tb_parser_finish(p, e2_cov_pkt, c), 0);
    tb_parser_free(p);
    return 0;
}

Test(fuzz_regressions, etmv3_seeds_reach_format0)
{
    static e2_cov c;
    int v = tb_speccov_variant_find("etmv3.phdr.ca.fmt0");

    cr_assert_geq(v, 0);
    cr_assert_gt(tb_fuzz_seeds("etmv3_parser", e3_cov_seed, &c), 0);
    cr_expect_gt(c.counts[v], 0, "no ETMv3 parser seed has a format-0 P-header");
}

/* Issue 35: an ETMv1 seed has a BE in an APO cycle (an abandoned branch,
 * IHI0014Q 5.6.1), counted from its samples by the spec-coverage
 * classifier; the seed decodes without errors (etmv1_seeds_reach_the_image). */
static int e1_abandon_seed(void *ctx, const char *name, const uint8_t *data, size_t len)
{
    e2_cov *c = ctx;
    tb_etmv1_config cfg;
    uint8_t *cap;
    size_t n;

    if (strncmp(name, "etmv1-w", 7) != 0 || tb_fuzz_etmv1_config(data, &cfg, &c->g))
        return 0; /* walks of the image with the harness's header only */
    n = TB_ETMV1_HDR_BYTES + len - 4;
    cr_assert((cap = malloc(n)));
    tb_etmv1_capture_header(&cfg, cap);
    memcpy(cap + TB_ETMV1_HDR_BYTES, data + 4, len - 4);
    cr_assert_eq(tb_speccov_count_etmv1_capture(cap, n, c->counts), 0, "%s", name);
    free(cap);
    return 0;
}

Test(fuzz_regressions, etmv1_seeds_reach_abandoned_branches)
{
    static e2_cov c;
    int v = tb_speccov_variant_find("etmv1.apo.abandoned");

    cr_assert_geq(v, 0);
    cr_assert_gt(tb_fuzz_seeds("etmv1", e1_abandon_seed, &c), 0);
    fprintf(stderr, "etmv1 seeds: etmv1.apo.abandoned %llu\n", (unsigned long long)c.counts[v]);
    cr_expect_gt(c.counts[v], 0, "no ETMv1 seed has a BE in an APO cycle");
}

/* The ETMv3 decoder seeds of a Cortex-M3 (fuzz_seeds.c v7m_stream) reach
 * the v7-M return forms, the pre-empted return among them (issue 35), as
 * the spec-coverage classifier names them on the decoded elements. */
typedef struct v7m_cov {
    tb_config cfg;
    tb_decoder *d;
    const tb_packet *pkt;
    uint64_t counts[TB_SPECCOV_MAX];
} v7m_cov;

static int v7m_cov_el(void *ctx, const tb_element *el)
{
    v7m_cov *c = ctx;
    tb_speccov_id v[8];
    int n = tb_speccov_classify_element(&c->cfg, c->pkt, el, v, 8);

    cr_assert_geq(n, 0);
    for (int i = 0; i < n; i++)
        c->counts[v[i]]++;
    return 0;
}

static int v7m_cov_pkt(void *ctx, const tb_packet *p)
{
    v7m_cov *c = ctx;

    c->pkt = p;
    cr_assert_geq(tb_decoder_packet(c->d, p, v7m_cov_el, c), 0);
    return 0;
}

static int v7m_cov_seed(void *ctx, const char *name, const uint8_t *data, size_t len)
{
    v7m_cov *c = ctx;
    tb_parser *p;

    (void)name;
    tb_fuzz_config(TB_PROTO_ETMV3, data, &c->cfg);
    if (!c->cfg.v7m)
        return 0;
    p = tb_parser_new(&c->cfg);
    c->d = tb_decoder_new(&c->cfg, tb_fuzz_image());
    cr_assert(p && c->d);
    cr_assert_geq(tb_parser_push(p, data + 4, len - 4, 0, v7m_cov_pkt, c), 0);
    cr_assert_geq(tb_parser_finish(p, v7m_cov_pkt, c), 0);
    tb_parser_free(p);
    tb_decoder_free(c->d);
    return 0;
}

Test(fuzz_regressions, etmv3_seeds_reach_v7m_returns)
{
    static const char *const want[] = {"etmv3.v7m.return", "etmv3.v7m.tailchain",
                                        "etmv3.v7m.return_cancelled"};
    static v7m_cov c;

    cr_assert_gt(tb_fuzz_seeds("etmv3_decoder", v7m_cov_seed, &c), 0);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int v = tb_speccov_variant_find(want[i]);

        cr_assert_geq(v, 0, "%s", want[i]);
        cr_expect_gt(c.counts[v], 0, "no ETMv3 seed has %s", want[i]);
    }
}
