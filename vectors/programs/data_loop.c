/* A data-heavy loop (Thumb): memset, memcpy and word sums over buffers. */
#include <stddef.h>

void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int main(void);

static unsigned char a[2048], b[2048];
static unsigned int words[512];

int main(void)
{
    unsigned int sum = 0;

    for (int round = 0; round < 4; round++) {
        memset(a, round + 1, sizeof a);
        memcpy(b, a, sizeof b);
        for (int i = 0; i < 512; i++)
            words[i] = (unsigned int)b[i * 4] * (unsigned int)(i + round);
        for (int i = 0; i < 512; i++)
            sum += words[i];
    }
    return (int)(sum & 0x7FFFFFFF);
}
