#!/usr/bin/env bash
# fuzz/run.sh HARNESS SECONDS [libfuzzer|afl]
# fuzz/run.sh --build [libfuzzer|afl] [HARNESS...]
# fuzz/run.sh --list
#
# Builds HARNESS (see `harnesses` below; `plant` is the gate test's
# planted-fault harness, fuzz/fuzz_plant.c) for the engine, makes its seed
# corpus (the project's writer output, the regression inputs, plus the
# real reference traces when ../shared/reference is there: read in place,
# never copied into the repository) and fuzzes for SECONDS.  Work files
# go to build-fuzz-<engine>/work/HARNESS/ (corpus, crashes, log); a
# finding is copied to fuzz/regressions/HARNESS/ only by hand, after it
# is fixed.  --build only builds (every harness, or those named).
# --list prints each harness, its dictionary (path or "-") and its
# -max_len, one a line: fuzz/oss-fuzz-build.sh and its test read the
# list from here.
#
# Prints one line "run.sh: HARNESS ok|FAILED ... inputs=N seconds=S
# exec_s=X corpus=C checked=K" (scripts/fuzz-smoke.sh reads it); on a
# finding, its kind, its first lines and the saved input.
# Exit status: 0 the harness checked inputs and nothing was found;
# 1 a finding (crash, sanitizer report, timeout, out of memory, leak);
# 3 the run executed no input or its harness checked none; 2 usage.
#
# Environment: TB_FUZZ_JOBS (libFuzzer -jobs, default 1), TB_FUZZ_ARGS
# (extra libFuzzer arguments), TB_FUZZ_TIMEOUT (seconds per input,
# default 10), TB_REFERENCE_DIR (reference snapshots), TB_FUZZ_BUILD
# (build directory).
set -euo pipefail

harnesses=(etmv3_parser etmv3_parser_full ptm_parser ptm_parser_full deformatter
           deformatter_full snapshot snapshot_full etmv3_decoder etmv3_decoder_full ptm_decoder
           ptm_decoder_full etmv1 etmv1_full etmv2 etmv2_full roundtrip gen conform elfinfo
           ocsd_etmv3 ocsd_ptm)

usage() {
  echo "usage: run.sh HARNESS SECONDS [libfuzzer|afl]" >&2
  echo "       run.sh --build [libfuzzer|afl] [HARNESS...]" >&2
  echo "       run.sh --list" >&2
  echo "harnesses: ${harnesses[*]} plant" >&2
  exit 2
}

# The dictionary of a harness (empty: none).
dict_of() {
  case $1 in
    etmv3_parser|etmv3_parser_full|etmv3_decoder|etmv3_decoder_full|ocsd_etmv3)
      echo "$here/dict/etmv3.dict" ;;
    ptm_parser|ptm_parser_full|ptm_decoder|ptm_decoder_full|ocsd_ptm) echo "$here/dict/ptm.dict" ;;
    deformatter|deformatter_full|snapshot|snapshot_full) echo "$here/dict/${1%_full}.dict" ;;
    roundtrip|etmv1|etmv1_full|etmv2|etmv2_full|gen|conform|elfinfo|plant) echo "" ;;
    *) echo "run.sh: unknown harness '$1'" >&2; usage ;;
  esac
}

# The longest input a harness is given (-max_len): 8 KiB, but an ELF
# file keeps its section headers at its end, and the seeds are 8-10 KiB
# (fuzz/elf-seeds.sh): cut at 8 KiB each would be refused whole.
max_len_of() {
  case $1 in
    elfinfo) echo 32768 ;;
    *) echo 8192 ;;
  esac
}

# Configures the build for the engine and builds the targets named.
build() {
  local engine=$1; shift
  mkdir -p "$build"
  # Two runs may start at once (two cores, two harnesses): one builds at a time.
  exec 9>"$build/.run-lock"
  flock 9
  case $engine in
    libfuzzer)
      cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER="${CC_FUZZ:-clang}" \
        -DTB_BUILD_FUZZERS=ON -DTB_FUZZ_ENGINE=libfuzzer -DTB_BUILD_VECTORS=OFF \
        -DTB_WERROR=ON >/dev/null
      ;;
    afl)
      export AFL_USE_ASAN=1 AFL_USE_UBSAN=1 AFL_QUIET=1
      cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=afl-clang-fast \
        -DTB_BUILD_FUZZERS=ON -DTB_FUZZ_ENGINE=afl -DTB_BUILD_VECTORS=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTB_WERROR=ON >/dev/null
      ;;
  esac
  cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target "$@" >/dev/null
  flock -u 9
}

# The finding's first lines: from the first report line of a log.
first_lines() {
  grep -n -m1 -E '^==[0-9]+==ERROR|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|^tb_fuzz: |ALARM: working|out-of-memory|deadly signal' "$1" |
    cut -d: -f1 | { read -r n && sed -n "${n},$((n + 14))p" "$1"; } || true
}

# The kind of a finding, from the log, the exit status and the saved
# inputs' names; empty when there is none.
classify() {
  local log=$1 rc=$2 saved=$3
  if grep -q 'ERROR: libFuzzer: timeout\|ALARM: working on the last Unit' "$log" ||
     [[ $saved == *timeout-* ]] || [[ $saved == */hangs/* ]]; then
    echo "timeout (an input ran longer than ${timeout_s}s)"
  elif grep -q 'out-of-memory\|allocation-size-too-big\|RSS limit exceeded\|out of memory' "$log" ||
       [[ $saved == *oom-* ]]; then
    echo "out of memory (malloc limit 256 MB, RSS limit 1024 MB)"
  elif grep -q 'ERROR: LeakSanitizer' "$log" || [[ $saved == *leak-* ]]; then
    echo "memory leak"
  elif grep -q 'ERROR: AddressSanitizer' "$log"; then
    echo "AddressSanitizer report"
  elif grep -q 'runtime error:' "$log"; then
    echo "UndefinedBehaviorSanitizer report"
  elif grep -q '^tb_fuzz: ' "$log"; then
    echo "broken invariant"
  elif [[ $saved == *sig:04* ]]; then
    echo "crash (SIGILL: an UndefinedBehaviorSanitizer trap under AFL++)"
  elif [ "$rc" -ne 0 ] || [ -n "$saved" ] || grep -q 'deadly signal\|ERROR: libFuzzer' "$log"; then
    echo "crash (exit status $rc)"
  fi
}

main() {
  here=$(cd "$(dirname "$0")" && pwd)
  root=$(dirname "$here")
  [ $# -ge 1 ] || usage
  if [ "$1" = --list ]; then
    local h d
    for h in "${harnesses[@]}"; do
      d=$(dict_of "$h")
      echo "$h ${d:--} $(max_len_of "$h")"
    done
    return 0
  fi
  if [ "$1" = --build ]; then
    local engine=${2:-libfuzzer} targets=() h
    [ "$engine" = libfuzzer ] || [ "$engine" = afl ] || usage
    build=${TB_FUZZ_BUILD:-$root/build-fuzz-$engine}
    shift $(( $# >= 2 ? 2 : 1 ))
    [ $# -gt 0 ] || set -- "${harnesses[@]}"
    for h in "$@"; do
      dict_of "$h" >/dev/null
      targets+=("fuzz_$h")
    done
    # seedgen needs the library; the plant harness alone does not.
    [ "${targets[*]}" = fuzz_plant ] || targets+=(tb_fuzz_seedgen)
    build "$engine" "${targets[@]}"
    return 0
  fi
  harness=$1
  seconds=${2:-}
  engine=${3:-libfuzzer}
  [[ $seconds =~ ^[0-9]+$ ]] || usage
  [ "$engine" = libfuzzer ] || [ "$engine" = afl ] || usage
  dict=$(dict_of "$harness")
  timeout_s=${TB_FUZZ_TIMEOUT:-10}
  build=${TB_FUZZ_BUILD:-$root/build-fuzz-$engine}
  if [ "$harness" = plant ]; then
    build "$engine" fuzz_plant
  else
    build "$engine" "fuzz_$harness" tb_fuzz_seedgen
  fi

  work=$build/work/$harness
  mkdir -p "$work/seeds" "$work/corpus" "$work/crashes"
  if [ "$harness" = plant ]; then
    printf seed >"$work/seeds/seed"
  else
    refdir=${TB_REFERENCE_DIR:-$root/../shared/reference}
    snaps=()
    if [ -d "$refdir/opencsd-snapshots" ]; then
      for d in "$refdir"/opencsd-snapshots/*/; do
        [ -f "$d/snapshot.ini" ] && snaps+=("$d")
      done
    fi
    if [ "$harness" = elfinfo ]; then
      sh "$here/elf-seeds.sh" "$work/seeds" >/dev/null
    else
      "$build/fuzz/tb_fuzz_seedgen" "$harness" "$work/seeds" ${snaps[@]+"${snaps[@]}"}
    fi
    # Regression inputs are seeds too: whatever broke once is a good start
    # (a full harness reads its fast one's inputs: both folders).
    for r in "$here/regressions/$harness" "$here/regressions/${harness%_full}"; do
      if [ -d "$r" ]; then
        cp "$r"/* "$work/seeds/"
      fi
    done
  fi

  bin=$build/fuzz/fuzz_$harness
  log=$work/fuzz-$engine.log
  local rc kind="" saved=() inputs=0 secs=0 corpus=0 checked="" execs=""
  local start
  start=$(date +%s)
  if [ "$engine" = libfuzzer ]; then
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    # -timeout: bounded work per input (a hang is a finding);
    # -rss_limit_mb / -malloc_limit_mb: bounded memory.
    local jobs_args=() dict_args=() extra=() before
    if [ "${TB_FUZZ_JOBS:-1}" -gt 1 ]; then
      jobs_args=(-jobs="$TB_FUZZ_JOBS" -workers="$TB_FUZZ_JOBS")
    fi
    [ -n "$dict" ] && dict_args=(-dict="$dict")
    # The round trip's simulator keeps Unicorn's records of translated
    # code across inputs (fuzz_roundtrip.c): a leak check after each
    # input would scan the heap every time.  Leaks still fail the run at
    # its exit (LeakSanitizer), and the same library code is leak-checked
    # input by input in the other harnesses.
    [ "$harness" = roundtrip ] && dict_args+=(-detect_leaks=0)
    read -r -a extra <<<"${TB_FUZZ_ARGS:-}"
    before=$(ls "$work/crashes")
    rm -f "$work"/fuzz-*.log
    set +e
    # The log is written whole and the run's own status read (no pipe),
    # the shell's "Aborted" notice silenced.  -jobs writes its workers'
    # fuzz-N.log to the current directory.
    cd "$work"
    "$bin" "$work/corpus" "$work/seeds" ${dict_args[@]+"${dict_args[@]}"} \
      -max_total_time="$seconds" -timeout="$timeout_s" -rss_limit_mb=1024 \
      -malloc_limit_mb=256 -max_len="$(max_len_of "$harness")" -print_final_stats=1 \
      -artifact_prefix="$work/crashes/" ${jobs_args[@]+"${jobs_args[@]}"} \
      ${extra[@]+"${extra[@]}"} >"$log" 2>&1 &
    { wait $!; rc=$?; } 2>/dev/null
    cd "$root"
    set -e
    # Per process (the run's, or with -jobs each worker's fuzz-N.log):
    # the last count (libFuzzer prints its statistics again when a
    # sanitizer stops it).
    local logs=("$log") f
    for f in "$work"/fuzz-[0-9]*.log; do
      [ -f "$f" ] && logs+=("$f")
    done
    inputs=0
    execs=0
    checked=""
    for f in "${logs[@]}"; do
      inputs=$(( inputs + $(awk '/^stat::number_of_executed_units/ {n=$2} END {print n+0}' "$f") ))
      execs=$(( execs + $(awk '/^stat::average_exec_per_sec/ {n=$2} END {print n+0}' "$f") ))
      # (a crash leaves no tb_fuzz_stats line: checked stays empty.)
      if grep -q '^tb_fuzz_stats:' "$f"; then
        checked=$(( ${checked:-0} + $(awk '/^tb_fuzz_stats:/ {n=$(NF-1)} END {print n}' "$f") ))
      fi
    done
    [ "$execs" -gt 0 ] || execs=""
    for f in "${logs[@]:1}"; do
      cat "$f" >>"$log" && rm -f "$f"
    done
    grep -E 'INITED|DONE' "$log" | tail -2 || true
    # The inputs this run saved (crash-, leak-, timeout-, oom-): named in
    # the log (an input found before keeps its name), or new in crashes/;
    # a slow-unit- (slower than -report_slow_units) is no finding.
    while read -r f; do
      [ -n "$f" ] && saved+=("$f")
    done < <({ sed -nE 's/.*Test unit written to (.*)$/\1/p' "$log"
               comm -13 <(printf '%s\n' "$before" | sort) <(ls "$work/crashes" | sort) |
                 sed "s|^|$work/crashes/|"; } | grep -v '/slow-unit-' | sort -u)
    corpus=$(awk '/ corp: [0-9]+/ {sub(/.* corp: /, ""); c=$0+0} END {print c+0}' "$log")
    kind=$(classify "$log" "$rc" "${saved[*]:-}")
  else
    # AFL++ insists on abort_on_error=1 and symbolize=0; allocations
    # bounded as libFuzzer's -malloc_limit_mb / -rss_limit_mb.
    export ASAN_OPTIONS=abort_on_error=1:symbolize=0:detect_leaks=0:allocator_may_return_null=0:max_allocation_size_mb=256:hard_rss_limit_mb=1024:malloc_context_size=0:handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0
    export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:symbolize=0
    export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
      AFL_NO_UI=1 AFL_NO_AFFINITY=1 AFL_BENCH_UNTIL_CRASH=1
    rm -rf "$work/afl-out"
    local afl_dict=() stats crash hang
    [ -n "$dict" ] && afl_dict=(-x "$dict")
    set +e
    afl-fuzz -i "$work/seeds" -o "$work/afl-out" ${afl_dict[@]+"${afl_dict[@]}"} \
      -V "$seconds" -t "$((timeout_s * 1000))" -m none -- "$bin" >"$log" 2>&1
    rc=$?
    set -e
    stats=$(ls "$work"/afl-out/*/fuzzer_stats 2>/dev/null | head -1 || true)
    if [ -n "$stats" ]; then
      inputs=$(awk -F: '/^execs_done/ {print $2+0}' "$stats")
      corpus=$(awk -F: '/^corpus_count/ {print $2+0}' "$stats")
    fi
    crash=$(find "$work/afl-out" -path '*crashes/id:*' 2>/dev/null | sort | head -1)
    hang=$(find "$work/afl-out" -path '*hangs/id:*' 2>/dev/null | sort | head -1)
    if [ -n "$crash" ] || [ -n "$hang" ]; then
      saved+=(${crash:+"$crash"} ${hang:+"$hang"})
      if [ -n "$crash" ]; then
        # Its report: the input replayed (the driver takes file names).
        ASAN_OPTIONS=abort_on_error=1:symbolize=1:detect_leaks=0:max_allocation_size_mb=256:allocator_may_return_null=0 \
          timeout "$((timeout_s + 5))" "$bin" "$crash" >"$work/replay.log" 2>&1 &
        { wait $! || true; } 2>/dev/null
        cat "$work/replay.log" >>"$log"
      fi
      kind=$(classify "$log" 1 "${saved[0]}")
    elif [ "$rc" -ne 0 ]; then
      kind="afl-fuzz failed (exit status $rc)"
    else
      # What the harness checked: AFL++'s queue replayed.
      local q=("$work"/afl-out/*/queue/id:*)
      if [ -e "${q[0]}" ]; then
        timeout 300 "$bin" "${q[@]}" >"$work/replay.log" 2>&1 || true
        checked=$(awk '/^tb_fuzz_stats:/ {print $(NF-1)}' "$work/replay.log")
      fi
    fi
  fi
  secs=$(( $(date +%s) - start ))
  [ "$secs" -gt 0 ] || secs=1
  [ -n "$execs" ] || execs=$(( ${inputs:-0} / secs ))
  local result="ok" status=0
  if [ -n "$kind" ]; then
    result="FAILED"
    status=1
  elif [ "${inputs:-0}" -eq 0 ]; then
    result="FAILED"
    kind="ran no input"
    status=3
  elif [ -z "$checked" ] || [ "$checked" -eq 0 ]; then
    result="FAILED"
    kind="checked no input (the harness skipped all ${inputs} it was given)"
    status=3
  fi
  echo "run.sh: $harness $result ($engine) inputs=${inputs:-0} seconds=$secs" \
       "exec_s=$execs corpus=${corpus:-0} checked=${checked:-?}"
  if [ "$status" -ne 0 ]; then
    {
      echo "run.sh: $harness: $kind"
      if [ "$status" -eq 1 ]; then
        first_lines "$log" | sed 's/^/    /'
        if [ "${#saved[@]}" -gt 0 ]; then
          printf 'run.sh: saved input: %s\n' "${saved[@]}"
        else
          echo "run.sh: no input was saved"
        fi
      fi
      echo "run.sh: the whole log: $log"
    } >&2
  fi
  return "$status"
}
main "$@"
exit $?
