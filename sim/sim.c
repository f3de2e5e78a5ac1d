/*
 * The simulator core: Unicorn runs the program and the run becomes exec
 * records.  Two paths give identical records (tests/test_sim_block.c):
 * the block path (default, see "Block path" below) builds them a block
 * at a time; the reference path builds each in a code hook per
 * instruction.
 *
 * Decoded facts come from a per-address cache (Capstone only on a
 * miss), the CPSR is read only where nothing else can tell (ARM
 * conditional non-branches, ISA after indirect branches, while an
 * interrupt is pending).  A record is delivered once its next address
 * is known.
 *
 * Unicorn 2.0.1 facts this relies on (probed): a code hook fires before
 * its instruction and uc_emu_stop there stops before it executes; the hook
 * fires for condition-failed ARM instructions but not for condition-failed
 * instructions inside an IT block, and the CPSR IT bits read in a hook are
 * stale, so IT state is tracked here (IHI0406C A2.5.2 ITSTATE); SVC
 * arrives as UC_HOOK_INTR 2 with the PC already advanced; Unicorn takes
 * no exception itself, so entries are done here (IHI0406C B1.8, B1.9).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define CPSR_T (1u << 5)
#define CPSR_F (1u << 6)
#define CPSR_I (1u << 7)
#define CPSR_A (1u << 8)
#define CPSR_E (1u << 9)
#define CPSR_J (1u << 24)
#define CPSR_IT_MASK 0x0600FC00u

static void blk_free_all(tb_sim *s);

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
    };
    tb_sim *s;

    if ((unsigned)cpu > TB_SIM_CPU_A7)
        return NULL;
    s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cpu = cpu;
    s->cache = calloc(TB_CACHE_SIZE, sizeof *s->cache);
    s->cls = tb_classifier_new();
    if (!s->cache || !s->cls ||
        uc_open(UC_ARCH_ARM, UC_MODE_ARM, &s->uc) != UC_ERR_OK) {
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
    blk_free_all(s);
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
    blk_free_all(s);
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
    for (unsigned i = 0; i < sc->n_events; i++) {
        const tb_scn_event *e = &sc->events[i];

        if (e->kind != TB_EXC_IRQ && e->kind != TB_EXC_FIQ)
            return TB_ERR_INVAL;
        if (e->at_addr[0]) {
            if ((rc = resolve(s, e->at_addr, &s->ev[i].addr)) < 0)
                return rc;
            s->ev[i].has_addr = true;
        }
        s->ev[i].next_insn = e->at_insn;
        s->ev[i].done = !e->has_insn && !e->at_addr[0];
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Registers. */

static uint32_t read_cpsr(tb_sim *s)
{
    uint32_t v = 0;

    uc_reg_read(s->uc, UC_ARM_REG_CPSR, &v);
    return v;
}

static int cp15(tb_sim *s, bool write, unsigned crn, unsigned crm,
                unsigned opc1, unsigned opc2, uint32_t *val)
{
    uc_arm_cp_reg r = {15, 0, 0, crn, crm, opc1, opc2, 0};
    uc_err e;

    if (write) {
        r.val = *val;
        e = uc_reg_write(s->uc, UC_ARM_REG_CP_REG, &r);
    } else {
        e = uc_reg_read(s->uc, UC_ARM_REG_CP_REG, &r);
        *val = (uint32_t)r.val;
    }
    return e == UC_ERR_OK ? 0 : TB_ERR_EMULATOR;
}

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

static tb_centry *lookup(tb_sim *s, uint32_t a, uint8_t isa)
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

/* ------------------------------------------------------------------ */
/* Records. */

static uint64_t rng_next(tb_sim *s)
{
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 0x2545F4914F6CDD1Dull;
}

static void stop(tb_sim *s, enum tb_action act)
{
    s->action = act;
    uc_emu_stop(s->uc);
}

static int deliver(tb_sim *s, const tb_exec_record *r)
{
    if (s->cb && s->cb(s->cb_ctx, r)) {
        tb_sim_fail(s, TB_ERR_STOPPED, "the record callback asked to stop");
        return TB_ERR_STOPPED;
    }
    return 0;
}

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
    if (read_cpsr(s) & CPSR_E)
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
static __attribute__((noinline)) int emit_data(tb_sim *s, const tb_centry *e,
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
        rc = deliver(s, &r);
    }
    s->dat_n = 0;
    return rc;
}

/* The security state now: Secure iff Monitor mode or SCR.NS = 0
 * (IHI0406C B1.5.1); Hyp is never entered (docs/ns-hyp.md). */
static int read_ns(tb_sim *s, bool *ns)
{
    uint32_t scr = 0;

    if (cp15(s, false, 1, 1, 0, 0, &scr) < 0)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot read SCR");
    *ns = (read_cpsr(s) & 0x1Fu) != 0x16u && (scr & 1u);
    return 0;
}

/* SCR.NS := 0 through the host: Secure state (docs/ns-hyp.md). */
static int scr_secure(tb_sim *s)
{
    uint32_t scr = 0;

    if (cp15(s, false, 1, 1, 0, 0, &scr) < 0)
        return TB_ERR_EMULATOR;
    scr &= ~1u;
    return cp15(s, true, 1, 1, 0, 0, &scr);
}

/* A state record when the security state changed (scenario secure). */
static int check_state(tb_sim *s)
{
    tb_exec_record r;
    bool ns;
    int rc;

    if ((rc = read_ns(s, &ns)) < 0 || ns == s->ns)
        return rc;
    s->ns = ns;
    memset(&r, 0, sizeof r);
    r.kind = TB_REC_STATE;
    r.seq = s->count;
    r.cycle = s->cycles;
    r.u.state.ns = ns;
    return deliver(s, &r);
}

/* Delivers the record of the instruction e (in isa) that went to next,
 * then a context record when it changed CONTEXTIDR.  Both paths build
 * every record here, so they share the cycle model's draws too. */
static int emit_rec(tb_sim *s, const tb_centry *e, const tb_exec_record *tpl,
                    uint8_t isa, uint32_t next, uint8_t next_isa, uint8_t flags)
{
    tb_exec_record r;
    unsigned cost = 1;
    int rc;

    if ((flags & TB_INSN_TAKEN) && !(flags & TB_INSN_COND_FAILED))
        cost += 2;
    if ((e->info & CE_MEM) && !(flags & TB_INSN_COND_FAILED)) {
        uint64_t x = rng_next(s);

        cost += 1;
        if ((x & 15) == 0)
            cost += 1 + (unsigned)((x >> 4) & 3);
    }
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
    if ((rc = deliver(s, &r)) < 0)
        return rc;
    if ((s->dat_n || (e->info & CE_EXCL)) && (rc = emit_data(s, e, flags)) < 0)
        return rc;
    if ((e->info & CE_SECST) && !(flags & TB_INSN_COND_FAILED) &&
        (rc = check_state(s)) < 0)
        return rc;
    if ((e->info & CE_CTXID) && !(flags & TB_INSN_COND_FAILED)) {
        uint32_t v;

        if (cp15(s, false, 13, 0, 0, 1, &v) == 0 && v != s->ctxid) {
            s->ctxid = v;
            memset(&r, 0, sizeof r);
            r.kind = TB_REC_CONTEXT;
            r.seq = s->count;
            r.cycle = s->cycles;
            r.u.ctx.context_id = v;
            return deliver(s, &r);
        }
    }
    return 0;
}

static int emit_insn(tb_sim *s, const tb_centry *e, uint8_t isa, uint32_t next,
                     uint8_t next_isa, uint8_t flags)
{
    return emit_rec(s, e, NULL, isa, next, next_isa, flags);
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
static uint8_t base_flags(const tb_centry *e, uint8_t isa, uint8_t *it)
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
static void make_pending(tb_sim *s, const tb_centry *e, uint8_t isa, bool hooked,
                         int passed)
{
    struct tb_pend *p = &s->pend;
    uint8_t flags = base_flags(e, isa, &s->itstate);

    p->ce = *e;
    p->isa = isa;
    if (flags & TB_INSN_IN_IT) {
        /* Unicorn hooks only the IT-block instructions that pass. */
        if (passed == 0 || (passed < 0 && !hooked))
            flags |= TB_INSN_COND_FAILED;
    } else if (e->info & CE_ARMCOND) {
        if (passed < 0)
            passed = tb_cond_passed(e->cond, read_cpsr(s));
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
static int flow_check(tb_sim *s, const tb_centry *e, uint8_t isa, uint8_t *flagsp,
                      uint32_t a, uint32_t hsize, uint8_t *nisa)
{
    uint32_t seq = e->addr + e->size;
    uint8_t flags = *flagsp;
    bool taken = false;

    if (is_direct(e->wp) && (e->info & CE_TARGET)) {
        if (e->target == seq && a == seq) {
            taken = !(flags & TB_INSN_COND_FAILED) &&
                    (e->cond >= 14 || tb_cond_passed(e->cond, read_cpsr(s)));
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
    /* ISA of the next instruction. */
    if (hsize == 2) {
        *nisa = TB_ISA_THUMB;
    } else if (taken && (is_indirect(e->wp) || (e->info & CE_EXC_RET))) {
        *nisa = (read_cpsr(s) & CPSR_T) ? TB_ISA_THUMB : TB_ISA_ARM;
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
static int finish(tb_sim *s, uint32_t a, uint32_t size)
{
    struct tb_pend *p = &s->pend;
    uint32_t seq = p->ce.addr + p->ce.size;
    uint8_t flags, nisa = p->isa;
    int rc;

    /* Skipped IT-block instructions (failed condition). */
    for (int guard = 0; p->isa == TB_ISA_THUMB && (s->itstate & 0xF) &&
                        a != seq && guard < 4; guard++) {
        tb_centry *e = lookup(s, seq, TB_ISA_THUMB);

        if (!e)
            return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot read code at 0x%08x", seq);
        if ((rc = emit_insn(s, &p->ce, p->isa, seq, TB_ISA_THUMB, p->flags)) < 0)
            return rc;
        make_pending(s, e, TB_ISA_THUMB, false, -1);
        seq = p->ce.addr + p->ce.size;
    }
    flags = p->flags;
    if ((rc = flow_check(s, &p->ce, p->isa, &flags, a, size, &nisa)) < 0)
        return rc;
    s->have_pend = false;
    s->isa = nisa;
    s->isa_known = true;
    return emit_insn(s, &p->ce, p->isa, a, nisa, flags);
}

/* ------------------------------------------------------------------ */
/* Events. */

static void update_next_check(tb_sim *s)
{
    uint64_t n = UINT64_MAX;

    if (s->sc.max_insns)
        n = s->sc.max_insns;
    for (unsigned i = 0; i < s->sc.n_events; i++)
        if (!s->ev[i].done && s->sc.events[i].has_insn && s->ev[i].next_insn < n)
            n = s->ev[i].next_insn;
    if (s->pending_irq)
        n = 0;
    s->next_check = n;
}

static void raise_event(tb_sim *s, unsigned i)
{
    const tb_scn_event *e = &s->sc.events[i];
    struct tb_ev_state *st = &s->ev[i];

    s->pending_irq |= e->kind == TB_EXC_FIQ ? 2u : 1u;
    st->raised++;
    if (e->count && st->raised >= e->count) {
        st->done = true;
    } else if (e->has_insn && e->every) {
        st->next_insn += e->every;
    } else if (e->has_insn) {
        st->done = true;
    }
}

/* Slow path before the instruction at a runs.  Returns 1 when the run
 * stops before it, 0 to go on. */
static int slow_path(tb_sim *s, uint32_t a, const tb_centry *e, uint8_t isa)
{
    if (s->has_exit && a == s->exit_addr) {
        s->act_addr = a;
        stop(s, ACT_EXIT);
        return 1;
    }
    if (s->sc.max_insns && s->count >= s->sc.max_insns) {
        s->act_addr = a;
        stop(s, ACT_BUDGET);
        return 1;
    }
    for (unsigned i = 0; i < s->sc.n_events; i++) {
        struct tb_ev_state *st = &s->ev[i];

        if (st->done)
            continue;
        if (st->has_addr && (e->info & CE_SPECIAL) && st->addr == a &&
            ++st->arrivals >= s->sc.events[i].hit) {
            st->arrivals = 0;
            raise_event(s, i);
        } else if (s->sc.events[i].has_insn && s->count >= st->next_insn &&
                   !st->has_addr) {
            raise_event(s, i);
        }
    }
    /* Interrupts are taken between instructions, never inside an IT
     * block (Unicorn would defer the stop to the block's end). */
    if (s->pending_irq && !(isa == TB_ISA_THUMB && (s->itstate & 0xF))) {
        uint32_t cpsr = read_cpsr(s);

        if ((s->pending_irq & 2) && !(cpsr & CPSR_F)) {
            s->pending_irq &= ~2u;
            s->act_addr = a;
            s->act_isa = isa;
            stop(s, ACT_FIQ);
            update_next_check(s);
            return 1;
        }
        if ((s->pending_irq & 1) && !(cpsr & CPSR_I)) {
            s->pending_irq &= ~1u;
            s->act_addr = a;
            s->act_isa = isa;
            stop(s, ACT_IRQ);
            update_next_check(s);
            return 1;
        }
    }
    update_next_check(s);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Reference path: one code hook per instruction does everything. */

static void hook_code(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
    tb_sim *s = user;
    uint32_t a = (uint32_t)address;
    tb_centry *e;
    uint8_t isa;

    (void)uc;
    if (s->action != ACT_NONE)
        return;
    if (s->have_pend && finish(s, a, size) < 0) {
        stop(s, ACT_ERROR);
        return;
    }
    isa = size == 2 ? TB_ISA_THUMB : s->isa;
    if (!s->isa_known)
        isa = (read_cpsr(s) & CPSR_T) ? TB_ISA_THUMB : TB_ISA_ARM;
    s->isa = isa;
    e = lookup(s, a, isa);
    if (!e) {
        tb_sim_fail(s, TB_ERR_EMULATOR, "cannot decode code at 0x%08x", a);
        stop(s, ACT_ERROR);
        return;
    }
    if (((e->info & CE_SPECIAL) || s->count >= s->next_check) &&
        slow_path(s, a, e, isa))
        return;
    make_pending(s, e, isa, true, -1);
    if (e->info & CE_WFI) {
        s->act_addr = a;
        stop(s, ACT_WFI);
    }
}

/* ------------------------------------------------------------------ */
/* Block path.  Unicorn's block hook reports each translation block
 * (address and byte size) before it runs; the block is decoded once and
 * cached.  Inside a block every instruction but the last is a
 * non-branch that falls through (Unicorn ends a block at every branch),
 * and the next block's address is where the last one went, so records
 * are built for a whole block at the next block hook.  The code hook
 * only notes which instructions ran (IT-block instructions that fail
 * are not hooked) and stops at the few that need the slow path: ARM
 * conditional non-branches (flags now), exit and event addresses, WFI,
 * the instruction after an MCR to CONTEXTIDR, and any instruction at or
 * after the next count at which an event or the budget is due. */

static void blk_free_all(tb_sim *s)
{
    if (!s->blocks)
        return;
    for (size_t i = 0; i < (1u << TB_BLK_CACHE_BITS); i++) {
        free(s->blocks[i]);
        s->blocks[i] = NULL;
    }
}

/* The decoded block at a (Unicorn's size, ISA and ITSTATE at entry).
 * Instructions come from the per-address cache, so self-modifying code
 * is as stale here as in the reference path (sim.h). */
static tb_block *blk_get(tb_sim *s, uint32_t a, uint32_t size, uint8_t isa, uint8_t it)
{
    size_t h = ((a >> 1) ^ (a >> (TB_BLK_CACHE_BITS + 1)) ^ isa) &
               ((1u << TB_BLK_CACHE_BITS) - 1);
    tb_block *b = s->blocks[h];
    uint32_t off = 0;
    unsigned n = 0;

    if (b && b->addr == a && b->size == size && b->isa == isa && b->it_start == it)
        return b;
    while (off < size) {
        tb_binsn *d = &s->tmp[n];
        const tb_centry *e;

        if (n == TB_BLK_MAX_INSNS) {
            tb_sim_fail(s, TB_ERR_EMULATOR, "block at 0x%08x has more than %u "
                        "instructions", a, TB_BLK_MAX_INSNS);
            return NULL;
        }
        if (!(e = lookup(s, a + off, isa))) {
            tb_sim_fail(s, TB_ERR_EMULATOR, "cannot decode code at 0x%08x", a + off);
            return NULL;
        }
        d->ce = *e;
        d->it_before = it;
        d->flags0 = base_flags(e, isa, &it);
        d->it_after = it;
        if (d->flags0 & TB_INSN_IN_IT)
            d->ce.info |= CE_IT_MEMBER;
        /* The record of an MCR to CONTEXTIDR or SCR reads the register
         * before the next instruction runs. */
        if (n && (s->tmp[n - 1].ce.info & (CE_CTXID | CE_SECST)))
            d->ce.info |= CE_AFTER_CTXID;
        d->plain = d->flags0 == 0 && e->wp == TB_WP_NONE &&
                   !(e->info & (CE_CTXID | CE_EXCL | CE_SECST));
        memset(&d->tpl, 0, sizeof d->tpl);
        d->tpl.kind = TB_REC_INSN;
        d->tpl.u.insn.addr = e->addr;
        d->tpl.u.insn.next_addr = e->addr + e->size;
        d->tpl.u.insn.opcode = e->opcode;
        d->tpl.u.insn.size = e->size;
        d->tpl.u.insn.isa = isa;
        d->tpl.u.insn.next_isa = isa;
        d->tpl.u.insn.wp_class = e->wp;
        off += e->size;
        n++;
    }
    if (off != size || n == 0) {
        tb_sim_fail(s, TB_ERR_MISMATCH, "check: block at 0x%08x is %u bytes, "
                    "decoded %u", a, size, off);
        return NULL;
    }
    free(b);
    s->blocks[h] = NULL;
    b = malloc(sizeof *b + n * sizeof b->ins[0]);
    if (!b) {
        tb_sim_fail(s, TB_ERR_NOMEM, "no memory for a block");
        return NULL;
    }
    b->addr = a;
    b->size = size;
    b->isa = isa;
    b->it_start = s->tmp[0].it_before;
    b->n = (uint16_t)n;
    memcpy(b->ins, s->tmp, n * sizeof b->ins[0]);
    s->blocks[h] = b;
    return b;
}

/* Delivers the records of ins[done..upto) of the running block; the last
 * of them went to last_next.  Instructions from pos on were not hooked:
 * IT-block instructions whose condition failed. */
static int blk_flush(tb_sim *s, unsigned upto, uint32_t last_next)
{
    const tb_block *b = s->blk;
    uint8_t isa = b->isa, nisa = isa;
    int rc;

    for (unsigned j = s->done; j < upto; j++) {
        const tb_binsn *d = &b->ins[j];
        uint32_t next = j + 1 < upto ? d->ce.addr + d->ce.size : last_next;
        uint8_t flags = d->flags0;

        if (d->plain && next == d->tpl.u.insn.next_addr) {
            /* Most instructions: the template as it is (emit_insn's
             * cycle model, without condition or branch). */
            tb_exec_record r = d->tpl;

            s->cycles += 1;
            if (d->ce.info & CE_MEM) {
                uint64_t x = rng_next(s);

                s->cycles += 1;
                if ((x & 15) == 0)
                    s->cycles += 1 + (unsigned)((x >> 4) & 3);
            }
            if (s->dual)
                s->cycles -= tb_sim_dual_step(s, &d->ce, isa, flags, next);
            r.seq = s->count++;
            r.cycle = s->cycles;
            s->done = j + 1;
            s->itstate = d->it_after;
            if (s->cb && s->cb(s->cb_ctx, &r)) {
                tb_sim_fail(s, TB_ERR_STOPPED, "the record callback asked to stop");
                return TB_ERR_STOPPED;
            }
            if (s->dat_n && (rc = emit_data(s, &d->ce, 0)) < 0)
                return rc;
            nisa = isa;
            continue;
        }

        if (d->ce.info & (CE_IT_MEMBER | CE_ARMCOND)) {
            if (j >= s->pos || !s->pass[j])
                flags |= TB_INSN_COND_FAILED;
        } else if (j >= s->pos) {
            return tb_sim_fail(s, TB_ERR_EMULATOR, "instruction at 0x%08x did not "
                               "run inside its block", d->ce.addr);
        }
        if (d->ce.wp == TB_WP_NONE && next == d->ce.addr + d->ce.size)
            nisa = isa; /* the common case of flow_check */
        else if ((rc = flow_check(s, &d->ce, isa, &flags, next, 0, &nisa)) < 0)
            return rc;
        s->done = j + 1;
        s->itstate = d->it_after;
        if ((rc = emit_rec(s, &d->ce, &d->tpl, isa, next, nisa, flags)) < 0)
            return rc;
    }
    s->isa = nisa;
    s->isa_known = true;
    return 0;
}

static void blk_set_limit(tb_sim *s)
{
    uint64_t base = s->count - s->done; /* count at the block's start */

    s->klimit = s->next_check > base ? s->next_check - base : 0;
}

/* The rest of the running block executed and control is now at a. */
static int blk_end(tb_sim *s, uint32_t a)
{
    int rc = blk_flush(s, s->blk->n, a);

    s->blk = NULL;
    return rc;
}

static void hook_block(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
    tb_sim *s = user;
    uint32_t a = (uint32_t)address;
    tb_block *b;

    (void)uc;
    if (s->action != ACT_NONE)
        return;
    if ((s->blk && blk_end(s, a) < 0) || (s->have_pend && finish(s, a, 0) < 0)) {
        stop(s, ACT_ERROR);
        return;
    }
    if (!s->isa_known) {
        s->isa = (read_cpsr(s) & CPSR_T) ? TB_ISA_THUMB : TB_ISA_ARM;
        s->isa_known = true;
    }
    if (!(b = blk_get(s, a, size, s->isa, s->itstate))) {
        stop(s, ACT_ERROR);
        return;
    }
    s->blk = b;
    s->pos = s->done = 0;
    blk_set_limit(s);
}

/* The slow part of the block path's code hook, for ins[k]. */
static void blk_attention(tb_sim *s, unsigned k)
{
    const tb_binsn *d = &s->blk->ins[k];
    uint32_t a = d->ce.addr;

    /* Records up to here: count and ITSTATE as the reference path has
     * them before this instruction. */
    if (k > s->done && blk_flush(s, k, a) < 0) {
        stop(s, ACT_ERROR);
        return;
    }
    s->pos = k;
    if (((d->ce.info & CE_SPECIAL) || s->count >= s->next_check) &&
        slow_path(s, a, &d->ce, s->blk->isa))
        return;
    blk_set_limit(s);
    s->pass[k] = (d->ce.info & CE_ARMCOND) ? tb_cond_passed(d->ce.cond, read_cpsr(s))
                                           : 1;
    s->pos = k + 1;
    /* A store-exclusive's record reads Rd after it: the next instruction
     * comes here first (blk_flush above builds it before that runs). */
    if (d->ce.info & CE_EXCL)
        s->klimit = k + 1;
    if (d->ce.info & CE_WFI) {
        make_pending(s, &d->ce, s->blk->isa, true, s->pass[k]);
        s->done = k + 1;
        s->act_addr = a;
        stop(s, ACT_WFI);
    }
}

/* The code hook's rare cases: the first call in a run, IT-block
 * instructions skipped, instructions that need the slow path, and
 * inconsistencies. */
static __attribute__((noinline)) void hook_code_blk_slow(tb_sim *s, uint32_t a)
{
    const tb_block *b = s->blk;
    unsigned k = s->pos;

    if (s->action != ACT_NONE)
        return;
    if (!b) {
        tb_sim_fail(s, TB_ERR_EMULATOR, "code hook at 0x%08x outside a block", a);
        stop(s, ACT_ERROR);
        return;
    }
    /* Unicorn does not hook IT-block instructions whose condition fails. */
    while (k < b->n && b->ins[k].ce.addr != a) {
        if (!(b->ins[k].ce.info & CE_IT_MEMBER))
            break;
        s->pass[k++] = 0;
    }
    if (k >= b->n || b->ins[k].ce.addr != a) {
        tb_sim_fail(s, TB_ERR_EMULATOR, "code hook at 0x%08x, expected 0x%08x in "
                    "the block at 0x%08x", a,
                    k < b->n ? b->ins[k].ce.addr : b->addr + b->size, b->addr);
        stop(s, ACT_ERROR);
        return;
    }
    if ((b->ins[k].ce.info & CE_ATTENTION) || k >= s->klimit) {
        s->pos = k;
        blk_attention(s, k);
        return;
    }
    s->pass[k] = 1;
    s->pos = k + 1;
}

/* Per instruction: note that the expected instruction ran.  Anything
 * else goes to hook_code_blk_slow (while a stop is asked for, too: the
 * block pointer is then NULL or klimit 0 is not relied on, so the slow
 * part checks action). */
static void hook_code_blk(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
    tb_sim *s = user;
    const tb_block *b = s->blk;
    unsigned k = s->pos;

    (void)uc;
    (void)size;
    if (b && k < b->n && b->ins[k].ce.addr == (uint32_t)address &&
        !(b->ins[k].ce.info & CE_ATTENTION) && k < s->klimit &&
        s->action == ACT_NONE) {
        s->pass[k] = 1;
        s->pos = k + 1;
        return;
    }
    hook_code_blk_slow(s, (uint32_t)address);
}

/* After the emulator stopped: the last hooked instruction of the block
 * that has no record yet (it raised SVC, faulted, or was the last before
 * an untranslatable fetch) becomes the pending one, as in the reference
 * path, so handle_stop treats both paths alike. */
static int blk_settle(tb_sim *s)
{
    int rc = 0;

    if (s->blk && s->pos > s->done && !s->have_pend) {
        unsigned k = s->pos - 1;
        const tb_binsn *d = &s->blk->ins[k];

        if (k > s->done && (rc = blk_flush(s, k, d->ce.addr)) < 0)
            return rc;
        s->itstate = d->it_before;
        make_pending(s, &d->ce, s->blk->isa, true, s->pass[k]);
        s->done = k + 1;
    }
    s->blk = NULL;
    return rc;
}

/* ------------------------------------------------------------------ */
/* Hooks of both paths. */

static bool in_insn(const tb_sim *s)
{
    return s->have_pend || (s->blk && s->pos > s->done);
}

static uint32_t insn_addr(const tb_sim *s)
{
    if (s->have_pend)
        return s->pend.ce.addr;
    if (s->blk && s->pos > s->done)
        return s->blk->ins[s->pos - 1].ce.addr;
    return 0;
}

static void hook_intr(uc_engine *uc, uint32_t intno, void *user)
{
    tb_sim *s = user;

    (void)uc;
    if (s->action != ACT_NONE)
        return;
    if (intno == 2 && in_insn(s)) { /* EXCP_SWI */
        stop(s, ACT_SVC);
        return;
    }
    if (intno == 13 && in_insn(s) && s->sc.secure) { /* EXCP_SMC */
        stop(s, ACT_SMC);
        return;
    }
    if (intno == 13) {
        tb_sim_fail(s, TB_ERR_FAULT, "SMC at 0x%08x: the scenario must say secure = true "
                    "for the simulator to enter Monitor mode", insn_addr(s));
        stop(s, ACT_ERROR);
        return;
    }
    tb_sim_fail(s, TB_ERR_FAULT, "exception %u (not asked for) at 0x%08x", intno,
                insn_addr(s));
    stop(s, ACT_ERROR);
}

static bool hook_mem_fault(uc_engine *uc, uc_mem_type type, uint64_t address,
                           int size, int64_t value, void *user)
{
    tb_sim *s = user;

    (void)uc;
    (void)size;
    (void)value;
    if (s->action != ACT_NONE)
        return false;
    s->act_addr = (uint32_t)address;
    s->action = (type == UC_MEM_FETCH_UNMAPPED || type == UC_MEM_FETCH_PROT)
                    ? ACT_FETCH_FAULT : ACT_DATA_FAULT;
    if (s->action == ACT_DATA_FAULT)
        s->fault_data = (uint32_t)address;
    return false;
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
static void hook_mem_data(uc_engine *uc, uc_mem_type type, uint64_t address, int size,
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

        if (k > s->done && blk_flush(s, k, s->blk->ins[k].ce.addr) < 0) {
            stop(s, ACT_ERROR);
            return;
        }
        e = &s->blk->ins[k].ce;
    } else if (s->have_pend) {
        e = &s->pend.ce;
    } else {
        tb_sim_fail(s, TB_ERR_EMULATOR, "memory access to 0x%08x outside any "
                    "instruction", a);
        stop(s, ACT_ERROR);
        return;
    }
    if (e->info & CE_EXCL)
        return; /* built from its registers (strex_data) */
    if (s->dat_n && s->dat_owner != e->addr) {
        tb_sim_fail(s, TB_ERR_EMULATOR, "transfers of 0x%08x and 0x%08x in one "
                    "buffer", s->dat_owner, e->addr);
        stop(s, ACT_ERROR);
        return;
    }
    if (size != 1 && size != 2 && size != 4 && size != 8) {
        tb_sim_fail(s, TB_ERR_EMULATOR, "instruction at 0x%08x: a transfer of %d bytes "
                    "at 0x%08x", e->addr, size, a);
        stop(s, ACT_ERROR);
        return;
    }
    if (s->dat_n + 2 > TB_DAT_MAX) {
        tb_sim_fail(s, TB_ERR_EMULATOR, "instruction at 0x%08x: more than %u transfers",
                    e->addr, TB_DAT_MAX - 2);
        stop(s, ACT_ERROR);
        return;
    }
    flags = type == UC_MEM_WRITE ? TB_DATA_STORE : 0;
    if (read_cpsr(s) & CPSR_E)
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

/* ------------------------------------------------------------------ */
/* Exception entry (IHI0406C B1.8.3 modes, B1.8.1 vectors, B1.9 entry). */

static int enter_exception(tb_sim *s, tb_exc_kind kind, uint32_t pref,
                           uint32_t lr, bool cancelled, uint8_t it_before)
{
    uint32_t cpsr = read_cpsr(s), sctlr = 0, vbar = 0, ncpsr, vec, mode, off;
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
    if (cp15(s, false, 1, 0, 0, 0, &sctlr) < 0 || cp15(s, false, 12, 0, 0, 0, &vbar) < 0)
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot read SCTLR/VBAR");
    if (kind == TB_EXC_SMC) {
        /* Monitor entry (IHI0406C B1.9.9): SCR.NS := 0 first, through the
         * host (Unicorn refuses a CPSR write to Monitor mode while NS is
         * 1, docs/ns-hyp.md); the vector is MVBAR + 8, whatever SCTLR.V;
         * A, I and F are all masked. */
        if (scr_secure(s) < 0 || cp15(s, false, 12, 0, 0, 1, &vbar) < 0)
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
        int rc = check_state(s);

        if (rc < 0)
            return rc;
    }
    s->cycles += 3;
    s->dual_first = false; /* no pair across an exception (dual.c) */
    s->exceptions++;
    s->itstate = 0;
    s->have_pend = false;
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
    return deliver(s, &r);
}

/* ------------------------------------------------------------------ */
/* The run. */

static void hooks_del(tb_sim *s)
{
    if (!s->reference)
        uc_hook_del(s->uc, s->h_block);
    uc_hook_del(s->uc, s->h_code);
    uc_hook_del(s->uc, s->h_intr);
    uc_hook_del(s->uc, s->h_mem);
    if (s->data)
        uc_hook_del(s->uc, s->h_data);
}

/* Handles one stop of the emulator.  Returns 1 when the run is over, 0
 * to restart at s->act_addr (ISA s->isa), negative on error. */
static int handle_stop(tb_sim *s, uc_err uerr, tb_sim_result *res)
{
    struct tb_pend *p = &s->pend;
    uint32_t seq = p->ce.addr + p->ce.size;
    uint8_t it_before;
    int rc;

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
        /* Preferred return = the instruction that did not run; LR = +4 in
         * both states (B1.9.10, B1.9.11). */
        if ((rc = enter_exception(s, s->action == ACT_IRQ ? TB_EXC_IRQ : TB_EXC_FIQ,
                                  s->act_addr, s->act_addr + 4, false, 0)) < 0)
            return rc;
        return 0;
    case ACT_SVC:
        /* LR = the next instruction (B1.9.4). */
        it_before = s->itstate;
        if ((rc = finish(s, seq, 0)) < 0)
            return rc;
        if ((rc = enter_exception(s, TB_EXC_SVC, seq, seq, false, it_before)) < 0)
            return rc;
        return 0;
    case ACT_SMC:
        /* LR = preferred return = the next instruction (B1.9.9). */
        it_before = s->itstate;
        if ((rc = finish(s, seq, 0)) < 0)
            return rc;
        if ((rc = enter_exception(s, TB_EXC_SMC, seq, seq, false, it_before)) < 0)
            return rc;
        return 0;
    case ACT_WFI: {
        uint64_t best = UINT64_MAX;
        int bi = -1;

        if ((rc = finish(s, seq, 0)) < 0)
            return rc;
        s->act_addr = seq;
        if (s->pending_irq)
            return 0; /* a pending interrupt wakes WFI, masked or not */
        /* Time passes in WFI: the next interrupt due by count arrives. */
        for (unsigned i = 0; i < s->sc.n_events; i++)
            if (!s->ev[i].done && s->sc.events[i].has_insn && !s->ev[i].has_addr &&
                s->ev[i].next_insn < best) {
                best = s->ev[i].next_insn;
                bi = (int)i;
            }
        if (bi < 0) {
            res->stop = TB_SIM_STOP_WFI;
            res->stop_addr = seq;
            return 1;
        }
        raise_event(s, (unsigned)bi);
        update_next_check(s);
        return 0;
    }
    case ACT_FETCH_FAULT:
        if (!s->sc.allow_prefetch_abort)
            return tb_sim_fail(s, TB_ERR_FAULT,
                               "prefetch abort at 0x%08x (code not mapped)%s",
                               s->act_addr, s->have_pend ? "" : "");
        if (s->have_pend && (rc = finish(s, s->act_addr, 0)) < 0)
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
            it_before = s->itstate;
            s->dat_n = 0;
            s->dat_drop = true;
            rc = finish(s, seq, 0);
            s->dat_drop = false;
            if (rc < 0)
                return rc;
            /* LR = preferred return + 8 (B1.9.8). */
            if ((rc = enter_exception(s, TB_EXC_DATA_ABORT, addr, addr + 8, true,
                                      it_before)) < 0)
                return rc;
        }
        return 0;
    case ACT_NONE:
        break;
    }
    if (uerr == UC_ERR_INSN_INVALID && s->have_pend) {
        uint32_t addr = p->ce.addr;
        bool thumb = p->isa == TB_ISA_THUMB;

        if (!s->sc.allow_undef)
            return tb_sim_fail(s, TB_ERR_FAULT, "undefined instruction 0x%08x at 0x%08x",
                               p->ce.opcode, addr);
        it_before = s->itstate;
        if ((rc = finish(s, seq, 0)) < 0)
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
    if (s->sc.secure && (scr_secure(s) < 0 || read_ns(s, &s->ns) < 0 || s->ns))
        return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot enter Secure state (SCR)");
    if (s->sc.high_vectors || s->sc.has_vbar) {
        uint32_t v;

        if (cp15(s, false, 1, 0, 0, 0, &v) < 0)
            return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot read SCTLR");
        v = s->sc.high_vectors ? v | (1u << 13) : v & ~(1u << 13);
        if (cp15(s, true, 1, 0, 0, 0, &v) < 0 ||
            (s->sc.has_vbar && cp15(s, true, 12, 0, 0, 0, &s->sc.vbar) < 0))
            return tb_sim_fail(s, TB_ERR_EMULATOR, "cannot write SCTLR/VBAR");
    }
    if (cp15(s, false, 13, 0, 0, 1, &s->ctxid) < 0)
        s->ctxid = 0;
    update_next_check(s);
    if (!s->reference && !s->blocks &&
        !(s->blocks = calloc((size_t)1 << TB_BLK_CACHE_BITS, sizeof *s->blocks)))
        return tb_sim_fail(s, TB_ERR_NOMEM, "no memory for the block cache");
    s->blk = NULL;
    s->dat_n = 0;
    s->dat_drop = false;
    if ((!s->reference &&
         uc_hook_add(s->uc, &s->h_block, UC_HOOK_BLOCK, (void *)hook_block, s, 1, 0)) ||
        uc_hook_add(s->uc, &s->h_code, UC_HOOK_CODE,
                    s->reference ? (void *)hook_code : (void *)hook_code_blk, s, 1, 0) ||
        uc_hook_add(s->uc, &s->h_intr, UC_HOOK_INTR, (void *)hook_intr, s, 1, 0) ||
        uc_hook_add(s->uc, &s->h_mem, UC_HOOK_MEM_UNMAPPED | UC_HOOK_MEM_PROT,
                    (void *)hook_mem_fault, s, 1, 0) ||
        (s->data && uc_hook_add(s->uc, &s->h_data, UC_HOOK_MEM_READ_AFTER | UC_HOOK_MEM_WRITE,
                                (void *)hook_mem_data, s, 1, 0)))
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
        if (!s->err && blk_settle(s) < 0 && !s->err)
            s->err = TB_ERR_EMULATOR;
        if (s->err) {
            rc = s->err;
            break;
        }
        rc = handle_stop(s, uerr, res);
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
    blk_free_all(s);
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
    rc = deliver(s, &r);
    return rc < 0 ? rc : 0;
}
