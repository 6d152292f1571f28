#!/usr/bin/env bash
# s35b-run.sh - session 35's second device call, from the repo root with
# .gpu and kernels/gen/cuda carried: the A/B of the one-block split SOFT_MAX
# capped at 512 threads for every row count up to the multiprocessors
# (bench/experiments/softmax-split-cap512.patch: rows then take more
# vectors a thread) against the tree, which takes one block a
# multiprocessor only where 512 threads suffice; GELU and SILU [128,2,2,2]
# timed alone and together. On an H200, first scripts/s34-run.sh (the goal
# set, the tiny ops, every FLASH_ATTN_EXT case against the host) within END
# seconds: no H200 goal figure since session 29. Logs under $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "== $gpu"
[[ $gpu == *H200* ]] && END=${END:-170} bash scripts/s34-run.sh 2>&1 | tail -60
split='SOFT_MAX\(type=f32,ne=\[(131072|262144|524288),'
git apply bench/experiments/softmax-split-cap512.patch &&
  bash scripts/ab-patch.sh bench/experiments/softmax-split-cap512.patch "^$split" "SCALE\(type=f32,ne=\[1,1,1,1\]|$split(1|4|16),1,1\]" 2 |
  grep -o "^[AB] .*ne=\[[0-9,]*\]\|^[AB] SCALE\|[0-9.]* us/run" | paste - - | sed 's/SOFT_MAX(type=f32,//'
git apply -R bench/experiments/softmax-split-cap512.patch
bash scripts/gelu-order.sh /tmp/ab-A | tee "$OUT/gelu-order.log"
