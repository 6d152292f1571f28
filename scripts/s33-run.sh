#!/usr/bin/env bash
# s33-run.sh - session 33's first device call, from the repo root with .gpu
# and kernels/gen/cuda carried: on an H200 the goal set and the ARGMAX A/B
# (h200-next.sh, END=120), the tiny-op spread A/B (ab-patch.sh with
# bench/experiments/tiny-spread.patch: `git diff core/ops` of 6a397a8), then Nsight Compute's kernel list of
# MUL_MAT q8_0 and f16 n=1 (m=4096 k=14336) and the detail of mmvq8w's q8_0
# kernel, bench/experiments/reduce.cu's ARGMAX variants (bulk copies), and
# argmaxbk_f32 (TERNION_ARGMAX_BULK) against argmaxbp_f32 under NVRTC; on
# another GPU, with time left, fattn90's experiment with and without the
# load lambda (bench/experiments/rev-lambda).
# Logs under $OUT. It ran once (an H100, bench/README.md session 33); the
# bulk ARGMAX lost and went (TERNION_ARGMAX_BULK no longer exists), and
# ab-patch.sh now holds the fix the tiny A/B needed.
set -uo pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
start=$SECONDS
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "== $gpu"
if [[ $gpu == *H200* ]]; then
  OUT=$OUT/next END=120 bash scripts/h200-next.sh > "$OUT/next.log" 2>&1; tail -40 "$OUT/next.log"
else # the goals are the H200's: only build
  . .gpu/gpu-go-setup.sh >/dev/null 2>&1 && go build -tags cuda -o /tmp/ternion ./cmd/ternion || exit 1
fi
echo "== goals done at $((SECONDS - start)) s"
# argmaxbk_f32 (TERNION_ARGMAX_BULK) against argmaxbp_f32, both built by NVRTC
# (the carried fatbins come from nvcc 11.8, which cannot emit cp.async.bulk).
for e in TERNION_DEFAULTS TERNION_ARGMAX_BULK; do
  env TERNION_FORCE_RTC=1 $e=1 timeout 60 /tmp/ternion ops test -d cuda -p '^ARGMAX' > "$OUT/argmax-rtc-$e.log" 2>&1
  echo "$e ARGMAX test (NVRTC): $(tail -1 "$OUT/argmax-rtc-$e.log")"
done
for r in 1 2 3; do
  for e in TERNION_DEFAULTS TERNION_ARGMAX_BULK; do
    env TERNION_FORCE_RTC=1 $e=1 timeout 60 /tmp/ternion ops perf -d cuda --time 300ms -p 'ARGMAX\(type=f32,ne=\[32000,512' 2>&1 | grep us/run | sed "s/^/$e /" | tee -a "$OUT/argmax-bulk-perf.log"
  done
done
echo "== argmax bulk A/B done at $((SECONDS - start)) s"
bash scripts/ab-patch.sh bench/experiments/tiny-spread.patch '^(SILU|GELU|SWIGLU|GEGLU|REGLU|REPEAT|CONCAT|PAD|SQR|CLAMP|EXP)\(' \
  "$(cat bench/experiments/tiny.re)" 3 2>&1 | tail -40
echo "== tiny A/B done at $((SECONDS - start)) s"
nvcc -O3 -arch=sm_90 -o /tmp/reduce bench/experiments/reduce.cu && timeout 90 /tmp/reduce argmax 2>&1 | tee "$OUT/reduce-argmax.log" | grep -E "ARGMAX|ceiling|read"
echo "== argmax experiment done at $((SECONDS - start)) s"
[ $((SECONDS - start)) -lt ${PROFILE_BY:-440} ] && DETAIL='mmvq8w' timeout 150 bash scripts/h200-profile.sh \
  'MUL_MAT\(type_a=q8_0,type_b=f32,m=4096,n=1,k=14336' 'MUL_MAT\(type_a=f16,type_b=f32,m=4096,n=1,k=14336' > "$OUT/profile.log" 2>&1
grep -E "^  |Duration|Throughput|Busy|Eligible|Issued|Active Warps|Theoretical Occ|Achieved Occ|Registers|Shared Memory Config|Block Limit" "$OUT/profile.log" | head -70
echo "== profile done at $((SECONDS - start)) s"
if [[ $gpu != *H200* ]] && [ $((SECONDS - start)) -lt ${FA90_BY:-330} ]; then # fattn90 and its load lambda (an A/B any Hopper serves)
  nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -DTERNION_VENDOR_CUDA -I kernels -o /tmp/fa90 bench/experiments/fa90.cu &&
    timeout 100 /tmp/fa90 2>&1 | grep TFLOP | tee "$OUT/fa90.log"
  nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -DTERNION_VENDOR_CUDA -I bench/experiments/rev-lambda -I kernels -o /tmp/fa90rev bench/experiments/fa90.cu &&
    timeout 100 /tmp/fa90rev 2>&1 | grep TFLOP | sed 's/^/lambda /' | tee -a "$OUT/fa90.log"
fi
echo "== done at $((SECONDS - start)) s"
