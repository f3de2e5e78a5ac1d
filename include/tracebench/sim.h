/*
 * Simulator (sim/): Unicorn runs an ARMv7-A program and reports the
 * ground truth as exec records (types.h), one per instruction that
 * reached execution, through a callback, as they happen.
 *
 * Record conventions (what the encoder may rely on):
 * - insn.next_addr is the architectural next PC of the instruction in
 *   program order: the target of a taken branch, else addr + size.  An
 *   exception record between two insn records says where control really
 *   went; its pref_return is the previous record's next_addr, or that
 *   record's own address when cancelled is set.
 * - SVC: insn record, then exception (pref_return = next insn).
 *   Undefined instruction and data abort: insn record of the faulting
 *   instruction, then exception with cancelled = true, pref_return = its
 *   address.  Prefetch abort and IRQ/FIQ: no record for the instruction
 *   that did not run; pref_return = its address.
 * - A direct branch that did not go to its target (B<c> failed,
 *   CBZ/CBNZ not taken) is recorded COND_FAILED without TAKEN.
 * - Instructions skipped inside an IT block are recorded COND_FAILED.
 * - Context records follow the MCR to CONTEXTIDR that changed it.
 * - State records (scenario secure only) follow the instruction that
 *   changed the security state (exception return, MCR to SCR) and come
 *   before the exception record of an entry that changed it (SMC).
 * - SMC (secure only): insn record, then exception (Monitor mode,
 *   MVBAR + 8, pref_return = next insn).
 * - Data records (only with tb_sim_set_data) follow the record of the
 *   instruction that made them, before any context record: see there.
 * - One TB_REC_END record ends every run that did not fail.
 *
 * Cycle model (record.cycle = cycle count when the record completes):
 * 1 cycle per instruction; +2 for a taken branch (pipeline refill);
 * +1 for a load/store plus, with probability 1/16 drawn from a xorshift64
 * generator seeded by the scenario, 1..4 wait states; exception entry
 * costs 3.  Deterministic for a seed.  With tb_sim_set_dual, an
 * instruction that pairs with the one before it costs 0.
 *
 * Self-modifying code is not followed: the per-address decode cache goes
 * stale and the in-sim branch check reports it as TB_ERR_MISMATCH.
 */
#ifndef TRACEBENCH_SIM_H
#define TRACEBENCH_SIM_H

#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called for each record; a non-zero return stops the run, which then
 * returns TB_ERR_STOPPED. */
typedef int (*tb_exec_cb)(void *ctx, const tb_exec_record *rec);
/* Called with the records so far, in order, n at least 1 (up to
 * TB_SIM_BATCH, fewer only for the run's last ones); they stay valid
 * until it returns.  A non-zero return stops the run as tb_exec_cb's
 * does. */
typedef int (*tb_exec_batch_cb)(void *ctx, const tb_exec_record *recs, size_t n);
#define TB_SIM_BATCH 256

typedef enum tb_sim_cpu {
    TB_SIM_CPU_A15 = 0,
    TB_SIM_CPU_A9,
    TB_SIM_CPU_A7,
    /* ARMv7-M (docs/cortex-m.md): Thumb only, the v7-M exception model,
     * NVIC, SysTick and the rest of the System Control Space emulated
     * here (sim/v7m.c, sim/scs.c); traced by ETMv3 only. */
    TB_SIM_CPU_M3,
    TB_SIM_CPU_M4,
} tb_sim_cpu;

/* Cortex-M3 or Cortex-M4. */
static inline bool tb_sim_cpu_is_m(tb_sim_cpu c)
{
    return c == TB_SIM_CPU_M3 || c == TB_SIM_CPU_M4;
}
/* "cortex-a15", ..., "cortex-m4". */
const char *tb_sim_cpu_name(tb_sim_cpu c);

typedef enum tb_sim_stop {
    TB_SIM_STOP_NONE = 0,
    TB_SIM_STOP_EXIT,        /* reached the exit address */
    TB_SIM_STOP_WFI,         /* WFI with no interrupt left to come */
    TB_SIM_STOP_BUDGET,      /* budget used up: max_insns instructions
                              * executed, or max_insns exceptions taken */
    TB_SIM_STOP_FAULT,       /* a fault loop nothing can leave: a prefetch
                              * abort (allowed by the scenario) at the
                              * prefetch abort vector itself */
} tb_sim_stop;

/* "none", "exit", "wfi", "budget", "fault". */
const char *tb_sim_stop_name(tb_sim_stop s);
/* One phrase for people: "reached the exit address", "WFI with no
 * interrupt left to come", "stopped by the budget", "a fault loop: ...". */
const char *tb_sim_stop_text(tb_sim_stop s);

#define TB_SCN_MAX_EVENTS 32
#define TB_SCN_MAX_MAPS 8
#define TB_SCN_EXPR 64

/* An interrupt the scenario raises.  It is asserted when at_insn
 * instructions have executed, or on the hit-th arrival at at_addr, then
 * stays pending until CPSR.I/F lets it in (never inside an IT block).
 * [debug] (A/R profile): a halt into Debug state at the same points,
 * at once (also inside an IT block): the core stops before the
 * instruction there for halt_cycles cycles, runs nothing, and resumes at
 * that instruction with nothing changed, as a debugger's halt and
 * restart do.  The record: an exception record of kind
 * TB_EXC_DEBUG_HALT (vector 0, ARM; pref_return = the instruction that
 * runs next; cycle = the cycle of the restart), which the encoders trace
 * as the entry (the exception packet, number 1) and an I-sync with
 * reason "exit from debug state" at the restart (docs/debug-halt.md).
 * Not counted as an exception taken.
 * Cortex-M: [irq] pends external interrupt `line` (exception 16 + line)
 * in the NVIC, [nmi] the NMI; taken when the v7-M priority rules let it
 * in (never inside an IT block either). */
typedef struct tb_scn_event {
    tb_exc_kind kind;            /* TB_EXC_IRQ or TB_EXC_FIQ; TB_EXC_V7M for
                                  * [nmi]; TB_EXC_DEBUG_HALT for [debug] */
    bool has_line;               /* line = N was given (Cortex-M) */
    uint16_t line;               /* IRQ line: exception 16 + line */
    bool has_priority;           /* priority = P was given (Cortex-M) */
    uint8_t priority;            /* the line's reset priority (lower is more
                                  * urgent); the line starts enabled */
    bool has_insn;
    uint64_t at_insn;
    uint64_t every;              /* with at_insn: period of repeats */
    uint32_t count;              /* times to raise (0 = unlimited) */
    char at_addr[TB_SCN_EXPR];   /* symbol or number; "" = none */
    uint32_t hit;                /* arrival number at at_addr (>= 1) */
    uint32_t halt_cycles;        /* [debug]: cycles spent halted (cycles =
                                  * N, default 100) */
    bool unstack;                /* Cortex-M, with at_addr: it arrives
                                  * during the instruction there, while the
                                  * exception return it makes unstacks (late
                                  * arrival: a pre-empted return, DDI0337E
                                  * 15.5.2), or after it when it makes none */
} tb_scn_event;

/* The budget bounds a run twice over with the same N: it stops before
 * the (N+1)th instruction, and after the Nth exception taken, so that an
 * exception loop in which no instruction runs (a prefetch abort whose
 * vector is not mapped either) ends too.  Exceptions count apart from
 * instructions so that a budget cuts a run with exceptions at the same
 * instruction as before (the committed vectors depend on it). */
typedef struct tb_scenario {
    tb_sim_cpu cpu;
    uint64_t max_insns;          /* the budget; 0: none */
    bool has_max_insns;          /* max_insns was given (a CLI default
                                  * applies only when it was not) */
    char exit[TB_SCN_EXPR];      /* symbol, number, or "none" */
    bool exit_set;               /* exit was given (the parser sets it): a
                                  * symbol the program lacks is then an error,
                                  * "_exit" too; any other exit always is */
    uint64_t seed;               /* cycle model wait states */
    bool high_vectors;           /* SCTLR.V */
    /* Start in Secure state (SCR.NS := 0; Unicorn resets Non-secure) and
     * track the security state: SMC enters Monitor mode at MVBAR + 8,
     * TB_REC_STATE records say where the state changes (docs/ns-hyp.md).
     * Off: the state is not tracked and records never say Non-secure. */
    bool secure;
    bool has_vbar;
    uint32_t vbar;
    bool allow_undef, allow_prefetch_abort, allow_data_abort;
    unsigned n_maps;
    struct { uint32_t addr, size; } maps[TB_SCN_MAX_MAPS];
    /* fetch_wait = CYCLES [ADDR SIZE]: each instruction fetched from
     * [addr, addr + size) (no ADDR SIZE: anywhere) takes CYCLES more
     * cycles, executed or not, as code in slow memory with no cache
     * does; the first entry that holds the address counts.  A
     * condition-failed instruction there leaves cycles with no
     * instruction before its N atom (ETMv3.0: a lone W is P-header
     * format 0, IHI0014Q 7.3.1 Table 7.3). */
    unsigned n_fetch_waits;
    struct { uint32_t addr, size, cycles; } fetch_waits[TB_SCN_MAX_MAPS];
    unsigned n_events;
    tb_scn_event events[TB_SCN_MAX_EVENTS];
    /* [systick] every = N (Cortex-M): SysTick runs from reset with a
     * period of N instructions and its interrupt enabled, as if set up
     * before the program started; the program may reprogram it through
     * SYST_CSR/SYST_RVR (sim/scs.c).  count = M stops it after M
     * SysTick exceptions (0: never). */
    uint64_t systick_every;      /* 0: SysTick as the program sets it */
    uint32_t systick_count;
} tb_scenario;

/* Defaults: Cortex-A15, no budget, exit at symbol "_exit" when the
 * program has one (silently none otherwise), seed 1, low vectors, every
 * fault an error, no events. */
void tb_scenario_init(tb_scenario *sc);

/* Parses INI text (see vectors/programs/README.md for the keys).  On
 * error returns TB_ERR_FORMAT and writes "line N: why" into err. */
int tb_scenario_parse(tb_scenario *sc, const char *text, size_t len,
                      char *err, size_t errlen);
int tb_scenario_load(tb_scenario *sc, const char *path, char *err,
                     size_t errlen);
/* The cpu the scenario file at path names (Cortex-A15 when path is NULL,
 * names none, or does not load: the run that loads it says why). */
tb_sim_cpu tb_scenario_cpu(const char *path);

typedef struct tb_sim tb_sim;

typedef struct tb_sim_result {
    tb_sim_stop stop;
    uint64_t insns;              /* insn records delivered */
    uint64_t cycles;
    uint64_t exceptions;
    uint32_t stop_addr;          /* PC where the run stopped */
    bool budget_exceptions;      /* TB_SIM_STOP_BUDGET: the exceptions used
                                  * it up, not the instructions */
} tb_sim_result;

/* The CPU model is fixed at creation (Unicorn accepts it only right
 * after uc_open).  NULL if Unicorn or the classifier cannot start. */
tb_sim *tb_sim_new(tb_sim_cpu cpu);
void tb_sim_free(tb_sim *s);
/* Back to the state tb_sim_new() gave, keeping the Unicorn instance
 * (opening one costs milliseconds): all memory unmapped, the CPU context
 * of creation restored, translated code dropped, image, symbols,
 * scenario and options forgotten.  Load and run again as after
 * tb_sim_new() (tests/test_sim.c: the same records as a new one). */
int tb_sim_rewind(tb_sim *s);

/* Loads an ELF32 little-endian ARM executable: every PT_LOAD segment
 * (memsz beyond filesz zeroed), the entry point (bit 0 = Thumb) and the
 * symbol table.  TB_ERR_FORMAT for anything malformed. */
int tb_sim_load_elf(tb_sim *s, const uint8_t *data, size_t len);
int tb_sim_load_elf_file(tb_sim *s, const char *path);
/* A raw image at addr; the entry defaults to addr in ARM state. */
int tb_sim_load_raw(tb_sim *s, const uint8_t *data, size_t len, uint32_t addr);
/* Maps zeroed RAM (page-rounded); already mapped pages are kept. */
int tb_sim_map(tb_sim *s, uint32_t addr, uint32_t size);
int tb_sim_set_entry(tb_sim *s, uint32_t addr, tb_isa isa);
/* Value of an ELF symbol (Thumb functions keep bit 0). */
int tb_sim_symbol(const tb_sim *s, const char *name, uint32_t *value);

/* An ELF32 image's symbol (in memory, no simulator needed): st_value
 * (Thumb functions keep bit 0) and st_size.  TB_ERR_NOT_FOUND when the
 * symbol table does not have it, TB_ERR_FORMAT for a malformed file. */
int tb_elf_symbol(const uint8_t *elf, size_t len, const char *name,
                  uint32_t *value, uint32_t *size);

/* Rewrites the include=/exclude= ranges of an encoder option list
 * (encoder.h) that name symbols of the ELF image into numbers, into out:
 *   include=SYM      the symbol's extent, st_value..st_value+st_size
 *                    (bit 0 of a Thumb function cleared)
 *   include=A-B      A and B each a number or a symbol's address; B
 *                    exclusive, as with numbers
 * Numeric ranges and the other options are copied as they are.  elf may
 * be NULL (a raw image): a symbol is then an error.  TB_ERR_NOT_FOUND
 * (no such symbol, or one without a size), TB_ERR_NOSPACE, with a reason
 * naming the option in err. */
int tb_elf_resolve_ranges(const uint8_t *elf, size_t len, const char *list,
                          char *out, size_t outlen, char *err, size_t errlen);

/* Copies the scenario and resolves its symbols (TB_ERR_NOT_FOUND with a
 * message naming the symbol; an exit the scenario names, exit_set, must
 * resolve too: "exit symbol '_exit' not found in the program's symbol
 * table").  tb_sim_has_exit tells whether a run can stop at an exit.  The scenario's cpu field is ignored here:
 * pass it to tb_sim_new. */
int tb_sim_set_scenario(tb_sim *s, const tb_scenario *sc);
bool tb_sim_has_exit(const tb_sim *s);

/* Runs from the entry until a stop (0, result filled in) or an error
 * (negative; tb_sim_errmsg says what and where).  Runs once per load. */
int tb_sim_run(tb_sim *s, tb_exec_cb cb, void *ctx, tb_sim_result *res);
/* As tb_sim_run, the records handed over TB_SIM_BATCH at a time, written
 * straight into the simulator's own array: for a consumer that takes
 * them in batches anyway (the round trip), no call and copy a record.
 * The records already made when the run stops or fails are handed over
 * before it returns, as tb_sim_run gives them one by one. */
int tb_sim_run_batch(tb_sim *s, tb_exec_batch_cb cb, void *ctx, tb_sim_result *res);

/* Reference mode (before tb_sim_run): one Unicorn code hook builds each
 * record as it happens, the original path; several times slower than
 * the default block path, which must give identical records (tests
 * compare the two). */
int tb_sim_set_reference(tb_sim *s, bool on);

/* Dual issue (before tb_sim_run; off by default): the cycle model lets
 * two adjacent simple instructions retire in the same cycle, the second
 * costing 0 cycles (sim/dual.c has the rule; docs/etmv3-data-model.md,
 * unverified D1-D4).  Only cycle stamps change.  TB_ERR_STATE after a
 * run. */
int tb_sim_set_dual(tb_sim *s, bool on);

/* Load PC first (before tb_sim_run; off by default): the core this
 * simulator stands for transfers the PC first in an LDM/POP that loads
 * it (ETMIDR[16], etmv3-data.md 1 and 6 [S*]; docs/etmv3-data-model.md
 * rule 12).  The data records of such an instruction then come in that
 * order: the PC's load (the highest address), then the others in
 * architectural order.  Nothing else changes.  TB_ERR_STATE after a
 * run. */
int tb_sim_set_pcfirst(tb_sim *s, bool on);

/* Data records (before tb_sim_run; off by default, so that runs without
 * them are unchanged record for record): one TB_REC_DATA record per
 * memory transfer, from Unicorn's memory hooks, in both paths alike.
 * - Where: right after the instruction record of the instruction that
 *   made them (u.data.insn_addr = its address), before a context record.
 *   seq is the instruction count at the record (that instruction's seq
 *   + 1, as for context records); cycle is that instruction's cycle.
 * - Which: every data load and store, in architectural order (IHI0406C
 *   A8.8.58 LDM/POP and A8.8.199 STM/PUSH: the lowest-numbered register
 *   at the lowest address first, the PC last; LDRD/STRD (A8.8.72,
 *   A8.8.210): Rt at the address, then Rt2 at address + 4; SWP/SWPB
 *   (A8.8.229): the load, then the store to the same address).  A load
 *   to the PC (LDR pc, POP {pc}, LDM {..pc}) is a transfer like any.
 *   Literal loads and TBB/TBH table reads are loads.  Instruction
 *   fetches and PLD make none.  An 8-byte access (LDREXD/STREXD) is two
 *   4-byte transfers, the lower address first.
 * - None for an instruction that failed its condition (ARM condition
 *   field or IT block), and none for one that took a data abort (it did
 *   not complete: the transfers Unicorn made before the abort are
 *   dropped).
 * - value: what memory held (load, zero-extended, before any sign
 *   extension: an LDRSB of 0x80 is 0x80) or what was written (store), as
 *   the register sees it; size 1, 2 or 4; TB_DATA_BE when CPSR.E was set.
 * - Store-exclusive (STREX/STREXB/H/D): one store (two for STREXD) at
 *   its address with the value it stores, or would have stored, flagged
 *   TB_DATA_STORE_FAILED when Rd = 1.  Unicorn keeps a real exclusive
 *   monitor: a STREX fails when no LDREX marked its address (STREX,
 *   CLREX clear it; exception entry here does not) or when memory no
 *   longer holds the value LDREX loaded.  LDREX* are plain loads.
 * The transfers of one instruction are buffered (at most TB_DAT_MAX in
 * sim_internal.h), so memory does not grow with the run.  TB_ERR_STATE
 * after a run. */
int tb_sim_set_data(tb_sim *s, bool on);

/* The last error's message ("" when none). */
const char *tb_sim_errmsg(const tb_sim *s);

/* Inspecting the core after a run: r0..r15 as 0..15, CPSR as 16 (banked
 * registers of the current mode). */
int tb_sim_read_reg(tb_sim *s, unsigned reg, uint32_t *value);
int tb_sim_read_mem(tb_sim *s, uint32_t addr, void *buf, size_t len);

/* Ground-truth writers: one line per record, without the newline.
 * Return the line length, or TB_ERR_NOSPACE when buf is too small. */
int tb_truth_format_text(const tb_exec_record *r, char *buf, size_t len);
int tb_truth_format_json(const tb_exec_record *r, char *buf, size_t len);
/* Reads one line of the text form back (a vector's truth.txt); the
 * inverse of tb_truth_format_text.  TB_ERR_FORMAT for anything else. */
int tb_truth_parse_text(const char *line, tb_exec_record *r);

#ifdef __cplusplus
}
#endif

#endif
