/* The `addr` output format, shared by `tracebench decode --format addr`
 * and the vectors' decode.addr: one executed instruction per line
 * (address, ISA, E/N), so that any two decoders can be diffed, and a
 * `# gap WHY` line where the trace does not carry what ran between two
 * instructions (docs/vectors.md has the format; vectors/expect.c derives
 * the same listing from a vector's ground truth). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The word of a gap marker; NULL: the element opens no gap. */
static const char *gap_word(const tb_element *el)
{
    if (el->kind == TB_ELEM_TRACE_ON) {
        switch (el->reason) {
        case TB_ISYNC_TRACE_ON:
            return "trace-on";
        case TB_ISYNC_OVERFLOW:
            return "overflow";
        case TB_ISYNC_DEBUG_EXIT:
            return "debug-exit";
        default:
            return NULL; /* periodic: after a gap only, which said so */
        }
    }
    if (el->kind == TB_ELEM_NO_SYNC && el->reason != TB_GAP_INIT)
        return tb_gap_reason_name((tb_gap_reason)el->reason);
    return NULL;
}

/* One marker before the next instruction, and none before the first: a
 * gap at the start or the end separates nothing.  An overflow names the
 * gap whatever else opened it (trace was lost, not only filtered). */
static void note_gap(tb_cli_addr_out *o, const char *word)
{
    if (!o->gap || !strcmp(word, "overflow"))
        o->gap = word;
}

static void put_gap(tb_cli_addr_out *o)
{
    if (o->gap && o->shown)
        fprintf(o->f, "# gap %s\n", o->gap);
    o->gap = NULL;
    o->shown = true;
    o->lost_said = false;
}

/* Trace lost to corruption (a bad packet, an atom the image
 * contradicts): said at once, where it happened, even before the first
 * instruction or after the last, where a gap line would not stand.  The
 * line takes the place of the gap line the loss would open; one line for
 * a run of losses with no instruction between them.  The end's
 * truncation (an ETB stopped inside a packet) loses nothing that ran
 * before it: no line. */
static bool lost_word(const tb_element *el, const char **word)
{
    if (el->kind != TB_ELEM_NO_SYNC || el->err == TB_ERR_TRUNCATED ||
        (el->reason != TB_GAP_BAD_PACKET && el->reason != TB_GAP_INCONSISTENT))
        return false;
    *word = tb_gap_reason_name((tb_gap_reason)el->reason);
    return true;
}

void tb_cli_addr_lost(tb_cli_addr_out *o, const char *why, uint64_t index)
{
    if (o->lost_said)
        return;
    fprintf(o->f, "# lost %s at index %llu\n", why, (unsigned long long)index);
    o->lost_said = true;
    o->gap = NULL;
}

int tb_cli_addr_element(tb_cli_addr_out *o, const tb_element *el)
{
    const char *word;
    int n;

    if (lost_word(el, &word)) {
        tb_cli_addr_lost(o, word, el->index);
        return 0;
    }
    word = gap_word(el);
    if (word) {
        note_gap(o, word);
        return 0;
    }
    /* ADDR_NACC / ADDR_UNKNOWN atoms keep their place. */
    if (el->kind == TB_ELEM_ADDR_NACC) {
        put_gap(o);
        fprintf(o->f, "0x%08X ? NACC\n", (unsigned)el->start);
        return 0;
    }
    if (el->kind == TB_ELEM_ADDR_UNKNOWN) {
        put_gap(o);
        fprintf(o->f, "? ? %c\n", el->last_atom ? el->last_atom : '?');
        return 0;
    }
    /* Instructions only: DATA elements (data trace) have no line. */
    if (el->kind != TB_ELEM_INSN_RANGE || !el->count)
        return 0;
    if (el->count > o->cap) {
        uint32_t *a = realloc(o->addrs, el->count * sizeof *a);

        if (!a)
            return o->err = TB_ERR_NOMEM;
        o->addrs = a;
        o->cap = el->count;
    }
    n = tb_range_addrs(o->mem, el, o->addrs, el->count);
    if (n < 0)
        return o->err = n;
    put_gap(o);
    for (int i = 0; i < n; i++) {
        char atom = 'E';

        if (el->isa != TB_ISA_ARM && el->isa != TB_ISA_THUMB)
            atom = '?';
        else if (o->ptm)
            /* PFT traces waypoints only: a range's other instructions
             * carry no atom, and its last one only when it is a waypoint
             * (IHI0035B B.3.2); they ran, so E. */
            atom = i + 1 == n && el->last_wp != TB_WP_NONE && el->last_wp != TB_WP_BARRIER
                       ? el->last_atom
                       : 'E';
        else if (i + 1 == n)
            atom = el->last_atom;
        else if (i < 32 && ((el->atom_bits >> i) & 1))
            atom = 'N';
        fprintf(o->f, "0x%08X %s %c\n", (unsigned)o->addrs[i], tb_isa_name((tb_isa)el->isa),
                atom);
    }
    return 0;
}
