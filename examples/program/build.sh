#!/bin/sh
# Builds examples/program/irq_counter.c (or the C and assembly files
# given after OUT) into an ELF the simulator runs: freestanding ARM code
# for a Cortex-A15, with the vector programs' start-up code and vector
# table (crt0.S), memcpy/memset (lib.c) and linker script (link.ld, one
# region from address 0).  The flags are those of vectors/CMakeLists.txt.
#
#   build.sh [OUT.elf [SOURCE...]]      (default: irq_counter.elf irq_counter.c)
#
# The runtime files come from $TB_RUNTIME, else runtime/ beside this
# script (an installed copy, share/doc/tracebench/examples/program), else
# the source tree's vectors/programs.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "${TB_RUNTIME:-}" ]; then
  rt=$TB_RUNTIME
elif [ -f "$here/runtime/crt0.S" ]; then
  rt=$here/runtime
else
  rt=$here/../../vectors/programs
fi
out=${1:-irq_counter.elf}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- "$here/irq_counter.c"
# -marm: the interrupt attribute's handler entry and return are A32.
arm-none-eabi-gcc -mcpu=cortex-a15 -marm -mfloat-abi=soft -ffreestanding -nostdlib \
  -fno-builtin -O2 -g -Wall -T "$rt/link.ld" -o "$out" "$rt/crt0.S" "$rt/lib.c" "$@" -lgcc
