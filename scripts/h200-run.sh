#!/usr/bin/env bash
# h200-run.sh - one GPU session's worth of checks, run from the repo root on the
# device machine (see shared/gpu/README.md): unpack the carried Go bundle, build
# the kernels, run the CUDA test suite, the CLI and the overhead benchmarks.
# Logs go to $OUT (or ./out when OUT is unset).
#   bash scripts/h200-run.sh [MODE...]   modes: test ops goals perf bench all (default all; goals needs ops or perf first)
# TERNION_CUDA_ARCHS=90 in the environment builds the kernels for the H200 only (faster).
set -uo pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
what=" ${*:-all} "
want() { [[ $what == *" $1 "* || $what == *" all "* ]]; }
set --  # gpu-go-setup.sh reads $1 as a bundle path
. .gpu/gpu-go-setup.sh || exit 1
{ nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv; nvcc --version | tail -2; go version; git log -1 --format='%H %s' 2>/dev/null; } 2>&1 | tee "$OUT/env.log"
rc=0
step() { echo "== $*"; "$@"; local r=$?; [ $r -ne 0 ] && { echo "FAILED ($r): $*"; rc=1; }; return 0; }
(
  step go generate ./kernels
  step go vet -tags cuda ./...
  step go run -tags cuda ./cmd/ternion devices
  step go run -tags cuda ./cmd/ternion devices --json
) 2>&1 | tee "$OUT/build.log"
if want test; then
  ( step go test -tags cuda -count=1 -timeout 300s ./...
    step go test -tags cuda -count=1 -v -run TestCUDA ./cuda/
    # the same suite with every kernel family compiled by NVRTC instead of the embedded fatbins
    step env TERNION_FORCE_RTC=1 go test -tags cuda -count=1 -v -run TestCUDA/Conformance ./cuda/ ) > "$OUT/test.log" 2>&1
  grep -E "^(ok|FAIL|panic)|--- FAIL|--- SKIP|FAILED" "$OUT/test.log" | head -200
fi
# The perf cases the issues' speed goals name, the tiny cases and the launch floor (SCALE of one element).
GOALS='^(ADD|MUL|SCALE|CPY|CONT|MUL_MAT)\(|SOFT_MAX\(type=f32,ne=\[(4096,4096,5|131072,16,1)|(RMS_NORM|L2_NORM|NORM)\(type=f32,ne=\[4096,4096|ROPE\(type=f(32|16),ne_a=\[128,32,512,1\],n_dims=128,mode=0,n_ctx=512,fs=1.000000,ef=0.000000,af=1.000000,ff=0,v=0|ARGMAX\(type=f32,ne=\[32000|SUM(_ROWS)?\(type=f32,ne=\[8192,8192|ARGSORT\(type=f32,ne=\[(200000|65000)|FLASH_ATTN_EXT\(hsk=(128,hsv=128,nh=8,nr23=\[4,1\],kv=16384,nb=1,|256,hsv=256,nh=2)|^(SILU|GELU)\(type=f(32|16),ne_a=\[4096|SWIGLU\(type=f(16|32),ne_a=\[34816,512|ne_a=\[128,2,2,2\]|REPEAT\(type=f32,ne=\[10,5|ARANGE.*stop=10\.|SOFT_MAX.*ne=\[64,64,20|GROUP_NORM.*\[9,9|CONCAT\(type=f32,ne_a=\[4096|PAD\(type=f32,ne_a=\[4096'
if want ops; then
  ( step go build -tags cuda -o /tmp/ternion ./cmd/ternion
    step /tmp/ternion ops test -d cuda --seed 20261202
    # the newest kernel families again through NVRTC instead of the embedded code objects
    step env TERNION_FORCE_RTC=1 /tmp/ternion ops test -d cuda --seed 20261202 -p 'FLASH_ATTN_EXT|SOFT_MAX|ARGSORT|ARGMAX|SUM_ROWS|ROPE|SILU|SWIGLU|RMS_NORM|LAYER|CONCAT' ) 2>&1 | tee "$OUT/ops.log" | grep -v ": OK$" | tail -60
fi
if want goals; then
  ( step /tmp/ternion ops perf -d cuda --time 500ms -p "$GOALS" ) 2>&1 | tee "$OUT/goals.log" | grep -v INFO | tail -80
fi
if [[ $what == *" perf "* ]]; then
  ( step go build -tags cuda -o /tmp/ternion ./cmd/ternion
    step /tmp/ternion ops perf -d cuda ) 2>&1 | tee "$OUT/perf.log" | grep -v INFO | tail -80
fi
if want bench; then
  # ternion_bench adds the raw-cgo floor (RawKernel), which production builds leave out
  ( step go test -tags cuda,ternion_bench -count=5 -run NONE -bench . -benchtime=2s ./cuda/ ) 2>&1 | tee "$OUT/bench.log"
fi
exit $rc
