#!/usr/bin/env bash
# Issue 20 on the GPU machine (H200, CUDA 13, CuPy; no network): the CUDA half of its checks.
# Scalars of every kind (Python numbers, wider numpy scalars, 0-d arrays) through CuPy, and the
# read-only `const T* __restrict__` kernels of every fixture and seed schedule against numpy.
# Run from the repository root: bash benchmarks/gpu_check_issue20.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -c "import cupy; print('CuPy', cupy.__version__, cupy.cuda.runtime.getDeviceProperties(0)['name'].decode())"
python3 -m pytest -q -m gpu tests/codegen/test_gpu.py tests/codegen/test_cuda_runtime.py -p no:cacheprovider
