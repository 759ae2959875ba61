#!/usr/bin/env bash
# Issue 16 item 1 on the GPU machine (CUDA, CuPy): the read_at/write_at staged matmul (shared A and B tiles,
# a local C tile) runs on the CUDA runtime and matches the executor; the layout primitives' C builds too.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
"$PYTHON" -m pytest -q -p no:cacheprovider tests/codegen/test_layout_primitive_builds.py -rs
