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
    /* The dual-issue cycle rule (sim/dual.c): same-cycle atoms as
     * P-header formats 4 and 2, with and without data packets between
     * them, on ETMv3.3 (the first with format 4). */
    "ca,dual", "v=3,ca,dual,data=both", "dual,data=both,ts",
    /* LSiP I-syncs: trace on, or the restart after an overflow, at a
     * load/store multiple still in progress under ooo=N. */
    "data=both,ooo=2,filter", "data=value,ooo=1,filter,ca",
    "data=both,ooo=2,fifo=64:1/4,ca,ts",
    /* A core that transfers the PC first in an LDM that loads it
     * (ETMIDR[16]): the second transfer carries its address (7.4.4). */
    "data=both,pcfirst", "data=value,pcfirst,ca", "data=addr,pcfirst,filter",
    "data=both,pcfirst,ooo=2,fifo=64:1/4,ca",
    /* A timestamp counter running since long before trace started
     * (issue 35): 4- to 8-byte timestamps, and 48-bit ones that wrap. */
    "ts,tsper=40,tsrate=0x100000,tsstart=0x1FFFFFF0000000",
    "ca,ts,tsper=40,tsrate=0xFFFFFFFF,fifo=64:1/4",
    "ts,ts48,tsper=40,tsrate=0x100000,tsstart=0xFFFFF0000000",
    /* Data-only mode (ETMCR[20], issue 35): data packets and address-less
     * I-syncs alone; ETMv3.1 (its first version), short sync periods
     * with Ignore packets.  (With the filter, programs whose middle half
     * makes no transfer check nothing: not in the matrix.) */
    "data=both,dataonly", "data=both,dataonly,v=1",
    "data=both,dataonly,sync=64,ignore=3",
    /* An Ignore packet between a failed STREX's data packet and its
     * Store failed (IHI0014Q 7.11.2: it means nothing). */
    "data=both,ignore=3",
    /* The buffer as a TPIU capture: FSYNCs and HSYNC idle pads
     * (tb_formatter_tick, issue 35). */
    "tpiu,data=both",
};

static const char *const ptm_sets[] = {
    "", "ca", "ts", "ca,ts", "ctxid=4,vmid", "ctxid=1", "bb", "rs", "rs,ca",
    "v=0", "v=0,ts", "rs,bb", "sync=64,rs", "sync=64,ca", "ts,tsper=40",
    "filter", "filter,rs", "fifo=48:1/64", "fifo=64:1/8,ca,ts,rs", "trigger=100",
    "ca,dual,rs", /* the dual-issue cycle rule: per-atom counts (sim/dual.c) */
    /* A timestamp counter running since long before trace started
     * (issue 35): 4- to 8-byte timestamps; PFT1.0's 48-bit ones wrap. */
    "ts,tsper=40,tsrate=0x100000,tsstart=0x1FFFFFF0000000",
    "ca,ts,tsper=40,tsrate=0xFFFFFFFF,fifo=64:1/8",
    "v=0,ts,tsper=40,tsrate=0x100000,tsstart=0xFFFFF0000000",
    /* Ignore packets (0x66, IHI0035B 4.5 Table 4.1) between any two. */
    "ignore=5", "ignore=1,ca,sync=64", "ignore=2,ts,rs,fifo=64:1/8",
    /* Security state changes on branches as number-0 exception bytes
     * (IHI0035B 4.5.4; docs/ns-hyp.md), not I-syncs. */
    "exc0", "exc0,bb,ca,rs",
    "tpiu", /* a TPIU capture: FSYNCs and HSYNC idle pads (issue 35) */
};

/* ETMv1 (docs/etmv1.md): each port width, branch output, context IDs,
 * ETMv1.0, a short sync period, the filter, a FIFO small enough to
 * overflow and a trigger; then cycle-accurate (`ca`, issue 23) at each
 * width, alone and with the same features; then data trace at each width,
 * without and with cycle accuracy (docs/etmv1.md 9).  The CA FIFO sets overflow
 * (3 times at port 4, once with fifo=6, twice with fifo=5,sync=64); a
 * 16-bit port sends two bytes a cycle, faster than any status fills the
 * FIFO, so none overflows there. */
static const char *const etmv1_sets[] = {
    "port=4", "port=8", "port=16", "bb", "bb,port=4", "ctxid=4", "ctxid=1,port=16",
    "v=0", "v=1,port=16", "sync=64", "sync=64,port=4", "filter", "filter,port=16",
    "fifo=8,port=4", "fifo=16", "trigger=100", "idle",
    "ca,port=4", "ca,port=8", "ca,port=16", "ca,bb,port=4", "ca,bb,port=16",
    "ca,ctxid=4", "ca,v=0,port=4", "ca,sync=64,port=4", "ca,sync=64,port=16",
    "ca,filter,port=4", "ca,filter,port=8", "ca,filter,port=16", "ca,ctxid=1,filter,port=4",
    "ca,fifo=8,port=4",
    "ca,fifo=6", "ca,fifo=5,sync=64", "ca,trigger=100,port=4", "ca,idle,port=8",
    /* data trace (ETMCR[3:2], docs/etmv1.md 9) */
    "data=both", "data=both,port=4", "data=both,port=16", "data=addr,port=16",
    "data=value,port=4", "data=both,bb,port=16", "data=both,ctxid=4,sync=64",
    "data=both,fifo=16", "data=both,filter,port=4", "data=value,trigger=100",
    "data=both,fifo=12,port=8", /* faults: an overflow marker at the aborted load */
    /* cycle-accurate data trace (issue 23, docs/etmv1.md 5): data drains
     * after the last status, overflows whose restart the end cuts off
     * (fifo=16 at port 4, fifo=14 at port 8) */
    "ca,data=both,port=4", "ca,data=both,port=8", "ca,data=both,port=16",
    "ca,data=addr,port=4", "ca,data=value,port=16", "ca,data=both,bb,port=4",
    "ca,data=both,ctxid=4,sync=64", "ca,data=both,filter,port=4",
    "ca,data=both,filter,port=16", "ca,data=both,fifo=16,port=4",
    "ca,data=both,fifo=14,port=8", "ca,data=value,trigger=100,port=4",
    "ca,data=both,idle,port=8", "ca,data=addr,sync=64,port=16",
    /* A trigger event between instructions (trigdelay, issue 35): in an
     * APO cycle when instruction 100 is a branch. */
    "bb,trigger=100,trigdelay=1", "ca,trigger=100,trigdelay=2,port=4",
    /* Abandoned branches (abandon, issue 35): an exception right after
     * a taken branch's BE comes in its first APO cycle (5.6.1). */
    "abandon,bb", "ca,abandon,bb,port=4",
};

/* ETMv2 (docs/etmv2.md): each port width, branch output, context IDs, a
 * short sync period, the filter, a small FIFO and a trigger; then
 * cycle-accurate (`ca`, issue 23; no phantoms in CA mode) at each width,
 * alone and with the same features; then data trace. */
static const char *const etmv2_sets[] = {
    "port=4", "port=8", "port=16", "bb", "bb,port=4", "ctxid=4", "ctxid=1,port=16",
    "sync=64", "sync=64,port=4", "filter", "filter,port=16", "fifo=8,port=4", "fifo=16",
    "trigger=100", "idle",
    "ca,port=4", "ca,port=8", "ca,port=16", "ca,bb,port=4", "ca,bb,port=16",
    "ca,ctxid=4", "ca,ctxid=1,port=16", "ca,sync=64,port=4", "ca,sync=64,port=16",
    "ca,filter,port=4", "ca,filter,port=8", "ca,filter,port=16",
    "ca,ctxid=1,filter,port=4", "ca,fifo=8,port=4", "ca,fifo=6", "ca,fifo=5,sync=64",
    "ca,trigger=100,port=4", "ca,idle,port=8",
    /* data trace (ETMCR[3:2], docs/etmv2.md 9) */
    "data=both", "data=both,port=4", "data=both,port=16", "data=addr,port=16",
    "data=value,port=4", "data=addr,port=8", "data=both,bb,port=16",
    "data=both,ctxid=4,sync=64", "data=both,fifo=16", "data=both,filter,port=4",
    "data=value,trigger=100", "data=both,sync=64,port=4", "ca,data=both,port=4",
    "ca,data=both,port=16", "ca,data=value,port=8",
    "trigger=100,trigdelay=3", /* a trigger between instructions (issue 35) */
    /* ViewData, partial LSM tracing (6.4.4, issue 35): the code and its
     * literal pools in view, and two words of data_ops's buffer, whose
     * LDM/STM of four words give Value Not Traced packets. */
    "data=both,port=4,dataview=0-0x1000,dataview=0x46198-0x4619c",
    "ca,data=value,port=8,dataview=0-0x1000,dataview=0x46194-0x4619c",
    /* Load misses (ooo=N, docs/etmv2.md M12, issue 35): every single load
     * misses, its data N statuses later; with overflows (trace restarts
     * drop the misses out), the filter and CA. */
    "data=both,ooo=2,port=8", "data=value,ooo=4,fifo=16,port=4",
    "ca,data=both,ooo=3,filter,port=16",
};

/* ETMv3 on a Cortex-M3/M4 (docs/cortex-m.md 2): the ETM-M3/M4 has no
 * cycle-accurate or data trace, context ID or VMID; the sets cover what
 * it has: timestamps, branch output, the filter (an exception taken with
 * trace off, trace turning on at a handler), FIFO overflow (trace lost
 * around returns and tail-chains), short sync periods, ETMv3.4, Ignore
 * packets (between an exception return packet and its branch) and the
 * trigger. */
static const char *const v7m_sets[] = {
    "", "ts", "bb", "ts,tsper=40", "filter", "filter,ts", "fifo=48:1/8", "fifo=64:1/4,ts",
    "sync=64", "sync=64,bb", "v=4", "ignore=3", "trigger=100", "bb,ts,tsper=7",
    "ts,tsper=40,tsrate=0x100000,tsstart=0x1FFFFFF0000000",
};

/* The suite keeps a row of results per set (cli/cmd_roundtrip.c): one
 * more set than it has rows for would be dropped without a word, as the
 * 65th ETMv1 set once nearly was. */
#define N_SETS(a) (sizeof(a) / sizeof((a)[0]))
_Static_assert(N_SETS(etmv3_sets) <= TB_RT_MAX_SETS, "etmv3_sets: raise TB_RT_MAX_SETS");
_Static_assert(N_SETS(ptm_sets) <= TB_RT_MAX_SETS, "ptm_sets: raise TB_RT_MAX_SETS");
_Static_assert(N_SETS(etmv1_sets) <= TB_RT_MAX_SETS, "etmv1_sets: raise TB_RT_MAX_SETS");
_Static_assert(N_SETS(etmv2_sets) <= TB_RT_MAX_SETS, "etmv2_sets: raise TB_RT_MAX_SETS");
_Static_assert(N_SETS(v7m_sets) <= TB_RT_MAX_SETS, "v7m_sets: raise TB_RT_MAX_SETS");

const char *const *tb_rt_option_sets_v7m(size_t *n)
{
    *n = sizeof v7m_sets / sizeof v7m_sets[0];
    return v7m_sets;
}

const char *const *tb_rt_option_sets(tb_protocol protocol, size_t *n)
{
    if (protocol == TB_PROTO_ETMV2) {
        *n = sizeof etmv2_sets / sizeof etmv2_sets[0];
        return etmv2_sets;
    }
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

/* Generated programs (docs/gen.md): seed s of protocol p runs option set
 * perm[s mod n], perm a shuffle of the n sets drawn afresh for each block
 * of n seeds (s div n).  So every n consecutive seeds starting at a
 * multiple of n draw every set once, and any 2n - 1 consecutive seeds do
 * (the 300 seeds of CI: every set of every protocol, several times); the
 * pairing of seed and set is not a fixed stride, so no set meets one ISA
 * only (the seed's ISA is a hash of it, tb_gen_seed_isa). */
static uint64_t splitmix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t gen_draw(size_t n, uint64_t salt, uint64_t seed)
{
    size_t perm[256];
    uint64_t block, r;

    if (n > 256)
        n = 256;
    block = seed / n;
    r = splitmix(block * 4 + salt + 0x5851F42D4C957F2Dull);
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    for (size_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
        size_t j;

        r = splitmix(r);
        j = (size_t)(r % (i + 1));
        size_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    return perm[seed % n];
}

size_t tb_rt_gen_set(tb_protocol protocol, uint64_t seed)
{
    size_t n;

    tb_rt_option_sets(protocol, &n);
    return gen_draw(n, (uint64_t)protocol, seed);
}

/* A seed's Cortex-M program (tb_gen --isa m): its own draw over the
 * v7-M sets (a salt no protocol number has). */
size_t tb_rt_gen_set_v7m(uint64_t seed)
{
    size_t n;

    tb_rt_option_sets_v7m(&n);
    return gen_draw(n, 0x76374D, seed);
}
