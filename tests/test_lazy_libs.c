/*
 * cli/lazy_libs.c when a library is absent: the command line loads
 * Unicorn and Capstone when first used; a missing one must make the call
 * that needed it fail with the library's own error code (the commands
 * report those as usual) and say which library and why, never crash.
 * The present-library path runs in every CLI test that simulates or
 * disassembles (test_cli_roundtrip, test_cli_runs, test_formats' CLI
 * runs).
 */
#include <criterion/criterion.h>
#include <string.h>

#define TB_UNICORN_SONAME "libtb-absent-unicorn.so.0"
#define TB_CAPSTONE_SONAME "libtb-absent-capstone.so.0"
#include "../cli/lazy_libs.c"

Test(lazy_libs, absent_unicorn_fails_cleanly)
{
    uc_engine *e = NULL;

    cr_assert_eq(uc_open(UC_ARCH_ARM, UC_MODE_ARM, &e), UC_ERR_ARCH);
    cr_assert_null(e);
    cr_assert_not_null(strstr(uc_strerror(UC_ERR_ARCH), TB_UNICORN_SONAME));
    cr_assert_not_null(strstr(uc_strerror(UC_ERR_ARCH), "libunicorn2"));
    /* Everything else needs an engine; without the library none exists. */
    cr_assert_eq(uc_close(NULL), UC_ERR_HANDLE);
    cr_assert_eq(uc_emu_stop(NULL), UC_ERR_HANDLE);
}

Test(lazy_libs, absent_capstone_fails_cleanly)
{
    csh h = 0;
    const uint8_t code[4] = {0};
    const uint8_t *p = code;
    size_t n = sizeof code;
    uint64_t at = 0;

    cr_assert_eq(cs_open(CS_ARCH_ARM, CS_MODE_ARM, &h), CS_ERR_ARCH);
    cr_assert_null(cs_malloc(h));
    cr_assert(!cs_disasm_iter(h, &p, &n, &at, NULL));
    cr_assert_eq(cs_close(&h), CS_ERR_HANDLE);
    cs_free(NULL, 0);
}
