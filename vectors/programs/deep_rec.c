/* deep_rec: deep recursion through ARM and Thumb functions (GCC's
 * target("thumb")/target("arm") attributes), direct, through function
 * pointers and mutually, so that returns interwork at every depth and
 * the trace sees long runs of POP {pc}/BX lr.  Returns a checksum. */
typedef unsigned (*fn_t)(unsigned, unsigned);

__attribute__((target("thumb"), noinline)) static unsigned t_down(unsigned n, unsigned acc);
__attribute__((target("arm"), noinline)) static unsigned a_down(unsigned n, unsigned acc);

static volatile unsigned sink[8];

__attribute__((target("arm"), noinline)) static unsigned a_down(unsigned n, unsigned acc)
{
    if (n == 0)
        return acc;
    sink[n & 7] = acc;
    /* Thumb below every third ARM frame, ARM otherwise. */
    return (n % 3 ? a_down : t_down)(n - 1, acc * 3 + n) + 1;
}

__attribute__((target("thumb"), noinline)) static unsigned t_down(unsigned n, unsigned acc)
{
    unsigned r;

    if (n == 0)
        return acc ^ 0x55;
    r = (n & 1 ? a_down : t_down)(n - 1, acc + (n << 2));
    sink[(n >> 1) & 7] += r;
    return r + (unsigned char)sink[n & 7];
}

__attribute__((target("thumb"), noinline)) static unsigned fib_t(unsigned n);

__attribute__((target("arm"), noinline)) static unsigned fib_a(unsigned n)
{
    return n < 2 ? n : fib_t(n - 1) + fib_a(n - 2);
}

__attribute__((target("thumb"), noinline)) static unsigned fib_t(unsigned n)
{
    return n < 2 ? n : fib_a(n - 1) + fib_t(n - 2);
}

__attribute__((target("arm"))) int main(void)
{
    static const fn_t start[2] = {a_down, t_down};
    unsigned sum = 0, i;

    for (i = 0; i < 4; i++)
        sum += start[i & 1](60 + 40 * i, i);
    sum += fib_a(11) + fib_t(10);
    return (int)sum;
}
