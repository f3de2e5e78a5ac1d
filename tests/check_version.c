/*
 * tb_library_version() of the shared library against the project()
 * version CMake passes on the command line (ctest library_version): the
 * expected value comes from CMakeLists.txt, not from the library.
 */
#include <stdio.h>
#include <string.h>

#include "tracebench/version.h"

int main(int argc, char **argv)
{
    unsigned major, minor, patch;
    char end;
    const char *got = tb_library_version();
    int num = tb_library_version_number();

    if (argc != 2 || sscanf(argv[1], "%u.%u.%u%c", &major, &minor, &patch, &end) != 3) {
        fprintf(stderr, "usage: tb_check_version MAJOR.MINOR.PATCH\n");
        return 2;
    }
    if (!got || strcmp(got, argv[1])) {
        fprintf(stderr, "FAIL: tb_library_version() = \"%s\", project version %s\n",
                got ? got : "(null)", argv[1]);
        return 1;
    }
    if (num != (int)(major * 10000 + minor * 100 + patch)) {
        fprintf(stderr, "FAIL: tb_library_version_number() = %d, want %u for %s\n", num,
                major * 10000 + minor * 100 + patch, argv[1]);
        return 1;
    }
    printf("ok: libtracebench %s (%d)\n", got, num);
    return 0;
}
