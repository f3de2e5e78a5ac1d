/* libFuzzer entry point; TB_FUZZ_ENTRY names the harness (fuzz.h). */
#include "fuzz.h"

#ifndef TB_FUZZ_ENTRY
#error "define TB_FUZZ_ENTRY to a tb_fuzz_* harness"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return TB_FUZZ_ENTRY(data, size);
}
