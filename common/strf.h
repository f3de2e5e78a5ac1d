/* Inside the tree: snprintf for paths and messages that says whether the
 * result was cut, for the callers that build paths from parts (no
 * compiler warning for a possible cut: the caller decides). */
#ifndef TB_STRF_H
#define TB_STRF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static inline bool tb_strf(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline bool tb_strf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < len;
}

#endif
