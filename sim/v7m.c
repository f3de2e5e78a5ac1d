/*
 * The ARMv7-M exception model (v7m.h; docs/cortex-m.md 1).  References
 * are to the ARMv7-M exception model as shared/docs/etmv3-v7m.md 1 has
 * it (Arm DUI0471 "exception types", PM0056 2.3.7 stacking, DUI0553A
 * 2.3.7 EXC_RETURN, SLAU723A Table 1-20) and to Unicorn 2.0.1's M-class
 * behaviour observed there (U1-U19).  What the model leaves out is listed
 * in docs/cortex-m.md 1.4; each place that refuses it says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "v7m.h"

#define EXC_RETURN_HANDLER 0xFFFFFFF1u
#define EXC_RETURN_THREAD_MSP 0xFFFFFFF9u
#define EXC_RETURN_THREAD_PSP 0xFFFFFFFDu

/* CCR bits (B3.2.8). */
#define CCR_NONBASETHRDENA (1u << 0)
#define CCR_STKALIGN (1u << 9)
/* SHCSR enables (B3.2.13). */
#define SHCSR_MEMFAULTENA (1u << 16)
#define SHCSR_BUSFAULTENA (1u << 17)
#define SHCSR_USGFAULTENA (1u << 18)
/* CFSR (B3.2.15) and HFSR (B3.2.16) bits the model sets. */
#define CFSR_IACCVIOL (1u << 0)
#define CFSR_DACCVIOL (1u << 1)
#define CFSR_MMARVALID (1u << 7)
#define CFSR_IBUSERR (1u << 8)
#define CFSR_PRECISERR (1u << 9)
#define CFSR_BFARVALID (1u << 15)
#define CFSR_UNDEFINSTR (1u << 16)
#define CFSR_INVPC (1u << 18)
#define HFSR_FORCED (1u << 30)

/* Cycle model (docs/cortex-m.md 1.3; model choices, not measured):
 * entry and return are the Cortex-M3's 12-cycle latencies, a tail-chain
 * its 6 (DDI0337 "Exceptions": interrupt latency). */
#define CYC_ENTRY 12
#define CYC_TAILCHAIN 6
#define CYC_RETURN 10

static const char *name_of(unsigned num, char *buf, size_t len)
{
    const char *n = tb_v7m_exc_name(num, buf, len);

    return n ? n : "?";
}

static uint32_t rreg(tb_sim *s, int id)
{
    uint32_t v = 0;

    uc_reg_read(s->uc, id, &v);
    return v;
}

static int wreg(tb_sim *s, int id, uint32_t v)
{
    return uc_reg_write(s->uc, id, &v) == UC_ERR_OK ? 0 : TB_ERR_EMULATOR;
}

bool tb_v7m_bit(const uint32_t *v, unsigned n)
{
    return n < V7M_NEXC && ((v[n >> 5] >> (n & 31)) & 1u);
}

void tb_v7m_set(uint32_t *v, unsigned n, bool on)
{
    if (n >= V7M_NEXC)
        return;
    if (on)
        v[n >> 5] |= 1u << (n & 31);
    else
        v[n >> 5] &= ~(1u << (n & 31));
}

int tb_v7m_new(tb_sim *s)
{
    struct tb_v7m *m = calloc(1, sizeof *m);

    if (!m)
        return TB_ERR_NOMEM;
    m->m4 = s->cpu == TB_SIM_CPU_M4;
    /* Reset values (B3.2): VTOR 0, STKALIGN 1 (Cortex-M3 r2p0 on, M4),
     * every priority 0, every interrupt disabled, SysTick off; an M4's
     * FPCCR.ASPEN and LSPEN 1. */
    m->ccr = CCR_STKALIGN;
    m->fpccr = m->m4 ? 0xC0000000u : 0;
    m->syst_next = UINT64_MAX;
    s->m = m;
    return 0;
}

void tb_v7m_free(tb_sim *s)
{
    free(s->m);
    s->m = NULL;
}

/* ------------------------------------------------------------------ */
/* Priorities (B1.5.4). */

/* The exception's priority: fixed for Reset, NMI and HardFault, else the
 * 8-bit field of SHPR or NVIC_IPR (all 8 bits implemented here). */
int tb_v7m_prio(const struct tb_v7m *m, unsigned num)
{
    if (num == V7M_RESET)
        return -3;
    if (num == V7M_NMI)
        return -2;
    if (num == V7M_HARDFAULT)
        return -1;
    if (num < 16)
        return m->shpr[num];
    return num < V7M_NEXC ? m->ipr[num - 16] : 256;
}

/* The group priority: AIRCR.PRIGROUP = n leaves bits [7:n+1] for the
 * group and [n:0] for the sub-priority, which only orders pending
 * exceptions (B1.5.4). */
static int group(const struct tb_v7m *m, int prio)
{
    if (prio < 0 || prio > 255)
        return prio;
    return prio & (int)~((2u << m->prigroup) - 1u) & 0xFF;
}

/* ExecutionPriority(): the most urgent active exception's group priority
 * and the boost of PRIMASK (0), FAULTMASK (-1) and BASEPRI; 256 in Thread
 * mode with nothing active or masked.  ignore: an active exception to
 * leave out (the one returning); clear_faultmask: as after its return,
 * which clears FAULTMASK unless it is the NMI's (B1.5.8). */
int tb_v7m_exec_prio(tb_sim *s, int ignore, bool clear_faultmask)
{
    const struct tb_v7m *m = s->m;
    int ep = 256, p;
    uint32_t basepri;

    for (unsigned w = 0; w < V7M_WORDS; w++)
        for (uint32_t bits = m->act[w]; bits; bits &= bits - 1) {
            unsigned n = w * 32 + (unsigned)__builtin_ctz(bits);

            if ((int)n == ignore)
                continue;
            if ((p = group(m, tb_v7m_prio(m, n))) < ep)
                ep = p;
        }
    if ((rreg(s, UC_ARM_REG_PRIMASK) & 1) && ep > 0)
        ep = 0;
    if (!clear_faultmask && (rreg(s, UC_ARM_REG_FAULTMASK) & 1) && ep > -1)
        ep = -1;
    basepri = rreg(s, UC_ARM_REG_BASEPRI) & 0xFF;
    if (basepri && group(m, (int)basepri) < ep)
        ep = group(m, (int)basepri);
    return ep;
}

/* The pending exception to take next: enabled (interrupts by NVIC_ISER;
 * the configurable faults are pended only when enabled), most urgent
 * group priority, then sub-priority, then the lowest number (B1.5.4). */
unsigned tb_v7m_best_pending(const tb_sim *s, int *grp)
{
    const struct tb_v7m *m = s->m;
    unsigned best = 0;
    int bp = 0, bg = 0;

    for (unsigned w = 0; w < V7M_WORDS; w++)
        for (uint32_t bits = m->pend[w]; bits; bits &= bits - 1) {
            unsigned n = w * 32 + (unsigned)__builtin_ctz(bits);
            int p, g;

            if (n >= 16 && !tb_v7m_bit(m->ena, n))
                continue;
            p = tb_v7m_prio(m, n);
            g = group(m, p);
            if (!best || g < bg || (g == bg && p < bp)) {
                best = n;
                bp = p;
                bg = g;
            }
        }
    if (grp)
        *grp = bg;
    return best;
}

void tb_v7m_recheck(tb_sim *s)
{
    /* Both paths' fast checks go to the slow path at once (records.c
     * tb_sim_update_next_check, block.c blk_set_limit). */
    s->next_check = 0;
    s->klimit = 0;
}

void tb_v7m_pend(tb_sim *s, unsigned num)
{
    tb_v7m_set(s->m->pend, num, true);
    tb_v7m_recheck(s);
}

/* ------------------------------------------------------------------ */
/* Scenario and reset. */

int tb_v7m_scenario(tb_sim *s)
{
    struct tb_v7m *m = s->m;
    const tb_scenario *sc = &s->sc;

    if (sc->secure)
        return tb_sim_fail(s, TB_ERR_CONFIG, "scenario: secure = true: the Cortex-M3/M4 have no "
                           "Security Extensions");
    if (sc->high_vectors || sc->has_vbar)
        return tb_sim_fail(s, TB_ERR_CONFIG, "scenario: %s: a Cortex-M finds its vector table "
                           "through VTOR (0 at reset; the program writes 0xE000ED08)",
                           sc->high_vectors ? "high_vectors" : "vbar");
    for (unsigned i = 0; i < sc->n_events; i++) {
        const tb_scn_event *e = &sc->events[i];

        if (e->kind == TB_EXC_FIQ)
            return tb_sim_fail(s, TB_ERR_CONFIG, "scenario: [fiq]: a Cortex-M has no FIQ; "
                               "use [irq] with line = N, or [nmi]");
        if (e->kind == TB_EXC_IRQ) {
            unsigned n = V7M_IRQ0 + e->line;

            /* The line's reset priority, and enabled unless the program
             * disables it (issue 32): what a bare program leaves unset. */
            if (e->has_priority)
                m->ipr[e->line] = e->priority;
            tb_v7m_set(m->ena, n, true);
        }
    }
    if (sc->systick_every) {
        /* As if set up before the program ran: RVR = N - 1, CVR 0,
         * ENABLE, TICKINT and CLKSOURCE (B3.3.3): the first SysTick
         * exception after N instructions. */
        m->syst_rvr = (uint32_t)(sc->systick_every - 1);
        m->syst_csr = 7;
        m->syst_next = sc->systick_every;
    }
    return 0;
}

int tb_v7m_start(tb_sim *s)
{
    uint32_t vt[2], lo = 0, hi = 0;
    int rc;

    if ((rc = tb_scs_map(s)) < 0)
        return rc;
    /* Reset (B1.5.5): SP_main from word 0 of the table at VTOR (0), the
     * PC from word 1, which must be a Thumb address.  Unicorn does
     * neither (U2). */
    if (uc_mem_read(s->uc, 0, vt, sizeof vt) != UC_ERR_OK)
        return tb_sim_fail(s, TB_ERR_FAULT, "reset: the vector table at 0x00000000 "
                           "(VTOR = 0) is outside memory: a Cortex-M program starts with "
                           "its vector table at 0 (word 0 the stack pointer, word 1 the "
                           "reset handler)");
    if (!(vt[1] & 1))
        return tb_sim_fail(s, TB_ERR_FAULT, "reset: the reset vector (word 1 of the vector "
                           "table at 0) is 0x%08x, an even address: a Cortex-M runs Thumb "
                           "only, so vectors have bit 0 set (on silicon: a HardFault at "
                           "reset, INVSTATE)%s", vt[1],
                           s->elf_profile && s->elf_profile != 'M'
                               ? "; the program is not built for the M profile" : "");
    {
        uint8_t b;

        if (uc_mem_read(s->uc, vt[1] & ~1u, &b, 1) != UC_ERR_OK)
            return tb_sim_fail(s, TB_ERR_FAULT, "reset: the reset vector 0x%08x points "
                               "outside memory", vt[1]);
        /* The initial stack must hold a frame: the word below it is
         * where the first exception stacks. */
        lo = vt[0] - 32;
        hi = vt[0] - 1;
        if ((vt[0] & 3) || vt[0] < 32 || uc_mem_read(s->uc, lo, &b, 1) != UC_ERR_OK ||
            uc_mem_read(s->uc, hi, &b, 1) != UC_ERR_OK)
            return tb_sim_fail(s, TB_ERR_FAULT, "reset: the initial stack pointer (word 0 of "
                               "the vector table) is 0x%08x: %s", vt[0],
                               (vt[0] & 3) ? "not word aligned"
                                           : "the stack below it is outside memory (map "
                                             "RAM there: a PT_LOAD segment or map = in [sim])");
    }
    if (wreg(s, UC_ARM_REG_MSP, vt[0]) < 0 || wreg(s, UC_ARM_REG_SP, vt[0]) < 0 ||
        wreg(s, UC_ARM_REG_LR, 0xFFFFFFFFu) < 0)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "reset: cannot write the stack pointer");
    s->entry = vt[1] & ~1u;
    s->entry_isa = TB_ISA_THUMB;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Events and SysTick. */

void tb_v7m_raise(tb_sim *s, const tb_scn_event *e)
{
    tb_v7m_pend(s, e->kind == TB_EXC_V7M ? V7M_NMI : V7M_IRQ0 + e->line);
}

/* SysTick reached 0 at the instruction count syst_next: COUNTFLAG, the
 * exception pended with TICKINT, and the counter reloads RVR for the
 * next period of RVR + 1 counts (B3.3.1; RVR 0 stops it). */
static void systick_due(tb_sim *s)
{
    struct tb_v7m *m = s->m;

    while ((m->syst_csr & 1) && s->count >= m->syst_next) {
        m->syst_csr |= 1u << 16;
        if (m->syst_csr & 2) {
            tb_v7m_pend(s, V7M_SYSTICK);
            m->syst_fired++;
            if (s->sc.systick_count && m->syst_fired >= s->sc.systick_count) {
                /* count = M: SysTick stops after its M-th exception. */
                m->syst_csr &= ~1u;
                m->syst_cvr = 0;
                m->syst_next = UINT64_MAX;
                break;
            }
        }
        m->syst_next = m->syst_rvr ? m->syst_next + m->syst_rvr + 1 : UINT64_MAX;
    }
}

int tb_v7m_wfi(tb_sim *s, uint64_t event_at)
{
    struct tb_v7m *m = s->m;

    /* WFI with nothing pending: time passes until SysTick reaches 0 or
     * the scenario's next event, whichever is first.  The wait is not
     * counted (instructions are the clock): SysTick's next period starts
     * at the wake-up. */
    if (!(m->syst_csr & 1) || !(m->syst_csr & 2) || m->syst_next > event_at ||
        m->syst_next == UINT64_MAX)
        return 0;
    m->syst_next = s->count;
    systick_due(s);
    if (m->syst_next != UINT64_MAX)
        m->syst_next = s->count + m->syst_rvr + 1;
    return 1;
}

uint64_t tb_v7m_next_check(const tb_sim *s, uint64_t n)
{
    const struct tb_v7m *m = s->m;

    if ((m->syst_csr & 1) && m->syst_next < n)
        n = m->syst_next;
    for (unsigned w = 0; w < V7M_WORDS; w++)
        if (m->pend[w])
            return 0; /* a pending exception waits for its priority */
    return n;
}

/* ------------------------------------------------------------------ */
/* Exception entry (B1.5.6 PushStack, ExceptionTaken). */

/* Takes exception num: ret is the return address the frame holds, it
 * the ITSTATE to stack (the faulting instruction's), cancelled when that
 * instruction did not complete (the precise faults); tailchain: no new
 * frame, LR keeps the EXC_RETURN of the frame there is (B1.5.12). */
static int enter(tb_sim *s, unsigned num, uint32_t ret, uint8_t it, bool cancelled,
                 bool tailchain, uint32_t excret_chain)
{
    struct tb_v7m *m = s->m;
    uint32_t vec = 0, vaddr = m->vtor + 4 * num, ipsr, xpsr, control, excret, npsr;
    char nb[24];
    tb_exec_record r;

    if (uc_mem_read(s->uc, vaddr, &vec, 4) != UC_ERR_OK)
        return tb_sim_fail(s, TB_ERR_FAULT, "exception %u (%s): its vector at 0x%08x "
                           "(VTOR 0x%08x + 4 * %u) is outside memory", num,
                           name_of(num, nb, sizeof nb), vaddr, m->vtor, num);
    if (!(vec & 1))
        return tb_sim_fail(s, TB_ERR_FAULT, "exception %u (%s): its vector at 0x%08x is "
                           "0x%08x, an even address (a Cortex-M vector has bit 0 set: on "
                           "silicon an INVSTATE UsageFault at the handler)", num,
                           name_of(num, nb, sizeof nb), vaddr, vec);
    {
        uint8_t b;

        if (uc_mem_read(s->uc, vec & ~1u, &b, 1) != UC_ERR_OK)
            return tb_sim_fail(s, TB_ERR_FAULT, "exception %u (%s): its vector at 0x%08x "
                               "points outside memory (0x%08x)", num,
                               name_of(num, nb, sizeof nb), vaddr, vec);
    }
    ipsr = rreg(s, UC_ARM_REG_IPSR) & 0x1FF;
    control = rreg(s, UC_ARM_REG_CONTROL);
    if (m->m4 && (control & 4))
        return tb_sim_fail(s, TB_ERR_UNSUPPORTED, "exception %u (%s) at 0x%08x: the "
                           "floating-point context is active (CONTROL.FPCA): extended "
                           "frames are not modelled (docs/cortex-m.md 1.4)", num,
                           name_of(num, nb, sizeof nb), ret);
    if (tailchain) {
        excret = excret_chain;
    } else {
        bool psp = !ipsr && (control & 2);
        uint32_t sp = rreg(s, psp ? UC_ARM_REG_PSP : UC_ARM_REG_MSP), frame[8], fp;
        bool align = (m->ccr & CCR_STKALIGN) && (sp & 4);

        xpsr = rreg(s, UC_ARM_REG_XPSR);
        /* The stacked xPSR: flags, T, the IT bits tracked here (the
         * copy Unicorn gives is stale, sim.c), IPSR; bit 9 records the
         * aligner (PM0056 2.3.7). */
        xpsr = (xpsr & 0xF8000000u) | (1u << 24) | ((uint32_t)(it & 3) << 25) |
               ((uint32_t)(it >> 2) << 10) | ipsr | (align ? 1u << 9 : 0);
        fp = (sp - 32) & ((m->ccr & CCR_STKALIGN) ? ~7u : ~3u);
        frame[0] = rreg(s, UC_ARM_REG_R0);
        frame[1] = rreg(s, UC_ARM_REG_R1);
        frame[2] = rreg(s, UC_ARM_REG_R2);
        frame[3] = rreg(s, UC_ARM_REG_R3);
        frame[4] = rreg(s, UC_ARM_REG_R12);
        frame[5] = rreg(s, UC_ARM_REG_LR);
        frame[6] = ret & ~1u;
        frame[7] = xpsr;
        if (tb_mpu_denies(s, fp, UC_MEM_WRITE) || tb_mpu_denies(s, fp + 28, UC_MEM_WRITE))
            return tb_sim_fail(s, TB_ERR_UNSUPPORTED, "exception %u (%s) at 0x%08x: the MPU "
                               "forbids the stack frame at 0x%08x: a stacking MemManage "
                               "fault (MSTKERR) is not modelled (docs/cortex-m.md 1.4)", num,
                               name_of(num, nb, sizeof nb), ret, fp);
        if (sp < 32 || uc_mem_write(s->uc, fp, frame, sizeof frame) != UC_ERR_OK)
            return tb_sim_fail(s, TB_ERR_FAULT, "exception %u (%s) at 0x%08x: the stack frame "
                               "at 0x%08x..0x%08x is outside memory (%s = 0x%08x; on silicon "
                               "a stacking BusFault)", num, name_of(num, nb, sizeof nb), ret,
                               fp, fp + 31, psp ? "PSP" : "MSP", sp);
        if (psp) {
            if (wreg(s, UC_ARM_REG_PSP, fp) < 0 || wreg(s, UC_ARM_REG_CONTROL, control & ~2u) < 0)
                return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot switch to MSP");
        } else if (wreg(s, UC_ARM_REG_MSP, fp) < 0 || wreg(s, UC_ARM_REG_SP, fp) < 0) {
            return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot write MSP");
        }
        excret = ipsr ? EXC_RETURN_HANDLER : psp ? EXC_RETURN_THREAD_PSP : EXC_RETURN_THREAD_MSP;
    }
    /* IPSR := num, EPSR.IT := 0, T := 1 (the vector's bit 0); LR :=
     * EXC_RETURN; the exception active, no longer pending. */
    npsr = (rreg(s, UC_ARM_REG_XPSR) & 0xF8000000u) | (1u << 24) | num;
    if (wreg(s, UC_ARM_REG_XPSR, npsr) < 0 || wreg(s, UC_ARM_REG_LR, excret) < 0)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot write the exception state");
    tb_v7m_set(m->pend, num, false);
    tb_v7m_set(m->act, num, true);
    s->cycles += tailchain ? CYC_TAILCHAIN : CYC_ENTRY;
    s->dual_first = false;
    s->exceptions++;
    s->itstate = 0;
    s->have_pend = false;
    s->isa = TB_ISA_THUMB;
    s->isa_known = true;
    s->act_addr = vec & ~1u;
    memset(&r, 0, sizeof r);
    r.kind = TB_REC_EXCEPTION;
    r.seq = s->count;
    r.cycle = s->cycles;
    r.u.exc.kind = TB_EXC_V7M;
    r.u.exc.num = (uint16_t)num;
    r.u.exc.isa = TB_ISA_THUMB;
    r.u.exc.cancelled = cancelled;
    r.u.exc.tailchain = tailchain;
    r.u.exc.pref_return = ret & ~1u;
    r.u.exc.vector = vec & ~1u;
    r.u.exc.cpsr = npsr;
    tb_v7m_recheck(s); /* a more urgent one may be pending already */
    /* The MPU in effect may change: HFNMIENA, and the privilege. */
    if (tb_mpu_sync(s) < 0)
        return s->err;
    return tb_sim_deliver(s, &r);
}

/* A synchronous exception (SVC, a fault) that must be taken now: when it
 * is disabled (the configurable faults) or cannot preempt, it escalates
 * to HardFault (B1.5.4 "priority escalation"); a fault that cannot even
 * be a HardFault (in the HardFault or NMI handler, or FAULTMASK) locks
 * the core up on silicon, which the model reports as an error. */
static int sync_exception(tb_sim *s, unsigned num, uint32_t ret, uint8_t it, bool cancelled,
                          const char *what)
{
    struct tb_v7m *m = s->m;
    int ep = tb_v7m_exec_prio(s, -1, false);
    bool enabled = true;
    char nb[24];

    if (num == V7M_USAGEFAULT)
        enabled = (m->shcsr_ena & SHCSR_USGFAULTENA) != 0;
    else if (num == V7M_BUSFAULT)
        enabled = (m->shcsr_ena & SHCSR_BUSFAULTENA) != 0;
    else if (num == V7M_MEMMANAGE)
        enabled = (m->shcsr_ena & SHCSR_MEMFAULTENA) != 0;
    if (num != V7M_HARDFAULT && (!enabled || group(m, tb_v7m_prio(m, num)) >= ep)) {
        m->hfsr |= HFSR_FORCED;
        num = V7M_HARDFAULT;
    }
    if (num == V7M_HARDFAULT && ep <= -1)
        return tb_sim_fail(s, TB_ERR_FAULT, "%s at 0x%08x while %s: on silicon the core "
                           "locks up (a fault at priority -1 or above)", what, ret,
                           ep == -2 ? "in the NMI handler" : "in the HardFault handler or "
                           "with FAULTMASK set");
    (void)nb;
    return enter(s, num, ret, it, cancelled, false, 0);
}

/* BKPT, a debug event (ARMv7-M C1.7): no debugger halts the core
 * (DHCSR.C_DEBUGEN reads 0), so with DEMCR.MON_EN set and the
 * DebugMonitor's priority above the execution priority it is a
 * DebugMonitor exception, else it escalates to HardFault with
 * HFSR.DEBUGEVT (C1.7.2; B1.5.4 priority escalation); DFSR.BKPT records
 * it either way.  The BKPT does not complete: the frame returns to it
 * (C1.7.2 "the return address is the BKPT instruction"; a monitor steps
 * the stacked PC past it), so its trace is cancelled as a precise
 * fault's is. */
static int bkpt(tb_sim *s)
{
    struct tb_v7m *m = s->m;
    struct tb_pend *p = &s->pend;
    int ep = tb_v7m_exec_prio(s, -1, false);
    uint32_t addr;
    uint8_t it_before;
    unsigned num = V7M_DEBUGMON;
    int rc;

    if (!s->have_pend)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "BKPT at 0x%08x outside any instruction",
                           tb_sim_insn_addr(s));
    addr = p->ce.addr;
    it_before = p->it_before;
    if ((rc = tb_sim_finish(s, p->ce.addr + p->ce.size, 0)) < 0)
        return rc;
    m->dfsr |= DFSR_BKPT;
    if (!(m->demcr & DEMCR_MON_EN) || group(m, tb_v7m_prio(m, V7M_DEBUGMON)) >= ep) {
        if (ep <= -1)
            return tb_sim_fail(s, TB_ERR_FAULT, "BKPT at 0x%08x while %s: on silicon the "
                               "core locks up (a debug event escalated at priority -1 or "
                               "above)", addr, ep == -2 ? "in the NMI handler"
                               : "in the HardFault handler or with FAULTMASK set");
        m->hfsr |= HFSR_DEBUGEVT;
        num = V7M_HARDFAULT;
    }
    return enter(s, num, addr, it_before, true, false, 0);
}

/* ------------------------------------------------------------------ */
/* The slow path: SysTick and pending exceptions between instructions. */

int tb_v7m_slow(tb_sim *s, uint32_t a)
{
    struct tb_v7m *m = s->m;
    unsigned best;
    int grp;

    systick_due(s);
    /* Never inside an IT block: an arrival there waits for its end
     * (Unicorn cannot restore IT state from a code hook, U18). */
    if (s->isa == TB_ISA_THUMB && (s->itstate & 0xF))
        return 0;
    best = tb_v7m_best_pending(s, &grp);
    if (!best || grp >= tb_v7m_exec_prio(s, -1, false))
        return 0;
    m->take = (uint16_t)best;
    s->act_addr = a;
    s->act_isa = TB_ISA_THUMB;
    tb_sim_stop_for(s, ACT_IRQ);
    return 1;
}

/* ------------------------------------------------------------------ */
/* Exception return (B1.5.8 ExceptionReturn, B1.5.12 tail-chaining). */

static int exc_return(tb_sim *s)
{
    struct tb_v7m *m = s->m;
    uint32_t pc = rreg(s, UC_ARM_REG_PC), excret = pc | 1u, at = tb_sim_insn_addr(s);
    uint32_t ipsr = rreg(s, UC_ARM_REG_IPSR) & 0x1FF, frame[8], sp, fp;
    bool to_thread, psp, faultmask_clear, preempted = false;
    unsigned next;
    int grp, rc;
    char nb[24];
    tb_exec_record r;

    if (!s->have_pend)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "exception return outside an instruction");
    if (!ipsr)
        /* Unicorn reports it in Thread mode too (U5); on silicon that is
         * a branch into the execute-never region: a fault. */
        return tb_sim_fail(s, TB_ERR_FAULT, "the instruction at 0x%08x loaded the EXC_RETURN "
                           "value 0x%08x into the PC in Thread mode (no exception to return "
                           "from: on silicon a fault)", at, excret);
    if (excret != EXC_RETURN_HANDLER && excret != EXC_RETURN_THREAD_MSP &&
        excret != EXC_RETURN_THREAD_PSP)
        return tb_sim_fail(s, (excret & 0x10) ? TB_ERR_FAULT : TB_ERR_UNSUPPORTED,
                           "exception return at 0x%08x with EXC_RETURN 0x%08x: %s", at, excret,
                           (excret & 0x10) ? "a reserved value (on silicon an INVPC "
                                             "UsageFault)"
                                           : "a floating-point frame, which the model does not "
                                             "stack (docs/cortex-m.md 1.4)");
    if (!tb_v7m_bit(m->act, ipsr))
        return tb_sim_fail(s, TB_ERR_FAULT, "exception return at 0x%08x from exception %u "
                           "(%s), which is not active (on silicon an INVPC UsageFault)", at,
                           ipsr, name_of(ipsr, nb, sizeof nb));
    to_thread = excret != EXC_RETURN_HANDLER;
    psp = excret == EXC_RETURN_THREAD_PSP;
    /* Back to Thread mode with another exception still active needs
     * CCR.NONBASETHRDENA (B1.5.8 integrity checks). */
    if (to_thread && !(m->ccr & CCR_NONBASETHRDENA)) {
        for (unsigned w = 0; w < V7M_WORDS; w++) {
            uint32_t bits = m->act[w];

            if (w == (ipsr >> 5))
                bits &= ~(1u << (ipsr & 31));
            if (bits)
                return tb_sim_fail(s, TB_ERR_FAULT, "exception return to Thread mode at "
                                   "0x%08x (EXC_RETURN 0x%08x) while exception %u is still "
                                   "active (on silicon an INVPC UsageFault)", at, excret,
                                   w * 32 + (unsigned)__builtin_ctz(bits));
        }
    }
    faultmask_clear = ipsr != V7M_NMI;
    fp = rreg(s, psp ? UC_ARM_REG_PSP : UC_ARM_REG_MSP);
    if (uc_mem_read(s->uc, fp, frame, sizeof frame) != UC_ERR_OK)
        return tb_sim_fail(s, TB_ERR_FAULT, "exception return at 0x%08x: the frame at 0x%08x "
                           "(%s) is outside memory (on silicon an unstacking BusFault)", at,
                           fp, psp ? "PSP" : "MSP");
    /* The deactivation, then: does a pending exception preempt what the
     * return goes back to?  Then it is taken at once, on the same frame
     * (tail-chaining, B1.5.12). */
    tb_v7m_set(m->act, ipsr, false);
    if (faultmask_clear && wreg(s, UC_ARM_REG_FAULTMASK, 0) < 0)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot clear FAULTMASK");
    next = tb_v7m_best_pending(s, &grp);
    {
        /* The priority of the context returned to: the active ones left
         * and the masks (the stacked IPSR is that context's own). */
        uint32_t spsr_ipsr = frame[7] & 0x1FF;
        int ep = tb_v7m_exec_prio(s, -1, faultmask_clear);
        bool armed = false;

        if ((spsr_ipsr == 0) != to_thread)
            return tb_sim_fail(s, TB_ERR_FAULT, "exception return at 0x%08x: EXC_RETURN "
                               "0x%08x returns to %s mode, the frame's IPSR is %u (on silicon "
                               "an INVPC UsageFault)", at, excret,
                               to_thread ? "Thread" : "Handler", spsr_ipsr);
        if (next && grp >= ep)
            next = 0;
        /* The scenario's unstack events arrive now, after the tail-chain
         * check: while the return unstacks.  One that can preempt the
         * context returned to cancels the return, and its handler is
         * entered on the frame still there, as by tail-chaining (late
         * arrival, B1.5.12 [U for the unstacking case]; traced as the
         * return's packet and then the exception's with Cancel, DDI0337E
         * 15.5.2).  With a tail-chain already under way they only pend. */
        for (unsigned i = 0; i < s->sc.n_events; i++)
            if (s->ev[i].armed) {
                s->ev[i].armed = false;
                tb_sim_raise_event(s, i);
                armed = true;
            }
        if (armed && !next) {
            next = tb_v7m_best_pending(s, &grp);
            if (next && grp >= ep)
                next = 0;
            preempted = next != 0;
        }
    }
    memset(&r, 0, sizeof r);
    r.kind = TB_REC_EXC_RETURN;
    r.u.eret.num = (uint16_t)ipsr;
    r.u.eret.tailchain = next != 0;
    r.u.eret.preempted = preempted;
    r.u.eret.to_thread = to_thread;
    r.u.eret.exc_return = excret;
    r.u.eret.target = frame[6] & ~1u;
    if (next) {
        /* The return instruction went on to the frame's return address,
         * which the next handler's frame still holds. */
        if ((rc = tb_sim_finish(s, frame[6] & ~1u, TB_INSN_EXC_RETURN)) < 0)
            return rc;
        r.seq = s->count;
        r.cycle = s->cycles;
        if ((rc = tb_sim_deliver(s, &r)) < 0)
            return rc;
        return enter(s, next, frame[6], 0, false, true, excret);
    }
    /* Unstack (B1.5.8 PopStack): R0-R3, R12, LR, the return address and
     * xPSR with its IT bits; SP past the frame and its aligner; the
     * stack of EXC_RETURN[2]. */
    sp = fp + 32 + ((frame[7] & (1u << 9)) && (m->ccr & CCR_STKALIGN) ? 4 : 0);
    if (wreg(s, UC_ARM_REG_CONTROL, (rreg(s, UC_ARM_REG_CONTROL) & ~2u) | (psp ? 2u : 0)) < 0 ||
        wreg(s, psp ? UC_ARM_REG_PSP : UC_ARM_REG_MSP, sp) < 0 ||
        wreg(s, UC_ARM_REG_R0, frame[0]) < 0 || wreg(s, UC_ARM_REG_R1, frame[1]) < 0 ||
        wreg(s, UC_ARM_REG_R2, frame[2]) < 0 || wreg(s, UC_ARM_REG_R3, frame[3]) < 0 ||
        wreg(s, UC_ARM_REG_R12, frame[4]) < 0 || wreg(s, UC_ARM_REG_LR, frame[5]) < 0 ||
        wreg(s, UC_ARM_REG_XPSR, (frame[7] & ~(1u << 9)) | (1u << 24)) < 0)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot unstack");
    if ((rc = tb_mpu_sync(s)) < 0)
        return rc;
    if ((rc = tb_sim_finish(s, frame[6] & ~1u, TB_INSN_EXC_RETURN)) < 0)
        return rc;
    s->cycles += CYC_RETURN;
    r.seq = s->count;
    r.cycle = s->cycles;
    if ((rc = tb_sim_deliver(s, &r)) < 0)
        return rc;
    /* Execution goes on in the returned-to context, with its ITSTATE
     * (IHI0406C A2.5.2 layout: xPSR[26:25] low bits, [15:10] high). */
    s->itstate = (uint8_t)(((frame[7] >> 25) & 3) | (((frame[7] >> 10) & 0x3F) << 2));
    s->isa = TB_ISA_THUMB;
    s->isa_known = true;
    s->act_addr = frame[6] & ~1u;
    tb_v7m_recheck(s);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Unicorn's interrupts and the run's stops. */

int tb_v7m_intr(tb_sim *s, uint32_t intno)
{
    /* 8 EXCP_EXCEPTION_EXIT: an EXC_RETURN value reached the PC (U5); 7
     * EXCP_BKPT (U14). */
    if (intno == 8) {
        tb_sim_stop_for(s, ACT_EXC_RETURN);
        return 1;
    }
    if (intno == 7) {
        tb_sim_stop_for(s, ACT_BKPT);
        return 1;
    }
    return 0;
}

/* The pending instruction's data access faulted precisely: it did not
 * complete, so its transfers are dropped as it retires (B1.5.6
 * ReturnAddress: a precise fault returns to it). */
static int retire_faulted(tb_sim *s, uint32_t seq)
{
    int rc;

    s->dat_n = 0;
    s->dat_drop = true;
    rc = tb_sim_finish(s, seq, 0);
    s->dat_drop = false;
    return rc;
}

int tb_v7m_stop(tb_sim *s, uc_err uerr, tb_sim_result *res)
{
    struct tb_v7m *m = s->m;
    struct tb_pend *p = &s->pend;
    uint32_t seq = p->ce.addr + p->ce.size;
    uint8_t it_before;
    char nb[24];
    int rc;

    (void)res;
    switch (s->action) {
    case ACT_IRQ:
        /* Between instructions: the return address is the instruction
         * that did not run (DUI0553A 2.3.7: asynchronous exceptions). */
        return enter(s, m->take, s->act_addr, 0, false, false, 0);
    case ACT_SVC:
        /* SVC completes; its return address is the next instruction
         * (U4: Unicorn reports it with the PC past it). */
        it_before = s->itstate;
        if ((rc = tb_sim_finish(s, seq, 0)) < 0)
            return rc;
        return sync_exception(s, V7M_SVCALL, seq, it_before, false, "SVC");
    case ACT_EXC_RETURN:
        return exc_return(s);
    case ACT_BKPT:
        return bkpt(s);
    case ACT_DATA_FAULT:
        if (!s->have_pend)
            return tb_sim_fail(s, TB_ERR_EMULATOR, "data fault at 0x%08x outside any "
                               "instruction", s->fault_data);
        if (tb_mpu_denies(s, s->fault_data, s->fault_type)) {
            uint32_t addr = p->ce.addr;

            /* A MemManage data access violation (B3.5: the MPU forbids
             * it; B3.2.15 MMFSR DACCVIOL, MMFAR the address): precise,
             * the instruction did not complete and is the return
             * address, as for a precise BusFault below. */
            it_before = p->it_before;
            if ((rc = retire_faulted(s, seq)) < 0)
                return rc;
            m->cfsr |= CFSR_DACCVIOL | CFSR_MMARVALID;
            m->mmfar = s->fault_data;
            return sync_exception(s, V7M_MEMMANAGE, addr, it_before, true,
                                  "a MemManage fault");
        }
        if (!s->sc.allow_data_abort)
            return tb_sim_fail(s, TB_ERR_FAULT, "bus error at 0x%08x (access to 0x%08x "
                               "outside memory; data_abort = allow in [sim] takes it as a "
                               "precise BusFault)", p->ce.addr, s->fault_data);
        {
            uint32_t addr = p->ce.addr;

            /* A precise BusFault: the instruction did not complete and
             * is the return address (B1.5.6 ReturnAddress). */
            it_before = p->it_before;
            if ((rc = retire_faulted(s, seq)) < 0)
                return rc;
            m->cfsr |= CFSR_PRECISERR | CFSR_BFARVALID;
            m->bfar = s->fault_data;
            return sync_exception(s, V7M_BUSFAULT, addr, it_before, true, "a BusFault");
        }
    case ACT_FETCH_FAULT:
        if (tb_mpu_denies(s, s->act_addr, s->fault_type)) {
            uint32_t at = s->act_addr;

            /* A MemManage instruction access violation (MMFSR IACCVIOL,
             * no MMFAR): the fetch at 'at' never became an instruction,
             * which is the return address (B1.5.6). */
            if (s->have_pend && (rc = tb_sim_finish(s, at, 0)) < 0)
                return rc;
            m->cfsr |= CFSR_IACCVIOL;
            return sync_exception(s, V7M_MEMMANAGE, at, 0, false, "a MemManage fault");
        }
        if (!s->sc.allow_prefetch_abort)
            return tb_sim_fail(s, TB_ERR_FAULT, "instruction fetch at 0x%08x outside memory "
                               "(prefetch_abort = allow in [sim] takes it as a BusFault)",
                               s->act_addr);
        {
            uint32_t at = s->act_addr;

            if (s->have_pend && (rc = tb_sim_finish(s, at, 0)) < 0)
                return rc;
            m->cfsr |= CFSR_IBUSERR;
            return sync_exception(s, V7M_BUSFAULT, at, 0, false, "an instruction fetch fault");
        }
    default:
        break;
    }
    if (s->action == ACT_NONE && uerr == UC_ERR_INSN_INVALID && s->have_pend) {
        uint32_t addr = p->ce.addr;

        if (!s->sc.allow_undef)
            return tb_sim_fail(s, TB_ERR_FAULT, "undefined instruction 0x%08x at 0x%08x "
                               "(undef = allow in [sim] takes it as a UsageFault)",
                               p->ce.opcode, addr);
        it_before = p->it_before; /* it returns to the UDF itself */
        if ((rc = tb_sim_finish(s, seq, 0)) < 0)
            return rc;
        m->cfsr |= CFSR_UNDEFINSTR;
        return sync_exception(s, V7M_USAGEFAULT, addr, it_before, true, "a UsageFault");
    }
    (void)nb;
    (void)CFSR_INVPC;
    return V7M_NOT_MINE;
}
