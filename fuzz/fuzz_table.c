/* The harnesses of this build, by the name of their regression folder. */
#include "fuzz.h"

const tb_fuzz_harness tb_fuzz_harnesses[] = {
    {"etmv3_parser", tb_fuzz_etmv3_parser},
    {"ptm_parser", tb_fuzz_ptm_parser},
    {"deformatter", tb_fuzz_deformatter},
    {"snapshot", tb_fuzz_snapshot},
    {"etmv3_decoder", tb_fuzz_etmv3_decoder},
    {"ptm_decoder", tb_fuzz_ptm_decoder},
    {"etmv1", tb_fuzz_etmv1},
    {"etmv2", tb_fuzz_etmv2},
    {NULL, NULL},
};
