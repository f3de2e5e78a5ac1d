@ data_ops: one of each kind of memory transfer, for the simulator's data
@ records (tests/test_sim.c derives the expected records from this text
@ and the ELF's symbols): word, halfword and byte loads and stores,
@ LDRSB, STM/LDM (IB/DB), PUSH/POP (the PC last), LDRD/STRD, LDREX/STREX
@ (one succeeds, one fails: the monitor is open), LDREXD/STREXD, SWP/SWPB,
@ big-endian transfers (SETEND BE), a load to the PC that interworks to
@ Thumb, and loads whose condition fails (ARM cond, Thumb IT).  Each
@ instruction the test checks has a label; buf starts zeroed and the
@ registers r4-r11 are 0 when main runs (crt0 leaves them as reset
@ left them).  r0 = buf at the end.
    .syntax unified
    .arm
    .text
    .global main
    .type main, %function
main:
i_push:   push {r4-r11, lr}       @ 9 stores below sp: r4..r11 (0), lr (_exit)
i_lit:    ldr r0, lit_buf         @ ld lit_buf: buf
          movw r1, #0xFFEE
          movt r1, #0x80C0        @ r1 = 0x80C0FFEE
i_str:    str r1, [r0]            @ st buf     4 80c0ffee
i_strb:   strb r1, [r0, #4]       @ st buf+4   1 ee
i_strh:   strh r1, [r0, #6]       @ st buf+6   2 ffee
i_ldrb:   ldrb r2, [r0, #3]       @ ld buf+3   1 80
i_ldrsb:  ldrsb r3, [r0, #3]      @ ld buf+3   1 80 (before sign extension)
i_ldrh:   ldrh r4, [r0, #6]       @ ld buf+6   2 ffee
i_ldr:    ldr r5, [r0, #4]        @ ld buf+4   4 ffee00ee
          mov r2, #0x11
          mov r3, #0x22
          mov r4, #0x33
          mov r5, #0x44
i_stm:    stmib r0, {r2-r5}       @ st buf+4, +8, +12, +16: 11 22 33 44
          add r6, r0, #20
i_ldm:    ldmdb r6, {r7-r10}      @ ld buf+4, +8, +12, +16: 11 22 33 44
i_strd:   strd r2, r3, [r0, #24]  @ st buf+24 11, buf+28 22
i_ldrd:   ldrd r6, r7, [r0, #16]  @ ld buf+16 44, buf+20 0
          cmp r0, r0              @ Z = 1
i_ldrne:  ldrne r6, [r0]          @ fails its condition: no transfer
i_ldreq:  ldreq r6, [r0, #8]      @ ld buf+8   4 22
i_ldrex:  ldrex r6, [r0]          @ ld buf     4 80c0ffee
i_strex:  strex r8, r2, [r0]      @ st buf     4 11, r8 = 0
i_strexf: strex r9, r3, [r0]      @ st buf     4 22 failed (monitor open), r9 = 1
          add r4, r0, #24
i_ldrexd: ldrexd r6, r7, [r4]     @ ld buf+24 11, buf+28 22
          mov r6, #0x66
          mov r7, #0x77
i_strexd: strexd r10, r6, r7, [r4] @ st buf+24 66, buf+28 77, r10 = 0
          mov r10, #7             @ Rd changes at once: the record sees 0 still
i_swp:    swp r6, r5, [r0]        @ ld buf 4 11, st buf 4 44
i_swpb:   swpb r6, r3, [r0]       @ ld buf 1 44, st buf 1 22
          setend be
i_strbe:  str r1, [r0, #12]       @ st buf+12  4 80c0ffee be
i_ldrhbe: ldrh r6, [r0, #12]      @ ld buf+12  2 80c0 be
          setend le
i_ldrpc:  ldr pc, lit_tpart       @ ld lit_tpart: t_part | 1 (to Thumb)
lit_buf:  .word buf
lit_tpart: .word t_part

    .thumb
    .type t_part, %function
    .thumb_func
t_part:
t_ldr:    ldr r6, [r0, #4]        @ ld buf+4   4 11
t_strb:   strb r6, [r0, #20]      @ st buf+20  1 11
          cmp r0, #0              @ Z = 0
          ite eq
t_ldreq:  ldreq r6, [r0]          @ skipped in the IT block: no transfer
t_ldrne:  ldrne r7, [r0, #8]      @ ld buf+8   4 22
t_ldrex:  ldrex r6, [r0, #8]      @ ld buf+8   4 22
t_strex:  strex r8, r5, [r0, #8]  @ st buf+8   4 44, r8 = 0
t_strexh: strexh r8, r1, [r0]     @ st buf     2 ffee failed (monitor open)
t_pop:    pop {r4-r11, pc}        @ 9 loads: r4..r11 (0), pc (_exit, to ARM)

    .bss
    .balign 8
    .global buf
buf:      .space 32
