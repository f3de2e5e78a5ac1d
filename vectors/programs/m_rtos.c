/*
 * A tiny preemptive round-robin kernel on a Cortex-M4, as an RTOS does
 * it: two threads on the process stack (PSP, Thread mode), SVC to start
 * the first one (EXC_RETURN 0xFFFFFFFD), SysTick (the scenario's
 * [systick], set up before main as a boot loader would) pending PendSV,
 * and PendSV at the lowest priority switching contexts (r4-r11 saved on
 * the thread's stack); a thread yields early through ICSR.PENDSVSET.  The
 * threads call through a table of function pointers and a switch.  The
 * run ends at _exit when the work is done.
 */
#include <stdint.h>

#define REG(a) (*(volatile uint32_t *)(a))
#define SCB_ICSR REG(0xE000ED04)
#define SCB_SHPR2 REG(0xE000ED1C)
#define SCB_SHPR3 REG(0xE000ED20)
#define ICSR_PENDSVSET (1u << 28)

void _exit(void);

struct tcb {
    uint32_t *sp; /* the saved PSP: r4-r11 below the hardware frame */
};

static uint32_t stack_a[96] __attribute__((aligned(8)));
static uint32_t stack_b[96] __attribute__((aligned(8)));
struct tcb tasks[2];
struct tcb *volatile current;
volatile uint32_t ticks, switches, work[2];

static uint32_t op_add(uint32_t x) { return x + 3; }
static uint32_t op_mul(uint32_t x) { return x * 5; }
static uint32_t op_xor(uint32_t x) { return x ^ 0x5A; }
static uint32_t (*const ops[3])(uint32_t) = {op_add, op_mul, op_xor};

static void finish(void)
{
    _exit();
}

/* Thread A: function pointers. */
static void thread_a(void)
{
    uint32_t v = 1;

    for (uint32_t i = 0;; i++) {
        v = ops[i % 3](v);
        work[0] = v;
        if (i % 50 == 49)
            SCB_ICSR = ICSR_PENDSVSET; /* yield */
        if (switches > 12)
            finish();
    }
}

/* Thread B: a switch the compiler makes a table branch of. */
static void thread_b(void)
{
    uint32_t s = 0;

    for (uint32_t i = 0;; i++) {
        switch (i & 7) {
        case 0: s += 1; break;
        case 1: s ^= i; break;
        case 2: s <<= 1; break;
        case 3: s -= 7; break;
        case 4: s |= 0x100; break;
        case 5: s >>= 2; break;
        case 6: s += i * 3; break;
        default: s = ~s; break;
        }
        work[1] = s;
        if (switches > 12)
            finish();
    }
}

/* The initial frame of a thread: what PendSV restores the first time
 * (r4-r11, then the hardware frame with xPSR.T and the entry as PC). */
static uint32_t *frame_for(uint32_t *top, void (*entry)(void))
{
    uint32_t *sp = top - 16;

    for (int i = 0; i < 16; i++)
        sp[i] = 0;
    sp[8 + 5] = (uint32_t)finish;          /* LR */
    sp[8 + 6] = (uint32_t)entry & ~1u;     /* PC */
    sp[8 + 7] = 0x01000000u;               /* xPSR: T */
    return sp;
}

void SysTick_Handler(void)
{
    ticks++;
    SCB_ICSR = ICSR_PENDSVSET;
}

/* SVC 0 starts thread A: its frame below r4-r11 becomes the PSP, and
 * the return goes to Thread mode on the PSP. */
__attribute__((naked)) void SVC_Handler(void)
{
    __asm volatile(
        "ldr r0, =current\n"
        "ldr r0, [r0]\n"
        "ldr r0, [r0]\n"           /* tcb->sp */
        "ldmia r0!, {r4-r11}\n"
        "msr psp, r0\n"
        "ldr lr, =0xFFFFFFFD\n"
        "bx lr\n"
        ".ltorg\n");
}

/* The context switch: save r4-r11 of the thread that ran on its PSP
 * stack, pick the other, restore its r4-r11, return on its PSP. */
__attribute__((naked)) void PendSV_Handler(void)
{
    __asm volatile(
        "mrs r0, psp\n"
        "stmdb r0!, {r4-r11}\n"
        "ldr r2, =current\n"
        "ldr r1, [r2]\n"
        "str r0, [r1]\n"
        "ldr r3, =tasks\n"
        "cmp r1, r3\n"
        "ite eq\n"
        "addeq r1, r3, #4\n"
        "movne r1, r3\n"
        "str r1, [r2]\n"
        "ldr r3, =switches\n"
        "ldr r0, [r3]\n"
        "adds r0, #1\n"
        "str r0, [r3]\n"
        "ldr r0, [r1]\n"
        "ldmia r0!, {r4-r11}\n"
        "msr psp, r0\n"
        "bx lr\n"
        ".ltorg\n");
}

int main(void)
{
    /* SVCall 0x80, PendSV lowest (0xF0), SysTick 0x40. */
    SCB_SHPR2 = 0x80u << 24;
    SCB_SHPR3 = (0x40u << 24) | (0xF0u << 16);
    tasks[0].sp = frame_for(stack_a + 96, thread_a);
    tasks[1].sp = frame_for(stack_b + 96, thread_b);
    current = &tasks[0];
    /* The first thread starts from its frame: skip r4-r11's restore in
     * PendSV by starting through SVC, as kernels do. */
    __asm volatile("svc #0");
    for (;;)
        ;
}
