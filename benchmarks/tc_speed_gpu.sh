#!/usr/bin/env bash
# Issue 15 items 6-7 on the GPU machine (H200, CUDA 13, CuPy, PyTorch, Triton; under 4 minutes): the tensor-core
# matmuls of the GPU tests (WMMA, mma.sync and the pipelined mma.sync staging: 16-byte cp.async fetches, padded
# tiles, 2-4 stages) against numpy, then the hand configurations at 1024^3 and 4096^3 in float16 and bfloat16
# (no tuning), each checked against float64 numpy before it is timed, against cuBLAS (torch.matmul) and Triton.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
"$PYTHON" -m pytest -q -p no:cacheprovider -m gpu tests/codegen/test_gpu_tensor_cores.py
# The best unpipelined configuration of the last measurement, then every pipelined one.
PIPELINED=$("$PYTHON" -c 'from benchmarks.tensorcore_matmul import PIPELINED_CONFIGS; print(PIPELINED_CONFIGS)')
"$PYTHON" benchmarks/tensorcore_matmul.py --trials 0 --sizes 1024,4096 --dtypes float16,bfloat16 \
    --configs "4,4,2/2,2;$PIPELINED"
