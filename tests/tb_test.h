/* Helpers shared by the Criterion tests. */
#ifndef TB_TEST_H
#define TB_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "tracebench/types.h"

/* The real-silicon reference directory (TB_REFERENCE_DIR, else
 * ../shared/reference beside the project), or NULL when it is absent.
 * When absent it prints a loud SKIPPED line; under CI=true the calling
 * test fails instead (the references must be there in CI). */
const char *tb_test_reference_dir(const char *what);

/* The tracebench command under test: $TB_CLI, else this build tree's. */
const char *tb_test_cli(void);

/* Reads a whole file; NULL on failure.  Free with free(). */
uint8_t *tb_test_read_file(const char *path, size_t *len);

/* A whole file as a NUL-terminated string (free()); the test fails when
 * it cannot be read.  Its length in *len unless len is NULL. */
char *tb_test_slurp(const char *path, size_t *len);

/* Whether the README options row of the vector in dir (the option list
 * it was made with, vectors.ini's) has the item `item` (a whole
 * comma-separated item); the test fails when the row is missing. */
bool tb_test_vector_has_option(const char *dir, const char *item);

/* Runs `tracebench ARGS` (ARGS are shell words), stdout into the file
 * `to` (NULL: a temporary file read back into *out, its length in
 * *out_len unless NULL; else *out is "") and stderr into *err, both
 * free().  The exit status, -1 when it did not exit. */
int tb_test_run_cli(const char *args, const char *to, char **out, size_t *out_len,
                    char **err);

/* What one `tracebench` run left: the CLI tests' common fixture. */
typedef struct tb_cli_run {
    int status;     /* exit status, -1 when it did not exit */
    char *out;      /* stdout ("" when it went to a file) */
    size_t out_len;
    char *err;      /* stderr */
} tb_cli_run;

/* Runs `tracebench ARGS` (printf-formatted shell words), stdout into
 * `to` (NULL: read back into .out), and echoes the command, its short
 * output and its stderr to the test's stderr for the log. */
tb_cli_run tb_test_run_to(const char *to, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
#define tb_test_run(...) tb_test_run_to(NULL, __VA_ARGS__)
void tb_test_run_done(tb_cli_run *r);

/* Expectations on one run's streams (cr_expect: the test goes on). */
void tb_test_err_has(const tb_cli_run *r, const char *text);
void tb_test_err_lacks(const tb_cli_run *r, const char *text);
void tb_test_out_has(const tb_cli_run *r, const char *text);

/* Little-endian stores, as ARM code and trace words are laid out in
 * memory images and captures. */
void tb_test_le16(uint8_t *b, uint16_t v);
void tb_test_le32(uint8_t *b, uint32_t v);

/* A growing byte buffer (zero it to start, free d at the end), and a
 * tb_trace_sink that appends what an encoder writes to one. */
typedef struct tb_test_bytes {
    uint8_t *d;
    size_t n, cap;
} tb_test_bytes;
int tb_test_bytes_sink(void *ctx, const uint8_t *d, size_t n);

/* Adds n little-endian words at addr to the image m (n <= 64); the test
 * fails when the image refuses them. */
typedef struct tb_memimage tb_memimage;
void tb_test_image_words(tb_memimage *m, uint32_t addr, const uint32_t *w, size_t n);
void tb_test_image_word(tb_memimage *m, uint32_t addr, uint32_t w);

/* Runs a shell command, its stdout and stderr into *out (free()); its
 * exit status, -1 when it did not exit. */
int tb_test_sh(const char *cmd, char **out);

/* Deterministic PRNG for randomised tests (xorshift64*). */
uint64_t tb_test_rand(uint64_t *state);

/* n bytes (n >= 40) that hold no A-sync and end in a non-zero byte, as
 * a wrapped ETB dump starts: runs of one to four zeros, each ending in
 * 0x80, in the first half; no zero at all in the second. */
void tb_test_junk(uint8_t *buf, size_t n);

/* The packets v[0..n) a parser gave for `junk` such bytes at stream
 * index `base`: one NOTSYNC for all of them, then (when n > 1) the
 * A-sync right after. */
void tb_test_expect_junk(const tb_packet *v, size_t n, uint64_t base, size_t junk);

/* The committed vectors (vectors/generated/NAME holding a snapshot.ini),
 * their names sorted, into *names (free with tb_test_free_names); their
 * count.  The test fails when the folder cannot be read. */
size_t tb_test_list_vectors(char ***names);

/* A scratch directory /tmp/tb_test_TAG_PID, made (buf gets its path),
 * and removed with everything in it. */
void tb_test_scratch_make(char *buf, size_t len, const char *tag);
void tb_test_scratch_remove(const char *dir);

/* The ARM cross compiler ($TB_ARM_CC, else arm-none-eabi-gcc), or NULL
 * with a loud SKIPPED naming `what` (a failure under CI=true, where it
 * must be installed). */
const char *tb_test_arm_cc(const char *what);
void tb_test_free_names(char **names, size_t n);

#endif
