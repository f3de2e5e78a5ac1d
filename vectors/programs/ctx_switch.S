@ Context switches: a periodic IRQ (scenario) switches between task A
@ (ARM) and task B (Thumb), both in System mode, and writes CONTEXTIDR
@ with the incoming task's ID.  After 8 switches it ends at _exit.
    .syntax unified
    .arm
    .text
    .global main, irq_handler, task_a, task_b
    .type main, %function
main:
    ldr r0, =0x101
    mcr p15, 0, r0, c13, c0, 1
    isb
    ldr r1, =tcb_a
    ldr r0, =current
    str r1, [r0]
    mov r4, #0
    mov r5, #0
    ldr r0, [r1, #12]
    msr spsr_cxsf, r0
    ldr lr, [r1, #8]
    movs pc, lr                 @ into task A, System mode, IRQs on

irq_handler:
    sub lr, lr, #4
    push {r0, r1}
    ldr r0, =switches
    ldr r1, [r0]
    add r1, r1, #1
    str r1, [r0]
    cmp r1, #8
    ldrge lr, =_exit
    popge {r0, r1}
    movsge pc, lr
    ldr r0, =current
    ldr r1, [r0]
    str r4, [r1]
    str r5, [r1, #4]
    str lr, [r1, #8]
    mrs r4, spsr
    str r4, [r1, #12]
    ldr r1, [r1, #16]           @ next task
    str r1, [r0]
    ldr r0, [r1, #20]
    mcr p15, 0, r0, c13, c0, 1  @ CONTEXTIDR
    isb
    ldr r4, [r1]
    ldr r5, [r1, #4]
    ldr lr, [r1, #8]
    ldr r0, [r1, #12]
    msr spsr_cxsf, r0
    pop {r0, r1}
    movs pc, lr

task_a:
    add r4, r4, #1
    add r5, r5, r4
    b task_a

    .thumb
    .thumb_func
task_b:
    adds r4, #2
    eors r5, r4
    b task_b
    .arm
    .ltorg

    .data
    .balign 4
current: .word 0
switches: .word 0
tcb_a: .word 0, 0, task_a, 0x1f, tcb_b, 0x101
tcb_b: .word 0, 0, task_b, 0x3f, tcb_a, 0x202
