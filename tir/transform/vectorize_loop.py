"""vectorize_loop: turn ``T.vectorized`` loops of flat lowered IR into vector IR (TVM's VectorizeLoop).

Runs after ``tir.transform.lower`` (flat buffers, simplified indices) and before
unroll_loop. A vectorized loop ``for v in T.vectorized(n)`` whose body is
straight-line code becomes that body once, on vectors of ``lanes`` elements: the
store ``B[f(v)]`` becomes ``B[Ramp(f(0), 1, lanes)]``, a load whose index moves by
a constant stride becomes a Ramp load (stride 1 contiguous, other strides a
gather), loop-invariant values become ``Broadcast``, and arithmetic, comparisons,
casts, min/max, ``Select`` and the math intrinsics become lane-wise on
``float32x4``-style dtypes. ``lanes`` is at most ``vector_bytes`` over the widest
element the body touches; a longer loop whose extent is a multiple of it is split
into an outer ``T.unroll`` loop over vector-width chunks.

Whatever cannot be vectorized exactly becomes an ordinary serial loop, never
wrong code: an extent that is not 2, 4, 8 or 16 (or a multiple of the vector
width), an inner loop or allocation, an ``if`` or ``let`` that depends on the
loop variable, a guarded load (``if_then_else``) whose condition depends on it,
a store whose index does not advance by exactly 1, an index that is not affine
in the loop variable, a buffer the loop writes and reaches through two different
indices (a loop-carried dependence, such as a reduction into one location), an
intrinsic with no lane-wise form, or a barrier.
"""

from __future__ import annotations

from dataclasses import replace

from .. import dtype as _dt
from ..arith import Analyzer
from ..arith.modular import linear_form
from ..expr import (
    BinaryOp,
    Broadcast,
    BufferLoad,
    Call,
    Cast,
    FloatImm,
    IntImm,
    Let,
    Not,
    PrimExpr,
    Ramp,
    Range,
    Select,
    StringImm,
    Var,
)
from ..function import PrimFunc
from ..functor import Visitor, post_order_visit, substitute, uses_var
from ..op import INTRINSICS
from ..stmt import BufferStore, Evaluate, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt
from .inject_software_pipeline import ASYNC_COPY
from .simplify import LoopRangeMutator

VECTOR_WIDTHS = (16, 8, 4, 2)
# Intrinsics computed lane by lane (an async copy of a vector is one wider copy); if_then_else
# (a guard) and barriers are handled apart.
LANEWISE_INTRINSICS = (frozenset(INTRINSICS) | {ASYNC_COPY}) - {"if_then_else", "tvm_storage_sync"}


class NotVectorizable(Exception):
    """The loop body has something with no exact vector form; the loop stays serial."""


def vectorize_loop(func: PrimFunc, vector_bytes: int = 16) -> PrimFunc:
    """Replace every vectorized loop by vector IR, or by a serial loop where that is not exact.

    ``vector_bytes`` is the widest vector register (16 for float4): a float32 loop of
    extent 8 becomes two float32x4 chunks under a ``T.unroll(2)`` loop.
    """
    if vector_bytes <= 0:
        raise ValueError(f"vectorize_loop: vector_bytes must be positive, got {vector_bytes}")
    return func.with_body(_LoopVectorizer(vector_bytes).visit(func.body))


class _LoopVectorizer(LoopRangeMutator):
    def __init__(self, vector_bytes: int):
        super().__init__()
        self.vector_bytes = vector_bytes

    def visit_For(self, loop: For) -> Stmt:
        # Inner loops first: an inner vectorized loop is rewritten before its parent is judged.
        loop = super().visit_For(loop)
        if loop.kind is not ForKind.VECTORIZED:
            return loop
        lanes = _vector_lanes(loop, self.vector_bytes)
        if lanes is None:
            return replace(loop, kind=ForKind.SERIAL)
        try:
            return self._vectorize(loop, lanes)
        except NotVectorizable:
            return replace(loop, kind=ForKind.SERIAL)

    def _vectorize(self, loop: For, lanes: int) -> Stmt:
        var, extent = loop.loop_var, loop.extent.value
        lane = Var(var.name, var.dtype)
        self.analyzer.bind(lane, Range(IntImm(0, var.dtype), IntImm(lanes, var.dtype)))
        if extent == lanes:
            body = substitute(loop.body, {var: loop.min + lane})
            return _Vectorizer(lane, lanes, self.analyzer).vectorize(body)
        chunk = Var(f"{var.name}_outer", var.dtype)
        chunks = Range(IntImm(0, var.dtype), IntImm(extent // lanes, var.dtype))
        self.analyzer.bind(chunk, chunks)
        body = substitute(loop.body, {var: loop.min + chunk * lanes + lane})
        vector_body = _Vectorizer(lane, lanes, self.analyzer).vectorize(body)
        return For(chunk, chunks.min, chunks.extent, ForKind.UNROLLED, vector_body)


def _vector_lanes(loop: For, vector_bytes: int) -> int | None:
    """Lanes per vector for ``loop``, or None when it must stay scalar."""
    if not isinstance(loop.extent, IntImm):
        return None
    extent = loop.extent.value
    max_lanes = vector_bytes // _widest_element_bytes(loop.body)
    if extent in VECTOR_WIDTHS and extent <= max_lanes:
        return extent
    width = next((w for w in VECTOR_WIDTHS if w <= max_lanes), None)
    if width is not None and extent > width and extent % width == 0:
        return width
    return None


def _widest_element_bytes(body: Stmt) -> int:
    """Bytes of the widest scalar element that the body loads, stores or converts to."""
    finder = _ElementWidth()
    finder.visit(body)
    return finder.widest


class _ElementWidth(Visitor):
    """Looks at the data only: indices and conditions are addresses and control, not vector lanes."""

    def __init__(self):
        self.widest = 1

    def _note(self, dtype: str) -> None:
        if dtype != "handle":
            self.widest = max(self.widest, _dt.bits_of(_dt.element_of(dtype)) // 8)

    def visit_BufferStore(self, store: BufferStore) -> None:
        self._note(store.buffer.dtype)
        self.visit(store.value)

    def visit_BufferLoad(self, load: BufferLoad) -> None:
        self._note(load.buffer.dtype)

    def visit_Cast(self, cast: Cast) -> None:
        self._note(cast.dtype)
        self.visit(cast.value)

    def visit_IfThenElse(self, branch: IfThenElse) -> None:
        self.visit(branch.then_case)
        if branch.else_case is not None:
            self.visit(branch.else_case)


class _Vectorizer:
    """Rewrites one loop body for ``lane`` (0 <= lane < lanes) into vector IR, or raises NotVectorizable."""

    def __init__(self, lane: Var, lanes: int, analyzer: Analyzer):
        self.lane = lane
        self.lanes = lanes
        self.analyzer = analyzer

    def vectorize(self, body: Stmt) -> Stmt:
        self._check_dependences(body)
        return self.stmt(body)

    def _uses_lane(self, node) -> bool:
        return uses_var(node, lambda v: v is self.lane)

    # ------------------------------------------------------------ dependences

    def _check_dependences(self, body: Stmt) -> None:
        """Each buffer the body writes must be reached through one index that moves with the lane.

        Then every iteration touches its own elements of it, so running all lanes of
        each statement before the next one computes what the serial loop computes.
        """
        accesses: dict = {}
        written = set()

        def visit(node) -> None:
            if isinstance(node, (BufferLoad, BufferStore)):
                accesses.setdefault(node.buffer, []).append(node.indices)
            if isinstance(node, BufferStore):
                written.add(node.buffer)

        post_order_visit(body, visit)
        for buffer in written:
            forms = [self._index_forms(indices) for indices in accesses[buffer]]
            first = forms[0]
            if all(stride == 0 for _, stride in first):
                raise NotVectorizable(f"{buffer.name} is written at a location that does not move")
            for other in forms[1:]:
                if not self._same_forms(first, other):
                    raise NotVectorizable(f"{buffer.name} is written and accessed at another index")

    def _index_forms(self, indices) -> list[tuple[PrimExpr, int]]:
        forms = []
        for index in indices:
            form = self._linear(index)
            if form is None:
                raise NotVectorizable(f"index {index!r} is not affine in the loop variable")
            forms.append(form)
        return forms

    def _same_forms(self, a, b) -> bool:
        pairs = zip(a, b, strict=True)
        return all(sa == sb and self.analyzer.can_prove_equal(ba, bb) for (ba, sa), (bb, sb) in pairs)

    def _linear(self, index: PrimExpr) -> tuple[PrimExpr, int] | None:
        if _dt.lanes_of(index.dtype) != 1 or not _dt.is_integer(index.dtype):
            return None
        return linear_form(index, self.lane, self.analyzer)

    # ------------------------------------------------------------ statements

    def stmt(self, s: Stmt) -> Stmt:
        if isinstance(s, BufferStore):
            return self._store(s)
        if isinstance(s, SeqStmt):
            return SeqStmt(tuple(self.stmt(x) for x in s.seq))
        if isinstance(s, IfThenElse):
            self._require_invariant(s.condition, "an if condition")
            else_case = None if s.else_case is None else self.stmt(s.else_case)
            return IfThenElse(s.condition, self.stmt(s.then_case), else_case)
        if isinstance(s, LetStmt):
            self._require_invariant(s.value, "a let value")
            return LetStmt(s.var, s.value, self.stmt(s.body))
        if isinstance(s, Evaluate):
            if isinstance(s.value, Call) and s.value.op == "tvm_storage_sync":
                raise NotVectorizable("a barrier cannot run once per vector")
            return Evaluate(self.expr(s.value)) if self._uses_lane(s.value) else s
        raise NotVectorizable(f"{type(s).__name__} inside a vectorized loop")

    def _require_invariant(self, value: PrimExpr, what: str) -> None:
        if self._uses_lane(value):
            raise NotVectorizable(f"{what} depends on the loop variable")

    def _store(self, store: BufferStore) -> Stmt:
        indices, moving = self._vector_indices(store.indices)
        if moving is None or moving.stride.value != 1:
            raise NotVectorizable(f"the store to {store.buffer.name} does not advance by 1 per lane")
        return BufferStore(store.buffer, self._widen(self.expr(store.value)), indices)

    def _vector_indices(self, indices) -> tuple[tuple[PrimExpr, ...], Ramp | None]:
        """The indices with the one that moves with the lane made a Ramp (and that Ramp)."""
        out, moving = [], None
        for index in indices:
            if not self._uses_lane(index):
                out.append(index)
                continue
            form = self._linear(index)
            if form is None:
                raise NotVectorizable(f"index {index!r} is not affine in the loop variable")
            base, stride = form
            if stride == 0:
                out.append(base)
                continue
            if moving is not None:
                raise NotVectorizable("several indices move with the loop variable")
            moving = Ramp(base, IntImm(stride, base.dtype), self.lanes)
            out.append(moving)
        return tuple(out), moving

    # ------------------------------------------------------------ expressions

    def _widen(self, e: PrimExpr) -> PrimExpr:
        return Broadcast(e, self.lanes) if _dt.lanes_of(e.dtype) == 1 else e

    def expr(self, e: PrimExpr) -> PrimExpr:
        """``e`` for all lanes: a scalar when it does not depend on the lane, else a vector."""
        if not self._uses_lane(e):
            return e
        if _dt.is_integer(e.dtype) and _dt.lanes_of(e.dtype) == 1:
            form = self._linear(e)
            if form is not None:
                base, stride = form
                return base if stride == 0 else Ramp(base, IntImm(stride, base.dtype), self.lanes)
        if isinstance(e, BinaryOp):
            return type(e)(self._widen(self.expr(e.a)), self._widen(self.expr(e.b)))
        if isinstance(e, Not):
            return Not(self.expr(e.a))
        if isinstance(e, Cast):
            return Cast(_dt.with_lanes(e.dtype, self.lanes), self._widen(self.expr(e.value)))
        if isinstance(e, Select):
            return self._select(e.condition, e.true_value, e.false_value)
        if isinstance(e, BufferLoad):
            indices, _ = self._vector_indices(e.indices)
            return BufferLoad(e.buffer, indices)
        if isinstance(e, Call):
            return self._call(e)
        if isinstance(e, Let):
            self._require_invariant(e.value, "a let value")
            return Let(e.var, e.value, self.expr(e.body))
        if isinstance(e, (Var, IntImm, FloatImm, StringImm)):
            return e
        raise NotVectorizable(f"{type(e).__name__} has no lane-wise form here")

    def _select(self, condition: PrimExpr, true_value: PrimExpr, false_value: PrimExpr) -> PrimExpr:
        condition = self.expr(condition)
        # A scalar condition stays scalar: it picks a whole vector.
        return Select(condition, self._widen(self.expr(true_value)), self._widen(self.expr(false_value)))

    def _call(self, call: Call) -> PrimExpr:
        vector_dtype = _dt.with_lanes(call.dtype, self.lanes)
        if call.op in LANEWISE_INTRINSICS:
            return Call(vector_dtype, call.op, tuple(self._widen(self.expr(a)) for a in call.args))
        if call.op != "if_then_else":
            raise NotVectorizable(f"the intrinsic {call.op} has no lane-wise form")
        condition, true_value, false_value = call.args
        if not self._uses_lane(condition):
            branches = (self._widen(self.expr(true_value)), self._widen(self.expr(false_value)))
            return Call(vector_dtype, "if_then_else", (condition, *branches))
        # A lane-wise select evaluates both sides in every lane; only safe when the guard protects no load.
        if _has_load(true_value) or _has_load(false_value):
            raise NotVectorizable("if_then_else guards a load with a condition on the loop variable")
        return self._select(condition, true_value, false_value)


def _has_load(e: PrimExpr) -> bool:
    found = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, BufferLoad) else None)
    return bool(found)
