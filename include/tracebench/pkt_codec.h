/*
 * Field codecs both protocols share, written once for writer and parser:
 * branch-address compression and timestamps.
 */
#ifndef TRACEBENCH_PKT_CODEC_H
#define TRACEBENCH_PKT_CODEC_H

#include "tracebench/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Branch-address byte layouts (ETMv3: IHI0014Q 7.3.3; PTM: IHI0035B).
 * ORIGINAL: ETMv3 with ETMIDR[20] = 0 (or before v3.4): bytes 2-4 carry
 *   7 address bits even when last; exception bytes only after byte 5.
 * SIXBIT:   PTM, and ETMv3.4+ alternative encoding: a last byte 2-4 has
 *   6 address bits and bit 6 = "exception bytes follow". */
typedef enum tb_addr_scheme {
    TB_ADDR_ORIGINAL = 0,
    TB_ADDR_SIXBIT = 1,
} tb_addr_scheme;

/* Address bits below the packet's first (ARM 2, Thumb 1, Jazelle 0). */
TB_API unsigned tb_addr_shift(tb_isa isa);

/* Low address bits replaced by a k-byte address (k = 1..5). */
TB_API unsigned tb_addr_bits_for(tb_addr_scheme s, tb_isa isa, unsigned k);

/* Encodes addr (state isa) against the last output address and ISA.
 * Uses the fewest bytes that make the decoder's merge give addr; an ISA
 * change, or want_exc with a length that cannot carry the X bit, forces
 * more bytes.  min_bytes (0..5) sets a floor.  Byte 0 has bit 0 = 1 (a
 * branch header); with want_exc the X bit is set in the last byte, the
 * caller appends the exception bytes.  Writes 1..5 bytes to out and
 * returns the count. */
TB_API int tb_addr_encode(tb_addr_scheme s, uint32_t addr, tb_isa isa,
                   uint32_t last_addr, tb_isa last_isa, bool want_exc,
                   unsigned min_bytes, uint8_t out[5]);

/* Given the address bytes b[0..n-1] (n = 1..5, already delimited by the
 * C bits), merges them into last_addr/last_isa.  Sets *addr, *isa (the
 * ISA named by byte 5, else last_isa), *nbits (bits replaced) and
 * *exc_follows.  *isa_named tells whether byte 5 named the ISA.
 * Returns 0, or TB_ERR_BAD_PACKET if byte 5 names no ISA. */
TB_API int tb_addr_decode(tb_addr_scheme s, const uint8_t *b, unsigned n,
                   uint32_t last_addr, tb_isa last_isa, uint32_t *addr,
                   tb_isa *isa, bool *isa_named, unsigned *nbits,
                   bool *exc_follows);

/* How many address bytes follow from b[0..avail-1]: returns n (1..5) when
 * the address is complete, 0 when more bytes are needed. */
TB_API unsigned tb_addr_length(tb_addr_scheme s, const uint8_t *b, size_t avail);

/* Timestamps (IHI0014Q, IHI0035B timestamp packets): 7 bits a byte LSB first, C bit
 * 7; the last possible byte (7th of a 48-bit, 9th of a 64-bit value)
 * carries the rest at full width.  Encodes value against last (only the
 * changed low bits), `full` forces every byte.  Returns bytes (1..9). */
TB_API int tb_ts_encode(uint64_t value, uint64_t last, bool ts64, bool full,
                 uint8_t out[9]);
/* Bytes needed: returns n when complete, 0 when more are needed. */
TB_API unsigned tb_ts_length(const uint8_t *b, size_t avail, bool ts64);
/* Merges n payload bytes into last; sets *value and *nbits. */
TB_API void tb_ts_decode(const uint8_t *b, unsigned n, bool ts64, uint64_t last,
                  uint64_t *value, unsigned *nbits);

#ifdef __cplusplus
}
#endif

#endif
