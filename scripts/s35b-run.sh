#!/usr/bin/env bash
# s35b-run.sh - session 35's second device call, from the repo root with
# .gpu and kernels/gen/cuda carried: the A/B of the split SOFT_MAX on at most
# one block a multiprocessor of at most 512 threads
# (bench/experiments/softmax-split-512.patch) against the plan before
# session 35 on the split rows; GELU and SILU [128,2,2,2] timed alone and
# together; then, on an H200 only, scripts/s34-run.sh (the goal set, the
# tiny ops, every FLASH_ATTN_EXT case against the host) within END
# seconds. Logs under $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "== $gpu"
split='SOFT_MAX\(type=f32,ne=\[(65536|131072|200001|262144|524288),'
bash scripts/ab-patch.sh bench/experiments/softmax-split-512.patch "^$split" "SCALE\(type=f32,ne=\[1,1,1,1\]|$split(1|4|16),1,1\]" 2 |
  grep -o "^[AB] .*ne=\[[0-9,]*\]\|^[AB] SCALE\|[0-9.]* us/run" | paste - - | sed 's/SOFT_MAX(type=f32,//'
for p in 'GELU\(type=f32,ne_a=\[128,2,2,2\]' 'SILU\(type=f32,ne_a=\[128,2,2,2\]' '(GELU|SILU)\(type=f32,ne_a=\[128,2,2,2\]' \
  'SCALE\(type=f32,ne=\[1,1,1,1\]|GELU\(type=f32,ne_a=\[128,2,2,2\]'; do
  echo "-- $p"; timeout 30 /tmp/ab-B ops perf -d cuda --time 300ms -p "$p" 2>&1 | grep us/run | cut -c1-110
done | tee "$OUT/gelu-order.log"
[[ $gpu == *H200* ]] || exit 0
END=${END:-170} bash scripts/s34-run.sh 2>&1 | tail -60
