/*
 * The expected decode against a decoder's items, instruction by
 * instruction, streaming (the expected file is read as the output comes).
 *
 * The rules (docs/vectors.md, "The addr format" and "Test your decoder"):
 * - Each instruction line must equal the expected one: address, ISA and
 *   atom (E/N), or a NACC / unknown-address line the same.
 * - `# gap` in the expected decode: the trace does not carry what ran
 *   there.  What the decoder prints in a gap is not an error: its lines
 *   are passed over up to the first instruction after the gap (address
 *   and ISA).  Never reaching it is: that skips traced code.
 * - `# lost` in the expected decode is read as a gap, also before the
 *   first instruction and after the last (the trace there is corrupt).
 * - A decoder's own `# gap` lines are not compared: where it opens a gap
 *   the expected decode has none, the instructions after it show whether
 *   it skipped anything.  Its `# lost` lines outside an expected gap are
 *   a divergence: it reports corruption in trace that has none.
 * - Lines not in the format are a divergence.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"

struct tb_conform_cmp {
    FILE *f;
    char *buf;
    size_t cap;
    uint64_t lineno;           /* expected lines read */
    /* The next expected instruction line. */
    tb_conform_item cur;
    uint64_t cur_line;
    char cur_text[96];
    bool exp_done;             /* none left */
    bool in_gap;               /* a gap or loss stands before it */
    char gap_text[96];         /* that line */
    uint64_t gap_line;
    bool tail_lost;            /* the expected decode ends in a loss */
    /* The first instruction passed over in the current gap. */
    bool skipped;
    tb_conform_item skip_item;
    uint64_t skip_line;
    char skip_raw[320];
    bool diverged;
    tb_conform_divergence div;
    char err[256];
    tb_conform_counts counts;
    char ring[3][96];          /* the last agreed expected lines */
    unsigned n_ring, ring_pos;
};

/* Reads expected lines up to the next instruction line.  -1 on a bad
 * line. */
static int advance(tb_conform_cmp *c)
{
    ssize_t n;

    for (;;) {
        n = getline(&c->buf, &c->cap, c->f);
        if (n < 0) {
            c->exp_done = true;
            if (c->in_gap && !strncmp(c->gap_text, "# lost", 6))
                c->tail_lost = true;
            return 0;
        }
        while (n > 0 && (c->buf[n - 1] == '\n' || c->buf[n - 1] == '\r'))
            c->buf[--n] = '\0';
        c->lineno++;
        tb_conform_parse_addr(c->buf, false, &c->cur);
        switch (c->cur.kind) {
        case TB_CI_NONE:
            continue;
        case TB_CI_GAP:
        case TB_CI_LOST:
            /* One marker stands for the gap; an overflow's or a loss's
             * wins for the report. */
            if (!c->in_gap || c->cur.kind == TB_CI_LOST) {
                tb_conform_item_text(&c->cur, c->gap_text, sizeof c->gap_text);
                c->gap_line = c->lineno;
            }
            c->in_gap = true;
            continue;
        case TB_CI_BAD:
            snprintf(c->err, sizeof c->err, "expected decode, line %llu: %s: %.80s",
                     (unsigned long long)c->lineno, c->cur.word, c->buf);
            return -1;
        default:
            c->cur_line = c->lineno;
            tb_conform_item_text(&c->cur, c->cur_text, sizeof c->cur_text);
            c->counts.exp_insns++;
            return 0;
        }
    }
}

tb_conform_cmp *tb_conform_cmp_new(const char *path, char *err, size_t errlen)
{
    tb_conform_cmp *c = calloc(1, sizeof *c);

    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->f = fopen(path, "r");
    if (!c->f) {
        snprintf(err, errlen, "%s: cannot open the expected decode", path);
        free(c);
        return NULL;
    }
    if (advance(c) < 0) {
        snprintf(err, errlen, "%s: %s", path, c->err);
        tb_conform_cmp_free(c);
        return NULL;
    }
    return c;
}

void tb_conform_cmp_free(tb_conform_cmp *c)
{
    if (!c)
        return;
    if (c->f)
        fclose(c->f);
    free(c->buf);
    free(c);
}

static void diverge(tb_conform_cmp *c, const tb_conform_item *got, uint64_t line, const char *raw,
                    const char *why)
{
    tb_conform_divergence *d = &c->div;

    c->diverged = true;
    memset(d, 0, sizeof *d);
    if (c->exp_done) {
        d->exp_line = 0;
        snprintf(d->exp_text, sizeof d->exp_text, "(end of the expected decode)");
    } else {
        d->exp_line = c->cur_line;
        snprintf(d->exp_text, sizeof d->exp_text, "%s", c->cur_text);
    }
    if (got) {
        d->got_line = line;
        tb_conform_item_text(got, d->got_text, sizeof d->got_text);
        snprintf(d->got_raw, sizeof d->got_raw, "%s", raw ? raw : "");
    } else {
        d->got_line = 0;
        snprintf(d->got_text, sizeof d->got_text, "(end of output)");
    }
    snprintf(d->why, sizeof d->why, "%s", why);
    d->agreed = c->counts.agreed;
    for (unsigned k = 0; k < c->n_ring; k++)
        snprintf(d->context[k], sizeof d->context[k], "%s",
                 c->ring[(c->ring_pos + 3 - c->n_ring + k) % 3]);
    d->n_context = c->n_ring;
}

static int agree(tb_conform_cmp *c)
{
    snprintf(c->ring[c->ring_pos], sizeof c->ring[0], "%s", c->cur_text);
    c->ring_pos = (c->ring_pos + 1) % 3;
    if (c->n_ring < 3)
        c->n_ring++;
    c->counts.agreed++;
    c->in_gap = false;
    c->skipped = false;
    return advance(c);
}

/* Why got is not cur, in words ("" when it is). */
static void differs(const tb_conform_item *e, const tb_conform_item *g, char *why, size_t len)
{
    why[0] = '\0';
    if (e->kind != g->kind) {
        if (g->kind == TB_CI_NACC)
            snprintf(why, len, "the decoder found no code at 0x%08X (NACC) where an "
                               "instruction was traced", (unsigned)g->addr);
        else if (e->kind == TB_CI_NACC)
            snprintf(why, len, "the expected decode has no code there (NACC)");
        else
            snprintf(why, len, "a line of another kind");
    } else if (e->kind != TB_CI_UNKNOWN && e->addr != g->addr) {
        snprintf(why, len, "the address differs");
    } else if (e->kind == TB_CI_INSN && strcmp(e->isa, g->isa)) {
        snprintf(why, len, "the ISA differs: %s traced, %s shown", e->isa, g->isa);
    } else if (e->kind != TB_CI_NACC && e->atom != g->atom) {
        snprintf(why, len, "the atom differs: %c traced (%s), %c shown", e->atom,
                 e->atom == 'N' ? "condition failed" : "executed", g->atom);
    }
}

int tb_conform_cmp_push(tb_conform_cmp *c, const tb_conform_item *it, uint64_t line,
                        const char *raw)
{
    char why[256];

    if (c->err[0])
        return -1;
    if (c->diverged)
        return 1;
    switch (it->kind) {
    case TB_CI_NONE:
        return 0;
    case TB_CI_GAP:
        c->counts.got_markers++;
        return 0;
    case TB_CI_LOST:
        c->counts.got_markers++;
        if (c->in_gap || c->tail_lost)
            return 0;
        diverge(c, it, line, raw, c->exp_done
                ? "the decoder reports trace lost after the last traced instruction: the trace is not corrupt there"
                : "the decoder reports trace lost: the trace is not corrupt there");
        return 1;
    case TB_CI_BAD:
        snprintf(why, sizeof why, "a line not in the output form: %s", it->word);
        diverge(c, it, line, raw, why);
        return 1;
    default:
        break;
    }
    c->counts.got_insns++;
    if (c->exp_done) {
        if (c->tail_lost) {
            c->counts.gap_skipped++;
            return 0;
        }
        diverge(c, it, line, raw, "the decoder shows more than was traced");
        return 1;
    }
    if (c->in_gap) {
        /* Passed over until the first instruction after the gap. */
        bool same = it->kind == c->cur.kind && it->addr == c->cur.addr &&
                    (it->kind != TB_CI_INSN || !strcmp(it->isa, c->cur.isa));

        if (!same) {
            if (!c->skipped) {
                c->skipped = true;
                c->skip_item = *it;
                c->skip_line = line;
                snprintf(c->skip_raw, sizeof c->skip_raw, "%s", raw ? raw : "");
            }
            c->counts.gap_skipped++;
            return 0;
        }
    }
    differs(&c->cur, it, why, sizeof why);
    if (why[0]) {
        diverge(c, it, line, raw, why);
        return 1;
    }
    return agree(c) < 0 ? -1 : 0;
}

int tb_conform_cmp_finish(tb_conform_cmp *c)
{
    char why[256];

    if (c->err[0])
        return -1;
    if (!c->diverged && !c->exp_done) {
        if (c->in_gap && c->skipped) {
            snprintf(why, sizeof why, "after the gap (expected line %llu, \"%s\") the decoder "
                                      "never shows the next traced instruction: it skipped "
                                      "traced code",
                     (unsigned long long)c->gap_line, c->gap_text);
            diverge(c, &c->skip_item, c->skip_line, c->skip_raw, why);
        } else {
            diverge(c, NULL, 0, NULL, "the output ends before the expected decode does");
        }
    }
    /* The rest of the expected decode, for the count. */
    while (!c->exp_done)
        if (advance(c) < 0)
            return -1;
    return c->diverged;
}

bool tb_conform_cmp_diverged(const tb_conform_cmp *c)
{
    return c->diverged;
}

const tb_conform_divergence *tb_conform_cmp_divergence(const tb_conform_cmp *c)
{
    return &c->div;
}

const char *tb_conform_cmp_error(const tb_conform_cmp *c)
{
    return c->err;
}

const tb_conform_counts *tb_conform_cmp_counts(const tb_conform_cmp *c)
{
    return &c->counts;
}
