/*
 * Exceptions: what the run does when the emulator stopped (tb_sim_handle_stop),
 * and the A/R-profile exception entry.  The v7-M model has its own (v7m.c).
 */
#include <string.h>

#include "sim_internal.h"
#include "v7m.h"

/* ------------------------------------------------------------------ */
/* Exception entry (IHI0406C B1.8.3 modes, B1.8.1 vectors, B1.9 entry). */

static int enter_exception(tb_sim *s, tb_exc_kind kind, uint32_t pref,
                           uint32_t lr, bool cancelled, uint8_t it_before)
{
    uint32_t cpsr = sim_read_cpsr(s), sctlr = 0, vbar = 0, ncpsr, vec, mode, off;
    tb_exec_record r;

    switch (kind) {
    case TB_EXC_UNDEF: mode = 0x1B; off = 0x04; break;
    case TB_EXC_SVC: mode = 0x13; off = 0x08; break;
    case TB_EXC_PREFETCH_ABORT: mode = 0x17; off = 0x0C; break;
    case TB_EXC_DATA_ABORT: mode = 0x17; off = 0x10; break;
    case TB_EXC_IRQ: mode = 0x12; off = 0x18; break;
    case TB_EXC_FIQ: mode = 0x11; off = 0x1C; break;
    case TB_EXC_SMC: mode = 0x16; off = 0x08; break;
    default: return TB_ERR_INVAL;
    }
    if (sim_cp15(s, false, 1, 0, 0, 0, &sctlr) < 0 || sim_cp15(s, false, 12, 0, 0, 0, &vbar) < 0)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot read SCTLR/VBAR");
    if (kind == TB_EXC_SMC) {
        /* Monitor entry (IHI0406C B1.9.9): SCR.NS := 0 first, through the
         * host (Unicorn refuses a CPSR write to Monitor mode while NS is
         * 1, docs/ns-hyp.md); the vector is MVBAR + 8, whatever SCTLR.V;
         * A, I and F are all masked. */
        if (tb_sim_scr_secure(s) < 0 || sim_cp15(s, false, 12, 0, 0, 1, &vbar) < 0)
            return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot write SCR/read MVBAR");
    }
    /* The SPSR keeps the IT state we tracked (the CPSR copy is stale),
     * and the instruction set of the interrupted code as we track it:
     * Unicorn's CPSR.T can read 1 in ARM code after an interworking
     * branch from Thumb that was conditional in an IT block (probed,
     * issue 29: a BLXLS to ARM, an IRQ before its target ran; a POPLS
     * {pc} to ARM, a data abort later), so the handler's exception return
     * resumed ARM code in Thumb state. */
    cpsr = (cpsr & ~(CPSR_IT_MASK | CPSR_T)) | (s->isa == TB_ISA_THUMB ? CPSR_T : 0) |
           ((uint32_t)(it_before & 3) << 25) | ((uint32_t)(it_before >> 2) << 10);
    ncpsr = cpsr & ~(0x1Fu | CPSR_T | CPSR_J | CPSR_E | CPSR_IT_MASK);
    ncpsr |= mode | CPSR_I;
    /* A on aborts, IRQ, FIQ; F on FIQ (as with the Virtualization
     * Extensions, A15/A7; assumed for A9 too). */
    if (kind == TB_EXC_FIQ || kind == TB_EXC_SMC)
        ncpsr |= CPSR_F;
    if (kind == TB_EXC_FIQ || kind == TB_EXC_IRQ || kind == TB_EXC_DATA_ABORT ||
        kind == TB_EXC_PREFETCH_ABORT || kind == TB_EXC_SMC)
        ncpsr |= CPSR_A;
    if (sctlr & (1u << 30)) /* TE */
        ncpsr |= CPSR_T;
    if (sctlr & (1u << 25)) /* EE */
        ncpsr |= CPSR_E;
    vec = ((sctlr & (1u << 13)) && kind != TB_EXC_SMC ? 0xFFFF0000u : (vbar & ~31u)) + off;
    if (uc_reg_write(s->uc, UC_ARM_REG_CPSR, &ncpsr) != UC_ERR_OK ||
        uc_reg_write(s->uc, UC_ARM_REG_SPSR, &cpsr) != UC_ERR_OK ||
        uc_reg_write(s->uc, UC_ARM_REG_LR, &lr) != UC_ERR_OK)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot write exception state");
    /* The state at the vector, before the exception record (sim.h). */
    if (s->sc.secure) {
        int rc = tb_sim_check_state(s);

        if (rc < 0)
            return rc;
    }
    s->cycles += 3;
    s->dual_first = false; /* no pair across an exception (dual.c) */
    s->exceptions++;
    s->itstate = 0;
    s->have_pend = false;
    s->have_ref_next = false;
    s->isa = (ncpsr & CPSR_T) ? TB_ISA_THUMB : TB_ISA_ARM;
    s->isa_known = true;
    s->act_addr = vec;
    memset(&r, 0, sizeof r);
    r.kind = TB_REC_EXCEPTION;
    r.seq = s->count;
    r.cycle = s->cycles;
    r.u.exc.kind = (uint8_t)kind;
    r.u.exc.isa = s->isa;
    r.u.exc.cancelled = cancelled;
    r.u.exc.pref_return = pref;
    r.u.exc.vector = vec;
    r.u.exc.cpsr = ncpsr;
    return sim_deliver(s, &r);
}


/* Handles one stop of the emulator.  Returns 1 when the run is over, 0
 * to restart at s->act_addr (ISA s->isa), negative on error. */
int tb_sim_handle_stop(tb_sim *s, uc_err uerr, tb_sim_result *res)
{
    struct tb_pend *p = &s->pend;
    uint32_t seq = p->ce.addr + p->ce.size;
    uint8_t it_before;
    int rc;

    if ((s->action == ACT_DATA_FAULT || s->action == ACT_FETCH_FAULT) &&
        (rc = tb_sim_check_past_fault(s)) < 0)
        return rc;
    if (s->m && (rc = tb_v7m_stop(s, uerr, res)) != V7M_NOT_MINE)
        return rc;
    switch (s->action) {
    case ACT_ERROR:
        return s->err ? s->err : TB_ERR_EMULATOR;
    case ACT_EXIT:
        res->stop = TB_SIM_STOP_EXIT;
        res->stop_addr = s->act_addr;
        return 1;
    case ACT_BUDGET:
        res->stop = TB_SIM_STOP_BUDGET;
        res->stop_addr = s->act_addr;
        return 1;
    case ACT_IRQ:
    case ACT_FIQ:
        if ((rc = tb_sim_check_interrupt_stop(s)) < 0)
            return rc;
        /* Preferred return = the instruction that did not run; LR = +4 in
         * both states (B1.9.10, B1.9.11). */
        if ((rc = enter_exception(s, s->action == ACT_IRQ ? TB_EXC_IRQ : TB_EXC_FIQ,
                                  s->act_addr, s->act_addr + 4, false, 0)) < 0)
            return rc;
        return 0;
    case ACT_SVC:
        /* LR = the next instruction (B1.9.4). */
        it_before = s->itstate;
        if ((rc = tb_sim_finish_insn(s, seq, 0)) < 0)
            return rc;
        if ((rc = enter_exception(s, TB_EXC_SVC, seq, seq, false, it_before)) < 0)
            return rc;
        return 0;
    case ACT_SMC:
        /* LR = preferred return = the next instruction (B1.9.9). */
        it_before = s->itstate;
        if ((rc = tb_sim_finish_insn(s, seq, 0)) < 0)
            return rc;
        if ((rc = enter_exception(s, TB_EXC_SMC, seq, seq, false, it_before)) < 0)
            return rc;
        return 0;
    case ACT_WFI: {
        uint64_t best = UINT64_MAX;
        int bi = -1;

        if ((rc = tb_sim_finish_insn(s, seq, 0)) < 0)
            return rc;
        s->act_addr = seq;
        if (s->pending_irq || (s->m && tb_v7m_best_pending(s, NULL)))
            return 0; /* a pending interrupt wakes WFI, masked or not */
        /* Time passes in WFI: the next interrupt due by count arrives. */
        for (unsigned i = 0; i < s->sc.n_events; i++)
            if (!s->ev[i].done && s->sc.events[i].has_insn && !s->ev[i].has_addr &&
                s->ev[i].next_insn < best) {
                best = s->ev[i].next_insn;
                bi = (int)i;
            }
        /* v7-M: SysTick counts on in WFI; it wakes the core first when
         * it reaches 0 before that event is due (v7m.c). */
        if (s->m && tb_v7m_wfi(s, bi < 0 ? UINT64_MAX : best)) {
            tb_sim_update_next_check(s);
            return 0;
        }
        if (bi < 0) {
            res->stop = TB_SIM_STOP_WFI;
            res->stop_addr = seq;
            return 1;
        }
        tb_sim_raise_event(s, (unsigned)bi);
        tb_sim_update_next_check(s);
        return 0;
    }
    case ACT_FETCH_FAULT:
        if (!s->sc.allow_prefetch_abort)
            return tb_sim_fail(s, TB_ERR_FAULT,
                               "prefetch abort at 0x%08x (code not mapped)%s",
                               s->act_addr, s->have_pend ? "" : "");
        if (s->have_pend && (rc = tb_sim_finish_insn(s, s->act_addr, 0)) < 0)
            return rc;
        {
            uint32_t at = s->act_addr;

            /* LR = preferred return + 4 (B1.9.7). */
            if (enter_exception(s, TB_EXC_PREFETCH_ABORT, at, at + 4, false, 0) < 0)
                return s->err;
            /* The abort was at its own vector (no vector table mapped):
             * the next fetch faults the same way in the same state, for
             * ever, and no instruction can run.  Each turn also costs
             * Unicorn memory it keeps until the end (probed: ~200 bytes;
             * 10 million turns aborted), so stop here. */
            if (s->act_addr == at) {
                res->stop = TB_SIM_STOP_FAULT;
                res->stop_addr = at;
                return 1;
            }
        }
        return 0;
    case ACT_DATA_FAULT:
        if (!s->have_pend)
            return tb_sim_fail(s, TB_ERR_EMULATOR, "data fault at 0x%08x outside "
                               "any instruction", s->fault_data);
        if (!s->sc.allow_data_abort)
            return tb_sim_fail(s, TB_ERR_FAULT,
                               "data abort at 0x%08x (access to 0x%08x)",
                               p->ce.addr, s->fault_data);
        {
            uint32_t addr = p->ce.addr;

            /* The instruction did not complete: no data records, not
             * even for the transfers Unicorn made before the one that
             * aborted (it writes the first words of an STM that runs
             * into unmapped memory, and hooks the store that faults). */
            /* Its preferred return is itself: the SPSR holds the
             * ITSTATE it ran under, not advanced (IHI0406C B1.9.8). */
            it_before = p->it_before;
            s->dat_n = 0;
            s->dat_drop = true;
            rc = tb_sim_finish_insn(s, seq, 0);
            s->dat_drop = false;
            if (rc < 0)
                return rc;
            /* LR = preferred return + 8 (B1.9.8). */
            if ((rc = enter_exception(s, TB_EXC_DATA_ABORT, addr, addr + 8, true,
                                      it_before)) < 0)
                return rc;
        }
        return 0;
    case ACT_RETRANSLATE:
        /* Stopped before the block's first instruction: nothing ran. */
        return tb_sim_retranslate(s) < 0 ? s->err : 0;
    case ACT_NONE:
    case ACT_EXC_RETURN:
    case ACT_BKPT:
        break;
    }
    if (uerr == UC_ERR_INSN_INVALID && s->have_pend) {
        uint32_t addr = p->ce.addr;
        bool thumb = p->isa == TB_ISA_THUMB;

        if (!s->sc.allow_undef)
            return tb_sim_fail(s, TB_ERR_FAULT, "undefined instruction 0x%08x at 0x%08x",
                               p->ce.opcode, addr);
        it_before = p->it_before; /* returns to itself (B1.9.6) */
        if ((rc = tb_sim_finish_insn(s, seq, 0)) < 0)
            return rc;
        /* LR = address + 4 (ARM) or + 2 (Thumb) (B1.9.6). */
        if ((rc = enter_exception(s, TB_EXC_UNDEF, addr, addr + (thumb ? 2 : 4), true,
                                  it_before)) < 0)
            return rc;
        return 0;
    }
    {
        uint32_t pc = 0;

        uc_reg_read(s->uc, UC_ARM_REG_PC, &pc);
        return tb_sim_fail(s, uerr == UC_ERR_OK ? TB_ERR_EMULATOR :
                           uerr == UC_ERR_INSN_INVALID ? TB_ERR_FAULT : TB_ERR_EMULATOR,
                           "emulator stopped at 0x%08x: %s", pc, uc_strerror(uerr));
    }
}
