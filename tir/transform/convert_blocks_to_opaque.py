"""convert_blocks_to_opaque: replace block iterators by the loop expressions bound to them.

Second lowering pass. Each ``BlockRealize`` binds its block's iterators to
expressions of the enclosing loop variables; this pass substitutes those
expressions for the iterators in the block's body, init, reads and writes, and
leaves a block with no iterators (it keeps its name, predicate, buffers and
annotations). After it, every index is a function of loop variables only, which
is what lower_opaque_block and flatten_buffer need.
"""

from __future__ import annotations

from dataclasses import replace

from ..expr import PrimExpr, Var
from ..function import PrimFunc
from ..functor import StmtMutator, substitute
from ..stmt import BlockRealize


class _OpaqueConverter(StmtMutator):
    def visit_BlockRealize(self, realize: BlockRealize) -> BlockRealize:
        realize = self.generic_visit(realize)
        block = realize.block
        if not block.iter_vars:
            return realize
        bindings: dict[Var, PrimExpr] = {
            iter_var.var: value for iter_var, value in zip(block.iter_vars, realize.iter_values)
        }
        opaque = replace(
            block,
            iter_vars=(),
            reads=tuple(substitute(r, bindings) for r in block.reads),
            writes=tuple(substitute(w, bindings) for w in block.writes),
            body=substitute(block.body, bindings),
            init=None if block.init is None else substitute(block.init, bindings),
        )
        return replace(realize, iter_values=(), block=opaque)


def convert_blocks_to_opaque(func: PrimFunc) -> PrimFunc:
    """Substitute every block iterator by its bound value; blocks keep no iterators."""
    return func.with_body(_OpaqueConverter().visit(func.body))
