#!/usr/bin/env bash
# The GPU checks of the 2026-11-25 (third) session, one part per device command (each under 10 minutes;
# H200, CUDA 13, CuPy, PyTorch, Triton; lark and xgboost wheels in .whl/):
#   bash benchmarks/session5_gpu.sh tests    # every `pytest -m gpu` test
#   bash benchmarks/session5_gpu.sh fp32     # vendor table: fp32 matmul 1024^3 and 4096^3, 64 trials each
#   bash benchmarks/session5_gpu.sh conv     # vendor table: conv2d_nhwc, depthwise_conv2d, 64 trials each
#   bash benchmarks/session5_gpu.sh tc       # tensor cores at 4096^3: the best hand tilings and 64 tuned trials, fp16
set -u
source "$(dirname "$0")/device_env.sh"
case "${1:-tests}" in
  tests)
    step gpu 560 python3 -m pytest -q -p no:cacheprovider -m gpu tests/
    ;;
  fp32)
    step fp32 560 python3 benchmarks/vendor_table.py --workloads matmul --matmul-sizes 4096 --trials 64 \
        --out "$OUT/vendor_fp32.jsonl"
    ;;
  conv)
    step conv 560 python3 benchmarks/vendor_table.py --workloads conv2d_nhwc,depthwise_conv2d --matmul-sizes "" \
        --trials 64 --out "$OUT/vendor_conv.jsonl"
    ;;
  tc)
    step tc 560 python3 benchmarks/tensorcore_matmul.py --sizes 4096 --dtypes float16 --trials 64 \
        --configs "mma:4,8,2/2,2/3;wmma:4,4,2/2,2/3;mma:4,8,1/2,4/3/step-ahead"
    ;;
  *) echo "usage: $0 tests|fp32|conv|tc" >&2; exit 2 ;;
esac
