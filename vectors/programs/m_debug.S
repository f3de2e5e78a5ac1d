@ Cortex-M3 debug monitor (issue 35): BKPT taken as a DebugMonitor
@ exception (exception 12, traced 12) rather than stopping the core, as a
@ monitor-mode debugger uses it (ARMv7-M C1.7).  No halting debugger is
@ attached (DHCSR.C_DEBUGEN 0), so:
@ - BKPT with DEMCR.MON_EN clear escalates to HardFault (HFSR.DEBUGEVT);
@ - BKPT with MON_EN set is a DebugMonitor exception returning to the BKPT
@   itself: the monitor steps the stacked PC past it (DFSR.BKPT says why);
@ - DEMCR.MON_PEND pends the monitor from software: taken at once, with
@   nothing to step (DFSR.BKPT clear);
@ - BKPT in IRQ0's handler, more urgent than the monitor, escalates to
@   HardFault again (the monitor cannot preempt);
@ - BKPT with BASEPRI masking the monitor escalates as well;
@ - the monitor, woken by MON_PEND, pends PendSV (less urgent), which
@   tail-chains at the monitor's return.
    .syntax unified
    .thumb
    .cpu cortex-m3

    .equ NVIC_ISER0, 0xE000E100
    .equ NVIC_ISPR0, 0xE000E200
    .equ NVIC_IPR0,  0xE000E400
    .equ SCB_ICSR,   0xE000ED04
    .equ SCB_SHPR3,  0xE000ED20
    .equ SCB_HFSR,   0xE000ED2C
    .equ SCB_DFSR,   0xE000ED30
    .equ DEMCR,      0xE000EDFC

    .text
    .global main
    .type main, %function
    .thumb_func
main:
    push {r4-r7, lr}
    movs r4, #0
    @ DebugMonitor priority 0x80, PendSV 0xC0 (SHPR3 bytes 0 and 2);
    @ IRQ0 0x20, enabled
    ldr r0, =SCB_SHPR3
    movs r1, #0x80
    strb r1, [r0]
    movs r1, #0xC0
    strb r1, [r0, #2]
    ldr r0, =NVIC_IPR0
    movs r1, #0x20
    strb r1, [r0]
    ldr r0, =NVIC_ISER0
    movs r1, #1
    str r1, [r0]

    @ MON_EN clear: BKPT escalates to HardFault (DEBUGEVT)
    bkpt #1
    adds r4, #1

    @ MON_EN set: BKPT is the DebugMonitor exception
    ldr r5, =DEMCR
    ldr r1, [r5]
    orr r1, r1, #0x10000    @ MON_EN
    str r1, [r5]
    bkpt #2
    adds r4, #1
    bl work
    bkpt #3
    adds r4, #1

    @ MON_PEND: the monitor pended by software, nothing to step
    ldr r1, [r5]
    orr r1, r1, #0x20000    @ MON_PEND
    str r1, [r5]
    adds r4, #1
    adds r4, #1

    @ BKPT inside IRQ0's handler (priority 0x20 above the monitor's)
    ldr r0, =NVIC_ISPR0
    movs r1, #1
    str r1, [r0]
    adds r4, #1

    @ BASEPRI 0x80 masks the monitor: BKPT escalates to HardFault
    movs r0, #0x80
    msr basepri, r0
    bkpt #5
    adds r4, #1
    movs r0, #0
    msr basepri, r0
    adds r4, #1

    ldr r0, =result
    str r4, [r0]
    pop {r4-r7, pc}

    .type work, %function
    .thumb_func
work:
    movs r0, #3
1:  subs r0, #1
    bne 1b
    bx lr

@ The monitor: a BKPT (DFSR.BKPT set) is stepped over (16-bit BKPT,
@ stacked PC + 2) and DFSR cleared; woken by MON_PEND it pends PendSV.
    .global DebugMon_Handler
    .type DebugMon_Handler, %function
    .thumb_func
DebugMon_Handler:
    ldr r2, =SCB_DFSR
    ldr r3, [r2]
    tst r3, #2
    beq 1f
    str r3, [r2]            @ write one to clear
    ldr r0, [sp, #24]
    adds r0, #2
    str r0, [sp, #24]
    b 2f
1:  ldr r2, =SCB_ICSR
    mov r3, #0x10000000     @ PENDSVSET: tail-chains at the return
    str r3, [r2]
2:  ldr r0, =mon_count
    ldr r1, [r0]
    adds r1, #1
    str r1, [r0]
    .global mon_return
mon_return:                 @ scenario m_debug.late: an IRQ arrives as it unstacks
    bx lr

@ HardFault from an escalated BKPT: HFSR.DEBUGEVT and DFSR.BKPT cleared,
@ the BKPT stepped over.
    .global HardFault_Handler
    .type HardFault_Handler, %function
    .thumb_func
HardFault_Handler:
    ldr r2, =SCB_HFSR
    ldr r3, [r2]
    str r3, [r2]
    ldr r2, =SCB_DFSR
    ldr r3, [r2]
    str r3, [r2]
    ldr r0, [sp, #24]
    adds r0, #2
    str r0, [sp, #24]
    ldr r0, =hard_count
    ldr r1, [r0]
    adds r1, #1
    str r1, [r0]
    bx lr

    .global IRQ0_Handler
    .type IRQ0_Handler, %function
    .thumb_func
IRQ0_Handler:
    push {r4, lr}
    movs r4, #2
    bkpt #4                 @ escalates: the monitor cannot preempt IRQ0
    subs r4, #1
    ldr r0, =irq_count
    ldr r1, [r0]
    adds r1, r4
    str r1, [r0]
    pop {r4, pc}

@ IRQ1: only the scenario m_debug.late raises it (issue 35).
    .global IRQ1_Handler
    .type IRQ1_Handler, %function
    .thumb_func
IRQ1_Handler:
    ldr r0, =irq1_count
    ldr r1, [r0]
    adds r1, #1
    str r1, [r0]
    bx lr

    .global PendSV_Handler
    .type PendSV_Handler, %function
    .thumb_func
PendSV_Handler:
    ldr r0, =pendsv_count
    ldr r1, [r0]
    adds r1, #1
    str r1, [r0]
    bx lr

    .bss
    .balign 4
    .global result, mon_count, hard_count, irq_count, pendsv_count, irq1_count
result: .word 0
mon_count: .word 0
hard_count: .word 0
irq_count: .word 0
pendsv_count: .word 0
irq1_count: .word 0
