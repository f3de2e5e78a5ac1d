@ Written apart (issue 32): fault handling as a Cortex-M firmware writer
@ does it, in assembly with its own vector table and start-up (no C).
@  - UsageFault enabled (SHCSR.USGFAULTENA): a UDF is taken as
@    UsageFault; the handler reads CFSR, clears it (write one to clear)
@    and skips the 16-bit UDF by adding 2 to the stacked PC;
@  - BusFault enabled: a load from 0x60000000 (nothing there: an external
@    memory controller never set up) is a precise BusFault; the handler
@    skips the 32-bit LDR.W through the stacked PC;
@  - then both disabled: the same UDF escalates to HardFault, whose
@    handler skips it the same way (HFSR.FORCED);
@  - PRIMASK (CPSID i) holds a software-pended IRQ (NVIC_ISPR) until
@    CPSIE i; FAULTMASK-free.  An NMI comes from outside (the scenario's
@    [nmi]) while the program sits in the IRQ handler's loop;
@  - a handler that runs on the process stack's thread: the program
@    switches Thread mode to PSP (CONTROL.SPSEL) before the faults, so
@    the handlers pick the frame with TST LR, #4 as real ones do.
    .syntax unified
    .thumb
    .equ SHCSR,   0xE000ED24
    .equ CFSR,    0xE000ED28
    .equ HFSR,    0xE000ED2C
    .equ ISER0,   0xE000E100
    .equ ISPR0,   0xE000E200
    .equ IPR,     0xE000E400
    .equ STACK_TOP, 0x20004000
    .equ PSP_TOP,   0x20003000

    .section .isr_vector, "a"
    .word STACK_TOP
    .word reset + 1
    .word nmi + 1
    .word hardfault + 1
    .word unexpected + 1        @ MemManage
    .word busfault + 1
    .word usagefault + 1
    .word 0, 0, 0, 0
    .word unexpected + 1        @ SVC
    .word unexpected + 1        @ DebugMon
    .word 0
    .word unexpected + 1        @ PendSV
    .word unexpected + 1        @ SysTick
    .word irq0 + 1
    .word irq1 + 1

    .text
    .thumb_func
    .global reset
    .global Reset_Handler
    .thumb_set Reset_Handler, reset
reset:
    ldr r0, =PSP_TOP
    msr psp, r0
    movs r0, #2                 @ CONTROL.SPSEL: Thread mode on PSP
    msr control, r0
    isb
    movs r4, #0                 @ r4: faults handled
    movs r5, #0                 @ r5: IRQ runs
    movs r7, #3                 @ rounds
round:
    @ UsageFault and BusFault enabled.
    ldr r0, =SHCSR
    ldr r1, [r0]
    orr r1, r1, #(3 << 17)      @ BUSFAULTENA | USGFAULTENA
    str r1, [r0]
    udf #0x11                   @ UsageFault, skipped
    ldr r0, =0x60000000
    ldr.w r1, [r0, #4]          @ BusFault, skipped; r1 keeps its value
    adds r6, r4, #1
    @ Both disabled: escalation to HardFault.
    ldr r0, =SHCSR
    ldr r1, [r0]
    bic r1, r1, #(3 << 17)
    str r1, [r0]
    udf #0x22                   @ HardFault (forced), skipped
    @ PRIMASK holds a pended IRQ1 until CPSIE.
    ldr r0, =IPR
    movs r1, #0x80
    strb r1, [r0, #1]
    movs r1, #0x40
    strb r1, [r0, #0]
    ldr r0, =ISER0
    movs r1, #3
    str r1, [r0]
    cpsid i
    ldr r0, =ISPR0
    movs r1, #2
    str r1, [r0]                @ IRQ1 pending, masked
    adds r5, r5, #0             @ still here
    cmp r5, #100
    it hi
    movhi r5, #100
    cpsie i                     @ IRQ1 taken here
    subs r7, r7, #1
    bne round
    cmp r4, #9                  @ three faults a round, three rounds
    ite eq
    moveq r0, #0
    movne r0, #1
    b _exit

    .thumb_func
    .global _exit
_exit:
    b _exit

@ The fault handlers: the stacked frame is on PSP when EXC_RETURN bit 2 is
@ set (the fault came from Thread mode on PSP), else on MSP.
    .thumb_func
usagefault:
    tst lr, #4
    ite eq
    mrseq r0, msp
    mrsne r0, psp
    ldr r1, =CFSR
    ldr r2, [r1]
    str r2, [r1]                @ write one to clear UFSR.UNDEFINSTR
    ldr r1, [r0, #24]           @ stacked PC: the UDF
    adds r1, r1, #2
    str r1, [r0, #24]
    adds r4, r4, #1
    bx lr

    .thumb_func
busfault:
    tst lr, #4
    ite eq
    mrseq r0, msp
    mrsne r0, psp
    ldr r1, =CFSR
    ldr r2, [r1]
    str r2, [r1]                @ clear BFSR (PRECISERR, BFARVALID)
    ldr r1, [r0, #24]           @ stacked PC: the LDR.W
    adds r1, r1, #4
    str r1, [r0, #24]
    adds r4, r4, #1
    bx lr

    .thumb_func
hardfault:
    tst lr, #4
    ite eq
    mrseq r0, msp
    mrsne r0, psp
    ldr r1, =HFSR
    ldr r2, [r1]
    str r2, [r1]                @ clear FORCED
    ldr r1, =CFSR
    ldr r2, [r1]
    str r2, [r1]
    ldr r1, [r0, #24]
    adds r1, r1, #2
    str r1, [r0, #24]
    adds r4, r4, #1
    bx lr

    .thumb_func
irq1:
    push {r4, lr}
    movs r0, #40
1:  subs r0, r0, #1             @ a busy loop: the NMI arrives in here
    bne 1b
    pop {r4, lr}
    adds r5, r5, #1
    bx lr

    .thumb_func
irq0:
    bx lr

    .thumb_func
nmi:
    ldr r0, =nmi_count
    ldr r1, [r0]
    adds r1, r1, #1
    str r1, [r0]
    bx lr

    .thumb_func
unexpected:
    movs r0, #0xBD
    b _exit

    .bss
    .align 2
nmi_count:
    .word 0
