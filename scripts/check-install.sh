#!/usr/bin/env bash
# Installs a build into a fresh temporary prefix and uses it the way a
# user of the library would, from outside the source tree:
#   - the files `cmake --install` must put in place, `tracebench --version`
#     against the project version, the man page (groff lint);
#   - examples/count_insns.c built with `pkg-config --cflags --libs
#     tracebench` by gcc and by clang, against the shared and the static
#     library, and through the CMake package (find_package(tracebench));
#   - each binary run on a committed vector (count and first addresses
#     equal to its decode.addr) and on the TC2 snapshot's source 0x10
#     (7205 instructions, DS-5's count; first addresses equal to the
#     installed `tracebench decode --format addr`).  Without the
#     reference traces ($TB_REFERENCE_DIR, default ../shared/reference)
#     that part prints SKIPPED, and fails under CI=true.
# usage: scripts/check-install.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${1:-build}
ref=${TB_REFERENCE_DIR:-$root/../shared/reference}
vector=$root/vectors/generated/arm_basic-ptm-raw
tc2=$ref/opencsd-snapshots/TC2
first=16

# (No `cmd | grep -q` or `cmd | head` below: the early exit would fail cmd
# under pipefail.)
skipped=0
fail() { echo "check-install: FAIL: $*" >&2; exit 1; }
skip() {
  echo "check-install: *** SKIPPED *** $*" >&2
  skipped=$((skipped + 1))
  [ "${CI:-}" != true ] || fail "(CI=true: a skipped check is a failure) $*"
}

[ -f "$build/CMakeCache.txt" ] || fail "$build: not a configured build directory"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tb-check-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

echo "=== check-install: cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
pc=$(find "$prefix" -name tracebench.pc -path '*/pkgconfig/*' -print -quit)
[ -n "$pc" ] || fail "no tracebench.pc installed"
libdir=$(dirname "$(dirname "$pc")")
for f in "$prefix/bin/tracebench" "$prefix/include/tracebench/decoder.h" \
         "$prefix/include/tracebench/types.h" "$prefix/include/tracebench/version.h" \
         "$prefix/include/tracebench/export.h" \
         "$prefix/share/man/man1/tracebench.1" "$libdir/libtracebench.a" \
         "$libdir/libtracebench.so" "$libdir/cmake/tracebench/tracebenchConfig.cmake" \
         "$libdir/cmake/tracebench/tracebenchConfigVersion.cmake"; do
  [ -e "$f" ] || fail "not installed: ${f#"$prefix"/}"
done
for h in sim.h roundtrip.h; do
  [ ! -e "$prefix/include/tracebench/$h" ] || fail "$h installed without its library"
done
# The static archive holds native code (not LTO bytecode alone): plain nm,
# without the LTO plugin, sees the API.
grep -q ' T tb_decode_snapshot_insns$' <<<"$(nm --defined-only "$libdir/libtracebench.a" 2>/dev/null)" ||
  fail "libtracebench.a: no native tb_decode_snapshot_insns (LTO bytecode only?)"
# The installed shared library exports exactly what the installed headers
# declare (ctest `exports` checks the build tree; this, what users get).
ls "$prefix"/include/tracebench/*.h > "$tmp/headers.txt"
sh scripts/check-exports.sh "$libdir/libtracebench.so" nm "${CC:-cc}" "$tmp/headers.txt" \
  -I"$prefix/include" || fail "the installed libtracebench.so exports other than its headers declare"

version=$(sed -n 's/^project(tracebench VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[ -n "$version" ] || fail "no project version in CMakeLists.txt"
got=$("$prefix/bin/tracebench" --version) || fail "tracebench --version: exit $?"
[ "$got" = "tracebench $version" ] || fail "tracebench --version: '$got', want 'tracebench $version'"
got=$("$prefix/bin/tracebench" version)
[ "$got" = "tracebench $version" ] || fail "tracebench version: '$got'"
grep -q "^\.TH TRACEBENCH 1 .*\"tracebench $version\"" "$prefix/share/man/man1/tracebench.1" ||
  fail "tracebench.1: .TH does not name version $version"
if command -v groff >/dev/null; then
  lint=$(groff -man -ww -z -Tutf8 "$prefix/share/man/man1/tracebench.1" 2>&1)
  [ -z "$lint" ] || fail "tracebench.1: groff warnings: $lint"
else
  skip "groff not installed: man page not linted"
fi
# The documentation: README, the docs the installed headers cite (a
# citation docs/NAME.md resolves in share/doc/tracebench/), the examples.
doc=$prefix/share/doc/tracebench
for f in "$doc/README.md" "$doc/examples/count_insns.c" "$doc/examples/CMakeLists.txt"; do
  [ -e "$f" ] || fail "not installed: ${f#"$prefix"/}"
done
for h in "$prefix"/include/tracebench/*.h; do
  for cited in $(grep -ohE 'docs/[A-Za-z0-9_.-]+\.md' "$h" | sort -u); do
    [ -e "$doc/$cited" ] || fail "$(basename "$h") cites $cited, not installed as $doc/$cited"
  done
  ! grep -nE '[a-z_0-9]+/[a-z_0-9]+\.c([^a-z_0-9]|$)|protocol-notes|shared/docs' "$h" ||
    fail "$(basename "$h") cites a file that is not installed (above)"
done
echo "check-install: $("$prefix/bin/tracebench" --version), files in place"

# pkg-config, from the installed .pc alone.
export PKG_CONFIG_PATH=$libdir/pkgconfig
[ "$(pkg-config --modversion tracebench)" = "$version" ] || fail "pkg-config --modversion"
cflags=$(pkg-config --cflags tracebench)
libs=$(pkg-config --libs tracebench)
# Static: the archive by name, then what pkg-config --static adds.
slibs=$(pkg-config --static --libs tracebench | sed 's/-ltracebench\b/-l:libtracebench.a/')
bins=()
for cc in gcc clang; do
  if ! command -v "$cc" >/dev/null; then
    skip "$cc not installed"
    continue
  fi
  # shellcheck disable=SC2086  # pkg-config output is a word list
  "$cc" -std=c11 -Wall -Wextra -Werror -o "$tmp/count_insns-$cc-shared" \
    examples/count_insns.c $cflags $libs -Wl,-rpath,"$libdir" ||
    fail "$cc: build against the shared library"
  # shellcheck disable=SC2086
  "$cc" -std=c11 -Wall -Wextra -Werror -o "$tmp/count_insns-$cc-static" \
    examples/count_insns.c $cflags $slibs || fail "$cc: build against the static library"
  grep -q 'NEEDED.*libtracebench\.so' <<<"$(readelf -d "$tmp/count_insns-$cc-shared")" ||
    fail "$cc shared build does not use libtracebench.so"
  ! grep -q 'NEEDED.*libtracebench' <<<"$(readelf -d "$tmp/count_insns-$cc-static")" ||
    fail "$cc static build uses libtracebench.so"
  bins+=("$cc-shared" "$cc-static")
done
# The README's step for a prefix the loader does not search: built
# without an rpath, the program finds libtracebench.so only through
# LD_LIBRARY_PATH (and fails to start without it, which is why the README
# says so).
if command -v gcc >/dev/null; then
  # shellcheck disable=SC2086
  gcc -std=c11 -o "$tmp/count_insns-norpath" examples/count_insns.c $cflags $libs ||
    fail "gcc: build without an rpath"
  ! (cd "$tmp" && env -u LD_LIBRARY_PATH ./count_insns-norpath "$vector" -1 1 >/dev/null 2>&1) ||
    fail "a build without an rpath ran without LD_LIBRARY_PATH: the README's step is moot"
  (cd "$tmp" && LD_LIBRARY_PATH=$libdir ./count_insns-norpath "$vector" -1 1 >/dev/null) ||
    fail "LD_LIBRARY_PATH=$libdir (README, Install) does not let it start"
  echo "check-install: a build without an rpath runs with LD_LIBRARY_PATH=\$prefix/lib, as the README says"
fi
# The CMake package: imported targets tracebench::tracebench(_static),
# building the examples as installed (share/doc/tracebench/examples).
cmake -S "$doc/examples" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >/dev/null || fail "find_package(tracebench)"
cmake --build "$tmp/cmake-build" >/dev/null || fail "examples/CMakeLists.txt build"
cp "$tmp/cmake-build/count_insns" "$tmp/count_insns-cmake-shared"
cp "$tmp/cmake-build/count_insns_static" "$tmp/count_insns-cmake-static"
bins+=(cmake-shared cmake-static)

# run DIR ID COUNT EXPECTED_FIRST_FILE: every binary prints COUNT and the
# same first addresses.
run() {
  local dir=$1 id=$2 count=$3 want=$4 b out
  for b in "${bins[@]}"; do
    out=$(cd "$tmp" && "./count_insns-$b" "$dir" "$id" "$first") ||
      fail "count_insns-$b $dir $id: exit $?"
    [ "$(head -n 1 <<<"$out")" = "instructions $count" ] ||
      fail "count_insns-$b $dir $id: '$(head -n 1 <<<"$out")', want 'instructions $count'"
    diff <(tail -n +2 <<<"$out") "$want" >/dev/null ||
      fail "count_insns-$b $dir $id: first addresses differ from $(basename "$want")"
  done
  echo "check-install: ${bins[*]}: $(basename "$dir") $id: $count instructions, first $first addresses agree"
}

# Instruction lines of an addr listing: "ADDRESS ISA E|N".
insns() { grep -E '^0x[0-9A-F]{8} [A-Za-z0-9]+ [EN]$' "$1" | cut -d' ' -f1,2; }
insns "$vector/decode.addr" >"$tmp/vector.insns"
sed -n "1,${first}p" "$tmp/vector.insns" >"$tmp/vector.first"
run "$vector" -1 "$(wc -l <"$tmp/vector.insns")" "$tmp/vector.first"

if [ -d "$tc2" ]; then
  "$prefix/bin/tracebench" decode "$tc2" --id 0x10 --format addr >"$tmp/tc2.addr" ||
    fail "installed tracebench decode $tc2 --id 0x10"
  insns "$tmp/tc2.addr" >"$tmp/tc2.insns"
  n=$(wc -l <"$tmp/tc2.insns")
  [ "$n" -eq 7205 ] || fail "installed tracebench decode: $n instructions for TC2 0x10, DS-5 has 7205"
  sed -n "1,${first}p" "$tmp/tc2.insns" >"$tmp/tc2.first"
  run "$tc2" 0x10 7205 "$tmp/tc2.first"
else
  skip "no reference traces at $tc2 (set TB_REFERENCE_DIR): TC2 0x10 not checked"
fi

# The program of one's own, as installed: its build.sh finds the runtime
# beside it (examples/program/runtime), and the installed tracebench runs
# it with its scenario.
if command -v arm-none-eabi-gcc >/dev/null; then
  "$doc/examples/program/build.sh" "$tmp/irq_counter.elf" ||
    fail "installed examples/program/build.sh"
  "$prefix/bin/tracebench" roundtrip "$tmp/irq_counter.elf" --scenario \
    "$doc/examples/program/irq_counter.ini" --strict --quiet >/dev/null ||
    fail "installed tracebench roundtrip irq_counter.elf: exit $?"
  echo "check-install: examples/program built and round-tripped from share/doc/tracebench"
else
  skip "arm-none-eabi-gcc not installed: examples/program not built"
fi

# The vectors travel with the install: the installed `conform` finds them
# in share/tracebench/vectors (run from outside the tree), and the
# installed decoder passes them; a decoder that drops every instruction
# after the tenth fails (the kit can fail from there too).
[ -e "$prefix/share/tracebench/vectors/README.md" ] ||
  fail "not installed: share/tracebench/vectors/README.md"
(cd "$tmp" && "$prefix/bin/tracebench" conform --only arm_basic \
   --decoder "'$prefix/bin/tracebench' decode {dir} --id {id} --format addr" \
   >"$tmp/conform.out" 2>&1) || fail "installed conform over installed vectors: exit $?: $(tail -5 "$tmp/conform.out")"
grep -q PASS "$tmp/conform.out" || fail "installed conform: no PASS: $(tail -5 "$tmp/conform.out")"
rc=0
(cd "$tmp" && "$prefix/bin/tracebench" conform --only arm_basic \
   --decoder "'$prefix/bin/tracebench' decode {dir} --id {id} --format addr | head -10" \
   >"$tmp/conform.out" 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "installed conform passed a decoder that stops after 10 lines (exit $rc)"
echo "check-install: conform found the installed vectors; a truncating decoder fails"

# DESTDIR staging: the files go under DESTDIR, the paths inside name the prefix.
DESTDIR=$tmp/stage cmake --install "$build" --prefix /opt/tb >/dev/null
grep -qx 'prefix=/opt/tb' "$tmp/stage/opt/tb/${libdir#"$prefix"/}/pkgconfig/tracebench.pc" ||
  fail "DESTDIR install: tracebench.pc does not name prefix /opt/tb"
if [ "$skipped" -gt 0 ]; then
  echo "=== check-install: passed, *** $skipped check(s) SKIPPED *** (see above)"
else
  echo "=== check-install: passed"
fi
