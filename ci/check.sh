#!/usr/bin/env bash
# ci/check.sh CELL... - ternion's CI matrix; every CI system calls this script.
#
#   host          gofmt check, go vet ./..., go test -race ./... (the README's
#                 test command under the race detector; needs a C compiler),
#                 then ternion ops test --split on 2, 3 and 4 simulated host
#                 devices (TERNION_HOST_DEVICES; uneven, a device without rows,
#                 by memory)
#   cuda          CUDA 11.8 headers + link stubs via ci/gpu-sdk.sh cuda-lean
#                 (~0.8 GB download, Debian 12, root), then go vet, go build
#                 and go test -c (links every test binary, runs none) with
#                 -tags cuda. No GPU needed; the H200 run is separate (README).
#   kernels-cuda  (optional, slow: installs nvidia-cuda-toolkit) nvcc 11.8 via
#                 ci/gpu-sdk.sh nvcc, then TERNION_REQUIRE_NVCC=1 go generate ./kernels
#   hip           hipcc + HIP headers via ci/gpu-sdk.sh hip, then vet/build/test -c
#                 with -tags hip, and go test -tags hip ./hip/ ./internal/gpushim/
#                 (no GPU: the tests skip with "hip: 0 devices" or "driver not found")
#   kernels-hip   hipcc via ci/gpu-sdk.sh hip, then TERNION_REQUIRE_HIPCC=1
#                 go generate ./kernels for hip only (gfx the local hipcc rejects
#                 are left out with a message)
#   musa          vet/build/test -c with -tags musa against $MUSA_HOME (default
#                 /usr/local/musa); SKIP when no SDK is installed (none is
#                 packaged for Debian)
#
# No cell given: host cuda. Each cell runs in its own subshell (SDK environments
# do not leak between cells) and prints "PASS|FAIL|SKIP <cell> (<n> s)".
# Exit status: 0 when no cell failed, 1 otherwise (a SKIP is not a failure).
# Env: CI_SDK_TIMEOUT seconds for one ci/gpu-sdk.sh run (default 1500),
#      GO_TEST_FLAGS extra flags for go test in the host cell,
#      CI_SDK=preinstalled: use the SDK already installed (a vendor container:
#      CUDA_HOME, default /usr/local/cuda; ROCM_PATH, default /opt/rocm)
#      instead of installing Debian packages with ci/gpu-sdk.sh.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
SDK_TIMEOUT=${CI_SDK_TIMEOUT:-1500}
SKIP=77

log() { echo "check: $*" >&2; }

# step CMD...: echo and run one command; a failure ends the cell.
step() {
  echo "+ $*" >&2
  "$@" || { local rc=$?; log "FAILED (status $rc): $*"; exit 1; }
}

# need_cc makes sure cgo has a C compiler (the race detector and every vendor
# shim need one); installs gcc when running as root on Debian.
need_cc() {
  command -v "${CC:-gcc}" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "no C compiler: installing gcc"
    timeout "$SDK_TIMEOUT" apt-get update -qq >&2 &&
      DEBIAN_FRONTEND=noninteractive timeout "$SDK_TIMEOUT" apt-get install -y -qq --no-install-recommends gcc libc6-dev >&2
    return
  fi
  log "no C compiler (${CC:-gcc}) and cannot install one: cgo is off"
  return 1
}

# sdk VENDOR installs a vendor SDK through ci/gpu-sdk.sh, time-boxed, and
# exports the environment it prints into this cell.
sdk() {
  local envs rc
  if [ "${CI_SDK:-}" = preinstalled ]; then
    preinstalled_sdk "$1"
    return
  fi
  envs=$(timeout "$SDK_TIMEOUT" bash "$ROOT/ci/gpu-sdk.sh" "$1")
  rc=$?
  if [ $rc -ne 0 ]; then
    [ $rc -eq 124 ] && log "ci/gpu-sdk.sh $1 timed out after ${SDK_TIMEOUT} s"
    log "ci/gpu-sdk.sh $1 failed (status $rc)"
    return 1
  fi
  echo "$envs" >&2
  eval "$envs"
}

# preinstalled_sdk VENDOR exports what ci/gpu-sdk.sh would, for an SDK that
# is already installed (CI_SDK=preinstalled), and fails when it is not there.
preinstalled_sdk() {
  case $1 in
    cuda|cuda-lean|nvcc)
      local c=${CUDA_HOME:-/usr/local/cuda}
      [ -f "$c/include/cuda.h" ] || { log "CI_SDK=preinstalled: no CUDA at $c (set CUDA_HOME)"; return 1; }
      export CUDA_HOME=$c NVCC=${NVCC:-$c/bin/nvcc}
      export CGO_CFLAGS="-O2 -g -I$c/include" CGO_LDFLAGS="-O2 -g -L$c/lib64 -L$c/lib64/stubs"
      ;;
    hip)
      local r=${ROCM_PATH:-/opt/rocm}
      [ -f "$r/include/hip/hip_runtime_api.h" ] || { log "CI_SDK=preinstalled: no HIP at $r (set ROCM_PATH)"; return 1; }
      export ROCM_PATH=$r HIP_PLATFORM=amd HIPCC=${HIPCC:-$r/bin/hipcc}
      export CGO_CFLAGS="-O2 -g -I$r/include" CGO_LDFLAGS="-O2 -g"
      ;;
    *) log "CI_SDK=preinstalled: unknown SDK $1"; return 1 ;;
  esac
  log "CI_SDK=preinstalled: using the installed $1 SDK (CGO_CFLAGS=$CGO_CFLAGS)"
}

go_files() {
  if git rev-parse --git-dir >/dev/null 2>&1; then
    git ls-files --cached --others --exclude-standard -- '*.go'
  else
    find . -name '*.go' -not -path './.*'
  fi
}

check_gofmt() {
  local files bad
  mapfile -t files < <(go_files)
  [ ${#files[@]} -eq 0 ] && return 0
  bad=$(gofmt -l "${files[@]}") || return 1
  if [ -n "$bad" ]; then
    log "gofmt would change:"
    echo "$bad" >&2
    return 1
  fi
}

# tagged_check TAG: go vet, go build and go test -c (into a temporary dir) with -tags TAG.
tagged_check() {
  local out
  out=$(mktemp -d)
  step go vet -tags "$1" ./...
  step go build -tags "$1" ./...
  step go test -tags "$1" -c -o "$out/" ./...
  rm -rf "$out"
}

# implemented TAG: the vendor's package (TAG/) has a Go file built only with
# its tag, i.e. it registers a vendor (hip/ and musa/ hold only a package doc
# for now; the shared shim's cuda||hip||musa files do not count).
implemented() { grep -qlE "^//go:build .*\b$1\b" "$1"/*.go 2>/dev/null; }

cell_host() {
  step need_cc
  step check_gofmt
  step go vet ./...
  # The race detector slows the host device's op cases ~8×: core/optest runs
  # past go test's default 10-minute limit under it.
  # shellcheck disable=SC2086
  step go test -race -timeout 30m ${GO_TEST_FLAGS:-} ./...
  step env TERNION_HOST_DEVICES=2 go run ./cmd/ternion ops test -d host --split 0.7,0.3
  step env TERNION_HOST_DEVICES=3 go run ./cmd/ternion ops test -d host --split 1,0,1
  step env TERNION_HOST_DEVICES=4 go run ./cmd/ternion ops test -d host --split default
}

cell_cuda() {
  step need_cc
  step sdk cuda-lean
  tagged_check cuda
}

cell_kernels-cuda() {
  step sdk nvcc
  step env TERNION_REQUIRE_NVCC=1 TERNION_GEN_VENDORS=cuda go generate ./kernels
}

cell_hip() {
  implemented hip || { log "hip/ registers no vendor yet (no file in it is built with -tags hip)"; exit $SKIP; }
  step need_cc
  step sdk hip
  tagged_check hip
  step go test -tags hip -count=1 ./hip/ ./internal/gpushim/
}

cell_kernels-hip() {
  step sdk hip
  step env TERNION_REQUIRE_HIPCC=1 TERNION_GEN_VENDORS=hip go generate ./kernels
}

cell_musa() {
  implemented musa || { log "musa/ registers no vendor yet (no file in it is built with -tags musa)"; exit $SKIP; }
  local m=${MUSA_HOME:-/usr/local/musa}
  [ -d "$m/include" ] || { log "no MUSA SDK at $m (none is packaged for Debian)"; exit $SKIP; }
  step need_cc
  export CGO_CFLAGS="-O2 -g -I$m/include" CGO_LDFLAGS="-O2 -g -L$m/lib"
  tagged_check musa
}

[ $# -eq 0 ] && set -- host cuda
for c in "$@"; do
  if ! declare -F "cell_$c" >/dev/null; then
    echo "usage: $0 [host|cuda|kernels-cuda|hip|kernels-hip|musa]..." >&2
    exit 2
  fi
done

failed=()
summary=()
for c in "$@"; do
  echo "=== cell $c" >&2
  start=$SECONDS
  ( "cell_$c" )
  rc=$?
  secs=$((SECONDS - start))
  case $rc in
    0) line="PASS $c ($secs s)" ;;
    "$SKIP") line="SKIP $c ($secs s)" ;;
    *) line="FAIL $c ($secs s)"; failed+=("$c") ;;
  esac
  echo "$line"
  summary+=("$line")
done
echo "=== summary"
printf '%s\n' "${summary[@]}"
[ ${#failed[@]} -eq 0 ]
