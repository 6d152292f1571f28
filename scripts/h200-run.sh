#!/usr/bin/env bash
# h200-run.sh - one GPU session's worth of checks, run from the repo root on the
# device machine (see shared/gpu/README.md): unpack the carried Go bundle, build
# the kernels, run the CUDA test suite, the CLI and the overhead benchmarks.
# Logs go to $OUT (or ./out when OUT is unset).
#   bash scripts/h200-run.sh [test|ops|bench|all]   (default all)
set -uo pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
what=${1:-all}
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
if [ "$what" = test ] || [ "$what" = all ]; then
  ( step go test -tags cuda -count=1 -timeout 300s ./...
    step go test -tags cuda -count=1 -v -run TestCUDA ./cuda/
    # the same suite with every kernel family compiled by NVRTC instead of the embedded fatbins
    step env TERNION_FORCE_RTC=1 go test -tags cuda -count=1 -v -run TestCUDA/Conformance ./cuda/ ) > "$OUT/test.log" 2>&1
  grep -E "^(ok|FAIL|panic)|--- FAIL|--- SKIP|FAILED" "$OUT/test.log" | head -200
fi
if [ "$what" = ops ] || [ "$what" = all ]; then
  ( step go build -tags cuda -o /tmp/ternion ./cmd/ternion
    step /tmp/ternion ops test -d cuda --seed 20261202
    step /tmp/ternion ops perf -d cuda ) 2>&1 | tee "$OUT/ops.log" | grep -v ": OK$" | tail -60
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  # ternion_bench adds the raw-cgo floor (RawKernel), which production builds leave out
  ( step go test -tags cuda,ternion_bench -count=5 -run NONE -bench . -benchtime=2s ./cuda/ ) 2>&1 | tee "$OUT/bench.log"
fi
exit $rc
