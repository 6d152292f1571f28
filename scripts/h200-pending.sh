#!/usr/bin/env bash
# h200-pending.sh - the device runs that sessions 17 and 18 wrote down and could
# not make (bench/README.md, "not measured"), in two parts that each fit the
# device tool's 600 s a call when kernels/gen/cuda is carried (generated here
# with TERNION_CUDA_ARCHS=90 TERNION_GEN_VENDORS=cuda go generate ./kernels;
# nvcc 11.8 code, which the logs name) or, without it, generated on the device
# (~150 s more). From the repo root on the device, carry [".gpu", "kernels/gen/cuda"]:
#   bash scripts/h200-pending.sh 1    tests of every op (and under TERNION_MMVQ8WF), the FA prefill case, carveout.cu, the n=1 A/B
#                                     (q8y + mmvq8w, TERNION_MMVQ8WF=1, TERNION_CARVEOUT=100, both)
#   bash scripts/h200-pending.sh 2    every perf case, the Compute benchmarks, pdl.cu, launchgap.cu
#   bash scripts/h200-pending.sh 3    FLASH_ATTN_EXT tests and the prefill A/B of 4 and 8 warps, the goal
#                                     cases (scripts/perf-goals.re), the chain, fattn_mma's and the decode
#                                     goal's fattn_dect stall reasons (Nsight Compute), every perf case
#                                     while time is left
#   bash scripts/h200-pending.sh 5    the shortest check: FLASH_ATTN_EXT and SOFT_MAX tested, the decode
#                                     cases and SOFT_MAX [8192,1] timed
#   (parts 4 and 6, the runs of sessions 20 and 21 that part 7 superseded, are in git history)
#   bash scripts/h200-pending.sh 7    fattn_dect by the device's nvcc with cp.async and with bulk copies
#                                     against the carried build, TERNION_FATTN_DEC_WAVES 1-3, the goals
#   (parts 8 and 9, session 22's first run: the split SOFT_MAX against a baseline build,
#   TERNION_MMVT2 and the work-stealing decode A/B'd, are in git history)
#   bash scripts/h200-pending.sh 10   TERNION_NO_SOFTMAX_CLUSTER's A/B of the cluster SOFT_MAX, SOFT_MAX
#                                     and f16/bf16 MUL_MAT tested, the goals and every perf case
#   bash scripts/h200-pending.sh 11   part 10's A/B only (~60 s)
#   (part 12, session 23's first run with the reverted TERNION_SOFTMAX_CLW, is in git history)
#   (part 15, session 23's A/B of the then opt-in TERNION_FATTN_FOLD, is in git history)
#   bash scripts/h200-pending.sh 16   every op tested on the default build, TERNION_NO_FATTN_FOLD's A/B over
#                                     the one-query FA cases, on an H200 the goals
#   bash scripts/h200-pending.sh 17   on an H200 the goals first; TERNION_NO_FATTN_FOLD's A/B (one
#                                     round), TERNION_FATTN_DEC_BLOCKS=1 on q8_0/q4_0 K/V with the fold
#   bash scripts/h200-pending.sh 18   session 24's first run: on an H200 the goals; the fold A/B (one
#                                     round); the kernels of the n=512 MUL_MAT goal cases read one by one
#                                     (Nsight Compute, caches kept); BenchmarkMulMatVsBLAS
#   bash scripts/h200-pending.sh 20   session 24's last run: every op tested (mmvt and fattn_dect reading
#                                     early), on an H200 the goals and TERNION_NO_EARLY_READS's A/B
#   bash scripts/h200-pending.sh 21   session 25's last run: the n=1 and n=8 goal cases hot (as
#                                     test-backend-ops) and with --cold 512 (weights from DRAM)
#   (session 25's earlier parts 21, the mmvq8wf early and 3-slot A/Bs, are in git history)
#   bash scripts/h200-pending.sh 14   every op tested, the one-query FA cases timed against
#                                     TERNION_FATTN_DEC_BLOCKS=4 (the plan before f58324a), on an
#                                     H200 the goals
#   bash scripts/h200-pending.sh 13   the FA decode timeline (bench/experiments/fattn_tl.cu built by
#                                     the device's nvcc: 4 and 8 warps a block, 12-32 chunks),
#                                     TERNION_FATTN_DEC_BLOCKS=1's A/B over the one-query cases, on an
#                                     H200 the goals
# Logs go to $OUT (or ./out). Each step has a time limit; parts 1-3 stop
# starting steps near 560 s, parts 7 and 10 near $END (default 480, 540) and
# $ROUNDS (default 2) sets the A/B rounds, so that what ran comes back.
set -uo pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
part=${1:-1}
set --  # gpu-go-setup.sh reads $1 as a bundle path
export TERNION_CUDA_ARCHS=${TERNION_CUDA_ARCHS:-90}
. .gpu/gpu-go-setup.sh > /dev/null 2>&1 || { echo "no Go bundle in .gpu"; exit 1; }
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
left() { [ $(( $(date +%s) - T0 )) -lt "$1" ]; }
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; git log -1 --format='%H %s' 2>/dev/null
  grep -m1 -o '"compiler"[^,]*' kernels/gen/cuda/manifest.json 2>/dev/null; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
if [ ! -f kernels/gen/cuda/quant.fatbin ]; then
  ( time go generate ./kernels ) > "$OUT/generate.txt" 2>&1 || { tail -20 "$OUT/generate.txt"; exit 1; }
fi
go build -tags cuda -o /tmp/tB ./cmd/ternion || exit 1
echo "built at $(el) s"
P1='MUL_MAT(_ID)?\(type_a=(q4_0|q8_0|q4_K|q5_K|q6_K),type_b=f32,(n_mats=128,n_used=8,b=0,)?m=(4096|768|14336),n=1,'
# perf SECONDS REGEX [BINARY]: the matching perf cases, one short line each
# (the name without its default-valued tail, then runs, µs/run and rate);
# $PERFFLAGS adds flags (--cold 512).
perf() { timeout "$1" "${3:-/tmp/tB}" ops perf -d cuda -v --time 200ms ${PERFFLAGS:-} -p "$2" 2>&1 | grep "us/run" |
  sed -E 's/,bs=.*\)//; s/type_b=f32,//; s/mask=1,sinks=0,max_bias=0.000000,logit_softcap=0.000000,prec=f32,//; s/,?permute=\[0,1,2,3\]//; s/  +/ /g' | cut -c1-200; }
# goals BIN: the goal cases (scripts/perf-goals.re) timed by BIN, stopping
# by END - 20 s.
goals() {
  left $(( END - 60 )) && timeout $(( END - 20 - $(el) )) "$1" ops perf -d cuda -v --time 300ms -p "$(cat scripts/perf-goals.re)" > "$OUT/perf-goals.txt" 2>&1
  grep us/run "$OUT/perf-goals.txt" | awk -F'):' '{print substr($1,1,90) " |" $NF}' | sed 's/  */ /g'
  echo "goals at $(el) s"
}
# decode_profile BIN: Nsight Compute's readings of the decode goal's
# fattn_dect under BIN (h200-profile.sh runs /tmp/ternion), if started by
# END - 100 s.
decode_profile() {
  cp "$1" /tmp/ternion
  local dg='FLASH_ATTN_EXT\(hsk=128,hsv=128,nh=8,nr23=\[4,1\],kv=16384,nb=1,mask=1,sinks=0,max_bias=0.000000,logit_softcap=0.000000,prec=f32,type_KV=f16'
  left $(( END - 100 )) && DETAIL=fattn_dect STALLS=1 timeout 80 bash scripts/h200-profile.sh "$dg" > /dev/null 2>&1
  grep -E "fattn|Duration|DRAM Throughput|SM Active|Elapsed Cycles|long_scoreboard|wait  |issue_active|Warp Cycles Per Issued" "$OUT/profile.log" 2>/dev/null | cut -c1-160 | head -40
}
# switch_ab SWITCH TAG TESTS CASES [VALUE]: the ops matching TESTS tested
# with SWITCH=VALUE (default 1; test-TAG.txt), the perf cases matching CASES
# timed without and with it, ROUNDS times (perf-TAG.txt).
switch_ab() {
  local sw=$1 tag=$2 val=${5:-1}
  ( export "$sw=$val"; timeout 60 /tmp/tB ops test -d cuda --runs 2 -p "$3" > "$OUT/test-$tag.txt" 2>&1 )
  echo "$sw=$val $3: $(tail -1 "$OUT/test-$tag.txt")"; grep -m5 -E "FAIL|error" "$OUT/test-$tag.txt"
  for i in $(seq ${ROUNDS:-2}); do
    echo "== default"; perf 40 "$4" /tmp/tB
    echo "== $sw=$val"; ( export "$sw=$val"; perf 40 "$4" /tmp/tB )
  done > "$OUT/perf-$tag.txt" 2>&1
  grep -E "==|us/run" "$OUT/perf-$tag.txt" | sed -E 's/,mask=[01],sinks=0,.*\)//; s/ runs - /|/; s/us\/run.*//' | cut -c1-110
}
# cluster_ab: SOFT_MAX on the split (TERNION_NO_SOFTMAX_CLUSTER) against
# clusters, its long-row cases.
cluster_ab() {
  switch_ab TERNION_NO_SOFTMAX_CLUSTER cluster 'SOFT_MAX' 'SOFT_MAX\(type=f32,ne=\[(8192|16384|32768|65536|131072),(1|4|16),1,1\],mask=0'
}
case $part in
1)
  nvcc -O3 -arch=sm_90 -DTERNION_VENDOR_CUDA -I kernels -o /tmp/carveout bench/experiments/carveout.cu > "$OUT/carveout-build.txt" 2>&1 &
  timeout 200 /tmp/tB ops test -d cuda --runs 2 > "$OUT/test-all.txt" 2>&1
  tail -1 "$OUT/test-all.txt"; grep -m10 -E "FAIL|error" "$OUT/test-all.txt"; echo "tested at $(el) s"
  TERNION_MMVQ8WF=1 timeout 90 /tmp/tB ops test -d cuda --runs 2 -p 'MUL_MAT' > "$OUT/test-mulmat-mmvq8wf.txt" 2>&1
  tail -1 "$OUT/test-mulmat-mmvq8wf.txt"; grep -m10 -E "FAIL|error" "$OUT/test-mulmat-mmvq8wf.txt"; echo "tested mmvq8wf at $(el) s"
  wait
  left 450 && { echo "== FLASH_ATTN_EXT prefill (fattn_mma)"; perf 30 'FLASH_ATTN_EXT\(hsk=256'; } > "$OUT/perf-fattn.txt"; cat "$OUT/perf-fattn.txt"
  left 470 && { timeout 40 /tmp/carveout > "$OUT/carveout.txt" 2>&1; cat "$OUT/carveout.txt"; }
  left 520 && { echo "== q8y + mmvq8w"; perf 40 "$P1"; } > "$OUT/perf-n1.txt"
  left 540 && { echo "== TERNION_MMVQ8WF=1"; TERNION_MMVQ8WF=1 perf 40 "$P1"; } >> "$OUT/perf-n1.txt"
  left 550 && { echo "== TERNION_CARVEOUT=100"; TERNION_CARVEOUT=100 perf 40 "$P1"; } >> "$OUT/perf-n1.txt"
  left 560 && { echo "== TERNION_CARVEOUT=100 TERNION_MMVQ8WF=1"; TERNION_CARVEOUT=100 TERNION_MMVQ8WF=1 perf 40 "$P1"; } >> "$OUT/perf-n1.txt"
  cat "$OUT/perf-n1.txt" ;;
2)
  go test -c -tags cuda -o /tmp/cudatest ./cuda/ > "$OUT/cudatest-build.txt" 2>&1 &
  (nvcc -O3 -arch=sm_90 -o /tmp/pdl bench/experiments/pdl.cu
   nvcc -O3 -arch=sm_90 -DTERNION_VENDOR_CUDA -I kernels -o /tmp/launchgap bench/experiments/launchgap.cu -lcuda) > "$OUT/exp-build.txt" 2>&1 &
  timeout 300 /tmp/tB ops perf -d cuda -v --time 200ms > "$OUT/perf-all.txt" 2>&1
  echo "perf at $(el) s: $(grep -c us/run "$OUT/perf-all.txt") cases"
  wait
  left 480 && timeout 60 /tmp/cudatest -test.run XXX -test.bench 'ComputeChain1000|GraphReplay1000|QuantPair|DecodeLayers32' -test.benchtime 2s > "$OUT/bench.txt" 2>&1
  grep -E "^Benchmark|^ok|FAIL" "$OUT/bench.txt"
  left 530 && timeout 20 /tmp/pdl > "$OUT/pdl.txt" 2>&1; tail -6 "$OUT/pdl.txt"
  left 550 && timeout 20 /tmp/launchgap kernels/gen/cuda/quant.fatbin > "$OUT/launchgap.txt" 2>&1; tail -3 "$OUT/launchgap.txt" ;;
3)
  # Session 19: FLASH_ATTN_EXT tested and its prefill timed with 4 and 8
  # warps a block (TERNION_FATTN_MMA8), the goal cases with Perf's warm-up (no
  # capture timed), the chain, fattn_mma's stall reasons (Nsight Compute),
  # then every perf case while time is left.
  G=$(cat scripts/perf-goals.re)
  go test -c -tags cuda -o /tmp/cudatest ./cuda/ > "$OUT/cudatest-build.txt" 2>&1 &
  timeout 60 /tmp/tB ops test -d cuda --runs 2 -p FLASH_ATTN_EXT > "$OUT/test-fattn.txt" 2>&1
  TERNION_FATTN_MMA8=1 timeout 60 /tmp/tB ops test -d cuda --runs 2 -p 'FLASH_ATTN_EXT\(hsk=256' > "$OUT/test-fattn-mma8.txt" 2>&1
  for f in test-fattn test-fattn-mma8; do echo "$f: $(tail -1 "$OUT/$f.txt")"; grep -m5 -E "FAIL|error" "$OUT/$f.txt"; done
  for i in 1 2; do
    echo "== 4 warps"; perf 30 'FLASH_ATTN_EXT\(hsk=256,hsv=256,nh=2,nr23=\[16,1\],kv=10000'
    echo "== TERNION_FATTN_MMA8=1"; TERNION_FATTN_MMA8=1 perf 30 'FLASH_ATTN_EXT\(hsk=256,hsv=256,nh=2,nr23=\[16,1\],kv=10000'
  done > "$OUT/perf-fattn.txt" 2>&1
  sed -E 's/FLASH_ATTN_EXT\(hsk=256,hsv=256,nh=2,nr23=\[16,1\],kv=10000,nb=512,mask=1,sinks=0,max_bias=0.000000,logit_softcap=0.000000,prec=f32,type_KV=f16,permute=\[0,1,2,3\]\)/FA prefill/' "$OUT/perf-fattn.txt"
  echo "fattn at $(el) s"
  timeout 150 /tmp/tB ops perf -d cuda -v --time 300ms -p "$G" > "$OUT/perf-goals.txt" 2>&1
  grep us/run "$OUT/perf-goals.txt" | awk -F'):' '{print substr($1,1,90) " |" $NF}' | sed 's/  */ /g'
  echo "goals at $(el) s"
  wait
  timeout 40 /tmp/cudatest -test.run XXX -test.bench 'ComputeChain1000' -test.benchtime 2s -test.count 2 > "$OUT/bench.txt" 2>&1
  grep -E "^Benchmark|^ok|FAIL" "$OUT/bench.txt"
  cp /tmp/tB /tmp/ternion
  left 330 && DETAIL=fattn_mma STALLS=1 timeout 80 bash scripts/h200-profile.sh 'FLASH_ATTN_EXT\(hsk=256' > /dev/null 2>&1
  left 400 && DETAIL=fattn_dect STALLS=1 timeout 80 bash scripts/h200-profile.sh 'FLASH_ATTN_EXT\(hsk=128,hsv=128,nh=8,nr23=\[4,1\],kv=16384,nb=1,mask=1,sinks=0,max_bias=0.000000,logit_softcap=0.000000,prec=f32,type_KV=f16' > /dev/null 2>&1
  left 460 && timeout 80 bash scripts/h200-profile.sh 'FLASH_ATTN_EXT\(hsk=64,hsv=64,nh=8,nr23=\[8,1\],kv=7680,nb=4' \
    'SOFT_MAX\(type=f32,ne=\[8192,1,1,1\]' 'MUL_MAT_ID\(type_a=q4_0,type_b=f32,n_mats=128,n_used=8,b=0,m=768,n=1,' > /dev/null 2>&1
  grep -E "__|fattn|=====|softmax|mmvq|q8y" "$OUT/profile.log" | cut -c1-160 | head -120
  left 500 && timeout $(( 565 - $(el) )) /tmp/tB ops perf -d cuda -v --time 200ms > "$OUT/perf-all.txt" 2>&1
  echo "perf at $(el) s: $(grep -c us/run "$OUT/perf-all.txt") cases" ;;
5)
  # The shortest check of the default build (carried nvcc 11.8 fatbins):
  # FLASH_ATTN_EXT and SOFT_MAX tested, the one-query decode cases and the
  # tiny SOFT_MAX row timed.
  timeout 60 /tmp/tB ops test -d cuda --runs 2 -p 'FLASH_ATTN_EXT|SOFT_MAX' > "$OUT/test-fattn-softmax.txt" 2>&1
  echo "FLASH_ATTN_EXT|SOFT_MAX: $(tail -1 "$OUT/test-fattn-softmax.txt")"; grep -m5 -E "FAIL|error" "$OUT/test-fattn-softmax.txt"
  perf 40 'FLASH_ATTN_EXT.*nb=1,|SOFT_MAX\(type=f32,ne=\[(8192|131072),(1|16),1,1\]' > "$OUT/perf-decode.txt" 2>&1
  cat "$OUT/perf-decode.txt" ;;
7)
  # Session 21 (second run): fattn_dect built by the device's nvcc with
  # 16-byte cp.async (/tmp/tC) and with bulk copies (/tmp/tB), against the
  # carried nvcc 11.8 build (/tmp/tA), each with TERNION_FATTN_DEC_WAVES 1
  # and 2 (3 for tA); the goals; the decode goal's readings at 2 waves.
  cp /tmp/tB /tmp/tA
  NV=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  for v in C B; do
    def=""; [ $v = B ] && def="-DTERNION_FATTN_BULK"
    ( time "$NV" -fatbin -O3 -I kernels $def --generate-code arch=compute_90,code=sm_90 --generate-code arch=compute_90,code=compute_90 \
        -o /tmp/fattn13$v.fatbin .gpu/fattn.unit.cu ) > "$OUT/fattn13$v-build.txt" 2>&1 &
  done
  timeout 120 /tmp/tA ops test -d cuda --runs 2 -p 'FLASH_ATTN_EXT|SOFT_MAX|MUL_MAT(_ID)?\(type_a=(q4_0|q8_0|q4_K|q5_K|q6_K).*,n=1,' > "$OUT/test-A.txt" 2>&1
  echo "tA FLASH_ATTN_EXT|SOFT_MAX|one-column MUL_MAT: $(tail -1 "$OUT/test-A.txt")"; grep -m5 -E "FAIL|error" "$OUT/test-A.txt"
  TERNION_FATTN_DEC_WAVES=2 timeout 40 /tmp/tA ops test -d cuda --runs 2 -p 'FLASH_ATTN_EXT.*nb=1,' > "$OUT/test-A-waves2.txt" 2>&1
  echo "tA TERNION_FATTN_DEC_WAVES=2 one query: $(tail -1 "$OUT/test-A-waves2.txt")"; grep -m5 -E "FAIL|error" "$OUT/test-A-waves2.txt"
  wait
  "$NV" --version | tail -2 >> "$OUT/env.txt"
  cp kernels/gen/cuda/fattn.fatbin /tmp/fattn118.fatbin
  for v in C B; do
    tail -3 "$OUT/fattn13$v-build.txt"
    [ -s /tmp/fattn13$v.fatbin ] && cp /tmp/fattn13$v.fatbin kernels/gen/cuda/fattn.fatbin && go build -tags cuda -o /tmp/t$v ./cmd/ternion
  done
  cp /tmp/fattn118.fatbin kernels/gen/cuda/fattn.fatbin
  [ -x /tmp/tB ] && { timeout 60 /tmp/tB ops test -d cuda --runs 2 -p FLASH_ATTN_EXT > "$OUT/test-B.txt" 2>&1
    echo "tB FLASH_ATTN_EXT: $(tail -1 "$OUT/test-B.txt")"; grep -m5 -E "FAIL|error" "$OUT/test-B.txt"; }
  echo "tested at $(el) s"
  D='FLASH_ATTN_EXT\(hsk=(128,hsv=128,nh=8,nr23=\[4,1\],kv=16384|64,hsv=64,nh=8,nr23=\[8,1\],kv=7680|128,hsv=128,nh=8,nr23=\[1,1\],kv=16384),nb=1,'
  for i in $(seq ${ROUNDS:-2}); do
    for w in 1 2 3; do echo "== tA nvcc 11.8 cp.async, waves $w"; TERNION_FATTN_DEC_WAVES=$w perf 30 "$D" /tmp/tA; done
    for w in 1 2; do echo "== tC nvcc 13 cp.async, waves $w"; TERNION_FATTN_DEC_WAVES=$w perf 30 "$D" /tmp/tC; done
    for w in 1 2; do echo "== tB nvcc 13 bulk, waves $w"; TERNION_FATTN_DEC_WAVES=$w perf 30 "$D" /tmp/tB; done
  done > "$OUT/perf-decode.txt" 2>&1
  grep -E "==|FLASH" "$OUT/perf-decode.txt" | sed -E 's/FLASH_ATTN_EXT\(//; s/ runs - /|/; s/us\/run.*//' | cut -c1-110
  echo "decode at $(el) s"
  END=${END:-480}
  goals /tmp/tA
  TERNION_FATTN_DEC_WAVES=2 decode_profile /tmp/tA
  left $(( END - 40 )) && timeout $(( END - $(el) )) /tmp/tA ops perf -d cuda -v --time 200ms > "$OUT/perf-all.txt" 2>&1
  echo "perf at $(el) s: $(grep -c us/run "$OUT/perf-all.txt") cases" ;;
10)
  # The next run: the cluster SOFT_MAX A/B'd against the split, SOFT_MAX
  # and f16/bf16 MUL_MAT tested (mmvt2 and the cluster kernel by default
  # since session 22), the goals and every perf case (bounded by END,
  # default 540).
  END=${END:-540}
  cluster_ab
  timeout 90 /tmp/tB ops test -d cuda --runs 2 -p 'SOFT_MAX|MUL_MAT\(type_a=(f16|bf16)' > "$OUT/test-changed.txt" 2>&1
  echo "SOFT_MAX, f16/bf16 MUL_MAT: $(tail -1 "$OUT/test-changed.txt")"; grep -m10 -E "FAIL|error" "$OUT/test-changed.txt"
  goals /tmp/tB
  left $(( END - 40 )) && timeout $(( END - $(el) )) /tmp/tB ops perf -d cuda -v --time 200ms > "$OUT/perf-all.txt" 2>&1
  echo "perf at $(el) s: $(grep -c us/run "$OUT/perf-all.txt") cases" ;;
13)
  # Session 23's second run: the tree's fattn_dect with 4 and 8 warps a
  # block at 12-32 chunks, timed with the timeline of a launch each
  # (fattn_tl.cu); the one-query cases tested and timed with chunks planned
  # for one block a multiprocessor (TERNION_FATTN_DEC_BLOCKS=1) against the
  # default; the goals on an H200.
  NV=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  ( "$NV" --version | tail -1; "$NV" -O3 -arch=sm_90 -DTERNION_VENDOR_CUDA -I kernels -o /tmp/fattn_tl bench/experiments/fattn_tl.cu ) \
    > "$OUT/fattn_tl-build.txt" 2>&1 &
  switch_ab TERNION_FATTN_DEC_BLOCKS blocks1 'FLASH_ATTN_EXT' 'FLASH_ATTN_EXT\(hsk=(64|128),.*nb=1,'
  wait
  cat "$OUT/fattn_tl-build.txt"
  timeout 150 /tmp/fattn_tl > "$OUT/fattn_tl.txt" 2>&1; cat "$OUT/fattn_tl.txt"
  echo "timeline at $(el) s"
  if grep -q H200 "$OUT/env.txt"; then END=${END:-540}; goals /tmp/tB; fi ;;
16)
  # Session 23's last run: every op tested on the default build (one-query
  # FLASH_ATTN_EXT merged by each kv head's last block since the fold became
  # the default), the fold A/B'd against fattn_dec_combine
  # (TERNION_NO_FATTN_FOLD), the goals on an H200.
  timeout 240 /tmp/tB ops test -d cuda --runs 2 > "$OUT/test-all.txt" 2>&1
  tail -1 "$OUT/test-all.txt"; grep -m10 -E "FAIL|error" "$OUT/test-all.txt"; echo "tested at $(el) s"
  switch_ab TERNION_NO_FATTN_FOLD nofold 'FLASH_ATTN_EXT.*nb=1,' 'FLASH_ATTN_EXT\(hsk=(64|128),.*nb=1,'
  if grep -q H200 "$OUT/env.txt"; then END=${END:-560}; goals /tmp/tB; fi ;;
17)
  # Session 23: on an H200 the goals of the default build (fold, one block
  # a multiprocessor for f16 decode); the fold A/B'd; one block a
  # multiprocessor for quantized K/V now that more chunks cost no combine.
  if grep -q H200 "$OUT/env.txt"; then END=${END:-300}; goals /tmp/tB; fi
  ROUNDS=1 switch_ab TERNION_NO_FATTN_FOLD nofold 'FLASH_ATTN_EXT.*nb=1,' 'FLASH_ATTN_EXT\(hsk=(64|128),.*nb=1,'
  switch_ab TERNION_FATTN_DEC_BLOCKS blocks1q 'FLASH_ATTN_EXT.*type_KV=q' 'FLASH_ATTN_EXT\(hsk=128,.*nb=1,.*type_KV=q'
  echo "done at $(el) s" ;;
18)
  # Session 24's first run: the goals of the default build on an H200 (the
  # fold and the one-block plan never ran there); the fold A/B'd; where the
  # n=512 MUL_MAT cases' time goes, kernel by kernel (dequantize, src1's
  # conversion, the gemm: Nsight Compute with caches kept and clocks free);
  # the node against cuBLAS called directly (BenchmarkMulMatVsBLAS).
  go test -c -tags cuda -o /tmp/cudatest ./cuda/ > "$OUT/cudatest-build.txt" 2>&1 &
  if grep -q H200 "$OUT/env.txt"; then END=${END:-240}; goals /tmp/tB; fi
  ROUNDS=1 switch_ab TERNION_NO_FATTN_FOLD nofold 'FLASH_ATTN_EXT.*nb=1,' 'FLASH_ATTN_EXT\(hsk=(64|128),.*nb=1,'
  echo "fold A/B at $(el) s"
  cp /tmp/tB /tmp/ternion
  for t in f16 bf16 q4_0 q8_0; do
    SKIP=0 COUNT=12 NCUFLAGS="--cache-control none" timeout 60 bash scripts/h200-profile.sh "MUL_MAT\(type_a=$t,type_b=f32,m=4096,n=512,k=14336," > /dev/null 2>&1
  done
  grep -E "=====|Kernel|[0-9]" "$OUT/profile.log" 2>/dev/null | cut -c1-200 | head -80
  echo "profiled at $(el) s"
  wait
  timeout 90 /tmp/cudatest -test.run XXX -test.bench 'MulMatVsBLAS' -test.benchtime 1s > "$OUT/bench-vsblas.txt" 2>&1
  grep -E "^Benchmark|^ok|FAIL" "$OUT/bench-vsblas.txt" ;;
20)
  # Session 24's last run: every op tested on the default build (mmvt's
  # weights and fattn_dect's K/V requested before the kernel waits where
  # core allows it); on an H200 the goals, then the early reads A/B'd on the
  # goal cases they touch (f16/bf16 n=8, the one-query FA cases).
  timeout 240 /tmp/tB ops test -d cuda --runs 2 > "$OUT/test-all.txt" 2>&1
  tail -1 "$OUT/test-all.txt"; grep -m10 -E "FAIL|error" "$OUT/test-all.txt"; echo "tested at $(el) s"
  if grep -q H200 "$OUT/env.txt"; then
    END=${END:-450}; goals /tmp/tB
    switch_ab TERNION_NO_EARLY_READS noearly 'MUL_MAT\(type_a=(f16|bf16),.*n=8,' 'MUL_MAT\(type_a=(f16|bf16),type_b=f32,m=4096,n=8,|FLASH_ATTN_EXT\(hsk=128,.*kv=16384,nb=1,.*type_KV=f16'
  fi ;;
21)
  # Session 25's last run: the one-column and 8-column goal cases timed as
  # test-backend-ops times them (the same weights every repetition: from
  # the L2 where they fit) and with --cold 512 (copies of 512 MiB cycled:
  # from DRAM, as a model streams them), one round.
  C='MUL_MAT\(type_a=(f16|bf16|q4_0|q8_0|q4_K),type_b=f32,m=4096,n=(1|8),k=14336,'
  { echo "== hot"; perf 50 "$C"; echo "== cold"; PERFFLAGS="--cold 512" perf 90 "$C"; } 2>&1 | tee "$OUT/perf-cold.txt" ;;
14)
  # Session 23's last run: every op tested on the default build (f16
  # one-query FA planned for one block a multiprocessor since f58324a), the
  # one-query cases timed against TERNION_FATTN_DEC_BLOCKS=4 (the plan
  # before), the goals on an H200.
  timeout 240 /tmp/tB ops test -d cuda --runs 2 > "$OUT/test-all.txt" 2>&1
  tail -1 "$OUT/test-all.txt"; grep -m10 -E "FAIL|error" "$OUT/test-all.txt"; echo "tested at $(el) s"
  switch_ab TERNION_FATTN_DEC_BLOCKS blocks4 'FLASH_ATTN_EXT.*nb=1,' 'FLASH_ATTN_EXT\(hsk=(64|128),.*nb=1,' 4
  if grep -q H200 "$OUT/env.txt"; then END=${END:-540}; goals /tmp/tB; fi ;;
11)
  # The shortest form of part 10: the A/B only.
  cluster_ab ;;
esac
echo "done at $(el) s"
# The device tool brings back at most 8 files from $OUT: pack them when there are more.
n=$(ls "$OUT" | wc -l)
if [ "$n" -gt 8 ]; then (cd "$OUT" && tar czf logs.tgz --remove-files $(ls | grep -v '^logs.tgz$')); fi
