#!/usr/bin/env bash
# Runs the ClusterFuzzLite / OSS-Fuzz build (.clusterfuzzlite/build.sh ->
# fuzz/oss-fuzz-build.sh) here, outside Docker, with the contract's
# variables set as the base image sets them for libFuzzer + ASan (clang,
# $SRC/tracebench the checkout, $OUT and $WORK temporary), then checks
# what it produced: for every harness of `fuzz/run.sh --list`, the fuzzer,
# its seed corpus zip, its options file and (where run.sh uses one) its
# dictionary, the same bytes as run.sh's; and it runs every fuzzer once
# over its unzipped seed corpus (-runs=0) with the flags of its options
# file and its dictionary.  Fails if anything is missing, a fuzzer or its
# options are refused, an input fails, or a fuzzer checked no input.
#
# Usage: scripts/test-oss-fuzz-build.sh
# TB_OSS_FUZZ_KEEP=DIR keeps the output there (default: a temporary dir,
# removed).  Run by scripts/test.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=${TB_OSS_FUZZ_KEEP:-$(mktemp -d)}
[ -n "${TB_OSS_FUZZ_KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src" "$tmp/out" "$tmp/work" "$tmp/run"
ln -sfn "$root" "$tmp/src/tracebench"
fail=0
bad() {
  echo "test-oss-fuzz-build: FAIL: $*" >&2
  fail=1
  this=1
}

# The contract's variables, as the base image sets them for libFuzzer
# with AddressSanitizer (CFLAGS also goes to the link through CXXFLAGS).
export CC=clang CXX=clang++
export CFLAGS="-O1 -fno-omit-frame-pointer -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
export CXXFLAGS=$CFLAGS
export LIB_FUZZING_ENGINE=-fsanitize=fuzzer
export SRC=$tmp/src OUT=$tmp/out WORK=$tmp/work
start=$(date +%s)
if ! nice -n 10 bash "$root/.clusterfuzzlite/build.sh" >"$tmp/build.log" 2>&1; then
  tail -30 "$tmp/build.log" >&2
  bad "build.sh failed (log above)"
  exit 1
fi
built=$(( $(date +%s) - start ))

# What run.sh fuzzes, from run.sh itself.
names=()
declare -A dict=() maxlen=()
while read -r h d m; do
  names+=("$h")
  dict[$h]=$d
  maxlen[$h]=$m
done < <(bash "$root/fuzz/run.sh" --list)
[ "${#names[@]}" -ge 22 ] || bad "fuzz/run.sh --list names ${#names[@]} harnesses, expected at least 22"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ran=0
for h in "${names[@]}"; do
  this=0
  bin=$OUT/fuzz_$h
  zip=$OUT/fuzz_${h}_seed_corpus.zip
  opt=$OUT/fuzz_$h.options
  for f in "$bin" "$zip" "$opt"; do
    [ -f "$f" ] || bad "$h: $(basename "$f") missing"
  done
  [ -x "$bin" ] || { bad "$h: no fuzzer"; continue; }
  args=()
  if [ "${dict[$h]}" != - ]; then
    if [ ! -f "$OUT/fuzz_$h.dict" ]; then
      bad "$h: fuzz_$h.dict missing (run.sh uses ${dict[$h]})"
    elif ! cmp -s "${dict[$h]}" "$OUT/fuzz_$h.dict"; then
      bad "$h: fuzz_$h.dict is not ${dict[$h]}"
    else
      args+=("-dict=$OUT/fuzz_$h.dict")
    fi
  fi
  [ -f "$opt" ] || continue
  # The options file's [libfuzzer] section, as libFuzzer flags.
  if [ "$(head -1 "$opt")" != "[libfuzzer]" ]; then
    bad "$h: fuzz_$h.options does not start with [libfuzzer]"
    continue
  fi
  while IFS='=' read -r k v; do
    k=${k// /}; v=${v// /}
    [ -n "$k" ] && args+=("-$k=$v")
  done < <(sed -n '2,$p' "$opt")
  grep -qx "max_len = ${maxlen[$h]}" "$opt" ||
    bad "$h: fuzz_$h.options has no max_len = ${maxlen[$h]} (run.sh's)"
  [ -f "$zip" ] || continue
  corpus=$tmp/run/$h
  mkdir -p "$corpus"
  unzip -q -o "$zip" -d "$corpus"
  n=$(find "$corpus" -type f | wc -l)
  [ "$n" -gt 0 ] || { bad "$h: empty seed corpus"; continue; }
  log=$tmp/run/$h.log
  # (-artifact_prefix: a crash input goes to the scratch directory, not
  # to the current one.)
  if ! timeout 300 "$bin" "${args[@]}" -artifact_prefix="$tmp/run/$h-" -runs=0 "$corpus" \
       >"$log" 2>&1; then
    grep -m1 -A12 -E 'ERROR|runtime error|^tb_fuzz: |deadly signal' "$log" | sed 's/^/    /' >&2 || tail -5 "$log" >&2
    bad "$h: the fuzzer failed on its seed corpus ($n inputs; log: $log)"
    continue
  fi
  if grep -q 'WARNING: unrecognized flag\|ParseDictionaryFile: error' "$log"; then
    grep -m2 'unrecognized flag\|ParseDictionaryFile' "$log" >&2
    bad "$h: libFuzzer refused its options or dictionary"
  fi
  checked=$(awk '/^tb_fuzz_stats:/ {print $(NF-1)}' "$log" | tail -1)
  if [ -z "$checked" ] || [ "$checked" -eq 0 ]; then
    bad "$h: checked no input of its $n seeds"
    continue
  fi
  [ "$this" -eq 0 ] || continue
  echo "test-oss-fuzz-build: $h ok: $n seeds, $checked runs checked"
  ran=$((ran + 1))
done
secs=$(( $(date +%s) - start ))
if [ "$fail" -ne 0 ]; then
  echo "test-oss-fuzz-build: FAILED (build ${built}s, all ${secs}s)" >&2
  exit 1
fi
echo "test-oss-fuzz-build: all $ran fuzzers built and ran their seed corpora (build ${built}s, all ${secs}s)"
