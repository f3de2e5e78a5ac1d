/*
 * AFL++ persistent-mode driver; TB_FUZZ_ENTRY names the harness (fuzz.h).
 * Built without afl-clang-fast it replays the files named on the command
 * line (or stdin), so a crash AFL++ found can be rerun anywhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h> /* read(), used by __AFL_FUZZ_TESTCASE_LEN */

#include "fuzz.h"

#ifndef TB_FUZZ_ENTRY
#error "define TB_FUZZ_ENTRY to a tb_fuzz_* harness"
#endif

#ifdef __AFL_FUZZ_TESTCASE_LEN
__AFL_FUZZ_INIT();
#endif

#ifndef __AFL_FUZZ_TESTCASE_LEN
static int replay(FILE *f)
{
    static uint8_t buf[TB_FUZZ_MAX_INPUT];
    size_t n = fread(buf, 1, sizeof buf, f);

    return TB_FUZZ_ENTRY(buf, n);
}
#endif

int main(int argc, char **argv)
{
#ifdef __AFL_FUZZ_TESTCASE_LEN
    unsigned char *buf;

    (void)argc;
    (void)argv;
    __AFL_INIT();
    buf = __AFL_FUZZ_TESTCASE_BUF;
    while (__AFL_LOOP(10000)) {
        size_t len = (size_t)__AFL_FUZZ_TESTCASE_LEN;
        TB_FUZZ_ENTRY(buf, len);
    }
    return 0;
#else
    int i;

    if (argc < 2)
        return replay(stdin);
    for (i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "%s: cannot open\n", argv[i]);
            return 1;
        }
        replay(f);
        fclose(f);
    }
    return 0;
#endif
}
