/*
 * ETMv3 (3.0-3.5) trace logic model: exec records -> ETMv3 packets.
 *
 * Every instruction gets an atom (E, or N when its condition failed),
 * packed into P-headers with the fewest headers (IHI0014Q 7.3.1: format
 * 1 runs of E with a trailing N, format 2 pairs; cycle-accurate formats
 * 1-4 with W atoms, protocol-notes 2.5).  A taken indirect branch (every
 * taken branch under branch broadcast) adds a branch address packet after
 * the P-header holding its atom; an exception is a branch address packet
 * with exception bytes, Cancel set when the last traced instruction did
 * not complete (IHI0014Q 6.7.1, protocol-notes 2.7); an exception return
 * puts 0x76 between its atom and its branch, as the Cortex-A7 does
 * (protocol-notes 2.8).
 */
#include <string.h>

#include "encoder_internal.h"

static void etm_reset(tb_encoder *e)
{
    uint64_t acct = e->p.etm.cyc_acct;

    memset(&e->p.etm, 0, sizeof e->p.etm);
    e->p.etm.cyc_acct = acct;
}

static bool fmt4_ok(const tb_encoder *e)
{
    return e->cfg.arch_minor >= 3; /* format 4 from ETMv3.3 (2.1) */
}

/* Plans for the DP below. */
enum { P_NONE, P_F1, P_F2, P_F3E, P_PREW, P_F4, P_ONE };

#define INF 0x7FFFFFFF

/* A P-header's fields in k, an ATOM packet (tb_enc_pkt) with no atoms
 * in seq from n on: format fmt, the atoms seq[0..n) in time order
 * (IHI0014Q 7.3.1).  ws: seq may hold W atoms (cycle-accurate; k's
 * counts zero); false (flush_plain) drops the count.  Inlined into both
 * callers, as each built it before. */
static inline __attribute__((always_inline)) void hdr_set(tb_packet *k, uint8_t fmt,
                                                          const char *seq, unsigned n, bool ws)
{
    k->phdr_format = fmt;
    memcpy(k->seq, seq, n);
    k->seq_len = (uint8_t)n;
    if (!ws) {
        k->atom_count = (uint8_t)n;
        return;
    }
    for (unsigned i = 0; i < n; i++) {
        if (seq[i] == 'W')
            k->w_count++;
        else
            k->atom_count++;
    }
}

/* last: the queue entry of the header's newest atom (NULL: W's only). */
static int emit_hdr(tb_encoder *e, uint8_t fmt, const char *seq, unsigned n,
                    const struct enc_etm_atom *last)
{
    tb_packet k;

    tb_enc_pkt(e, &k, TB_PKT_ATOM);
    hdr_set(&k, fmt, seq, n, true);
    if (last)
        tb_enc_completes(e, last->seq);
    return tb_enc_emit(e, &k);
}

/* The byte of a non-cycle-accurate P-header (IHI0014Q 7.3.1 Table 7.2):
 * format 1 b1NEEEE00, E^k then N when the N bit is set; format 2
 * b1000FF10, F the two atoms oldest first, 1 for N. */
static inline uint8_t plain_hdr_byte(uint8_t fmt, const char *seq, unsigned n)
{
    if (fmt == 2)
        return (uint8_t)(0x82 | (seq[0] == 'N' ? 0x08 : 0) | (seq[1] == 'N' ? 0x04 : 0));
    if (seq[n - 1] == 'N')
        return (uint8_t)(0xC0 | (n - 1) << 2);
    return (uint8_t)(0x80 | n << 2);
}

/* W-only format 3 headers, eight W at most each.  ETMv3.0: a header
 * with a single W is format 0 (b10000000, IHI0014Q 7.3.1 Table 7.3,
 * protocol-notes 2.1, 2.5: "ETMv3.0 only").  That an ETMv3.0 prefers
 * format 0 to a one-W format 3 (0xA0) is a model choice, UNVERIFIED; so
 * is format 3 itself in ETMv3.0 (the facts sheet lists it for all
 * versions). */
static int emit_ws(tb_encoder *e, uint32_t w)
{
    char s[8];
    int rc;

    memset(s, 'W', sizeof s);
    while (w) {
        unsigned m = w > 8 ? 8 : w;
        uint8_t fmt = m == 1 && e->cfg.arch_minor == 0 ? 0 : 3;
        if ((rc = emit_hdr(e, fmt, s, m, NULL)) < 0)
            return rc;
        w -= m;
    }
    return 0;
}

static uint32_t ceil8(uint32_t x)
{
    return (x + 7) / 8;
}

/* Non-cycle-accurate: cost[i] = fewest headers for atoms i..n-1; format 1
 * takes E^k (k <= 15) and an optional N, format 2 any two atoms.
 *
 * cost never rises with i: drop the first atom of the first header of a
 * cover of i.. and what is left still covers i+1.. (E^k N -> E^(k-1) N, a
 * lone N goes, format 2 leaves one atom, itself a format 1).  So of the
 * format 1 headers at i, whose ends are every j in i+1..i+m (m: the E's
 * at i, at most 15, and the N after them), the longest costs least, and
 * wins the ties as the full search over k did (ties prefer format 1, then
 * the longer); format 2 (end i+2) beats it only when m is 1 and
 * cost[i+2] < cost[i+1].  Linear in n rather than 16n: the same headers
 * as the search it replaces, which is what the bits per instruction and
 * the committed vectors check. */
static int flush_plain(tb_encoder *e)
{
    enc_etm *s = &e->p.etm;
    unsigned n = s->n, i, r = 0;
    uint8_t cost[ENC_ETM_QMAX + 2]; /* at most n headers */
    uint8_t take[ENC_ETM_QMAX + 1]; /* atoms, | 0x80 for format 2 */
    char at[ENC_ETM_QMAX + 1]; /* the atoms, contiguous for the headers */
    tb_packet k;
    int rc;

    cost[n] = 0;
    at[n] = 0;
    for (i = n; i-- > 0;) {
        unsigned m;

        /* r: the E's from i on (run[i] of the search this replaced). */
        at[i] = s->q[i].atom;
        r = at[i] == 'E' ? r + 1 : 0;
        m = r < 15 ? r : 15;
        if (at[i + m] == 'N') /* at[n] is 0: i + m < n */
            m++;
        if (!m)
            m = 1; /* no atom but E and N comes here: never stall */
        cost[i] = (uint8_t)(1 + cost[i + m]);
        take[i] = (uint8_t)m;
        if (m == 1 && i + 1 < n && cost[i + 2] < cost[i + 1]) {
            cost[i] = (uint8_t)(1 + cost[i + 2]);
            take[i] = 2 | 0x80;
        }
    }
    /* One packet for all the headers, as each would be new: what the
     * last one left in seq past this one's atoms is cleared; emitting
     * sets only index, size and the one byte (tb_enc_emit_hdr). */
    tb_enc_pkt(e, &k, TB_PKT_ATOM);
    for (i = 0; i < n;) {
        unsigned t = take[i] & 0x7F;
        uint8_t fmt = take[i] & 0x80 ? 2 : 1;

        if (k.seq_len > t)
            memset(k.seq + t, 0, k.seq_len - t);
        hdr_set(&k, fmt, at + i, t, false);
        tb_enc_completes(e, s->q[i + t - 1].seq);
        if ((rc = tb_enc_emit_hdr(e, &k, plain_hdr_byte(fmt, at + i, t))) < 0)
            return rc;
        i += t;
    }
    s->n = 0;
    return 0;
}

/* Cycle-accurate: each instruction is W^c then its atom.  full[i] is
 * the fewest headers for instructions i.. with i's W's all pending, one[i]
 * the same with one W left for i.  Format 1 (WE)^k(WN)? needs c = 1 after
 * the first, format 2 W a b needs c = 0 for b, format 3 W^m E? carries up
 * to eight W, format 4 a lone atom with no W (protocol-notes 2.5). */
static int flush_ca(tb_encoder *e)
{
    enc_etm *s = &e->p.etm;
    unsigned n = s->n, i;
    int full[ENC_ETM_QMAX + 1], one[ENC_ETM_QMAX + 1];
    uint8_t pf[ENC_ETM_QMAX + 1], po[ENC_ETM_QMAX + 1], tk[ENC_ETM_QMAX + 1];
    int rc;

    full[n] = 0;
    one[n] = INF;
    for (i = n; i-- > 0;) {
        uint32_t c = s->q[i].cycles;
        char a = s->q[i].atom;
        unsigned k;

        /* one[i]: i has exactly one W to go. */
        one[i] = INF;
        if (a == 'N') {
            one[i] = 1 + full[i + 1];
            po[i] = P_F1;
            tk[i] = 1;
        } else {
            for (k = 1; k <= 7 && i + k <= n; k++) {
                unsigned j = i + k; /* atoms i..j-1 are WE */
                if (k > 1 && (s->q[j - 1].atom != 'E' || s->q[j - 1].cycles != 1))
                    break;
                if (1 + full[j] < one[i]) {
                    one[i] = 1 + full[j];
                    po[i] = P_F1;
                    tk[i] = (uint8_t)k;
                }
                if (j < n && s->q[j].atom == 'N' && s->q[j].cycles == 1 &&
                    1 + full[j + 1] < one[i]) {
                    one[i] = 1 + full[j + 1];
                    po[i] = P_F1;
                    tk[i] = (uint8_t)(k + 1);
                }
            }
        }
        if (i + 1 < n && s->q[i + 1].cycles == 0 && 1 + full[i + 2] < one[i]) {
            one[i] = 1 + full[i + 2];
            po[i] = P_F2;
            tk[i] = 2;
        }
        /* full[i] */
        if (c == 1) {
            full[i] = one[i];
            pf[i] = P_ONE;
        } else if (c == 0) {
            full[i] = 1 + full[i + 1]; /* format 4; c = 0 only when allowed */
            pf[i] = P_F4;
        } else {
            full[i] = (int)ceil8(c - 1) + one[i];
            pf[i] = P_PREW;
            if (a == 'E' && (int)ceil8(c) + full[i + 1] <= full[i]) {
                full[i] = (int)ceil8(c) + full[i + 1];
                pf[i] = P_F3E;
            }
        }
    }
    for (i = 0; i < n;) {
        uint32_t c = s->q[i].cycles;
        char seq[20];
        unsigned m = 0;

        switch (pf[i]) {
        case P_F4:
            if ((rc = emit_hdr(e, 4, &s->q[i].atom, 1, &s->q[i])) < 0)
                return rc;
            i++;
            continue;
        case P_F3E: {
            uint32_t last = c - 8 * (ceil8(c) - 1);
            if ((rc = emit_ws(e, c - last)) < 0)
                return rc;
            memset(seq, 'W', last);
            seq[last] = 'E';
            if ((rc = emit_hdr(e, 3, seq, last + 1, &s->q[i])) < 0)
                return rc;
            i++;
            continue;
        }
        case P_PREW:
            if ((rc = emit_ws(e, c - 1)) < 0)
                return rc;
            break;
        default:
            break;
        }
        /* i has one W left: format 1 or 2 from here. */
        if (po[i] == P_F2) {
            seq[0] = 'W';
            seq[1] = s->q[i].atom;
            seq[2] = s->q[i + 1].atom;
            if ((rc = emit_hdr(e, 2, seq, 3, &s->q[i + 1])) < 0)
                return rc;
            i += 2;
            continue;
        }
        for (unsigned j = 0; j < tk[i]; j++) {
            seq[m++] = 'W';
            seq[m++] = s->q[i + j].atom;
        }
        if ((rc = emit_hdr(e, 1, seq, m, &s->q[i + tk[i] - 1])) < 0)
            return rc;
        i += tk[i];
    }
    s->n = 0;
    return 0;
}

static int etm_flush(tb_encoder *e)
{
    if (!e->p.etm.n)
        return 0;
    return e->cfg.cycle_accurate ? flush_ca(e) : flush_plain(e);
}

/* An atom into its queue slot.  Inlined into both callers (etm_atom,
 * etm_insn_run's short way, which keeps the queue's length in a local). */
static inline __attribute__((always_inline)) void etm_put(struct enc_etm_atom *q, char a,
                                                         uint32_t cycles, uint64_t seq)
{
    q->atom = a;
    q->cycles = cycles;
    q->seq = seq;
}

static int etm_atom(tb_encoder *e, char a, uint64_t cycle, uint64_t seq)
{
    enc_etm *s = &e->p.etm;
    uint64_t c = cycle > s->cyc_acct ? cycle - s->cyc_acct : 0;

    if (cycle > s->cyc_acct)
        s->cyc_acct = cycle;
    /* Before format 4 two instructions cannot retire in one cycle
     * (formats 1-3 give each atom after the first a W). */
    if (c == 0 && !fmt4_ok(e))
        c = 1;
    if (c > 0xFFFFFFFFu)
        c = 0xFFFFFFFFu;
    etm_put(&s->q[s->n], a, e->cfg.cycle_accurate ? (uint32_t)c : 0, seq);
    return ++s->n == ENC_ETM_QMAX ? etm_flush(e) : 0;
}

static int etm_branch(tb_encoder *e, uint32_t addr, tb_isa isa)
{
    tb_packet k;
    int rc;

    if ((rc = etm_flush(e)) < 0)
        return rc;
    tb_enc_branch_pkt(e, &k, addr, isa);
    tb_enc_state_bytes(e, &k);
    return tb_enc_emit(e, &k);
}

/* ------------------------------------------------------------------ */
/* Data trace (IHI0014Q 7.4).  Each rule cites its section; the model and
 * its options are described in docs/etmv3-data-model.md.
 *
 * UNVERIFIED choices ([U] in etmv3-data.md), all in this one table:
 *   U1  value size: the fewest bytes that hold the value (0 -> SS=00, no
 *       bytes), from OpenCSD's zero-extension (etmv3-data.md 5); whether
 *       an ETM may send more is not known.             ENC_DATA_VALUE_MIN
 *   U2  a failed STREX traces the value 0 (7.4.7 "the data value traced
 *       is 0", ambiguous, etmv3-data.md 8).            ENC_STREX_FAIL_ZERO
 *   U3  a data instruction that also branches (LDR pc, POP {..,pc}): its
 *       data packets before its branch packet, ETMv1's order (7.3.5 does
 *       not give it, etmv3-data.md 10).
 *   U4  the BE flag in bit 4 of the 5th data address byte (the writer,
 *       etmv3-data.md 4 and 18 item 3).
 *   U5  out-of-order: an OOO data packet completes the outstanding
 *       placeholder with its tag; the lowest free tag is used; with all
 *       three out, the oldest completes first (etmv3-data.md 7).
 *   U6  D-sync (full data address) on the first data address after every
 *       I-sync, periodic ones too: 7.10.2 asks for it after trace-on,
 *       7.10.6 staggers the periodic one by an unknown amount.
 *   U7  64-bit transfers (LDRD, VLDR.64) as two 32-bit transfers, the
 *       second without an address by the LSM rule (etmv3-data.md 5).
 *   L1  LSiP when trace turns on or restarts at a multi-transfer data
 *       instruction under ooo=N (etm_lsip_due; etmv3-data.md 11.3, 18).
 *   L2  the LSiP I-sync's cycle count covers that instruction's cycles
 *       (etm_isync_cc).
 *   L3  all its data packets follow the LSiP I-sync.
 *   D1  format 4 is b10010N10, ETMv3.3+ (flush_ca; etmv3-data.md 10).
 *   D3  format 4 where a packet separates two same-cycle atoms, else
 *       format 2, by the fewest headers (flush_ca).
 *   D4  dual with ca refused before ETMv3.3 (encoder.c).
 *   (D2, the pairing rule itself, is in sim/dual.c.)
 *   P1  pcfirst = ETMIDR[16] "load PC first" (ETM11RV TRM, etmv3-data.md 1
 *       [S*]; encoder.c sets it, the decoder reads it).
 *   P2  a load-PC-first core sends the PC word, then the others from the
 *       lowest address (sim/sim.c pc_first_order); this encoder only
 *       follows the records' order, rule 6 giving the non-contiguous
 *       second transfer its address.
 *   P3  the instructions reordered: LDM/POP with the PC in the list, not
 *       RFE or LDR pc (sim/sim.c ldm_loads_pc).
 */
#define ENC_DATA_VALUE_MIN 1
#define ENC_STREX_FAIL_ZERO 1

/* The value as traced: before sign extension (4.9.2), so the transfer's
 * bytes only; a failed STREX's is 0 (U2). */
static uint32_t xfer_value(const struct enc_xfer *x)
{
    uint32_t v = x->size >= 4 ? x->value : x->value & ((1u << (8 * x->size)) - 1u);

    if (ENC_STREX_FAIL_ZERO && (x->flags & TB_DATA_STORE_FAILED))
        v = 0;
    return v;
}

/* SS: 0, 1, 2 or 4 value bytes (7.2 Table 7.1; U1). */
static uint8_t value_bytes(const struct enc_xfer *x, uint32_t v)
{
    if (!ENC_DATA_VALUE_MIN)
        return x->size;
    return !v ? 0 : v <= 0xFF ? 1 : v <= 0xFFFF ? 2 : 4;
}

/* Data suppression (7.4.6): while SuppressData is high the first data
 * packet becomes Data suppressed (0x62) and later ones are deleted;
 * suppression that starts in a data instruction lasts until it ends;
 * the state ends at the first data packet made while SuppressData is
 * low, which goes out normally (with a D-sync up to ETMv3.2).  1: send
 * the packet, 0: it is suppressed. */
static int data_gate(tb_encoder *e)
{
    enc_etm *s = &e->p.etm;
    tb_packet k;
    int rc;

    if (!e->o.suppress_level)
        return 1;
    if (s->sup_insn)
        return 0;
    if (!tb_enc_suppress_data(e)) {
        if (s->sup) {
            s->sup = false;
            if (e->cfg.arch_minor <= 2)
                s->dsync = true;
        }
        return 1;
    }
    s->sup_insn = true;
    if (s->sup)
        return 0;
    s->sup = true;
    tb_enc_pkt(e, &k, TB_PKT_DATA_SUPPRESSED);
    rc = tb_enc_emit(e, &k);
    return rc < 0 ? rc : 0;
}

/* One data packet of kind DATA, OOO_DATA, OOO_PLACEHOLDER or
 * VALUE_NOT_TRACED; addr: the A bit (7.4.4).  1 sent, 0 suppressed. */
static int data_pkt(tb_encoder *e, tb_pkt_kind kind, const struct enc_xfer *x,
                    bool addr, uint8_t tag)
{
    enc_etm *s = &e->p.etm;
    tb_packet k;
    int rc = data_gate(e);

    if (rc <= 0)
        return rc;
    tb_enc_pkt(e, &k, kind);
    /* The address only with address trace on (7.4.2), compressed by the
     * writer against the last data address output (7.4.2), in full as a
     * D-sync when one is due (7.10.2, 7.10.6; U6); the BE-8 state goes
     * with it (4.9.1; U4). */
    if (addr && (e->cfg.data_trace & 2) && kind != TB_PKT_OOO_DATA) {
        k.has_data_addr = true;
        k.data_addr = x->addr;
        k.data_be = (x->flags & TB_DATA_BE) != 0;
        if (s->dsync) {
            k.data_addr_bits = 32;
            s->dsync = false;
        }
    }
    /* The value only with value trace on (7.4.2). */
    if ((kind == TB_PKT_DATA || kind == TB_PKT_OOO_DATA) && (e->cfg.data_trace & 1)) {
        k.data_value = xfer_value(x);
        k.data_size = value_bytes(x, k.data_value);
    }
    k.data_tag = tag;
    /* 7.4.7: a failed STREX's data packet and its Store failed (one byte,
     * etm_data) enter the FIFO together or are lost together: no overflow
     * falls between them. */
    if (kind == TB_PKT_DATA && (x->flags & TB_DATA_STORE_FAILED) && (e->cfg.data_trace & 1))
        e->fifo_with = 1;
    rc = tb_enc_emit(e, &k);
    return rc < 0 ? rc : 1;
}

/* The out-of-order load at ooo[i] completes: its OOO data packet, after
 * the atoms of the instructions that retired meanwhile (7.2 Table 7.1:
 * tag and value, no address). */
static int ooo_complete(tb_encoder *e, unsigned i)
{
    enc_etm *s = &e->p.etm;
    struct enc_xfer x = {0, s->ooo[i].value, s->ooo[i].size, 0};
    uint8_t tag = s->ooo[i].tag;
    int rc;

    memmove(&s->ooo[i], &s->ooo[i + 1], (s->n_ooo - i - 1) * sizeof s->ooo[0]);
    s->n_ooo--;
    if ((rc = etm_flush(e)) < 0)
        return rc;
    rc = data_pkt(e, TB_PKT_OOO_DATA, &x, false, tag);
    return rc < 0 ? rc : 0;
}

/* After each traced instruction: the loads whose latency ran out.  Cold,
 * as etm_data: instruction-only trace keeps its speed. */
__attribute__((noinline, cold)) static int ooo_tick(tb_encoder *e)
{
    enc_etm *s = &e->p.etm;
    int rc;

    for (unsigned i = 0; i < s->n_ooo;) {
        if (--s->ooo[i].left == 0) {
            if ((rc = ooo_complete(e, i)) < 0)
                return rc;
            continue;
        }
        i++;
    }
    return 0;
}

static int ooo_drain(tb_encoder *e)
{
    int rc;

    while (e->p.etm.n_ooo)
        if ((rc = ooo_complete(e, 0)) < 0)
            return rc;
    return 0;
}

/* A load that completes out of order (ooo=N): a placeholder at its place
 * with the address by the normal rules (7.2 Table 7.1: b01A1TT00), the
 * value later in an OOO data packet with the same tag (U5). */
static int ooo_start(tb_encoder *e, const struct enc_xfer *x)
{
    enc_etm *s = &e->p.etm;
    unsigned used = 0, i;
    uint8_t tag;
    int rc;

    if (s->n_ooo == ENC_OOO_TAGS && (rc = ooo_complete(e, 0)) < 0)
        return rc;
    for (i = 0; i < s->n_ooo; i++)
        used |= 1u << s->ooo[i].tag;
    for (tag = 1; used & (1u << tag); tag++)
        ;
    rc = data_pkt(e, TB_PKT_OOO_PLACEHOLDER, x, true, tag);
    if (rc <= 0)
        return rc; /* suppressed: no data to follow */
    s->ooo[s->n_ooo].value = x->value;
    s->ooo[s->n_ooo].size = x->size;
    s->ooo[s->n_ooo].tag = tag;
    /* ooo_tick runs after this instruction too. */
    s->ooo[s->n_ooo].left = e->o.ooo_latency + 1;
    s->n_ooo++;
    return 0;
}

/* The data packets of a traced instruction's transfers (e->xfer, in
 * architectural order). */
__attribute__((noinline, cold)) static int etm_data(tb_encoder *e,
                                                     const tb_exec_record *r)
{
    enc_etm *s = &e->p.etm;
    unsigned first, i;
    uint32_t next = 0;
    int rc = 0;

    /* ViewData (7.4, 5.7.1): only transfers it selects are traced;
     * those of an LSM before the first traced one give no packet
     * (7.4.4). */
    for (first = 0; first < e->n_xfer; first++)
        if (tb_encoder_in_dataview(&e->o, e->xfer[first].addr))
            break;
    if (first == e->n_xfer)
        return 0;
    /* Data packets belong to the most recently traced data instruction
     * (7.4.2): its atom goes out first, later atoms in a new P-header. */
    if ((rc = etm_flush(e)) < 0)
        return rc;
    s->sup_insn = false;
    if (e->o.ooo_latency && e->n_xfer == 1 && !(e->xfer[0].flags & TB_DATA_STORE) &&
        r->u.insn.wp_class == TB_WP_NONE) {
        rc = ooo_start(e, &e->xfer[0]);
        s->sup_insn = false;
        return rc;
    }
    for (i = first; i < e->n_xfer; i++) {
        const struct enc_xfer *x = &e->xfer[i];
        /* 7.4.4: the first traced transfer carries the address; a later
         * one only when not contiguous with the transfer before it (SWP,
         * an LSM's PC first); one ViewData excludes after the first
         * traced is a Value not traced packet, by the same A rule. */
        bool contig = i > first && x->addr == next;
        bool in = i == first || tb_encoder_in_dataview(&e->o, x->addr);

        next = x->addr + x->size;
        rc = data_pkt(e, in ? TB_PKT_DATA : TB_PKT_VALUE_NOT_TRACED, x, !contig, 0);
        if (rc < 0)
            return rc;
        /* 7.4.7: Store failed right after the failed STREX's data
         * packet, only with value trace on. */
        if (rc > 0 && in && (x->flags & TB_DATA_STORE_FAILED) && (e->cfg.data_trace & 1)) {
            tb_packet k;

            tb_enc_pkt(e, &k, TB_PKT_STORE_FAILED);
            if ((rc = tb_enc_emit(e, &k)) < 0)
                return rc;
        }
    }
    s->sup_insn = false;
    return 0;
}

static int etm_insn_body(tb_encoder *e, const tb_exec_record *r, bool cancelled)
{
    tb_wp_class wp = (tb_wp_class)r->u.insn.wp_class;
    uint8_t fl = r->u.insn.flags;
    tb_isa isa = (tb_isa)r->u.insn.isa, next_isa = (tb_isa)r->u.insn.next_isa;
    uint32_t next = r->u.insn.next_addr;
    int rc = 0;

    /* The LSiP I-sync implies this instruction (IHI0014Q 7.14.2): no
     * atom; its cycles went into the I-sync's count (etm_isync_cc). */
    if (e->p.etm.lsip)
        e->p.etm.lsip = false;
    else
        rc = etm_atom(e, (fl & TB_INSN_COND_FAILED) ? TB_ATOM_N : TB_ATOM_E, r->cycle,
                      r->seq);
    /* A cancelled instruction goes no further: the exception packet that
     * follows retracts its atom (its transfers are not traced). */
    if (rc < 0 || cancelled || (fl & TB_INSN_COND_FAILED))
        return rc;
    /* Its data before its branch packet (U3). */
    if (e->n_xfer && (rc = etm_data(e, r)) < 0)
        return rc;
    switch (wp) {
    case TB_WP_INDIRECT:
    case TB_WP_INDIRECT_LINK:
        if (fl & TB_INSN_EXC_RETURN) {
            tb_packet k;

            if ((rc = etm_flush(e)) < 0)
                return rc;
            tb_enc_pkt(e, &k, TB_PKT_EXC_RETURN);
            if ((rc = tb_enc_emit(e, &k)) < 0)
                return rc;
            /* v7-M tail-chain: the next exception's packet follows. */
            if (e->v7m_chain)
                return 0;
        }
        return etm_branch(e, next, next_isa);
    case TB_WP_DIRECT:
    case TB_WP_DIRECT_LINK:
        if (e->cfg.branch_broadcast &&
            ((fl & TB_INSN_TAKEN) || next != r->u.insn.addr + r->u.insn.size ||
             next_isa != isa))
            return etm_branch(e, next, next_isa);
        return 0;
    default:
        return 0;
    }
}

static int etm_insn(tb_encoder *e, const tb_exec_record *r, bool cancelled)
{
    int rc = etm_insn_body(e, r, cancelled);

    if (rc >= 0 && !cancelled && e->p.etm.n_ooo)
        rc = ooo_tick(e);
    return rc;
}

/* insn_run: etm_insn for each, without the record loop between.  Without
 * cycle accuracy, an LSiP I-sync or a load in flight, an instruction that
 * sends no packet of its own (no indirect branch, no broadcast direct
 * one) is only its atom in the queue, its cycle in cyc_acct: etm_atom and
 * etm_insn_body's other cases have nothing to do for it.  Only a full
 * queue sends anything, after which the state is checked as below. */
static size_t etm_insn_run(tb_encoder *e, const tb_exec_record *recs, size_t n, int *rc)
{
    enc_etm *s = &e->p.etm;
    size_t i = 0;

    *rc = 0;
    if (!e->cfg.cycle_accurate && !s->lsip && !s->n_ooo && !e->n_xfer) {
        /* The waypoint classes that send a packet when executed: bit
         * TB_WP_x (all below 8). */
        unsigned own = 1u << TB_WP_INDIRECT | 1u << TB_WP_INDIRECT_LINK |
                       (e->cfg.branch_broadcast ? 1u << TB_WP_DIRECT | 1u << TB_WP_DIRECT_LINK
                                                : 0);
        /* The queue's length and the cycles in locals: the atom stores
         * may alias s, so s->n would be read again at each. */
        unsigned qn = s->n;
        uint64_t acct = s->cyc_acct;

        for (; i < n; i++) {
            const tb_exec_record *r = &recs[i];
            uint8_t fl = r->u.insn.flags, wp = r->u.insn.wp_class;

            if (!(fl & TB_INSN_COND_FAILED) && wp < 8 && (own >> wp & 1))
                break;
            if (r->cycle > acct)
                acct = r->cycle;
            etm_put(&s->q[qn], (fl & TB_INSN_COND_FAILED) ? TB_ATOM_N : TB_ATOM_E, 0, r->seq);
            if (++qn == ENC_ETM_QMAX) {
                s->n = qn;
                s->cyc_acct = acct;
                tb_enc_run_at(e, r);
                *rc = etm_flush(e);
                qn = s->n;
                acct = s->cyc_acct;
                if (*rc < 0 || !tb_enc_plain_state(e)) {
                    i++;
                    break;
                }
            }
        }
        s->n = qn;
        s->cyc_acct = acct;
        if (i) {
            tb_enc_run_at(e, &recs[i - 1]);
            e->prev_cycle = recs[i - 1].cycle;
        }
        if (i == n || *rc < 0 || !tb_enc_plain_state(e)) {
            e->st.insns += i;
            e->st.traced += i;
            return i;
        }
    }
    while (i < n) {
        const tb_exec_record *r = &recs[i++];

        tb_enc_run_at(e, r);
        *rc = etm_insn(e, r, false);
        e->prev_cycle = r->cycle;
        if (*rc < 0 || !tb_enc_plain_state(e))
            break;
    }
    e->st.insns += i;
    e->st.traced += i;
    return i;
}

static int etm_exception(tb_encoder *e, const tb_exec_record *r)
{
    tb_packet k;
    int rc;

    if ((rc = etm_flush(e)) < 0)
        return rc;
    tb_enc_exception_pkt(e, &k, r);
    k.exc_cancel = r->u.exc.cancelled;
    e->ns_traced = k.ns;
    if (e->v7m_preempt && r->u.exc.tailchain) {
        /* v7-M late arrival while the return unstacked: Cancel applies
         * to the exception return packet just sent, not to an
         * instruction (DDI0337E 15.5.2), so nothing shown is withdrawn. */
        k.exc_cancel = true;
        return tb_enc_emit(e, &k);
    }
    if ((rc = tb_enc_emit(e, &k)) < 0 || !k.exc_cancel || e->dropping)
        return rc;
    /* The Cancel went out: the decoder retracts the instruction whose
     * atom the header before it carried (IHI0014Q 7.3.5), the one right
     * before this exception (seq + 1 == r->seq).  An overflow from here
     * on must not name it as the newest shown (tb_overflow_cb), as
     * etmv2_encoder.c do_exc steps back; the one before it went out in
     * the same or an earlier header (every instruction is traced while
     * trace is on), or, when the cancelled one was the first after a
     * resume, is older than the resume and names nothing cancelled. */
    if (e->have_shown && e->shown_seq + 1 == r->seq) {
        if (e->shown_seq == 0)
            e->have_shown = false;
        else
            e->shown_seq--;
    }
    return 0;
}

/* Trace stops: held atoms go out, and outstanding loads complete at
 * once (the model's rule, docs/etmv3-data-model.md). */
static int etm_trace_off(tb_encoder *e)
{
    int rc = etm_flush(e);

    if (rc >= 0 && e->p.etm.n_ooo)
        rc = ooo_drain(e);
    return rc;
}

/* After every I-sync the next data address goes in full (7.10.2: D-sync
 * on the next data packet after trace-on; periodic: U6). */
static void etm_isync_done(tb_encoder *e, uint32_t addr, tb_isa isa)
{
    (void)addr;
    (void)isa;
    e->p.etm.dsync = true;
}

static bool etm_sync_point(const tb_encoder *e)
{
    (void)e;
    return true; /* every instruction is traced: any boundary will do */
}

/* The I-sync CC covers the cycles since the last W given out, i.e. the
 * time trace was off (protocol-notes 2.4); an LSiP I-sync's also those
 * of its instruction, which has no atom to carry them (7.10.5: LSiP
 * with cycle count). */
static uint32_t etm_isync_cc(tb_encoder *e)
{
    enc_etm *s = &e->p.etm;
    uint64_t upto = s->lsip ? e->now : e->prev_cycle;
    uint64_t c = upto > s->cyc_acct ? upto - s->cyc_acct : 0;

    if (upto > s->cyc_acct)
        s->cyc_acct = upto;
    return c > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)c;
}

/* LSiP (IHI0014Q 7.10.5, 7.14.2; protocol-notes 2.4; etmv3-data.md
 * 11.3).  Model rule, UNVERIFIED (docs/etmv3-data-model.md L1-L3): under
 * the load-latency model (ooo=N) a data instruction with two or more
 * transfers (LDM/STM, LDRD/STRD, SWP) is still transferring when the
 * next instruction starts; when trace turns on (ViewInst, or the
 * restart after an overflow) at such an instruction, executed and not a
 * waypoint, with a transfer ViewData traces, the I-sync is emitted while
 * it is in progress: the LSiP form, its address in the 4-byte field, the
 * next instruction's compressed after it.  Its data packets follow. */
static bool etm_lsip_due(tb_encoder *e, const tb_exec_record *r)
{
    unsigned i;

    if (!e->cfg.data_trace || !e->o.ooo_latency || e->n_xfer < 2 ||
        (r->u.insn.flags & TB_INSN_COND_FAILED) || r->u.insn.wp_class != TB_WP_NONE)
        return false;
    for (i = 0; i < e->n_xfer; i++)
        if (tb_encoder_in_dataview(&e->o, e->xfer[i].addr))
            break;
    if (i == e->n_xfer)
        return false;
    e->p.etm.lsip = true;
    return true;
}

const enc_ops tb_enc_etmv3_ops = {
    etm_reset, etm_flush, etm_insn, etm_exception, etm_trace_off,
    etm_isync_done, etm_sync_point, etm_isync_cc, etm_lsip_due,
    etm_insn_run,
};

/* Data-only mode (ETMCR[20], IHI0014Q 7.4.10): instruction trace is off,
 * so no P-header and no branch packet; a traced instruction gives only
 * its data packets, by the rules of etm_data (7.4.4: the address on the
 * first transfer and on any not contiguous with the one before), and
 * the I-syncs are the data-only form (the writer, 7.10.5).  A table of
 * its own, so that instruction trace keeps its path. */
static int etm_do_insn(tb_encoder *e, const tb_exec_record *r, bool cancelled)
{
    /* A cancelled or condition-failed instruction transferred nothing
     * (sim.h; the exception that cancels one has no packet here). */
    if (cancelled || (r->u.insn.flags & TB_INSN_COND_FAILED) || !e->n_xfer)
        return 0;
    return etm_data(e, r);
}

/* An exception is a branch packet (7.3.2): not output in data-only mode
 * (7.4.10). */
static int etm_do_exception(tb_encoder *e, const tb_exec_record *r)
{
    (void)e;
    (void)r;
    return 0;
}

const enc_ops tb_enc_etmv3_do_ops = {
    etm_reset, etm_flush, etm_do_insn, etm_do_exception, etm_trace_off,
    etm_isync_done, etm_sync_point, etm_isync_cc, NULL,
    NULL, /* no run hook: each instruction's transfers go one at a time */
};
