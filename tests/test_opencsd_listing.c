/*
 * Packet layer against an oracle nobody here wrote: for every trace
 * source of every shipped real-silicon snapshot, and every ETMv3 and PTM
 * source of every committed vector (vectors/generated/), our listing
 * (stream + deformatter + parser) must equal OpenCSD's trc_pkt_lister,
 * run live, packet for packet: kind, index, and every field it prints
 * (addresses, atoms, cycle counts, timestamps, exception numbers, ISA,
 * reasons, security state, context IDs, data values and tags).  Also:
 * the same packets however the stream is cut.
 *
 * OpenCSD 1.3.3 prints no byte lists, so bytes are checked through
 * indices and fields.  Its NOTSYNC lines come one per data block it was
 * handed (an artefact of its chunking); ours is one packet for the whole
 * unsynchronised run, so NOTSYNC is compared by where it starts.
 *
 * Where OpenCSD is wrong (docs/opencsd-bugs.md 3 to 9 and 11, each proved on a
 * minimal snapshot in tests/test_ocsd_data.c) a difference is not
 * skipped: our packet is transformed the way the documented fault
 * transforms it (ocsd_data_view, vmid_want) and must then be equal; the
 * counts say how many packets matched outright and how many only
 * through fault N.  Any other difference fails.  After a packet OpenCSD
 * never ends (fault 6) the rest of the source is listed again behind a
 * synthetic A-sync and I-sync (ocsd_resumed_listing), so that every one
 * of our packets is compared.
 */
#include <criterion/criterion.h>
#include <dirent.h>
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
    bool err;          /* an OpenCSD error message came first on its line */
} ocsd_pkt;

typedef struct pkt_vec {
    tb_packet *v;
    size_t n, cap;
} pkt_vec;

/* The source's bytes in stream order with each byte's stream index: the
 * fault model needs the bytes after a packet (OpenCSD may read past it). */
typedef struct byte_vec {
    uint8_t *b;
    uint64_t *idx;
    size_t n, cap;
} byte_vec;

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
    byte_vec *bytes;     /* NULL: not kept */
    uint64_t rng;        /* 0: pass chunks as they come */
    int rc;
} feed;

static void keep_bytes(byte_vec *bv, uint64_t index, const uint8_t *data, size_t len)
{
    size_t k;

    if (bv->n + len > bv->cap) {
        while (bv->n + len > bv->cap)
            bv->cap = bv->cap ? 2 * bv->cap : 4096;
        bv->b = realloc(bv->b, bv->cap);
        bv->idx = realloc(bv->idx, bv->cap * sizeof *bv->idx);
        cr_assert(bv->b && bv->idx);
    }
    for (k = 0; k < len; k++) {
        bv->b[bv->n] = data[k];
        bv->idx[bv->n++] = index + k;
    }
}

static int on_bytes(void *ctx, uint64_t index, const uint8_t *data, size_t len)
{
    feed *f = ctx;

    if (f->bytes)
        keep_bytes(f->bytes, index, data, len);
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

/* Our listing of one source: stream + parser, optional random chunking;
 * the source's bytes into *bytes unless it is NULL. */
static void our_listing(const tb_snapshot *snap, const tb_snap_source *src,
                        uint64_t seed, pkt_vec *out, byte_vec *bytes)
{
    char err[512] = "";
    tb_config cfg;
    feed f = {.out = out, .bytes = bytes, .rng = seed};
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

/* A line of the lister's log with every byte outside printable ASCII
 * (but the tab) written as \xNN: OpenCSD prints a VMID as a raw byte
 * (docs/opencsd-bugs.md 9), NUL included. */
static void escape_line(const char *in, size_t len, char *out, size_t cap)
{
    size_t i, o = 0;

    while (len && (in[len - 1] == '\n' || in[len - 1] == '\r'))
        len--;
    for (i = 0; i < len && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)in[i];
        if ((c >= 0x20 && c < 0x7F) || c == '\t')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    out[o] = '\0';
}

/* A TPIU capture's buffer (trace.ini format=tpiu_coresight, tracebench's
 * name, which OpenCSD's snapshot reader lacks): the lister's -tpiu_hsync,
 * OpenCSD's deformatter with OCSD_DFRMTR_HAS_FSYNCS | _HAS_HSYNCS. */
static const char *lister_buffer_opt(const char *dir)
{
    char path[1100], *ini;
    bool tpiu;

    snprintf(path, sizeof path, "%s/trace.ini", dir);
    ini = tb_test_slurp(path, NULL);
    tpiu = ini && strstr(ini, "format=tpiu_coresight");
    free(ini);
    return tpiu ? " -tpiu_hsync" : "";
}

/* Runs trc_pkt_lister live and parses its packet lines. */
static ocsd_pkt *ocsd_listing(const char *dir, int id, size_t *count)
{
    char log[] = "/tmp/tb_ocsd_XXXXXX";
    char cmd[2048], line[1024];
    char *raw = NULL;
    size_t rawcap = 0;
    ssize_t got;
    ocsd_pkt *v = NULL;
    size_t n = 0, cap = 0;
    FILE *f;
    int fd = mkstemp(log);

    cr_assert_geq(fd, 0);
    close(fd);
    if (id >= 0)
        snprintf(cmd, sizeof cmd,
                 "cd /tmp && trc_pkt_lister -ss_dir '%s'%s -id 0x%x -logfilename '%s' "
                 ">/dev/null 2>&1", dir, lister_buffer_opt(dir), id, log);
    else
        snprintf(cmd, sizeof cmd,
                 "cd /tmp && trc_pkt_lister -ss_dir '%s'%s -logfilename '%s' >/dev/null 2>&1",
                 dir, lister_buffer_opt(dir), log);
    cr_assert_eq(system(cmd), 0, "trc_pkt_lister failed: %s", cmd);
    f = fopen(log, "r");
    cr_assert_not_null(f);
    while ((got = getline(&raw, &rawcap, f)) > 0) {
        char *tab, *colon, *semi, *at;
        ocsd_pkt p = {0};

        escape_line(raw, (size_t)got, line, sizeof line);
        /* An error message is printed without its newline, so the packet
         * it concerns follows it on the same line ("... oversized
         * packet.Idx:12; ..."): keep the packet, flagged. */
        at = strstr(line, "Idx:");
        if (!at)
            continue;
        p.err = at != line;
        p.idx = strtoull(at + 4, NULL, 10);
        tab = strchr(at, '\t');
        cr_assert_not_null(tab, "odd line: %s", line);
        colon = strstr(tab + 1, " : ");
        cr_assert_not_null(colon, "odd line: %s", line);
        snprintf(p.name, sizeof p.name, "%.*s", (int)(colon - tab - 1), tab + 1);
        semi = strchr(colon, ';');
        if (semi)
            snprintf(p.fields, sizeof p.fields, "%s", semi + 1);
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            v = realloc(v, cap * sizeof *v);
            cr_assert_not_null(v);
        }
        v[n++] = p;
    }
    free(raw);
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
    case TB_PKT_DATA: return "NORM_DATA";
    case TB_PKT_OOO_DATA: return "OOO_DATA";
    case TB_PKT_OOO_PLACEHOLDER: return "OOO_ADDR_PLC";
    case TB_PKT_STORE_FAILED: return "STORE_FAIL";
    case TB_PKT_DATA_SUPPRESSED: return "DATA_SUPPRESSED";
    case TB_PKT_VALUE_NOT_TRACED: return "VAL_NOT_TRACED";
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

/* The name OpenCSD's ETMv3 listing gives an A/R-profile exception number
 * (ETMv3 prints the name only; PTM adds the number in brackets). */
static const char *const etm_exc_names[16] = {
    "No Exception", "Debug Halt", "SMC", "Hyp", "Async Data Abort", "Jazelle",
    "Reserved", "Reserved", "PE Reset", "Undefined Instr", "SVC",
    "Prefetch Abort", "Data Fault", "Generic", "IRQ", "FIQ"};

/* The name it gives a Cortex-M (v7-M) exception, by the number the
 * ETM-M3/M4 traces (DDI0337G Table 14-8), its core being a Cortex-M:
 * OpenCSD 1.3.3's table as its listings print them (IRQ0 traced as 8,
 * IRQ1-7 as 1-7, IRQ8 and up as 24 and up). */
static void etm_m_exc_name(unsigned traced, char *buf, size_t len)
{
    static const char *const n[24] = {
        "No Exception", "IRQ1", "IRQ2", "IRQ3", "IRQ4", "IRQ5", "IRQ6", "IRQ7",
        "IRQ0", "usage Fault", "NMI", "SVC", "DebugMonitor", "Mem Manage", "PendSV",
        "SysTick", "Reserved", "PE Reset", "Reserved", "HardFault", "Reserved", "BusFault",
        "Reserved", "Reserved"};

    if (traced < 24)
        snprintf(buf, len, "%s", n[traced]);
    else
        snprintf(buf, len, "IRQ%u", traced - 16);
}

/* ---- where OpenCSD is wrong: docs/opencsd-bugs.md ---- */

/* Section numbers of docs/opencsd-bugs.md a comparison can need.
 * Section 5 (BE flag always 0) is in the packet structure only: the
 * lister prints no BE, so no listing shows it.  Section 8 is the
 * decoder's, not the lister's. */
enum { FAULT_VNT_BIT5 = 3, FAULT_ADDR_BYTE = 4, FAULT_NO_END = 6,
       FAULT_VALUE_OFF = 7, FAULT_VMID_CHAR = 9, FAULT_LSIP = 11, FAULT_FMT0 = 24,
       FAULT_MAX = 25 };

typedef struct listing_counts {
    size_t compared;         /* packets compared */
    size_t equal;            /* equal outright */
    size_t via[FAULT_MAX];   /* equal only through fault N */
    size_t inside[FAULT_MAX];/* ours read into an OpenCSD packet by fault N */
    size_t resumed;          /* listings resumed after a fault-6 packet */
} listing_counts;

/* What OpenCSD 1.3.3's lister shows for one of our ETMv3 data packets. */
typedef struct data_view {
    char fields[160];  /* the exact text after "; ", "" if none */
    bool check_fields; /* false: an unfinished packet's leftovers */
    size_t end;        /* byte position after OpenCSD's packet */
    bool open;         /* OpenCSD never ends it: it is flushed, fieldless,
                        * at the end of the trace, and nothing follows */
    unsigned faults;   /* bit N: needed docs/opencsd-bugs.md section N */
    int extends;       /* the fault that made it end past ours, or 0 */
} data_view;

/* Bytes of a data address from position k as OpenCSD's packet reader
 * delimits it: up to the first byte with bit 7 clear (it tests bit 7
 * alone, processPayloadByte); 0 when the trace ends first. */
static size_t ocsd_addr_len(const byte_vec *bv, size_t k)
{
    size_t n;

    for (n = 0; k + n < bv->n; n++)
        if (!(bv->b[k + n] & 0x80))
            return n + 1;
    return 0;
}

/* nval little-endian bytes from position k, false past the end. */
static bool le_value(const byte_vec *bv, size_t k, unsigned nval, uint32_t *v)
{
    unsigned i;

    *v = 0;
    if (k + nval > bv->n)
        return false;
    for (i = 0; i < nval; i++)
        *v |= (uint32_t)bv->b[k + i] << (8 * i);
    return true;
}

static const char ocsd_no_addr[] = " Addr=0x????????0 (-1:0)";

/* Our data packet at byte position pos as OpenCSD reads the same bytes
 * (trc_pkt_proc_etmv3_impl.cpp, facts in docs/opencsd-bugs.md 3-7):
 *  3  VNT: an address is expected whenever address trace is on (bit 5
 *     of the header, always set in b011A1010), so a VNT without one
 *     reads the next bytes up to one with bit 7 clear;
 *  4  a data address is extracted from its first byte only and never
 *     printed ("Addr=0x????????0 (-1:0)"), and the value is read from
 *     the second address byte on;
 *  6  normal data with an address and SS = 00 never ends;
 *  7  value bytes (SS) are read although value trace is off. */
static void ocsd_data_view(const tb_packet *p, const tb_config *cfg,
                           const byte_vec *bv, size_t pos, data_view *dv)
{
    static const unsigned ss_bytes[4] = {0, 1, 2, 4};
    uint8_t h = bv->b[pos];
    bool addr_trace = cfg->data_trace & 2, value_trace = cfg->data_trace & 1;
    unsigned nval = ss_bytes[(h >> 2) & 3];
    size_t alen = 0;
    uint32_t val = 0;
    bool addr_exp = false;

    memset(dv, 0, sizeof *dv);
    dv->check_fields = true;
    switch (p->kind) {
    case TB_PKT_DATA:
        addr_exp = (h & 0x20) && addr_trace;
        if (addr_exp) {
            dv->faults |= 1u << FAULT_ADDR_BYTE;
            alen = ocsd_addr_len(bv, pos + 1);
            if (nval == 0) {
                dv->faults |= 1u << FAULT_NO_END;
                dv->open = true;
            }
        }
        if (nval && !value_trace) {
            dv->faults |= 1u << FAULT_VALUE_OFF;
            dv->extends = FAULT_VALUE_OFF;
        }
        if (addr_exp && alen == 0)
            dv->open = true;
        /* Section 4: the value starts after the one address byte used. */
        if (!dv->open && !le_value(bv, pos + 1 + (addr_exp ? 1 : 0), nval, &val))
            dv->open = true;
        dv->end = pos + 1 + alen + nval;
        if (dv->open)
            break; /* flushed at the end with update flags clear: "" */
        snprintf(dv->fields, sizeof dv->fields, "%s%s Val=0x%" PRIx32,
                 addr_exp ? ocsd_no_addr : "", addr_exp ? ";" : "", val);
        break;
    case TB_PKT_VALUE_NOT_TRACED:
        addr_exp = addr_trace;
        if (addr_exp) {
            dv->faults |= 1u << FAULT_ADDR_BYTE;
            if (!(h & 0x10)) {
                dv->faults |= 1u << FAULT_VNT_BIT5;
                dv->extends = FAULT_VNT_BIT5;
            }
            alen = ocsd_addr_len(bv, pos + 1);
            dv->open = alen == 0;
        }
        dv->end = pos + 1 + alen;
        snprintf(dv->fields, sizeof dv->fields, "%s", addr_exp && !dv->open ? ocsd_no_addr : "");
        dv->check_fields = !dv->open;
        break;
    case TB_PKT_OOO_PLACEHOLDER:
        addr_exp = (h & 0x20) && addr_trace;
        if (addr_exp) {
            dv->faults |= 1u << FAULT_ADDR_BYTE;
            alen = ocsd_addr_len(bv, pos + 1);
            dv->open = alen == 0;
        }
        dv->end = pos + 1 + alen;
        snprintf(dv->fields, sizeof dv->fields, "%s%s OO_Tag=0x%x",
                 addr_exp ? ocsd_no_addr : "", addr_exp ? ";" : "", (h >> 2) & 3);
        dv->check_fields = !dv->open;
        break;
    case TB_PKT_OOO_DATA:
        dv->open = !le_value(bv, pos + 1, nval, &val);
        dv->end = pos + 1 + nval;
        snprintf(dv->fields, sizeof dv->fields, " Val=0x%" PRIx32 "; OO_Tag=0x%x",
                 val, (h >> 5) & 3);
        dv->check_fields = !dv->open;
        break;
    default: /* store failed, data suppressed: the header alone */
        dv->end = pos + 1;
        break;
    }
}

static bool is_data_kind(tb_pkt_kind k)
{
    return k == TB_PKT_DATA || k == TB_PKT_OOO_DATA || k == TB_PKT_OOO_PLACEHOLDER ||
           k == TB_PKT_STORE_FAILED || k == TB_PKT_DATA_SUPPRESSED ||
           k == TB_PKT_VALUE_NOT_TRACED;
}

/* Position of stream index idx in bv (indices rise strictly), or
 * SIZE_MAX. */
static size_t byte_pos(const byte_vec *bv, uint64_t idx)
{
    size_t lo = 0, hi = bv->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (bv->idx[mid] < idx)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < bv->n && bv->idx[lo] == idx ? lo : SIZE_MAX;
}

/* Section 9: the lister streams the VMID byte as a character (ETMv3:
 * "VMID=0x" then the byte; PTM: the byte padded to two with '0'), which
 * escape_line shows as \xNN when it is not printable. */
static void vmid_want(const tb_packet *p, char *want, size_t len)
{
    char c[8];

    if (p->vmid >= 0x20 && p->vmid < 0x7F)
        snprintf(c, sizeof c, "%c", p->vmid);
    else
        snprintf(c, sizeof c, "\\x%02x", p->vmid);
    if (p->protocol == TB_PROTO_ETMV3)
        snprintf(want, len, " VMID=0x%s", c);
    else
        snprintf(want, len, " VMID=0x0%s; ", c);
}

/* Compares one of our packets with OpenCSD's line; on a difference,
 * writes why into why and returns false.  *faults gets bit N when the
 * match needed docs/opencsd-bugs.md section N. */
static bool same_packet(const tb_packet *p, const ocsd_pkt *o, tb_isa *prev_isa, bool v7m,
                        unsigned *faults, char *why, size_t wlen)
{
    const char *f = o->fields, *v;
    char atoms[24];

    *faults = 0;
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
        /* " EE" (ETMv3 without cycles), " EE; Cycles=2", PTM " E; " */
        size_t n = strlen(tb_packet_atoms(p, atoms));
        if (f[0] != ' ' || strncmp(f + 1, atoms, n) != 0 ||
            (f[1 + n] != ';' && f[1 + n] != '\0')) {
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
        /* A data-only I-sync (ETMCR[20], IHI0014Q 7.10.5; our parser's
         * ISA unknown) has no address: OpenCSD lists none, nor an ISA. */
        if (p->isa == TB_ISA_UNKNOWN) {
            if (strstr(f, "Addr=") || strstr(f, "ISA=") ||
                !strstr(f, p->ns ? " NS;" : " S;")) {
                snprintf(why, wlen, "data-only I-sync (%s, no address) vs OpenCSD '%s'",
                         p->ns ? "NS" : "S", f);
                return false;
            }
            break;
        }
        /* An LSiP I-sync OpenCSD reads whole is listed with the address
         * where execution goes on (etmv3-data.md 11.3); one it cuts short
         * (section 11, the error) with its 4-byte field. */
        snprintf(want, sizeof want, "Addr=0x%08" PRIx32 ";",
                 p->lsip && !o->err ? p->lsip_addr : p->addr);
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
        if (p->protocol == TB_PROTO_ETMV3)
            snprintf(want, sizeof want, " CtxtID=%" PRIx32 ";", p->context_id);
        else
            snprintf(want, sizeof want, " CtxtID=%08" PRIx32 ";", p->context_id);
        if ((strstr(f, "CtxtID=") != NULL) != p->has_ctxid ||
            (p->has_ctxid && !strstr(f, want))) {
            snprintf(why, wlen, "I-sync context ID %d/%s vs OpenCSD '%s'",
                     p->has_ctxid, want, f);
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
        if (p->protocol == TB_PROTO_ETMV3) {
            /* "Exception=NAME; " whenever exception bytes were present,
             * then "; Cancel prev instr" for the Cancel bit. */
            char m_name[32];
            const char *name = etm_exc_names[p->exc_num & 15];

            if (v7m) {
                etm_m_exc_name(p->exc_num, m_name, sizeof m_name);
                name = m_name;
            }
            v = field(f, "Exception=");
            if ((v != NULL) != p->has_exc || (v && strncmp(v, name, strlen(name)) != 0) ||
                (strstr(f, "Cancel prev instr") != NULL) != (p->has_exc && p->exc_cancel)) {
                snprintf(why, wlen, "exception %d/%u cancel %d vs OpenCSD '%s'",
                         p->has_exc, p->exc_num, p->exc_cancel, f);
                return false;
            }
        } else {
            /* "Excep=NAME [NN]; " whenever exception bytes were present,
             * number 0 too ("No Exception [00]": secure_ns-ptm-exc0). */
            v = field(f, "Excep=");
            if ((v != NULL) != p->has_exc) {
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
    case TB_PKT_CONTEXT_ID: {
        char want[64];

        if (p->protocol == TB_PROTO_ETMV3)
            snprintf(want, sizeof want, " CtxtID=0x%" PRIx32, p->context_id);
        else
            snprintf(want, sizeof want, " CtxtID=0x%08" PRIx32 "; ", p->context_id);
        if (strcmp(f, want) != 0) {
            snprintf(why, wlen, "context ID '%s' vs OpenCSD '%s'", want, f);
            return false;
        }
        break;
    }
    case TB_PKT_VMID: {
        char want[64];

        vmid_want(p, want, sizeof want);
        if (strcmp(f, want) != 0) {
            snprintf(why, wlen, "VMID %u: want '%s' (section 9) vs OpenCSD '%s'",
                     p->vmid, want, f);
            return false;
        }
        *faults |= 1u << FAULT_VMID_CHAR;
        break;
    }
    default:
        break;
    }
    if (p->kind == TB_PKT_ISYNC ||
        ((p->kind == TB_PKT_BRANCH || p->kind == TB_PKT_WP_UPDATE) && p->isa_changed))
        *prev_isa = p->isa;
    return true;
}

static void count_faults(listing_counts *c, unsigned faults)
{
    int k;

    c->compared++;
    if (!faults) {
        c->equal++;
        return;
    }
    for (k = 0; k < FAULT_MAX; k++)
        if (faults & (1u << k))
            c->via[k]++;
}

/* Where a comparison stands: our packets from *i, OpenCSD's lines, and
 * what the packets before told (the ISA OpenCSD last named; the last
 * instruction address and ISA, for a resumed listing's I-sync). */
typedef struct cmp_state {
    const tb_config *cfg;
    int id;
    const pkt_vec *ours;
    const byte_vec *bytes;
    size_t i;
    tb_isa prev_isa;
    uint32_t cur_addr;
    tb_isa cur_isa;
    size_t resume;          /* after a packet OpenCSD never ends (section
                             * 6): the byte position of our next packet,
                             * else SIZE_MAX */
} cmp_state;

/* docs/opencsd-bugs.md 11: OpenCSD ends an ETMv3 I-sync at its 4-byte
 * address when that address's last byte has bit 7 clear, LSiP or not;
 * with LSiP it then reads past the packet (an error message before the
 * I-sync's line), and lists the LSiP address bytes as a BRANCH_ADDRESS
 * of their own.  Returns the byte count of such an LSiP address (it starts
 * p->size - n bytes into p), 0 when p is no such I-sync.  Layout
 * (IHI0014Q 7.10.5, etmv3-data.md 7): header (0x70: then a cycle count,
 * 1-5 bytes with C in bit 7), context ID bytes, info, 4 address bytes,
 * then the LSiP address in branch format. */
static unsigned lsip_fault_len(const tb_packet *p, const tb_config *cfg)
{
    unsigned k = 1;

    if (p->protocol != TB_PROTO_ETMV3 || p->kind != TB_PKT_ISYNC || !p->lsip)
        return 0;
    if (p->bytes[0] == 0x70)
        while (k < p->size && k < 6 && (p->bytes[k++] & 0x80) && k < 6)
            ;
    k += cfg->ctxid_bytes + 1u + 4u; /* now just past the 4-byte address */
    if (k >= p->size || (p->bytes[k - 1] & 0x80))
        return 0;
    return p->size - k;
}

/* Section 11, for an I-sync lsip_fault_len() names: OpenCSD reports
 * "Malformed Packet - oversized packet" at it, lists it without the LSiP
 * address, then lists the LSiP address bytes as a BRANCH_ADDRESS of their
 * own, which ends where our I-sync ends.  theirs[j] is OpenCSD's I-sync,
 * already found equal in everything but the LSiP fields. */
static bool lsip_as_branch(const tb_packet *p, const ocsd_pkt *theirs, size_t n_theirs,
                           size_t j, const tb_packet *next, char *why, size_t wlen)
{
    const ocsd_pkt *b = j + 1 < n_theirs ? &theirs[j + 1] : NULL;
    const char *a;

    if (!theirs[j].err) {
        snprintf(why, wlen, "LSiP I-sync: OpenCSD reports no error (section 11 changed?)");
        return false;
    }
    /* Indices are buffer positions: a formatted buffer's frame bytes may
     * lie inside a packet, so "inside" is "before our next packet". */
    if (!b || strcmp(b->name, "BRANCH_ADDRESS") != 0 || b->idx <= p->index ||
        (next && b->idx >= next->index)) {
        snprintf(why, wlen, "LSiP I-sync: OpenCSD's next packet is %s at %" PRIu64
                 ", want a BRANCH_ADDRESS inside our I-sync (section 11)",
                 b ? b->name : "nothing", b ? b->idx : 0);
        return false;
    }
    if (!(a = field(b->fields, "Addr=")) || strtoul(a, NULL, 16) != p->lsip_addr) {
        snprintf(why, wlen, "LSiP address 0x%08" PRIx32 " vs OpenCSD's branch '%s' "
                 "(section 11)", p->lsip_addr, b->fields);
        return false;
    }
    if (j + 2 < n_theirs && next && theirs[j + 2].idx != next->index) {
        snprintf(why, wlen, "OpenCSD's packet after the LSiP address starts at %" PRIu64
                 ", ours at %" PRIu64 " (section 11)", theirs[j + 2].idx, next->index);
        return false;
    }
    return true;
}

/* Compares our packets from st->i with OpenCSD's lines theirs[0..n)
 * (indices already ours); false with the reason in why. */
static bool compare_run(cmp_state *st, const ocsd_pkt *theirs, size_t n_theirs,
                        listing_counts *c, char *why, size_t wlen)
{
    const pkt_vec *ours = st->ours;
    const byte_vec *bytes = st->bytes;
    int id = st->id;
    size_t i = st->i, j = 0;
    bool ok = true;

    st->resume = SIZE_MAX;
    while (ok && (i < ours->n || j < n_theirs)) {
        const tb_packet *p = i < ours->n ? &ours->v[i] : NULL;
        char line[512], diff[600] = "";
        unsigned faults = 0;

        /* NOTSYNC: OpenCSD's run of lines starts where ours does. */
        if (p && p->kind == TB_PKT_NOTSYNC) {
            if (j >= n_theirs || strcmp(theirs[j].name, "NOTSYNC") != 0 ||
                theirs[j].idx != p->index) {
                snprintf(why, wlen, "source 0x%02x: our NOTSYNC at %" PRIu64
                         " vs OpenCSD %s at %" PRIu64, id, p->index,
                         j < n_theirs ? theirs[j].name : "nothing",
                         j < n_theirs ? theirs[j].idx : 0);
                ok = false;
                break;
            }
            while (j < n_theirs && !strcmp(theirs[j].name, "NOTSYNC"))
                j++;
            i++;
            continue;
        }
        if (!p || j >= n_theirs) {
            snprintf(why, wlen, "source 0x%02x: %s has more packets: next %s at %" PRIu64,
                     id, p ? "ours" : "OpenCSD",
                     p ? ocsd_name(p) : theirs[j].name, p ? p->index : theirs[j].idx);
            ok = false;
            break;
        }
        if (p->protocol == TB_PROTO_ETMV3 && is_data_kind(p->kind)) {
            data_view dv;
            size_t pos = byte_pos(bytes, p->index);

            cr_assert_neq(pos, SIZE_MAX, "packet at %" PRIu64 " not in the stream",
                          p->index);
            ocsd_data_view(p, st->cfg, bytes, pos, &dv);
            if (strcmp(ocsd_name(p), theirs[j].name) != 0 || p->index != theirs[j].idx)
                snprintf(diff, sizeof diff, "kind/index %s %" PRIu64 " vs OpenCSD %s %" PRIu64,
                         ocsd_name(p), p->index, theirs[j].name, theirs[j].idx);
            else if (dv.check_fields && strcmp(dv.fields, theirs[j].fields) != 0)
                snprintf(diff, sizeof diff, "fields want '%s' (faults 0x%x) vs OpenCSD '%s'",
                         dv.fields, dv.faults, theirs[j].fields);
            else if (theirs[j].err)
                snprintf(diff, sizeof diff, "OpenCSD reports an error at this packet "
                         "(no documented fault)");
            else if (dv.open && j + 1 != n_theirs)
                snprintf(diff, sizeof diff, "OpenCSD cannot end this packet (section 6) "
                         "but lists %s at %" PRIu64 " after it", theirs[j + 1].name,
                         theirs[j + 1].idx);
            if (diff[0]) {
                tb_packet_format(p, line, sizeof line);
                snprintf(why, wlen, "source 0x%02x packet %zu: %s\n  ours: %s", id, i,
                         diff, line);
                ok = false;
                break;
            }
            count_faults(c, dv.faults);
            i++;
            j++;
            if (dv.open) {
                /* OpenCSD read the rest of the trace into it: the
                 * caller may resume at our next packet. */
                if (i < ours->n)
                    st->resume = byte_pos(bytes, ours->v[i].index);
                break;
            }
            /* Ours that OpenCSD read into this packet (sections 3, 7);
             * a packet longer than ours for no documented fault fails. */
            while (i < ours->n && byte_pos(bytes, ours->v[i].index) < dv.end) {
                if (!dv.extends) {
                    tb_packet_format(&ours->v[i], line, sizeof line);
                    snprintf(why, wlen, "source 0x%02x: OpenCSD's %s at %" PRIu64 " runs "
                             "into our packet %zu, no documented fault says why: %s", id,
                             theirs[j - 1].name, theirs[j - 1].idx, i, line);
                    ok = false;
                    break;
                }
                c->inside[dv.extends]++;
                i++;
            }
            if (!ok)
                break;
            if (i < ours->n && byte_pos(bytes, ours->v[i].index) != dv.end) {
                tb_packet_format(&ours->v[i], line, sizeof line);
                snprintf(why, wlen, "source 0x%02x: OpenCSD's %s at %" PRIu64 " (fault %d) "
                         "ends inside our packet %zu: %s", id, theirs[j - 1].name,
                         theirs[j - 1].idx, dv.extends, i, line);
                ok = false;
            }
            continue;
        }
        /* An OpenCSD error line is accepted only where a documented
         * fault says it comes: an LSiP I-sync (section 11). */
        bool lsip_fault = lsip_fault_len(p, st->cfg) != 0;
        /* Section 24: an ETMv3.0 cycle-accurate format-0 P-header (one W,
         * IHI0014Q 7.3.1 Table 7.3) is "Invalid P-Header" to OpenCSD,
         * listed with no atom (its decoder still counts the W). */
        bool fmt0_fault = p->protocol == TB_PROTO_ETMV3 && p->kind == TB_PKT_ATOM &&
                          p->phdr_format == 0 && p->seq_len == 1 && p->seq[0] == 'W' &&
                          st->cfg->cycle_accurate && st->cfg->arch_minor == 0;

        if (fmt0_fault) {
            const char *f = theirs[j].fields;

            while (*f == ' ' || *f == ';')
                f++;
            if (!theirs[j].err || strcmp(theirs[j].name, "P_HDR") != 0 || *f ||
                p->index != theirs[j].idx) {
                tb_packet_format(p, line, sizeof line);
                snprintf(why, wlen, "source 0x%02x packet %zu: a format-0 P-header that "
                         "OpenCSD does not flag as section 24 says (%s%s at %" PRIu64
                         ", '%s')\n  ours: %s", id, i, theirs[j].err ? "error, " : "",
                         theirs[j].name, theirs[j].idx, theirs[j].fields, line);
                ok = false;
                break;
            }
            count_faults(c, 1u << FAULT_FMT0);
            i++;
            j++;
            continue;
        }
        if (theirs[j].err && !lsip_fault) {
            tb_packet_format(p, line, sizeof line);
            snprintf(why, wlen, "source 0x%02x packet %zu: OpenCSD reports an error at %"
                     PRIu64 " (no documented fault)\n  ours: %s", id, i, theirs[j].idx,
                     line);
            ok = false;
            break;
        }
        if (!same_packet(p, &theirs[j], &st->prev_isa, st->cfg->v7m, &faults, diff,
                         sizeof diff)) {
            tb_packet_format(p, line, sizeof line);
            snprintf(why, wlen, "source 0x%02x packet %zu: %s\n  ours: %s\n  OpenCSD: Idx:%"
                     PRIu64 " %s;%s", id, i, diff, line, theirs[j].idx,
                     theirs[j].name, theirs[j].fields);
            ok = false;
            break;
        }
        if (lsip_fault &&
            !lsip_as_branch(p, theirs, n_theirs, j, i + 1 < ours->n ? &ours->v[i + 1] : NULL,
                            diff, sizeof diff)) {
            tb_packet_format(p, line, sizeof line);
            snprintf(why, wlen, "source 0x%02x packet %zu: %s\n  ours: %s", id, i, diff,
                     line);
            ok = false;
            break;
        }
        if (p->kind == TB_PKT_ISYNC || p->kind == TB_PKT_BRANCH) {
            st->cur_addr = p->kind == TB_PKT_ISYNC && p->lsip ? p->lsip_addr : p->addr;
            st->cur_isa = p->kind == TB_PKT_ISYNC && p->lsip ? p->lsip_isa : p->isa;
        }
        if (lsip_fault) {
            faults |= 1u << FAULT_LSIP;
            j++; /* OpenCSD's BRANCH_ADDRESS made of the LSiP address */
        }
        count_faults(c, faults);
        i++;
        j++;
    }
    st->i = i;
    return ok;
}

/* OpenCSD's listing of our bytes from position pos on, after a fault-6
 * packet swallowed the rest: a raw snapshot of the same configuration
 * holding an A-sync and a periodic I-sync at the last instruction
 * address and ISA (IHI0014Q 7.2, 7.10.5: header 08, context ID bytes,
 * info, address with bit 0 = Thumb), then those bytes.  Lines inside the
 * synthetic head are dropped; the others get our stream indices. */
static ocsd_pkt *ocsd_resumed_listing(const cmp_state *st, size_t pos, size_t *count)
{
    char dir[] = "/tmp/tb_ocsd_resume_XXXXXX", err[256] = "", cmd[600];
    uint8_t img[4] = {0}, *buf;
    tb_snap_region r = {0, img, sizeof img};
    tb_snap_out_source src = {"ETM_0", st->cfg, "cpu_0", "Cortex-A7", &r, 1};
    uint32_t a = st->cur_addr | (st->cur_isa == TB_ISA_THUMB ? 1u : 0u);
    size_t head = 0, n = st->bytes->n - pos, k, m = 0;
    ocsd_pkt *v;

    buf = malloc(16 + n);
    cr_assert_not_null(buf);
    memcpy(buf, (const uint8_t[]){0, 0, 0, 0, 0, 0x80, 0x08}, 7);
    head = 7;
    for (k = 0; k < st->cfg->ctxid_bytes; k++)
        buf[head++] = 0;
    buf[head++] = 0x00; /* info: periodic, secure, ARM/Thumb by address */
    for (k = 0; k < 4; k++)
        buf[head++] = (uint8_t)(a >> (8 * k));
    memcpy(buf + head, st->bytes->b + pos, n);
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(tb_snapshot_write(dir, &src, 1, buf, head + n, "source_data", err,
                                   sizeof err), 0, "%s", err);
    free(buf);
    v = ocsd_listing(dir, -1, count);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    for (k = 0; k < *count; k++) {
        if (v[k].idx < head)
            continue;
        v[m] = v[k];
        v[m++].idx = st->bytes->idx[pos + (v[k].idx - head)];
    }
    *count = m;
    return v;
}

/* Our listing of a source must equal OpenCSD's, up to the documented
 * faults.  After a packet OpenCSD never ends (section 6) the rest is
 * listed again from our next packet (ocsd_resumed_listing).  False with
 * the reason in why on the first difference. */
static bool compare_listing(const char *snapdir, int id, listing_counts *c,
                            char *why, size_t wlen)
{
    tb_snapshot snap;
    char err[512] = "";
    const tb_snap_source *src;
    tb_config cfg;
    pkt_vec ours = {0};
    byte_vec bytes = {0};
    ocsd_pkt *theirs;
    size_t n_theirs;
    cmp_state st;
    bool ok;

    memset(c, 0, sizeof *c);
    cr_assert_eq(tb_snapshot_load(&snap, snapdir, err, sizeof err), 0, "%s", err);
    src = tb_stream_find_source(&snap, id, err, sizeof err);
    cr_assert_not_null(src, "%s", err);
    cr_assert_eq(tb_snapshot_source_config(&snap, src, &cfg, err, sizeof err), 0,
                 "%s", err);
    our_listing(&snap, src, 0, &ours, &bytes);
    st = (cmp_state){.cfg = &cfg, .id = id, .ours = &ours, .bytes = &bytes,
                     .prev_isa = TB_ISA_UNKNOWN, .cur_isa = TB_ISA_ARM};
    theirs = ocsd_listing(snapdir, id, &n_theirs);
    ok = compare_run(&st, theirs, n_theirs, c, why, wlen);
    free(theirs);
    while (ok && st.resume != SIZE_MAX) {
        c->resumed++;
        theirs = ocsd_resumed_listing(&st, st.resume, &n_theirs);
        /* The synthetic I-sync named cur_isa. */
        st.prev_isa = st.cur_isa;
        ok = compare_run(&st, theirs, n_theirs, c, why, wlen);
        free(theirs);
    }
    free(ours.v);
    free(bytes.b);
    free(bytes.idx);
    tb_snapshot_fini(&snap);
    return ok;
}

/* "12 equal, 3 only through fault 4, ..." */
static void describe_counts(const listing_counts *c, char *buf, size_t len)
{
    size_t o;
    int k;

    o = (size_t)snprintf(buf, len, "%zu packets compared: %zu equal outright",
                         c->compared, c->equal);
    for (k = 0; k < FAULT_MAX && o < len; k++)
        if (c->via[k])
            o += (size_t)snprintf(buf + o, len - o, ", %zu only through fault %d",
                                  c->via[k], k);
    for (k = 0; k < FAULT_MAX && o < len; k++)
        if (c->inside[k])
            o += (size_t)snprintf(buf + o, len - o, ", %zu of ours read into "
                                  "OpenCSD's packet before by fault %d", c->inside[k], k);
    if (c->resumed && o < len)
        snprintf(buf + o, len - o, "; OpenCSD's listing resumed %zu time(s) after a "
                 "packet it never ends (fault 6)", c->resumed);
}

static void compare_source(const char *snapdir, int id)
{
    listing_counts c;
    char why[1200] = "", text[600];

    cr_assert(compare_listing(snapdir, id, &c, why, sizeof why), "%s: %s", snapdir, why);
    describe_counts(&c, text, sizeof text);
    fprintf(stderr, "%s id 0x%02x: %s\n", snapdir, id, text);
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
    our_listing(&snap, src, 0, &whole, NULL);
    cr_assert_gt(whole.n, 0);
    for (seed = 1; seed <= 8; seed++) {
        pkt_vec cut = {0};
        size_t k;
        our_listing(&snap, src, seed * 0x9E3779B97F4A7C15ull, &cut, NULL);
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
    our_listing(&snap, src, 0, &ours, NULL);
    theirs = ocsd_listing(dir, 0x14, &n_theirs);
    cr_assert_eq(ours.n, 0);
    cr_assert_eq(n_theirs, 0);
    free(theirs);
    free(ours.v);
    tb_snapshot_fini(&snap);
}

/* ---- every committed vector ---- */

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* The ID to list a source by: its trace ID, or -1 (the only source) for
 * an unformatted buffer, which carries no IDs. */
static int listing_id(const tb_snapshot *snap, const tb_snap_source *src,
                      const tb_config *cfg)
{
    size_t k;

    for (k = 0; k < snap->n_buffers; k++)
        if (!strcmp(snap->buffers[k].name, src->buffer))
            return strcmp(snap->buffers[k].format, "source_data") ? cfg->trace_id : -1;
    return cfg->trace_id;
}

/* Every ETMv3 and PTM source of every vector in vectors/generated/, the
 * ETMv3 data-trace ones (data) or the rest: each must equal OpenCSD's
 * listing up to the documented faults and compare at least one packet.
 * ETMv1 and ETMv2 sources are skipped: trace-port protocols OpenCSD does
 * not implement (docs/etmv1.md, docs/etmv2.md), so there is no listing. */
static void vectors_listing(bool data)
{
    const char *root = TB_SOURCE_DIR "/vectors/generated";
    struct dirent **ents;
    char failures[8192] = "";
    size_t nfail = 0, nsrc = 0, port = 0, total = 0;
    int n, e;

    n = scandir(root, &ents, NULL, by_name);
    cr_assert_gt(n, 0, "no vectors in %s", root);
    for (e = 0; e < n; e++) {
        char dir[1024], ini[1100], err[512] = "";
        tb_snapshot snap;
        struct stat st;
        size_t k;

        snprintf(dir, sizeof dir, "%s/%s", root, ents[e]->d_name);
        snprintf(ini, sizeof ini, "%s/snapshot.ini", dir);
        if (ents[e]->d_name[0] == '.' || stat(ini, &st) != 0)
            continue;
        cr_assert_eq(tb_snapshot_load(&snap, dir, err, sizeof err), 0, "%s", err);
        for (k = 0; k < snap.n_sources; k++) {
            const tb_snap_source *src = &snap.sources[k];
            listing_counts c;
            tb_config cfg;
            char why[1200] = "", text[600];
            int id;

            if (!src->buffer[0])
                continue;
            cr_assert_eq(tb_snapshot_source_config(&snap, src, &cfg, err, sizeof err),
                         0, "%s: %s", dir, err);
            if (cfg.protocol == TB_PROTO_ETMV1 || cfg.protocol == TB_PROTO_ETMV2) {
                port += !data;
                continue;
            }
            if ((cfg.protocol == TB_PROTO_ETMV3 && cfg.data_trace) != data)
                continue;
            id = listing_id(&snap, src, &cfg);
            nsrc++;
            if (!compare_listing(dir, id, &c, why, sizeof why)) {
                nfail++;
                snprintf(failures + strlen(failures), sizeof failures - strlen(failures),
                         "\n%s: %s", ents[e]->d_name, why);
                fprintf(stderr, "%s id 0x%02x: DIFFERS: %s\n", ents[e]->d_name,
                        cfg.trace_id, why);
                continue;
            }
            describe_counts(&c, text, sizeof text);
            fprintf(stderr, "%s id 0x%02x: %s\n", ents[e]->d_name, cfg.trace_id, text);
            total += c.compared;
            if (c.compared == 0) {
                nfail++;
                snprintf(failures + strlen(failures), sizeof failures - strlen(failures),
                         "\n%s id 0x%02x: no packet compared", ents[e]->d_name,
                         cfg.trace_id);
            }
        }
        tb_snapshot_fini(&snap);
    }
    for (e = 0; e < n; e++)
        free(ents[e]);
    free(ents);
    fprintf(stderr, "%zu %s sources, %zu packets compared; %zu ETMv1/ETMv2 sources skipped "
            "(not OpenCSD's)\n", nsrc, data ? "ETMv3 data-trace" : "ETMv3/PTM",
            total, port);
    cr_assert_gt(nsrc, 0);
    cr_assert_eq(nfail, 0, "%zu of %zu sources differ from OpenCSD:%s", nfail, nsrc,
                 failures);
}

/* Data-trace vectors: OpenCSD's decoder refuses them (docs/opencsd-bugs.md
 * 8) but its packet lister parses them, with the faults of sections 3-7. */
Test(opencsd_listing, data_vectors, .timeout = 600)
{
    if (!lister_or_skip())
        return;
    vectors_listing(true);
}

Test(opencsd_listing, vectors, .timeout = 900)
{
    if (!lister_or_skip())
        return;
    vectors_listing(false);
}
