#!/usr/bin/env bash
# Issue 16 (branch dyn) on the GPU machine: dynamic shapes on CUDA. The -m gpu tests build the
# dynamic tiled matmul and two row softmaxes (three kernels through workspaces; one block per row
# with cross-thread reductions) once and run them at several n (0 included) against numpy,
# with numpy and CuPy arrays; the benchmark times the dynamic build against builds specialized to
# each n. Then the existing GPU suite, to show nothing static changed.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pytest -q -m gpu tests/codegen/test_gpu_dynamic_shapes.py
python3 benchmarks/dynamic_shapes.py cuda
python3 -m pytest -q -m gpu tests/codegen/test_gpu.py
