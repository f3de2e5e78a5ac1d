/*
 * The MPU of the simulated Cortex-M3/M4 (ARMv7-M B3.5, the Protected
 * Memory System Architecture; docs/cortex-m.md 1.2): eight regions
 * (MPU_TYPE.DREGION, DDI0337G 9.1), MPU_CTRL, MPU_RNR, MPU_RBAR and
 * MPU_RASR with their aliases.  Unicorn 2.0.1 has no MPU of its own for
 * an M core (the SCS is ours, U12), so the regions in effect are turned
 * into Unicorn's page protections: an access they forbid stops the
 * instruction as an unmapped one would (the memory hooks of hooks.c),
 * and v7m.c takes it as a MemManage fault (tb_mpu_denies says which).
 * Page protections need regions that cover whole pages: a region, or a
 * disabled subregion, smaller than Unicorn's page is refused with its
 * size, as are the encodings B3.5 calls UNPREDICTABLE.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "v7m.h"

/* MPU_CTRL (B3.5.6). */
#define CTRL_ENABLE (1u << 0)
#define CTRL_HFNMIENA (1u << 1)
#define CTRL_PRIVDEFENA (1u << 2)
/* MPU_RBAR (B3.5.9): VALID selects the region in REGION. */
#define RBAR_VALID (1u << 4)
/* MPU_RASR (B3.5.10). */
#define RASR_ENABLE 1u
#define RASR_SIZE(v) (((v) >> 1) & 0x1F)
#define RASR_SRD(v) (((v) >> 8) & 0xFF)
#define RASR_AP(v) (((v) >> 24) & 7)
#define RASR_XN (1u << 28)

/* The Private Peripheral Bus and the system region above it always use
 * the default memory map (B3.5.1), as do the model's own reads of the
 * vector table and the frames (stacking is not checked: docs 1.4). */
#define PPB_BASE 0xE0000000u

static uint32_t page_size(tb_sim *s)
{
    uint32_t ps = 0;

    /* uc_ctl_get_page_size() with its control word built unsigned:
     * UC_CTL_READ shifts an int 2 by 30 (undefined in C). */
    const uc_control_type ctl = (uc_control_type)((uint32_t)UC_CTL_UC_PAGE_SIZE | (1u << 26) |
                                                  ((uint32_t)UC_CTL_IO_READ << 30));

    if (uc_ctl(s->uc, ctl, &ps) != UC_ERR_OK || !ps)
        ps = 4096;
    return ps;
}

static bool fail(tb_sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static bool fail(tb_sim *s, const char *fmt, ...)
{
    char why[200];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    tb_sim_fail(s, TB_ERR_UNSUPPORTED, "MPU at 0x%08x: %s (docs/cortex-m.md 1.2)",
                tb_sim_insn_addr(s), why);
    tb_sim_stop_for(s, ACT_ERROR);
    return false;
}

/* Privileged: Handler mode, or Thread mode with CONTROL.nPRIV clear
 * (B1.4.4). */
static bool privileged(tb_sim *s)
{
    uint32_t ipsr = 0, control = 0;

    uc_reg_read(s->uc, UC_ARM_REG_IPSR, &ipsr);
    uc_reg_read(s->uc, UC_ARM_REG_CONTROL, &control);
    return (ipsr & 0x1FF) || !(control & 1);
}

/* The MPU checks accesses now: ENABLE, and HFNMIENA or an execution
 * priority of 0 or more (B3.5.6: with HFNMIENA clear the MPU is off in
 * the HardFault and NMI handlers and with FAULTMASK set). */
static bool in_effect(tb_sim *s)
{
    const struct tb_v7m *m = s->m;

    return (m->mpu_ctrl & CTRL_ENABLE) &&
           ((m->mpu_ctrl & CTRL_HFNMIENA) || tb_v7m_exec_prio(s, -1, false) >= 0);
}

/* The UC_PROT_* an access at a has by the regions (B3.5.4: the highest
 * numbered enabled region holding a in one of its enabled subregions
 * decides; none: the default map for privileged code with PRIVDEFENA,
 * else a fault).  AP (B3.5.10 Table B3-15): 000 no access; 001 RW
 * privileged only; 010 RW privileged, RO unprivileged; 011 RW; 101 RO
 * privileged only; 110 and 111 RO.  XN forbids fetches; a fetch needs
 * read access too. */
static uint32_t perms_at(const struct tb_v7m *m, uint32_t a, bool priv)
{
    for (int i = V7M_MPU_REGIONS - 1; i >= 0; i--) {
        uint32_t rasr = m->mpu_rasr[i], sz, base, ap, p = 0;

        if (!(rasr & RASR_ENABLE))
            continue;
        sz = RASR_SIZE(rasr);
        base = m->mpu_rbar[i] & ~0x1Fu;
        if ((uint64_t)a - base >= (2ull << sz))
            continue;
        if (sz >= 7 && ((RASR_SRD(rasr) >> ((a - base) >> (sz - 2))) & 1))
            continue; /* a disabled subregion: the next region down */
        ap = RASR_AP(rasr);
        switch (ap) {
        case 1: p = priv ? UC_PROT_READ | UC_PROT_WRITE : 0; break;
        case 2: p = UC_PROT_READ | (priv ? UC_PROT_WRITE : 0); break;
        case 3: p = UC_PROT_READ | UC_PROT_WRITE; break;
        case 5: p = priv ? UC_PROT_READ : 0; break;
        case 6:
        case 7: p = UC_PROT_READ; break;
        default: p = 0; break;
        }
        if ((p & UC_PROT_READ) && !(rasr & RASR_XN))
            p |= UC_PROT_EXEC;
        return p;
    }
    return priv && (m->mpu_ctrl & CTRL_PRIVDEFENA) ? UC_PROT_ALL : UC_PROT_NONE;
}

/* The regions as page protections can show them, else a refusal. */
static bool check_regions(tb_sim *s)
{
    const struct tb_v7m *m = s->m;
    uint32_t ps = page_size(s);

    if ((m->mpu_ctrl & (CTRL_ENABLE | CTRL_HFNMIENA)) == CTRL_HFNMIENA)
        return fail(s, "MPU_CTRL.HFNMIENA set with ENABLE clear is UNPREDICTABLE (B3.5.6)");
    for (unsigned i = 0; i < V7M_MPU_REGIONS; i++) {
        uint32_t rasr = m->mpu_rasr[i], sz = RASR_SIZE(rasr);
        uint64_t size = 2ull << sz;

        if (!(rasr & RASR_ENABLE))
            continue;
        if (sz < 4)
            return fail(s, "region %u: SIZE %u (below 4, 32 bytes) is UNPREDICTABLE "
                           "(B3.5.10)", i, sz);
        if (m->mpu_rbar[i] & ~0x1Fu & (uint32_t)(size - 1))
            return fail(s, "region %u: base 0x%08x is not aligned to its size %llu "
                           "(B3.5.9)", i, m->mpu_rbar[i] & ~0x1Fu, (unsigned long long)size);
        if (RASR_AP(rasr) == 4)
            return fail(s, "region %u: AP 0b100 is reserved (B3.5.10 Table B3-15)", i);
        if (sz < 7 && RASR_SRD(rasr))
            return fail(s, "region %u: subregions disabled in a region of %llu bytes "
                           "(below 256: UNPREDICTABLE, B3.5.10)", i, (unsigned long long)size);
        if (size < ps || (RASR_SRD(rasr) && size / 8 < ps))
            return fail(s, "region %u: %s of %llu bytes, smaller than the emulator's "
                           "page of %u bytes, which its protections need", i,
                        RASR_SRD(rasr) ? "a subregion" : "a size",
                        (unsigned long long)(RASR_SRD(rasr) ? size / 8 : size), ps);
    }
    return true;
}

/* Sets the protections of every mapped page below the PPB: runs of
 * equal permissions at once. */
static int apply(tb_sim *s, bool on, bool priv)
{
    struct tb_v7m *m = s->m;
    uc_mem_region *rg = NULL;
    uint32_t n = 0, ps = page_size(s);

    if (uc_mem_regions(s->uc, &rg, &n) != UC_ERR_OK)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "MPU: cannot list the emulator's memory");
    for (uint32_t i = 0; i < n; i++) {
        uint64_t a = rg[i].begin, end = rg[i].end + 1;

        if (a >= PPB_BASE)
            continue;
        if (end > PPB_BASE)
            end = PPB_BASE;
        while (a < end) {
            uint32_t p = on ? perms_at(m, (uint32_t)a, priv) : UC_PROT_ALL;
            uint64_t b = a + ps;

            while (b < end && (on ? perms_at(m, (uint32_t)b, priv) : UC_PROT_ALL) == p)
                b += ps;
            /* Code translated while it could run is kept by Unicorn
             * whatever the page's protection says now: dropped, so that
             * the next fetch there is checked (XN, no access). */
            if (!(p & UC_PROT_EXEC) && uc_ctl_remove_cache(s->uc, a, b) != UC_ERR_OK) {
                uc_free(rg);
                return tb_sim_fail(s, TB_ERR_EMULATOR, "MPU: cannot drop the code "
                                   "translated at 0x%08llx..0x%08llx",
                                   (unsigned long long)a, (unsigned long long)(b - 1));
            }
            if (uc_mem_protect(s->uc, a, (size_t)(b - a), p) != UC_ERR_OK) {
                uc_free(rg);
                return tb_sim_fail(s, TB_ERR_EMULATOR, "MPU: cannot set the protection "
                                   "of 0x%08llx..0x%08llx", (unsigned long long)a,
                                   (unsigned long long)(b - 1));
            }
            a = b;
        }
    }
    uc_free(rg);
    m->mpu_applied = on;
    return 0;
}

int tb_mpu_sync(tb_sim *s)
{
    struct tb_v7m *m = s->m;
    bool on = in_effect(s), priv = on && privileged(s);
    int key = on ? 1 + priv : 0;

    if (!m->mpu_dirty && key == m->mpu_key)
        return 0;
    if (!on && !m->mpu_applied) {
        m->mpu_key = 0;
        m->mpu_dirty = false;
        return 0;
    }
    if (on && !check_regions(s))
        return s->err;
    m->mpu_key = key;
    m->mpu_dirty = false;
    return apply(s, on, priv);
}

bool tb_mpu_denies(tb_sim *s, uint32_t addr, uc_mem_type type)
{
    uint32_t p, need;

    if (!in_effect(s) || addr >= PPB_BASE)
        return false;
    need = type == UC_MEM_FETCH_PROT || type == UC_MEM_FETCH_UNMAPPED || type == UC_MEM_FETCH
               ? UC_PROT_EXEC
           : type == UC_MEM_WRITE_PROT || type == UC_MEM_WRITE_UNMAPPED || type == UC_MEM_WRITE
               ? UC_PROT_WRITE
               : UC_PROT_READ;
    p = perms_at(s->m, addr, privileged(s));
    return !(p & need);
}

bool tb_mpu_read(tb_sim *s, uint32_t off, uint32_t *v)
{
    const struct tb_v7m *m = s->m;

    switch (off) {
    case 0xD90: *v = V7M_MPU_REGIONS << 8; return true; /* MPU_TYPE: DREGION, unified */
    case 0xD94: *v = m->mpu_ctrl; return true;
    case 0xD98: *v = m->mpu_rnr; return true;
    case 0xD9C: case 0xDA4: case 0xDAC: case 0xDB4:
        /* RBAR and its aliases: the base of region RNR, REGION reads it. */
        *v = (m->mpu_rbar[m->mpu_rnr] & ~0x1Fu) | m->mpu_rnr;
        return true;
    case 0xDA0: case 0xDA8: case 0xDB0: case 0xDB8:
        *v = m->mpu_rasr[m->mpu_rnr];
        return true;
    default:
        return false;
    }
}

bool tb_mpu_write(tb_sim *s, uint32_t off, uint32_t value, uint32_t mask)
{
    struct tb_v7m *m = s->m;
    uint32_t v, r;

    if (mask != 0xFFFFFFFFu)
        return fail(s, "register 0x%08x takes word writes here", 0xE000E000u + off);
    switch (off) {
    case 0xD94:
        m->mpu_ctrl = value & 7;
        break;
    case 0xD98:
        if ((value & 0xFF) >= V7M_MPU_REGIONS)
            return fail(s, "MPU_RNR %u names no region (MPU_TYPE.DREGION is 8)", value & 0xFF);
        m->mpu_rnr = value & 0xFF;
        return true; /* selects only */
    case 0xD9C: case 0xDA4: case 0xDAC: case 0xDB4:
        /* VALID: the region is REGION[3:0], which RNR becomes (B3.5.9). */
        if (value & RBAR_VALID) {
            if ((value & 0xF) >= V7M_MPU_REGIONS)
                return fail(s, "MPU_RBAR.REGION %u names no region (DREGION is 8)",
                            value & 0xF);
            m->mpu_rnr = value & 0xF;
        }
        r = m->mpu_rnr;
        m->mpu_rbar[r] = value & ~0x1Fu;
        break;
    case 0xDA0: case 0xDA8: case 0xDB0: case 0xDB8:
        v = value & (RASR_XN | 0x073FFF3Fu);
        m->mpu_rasr[m->mpu_rnr] = v;
        break;
    default:
        return false;
    }
    m->mpu_dirty = true;
    return tb_mpu_sync(s) >= 0;
}
