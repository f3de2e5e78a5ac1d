/* What test_profile and test_cli_analysis share: a shell command's
 * output, and a profile as the truth's separate reader (tb_truthprof,
 * vectors/truthprof.c) and as our callgrind file give it, compared. */
#ifndef TB_TRUTH_H
#define TB_TRUTH_H

#include <stdbool.h>


#define TB_PROF_MAXF 256

typedef struct tb_prof {
    unsigned long long total;
    struct { char name[128]; unsigned long long n; } f[TB_PROF_MAXF];
    int nf;
    struct { char caller[128], callee[128]; unsigned long long calls, incl; } c[TB_PROF_MAXF];
    int nc;
} tb_prof;

/* tb_truthprof DIR SYMS (SYMS: `arm-none-eabi-readelf -sSW ELF`).
 * false when it refused the vector (gaps, several sources). */
bool tb_prof_truth(const char *dir, const char *syms, tb_prof *p);
/* Our callgrind file, read by the format's rules (valgrind's
 * docs/cl-format). */
void tb_prof_callgrind(const char *path, tb_prof *p);
/* cr_expect: d's total, exclusive counts per function and calls and
 * inclusive counts per edge equal t's. */
void tb_prof_expect_equal(const char *what, const tb_prof *t, const tb_prof *d);

#endif
