#!/usr/bin/env bash
# Issue 14 (software pipelining) on the GPU machine (H200, CUDA 13, CuPy, PyTorch, Triton): the pipelined
# matmuls (2-4 stages, cp.async and synchronous copies, scalar and float4 fetches) run through CuPy and checked
# against numpy, the CPU-side pipeline tests and goldens, then the benchmark against cuBLAS and Triton
# (the numbers for docs/BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
"$PYTHON" -m pytest -q -p no:cacheprovider -m gpu tests/codegen/test_gpu.py -k "pipelined or seed_schedule"
"$PYTHON" -m pytest -q -p no:cacheprovider tests/codegen/test_software_pipeline.py \
    tests/codegen/test_golden_sources.py tests/tuner/test_space_pipeline.py
"$PYTHON" benchmarks/pipeline_matmul.py --sizes 1024,4096
