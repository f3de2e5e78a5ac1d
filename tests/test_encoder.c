/*
 * Encoder unit tests: hand-made exec records in, packets out, each
 * expectation worked by hand from the spec extracts (IHI0014Q 6.7.1 and
 * 7.3.1, IHI0035B 5.2.3) and protocol-notes.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracebench/decoder.h"
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

static tb_exec_record state(bool ns)
{
    tb_exec_record r;

    memset(&r, 0, sizeof r);
    r.kind = TB_REC_STATE;
    r.cycle = cyc;
    r.u.state.ns = ns;
    return r;
}

/* Secure -> Non-secure at an exception return, then an SVC taken
 * Non-secure, then an SMC back to Secure.  ETMv3 (IHI0014Q 7.3.5;
 * protocol-notes 2.7): the return's branch packet carries exception byte
 * E0 with number 0 and NS = 1 (only the state changed), after five
 * address bytes in the original encoding; the exception packets carry
 * the state at the vector: SVC NS = 1 (E0 = 10 << 1 | 1), SMC NS = 0
 * (E0 = 2 << 1).  PTM (IHI0035B 4.5): the return's branch packet has no
 * exception byte, and an I-sync (periodic, NS: info 0x09) before the
 * next instruction tells the change; SVC E1 = 0x15. */
static void secure_ns_records(tb_encoder *e)
{
    push(e, arm(0x1000, 0));
    push(e, insn(0x1004, TB_ISA_ARM, 4, TB_WP_INDIRECT, TB_INSN_TAKEN | TB_INSN_EXC_RETURN,
                 0x2000, TB_ISA_ARM));
    push(e, state(true));
    push(e, arm(0x2000, 0));
    push(e, insn(0x2004, TB_ISA_ARM, 4, TB_WP_NONE, 0, 0x2008, TB_ISA_ARM)); /* SVC */
    push(e, exc(TB_EXC_SVC, 0x8, 0x2008, false));
    push(e, arm(0x8, 0));
    push(e, insn(0x800C, TB_ISA_ARM, 4, TB_WP_NONE, 0, 0x8010, TB_ISA_ARM)); /* SMC */
    push(e, state(false));
    push(e, exc(TB_EXC_SMC, 0x148, 0x8010, false));
    push(e, arm(0x148, 0));
    cr_assert_eq(tb_encoder_finish(e), 0);
}

Test(encoder, etmv3_security_state_changes)
{
    pkts k;
    tb_encoder *e = mk(TB_PROTO_ETMV3, "", &k);
    unsigned n, i, br = 0;
    const tb_packet *p;

    secure_ns_records(e);
    cr_assert_not(k.p[1].ns, "the run starts Secure");
    p = after_sync(&k, &n);
    for (i = 0; i < n; i++) {
        if (p[i].kind != TB_PKT_BRANCH)
            continue;
        if (br == 0) {
            cr_assert_eq(p[i].size, 6);
            cr_assert_eq(memcmp(p[i].bytes, "\x81\xA0\x80\x80\x48\x01", 6), 0);
        } else if (br == 1) {
            cr_assert_eq(memcmp(p[i].bytes, "\x85\x80\x80\x80\x48\x15", 6), 0);
        } else {
            cr_assert_eq(memcmp(p[i].bytes, "\xA5\x81\x80\x80\x48\x04", 6), 0);
        }
        br++;
    }
    cr_assert_eq(br, 3);
    for (i = 0; i < n; i++)
        cr_assert_neq(p[i].kind, TB_PKT_ISYNC, "no I-sync needed");
    tb_encoder_free(e);
}

Test(encoder, ptm_security_state_changes)
{
    pkts k;
    tb_encoder *e = mk(TB_PROTO_PTM, "", &k);
    unsigned n, i, br = 0, is = 0;
    const tb_packet *p;

    secure_ns_records(e);
    p = after_sync(&k, &n);
    for (i = 0; i < n; i++) {
        if (p[i].kind == TB_PKT_ISYNC) {
            cr_assert_eq(is++, 0);
            cr_assert_eq(br, 1, "after the return's branch");
            cr_assert_eq(p[i].size, 6);
            cr_assert_eq(memcmp(p[i].bytes, "\x08\x00\x20\x00\x00\x09", 6), 0);
        } else if (p[i].kind == TB_PKT_BRANCH) {
            if (br == 0)
                cr_assert_not(p[i].has_exc, "no exception byte for the state change");
            else if (br == 1)
                cr_assert_eq(p[i].bytes[p[i].size - 1], 0x15); /* SVC, NS */
            else
                cr_assert_eq(p[i].bytes[p[i].size - 1], 0x04); /* SMC, Secure */
            br++;
        }
    }
    cr_assert_eq(is, 1);
    cr_assert_eq(br, 3);
    tb_encoder_free(e);
}

/* A change with no branch (an MCR to SCR outside Monitor mode): an
 * I-sync before the next instruction carries it (IHI0014Q 7.10.5,
 * IHI0035B 4.5 info bit 3); PTM first gives a WP update for the
 * instructions since the last waypoint, which the I-sync would drop. */
static void state_without_branch(tb_protocol proto)
{
    pkts k;
    tb_encoder *e = mk(proto, "", &k);
    unsigned n;
    const tb_packet *p;

    push(e, arm(0x1000, 0));
    push(e, arm(0x1004, 0)); /* MCR p15,0,r1,c1,c1,0 */
    push(e, state(true));
    push(e, arm(0x1008, 0));
    cr_assert_eq(tb_encoder_finish(e), 0);
    p = after_sync(&k, &n);
    if (proto == TB_PROTO_PTM) {
        cr_assert_geq(n, 2);
        cr_assert_eq(p[0].kind, TB_PKT_WP_UPDATE);
        cr_assert_eq(p[0].addr, 0x1004);
        p++;
        n--;
    } else {
        cr_assert_eq(p[0].kind, TB_PKT_ATOM); /* E E */
        p++;
        n--;
    }
    cr_assert_geq(n, 1);
    cr_assert_eq(p[0].kind, TB_PKT_ISYNC);
    cr_assert_eq(p[0].addr, 0x1008);
    cr_assert_eq(p[0].reason, TB_ISYNC_PERIODIC);
    cr_assert(p[0].ns);
    tb_encoder_free(e);
}

Test(encoder, etmv3_state_change_without_branch)
{
    state_without_branch(TB_PROTO_ETMV3);
}

Test(encoder, ptm_state_change_without_branch)
{
    state_without_branch(TB_PROTO_PTM);
}

/* PTM, trace off, an SMC from Non-secure code whose return address is
 * traced: the I-sync at the return address (IHI0035B 5.2.3, "trace
 * enabled between back-to-back exceptions") names where Non-secure code
 * goes on, so it says NS; the exception packet after it gives the
 * Monitor's state, Secure. */
Test(encoder, ptm_trace_on_at_smc_return_keeps_its_state)
{
    pkts k;
    tb_encoder *e = mk(TB_PROTO_PTM, "include=0x1000-0x2000", &k);
    unsigned i, is = 0, br = 0;

    push(e, state(true));
    push(e, insn(0x5000, TB_ISA_ARM, 4, TB_WP_NONE, 0, 0x1000, TB_ISA_ARM)); /* SMC */
    push(e, state(false));
    push(e, exc(TB_EXC_SMC, 0x148, 0x1000, false));
    push(e, arm(0x148, 0));
    cr_assert_eq(tb_encoder_finish(e), 0);
    for (i = 0; i < k.n; i++) {
        if (k.p[i].kind == TB_PKT_ISYNC) {
            cr_assert_eq(is++, 0);
            cr_assert_eq(k.p[i].addr, 0x1000);
            cr_assert(k.p[i].ns, "the return address runs Non-secure");
        } else if (k.p[i].kind == TB_PKT_BRANCH) {
            cr_assert_eq(br++, 0);
            cr_assert_eq(is, 1, "after the I-sync");
            cr_assert_eq(k.p[i].exc_num, 2);
            cr_assert_not(k.p[i].ns, "the Monitor runs Secure");
        }
    }
    cr_assert_eq(is, 1);
    cr_assert_eq(br, 1);
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

/* The timestamp counter (issue 35): tsstart= is its value at cycle 0,
 * tsrate= its ticks per cycle; 48-bit timestamps (ETMv3 ts48, ETMCCER[29]
 * clear; PFT1.0) wrap at 2^48.  The first record is cycle 1 (insn()), so
 * the timestamp after the first I-sync is start + rate, worked out by
 * hand below. */
Test(encoder, timestamp_counter_start_rate_and_width)
{
    static const struct {
        tb_protocol proto;
        const char *opts;
        bool ts64;
        uint64_t first; /* start + rate, by hand */
    } rows[] = {
        {TB_PROTO_ETMV3, "ts", true, 1},
        {TB_PROTO_ETMV3, "ts,tsstart=0x1FFFFFF0000000,tsrate=0x100000", true,
         0x1FFFFFF0100000ull},
        {TB_PROTO_ETMV3, "ts,tsstart=0xFFFFFFF00000,tsrate=0x100000", true,
         0x1000000000000ull},
        {TB_PROTO_ETMV3, "ts,ts48,tsstart=0xFFFFFFF00000,tsrate=0x100000", false, 0},
        {TB_PROTO_PTM, "ts,tsstart=0xFFFFFFFFFFFFFFFF,tsrate=2", true, 1},
        {TB_PROTO_PTM, "v=0,ts,tsstart=0xFFFFFFF00000,tsrate=0x100000", false, 0},
        {TB_PROTO_PTM, "v=0,ts,tsstart=0xFFFFFFFFFFFFFFFF", false, 0},
    };

    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        pkts k;
        tb_config cfg;
        tb_encoder_opts o;
        char err[128];
        tb_encoder *e = mk(rows[i].proto, rows[i].opts, &k);
        unsigned n_ts = 0;

        tb_encoder_opts_init(&o, rows[i].proto);
        cr_assert_eq(tb_encoder_opts_parse(&o, rows[i].opts, err, sizeof err), 0);
        cr_assert_eq(tb_encoder_config(&o, &cfg), 0, "%s", rows[i].opts);
        cr_assert_eq(cfg.ts64, rows[i].ts64, "%s: ts64", rows[i].opts);
        push(e, arm(0x8000, 0));
        push(e, arm(0x8004, 0));
        cr_assert_eq(tb_encoder_finish(e), 0);
        for (unsigned j = 0; j < k.n; j++) {
            if (k.p[j].kind != TB_PKT_TIMESTAMP)
                continue;
            if (n_ts++ == 0)
                cr_assert_eq(k.p[j].ts, rows[i].first, "%s: first timestamp 0x%llx, want "
                             "0x%llx", rows[i].opts, (unsigned long long)k.p[j].ts,
                             (unsigned long long)rows[i].first);
        }
        cr_assert_gt(n_ts, 0, "%s: no timestamp", rows[i].opts);
        tb_encoder_free(e);
    }
}

Test(encoder, timestamp_counter_errors)
{
    static const struct {
        tb_protocol proto;
        const char *opts;
        int parse_rc, config_rc;
    } rows[] = {
        {TB_PROTO_ETMV3, "tsstart=5", 0, TB_ERR_CONFIG},     /* no ts */
        {TB_PROTO_ETMV3, "tsrate=2", 0, TB_ERR_CONFIG},
        {TB_PROTO_ETMV3, "ts48", 0, TB_ERR_CONFIG},
        {TB_PROTO_PTM, "ts,ts48", 0, TB_ERR_CONFIG},         /* PTM: v=0 */
        {TB_PROTO_ETMV3, "ts,tsrate=0", TB_ERR_INVAL, 0},
        {TB_PROTO_ETMV3, "ts,tsrate=0x100000000", TB_ERR_INVAL, 0},
        {TB_PROTO_ETMV3, "ts,tsstart=-1", TB_ERR_INVAL, 0},
        {TB_PROTO_ETMV3, "ts,ts48=1", TB_ERR_INVAL, 0},
    };

    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        tb_encoder_opts o;
        tb_config cfg;
        char err[160] = "";

        tb_encoder_opts_init(&o, rows[i].proto);
        cr_assert_eq(tb_encoder_opts_parse(&o, rows[i].opts, err, sizeof err), rows[i].parse_rc,
                     "%s", rows[i].opts);
        if (rows[i].parse_rc)
            continue;
        cr_assert_eq(tb_encoder_config_err(&o, &cfg, err, sizeof err), rows[i].config_rc,
                     "%s", rows[i].opts);
        cr_assert(strstr(err, rows[i].proto == TB_PROTO_PTM ? "v=0" : "ts"), "%s: %s",
                  rows[i].opts, err);
    }
}

/* ---- trigger, and exceptions while trace is off ---- */

/* Sets the instruction count a record carries (trigger=SEQ uses it). */
static tb_exec_record seqd(tb_exec_record r, uint64_t seq)
{
    r.seq = seq;
    return r;
}

typedef struct ours_ctx {
    char *out;
    size_t cap;
} ours_ctx;

/* Our decoder's elements as the same tokens as OpenCSD's (below). */
static int ours_elem(void *ctx, const tb_element *el)
{
    ours_ctx *c = ctx;
    size_t l = strlen(c->out);

    if (el->kind == TB_ELEM_INSN_RANGE) {
        /* ARM only here: four bytes an instruction. */
        for (uint32_t a = el->start; a < el->end; a += 4, l = strlen(c->out))
            snprintf(c->out + l, c->cap - l, "R%x ", a);
    } else if (el->kind == TB_ELEM_EVENT) {
        snprintf(c->out + l, c->cap - l, "T ");
    } else if (el->kind == TB_ELEM_EXCEPTION) {
        snprintf(c->out + l, c->cap - l, "X%x ", el->exc_num);
    }
    return 0;
}

/* Decodes the packets k got, written as a snapshot over an image of
 * `len` bytes at `base` (ARM NOPs, `patch` words laid over them), by
 * OpenCSD (trc_pkt_lister -decode, when installed) and by ours, each as
 * a line of tokens: "R<addr>" per instruction, "T" trigger, "X<num>"
 * exception. */
static void decode_both(const pkts *k, tb_protocol proto, const char *opts, uint32_t base,
                        const uint32_t *patch, size_t n_patch, char *ocsd, char *ours,
                        size_t cap)
{
    char dir[] = "/tmp/tb_enc_unit_XXXXXX", cmd[512], line[512], err[256] = "";
    uint8_t img[256], trace[1024];
    size_t tlen = 0, i;
    tb_encoder_opts o;
    tb_config cfg;
    tb_snap_region r = {base, img, sizeof img};
    FILE *f;

    for (i = 0; i < sizeof img; i += 4)
        memcpy(img + i, "\x00\x00\xA0\xE1", 4); /* MOV r0, r0 */
    for (i = 0; i < n_patch; i++)
        memcpy(img + 4 * i, &patch[i], 4);
    for (i = 0; i < k->n; i++) {
        cr_assert_leq(tlen + k->p[i].size, sizeof trace);
        memcpy(trace + tlen, k->p[i].bytes, k->p[i].size);
        tlen += k->p[i].size;
    }
    tb_encoder_opts_init(&o, proto);
    cr_assert_eq(tb_encoder_opts_parse(&o, opts, err, sizeof err), 0);
    cr_assert_eq(tb_encoder_config(&o, &cfg), 0);
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(tb_encoder_write_snapshot(dir, &cfg, &r, 1, trace, tlen, false, err,
                                           sizeof err), 0, "%s", err);
    ocsd[0] = ours[0] = 0;
    if (system("command -v trc_pkt_lister >/dev/null 2>&1") == 0) {
        snprintf(cmd, sizeof cmd,
                 "cd %s && trc_pkt_lister -ss_dir . -id 0x%x -decode -logfilename o.ppl "
                 ">/dev/null 2>&1", dir, cfg.trace_id);
        cr_assert_eq(system(cmd), 0);
        snprintf(cmd, sizeof cmd, "%s/o.ppl", dir);
        f = fopen(cmd, "r");
        cr_assert_not_null(f);
        while (fgets(line, sizeof line, f)) {
            const char *x = strstr(line, "exec range=0x");
            const char *e = strstr(line, "ELEM_EXCEPTION(");
            size_t l = strlen(ocsd);

            if (x) {
                /* ETMv3 ranges are one instruction each here. */
                unsigned a0, a1;
                cr_assert_eq(sscanf(x, "exec range=0x%x:[0x%x]", &a0, &a1), 2);
                for (; a0 < a1; a0 += 4, l = strlen(ocsd))
                    snprintf(ocsd + l, cap - l, "R%x ", a0);
            } else if (strstr(line, "ELEM_EVENT(") && strstr(line, "Trigger")) {
                snprintf(ocsd + l, cap - l, "T ");
            } else if (e && strstr(e, "excep num (0x")) {
                /* PTM's also names the preferred return first. */
                snprintf(ocsd + l, cap - l, "X%lx ",
                         strtoul(strstr(e, "excep num (0x") + 13, NULL, 16));
            }
        }
        fclose(f);
    } else {
        fprintf(stderr, "\n*** SKIPPED: trc_pkt_lister not installed (OpenCSD side) ***\n\n");
        if (getenv("CI") && !strcmp(getenv("CI"), "true"))
            cr_assert_fail("trc_pkt_lister (libopencsd-bin) missing under CI=true");
    }
    {
        ours_ctx c = {ours, cap};

        cr_assert_eq(tb_decode_snapshot(dir, -1, ours_elem, &c, err, sizeof err), 0, "%s",
                     err);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

#define NOP 0xE1A00000u

/* trigger=3: the trigger packet goes out before instruction 3.  Atoms
 * are in execution order (IHI0014Q 7.3.1), so instructions 1-2 close a
 * header first: E E | trigger (0x0C, no payload, protocol-notes 2.8) |
 * E E.  OpenCSD and our decoder put the trigger between 0x1004 and
 * 0x1008. */
Test(encoder, etmv3_trigger_before_seq)
{
    pkts k;
    tb_encoder *e = mk(TB_PROTO_ETMV3, "trigger=3", &k);
    unsigned n;
    const tb_packet *p;
    char oc[256], ou[256];

    for (unsigned i = 0; i < 4; i++)
        push(e, seqd(arm(0x1000 + 4 * i, 0), i + 1));
    cr_assert_eq(tb_encoder_finish(e), 0);
    p = after_sync(&k, &n);
    cr_assert_eq(n, 3);
    cr_assert_eq(p[0].bytes[0], 0x88);
    cr_assert_eq(p[1].kind, TB_PKT_TRIGGER);
    cr_assert_eq(p[1].size, 1);
    cr_assert_eq(p[1].bytes[0], 0x0C);
    cr_assert_eq(p[2].bytes[0], 0x88);
    tb_encoder_free(e);
    decode_both(&k, TB_PROTO_ETMV3, "trigger=3", 0x1000, NULL, 0, oc, ou, sizeof oc);
    cr_assert_str_eq(ou, "R1000 R1004 T R1008 R100c ");
    if (*oc)
        cr_assert_str_eq(oc, "R1000 R1004 T R1008 R100c ");
}

/* PTM: B 0x1010, B 0x1020, B 0x1030 (trigger=3 before the third), NOP.
 * The held atoms go out before the trigger (E E = 0x88), then the
 * trigger, then E (0x84), and trace end brings the WP update for the
 * NOP at 0x1030 (protocol-notes 3.8). */
Test(encoder, ptm_trigger_before_seq)
{
    static const uint32_t img[13] = {0xEA000002, NOP, NOP, NOP, 0xEA000002, NOP, NOP, NOP,
                                     0xEA000002, NOP, NOP, NOP, NOP};
    pkts k;
    tb_encoder *e = mk(TB_PROTO_PTM, "trigger=3", &k);
    unsigned n;
    const tb_packet *p;
    char oc[256], ou[256];

    for (unsigned i = 0; i < 3; i++)
        push(e, seqd(insn(0x1000 + 16 * i, TB_ISA_ARM, 4, TB_WP_DIRECT, TB_INSN_TAKEN,
                          0x1010 + 16 * i, TB_ISA_ARM), i + 1));
    push(e, seqd(arm(0x1030, 0), 4));
    cr_assert_eq(tb_encoder_finish(e), 0);
    p = after_sync(&k, &n);
    cr_assert_eq(n, 4);
    cr_assert_eq(p[0].bytes[0], 0x88);
    cr_assert_eq(p[1].kind, TB_PKT_TRIGGER);
    cr_assert_eq(p[1].bytes[0], 0x0C);
    cr_assert_eq(p[2].bytes[0], 0x84);
    cr_assert_eq(p[3].kind, TB_PKT_WP_UPDATE);
    cr_assert_eq(p[3].addr, 0x1030);
    tb_encoder_free(e);
    decode_both(&k, TB_PROTO_PTM, "trigger=3", 0x1000, img, 13, oc, ou, sizeof oc);
    cr_assert_str_eq(ou, "R1000 R1010 T R1020 R1030 ");
    if (*oc)
        cr_assert_str_eq(oc, "R1000 R1010 T R1020 R1030 ");
}

/* An IRQ taken from traced code (include 0x1000-0x1100) into a handler
 * the filter leaves out: the exception is traced, because trace is on
 * when it is taken (ETMv3 branch with exception bytes, IHI0014Q 6.7.1;
 * PTM WP update for 0x1000-0x1004 first, IHI0035B 5.2.3); the handler
 * gives nothing; the return to 0x1008 turns trace on again with an
 * I-sync, reason trace enable (protocol-notes 2.10). */
static void irq_into_excluded_handler(tb_protocol proto)
{
    pkts k;
    tb_encoder *e = mk(proto, "include=0x1000-0x1100", &k);
    unsigned n;
    const tb_packet *p;
    char oc[256], ou[256];
    bool ptm = proto == TB_PROTO_PTM;

    push(e, arm(0x1000, 0));
    push(e, arm(0x1004, 0));
    push(e, exc(TB_EXC_IRQ, 0x18, 0x1008, false));
    push(e, arm(0x18, 0));
    push(e, insn(0x1C, TB_ISA_ARM, 4, TB_WP_INDIRECT, TB_INSN_TAKEN | TB_INSN_EXC_RETURN,
                 0x1008, TB_ISA_ARM));
    push(e, arm(0x1008, 0));
    cr_assert_eq(tb_encoder_finish(e), 0);
    p = after_sync(&k, &n);
    cr_assert_eq(n, 4);
    if (ptm) {
        cr_assert_eq(p[0].kind, TB_PKT_WP_UPDATE);
        cr_assert_eq(p[0].addr, 0x1004);
    } else {
        cr_assert_eq(p[0].bytes[0], 0x88); /* E E */
    }
    cr_assert_eq(p[1].kind, TB_PKT_BRANCH);
    cr_assert(p[1].has_exc);
    cr_assert_eq(p[1].exc_num, 14); /* IRQ */
    cr_assert_eq(p[1].addr, 0x18);
    cr_assert_eq(p[2].kind, TB_PKT_ISYNC);
    cr_assert_eq(p[2].reason, TB_ISYNC_TRACE_ON);
    cr_assert_eq(p[2].addr, 0x1008);
    if (ptm) {
        cr_assert_eq(p[3].kind, TB_PKT_WP_UPDATE); /* trace end */
        cr_assert_eq(p[3].addr, 0x1008);
    } else {
        cr_assert_eq(p[3].bytes[0], 0x84); /* E */
    }
    tb_encoder_free(e);
    decode_both(&k, proto, "include=0x1000-0x1100", 0x1000, NULL, 0, oc, ou, sizeof oc);
    cr_assert_str_eq(ou, "R1000 R1004 Xe R1008 ");
    if (*oc)
        cr_assert_str_eq(oc, "R1000 R1004 Xe R1008 ");
}

Test(encoder, etmv3_irq_into_excluded_handler)
{
    irq_into_excluded_handler(TB_PROTO_ETMV3);
}

Test(encoder, ptm_irq_into_excluded_handler)
{
    irq_into_excluded_handler(TB_PROTO_PTM);
}

/* An IRQ taken while trace is off (only 0x0-0x100 traced), its handler
 * traced: no exception packet (trace was off when it was taken, and the
 * return address 0x1004 is not traced); trace starts with the I-sync at
 * the vector.  The handler's MOVS pc,lr: ETMv3 E E, 0x76, branch to
 * 0x1004 (the A7's order, protocol-notes 2.8); PTM branch to 0x1004,
 * then 0x76 (protocol-notes 3.9). */
Test(encoder, exception_while_trace_off_handler_traced)
{
    for (int ptm = 0; ptm < 2; ptm++) {
        pkts k;
        tb_encoder *e = mk(ptm ? TB_PROTO_PTM : TB_PROTO_ETMV3, "include=0x0-0x100", &k);
        unsigned n;
        const tb_packet *p;

        push(e, arm(0x1000, 0));
        push(e, exc(TB_EXC_IRQ, 0x18, 0x1004, false));
        push(e, arm(0x18, 0));
        push(e, insn(0x1C, TB_ISA_ARM, 4, TB_WP_INDIRECT,
                     TB_INSN_TAKEN | TB_INSN_EXC_RETURN, 0x1004, TB_ISA_ARM));
        push(e, arm(0x1004, 0));
        cr_assert_eq(tb_encoder_finish(e), 0);
        p = after_sync(&k, &n);
        cr_assert_eq(k.p[1].addr, 0x18);
        cr_assert_eq(k.p[1].reason, TB_ISYNC_TRACE_ON);
        if (ptm) {
            cr_assert_eq(n, 2);
            cr_assert_eq(p[0].kind, TB_PKT_BRANCH);
            cr_assert(!p[0].has_exc);
            cr_assert_eq(p[0].addr, 0x1004);
            cr_assert_eq(p[1].kind, TB_PKT_EXC_RETURN);
        } else {
            cr_assert_eq(n, 3);
            cr_assert_eq(p[0].bytes[0], 0x88);
            cr_assert_eq(p[1].kind, TB_PKT_EXC_RETURN);
            cr_assert_eq(p[2].kind, TB_PKT_BRANCH);
            cr_assert(!p[2].has_exc);
            cr_assert_eq(p[2].addr, 0x1004);
        }
        tb_encoder_free(e);
    }
}

/* IHI0035B 5.2.3, "Turning trace on between two back-to-back
 * exceptions": the IRQ is taken in untraced code, the FIQ arrives before
 * the IRQ handler's first instruction, and the IRQ vector 0x18 is
 * traced.  The PTM gives an I-sync at 0x18, then the FIQ's exception
 * branch to 0x1C, and no WP update; then BX r0 at 0x1C.  (Regression:
 * the encoder used to start at 0x1C and lose the FIQ.)  OpenCSD and ours
 * decode the FIQ and then 0x1C. */
Test(encoder, ptm_trace_on_between_back_to_back)
{
    static const uint32_t img[8] = {NOP, NOP, NOP, NOP, NOP, NOP, NOP, 0xE12FFF10};
    pkts k;
    tb_encoder *e = mk(TB_PROTO_PTM, "include=0x0-0x100", &k);
    unsigned n;
    const tb_packet *p;
    char oc[256], ou[256];

    push(e, arm(0x5000, 0));
    push(e, exc(TB_EXC_IRQ, 0x18, 0x5004, false));
    push(e, exc(TB_EXC_FIQ, 0x1C, 0x18, false));
    push(e, insn(0x1C, TB_ISA_ARM, 4, TB_WP_INDIRECT, TB_INSN_TAKEN, 0x2000, TB_ISA_ARM));
    cr_assert_eq(tb_encoder_finish(e), 0);
    p = after_sync(&k, &n);
    cr_assert_eq(k.p[1].addr, 0x18);
    cr_assert_eq(k.p[1].isa, TB_ISA_ARM);
    cr_assert_eq(k.p[1].reason, TB_ISYNC_TRACE_ON);
    cr_assert_eq(n, 2);
    cr_assert_eq(p[0].kind, TB_PKT_BRANCH);
    cr_assert(p[0].has_exc);
    cr_assert_eq(p[0].exc_num, 15); /* FIQ */
    cr_assert_eq(p[0].addr, 0x1C);
    cr_assert_eq(p[1].kind, TB_PKT_BRANCH);
    cr_assert(!p[1].has_exc);
    cr_assert_eq(p[1].addr, 0x2000);
    tb_encoder_free(e);
    decode_both(&k, TB_PROTO_PTM, "include=0x0-0x100", 0x0, img, 8, oc, ou, sizeof oc);
    cr_assert_str_eq(ou, "Xf R1c ");
    if (*oc)
        cr_assert_str_eq(oc, "Xf R1c ");
}

/* Issue 29, generated seed 155 (`ctxid=4,fifo=48:1/8`, PTM and ETMv3):
 * the packet callback ran only after the packet's bytes had gone to the
 * sink.  The round trip marks, from the callback, the instruction where an
 * overflow I-sync resumes; its sink feeds the decoder at once, which shows
 * the I-sync's CONTEXT (the context where trace resumes, IHI0035B 4.5,
 * IHI0014Q 7.10.5) before the mark was made, so a context that changed
 * inside the gap was checked against the one before it.  Whatever the
 * sink feeds, a packet's callback comes first: when it runs, the sink has
 * had exactly the bytes before the packet (p->index of them). */
typedef struct {
    uint64_t sunk;          /* bytes the sink has had */
    unsigned pkts, late;    /* callbacks; those after their own bytes */
    unsigned resumes;       /* overflow I-syncs seen */
    uint32_t resume_ctx;
} order_probe;

static int order_sink(void *ctx, const uint8_t *data, size_t len)
{
    (void)data;
    ((order_probe *)ctx)->sunk += len;
    return 0;
}

static int order_pkt(void *ctx, const tb_packet *p)
{
    order_probe *o = ctx;

    o->pkts++;
    if (o->sunk != p->index)
        o->late++;
    if (p->kind == TB_PKT_ISYNC && p->reason == TB_ISYNC_OVERFLOW) {
        o->resumes++;
        o->resume_ctx = p->context_id;
    }
    return 0;
}

Test(encoder, packet_callback_runs_before_the_bytes_reach_the_sink)
{
    static const tb_protocol protos[] = {TB_PROTO_ETMV3, TB_PROTO_PTM};

    for (size_t k = 0; k < 2; k++) {
        tb_encoder_opts o;
        order_probe pr = {0};
        tb_exec_record r;
        char err[128];
        tb_encoder *e;

        tb_encoder_opts_init(&o, protos[k]);
        /* 48 bytes drained at one byte per 16 cycles: a run of far
         * indirect branches (5-byte addresses) overflows it. */
        cr_assert_eq(tb_encoder_opts_parse(&o, "ctxid=4,fifo=48:1/16", err, sizeof err), 0,
                     "%s", err);
        e = tb_encoder_new(&o, order_sink, &pr);
        cr_assert(e);
        tb_encoder_set_packet_cb(e, order_pkt, &pr);
        cyc = 0;
        memset(&r, 0, sizeof r);
        r.kind = TB_REC_CONTEXT;
        r.u.ctx.context_id = 0x11;
        push(e, r);
        for (uint32_t i = 0; i < 40; i++) {
            uint32_t a = 0x10000000u + 0x01000000u * (i % 2) + 0x100u * i;
            uint32_t t = 0x20000000u + 0x01000000u * (i % 2) + 0x100u * i;

            push(e, insn(a, TB_ISA_ARM, 4, TB_WP_INDIRECT, 0, t, TB_ISA_ARM));
            if (i == 20) {
                r.cycle = cyc;
                r.u.ctx.context_id = 0x55; /* changed inside the gap */
                push(e, r);
            }
        }
        /* Idle long enough for the FIFO to drain, then trace resumes. */
        cyc += 48 * 16 * 2;
        push(e, arm(0x3000, 0));
        push(e, arm(0x3004, 0));
        cr_assert_eq(tb_encoder_finish(e), 0);
        cr_assert_gt(tb_encoder_get_stats(e)->overflows, 0, "%s: no overflow",
                     tb_protocol_name(protos[k]));
        cr_assert_gt(pr.resumes, 0, "%s: no overflow I-sync", tb_protocol_name(protos[k]));
        cr_assert_eq(pr.resume_ctx, 0x55, "%s", tb_protocol_name(protos[k]));
        cr_assert_gt(pr.pkts, 4);
        cr_assert_eq(pr.late, 0, "%s: %u of %u packets reached the sink before their callback",
                     tb_protocol_name(protos[k]), pr.late, pr.pkts);
        tb_encoder_free(e);
    }
}

/* Plain P-headers (no cycle accuracy) get their byte from flush_plain,
 * not from the writer, and share one packet per flush.  Each ATOM
 * packet's byte is read back here by IHI0014Q 7.3.1 Table 7.2 (format
 * 1 b1NEEEE00: E^k then N when bit 6 is set; format 2 b1000AB10: A, B
 * the two atoms oldest first, 1 for N) and must give the packet's own
 * seq; the packet must hold nothing past its atoms (as a new packet
 * would) and the atoms together must be the instructions' E/N in order.
 * The same through single pushes and through one batch (insn_run). */
typedef struct hdr_probe {
    char atoms[4096];
    unsigned n_atoms, headers, bad, fmt2, e15, branches;
    char why[160];
} hdr_probe;

static int hdr_pkt_cb(void *ctx, const tb_packet *p)
{
    hdr_probe *h = ctx;
    char seq[20];
    unsigned n = 0;
    uint8_t b = p->bytes[0];

    h->branches += p->kind == TB_PKT_BRANCH;
    if (p->kind != TB_PKT_ATOM)
        return 0;
    h->headers++;
    if (p->size != 1 || p->w_count || p->atom_count != p->seq_len) {
        if (!h->bad++)
            snprintf(h->why, sizeof h->why, "header %u: size %u, %u W, %u atoms, seq_len %u",
                     h->headers, p->size, p->w_count, p->atom_count, p->seq_len);
        return 0;
    }
    if ((b & 0x83) == 0x80) {
        for (unsigned i = 0; i < ((b >> 2) & 15u); i++)
            seq[n++] = 'E';
        if (b & 0x40)
            seq[n++] = 'N';
        h->e15 += ((b >> 2) & 15u) == 15;
    } else if ((b & 0xF3) == 0x82) {
        h->fmt2++;
        seq[n++] = (b & 0x08) ? 'N' : 'E';
        seq[n++] = (b & 0x04) ? 'N' : 'E';
    }
    if (n != p->seq_len || memcmp(seq, p->seq, n) != 0) {
        if (!h->bad++)
            snprintf(h->why, sizeof h->why, "header %u: byte 0x%02X for seq %.*s", h->headers,
                     b, (int)p->seq_len, p->seq);
        return 0;
    }
    for (unsigned i = p->seq_len; i < sizeof p->seq; i++)
        if (p->seq[i]) {
            if (!h->bad++)
                snprintf(h->why, sizeof h->why, "header %u (%.*s): seq[%u] is 0x%02X", h->headers,
                         (int)p->seq_len, p->seq, i, (unsigned)(uint8_t)p->seq[i]);
            return 0;
        }
    if (h->n_atoms + n <= sizeof h->atoms) {
        memcpy(h->atoms + h->n_atoms, seq, n);
        h->n_atoms += n;
    }
    return 0;
}

Test(encoder, etmv3_plain_headers_read_back_by_the_spec)
{
    static tb_exec_record recs[2000];
    char want[2000];
    unsigned seed = 12345, nw = 0, nbr = 0;

    cyc = 0;
    /* Runs of E of every length up to 40 with single and paired N's
     * between (formats 1 and 2, the 15-E limit), and an indirect branch
     * now and then (the queue flushed short). */
    for (unsigned i = 0; i < 2000; i++) {
        uint32_t a = 0x1000 + 4 * i;
        bool n, br;

        seed = seed * 1103515245u + 12345u;
        n = ((seed >> 16) % 7) < (i % 40 < 20 ? 1u : 3u);
        br = ((seed >> 8) % 97) == 0;
        recs[i] = br && !n ? insn(a, TB_ISA_ARM, 4, TB_WP_INDIRECT, 0, a + 4, TB_ISA_ARM)
                           : arm(a, n ? TB_INSN_COND_FAILED | TB_INSN_CONDITIONAL : 0);
        want[nw++] = n ? 'N' : 'E';
        nbr += br && !n;
    }
    for (int batch = 0; batch < 2; batch++) {
        tb_encoder_opts o;
        hdr_probe h;
        tb_encoder *e;

        memset(&h, 0, sizeof h);
        tb_encoder_opts_init(&o, TB_PROTO_ETMV3);
        e = tb_encoder_new(&o, NULL, NULL);
        cr_assert(e);
        tb_encoder_set_packet_cb(e, hdr_pkt_cb, &h);
        if (batch) {
            cr_assert_eq(tb_encoder_push_many(e, recs, 2000, NULL, NULL), 0);
        } else {
            for (unsigned i = 0; i < 2000; i++)
                cr_assert_eq(tb_encoder_push(e, &recs[i]), 0);
        }
        cr_assert_eq(tb_encoder_finish(e), 0);
        cr_assert_eq(h.bad, 0, "%s: %u bad headers; first: %s", batch ? "batch" : "pushes",
                     h.bad, h.why);
        cr_assert_gt(h.headers, 100);
        cr_assert(h.fmt2 > 0 && h.e15 > 0, "%u format 2 headers, %u of 15 E", h.fmt2, h.e15);
        cr_assert_eq(h.branches, nbr, "%s: %u branch packets for %u indirect branches",
                     batch ? "batch" : "pushes", h.branches, nbr);
        cr_assert_eq(h.n_atoms, nw, "%s: %u atoms in the headers, %u instructions",
                     batch ? "batch" : "pushes", h.n_atoms, nw);
        cr_assert_eq(memcmp(h.atoms, want, nw), 0, "%s: the atoms differ",
                     batch ? "batch" : "pushes");
        tb_encoder_free(e);
    }
}

static int count_pkt(void *ctx, const tb_packet *p)
{
    (void)p;
    ++*(unsigned *)ctx;
    return 0;
}

/* A batch refuses what single pushes refuse (encoder.h: "Errors as
 * tb_encoder_push"): an instruction of size other than 2 or 4, or of an
 * ISA other than ARM or Thumb, in the middle of a run of plain
 * instructions (which the protocols take in one call, insn_run), gives
 * the push's error, after the same packets. */
Test(encoder, batch_refuses_what_a_push_refuses)
{
    static const struct {
        uint8_t size, isa;
        int rc;
    } bad[] = {{3, TB_ISA_ARM, TB_ERR_INVAL},     {0, TB_ISA_ARM, TB_ERR_INVAL},
               {6, TB_ISA_THUMB, TB_ERR_INVAL},   {8, TB_ISA_ARM, TB_ERR_INVAL},
               {0x82, TB_ISA_ARM, TB_ERR_INVAL},  {4, 2, TB_ERR_UNSUPPORTED},
               {2, 0xFF, TB_ERR_UNSUPPORTED}};
    static const tb_protocol protos[] = {TB_PROTO_ETMV3, TB_PROTO_PTM};

    for (size_t p = 0; p < 2; p++)
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            tb_exec_record recs[50];
            unsigned pk[2] = {0, 0};
            int rc[2] = {0, 0};

            cyc = 0;
            for (unsigned i = 0; i < 50; i++)
                recs[i] = arm(0x1000 + 4 * i, i % 5 == 0 ? TB_INSN_COND_FAILED : 0);
            recs[20].u.insn.size = bad[b].size;
            recs[20].u.insn.isa = bad[b].isa;
            for (int batch = 0; batch < 2; batch++) {
                tb_encoder_opts o;
                tb_encoder *e;

                tb_encoder_opts_init(&o, protos[p]);
                e = tb_encoder_new(&o, NULL, NULL);
                cr_assert(e);
                tb_encoder_set_packet_cb(e, count_pkt, &pk[batch]);
                if (batch)
                    rc[1] = tb_encoder_push_many(e, recs, 50, NULL, NULL);
                else
                    for (unsigned i = 0; i < 50 && rc[0] >= 0; i++)
                        rc[0] = tb_encoder_push(e, &recs[i]);
                tb_encoder_free(e);
            }
            cr_assert_eq(rc[0], bad[b].rc, "%s size %u isa %u: push gave %d",
                         tb_protocol_name(protos[p]), bad[b].size, bad[b].isa, rc[0]);
            cr_assert_eq(rc[1], rc[0], "%s size %u isa %u: batch gave %d, push %d",
                         tb_protocol_name(protos[p]), bad[b].size, bad[b].isa, rc[1], rc[0]);
            cr_assert_eq(pk[1], pk[0], "%s size %u isa %u: %u packets in a batch, %u pushed",
                         tb_protocol_name(protos[p]), bad[b].size, bad[b].isa, pk[1], pk[0]);
        }
}
