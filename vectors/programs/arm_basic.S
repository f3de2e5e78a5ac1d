@ ARM only: a counted loop, a call and a return.  test_sim checks the
@ exact instruction sequence from main to _exit.
    .syntax unified
    .arm
    .text
    .global main, f
    .type main, %function
main:
    push {r4, lr}       @ +0
    mov r0, #3          @ +4
1:  subs r0, r0, #1     @ +8
    bne 1b              @ +12  taken twice, then not taken
    mov r1, #5          @ +16
    bl f                @ +20
    add r0, r1, #1      @ +24  r0 = 11
    pop {r4, pc}        @ +28  to _exit
    .type f, %function
f:  add r1, r1, r1      @ +32
    bx lr               @ +36
