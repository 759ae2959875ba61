"""Lowering passes from TensorIR (loops around blocks) to block-free, flat IR for the code generators.

Each pass is a function ``PrimFunc -> PrimFunc`` in its own file, named like
TVM's. ``lower`` runs the first pipeline in order: lower_init_block,
convert_blocks_to_opaque, lower_opaque_block, flatten_buffer, simplify; the
target pipelines in ``codegen/pipeline.py`` build on it.
"""

from __future__ import annotations

from collections.abc import Callable

from ..function import PrimFunc
from .convert_blocks_to_opaque import convert_blocks_to_opaque
from .flatten_buffer import flatten_buffer
from .lower_init_block import lower_init_block
from .lower_opaque_block import lower_opaque_block
from .simplify import simplify

Pass = Callable[[PrimFunc], PrimFunc]

LOWERING_PASSES: tuple[Pass, ...] = (
    lower_init_block,
    convert_blocks_to_opaque,
    lower_opaque_block,
    flatten_buffer,
    simplify,
)


def lower(func: PrimFunc, dump: Callable[[str, PrimFunc], None] | None = None) -> PrimFunc:
    """Run the lowering passes in order; ``dump(pass_name, func)`` sees the IR after each."""
    for lowering_pass in LOWERING_PASSES:
        func = lowering_pass(func)
        if dump is not None:
            dump(lowering_pass.__name__, func)
    return func


__all__ = [
    "LOWERING_PASSES",
    "convert_blocks_to_opaque",
    "flatten_buffer",
    "lower",
    "lower_init_block",
    "lower_opaque_block",
    "simplify",
]
