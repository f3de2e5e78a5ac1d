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

/* last: the queue entry of the header's newest atom (NULL: W's only). */
static int emit_hdr(tb_encoder *e, uint8_t fmt, const char *seq, unsigned n,
                    const struct enc_etm_atom *last)
{
    tb_packet k;

    tb_enc_pkt(e, &k, TB_PKT_ATOM);
    k.phdr_format = fmt;
    memcpy(k.seq, seq, n);
    k.seq_len = (uint8_t)n;
    for (unsigned i = 0; i < n; i++) {
        if (seq[i] == 'W')
            k.w_count++;
        else
            k.atom_count++;
    }
    if (last)
        tb_enc_completes(e, last->seq);
    return tb_enc_emit(e, &k);
}

/* W-only format 3 headers, eight W at most each. */
static int emit_ws(tb_encoder *e, uint32_t w)
{
    char s[8];
    int rc;

    memset(s, 'W', sizeof s);
    while (w) {
        unsigned m = w > 8 ? 8 : w;
        if ((rc = emit_hdr(e, 3, s, m, NULL)) < 0)
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
 * takes E^k (k <= 15) and an optional N, format 2 any two atoms. */
static int flush_plain(tb_encoder *e)
{
    enc_etm *s = &e->p.etm;
    unsigned n = s->n, i;
    int cost[ENC_ETM_QMAX + 1];
    uint8_t take[ENC_ETM_QMAX + 1], fmt[ENC_ETM_QMAX + 1];
    int rc;

    cost[n] = 0;
    for (i = n; i-- > 0;) {
        unsigned k = 0;

        cost[i] = INF;
        /* format 2 */
        if (i + 1 < n && 1 + cost[i + 2] < cost[i]) {
            cost[i] = 1 + cost[i + 2];
            take[i] = 2;
            fmt[i] = 2;
        }
        /* format 1: E^k then N?; ties prefer format 1 */
        for (;;) {
            if (k >= 1 && 1 + cost[i + k] <= cost[i]) {
                cost[i] = 1 + cost[i + k];
                take[i] = (uint8_t)k;
                fmt[i] = 1;
            }
            if (i + k < n && s->q[i + k].atom == 'N' &&
                1 + cost[i + k + 1] <= cost[i]) {
                cost[i] = 1 + cost[i + k + 1];
                take[i] = (uint8_t)(k + 1);
                fmt[i] = 1;
            }
            if (k == 15 || i + k >= n || s->q[i + k].atom != 'E')
                break;
            k++;
        }
    }
    for (i = 0; i < n;) {
        char seq[16];
        unsigned t = take[i];

        for (unsigned j = 0; j < t; j++)
            seq[j] = s->q[i + j].atom;
        if ((rc = emit_hdr(e, fmt[i], seq, t, &s->q[i + t - 1])) < 0)
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
    s->q[s->n].atom = a;
    s->q[s->n].cycles = e->cfg.cycle_accurate ? (uint32_t)c : 0;
    s->q[s->n].seq = seq;
    s->n++;
    return s->n == ENC_ETM_QMAX ? etm_flush(e) : 0;
}

static int etm_branch(tb_encoder *e, uint32_t addr, tb_isa isa)
{
    tb_packet k;
    int rc;

    if ((rc = etm_flush(e)) < 0)
        return rc;
    tb_enc_pkt(e, &k, TB_PKT_BRANCH);
    k.addr = addr;
    k.isa = isa;
    return tb_enc_emit(e, &k);
}

static int etm_insn(tb_encoder *e, const tb_exec_record *r, bool cancelled)
{
    tb_wp_class wp = (tb_wp_class)r->u.insn.wp_class;
    uint8_t fl = r->u.insn.flags;
    tb_isa isa = (tb_isa)r->u.insn.isa, next_isa = (tb_isa)r->u.insn.next_isa;
    uint32_t next = r->u.insn.next_addr;
    int rc;

    rc = etm_atom(e, (fl & TB_INSN_COND_FAILED) ? TB_ATOM_N : TB_ATOM_E, r->cycle, r->seq);
    /* A cancelled instruction goes no further: the exception packet that
     * follows retracts its atom. */
    if (rc < 0 || cancelled || (fl & TB_INSN_COND_FAILED))
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

static int etm_exception(tb_encoder *e, const tb_exec_record *r)
{
    tb_packet k;
    int rc;

    if ((rc = etm_flush(e)) < 0)
        return rc;
    tb_enc_exception_pkt(e, &k, r);
    k.exc_cancel = r->u.exc.cancelled;
    return tb_enc_emit(e, &k);
}

static int etm_trace_off(tb_encoder *e)
{
    return etm_flush(e);
}

static void etm_isync_done(tb_encoder *e, uint32_t addr, tb_isa isa)
{
    (void)e;
    (void)addr;
    (void)isa;
}

static bool etm_sync_point(const tb_encoder *e)
{
    (void)e;
    return true; /* every instruction is traced: any boundary will do */
}

/* The I-sync CC covers the cycles since the last W given out, i.e. the
 * time trace was off (protocol-notes 2.4). */
static uint32_t etm_isync_cc(tb_encoder *e)
{
    enc_etm *s = &e->p.etm;
    uint64_t c = e->prev_cycle > s->cyc_acct ? e->prev_cycle - s->cyc_acct : 0;

    if (e->prev_cycle > s->cyc_acct)
        s->cyc_acct = e->prev_cycle;
    return c > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)c;
}

const enc_ops tb_enc_etmv3_ops = {
    etm_reset, etm_flush, etm_insn, etm_exception, etm_trace_off,
    etm_isync_done, etm_sync_point, etm_isync_cc,
};
