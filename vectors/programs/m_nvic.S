@ Cortex-M3 (ARMv7-M) exceptions through the NVIC and the System Control
@ Block, configured as on silicon: interrupt priorities (NVIC_IPR, SHPR),
@ enables (NVIC_ISER), PendSV set from a handler (ICSR.PENDSVSET) so that
@ it tail-chains, IRQ1 preempting IRQ0, IRQ2 and IRQ3 arriving together
@ (back to back: the second tail-chains), SVC, SysTick (SYST_RVR,
@ SYST_CSR), and in thread code IT blocks, TBB/TBH and WFI.  The
@ scenario (m_nvic.ini) raises the interrupt lines.
    .syntax unified
    .thumb
    .cpu cortex-m3

    .equ NVIC_ISER0, 0xE000E100
    .equ NVIC_IPR0,  0xE000E400
    .equ SCB_ICSR,   0xE000ED04
    .equ SCB_SHPR2,  0xE000ED1C
    .equ SCB_SHPR3,  0xE000ED20
    .equ SYST_CSR,   0xE000E010
    .equ SYST_RVR,   0xE000E014
    .equ SYST_CVR,   0xE000E018

    .text
    .global main
    .type main, %function
    .thumb_func
main:
    push {r4-r7, lr}
    @ priorities: IRQ0 0xA0, IRQ1 0x40 (preempts IRQ0), IRQ2 0x80, IRQ3 0x80
    ldr r0, =NVIC_IPR0
    ldr r1, =0x808040A0
    str r1, [r0]
    @ SVCall 0x60 (SHPR2[31:24]); PendSV 0xE0 (lowest), SysTick 0x20
    ldr r0, =SCB_SHPR2
    mov r1, #0x60000000
    str r1, [r0]
    ldr r0, =SCB_SHPR3
    ldr r1, =0x20E00000
    str r1, [r0]
    @ enable IRQ0..IRQ3 (the scenario's lines start enabled too)
    ldr r0, =NVIC_ISER0
    movs r1, #0xF
    str r1, [r0]
    @ SysTick every 400 instructions
    ldr r0, =SYST_RVR
    movw r1, #399
    str r1, [r0]
    ldr r0, =SYST_CVR
    movs r1, #0
    str r1, [r0]
    ldr r0, =SYST_CSR
    movs r1, #7
    str r1, [r0]

    movs r4, #0            @ loop counter
    movs r5, #0            @ checksum
loop:
    @ an IT block whose members pass and fail
    ands r0, r4, #3
    cmp r0, #2
    ite eq
    addeq r5, r5, r4
    subne r5, r5, #1
    @ a switch through TBB
    and r0, r4, #3
    tbb [pc, r0]
tbl:
    .byte (c0 - tbl) / 2
    .byte (c1 - tbl) / 2
    .byte (c2 - tbl) / 2
    .byte (c3 - tbl) / 2
c0: adds r5, r5, #7
    b join
c1: eors r5, r5, r4
    b join
c2: lsls r5, r5, #1
    b join
c3: mov r0, r4
    svc #1                 @ SVC_Handler doubles r0
    adds r5, r5, r0
join:
    @ a TBH on odd counts
    and r0, r4, #1
    tbh [pc, r0, lsl #1]
tbl2:
    .hword (h0 - tbl2) / 2
    .hword (h1 - tbl2) / 2
h0: adds r5, #3
    b next
h1: subs r5, #1
next:
    cmp r4, #40
    it eq
    wfieq                  @ once: wait for the next interrupt
    adds r4, r4, #1
    cmp r4, #120
    blt loop
    ldr r1, =result
    str r5, [r1]
    ldr r0, =SYST_CSR
    movs r1, #0
    str r1, [r0]
    pop {r4-r7, pc}

    .global SVC_Handler
    .type SVC_Handler, %function
    .thumb_func
SVC_Handler:
    @ the caller's r0 is in the frame: double it there
    ldr r1, [sp]
    lsls r1, r1, #1
    str r1, [sp]
    bx lr

    .global IRQ0_Handler
    .type IRQ0_Handler, %function
    .thumb_func
IRQ0_Handler:
    push {r4, lr}
    ldr r0, =SCB_ICSR
    mov r1, #0x10000000    @ PENDSVSET: runs when IRQ0 returns (tail-chain)
    str r1, [r0]
    movs r4, #24           @ long enough for IRQ1 to preempt
1:  subs r4, #1
    bne 1b
    ldr r0, =irq0_count
    ldr r1, [r0]
    adds r1, #1
    str r1, [r0]
    pop {r4, pc}           @ exception return by POP {pc}

    .global IRQ1_Handler
    .type IRQ1_Handler, %function
    .thumb_func
IRQ1_Handler:
    ldr r0, =irq1_count
    ldr r1, [r0]
    adds r1, #1
    str r1, [r0]
    .global irq1_return
irq1_return:               @ scenario m_nvic.late: IRQ2 arrives as it unstacks
    bx lr

    .global IRQ2_Handler
    .type IRQ2_Handler, %function
    .thumb_func
IRQ2_Handler:
    ldr r0, =irq2_count
    ldr r1, [r0]
    adds r1, #1
    str r1, [r0]
    bx lr

    .global IRQ3_Handler
    .type IRQ3_Handler, %function
    .thumb_func
IRQ3_Handler:
    ldr r0, =irq2_count
    ldr r1, [r0]
    adds r1, #2
    str r1, [r0]
    ldr r0, =irq3_ret
    ldr pc, [r0]           @ exception return by LDR pc

    .global PendSV_Handler
    .type PendSV_Handler, %function
    .thumb_func
PendSV_Handler:
    ldr r0, =pendsv_count
    ldr r1, [r0]
    adds r1, #1
    str r1, [r0]
    bx lr

    .global SysTick_Handler
    .type SysTick_Handler, %function
    .thumb_func
SysTick_Handler:
    ldr r0, =tick_count
    ldr r1, [r0]
    adds r1, #1
    str r1, [r0]
    bx lr

    .data
    .balign 4
irq3_ret:
    .word 0xFFFFFFF9
    .global result, irq0_count, irq1_count, irq2_count, pendsv_count, tick_count
result: .word 0
irq0_count: .word 0
irq1_count: .word 0
irq2_count: .word 0
pendsv_count: .word 0
tick_count: .word 0
