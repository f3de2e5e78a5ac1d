/*
 * Trace macrocell model, the part both protocols share: options and the
 * registers they stand for, the record loop (with the one-record delay
 * that lets a cancelled exception reach back to its instruction), trace
 * enable from the ViewInst ranges, synchronisation, timestamps, context
 * ID / VMID, the FIFO and its overflow, snapshot output.
 *
 * The per-protocol files decide which packets an instruction or an
 * exception gives; everything goes out through tb_enc_emit().
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "encoder_internal.h"
#include "tracebench/frame.h"

/* ------------------------------------------------------------------ */
/* Options. */

void tb_encoder_opts_init(tb_encoder_opts *o, tb_protocol protocol)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->protocol = protocol;
    o->arch_minor = protocol == TB_PROTO_PTM ? 1 : protocol == TB_PROTO_ETMV1 ? 3
                   : protocol == TB_PROTO_ETMV2 ? 0 : 5;
    o->port_width = 8; /* ETMv1 only */
    o->trace_id = 0x10;
    o->sync_period = 1024; /* the period TC2 shows (protocol-notes 1.5) */
    o->fifo_bytes = 1;
    o->fifo_cycles = 1;
}

static int fail(char *err, size_t errlen, const char *what, const char *tok)
{
    if (err && errlen)
        snprintf(err, errlen, "%s: '%s'", what, tok);
    return TB_ERR_INVAL;
}

static bool parse_u64(const char *s, uint64_t *v)
{
    char *end;

    if (!*s || *s == '-')
        return false;
    *v = strtoull(s, &end, 0);
    return *end == 0;
}

static bool parse_range(const char *s, tb_encoder_range *r)
{
    char buf[64], *dash;
    uint64_t lo, hi;

    if (strlen(s) >= sizeof buf)
        return false;
    strcpy(buf, s);
    dash = strchr(buf, '-');
    if (!dash)
        return false;
    *dash = 0;
    if (!parse_u64(buf, &lo) || !parse_u64(dash + 1, &hi) || lo >= hi ||
        hi > 0x100000000ull)
        return false;
    r->lo = (uint32_t)lo;
    r->hi = (uint32_t)(hi - 1) + 1; /* hi == 2^32 wraps to 0: "to the end" */
    return true;
}

int tb_encoder_opts_parse(tb_encoder_opts *o, const char *spec, char *err,
                          size_t errlen)
{
    char buf[512], *tok, *save = NULL;

    if (!o || !spec)
        return TB_ERR_INVAL;
    if (strlen(spec) >= sizeof buf)
        return fail(err, errlen, "option list too long", "");
    /* "ca,,ts" or "ca,": an item left out by mistake, not nothing (strtok
     * would pass over it in silence).  An empty list is no item at all. */
    if (*spec && (spec[0] == ',' || spec[strlen(spec) - 1] == ',' || strstr(spec, ",,"))) {
        if (err && errlen)
            snprintf(err, errlen, "an empty item (two commas in a row, or one at an end)");
        return TB_ERR_INVAL;
    }
    strcpy(buf, spec);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *val = strchr(tok, '=');
        uint64_t v = 0;

        if (val)
            *val++ = 0;
        if (!strcmp(tok, "plain") && !val) {
            continue;
        } else if (!strcmp(tok, "ca") && !val) {
            o->cycle_accurate = true;
        } else if (!strcmp(tok, "ts") && !val) {
            o->timestamps = true;
        } else if (!strcmp(tok, "bb") && !val) {
            o->branch_broadcast = true;
        } else if (!strcmp(tok, "rs") && !val) {
            o->return_stack = true;
        } else if (!strcmp(tok, "alt") && !val) {
            o->alt_branch = true;
        } else if (!strcmp(tok, "vmid") && !val) {
            o->vmid = true;
        } else if (!strcmp(tok, "idle") && !val) {
            o->keep_idle = true;
        } else if (!strcmp(tok, "ccpkt") && !val) {
            o->cc_pkt = true;
        } else if (!strcmp(tok, "dual") && !val) {
            o->dual_issue = true;
        } else if (!strcmp(tok, "pcfirst") && !val) {
            o->pc_first = true;
        } else if (!val) {
            return fail(err, errlen, "unknown option", tok);
        } else if (!strcmp(tok, "ctxid")) {
            if (!parse_u64(val, &v) || (v != 0 && v != 1 && v != 2 && v != 4))
                return fail(err, errlen, "ctxid must be 0, 1, 2 or 4", val);
            o->ctxid_bytes = (uint8_t)v;
        } else if (!strcmp(tok, "port")) {
            if (!parse_u64(val, &v) || (v != 4 && v != 8 && v != 16))
                return fail(err, errlen, "port must be 4, 8 or 16", val);
            o->port_width = (uint8_t)v;
        } else if (!strcmp(tok, "vectors")) {
            if (!parse_u64(val, &v) || v > 0xFFFFFFFFu)
                return fail(err, errlen, "bad vector base", val);
            o->vector_base = (uint32_t)v;
        } else if (!strcmp(tok, "v")) {
            if (!parse_u64(val, &v) || v > 5)
                return fail(err, errlen, "bad minor version", val);
            o->arch_minor = (uint8_t)v;
        } else if (!strcmp(tok, "id")) {
            if (!parse_u64(val, &v) || v < 1 || v > 0x6F)
                return fail(err, errlen, "trace ID must be 0x01..0x6f", val);
            o->trace_id = (uint8_t)v;
        } else if (!strcmp(tok, "sync")) {
            if (!parse_u64(val, &v) || v > 0xFFFFFFFFu)
                return fail(err, errlen, "bad sync period", val);
            o->sync_period = (uint32_t)v;
        } else if (!strcmp(tok, "tsper")) {
            if (!parse_u64(val, &v) || v > 0xFFFFFFFFu)
                return fail(err, errlen, "bad timestamp period", val);
            o->ts_period = (uint32_t)v;
        } else if (!strcmp(tok, "trigger")) {
            if (!parse_u64(val, &v))
                return fail(err, errlen, "bad trigger instruction", val);
            o->trigger_at = v;
        } else if (!strcmp(tok, "fifo")) {
            uint64_t d, b = 1, c = 1;
            char *colon = strchr(val, ':'), *slash;

            if (colon) {
                *colon++ = 0;
                slash = strchr(colon, '/');
                if (!slash)
                    return fail(err, errlen, "fifo=DEPTH:BYTES/CYCLES", colon);
                *slash++ = 0;
                if (!parse_u64(colon, &b) || !parse_u64(slash, &c) || !b ||
                    !c || b > 64 || c > 1024)
                    return fail(err, errlen, "bad FIFO port rate", colon);
            }
            if (!parse_u64(val, &d) || d > 0xFFFFFFFFu)
                return fail(err, errlen, "bad FIFO depth", val);
            o->fifo_depth = (uint32_t)d;
            o->fifo_bytes = (uint32_t)b;
            o->fifo_cycles = (uint32_t)c;
        } else if (!strcmp(tok, "data")) {
            /* ETMCR[3:2]: bit 2 data value, bit 3 data address trace
             * (etmv3-data.md 1). */
            if (!strcmp(val, "addr"))
                o->data_trace = 2;
            else if (!strcmp(val, "value"))
                o->data_trace = 1;
            else if (!strcmp(val, "both"))
                o->data_trace = 3;
            else
                return fail(err, errlen, "data must be addr, value or both", val);
        } else if (!strcmp(tok, "dataview")) {
            tb_encoder_range r;

            if (o->n_dranges >= TB_ENC_MAX_RANGES)
                return fail(err, errlen, "too many dataview ranges", val);
            if (!parse_range(val, &r))
                return fail(err, errlen, "dataview must be LO-HI with LO < HI", val);
            o->dranges[o->n_dranges++] = r;
        } else if (!strcmp(tok, "ooo")) {
            if (!parse_u64(val, &v) || v < 1 || v > 1000000)
                return fail(err, errlen, "ooo=N: loads complete N instructions later, "
                            "N from 1 to 1000000", val);
            o->ooo_latency = (uint32_t)v;
        } else if (!strcmp(tok, "ignore")) {
            if (!parse_u64(val, &v) || v < 1 || v > 1000000)
                return fail(err, errlen, "ignore=N: an Ignore packet after every N "
                            "packets, N from 1 to 1000000", val);
            o->ignore_every = (uint32_t)v;
        } else if (!strcmp(tok, "suppress")) {
            if (!parse_u64(val, &v) || v < 1 || v > 255)
                return fail(err, errlen, "suppress=BYTES: the ETMFFLR level, 1 to 255",
                            val);
            o->suppress_level = (uint32_t)v;
        } else if (!strcmp(tok, "include") || !strcmp(tok, "exclude")) {
            tb_encoder_range r;

            if (o->n_ranges >= TB_ENC_MAX_RANGES)
                return fail(err, errlen, "too many ranges", val);
            if (!parse_range(val, &r))
                return fail(err, errlen, "range must be LO-HI with LO < HI", val);
            r.exclude = tok[0] == 'e';
            o->ranges[o->n_ranges++] = r;
        } else {
            return fail(err, errlen, "unknown option", tok);
        }
    }
    return TB_OK;
}

/* The smallest FIFO that always takes the packets resuming after an
 * overflow (I-sync with CC and context ID, a full timestamp, an atom). */
#define ENC_FIFO_MIN 48

static int enc_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Writes the reason into err (when there is one) and returns rc. */
static int enc_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

/* Names the option at fault and why, for the command line. */
#define cfg_fail(err, errlen, ...) enc_fail(err, errlen, TB_ERR_CONFIG, __VA_ARGS__)

int tb_encoder_config(const tb_encoder_opts *o, tb_config *cfg)
{
    return tb_encoder_config_err(o, cfg, NULL, 0);
}

int tb_encoder_config_err(const tb_encoder_opts *o, tb_config *cfg, char *err,
                          size_t errlen)
{
    uint32_t etmcr, etmidr, etmccer;
    int rc;
    bool ptm;
    unsigned v;

    if (err && errlen)
        err[0] = '\0';
    if (!o || !cfg)
        return TB_ERR_INVAL;
    /* Cortex-M: what its ETM has (etmv3_v7m.c), before anything else. */
    if (o->v7m && (rc = tb_enc_v7m_config_err(o, err, errlen)) < 0)
        return rc;
    /* The dual-issue rule is checked with the trace models that show
     * same-cycle retirement: ETMv3's format 4 and PTM's per-atom counts. */
    if ((o->protocol == TB_PROTO_ETMV1 || o->protocol == TB_PROTO_ETMV2) && o->dual_issue)
        return cfg_fail(err, errlen, "dual: the dual-issue cycle rule is modelled for "
                        "ETMv3 and PTM only (ETMv3 and PTM trace)");
    /* ETMIDR[16] "load PC first" is an ETMv3 register bit (DDI 0233B,
     * etmv3-data.md 1); the other protocols here have no such property. */
    if (o->pc_first && o->protocol != TB_PROTO_ETMV3)
        return cfg_fail(err, errlen, "pcfirst: ETMIDR[16] (an LDM transfers the PC first) "
                        "is modelled for ETMv3 only");
    if (o->protocol == TB_PROTO_ETMV1)
        return tb_enc_etmv1_config_err(o, cfg, err, errlen);
    if (o->protocol == TB_PROTO_ETMV2)
        return tb_enc_etmv2_config_err(o, cfg, err, errlen);
    ptm = o->protocol == TB_PROTO_PTM;
    v = o->arch_minor;
    if (!ptm && o->protocol != TB_PROTO_ETMV3)
        return cfg_fail(err, errlen, "no protocol (ptm or etmv3)");
    if (ptm && v > 1)
        return cfg_fail(err, errlen, "v=%u: PTM is PFT1.0 or PFT1.1 (v=0 or v=1)", v);
    if (v > 5)
        return cfg_fail(err, errlen, "v=%u: ETMv3 goes up to ETMv3.5 (v=5)", v);
    if (o->trace_id < 1 || o->trace_id > 0x6F)
        return cfg_fail(err, errlen, "id=0x%02x: the trace ID must be 0x01..0x6f",
                        (unsigned)o->trace_id);
    if (o->ctxid_bytes != 0 && o->ctxid_bytes != 1 && o->ctxid_bytes != 2 &&
        o->ctxid_bytes != 4)
        return cfg_fail(err, errlen, "ctxid=%u: must be 0, 1, 2 or 4",
                        (unsigned)o->ctxid_bytes);
    /* Return stack: PTM only.  Alternative branch encoding: ETMv3.4+
     * (protocol-notes 1.2).  Timestamps and VMID: ETMv3.5 (2.1), PFT1.0
     * has timestamps, VMID needs the virtualization extensions (1.3). */
    if (o->return_stack && !ptm)
        return cfg_fail(err, errlen, "rs: the return stack is a PTM feature; ETMv3 has "
                        "none");
    if (o->alt_branch && ptm)
        return cfg_fail(err, errlen, "alt: the alternative branch encoding is an ETMv3.4+ "
                        "feature, not PTM");
    if (o->alt_branch && v < 4)
        return cfg_fail(err, errlen, "alt: the alternative branch encoding needs ETMv3.4 "
                        "or later, not ETMv3.%u (v=4 or v=5)", v);
    if (!ptm && o->timestamps && v < 5)
        return cfg_fail(err, errlen, "ts: timestamps need ETMv3.5, not ETMv3.%u (drop v=%u "
                        "or ts)", v, v);
    if (!ptm && o->vmid && v < 5)
        return cfg_fail(err, errlen, "vmid: VMID tracing needs ETMv3.5, not ETMv3.%u", v);
    if (ptm && o->vmid && v < 1)
        return cfg_fail(err, errlen, "vmid: VMID tracing needs PFT1.1, not PFT1.0 (v=0)");
    /* Ignore packets and standalone cycle count packets: modelled for
     * ETMv3 only (issue 22); a cycle count packet needs cycle-accurate
     * mode (IHI0014Q 7.3.4, protocol-notes 2.2, 2.6). */
    if (ptm && (o->ignore_every || o->cc_pkt))
        return cfg_fail(err, errlen, "%s: modelled for ETMv3 only",
                        o->ignore_every ? "ignore" : "ccpkt");
    /* Two atoms in one cycle with a packet between them need P-header
     * format 4, ETMv3.3+ (protocol-notes 2.1, 2.5; etmv3-data.md 10). */
    if (!ptm && o->dual_issue && o->cycle_accurate && v < 3)
        return cfg_fail(err, errlen, "dual: instructions retiring in one cycle need "
                        "P-header format 4 in cycle-accurate trace, ETMv3.3 or later, not "
                        "ETMv3.%u", v);
    if (o->cc_pkt && !o->cycle_accurate)
        return cfg_fail(err, errlen, "ccpkt: cycle count packets need cycle-accurate "
                        "trace (add ca)");
    if (o->fifo_depth && o->fifo_depth < ENC_FIFO_MIN)
        return cfg_fail(err, errlen, "fifo=%u: the FIFO depth must be at least %u bytes "
                        "(what the packets resuming after an overflow need), or 0 for no "
                        "limit", (unsigned)o->fifo_depth, ENC_FIFO_MIN);
    if (o->fifo_depth && (!o->fifo_bytes || !o->fifo_cycles))
        return cfg_fail(err, errlen, "fifo: the port rate BYTES/CYCLES needs both >= 1");
    if (o->n_ranges > TB_ENC_MAX_RANGES)
        return cfg_fail(err, errlen, "include/exclude: at most %u ranges",
                        TB_ENC_MAX_RANGES);

    /* Data trace: ETMv3 only (PFT has none, tb_config_from_regs clears
     * it); the options that refine it need it on. */
    if (ptm && (o->data_trace || o->n_dranges || o->ooo_latency || o->suppress_level))
        return cfg_fail(err, errlen, "%s: PTM (PFT) has no data trace; data trace is an "
                        "ETMv3 feature",
                        o->data_trace ? "data" : o->n_dranges ? "dataview"
                        : o->ooo_latency ? "ooo" : "suppress");
    if (!o->data_trace && (o->n_dranges || o->ooo_latency || o->suppress_level))
        return cfg_fail(err, errlen, "%s: needs data trace (data=addr, data=value or "
                        "data=both)", o->n_dranges ? "dataview" : o->ooo_latency ? "ooo"
                        : "suppress");
    if (o->data_trace > 3)
        return cfg_fail(err, errlen, "data: ETMCR[3:2] is two bits");
    if (o->n_dranges > TB_ENC_MAX_RANGES)
        return cfg_fail(err, errlen, "dataview: at most %u ranges", TB_ENC_MAX_RANGES);
    /* An out-of-order data packet carries a value and no address
     * (IHI0014Q 7.2 Table 7.1): without value trace there is nothing to
     * send out of order. */
    if (o->ooo_latency && !(o->data_trace & 1))
        return cfg_fail(err, errlen, "ooo=%u: out-of-order data packets carry only a "
                        "value; they need data value trace (data=value or data=both)",
                        (unsigned)o->ooo_latency);
    /* SuppressData compares the free FIFO space with ETMFFLR (IHI0014Q
     * 7.4.6): it needs the FIFO model, and a level below its depth. */
    if (o->suppress_level && (!o->fifo_depth || o->suppress_level >= o->fifo_depth))
        return cfg_fail(err, errlen, "suppress=%u: data suppression needs a FIFO deeper "
                        "than the level (fifo=DEPTH with DEPTH > %u)",
                        (unsigned)o->suppress_level, (unsigned)o->suppress_level);

    etmcr = ((uint32_t)o->data_trace << 2) | (o->suppress_level ? 1u << 18 : 0) |
            (o->branch_broadcast ? 1u << 8 : 0) |
            (o->cycle_accurate ? 1u << 12 : 0) |
            ((o->ctxid_bytes == 4 ? 3u : o->ctxid_bytes) << 14) |
            (o->timestamps ? 1u << 28 : 0) |
            (o->return_stack ? 1u << 29 : 0) | (o->vmid ? 1u << 30 : 0);
    /* ETMIDR: Arm, major 2 (ETMv3) or 3 (PFT), minor, [20] alternative
     * branch encoding (protocol-notes 1.2; TC2: 0x410CF250, 0x411CF312),
     * [16] load PC first (etmv3-data.md 1, DDI 0233B [S*]). */
    etmidr = 0x410C0000u | (ptm ? 0x300u : 0x200u) | ((uint32_t)o->arch_minor << 4) |
             0xF000u | (o->alt_branch ? 1u << 20 : 0) | (o->pc_first ? 1u << 16 : 0);
    if (o->v7m)
        etmidr = tb_enc_v7m_etmidr(o);
    /* ETMCCER: timestamps (22), return stack (23, PTM), virtualization
     * (26, for VMID), binary and 64-bit timestamps (28, 29) (1.3). */
    etmccer = (1u << 22) | (ptm ? 1u << 23 : 0) | (o->vmid ? 1u << 26 : 0) |
              (1u << 28) | (1u << 29);
    if ((rc = tb_config_from_regs(cfg, etmcr, etmidr, etmccer, o->trace_id)) < 0)
        return rc;
    cfg->v7m = o->v7m;
    return rc;
}

bool tb_encoder_in_filter(const tb_encoder_opts *o, uint32_t addr)
{
    bool any_include = false, included = false;

    if (!o)
        return false;
    for (unsigned i = 0; i < o->n_ranges && i < TB_ENC_MAX_RANGES; i++) {
        const tb_encoder_range *r = &o->ranges[i];
        bool in = addr >= r->lo && (r->hi == 0 || addr < r->hi);

        if (r->exclude) {
            if (in)
                return false;
        } else {
            any_include = true;
            included = included || in;
        }
    }
    return !any_include || included;
}

bool tb_encoder_in_dataview(const tb_encoder_opts *o, uint32_t addr)
{
    if (!o)
        return false;
    if (!o->n_dranges)
        return true;
    for (unsigned i = 0; i < o->n_dranges && i < TB_ENC_MAX_RANGES; i++) {
        const tb_encoder_range *r = &o->dranges[i];

        if (addr >= r->lo && (r->hi == 0 || addr < r->hi))
            return true;
    }
    return false;
}

/* ------------------------------------------------------------------ */
/* Packet output through the FIFO. */

void tb_enc_pkt(const tb_encoder *e, tb_packet *p, tb_pkt_kind kind)
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->protocol = e->cfg.protocol;
}

void tb_enc_exception_pkt(const tb_encoder *e, tb_packet *p,
                          const tb_exec_record *r)
{
    tb_enc_pkt(e, p, TB_PKT_BRANCH);
    p->addr = r->u.exc.vector;
    p->isa = (tb_isa)r->u.exc.isa;
    p->has_exc = true;
    p->exc_num = r->u.exc.kind == TB_EXC_V7M
                     ? tb_enc_v7m_exc_num(r)
                     : (uint16_t)tb_exc_trace_number((tb_exc_kind)r->u.exc.kind);
    /* The state at the vector (a state record before the exception
     * record announced a change, sim.h). */
    p->ns = e->ns;
    p->ns_valid = true;
}

void tb_enc_state_bytes(tb_encoder *e, tb_packet *p)
{
    if (!e->state_due || e->ns_next == e->ns_traced || p->has_exc)
        return;
    p->has_exc = true;
    p->exc_num = 0;
    p->ns = e->ns_next;
    p->ns_valid = true;
    e->ns_traced = e->ns_next;
}

/* The port drains fifo_bytes every fifo_cycles cycles. */
static void fifo_drain(tb_encoder *e)
{
    uint64_t el;

    if (!e->o.fifo_depth || e->now <= e->fifo_cycle) {
        return;
    }
    el = e->now - e->fifo_cycle;
    e->fifo_cycle = e->now;
    if (el > ((uint64_t)1 << 40))
        el = (uint64_t)1 << 40;
    e->fifo_credit += el * e->o.fifo_bytes;
    if (e->fifo_credit / e->o.fifo_cycles >= e->fifo_level) {
        e->fifo_level = 0;
        e->fifo_credit = 0; /* an idle port saves no bandwidth */
    } else {
        e->fifo_level -= e->fifo_credit / e->o.fifo_cycles;
        e->fifo_credit %= e->o.fifo_cycles;
    }
}

bool tb_enc_suppress_data(tb_encoder *e)
{
    if (!e->o.suppress_level || !e->o.fifo_depth)
        return false;
    fifo_drain(e);
    return e->fifo_level + e->o.suppress_level > e->o.fifo_depth;
}

uint32_t tb_enc_take_cc(tb_encoder *e, uint64_t cycle)
{
    uint64_t d = cycle > e->cc_base ? cycle - e->cc_base : 0;

    e->cc_base = cycle > e->cc_base ? cycle : e->cc_base;
    return d > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)d;
}

int tb_enc_emit(tb_encoder *e, tb_packet *p)
{
    uint8_t buf[TB_PKT_MAX_BYTES + 8];
    int n, rc;
    bool completes = e->pkt_has_seq;
    unsigned with = e->fifo_with;

    e->pkt_has_seq = false;
    e->fifo_with = 0;
    if (e->err)
        return e->err;
    if (e->dropping)
        return 0;
    n = tb_writer_write(e->w, p, buf, sizeof buf);
    if (n < 0)
        return e->err = n;
    if (e->o.fifo_depth) {
        fifo_drain(e);
        if (e->fifo_level + (uint64_t)n + with > e->o.fifo_depth) {
            /* No room: this and all trace until the FIFO has drained is
             * lost; an overflow I-sync resumes it (protocol-notes 2.10). */
            e->dropping = true;
            e->st.overflows++;
            e->st.dropped_bytes += (uint64_t)n;
            if (e->ocb)
                e->ocb(e->ocb_ctx, e->have_shown, e->shown_seq);
            e->have_shown = false;
            return 0;
        }
        e->fifo_level += (uint64_t)n;
    }
    if (completes) {
        e->shown_seq = e->pkt_seq;
        e->have_shown = true;
    }
    if (e->sink) {
        rc = e->sink(e->sink_ctx, buf, (size_t)n);
        if (rc)
            return e->err = rc < 0 ? rc : TB_ERR_STOPPED;
    }
    if (e->pcb) {
        p->index = e->st.bytes;
        p->size = (uint8_t)n;
        memcpy(p->bytes, buf, (size_t)n);
        rc = e->pcb(e->pcb_ctx, p);
        if (rc)
            return e->err = TB_ERR_STOPPED;
    }
    e->st.bytes += (uint64_t)n;
    e->st.packets++;
    if (p->kind == TB_PKT_ASYNC) {
        e->since_async = 0;
        e->st.asyncs++;
    } else {
        e->since_async += (uint64_t)n;
        if (e->o.sync_period && e->since_async >= e->o.sync_period)
            e->sync_due = true;
    }
    /* ignore=N: an Ignore packet (0x66, no payload) after every N packets
     * sent.  IHI0014Q 7.11.2 / protocol-notes 2.8: Ignore is padding that
     * a decompressor skips, legal between any two packets; when a real
     * ETM sends one (port-width padding) is not modelled: the period is
     * a model choice, counted in packets (not bytes) so that no packet is
     * ever split.  The Ignore goes through the FIFO like any packet. */
    if (e->o.ignore_every && p->kind != TB_PKT_IGNORE &&
        ++e->since_ignore >= e->o.ignore_every) {
        tb_packet ig;

        e->since_ignore = 0;
        tb_enc_pkt(e, &ig, TB_PKT_IGNORE);
        return tb_enc_emit(e, &ig);
    }
    return 0;
}

/* ccpkt: the standalone cycle count packet (0x04 + count, IHI0014Q 7.3.4;
 * count encoding protocol-notes 2.6) after a periodic I-sync in
 * cycle-accurate mode.  A periodic I-sync (0x08) carries no count
 * (protocol-notes 2.4, 8); the facts sheet lists the 0x04 packet (2.2)
 * and says a decompressor adds it to the pending cycles (4.2 step 6), but
 * not when a real ETM emits one: UNVERIFIED, so when and what is a model
 * choice.  The packet carries the cycles since the last cycle count given
 * out (W atoms or a count) up to the cycle before the next traced
 * instruction retires; that instruction's P-header then gives its last
 * W, so formats 1-3 still fit before ETMv3.3 and the total per
 * instruction is unchanged (decoder: pending cycles, 4.2). */
static int emit_ccpkt(tb_encoder *e)
{
    enc_etm *s = &e->p.etm;
    uint64_t upto = e->now ? e->now - 1 : 0, c = upto > s->cyc_acct ? upto - s->cyc_acct : 0;
    tb_packet p;

    if (upto > s->cyc_acct)
        s->cyc_acct = upto;
    tb_enc_pkt(e, &p, TB_PKT_CYCLE_COUNT);
    p.has_cc = true;
    p.cc = c > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)c;
    return tb_enc_emit(e, &p);
}

/* ------------------------------------------------------------------ */
/* Synchronisation, timestamps, context. */

static int emit_ts(tb_encoder *e)
{
    tb_packet p;

    tb_enc_pkt(e, &p, TB_PKT_TIMESTAMP);
    p.ts = e->now;
    if (e->cfg.cycle_accurate && e->cfg.protocol == TB_PROTO_PTM) {
        p.has_cc = true; /* PTM timestamps carry a CC (protocol-notes 3.9) */
        p.cc = tb_enc_take_cc(e, e->now);
    }
    e->insn_since_ts = 0;
    return tb_enc_emit(e, &p);
}

static uint32_t ctxid_value(const tb_encoder *e)
{
    if (e->cfg.ctxid_bytes >= 4)
        return e->ctxid;
    return e->ctxid & ((1u << (8 * e->cfg.ctxid_bytes)) - 1u);
}

/* A-sync when due (and always the first time), then the I-sync, then a
 * full timestamp: the order TC2 shows (protocol-notes 3.4, 8).  lsip:
 * the LSiP form for that instruction (IHI0014Q 7.10.5): addr is its
 * address, execution goes on at its next address. */
static int enc_isync(tb_encoder *e, uint8_t reason, uint32_t addr, tb_isa isa,
                     const tb_exec_record *lsip)
{
    tb_packet p;
    int rc;

    if ((rc = e->ops->flush(e)) < 0)
        return rc;
    if (e->sync_due || !e->st.isyncs) {
        tb_enc_pkt(e, &p, TB_PKT_ASYNC);
        if ((rc = tb_enc_emit(e, &p)) < 0)
            return rc;
        e->sync_due = false;
    }
    tb_enc_pkt(e, &p, TB_PKT_ISYNC);
    p.reason = reason;
    p.addr = addr;
    p.isa = isa;
    p.ns = e->ns; /* IHI0014Q 7.10.5, IHI0035B 4.5: info bit 3 */
    e->ns_traced = e->ns;
    if (lsip) {
        p.lsip = true;
        p.lsip_addr = lsip->u.insn.next_addr;
        p.lsip_isa = (tb_isa)lsip->u.insn.next_isa;
    }
    if (e->cfg.ctxid_bytes) {
        p.has_ctxid = true;
        p.context_id = ctxid_value(e);
    }
    /* CC in every non-periodic I-sync in CA mode, never in periodic ones
     * (protocol-notes 2.4, 3.4). */
    if (e->cfg.cycle_accurate && reason != TB_ISYNC_PERIODIC) {
        p.has_cc = true;
        p.cc = e->ops->isync_cc(e);
    }
    if ((rc = tb_enc_emit(e, &p)) < 0)
        return rc;
    if (!e->dropping)
        e->st.isyncs++;
    if (e->o.cc_pkt && e->cfg.cycle_accurate && e->cfg.protocol == TB_PROTO_ETMV3 &&
        reason == TB_ISYNC_PERIODIC && (rc = emit_ccpkt(e)) < 0)
        return rc;
    e->ops->isync_done(e, addr, isa);
    if (e->cfg.timestamps && (rc = emit_ts(e)) < 0)
        return rc;
    if (e->cfg.vmid) {
        tb_enc_pkt(e, &p, TB_PKT_VMID);
        p.vmid = e->vmid;
        if ((rc = tb_enc_emit(e, &p)) < 0)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* The record loop. */

static int process_insn(tb_encoder *e, const tb_exec_record *r, bool cancelled)
{
    int rc = 0;
    tb_isa isa = (tb_isa)r->u.insn.isa;

    e->st.insns++;
    e->now = r->cycle;
    if (e->dropping) {
        fifo_drain(e);
        if (e->fifo_level)
            goto done;
        /* Drained: start again with nothing held (protocol-notes 2.10). */
        e->dropping = false;
        e->ops->reset(e);
        tb_writer_reset(e->w);
        e->on = false;
        e->next_reason = TB_ISYNC_OVERFLOW;
    }
    if (!tb_encoder_in_filter(&e->o, r->u.insn.addr)) {
        if (e->on) {
            rc = e->ops->trace_off(e);
            e->on = false;
            if (e->next_reason != TB_ISYNC_OVERFLOW)
                e->next_reason = TB_ISYNC_TRACE_ON;
        }
        goto done;
    }
    if (!e->on) {
        /* Trace on or an overflow restart, never a periodic I-sync,
         * may be LSiP (protocol-notes 2.4). */
        bool lsip = !cancelled && e->ops->lsip_due && e->ops->lsip_due(e, r);

        rc = enc_isync(e, e->next_reason, r->u.insn.addr, isa, lsip ? r : NULL);
        e->on = true;
        e->next_reason = TB_ISYNC_TRACE_ON;
    } else if (e->ns != e->ns_traced) {
        /* A security state change no packet told (PTM exception returns,
         * an MCR to SCR outside Monitor mode): an I-sync before the next
         * instruction carries it (IHI0014Q 7.10.5, IHI0035B 4.5 info bit
         * 3), after a PTM WP update for the instructions since the last
         * waypoint (trace_off), which the I-sync would otherwise drop. */
        if (!e->ops->sync_point(e))
            rc = e->ops->trace_off(e);
        if (rc >= 0)
            rc = enc_isync(e, TB_ISYNC_PERIODIC, r->u.insn.addr, isa, NULL);
    } else if (e->sync_due && e->ops->sync_point(e)) {
        rc = enc_isync(e, TB_ISYNC_PERIODIC, r->u.insn.addr, isa, NULL);
    }
    if (rc < 0 || e->dropping)
        goto done;
    if (e->o.trigger_at && !e->trigger_done && r->seq >= e->o.trigger_at) {
        tb_packet p;

        e->trigger_done = true;
        if ((rc = e->ops->flush(e)) < 0)
            goto done;
        tb_enc_pkt(e, &p, TB_PKT_TRIGGER);
        if ((rc = tb_enc_emit(e, &p)) < 0)
            goto done;
    }
    if (!cancelled)
        e->st.traced++;
    if ((rc = e->ops->insn(e, r, cancelled)) < 0)
        goto done;
    /* Not at an instruction an exception cancels: its atom and the
     * exception's branch packet, whose Cancel retracts it, stay together
     * (a decoder holds the last range back only until a packet other than
     * a branch, protocol-notes 4 "ETMv3 cancel support"); nor between a
     * v7-M exception return packet and the tail-chained exception's
     * packet, which follows it at once (IHI0014Q 7.6).  The timestamp
     * goes out at the next instruction. */
    if (e->cfg.timestamps && e->o.ts_period && ++e->insn_since_ts >= e->o.ts_period &&
        !cancelled && !e->v7m_chain && e->ops->sync_point(e)) {
        if ((rc = e->ops->flush(e)) < 0)
            goto done;
        rc = emit_ts(e);
    }
done:
    e->prev_cycle = r->cycle;
    return rc < 0 ? rc : 0;
}

static int process_exc(tb_encoder *e, const tb_exec_record *r)
{
    int rc = 0;

    e->now = r->cycle;
    /* Traced when trace is on at the time it is taken; one taken while
     * trace is off shows as the I-sync at the first traced instruction
     * (IHI0035B 5.2.3, "Turning trace on between two back-to-back
     * exceptions"). */
    if (!e->on && !e->dropping && e->cfg.protocol == TB_PROTO_PTM &&
        tb_encoder_in_filter(&e->o, r->u.exc.pref_return) &&
        (r->u.exc.cancelled || e->have_flow_isa)) {
        /* ...unless the preferred return address is itself traced (the
         * IRQ vector when the FIQ comes before its first instruction):
         * trace turns on there, so an I-sync at that address and then
         * the exception packet, with no WP update (IHI0035B 5.2.3, same
         * section).  The section is PFT's; ETMv3 is left as it was. */
        tb_isa isa = r->u.exc.cancelled ? (tb_isa)e->pending.u.insn.isa
                                        : (tb_isa)e->flow_isa;
        bool ns = e->ns;

        /* The I-sync names the return address: its state is the one
         * before the entry changed it (SMC from Non-secure). */
        if (e->ns_at_exc)
            e->ns = e->ns_prev;
        rc = enc_isync(e, e->next_reason, r->u.exc.pref_return, isa, NULL);
        e->ns = ns;
        e->on = true;
        e->next_reason = TB_ISYNC_TRACE_ON;
    }
    if (rc >= 0 && e->on && !e->dropping)
        rc = e->ops->exception(e, r);
    e->prev_cycle = r->cycle;
    e->flow_isa = r->u.exc.isa;
    e->have_flow_isa = true;
    return rc;
}

static int process_ctx(tb_encoder *e, const tb_exec_record *r)
{
    bool cid = r->u.ctx.context_id != e->ctxid, vm = r->u.ctx.vmid != e->vmid;
    tb_packet p;
    int rc;

    e->now = r->cycle;
    e->ctxid = r->u.ctx.context_id;
    e->vmid = r->u.ctx.vmid;
    if (!e->on || e->dropping)
        return 0; /* the next I-sync carries it */
    if ((cid && e->cfg.ctxid_bytes) || (vm && e->cfg.vmid))
        if ((rc = e->ops->flush(e)) < 0)
            return rc;
    if (cid && e->cfg.ctxid_bytes) {
        tb_enc_pkt(e, &p, TB_PKT_CONTEXT_ID);
        p.has_ctxid = true;
        p.context_id = ctxid_value(e);
        if ((rc = tb_enc_emit(e, &p)) < 0)
            return rc;
    }
    if (vm && e->cfg.vmid) {
        tb_enc_pkt(e, &p, TB_PKT_VMID);
        p.vmid = e->vmid;
        if ((rc = tb_enc_emit(e, &p)) < 0)
            return rc;
    }
    return 0;
}

static int flush_pending(tb_encoder *e, bool cancelled)
{
    int rc;

    if (!e->have_pending)
        return 0;
    e->have_pending = false;
    rc = process_insn(e, &e->pending, cancelled);
    e->n_xfer = 0;
    return rc;
}

int tb_encoder_finish(tb_encoder *e)
{
    int rc;

    if (!e)
        return TB_ERR_INVAL;
    if (e->v1)
        return tb_enc_etmv1_finish(e);
    if (e->v2)
        return tb_enc_etmv2_finish(e);
    if (e->err)
        return e->err;
    if (e->finished)
        return 0;
    if ((rc = flush_pending(e, false)) < 0)
        return e->err = rc;
    /* Trace ends as if disabled: held atoms and the position reached go
     * out (PTM: WP update, protocol-notes 3.8). */
    if (e->on && !e->dropping && (rc = e->ops->trace_off(e)) < 0)
        return e->err = rc;
    e->on = false;
    e->finished = true;
    return 0;
}

int tb_encoder_push(tb_encoder *e, const tb_exec_record *r)
{
    int rc = 0;

    if (!e || !r)
        return TB_ERR_INVAL;
    if (e->v1)
        return tb_enc_etmv1_push(e, r);
    if (e->v2)
        return tb_enc_etmv2_push(e, r);
    if (e->err)
        return e->err;
    if (e->finished)
        return e->err = TB_ERR_STATE;
    e->st.records++;
    if (r->kind != TB_REC_EXCEPTION)
        e->ns_at_exc = false;
    switch (r->kind) {
    case TB_REC_INSN:
        if (r->u.insn.isa != TB_ISA_ARM && r->u.insn.isa != TB_ISA_THUMB)
            return e->err = TB_ERR_UNSUPPORTED;
        if (r->u.insn.size != 2 && r->u.insn.size != 4)
            return e->err = TB_ERR_INVAL;
        rc = flush_pending(e, false);
        e->pending = *r;
        e->have_pending = true;
        e->flow_isa = r->u.insn.next_isa;
        e->have_flow_isa = true;
        break;
    case TB_REC_EXCEPTION:
        if (r->u.exc.isa != TB_ISA_ARM && r->u.exc.isa != TB_ISA_THUMB)
            return e->err = TB_ERR_UNSUPPORTED;
        rc = flush_pending(e, r->u.exc.cancelled);
        if (rc >= 0)
            rc = process_exc(e, r);
        e->ns_at_exc = false;
        break;
    case TB_REC_CONTEXT:
        rc = flush_pending(e, false);
        if (rc >= 0)
            rc = process_ctx(e, r);
        break;
    case TB_REC_STATE:
        /* The instruction that changed the state is still pending: its
         * branch packet, if it has one, tells the change
         * (tb_enc_state_bytes); else the next I-sync does. */
        e->ns_next = r->u.state.ns;
        e->state_due = true;
        rc = flush_pending(e, false);
        e->state_due = false;
        e->ns_prev = e->ns;
        e->ns = r->u.state.ns;
        e->ns_at_exc = true; /* until the next record (process_exc) */
        return rc < 0 ? (e->err = rc) : 0;
    case TB_REC_END:
        return tb_encoder_finish(e);
    case TB_REC_EXC_RETURN:
        /* v7-M: the return instruction is still pending; with a
         * tail-chain its exception return packet is followed by the next
         * exception's branch packet, not by a branch to the frame's
         * return address (DDI0337E 15.5.2; docs/cortex-m.md 2). */
        if (!e->have_pending || !(e->pending.u.insn.flags & TB_INSN_EXC_RETURN))
            return e->err = TB_ERR_INVAL;
        e->v7m_chain = r->u.eret.tailchain;
        rc = flush_pending(e, false);
        e->v7m_chain = false;
        break;
    case TB_REC_DATA:
        /* A transfer of the instruction just pushed (still pending, so
         * that its atom and its data go out together); ignored without
         * data trace, so instruction trace is the same with or without
         * data records. */
        if (!e->cfg.data_trace)
            return 0;
        if (!e->have_pending || r->u.data.insn_addr != e->pending.u.insn.addr ||
            (r->u.data.size != 1 && r->u.data.size != 2 && r->u.data.size != 4))
            return e->err = TB_ERR_INVAL;
        if (e->n_xfer >= ENC_MAX_XFER)
            return e->err = TB_ERR_LIMIT;
        e->xfer[e->n_xfer].addr = r->u.data.addr;
        e->xfer[e->n_xfer].value = r->u.data.value;
        e->xfer[e->n_xfer].size = r->u.data.size;
        e->xfer[e->n_xfer].flags = r->u.data.flags;
        e->n_xfer++;
        return 0;
    default:
        return e->err = TB_ERR_INVAL;
    }
    if (rc < 0)
        e->err = rc;
    return rc < 0 ? rc : 0;
}

int tb_encoder_exec_cb(void *ctx, const tb_exec_record *r)
{
    return tb_encoder_push(ctx, r) < 0;
}

int tb_encoder_error(const tb_encoder *e)
{
    return e ? e->err : TB_ERR_INVAL;
}

const tb_encoder_stats *tb_encoder_get_stats(const tb_encoder *e)
{
    return e ? (e->v1 ? tb_enc_etmv1_stats(e) : e->v2 ? tb_enc_etmv2_stats(e) : &e->st) : NULL;
}

const tb_config *tb_encoder_get_config(const tb_encoder *e)
{
    return e ? &e->cfg : NULL;
}

tb_encoder *tb_encoder_new(const tb_encoder_opts *o, tb_trace_sink sink,
                           void *ctx)
{
    tb_encoder *e;

    if (!o)
        return NULL;
    e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->o = *o;
    if (o->protocol == TB_PROTO_ETMV1) {
        e->sink = sink;
        e->sink_ctx = ctx;
        if (tb_encoder_config(o, &e->cfg) < 0 || tb_enc_etmv1_new(e) < 0) {
            free(e);
            return NULL;
        }
        return e;
    }
    if (o->protocol == TB_PROTO_ETMV2) {
        e->sink = sink;
        e->sink_ctx = ctx;
        if (tb_encoder_config(o, &e->cfg) < 0 || tb_enc_etmv2_new(e) < 0) {
            free(e);
            return NULL;
        }
        return e;
    }
    if (tb_encoder_config(o, &e->cfg) < 0 || !(e->w = tb_writer_new(&e->cfg))) {
        free(e);
        return NULL;
    }
    e->ops = e->cfg.protocol == TB_PROTO_PTM ? &tb_enc_ptm_ops : &tb_enc_etmv3_ops;
    e->sink = sink;
    e->sink_ctx = ctx;
    e->next_reason = TB_ISYNC_TRACE_ON;
    e->ops->reset(e);
    return e;
}

void tb_encoder_set_packet_cb(tb_encoder *e, tb_packet_cb cb, void *ctx)
{
    if (e) {
        e->pcb = cb;
        e->pcb_ctx = ctx;
        if (e->v1)
            tb_enc_etmv1_set_cbs(e);
        if (e->v2)
            tb_enc_etmv2_set_cbs(e);
    }
}

void tb_encoder_set_overflow_cb(tb_encoder *e, tb_overflow_cb cb, void *ctx)
{
    if (e) {
        e->ocb = cb;
        e->ocb_ctx = ctx;
        if (e->v1)
            tb_enc_etmv1_set_cbs(e);
        if (e->v2)
            tb_enc_etmv2_set_cbs(e);
    }
}

void tb_encoder_free(tb_encoder *e)
{
    if (!e)
        return;
    tb_enc_etmv1_free(e);
    tb_enc_etmv2_free(e);
    tb_writer_free(e->w);
    free(e);
}

/* ------------------------------------------------------------------ */
/* Snapshot output. */

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

int tb_encoder_elf_regions(const uint8_t *elf, size_t len, tb_snap_region *out,
                           size_t max, uint8_t **storage)
{
    uint32_t phoff;
    unsigned phentsize, phnum, n = 0;
    size_t total = 0, at = 0;
    uint8_t *mem;

    if (!storage)
        return TB_ERR_INVAL;
    *storage = NULL;
    if (!elf || len < 52 || memcmp(elf, "\x7f" "ELF", 4) || elf[4] != 1 ||
        elf[5] != 1)
        return TB_ERR_FORMAT;
    phoff = rd32(elf + 28);
    phentsize = (unsigned)(elf[42] | elf[43] << 8);
    phnum = (unsigned)(elf[44] | elf[45] << 8);
    if (phentsize < 32 || phoff > len ||
        (uint64_t)phnum * phentsize > len - phoff)
        return TB_ERR_FORMAT;
    /* Two passes: check and size, then copy. */
    for (int pass = 0; pass < 2; pass++) {
        n = 0;
        for (unsigned i = 0; i < phnum && n < max; i++) {
            const uint8_t *ph = elf + phoff + (size_t)i * phentsize;
            uint32_t off = rd32(ph + 4), vaddr = rd32(ph + 8);
            uint32_t filesz = rd32(ph + 16), memsz = rd32(ph + 20);
            size_t l;

            if (rd32(ph) != 1 || !filesz) /* PT_LOAD with bytes in the file */
                continue;
            if (off > len || filesz > len - off || memsz < filesz)
                return TB_ERR_FORMAT;
            l = filesz + (memsz - filesz < 64 ? memsz - filesz : 64);
            /* OpenCSD reads 4 bytes for any T32 instruction: give a
             * 16-bit one at the very end of a segment 2 zero bytes when
             * no other segment is there. */
            if (l < (size_t)filesz + 2 && vaddr + filesz + 2 > vaddr) {
                bool clash = false;
                for (unsigned j = 0; j < phnum; j++) {
                    const uint8_t *q = elf + phoff + (size_t)j * phentsize;
                    uint32_t qa = rd32(q + 8), qm = rd32(q + 20);
                    if (j != i && rd32(q) == 1 && qm && qa < vaddr + filesz + 2 &&
                        qa + qm > vaddr + filesz)
                        clash = true;
                }
                if (!clash)
                    l = (size_t)filesz + 2;
            }
            if (pass == 0) {
                total += l;
            } else {
                memcpy(mem + at, elf + off, filesz);
                memset(mem + at + filesz, 0, l - filesz);
                out[n].address = vaddr;
                out[n].data = mem + at;
                out[n].len = l;
                at += l;
            }
            n++;
        }
        if (pass == 0 && !(mem = calloc(1, total ? total : 1)))
            return TB_ERR_NOMEM;
    }
    *storage = mem;
    return (int)n;
}

/* A growable memory sink (encoder.h). */
int tb_encoder_mem_sink(void *ctx, const uint8_t *data, size_t len)
{
    tb_encoder_membuf *m = ctx;

    if (m->len + len > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 4096;
        uint8_t *nb;

        while (nc < m->len + len)
            nc *= 2;
        nb = realloc(m->buf, nc);
        if (!nb)
            return TB_ERR_NOMEM;
        m->buf = nb;
        m->cap = nc;
    }
    memcpy(m->buf + m->len, data, len);
    m->len += len;
    return 0;
}

int tb_encoder_write_snapshot(const char *dir, const tb_config *cfg,
                              const tb_snap_region *regions, size_t n_regions,
                              const uint8_t *trace, size_t len, bool formatted,
                              char *err, size_t errlen)
{
    tb_snap_out_source src;
    tb_encoder_membuf m = {NULL, 0, 0};
    int rc;
    bool ptm;

    if (!dir || !cfg || (!trace && len))
        return TB_ERR_INVAL;
    ptm = cfg->protocol == TB_PROTO_PTM;
    memset(&src, 0, sizeof src);
    src.name = ptm ? "PTM_0" : "ETM_0";
    src.cfg = cfg;
    src.core = "cpu_0";
    /* The cores that carry these macrocells on TC2 (protocol-notes 5.2). */
    src.core_type = ptm ? "Cortex-A15" : "Cortex-A7";
    /* A Cortex-M's ETM: the core name is what tells a decoder the
     * profile (OpenCSD too: shared/docs etmv3-v7m.md 4.1). */
    if (cfg->v7m)
        src.core_type = cfg->v7m == 4 ? "Cortex-M4" : "Cortex-M3";
    src.regions = regions;
    src.n_regions = n_regions;
    /* An ETMv1/v2 port capture is never CoreSight-formatted (docs/etmv1.md). */
    if (tb_protocol_is_port(cfg->protocol) && formatted)
        return enc_fail(err, errlen, TB_ERR_INVAL, "snapshot: a trace port capture "
                        "cannot be CoreSight-formatted");
    if (!formatted)
        return tb_snapshot_write(dir, &src, 1, trace, len,
                                 tb_protocol_is_port(cfg->protocol)
                                     ? tb_port_format_name(cfg->protocol)
                                     : "source_data",
                                 err, errlen);
    {
        tb_formatter *f = tb_formatter_new(TB_FRAME_MEM_ALIGNED);

        if (!f)
            return TB_ERR_NOMEM;
        rc = tb_formatter_put(f, cfg->trace_id, trace, len, tb_encoder_mem_sink, &m);
        if (rc >= 0)
            rc = tb_formatter_flush(f, tb_encoder_mem_sink, &m);
        tb_formatter_free(f);
    }
    if (rc >= 0)
        rc = tb_snapshot_write(dir, &src, 1, m.buf, m.len, "coresight", err,
                               errlen);
    else if (err && errlen)
        snprintf(err, errlen, "formatter: %s", tb_err_str(rc));
    free(m.buf);
    return rc;
}

/* ---- a snapshot written as the trace comes (encoder.h) ---- */

struct tb_encoder_snapshot {
    char dir[1024];
    char part[1100];         /* the buffer file while it grows */
    tb_config cfg;
    tb_formatter *fmt;       /* NULL: raw source stream */
    FILE *f;
    uint64_t bytes;          /* buffer bytes written */
    int err;                 /* sticky */
};

tb_encoder_snapshot *tb_encoder_snapshot_open(const char *dir, const tb_config *cfg,
                                              bool formatted, char *err, size_t errlen)
{
    tb_encoder_snapshot *s;
    char stale[1100];

    if (err && errlen)
        err[0] = '\0';
    if (!dir || !*dir || !cfg || strlen(dir) >= sizeof s->dir ||
        (formatted && tb_protocol_is_port(cfg->protocol))) {
        enc_fail(err, errlen, TB_ERR_INVAL, "snapshot: bad directory or configuration");
        return NULL;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        enc_fail(err, errlen, TB_ERR_IO, "%s: cannot create: %s", dir, strerror(errno));
        return NULL;
    }
    if (!(s = calloc(1, sizeof *s))) {
        enc_fail(err, errlen, TB_ERR_NOMEM, "snapshot: out of memory");
        return NULL;
    }
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    snprintf(s->part, sizeof s->part, "%s/trace_buffer.bin.part", dir);
    s->cfg = *cfg;
    /* A snapshot.ini left by an earlier run would make the directory
     * look complete while this run's buffer is still growing. */
    snprintf(stale, sizeof stale, "%s/snapshot.ini", dir);
    remove(stale);
    if (formatted && !(s->fmt = tb_formatter_new(TB_FRAME_MEM_ALIGNED))) {
        free(s);
        enc_fail(err, errlen, TB_ERR_NOMEM, "snapshot: out of memory");
        return NULL;
    }
    if (!(s->f = fopen(s->part, "wb"))) {
        enc_fail(err, errlen, TB_ERR_IO, "%s: cannot create: %s", s->part, strerror(errno));
        tb_formatter_free(s->fmt);
        free(s);
        return NULL;
    }
    setvbuf(s->f, NULL, _IOFBF, 1u << 18);
    return s;
}

static int snap_file_sink(void *ctx, const uint8_t *data, size_t len)
{
    tb_encoder_snapshot *s = ctx;

    if (len && fwrite(data, 1, len, s->f) != len)
        return s->err = TB_ERR_IO;
    s->bytes += len;
    return 0;
}

int tb_encoder_snapshot_sink(void *ctx, const uint8_t *data, size_t len)
{
    tb_encoder_snapshot *s = ctx;
    int rc;

    if (!s || (!data && len))
        return TB_ERR_INVAL;
    if (s->err)
        return s->err;
    rc = s->fmt ? tb_formatter_put(s->fmt, s->cfg.trace_id, data, len, snap_file_sink, s)
                : snap_file_sink(s, data, len);
    if (rc < 0 && !s->err)
        s->err = rc;
    return rc < 0 ? rc : 0;
}

uint64_t tb_encoder_snapshot_bytes(const tb_encoder_snapshot *s)
{
    return s ? s->bytes : 0;
}

static void snap_free(tb_encoder_snapshot *s)
{
    if (s->f)
        fclose(s->f);
    tb_formatter_free(s->fmt);
    free(s);
}

void tb_encoder_snapshot_abort(tb_encoder_snapshot *s)
{
    if (!s)
        return;
    if (s->f) {
        fclose(s->f);
        s->f = NULL;
    }
    remove(s->part);
    snap_free(s);
}

int tb_encoder_snapshot_close(tb_encoder_snapshot *s, const tb_snap_region *regions,
                              size_t n_regions, char *err, size_t errlen)
{
    static const uint8_t none[1];
    tb_snap_out_source src;
    char path[1100];
    bool ptm;
    int rc;

    if (err && errlen)
        err[0] = '\0';
    if (!s)
        return TB_ERR_INVAL;
    if (!s->err && s->fmt)
        tb_formatter_flush(s->fmt, snap_file_sink, s);
    if (s->err) {
        rc = enc_fail(err, errlen, s->err, "%s: %s", s->part, tb_err_str(s->err));
        tb_encoder_snapshot_abort(s);
        return rc;
    }
    rc = fclose(s->f);
    s->f = NULL;
    if (rc != 0) {
        rc = enc_fail(err, errlen, TB_ERR_IO, "%s: write failed", s->part);
        tb_encoder_snapshot_abort(s);
        return rc;
    }
    ptm = s->cfg.protocol == TB_PROTO_PTM;
    memset(&src, 0, sizeof src);
    src.name = ptm ? "PTM_0" : "ETM_0";
    src.cfg = &s->cfg;
    src.core = "cpu_0";
    src.core_type = ptm ? "Cortex-A15" : "Cortex-A7"; /* as tb_encoder_write_snapshot */
    if (s->cfg.v7m)
        src.core_type = s->cfg.v7m == 4 ? "Cortex-M4" : "Cortex-M3";
    src.regions = regions;
    src.n_regions = n_regions;
    /* The ini files and dumps, with an empty buffer that the streamed one
     * then replaces: the same files tb_encoder_write_snapshot writes. */
    rc = tb_snapshot_write(s->dir, &src, 1, none, 0,
                           s->fmt ? "coresight"
                           : tb_protocol_is_port(s->cfg.protocol)
                               ? tb_port_format_name(s->cfg.protocol)
                               : "source_data",
                           err, errlen);
    if (rc >= 0) {
        snprintf(path, sizeof path, "%s/trace_buffer.bin", s->dir);
        if (rename(s->part, path) != 0)
            rc = enc_fail(err, errlen, TB_ERR_IO, "%s: cannot rename to %s: %s", s->part,
                           path, strerror(errno));
    }
    if (rc < 0) {
        tb_encoder_snapshot_abort(s);
        return rc;
    }
    snap_free(s);
    return 0;
}
