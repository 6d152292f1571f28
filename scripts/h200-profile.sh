#!/usr/bin/env bash
# h200-profile.sh - Nsight Compute readings of the kernels behind named perf
# cases, on the device machine after `bash scripts/h200-run.sh` built
# /tmp/ternion (or it builds it). For each case: every kernel launch's
# duration, DRAM bytes, registers, grid and occupancy, and for kernels
# matching $DETAIL (a regex) the speed-of-light, memory, occupancy and
# warp-stall sections, and with STALLS=1 the warps' stall reasons per issued
# instruction and the pipes' utilisation, and with SASS=1 each SASS
# instruction's issue count and stall samples (CSV under $OUT). SKIP and COUNT (default 4 and 4)
# choose the launches read, NCUFLAGS adds options (--cache-control none). Logs go to $OUT/profile.log.
#   bash scripts/h200-profile.sh 'CASE-REGEX' ['CASE-REGEX'...]
set -uo pipefail
OUT=${OUT:-$PWD/out}; mkdir -p "$OUT"
cases=("$@")
set --
if [ ! -x /tmp/ternion ]; then
  . .gpu/gpu-go-setup.sh || exit 1
  go generate ./kernels && go build -tags cuda -o /tmp/ternion ./cmd/ternion || exit 1
fi
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem
DETAIL=${DETAIL:-^$}
for c in "${cases[@]}"; do
  echo "===== $c"
  "$NCU" --clock-control none ${NCUFLAGS:-} --metrics "$M" --launch-skip "${SKIP:-4}" --launch-count "${COUNT:-4}" --csv --page raw \
    /tmp/ternion ops perf -d cuda --time 50ms -p "$c" 2>/dev/null | M="$M" python3 -c '
import csv, os, sys
rows = [r for r in csv.reader(l for l in sys.stdin if l.startswith("\""))]
if rows:
    head, units = rows[0], rows[1]
    want = ("Kernel Name", "Grid Size", "Block Size") + tuple(os.environ["M"].split(","))
    keep = [i for i, h in enumerate(head) if h in want]
    for r in [head] + rows[2:]:
        print("  ".join(r[i] for i in keep))
' 
  if [ "$DETAIL" != '^$' ]; then
    "$NCU" --clock-control none -k "regex:$DETAIL" --launch-skip 4 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats \
      /tmp/ternion ops perf -d cuda --time 50ms -p "$c" 2>&1 | grep -v "^==PROF==" | tail -120
    if [ "${STALLS:-0}" = 1 ]; then
      S=smsp__average_warps_issue_stalled_
      SM=""
      for r in barrier long_scoreboard short_scoreboard mio_throttle math_pipe_throttle wait not_selected selected dispatch_stall lg_throttle no_instruction branch_resolving membar sleeping drain misc tex_throttle imc_miss; do
        SM="$SM,${S}${r}_per_issue_active.ratio"
      done
      P="sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.avg.per_cycle_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_xu_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum,gpu__time_duration.sum"
      "$NCU" --clock-control none -k "regex:$DETAIL" --launch-skip 4 --launch-count 1 --metrics "${P}${SM}" \
        /tmp/ternion ops perf -d cuda --time 50ms -p "$c" 2>&1 | grep -E "^\s+(sm|smsp|l1tex|gpu)__" | sed -E "s/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//"
    fi
    if [ "${SASS:-0}" = 1 ]; then # per-instruction issue counts and stall samples of the first $DETAIL kernel
      rep="$OUT/sass-$(echo "$DETAIL" | tr -c 'A-Za-z0-9_\n' _)"
      "$NCU" --clock-control none -k "regex:$DETAIL" --launch-skip 4 --launch-count 1 --section SourceCounters --section WarpStateStats \
        -f -o "$rep" /tmp/ternion ops perf -d cuda --time 50ms -p "$c" > /dev/null 2>&1
      "$NCU" -i "$rep.ncu-rep" --page source --csv --print-source sass > "$rep.csv" 2>&1
      echo "  per-instruction SASS: $rep.csv ($(wc -l < "$rep.csv") lines)"
    fi
  fi
done 2>&1 | tee -a "$OUT/profile.log"
