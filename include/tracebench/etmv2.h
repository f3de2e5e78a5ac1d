/*
 * ETMv2 trace port (ETM10): 4-bit PIPESTAT + TRACEPKT, no TRACESYNC, one
 * sample per TRACECLK cycle (IHI0014Q chapter 6; docs/etmv2.md).
 *
 *   exec records -> tb_encoder (TB_PROTO_ETMV2) -> capture bytes
 *   capture bytes -> tb_parser (TB_PROTO_ETMV2) -> tb_packet (ISYNC,
 *                    ATOM, BRANCH, CONTEXT_ID, TRIGGER)
 *   tb_packet + tb_memimage -> tb_decoder -> tb_element
 *
 * The parser also reads data packets (U8/U9); the encoder writes
 * instruction trace only.  The sample type, the configuration and the
 * capture file are ETMv1's (etmv1.h, etm_port.h) with protocol byte 2.
 *
 * ====================================================================
 * UNVERIFIED VALUES.  Every ETMv2 value below that no public source
 * confirms (docs/etmv1-v2-sources.md 5; docs/etmv2.md 6, the same
 * table).  They are placeholders, NOT the spec: IHI0014Q Table 6.1
 * (PIPESTAT codes) and Table 6.6 (TFO headers) were not readable in any
 * copy found; the third search (docs/etmv1-v2-sources.md 1.7, every
 * page read named there) found no page that states or contradicts them.  Change
 * them here only.
 * ====================================================================
 */
#ifndef TRACEBENCH_ETMV2_H
#define TRACEBENCH_ETMV2_H

#include "tracebench/etmv1.h"

#ifdef __cplusplus
extern "C" {
#endif

/* U1 (UNVERIFIED): PIPESTAT[3:0] codes, after the fact sheet's
 * recollection (docs/etmv1-v2-sources.md): bit 0 = D (packets placed
 * in the FIFO this cycle, 6.1.3 [S]), bit 3 = a branch phantom comes
 * first (6.1.2 [S]), bit 2 with bit 3 = the phantom was not taken.
 * The mnemonics and meanings are IHI0014Q 6.1 [S]; the numbers are not. */
enum tb_etmv2_pipestat {
    TB_ETMV2_IE = 0x0, /* U1: executed */
    TB_ETMV2_DE = 0x1, /* U1: executed, packets placed */
    TB_ETMV2_IN = 0x2, /* U1: condition failed */
    TB_ETMV2_DN = 0x3, /* U1: condition failed, packets placed */
    TB_ETMV2_WT = 0x4, /* U1: no instruction */
    TB_ETMV2_DW = 0x5, /* U1: no instruction, packets placed */
    TB_ETMV2_TR = 0x6, /* U1: trigger; the real status on TRACEPKT[3:0] (6.1.7 [S]) */
    TB_ETMV2_TD = 0x7, /* U1: no FIFO data; TRACEPKT[0] = 1: a TFO (6.1.6 [S]) */
    TB_ETMV2_PT = 0x8, /* U1: 0x8..0xB = phantom taken + IE/DE/IN/DN */
    TB_ETMV2_PN = 0xC, /* U1: 0xC..0xF = phantom not taken + IE/DE/IN/DN */
};

/* U2 (UNVERIFIED): TFO packet header bytes (6.5.3 Table 6.6: the cells
 * are empty in every copy; only "RR = reason, other values reserved,
 * an encoding space of its own" is [S]).  RR in bits [1:0] here. */
#define TB_ETMV2_TFO_HDR_NORMAL 0x00u /* U2: b000000RR */
#define TB_ETMV2_TFO_HDR_LSM 0x04u    /* U2: b000001RR (never written: U3) */
#define TB_ETMV2_TFO_HDR_MASK 0xFCu

/* U4/U5 (UNVERIFIED): the TFO value on TRACEPKT.  8-bit port:
 * TRACEPKT[7:1] (6.5.1 [S], where the text breaks off); 16-bit:
 * TRACEPKT[15:1] (U5); 4-bit: TRACEPKT[3:1] of the TD cycle (6.1.6 [S])
 * = value[2:0], then TRACEPKT[3:1] of the next cycle that is not TR =
 * value[5:3] (U4: "two cycles" and the trigger rule are 6.1.7 [S], the
 * split is not).  No FIFO data goes out in either cycle. */
#define TB_ETMV2_TFO_MAX4 63u
#define TB_ETMV2_TFO_MAX8 127u
#define TB_ETMV2_TFO_MAX16 32767u

/* U6 (UNVERIFIED): the TFO value counts the FIFO bytes output after the
 * TFO cycle and before the TFO packet's header; a 4-bit port never has
 * half a byte out at a TFO (the model sends the other half first). */

/* U7 (UNVERIFIED): context ID bytes and the TFO's 4 address bytes are
 * LSB first. */

/* U8 (partly UNVERIFIED): data packets.  [S]: Table 6.2 headers; 6.4.2
 * order header, address, value, the address 1-5 bytes with bit 7 =
 * another follows; the address compressed as branch addresses, by the
 * low-order bits that changed (Bhbcbhbd).  Derived from those: 7 bits a
 * byte, lowest first, byte 5 = A[31:28] in bits [3:0].  UNVERIFIED: SS =
 * 00/01/10/11 -> 0/1/2/4 value bytes (only ETMv3 defines SS), LSB first,
 * present only with value trace (SS = 00 without it); byte 5 bits [6:4]
 * zero (Figure 6.3 not found). */

/* U9 (UNVERIFIED): TT of the load miss packets (bC1A1TT00 occurred,
 * bCTT0SS00 data) is the tag matching the two, any of 0..3; read as
 * ETMv3's out-of-order placeholder / data (data_tag); never written. */

/* U19 (UNVERIFIED): a TR whose replaced status is TD is a TFO the trigger
 * delayed (6.1.7 [S]); where its value goes is not found: the parser
 * refuses it and resyncs, the encoder never delays a TFO. */

/* U10 (UNVERIFIED): a 1-4 byte branch address keeps the ARM/Thumb
 * state; a state change sends 5 bytes (6.7.1 says only that byte 5
 * names the state). */

/* U17 (UNVERIFIED, model): context ID packet b01101110 (6.4.1 [S]:
 * bC1101110) + ctxid_bytes bytes, placed with the next traced
 * instruction's status after the change. */

/* U18 (UNVERIFIED, model): a branch phantom is a taken or not-taken
 * direct non-link branch (B<c>) followed, with no exception between, by
 * an instruction in its next cycle; both traced by one status (6.1.2 [S]
 * for the meaning, not for which branches a core folds). */

/* TFO reason codes RR (6.5.4 Table 6.7 [S]). */
enum tb_etmv2_reason {
    TB_ETMV2_R_PERIODIC = 0,
    TB_ETMV2_R_TRACE_ON = 1,
    TB_ETMV2_R_OVERFLOW = 2,
    TB_ETMV2_R_DEBUG = 3,
};

typedef tb_etmv1_sample tb_etmv2_sample; /* pipestat [3:0], tracesync 0 */

/* The trace port configuration: etm_port.h's, with ETMv2's checks. */
typedef tb_etm_port_config tb_etmv2_config;

/* ETMv2.0, 8-bit port, the rest off. */
static inline void tb_etmv2_config_init(tb_etmv2_config *c)
{
    tb_etm_port_config_init(c, 0);
}
/* As ETMv1's (etmv1.h): sizes taken and written as there. */
TB_API int tb_etmv2_config_check(const tb_etmv2_config *c);
TB_API uint32_t tb_etmv2_etmcr(const tb_etmv2_config *c);
TB_API int tb_etmv2_config_from_etmcr(tb_etmv2_config *c, uint32_t etmcr, uint8_t minor);
/* From a tb_config of protocol TB_PROTO_ETMV2. */
TB_API int tb_etmv2_config_from_tb(tb_etmv2_config *c, const tb_config *cfg);

/* Capture file: etm_port.h with protocol 2; parse_header keeps c's
 * vector_base and phantoms. */
TB_API int tb_etmv2_capture_header(const tb_etmv2_config *c, uint8_t out[16]);
TB_API int tb_etmv2_capture_parse_header(const uint8_t in[16], tb_etmv2_config *c);

/* The largest TFO value the port can show (U4/U5). */
TB_API unsigned tb_etmv2_tfo_max(unsigned port_width);

/* ---- encoder: tb_encoder (encoder.h) with protocol TB_PROTO_ETMV2, as
 * ETMv1's (etmv1.h), branches folded into phantom statuses (U18). ---- */

/* ---- packets: what tb_parser gives for a capture of protocol
 * TB_PROTO_ETMV2 (tb_config_from_etmv2), in instruction order; the
 * elements tb_decoder gives for them follow decoder.h's conventions, as
 * ETMv1's (etmv1.h) ----
 *   ISYNC     a TFO: addr, isa, reason (RR), has_ctxid/context_id,
 *             bytes[] = the TFO packet; reason 0 (periodic): the TFO
 *             cycle executed the instruction at addr
 *   ATOM      seq[]: 'E', 'N', and in CA mode 'W' for other cycles;
 *             a phantom status gives two atoms (the branch first)
 *   BRANCH    the branch address of the status before it (a DE/DN
 *             status, or DW: of the most recent instruction): addr,
 *             isa, addr_bits, exc_cancel (E bit), phdr_format = status
 *   CONTEXT_ID  a context ID packet
 *   TRIGGER, RESERVED, BAD_SEQUENCE, INCOMPLETE (err): after an error
 *             the parser waits for the next TFO.
 * Nothing comes out before the first TFO. */

#ifdef __cplusplus
}
#endif

#endif
