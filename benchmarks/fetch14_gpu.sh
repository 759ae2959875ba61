#!/usr/bin/env bash
# Issue 14 (faster copies, epilogue fusion, fused rows, the vendor table) on the GPU machine
# (H200, CUDA 13, CuPy, PyTorch, Triton; python3 with the project's dependencies):
#
#     bash benchmarks/fetch14_gpu.sh tests    # the kernels on CUDA against the executor (~2 min)
#     bash benchmarks/fetch14_gpu.sh table1   # vendor table, part 1 (~8 min on an H200)
#     bash benchmarks/fetch14_gpu.sh table2   # part 2 (~8 min), then the joined table
#
# Each part fits one 10-minute device command; the parts append to vendor_table.jsonl
# (in $OUT when set) and table2 prints the table over all rows for docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
PY=${PY:-python3}
RESULTS=${OUT:-.}/vendor_table.jsonl
case "${1:-tests}" in
  tests)
    $PY -m pytest -q -p no:cacheprovider -m gpu tests/codegen/test_gpu_fused_kernels.py tests/codegen/test_gpu.py
    $PY -m pytest -q -p no:cacheprovider tests/codegen/test_storage_align.py tests/tuner/test_fusion_rules.py
    ;;
  table1)
    $PY benchmarks/vendor_table.py --workloads matmul,matmul_bias_relu,batch_matmul,conv2d_nhwc,softmax \
        --matmul-sizes "" --out "$RESULTS"
    ;;
  table2)
    $PY benchmarks/vendor_table.py \
        --workloads depthwise_conv2d,conv_layer,reduction_sum,layer_norm,elementwise_chain,window_sum \
        --matmul-sizes 4096 --out "$RESULTS"
    $PY benchmarks/vendor_table.py --table "$RESULTS"
    ;;
  *) echo "usage: $0 tests|table1|table2" >&2; exit 2 ;;
esac
