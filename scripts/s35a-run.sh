#!/usr/bin/env bash
# s35a-run.sh - session 35's first device call, from the repo root with
# .gpu and kernels/gen/cuda carried: the A/B of the split SOFT_MAX on at most
# one block a multiprocessor (bench/experiments/softmax-split-one.patch:
# both launches then go with programmatic dependent launch) against the
# tree before it, on the split rows of SOFT_MAX's tests and perf cases.
# Logs under $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
split='SOFT_MAX\(type=f32,ne=\[(65536|131072|200001|262144|524288),'
bash scripts/ab-patch.sh bench/experiments/softmax-split-one.patch "^$split" "SCALE\(type=f32,ne=\[1,1,1,1\]|$split(1|4|16),1,1\]" 3
