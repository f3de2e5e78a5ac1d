/*
 * Cycle-accurate attribution shared by the trace-port decoders (ETMv1,
 * ETMv2; private).  An element's count runs from its status to the next
 * status (docs/etmv1.md 5 and 6 M7, docs/etmv2.md 5): so an element is
 * held while the wait cycles after its status come, and goes out at the
 * next status.  Two rules the protocols share:
 *
 *  - an exception is counted too (ETMv1: its BE and APO cycles; ETMv2:
 *    its DW cycle), not left to the element before it;
 *  - where no status follows (a trace-on, overflow or debug-exit marker,
 *    the end of the trace) the held count is open: a wait after the
 *    status may be the FIFO draining with trace off or lost (IHI0014Q
 *    5.8, 5.9, 6.1.6), so it is kept only when no uncertain wait came
 *    after the status (`sure`), and never before an overflow (`lost`);
 *    the end may cut off an overflow's restart (5.9), so there the
 *    callers pass `lost` for any cycle past the status's own.
 */
#ifndef TB_PORT_CC_H
#define TB_PORT_CC_H

#include <stdbool.h>
#include <stdint.h>

#include "tracebench/types.h"

/* The held element's count where no status follows (see above). */
static inline void tb_port_cc_open(tb_element *held, bool have_held, bool lost, bool sure)
{
    if (have_held && (lost || !sure)) {
        held->has_cc = false;
        held->cc = 0;
    }
}

/* el (an exception) starts counting with the `cc` cycles its status
 * already took. */
static inline void tb_port_cc_count(tb_element *el, uint32_t cc)
{
    el->has_cc = true;
    el->cc = cc;
}

#endif
