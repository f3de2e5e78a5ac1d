/* Packet printers: a readable line and a JSON object per packet, from
 * one list of fields (put_fields), so that both forms name every field
 * alike (docs/formats.md). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tracebench/print.h"

/* snprintf into a growing position; keeps the total length needed.
 * json picks the form the field helpers write. */
typedef struct out {
    char *buf;
    size_t cap;
    size_t len;
    bool json;
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

/* One field, named the same in both forms (docs/formats.md, and as in
 * common/elem_print.c): text ` key=value` with addresses and bit
 * patterns in hex and a true boolean as its bare key; JSON
 * `,"key":value` with plain numbers. */
static void f_hex(out *o, const char *key, uint32_t v)
{
    if (o->json)
        put(o, ",\"%s\":%" PRIu32, key, v);
    else
        put(o, " %s=0x%08" PRIx32, key, v);
}

static void f_num(out *o, const char *key, uint64_t v)
{
    if (o->json)
        put(o, ",\"%s\":%" PRIu64, key, v);
    else
        put(o, " %s=%" PRIu64, key, v);
}

static void f_word(out *o, const char *key, const char *v)
{
    if (o->json)
        put(o, ",\"%s\":\"%s\"", key, v);
    else
        put(o, " %s=%s", key, v);
}

static void f_text(out *o, const char *key, const char *v)
{
    if (o->json)
        put(o, ",\"%s\":\"%s\"", key, v);
    else
        put(o, " %s=\"%s\"", key, v);
}

static void f_bool(out *o, const char *key, bool v)
{
    if (o->json)
        put(o, ",\"%s\":%s", key, v ? "true" : "false");
    else if (v)
        put(o, " %s", key);
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
        f_num(o, "skipped", p->count);
        break;
    case TB_PKT_ISYNC:
        f_word(o, "reason", reason_name(p->reason));
        /* An LSiP I-sync without address bits names no address of its own. */
        if (!p->lsip || p->addr_bits) {
            f_hex(o, "addr", p->addr);
            f_word(o, "isa", tb_isa_name(p->isa));
        }
        f_bool(o, "ns", p->ns);
        f_bool(o, "hyp", p->hyp);
        if (p->lsip) {
            f_hex(o, "lsip_addr", p->lsip_addr);
            f_word(o, "lsip_isa", tb_isa_name(p->lsip_isa));
        }
        if (p->has_ctxid)
            f_hex(o, "context_id", p->context_id);
        break;
    case TB_PKT_ATOM:
        f_word(o, "atoms", tb_packet_atoms(p, atoms));
        if (p->protocol == TB_PROTO_ETMV3) /* PTM atoms have no formats */
            f_num(o, "format", p->phdr_format);
        break;
    case TB_PKT_BRANCH:
    case TB_PKT_WP_UPDATE:
        f_hex(o, "addr", p->addr);
        f_num(o, "addr_bits", p->addr_bits);
        /* Rare, so that the text shows it only when it matters: the
         * high bits were never seen, only the low addr_bits are real. */
        f_bool(o, "addr_partial", !p->addr_known);
        f_word(o, "isa", tb_isa_name(p->isa));
        f_bool(o, "isa_changed", p->isa_changed);
        if (p->has_exc) {
            f_num(o, "exc_num", p->exc_num);
            f_word(o, "exc_name", tb_exc_number_name(p->exc_num));
            f_bool(o, "cancelled", p->exc_cancel);
        }
        if (p->ns_valid)
            f_bool(o, "ns", p->ns);
        if (p->hyp_valid)
            f_bool(o, "hyp", p->hyp);
        f_bool(o, "altisa", p->altisa);
        /* ETMv1: a branch abandoned in its APO cycles (IHI0014Q 5.6.1);
         * only when set, so that no other listing changes. */
        if (p->abandoned)
            f_bool(o, "abandoned", true);
        break;
    case TB_PKT_TIMESTAMP:
        f_num(o, "ts", p->ts);
        f_num(o, "ts_bits", p->ts_bits);
        break;
    case TB_PKT_CONTEXT_ID:
        f_hex(o, "context_id", p->context_id);
        break;
    case TB_PKT_VMID:
        f_num(o, "vmid", p->vmid);
        break;
    case TB_PKT_DATA:
    case TB_PKT_OOO_DATA:
    case TB_PKT_OOO_PLACEHOLDER:
    case TB_PKT_VALUE_NOT_TRACED:
        if (p->protocol == TB_PROTO_ETMV1) {
            /* An ID marker or a cycle's data units (etmv1.h). */
            f_word(o, "etmv1", p->size ? "units" : "id");
            if (p->size)
                f_num(o, "sync_ev", p->sync_ev);
            break;
        }
        if (p->data_tag)
            f_num(o, "tag", p->data_tag);
        if (p->has_data_addr) {
            f_hex(o, "data_addr", p->data_addr);
            f_num(o, "data_addr_bits", p->data_addr_bits);
            f_bool(o, "data_be", p->data_be);
        }
        if (p->kind == TB_PKT_DATA || p->kind == TB_PKT_OOO_DATA) {
            f_hex(o, "value", p->data_value);
            f_num(o, "size", p->data_size);
        }
        break;
    case TB_PKT_RESERVED:
    case TB_PKT_BAD_SEQUENCE:
    case TB_PKT_BAD_TRACEMODE:
    case TB_PKT_INCOMPLETE:
        f_text(o, "error", tb_err_str(p->err));
        break;
    default:
        break;
    }
    if (p->has_cc || p->kind == TB_PKT_CYCLE_COUNT)
        f_num(o, "cc", p->cc);
}

int tb_packet_format(const tb_packet *pkt, char *buf, size_t cap)
{
    out o = {buf, cap, 0, false};
    unsigned i;

    put(&o, "%10" PRIu64 "  %-16s", pkt->index, tb_pkt_kind_name(pkt->kind));
    put(&o, " [");
    for (i = 0; i < pkt->size && i < TB_PKT_MAX_BYTES; i++)
        put(&o, i ? " %02x" : "%02x", pkt->bytes[i]);
    put(&o, "]");
    put_fields(&o, pkt);
    return done(&o);
}

int tb_packet_format_json(const tb_packet *p, int id, char *buf, size_t cap)
{
    out o = {buf, cap, 0, true};
    unsigned i;

    put(&o, "{");
    if (id >= 0)
        put(&o, "\"id\":%d,", id);
    put(&o, "\"index\":%" PRIu64 ",\"kind\":\"%s\",\"protocol\":\"%s\",\"bytes\":\"",
        p->index, tb_pkt_kind_name(p->kind), tb_protocol_name(p->protocol));
    for (i = 0; i < p->size && i < TB_PKT_MAX_BYTES; i++)
        put(&o, "%02x", p->bytes[i]);
    put(&o, "\"");
    put_fields(&o, p);
    put(&o, "}");
    return done(&o);
}
