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
