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
};

/* The instruction whose record waits for its next address. */
struct tb_pend {
    tb_centry ce;
    uint8_t isa, flags;
};

struct tb_sim {
    uc_engine *uc;
    uc_context *ctx0;        /* the CPU as created (tb_sim_rewind) */
    tb_classifier *cls;
    tb_sim_cpu cpu;
    char msg[256];

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
    void *cb_ctx;
    int err;
    enum tb_action action;
    uint32_t act_addr;       /* instruction / fault address */
    uint32_t fault_data;     /* data abort address */
    uint8_t act_isa;
    uint64_t count;          /* insn records delivered */
    uint64_t cycles;
    uint64_t exceptions;
    uint64_t next_check;     /* count at which the slow path must run */
    uint32_t pending_irq;    /* bit0 IRQ, bit1 FIQ asserted */
    uint64_t rng;
    uint32_t ctxid;
    bool ns;                 /* security state now (scenario secure) */
    uint8_t itstate;         /* ITSTATE as in IHI0406C A2.5.2 */
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
     * light code hook; records are built per block (sim.c). */
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

/* Dual-issue rule (dual.c): 1 when the instruction e (in isa, with its
 * record flags, going to next) retires in the same cycle as the one
 * before it, else 0; call it for every instruction record, in order. */
unsigned tb_sim_dual_step(tb_sim *s, const tb_centry *e, uint8_t isa, uint8_t flags,
                          uint32_t next);

#endif
