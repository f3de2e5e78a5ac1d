/* Function pointers (Thumb): indirect calls through a table the compiler
 * cannot see through.  Returns a checksum. */
typedef int (*op_fn)(int, int);

int op_add(int a, int b);
int op_sub(int a, int b);
int op_mul(int a, int b);
int op_xor(int a, int b);
int main(void);

__attribute__((noinline)) int op_add(int a, int b) { return a + b; }
__attribute__((noinline)) int op_sub(int a, int b) { return a - b; }
__attribute__((noinline)) int op_mul(int a, int b) { return a * b; }
__attribute__((noinline)) int op_xor(int a, int b) { return a ^ b; }

op_fn ops[4] = {op_add, op_sub, op_mul, op_xor};

int main(void)
{
    int acc = 1;

    for (int i = 0; i < 40; i++)
        acc = ops[i & 3](acc, i + 1);
    return acc;
}
