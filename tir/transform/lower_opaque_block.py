"""lower_opaque_block: remove blocks, leaving loops, ``if``s and ``Allocate``s.

Third lowering pass; it expects blocks without iterators or init (run
lower_init_block and convert_blocks_to_opaque first). Each ``BlockRealize`` is
replaced by its body: the predicate (``T.where``) becomes an ``IfThenElse``
around it and each buffer the block allocates becomes an ``Allocate`` around
that, at the block's position (the root block's buffers therefore at the top of
the function body). Loop annotations stay; of block annotations,
``pragma_auto_unroll_max_step`` moves onto the outermost loops inside the block
(where TVM puts an attribute around the block's body, so it limits the same
loops), and the others go away with the blocks (codegen/annotations.py refuses
them at build).
"""

from __future__ import annotations

from dataclasses import replace

from ..expr import IntImm
from ..function import PrimFunc
from ..functor import Mutator
from ..stmt import Allocate, Block, BlockRealize, For, IfThenElse, Stmt
from .unroll_loop import AUTO_UNROLL_KEY


class _BlockRemover(Mutator):
    def visit_BlockRealize(self, realize: BlockRealize) -> Stmt:
        block = realize.block
        _check_opaque(block)
        body = self.visit(block.body)
        if AUTO_UNROLL_KEY in block.annotations:
            body = _OuterLoopAnnotator(block.annotations[AUTO_UNROLL_KEY]).visit(body)
        predicate = realize.predicate
        if not (isinstance(predicate, IntImm) and predicate.value):
            body = IfThenElse(predicate, body)
        for buffer in reversed(block.alloc_buffers):
            body = Allocate(buffer, body)
        return body

    def visit_Block(self, block: Block) -> Stmt:
        return self.visit_BlockRealize(BlockRealize((), IntImm(1, "bool"), block))


class _OuterLoopAnnotator(Mutator):
    """Puts the block's auto-unroll limit on the first loops below it (an inner loop's own wins)."""

    def __init__(self, value):
        self.value = value

    def visit_For(self, loop: For) -> Stmt:
        if AUTO_UNROLL_KEY in loop.annotations:
            return loop
        return replace(loop, annotations={**loop.annotations, AUTO_UNROLL_KEY: self.value})


def _check_opaque(block: Block) -> None:
    if block.iter_vars:
        raise ValueError(
            f"lower_opaque_block: block '{block.name}' still has iterators "
            f"({', '.join(iv.var.name for iv in block.iter_vars)}); run convert_blocks_to_opaque first"
        )
    if block.init is not None:
        raise ValueError(
            f"lower_opaque_block: block '{block.name}' still has an init; run lower_init_block first"
        )


def lower_opaque_block(func: PrimFunc) -> PrimFunc:
    """Replace every block by its body under its predicate and allocations."""
    return func.with_body(_BlockRemover().visit(func.body))
