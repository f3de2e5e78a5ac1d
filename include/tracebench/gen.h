/*
 * Random program generator (gen/): for a seed, a valid, terminating
 * ARMv7-A (or, with TB_GEN_M, ARMv7-M) program as GNU assembler source
 * (its own vector table, start-up
 * and handlers), its linker script and its scenario (vectors/programs/
 * README.md), built into an ELF with arm-none-eabi-gcc.  The round-trip
 * matrix runs such programs beside the hand-written vector programs, so
 * that the trace models are checked on code nobody tuned them to
 * (docs/gen.md).
 *
 * What a program holds: straight-line data processing, conditional
 * instructions (ARM condition fields, Thumb IT blocks), forward
 * conditional branches, CBZ/CBNZ, bounded loops (nested), switch tables
 * (LDR pc, ADD pc, TBB, TBH, MOV pc), calls of every kind (BL, BLX
 * immediate and register, MOV lr,pc + BX/LDR pc, function pointer tables,
 * conditional calls, tail calls, linker veneers to far sections) and
 * returns of every kind (BX lr, POP/LDM {pc}, LDR pc, MOV pc, conditional),
 * bounded recursion, interworking (mixed), code in far sections at
 * addresses that need every branch-address size, loads and stores of
 * every width and addressing mode, LDRD/STRD, LDM/STM, PUSH/POP,
 * exclusives, PLD, barriers, CONTEXTIDR writes, SVC (also conditional and
 * inside IT blocks), undefined instructions, data aborts (every width,
 * multiples, ARM and 16/32-bit Thumb), prefetch aborts, and IRQ/FIQ at
 * random instruction counts or at addresses (exception vectors among
 * them), with handlers in ARM or, with SCTLR.TE, in Thumb.
 *
 * Termination: calls only go from a function to a later one (or a
 * recursive one to itself, with a depth counter), loops count down from a
 * constant in a register nothing else writes, and every handler returns.
 * The generator bounds the dynamic instruction count (stats.est_insns) and
 * the scenario's budget lies well above it, so a run that stops anywhere
 * but _exit shows a generator bug (tests/test_gen.c runs seeds to exit).
 *
 * Deterministic: the same options give the same bytes on every host (one
 * splitmix64 stream, no host state).
 */
#ifndef TRACEBENCH_GEN_H
#define TRACEBENCH_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tb_gen_isa {
    TB_GEN_ARM = 0,     /* every generated function ARM */
    TB_GEN_THUMB = 1,   /* every generated function Thumb */
    TB_GEN_MIXED = 2,   /* each function either: interworking calls */
    TB_GEN_M = 3,       /* a Cortex-M3/M4 program (ARMv7-M): Thumb only, the
                         * v7-M vector table and exception model (faults,
                         * SVC, PendSV, SysTick, NVIC lines, NMI); never
                         * picked by tb_gen_seed_isa */
} tb_gen_isa;

#define TB_GEN_SIZE_DEFAULT 10u  /* functions */
#define TB_GEN_SIZE_MAX 200u

typedef struct tb_gen_opts {
    uint64_t seed;
    int isa;           /* a tb_gen_isa, or -1: the seed picks (tb_gen_seed_isa) */
    unsigned size;     /* generated functions, 1..TB_GEN_SIZE_MAX; 0: the default */
} tb_gen_opts;

/* What a program holds (static counts), for tests and the CLI summary. */
typedef struct tb_gen_stats {
    unsigned funcs, thumb_funcs, far_funcs;
    unsigned loops, it_blocks, cond_insns, cond_branches, switches;
    unsigned calls, indirect_calls, interworking_calls, veneer_calls, returns_indirect;
    unsigned loads, stores, multiples, exclusives;
    unsigned svc, svc_in_it, undef, data_aborts, prefetch_aborts, ctxid_writes;
    unsigned irqs, fiqs;            /* scenario interrupt sources (M: NVIC lines, NMIs) */
    bool thumb_handlers;            /* SCTLR.TE: exceptions enter in Thumb */
    uint64_t est_insns;             /* upper bound of the dynamic instruction count
                                     * without interrupts */
    unsigned sw_pends;              /* M: exceptions pended by the program (PendSV,
                                     * NVIC_ISPR, STIR) */
    unsigned m_cpu;                 /* M: 3 (Cortex-M3) or 4 (Cortex-M4); else 0 */
    bool systick;                   /* M: the scenario's SysTick runs */
} tb_gen_stats;

typedef struct tb_gen_program {
    tb_gen_isa isa;       /* the one used */
    unsigned size;        /* the one used */
    char *source;         /* gen.S */
    char *ldscript;       /* gen.ld */
    char *scenario;       /* gen.ini */
    tb_gen_stats stats;
} tb_gen_program;

/* The ISA a seed picks when none is given (the round-trip suite's). */
tb_gen_isa tb_gen_seed_isa(uint64_t seed);
/* "arm", "thumb", "mixed", "m"; parse: -1 for anything else. */
const char *tb_gen_isa_name(tb_gen_isa isa);
int tb_gen_isa_parse(const char *s);

/* Generates the program's three texts.  TB_ERR_INVAL (a bad size or isa,
 * err says which), TB_ERR_NOMEM.  Free with tb_gen_program_fini. */
int tb_gen_make(const tb_gen_opts *o, tb_gen_program *p, char *err, size_t errlen);
void tb_gen_program_fini(tb_gen_program *p);

/* FNV-1a 64 of a text (a program's source): the kept-seed table records
 * it, so that a generator change that alters a kept seed's program is
 * noticed instead of silently testing something else. */
uint64_t tb_gen_hash(const char *text);

/* The file names in DIR. */
#define TB_GEN_SOURCE "gen.S"
#define TB_GEN_LDSCRIPT "gen.ld"
#define TB_GEN_SCENARIO "gen.ini"
#define TB_GEN_ELF "gen.elf"
#define TB_GEN_LOG "gen.log"

/* Writes DIR/gen.S, gen.ld and gen.ini (DIR is created when missing;
 * its parent must exist).  TB_ERR_IO with the path and cause in err. */
int tb_gen_write(const tb_gen_program *p, const char *dir, char *err, size_t errlen);

/* Builds DIR/gen.elf from DIR/gen.S and gen.ld with the cross compiler cc
 * (NULL: "arm-none-eabi-gcc", looked up in PATH), its output in
 * DIR/gen.log.  TB_ERR_NOT_FOUND: no such compiler (err names the Debian
 * package, gcc-arm-none-eabi); TB_ERR_FORMAT: it rejected the program (err
 * holds the first lines of its output: a generator bug); TB_ERR_IO. */
int tb_gen_build(const char *dir, const char *cc, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
