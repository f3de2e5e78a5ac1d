@ Switch tables: TBB and TBH (Thumb-2) over every case, in a loop.
    .syntax unified
    .thumb
    .text
    .global main
    .type main, %function
    .thumb_func
main:
    push {r4, r5, lr}
    movs r0, #0
    movs r4, #0
1:  and r5, r4, #3
    tbb [pc, r5]
2:  .byte (c0 - 2b) / 2, (c1 - 2b) / 2, (c2 - 2b) / 2, (c3 - 2b) / 2
c0: adds r0, #1
    b 3f
c1: adds r0, #2
    b 3f
c2: adds r0, #3
    b 3f
c3: adds r0, #4
3:  and r5, r4, #1
    tbh [pc, r5, lsl #1]
4:  .hword (h0 - 4b) / 2, (h1 - 4b) / 2
h0: adds r0, #10
    b 5f
h1: adds r0, #20
5:  adds r4, #1
    cmp r4, #8
    bne 1b
    pop {r4, r5, pc}    @ r0 = 2*(1+2+3+4) + 4*10 + 4*20 = 140
