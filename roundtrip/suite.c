/*
 * The round-trip matrix: the option sets `make roundtrip` runs per
 * protocol.  Together they switch on every feature the encoder models
 * (encoder.h): cycle accuracy, timestamps, context ID and VMID, branch
 * broadcast, the return stack (PTM), the alternative branch encoding and
 * ETMv3.3 (ETMv3), PFT1.0, short sync periods, the ViewInst filter and a
 * FIFO small enough to overflow.
 */
#include "tracebench/roundtrip.h"

static const char *const etmv3_sets[] = {
    "", "ca", "ts", "ca,ts", "ctxid=4,vmid", "ctxid=1", "bb", "alt", "alt,ca",
    "v=3", "v=3,ca", "ca,bb,ctxid=2", "sync=64", "sync=64,ca", "ts,tsper=40",
    "filter", "filter,ca", "fifo=48:1/8", "fifo=64:1/4,ca,ts", "trigger=100",
    /* Data trace (ETMCR[3:2]): addresses, values, both; with cycle
     * accuracy and timestamps, out-of-order loads, the filter, FIFO
     * overflow, data suppression and short sync periods. */
    "data=both", "data=addr", "data=value", "data=both,ca,ts", "data=both,ooo=2",
    "data=value,ooo=3,ca", "data=both,filter", "data=both,fifo=64:1/4,ca,ts",
    "data=both,fifo=96:1/16,suppress=48", "data=both,sync=64", "data=both,v=2",
    /* Issue 22: Ignore packets, cycle count packets after periodic
     * I-syncs, ETMv3.0 (format 0 P-headers), ETMv3.1 and ETMv3.2. */
    "ignore=5", "ignore=1,ca,sync=64", "ca,ccpkt,sync=64", "ca,ccpkt,ts,sync=64",
    "v=0", "v=0,ca", "v=0,ca,ccpkt,sync=64", "v=1", "v=1,ca", "v=2,ca",
};

static const char *const ptm_sets[] = {
    "", "ca", "ts", "ca,ts", "ctxid=4,vmid", "ctxid=1", "bb", "rs", "rs,ca",
    "v=0", "v=0,ts", "rs,bb", "sync=64,rs", "sync=64,ca", "ts,tsper=40",
    "filter", "filter,rs", "fifo=48:1/64", "fifo=64:1/8,ca,ts,rs", "trigger=100",
};

/* ETMv1 (docs/etmv1.md): each port width, branch output, context IDs,
 * ETMv1.0, a short sync period, the filter, a FIFO small enough to
 * overflow and a trigger; data trace at each width.  Not yet cycle-accurate (`ca`): its cycle
 * totals around exceptions do not match yet (docs/etmv1.md 7). */
static const char *const etmv1_sets[] = {
    "port=4", "port=8", "port=16", "bb", "bb,port=4", "ctxid=4", "ctxid=1,port=16",
    "v=0", "v=1,port=16", "sync=64", "sync=64,port=4", "filter", "filter,port=16",
    "fifo=8,port=4", "fifo=16", "trigger=100", "idle",
    /* data trace (ETMCR[3:2], docs/etmv1.md 9) */
    "data=both", "data=both,port=4", "data=both,port=16", "data=addr,port=16",
    "data=value,port=4", "data=both,bb,port=16", "data=both,ctxid=4,sync=64",
    "data=both,fifo=16", "data=both,filter,port=4", "data=value,trigger=100",
};

const char *const *tb_rt_option_sets(tb_protocol protocol, size_t *n)
{
    if (protocol == TB_PROTO_ETMV1) {
        *n = sizeof etmv1_sets / sizeof etmv1_sets[0];
        return etmv1_sets;
    }
    if (protocol == TB_PROTO_PTM) {
        *n = sizeof ptm_sets / sizeof ptm_sets[0];
        return ptm_sets;
    }
    *n = sizeof etmv3_sets / sizeof etmv3_sets[0];
    return etmv3_sets;
}
