/* count_insns: how many instructions a trace says ran, and the first few.
 *
 *   count_insns DIR [ID] [N]
 *
 * Decodes trace source ID (e.g. 0x10; default: the snapshot's only
 * source) of the OpenCSD-format snapshot in DIR, then prints the number
 * of instructions and the address and ISA of the first N (default 8).
 * Build against an installed tracebench:
 *   cc -std=c11 count_insns.c $(pkg-config --cflags --libs tracebench)
 */
#include <stdio.h>
#include <stdlib.h>

#include <tracebench/decoder.h>
#include <tracebench/version.h>

struct count {
    unsigned long long insns;
    size_t want, have;
    uint32_t *addr;
    uint8_t *isa;
};

static int on_insn(void *ctx, const tb_insn_element *ie)
{
    struct count *c = ctx;

    for (size_t i = 0; i < ie->n_addrs && c->have < c->want; i++, c->have++) {
        c->addr[c->have] = ie->addrs[i];
        c->isa[c->have] = ie->el->isa;
    }
    c->insns += ie->n_addrs;
    return 0;
}

int main(int argc, char **argv)
{
    struct count c = {0, 8, 0, NULL, NULL};
    char err[512] = "";
    int id = -1, status = 0;

    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: count_insns DIR [ID] [N]   (tracebench %s)\n",
                TB_VERSION_STRING);
        return 2;
    }
    if (argc > 2)
        id = (int)strtol(argv[2], NULL, 0);
    if (argc > 3)
        c.want = strtoul(argv[3], NULL, 0);
    c.addr = malloc((c.want + 1) * sizeof *c.addr);
    c.isa = malloc(c.want + 1);
    if (!c.addr || !c.isa) {
        free(c.addr);
        free(c.isa);
        return 1;
    }
    if (tb_decode_snapshot_insns(argv[1], id, on_insn, &c, err, sizeof err) < 0) {
        fprintf(stderr, "count_insns: %s\n", err);
        status = 1;
    } else {
        printf("instructions %llu\n", c.insns);
        for (size_t i = 0; i < c.have; i++)
            printf("0x%08X %s\n", (unsigned)c.addr[i], tb_isa_name((tb_isa)c.isa[i]));
    }
    free(c.addr);
    free(c.isa);
    return status;
}
