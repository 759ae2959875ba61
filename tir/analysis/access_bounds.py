"""Bounds of buffer accesses: proved in bounds, proved out of bounds, or undecided.

``verify_access_bounds(func)`` walks a PrimFunc (TensorIR with blocks, or
lowered IR) knowing, at every access, the ranges of the loops around it, the
values block iterators are bound to, and the conditions (``T.where``, ``if``,
``if_then_else``) that guard it. Each index of each ``BufferLoad`` and
``BufferStore`` gets a verdict against its dimension:

- **in bounds**: the analyzer proves ``0 <= index < extent`` (a symbolic extent too: under
  ``if i_0 * 32 + i_1 < n``, ``A[i_0 * 32 + i_1]`` of an ``(n,)`` buffer is in bounds);
- **out of bounds**: the index is an affine sum of loop variables that run over
  their whole constant ranges (no guard mentions them), so every value of its
  range is reached, and that range leaves ``[0, extent)``. ``for i in range(604)``
  reading ``C[i]`` of a 64-element ``C`` is one;
- **undecided**: anything else: data-dependent indices (a gather ``A[idx[i]]``),
  symbolic shapes the guards do not bound, guarded or non-affine indices.

A provably out-of-bounds access raises ``AccessBoundsError`` naming the
buffer, the index, the range it takes and the shape; undecided ones are left
alone (``tir.transform.insert_runtime_checks`` checks them at run time in
checked builds). An access in code that never runs (``if n > 100`` with ``n < 8``)
is judged as if it ran.

Before: ``for i in range(604): C[i] = A[i]`` with ``C: (64,)`` -> after:
``AccessBoundsError: ... C[i]: index i takes values in [0, 603], outside [0, 64) ...``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from ..arith import Analyzer
from ..buffer import Buffer
from ..expr import Add, BufferLoad, Call, IntImm, Mul, PrimExpr, Range, Select, Sub, Var
from ..function import PrimFunc
from ..functor import Mutator, collect_vars
from ..stmt import BlockRealize, BufferStore, For, IfThenElse, LetStmt

IN_BOUNDS, OUT_OF_BOUNDS, UNDECIDED = "in bounds", "out of bounds", "undecided"


class AccessBoundsError(ValueError):
    """A buffer access provably reads or writes outside the buffer; lists every such access."""


@dataclass(frozen=True)
class Verdict:
    """What is known about one index of one access; ``low``/``high`` when the range is exact."""

    status: str
    low: int | None = None
    high: int | None = None


class AccessWalker(Mutator):
    """A mutator that knows the loop ranges, iterator bindings and guards at every access.

    Subclasses override ``access(node, verdicts)`` (a BufferLoad or BufferStore whose
    children were already visited) and ``division(node)`` to act on them; both return
    the node to put in its place.
    """

    def __init__(self) -> None:
        self.analyzer = Analyzer()
        self.exact: dict[Var, tuple[int, int]] = {}  # loops that run over their whole constant range
        self.where = "the function body"

    # ------------------------------------------------------------ what subclasses override

    def access(self, node: BufferLoad | BufferStore, verdicts: list[Verdict]):
        return node

    def division(self, node: PrimExpr) -> PrimExpr:
        return node

    # ------------------------------------------------------------ verdicts

    def verdict(self, index: PrimExpr, extent: PrimExpr) -> Verdict:
        """Where ``index`` stands against ``[0, extent)`` under what is known here."""
        if not isinstance(extent, IntImm):  # a dynamic shape: in bounds when the guards prove it
            proved = self.analyzer.can_prove(index >= 0) and self.analyzer.can_prove(index < extent)
            return Verdict(IN_BOUNDS if proved else UNDECIDED)
        index = self.analyzer.simplify(index)
        bound = self.analyzer.const_int_bound(index)
        if bound.min_value >= 0 and bound.max_value < extent.value:
            return Verdict(IN_BOUNDS)
        terms = linear_terms(index)
        if terms is None or not all(var in self.exact for var in terms[0]):
            return Verdict(UNDECIDED)
        low = high = terms[1]
        for var, scale in terms[0].items():
            first, last = (scale * end for end in self.exact[var])
            low, high = low + min(first, last), high + max(first, last)
        if low < 0 or high >= extent.value:
            return Verdict(OUT_OF_BOUNDS, low, high)
        return Verdict(UNDECIDED)

    def verdicts(self, buffer: Buffer, indices: tuple[PrimExpr, ...]) -> list[Verdict]:
        return [self.verdict(index, extent) for index, extent in zip(indices, buffer.shape)]

    # ------------------------------------------------------------ scopes

    @contextmanager
    def guarded(self, condition: PrimExpr | None) -> Iterator[None]:
        """Under ``condition`` (None: some unknown one): its variables no longer run over whole ranges."""
        saved = dict(self.exact)
        if condition is None:
            self.exact.clear()
            yield
        else:
            for var in collect_vars(self.analyzer.simplify(condition)):
                self.exact.pop(var, None)
            with self.analyzer.constraint_scope(condition):
                yield
        self.exact = saved

    def visit_For(self, loop: For):
        low, extent = self.visit(loop.min), self.visit(loop.extent)
        self.analyzer.bind(loop.loop_var, Range(low, extent))
        if isinstance(low, IntImm) and isinstance(extent, IntImm) and extent.value >= 1:
            self.exact[loop.loop_var] = (low.value, low.value + extent.value - 1)
        body = self.visit(loop.body)
        self.exact.pop(loop.loop_var, None)
        if body is loop.body and low is loop.min and extent is loop.extent:
            return loop
        return replace(loop, min=low, extent=extent, body=body)

    def visit_LetStmt(self, let: LetStmt):
        value = self.visit(let.value)
        self.analyzer.bind(let.var, value)
        body = self.visit(let.body)
        return let if (value is let.value and body is let.body) else replace(let, value=value, body=body)

    def visit_IfThenElse(self, node: IfThenElse):
        condition = self.visit(node.condition)
        with self.guarded(condition):
            then_case = self.visit(node.then_case)
        else_case = node.else_case
        if else_case is not None:
            with self.guarded(None):
                else_case = self.visit(else_case)
        if then_case is node.then_case and else_case is node.else_case and condition is node.condition:
            return node
        return replace(node, condition=condition, then_case=then_case, else_case=else_case)

    def visit_BlockRealize(self, realize: BlockRealize):
        block = realize.block
        for iter_var, value in zip(block.iter_vars, realize.iter_values):
            self.analyzer.bind(iter_var.var, value)
        where, self.where = self.where, f"block '{block.name}'"
        guard = realize.predicate
        with _nothing() if _is_true(guard) else self.guarded(guard):
            init = self.visit(block.init) if block.init is not None else None
            body = self.visit(block.body)
        self.where = where
        if init is block.init and body is block.body:
            return realize
        return replace(realize, block=replace(block, init=init, body=body))

    # ------------------------------------------------------------ expressions

    def visit_Call(self, call: Call):
        if call.op != "if_then_else":
            return self.generic_visit(call)
        condition, then_value, else_value = call.args
        condition = self.visit(condition)
        with self.guarded(condition):
            then_value = self.visit(then_value)
        with self.guarded(None):
            else_value = self.visit(else_value)
        args = (condition, then_value, else_value)
        return call if all(a is b for a, b in zip(args, call.args)) else replace(call, args=args)

    def visit_Select(self, select: Select):
        condition = self.visit(select.condition)
        with self.guarded(condition):
            true_value = self.visit(select.true_value)
        with self.guarded(None):
            false_value = self.visit(select.false_value)
        new = (condition, true_value, false_value)
        if all(a is b for a, b in zip(new, (select.condition, select.true_value, select.false_value))):
            return select
        return Select(condition, true_value, false_value)

    def visit_BufferLoad(self, load: BufferLoad):
        load = self.generic_visit(load)
        return self.access(load, self.verdicts(load.buffer, load.indices))

    def visit_BufferStore(self, store: BufferStore):
        store = self.generic_visit(store)
        return self.access(store, self.verdicts(store.buffer, store.indices))

    def visit_FloorDiv(self, node):
        return self.division(self.generic_visit(node))

    visit_FloorMod = visit_Div = visit_Mod = visit_FloorDiv


def linear_terms(expr: PrimExpr) -> tuple[dict[Var, int], int] | None:
    """``expr`` as ``sum(scale * var) + constant`` with integer scales, or None when it is not one."""
    if isinstance(expr, IntImm):
        return {}, expr.value
    if isinstance(expr, Var):
        return {expr: 1}, 0
    if isinstance(expr, (Add, Sub)):
        a, b = linear_terms(expr.a), linear_terms(expr.b)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(expr, Add) else -1
        terms = dict(a[0])
        for var, scale in b[0].items():
            terms[var] = terms.get(var, 0) + sign * scale
        return {v: s for v, s in terms.items() if s}, a[1] + sign * b[1]
    if isinstance(expr, Mul):
        for factor, other in ((expr.a, expr.b), (expr.b, expr.a)):
            if isinstance(factor, IntImm):
                inner = linear_terms(other)
                if inner is None:
                    return None
                return {v: s * factor.value for v, s in inner[0].items()}, inner[1] * factor.value
    return None


class _Prover(AccessWalker):
    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    def access(self, node, verdicts):
        for dim, (index, verdict) in enumerate(zip(node.indices, verdicts)):
            if verdict.status == OUT_OF_BOUNDS:
                self.problems.append(describe_out_of_bounds(self.where, node, dim, index, verdict))
        return node


def describe_out_of_bounds(where: str, node, dim: int, index: PrimExpr, verdict: Verdict) -> str:
    """One line naming the access, the index, the range it takes and the buffer's shape."""
    buffer = node.buffer
    access = f"{buffer.name}[{', '.join(repr(i) for i in node.indices)}]"
    shape = tuple(int(d.value) if isinstance(d, IntImm) else repr(d) for d in buffer.shape)
    verb = "writes" if isinstance(node, BufferStore) else "reads"
    return (
        f"{where} {verb} {access}: index {index!r} takes values in [{verdict.low}, {verdict.high}], "
        f"outside [0, {shape[dim]}) in dimension {dim} of {buffer.name} (shape {shape})"
    )


def verify_access_bounds(func: PrimFunc) -> PrimFunc:
    """``func`` unchanged when no access is provably out of bounds; else raise ``AccessBoundsError``."""
    prover = _Prover()
    prover.visit(func.body)
    problems = list(dict.fromkeys(prover.problems))  # a repeated access is one problem
    if problems:
        count = len(problems)
        raise AccessBoundsError(
            f"{count} buffer access{'es' if count > 1 else ''} of '{func.name}' provably out of bounds:\n"
            + "\n".join(f"  - {p}" for p in problems)
            + "\nfix the loop extents or the indices, or guard the access with T.where / if"
        )
    return func


def _is_true(expr: PrimExpr) -> bool:
    return isinstance(expr, IntImm) and bool(expr.value)


@contextmanager
def _nothing() -> Iterator[None]:
    yield
