/*
 * AFL++ persistent-mode driver; TB_FUZZ_ENTRY names the harness (fuzz.h).
 * Given file names it replays them, in any build (also under
 * afl-clang-fast), and prints the "tb_fuzz_stats:" line of
 * driver_libfuzzer.c: fuzz/run.sh replays AFL++'s queue so to know
 * whether the harness checked anything, and a crash AFL++ found can be
 * rerun anywhere.  Without arguments: AFL++'s persistent loop, or (built
 * without afl-clang-fast) one input from stdin.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h> /* read(), used by __AFL_FUZZ_TESTCASE_LEN */

#include "fuzz.h"

#ifndef TB_FUZZ_ENTRY
#error "define TB_FUZZ_ENTRY to a tb_fuzz_* harness"
#endif

#define TB_FUZZ_STR2(x) #x
#define TB_FUZZ_STR(x) TB_FUZZ_STR2(x)

#ifdef __AFL_FUZZ_TESTCASE_LEN
__AFL_FUZZ_INIT();
#endif

static unsigned long long inputs, checked;

static void replay(FILE *f)
{
    static uint8_t buf[TB_FUZZ_MAX_INPUT];
    size_t n = fread(buf, 1, sizeof buf, f);

    inputs++;
    checked += TB_FUZZ_ENTRY(buf, n) == 0;
}

int main(int argc, char **argv)
{
    int i;

    if (argc >= 2) {
        for (i = 1; i < argc; i++) {
            FILE *f = fopen(argv[i], "rb");
            if (!f) {
                fprintf(stderr, "%s: cannot open\n", argv[i]);
                return 1;
            }
            replay(f);
            fclose(f);
        }
        fprintf(stderr, "tb_fuzz_stats: %s: %llu inputs, %llu checked\n",
                TB_FUZZ_STR(TB_FUZZ_ENTRY), inputs, checked);
        return 0;
    }
#ifdef __AFL_FUZZ_TESTCASE_LEN
    {
        unsigned char *buf;

        __AFL_INIT();
        buf = __AFL_FUZZ_TESTCASE_BUF;
        while (__AFL_LOOP(10000)) {
            size_t len = (size_t)__AFL_FUZZ_TESTCASE_LEN;
            TB_FUZZ_ENTRY(buf, len);
        }
    }
#else
    replay(stdin);
#endif
    return 0;
}
