@ Thumb IT blocks: every mask length, then/else mixes, a branch as the
@ last instruction of a block, and an IT loop.  The pass/fail pattern of
@ it_block is fixed by the flags (checked by test_sim).
    .syntax unified
    .thumb
    .text
    .global main, it_block, it_loop
    .type main, %function
    .thumb_func
main:
    push {r4-r6, lr}
    movs r1, #0
    movs r2, #0
it_block:
    cmp r1, #0          @ Z=1 C=1
    ite ne
    addne r2, #1        @ N
    addeq r2, #2        @ E
    itete eq
    addeq r2, #4        @ E
    addne r2, #8        @ N
    addeq.w r2, r2, #16 @ E (32-bit)
    addne r2, #32       @ N
    cmp r2, #100        @ r2 = 22: N=1, C=0
    ittt hi
    addhi r2, #1        @ N
    addhi r2, #1        @ N
    addhi r2, #1        @ N
    it mi
    addmi r2, #64       @ E  r2 = 86
    cmp r2, #86
    itt ne
    movne r0, #0        @ N
    bne 9f              @ N  (branch last in the block)
    it eq
    beq 1f              @ E
    movs r2, #0
1:
it_loop:
    movs r4, #50
    movs r5, #0
2:  lsls r6, r4, #31
    ite ne              @ odd?
    addne r5, r5, r4
    subeq r5, r5, #1
    cmp r5, #40
    itt gt
    subgt r5, #40
    addgt r2, #1
    subs r4, #1
    bne 2b
    mov r0, r2
9:  pop {r4-r6, pc}
