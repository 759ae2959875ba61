"""Reductions of tensor expressions: ``te.comm_reducer`` and the reducers TVM defines with it.

A ``CommReducer`` is a combiner and an identity, both Python functions as in TVM:
``te.comm_reducer(lambda x, y: x + y, lambda dtype: te.const(0, dtype), name="sum")``. Called
on an expression, reduction axes and an optional ``where`` condition, it gives a
``Reduction``: the body of a reducing compute. A reducer of several values (argmax: an index
and a value) takes a tuple of expressions and gives a tuple of Reductions, one per output,
which ``te.compute`` turns into one op of several outputs. ``te.sum``, ``te.max`` and
``te.min`` are CommReducers.

>>> argmax = comm_reducer(
...     lambda x, y: (op.select(x[1] >= y[1], x[0], y[0]), op.select(x[1] >= y[1], x[1], y[1])),
...     lambda index_dtype, value_dtype: (const(-1, index_dtype), op.limit_value(value_dtype, False)),
...     name="argmax",
... )
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .. import op
from ..analysis.reducer import REDUCER_NAMES, combine, identity_of
from ..expr import Add, Max, Min, PrimExpr, const
from .axis import Axis


class CommReducer:
    """A commutative reducer: ``fcombine(x, y)`` merges two partial results (tuples for a reducer of
    several values), ``fidentity(*dtypes)`` is the result of reducing nothing."""

    def __init__(self, fcombine: Callable, fidentity: Callable, name: str = "reduce"):
        self.fcombine = fcombine
        self.fidentity = fidentity
        self.name = name

    def __call__(
        self, expr, axis: Axis | Sequence[Axis], where: PrimExpr | None = None
    ) -> Reduction | tuple[Reduction, ...]:
        several = isinstance(expr, (tuple, list))
        sources = tuple(const(e) for e in (expr if several else (expr,)))
        axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
        if not axes or not all(isinstance(a, Axis) and a.reduce for a in axes):
            raise TypeError(f"te.{self.name} reduces over te.reduce_axis axes, got {axis!r}")
        if where is not None:
            where = const(where)
            if not isinstance(where, PrimExpr) or where.dtype != "bool":
                raise TypeError(f"te.{self.name}(..., where=) takes a bool expression, not {where!r}")
        reductions = tuple(Reduction(self, sources, axes, where, i) for i in range(len(sources)))
        return reductions if several else reductions[0]

    def identity(self, dtypes: Sequence[str]) -> tuple[PrimExpr, ...]:
        values = self.fidentity(*dtypes)
        values = values if isinstance(values, (tuple, list)) else (values,)
        return tuple(op.cast(dtype, const(value)) for value, dtype in zip(values, dtypes, strict=True))

    def combine(self, lhs: Sequence[PrimExpr], rhs: Sequence[PrimExpr]) -> tuple[PrimExpr, ...]:
        several = len(lhs) > 1
        values = self.fcombine(tuple(lhs), tuple(rhs)) if several else self.fcombine(lhs[0], rhs[0])
        values = values if isinstance(values, (tuple, list)) else (values,)
        return tuple(const(value) for value in values)

    def __repr__(self) -> str:
        return f"comm_reducer({self.name})"


@dataclass(frozen=True, eq=False)
class Reduction:
    """Output ``value_index`` of ``reducer`` over ``sources`` and ``axes``: the body of a reducing
    ComputeOp (its whole body, as in TVM). Where ``condition`` is false an element takes no part."""

    reducer: CommReducer
    sources: tuple[PrimExpr, ...]
    axes: tuple[Axis, ...]
    condition: PrimExpr | None = None
    value_index: int = 0

    @property
    def dtype(self) -> str:
        return self.sources[self.value_index].dtype

    def same_call(self, other: Reduction) -> bool:
        """Whether ``other`` is another output of the same reducer call (argmax's index and value)."""
        mine, theirs = (
            (self.reducer, self.sources, self.axes, self.condition),
            (
                other.reducer,
                other.sources,
                other.axes,
                other.condition,
            ),
        )
        return all(a is b for a, b in zip(mine, theirs))

    def identities(self) -> tuple[PrimExpr, ...]:
        """The values every output starts from: 0, the lowest or the largest value of the dtype."""
        return self.reducer.identity([source.dtype for source in self.sources])

    def updates(self, accumulated: Sequence[PrimExpr]) -> tuple[PrimExpr, ...]:
        """Every output's next value from ``accumulated`` (their current values). Under ``where``
        a source is its identity where the condition is false (``T.if_then_else``: not read there)."""
        sources = self.sources
        if self.condition is not None:
            sources = tuple(
                op.call("if_then_else", self.condition, source, identity)
                for source, identity in zip(sources, self.identities())
            )
        return self.reducer.combine(accumulated, sources)


def comm_reducer(fcombine: Callable, fidentity: Callable, name: str = "reduce") -> CommReducer:
    """TVM's ``te.comm_reducer``: a reducer from a combiner and an identity (see the module docstring)."""
    return CommReducer(fcombine, fidentity, name)


def _tabled(kind: type) -> CommReducer:
    """The reducer of tir/analysis/reducer.py's table, so te, rfactor and the cross-thread
    lowering agree on its combiner and its identity (TVM's: ``T.min_value`` for max)."""
    return comm_reducer(
        lambda x, y: combine(kind, x, y), lambda dtype: identity_of(kind, dtype), name=REDUCER_NAMES[kind]
    )


sum = _tabled(Add)  # noqa: A001 - TVM's name
max = _tabled(Max)  # noqa: A001 - TVM's name
min = _tabled(Min)  # noqa: A001 - TVM's name
