@ ARM <-> Thumb interworking: BLX(imm) both ways, BX and BLX(reg), POP {pc}
@ and LDR pc into the other state.  r0 counts the calls (expect 4).
    .syntax unified
    .arm
    .text
    .global main
    .type main, %function
main:
    push {r4, lr}
    mov r0, #0
    blx t_inc           @ ARM -> Thumb, BLX(imm)
    ldr r4, =t_inc
    blx r4              @ ARM -> Thumb, BLX(reg)
    ldr r4, =t_calls_arm
    blx r4
    adr r4, 1f + 1
    bx r4               @ into Thumb with BX
    .thumb
    .thumb_func
1:  ldr r4, =a_inc
    blx r4              @ Thumb -> ARM, BLX(reg)
    ldr r4, =2f
    bx r4               @ back to ARM
    .arm
2:  pop {r4, pc}

    .thumb
    .type t_inc, %function
    .thumb_func
t_inc:
    adds r0, #1
    bx lr

    .type t_calls_arm, %function
    .thumb_func
t_calls_arm:
    push {lr}
    blx a_inc           @ Thumb -> ARM, BLX(imm)
    pop {pc}            @ back to ARM caller (interworking POP)

    .arm
    .type a_inc, %function
a_inc:
    add r0, r0, #1
    str lr, [sp, #-4]!
    ldr pc, [sp], #4    @ LDR pc return, either state
    .ltorg
