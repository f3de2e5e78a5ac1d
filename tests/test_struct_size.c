/*
 * The size field of the public structs that may grow, tb_config and
 * tb_encoder_opts (issue 30; libipt's pt_config.size): the library reads
 * only the bytes the caller's struct has (an older caller's later fields
 * read as 0), writes back only those (tb_encoder_opts_parse, _v7m,
 * _defaults), and refuses a size of 0 (never initialised) or garbage with
 * TB_ERR_INVAL and a message naming the init function (NULL from a _new).
 * tb_stream_opts' own table is in test_library_surface.c.
 */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../decoder/protocols.h"
#include "tb_test.h"
#include "tracebench/decoder.h"
#include "tracebench/encoder.h"
#include "tracebench/etmv1.h"
#include "tracebench/parser.h"
#include "tracebench/snapshot.h"
#include "tracebench/writer.h"

/* A caller's struct with room after it: a newer caller's larger struct,
 * or the bytes a library reading past an older caller's would see. */
typedef union caller_cfg {
    tb_config c;
    unsigned char b[sizeof(tb_config) + 64];
} caller_cfg;

typedef union caller_opts {
    tb_encoder_opts o;
    unsigned char b[sizeof(tb_encoder_opts) + 64];
} caller_opts;

typedef struct size_case {
    const char *what;
    size_t size;   /* the size field the caller's struct carries */
    bool taken;    /* accepted */
    bool late;     /* the late field (set in the caller's bytes) is seen */
} size_case;

/* This build's size, an older caller's (without the late fields), a newer
 * caller's larger one, 0, and garbage. */
#define SIZE_CASES(T, LATE)                                                       \
    {                                                                             \
        {"this build's", sizeof(T), true, true},                                  \
        {"older (ends before " #LATE ")", offsetof(T, LATE), true, false},        \
        {"newer, larger", sizeof(T) + 16, true, true},                            \
        {"zero (never initialised)", 0, false, false},                            \
        {"below the oldest", sizeof(size_t), false, false},                       \
        {"garbage", (size_t)0xDEADBEEFu, false, false},                           \
    }

/* The per-protocol _new functions of an ETMv3 (etmv3) or PTM
 * configuration: how many gave an object. */
static int made(const tb_config *c, const tb_memimage *mem, bool etmv3)
{
    int n = 0;

    if (etmv3) {
        tb_etmv3_parser *p = tb_etmv3_parser_new(c);
        tb_etmv3_decoder *d = tb_etmv3_decoder_new(c, mem);
        tb_etmv3_writer *w = tb_etmv3_writer_new(c);

        n = (p != NULL) + (d != NULL) + (w != NULL);
        tb_etmv3_parser_free(p);
        tb_etmv3_decoder_free(d);
        tb_etmv3_writer_free(w);
    } else {
        tb_ptm_parser *p = tb_ptm_parser_new(c);
        tb_ptm_decoder *d = tb_ptm_decoder_new(c, mem);
        tb_ptm_writer *w = tb_ptm_writer_new(c);

        n = (p != NULL) + (d != NULL) + (w != NULL);
        tb_ptm_parser_free(p);
        tb_ptm_decoder_free(d);
        tb_ptm_writer_free(w);
    }
    return n;
}

Test(struct_size, config)
{
    const size_case cases[] = SIZE_CASES(tb_config, vector_base);
    /* Some bytes (fwrite of a NULL buffer, even of 0 bytes, is not ours
     * to test here). */
    static const uint8_t trace[4] = {0, 0, 0, 0x80};
    char dir[256], err[300];
    tb_memimage *mem = tb_memimage_new();

    cr_assert(mem);
    tb_test_scratch_make(dir, sizeof dir, "struct_size");
    {
        tb_config c;

        memset(&c, 0xFF, sizeof c);
        tb_config_init(&c, TB_PROTO_PTM);
        cr_expect(c.size == sizeof c && c.protocol == TB_PROTO_PTM && !c.etmcr && !c.v7m);
        memset(&c, 0, sizeof c);
        cr_expect_eq(tb_config_from_regs(&c, 0, 0x411CF312, 0, 0x10), 0);
        cr_expect_eq(c.size, sizeof c, "tb_config_from_regs sets the size");
        memset(&c, 0, sizeof c);
        cr_expect_eq(tb_config_from_etmv1(&c, 0x10, 3, 0), 0);
        cr_expect_eq(c.size, sizeof c, "tb_config_from_etmv1 sets the size");
        memset(&c, 0, sizeof c);
        cr_expect_eq(tb_config_from_etmv2(&c, 0x10, 0, 0), 0);
        cr_expect_eq(c.size, sizeof c, "tb_config_from_etmv2 sets the size");
    }
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const size_case *t = &cases[k];
        caller_cfg v1, v3, ptm;
        tb_etmv1_config e1;
        tb_snap_out_source src;
        tb_parser *p;
        tb_decoder *d;
        tb_writer *w;
        int r;

        /* ETMv1 with its vector base, the last field, set: an older
         * caller's struct has none, so the port reads 0 (from_tb). */
        memset(&v1, 0, sizeof v1);
        cr_assert_eq(tb_config_from_etmv1(&v1.c, 0x10, 3, 0xFFFF0000u), 0);
        v1.c.size = t->size;
        r = tb_etmv1_config_from_tb(&e1, &v1.c);
        cr_expect_eq(r, t->taken ? 0 : TB_ERR_INVAL, "%s: from_tb %d", t->what, r);
        if (t->taken && r == 0)
            cr_expect_eq(e1.vector_base, t->late ? 0xFFFF0000u : 0, "%s: vector base %#x",
                         t->what, (unsigned)e1.vector_base);

        /* The _new functions: NULL for a size refused. */
        memset(&v3, 0, sizeof v3);
        memset(&ptm, 0, sizeof ptm);
        cr_assert_eq(tb_config_from_regs(&v3.c, 0, 0x4114F250, 0, 0x10), 0);
        cr_assert_eq(tb_config_from_regs(&ptm.c, 0, 0x411CF312, 0, 0x10), 0);
        v3.c.size = ptm.c.size = t->size;
        p = tb_parser_new(&v3.c);
        d = tb_decoder_new(&v3.c, mem);
        w = tb_writer_new(&v3.c);
        cr_expect_eq(p != NULL, t->taken, "%s: tb_parser_new", t->what);
        cr_expect_eq(d != NULL, t->taken, "%s: tb_decoder_new", t->what);
        cr_expect_eq(w != NULL, t->taken, "%s: tb_writer_new", t->what);
        tb_parser_free(p);
        tb_decoder_free(d);
        tb_writer_free(w);
        cr_expect_eq(made(&v3.c, mem, true), t->taken ? 3 : 0, "%s: ETMv3 _new", t->what);
        cr_expect_eq(made(&ptm.c, mem, false), t->taken ? 3 : 0, "%s: PTM _new", t->what);

        /* With a message channel: the reason, naming the init function. */
        err[0] = '\0';
        r = tb_encoder_write_snapshot(dir, &v3.c, NULL, 0, trace, sizeof trace, false, err,
                                      sizeof err);
        memset(&src, 0, sizeof src);
        src.name = "ETM_0";
        src.core = "cpu_0";
        src.cfg = &ptm.c;
        if (t->taken) {
            cr_expect_eq(r, 0, "%s: write_snapshot %d (%s)", t->what, r, err);
            cr_expect_eq(tb_snapshot_write(dir, &src, 1, trace, sizeof trace, "source_data",
                                           err, sizeof err), 0, "%s: %s", t->what, err);
            continue;
        }
        cr_expect_eq(r, TB_ERR_INVAL, "%s: write_snapshot %d", t->what, r);
        cr_expect(strstr(err, "tb_config.size is") && strstr(err, "tb_config_init"), "%s: %s",
                  t->what, err);
        err[0] = '\0';
        cr_expect_eq(tb_snapshot_write(dir, &src, 1, trace, sizeof trace, "source_data", err,
                                       sizeof err), TB_ERR_INVAL, "%s", t->what);
        cr_expect(strstr(err, "tb_config_init"), "%s: %s", t->what, err);
        cr_expect_null(tb_encoder_snapshot_open(dir, &v3.c, false, err, sizeof err), "%s",
                       t->what);
        cr_expect(strstr(err, "tb_config_init"), "%s: %s", t->what, err);
    }
    tb_memimage_free(mem);
    tb_test_scratch_remove(dir);
}

Test(struct_size, encoder_opts)
{
    const size_case cases[] = SIZE_CASES(tb_encoder_opts, ts_start);
    char err[300];

    {
        /* tb_encoder_opts_init: this build's size and the defaults;
         * tb_encoder_opts_defaults into an older caller's struct writes
         * its bytes only. */
        caller_opts u;
        const size_t old = offsetof(tb_encoder_opts, ts_start);

        memset(&u, 0xFF, sizeof u);
        tb_encoder_opts_init(&u.o, TB_PROTO_ETMV3);
        cr_expect(u.o.size == sizeof u.o && u.o.trace_id == 0x10 && u.o.ts_rate == 1 &&
                  !u.o.cycle_accurate && !u.o.data_only);
        memset(&u, 0xAB, sizeof u);
        u.o.size = old;
        cr_expect_eq(tb_encoder_opts_defaults(&u.o, TB_PROTO_PTM), 0);
        cr_expect(u.o.size == old && u.o.protocol == TB_PROTO_PTM && u.o.trace_id == 0x10 &&
                  u.o.sync_period == 1024);
        for (size_t i = old; i < sizeof u.b; i++)
            cr_expect_eq(u.b[i], 0xAB, "byte %zu past the caller's struct written", i);
        u.o.size = 0;
        cr_expect_eq(tb_encoder_opts_defaults(&u.o, TB_PROTO_PTM), TB_ERR_INVAL);
    }
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const size_case *t = &cases[k];
        caller_opts u, p;
        tb_encoder_membuf m = {NULL, 0, 0};
        tb_config cfg;
        tb_encoder *e;
        int r;

        /* The late fields set: a 48-bit ETMv3 timestamp with no
         * timestamps is refused, unless the caller's struct ends before
         * it (then ts48 reads as 0). */
        memset(&u, 0, sizeof u);
        tb_encoder_opts_init(&u.o, TB_PROTO_ETMV3);
        u.o.ts48 = true;
        u.o.size = t->size;
        err[0] = '\0';
        r = tb_encoder_config_err(&u.o, &cfg, err, sizeof err);
        cr_expect_eq(r, !t->taken ? TB_ERR_INVAL : t->late ? TB_ERR_CONFIG : 0, "%s: %d (%s)",
                     t->what, r, err);
        if (!t->taken)
            cr_expect(strstr(err, "tb_encoder_opts.size is") &&
                      strstr(err, "tb_encoder_opts_init"), "%s: %s", t->what, err);
        else if (!t->late)
            cr_expect_eq(cfg.size, sizeof cfg, "%s: the config's size", t->what);
        e = tb_encoder_new(&u.o, tb_encoder_mem_sink, &m);
        cr_expect_eq(e != NULL, t->taken && !t->late, "%s: tb_encoder_new", t->what);
        tb_encoder_free(e);
        free(m.buf);

        /* Changing a caller's struct: only its bytes.  ca is in every
         * size taken; tsstart lies past an older caller's struct. */
        memset(&p, 0, sizeof p);
        tb_encoder_opts_init(&p.o, TB_PROTO_ETMV3);
        p.o.ts_rate = 77;
        p.o.size = t->size;
        err[0] = '\0';
        r = tb_encoder_opts_parse(&p.o, "ca", err, sizeof err);
        cr_expect_eq(r, t->taken ? 0 : TB_ERR_INVAL, "%s: parse ca %d (%s)", t->what, r, err);
        cr_expect_eq(p.o.cycle_accurate, t->taken, "%s: ca", t->what);
        cr_expect_eq(p.o.ts_rate, 77, "%s: a field it did not name", t->what);
        cr_expect_eq(p.o.size, t->size, "%s: the caller's size kept", t->what);
        if (!t->taken)
            cr_expect(strstr(err, "tb_encoder_opts_init"), "%s: %s", t->what, err);
        r = tb_encoder_opts_parse(&p.o, "ts,tsstart=5", err, sizeof err);
        cr_expect_eq(r, t->late ? 0 : TB_ERR_INVAL, "%s: parse tsstart %d (%s)", t->what, r,
                     err);
        cr_expect_eq(p.o.ts_start, t->late ? 5 : 0, "%s: tsstart", t->what);
        cr_expect_eq(p.o.timestamps, t->late, "%s: nothing given back on refusal", t->what);
        if (t->taken && !t->late)
            cr_expect(strstr(err, "tb_encoder_opts.size is"), "%s: %s", t->what, err);
        r = tb_encoder_opts_v7m(&p.o, 3);
        cr_expect_eq(r, t->taken ? 0 : TB_ERR_INVAL, "%s: v7m %d", t->what, r);
        cr_expect_eq(p.o.v7m, t->taken ? 3 : 0, "%s: v7m", t->what);
    }
}
