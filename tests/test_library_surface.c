/*
 * The library as a user of its installed headers meets it (issue 31
 * item 8):
 *   - an installed header cites nothing a user does not have: no source
 *     file of the tree (decoder/etmv3_decoder.c), no fact sheet outside
 *     it (protocol-notes, shared/docs), no issue number; the docs/NAME.md
 *     it cites exist (and are installed under share/doc/tracebench/docs,
 *     which scripts/check-install.sh checks);
 *   - the library's error strings speak of the library's own words, not
 *     of the command line's flags ("give --id", "use --protocol");
 *   - TB_ERR_NOT_IN_IMAGE (code not in the memory image) is named so,
 *     apart from TB_ERR_NOMEM (allocation failed); TB_ERR_NO_MEMORY stays
 *     as its old name.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tb_test.h"
#include "tracebench/encoder.h"
#include "tracebench/snapshot.h"
#include "tracebench/stream.h"

/* The headers `cmake --install` puts in include/tracebench: all but the
 * simulator's, the round trip's, the generator's and analysis/'s
 * (cmake/install.cmake). */
static bool installed(const char *name)
{
    size_t n = strlen(name);

    return n > 2 && !strcmp(name + n - 2, ".h") && strcmp(name, "sim.h") &&
           strcmp(name, "roundtrip.h") && strcmp(name, "gen.h") && strcmp(name, "codecov.h") &&
           strcmp(name, "profile.h") && strcmp(name, "elfinfo.h");
}

Test(library_surface, installed_headers_cite_what_is_installed)
{
    static const char *const banned[] = {
        "[a-z_0-9]+/[a-z_0-9]+\\.c([^a-z_0-9]|$)", /* a source file of the tree */
        "[a-z_0-9]+\\.c[),]",                       /* one named bare */
        "protocol-notes",                           /* the fact sheet outside the tree */
        "shared/docs",
        "etmv3-data\\.md|etmv1-v2\\.md",            /* its files */
        "[Ii]ssue [0-9]",                           /* the tracker */
    };
    regex_t re[sizeof banned / sizeof banned[0]], doc;
    char dir[1024];
    DIR *d;
    struct dirent *e;
    unsigned headers = 0, cites = 0;

    for (size_t k = 0; k < sizeof banned / sizeof banned[0]; k++)
        cr_assert_eq(regcomp(&re[k], banned[k], REG_EXTENDED | REG_NOSUB), 0);
    cr_assert_eq(regcomp(&doc, "docs/[A-Za-z0-9_.-]+\\.md", REG_EXTENDED), 0);
    snprintf(dir, sizeof dir, "%s/include/tracebench", TB_SOURCE_DIR);
    d = opendir(dir);
    cr_assert_not_null(d);
    while ((e = readdir(d))) {
        char path[1400], line[1024];
        FILE *f;
        unsigned no = 0;

        if (!installed(e->d_name))
            continue;
        headers++;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        f = fopen(path, "r");
        cr_assert_not_null(f);
        while (fgets(line, sizeof line, f)) {
            const char *p = line;
            regmatch_t m;

            no++;
            for (size_t k = 0; k < sizeof banned / sizeof banned[0]; k++)
                cr_expect_neq(regexec(&re[k], line, 0, NULL, 0), 0,
                              "%s:%u cites what is not installed (/%s/): %s", e->d_name, no,
                              banned[k], line);
            while (regexec(&doc, p, 1, &m, 0) == 0) {
                char cited[1400];

                snprintf(cited, sizeof cited, "%s/%.*s", TB_SOURCE_DIR,
                         (int)(m.rm_eo - m.rm_so), p + m.rm_so);
                cr_expect_eq(access(cited, R_OK), 0, "%s:%u cites %s, which does not exist",
                             e->d_name, no, cited);
                cites++;
                p += m.rm_eo;
            }
        }
        fclose(f);
    }
    closedir(d);
    for (size_t k = 0; k < sizeof banned / sizeof banned[0]; k++)
        regfree(&re[k]);
    regfree(&doc);
    cr_expect_geq(headers, 15, "only %u headers", headers);
    cr_expect_geq(cites, 10, "only %u docs/ citations: the check saw none?", cites);
}

static void no_flag_words(const char *what, const char *err)
{
    cr_expect(!strstr(err, "--"), "%s: a command-line flag in a library string: %s", what,
              err);
    cr_expect_gt(strlen(err), 0, "%s: no reason given", what);
}

Test(library_surface, error_strings_name_no_flags)
{
    static const struct {
        tb_protocol p;
        const char *opts;
    } bad[] = {
        {TB_PROTO_ETMV3, "rs"},           {TB_PROTO_PTM, "alt"},
        {TB_PROTO_PTM, "ts48,ts"},        {TB_PROTO_PTM, "data=both"},
        {TB_PROTO_PTM, "ccpkt,ca"},       {TB_PROTO_ETMV1, "dual"},
        {TB_PROTO_PTM, "pcfirst"},        {TB_PROTO_ETMV3, "v=3,ts"},
    };
    tb_snapshot s;
    const tb_snap_source *out[8];
    char dir[1024], err[1024];
    int n;

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tb_encoder_opts o;
        tb_config cfg;

        tb_encoder_opts_init(&o, bad[i].p);
        cr_assert_eq(tb_encoder_opts_parse(&o, bad[i].opts, err, sizeof err), 0, "%s: %s",
                     bad[i].opts, err);
        err[0] = '\0';
        cr_expect_lt(tb_encoder_config_err(&o, &cfg, err, sizeof err), 0, "%s",
                     bad[i].opts);
        no_flag_words(bad[i].opts, err);
    }
    err[0] = '\0';
    {
        tb_encoder_opts o;

        tb_encoder_opts_init(&o, TB_PROTO_PTM);
        cr_expect_lt(tb_encoder_opts_parse(&o, "ca,,ts", err, sizeof err), 0);
        no_flag_words("ca,,ts", err);
    }
    /* Two sources, none chosen; an ID that is not there. */
    snprintf(dir, sizeof dir, "%s/vectors/generated/two_sources-ptm-etmv3", TB_SOURCE_DIR);
    cr_assert_eq(tb_snapshot_load(&s, dir, err, sizeof err), 0, "%s", err);
    n = tb_stream_select(&s, TB_STREAM_ONLY, out, 8, err, sizeof err);
    cr_expect_eq(n, TB_ERR_INVAL);
    cr_expect(strstr(err, "0x10") && strstr(err, "0x11"), "%s", err);
    no_flag_words("two sources", err);
    n = tb_stream_select(&s, 0x33, out, 8, err, sizeof err);
    cr_expect_eq(n, TB_ERR_NOT_FOUND);
    no_flag_words("no such ID", err);
    tb_snapshot_fini(&s);
}

Test(library_surface, not_in_image_is_not_out_of_memory)
{
    cr_expect_neq(TB_ERR_NOT_IN_IMAGE, TB_ERR_NOMEM);
    cr_expect_eq(TB_ERR_NO_MEMORY, TB_ERR_NOT_IN_IMAGE, "the old name is an alias");
    cr_expect(strstr(tb_err_str(TB_ERR_NOT_IN_IMAGE), "memory image"), "%s",
              tb_err_str(TB_ERR_NOT_IN_IMAGE));
    cr_expect(!strstr(tb_err_str(TB_ERR_NOMEM), "image"), "%s", tb_err_str(TB_ERR_NOMEM));
}

/* ---- The size field of a struct that may grow (tb_stream_opts) ----
 * As libipt's pt_config.size: the library reads only the bytes the
 * caller's struct has, so a caller built against an older, smaller
 * struct still works (the fields it lacks take their defaults), and a
 * zero or garbage size is refused with a reason.  Observed through
 * tb_stream_file on a raw file: read_chunk and max_chunk set the largest
 * delivery. */

#define RAW_LEN 1000

typedef struct deliveries {
    size_t n, max, total;
} deliveries;

static int count_delivery(void *ctx, uint64_t index, const uint8_t *data, size_t len)
{
    deliveries *d = ctx;

    (void)index;
    (void)data;
    d->n++;
    d->total += len;
    if (len > d->max)
        d->max = len;
    return 0;
}

static int count_span(void *ctx, const uint8_t *data, size_t len, const tb_span_map *map)
{
    (void)map;
    return count_delivery(ctx, 0, data, len);
}

/* The caller's bytes: a struct of `size` bytes whose fields are given,
 * inside a buffer of words 3: the garbage that a library reading past
 * the caller's struct would take for max_chunk (and gaps). */
typedef union caller_opts {
    tb_stream_opts o;
    size_t w[16];
    unsigned char b[16 * sizeof(size_t)];
} caller_opts;

typedef struct size_case {
    const char *what;
    size_t size;            /* the struct's size field */
    size_t words;           /* its size in size_t words (the rest: 0xFF) */
    size_t read_chunk, max_chunk;
    int want;               /* tb_stream_file's return */
    size_t want_max;        /* the largest delivery (want 0) */
} size_case;

Test(library_surface, stream_opts_size_field)
{
    const size_t full = sizeof(tb_stream_opts);
    const size_case cases[] = {
        /* This build's struct: max_chunk is honoured. */
        {"current", full, full / sizeof(size_t), 100, 7, 0, 7},
        /* An older caller's {size, read_chunk}: the 0xFF after it is
         * not max_chunk (nor gaps), so deliveries are read_chunk's. */
        {"older, smaller", TB_STREAM_OPTS_SIZE_MIN, 2, 100, 0, 0, 100},
        /* A newer caller's larger struct, its extra field zero. */
        {"newer, larger", full + sizeof(size_t), full / sizeof(size_t) + 1, 100, 7, 0, 7},
        {"zero size (no init)", 0, full / sizeof(size_t), 100, 7, TB_ERR_INVAL, 0},
        {"below the oldest", sizeof(size_t), 1, 100, 7, TB_ERR_INVAL, 0},
        {"garbage", (size_t)0xDEADBEEFu, full / sizeof(size_t), 100, 7, TB_ERR_INVAL, 0},
    };
    char dir[256], path[300], err[300];
    unsigned char raw[RAW_LEN];
    FILE *f;

    tb_test_scratch_make(dir, sizeof dir, "opts_size");
    snprintf(path, sizeof path, "%s/raw.bin", dir);
    for (size_t i = 0; i < sizeof raw; i++)
        raw[i] = (unsigned char)(i * 7);
    f = fopen(path, "wb");
    cr_assert(f && fwrite(raw, 1, sizeof raw, f) == sizeof raw);
    fclose(f);
    {
        /* tb_stream_opts_init: this build's size, the defaults. */
        tb_stream_opts o;

        memset(&o, 0xFF, sizeof o);
        tb_stream_opts_init(&o);
        cr_expect(o.size == full && !o.read_chunk && !o.max_chunk && !o.gaps);
    }
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const size_case *c = &cases[k];
        caller_opts u;
        deliveries d = {0, 0, 0};
        int r;

        for (size_t w = 0; w < sizeof u.w / sizeof u.w[0]; w++)
            u.w[w] = w < c->words ? 0 : 3;
        u.w[0] = c->size;
        u.w[1] = c->read_chunk;
        if (c->words > 2)
            u.w[2] = c->max_chunk;
        err[0] = 0;
        r = tb_stream_file(path, "source_data", 0x10, &u.o, count_delivery, &d, err,
                           sizeof err);
        cr_expect_eq(r, c->want, "%s: returned %d (%s)", c->what, r, err);
        if (c->want == 0) {
            cr_expect_eq(d.total, RAW_LEN, "%s", c->what);
            cr_expect_eq(d.max, c->want_max, "%s: largest delivery %zu", c->what, d.max);
        } else {
            cr_expect_eq(d.n, 0, "%s: delivered before refusing", c->what);
            cr_expect(strstr(err, "tb_stream_opts.size is") && strstr(err, "tb_stream_opts_init"),
                      "%s: %s", c->what, err);
            /* The span form and the snapshot form refuse it the same way. */
            cr_expect_eq(tb_stream_file_spans(path, "source_data", 0x10, &u.o, count_span, &d,
                                              err, sizeof err), TB_ERR_INVAL, "%s", c->what);
            cr_expect_eq(d.n, 0, "%s: spans delivered before refusing", c->what);
        }
    }
    tb_test_scratch_remove(dir);
}
