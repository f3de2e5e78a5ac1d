/*
 * Seed inputs made by the project's own writer, formatter and snapshot
 * writer (no reference trace is copied).  Each parser/decoder seed is the
 * 4 configuration bytes of fuzz_util.c and a packet sequence written for
 * that configuration: A-sync, I-sync into the fixed image's ARM code,
 * atoms, branches into the Thumb code and back, exceptions, waypoint
 * updates, timestamps, context IDs and VMIDs where the configuration has
 * them.  Packets a configuration cannot express are left out (the writer
 * says TB_ERR_INVAL).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../encoder/port_encoders.h"
#include "fuzz.h"
#include "tracebench/classify.h"
#include "tracebench/encoder.h"
#include "tracebench/etmv2.h"
#include "tracebench/frame.h"
#include "tracebench/writer.h"

#define SEED_CAP 4096

typedef struct seed_cfg {
    unsigned minor;
    bool alt;
    uint32_t etmcr, etmccer;
    bool v7m; /* a Cortex-M3 (config byte 0 bit 5): v7m_stream() */
} seed_cfg;

static const seed_cfg etmv3_cfgs[] = {
    {5, false, 0x00000000, 0x00000000, false},
    {5, false, 0x10001000, 0x20000000, false},   /* CA, 64-bit timestamps (TC2 A7) */
    {3, false, 0x0000C00C, 0x00000000, false},   /* 4-byte CtxtID, data trace */
    {4, true, 0x40000100, 0x04000000, false},    /* alt branch, VMID, BB, virt */
    {0, false, 0x00001000, 0x00000000, false},   /* ETMv3.0 cycle accurate */
    {2, false, 0x00104000, 0x00000000, false},   /* data only, 1-byte CtxtID */
    {4, true, 0x00000000, 0x00000000, true}, /* ETM-M3 (issue 35) */
};

static const seed_cfg ptm_cfgs[] = {
    {1, false, 0x00000000, 0x00000000, false},
    {1, false, 0x10001000, 0x30000000, false},   /* CA, binary 64-bit TS (TC2 A15) */
    {0, false, 0x20004000, 0x00000000, false},   /* PFT1.0, return stack, CtxtID */
    {1, false, 0x4000C100, 0x05000000, false},   /* BB, VMID, 4-byte CtxtID, DMB */
};

static tb_packet pk(tb_pkt_kind kind, tb_protocol proto)
{
    tb_packet p;

    memset(&p, 0, sizeof p);
    p.kind = kind;
    p.protocol = proto;
    return p;
}

static tb_packet addr_pk(tb_pkt_kind kind, tb_protocol proto, uint32_t addr,
                         tb_isa isa)
{
    tb_packet p = pk(kind, proto);

    p.addr = addr;
    p.isa = isa;
    return p;
}

static tb_packet atoms(tb_protocol proto, const tb_config *cfg, const char *s)
{
    tb_packet p = pk(TB_PKT_ATOM, proto);
    size_t i;

    p.seq_len = (uint8_t)strlen(s);
    memcpy(p.seq, s, p.seq_len);
    for (i = 0; i < p.seq_len; i++) {
        if (s[i] == 'W')
            p.w_count++;
        else
            p.atom_count++;
    }
    if (proto == TB_PROTO_ETMV3) {
        p.phdr_format = 1;
        if (cfg->cycle_accurate && p.seq_len == 3)
            p.phdr_format = 2;
        else if (!cfg->cycle_accurate && p.seq_len == 2 && s[0] == 'N')
            p.phdr_format = 2;
    } else if (cfg->cycle_accurate) {
        p.has_cc = true;
        p.cc = 3;
    }
    return p;
}

/* Appends one packet; packets the configuration cannot carry are
 * skipped. */
static void put(tb_writer *w, const tb_config *cfg, tb_packet p,
                uint8_t *out, size_t *n)
{
    int r;

    if (cfg->protocol == TB_PROTO_PTM && cfg->cycle_accurate &&
        (p.kind == TB_PKT_BRANCH ||
         (p.kind == TB_PKT_ISYNC && p.reason != TB_ISYNC_PERIODIC))) {
        p.has_cc = true;
        p.cc = 17;
    }
    if (cfg->protocol == TB_PROTO_ETMV3 && cfg->cycle_accurate &&
        p.kind == TB_PKT_ISYNC) {
        p.has_cc = true;
        p.cc = 5;
    }
    if (p.kind == TB_PKT_ISYNC && cfg->ctxid_bytes) {
        p.has_ctxid = true;
        p.context_id = 0x42;
    }
    r = tb_writer_write(w, &p, out + *n, SEED_CAP - *n);
    if (r > 0)
        *n += (size_t)r;
}

static size_t packet_stream(const tb_config *cfg, int variant, uint8_t *out)
{
    tb_protocol pr = cfg->protocol;
    bool etm = pr == TB_PROTO_ETMV3;
    tb_writer *w = tb_writer_new(cfg);
    size_t n = 0;
    tb_packet p;
    int round;

    if (!w)
        return 0;
    for (round = 0; round < 2 + variant; round++) {
        put(w, cfg, pk(TB_PKT_ASYNC, pr), out, &n);
        p = addr_pk(TB_PKT_ISYNC, pr, TB_FUZZ_ARM_BASE + 0x40u * (unsigned)round,
                    TB_ISA_ARM);
        p.reason = round ? TB_ISYNC_PERIODIC : TB_ISYNC_TRACE_ON;
        put(w, cfg, p, out, &n);
        if (cfg->timestamps) {
            p = pk(TB_PKT_TIMESTAMP, pr);
            p.ts = 0x123456789ull + (uint64_t)round * 1000;
            put(w, cfg, p, out, &n);
        }
        if (etm && cfg->cycle_accurate) {
            put(w, cfg, atoms(pr, cfg, "WEWEWN"), out, &n);
            put(w, cfg, atoms(pr, cfg, "WEN"), out, &n);
            p = pk(TB_PKT_CYCLE_COUNT, pr);
            p.cc = 300;
            put(w, cfg, p, out, &n);
            /* Format 4: an atom in the same cycle (ETMv3.3+; the writer
             * refuses it before). */
            p = atoms(pr, cfg, "E");
            p.phdr_format = 4;
            put(w, cfg, p, out, &n);
        } else if (etm) {
            put(w, cfg, atoms(pr, cfg, "EEEEN"), out, &n);
            put(w, cfg, atoms(pr, cfg, "NE"), out, &n);
            put(w, cfg, atoms(pr, cfg, "EEEEEEEE"), out, &n);
        } else {
            put(w, cfg, atoms(pr, cfg, cfg->cycle_accurate ? "E" : "EENEE"), out, &n);
            put(w, cfg, atoms(pr, cfg, cfg->cycle_accurate ? "N" : "NE"), out, &n);
        }
        /* Into the Thumb code and back. */
        put(w, cfg, addr_pk(TB_PKT_BRANCH, pr, TB_FUZZ_THUMB_BASE + 0x20u,
                            TB_ISA_THUMB), out, &n);
        put(w, cfg, atoms(pr, cfg, etm ? (cfg->cycle_accurate ? "WEWEWE" : "EEE")
                                        : "E"), out, &n);
        if (!etm) {
            p = addr_pk(TB_PKT_WP_UPDATE, pr, TB_FUZZ_THUMB_BASE + 0x30u,
                        TB_ISA_THUMB);
            put(w, cfg, p, out, &n);
        }
        /* An IRQ: branch with exception information (protocol-notes 2.7,
         * 3.13). */
        p = addr_pk(TB_PKT_BRANCH, pr, TB_FUZZ_ARM_BASE + 0x200u, TB_ISA_ARM);
        p.has_exc = true;
        p.exc_num = 5;
        p.exc_bytes = 1;
        p.ns_valid = true;
        put(w, cfg, p, out, &n);
        put(w, cfg, atoms(pr, cfg, etm && cfg->cycle_accurate ? "WE" : "E"),
            out, &n);
        put(w, cfg, pk(TB_PKT_EXC_RETURN, pr), out, &n);
        put(w, cfg, addr_pk(TB_PKT_BRANCH, pr, TB_FUZZ_ARM_BASE + 0x84u,
                            TB_ISA_ARM), out, &n);
        if (cfg->ctxid_bytes) {
            p = pk(TB_PKT_CONTEXT_ID, pr);
            p.has_ctxid = true;
            p.context_id = 0x11;
            put(w, cfg, p, out, &n);
        }
        if (cfg->vmid) {
            p = pk(TB_PKT_VMID, pr);
            p.vmid = 3;
            put(w, cfg, p, out, &n);
        }
        put(w, cfg, pk(TB_PKT_TRIGGER, pr), out, &n);
        put(w, cfg, pk(TB_PKT_IGNORE, pr), out, &n);
        /* Straight-line code: a walk of many blocks to one waypoint. */
        if (variant == 1 && round < 2) {
            put(w, cfg, addr_pk(TB_PKT_BRANCH, pr,
                                round ? TB_FUZZ_LONG_THUMB_BASE : TB_FUZZ_LONG_ARM_BASE,
                                round ? TB_ISA_THUMB : TB_ISA_ARM), out, &n);
            put(w, cfg, atoms(pr, cfg, etm ? (cfg->cycle_accurate ? "WEWEWE" : "EEEEEEEEEEEE")
                                            : "E"), out, &n);
            if (etm && cfg->cycle_accurate && cfg->arch_minor == 0) {
                /* ETMv3.0: an N two cycles after the E before it, its
                 * first W a format-0 header (IHI0014Q 7.3.1 Table 7.3). */
                tb_packet f0 = atoms(pr, cfg, "W");

                f0.phdr_format = 0;
                put(w, cfg, f0, out, &n);
                put(w, cfg, atoms(pr, cfg, "WN"), out, &n);
            }
        }
        if (etm && cfg->data_trace) {
            p = pk(TB_PKT_STORE_FAILED, pr);
            put(w, cfg, p, out, &n);
            /* LSiP I-sync (IHI0014Q 7.10.5): the load/store at the
             * 4-byte address, execution going on after it. */
            p = addr_pk(TB_PKT_ISYNC, pr, TB_FUZZ_ARM_BASE + 0x10u, TB_ISA_ARM);
            p.reason = TB_ISYNC_TRACE_ON;
            p.lsip = true;
            p.lsip_addr = TB_FUZZ_ARM_BASE + 0x14u;
            p.lsip_isa = TB_ISA_ARM;
            put(w, cfg, p, out, &n);
        }
        /* Top of the address space: ranges that meet 2^32. */
        if (variant == 1)
            put(w, cfg, addr_pk(TB_PKT_BRANCH, pr, 0xFFFFFFF0u, TB_ISA_ARM),
                out, &n);
        put(w, cfg, atoms(pr, cfg, etm && cfg->cycle_accurate ? "WEWE" : "EE"),
            out, &n);
    }
    tb_writer_free(w);
    return n;
}

/* ETMv3 of a Cortex-M3 (docs/cortex-m.md 2): Thumb only, exception
 * branches with the traced v7-M numbers, returns (0x76 and the branch to
 * the return address), a tail-chain (0x76 and an exception branch) and a
 * return pre-empted while it unstacked (0x76 and an exception branch with
 * Cancel, DDI0337E 15.5.2: the decoder withdraws the return; issue 35). */
static size_t v7m_stream(const tb_config *cfg, int variant, uint8_t *out)
{
    tb_protocol pr = cfg->protocol;
    tb_writer *w = tb_writer_new(cfg);
    size_t n = 0;
    tb_packet p;

    if (!w)
        return 0;
    for (int round = 0; round < 2 + variant; round++) {
        put(w, cfg, pk(TB_PKT_ASYNC, pr), out, &n);
        p = addr_pk(TB_PKT_ISYNC, pr, TB_FUZZ_THUMB_BASE + 0x40u * (unsigned)round,
                    TB_ISA_THUMB);
        p.reason = round ? TB_ISYNC_PERIODIC : TB_ISYNC_TRACE_ON;
        put(w, cfg, p, out, &n);
        put(w, cfg, atoms(pr, cfg, "EEEN"), out, &n);
        for (int k = 0; k < 4; k++) {
            /* k 0: an IRQ1 (traced 1); 1: its return; 2: a tail-chain
             * into IRQ0 (traced 8); 3: that return pre-empted, IRQ3
             * (traced 3) entered with Cancel. */
            bool exc = k != 1;

            p = addr_pk(TB_PKT_BRANCH, pr, TB_FUZZ_THUMB_BASE + 0x20u + 0x10u * (unsigned)k,
                        TB_ISA_THUMB);
            if (k)
                put(w, cfg, pk(TB_PKT_EXC_RETURN, pr), out, &n);
            if (exc) {
                p.has_exc = true;
                p.exc_num = k == 0 ? 1 : k == 2 ? 8 : 3;
                p.exc_bytes = 1;
                p.exc_cancel = k == 3;
            }
            put(w, cfg, p, out, &n);
            put(w, cfg, atoms(pr, cfg, "EE"), out, &n);
        }
        put(w, cfg, pk(TB_PKT_EXC_RETURN, pr), out, &n);
        put(w, cfg, addr_pk(TB_PKT_BRANCH, pr, TB_FUZZ_THUMB_BASE + 0x80u, TB_ISA_THUMB),
            out, &n);
        put(w, cfg, atoms(pr, cfg, "EEEE"), out, &n);
    }
    tb_writer_free(w);
    return n;
}

static int proto_seeds(tb_protocol proto, const char *prefix,
                       tb_fuzz_seed_cb cb, void *ctx)
{
    const seed_cfg *cfgs = proto == TB_PROTO_ETMV3 ? etmv3_cfgs : ptm_cfgs;
    size_t ncfg = proto == TB_PROTO_ETMV3
                      ? sizeof etmv3_cfgs / sizeof etmv3_cfgs[0]
                      : sizeof ptm_cfgs / sizeof ptm_cfgs[0];
    static uint8_t buf[TB_FUZZ_CFG_BYTES + SEED_CAP];
    int count = 0;
    size_t i;

    for (i = 0; i < ncfg; i++) {
        for (int v = 0; v < 2; v++) {
            tb_config cfg;
            char name[64];
            size_t n;
            tb_fuzz_config_bytes(proto, cfgs[i].minor, cfgs[i].alt,
                                 cfgs[i].etmcr, cfgs[i].etmccer, buf);
            if (cfgs[i].v7m)
                buf[0] |= 0x20; /* a Cortex-M3 (fuzz_util.c) */
            tb_fuzz_config(proto, buf, &cfg);
            n = cfg.v7m ? v7m_stream(&cfg, v, buf + TB_FUZZ_CFG_BYTES)
                        : packet_stream(&cfg, v, buf + TB_FUZZ_CFG_BYTES);
            snprintf(name, sizeof name, "%s-cfg%zu-v%d", prefix, i, v);
            if (cb(ctx, name, buf, TB_FUZZ_CFG_BYTES + n))
                return count;
            count++;
        }
    }
    return count;
}

/* ---- deformatter: formatted buffers of two or three sources ---- */

typedef struct fbuf {
    uint8_t *data;
    size_t len, cap;
} fbuf;

static int sink(void *ctx, const uint8_t *data, size_t len)
{
    fbuf *b = ctx;

    if (b->len + len > b->cap)
        return TB_ERR_NOSPACE;
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return 0;
}

static int deformatter_seeds(tb_fuzz_seed_cb cb, void *ctx)
{
    static const unsigned modes[] = {
        TB_FRAME_MEM_ALIGNED, TB_FRAME_HAS_FSYNC,
        TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC, TB_FRAME_HAS_HSYNC,
    };
    static uint8_t out[1 + SEED_CAP], src[3][SEED_CAP];
    size_t slen[3], m;
    int count = 0;

    for (m = 0; m < 3; m++) {
        tb_config cfg;
        uint8_t b[TB_FUZZ_CFG_BYTES];
        tb_fuzz_config_bytes(m == 1 ? TB_PROTO_ETMV3 : TB_PROTO_PTM, 1 + (unsigned)m,
                             false, 0x10001000, 0x20000000, b);
        tb_fuzz_config(m == 1 ? TB_PROTO_ETMV3 : TB_PROTO_PTM, b, &cfg);
        slen[m] = packet_stream(&cfg, (int)m & 1, src[m]);
        if (slen[m] > 600)
            slen[m] = 600;
    }
    for (m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        tb_formatter *f = tb_formatter_new(modes[m]);
        fbuf b = {out + 1, 0, SEED_CAP};
        size_t at[3] = {0, 0, 0};
        unsigned turn = 0;
        char name[64];
        int rc = 0;

        if (!f)
            continue;
        out[0] = (uint8_t)modes[m];
        /* Interleave the sources in uneven slices, with idles in HSYNC
         * mode, as a funnel would. */
        while (rc >= 0 && (at[0] < slen[0] || at[1] < slen[1] || at[2] < slen[2])) {
            unsigned s = turn++ % 3;
            size_t k = 1 + (turn * 7) % 23;
            if (at[s] + k > slen[s])
                k = slen[s] - at[s];
            if (k)
                rc = tb_formatter_put(f, (uint8_t)(0x10 + s * 3), src[s] + at[s], k,
                                      sink, &b);
            at[s] += k;
            if (rc >= 0 && (modes[m] & TB_FRAME_HAS_HSYNC) && turn % 5 == 0)
                rc = tb_formatter_idle(f, sink, &b);
        }
        if (rc >= 0)
            rc = tb_formatter_flush(f, sink, &b);
        tb_formatter_free(f);
        if (rc < 0)
            continue;
        snprintf(name, sizeof name, "deformatter-mode%zu", m);
        if (cb(ctx, name, out, 1 + b.len))
            return count;
        count++;
    }
    return count;
}

/* ---- snapshot: tb_snapshot_write output packed as an archive ---- */

static int pack_dir(const char *dir, fbuf *out)
{
    static const char *const first = "snapshot.ini";
    DIR *d;
    struct dirent *e;
    char path[640];
    int pass;

    out->len = 0;
    /* snapshot.ini first (no header), then every other file. */
    for (pass = 0; pass < 2; pass++) {
        d = opendir(dir);
        if (!d)
            return TB_ERR_IO;
        while ((e = readdir(d)) != NULL) {
            FILE *f;
            size_t n;
            if (e->d_name[0] == '.' || (strcmp(e->d_name, first) == 0) != (pass == 0))
                continue;
            if (pass == 1) {
                int k = snprintf((char *)out->data + out->len,
                                 out->cap - out->len, "%s@@ %s\n",
                                 out->len ? "\n" : "", e->d_name);
                if (k < 0 || (size_t)k >= out->cap - out->len) {
                    closedir(d);
                    return TB_ERR_NOSPACE;
                }
                out->len += (size_t)k;
            }
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            f = fopen(path, "rb");
            if (!f) {
                closedir(d);
                return TB_ERR_IO;
            }
            n = fread(out->data + out->len, 1, out->cap - out->len, f);
            out->len += n;
            fclose(f);
        }
        closedir(d);
    }
    return 0;
}

static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[640];

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

static int snapshot_seeds(tb_fuzz_seed_cb cb, void *ctx)
{
    static uint8_t arch[4 * SEED_CAP], trace[2][SEED_CAP], code[2][256];
    /* tpiu_coresight (issue 35): FSYNCs and the port's HSYNC idles. */
    static const char *const formats[] = {"coresight", "dstream_coresight",
                                          "source_data", "tpiu_coresight"};
    char dir[256], err[256];
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    int count = 0;
    size_t fi;

    for (fi = 0; fi < sizeof formats / sizeof formats[0]; fi++) {
        tb_config cfg[2];
        uint8_t b[TB_FUZZ_CFG_BYTES];
        tb_snap_region reg[2];
        tb_snap_out_source srcs[2];
        size_t nsrc = fi == 2 ? 1 : 2, tlen[2], i;
        fbuf out = {arch, 0, sizeof arch};
        uint8_t fmt[2 * SEED_CAP];
        fbuf fb = {fmt, 0, sizeof fmt};
        char name[64];
        int rc = 0;

        for (i = 0; i < nsrc; i++) {
            tb_protocol pr = i ? TB_PROTO_ETMV3 : TB_PROTO_PTM;
            tb_fuzz_config_bytes(pr, i ? 5 : 1, false, 0x10000000, 0x20000000, b);
            tb_fuzz_config(pr, b, &cfg[i]);
            cfg[i].trace_id = (uint8_t)(0x10 + i);
            cfg[i].traceidr = 0x10 + (uint32_t)i;
            tlen[i] = packet_stream(&cfg[i], 0, trace[i]);
            if (tlen[i] > 300)
                tlen[i] = 300;
            (void)tb_memimage_read(tb_fuzz_image(), TB_FUZZ_ARM_BASE,
                                   code[i], sizeof code[i]);
            reg[i] = (tb_snap_region){TB_FUZZ_ARM_BASE, code[i], sizeof code[i]};
            srcs[i] = (tb_snap_out_source){
                .name = i ? "ETM_1" : "PTM_0", .cfg = &cfg[i],
                .core = i ? "cpu_1" : "cpu_0",
                .core_type = i ? "Cortex-A7" : NULL, .regions = &reg[i],
                .n_regions = 1};
        }
        if (fi == 2) {
            memcpy(fmt, trace[0], tlen[0]);
            fb.len = tlen[0];
        } else {
            tb_formatter *f = tb_formatter_new(fi == 1   ? TB_FRAME_HAS_FSYNC
                                               : fi == 3 ? TB_FRAME_HAS_FSYNC |
                                                               TB_FRAME_HAS_HSYNC
                                                         : TB_FRAME_MEM_ALIGNED);
            if (!f)
                continue;
            /* TPIU: the sources in 37-byte slices, 30 cycles apart (the
             * port idles between them: tb_formatter_tick's HSYNCs). */
            uint64_t cycle = 0;

            for (i = 0; i < nsrc && rc >= 0; i++)
                for (size_t at = 0; at < tlen[i] && rc >= 0; at += 37) {
                    size_t k = tlen[i] - at < 37 ? tlen[i] - at : 37;

                    rc = tb_formatter_tick(f, cycle += 30, sink, &fb);
                    if (rc >= 0)
                        rc = tb_formatter_put(f, cfg[i].trace_id, trace[i] + at, k, sink,
                                              &fb);
                }
            if (rc >= 0)
                rc = tb_formatter_flush(f, sink, &fb);
            tb_formatter_free(f);
            if (rc < 0)
                continue;
        }
        snprintf(dir, sizeof dir, "%s/tbfuzz-seed-XXXXXX", base);
        if (!mkdtemp(dir))
            return TB_ERR_IO;
        rc = tb_snapshot_write(dir, srcs, nsrc, fmt, fb.len, formats[fi], err,
                               sizeof err);
        if (rc == 0)
            rc = pack_dir(dir, &out);
        rm_dir(dir);
        if (rc < 0)
            continue;
        snprintf(name, sizeof name, "snapshot-%s", formats[fi]);
        if (cb(ctx, name, out.data, out.len))
            return count;
        count++;
    }
    return count;
}

/* ---- round trip: generator input, from a fixed PRNG; the first byte
 * walks through protocol, version and option bits (fuzz_roundtrip.c) ---- */
static int roundtrip_seeds(tb_fuzz_seed_cb cb, void *ctx)
{
    static uint8_t buf[400];
    uint64_t s = 0x726f756e64747269ull;
    int i;

    for (i = 0; i < 32; i++) {
        size_t n = 24 + (size_t)(i * 37) % 360, k;
        char name[64];
        for (k = 0; k < n; k++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            buf[k] = (uint8_t)(s >> 24);
        }
        buf[0] = (uint8_t)(i * 8 + (i & 7)); /* every option combination's low bits */
        buf[2] |= (uint8_t)(i & 1);          /* half with interrupts */
        snprintf(name, sizeof name, "roundtrip-%02d", i);
        if (cb(ctx, name, buf, n))
            return i;
    }
    return i;
}

/* ---- ETMv1: the encoder's captures of a walk through the fixed image ----
 * Exec records made by following the image's own code with the
 * classifier (so the decoder walks the same path): conditions pass or
 * fail at random, direct branches go to their targets, indirect ones to
 * random code addresses, SVCs and IRQs enter their vectors (the image's
 * vector table branches back into the ARM code), context ID changes
 * where configured.  A walk that leaves the image (a far branch) takes
 * an IRQ there, back into the image. */

typedef struct e1_seed_cfg {
    uint8_t width, minor, ctxid;
    bool ca, bb;
    uint64_t trigger_at;     /* 0: none */
    uint32_t sync;           /* periodic sync cycles */
    bool own_header;
    bool ctx_before;         /* context changes right before conditional
                              * instructions and branches (issue 35) */
    bool abandon;            /* ETMv1 abandon, and IRQs right after taken
                              * branches: BEs in APO cycles (issue 35) */
} e1_seed_cfg;

static const e1_seed_cfg etmv1_cfgs[] = {
    {4, 3, 0, false, false, 0, 1024, false, false, false},
    {4, 3, 0, true, false, 0, 1024, false, false, false},
    {8, 3, 0, false, false, 0, 1024, false, false, false},
    {8, 3, 0, true, false, 0, 1024, false, false, false},
    {16, 3, 0, false, false, 0, 1024, false, false, false},
    {16, 3, 0, true, false, 0, 1024, false, false, false},
    {8, 3, 4, false, true, 40, 200, false, false, false},  /* CtxtID, branch output, trigger */
    {4, 2, 1, true, true, 25, 150, false, false, false},
    {16, 0, 0, true, false, 60, 300, false, false, false}, /* ETMv1.0 */
    {8, 1, 0, false, false, 0, 1024, true, false, false},  /* the input's own header */
    /* A context ID packet with a failed instruction's status, with a
     * phantom, before a branch address (ETMv2 DN, phantom + DN, C = 1;
     * IHI0014Q 6.1.2, 6.4.1). */
    {8, 3, 1, false, false, 0, 1024, false, true, false},
    /* Abandoned branches: an IRQ's BE in the first APO cycle of the
     * taken branch before it (IHI0014Q 5.6.1). */
    {8, 3, 0, true, true, 0, 1024, false, false, true},
};

typedef struct e1_walk {
    uint64_t rng;
    tb_classifier *cls;
    tb_etmv1_encoder *enc;
    tb_etmv2_encoder *enc2;  /* ETMv2 seeds: records go here instead */
    tb_encoder *enc3;        /* ETMv3/PTM seeds (ocsd_seeds): or here */
    const tb_memimage *img;  /* NULL: tb_fuzz_image() */
    tb_exec_record r;
    uint64_t seq, cycle;
    int rc;
} e1_walk;

static uint64_t e1_rand(e1_walk *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

static void e1_rec(e1_walk *w, tb_rec_kind k)
{
    memset(&w->r, 0, sizeof w->r);
    w->r.kind = k;
    w->r.seq = w->seq;
    w->r.cycle = w->cycle;
}

static void e1_push(e1_walk *w)
{
    if (w->rc >= 0)
        w->rc = w->enc3   ? tb_encoder_push(w->enc3, &w->r)
                : w->enc2 ? tb_etmv2_encoder_push(w->enc2, &w->r)
                          : tb_etmv1_encoder_push(w->enc, &w->r);
}

static uint32_t e1_code_addr(e1_walk *w, tb_isa *isa)
{
    uint64_t r = e1_rand(w);

    *isa = (r & 1) ? TB_ISA_THUMB : TB_ISA_ARM;
    if (*isa == TB_ISA_ARM)
        return TB_FUZZ_ARM_BASE + (uint32_t)((r >> 8) % (TB_FUZZ_CODE_BYTES / 4 - 64)) * 4;
    if (w->img) {
        /* The OpenCSD image: a Thumb instruction's first halfword, never
         * the middle of a 32-bit one (an encoding the image does not
         * define). */
        const uint32_t want = TB_FUZZ_THUMB_BASE +
                              (uint32_t)((r >> 8) % (TB_FUZZ_CODE_BYTES / 2 - 64)) * 2;
        uint32_t a = TB_FUZZ_THUMB_BASE, last = a;
        uint8_t hw[2];

        while (a <= want && tb_memimage_read(w->img, a, hw, 2) == 2) {
            last = a;
            a += tb_thumb_size((uint16_t)(hw[0] | hw[1] << 8));
        }
        return last;
    }
    return TB_FUZZ_THUMB_BASE + (uint32_t)((r >> 8) % (TB_FUZZ_CODE_BYTES / 2 - 64)) * 2;
}

static void e1_exception(e1_walk *w, tb_exc_kind k, uint32_t off, uint32_t ret,
                         uint32_t *pc, tb_isa *isa)
{
    e1_rec(w, TB_REC_EXCEPTION);
    w->r.u.exc.kind = (uint8_t)k;
    w->r.u.exc.isa = TB_ISA_ARM;
    w->r.u.exc.pref_return = ret;
    w->r.u.exc.vector = off;
    w->r.u.exc.cpsr = 0x1D3;
    e1_push(w);
    w->cycle += 3;
    *pc = off;
    *isa = TB_ISA_ARM;
}

static void e1_walk_image(e1_walk *w, const e1_seed_cfg *sc, unsigned n_insns)
{
    const tb_memimage *m = w->img ? w->img : tb_fuzz_image();
    uint32_t pc = TB_FUZZ_ARM_BASE;
    tb_isa isa = TB_ISA_ARM;
    bool prev_direct = false, ctx_then_direct = false;
    unsigned i;

    if (sc->ctxid) {
        e1_rec(w, TB_REC_CONTEXT);
        w->r.u.ctx.context_id = 0x42;
        e1_push(w);
    }
    for (i = 0; i < n_insns && w->rc >= 0; i++) {
        size_t avail = 0;
        const uint8_t *b = tb_memimage_ptr(m, pc, &avail);
        tb_insn in;
        uint32_t next;
        tb_isa next_isa = isa;
        uint8_t flags = 0;
        bool pass = true;

        if (!b || tb_classifier_decode(w->cls, b, avail, pc, isa, &in) < 0) {
            /* Off the image (a far branch): an IRQ brings it back. */
            e1_exception(w, TB_EXC_IRQ, 0x18, pc, &pc, &isa);
            continue;
        }
        if (in.cond != 14 && in.cond != 15) {
            flags |= TB_INSN_CONDITIONAL;
            pass = e1_rand(w) % 3 != 0;
            /* After a context change and a direct branch, which the
             * ETMv2 model folds with this one (docs/etmv2.md 6, U18):
             * fail, so that the phantom's status is DN. */
            if (sc->ctx_before && prev_direct && ctx_then_direct)
                pass = false;

            if (!pass)
                flags |= TB_INSN_COND_FAILED;
        }
        next = pc + in.size;
        if (pass && (in.wp_class == TB_WP_DIRECT || in.wp_class == TB_WP_DIRECT_LINK) &&
            in.has_target) {
            next = in.target;
            next_isa = (tb_isa)in.target_isa;
            flags |= TB_INSN_TAKEN;
        } else if (pass && (in.wp_class == TB_WP_INDIRECT ||
                            in.wp_class == TB_WP_INDIRECT_LINK)) {
            next = e1_code_addr(w, &next_isa);
            flags |= TB_INSN_TAKEN;
            if (in.exc_return)
                flags |= TB_INSN_EXC_RETURN;
        }
        /* Not between a direct branch and the next instruction: the
         * change would keep the two from folding. */
        ctx_then_direct = false;
        if (sc->ctx_before && !prev_direct && (in.wp_class != TB_WP_NONE || in.cond != 14)) {
            ctx_then_direct = in.wp_class == TB_WP_DIRECT;
            e1_rec(w, TB_REC_CONTEXT);
            w->r.u.ctx.context_id = 0x80 + i;
            e1_push(w);
        }
        prev_direct = in.wp_class == TB_WP_DIRECT;
        e1_rec(w, TB_REC_INSN);
        w->r.u.insn.addr = pc;
        w->r.u.insn.next_addr = next;
        w->r.u.insn.opcode = in.opcode;
        w->r.u.insn.size = in.size;
        w->r.u.insn.isa = (uint8_t)isa;
        w->r.u.insn.next_isa = (uint8_t)next_isa;
        w->r.u.insn.wp_class = in.wp_class;
        w->r.u.insn.flags = flags;
        e1_push(w);
        w->seq++;
        w->cycle += 1 + ((flags & TB_INSN_TAKEN) ? 2 : 0) + (e1_rand(w) % 8 == 0 ? 3 : 0);
        pc = next;
        isa = next_isa;
        if (pass && in.is_svc) {
            e1_exception(w, TB_EXC_SVC, 0x08, pc, &pc, &isa);
        } else if (i % 97 == 96 || (sc->abandon && (flags & TB_INSN_TAKEN) && i % 3 == 0)) {
            e1_exception(w, TB_EXC_IRQ, 0x18, pc, &pc, &isa);
        } else if (!w->enc3 && i % 61 == 60) {
            /* The port seeds: a debug halt, restarting where it stopped
             * (an exit from debug state: ETMv1 reason b011, an ETMv2 TFO
             * reason 11; docs/debug-halt.md). */
            e1_rec(w, TB_REC_EXCEPTION);
            w->cycle += 40;
            w->r.cycle = w->cycle;
            w->r.u.exc.kind = TB_EXC_DEBUG_HALT;
            w->r.u.exc.isa = TB_ISA_ARM;
            w->r.u.exc.pref_return = pc;
            w->r.u.exc.cpsr = 0x1D3;
            e1_push(w);
        }
        if (sc->ctxid && i % 150 == 149) {
            e1_rec(w, TB_REC_CONTEXT);
            w->r.u.ctx.context_id = 0x42 + i;
            e1_push(w);
        }
    }
    e1_rec(w, TB_REC_END);
    e1_push(w);
}

static int etmv1_seeds(tb_fuzz_seed_cb cb, void *ctx)
{
    static uint8_t buf[2 * SEED_CAP], cap[2 * SEED_CAP + TB_ETMV1_HDR_BYTES];
    tb_classifier *cls = tb_classifier_new();
    int count = 0;
    size_t i;

    if (!cls)
        return TB_ERR_NOMEM;
    for (i = 0; i < sizeof etmv1_cfgs / sizeof etmv1_cfgs[0]; i++) {
        const e1_seed_cfg *sc = &etmv1_cfgs[i];
        tb_etmv1_encoder_opts o;
        tb_etmv1_config c;
        fbuf b = {cap, 0, sizeof cap};
        e1_walk w = {.rng = 0x65746d7631ull + i, .cls = cls};
        size_t skip, n;
        char name[64];

        tb_etmv1_encoder_opts_init(&o);
        o.port_width = sc->width;
        o.base.arch_minor = sc->minor;
        o.base.cycle_accurate = sc->ca;
        o.base.branch_broadcast = sc->bb;
        o.base.ctxid_bytes = sc->ctxid;
        o.base.sync_period = sc->sync;
        o.base.trigger_at = sc->trigger_at;
        o.base.apo_abandon = sc->abandon;
        tb_etmv1_config_init(&c);
        if (tb_etmv1_encoder_config(&o, &c) < 0)
            continue;
        w.enc = tb_etmv1_encoder_new_bytes(&o, sink, &b);
        if (!w.enc)
            continue;
        e1_walk_image(&w, sc, 400);
        if (w.rc >= 0)
            w.rc = tb_etmv1_encoder_finish(w.enc);
        tb_etmv1_encoder_free(w.enc);
        if (w.rc < 0 && w.rc != TB_ERR_NOSPACE)
            continue;
        skip = sc->own_header ? 0 : TB_ETMV1_HDR_BYTES;
        if (b.len < skip + TB_ETMV1_SAMPLE_BYTES)
            continue;
        /* Whole samples, the seed at most 8192 bytes (run.sh -max_len). */
        n = b.len - skip;
        if (n > sizeof buf - TB_FUZZ_CFG_BYTES)
            n = sizeof buf - TB_FUZZ_CFG_BYTES;
        n -= n % TB_ETMV1_SAMPLE_BYTES;
        memcpy(buf + TB_FUZZ_CFG_BYTES, cap + skip, n);
        tb_fuzz_etmv1_config_bytes(&c, sc->own_header, buf);
        snprintf(name, sizeof name, "etmv1-w%u-%s%s-%zu", sc->width,
                 sc->ca ? "ca" : "plain", sc->own_header ? "-hdr" : "", i);
        if (cb(ctx, name, buf, TB_FUZZ_CFG_BYTES + n))
            break;
        count++;
    }
    tb_classifier_free(cls);
    /* Looped captures (b1[4]): a BE whose address never comes, then
     * executed instructions (the parser's queue limit), and a BE with
     * its two APO cycles again and again (its pending-branch limit). */
    for (i = 0; i < 2; i++) {
        tb_etmv1_config c;
        tb_etmv1_sample sm = {TB_ETMV1_BE, 0, 0};
        size_t k, n = i ? 3 : 2000;
        char name[64];

        tb_etmv1_config_init(&c);
        c.cycle_accurate = i == 0;
        tb_fuzz_etmv1_config_bytes(&c, false, buf);
        buf[1] |= 0x10;
        for (k = 0; k < n; k++) {
            sm.pipestat = k ? TB_ETMV1_IE : TB_ETMV1_BE;
            tb_etmv1_sample_pack(&sm, buf + TB_FUZZ_CFG_BYTES + TB_ETMV1_SAMPLE_BYTES * k);
        }
        snprintf(name, sizeof name, "etmv1-loop-%s", i ? "branches" : "queue");
        if (cb(ctx, name, buf, TB_FUZZ_CFG_BYTES + TB_ETMV1_SAMPLE_BYTES * n))
            break;
        count++;
    }
    return count;
}

/* ETMv2 (fuzz_etmv2.c): the encoder's captures over the fixed image at
 * each port width, with and without CA, branch output, context IDs and
 * a trigger, one with its own header; then a looped capture (a DE whose
 * packets never come: the queue limit). */
static int etmv2_seeds(tb_fuzz_seed_cb cb, void *ctx)
{
    static uint8_t buf[2 * SEED_CAP], cap[2 * SEED_CAP + TB_ETMV1_HDR_BYTES];
    tb_classifier *cls = tb_classifier_new();
    int count = 0;
    size_t i;

    if (!cls)
        return TB_ERR_NOMEM;
    for (i = 0; i < sizeof etmv1_cfgs / sizeof etmv1_cfgs[0]; i++) {
        const e1_seed_cfg *sc = &etmv1_cfgs[i];
        tb_etmv2_encoder_opts o;
        tb_etmv2_config c;
        fbuf b = {cap, 0, sizeof cap};
        e1_walk w = {.rng = 0x65746d7632ull + i, .cls = cls};
        size_t skip, n;
        char name[64];

        tb_etmv2_encoder_opts_init(&o);
        o.port_width = sc->width;
        o.base.cycle_accurate = sc->ca;
        o.base.branch_broadcast = sc->bb;
        o.base.ctxid_bytes = sc->ctxid;
        o.base.sync_period = sc->sync;
        o.base.trigger_at = sc->trigger_at;
        tb_etmv2_config_init(&c);
        if (tb_etmv2_encoder_config(&o, &c) < 0)
            continue;
        w.enc2 = tb_etmv2_encoder_new_bytes(&o, sink, &b);
        if (!w.enc2)
            continue;
        e1_walk_image(&w, sc, 400);
        if (w.rc >= 0)
            w.rc = tb_etmv2_encoder_finish(w.enc2);
        tb_etmv2_encoder_free(w.enc2);
        if (w.rc < 0 && w.rc != TB_ERR_NOSPACE)
            continue;
        skip = sc->own_header ? 0 : TB_ETMV1_HDR_BYTES;
        if (b.len < skip + TB_ETMV1_SAMPLE_BYTES)
            continue;
        n = b.len - skip;
        if (n > sizeof buf - TB_FUZZ_CFG_BYTES)
            n = sizeof buf - TB_FUZZ_CFG_BYTES;
        n -= n % TB_ETMV1_SAMPLE_BYTES;
        memcpy(buf + TB_FUZZ_CFG_BYTES, cap + skip, n);
        tb_fuzz_etmv2_config_bytes(&c, sc->own_header, buf);
        snprintf(name, sizeof name, "etmv2-w%u-%s%s-%zu", sc->width,
                 sc->ca ? "ca" : "plain", sc->own_header ? "-hdr" : "", i);
        if (cb(ctx, name, buf, TB_FUZZ_CFG_BYTES + n))
            break;
        count++;
    }
    tb_classifier_free(cls);
    {
        tb_etmv2_config c;
        tb_etmv1_sample sm = {TB_ETMV2_TD, 0, 1};
        size_t k, n = 2000;

        tb_etmv2_config_init(&c);
        tb_fuzz_etmv2_config_bytes(&c, false, buf);
        buf[1] |= 0x10;
        for (k = 0; k < n; k++) {
            if (k)
                sm.pipestat = k == 1 ? TB_ETMV2_DE : TB_ETMV2_IE;
            sm.tracepkt = k == 0 ? 1 : 0x80; /* a TFO, then bytes with C set */
            tb_etmv1_sample_pack(&sm, buf + TB_FUZZ_CFG_BYTES + TB_ETMV1_SAMPLE_BYTES * k);
        }
        if (!cb(ctx, "etmv2-loop-queue", buf, TB_FUZZ_CFG_BYTES + TB_ETMV1_SAMPLE_BYTES * n))
            count++;
    }
    {
        /* Data trace (docs/etmv2.md 9): the hand-made capture of
         * tests/test_etmv2_data.c (a TFO, a load, LDR pc with its branch
         * address, a failed store, an STM of two words), on an 8-bit and
         * a 4-bit port, ETMCR[3:2] = 11 and 10. */
        static const uint8_t fifo[] = {
            0x01, 0x00, 0x10, 0x00, 0x00, 0x2E, 0x84, 0xA0, 0x80, 0x80, 0x02, 0xEF,
            0xBE, 0xAD, 0xDE, 0xAE, 0x08, 0x00, 0x20, 0x00, 0x00, 0x81, 0x20, 0xAE,
            0x80, 0x22, 0x11, 0x00, 0x00, 0x00, 0x0E, 0x22, 0x00, 0x00, 0x00,
        };
        static const uint8_t fifo_addr[] = { /* the same, addresses only */
            0x01, 0x00, 0x10, 0x00, 0x00, 0x22, 0x84, 0xA0, 0x80,
            0x80, 0x02, 0xA2, 0x08, 0x81, 0x20, 0x22, 0x80, 0x22,
        };
        /* ViewData over the STM's first word (6.4.4, issue 35): the
         * loads send nothing, the STM a Value Not Traced packet
         * (test_etmv2_data.c partial_lsm_value_not_traced). */
        static const uint8_t fifo_vnt[] = {
            0x01, 0x00, 0x10, 0x00, 0x00, 0x81, 0x20, 0xAE, 0x80,
            0xA2, 0x80, 0x80, 0x02, 0x11, 0x00, 0x00, 0x00, 0x6A,
        };
        /* Load misses (ooo=1, M12, issue 35): the load at 0x1000 misses
         * (tag 1), its data goes with the next status (test_etmv2_data.c
         * load_miss). */
        static const uint8_t fifo_miss[] = {
            0x01, 0x00, 0x10, 0x00, 0x00, 0x74, 0x84, 0xA0, 0x80, 0x80, 0x02, 0xAC,
            0xEF, 0xBE, 0xAD, 0xDE, 0xAE, 0x08, 0x00, 0x20, 0x00, 0x00, 0x81, 0x20,
            0xAE, 0x80, 0x22, 0x11, 0x00, 0x00, 0x00, 0x0E, 0x22, 0x00, 0x00, 0x00,
        };
        static const uint8_t ps[] = {TB_ETMV2_DE, TB_ETMV2_DE, TB_ETMV2_IN, TB_ETMV2_DE};
        static const uint8_t ps_vnt[] = {TB_ETMV2_IE, TB_ETMV2_DE, TB_ETMV2_IN, TB_ETMV2_DE};
        static const char *const names[] = {"etmv2-data-w8", "etmv2-data-w4",
                                            "etmv2-data-addr-w8", "etmv2-data-vnt-w8",
                                            "etmv2-data-miss-w8"};
        unsigned v;

        for (v = 0; v < 5; v++) {
            tb_etmv2_config c;
            tb_etmv1_sample sm = {TB_ETMV2_TD, 0, 1};
            const uint8_t *f = v == 2 ? fifo_addr : v == 3 ? fifo_vnt : v == 4 ? fifo_miss : fifo;
            const uint8_t *st = v == 3 ? ps_vnt : ps;
            size_t k = 0, u, units = v == 1 ? 2 * sizeof fifo
                                   : v == 2 ? sizeof fifo_addr
                                   : v == 3 ? sizeof fifo_vnt
                                   : v == 4 ? sizeof fifo_miss : sizeof fifo;

            tb_etmv2_config_init(&c);
            c.port_width = v == 1 ? 4 : 8;
            c.data_trace = v == 2 ? 2 : 3;
            tb_fuzz_etmv2_config_bytes(&c, false, buf);
            tb_etmv1_sample_pack(&sm, buf + TB_FUZZ_CFG_BYTES + TB_ETMV1_SAMPLE_BYTES * k++);
            if (v == 1) { /* U4: the TFO's second cycle, the first status */
                sm.pipestat = ps[0];
                tb_etmv1_sample_pack(&sm, buf + TB_FUZZ_CFG_BYTES + TB_ETMV1_SAMPLE_BYTES * k++);
            }
            for (u = 0; u < units; u++) {
                size_t cyc = v == 1 ? u + 1 : u;

                sm.pipestat = cyc < sizeof ps ? st[cyc] : TB_ETMV2_WT;
                sm.tracepkt = v == 1 ? (u & 1 ? f[u / 2] >> 4 : f[u / 2] & 0xF) : f[u];
                tb_etmv1_sample_pack(&sm, buf + TB_FUZZ_CFG_BYTES + TB_ETMV1_SAMPLE_BYTES * k++);
            }
            if (!cb(ctx, names[v], buf, TB_FUZZ_CFG_BYTES + TB_ETMV1_SAMPLE_BYTES * k))
                count++;
        }
    }
    return count;
}

/* The OpenCSD differential harnesses (fuzz_diff_ocsd.c): the decoder
 * seeds, and the encoder's trace of walks through their image
 * (tb_fuzz_ocsd_image, with the ETMv1 walk above), so that both decoders
 * follow long paths through code that agrees with the trace.  ETMv3 without data trace (OpenCSD
 * decodes none with it). */
static int ocsd_seeds(tb_protocol proto, const char *name, tb_fuzz_seed_cb cb, void *ctx)
{
    static const struct {
        unsigned minor;
        const char *opts;
    } etm[] = {{5, ""}, {5, "ca,ts"}, {4, "alt,bb,vmid"}, {3, "ctxid=4"}, {0, "ca"},
               {5, "ca,bb"}},
      ptm[] = {{1, ""}, {1, "ca,ts"}, {0, "rs,ctxid=4"}, {1, "bb,vmid,ctxid=1"}};
    static uint8_t buf[TB_FUZZ_CFG_BYTES + 2 * SEED_CAP];
    const bool e3 = proto == TB_PROTO_ETMV3;
    const size_t n_cfg = e3 ? sizeof etm / sizeof etm[0] : sizeof ptm / sizeof ptm[0];
    tb_classifier *cls;
    int count = proto_seeds(proto, name, cb, ctx);
    size_t i;

    if (count < 0)
        return count;
    cls = tb_classifier_new();
    if (!cls)
        return TB_ERR_NOMEM;
    for (i = 0; i < n_cfg; i++) {
        const e1_seed_cfg sc = {0};
        tb_encoder_opts o;
        tb_config c;
        fbuf b = {buf + TB_FUZZ_CFG_BYTES, 0, 2 * SEED_CAP - TB_FUZZ_CFG_BYTES};
        e1_walk w = {.rng = 0x6f637364ull + i, .cls = cls, .img = tb_fuzz_ocsd_image()};
        char err[128], seed[64];

        tb_encoder_opts_init(&o, proto);
        if (tb_encoder_opts_parse(&o, e3 ? etm[i].opts : ptm[i].opts, err, sizeof err) < 0)
            continue;
        o.arch_minor = (uint8_t)(e3 ? etm[i].minor : ptm[i].minor);
        o.sync_period = 256;
        if (tb_encoder_config(&o, &c) < 0)
            continue;
        w.enc3 = tb_encoder_new(&o, sink, &b);
        if (!w.enc3)
            continue;
        e1_walk_image(&w, &sc, 600);
        if (w.rc >= 0)
            w.rc = tb_encoder_finish(w.enc3);
        tb_encoder_free(w.enc3);
        if ((w.rc < 0 && w.rc != TB_ERR_NOSPACE) || b.len == 0)
            continue;
        tb_fuzz_config_bytes(proto, c.arch_minor, c.alt_branch, c.etmcr, c.etmccer, buf);
        snprintf(seed, sizeof seed, "%s-walk%zu", name, i);
        if (cb(ctx, seed, buf, TB_FUZZ_CFG_BYTES + b.len))
            break;
        count++;
    }
    tb_classifier_free(cls);
    return count;
}

/* ---- gen (fuzz_gen.c): kept-seed table rows, good and bad, whose first
 * ten bytes also pick a seed, an ISA and a size for the generator ---- */
static int gen_seeds(tb_fuzz_seed_cb cb, void *ctx)
{
    static const char *const t[] = {
        "17 mixed 10 0123456789abcdef etmv1 ca,fifo=6 KNOWN:overflow-resume\n",
        ("# c\n250 arm 10 fedcba9876543210 etmv3 ts,tsper=40 MATCH # x\n"
         "3 thumb 1 0000000000000001 ptm plain MATCH\n"),
        "1 arm 0 0123 etmv4 plain PASS\n",
        "\x01\x02\x03\x04\x05\x06\x07\x08\x02\x0a mixed\n",
    };
    int count = 0;

    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char name[32];

        snprintf(name, sizeof name, "gen-%02zu", i);
        if (!cb(ctx, name, (const uint8_t *)t[i], strlen(t[i])))
            count++;
    }
    return count;
}

/* ---- conform (fuzz_conform.c): a form byte (value % 3: addr, opencsd,
 * json; bits 3:2 the protocol, 0 ETMv3, 1 PTM; bit 4 clear: with the
 * image), then decoder output in that form ---- */
static int conform_seeds(tb_fuzz_seed_cb cb, void *ctx)
{
    static const char *const t[] = {
        "\x03" "0x00008000 A32 E\n0x00008004 A32 N\n# gap trace-on\n0x10: 0x00008080 T32 E\n"
        "0x00008082 ? NACC\n# lost bad-packet at index 12\n",
        "\x01" "Idx:13; ID:10; OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x8000:[0x800c] num_i(3) "
        "last_sz(4) (ISA=A32) E BR  <cond>)\n"
        "Idx:20; ID:10; OCSD_GEN_TRC_ELEM_TRACE_ON( [begin or filter])\n"
        "Idx:22; ID:10; OCSD_GEN_TRC_ELEM_ADDR_NACC( 0x00009000 )\n"
        "Idx:0; ID:10; OCSD_GEN_TRC_ELEM_NO_SYNC( [init-decoder])\n",
        "\x04" "Idx:30; ID:10; OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=0x8080:[0x8088] num_i(3) "
        "last_sz(2) (ISA=T32) N iBR  <cond>)\nOCSD_ERR: bad packet\n",
        "\x02" "{\"addr\":32768,\"isa\":\"A32\",\"atom\":\"E\"}\n"
        "{\"start\":\"0x8080\",\"count\":4,\"isa\":\"Thumb\",\"atoms\":\"EENE\",\"id\":16}\n"
        "{\"gap\":\"overflow\"}\n{\"nacc\":4096}\n{\"lost\":\"x\",\"index\":9}\n"
        "{\"ts\":[1,{\"a\":null}],\"s\":\"\\u0041\\n\"}\n",
    };
    int count = 0;

    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char name[32];

        snprintf(name, sizeof name, "conform-%02zu", i);
        if (!cb(ctx, name, (const uint8_t *)t[i], strlen(t[i])))
            count++;
    }
    return count;
}

int tb_fuzz_seeds(const char *full_name, tb_fuzz_seed_cb cb, void *ctx)
{
    /* A full harness reads its fast one's inputs (fuzz.h): its seeds. */
    char name[64];
    size_t n = strlen(full_name);

    if (n >= sizeof name)
        return TB_ERR_NOT_FOUND;
    memcpy(name, full_name, n + 1);
    if (n > 5 && strcmp(name + n - 5, "_full") == 0)
        name[n - 5] = '\0';
    if (strcmp(name, "conform") == 0)
        return conform_seeds(cb, ctx);
    if (strcmp(name, "gen") == 0)
        return gen_seeds(cb, ctx);
    if (strcmp(name, "etmv1") == 0)
        return etmv1_seeds(cb, ctx);
    if (strcmp(name, "etmv2") == 0)
        return etmv2_seeds(cb, ctx);
    if (strcmp(name, "roundtrip") == 0)
        return roundtrip_seeds(cb, ctx);
    if (strcmp(name, "ocsd_etmv3") == 0 || strcmp(name, "ocsd_ptm") == 0)
        return ocsd_seeds(name[5] == 'e' ? TB_PROTO_ETMV3 : TB_PROTO_PTM, name, cb, ctx);
    if (strcmp(name, "etmv3_parser") == 0 || strcmp(name, "etmv3_decoder") == 0)
        return proto_seeds(TB_PROTO_ETMV3, name, cb, ctx);
    if (strcmp(name, "ptm_parser") == 0 || strcmp(name, "ptm_decoder") == 0)
        return proto_seeds(TB_PROTO_PTM, name, cb, ctx);
    if (strcmp(name, "deformatter") == 0)
        return deformatter_seeds(cb, ctx);
    if (strcmp(name, "snapshot") == 0)
        return snapshot_seeds(cb, ctx);
    return TB_ERR_NOT_FOUND;
}

#undef SEED_CAP
