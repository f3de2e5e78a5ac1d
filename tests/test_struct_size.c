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
#include "../encoder/port_encoders.h"
#include "../encoder/writers.h"
#include "tb_test.h"
#include "tracebench/decoder.h"
#include "tracebench/encoder.h"
#include "tracebench/etmv1.h"
#include "tracebench/etmv2.h"
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
        tb_etmv1_config_init(&e1); /* the port's own size (port_config below) */
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

/* ---- the trace-port structs (etmv1.h, etmv2.h) ----
 * One table of the same cases for each; a protocol's functions behind
 * small wrappers so that one body tests both.  The caller's struct sits
 * in a buffer of 0xAB bytes: what lies past its size must read as 0 and
 * stay 0xAB. */

typedef union caller_port {
    size_t size;
    tb_etmv1_config c1;
    tb_etmv2_config c2;
    tb_etmv1_encoder_opts o1;
    tb_etmv2_encoder_opts o2;
    unsigned char b[sizeof(tb_etmv2_encoder_opts) + 64];
} caller_port;

/* Port 16, cycle accurate, context IDs off (IHI0014Q 3.5.1). */
#define PORT_ETMCR 0x1020u

typedef struct port_cfg_fns {
    const char *name;
    size_t have;          /* this build's sizeof */
    size_t late;          /* offsetof the late field, vector_base */
    uint8_t minor;        /* the minor its ETMCR is read with */
    void (*init)(void *c);
    uint32_t *(*vbase)(void *c);
    int (*check)(const void *c);
    uint32_t (*etmcr)(const void *c);
    int (*from_etmcr)(void *c, uint32_t etmcr, uint8_t minor);
    int (*from_tb)(void *c, const tb_config *g);
    int (*regs)(tb_config *g, uint32_t vector_base);
    int (*header)(const void *c, uint8_t out[16]);
    int (*parse_header)(const uint8_t in[16], void *c);
    int (*encoder_config)(void *c); /* port 16, CA options of this build */
    /* parser_new (its config's vector base in *vb), decoder_new: how
     * many gave an object. */
    int (*made)(const void *c, const tb_memimage *mem, uint32_t *vb);
} port_cfg_fns;

/* Port N's functions behind the table's types (MINOR: its ETMCR's minor
 * version), written once for both ports. */
#define PORT_CFG_FNS(N, MINOR)                                                              \
    static void N##_init(void *c) { tb_##N##_config_init(c); }                              \
    static uint32_t *N##_vbase(void *c) { return &((tb_##N##_config *)c)->vector_base; }    \
    static int N##_check(const void *c) { return tb_##N##_config_check(c); }                \
    static uint32_t N##_etmcr(const void *c) { return tb_##N##_etmcr(c); }                  \
    static int N##_from_etmcr(void *c, uint32_t r, uint8_t m)                               \
    {                                                                                       \
        return tb_##N##_config_from_etmcr(c, r, m);                                         \
    }                                                                                       \
    static int N##_from_tb(void *c, const tb_config *g) { return tb_##N##_config_from_tb(c, g); } \
    static int N##_regs(tb_config *g, uint32_t vb)                                          \
    {                                                                                       \
        return tb_config_from_##N(g, PORT_ETMCR, MINOR, vb);                                \
    }                                                                                       \
    static int N##_header(const void *c, uint8_t *out) { return tb_##N##_capture_header(c, out); } \
    static int N##_parse_header(const uint8_t *in, void *c)                                 \
    {                                                                                       \
        return tb_##N##_capture_parse_header(in, c);                                        \
    }                                                                                       \
    static int N##_encoder_config(void *c)                                                  \
    {                                                                                       \
        tb_##N##_encoder_opts o;                                                            \
                                                                                            \
        tb_##N##_encoder_opts_init(&o);                                                     \
        o.port_width = 16;                                                                  \
        o.base.cycle_accurate = true;                                                       \
        return tb_##N##_encoder_config(&o, c);                                              \
    }                                                                                       \
    static int N##_made(const void *c, const tb_memimage *mem, uint32_t *vb)                \
    {                                                                                       \
        tb_##N##_parser *p = tb_##N##_parser_new(c);                                        \
        tb_##N##_decoder *d = tb_##N##_decoder_new(c, mem);                                 \
        int n = (p != NULL) + (d != NULL);                                                  \
                                                                                            \
        *vb = p ? tb_##N##_parser_config(p)->vector_base : 0;                               \
        tb_##N##_parser_free(p);                                                            \
        tb_##N##_decoder_free(d);                                                           \
        return n;                                                                           \
    }
#define PORT_CFG_ROW(N, MINOR)                                                              \
    {"tb_" #N "_config", sizeof(tb_##N##_config), offsetof(tb_##N##_config, vector_base),   \
     MINOR, N##_init, N##_vbase, N##_check, N##_etmcr, N##_from_etmcr, N##_from_tb, N##_regs, \
     N##_header, N##_parse_header, N##_encoder_config, N##_made}

PORT_CFG_FNS(etmv1, 3)
PORT_CFG_FNS(etmv2, 0)

static const port_cfg_fns port_cfgs[] = {PORT_CFG_ROW(etmv1, 3), PORT_CFG_ROW(etmv2, 0)};

/* The port width of u, of f's struct. */
static uint8_t *port_width(const port_cfg_fns *f, caller_port *u)
{
    return f->init == etmv1_init ? &u->c1.port_width : &u->c2.port_width;
}

/* The caller's struct of size `size` in u: this build's defaults, port
 * 16, cycle accurate and the late field vector_base = vb (past an older
 * caller's struct: bytes it does not have), the rest 0xAB. */
static void port_caller(const port_cfg_fns *f, caller_port *u, size_t size, uint32_t vb)
{
    memset(u, 0xAB, sizeof *u);
    f->init(u);
    *port_width(f, u) = 16;
    if (f->init == etmv1_init) {
        u->c1.minor = f->minor;
        u->c1.cycle_accurate = true;
    } else {
        u->c2.minor = f->minor;
        u->c2.cycle_accurate = true;
    }
    *f->vbase(u) = vb;
    u->size = size;
}

/* Bytes from `from` on as they were (before): nothing written there. */
static void port_untouched(const caller_port *u, const caller_port *before, size_t from,
                           const char *what, const char *call)
{
    for (size_t i = from; i < sizeof u->b; i++)
        cr_expect_eq(u->b[i], before->b[i], "%s: %s wrote byte %zu past the caller's struct",
                     what, call, i);
}

Test(struct_size, port_config)
{
    tb_memimage *mem = tb_memimage_new();

    cr_assert(mem);
    for (size_t pi = 0; pi < sizeof port_cfgs / sizeof port_cfgs[0]; pi++) {
        const port_cfg_fns *f = &port_cfgs[pi];
        /* Both structs have the same cases: vector_base is the late field. */
        const size_case cases[] = SIZE_CASES(tb_etmv1_config, vector_base);
        caller_port ref;
        uint8_t want[16];

        cr_assert_eq(f->late, offsetof(tb_etmv1_config, vector_base));
        cr_assert_eq(f->have, sizeof(tb_etmv1_config));
        memset(&ref, 0xFF, sizeof ref);
        f->init(&ref);
        cr_expect_eq(ref.size, f->have, "%s: init sets the size", f->name);
        cr_expect_eq(*port_width(f, &ref), 8, "%s", f->name);
        cr_expect_eq(*f->vbase(&ref), 0, "%s", f->name);
        port_caller(f, &ref, f->have, 0);
        cr_assert_eq(f->header(&ref, want), 0, "%s", f->name);
        cr_assert_eq(want[11], 16, "%s: the header's port width", f->name);
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            const size_case *t = &cases[k];
            const size_t kept = t->size < f->have ? t->size : f->have;
            caller_port u, before;
            tb_config g;
            uint8_t out[16];
            uint32_t vb = 1;
            bool fits;
            int r;

            /* Reading: the late field set to a vector base the check
             * refuses (not 32-byte aligned) is seen unless the caller's
             * struct ends before it. */
            port_caller(f, &u, t->size, 0xFFFF0004u);
            r = f->check(&u);
            cr_expect_eq(r, !t->taken ? TB_ERR_INVAL : t->late ? TB_ERR_CONFIG : 0,
                         "%s %s: check %d", f->name, t->what, r);
            port_caller(f, &u, t->size, 0xFFFF0000u);
            cr_expect_eq(f->check(&u), t->taken ? 0 : TB_ERR_INVAL, "%s %s", f->name, t->what);
            cr_expect_eq(f->etmcr(&u), t->taken ? PORT_ETMCR : 0, "%s %s: etmcr", f->name,
                         t->what);
            memset(out, 0x5A, sizeof out);
            r = f->header(&u, out);
            cr_expect_eq(r, t->taken ? 0 : TB_ERR_INVAL, "%s %s: header %d", f->name, t->what,
                         r);
            for (size_t i = 0; i < sizeof out; i++)
                cr_expect_eq(out[i], t->taken ? want[i] : 0x5A, "%s %s: header byte %zu",
                             f->name, t->what, i);
            cr_expect_eq(f->made(&u, mem, &vb), t->taken ? 2 : 0, "%s %s: _new", f->name,
                         t->what);
            if (t->taken)
                cr_expect_eq(vb, t->late ? 0xFFFF0000u : 0, "%s %s: the parser's vector base",
                             f->name, t->what);
            if (f->init == etmv1_init) {
                uint8_t oo[12];

                memset(oo, 0x5A, sizeof oo);
                r = tb_etmv1_openocd_header(&u.c1, 7, oo);
                cr_expect_eq(r, t->taken ? 0 : TB_ERR_INVAL, "%s: openocd header %d",
                             t->what, r);
                cr_expect_eq(oo[7], t->taken ? 0x20 : 0x5A, "%s: openocd ETMCR", t->what);
            }

            /* Filling: only the caller's bytes (past an older caller's
             * struct a vector base the fill would clear); a refused size
             * leaves the whole struct as it was. */
            port_caller(f, &u, t->size, 0xFFFF0000u);
            *port_width(f, &u) = 4;
            before = u;
            r = f->from_etmcr(&u, PORT_ETMCR, f->minor);
            cr_expect_eq(r, t->taken ? 0 : TB_ERR_INVAL, "%s %s: from_etmcr %d", f->name,
                         t->what, r);
            cr_expect_eq(u.size, t->size, "%s %s: the caller's size kept", f->name, t->what);
            cr_expect_eq(*port_width(f, &u), t->taken ? 16 : 4,
                         "%s %s: from_etmcr's port width", f->name, t->what);
            port_untouched(&u, &before, t->taken ? kept : 0, t->what, "from_etmcr");

            /* ETMv2's encoder sets phantoms, the struct's last field: a
             * caller's struct without it has no room (refused, untouched). */
            fits = t->taken && (f->init == etmv1_init ||
                                t->size > offsetof(tb_etm_port_config, phantoms));
            port_caller(f, &u, t->size, 0xFFFF0000u);
            *port_width(f, &u) = 4;
            before = u;
            r = f->encoder_config(&u);
            cr_expect_eq(r, fits ? 0 : TB_ERR_INVAL, "%s %s: encoder_config %d", f->name,
                         t->what, r);
            cr_expect_eq(*port_width(f, &u), fits ? 16 : 4,
                         "%s %s: encoder_config's port width", f->name, t->what);
            port_untouched(&u, &before, fits ? kept : 0, t->what, "encoder_config");

            /* The header parser keeps the caller's vector base. */
            port_caller(f, &u, t->size, 0xFFFF0000u);
            *port_width(f, &u) = 4;
            before = u;
            r = f->parse_header(want, &u);
            cr_expect_eq(r, t->taken ? 0 : TB_ERR_INVAL, "%s %s: parse_header %d", f->name,
                         t->what, r);
            cr_expect_eq(*port_width(f, &u), t->taken ? 16 : 4,
                         "%s %s: parse_header's port width", f->name, t->what);
            cr_expect_eq(*f->vbase(&u), 0xFFFF0000u, "%s %s: vector base kept", f->name,
                         t->what);
            port_untouched(&u, &before, t->taken ? kept : 0, t->what, "parse_header");

            /* From a tb_config: a vector base 0 fits any struct taken;
             * 0xFFFF0000 only one that has the field (else TB_ERR_INVAL,
             * nothing written). */
            cr_assert_eq(f->regs(&g, 0), 0);
            port_caller(f, &u, t->size, 0xFFFF0000u);
            before = u;
            r = f->from_tb(&u, &g);
            cr_expect_eq(r, t->taken ? 0 : TB_ERR_INVAL, "%s %s: from_tb %d", f->name,
                         t->what, r);
            port_untouched(&u, &before, t->taken ? kept : 0, t->what, "from_tb");
            cr_assert_eq(f->regs(&g, 0xFFFF0000u), 0);
            port_caller(f, &u, t->size, 0);
            *port_width(f, &u) = 4;
            before = u;
            r = f->from_tb(&u, &g);
            cr_expect_eq(r, t->late ? 0 : TB_ERR_INVAL, "%s %s: from_tb with vectors %d",
                         f->name, t->what, r);
            cr_expect_eq(*port_width(f, &u), t->late ? 16 : 4,
                         "%s %s: from_tb's port width", f->name, t->what);
            port_untouched(&u, &before, t->late ? kept : 0, t->what, "from_tb with vectors");
            if (t->late)
                cr_expect_eq(*f->vbase(&u), 0xFFFF0000u, "%s %s", f->name, t->what);
        }
    }
    tb_memimage_free(mem);
}

typedef struct port_opts_fns {
    const char *name;
    tb_protocol protocol;
    bool from_sets_late;  /* _opts_from fills the late field */
    void (*init)(void *o);
    int (*defaults)(void *o);
    int (*from)(void *v, const tb_encoder_opts *g);
} port_opts_fns;

/* Instructions with idle cycles between them: TD cycles that keep_idle
 * keeps (IHI0014Q 5.1; docs/etmv1.md). */
static void idle_records(tb_exec_record r[4])
{
    memset(r, 0, 4 * sizeof r[0]);
    for (unsigned i = 0; i < 4; i++) {
        r[i].kind = TB_REC_INSN;
        r[i].seq = i;
        r[i].cycle = 1 + 20 * i;
        r[i].u.insn.addr = 0x8000 + 4 * i;
        r[i].u.insn.size = 4;
        r[i].u.insn.isa = TB_ISA_ARM;
        r[i].u.insn.next_addr = 0x8004 + 4 * i;
        r[i].u.insn.next_isa = TB_ISA_ARM;
    }
}

static int no_samples(void *ctx, const tb_etmv1_sample *s, size_t n)
{
    (void)ctx;
    (void)s;
    (void)n;
    return 0;
}

static void o1_init(void *o) { tb_etmv1_encoder_opts_init(o); }
static int o1_defaults(void *o) { return tb_etmv1_encoder_opts_defaults(o); }
static int o1_from(void *v, const tb_encoder_opts *g) { return tb_etmv1_encoder_opts_from(v, g); }
static void o2_init(void *o) { tb_etmv2_encoder_opts_init(o); }
static int o2_defaults(void *o) { return tb_etmv2_encoder_opts_defaults(o); }
static int o2_from(void *v, const tb_encoder_opts *g) { return tb_etmv2_encoder_opts_from(v, g); }

/* The port's encoder_config (v2: ETMv2's) into this build's config: its
 * port width, phantoms (ETMv1: false). */
static int opts_config(bool v2, const void *o, uint8_t *width, bool *phantoms)
{
    tb_etmv1_config c1;
    tb_etmv2_config c2;
    int r;

    tb_etmv1_config_init(&c1);
    tb_etmv2_config_init(&c2);
    r = v2 ? tb_etmv2_encoder_config(o, &c2) : tb_etmv1_encoder_config(o, &c1);
    *width = v2 ? c2.port_width : c1.port_width;
    *phantoms = v2 && c2.phantoms;
    return r;
}

/* The port's encoder for o (NULL: -1), then the records: the samples out. */
static int64_t opts_cycles(bool v2, const void *o)
{
    tb_etmv1_encoder *e1 = v2 ? NULL : tb_etmv1_encoder_new(o, no_samples, NULL);
    tb_etmv2_encoder *e2 = v2 ? tb_etmv2_encoder_new(o, no_samples, NULL) : NULL;
    tb_exec_record r[4];
    int64_t n;

    if (!e1 && !e2)
        return -1;
    idle_records(r);
    for (unsigned i = 0; i < 4; i++)
        cr_assert_geq(e1 ? tb_etmv1_encoder_push(e1, &r[i]) : tb_etmv2_encoder_push(e2, &r[i]),
                      0);
    cr_assert_geq(e1 ? tb_etmv1_encoder_finish(e1) : tb_etmv2_encoder_finish(e2), 0);
    n = (int64_t)(e1 ? tb_etmv1_encoder_cycles(e1) : tb_etmv2_encoder_cycles(e2));
    tb_etmv1_encoder_free(e1);
    tb_etmv2_encoder_free(e2);
    return n;
}

static const port_opts_fns port_opts[] = {
    {"tb_etmv1_encoder_opts", TB_PROTO_ETMV1, true, o1_init, o1_defaults, o1_from},
    {"tb_etmv2_encoder_opts", TB_PROTO_ETMV2, false, o2_init, o2_defaults, o2_from},
};

/* The late field: ETMv1's keep_idle, ETMv2's no_phantoms. */
static bool *opts_late(const port_opts_fns *f, caller_port *u)
{
    return f->init == o1_init ? &u->o1.keep_idle : &u->o2.no_phantoms;
}

static uint8_t *opts_width(const port_opts_fns *f, caller_port *u)
{
    return f->init == o1_init ? &u->o1.port_width : &u->o2.port_width;
}

/* The caller's options of size `size` in u (the rest 0xAB): the
 * defaults, port 4, the late field on. */
static void opts_caller(const port_opts_fns *f, caller_port *u, size_t size)
{
    memset(u, 0xAB, sizeof *u);
    f->init(u);
    *opts_width(f, u) = 4;
    *opts_late(f, u) = true;
    u->size = size;
}

Test(struct_size, port_encoder_opts)
{
    const size_case c1[] = SIZE_CASES(tb_etmv1_encoder_opts, keep_idle),
                    c2[] = SIZE_CASES(tb_etmv2_encoder_opts, no_phantoms);

    for (size_t pi = 0; pi < sizeof port_opts / sizeof port_opts[0]; pi++) {
        const port_opts_fns *f = &port_opts[pi];
        const size_case *cases = pi ? c2 : c1;
        const size_t have = pi ? sizeof(tb_etmv2_encoder_opts) : sizeof(tb_etmv1_encoder_opts);
        const size_t old = cases[1].size;
        caller_port u, before;
        int64_t on, off;

        /* init: both sizes, the defaults; the defaults into an older
         * caller's struct: its bytes only. */
        memset(&u, 0xFF, sizeof u);
        f->init(&u);
        cr_expect_eq(u.size, have, "%s", f->name);
        cr_expect_eq(u.o1.base.size, sizeof(tb_encoder_opts), "%s: base.size", f->name);
        cr_expect(u.o1.base.protocol == f->protocol && u.o1.base.sync_period == 1024 &&
                  *opts_width(f, &u) == 8 && !*opts_late(f, &u), "%s: defaults", f->name);
        memset(&u, 0xAB, sizeof u);
        u.size = old;
        u.o1.base.size = sizeof(tb_encoder_opts);
        before = u;
        cr_expect_eq(f->defaults(&u), 0, "%s: defaults", f->name);
        cr_expect(u.size == old && *opts_width(f, &u) == 8, "%s: defaults", f->name);
        port_untouched(&u, &before, old, f->name, "defaults");
        u.size = 0;
        cr_expect_eq(f->defaults(&u), TB_ERR_INVAL, "%s: defaults, size 0", f->name);

        /* base held by value: another tb_encoder_opts' size is refused. */
        opts_caller(f, &u, have);
        u.o1.base.size = sizeof(tb_encoder_opts) - 8;
        {
            uint8_t w = 0;
            bool ph;

            cr_expect_eq(opts_config(pi == 1, &u, &w, &ph), TB_ERR_INVAL, "%s: base.size", f->name);
            cr_expect_eq(opts_cycles(pi == 1, &u), -1, "%s: base.size", f->name);
        }

        /* The late field's effect on the samples, where it has one. */
        opts_caller(f, &u, have);
        on = opts_cycles(pi == 1, &u);
        *opts_late(f, &u) = false;
        off = opts_cycles(pi == 1, &u);
        if (pi == 0)
            cr_assert_neq(on, off, "keep_idle keeps no cycle here: the test sees nothing");
        for (size_t k = 0; k < 6; k++) {
            const size_case *t = &cases[k];
            const size_t kept = t->size < have ? t->size : have;
            tb_encoder_opts g;
            uint8_t w = 0;
            bool ph = false;
            int r;

            opts_caller(f, &u, t->size);
            r = opts_config(pi == 1, &u, &w, &ph);
            cr_expect_eq(r, t->taken ? 0 : TB_ERR_INVAL, "%s %s: config %d", f->name, t->what,
                         r);
            if (t->taken) {
                cr_expect_eq(w, 4, "%s %s: port width", f->name, t->what);
                if (pi == 1)
                    cr_expect_eq(ph, !t->late, "%s %s: no_phantoms read", f->name, t->what);
            }
            cr_expect_eq(opts_cycles(pi == 1, &u), !t->taken ? -1 : t->late ? on : off,
                         "%s %s: encoder", f->name, t->what);

            /* From the generic options: only the caller's bytes; a
             * setting past them (ETMv1's keep_idle) refused. */
            tb_encoder_opts_init(&g, f->protocol);
            g.port_width = 16;
            g.keep_idle = true;
            opts_caller(f, &u, t->size);
            *opts_late(f, &u) = false;
            before = u;
            r = f->from(&u, &g);
            bool room = t->late || !f->from_sets_late;
            cr_expect_eq(r, t->taken && room ? 0 : TB_ERR_INVAL, "%s %s: from %d", f->name,
                         t->what, r);
            cr_expect_eq(*opts_width(f, &u), t->taken && room ? 16 : 4, "%s %s: from's port",
                         f->name, t->what);
            cr_expect_eq(u.size, t->size, "%s %s: the caller's size kept", f->name, t->what);
            port_untouched(&u, &before, t->taken && room ? kept : 0, t->what, "from");
            g.keep_idle = false;
            before = u;
            r = f->from(&u, &g);
            cr_expect_eq(r, t->taken ? 0 : TB_ERR_INVAL, "%s %s: from %d", f->name, t->what,
                         r);
            port_untouched(&u, &before, t->taken ? kept : 0, t->what, "from");
        }
    }
}
