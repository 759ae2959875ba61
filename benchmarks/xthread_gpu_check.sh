#!/usr/bin/env bash
# Issue 14 (cross-thread reductions) on the GPU machine (H200, CUDA 13, CuPy, PyTorch): every cross-thread
# reduction schedule of the CI tests run through CuPy and checked against the reference executor, the
# golden sources, then softmax and row sums against torch (the numbers for docs/BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
"$PYTHON" -m pytest -q -p no:cacheprovider -m gpu tests/codegen/test_cross_thread_reduction.py tests/codegen/test_gpu.py
"$PYTHON" -m pytest -q -p no:cacheprovider tests/codegen/test_cross_thread_reduction.py \
    tests/codegen/test_golden_sources.py tests/codegen/test_annotations.py
"$PYTHON" benchmarks/cross_thread_reduction.py --target cuda
