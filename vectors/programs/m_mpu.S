@ Cortex-M3 MPU and MemManage faults (issue 35; ARMv7-M B3.5): the
@ program reads MPU_TYPE, sets five regions through MPU_RBAR (VALID and
@ REGION, and once through MPU_RNR) and MPU_RASR, enables MemManage
@ (SHCSR) and the MPU without the default map for privileged code
@ (PRIVDEFENA 0), then:
@ - a load from a no-access region (AP 000): MemManage, DACCVIOL, MMFAR;
@ - a load from a read-only region (AP 110) passes, a store faults;
@ - a region whose subregions 1-7 are disabled: an access there falls
@   to the RAM region under it and passes, one in subregion 0 faults;
@ - a call to a function in RAM, which the RAM region makes execute-never
@   (XN): MemManage, IACCVIOL, at the function's first instruction (the
@   handler returns to the caller through the stacked LR);
@ - MemManage disabled: the same load escalates to HardFault (FORCED),
@   whose handler reads the no-access region freely (HFNMIENA 0: no MPU
@   at priority -1);
@ - the MPU off: the load passes.
@ Each data fault handler steps the stacked PC past the 16-bit access.
    .syntax unified
    .thumb
    .cpu cortex-m3

    .equ SCB_SHCSR,  0xE000ED24
    .equ SCB_CFSR,   0xE000ED28
    .equ SCB_HFSR,   0xE000ED2C
    .equ SCB_MMFAR,  0xE000ED34
    .equ MPU_TYPE,   0xE000ED90
    .equ MPU_CTRL,   0xE000ED94
    .equ MPU_RNR,    0xE000ED98
    .equ MPU_RBAR,   0xE000ED9C
    .equ MPU_RASR,   0xE000EDA0

    @ RASR: XN bit 28, AP bits 26:24, SRD bits 15:8, SIZE bits 5:1 (2^(SIZE+1)
    @ bytes), ENABLE bit 0
    .equ RASR_FLASH, (3 << 24) | (17 << 1) | 1               @ 256K, RW, executable
    .equ RASR_RAM,   (1 << 28) | (3 << 24) | (15 << 1) | 1   @ 64K, RW, XN
    .equ RASR_NONE,  (1 << 28) | (9 << 1) | 1                @ 1K, no access
    .equ RASR_RO,    (1 << 28) | (6 << 24) | (9 << 1) | 1    @ 1K, read-only
    .equ RASR_SUB,   (1 << 28) | (0xFE << 8) | (12 << 1) | 1 @ 8K, no access, 1-7 off

    .text
    .global main
    .type main, %function
    .thumb_func
main:
    push {r4-r7, lr}
    movs r4, #0
    ldr r0, =MPU_TYPE
    ldr r1, [r0]
    ubfx r1, r1, #8, #8     @ DREGION
    ldr r0, =dregion
    str r1, [r0]
    bl ram_func             @ runs: no MPU yet
    adds r4, r0

    ldr r0, =MPU_RBAR
    ldr r1, =0x00000000 | 0x10 | 0
    ldr r2, =RASR_FLASH
    str r1, [r0]
    str r2, [r0, #4]
    ldr r1, =0x20000000 | 0x10 | 1
    ldr r2, =RASR_RAM
    str r1, [r0]
    str r2, [r0, #4]
    ldr r1, =guard + 0x10 + 2
    ldr r2, =RASR_NONE
    str r1, [r0]
    str r2, [r0, #4]
    ldr r1, =ro_blk + 0x10 + 3
    ldr r2, =RASR_RO
    str r1, [r0]
    str r2, [r0, #4]
    ldr r3, =MPU_RNR        @ region 4 selected through RNR
    movs r1, #4
    str r1, [r3]
    ldr r1, =sub8k
    ldr r2, =RASR_SUB
    str r1, [r0]
    str r2, [r0, #4]

    ldr r0, =SCB_SHCSR
    mov r1, #0x10000        @ MEMFAULTENA
    str r1, [r0]
    ldr r0, =MPU_CTRL
    movs r1, #1             @ ENABLE; HFNMIENA 0, PRIVDEFENA 0
    str r1, [r0]
    dsb
    isb

    ldr r1, =guard
    ldr r0, [r1]            @ MemManage: no access
    adds r4, #1
    ldr r1, =ro_blk
    ldr r0, [r1]            @ read-only: a load passes
    str r4, [r1]            @ MemManage: a store
    adds r4, #1
    ldr r1, =sub8k
    add r2, r1, #1024
    str r4, [r2]            @ subregion 1 disabled: the RAM region's, passes
    ldrb r0, [r1]           @ subregion 0: MemManage
    adds r4, #1
    bl ram_func             @ MemManage: the RAM region is XN
    adds r4, #1

    ldr r0, =SCB_SHCSR
    movs r1, #0
    str r1, [r0]            @ MemManage off: escalation to HardFault
    ldr r1, =guard
    ldr r0, [r1]
    adds r4, #1

    ldr r0, =MPU_CTRL
    movs r1, #0
    str r1, [r0]
    ldr r1, =guard
    ldr r0, [r1]            @ no MPU: passes
    adds r4, #1
    ldr r0, =result
    str r4, [r0]
    pop {r4-r7, pc}

@ MemManage: an instruction access violation (MMFSR.IACCVIOL) returns to
@ the caller (the stacked LR), a data one (DACCVIOL, MMFAR valid) steps
@ past the 16-bit access; MMFSR cleared, MMFAR kept.
    .global MemManage_Handler
    .type MemManage_Handler, %function
    .thumb_func
MemManage_Handler:
    ldr r2, =SCB_CFSR
    ldr r3, [r2]
    uxtb r3, r3             @ MMFSR
    str r3, [r2]            @ write one to clear
    tst r3, #1
    beq 1f
    ldr r0, [sp, #20]       @ IACCVIOL: back to the caller
    bic r0, r0, #1
    str r0, [sp, #24]
    b 2f
1:  ldr r0, =SCB_MMFAR
    ldr r0, [r0]
    ldr r1, =last_mmfar
    str r0, [r1]
    ldr r0, [sp, #24]
    adds r0, #2
    str r0, [sp, #24]
2:  ldr r0, =mm_count
    ldr r1, [r0]
    adds r1, #1
    str r1, [r0]
    bx lr

@ HardFault (an escalated MemManage): the MPU is off here (HFNMIENA 0),
@ so the no-access region reads; HFSR and MMFSR cleared, the access
@ stepped over.
    .global HardFault_Handler
    .type HardFault_Handler, %function
    .thumb_func
HardFault_Handler:
    ldr r2, =guard
    ldr r3, [r2]
    ldr r2, =SCB_HFSR
    ldr r3, [r2]
    str r3, [r2]
    ldr r2, =SCB_CFSR
    ldr r3, [r2]
    str r3, [r2]
    ldr r0, [sp, #24]
    adds r0, #2
    str r0, [sp, #24]
    ldr r0, =hard_count
    ldr r1, [r0]
    adds r1, #1
    str r1, [r0]
    bx lr

@ In RAM (.data), which region 1 makes execute-never.
    .section .data.ramfunc, "aw"
    .balign 4
    .type ram_func, %function
    .thumb_func
ram_func:
    movs r0, #2
    bx lr

    .bss
    .balign 8192
sub8k: .space 8192
guard: .space 1024
ro_blk: .space 1024
    .balign 4
    .global result, dregion, mm_count, hard_count, last_mmfar
result: .word 0
dregion: .word 0
mm_count: .word 0
hard_count: .word 0
last_mmfar: .word 0
