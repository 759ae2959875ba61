"""The CUDA target: NVIDIA GPUs (printer, CuPy/NVRTC runtime, and nvcc for compile-only checks).

``BACKEND`` is its record in the registry (codegen/registry.py): sm_90 by
default, kernels launched through ``codegen.cuda.runtime`` (CuPy, imported only
when a module is loaded).
"""

from __future__ import annotations

from ..backend import Backend
from ..target import COMMON_DTYPES, Target
from .printer import CUDAPrinter, cuda_prelude

BACKEND = Backend(
    kind="cuda",
    aliases=("gpu", "nvidia"),
    defaults=Target(
        kind="cuda",
        arch="sm_90",
        max_threads_per_group=1024,
        max_shared_memory_bytes=48 * 1024,
        warp_size=32,
        vector_bytes=16,
        dtypes=COMMON_DTYPES | {"float64", "uint64", "bfloat16"},
    ),
    printer=CUDAPrinter,
    prelude=cuda_prelude,
    is_gpu=True,
    exporter="codegen.cuda.export",
    runtimes={"gpu": "codegen.cuda.runtime"},
    async_copy_arch=80,
)

__all__ = ["BACKEND"]
