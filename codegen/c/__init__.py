"""The C target: the CPU through the system C compiler (printer, compiler driver and ctypes runtime).

``BACKEND`` is its record in the registry (codegen/registry.py): functions are
printed whole (no kernel split), compiled ahead in the build workers, and run
through ``codegen.c.runtime``.
"""

from __future__ import annotations

from ..backend import Backend
from ..target import COMMON_DTYPES, Target
from .compiler import compile_library, find_compiler
from .printer import CPrinter, c_prelude


def _precompile(source: str, target: Target) -> object:
    return compile_library(source, find_compiler(target))


BACKEND = Backend(
    kind="c",
    aliases=("llvm", "cpu"),
    defaults=Target(
        kind="c",
        arch="native",
        max_threads_per_group=1 << 30,
        max_shared_memory_bytes=8 << 20,
        warp_size=1,
        vector_bytes=64,
        dtypes=COMMON_DTYPES | {"float64", "uint64", "bfloat16"},
    ),
    printer=CPrinter,
    prelude=c_prelude,
    is_gpu=False,
    exporter="codegen.c.export",
    runtimes={"cpu": "codegen.c.runtime"},
    precompile=_precompile,
)

__all__ = ["BACKEND"]
