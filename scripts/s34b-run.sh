#!/usr/bin/env bash
# s34b-run.sh - session 34's A/B of the tiny CONCAT/SUM/ACC kernels, from
# the repo root with .gpu and kernels/gen/cuda (generated from the tree with
# the change) carried: scripts/ab-patch.sh of bench/experiments/tiny-flat.patch
# (concatf_{T}, acc_f32, the one-block SUM, spreadOne) against the tree
# before it, then of bench/experiments/spread-one.patch (spreadOne against
# spreadFlat alone), GROUP_NORM held in registers
# (bench/experiments/group-held.patch), GELU with SILU's formula
# (bench/experiments/gelu-as-silu.patch), then every perf case. Logs under
# $OUT.
set -uo pipefail
re='SCALE\(type=f32,ne=\[1,1,1,1\]|ARANGE\(type=f32,start=0|CONCAT\(type=f32,ne_a=\[11,12,13,14\],ne_b_d=7,dim=1,v=0|SUM\(type=f32,ne=\[8192,1,1,1\]|ACC\(type=f32,ne_a=\[256,17,2,3\],ne_b=\[256,16,2,3\],stride_dim=-1\)|REPEAT\(type=f32,ne=\[10,5,4,1\]'
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
bash scripts/ab-patch.sh bench/experiments/tiny-flat.patch '^(CONCAT|ACC|SUM|REPEAT)\(' "$re" 3
bash scripts/ab-patch.sh bench/experiments/spread-one.patch '^(CONCAT|ACC)\(' "$re" 2
# GROUP_NORM holding a group of up to 4 units a thread in registers
# (kernels/norm.cu; built by NVRTC both ways).
TERNION_FORCE_RTC=1 bash scripts/ab-patch.sh bench/experiments/group-held.patch '^GROUP_NORM' 'SCALE\(type=f32,ne=\[1,1,1,1\]|GROUP_NORM' 3
# GELU's extra replay cost: its kernel with SILU's formula (built by NVRTC
# both ways; no test, the formula is wrong on purpose).
git apply bench/experiments/gelu-as-silu.patch &&
  TERNION_FORCE_RTC=1 bash scripts/ab-patch.sh bench/experiments/gelu-as-silu.patch '^NONE$' 'SCALE\(type=f32,ne=\[1,1,1,1\]|(SILU|GELU)\(type=f32,ne_a=\[128,2,2,2\],v=0' 3
git apply -R bench/experiments/gelu-as-silu.patch
# Every perf case with the change (the last B: GELU's patch sits only in the
# kernel sources, which this run, without NVRTC, does not build), for the tiny ops' current figures.
timeout 200 /tmp/ab-B ops perf -d cuda --time 50ms > "$OUT/perf-all.log" 2>&1
grep -c us/run "$OUT/perf-all.log"
