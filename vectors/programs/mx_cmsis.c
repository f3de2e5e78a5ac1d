/*
 * Written apart (issue 32): a bare-metal Cortex-M program in the style of
 * a vendor example, not fitted to tracebench's rules.  It sets up the
 * NVIC and SysTick itself through the System Control Space, as CMSIS's
 * NVIC_SetPriority / NVIC_EnableIRQ / SysTick_Config do, and then:
 *  - SysTick at the lowest priority counts ticks and, every fourth tick,
 *    pends PendSV (tail-chains at the tick's return);
 *  - TIM2 (IRQ3, urgent) is pended by software from inside the
 *    lower-priority EXTI0 handler (IRQ1): it preempts at once;
 *  - USART1 (IRQ4) and EXTI1 (IRQ2), same priority, pended together:
 *    back to back, the second tail-chains;
 *  - SVC calls with the immediate read back from the stacked PC;
 *  - a command interpreter through a switch (TBB/TBH) and a table of
 *    function pointers, with IT blocks from conditional expressions;
 *  - BASEPRI raised around a critical section while an interrupt is
 *    pending, which is taken when BASEPRI drops.
 * The scenario maps the SRAM (`map`) and supplies only an external
 * interrupt (WWDG, IRQ0) at a given instruction count.
 */
#include <stdint.h>

#define REG(a) (*(volatile uint32_t *)(a))
#define SYST_CSR REG(0xE000E010)
#define SYST_RVR REG(0xE000E014)
#define SYST_CVR REG(0xE000E018)
#define NVIC_ISER0 REG(0xE000E100)
#define NVIC_ISPR0 REG(0xE000E200)
#define NVIC_IPR(n) (*(volatile uint8_t *)(0xE000E400u + (n)))
#define SCB_ICSR REG(0xE000ED04)
#define SCB_SHPR3 REG(0xE000ED20)
#define SCB_SHPR2 REG(0xE000ED1C)

enum { WWDG_IRQn = 0, EXTI0_IRQn = 1, EXTI1_IRQn = 2, TIM2_IRQn = 3, USART1_IRQn = 4 };

static void nvic_set_priority(unsigned irq, uint8_t prio) { NVIC_IPR(irq) = prio; }
static void nvic_enable(unsigned irq) { NVIC_ISER0 = 1u << irq; }
static void nvic_pend(unsigned irq) { NVIC_ISPR0 = 1u << irq; }

static inline void set_basepri(uint32_t v) { __asm__ volatile("msr basepri, %0" : : "r"(v) : "memory"); }

volatile uint32_t ticks, pendsv_runs, tim2_runs, exti0_runs, exti1_runs, usart_runs, wwdg_runs;
volatile uint32_t svc_log[8], svc_n;
volatile uint32_t order[32], order_n;
volatile uint32_t boot_magic = 0xC0FFEE; /* .data: copied from flash by Reset_Handler */

static void note(uint32_t what)
{
    if (order_n < 32)
        order[order_n++] = what;
}

void SysTick_Handler(void)
{
    ticks++;
    if ((ticks & 3) == 0)
        SCB_ICSR = 1u << 28; /* PENDSVSET */
}

void PendSV_Handler(void)
{
    pendsv_runs++;
    note(14);
}

void TIM2_IRQHandler(void)
{
    tim2_runs++;
    note(19);
}

void EXTI0_IRQHandler(void)
{
    exti0_runs++;
    note(17);
    nvic_pend(TIM2_IRQn); /* more urgent: preempts this handler here */
    note(117);
}

void EXTI1_IRQHandler(void)
{
    exti1_runs++;
    note(18);
}

void USART1_IRQHandler(void)
{
    usart_runs++;
    note(20);
}

void WWDG_IRQHandler(void)
{
    wwdg_runs++;
    note(16);
}

/* SVC: the number is the immediate of the SVC instruction, two bytes
 * before the stacked return address (frame: r0-r3, r12, lr, pc, xpsr). */
__attribute__((naked)) void SVC_Handler(void)
{
    __asm__ volatile(
        "tst lr, #4\n"
        "ite eq\n"
        "mrseq r0, msp\n"
        "mrsne r0, psp\n"
        "b svc_dispatch\n");
}

void svc_dispatch(uint32_t *frame)
{
    uint8_t num = ((uint8_t *)frame[6])[-2];

    if (svc_n < 8)
        svc_log[svc_n++] = num;
    frame[0] = frame[0] * 2 + num; /* the call's return value in r0 */
}

static uint32_t svc_call_3(uint32_t arg)
{
    register uint32_t r0 __asm__("r0") = arg;
    __asm__ volatile("svc #3" : "+r"(r0) : : "memory");
    return r0;
}

static uint32_t svc_call_9(uint32_t arg)
{
    register uint32_t r0 __asm__("r0") = arg;
    __asm__ volatile("svc #9" : "+r"(r0) : : "memory");
    return r0;
}

/* The command interpreter. */
static int32_t cmd_add(int32_t a, int32_t b) { return a + b; }
static int32_t cmd_sub(int32_t a, int32_t b) { return a - b; }
static int32_t cmd_max(int32_t a, int32_t b) { return a > b ? a : b; }
static int32_t cmd_min(int32_t a, int32_t b) { return a < b ? a : b; }
static int32_t (*const binops[])(int32_t, int32_t) = {cmd_add, cmd_sub, cmd_max, cmd_min};

static int32_t __attribute__((noinline)) interpret(const uint8_t *prog, unsigned n)
{
    int32_t acc = 0, reg = 1;

    for (unsigned pc = 0; pc < n; pc++) {
        switch (prog[pc]) {
        case 0: acc = binops[0](acc, reg); break;
        case 1: acc = binops[1](acc, reg); break;
        case 2: acc = binops[2](acc, reg); break;
        case 3: acc = binops[3](acc, reg); break;
        case 4: reg = reg * 3 + 1; break;
        case 5: reg = reg > 7 ? reg - 7 : reg + 2; break;
        case 6: acc = acc < 0 ? -acc : acc; break;
        case 7: reg ^= acc & 0xF; break;
        case 8: acc = (int32_t)svc_call_3((uint32_t)acc); break;
        case 9: acc >>= 1; break;
        default: acc++; break;
        }
    }
    return acc;
}

static const uint8_t script[] = {4, 0, 5, 1, 2, 4, 3, 6, 7, 0, 8, 9, 4, 4, 0, 5, 2, 10, 1, 6,
                                 3, 7, 8, 0, 9, 5, 4, 1, 2, 6};

int main(void)
{
    int32_t r = 0;

    /* Priorities: SysTick and PendSV lowest (as an RTOS sets them). */
    SCB_SHPR3 = (0xF0u << 24) | (0xF0u << 16);
    nvic_set_priority(WWDG_IRQn, 0x60);
    nvic_set_priority(EXTI0_IRQn, 0xA0);
    nvic_set_priority(EXTI1_IRQn, 0x80);
    nvic_set_priority(TIM2_IRQn, 0x20);
    nvic_set_priority(USART1_IRQn, 0x80);
    for (unsigned i = 0; i <= USART1_IRQn; i++)
        nvic_enable(i);

    /* SysTick_Config(300): reload, clear, processor clock + interrupt + enable. */
    SYST_RVR = 300 - 1;
    SYST_CVR = 0;
    SYST_CSR = 7;

    for (unsigned round = 0; round < 6; round++) {
        r += interpret(script, sizeof script);
        nvic_pend(EXTI0_IRQn);                  /* preempted by TIM2 inside */
        NVIC_ISPR0 = (1u << EXTI1_IRQn) | (1u << USART1_IRQn); /* back to back */
        r = (int32_t)svc_call_9((uint32_t)r);

        /* Critical section: EXTI1 (0x80) is masked by BASEPRI 0x80 while
         * pending, and is taken when BASEPRI drops. */
        set_basepri(0x80);
        nvic_pend(EXTI1_IRQn);
        r ^= (int32_t)exti1_runs;
        set_basepri(0);
        r += (int32_t)exti1_runs;
    }
    while (ticks < 20)
        r += interpret(script, 8);
    return boot_magic == 0xC0FFEE && r != 0x7FFFFFFF ? 0 : 1;
}
