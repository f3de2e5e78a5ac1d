/* Trace element printers: one readable line, or one JSON object. */
#include <inttypes.h>
#include <stdio.h>

#include "tracebench/decoder.h"

const char *tb_elem_kind_name(tb_elem_kind k)
{
    static const char *const names[] = {
        "NO_SYNC", "TRACE_ON", "INSN_RANGE", "EXCEPTION", "EXC_RETURN",
        "CONTEXT", "TIMESTAMP", "CYCLE_COUNT", "EVENT", "ADDR_NACC",
        "ADDR_UNKNOWN", "END",
    };

    if ((unsigned)k < sizeof names / sizeof names[0])
        return names[k];
    return "UNKNOWN";
}

const char *tb_gap_reason_name(tb_gap_reason r)
{
    static const char *const names[] = {
        "init", "overflow", "filter", "no-memory", "bad-packet", "debug",
        "inconsistent",
    };

    if ((unsigned)r < sizeof names / sizeof names[0])
        return names[r];
    return "unknown";
}

static const char *isync_reason(unsigned r)
{
    static const char *const names[] = {"periodic", "trace-enable", "overflow",
                                        "debug-exit"};

    return r < 4 ? names[r] : "unknown";
}

#define CLAMP(n, len) ((n) < 0 ? 0 : ((size_t)(n) >= (len) ? (len) : (size_t)(n)))

int tb_elem_format(const tb_element *el, char *buf, size_t len)
{
    int n = 0;
    char cc[32] = "";

    if (!el || (!buf && len))
        return TB_ERR_INVAL;
    if (el->has_cc)
        snprintf(cc, sizeof cc, " cc=%" PRIu32, el->cc);
    switch (el->kind) {
    case TB_ELEM_NO_SYNC:
        n = snprintf(buf, len, "%" PRIu64 " NO_SYNC reason=%s%s%s", el->index,
                     tb_gap_reason_name((tb_gap_reason)el->reason), el->err ? " err=" : "",
                     el->err ? tb_err_str(el->err) : "");
        break;
    case TB_ELEM_TRACE_ON:
        n = snprintf(buf, len, "%" PRIu64 " TRACE_ON reason=%s addr=0x%08" PRIx32 " isa=%s%s",
                     el->index, isync_reason(el->reason), el->start,
                     tb_isa_name((tb_isa)el->isa), cc);
        break;
    case TB_ELEM_INSN_RANGE:
        n = snprintf(buf, len,
                     "%" PRIu64 " RANGE 0x%08" PRIx32 "-0x%08" PRIx32 " n=%" PRIu32
                     " isa=%s last=0x%08" PRIx32 " %s %c atoms=0x%" PRIx32 "%s",
                     el->index, el->start, el->end, el->count, tb_isa_name((tb_isa)el->isa),
                     el->last_addr, tb_wp_class_name((tb_wp_class)el->last_wp),
                     el->last_atom ? el->last_atom : '?', el->atom_bits, cc);
        break;
    case TB_ELEM_EXCEPTION:
        n = snprintf(buf, len,
                     "%" PRIu64 " EXCEPTION num=%u ret=0x%08" PRIx32 " vector=0x%08" PRIx32 "%s%s",
                     el->index, el->exc_num, el->pref_return, el->start,
                     el->cancelled ? " cancelled" : "", cc);
        break;
    case TB_ELEM_CONTEXT:
        n = snprintf(buf, len,
                     "%" PRIu64 " CONTEXT isa=%s %s%s ctxid=0x%08" PRIx32 " vmid=%u",
                     el->index, tb_isa_name((tb_isa)el->isa), el->ns ? "NS" : "S",
                     el->hyp ? " hyp" : "", el->context_id, el->vmid);
        break;
    case TB_ELEM_TIMESTAMP:
        n = snprintf(buf, len, "%" PRIu64 " TIMESTAMP %" PRIu64 "%s", el->index, el->ts, cc);
        break;
    case TB_ELEM_ADDR_NACC:
        n = snprintf(buf, len, "%" PRIu64 " ADDR_NACC 0x%08" PRIx32 " isa=%s%s", el->index,
                     el->start, tb_isa_name((tb_isa)el->isa), cc);
        break;
    case TB_ELEM_ADDR_UNKNOWN:
        n = snprintf(buf, len, "%" PRIu64 " ADDR_UNKNOWN %c%s", el->index,
                     el->last_atom ? el->last_atom : '?', cc);
        break;
    default:
        n = snprintf(buf, len, "%" PRIu64 " %s%s", el->index,
                     tb_elem_kind_name(el->kind), cc);
        break;
    }
    return n;
}

int tb_elem_format_json(const tb_element *el, char *buf, size_t len)
{
    int n, m;

    if (!el || (!buf && len))
        return TB_ERR_INVAL;
    n = snprintf(buf, len, "{\"index\":%" PRIu64 ",\"kind\":\"%s\"", el->index,
                 tb_elem_kind_name(el->kind));
    switch (el->kind) {
    case TB_ELEM_NO_SYNC:
        m = snprintf(buf + CLAMP(n, len), len - CLAMP(n, len), ",\"reason\":\"%s\"",
                     tb_gap_reason_name((tb_gap_reason)el->reason));
        break;
    case TB_ELEM_TRACE_ON:
        m = snprintf(buf + CLAMP(n, len), len - CLAMP(n, len),
                     ",\"reason\":\"%s\",\"addr\":%" PRIu32 ",\"isa\":\"%s\"",
                     isync_reason(el->reason), el->start, tb_isa_name((tb_isa)el->isa));
        break;
    case TB_ELEM_INSN_RANGE:
        m = snprintf(buf + CLAMP(n, len), len - CLAMP(n, len),
                     ",\"start\":%" PRIu32 ",\"end\":%" PRIu32 ",\"count\":%" PRIu32
                     ",\"isa\":\"%s\",\"last_addr\":%" PRIu32 ",\"last_class\":\"%s\","
                     "\"last_atom\":\"%c\",\"atom_bits\":%" PRIu32,
                     el->start, el->end, el->count, tb_isa_name((tb_isa)el->isa),
                     el->last_addr, tb_wp_class_name((tb_wp_class)el->last_wp),
                     el->last_atom ? el->last_atom : '?', el->atom_bits);
        break;
    case TB_ELEM_EXCEPTION:
        m = snprintf(buf + CLAMP(n, len), len - CLAMP(n, len),
                     ",\"num\":%u,\"pref_return\":%" PRIu32 ",\"vector\":%" PRIu32
                     ",\"cancelled\":%s",
                     el->exc_num, el->pref_return, el->start, el->cancelled ? "true" : "false");
        break;
    case TB_ELEM_CONTEXT:
        m = snprintf(buf + CLAMP(n, len), len - CLAMP(n, len),
                     ",\"isa\":\"%s\",\"ns\":%s,\"hyp\":%s,\"context_id\":%" PRIu32
                     ",\"vmid\":%u",
                     tb_isa_name((tb_isa)el->isa), el->ns ? "true" : "false",
                     el->hyp ? "true" : "false", el->context_id, el->vmid);
        break;
    case TB_ELEM_TIMESTAMP:
        m = snprintf(buf + CLAMP(n, len), len - CLAMP(n, len), ",\"ts\":%" PRIu64, el->ts);
        break;
    case TB_ELEM_ADDR_NACC:
        m = snprintf(buf + CLAMP(n, len), len - CLAMP(n, len), ",\"addr\":%" PRIu32, el->start);
        break;
    default:
        m = 0;
        break;
    }
    n += m;
    if (el->has_cc) {
        m = snprintf(buf + CLAMP(n, len), len - CLAMP(n, len), ",\"cc\":%" PRIu32, el->cc);
        n += m;
    }
    if (el->err) {
        m = snprintf(buf + CLAMP(n, len), len - CLAMP(n, len), ",\"error\":\"%s\"",
                     tb_err_str(el->err));
        n += m;
    }
    m = snprintf(buf + CLAMP(n, len), len - CLAMP(n, len), "}");
    return n + m;
}
