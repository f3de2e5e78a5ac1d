/* The library's version at run time (tracebench/version.h). */
#include "tracebench/version.h"

const char *tb_library_version(void)
{
    return TB_VERSION_STRING;
}

int tb_library_version_number(void)
{
    return TB_VERSION_NUMBER;
}
