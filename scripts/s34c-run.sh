#!/usr/bin/env bash
# s34c-run.sh - session 34's last call: on an H200 the goal set and
# FLASH_ATTN_EXT check of scripts/s34-run.sh; on any card the A/B of the tiny-op change
# (bench/experiments/tiny-flat.patch: concatf_{T}, acc_f32, one-block SUM,
# spreadOne, against 69bdba1's core and host). Logs under $OUT.
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "== $gpu"
[[ $gpu == *H200* ]] && { OUT=$OUT/goals bash scripts/s34-run.sh 2>&1 | tail -50; }
re='SCALE\(type=f32,ne=\[1,1,1,1\]|CONCAT\(type=f32,ne_a=\[11,12,13,14\],ne_b_d=7,dim=1,v=0|SUM\(type=f32,ne=\[8192,1,1,1\]|ACC\(type=f32,ne_a=\[256,17,2,3\],ne_b=\[256,16,2,3\],stride_dim=-1\)'
bash scripts/ab-patch.sh bench/experiments/tiny-flat.patch '^(CONCAT|ACC|SUM|REPEAT)\(' "$re" 2
