"""Metal simdgroup_matrix intrinsics (8x8 tiles, collective over the 32 threads of a simdgroup).

Registered names (``TensorIntrin.get``), for ``d`` in f32 and f16 and ``src`` in shared and global:

- ``metal_simdgroup_load_8x8_{d}_{src}``: an 8x8 tile of memory into a ``metal.simdgroup`` fragment
- ``metal_simdgroup_store_8x8_{d}_{src}``: a fragment to memory
- ``metal_simdgroup_fill_8x8_{d}``: a fragment set to zero (a reduction's init)
- ``metal_simdgroup_mma_8x8x8_f32``, ``..._f16`` (half accumulator), ``..._f16f32`` (half inputs,
  float accumulator): ``C += A @ B`` on fragments
"""

from __future__ import annotations

from .templates import register_fill, register_load, register_mma, register_store

FRAGMENT = "metal.simdgroup"
_DTYPES = {"f32": "float32", "f16": "float16"}

for _short, _dtype in _DTYPES.items():
    for _src in ("shared", "global"):
        register_load(
            f"metal_simdgroup_load_8x8_{_short}_{_src}", "simdgroup_load", 8, 8, _dtype, _src, FRAGMENT
        )
        register_store(
            f"metal_simdgroup_store_8x8_{_short}_{_src}", "simdgroup_store", 8, 8, _dtype, FRAGMENT, _src
        )
    register_fill(f"metal_simdgroup_fill_8x8_{_short}", "simdgroup_fill", 8, 8, _dtype, FRAGMENT)

for _name, _in, _acc in (
    ("f32", "float32", "float32"),
    ("f16", "float16", "float16"),
    ("f16f32", "float16", "float32"),
):
    register_mma(
        f"metal_simdgroup_mma_8x8x8_{_name}",
        "simdgroup_multiply_accumulate",
        (8, 8, 8),
        _in,
        _acc,
        (FRAGMENT, FRAGMENT, FRAGMENT),
    )
