@ Thumb only: 16- and 32-bit instructions, CBZ, B, BL, POP {pc}.
    .syntax unified
    .thumb
    .text
    .global main
    .type main, %function
    .thumb_func
main:
    push {r4, lr}       @ +0
    movs r4, #2         @ +2
1:  subs r4, #1         @ +4
    cbz r4, 2f          @ +6   not taken, then taken
    b 1b                @ +8
2:  movw r0, #0x1234    @ +10  (32-bit)
    bl g                @ +14  (32-bit)
    pop {r4, pc}        @ +18  to _exit (ARM)
    .type g, %function
    .thumb_func
g:  adds r0, #1         @ +20  r0 = 0x1235
    bx lr               @ +22
