#!/usr/bin/env bash
# fa90-run.sh - the device call for fattn90 (session 32), from the repo root
# with .gpu and kernels/gen/cuda carried: builds ternion, checks every
# FLASH_ATTN_EXT case on the GPU against the host device (fattn90 built by
# NVRTC for sm_90a at first use), times the prefill cases with fattn90 and
# with TERNION_NO_FATTN90 (fattn_mma) twice, alternating, then builds and
# runs bench/experiments/fa90.cu. Logs under $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
start=$SECONDS
. .gpu/gpu-go-setup.sh >/dev/null 2>&1 || exit 1
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; git log -1 --format='%H %s' 2>/dev/null; } | tee "$OUT/env.log"
go build -tags cuda -o /tmp/ternion ./cmd/ternion || exit 1
echo "== built at $((SECONDS - start)) s"
timeout 240 /tmp/ternion ops test -d cuda -o FLASH_ATTN_EXT > "$OUT/fa-test.log" 2>&1; tail -2 "$OUT/fa-test.log"
grep -E "FAIL|not supported" "$OUT/fa-test.log" | head -5
echo "== tested at $((SECONDS - start)) s"
re='FLASH_ATTN_EXT\(hsk=(128|256),hsv=(128|256),nh=(2|8),nr23=\[(16|4),1\],kv=(10000|8192),nb=512'
for r in 1 2; do
  for e in TERNION_DEFAULTS TERNION_NO_FATTN90; do
    env $e=1 timeout 60 /tmp/ternion ops perf -d cuda --time 300ms -p "$re" 2>&1 | grep us/run |
      sed -E "s/,sinks=0,max_bias=0.000000,logit_softcap=0.000000//;s/,permute=.*\)//;s/^/$e /" | tee -a "$OUT/fa-perf.log"
  done
done
echo "== timed at $((SECONDS - start)) s"
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -DTERNION_VENDOR_CUDA -I kernels -o /tmp/fa90 bench/experiments/fa90.cu &&
  timeout 120 /tmp/fa90 2>&1 | tee "$OUT/fa90.log"
echo "== done at $((SECONDS - start)) s"
# REVS: directories holding other versions of fattn90.cu, each built into
# the experiment and run after the tree's (an A/B in one process order).
for d in ${REVS:-}; do
  echo "== fa90.cu with $d/fattn90.cu"
  nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -DTERNION_VENDOR_CUDA -I "$d" -I kernels -o /tmp/fa90rev bench/experiments/fa90.cu &&
    timeout 120 /tmp/fa90rev 2>&1 | grep TFLOP | tee -a "$OUT/fa90-revs.log"
done
