/* tracebench vectors --spec-coverage [--markdown] [--list FILE] [--out DIR]
 * (--coverage: its old name, kept as an alias)
 *
 * Spec coverage of the conformance vectors: counts every catalogue
 * variant (vectors/spec-coverage.tsv, next to the vector list) over each
 * snapshot directory under --out (default: the list's directory
 * /generated), from the packets themselves, and prints the table
 * (--markdown: as Markdown, for the vectors README).  Exits 1 when a
 * variant the catalogue marks reachable occurs in no vector, or one it
 * marks unreachable occurs in some, naming each.
 * cmd_vectors.c hands its whole argument list over on --spec-coverage.
 * Not code coverage (`tracebench coverage`, cmd_coverage.c).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "speccov.h"

#define WHO "tracebench vectors --spec-coverage"

void tb_cli_vectors_dir(const char *list, char *base, size_t len)
{
    char *slash;

    snprintf(base, len, "%s", list);
    slash = strrchr(base, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(base, len, ".");
}

int tb_cli_vectors_speccov(int argc, char **argv)
{
    const char *list = "vectors/vectors.ini", *out = NULL;
    bool markdown = false;
    char base[1024], cat_path[1100], gen[1100], err[600] = "";
    static tb_speccov_tally t;
    tb_speccov_catalogue cat;
    unsigned reachable = 0, unreachable = 0, zero = 0;
    int n, status = 0;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--list") && i + 1 < argc)
            list = argv[++i];
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--markdown"))
            markdown = true;
        else if (strcmp(argv[i], "--spec-coverage") && strcmp(argv[i], "--coverage")) {
            fprintf(stderr, WHO ": %s '%s' (it takes --markdown, "
                            "--list FILE, --out DIR)\n(tracebench vectors --help for usage)\n",
                    argv[i][0] == '-' ? "unknown option or one without its value" : "unknown argument",
                    argv[i]);
            return TB_EXIT_USAGE;
        }
    }
    tb_cli_vectors_dir(list, base, sizeof base);
    snprintf(cat_path, sizeof cat_path, "%s/spec-coverage.tsv", base);
    snprintf(gen, sizeof gen, "%s/generated", base);
    if (!out)
        out = gen;
    if (tb_speccov_catalogue_load(&cat, cat_path, err, sizeof err) < 0) {
        fprintf(stderr, WHO ": %s\n", err);
        return TB_EXIT_ERROR;
    }
    memset(&t, 0, sizeof t);
    n = tb_speccov_count_dir(out, &t, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, WHO ": %s\n", err);
        tb_speccov_catalogue_free(&cat);
        return TB_EXIT_ERROR;
    }
    if (markdown) {
        int need = tb_speccov_format_markdown(&cat, &t, NULL, 0);
        char *md = need >= 0 ? malloc((size_t)need + 1) : NULL;

        if (!md) {
            fprintf(stderr, WHO ": out of memory\n");
            tb_speccov_catalogue_free(&cat);
            return TB_EXIT_ERROR;
        }
        tb_speccov_format_markdown(&cat, &t, md, (size_t)need + 1);
        fputs(md, stdout);
        free(md);
    } else {
        printf("%-32s %9s %7s  %s\n", "variant", "count", "vectors", "status");
    }
    for (size_t i = 0; i < cat.n; i++) {
        const tb_speccov_row *r = &cat.rows[i];
        bool reach = tb_speccov_row_reachable(r);

        reachable += reach;
        unreachable += !reach;
        zero += reach && !t.count[r->var];
        if (!markdown)
            printf("%-32s %9llu %7u  %s\n", r->id, (unsigned long long)t.count[r->var],
                   (unsigned)t.vectors[r->var], r->status);
    }
    if (!markdown)
        printf("\n%zu variants over %d vectors (%llu packets): %u reachable, %u of them "
               "in no vector; %u unreachable\n",
               cat.n, n, (unsigned long long)t.packets, reachable, zero, unreachable);
    if (t.bad)
        fprintf(stderr, WHO ": %llu bad or incomplete packets "
                        "in the vectors\n", (unsigned long long)t.bad);
    for (size_t i = 0; i < cat.n; i++) {
        const tb_speccov_row *r = &cat.rows[i];

        if (tb_speccov_row_reachable(r) && !t.count[r->var]) {
            fprintf(stderr, "spec coverage: reachable variant %s (%s) occurs in no vector\n",
                    r->id, r->desc);
            status = TB_EXIT_DIFF;
        }
        /* The other way too: a row that says why no vector can reach it
         * is stale once one does. */
        if (!tb_speccov_row_reachable(r) && t.count[r->var]) {
            fprintf(stderr, "spec coverage: variant %s is marked unreachable but occurs %llu "
                            "times in %u vectors: mark it reachable in spec-coverage.tsv\n",
                    r->id, (unsigned long long)t.count[r->var], (unsigned)t.vectors[r->var]);
            status = TB_EXIT_DIFF;
        }
    }
    tb_speccov_catalogue_free(&cat);
    return status;
}
