/*
 * Encoder unit tests: hand-made exec records in, packets out, each
 * expectation worked by hand from the spec extracts (IHI0014Q 6.7.1 and
 * 7.3.1, IHI0035B 5.2.3) and protocol-notes.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tracebench/encoder.h"

#define MAXP 64

typedef struct {
    tb_packet p[MAXP];
    unsigned n;
} pkts;

static int on_pkt(void *ctx, const tb_packet *p)
{
    pkts *k = ctx;

    cr_assert_lt(k->n, MAXP);
    k->p[k->n++] = *p;
    return 0;
}

static uint64_t cyc;

static tb_exec_record insn(uint32_t addr, tb_isa isa, uint8_t size, tb_wp_class wp,
                           uint8_t flags, uint32_t next, tb_isa next_isa)
{
    tb_exec_record r;

    memset(&r, 0, sizeof r);
    r.kind = TB_REC_INSN;
    r.cycle = ++cyc;
    r.u.insn.addr = addr;
    r.u.insn.isa = (uint8_t)isa;
    r.u.insn.size = size;
    r.u.insn.wp_class = (uint8_t)wp;
    r.u.insn.flags = flags;
    r.u.insn.next_addr = next;
    r.u.insn.next_isa = (uint8_t)next_isa;
    return r;
}

static tb_exec_record arm(uint32_t addr, uint8_t flags)
{
    return insn(addr, TB_ISA_ARM, 4, TB_WP_NONE, flags, addr + 4, TB_ISA_ARM);
}

static tb_exec_record exc(tb_exc_kind k, uint32_t vector, uint32_t ret, bool cancel)
{
    tb_exec_record r;

    memset(&r, 0, sizeof r);
    r.kind = TB_REC_EXCEPTION;
    r.cycle = cyc += 3;
    r.u.exc.kind = (uint8_t)k;
    r.u.exc.isa = TB_ISA_ARM;
    r.u.exc.vector = vector;
    r.u.exc.pref_return = ret;
    r.u.exc.cancelled = cancel;
    return r;
}

static tb_encoder *mk(tb_protocol proto, const char *opts, pkts *k)
{
    tb_encoder_opts o;
    char err[128];
    tb_encoder *e;

    tb_encoder_opts_init(&o, proto);
    cr_assert_eq(tb_encoder_opts_parse(&o, opts, err, sizeof err), 0, "%s", err);
    e = tb_encoder_new(&o, NULL, NULL);
    cr_assert(e);
    memset(k, 0, sizeof *k);
    tb_encoder_set_packet_cb(e, on_pkt, k);
    cyc = 0;
    return e;
}

static void push(tb_encoder *e, tb_exec_record r)
{
    cr_assert_eq(tb_encoder_push(e, &r), 0);
}

/* The packets after the start-up A-sync and I-sync. */
static const tb_packet *after_sync(const pkts *k, unsigned *n)
{
    cr_assert_geq(k->n, 2);
    cr_assert_eq(k->p[0].kind, TB_PKT_ASYNC);
    cr_assert_eq(k->p[1].kind, TB_PKT_ISYNC);
    *n = k->n - 2;
    return &k->p[2];
}

Test(encoder, etmv3_phdr_een_is_c8)
{
    pkts k;
    tb_encoder *e = mk(TB_PROTO_ETMV3, "", &k);
    unsigned n;
    const tb_packet *p;

    push(e, arm(0x1000, 0));
    push(e, arm(0x1004, 0));
    push(e, arm(0x1008, TB_INSN_COND_FAILED | TB_INSN_CONDITIONAL));
    cr_assert_eq(tb_encoder_finish(e), 0);
    /* I-sync: 08, info 0x21 (trace enable, bit 0 set), address LE. */
    cr_assert_eq(k.p[1].size, 6);
    cr_assert_eq(memcmp(k.p[1].bytes, "\x08\x21\x00\x10\x00\x00", 6), 0);
    p = after_sync(&k, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(p[0].bytes[0], 0xC8); /* IHI0014Q 7.3.1: b11001000 = E E N */
    tb_encoder_free(e);
}

Test(encoder, etmv3_phdr_ne_is_8a)
{
    pkts k;
    tb_encoder *e = mk(TB_PROTO_ETMV3, "", &k);
    unsigned n;
    const tb_packet *p;

    push(e, arm(0x1000, TB_INSN_COND_FAILED | TB_INSN_CONDITIONAL));
    push(e, arm(0x1004, 0));
    cr_assert_eq(tb_encoder_finish(e), 0);
    p = after_sync(&k, &n);
    cr_assert_eq(n, 1); /* one format 2 header, not two format 1 */
    cr_assert_eq(p[0].bytes[0], 0x8A); /* b10001010 = N E */
    tb_encoder_free(e);
}

Test(encoder, etmv3_phdr_sixteen_e_then_n)
{
    pkts k;
    tb_encoder *e = mk(TB_PROTO_ETMV3, "", &k);
    unsigned n;
    const tb_packet *p;

    for (unsigned i = 0; i < 16; i++)
        push(e, arm(0x1000 + 4 * i, 0));
    push(e, arm(0x1040, TB_INSN_COND_FAILED | TB_INSN_CONDITIONAL));
    cr_assert_eq(tb_encoder_finish(e), 0);
    p = after_sync(&k, &n);
    /* 15 E (0xBC) then E N (0xC4): two headers, the fewest. */
    cr_assert_eq(n, 2);
    cr_assert_eq(p[0].bytes[0], 0xBC);
    cr_assert_eq(p[1].bytes[0], 0xC4);
    tb_encoder_free(e);
}

/* Cycle-accurate (IHI0014Q 7.3.1 table 7.3, protocol-notes 2.5): one
 * cycle each -> format 1 WE WE = 0x88; a second instruction in the same
 * cycle -> format 2 W E E = 0x82; 23 cycles -> 8 W, 8 W, 7 W E. */
Test(encoder, etmv3_ca_headers)
{
    pkts k;
    tb_encoder *e = mk(TB_PROTO_ETMV3, "ca", &k);
    unsigned n;
    const tb_packet *p;
    tb_exec_record r;

    push(e, arm(0x1000, 0));
    push(e, arm(0x1004, 0));
    cr_assert_eq(tb_encoder_finish(e), 0);
    p = after_sync(&k, &n);
    cr_assert_eq(k.p[1].bytes[0], 0x70); /* trace-on I-sync carries a CC */
    cr_assert_eq(n, 1);
    cr_assert_eq(p[0].bytes[0], 0x88);
    tb_encoder_free(e);

    e = mk(TB_PROTO_ETMV3, "ca", &k);
    push(e, arm(0x1000, 0));
    r = arm(0x1004, 0);
    r.cycle = --cyc; /* retires in the same cycle as the one before */
    push(e, r);
    cr_assert_eq(tb_encoder_finish(e), 0);
    p = after_sync(&k, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(p[0].bytes[0], 0x82);
    tb_encoder_free(e);

    e = mk(TB_PROTO_ETMV3, "ca", &k);
    r = arm(0x1000, 0);
    r.cycle = 23;
    push(e, r);
    cr_assert_eq(tb_encoder_finish(e), 0);
    p = after_sync(&k, &n);
    cr_assert_eq(n, 3);
    cr_assert_eq(p[0].bytes[0], 0xBC);
    cr_assert_eq(p[1].bytes[0], 0xBC);
    cr_assert_eq(p[2].bytes[0], 0xF8); /* b11111000: 7 W then E */
    tb_encoder_free(e);
}

/* IHI0014Q 6.7.1: A[19] the highest bit changed -> three bytes. */
Test(encoder, etmv3_seed_address_compression)
{
    pkts k;
    tb_encoder *e = mk(TB_PROTO_ETMV3, "", &k);
    unsigned n;
    const tb_packet *p;

    push(e, insn(0x80000000, TB_ISA_ARM, 4, TB_WP_INDIRECT, TB_INSN_TAKEN, 0x80080000,
                 TB_ISA_ARM));
    push(e, arm(0x80080000, 0));
    cr_assert_eq(tb_encoder_finish(e), 0);
    p = after_sync(&k, &n);
    cr_assert_eq(n, 3);
    cr_assert_eq(p[0].bytes[0], 0x84); /* E */
    cr_assert_eq(p[1].kind, TB_PKT_BRANCH);
    cr_assert_eq(p[1].size, 3);
    cr_assert_eq(memcmp(p[1].bytes, "\x81\x80\x10", 3), 0);
    tb_encoder_free(e);
}

/* ETMv3 exception with Cancel (protocol-notes 2.7) and the A7's exception
 * exit order: atom, 0x76, branch (2.8). */
Test(encoder, etmv3_cancel_and_exception_exit)
{
    pkts k;
    tb_encoder *e = mk(TB_PROTO_ETMV3, "", &k);
    unsigned n;
    const tb_packet *p;

    push(e, arm(0x1000, 0));
    push(e, arm(0x1004, 0)); /* faults: undefined */
    push(e, exc(TB_EXC_UNDEF, 0x4, 0x1004, true));
    push(e, insn(0x4, TB_ISA_ARM, 4, TB_WP_INDIRECT, TB_INSN_TAKEN | TB_INSN_EXC_RETURN,
                 0x1008, TB_ISA_ARM));
    cr_assert_eq(tb_encoder_finish(e), 0);
    p = after_sync(&k, &n);
    cr_assert_eq(n, 5);
    cr_assert_eq(p[0].bytes[0], 0x88); /* E E */
    /* Vector 0x4 with exception bytes: the original encoding carries
     * them only after five address bytes; E0 = Cancel | 9 << 1. */
    cr_assert_eq(p[1].size, 6);
    cr_assert_eq(memcmp(p[1].bytes, "\x83\x80\x80\x80\x48\x32", 6), 0);
    cr_assert_eq(p[2].bytes[0], 0x84);
    cr_assert_eq(p[3].kind, TB_PKT_EXC_RETURN);
    cr_assert_eq(p[4].kind, TB_PKT_BRANCH);
    cr_assert_eq(p[4].addr, 0x1008);
    tb_encoder_free(e);
}

/* IHI0035B 5.2.3 table 5.3: MOV at 0x1000, IRQ, FIQ before anything runs
 * at 0x18, LDR pc at 0x1C: WP update 0x1000, IRQ to 0x18, FIQ to 0x1C
 * with no WP update between, then the branch to 0x2000. */
Test(encoder, ptm_back_to_back_table_5_3)
{
    pkts k;
    tb_encoder *e = mk(TB_PROTO_PTM, "", &k);
    unsigned n;
    const tb_packet *p;

    push(e, arm(0x1000, 0));
    push(e, exc(TB_EXC_IRQ, 0x18, 0x1004, false));
    push(e, exc(TB_EXC_FIQ, 0x1C, 0x18, false));
    push(e, insn(0x1C, TB_ISA_ARM, 4, TB_WP_INDIRECT, TB_INSN_TAKEN, 0x2000, TB_ISA_ARM));
    cr_assert_eq(tb_encoder_finish(e), 0);
    p = after_sync(&k, &n);
    cr_assert_eq(k.p[1].addr, 0x1000);
    cr_assert_eq(n, 4);
    cr_assert_eq(p[0].kind, TB_PKT_WP_UPDATE);
    cr_assert_eq(p[0].addr, 0x1000);
    cr_assert_eq(p[1].kind, TB_PKT_BRANCH);
    cr_assert(p[1].has_exc);
    cr_assert_eq(p[1].exc_num, 14);
    cr_assert_eq(p[1].addr, 0x18);
    cr_assert_eq(p[2].kind, TB_PKT_BRANCH);
    cr_assert(p[2].has_exc);
    cr_assert_eq(p[2].exc_num, 15);
    cr_assert_eq(p[2].addr, 0x1C);
    cr_assert_eq(p[3].kind, TB_PKT_BRANCH);
    cr_assert(!p[3].has_exc);
    cr_assert_eq(p[3].addr, 0x2000);
    tb_encoder_free(e);
}

/* Table 5.4: LDR pc at the IRQ vector ran, then the FIQ: no WP update. */
Test(encoder, ptm_branch_at_vector_table_5_4)
{
    pkts k;
    tb_encoder *e = mk(TB_PROTO_PTM, "", &k);
    unsigned n;
    const tb_packet *p;

    push(e, arm(0x1000, 0));
    push(e, exc(TB_EXC_IRQ, 0x18, 0x1004, false));
    push(e, insn(0x18, TB_ISA_ARM, 4, TB_WP_INDIRECT, TB_INSN_TAKEN, 0x3000, TB_ISA_ARM));
    push(e, exc(TB_EXC_FIQ, 0x1C, 0x3000, false));
    cr_assert_eq(tb_encoder_finish(e), 0);
    p = after_sync(&k, &n);
    cr_assert_eq(n, 4);
    cr_assert_eq(p[0].kind, TB_PKT_WP_UPDATE);
    cr_assert_eq(p[1].exc_num, 14);
    cr_assert_eq(p[2].kind, TB_PKT_BRANCH);
    cr_assert_eq(p[2].addr, 0x3000);
    cr_assert(!p[2].has_exc);
    cr_assert_eq(p[3].exc_num, 15);
    cr_assert_eq(p[3].addr, 0x1C);
    tb_encoder_free(e);
}

/* Table 5.5: a Thumb NOP ran at the IRQ vector: WP update for it first. */
Test(encoder, ptm_nop_at_vector_table_5_5)
{
    pkts k;
    tb_encoder *e = mk(TB_PROTO_PTM, "", &k);
    unsigned n;
    const tb_packet *p;
    tb_exec_record x = exc(TB_EXC_IRQ, 0x18, 0x1004, false);

    x.u.exc.isa = TB_ISA_THUMB;
    push(e, arm(0x1000, 0));
    push(e, x);
    push(e, insn(0x18, TB_ISA_THUMB, 2, TB_WP_NONE, 0, 0x1A, TB_ISA_THUMB));
    push(e, exc(TB_EXC_FIQ, 0x1C, 0x1A, false));
    cr_assert_eq(tb_encoder_finish(e), 0);
    p = after_sync(&k, &n);
    cr_assert_eq(n, 4);
    cr_assert_eq(p[0].kind, TB_PKT_WP_UPDATE);
    cr_assert_eq(p[0].addr, 0x1000);
    cr_assert_eq(p[1].exc_num, 14);
    cr_assert_eq(p[1].isa, TB_ISA_THUMB);
    cr_assert_eq(p[2].kind, TB_PKT_WP_UPDATE);
    cr_assert_eq(p[2].addr, 0x18);
    cr_assert_eq(p[2].isa, TB_ISA_THUMB);
    cr_assert_eq(p[3].exc_num, 15);
    tb_encoder_free(e);
}

/* Return stack (protocol-notes 3.10): BL pushes, the return to the top of
 * stack is a bare E atom; without the stack it is a branch packet. */
Test(encoder, ptm_return_stack)
{
    for (int rs = 0; rs < 2; rs++) {
        pkts k;
        tb_encoder *e = mk(TB_PROTO_PTM, rs ? "rs" : "", &k);
        unsigned n;
        const tb_packet *p;

        push(e, insn(0x1000, TB_ISA_ARM, 4, TB_WP_DIRECT_LINK, TB_INSN_TAKEN, 0x2000,
                     TB_ISA_ARM));
        push(e, insn(0x2000, TB_ISA_ARM, 4, TB_WP_INDIRECT, TB_INSN_TAKEN, 0x1004,
                     TB_ISA_ARM));
        push(e, arm(0x1004, 0));
        cr_assert_eq(tb_encoder_finish(e), 0);
        p = after_sync(&k, &n);
        if (rs) {
            cr_assert_eq(n, 2);
            cr_assert_eq(p[0].kind, TB_PKT_ATOM);
            cr_assert_eq(p[0].bytes[0], 0x88); /* E E, oldest in bit 2 */
            cr_assert_eq(p[1].kind, TB_PKT_WP_UPDATE); /* the trailing 0x1004 */
        } else {
            cr_assert_eq(n, 3);
            cr_assert_eq(p[0].bytes[0], 0x84);
            cr_assert_eq(p[1].kind, TB_PKT_BRANCH);
            cr_assert_eq(p[1].addr, 0x1004);
        }
        tb_encoder_free(e);
    }
}

/* ViewInst exclude: trace stops at the range, an I-sync (trace enable)
 * at the first traced instruction after it. */
Test(encoder, filter_gives_trace_on_isync)
{
    pkts k;
    tb_encoder *e = mk(TB_PROTO_ETMV3, "exclude=0x1004-0x1008", &k);

    push(e, arm(0x1000, 0));
    push(e, arm(0x1004, 0));
    push(e, arm(0x1008, 0));
    cr_assert_eq(tb_encoder_finish(e), 0);
    cr_assert_eq(k.n, 5);
    cr_assert_eq(k.p[2].bytes[0], 0x84);
    cr_assert_eq(k.p[3].kind, TB_PKT_ISYNC);
    cr_assert_eq(k.p[3].reason, TB_ISYNC_TRACE_ON);
    cr_assert_eq(k.p[3].addr, 0x1008);
    cr_assert_eq(k.p[4].bytes[0], 0x84);
    tb_encoder_free(e);
}

Test(encoder, options_and_errors)
{
    tb_encoder_opts o;
    tb_config cfg;
    char err[128];

    tb_encoder_opts_init(&o, TB_PROTO_ETMV3);
    cr_assert_lt(tb_encoder_opts_parse(&o, "bogus", err, sizeof err), 0);
    cr_assert_lt(tb_encoder_opts_parse(&o, "ctxid=3", err, sizeof err), 0);
    cr_assert_eq(tb_encoder_opts_parse(&o, "ca,ts,ctxid=4,bb", err, sizeof err), 0);
    cr_assert_eq(tb_encoder_config(&o, &cfg), 0);
    cr_assert_eq(cfg.etmcr, (1u << 8) | (1u << 12) | (3u << 14) | (1u << 28));
    cr_assert_eq(cfg.arch_minor, 5);
    cr_assert(cfg.cycle_accurate && cfg.timestamps && cfg.branch_broadcast);
    o.return_stack = true; /* PTM only */
    cr_assert_eq(tb_encoder_config(&o, &cfg), TB_ERR_CONFIG);
    tb_encoder_opts_init(&o, TB_PROTO_ETMV3);
    o.arch_minor = 3;
    o.alt_branch = true; /* ETMv3.4+ */
    cr_assert_eq(tb_encoder_config(&o, &cfg), TB_ERR_CONFIG);
    cr_assert_null(tb_encoder_new(&o, NULL, NULL));
}
