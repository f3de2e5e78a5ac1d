/*
 * Full decoder on hand-built packets over small images: the cases the
 * real traces do not exercise (protocol-notes 4.4-4.5 synthetic cases,
 * return stack, back-to-back exceptions IHI0035B 5.2.3, cancel, LSiP,
 * errors as elements), and streaming on a real trace.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tb_test.h"
#include "tracebench/decoder.h"
#include "tracebench/parser.h"
#include "tracebench/stream.h"

#define MAXEL 64

typedef struct elems {
    tb_element v[MAXEL];
    int n;
} elems;

static int collect(void *ctx, const tb_element *el)
{
    elems *e = ctx;

    cr_assert_lt(e->n, MAXEL);
    e->v[e->n++] = *el;
    return 0;
}

/* ARM NOPs (0xE320F000) in code[from, to). */
static void fill_nops(uint8_t *code, int from, int to)
{
    for (int i = from; i < to; i += 4)
        tb_test_le32(code + i, 0xE320F000);
}

static tb_config config(tb_protocol p, bool rstack)
{
    tb_config c;

    tb_config_init(&c, p);
    c.return_stack = rstack;
    c.trace_id = 0x10;
    return c;
}

static tb_packet isync(uint32_t addr, tb_isa isa, uint8_t reason)
{
    tb_packet p;

    memset(&p, 0, sizeof p);
    p.kind = TB_PKT_ISYNC;
    p.addr = addr;
    p.addr_bits = 32;
    p.addr_known = true;
    p.isa = isa;
    p.reason = reason;
    return p;
}

static tb_packet atoms(const char *seq)
{
    tb_packet p;

    memset(&p, 0, sizeof p);
    p.kind = TB_PKT_ATOM;
    p.seq_len = (uint8_t)strlen(seq);
    memcpy(p.seq, seq, p.seq_len);
    for (const char *s = seq; *s; s++)
        p.atom_count += *s != 'W';
    return p;
}

static tb_packet branch(uint32_t addr, tb_isa isa)
{
    tb_packet p;

    memset(&p, 0, sizeof p);
    p.kind = TB_PKT_BRANCH;
    p.addr = addr;
    p.addr_known = true;
    p.isa = isa;
    return p;
}

static tb_packet exc_branch(uint32_t vector, uint16_t num, bool cancel)
{
    tb_packet p = branch(vector, TB_ISA_ARM);

    p.has_exc = true;
    p.exc_num = num;
    p.exc_cancel = cancel;
    p.exc_bytes = 1;
    return p;
}

static void feed(tb_decoder *d, elems *e, const tb_packet *pkts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tb_packet p = pkts[i];

        p.index = i;
        cr_assert_geq(tb_decoder_packet(d, &p, collect, e), 0);
    }
    cr_assert_geq(tb_decoder_finish(d, collect, e), 0);
}

/* The hand-built cases' fixture: an image (code at 0x8000; more with
 * tb_memimage_add on .m), a configuration, and the elements of the
 * last decode. */
typedef struct dec_fx {
    tb_memimage *m;
    tb_config c;
    elems e;
} dec_fx;

static void fx_init(dec_fx *f, tb_protocol proto, bool rstack, const uint8_t *code, size_t n)
{
    memset(f, 0, sizeof *f);
    f->m = tb_memimage_new();
    cr_assert_not_null(f->m);
    f->c = config(proto, rstack);
    if (code)
        cr_assert_eq(tb_memimage_add(f->m, 0x8000, code, n), 0);
}

/* The packets (indices 0..n-1) through a new decoder of f->c into f->e. */
static void fx_decode(dec_fx *f, const tb_packet *p, size_t n)
{
    tb_decoder *d = tb_decoder_new(&f->c, f->m);

    cr_assert_not_null(d);
    memset(&f->e, 0, sizeof f->e);
    feed(d, &f->e, p, n);
    tb_decoder_free(d);
}

static void fx_fini(dec_fx *f)
{
    tb_memimage_free(f->m);
}

/* Elements of one kind, in order. */
static int only(const elems *e, tb_elem_kind k, const tb_element **out, int max)
{
    int n = 0;

    for (int i = 0; i < e->n; i++)
        if (e->v[i].kind == k && n < max)
            out[n++] = &e->v[i];
    return n;
}

static void check_range(const tb_element *r, uint32_t start, uint32_t end, uint32_t count,
                        tb_isa isa, char atom)
{
    cr_assert_eq(r->start, start, "start %08x", r->start);
    cr_assert_eq(r->end, end, "end %08x", r->end);
    cr_assert_eq(r->count, count, "count %u", r->count);
    cr_assert_eq(r->isa, isa);
    cr_assert_eq(r->last_atom, atom);
}

/* protocol-notes 4.5: an A32 ERET ends the range (OpenCSD walks past it
 * to the BX LR and reports 0x8000-0x8010). */
Test(decoder_ptm, a32_eret_is_a_waypoint)
{
    uint8_t code[16];
    dec_fx f;
    const tb_element *r[4];

    tb_test_le32(code, 0xE320F000);      /* NOP */
    tb_test_le32(code + 4, 0xE160006E);  /* ERET */
    tb_test_le32(code + 8, 0xE320F000);  /* NOP */
    tb_test_le32(code + 12, 0xE12FFF1E); /* BX LR */
    fx_init(&f, TB_PROTO_PTM, false, code, sizeof code);
    tb_packet p[] = {isync(0x8000, TB_ISA_ARM, TB_ISYNC_TRACE_ON), branch(0x8020, TB_ISA_ARM)};
    fx_decode(&f, p, 2);
    cr_assert_eq(only(&f.e, TB_ELEM_INSN_RANGE, r, 4), 1);
    check_range(r[0], 0x8000, 0x8008, 2, TB_ISA_ARM, 'E');
    cr_assert_eq(r[0]->last_wp, TB_WP_INDIRECT);
    cr_assert_eq(f.e.v[0].kind, TB_ELEM_NO_SYNC);
    cr_assert_eq(f.e.v[0].reason, TB_GAP_INIT);
    cr_assert_eq(f.e.v[1].kind, TB_ELEM_TRACE_ON);
    cr_assert_eq(f.e.v[f.e.n - 1].kind, TB_ELEM_END);
    fx_fini(&f);
}

/* protocol-notes 4.5: the ISA after BLX(imm) holds into the next
 * P-header (OpenCSD decodes 0x8010.. as A32). */
Test(decoder_etmv3, blx_isa_carries_across_pheaders)
{
    uint8_t code[0x20];
    dec_fx f;
    const tb_element *r[4];

    memset(code, 0, sizeof code);
    tb_test_le32(code, 0xFA000002); /* BLX 0x8010 */
    for (int i = 0; i < 8; i++)
        tb_test_le16(code + 0x10 + 2 * i, 0x46C0); /* MOV r8, r8 */
    fx_init(&f, TB_PROTO_ETMV3, false, code, sizeof code);
    tb_packet p[] = {isync(0x8000, TB_ISA_ARM, 0), atoms("E"), atoms("EEE")};
    fx_decode(&f, p, 3);
    cr_assert_eq(only(&f.e, TB_ELEM_INSN_RANGE, r, 4), 2);
    check_range(r[0], 0x8000, 0x8004, 1, TB_ISA_ARM, 'E');
    cr_assert_eq(r[0]->last_wp, TB_WP_DIRECT_LINK);
    check_range(r[1], 0x8010, 0x8016, 3, TB_ISA_THUMB, 'E');
    fx_fini(&f);
}

/* ETMv3: N atoms mark their instruction in atom_bits; a failed branch
 * does not end the range; Cancel retracts the newest instruction. */
Test(decoder_etmv3, n_atoms_and_cancel)
{
    uint8_t code[0x20];
    dec_fx f;
    const tb_element *r[4], *x[2];

    tb_test_le32(code, 0xE3A00001);      /* MOV r0,#1 */
    tb_test_le32(code + 4, 0x13A00002);  /* MOVNE r0,#2 */
    tb_test_le32(code + 8, 0x0A000010);  /* BEQ far */
    tb_test_le32(code + 12, 0xE3A00003); /* MOV r0,#3 */
    tb_test_le32(code + 16, 0xE3A00004); /* MOV r0,#4 */
    fill_nops(code, 20, 0x20);
    fx_init(&f, TB_PROTO_ETMV3, false, code, sizeof code);
    /* E N N(beq) E E, then IRQ with cancel: 0x8010 did not complete. */
    tb_packet p[] = {isync(0x8000, TB_ISA_ARM, 0), atoms("ENNEE"),
                     exc_branch(0xFFFF0018, 14, true)};
    fx_decode(&f, p, 3);
    cr_assert_eq(only(&f.e, TB_ELEM_INSN_RANGE, r, 4), 1);
    check_range(r[0], 0x8000, 0x8010, 4, TB_ISA_ARM, 'E');
    cr_assert_eq(r[0]->atom_bits, 0x6u);
    cr_assert_eq(only(&f.e, TB_ELEM_EXCEPTION, x, 2), 1);
    cr_assert_eq(x[0]->exc_num, 14);
    cr_assert(x[0]->cancelled);
    cr_assert_eq(x[0]->pref_return, 0x8010);
    cr_assert_eq(x[0]->start, 0xFFFF0018);
    fx_fini(&f);
}

/* Cancel in a Thumb range (IHI0014Q 6.7.1): the instruction before the
 * retracted one becomes the range's last with its own size, waypoint
 * class and atom, here a failed BEQ (16-bit) and then a MOV.W (32-bit). */
Test(decoder_etmv3, thumb_cancel_restores_the_previous_instruction)
{
    uint8_t code[0x20];
    dec_fx f;
    const tb_element *r[4], *x[2];

    memset(code, 0, sizeof code);
    tb_test_le16(code, 0x2001);      /* 0x8000 MOVS r0,#1 */
    tb_test_le16(code + 2, 0xF04F);  /* 0x8002 MOV.W r0,#2 */
    tb_test_le16(code + 4, 0x0002);
    tb_test_le16(code + 6, 0xD004);  /* 0x8006 BEQ 0x8012 */
    tb_test_le16(code + 8, 0x2103);  /* 0x8008 MOVS r1,#3 */
    for (int i = 10; i < 0x20; i += 2)
        tb_test_le16(code + i, 0xBF00); /* NOP */
    fx_init(&f, TB_PROTO_ETMV3, false, code, sizeof code);

    for (int k = 0; k < 2; k++) {
        /* k = 0: E E N(beq) E, cancel retracts 0x8008;
         * k = 1: E E N(beq), cancel retracts the BEQ. */
        tb_packet p[] = {isync(0x8000, TB_ISA_THUMB, 0), atoms(k ? "EEN" : "EENE"),
                         exc_branch(0xFFFF0018, 14, true)};

        fx_decode(&f, p, 3);
        cr_assert_eq(only(&f.e, TB_ELEM_INSN_RANGE, r, 4), 1);
        cr_assert_eq(only(&f.e, TB_ELEM_EXCEPTION, x, 2), 1);
        cr_assert(x[0]->cancelled);
        if (k == 0) {
            check_range(r[0], 0x8000, 0x8008, 3, TB_ISA_THUMB, 'N');
            cr_assert_eq(r[0]->last_addr, 0x8006);
            cr_assert_eq(r[0]->last_size, 2);
            cr_assert_eq(r[0]->last_wp, TB_WP_DIRECT);
            cr_assert_eq(r[0]->atom_bits, 0x4u);
            cr_assert_eq(x[0]->pref_return, 0x8008);
        } else {
            check_range(r[0], 0x8000, 0x8006, 2, TB_ISA_THUMB, 'E');
            cr_assert_eq(r[0]->last_addr, 0x8002);
            cr_assert_eq(r[0]->last_size, 4);
            cr_assert_eq(r[0]->last_wp, TB_WP_NONE);
            cr_assert_eq(r[0]->atom_bits, 0u);
            cr_assert_eq(x[0]->pref_return, 0x8006);
        }
    }
    fx_fini(&f);
}

/* Cycle-accurate ETMv3 Cancel, decoded from hand-made bytes through
 * both ways in (decoder.h): the packet path (tb_parser_push, then
 * tb_decoder_packet per packet) and the fused path (tb_decoder_push).
 * Every W atom is a cycle of the instruction whose E/N atom follows it
 * (protocol-notes 4.2, 6.3); a Cancel (2.7) retracts that instruction
 * but not the cycles it spent, so the decoded counts still add up to
 * all W atoms of the trace.  Image: Thumb at 0x8000
 *   0x8000 MOVS r0,#0   0x8002 B 0x8006   0x8004 NOP   0x8006 UDF #0
 * and the ARM undefined vector at 0x4 (MOV r0,#1; NOP at 0x8). */
typedef struct cancel_cc_case {
    const char *what;
    uint32_t isync_addr;          /* Thumb, trace on */
    uint8_t before[4];            /* P-headers up to the UDF's atom */
    size_t n_before;
    uint32_t r0_end, r0_count, r0_cc, r1_cc, w_total;
} cancel_cc_case;

static void cancel_cc_check(const cancel_cc_case *k, const elems *e, const char *path)
{
    const tb_element *r[4], *x[2];
    uint64_t sum = 0;

    cr_assert_eq(only(e, TB_ELEM_INSN_RANGE, r, 4), 2, "%s, %s", k->what, path);
    cr_assert_eq(only(e, TB_ELEM_EXCEPTION, x, 2), 1, "%s, %s", k->what, path);
    check_range(r[0], k->isync_addr, k->r0_end, k->r0_count, TB_ISA_THUMB, 'E');
    cr_assert_eq(x[0]->exc_num, 9);
    cr_assert(x[0]->cancelled);
    cr_assert_eq(x[0]->pref_return, 0x8006);
    check_range(r[1], 0x4, 0xC, 2, TB_ISA_ARM, 'E');
    cr_assert(r[0]->has_cc && r[1]->has_cc);
    cr_assert_eq(r[0]->cc, k->r0_cc, "%s, %s: first range cc %u", k->what, path, r[0]->cc);
    cr_assert_eq(r[1]->cc, k->r1_cc, "%s, %s: vector range cc %u, want %u", k->what, path,
                 r[1]->cc, k->r1_cc);
    for (int i = 0; i < e->n; i++)
        if (e->v[i].has_cc)
            sum += e->v[i].cc;
    cr_assert_eq(sum, k->w_total, "%s, %s: %llu cycles decoded, the trace has %u W atoms",
                 k->what, path, (unsigned long long)sum, k->w_total);
}

static int collect_pkt(void *ctx, const tb_packet *pkt)
{
    void **dv = ctx; /* decoder, elems */

    return tb_decoder_packet(dv[0], pkt, collect, dv[1]) < 0;
}

static void cancel_cc_run(const cancel_cc_case *k)
{
    uint8_t thumb[0x10], vec[0x10], trace[64];
    size_t n = 0;
    tb_memimage *m = tb_memimage_new();
    tb_config c;

    tb_test_le16(thumb, 0x2000);     /* 0x8000 MOVS r0,#0 */
    tb_test_le16(thumb + 2, 0xE000); /* 0x8002 B 0x8006 */
    tb_test_le16(thumb + 4, 0xBF00); /* 0x8004 NOP */
    tb_test_le16(thumb + 6, 0xDE00); /* 0x8006 UDF #0 */
    for (int i = 8; i < 0x10; i += 2)
        tb_test_le16(thumb + i, 0xBF00);
    fill_nops(vec, 0, 0x10);
    tb_test_le32(vec + 4, 0xE3A00001); /* 0x4 MOV r0,#1 */
    cr_assert_eq(tb_memimage_add(m, 0x8000, thumb, sizeof thumb), 0);
    cr_assert_eq(tb_memimage_add(m, 0x0, vec, sizeof vec), 0);
    /* ETMv3.5, ETMCR[12] cycle-accurate, original branch encoding. */
    cr_assert_eq(tb_config_from_regs(&c, 0x1000, 0x410CF250, 0, 0x10), 0);

    /* A-sync (2.3); I-sync with CC 0, trace on, T bit in the address (2.4). */
    memcpy(trace + n, (const uint8_t[]){0, 0, 0, 0, 0, 0x80}, 6);
    n += 6;
    memcpy(trace + n, (const uint8_t[]){0x70, 0x00, 0x21, (uint8_t)(k->isync_addr | 1),
                                        (uint8_t)(k->isync_addr >> 8), 0, 0}, 7);
    n += 7;
    memcpy(trace + n, k->before, k->n_before);
    n += k->n_before;
    /* Branch to 0x4 ARM (5 bytes, X set), exception byte: Cancel,
     * undefined instruction (9), secure (2.7). */
    memcpy(trace + n, (const uint8_t[]){0x83, 0x80, 0x80, 0x80, 0x48, 0x32}, 6);
    n += 6;
    /* 0x4: W W W W E (format 3, 2.5), the exception entry's cycles
     * and its own; 0x8: W E (format 1). */
    trace[n++] = 0xEC;
    trace[n++] = 0x84;

    for (int fused = 0; fused < 2; fused++) {
        tb_decoder *d = tb_decoder_new(&c, m);
        tb_parser *p = tb_parser_new(&c);
        elems e = {0};
        void *dv[2] = {d, &e};

        cr_assert(d && p);
        if (fused) {
            cr_assert_geq(tb_decoder_push(d, p, trace, n, 0, collect, &e), 0);
            cr_assert_geq(tb_decoder_push_finish(d, p, collect, &e), 0);
        } else {
            cr_assert_geq(tb_parser_push(p, trace, n, 0, collect_pkt, dv), 0);
            cr_assert_geq(tb_parser_finish(p, collect_pkt, dv), 0);
            cr_assert_geq(tb_decoder_finish(d, collect, &e), 0);
        }
        cancel_cc_check(k, &e, fused ? "fused path" : "packet path");
        tb_parser_free(p);
        tb_decoder_free(d);
    }
    tb_memimage_free(m);
}

/* The UDF alone in its range, right after the taken B: the Cancel drops
 * the whole range, and the UDF's cycles go on to the next element with a
 * count, the vector's range.  Separate headers (each atom its own walk)
 * and one header (the range opened inside the atom walk). */
Test(decoder_etmv3, cancel_of_a_lone_instruction_keeps_its_cycles)
{
    /* W E (MOVS, 1) | W W W E (B, 3) | W W E (UDF, 2): the vector's range
     * has the UDF's 2, the entry's 3 and its own 1+1. */
    static const cancel_cc_case sep = {
        "separate headers", 0x8000, {0x84, 0xE8, 0xE4}, 3, 0x8004, 2, 1 + 3, 2 + 4 + 1, 11};
    /* W E W E W E in one format-1 header: MOVS 1, B 1, UDF 1. */
    static const cancel_cc_case one = {
        "one header", 0x8000, {0x8C}, 1, 0x8004, 2, 1 + 1, 1 + 4 + 1, 8};

    cancel_cc_run(&sep);
    cancel_cc_run(&one);
}

/* The control: the UDF after the NOP in one range, the Cancel retracts
 * only the UDF and its cycles stay in that range (retract_last). */
Test(decoder_etmv3, cancel_in_a_range_keeps_its_cycles_there)
{
    /* W E (NOP, 1) | W W E (UDF, 2). */
    static const cancel_cc_case ctl = {
        "control", 0x8004, {0x84, 0xE4}, 2, 0x8006, 1, 1 + 2, 4 + 1, 8};

    cancel_cc_run(&ctl);
}

/* PTM return stack (protocol-notes 3.10): E on BX LR pops the BL's
 * return address; without the stack the address is unknown. */
Test(decoder_ptm, return_stack)
{
    uint8_t code[0x40];
    dec_fx f;
    const tb_element *r[8];

    fill_nops(code, 0, 0x40);
    tb_test_le32(code + 4, 0xEB000006);  /* 0x8004 BL 0x8024 */
    tb_test_le32(code + 0x28, 0xE12FFF1E); /* 0x8028 BX LR */
    tb_test_le32(code + 0x10, 0xEAFFFFFA); /* 0x8010 B 0x8000 */
    fx_init(&f, TB_PROTO_PTM, true, code, sizeof code);
    tb_packet p[] = {isync(0x8000, TB_ISA_ARM, 0), atoms("EEE")};
    fx_decode(&f, p, 2);
    cr_assert_eq(only(&f.e, TB_ELEM_INSN_RANGE, r, 8), 3);
    check_range(r[0], 0x8000, 0x8008, 2, TB_ISA_ARM, 'E');
    check_range(r[1], 0x8024, 0x802C, 2, TB_ISA_ARM, 'E');
    check_range(r[2], 0x8008, 0x8014, 3, TB_ISA_ARM, 'E');

    /* Same trace, stack disabled: the E on BX LR leaves no address. */
    f.c.return_stack = false;
    fx_decode(&f, p, 2);
    cr_assert_eq(only(&f.e, TB_ELEM_INSN_RANGE, r, 8), 2);
    cr_assert_eq(only(&f.e, TB_ELEM_ADDR_UNKNOWN, r, 8), 1);
    fx_fini(&f);
}

/* IHI0035B 5.2.3: back-to-back exceptions; the WP update names the last
 * instruction executed before the first. */
Test(decoder_ptm, wp_update_and_back_to_back_exceptions)
{
    uint8_t code[0x20];
    dec_fx f;
    const tb_element *r[4], *x[4];

    fill_nops(code, 0, 0x20);
    fx_init(&f, TB_PROTO_PTM, false, code, sizeof code);
    tb_packet wp = branch(0x8008, TB_ISA_ARM);

    wp.kind = TB_PKT_WP_UPDATE;
    tb_packet p[] = {isync(0x8000, TB_ISA_ARM, 0), wp, exc_branch(0xFFFF0018, 14, false),
                     exc_branch(0xFFFF001C, 15, false)};
    fx_decode(&f, p, 4);
    cr_assert_eq(only(&f.e, TB_ELEM_INSN_RANGE, r, 4), 1);
    check_range(r[0], 0x8000, 0x800C, 3, TB_ISA_ARM, 'E');
    cr_assert_eq(only(&f.e, TB_ELEM_EXCEPTION, x, 4), 2);
    cr_assert_eq(x[0]->exc_num, 14);
    cr_assert_eq(x[0]->pref_return, 0x800C);
    cr_assert_eq(x[1]->exc_num, 15);
    cr_assert_eq(x[1]->pref_return, 0xFFFF0018); /* nothing ran between */
    fx_fini(&f);
}

/* IHI0035B B.3.2 analyze_waypoint_update: the walk outputs instructions
 * up to the packet's address and passes only non-waypoints (step 5); at
 * a waypoint it stops without passing it (steps 4 and 6), so the atom or
 * branch packet that follows decodes that waypoint (branch_no_excp and
 * analyze_atomheader start at CurrentState).  A WP update naming a
 * waypoint (no PTM emits one: 4.5.5 names an upgraded non-waypoint; a
 * fuzzed trace does) thus leaves the waypoint's outcome to what follows.
 * Found by the ocsd_ptm harness: we took it as executed and went on past
 * it, which is neither the spec's walk nor OpenCSD's (that follows it). */
typedef struct wp_on_wp_case {
    const char *name;
    tb_packet next;           /* after the WP update naming 0x8008 */
    uint32_t wp_end;          /* the branch range: [0x8008, wp_end) */
    char atom;
    uint32_t after;           /* where the following walk starts */
} wp_on_wp_case;

Test(decoder_ptm, wp_update_naming_a_waypoint_leaves_it_to_the_next_atom)
{
    uint8_t code[0x40];
    dec_fx f;
    const wp_on_wp_case cases[] = {
        /* The branch packet's implied E is the BNE's: 0x8008 once. */
        {"branch packet", branch(0x8030, TB_ISA_ARM), 0x800C, 'E', 0x8030},
        /* An N atom: the BNE failed, execution goes on at 0x800C. */
        {"N atom", atoms("N"), 0x800C, 'N', 0x800C},
        /* An E atom: the BNE taken to its target 0x8020. */
        {"E atom", atoms("E"), 0x800C, 'E', 0x8020},
    };

    fill_nops(code, 0, 0x40);
    tb_test_le32(code + 0x08, 0x1A000004); /* 0x8008 BNE 0x8020 */
    tb_test_le32(code + 0x14, 0xEAFFFFFE); /* 0x8014 B . (ends the N walk) */
    tb_test_le32(code + 0x28, 0xEAFFFFFE); /* 0x8028 B . (ends the E walk) */
    tb_test_le32(code + 0x38, 0xEAFFFFFE); /* 0x8038 B . (ends the branch's) */
    fx_init(&f, TB_PROTO_PTM, false, code, sizeof code);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const wp_on_wp_case *w = &cases[k];
        const tb_element *r[8];
        tb_packet wp = branch(0x8008, TB_ISA_ARM);

        wp.kind = TB_PKT_WP_UPDATE;
        tb_packet p[] = {isync(0x8000, TB_ISA_ARM, 0), wp, w->next, atoms("E")};
        fx_decode(&f, p, 4);
        cr_assert_eq(only(&f.e, TB_ELEM_NO_SYNC, r, 8), 1, "%s: only the initial NO_SYNC", w->name);
        cr_assert_eq(only(&f.e, TB_ELEM_INSN_RANGE, r, 8), 3, "%s", w->name);
        /* The WP update: the two NOPs before the BNE, not the BNE. */
        check_range(r[0], 0x8000, 0x8008, 2, TB_ISA_ARM, 'E');
        cr_assert_eq(r[0]->index, 1);
        /* The BNE, decoded by the packet after the WP update. */
        check_range(r[1], 0x8008, w->wp_end, 1, TB_ISA_ARM, w->atom);
        cr_assert_eq(r[1]->last_wp, TB_WP_DIRECT, "%s", w->name);
        cr_assert_eq(r[1]->index, 2);
        /* The last E atom walks on from where that left the flow. */
        cr_assert_eq(r[2]->start, w->after, "%s: walk from %08x", w->name, r[2]->start);
    }
    fx_fini(&f);
}

/* Errors are elements: code missing from the image, a bad packet, a
 * WP update the image contradicts. */
Test(decoder_ptm, errors_are_elements)
{
    uint8_t code[0x10];
    dec_fx f;
    const tb_element *r[8];

    fill_nops(code, 0, 0x10); /* runs off the end: no waypoint */
    fx_init(&f, TB_PROTO_PTM, false, code, sizeof code);
    tb_packet bad;

    memset(&bad, 0, sizeof bad);
    bad.kind = TB_PKT_RESERVED;
    bad.err = TB_ERR_BAD_PACKET;
    tb_packet p[] = {isync(0x8000, TB_ISA_ARM, 0), atoms("E"), atoms("N"), bad, atoms("E"),
                     isync(0x9000, TB_ISA_ARM, 0), atoms("E")};
    fx_decode(&f, p, 7);
    /* The walk executes 0x8000-0x800C, then finds no code at 0x8010. */
    cr_assert_eq(only(&f.e, TB_ELEM_INSN_RANGE, r, 8), 1);
    check_range(r[0], 0x8000, 0x8010, 4, TB_ISA_ARM, 'E');
    cr_assert_eq(only(&f.e, TB_ELEM_ADDR_NACC, r, 8), 2);
    cr_assert_eq(r[0]->start, 0x8010);
    cr_assert_eq(r[0]->err, TB_ERR_NOT_IN_IMAGE);
    cr_assert_eq(r[1]->start, 0x9000);
    cr_assert_eq(only(&f.e, TB_ELEM_ADDR_UNKNOWN, r, 8), 1); /* the N */
    cr_assert_eq(only(&f.e, TB_ELEM_NO_SYNC, r, 8), 2);
    cr_assert_eq(r[1]->reason, TB_GAP_BAD_PACKET);
    /* The E after the bad packet is dropped until the I-sync, which
     * then reports trace on again. */
    cr_assert_eq(only(&f.e, TB_ELEM_TRACE_ON, r, 8), 2);

    /* A WP update behind the current address contradicts the image. */
    tb_packet wp = branch(0x7000, TB_ISA_ARM);

    wp.kind = TB_PKT_WP_UPDATE;
    tb_packet q[] = {isync(0x8004, TB_ISA_ARM, 0), wp};
    fx_decode(&f, q, 2);
    cr_assert_eq(only(&f.e, TB_ELEM_NO_SYNC, r, 8), 2);
    cr_assert_eq(r[1]->reason, TB_GAP_INCONSISTENT);
    fx_fini(&f);
}

/* ETMv3 LSiP (IHI0014Q 7.10.5): the load/store at the 4-byte address
 * executed; decoding resumes at the compressed address. */
Test(decoder_etmv3, lsip_emits_the_load_store)
{
    uint8_t code[0x20];
    dec_fx f;
    const tb_element *r[4];

    fill_nops(code, 0, 0x20);
    tb_test_le32(code + 8, 0xE5910000); /* 0x8008 LDR r0,[r1] */
    fx_init(&f, TB_PROTO_ETMV3, false, code, sizeof code);
    tb_packet s = isync(0x8008, TB_ISA_ARM, TB_ISYNC_TRACE_ON);

    s.lsip = true;
    s.lsip_addr = 0x8014;
    s.lsip_isa = TB_ISA_ARM;
    tb_packet p[] = {s, atoms("E")};
    fx_decode(&f, p, 2);
    cr_assert_eq(only(&f.e, TB_ELEM_INSN_RANGE, r, 4), 2);
    check_range(r[0], 0x8008, 0x800C, 1, TB_ISA_ARM, 'E');
    check_range(r[1], 0x8014, 0x8018, 1, TB_ISA_ARM, 'E');
    fx_fini(&f);
}

/* A loop's turns (ETMv3): each taken BNE ends a range, and a turn with
 * the same atoms is the same range again, with its own packet index and
 * cycle count; a turn with other atoms walks anew, and the turn that
 * leaves the loop runs on past the BNE.  The loop:
 *   0x8000 SUBS r0,r0,#1   0x8004 MOVEQ r1,#0   0x8008 BNE 0x8000
 * Turns while r0 != 0 are E N E (MOVEQ fails); the last is E E N. */
static void loop_turns(bool ca)
{
    uint8_t code[0x20];
    dec_fx f;
    const tb_element *r[16];

    fill_nops(code, 0, 0x20);
    tb_test_le32(code, 0xE2500001);     /* SUBS r0,r0,#1 */
    tb_test_le32(code + 4, 0x03A01000); /* MOVEQ r1,#0 */
    tb_test_le32(code + 8, 0x1AFFFFFC); /* BNE 0x8000 */
    fx_init(&f, TB_PROTO_ETMV3, false, code, sizeof code);
    f.c.cycle_accurate = ca;
    /* Packet 1: three turns; 2: two, then one with other atoms (E E E,
     * as if MOVEQ passed and BNE was still taken); 3: two more turns,
     * the exit turn and two NOPs.  W atoms (cycle-accurate) differ per
     * turn: 1, 1, 2 | 1, 3, 1 | 2, 2, 1 + 1. */
    tb_packet p[] = {isync(0x8000, TB_ISA_ARM, 0),
                     atoms(ca ? "WENEWENEWWENE" : "ENEENEENE"),
                     atoms(ca ? "WENEWWWENEWEEE" : "ENEENEEEE"),
                     atoms(ca ? "WWENEWWENEWEENWEE" : "ENEENEEENEE")};
    static const uint32_t turn_cc[] = {1, 1, 2, 1, 3, 1, 2, 2};
    static const uint64_t turn_pkt[] = {1, 1, 1, 2, 2, 2, 3, 3};

    fx_decode(&f, p, 4);
    cr_assert_eq(only(&f.e, TB_ELEM_INSN_RANGE, r, 16), 9);
    for (int i = 0; i < 8; i++) {
        check_range(r[i], 0x8000, 0x800C, 3, TB_ISA_ARM, 'E');
        cr_assert_eq(r[i]->atom_bits, i == 5 ? 0u : 2u, "turn %d", i);
        cr_assert_eq(r[i]->last_wp, TB_WP_DIRECT);
        cr_assert_eq(r[i]->index, turn_pkt[i], "turn %d: index %llu", i,
                     (unsigned long long)r[i]->index);
        cr_assert_eq(r[i]->has_cc, ca);
        cr_assert_eq(r[i]->cc, ca ? turn_cc[i] : 0, "turn %d: cc %u", i, r[i]->cc);
    }
    /* The exit turn runs on past the failed BNE into the NOPs. */
    check_range(r[8], 0x8000, 0x8014, 5, TB_ISA_ARM, 'E');
    cr_assert_eq(r[8]->atom_bits, 4u);
    cr_assert_eq(r[8]->index, 3);
    cr_assert_eq(r[8]->cc, ca ? 2u : 0u, "cc %u", r[8]->cc);
    fx_fini(&f);
}

Test(decoder_etmv3, loop_turns) { loop_turns(false); }
Test(decoder_etmv3, loop_turns_cycle_accurate) { loop_turns(true); }

/* An ISB is no ETMv3 waypoint, so a range ending at one reports class
 * NONE wherever it ends: here at instruction 31, inside a block, and at
 * instruction 511, the last of a block cut at the cache's length limit
 * (it used to report ISB there).  The B after them is a waypoint. */
Test(decoder_etmv3, isb_is_no_waypoint_wherever_a_range_ends)
{
    enum { NI = 513 };
    static uint8_t code[4 * NI];
    dec_fx f;
    const tb_element *r[20];
    tb_packet p[1 + 33];

    fill_nops(code, 0, 4 * 512);
    tb_test_le32(code + 4 * 31, 0xF57FF06F);  /* ISB */
    tb_test_le32(code + 4 * 511, 0xF57FF06F); /* ISB */
    tb_test_le32(code + 4 * 512, 0xEAFFFDFE); /* B 0x8000 */
    fx_init(&f, TB_PROTO_ETMV3, false, code, sizeof code);
    p[0] = isync(0x8000, TB_ISA_ARM, 0);
    for (int i = 1; i <= 32; i++)
        p[i] = atoms("EEEEEEEEEEEEEEEE");
    p[33] = atoms("E");
    fx_decode(&f, p, 34);
    cr_assert_eq(only(&f.e, TB_ELEM_INSN_RANGE, r, 20), 17);
    for (int i = 0; i < 16; i++) {
        check_range(r[i], 0x8000 + 128 * i, 0x8080 + 128 * i, 32, TB_ISA_ARM, 'E');
        cr_assert_eq(r[i]->last_wp, TB_WP_NONE, "range %d: class %u", i, r[i]->last_wp);
    }
    check_range(r[16], 0x8800, 0x8804, 1, TB_ISA_ARM, 'E');
    cr_assert_eq(r[16]->last_wp, TB_WP_DIRECT);
    fx_fini(&f);
}

/* ETMv3 exception bytes without an exception (number 0) still carry
 * the state where execution goes on (protocol-notes 2.7): a branch whose
 * E1 says Hyp, and then one whose E0 says Non-secure, each change the
 * context. */
Test(decoder_etmv3, branch_exception_bytes_change_state)
{
    uint8_t code[0x20];
    dec_fx f;
    const tb_element *r[4];

    fill_nops(code, 0, 0x20);
    fx_init(&f, TB_PROTO_ETMV3, false, code, sizeof code);
    tb_packet hyp = exc_branch(0x8010, 0, false), ns = exc_branch(0x8018, 0, false);

    hyp.exc_bytes = 2;
    hyp.hyp_valid = true;
    hyp.hyp = true;
    ns.ns_valid = true;
    ns.ns = true;
    tb_packet p[] = {isync(0x8000, TB_ISA_ARM, TB_ISYNC_TRACE_ON), hyp, ns};
    fx_decode(&f, p, 3);
    cr_assert_eq(only(&f.e, TB_ELEM_EXCEPTION, r, 4), 0);
    cr_assert_eq(only(&f.e, TB_ELEM_CONTEXT, r, 4), 3);
    cr_assert_not(r[0]->hyp);
    cr_assert_not(r[0]->ns);
    cr_assert(r[1]->hyp);
    cr_assert_not(r[1]->ns);
    cr_assert(r[2]->hyp);
    cr_assert(r[2]->ns);
    fx_fini(&f);
}

Test(decoder, bad_arguments)
{
    tb_memimage *m = tb_memimage_new();
    tb_config c = config(TB_PROTO_NONE, false);
    tb_packet p;

    memset(&p, 0, sizeof p);
    cr_assert_null(tb_decoder_new(&c, m));
    cr_assert_null(tb_decoder_new(NULL, m));
    c.protocol = TB_PROTO_PTM;
    cr_assert_null(tb_decoder_new(&c, NULL));
    cr_assert_eq(tb_decoder_packet(NULL, &p, collect, NULL), TB_ERR_INVAL);
    cr_assert_eq(tb_decoder_finish(NULL, collect, NULL), TB_ERR_INVAL);
    tb_memimage_free(m);
}

static int stop_at_first(void *ctx, const tb_element *el)
{
    (void)el;
    ++*(int *)ctx;
    return 1;
}

Test(decoder, callback_can_stop)
{
    tb_memimage *m = tb_memimage_new();
    tb_config c = config(TB_PROTO_ETMV3, false);
    tb_decoder *d = tb_decoder_new(&c, m);
    tb_packet p = isync(0x8000, TB_ISA_ARM, 0);
    int calls = 0;

    cr_assert_eq(tb_decoder_packet(d, &p, stop_at_first, &calls), TB_ERR_STOPPED);
    cr_assert_eq(calls, 1);
    tb_decoder_free(d);
    tb_memimage_free(m);
}

/* ---- streaming on real trace: one byte at a time gives the same
 * elements as 64 KiB chunks ---- */

typedef struct run {
    tb_parser *p;
    tb_decoder *d;
    tb_element *v;
    size_t n, cap;
} run;

static int st_elem(void *ctx, const tb_element *el)
{
    run *r = ctx;

    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 4096;
        r->v = realloc(r->v, r->cap * sizeof *r->v);
        cr_assert_not_null(r->v);
    }
    r->v[r->n++] = *el;
    return 0;
}

static int st_pkt(void *ctx, const tb_packet *pkt)
{
    run *r = ctx;

    return tb_decoder_packet(r->d, pkt, st_elem, r) < 0;
}

static int st_bytes(void *ctx, uint64_t index, const uint8_t *data, size_t len)
{
    run *r = ctx;

    return tb_parser_push(r->p, data, len, index, st_pkt, r) < 0;
}

static void decode_chunked(const tb_snapshot *s, const tb_snap_source *src, size_t chunk,
                           run *r)
{
    tb_config cfg;
    tb_memimage *m = NULL;
    char err[256];
    tb_stream_opts o = {.size = sizeof o, .max_chunk = chunk};

    cr_assert_eq(tb_snapshot_source_config(s, src, &cfg, err, sizeof err), 0, "%s", err);
    cr_assert_geq(tb_snapshot_source_memory(s, src, &m, err, sizeof err), 0, "%s", err);
    r->p = tb_parser_new(&cfg);
    r->d = tb_decoder_new(&cfg, m);
    cr_assert_eq(tb_stream_source(s, src, &o, st_bytes, r, err, sizeof err), 0, "%s", err);
    cr_assert_geq(tb_parser_finish(r->p, st_pkt, r), 0);
    cr_assert_geq(tb_decoder_finish(r->d, st_elem, r), 0);
    tb_parser_free(r->p);
    tb_decoder_free(r->d);
    tb_memimage_free(m);
}

Test(decoder, streaming_chunk_size_does_not_matter)
{
    const char *ref = tb_test_reference_dir("decoder streaming");
    char dir[1100], err[256];
    tb_snapshot s;

    if (!ref)
        return;
    snprintf(dir, sizeof dir, "%s/opencsd-snapshots/TC2", ref);
    cr_assert_eq(tb_snapshot_load(&s, dir, err, sizeof err), 0, "%s", err);
    for (int id = 0x10; id <= 0x13; id++) {
        const tb_snap_source *src = tb_stream_find_source(&s, id, err, sizeof err);
        run a = {0}, b = {0};

        cr_assert_not_null(src, "%s", err);
        decode_chunked(&s, src, 0, &a);
        decode_chunked(&s, src, 1, &b);
        cr_assert_gt(a.n, 200u, "0x%x: %zu elements", id, a.n);
        cr_assert_eq(a.n, b.n, "0x%x: %zu vs %zu elements", id, a.n, b.n);
        for (size_t i = 0; i < a.n; i++)
            cr_assert(memcmp(&a.v[i], &b.v[i], sizeof a.v[i]) == 0, "0x%x: element %zu", id,
                      i);
        free(a.v);
        free(b.v);
    }
    tb_snapshot_fini(&s);
}
