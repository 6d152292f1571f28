#!/usr/bin/env bash
# s34-run.sh - session 34's first device call, from the repo root with .gpu
# and kernels/gen/cuda carried: builds ternion, times the goal cases of
# scripts/perf-goals.re (with the n=512 cases of every default gemm90
# format) and the tiny ops of bench/experiments/tiny.re, then checks every
# FLASH_ATTN_EXT case against the host device (fattn90 among them, built by
# NVRTC for sm_90a). Logs under $OUT; END (seconds, default 500) stops the
# steps that would start after it.
set -uo pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
start=$SECONDS
END=${END:-500}
left() { [ $((SECONDS - start)) -lt "$END" ]; }
set --; . .gpu/gpu-go-setup.sh >/dev/null 2>&1 || exit 1
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; git log -1 --format='%H %s' 2>/dev/null; } | tee "$OUT/env.log"
go build -tags cuda -o /tmp/ternion ./cmd/ternion || exit 1
echo "== built at $((SECONDS - start)) s"
timeout 170 /tmp/ternion ops perf -d cuda -v --time 300ms -p "$(cat scripts/perf-goals.re)|MUL_MAT\(type_a=(q4_1|q5_1|q5_0|iq4_nl|q5_K),type_b=f32,m=4096,n=512," > "$OUT/goals.log" 2>&1
grep -h us/run "$OUT/goals.log" | sed -E 's/,bs=.*o=1\)//;s/,permute=.*\)//;s/,sinks=0,max_bias=0.000000,logit_softcap=0.000000//' | cut -c1-170
echo "== goals at $((SECONDS - start)) s"
left && timeout 60 /tmp/ternion ops perf -d cuda --time 300ms -p "$(cat bench/experiments/tiny.re)" 2>&1 | grep us/run | tee "$OUT/tiny.log"
left && { timeout 240 /tmp/ternion ops test -d cuda -o FLASH_ATTN_EXT > "$OUT/fa-test.log" 2>&1; tail -1 "$OUT/fa-test.log"; grep -E "FAIL" "$OUT/fa-test.log" | head -5; }
echo "== done at $((SECONDS - start)) s"
