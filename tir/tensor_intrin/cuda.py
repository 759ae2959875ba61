"""CUDA tensor-core intrinsics through WMMA (``nvcuda::wmma``, 16x16x16, sm_70 and later).

Registered names (``TensorIntrin.get``), for ``src`` in shared and global:

- ``wmma_load_16x16x16_f16_a_{src}`` / ``..._b_{src}``: a half tile into a ``wmma.matrix_a`` /
  ``wmma.matrix_b`` fragment (row major)
- ``wmma_fill_16x16x16_{f32,f16}``: a ``wmma.accumulator`` fragment set to zero
- ``wmma_sync_16x16x16_f16f32``: ``C += A @ B``, half inputs, float accumulator
- ``wmma_sync_16x16x16_f16``: ``C += A @ B``, half inputs, half accumulator
- ``wmma_store_16x16x16_{f32,f16}_{src}``: an accumulator fragment to memory
- ``wmma_load_16x16x16_bf16_{a,b}_{src}``, ``wmma_sync_16x16x16_bf16f32``: the same for
  bfloat16 inputs with a float accumulator (sm_80 and later)

And PTX ``mma.sync.m16n8k16`` (sm_80 and later) on "warp" fragments (registers in PTX's
layout), half inputs loaded from shared memory with ``ldmatrix``:

- ``mma_ldmatrix_16x16_f16_a_shared``: A's 16x16 tile (``ldmatrix.x4``)
- ``mma_ldmatrix_16x8_f16_b_shared``: B's 16x8 tile, K x N row major (``ldmatrix.x2.trans``)
- ``mma_fill_16x8_f32``, ``mma_store_16x8_f32_{src}``: the float accumulator, zeroed and stored
- ``mma_sync_m16n8k16_f16f32``: ``C += A @ B`` on a 16x8 tile of C, 16 deep
- ``mma_ldmatrix_16x16_bf16_a_shared``, ``mma_ldmatrix_16x8_bf16_b_shared``,
  ``mma_sync_m16n8k16_bf16f32``: the same for bfloat16 inputs
"""

from __future__ import annotations

from .templates import register_fill, register_load, register_mma, register_store

_A, _B, _ACC = "wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"

_INPUTS = {"f16": "float16", "bf16": "bfloat16"}

for _short, _in in _INPUTS.items():
    for _src in ("shared", "global"):
        register_load(f"wmma_load_16x16x16_{_short}_a_{_src}", "wmma_load_matrix_sync", 16, 16, _in, _src, _A)
        register_load(f"wmma_load_16x16x16_{_short}_b_{_src}", "wmma_load_matrix_sync", 16, 16, _in, _src, _B)
for _short, _acc in (("f32", "float32"), ("f16", "float16")):
    for _src in ("shared", "global"):
        register_store(
            f"wmma_store_16x16x16_{_short}_{_src}", "wmma_store_matrix_sync", 16, 16, _acc, _ACC, _src
        )
    register_fill(f"wmma_fill_16x16x16_{_short}", "wmma_fill_fragment", 16, 16, _acc, _ACC)
for _short, _in in _INPUTS.items():
    register_mma(
        f"wmma_sync_16x16x16_{_short}f32", "wmma_mma_sync", (16, 16, 16), _in, "float32", (_A, _B, _ACC)
    )
register_mma("wmma_sync_16x16x16_f16", "wmma_mma_sync", (16, 16, 16), "float16", "float16", (_A, _B, _ACC))

for _short, _in in _INPUTS.items():
    register_load(f"mma_ldmatrix_16x16_{_short}_a_shared", "mma_ldmatrix_a", 16, 16, _in, "shared", "warp")
    register_load(f"mma_ldmatrix_16x8_{_short}_b_shared", "mma_ldmatrix_b", 16, 8, _in, "shared", "warp")
    register_mma(
        f"mma_sync_m16n8k16_{_short}f32", "mma_sync_m16n8k16", (16, 8, 16), _in, "float32", ("warp",) * 3
    )
register_fill("mma_fill_16x8_f32", "mma_fill", 16, 8, "float32", "warp")
for _src in ("shared", "global"):
    register_store(f"mma_store_16x8_f32_{_src}", "mma_store", 16, 8, "float32", "warp", _src)
