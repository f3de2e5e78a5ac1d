@ Expected faults (scenario faults.ini allows them): an undefined
@ instruction (returns with MOVS pc, lr), a data abort (SUBS pc, lr, #4
@ skips the load) and a prefetch abort (branch to unmapped code, resumes
@ at recover).  Handlers log the LR they were given.  r0 = 0x111.
    .syntax unified
    .arm
    .text
    .global main, undef_handler, dabt_handler, pabt_handler, fault_log
    .global udf_insn, load_insn, recover
    .type main, %function
main:
    push {r4, lr}
    mov r0, #0
udf_insn:
    .word 0xe7f000f0            @ UDF #0
    ldr r4, =0x90000000
load_insn:
    ldr r1, [r4]
    ldr r4, =0xA0000000
    blx r4
recover:
    pop {r4, pc}
undef_handler:
    ldr r12, =fault_log
    str lr, [r12]
    add r0, r0, #1
    movs pc, lr
dabt_handler:
    ldr r12, =fault_log
    str lr, [r12, #4]
    add r0, r0, #0x10
    subs pc, lr, #4
pabt_handler:
    ldr r12, =fault_log
    str lr, [r12, #8]
    add r0, r0, #0x100
    ldr lr, =recover
    movs pc, lr
    .ltorg
    .bss
    .balign 4
fault_log: .space 12
