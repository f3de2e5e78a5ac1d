@ Context ID changes right before branches and condition-failed
@ instructions, and direct branches followed by condition-failed ones:
@ the sequences an OS's context switch code meets (a CONTEXTIDR write,
@ then a return or a conditional test) that the other programs never
@ run.  For the ETMv2 trace port they give (docs/etmv2.md 7, issue 35):
@ a context ID packet with a failed instruction's status (DN), with a
@ branch phantom (IHI0014Q 6.1.2) whose second instruction failed (DN),
@ taken and not taken, a phantom whose second failed without packets
@ (IN), and a context ID packet with C = 1 followed by a branch address
@ (6.4.1 Table 6.2).  Every other protocol sees context changes just
@ before branches and failed instructions.  Each pass writes a new
@ context ID; 16 passes, then _exit.
    .syntax unified
    .arm
    .text
    .global main, cf_loop, cf_dn, cf_more, cf_ptdn, cf_pndn, cf_ptin
    .type main, %function
main:
    push {r4-r7, lr}
    mov r6, #0
    ldr r7, =0x100
cf_loop:
    add r7, r7, #1
    cmp r7, r7              @ Z=1: every NE below fails
    @ A context ID change, then a failed instruction (DN).
cf_dn:
    mcr p15, 0, r7, c13, c0, 1
    movne r0, #1
    add r7, r7, #1
    @ A context ID change, then an indirect branch (C = 1, then the
    @ branch address in the same cycle).
    adr r3, 1f
cf_more:
    mcr p15, 0, r7, c13, c0, 1
    bx r3
    nop
1:  add r7, r7, #1
    cmp r7, r7
    @ A context ID change, then a taken direct branch folded with a
    @ failed instruction (phantom taken + DN).
cf_ptdn:
    mcr p15, 0, r7, c13, c0, 1
    b 2f
    nop
2:  movne r0, #2
    add r7, r7, #1
    cmp r7, r7
    @ A context ID change, then a not-taken direct branch folded with a
    @ failed instruction (phantom not taken + DN).
cf_pndn:
    mcr p15, 0, r7, c13, c0, 1
    bne 3f
    movne r0, #3
3:  add r6, r6, #1
    cmp r6, r6
    @ No change: a taken direct branch folded with a failed instruction
    @ (phantom taken + IN).
cf_ptin:
    b 4f
    nop
4:  addne r0, r0, #4
    cmp r6, #16
    blt cf_loop
    mov r0, #0
    mcr p15, 0, r0, c13, c0, 1
    pop {r4-r7, pc}
    .ltorg
