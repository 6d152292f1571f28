#!/usr/bin/env bash
# s33b-run.sh - session 33's last device call: on an H200 the goal set
# (h200-next.sh, END=100) and the tiny ops of bench/experiments/tiny.re; on
# another GPU the tiny ops with graphs on and off. Logs under $OUT.
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "== $gpu"
if [[ $gpu == *H200* ]]; then
  OUT=$OUT/next END=100 bash scripts/h200-next.sh > "$OUT/next.log" 2>&1; tail -45 "$OUT/next.log"
  timeout 60 /tmp/ternion ops perf -d cuda --time 300ms -p "$(cat bench/experiments/tiny.re)" 2>&1 | grep us/run | tee "$OUT/tiny-h200.log"
else
  set --; . .gpu/gpu-go-setup.sh >/dev/null 2>&1 && go build -tags cuda -o /tmp/ternion ./cmd/ternion || exit 1
  for g in on off; do timeout 60 /tmp/ternion ops perf -d cuda --graphs $g --time 300ms -p "$(cat bench/experiments/tiny.re)|(SILU|GELU)\(type=f16,ne_a=\[128,2,2,2\]" 2>&1 | grep us/run | sed "s/^/graphs=$g /" | tee -a "$OUT/tiny-graphs.log"; done
fi
