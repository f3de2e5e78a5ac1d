/*
 * Minimal INI reader for snapshot files (protocol-notes 5.2) and the
 * project's own lists (roundtrip/vector.c's vectors.ini).  Private: not in
 * the installed headers.
 */
#ifndef TB_COMMON_INI_H
#define TB_COMMON_INI_H

#include <stddef.h>

/* Longest line accepted; longer lines are an error, not truncated. */
#define TB_INI_MAX_LINE 4096

/* One key=value line: section is "" before the first [section].  The
 * callback returns 0 to go on, or a negative TB_ERR_* after writing a
 * reason into err (the parser prefixes nothing: name file and line). */
typedef int (*tb_ini_cb)(void *ctx, const char *section, const char *key,
                         const char *value, unsigned line, char *err,
                         size_t errlen);

/* Section lines are reported too, with key and value NULL, so a reader
 * can see empty sections and section order. */
int tb_ini_parse(const char *path, tb_ini_cb cb, void *ctx, char *err,
                 size_t errlen);

/* tb_ini_parse with flags: TB_INI_FULL_LINE_COMMENTS: ';' and '#' start
 * a comment only as a line's first non-blank character, so values may
 * hold them (vectors.ini's descriptions do; a snapshot's never need to). */
#define TB_INI_FULL_LINE_COMMENTS 1u
int tb_ini_parse_flags(const char *path, unsigned flags, tb_ini_cb cb, void *ctx,
                       char *err, size_t errlen);

#endif
