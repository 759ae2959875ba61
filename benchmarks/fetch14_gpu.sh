#!/usr/bin/env bash
# Issue 14 (faster copies, epilogue fusion, fused rows, the vendor table) on the GPU machine
# (H200, CUDA 13, CuPy, PyTorch, Triton; python3 with the project's dependencies):
#
#     bash benchmarks/fetch14_gpu.sh tests    # the kernels on CUDA against the executor (~2 min)
#     bash benchmarks/fetch14_gpu.sh table1   # vendor table, part 1: five workloads (~5 min on an H200)
#     bash benchmarks/fetch14_gpu.sh table2   # part 2: the other six (~6 min)
#     bash benchmarks/fetch14_gpu.sh table3   # part 3: matmul 4096^3 (~3 min), then the joined table
#
# Each part fits one 10-minute device command and writes vendor_table_<part>.jsonl into $OUT
# (the current folder without OUT); table3 prints the table over the parts it finds there.
# Where each command starts on a fresh copy, join the three files that came back with
#     python benchmarks/vendor_table.py --table vendor_table_table*.jsonl
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
PY=${PY:-python3}
PART=${1:-tests}
RESULTS=${OUT:-.}/vendor_table_$PART.jsonl
case "$PART" in
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
        --matmul-sizes "" --out "$RESULTS"
    ;;
  table3)
    $PY benchmarks/vendor_table.py --workloads "" --matmul-sizes 4096 --out "$RESULTS"
    $PY benchmarks/vendor_table.py --table "${OUT:-.}"/vendor_table_table*.jsonl
    ;;
  *) echo "usage: $0 tests|table1|table2|table3" >&2; exit 2 ;;
esac
