#!/usr/bin/env bash
# CI fuzz smoke (issues 7, 28): every harness (each fast one, its _full
# one, the round trip, the generator, the conformance kit's readers, the
# ELF reader, the two differential harnesses against OpenCSD: 22) under
# libFuzzer with ASan+UBSan for SECONDS each (default 30), two at a
# time: about 6 minutes and the build.  A differential harness
# (ocsd_etmv3, ocsd_ptm) leaves the default list while fuzz/findings/
# holds an open, unexplained difference of its: a 30 s run meets a
# filed one at random, and a gate that fails at random on a finding
# already filed gates nothing.  Both are in (no open finding,
# fuzz/findings/README.md, docs/fuzzing.md).  Out of the list, a harness still replays
# their seeds and regression inputs in CI (test_fuzz_ocsd,
# scripts/test-oss-fuzz-build.sh), and campaigns run them through
# fuzz/run.sh; TB_FUZZ_HARNESSES can name any list.  Fails if any
# harness finds a crash, a sanitizer report, a timeout (> 10 s per
# input), runs out of memory or leaks, or if a run executed no input or
# its harness checked none; prints each finding's kind, first lines and
# saved input (fuzz/run.sh).  Prints each harness's inputs and exec/s,
# a bench-style report: nothing fails on speed (the numbers depend on the
# machine and on what else runs).  Needs clang; the per-harness logs and
# saved inputs stay in build-fuzz-libfuzzer/work/<harness>/.
#
# Environment: TB_FUZZ_HARNESSES (the harnesses, space-separated; the
# gate's test runs the planted one), TB_FUZZ_PARALLEL (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
read -r -a harnesses <<<"${TB_FUZZ_HARNESSES:-etmv3_parser etmv3_parser_full ptm_parser ptm_parser_full deformatter deformatter_full snapshot snapshot_full etmv3_decoder etmv3_decoder_full ptm_decoder ptm_decoder_full etmv1 etmv1_full etmv2 etmv2_full roundtrip gen conform elfinfo ocsd_etmv3 ocsd_ptm}"
parallel=${TB_FUZZ_PARALLEL:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Build once, so the parallel runs do not race on the build directory; a
# build that fails fails the smoke.
bash fuzz/run.sh --build libfuzzer "${harnesses[@]}"

fail=0
pids=()
names=()
report=()
wait_one() {
  local pid=${pids[0]} name=${names[0]} rc=0 line
  wait "$pid" || rc=$?
  line=$(grep -E "^run.sh: $name (ok|FAILED)" "$tmp/$name" | tail -1 || true)
  if [ "$rc" -eq 0 ] && [ -n "$line" ]; then
    echo "fuzz-smoke: $name ok: ${line#*) }"
  else
    echo "fuzz-smoke: $name FAILED (run.sh exit status $rc):"
    # run.sh's verdict: the kind, the first lines, the saved input.
    grep -E -A40 "^run.sh: $name (FAILED|:)" "$tmp/$name" | sed 's/^/  /' ||
      tail -40 "$tmp/$name" | sed 's/^/  /'
    fail=1
  fi
  report+=("$(printf '%-20s %s' "$name" "$(sed -nE 's/.*inputs=([0-9]+).* exec_s=([0-9]+).*checked=([0-9?]+).*/\2 exec\/s  (\1 inputs, \3 checked)/p' <<<"$line")")")
  pids=("${pids[@]:1}")
  names=("${names[@]:1}")
}
for h in "${harnesses[@]}"; do
  if [ "${#pids[@]}" -ge "$parallel" ]; then wait_one; fi
  bash fuzz/run.sh "$h" "$seconds" libfuzzer >"$tmp/$h" 2>&1 &
  pids+=($!)
  names+=("$h")
done
while [ "${#pids[@]}" -gt 0 ]; do wait_one; done
echo "fuzz-smoke: exec/s per harness (ASan+UBSan, $parallel at a time, ${seconds}s each; a report, not a gate):"
printf '  %s\n' "${report[@]}"
if [ "$fail" -ne 0 ]; then
  echo "fuzz-smoke: FAILED"
  exit 1
fi
echo "fuzz-smoke: all ${#harnesses[@]} harnesses ran ${seconds}s without findings"
