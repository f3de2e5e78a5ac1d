/* The harnesses of this build, by the name of their regression folder,
 * with the harness whose input format they share. */
#include "fuzz.h"

const tb_fuzz_harness tb_fuzz_harnesses[] = {
    {"etmv3_parser", tb_fuzz_etmv3_parser, "etmv3_parser"},
    {"etmv3_parser_full", tb_fuzz_etmv3_parser_full, "etmv3_parser"},
    {"ptm_parser", tb_fuzz_ptm_parser, "ptm_parser"},
    {"ptm_parser_full", tb_fuzz_ptm_parser_full, "ptm_parser"},
    {"deformatter", tb_fuzz_deformatter, "deformatter"},
    {"deformatter_full", tb_fuzz_deformatter_full, "deformatter"},
    {"snapshot", tb_fuzz_snapshot, "snapshot"},
    {"snapshot_full", tb_fuzz_snapshot_full, "snapshot"},
    {"etmv3_decoder", tb_fuzz_etmv3_decoder, "etmv3_decoder"},
    {"etmv3_decoder_full", tb_fuzz_etmv3_decoder_full, "etmv3_decoder"},
    {"ptm_decoder", tb_fuzz_ptm_decoder, "ptm_decoder"},
    {"ptm_decoder_full", tb_fuzz_ptm_decoder_full, "ptm_decoder"},
    {"etmv1", tb_fuzz_etmv1, "etmv1"},
    {"etmv1_full", tb_fuzz_etmv1_full, "etmv1"},
    {"etmv2", tb_fuzz_etmv2, "etmv2"},
    {"etmv2_full", tb_fuzz_etmv2_full, "etmv2"},
    {NULL, NULL, NULL},
};
