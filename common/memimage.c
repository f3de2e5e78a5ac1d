/*
 * Memory image: the code bytes a decoder follows (protocol-notes 4.1).
 * Non-overlapping regions kept sorted by start address, so a lookup is a
 * binary search; each region owns a copy of its bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "memimage_own.h"
#include "tracebench/snapshot.h"

typedef struct region {
    uint64_t start, end;     /* [start, end); end may be 2^32 */
    uint8_t *data;
} region;

struct tb_memimage {
    region *r;
    size_t n, cap;
};

tb_memimage *tb_memimage_new(void)
{
    return calloc(1, sizeof(tb_memimage));
}

void tb_memimage_free(tb_memimage *m)
{
    size_t i;

    if (!m)
        return;
    for (i = 0; i < m->n; i++)
        free(m->r[i].data);
    free(m->r);
    free(m);
}

/* Index of the first region whose end is above addr (m->n if none). */
static size_t first_ending_after(const tb_memimage *m, uint64_t addr)
{
    size_t lo = 0, hi = m->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->r[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The region [addr, addr + len) with bytes data (adopted, or NULL: a
 * copy of src is made). */
static int insert(tb_memimage *m, uint32_t addr, uint8_t *data, const uint8_t *src,
                  size_t len)
{
    uint64_t end;
    size_t pos;

    /* The image is a 32-bit address space: nothing may wrap past 2^32. */
    if ((uint64_t)len > 0x100000000ull - addr)
        return TB_ERR_INVAL;
    end = (uint64_t)addr + len;
    pos = first_ending_after(m, addr);
    if (pos < m->n && m->r[pos].start < end)
        return TB_ERR_INVAL; /* overlaps an existing region */
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 8;
        region *r = realloc(m->r, cap * sizeof *r);
        if (!r)
            return TB_ERR_NOMEM;
        m->r = r;
        m->cap = cap;
    }
    if (!data) {
        data = malloc(len);
        if (!data)
            return TB_ERR_NOMEM;
        memcpy(data, src, len);
    }
    memmove(&m->r[pos + 1], &m->r[pos], (m->n - pos) * sizeof *m->r);
    m->r[pos] = (region){.start = addr, .end = end, .data = data};
    m->n++;
    return 0;
}

int tb_memimage_add(tb_memimage *m, uint32_t addr, const uint8_t *data,
                    size_t len)
{
    if (!m || (!data && len))
        return TB_ERR_INVAL;
    if (len == 0)
        return 0;
    return insert(m, addr, NULL, data, len);
}

int tb_memimage_adopt(tb_memimage *m, uint32_t addr, uint8_t *data, size_t len)
{
    if (!m || (!data && len))
        return TB_ERR_INVAL;
    if (len == 0)
        return 0; /* nothing adopted: the caller frees data */
    return insert(m, addr, data, NULL, len);
}

const uint8_t *tb_memimage_ptr(const tb_memimage *m, uint32_t addr,
                               size_t *avail)
{
    size_t pos;

    if (avail)
        *avail = 0;
    if (!m || !avail)
        return NULL;
    pos = first_ending_after(m, addr);
    if (pos == m->n || m->r[pos].start > addr)
        return NULL;
    *avail = (size_t)(m->r[pos].end - addr);
    return m->r[pos].data + (addr - m->r[pos].start);
}

size_t tb_memimage_read(const tb_memimage *m, uint32_t addr, uint8_t *out,
                        size_t len)
{
    size_t done = 0, pos;
    uint64_t a = addr;

    if (!m || !out)
        return 0;
    pos = first_ending_after(m, a);
    /* Regions that touch end to start are contiguous memory, so a read
     * may run on from one into the next. */
    while (done < len && pos < m->n && m->r[pos].start <= a) {
        const region *r = &m->r[pos];
        size_t n = (size_t)(r->end - a);

        if (n > len - done)
            n = len - done;
        memcpy(out + done, r->data + (a - r->start), n);
        done += n;
        a += n;
        pos++;
    }
    return done;
}
