#!/usr/bin/env bash
# Issue 16 (branch script16) on the GPU machine: TVM's script constructs (T.reinterpret as
# __float_as_int, T.likely, typed if_then_else, log10/tan/trunc, T.ramp/T.broadcast, a buffer with
# offset_factor) built for CUDA and run through CuPy against the executor, plus the existing GPU suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pytest -q -m gpu tests/codegen/test_tvm_script_constructs_build.py tests/codegen/test_gpu.py
