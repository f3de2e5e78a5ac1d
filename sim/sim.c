/*
 * The simulator core: Unicorn runs the program and the run becomes exec
 * records.  Two paths give identical records (tests/test_sim_block.c):
 * the block path (default, block.c) builds them a block at a time;
 * the reference path builds each in a code hook per instruction (an
 * exception return's in the next block hook, tb_sim_hook_block_ref;
 * records.c).
 *
 * Decoded facts come from a per-address cache (Capstone only on a
 * miss), the CPSR is read only where nothing else can tell (ARM
 * conditional non-branches, ISA after indirect branches, while an
 * interrupt is pending).  A record is delivered once its next address
 * is known.
 *
 * Unicorn 2.0.1 facts this relies on (probed): a code hook fires before
 * its instruction and uc_emu_stop there stops before it executes (in an
 * ARM block only once it is translated with its exit checks, which
 * tb_sim_tb_new sees to; not inside an IT block, where no interrupt is
 * taken); the hook
 * fires for condition-failed ARM instructions but not for condition-failed
 * instructions inside an IT block, and the CPSR IT bits read in a hook are
 * stale, so IT state is tracked here (IHI0406C A2.5.2 ITSTATE), except
 * after an exception return, which restores them: they are current in
 * the block hook of the block it went to, and 0 in that block's code
 * hooks when it is inside an IT block; SVC
 * arrives as UC_HOOK_INTR 2 with the PC already advanced; Unicorn takes
 * no exception itself, so entries are done here (exceptions.c; IHI0406C
 * B1.8, B1.9).
 *
 * The parts, one file each, share the state in sim_internal.h: cache.c
 * (the decode cache), records.c (records, the pending instruction,
 * events, the reference path), block.c (the block path), hooks.c (the
 * hooks of both paths), exceptions.c (what a stop of the emulator does,
 * exception entry); this file has the simulator's life, its registers
 * and the run loop.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "v7m.h"


const char *tb_sim_stop_name(tb_sim_stop st)
{
    switch (st) {
    case TB_SIM_STOP_NONE: return "none";
    case TB_SIM_STOP_EXIT: return "exit";
    case TB_SIM_STOP_WFI: return "wfi";
    case TB_SIM_STOP_BUDGET: return "budget";
    case TB_SIM_STOP_FAULT: return "fault";
    }
    return "unknown";
}

const char *tb_sim_stop_text(tb_sim_stop st)
{
    switch (st) {
    case TB_SIM_STOP_NONE: return "did not stop";
    case TB_SIM_STOP_EXIT: return "reached the exit address";
    case TB_SIM_STOP_WFI: return "WFI with no interrupt left to come";
    case TB_SIM_STOP_BUDGET: return "stopped by the budget";
    case TB_SIM_STOP_FAULT:
        return "a fault loop: a prefetch abort at the prefetch abort vector itself "
               "(not mapped: no vector table?), so every entry aborts again";
    }
    return "unknown";
}

int tb_sim_fail(tb_sim *s, int err, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    va_end(ap);
    s->err = err;
    return err;
}

const char *tb_sim_errmsg(const tb_sim *s)
{
    return s ? s->msg : "";
}

tb_sim *tb_sim_new(tb_sim_cpu cpu)
{
    static const int models[] = {
        [TB_SIM_CPU_A15] = UC_CPU_ARM_CORTEX_A15,
        [TB_SIM_CPU_A9] = UC_CPU_ARM_CORTEX_A9,
        [TB_SIM_CPU_A7] = UC_CPU_ARM_CORTEX_A7,
        [TB_SIM_CPU_M3] = UC_CPU_ARM_CORTEX_M3,
        [TB_SIM_CPU_M4] = UC_CPU_ARM_CORTEX_M4,
    };
    tb_sim *s;

    if ((unsigned)cpu > TB_SIM_CPU_M4)
        return NULL;
    s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cpu = cpu;
    s->cache = calloc(TB_CACHE_SIZE, sizeof *s->cache);
    s->cls = tb_classifier_new();
    /* Cortex-M: Unicorn's M-class mode, Thumb only (shared/docs
     * etmv3-v7m.md U1: the model is set right after uc_open). */
    if (!s->cache || !s->cls || (tb_sim_cpu_is_m(cpu) && tb_v7m_new(s) < 0) ||
        uc_open(UC_ARCH_ARM, tb_sim_cpu_is_m(cpu) ? UC_MODE_THUMB | UC_MODE_MCLASS : UC_MODE_ARM,
                &s->uc) != UC_ERR_OK) {
        s->uc = NULL;
        tb_sim_free(s);
        return NULL;
    }
    /* Only accepted right after uc_open.  The CPU as it is then is what
     * tb_sim_rewind() goes back to. */
    if (uc_ctl_set_cpu_model(s->uc, models[cpu]) != UC_ERR_OK ||
        uc_context_alloc(s->uc, &s->ctx0) != UC_ERR_OK ||
        uc_context_save(s->uc, s->ctx0) != UC_ERR_OK) {
        tb_sim_free(s);
        return NULL;
    }
    tb_scenario_init(&s->sc);
    s->sc.cpu = cpu;
    return s;
}

int tb_sim_rewind(tb_sim *s)
{
    uc_engine *uc;
    uc_context *ctx0;
    tb_classifier *cls;
    tb_sim_cpu cpu;
    tb_centry *cache;
    tb_block **blocks;
    uc_mem_region *r = NULL;
    uint32_t n = 0;

    if (!s)
        return TB_ERR_INVAL;
    /* Memory: every region goes, with its TLB entries and the code
     * Unicorn translated from it (tests/test_sim.c rewind_forgets_the_
     * code_it_ran; a whole-cache flush is not needed, and in Unicorn
     * 2.0.1 it grows the process by hundreds of MB); then the CPU state
     * of creation. */
    if (uc_mem_regions(s->uc, &r, &n) != UC_ERR_OK)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "rewind: cannot list memory regions");
    for (uint32_t i = 0; i < n; i++) {
        if (uc_mem_unmap(s->uc, r[i].begin, (size_t)(r[i].end - r[i].begin + 1)) !=
            UC_ERR_OK) {
            unsigned long long at = r[i].begin;

            uc_free(r);
            return tb_sim_fail(s, TB_ERR_EMULATOR, "rewind: cannot unmap 0x%08llx", at);
        }
    }
    uc_free(r);
    if (uc_context_restore(s->uc, s->ctx0) != UC_ERR_OK)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "rewind: cannot restore the CPU");
    /* The simulator's own state as tb_sim_new left it; what it allocated
     * stays (the caches are cleared where a run starts; a run removes
     * its hooks when it ends). */
    tb_sim_blk_free_all(s);
    free(s->syms);
    free(s->strtab);
    uc = s->uc;
    ctx0 = s->ctx0;
    cls = s->cls;
    cpu = s->cpu;
    cache = s->cache;
    blocks = s->blocks;
    memset(s, 0, sizeof *s);
    s->uc = uc;
    s->ctx0 = ctx0;
    s->cls = cls;
    s->cpu = cpu;
    s->cache = cache;
    s->blocks = blocks;
    tb_scenario_init(&s->sc);
    s->sc.cpu = cpu;
    return 0;
}

void tb_sim_free(tb_sim *s)
{
    if (!s)
        return;
    if (s->ctx0)
        uc_context_free(s->ctx0);
    if (s->uc)
        uc_close(s->uc);
    tb_classifier_free(s->cls);
    tb_v7m_free(s);
    tb_sim_blk_free_all(s);
    free(s->bbuf);
    free(s->blocks);
    free(s->cache);
    free(s->syms);
    free(s->strtab);
    free(s);
}

static int resolve(tb_sim *s, const char *expr, uint32_t *out)
{
    char *end;
    unsigned long long v;

    if (tb_sim_symbol(s, expr, out) == 0) {
        *out &= ~1u; /* a Thumb function's address */
        return 0;
    }
    v = strtoull(expr, &end, 0);
    if (*expr && !*end && v <= 0xFFFFFFFFull) {
        *out = (uint32_t)v;
        return 0;
    }
    return tb_sim_fail(s, TB_ERR_NOT_FOUND, "scenario: no symbol '%s'", expr);
}

bool tb_sim_has_exit(const tb_sim *s)
{
    return s && s->has_exit;
}

int tb_sim_set_scenario(tb_sim *s, const tb_scenario *sc)
{
    int rc;

    if (!s || !sc || sc->n_events > TB_SCN_MAX_EVENTS || sc->n_maps > TB_SCN_MAX_MAPS)
        return TB_ERR_INVAL;
    s->sc = *sc;
    s->has_exit = false;
    if (sc->exit[0] && strcmp(sc->exit, "none")) {
        if ((rc = resolve(s, sc->exit, &s->exit_addr)) == 0) {
            s->has_exit = true;
        } else if (sc->exit_set || strcmp(sc->exit, "_exit")) {
            /* Named on purpose (a scenario's exit = _exit too): running
             * on without it would run forever or to the budget with no
             * word of why. */
            return tb_sim_fail(s, rc, "exit symbol '%s' not found in the program's "
                               "symbol table (exit = none runs to WFI or the budget)",
                               sc->exit);
        } else {
            s->err = 0; /* the default exit symbol is optional */
            s->msg[0] = '\0';
        }
    }
    for (unsigned i = 0; i < sc->n_maps; i++)
        if ((rc = tb_sim_map(s, sc->maps[i].addr, sc->maps[i].size)) < 0)
            return rc;
    memset(s->ev, 0, sizeof s->ev);
    if (!s->m && (sc->systick_every || sc->systick_count))
        return tb_sim_fail(s, TB_ERR_CONFIG, "scenario: [systick] needs cpu = cortex-m3 or "
                           "cortex-m4 (the running cpu is %s)", tb_sim_cpu_name(s->cpu));
    for (unsigned i = 0; i < sc->n_events; i++) {
        const tb_scn_event *e = &sc->events[i];

        if (e->kind != TB_EXC_IRQ && e->kind != TB_EXC_FIQ && e->kind != TB_EXC_V7M &&
            e->kind != TB_EXC_DEBUG_HALT)
            return TB_ERR_INVAL;
        if (s->m && e->kind == TB_EXC_DEBUG_HALT)
            return tb_sim_fail(s, TB_ERR_CONFIG, "scenario: [debug] is for the A/R profile "
                               "(v7-M halting debug is not modelled); the running cpu is %s",
                               tb_sim_cpu_name(s->cpu));
        if (!s->m && (e->kind == TB_EXC_V7M || e->has_line || e->has_priority))
            return tb_sim_fail(s, TB_ERR_CONFIG, "scenario: %s needs cpu = cortex-m3 or "
                               "cortex-m4 (the running cpu is %s)",
                               e->kind == TB_EXC_V7M ? "[nmi]"
                               : e->has_line        ? "[irq] line ="
                                                    : "[irq] priority =",
                               tb_sim_cpu_name(s->cpu));
        if (!s->m && e->unstack)
            return tb_sim_fail(s, TB_ERR_CONFIG, "scenario: unstack = true needs cpu = "
                               "cortex-m3 or cortex-m4 (an ARMv7-M exception return that "
                               "unstacks); the running cpu is %s", tb_sim_cpu_name(s->cpu));
        if (e->at_addr[0]) {
            if ((rc = resolve(s, e->at_addr, &s->ev[i].addr)) < 0)
                return rc;
            s->ev[i].has_addr = true;
        }
        s->ev[i].next_insn = e->at_insn;
        s->ev[i].done = !e->has_insn && !e->at_addr[0];
    }
    if (s->m && (rc = tb_v7m_scenario(s)) < 0)
        return rc;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Registers. */

int tb_sim_read_reg(tb_sim *s, unsigned reg, uint32_t *value)
{
    int id;

    if (!s || !value || reg > 16)
        return TB_ERR_INVAL;
    if (reg == 16)
        id = UC_ARM_REG_CPSR;
    else if (reg == 13)
        id = UC_ARM_REG_SP;
    else if (reg == 14)
        id = UC_ARM_REG_LR;
    else if (reg == 15)
        id = UC_ARM_REG_PC;
    else
        id = UC_ARM_REG_R0 + (int)reg;
    return uc_reg_read(s->uc, id, value) == UC_ERR_OK ? 0 : TB_ERR_EMULATOR;
}

int tb_sim_read_mem(tb_sim *s, uint32_t addr, void *buf, size_t len)
{
    if (!s || (!buf && len))
        return TB_ERR_INVAL;
    return uc_mem_read(s->uc, addr, buf, len) == UC_ERR_OK ? 0 : TB_ERR_NO_MEMORY;
}

/* ------------------------------------------------------------------ */
/* The run. */

static void hooks_del(tb_sim *s)
{
    uc_hook_del(s->uc, s->h_block);
    uc_hook_del(s->uc, s->h_code);
    uc_hook_del(s->uc, s->h_intr);
    uc_hook_del(s->uc, s->h_mem);
    if (s->data)
        uc_hook_del(s->uc, s->h_data);
}

int tb_sim_set_data(tb_sim *s, bool on)
{
    if (!s)
        return TB_ERR_INVAL;
    if (s->ran)
        return tb_sim_fail(s, TB_ERR_STATE, "already ran");
    s->data = on;
    return 0;
}

int tb_sim_set_dual(tb_sim *s, bool on)
{
    if (!s)
        return TB_ERR_INVAL;
    if (s->ran)
        return tb_sim_fail(s, TB_ERR_STATE, "already ran");
    s->dual = on;
    return 0;
}

int tb_sim_set_pcfirst(tb_sim *s, bool on)
{
    if (!s)
        return TB_ERR_INVAL;
    if (s->ran)
        return tb_sim_fail(s, TB_ERR_STATE, "already ran");
    s->pcfirst = on;
    return 0;
}

int tb_sim_set_reference(tb_sim *s, bool on)
{
    if (!s)
        return TB_ERR_INVAL;
    if (s->ran)
        return tb_sim_fail(s, TB_ERR_STATE, "already ran");
    s->reference = on;
    return 0;
}

int tb_sim_batch_flush(tb_sim *s)
{
    size_t n = s->bn;

    s->bn = 0;
    if (n && s->bcb(s->cb_ctx, s->bbuf, n))
        return tb_sim_fail(s, TB_ERR_STOPPED, "the record callback asked to stop");
    return 0;
}

int tb_sim_run_batch(tb_sim *s, tb_exec_batch_cb cb, void *ctx, tb_sim_result *res)
{
    int rc;

    if (!s || !cb)
        return TB_ERR_INVAL;
    if (!s->bbuf && !(s->bbuf = malloc(TB_SIM_BATCH * sizeof *s->bbuf)))
        return tb_sim_fail(s, TB_ERR_NOMEM, "no memory for the record batch");
    s->bcb = cb;
    s->bn = 0;
    rc = tb_sim_run(s, NULL, ctx, res);
    /* The records made before the end, a stop or a failure: the consumer
     * sees what one-by-one delivery would have shown it (a failure's own
     * message stays). */
    if (s->bn) {
        if (rc >= 0)
            rc = tb_sim_batch_flush(s);
        else
            cb(ctx, s->bbuf, s->bn);
    }
    s->bn = 0;
    s->bcb = NULL;
    return rc;
}

int tb_sim_run(tb_sim *s, tb_exec_cb cb, void *ctx, tb_sim_result *res)
{
    tb_sim_result dummy;
    tb_exec_record r;
    int rc = 0;

    if (!s)
        return TB_ERR_INVAL;
    if (!res)
        res = &dummy;
    memset(res, 0, sizeof *res);
    if (!s->loaded)
        return tb_sim_fail(s, TB_ERR_STATE, "nothing loaded");
    if (s->ran)
        return tb_sim_fail(s, TB_ERR_STATE, "already ran (load again in a new sim)");
    s->ran = true;
    s->cb = cb;
    s->cb_ctx = ctx;
    s->err = 0;
    s->msg[0] = '\0';
    memset(s->cache, 0, TB_CACHE_SIZE * sizeof *s->cache);
    s->rng = s->sc.seed ? s->sc.seed : 0x9E3779B97F4A7C15ull;
    s->ns = false;
    /* Unicorn resets Non-secure: Secure first, so that the SCTLR/VBAR
     * below are the Secure state's. */
    if (s->sc.secure && (tb_sim_scr_secure(s) < 0 || tb_sim_read_ns(s, &s->ns) < 0 || s->ns))
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot enter Secure state (SCR)");
    if (s->sc.high_vectors || s->sc.has_vbar) {
        uint32_t v;

        if (sim_cp15(s, false, 1, 0, 0, 0, &v) < 0)
            return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot read SCTLR");
        v = s->sc.high_vectors ? v | (1u << 13) : v & ~(1u << 13);
        if (sim_cp15(s, true, 1, 0, 0, 0, &v) < 0 ||
            (s->sc.has_vbar && sim_cp15(s, true, 12, 0, 0, 0, &s->sc.vbar) < 0))
            return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot write SCTLR/VBAR");
    }
    if (s->m || sim_cp15(s, false, 13, 0, 0, 1, &s->ctxid) < 0)
        s->ctxid = 0;
    /* Cortex-M: the System Control Space, and reset from the vector
     * table (v7m.c). */
    if (s->m && (rc = tb_v7m_start(s)) < 0)
        return rc;
    tb_sim_update_next_check(s);
    if (!s->reference && !s->blocks &&
        !(s->blocks = calloc((size_t)1 << TB_BLK_CACHE_BITS, sizeof *s->blocks)))
        return tb_sim_fail(s, TB_ERR_NOMEM, "no memory for the block cache");
    s->blk = NULL;
    s->dat_n = 0;
    s->dat_drop = false;
    if (uc_hook_add(s->uc, &s->h_block, UC_HOOK_BLOCK,
                    s->reference ? (void *)tb_sim_hook_block_ref : (void *)tb_sim_hook_block,
                    s, 1, 0) ||
        uc_hook_add(s->uc, &s->h_code, UC_HOOK_CODE,
                    s->reference ? (void *)tb_sim_hook_code : (void *)tb_sim_hook_code_blk,
                    s, 1, 0) ||
        uc_hook_add(s->uc, &s->h_intr, UC_HOOK_INTR, (void *)tb_sim_hook_intr, s, 1, 0) ||
        uc_hook_add(s->uc, &s->h_mem, UC_HOOK_MEM_UNMAPPED | UC_HOOK_MEM_PROT,
                    (void *)tb_sim_hook_mem_fault, s, 1, 0) ||
        (s->data && uc_hook_add(s->uc, &s->h_data, UC_HOOK_MEM_READ_AFTER | UC_HOOK_MEM_WRITE,
                                (void *)tb_sim_hook_mem_data, s, 1, 0)))
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot add hooks");
    s->act_addr = s->entry;
    s->isa = s->entry_isa;
    s->isa_known = true;
    for (;;) {
        uint64_t begin = s->act_addr | (s->isa == TB_ISA_THUMB ? 1u : 0u);
        uc_err uerr;

        s->action = ACT_NONE;
        /* "until" 1 is never an instruction address. */
        uerr = uc_emu_start(s->uc, begin, 1, 0, 0);
        if (!s->err && tb_sim_blk_settle(s) < 0 && !s->err)
            s->err = TB_ERR_EMULATOR;
        if (s->err) {
            rc = s->err;
            break;
        }
        rc = tb_sim_handle_stop(s, uerr, res);
        if (rc != 0)
            break;
        /* Exceptions count against the budget apart from instructions
         * (sim.h): a loop of aborts runs no instruction and would never
         * reach the instruction check in the hooks. */
        if (s->sc.max_insns && s->exceptions >= s->sc.max_insns) {
            res->stop = TB_SIM_STOP_BUDGET;
            res->budget_exceptions = true;
            res->stop_addr = s->act_addr;
            rc = 1;
            break;
        }
    }
    hooks_del(s);
    s->blk = NULL;
    tb_sim_blk_free_all(s);
    res->insns = s->count;
    res->cycles = s->cycles;
    res->exceptions = s->exceptions;
    if (rc < 0) {
        res->stop = TB_SIM_STOP_NONE;
        return rc;
    }
    memset(&r, 0, sizeof r);
    r.kind = TB_REC_END;
    r.seq = s->count;
    r.cycle = s->cycles;
    rc = sim_deliver(s, &r);
    return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------ */
/* Hooks for the v7-M model (sim_internal.h). */

void tb_sim_stop_for(tb_sim *s, enum tb_action act)
{
    sim_stop(s, act);
}

int tb_sim_deliver(tb_sim *s, const tb_exec_record *r)
{
    return sim_deliver(s, r);
}

int tb_sim_finish(tb_sim *s, uint32_t a, uint8_t extra_flags)
{
    if (!s->have_pend)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "no instruction to complete at 0x%08x", a);
    s->pend.flags |= extra_flags;
    return tb_sim_finish_insn(s, a, 0);
}
