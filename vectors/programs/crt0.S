@ Start-up for the vector programs: ARM vector table at 0, one stack per
@ mode, main() in SVC mode with IRQ/FIQ masked, then _exit (the default
@ exit address of every scenario).  Handlers are weak: a program defines
@ the ones it needs; the defaults end the run with r0 = 0xDEAD.
    .syntax unified
    .arm
    .section .vectors, "ax"
    .global _vectors
_vectors:
    b _reset
    b undef_handler
    b svc_handler
    b pabt_handler
    b dabt_handler
    b _unexpected
    b irq_handler
    b fiq_handler

    .text
    .global _reset
    .type _reset, %function
_reset:
    cps #0x12
    ldr sp, =_irq_stack_top
    cps #0x11
    ldr sp, =_fiq_stack_top
    cps #0x17
    ldr sp, =_abt_stack_top
    cps #0x1b
    ldr sp, =_und_stack_top
    cps #0x1f
    ldr sp, =_sys_stack_top
    cps #0x13
    ldr sp, =_svc_stack_top
    bl main
    .global _exit
    .type _exit, %function
_exit:
    b _exit

    .weak undef_handler, svc_handler, pabt_handler, dabt_handler
    .weak irq_handler, fiq_handler
undef_handler:
svc_handler:
pabt_handler:
dabt_handler:
irq_handler:
fiq_handler:
_unexpected:
    ldr r0, =0xDEAD
    b _exit

    .bss
    .balign 8
    .space 0x800
_irq_stack_top:
    .space 0x800
_fiq_stack_top:
    .space 0x800
_abt_stack_top:
    .space 0x800
_und_stack_top:
    .space 0x4000
_sys_stack_top:
    .space 0x40000
_svc_stack_top:
