/*
 * An interrupt-driven sensor loop on a Cortex-M3, written as firmware
 * is: the NVIC set up through its registers (byte priorities in
 * NVIC_IPR, NVIC_ISER), two interrupt lines the scenario raises: IRQ9
 * (a "converter": a sample into a ring buffer) and IRQ12 (a "timer",
 * more urgent, that preempts IRQ9's handler), the program's own SysTick
 * (SYST_RVR/CSR) counting time, and a main loop that sleeps in WFI while
 * the buffer is empty and filters each sample through a state machine
 * (a switch) and a function pointer.  Exceptions 25 and 28 trace with two
 * exception bytes.
 */
#include <stdint.h>

#define REG(a) (*(volatile uint32_t *)(a))
#define REG8(a) (*(volatile uint8_t *)(a))
#define NVIC_ISER0 REG(0xE000E100)
#define NVIC_IPR(n) REG8(0xE000E400 + (n))
#define SYST_CSR REG(0xE000E010)
#define SYST_RVR REG(0xE000E014)
#define SYST_CVR REG(0xE000E018)

#define NBUF 8

static volatile uint16_t ring[NBUF];
static volatile uint32_t head, tail, timer_events, ms;
volatile uint32_t result, processed;
static uint32_t seed = 12345;

static uint32_t lowpass(uint32_t acc, uint32_t x) { return (acc * 3 + x) >> 2; }
static uint32_t peak(uint32_t acc, uint32_t x) { return x > acc ? x : acc - (acc >> 4); }
static uint32_t (*filter)(uint32_t, uint32_t) = lowpass;

void IRQ9_Handler(void) /* the converter: one sample */
{
    seed = seed * 1103515245u + 12345u;
    if (head - tail < NBUF) {
        ring[head % NBUF] = (uint16_t)(seed >> 16) & 0x3FF;
        head++;
    }
    /* Some work, long enough for IRQ12 to arrive in it. */
    for (volatile int i = 0; i < 6; i++)
        ;
}

void IRQ12_Handler(void) /* the timer: switches the filter */
{
    timer_events++;
    filter = (timer_events & 1) ? peak : lowpass;
}

void SysTick_Handler(void)
{
    ms++;
}

int main(void)
{
    uint32_t acc = 0, state = 0;

    NVIC_IPR(9) = 0xC0;
    NVIC_IPR(12) = 0x40;
    NVIC_ISER0 = (1u << 9) | (1u << 12);
    SYST_RVR = 999;
    SYST_CVR = 0;
    SYST_CSR = 7;
    while (processed < 40) {
        uint32_t x;

        while (head == tail)
            __asm volatile("wfi");
        x = ring[tail % NBUF];
        tail++;
        switch (state) {
        case 0: acc = filter(acc, x); state = x > 512 ? 1 : 0; break;
        case 1: acc = filter(acc, x >> 1); state = 2; break;
        case 2: acc += x & 7; state = 3; break;
        case 3: acc ^= x; state = 0; break;
        default: state = 0; break;
        }
        processed++;
    }
    SYST_CSR = 0;
    result = acc + ms + timer_events;
    return 0;
}
