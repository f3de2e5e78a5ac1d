#!/bin/bash -eu
# Builds every fuzz harness under the OSS-Fuzz build contract, as
# ClusterFuzzLite (.clusterfuzzlite/build.sh) and OSS-Fuzz run it:
#   $CC, $CFLAGS    compile (the sanitizer and coverage flags are in CFLAGS)
#   $CXX, $CXXFLAGS link (libFuzzer is C++: the contract links with $CXX)
#   $LIB_FUZZING_ENGINE  the engine's link argument (-fsanitize=fuzzer)
#   $OUT            where the fuzzers and their files go
#   $WORK           scratch space for objects and seeds
#   $SRC            holds the checkout as $SRC/tracebench (in the image);
#                   when that is missing, the checkout this script is in
# Outside the image every variable has a default (clang, libFuzzer + ASan
# + UBSan, OUT=build-oss-fuzz): tests/test-oss-fuzz-build.sh runs it so.
#
# For each harness of `fuzz/run.sh --list` it writes
#   $OUT/fuzz_HARNESS                  the fuzzer (statically linked to
#                                      Capstone and Unicorn where their .a
#                                      is the only library found, as in the image)
#   $OUT/fuzz_HARNESS_seed_corpus.zip  tb_fuzz_seedgen's seeds + regressions
#   $OUT/fuzz_HARNESS.options          libFuzzer limits, the same as run.sh's
#   $OUT/fuzz_HARNESS.dict             where run.sh uses a dictionary
# and fails when it cannot (no Unicorn: the round trip cannot be built;
# TB_OSS_FUZZ_SKIP="roundtrip" leaves it out on purpose, and says so).
#
# Capstone and Unicorn are compiled without the sanitizers (the
# Dockerfile builds them before $CFLAGS exist): MSan would report their
# memory as uninitialised, which is why .clusterfuzzlite/project.yaml
# asks for ASan and UBSan only.
here=$(cd "$(dirname "$0")" && pwd)
: "${SRC:=}"
if [ -n "$SRC" ] && [ -f "$SRC/tracebench/fuzz/run.sh" ]; then
  root=$(cd "$SRC/tracebench" && pwd)
else
  root=$(dirname "$here")
fi
fz=$root/fuzz
: "${CC:=clang}"
: "${CXX:=clang++}"
: "${CFLAGS:=-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all -fsanitize=fuzzer-no-link}"
: "${CXXFLAGS:=$CFLAGS}"
: "${LIB_FUZZING_ENGINE:=-fsanitize=fuzzer}"
: "${OUT:=$root/build-oss-fuzz}"
: "${TB_OSS_FUZZ_SKIP:=}"
mkdir -p "$OUT"
if [ -n "${WORK:-}" ]; then
  work=$WORK/tracebench
  rm -rf "$work"
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
jobs=$(nproc 2>/dev/null || echo 2)

for tool in pkg-config zip; do
  command -v "$tool" >/dev/null || {
    echo "oss-fuzz-build: $tool is missing: install it (the Dockerfile does)" >&2
    exit 1
  }
done
# --static: the libraries' private dependencies too (Unicorn needs
# -lpthread -lm when its archive is linked).
cap_cflags=$(pkg-config --cflags capstone 2>/dev/null || true)
cap_libs=$(pkg-config --static --libs capstone 2>/dev/null || echo -lcapstone)
uc_cflags=$(pkg-config --cflags unicorn 2>/dev/null || true)
uc_libs=$(pkg-config --static --libs unicorn 2>/dev/null || echo "-lunicorn -lpthread -lm")
# tracebench/version.h as CMake generates it (cmake/version.h.in, the
# project() version): common/version.c includes it.
ver=$(sed -n 's/^project(tracebench VERSION \([0-9]*\.[0-9]*\.[0-9]*\).*/\1/p' "$root/CMakeLists.txt")
[ -n "$ver" ] || { echo "oss-fuzz-build: no project version in CMakeLists.txt" >&2; exit 1; }
mkdir -p "$work/include/tracebench"
IFS=. read -r ver_major ver_minor ver_patch <<<"$ver"
sed -e "s/@PROJECT_VERSION_MAJOR@/$ver_major/" -e "s/@PROJECT_VERSION_MINOR@/$ver_minor/" \
    -e "s/@PROJECT_VERSION_PATCH@/$ver_patch/" -e "s/@PROJECT_VERSION@/$ver/" \
    "$root/cmake/version.h.in" > "$work/include/tracebench/version.h"
inc="-I$root/include -I$work/include -I$root/vectors/speccov -I$fz $cap_cflags"
std="-std=c11 -D_POSIX_C_SOURCE=200809L"

# The harness list and dictionaries: fuzz/run.sh's, so that nothing run.sh
# fuzzes is left out here.
names=()
declare -A dict=() maxlen=()
while read -r h d m; do
  names+=("$h")
  dict[$h]=$d
  maxlen[$h]=$m
done < <(bash "$fz/run.sh" --list)
[ "${#names[@]}" -gt 0 ] || { echo "oss-fuzz-build: fuzz/run.sh --list named no harness" >&2; exit 1; }

# compile OUTDIR FLAGS... -- SOURCES...: one object per source, $jobs at once.
compile() {
  local dir=$1; shift
  local flags=() src o pids=() p rc=0
  while [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  mkdir -p "$dir"
  for src in "$@"; do
    o=$dir/$(basename "$(dirname "$src")")_$(basename "$src" .c).o
    "${flags[@]}" -c "$src" -o "$o" &
    pids+=($!)
    if [ "${#pids[@]}" -ge "$jobs" ]; then
      wait "${pids[0]}" || rc=1
      pids=("${pids[@]:1}")
    fi
  done
  for p in ${pids[@]+"${pids[@]}"}; do
    wait "$p" || rc=1
  done
  return $rc
}

# The library, the spec-coverage catalogue (the parser and ETMv1/ETMv2
# harnesses classify every packet with it) and the harnesses,
# instrumented, in one archive.
lib_srcs=("$root"/common/*.c "$root"/encoder/*.c "$root"/decoder/*.c "$root"/vectors/speccov/*.c)
harness_srcs=("$fz"/fuzz_util.c "$fz"/fuzz_table.c "$fz"/fuzz_parser.c "$fz"/fuzz_deformatter.c
              "$fz"/fuzz_snapshot.c "$fz"/fuzz_decoder.c "$fz"/fuzz_etmv1.c "$fz"/fuzz_etmv2.c
              "$fz"/fuzz_seeds.c)
# shellcheck disable=SC2086
compile "$work/lib" $CC $CFLAGS $std $inc -- "${lib_srcs[@]}" "${harness_srcs[@]}"
ar rcs "$work/libtb_fuzz.a" "$work"/lib/*.o

# The seed maker, plain (no sanitizer, no engine), so it runs at build time.
# shellcheck disable=SC2086
compile "$work/plain" $CC -O1 $std $inc -- "${lib_srcs[@]}" "$fz"/fuzz_util.c "$fz"/fuzz_seeds.c \
  "$fz"/seedgen.c
# shellcheck disable=SC2086
$CC -o "$work/seedgen" "$work"/plain/*.o $cap_libs

built=()
for h in "${names[@]}"; do
  if [[ " $TB_OSS_FUZZ_SKIP " == *" $h "* ]]; then
    echo "oss-fuzz-build: $h left out (TB_OSS_FUZZ_SKIP)" >&2
    continue
  fi
  extra_srcs=() extra_inc=() extra_libs=()
  case $h in
    conform)
      # The conformance kit's readers of any decoder's output (issue 33).
      extra_srcs=("$fz/fuzz_conform.c" "$root/vectors/conform/reader.c"
                  "$root/vectors/conform/items.c")
      extra_inc=("-I$root/vectors/conform") ;;
    ocsd_etmv3|ocsd_ptm)
      # Differential against OpenCSD in process: its C API library,
      # uninstrumented (fuzz/CMakeLists.txt does the same).
      # shellcheck disable=SC2086
      if ! pkg-config --exists libopencsd 2>/dev/null ||
         ! echo 'int main(void){return 0;}' |
           $CC -x c - -o "$work/ocsd-probe" -lopencsd_c_api $(pkg-config --libs libopencsd) \
             -lstdc++ 2>/dev/null; then
        echo "oss-fuzz-build: OpenCSD's C API not found (pkg-config libopencsd," \
             "-lopencsd_c_api): fuzz_$h cannot be built; install libopencsd-dev, or set" \
             "TB_OSS_FUZZ_SKIP='ocsd_etmv3 ocsd_ptm' as .clusterfuzzlite/Dockerfile does" >&2
        exit 1
      fi
      extra_srcs=("$fz/fuzz_diff_ocsd.c")
      read -r -a extra_inc <<<"$(pkg-config --cflags libopencsd) -DTB_FUZZ_OCSD_LIBFUZZER=1"
      read -r -a extra_libs <<<"-lopencsd_c_api $(pkg-config --libs libopencsd) -lstdc++" ;;
    elfinfo)
      # The ELF reader of `coverage --memory` (analysis/elfinfo.c) through
      # elfutils' libdw and libelf, linked statically (the runner image has
      # neither; their own dependencies, zlib, liblzma, libbz2, are in
      # every Ubuntu base).
      if ! pkg-config --exists libdw libelf 2>/dev/null; then
        echo "oss-fuzz-build: elfutils' libdw not found (pkg-config libdw libelf):" \
             "fuzz_elfinfo cannot be built; install libdw-dev (the Dockerfile does), or set" \
             "TB_OSS_FUZZ_SKIP=elfinfo" >&2
        exit 1
      fi
      extra_srcs=("$fz/fuzz_elfinfo.c" "$root/analysis/elfinfo.c")
      read -r -a extra_inc <<<"$(pkg-config --cflags libdw libelf) -DTB_HAVE_LIBDW=1"
      dw_deps=$(pkg-config --static --libs libdw libelf | sed -E 's/(^| )-l(dw|elf)( |$)/ /g; s/(^| )-l(dw|elf)( |$)/ /g')
      read -r -a extra_libs <<<"-Wl,-Bstatic -ldw -lelf -Wl,-Bdynamic $dw_deps" ;;
    gen)
      # The kept-seed table parser and the program generator (fuzz_gen.c).
      extra_srcs=("$fz/fuzz_gen.c" "$root/gen/gen.c" "$root/roundtrip/gen_seeds.c") ;;
    roundtrip)
      # sim -> encoder -> decoder: the simulator needs Unicorn.
      # shellcheck disable=SC2086
      if ! pkg-config --exists unicorn 2>/dev/null && ! echo 'int main(void){return 0;}' |
           $CC -x c - -o "$work/uc-probe" $uc_libs 2>/dev/null; then
        echo "oss-fuzz-build: Unicorn 2 not found (pkg-config unicorn, -lunicorn):" \
             "fuzz_roundtrip cannot be built; install libunicorn-dev or build it as" \
             ".clusterfuzzlite/Dockerfile does, or set TB_OSS_FUZZ_SKIP=roundtrip" >&2
        exit 1
      fi
      extra_srcs=("$fz/fuzz_roundtrip.c" "$root"/sim/*.c)
      read -r -a extra_inc <<<"-I$root/sim $uc_cflags"
      read -r -a extra_libs <<<"$uc_libs" ;;
  esac
  rm -rf "$work/obj_$h"
  # shellcheck disable=SC2086
  compile "$work/obj_$h" $CC $CFLAGS $std $inc ${extra_inc[@]+"${extra_inc[@]}"} \
    -DTB_FUZZ_ENTRY="tb_fuzz_$h" -- "$fz/driver_libfuzzer.c" ${extra_srcs[@]+"${extra_srcs[@]}"}
  # shellcheck disable=SC2086
  $CXX $CXXFLAGS -o "$OUT/fuzz_$h" "$work/obj_$h"/*.o $LIB_FUZZING_ENGINE \
    "$work/libtb_fuzz.a" ${extra_libs[@]+"${extra_libs[@]}"} $cap_libs

  # Seeds: the project's writers, and what broke once (a _full harness
  # reads its fast one's inputs: both regression folders).
  seeds=$work/seeds_$h
  rm -rf "$seeds"
  mkdir -p "$seeds"
  if [ "$h" = elfinfo ]; then
    sh "$fz/elf-seeds.sh" "$seeds" >/dev/null
  else
    "$work/seedgen" "$h" "$seeds" >/dev/null
  fi
  for r in "$fz/regressions/$h" "$fz/regressions/${h%_full}"; do
    if [ -d "$r" ]; then
      cp "$r"/* "$seeds/"
    fi
  done
  rm -f "$OUT/fuzz_${h}_seed_corpus.zip"
  (cd "$seeds" && zip -q -j "$OUT/fuzz_${h}_seed_corpus.zip" ./*)

  rm -f "$OUT/fuzz_$h.dict"
  if [ "${dict[$h]}" != - ]; then
    cp "${dict[$h]}" "$OUT/fuzz_$h.dict"
  fi

  # The limits fuzz/run.sh fuzzes with: 10 s an input, malloc 256 MB,
  # RSS 1024 MB, inputs up to run.sh's max_len_of (8 KiB; ELF files
  # 32 KiB).  The round trip keeps Unicorn's
  # translated code across inputs (fuzz_roundtrip.c): no leak check
  # after each input (run.sh does the same; leaks still fail at exit).
  {
    echo "[libfuzzer]"
    echo "max_len = ${maxlen[$h]}"
    echo "timeout = 10"
    echo "rss_limit_mb = 1024"
    echo "malloc_limit_mb = 256"
    if [ "$h" = roundtrip ]; then
      echo "detect_leaks = 0"
    fi
  } >"$OUT/fuzz_$h.options"
  built+=("$h")
done
echo "oss-fuzz-build: ${#built[@]} fuzzers in $OUT: ${built[*]}"
