/*
 * Exec records: every instruction record is built and delivered here
 * (tb_sim_emit_rec, for both paths), with its data, state and context records;
 * the pending instruction, its branch check and completion; the scenario's
 * events and the slow path; the reference path's hooks (sim.c says how
 * the two paths relate).
 */
#include <string.h>

#include "sim_internal.h"
#include "v7m.h"

/* ------------------------------------------------------------------ */
/* Records. */

static bool is_indirect(uint8_t wp)
{
    return wp == TB_WP_INDIRECT || wp == TB_WP_INDIRECT_LINK;
}

static bool is_direct(uint8_t wp)
{
    return wp == TB_WP_DIRECT || wp == TB_WP_DIRECT_LINK;
}

/* The transfer(s) of the store-exclusive e, from the registers just after
 * it ran (both paths build its record before the next instruction runs:
 * the block path sends the next one to blk_attention).  Unicorn runs a
 * STREX as a compare-and-swap against the value LDREX loaded, with
 * memory hooks only when the monitor's address matches, so the hooks do
 * not say what it would have stored; the registers do: Rt (Rt2 at
 * address + 4 for STREXD: A8.8.215, the word at the lower address is Rt
 * in either endianness), Rd = 1 when it failed (A8.8.212). */
static int strex_data(tb_sim *s, const tb_centry *e)
{
    uint32_t op = e->opcode, rn, rt, rd, rt2, base, vt, vt2 = 0, res;
    unsigned size;
    uint8_t flags = TB_DATA_STORE;

    if (e->valid == 1 + TB_ISA_ARM) {
        static const uint8_t sz[4] = {4, 8, 1, 2};

        rn = (op >> 16) & 15;
        rd = (op >> 12) & 15;
        rt = op & 15;
        rt2 = rt + 1;
        size = sz[(op >> 21) & 3];
    } else if ((op & 0xFFF00000u) == 0xE8400000u) {
        rn = (op >> 16) & 15;
        rt = (op >> 12) & 15;
        rd = (op >> 8) & 15;
        rt2 = 0;
        size = 4;
    } else {
        static const uint8_t sz[4] = {1, 2, 0, 8};

        rn = (op >> 16) & 15;
        rt = (op >> 12) & 15;
        rt2 = (op >> 8) & 15;
        rd = op & 15;
        size = sz[(op >> 4) & 3];
    }
    if ((size == 8 && rt2 > 15) || tb_sim_read_reg(s, rn, &base) < 0 || tb_sim_read_reg(s, rt, &vt) < 0 ||
        tb_sim_read_reg(s, rd, &res) < 0 ||
        (size == 8 && tb_sim_read_reg(s, rt2, &vt2) < 0))
        return tb_sim_fail(s, TB_ERR_EMULATOR, "STREX at 0x%08x: cannot read its "
                           "registers", e->addr);
    if (e->valid != 1 + TB_ISA_ARM && (op & 0xFFF00000u) == 0xE8400000u)
        base += (op & 0xFFu) << 2; /* T32 STREX: Rn + imm8:'00' */
    if (res & 1)
        flags |= TB_DATA_STORE_FAILED;
    if (sim_read_cpsr(s) & CPSR_E)
        flags |= TB_DATA_BE;
    s->dat_n = 0;
    s->dat_owner = e->addr;
    s->dat[s->dat_n++] = (struct tb_dat){base, size < 4 ? vt & ((1u << (8 * size)) - 1) : vt,
                                         (uint8_t)(size < 4 ? size : 4), flags};
    if (size == 8)
        s->dat[s->dat_n++] = (struct tb_dat){base + 4, vt2, 4, flags};
    return 0;
}

/* An LDM (A32 A8.8.58-61, exception-return LDM too), POP (T16) or
 * LDM.W/LDMDB (T32) whose register list holds the PC: the instructions
 * a "load PC first" core reorders (tb_sim_set_pcfirst).  Not RFE (A32
 * cond 1111; T32 op 00/11), which loads the PC and CPSR, not a list. */
static bool ldm_loads_pc(const tb_centry *e)
{
    const uint32_t w = e->opcode;

    if (e->valid == 1 + TB_ISA_ARM)
        return (w & 0x0E108000u) == 0x08108000u && (w >> 28) != 0xF;
    if (e->valid != 1 + TB_ISA_THUMB)
        return false;
    if (e->size == 2)
        return (w & 0xFF00u) == 0xBD00u;
    return (w & 0xFE508000u) == 0xE8108000u && (((w >> 23) & 3) == 1 || ((w >> 23) & 3) == 2);
}

/* Load PC first (tb_sim_set_pcfirst): the PC's load, the one at the
 * highest address (the PC is the highest-numbered register), goes
 * first; the others keep their order. */
static void pc_first_order(tb_sim *s)
{
    unsigned hi = 0;
    struct tb_dat pc;

    for (unsigned i = 0; i < s->dat_n; i++) {
        if (s->dat[i].flags & TB_DATA_STORE)
            return;
        if (s->dat[i].addr > s->dat[hi].addr)
            hi = i;
    }
    pc = s->dat[hi];
    memmove(&s->dat[1], &s->dat[0], hi * sizeof s->dat[0]);
    s->dat[0] = pc;
}

/* Delivers the data records of the instruction e, just delivered with
 * record flags iflags: its buffered transfers (from the memory hooks),
 * or a store-exclusive's from its registers; none for one that failed
 * its condition or aborted.  seq is the instruction count after it, as
 * for context records; cycle is its own. */
__attribute__((noinline)) int tb_sim_emit_data(tb_sim *s, const tb_centry *e,
                                               uint8_t iflags)
{
    tb_exec_record r;
    int rc = 0;

    if (s->dat_n && s->dat_owner != e->addr)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "data transfers of 0x%08x reached "
                           "the record of 0x%08x", s->dat_owner, e->addr);
    if ((e->info & CE_EXCL) && !(iflags & TB_INSN_COND_FAILED) && !s->dat_drop &&
        (rc = strex_data(s, e)) < 0)
        return rc;
    if (s->pcfirst && s->dat_n >= 2 && ldm_loads_pc(e))
        pc_first_order(s);
    memset(&r, 0, sizeof r);
    r.kind = TB_REC_DATA;
    r.seq = s->count;
    r.cycle = s->cycles;
    r.u.data.insn_addr = e->addr;
    for (unsigned i = 0; i < s->dat_n && rc == 0; i++) {
        r.u.data.addr = s->dat[i].addr;
        r.u.data.value = s->dat[i].value;
        r.u.data.size = s->dat[i].size;
        r.u.data.flags = s->dat[i].flags;
        rc = sim_deliver(s, &r);
    }
    s->dat_n = 0;
    return rc;
}

/* The security state now: Secure iff Monitor mode or SCR.NS = 0
 * (IHI0406C B1.5.1); Hyp is never entered (docs/ns-hyp.md). */
int tb_sim_read_ns(tb_sim *s, bool *ns)
{
    uint32_t scr = 0;

    if (sim_cp15(s, false, 1, 1, 0, 0, &scr) < 0)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot read SCR");
    *ns = (sim_read_cpsr(s) & 0x1Fu) != 0x16u && (scr & 1u);
    return 0;
}

/* SCR.NS := 0 through the host: Secure state (docs/ns-hyp.md). */
int tb_sim_scr_secure(tb_sim *s)
{
    uint32_t scr = 0;

    if (sim_cp15(s, false, 1, 1, 0, 0, &scr) < 0)
        return TB_ERR_EMULATOR;
    scr &= ~1u;
    return sim_cp15(s, true, 1, 1, 0, 0, &scr);
}

/* A state record when the security state changed (scenario secure). */
int tb_sim_check_state(tb_sim *s)
{
    tb_exec_record r;
    bool ns;
    int rc;

    if ((rc = tb_sim_read_ns(s, &ns)) < 0 || ns == s->ns)
        return rc;
    s->ns = ns;
    memset(&r, 0, sizeof r);
    r.kind = TB_REC_STATE;
    r.seq = s->count;
    r.cycle = s->cycles;
    r.u.state.ns = ns;
    return sim_deliver(s, &r);
}

/* Delivers the record of the instruction e (in isa) that went to next,
 * then a context record when it changed CONTEXTIDR.  Both paths build
 * every record here, so they share the cycle model's draws too. */
int tb_sim_emit_rec(tb_sim *s, const tb_centry *e, const tb_exec_record *tpl,
                    uint8_t isa, uint32_t next, uint8_t next_isa, uint8_t flags)
{
    tb_exec_record r;
    unsigned cost = 1;
    int rc;

    if ((flags & TB_INSN_TAKEN) && !(flags & TB_INSN_COND_FAILED))
        cost += 2;
    if ((e->info & CE_MEM) && !(flags & TB_INSN_COND_FAILED)) {
        uint64_t x = sim_rng_next(s);

        cost += 1;
        if ((x & 15) == 0)
            cost += 1 + (unsigned)((x >> 4) & 3);
    }
    if (s->sc.n_fetch_waits)
        cost += tb_sim_fetch_wait(s, e->addr);
    if (s->dual)
        cost -= tb_sim_dual_step(s, e, isa, flags, next);
    s->cycles += cost;
    if (tpl) {
        r = *tpl; /* a block instruction's prepared record */
    } else {
        memset(&r, 0, sizeof r);
        r.kind = TB_REC_INSN;
        r.u.insn.addr = e->addr;
        r.u.insn.opcode = e->opcode;
        r.u.insn.size = e->size;
        r.u.insn.isa = isa;
        r.u.insn.wp_class = e->wp;
    }
    r.seq = s->count++;
    r.cycle = s->cycles;
    r.u.insn.next_addr = next;
    r.u.insn.next_isa = next_isa;
    r.u.insn.flags = flags;
    if ((rc = sim_deliver(s, &r)) < 0)
        return rc;
    if ((s->dat_n || (e->info & CE_EXCL)) && (rc = tb_sim_emit_data(s, e, flags)) < 0)
        return rc;
    if ((e->info & CE_SECST) && !(flags & TB_INSN_COND_FAILED) &&
        (rc = tb_sim_check_state(s)) < 0)
        return rc;
    if ((e->info & CE_CTXID) && !(flags & TB_INSN_COND_FAILED)) {
        uint32_t v;

        if (sim_cp15(s, false, 13, 0, 0, 1, &v) == 0 && v != s->ctxid) {
            s->ctxid = v;
            memset(&r, 0, sizeof r);
            r.kind = TB_REC_CONTEXT;
            r.seq = s->count;
            r.cycle = s->cycles;
            r.u.ctx.context_id = v;
            return sim_deliver(s, &r);
        }
    }
    return 0;
}

static int emit_insn(tb_sim *s, const tb_centry *e, uint8_t isa, uint32_t next,
                     uint8_t next_isa, uint8_t flags)
{
    return tb_sim_emit_rec(s, e, NULL, isa, next, next_isa, flags);
}

/* ITAdvance(), IHI0406C A2.5.2 */
static uint8_t it_next(uint8_t it)
{
    if ((it & 7) == 0)
        return 0;
    return (uint8_t)((it & 0xE0) | ((it << 1) & 0x1F));
}

/* Flags an instruction has before its condition is known: IT membership
 * from the tracked ITSTATE (advanced here), the condition field, and
 * exception return.  *it is the ITSTATE, updated past the instruction. */
uint8_t tb_sim_base_flags(const tb_centry *e, uint8_t isa, uint8_t *it)
{
    uint8_t flags = 0;

    if (isa == TB_ISA_THUMB && (*it & 0xF)) {
        flags |= TB_INSN_CONDITIONAL | TB_INSN_IN_IT;
        *it = it_next(*it);
    } else if (e->cond < 14) {
        flags |= TB_INSN_CONDITIONAL;
    }
    if (e->info & CE_IT)
        *it = e->it;
    if (e->info & CE_EXC_RET)
        flags |= TB_INSN_EXC_RETURN;
    return flags;
}

/* Makes the instruction in e at a the pending one.  passed: 1 or 0 when
 * its condition is already known, -1 to work it out now (an IT-block
 * instruction passed if Unicorn hooked it; an ARM conditional
 * non-branch from the flags now). */
void tb_sim_make_pending(tb_sim *s, const tb_centry *e, uint8_t isa, bool hooked,
                         int passed)
{
    struct tb_pend *p = &s->pend;
    uint8_t it_before = s->itstate;
    uint8_t flags = tb_sim_base_flags(e, isa, &s->itstate);

    p->it_before = it_before;
    p->ce = *e;
    p->isa = isa;
    if (flags & TB_INSN_IN_IT) {
        /* Unicorn hooks only the IT-block instructions that pass. */
        if (passed == 0 || (passed < 0 && !hooked))
            flags |= TB_INSN_COND_FAILED;
    } else if (e->info & CE_ARMCOND) {
        if (passed < 0)
            passed = tb_cond_passed(e->cond, sim_read_cpsr(s));
        if (!passed)
            flags |= TB_INSN_COND_FAILED;
    }
    p->flags = flags;
    s->have_pend = true;
}

/* The branch check and the final flags of an instruction (e in isa,
 * flags so far) that went to a; hsize is the size Unicorn's next code
 * hook gave (0 when unknown).  A non-sequential step needs a branch, a
 * direct branch must go to its target or, failed, fall through.  Sets
 * *flagsp and *nisa. */
int tb_sim_flow_check(tb_sim *s, const tb_centry *e, uint8_t isa, uint8_t *flagsp,
                      uint32_t a, uint32_t hsize, uint8_t *nisa)
{
    uint32_t seq = e->addr + e->size;
    uint8_t flags = *flagsp;
    bool taken = false;

    if (is_direct(e->wp) && (e->info & CE_TARGET)) {
        if (e->target == seq && a == seq) {
            taken = !(flags & TB_INSN_COND_FAILED) &&
                    (e->cond >= 14 || tb_cond_passed(e->cond, sim_read_cpsr(s)));
        } else if (a == e->target && !(flags & TB_INSN_COND_FAILED)) {
            taken = true;
        } else if (a == seq && (e->cond < 14 || (e->info & CE_CBZ) ||
                                (flags & TB_INSN_COND_FAILED))) {
            taken = false;
        } else {
            return tb_sim_fail(s, TB_ERR_MISMATCH,
                               "check: direct branch at 0x%08x went to 0x%08x, "
                               "classifier says 0x%08x", e->addr, a, e->target);
        }
        if (!taken)
            flags |= TB_INSN_COND_FAILED;
    } else if (is_indirect(e->wp)) {
        taken = !(flags & TB_INSN_COND_FAILED);
        if (!taken && a != seq)
            return tb_sim_fail(s, TB_ERR_MISMATCH,
                               "check: failed branch at 0x%08x went to 0x%08x",
                               e->addr, a);
    } else if (a != seq) {
        return tb_sim_fail(s, TB_ERR_MISMATCH,
                           "check: PC moved from 0x%08x to 0x%08x without a "
                           "branch (opcode 0x%08x, %s)", e->addr, a, e->opcode,
                           tb_wp_class_name((tb_wp_class)e->wp));
    }
    if (taken)
        flags |= TB_INSN_TAKEN;
    /* An exception return restores the CPSR from the SPSR, ITSTATE too
     * (IHI0406C B1.8.10): an SVC that is not the last instruction of its
     * IT block returns into the block.  The CPSR's IT bits are current
     * here, at the first instruction after the return (a new block). */
    if (taken && (e->info & CE_EXC_RET)) {
        uint32_t cpsr = sim_read_cpsr(s);

        s->ret_it = (uint8_t)(((cpsr >> 25) & 3u) | ((cpsr >> 8) & 0xFCu));
        s->have_ret_it = true;
    }
    /* ISA of the next instruction. */
    if (hsize == 2) {
        *nisa = TB_ISA_THUMB;
    } else if (taken && (is_indirect(e->wp) || (e->info & CE_EXC_RET))) {
        *nisa = (sim_read_cpsr(s) & CPSR_T) ? TB_ISA_THUMB : TB_ISA_ARM;
    } else if (taken && (e->info & CE_TARGET)) {
        *nisa = (e->info & CE_TTHUMB) ? TB_ISA_THUMB : TB_ISA_ARM;
    } else {
        *nisa = isa;
    }
    *flagsp = flags;
    return 0;
}

/* Completes the pending instruction now that the next one is at a (size
 * = its hook size, 0 when unknown). */
int tb_sim_finish_insn(tb_sim *s, uint32_t a, uint32_t size)
{
    struct tb_pend *p = &s->pend;
    uint32_t seq = p->ce.addr + p->ce.size;
    uint8_t flags, nisa = p->isa;
    int rc;

    /* Skipped IT-block instructions (failed condition). */
    for (int guard = 0; p->isa == TB_ISA_THUMB && (s->itstate & 0xF) &&
                        a != seq && guard < 4; guard++) {
        tb_centry *e = tb_sim_lookup(s, seq, TB_ISA_THUMB);

        if (!e)
            return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot read code at 0x%08x", seq);
        if ((rc = emit_insn(s, &p->ce, p->isa, seq, TB_ISA_THUMB, p->flags)) < 0)
            return rc;
        tb_sim_make_pending(s, e, TB_ISA_THUMB, false, -1);
        seq = p->ce.addr + p->ce.size;
    }
    flags = p->flags;
    if ((rc = tb_sim_flow_check(s, &p->ce, p->isa, &flags, a, size, &nisa)) < 0)
        return rc;
    if (s->have_ret_it) {
        s->itstate = s->ret_it;
        s->have_ret_it = false;
    }
    s->have_pend = false;
    s->isa = nisa;
    s->isa_known = true;
    return emit_insn(s, &p->ce, p->isa, a, nisa, flags);
}

/* ------------------------------------------------------------------ */
/* Events. */

void tb_sim_update_next_check(tb_sim *s)
{
    uint64_t n = UINT64_MAX;

    if (s->sc.max_insns)
        n = s->sc.max_insns;
    for (unsigned i = 0; i < s->sc.n_events; i++) {
        if (!s->ev[i].done && s->sc.events[i].has_insn && s->ev[i].next_insn < n)
            n = s->ev[i].next_insn;
        if (s->ev[i].armed)
            n = 0; /* it arrives before the next instruction at the latest */
    }
    if (s->pending_irq || s->debug_due)
        n = 0;
    if (s->m)
        n = tb_v7m_next_check(s, n);
    s->next_check = n;
}

void tb_sim_raise_event(tb_sim *s, unsigned i)
{
    const tb_scn_event *e = &s->sc.events[i];
    struct tb_ev_state *st = &s->ev[i];

    if (e->kind == TB_EXC_DEBUG_HALT) {
        /* Taken before the next instruction, whatever CPSR.I/F say
         * (tb_sim_slow_path); from WFI too, which a halt wakes. */
        s->debug_due = true;
        s->debug_cycles = e->halt_cycles;
    } else if (s->m) {
        tb_v7m_raise(s, e);
    } else {
        s->pending_irq |= e->kind == TB_EXC_FIQ ? 2u : 1u;
    }
    st->raised++;
    if (e->count && st->raised >= e->count) {
        st->done = true;
    } else if (e->has_insn && e->every) {
        st->next_insn += e->every;
    } else if (e->has_insn) {
        st->done = true;
    }
}

/* A [debug] halt before the instruction at a (sim.h, tb_scn_event): the
 * core enters Debug state with that instruction next, stays halted
 * debug_cycles cycles and restarts there, its registers and memory as
 * they were (a debugger's halt and restart, IHI0406C C5.1 and C5.3: on
 * exit the core runs from the address DLR holds, here the one it
 * halted at).  Only the record and the clock change: no Unicorn state is
 * touched, so the run goes on as it would have.  It is not counted as an
 * exception taken (the budget's second bound is for exception loops). */
static int debug_halt(tb_sim *s, uint32_t a, uint8_t isa)
{
    tb_exec_record r;

    (void)isa;
    s->debug_due = false;
    s->cycles += s->debug_cycles;
    s->dual_first = false; /* no pair across the halt (dual.c) */
    memset(&r, 0, sizeof r);
    r.kind = TB_REC_EXCEPTION;
    r.seq = s->count;
    r.cycle = s->cycles;
    r.u.exc.kind = TB_EXC_DEBUG_HALT;
    /* No vector: the PTM of a Cortex-A15 traces the entry as an
     * exception to address 0 in ARM state (shared reference
     * trace_cov_a15: 81 80 80 80 48 02, "Debug Halt [01]"). */
    r.u.exc.isa = TB_ISA_ARM;
    r.u.exc.pref_return = a;
    r.u.exc.vector = 0;
    r.u.exc.cpsr = sim_read_cpsr(s);
    return sim_deliver(s, &r);
}

/* Slow path before the instruction at a runs.  Returns 1 when the run
 * stops before it, 0 to go on. */
int tb_sim_slow_path(tb_sim *s, uint32_t a, const tb_centry *e, uint8_t isa)
{
    if (s->has_exit && a == s->exit_addr) {
        s->act_addr = a;
        sim_stop(s, ACT_EXIT);
        return 1;
    }
    if (s->sc.max_insns && s->count >= s->sc.max_insns) {
        s->act_addr = a;
        sim_stop(s, ACT_BUDGET);
        return 1;
    }
    /* An unstack event armed before the last instruction that made no
     * exception return to take it (v7m.c) arrives after it: now. */
    for (unsigned i = 0; i < s->sc.n_events; i++)
        if (s->ev[i].armed) {
            s->ev[i].armed = false;
            tb_sim_raise_event(s, i);
        }
    for (unsigned i = 0; i < s->sc.n_events; i++) {
        struct tb_ev_state *st = &s->ev[i];

        if (st->done)
            continue;
        if (st->has_addr && (e->info & CE_SPECIAL) && st->addr == a &&
            ++st->arrivals >= s->sc.events[i].hit) {
            st->arrivals = 0;
            if (s->sc.events[i].unstack)
                st->armed = true; /* during this instruction (v7m.c exc_return) */
            else
                tb_sim_raise_event(s, i);
        } else if (s->sc.events[i].has_insn && s->count >= st->next_insn &&
                   !st->has_addr) {
            tb_sim_raise_event(s, i);
        }
    }
    if (s->debug_due && debug_halt(s, a, isa) < 0) {
        sim_stop(s, ACT_ERROR);
        return 1;
    }
    /* v7-M: its priority rules (v7m.c). */
    if (s->m) {
        s->isa = isa;
        if (tb_v7m_slow(s, a))
            return 1;
        tb_sim_update_next_check(s);
        return 0;
    }
    /* Interrupts are taken between instructions, never inside an IT
     * block (Unicorn would defer the stop to the block's end). */
    if (s->pending_irq && !(isa == TB_ISA_THUMB && (s->itstate & 0xF))) {
        uint32_t cpsr = sim_read_cpsr(s);

        if ((s->pending_irq & 2) && !(cpsr & CPSR_F)) {
            s->pending_irq &= ~2u;
            s->act_addr = a;
            s->act_isa = isa;
            sim_stop(s, ACT_FIQ);
            tb_sim_update_next_check(s);
            return 1;
        }
        if ((s->pending_irq & 1) && !(cpsr & CPSR_I)) {
            s->pending_irq &= ~1u;
            s->act_addr = a;
            s->act_isa = isa;
            sim_stop(s, ACT_IRQ);
            tb_sim_update_next_check(s);
            return 1;
        }
    }
    tb_sim_update_next_check(s);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Reference path: one code hook per instruction does everything. */

void tb_sim_hook_code(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
    tb_sim *s = user;
    uint32_t a = (uint32_t)address;
    tb_centry *e;
    uint8_t isa;

    (void)uc;
    if (s->action != ACT_NONE) {
        if (s->action == ACT_DATA_FAULT || s->action == ACT_FETCH_FAULT)
            tb_sim_ran_past_fault(s, a);
        return;
    }
    if (s->have_ref_next) {
        /* An exception return went into an IT block (tb_sim_hook_block_ref):
         * the block's first instructions, when they fail, are not
         * hooked; the one it went to is made pending here and tb_sim_finish_insn()
         * below records it and any other skipped one. */
        s->have_ref_next = false;
        if (a != s->ref_next && !s->have_pend && s->isa == TB_ISA_THUMB &&
            (s->itstate & 0xF)) {
            if (!(e = tb_sim_lookup(s, s->ref_next, TB_ISA_THUMB))) {
                tb_sim_fail(s, TB_ERR_EMULATOR, "cannot decode code at 0x%08x", s->ref_next);
                sim_stop(s, ACT_ERROR);
                return;
            }
            tb_sim_make_pending(s, e, TB_ISA_THUMB, false, -1);
        }
    }
    if (s->have_pend && tb_sim_finish_insn(s, a, size) < 0) {
        sim_stop(s, ACT_ERROR);
        return;
    }
    isa = size == 2 ? TB_ISA_THUMB : s->isa;
    if (!s->isa_known)
        isa = (sim_read_cpsr(s) & CPSR_T) ? TB_ISA_THUMB : TB_ISA_ARM;
    s->isa = isa;
    e = tb_sim_lookup(s, a, isa);
    if (!e) {
        tb_sim_fail(s, TB_ERR_EMULATOR, "cannot decode code at 0x%08x", a);
        sim_stop(s, ACT_ERROR);
        return;
    }
    if (((e->info & CE_SPECIAL) || s->count >= s->next_check) &&
        tb_sim_slow_path(s, a, e, isa))
        return;
    tb_sim_make_pending(s, e, isa, true, -1);
    if (e->info & CE_WFI) {
        s->act_addr = a;
        sim_stop(s, ACT_WFI);
    }
}

/* The reference path's part of tb_sim_tb_new: a block not seen before
 * (ref_seen), its ISA from the CPSR (current in a block hook) and whether
 * it ends inside an IT block, walked from the ITSTATE tracked here, or
 * the CPSR's after an exception return. */
static inline uint64_t ref_key(uint32_t a, uint32_t size)
{
    return ((uint64_t)size << 32 | a) + 1;
}

static inline uint64_t *ref_slot(tb_sim *s, uint32_t a, uint32_t size)
{
    return &s->ref_seen[((a >> 1) ^ (a >> 11) ^ size) &
                        (sizeof s->ref_seen / sizeof s->ref_seen[0] - 1)];
}

static void ref_block_new(tb_sim *s, uint32_t a, uint32_t size)
{
    uint32_t cpsr, off = 0;
    uint8_t isa, it, last = 0;

    cpsr = sim_read_cpsr(s);
    isa = (cpsr & CPSR_T) ? TB_ISA_THUMB : TB_ISA_ARM;
    it = s->have_ret_it ? s->ret_it : s->itstate;
    if (isa == TB_ISA_THUMB && !(it & 0xF))
        it = (uint8_t)(((cpsr >> 25) & 3u) | ((cpsr >> 8) & 0xFCu));
    while (isa == TB_ISA_THUMB && off < size) {
        const tb_centry *e = tb_sim_lookup(s, a + off, isa);

        if (!e || !e->size) {
            last = 1; /* cannot tell: assume the worst */
            break;
        }
        last = it & 0xF;
        tb_sim_base_flags(e, isa, &it);
        off += e->size;
    }
    if (tb_sim_tb_new(s, a, size, isa, last != 0)) {
        /* The restart's ISA; the pending instruction, finished at the
         * restart's first code hook, sets it again. */
        s->isa = isa;
        s->isa_known = true;
    }
}

/* The reference path's block hook, for two cases: an exception return
 * ends its block, and the CPSR's IT bits it restored (an SVC inside an
 * IT block) can be read only here, before the next block starts: a block
 * inside an IT block clears them in the emulator's state as it starts
 * (probed), so its first code hook reads 0.  The block path completes
 * every instruction in its block hook anyway.  And a block not seen
 * before may need translating again (ref_block_new). */
void tb_sim_hook_block_ref(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
    tb_sim *s = user;

    (void)uc;
    if (s->action == ACT_NONE && s->have_pend && (s->pend.ce.info & CE_EXC_RET)) {
        if (tb_sim_finish_insn(s, (uint32_t)address, 0) < 0) {
            sim_stop(s, ACT_ERROR);
            return;
        }
        s->ref_next = (uint32_t)address;
        s->have_ref_next = true;
    }
    if (s->action == ACT_NONE) {
        uint64_t *slot = ref_slot(s, (uint32_t)address, size);

        if (*slot != ref_key((uint32_t)address, size)) {
            *slot = ref_key((uint32_t)address, size);
            ref_block_new(s, (uint32_t)address, size);
        }
    }
}
