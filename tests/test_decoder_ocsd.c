/*
 * Real-silicon acceptance against OpenCSD, for the traces with no DS-5
 * dump: Snowball PTM1.0 (0x10, 0x11) and trace_cov_a15 (PTM1.1, raw
 * source_data).  OpenCSD's trc_pkt_lister runs live here and its
 * INSTR_RANGE elements must equal ours range for range (start, end,
 * instruction count, ISA, E/N of the waypoint).  OpenCSD's known bugs
 * (protocol-notes 4.4) would show as differences; none of them occurs in
 * these traces (no A32 ERET, no PTM atom with an unknown address), so
 * the comparison is exact.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tb_test.h"
#include "tracebench/decoder.h"

typedef struct rng {
    uint32_t start, end, count;
    uint8_t isa;
    char atom;
} rng;

typedef struct rngs {
    rng *v;
    size_t n, cap;
    unsigned nacc, exc;
} rngs;

static void push(rngs *r, uint32_t start, uint32_t end, uint32_t count, uint8_t isa,
                 char atom)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 1024;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
        cr_assert_not_null(r->v);
    }
    r->v[r->n++] = (rng){start, end, count, isa, atom};
}

/* Runs trc_pkt_lister -decode; false when the tool is missing. */
static bool run_ocsd(const char *dir, int id, rngs *out)
{
    char log[256], cmd[2048], line[1024];
    FILE *f;
    int rc;

    snprintf(log, sizeof log, "/tmp/tb_ocsd_%d_%x.ppl", (int)getpid(), id);
    if (id >= 0)
        snprintf(cmd, sizeof cmd,
                 "trc_pkt_lister -ss_dir '%s' -id 0x%x -decode -no_time_print "
                 "-logfilename %s >/dev/null 2>&1", dir, id, log);
    else
        snprintf(cmd, sizeof cmd,
                 "trc_pkt_lister -ss_dir '%s' -decode -no_time_print "
                 "-logfilename %s >/dev/null 2>&1", dir, log);
    rc = system(cmd);
    f = fopen(log, "r");
    if (rc != 0 || !f) {
        if (f)
            fclose(f);
        remove(log);
        return false;
    }
    while (fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=");
        unsigned start, end, num, sz;
        char isa[8], atom;

        if (strstr(line, "OCSD_GEN_TRC_ELEM_ADDR_NACC"))
            out->nacc++;
        if (strstr(line, "OCSD_GEN_TRC_ELEM_EXCEPTION("))
            out->exc++;
        if (!p)
            continue;
        p += strlen("OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=");
        cr_assert_eq(sscanf(p, "0x%x:[0x%x] num_i(%u) last_sz(%u) (ISA=%7[^)]) %c", &start,
                            &end, &num, &sz, isa, &atom), 6, "unparsed: %s", line);
        push(out, start, end, num, strcmp(isa, "A32") == 0 ? TB_ISA_ARM : TB_ISA_THUMB, atom);
    }
    fclose(f);
    remove(log);
    return true;
}

static int on_elem(void *ctx, const tb_element *el)
{
    rngs *r = ctx;

    if (el->kind == TB_ELEM_INSN_RANGE)
        push(r, el->start, el->end, el->count, el->isa, el->last_atom);
    else if (el->kind == TB_ELEM_ADDR_NACC)
        r->nacc++;
    else if (el->kind == TB_ELEM_EXCEPTION)
        r->exc++;
    return 0;
}

static void compare(const char *sub, int id, size_t want_ranges)
{
    const char *ref = tb_test_reference_dir("decoder vs OpenCSD");
    char dir[1100], err[256];
    rngs theirs = {0}, ours = {0};
    uint64_t insns = 0;

    if (!ref)
        return;
    snprintf(dir, sizeof dir, "%s/opencsd-snapshots/%s", ref, sub);
    if (!run_ocsd(dir, id, &theirs)) {
        const char *ci = getenv("CI");

        if (ci && strcmp(ci, "true") == 0)
            cr_assert_fail("trc_pkt_lister (libopencsd-bin) is required under CI");
        fprintf(stderr, "\n*** SKIPPED: trc_pkt_lister not available ***\n\n");
        cr_skip_test("trc_pkt_lister not available");
    }
    cr_assert_eq(tb_decode_snapshot(dir, id, on_elem, &ours, err, sizeof err), 0, "%s", err);
    for (size_t i = 0; i < theirs.n && i < ours.n; i++) {
        const rng *a = &theirs.v[i], *b = &ours.v[i];

        cr_assert(a->start == b->start && a->end == b->end && a->count == b->count &&
                      a->isa == b->isa && a->atom == b->atom,
                  "%s 0x%x range %zu: OpenCSD 0x%08x-0x%08x n=%u %s %c, ours 0x%08x-0x%08x "
                  "n=%u %s %c", sub, id, i, a->start, a->end, a->count,
                  tb_isa_name((tb_isa)a->isa), a->atom, b->start, b->end, b->count,
                  tb_isa_name((tb_isa)b->isa), b->atom);
        insns += a->count;
    }
    cr_assert_eq(ours.n, theirs.n, "%s 0x%x: %zu ranges, OpenCSD %zu", sub, id, ours.n,
                 theirs.n);
    cr_assert_eq(ours.n, want_ranges);
    cr_assert_eq(ours.exc, theirs.exc, "exceptions");
    cr_assert_eq(ours.nacc, theirs.nacc, "NACC");
    cr_log_info("%s 0x%x: %zu ranges, %" PRIu64 " instructions, %u exceptions, %u NACC equal "
                "OpenCSD", sub, id, ours.n, insns, ours.exc, ours.nacc);
    free(theirs.v);
    free(ours.v);
}

Test(decoder_ocsd, snowball_ptm10_0x10)
{
    compare("Snowball", 0x10, 683);
}

Test(decoder_ocsd, snowball_ptm10_0x11)
{
    compare("Snowball", 0x11, 569);
}

Test(decoder_ocsd, trace_cov_a15)
{
    compare("trace_cov_a15", -1, 20);
}
