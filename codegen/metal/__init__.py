"""Apple Metal target: the MSL printer and runtime, and the host simulator (``codegen.metal.sim``).

``BACKEND`` is its record in the registry (codegen/registry.py): device "gpu"
runs through the Metal framework (``codegen.metal.runtime``, macOS), device
"sim" through the host simulator, chosen explicitly and never as a fallback.
"""

from __future__ import annotations

from ..backend import Backend
from ..target import COMMON_DTYPES, Target
from .printer import MetalPrinter, metal_prelude

BACKEND = Backend(
    kind="metal",
    aliases=("apple", "mps"),
    defaults=Target(
        kind="metal",
        arch="apple",
        max_threads_per_group=1024,
        max_shared_memory_bytes=32 * 1024,
        warp_size=32,
        vector_bytes=16,
        dtypes=COMMON_DTYPES | {"uint64", "bfloat16"},
    ),
    printer=MetalPrinter,
    prelude=metal_prelude,
    is_gpu=True,
    exporter="codegen.metal.export",
    runtimes={"gpu": "codegen.metal.runtime", "sim": "codegen.metal.sim"},
    group_word="threadgroup",
    shared_word="threadgroup",
    warp_reductions=True,
)

__all__ = ["BACKEND"]
