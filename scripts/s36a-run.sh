#!/usr/bin/env bash
# s36a-run.sh - session 36's first device call, from the repo root with .gpu
# and kernels/gen/cuda carried: builds ternion, checks the cases of TESTRE
# (default every MUL_MAT and LAYER case) on the GPU against the host device
# with TERNION_EARLY_PRODUCTS=1 (q8ye and mmvv's early weights), then the
# A/B of that switch (A: off, the default; B: on) on the one- and
# eight-column products, ROUNDS (default 3) rounds alternating; on an H200
# the goal set after it (scripts/s34-run.sh's first step). Logs under $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
start=$SECONDS
set --; . .gpu/gpu-go-setup.sh >/dev/null 2>&1 || exit 1
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; git log -1 --format='%H %s' 2>/dev/null; } | tee "$OUT/env.log"
go build -tags cuda -o /tmp/ternion ./cmd/ternion || exit 1
echo "== built at $((SECONDS - start)) s"
TERNION_EARLY_PRODUCTS=1 timeout 200 /tmp/ternion ops test -d cuda -p "${TESTRE:-^(MUL_MAT|LAYER)}" > "$OUT/test.log" 2>&1
tail -1 "$OUT/test.log"; grep -E "FAIL" "$OUT/test.log" | head -5
echo "== tested at $((SECONDS - start)) s"
re='SCALE\(type=f32,ne=\[1,1,1,1\]|MUL_MAT\(type_a=(f16|bf16|q4_0|q8_0|q4_K|q5_K|q6_K),type_b=f32,m=4096,n=(1|8),k=14336,|MUL_MAT\(type_a=(f16|q4_0),type_b=f32,m=(4096|14336),n=1,k=4096,'
for r in $(seq "${ROUNDS:-3}"); do
  timeout 100 /tmp/ternion ops perf -d cuda --time 300ms -p "$re" 2>&1 | grep us/run | sed "s/^/A /" >> "$OUT/ab-early.log"
  TERNION_EARLY_PRODUCTS=1 timeout 100 /tmp/ternion ops perf -d cuda --time 300ms -p "$re" 2>&1 | grep us/run | sed "s/^/B /" >> "$OUT/ab-early.log"
done
sort -s -k2,2 "$OUT/ab-early.log" | sed -E 's/,bs=.*o=1\)//' | awk '{printf "%s %s %s\n", $1, $2, $(NF-4)}'
echo "== A/B at $((SECONDS - start)) s"
if grep -q H200 "$OUT/env.log"; then
  timeout 170 /tmp/ternion ops perf -d cuda -v --time 300ms -p "$(cat scripts/perf-goals.re)" > "$OUT/goals.log" 2>&1
  grep -h us/run "$OUT/goals.log" | sed -E 's/,bs=.*o=1\)//;s/,permute=.*\)//;s/,sinks=0,max_bias=0.000000,logit_softcap=0.000000//' | cut -c1-170
  echo "== goals at $((SECONDS - start)) s"
fi
