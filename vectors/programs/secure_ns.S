@ Secure and Non-secure state (scenario secure = true: the run starts
@ Secure).  main (Secure SVC) sets MVBAR and calls SMC #0 with r0 = 1:
@ the Monitor sets SCR.NS and returns with MOVS pc, lr, so main goes on
@ Non-secure.  There it loops (a conditional branch), calls a function,
@ takes an SVC (Non-secure SVC mode, vector at 0x08, MOVS return) and
@ calls SMC #0 with r0 = 0: the Monitor clears SCR.NS and main ends in
@ Secure state.  r0 = 3 + 4 + 100 = 107.
    .syntax unified
    .arm
    .text
    .global main, svc_handler, mon_vectors, ns_part, s_back
    .type main, %function
main:
    push {r4, r5, lr}
    ldr r0, =mon_vectors
    mcr p15, 0, r0, c12, c0, 1      @ MVBAR (IHI0406C B4.1.107)
    isb
    mov r4, #0
    mov r0, #1
    smc #0                          @ to Non-secure
ns_part:
    mov r5, #3
1:  add r4, r4, #1                  @ Non-secure loop: r4 = 3
    subs r5, r5, #1
    bne 1b
    bl ns_func                      @ r4 += 4
    svc #7                          @ r4 += 100 in the Non-secure handler
    mov r0, #0
    smc #0                          @ back to Secure
s_back:
    mov r0, r4
    pop {r4, r5, pc}

ns_func:
    add r4, r4, #4
    bx lr

svc_handler:
    add r4, r4, #100
    movs pc, lr

@ Monitor vector table (MVBAR, 32-byte aligned); only SMC (+8) is used.
    .balign 32
mon_vectors:
    b .
    b .
    b mon_smc
    b .
    b .
    b .
    b .
    b .
@ r0 = 1: SCR.NS := 1, r0 = 0: SCR.NS := 0; then back to the caller in
@ the state that gives (MOVS restores SVC mode from SPSR_mon).
mon_smc:
    mrc p15, 0, r1, c1, c1, 0       @ SCR (B4.1.129)
    bic r1, r1, #1
    orr r1, r1, r0
    mcr p15, 0, r1, c1, c1, 0
    isb
    movs pc, lr
    .ltorg
