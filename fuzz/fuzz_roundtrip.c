/*
 * Round-trip harness: the input drives a generator of a small ARM/Thumb
 * program that always terminates, a scenario (interrupts) and an encoder
 * option set; then sim -> encoder -> [formatter -> deformatter] ->
 * parser -> decoder, and the decoded instructions must be the simulated
 * ones, in order, with the same ISA and (where the protocol says it)
 * the same E/N.
 *
 * The program (at 0x8000; vectors at 0):
 *   0x8000 ARM leaf 0, 0x8040 ARM leaf 1, 0x8080 ARM wrapper (PUSH {lr};
 *   BL leaf 0; POP {pc}), 0x8100/0x8140 Thumb leaves, 0x8180 Thumb
 *   wrapper, 0x8200 main: CPSIE if, then up to 32 blocks chosen by the
 *   input (ALU, CMP, conditional ALU, conditional forward branches, IT,
 *   calls direct/indirect/interworking/through a wrapper, a counted loop,
 *   SVC, ISB/DMB, and in a secure run SMC to Non-secure or back), then
 *   the exit address.  Only forward branches, calls that return and one
 *   counted loop level, so every run ends.  Handlers: SVC "MOVS pc, lr",
 *   IRQ/FIQ "SUBS pc, lr, #4"; a secure run (scenario secure, started
 *   Secure) has Monitor vectors at MON_VEC whose SMC entry sets SCR.NS to
 *   r8 and returns with "MOVS pc, lr", so the security state changes at
 *   exception returns and SMC entries (docs/ns-hyp.md).
 *
 * Comparison rules follow sim.h and decoder.h: an exception that cancels
 * the instruction before it removes that instruction; every instruction
 * runs in the security state of the last context element; ETMv3 ranges carry
 * an atom per instruction, PTM ranges only for a last instruction that is
 * a waypoint.  The sim is the truth; an input the sim refuses (a fault,
 * an error) is not interesting and is skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "tracebench/decoder.h"
#include "tracebench/encoder.h"
#include "tracebench/frame.h"
#include "tracebench/parser.h"
#include "tracebench/sim.h"

#define H "roundtrip"

#define IMG_SIZE 0x9000u
#define ARM_LEAF0 0x8000u
#define ARM_LEAF1 0x8040u
#define ARM_WRAP 0x8080u
#define T_LEAF0 0x8100u
#define T_LEAF1 0x8140u
#define T_WRAP 0x8180u
#define MAIN 0x8200u
#define MON_VEC 0x300u /* MVBAR (32-byte aligned) */
#define MAIN_END 0x8F00u
#define STACK_TOP 0x20000u
#define MAX_INSNS 6000
#define MAX_TRACE (256 * 1024)
#define MAX_BATCH 200

/* ---- input reader ---- */
typedef struct rd {
    const uint8_t *p;
    size_t n;
} rd;

static unsigned rd_byte(rd *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

/* ---- assembler ---- */
typedef struct as {
    uint8_t *img;
    uint32_t pc;
    bool overflow;
    bool secure;             /* a secure run: SMC blocks, Monitor vectors */
} as;

static void a32(as *a, uint32_t v)
{
    if (a->pc + 4 > MAIN_END) {
        a->overflow = true;
        return;
    }
    a->img[a->pc] = (uint8_t)v;
    a->img[a->pc + 1] = (uint8_t)(v >> 8);
    a->img[a->pc + 2] = (uint8_t)(v >> 16);
    a->img[a->pc + 3] = (uint8_t)(v >> 24);
    a->pc += 4;
}

static void t16(as *a, uint16_t v)
{
    if (a->pc + 2 > MAIN_END) {
        a->overflow = true;
        return;
    }
    a->img[a->pc] = (uint8_t)v;
    a->img[a->pc + 1] = (uint8_t)(v >> 8);
    a->pc += 2;
}

static void t32(as *a, uint16_t hi, uint16_t lo)
{
    t16(a, hi);
    t16(a, lo);
}

/* ARM ARM A8.8.18/A8.8.25: B, BL, BLX(imm) offsets. */
static uint32_t arm_b(uint32_t cond, uint32_t op, uint32_t pc, uint32_t target)
{
    return (cond << 28) | op | (((target - (pc + 8)) >> 2) & 0xFFFFFFu);
}

static void thumb_bl(as *a, uint32_t target, bool to_arm)
{
    uint32_t base = to_arm ? ((a->pc + 4) & ~3u) : a->pc + 4;
    uint32_t off = target - base;
    uint32_t s = (off >> 24) & 1, i1 = (off >> 23) & 1, i2 = (off >> 22) & 1;
    uint32_t j1 = (~(i1 ^ s)) & 1, j2 = (~(i2 ^ s)) & 1;

    t32(a, (uint16_t)(0xF000u | (s << 10) | ((off >> 12) & 0x3FF)),
        (uint16_t)((to_arm ? 0xC000u : 0xD000u) | (j1 << 13) | (j2 << 11) |
                   ((off >> 1) & (to_arm ? 0x7FEu : 0x7FFu))));
}

static void arm_movw_movt(as *a, unsigned rd_, uint32_t v)
{
    a32(a, 0xE3000000u | ((v & 0xF000u) << 4) | (rd_ << 12) | (v & 0xFFFu));
    a32(a, 0xE3400000u | ((v >> 12) & 0xF0000u) | (rd_ << 12) | ((v >> 16) & 0xFFFu));
}

static void thumb_movw_movt(as *a, unsigned rd_, uint32_t v)
{
    uint32_t lo = v & 0xFFFF, hi = v >> 16;

    t32(a, (uint16_t)(0xF240u | ((lo >> 1) & 0x400u) | (lo >> 12)),
        (uint16_t)(((lo >> 8) & 7u) << 12 | (rd_ << 8) | (lo & 0xFF)));
    t32(a, (uint16_t)(0xF2C0u | ((hi >> 1) & 0x400u) | (hi >> 12)),
        (uint16_t)(((hi >> 8) & 7u) << 12 | (rd_ << 8) | (hi & 0xFF)));
}

/* Registers the blocks may change: r0-r5 (r6 call address, r7 loop, r8
 * and r9 the SMC argument and the Monitor's scratch). */
static void arm_alu(as *a, rd *r, uint32_t cond)
{
    unsigned b = rd_byte(r);
    a32(a, (cond << 28) | 0x02800000u | ((b % 6) << 16) | (((b >> 3) % 6) << 12) |
           rd_byte(r)); /* ADD<c> rd, rn, #imm8 */
}

static void thumb_alu(as *a, rd *r)
{
    unsigned b = rd_byte(r);
    t16(a, (uint16_t)(0x3000u | ((b % 6) << 8) | rd_byte(r))); /* ADDS rd, #imm8 */
}

static void leaf(as *a, rd *r, bool thumb)
{
    unsigned n = 1 + rd_byte(r) % 3, i;

    for (i = 0; i < n; i++) {
        if (thumb)
            thumb_alu(a, r);
        else
            arm_alu(a, r, 0xE);
    }
    if (thumb)
        t16(a, 0x4770); /* BX lr */
    else
        a32(a, 0xE12FFF1Eu);
}

static void arm_block(as *a, rd *r, bool *in_loop)
{
    unsigned k = rd_byte(r) % 14, i;
    uint32_t cond = rd_byte(r) % 14, start;

    switch (k) {
    case 0: arm_alu(a, r, 0xE); break;
    case 1: a32(a, 0xE3500000u | ((rd_byte(r) % 6) << 16) | rd_byte(r)); break; /* CMP */
    case 2: arm_alu(a, r, cond); break;
    case 3: { /* B<c> over n instructions */
        unsigned n = 1 + rd_byte(r) % 3;
        a32(a, arm_b(cond, 0x0A000000u, a->pc, a->pc + 4 + 4 * n));
        for (i = 0; i < n; i++)
            arm_alu(a, r, 0xE);
        break;
    }
    case 4: a32(a, arm_b(0xE, 0x0B000000u, a->pc, rd_byte(r) & 1 ? ARM_LEAF1 : ARM_LEAF0)); break;
    case 5: { /* BLX(imm) to a Thumb leaf */
        uint32_t t = rd_byte(r) & 1 ? T_LEAF1 : T_LEAF0;
        uint32_t off = t - (a->pc + 8);
        a32(a, 0xFA000000u | (((off >> 1) & 1) << 24) | ((off >> 2) & 0xFFFFFFu));
        break;
    }
    case 6: { /* BLX r6: any function, any ISA */
        static const uint32_t fn[6] = {ARM_LEAF0, ARM_LEAF1, ARM_WRAP,
                                       T_LEAF0 | 1, T_LEAF1 | 1, T_WRAP | 1};
        arm_movw_movt(a, 6, fn[rd_byte(r) % 6]);
        a32(a, 0xE12FFF36u);
        break;
    }
    case 7: a32(a, arm_b(0xE, 0x0B000000u, a->pc, ARM_WRAP)); break;
    case 8:
        if (*in_loop)
            break;
        /* MOV r7,#n; body; SUBS r7,r7,#1; BNE body */
        a32(a, 0xE3A07000u | (1 + rd_byte(r) % 4));
        start = a->pc;
        *in_loop = true;
        for (i = 0, k = 1 + rd_byte(r) % 3; i < k; i++)
            arm_block(a, r, in_loop);
        *in_loop = false;
        a32(a, 0xE2577001u);
        a32(a, arm_b(0x1, 0x0A000000u, a->pc, start));
        break;
    case 9: a32(a, 0xEF000000u | rd_byte(r)); break; /* SVC */
    case 10: a32(a, rd_byte(r) & 1 ? 0xF57FF06Fu : 0xF57FF05Fu); break; /* ISB/DMB */
    case 11: /* BX to the Thumb wrapper through r6 */
        arm_movw_movt(a, 6, T_WRAP | 1);
        a32(a, 0xE12FFF36u);
        break;
    case 12: /* MOV r8,#0|1; SMC #0: to Secure or Non-secure */
        if (!a->secure) {
            arm_alu(a, r, 0xE); /* as before SMC blocks existed */
            break;
        }
        a32(a, 0xE3A08000u | (rd_byte(r) & 1));
        a32(a, 0xE1600070u);
        break;
    default: arm_alu(a, r, 0xE); break;
    }
}

static void thumb_block(as *a, rd *r, bool *in_loop)
{
    unsigned k = rd_byte(r) % 14, i;
    uint32_t cond = rd_byte(r) % 14, start;

    switch (k) {
    case 0: thumb_alu(a, r); break;
    case 1: t16(a, (uint16_t)(0x2800u | ((rd_byte(r) % 6) << 8) | rd_byte(r))); break; /* CMP */
    case 2: /* IT<c>; one conditional instruction */
        t16(a, (uint16_t)(0xBF08u | (cond << 4)));
        t16(a, (uint16_t)(0x3000u | ((rd_byte(r) % 6) << 8) | rd_byte(r)));
        break;
    case 3: { /* B<c> over n 16-bit instructions */
        unsigned n = 1 + rd_byte(r) % 3;
        t16(a, (uint16_t)(0xD000u | (cond << 8) | (n - 1)));
        for (i = 0; i < n; i++)
            thumb_alu(a, r);
        break;
    }
    case 4: thumb_bl(a, rd_byte(r) & 1 ? T_LEAF1 : T_LEAF0, false); break;
    case 5: thumb_bl(a, rd_byte(r) & 1 ? ARM_LEAF1 : ARM_LEAF0, true); break;
    case 6: {
        static const uint32_t fn[6] = {ARM_LEAF0, ARM_LEAF1, ARM_WRAP,
                                       T_LEAF0 | 1, T_LEAF1 | 1, T_WRAP | 1};
        thumb_movw_movt(a, 6, fn[rd_byte(r) % 6]);
        t16(a, 0x47B0); /* BLX r6 */
        break;
    }
    case 7: thumb_bl(a, T_WRAP, false); break;
    case 8:
        if (*in_loop)
            break;
        t16(a, (uint16_t)(0x2700u | (1 + rd_byte(r) % 4))); /* MOVS r7,#n */
        start = a->pc;
        *in_loop = true;
        for (i = 0, k = 1 + rd_byte(r) % 3; i < k; i++)
            thumb_block(a, r, in_loop);
        *in_loop = false;
        t16(a, 0x3F01); /* SUBS r7,#1 */
        if (a->pc + 4 - start <= 256) {
            t16(a, (uint16_t)(0xD100u | (((start - (a->pc + 4)) >> 1) & 0xFF)));
        } else { /* BNE.W */
            uint32_t off = start - (a->pc + 4);
            uint32_t s = (off >> 20) & 1, j2 = (off >> 19) & 1, j1 = (off >> 18) & 1;
            t32(a, (uint16_t)(0xF040u | (s << 10) | ((off >> 12) & 0x3F)),
                (uint16_t)(0x8000u | (j1 << 13) | (j2 << 11) | ((off >> 1) & 0x7FF)));
        }
        break;
    case 9: t16(a, (uint16_t)(0xDF00u | rd_byte(r))); break; /* SVC */
    case 10: t32(a, 0xF3BF, rd_byte(r) & 1 ? 0x8F6F : 0x8F5F); break;
    case 11: /* CBZ/CBNZ r0 over one instruction */
        t16(a, (uint16_t)(0xB100u | (rd_byte(r) & 1 ? 0x800u : 0) | (0 << 3)));
        thumb_alu(a, r);
        break;
    case 12: /* MOV.W r8,#0|1; SMC #0 */
        if (!a->secure) {
            thumb_alu(a, r);
            break;
        }
        t32(a, 0xF04F, (uint16_t)(0x0800u | (rd_byte(r) & 1)));
        t32(a, 0xF7F0, 0x8000);
        break;
    default: thumb_alu(a, r); break;
    }
}

/* ---- the run ---- */
typedef struct tinsn {
    uint32_t addr;
    uint8_t size, isa, wp;
    bool failed, cancelled, ns;
    bool debug_resume;       /* the first instruction after a debug halt */
} tinsn;

typedef struct rt {
    tb_encoder *enc;
    tinsn *v;
    size_t n;
    uint8_t *trace;
    size_t tlen;
    bool trace_full;
    int enc_err;
    bool ns;                 /* truth security state (TB_REC_STATE) */
    unsigned states;         /* state records */
    bool halted;             /* a debug halt since the last instruction */
    /* A second encoder, fed the same records tb_encoder_push_many
     * (batch of bsz), must give the same trace: and each of its outputs
     * must come while it handles the record ready named, i.e. fall in
     * the bytes the single pushes gave for that record. */
    tb_encoder *many;
    tb_exec_record batch[MAX_BATCH];
    size_t bsz, nb;
    size_t before[MAX_BATCH], after[MAX_BATCH]; /* tlen around each single push */
    size_t ready_k;          /* the last ready count */
    uint8_t *trace2;
    size_t tlen2;
    bool trace2_full;
} rt;

static int many_ready(void *ctx, size_t k)
{
    rt *r = ctx;

    TB_FUZZ_CHECK(H, k >= 1 && k <= r->nb && k > r->ready_k,
                  "push_many: ready(%zu) after ready(%zu), batch of %zu", k, r->ready_k, r->nb);
    r->ready_k = k;
    return 0;
}

static int many_sink(void *ctx, const uint8_t *d, size_t len)
{
    rt *r = ctx;

    TB_FUZZ_CHECK(H, r->trace_full ||
                  (r->ready_k >= 1 && r->tlen2 >= r->before[r->ready_k - 1] &&
                   r->tlen2 + len <= r->after[r->ready_k - 1]),
                  "push_many: %zu bytes at %zu under ready(%zu); single pushes gave that "
                  "record's bytes at %zu..%zu", len, r->tlen2, r->ready_k,
                  r->ready_k ? r->before[r->ready_k - 1] : 0,
                  r->ready_k ? r->after[r->ready_k - 1] : 0);
    if (r->tlen2 + len > MAX_TRACE) {
        r->trace2_full = true;
        return 1;
    }
    memcpy(r->trace2 + r->tlen2, d, len);
    r->tlen2 += len;
    return 0;
}

static void many_flush(rt *r)
{
    int rc;

    r->ready_k = 0;
    rc = tb_encoder_push_many(r->many, r->batch, r->nb, many_ready, r);
    TB_FUZZ_CHECK(H, (rc < 0) == (r->enc_err != 0) && (rc >= 0 || r->trace2_full ||
                  tb_encoder_error(r->many) == r->enc_err),
                  "push_many returned %d (%s), single pushes %d", rc, tb_err_str(rc),
                  r->enc_err);
    r->nb = 0;
}

static int rt_sink(void *ctx, const uint8_t *d, size_t len)
{
    rt *r = ctx;

    if (r->tlen + len > MAX_TRACE) {
        r->trace_full = true;
        return 1;
    }
    memcpy(r->trace + r->tlen, d, len);
    r->tlen += len;
    return 0;
}

static int rt_rec(void *ctx, const tb_exec_record *rec)
{
    rt *r = ctx;

    if (rec->kind == TB_REC_INSN && r->n < MAX_INSNS) {
        r->v[r->n++] = (tinsn){rec->u.insn.addr, rec->u.insn.size, rec->u.insn.isa,
                               rec->u.insn.wp_class,
                               (rec->u.insn.flags & TB_INSN_COND_FAILED) != 0, false,
                               r->ns, r->halted};
        r->halted = false;
    } else if (rec->kind == TB_REC_STATE) {
        r->ns = rec->u.state.ns;
        r->states++;
    } else if (rec->kind == TB_REC_EXCEPTION && rec->u.exc.kind == TB_EXC_DEBUG_HALT) {
        r->halted = true;
    } else if (rec->kind == TB_REC_EXCEPTION && rec->u.exc.cancelled && r->n &&
               r->v[r->n - 1].addr == rec->u.exc.pref_return) {
        r->v[r->n - 1].cancelled = true;
    }
    r->before[r->nb] = r->tlen;
    if (tb_encoder_push(r->enc, rec) < 0)
        r->enc_err = tb_encoder_error(r->enc);
    r->after[r->nb] = r->tlen;
    r->batch[r->nb++] = *rec;
    if (r->enc_err || r->nb == r->bsz)
        many_flush(r);
    return r->enc_err != 0;
}

/* Decoded side: compared as the elements come. */
typedef struct cmp {
    const rt *r;
    tb_decoder *dec;
    const tb_config *cfg;
    size_t p;                /* next truth instruction */
    unsigned ranges;
    bool ns;                 /* decoded security state */
    bool debug_exit;         /* an exit from debug state decoded, not yet met */
    uint32_t addrs[1024];
} cmp;

static void skip_cancelled(cmp *c)
{
    while (c->p < c->r->n && c->r->v[c->p].cancelled) {
        if (c->r->v[c->p].debug_resume)
            c->debug_exit = false; /* the exit was for it */
        c->p++;
    }
}

static int cmp_el(void *ctx, const tb_element *el)
{
    cmp *c = ctx;
    bool ptm = c->cfg->protocol == TB_PROTO_PTM;
    int n, i;

    if (el->kind == TB_ELEM_NO_SYNC)
        TB_FUZZ_CHECK(H, el->reason == TB_GAP_INIT,
                      "gap (%s) at packet %llu, truth insn #%zu", tb_gap_reason_name(el->reason),
                      (unsigned long long)el->index, c->p);
    TB_FUZZ_CHECK(H, el->kind != TB_ELEM_ADDR_NACC && el->kind != TB_ELEM_ADDR_UNKNOWN,
                  "%s at packet %llu", tb_elem_kind_name(el->kind),
                  (unsigned long long)el->index);
    if (el->kind == TB_ELEM_CONTEXT)
        c->ns = el->ns;
    if (el->kind == TB_ELEM_TRACE_ON && el->reason == TB_ISYNC_DEBUG_EXIT)
        c->debug_exit = true;
    if (el->kind != TB_ELEM_INSN_RANGE)
        return 0;
    c->ranges++;
    n = tb_decoder_range_addrs(c->dec, el, c->addrs, 1024);
    TB_FUZZ_CHECK(H, n == (int)el->count, "range lists %d of %u", n, el->count);
    for (i = 0; i < n; i++) {
        const tinsn *t;
        bool last = i + 1 == n;
        skip_cancelled(c);
        TB_FUZZ_CHECK(H, c->p < c->r->n, "decoded 0x%08x beyond the %zu simulated "
                      "instructions", c->addrs[i], c->r->n);
        t = &c->r->v[c->p];
        TB_FUZZ_CHECK(H, t->addr == c->addrs[i] && t->isa == el->isa,
                      "instruction #%zu: decoded 0x%08x %s, simulated 0x%08x %s",
                      c->p, c->addrs[i], tb_isa_name((tb_isa)el->isa), t->addr,
                      tb_isa_name((tb_isa)t->isa));
        /* Debug halts: the exit shown right before each restart (no
         * filter or overflow here to excuse it), nowhere else. */
        TB_FUZZ_CHECK(H, t->debug_resume == c->debug_exit,
                      "instruction #%zu at 0x%08x: %s", c->p, t->addr,
                      t->debug_resume ? "the restart after a debug halt, with no exit "
                                        "from debug state decoded"
                                      : "an exit from debug state decoded before it, "
                                        "but no debug halt");
        c->debug_exit = false;
        TB_FUZZ_CHECK(H, t->ns == c->ns, "instruction #%zu at 0x%08x: decoded %s, "
                      "simulated %s", c->p, t->addr, c->ns ? "Non-secure" : "Secure",
                      t->ns ? "Non-secure" : "Secure");
        if (!ptm)
            TB_FUZZ_CHECK(H, ((el->atom_bits >> i) & 1) == t->failed,
                          "instruction #%zu at 0x%08x: decoded %c, simulated %c", c->p,
                          t->addr, (el->atom_bits >> i) & 1 ? 'N' : 'E',
                          t->failed ? 'N' : 'E');
        else if (last && t->wp != TB_WP_NONE && t->wp != TB_WP_BARRIER)
            TB_FUZZ_CHECK(H, (el->last_atom == 'N') == t->failed,
                          "waypoint #%zu at 0x%08x: decoded %c, simulated %c", c->p,
                          t->addr, el->last_atom, t->failed ? 'N' : 'E');
        c->p++;
    }
    return 0;
}

static int cmp_pkt(void *ctx, const tb_packet *p)
{
    cmp *c = ctx;

    TB_FUZZ_CHECK(H, p->kind != TB_PKT_RESERVED && p->kind != TB_PKT_BAD_SEQUENCE &&
                  p->kind != TB_PKT_BAD_TRACEMODE && p->kind != TB_PKT_INCOMPLETE,
                  "encoder output parses as %s at %llu", tb_pkt_kind_name(p->kind),
                  (unsigned long long)p->index);
    TB_FUZZ_CHECK(H, tb_decoder_packet(c->dec, p, cmp_el, c) >= 0, "decoder error");
    return 0;
}

typedef struct fwd {
    tb_parser *parser;
    cmp *c;
    uint8_t id;
} fwd;

static int on_frame(void *ctx, uint8_t id, uint64_t index, const uint8_t *data,
                    size_t len)
{
    fwd *f = ctx;

    TB_FUZZ_CHECK(H, id == f->id, "deformatter gives ID 0x%02x, source is 0x%02x",
                  id, f->id);
    TB_FUZZ_CHECK(H, tb_parser_push(f->parser, data, len, index, cmp_pkt, f->c) >= 0,
                  "parser error");
    return 0;
}

typedef struct obuf {
    uint8_t *d;
    size_t len, cap;
} obuf;

static int fsink(void *ctx, const uint8_t *d, size_t len)
{
    obuf *b = ctx;

    TB_FUZZ_CHECK(H, b->len + len <= b->cap, "formatter output too long");
    memcpy(b->d + b->len, d, len);
    b->len += len;
    return 0;
}

static uint8_t *rt_build_image(rd *r, bool secure, bool *main_thumb, uint32_t *exit_addr)
{
    uint8_t *img = calloc(1, IMG_SIZE);
    as a = {.img = img, .secure = secure};
    bool in_loop = false;
    unsigned blocks, i;

    if (!img)
        tb_fuzz_fail(H, "out of memory");
    /* Vectors (ARM ARM B1.8.1): SVC returns with MOVS pc, lr; IRQ and FIQ
     * with SUBS pc, lr, #4.  Others stay 0 (ANDEQ), never reached. */
    a.pc = 0x08; a32(&a, 0xE1B0F00Eu);
    a.pc = 0x18; a32(&a, 0xE25EF004u);
    a32(&a, 0xE25EF004u);
    /* Monitor SMC entry (MVBAR + 8): SCR.NS := r8, back to the caller
     * (IHI0406C B4.1.129 SCR, B1.9.9). */
    a.pc = MON_VEC + 8;
    a32(&a, 0xEE119F11u);                                   /* MRC SCR -> r9 */
    a32(&a, 0xE3C99001u);                                   /* BIC r9, #1 */
    a32(&a, 0xE1899008u);                                   /* ORR r9, r8 */
    a32(&a, 0xEE019F11u);                                   /* MCR r9 -> SCR */
    a32(&a, 0xE1B0F00Eu);                                   /* MOVS pc, lr */
    a.pc = ARM_LEAF0; leaf(&a, r, false);
    a.pc = ARM_LEAF1; leaf(&a, r, false);
    a.pc = ARM_WRAP;
    a32(&a, 0xE52DE004u);                                   /* PUSH {lr} */
    a32(&a, arm_b(0xE, 0x0B000000u, a.pc, ARM_LEAF0));      /* BL leaf 0 */
    a32(&a, 0xE49DF004u);                                   /* POP {pc} */
    a.pc = T_LEAF0; leaf(&a, r, true);
    a.pc = T_LEAF1; leaf(&a, r, true);
    a.pc = T_WRAP;
    t16(&a, 0xB500);                                        /* PUSH {lr} */
    thumb_bl(&a, T_LEAF0, false);
    t16(&a, 0xBD00);                                        /* POP {pc} */

    *main_thumb = rd_byte(r) & 1;
    a.pc = MAIN;
    if (*main_thumb) {
        thumb_movw_movt(&a, 13, STACK_TOP);
        t16(&a, 0xB663);                                    /* CPSIE if */
        if (a.secure) {
            thumb_movw_movt(&a, 9, MON_VEC);
            t32(&a, 0xEE0C, 0x9F30);                        /* MCR r9 -> MVBAR */
        }
    } else {
        arm_movw_movt(&a, 13, STACK_TOP);
        a32(&a, 0xF10800C0u);                               /* CPSIE if */
        if (a.secure) {
            arm_movw_movt(&a, 9, MON_VEC);
            a32(&a, 0xEE0C9F30u);                           /* MCR r9 -> MVBAR */
        }
    }
    blocks = 1 + rd_byte(r) % 32;
    for (i = 0; i < blocks && !a.overflow; i++) {
        if (*main_thumb)
            thumb_block(&a, r, &in_loop);
        else
            arm_block(&a, r, &in_loop);
    }
    if (a.overflow) {
        free(img);
        return NULL;
    }
    *exit_addr = a.pc;
    if (*main_thumb)
        t16(&a, 0xE7FE); /* B . : never run, the sim stops here */
    else
        a32(&a, 0xEAFFFFFEu);
    return img;
}

#define RT_SIM_RUNS 1000
static tb_sim *rt_sim;
static unsigned rt_runs;

int tb_fuzz_roundtrip(const uint8_t *data, size_t len)
{
    rd r = {data, len > 4096 ? 4096 : len};
    tb_encoder_opts o;
    tb_config cfg;
    tb_scenario sc;
    tb_sim_result res;
    rt run = {0};
    tb_sim *sim;
    tb_memimage *mem;
    uint8_t *img;
    bool thumb, formatted, secure;
    uint32_t exit_addr = 0;
    unsigned b0, b1, b2;
    int rc;

    if (len < 8)
        return TB_FUZZ_SKIP;
    /* Options: protocol, version and every ETMCR feature the encoder
     * models (encoder.h), a short sync period so A-syncs and periodic
     * I-syncs land mid-run. */
    b0 = rd_byte(&r);
    b1 = rd_byte(&r);
    b2 = rd_byte(&r);
    tb_encoder_opts_init(&o, b0 & 1 ? TB_PROTO_PTM : TB_PROTO_ETMV3);
    o.arch_minor = (uint8_t)(o.protocol == TB_PROTO_PTM ? (b0 >> 1) & 1 : 3 + ((b0 >> 1) % 3));
    o.cycle_accurate = (b0 >> 3) & 1;
    /* ETMv3 timestamps from v3.5 (encoder.c): else the bit is dropped
     * rather than the input (a fifth of all inputs was refused). */
    o.timestamps = ((b0 >> 4) & 1) && (o.protocol == TB_PROTO_PTM || o.arch_minor >= 5);
    o.branch_broadcast = (b0 >> 5) & 1;
    o.return_stack = o.protocol == TB_PROTO_PTM && ((b0 >> 6) & 1);
    o.alt_branch = o.protocol == TB_PROTO_ETMV3 && o.arch_minor >= 4 && ((b0 >> 7) & 1);
    /* The same bit with PTM: state changes on branches as number-0
     * exception bytes (exc0, IHI0035B 4.5.4). */
    o.ns_exc0 = o.protocol == TB_PROTO_PTM && ((b0 >> 7) & 1);
    o.sync_period = (b1 & 3) == 0 ? 0 : 32u << (b1 & 3) * 2;
    o.ts_period = (b1 >> 2) & 1 ? 50 : 0;
    formatted = (b1 >> 3) & 1;
    o.dual_issue = (b1 >> 4) & 1; /* same-cycle pairs (sim/dual.c) */
    if (o.timestamps && ((b1 >> 5) & 1)) {
        /* A timestamp counter with its high bits set (issue 35): 4- to
         * 8-byte timestamps, and with ETMv3 ts48 or PFT1.0 a 48-bit one
         * that wraps. */
        o.ts48 = o.protocol == TB_PROTO_ETMV3 && ((b2 >> 7) & 1);
        o.ts_start = o.ts48 || (o.protocol == TB_PROTO_PTM && o.arch_minor == 0)
                         ? 0xFFFFF0000000ull - ((uint64_t)b2 << 20)
                         : 0x1FFFFFF0000000ull ^ ((uint64_t)b2 << 40);
        o.ts_rate = 1u << ((b1 >> 6) * 10);
    }
    if (tb_encoder_config(&o, &cfg) < 0)
        return TB_FUZZ_SKIP;

    secure = (b1 >> 4) & 1;
    img = rt_build_image(&r, secure, &thumb, &exit_addr);
    if (!img)
        return TB_FUZZ_SKIP;

    tb_scenario_init(&sc);
    sc.max_insns = MAX_INSNS;
    snprintf(sc.exit, sizeof sc.exit, "0x%x", (unsigned)exit_addr);
    sc.seed = 1 + b2;
    sc.secure = secure;
    if (b2 & 1) {
        sc.events[sc.n_events].kind = b2 & 2 ? TB_EXC_FIQ : TB_EXC_IRQ;
        sc.events[sc.n_events].has_insn = true;
        sc.events[sc.n_events].at_insn = 3 + rd_byte(&r);
        sc.events[sc.n_events].every = rd_byte(&r) & 1 ? 7 + rd_byte(&r) % 40 : 0;
        sc.events[sc.n_events].count = 1 + rd_byte(&r) % 4;
        sc.n_events++;
    }
    if (b2 & 4) {
        /* Debug halts (issue 35, docs/debug-halt.md): from bits already
         * read, so the inputs' other bytes mean what they meant. */
        sc.events[sc.n_events].kind = TB_EXC_DEBUG_HALT;
        sc.events[sc.n_events].has_insn = true;
        sc.events[sc.n_events].at_insn = 2 + (b2 >> 3) % 16;
        sc.events[sc.n_events].every = b2 & 8 ? 5 + b2 % 23 : 0;
        sc.events[sc.n_events].count = 1 + (b2 >> 6);
        sc.events[sc.n_events].halt_cycles = 1 + b1 % 200;
        sc.n_events++;
    }

    /* One simulator, rewound after each input: opening a Unicorn
     * instance cost most of the harness's time (issue 28).  Unicorn
     * 2.0.1 keeps a few records of each run's translated code until it
     * is closed, so a new one every RT_SIM_RUNS inputs bounds the memory
     * (and fuzz/run.sh runs this harness without libFuzzer's per-input
     * leak check, which those records would set off every time). */
    if (rt_sim && ++rt_runs % RT_SIM_RUNS == 0) {
        tb_sim_free(rt_sim);
        rt_sim = NULL;
    }
    if (!rt_sim) {
        rt_sim = tb_sim_new(TB_SIM_CPU_A15);
        TB_FUZZ_CHECK(H, rt_sim != NULL, "tb_sim_new failed");
    }
    sim = rt_sim;
    if (tb_sim_load_raw(sim, img, IMG_SIZE, 0) < 0 ||
        tb_sim_map(sim, STACK_TOP - 0x1000, 0x1000) < 0 ||
        tb_sim_set_entry(sim, MAIN, thumb ? TB_ISA_THUMB : TB_ISA_ARM) < 0 ||
        tb_sim_set_scenario(sim, &sc) < 0 || tb_sim_set_dual(sim, o.dual_issue) < 0)
        tb_fuzz_fail(H, "sim setup: %s", tb_sim_errmsg(sim));
    run.v = malloc(MAX_INSNS * sizeof *run.v);
    run.trace = malloc(MAX_TRACE);
    run.enc = tb_encoder_new(&o, rt_sink, &run);
    run.trace2 = malloc(MAX_TRACE);
    run.many = tb_encoder_new(&o, many_sink, &run);
    /* From bytes already read: the inputs' other bytes mean what they
     * meant. */
    run.bsz = 1 + (size_t)(b1 ^ (b2 << 1)) % MAX_BATCH;
    TB_FUZZ_CHECK(H, run.v && run.trace && run.enc && run.trace2 && run.many,
                  "setup failed");
    memset(&res, 0, sizeof res);
    rc = tb_sim_run(sim, rt_rec, &run, &res);
    if (rc < 0 && getenv("TB_FUZZ_VERBOSE"))
        fprintf(stderr, "roundtrip: sim: %s\n", tb_sim_errmsg(sim));
    TB_FUZZ_CHECK(H, tb_sim_rewind(sim) == 0, "tb_sim_rewind: %s", tb_sim_errmsg(sim));
    TB_FUZZ_CHECK(H, run.enc_err == 0, "encoder error %d (%s)", run.enc_err,
                  tb_err_str(run.enc_err));
    if (getenv("TB_FUZZ_VERBOSE"))
        fprintf(stderr, "roundtrip: %s v%u%s%s%s%s%s %s main, sim %d (%s) %s, %zu insns, "
                "%u state changes, %zu trace bytes\n", tb_protocol_name(o.protocol),
                o.arch_minor, o.cycle_accurate ? " ca" : "", o.timestamps ? " ts" : "",
                o.branch_broadcast ? " bb" : "", o.return_stack ? " rs" : "",
                secure ? " secure" : "", thumb ? "Thumb" : "ARM", rc,
                tb_sim_stop_name(res.stop), rc < 0 ? "" : "", run.n, run.states, run.tlen);
    if (run.nb)
        many_flush(&run);
    if (rc < 0 || res.stop != TB_SIM_STOP_EXIT || run.trace_full) {
        /* The sim refused the program (fault, budget): not a round trip. */
        tb_encoder_free(run.many);
        free(run.trace2);
        tb_encoder_free(run.enc);
        free(run.v);
        free(run.trace);
        free(img);
        return TB_FUZZ_SKIP;
    }
    TB_FUZZ_CHECK(H, tb_encoder_finish(run.enc) >= 0, "encoder finish failed");
    TB_FUZZ_CHECK(H, !run.trace_full, "trace longer than %u bytes", MAX_TRACE);
    /* Past the last ready: the finish's bytes (TB_REC_END came in the
     * last batch, so there are none unless it did not). */
    run.ready_k = run.nb = 1;
    run.before[0] = run.tlen2;
    run.after[0] = run.tlen;
    TB_FUZZ_CHECK(H, tb_encoder_finish(run.many) >= 0, "push_many encoder: finish failed");
    TB_FUZZ_CHECK(H, run.tlen2 == run.tlen && !memcmp(run.trace2, run.trace, run.tlen) &&
                  !memcmp(tb_encoder_get_stats(run.many), tb_encoder_get_stats(run.enc),
                          sizeof(tb_encoder_stats)),
                  "push_many (batches of %zu) gave %zu bytes of trace, single pushes %zu%s",
                  run.bsz, run.tlen2, run.tlen,
                  run.tlen2 == run.tlen ? " (different bytes or counts)" : "");
    tb_encoder_free(run.many);
    free(run.trace2);

    /* Decode: the image the sim ran, the trace raw or through CoreSight
     * frames, fed in pieces cut by the input. */
    mem = tb_memimage_new();
    TB_FUZZ_CHECK(H, mem && tb_memimage_add(mem, 0, img, IMG_SIZE) == 0, "image");
    {
        const tb_config *ecfg = tb_encoder_get_config(run.enc);
        cmp c = {.r = &run, .cfg = ecfg};
        tb_parser *p = tb_parser_new(ecfg);
        size_t at = 0, step = 1 + rd_byte(&r) * 4;

        c.dec = tb_decoder_new(ecfg, mem);
        TB_FUZZ_CHECK(H, p && c.dec, "parser/decoder setup");
        if (!formatted) {
            for (at = 0; at < run.tlen; at += step) {
                size_t n = run.tlen - at < step ? run.tlen - at : step;
                TB_FUZZ_CHECK(H, tb_parser_push(p, run.trace + at, n, at, cmp_pkt, &c) >= 0,
                              "parser error");
            }
        } else {
            obuf ob = {malloc(run.tlen * 2 + 64), 0, run.tlen * 2 + 64};
            tb_formatter *f = tb_formatter_new(TB_FRAME_MEM_ALIGNED);
            tb_deformatter *d = tb_deformatter_new(TB_FRAME_MEM_ALIGNED);
            fwd fw = {p, &c, ecfg->trace_id};
            TB_FUZZ_CHECK(H, ob.d && f && d, "formatter setup");
            TB_FUZZ_CHECK(H, tb_formatter_put(f, ecfg->trace_id, run.trace, run.tlen,
                                              fsink, &ob) >= 0 &&
                          tb_formatter_flush(f, fsink, &ob) >= 0, "formatter failed");
            for (at = 0; at < ob.len; at += step) {
                size_t n = ob.len - at < step ? ob.len - at : step;
                TB_FUZZ_CHECK(H, tb_deformatter_push(d, ob.d + at, n, at, on_frame, &fw) == 0,
                              "deformatter error on the formatter's frames");
            }
            TB_FUZZ_CHECK(H, tb_deformatter_finish(d, on_frame, &fw) == 0,
                          "deformatter finish");
            tb_formatter_free(f);
            tb_deformatter_free(d);
            free(ob.d);
        }
        TB_FUZZ_CHECK(H, tb_parser_finish(p, cmp_pkt, &c) >= 0, "parser finish");
        TB_FUZZ_CHECK(H, tb_decoder_finish(c.dec, cmp_el, &c) >= 1, "decoder finish");
        skip_cancelled(&c);
        TB_FUZZ_CHECK(H, c.p == run.n, "decoded %zu of %zu simulated instructions "
                      "(%s, %zu trace bytes)", c.p, run.n, tb_protocol_name(ecfg->protocol),
                      run.tlen);
        tb_parser_free(p);
        tb_decoder_free(c.dec);
    }
    tb_memimage_free(mem);
    tb_encoder_free(run.enc);
    free(run.v);
    free(run.trace);
    free(img);
    return 0;
}

#undef H
#undef RT_SIM_RUNS
