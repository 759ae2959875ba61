#!/usr/bin/env bash
# Issue 17 on the GPU machine (H200 or H100, CUDA 13, CuPy; no network): the seeds' CUDA runs and the
# seed 003 benchmark on that machine's (quiet) CPU cores. Run from anywhere: bash benchmarks/seeds_on_gpu.sh
# lark and xgboost are not in the machine's image: carry their wheels in .whl/ (see docs/BENCHMARKS.md).
set -euo pipefail
source "$(dirname "$0")/device_env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# Needle's operators on CUDA through CuPy, against numpy (the same cases the simulator runs in CI)
python3 -m pytest -q -m gpu tests/codegen/test_needle_ops.py -p no:cacheprovider
# The seed examples, CUDA included where it runs
python3 examples/seeds/seed000_halide_metal.py
python3 examples/seeds/seed004_needle_metal.py --size 256 | grep -v '^ \|^#\|^kernel\|^using\|^}\|^$'
# Seed 003 on one core of this machine's CPU: Halide's schedule and the tuner's best against the FMA peak
python3 benchmarks/seed003_conv_layer.py --trials 32 --rounds 5
