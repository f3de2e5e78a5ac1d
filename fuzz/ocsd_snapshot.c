/*
 * tb_fuzz_ocsd_snapshot ocsd_etmv3|ocsd_ptm INPUT DIR
 *
 * Writes an input of the OpenCSD differential harnesses
 * (fuzz_diff_ocsd.c) as a snapshot both decoders read: the registers of
 * its 4 configuration bytes (tb_fuzz_ocsd_config, as the harness has them),
 * the rest as the source's raw trace, and the harness's memory image
 * (tb_fuzz_ocsd_image) as dumps.  Then `tracebench decode DIR` and
 * `trc_pkt_lister -ss_dir DIR -decode` show what each decoder makes of
 * it: the way a finding becomes the minimal snapshot of a
 * docs/opencsd-bugs.md entry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static const struct {
    uint32_t addr, len;
} regions[] = {
    {TB_FUZZ_VEC_BASE, 32},
    {TB_FUZZ_ARM_BASE, TB_FUZZ_CODE_BYTES},
    {TB_FUZZ_THUMB_BASE, TB_FUZZ_CODE_BYTES},
    {TB_FUZZ_LONG_ARM_BASE, TB_FUZZ_LONG_BYTES},
    {TB_FUZZ_LONG_THUMB_BASE, TB_FUZZ_LONG_BYTES},
    {TB_FUZZ_TOP_BASE, 0x1000},
};
#define N_REGIONS (sizeof regions / sizeof regions[0])

int main(int argc, char **argv)
{
    static uint8_t input[TB_FUZZ_MAX_INPUT], mem[N_REGIONS][TB_FUZZ_CODE_BYTES];
    tb_snap_region r[N_REGIONS];
    tb_protocol proto;
    tb_config cfg;
    char err[512];
    size_t len, k;
    FILE *f;

    if (argc != 4 || (strcmp(argv[1], "ocsd_etmv3") && strcmp(argv[1], "ocsd_ptm"))) {
        fprintf(stderr, "usage: %s ocsd_etmv3|ocsd_ptm INPUT DIR\n", argv[0]);
        return 2;
    }
    proto = argv[1][5] == 'e' ? TB_PROTO_ETMV3 : TB_PROTO_PTM;
    f = fopen(argv[2], "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", argv[2]);
        return 1;
    }
    len = fread(input, 1, sizeof input, f);
    fclose(f);
    if (len < TB_FUZZ_CFG_BYTES) {
        fprintf(stderr, "%s: shorter than the %d configuration bytes\n", argv[2],
                TB_FUZZ_CFG_BYTES);
        return 1;
    }
    tb_fuzz_ocsd_config(proto, input, &cfg);
    for (k = 0; k < N_REGIONS; k++) {
        r[k].address = regions[k].addr;
        r[k].data = mem[k];
        r[k].len = tb_memimage_read(tb_fuzz_ocsd_image(), regions[k].addr, mem[k],
                                    regions[k].len);
    }
    {
        const tb_snap_out_source s = {proto == TB_PROTO_PTM ? "PTM_0" : "ETM_0", &cfg, "cpu_0",
                                      "Cortex-A15", r, N_REGIONS};

        if (tb_snapshot_write(argv[3], &s, 1, input + TB_FUZZ_CFG_BYTES,
                              len - TB_FUZZ_CFG_BYTES, "source_data", err, sizeof err) < 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
    }
    printf("%s: ETMCR 0x%08x ETMIDR 0x%08x ETMCCER 0x%08x, %zu trace bytes\n", argv[3],
           cfg.etmcr, cfg.etmidr, cfg.etmccer, len - TB_FUZZ_CFG_BYTES);
    return 0;
}
