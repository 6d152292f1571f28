#!/usr/bin/env bash
# s34d-run.sh - session 34's H200 goal set: scripts/s34-run.sh on an H200
# (the goal cases, the tiny ops, every FLASH_ATTN_EXT case against the
# host); on another card it stops at once (the tree's H100 figures are in
# runs A-D). Logs under $OUT.
set -uo pipefail
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "== $gpu"
[[ $gpu == *H200* ]] || exit 0
bash scripts/s34-run.sh 2>&1 | tail -50
