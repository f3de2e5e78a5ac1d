#!/usr/bin/env bash
# First command of the README: install the dependencies, build, and run the
# main job on the bundled example: a round trip (sim -> encoder -> snapshot
# -> decoder) for both protocols, with a readable summary.
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
  echo "=== round trip: $example, $proto"
  ./build/tracebench sim "$elf" --scenario "$ini" --protocol "$proto" --out "$out"
  # Executed instructions, address and ISA, from the truth and the decode.
  awk '$3 == "I" { printf "0x%s %s\n", toupper($4), $5 }' "$out/truth.txt" > "$out/truth.addr"
  ./build/tracebench decode "$out" --format addr | awk '{ print $1, $2 }' > "$out/decoded.addr"
  n_truth=$(wc -l < "$out/truth.addr")
  n_dec=$(wc -l < "$out/decoded.addr")
  if cmp -s "$out/truth.addr" "$out/decoded.addr"; then
    echo "decoded $n_dec of $n_truth instructions: equal to the ground truth, address for address"
  else
    echo "MISMATCH: decoded $n_dec, ground truth $n_truth; first difference:"
    diff "$out/truth.addr" "$out/decoded.addr" | head -5
    status=1
  fi
  echo "snapshot written to $out (open it with trc_pkt_lister or 'tracebench packets $out')"
done
exit $status
