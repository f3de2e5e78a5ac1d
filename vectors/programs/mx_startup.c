/*
 * Start-up of the "written apart" Cortex-M programs (issue 32), as a
 * vendor's CMSIS start-up file does it in C: a vector table of function
 * pointers in .isr_vector, Reset_Handler copying .data from flash to RAM
 * and zeroing .bss, then main(), then _exit (where the scenario stops).
 * Handlers are weak aliases of Default_Handler, which stops the run with
 * r0 = 0xBAD (nothing else branches to _exit with that value).
 */
#include <stdint.h>

extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;
int main(void);
void _exit(int code) __attribute__((noreturn));

void Reset_Handler(void);
void Default_Handler(void);
#define WEAK __attribute__((weak, alias("Default_Handler")))
void NMI_Handler(void) WEAK;
void HardFault_Handler(void) WEAK;
void MemManage_Handler(void) WEAK;
void BusFault_Handler(void) WEAK;
void UsageFault_Handler(void) WEAK;
void SVC_Handler(void) WEAK;
void DebugMon_Handler(void) WEAK;
void PendSV_Handler(void) WEAK;
void SysTick_Handler(void) WEAK;
void WWDG_IRQHandler(void) WEAK;
void EXTI0_IRQHandler(void) WEAK;
void EXTI1_IRQHandler(void) WEAK;
void TIM2_IRQHandler(void) WEAK;
void USART1_IRQHandler(void) WEAK;

__attribute__((section(".isr_vector"), used)) void (*const g_pfnVectors[])(void) = {
    (void (*)(void))&_estack,
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    MemManage_Handler,
    BusFault_Handler,
    UsageFault_Handler,
    0, 0, 0, 0,
    SVC_Handler,
    DebugMon_Handler,
    0,
    PendSV_Handler,
    SysTick_Handler,
    WWDG_IRQHandler,   /* IRQ0 */
    EXTI0_IRQHandler,  /* IRQ1 */
    EXTI1_IRQHandler,  /* IRQ2 */
    TIM2_IRQHandler,   /* IRQ3 */
    USART1_IRQHandler, /* IRQ4 */
};

void Reset_Handler(void)
{
    uint32_t *src = &_sidata, *dst = &_sdata;

    while (dst < &_edata)
        *dst++ = *src++;
    for (dst = &_sbss; dst < &_ebss;)
        *dst++ = 0;
    _exit(main());
}

void Default_Handler(void)
{
    _exit(0xBAD);
}

__attribute__((noinline, noreturn)) void _exit(int code)
{
    register int r0 __asm__("r0") = code;

    for (;;)
        __asm__ volatile("" : : "r"(r0));
}
