#!/usr/bin/env bash
# h200-gemm90.sh - gemm90 (kernels/gemm90.cu: q4_0, q4_1, q5_0, q5_1, q8_0, iq4_nl,
# q4_K, q5_K, q6_K; TERNION_GEMM90_MORE set) on the device machine, from the
# repo root with .gpu and kernels/gen/cuda carried: its NVRTC build, the
# MUL_MAT cases against the host device, the issue-10 n=512 perf cases with
# and without TERNION_NO_GEMM90 in one run, then the standalone sweep of
# bench/experiments/wgq.cu (not with the argument "short"). LEAN=1 leaves
# out the TERNION_FORCE_RTC test (every family by NVRTC) and the third
# perf run. Logs under $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
mode=${1:-}
set --
. .gpu/gpu-go-setup.sh || exit 1
{ nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv; nvcc --version | tail -2; git log -1 --format='%H %s' 2>/dev/null; } 2>&1 | tee "$OUT/env.log"
step() { echo "== $*"; timeout 200 "$@"; local r=$?; [ $r -ne 0 ] && echo "FAILED ($r): $*"; return 0; }
Q='(q4_0|q4_1|q5_0|q5_1|q8_0|iq4_nl|q4_K|q5_K|q6_K)'
export TERNION_GEMM90_MORE=1 # every format's kernel, checked and timed
P512="MUL_MAT\\(type_a=$Q,type_b=f32,m=4096,n=512,"
(
  step go build -tags cuda -o /tmp/ternion ./cmd/ternion
  step /tmp/ternion ops test -d cuda --seed 20261206 -p "MUL_MAT\\(type_a=$Q,type_b=f32,m=(4000|200|128),n=(500|130|9),"
  [ "${LEAN:-0}" = 1 ] || step env TERNION_FORCE_RTC=1 /tmp/ternion ops test -d cuda --seed 20261206 -p "MUL_MAT\\(type_a=$Q,type_b=f32,m=(16|4000),"
  step /tmp/ternion ops perf -d cuda -v --time 300ms -p "$P512"
  step env TERNION_NO_GEMM90=1 /tmp/ternion ops perf -d cuda -v --time 300ms -p "$P512"
  [ "${LEAN:-0}" = 1 ] || step /tmp/ternion ops perf -d cuda -v --time 300ms -p "$P512"
) > "$OUT/gemm90.log" 2>&1
grep -v ": OK$" "$OUT/gemm90.log" | grep -v "^time=" | tail -40
[ "$mode" = short ] && exit 0
( step go test -tags cuda -count=1 -run 'RTC|Rtc' ./internal/gpushim/ ) > "$OUT/rtc.log" 2>&1; tail -5 "$OUT/rtc.log"
( nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -DTERNION_VENDOR_CUDA -I kernels -o /tmp/wgq bench/experiments/wgq.cu -lcublas && /tmp/wgq ) > "$OUT/wgq.log" 2>&1
tail -20 "$OUT/wgq.log"
