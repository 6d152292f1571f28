#!/usr/bin/env bash
# h200-next.sh - the next device call (written in session 30, run then as
# h200-session30.sh), from the repo root with .gpu and kernels/gen/cuda
# carried: regenerates gen/cuda with the machine's nvcc (when GEN=1), then
# scripts/h200-gemm90.sh short (gemm90's nine formats against the host
# device, NVRTC, n=512 with and without TERNION_NO_GEMM90), the ARGMAX and
# SOFT_MAX tests, and the goal cases of scripts/perf-goals.re, ARGMAX
# [32000,512] again under TERNION_NO_EARLY_READS (argmaxb's early loads).
# Logs under $OUT; END (seconds, default 540) stops the steps that would
# start after it.
set -uo pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
start=$SECONDS
END=${END:-540}
left() { [ $((SECONDS - start)) -lt "$END" ]; }
. .gpu/gpu-go-setup.sh >/dev/null || exit 1
if [ "${GEN:-0}" = 1 ]; then
  (time TERNION_CUDA_ARCHS=90 TERNION_GEN_VENDORS=cuda NVCC=$(command -v nvcc) go generate ./kernels) > "$OUT/gen.log" 2>&1
  tail -3 "$OUT/gen.log"
  tar czf "$OUT/gencuda.tgz" kernels/gen/cuda
fi
timeout 330 bash scripts/h200-gemm90.sh short
echo "== gemm90 done at $((SECONDS - start)) s"
left && timeout 90 /tmp/ternion ops test -d cuda -p '^(ARGMAX|SOFT_MAX)' > "$OUT/early-test.log" 2>&1; tail -1 "$OUT/early-test.log"
for r in 1 2; do
  left || break
  timeout 90 /tmp/ternion ops perf -d cuda -v --time 300ms -p "$(cat scripts/perf-goals.re)" > "$OUT/goals$r.log" 2>&1
  left || break
  TERNION_NO_EARLY_READS=1 timeout 30 /tmp/ternion ops perf -d cuda --time 300ms -p 'ARGMAX\(type=f32,ne=\[32000,512' > "$OUT/noearly$r.log" 2>&1
done
grep -h -E "ARGMAX|MUL_MAT|SOFT_MAX|FLASH|ROPE" "$OUT"/goals*.log "$OUT"/noearly*.log | cut -c1-200
echo "== done at $((SECONDS - start)) s"
