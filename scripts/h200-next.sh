#!/usr/bin/env bash
# h200-next.sh - the next device call (sessions 31, 32), from the repo root with
# .gpu and kernels/gen/cuda carried: builds ternion, checks ARGMAX with and
# without TERNION_NO_ARGMAX_PIPELINE (argmaxb_f32 instead of argmaxbp_f32)
# against the host device and times [32000,512] both ways twice, then the goal cases of
# scripts/perf-goals.re with the n=512 cases of every default gemm90 format,
# and with PROFILE=1 Nsight Compute readings (scripts/h200-profile.sh) of
# ARGMAX [32000,512] and ROPE f16 [128,32,512], the two goals whose kernels
# were last profiled on an H200 before their current forms.
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
timeout 60 /tmp/ternion ops test -d cuda -p '^ARGMAX' > "$OUT/argmax-test.log" 2>&1; tail -1 "$OUT/argmax-test.log"
TERNION_NO_ARGMAX_PIPELINE=1 timeout 60 /tmp/ternion ops test -d cuda -p '^ARGMAX' > "$OUT/argmaxp-test.log" 2>&1; tail -1 "$OUT/argmaxp-test.log"
for r in 1 2; do
  for e in TERNION_DEFAULTS TERNION_NO_ARGMAX_PIPELINE; do
    env $e=1 timeout 40 /tmp/ternion ops perf -d cuda --time 300ms -p 'ARGMAX\(type=f32,ne=\[32000,512' 2>&1 | grep us/run | sed "s/^/$e /" | tee -a "$OUT/argmax-perf.log"
  done
done
left && timeout 150 /tmp/ternion ops perf -d cuda -v --time 300ms -p "$(cat scripts/perf-goals.re)|MUL_MAT\(type_a=(q4_1|q5_1|q5_0|iq4_nl|q5_K),type_b=f32,m=4096,n=512," > "$OUT/goals.log" 2>&1
grep -h us/run "$OUT/goals.log" | sed -E 's/,bs=.*o=1\)//;s/,permute=.*\)//;s/,sinks=0,max_bias=0.000000,logit_softcap=0.000000//' | cut -c1-170
if [ "${PROFILE:-0}" = 1 ] && left; then
  DETAIL='argmaxbp_f32|rope_flat' timeout 200 bash scripts/h200-profile.sh 'ARGMAX\(type=f32,ne=\[32000,512' 'ROPE\(type=f16,ne_a=\[128,32,512' > "$OUT/profile-run.log" 2>&1
  tail -5 "$OUT/profile-run.log"
fi
echo "== done at $((SECONDS - start)) s"
