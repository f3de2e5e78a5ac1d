@ it_svc: SVC inside Thumb IT blocks, at every position (first, middle,
@ last; passing and failing its condition), with ITSTATE saved in
@ SPSR_svc and restored by the handler's exception return, so the rest
@ of the block runs under its conditions.  The handler returns with
@ MOVS pc, lr (ARM) or RFE (a second handler entry point via r12).
@ r0 = a checksum of which instructions ran.
    .syntax unified
    .thumb
    .text
    .global main, svc_handler
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
    pop {r4-r6, pc}

    .arm
svc_handler:
    push {r1}
    mrs r1, spsr
    tst r1, #0x20               @ from Thumb?
    add r0, r0, #0x100
    pop {r1}
    movs pc, lr                 @ restores CPSR with ITSTATE
