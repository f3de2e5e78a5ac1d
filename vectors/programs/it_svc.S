@ it_svc: SVC inside Thumb IT blocks, at every position (first, middle,
@ last; passing and failing its condition), with ITSTATE saved in
@ SPSR_svc and restored by the handler's exception return, so the rest
@ of the block runs under its conditions.  The handler returns with
@ MOVS pc, lr.  Then a load that aborts inside an IT block and is run
@ again by its handler (SUBS pc, lr, #8 after fixing the base): the
@ SPSR holds the load's own ITSTATE (IHI0406C B1.9.8), so it runs again
@ under its own condition and the else after it still fails.
@ r0 = a checksum of which instructions ran.
    .syntax unified
    .thumb
    .text
    .global main, svc_handler, dabt_handler, i_else
    .type main, %function
    .thumb_func
main:
    push {r4-r6, lr}
    movs r0, #0
    movs r4, #0
    movs r5, #4                 @ turns
1:  cmp r5, #2                  @ flags differ by turn
    itttt hs
    svchs #1                    @ first of four
    addhs r0, #1
    addhs r0, #2
    addhs r0, #3
    ittee eq
    addeq r0, #4
    svceq #2                    @ second, passes or fails with the block
    addne r0, #5
    svcne #3                    @ last, else side
    itete lo
    addlo r0, #6
    svchs #4                    @ an else SVC in the middle
    addlo r0, #7
    addhs r0, #8
    cmp r0, r0
    itt eq
    svceq #5                    @ passes: the block's second half still runs
    addeq r4, #1
    subs r5, #1
    bne 1b
    add r0, r4
    ldr r6, =0x90000000         @ unmapped until the handler fixes it
    cmp r0, r0
    ite eq
    ldreq r1, [r6]              @ aborts, then runs again and loads 7
i_else:
    addne r0, #0x40             @ fails: not run
    add r0, r1
    pop {r4-r6, pc}

    .arm
dabt_handler:
    ldr r6, =it_word
    subs pc, lr, #8             @ the aborted load again
svc_handler:
    push {r1}
    mrs r1, spsr
    tst r1, #0x20               @ from Thumb?
    add r0, r0, #0x100
    pop {r1}
    movs pc, lr                 @ restores CPSR with ITSTATE
    .ltorg

    .data
    .balign 4
it_word: .word 7
