#!/usr/bin/env bash
# Issue 13 on the GPU machine (at most 8 minutes, about 5; H200, CUDA 13, CuPy; lark and xgboost wheels in .whl/):
# 64 trials of CUDA matmul 1024^3, where the wall time goes, before and after this round.
#
#     bash benchmarks/tuner_speed_gpu.sh            # from the repository root; outputs also in $OUT/*.txt
#
# 1. env: where nvcc is (the build workers compile CUDA candidates with it; without it the runner
#    compiles with NVRTC as before), CuPy's and CUDA's versions.
# 2. tests: the GPU tests of what changed (candidates built by the workers, loaded by the runner;
#    faults and hangs still caught).
# 3. after / before / seed1: `tune_matmul.py --target cuda --sizes 1024 --trials 64` (the issue's 45 s
#    target); then with --runner-compiles --search-workers 1 (every compile left to the runner's
#    NVRTC, one candidate after another, and every feature vector computed in the tuner, as before
#    this round; batches are streamed through the runner either way); then seed 1. Each run has
#    fresh compiler caches (TIR_CACHE_DIR, CUPY_CACHE_DIR) and prints "N s wall: ... cost model loop,
#    ... waiting for builds and measurements ...; measurements (beside the search or not): ... in the
#    runner (... loading[, K of 64 compiled by NVRTC there], ... checking, ... timing)" and the tuned
#    kernel re-timed beside cuBLAS and Triton.
set -u
source "$(dirname "$0")/device_env.sh"
fresh_caches() {
  TIR_CACHE_DIR=$(mktemp -d) CUPY_CACHE_DIR=$(mktemp -d)
  export TIR_CACHE_DIR CUPY_CACHE_DIR
}
step env 30 python3 -c 'import cupy; from codegen.cuda.nvcc import nvcc_path
print("nvcc:", nvcc_path() or "NOT FOUND: the runner compiles with NVRTC as before")
print("CuPy", cupy.__version__, "CUDA runtime", cupy.cuda.runtime.runtimeGetVersion())'
fresh_caches
step tests 90 python3 -m pytest -q -p no:cacheprovider -m gpu -x tests/codegen/test_cuda_runtime.py \
  "tests/tuner/test_measure.py::test_cuda_candidates_are_checked_timed_and_survive_faults_and_hangs"
fresh_caches
step after 120 python3 benchmarks/tune_matmul.py --target cuda --sizes 1024 --trials 64 --seeds 0
fresh_caches
step before 150 python3 benchmarks/tune_matmul.py --target cuda --sizes 1024 --trials 64 --seeds 0 \
  --runner-compiles --search-workers 1
fresh_caches
step seed1 100 python3 benchmarks/tune_matmul.py --target cuda --sizes 1024 --trials 64 --seeds 1
