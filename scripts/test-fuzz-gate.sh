#!/usr/bin/env bash
# The fuzz gate can fail (issue 28).  The planted-fault harness
# (fuzz/fuzz_plant.c) fails, by TB_FUZZ_PLANT, in each way a fuzzer can
# find something: fuzz/run.sh under libFuzzer and under AFL++, and
# scripts/fuzz-smoke.sh, must each go red with the right kind, the
# finding's first lines and its saved input; a planted "skip" (the harness
# checks nothing) must fail too; unplanted, each must pass.  Run by
# scripts/test.sh; needs clang and afl++ (scripts/deps.sh).  Builds only
# the small plant harness (in the libFuzzer build the smoke uses, and in
# the AFL++ one), so it costs little CI time.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
failures=0
start=$(date +%s)
export TB_FUZZ_TIMEOUT=2

fail() {
  echo "test-fuzz-gate: FAIL: $*"
  failures=$((failures + 1))
}

# check WHAT EXPECT_RC EXPECT_TEXT NEED_SAVED -- command...
# The command's status must be EXPECT_RC, its output must hold
# EXPECT_TEXT, and with NEED_SAVED a "saved input:" file that exists.
check() {
  local what=$1 want=$2 text=$3 saved=$4 out rc=0 path
  shift 5
  out=$("$@" 2>&1) || rc=$?
  if [ "$rc" -ne "$want" ]; then
    fail "$what: exit status $rc, expected $want"; printf '%s\n' "$out" | tail -20 | sed 's/^/    /'
    return
  fi
  if [ -n "$text" ] && ! grep -qF -- "$text" <<<"$out"; then
    fail "$what: no '$text' in its output"; printf '%s\n' "$out" | tail -20 | sed 's/^/    /'
    return
  fi
  if [ "$saved" = saved ]; then
    path=$(sed -nE 's/.*saved input: (.*)$/\1/p' <<<"$out" | head -1)
    if [ -z "$path" ] || [ ! -s "$path" ]; then
      fail "$what: no saved input named (or the file '$path' is missing)"
      return
    fi
  fi
  echo "test-fuzz-gate: ok: $what (exit $rc)"
}

# A fresh work directory per case: an earlier case's corpus would carry
# inputs that trip the next plant already while loading.
clean() { rm -rf "$root/build-fuzz-$1/work/plant"; }

for engine in libfuzzer afl; do
  clean "$engine"
  check "run.sh $engine, nothing planted" 0 "plant ok" - -- \
    env TB_FUZZ_PLANT= bash fuzz/run.sh plant 3 "$engine"
  # kind|the text of its verdict
  kinds=("crash|broken invariant" "asan|AddressSanitizer report" "oom|out of memory"
         "timeout|timeout (an input ran longer")
  if [ "$engine" = libfuzzer ]; then
    kinds+=("ubsan|UndefinedBehaviorSanitizer report" "leak|memory leak")
  else
    # AFL++: UBSan traps (SIGILL); leaks are not checked in persistent mode.
    kinds+=("ubsan|SIGILL: an UndefinedBehaviorSanitizer trap")
  fi
  for kt in "${kinds[@]}"; do
    clean "$engine"
    check "run.sh $engine, planted ${kt%%|*}" 1 "${kt#*|}" saved -- \
      env TB_FUZZ_PLANT="${kt%%|*}" bash fuzz/run.sh plant 4 "$engine"
  done
  clean "$engine"
  check "run.sh $engine, planted skip" 3 "checked no input" - -- \
    env TB_FUZZ_PLANT=skip bash fuzz/run.sh plant 2 "$engine"
done

export TB_FUZZ_HARNESSES=plant
clean libfuzzer
check "fuzz-smoke.sh, nothing planted" 0 "plant ok" - -- \
  env TB_FUZZ_PLANT= bash scripts/fuzz-smoke.sh 2
for kt in "crash|broken invariant" "oom|out of memory" "timeout|timeout (an input"; do
  clean libfuzzer
  check "fuzz-smoke.sh, planted ${kt%%|*}" 1 "${kt#*|}" saved -- \
    env TB_FUZZ_PLANT="${kt%%|*}" bash scripts/fuzz-smoke.sh 4
done
clean libfuzzer
check "fuzz-smoke.sh, planted skip" 1 "checked no input" - -- \
  env TB_FUZZ_PLANT=skip bash scripts/fuzz-smoke.sh 2
clean libfuzzer
clean afl

echo "test-fuzz-gate: $((failures)) failures, $(( $(date +%s) - start )) s"
[ "$failures" -eq 0 ]
