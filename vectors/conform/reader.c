/*
 * The decoder's output, line by line, as items (conform.h): the addr
 * form, OpenCSD's `trc_pkt_lister -decode` listing and the JSON-lines
 * form (docs/vectors.md "Test your decoder").
 *
 * Ranges (OpenCSD's INSTR_RANGE elements, JSON "start"/"count") are
 * walked over the vector's memory image with the instruction sizes of
 * the ARM ARM alone (A32: 4 bytes; T32: 4 when the first halfword's bits
 * [15:11] are 0b11101, 0b11110 or 0b11111, else 2: ARM DDI 0406C A6.1),
 * not with tracebench's classifier: reading another decoder's output
 * leans on nothing of tracebench's own decode.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"
#include "tracebench/snapshot.h"

/* One JSON line's keys that mean something here. */
typedef struct jval {
    bool present;
    bool is_str, is_num;
    char str[64];
    bool str_long;             /* did not fit */
    double num;
    bool num_int;
    unsigned long long u;
} jval;

typedef struct jobj {
    jval id, addr, isa, atom, start, count, atoms, gap, lost, index, nacc;
    char atoms_buf[4096];
    size_t atoms_len;
} jobj;

struct tb_conform_reader {
    tb_conform_format format;
    bool ptm;                  /* PTM: E/N on waypoints only */
    const tb_memimage *mem;
    char diag[200];
    jobj json;                 /* the JSON line being read */
};

tb_conform_reader *tb_conform_reader_new(tb_conform_format f, const char *protocol,
                                         const struct tb_memimage *mem)
{
    tb_conform_reader *r = calloc(1, sizeof *r);

    if (!r)
        return NULL;
    r->format = f;
    r->ptm = protocol && !strcmp(protocol, "ptm");
    r->mem = mem;
    return r;
}

void tb_conform_reader_free(tb_conform_reader *r)
{
    free(r);
}

const char *tb_conform_reader_diag(const tb_conform_reader *r)
{
    return r->diag;
}

/* ------------------------------------------------------------------ */
/* Ranges over the image. */

typedef struct range {
    uint32_t start;
    uint64_t count;
    char isa[8];
    char last_atom;            /* the last instruction's atom */
    const char *atoms;         /* or one per instruction (JSON "atoms") */
    size_t n_atoms;
    int id;
    bool has_end;              /* OpenCSD: where the range must end */
    uint32_t end;
} range;

static bool insn_size(const tb_memimage *mem, uint32_t addr, const char *isa, unsigned *size)
{
    uint8_t hw[2];

    if (!strcmp(isa, "A32") || !strcmp(isa, "A64")) {
        uint8_t w[4];

        /* Only code the image holds: a range's count is the decoder's
         * word, and walking past the image would run as long as it says
         * (found by fuzz_conform: an A32 range of 2768 from 256 bytes). */
        *size = 4;
        return tb_memimage_read(mem, addr, w, 4) == 4;
    }
    if (strcmp(isa, "T32") && strcmp(isa, "TEE"))
        return false;
    if (tb_memimage_read(mem, addr, hw, 2) != 2)
        return false;
    *size = (hw[1] >> 3) >= 0x1D ? 4 : 2;
    return true;
}

static size_t emit_range(const tb_conform_reader *r, const range *g, tb_conform_item_cb cb,
                         void *ctx)
{
    tb_conform_item it;
    uint32_t a = g->start;
    unsigned sz = 0;
    size_t given = 0;

    memset(&it, 0, sizeof it);
    it.id = g->id;
    if (!r->mem) {
        it.kind = TB_CI_BAD;
        snprintf(it.word, sizeof it.word, "a range, but no memory image to walk it");
        cb(ctx, &it);
        return 1;
    }
    for (uint64_t i = 0; i < g->count; i++) {
        if (!insn_size(r->mem, a, g->isa, &sz)) {
            it.kind = TB_CI_BAD;
            snprintf(it.word, sizeof it.word, "range: no code at 0x%08X in the image",
                     (unsigned)a);
            cb(ctx, &it);
            return given + 1;
        }
        it.kind = TB_CI_INSN;
        it.addr = a;
        memcpy(it.isa, g->isa, sizeof it.isa);
        if (g->atoms)
            it.atom = i < g->n_atoms ? g->atoms[i] : 'E';
        else
            it.atom = i + 1 == g->count ? g->last_atom : 'E';
        given++;
        if (cb(ctx, &it))
            return given;
        a += sz;
    }
    if (g->has_end && a != g->end) {
        it.kind = TB_CI_BAD;
        snprintf(it.word, sizeof it.word, "range ends at 0x%08X, not 0x%08X", (unsigned)a,
                 (unsigned)g->end);
        cb(ctx, &it);
        given++;
    }
    return given;
}

/* ------------------------------------------------------------------ */
/* OpenCSD: "Idx:12; ID:10; OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec
 * range=0x20:[0x54] num_i(13) last_sz(4) (ISA=A32) E BR  b+link )". */

static size_t opencsd_line(tb_conform_reader *r, const char *line, tb_conform_item_cb cb,
                           void *ctx)
{
    const char *g = strstr(line, "OCSD_GEN_TRC_ELEM_");
    tb_conform_item it;
    unsigned id;
    const char *idp;

    if (!r->diag[0] && strstr(line, "OCSD_ERR"))
        snprintf(r->diag, sizeof r->diag, "%s", line);
    if (!g)
        return 0; /* packets, banners, statistics */
    memset(&it, 0, sizeof it);
    it.id = -1;
    idp = strstr(line, "ID:");
    if (idp && idp < g && isxdigit((unsigned char)idp[3])) {
        /* CoreSight trace IDs are 7 bits (IHI0029 D4.2); a longer one is
         * no source's (found by fuzz_conform: "ID:109" read as 0x109). */
        char *e;
        unsigned long v = strtoul(idp + 3, &e, 16);

        if (v > 0x7F || e - (idp + 3) > 2) {
            it.kind = TB_CI_BAD;
            snprintf(it.word, sizeof it.word, "ID:%.*s is not a trace ID (0..7f)",
                     (int)(e - (idp + 3) > 16 ? 16 : e - (idp + 3)), idp + 3);
            cb(ctx, &it);
            return 1;
        }
        id = (unsigned)v;
        it.id = (int)id;
    }
    g += strlen("OCSD_GEN_TRC_ELEM_");
    if (!strncmp(g, "INSTR_RANGE(", 12)) {
        unsigned start, end, num, sz;
        char isa[8] = "", atom = 0;
        range rg;
        const char *ty;
        int k = sscanf(g, "INSTR_RANGE(exec range=0x%x:[0x%x] num_i(%u) last_sz(%u) (ISA=%7[^)]) %c",
                       &start, &end, &num, &sz, isa, &atom);

        if (k != 6 || (atom != 'E' && atom != 'N') || !num) {
            it.kind = TB_CI_BAD;
            snprintf(it.word, sizeof it.word, "an INSTR_RANGE line not in OpenCSD 1.3's form");
            cb(ctx, &it);
            return 1;
        }
        memset(&rg, 0, sizeof rg);
        rg.start = start;
        rg.count = num;
        rg.id = it.id;
        rg.has_end = true;
        rg.end = end;
        tb_conform_isa_norm(isa, strlen(isa), rg.isa);
        /* After "(ISA=A32) E ": the last instruction's type.  PTM traces
         * waypoints only (IHI0035B B.3.2): a range's last instruction
         * carries the atom when it is a branch or ISB (OpenCSD's BR,
         * iBR, ISB), else it only ran: E, as in the addr form. */
        ty = strstr(g, ") E ") ? strstr(g, ") E ") : strstr(g, ") N ");
        ty = ty ? ty + 4 : "";
        while (*ty == ' ')
            ty++;
        rg.last_atom = atom;
        if (r->ptm && strncmp(ty, "BR", 2) && strncmp(ty, "iBR", 3) && strncmp(ty, "ISB", 3))
            rg.last_atom = 'E';
        return emit_range(r, &rg, cb, ctx);
    }
    if (!strncmp(g, "TRACE_ON(", 9)) {
        it.kind = TB_CI_GAP;
        snprintf(it.word, sizeof it.word, "%s", strstr(g, "overflow") ? "overflow" : "trace-on");
    } else if (!strncmp(g, "NO_SYNC(", 8)) {
        if (strstr(g, "init-decoder"))
            return 0; /* the start: no gap */
        it.kind = TB_CI_GAP;
        snprintf(it.word, sizeof it.word, "%s", strstr(g, "overflow") ? "overflow" : "no-sync");
    } else if (!strncmp(g, "ADDR_NACC(", 10)) {
        it.kind = TB_CI_NACC;
        it.addr = (uint32_t)strtoul(g + 10, NULL, 16);
    } else if (!strncmp(g, "ADDR_UNKNOWN(", 13)) {
        it.kind = TB_CI_UNKNOWN;
        it.atom = '?';
    } else {
        return 0; /* exceptions, context, timestamps, cycle counts, events, EO_TRACE */
    }
    cb(ctx, &it);
    return 1;
}

/* ------------------------------------------------------------------ */
/* JSON lines: one flat object a line (docs/vectors.md); other keys and
 * nested values are skipped. */


static const char *jws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    return p;
}

/* A string at p (after its '"'); its text into out (may be NULL), cut at
 * cap.  Returns the position after the closing quote, NULL when bad. */
static const char *jstring(const char *p, char *out, size_t cap, size_t *outlen, bool *cut)
{
    size_t n = 0;

    for (;;) {
        char c = *p++;

        if (!c)
            return NULL;
        if (c == '"')
            break;
        if ((unsigned char)c < 0x20)
            return NULL;
        if (c == '\\') {
            char e = *p++;

            switch (e) {
            case '"': case '\\': case '/': c = e; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u':
                for (int k = 0; k < 4; k++)
                    if (!isxdigit((unsigned char)p[k]))
                        return NULL;
                p += 4;
                c = '?';
                break;
            default:
                return NULL;
            }
        }
        if (out && n + 1 < cap)
            out[n++] = c;
        else if (cut)
            *cut = true;
    }
    if (out && cap)
        out[n] = '\0';
    if (outlen)
        *outlen = n;
    return p;
}

/* Skips any value; NULL when bad. */
static const char *jskip(const char *p, int depth)
{
    p = jws(p);
    if (depth > 64)
        return NULL;
    if (*p == '"')
        return jstring(p + 1, NULL, 0, NULL, NULL);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';

        p = jws(p + 1);
        if (*p == close)
            return p + 1;
        for (;;) {
            if (close == '}') {
                if (*p != '"' || !(p = jstring(p + 1, NULL, 0, NULL, NULL)))
                    return NULL;
                p = jws(p);
                if (*p++ != ':')
                    return NULL;
            }
            if (!(p = jskip(p, depth + 1)))
                return NULL;
            p = jws(p);
            if (*p == ',') {
                p = jws(p + 1);
                continue;
            }
            if (*p == close)
                return p + 1;
            return NULL;
        }
    }
    if (!strncmp(p, "true", 4))
        return p + 4;
    if (!strncmp(p, "false", 5))
        return p + 5;
    if (!strncmp(p, "null", 4))
        return p + 4;
    if (*p == '-' || isdigit((unsigned char)*p)) {
        char *e;

        errno = 0;
        (void)strtod(p, &e);
        return e > p ? e : NULL;
    }
    return NULL;
}

static const char *jvalue(const char *p, jval *v, char *bigbuf, size_t bigcap, size_t *biglen)
{
    p = jws(p);
    memset(v, 0, sizeof *v);
    v->present = true;
    if (*p == '"') {
        v->is_str = true;
        if (bigbuf)
            return jstring(p + 1, bigbuf, bigcap, biglen, &v->str_long);
        return jstring(p + 1, v->str, sizeof v->str, NULL, &v->str_long);
    }
    if (*p == '-' || isdigit((unsigned char)*p)) {
        char *e;
        const char *q = p;

        v->is_num = true;
        v->num = strtod(p, &e);
        if (e == p)
            return NULL;
        v->num_int = true;
        for (; q < e; q++)
            if (*q == '.' || *q == 'e' || *q == 'E' || *q == '-')
                v->num_int = false;
        if (v->num_int) {
            errno = 0;
            v->u = strtoull(p, NULL, 10);
            if (errno)
                v->num_int = false;
        }
        return e;
    }
    return jskip(p, 0);
}

static bool jparse(const char *line, jobj *o, const char **why)
{
    const char *p = jws(line);

    memset(o, 0, sizeof *o);
    if (*p != '{') {
        *why = "not a JSON object";
        return false;
    }
    p = jws(p + 1);
    if (*p == '}')
        goto end;
    for (;;) {
        char key[32];
        bool cut = false;
        jval skip, *v = &skip;

        if (*p != '"' || !(p = jstring(p + 1, key, sizeof key, NULL, &cut))) {
            *why = "not a JSON object (bad key)";
            return false;
        }
        p = jws(p);
        if (*p++ != ':') {
            *why = "not a JSON object (no ':' after a key)";
            return false;
        }
        if (!cut) {
            if (!strcmp(key, "id")) v = &o->id;
            else if (!strcmp(key, "addr")) v = &o->addr;
            else if (!strcmp(key, "isa")) v = &o->isa;
            else if (!strcmp(key, "atom")) v = &o->atom;
            else if (!strcmp(key, "start")) v = &o->start;
            else if (!strcmp(key, "count")) v = &o->count;
            else if (!strcmp(key, "atoms")) v = &o->atoms;
            else if (!strcmp(key, "gap")) v = &o->gap;
            else if (!strcmp(key, "lost")) v = &o->lost;
            else if (!strcmp(key, "index")) v = &o->index;
            else if (!strcmp(key, "nacc")) v = &o->nacc;
        }
        if (v == &o->atoms)
            p = jvalue(p, v, o->atoms_buf, sizeof o->atoms_buf, &o->atoms_len);
        else if (v == &skip)
            p = jskip(p, 0);
        else
            p = jvalue(p, v, NULL, 0, NULL);
        if (!p) {
            *why = "not a JSON object (bad value)";
            return false;
        }
        p = jws(p);
        if (*p == ',') {
            p = jws(p + 1);
            continue;
        }
        if (*p == '}')
            break;
        *why = "not a JSON object (no ',' or '}' after a value)";
        return false;
    }
end:
    p = jws(p + 1);
    if (*p) {
        *why = "text after the JSON object";
        return false;
    }
    return true;
}

/* A number, or a string of one ("0x8000", "32768"), up to max. */
static bool jnum(const jval *v, unsigned long long max, unsigned long long *out)
{
    if (v->is_num && v->num_int && v->u <= max) {
        *out = v->u;
        return true;
    }
    if (v->is_str && v->str[0] && !v->str_long) {
        char *e;

        errno = 0;
        *out = strtoull(v->str, &e, 0);
        return !*e && !errno && *out <= max && v->str[0] != '-';
    }
    return false;
}

static char jatom(const jval *v, bool *ok)
{
    if (!v->present)
        return 'E';
    if (v->is_str && (!strcmp(v->str, "E") || !strcmp(v->str, "e")))
        return 'E';
    if (v->is_str && (!strcmp(v->str, "N") || !strcmp(v->str, "n")))
        return 'N';
    *ok = false;
    return '?';
}

static size_t json_line(tb_conform_reader *r, const char *line, tb_conform_item_cb cb,
                        void *ctx)
{
    jobj *o = &r->json;
    tb_conform_item it;
    const char *why = NULL;
    unsigned long long v;
    bool ok = true;

    memset(&it, 0, sizeof it);
    it.id = -1;
    if (!*jws(line))
        return 0;
    if (!jparse(line, o, &why)) {
        it.kind = TB_CI_BAD;
        snprintf(it.word, sizeof it.word, "%s", why);
        cb(ctx, &it);
        return 1;
    }
    if (o->id.present) {
        if (!jnum(&o->id, 0x7F, &v)) {
            it.kind = TB_CI_BAD;
            snprintf(it.word, sizeof it.word, "\"id\" is not a trace ID (0..0x7f)");
            cb(ctx, &it);
            return 1;
        }
        it.id = (int)v;
    }
#define JBAD(msg)                                                  \
    do {                                                           \
        it.kind = TB_CI_BAD;                                       \
        snprintf(it.word, sizeof it.word, "%s", msg);              \
        cb(ctx, &it);                                              \
        return 1;                                                  \
    } while (0)
    if (o->addr.present) {
        if (!jnum(&o->addr, 0xFFFFFFFFull, &v))
            JBAD("\"addr\" is not a 32-bit address");
        if (!o->isa.present || !o->isa.is_str)
            JBAD("an instruction without \"isa\"");
        it.kind = TB_CI_INSN;
        it.addr = (uint32_t)v;
        tb_conform_isa_norm(o->isa.str, strlen(o->isa.str), it.isa);
        it.atom = jatom(&o->atom, &ok);
        if (!ok)
            JBAD("\"atom\" is not \"E\" or \"N\"");
    } else if (o->start.present || o->count.present) {
        range rg;
        unsigned long long n;

        if (!jnum(&o->start, 0xFFFFFFFFull, &v) || !jnum(&o->count, 1ull << 32, &n) || !n)
            JBAD("a range needs \"start\" (an address) and \"count\" (1 or more)");
        if (!o->isa.present || !o->isa.is_str)
            JBAD("a range without \"isa\"");
        memset(&rg, 0, sizeof rg);
        rg.start = (uint32_t)v;
        rg.count = n;
        rg.id = it.id;
        tb_conform_isa_norm(o->isa.str, strlen(o->isa.str), rg.isa);
        rg.last_atom = jatom(&o->atom, &ok);
        if (!ok)
            JBAD("\"atom\" is not \"E\" or \"N\"");
        if (o->atoms.present) {
            if (!o->atoms.is_str || o->atoms.str_long || o->atoms_len != n)
                JBAD("\"atoms\" must hold one E or N per instruction");
            for (size_t k = 0; k < o->atoms_len; k++) {
                o->atoms_buf[k] = (char)toupper((unsigned char)o->atoms_buf[k]);
                if (o->atoms_buf[k] != 'E' && o->atoms_buf[k] != 'N')
                    JBAD("\"atoms\" must hold one E or N per instruction");
            }
            rg.atoms = o->atoms_buf;
            rg.n_atoms = o->atoms_len;
        }
        return emit_range(r, &rg, cb, ctx);
    } else if (o->nacc.present) {
        if (!jnum(&o->nacc, 0xFFFFFFFFull, &v))
            JBAD("\"nacc\" is not a 32-bit address");
        it.kind = TB_CI_NACC;
        it.addr = (uint32_t)v;
    } else if (o->gap.present) {
        it.kind = TB_CI_GAP;
        snprintf(it.word, sizeof it.word, "%s", o->gap.is_str && o->gap.str[0] ? o->gap.str : "?");
    } else if (o->lost.present) {
        it.kind = TB_CI_LOST;
        snprintf(it.word, sizeof it.word, "%s", o->lost.is_str && o->lost.str[0] ? o->lost.str : "?");
        if (o->index.present && jnum(&o->index, ~0ull, &v))
            it.index = v;
    } else {
        return 0; /* another kind of record: exceptions, timestamps... */
    }
#undef JBAD
    cb(ctx, &it);
    return 1;
}

size_t tb_conform_reader_line(tb_conform_reader *r, const char *line, tb_conform_item_cb cb,
                              void *ctx)
{
    tb_conform_item it;

    switch (r->format) {
    case TB_CONFORM_OPENCSD:
        return opencsd_line(r, line, cb, ctx);
    case TB_CONFORM_JSON:
        return json_line(r, line, cb, ctx);
    case TB_CONFORM_ADDR:
        break;
    }
    tb_conform_parse_addr(line, true, &it);
    if (it.kind == TB_CI_NONE)
        return 0;
    cb(ctx, &it);
    return 1;
}
