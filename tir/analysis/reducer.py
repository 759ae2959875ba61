"""Commutative reducers: which of sum, product, max and min a reduction update computes.

A reduction block's update is ``C[i] = C[i] op x`` (either operand order) with ``op``
one of Add, Mul, Max, Min and ``x`` not reading ``C``. ``match_reducer`` names the
combiner and returns ``x``; ``identity_of`` gives the combiner's identity for a dtype
as TVM takes it: 0, 1, and for max and min the dtype's lowest and highest finite value
(``T.min_value``/``T.max_value``, so a float max starts at -3.4e38, not -inf). rfactor
(schedule/reduction.py), the cross-thread reduction lowering
(tir/transform/lower_cross_thread_reduction.py) and ``te.sum``/``te.max``/``te.min``
(tir/te/reduction.py) all stand on this one table.
"""

from __future__ import annotations

from .. import op
from ..expr import Add, BufferLoad, Max, Min, Mul, PrimExpr, const
from ..functor import post_order_visit
from ..stmt import BufferStore
from ..structural import structural_equal

# The reducer's name, as intrinsics and generated code spell it.
REDUCER_NAMES: dict[type, str] = {Add: "sum", Mul: "product", Max: "max", Min: "min"}


def match_reducer(update: BufferStore) -> tuple[type | None, PrimExpr | None]:
    """The combiner class of ``C[i] = C[i] op x`` and the operand ``x`` (None, None if not a reduction)."""
    value = update.value
    if type(value) not in REDUCER_NAMES:
        return None, None
    for own, other in ((value.a, value.b), (value.b, value.a)):
        if _is_self_load(own, update) and not _reads(other, update):
            return type(value), other
    return None, None


def identity_of(kind: type, dtype: str) -> PrimExpr:
    """The value ``e`` with ``combine(e, x) == x`` for every finite ``x`` of ``dtype``: TVM's
    identities, the lowest finite value for max and the highest for min."""
    if kind is Add:
        return const(0, dtype)
    if kind is Mul:
        return const(1, dtype)
    return op.limit_value(dtype, largest=kind is Min)


def combine(kind: type, a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a op b`` for the reducer ``kind``."""
    return {Add: op.add, Mul: op.mul, Max: op.max_value, Min: op.min_value}[kind](a, b)


def _is_self_load(expr: PrimExpr, update: BufferStore) -> bool:
    return (
        isinstance(expr, BufferLoad)
        and expr.buffer is update.buffer
        and all(structural_equal(a, b) for a, b in zip(expr.indices, update.indices))
    )


def _reads(expr: PrimExpr, update: BufferStore) -> bool:
    found = []
    post_order_visit(
        expr, lambda n: found.append(n) if isinstance(n, BufferLoad) and n.buffer is update.buffer else None
    )
    return bool(found)
