/*
 * The classifier against its reference (classify_ref.c) on every
 * encoding: all 2^32 A32 words, every T16 halfword and every T32
 * hw1:hw2 pair (hw1 0xE800-0xFFFF), each at an address drawn from the
 * opcode (word aligned for A32; for T32 half the addresses are 2 mod 4,
 * where BLX's Align(PC, 4) matters).  Too slow for CI (Capstone decodes
 * about a million words a second), so `make classify-exhaustive` runs
 * it on demand, in as many processes as there are cores; test_classify
 * runs the same check on the classes that matter and a random sample.
 *
 * usage: classify_exhaustive [--jobs N] [--only a32|t16|t32]
 *                            [--stride K] [--report N] [--part P/Q]
 *   --stride K: every K-th encoding only (a quick run); default 1.
 *   --report N: print the first N mismatches of each process (20).
 *   --part P/Q: only part P (0..Q-1) of Q of the work (A32 in 4096
 *     chunks of 2^20 words, T32 one chunk per first halfword), to split
 *     a run over several sessions or machines; every chunk is in one
 *     part.  Each process prints a line every 64 chunks it finishes.
 * Time: Capstone decodes about 2.6 M words a second on one core here
 * (AMD EPYC), so the whole run is about 4.7e9 / (2.6e6 x cores) seconds
 * plus a fifth for the classifier and the corrections: ~20 minutes on
 * two idle cores, hours on a loaded machine.
 * Exit status 0 when every encoding agrees, 1 on any mismatch, 2 on a
 * usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "classify_ref.h"

struct tally {
    uint64_t checked, mismatches;
    uint64_t rule[TB_CREF_NRULES];
};

/* Work items: A32 in 4096 chunks of 2^20 words, T16 one item, T32 one
 * item per hw1. */
#define A32_ITEMS 4096u
#define T32_ITEMS (0x10000u - 0xE800u)

static uint32_t addr_for(uint32_t op, tb_isa isa)
{
    uint32_t h = op * 2654435761u;
    uint32_t a = 0x8000u + (h & 0x0FFFFFFCu);

    if ((h >> 28) == 0xF)
        a |= 0xF0000000u; /* near the top: targets wrap */
    if (isa == TB_ISA_THUMB && (h & 0x10000u))
        a += 2;
    return a;
}

static int check_one(tb_cref *r, uint32_t op, tb_isa isa, struct tally *t, unsigned *left)
{
    uint8_t b[4];
    tb_insn in;
    char msg[256];
    int rule = 0;
    const uint32_t addr = addr_for(op, isa);

    tb_cref_bytes(op, isa, b);
    if (tb_classify_insn(b, 4, addr, isa, &in) < 0) {
        snprintf(msg, sizeof msg, "%08x: classifier error", op);
        rule = -1;
    } else if (tb_cref_check(r, op, isa, addr, &in, &rule, msg, sizeof msg) < 0) {
        rule = -1;
    }
    t->checked++;
    if (rule < 0) {
        t->mismatches++;
        if (*left) {
            (*left)--;
            printf("MISMATCH at 0x%08x: %s\n", addr, msg);
            fflush(stdout);
        }
        return -1;
    }
    t->rule[rule]++;
    return 0;
}

static void run_item(tb_cref *r, int space, uint32_t item, uint32_t stride,
                     struct tally *t, unsigned *left)
{
    if (space == 0) {
        const uint64_t lo = (uint64_t)item << 20, hi = lo + (1u << 20);

        for (uint64_t w = lo; w < hi; w += stride)
            check_one(r, (uint32_t)w, TB_ISA_ARM, t, left);
    } else if (space == 1) {
        for (uint32_t hw = 0; hw < 0x10000u; hw += stride)
            if (tb_thumb_size((uint16_t)hw) == 2)
                check_one(r, hw, TB_ISA_THUMB, t, left);
    } else {
        const uint32_t hw1 = 0xE800u + item;

        for (uint32_t hw2 = 0; hw2 < 0x10000u; hw2 += stride)
            check_one(r, hw1 << 16 | hw2, TB_ISA_THUMB, t, left);
    }
}

int main(int argc, char **argv)
{
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t stride = 1, part = 0, parts = 1;
    unsigned report = 20;
    bool want[3] = {true, true, true};
    static const char *const names[3] = {"A32", "T16", "T32"};
    static const uint32_t items[3] = {A32_ITEMS, 1, T32_ITEMS};
    struct tally total[3] = {{0}};
    int status = 0;
    struct timespec t0, t1;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc) {
            jobs = strtol(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--stride") == 0 && i + 1 < argc) {
            stride = (uint32_t)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--report") == 0 && i + 1 < argc) {
            report = (unsigned)strtoul(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--part") == 0 && i + 1 < argc) {
            if (sscanf(argv[++i], "%u/%u", &part, &parts) != 2 || !parts || part >= parts) {
                fprintf(stderr, "classify_exhaustive: --part takes P/Q, 0 <= P < Q\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            const char *s = argv[++i];

            for (int k = 0; k < 3; k++)
                want[k] = strcasecmp(s, names[k]) == 0;
            if (!want[0] && !want[1] && !want[2]) {
                fprintf(stderr, "classify_exhaustive: --only takes a32, t16 or t32\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: classify_exhaustive [--jobs N] [--only a32|t16|t32] "
                   "[--stride K] [--report N] [--part P/Q]\n");
            return 0;
        } else {
            fprintf(stderr, "classify_exhaustive: unknown argument '%s' (try --help)\n",
                    argv[i]);
            return 2;
        }
    }
    if (jobs < 1 || jobs > 256 || stride < 1) {
        fprintf(stderr, "classify_exhaustive: --jobs takes 1-256, --stride 1 or more\n");
        return 2;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int space = 0; space < 3; space++) {
        int fds[256];

        if (!want[space])
            continue;
        fflush(stdout);
        for (long j = 0; j < jobs; j++) {
            int p[2];
            pid_t pid;

            if (pipe(p) < 0 || (pid = fork()) < 0) {
                perror("classify_exhaustive");
                return 1;
            }
            if (pid == 0) {
                struct tally t = {0};
                tb_cref *r = tb_cref_new();
                unsigned left = report, done = 0;

                close(p[0]);
                if (!r)
                    _exit(1);
                for (uint32_t it = (uint32_t)j; it < items[space]; it += (uint32_t)jobs) {
                    if (it % parts != part)
                        continue;
                    run_item(r, space, it, stride, &t, &left);
                    if (++done % 64 == 0) {
                        printf("%s: process %ld: %u chunks, %llu encodings, %llu mismatches\n",
                               names[space], j, done, (unsigned long long)t.checked,
                               (unsigned long long)t.mismatches);
                        fflush(stdout);
                    }
                }
                tb_cref_free(r);
                if (write(p[1], &t, sizeof t) != (ssize_t)sizeof t)
                    _exit(1);
                _exit(0);
            }
            close(p[1]);
            fds[j] = p[0];
        }
        for (long j = 0; j < jobs; j++) {
            struct tally t;
            ssize_t n = read(fds[j], &t, sizeof t);

            close(fds[j]);
            if (n != (ssize_t)sizeof t) {
                fprintf(stderr, "classify_exhaustive: a worker failed\n");
                status = 1;
                continue;
            }
            total[space].checked += t.checked;
            total[space].mismatches += t.mismatches;
            for (int k = 0; k < TB_CREF_NRULES; k++)
                total[space].rule[k] += t.rule[k];
        }
        while (wait(NULL) > 0 || errno == EINTR)
            ;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("%s: %llu encodings, %llu mismatches (%.0f s so far)\n", names[space],
               (unsigned long long)total[space].checked,
               (unsigned long long)total[space].mismatches,
               (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
        for (int k = 0; k < TB_CREF_NRULES; k++)
            if (total[space].rule[k])
                printf("  %12llu  %s\n", (unsigned long long)total[space].rule[k],
                       tb_cref_rule_text(k));
        if (total[space].mismatches)
            status = 1;
    }
    return status;
}
