@ udf_land: branches of every kind whose target is an undefined
@ instruction or an aborting load, in ARM and Thumb: the branch's own
@ trace (a load to the PC is a data instruction) and the cancelled
@ instruction's exception come back to back.  Loads to the PC: Thumb
@ POP {pc} and LDR pc, ARM LDM {pc} and LDR pc; register branches:
@ BX, BLX; direct: B, BL.  The handlers return past the instruction
@ (undefined: LR; abort: LR - 4, every aborting load is 4 bytes).
@ r0 counts the handlers' visits.
    .syntax unified
    .arm
    .text
    .global main, undef_handler, dabt_handler
    .type main, %function
main:
    push {r4-r7, lr}
    mov r0, #0
    ldr r4, =0x90000000         @ unmapped
    ldr r5, =ul_buf
    mov r6, #3                  @ turns
1:  adr r1, t_land + 1
    blx r1                      @ into Thumb: the Thumb cases
    adr r1, a_udf
    str r1, [r5]
    ldr pc, [r5]                @ ARM LDR pc onto an ARM UDF
a_back1:
    adr r1, a_abt
    str r1, [r5, #4]
    add r2, r5, #4
    ldmia r2, {pc}              @ ARM LDM {pc} onto an aborting load
a_back2:
    adr r1, t_udf2 + 1
    bx r1                       @ ARM BX onto a Thumb UDF
a_back3:
    bl a_udf3                   @ ARM BL onto an ARM UDF
    subs r6, r6, #1
    bne 1b
    pop {r4-r7, pc}

a_udf:
    .word 0xe7f000f1            @ UDF (ARM)
    b a_back1
a_abt:
    ldr r3, [r4]                @ data abort
    b a_back2
a_udf3:
    .word 0xe7f000f2
    bx lr

    .thumb
    .thumb_func
t_land:
    push {r4, lr}
    adr r2, t_udf1 + 1
    push {r2}
    pop {pc}                    @ Thumb POP {pc} onto a Thumb UDF
t_back1:
    adr r2, t_abt
    adds r2, #1
    str r2, [r5, #8]
    ldr pc, [r5, #8]            @ Thumb LDR pc onto an aborting load
t_back2:
    ldr r2, =a_udf4
    blx r2                      @ Thumb BLX(reg) onto an ARM UDF
    b t_udf5                    @ Thumb B onto a Thumb UDF
t_back5:
    pop {r4, pc}
t_udf1:
    .hword 0xde05
    b t_back1
    .balign 4
t_abt:
    ldr.w r3, [r4, #4]          @ data abort (32-bit Thumb)
    b t_back2
t_udf2:
    .hword 0xde06
    ldr r1, =a_back3
    bx r1
t_udf5:
    .hword 0xde07
    b t_back5
    .arm
a_udf4:
    .word 0xe7f000f4
    bx lr

undef_handler:
    add r0, r0, #1
    movs pc, lr
dabt_handler:
    add r0, r0, #0x100
    subs pc, lr, #4
    .ltorg

    .bss
    .balign 4
ul_buf: .space 16
