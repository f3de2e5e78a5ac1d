@ widths: loads and stores of every width and form, in ARM and Thumb, in
@ a loop over a buffer whose values change each turn: byte, signed
@ byte, halfword, signed halfword, word, doubleword, LDM/STM of 1 to 8
@ registers in every addressing mode, PUSH/POP with the PC, LDREX/STREX
@ of each width, SWP/SWPB, loads to the PC (LDR pc, LDM {pc}), and
@ conditional loads and stores that fail.  r0 = a checksum.
    .syntax unified
    .arm
    .text
    .global main
    .type main, %function
main:
    push {r4-r11, lr}
    ldr r4, =wbuf
    mov r0, #0
    mov r11, #6                 @ turns
1:  add r1, r11, r11, lsl #8
    orr r1, r1, r1, lsl #16     @ a value that changes every turn
    strb r1, [r4, r11]          @ byte store, register offset
    strh r1, [r4, #2]
    str r1, [r4, #4]!           @ pre-indexed, writeback
    sub r4, r4, #4
    mov r3, r1, ror #8
    mov r2, r1
    strd r2, r3, [r4, #8]
    ldrb r3, [r4, r11]
    ldrsb r5, [r4, #5]
    ldrh r6, [r4, #2]
    ldrsh r7, [r4, #6]
    ldr r8, [r4], #4            @ post-indexed
    sub r4, r4, #4
    ldrd r2, r3, [r4, #8]
    add r0, r0, r3
    add r0, r0, r5
    add r0, r0, r6
    add r0, r0, r7
    add r0, r0, r8
    add r5, r4, #32
    stmia r5, {r1}              @ 1 register
    stmib r5, {r1-r2}
    stmda r5, {r1-r3}
    stmdb r5, {r1-r3, r6-r7}
    ldmia r5, {r6}
    ldmib r5, {r6-r7}
    ldmda r5, {r1-r3}
    ldmdb r5!, {r1-r3, r6-r10}  @ 8 registers, writeback
    add r0, r0, r10
    ldr r5, [r4, #4]            @ monitor: LDREX/STREX, each width
    ldrex r6, [r4]
    strex r7, r5, [r4]
    add r8, r4, #1
    ldrexb r6, [r8]
    strexb r7, r5, [r8]
    add r8, r4, #2
    ldrexh r6, [r8]
    strexh r7, r5, [r8]
    add r5, r4, #16
    ldrexd r6, r7, [r5]
    strexd r8, r6, r7, [r5]
    swp r6, r1, [r4]
    swpb r6, r1, [r4]
    tst r11, #1
    ldrbne r6, [r4, #1]         @ fails on even turns
    strheq r6, [r4, #12]        @ fails on odd turns
    ldmiane r4, {r6, r7}
    adr r6, 2f
    str r6, [r4, #24]
    ldr pc, [r4, #24]           @ load to the PC, ARM
2:  adr r6, 3f + 1
    str r6, [r4, #28]
    add r7, r4, #28
    ldmia r7, {pc}              @ LDM to the PC, into Thumb
    .thumb
    .thumb_func
3:  ldrb r6, [r4, #1]           @ Thumb: 16-bit forms
    ldrh r7, [r4, #2]
    ldr r6, [r4, #4]
    movs r5, #3
    ldrsb r7, [r4, r5]
    ands r6, #0                 @ r6 = 0: register offsets of 0
    ldrsh r7, [r4, r6]
    strb r7, [r4, #9]
    strh r7, [r4, #10]
    str r7, [r4, #12]
    ldmia r4!, {r5-r7}          @ 16-bit LDM, writeback
    subs r4, #12
    stmia r4!, {r5-r7}
    subs r4, #12
    ldrb.w r6, [r4, #13]        @ 32-bit forms
    ldrsb.w r7, [r4, #-1]
    ldrh.w r6, [r4, #14]
    ldrsh.w r7, [r4, #14]
    ldr.w r6, [r4, #16]
    strb.w r6, [r4, #17]
    strh.w r6, [r4, #18]
    ldrd r6, r7, [r4, #8]
    strd r7, r6, [r4, #16]
    push {r1-r3, lr}
    pop {r1-r3}
    pop.w {lr}
    cmp r11, #3
    ite lo
    ldrlo r6, [r4, #4]          @ IT: the then/else load and store
    strhs r6, [r4, #20]
    add r0, r6
    bl t_pop                    @ returns by POP {pc}
    ldr.w r6, =5f
    str r6, [r4, #24]
    ldr pc, [r4, #24]           @ Thumb LDR pc back to ARM
    .thumb_func
t_pop:
    push {r4, lr}
    ldrh r4, [r4, #2]
    pop {r4, pc}
    .balign 4
    .arm
5:  subs r11, r11, #1
    bne 1b
    pop {r4-r11, pc}
    .ltorg

    .bss
    .balign 8
    .space 32
wbuf: .space 128
