"""simplify: fold every expression under the loop ranges around it; drop dead ifs and unit loops.

Last pass of the first lowering pipeline (``tir.transform.lower``), and the home
of ``LoopRangeMutator``, the mutator that other passes (flatten_buffer) use to
know the range of every enclosing loop variable and the conditions of enclosing
``if``s while they rewrite. ``simplify`` itself rewrites every expression with
the Analyzer, removes an ``IfThenElse`` whose condition is provably true or
false, and replaces a loop of extent 1 by its body with the loop variable set
to the loop's min. Thread-bound loops of extent 1 are kept: they say how a
kernel is launched, which the code generators need even when a dimension is 1.
"""

from __future__ import annotations

from dataclasses import replace

from .. import dtype as _dt
from .. import op as _op
from ..arith import Analyzer
from ..expr import IntImm, PrimExpr, Range
from ..function import PrimFunc
from ..functor import Mutator, substitute
from ..stmt import Allocate, Evaluate, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt, seq


class LoopRangeMutator(Mutator):
    """A Mutator whose ``analyzer`` knows every enclosing loop's range and ``if`` condition."""

    def __init__(self, analyzer: Analyzer | None = None):
        self.analyzer = analyzer or Analyzer()

    def visit_For(self, loop: For) -> Stmt | None:
        loop_min, extent = self.visit(loop.min), self.visit(loop.extent)
        self.analyzer.bind(loop.loop_var, Range(loop_min, extent))
        body = self.visit(loop.body)
        if body is None:
            return None
        if loop_min is loop.min and extent is loop.extent and body is loop.body:
            return loop
        return replace(loop, min=loop_min, extent=extent, body=body)

    def visit_IfThenElse(self, branch: IfThenElse) -> Stmt | None:
        condition = self.visit(branch.condition)
        with self.analyzer.constraint_scope(condition):
            then_case = self.visit(branch.then_case)
        else_case = None if branch.else_case is None else self.visit(branch.else_case)
        if then_case is None and else_case is None:
            return None
        if then_case is None:
            return IfThenElse(_op.logical_not(condition), else_case)
        if condition is branch.condition and then_case is branch.then_case and else_case is branch.else_case:
            return branch
        return IfThenElse(condition, then_case, else_case)

    def visit_LetStmt(self, let: LetStmt) -> Stmt | None:
        value = self.visit(let.value)
        if _dt.is_integer(value.dtype) and _dt.lanes_of(value.dtype) == 1:
            self.analyzer.update_bound(let.var, self.analyzer.const_int_bound(value))
        body = self.visit(let.body)
        if body is None:
            return None
        return let if value is let.value and body is let.body else LetStmt(let.var, value, body)

    def visit_Allocate(self, alloc: Allocate) -> Stmt | None:
        body = self.visit(alloc.body)
        if body is None:
            return None
        return alloc if body is alloc.body else replace(alloc, body=body)

    def visit_SeqStmt(self, stmts: SeqStmt) -> Stmt | None:
        items = [self.visit(s) for s in stmts.seq]
        if all(new is old for new, old in zip(items, stmts.seq)):
            return stmts
        kept = [s for s in items if s is not None]
        return seq(*kept) if kept else None


def _is_const(e: PrimExpr, value: int) -> bool:
    return isinstance(e, IntImm) and e.value == value


class _Simplifier(LoopRangeMutator):
    def visit(self, node):
        if isinstance(node, PrimExpr):
            return self.analyzer.simplify(node)
        return super().visit(node)

    def visit_For(self, loop: For) -> Stmt | None:
        extent = self.visit(loop.extent)
        if _is_const(extent, 1) and loop.kind is not ForKind.THREAD_BINDING:
            return self.visit(substitute(loop.body, {loop.loop_var: self.visit(loop.min)}))
        if _is_const(extent, 0):
            return None
        return super().visit_For(loop)

    def visit_IfThenElse(self, branch: IfThenElse) -> Stmt | None:
        condition = self.visit(branch.condition)
        if isinstance(condition, IntImm):
            taken = branch.then_case if condition.value else branch.else_case
            return None if taken is None else self.visit(taken)
        return super().visit_IfThenElse(branch)


def simplify(func: PrimFunc) -> PrimFunc:
    """Simplify every expression under its loop ranges; remove decided ifs and extent-1 loops."""
    body = _Simplifier().visit(func.body)
    return func.with_body(Evaluate(IntImm(0)) if body is None else body)
