/*
 * Generator harness (issue 29, docs/gen.md): the kept-seed table parser
 * (roundtrip/gen_seeds.c) reads the input as text, and the program
 * generator (gen/gen.c) makes a program from the input's first bytes
 * (seed, ISA, size).  Invariants: a parsed row is within its fields'
 * bounds and a refused table names a line; a generated program is
 * deterministic (twice the same bytes) and holds its entry points; a bad
 * size or ISA is refused, never generated.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tracebench/gen.h"
#include "tracebench/roundtrip.h"

int tb_fuzz_gen(const uint8_t *data, size_t len)
{
    char *text, err[256];
    tb_rt_seed_row *rows = NULL;
    size_t n = 0;
    int rc;

    if (len > TB_FUZZ_MAX_INPUT)
        len = TB_FUZZ_MAX_INPUT;
    if (!(text = malloc(len + 1)))
        return 0;
    memcpy(text, data, len);
    text[len] = '\0';
    rc = tb_rt_seed_table_parse(text, &rows, &n, err, sizeof err);
    TB_FUZZ_CHECK("gen", rc == 0 || rc == TB_ERR_FORMAT || rc == TB_ERR_NOMEM,
                  "table parser returned %d", rc);
    if (rc == TB_ERR_FORMAT)
        TB_FUZZ_CHECK("gen", !strncmp(err, "line ", 5), "refusal names no line: %s", err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        TB_FUZZ_CHECK("gen", rows[i].size >= 1 && rows[i].size <= TB_GEN_SIZE_MAX,
                      "row size %u", rows[i].size);
        TB_FUZZ_CHECK("gen", rows[i].isa >= 0 && rows[i].isa <= TB_GEN_M, "row isa");
        TB_FUZZ_CHECK("gen", strlen(rows[i].options) < sizeof rows[i].options, "options");
        TB_FUZZ_CHECK("gen", !rows[i].known || rows[i].cls[0], "KNOWN without a class");
    }
    free(rows);
    free(text);

    if (len >= 10) {
        tb_gen_opts o;
        tb_gen_program a, b;
        uint64_t seed = 0;

        for (int i = 0; i < 8; i++)
            seed = seed << 8 | data[i];
        /* Sizes 0..24 (and one above the maximum), ISAs -2..4 (3: a
         * Cortex-M program): the bad ones must be refused. */
        o.seed = seed;
        o.isa = (int)(data[8] % 7) - 2;
        o.size = data[9] == 0xFF ? TB_GEN_SIZE_MAX + 1 : data[9] % 25u;
        rc = tb_gen_make(&o, &a, err, sizeof err);
        if (o.size > TB_GEN_SIZE_MAX || o.isa < -1 || o.isa > TB_GEN_M) {
            TB_FUZZ_CHECK("gen", rc == TB_ERR_INVAL, "bad options accepted (%d)", rc);
        } else if (rc == 0) {
            TB_FUZZ_CHECK("gen", tb_gen_make(&o, &b, err, sizeof err) == 0, "second make");
            TB_FUZZ_CHECK("gen", !strcmp(a.source, b.source) && !strcmp(a.scenario, b.scenario) &&
                          !strcmp(a.ldscript, b.ldscript), "not deterministic");
            TB_FUZZ_CHECK("gen", strstr(a.source, "\nmain:\n") && strstr(a.source, "\n_exit:\n") &&
                          strstr(a.source, "\n_reset:\n"), "entry points missing");
            TB_FUZZ_CHECK("gen", a.stats.est_insns > 0, "no bound");
            tb_gen_program_fini(&a);
            tb_gen_program_fini(&b);
        } else {
            TB_FUZZ_CHECK("gen", rc == TB_ERR_NOMEM, "make refused good options: %d %s", rc, err);
        }
    }
    return 0;
}
