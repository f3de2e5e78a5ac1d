/*
 * The System Control Space of the simulated Cortex-M3/M4 (0xE000E000 -
 * 0xE000EFFF, ARMv7-M B3.2-B3.4; docs/cortex-m.md 1.2): mapped as
 * Unicorn MMIO (Unicorn has no NVIC: U12), so that a program configures
 * the NVIC, SysTick and the System Control Block as on silicon.  Every
 * register a program may use to set up exceptions is modelled; any other
 * access stops the run with an error naming the register, rather than
 * reading a value that means nothing.
 */
#include <stdio.h>
#include <string.h>

#include "v7m.h"

#define SCS_BASE 0xE000E000u

/* CPUID (B3.2.3): the Cortex-M3 r2p1 (DDI0337I) and Cortex-M4 r0p1. */
#define CPUID_M3 0x412FC231u
#define CPUID_M4 0x410FC241u

/* ICSR bits (B3.2.4). */
#define ICSR_NMIPENDSET (1u << 31)
#define ICSR_PENDSVSET (1u << 28)
#define ICSR_PENDSVCLR (1u << 27)
#define ICSR_PENDSTSET (1u << 26)
#define ICSR_PENDSTCLR (1u << 25)
#define ICSR_ISRPENDING (1u << 22)
#define ICSR_RETTOBASE (1u << 11)

/* CCR bits the model has (B3.2.8): NONBASETHRDENA, USERSETMPEND and
 * STKALIGN; BFHFNMIGN only matters with faults in those handlers, which
 * stop the run anyway.  UNALIGN_TRP and DIV_0_TRP would need traps
 * Unicorn does not make (U13): setting them is refused. */
#define CCR_MODEL (1u << 0 | 1u << 1 | 1u << 8 | 1u << 9)
#define CCR_TRAPS (1u << 3 | 1u << 4)

static bool scs_fail(tb_sim *s, uint32_t off, bool write, const char *why)
{
    tb_sim_fail(s, TB_ERR_UNSUPPORTED, "%s of System Control Space register 0x%08x at "
                "0x%08x: %s (docs/cortex-m.md 1.2 lists what is modelled)",
                write ? "write" : "read", SCS_BASE + off, tb_sim_insn_addr(s), why);
    tb_sim_stop_for(s, ACT_ERROR);
    return false;
}

/* SHCSR (B3.2.13) as read: the active and pending bits from the model,
 * the enables as written. */
static uint32_t shcsr(const struct tb_v7m *m)
{
    static const struct { uint8_t num, bit; } act[] = {
        {4, 0}, {5, 1}, {6, 3}, {11, 7}, {12, 8}, {14, 10}, {15, 11},
    };
    uint32_t v = m->shcsr_ena;

    for (size_t i = 0; i < sizeof act / sizeof act[0]; i++)
        if (tb_v7m_bit(m->act, act[i].num))
            v |= 1u << act[i].bit;
    if (tb_v7m_bit(m->pend, 6))
        v |= 1u << 12;
    if (tb_v7m_bit(m->pend, 4))
        v |= 1u << 13;
    if (tb_v7m_bit(m->pend, 5))
        v |= 1u << 14;
    if (tb_v7m_bit(m->pend, 11))
        v |= 1u << 15;
    return v;
}

static uint32_t icsr(tb_sim *s)
{
    const struct tb_v7m *m = s->m;
    uint32_t ipsr = 0, v, nact = 0;
    unsigned pend = tb_v7m_best_pending(s, NULL);

    uc_reg_read(s->uc, UC_ARM_REG_IPSR, &ipsr);
    v = (ipsr & 0x1FF) | ((uint32_t)pend << 12);
    for (unsigned w = 0; w < V7M_WORDS; w++) {
        nact += (uint32_t)__builtin_popcount(m->act[w]);
        /* ISRPENDING: an external interrupt (16 and up) is pending. */
        if (m->pend[w] & (w ? 0xFFFFFFFFu : 0xFFFF0000u))
            v |= ICSR_ISRPENDING;
    }
    if (nact <= 1)
        v |= ICSR_RETTOBASE;
    if (tb_v7m_bit(m->pend, 2))
        v |= ICSR_NMIPENDSET;
    if (tb_v7m_bit(m->pend, 14))
        v |= ICSR_PENDSVSET;
    if (tb_v7m_bit(m->pend, 15))
        v |= ICSR_PENDSTSET;
    return v;
}

/* NVIC_ISER/ICER/ISPR/ICPR/IABR word w holds interrupts 32w..32w+31,
 * exceptions 32w+16.. (B3.4): the model's bit arrays are indexed by
 * exception number. */
static uint32_t nvic_word(const uint32_t *v, unsigned w)
{
    uint32_t r = 0;

    for (unsigned b = 0; b < 32; b++)
        if (tb_v7m_bit(v, 16 + 32 * w + b))
            r |= 1u << b;
    return r;
}

static void nvic_bits(uint32_t *v, unsigned w, uint32_t bits, bool on)
{
    for (unsigned b = 0; b < 32; b++)
        if ((bits >> b) & 1)
            tb_v7m_set(v, 16 + 32 * w + b, on); /* past IRQ239: ignored */
}

/* The word register at off (word aligned); false after scs_fail. */
static bool reg_read(tb_sim *s, uint32_t off, uint32_t *out)
{
    struct tb_v7m *m = s->m;
    uint32_t v = 0;

    if (off >= 0x100 && off < 0x120) {
        v = nvic_word(m->ena, (off - 0x100) / 4);
    } else if (off >= 0x180 && off < 0x1A0) {
        v = nvic_word(m->ena, (off - 0x180) / 4);
    } else if (off >= 0x200 && off < 0x220) {
        v = nvic_word(m->pend, (off - 0x200) / 4);
    } else if (off >= 0x280 && off < 0x2A0) {
        v = nvic_word(m->pend, (off - 0x280) / 4);
    } else if (off >= 0x300 && off < 0x320) {
        v = nvic_word(m->act, (off - 0x300) / 4);
    } else if (off >= 0x400 && off < 0x400 + V7M_NIRQ) {
        memcpy(&v, &m->ipr[off - 0x400], 4);
    } else if (off >= 0xD18 && off < 0xD24) {
        memcpy(&v, &m->shpr[4 + off - 0xD18], 4);
    } else {
        switch (off) {
        case 0x004: v = (V7M_NIRQ + 31) / 32 - 1; break; /* ICTR INTLINESNUM */
        case 0x008: v = m->actlr; break;
        case 0x010:
            v = m->syst_csr;
            m->syst_csr &= ~(1u << 16); /* COUNTFLAG clears on read */
            break;
        case 0x014: v = m->syst_rvr; break;
        case 0x018: v = tb_v7m_syst_cvr(s); break;
        case 0x01C: v = 0xC0000000u; break; /* SYST_CALIB: NOREF, SKEW, TENMS 0 */
        case 0xD00: v = m->m4 ? CPUID_M4 : CPUID_M3; break;
        case 0xD04: v = icsr(s); break;
        case 0xD08: v = m->vtor; break;
        case 0xD0C: v = 0xFA050000u | (m->prigroup << 8); break; /* VECTKEYSTAT */
        case 0xD10: v = 0; break; /* SCR: nothing set (writes refused below) */
        case 0xD14: v = m->ccr; break;
        case 0xD24: v = shcsr(m); break;
        case 0xD28: v = m->cfsr; break;
        case 0xD2C: v = m->hfsr; break;
        case 0xD30: v = m->dfsr; break; /* DFSR: BKPT (C1.6.1) */
        case 0xD34: v = m->mmfar; break;
        case 0xD38: v = m->bfar; break;
        case 0xD3C: v = 0; break; /* AFSR */
        case 0xD88: v = m->cpacr; break;
        case 0xD90: case 0xD94: case 0xD98: case 0xD9C: case 0xDA0: case 0xDA4:
        case 0xDA8: case 0xDAC: case 0xDB0: case 0xDB4: case 0xDB8:
            tb_mpu_read(s, off, &v); /* the MPU (mpu.c) */
            break;
        case 0xDF0: v = 0; break; /* DHCSR: no debugger attached */
        case 0xDFC:
            /* MON_PEND reads the DebugMonitor's pending state (C1.6.5). */
            v = (m->demcr & ~DEMCR_MON_PEND) |
                (tb_v7m_bit(m->pend, V7M_DEBUGMON) ? DEMCR_MON_PEND : 0);
            break;
        case 0xF34:
            if (!m->m4)
                return scs_fail(s, off, false, "FPCCR exists on the Cortex-M4 only");
            v = m->fpccr;
            break;
        case 0xF38:
            if (!m->m4)
                return scs_fail(s, off, false, "FPCAR exists on the Cortex-M4 only");
            v = m->fpcar;
            break;
        default:
            return scs_fail(s, off, false, "not modelled");
        }
    }
    *out = v;
    return true;
}

/* ICSR writes (B3.2.4): set-pending NMI, PendSV, SysTick; clear PendSV
 * and SysTick. */
static void icsr_write(tb_sim *s, uint32_t v)
{
    if (v & ICSR_NMIPENDSET)
        tb_v7m_pend(s, 2);
    if (v & ICSR_PENDSVSET)
        tb_v7m_pend(s, 14);
    else if (v & ICSR_PENDSVCLR)
        tb_v7m_set(s->m->pend, 14, false);
    if (v & ICSR_PENDSTSET)
        tb_v7m_pend(s, 15);
    else if (v & ICSR_PENDSTCLR)
        tb_v7m_set(s->m->pend, 15, false);
}

/* Writes the bytes of mask at word register off: value holds them in
 * place.  Set/clear registers take the written bits only, the others
 * merge into the old value. */
static bool reg_write(tb_sim *s, uint32_t off, uint32_t value, uint32_t mask)
{
    struct tb_v7m *m = s->m;
    uint32_t v = value & mask, old;

    if (off >= 0x100 && off < 0x120) {
        nvic_bits(m->ena, (off - 0x100) / 4, v, true);
        tb_v7m_recheck(s);
        return true;
    }
    if (off >= 0x180 && off < 0x1A0) {
        nvic_bits(m->ena, (off - 0x180) / 4, v, false);
        return true;
    }
    if (off >= 0x200 && off < 0x220) {
        nvic_bits(m->pend, (off - 0x200) / 4, v, true);
        tb_v7m_recheck(s);
        return true;
    }
    if (off >= 0x280 && off < 0x2A0) {
        nvic_bits(m->pend, (off - 0x280) / 4, v, false);
        return true;
    }
    if (off >= 0x300 && off < 0x320)
        return true; /* IABR is read-only */
    if (off >= 0x400 && off < 0x400 + V7M_NIRQ) {
        memcpy(&old, &m->ipr[off - 0x400], 4);
        old = (old & ~mask) | v;
        memcpy(&m->ipr[off - 0x400], &old, 4);
        tb_v7m_recheck(s);
        return true;
    }
    if (off >= 0xD18 && off < 0xD24) {
        memcpy(&old, &m->shpr[4 + off - 0xD18], 4);
        old = (old & ~mask) | v;
        memcpy(&m->shpr[4 + off - 0xD18], &old, 4);
        tb_v7m_recheck(s);
        return true;
    }
    switch (off) {
    case 0x004: return true; /* ICTR: read-only */
    case 0x008: m->actlr = (m->actlr & ~mask) | v; return true;
    case 0x010:
    case 0x014:
    case 0x018:
        if (mask != 0xFFFFFFFFu)
            return scs_fail(s, off, true, "SysTick registers take word writes here");
        tb_v7m_syst_write(s, off, value);
        tb_v7m_recheck(s);
        return true;
    case 0x01C:
    case 0xD00:
        return true; /* read-only */
    case 0xD04:
        icsr_write(s, v);
        return true;
    case 0xD08:
        /* TBLOFF, bits [29:7] (B3.2.5; the table must be aligned to its
         * size, which the model does not check). */
        m->vtor = ((m->vtor & ~mask) | v) & 0x3FFFFF80u;
        return true;
    case 0xD0C:
        if (mask != 0xFFFFFFFFu || (value >> 16) != 0x05FA)
            return true; /* without VECTKEY the write is ignored (B3.2.6) */
        if (value & 4)
            return scs_fail(s, off, true, "AIRCR.SYSRESETREQ asks for a system reset, which "
                            "the simulator does not model");
        m->prigroup = (value >> 8) & 7;
        tb_v7m_recheck(s);
        return true;
    case 0xD10:
        if (v & 0x16)
            return scs_fail(s, off, true, "SCR: SLEEPONEXIT, SLEEPDEEP and SEVONPEND are not "
                            "modelled");
        return true;
    case 0xD14:
        old = (m->ccr & ~mask) | v;
        if (old & CCR_TRAPS)
            return scs_fail(s, off, true, "CCR.UNALIGN_TRP and DIV_0_TRP would need traps "
                            "that Unicorn does not make");
        m->ccr = old & CCR_MODEL;
        return true;
    case 0xD24:
        /* The enables; the active and pending bits as written are not
         * modelled (an RTOS context switch may write them). */
        old = (shcsr(m) & ~mask) | v;
        if ((old ^ shcsr(m)) & 0xFFFFu)
            return scs_fail(s, off, true, "writing SHCSR's active or pending bits is not "
                            "modelled");
        m->shcsr_ena = old & 0x70000u;
        return true;
    case 0xD28: m->cfsr &= ~v; return true; /* write one to clear */
    case 0xD2C: m->hfsr &= ~v; return true;
    case 0xD30: m->dfsr &= ~v; return true; /* write one to clear (C1.6.1) */
    case 0xD3C:
        return true;
    case 0xD34: m->mmfar = (m->mmfar & ~mask) | v; return true;
    case 0xD38: m->bfar = (m->bfar & ~mask) | v; return true;
    case 0xD88:
        /* CPACR: kept, but Unicorn's floating point is not switched by
         * it; FP frames are refused at entry (docs/cortex-m.md 1.4). */
        m->cpacr = (m->cpacr & ~mask) | v;
        return true;
    case 0xD90:
        return true; /* MPU_TYPE: read-only */
    case 0xD94: case 0xD98: case 0xD9C: case 0xDA0: case 0xDA4: case 0xDA8:
    case 0xDAC: case 0xDB0: case 0xDB4: case 0xDB8:
        return tb_mpu_write(s, off, value, mask); /* the MPU (mpu.c) */
    case 0xDFC:
        /* DEMCR (ARMv7-M C1.6.5): MON_EN enables the DebugMonitor
         * exception for BKPT (v7m.c); MON_PEND sets or clears its pending
         * state, and pends it whatever MON_EN says (a debugger's way to
         * wake the monitor).  MON_STEP would need a step debug event
         * after every instruction, which the model does not make; the
         * vector-catch and TRCENA bits are kept (no halting debugger). */
        old = (m->demcr & ~mask) | v;
        if (old & DEMCR_MON_STEP)
            return scs_fail(s, off, true, "DEMCR.MON_STEP (DebugMonitor stepping) is not "
                            "modelled");
        if (mask & DEMCR_MON_PEND) {
            if (old & DEMCR_MON_PEND)
                tb_v7m_pend(s, V7M_DEBUGMON);
            else
                tb_v7m_set(m->pend, V7M_DEBUGMON, false);
        }
        m->demcr = old & ~DEMCR_MON_PEND;
        tb_v7m_recheck(s);
        return true;
    case 0xF00:
        /* STIR: software-triggered interrupt INTID (B3.4.7). */
        if ((value & 0x1FF) >= V7M_NIRQ)
            return scs_fail(s, off, true, "STIR names an interrupt the model does not have");
        tb_v7m_pend(s, 16 + (value & 0x1FF));
        return true;
    case 0xF34:
        if (!m->m4)
            return scs_fail(s, off, true, "FPCCR exists on the Cortex-M4 only");
        m->fpccr = (m->fpccr & ~mask) | v;
        return true;
    case 0xF38:
        if (!m->m4)
            return scs_fail(s, off, true, "FPCAR exists on the Cortex-M4 only");
        m->fpcar = (m->fpcar & ~mask) | v;
        return true;
    default:
        return scs_fail(s, off, true, "not modelled");
    }
}

static uint64_t mmio_read(uc_engine *uc, uint64_t offset, unsigned size, void *user)
{
    tb_sim *s = user;
    uint32_t off = (uint32_t)offset, v = 0;

    (void)uc;
    if (s->action != ACT_NONE)
        return 0;
    if (size > 4 || (off & (size - 1))) {
        scs_fail(s, off, false, "an unaligned or wider than 32-bit access");
        return 0;
    }
    if (!reg_read(s, off & ~3u, &v))
        return 0;
    v >>= 8 * (off & 3);
    return size == 4 ? v : v & ((1u << (8 * size)) - 1u);
}

static void mmio_write(uc_engine *uc, uint64_t offset, unsigned size, uint64_t value, void *user)
{
    tb_sim *s = user;
    uint32_t off = (uint32_t)offset, sh, mask;

    (void)uc;
    if (s->action != ACT_NONE)
        return;
    if (size > 4 || (off & (size - 1))) {
        scs_fail(s, off, true, "an unaligned or wider than 32-bit access");
        return;
    }
    sh = 8 * (off & 3);
    mask = (size == 4 ? 0xFFFFFFFFu : ((1u << (8 * size)) - 1u)) << sh;
    reg_write(s, off & ~3u, (uint32_t)value << sh, mask);
}

int tb_scs_map(tb_sim *s)
{
    if (uc_mmio_map(s->uc, SCS_BASE, 0x1000, mmio_read, s, mmio_write, s) != UC_ERR_OK)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot map the System Control Space at "
                           "0x%08x (does the program load something there?)", SCS_BASE);
    return 0;
}

/* ------------------------------------------------------------------ */
/* SysTick (B3.3): one count per instruction executed (docs/cortex-m.md
 * 1.2), so that its period is exact in the truth. */

/* The number of the instruction running now, as the slow path counts
 * between instructions: the block path delivers its records late (at a
 * stop or the block's end, block.c), so s->count lags there by the
 * instructions of the block that ran since (tb_sim_insn_addr's). */
static uint64_t count_now(const tb_sim *s)
{
    if (!s->have_pend && s->blk && s->pos > s->done)
        return s->count + (s->pos - 1u - s->done);
    return s->count;
}

uint32_t tb_v7m_syst_cvr(const tb_sim *s)
{
    const struct tb_v7m *m = s->m;
    const uint64_t count = count_now(s);

    if (!(m->syst_csr & 1) || m->syst_next == UINT64_MAX)
        return m->syst_cvr;
    /* CVR reaches 0 at count syst_next; one count earlier it was 1. */
    return count >= m->syst_next ? 0 : (uint32_t)(m->syst_next - count);
}

void tb_v7m_syst_write(tb_sim *s, unsigned reg, uint32_t v)
{
    struct tb_v7m *m = s->m;
    uint32_t cvr = tb_v7m_syst_cvr(s);
    bool was_on = m->syst_csr & 1;
    const uint64_t count = count_now(s);

    switch (reg) {
    case 0x010:
        m->syst_csr = (m->syst_csr & (1u << 16)) | (v & 7);
        if ((v & 1) && !was_on) {
            /* Counting starts from CVR; a CVR of 0 reloads RVR at the
             * first count (B3.3.1). */
            m->syst_next = cvr ? count + cvr
                         : m->syst_rvr ? count + 1 + m->syst_rvr : UINT64_MAX;
        } else if (!(v & 1) && was_on) {
            m->syst_cvr = cvr;
            m->syst_next = UINT64_MAX;
        }
        break;
    case 0x014:
        m->syst_rvr = v & 0xFFFFFFu;
        break;
    case 0x018:
        /* Any write clears CVR and COUNTFLAG; the next count reloads. */
        m->syst_csr &= ~(1u << 16);
        m->syst_cvr = 0;
        if (m->syst_csr & 1)
            m->syst_next = m->syst_rvr ? count + 1 + m->syst_rvr : UINT64_MAX;
        break;
    default:
        break;
    }
}
