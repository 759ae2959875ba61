#!/usr/bin/env bash
# bfloat16 and float16 on the GPU machine (H200 or H100, CUDA 13, CuPy, ml_dtypes; no network), from
# the repository root: bash benchmarks/bf16_gpu.sh
# lark and xgboost are not in the machine's image: carry their wheels in .whl/ (see docs/BENCHMARKS.md).
# 1. The 16-bit kernels (elementwise, float32- and 16-bit-accumulated matmul) run by CuPy against the
#    executor, the float32 -> bfloat16 cast bit for bit, ml_dtypes.bfloat16 arrays in and out.
# 2. `tir tune matmul --dtype bfloat16 --target cuda`: 8 trials, every candidate checked first.
set -euo pipefail
source "$(dirname "$0")/device_env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m pytest -q -m gpu tests/codegen/test_half_precision.py -p no:cacheprovider -rs
python3 -m pytest -q tests/tir/test_bfloat16.py -p no:cacheprovider -k ml_dtypes -rs
work=$(mktemp -d)
python3 -m tuner.cli tune matmul --dtype bfloat16 --target cuda --shape 512,512,512 --trials 8 --db "$work/b.db"
