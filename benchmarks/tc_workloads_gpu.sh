#!/usr/bin/env bash
# Issue 15 item 6 on the GPU machine (H200, CUDA 13, CuPy, PyTorch; no network), from the repository root:
#   bash benchmarks/tc_workloads_gpu.sh            (about 4 minutes)
# lark and xgboost are not in the machine's image: carry their wheels in .whl/ (see docs/BENCHMARKS.md).
# 1. The tuner's own tensor-core candidates (batch matmul, conv2d as an im2col GEMM in float16 and bfloat16,
#    a 100x72x40 matmul padded to the tile) run on tensor cores against numpy, with the hand schedules.
# 2. `tir tune batch_matmul --dtype float16 --target cuda` and the same for conv2d_nhwc: 8 trials each,
#    every candidate checked first; the best record must be tensorized (WMMA or mma.sync in its source).
# 3. The table for docs/BENCHMARKS.md: batch_matmul and conv2d_nhwc in float16 at the default shapes,
#    32 trials each, against PyTorch (cuBLAS / cuDNN) in float16.
set -euo pipefail
source "$(dirname "$0")/device_env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m pytest -q -p no:cacheprovider -rs -m gpu tests/codegen/test_gpu_tensor_cores.py
work=$(mktemp -d)
for workload in batch_matmul conv2d_nhwc; do
  python3 -m tuner.cli tune "$workload" --dtype float16 --target cuda --trials 8 --db "$work/cli.db"
  python3 - "$workload" "$work/cli.db" <<'PY'
import sys

from codegen.build import generate_source
from tuner import apply_best, workloads

name, db = sys.argv[1], sys.argv[2]
source, _ = generate_source(apply_best(workloads.make(name, None, "float16"), "cuda", db).mod, "cuda")
assert "wmma::mma_sync(" in source or "mma.sync.aligned" in source, f"the best {name} record is not tensorized"
print(f"{name} float16: the best record runs on tensor cores")
PY
done
python3 benchmarks/vendor_table.py --dtype float16 --workloads batch_matmul,conv2d_nhwc --trials 32 \
  --matmul-sizes '' --folder "$work/table"
