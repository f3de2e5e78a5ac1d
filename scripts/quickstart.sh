#!/usr/bin/env bash
# First command of the README: install the dependencies, build, and run the
# main job on the bundled example: a round trip (sim -> encoder -> decoder
# -> comparator) for both protocols, with a readable summary, and the
# OpenCSD snapshots it encoded.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"

example=irq_fiq   # IRQ and FIQ, nested and back to back
elf=build/vectors/programs/$example.elf
ini=vectors/programs/$example.ini
status=0
for proto in ptm etmv3; do
  out=build/example-$proto
  rm -rf "$out"
  echo
  echo "=== round trip: $example, $proto, cycle-accurate with timestamps"
  # Runs the program, encodes the run, decodes the trace and compares the
  # decode with the emulator's truth, instruction by instruction.
  ./build/tracebench roundtrip "$elf" --scenario "$ini" --protocol "$proto" \
      --options ca,ts --out "$out" --truth "$out/truth.txt" || status=1
  echo "snapshot and ground truth (truth.txt) written to $out"
  echo "  (tracebench packets $out; tracebench decode $out; trc_pkt_lister -ss_dir $out -decode)"
done
echo
echo "next: make -C build roundtrip   (every program x protocol x option set x scenario)"
exit $status
