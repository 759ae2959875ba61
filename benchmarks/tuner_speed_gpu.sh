#!/usr/bin/env bash
# Issue 13 on the GPU machine (about 3-4 minutes): 64 trials of CUDA matmul 1024^3, where the wall
# time goes, before and after the build workers compile with nvcc.
#
#     bash benchmarks/tuner_speed_gpu.sh            # from the repository root, python3 with CuPy
#
# 1. The GPU tests of what changed: candidates compiled by the build workers (nvcc) and loaded by
#    the runner, faults and hangs still caught (a failure here is printed, the timings still run).
# 2. `tune_matmul.py --target cuda --sizes 1024 --trials 64` (the issue's 45 s target), then the same
#    with --runner-compiles --search-workers 1 (every compile left to the runner's NVRTC, one
#    candidate after another, and every feature vector computed in the tuner, as before this change;
#    the batches are streamed through the runner either way). Each run has
#    fresh compiler caches (TIR_CACHE_DIR, CUPY_CACHE_DIR), so nothing is reused from the other.
#    Each prints "N s wall: ... cost model loop, ... waiting for builds and measurements ...;
#    measurements (beside the search or not): ... in the runner (... loading[, K of 64 compiled by
#    NVRTC there], ... checking, ... timing)" and the tuned kernel re-timed beside cuBLAS and Triton.
# 3. A second seed of the default run, if the time allows (the lead's budget: stop it with Ctrl-C).
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
PY=${PY:-python3}
fresh_caches() {
  TIR_CACHE_DIR=$(mktemp -d) CUPY_CACHE_DIR=$(mktemp -d)
  export TIR_CACHE_DIR CUPY_CACHE_DIR
}
echo "== nvcc: $($PY -c 'from codegen.cuda.nvcc import nvcc_path; print(nvcc_path() or "NOT FOUND: the runner compiles with NVRTC as before")')"
$PY -c 'import cupy; print("== CuPy", cupy.__version__, cupy.cuda.runtime.runtimeGetVersion())'
fresh_caches
$PY -m pytest -q -m gpu -x tests/codegen/test_cuda_runtime.py \
  "tests/tuner/test_measure.py::test_cuda_candidates_are_checked_timed_and_survive_faults_and_hangs" \
  || echo "== GPU TESTS FAILED (above)"
$PY benchmarks/replay_speed.py --steady 60
for run in "--seeds 0" "--seeds 0 --runner-compiles --search-workers 1" "--seeds 1"; do
  fresh_caches
  echo "== tune_matmul.py --target cuda --sizes 1024 --trials 64 $run"
  $PY benchmarks/tune_matmul.py --target cuda --sizes 1024 --trials 64 $run
done
