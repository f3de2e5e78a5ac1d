#!/bin/sh
# fuzz/elf-seeds.sh OUTDIR
#
# The elfinfo harness's seeds (fuzz_elfinfo.c): ELF files of the
# project's own programs, with symbols and DWARF line tables (-g), as
# `coverage --memory ELF` reads them.  Built with the project's own
# command line (examples/program/build.sh, whose flags ctest
# example_program keeps equal to vectors/CMakeLists.txt's) from C and
# assembly of vectors/programs and examples/program: ARM and Thumb code,
# several functions, interworking, exception handlers.  Without
# arm-none-eabi-gcc, the vector programs of a build tree
# (build*/vectors/programs/*.elf) are taken instead.  Fails, saying
# what to do, when neither gives a file.  Run by fuzz/run.sh and
# fuzz/oss-fuzz-build.sh.
set -eu
[ $# -eq 1 ] || { echo "usage: elf-seeds.sh OUTDIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$1
mkdir -p "$out"
n=0
if command -v arm-none-eabi-gcc >/dev/null 2>&1; then
  for src in examples/program/irq_counter.c vectors/programs/funcptr.c \
             vectors/programs/recursion.c vectors/programs/data_loop.c \
             vectors/programs/arm_basic.S vectors/programs/thumb_basic.S \
             vectors/programs/interwork.S vectors/programs/irq_fiq.S; do
    name=$(basename "$src")
    sh "$root/examples/program/build.sh" "$out/${name%.*}.elf" "$root/$src"
    n=$((n + 1))
  done
else
  for f in "$root"/build*/vectors/programs/*.elf; do
    [ -f "$f" ] || continue
    cp "$f" "$out/"
    n=$((n + 1))
  done
fi
if [ "$n" -eq 0 ]; then
  echo "elf-seeds.sh: no ELF seeds: install arm-none-eabi-gcc (Debian: gcc-arm-none-eabi," \
       "scripts/deps.sh), or build the vector programs (cmake --build build --target tb_vectors)" >&2
  exit 1
fi
echo "$n ELF seeds in $out"
