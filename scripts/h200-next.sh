#!/usr/bin/env bash
# h200-next.sh - the next device call (session 31), from the repo root with
# .gpu and kernels/gen/cuda carried: builds ternion, checks gemm90's q6_K
# (one fma a value since 0b0f...) against the host device and times it
# against dequantize + BLAS (TERNION_GEMM90_MORE), then the goal cases of
# scripts/perf-goals.re with the n=512 cases of every default gemm90 format.
# Logs under $OUT; END (seconds, default 300) stops the steps that would
# start after it.
set -uo pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
start=$SECONDS
END=${END:-300}
left() { [ $((SECONDS - start)) -lt "$END" ]; }
. .gpu/gpu-go-setup.sh >/dev/null 2>&1 || exit 1
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; git log -1 --format='%H %s' 2>/dev/null; } | tee "$OUT/env.log"
go build -tags cuda -o /tmp/ternion ./cmd/ternion || exit 1
echo "== built at $((SECONDS - start)) s"
P6='MUL_MAT\(type_a=q6_K,type_b=f32,m=4096,n=512,'
TERNION_GEMM90_MORE=1 timeout 60 /tmp/ternion ops test -d cuda --seed 20261207 -p 'MUL_MAT\(type_a=q6_K,type_b=f32,m=(4000|200|128),n=(500|130|9),' > "$OUT/q6k-test.log" 2>&1; tail -1 "$OUT/q6k-test.log"
for e in TERNION_GEMM90_MORE TERNION_NO_GEMM90; do
  env $e=1 timeout 40 /tmp/ternion ops perf -d cuda --time 300ms -p "$P6" 2>&1 | grep us/run | sed "s/^/$e /" | tee -a "$OUT/q6k-perf.log"
done
left && timeout 150 /tmp/ternion ops perf -d cuda -v --time 300ms -p "$(cat scripts/perf-goals.re)|MUL_MAT\(type_a=(q4_1|q5_1|q5_0|iq4_nl|q5_K),type_b=f32,m=4096,n=512," > "$OUT/goals.log" 2>&1
grep -h us/run "$OUT/goals.log" | sed -E 's/,bs=.*o=1\)//;s/,permute=.*\)//;s/,sinks=0,max_bias=0.000000,logit_softcap=0.000000//' | cut -c1-170
echo "== done at $((SECONDS - start)) s"
