@ Function returns of every kind: LDR pc, POP {pc}, LDM {..,pc}, MOV pc,
@ BX lr, Thumb POP {pc} and LDR.W pc.  r0 counts the returns (expect 7).
    .syntax unified
    .arm
    .text
    .global main
    .type main, %function
main:
    push {r4, lr}
    mov r0, #0
    bl r_ldr
    bl r_pop
    bl r_ldm
    bl r_mov
    bl r_bx
    blx t_pop
    blx t_ldrw
    pop {r4, pc}
r_ldr:
    str lr, [sp, #-4]!
    add r0, r0, #1
    ldr pc, [sp], #4
r_pop:
    push {r4, lr}
    add r0, r0, #1
    pop {r4, pc}
r_ldm:
    stmdb sp!, {r4, r5, lr}
    add r0, r0, #1
    ldmia sp!, {r4, r5, pc}
r_mov:
    add r0, r0, #1
    mov pc, lr
r_bx:
    add r0, r0, #1
    bx lr
    .thumb
    .thumb_func
t_pop:
    push {r4, lr}
    adds r0, #1
    pop {r4, pc}
    .thumb_func
t_ldrw:
    str lr, [sp, #-4]!
    adds r0, #1
    ldr.w pc, [sp], #4
