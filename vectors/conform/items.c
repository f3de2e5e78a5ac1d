/*
 * The addr form's lines as items (docs/vectors.md "The addr format"),
 * read the same way for the expected decode and for a decoder's output.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"

int tb_conform_format_parse(const char *name)
{
    if (!name)
        return -1;
    if (!strcmp(name, "addr"))
        return TB_CONFORM_ADDR;
    if (!strcmp(name, "opencsd"))
        return TB_CONFORM_OPENCSD;
    if (!strcmp(name, "json"))
        return TB_CONFORM_JSON;
    return -1;
}

const char *tb_conform_format_name(tb_conform_format f)
{
    switch (f) {
    case TB_CONFORM_ADDR: return "addr";
    case TB_CONFORM_OPENCSD: return "opencsd";
    case TB_CONFORM_JSON: return "json";
    }
    return "?";
}

void tb_conform_isa_norm(const char *s, size_t n, char out[8])
{
    char up[16];
    size_t k;

    for (k = 0; k < n && k + 1 < sizeof up; k++)
        up[k] = (char)toupper((unsigned char)s[k]);
    up[k] = '\0';
    /* Decoders name the states differently: OpenCSD and ours A32/T32,
     * others ARM/Thumb (Thumb-2 is the same state, ARM ARM A2.3). */
    if (!strcmp(up, "A32") || !strcmp(up, "ARM"))
        strcpy(out, "A32");
    else if (!strcmp(up, "T32") || !strcmp(up, "THUMB") || !strcmp(up, "THUMB2") ||
             !strcmp(up, "T16"))
        strcpy(out, "T32");
    else
        snprintf(out, 8, "%.7s", up[0] ? up : "?");
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

static size_t token_len(const char *p)
{
    size_t n = 0;

    while (p[n] && p[n] != ' ' && p[n] != '\t' && p[n] != '\r' && p[n] != '\n')
        n++;
    return n;
}

static void bad(tb_conform_item *it, const char *why)
{
    it->kind = TB_CI_BAD;
    snprintf(it->word, sizeof it->word, "%s", why);
}

/* "0x" and hex digits up to a blank; false when not that or too wide. */
static bool parse_hex_addr(const char **pp, uint32_t *out)
{
    const char *p = *pp;
    unsigned long long v = 0;
    size_t digits = 0;

    if (p[0] != '0' || (p[1] != 'x' && p[1] != 'X'))
        return false;
    p += 2;
    while (isxdigit((unsigned char)*p)) {
        v = v * 16 + (unsigned)(isdigit((unsigned char)*p) ? *p - '0'
                                                            : tolower((unsigned char)*p) - 'a' + 10);
        if (v > 0xFFFFFFFFull)
            return false;
        p++;
        digits++;
    }
    if (!digits || (*p && *p != ' ' && *p != '\t'))
        return false;
    *out = (uint32_t)v;
    *pp = p;
    return true;
}

void tb_conform_parse_addr(const char *line, bool tags, tb_conform_item *it)
{
    const char *p = skip_ws(line);
    size_t n;

    memset(it, 0, sizeof *it);
    it->id = -1;
    /* `tracebench decode --id all`: "0x10: " before each line. */
    if (tags && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && isxdigit((unsigned char)p[2])) {
        size_t k = 2;

        while (k < 4 && isxdigit((unsigned char)p[k]))
            k++;
        if (p[k] == ':' && (p[k + 1] == ' ' || p[k + 1] == '\t')) {
            long id = strtol(p + 2, NULL, 16);

            /* Trace IDs are 7 bits (found by fuzz_conform: "0xA0: "). */
            if (id > 0x7F) {
                bad(it, "the tag is not a trace ID (0x00..0x7F)");
                return;
            }
            it->id = (int)id;
            p = skip_ws(p + k + 1);
        }
    }
    if (!*p || *p == '\r' || *p == '\n')
        return; /* blank */
    if (*p == '#') {
        p = skip_ws(p + 1);
        if (!strncmp(p, "gap", 3) && (p[3] == ' ' || p[3] == '\t' || !p[3] || p[3] == '\r')) {
            it->kind = TB_CI_GAP;
            p = skip_ws(p + 3);
            n = token_len(p);
            snprintf(it->word, sizeof it->word, "%.*s", (int)n, n ? p : "?");
        } else if (!strncmp(p, "lost", 4) && (p[4] == ' ' || p[4] == '\t')) {
            const char *at;

            it->kind = TB_CI_LOST;
            p = skip_ws(p + 4);
            n = token_len(p);
            snprintf(it->word, sizeof it->word, "%.*s", (int)n, p);
            at = strstr(p, " at index ");
            if (at)
                it->index = strtoull(at + 10, NULL, 0);
        }
        return; /* other '#' lines are comments */
    }
    if (p[0] == '?' && (p[1] == ' ' || p[1] == '\t')) {
        /* "? ? E": an atom whose address is unknown. */
        p = skip_ws(p + 1);
        if (*p == '?' && (p[1] == ' ' || p[1] == '\t')) {
            p = skip_ws(p + 1);
            it->kind = TB_CI_UNKNOWN;
            it->atom = (char)toupper((unsigned char)*p);
            if (it->atom != 'E' && it->atom != 'N')
                it->atom = '?';
            return;
        }
        bad(it, "not an addr line");
        return;
    }
    if (!parse_hex_addr(&p, &it->addr)) {
        bad(it, "not an addr line (no 0xADDRESS first)");
        return;
    }
    p = skip_ws(p);
    n = token_len(p);
    if (n == 1 && p[0] == '?') {
        p = skip_ws(p + 1);
        if (!strncmp(p, "NACC", 4) && token_len(p) == 4) {
            it->kind = TB_CI_NACC;
            return;
        }
        bad(it, "not an addr line ('? NACC' expected after the address)");
        return;
    }
    if (!n) {
        bad(it, "not an addr line (no ISA after the address)");
        return;
    }
    tb_conform_isa_norm(p, n, it->isa);
    p = skip_ws(p + n);
    n = token_len(p);
    if (n != 1 || (toupper((unsigned char)*p) != 'E' && toupper((unsigned char)*p) != 'N')) {
        bad(it, "not an addr line (no E or N after the ISA)");
        return;
    }
    it->atom = (char)toupper((unsigned char)*p);
    it->kind = TB_CI_INSN;
}

void tb_conform_item_text(const tb_conform_item *it, char *buf, size_t len)
{
    switch (it->kind) {
    case TB_CI_INSN:
        snprintf(buf, len, "0x%08X %s %c", (unsigned)it->addr, it->isa, it->atom);
        break;
    case TB_CI_NACC:
        snprintf(buf, len, "0x%08X ? NACC", (unsigned)it->addr);
        break;
    case TB_CI_UNKNOWN:
        snprintf(buf, len, "? ? %c", it->atom);
        break;
    case TB_CI_GAP:
        snprintf(buf, len, "# gap %s", it->word);
        break;
    case TB_CI_LOST:
        snprintf(buf, len, "# lost %s at index %llu", it->word, (unsigned long long)it->index);
        break;
    case TB_CI_BAD:
        snprintf(buf, len, "(%s)", it->word);
        break;
    case TB_CI_NONE:
        snprintf(buf, len, "%s", "");
        break;
    }
}
