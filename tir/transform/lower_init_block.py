"""lower_init_block: turn each block's ``T.init()`` into an ``if`` at the first reduction step.

First pass of the lowering (see ``tir.transform.lower``). A block with an init
becomes a block without one whose body is ``if <every reduction iterator equals
its domain's min>: init`` followed by the old body, which is exactly what the
executor does for a block with an init, made explicit so that later passes and
the code generators never see ``init``.
"""

from __future__ import annotations

from dataclasses import replace

from ..expr import IntImm, IterKind, PrimExpr
from ..function import PrimFunc
from ..functor import StmtMutator
from ..stmt import Block, IfThenElse, Stmt, seq


def _first_reduction_step(block: Block) -> PrimExpr | None:
    condition: PrimExpr | None = None
    for iter_var in block.iter_vars:
        if iter_var.kind is IterKind.REDUCE:
            is_first = iter_var.var.equal(iter_var.dom.min)
            condition = is_first if condition is None else condition & is_first
    return condition


class _InitLowerer(StmtMutator):
    def visit_Block(self, block: Block) -> Stmt:
        block = self.generic_visit(block)
        if block.init is None:
            return block
        condition = _first_reduction_step(block)
        # A block with no reduction iterator runs its init at every instance.
        always = condition is None or (isinstance(condition, IntImm) and condition.value)
        init = block.init if always else IfThenElse(condition, block.init)
        return replace(block, init=None, body=seq(init, block.body))


def lower_init_block(func: PrimFunc) -> PrimFunc:
    """Replace every block's init by an ``if`` on its first reduction step."""
    return func.with_body(_InitLowerer().visit(func.body))
