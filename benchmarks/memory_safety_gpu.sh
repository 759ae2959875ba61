#!/usr/bin/env bash
# Issue 19 on an NVIDIA GPU (H200, CUDA 13, CuPy): the checked CUDA build reads its device-side
# check flags back after the launch (a wild gather index and a zero divisor raise, good inputs
# give numpy's numbers, the module keeps working), and the existing CUDA programs still run now
# that every build runs the bounds prover first. Run from the repository root:
#     bash benchmarks/memory_safety_gpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pytest -q -p no:cacheprovider -m gpu tests/codegen/test_memory_safety.py tests/codegen/test_gpu.py
