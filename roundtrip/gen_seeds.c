/*
 * The kept-seed table (roundtrip/gen_seeds.tsv, docs/gen.md): generated
 * programs the round trip once failed on.  Rows expecting MATCH are
 * regression cases (tests/test_gen.c replays them); rows expecting
 * KNOWN:CLASS fail today for a known reason, and the suite
 * (`roundtrip --suite --known FILE`) and the replay test fail loudly
 * when one matches, so that the list cannot outlive its bugs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebench/gen.h"
#include "tracebench/roundtrip.h"

static int fail(char *err, size_t errlen, unsigned line, const char *why, const char *tok)
{
    if (err && errlen)
        snprintf(err, errlen, "line %u: %s%s%s%s", line, why, tok ? " '" : "", tok ? tok : "",
                 tok ? "'" : "");
    return TB_ERR_FORMAT;
}

static bool u64(const char *s, int base, uint64_t *v)
{
    char *end;
    unsigned long long x;

    if (!*s || *s == '-' || *s == '+')
        return false;
    errno = 0;
    x = strtoull(s, &end, base);
    if (errno || *end)
        return false;
    *v = x;
    return true;
}

int tb_rt_seed_table_parse(const char *text, tb_rt_seed_row **rows, size_t *n, char *err,
                           size_t errlen)
{
    tb_rt_seed_row *v = NULL;
    size_t cnt = 0, cap = 0;
    unsigned line = 0;
    const char *p = text;

    if (err && errlen)
        err[0] = '\0';
    if (!text || !rows || !n)
        return TB_ERR_INVAL;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char buf[1024], *tok[8], *save = NULL, *t;
        unsigned nt = 0;
        tb_rt_seed_row r;
        uint64_t x;

        line++;
        if (len >= sizeof buf) {
            free(v);
            return fail(err, errlen, line, "line too long", NULL);
        }
        memcpy(buf, p, len);
        buf[len] = '\0';
        p += len + (eol ? 1 : 0);
        if ((t = strchr(buf, '#')))
            *t = '\0';
        for (t = strtok_r(buf, " \t\r", &save); t && nt < 8; t = strtok_r(NULL, " \t\r", &save))
            tok[nt++] = t;
        if (!nt)
            continue;
        if (nt != 7) {
            free(v);
            return fail(err, errlen, line, "want 7 fields: seed isa size hash protocol options "
                        "expect", NULL);
        }
        memset(&r, 0, sizeof r);
        r.line = line;
        if (!u64(tok[0], 10, &r.seed)) {
            free(v);
            return fail(err, errlen, line, "bad seed", tok[0]);
        }
        if ((r.isa = tb_gen_isa_parse(tok[1])) < 0) {
            free(v);
            return fail(err, errlen, line, "isa is none of arm, thumb, mixed, m:", tok[1]);
        }
        if (!u64(tok[2], 10, &x) || x < 1 || x > TB_GEN_SIZE_MAX) {
            free(v);
            return fail(err, errlen, line, "bad size", tok[2]);
        }
        r.size = (unsigned)x;
        if (strlen(tok[3]) != 16 || !u64(tok[3], 16, &r.hash)) {
            free(v);
            return fail(err, errlen, line, "hash is not 16 hex digits:", tok[3]);
        }
        if (!strcmp(tok[4], "etmv3"))
            r.protocol = TB_PROTO_ETMV3;
        else if (!strcmp(tok[4], "ptm"))
            r.protocol = TB_PROTO_PTM;
        else if (!strcmp(tok[4], "etmv1"))
            r.protocol = TB_PROTO_ETMV1;
        else if (!strcmp(tok[4], "etmv2"))
            r.protocol = TB_PROTO_ETMV2;
        else {
            free(v);
            return fail(err, errlen, line, "protocol is none of etmv3, ptm, etmv1, etmv2:",
                        tok[4]);
        }
        if (strlen(tok[5]) >= sizeof r.options) {
            free(v);
            return fail(err, errlen, line, "options too long", NULL);
        }
        snprintf(r.options, sizeof r.options, "%s", strcmp(tok[5], "plain") ? tok[5] : "");
        if (!strcmp(tok[6], "MATCH")) {
            r.known = false;
        } else if (!strncmp(tok[6], "KNOWN:", 6) && tok[6][6] &&
                   strlen(tok[6] + 6) < sizeof r.cls) {
            r.known = true;
            snprintf(r.cls, sizeof r.cls, "%s", tok[6] + 6);
        } else {
            free(v);
            return fail(err, errlen, line, "expect is neither MATCH nor KNOWN:CLASS:", tok[6]);
        }
        if (cnt == cap) {
            size_t nc = cap ? cap * 2 : 32;
            tb_rt_seed_row *a = realloc(v, nc * sizeof *a);

            if (!a) {
                free(v);
                return TB_ERR_NOMEM;
            }
            v = a;
            cap = nc;
        }
        v[cnt++] = r;
    }
    *rows = v;
    *n = cnt;
    return 0;
}
