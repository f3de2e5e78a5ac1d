@ Far branches: calls to code placed so that the branch addresses need
@ every address-compression size (1 to 5 bytes), including code at high
@ addresses and an ISA change.  See far.ld for the placement.
    .syntax unified
    .arm
    .text
    .global main
    .type main, %function
main:
    push {r4, lr}
    mov r0, #0
    bl near_fn                  @ a few bytes away
    ldr r4, =far2_fn
    blx r4
    ldr r4, =far3_fn
    blx r4
    ldr r4, =far4_fn
    blx r4
    ldr r4, =far5_fn
    blx r4
    ldr r4, =high_thumb_fn
    blx r4
    pop {r4, pc}                @ r0 = 6
near_fn:
    add r0, r0, #1
    bx lr
    .ltorg

    .section .far2, "ax"
far2_fn:
    add r0, r0, #1
    bx lr
    .section .far3, "ax"
far3_fn:
    add r0, r0, #1
    bx lr
    .section .far4, "ax"
far4_fn:
    add r0, r0, #1
    bx lr
    .section .far5, "ax"
far5_fn:
    add r0, r0, #1
    b 1f
    .space 0x100
1:  bx lr
    .section .high, "ax"
    .thumb
    .thumb_func
high_thumb_fn:
    adds r0, #1
    bx lr
