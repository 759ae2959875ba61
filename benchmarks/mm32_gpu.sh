#!/usr/bin/env bash
# fp32 matmul at cuBLAS speed (issue 14, items 4-6) on the GPU machine (H200, CUDA 13, CuPy, PyTorch, Triton),
# about 3 minutes: the register-fragment matmuls (float4 fragments of transposed, spread shared tiles, cp.async
# pipelines) run through CuPy and checked against numpy, then the hand schedules at 1024^3 and 4096^3 against
# cuBLAS (TF32 off) and Triton fp32, each kernel checked against float64 first (the numbers for docs/BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader || true
"$PYTHON" -m pytest -q -p no:cacheprovider -m gpu tests/codegen/test_gpu.py -k "register_fragment"
"$PYTHON" benchmarks/pipeline_matmul.py --sizes 1024,4096
