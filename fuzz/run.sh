#!/usr/bin/env bash
# fuzz/run.sh HARNESS SECONDS [libfuzzer|afl]
#
# Builds HARNESS (etmv3_parser ptm_parser deformatter snapshot
# etmv3_decoder ptm_decoder etmv1 etmv2 roundtrip gen elfinfo) for the engine, makes its seed corpus (the
# project's writer output, plus the real reference traces when
# ../shared/reference is there: read in place, never copied into the
# repository) and fuzzes for SECONDS.  Work files go to
# build-fuzz-<engine>/work/HARNESS/ (corpus, crashes, log); a crash is
# copied to fuzz/regressions/HARNESS/ only by hand, after it is fixed.
#
# Environment: TB_FUZZ_JOBS (libFuzzer -jobs, default 1), TB_FUZZ_ARGS
# (extra libFuzzer arguments), TB_REFERENCE_DIR (reference snapshots).
set -euo pipefail
# All in a function, so editing this file while it runs is harmless.
main() {
  here=$(cd "$(dirname "$0")" && pwd)
  root=$(dirname "$here")
  harness=${1:?usage: run.sh HARNESS SECONDS [libfuzzer|afl]}
  seconds=${2:?usage: run.sh HARNESS SECONDS [libfuzzer|afl]}
  engine=${3:-libfuzzer}

  case $harness in
    etmv3_parser|etmv3_decoder) dict=$here/dict/etmv3.dict ;;
    ptm_parser|ptm_decoder) dict=$here/dict/ptm.dict ;;
    deformatter|snapshot) dict=$here/dict/$harness.dict ;;
    roundtrip|etmv1|etmv2|gen|elfinfo) dict= ;;
    *) echo "run.sh: unknown harness '$harness'" >&2; exit 2 ;;
  esac

  build=${TB_FUZZ_BUILD:-$root/build-fuzz-$engine}
  mkdir -p "$build"
  # Two runs may start at once (two cores, two harnesses): one builds at a time.
  exec 9>"$build/.run-lock"
  flock 9
  case $engine in
    libfuzzer)
      cc=${CC_FUZZ:-clang}
      cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER="$cc" -DTB_BUILD_FUZZERS=ON \
        -DTB_FUZZ_ENGINE=libfuzzer -DTB_BUILD_VECTORS=OFF -DTB_WERROR=ON >/dev/null
      ;;
    afl)
      export AFL_USE_ASAN=1 AFL_USE_UBSAN=1
      cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=afl-clang-fast \
        -DTB_BUILD_FUZZERS=ON -DTB_FUZZ_ENGINE=afl -DTB_BUILD_VECTORS=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTB_WERROR=ON >/dev/null
      ;;
    *) echo "run.sh: engine must be libfuzzer or afl" >&2; exit 2 ;;
  esac
  cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" \
    --target "fuzz_$harness" tb_fuzz_seedgen >/dev/null
  flock -u 9

  work=$build/work/$harness
  mkdir -p "$work/seeds" "$work/corpus" "$work/crashes"
  refdir=${TB_REFERENCE_DIR:-$root/../shared/reference}
  snaps=()
  if [ -d "$refdir/opencsd-snapshots" ]; then
    for d in "$refdir"/opencsd-snapshots/*/; do
      [ -f "$d/snapshot.ini" ] && snaps+=("$d")
    done
  fi
  if [ "$harness" = elfinfo ]; then
    # Seeds: the vector programs' ELFs (built with -g), where a build has them.
    cp -n "$root"/build*/vectors/programs/*.elf "$work/seeds/" 2>/dev/null || true
  else
    "$build/fuzz/tb_fuzz_seedgen" "$harness" "$work/seeds" "${snaps[@]}"
  fi
  # Regression inputs are seeds too: whatever broke once is a good start.
  if [ -d "$here/regressions/$harness" ]; then
    cp -n "$here/regressions/$harness"/* "$work/seeds/" 2>/dev/null || true
  fi

  bin=$build/fuzz/fuzz_$harness
  log=$work/fuzz-$engine.log
  if [ "$engine" = libfuzzer ]; then
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    # -timeout: bounded work per input (a hang is a finding);
    # -rss_limit_mb / -malloc_limit_mb: bounded memory.
    jobs_args=()
    if [ "${TB_FUZZ_JOBS:-1}" -gt 1 ]; then
      jobs_args=(-jobs="$TB_FUZZ_JOBS" -workers="$TB_FUZZ_JOBS")
    fi
    set +e
    dict_args=()
    [ -n "$dict" ] && dict_args=(-dict="$dict")
    "$bin" "$work/corpus" "$work/seeds" ${dict_args[@]+"${dict_args[@]}"} \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 \
      -malloc_limit_mb=256 -max_len=8192 -print_final_stats=1 \
      -artifact_prefix="$work/crashes/" ${jobs_args[@]+"${jobs_args[@]}"} \
      ${TB_FUZZ_ARGS:-} 2>&1 | tee "$log" |
      grep -E --line-buffered 'DONE|INITED|NEW_FUNC|ERROR|SUMMARY|tb_fuzz:|stat::|Test unit' || true
    rc=${PIPESTATUS[0]}
    set -e
  else
    export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
      AFL_NO_UI=1 AFL_NO_AFFINITY=1
    rm -rf "$work/afl-out"
    set +e
    afl_dict=()
    [ -n "$dict" ] && afl_dict=(-x "$dict")
    afl-fuzz -i "$work/seeds" -o "$work/afl-out" ${afl_dict[@]+"${afl_dict[@]}"} -V "$seconds" \
      -t 10000 -m none -- "$bin" >"$log" 2>&1
    rc=$?
    set -e
    stats=$(ls "$work"/afl-out/*/fuzzer_stats 2>/dev/null | head -1)
    [ -n "$stats" ] && grep -E 'execs_done|execs_per_sec|corpus_count|saved_crashes|saved_hangs|bitmap_cvg|run_time' "$stats"
    crashes=$(find "$work/afl-out" -path '*crashes/id:*' 2>/dev/null | wc -l)
    hangs=$(find "$work/afl-out" -path '*hangs/id:*' 2>/dev/null | wc -l)
    echo "afl: $crashes crashes, $hangs hangs (log $log)"
    if [ "$crashes" -gt 0 ] || [ "$hangs" -gt 0 ]; then rc=1; fi
  fi
  if [ "$rc" -ne 0 ]; then
    echo "run.sh: $harness found a problem: see $log and $work/crashes/" >&2
  fi
  return "$rc"
}
main "$@"
exit $?
