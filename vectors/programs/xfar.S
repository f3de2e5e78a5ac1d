@ xfar: ARM/Thumb interworking through every branch kind, to and from
@ code in far sections (xfar.ld), in a loop, with loads and stores
@ between the calls so that a small FIFO overflows at different points.
@ Kinds: BL, BLX(imm) both ways, BLX(reg), BX, LDR pc (literal and
@ post-indexed), POP {pc}, LDM {pc}, MOV pc (interworking in ARM
@ state, ARMv7), ADD pc, Thumb TBB/TBH, CBZ/CBNZ (forward), B<cond>.
@ r0 ends as the sum the loop builds; _exit when done.
    .syntax unified
    .arm
    .text
    .global main
    .type main, %function
main:
    push {r4-r8, lr}
    mov r0, #0
    mov r5, #12                 @ loop turns
    ldr r6, =xbuf
1:  ldr r4, =xa_thumb
    blx r4                      @ ARM -> Thumb far, BLX(reg)
    ldr r4, =xb_arm
    mov lr, pc
    bx r4                       @ ARM -> ARM far, BX with a hand-made link
    str r0, [r6, r5, lsl #2]
    ldr r4, =xc_thumb
    adr lr, 2f
    ldr pc, =xc_thumb           @ ARM -> Thumb far, LDR pc literal
2:  ldrb r7, [r6, r5]
    add r0, r0, r7
    ldr r4, =xd_arm
    blx r4
    ldr r4, =xe_thumb
    blx r4
    ldr r7, =xc_leaf
    blx r7                      @ far leaves that only return: two far
    ldr r7, =xd_leaf            @ indirect branches back to back
    blx r7
    blx near_thumb              @ BLX(imm) ARM -> Thumb
    ands r8, r5, #1
    bleq near_arm               @ conditional BL, taken every other turn
    subs r5, r5, #1
    bne 1b
    pop {r4-r8, pc}

near_arm:
    add r0, r0, #3
    mov pc, lr                  @ MOV pc to ARM

    .thumb
    .thumb_func
near_thumb:
    push {r4, lr}
    movs r4, #3
3:  adds r0, #1
    subs r4, #1
    cmp r4, #0
    bne 3b                      @ Thumb B<c> back
    cbnz r4, 4f                 @ CBNZ forward, not taken
    cbz r4, 4f                  @ CBZ forward, taken
    adds r0, #100
4:  blx near_arm2               @ Thumb -> ARM, BLX(imm)
    pop {r4, pc}                @ Thumb -> ARM return, POP {pc}

    .arm
near_arm2:
    push {lr}
    add r0, r0, #2
    pop {lr}
    mov pc, lr                  @ MOV pc to Thumb (ARMv7 interworking)
    .ltorg

    .section .xa, "ax"
    .thumb
    .thumb_func
    .global xa_thumb
xa_thumb:
    push {r1, lr}
    and r1, r5, #3
    tbb [pc, r1]                @ TBB: four cases
5:  .byte (6f - 5b) / 2, (7f - 5b) / 2, (8f - 5b) / 2, (9f - 5b) / 2
6:  adds r0, #1
    b 10f
7:  adds r0, #2
    b 10f
8:  adds r0, #3
    b 10f
9:  adds r0, #4
10: ldr r1, =xb_arm
    blx r1                      @ Thumb far -> ARM far, BLX(reg)
    pop {r1, pc}                @ back to ARM main

    .section .xb, "ax"
    .arm
    .global xb_arm
xb_arm:
    push {r1, lr}
    add r0, r0, #1
    mov r1, r5
11: subs r1, r1, #4
    bgt 11b                     @ a short loop, the last turn not taken
    ldmia sp!, {r1, pc}         @ LDM {pc}: to ARM or Thumb callers
    .ltorg

    .section .xc, "ax"
    .thumb
    .thumb_func
    .global xc_thumb, xc_leaf
xc_leaf:
    bx lr
    .thumb_func
xc_thumb:
    push {r1, r2}
    and r1, r5, #1
    tbh [pc, r1, lsl #1]        @ TBH: two cases
12: .hword (13f - 12b) / 2, (14f - 12b) / 2
13: adds r0, #5
    b 15f
14: adds r0, #6
15: pop {r1, r2}
    bx lr                       @ Thumb -> ARM return, BX lr

    .section .xd, "ax"
    .arm
    .global xd_arm, xd_leaf
xd_leaf:
    bx lr
xd_arm:
    str lr, [sp, #-4]!
    add r0, r0, #7
    adr r1, 16f
    add pc, r1, #0              @ ADD pc (ARM: interworking, bit 0 clear)
    nop
16: ldr pc, [sp], #4            @ LDR pc post-indexed return to ARM
    .ltorg

    .section .xe, "ax"
    .thumb
    .thumb_func
    .global xe_thumb
xe_thumb:
    push {lr}
    adds r0, #9
    ldr r1, =xe_arm
    blx r1                      @ Thumb -> ARM within the section
    ldr pc, [sp], #4            @ Thumb LDR pc return to ARM
    .arm
xe_arm:
    add r0, r0, #1
    bx lr                       @ ARM -> Thumb return
    .ltorg

    .bss
    .balign 4
xbuf: .space 64
