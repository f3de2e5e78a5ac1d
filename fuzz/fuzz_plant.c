/*
 * The planted-fault harness (issue 28): the proof that fuzz/run.sh and
 * scripts/fuzz-smoke.sh fail on every kind of finding
 * (scripts/test-fuzz-gate.sh).  Without TB_FUZZ_PLANT it reads its input
 * as a little tag-length-value stream and never fails.  With
 * TB_FUZZ_PLANT=<kind>, every input but the empty one (libFuzzer runs it
 * first) and the seed "seed" (fuzz/run.sh writes it) fails that way:
 *   crash    a broken invariant: a "tb_fuzz:" line and abort()
 *   asan     a heap read past the end of a buffer (AddressSanitizer)
 *   ubsan    a signed overflow (UndefinedBehaviorSanitizer)
 *   leak     a buffer never freed (LeakSanitizer; libFuzzer only)
 *   timeout  an endless loop (the per-input time limit)
 *   oom      1 GiB allocated and touched (the malloc limit)
 *   skip     every input returned unchecked (TB_FUZZ_SKIP): a run that
 *            checks nothing
 * It needs nothing of the library, so the gate's test builds it alone in
 * the AFL++ configuration; it is in neither the harness table nor
 * OSS-Fuzz.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

enum plant { P_NONE, P_CRASH, P_ASAN, P_UBSAN, P_LEAK, P_TIMEOUT, P_OOM, P_SKIP };

static enum plant plant_kind(void)
{
    static const char *const names[] = {"", "crash", "asan", "ubsan", "leak",
                                        "timeout", "oom", "skip"};
    const char *v = getenv("TB_FUZZ_PLANT");

    if (!v || !*v)
        return P_NONE;
    for (size_t i = 1; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(v, names[i]) == 0)
            return (enum plant)i;
    fprintf(stderr, "tb_fuzz: plant: TB_FUZZ_PLANT=%s is none of crash, asan, ubsan, "
                    "leak, timeout, oom, skip\n", v);
    abort();
}

/* Sinks the planted faults' values, so that no compiler drops them. */
static volatile unsigned plant_sink;

static void plant(enum plant k, const uint8_t *data, size_t len)
{
    switch (k) {
    case P_CRASH:
        fprintf(stderr, "tb_fuzz: plant: planted crash on a %zu-byte input\n", len);
        abort();
    case P_ASAN: {
        uint8_t *b = malloc(len);

        if (!b)
            abort();
        memcpy(b, data, len);
        plant_sink = b[len]; /* one past the end */
        free(b);
        break;
    }
    case P_UBSAN: {
        volatile int big = INT_MAX;

        plant_sink = (unsigned)(big + (int)len); /* signed overflow */
        break;
    }
    case P_LEAK: {
        uint8_t *volatile b = malloc(len + 64);

        if (!b)
            abort();
        memcpy(b, data, len);
        b = NULL; /* lost */
        break;
    }
    case P_TIMEOUT:
        for (;;)
            plant_sink++;
    case P_OOM: {
        const size_t n = (size_t)1 << 30;
        uint8_t *b = malloc(n);

        if (!b) {
            fprintf(stderr, "tb_fuzz: plant: malloc(%zu) failed\n", n);
            abort();
        }
        memset(b, (int)len, n);
        plant_sink = b[n / 2];
        free(b);
        break;
    }
    case P_NONE:
    case P_SKIP:
        break;
    }
}

int tb_fuzz_plant(const uint8_t *data, size_t len)
{
    static int kind = -1;
    size_t at = 0;
    unsigned sum = 0;

    if (kind < 0)
        kind = (int)plant_kind();
    if (kind == P_SKIP)
        return TB_FUZZ_SKIP;
    if (kind != P_NONE && len > 0 && !(len == 4 && memcmp(data, "seed", 4) == 0))
        plant((enum plant)kind, data, len);
    /* The real work: tag, length, value records; a few branches, so that
     * the fuzzer sees coverage grow. */
    while (at + 2 <= len) {
        uint8_t tag = data[at], n = data[at + 1];

        at += 2;
        if (n > len - at)
            n = (uint8_t)(len - at);
        if (tag == 'A')
            sum += n;
        else if (tag == 'B' && n >= 4)
            sum ^= (unsigned)data[at] << 24 | (unsigned)data[at + 3];
        else if (tag & 0x80)
            sum += tag;
        at += n;
    }
    plant_sink = sum;
    return 0;
}
