/*
 * Trace element printers: one readable line, or one JSON object.
 *
 * Both forms come from one list of fields (elem_fields), so that a field
 * has the same name in both (docs/formats.md): the text line is
 * `INDEX KIND key=value ...`, the JSON object {"index":..,"kind":..,
 * "key":value,...} with the same keys in the same order.  Text shows
 * addresses and bit patterns in hex and a true boolean as its bare key
 * (a false one not at all); JSON has plain numbers and true/false.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "tracebench/decoder.h"
#include "tracebench/print.h"

const char *tb_elem_kind_name(tb_elem_kind k)
{
    static const char *const names[] = {
        "NO_SYNC", "TRACE_ON", "INSN_RANGE", "EXCEPTION", "EXC_RETURN",
        "CONTEXT", "TIMESTAMP", "CYCLE_COUNT", "EVENT", "ADDR_NACC",
        "ADDR_UNKNOWN", "END", "DATA",
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

/* The I-sync reason words: the packet listing's and the addr format's
 * `# gap trace-on` use the same ones. */
static const char *isync_reason(unsigned r)
{
    static const char *const names[] = {"periodic", "trace-on", "overflow",
                                        "debug-exit"};

    return r < 4 ? names[r] : "unknown";
}

/* snprintf into a growing position; keeps the total length needed, so
 * the printers keep snprintf's contract however small the buffer. */
typedef struct emit {
    char *buf;
    size_t cap, len;
    bool json;
} emit;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void put(emit *e, const char *fmt, ...)
{
    va_list ap;
    int n;
    size_t room = e->len < e->cap ? e->cap - e->len : 0;

    va_start(ap, fmt);
    n = vsnprintf(room ? e->buf + e->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        e->len += (size_t)n;
}

/* An address or bit pattern: hex in text, a number in JSON. */
static void f_hex(emit *e, const char *key, uint32_t v)
{
    if (e->json)
        put(e, ",\"%s\":%" PRIu32, key, v);
    else
        put(e, " %s=0x%08" PRIx32, key, v);
}

static void f_num(emit *e, const char *key, uint64_t v)
{
    if (e->json)
        put(e, ",\"%s\":%" PRIu64, key, v);
    else
        put(e, " %s=%" PRIu64, key, v);
}

/* A word (no spaces): bare in text, a string in JSON. */
static void f_word(emit *e, const char *key, const char *v)
{
    if (e->json)
        put(e, ",\"%s\":\"%s\"", key, v);
    else
        put(e, " %s=%s", key, v);
}

/* Text that may hold spaces (error strings): quoted in both. */
static void f_text(emit *e, const char *key, const char *v)
{
    if (e->json)
        put(e, ",\"%s\":\"%s\"", key, v);
    else
        put(e, " %s=\"%s\"", key, v);
}

static void f_bool(emit *e, const char *key, bool v)
{
    if (e->json)
        put(e, ",\"%s\":%s", key, v ? "true" : "false");
    else if (v)
        put(e, " %s", key);
}

/* A boolean shown whatever its value: "key=true|false" in text, as in
 * JSON.  The security state of a CONTEXT is read as much for Secure as
 * for Non-secure, and a missing key was taken for a missing field. */
static void f_state(emit *e, const char *key, bool v)
{
    if (e->json)
        put(e, ",\"%s\":%s", key, v ? "true" : "false");
    else
        put(e, " %s=%s", key, v ? "true" : "false");
}

static void f_atom(emit *e, const char *key, char atom)
{
    char s[2] = {atom ? atom : '?', '\0'};

    f_word(e, key, s);
}

static void elem_fields(emit *e, const tb_element *el)
{
    switch (el->kind) {
    case TB_ELEM_NO_SYNC:
        f_word(e, "reason", tb_gap_reason_name((tb_gap_reason)el->reason));
        break;
    case TB_ELEM_TRACE_ON:
        f_word(e, "reason", isync_reason(el->reason));
        f_hex(e, "addr", el->start);
        f_word(e, "isa", tb_isa_name((tb_isa)el->isa));
        break;
    case TB_ELEM_INSN_RANGE:
        f_hex(e, "start", el->start);
        f_hex(e, "end", el->end);
        f_num(e, "count", el->count);
        f_word(e, "isa", tb_isa_name((tb_isa)el->isa));
        f_hex(e, "last_addr", el->last_addr);
        f_word(e, "last_wp", tb_wp_class_name((tb_wp_class)el->last_wp));
        f_atom(e, "last_atom", el->last_atom);
        f_hex(e, "atom_bits", el->atom_bits);
        break;
    case TB_ELEM_EXCEPTION:
        f_num(e, "exc_num", el->exc_num);
        f_word(e, "exc_name", tb_exc_number_name(el->exc_num));
        f_hex(e, "pref_return", el->pref_return);
        f_hex(e, "vector", el->start);
        f_bool(e, "cancelled", el->cancelled);
        break;
    case TB_ELEM_CONTEXT:
        f_word(e, "isa", tb_isa_name((tb_isa)el->isa));
        f_state(e, "ns", el->ns);
        f_state(e, "hyp", el->hyp);
        f_hex(e, "context_id", el->context_id);
        f_num(e, "vmid", el->vmid);
        break;
    case TB_ELEM_TIMESTAMP:
        f_num(e, "ts", el->ts);
        break;
    case TB_ELEM_ADDR_NACC:
        f_hex(e, "addr", el->start);
        f_word(e, "isa", tb_isa_name((tb_isa)el->isa));
        break;
    case TB_ELEM_ADDR_UNKNOWN:
        f_atom(e, "last_atom", el->last_atom);
        break;
    case TB_ELEM_DATA: {
        /* One transfer (docs/formats.md): its instruction, direction,
         * size, and the address and value where the trace has them. */
        const unsigned fl = el->data_flags;

        if (el->isa != TB_ISA_UNKNOWN) {
            f_hex(e, "insn_addr", el->last_addr);
            f_word(e, "isa", tb_isa_name((tb_isa)el->isa));
        }
        /* Data-only mode (TB_DATA_NO_DIR): no instruction, so neither. */
        if ((!(fl & TB_DATA_SUPPRESSED) || (fl & TB_DATA_OOO)) && !(fl & TB_DATA_NO_DIR)) {
            f_bool(e, "store", fl & TB_DATA_STORE);
            f_num(e, "data_size", el->data_size);
        }
        if (!(fl & TB_DATA_NO_ADDR))
            f_hex(e, "data_addr", el->data_addr);
        if (!(fl & TB_DATA_NO_VALUE))
            f_hex(e, "data_value", el->data_value);
        if (el->reason)
            f_num(e, "tag", el->reason);
        f_bool(e, "placeholder", el->reason && !(fl & TB_DATA_OOO));
        f_bool(e, "ooo", fl & TB_DATA_OOO);
        f_bool(e, "addr_traced", !(fl & TB_DATA_NO_ADDR));
        f_bool(e, "value_traced", !(fl & TB_DATA_NO_VALUE));
        f_bool(e, "store_failed", fl & TB_DATA_STORE_FAILED);
        f_bool(e, "be", fl & TB_DATA_BE);
        f_bool(e, "suppressed", fl & TB_DATA_SUPPRESSED);
        break;
    }
    default:
        break;
    }
    /* Any element may carry cycles and an error. */
    if (el->has_cc)
        f_num(e, "cc", el->cc);
    if (el->err)
        f_text(e, "error", tb_err_str(el->err));
}

static int finish(emit *e)
{
    if (e->cap)
        e->buf[e->len < e->cap ? e->len : e->cap - 1] = '\0';
    return (int)e->len;
}

int tb_elem_format(const tb_element *el, char *buf, size_t len)
{
    emit e = {buf, len, 0, false};

    if (!el || (!buf && len))
        return TB_ERR_INVAL;
    put(&e, "%" PRIu64 " %s", el->index, tb_elem_kind_name(el->kind));
    elem_fields(&e, el);
    return finish(&e);
}

int tb_elem_format_json(const tb_element *el, char *buf, size_t len)
{
    emit e = {buf, len, 0, true};

    if (!el || (!buf && len))
        return TB_ERR_INVAL;
    put(&e, "{\"index\":%" PRIu64 ",\"kind\":\"%s\"", el->index, tb_elem_kind_name(el->kind));
    elem_fields(&e, el);
    put(&e, "}");
    return finish(&e);
}
