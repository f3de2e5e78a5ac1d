/*
 * INI reader for snapshot files (protocol-notes 5.2): "[section]" lines,
 * "key=value" lines, ';' or '#' comments, blank lines; spaces around
 * names and values and CRLF line ends are tolerated.  Anything else is an
 * error naming the file and line, so a garbage file is never half read.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ini.h"
#include "tracebench/types.h"

static char *trim(char *s)
{
    char *e;

    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' ||
                     e[-1] == '\n'))
        *--e = '\0';
    return s;
}

int tb_ini_parse(const char *path, tb_ini_cb cb, void *ctx, char *err,
                 size_t errlen)
{
    return tb_ini_parse_flags(path, 0, cb, ctx, err, errlen);
}

int tb_ini_parse_flags(const char *path, unsigned flags, tb_ini_cb cb, void *ctx,
                       char *err, size_t errlen)
{
    char line[TB_INI_MAX_LINE + 2];
    char section[TB_INI_MAX_LINE + 2] = "";
    unsigned lineno = 0;
    FILE *f;
    int rc = 0;

    f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return TB_ERR_IO;
    }
    while (rc == 0) {
        size_t n = 0;
        int c;
        char *s, *eq;

        /* Read one line by hand: fgets cannot see NUL bytes, and a binary
         * file given as an INI must fail, not parse as fragments. */
        while ((c = fgetc(f)) != EOF && c != '\n') {
            if (c == '\0') {
                snprintf(err, errlen, "%s:%u: NUL byte: not a text file",
                         path, lineno + 1);
                rc = TB_ERR_FORMAT;
                break;
            }
            if (n == TB_INI_MAX_LINE) {
                snprintf(err, errlen, "%s:%u: line longer than %d bytes",
                         path, lineno + 1, TB_INI_MAX_LINE);
                rc = TB_ERR_LIMIT;
                break;
            }
            line[n++] = (char)c;
        }
        if (rc)
            break;
        if (c == EOF && n == 0) {
            if (ferror(f)) {
                snprintf(err, errlen, "%s: read error", path);
                rc = TB_ERR_IO;
            }
            break;
        }
        line[n] = '\0';
        lineno++;
        /* UTF-8 byte order mark on the first line (Windows tools). */
        s = line;
        if (lineno == 1 && (unsigned char)s[0] == 0xEF &&
            (unsigned char)s[1] == 0xBB && (unsigned char)s[2] == 0xBF)
            s += 3;
        if (flags & TB_INI_FULL_LINE_COMMENTS) {
            s = trim(s);
            if (*s == ';' || *s == '#')
                *s = '\0';
        } else {
            s[strcspn(s, ";#")] = '\0';
            s = trim(s);
        }
        if (*s == '\0')
            continue;
        if (*s == '[') {
            char *end = strchr(s, ']');
            char *name;
            if (!end || trim(end + 1)[0] != '\0') {
                snprintf(err, errlen, "%s:%u: malformed section header",
                         path, lineno);
                rc = TB_ERR_FORMAT;
                break;
            }
            *end = '\0';
            name = trim(s + 1);
            if (*name == '\0') {
                snprintf(err, errlen, "%s:%u: empty section name", path,
                         lineno);
                rc = TB_ERR_FORMAT;
                break;
            }
            memmove(section, name, strlen(name) + 1);
            rc = cb(ctx, section, NULL, NULL, lineno, err, errlen);
            continue;
        }
        eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%u: expected key=value or [section]",
                     path, lineno);
            rc = TB_ERR_FORMAT;
            break;
        }
        *eq = '\0';
        if (*trim(s) == '\0') {
            snprintf(err, errlen, "%s:%u: empty key", path, lineno);
            rc = TB_ERR_FORMAT;
            break;
        }
        if (section[0] == '\0') {
            snprintf(err, errlen, "%s:%u: key=value before any [section]",
                     path, lineno);
            rc = TB_ERR_FORMAT;
            break;
        }
        rc = cb(ctx, section, trim(s), trim(eq + 1), lineno, err, errlen);
    }
    fclose(f);
    return rc;
}
