#!/usr/bin/env bash
# The GPU checks of the 2026-11-25 (second) session after its branches merged, one part per device command
# (each under 10 minutes; H200, CUDA 13, CuPy, PyTorch, Triton; lark and xgboost wheels in .whl/):
#   bash benchmarks/session4_gpu.sh tests    # every `pytest -m gpu` test, dynamic shapes first (verbose)
#   bash benchmarks/session4_gpu.sh fp32     # vendor table: fp32 matmul and matmul_bias_relu 1024^3, 64 trials
#   bash benchmarks/session4_gpu.sh fp16     # vendor table in float16: matmul, batch_matmul, conv2d_nhwc, 64 trials
#   bash benchmarks/session4_gpu.sh fp32big  # vendor table: fp32 matmul 4096^3, 64 trials
# Each step has its own time limit and writes its whole output to $OUT (the folder that comes back).
set -u
source "$(dirname "$0")/device_env.sh"
case "${1:-tests}" in
  tests)
    step dynamic 100 python3 -m pytest -v -p no:cacheprovider -m gpu tests/codegen/test_gpu_dynamic_shapes.py
    step gpu 400 python3 -m pytest -q -p no:cacheprovider -m gpu tests/ \
        --ignore tests/codegen/test_gpu_dynamic_shapes.py
    ;;
  fp32)
    step fp32 560 python3 benchmarks/vendor_table.py --workloads matmul,matmul_bias_relu --matmul-sizes "" \
        --trials 64 --out "$OUT/vendor_fp32.jsonl"
    ;;
  fp16)
    step fp16 560 python3 benchmarks/vendor_table.py --dtype float16 --workloads matmul,batch_matmul,conv2d_nhwc \
        --matmul-sizes "" --trials 64 --out "$OUT/vendor_fp16.jsonl"
    ;;
  fp32big)
    step fp32big 560 python3 benchmarks/vendor_table.py --workloads "" --matmul-sizes 4096 --trials 64 \
        --out "$OUT/vendor_fp32big.jsonl"
    ;;
  *) echo "usage: $0 tests|fp32|fp16|fp32big" >&2; exit 2 ;;
esac
