#!/usr/bin/env bash
# Issue 13 part A on the GPU machine (H200, CUDA 13, CuPy): the CUDA backend record's runtime is loaded by
# build and by the measurer's runner process, and a module whose "main" is not first tunes the same on CUDA.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
"$PYTHON" -m pytest -q -p no:cacheprovider -m gpu tests/codegen tests/tuner
"$PYTHON" -m pytest -q -p no:cacheprovider tests/codegen/test_backends.py tests/codegen/test_golden_sources.py \
    tests/tuner/test_main_function.py
"$PYTHON" - <<'PY'
from tir import IRModule
from tuner import tune, workloads

helper = workloads.make("reduction_sum", "48,40")["main"]
mod = IRModule({"row_sum": helper, "main": workloads.make("matmul", "256,256,256")["main"]})
result = tune(mod, "cuda", trials=8, db="/tmp/main_second.db", progress=False)
assert result.workload == "main" and result.flops == 2 * 256**3 and result.best_gflops > 0, result
print(f"cuda: tuned main (not first) over {result.trials} trials, best {result.best_gflops:.1f} GFLOPS")
PY
