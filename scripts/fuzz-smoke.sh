#!/usr/bin/env bash
# CI fuzz smoke (issue 7): every harness under libFuzzer with ASan+UBSan
# for SECONDS each (default 60), two at a time.  Fails if any harness
# finds a crash, a sanitizer report, a hang (> 10 s per input) or runs out
# of memory.  Needs clang; the per-harness logs and crash inputs stay in
# build-fuzz-libfuzzer/work/<harness>/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
harnesses=(etmv3_parser ptm_parser deformatter snapshot etmv3_decoder ptm_decoder etmv1 etmv2 roundtrip gen elfinfo)
parallel=${TB_FUZZ_PARALLEL:-2}

# Build once, so the parallel runs do not race on the build directory.
bash fuzz/run.sh "${harnesses[0]}" 1 libfuzzer >/dev/null 2>&1 || true

fail=0
pids=()
names=()
wait_one() {
  local pid=${pids[0]} name=${names[0]}
  if wait "$pid"; then
    echo "fuzz-smoke: $name ok: $(grep -E 'DONE' "/tmp/fuzz-smoke.$$.$name" | tail -1)"
  else
    echo "fuzz-smoke: $name FAILED"; cat "/tmp/fuzz-smoke.$$.$name"; fail=1
  fi
  rm -f "/tmp/fuzz-smoke.$$.$name"
  pids=("${pids[@]:1}")
  names=("${names[@]:1}")
}
for h in "${harnesses[@]}"; do
  if [ "${#pids[@]}" -ge "$parallel" ]; then wait_one; fi
  bash fuzz/run.sh "$h" "$seconds" libfuzzer >"/tmp/fuzz-smoke.$$.$h" 2>&1 &
  pids+=($!)
  names+=("$h")
done
while [ "${#pids[@]}" -gt 0 ]; do wait_one; done
if [ "$fail" -ne 0 ]; then
  echo "fuzz-smoke: FAILED"
  exit 1
fi
echo "fuzz-smoke: all ${#harnesses[@]} harnesses ran ${seconds}s without findings"
