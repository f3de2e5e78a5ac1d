@ Self-modifying code: the second pass over `patch` finds a branch the
@ first pass saw as a NOP.  The sim's per-address decode cache does not
@ follow code changes, so its branch check must fire (test_sim).
    .syntax unified
    .arm
    .text
    .global main, patch
    .type main, %function
main:
    push {r4, lr}
    mov r4, #0
1:
patch:
    mov r0, r0
    add r4, r4, #1
    cmp r4, #2
    bge 2f
    ldr r1, =patch
    adr r2, 2f
    sub r2, r2, r1
    sub r2, r2, #8
    lsr r2, r2, #2
    orr r2, r2, #0xEA000000     @ B 2f placed at patch
    str r2, [r1]
    b 1b
2:  mov r0, r4
    pop {r4, pc}
