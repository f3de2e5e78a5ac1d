/*
 * tracebench fuzz harnesses.
 *
 * Each harness is one function, tb_fuzz_<name>(data, len), shared by the
 * libFuzzer driver (driver_libfuzzer.c), the AFL++ persistent-mode driver
 * (driver_afl.c) and the ordinary regression test
 * (tests/test_fuzz_regressions.c).  A harness returns 0 when it checked
 * the input, TB_FUZZ_SKIP when it did not use it (too short, refused by
 * the simulator, ...): the drivers count both, and fuzz/run.sh fails a
 * run whose harness checked no input.  A broken invariant prints one
 * line to stderr and aborts, so every driver sees it as a crash and the
 * regression test as a failure.
 */
#ifndef TB_FUZZ_H
#define TB_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "speccov.h"
#include "tracebench/decoder.h"
#include "tracebench/etmv2.h"
#include "tracebench/parser.h"
#include "tracebench/snapshot.h"
#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A harness's return for an input it did not check (see above). */
#define TB_FUZZ_SKIP 1

/* ---- the harnesses ---- */
int tb_fuzz_etmv3_parser(const uint8_t *data, size_t len);
int tb_fuzz_ptm_parser(const uint8_t *data, size_t len);
int tb_fuzz_deformatter(const uint8_t *data, size_t len);
int tb_fuzz_snapshot(const uint8_t *data, size_t len);
int tb_fuzz_etmv3_decoder(const uint8_t *data, size_t len);
int tb_fuzz_ptm_decoder(const uint8_t *data, size_t len);
int tb_fuzz_etmv1(const uint8_t *data, size_t len);
int tb_fuzz_etmv2(const uint8_t *data, size_t len);
/* The full harnesses (issue 28): the inputs of the fast one they are
 * named after, and the checks that cost most (chunkings, other paths,
 * printers, instruction lists). */
int tb_fuzz_etmv3_parser_full(const uint8_t *data, size_t len);
int tb_fuzz_ptm_parser_full(const uint8_t *data, size_t len);
int tb_fuzz_deformatter_full(const uint8_t *data, size_t len);
int tb_fuzz_snapshot_full(const uint8_t *data, size_t len);
int tb_fuzz_etmv3_decoder_full(const uint8_t *data, size_t len);
int tb_fuzz_ptm_decoder_full(const uint8_t *data, size_t len);
int tb_fuzz_etmv1_full(const uint8_t *data, size_t len);
int tb_fuzz_etmv2_full(const uint8_t *data, size_t len);
/* Needs the simulator (Unicorn): built only with it, not in the table. */
int tb_fuzz_roundtrip(const uint8_t *data, size_t len);
/* Differential against OpenCSD (fuzz_diff_ocsd.c): built only with its C
 * API, not in the table; input as the decoder harnesses'. */
int tb_fuzz_ocsd_etmv3(const uint8_t *data, size_t len);
int tb_fuzz_ocsd_ptm(const uint8_t *data, size_t len);
/* Their comparison for any trace (ocsd_mutate.c): our decode of the
 * source's bytes in runs (len 0: bytes lost before index, a corrupt
 * frame) against OpenCSD's of buf (a formatted buffer when formatted,
 * else the source's bytes), over mem.  0 when they agree (up to
 * documented faults), 1 with the report on stderr, -1 when too long
 * (over 1 MiB). */
typedef struct tb_ocsd_run {
    uint64_t index;
    const uint8_t *data;
    size_t len;
} tb_ocsd_run;
int tb_ocsd_diff(const char *name, const tb_config *cfg, const tb_memimage *mem,
                 const tb_ocsd_run *runs, size_t n_runs, const uint8_t *buf, size_t len,
                 bool formatted);
/* Whether each side of the last tb_ocsd_diff reported an error, and its
 * first (valid until the next call). */
void tb_ocsd_diff_errors(bool *ours, bool *theirs, const char **ours_why,
                         const char **theirs_why);
/* The documented faults' names and how often each explained a
 * difference in this process.  Returns how many there are. */
size_t tb_ocsd_diff_hits(const char **names, unsigned *hits, size_t max);
/* The planted-fault harness of the gate's test (fuzz_plant.c): not in
 * the table, never in OSS-Fuzz. */
int tb_fuzz_plant(const uint8_t *data, size_t len);
/* Needs gen/ and roundtrip/gen_seeds.c, compiled into its own binary:
 * not in the table either. */
int tb_fuzz_gen(const uint8_t *data, size_t len);
/* The conformance kit's output readers (vectors/conform/), compiled into
 * its own binary: not in the table either. */
int tb_fuzz_conform(const uint8_t *data, size_t len);
/* The ELF reader (analysis/elfinfo.c, libdw), compiled into its own
 * binary where elfutils is: not in the table either. */
int tb_fuzz_elfinfo(const uint8_t *data, size_t len);

typedef int (*tb_fuzz_fn)(const uint8_t *data, size_t len);
/* A harness's two entries, tb_fuzz_<name> (fast) and tb_fuzz_<name>_full,
 * over its static fuzz_<name>(data, len, full). */
#define TB_FUZZ_ENTRIES(name)                                                              \
    int tb_fuzz_##name(const uint8_t *data, size_t len)                                  \
    {                                                                                    \
        return fuzz_##name(data, len, false);                                            \
    }                                                                                    \
    int tb_fuzz_##name##_full(const uint8_t *data, size_t len)                           \
    {                                                                                    \
        return fuzz_##name(data, len, true);                                             \
    }
typedef struct tb_fuzz_harness {
    const char *name;        /* as in fuzz/regressions/<name>/ */
    tb_fuzz_fn fn;
    /* The harness whose inputs it reads (its own name, or a full
     * harness's fast one): the seeds and the regression inputs of every
     * harness of one input format are replayed through all of them. */
    const char *format;
} tb_fuzz_harness;
/* Every harness of this build, NULL-terminated. */
extern const tb_fuzz_harness tb_fuzz_harnesses[];

/* ---- shared helpers (fuzz_util.c) ---- */

/* Longest input a harness looks at; the rest is ignored so that work and
 * memory per input stay bounded whatever the driver sends. */
#define TB_FUZZ_MAX_INPUT (64 * 1024)

/* Bytes of configuration at the start of a parser/decoder input. */
#define TB_FUZZ_CFG_BYTES 4

/* Builds a configuration of protocol `proto` from 4 input bytes: every
 * ETMCR/ETMIDR/ETMCCER bit that changes the byte stream (protocol-notes
 * 1.1-1.3) is reachable, through tb_config_from_regs like a snapshot. */
void tb_fuzz_config(tb_protocol proto, const uint8_t b[TB_FUZZ_CFG_BYTES],
                    tb_config *cfg);
/* The inverse for seed makers: the 4 bytes giving a configuration with
 * these properties (minor version, ETMCR, ETMCCER and alt-branch bit). */
void tb_fuzz_config_bytes(tb_protocol proto, unsigned minor, bool alt_branch,
                          uint32_t etmcr, uint32_t etmccer,
                          uint8_t b[TB_FUZZ_CFG_BYTES]);

/* ETMv1 (fuzz_etmv1.c): the port configuration from 4 input bytes,
 * every field that changes the capture or its decode reachable:
 *   b0: [1:0] port size (4/8/16, 3 -> 4), [3:2] minor version, [4] CA,
 *       [5] branch output, [7:6] context ID size (0/1/2/4; ETMv1.2 at
 *       least then: the minor gets bit 1)
 *   b1: [1:0] ETMCR[3:2] data trace (generic tb_config only; ETMv1 phase
 *       1 has none), [2] vectors at 0xFFFF0000, [3] the input carries its
 *       own capture header, [4] its samples repeated up to 9000 cycles
 * Also fills the generic tb_config (tb_config_from_etmv1).  Returns
 * b1[3]. */
bool tb_fuzz_etmv1_config(const uint8_t b[TB_FUZZ_CFG_BYTES],
                          tb_etmv1_config *cfg, tb_config *gcfg);
/* The inverse for seed makers (own_header: b1[3]). */
void tb_fuzz_etmv1_config_bytes(const tb_etmv1_config *cfg, bool own_header,
                                uint8_t b[TB_FUZZ_CFG_BYTES]);

/* ETMv2 (fuzz_etmv2.c): as ETMv1's without the minor version (ETMv2.0):
 *   b0: [1:0] port size, [4] CA, [5] branch output, [7:6] context ID size
 *   b1: [2] vectors at 0xFFFF0000, [3] own header, [4] looped samples
 * Also fills the generic tb_config (tb_config_from_etmv2).  Returns b1[3]. */
bool tb_fuzz_etmv2_config(const uint8_t b[TB_FUZZ_CFG_BYTES], tb_etmv2_config *cfg,
                          tb_config *gcfg);
void tb_fuzz_etmv2_config_bytes(const tb_etmv2_config *cfg, bool own_header,
                                uint8_t b[TB_FUZZ_CFG_BYTES]);

/* The fixed memory image the decoder harnesses follow: ARM code at
 * TB_FUZZ_ARM_BASE, Thumb code at TB_FUZZ_THUMB_BASE, vectors at 0,
 * straight-line ARM and Thumb code at TB_FUZZ_LONG_*_BASE and random
 * bytes in the top page up to 2^32 (the end of the address space).  Built once per process, never freed (the drivers live as long
 * as the process). */
#define TB_FUZZ_VEC_BASE 0x00000000u
#define TB_FUZZ_ARM_BASE 0x00008000u
#define TB_FUZZ_THUMB_BASE 0x00010000u
#define TB_FUZZ_CODE_BYTES 0x4000u
#define TB_FUZZ_TOP_BASE 0xFFFFF000u
/* Straight-line code (no waypoint for 8 KiB, then BX lr): walks longer
 * than a decoder block (decoder/block_cache.c). */
#define TB_FUZZ_LONG_ARM_BASE 0x00020000u
#define TB_FUZZ_LONG_THUMB_BASE 0x00030000u
#define TB_FUZZ_LONG_BYTES 0x2000u
const tb_memimage *tb_fuzz_image(void);
/* The OpenCSD differential harnesses' image: the same layout, only
 * architecturally defined code (fuzz_util.c). */
const tb_memimage *tb_fuzz_ocsd_image(void);
/* Whether addr starts an instruction of tb_fuzz_ocsd_image() in isa (a
 * branch into the second halfword of a 32-bit Thumb instruction does not,
 * nor an address in the other instruction set's code). */
bool tb_fuzz_ocsd_insn_start(uint32_t addr, tb_isa isa);
/* Their configuration: tb_fuzz_config() without data trace, and a PTM
 * return stack enabled only as implemented (ETMCCER[23]). */
void tb_fuzz_ocsd_config(tb_protocol proto, const uint8_t b[TB_FUZZ_CFG_BYTES],
                         tb_config *cfg);

/* Deterministic split point in [0, len] from the input's bytes. */
size_t tb_fuzz_split(const uint8_t *data, size_t len);

/* tb_decoder_set_cycle_ranges on a trace-port (ETMv1/ETMv2) decode of
 * stream under cfg, through tb_parser + tb_decoder_push (fuzz_util.c):
 * the same elements as without it but the ranges, which hold the same
 * instructions (tb_decoder_range_addrs), one a range in CA mode; each
 * default range's counts sum to its count, and where it has none only
 * its last instruction lacks one (docs/etmv1.md 5).  Fails the harness
 * otherwise. */
void tb_fuzz_cycle_split(const char *harness, const tb_config *cfg, const uint8_t *stream,
                         size_t len);

/* 64-bit FNV-1a, chained. */
uint64_t tb_fuzz_hash(uint64_t h, const void *data, size_t len);
#define TB_FUZZ_HASH_INIT 0xcbf29ce484222325ull

/* Prints "tb_fuzz: <harness>: <message>" and aborts. */
#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 2, 3)))
#endif
void tb_fuzz_fail(const char *harness, const char *fmt, ...);

/* For a harness's own checking code: no coverage instrumentation (edges
 * nor comparison tracing).  Its comparisons are invariants that hold on
 * every input, so tracing them guides libFuzzer nowhere, yet under
 * -fsanitize=fuzzer each costs a hook call (issue 28: in the ETMv1
 * harness they were about a tenth of the time).  The checks themselves
 * run unchanged; the library they check stays instrumented. */
#if defined(__clang__) && __clang_major__ >= 13
#define TB_FUZZ_NOCOV __attribute__((no_sanitize("coverage")))
#else
#define TB_FUZZ_NOCOV
#endif

#define TB_FUZZ_CHECK(harness, cond, ...)                                   \
    do {                                                                    \
        if (!(cond))                                                        \
            tb_fuzz_fail(harness, __VA_ARGS__);                             \
    } while (0)

/* ---- objects made once, reset per input (fuzz_util.c) ----
 * Making a parser or decoder costs more under ASan than parsing a short
 * input (issue 28): the fast harnesses keep them, one set per
 * configuration, in a small table keyed by the configuration bytes, and
 * reset them for each input.  The full harnesses also make fresh ones,
 * so that a reset object is checked against a new one. */
typedef struct tb_fuzz_objs {
    tb_config cfg;
    tb_parser *parser;       /* reset */
    tb_decoder *decoder;     /* over tb_fuzz_image(), reset; NULL unless asked */
} tb_fuzz_objs;
const tb_fuzz_objs *tb_fuzz_objects(tb_protocol proto, const uint8_t b[TB_FUZZ_CFG_BYTES],
                                    bool want_decoder);

/* The trace ports' harnesses (fuzz_etmv1.c, fuzz_etmv2.c) keep their own
 * protocol's parser and decoder the same way, made from the port
 * configuration (etm_port.h) rather than a tb_config, since a parser
 * given none reads the capture's header.  Two configurations compare
 * field by field (no padding). */
bool tb_fuzz_port_cfg_eq(const tb_etm_port_config *a, const tb_etm_port_config *b);
unsigned tb_fuzz_port_cfg_hash(const tb_etm_port_config *k);
/* static void v_objects(given, cfg, &p, &d or NULL): port v's parser for
 * given (NULL: one that reads the header; kept in one extra slot) and
 * decoder for cfg, made once per configuration and reset (harness: the
 * name failures are reported under).  Needs decoder/protocols.h. */
#define TB_FUZZ_PORT_OBJECTS(v, harness)                                                   \
    static void v##_objects(const tb_##v##_config *given, const tb_##v##_config *cfg,    \
                            tb_##v##_parser **p, tb_##v##_decoder **d)                   \
    {                                                                                    \
        enum { SLOTS = 16 };                                                             \
        static struct {                                                                  \
            bool used;                                                                   \
            tb_##v##_config key;                                                         \
            tb_##v##_parser *p;                                                          \
            tb_##v##_decoder *d;                                                         \
        } ps[SLOTS + 1], ds[SLOTS];                                                      \
        unsigned h = tb_fuzz_port_cfg_hash(given ? given : cfg);                         \
        unsigned pi = given ? h % SLOTS : SLOTS, di = h % SLOTS;                         \
                                                                                         \
        if (!ps[pi].used || (given && !tb_fuzz_port_cfg_eq(&ps[pi].key, given))) {       \
            tb_##v##_parser_free(ps[pi].p);                                              \
            ps[pi].p = tb_##v##_parser_new(given);                                       \
            TB_FUZZ_CHECK(harness, ps[pi].p != NULL, "tb_" #v "_parser_new failed");     \
            if (given)                                                                   \
                ps[pi].key = *given;                                                     \
            ps[pi].used = true;                                                          \
        } else {                                                                         \
            tb_##v##_parser_reset(ps[pi].p);                                             \
        }                                                                                \
        *p = ps[pi].p;                                                                   \
        if (!d)                                                                          \
            return;                                                                      \
        if (!ds[di].used || !tb_fuzz_port_cfg_eq(&ds[di].key, cfg)) {                    \
            tb_##v##_decoder_free(ds[di].d);                                             \
            ds[di].d = tb_##v##_decoder_new(cfg, tb_fuzz_image());                       \
            TB_FUZZ_CHECK(harness, ds[di].d != NULL, "tb_" #v "_decoder_new failed");    \
            ds[di].key = *cfg;                                                           \
            ds[di].used = true;                                                          \
        } else {                                                                         \
            tb_##v##_decoder_reset(ds[di].d);                                            \
        }                                                                                \
        *d = ds[di].d;                                                                   \
    }

/* ---- checks shared by the harnesses (fuzz_util.c) ---- */

/* The spec-coverage counter's port side for a capture of port proto
 * ("etmv1", "etmv2"; count: tb_speccov_count_<proto>_capture) into c:
 * 0 or a known error; on 0, exactly one <proto>.port4/8/16 and no more
 * statuses (the counts of <proto>.<st[i]>) or triggers (.pipestat.tr)
 * than the capture has samples.  false when the capture was refused;
 * the caller then checks its protocol's own variants in c. */
bool tb_fuzz_port_speccov(const char *harness, const char *proto,
                          int (*count)(const uint8_t *, size_t, uint64_t *), const uint8_t *cap,
                          size_t len, const char *const *st, size_t nst, uint64_t *c);
/* c's count of proto.variant (tb_fuzz_port_speccov's c). */
uint64_t tb_fuzz_port_count(const uint64_t *c, const char *proto, const char *variant);

/* A spec-coverage classifier's answer (speccov.h): k >= 0, each id a variant
 * of the catalogue whose name finds it again (looked up by name once per
 * id and process: the catalogue is fixed) and whose name starts with
 * prefix (NULL: any). */
void tb_fuzz_check_speccov(const char *harness, int k, const tb_speccov_id *ids,
                            const char *prefix);

/* err is a negative TB_ERR_* the library has a message for (looked up
 * once per code and process). */
bool tb_fuzz_known_err(int err);

/* The first field in which two packets (elements) differ, or NULL: every
 * field, arrays whole (with_index false: all but the element's index). */
const char *tb_fuzz_packet_diff(const tb_packet *a, const tb_packet *b);
const char *tb_fuzz_element_diff(const tb_element *a, const tb_element *b, bool with_index);

/* A growing array of packets or elements: a reference run recorded, the
 * other runs compared with it item by item.  Kept (and reused) across
 * inputs; n = 0 empties it. */
typedef struct tb_fuzz_vec {
    void *v;
    size_t n, cap, size;     /* size: bytes per item */
} tb_fuzz_vec;
void tb_fuzz_vec_push(tb_fuzz_vec *r, const void *item);
static inline const void *tb_fuzz_vec_at(const tb_fuzz_vec *r, size_t i)
{
    return (const uint8_t *)r->v + i * r->size;
}

/* ---- seeds (fuzz_seeds.c) ---- */

/* One seed input.  Returns non-zero to stop. */
typedef int (*tb_fuzz_seed_cb)(void *ctx, const char *name,
                               const uint8_t *data, size_t len);
/* Produces the seeds of harness `name` from the project's own writer,
 * formatter and snapshot writer (no reference trace involved).  Returns
 * the number of seeds or a negative TB_ERR_*. */
int tb_fuzz_seeds(const char *name, tb_fuzz_seed_cb cb, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
