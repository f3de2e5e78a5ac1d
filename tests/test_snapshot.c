/*
 * Memory image and snapshot reader (protocol-notes 5.2).
 *
 * Oracles: the shipped TC2 / Snowball / trace_cov_a15 snapshots, DS-5's
 * instruction dump (opcodes at addresses), and OpenCSD's trc_pkt_lister
 * (which trace IDs and protocols it builds from the same files).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb_test.h"
#include "tracebench/frame.h"
#include "tracebench/snapshot.h"

/* ------------------------------------------------------------------ */
/* Memory image. */

Test(memimage, add_read_ptr)
{
    tb_memimage *m = tb_memimage_new();
    uint8_t a[16], b[8], out[32];
    size_t avail, i;
    const uint8_t *p;

    for (i = 0; i < sizeof a; i++)
        a[i] = (uint8_t)(0xA0 + i);
    for (i = 0; i < sizeof b; i++)
        b[i] = (uint8_t)(0xB0 + i);
    cr_assert_not_null(m);
    cr_assert_eq(tb_memimage_add(m, 0x1000, a, sizeof a), 0);
    /* Added out of order; the image keeps them sorted. */
    cr_assert_eq(tb_memimage_add(m, 0x0800, b, sizeof b), 0);
    /* Touching end to start: allowed, and reads run on across it. */
    cr_assert_eq(tb_memimage_add(m, 0x1010, b, sizeof b), 0);

    p = tb_memimage_ptr(m, 0x1004, &avail);
    cr_assert_eq(p[0], 0xA4);
    cr_assert_eq(avail, 12);
    p = tb_memimage_ptr(m, 0x0807, &avail);
    cr_assert_eq(p[0], 0xB7);
    cr_assert_eq(avail, 1);
    cr_assert_null(tb_memimage_ptr(m, 0x0808, &avail));
    cr_assert_eq(avail, 0);
    cr_assert_null(tb_memimage_ptr(m, 0x07FF, &avail));
    cr_assert_null(tb_memimage_ptr(m, 0xFFFFFFFF, &avail));

    cr_assert_eq(tb_memimage_read(m, 0x100E, out, 6), 6);
    cr_assert_arr_eq(out, ((uint8_t[]){0xAE, 0xAF, 0xB0, 0xB1, 0xB2, 0xB3}), 6);
    cr_assert_eq(tb_memimage_read(m, 0x1014, out, 32), 4);
    cr_assert_eq(tb_memimage_read(m, 0x1018, out, 4), 0);
    cr_assert_eq(tb_memimage_read(m, 0x0, out, 4), 0);
    tb_memimage_free(m);
}

Test(memimage, overlap_and_wrap_rejected)
{
    tb_memimage *m = tb_memimage_new();
    uint8_t d[32] = {0};

    cr_assert_eq(tb_memimage_add(m, 0x100, d, 16), 0);
    cr_assert_eq(tb_memimage_add(m, 0x10F, d, 1), TB_ERR_INVAL);
    cr_assert_eq(tb_memimage_add(m, 0xF1, d, 16), TB_ERR_INVAL);
    cr_assert_eq(tb_memimage_add(m, 0xF0, d, 32), TB_ERR_INVAL);
    cr_assert_eq(tb_memimage_add(m, 0x104, d, 2), TB_ERR_INVAL);
    cr_assert_eq(tb_memimage_add(m, 0xF0, d, 16), 0);
    /* The last byte of the 32-bit space is mappable; one more wraps. */
    cr_assert_eq(tb_memimage_add(m, 0xFFFFFFF0, d, 16), 0);
    cr_assert_eq(tb_memimage_add(m, 0xFFFFFFF0, d, 17), TB_ERR_INVAL);
    cr_assert_eq(tb_memimage_add(m, 0x200, NULL, 4), TB_ERR_INVAL);
    cr_assert_eq(tb_memimage_add(m, 0x200, d, 0), 0);
    cr_assert_eq(tb_memimage_read(m, 0xFFFFFFFF, d, 4), 1);
    tb_memimage_free(m);
}

/* Many regions in random order against a flat reference array. */
Test(memimage, random_regions)
{
    static uint8_t flat[1 << 16];
    static bool mapped[1 << 16];
    tb_memimage *m = tb_memimage_new();
    uint64_t seed = 7;
    int i, added = 0;

    for (i = 0; i < 2000; i++) {
        uint32_t a = (uint32_t)(tb_test_rand(&seed) % (sizeof flat - 64));
        size_t n = 1 + (size_t)(tb_test_rand(&seed) % 40), k;
        uint8_t d[40];
        bool free_range = true;
        for (k = 0; k < n; k++) {
            d[k] = (uint8_t)tb_test_rand(&seed);
            free_range = free_range && !mapped[a + k];
        }
        cr_assert_eq(tb_memimage_add(m, a, d, n), free_range ? 0 : TB_ERR_INVAL);
        if (free_range) {
            added++;
            for (k = 0; k < n; k++) {
                flat[a + k] = d[k];
                mapped[a + k] = true;
            }
        }
    }
    cr_assert_gt(added, 300);
    for (i = 0; i < (int)sizeof flat - 64; i++) {
        uint8_t out[64];
        size_t want = 0, got = tb_memimage_read(m, (uint32_t)i, out, 64), avail;
        const uint8_t *p = tb_memimage_ptr(m, (uint32_t)i, &avail);
        while (want < 64 && mapped[i + want])
            want++;
        cr_assert_eq(got, want, "read at %d", i);
        cr_assert_arr_eq(out, flat + i, got);
        cr_assert_eq(p != NULL, mapped[i]);
        if (p) {
            cr_assert_leq(avail, want == 64 ? avail : want);
            cr_assert_eq(*p, flat[i]);
        }
    }
    tb_memimage_free(m);
}

/* ------------------------------------------------------------------ */
/* Real snapshots. */

static const char *snap_dir(const char *name)
{
    static char path[1024];
    const char *ref = tb_test_reference_dir("snapshot: real snapshots");

    if (!ref)
        return NULL;
    snprintf(path, sizeof path, "%s/opencsd-snapshots/%s", ref, name);
    return path;
}

static const tb_snap_source *source(const tb_snapshot *s, const char *name)
{
    size_t i;

    for (i = 0; i < s->n_sources; i++)
        if (strcmp(s->sources[i].name, name) == 0)
            return &s->sources[i];
    cr_assert_fail("no source %s", name);
    return NULL;
}

Test(snapshot, tc2)
{
    const char *dir = snap_dir("TC2");
    tb_snapshot s;
    char err[512];
    tb_config cfg;
    tb_memimage *m = NULL;
    const tb_snap_device *d;
    uint8_t op[4];
    uint32_t v;
    unsigned flags = 99;

    if (!dir)
        return;
    cr_assert_eq(tb_snapshot_load(&s, dir, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.n_devices, 11);
    cr_assert_eq(s.n_buffers, 1);
    cr_assert_str_eq(s.buffers[0].name, "ETB_0");
    cr_assert_eq(s.buffers[0].n_files, 1);
    cr_assert_str_eq(s.buffers[0].files[0], "cstrace.bin");
    cr_assert_eq(tb_snap_buffer_frame_flags(&s.buffers[0], &flags), 0);
    cr_assert_eq(flags, TB_FRAME_MEM_ALIGNED);
    cr_assert_eq(s.n_sources, 6);

    d = tb_snapshot_device(&s, "ETM_0");
    cr_assert_not_null(d);
    cr_assert_str_eq(d->cls, "trace_source");
    cr_assert_str_eq(d->type, "ETM3.5");
    cr_assert_str_eq(d->ini, "device_5.ini");
    cr_assert_eq(tb_snap_device_reg(d, "etmccer", &v), 0);
    cr_assert_eq(v, 0x344008F2);
    cr_assert_eq(tb_snap_device_reg(d, "ETMSYNCFR", &v), TB_ERR_NOT_FOUND);

    cr_assert_eq(tb_snapshot_source_config(&s, source(&s, "ETM_0"), &cfg, err,
                                           sizeof err), 0, "%s", err);
    cr_assert_eq(cfg.protocol, TB_PROTO_ETMV3);
    cr_assert_eq(cfg.trace_id, 0x10);
    cr_assert_eq(cfg.etmcr, 0x10001860);
    cr_assert_eq(cfg.arch_minor, 5);
    cr_assert(cfg.cycle_accurate && cfg.timestamps);
    cr_assert_eq(tb_snapshot_source_config(&s, source(&s, "PTM_0"), &cfg, err,
                                           sizeof err), 0, "%s", err);
    cr_assert_eq(cfg.protocol, TB_PROTO_PTM);
    cr_assert_eq(cfg.trace_id, 0x13);
    cr_assert_eq(cfg.etmidr, 0x411CF312);
    cr_assert_str_eq(source(&s, "PTM_0")->core, "cpu_3");
    cr_assert_str_eq(source(&s, "PTM_0")->buffer, "ETB_0");
    /* The ITM is captured but no ETMv3/PTM: a clear refusal. */
    cr_assert_eq(tb_snapshot_source_config(&s, source(&s, "ITM_0"), &cfg, err,
                                           sizeof err), TB_ERR_UNSUPPORTED);
    cr_assert(strstr(err, "ITM") && strstr(err, "device_10.ini"), "%s", err);
    cr_assert_eq(tb_snapshot_source_memory(&s, source(&s, "ITM_0"), &m, err,
                                           sizeof err), TB_ERR_NOT_FOUND);

    /* cpu_3's dump: kernel_dump.bin at 0xC0008000.  DS-5 saw ADD.W
     * 0xEB020385 at 0xC0018D82 and LDR 0x6963 at 0xC002115C (Thumb,
     * halfwords little-endian). */
    cr_assert_eq(tb_snapshot_source_memory(&s, source(&s, "PTM_0"), &m, err,
                                           sizeof err), 1, "%s", err);
    cr_assert_eq(tb_memimage_read(m, 0xC0018D82, op, 4), 4);
    cr_assert_arr_eq(op, ((uint8_t[]){0x02, 0xEB, 0x85, 0x03}), 4);
    cr_assert_eq(tb_memimage_read(m, 0xC002115C, op, 2), 2);
    cr_assert_arr_eq(op, ((uint8_t[]){0x63, 0x69}), 2);
    cr_assert_eq(tb_memimage_read(m, 0xC0008000 + 0x50000 - 2, op, 4), 2);
    cr_assert_eq(tb_memimage_read(m, 0xC0007FFF, op, 1), 0);
    tb_memimage_free(m);
    tb_snapshot_fini(&s);
}

Test(snapshot, snowball)
{
    const char *dir = snap_dir("Snowball");
    tb_snapshot s;
    char err[512];
    tb_config cfg;
    tb_memimage *m;
    uint8_t *buf;
    size_t len;

    if (!dir)
        return;
    cr_assert_eq(tb_snapshot_load(&s, dir, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.n_devices, 4);
    cr_assert_eq(s.n_sources, 2);
    cr_assert_eq(tb_snapshot_source_config(&s, source(&s, "PTM_1"), &cfg, err,
                                           sizeof err), 0, "%s", err);
    cr_assert_eq(cfg.protocol, TB_PROTO_PTM);
    cr_assert_eq(cfg.arch_minor, 0);
    cr_assert_eq(cfg.trace_id, 0x11);
    cr_assert_eq(tb_snapshot_source_memory(&s, source(&s, "PTM_1"), &m, err,
                                           sizeof err), 1, "%s", err);
    tb_memimage_free(m);
    cr_assert_eq(tb_snapshot_read_buffer(&s, &s.buffers[0], &buf, &len, err,
                                         sizeof err), 0, "%s", err);
    cr_assert_eq(len, 8192);
    free(buf);
    tb_snapshot_fini(&s);
}

Test(snapshot, trace_cov_a15)
{
    const char *dir = snap_dir("trace_cov_a15");
    tb_snapshot s;
    char err[512];
    tb_config cfg;
    tb_memimage *m;
    const tb_snap_source *src;
    const tb_snap_device *core;
    unsigned flags;
    uint32_t v;
    uint8_t *buf, *file, out[8];
    size_t len, flen;
    char path[1200];

    if (!dir)
        return;
    cr_assert_eq(tb_snapshot_load(&s, dir, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.n_devices, 6);
    /* One captured source plus four that core_trace_sources names but no
     * buffer holds. */
    cr_assert_eq(s.n_sources, 5);
    src = source(&s, "PTM_0_2");
    cr_assert_str_eq(src->buffer, "PTM_0_2");
    cr_assert_str_eq(src->core, "Cortex-A15_0");
    cr_assert_str_eq(source(&s, "ETM_0_4")->buffer, "");
    cr_assert_str_eq(source(&s, "ETM_0_4")->core, "Cortex-A7_0");
    cr_assert_eq(tb_snap_buffer_frame_flags(&s.buffers[0], &flags), 1);
    cr_assert_eq(tb_snapshot_source_config(&s, src, &cfg, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(cfg.protocol, TB_PROTO_PTM);
    cr_assert_eq(cfg.etmcr, 0x20000400);
    cr_assert_eq(cfg.trace_id, 0x02);
    cr_assert(cfg.return_stack && !cfg.cycle_accurate);

    core = tb_snapshot_device(&s, "Cortex-A15_0");
    cr_assert_not_null(core);
    cr_assert_gt(core->n_regs, 250);
    /* A 64-bit register is kept whole, and refused as a 32-bit one. */
    cr_assert_eq(tb_snap_device_reg(core, "CNTPCT", &v), TB_ERR_FORMAT);
    cr_assert_eq(tb_snap_device_reg(core, "MIDR", &v), 0);
    cr_assert_eq(v, 0x412FC0F1);
    cr_assert_eq(core->n_dumps, 9);
    cr_assert_str_eq(core->dumps[1].file, "mem_Cortex-A15_0_1_RO_CODE.bin");
    cr_assert_eq(core->dumps[1].address, 0x80000278);
    cr_assert_str_eq(core->dumps[1].space, "S");

    cr_assert_eq(tb_snapshot_source_memory(&s, src, &m, err, sizeof err), 9,
                 "%s", err);
    snprintf(path, sizeof path, "%s/mem_Cortex-A15_0_1_RO_CODE.bin", dir);
    file = tb_test_read_file(path, &flen);
    cr_assert_not_null(file);
    cr_assert_eq(flen, 6576);
    cr_assert_eq(tb_memimage_read(m, 0x80000278 + 100, out, 8), 8);
    cr_assert_arr_eq(out, file + 100, 8);
    /* VECTORS (632 bytes at 0x80000000) ends where RO_CODE starts. */
    cr_assert_eq(tb_memimage_read(m, 0x80000274, out, 8), 8);
    cr_assert_arr_eq(out + 4, file, 4);
    free(file);
    tb_memimage_free(m);

    cr_assert_eq(tb_snapshot_read_buffer(&s, &s.buffers[0], &buf, &len, err,
                                         sizeof err), 0, "%s", err);
    cr_assert_eq(len, 36);
    free(buf);
    tb_snapshot_fini(&s);
}

/* OpenCSD builds one packet printer per ETMv3/PTM source: the same IDs
 * and protocols must come out of our reading of the same files. */
Test(snapshot, sources_equal_opencsd)
{
    static const char *snaps[] = {"TC2", "Snowball", "trace_cov_a15"};
    const char *ci = getenv("CI");
    size_t k;

    if (system("command -v trc_pkt_lister >/dev/null 2>&1") != 0) {
        if (ci && strcmp(ci, "true") == 0)
            cr_assert_fail("trc_pkt_lister missing under CI=true");
        fprintf(stderr, "\n*** SKIPPED: trc_pkt_lister not installed ***\n\n");
        return;
    }
    for (k = 0; k < 3; k++) {
        const char *dir = snap_dir(snaps[k]);
        char cmd[1400], line[512], mine[512] = "", theirs[512] = "";
        tb_snapshot s;
        char err[512];
        FILE *p;
        size_t i, b;
        unsigned flags;

        if (!dir)
            return;
        cr_assert_eq(tb_snapshot_load(&s, dir, err, sizeof err), 0, "%s", err);
        for (i = 0; i < s.n_sources; i++) {
            tb_config cfg;
            char e[256];
            if (!s.sources[i].buffer[0] ||
                tb_snapshot_source_config(&s, &s.sources[i], &cfg, e, sizeof e) < 0)
                continue;
            /* OpenCSD numbers a source_data buffer's only source 0. */
            for (b = 0; b < s.n_buffers; b++)
                if (strcmp(s.buffers[b].name, s.sources[i].buffer) == 0)
                    break;
            cr_assert_lt(b, s.n_buffers);
            snprintf(mine + strlen(mine), sizeof mine - strlen(mine), "%s:%02x ",
                     cfg.protocol == TB_PROTO_PTM ? "PTM" : "ETMV3",
                     tb_snap_buffer_frame_flags(&s.buffers[b], &flags) == 1
                         ? 0 : cfg.trace_id);
        }
        tb_snapshot_fini(&s);
        snprintf(cmd, sizeof cmd, "trc_pkt_lister -ss_dir '%s' -logstdout 2>&1",
                 dir);
        p = popen(cmd, "r");
        cr_assert_not_null(p);
        while (fgets(line, sizeof line, p)) {
            char proto[32];
            unsigned id;
            if (sscanf(line, "Trace Packet Lister : Protocol printer %31s on "
                             "Trace ID 0x%x", proto, &id) == 2)
                snprintf(theirs + strlen(theirs), sizeof theirs - strlen(theirs),
                         "%s:%02x ", proto, id);
        }
        pclose(p);
        cr_assert_str_eq(mine, theirs, "%s", snaps[k]);
        cr_assert_neq(mine[0], '\0');
    }
}

/* ------------------------------------------------------------------ */
/* Bad snapshots: clear one-line errors, no crash. */

typedef struct tmpdir {
    char path[256];
} tmpdir;

static void tmp_make(tmpdir *t)
{
    snprintf(t->path, sizeof t->path, "/tmp/tb_snap_XXXXXX");
    cr_assert_not_null(mkdtemp(t->path));
}

static void tmp_write(const tmpdir *t, const char *name, const void *data,
                      size_t len)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", t->path, name);
    f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void tmp_text(const tmpdir *t, const char *name, const char *text)
{
    tmp_write(t, name, text, strlen(text));
}

static void tmp_remove(const tmpdir *t)
{
    char cmd[300];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->path);
    cr_assert_eq(system(cmd), 0);
}

static const char SNAP_OK[] =
    "; comment\r\n[snapshot]\r\nversion = 1.0   # trailing comment\r\n"
    "[device_list]\r\ndevice0=cpu.ini\r\n  device1 = etm.ini\r\n"
    "[trace]\r\nmetadata=trace.ini\r\n";
static const char CPU_OK[] =
    "[device]\nname=cpu_0\nclass=core\ntype=Cortex-A9\n"
    "[dump1]\nfile=code.bin\naddress=0x8000\n"
    "[dump2]\nfile=code.bin\naddress=0x9000\noffset=4\nlength=8\n";
static const char ETM_OK[] =
    "[device]\nname=ETM_0\nclass=trace_source\ntype=ETM3.3\n[regs]\n"
    "ETMCR(0x000)=0x00001000\netmidr(id:0x79)=0x410CF230\n"
    "ETMCCER=0\nETMTRACEIDR(0x080)=0x10\n";
static const char TRACE_OK[] =
    "[buffer0]\nname=ETB_0\nfile=a.bin, b.bin\nformat=coresight\n"
    "[trace_buffers]\nbuffers=buffer0\n"
    "[core_trace_sources]\ncpu_0=ETM_0\n"
    "[source_buffers]\nETM_0=ETB_0\n";

static void write_ok(const tmpdir *t)
{
    uint8_t code[32], a[16] = {0}, b[16] = {0};
    size_t i;

    for (i = 0; i < sizeof code; i++)
        code[i] = (uint8_t)i;
    a[0] = 1;
    b[0] = 2;
    tmp_text(t, "snapshot.ini", SNAP_OK);
    tmp_text(t, "cpu.ini", CPU_OK);
    tmp_text(t, "etm.ini", ETM_OK);
    tmp_text(t, "trace.ini", TRACE_OK);
    tmp_write(t, "code.bin", code, sizeof code);
    tmp_write(t, "a.bin", a, sizeof a);
    tmp_write(t, "b.bin", b, sizeof b);
}

Test(snapshot, synthetic_ok)
{
    tmpdir t;
    tb_snapshot s;
    char err[512];
    tb_config cfg;
    tb_memimage *m;
    uint8_t *buf, out[40];
    size_t len;

    tmp_make(&t);
    write_ok(&t);
    cr_assert_eq(tb_snapshot_load(&s, t.path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.n_sources, 1);
    cr_assert_str_eq(s.sources[0].core, "cpu_0");
    cr_assert_eq(tb_snapshot_source_config(&s, &s.sources[0], &cfg, err,
                                           sizeof err), 0, "%s", err);
    cr_assert_eq(cfg.arch_minor, 3);
    cr_assert_eq(cfg.trace_id, 0x10);
    cr_assert_eq(tb_snapshot_source_memory(&s, &s.sources[0], &m, err,
                                           sizeof err), 2, "%s", err);
    cr_assert_eq(tb_memimage_read(m, 0x8000, out, 40), 32);
    cr_assert_eq(out[31], 31);
    cr_assert_eq(tb_memimage_read(m, 0x9000, out, 40), 8);
    cr_assert_arr_eq(out, ((uint8_t[]){4, 5, 6, 7, 8, 9, 10, 11}), 8);
    tb_memimage_free(m);
    cr_assert_eq(tb_snapshot_read_buffer(&s, &s.buffers[0], &buf, &len, err,
                                         sizeof err), 0, "%s", err);
    cr_assert_eq(len, 32);
    cr_assert_eq(buf[0], 1);
    cr_assert_eq(buf[16], 2);
    free(buf);
    tb_snapshot_fini(&s);
    tmp_remove(&t);
}

/* One broken file on top of a good snapshot: the expected code and a
 * fragment the one-line message must contain. */
typedef struct bad_case {
    const char *file, *text;
    int code;
    const char *msg;
} bad_case;

static const bad_case BAD[] = {
    {"snapshot.ini", "[snapshot]\nversion=2.0\n", TB_ERR_UNSUPPORTED, "snapshot.ini:2"},
    {"snapshot.ini", "[device_list]\ndevice0=cpu.ini\n[trace]\nmetadata=trace.ini\n",
     TB_ERR_FORMAT, "version"},
    {"snapshot.ini", "[snapshot]\nversion=1.0\n[trace]\nmetadata=trace.ini\n",
     TB_ERR_FORMAT, "names no device"},
    {"snapshot.ini", "[snapshot]\nversion=1.0\n[device_list]\nd=cpu.ini\n",
     TB_ERR_FORMAT, "metadata"},
    {"snapshot.ini", "[snapshot]\nversion=1.0\n[device_list]\nd=nothere.ini\n",
     TB_ERR_IO, "nothere.ini"},
    {"snapshot.ini", "[snapshot\nversion=1.0\n", TB_ERR_FORMAT, "snapshot.ini:1"},
    {"snapshot.ini", "version=1.0\n", TB_ERR_FORMAT, "before any"},
    {"snapshot.ini", "[snapshot]\nversion=1.0\nthis is not ini\n", TB_ERR_FORMAT,
     "snapshot.ini:3"},
    {"snapshot.ini", "[snapshot]\nversion=1.0\n[device_list]\nd=cpu.ini\nd2=cpu.ini\n"
     "[trace]\nmetadata=trace.ini\n", TB_ERR_FORMAT, "also used"},
    {"snapshot.ini", "[snapshot]\n\x01\x02garbage\x7f\n", TB_ERR_FORMAT, "snapshot.ini:2"},
    {"cpu.ini", "[device]\nname=cpu_0\n[dump]\nfile=code.bin\n", TB_ERR_FORMAT,
     "cpu.ini:3: dump section without address"},
    {"cpu.ini", "[device]\nname=cpu_0\n[dump]\nfile=code.bin\naddress=0x1FFFFFFFF\n",
     TB_ERR_FORMAT, "beyond 32 bits"},
    {"cpu.ini", "[device]\nname=cpu_0\n[dump]\nfile=code.bin\n"
     "address=99999999999999999999999\n", TB_ERR_FORMAT, "not a number"},
    {"cpu.ini", "[device]\nname=cpu_0\n[dump]\nfile=code.bin\naddress=-4\n",
     TB_ERR_FORMAT, "cpu.ini:5"},
    {"cpu.ini", "[device]\nclass=core\n", TB_ERR_FORMAT, "no name"},
    {"etm.ini", "[device]\nname=ETM_0\n[regs]\nETMCR=0x10zz\n", TB_ERR_FORMAT,
     "etm.ini:4: register ETMCR"},
    {"etm.ini", "[device]\nname=ETM_0\n[regs]\nETMCR=1\nETMCR(0)=2\n", TB_ERR_FORMAT,
     "given twice"},
    {"trace.ini", "[buffer0]\nname=ETB_0\nfile=a.bin\nformat=coresight\n",
     TB_ERR_FORMAT, "trace_buffers"},
    {"trace.ini", "[trace_buffers]\nbuffers=buffer0,buffer1\n[buffer0]\nname=ETB_0\n"
     "file=a.bin\nformat=coresight\n", TB_ERR_FORMAT, "[buffer1]"},
    {"trace.ini", "[trace_buffers]\nbuffers=buffer0\n[buffer0]\nname=ETB_0\n"
     "format=coresight\n", TB_ERR_FORMAT, "no file="},
    {"trace.ini", "[trace_buffers]\nbuffers=buffer0\n[buffer0]\nname=ETB_0\n"
     "file=a.bin\nformat=coresight\n[source_buffers]\nETM_0=ETB_9\n", TB_ERR_FORMAT,
     "ETB_9"},
    {"trace.ini", "[trace_buffers]\nbuffers=b0,b1,b2,b3,b4,b5,b6,b7,b8\n",
     TB_ERR_LIMIT, "more than 8"},
};

Test(snapshot, bad_inputs)
{
    size_t i;

    for (i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        tmpdir t;
        tb_snapshot s;
        char err[512];
        int rc;

        tmp_make(&t);
        write_ok(&t);
        tmp_text(&t, BAD[i].file, BAD[i].text);
        rc = tb_snapshot_load(&s, t.path, err, sizeof err);
        cr_assert_eq(rc, BAD[i].code, "case %zu: %d (%s)", i, rc, err);
        cr_assert_not_null(strstr(err, BAD[i].msg), "case %zu: '%s' lacks '%s'",
                           i, err, BAD[i].msg);
        cr_assert_null(strchr(err, '\n'), "case %zu: multi-line", i);
        cr_assert_null(s.devices);
        tmp_remove(&t);
    }
}

Test(snapshot, bad_source_and_memory)
{
    tmpdir t;
    tb_snapshot s;
    char err[512];
    tb_config cfg;
    tb_memimage *m = (tb_memimage *)&m;
    unsigned flags;

    tmp_make(&t);
    write_ok(&t);
    /* ETMTRACEIDR missing: named with its file. */
    tmp_text(&t, "etm.ini", "[device]\nname=ETM_0\ntype=ETM3.5\n[regs]\n"
                            "ETMCR=0\nETMIDR=0x410CF250\nETMCCER=0\n");
    /* The second dump overlaps the first; its length passes the file. */
    tmp_text(&t, "cpu.ini", "[device]\nname=cpu_0\n[dump]\nfile=code.bin\n"
                            "address=0x8000\n[dump2]\nfile=code.bin\naddress=0x8010\n");
    cr_assert_eq(tb_snapshot_load(&s, t.path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tb_snapshot_source_config(&s, &s.sources[0], &cfg, err,
                                           sizeof err), TB_ERR_CONFIG);
    cr_assert(strstr(err, "ETMTRACEIDR") && strstr(err, "etm.ini"), "%s", err);
    cr_assert_eq(tb_snapshot_source_memory(&s, &s.sources[0], &m, err,
                                           sizeof err), TB_ERR_INVAL);
    cr_assert_null(m);
    cr_assert(strstr(err, "overlaps"), "%s", err);
    tb_snapshot_fini(&s);

    /* Type and ETMIDR disagree; dump file absent; length beyond the file. */
    tmp_text(&t, "etm.ini", "[device]\nname=ETM_0\ntype=PTM1.1\n[regs]\n"
                            "ETMCR=0\nETMIDR=0x410CF250\nETMCCER=0\nETMTRACEIDR=2\n");
    tmp_text(&t, "cpu.ini", "[device]\nname=cpu_0\n[dump]\nfile=gone.bin\n"
                            "address=0x8000\n");
    cr_assert_eq(tb_snapshot_load(&s, t.path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tb_snapshot_source_config(&s, &s.sources[0], &cfg, err,
                                           sizeof err), TB_ERR_CONFIG);
    cr_assert(strstr(err, "ETMIDR"), "%s", err);
    cr_assert_eq(tb_snapshot_source_memory(&s, &s.sources[0], &m, err,
                                           sizeof err), TB_ERR_IO);
    cr_assert(strstr(err, "gone.bin"), "%s", err);
    tb_snapshot_fini(&s);

    tmp_text(&t, "cpu.ini", "[device]\nname=cpu_0\n[dump]\nfile=code.bin\n"
                            "address=0x8000\nlength=33\n");
    tmp_text(&t, "trace.ini", "[trace_buffers]\nbuffers=b\n[b]\nname=X\n"
                              "file=a.bin\nformat=tpiu_weird\n[source_buffers]\n"
                              "ETM_0=X\n[core_trace_sources]\ncpu_0=ETM_0\n");
    cr_assert_eq(tb_snapshot_load(&s, t.path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tb_snapshot_source_memory(&s, &s.sources[0], &m, err,
                                           sizeof err), TB_ERR_FORMAT);
    cr_assert(strstr(err, "code.bin"), "%s", err);
    cr_assert_eq(tb_snap_buffer_frame_flags(&s.buffers[0], &flags), TB_ERR_FORMAT);
    tb_snapshot_fini(&s);

    cr_assert_eq(tb_snapshot_load(&s, "/nonexistent/dir", err, sizeof err),
                 TB_ERR_IO);
    cr_assert(strstr(err, "/nonexistent/dir/snapshot.ini"), "%s", err);
    tmp_remove(&t);
}

/* Random bytes, and random mutations of good files: always a clean
 * return (the sanitizer build checks the rest). */
Test(snapshot, fuzz_ini)
{
    uint64_t seed = 42;
    int iter;
    tmpdir t;

    tmp_make(&t);
    for (iter = 0; iter < 300; iter++) {
        static const char *files[] = {"snapshot.ini", "cpu.ini", "etm.ini",
                                      "trace.ini"};
        static const char *texts[] = {SNAP_OK, CPU_OK, ETM_OK, TRACE_OK};
        size_t f = (size_t)(tb_test_rand(&seed) % 4), n = strlen(texts[f]), k;
        char buf[512];
        tb_snapshot s;
        char err[256];
        int rc;

        write_ok(&t);
        memcpy(buf, texts[f], n);
        for (k = 0; k < 1 + tb_test_rand(&seed) % 6; k++)
            buf[tb_test_rand(&seed) % n] = (char)tb_test_rand(&seed);
        if (iter % 10 == 0)
            n = (size_t)(tb_test_rand(&seed) % n);
        tmp_write(&t, files[f], buf, n);
        rc = tb_snapshot_load(&s, t.path, err, sizeof err);
        if (rc == 0) {
            size_t i;
            for (i = 0; i < s.n_sources; i++) {
                tb_config cfg;
                tb_memimage *m = NULL;
                tb_snapshot_source_config(&s, &s.sources[i], &cfg, err, sizeof err);
                if (tb_snapshot_source_memory(&s, &s.sources[i], &m, err,
                                              sizeof err) >= 0)
                    tb_memimage_free(m);
            }
            tb_snapshot_fini(&s);
        } else {
            cr_assert_lt(rc, 0);
            cr_assert_neq(err[0], '\0', "iter %d: empty error", iter);
        }
    }
    tmp_remove(&t);
}

/* ------------------------------------------------------------------ */
/* Writer: what tb_snapshot_write produces reads back, and OpenCSD decodes
 * it exactly as it decodes the snapshot it was made from. */

static char *lister_lines(const char *dir, const char *opts, size_t *count)
{
    char cmd[1400], line[2048];
    char *all = NULL;
    size_t len = 0, cap = 0;
    FILE *p;

    *count = 0;
    snprintf(cmd, sizeof cmd, "trc_pkt_lister -ss_dir '%s' %s -logstdout 2>&1",
             dir, opts);
    p = popen(cmd, "r");
    cr_assert_not_null(p);
    while (fgets(line, sizeof line, p)) {
        size_t l = strlen(line);
        if (strncmp(line, "Idx:", 4) != 0)
            continue;
        if (len + l + 1 > cap) {
            cap = (len + l + 1) * 2;
            all = realloc(all, cap);
            cr_assert_not_null(all);
        }
        memcpy(all + len, line, l + 1);
        len += l;
        (*count)++;
    }
    cr_assert_eq(pclose(p), 0, "%s", cmd);
    return all ? all : calloc(1, 1);
}

/* Rewrites sources of a real snapshot (their registers, their core's
 * dumps, the buffer bytes) with tb_snapshot_write. */
static void rewrite(const char *from, const char *to, const char *const *names,
                    size_t n)
{
    tb_snapshot s;
    char err[512];
    tb_config cfg[4];
    tb_snap_out_source out[4];
    tb_snap_region regs[4][TB_SNAP_MAX_DUMPS];
    uint8_t *mem[4][TB_SNAP_MAX_DUMPS] = {{0}};
    const tb_snap_buffer *buf = NULL;
    uint8_t *data;
    size_t len, i, k, b;

    cr_assert_leq(n, 4);
    cr_assert_eq(tb_snapshot_load(&s, from, err, sizeof err), 0, "%s", err);
    for (i = 0; i < n; i++) {
        const tb_snap_source *src = source(&s, names[i]);
        const tb_snap_device *core = tb_snapshot_device(&s, src->core);
        cr_assert_not_null(core);
        cr_assert_eq(tb_snapshot_source_config(&s, src, &cfg[i], err, sizeof err),
                     0, "%s", err);
        for (k = 0; k < core->n_dumps; k++) {
            char path[1200];
            size_t flen;
            const tb_snap_dump *d = &core->dumps[k];
            snprintf(path, sizeof path, "%s/%s", from, d->file);
            mem[i][k] = tb_test_read_file(path, &flen);
            cr_assert_not_null(mem[i][k]);
            cr_assert_leq(d->offset + d->length, flen);
            regs[i][k] = (tb_snap_region){.address = d->address,
                                          .data = mem[i][k] + d->offset,
                                          .len = d->length ? d->length
                                                           : flen - d->offset};
        }
        out[i] = (tb_snap_out_source){.name = src->name, .cfg = &cfg[i],
                                      .core = core->name, .core_type = core->type,
                                      .regions = regs[i], .n_regions = core->n_dumps};
        for (b = 0; b < s.n_buffers; b++)
            if (strcmp(s.buffers[b].name, src->buffer) == 0)
                buf = &s.buffers[b];
    }
    cr_assert_not_null(buf);
    cr_assert_eq(tb_snapshot_read_buffer(&s, buf, &data, &len, err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(tb_snapshot_write(to, out, n, data, len, buf->format, err,
                                   sizeof err), 0, "%s", err);
    free(data);
    for (i = 0; i < n; i++)
        for (k = 0; k < TB_SNAP_MAX_DUMPS; k++)
            free(mem[i][k]);
    tb_snapshot_fini(&s);
}

static void check_rewrite(const char *snap, const char *const *names, size_t n,
                          const char *const *ids, size_t n_ids, size_t min_lines)
{
    const char *from = snap_dir(snap);
    const char *ci = getenv("CI");
    tmpdir t;
    tb_snapshot back;
    char err[512];
    size_t i;

    if (!from)
        return;
    tmp_make(&t);
    rewrite(from, t.path, names, n);
    /* Read back by our own reader. */
    cr_assert_eq(tb_snapshot_load(&back, t.path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.n_sources, n);
    for (i = 0; i < n; i++) {
        tb_memimage *m;
        cr_assert_str_eq(back.sources[i].name, names[i]);
        cr_assert_gt(tb_snapshot_source_memory(&back, &back.sources[i], &m, err,
                                               sizeof err), 0, "%s", err);
        tb_memimage_free(m);
    }
    tb_snapshot_fini(&back);

    if (system("command -v trc_pkt_lister >/dev/null 2>&1") != 0) {
        if (ci && strcmp(ci, "true") == 0)
            cr_assert_fail("trc_pkt_lister missing under CI=true");
        fprintf(stderr, "\n*** SKIPPED: trc_pkt_lister not installed ***\n\n");
    } else {
        for (i = 0; i < n_ids; i++) {
            size_t na, nb;
            char opts[64];
            char *a, *b;
            snprintf(opts, sizeof opts, "-decode %s", ids[i]);
            a = lister_lines(from, opts, &na);
            b = lister_lines(t.path, opts, &nb);
            cr_assert_geq(na, min_lines, "%s %s: %zu lines", snap, ids[i], na);
            cr_assert_eq(na, nb, "%s %s", snap, ids[i]);
            cr_assert_str_eq(a, b, "%s %s", snap, ids[i]);
            free(a);
            free(b);
        }
    }
    tmp_remove(&t);
}

Test(snapshot, writer_trace_cov_a15)
{
    static const char *const names[] = {"PTM_0_2"};
    static const char *const ids[] = {""};

    check_rewrite("trace_cov_a15", names, 1, ids, 1, 20);
}

Test(snapshot, writer_tc2)
{
    static const char *const names[] = {"ETM_0", "PTM_0"};
    static const char *const ids[] = {"-id 0x10", "-id 0x13"};

    check_rewrite("TC2", names, 2, ids, 2, 3000);
}

Test(snapshot, writer_bad_arguments)
{
    tb_config cfg;
    tb_snap_out_source src = {.name = "ETM_0", .cfg = &cfg, .core = "cpu_0"};
    tb_snap_out_source two[2];
    char err[256];
    uint8_t b[16] = {0};

    cr_assert_eq(tb_config_from_regs(&cfg, 0, 0x410CF250, 0, 0x10), 0);
    two[0] = two[1] = src;
    cr_assert_eq(tb_snapshot_write("/tmp", &src, 1, b, 16, "tpiu", err, sizeof err),
                 TB_ERR_INVAL);
    cr_assert_eq(tb_snapshot_write("/tmp", two, 2, b, 16, "source_data", err,
                                   sizeof err), TB_ERR_INVAL);
    cr_assert_eq(tb_snapshot_write("/tmp", two, 2, b, 16, "coresight", err,
                                   sizeof err), TB_ERR_INVAL);
    cr_assert(strstr(err, "twice"), "%s", err);
    src.name = "bad name;x";
    cr_assert_eq(tb_snapshot_write("/tmp", &src, 1, b, 16, "coresight", err,
                                   sizeof err), TB_ERR_INVAL);
    src.name = "ETM_0";
    cr_assert_eq(tb_snapshot_write("/nonexistent/x/y", &src, 1, b, 16, "coresight",
                                   err, sizeof err), TB_ERR_IO);
    cr_assert(strstr(err, "/nonexistent/x/y"), "%s", err);
}

/* An empty trace buffer (NULL, 0: the header allows it) is written as an
 * empty trace_buffer.bin.  Before, fwrite was handed the NULL pointer,
 * which UBSan (the ASan+UBSan build) stops on. */
Test(snapshot, writer_empty_buffer)
{
    tb_config cfg;
    tb_snap_out_source src = {.name = "ETM_0", .cfg = &cfg, .core = "cpu_0"};
    char err[256], path[512];
    struct stat st;
    tmpdir t;

    cr_assert_eq(tb_config_from_regs(&cfg, 0, 0x410CF250, 0, 0x10), 0);
    tmp_make(&t);
    cr_assert_eq(tb_snapshot_write(t.path, &src, 1, NULL, 0, "coresight", err, sizeof err),
                 0, "%s", err);
    snprintf(path, sizeof path, "%s/trace_buffer.bin", t.path);
    cr_assert_eq(stat(path, &st), 0, "%s", path);
    cr_assert_eq(st.st_size, 0);
    tmp_remove(&t);
}
