/*
 * The decoder's command line for one run: its placeholders replaced by
 * the vector's values, quoted for /bin/sh in the context each stands in,
 * so that a path with a space or a quote reaches the decoder as one
 * word whether the user wrote {dir}, '{dir}' or "{dir}".
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "conform.h"
#include "tracebench/types.h"

enum quoting { Q_NONE, Q_SINGLE, Q_DOUBLE };

typedef struct outbuf {
    char *p;
    size_t len, used;
    bool full;
} outbuf;

static void put(outbuf *o, const char *s, size_t n)
{
    if (o->used + n >= o->len) {
        o->full = true;
        return;
    }
    memcpy(o->p + o->used, s, n);
    o->used += n;
    o->p[o->used] = '\0';
}

static void puts_(outbuf *o, const char *s)
{
    put(o, s, strlen(s));
}

static bool shell_safe(const char *s, size_t n)
{
    if (!n)
        return false;
    for (size_t k = 0; k < n; k++)
        if (!isalnum((unsigned char)s[k]) && !strchr("_./:,=+-@%", s[k]))
            return false;
    return true;
}

/* One value, quoted for where it stands. */
static void put_value(outbuf *o, const char *s, size_t n, enum quoting q)
{
    switch (q) {
    case Q_NONE:
        if (shell_safe(s, n)) {
            put(o, s, n);
            return;
        }
        put(o, "'", 1);
        for (size_t k = 0; k < n; k++)
            if (s[k] == '\'')
                puts_(o, "'\\''");
            else
                put(o, s + k, 1);
        put(o, "'", 1);
        return;
    case Q_SINGLE:
        for (size_t k = 0; k < n; k++)
            if (s[k] == '\'')
                puts_(o, "'\\''");
            else
                put(o, s + k, 1);
        return;
    case Q_DOUBLE:
        for (size_t k = 0; k < n; k++) {
            if (strchr("\\\"$`", s[k]))
                put(o, "\\", 1);
            put(o, s + k, 1);
        }
        return;
    }
}

/* The option word just before position at in tmpl ("--memory" in
 * "--memory {memory}"), when there is one: its start and length. */
static bool option_before(const char *tmpl, size_t at, size_t *start, size_t *len)
{
    size_t e = at, b;

    if (!e || (tmpl[e - 1] != ' ' && tmpl[e - 1] != '\t'))
        return false;
    while (e && (tmpl[e - 1] == ' ' || tmpl[e - 1] == '\t'))
        e--;
    b = e;
    while (b && !isspace((unsigned char)tmpl[b - 1]) && !strchr("'\"|;&<>()", tmpl[b - 1]))
        b--;
    if (b == e || tmpl[b] != '-')
        return false;
    for (size_t k = b; k < e; k++)
        if (!isalnum((unsigned char)tmpl[k]) && !strchr("-_.", tmpl[k]))
            return false;
    *start = b;
    *len = e - b;
    return true;
}

static const char *const names[] = {"dir", "id", "protocol", "memory", "name"};

bool tb_conform_per_source(const char *tmpl)
{
    for (const char *p = tmpl; (p = strstr(p, "{id}")); p += 4)
        if (p == tmpl || p[-1] != '{')
            return true;
    return false;
}

int tb_conform_command(const char *tmpl, const tb_conform_unit *u, char *out, size_t len,
                       char *err, size_t errlen)
{
    outbuf o = {out, len, 0, false};
    enum quoting q = Q_NONE;
    char id[8];

    if (!len)
        return TB_ERR_NOSPACE;
    out[0] = '\0';
    if (u->trace_id >= 0)
        snprintf(id, sizeof id, "0x%02x", (unsigned)u->trace_id);
    else
        id[0] = '\0';
    for (size_t i = 0; tmpl[i]; i++) {
        char c = tmpl[i];

        if (c == '\\' && q != Q_SINGLE && tmpl[i + 1]) {
            put(&o, tmpl + i, 2);
            i++;
            continue;
        }
        if (c == '\'' && q != Q_DOUBLE) {
            q = q == Q_SINGLE ? Q_NONE : Q_SINGLE;
        } else if (c == '"' && q != Q_SINGLE) {
            q = q == Q_DOUBLE ? Q_NONE : Q_DOUBLE;
        } else if ((c == '{' && tmpl[i + 1] == '{') || (c == '}' && tmpl[i + 1] == '}')) {
            put(&o, &c, 1);
            i++;
            continue;
        } else if (c == '{' && (!i || tmpl[i - 1] != '$')) {
            size_t n = 0;
            int which = -1;

            while (tmpl[i + 1 + n] && (isalnum((unsigned char)tmpl[i + 1 + n]) ||
                                       tmpl[i + 1 + n] == '_'))
                n++;
            if (n && tmpl[i + 1 + n] == '}') {
                for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
                    if (strlen(names[k]) == n && !strncmp(tmpl + i + 1, names[k], n))
                        which = (int)k;
                if (which < 0 && q == Q_NONE) {
                    snprintf(err, errlen, "--decoder: unknown placeholder {%.*s}; the "
                                          "placeholders are {dir} {id} {protocol} {memory} "
                                          "{name} ({{ and }} for braces)", (int)n, tmpl + i + 1);
                    return TB_ERR_INVAL;
                }
            }
            if (which >= 0) {
                const char *v = which == 0 ? u->dir : which == 1 ? id
                              : which == 2 ? u->protocol : which == 4 ? u->name : NULL;

                if (v) {
                    put_value(&o, v, strlen(v), q);
                } else {
                    /* {memory}: ADDR:FILE a dump.  Outside quotes, one
                     * word each, after an option the option again
                     * before each; in quotes, one string. */
                    const char *m = u->memory;
                    size_t ob = 0, ol = 0;
                    bool opt = q == Q_NONE && option_before(tmpl, i, &ob, &ol);
                    bool first = true;

                    while (*m) {
                        size_t k = strcspn(m, "\n");

                        if (!first) {
                            put(&o, " ", 1);
                            if (opt) {
                                put(&o, tmpl + ob, ol);
                                put(&o, " ", 1);
                            }
                        }
                        put_value(&o, m, k, q);
                        first = false;
                        m += k;
                        if (*m)
                            m++;
                    }
                }
                i += n + 1;
                continue;
            }
        }
        put(&o, &c, 1);
    }
    if (o.full) {
        snprintf(err, errlen, "the decoder's command line for %s is longer than %zu bytes",
                 u->name, len - 1);
        return TB_ERR_NOSPACE;
    }
    return 0;
}
