#!/usr/bin/env bash
# Everything this session's branches added that needs a GPU, in one device command (H200, CUDA 13,
# CuPy, PyTorch, Triton), from the repository root with lark and xgboost wheels in .whl/:
#   1. every `pytest -m gpu` test (pipelines, tensor cores, bfloat16, fused kernels, script constructs);
#   2. the tensor-core hand schedules against cuBLAS and Triton (benchmarks/tensorcore_matmul.py);
#   3. the vendor table for the cross-thread reductions, tuned at 64 trials (benchmarks/vendor_table.py).
# Each step has its own time limit so that the whole fits one 10-minute command.
set -u
source "$(dirname "$0")/device_env.sh"
nvidia-smi --query-gpu=name --format=csv,noheader
echo "== 1. pytest -m gpu"
timeout "${TESTS_S:-170}" python3 -m pytest -q -p no:cacheprovider -m gpu tests/ 2>&1 | tail -25
echo "== 2. tensor cores"
timeout "${TENSOR_S:-170}" python3 benchmarks/tensorcore_matmul.py --trials 0 2>&1 | tail -40
echo "== 3. vendor table"
timeout "${TABLE_S:-200}" python3 benchmarks/vendor_table.py --workloads "${TABLE_WORKLOADS:-softmax,reduction_sum,layer_norm}" \
    --matmul-sizes "" --trials "${TABLE_TRIALS:-64}" --out "${OUT:-/tmp}/vendor_table_session.jsonl" 2>&1 | tail -25
