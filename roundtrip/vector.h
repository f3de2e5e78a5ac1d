/*
 * The conformance vectors' runs (docs/vectors.md): the list
 * (vectors/vectors.ini, read with common/ini.c), one vector generated
 * from its entry (round trip, snapshot, truth, filter and overflow files,
 * decode.addr, README.md) and the byte-for-byte tree comparison of
 * `tracebench vectors --check`.  Private to the CLI (cli/cmd_vectors.c
 * keeps option parsing, printing and the index); not installed.
 *
 * Functions return 0 or a negative TB_ERR_* with a message in err (what
 * follows "tracebench vectors: " on the command's stderr); they print
 * nothing.
 */
#ifndef TB_ROUNDTRIP_VECTOR_H
#define TB_ROUNDTRIP_VECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* At most this many vectors in a list (tests/test_vectors.c's MAX_VEC
 * follows it). */
#define TB_VECTOR_MAX 256
#define TB_VECTOR_STR 256

/* One section of the list, and what its run gave (for the index). */
typedef struct tb_vector {
    char name[96];
    char program[64];
    char scenario[128];
    char protocol[16];
    char options[TB_VECTOR_STR];
    char buffer[16];
    char opencsd[64];
    /* ETMv1 only: the documented OpenOCD `etm analyze` limit this vector
     * meets (tests/test_vectors.c, docs/etmv1-v2-sources.md 2.5). */
    char openocd[64];
    char about[TB_VECTOR_STR];
    uint64_t max_insns;
    /* An optional second trace source in the same formatted buffer (a
     * second program in its own emulator, as on TC2's multi-core
     * snapshot): program2 non-empty. */
    char program2[64];
    char scenario2[128];
    char protocol2[16];
    char options2[TB_VECTOR_STR];
    uint64_t max_insns2;
    /* Filled in by the run, for the index (insns and bytes: both sources'). */
    uint64_t insns, bytes, buf_bytes;
    unsigned exceptions, n_ranges;
    uint8_t trace_id;
} tb_vector;

/* Reads the list at path into v[0..TB_VECTOR_MAX) and checks each
 * entry's keys; *n: how many. */
int tb_vector_list_load(const char *path, tb_vector *v, size_t *n, char *err, size_t errlen);

/* Writes what `tracebench decode DIR [--id ID] --format addr` prints
 * into DIR/fname (id -1: the snapshot's only source).  The CLI's own
 * printer, so that decode.addr is exactly the command's output. */
typedef int (*tb_vector_addr_fn)(const char *dir, const char *fname, int id, char *err,
                                 size_t errlen);

/* Where a run finds its inputs: the built programs, the scenario
 * variants, the programs' default scenarios (NAME.ini); write_addr
 * writes decode.addr. */
typedef struct tb_vector_env {
    const char *programs, *scenarios, *default_scn;
    tb_vector_addr_fn write_addr;
} tb_vector_env;

/* Generates vector v into out/NAME (removed first): a round trip that
 * must match, and its files.  Fills v's run counts. */
int tb_vector_run(tb_vector *v, const tb_vector_env *env, const char *out, char *err,
                  size_t errlen);

/* bytes * 8 / insns with three decimals, in integers: the same digits on
 * every host. */
void tb_vector_bits_per_insn(char *buf, size_t len, uint64_t bytes, uint64_t insns);

/* mkdir -p; a directory tree removed (absent: 0).  -1 on failure. */
int tb_vector_make_dirs(const char *path);
int tb_vector_remove_tree(const char *path);

/* Files under want missing from or different in have, byte for byte,
 * and files only in have: each given to on_diff ("missing", "differs" or
 * "not generated", and the path below the roots; "." for a missing root).
 * Returns how many. */
typedef void (*tb_vector_diff_fn)(void *ctx, const char *what, const char *rel);
unsigned tb_vector_diff_tree(const char *want, const char *have, tb_vector_diff_fn on_diff,
                             void *ctx);

#endif
