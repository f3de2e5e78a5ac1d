@ Cortex-M3 faults, masks and the vector table in RAM: the program moves
@ its vector table to RAM (VTOR), enables UsageFault and BusFault (SHCSR)
@ and then takes a UsageFault on UDF, a precise BusFault on a load from
@ unmapped memory (each handler steps the stacked PC past the faulting
@ instruction), a HardFault on UDF with UsageFault disabled (escalation);
@ interrupts pended by software (NVIC_ISPR, STIR) held off by PRIMASK and
@ BASEPRI and taken as soon as the mask drops (IRQ10 at CPSIE, IRQ8 and
@ then IRQ5 by priority when BASEPRI drops, IRQ5 tail-chained); an NMI
@ (the scenario's) arriving at the first instruction of IRQ6's handler.
@ IRQ8 and up are two-byte traced exception numbers (DDI0337G Table 14-8).
    .syntax unified
    .thumb
    .cpu cortex-m3

    .equ NVIC_ISER0, 0xE000E100
    .equ NVIC_ISPR0, 0xE000E200
    .equ NVIC_IPR0,  0xE000E400
    .equ SCB_VTOR,   0xE000ED08
    .equ SCB_SHCSR,  0xE000ED24
    .equ SCB_CFSR,   0xE000ED28
    .equ NVIC_STIR,  0xE000EF00

    .text
    .global main
    .type main, %function
    .thumb_func
main:
    push {r4-r7, lr}
    @ copy the first 32 vectors to RAM and point VTOR at them
    ldr r0, =ram_vectors
    movs r1, #0
    movs r2, #32
1:  ldr r3, [r1], #4
    str r3, [r0], #4
    subs r2, #1
    bne 1b
    ldr r0, =SCB_VTOR
    ldr r1, =ram_vectors
    str r1, [r0]
    @ ... with this program's own IRQ6 handler in the RAM copy only
    ldr r2, =ram_irq6
    str r2, [r1, #(16 + 6) * 4]

    @ priorities (bytes): IRQ4 0x80, IRQ5 0x80, IRQ6 0xC0, IRQ8 0x60, IRQ10 0x20
    ldr r0, =NVIC_IPR0
    movs r1, #0x80
    strb r1, [r0, #4]
    strb r1, [r0, #5]
    movs r1, #0xC0
    strb r1, [r0, #6]
    movs r1, #0x60
    strb r1, [r0, #8]
    movs r1, #0x20
    strb r1, [r0, #10]
    ldr r0, =NVIC_ISER0
    ldr r1, =0x570          @ IRQ4, 5, 6, 8, 10
    str r1, [r0]

    @ UsageFault and BusFault enabled
    ldr r0, =SCB_SHCSR
    mov r1, #0x60000        @ BUSFAULTENA | USGFAULTENA
    str r1, [r0]
    movs r4, #0
    udf #1                  @ UsageFault (UNDEFINSTR), returns past it
    adds r4, #1
    ldr r1, =0x40000000
    ldr r0, [r1]            @ precise BusFault, returns past it
    adds r4, #1
    ldr r0, =SCB_SHCSR
    mov r1, #0x20000        @ UsageFault off: UDF escalates to HardFault
    str r1, [r0]
    udf #2
    adds r4, #1
    ldr r0, =SCB_CFSR
    ldr r1, [r0]            @ UNDEFINSTR | PRECISERR | BFARVALID
    str r1, [r0]            @ write one to clear

    @ PRIMASK: IRQ4 pended by software waits for CPSIE
    cpsid i
    ldr r0, =NVIC_ISPR0
    movs r1, #0x10
    str r1, [r0]
    adds r4, #1
    adds r4, #1
    cpsie i                 @ IRQ4 is taken after this
    adds r4, #1

    @ BASEPRI 0x40 masks IRQ5 (0x80); IRQ10 (0x20) through STIR is not
    movs r0, #0x40
    msr basepri, r0
    ldr r0, =NVIC_ISPR0
    movs r1, #0x20
    str r1, [r0]
    adds r4, #1
    cpsid i
    ldr r0, =NVIC_STIR
    movs r1, #8
    str r1, [r0]            @ IRQ8 (0x60): masked by BASEPRI too
    movs r1, #10
    str r1, [r0]            @ IRQ10 (0x20): masked by PRIMASK only
    cpsie i                 @ IRQ10 now
    adds r4, #1
    movs r0, #0
    msr basepri, r0         @ IRQ8 then IRQ5 (both preempt Thread mode)
    adds r4, #1

    @ IRQ6: a long handler the scenario's NMI preempts
    ldr r0, =NVIC_ISPR0
    movs r1, #0x40
    str r1, [r0]
    adds r4, #1
    ldr r0, =result
    str r4, [r0]
    pop {r4-r7, pc}

@ A fault handler steps the stacked PC past the faulting 16-bit
@ instruction (frame word 6) and counts.
    .macro skip16 counter
    ldr r0, [sp, #24]
    adds r0, #2
    str r0, [sp, #24]
    ldr r0, =\counter
    ldr r1, [r0]
    adds r1, #1
    str r1, [r0]
    bx lr
    .endm

    .global UsageFault_Handler
    .type UsageFault_Handler, %function
    .thumb_func
UsageFault_Handler:
    skip16 usage_count

    .global BusFault_Handler
    .type BusFault_Handler, %function
    .thumb_func
BusFault_Handler:
    skip16 bus_count

    .global HardFault_Handler
    .type HardFault_Handler, %function
    .thumb_func
HardFault_Handler:
    skip16 hard_count

    .global NMI_Handler
    .type NMI_Handler, %function
    .thumb_func
NMI_Handler:
    ldr r0, =nmi_count
    ldr r1, [r0]
    adds r1, #1
    str r1, [r0]
    bx lr

    .macro count_irq counter
    ldr r0, =\counter
    ldr r1, [r0]
    adds r1, #1
    str r1, [r0]
    bx lr
    .endm

    .global IRQ4_Handler
    .type IRQ4_Handler, %function
    .thumb_func
IRQ4_Handler:
    count_irq irq_count
    .global IRQ5_Handler
    .type IRQ5_Handler, %function
    .thumb_func
IRQ5_Handler:
    count_irq irq_count
    .global IRQ8_Handler
    .type IRQ8_Handler, %function
    .thumb_func
IRQ8_Handler:
    count_irq irq8_count
    .global IRQ10_Handler
    .type IRQ10_Handler, %function
    .thumb_func
IRQ10_Handler:
    count_irq irq10_count

    .thumb_func
ram_irq6:
    push {r4, lr}
    movs r4, #40
1:  subs r4, #1
    bne 1b
    ldr r0, =irq_count
    ldr r1, [r0]
    adds r1, #1
    str r1, [r0]
    pop {r4, pc}

    .bss
    .balign 256
ram_vectors:
    .space 32 * 4
    .global result, usage_count, bus_count, hard_count, nmi_count, irq_count
result: .word 0
usage_count: .word 0
bus_count: .word 0
hard_count: .word 0
nmi_count: .word 0
irq_count: .word 0
irq8_count: .word 0
irq10_count: .word 0
