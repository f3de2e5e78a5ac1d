/*
 * The ARMv7-M exception model and System Control Space of the simulator
 * (cpu = cortex-m3 | cortex-m4; docs/cortex-m.md).  Unicorn 2.0.1 runs
 * the Thumb code in M-class mode but takes no exception itself (it
 * reports SVC as UC_HOOK_INTR 2 and an EXC_RETURN loaded into the PC as
 * UC_HOOK_INTR 8, and stops on UDF and bus errors: shared/docs
 * etmv3-v7m.md 2, U4-U11), so everything of ARMv7-M B1.5 that a trace
 * shows is done here: reset from the vector table, priorities, the NVIC,
 * SysTick, exception entry (the 8-word frame), return, tail-chaining and
 * fault escalation.  The run (sim.c and its parts) calls in through the
 * few hooks below, so the A-profile paths are unchanged.
 */
#ifndef TB_SIM_V7M_H
#define TB_SIM_V7M_H

#include "sim_internal.h"

/* External interrupts the model implements: the Cortex-M3/M4 maximum
 * (DDI0337G Table 14-8, IRQ0..IRQ239). */
#define V7M_NIRQ 240
#define V7M_NEXC (16 + V7M_NIRQ)
#define V7M_WORDS ((V7M_NEXC + 31) / 32)
/* MPU regions (MPU_TYPE.DREGION), as the Cortex-M3/M4 MPU has them
 * (DDI0337G 9.1). */
#define V7M_MPU_REGIONS 8

/* DEMCR (ARMv7-M C1.6.5) bits the model has: the DebugMonitor enable
 * and its pending bit (read from the exception's pending state). */
#define DEMCR_MON_EN (1u << 16)
#define DEMCR_MON_PEND (1u << 17)
#define DEMCR_MON_STEP (1u << 18)
/* DFSR (C1.6.1) and HFSR (B3.2.16) for a BKPT debug event. */
#define DFSR_BKPT (1u << 1)
#define HFSR_DEBUGEVT (1u << 31)

/* Exception numbers (ARMv7-M B1.5.2). */
enum {
    V7M_RESET = 1,
    V7M_NMI = 2,
    V7M_HARDFAULT = 3,
    V7M_MEMMANAGE = 4,
    V7M_BUSFAULT = 5,
    V7M_USAGEFAULT = 6,
    V7M_SVCALL = 11,
    V7M_DEBUGMON = 12,
    V7M_PENDSV = 14,
    V7M_SYSTICK = 15,
    V7M_IRQ0 = 16,
};

struct tb_v7m {
    bool m4;
    /* System Control Block (scs.c) */
    uint32_t vtor, prigroup, ccr, shcsr_ena, cfsr, hfsr, mmfar, bfar, cpacr, actlr, demcr;
    uint32_t dfsr;             /* DFSR (C1.6.1): BKPT bit 1 set by a BKPT debug event */
    uint32_t fpccr, fpcar;
    uint8_t shpr[16];          /* priorities of exceptions 4..15, by number */
    /* NVIC: bit n of word n / 32 stands for exception n */
    uint32_t ena[V7M_WORDS], pend[V7M_WORDS], act[V7M_WORDS];
    uint8_t ipr[V7M_NIRQ];
    /* SysTick, counting one per instruction executed (docs/cortex-m.md):
     * CVR reaches 0 when the instruction count reaches syst_next. */
    uint32_t syst_csr, syst_rvr, syst_cvr; /* syst_cvr: while disabled */
    uint64_t syst_next;        /* UINT64_MAX: never */
    uint32_t syst_fired;       /* scenario count = M: SysTick exceptions pended */
    /* the exception tb_sim_handle_stop takes at an ACT_IRQ stop */
    uint16_t take;
    /* The MPU (mpu.c; ARMv7-M B3.5): its registers as written, and the
     * state last applied to Unicorn's page protections (applied: a
     * protection other than UC_PROT_ALL may be set; key: ENABLE in
     * effect and the privilege it was computed for, dirty: the
     * registers changed since). */
    uint32_t mpu_ctrl, mpu_rnr, mpu_rbar[V7M_MPU_REGIONS], mpu_rasr[V7M_MPU_REGIONS];
    bool mpu_applied, mpu_dirty;
    int mpu_key;
};

int tb_v7m_new(tb_sim *s);
void tb_v7m_free(tb_sim *s);
/* tb_sim_set_scenario: checks the scenario's events and keys against
 * the M profile and applies the [irq] lines' priorities and enables and
 * [systick]. */
int tb_v7m_scenario(tb_sim *s);
/* tb_sim_run, before the first instruction: the System Control Space is
 * mapped and the core reset from the vector table at VTOR = 0 (word 0 the
 * initial SP, word 1 the reset vector, B1.5.5). */
int tb_v7m_start(tb_sim *s);
/* An event of the scenario is raised: its exception becomes pending. */
void tb_v7m_raise(tb_sim *s, const tb_scn_event *e);
/* The slow path before the instruction at a (isa, inside an IT block or
 * not): SysTick, then the most urgent pending exception that may
 * preempt.  1 when the run stops to take it (ACT_IRQ). */
int tb_v7m_slow(tb_sim *s, uint32_t a);
/* WFI with nothing pending, the scenario's next event due at event_at
 * (UINT64_MAX: none): 1 when SysTick wakes the core first (its
 * exception is pending now). */
int tb_v7m_wfi(tb_sim *s, uint64_t event_at);
/* The count from which the slow path must run again, at most n. */
uint64_t tb_v7m_next_check(const tb_sim *s, uint64_t n);
/* Unicorn's UC_HOOK_INTR number during an instruction: 1 when the model
 * took it (an action is set), 0 for the caller's own handling. */
int tb_v7m_intr(tb_sim *s, uint32_t intno);
/* tb_sim_handle_stop for the M profile: 1 run over, 0 restart, negative error,
 * V7M_NOT_MINE for the caller's shared handling (exit, budget, errors). */
#define V7M_NOT_MINE 2
int tb_v7m_stop(tb_sim *s, uc_err uerr, tb_sim_result *res);

/* The MPU (mpu.c, ARMv7-M B3.5).  Register access at SCS offset off
 * (0xD90..0xDB8): false after a refusal (the run stops with it). */
bool tb_mpu_read(tb_sim *s, uint32_t off, uint32_t *v);
bool tb_mpu_write(tb_sim *s, uint32_t off, uint32_t value, uint32_t mask);
/* Makes Unicorn's page protections the MPU's for the current privilege
 * and execution priority (HFNMIENA); cheap when nothing changed.  Called
 * after the registers change and at exception entry and return. */
int tb_mpu_sync(tb_sim *s);
/* Whether the MPU, as in effect now, forbids an access at addr (type a
 * UC_MEM_READ/WRITE/FETCH kind): the fault is then a MemManage. */
bool tb_mpu_denies(tb_sim *s, uint32_t addr, uc_mem_type type);

/* System Control Space (scs.c): maps it as MMIO; the callbacks read and
 * write the state above. */
int tb_scs_map(tb_sim *s);
/* The state's pieces scs.c and v7m.c share. */
int tb_v7m_prio(const struct tb_v7m *m, unsigned num);
bool tb_v7m_bit(const uint32_t *v, unsigned n);
void tb_v7m_set(uint32_t *v, unsigned n, bool on);
/* The exception that would be taken next (enabled, pending, most
 * urgent), 0 when none; its group priority in *grp. */
unsigned tb_v7m_best_pending(const tb_sim *s, int *grp);
int tb_v7m_exec_prio(tb_sim *s, int ignore, bool clear_faultmask);
/* SysTick (scs.c): the counter's value now, and its reprogramming. */
uint32_t tb_v7m_syst_cvr(const tb_sim *s);
void tb_v7m_syst_write(tb_sim *s, unsigned reg, uint32_t v);
/* Pends exception num and makes the next instruction check it. */
void tb_v7m_pend(tb_sim *s, unsigned num);
/* The slow path must run before the next instruction. */
void tb_v7m_recheck(tb_sim *s);

#endif
