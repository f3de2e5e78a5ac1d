/* What a load/store instruction transfers, from its opcode (private;
 * shared by the ETMv3 and ETMv1 decoders, whose data packets say nothing
 * of direction or size).  mem_op.c. */
#ifndef TB_MEM_OP_H
#define TB_MEM_OP_H

#include "tracebench/decoder.h"

/* n transfers of size bytes each (ETMv3: n is a bound, ViewData may
 * trace fewer), all stores or all loads, except SWP (a load, then a
 * store to the same address); excl: a store-exclusive, which may fail
 * (IHI0014Q 7.4.7).  n == 0: no data instruction. */
typedef struct tb_mem_op {
    uint8_t n, size;
    bool store, swap, excl;
    bool pc_load; /* an LDM/POP whose list holds the PC (n >= 2): a
                   * "load PC first" core (ETMIDR[16]) moves its PC word
                   * first (etmv3_data.c pc_first_step) */
} tb_mem_op;

/* The transfers of the instruction at addr (isa), from the image;
 * *size = the instruction's size (0 when the image lacks it). */
tb_mem_op tb_mem_op_at(const tb_memimage *mem, uint32_t addr, uint8_t isa, uint8_t *size);

#endif
