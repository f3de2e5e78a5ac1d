@ Nested and back-to-back interrupts (scenario irq_fiq.ini).
@ IRQ handler (ARM): logs LR_irq and SPSR_irq, re-enables IRQ in System
@ mode (nesting window at irq_nest_point), returns with LDM ^.
@ FIQ handler: logs LR_fiq and SPSR_fiq, returns with SUBS pc, lr, #4.
    .syntax unified
    .arm
    .text
    .global main, irq_handler, fiq_handler, irq_nest_point, irq_log, fiq_log
    .type main, %function
main:
    push {r4, lr}
    cpsie if
1:  ldr r1, =irq_count
    ldr r2, [r1]
    cmp r2, #4
    blt 1b
    ldr r1, =fiq_count
    ldr r2, [r1]
    cmp r2, #2
    blt 1b
    cpsid if
    mov r0, #0
    pop {r4, pc}

irq_handler:
    push {r0-r3, r12, lr}
    mrs r0, spsr
    push {r0}
    ldr r1, =irq_count
    ldr r2, [r1]
    ldr r3, =irq_log
    add r3, r3, r2, lsl #3
    str lr, [r3]            @ LR_irq as the core set it
    str r0, [r3, #4]        @ SPSR_irq
    add r2, r2, #1
    str r2, [r1]
    cps #0x1f               @ System mode, then let IRQs nest
    push {lr}
    cpsie i
irq_nest_point:
    mov r0, #8
2:  subs r0, r0, #1
    bne 2b
    cpsid i
    pop {lr}
    cps #0x12
    pop {r0}
    msr spsr_cxsf, r0
    pop {r0-r3, r12, lr}
    subs lr, lr, #4
    stmdb sp!, {lr}
    ldmia sp!, {pc}^        @ exception return, LDM with ^

fiq_handler:
    ldr r8, =fiq_count
    ldr r9, [r8]
    ldr r10, =fiq_log
    add r10, r10, r9, lsl #3
    str lr, [r10]
    mrs r11, spsr
    str r11, [r10, #4]
    add r9, r9, #1
    str r9, [r8]
    subs pc, lr, #4
    .ltorg

    .bss
    .balign 4
irq_count: .space 4
fiq_count: .space 4
irq_log: .space 8 * 8
fiq_log: .space 8 * 8
