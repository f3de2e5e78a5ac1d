/*
 * ARMv7-M exception vocabulary shared by the encoder and the decoder:
 * names by architectural number (IPSR), and the mapping between that
 * number and the value an ETM-M3/M4 traces in the exception bytes of a
 * branch packet (docs/cortex-m.md 3).
 */
#include <stdio.h>

#include "tracebench/types.h"

/* Cortex-M3 TRM DDI0337G Table 14-8 "Exception tracing mapping": the
 * traced value of IPSR numbers 1..23, chosen so that the frequent ones
 * fit in one exception byte (p.14-13); from 24 up the traced value is
 * the number itself.  Index 0 is unused (no exception is traced as 0).
 * The same table is in OpenCSD's exceptionTypesCM[] (docs/cortex-m.md). */
static const uint8_t to_trace[24] = {
    0,  17, 10, 19, 13, 21, 9,  22, /* -, Reset, NMI, HardFault, MemManage, BusFault,
                                     * UsageFault, reserved 7 */
    16, 20, 18, 11, 12, 23, 14, 15, /* reserved 8, 9, 10, SVCall, DebugMonitor,
                                     * reserved 13, PendSV, SysTick */
    8,  1,  2,  3,  4,  5,  6,  7,  /* IRQ0..IRQ7 */
};

int tb_v7m_trace_number(unsigned num)
{
    if (num == 0 || num >= TB_V7M_MAX_EXC)
        return TB_ERR_INVAL;
    return num < 24 ? to_trace[num] : (int)num;
}

int tb_v7m_from_trace(unsigned traced)
{
    if (traced >= TB_V7M_MAX_EXC)
        return TB_ERR_INVAL;
    if (traced >= 24 || traced == 0)
        return (int)traced;
    for (unsigned n = 1; n < 24; n++)
        if (to_trace[n] == traced)
            return (int)n;
    return TB_ERR_INVAL; /* not reached: the table is a permutation */
}

const char *tb_v7m_exc_name(unsigned num, char *buf, size_t len)
{
    static const char *const sys[16] = {
        "none",      "Reset",    "NMI",       "HardFault", "MemManage",    "BusFault",
        "UsageFault", NULL,      NULL,        NULL,        NULL,           "SVCall",
        "DebugMonitor", NULL,    "PendSV",    "SysTick",
    };

    if (num >= TB_V7M_MAX_EXC || !buf || !len)
        return NULL;
    if (num < 16 && sys[num])
        snprintf(buf, len, "%s", sys[num]);
    else if (num < 16)
        snprintf(buf, len, "reserved%u", num);
    else
        snprintf(buf, len, "IRQ%u", num - 16);
    return buf;
}
