@ Undefined Thumb instructions, each alone in its ETMv3 range: each
@ directly follows a taken branch (B, then BX), so the exception's
@ Cancel (protocol-notes 2.7) retracts a one-instruction range, whose
@ cycles must still be counted (4.2).  The undefined handler counts the
@ faults and returns past the UDF (LR = UDF + 2, B1.9.6).  main is ARM
@ and enters the Thumb code by BX: after a BLX(imm) OpenCSD 1.3.3 lost
@ the ISA up to the first UDF (4.4.1), hiding its Cancel from
@ test_encoder_ocsd.  Two faults only: more, this close together,
@ overflow the smallest cycle-accurate FIFO of roundtrip/suite.c.
@ r0 = 2.
    .syntax unified
    .text
    .global main, undef_handler, udf_b, udf_bx

    .arm
    .type main, %function
main:
    push {r4, lr}
    mov r0, #0
    adr r1, faults + 1
    bx r1                   @ to Thumb

    .thumb
    .type faults, %function
    .thumb_func
faults:
    b udf_b                 @ taken: the UDF starts a range
    nop
udf_b:
    udf #0
    adr r1, udf_bx_fn + 1   @ Thumb address
    bx r1                   @ indirect: the UDF starts a range
1:  pop {r4, pc}            @ to _exit (ARM)

    .balign 4
    .type udf_bx_fn, %function
    .thumb_func
udf_bx_fn:
udf_bx:
    udf #1
    b 1b

    .arm
    .type undef_handler, %function
undef_handler:
    add r0, r0, #1
    movs pc, lr
