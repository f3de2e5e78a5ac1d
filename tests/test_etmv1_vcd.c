/* The VCD view of an ETMv1 port capture (tb_etmv1_vcd_*, docs/etmv1.md 8):
 * a hand-made capture against hand-written text, any chunking, errors;
 * and a real round trip's --vcd through GTKWave's vcd2fst and back with
 * fst2vcd, every signal's value changes compared (vcd2fst alone checks
 * nothing: docs/etmv1-v2-sources.md 3), and against the capture itself. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tb_test.h"
#include "tracebench/etmv1.h"

/* ---- a growing text sink ---- */
typedef struct text {
    char *s;
    size_t len, cap, calls, max_piece;
} text;

static int text_sink(void *ctx, const uint8_t *data, size_t len)
{
    text *t = ctx;

    if (t->len + len + 1 > t->cap) {
        t->cap = (t->len + len + 1) * 2;
        t->s = realloc(t->s, t->cap);
        cr_assert(t->s);
    }
    memcpy(t->s + t->len, data, len);
    t->len += len;
    t->s[t->len] = '\0';
    t->calls++;
    if (len > t->max_piece)
        t->max_piece = len;
    return 0;
}

/* The VCD of buf[0..len) pushed `chunk` bytes at a time; returns
 * finish's code, the text in *t. */
static int convert(const uint8_t *buf, size_t len, size_t chunk, text *t)
{
    tb_etmv1_vcd *v = tb_etmv1_vcd_new(text_sink, t);
    int rc = 0;

    cr_assert(v);
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < len && rc >= 0; i += chunk)
        rc = tb_etmv1_vcd_push(v, buf + i, len - i < chunk ? len - i : chunk);
    if (rc >= 0)
        rc = tb_etmv1_vcd_finish(v);
    tb_etmv1_vcd_free(v);
    return rc;
}

static size_t small_capture(uint8_t *buf)
{
    static const tb_etmv1_sample s[] = {
        {TB_ETMV1_BE, 1, 0xA}, /* address packet with TRACESYNC */
        {TB_ETMV1_IE, 0, 0xA}, /* TRACEPKT unchanged: not written */
        {TB_ETMV1_WT, 0, 0x3},
        {TB_ETMV1_WT, 0, 0x3}, /* nothing changes but the clock */
        {TB_ETMV1_TD, 1, 0x0},
    };
    tb_etmv1_config c;
    size_t n = TB_ETMV1_HDR_BYTES;

    tb_etmv1_config_init(&c);
    c.port_width = 4;
    tb_etmv1_capture_header(&c, buf);
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++, n += 4)
        tb_etmv1_sample_pack(&s[i], buf + n);
    return n;
}

static const char small_expected[] =
    "$version tracebench $end\n"
    "$comment ETMv1.3 trace port, 4-bit TRACEPKT, ETMCR 0x00000000; one capture sample "
    "per TRACECLK cycle, values change on the falling edge, TRACECLK rises mid-cycle; "
    "cycles dropped from the capture are not shown $end\n"
    "$timescale 1ns $end\n"
    "$scope module etm_port $end\n"
    "$var wire 1 ! TRACECLK $end\n"
    "$var wire 3 \" PIPESTAT [2:0] $end\n"
    "$var wire 1 # TRACESYNC $end\n"
    "$var wire 4 $ TRACEPKT [3:0] $end\n"
    "$upscope $end\n"
    "$enddefinitions $end\n"
    "#0\n"
    "$dumpvars\n"
    "0!\n"
    "b100 \"\n"
    "1#\n"
    "b1010 $\n"
    "$end\n"
    "#1\n"
    "1!\n"
    "#2\n"
    "0!\n"
    "b000 \"\n"
    "0#\n"
    "#3\n"
    "1!\n"
    "#4\n"
    "0!\n"
    "b011 \"\n"
    "b0011 $\n"
    "#5\n"
    "1!\n"
    "#6\n"
    "0!\n"
    "#7\n"
    "1!\n"
    "#8\n"
    "0!\n"
    "b111 \"\n"
    "1#\n"
    "b0000 $\n"
    "#9\n"
    "1!\n"
    "#10\n"
    "0!\n";

Test(etmv1_vcd, small_capture_exact_text)
{
    uint8_t buf[64];
    size_t len = small_capture(buf);
    text t;

    cr_assert_eq(convert(buf, len, len, &t), 0);
    cr_assert_str_eq(t.s, small_expected);
    free(t.s);
    /* Any chunking gives the same text. */
    for (size_t chunk = 1; chunk <= 17; chunk++) {
        cr_assert_eq(convert(buf, len, chunk, &t), 0, "chunk %zu", chunk);
        cr_assert_str_eq(t.s, small_expected, "chunk %zu", chunk);
        free(t.s);
    }
}

Test(etmv1_vcd, header_only_and_errors)
{
    uint8_t buf[64];
    size_t len = small_capture(buf);
    text t;

    /* No sample: the clock low, the signals unknown. */
    cr_assert_eq(convert(buf, TB_ETMV1_HDR_BYTES, 16, &t), 0);
    cr_assert(strstr(t.s, "$enddefinitions $end\n#0\n$dumpvars\n0!\nbx \"\nx#\nbx $\n$end\n"));
    free(t.s);
    /* Cut inside a sample or the header. */
    cr_assert_eq(convert(buf, len - 1, 5, &t), TB_ERR_TRUNCATED);
    free(t.s);
    cr_assert_eq(convert(buf, 10, 5, &t), TB_ERR_TRUNCATED);
    free(t.s);
    /* Bad magic. */
    buf[0] ^= 1;
    cr_assert_eq(convert(buf, len, 3, &t), TB_ERR_FORMAT);
    free(t.s);
    buf[0] ^= 1;
    /* TRACEPKT bit 4 on a 4-bit port; PIPESTAT bit 3 in ETMv1. */
    buf[TB_ETMV1_HDR_BYTES + 4 + 1] |= 0x10;
    cr_assert_eq(convert(buf, len, len, &t), TB_ERR_FORMAT);
    free(t.s);
    buf[TB_ETMV1_HDR_BYTES + 4 + 1] &= 0x0F;
    buf[TB_ETMV1_HDR_BYTES + 8] |= 0x08;
    cr_assert_eq(convert(buf, len, len, &t), TB_ERR_FORMAT);
    free(t.s);
    cr_assert_null(tb_etmv1_vcd_new(NULL, NULL));
}

Test(etmv1_vcd, long_capture_pieces_bounded)
{
    /* 5000 cycles of a 16-bit port: output in pieces of at most 4 KB. */
    enum { N = 5000 };
    uint8_t *buf = malloc(TB_ETMV1_HDR_BYTES + 4 * N);
    tb_etmv1_config c;
    uint64_t seed = 7;
    text t1, t2;

    cr_assert(buf);
    tb_etmv1_config_init(&c);
    c.port_width = 16;
    tb_etmv1_capture_header(&c, buf);
    for (size_t k = 0; k < N; k++) {
        uint64_t r = tb_test_rand(&seed);
        tb_etmv1_sample s = {(uint8_t)(r & 7), (uint8_t)((r >> 3) & 1), (uint16_t)(r >> 8)};

        tb_etmv1_sample_pack(&s, buf + TB_ETMV1_HDR_BYTES + 4 * k);
    }
    cr_assert_eq(convert(buf, TB_ETMV1_HDR_BYTES + 4 * N, 4096, &t1), 0);
    cr_assert_eq(convert(buf, TB_ETMV1_HDR_BYTES + 4 * N, 7, &t2), 0);
    cr_assert_str_eq(t1.s, t2.s);
    cr_assert_leq(t1.max_piece, 4096);
    cr_assert_gt(t1.calls, 10);
    cr_assert(strstr(t1.s, "$var wire 16 $ TRACEPKT [15:0] $end"));
    char last[32];
    snprintf(last, sizeof last, "#%u\n0!\n", 2 * N);
    cr_assert_eq(strcmp(t1.s + t1.len - strlen(last), last), 0);
    free(t1.s);
    free(t2.s);
    free(buf);
}

/* ---- a small VCD reader: declarations and each signal's changes ---- */
#define MAXSIG 8
typedef struct change {
    uint64_t t;
    int64_t v; /* -1: x or z */
} change;
typedef struct signal {
    char id[16], name[32];
    unsigned width;
    change *ch;
    size_t n, cap;
} signal_t;
typedef struct vcd {
    signal_t s[MAXSIG];
    size_t n;
    uint64_t end; /* last time stamp */
} vcd;

static signal_t *by_id(vcd *d, const char *id)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->s[i].id, id))
            return &d->s[i];
    return NULL;
}

static signal_t *by_name(vcd *d, const char *name)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->s[i].name, name))
            return &d->s[i];
    return NULL;
}

static void add_change(signal_t *s, uint64_t t, int64_t v)
{
    if (s->n && s->ch[s->n - 1].v == v)
        return; /* not a change */
    if (s->n && s->ch[s->n - 1].t == t) {
        s->ch[s->n - 1].v = v; /* two values at one time: the last wins */
        return;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->ch = realloc(s->ch, s->cap * sizeof *s->ch);
        cr_assert(s->ch);
    }
    s->ch[s->n++] = (change){t, v};
}

static int64_t bits_value(const char *b)
{
    int64_t v = 0;

    for (; *b; b++) {
        if (*b != '0' && *b != '1')
            return -1;
        v = v << 1 | (*b - '0');
    }
    return v;
}

static void parse_vcd(const char *path, vcd *d)
{
    char *txt = tb_test_slurp(path, NULL), *save = NULL, *tok;
    bool defs = true;
    uint64_t now = 0;

    memset(d, 0, sizeof *d);
    for (tok = strtok_r(txt, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (defs) {
            if (!strcmp(tok, "$var")) {
                signal_t *s = &d->s[d->n];
                char *w;

                cr_assert_lt(d->n, MAXSIG, "%s: too many signals", path);
                cr_assert_str_eq(strtok_r(NULL, " \t\r\n", &save), "wire");
                w = strtok_r(NULL, " \t\r\n", &save);
                s->width = (unsigned)atoi(w);
                snprintf(s->id, sizeof s->id, "%s", strtok_r(NULL, " \t\r\n", &save));
                snprintf(s->name, sizeof s->name, "%s", strtok_r(NULL, " \t\r\n", &save));
                d->n++;
            } else if (!strcmp(tok, "$enddefinitions")) {
                defs = false;
            }
            continue; /* $date, $version, $scope ... and their words */
        }
        if (tok[0] == '#') {
            now = strtoull(tok + 1, NULL, 10);
            d->end = now;
        } else if (tok[0] == '$') {
            continue; /* $dumpvars, $end */
        } else if (tok[0] == 'b' || tok[0] == 'B') {
            char *id = strtok_r(NULL, " \t\r\n", &save);
            signal_t *s = id ? by_id(d, id) : NULL;

            cr_assert(s, "%s: value for an unknown identifier %s", path, id ? id : "(none)");
            add_change(s, now, bits_value(tok + 1));
        } else {
            signal_t *s = by_id(d, tok + 1);
            char b[2] = {tok[0], 0};

            cr_assert(s, "%s: value for an unknown identifier %s", path, tok + 1);
            add_change(s, now, bits_value(b));
        }
    }
    free(txt);
}

static void free_vcd(vcd *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->s[i].ch);
}

/* The value of s at time t, for t never decreasing: *pos walks on. */
static int64_t value_at(const signal_t *s, uint64_t t, size_t *pos)
{
    while (*pos < s->n && s->ch[*pos].t <= t)
        ++*pos;
    return *pos ? s->ch[*pos - 1].v : -1;
}

static bool have(const char *tool)
{
    char cmd[256];

    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

static const char *const names[] = {"TRACECLK", "PIPESTAT", "TRACESYNC", "TRACEPKT"};

/* One vector program round-tripped with --protocol etmv1 --vcd, the VCD
 * checked against the capture and through vcd2fst/fst2vcd. */
static void real_run(const char *prog, const char *opts, unsigned width)
{
    char dir[] = "/tmp/tb_vcd_XXXXXX", args[4096], path[1024], cmd[2048], scn[1024];
    char *out, *err;
    uint8_t *cap;
    size_t clen;
    vcd a, b;
    int rc;

    snprintf(path, sizeof path, "%s/vectors/programs/%s.elf", TB_BINARY_DIR, prog);
    if (access(path, R_OK)) {
        const char *ci = getenv("CI");

        fprintf(stderr, "SKIPPED: %s not built (the vector programs need "
                "arm-none-eabi-gcc)\n", path);
        cr_assert(!(ci && !strcmp(ci, "true")), "%s absent under CI=true", path);
        cr_skip_test("%s not built", path);
    }
    cr_assert(mkdtemp(dir));
    /* The program's own scenario (its interrupts, budget), as the suite runs it. */
    snprintf(scn, sizeof scn, "%s/vectors/programs/%s.ini", TB_SOURCE_DIR, prog);
    snprintf(args, sizeof args, "roundtrip '%s' %s%s%s --protocol etmv1 %s%s --out '%s/snap' "
             "--vcd '%s/a.vcd' --quiet", path, access(scn, R_OK) ? "" : "--scenario '",
             access(scn, R_OK) ? "" : scn, access(scn, R_OK) ? "" : "'",
             opts ? "--options " : "", opts ? opts : "", dir, dir);
    rc = tb_test_run_cli(args, NULL, &out, NULL, &err);
    cr_assert_eq(rc, 0, "tracebench %s: %d\n%s%s", args, rc, out, err);
    free(out);
    free(err);

    /* Our VCD against the capture: at each rising edge (2k+1) the sample k. */
    snprintf(path, sizeof path, "%s/snap/trace_buffer.bin", dir);
    cap = tb_test_read_file(path, &clen);
    cr_assert(cap && clen >= TB_ETMV1_HDR_BYTES && (clen - TB_ETMV1_HDR_BYTES) % 4 == 0);
    size_t ns = (clen - TB_ETMV1_HDR_BYTES) / 4;
    snprintf(path, sizeof path, "%s/a.vcd", dir);
    parse_vcd(path, &a);
    cr_assert_eq(a.n, 4);
    for (size_t i = 0; i < 4; i++)
        cr_assert_str_eq(a.s[i].name, names[i]);
    cr_assert_eq(a.s[1].width, 3);
    cr_assert_eq(a.s[3].width, width);
    cr_assert_gt(ns, 10);
    cr_assert_eq(a.end, 2 * ns);
    cr_assert_eq(a.s[0].n, 2 * ns + 1, "TRACECLK toggles every half cycle");
    size_t pos[4] = {0};
    for (size_t k = 0; k < ns; k++) {
        tb_etmv1_sample s;

        cr_assert_eq(tb_etmv1_sample_unpack(cap + TB_ETMV1_HDR_BYTES + 4 * k, &s), 0);
        cr_assert_eq(value_at(&a.s[0], 2 * k, &pos[0]), 0);
        cr_assert_eq(value_at(&a.s[0], 2 * k + 1, &pos[0]), 1);
        cr_assert_eq(value_at(&a.s[1], 2 * k + 1, &pos[1]), s.pipestat, "cycle %zu", k);
        cr_assert_eq(value_at(&a.s[2], 2 * k + 1, &pos[2]), s.tracesync, "cycle %zu", k);
        cr_assert_eq(value_at(&a.s[3], 2 * k + 1, &pos[3]), s.tracepkt, "cycle %zu", k);
    }
    free(cap);

    /* vcd2fst, then fst2vcd: the same signals with the same changes. */
    if (!have("vcd2fst") || !have("fst2vcd")) {
        const char *ci = getenv("CI");

        fprintf(stderr, "SKIPPED: vcd2fst/fst2vcd absent (Debian package gtkwave; "
                "scripts/deps.sh installs it): the VCD was not checked in GTKWave\n");
        cr_assert(!(ci && !strcmp(ci, "true")), "gtkwave absent under CI=true");
    } else {
        snprintf(cmd, sizeof cmd, "vcd2fst '%s/a.vcd' '%s/a.fst' >'%s/log' 2>&1 && "
                 "fst2vcd '%s/a.fst' >'%s/b.vcd' 2>>'%s/log'", dir, dir, dir, dir, dir, dir);
        rc = system(cmd);
        cr_assert_eq(rc, 0, "%s failed", cmd);
        snprintf(path, sizeof path, "%s/b.vcd", dir);
        parse_vcd(path, &b);
        cr_assert_eq(b.n, 4, "fst2vcd gave %zu signals", b.n);
        for (size_t i = 0; i < 4; i++) {
            signal_t *x = &a.s[i], *y = by_name(&b, names[i]);

            cr_assert(y, "%s lost in vcd2fst/fst2vcd", names[i]);
            cr_assert_eq(y->width, x->width, "%s width", names[i]);
            cr_assert_eq(y->n, x->n, "%s: %zu changes, %zu after fst2vcd", names[i], x->n,
                         y->n);
            for (size_t j = 0; j < x->n; j++) {
                cr_assert_eq(y->ch[j].t, x->ch[j].t, "%s change %zu", names[i], j);
                cr_assert_eq(y->ch[j].v, x->ch[j].v, "%s change %zu at %llu", names[i], j,
                             (unsigned long long)x->ch[j].t);
            }
        }
        cr_assert_eq(b.end, a.end);
        free_vcd(&b);
        fprintf(stderr, "vcd: %s %s: %zu cycles through vcd2fst/fst2vcd, same changes\n",
                prog, opts ? opts : "", ns);
    }
    free_vcd(&a);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(etmv1_vcd, roundtrip_vcd2fst_arm_basic, .timeout = 300)
{
    real_run("arm_basic", NULL, 8);
}

Test(etmv1_vcd, roundtrip_vcd2fst_irq_port4, .timeout = 300)
{
    real_run("irq_fiq", "port=4", 4);
}

Test(etmv1_vcd, roundtrip_vcd2fst_thumb_port16, .timeout = 300)
{
    real_run("thumb_basic", "port=16,bb", 16);
}

Test(etmv1_vcd, cli_refuses_other_protocols)
{
    char args[1024], *out, *err;
    int rc;

    snprintf(args, sizeof args, "roundtrip '%s/vectors/programs/arm_basic.elf' --protocol ptm "
             "--out /tmp/tb_vcd_never --vcd /tmp/tb_vcd_never.vcd", TB_BINARY_DIR);
    rc = tb_test_run_cli(args, NULL, &out, NULL, &err);
    cr_assert_eq(rc, 2);
    cr_assert(strstr(err, "--vcd") && strstr(err, "etmv1"), "%s", err);
    free(out);
    free(err);
    snprintf(args, sizeof args, "sim '%s/vectors/programs/arm_basic.elf' --protocol etmv3 "
             "--out /tmp/tb_vcd_never --vcd /tmp/tb_vcd_never.vcd", TB_BINARY_DIR);
    rc = tb_test_run_cli(args, NULL, &out, NULL, &err);
    cr_assert_eq(rc, 2);
    cr_assert(strstr(err, "--vcd") && strstr(err, "etmv1"), "%s", err);
    free(out);
    free(err);
    cr_assert(access("/tmp/tb_vcd_never", F_OK) != 0);
    cr_assert(access("/tmp/tb_vcd_never.vcd", F_OK) != 0);
}
