/*
 * TB_API marks what libtracebench exports.  The shared library is built
 * with hidden visibility (-fvisibility=hidden), so only functions whose
 * declaration carries TB_API, all in the installed headers, are in its
 * dynamic symbol table; the library's internal functions stay private
 * to it and may change without breaking programs linked against it.
 * Static linking is unaffected.
 */
#ifndef TRACEBENCH_EXPORT_H
#define TRACEBENCH_EXPORT_H

#ifndef TB_API
#if defined(__GNUC__) || defined(__clang__)
#define TB_API __attribute__((visibility("default")))
#else
#define TB_API
#endif
#endif

#endif
