/*
 * The Unicorn hooks both paths add: interrupts (SVC, SMC), memory faults
 * and data transfers.
 */
#include "sim_internal.h"
#include "v7m.h"

/* ------------------------------------------------------------------ */
/* Hooks of both paths. */

static bool in_insn(const tb_sim *s)
{
    return s->have_pend || (s->blk && s->pos > s->done);
}

uint32_t tb_sim_insn_addr(const tb_sim *s)
{
    if (s->have_pend)
        return s->pend.ce.addr;
    if (s->blk && s->pos > s->done)
        return s->blk->ins[s->pos - 1].ce.addr;
    return 0;
}

void tb_sim_hook_intr(uc_engine *uc, uint32_t intno, void *user)
{
    tb_sim *s = user;

    (void)uc;
    if (s->action != ACT_NONE)
        return;
    if (s->m && in_insn(s) && tb_v7m_intr(s, intno))
        return;
    if (intno == 2 && in_insn(s)) { /* EXCP_SWI */
        sim_stop(s, ACT_SVC);
        return;
    }
    if (intno == 13 && in_insn(s) && s->sc.secure) { /* EXCP_SMC */
        sim_stop(s, ACT_SMC);
        return;
    }
    if (intno == 13) {
        tb_sim_fail(s, TB_ERR_FAULT, "SMC at 0x%08x: the scenario must say secure = true "
                    "for the simulator to enter Monitor mode", tb_sim_insn_addr(s));
        sim_stop(s, ACT_ERROR);
        return;
    }
    tb_sim_fail(s, TB_ERR_FAULT, "exception %u (not asked for) at 0x%08x", intno,
                tb_sim_insn_addr(s));
    sim_stop(s, ACT_ERROR);
}

bool tb_sim_hook_mem_fault(uc_engine *uc, uc_mem_type type, uint64_t address,
                           int size, int64_t value, void *user)
{
    tb_sim *s = user;

    (void)uc;
    (void)size;
    (void)value;
    if (s->action != ACT_NONE)
        return false;
    s->act_addr = (uint32_t)address;
    s->fault_type = type;
    s->action = (type == UC_MEM_FETCH_UNMAPPED || type == UC_MEM_FETCH_PROT)
                    ? ACT_FETCH_FAULT : ACT_DATA_FAULT;
    if (s->action == ACT_DATA_FAULT)
        s->fault_data = (uint32_t)address;
    s->fault_insn = tb_sim_insn_addr(s);
    s->past_n = 0;
    return false;
}

/* A code hook while a fault is pending.  One may fire without its
 * instruction running: Unicorn checks for a stop right after each code
 * hook (the PC is then that instruction's, tb_sim_check_past_fault).  A
 * second means the first ran.  Unicorn 2.0.1 skips a store to unmapped
 * memory and only asks the CPU to exit; the exit is checked after the
 * store and after the next code hook, except in an ARM block translated
 * while its Thumb translator's no_exit_request was stuck on
 * (tb_sim_tb_new): that block runs on to its end, so the instructions
 * after the store ran once before the abort and again after the handler
 * returned (seeds 1813, 142, 2761 mixed, docs/gen.md).  Those blocks are
 * translated again now; this stays as the guard that the state is the
 * abort's: effects of instructions run past a fault (registers, flags,
 * memory) cannot be undone here, so the run fails rather than go on. */
static int past_fail(tb_sim *s, uint32_t then)
{
    if (s->action == ACT_DATA_FAULT)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "the emulator ran the instruction at "
                           "0x%08x (then 0x%08x) after the access to 0x%08x by the "
                           "instruction at 0x%08x faulted (Unicorn ran past a data abort; "
                           "the run's state is wrong from here, docs/gen.md)",
                           s->past_addr, then, s->fault_data, s->fault_insn);
    return tb_sim_fail(s, TB_ERR_EMULATOR, "the emulator ran the instruction at 0x%08x "
                       "(then 0x%08x) after the fetch from 0x%08x faulted (Unicorn ran "
                       "past a prefetch abort; the run's state is wrong from here, "
                       "docs/gen.md)", s->past_addr, then, s->act_addr);
}

void tb_sim_ran_past_fault(tb_sim *s, uint32_t a)
{
    if (s->past_n++ == 0) {
        s->past_addr = a;
        return;
    }
    past_fail(s, a);
    sim_stop(s, ACT_ERROR);
}

/* After the emulator stopped at a fault: a code hook that fired after it
 * is harmless only when Unicorn stopped right after that hook, before
 * its instruction (the PC still names it); else it ran and went on. */
int tb_sim_check_past_fault(tb_sim *s)
{
    uint32_t pc = 0;

    if (!s->past_n)
        return 0;
    s->past_n = 0;
    if (uc_reg_read(s->uc, UC_ARM_REG_PC, &pc) != UC_ERR_OK)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot read the PC after a fault");
    if ((pc & ~1u) == s->past_addr)
        return 0;
    return past_fail(s, pc);
}

/* After the emulator stopped for an IRQ or FIQ asked in the code hook of
 * the instruction at act_addr: the PC must still name it, else that
 * instruction (and maybe more) ran, and would run again after the
 * handler returns to the preferred return, act_addr (IHI0406C B1.9.10,
 * B1.9.11).  Seen on Unicorn 2.0.1 before tb_sim_tb_new (seed 1589 mixed:
 * an FIQ at the SUBS that counts down a loop, which then stepped over 0);
 * kept as a guard, as tb_sim_check_past_fault. */
int tb_sim_check_interrupt_stop(tb_sim *s)
{
    uint32_t pc = 0;

    if (uc_reg_read(s->uc, UC_ARM_REG_PC, &pc) != UC_ERR_OK)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot read the PC after an interrupt stop");
    if ((pc & ~1u) == (s->act_addr & ~1u))
        return 0;
    return tb_sim_fail(s, TB_ERR_EMULATOR, "the emulator ran the instruction at 0x%08x (and "
                       "went on to 0x%08x) after it was asked to stop before it to take %s "
                       "there (Unicorn ran past an interrupt stop; the run's state is wrong "
                       "from here, docs/gen.md)", s->act_addr & ~1u, pc & ~1u,
                       s->action == ACT_FIQ ? "an FIQ" : "an IRQ");
}

/* Unicorn 2.0.1 (and its master) ends an IT block's instructions without
 * an exit check (it runs an IT block as one instruction): its Thumb
 * translator sets the engine-wide flag no_exit_request per instruction,
 * to "inside an IT block", and nothing else resets it (target/arm/
 * translate.c thumb_tr_translate_insn; tcg/tcg-op.c check_exit_request
 * then emits nothing).  After a Thumb translation block whose last
 * instruction is in an IT block (a BXLS or POPLS {pc} to ARM, say), every
 * ARM block translated before the next Thumb instruction is translated
 * has no exit check after its code hooks, loads and stores: a store to
 * unmapped memory (which Unicorn skips, asking the CPU to exit) and a
 * stop asked in a code hook (an IRQ or FIQ due there) take effect only at
 * the end of the block, after the instructions behind them ran.  The
 * check at a block's start stays, and runs after the block hook.
 *
 * So, at the first block hook of each block (the block path: a miss of
 * its block cache; the reference path: ref_seen), a Thumb block ending in
 * an IT block marks the flag as maybe stuck, and an ARM block seen while
 * it is stops the run before its first instruction (Unicorn has just
 * translated it) for tb_sim_retranslate.  Only new blocks pay: none on
 * the path a block takes each time it runs.  Returns true when it asked
 * the stop. */
bool tb_sim_tb_new(tb_sim *s, uint32_t a, uint32_t size, uint8_t isa, bool ends_in_it)
{
    if (s->m)
        return false; /* no ARM state (v7-M) */
    if (isa == TB_ISA_THUMB) {
        if (ends_in_it)
            s->uc_noexit = true;
        return false;
    }
    if (!s->uc_noexit)
        return false;
    s->act_addr = a;
    s->retr_size = size;
    sim_stop(s, ACT_RETRANSLATE);
    return true;
}

/* Resets no_exit_request by having Unicorn translate one Thumb
 * instruction outside an IT block (a B . on a scratch page mapped for the
 * moment, in Thumb state with ITSTATE 0), then drops the block at act_addr
 * so that the restart translates it again, with its exit checks. */
/* uc_ctl_request_cache's control word, built unsigned: the header's
 * UC_CTL_READ_WRITE shifts an int 3 by 30 (undefined behaviour). */
#define CTL_REQUEST_CACHE                                                     \
    ((uc_control_type)((uint32_t)UC_CTL_TB_REQUEST_CACHE | (2u << 26) |      \
                       ((uint32_t)UC_CTL_IO_READ_WRITE << 30)))

int tb_sim_retranslate(tb_sim *s)
{
    static const uint8_t b_self[2] = {0xFE, 0xE7}; /* T1 B . */
    static const uint32_t pages[] = {0xFFFFF000u, 0x7FFFF000u, 0xBFFFF000u, 0x3FFFF000u,
                                     0xDFFFF000u, 0x5FFFF000u};
    uint32_t cpsr = 0, t, p = 0;
    bool mapped = false;
    uc_err e = UC_ERR_OK;

    for (size_t i = 0; i < sizeof pages / sizeof pages[0] && !mapped; i++) {
        p = pages[i];
        mapped = uc_mem_map(s->uc, p, 0x1000, UC_PROT_ALL) == UC_ERR_OK;
    }
    if (!mapped)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "no free page to reset Unicorn's translator "
                           "(before the ARM block at 0x%08x)", s->act_addr);
    if (uc_reg_read(s->uc, UC_ARM_REG_CPSR, &cpsr) != UC_ERR_OK) {
        e = UC_ERR_EXCEPTION;
    } else {
        t = (cpsr & ~CPSR_IT_MASK) | CPSR_T;
        if ((e = uc_mem_write(s->uc, p, b_self, sizeof b_self)) == UC_ERR_OK &&
            (e = uc_reg_write(s->uc, UC_ARM_REG_CPSR, &t)) == UC_ERR_OK &&
            (e = uc_ctl_remove_cache(s->uc, (uint64_t)p, (uint64_t)p + 2)) == UC_ERR_OK)
            e = uc_ctl(s->uc, CTL_REQUEST_CACHE, (uint64_t)p, (uc_tb *)NULL);
        if (uc_reg_write(s->uc, UC_ARM_REG_CPSR, &cpsr) != UC_ERR_OK && e == UC_ERR_OK)
            e = UC_ERR_EXCEPTION;
    }
    if (uc_ctl_remove_cache(s->uc, (uint64_t)p, (uint64_t)p + 2) != UC_ERR_OK && e == UC_ERR_OK)
        e = UC_ERR_EXCEPTION;
    if (uc_mem_unmap(s->uc, p, 0x1000) != UC_ERR_OK && e == UC_ERR_OK)
        e = UC_ERR_EXCEPTION;
    if (e == UC_ERR_OK &&
        uc_ctl_remove_cache(s->uc, (uint64_t)s->act_addr,
                            (uint64_t)s->act_addr + s->retr_size) !=
            UC_ERR_OK)
        e = UC_ERR_EXCEPTION;
    if (e != UC_ERR_OK)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot translate the ARM block at 0x%08x "
                           "again: %s", s->act_addr, uc_strerror(e));
    s->uc_noexit = false;
    s->retranslated++;
    return 0;
}

/* Data records (tb_sim_set_data): Unicorn's UC_HOOK_MEM_WRITE (before the
 * store, with the value stored) and UC_HOOK_MEM_READ_AFTER (after the
 * load, with the value loaded) fire per transfer, inside the instruction
 * and in its architectural order (probed on Unicorn 2.0.1: LDM/STM/PUSH/
 * POP lowest register at the lowest address first, A8.8.58/A8.8.199;
 * LDRD/STRD two words, address first; SWP/SWPB the load then the store;
 * no hook for instruction fetches, PLD, or a conditional load/store that
 * failed its condition; one READ_AFTER for an unaligned load that
 * crosses a page, where plain READ hooks fire for each part).  The
 * instruction running now is the pending one (reference path) or the
 * last the code hook saw (block path, whose records of the instructions
 * before it are delivered first): the buffer only ever holds the
 * transfers of one instruction, delivered after its record. */
void tb_sim_hook_mem_data(uc_engine *uc, uc_mem_type type, uint64_t address, int size,
                          int64_t value, void *user)
{
    tb_sim *s = user;
    const tb_centry *e;
    uint8_t flags;
    uint32_t a = (uint32_t)address;

    (void)uc;
    if (s->action != ACT_NONE)
        return;
    if (s->blk && s->pos > s->done) {
        unsigned k = s->pos - 1;

        if (k > s->done && tb_sim_blk_flush(s, k, s->blk->ins[k].ce.addr) < 0) {
            sim_stop(s, ACT_ERROR);
            return;
        }
        e = &s->blk->ins[k].ce;
    } else if (s->have_pend) {
        e = &s->pend.ce;
    } else {
        tb_sim_fail(s, TB_ERR_EMULATOR, "memory access to 0x%08x outside any "
                    "instruction", a);
        sim_stop(s, ACT_ERROR);
        return;
    }
    if (e->info & CE_EXCL)
        return; /* built from its registers (strex_data) */
    if (s->dat_n && s->dat_owner != e->addr) {
        tb_sim_fail(s, TB_ERR_EMULATOR, "transfers of 0x%08x and 0x%08x in one "
                    "buffer", s->dat_owner, e->addr);
        sim_stop(s, ACT_ERROR);
        return;
    }
    if (size != 1 && size != 2 && size != 4 && size != 8) {
        tb_sim_fail(s, TB_ERR_EMULATOR, "instruction at 0x%08x: a transfer of %d bytes "
                    "at 0x%08x", e->addr, size, a);
        sim_stop(s, ACT_ERROR);
        return;
    }
    if (s->dat_n + 2 > TB_DAT_MAX) {
        tb_sim_fail(s, TB_ERR_EMULATOR, "instruction at 0x%08x: more than %u transfers",
                    e->addr, TB_DAT_MAX - 2);
        sim_stop(s, ACT_ERROR);
        return;
    }
    flags = type == UC_MEM_WRITE ? TB_DATA_STORE : 0;
    if (sim_read_cpsr(s) & CPSR_E)
        flags |= TB_DATA_BE;
    s->dat_owner = e->addr;
    if (size == 8) {
        /* LDREXD/STREXD, VLDR/VSTR of a doubleword: two words, the lower
         * address first; the hook's value is the doubleword as loaded in
         * the data endianness, so the word at the lower address is its
         * high half when big-endian (A8.8.77). */
        uint64_t v = (uint64_t)value;
        uint32_t lo = (uint32_t)v, hi = (uint32_t)(v >> 32);
        bool be = flags & TB_DATA_BE;

        s->dat[s->dat_n++] = (struct tb_dat){a, be ? hi : lo, 4, flags};
        s->dat[s->dat_n++] = (struct tb_dat){a + 4, be ? lo : hi, 4, flags};
        return;
    }
    s->dat[s->dat_n++] = (struct tb_dat){
        a, size == 4 ? (uint32_t)value : (uint32_t)value & ((1u << (8 * size)) - 1),
        (uint8_t)size, flags};
}
