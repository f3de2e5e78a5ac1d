/*
 * Spec coverage (speccov.h): the variant classifier, the counts over a
 * directory of snapshots, and the catalogue (vectors/spec-coverage.tsv).
 *
 * Every variant is read from the packet as the parser gives it; where
 * tb_packet has no field for it (address and timestamp byte counts, the
 * 5th address byte's ISA, the exception bytes' flags, the P-header
 * format from its bits) it is read from pkt->bytes, citing the layout.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "speccov.h"
#include "tracebench/decoder.h"
#include "tracebench/etm_port.h"
#include "tracebench/etmv1.h"
#include "tracebench/etmv2.h"
#include "tracebench/parser.h"
#include "tracebench/pipeline.h"
#include "tracebench/snapshot.h"
#include "tracebench/stream.h"

/* ------------------------------------------------------------------ */
/* The variants.  Names are stable: the catalogue rows refer to them. */

#define TB_SPECCOV_LIST(X)                                                \
    X(E_ASYNC, "etmv3.async")                                             \
    X(E_PHDR_F1, "etmv3.phdr.fmt1")                                       \
    X(E_PHDR_F2, "etmv3.phdr.fmt2")                                       \
    X(E_PHDR_CA_F0, "etmv3.phdr.ca.fmt0")                                 \
    X(E_PHDR_CA_F1, "etmv3.phdr.ca.fmt1")                                 \
    X(E_PHDR_CA_F2, "etmv3.phdr.ca.fmt2")                                 \
    X(E_PHDR_CA_F3, "etmv3.phdr.ca.fmt3")                                 \
    X(E_PHDR_CA_F4, "etmv3.phdr.ca.fmt4")                                 \
    X(E_CC, "etmv3.cc")                                                   \
    X(E_IS_NORMAL, "etmv3.isync.normal")                                  \
    X(E_IS_NORMAL_CC, "etmv3.isync.normal_cc")                            \
    X(E_IS_LSIP, "etmv3.isync.lsip")                                      \
    X(E_IS_LSIP_CC, "etmv3.isync.lsip_cc")                                \
    X(E_IS_DATAONLY, "etmv3.isync.dataonly")                              \
    X(E_IS_PERIODIC, "etmv3.isync.periodic")                              \
    X(E_IS_TRACE_ON, "etmv3.isync.trace_on")                              \
    X(E_IS_OVERFLOW, "etmv3.isync.overflow")                              \
    X(E_IS_DEBUG_EXIT, "etmv3.isync.debug_exit")                          \
    X(E_IS_NS, "etmv3.isync.ns")                                          \
    X(E_IS_HYP, "etmv3.isync.hyp")                                        \
    X(E_IS_ARM, "etmv3.isync.isa.arm")                                    \
    X(E_IS_THUMB, "etmv3.isync.isa.thumb")                                \
    X(E_IS_THUMBEE, "etmv3.isync.isa.thumbee")                            \
    X(E_IS_JAZELLE, "etmv3.isync.isa.jazelle")                            \
    X(E_IS_CTXID1, "etmv3.isync.ctxid1")                                  \
    X(E_IS_CTXID2, "etmv3.isync.ctxid2")                                  \
    X(E_IS_CTXID4, "etmv3.isync.ctxid4")                                  \
    X(E_BR_O1, "etmv3.branch.orig.len1")                                  \
    X(E_BR_O2, "etmv3.branch.orig.len2")                                  \
    X(E_BR_O3, "etmv3.branch.orig.len3")                                  \
    X(E_BR_O4, "etmv3.branch.orig.len4")                                  \
    X(E_BR_O5_ARM, "etmv3.branch.orig.len5.arm")                          \
    X(E_BR_O5_THUMB, "etmv3.branch.orig.len5.thumb")                      \
    X(E_BR_A1, "etmv3.branch.alt.len1")                                   \
    X(E_BR_A2, "etmv3.branch.alt.len2")                                   \
    X(E_BR_A3, "etmv3.branch.alt.len3")                                   \
    X(E_BR_A4, "etmv3.branch.alt.len4")                                   \
    X(E_BR_A5_ARM, "etmv3.branch.alt.len5.arm")                           \
    X(E_BR_A5_THUMB, "etmv3.branch.alt.len5.thumb")                       \
    X(E_BR_5_JAZELLE, "etmv3.branch.len5.jazelle")                        \
    X(E_BR_ALT_EXC_SHORT, "etmv3.branch.alt.exc_short")                   \
    X(E_EXC_ENTRY, "etmv3.exc.entry")                                     \
    X(E_EXC_NUM0, "etmv3.exc.num0")                                       \
    X(E_EXC_CANCEL, "etmv3.exc.cancel")                                   \
    X(E_EXC_NS, "etmv3.exc.ns")                                           \
    X(E_EXC_ALTISA, "etmv3.exc.altisa")                                   \
    X(E_EXC_HYP, "etmv3.exc.hyp")                                         \
    X(E_EXC_NUM_HI, "etmv3.exc.num_hi")                                   \
    X(E_EXC_RESUME, "etmv3.exc.resume")                                   \
    X(E_EXC_LEN1, "etmv3.exc.len1")                                       \
    X(E_EXC_LEN2, "etmv3.exc.len2")                                       \
    X(E_EXC_LEN3, "etmv3.exc.len3")                                       \
    X(E_EXC_LEGACY, "etmv3.exc.legacy")                                   \
    X(E_TS1, "etmv3.ts.len1")                                             \
    X(E_TS2, "etmv3.ts.len2")                                             \
    X(E_TS3, "etmv3.ts.len3")                                             \
    X(E_TS4, "etmv3.ts.len4")                                             \
    X(E_TS5, "etmv3.ts.len5")                                             \
    X(E_TS6, "etmv3.ts.len6")                                             \
    X(E_TS7, "etmv3.ts.len7")                                             \
    X(E_TS8, "etmv3.ts.len8")                                             \
    X(E_TS9, "etmv3.ts.len9")                                             \
    X(E_TS48, "etmv3.ts48")                                               \
    X(E_CTXID1, "etmv3.ctxid1")                                           \
    X(E_CTXID2, "etmv3.ctxid2")                                           \
    X(E_CTXID4, "etmv3.ctxid4")                                           \
    X(E_VMID, "etmv3.vmid")                                               \
    X(E_TRIGGER, "etmv3.trigger")                                         \
    X(E_IGNORE, "etmv3.ignore")                                           \
    X(E_EXC_RETURN, "etmv3.exc_return")                                   \
    X(E_EXC_ENTRY_PKT, "etmv3.exc_entry")                                 \
    X(E_M_RESET, "etmv3.v7m.exc.reset")                                   \
    X(E_M_NMI, "etmv3.v7m.exc.nmi")                                       \
    X(E_M_HARDFAULT, "etmv3.v7m.exc.hardfault")                           \
    X(E_M_MEMMANAGE, "etmv3.v7m.exc.memmanage")                           \
    X(E_M_BUSFAULT, "etmv3.v7m.exc.busfault")                             \
    X(E_M_USAGEFAULT, "etmv3.v7m.exc.usagefault")                         \
    X(E_M_SVCALL, "etmv3.v7m.exc.svcall")                                 \
    X(E_M_DEBUGMON, "etmv3.v7m.exc.debugmonitor")                         \
    X(E_M_PENDSV, "etmv3.v7m.exc.pendsv")                                 \
    X(E_M_SYSTICK, "etmv3.v7m.exc.systick")                               \
    X(E_M_IRQ1, "etmv3.v7m.exc.irq_1byte")                                \
    X(E_M_IRQ2, "etmv3.v7m.exc.irq_2byte")                                \
    X(E_M_TAILCHAIN, "etmv3.v7m.tailchain")                               \
    X(E_M_RETURN, "etmv3.v7m.return")                                     \
    X(E_M_RETURN_CANCEL, "etmv3.v7m.return_cancelled")                    \
    X(E_M_LSM_PAUSED, "etmv3.v7m.lsm_paused")                             \
    X(E_D_NORMAL, "etmv3.data.normal")                                    \
    X(E_D_NORMAL_ADDR, "etmv3.data.normal.addr")                          \
    X(E_D_OOO, "etmv3.data.ooo")                                          \
    X(E_D_PH, "etmv3.data.placeholder")                                   \
    X(E_D_PH_ADDR, "etmv3.data.placeholder.addr")                         \
    X(E_D_STORE_FAILED, "etmv3.data.store_failed")                        \
    X(E_D_SUPPRESSED, "etmv3.data.suppressed")                            \
    X(E_D_VNT, "etmv3.data.vnt")                                          \
    X(E_D_VNT_ADDR, "etmv3.data.vnt.addr")                                \
    X(E_D_V0, "etmv3.data.value0")                                        \
    X(E_D_V1, "etmv3.data.value1")                                        \
    X(E_D_V2, "etmv3.data.value2")                                        \
    X(E_D_V4, "etmv3.data.value4")                                        \
    X(P_ASYNC, "ptm.async")                                               \
    X(P_IS_PERIODIC, "ptm.isync.periodic")                                \
    X(P_IS_TRACE_ON, "ptm.isync.trace_on")                                \
    X(P_IS_OVERFLOW, "ptm.isync.overflow")                                \
    X(P_IS_DEBUG_EXIT, "ptm.isync.debug_exit")                            \
    X(P_IS_CC, "ptm.isync.cc")                                            \
    X(P_IS_NS, "ptm.isync.ns")                                            \
    X(P_IS_HYP, "ptm.isync.hyp")                                          \
    X(P_IS_ARM, "ptm.isync.isa.arm")                                      \
    X(P_IS_THUMB, "ptm.isync.isa.thumb")                                  \
    X(P_IS_THUMBEE, "ptm.isync.isa.thumbee")                              \
    X(P_IS_CTXID1, "ptm.isync.ctxid1")                                    \
    X(P_IS_CTXID2, "ptm.isync.ctxid2")                                    \
    X(P_IS_CTXID4, "ptm.isync.ctxid4")                                    \
    X(P_ATOM1, "ptm.atom.n1")                                             \
    X(P_ATOM2, "ptm.atom.n2")                                             \
    X(P_ATOM3, "ptm.atom.n3")                                             \
    X(P_ATOM4, "ptm.atom.n4")                                             \
    X(P_ATOM5, "ptm.atom.n5")                                             \
    X(P_ATOM_CA, "ptm.atom.ca")                                           \
    X(P_ATOM_CA_CONT, "ptm.atom.ca.cont")                                 \
    X(P_BR1, "ptm.branch.len1")                                           \
    X(P_BR2, "ptm.branch.len2")                                           \
    X(P_BR3, "ptm.branch.len3")                                           \
    X(P_BR4, "ptm.branch.len4")                                           \
    X(P_BR5_ARM, "ptm.branch.len5.arm")                                   \
    X(P_BR5_THUMB, "ptm.branch.len5.thumb")                               \
    X(P_BR5_JAZELLE, "ptm.branch.len5.jazelle")                           \
    X(P_BR_CC, "ptm.branch.cc")                                           \
    X(P_EXC_ENTRY, "ptm.exc.entry")                                       \
    X(P_EXC_NUM0, "ptm.exc.num0")                                         \
    X(P_EXC_NS, "ptm.exc.ns")                                             \
    X(P_EXC_ALTISA, "ptm.exc.altisa")                                     \
    X(P_EXC_HYP, "ptm.exc.hyp")                                           \
    X(P_EXC_LEN2, "ptm.exc.len2")                                         \
    X(P_WP1, "ptm.wpupdate.len1")                                         \
    X(P_WP2, "ptm.wpupdate.len2")                                         \
    X(P_WP3, "ptm.wpupdate.len3")                                         \
    X(P_WP4, "ptm.wpupdate.len4")                                         \
    X(P_WP5, "ptm.wpupdate.len5")                                         \
    X(P_WP_ALTISA, "ptm.wpupdate.altisa")                                 \
    X(P_TS1, "ptm.ts.len1")                                               \
    X(P_TS2, "ptm.ts.len2")                                               \
    X(P_TS3, "ptm.ts.len3")                                               \
    X(P_TS4, "ptm.ts.len4")                                               \
    X(P_TS5, "ptm.ts.len5")                                               \
    X(P_TS6, "ptm.ts.len6")                                               \
    X(P_TS7, "ptm.ts.len7")                                               \
    X(P_TS8, "ptm.ts.len8")                                               \
    X(P_TS9, "ptm.ts.len9")                                               \
    X(P_TS48_1, "ptm.ts48.len1")                                          \
    X(P_TS48_2, "ptm.ts48.len2")                                          \
    X(P_TS48_3, "ptm.ts48.len3")                                          \
    X(P_TS48_4, "ptm.ts48.len4")                                          \
    X(P_TS48_5, "ptm.ts48.len5")                                          \
    X(P_TS48_6, "ptm.ts48.len6")                                          \
    X(P_TS48_7, "ptm.ts48.len7")                                          \
    X(P_TS_CC, "ptm.ts.cc")                                               \
    X(P_CTXID1, "ptm.ctxid1")                                             \
    X(P_CTXID2, "ptm.ctxid2")                                             \
    X(P_CTXID4, "ptm.ctxid4")                                             \
    X(P_VMID, "ptm.vmid")                                                 \
    X(P_TRIGGER, "ptm.trigger")                                           \
    X(P_IGNORE, "ptm.ignore")                                             \
    X(P_EXC_RETURN, "ptm.exc_return")                                     \
    X(P_RSTACK_HIT, "ptm.rstack.hit")                                     \
    X(F_FRAME, "formatter.frame")                                         \
    X(F_ID_EVEN, "formatter.id_even")                                     \
    X(F_ID_ODD, "formatter.id_odd")                                       \
    X(F_ID_POS14, "formatter.id_pos14")                                   \
    X(F_MULTI_SOURCE, "formatter.multi_source")                           \
    X(F_FSYNC, "formatter.fsync")                                         \
    X(F_HSYNC, "formatter.hsync")                                         \
    X(V1_PS_IE, "etmv1.pipestat.ie")                                      \
    X(V1_PS_ID, "etmv1.pipestat.id")                                      \
    X(V1_PS_IN, "etmv1.pipestat.in")                                      \
    X(V1_PS_WT, "etmv1.pipestat.wt")                                      \
    X(V1_PS_BE, "etmv1.pipestat.be")                                      \
    X(V1_PS_BD, "etmv1.pipestat.bd")                                      \
    X(V1_PS_TR, "etmv1.pipestat.tr")                                      \
    X(V1_PS_TD, "etmv1.pipestat.td")                                      \
    X(V1_TRACESYNC, "etmv1.tracesync")                                    \
    X(V1_PORT4, "etmv1.port4")                                            \
    X(V1_PORT8, "etmv1.port8")                                            \
    X(V1_PORT16, "etmv1.port16")                                          \
    X(V1_APO_ZERO, "etmv1.apo.zero")                                      \
    X(V1_APO_NONZERO, "etmv1.apo.nonzero")                                \
    X(V1_APO_TR, "etmv1.apo.trigger")                                     \
    X(V1_APO_ABANDONED, "etmv1.apo.abandoned")                            \
    X(V1_BR1, "etmv1.branch.len1")                                        \
    X(V1_BR2, "etmv1.branch.len2")                                        \
    X(V1_BR3, "etmv1.branch.len3")                                        \
    X(V1_BR4, "etmv1.branch.len4")                                        \
    X(V1_BR5, "etmv1.branch.len5")                                        \
    X(V1_BR_ARM, "etmv1.branch.arm")                                      \
    X(V1_BR_THUMB, "etmv1.branch.thumb")                                  \
    X(V1_BR_JAZELLE, "etmv1.branch.jazelle")                              \
    X(V1_R_NORMAL, "etmv1.reason.normal")                                 \
    X(V1_R_TRACE_ON, "etmv1.reason.trace_on")                             \
    X(V1_R_OVERFLOW, "etmv1.reason.overflow")                             \
    X(V1_R_DEBUG, "etmv1.reason.debug_exit")                              \
    X(V1_R_PERIODIC, "etmv1.reason.periodic")                             \
    X(V1_CTXID1, "etmv1.ctxid1")                                          \
    X(V1_CTXID2, "etmv1.ctxid2")                                          \
    X(V1_CTXID4, "etmv1.ctxid4")                                          \
    X(V1_EXC_VECTOR, "etmv1.exc.vector")                                  \
    X(V1_EXC_HIGH, "etmv1.exc.high_vectors")                              \
    X(V1_EXC_ABORT, "etmv1.exc.data_abort")                               \
    X(V1_CA_WAIT, "etmv1.ca.wait")                                        \
    X(V1_CA_TD_ON, "etmv1.ca.td_enabled")                                 \
    X(V1_CA_TD_OFF, "etmv1.ca.td_disabled")                               \
    X(V1_TD_IDLE, "etmv1.td.idle")                                        \
    X(V1_D_ADDR, "etmv1.data.address")                                    \
    X(V1_D_VALUE, "etmv1.data.value")                                     \
    X(V2_PS_IE, "etmv2.pipestat.ie")                                      \
    X(V2_PS_DE, "etmv2.pipestat.de")                                      \
    X(V2_PS_IN, "etmv2.pipestat.in")                                      \
    X(V2_PS_DN, "etmv2.pipestat.dn")                                      \
    X(V2_PS_WT, "etmv2.pipestat.wt")                                      \
    X(V2_PS_DW, "etmv2.pipestat.dw")                                      \
    X(V2_PS_TR, "etmv2.pipestat.tr")                                      \
    X(V2_PS_TD, "etmv2.pipestat.td")                                      \
    X(V2_PT_IE, "etmv2.phantom.taken.ie")                                 \
    X(V2_PT_DE, "etmv2.phantom.taken.de")                                 \
    X(V2_PT_IN, "etmv2.phantom.taken.in")                                 \
    X(V2_PT_DN, "etmv2.phantom.taken.dn")                                 \
    X(V2_PN_IE, "etmv2.phantom.not_taken.ie")                             \
    X(V2_PN_DE, "etmv2.phantom.not_taken.de")                             \
    X(V2_PN_IN, "etmv2.phantom.not_taken.in")                             \
    X(V2_PN_DN, "etmv2.phantom.not_taken.dn")                             \
    X(V2_PORT4, "etmv2.port4")                                            \
    X(V2_PORT8, "etmv2.port8")                                            \
    X(V2_PORT16, "etmv2.port16")                                          \
    X(V2_TD_IDLE, "etmv2.td.idle")                                        \
    X(V2_CA_TD, "etmv2.ca.td")                                            \
    X(V2_CA_WAIT, "etmv2.ca.wait")                                        \
    X(V2_TFO_SPLIT, "etmv2.tfo.split4")                                   \
    X(V2_TFO_SPLIT_TR, "etmv2.tfo.split4.trigger")                        \
    X(V2_TFO_PERIODIC, "etmv2.tfo.periodic")                              \
    X(V2_TFO_TRACE_ON, "etmv2.tfo.trace_on")                              \
    X(V2_TFO_OVERFLOW, "etmv2.tfo.overflow")                              \
    X(V2_TFO_DEBUG, "etmv2.tfo.debug_exit")                               \
    X(V2_TFO_LSM, "etmv2.tfo.lsm")                                        \
    X(V2_TFO_ARM, "etmv2.tfo.isa.arm")                                    \
    X(V2_TFO_THUMB, "etmv2.tfo.isa.thumb")                                \
    X(V2_TFO_CTXID1, "etmv2.tfo.ctxid1")                                  \
    X(V2_TFO_CTXID2, "etmv2.tfo.ctxid2")                                  \
    X(V2_TFO_CTXID4, "etmv2.tfo.ctxid4")                                  \
    X(V2_BR1, "etmv2.branch.len1")                                        \
    X(V2_BR2, "etmv2.branch.len2")                                        \
    X(V2_BR3, "etmv2.branch.len3")                                        \
    X(V2_BR4, "etmv2.branch.len4")                                        \
    X(V2_BR5_ARM, "etmv2.branch.len5.arm")                                \
    X(V2_BR5_THUMB, "etmv2.branch.len5.thumb")                            \
    X(V2_BR_E, "etmv2.branch.e")                                          \
    X(V2_EXC_VECTOR, "etmv2.exc.vector")                                  \
    X(V2_EXC_HIGH, "etmv2.exc.high_vectors")                              \
    X(V2_EXC_ABORT, "etmv2.exc.data_abort")                               \
    X(V2_CTXID1, "etmv2.ctxid1")                                          \
    X(V2_CTXID2, "etmv2.ctxid2")                                          \
    X(V2_CTXID4, "etmv2.ctxid4")                                          \
    X(V2_CTXID_C, "etmv2.ctxid.more")                                     \
    X(V2_D_NORMAL, "etmv2.data.normal")                                   \
    X(V2_D_LOAD_MISS, "etmv2.data.load_miss")                             \
    X(V2_D_VNT, "etmv2.data.vnt")

enum {
#define X(sym, name) V_##sym,
    TB_SPECCOV_LIST(X)
#undef X
    V_COUNT
};

static const char *const names[V_COUNT] = {
#define X(sym, name) name,
    TB_SPECCOV_LIST(X)
#undef X
};

_Static_assert(V_COUNT <= TB_SPECCOV_MAX, "TB_SPECCOV_MAX too small");

unsigned tb_speccov_variant_count(void)
{
    return V_COUNT;
}

const char *tb_speccov_variant_name(tb_speccov_id v)
{
    return v < V_COUNT ? names[v] : NULL;
}

int tb_speccov_variant_find(const char *name)
{
    if (!name)
        return TB_ERR_INVAL;
    for (unsigned i = 0; i < V_COUNT; i++)
        if (!strcmp(names[i], name))
            return (int)i;
    return TB_ERR_NOT_FOUND;
}

/* ------------------------------------------------------------------ */
/* Classifier. */

typedef struct outv {
    tb_speccov_id *v;
    size_t n, max;
    bool full;
} outv;

static void add(outv *o, unsigned v)
{
    if (o->n < o->max)
        o->v[o->n++] = (tb_speccov_id)v;
    else
        o->full = true;
}

static int finish(const outv *o)
{
    return o->full ? TB_ERR_NOSPACE : (int)o->n;
}

/* Address bytes of a branch / WP-update address: bytes 1-4 end on C
 * (bit 7) = 0, byte 5 always ends it (IHI0014Q 7.3.5, IHI0035B 4.5.4;
 * protocol-notes 2.7, 3.7).  0 when b[0..avail) does not complete it. */
static unsigned addr_len(const uint8_t *b, size_t avail)
{
    for (size_t i = 0; i < avail && i < 5; i++)
        if (i == 4 || !(b[i] & 0x80))
            return (unsigned)i + 1;
    return 0;
}

/* Timestamp payload bytes: 7 bits a byte with C in bit 7; the 7th
 * (48-bit) or 9th (64-bit) byte is the last (protocol-notes 2.8, 3.9). */
static unsigned ts_len(const uint8_t *b, size_t avail, bool ts64)
{
    const unsigned nmax = ts64 ? 9 : 7;

    for (size_t i = 0; i < avail && i < nmax; i++)
        if (i == nmax - 1 || !(b[i] & 0x80))
            return (unsigned)i + 1;
    return 0;
}

/* ISA named by a 5th address byte: ARM b0X001xxx, Thumb b0X01xxxx,
 * Jazelle b0X1xxxxx (protocol-notes 2.7 masks; IHI0035B 4.5.4). */
enum { ISA5_NONE, ISA5_ARM, ISA5_THUMB, ISA5_JAZELLE };

static int isa5(uint8_t b)
{
    if ((b & 0xB8) == 0x08)
        return ISA5_ARM;
    if ((b & 0xB0) == 0x10)
        return ISA5_THUMB;
    if ((b & 0xA0) == 0x20)
        return ISA5_JAZELLE;
    return ISA5_NONE;
}

static void ctxid_size(outv *o, unsigned bytes, unsigned v1, unsigned v2,
                       unsigned v4)
{
    if (bytes == 1)
        add(o, v1);
    else if (bytes == 2)
        add(o, v2);
    else if (bytes == 4)
        add(o, v4);
}

static const unsigned reason_v[2][4] = {
    {V_E_IS_PERIODIC, V_E_IS_TRACE_ON, V_E_IS_OVERFLOW, V_E_IS_DEBUG_EXIT},
    {V_P_IS_PERIODIC, V_P_IS_TRACE_ON, V_P_IS_OVERFLOW, V_P_IS_DEBUG_EXIT},
};

/* P-header format from its bits: IHI0014Q 7.3.1 tables 7.2 (non-CA) and
 * 7.3 (CA). */
static void etm_phdr(const tb_config *cfg, uint8_t h, outv *o)
{
    if (!cfg->cycle_accurate) {
        if ((h & 0x83) == 0x80)          /* b1NEEEE00 */
            add(o, V_E_PHDR_F1);
        else if ((h & 0xF3) == 0x82)     /* b1000FF10 */
            add(o, V_E_PHDR_F2);
        return;
    }
    if (h == 0x80)                       /* b10000000, ETMv3.0 only */
        add(o, V_E_PHDR_CA_F0);
    else if ((h & 0xA3) == 0x80)         /* b1N0EEE00 */
        add(o, V_E_PHDR_CA_F1);
    else if ((h & 0xF3) == 0x82)         /* b1000FF10 */
        add(o, V_E_PHDR_CA_F2);
    else if ((h & 0xA3) == 0xA0)         /* b1E1WWW00 */
        add(o, V_E_PHDR_CA_F3);
    else if ((h & 0xFB) == 0x92)         /* b10010F10, ETMv3.3+ */
        add(o, V_E_PHDR_CA_F4);
}

/* ETMv3 branch: address length per encoding, 5th byte ISA, exception
 * bytes E0 [E1] [E2] (IHI0014Q 7.3.5; protocol-notes 2.7). */
static void etm_branch(const tb_config *cfg, const tb_packet *pkt, outv *o)
{
    static const unsigned orig[4] = {V_E_BR_O1, V_E_BR_O2, V_E_BR_O3, V_E_BR_O4};
    static const unsigned alt[4] = {V_E_BR_A1, V_E_BR_A2, V_E_BR_A3, V_E_BR_A4};
    const uint8_t *b = pkt->bytes, *e;
    unsigned n = addr_len(b, pkt->size), k, num;

    if (!n)
        return;
    if (n < 5) {
        add(o, (cfg->alt_branch ? alt : orig)[n - 1]);
    } else if (b[4] & 0x80) {
        /* Deprecated byte-5 form: ARM, a 3-bit code in bits 5:3. */
        add(o, cfg->alt_branch ? V_E_BR_A5_ARM : V_E_BR_O5_ARM);
        add(o, V_E_EXC_LEGACY);
    } else {
        switch (isa5(b[4])) {
        case ISA5_ARM: add(o, cfg->alt_branch ? V_E_BR_A5_ARM : V_E_BR_O5_ARM); break;
        case ISA5_THUMB: add(o, cfg->alt_branch ? V_E_BR_A5_THUMB : V_E_BR_O5_THUMB); break;
        case ISA5_JAZELLE: add(o, V_E_BR_5_JAZELLE); break;
        default: break;
        }
    }
    if (!pkt->has_exc || pkt->legacy_exc || pkt->size <= n)
        return;
    /* The exception bytes are the rest of the packet (no CC in ETMv3). */
    e = b + n;
    k = pkt->size - n;
    num = (e[0] >> 1) & 0xF;
    add(o, k == 1 ? V_E_EXC_LEN1 : k == 2 ? V_E_EXC_LEN2 : V_E_EXC_LEN3);
    if (cfg->alt_branch && n < 5)
        add(o, V_E_BR_ALT_EXC_SHORT); /* X bit in a last byte 2-4 */
    /* E0: C 7, AltISA 6, Cancel 5, number[3:0] 4:1, NS 0. */
    if (e[0] & 0x20)
        add(o, V_E_EXC_CANCEL);
    if (e[0] & 0x01)
        add(o, V_E_EXC_NS);
    if (e[0] & 0x40)
        add(o, V_E_EXC_ALTISA);
    if (k >= 2) {
        /* A byte after E0 with bit 6 set is E2 (resume), else E1: Hyp 5,
         * number[8:4] 4:0; E2 may follow E1. */
        if (e[1] & 0x40) {
            add(o, V_E_EXC_RESUME);
        } else {
            if (e[1] & 0x20)
                add(o, V_E_EXC_HYP);
            if (e[1] & 0x1F) {
                add(o, V_E_EXC_NUM_HI);
                num |= (unsigned)(e[1] & 0x1F) << 4;
            }
            if (k >= 3)
                add(o, V_E_EXC_RESUME);
        }
    }
    add(o, num ? V_E_EXC_ENTRY : V_E_EXC_NUM0);
}

static void etm_packet(const tb_config *cfg, const tb_packet *pkt, outv *o)
{
    const uint8_t *b = pkt->bytes;
    unsigned n;

    switch (pkt->kind) {
    case TB_PKT_ASYNC:
        add(o, V_E_ASYNC);
        break;
    case TB_PKT_ATOM:
        etm_phdr(cfg, b[0], o);
        break;
    case TB_PKT_CYCLE_COUNT:
        add(o, V_E_CC);
        break;
    case TB_PKT_ISYNC: {
        /* IHI0014Q 7.10.5: header 0x70 carries a cycle count; info bit 7
         * is LSiP; data-only mode (ETMCR[20]) has no address. */
        const bool cc = b[0] == 0x70;

        if (cfg->data_only)
            add(o, V_E_IS_DATAONLY);
        else if (pkt->lsip)
            add(o, cc ? V_E_IS_LSIP_CC : V_E_IS_LSIP);
        else
            add(o, cc ? V_E_IS_NORMAL_CC : V_E_IS_NORMAL);
        add(o, reason_v[0][pkt->reason & 3]);
        if (pkt->ns)
            add(o, V_E_IS_NS);
        if (pkt->hyp)
            add(o, V_E_IS_HYP);
        if (!cfg->data_only) {
            switch (pkt->isa) {
            case TB_ISA_ARM: add(o, V_E_IS_ARM); break;
            case TB_ISA_THUMB: add(o, V_E_IS_THUMB); break;
            case TB_ISA_THUMBEE: add(o, V_E_IS_THUMBEE); break;
            case TB_ISA_JAZELLE: add(o, V_E_IS_JAZELLE); break;
            default: break;
            }
        }
        ctxid_size(o, cfg->ctxid_bytes, V_E_IS_CTXID1, V_E_IS_CTXID2, V_E_IS_CTXID4);
        break;
    }
    case TB_PKT_BRANCH:
        etm_branch(cfg, pkt, o);
        break;
    case TB_PKT_TIMESTAMP:
        /* IHI0014Q 7.7: no cycle count after it in ETMv3. */
        n = pkt->size > 1 ? ts_len(b + 1, pkt->size - 1u, cfg->ts64) : 0;
        if (!cfg->ts64)
            add(o, V_E_TS48);
        else if (n)
            add(o, V_E_TS1 + n - 1);
        break;
    case TB_PKT_CONTEXT_ID:
        if (pkt->size)
            ctxid_size(o, pkt->size - 1u, V_E_CTXID1, V_E_CTXID2, V_E_CTXID4);
        break;
    case TB_PKT_VMID: add(o, V_E_VMID); break;
    case TB_PKT_TRIGGER: add(o, V_E_TRIGGER); break;
    case TB_PKT_IGNORE: add(o, V_E_IGNORE); break;
    case TB_PKT_EXC_RETURN: add(o, V_E_EXC_RETURN); break;
    case TB_PKT_EXC_ENTRY: add(o, V_E_EXC_ENTRY_PKT); break;
    case TB_PKT_DATA:
    case TB_PKT_OOO_DATA: {
        /* b00A0SS10 / b0TT0SS00: SS = value bytes 0, 1, 2, 4 (IHI0014Q
         * 7.4.2, table 7.1). */
        static const unsigned val[4] = {V_E_D_V0, V_E_D_V1, V_E_D_V2, V_E_D_V4};

        if (pkt->kind == TB_PKT_OOO_DATA)
            add(o, V_E_D_OOO);
        else
            add(o, pkt->has_data_addr ? V_E_D_NORMAL_ADDR : V_E_D_NORMAL);
        add(o, val[(b[0] >> 2) & 3]);
        break;
    }
    case TB_PKT_OOO_PLACEHOLDER:
        add(o, pkt->has_data_addr ? V_E_D_PH_ADDR : V_E_D_PH);
        break;
    case TB_PKT_STORE_FAILED: add(o, V_E_D_STORE_FAILED); break;
    case TB_PKT_DATA_SUPPRESSED: add(o, V_E_D_SUPPRESSED); break;
    case TB_PKT_VALUE_NOT_TRACED:
        add(o, pkt->has_data_addr ? V_E_D_VNT_ADDR : V_E_D_VNT);
        break;
    default:
        break;
    }
}

/* PTM branch: address length, 5th byte ISA, exception bytes E1 [E2],
 * then the CC in CA mode (IHI0035B 4.5.4; protocol-notes 3.7). */
static void ptm_branch(const tb_packet *pkt, outv *o)
{
    static const unsigned len[4] = {V_P_BR1, V_P_BR2, V_P_BR3, V_P_BR4};
    const uint8_t *b = pkt->bytes;
    unsigned n = addr_len(b, pkt->size), k = 0;

    if (!n)
        return;
    if (n < 5) {
        add(o, len[n - 1]);
    } else {
        switch (isa5(b[4])) {
        case ISA5_ARM: add(o, V_P_BR5_ARM); break;
        case ISA5_THUMB: add(o, V_P_BR5_THUMB); break;
        case ISA5_JAZELLE: add(o, V_P_BR5_JAZELLE); break;
        default: break;
        }
    }
    if (pkt->has_exc && pkt->size > n) {
        /* E1: C 7, AltISA 6, number[3:0] 4:1, NS 0; E2: Hyp 5,
         * number[8:4] 4:0. */
        const uint8_t *e = b + n;
        unsigned num = (e[0] >> 1) & 0xF;

        k = (e[0] & 0x80) && pkt->size > n + 1 ? 2 : 1;
        if (e[0] & 0x01)
            add(o, V_P_EXC_NS);
        if (e[0] & 0x40)
            add(o, V_P_EXC_ALTISA);
        if (k == 2) {
            add(o, V_P_EXC_LEN2);
            if (e[1] & 0x20)
                add(o, V_P_EXC_HYP);
            num |= (unsigned)(e[1] & 0x1F) << 4;
        }
        add(o, num ? V_P_EXC_ENTRY : V_P_EXC_NUM0);
    }
    if (pkt->size > n + k)
        add(o, V_P_BR_CC); /* anything after is the CC field (3.6) */
}

static void ptm_packet(const tb_config *cfg, const tb_packet *pkt, outv *o)
{
    const uint8_t *b = pkt->bytes;
    unsigned n;

    switch (pkt->kind) {
    case TB_PKT_ASYNC:
        add(o, V_P_ASYNC);
        break;
    case TB_PKT_ISYNC:
        /* IHI0035B 4.5: address, info (reason 6:5, NS 3, AltISA 2, Hyp
         * 1), CC (CA, reason not periodic), context ID. */
        add(o, reason_v[1][pkt->reason & 3]);
        if (pkt->has_cc)
            add(o, V_P_IS_CC);
        if (pkt->ns)
            add(o, V_P_IS_NS);
        if (pkt->hyp)
            add(o, V_P_IS_HYP);
        switch (pkt->isa) {
        case TB_ISA_ARM: add(o, V_P_IS_ARM); break;
        case TB_ISA_THUMB: add(o, V_P_IS_THUMB); break;
        case TB_ISA_THUMBEE: add(o, V_P_IS_THUMBEE); break;
        default: break;
        }
        ctxid_size(o, cfg->ctxid_bytes, V_P_IS_CTXID1, V_P_IS_CTXID2, V_P_IS_CTXID4);
        break;
    case TB_PKT_ATOM:
        if (cfg->cycle_accurate) {
            /* b1Cccccx0: one atom, C (bit 6) = CC bytes follow
             * (protocol-notes 3.5, 3.6). */
            add(o, (b[0] & 0x40) ? V_P_ATOM_CA_CONT : V_P_ATOM_CA);
        } else {
            /* A marker 1 above the atoms: bit n+1 for n atoms
             * (protocol-notes 3.5). */
            for (n = 5; n >= 1; n--)
                if (b[0] & (1u << (n + 1))) {
                    add(o, V_P_ATOM1 + n - 1);
                    break;
                }
        }
        break;
    case TB_PKT_BRANCH:
        ptm_branch(pkt, o);
        break;
    case TB_PKT_WP_UPDATE:
        /* 0x72, branch-layout address, and after a 5-byte address with
         * bit 6 set one AltISA byte (protocol-notes 3.8). */
        n = pkt->size > 1 ? addr_len(b + 1, pkt->size - 1u) : 0;
        if (n) {
            add(o, V_P_WP1 + n - 1);
            if (pkt->size > 1 + n)
                add(o, V_P_WP_ALTISA);
        }
        break;
    case TB_PKT_TIMESTAMP:
        n = pkt->size > 1 ? ts_len(b + 1, pkt->size - 1u, cfg->ts64) : 0;
        if (n) {
            add(o, (cfg->ts64 ? V_P_TS1 : V_P_TS48_1) + n - 1);
            if (pkt->size > 1 + n)
                add(o, V_P_TS_CC); /* CA: a CC field follows (3.9) */
        }
        break;
    case TB_PKT_CONTEXT_ID:
        if (pkt->size)
            ctxid_size(o, pkt->size - 1u, V_P_CTXID1, V_P_CTXID2, V_P_CTXID4);
        break;
    case TB_PKT_VMID: add(o, V_P_VMID); break;
    case TB_PKT_TRIGGER: add(o, V_P_TRIGGER); break;
    case TB_PKT_IGNORE: add(o, V_P_IGNORE); break;
    case TB_PKT_EXC_RETURN: add(o, V_P_EXC_RETURN); break;
    default:
        break;
    }
}

/* An exception vector for the ETMv1 and ETMv2 models (docs/etmv1.md 4,
 * M3; docs/etmv2.md 4 uses the same rule):
 * base + 0x00..0x1C but 0x14, at vector_base or 0xFFFF0000.  Returns 1
 * for a low/configured base, 2 for the high one, 0 otherwise. */
static int etm1_vector(const tb_config *cfg, uint32_t addr)
{
    uint32_t off = addr & 0x1F;

    if ((addr & 3) || off == 0x14)
        return 0;
    if ((addr & ~0x1Fu) == 0xFFFF0000u)
        return 2;
    return (addr & ~0x1Fu) == cfg->vector_base ? 1 : 0;
}

/* Letter c among a port atom's entries (seq_len bounded by seq[]). */
static bool has_atom(const tb_packet *pkt, char c)
{
    size_t n = pkt->seq_len < sizeof pkt->seq ? pkt->seq_len : sizeof pkt->seq;

    return memchr(pkt->seq, c, n) != NULL;
}

/* ETMv1 packets as tb_etmv1_parser gives them (etmv1.h): the address
 * sequence of a BE/BD (IHI0014Q 5.5.4: 1-5 packets, the 5th with the
 * reason in [6:4] and J in bit 7 (v1.3); then the context ID bytes,
 * 5.6.3), and W/T atoms in cycle-accurate mode (5.10).  The PIPESTAT
 * codes, TRACESYNC and APO are on the port, not in packets:
 * tb_speccov_count_etmv1_capture() counts them. */
static void etm1_packet(const tb_config *cfg, const tb_packet *pkt, outv *o)
{
    static const unsigned reason[5] = {V_V1_R_NORMAL, V_V1_R_TRACE_ON, V_V1_R_OVERFLOW,
                                       V_V1_R_DEBUG, V_V1_R_PERIODIC};
    unsigned n;
    int vec;

    switch (pkt->kind) {
    case TB_PKT_ATOM:
        /* 'W' a WT, 'T' an APO cycle or a TD with TraceEnable (docs/etmv1.md 3) */
        if (cfg->cycle_accurate && (has_atom(pkt, TB_ATOM_W) || has_atom(pkt, 'T')))
            add(o, V_V1_CA_WAIT);
        break;
    case TB_PKT_BRANCH:
        n = tb_etmv1_addr_length(pkt->bytes, pkt->size);
        if (!n)
            break;
        add(o, V_V1_BR1 + n - 1);
        if (pkt->isa == TB_ISA_JAZELLE)
            add(o, V_V1_BR_JAZELLE);
        else
            add(o, pkt->isa == TB_ISA_THUMB ? V_V1_BR_THUMB : V_V1_BR_ARM);
        if (n == 5 && pkt->reason < 5)
            add(o, reason[pkt->reason]);
        if (pkt->has_ctxid)
            ctxid_size(o, pkt->size - n, V_V1_CTXID1, V_V1_CTXID2, V_V1_CTXID4);
        /* Reasons 1-3 mark a discontinuity, not a branch (etmv1-v2 5.2):
         * only a real branch to a vector is an exception. */
        if (pkt->isa == TB_ISA_ARM && (n < 5 || pkt->reason == TB_ETMV1_R_NORMAL ||
                                       pkt->reason == TB_ETMV1_R_PERIODIC) &&
            (vec = etm1_vector(cfg, pkt->addr)) != 0) {
            add(o, vec == 2 ? V_V1_EXC_HIGH : V_V1_EXC_VECTOR);
            if ((pkt->addr & 0x1F) == 0x10)
                add(o, V_V1_EXC_ABORT);
        }
        break;
    default:
        break;
    }
}

/* ETMv2 packets as tb_etmv2_parser gives them (etmv2.h): a TFO (ISYNC:
 * RR, IHI0014Q 6.5.4 Table 6.7; address bit 0 = Thumb and the context ID
 * bytes ETMCR[15:14] sets, 6.5.4), a branch address (6.7.1 Table 6.9:
 * 1-5 bytes, byte 5 ARM b0E001xxx or Thumb b0001xxxx) whose status
 * (phdr_format) DW makes it an exception (docs/etmv2.md 4), a context ID
 * packet (bC1101110, 6.4.1), and W atoms in cycle-accurate mode (M6).
 * The PIPESTAT codes, TFO cycles and port width are on the port:
 * tb_speccov_count_etmv2_capture() counts them.  The codes and layouts
 * rest on the unverified table (docs/etmv2.md 6). */
static void etm2_packet(const tb_config *cfg, const tb_packet *pkt, outv *o)
{
    static const unsigned reason[4] = {V_V2_TFO_PERIODIC, V_V2_TFO_TRACE_ON,
                                       V_V2_TFO_OVERFLOW, V_V2_TFO_DEBUG};
    const uint8_t *b = pkt->bytes;
    unsigned n = pkt->size;
    int vec;

    switch (pkt->kind) {
    case TB_PKT_ISYNC:
        /* U2: header b000000RR, then the context ID, then 4 address bytes
         * (U7); the LSM-in-progress header (U3) the parser refuses. */
        if ((b[0] & TB_ETMV2_TFO_HDR_MASK) != TB_ETMV2_TFO_HDR_NORMAL)
            break;
        add(o, reason[b[0] & 3]);
        add(o, pkt->isa == TB_ISA_THUMB ? V_V2_TFO_THUMB : V_V2_TFO_ARM);
        if (n > 5)
            ctxid_size(o, n - 5u, V_V2_TFO_CTXID1, V_V2_TFO_CTXID2, V_V2_TFO_CTXID4);
        break;
    case TB_PKT_BRANCH:
        /* The parser gives the address bytes alone (no header, 6.4.1). */
        if (n < 5) {
            add(o, V_V2_BR1 + n - 1);
        } else if ((b[4] & 0xB8) == 0x08) {
            add(o, V_V2_BR5_ARM);
            if (b[4] & 0x40)
                add(o, V_V2_BR_E); /* E: the last traced instruction cancelled */
        } else if ((b[4] & 0xF0) == 0x10) {
            add(o, V_V2_BR5_THUMB);
        }
        /* DW: no instruction, packets placed: an exception branch; a DE
         * to a vector is a branch (docs/etmv2.md 4). */
        if (pkt->phdr_format == TB_ETMV2_DW && pkt->isa == TB_ISA_ARM &&
            (vec = etm1_vector(cfg, pkt->addr)) != 0) {
            add(o, vec == 2 ? V_V2_EXC_HIGH : V_V2_EXC_VECTOR);
            if ((pkt->addr & 0x1F) == 0x10)
                add(o, V_V2_EXC_ABORT);
        }
        break;
    case TB_PKT_CONTEXT_ID:
        ctxid_size(o, n - 1u, V_V2_CTXID1, V_V2_CTXID2, V_V2_CTXID4);
        if (b[0] & 0x80)
            add(o, V_V2_CTXID_C); /* C: another packet follows this cycle */
        break;
    case TB_PKT_DATA: /* 6.4.1 Table 6.2 bC0A0SS10 (docs/etmv2.md 9) */
        add(o, V_V2_D_NORMAL);
        break;
    case TB_PKT_VALUE_NOT_TRACED: /* bC1101010 */
        add(o, V_V2_D_VNT);
        break;
    case TB_PKT_OOO_PLACEHOLDER: /* load miss occurred bC1A1TT00 */
    case TB_PKT_OOO_DATA:        /* load miss data bCTT0SS00 */
        add(o, V_V2_D_LOAD_MISS);
        break;
    case TB_PKT_ATOM:
        if (cfg->cycle_accurate && has_atom(pkt, TB_ATOM_W))
            add(o, V_V2_CA_WAIT);
        break;
    default:
        break;
    }
}

int tb_speccov_classify_packet(const tb_config *cfg, const tb_packet *pkt,
                                tb_speccov_id *out, size_t max)
{
    outv o = {out, 0, max, false};

    if (!cfg || !pkt || (!out && max))
        return TB_ERR_INVAL;
    /* An ETMv1/ETMv2 atom comes from PIPESTAT, not from bytes: size 0
     * (etmv1.h, etmv2.h); every other packet has its bytes. */
    if ((pkt->size == 0 && !(pkt->kind == TB_PKT_ATOM && tb_protocol_is_port(cfg->protocol))) ||
        pkt->size > TB_PKT_MAX_BYTES || pkt->kind >= TB_PKT_RESERVED)
        return 0;
    if (cfg->protocol == TB_PROTO_ETMV3)
        etm_packet(cfg, pkt, &o);
    else if (cfg->protocol == TB_PROTO_PTM)
        ptm_packet(cfg, pkt, &o);
    else if (cfg->protocol == TB_PROTO_ETMV1)
        etm1_packet(cfg, pkt, &o);
    else if (cfg->protocol == TB_PROTO_ETMV2)
        etm2_packet(cfg, pkt, &o);
    else
        return TB_ERR_INVAL;
    return finish(&o);
}

int tb_speccov_classify_element(const tb_config *cfg, const tb_packet *pkt,
                                 const tb_element *el, tb_speccov_id *out,
                                 size_t max)
{
    outv o = {out, 0, max, false};

    if (!cfg || !pkt || !el || (!out && max))
        return TB_ERR_INVAL;
    /* An E atom on an indirect waypoint: the address came from the
     * return stack (IHI0035B B.3.2; protocol-notes 3.10). */
    if (cfg->protocol == TB_PROTO_PTM && cfg->return_stack &&
        pkt->kind == TB_PKT_ATOM && el->kind == TB_ELEM_INSN_RANGE &&
        (el->last_wp == TB_WP_INDIRECT || el->last_wp == TB_WP_INDIRECT_LINK) &&
        el->last_atom == TB_ATOM_E)
        add(&o, V_P_RSTACK_HIT);
    /* v7-M (a Cortex-M source): the exceptions by kind as the decoder
     * names them (IPSR numbers, DDI0337G Table 14-8 maps the traced
     * values), tail-chains and completed returns (IHI0014Q 7.6). */
    if (cfg->protocol == TB_PROTO_ETMV3 && cfg->v7m && el->kind == TB_ELEM_EXCEPTION &&
        !el->err) {
        static const uint16_t sys[16] = {
            0, V_E_M_RESET, V_E_M_NMI, V_E_M_HARDFAULT, V_E_M_MEMMANAGE, V_E_M_BUSFAULT,
            V_E_M_USAGEFAULT, 0, 0, 0, 0, V_E_M_SVCALL, V_E_M_DEBUGMON, 0, V_E_M_PENDSV,
            V_E_M_SYSTICK,
        };

        if (el->exc_num >= 16)
            /* IRQ0-IRQ7 trace as 8 and 1-7: one exception byte. */
            add(&o, el->exc_num < 24 ? V_E_M_IRQ1 : V_E_M_IRQ2);
        else if (sys[el->exc_num])
            add(&o, sys[el->exc_num]);
        if (el->tailchain)
            add(&o, V_E_M_TAILCHAIN);
        /* A tail-chain whose branch packet has Cancel: the return before
         * it was pre-empted as it unstacked and is withdrawn (DDI0337E
         * 15.5.2; the decoder drops its exception return element). */
        if (el->tailchain && pkt->kind == TB_PKT_BRANCH && pkt->exc_cancel)
            add(&o, V_E_M_RETURN_CANCEL);
    }
    if (cfg->protocol == TB_PROTO_ETMV3 && cfg->v7m && el->kind == TB_ELEM_EXC_RETURN)
        add(&o, V_E_M_RETURN);
    /* ETMv1 data bytes are told apart only with the instruction's opcode
     * (docs/etmv1.md 9: the parser hands them on as units), so the data
     * address and value packets are counted from the decoded transfers. */
    if (cfg->protocol == TB_PROTO_ETMV1 && el->kind == TB_ELEM_DATA && !el->err) {
        if (!(el->data_flags & TB_DATA_NO_ADDR))
            add(&o, V_V1_D_ADDR);
        if (!(el->data_flags & TB_DATA_NO_VALUE))
            add(&o, V_V1_D_VALUE);
    }
    return finish(&o);
}

int tb_speccov_classify_frame(const uint8_t frame[TB_FRAME_SIZE],
                               unsigned *cur_id, tb_speccov_id *out,
                               size_t max)
{
    outv o = {out, 0, max, false};

    if (!frame || !cur_id || (!out && max))
        return TB_ERR_INVAL;
    add(&o, V_F_FRAME);
    /* Even bytes with bit 0 set are IDs.  Aux bit k set for the ID at
     * byte 2k: byte 2k+1 is still the old ID's, so the change falls on
     * an odd byte; an ID at byte 14 applies from the next frame
     * (protocol-notes 5.1). */
    for (unsigned k = 0; k < 8; k++) {
        const uint8_t b = frame[2 * k];

        if (!(b & 1) || (unsigned)(b >> 1) == *cur_id)
            continue;
        if (k == 7)
            add(&o, V_F_ID_POS14);
        else if ((frame[15] >> k) & 1)
            add(&o, V_F_ID_ODD);
        else
            add(&o, V_F_ID_EVEN);
        *cur_id = b >> 1;
    }
    return finish(&o);
}

/* ------------------------------------------------------------------ */
/* Counting. */

static void count_ids(uint64_t *counts, const tb_speccov_id *v, int n)
{
    for (int i = 0; i < n; i++)
        counts[v[i]]++;
}

static int frame_counts(const uint8_t *f, unsigned *cur_id, uint64_t *counts)
{
    tb_speccov_id v[16];
    int n = tb_speccov_classify_frame(f, cur_id, v, 16);

    if (n < 0)
        return n;
    count_ids(counts, v, n);
    return 0;
}

static int note_source(void *ctx, uint8_t id, uint64_t index,
                       const uint8_t *data, size_t len)
{
    uint8_t *seen = ctx;

    (void)index;
    (void)data;
    if (len && id < 0x80)
        seen[id] = 1;
    return 0;
}

static const uint8_t FSYNC[4] = {0xFF, 0xFF, 0xFF, 0x7F};

int tb_speccov_count_buffer(const uint8_t *data, size_t len, unsigned flags,
                             uint64_t *counts)
{
    uint8_t frame[TB_FRAME_SIZE], seen[0x80] = {0};
    unsigned cur_id = 0xFF, fill = 0, sources = 0;
    tb_deformatter *d;
    int rc;

    if ((!data && len) || !counts)
        return TB_ERR_INVAL;
    if (flags & (TB_FRAME_HAS_FSYNC | TB_FRAME_HAS_HSYNC)) {
        /* Sync mode: frames start after the first FSYNC (if FSYNCs are
         * on); FSYNCs sit at frame boundaries, FF 7F half-word pads
         * (HSYNC) anywhere on the half-word grid (protocol-notes 5.1). */
        bool synced = !(flags & TB_FRAME_HAS_FSYNC);
        size_t p = 0;

        while (p < len) {
            if (fill == 0 && (flags & TB_FRAME_HAS_FSYNC) && len - p >= 4 &&
                !memcmp(data + p, FSYNC, 4)) {
                counts[V_F_FSYNC]++;
                synced = true;
                p += 4;
                continue;
            }
            if (!synced) {
                p++;
                continue;
            }
            if (len - p < 2)
                break;
            if (data[p] == 0xFF && data[p + 1] == 0x7F) {
                counts[V_F_HSYNC]++;
                p += 2;
                continue;
            }
            frame[fill++] = data[p];
            frame[fill++] = data[p + 1];
            p += 2;
            if (fill == TB_FRAME_SIZE) {
                fill = 0;
                if ((rc = frame_counts(frame, &cur_id, counts)) < 0)
                    return rc;
            }
        }
    } else {
        for (size_t p = 0; p + TB_FRAME_SIZE <= len; p += TB_FRAME_SIZE)
            if ((rc = frame_counts(data + p, &cur_id, counts)) < 0)
                return rc;
    }
    /* Sources: the IDs the project's deformatter gives data to. */
    d = tb_deformatter_new(flags);
    if (!d)
        return TB_ERR_NOMEM;
    rc = tb_deformatter_push(d, data, len, 0, note_source, seen);
    if (rc >= 0)
        rc = tb_deformatter_finish(d, note_source, seen);
    tb_deformatter_free(d);
    if (rc < 0)
        return rc;
    for (unsigned i = 1; i < 0x70; i++)
        sources += seen[i];
    if (sources >= 2)
        counts[V_F_MULTI_SOURCE]++;
    return 0;
}

/* What the ETMv1 and ETMv2 capture counters share (etm_port.h: one
 * header, then a 4-byte sample a cycle): the header check, the port
 * width (once a capture) and the sample loop; a protocol's step() reads
 * the statuses of one sample. */
typedef struct port_walk {
    uint64_t *counts;
    bool ca;                 /* ETMCR[12] */
    unsigned width;          /* TRACEPKT bits */
    unsigned apo_left, apo;  /* ETMv1: APO cycles still due, APO so far */
    bool tfo_hi;             /* ETMv2: a 4-bit TFO value's second half due */
} port_walk;

typedef int (*port_step_fn)(port_walk *w, const tb_etmv1_sample *s);

static int count_port(const uint8_t *data, size_t len, uint64_t *counts, uint8_t proto,
                      const unsigned width_v[3], port_step_fn step)
{
    port_walk w = {.counts = counts};
    int rc;

    if (!data || !counts)
        return TB_ERR_INVAL;
    if (len < TB_ETM_PORT_HDR_BYTES)
        return TB_ERR_TRUNCATED;
    /* The configuration is read only from a header that parsed: on an
     * error the parsers leave it untouched. */
    if (proto == TB_ETM_PORT_V1) {
        tb_etmv1_config c;

        tb_etmv1_config_init(&c);
        if ((rc = tb_etmv1_capture_parse_header(data, &c)) < 0)
            return rc;
        w.ca = c.cycle_accurate;
        w.width = c.port_width;
    } else {
        tb_etmv2_config c;

        tb_etmv2_config_init(&c);
        if ((rc = tb_etmv2_capture_parse_header(data, &c)) < 0)
            return rc;
        w.ca = c.cycle_accurate;
        w.width = c.port_width;
    }
    counts[width_v[w.width == 4 ? 0 : w.width == 8 ? 1 : 2]]++;
    for (size_t p = TB_ETM_PORT_HDR_BYTES; p + TB_ETMV1_SAMPLE_BYTES <= len;
         p += TB_ETMV1_SAMPLE_BYTES) {
        tb_etmv1_sample s;

        if ((rc = tb_etmv1_sample_unpack(data + p, &s)) < 0 || (rc = step(&w, &s)) < 0)
            return rc;
    }
    return 0;
}

static int etm1_step(port_walk *w, const tb_etmv1_sample *s)
{
    static const unsigned status_v[8] = {V_V1_PS_IE, V_V1_PS_ID, V_V1_PS_IN, V_V1_PS_WT,
                                         V_V1_PS_BE, V_V1_PS_BD, V_V1_PS_TR, V_V1_PS_TD};
    uint64_t *counts = w->counts;
    unsigned st = s->pipestat & 7;

    if (s->tracesync)
        counts[V_V1_TRACESYNC]++;
    if (w->apo_left) {
        /* The two cycles after a BE/BD carry APO[1:0] then APO[3:2]
         * in PIPESTAT[1:0]; a TR there puts them on TRACEPKT[2:0];
         * a BE there abandons the branch before (IHI0014Q 5.6.1,
         * etmv1-v2 6). */
        if (st == TB_ETMV1_TR) {
            counts[V_V1_APO_TR]++;
            counts[V_V1_PS_TR]++;
            st = s->tracepkt & 7;
        }
        if (!(st & 4)) {
            w->apo |= (st & 3u) << (w->apo_left == 2 ? 0 : 2);
            if (--w->apo_left == 0)
                counts[w->apo ? V_V1_APO_NONZERO : V_V1_APO_ZERO]++;
            return 0;
        }
        counts[V_V1_APO_ABANDONED]++;
        w->apo_left = 0;
    } else if (st == TB_ETMV1_TR) {
        /* The status the trigger replaced is on TRACEPKT[2:0] (5.4). */
        counts[V_V1_PS_TR]++;
        st = s->tracepkt & 7;
    }
    counts[status_v[st]]++;
    if (st == TB_ETMV1_TD) {
        /* Cycle-accurate: TRACEPKT[0] = TraceEnable (5.10); without
         * it the capture keeps a TD only when asked (docs/etmv1.md 1). */
        if (w->ca)
            counts[(s->tracepkt & 1) ? V_V1_CA_TD_ON : V_V1_CA_TD_OFF]++;
        else
            counts[V_V1_TD_IDLE]++;
    }
    if (st == TB_ETMV1_BE || st == TB_ETMV1_BD) {
        w->apo_left = 2;
        w->apo = 0;
    }
    return 0;
}

int tb_speccov_count_etmv1_capture(const uint8_t *data, size_t len,
                                    uint64_t *counts)
{
    static const unsigned width_v[3] = {V_V1_PORT4, V_V1_PORT8, V_V1_PORT16};

    return count_port(data, len, counts, TB_ETM_PORT_V1, width_v, etm1_step);
}

/* ETMv2 PIPESTAT (IHI0014Q 6.1; the codes are U1, docs/etmv2.md 6). */
static int etm2_step(port_walk *w, const tb_etmv1_sample *s)
{
    static const unsigned status_v[8] = {V_V2_PS_IE, V_V2_PS_DE, V_V2_PS_IN, V_V2_PS_DN,
                                         V_V2_PS_WT, V_V2_PS_DW, V_V2_PS_TR, V_V2_PS_TD};
    static const unsigned phantom_v[8] = {V_V2_PT_IE, V_V2_PT_DE, V_V2_PT_IN, V_V2_PT_DN,
                                          V_V2_PN_IE, V_V2_PN_DE, V_V2_PN_IN, V_V2_PN_DN};
    uint64_t *counts = w->counts;
    unsigned st = s->pipestat;
    bool replaced = false;

    if (s->tracesync)
        return TB_ERR_FORMAT; /* ETMv2 has no TRACESYNC pin (4.3.1) */
    if (st == TB_ETMV2_TR) {
        /* 6.1.7: the real status on TRACEPKT[3:0]; it also delays a
         * 4-bit TFO value's second half (U4). */
        counts[V_V2_PS_TR]++;
        if (w->tfo_hi)
            counts[V_V2_TFO_SPLIT_TR]++;
        st = s->tracepkt & 15;
        if (st == TB_ETMV2_TR)
            return 0; /* no status (the parser refuses it) */
        replaced = true;
    } else {
        w->tfo_hi = false; /* U4: this cycle carried the second half */
    }
    if (st >= TB_ETMV2_PT) { /* 6.1.2: a phantom, then the status */
        counts[phantom_v[st - TB_ETMV2_PT]]++;
        return 0;
    }
    counts[status_v[st]]++;
    if (st != TB_ETMV2_TD)
        return 0;
    if (replaced)
        return 0; /* 6.1.7: a TFO the trigger delayed (U19), not an idle TD */
    if (s->tracepkt & 1) {
        /* A TFO cycle (6.1.6); on a 4-bit port its value takes two
         * cycles (U4).  Its packet is counted by reason from the parse. */
        if (w->width == 4) {
            counts[V_V2_TFO_SPLIT]++;
            w->tfo_hi = true;
        }
    } else {
        /* Without TRACEPKT[0]: cycle-accurate keeps every TD (M6), else
         * the capture keeps it only with the idle option. */
        counts[w->ca ? V_V2_CA_TD : V_V2_TD_IDLE]++;
    }
    return 0;
}

int tb_speccov_count_etmv2_capture(const uint8_t *data, size_t len,
                                    uint64_t *counts)
{
    static const unsigned width_v[3] = {V_V2_PORT4, V_V2_PORT8, V_V2_PORT16};

    return count_port(data, len, counts, TB_ETM_PORT_V2, width_v, etm2_step);
}

typedef struct src_ctx {
    const tb_config *cfg;
    tb_pipeline *pl;
    uint64_t *counts;
    tb_speccov_tally *t;
    int err;
} src_ctx;

/* Elements are counted with the packet whose decode gives them (none
 * for those of the end of trace). */
static int on_element(void *ctx, const tb_element *el)
{
    src_ctx *c = ctx;
    const tb_packet *pkt = tb_pipeline_packet(c->pl);
    tb_speccov_id v[4];
    int n;

    if (!pkt)
        return 0;
    n = tb_speccov_classify_element(c->cfg, pkt, el, v, 4);
    if (n < 0)
        return c->err = n, 1;
    count_ids(c->counts, v, n);
    return 0;
}

/* The pipeline's packet tap. */
static int on_packet(void *ctx, const tb_packet *pkt)
{
    src_ctx *c = ctx;
    tb_speccov_id v[32];
    int n;

    c->t->packets++;
    if (pkt->kind >= TB_PKT_RESERVED)
        c->t->bad++;
    n = tb_speccov_classify_packet(c->cfg, pkt, v, 32);
    if (n < 0)
        return c->err = n, 1;
    count_ids(c->counts, v, n);
    return 0;
}

static int count_source(const tb_snapshot *s, const tb_snap_source *src,
                        const tb_config *cfg, uint64_t *counts,
                        tb_speccov_tally *t, char *err, size_t errlen)
{
    src_ctx c = {.cfg = cfg, .counts = counts, .t = t};
    tb_memimage *mem = NULL;
    int rc;

    /* A Cortex-M source's v7-M rows are counted from the decoded
     * exceptions and returns (tb_speccov_classify_element); the other
     * sources are only parsed (no memory: a pipeline without decoder). */
    if ((cfg->protocol == TB_PROTO_PTM && cfg->return_stack) ||
        (cfg->protocol == TB_PROTO_ETMV1 && cfg->data_trace) ||
        (cfg->protocol == TB_PROTO_ETMV3 && cfg->v7m)) {
        rc = tb_snapshot_source_memory(s, src, &mem, err, errlen);
        if (rc < 0)
            return rc;
    }
    c.pl = tb_pipeline_new(cfg, mem,
                           &(tb_pipeline_opts){.size = sizeof(tb_pipeline_opts),
                                               .on_element = on_element, .ctx = &c,
                                               .on_packet = on_packet});
    if (!c.pl) {
        tb_memimage_free(mem);
        return TB_ERR_NOMEM;
    }
    rc = tb_pipeline_run_source(c.pl, s, src, err, errlen);
    if (c.err)
        rc = c.err;
    if (rc < 0 && err && errlen && !*err)
        snprintf(err, errlen, "source %s: %s", src->name, tb_err_str(rc));
    tb_pipeline_free(c.pl);
    tb_memimage_free(mem);
    return rc < 0 ? rc : 0;
}

/* The port side of an ETMv1 source (PIPESTAT, TRACESYNC, APO, width) or
 * an ETMv2 one (PIPESTAT, TFO cycles, width): its buffer is the capture
 * file (docs/etmv1.md 2, docs/etmv2.md 2). */
static int count_port_source(const tb_snapshot *s, const tb_snap_source *src, bool v2,
                             uint64_t *counts, char *err, size_t errlen)
{
    uint8_t *data = NULL;
    size_t len = 0;
    int rc = TB_ERR_NOT_FOUND;

    for (size_t k = 0; k < s->n_buffers; k++) {
        if (strcmp(s->buffers[k].name, src->buffer))
            continue;
        rc = tb_snapshot_read_buffer(s, &s->buffers[k], &data, &len, err, errlen);
        if (rc >= 0)
            rc = (v2 ? tb_speccov_count_etmv2_capture
                     : tb_speccov_count_etmv1_capture)(data, len, counts);
        free(data);
        break;
    }
    if (rc < 0 && err && errlen && !*err)
        snprintf(err, errlen, "source %s: port capture: %s", src->name, tb_err_str(rc));
    return rc < 0 ? rc : 0;
}

int tb_speccov_count_snapshot(const char *dir, tb_speccov_tally *t,
                               char *err, size_t errlen)
{
    uint64_t counts[TB_SPECCOV_MAX] = {0};
    tb_snapshot s;
    int rc;

    if (!dir || !t)
        return TB_ERR_INVAL;
    if (err && errlen)
        *err = 0;
    rc = tb_snapshot_load(&s, dir, err, errlen);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < s.n_sources && rc >= 0; i++) {
        tb_config cfg;
        char e[256];

        if (!s.sources[i].buffer[0] ||
            tb_snapshot_source_config(&s, &s.sources[i], &cfg, e, sizeof e) < 0)
            continue; /* never captured, or not a trace protocol we read (an ITM) */
        rc = count_source(&s, &s.sources[i], &cfg, counts, t, err, errlen);
        if (rc >= 0 && (cfg.protocol == TB_PROTO_ETMV1 || cfg.protocol == TB_PROTO_ETMV2))
            rc = count_port_source(&s, &s.sources[i], cfg.protocol == TB_PROTO_ETMV2,
                                   counts, err, errlen);
    }
    for (size_t i = 0; i < s.n_buffers && rc >= 0; i++) {
        unsigned flags;
        uint8_t *data = NULL;
        size_t len = 0;

        if (tb_snap_buffer_frame_flags(&s.buffers[i], &flags) != 0)
            continue; /* raw source data, or an unknown format */
        rc = tb_snapshot_read_buffer(&s, &s.buffers[i], &data, &len, err, errlen);
        if (rc >= 0) {
            rc = tb_speccov_count_buffer(data, len, flags, counts);
            if (rc < 0 && err && errlen)
                snprintf(err, errlen, "buffer %s: %s", s.buffers[i].name,
                         tb_err_str(rc));
        }
        free(data);
    }
    tb_snapshot_fini(&s);
    if (rc < 0)
        return rc;
    for (unsigned v = 0; v < V_COUNT; v++) {
        t->count[v] += counts[v];
        t->vectors[v] += counts[v] != 0;
    }
    t->n_vectors++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int tb_speccov_count_dir(const char *root, tb_speccov_tally *t, char *err,
                          size_t errlen)
{
    DIR *d;
    struct dirent *de;
    char **names_v = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;

    if (!root || !t)
        return TB_ERR_INVAL;
    d = opendir(root);
    if (!d) {
        if (err && errlen)
            snprintf(err, errlen, "%s: %s", root, strerror(errno));
        return TB_ERR_IO;
    }
    while ((de = readdir(d))) {
        char path[1024];
        struct stat st;

        if (de->d_name[0] == '.')
            continue;
        if (snprintf(path, sizeof path, "%s/%s/snapshot.ini", root, de->d_name) >=
                (int)sizeof path ||
            stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            char **nv = realloc(names_v, nc * sizeof *nv);

            if (!nv) {
                rc = TB_ERR_NOMEM;
                break;
            }
            names_v = nv;
            cap = nc;
        }
        if (!(names_v[n] = strdup(de->d_name))) {
            rc = TB_ERR_NOMEM;
            break;
        }
        n++;
    }
    closedir(d);
    if (rc == 0 && n)
        qsort(names_v, n, sizeof *names_v, cmp_str);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char path[1024], e[512] = "";

        snprintf(path, sizeof path, "%s/%s", root, names_v[i]);
        rc = tb_speccov_count_snapshot(path, t, e, sizeof e);
        if (rc < 0 && err && errlen)
            snprintf(err, errlen, "%s: %s", names_v[i], *e ? e : tb_err_str(rc));
    }
    for (size_t i = 0; i < n; i++)
        free(names_v[i]);
    free(names_v);
    return rc < 0 ? rc : (int)n;
}

/* ------------------------------------------------------------------ */
/* The catalogue. */

static bool valid_status(const char *s)
{
    static const char pre[] = "unreachable: ";
    size_t n = strlen(s);
    const char *open;

    if (!strcmp(s, "reachable"))
        return true;
    if (strncmp(s, pre, sizeof pre - 1) || n < sizeof pre + 4 || s[n - 1] != ')')
        return false;
    /* A reason, then "(issue N)" or "(no issue yet)". */
    open = strrchr(s, '(');
    if (!open || open <= s + sizeof pre || open[-1] != ' ')
        return false;
    if (!strcmp(open, "(no issue yet)"))
        return true;
    if (strncmp(open, "(issue ", 7) || open[7] < '0' || open[7] > '9')
        return false;
    /* "(issue N)", or "(issue N, in progress)": work on another branch
     * that will make the row reachable. */
    const char *q = open + 7;
    while (*q >= '0' && *q <= '9')
        q++;
    return !strcmp(q, ")") || !strcmp(q, ", in progress)");
}

static int cat_fail(char *err, size_t errlen, const char *path, int line,
                    const char *what)
{
    if (err && errlen)
        snprintf(err, errlen, "%s:%d: %s", path, line, what);
    return TB_ERR_FORMAT;
}

static bool copy_field(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);

    if (!n || n >= cap)
        return false;
    memcpy(dst, src, n + 1);
    return true;
}

int tb_speccov_catalogue_load(tb_speccov_catalogue *c, const char *path,
                               char *err, size_t errlen)
{
    static const char header[] = "id\tprotocol\tsection\tdescription\tstatus";
    bool have[V_COUNT] = {false}, seen_header = false;
    char buf[2048];
    size_t cap = 0;
    int line = 0, rc = 0;
    FILE *f;

    if (!c || !path)
        return TB_ERR_INVAL;
    c->n = 0;
    c->rows = NULL;
    f = fopen(path, "r");
    if (!f) {
        if (err && errlen)
            snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return TB_ERR_IO;
    }
    while (rc == 0 && fgets(buf, sizeof buf, f)) {
        char *field[5], *s = buf, msg[160];
        size_t len = strlen(buf);
        unsigned nf = 0;
        tb_speccov_row *r;
        int v;

        line++;
        if (len == sizeof buf - 1 && buf[len - 1] != '\n') {
            rc = cat_fail(err, errlen, path, line, "line too long");
            break;
        }
        while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
            buf[--len] = 0;
        if (!len || buf[0] == '#')
            continue;
        if (!seen_header) {
            seen_header = true;
            if (strcmp(buf, header))
                rc = cat_fail(err, errlen, path, line,
                              "header must be: id, protocol, section, description, status");
            continue;
        }
        for (;;) {
            char *tab = strchr(s, '\t');

            if (nf == 5)
                break;
            field[nf++] = s;
            if (!tab)
                break;
            *tab = 0;
            s = tab + 1;
        }
        if (nf != 5 || strchr(field[4], '\t')) {
            rc = cat_fail(err, errlen, path, line, "expected 5 tab-separated fields");
            break;
        }
        v = tb_speccov_variant_find(field[0]);
        if (v < 0) {
            snprintf(msg, sizeof msg, "variant '%.48s' unknown to the classifier", field[0]);
            rc = cat_fail(err, errlen, path, line, msg);
            break;
        }
        if (have[v]) {
            snprintf(msg, sizeof msg, "duplicate variant '%.48s'", field[0]);
            rc = cat_fail(err, errlen, path, line, msg);
            break;
        }
        if ((strcmp(field[1], "etmv3") && strcmp(field[1], "ptm") &&
             strcmp(field[1], "etmv1") && strcmp(field[1], "etmv2") &&
             strcmp(field[1], "formatter")) ||
            strncmp(field[0], field[1], strlen(field[1])) ||
            field[0][strlen(field[1])] != '.') {
            rc = cat_fail(err, errlen, path, line,
                          "protocol must be etmv3, ptm, etmv1, etmv2 or formatter "
                          "and prefix the id");
            break;
        }
        if (!valid_status(field[4])) {
            rc = cat_fail(err, errlen, path, line,
                          "status must be 'reachable' or 'unreachable: REASON (issue N)' "
                          "/ '(issue N, in progress)' / '(no issue yet)'");
            break;
        }
        if (c->n == cap) {
            size_t nc = cap ? cap * 2 : 128;
            tb_speccov_row *nr = realloc(c->rows, nc * sizeof *nr);

            if (!nr) {
                rc = TB_ERR_NOMEM;
                break;
            }
            c->rows = nr;
            cap = nc;
        }
        r = &c->rows[c->n];
        memset(r, 0, sizeof *r);
        if (!copy_field(r->id, sizeof r->id, field[0]) ||
            !copy_field(r->protocol, sizeof r->protocol, field[1]) ||
            !copy_field(r->section, sizeof r->section, field[2]) ||
            !copy_field(r->desc, sizeof r->desc, field[3]) ||
            !copy_field(r->status, sizeof r->status, field[4])) {
            rc = cat_fail(err, errlen, path, line, "empty or too long field");
            break;
        }
        r->var = (tb_speccov_id)v;
        have[v] = true;
        c->n++;
    }
    if (rc == 0 && ferror(f))
        rc = cat_fail(err, errlen, path, line, "read error");
    fclose(f);
    if (rc == 0 && !seen_header)
        rc = cat_fail(err, errlen, path, line, "no header");
    for (unsigned v = 0; rc == 0 && v < V_COUNT; v++)
        if (!have[v]) {
            char msg[160];

            snprintf(msg, sizeof msg, "no row for the classifier's variant '%s'", names[v]);
            rc = cat_fail(err, errlen, path, line, msg);
        }
    if (rc < 0)
        tb_speccov_catalogue_free(c);
    return rc;
}

void tb_speccov_catalogue_free(tb_speccov_catalogue *c)
{
    if (!c)
        return;
    free(c->rows);
    c->rows = NULL;
    c->n = 0;
}

bool tb_speccov_row_reachable(const tb_speccov_row *r)
{
    return r && !strcmp(r->status, "reachable");
}

/* Appends with snprintf semantics, keeping the total length needed. */
typedef struct mdout {
    char *buf;
    size_t cap, len;
} mdout;

static void md_put(mdout *m, const char *s, size_t n)
{
    if (m->len < m->cap) {
        size_t room = m->cap - m->len;

        memcpy(m->buf + m->len, s, n < room ? n : room);
    }
    m->len += n;
}

static void md_str(mdout *m, const char *s)
{
    md_put(m, s, strlen(s));
}

/* Table text: '|' escaped so a cell cannot split. */
static void md_cell(mdout *m, const char *s)
{
    for (; *s; s++)
        md_put(m, *s == '|' ? "\\|" : s, *s == '|' ? 2 : 1);
}

int tb_speccov_format_markdown(const tb_speccov_catalogue *c,
                                const tb_speccov_tally *t, char *buf,
                                size_t len)
{
    mdout m = {buf, len, 0};
    char num[64];

    if (!c || !t || (!buf && len))
        return TB_ERR_INVAL;
    md_str(&m, "| variant | description | spec | count | vectors | status |\n"
               "|---|---|---|---:|---:|---|\n");
    for (size_t i = 0; i < c->n; i++) {
        const tb_speccov_row *r = &c->rows[i];

        md_str(&m, "| `");
        md_cell(&m, r->id);
        md_str(&m, "` | ");
        md_cell(&m, r->desc);
        md_str(&m, " | ");
        md_cell(&m, r->section);
        snprintf(num, sizeof num, " | %llu | %u | ",
                 (unsigned long long)t->count[r->var], (unsigned)t->vectors[r->var]);
        md_str(&m, num);
        if (tb_speccov_row_reachable(r) && !t->count[r->var])
            md_str(&m, "**reachable, in no vector**");
        else
            md_cell(&m, r->status);
        md_str(&m, " |\n");
    }
    if (len)
        buf[m.len < len ? m.len : len - 1] = 0;
    return m.len > (size_t)0x7FFFFFFF ? TB_ERR_NOSPACE : (int)m.len;
}
