@ Heavy ARM conditional execution.  The first block has a pass/fail
@ pattern fixed by the flags (checked by test_sim); then a loop that is
@ mostly conditional instructions.
    .syntax unified
    .arm
    .text
    .global main, cond_block, cond_loop
    .type main, %function
main:
    mov r1, #0
    mov r2, #0
    mov r3, #0
    mov r0, #0
cond_block:
    cmp r0, #0          @ Z=1 C=1 N=0 V=0
    moveq r1, #1        @ E
    movne r1, #2        @ N
    addgt r2, r2, #1    @ N
    addge r2, r2, #1    @ E
    addlt r2, r2, #1    @ N
    cmp r0, #1          @ N=1 Z=0 C=0 V=0
    addmi r3, r3, #1    @ E
    addcs r3, r3, #1    @ N
    addcc r3, r3, #1    @ E
    addvs r3, r3, #1    @ N
    addvc r3, r3, #1    @ E
    addhi r3, r3, #1    @ N
    addls r3, r3, #1    @ E
    addpl r3, r3, #1    @ N
    adds r4, r3, #0     @ flags from r3 = 4: all clear
    subsne r4, r4, #4   @ E, r4 = 0, Z=1 C=1
    addeq r3, r3, #16   @ E (flags set by the previous instruction)
    bxne lr             @ N
cond_loop:
    mov r5, #200
    mov r6, #0
1:  tst r5, #1
    addne r6, r6, r5
    subeq r6, r6, #1
    tst r5, #2
    eorne r6, r6, r5, lsl #3
    movseq r7, r6
    addmi r6, r6, #3
    subs r5, r5, #1
    bne 1b
    mov r0, r3          @ r0 = 20
    bx lr
