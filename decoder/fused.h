/*
 * Fused parse + decode (private to decoder/): runs of ETMv3 P-headers
 * and of PTM atom packets, and both protocols' branches and I-syncs, go
 * from the parser's input straight to the decompressor, without a
 * tb_packet each.  The parser calls the decompressor's entries by name
 * (a sink), so that link-time optimisation inlines them into its loop.
 * Behind tb_decoder_push(); the elements are the same, in the same
 * order, as the packet path gives.
 */
#ifndef TB_FUSED_H
#define TB_FUSED_H

#include "tracebench/decoder.h"
#include "tracebench/parser.h"
#include "protocols.h"
#include "span.h"

/* The atom sequence of ETMv3 P-header h under cfg (IHI0014Q 7.3.1
 * tables 7.2/7.3), 'W'/'E'/'N' in time order as in tb_packet.seq.
 * Returns its length, or -1 for a reserved encoding. */
int tb_etmv3_phdr_seq(const tb_config *cfg, uint8_t h, char seq[20]);

/* ETMv3: the exception bytes of a branch packet, or of an I-sync's
 * LSiP address (protocol-notes 2.7; IHI0014Q 7.10.3), as tb_packet has
 * them. */
typedef struct tb_etmv3_exc {
    bool has_exc, exc_cancel, legacy_exc;
    bool ns, ns_valid, hyp, hyp_valid, altisa;
    uint8_t exc_bytes, exc_resume;
    uint16_t exc_num;
} tb_etmv3_exc;

/* ETMv3: a branch packet's fields, what the decompressor needs of it,
 * so the fused path can hand it on without a tb_packet (as PTM's
 * tb_ptm_branch below).  The parser fills one for the packet path too. */
typedef struct tb_etmv3_branch {
    uint64_t index;
    uint32_t addr;
    uint8_t addr_bits, isa;      /* isa: tb_isa after the branch */
    bool isa_changed, addr_known;
    tb_etmv3_exc x;
} tb_etmv3_branch;

/* ETMv3: an I-sync's fields (IHI0014Q 7.10.5), likewise.  ns, hyp and
 * altisa are final: an LSiP address with exception bytes overrides the
 * info byte's (x then holds those bytes). */
typedef struct tb_etmv3_isync {
    uint64_t index;
    uint32_t addr, cc, context_id, lsip_addr;
    uint8_t isa, lsip_isa, reason;
    bool addr_known, jazelle, ns, altisa, hyp; /* ns, hyp apart: see tb_ptm_isync */
    bool has_cc, has_ctxid, lsip;
    tb_etmv3_exc x;
} tb_etmv3_isync;

/* Where the fused ETMv3 path hands runs of P-headers, branches and
 * I-syncs: the decompressor's entries below (called by name so that
 * link-time optimisation can inline them, as PTM's tb_ptm_fused_sink),
 * its element callback, and the count of elements emitted. */
typedef struct tb_etmv3_fused_sink {
    tb_etmv3_decoder *d;
    tb_element_cb cb;
    void *ctx;
    int nel;
} tb_etmv3_fused_sink;

/* tb_etmv3_parser_push(), data[i] at stream index tb_span_at(cur, i),
 * but runs of valid P-headers met in header position, branches and
 * I-syncs go to the sink first. */
int tb_etmv3_parser_push_fused(tb_etmv3_parser *p, const uint8_t *data,
                               size_t len, tb_span_cur *cur, tb_packet_cb cb,
                               void *ctx, tb_etmv3_fused_sink *sink);

/* Takes the P-headers at the start of hdr[0..n), hdr[0] (a valid
 * P-header) at span position pos (cur gives the stream indices;
 * positions asked never go back).  Returns how many it consumed (up to
 * the first byte that is no valid P-header, or 0 when the packet path
 * must take hdr[0]), or TB_ERR_STOPPED.  *nel gets the elements emitted
 * added. */
int tb_etmv3_decoder_phdrs(tb_etmv3_decoder *d, const uint8_t *hdr, size_t n,
                           tb_span_cur *cur, size_t pos, tb_element_cb cb,
                           void *ctx, int *nel);
/* A branch or I-sync: 1 when taken, 0 when the packet path must take
 * it (before the first I-sync), or TB_ERR_STOPPED (the packet whose
 * elements stopped is consumed, as in the packet path).  *nel gets the
 * elements emitted added. */
int tb_etmv3_decoder_branch(tb_etmv3_decoder *d, const tb_etmv3_branch *br,
                            tb_element_cb cb, void *ctx, int *nel);
int tb_etmv3_decoder_isync(tb_etmv3_decoder *d, const tb_etmv3_isync *is,
                           tb_element_cb cb, void *ctx, int *nel);

/* The packet fields a branch br of either protocol has alike (above and
 * below: the fields are named alike), its exception bytes' in x (ETMv3:
 * &br->x; PTM: br): the parsers' packet path builds its packet from the
 * fields it hands the fused path. */
#define TB_BRANCH_TO_PACKET(pkt, br, x)                                                   \
    do {                                                                                 \
        TB_FLOW_TO_PACKET(pkt, br, x);                                                   \
        (pkt)->addr_bits = (br)->addr_bits;                                              \
        (pkt)->isa_changed = (br)->isa_changed;                                          \
        (pkt)->addr_known = (br)->addr_known;                                            \
        TB_EXC_TO_PACKET(pkt, x);                                                        \
    } while (0)

/* Likewise an I-sync's fields (the address's bits and validity, and the
 * rest, the protocol's). */
#define TB_ISYNC_TO_PACKET(pkt, is)                                                       \
    do {                                                                                 \
        TB_FLOW_TO_PACKET(pkt, is, is);                                                  \
        (pkt)->reason = (is)->reason;                                                    \
        (pkt)->has_cc = (is)->has_cc;                                                    \
        (pkt)->cc = (is)->cc;                                                            \
        (pkt)->has_ctxid = (is)->has_ctxid;                                              \
        (pkt)->context_id = (is)->context_id;                                            \
    } while (0)

/* Where the flow goes, s's address and ISA, and the security state, Hyp
 * and AltISA in x (a branch's from its exception bytes). */
#define TB_FLOW_TO_PACKET(pkt, s, x)                                                      \
    do {                                                                                 \
        (pkt)->addr = (s)->addr;                                                         \
        (pkt)->isa = (tb_isa)(s)->isa;                                                   \
        (pkt)->ns = (x)->ns;                                                             \
        (pkt)->hyp = (x)->hyp;                                                           \
        (pkt)->altisa = (x)->altisa;                                                     \
    } while (0)

/* The exception bytes' fields both protocols have (ns, hyp, altisa
 * aside: an ETMv3 I-sync has its own). */
#define TB_EXC_TO_PACKET(pkt, x)                                                          \
    do {                                                                                 \
        (pkt)->has_exc = (x)->has_exc;                                                   \
        (pkt)->exc_bytes = (x)->exc_bytes;                                               \
        (pkt)->exc_num = (x)->exc_num;                                                   \
        (pkt)->ns_valid = (x)->ns_valid;                                                 \
        (pkt)->hyp_valid = (x)->hyp_valid;                                               \
    } while (0)

/* PTM: a run of consecutive atom packets (protocol-notes 3.5), decoded
 * by the parser without a tb_packet each.  Packet k has n[k] atoms,
 * oldest first, bit i of nbits[k] set when atom i is N, and its cycle
 * count cc[k] when has_cc (cycle-accurate trace). */
#define TB_PTM_ATOM_RUN 32
typedef struct tb_ptm_atom_run {
    unsigned count;
    bool has_cc;
    uint8_t n[TB_PTM_ATOM_RUN], nbits[TB_PTM_ATOM_RUN];
    uint32_t cc[TB_PTM_ATOM_RUN];
    uint64_t index[TB_PTM_ATOM_RUN];
} tb_ptm_atom_run;

/* The decompressor's entry for atom runs (tb_ptm_fused_sink below);
 * *nel gets the elements emitted added. */
int tb_ptm_decoder_atoms(tb_ptm_decoder *d, const tb_ptm_atom_run *run,
                         tb_element_cb cb, void *ctx, int *nel);

/* PTM: a branch address packet's fields (protocol-notes 3.7), what the
 * decompressor needs of it, so the fused path can hand it on without a
 * tb_packet.  The parser's decode_address() fills one for the packet
 * path too. */
typedef struct tb_ptm_branch {
    uint64_t index;
    uint32_t addr;
    uint8_t addr_bits;
    bool addr_known, isa_changed;
    uint8_t isa;                 /* tb_isa after the branch */
    bool ns, hyp, altisa;
    bool has_exc, ns_valid, hyp_valid;
    uint8_t exc_bytes;
    uint16_t exc_num;
    bool has_cc;
    uint32_t cc;
} tb_ptm_branch;

/* PTM: an I-sync's fields (protocol-notes 3.4), likewise. */
typedef struct tb_ptm_isync {
    uint64_t index;
    uint32_t addr;
    uint8_t isa, reason;
    /* ns and hyp apart: next to each other, as in the decoder, GCC
     * compares both with one 16-bit load, which cannot take its bytes
     * from the parser's two byte stores just before (a store-forwarding
     * stall, a third of the decoder's I-sync time on Snowball). */
    bool ns, altisa, hyp;
    bool has_cc, has_ctxid;
    uint32_t cc, context_id;
} tb_ptm_isync;

/* Where the fused PTM path hands runs of atom packets, branches and
 * I-syncs: straight to the decompressor's entries below, called by name
 * so that link-time optimisation can inline them into the parser's loop
 * (through function pointers and wrappers Snowball ran 6-9% slower; a
 * call per packet spills the parser's state).  Each entry
 * returns how many packets it took (an atom run: all or none; 0: the
 * packet path must take them, e.g. before synchronisation), or
 * TB_ERR_STOPPED (the packet whose elements stopped is consumed, the
 * rest of the chunk is lost, as in the packet path); nel counts the
 * elements they emitted. */
typedef struct tb_ptm_fused_sink {
    tb_ptm_decoder *d;
    tb_element_cb cb;
    void *ctx;
    int nel;
} tb_ptm_fused_sink;

/* The decompressor's entries for branches and I-syncs; *nel gets the
 * elements emitted added. */
int tb_ptm_decoder_branch(tb_ptm_decoder *d, const tb_ptm_branch *br,
                          tb_element_cb cb, void *ctx, int *nel);
int tb_ptm_decoder_isync(tb_ptm_decoder *d, const tb_ptm_isync *is,
                         tb_element_cb cb, void *ctx, int *nel);

/* tb_ptm_parser_push(), data[i] at stream index tb_span_at(cur, i), but
 * runs of atom packets, branches and I-syncs go to the sink first. */
int tb_ptm_parser_push_fused(tb_ptm_parser *p, const uint8_t *data,
                             size_t len, tb_span_cur *cur, tb_packet_cb cb,
                             void *ctx, tb_ptm_fused_sink *sink);

#endif
