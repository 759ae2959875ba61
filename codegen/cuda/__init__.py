"""The CUDA target: NVIDIA GPUs (printer, CuPy/NVRTC runtime, and nvcc for compile-only checks).

``BACKEND`` is its record in the registry (codegen/registry.py): sm_90 by
default, kernels launched through ``codegen.cuda.runtime`` (CuPy, imported only
when a module is loaded). Where nvcc is installed, the tuner's build workers
compile each candidate to a cached cubin (``_precompile``), so that the runner
loads it instead of compiling with NVRTC, one candidate at a time.
"""

from __future__ import annotations

from ..backend import Backend
from ..errors import CompileError
from ..target import COMMON_DTYPES, Target
from .nvcc import compile_with_nvcc, nvcc_available
from .printer import CUDAPrinter, cuda_prelude

# Shared memory a block may opt into (cudaFuncAttributeMaxDynamicSharedMemorySize) by compute
# capability, from the CUDA programming guide's table; other architectures keep the static 48 KB.
OPT_IN_SHARED_KB = {70: 96, 72: 48, 75: 64, 80: 163, 86: 99, 87: 163, 89: 99, 90: 227, 100: 227, 120: 99}


def opt_in_shared_bytes(arch: str) -> int:
    """Bytes of shared memory a kernel for ``arch`` ("sm_90", "sm_90a") may opt into, 0 if unknown."""
    digits = "".join(c for c in arch.partition("_")[2] if c.isdigit())
    return OPT_IN_SHARED_KB.get(int(digits), 0) * 1024 if digits else 0


def _precompile(source: str, target: Target) -> None:
    """Leave nvcc's cubin of ``source`` for ``target.arch`` in the cache, if nvcc is here.

    Only a head start: the runner loads the cubin when the GPU's architecture is
    ``target.arch`` and compiles with NVRTC otherwise. A source nvcc rejects is left
    to NVRTC too, so that the error the tuner records is the runtime's own.
    """
    if not nvcc_available():
        return
    try:
        compile_with_nvcc(source, target.arch)
    except CompileError:
        return


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
    precompile=_precompile,
    async_copy_arch=80,
    opt_in_shared_bytes=opt_in_shared_bytes,
)

__all__ = ["BACKEND"]
