/* Packet printers: a readable line and a JSON object per packet. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tracebench/print.h"

/* snprintf into a growing position; keeps the total length needed. */
typedef struct out {
    char *buf;
    size_t cap;
    size_t len;
} out;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void put(out *o, const char *fmt, ...)
{
    va_list ap;
    int n;
    size_t room = o->len < o->cap ? o->cap - o->len : 0;

    va_start(ap, fmt);
    n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len += (size_t)n;
}

static int done(out *o)
{
    if (o->cap)
        o->buf[o->len < o->cap ? o->len : o->cap - 1] = '\0';
    return (int)o->len;
}

/* A/R-profile numbers (protocol-notes 2.7). */
const char *tb_exc_number_name(unsigned num)
{
    static const char *const names[16] = {
        "none",        "debug-halt", "smc",       "hyp",
        "async-abort", "jazelle/thumbee-check", "reserved6", "reserved7",
        "reset",       "undef",      "svc",       "prefetch-abort",
        "data-abort",  "generic",    "irq",       "fiq",
    };
    return num < 16 ? names[num] : "v7m";
}

const char *tb_packet_atoms(const tb_packet *pkt, char buf[24])
{
    size_t n = pkt->seq_len < 23 ? pkt->seq_len : 23;

    memcpy(buf, pkt->seq, n);
    buf[n] = '\0';
    return buf;
}

static const char *reason_name(unsigned r)
{
    static const char *const names[4] = {"periodic", "trace-on", "overflow",
                                         "debug-exit"};
    return names[r & 3];
}

static void put_fields(out *o, const tb_packet *p)
{
    char atoms[24];

    switch (p->kind) {
    case TB_PKT_NOTSYNC:
        put(o, " skipped=%" PRIu64, p->count);
        break;
    case TB_PKT_ISYNC:
        put(o, " reason=%s", reason_name(p->reason));
        if (!p->lsip || p->addr_bits)
            put(o, " addr=0x%08" PRIx32 " isa=%s", p->addr, tb_isa_name(p->isa));
        put(o, " %s%s", p->ns ? "NS" : "S", p->hyp ? " hyp" : "");
        if (p->lsip)
            put(o, " lsip=0x%08" PRIx32 "(%s)", p->lsip_addr,
                tb_isa_name(p->lsip_isa));
        if (p->has_ctxid)
            put(o, " ctxid=0x%" PRIx32, p->context_id);
        if (p->has_cc)
            put(o, " cc=%" PRIu32, p->cc);
        break;
    case TB_PKT_ATOM:
        put(o, " atoms=%s", tb_packet_atoms(p, atoms));
        if (p->has_cc)
            put(o, " cc=%" PRIu32, p->cc);
        break;
    case TB_PKT_BRANCH:
    case TB_PKT_WP_UPDATE:
        if (p->addr_known)
            put(o, " addr=0x%08" PRIx32, p->addr);
        else
            put(o, " addr=?(low %u bits 0x%" PRIx32 ")", p->addr_bits, p->addr);
        put(o, " bits=%u", p->addr_bits);
        if (p->isa_changed)
            put(o, " isa=%s", tb_isa_name(p->isa));
        if (p->has_exc) {
            put(o, " exception=%s(%u)", tb_exc_number_name(p->exc_num),
                p->exc_num);
            if (p->exc_cancel)
                put(o, " cancel");
        }
        if (p->ns_valid)
            put(o, " %s", p->ns ? "NS" : "S");
        if (p->hyp_valid && p->hyp)
            put(o, " hyp");
        if (p->altisa)
            put(o, " altisa");
        if (p->has_cc)
            put(o, " cc=%" PRIu32, p->cc);
        break;
    case TB_PKT_CYCLE_COUNT:
        put(o, " cc=%" PRIu32, p->cc);
        break;
    case TB_PKT_TIMESTAMP:
        put(o, " ts=0x%" PRIx64 " (%" PRIu64 ") bits=%u", p->ts, p->ts,
            p->ts_bits);
        if (p->has_cc)
            put(o, " cc=%" PRIu32, p->cc);
        break;
    case TB_PKT_CONTEXT_ID:
        put(o, " ctxid=0x%" PRIx32, p->context_id);
        break;
    case TB_PKT_VMID:
        put(o, " vmid=0x%02x", p->vmid);
        break;
    case TB_PKT_DATA:
    case TB_PKT_OOO_DATA:
    case TB_PKT_OOO_PLACEHOLDER:
    case TB_PKT_VALUE_NOT_TRACED:
        if (p->data_tag)
            put(o, " tag=%u", p->data_tag);
        if (p->has_data_addr)
            put(o, " daddr=0x%08" PRIx32 " bits=%u%s", p->data_addr,
                p->data_addr_bits, p->data_be ? " BE" : "");
        if (p->kind == TB_PKT_DATA || p->kind == TB_PKT_OOO_DATA)
            put(o, " value=0x%" PRIx32 " size=%u", p->data_value, p->data_size);
        break;
    case TB_PKT_RESERVED:
    case TB_PKT_BAD_SEQUENCE:
    case TB_PKT_BAD_TRACEMODE:
    case TB_PKT_INCOMPLETE:
        put(o, " error=\"%s\"", tb_err_str(p->err));
        break;
    default:
        break;
    }
}

int tb_packet_format(const tb_packet *pkt, char *buf, size_t cap)
{
    out o = {buf, cap, 0};
    unsigned i;

    put(&o, "%10" PRIu64 "  %-16s", pkt->index, tb_pkt_kind_name(pkt->kind));
    put(&o, " [");
    for (i = 0; i < pkt->size && i < TB_PKT_MAX_BYTES; i++)
        put(&o, i ? " %02x" : "%02x", pkt->bytes[i]);
    put(&o, "]");
    put_fields(&o, pkt);
    return done(&o);
}

static void json_bool(out *o, const char *key, bool v)
{
    put(o, ",\"%s\":%s", key, v ? "true" : "false");
}

int tb_packet_format_json(const tb_packet *p, int id, char *buf, size_t cap)
{
    out o = {buf, cap, 0};
    char atoms[24];
    unsigned i;

    put(&o, "{");
    if (id >= 0)
        put(&o, "\"id\":%d,", id);
    put(&o, "\"index\":%" PRIu64 ",\"kind\":\"%s\",\"protocol\":\"%s\",\"bytes\":\"",
        p->index, tb_pkt_kind_name(p->kind), tb_protocol_name(p->protocol));
    for (i = 0; i < p->size && i < TB_PKT_MAX_BYTES; i++)
        put(&o, "%02x", p->bytes[i]);
    put(&o, "\"");

    switch (p->kind) {
    case TB_PKT_NOTSYNC:
        put(&o, ",\"skipped\":%" PRIu64, p->count);
        break;
    case TB_PKT_ISYNC:
        put(&o, ",\"reason\":\"%s\",\"addr\":%" PRIu32 ",\"isa\":\"%s\"",
            reason_name(p->reason), p->addr, tb_isa_name(p->isa));
        json_bool(&o, "ns", p->ns);
        json_bool(&o, "hyp", p->hyp);
        json_bool(&o, "lsip", p->lsip);
        if (p->lsip)
            put(&o, ",\"lsip_addr\":%" PRIu32 ",\"lsip_isa\":\"%s\"",
                p->lsip_addr, tb_isa_name(p->lsip_isa));
        if (p->has_ctxid)
            put(&o, ",\"context_id\":%" PRIu32, p->context_id);
        break;
    case TB_PKT_ATOM:
        put(&o, ",\"atoms\":\"%s\",\"format\":%u", tb_packet_atoms(p, atoms),
            p->phdr_format);
        break;
    case TB_PKT_BRANCH:
    case TB_PKT_WP_UPDATE:
        put(&o, ",\"addr\":%" PRIu32 ",\"addr_bits\":%u,\"isa\":\"%s\"",
            p->addr, p->addr_bits, tb_isa_name(p->isa));
        json_bool(&o, "addr_known", p->addr_known);
        json_bool(&o, "isa_changed", p->isa_changed);
        if (p->has_exc)
            put(&o, ",\"exception\":%u,\"exception_name\":\"%s\",\"cancel\":%s",
                p->exc_num, tb_exc_number_name(p->exc_num),
                p->exc_cancel ? "true" : "false");
        if (p->ns_valid)
            json_bool(&o, "ns", p->ns);
        if (p->hyp_valid)
            json_bool(&o, "hyp", p->hyp);
        json_bool(&o, "altisa", p->altisa);
        break;
    case TB_PKT_TIMESTAMP:
        put(&o, ",\"ts\":%" PRIu64 ",\"ts_bits\":%u", p->ts, p->ts_bits);
        break;
    case TB_PKT_CONTEXT_ID:
        put(&o, ",\"context_id\":%" PRIu32, p->context_id);
        break;
    case TB_PKT_VMID:
        put(&o, ",\"vmid\":%u", p->vmid);
        break;
    case TB_PKT_DATA:
    case TB_PKT_OOO_DATA:
    case TB_PKT_OOO_PLACEHOLDER:
    case TB_PKT_VALUE_NOT_TRACED:
        put(&o, ",\"tag\":%u,\"value\":%" PRIu32 ",\"size\":%u", p->data_tag,
            p->data_value, p->data_size);
        if (p->has_data_addr)
            put(&o, ",\"data_addr\":%" PRIu32 ",\"data_addr_bits\":%u",
                p->data_addr, p->data_addr_bits);
        break;
    case TB_PKT_RESERVED:
    case TB_PKT_BAD_SEQUENCE:
    case TB_PKT_BAD_TRACEMODE:
    case TB_PKT_INCOMPLETE:
        put(&o, ",\"error\":\"%s\"", tb_err_str(p->err));
        break;
    default:
        break;
    }
    if (p->has_cc || p->kind == TB_PKT_CYCLE_COUNT)
        put(&o, ",\"cc\":%" PRIu32, p->cc);
    put(&o, "}");
    return done(&o);
}
