#!/usr/bin/env bash
# fp32 matmul at cuBLAS speed (issue 14, items 4-6) on the GPU machine (H200, CUDA 13, CuPy, PyTorch, Triton).
#   bash benchmarks/mm32_gpu.sh          # about 3 minutes: the register-fragment matmuls (float4 fragments of
#                                        # transposed, spread shared tiles, cp.async pipelines) through CuPy against
#                                        # numpy, then the hand schedules at 1024^3 and 4096^3 against cuBLAS (TF32 off)
#                                        # and Triton fp32, each kernel checked against float64 first; last, softmax
#                                        # 1024x1024 with three global passes and with its row read once into shared
#                                        # memory as float4s, against torch.softmax (issue 14's softmax at 0.99x)
#   bash benchmarks/mm32_gpu.sh tune     # about 2 minutes: 64 trials at 1024^3 from an empty database (the space
#                                        # draws register fragments in half its samples), best rebuilt against cuBLAS
# Nsight Compute on the fragment kernels: bash benchmarks/profile_gpu.sh "frag-64:1024 frag-128:4096"
# From the repository root with the lark and xgboost wheels in .whl/ (the GPU machine has no network).
set -euo pipefail
source "$(dirname "$0")/device_env.sh"
PYTHON=${PYTHON:-python3}
if [ "${1:-bench}" = "tune" ]; then
    "$PYTHON" benchmarks/tune_matmul.py --target cuda --sizes 1024 --trials 64
    exit 0
fi
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader || true
"$PYTHON" -m pytest -q -p no:cacheprovider -m gpu tests/codegen/test_gpu.py -k "register_fragment"
"$PYTHON" benchmarks/pipeline_matmul.py --sizes 1024,4096
"$PYTHON" benchmarks/cross_thread_reduction.py --only softmax --threads 128,256,512
