#!/usr/bin/env bash
# gelu-order.sh BIN - times GELU and SILU f32 [128,2,2,2] with the ternion
# binary BIN (`ops perf -d cuda --time 300ms`): each alone, both in one
# process, and GELU after SCALE [1] (the floor), to tell GELU's extra cost
# a node over SILU apart from the order the cases run in.
set -uo pipefail
bin=$1
for p in 'GELU\(type=f32,ne_a=\[128,2,2,2\]' 'SILU\(type=f32,ne_a=\[128,2,2,2\]' '(GELU|SILU)\(type=f32,ne_a=\[128,2,2,2\]' \
  'SCALE\(type=f32,ne=\[1,1,1,1\]|GELU\(type=f32,ne_a=\[128,2,2,2\]'; do
  echo "-- $p"; timeout 30 "$bin" ops perf -d cuda --time 300ms -p "$p" 2>&1 | grep us/run | cut -c1-110
done
