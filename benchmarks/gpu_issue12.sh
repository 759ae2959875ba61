#!/usr/bin/env bash
# Issue 12 on the GPU machine (H200 or H100, CUDA 13, CuPy, PyTorch; no network), from the repository root:
#   bash benchmarks/gpu_issue12.sh
# 1. DLPack: CuPy arrays and PyTorch tensors used in place; the exported cubin run by CuPy from its JSON.
# 2. The existing GPU suite (Module.benchmark now goes through codegen/timing.py).
# 3. The timing spread of a small parallel C kernel on an idle 16-core machine (the 10% check).
# 4. `tir tune --target cuda`: a run of 4 trials, then a resume to 6 (prints "resuming: 4 of 6 ...").
set -uo pipefail
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
python3 -m pytest -q -m gpu tests/codegen/test_gpu_dlpack_export.py tests/codegen/test_gpu.py -p no:cacheprovider
python3 benchmarks/timing_spread.py --runs 5
python3 benchmarks/timing_spread.py --size 128 --runs 5
work=$(mktemp -d)
python3 -m tuner.cli tune matmul --target cuda --shape 256,256,256 --trials 4 --db "$work/g.db"
python3 -m tuner.cli tune matmul --target cuda --shape 256,256,256 --trials 6 --db "$work/g.db"
python3 -m tuner.cli db best --db "$work/g.db"
