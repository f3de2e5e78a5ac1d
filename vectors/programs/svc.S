@ SVC calls from ARM and Thumb.  The handler logs LR_svc and SPSR_svc,
@ adds 10 to r0 and returns with RFE (saved by SRS).  r0 = 1 + 3*10.
    .syntax unified
    .arm
    .text
    .global main, svc_handler, svc_log
    .type main, %function
main:
    push {r4, lr}
    mov r0, #1
    svc #1
    blx t_part
    svc #3
    pop {r4, pc}
    .thumb
    .thumb_func
t_part:
    push {lr}
    svc #2
    pop {pc}
    .arm
svc_handler:
    srsdb sp!, #0x13
    push {r1-r3}
    ldr r1, =svc_count
    ldr r2, [r1]
    ldr r3, =svc_log
    add r3, r3, r2, lsl #3
    str lr, [r3]
    mrs lr, spsr
    str lr, [r3, #4]
    add r2, r2, #1
    str r2, [r1]
    add r0, r0, #10
    pop {r1-r3}
    rfeia sp!
    .ltorg
    .bss
    .balign 4
svc_count: .space 4
svc_log: .space 8 * 4
