@ hivec: a vector table for the high vector base 0xFFFF0000 (SCTLR.V,
@ ARMv7-A B1.8.1; scenario key high_vectors), in place of crt0's low one
@ (hivec.ld discards that).  Each entry loads the PC from a literal, as
@ an OS's high vectors do: a B from 0xFFFF0000 cannot reach the handlers
@ near 0 (+-32 MiB).  With faults.S: faults_hi, whose exceptions the
@ trace ports report as branches to 0xFFFF0004..0xFFFF0010
@ (docs/etmv1.md 4, docs/etmv2.md 4).
    .syntax unified
    .arm
    .section .hvectors, "ax"
    .global _hvectors
_hvectors:
    ldr pc, 1f                  @ 0x00 reset: never taken here
    ldr pc, 2f                  @ 0x04 undefined instruction
    ldr pc, 3f                  @ 0x08 SVC
    ldr pc, 4f                  @ 0x0C prefetch abort
    ldr pc, 5f                  @ 0x10 data abort
    ldr pc, 1f                  @ 0x14 reserved
    ldr pc, 6f                  @ 0x18 IRQ
    ldr pc, 7f                  @ 0x1C FIQ
1:  .word _exit
2:  .word undef_handler
3:  .word svc_handler
4:  .word pabt_handler
5:  .word dabt_handler
6:  .word irq_handler
7:  .word fiq_handler
