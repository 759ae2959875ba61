#!/usr/bin/env bash
# Nsight Compute on the hand-scheduled matmuls (benchmarks/profile_kernels.py), for the GPU machine:
#   bash benchmarks/profile_gpu.sh "fp32-64:1024 fp32-128:4096 mma:4096"
# Prints each kernel's speed-of-light, memory, occupancy and warp-stall sections (details in $OUT when set).
set -u
source "$(dirname "$0")/device_env.sh"
for spec in ${1:-fp32-64:1024 fp32-128:4096 mma:4096}; do
  name=${spec%%:*}; n=${spec##*:}
  echo "== $name $n"
  timeout 150 ncu --clock-control none --launch-skip 2 --launch-count 1 -k regex:main_kernel \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section WarpStateStats --section LaunchStats --section ComputeWorkloadAnalysis \
    python3 benchmarks/profile_kernels.py "$name" "$n" > "${OUT:-/tmp}/ncu_${name}_${n}.txt" 2>&1
  grep -E "Duration|Throughput|Pipe|Bank|Occupancy|Registers|Shared Memory|Stall|Warp Cycles|Issued|Eligible|Block Limit|L1|L2 Hit|Mem Busy|ok$|rror" \
    "${OUT:-/tmp}/ncu_${name}_${n}.txt" | head -60
done
