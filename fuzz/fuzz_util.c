/* Helpers shared by the fuzz harnesses (see fuzz.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

void tb_fuzz_fail(const char *harness, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "tb_fuzz: %s: ", harness);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    abort();
}

uint64_t tb_fuzz_hash(uint64_t h, const void *data, size_t len)
{
    const uint8_t *p = data;

    while (len--) {
        h ^= *p++;
        h *= 0x100000001b3ull;
    }
    return h;
}

size_t tb_fuzz_split(const uint8_t *data, size_t len)
{
    if (len == 0)
        return 0;
    return (size_t)(tb_fuzz_hash(TB_FUZZ_HASH_INIT, data, len) % (len + 1));
}

/*
 * Configuration bytes:
 *   b0[2:0] minor version (ETMv3: 0..5 mod 6; PTM: bit 0), b0[3] ETMIDR[20],
 *       b0[4] ETMIDR[16] (ETMv3: an LDM loads the PC first), b0[5] (ETMv3)
 *       the traced core is a Cortex-M3, or with b0[6] an M4: exception
 *       numbers are v7-M's (DDI0337G Table 14-8, docs/cortex-m.md)
 *   b1: [0] CA, [2:1] CtxtID size, [4:3] data trace, [5] branch broadcast,
 *       [6] data only, [7] timestamps            (ETMCR, protocol-notes 1.1)
 *   b2: [0] VMID, [1] 64-bit TS, [2] binary TS, [3] virtualisation,
 *       [4] return stack, [5] DMB/DSB waypoints  (ETMCR/ETMCCER 1.1, 1.3)
 *   b3: trace ID
 */
void tb_fuzz_config(tb_protocol proto, const uint8_t b[TB_FUZZ_CFG_BYTES],
                    tb_config *cfg)
{
    uint32_t etmcr = 0, etmidr, etmccer = 0;
    unsigned minor;

    etmcr |= (uint32_t)(b[1] & 1) << 12;
    etmcr |= (uint32_t)((b[1] >> 1) & 3) << 14;
    etmcr |= (uint32_t)((b[1] >> 3) & 3) << 2;
    etmcr |= (uint32_t)((b[1] >> 5) & 1) << 8;
    etmcr |= (uint32_t)((b[1] >> 6) & 1) << 20;
    etmcr |= (uint32_t)((b[1] >> 7) & 1) << 28;
    etmcr |= (uint32_t)(b[2] & 1) << 30;
    etmcr |= (uint32_t)((b[2] >> 4) & 1) << 29;
    etmccer |= (uint32_t)((b[2] >> 1) & 1) << 29;
    etmccer |= (uint32_t)((b[2] >> 2) & 1) << 28;
    etmccer |= (uint32_t)((b[2] >> 3) & 1) << 26;
    etmccer |= (uint32_t)((b[2] >> 5) & 1) << 24;
    if (proto == TB_PROTO_ETMV3) {
        minor = (b[0] & 7) % 6;
        etmidr = 0x410CF200u | (minor << 4) | ((uint32_t)((b[0] >> 3) & 1) << 20) |
                 ((uint32_t)((b[0] >> 4) & 1) << 16);
    } else {
        minor = b[0] & 1;
        etmidr = 0x411CF300u | (minor << 4);
    }
    if (tb_config_from_regs(cfg, etmcr, etmidr, etmccer, b[3]) < 0)
        tb_fuzz_fail("config", "tb_config_from_regs refused ETMIDR 0x%08x",
                     (unsigned)etmidr);
    if (proto == TB_PROTO_ETMV3 && ((b[0] >> 5) & 1))
        cfg->v7m = (uint8_t)(3 + ((b[0] >> 6) & 1));
}

void tb_fuzz_config_bytes(tb_protocol proto, unsigned minor, bool alt_branch,
                          uint32_t etmcr, uint32_t etmccer,
                          uint8_t b[TB_FUZZ_CFG_BYTES])
{
    b[0] = (uint8_t)((proto == TB_PROTO_ETMV3 ? minor % 6 : minor & 1) |
                     (alt_branch ? 8 : 0));
    b[1] = (uint8_t)(((etmcr >> 12) & 1) | ((etmcr >> 14) & 3) << 1 |
                     ((etmcr >> 2) & 3) << 3 | ((etmcr >> 8) & 1) << 5 |
                     ((etmcr >> 20) & 1) << 6 | ((etmcr >> 28) & 1) << 7);
    b[2] = (uint8_t)(((etmcr >> 30) & 1) | ((etmccer >> 29) & 1) << 1 |
                     ((etmccer >> 28) & 1) << 2 | ((etmccer >> 26) & 1) << 3 |
                     ((etmcr >> 29) & 1) << 4 | ((etmccer >> 24) & 1) << 5);
    b[3] = 0x10;
}

uint64_t tb_fuzz_port_count(const uint64_t *c, const char *proto, const char *variant)
{
    char name[64];

    snprintf(name, sizeof name, "%s.%s", proto, variant);
    return c[tb_speccov_variant_find(name)];
}

bool tb_fuzz_port_speccov(const char *harness, const char *proto,
                          int (*count)(const uint8_t *, size_t, uint64_t *), const uint8_t *cap,
                          size_t len, const char *const *st, size_t nst, uint64_t *c)
{
    size_t samples = len > TB_ETM_PORT_HDR_BYTES ? (len - TB_ETM_PORT_HDR_BYTES) / 4 : 0;
    uint64_t statuses = 0;
    int rc;

    memset(c, 0, TB_SPECCOV_MAX * sizeof *c);
    rc = count(cap, len, c);
    TB_FUZZ_CHECK(harness, rc == 0 || tb_fuzz_known_err(rc), "spec-coverage capture count: %d",
                  rc);
    if (rc)
        return false;
    for (size_t i = 0; i < nst; i++)
        statuses += tb_fuzz_port_count(c, proto, st[i]);
    TB_FUZZ_CHECK(harness, tb_fuzz_port_count(c, proto, "port4") +
                                   tb_fuzz_port_count(c, proto, "port8") +
                                   tb_fuzz_port_count(c, proto, "port16") == 1,
                  "spec coverage: not one port width");
    TB_FUZZ_CHECK(harness, statuses <= samples &&
                               tb_fuzz_port_count(c, proto, "pipestat.tr") <= samples,
                  "spec coverage: %llu statuses for %zu samples", (unsigned long long)statuses,
                  samples);
    return true;
}

bool tb_fuzz_port_cfg_eq(const tb_etm_port_config *a, const tb_etm_port_config *b)
{
    return a->minor == b->minor && a->port_width == b->port_width &&
           a->data_trace == b->data_trace && a->cycle_accurate == b->cycle_accurate &&
           a->branch_output == b->branch_output && a->ctxid_bytes == b->ctxid_bytes &&
           a->vector_base == b->vector_base && a->phantoms == b->phantoms;
}

unsigned tb_fuzz_port_cfg_hash(const tb_etm_port_config *k)
{
    return (unsigned)(k->port_width + 3u * k->minor + 7u * k->cycle_accurate +
                      11u * k->branch_output + 13u * k->ctxid_bytes + 17u * k->data_trace +
                      (k->vector_base ? 19u : 0u) + 23u * k->phantoms);
}

bool tb_fuzz_etmv1_config(const uint8_t b[TB_FUZZ_CFG_BYTES],
                          tb_etmv1_config *cfg, tb_config *gcfg)
{
    static const uint8_t cid[4] = {0, 1, 2, 4};
    uint32_t etmcr;

    tb_etmv1_config_init(cfg);
    cfg->port_width = (uint8_t)(4u << ((b[0] & 3) % 3));
    cfg->minor = (uint8_t)((b[0] >> 2) & 3);
    cfg->cycle_accurate = (b[0] >> 4) & 1;
    cfg->branch_output = (b[0] >> 5) & 1;
    cfg->ctxid_bytes = cid[(b[0] >> 6) & 3];
    if (cfg->ctxid_bytes)
        cfg->minor |= 2; /* context IDs from ETMv1.2 (IHI0014Q 5.6.3) */
    cfg->vector_base = (b[1] & 4) ? 0xFFFF0000u : 0;
    cfg->data_trace = b[1] & 3; /* ETMCR[3:2] */
    if (tb_etmv1_config_check(cfg) < 0)
        tb_fuzz_fail("config", "ETMv1 configuration refused");
    etmcr = tb_etmv1_etmcr(cfg);
    if (tb_config_from_etmv1(gcfg, etmcr, cfg->minor, cfg->vector_base) < 0)
        tb_fuzz_fail("config", "tb_config_from_etmv1 refused ETMCR 0x%08x",
                     (unsigned)etmcr);
    return (b[1] >> 3) & 1;
}

void tb_fuzz_etmv1_config_bytes(const tb_etmv1_config *cfg, bool own_header,
                                uint8_t b[TB_FUZZ_CFG_BYTES])
{
    b[0] = (uint8_t)((cfg->port_width == 4 ? 0 : cfg->port_width == 8 ? 1 : 2) |
                     (cfg->minor & 3) << 2 | (cfg->cycle_accurate ? 1 : 0) << 4 |
                     (cfg->branch_output ? 1 : 0) << 5 |
                     (cfg->ctxid_bytes == 4 ? 3 : cfg->ctxid_bytes) << 6);
    b[1] = (uint8_t)((cfg->data_trace & 3) | (cfg->vector_base ? 4 : 0) |
                     (own_header ? 8 : 0));
    b[2] = 0;
    b[3] = 0;
}

/* ETMv2 (fuzz.h): as ETMv1 without the minor version (ETMv2.0 only). */
bool tb_fuzz_etmv2_config(const uint8_t b[TB_FUZZ_CFG_BYTES], tb_etmv2_config *cfg,
                          tb_config *gcfg)
{
    static const uint8_t cid[4] = {0, 1, 2, 4};

    tb_etmv2_config_init(cfg);
    cfg->port_width = (uint8_t)(4u << ((b[0] & 3) % 3));
    cfg->cycle_accurate = (b[0] >> 4) & 1;
    cfg->branch_output = (b[0] >> 5) & 1;
    cfg->ctxid_bytes = cid[(b[0] >> 6) & 3];
    cfg->vector_base = (b[1] & 4) ? 0xFFFF0000u : 0;
    cfg->data_trace = b[1] & 3; /* ETMCR[3:2], as ETMv1's */
    if (tb_etmv2_config_check(cfg) < 0)
        tb_fuzz_fail("config", "ETMv2 configuration refused");
    if (tb_config_from_etmv2(gcfg, tb_etmv2_etmcr(cfg), 0, cfg->vector_base) < 0)
        tb_fuzz_fail("config", "tb_config_from_etmv2 refused ETMCR 0x%08x",
                     (unsigned)tb_etmv2_etmcr(cfg));
    return (b[1] >> 3) & 1;
}

void tb_fuzz_etmv2_config_bytes(const tb_etmv2_config *cfg, bool own_header,
                                uint8_t b[TB_FUZZ_CFG_BYTES])
{
    b[0] = (uint8_t)((cfg->port_width == 4 ? 0 : cfg->port_width == 8 ? 1 : 2) |
                     (cfg->cycle_accurate ? 1 : 0) << 4 | (cfg->branch_output ? 1 : 0) << 5 |
                     (cfg->ctxid_bytes == 4 ? 3 : cfg->ctxid_bytes) << 6);
    b[1] = (uint8_t)((cfg->data_trace & 3) | (cfg->vector_base ? 4 : 0) |
                     (own_header ? 8 : 0));
    b[2] = 0;
    b[3] = 0;
}

/* ------------------------------------------------------------------ */
/* The fixed image: code made of instruction templates that reach every
 * waypoint class of protocol-notes 3.12 (direct and indirect branches,
 * with and without link, ISB, DMB/DSB, exception returns, state changes
 * through BLX), conditional instructions and IT blocks, mixed with
 * random words so undefined and odd encodings show up too, and loads,
 * stores, LDM/STM for data trace.  Branch
 * targets stay mostly inside the regions so decodes run long. */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static uint32_t arm_word(uint64_t *s, uint32_t pc)
{
    uint32_t r = (uint32_t)rng_next(s);
    uint32_t cond = (r >> 28) % 14; /* EQ..LE: conditional */
    int32_t off = (int32_t)((r >> 4) % 128) - 64;      /* words */

    (void)pc;
    switch (rng_next(s) % 24) {
    case 0: case 1: case 2: case 3: case 4:
        return 0xE0800000u | (r & 0x0000FFFFu) | (((r >> 16) % 15) << 16); /* ADD, Rd from r */
    case 5: case 6:
        return (cond << 28) | 0x01A00000u | (r & 0x0000F00Fu & 0xEFFFu); /* MOV<c> */
    case 7: case 8: case 9:
        return 0xEA000000u | ((uint32_t)off & 0xFFFFFFu);          /* B */
    case 10: case 11:
        return (cond << 28) | 0x0A000000u | ((uint32_t)off & 0xFFFFFFu); /* B<c> */
    case 12:
        return 0xEB000000u | ((uint32_t)off & 0xFFFFFFu);          /* BL */
    case 13:
        return 0xE12FFF1Eu;                                        /* BX lr */
    case 14:
        return 0xE12FFF30u | (r & 7);                               /* BLX rN */
    case 15:
        return 0xE8BD8000u | (r & 0xFF);                            /* POP {..,pc} */
    case 16:
        return 0xE49DF004u;                                        /* LDR pc,[sp],#4 */
    case 17:
        return (r & 1) ? 0xE25EF004u : 0xE1B0F00Eu;                /* SUBS pc,lr / MOVS pc,lr */
    case 18:
        return (r & 1) ? 0xF57FF06Fu : ((r & 2) ? 0xF57FF05Fu : 0xF57FF04Fu); /* ISB/DMB/DSB */
    case 19:
        return 0xEF000000u | (r & 0xFFFF);                          /* SVC */
    case 20: {
        /* BLX imm into the Thumb region. */
        uint32_t target = TB_FUZZ_THUMB_BASE + ((r >> 8) % (TB_FUZZ_CODE_BYTES / 2)) * 2;
        int32_t d = (int32_t)(target - (pc + 8));
        return 0xFA000000u | (((uint32_t)d & 2) << 23) | (((uint32_t)d >> 2) & 0xFFFFFFu);
    }
    case 21:
        return (cond << 28) | 0x012FFF10u | (r & 15);              /* BX<c> rN */
    default:
        /* Anything; a quarter of it single loads/stores and a quarter
         * LDM/STM without the PC, for ETMv3 data trace (IHI0014Q 7.4:
         * its data packets need data instructions to belong to).  From
         * r's own bits: the image stays the same otherwise. */
        if (((r >> 24) & 3) == 0)
            return 0xE4000000u | (r & 0x01FF0FFFu) | (((r >> 12) & 0xFu) % 15) << 12;
        if (((r >> 24) & 3) == 1)
            return 0xE8000000u | (r & 0x01FF7FFFu);
        return r;
    }
}

/* Writes one Thumb instruction; returns its size (2 or 4). */
static unsigned thumb_insn(uint64_t *s, uint32_t pc, uint8_t *p, size_t room)
{
    uint32_t r = (uint32_t)rng_next(s);
    unsigned k = (unsigned)(rng_next(s) % 24);

    if (room < 4 && k >= 16)
        k = 0;
    switch (k) {
    case 0: case 1: case 2: case 3:
        put16(p, (uint16_t)(0x1800u | (r & 0x1FF)));                /* ADDS */
        return 2;
    case 4: case 5:
        put16(p, (uint16_t)(0xD000u | (((r >> 8) % 14) << 8) | (r & 0xFF))); /* B<c> */
        return 2;
    case 6:
        put16(p, (uint16_t)(0xE000u | ((r % 128 - 64) & 0x7FF)));  /* B */
        return 2;
    case 7:
        put16(p, 0x4770);                                           /* BX lr */
        return 2;
    case 8:
        put16(p, (uint16_t)(0x4780u | ((r & 7) << 3)));             /* BLX rN */
        return 2;
    case 9:
        put16(p, (uint16_t)(0xBD00u | (r & 0xFF)));                 /* POP {..,pc} */
        return 2;
    case 10:
        put16(p, (uint16_t)(0xB100u | (r & 0xAFF)));                /* CBZ/CBNZ */
        return 2;
    case 11: {
        unsigned mask = 1 + (r & 7) * 2;                            /* IT, 1-4 slots */
        put16(p, (uint16_t)(0xBF00u | (((r >> 4) % 14) << 4) | (mask & 0xF)));
        return 2;
    }
    case 12:
        put16(p, 0xBF00);                                           /* NOP */
        return 2;
    case 13: case 14: case 15:
        /* Anything; a quarter of it 16-bit loads/stores (0x5000-0x9FFF:
         * register offset, immediate, halfword, SP-relative) for data
         * trace, from r's own bits. */
        if (((r >> 16) & 3) == 0)
            put16(p, (uint16_t)(0x5000u + (r & 0xFFFFu) % 0x5000u));
        else
            put16(p, (uint16_t)r);
        return 2;
    case 16: case 17: {
        /* BL with a short offset. */
        int32_t d = ((int32_t)(r % 256) - 128) * 2;
        uint32_t u = (uint32_t)d >> 1;
        uint32_t sgn = (d < 0), i1 = !(((u >> 22) & 1) ^ sgn), i2 = !(((u >> 21) & 1) ^ sgn);
        put16(p, (uint16_t)(0xF000u | (sgn << 10) | ((u >> 11) & 0x3FF)));
        put16(p + 2, (uint16_t)(0xD000u | (i1 << 13) | (i2 << 11) | (u & 0x7FF)));
        return 4;
    }
    case 18: {
        /* BLX imm into the ARM region (J1=J2=1 for a small positive or
         * negative offset; imm10H/imm10L carry the rest). */
        uint32_t target = TB_FUZZ_ARM_BASE + ((r >> 8) % (TB_FUZZ_CODE_BYTES / 4)) * 4;
        int32_t d = (int32_t)(target - ((pc + 4) & ~3u));
        uint32_t u = (uint32_t)d >> 1, sgn = d < 0;
        uint32_t i1 = !(((u >> 22) & 1) ^ sgn), i2 = !(((u >> 21) & 1) ^ sgn);
        put16(p, (uint16_t)(0xF000u | (sgn << 10) | ((u >> 11) & 0x3FF)));
        put16(p + 2, (uint16_t)(0xC000u | (i1 << 13) | (i2 << 11) | (u & 0x7FE)));
        return 4;
    }
    case 19:
        put16(p, 0xF3BF); put16(p + 2, 0x8F6F);                     /* ISB */
        return 4;
    case 20:
        put16(p, 0xF8DD); put16(p + 2, (uint16_t)(0xF000u | (r & 0xFF))); /* LDR.W pc,[sp,#i] */
        return 4;
    case 21:
        put16(p, 0xF3DE); put16(p + 2, 0x8F04);                     /* SUBS pc,lr,#4 */
        return 4;
    default:
        put16(p, (uint16_t)(0xE800u | (r & 0x7FF)));                /* 32-bit prefix */
        put16(p + 2, (uint16_t)(r >> 16));
        return 4;
    }
}

static tb_memimage *build_image(void)
{
    static uint8_t arm[TB_FUZZ_CODE_BYTES], thumb[TB_FUZZ_CODE_BYTES];
    static uint8_t vec[32], top[0x1000];
    static uint8_t long_arm[TB_FUZZ_LONG_BYTES], long_thumb[TB_FUZZ_LONG_BYTES];
    uint64_t s = 0x7472616365626e63ull; /* fixed: the image never changes */
    tb_memimage *m = tb_memimage_new();
    size_t i;

    if (!m)
        return NULL;
    /* Vectors: B to the ARM region. */
    for (i = 0; i < sizeof vec; i += 4) {
        uint32_t target = TB_FUZZ_ARM_BASE + (uint32_t)i * 64;
        put32(vec + i, 0xEA000000u | (((target - (uint32_t)i - 8) >> 2) & 0xFFFFFFu));
    }
    for (i = 0; i < sizeof arm; i += 4)
        put32(arm + i, arm_word(&s, TB_FUZZ_ARM_BASE + (uint32_t)i));
    for (i = 0; i < sizeof thumb;)
        i += thumb_insn(&s, TB_FUZZ_THUMB_BASE + (uint32_t)i, thumb + i,
                        sizeof thumb - i);
    for (i = 0; i < sizeof top; i++)
        top[i] = (uint8_t)rng_next(&s);
    for (i = 0; i + 4 < sizeof long_arm; i += 4)
        put32(long_arm + i, 0xE2800001u | (uint32_t)(i % 5) << 12); /* ADD rN, r0, #1 */
    put32(long_arm + i, 0xE12FFF1Eu);                               /* BX lr */
    for (i = 0; i + 2 < sizeof long_thumb; i += 2)
        put16(long_thumb + i, (uint16_t)(0x3001u | (i % 5) << 8));  /* ADDS rN, #1 */
    put16(long_thumb + i, 0x4770);                                  /* BX lr */
    if (tb_memimage_add(m, TB_FUZZ_VEC_BASE, vec, sizeof vec) < 0 ||
        tb_memimage_add(m, TB_FUZZ_ARM_BASE, arm, sizeof arm) < 0 ||
        tb_memimage_add(m, TB_FUZZ_THUMB_BASE, thumb, sizeof thumb) < 0 ||
        tb_memimage_add(m, TB_FUZZ_TOP_BASE, top, sizeof top) < 0 ||
        tb_memimage_add(m, TB_FUZZ_LONG_ARM_BASE, long_arm, sizeof long_arm) < 0 ||
        tb_memimage_add(m, TB_FUZZ_LONG_THUMB_BASE, long_thumb, sizeof long_thumb) < 0) {
        tb_memimage_free(m);
        return NULL;
    }
    return m;
}

const tb_memimage *tb_fuzz_image(void)
{
    static tb_memimage *image;

    if (!image) {
        image = build_image();
        if (!image)
            tb_fuzz_fail("image", "cannot build the fixed memory image");
    }
    return image;
}

/* ------------------------------------------------------------------ */
/* The image of the OpenCSD differential harnesses (fuzz_diff_ocsd.c):
 * tb_fuzz_image()'s layout and kinds of waypoint, but only encodings the
 * architecture defines (ARMv7-A ARM), entered only at instruction starts.
 * Random words there, and branches into the second halfword of a 32-bit
 * Thumb instruction, are often UNDEFINED or UNPREDICTABLE writes of the
 * PC (LDRD pc, LDRB pc, data processing into the PC with a register
 * shift, RFE with wrong should-be bits, branches inside IT blocks), on
 * which two classifiers may rightly disagree, so the comparison would say
 * nothing.  Registers are r0-r12 wherever a PC would make the encoding
 * UNPREDICTABLE; IT blocks hold only plain instructions; every direct
 * branch targets an instruction start (Thumb: laid out first, branches
 * patched after). */

/* Thumb instruction starts of the OpenCSD image, by halfword. */
static bool ocsd_thumb_start[TB_FUZZ_CODE_BYTES / 2];

/* A Thumb instruction start near byte offset want (the first at or
 * after it, else the last before it). */
static uint32_t ocsd_thumb_target(uint32_t want)
{
    uint32_t h = (want % TB_FUZZ_CODE_BYTES) / 2, k;

    for (k = h; k < TB_FUZZ_CODE_BYTES / 2; k++)
        if (ocsd_thumb_start[k])
            return TB_FUZZ_THUMB_BASE + 2 * k;
    for (k = h; k-- > 0;)
        if (ocsd_thumb_start[k])
            return TB_FUZZ_THUMB_BASE + 2 * k;
    return TB_FUZZ_THUMB_BASE;
}

static uint32_t clean_arm_word(uint64_t *s, uint32_t pc)
{
    uint32_t r = (uint32_t)rng_next(s);
    uint32_t cond = (r >> 28) % 14;
    uint32_t rd = (r >> 12) % 13, rn = (r >> 16) % 13;
    int32_t off = (int32_t)((r >> 4) % 128) - 64;

    switch (rng_next(s) % 26) {
    case 0: case 1: case 2: case 3:
        return 0xE2800000u | rn << 16 | rd << 12 | (r & 0xFFF);         /* ADD imm */
    case 4: case 5:
        return (cond << 28) | 0x03A00000u | rd << 12 | (r & 0xFF);      /* MOV<c> imm */
    case 6:
        return 0xE1A00000u | rd << 12 | (r % 13);                        /* MOV reg */
    case 7: case 8: case 9:
        return 0xEA000000u | ((uint32_t)off & 0xFFFFFFu);                /* B */
    case 10: case 11:
        return (cond << 28) | 0x0A000000u | ((uint32_t)off & 0xFFFFFFu); /* B<c> */
    case 12:
        return 0xEB000000u | ((uint32_t)off & 0xFFFFFFu);                /* BL */
    case 13:
        return 0xE12FFF1Eu;                                              /* BX lr */
    case 14:
        return 0xE12FFF30u | (r & 7);                                    /* BLX rN */
    case 15:
        return 0xE8BD8000u | (r & 0xFF);                                 /* POP {..,pc} */
    case 16:
        return 0xE49DF004u;                                              /* LDR pc,[sp],#4 */
    case 17:
        return (r & 1) ? 0xE25EF004u : 0xE1B0F00Eu;                      /* SUBS/MOVS pc,lr */
    case 18:
        return (r & 1) ? 0xF57FF06Fu : ((r & 2) ? 0xF57FF05Fu : 0xF57FF04Fu); /* ISB/DMB/DSB */
    case 19:
        return 0xEF000000u | (r & 0xFFFF);                               /* SVC */
    case 20: {
        /* BLX imm to a Thumb instruction start. */
        uint32_t target = ocsd_thumb_target((r >> 8) % TB_FUZZ_CODE_BYTES);
        int32_t d = (int32_t)(target - (pc + 8));
        return 0xFA000000u | (((uint32_t)d & 2) << 23) | (((uint32_t)d >> 2) & 0xFFFFFFu);
    }
    case 21:
        return (cond << 28) | 0x012FFF10u | (r % 13);                    /* BX<c> rN */
    case 22: case 23:
        return ((r >> 8) & 1 ? 0xE5900000u : 0xE5800000u) | rn << 16 | rd << 12 |
               (r & 0xFFC);                                              /* LDR/STR imm */
    case 24:
        return ((r >> 9) & 1 ? 0xE8900000u : 0xE8800000u) | rn << 16 |
               ((r & 0x1FFF) | 1u);                                      /* LDM/STM, no pc */
    default:
        return (cond << 28) | 0x01500000u | rn << 16 | (r % 13);         /* CMP<c> reg */
    }
}

/* Thumb direct branches wait for their targets (ocsd_patch_branch). */
enum { OB_BCOND = 1, OB_B, OB_CBZ, OB_BL, OB_BLX };

/* Writes one Thumb instruction, or an IT block of plain instructions, at
 * byte offset off; returns the bytes written.  A direct branch is
 * written as its kind in *branch for the second pass. */
static unsigned clean_thumb_insn(uint64_t *s, uint8_t *p, size_t room, uint8_t *branch)
{
    uint32_t r = (uint32_t)rng_next(s);
    unsigned k = (unsigned)(rng_next(s) % 24), n, i;

    *branch = 0;
    if (room < 10 && k >= 11)
        k = 0;
    switch (k) {
    case 0: case 1: case 2: case 3:
        put16(p, (uint16_t)(0x1800u | (r & 0x1FF)));                     /* ADDS */
        return 2;
    case 4: case 5:
        put16(p, (uint16_t)(0xD000u | (((r >> 8) % 14) << 8)));          /* B<c> */
        *branch = OB_BCOND;
        return 2;
    case 6:
        put16(p, 0xE000u);                                               /* B */
        *branch = OB_B;
        return 2;
    case 7:
        put16(p, 0x4770);                                                /* BX lr */
        return 2;
    case 8:
        put16(p, (uint16_t)(0x4780u | ((r & 7) << 3)));                  /* BLX rN */
        return 2;
    case 9:
        put16(p, (uint16_t)(0xBD00u | (r & 0xFF)));                      /* POP {..,pc} */
        return 2;
    case 10:
        put16(p, (uint16_t)(0xB100u | (r & 0x807)));                     /* CBZ/CBNZ */
        *branch = OB_CBZ;
        return 2;
    case 11: {
        /* IT with 1-4 slots, each a plain ADDS (A8.8.54: a branch in an
         * IT block other than last is UNPREDICTABLE). */
        static const uint8_t masks[4] = {0x8, 0x4, 0x2, 0x1};
        n = 1 + (r & 3);
        put16(p, (uint16_t)(0xBF00u | (((r >> 4) % 14) << 4) | masks[n - 1]));
        for (i = 1; i <= n; i++)
            put16(p + 2 * i, (uint16_t)(0x1800u | ((r >> (8 + i)) & 0x1FF)));
        return 2 + 2 * n;
    }
    case 12:
        put16(p, 0xBF00);                                                /* NOP */
        return 2;
    case 13: case 14:
        put16(p, (uint16_t)(((r & 0x800) ? 0x6000u : 0x6800u) | (r & 0x7FF))); /* STR/LDR */
        return 2;
    case 15: case 16:
        put16(p, 0xF000u); put16(p + 2, 0xD000u);                        /* BL */
        *branch = OB_BL;
        return 4;
    case 17:
        put16(p, 0xF000u); put16(p + 2, 0xC000u);                        /* BLX imm */
        *branch = OB_BLX;
        return 4;
    case 18:
        put16(p, 0xF3BF); put16(p + 2, 0x8F6F);                          /* ISB */
        return 4;
    case 19:
        put16(p, 0xF8DD); put16(p + 2, (uint16_t)(0xF000u | (r & 0xFC))); /* LDR.W pc,[sp,#i] */
        return 4;
    case 20:
        put16(p, 0xF3DE); put16(p + 2, 0x8F04);                          /* SUBS pc,lr,#4 */
        return 4;
    default:
        put16(p, 0xF04F);                                                /* MOV.W rN,#imm */
        put16(p + 2, (uint16_t)(((r % 13) << 8) | (r >> 24)));
        return 4;
    }
}

/* BL/BLX T1/T2 (A8.8.25): S, J1 = NOT(I1 XOR S), J2 = NOT(I2 XOR S). */
static void put_bl(uint8_t *p, int32_t d, uint16_t second)
{
    uint32_t u = (uint32_t)d >> 1, sgn = d < 0;
    uint32_t j1 = !(((u >> 22) & 1) ^ sgn), j2 = !(((u >> 21) & 1) ^ sgn);

    put16(p, (uint16_t)(0xF000u | (sgn << 10) | ((u >> 11) & 0x3FF)));
    put16(p + 2, (uint16_t)(second | (j1 << 13) | (j2 << 11) | (u & 0x7FF)));
}

/* The second pass: a target at an instruction start within the
 * branch's reach (ARMv7-A ARM A8.8.18, A8.8.29, A8.8.25). */
static void ocsd_patch_branch(uint64_t *s, uint8_t *thumb, uint32_t off, uint8_t kind)
{
    const uint32_t pc = TB_FUZZ_THUMB_BASE + off;
    uint32_t r = (uint32_t)rng_next(s), target;
    uint8_t *p = thumb + off;
    int32_t d;

    switch (kind) {
    case OB_CBZ:
        /* Forward 4..130 bytes from the instruction. */
        target = ocsd_thumb_target(off + 4 + (r % 64) * 2);
        d = (int32_t)(target - (pc + 4));
        if (d < 0 || d > 126) {
            put16(p, 0xBF00); /* no start in reach: a NOP */
            return;
        }
        put16(p, (uint16_t)((p[0] | p[1] << 8) | ((d >> 6) & 1) << 9 | ((d >> 1) & 0x1F) << 3));
        return;
    case OB_BCOND:
    case OB_B:
        target = ocsd_thumb_target((uint32_t)((int32_t)off + ((int32_t)(r % 120) - 60) * 2));
        d = (int32_t)(target - (pc + 4));
        if (kind == OB_BCOND)
            put16(p, (uint16_t)((p[0] | p[1] << 8) | (((uint32_t)d >> 1) & 0xFF)));
        else
            put16(p, (uint16_t)(0xE000u | (((uint32_t)d >> 1) & 0x7FF)));
        return;
    case OB_BL:
        target = ocsd_thumb_target((uint32_t)((int32_t)off + ((int32_t)(r % 256) - 128) * 2));
        put_bl(p, (int32_t)(target - (pc + 4)), 0xD000u);
        return;
    default:
        /* BLX imm: to an ARM word, from Align(PC, 4). */
        target = TB_FUZZ_ARM_BASE + ((r >> 8) % (TB_FUZZ_CODE_BYTES / 4)) * 4;
        d = (int32_t)(target - ((pc + 4) & ~3u));
        put_bl(p, d, 0xC000u);
        p[2] &= 0xFE; /* H = 0 */
        return;
    }
}

static tb_memimage *build_ocsd_image(void)
{
    static uint8_t arm[TB_FUZZ_CODE_BYTES], thumb[TB_FUZZ_CODE_BYTES];
    static uint8_t kinds[TB_FUZZ_CODE_BYTES / 2];
    static uint8_t vec[32], top[0x1000];
    static uint8_t long_arm[TB_FUZZ_LONG_BYTES], long_thumb[TB_FUZZ_LONG_BYTES];
    uint64_t s = 0x6f6373642d696d67ull;
    tb_memimage *m = tb_memimage_new();
    size_t i;

    if (!m)
        return NULL;
    for (i = 0; i < sizeof vec; i += 4) {
        uint32_t target = TB_FUZZ_ARM_BASE + (uint32_t)i * 64;
        put32(vec + i, 0xEA000000u | (((target - (uint32_t)i - 8) >> 2) & 0xFFFFFFu));
    }
    for (i = 0; i < sizeof thumb;) {
        ocsd_thumb_start[i / 2] = true;
        i += clean_thumb_insn(&s, thumb + i, sizeof thumb - i, &kinds[i / 2]);
    }
    for (i = 0; i < sizeof thumb; i += 2)
        if (kinds[i / 2])
            ocsd_patch_branch(&s, thumb, (uint32_t)i, kinds[i / 2]);
    for (i = 0; i < sizeof arm; i += 4)
        put32(arm + i, clean_arm_word(&s, TB_FUZZ_ARM_BASE + (uint32_t)i));
    /* The top page: straight ARM code up to 2^32, its last word a B back
     * to the page start (ranges that end at 2^32, never past it). */
    for (i = 0; i + 4 < sizeof top; i += 4)
        put32(top + i, 0xE2800001u | (uint32_t)(i % 5) << 12);
    put32(top + i, 0xEA000000u | ((uint32_t)(-(int32_t)(i + 8) / 4) & 0xFFFFFFu));
    for (i = 0; i + 4 < sizeof long_arm; i += 4)
        put32(long_arm + i, 0xE2800001u | (uint32_t)(i % 5) << 12);
    put32(long_arm + i, 0xE12FFF1Eu);
    for (i = 0; i + 2 < sizeof long_thumb; i += 2)
        put16(long_thumb + i, (uint16_t)(0x3001u | (i % 5) << 8));
    put16(long_thumb + i, 0x4770);
    if (tb_memimage_add(m, TB_FUZZ_VEC_BASE, vec, sizeof vec) < 0 ||
        tb_memimage_add(m, TB_FUZZ_ARM_BASE, arm, sizeof arm) < 0 ||
        tb_memimage_add(m, TB_FUZZ_THUMB_BASE, thumb, sizeof thumb) < 0 ||
        tb_memimage_add(m, TB_FUZZ_TOP_BASE, top, sizeof top) < 0 ||
        tb_memimage_add(m, TB_FUZZ_LONG_ARM_BASE, long_arm, sizeof long_arm) < 0 ||
        tb_memimage_add(m, TB_FUZZ_LONG_THUMB_BASE, long_thumb, sizeof long_thumb) < 0) {
        tb_memimage_free(m);
        return NULL;
    }
    return m;
}

const tb_memimage *tb_fuzz_ocsd_image(void)
{
    static tb_memimage *image;

    if (!image) {
        image = build_ocsd_image();
        if (!image)
            tb_fuzz_fail("image", "cannot build the OpenCSD harnesses' memory image");
    }
    return image;
}

void tb_fuzz_ocsd_config(tb_protocol proto, const uint8_t b[TB_FUZZ_CFG_BYTES], tb_config *cfg)
{
    uint32_t etmcr, etmccer;

    tb_fuzz_config(proto, b, cfg);
    /* OpenCSD decodes no ETMv3 trace with data trace configured
     * (docs/opencsd-bugs.md 8); a PTM that traces with its return stack
     * (ETMCR[29]) has one (ETMCCER[23]; OpenCSD uses it only then, and
     * without one ETMCR[29] reads as zero). */
    etmcr = cfg->etmcr & ~(0xCu | (1u << 20));
    etmccer = cfg->etmccer;
    if (proto == TB_PROTO_PTM && (etmcr >> 29) & 1)
        etmccer |= 1u << 23;
    if (tb_config_from_regs(cfg, etmcr, cfg->etmidr, etmccer, cfg->traceidr) < 0)
        tb_fuzz_fail("config", "tb_config_from_regs refused the OpenCSD harness registers");
}

bool tb_fuzz_ocsd_insn_start(uint32_t addr, tb_isa isa)
{
    /* Each region holds code of one instruction set only (the vectors,
     * ARM, top and long ARM regions ARM; the Thumb and long Thumb regions
     * Thumb): read in the other one, its bytes are no instructions. */
    const bool arm_code = addr < 32 ||
                          (addr >= TB_FUZZ_ARM_BASE && addr < TB_FUZZ_ARM_BASE + TB_FUZZ_CODE_BYTES) ||
                          (addr >= TB_FUZZ_LONG_ARM_BASE &&
                           addr < TB_FUZZ_LONG_ARM_BASE + TB_FUZZ_LONG_BYTES) ||
                          addr >= TB_FUZZ_TOP_BASE;
    const bool thumb_code = (addr >= TB_FUZZ_THUMB_BASE &&
                             addr < TB_FUZZ_THUMB_BASE + TB_FUZZ_CODE_BYTES) ||
                            (addr >= TB_FUZZ_LONG_THUMB_BASE &&
                             addr < TB_FUZZ_LONG_THUMB_BASE + TB_FUZZ_LONG_BYTES);

    (void)tb_fuzz_ocsd_image(); /* lays the Thumb region out */
    if (isa == TB_ISA_ARM)
        return (addr & 3) == 0 && !thumb_code;
    if (arm_code)
        return false;
    if (addr >= TB_FUZZ_THUMB_BASE && addr < TB_FUZZ_THUMB_BASE + TB_FUZZ_CODE_BYTES)
        return !(addr & 1) && ocsd_thumb_start[(addr - TB_FUZZ_THUMB_BASE) / 2];
    return !(addr & 1); /* long Thumb code, or nothing there: every halfword */
}

/* ------------------------------------------------------------------ */
/* Objects made once (fuzz.h). */

#define OBJ_SLOTS 64 /* per protocol; direct-mapped by the bytes' hash */

typedef struct obj_slot {
    bool used;
    uint8_t key[TB_FUZZ_CFG_BYTES];
    tb_fuzz_objs o;
} obj_slot;

const tb_fuzz_objs *tb_fuzz_objects(tb_protocol proto, const uint8_t b[TB_FUZZ_CFG_BYTES],
                                    bool want_decoder)
{
    static obj_slot slots[2][OBJ_SLOTS];
    obj_slot *s = &slots[proto == TB_PROTO_PTM]
                        [tb_fuzz_hash(TB_FUZZ_HASH_INIT, b, TB_FUZZ_CFG_BYTES) % OBJ_SLOTS];

    if (proto != TB_PROTO_ETMV3 && proto != TB_PROTO_PTM)
        tb_fuzz_fail("objects", "no cached objects for protocol %d", (int)proto);
    if (!s->used || memcmp(s->key, b, TB_FUZZ_CFG_BYTES) != 0) {
        tb_parser_free(s->o.parser);
        tb_decoder_free(s->o.decoder);
        memset(s, 0, sizeof *s);
        tb_fuzz_config(proto, b, &s->o.cfg);
        s->o.parser = tb_parser_new(&s->o.cfg);
        if (!s->o.parser)
            tb_fuzz_fail("objects", "tb_parser_new failed");
        memcpy(s->key, b, TB_FUZZ_CFG_BYTES);
        s->used = true;
    } else {
        tb_parser_reset(s->o.parser);
        if (s->o.decoder)
            tb_decoder_reset(s->o.decoder);
    }
    if (want_decoder && !s->o.decoder) {
        s->o.decoder = tb_decoder_new(&s->o.cfg, tb_fuzz_image());
        if (!s->o.decoder)
            tb_fuzz_fail("objects", "tb_decoder_new failed");
    }
    return &s->o;
}

/* ------------------------------------------------------------------ */
/* Shared checks (fuzz.h). */

TB_FUZZ_NOCOV void tb_fuzz_check_speccov(const char *harness, int k, const tb_speccov_id *ids,
                            const char *prefix)
{
    static bool named[TB_SPECCOV_MAX];

    TB_FUZZ_CHECK(harness, k >= 0, "spec-coverage classifier: %d", k);
    for (int i = 0; i < k; i++) {
        const char *name = ids[i] < TB_SPECCOV_MAX ? tb_speccov_variant_name(ids[i]) : NULL;

        TB_FUZZ_CHECK(harness, name != NULL, "spec-coverage variant %u has no name",
                      (unsigned)ids[i]);
        if (!named[ids[i]]) {
            TB_FUZZ_CHECK(harness, tb_speccov_variant_find(name) == (int)ids[i],
                          "spec-coverage variant %u: its name '%s' finds another", (unsigned)ids[i],
                          name);
            named[ids[i]] = true;
        }
        TB_FUZZ_CHECK(harness, !prefix || strncmp(name, prefix, strlen(prefix)) == 0,
                      "spec-coverage variant %s for a packet of %s", name, prefix);
    }
}

TB_FUZZ_NOCOV bool tb_fuzz_known_err(int err)
{
    static signed char known[256]; /* 0 unknown yet, 1 known, -1 not */

    if (err >= 0)
        return false;
    if (err < -255)
        return strcmp(tb_err_str(err), "unknown error") != 0;
    if (!known[-err])
        known[-err] = strcmp(tb_err_str(err), "unknown error") != 0 ? 1 : -1;
    return known[-err] > 0;
}

#define DIFF(f)                                                                 \
    do {                                                                        \
        if (memcmp(&a->f, &b->f, sizeof a->f) != 0)                             \
            return #f;                                                          \
    } while (0)

const char *tb_fuzz_packet_diff(const tb_packet *a, const tb_packet *b)
{
    DIFF(kind); DIFF(protocol); DIFF(index); DIFF(size); DIFF(bytes); DIFF(count);
    DIFF(err); DIFF(atom_count); DIFF(w_count); DIFF(seq_len); DIFF(seq);
    DIFF(phdr_format); DIFF(addr); DIFF(addr_bits); DIFF(isa); DIFF(isa_changed);
    DIFF(addr_known); DIFF(has_exc); DIFF(exc_cancel); DIFF(exc_num);
    DIFF(exc_resume); DIFF(exc_bytes); DIFF(legacy_exc); DIFF(ns); DIFF(hyp);
    DIFF(altisa); DIFF(ns_valid); DIFF(hyp_valid); DIFF(has_cc); DIFF(cc); DIFF(ts);
    DIFF(ts_bits); DIFF(has_ctxid); DIFF(context_id); DIFF(vmid); DIFF(reason);
    DIFF(jazelle); DIFF(lsip); DIFF(lsip_addr); DIFF(lsip_isa); DIFF(has_data_addr);
    DIFF(data_addr); DIFF(data_addr_bits); DIFF(data_be); DIFF(data_size);
    DIFF(data_value); DIFF(data_tag); DIFF(sync_ev);
    return NULL;
}

const char *tb_fuzz_element_diff(const tb_element *a, const tb_element *b, bool with_index)
{
    DIFF(kind);
    if (with_index)
        DIFF(index);
    DIFF(reason); DIFF(isa); DIFF(start); DIFF(end);
    DIFF(count); DIFF(last_addr); DIFF(last_size); DIFF(last_wp); DIFF(last_atom);
    DIFF(atom_bits); DIFF(exc_num); DIFF(pref_return); DIFF(cancelled); DIFF(ts);
    DIFF(has_cc); DIFF(cc); DIFF(context_id); DIFF(vmid); DIFF(ns); DIFF(hyp);
    DIFF(err);
    /* DATA (they share space with exc_num and ts: compared by name too). */
    DIFF(data_size); DIFF(data_flags); DIFF(data_addr); DIFF(data_value);
    return NULL;
}

#undef DIFF

void tb_fuzz_vec_push(tb_fuzz_vec *r, const void *item)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 256;
        void *v = realloc(r->v, cap * r->size);

        if (!v)
            tb_fuzz_fail("vec", "out of memory for %zu items", cap);
        r->v = v;
        r->cap = cap;
    }
    memcpy((uint8_t *)r->v + r->n * r->size, item, r->size);
    r->n++;
}

/* ---- tb_fuzz_cycle_split ---- */

/* One decode's elements, as tb_fuzz_cycle_split compares them. */
typedef struct cs_run {
    tb_decoder *d;
    bool split;              /* the decode with cycle ranges */
    bool ca;
    const char *h;
    uint64_t other;          /* hash of the elements but ranges, in order */
    uint64_t insns;          /* hash of the instructions' addresses */
    uint64_t ninsns;
    /* the default run's ranges: count, has_cc, cc */
    uint32_t *rc;
    size_t nr, cap;
    /* the split run: where it is in them */
    size_t ri;
    uint32_t done, sum;
    bool none;               /* a range of this one had no count */
} cs_run;

#define CS_HF(f) r->other = tb_fuzz_hash(r->other, &el->f, sizeof el->f)

TB_FUZZ_NOCOV static int cs_elem(void *ctx, const tb_element *el)
{
    cs_run *r = ctx;
    uint32_t a[64];
    int n;

    if (el->kind != TB_ELEM_INSN_RANGE) {
        CS_HF(kind); CS_HF(index); CS_HF(reason); CS_HF(start); CS_HF(exc_num);
        CS_HF(pref_return); CS_HF(cancelled); CS_HF(has_cc); CS_HF(cc); CS_HF(context_id);
        CS_HF(err); CS_HF(data_addr); CS_HF(data_value); CS_HF(data_flags);
        return 0;
    }
    n = tb_decoder_range_addrs(r->d, el, a, 64);
    TB_FUZZ_CHECK(r->h, n == (int)el->count, "range of %u lists %d", el->count, n);
    r->insns = tb_fuzz_hash(r->insns, a, (size_t)n * sizeof a[0]);
    r->ninsns += (uint64_t)n;
    if (!r->split) {
        if (r->nr + 3 > r->cap) {
            r->cap = r->cap ? 2 * r->cap : 256;
            r->rc = realloc(r->rc, r->cap * sizeof *r->rc);
            TB_FUZZ_CHECK(r->h, r->rc, "out of memory");
        }
        r->rc[r->nr++] = el->count;
        r->rc[r->nr++] = el->has_cc;
        r->rc[r->nr++] = el->cc;
        return 0;
    }
    TB_FUZZ_CHECK(r->h, !r->ca || el->count == 1, "cycle ranges: a range of %u", el->count);
    /* Walk the default's ranges (ri: its triple): this range's
     * instructions are the next ones of it. */
    TB_FUZZ_CHECK(r->h, r->ri < r->nr, "cycle ranges: more ranges than the default's");
    TB_FUZZ_CHECK(r->h, !r->none, "cycle ranges: a count missing before the last");
    r->done += el->count;
    if (el->has_cc)
        r->sum += el->cc;
    else
        r->none = true;
    TB_FUZZ_CHECK(r->h, r->done <= r->rc[r->ri], "cycle ranges: a range across the default's");
    if (r->done == r->rc[r->ri]) {
        if (r->rc[r->ri + 1])
            TB_FUZZ_CHECK(r->h, !r->none && r->sum == r->rc[r->ri + 2],
                          "cycle ranges: counts sum to %u (none %d), the default's %u", r->sum,
                          r->none, r->rc[r->ri + 2]);
        else
            TB_FUZZ_CHECK(r->h, !r->ca || r->none,
                          "cycle ranges: the default's range has no count, all of its do");
        r->ri += 3;
        r->done = r->sum = 0;
        r->none = false;
    }
    return 0;
}

#undef CS_HF

static void cs_decode(const tb_config *cfg, const uint8_t *stream, size_t len, cs_run *r)
{
    tb_parser *p = tb_parser_new(cfg);
    int rc;

    r->d = tb_decoder_new(cfg, tb_fuzz_image());
    TB_FUZZ_CHECK(r->h, p && r->d, "tb_parser_new/tb_decoder_new");
    r->other = r->insns = TB_FUZZ_HASH_INIT;
    rc = tb_decoder_set_cycle_ranges(r->d, r->split);
    TB_FUZZ_CHECK(r->h, rc == 0, "tb_decoder_set_cycle_ranges: %d", rc);
    rc = tb_decoder_push(r->d, p, stream, len, 0, cs_elem, r);
    if (rc >= 0)
        rc = tb_decoder_push_finish(r->d, p, cs_elem, r);
    TB_FUZZ_CHECK(r->h, rc >= 0, "decode: %d", rc);
    tb_parser_free(p);
    tb_decoder_free(r->d);
    r->d = NULL;
}

void tb_fuzz_cycle_split(const char *harness, const tb_config *cfg, const uint8_t *stream,
                         size_t len)
{
    cs_run a = {.h = harness, .ca = cfg->cycle_accurate};
    cs_run b = {.h = harness, .ca = cfg->cycle_accurate, .split = true};

    cs_decode(cfg, stream, len, &a);
    b.rc = a.rc;
    b.nr = a.nr;
    cs_decode(cfg, stream, len, &b);
    TB_FUZZ_CHECK(harness, a.other == b.other, "cycle ranges changed an element not a range");
    TB_FUZZ_CHECK(harness, a.insns == b.insns && a.ninsns == b.ninsns,
                  "cycle ranges: %llu instructions, the default %llu (or others)",
                  (unsigned long long)b.ninsns, (unsigned long long)a.ninsns);
    TB_FUZZ_CHECK(harness, b.ri == a.nr && b.done == 0,
                  "cycle ranges: %zu of the default's %zu ranges covered", b.ri / 3, a.nr / 3);
    free(a.rc);
}
