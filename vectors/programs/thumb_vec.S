@ thumb_vec: exceptions entered in Thumb state (SCTLR.TE, ARMv7-A
@ B1.8.3), the vector table itself Thumb code at 0 (tvec.ld puts it in
@ place of crt0's ARM one).  In a loop: undefined instructions in ARM and in Thumb
@ code, reached by straight-line code, by BLX imm, by BX and as the first
@ instruction of a function (so that a filter on it turns trace on at the
@ instruction an exception cancels); data aborts on ARM and 32-bit Thumb
@ loads; SVC from both states; IRQs (scenario).  ETM10's ARMv5 cores take
@ every exception in ARM state, so ETMv2's Thumb 5-byte address has no E
@ bit (IHI0014Q Table 6.9): what the trace ports do then is docs/etmv2.md
@ 4.  Handlers count in r9 (undefined), r10 (aborts), r11 (SVC); r0 = a
@ checksum.
    .syntax unified
    .section .tvectors, "ax"
    .thumb
    .global tv_table
tv_table:
    b.w tv_stop                 @ reset: never taken here
    b.w tv_undef
    b.w tv_svc
    b.w tv_stop                 @ prefetch abort: none made
    b.w tv_dabt
    b.w tv_stop
    b.w tv_irq
    b.w tv_stop                 @ FIQ: none made

    .text
    .arm
    .global main, tv_first_udf
    .type main, %function
main:
    push {r4-r11, lr}
    mov r0, #0
    mov r9, #0
    mov r10, #0
    mov r11, #0
    mrc p15, 0, r1, c1, c0, 0
    orr r1, r1, #(1 << 30)      @ SCTLR.TE: exceptions in Thumb state
    mcr p15, 0, r1, c1, c0, 0
    isb
    ldr r4, =0xB0000000         @ unmapped: data aborts
    ldr r5, =tv_buf
    mov r6, #6                  @ loop turns
    cpsie i
1:  eor r0, r0, r6, lsl #3
    .word 0xe7f001f2            @ UDF #18 (ARM), straight-line
    ldr r1, [r4, r6, lsl #2]    @ data abort, ARM load
    str r0, [r5]
    svc #7
    blx tv_thumb                @ Thumb code: more of the same
    adr r2, tv_arm_udf
    tst r6, #1
    blxne r2                    @ odd turns: BLX reg to an ARM UDF
    blx tv_first_udf            @ BLX imm straight onto a Thumb UDF
    subs r6, r6, #1
    bne 1b
    cpsid i
    add r0, r0, r9
    add r0, r0, r10, lsl #8
    add r0, r0, r11, lsl #16
    pop {r4-r11, pc}

tv_arm_udf:
    .word 0xe7f002f3            @ UDF #35 (ARM), first instruction
    add r0, r0, #5
    bx lr

    .thumb
    .thumb_func
tv_thumb:
    push {r1, lr}
    adds r0, #3
    .hword 0xde05               @ UDF #5 (Thumb)
    ldr.w r1, [r4, #12]         @ data abort, 32-bit Thumb load
    svc #8
    cmp r6, #3
    it eq
    ldreq.w r1, [r4]            @ data abort once, conditional
    pop {r1, pc}

    .thumb_func
    .type tv_first_udf, %function
tv_first_udf:
    .hword 0xde07               @ UDF #7 (Thumb), the function's first
    adds r0, #1
    bx lr
    .size tv_first_udf, . - tv_first_udf

@ The handlers, Thumb (SCTLR.TE).  SUBS PC, LR, #imm is Thumb-2's
@ exception return (B9.3.19).
    .thumb_func
tv_undef:
    adds r9, #1
    subs pc, lr, #0             @ LR_und: the next instruction, both states
    .thumb_func
tv_dabt:
    adds r10, #1
    subs pc, lr, #4             @ LR_abt = aborted + 8; every load aborting here is 4 bytes
    .thumb_func
tv_svc:
    adds r11, #1
    subs pc, lr, #0
    .thumb_func
tv_irq:
    push {r1}
    ldr r1, =tv_buf
    str lr, [r1, #4]
    pop {r1}
    subs pc, lr, #4
    .thumb_func
tv_stop:
    ldr r0, =0xDEAD
    ldr r1, =_exit
    bx r1
    .ltorg

    .bss
    .balign 4
tv_buf: .space 8
