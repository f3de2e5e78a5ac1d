/*
 * Minimal snapshots that prove an OpenCSD 1.3.3 decode bug, so that a
 * mismatch between OpenCSD and our trace is never "fixed" by bending the
 * encoder (issue 4).  Each case runs trc_pkt_lister -decode live on a
 * snapshot written here and checks both decoders against the truth,
 * which is known by construction.
 *
 * ETMv3 BLX(imm) across P-headers (protocol-notes 4.4 item 1, 4.5):
 * OpenCSD restarts every P-header in the ISA of the last I-sync or branch
 * packet, so after an ARM BLX to Thumb that ends one P-header, the next
 * header's instructions are decoded as ARM.  With all atoms in one header
 * (the control) it decodes Thumb correctly: the trace is well-formed.
 *
 * ETMv3 Cancel dropped (docs/opencsd-bugs.md bug 2): further down, with
 * a control for each of plain and cycle-accurate trace.
 *
 * PTM branch packet NS bit not applied (bug 10): at the end, with an
 * ETMv3 control.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tb_test.h"
#include "tracebench/decoder.h"
#include "tracebench/snapshot.h"

static bool lister_or_skip(void)
{
    const char *ci = getenv("CI");

    if (system("command -v trc_pkt_lister >/dev/null 2>&1") == 0)
        return true;
    if (ci && !strcmp(ci, "true"))
        cr_assert_fail("trc_pkt_lister (libopencsd-bin) missing under CI=true");
    fprintf(stderr, "\n*** SKIPPED: trc_pkt_lister not installed ***\n\n");
    cr_skip_test("SKIPPED: trc_pkt_lister not installed");
    return false;
}

/* 0x8000: BLX 0x8010 (ARM, to Thumb); 0x8010..: Thumb MOV r8,r8. */
static void write_blx_snapshot(const char *dir, const uint8_t *atoms,
                               size_t n_atoms)
{
    static const uint8_t head[] = {0, 0, 0, 0, 0, 0x80,              /* A-sync */
                                   0x08, 0x01, 0x00, 0x80, 0x00, 0x00}; /* I-sync 0x8000 ARM */
    uint8_t img[64] = {0x02, 0x00, 0x00, 0xFA};
    uint8_t trace[32];
    tb_config cfg;
    tb_snap_region r = {0x8000, img, sizeof img};
    tb_snap_out_source s = {"ETM_0", &cfg, "cpu_0", "Cortex-A7", &r, 1};
    char err[256] = "";
    size_t i;

    for (i = 16; i < sizeof img; i += 2) {
        img[i] = 0xC0;
        img[i + 1] = 0x46;
    }
    /* ETMv3.4, not cycle-accurate, original branch encoding. */
    cr_assert_eq(tb_config_from_regs(&cfg, 0, 0x4100F240, 0, 0x10), 0);
    memcpy(trace, head, sizeof head);
    memcpy(trace + sizeof head, atoms, n_atoms);
    cr_assert_eq(tb_snapshot_write(dir, &s, 1, trace, sizeof head + n_atoms,
                                   "source_data", err, sizeof err), 0, "%s", err);
}

typedef struct addrs {
    uint32_t a[16];
    char isa[16][8];
    size_t n;
} addrs;

/* Our decode, as "ADDR ISA" lines, via the CLI-independent API. */
typedef struct ours {
    tb_memimage *mem;
    addrs *out;
} ours;

static int on_elem(void *ctx, const tb_element *el)
{
    ours *o = ctx;
    uint32_t a[16];
    int n, i;

    if (el->kind != TB_ELEM_INSN_RANGE)
        return 0;
    n = tb_range_addrs(o->mem, el, a, 16);
    cr_assert_geq(n, 0);
    for (i = 0; i < n && o->out->n < 16; i++) {
        o->out->a[o->out->n] = a[i];
        snprintf(o->out->isa[o->out->n], 8, "%s", tb_isa_name(el->isa));
        o->out->n++;
    }
    return 0;
}

static void our_decode(const char *dir, addrs *out)
{
    tb_snapshot snap;
    char err[256] = "";
    ours o = {.out = out};

    cr_assert_eq(tb_snapshot_load(&snap, dir, err, sizeof err), 0, "%s", err);
    cr_assert_geq(tb_snapshot_source_memory(&snap, &snap.sources[0], &o.mem, err,
                                            sizeof err), 0, "%s", err);
    cr_assert_eq(tb_decode_snapshot(dir, -1, on_elem, &o, err, sizeof err), 0,
                 "%s", err);
    tb_memimage_free(o.mem);
    tb_snapshot_fini(&snap);
}

/* OpenCSD's instruction ranges: "start ISA" per range, and "exc NUM"
 * per exception element, in output order. */
static size_t ocsd_ranges(const char *dir, char lines[][64], size_t max)
{
    char log[] = "/tmp/tb_ocsdbug_XXXXXX", cmd[1024], buf[512];
    size_t n = 0;
    FILE *f;
    int fd = mkstemp(log);

    cr_assert_geq(fd, 0);
    close(fd);
    snprintf(cmd, sizeof cmd,
             "cd /tmp && trc_pkt_lister -ss_dir '%s' -decode -logfilename '%s' >/dev/null 2>&1",
             dir, log);
    cr_assert_eq(system(cmd), 0);
    f = fopen(log, "r");
    cr_assert_not_null(f);
    while (fgets(buf, sizeof buf, f) && n < max) {
        const char *r = strstr(buf, "exec range=");
        const char *isa = strstr(buf, "(ISA=");
        const char *exc = strstr(buf, "ELEM_EXCEPTION(excep num (");

        if (exc) {
            snprintf(lines[n++], 64, "exc %.4s", exc + 26);
            continue;
        }
        if (!r || !isa)
            continue;
        snprintf(lines[n++], 64, "%.*s %.3s", (int)strcspn(r + 11, ":"), r + 11,
                 isa + 5);
    }
    fclose(f);
    unlink(log);
    return n;
}

static void remove_dir(const char *dir)
{
    char cmd[256];

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

static void check_ours_thumb(const char *dir)
{
    addrs a = {0};

    our_decode(dir, &a);
    cr_assert_eq(a.n, 4);
    cr_assert_eq(a.a[0], 0x8000);
    cr_assert_str_eq(a.isa[0], "A32");
    cr_assert_eq(a.a[1], 0x8010);
    cr_assert_eq(a.a[2], 0x8012);
    cr_assert_eq(a.a[3], 0x8014);
    cr_assert_str_eq(a.isa[1], "T32");
    cr_assert_str_eq(a.isa[3], "T32");
}

Test(ocsd_bugs, etmv3_blx_isa_lost_across_pheaders, .timeout = 60)
{
    static const uint8_t two_headers[] = {0x84, 0x8C}; /* E | E E E */
    char dir[] = "/tmp/tb_blx_two_XXXXXX";
    char r[8][64];
    size_t n;

    if (!lister_or_skip())
        return;
    cr_assert_not_null(mkdtemp(dir));
    write_blx_snapshot(dir, two_headers, sizeof two_headers);
    check_ours_thumb(dir);
    /* OpenCSD 1.3.3: the BLX, then the three E atoms as ARM words at
     * 0x8010, 0x8014, 0x8018 (the truth: Thumb 0x8010, 0x8012, 0x8014). */
    n = ocsd_ranges(dir, r, 8);
    cr_assert_eq(n, 4, "OpenCSD gave %zu ranges", n);
    cr_assert_str_eq(r[0], "0x8000 A32");
    cr_assert_str_eq(r[1], "0x8010 A32",
                     "OpenCSD no longer shows the BLX/P-header bug: update "
                     "protocol-notes 4.4 and the encoder matrix's allowance");
    cr_assert_str_eq(r[2], "0x8014 A32");
    cr_assert_str_eq(r[3], "0x8018 A32");
    remove_dir(dir);
}

Test(ocsd_bugs, etmv3_blx_control_one_header, .timeout = 60)
{
    static const uint8_t one_header[] = {0x90}; /* E E E E */
    char dir[] = "/tmp/tb_blx_one_XXXXXX";
    char r[8][64];
    size_t n;

    if (!lister_or_skip())
        return;
    cr_assert_not_null(mkdtemp(dir));
    write_blx_snapshot(dir, one_header, sizeof one_header);
    check_ours_thumb(dir);
    /* Within one P-header OpenCSD follows the BLX into Thumb. */
    n = ocsd_ranges(dir, r, 8);
    cr_assert_geq(n, 2);
    cr_assert_str_eq(r[0], "0x8000 A32");
    cr_assert_str_eq(r[1], "0x8010 T32");
    remove_dir(dir);
}

/*
 * ETMv3 Cancel dropped (docs/opencsd-bugs.md bug 2).  A branch packet
 * with exception bytes whose Cancel bit is set says the instruction of
 * the last E/N atom did not complete (IHI0014Q 6.7.1 exception
 * information; protocol-notes 2.7), so a decoder must not list it.
 * OpenCSD 1.3.3 holds a P-header's last instruction range back for that
 * purpose, but its element list only agrees to hold it when nothing else
 * is in the list: so the Cancel works when the cancelled atom is alone in
 * its P-header and the packet before left nothing held, and is ignored
 * when (a) the header has other atoms before it, or (b) the packet
 * before was itself a lone-atom header whose range was still held.
 *
 * Image: 0x8000, 0x8004, 0x8008 MOV r0,r0; 0x800C LDR r1,[r4] (the load
 * that aborts); trace: A-sync, I-sync at 0x8000 (ARM), P-header(s) with
 * the four atoms, then the data-abort branch to 0x10 with Cancel.
 */
static const uint8_t cancel_async[] = {0, 0, 0, 0, 0, 0x80};
/* Branch to 0x10 (5 address bytes, original encoding, ARM), exception
 * byte 0x38: Cancel (bit 5), exception 12 = data abort (bits 4:1). */
static const uint8_t cancel_branch[] = {0x89, 0x80, 0x80, 0x80, 0x48, 0x38};

static void write_cancel_snapshot(const char *dir, bool ca, const uint8_t *hdrs,
                                  size_t n_hdrs)
{
    static const uint8_t isync[] = {0x08, 0x01, 0x00, 0x80, 0x00, 0x00};
    /* I-sync with cycle count 0 (0x70, CC byte 0x00), CA trace. */
    static const uint8_t isync_cc[] = {0x70, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00};
    uint8_t img[64], trace[64];
    size_t n = 0, i;
    tb_config cfg;
    tb_snap_region r = {0x8000, img, sizeof img};
    tb_snap_out_source s = {"ETM_0", &cfg, "cpu_0", "Cortex-A7", &r, 1};
    char err[256] = "";

    for (i = 0; i < sizeof img; i += 4) { /* MOV r0, r0 */
        img[i] = 0x00;
        img[i + 1] = 0x00;
        img[i + 2] = 0xA0;
        img[i + 3] = 0xE1;
    }
    memcpy(img + 12, (const uint8_t[]){0x00, 0x10, 0x94, 0xE5}, 4); /* LDR r1,[r4] */
    /* ETMv3.4, ETMCR[12] cycle-accurate or not, original branch encoding. */
    cr_assert_eq(tb_config_from_regs(&cfg, ca ? 0x1000 : 0, 0x4100F240, 0, 0x10), 0);
    memcpy(trace + n, cancel_async, sizeof cancel_async);
    n += sizeof cancel_async;
    memcpy(trace + n, ca ? isync_cc : isync, ca ? sizeof isync_cc : sizeof isync);
    n += ca ? sizeof isync_cc : sizeof isync;
    memcpy(trace + n, hdrs, n_hdrs);
    n += n_hdrs;
    memcpy(trace + n, cancel_branch, sizeof cancel_branch);
    n += sizeof cancel_branch;
    cr_assert_eq(tb_snapshot_write(dir, &s, 1, trace, n, "source_data", err, sizeof err),
                 0, "%s", err);
}

/* Ours (and the truth by construction): the three MOVs, not the LDR. */
static void check_ours_cancelled(const char *dir)
{
    addrs a = {0};

    our_decode(dir, &a);
    cr_assert_eq(a.n, 3, "our decoder listed %zu instructions", a.n);
    cr_assert_eq(a.a[0], 0x8000);
    cr_assert_eq(a.a[1], 0x8004);
    cr_assert_eq(a.a[2], 0x8008);
}

/* OpenCSD's ranges and exception, with or without the LDR at 0x800C. */
static void check_ocsd_cancel(const char *dir, bool ldr_listed, const char *why)
{
    char r[8][64];
    size_t n = ocsd_ranges(dir, r, 8), i = 0;

    cr_assert_eq(n, ldr_listed ? 5 : 4, "OpenCSD gave %zu elements: %s", n, why);
    cr_assert_str_eq(r[i++], "0x8000 A32");
    cr_assert_str_eq(r[i++], "0x8004 A32");
    cr_assert_str_eq(r[i++], "0x8008 A32");
    if (ldr_listed)
        cr_assert_str_eq(r[i++], "0x800c A32", "%s", why);
    cr_assert_str_eq(r[i], "exc 0x0c");
}

static void cancel_case(bool ca, const uint8_t *hdrs, size_t n_hdrs, bool ldr_listed,
                        const char *why)
{
    char dir[] = "/tmp/tb_cancel_XXXXXX";

    if (!lister_or_skip())
        return;
    cr_assert_not_null(mkdtemp(dir));
    write_cancel_snapshot(dir, ca, hdrs, n_hdrs);
    check_ours_cancelled(dir);
    check_ocsd_cancel(dir, ldr_listed, why);
    remove_dir(dir);
}

Test(ocsd_bugs, etmv3_cancel_control_lone_atom, .timeout = 60)
{
    /* E E E | E: the cancelled atom alone, after a header of three whose
     * ranges all went out: OpenCSD applies the Cancel. */
    static const uint8_t h[] = {0x8C, 0x84};

    cancel_case(false, h, sizeof h, false, "the control should drop the LDR");
}

Test(ocsd_bugs, etmv3_cancel_lost_in_multi_atom_header, .timeout = 60)
{
    /* E E E E in one format-1 header (IHI0014Q 7.3.1), as the encoder
     * packs them: OpenCSD lists the cancelled LDR. */
    static const uint8_t h[] = {0x90};

    cancel_case(false, h, sizeof h, true,
                "OpenCSD no longer drops a Cancel in a multi-atom P-header: update "
                "docs/opencsd-bugs.md and the encoder matrix's ocsd_model");
}

Test(ocsd_bugs, etmv3_cancel_control_ca_lone_atom, .timeout = 60)
{
    /* Cycle-accurate WE WE WE | WWE (format 1, then format 3 with its E,
     * protocol-notes 2.5): the lone E follows a header that went out. */
    static const uint8_t h[] = {0x8C, 0xE4};

    cancel_case(true, h, sizeof h, false, "the CA control should drop the LDR");
}

Test(ocsd_bugs, etmv3_cancel_lost_after_held_range, .timeout = 60)
{
    /* Cycle-accurate WE WE | WE | WWE: the WE header's range is held
     * (alone in the list), so the next lone-atom header's range finds
     * it there and is not held: OpenCSD lists the cancelled LDR. */
    static const uint8_t h[] = {0x88, 0x84, 0xE4};

    cancel_case(true, h, sizeof h, true,
                "OpenCSD no longer drops a Cancel after a held range: update "
                "docs/opencsd-bugs.md and the encoder matrix's ocsd_model");
}

/*
 * PTM: a branch packet's NS bit does not reach OpenCSD's decode
 * (docs/opencsd-bugs.md 10).  Trace: A-sync, I-sync 0x8000 ARM Non-secure
 * (info 0x09), then an SMC exception packet to 0x8008 whose exception
 * byte says Secure (E1 0x04: number 2, NS 0; IHI0035B 4.5.4, protocol-
 * notes 3.7).  The truth by construction: Non-secure, then Secure from
 * the vector on.  Ours gives a context element for each; OpenCSD's packet
 * lister prints "S;" for the branch but its decoder keeps the I-sync's
 * state (no PE_CONTEXT after it).  Control: the same packets in ETMv3,
 * where OpenCSD does give the PE_CONTEXT "S;".
 */
static void write_ns_snapshot(const char *dir, bool ptm)
{
    static const uint8_t ptm_trace[] = {0, 0, 0, 0, 0, 0x80,
                                        0x08, 0x00, 0x80, 0x00, 0x00, 0x09,
                                        0x85, 0x80, 0x81, 0x80, 0x48, 0x04};
    /* ETMv3: I-sync info before the address (protocol-notes 2.4). */
    static const uint8_t etm_trace[] = {0, 0, 0, 0, 0, 0x80,
                                        0x08, 0x09, 0x00, 0x80, 0x00, 0x00,
                                        0x85, 0x80, 0x81, 0x80, 0x48, 0x04};
    uint8_t img[64];
    tb_config cfg;
    tb_snap_region r = {0x8000, img, sizeof img};
    tb_snap_out_source s = {"ETM_0", &cfg, "cpu_0", "Cortex-A15", &r, 1};
    char err[256] = "";

    for (size_t i = 0; i < sizeof img; i += 4) /* MOV r0, r0 */
        memcpy(img + i, (const uint8_t[]){0x00, 0x00, 0xA0, 0xE1}, 4);
    /* PFT1.1 or ETMv3.5, plain trace. */
    cr_assert_eq(tb_config_from_regs(&cfg, 0, ptm ? 0x410CF310 : 0x410CF250, 0, 0x10), 0);
    cr_assert_eq(tb_snapshot_write(dir, &s, 1, ptm ? ptm_trace : etm_trace,
                                   sizeof ptm_trace, "source_data", err, sizeof err),
                 0, "%s", err);
}

static int ns_elem(void *ctx, const tb_element *el)
{
    char *out = ctx;

    if (el->kind == TB_ELEM_CONTEXT)
        strcat(out, el->ns ? "N" : "S");
    return 0;
}

/* The security states of the PE_CONTEXT elements, in order ("NS"). */
static void ocsd_states(const char *dir, char *out, size_t len)
{
    char log[] = "/tmp/tb_ocsdbug_XXXXXX", cmd[1024], buf[512];
    FILE *f;
    int fd = mkstemp(log);
    size_t n = 0;

    cr_assert_geq(fd, 0);
    close(fd);
    snprintf(cmd, sizeof cmd,
             "cd /tmp && trc_pkt_lister -ss_dir '%s' -decode -logfilename '%s' >/dev/null 2>&1",
             dir, log);
    cr_assert_eq(system(cmd), 0);
    f = fopen(log, "r");
    cr_assert_not_null(f);
    while (fgets(buf, sizeof buf, f) && n + 1 < len) {
        const char *c = strstr(buf, "PE_CONTEXT(");

        if (c && strstr(c, ") N; "))
            out[n++] = 'N';
        else if (c && strstr(c, ") S; "))
            out[n++] = 'S';
    }
    out[n] = '\0';
    fclose(f);
    unlink(log);
}

static void ns_case(bool ptm, const char *ocsd_want)
{
    char dir[] = "/tmp/tb_ocsdns_XXXXXX", mine[8] = "", theirs[8];
    char err[256] = "";

    if (!lister_or_skip())
        return;
    cr_assert_not_null(mkdtemp(dir));
    write_ns_snapshot(dir, ptm);
    cr_assert_eq(tb_decode_snapshot(dir, -1, ns_elem, mine, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(mine, "NS", "ours: Non-secure, then Secure at the vector");
    ocsd_states(dir, theirs, sizeof theirs);
    cr_assert_str_eq(theirs, ocsd_want);
    remove_dir(dir);
}

Test(ocsd_bugs, ptm_branch_ns_bit_ignored, .timeout = 60)
{
    ns_case(true, "N");
}

Test(ocsd_bugs, ptm_branch_ns_control_etmv3, .timeout = 60)
{
    ns_case(false, "NS");
}
