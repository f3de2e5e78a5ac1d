@ Start-up for the Cortex-M vector programs: the ARMv7-M vector table at
@ 0 (word 0 the initial main stack pointer, then the handlers with bit 0
@ set), reset straight into main() on MSP in Thread mode, then _exit (the
@ default exit address of every scenario).  Handlers are weak: a program
@ defines the ones it needs; the others end the run with r0 = 0xDEAD.
    .syntax unified
    .thumb
    .section .vectors, "a"
    .global _vectors
_vectors:
    .word _stack_top
    .word _reset
    .word NMI_Handler
    .word HardFault_Handler
    .word MemManage_Handler
    .word BusFault_Handler
    .word UsageFault_Handler
    .word 0, 0, 0, 0
    .word SVC_Handler
    .word DebugMon_Handler
    .word 0
    .word PendSV_Handler
    .word SysTick_Handler
    @ IRQ0..IRQ31
    .word IRQ0_Handler, IRQ1_Handler, IRQ2_Handler, IRQ3_Handler
    .word IRQ4_Handler, IRQ5_Handler, IRQ6_Handler, IRQ7_Handler
    .word IRQ8_Handler, IRQ9_Handler, IRQ10_Handler, IRQ11_Handler
    .word IRQ12_Handler, IRQ13_Handler, IRQ14_Handler, IRQ15_Handler
    .word IRQ16_Handler, IRQ17_Handler, IRQ18_Handler, IRQ19_Handler
    .word IRQ20_Handler, IRQ21_Handler, IRQ22_Handler, IRQ23_Handler
    .word IRQ24_Handler, IRQ25_Handler, IRQ26_Handler, IRQ27_Handler
    .word IRQ28_Handler, IRQ29_Handler, IRQ30_Handler, IRQ31_Handler

    .text
    .global _reset
    .type _reset, %function
    .thumb_func
_reset:
    bl main
    .global _exit
    .type _exit, %function
    .thumb_func
_exit:
    b _exit

    .weak NMI_Handler, HardFault_Handler, MemManage_Handler, BusFault_Handler
    .weak UsageFault_Handler, SVC_Handler, DebugMon_Handler, PendSV_Handler
    .weak SysTick_Handler
    .weak IRQ0_Handler, IRQ1_Handler, IRQ2_Handler, IRQ3_Handler
    .weak IRQ4_Handler, IRQ5_Handler, IRQ6_Handler, IRQ7_Handler
    .weak IRQ8_Handler, IRQ9_Handler, IRQ10_Handler, IRQ11_Handler
    .weak IRQ12_Handler, IRQ13_Handler, IRQ14_Handler, IRQ15_Handler
    .weak IRQ16_Handler, IRQ17_Handler, IRQ18_Handler, IRQ19_Handler
    .weak IRQ20_Handler, IRQ21_Handler, IRQ22_Handler, IRQ23_Handler
    .weak IRQ24_Handler, IRQ25_Handler, IRQ26_Handler, IRQ27_Handler
    .weak IRQ28_Handler, IRQ29_Handler, IRQ30_Handler, IRQ31_Handler
    .thumb_func
NMI_Handler:
    .thumb_func
HardFault_Handler:
    .thumb_func
MemManage_Handler:
    .thumb_func
BusFault_Handler:
    .thumb_func
UsageFault_Handler:
    .thumb_func
SVC_Handler:
    .thumb_func
DebugMon_Handler:
    .thumb_func
PendSV_Handler:
    .thumb_func
SysTick_Handler:
    .thumb_func
IRQ0_Handler:
    .thumb_func
IRQ1_Handler:
    .thumb_func
IRQ2_Handler:
    .thumb_func
IRQ3_Handler:
    .thumb_func
IRQ4_Handler:
    .thumb_func
IRQ5_Handler:
    .thumb_func
IRQ6_Handler:
    .thumb_func
IRQ7_Handler:
    .thumb_func
IRQ8_Handler:
    .thumb_func
IRQ9_Handler:
    .thumb_func
IRQ10_Handler:
    .thumb_func
IRQ11_Handler:
    .thumb_func
IRQ12_Handler:
    .thumb_func
IRQ13_Handler:
    .thumb_func
IRQ14_Handler:
    .thumb_func
IRQ15_Handler:
    .thumb_func
IRQ16_Handler:
    .thumb_func
IRQ17_Handler:
    .thumb_func
IRQ18_Handler:
    .thumb_func
IRQ19_Handler:
    .thumb_func
IRQ20_Handler:
    .thumb_func
IRQ21_Handler:
    .thumb_func
IRQ22_Handler:
    .thumb_func
IRQ23_Handler:
    .thumb_func
IRQ24_Handler:
    .thumb_func
IRQ25_Handler:
    .thumb_func
IRQ26_Handler:
    .thumb_func
IRQ27_Handler:
    .thumb_func
IRQ28_Handler:
    .thumb_func
IRQ29_Handler:
    .thumb_func
IRQ30_Handler:
    .thumb_func
IRQ31_Handler:
    ldr r0, =0xDEAD
    b _exit

    .bss
    .balign 8
    .space 0x1000
    .global _stack_top
_stack_top:
