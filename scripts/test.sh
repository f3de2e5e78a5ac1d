#!/usr/bin/env bash
# The whole test suite: installs missing dependencies, then builds and runs
# every ctest twice, once plain (warnings as errors) and once under
# AddressSanitizer + UndefinedBehaviorSanitizer, then the fuzz gate's own
# test (scripts/test-fuzz-gate.sh) and the fuzz smoke run.
# Fails on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

# Generated programs in the round-trip matrix (docs/gen.md): their seed set,
# TB_GEN_SEEDS (default 300; 0: none) and, under the sanitizers,
# TB_GEN_SEEDS_ASAN (default 60).
gen=()
[ -n "${TB_GEN_SEEDS:-}" ] && gen+=("-DTB_GEN_SEEDS=$TB_GEN_SEEDS")
[ -n "${TB_GEN_SEEDS_ASAN:-}" ] && gen+=("-DTB_GEN_SEEDS_ASAN=$TB_GEN_SEEDS_ASAN")

run_config() {
  local dir=$1 skip=$2; shift 2
  echo "=== configure $dir ($*)"
  cmake -S . -B "$dir" -DTB_WERROR=ON ${gen[@]+"${gen[@]}"} "$@" >/dev/null
  echo "=== build $dir"
  cmake --build "$dir" -j "$jobs"
  echo "=== test $dir"
  (cd "$dir" && ctest --output-on-failure -j "$jobs" ${skip:+-E "$skip"})
}

# The plain build's `make roundtrip` below runs the generated programs
# (with the table), so its ctest leaves roundtrip_gen to it.
run_config build '^roundtrip_gen$' -DCMAKE_BUILD_TYPE=RelWithDebInfo
bash scripts/check-install.sh build   # install into a temp prefix; gcc+clang, shared+static, pkg-config+CMake
echo "=== make roundtrip (the round-trip matrix and generated programs, with its summary table)"
cmake --build build --target roundtrip
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_config build-asan '' -DCMAKE_BUILD_TYPE=Debug -DTB_SANITIZE=ON
echo "=== fuzz gate (planted crash, sanitizer reports, leak, OOM, timeout, nothing checked: run.sh and the smoke fail)"
bash scripts/test-fuzz-gate.sh
echo "=== fuzz smoke (every harness 30 s under libFuzzer + ASan + UBSan)"
bash scripts/fuzz-smoke.sh "${TB_FUZZ_SECONDS:-30}"
echo "=== all tests passed (plain, ASan+UBSan, fuzz gate, fuzz smoke)"
