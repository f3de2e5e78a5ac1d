#!/bin/bash -eu
# OSS-Fuzz style build: uses $CC, $CFLAGS, $LIB_FUZZING_ENGINE, $OUT (and
# $SRC/tracebench as the checkout when run inside the OSS-Fuzz image,
# where capstone must be installed, e.g. apt-get install libcapstone-dev).
# Outside OSS-Fuzz it defaults to clang with libFuzzer+ASan+UBSan and
# OUT=build-oss-fuzz, which is how it is tested here.
#
# Produces $OUT/fuzz_<harness> (each fast harness, its _full one and the
# round trip), $OUT/fuzz_<harness>.dict and
# $OUT/fuzz_<harness>_seed_corpus.zip (seeds from the project's writers;
# the regression inputs join them).
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
: "${CC:=clang}"
: "${CFLAGS:=-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all -fsanitize=fuzzer-no-link}"
: "${LIB_FUZZING_ENGINE:=-fsanitize=fuzzer,address,undefined}"
: "${OUT:=$root/build-oss-fuzz}"
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cap_cflags=$(pkg-config --cflags capstone 2>/dev/null || true)
cap_libs=$(pkg-config --libs capstone 2>/dev/null || echo -lcapstone)
inc="-I$root/include -I$root/fuzz $cap_cflags"
std="-std=c11 -D_POSIX_C_SOURCE=200809L"

objs=()
for src in "$root"/common/*.c "$root"/encoder/*.c "$root"/decoder/*.c \
           "$here"/fuzz_util.c "$here"/fuzz_table.c "$here"/fuzz_parser.c \
           "$here"/fuzz_deformatter.c "$here"/fuzz_snapshot.c \
           "$here"/fuzz_decoder.c "$here"/fuzz_etmv1.c "$here"/fuzz_etmv2.c "$here"/fuzz_seeds.c; do
  o=$work/$(basename "$(dirname "$src")")_$(basename "$src" .c).o
  $CC $CFLAGS $std $inc -c "$src" -o "$o"
  objs+=("$o")
done

# Seed maker, built plain so it runs without the fuzzing runtime.
plain=()
for src in "$root"/common/*.c "$root"/encoder/*.c "$root"/decoder/*.c \
           "$here"/fuzz_util.c "$here"/fuzz_seeds.c "$here"/seedgen.c; do
  o=$work/plain_$(basename "$(dirname "$src")")_$(basename "$src" .c).o
  cc -O1 $std $inc -c "$src" -o "$o"
  plain+=("$o")
done
cc -o "$work/seedgen" "${plain[@]}" $cap_libs

for h in etmv3_parser etmv3_parser_full ptm_parser ptm_parser_full deformatter \
         deformatter_full snapshot snapshot_full etmv3_decoder etmv3_decoder_full ptm_decoder \
         ptm_decoder_full etmv1 etmv1_full etmv2 etmv2_full; do
  $CC $CFLAGS $std $inc -DTB_FUZZ_ENTRY="tb_fuzz_$h" -c "$here/driver_libfuzzer.c" \
    -o "$work/driver_$h.o"
  $CC $CFLAGS $LIB_FUZZING_ENGINE -o "$OUT/fuzz_$h" "$work/driver_$h.o" "${objs[@]}" $cap_libs
  case $h in
    etmv3_*) cp "$here/dict/etmv3.dict" "$OUT/fuzz_$h.dict" ;;
    ptm_*) cp "$here/dict/ptm.dict" "$OUT/fuzz_$h.dict" ;;
    etmv1*|etmv2*) ;;
    *) cp "$here/dict/${h%_full}.dict" "$OUT/fuzz_$h.dict" ;;
  esac
  mkdir -p "$work/seeds_$h"
  "$work/seedgen" "$h" "$work/seeds_$h" >/dev/null
  # A full harness reads its fast one's inputs: both regression folders.
  for r in "$here/regressions/$h" "$here/regressions/${h%_full}"; do
    if [ -d "$r" ]; then
      cp "$r"/* "$work/seeds_$h/"
    fi
  done
  rm -f "$OUT/fuzz_${h}_seed_corpus.zip"
  (cd "$work/seeds_$h" && zip -q -j "$OUT/fuzz_${h}_seed_corpus.zip" ./*)
done
# Round trip: needs Unicorn for the simulator.
if pkg-config --exists unicorn 2>/dev/null; then
  uc_cflags=$(pkg-config --cflags unicorn)
  uc_libs=$(pkg-config --libs unicorn)
  simobjs=()
  for src in "$root"/sim/*.c "$here"/fuzz_roundtrip.c; do
    o=$work/rt_$(basename "$src" .c).o
    $CC $CFLAGS $std $inc $uc_cflags -I"$root/sim" -c "$src" -o "$o"
    simobjs+=("$o")
  done
  $CC $CFLAGS $std $inc -DTB_FUZZ_ENTRY=tb_fuzz_roundtrip -c "$here/driver_libfuzzer.c" \
    -o "$work/driver_roundtrip.o"
  $CC $CFLAGS $LIB_FUZZING_ENGINE -o "$OUT/fuzz_roundtrip" "$work/driver_roundtrip.o" \
    "${simobjs[@]}" "${objs[@]}" $uc_libs $cap_libs
  mkdir -p "$work/seeds_roundtrip"
  "$work/seedgen" roundtrip "$work/seeds_roundtrip" >/dev/null
  if [ -d "$here/regressions/roundtrip" ]; then
    cp "$here/regressions/roundtrip"/* "$work/seeds_roundtrip/"
  fi
  rm -f "$OUT/fuzz_roundtrip_seed_corpus.zip"
  (cd "$work/seeds_roundtrip" && zip -q -j "$OUT/fuzz_roundtrip_seed_corpus.zip" ./*)
else
  echo "oss-fuzz-build: no Unicorn (pkg-config unicorn): fuzz_roundtrip not built" >&2
fi
echo "oss-fuzz-build: fuzzers in $OUT"
