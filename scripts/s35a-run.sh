#!/usr/bin/env bash
# s35a-run.sh - session 35's first device call, from the repo root with
# .gpu and kernels/gen/cuda carried: A/Bs of three changes that keep a large
# kernel to at most one block a multiprocessor, so that it launches with
# programmatic dependent launch: the split SOFT_MAX
# (bench/experiments/softmax-split-one.patch, both launches) and ARGMAX's
# long rows on 1024-thread blocks walking the rows
# (bench/experiments/argmax-wide.patch, a new kernel: built by NVRTC both
# ways) and the wide SOFT_MAX with its next row prefetched
# (bench/experiments/softmax-wide-prefetch.patch), each against the tree
# without it; and scripts/gelu-order.sh. Logs
# under $OUT. STEP (default all) picks one part: split, gelu, argmax, wide
# (the last two build their kernels by NVRTC in every process: slower).
set -uo pipefail
STEP=${STEP:-all}
on() { [ "$STEP" = all ] || [ "$STEP" = "$1" ]; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
split='SOFT_MAX\(type=f32,ne=\[(65536|131072|200001|262144|524288),'
on split && bash scripts/ab-patch.sh bench/experiments/softmax-split-one.patch "^$split" "SCALE\(type=f32,ne=\[1,1,1,1\]|$split(1|4|16),1,1\]" 3
on argmax && TERNION_FORCE_RTC=1 bash scripts/ab-patch.sh bench/experiments/argmax-wide.patch '^ARGMAX' 'SCALE\(type=f32,ne=\[1,1,1,1\]|ARGMAX' ${ROUNDS:-3}
on gelu && [ -x /tmp/ab-B ] && bash scripts/gelu-order.sh /tmp/ab-B
# SOFT_MAX's wide rows (the [4096,4096,5] goal) walked by two 512-thread
# blocks a multiprocessor, each requesting its next row before it reduces
# this one (bench/experiments/softmax-wide-prefetch.patch; kernel source:
# NVRTC both ways).
on wide && TERNION_FORCE_RTC=1 bash scripts/ab-patch.sh bench/experiments/softmax-wide-prefetch.patch '^SOFT_MAX' 'SCALE\(type=f32,ne=\[1,1,1,1\]|SOFT_MAX\(type=f32,ne=\[4096,4096,5' ${ROUNDS:-3}
