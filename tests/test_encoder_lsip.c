/*
 * ETMv3 LSiP I-syncs and P-header format 4 (issue 22):
 *  - the parser on the worked examples of ../shared/docs/etmv3-data.md
 *    (11.3: OpenCSD's Go test vector `08 80 00 00 00 80 03`; 17: E4
 *    `08 A0 00 80 00 00 03`, E5's cycle count), byte for byte;
 *  - the writer making E4 (with info bit 0 set, the encoders' convention,
 *    protocol-notes 2.4);
 *  - the decoder: an LSiP I-sync implies its load/store executed, then
 *    decoding goes on at the compressed address (IHI0014Q 7.10.5,
 *    7.14.2; protocol-notes 4.2 step 2), on the packet and fused paths;
 *  - the encoder's LSiP rule (docs/etmv3-data-model.md L1-L3) on
 *    hand-made records, and where it must not apply;
 *  - bad input: an LSiP address cut by the end of the stream, format 4
 *    outside cycle-accurate mode and before ETMv3.3: an error element
 *    with its reason, then decoding resumes at the next sync.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebench/decoder.h"
#include "tracebench/encoder.h"
#include "tracebench/parser.h"
#include "tracebench/snapshot.h"
#include "tracebench/writer.h"

#define ETMIDR_35 0x410CF250u
#define ETMIDR_32 0x410CF220u
#define MAXV 64

typedef struct pvec {
    tb_packet p[MAXV];
    unsigned n;
} pvec;

static int on_pkt(void *ctx, const tb_packet *p)
{
    pvec *v = ctx;

    cr_assert_lt(v->n, MAXV);
    v->p[v->n++] = *p;
    return 0;
}

static tb_config cfg_of(uint32_t etmcr, uint32_t etmidr)
{
    tb_config c;

    cr_assert_eq(tb_config_from_regs(&c, etmcr, etmidr, 0, 0x10), 0);
    return c;
}

/* A-sync, then b; the packets after the A-sync. */
static void parse(const tb_config *c, const uint8_t *b, size_t n, pvec *v)
{
    static const uint8_t async[6] = {0, 0, 0, 0, 0, 0x80};
    tb_parser *p = tb_parser_new(c);

    memset(v, 0, sizeof *v);
    cr_assert_not_null(p);
    cr_assert_geq(tb_parser_push(p, async, 6, 0, on_pkt, v), 0);
    cr_assert_geq(tb_parser_push(p, b, n, 6, on_pkt, v), 0);
    cr_assert_geq(tb_parser_finish(p, on_pkt, v), 0);
    tb_parser_free(p);
    cr_assert_geq(v->n, 2);
    cr_assert_eq(v->p[0].kind, TB_PKT_ASYNC);
}

/* etmv3-data.md 11.3: OpenCSD's Go test vector, LSiP instruction
 * 0x80000000 (ARM), next address 0x80000004, reason periodic. */
Test(lsip, parser_go_vector)
{
    static const uint8_t b[] = {0x08, 0x80, 0x00, 0x00, 0x00, 0x80, 0x03};
    tb_config c = cfg_of(0, ETMIDR_35);
    pvec v;

    parse(&c, b, sizeof b, &v);
    cr_assert_eq(v.n, 2);
    cr_assert_eq(v.p[1].kind, TB_PKT_ISYNC);
    cr_assert_eq(v.p[1].size, 7);
    cr_assert_eq(memcmp(v.p[1].bytes, b, 7), 0);
    cr_assert_eq(v.p[1].reason, TB_ISYNC_PERIODIC);
    cr_assert_eq(v.p[1].addr, 0x80000000u);
    cr_assert_eq(v.p[1].isa, TB_ISA_ARM);
    cr_assert(v.p[1].lsip);
    cr_assert_eq(v.p[1].lsip_addr, 0x80000004u);
    cr_assert_eq(v.p[1].lsip_isa, TB_ISA_ARM);
    cr_assert_not(v.p[1].has_cc);
}

/* etmv3-data.md 17 E4 (LSiP at trace enable: LDMIA at 0x8000, next 0x8004)
 * and, with E5's count of 300 (`AC 02`), its 0x70 form. */
Test(lsip, parser_e4_and_cycle_count)
{
    static const uint8_t e4[] = {0x08, 0xA0, 0x00, 0x80, 0x00, 0x00, 0x03};
    static const uint8_t e4cc[] = {0x70, 0xAC, 0x02, 0xA0, 0x00, 0x80, 0x00, 0x00, 0x03};
    tb_config c = cfg_of(0, ETMIDR_35), ca = cfg_of(1u << 12, ETMIDR_35);
    pvec v;

    parse(&c, e4, sizeof e4, &v);
    cr_assert_eq(v.n, 2);
    cr_assert_eq(v.p[1].reason, TB_ISYNC_TRACE_ON);
    cr_assert_eq(v.p[1].addr, 0x8000);
    cr_assert(v.p[1].lsip);
    cr_assert_eq(v.p[1].lsip_addr, 0x8004);
    parse(&ca, e4cc, sizeof e4cc, &v);
    cr_assert_eq(v.n, 2);
    cr_assert_eq(v.p[1].size, sizeof e4cc);
    cr_assert(v.p[1].has_cc);
    cr_assert_eq(v.p[1].cc, 300);
    cr_assert(v.p[1].lsip);
    cr_assert_eq(v.p[1].addr, 0x8000);
    cr_assert_eq(v.p[1].lsip_addr, 0x8004);
}

/* E4 from the writer: the same bytes but info bit 0, which every real
 * I-sync has set and encoders write (protocol-notes 2.4). */
Test(lsip, writer_e4)
{
    static const uint8_t want[] = {0x08, 0xA1, 0x00, 0x80, 0x00, 0x00, 0x03};
    tb_config c = cfg_of(0, ETMIDR_35);
    tb_writer *w = tb_writer_new(&c);
    tb_packet p;
    uint8_t out[32];

    memset(&p, 0, sizeof p);
    p.kind = TB_PKT_ISYNC;
    p.protocol = TB_PROTO_ETMV3;
    p.reason = TB_ISYNC_TRACE_ON;
    p.addr = 0x8000;
    p.isa = TB_ISA_ARM;
    p.lsip = true;
    p.lsip_addr = 0x8004;
    p.lsip_isa = TB_ISA_ARM;
    cr_assert_not_null(w);
    cr_assert_eq(tb_writer_write(w, &p, out, sizeof out), (int)sizeof want);
    cr_assert_eq(memcmp(out, want, sizeof want), 0);
    tb_writer_free(w);
}

/* ---- decoder ---- */

typedef struct evec {
    tb_element e[MAXV];
    unsigned n;
} evec;

static int on_el(void *ctx, const tb_element *el)
{
    evec *v = ctx;

    cr_assert_lt(v->n, MAXV);
    v->e[v->n++] = *el;
    return 0;
}

/* Decodes b (after an A-sync) both ways, packet path and fused path;
 * they must agree element for element. */
static void decode(const tb_config *c, const tb_memimage *m, const uint8_t *b, size_t n,
                   evec *out)
{
    static evec fused;
    uint8_t buf[128];
    tb_parser *p = tb_parser_new(c);
    tb_decoder *d = tb_decoder_new(c, m);
    pvec pv;

    cr_assert(n + 6 <= sizeof buf);
    memset(buf, 0, 5);
    buf[5] = 0x80;
    memcpy(buf + 6, b, n);
    memset(out, 0, sizeof *out);
    memset(&pv, 0, sizeof pv);
    cr_assert(p && d);
    cr_assert_geq(tb_parser_push(p, buf, n + 6, 0, on_pkt, &pv), 0);
    cr_assert_geq(tb_parser_finish(p, on_pkt, &pv), 0);
    for (unsigned i = 0; i < pv.n; i++)
        cr_assert_geq(tb_decoder_packet(d, &pv.p[i], on_el, out), 0);
    cr_assert_geq(tb_decoder_finish(d, on_el, out), 0);
    tb_parser_reset(p);
    tb_decoder_reset(d);
    memset(&fused, 0, sizeof fused);
    cr_assert_geq(tb_decoder_push(d, p, buf, n + 6, 0, on_el, &fused), 0);
    cr_assert_geq(tb_decoder_push_finish(d, p, on_el, &fused), 0);
    cr_assert_eq(fused.n, out->n);
    for (unsigned i = 0; i < out->n; i++) {
        cr_assert_eq(fused.e[i].kind, out->e[i].kind, "element %u", i);
        cr_assert_eq(fused.e[i].start, out->e[i].start, "element %u", i);
        cr_assert_eq(fused.e[i].count, out->e[i].count, "element %u", i);
        cr_assert_eq(fused.e[i].err, out->e[i].err, "element %u", i);
    }
    tb_decoder_free(d);
    tb_parser_free(p);
}

static const tb_element *nth(const evec *v, tb_elem_kind k, unsigned i)
{
    for (unsigned j = 0; j < v->n; j++)
        if (v->e[j].kind == k && i-- == 0)
            return &v->e[j];
    return NULL;
}

/* ARM code at base: LDMIA r0,{r1,r2} then NOPs. */
static tb_memimage *image(uint32_t base, uint8_t *code, size_t n)
{
    tb_memimage *m = tb_memimage_new();

    for (size_t i = 0; i < n; i += 4) {
        uint32_t op = i ? 0xE320F000u : 0xE8900006u;
        for (unsigned k = 0; k < 4; k++)
            code[i + k] = (uint8_t)(op >> (8 * k));
    }
    cr_assert_eq(tb_memimage_add(m, base, code, n), 0);
    return m;
}

/* The Go vector, then one E: the LDM at 0x80000000 executed (implied by
 * the LSiP I-sync, with no atom), then the NOP at 0x80000004 (the E). */
Test(lsip, decoder_go_vector)
{
    static const uint8_t b[] = {0x08, 0x80, 0x00, 0x00, 0x00, 0x80, 0x03, 0x84};
    static uint8_t code[0x20];
    tb_config c = cfg_of(0, ETMIDR_35);
    tb_memimage *m = image(0x80000000u, code, sizeof code);
    const tb_element *r0, *r1, *on;
    static evec v;

    decode(&c, m, b, sizeof b, &v);
    cr_assert_not_null(on = nth(&v, TB_ELEM_TRACE_ON, 0));
    cr_assert_eq(on->start, 0x80000000u, "trace is on from the LSiP instruction");
    cr_assert_not_null(r0 = nth(&v, TB_ELEM_INSN_RANGE, 0));
    cr_assert_not_null(r1 = nth(&v, TB_ELEM_INSN_RANGE, 1));
    cr_assert_null(nth(&v, TB_ELEM_INSN_RANGE, 2));
    cr_assert_eq(r0->start, 0x80000000u);
    cr_assert_eq(r0->count, 1);
    cr_assert_eq(r0->last_atom, 'E');
    cr_assert_eq(r1->start, 0x80000004u);
    cr_assert_eq(r1->count, 1);
    cr_assert_eq(r1->last_atom, 'E');
    tb_memimage_free(m);
}

/* An LSiP address cut by the end of the stream (0x83: more bytes to
 * come): one error element, TB_ERR_TRUNCATED. */
Test(lsip, truncated_lsip_address)
{
    static const uint8_t b[] = {0x08, 0xA1, 0x00, 0x80, 0x00, 0x00, 0x83};
    static uint8_t code[0x20];
    tb_config c = cfg_of(0, ETMIDR_35);
    tb_memimage *m = image(0x8000, code, sizeof code);
    static evec v;
    pvec pv;
    unsigned errs = 0;

    parse(&c, b, sizeof b, &pv);
    cr_assert_eq(pv.p[pv.n - 1].kind, TB_PKT_INCOMPLETE);
    cr_assert_eq(pv.p[pv.n - 1].err, TB_ERR_TRUNCATED);
    decode(&c, m, b, sizeof b, &v);
    for (unsigned i = 0; i < v.n; i++) {
        cr_assert_neq(v.e[i].kind, TB_ELEM_INSN_RANGE);
        if (v.e[i].kind == TB_ELEM_NO_SYNC && v.e[i].err) {
            cr_assert_eq(v.e[i].reason, TB_GAP_BAD_PACKET);
            cr_assert_eq(v.e[i].err, TB_ERR_TRUNCATED);
            errs++;
        }
    }
    cr_assert_eq(errs, 1);
    tb_memimage_free(m);
}

/* Format 4 (0x92) where it does not exist: reserved in non-CA trace
 * (IHI0014Q 7.3.1 Table 7.2) and before ETMv3.3 (protocol-notes 2.1).
 * An error element says so (bad packet); the next A-sync and I-sync
 * resume decoding. */
Test(fmt4, outside_ca_or_before_v33_is_an_error)
{
    static const uint8_t b[] = {0x08, 0x21, 0x00, 0x80, 0x00, 0x00, 0x92,
                                0x00, 0x00, 0x00, 0x00, 0x00, 0x80,
                                0x08, 0x21, 0x00, 0x80, 0x00, 0x00, 0x84};
    static uint8_t code[0x20];
    tb_config cfgs[] = {cfg_of(0, ETMIDR_35), cfg_of(1u << 12, ETMIDR_32)};
    tb_memimage *m = image(0x8000, code, sizeof code);
    static evec v;

    for (unsigned k = 0; k < 2; k++) {
        const tb_element *bad = NULL, *r;
        pvec pv;

        parse(&cfgs[k], b, sizeof b, &pv);
        cr_assert_eq(pv.p[2].kind, TB_PKT_RESERVED);
        cr_assert_eq(pv.p[2].err, TB_ERR_BAD_PACKET);
        decode(&cfgs[k], m, b, sizeof b, &v);
        for (unsigned i = 0; i < v.n; i++)
            if (v.e[i].kind == TB_ELEM_NO_SYNC && v.e[i].err)
                bad = &v.e[i];
        cr_assert_not_null(bad, "config %u: no error element", k);
        cr_assert_eq(bad->reason, TB_GAP_BAD_PACKET);
        cr_assert_eq(bad->err, TB_ERR_BAD_PACKET);
        cr_assert_eq(bad->index, 12);
        cr_assert_not_null(r = nth(&v, TB_ELEM_INSN_RANGE, 0), "config %u: no resume", k);
        cr_assert_eq(r->start, 0x8000);
        cr_assert_eq(r->count, 1);
        cr_assert_gt(r->index, 12);
    }
    tb_memimage_free(m);
}

/* ---- encoder ---- */

typedef struct run {
    tb_encoder *e;
    tb_encoder_membuf mb;
    pvec v;
    uint64_t cyc, seq;
    uint32_t last;
} run;

static void start(run *r, const char *opts)
{
    tb_encoder_opts o;
    tb_config cfg;
    char err[200];

    memset(r, 0, sizeof *r);
    tb_encoder_opts_init(&o, TB_PROTO_ETMV3);
    cr_assert_eq(tb_encoder_opts_parse(&o, opts, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tb_encoder_config_err(&o, &cfg, err, sizeof err), 0, "%s", err);
    r->e = tb_encoder_new(&o, tb_encoder_mem_sink, &r->mb);
    cr_assert_not_null(r->e);
    tb_encoder_set_packet_cb(r->e, on_pkt, &r->v);
}

static void push(run *r, const tb_exec_record *x)
{
    cr_assert_eq(tb_encoder_push(r->e, x), 0, "%s", tb_err_str(tb_encoder_error(r->e)));
}

/* An ARM instruction, one cycle after the one before. */
static void insn(run *r, uint32_t addr, uint8_t flags, tb_wp_class wp, uint32_t next)
{
    tb_exec_record x;

    memset(&x, 0, sizeof x);
    x.kind = TB_REC_INSN;
    x.seq = r->seq++;
    x.cycle = ++r->cyc;
    x.u.insn.addr = addr;
    x.u.insn.next_addr = next;
    x.u.insn.size = 4;
    x.u.insn.isa = TB_ISA_ARM;
    x.u.insn.next_isa = TB_ISA_ARM;
    x.u.insn.wp_class = (uint8_t)wp;
    x.u.insn.flags = flags;
    r->last = addr;
    push(r, &x);
}

static void xfer(run *r, uint32_t daddr, uint32_t value, uint8_t flags)
{
    tb_exec_record x;

    memset(&x, 0, sizeof x);
    x.kind = TB_REC_DATA;
    x.seq = r->seq;
    x.cycle = r->cyc;
    x.u.data.insn_addr = r->last;
    x.u.data.addr = daddr;
    x.u.data.value = value;
    x.u.data.size = 4;
    x.u.data.flags = flags;
    push(r, &x);
}

/* 0x8000 MOV (outside the filter), 0x8004 the data instruction under
 * test (STM of two words, or what `kind` says), 0x8008 and 0x800C MOVs;
 * trace turns on at 0x8004 (include=0x8004-0x9000). */
enum { K_STM, K_LDR, K_STM_FAILED, K_LDM_PC };

static void program(run *r, int kind)
{
    insn(r, 0x8000, 0, TB_WP_NONE, 0x8004);
    switch (kind) {
    case K_STM:
        insn(r, 0x8004, 0, TB_WP_NONE, 0x8008);
        xfer(r, 0x1000, 0x11, TB_DATA_STORE);
        xfer(r, 0x1004, 0x22, TB_DATA_STORE);
        break;
    case K_LDR:
        insn(r, 0x8004, 0, TB_WP_NONE, 0x8008);
        xfer(r, 0x1000, 0x11, 0);
        break;
    case K_STM_FAILED:
        insn(r, 0x8004, TB_INSN_CONDITIONAL | TB_INSN_COND_FAILED, TB_WP_NONE, 0x8008);
        break;
    case K_LDM_PC: /* LDM {r1, pc}: a waypoint, to 0x8008 */
        insn(r, 0x8004, TB_INSN_TAKEN, TB_WP_INDIRECT, 0x8008);
        xfer(r, 0x1000, 0x11, 0);
        xfer(r, 0x1004, 0x8008, 0);
        break;
    }
    insn(r, 0x8008, 0, TB_WP_NONE, 0x800C);
    insn(r, 0x800C, 0, TB_WP_NONE, 0x8010);
    cr_assert_eq(tb_encoder_finish(r->e), 0);
}

static const tb_packet *first(const run *r, tb_pkt_kind k)
{
    for (unsigned i = 0; i < r->v.n; i++)
        if (r->v.p[i].kind == k)
            return &r->v.p[i];
    return NULL;
}

static unsigned atoms_sent(const run *r)
{
    unsigned n = 0;

    for (unsigned i = 0; i < r->v.n; i++)
        if (r->v.p[i].kind == TB_PKT_ATOM)
            n += r->v.p[i].atom_count;
    return n;
}

/* Trace on at an STM still storing under ooo=1: E4's shape at 0x8004
 * (next 0x8008: A[7:2] = 2, one byte 0x05), the STM's two data packets
 * right after (the first a D-sync), no atom for it: two atoms for the
 * three traced instructions. */
Test(lsip, encoder_trace_on_at_an_stm)
{
    static const uint8_t want[] = {0x08, 0xA1, 0x04, 0x80, 0x00, 0x00, 0x05};
    static run r;
    const tb_packet *is;

    start(&r, "data=both,ooo=1,include=0x8004-0x9000");
    program(&r, K_STM);
    cr_assert_eq(r.v.p[0].kind, TB_PKT_ASYNC);
    is = &r.v.p[1];
    cr_assert_eq(is->kind, TB_PKT_ISYNC);
    cr_assert_eq(is->size, sizeof want);
    cr_assert_eq(memcmp(is->bytes, want, sizeof want), 0);
    cr_assert_eq(r.v.p[2].kind, TB_PKT_DATA);
    cr_assert(r.v.p[2].has_data_addr);
    cr_assert_eq(r.v.p[2].data_addr, 0x1000);
    cr_assert_eq(r.v.p[2].data_addr_bits, 32, "D-sync after the I-sync");
    cr_assert_eq(r.v.p[2].data_value, 0x11);
    cr_assert_eq(r.v.p[3].kind, TB_PKT_DATA);
    cr_assert_not(r.v.p[3].has_data_addr, "contiguous: no address (7.4.4)");
    cr_assert_eq(r.v.p[3].data_value, 0x22);
    cr_assert_eq(r.v.p[4].kind, TB_PKT_ATOM);
    cr_assert_eq(atoms_sent(&r), 2);
    tb_encoder_free(r.e);
    free(r.mb.buf);
}

/* The same in cycle-accurate mode: 0x70, the count up to the STM's own
 * cycle (2: cycles 1 and 2 since the start), the MOVs one W each. */
Test(lsip, encoder_cycle_accurate)
{
    static run r;
    const tb_packet *is;

    start(&r, "data=both,ooo=1,ca,include=0x8004-0x9000");
    program(&r, K_STM);
    is = &r.v.p[1];
    cr_assert_eq(is->kind, TB_PKT_ISYNC);
    cr_assert_eq(is->bytes[0], 0x70);
    cr_assert(is->lsip);
    cr_assert(is->has_cc);
    cr_assert_eq(is->cc, 2);
    cr_assert_eq(is->bytes[2], 0xA1);
    cr_assert_eq(atoms_sent(&r), 2);
    for (unsigned i = 0; i < r.v.n; i++)
        if (r.v.p[i].kind == TB_PKT_ATOM)
            cr_assert_eq(r.v.p[i].w_count, r.v.p[i].atom_count);
    tb_encoder_free(r.e);
    free(r.mb.buf);
}

/* No LSiP: without the latency model, for a single transfer, for an
 * instruction that failed its condition, for a waypoint; each is a
 * plain I-sync and an atom per traced instruction. */
Test(lsip, encoder_plain_isync_otherwise)
{
    static const struct {
        const char *opts;
        int kind;
    } cases[] = {
        {"data=both,include=0x8004-0x9000", K_STM},
        {"data=both,ooo=1,include=0x8004-0x9000", K_LDR},
        {"data=both,ooo=1,include=0x8004-0x9000", K_STM_FAILED},
        {"data=both,ooo=1,include=0x8004-0x9000", K_LDM_PC},
        {"data=both,ooo=1,dataview=0x2000-0x3000,include=0x8004-0x9000", K_STM},
    };
    static run r;

    for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const tb_packet *is;

        start(&r, cases[k].opts);
        program(&r, cases[k].kind);
        cr_assert_not_null(is = first(&r, TB_PKT_ISYNC));
        cr_assert_not(is->lsip, "case %u", k);
        cr_assert_eq(is->addr, 0x8004, "case %u", k);
        cr_assert_eq(atoms_sent(&r), 3, "case %u", k);
        tb_encoder_free(r.e);
        free(r.mb.buf);
    }
}

/* ---- end to end (sim -> encoder -> decoder -> comparator) ---- */

#include "tracebench/roundtrip.h"

static void rt(const char *prog, const char *opts, tb_rt_result *res)
{
    tb_rt_case c;
    char path[512], ini[512], err[256];

    snprintf(path, sizeof path, "%s/vectors/programs/%s.elf", TB_BINARY_DIR, prog);
    snprintf(ini, sizeof ini, "%s/vectors/programs/%s.ini", TB_SOURCE_DIR, prog);
    tb_rt_case_init(&c, TB_PROTO_ETMV3);
    c.program = path;
    c.scenario = ini;
    cr_assert_eq(tb_rt_case_options(&c, opts, err, sizeof err), 0, "%s", err);
    cr_assert_eq(tb_rt_run(&c, res, err, sizeof err), 0, "%s", err);
    cr_assert_eq(res->verdict, TB_RT_MATCH, "%s %s: %s\n%s", prog, opts,
                 tb_rt_verdict_name(res->verdict), res->report);
}

/* Same-cycle atoms (format 4 and 2) keep the decoded cycle totals equal
 * to the simulator's, with and without data packets between them. */
Test(fmt4, round_trip_cycle_totals)
{
    static const char *const sets[] = {"ca,dual", "v=3,ca,dual,data=both",
                                       "ca,dual,data=value,ooo=2"};
    static tb_rt_result res;

    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        rt("data_ops", sets[i], &res);
        cr_assert_gt(res.cmp.cycle_checks, 0, "%s", sets[i]);
        cr_assert_eq(res.cmp.checked + res.cmp.untraced, res.cmp.truth_insns,
                     "%s: %llu checked, %llu untraced, %llu run", sets[i],
                     (unsigned long long)res.cmp.checked,
                     (unsigned long long)res.cmp.untraced,
                     (unsigned long long)res.cmp.truth_insns);
    }
}

/* LSiP at PUSH {r4,lr} (0xf8) and PUSH {r4,r5,lr} (0x104) of returns.S:
 * every instruction and every transfer of the traced code compared,
 * cycle totals too. */
Test(lsip, round_trip)
{
    static const char *const sets[] = {"data=both,ooo=2,include=0xf8-0x118",
                                       "data=value,ooo=1,ca,include=0xf8-0x118"};
    static tb_rt_result res;

    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        rt("returns", sets[i], &res);
        cr_assert_geq(res.cmp.checked, 8, "%s", sets[i]);
        cr_assert_gt(res.cmp.data, 0, "%s", sets[i]);
    }
}
