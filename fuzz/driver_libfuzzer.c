/*
 * libFuzzer entry point; TB_FUZZ_ENTRY names the harness (fuzz.h).
 * Counts the inputs and those the harness checked (returned 0, not
 * TB_FUZZ_SKIP) and prints them at exit as one "tb_fuzz_stats:" line,
 * which fuzz/run.sh reads: a run that checked nothing fails.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

#ifndef TB_FUZZ_ENTRY
#error "define TB_FUZZ_ENTRY to a tb_fuzz_* harness"
#endif

#define TB_FUZZ_STR2(x) #x
#define TB_FUZZ_STR(x) TB_FUZZ_STR2(x)

static unsigned long long inputs, checked;

static void print_stats(void)
{
    fprintf(stderr, "tb_fuzz_stats: %s: %llu inputs, %llu checked\n",
            TB_FUZZ_STR(TB_FUZZ_ENTRY), inputs, checked);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (inputs++ == 0)
        atexit(print_stats);
    checked += TB_FUZZ_ENTRY(data, size) == 0;
    return 0;
}
