#!/usr/bin/env bash
# scripts/ocsd-mutate.sh [--per N] [--seed S] [--keep DIR] [VECTOR...]
#
# The mutation experiment of issue 28: committed ETMv3/PTM vectors'
# trace buffers mutated (one to three flipped bits or random bytes each,
# N mutants a vector, default 30) and decoded by us and by OpenCSD in
# process; every difference no documented OpenCSD fault
# (docs/opencsd-bugs.md) explains is reported (fuzz/ocsd_mutate.c).
# Without VECTOR: the 19 vectors of the issue's experiment (570 mutants).
# Builds tb_fuzz_ocsd_mutate in build-fuzz-libfuzzer/ (needs clang and
# libopencsd-dev).  Exit status 1 when any mutant differs.
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
while [ $# -gt 0 ] && [ "${1#--}" != "$1" ]; do
  args+=("$1" "$2")
  shift 2
done
vectors=("$@")
if [ ${#vectors[@]} -eq 0 ]; then
  for v in cond_arm-etmv3 cond_arm-etmv33-ca irq_fiq-etmv3-ca-ts faults-etmv3 \
           ctx_switch-etmv3-ctxid4-vmid recursion-etmv3-alt secure_ns-etmv3 \
           irq_fiq_storm-etmv3-ca long_run-etmv3-ts-long it_blocks-etmv3-ca \
           thumb_basic-ptm cond_arm-ptm-ca irq_fiq-ptm-ca-ts funcptr-ptm-rs \
           returns-ptm-rs-bb long_run-ptm-ts-long secure_ns-ptm-ca \
           ctx_switch-ptm-ctxid4-vmid it_blocks-ptm-ca-bb; do
    vectors+=("vectors/generated/$v")
  done
fi
build=${TB_FUZZ_BUILD:-build-fuzz-libfuzzer}
cmake -S . -B "$build" -DCMAKE_C_COMPILER="${CC_FUZZ:-clang}" -DTB_BUILD_FUZZERS=ON \
  -DTB_FUZZ_ENGINE=libfuzzer -DTB_BUILD_VECTORS=OFF -DTB_WERROR=ON >/dev/null
cmake --build "$build" --target tb_fuzz_ocsd_mutate >/dev/null
exec "$build/fuzz/tb_fuzz_ocsd_mutate" ${args[@]+"${args[@]}"} "${vectors[@]}"
