/*
 * Encoder options: the option list (tb_encoder_opts_parse), the registers
 * they stand for (tb_encoder_config_err: ETMCR, ETMIDR, ETMCCER, with a
 * reason for every refusal) and the ViewInst / ViewData filters.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encoder_internal.h"
#include "../common/struct_size.h"

/* ------------------------------------------------------------------ */
/* Options. */

int tb_enc_opts_take(tb_encoder_opts *own, const tb_encoder_opts *o, char *err,
                     size_t errlen)
{
    return tb_struct_take(own, sizeof *own, o, TB_ENCODER_OPTS_SIZE_MIN, "tb_encoder_opts",
                          err, errlen);
}

int tb_enc_opts_give(tb_encoder_opts *o, const tb_encoder_opts *own,
                     const tb_encoder_opts *orig, char *err, size_t errlen)
{
    return tb_struct_give(o, own, orig, sizeof *own, "tb_encoder_opts", err, errlen);
}

int tb_encoder_opts_defaults(tb_encoder_opts *o, tb_protocol protocol)
{
    tb_encoder_opts d;

    /* Only the size is read (the rest may be anything): taken for its check. */
    if (!o || tb_enc_opts_take(&d, o, NULL, 0) < 0)
        return TB_ERR_INVAL;
    /* Every field, then the caller's share of them (struct_size.h). */
    tb_enc_defaults(&d, protocol);
    return tb_struct_give(o, &d, NULL, sizeof d, "tb_encoder_opts", NULL, 0);
}

void tb_enc_defaults(tb_encoder_opts *o, tb_protocol protocol)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->protocol = protocol;
    o->arch_minor = protocol == TB_PROTO_PTM ? 1 : protocol == TB_PROTO_ETMV1 ? 3
                   : protocol == TB_PROTO_ETMV2 ? 0 : 5;
    o->port_width = 8; /* ETMv1 only */
    o->trace_id = 0x10;
    o->sync_period = 1024; /* the period TC2 shows (protocol-notes 1.5) */
    o->fifo_bytes = 1;
    o->fifo_cycles = 1;
    o->ts_rate = 1;
}

uint64_t tb_encoder_timestamp(const tb_encoder_opts *o, uint64_t cycle)
{
    const bool ts48 = o->protocol == TB_PROTO_PTM ? o->arch_minor == 0 : o->ts48;
    const uint64_t rate = o->ts_rate ? o->ts_rate : 1; /* a zeroed struct: the cycles */
    const uint64_t t = o->ts_start + rate * cycle; /* modulo 2^64 */

    return ts48 ? t & ((UINT64_C(1) << 48) - 1) : t;
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

static int parse_opts(tb_encoder_opts *o, const char *spec, char *err, size_t errlen);

int tb_encoder_opts_parse(tb_encoder_opts *o, const char *spec, char *err,
                          size_t errlen)
{
    tb_encoder_opts own, orig;
    int rc, give;

    if (!o || !spec)
        return TB_ERR_INVAL;
    if ((rc = tb_enc_opts_take(&own, o, err, errlen)) < 0)
        return rc;
    orig = own;
    rc = parse_opts(&own, spec, err, errlen);
    /* What was set before an error stays set, as it always has. */
    give = tb_enc_opts_give(o, &own, &orig, rc < 0 ? NULL : err, errlen);
    return rc < 0 ? rc : give;
}

static int parse_opts(tb_encoder_opts *o, const char *spec, char *err, size_t errlen)
{
    char buf[512], *tok, *save = NULL;

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
        } else if (!strcmp(tok, "abandon") && !val) {
            o->apo_abandon = true;
        } else if (!strcmp(tok, "ts48") && !val) {
            o->ts48 = true;
        } else if (!strcmp(tok, "exc0") && !val) {
            o->ns_exc0 = true;
        } else if (!strcmp(tok, "dataonly") && !val) {
            o->data_only = true;
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
        } else if (!strcmp(tok, "tsstart")) {
            if (!parse_u64(val, &v))
                return fail(err, errlen, "tsstart=N: the timestamp counter at cycle 0, "
                            "0 to 2^64-1", val);
            o->ts_start = v;
        } else if (!strcmp(tok, "tsrate")) {
            if (!parse_u64(val, &v) || v < 1 || v > 0xFFFFFFFFu)
                return fail(err, errlen, "tsrate=N: timestamp ticks per cycle, 1 to "
                            "2^32-1", val);
            o->ts_rate = (uint32_t)v;
        } else if (!strcmp(tok, "tsper")) {
            if (!parse_u64(val, &v) || v > 0xFFFFFFFFu)
                return fail(err, errlen, "bad timestamp period", val);
            o->ts_period = (uint32_t)v;
        } else if (!strcmp(tok, "trigger")) {
            if (!parse_u64(val, &v))
                return fail(err, errlen, "bad trigger instruction", val);
            o->trigger_at = v;
        } else if (!strcmp(tok, "trigdelay")) {
            if (!parse_u64(val, &v) || v > 0xFFFFFFFFu)
                return fail(err, errlen, "trigdelay=N: port cycles, 0 to 2^32-1", val);
            o->trigger_delay = (uint32_t)v;
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

int tb_enc_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
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
#define cfg_fail(err, errlen, ...) tb_enc_fail(err, errlen, TB_ERR_CONFIG, __VA_ARGS__)

/* Data-only mode, ETMCR[20] (IHI0014Q 7.4.10, ETMv3.1 and later): no
 * instruction trace, so no P-header, branch or data-suppressed packet,
 * and the data-only I-sync (7.10.5).  From ETMv3.3 it exists only with
 * full data tracing (7.4.10); the model asks that of every version:
 * addresses and values (without an instruction a data-only decoder
 * can place a transfer only by its address), no ViewData ranges (every
 * word of an LSM traced: the address of each word then follows from the
 * one before it), no out-of-order data and no suppression (7.4.10 leaves
 * their data-only forms unsaid).  What the trace cannot tell beside the
 * transfers (cycles, time, context, FIFO overflows) is left out, so that
 * every data-only trace is checked whole (docs/etmv3-data-model.md). */
static int dataonly_check(const tb_encoder_opts *o, char *err, size_t errlen)
{
    if (o->protocol != TB_PROTO_ETMV3 || o->v7m)
        return cfg_fail(err, errlen, "dataonly: data-only mode (ETMCR[20]) is an ETMv3 "
                        "feature of A/R cores with data trace");
    if (o->arch_minor < 1)
        return cfg_fail(err, errlen, "dataonly: data-only mode exists from ETMv3.1 "
                        "(IHI0014Q 7.4.10), not ETMv3.0 (use v=1 or later)");
    if (o->data_trace != 3 || o->n_dranges)
        return cfg_fail(err, errlen, "dataonly: data-only mode needs full data tracing "
                        "(IHI0014Q 7.4.10): data=both and no dataview");
    if (o->ooo_latency || o->suppress_level || o->cycle_accurate || o->timestamps ||
        o->ctxid_bytes || o->vmid || o->fifo_depth || o->branch_broadcast)
        return cfg_fail(err, errlen, "dataonly: %s is not modelled in data-only mode "
                        "(docs/etmv3-data-model.md); leave it out",
                        o->ooo_latency ? "ooo" : o->suppress_level ? "suppress"
                        : o->cycle_accurate ? "ca" : o->timestamps ? "ts"
                        : o->ctxid_bytes ? "ctxid" : o->vmid ? "vmid"
                        : o->fifo_depth ? "fifo" : "bb");
    return 0;
}

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

    tb_encoder_opts own;

    if (err && errlen)
        err[0] = '\0';
    if (!o || !cfg)
        return TB_ERR_INVAL;
    if ((rc = tb_enc_opts_take(&own, o, err, errlen)) < 0)
        return rc;
    o = &own;
    /* Cortex-M: what its ETM has (etmv3_v7m.c), before anything else. */
    if (o->v7m && (rc = tb_enc_v7m_config_err(o, err, errlen)) < 0)
        return rc;
    if (!o->timestamps && (o->ts_start || o->ts_rate > 1 || o->ts48))
        return cfg_fail(err, errlen, "%s: the timestamp counter needs timestamps (add ts)",
                        o->ts48 ? "ts48" : o->ts_start ? "tsstart" : "tsrate");
    if (o->ts48 && o->protocol != TB_PROTO_ETMV3)
        return cfg_fail(err, errlen, "ts48: 48-bit timestamps are an ETMv3 choice "
                        "(ETMCCER[29]); PTM's are 48-bit in PFT1.0 (v=0)");
    if (o->data_only && (rc = dataonly_check(o, err, errlen)) < 0)
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
    if (o->ns_exc0 && o->protocol != TB_PROTO_PTM)
        return cfg_fail(err, errlen, "exc0: a PTM option (ETMv3 always tells a security "
                        "state change on a branch with number-0 exception bytes; ETMv1 and "
                        "ETMv2 trace no security state)");
    if (o->apo_abandon && o->protocol != TB_PROTO_ETMV1)
        return cfg_fail(err, errlen, "abandon: a branch abandoned in its APO cycles is "
                        "ETMv1's (IHI0014Q 5.6.1); other protocols have no APO (drop abandon)");
    if (o->trigger_delay && !o->trigger_at)
        return cfg_fail(err, errlen, "trigdelay: a delay after the trigger instruction "
                        "needs trigger=SEQ");
    if (o->protocol == TB_PROTO_ETMV1 || o->protocol == TB_PROTO_ETMV2)
        return tb_enc_port_config_err(o, cfg, err, errlen);
    if (o->trigger_delay)
        return cfg_fail(err, errlen, "trigdelay: a trigger between instructions is modelled "
                        "for the ETMv1/ETMv2 trace ports only (drop trigdelay)");
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
    /* Standalone cycle count packets: ETMv3 only (PTM has none); they
     * need cycle-accurate mode (IHI0014Q 7.3.4, protocol-notes 2.2, 2.6).
     * Ignore packets: ETMv3 (IHI0014Q 7.11.2) and PTM (IHI0035B 4.5
     * Table 4.1, 0x66), both from the encoder's one period. */
    if (ptm && o->cc_pkt)
        return cfg_fail(err, errlen, "ccpkt: the cycle count packet is ETMv3's; PTM has "
                        "none");
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
            (o->data_only ? 1u << 20 : 0) |
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
              (1u << 28) | (o->ts48 ? 0 : 1u << 29);
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
