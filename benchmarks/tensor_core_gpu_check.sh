#!/usr/bin/env bash
# Issue 15 on the GPU machine (H200, CUDA 13, CuPy, PyTorch, Triton): the tensorized matmuls of the CI tests (WMMA and
# mma.sync, float16 and bfloat16) run on tensor cores through CuPy against numpy, the CPU-side tensor-core tests, then
# the benchmark table for docs/BENCHMARKS.md (hand schedules and 64 tuned trials against torch.matmul and Triton).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
"$PYTHON" -m pytest -q -p no:cacheprovider -m gpu tests/codegen/test_gpu_tensor_cores.py
"$PYTHON" -m pytest -q -p no:cacheprovider tests/codegen/test_tensor_cores.py tests/codegen/test_golden_sources.py \
    tests/schedule/test_blockize_tensorize.py tests/tuner/test_tensor_core_rule.py
"$PYTHON" benchmarks/tensorcore_matmul.py
