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
};

static const char *const ptm_sets[] = {
    "", "ca", "ts", "ca,ts", "ctxid=4,vmid", "ctxid=1", "bb", "rs", "rs,ca",
    "v=0", "v=0,ts", "rs,bb", "sync=64,rs", "sync=64,ca", "ts,tsper=40",
    "filter", "filter,rs", "fifo=48:1/64", "fifo=64:1/8,ca,ts,rs", "trigger=100",
};

const char *const *tb_rt_option_sets(tb_protocol protocol, size_t *n)
{
    if (protocol == TB_PROTO_PTM) {
        *n = sizeof ptm_sets / sizeof ptm_sets[0];
        return ptm_sets;
    }
    *n = sizeof etmv3_sets / sizeof etmv3_sets[0];
    return etmv3_sets;
}
