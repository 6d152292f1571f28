#!/usr/bin/env bash
# ab-patch.sh PATCH TESTRE PERFRE [ROUNDS] - an A/B of a change to the tree,
# from the repo root with .gpu and kernels/gen/cuda carried: builds ternion
# from the tree (B, with the change) and from the tree with PATCH reversed
# (A), checks the cases matching TESTRE on the GPU against the host device
# with both, then times the cases matching PERFRE with A and B alternating,
# ROUNDS (default 3) times. PATCH is `git diff` of the change (the tree
# holds it applied). Logs under $OUT/ab-<patch name>-*.
set -uo pipefail
patch_file=$1 testre=$2 perfre=$3 rounds=${4:-3}
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
name=$(basename "$patch_file" .patch)
set -- # gpu-go-setup.sh takes a bundle as $1
. .gpu/gpu-go-setup.sh >/dev/null 2>&1 || exit 1
go build -tags cuda -o /tmp/ab-B ./cmd/ternion || exit 1
git apply -R "$patch_file" || exit 1
go build -tags cuda -o /tmp/ab-A ./cmd/ternion; rc=$?
git apply "$patch_file" || exit 1
[ $rc = 0 ] || exit 1
for v in A B; do
  timeout 120 /tmp/ab-$v ops test -d cuda -p "$testre" > "$OUT/ab-$name-test-$v.log" 2>&1
  echo "$v test: $(tail -1 "$OUT/ab-$name-test-$v.log")"
done
for r in $(seq "$rounds"); do
  for v in A B; do
    timeout 100 /tmp/ab-$v ops perf -d cuda --time 300ms -p "$perfre" 2>&1 | grep us/run | sed "s/^/$v /" >> "$OUT/ab-$name-perf.log"
  done
done
sort -s -k2,2 "$OUT/ab-$name-perf.log" | cut -c1-150
