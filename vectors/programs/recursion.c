/* Deep recursion (ARM): many nested calls and returns, for the return
 * stack.  fib(15) = 610. */
int fib(int n);
int depth(int n);
int main(void);

__attribute__((noinline)) int fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) int depth(int n)
{
    if (n == 0)
        return 0;
    return depth(n - 1) ^ (n * 3);
}

int main(void)
{
    return fib(15) + depth(300);
}
