#!/usr/bin/env bash
# Issue 15 on the GPU machine (H200, CUDA 13, CuPy): the tensorized (WMMA) matmuls of the CI tests run on tensor
# cores through CuPy and checked against numpy, the CPU-side tensor-core tests (nvcc for sm_90, the Metal simulator,
# goldens), then the hand-scheduled WMMA matmul against torch.matmul and Triton (numbers for docs/BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
"$PYTHON" -m pytest -q -p no:cacheprovider -m gpu tests/codegen/test_gpu_tensor_cores.py
"$PYTHON" -m pytest -q -p no:cacheprovider tests/codegen/test_tensor_cores.py tests/codegen/test_golden_sources.py \
    tests/schedule/test_blockize_tensorize.py
"$PYTHON" benchmarks/tensorcore_matmul.py
