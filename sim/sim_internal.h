/* Internal state of the simulator, shared by the files in sim/. */
#ifndef TB_SIM_INTERNAL_H
#define TB_SIM_INTERNAL_H

#include <unicorn/unicorn.h>

#include "tracebench/classify.h"
#include "tracebench/sim.h"

/* Per-address decode cache entry (the hot path never calls Capstone). */
enum {
    CE_LINK = 1u << 0,
    CE_TARGET = 1u << 1,
    CE_EXC_RET = 1u << 2,
    CE_IT = 1u << 3,
    CE_WFI = 1u << 4,
    CE_CTXID = 1u << 5,      /* MCR to CONTEXTIDR */
    CE_MEM = 1u << 6,        /* load/store (cycle model) */
    CE_SPECIAL = 1u << 7,    /* exit or event address: slow path */
    CE_CBZ = 1u << 8,
    CE_ARMCOND = 1u << 9,    /* ARM cond non-AL, not a direct branch */
    CE_TTHUMB = 1u << 10,    /* direct target is Thumb */
    /* Set only in block entries (depend on the position in the block). */
    CE_IT_MEMBER = 1u << 11, /* inside an IT block */
    CE_AFTER_CTXID = 1u << 12, /* follows an MCR to CONTEXTIDR */
    CE_EXCL = 1u << 13,      /* STREX/STREXB/H/D, set only with data
                              * records on (its record reads Rd after it) */
    CE_SECST = 1u << 14,     /* may change the security state: exception
                              * return or MCR to SCR; set only when the
                              * scenario tracks it (secure) */
};

/* Instructions the block path's code hook must look at one by one. */
#define CE_ATTENTION (CE_SPECIAL | CE_WFI | CE_ARMCOND | CE_AFTER_CTXID | CE_EXCL)

/* Data transfers one instruction can make: LDM/STM of 16 registers, a
 * VLDM/VSTM of 16 doublewords split in words (32), with room to spare. */
#define TB_DAT_MAX 64

/* One memory transfer waiting for its instruction's record. */
struct tb_dat {
    uint32_t addr, value;
    uint8_t size, flags;
};

typedef struct tb_centry {
    uint32_t addr;
    uint32_t opcode;
    uint32_t target;
    uint16_t info;
    uint8_t valid;           /* 0 empty, else 1 + isa */
    uint8_t size, wp, cond, it;
} tb_centry;

/* One instruction of a decoded translation block. */
typedef struct tb_binsn {
    tb_exec_record tpl;      /* its record when it falls through */
    tb_centry ce;
    uint8_t it_before, it_after; /* ITSTATE around it */
    uint8_t flags0;          /* record flags known from the decode */
    uint8_t plain;           /* no condition, not a waypoint, no CONTEXTIDR */
} tb_binsn;

/* Unicorn 2.0.1 translates at most TCG_MAX_INSNS (512) per block. */
#define TB_BLK_MAX_INSNS 512
#define TB_BLK_CACHE_BITS 12

/* A translation block as Unicorn's block hook reports it, decoded. */
typedef struct tb_block {
    uint32_t addr, size;
    uint8_t isa, it_start;
    uint16_t n;
    tb_binsn ins[];
} tb_block;

#define TB_CACHE_BITS 16
#define TB_CACHE_SIZE (1u << TB_CACHE_BITS)

typedef struct tb_sym {
    uint32_t name;           /* offset in strtab */
    uint32_t value;
} tb_sym;

struct tb_ev_state {
    uint32_t addr;
    bool has_addr;
    uint32_t arrivals;
    uint32_t raised;
    uint64_t next_insn;
    bool done;
    bool armed;              /* unstack: at_addr reached, the arrival is
                              * during that instruction (v7m.c) */
};

/* What made the hook stop the emulator. */
enum tb_action {
    ACT_NONE = 0,
    ACT_IRQ,
    ACT_FIQ,
    ACT_SVC,
    ACT_SMC,
    ACT_WFI,
    ACT_EXIT,
    ACT_BUDGET,
    ACT_FETCH_FAULT,
    ACT_DATA_FAULT,
    ACT_ERROR,
    ACT_EXC_RETURN,          /* v7-M: EXC_RETURN loaded into the PC (v7m.c) */
    ACT_BKPT,                /* v7-M: BKPT, a debug event (v7m.c bkpt) */
    ACT_RETRANSLATE,         /* before an ARM block Unicorn translated
                              * without exit checks (tb_sim_tb_new) */
};

/* The instruction whose record waits for its next address. */
struct tb_pend {
    tb_centry ce;
    uint8_t isa, flags;
    uint8_t it_before;       /* ITSTATE as the instruction began */
};

struct tb_v7m;

struct tb_sim {
    uc_engine *uc;
    uc_context *ctx0;        /* the CPU as created (tb_sim_rewind) */
    tb_classifier *cls;
    tb_sim_cpu cpu;
    char msg[256];
    struct tb_v7m *m;        /* the v7-M model (v7m.c); NULL for A/R */
    char elf_profile;        /* the ELF's Tag_CPU_arch_profile: 'A', 'R',
                              * 'M', or 0 when it has none */
    uint8_t elf_arch;        /* its Tag_CPU_arch (0 when none) */

    /* image */
    uint32_t entry;
    uint8_t entry_isa;
    bool loaded, ran;
    unsigned n_maps;
    struct { uint32_t lo, hi; } maps[64];  /* [lo, hi) page ranges */
    tb_sym *syms;
    size_t n_syms;
    char *strtab;
    size_t strtab_len;

    /* scenario */
    tb_scenario sc;
    bool has_exit;
    uint32_t exit_addr;
    struct tb_ev_state ev[TB_SCN_MAX_EVENTS];

    /* run state */
    tb_exec_cb cb;
    tb_exec_batch_cb bcb;    /* tb_sim_run_batch: cb is NULL, records wait */
    void *cb_ctx;
    tb_exec_record *bbuf;    /* in bbuf[0 .. bn) */
    size_t bn;
    int err;
    enum tb_action action;
    uint32_t act_addr;       /* instruction / fault address */
    uint32_t fault_data;     /* data abort address */
    uc_mem_type fault_type;  /* the faulting access's kind (v7-M: an MPU
                              * fault is a MemManage, mpu.c) */
    uint32_t fault_insn;     /* instruction running at the fault (0: none) */
    uint32_t past_addr;      /* the first code hook after the fault ... */
    unsigned past_n;         /* ... and how many fired (tb_sim_ran_past_fault) */
    bool uc_noexit;          /* Unicorn's no_exit_request may be stuck on
                              * (tb_sim_tb_new) */
    uint32_t retr_size;      /* ACT_RETRANSLATE: the block's byte size */
    uint64_t retranslated;   /* blocks translated again (tb_sim_retranslate) */
    uint64_t ref_seen[1u << 10]; /* reference path: blocks seen, (size << 32
                              * | address) + 1, direct-mapped */
    uint8_t act_isa;
    uint64_t count;          /* insn records delivered */
    uint64_t cycles;
    uint64_t exceptions;
    uint64_t next_check;     /* count at which the slow path must run */
    uint32_t pending_irq;    /* bit0 IRQ, bit1 FIQ asserted */
    bool debug_due;          /* a [debug] halt before the next instruction */
    uint32_t debug_cycles;   /* ... and how long it lasts */
    uint64_t rng;
    uint32_t ctxid;
    bool ns;                 /* security state now (scenario secure) */
    uint8_t itstate;         /* ITSTATE as in IHI0406C A2.5.2 */
    uint8_t ret_it;          /* ITSTATE an exception return restored */
    bool have_ret_it;        /* ... not yet applied (tb_sim_flow_check) */
    uint32_t ref_next;       /* reference path: where an exception return */
    bool have_ref_next;      /* went, its code hook not yet seen */
    uint8_t isa;             /* ISA of the next instruction */
    bool isa_known;
    bool have_pend;
    struct tb_pend pend;
    tb_centry *cache;
    uc_hook h_code, h_intr, h_mem, h_fetch, h_block, h_data;

    /* Data records (tb_sim_set_data): the transfers of the instruction
     * running now, from the memory hooks, delivered after its record. */
    bool data;
    bool dat_drop;           /* the instruction aborted: no transfers */
    unsigned dat_n;
    uint32_t dat_owner;      /* address of the instruction they belong to */
    struct tb_dat dat[TB_DAT_MAX];
    bool pcfirst;            /* tb_sim_set_pcfirst: an LDM's PC load first */

    /* Dual-issue rule (tb_sim_set_dual, dual.c): whether the last
     * instruction may start a pair, its registers and next address. */
    bool dual;
    bool dual_first;
    uint32_t dual_rd, dual_wr, dual_next;

    /* Block path (the default): a block hook per translation block and a
     * light code hook; records are built per block (block.c). */
    bool reference;          /* the original one-record-per-hook path */
    tb_block **blocks;       /* direct-mapped block cache */
    tb_block *blk;           /* block now running, NULL between runs */
    unsigned pos;            /* next index the code hook expects */
    unsigned done;           /* records delivered for ins[0..done) */
    uint64_t klimit;         /* index from which the slow path must run */
    uint8_t pass[TB_BLK_MAX_INSNS]; /* ran / condition passed, by index */
    tb_binsn tmp[TB_BLK_MAX_INSNS]; /* decode scratch */
};

int tb_sim_fail(tb_sim *s, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Hooks of the run for the v7-M model (v7m.c, scs.c): sim.c, records.c,
 * hooks.c. */
void tb_sim_stop_for(tb_sim *s, enum tb_action act);
int tb_sim_deliver(tb_sim *s, const tb_exec_record *r);
/* Completes the pending instruction, which went to a; extra record
 * flags (TB_INSN_EXC_RETURN) are added to it. */
int tb_sim_finish(tb_sim *s, uint32_t a, uint8_t extra_flags);
void tb_sim_update_next_check(tb_sim *s);
/* The instruction running now (its address), for messages. */
uint32_t tb_sim_insn_addr(const tb_sim *s);

/* CPSR bits (IHI0406C B1.3.3). */
#define CPSR_T (1u << 5)
#define CPSR_F (1u << 6)
#define CPSR_I (1u << 7)
#define CPSR_A (1u << 8)
#define CPSR_E (1u << 9)
#define CPSR_J (1u << 24)
#define CPSR_IT_MASK 0x0600FC00u

/* Small helpers every part of the run uses; inline, as they were when
 * the run was one file (the block path calls them per instruction). */

static inline uint32_t sim_read_cpsr(tb_sim *s)
{
    uint32_t v = 0;

    uc_reg_read(s->uc, UC_ARM_REG_CPSR, &v);
    return v;
}

static inline int sim_cp15(tb_sim *s, bool write, unsigned crn, unsigned crm,
                            unsigned opc1, unsigned opc2, uint32_t *val)
{
    uc_arm_cp_reg r = {15, 0, 0, crn, crm, opc1, opc2, 0};
    uc_err e;

    if (write) {
        r.val = *val;
        e = uc_reg_write(s->uc, UC_ARM_REG_CP_REG, &r);
    } else {
        e = uc_reg_read(s->uc, UC_ARM_REG_CP_REG, &r);
        *val = (uint32_t)r.val;
    }
    return e == UC_ERR_OK ? 0 : TB_ERR_EMULATOR;
}

static inline uint64_t sim_rng_next(tb_sim *s)
{
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 0x2545F4914F6CDD1Dull;
}

static inline void sim_stop(tb_sim *s, enum tb_action act)
{
    s->action = act;
    uc_emu_stop(s->uc);
}

int tb_sim_batch_flush(tb_sim *s);

static inline int sim_deliver(tb_sim *s, const tb_exec_record *r)
{
    if (s->bcb) {
        s->bbuf[s->bn++] = *r;
        return s->bn == TB_SIM_BATCH ? tb_sim_batch_flush(s) : 0;
    }
    if (s->cb && s->cb(s->cb_ctx, r)) {
        tb_sim_fail(s, TB_ERR_STOPPED, "the record callback asked to stop");
        return TB_ERR_STOPPED;
    }
    return 0;
}


/* The parts of the run, one file each; sim.c says how they fit. */

/* cache.c: the decoded instruction at a in isa, from the per-address
 * cache (the classifier on a miss); NULL when it cannot be read. */
tb_centry *tb_sim_lookup(tb_sim *s, uint32_t a, uint8_t isa);

/* records.c: records, the pending instruction, events, the reference
 * path's hooks. */
int tb_sim_emit_data(tb_sim *s, const tb_centry *e, uint8_t iflags);
int tb_sim_read_ns(tb_sim *s, bool *ns);
int tb_sim_scr_secure(tb_sim *s);
int tb_sim_check_state(tb_sim *s);
int tb_sim_emit_rec(tb_sim *s, const tb_centry *e, const tb_exec_record *tpl,
                    uint8_t isa, uint32_t next, uint8_t next_isa, uint8_t flags);
uint8_t tb_sim_base_flags(const tb_centry *e, uint8_t isa, uint8_t *it);
void tb_sim_make_pending(tb_sim *s, const tb_centry *e, uint8_t isa, bool hooked,
                         int passed);
int tb_sim_flow_check(tb_sim *s, const tb_centry *e, uint8_t isa, uint8_t *flagsp,
                      uint32_t a, uint32_t hsize, uint8_t *nisa);
int tb_sim_finish_insn(tb_sim *s, uint32_t a, uint32_t size);
void tb_sim_raise_event(tb_sim *s, unsigned i);
int tb_sim_slow_path(tb_sim *s, uint32_t a, const tb_centry *e, uint8_t isa);
void tb_sim_hook_code(uc_engine *uc, uint64_t address, uint32_t size, void *user);
void tb_sim_hook_block_ref(uc_engine *uc, uint64_t address, uint32_t size, void *user);

/* block.c: the block path. */
void tb_sim_blk_free_all(tb_sim *s);
int tb_sim_blk_flush(tb_sim *s, unsigned upto, uint32_t last_next);
void tb_sim_hook_block(uc_engine *uc, uint64_t address, uint32_t size, void *user);
void tb_sim_hook_code_blk(uc_engine *uc, uint64_t address, uint32_t size, void *user);
int tb_sim_blk_settle(tb_sim *s);

/* hooks.c: the hooks of both paths. */
void tb_sim_hook_intr(uc_engine *uc, uint32_t intno, void *user);
bool tb_sim_hook_mem_fault(uc_engine *uc, uc_mem_type type, uint64_t address,
                           int size, int64_t value, void *user);
void tb_sim_hook_mem_data(uc_engine *uc, uc_mem_type type, uint64_t address, int size,
                          int64_t value, void *user);
void tb_sim_ran_past_fault(tb_sim *s, uint32_t a);
int tb_sim_check_past_fault(tb_sim *s);
int tb_sim_check_interrupt_stop(tb_sim *s);
bool tb_sim_tb_new(tb_sim *s, uint32_t a, uint32_t size, uint8_t isa, bool ends_in_it);
int tb_sim_retranslate(tb_sim *s);

/* exceptions.c: one stop of the emulator (1 run over, 0 restart at
 * s->act_addr, negative error). */
int tb_sim_handle_stop(tb_sim *s, uc_err uerr, tb_sim_result *res);

/* Dual-issue rule (dual.c): 1 when the instruction e (in isa, with its
 * record flags, going to next) retires in the same cycle as the one
 * before it, else 0; call it for every instruction record, in order. */
unsigned tb_sim_dual_step(tb_sim *s, const tb_centry *e, uint8_t isa, uint8_t flags,
                          uint32_t next);

/* The scenario's fetch wait states for the instruction at a (tb_scenario
 * fetch_wait): call it only when sc.n_fetch_waits is not 0, so runs
 * without them pay one test per instruction. */
static inline unsigned tb_sim_fetch_wait(const tb_sim *s, uint32_t a)
{
    for (unsigned i = 0; i < s->sc.n_fetch_waits; i++)
        if (!s->sc.fetch_waits[i].size ||
            a - s->sc.fetch_waits[i].addr < s->sc.fetch_waits[i].size)
            return s->sc.fetch_waits[i].cycles;
    return 0;
}

#endif
