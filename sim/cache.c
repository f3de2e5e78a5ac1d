/*
 * The simulator's per-address decode cache: the facts of one instruction
 * the run needs (size, waypoint class, target, what it touches), from the
 * classifier on a miss, so the hot path never calls Capstone.
 */
#include "sim_internal.h"

/* ------------------------------------------------------------------ */
/* Decode cache. */

/* Loads and stores, for the cycle model's wait states. */
static bool is_mem(uint32_t op, unsigned size, uint8_t isa)
{
    if (isa == TB_ISA_ARM) {
        if ((op >> 28) == 15)
            return false;
        return (op & 0x0C000000u) == 0x04000000u ||
               (op & 0x0E000000u) == 0x08000000u ||
               ((op & 0x0E000090u) == 0x00000090u && (op & 0x60u));
    }
    if (size == 4) {
        unsigned hw1 = op >> 16;

        return (hw1 & 0xFE00u) == 0xF800u || (hw1 & 0xFE00u) == 0xE800u;
    }
    return (op & 0xF800u) == 0x4800u || (op & 0xF000u) == 0x5000u ||
           (op & 0xE000u) == 0x6000u || (op & 0xE000u) == 0x8000u ||
           (op & 0xF600u) == 0xB400u || (op & 0xF000u) == 0xC000u;
}

/* Store-exclusives: ARM STREX/STREXD/STREXB/STREXH (A8.8.212-A8.8.215,
 * bits 22:21 the size), T32 STREX (T1) and STREXB/H/D (T1). */
static bool is_strex(uint32_t op, unsigned size, uint8_t isa)
{
    if (isa == TB_ISA_ARM)
        return (op >> 28) != 15 && (op & 0x0F900FF0u) == 0x01800F90u;
    return size == 4 && ((op & 0xFFF00000u) == 0xE8400000u ||
                         ((op & 0xFFF000C0u) == 0xE8C00040u && (op & 0x30u) != 0x20u));
}

static bool is_special_addr(const tb_sim *s, uint32_t a)
{
    if (s->has_exit && a == s->exit_addr)
        return true;
    for (unsigned i = 0; i < s->sc.n_events; i++)
        if (s->ev[i].has_addr && s->ev[i].addr == a)
            return true;
    return false;
}

tb_centry *tb_sim_lookup(tb_sim *s, uint32_t a, uint8_t isa)
{
    tb_centry *e = &s->cache[(a >> 1) & (TB_CACHE_SIZE - 1)];
    uint8_t buf[4];
    size_t avail = 4;
    tb_insn in;
    uint16_t info = 0;

    if (e->valid == 1 + isa && e->addr == a)
        return e;
    if (uc_mem_read(s->uc, a, buf, 4) != UC_ERR_OK) {
        avail = 2;
        if (uc_mem_read(s->uc, a, buf, 2) != UC_ERR_OK)
            return NULL;
    }
    if (tb_classifier_decode(s->cls, buf, avail, a, (tb_isa)isa, &in) < 0)
        return NULL;
    if (in.link)
        info |= CE_LINK;
    if (in.has_target) {
        info |= CE_TARGET;
        if (in.target_isa == TB_ISA_THUMB)
            info |= CE_TTHUMB;
    }
    if (in.exc_return)
        info |= CE_EXC_RET;
    if (in.is_it)
        info |= CE_IT;
    if (in.is_wfi)
        info |= CE_WFI;
    if (is_mem(in.opcode, in.size, isa))
        info |= CE_MEM;
    if (s->data && is_strex(in.opcode, in.size, isa))
        info |= CE_EXCL;
    if (isa == TB_ISA_ARM ? (in.opcode & 0x0FFF0FFFu) == 0x0E0D0F30u
                          : (in.size == 4 && (in.opcode & 0xFFFF0FFFu) == 0xEE0D0F30u))
        info |= CE_CTXID; /* MCR p15,0,Rt,c13,c0,1: CONTEXTIDR (B4.1.36) */
    /* Where the security state can change (Secure iff Monitor mode or
     * SCR.NS = 0, IHI0406C B1.5.1): an exception return, an MCR to SCR
     * (p15,0,Rt,c1,c1,0, B4.1.129).  Only these re-read it. */
    if (s->sc.secure &&
        (in.exc_return ||
         (isa == TB_ISA_ARM ? (in.opcode & 0x0FFF0FFFu) == 0x0E010F11u
                            : (in.size == 4 && (in.opcode & 0xFFFF0FFFu) == 0xEE010F11u))))
        info |= CE_SECST;
    if (isa == TB_ISA_THUMB && in.size == 2 && (in.opcode & 0xF500u) == 0xB100u)
        info |= CE_CBZ;
    if (isa == TB_ISA_ARM && in.cond < 14 && in.wp_class != TB_WP_DIRECT &&
        in.wp_class != TB_WP_DIRECT_LINK)
        info |= CE_ARMCOND;
    if (is_special_addr(s, a))
        info |= CE_SPECIAL;
    e->addr = a;
    e->opcode = in.opcode;
    e->target = in.target;
    e->info = info;
    e->size = in.size;
    e->wp = in.wp_class;
    e->cond = in.cond;
    e->it = in.is_it ? (uint8_t)(in.opcode & 0xFF) : 0;
    e->valid = (uint8_t)(1 + isa);
    return e;
}
