@ exc_mix: exceptions among ordinary code, in ARM and Thumb, in a loop:
@ undefined instructions (ARM UDF, Thumb UDF), data aborts on loads and
@ stores of every width and on LDM/STM/LDRD, SVC from both states, a
@ prefetch abort, and interrupts (scenario exc_mix.ini): IRQs at points
@ in the loop and FIQs that arrive at another exception's vector before
@ its first instruction (undefined instruction, SVC and data abort entry
@ mask IRQ but not FIQ).  Handlers count in r9..r11; r0 = a checksum.
    .syntax unified
    .arm
    .text
    .global main, undef_handler, dabt_handler, pabt_handler, svc_handler
    .global irq_handler, fiq_handler, x_recover
    .type main, %function
main:
    push {r4-r11, lr}
    mov r0, #0
    mov r9, #0
    mov r10, #0
    mov r11, #0
    ldr r4, =0x90000000         @ unmapped: data aborts
    ldr r5, =xm_buf
    mov r6, #8                  @ loop turns
    cpsie if
1:  add r0, r0, r6
    .word 0xe7f000f0            @ UDF #0 (ARM)
    str r0, [r5]
    ldr r1, [r4]                @ data abort, word load
    ldrb r1, [r4, #1]           @ data abort, byte load
    strh r0, [r4, #2]           @ data abort, halfword store
    ldrsh r2, [r5, #2]
    svc #1
    ldmia r4, {r1-r3}           @ data abort, LDM
    tst r6, #1
    stmiane r4, {r1, r2}        @ data abort on odd turns, STM
    ldrdeq r2, r3, [r4]         @ data abort on even turns, LDRD
    blx x_thumb
    cmp r6, #5
    ldreq r1, =0xA0000000
    blxeq r1                    @ prefetch abort once (resumes at x_recover)
x_recover:
    subs r6, r6, #1
    bne 1b
    cpsid if
    add r0, r0, r9
    add r0, r0, r10, lsl #8
    add r0, r0, r11, lsl #16
    pop {r4-r11, pc}

    .thumb
    .thumb_func
x_thumb:
    push {r1, lr}
    adds r0, #1
    .hword 0xde01               @ UDF #1 (Thumb)
    ldr.w r1, [r4, #8]          @ data abort, 32-bit Thumb load
    strb.w r0, [r4, #3]         @ data abort, byte store
    svc #2
    ldrh.w r1, [r5, #2]
    strh r1, [r5, #4]
    pop {r1, pc}

    .arm
undef_handler:
    add r9, r9, #1
    movs pc, lr                 @ LR_und: the next instruction, both states
dabt_handler:
    add r10, r10, #1
    subs pc, lr, #4             @ LR_abt = aborted + 8: skips it (4 bytes)
svc_handler:
    add r11, r11, #1
    movs pc, lr
pabt_handler:
    add r11, r11, #0x10
    ldr lr, =x_recover
    movs pc, lr
irq_handler:
    push {r1}
    ldr r1, =xm_buf
    str lr, [r1, #8]
    pop {r1}
    subs pc, lr, #4
fiq_handler:
    add r8, r8, #1
    subs pc, lr, #4             @ back to the vector it interrupted
    .ltorg

    .bss
    .balign 4
xm_buf: .space 16
