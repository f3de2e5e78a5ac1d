#!/usr/bin/env bash
# First command of the README: install the dependencies, build, and run the
# main job on the bundled example, printing a readable summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$jobs"

example=vectors/programs/irq_fiq
echo
echo "=== tracebench on the bundled example ${example} (IRQ and FIQ, back to back)"
./build/tracebench sim "build/${example}.elf" --scenario "${example}.ini" \
    --truth build/example-truth.txt
echo "ground truth: build/example-truth.txt ($(wc -l < build/example-truth.txt) records)"
