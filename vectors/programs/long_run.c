/* The long workload for bench_sim (>= 10^8 instructions, Thumb-2 -O2):
 * CRC-32 bit by bit, an insertion sort, a small matrix product and a
 * PRNG, repeated.  Returns a checksum. */
#include <stddef.h>

int main(void);

#define N 256
static unsigned int data[N];
static int ma[16][16], mb[16][16], mc[16][16];

static unsigned int crc32_bits(const unsigned char *p, size_t n, unsigned int crc)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc & 1) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
    }
    return ~crc;
}

static void isort(unsigned int *v, int n)
{
    for (int i = 1; i < n; i++) {
        unsigned int x = v[i];
        int j = i - 1;

        while (j >= 0 && v[j] > x) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

static void matmul(void)
{
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            int s = 0;

            for (int k = 0; k < 16; k++)
                s += ma[i][k] * mb[k][j];
            mc[i][j] = s;
        }
}

int main(void)
{
    unsigned int seed = 12345, crc = 0;

    for (int round = 0; round < 500; round++) {
        for (int i = 0; i < N; i++) {
            seed = seed * 1103515245u + 12345u;
            data[i] = seed >> 8;
        }
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 16; j++) {
                ma[i][j] = (int)(data[i * 16 + j] & 0xFF);
                mb[i][j] = (int)((data[j * 16 + i] >> 8) & 0xFF);
            }
        crc = crc32_bits((const unsigned char *)data, sizeof data, crc);
        isort(data, N);
        matmul();
        crc ^= data[N / 2] ^ (unsigned int)mc[round & 15][3];
    }
    return (int)(crc & 0x7FFFFFFF);
}
