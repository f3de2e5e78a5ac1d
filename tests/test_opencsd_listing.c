/*
 * Packet layer against an oracle nobody here wrote: for every trace
 * source of every shipped real-silicon snapshot, our listing (stream +
 * deformatter + parser) must equal OpenCSD's trc_pkt_lister, run live,
 * packet for packet: kind, index, and every field it prints (addresses,
 * atoms, cycle counts, timestamps, exception numbers, ISA, reasons,
 * security state).  Also: the same packets however the stream is cut.
 *
 * OpenCSD 1.3.3 prints no byte lists, so bytes are checked through
 * indices and fields.  Its NOTSYNC lines come one per data block it was
 * handed (an artefact of its chunking); ours is one packet for the whole
 * unsynchronised run, so NOTSYNC is compared by where it starts.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb_test.h"
#include "tracebench/parser.h"
#include "tracebench/print.h"
#include "tracebench/stream.h"

/* ---- one packet as OpenCSD prints it ---- */
typedef struct ocsd_pkt {
    uint64_t idx;
    char name[32];
    char fields[400];
} ocsd_pkt;

typedef struct pkt_vec {
    tb_packet *v;
    size_t n, cap;
} pkt_vec;

static void vec_push(pkt_vec *pv, const tb_packet *p)
{
    if (pv->n == pv->cap) {
        pv->cap = pv->cap ? 2 * pv->cap : 1024;
        pv->v = realloc(pv->v, pv->cap * sizeof *pv->v);
        cr_assert_not_null(pv->v);
    }
    pv->v[pv->n++] = *p;
}

static int collect(void *ctx, const tb_packet *p)
{
    vec_push(ctx, p);
    return 0;
}

typedef struct feed {
    tb_parser *parser;
    pkt_vec *out;
    uint64_t rng;        /* 0: pass chunks as they come */
    int rc;
} feed;

static int on_bytes(void *ctx, uint64_t index, const uint8_t *data, size_t len)
{
    feed *f = ctx;

    while (len) {
        size_t n = len;
        if (f->rng) {
            /* Mostly tiny pieces, sometimes large ones. */
            uint64_t r = tb_test_rand(&f->rng);
            n = (r & 3) ? 1 + (r >> 8) % 7 : 1 + (r >> 8) % 200;
            if (n > len)
                n = len;
        }
        f->rc = tb_parser_push(f->parser, data, n, index, collect, f->out);
        if (f->rc < 0)
            return 1;
        data += n;
        index += n;
        len -= n;
    }
    return 0;
}

/* Our listing of one source: stream + parser, optional random chunking. */
static void our_listing(const tb_snapshot *snap, const tb_snap_source *src,
                        uint64_t seed, pkt_vec *out)
{
    char err[512] = "";
    tb_config cfg;
    feed f = {.out = out, .rng = seed};
    int rc;

    cr_assert_eq(tb_snapshot_source_config(snap, src, &cfg, err, sizeof err), 0,
                 "%s", err);
    f.parser = tb_parser_new(&cfg);
    cr_assert_not_null(f.parser);
    rc = tb_stream_source(snap, src, NULL, on_bytes, &f, err, sizeof err);
    cr_assert_eq(rc, 0, "stream %s: %s (parser %d)", src->name, err, f.rc);
    cr_assert_geq(tb_parser_finish(f.parser, collect, out), 0);
    tb_parser_free(f.parser);
}

static bool have_lister(void)
{
    return system("command -v trc_pkt_lister >/dev/null 2>&1") == 0;
}

/* Runs trc_pkt_lister live and parses its packet lines. */
static ocsd_pkt *ocsd_listing(const char *dir, int id, size_t *count)
{
    char log[] = "/tmp/tb_ocsd_XXXXXX";
    char cmd[2048], line[1024];
    ocsd_pkt *v = NULL;
    size_t n = 0, cap = 0;
    FILE *f;
    int fd = mkstemp(log);

    cr_assert_geq(fd, 0);
    close(fd);
    if (id >= 0)
        snprintf(cmd, sizeof cmd,
                 "cd /tmp && trc_pkt_lister -ss_dir '%s' -id 0x%x -logfilename '%s' >/dev/null 2>&1",
                 dir, id, log);
    else
        snprintf(cmd, sizeof cmd,
                 "cd /tmp && trc_pkt_lister -ss_dir '%s' -logfilename '%s' >/dev/null 2>&1",
                 dir, log);
    cr_assert_eq(system(cmd), 0, "trc_pkt_lister failed: %s", cmd);
    f = fopen(log, "r");
    cr_assert_not_null(f);
    while (fgets(line, sizeof line, f)) {
        char *tab, *colon, *semi;
        ocsd_pkt p = {0};

        if (strncmp(line, "Idx:", 4) != 0)
            continue;
        p.idx = strtoull(line + 4, NULL, 10);
        tab = strchr(line, '\t');
        cr_assert_not_null(tab, "odd line: %s", line);
        colon = strstr(tab + 1, " : ");
        cr_assert_not_null(colon, "odd line: %s", line);
        snprintf(p.name, sizeof p.name, "%.*s", (int)(colon - tab - 1), tab + 1);
        semi = strchr(colon, ';');
        if (semi)
            snprintf(p.fields, sizeof p.fields, "%s", semi + 1);
        line[strcspn(line, "\n")] = '\0';
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            v = realloc(v, cap * sizeof *v);
            cr_assert_not_null(v);
        }
        p.fields[strcspn(p.fields, "\n")] = '\0';
        v[n++] = p;
    }
    fclose(f);
    unlink(log);
    *count = n;
    return v;
}

/* OpenCSD's packet names for our kinds (ETMv3 / PTM spellings). */
static const char *ocsd_name(const tb_packet *p)
{
    bool etm = p->protocol == TB_PROTO_ETMV3;

    switch (p->kind) {
    case TB_PKT_NOTSYNC: return "NOTSYNC";
    case TB_PKT_ASYNC: return etm ? "A_SYNC" : "ASYNC";
    case TB_PKT_ISYNC: return etm ? (p->has_cc ? "I_SYNC_CYCLE" : "I_SYNC") : "ISYNC";
    case TB_PKT_ATOM: return etm ? "P_HDR" : "ATOM";
    case TB_PKT_BRANCH: return "BRANCH_ADDRESS";
    case TB_PKT_WP_UPDATE: return "WP_UPDATE";
    case TB_PKT_CYCLE_COUNT: return "CYCLE_COUNT";
    case TB_PKT_TIMESTAMP: return "TIMESTAMP";
    case TB_PKT_CONTEXT_ID: return etm ? "CONTEXT_ID" : "CTXTID";
    case TB_PKT_VMID: return "VMID";
    case TB_PKT_TRIGGER: return "TRIGGER";
    case TB_PKT_IGNORE: return "IGNORE";
    case TB_PKT_EXC_RETURN: return etm ? "EXCEPTION_EXIT" : "ERET";
    case TB_PKT_EXC_ENTRY: return "EXCEPTION_ENTRY";
    case TB_PKT_RESERVED: return etm ? "I_RESERVED" : "RESERVED";
    case TB_PKT_BAD_SEQUENCE: return "BAD_SEQUENCE";
    case TB_PKT_BAD_TRACEMODE: return "BAD_TRACEMODE";
    case TB_PKT_INCOMPLETE: return "INCOMPLETE_EOT";
    default: return tb_pkt_kind_name(p->kind);
    }
}

/* Value of "key" in OpenCSD's field list, or NULL. */
static const char *field(const char *fields, const char *key)
{
    const char *s = strstr(fields, key);
    return s ? s + strlen(key) : NULL;
}

static const char *ocsd_isa(tb_isa isa)
{
    switch (isa) {
    case TB_ISA_ARM: return "ARM(32)";
    case TB_ISA_THUMB: return "Thumb2";
    case TB_ISA_THUMBEE: return "ThumbEE";
    case TB_ISA_JAZELLE: return "Jazelle";
    default: return "?";
    }
}

static const char *const ocsd_reasons[4] = {"(Periodic)", "(Trace Enable)",
                                            "(Restart Overflow)", "(Debug Exit)"};

/* Compares one of our packets with OpenCSD's line; on a difference,
 * writes why into why and returns false. */
static bool same_packet(const tb_packet *p, const ocsd_pkt *o, tb_isa *prev_isa,
                        char *why, size_t wlen)
{
    const char *f = o->fields, *v;
    char atoms[24];

    if (strcmp(ocsd_name(p), o->name) != 0) {
        snprintf(why, wlen, "kind %s vs OpenCSD %s", ocsd_name(p), o->name);
        return false;
    }
    if (p->index != o->idx) {
        snprintf(why, wlen, "index %" PRIu64 " vs OpenCSD %" PRIu64, p->index, o->idx);
        return false;
    }
    if ((v = field(f, "Cycles="))) {
        if (!p->has_cc && p->kind != TB_PKT_ATOM) {
            snprintf(why, wlen, "OpenCSD has Cycles=%s, we have no cycle count", v);
            return false;
        }
        uint32_t cc = p->kind == TB_PKT_ATOM && p->protocol == TB_PROTO_ETMV3
                          ? p->w_count : p->cc;
        if (strtoul(v, NULL, 10) != cc) {
            snprintf(why, wlen, "cycles %" PRIu32 " vs OpenCSD %s", cc, v);
            return false;
        }
    } else if (p->has_cc && p->kind != TB_PKT_ATOM) {
        snprintf(why, wlen, "we have cc=%" PRIu32 ", OpenCSD none", p->cc);
        return false;
    }

    switch (p->kind) {
    case TB_PKT_ATOM: {
        char want[40];
        snprintf(want, sizeof want, " %s;", tb_packet_atoms(p, atoms));
        if (strncmp(f, want, strlen(want)) != 0) {
            snprintf(why, wlen, "atoms '%s' vs OpenCSD '%s'", atoms, f);
            return false;
        }
        break;
    }
    case TB_PKT_ISYNC: {
        char want[64];
        if (!strstr(f, ocsd_reasons[p->reason & 3])) {
            snprintf(why, wlen, "reason %u vs OpenCSD '%s'", p->reason, f);
            return false;
        }
        snprintf(want, sizeof want, "Addr=0x%08" PRIx32 ";", p->addr);
        if (!strstr(f, want)) {
            snprintf(why, wlen, "I-sync %s vs OpenCSD '%s'", want, f);
            return false;
        }
        snprintf(want, sizeof want, "ISA=%s;", ocsd_isa(p->isa));
        if (!strstr(f, want) || !strstr(f, p->ns ? " NS;" : " S;")) {
            snprintf(why, wlen, "I-sync %s %s vs OpenCSD '%s'", want,
                     p->ns ? "NS" : "S", f);
            return false;
        }
        if ((strstr(f, "Hyp;") != NULL) != p->hyp) {
            snprintf(why, wlen, "hyp %d vs OpenCSD '%s'", p->hyp, f);
            return false;
        }
        break;
    }
    case TB_PKT_BRANCH:
    case TB_PKT_WP_UPDATE: {
        char want[64];
        uint32_t mask = p->addr_bits >= 32 ? 0xFFFFFFFFu : (1u << p->addr_bits) - 1;
        if (p->addr_known)
            snprintf(want, sizeof want, "Addr=0x%08" PRIX32 " ~[0x%" PRIX32 "];",
                     p->addr, p->addr & mask);
        else
            snprintf(want, sizeof want, "~[0x%" PRIX32 "];", p->addr & mask);
        if (!strstr(f, want) || (!p->addr_known && !strstr(f, "0x????"))) {
            snprintf(why, wlen, "address %s (known %d) vs OpenCSD '%s'", want,
                     p->addr_known, f);
            return false;
        }
        /* OpenCSD names the ISA only when it differs from the last one;
         * our isa_changed says the 5th byte named it. */
        bool named_new = p->isa_changed && p->isa != *prev_isa;
        v = field(f, "ISA=");
        if ((v != NULL) != named_new ||
            (v && strncmp(v, ocsd_isa(p->isa), strlen(ocsd_isa(p->isa))) != 0)) {
            snprintf(why, wlen, "ISA change %d %s vs OpenCSD '%s'", p->isa_changed,
                     ocsd_isa(p->isa), f);
            return false;
        }
        v = field(f, "Excep=");
        if ((v != NULL) != (p->has_exc && p->exc_num != 0)) {
            snprintf(why, wlen, "exception %d/%u vs OpenCSD '%s'", p->has_exc,
                     p->exc_num, f);
            return false;
        }
        if (v) {
            const char *br = strchr(v, '[');
            if (!br || strtoul(br + 1, NULL, 16) != p->exc_num) {
                snprintf(why, wlen, "exception number %u vs OpenCSD '%s'",
                         p->exc_num, f);
                return false;
            }
        }
        if (strstr(f, " NS;") && !(p->ns_valid && p->ns)) {
            snprintf(why, wlen, "NS vs OpenCSD '%s'", f);
            return false;
        }
        break;
    }
    case TB_PKT_TIMESTAMP: {
        char want[64];

        if (p->protocol == TB_PROTO_ETMV3)
            snprintf(want, sizeof want, "TS=0x%" PRIx64 " (%" PRIu64 ")", p->ts, p->ts);
        else
            snprintf(want, sizeof want, "TS=0x%016" PRIX64, p->ts);
        if (!strstr(f, want)) {
            snprintf(why, wlen, "timestamp %s vs OpenCSD '%s'", want, f);
            return false;
        }
        break;
    }
    default:
        break;
    }
    if (p->kind == TB_PKT_ISYNC || (p->kind == TB_PKT_BRANCH && p->isa_changed))
        *prev_isa = p->isa;
    return true;
}

/* Our listing of a source must equal OpenCSD's. */
static void compare_source(const char *snapdir, int id)
{
    tb_snapshot snap;
    char err[512] = "";
    const tb_snap_source *src;
    pkt_vec ours = {0};
    ocsd_pkt *theirs;
    size_t n_theirs, i = 0, j = 0, compared = 0;
    tb_isa prev_isa = TB_ISA_UNKNOWN;

    cr_assert_eq(tb_snapshot_load(&snap, snapdir, err, sizeof err), 0, "%s", err);
    src = tb_stream_find_source(&snap, id, err, sizeof err);
    cr_assert_not_null(src, "%s", err);
    our_listing(&snap, src, 0, &ours);
    theirs = ocsd_listing(snapdir, id, &n_theirs);

    /* NOTSYNC: OpenCSD's run of lines starts where ours does. */
    while (i < ours.n || j < n_theirs) {
        char why[600];
        if (i < ours.n && ours.v[i].kind == TB_PKT_NOTSYNC) {
            cr_assert(j < n_theirs && !strcmp(theirs[j].name, "NOTSYNC"),
                      "our NOTSYNC at %" PRIu64 " has no OpenCSD counterpart",
                      ours.v[i].index);
            cr_assert_eq(ours.v[i].index, theirs[j].idx,
                         "NOTSYNC starts at %" PRIu64 " vs OpenCSD %" PRIu64,
                         ours.v[i].index, theirs[j].idx);
            while (j < n_theirs && !strcmp(theirs[j].name, "NOTSYNC"))
                j++;
            i++;
            continue;
        }
        cr_assert(i < ours.n, "OpenCSD has more packets: next %s at %" PRIu64,
                  j < n_theirs ? theirs[j].name : "?", j < n_theirs ? theirs[j].idx : 0);
        cr_assert(j < n_theirs, "we have more packets: next %s at %" PRIu64,
                  tb_pkt_kind_name(ours.v[i].kind), ours.v[i].index);
        if (!same_packet(&ours.v[i], &theirs[j], &prev_isa, why, sizeof why)) {
            char line[512];
            tb_packet_format(&ours.v[i], line, sizeof line);
            cr_assert_fail("source 0x%02x packet %zu: %s\n  ours: %s\n  OpenCSD: Idx:%" PRIu64
                           " %s;%s", id, i, why, line, theirs[j].idx,
                           theirs[j].name, theirs[j].fields);
        }
        compared++;
        i++;
        j++;
    }
    cr_log_info("%s id 0x%02x: %zu packets equal OpenCSD's", snapdir, id, compared);
    fprintf(stderr, "%s id 0x%02x: %zu packets equal OpenCSD's\n", snapdir, id,
            compared);
    free(theirs);
    free(ours.v);
    tb_snapshot_fini(&snap);
}

/* The packets are the same however the stream is cut. */
static void chunking_invariant(const char *snapdir, int id)
{
    tb_snapshot snap;
    char err[512] = "";
    const tb_snap_source *src;
    pkt_vec whole = {0};
    uint64_t seed;

    cr_assert_eq(tb_snapshot_load(&snap, snapdir, err, sizeof err), 0, "%s", err);
    src = tb_stream_find_source(&snap, id, err, sizeof err);
    cr_assert_not_null(src, "%s", err);
    our_listing(&snap, src, 0, &whole);
    cr_assert_gt(whole.n, 0);
    for (seed = 1; seed <= 8; seed++) {
        pkt_vec cut = {0};
        size_t k;
        our_listing(&snap, src, seed * 0x9E3779B97F4A7C15ull, &cut);
        cr_assert_eq(cut.n, whole.n, "seed %" PRIu64 ": %zu packets vs %zu",
                     seed, cut.n, whole.n);
        for (k = 0; k < whole.n; k++) {
            char a[512], b[512];
            tb_packet_format_json(&whole.v[k], id, a, sizeof a);
            tb_packet_format_json(&cut.v[k], id, b, sizeof b);
            cr_assert_str_eq(b, a, "seed %" PRIu64 " packet %zu differs", seed, k);
        }
        free(cut.v);
    }
    free(whole.v);
    tb_snapshot_fini(&snap);
}

static const char *snapshot_dir(const char *name)
{
    static char path[1100];
    const char *ref = tb_test_reference_dir("packet listing vs trc_pkt_lister");
    if (!ref)
        return NULL;
    snprintf(path, sizeof path, "%s/opencsd-snapshots/%s", ref, name);
    return path;
}

static bool lister_or_skip(void)
{
    const char *ci = getenv("CI");
    if (have_lister())
        return true;
    if (ci && !strcmp(ci, "true"))
        cr_assert_fail("trc_pkt_lister (libopencsd-bin) missing under CI=true");
    fprintf(stderr, "\n*** SKIPPED: trc_pkt_lister not installed (apt-get install libopencsd-bin) ***\n\n");
    cr_skip_test("SKIPPED: trc_pkt_lister not installed");
    return false;
}

#define LISTING_TEST(tname, snap, id)                                       \
    Test(opencsd_listing, tname, .timeout = 300)                            \
    {                                                                       \
        const char *dir = snapshot_dir(snap);                               \
        if (!dir || !lister_or_skip())                                      \
            return;                                                         \
        compare_source(dir, id);                                            \
    }                                                                       \
    Test(chunking, tname, .timeout = 300)                                   \
    {                                                                       \
        const char *dir = snapshot_dir(snap);                               \
        if (!dir)                                                           \
            return;                                                         \
        chunking_invariant(dir, id);                                        \
    }

LISTING_TEST(tc2_etm_0x10, "TC2", 0x10)
LISTING_TEST(tc2_etm_0x11, "TC2", 0x11)
LISTING_TEST(tc2_etm_0x12, "TC2", 0x12)
LISTING_TEST(tc2_ptm_0x13, "TC2", 0x13)
LISTING_TEST(snowball_ptm_0x10, "Snowball", 0x10)
LISTING_TEST(snowball_ptm_0x11, "Snowball", 0x11)
LISTING_TEST(trace_cov_a15, "trace_cov_a15", -1)

/* PTM 0x14 has no data in the TC2 buffer: both listings are empty. */
Test(opencsd_listing, tc2_ptm_0x14_empty, .timeout = 300)
{
    const char *dir = snapshot_dir("TC2");
    tb_snapshot snap;
    char err[512] = "";
    const tb_snap_source *src;
    pkt_vec ours = {0};
    ocsd_pkt *theirs;
    size_t n_theirs;

    if (!dir || !lister_or_skip())
        return;
    cr_assert_eq(tb_snapshot_load(&snap, dir, err, sizeof err), 0, "%s", err);
    src = tb_stream_find_source(&snap, 0x14, err, sizeof err);
    cr_assert_not_null(src, "%s", err);
    our_listing(&snap, src, 0, &ours);
    theirs = ocsd_listing(dir, 0x14, &n_theirs);
    cr_assert_eq(ours.n, 0);
    cr_assert_eq(n_theirs, 0);
    free(theirs);
    free(ours.v);
    tb_snapshot_fini(&snap);
}
