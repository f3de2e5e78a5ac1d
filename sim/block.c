/*
 * The block path, the default way a run becomes records (see below).
 */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

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

void tb_sim_blk_free_all(tb_sim *s)
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
static tb_block *blk_get(tb_sim *s, uint32_t a, uint32_t size, uint8_t isa, uint8_t it,
                         bool *fresh)
{
    size_t h = ((a >> 1) ^ (a >> (TB_BLK_CACHE_BITS + 1)) ^ isa) &
               ((1u << TB_BLK_CACHE_BITS) - 1);
    tb_block *b = s->blocks[h];
    uint32_t off = 0;
    unsigned n = 0;

    if (b && b->addr == a && b->size == size && b->isa == isa && b->it_start == it)
        return b;
    *fresh = true;
    while (off < size) {
        tb_binsn *d = &s->tmp[n];
        const tb_centry *e;

        if (n == TB_BLK_MAX_INSNS) {
            tb_sim_fail(s, TB_ERR_EMULATOR, "block at 0x%08x has more than %u "
                        "instructions", a, TB_BLK_MAX_INSNS);
            return NULL;
        }
        if (!(e = tb_sim_lookup(s, a + off, isa))) {
            tb_sim_fail(s, TB_ERR_EMULATOR, "cannot decode code at 0x%08x", a + off);
            return NULL;
        }
        d->ce = *e;
        d->it_before = it;
        d->flags0 = tb_sim_base_flags(e, isa, &it);
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
int tb_sim_blk_flush(tb_sim *s, unsigned upto, uint32_t last_next)
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
                uint64_t x = sim_rng_next(s);

                s->cycles += 1;
                if ((x & 15) == 0)
                    s->cycles += 1 + (unsigned)((x >> 4) & 3);
            }
            if (s->sc.n_fetch_waits)
                s->cycles += tb_sim_fetch_wait(s, d->ce.addr);
            if (s->dual)
                s->cycles -= tb_sim_dual_step(s, &d->ce, isa, flags, next);
            r.seq = s->count++;
            r.cycle = s->cycles;
            s->done = j + 1;
            s->itstate = d->it_after;
            if ((rc = sim_deliver(s, &r)) < 0)
                return rc;
            if (s->dat_n && (rc = tb_sim_emit_data(s, &d->ce, 0)) < 0)
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
            nisa = isa; /* the common case of tb_sim_flow_check */
        else if ((rc = tb_sim_flow_check(s, &d->ce, isa, &flags, next, 0, &nisa)) < 0)
            return rc;
        s->done = j + 1;
        s->itstate = d->it_after;
        if (s->have_ret_it) {
            s->itstate = s->ret_it;
            s->have_ret_it = false;
        }
        if ((rc = tb_sim_emit_rec(s, &d->ce, &d->tpl, isa, next, nisa, flags)) < 0)
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
    int rc = tb_sim_blk_flush(s, s->blk->n, a);

    s->blk = NULL;
    return rc;
}

void tb_sim_hook_block(uc_engine *uc, uint64_t address, uint32_t size, void *user)
{
    tb_sim *s = user;
    uint32_t a = (uint32_t)address;
    tb_block *b;
    bool fresh = false;

    (void)uc;
    if (s->action != ACT_NONE)
        return;
    if ((s->blk && blk_end(s, a) < 0) || (s->have_pend && tb_sim_finish_insn(s, a, 0) < 0)) {
        sim_stop(s, ACT_ERROR);
        return;
    }
    if (!s->isa_known) {
        s->isa = (sim_read_cpsr(s) & CPSR_T) ? TB_ISA_THUMB : TB_ISA_ARM;
        s->isa_known = true;
    }
    if (!(b = blk_get(s, a, size, s->isa, s->itstate, &fresh))) {
        sim_stop(s, ACT_ERROR);
        return;
    }
    /* A block Unicorn has likely just translated: it may need its exit
     * checks (tb_sim_tb_new); the stop leaves nothing of it begun. */
    if (fresh && tb_sim_tb_new(s, a, size, b->isa, (b->ins[b->n - 1].it_before & 0xF) != 0))
        return;
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
    if (k > s->done && tb_sim_blk_flush(s, k, a) < 0) {
        sim_stop(s, ACT_ERROR);
        return;
    }
    s->pos = k;
    if (((d->ce.info & CE_SPECIAL) || s->count >= s->next_check) &&
        tb_sim_slow_path(s, a, &d->ce, s->blk->isa))
        return;
    blk_set_limit(s);
    s->pass[k] = (d->ce.info & CE_ARMCOND) ? tb_cond_passed(d->ce.cond, sim_read_cpsr(s))
                                           : 1;
    s->pos = k + 1;
    /* A store-exclusive's record reads Rd after it: the next instruction
     * comes here first (tb_sim_blk_flush above builds it before that runs). */
    if (d->ce.info & CE_EXCL)
        s->klimit = k + 1;
    if (d->ce.info & CE_WFI) {
        tb_sim_make_pending(s, &d->ce, s->blk->isa, true, s->pass[k]);
        s->done = k + 1;
        s->act_addr = a;
        sim_stop(s, ACT_WFI);
    }
}

/* The code hook's rare cases: the first call in a run, IT-block
 * instructions skipped, instructions that need the slow path, and
 * inconsistencies. */
static __attribute__((noinline)) void hook_code_blk_slow(tb_sim *s, uint32_t a)
{
    const tb_block *b = s->blk;
    unsigned k = s->pos;

    if (s->action == ACT_DATA_FAULT || s->action == ACT_FETCH_FAULT) {
        tb_sim_ran_past_fault(s, a);
        return;
    }
    if (s->action != ACT_NONE)
        return;
    if (!b) {
        tb_sim_fail(s, TB_ERR_EMULATOR, "code hook at 0x%08x outside a block", a);
        sim_stop(s, ACT_ERROR);
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
        sim_stop(s, ACT_ERROR);
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
void tb_sim_hook_code_blk(uc_engine *uc, uint64_t address, uint32_t size, void *user)
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
 * path, so tb_sim_handle_stop treats both paths alike. */
int tb_sim_blk_settle(tb_sim *s)
{
    int rc = 0;

    if (s->blk && s->pos > s->done && !s->have_pend) {
        unsigned k = s->pos - 1;
        const tb_binsn *d = &s->blk->ins[k];

        if (k > s->done && (rc = tb_sim_blk_flush(s, k, d->ce.addr)) < 0)
            return rc;
        s->itstate = d->it_before;
        tb_sim_make_pending(s, &d->ce, s->blk->isa, true, s->pass[k]);
        s->done = k + 1;
    }
    s->blk = NULL;
    return rc;
}
