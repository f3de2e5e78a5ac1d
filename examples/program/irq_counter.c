/*
 * A program of one's own for the simulator: main does some work and
 * waits (WFI) while a periodic IRQ, which the scenario irq_counter.ini
 * asserts, ticks a counter in its handler; after TICKS ticks main
 * returns, and the run ends at _exit.
 *
 * It uses the start-up code, vector table and linker script of the
 * vector programs (crt0.S: a vector table at 0 whose IRQ entry branches
 * to irq_handler, one stack per mode, main in SVC mode with IRQ and FIQ
 * masked; link.ld; lib.c): build.sh gives the command line.
 *
 *   examples/program/build.sh irq_counter.elf
 *   tracebench roundtrip irq_counter.elf --scenario examples/program/irq_counter.ini
 */
#define TICKS 10

int main(void);

static volatile unsigned ticks;
static volatile unsigned work;

/* The IRQ handler, in C: crt0.S's vector branches here in IRQ mode; the
 * interrupt attribute saves the registers it uses and returns with
 * SUBS pc, lr, #4 (the return that restores CPSR). */
void __attribute__((interrupt("IRQ"))) irq_handler(void)
{
    ticks++;
}

int main(void)
{
    /* Unmask IRQs: crt0.S enters main with CPSR.I and .F set. */
    __asm__ volatile("cpsie i" ::: "memory");
    while (ticks < TICKS) {
        for (unsigned i = 0; i < 40; i++)
            work += i ^ ticks;
        /* Wait for the next tick (the simulator lets the next IRQ of
         * the scenario arrive at once). */
        __asm__ volatile("wfi" ::: "memory");
    }
    __asm__ volatile("cpsid i" ::: "memory");
    return (int)(work & 0x7FFFFFFF);
}
