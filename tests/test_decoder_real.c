/*
 * Real-silicon acceptance for the full decoder.
 *
 * TC2 (ETMv3.5 0x10-0x12, PTM1.1 0x13): our instruction sequence equals
 * Arm DS-5's decode (TC2/ds5-dumps), instruction for instruction, with
 * the condition failures DS-5 marks, trace-on and exception-return at
 * the same places (protocol-notes 6.2-6.4).  Rows DS-5 could not read
 * (opcode "0x?": memory missing from the dump, or an atom with no known
 * address) carry no address to compare and are skipped, as are our
 * ADDR_NACC / ADDR_UNKNOWN elements, which stand for the same atoms.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tb_test.h"
#include "tracebench/decoder.h"
#include "tracebench/snapshot.h"

/* A token of the comparable stream. */
enum tok_kind { TOK_INSN, TOK_TRACE_ON, TOK_EXC_RET };

typedef struct tok {
    uint8_t kind;
    bool fail;
    uint32_t addr;
} tok;

typedef struct toks {
    tok *v;
    size_t n, cap;
} toks;

static void push(toks *t, uint8_t kind, uint32_t addr, bool fail)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 4096;
        t->v = realloc(t->v, t->cap * sizeof *t->v);
        cr_assert_not_null(t->v);
    }
    t->v[t->n].kind = kind;
    t->v[t->n].addr = addr;
    t->v[t->n].fail = fail;
    t->n++;
}

static void load_ds5(const char *path, toks *t)
{
    FILE *f = fopen(path, "r");
    char line[1024];

    cr_assert_not_null(f, "%s", path);
    while (fgets(line, sizeof line, f)) {
        char *col[9] = {0};
        int n = 0;
        char *p = line;

        line[strcspn(line, "\r\n")] = 0;
        while (n < 9) {
            col[n++] = p;
            p = strchr(p, '\t');
            if (!p)
                break;
            *p++ = 0;
        }
        if (strcmp(col[0], "Info") == 0 && n > 5) {
            if (strcmp(col[5], "Tracing enabled") == 0)
                push(t, TOK_TRACE_ON, 0, false);
            else if (strcmp(col[5], "Return from exception") == 0)
                push(t, TOK_EXC_RET, 0, false);
            continue;
        }
        if (n < 7 || strcmp(col[0], "Instruction") != 0 || strcmp(col[3], "0x?") == 0)
            continue;
        push(t, TOK_INSN, (uint32_t)strtoul(strchr(col[2], ':') + 1, NULL, 16),
             n > 7 && strcmp(col[7], "fail") == 0);
    }
    fclose(f);
}

struct ours {
    toks t;
    tb_memimage *mem;
    tb_protocol proto;
    unsigned ranges, nacc, unknown, nosync_bad;
};

static int on_elem(void *ctx, const tb_element *el)
{
    struct ours *o = ctx;
    switch (el->kind) {
    case TB_ELEM_INSN_RANGE: {
        uint32_t *addrs = malloc(el->count * sizeof *addrs);
        int n;

        cr_assert_not_null(addrs);
        o->ranges++;
        n = tb_range_addrs(o->mem, el, addrs, el->count);
        cr_assert_eq(n, (int)el->count);
        cr_assert_eq(addrs[n - 1], el->last_addr, "range end");
        for (int i = 0; i < n; i++) {
            bool fail;

            /* ETMv3: every instruction has its atom; PTM: only the
             * waypoint ending the range has a known condition. */
            if (o->proto == TB_PROTO_ETMV3)
                fail = (el->atom_bits >> i) & 1;
            else
                fail = i + 1 == n && el->last_atom == 'N';
            push(&o->t, TOK_INSN, addrs[i], fail);
        }
        free(addrs);
        break;
    }
    case TB_ELEM_TRACE_ON:
        if (el->reason != 0)
            push(&o->t, TOK_TRACE_ON, 0, false);
        break;
    case TB_ELEM_EXC_RETURN:
        push(&o->t, TOK_EXC_RET, 0, false);
        break;
    case TB_ELEM_ADDR_NACC:
        o->nacc++;
        break;
    case TB_ELEM_ADDR_UNKNOWN:
        o->unknown++;
        break;
    case TB_ELEM_NO_SYNC:
        if (el->reason != TB_GAP_INIT)
            o->nosync_bad++;
        break;
    default:
        break;
    }
    return 0;
}

static const char *tok_str(const tok *t, char *buf, size_t len)
{
    if (t->kind == TOK_INSN)
        snprintf(buf, len, "insn 0x%08X%s", t->addr, t->fail ? " fail" : "");
    else
        snprintf(buf, len, "%s", t->kind == TOK_TRACE_ON ? "trace-on" : "exc-return");
    return buf;
}

static void compare_ds5(const char *ds5, int id, tb_protocol proto,
                        size_t want_insns)
{
    const char *ref = tb_test_reference_dir("decoder vs DS-5");
    char dir[1100], path[1200], err[256];
    toks want = {0};
    struct ours o = {0};
    tb_snapshot snap;
    int r;
    size_t insns = 0;

    if (!ref)
        return;
    snprintf(dir, sizeof dir, "%s/opencsd-snapshots/TC2", ref);
    snprintf(path, sizeof path, "%s/ds5-dumps/%s", dir, ds5);
    load_ds5(path, &want);

    /* The image, to list the instructions of each range. */
    cr_assert_eq(tb_snapshot_load(&snap, dir, err, sizeof err), 0, "%s", err);
    for (size_t i = 0; i < snap.n_sources; i++) {
        tb_config cfg;

        if (tb_snapshot_source_config(&snap, &snap.sources[i], &cfg, err, sizeof err) == 0 &&
            cfg.trace_id == id)
            cr_assert_geq(tb_snapshot_source_memory(&snap, &snap.sources[i], &o.mem, err,
                                                    sizeof err), 0, "%s", err);
    }
    tb_snapshot_fini(&snap);
    cr_assert_not_null(o.mem);
    o.proto = proto;

    r = tb_decode_snapshot(dir, id, on_elem, &o, err, sizeof err);
    cr_assert_eq(r, 0, "decode 0x%x: %s", id, err);

    for (size_t i = 0; i < want.n && i < o.t.n; i++) {
        char a[64], b[64];

        if (want.v[i].kind != o.t.v[i].kind || want.v[i].addr != o.t.v[i].addr ||
            want.v[i].fail != o.t.v[i].fail)
            cr_assert_fail("0x%x: token %zu (%zu instructions matched): DS-5 %s, ours %s", id,
                           i, insns, tok_str(&want.v[i], a, sizeof a),
                           tok_str(&o.t.v[i], b, sizeof b));
        insns += want.v[i].kind == TOK_INSN;
    }
    cr_assert_eq(o.t.n, want.n, "0x%x: %zu tokens, DS-5 %zu", id, o.t.n, want.n);
    cr_assert_eq(insns, want_insns, "0x%x: %zu instructions", id, insns);
    cr_assert_eq(o.nosync_bad, 0u);
    cr_log_info("0x%x: %zu/%zu instructions equal DS-5 (%u ranges, %u NACC, %u unknown)",
                id, insns, want_insns, o.ranges, o.nacc, o.unknown);
    free(want.v);
    free(o.t.v);
    tb_memimage_free(o.mem);
}

Test(decoder_real, tc2_ptm_0x13_equals_ds5)
{
    compare_ds5("ptmv1_0x13.txt", 0x13, TB_PROTO_PTM, 9548);
}

Test(decoder_real, tc2_etmv3_0x10_equals_ds5)
{
    compare_ds5("etmv3_0x10.txt", 0x10, TB_PROTO_ETMV3, 7205);
}

Test(decoder_real, tc2_etmv3_0x11_equals_ds5)
{
    compare_ds5("etmv3_0x11.txt", 0x11, TB_PROTO_ETMV3, 7471);
}

Test(decoder_real, tc2_etmv3_0x12_equals_ds5)
{
    compare_ds5("etmv3_0x12.txt", 0x12, TB_PROTO_ETMV3, 1947);
}
