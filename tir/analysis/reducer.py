"""Commutative reducers: which of sum, product, max and min a reduction update computes.

A reduction block's update is ``C[i] = C[i] op x`` (either operand order) with ``op``
one of Add, Mul, Max, Min and ``x`` not reading ``C``. ``match_reducer`` names the
combiner and returns ``x``; ``identity_of`` gives the combiner's identity for a dtype
(0, 1, the lowest and the highest value: -inf/+inf for floats). rfactor
(schedule/reduction.py) and the cross-thread reduction lowering
(tir/transform/lower_cross_thread_reduction.py) both stand on this.
"""

from __future__ import annotations

import numpy as np

from .. import dtype as _dt
from ..expr import Add, BufferLoad, FloatImm, IntImm, Max, Min, Mul, PrimExpr, const
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
    """The value ``e`` with ``combine(e, x) == x`` for every ``x`` of ``dtype``."""
    if kind is Add:
        return const(0, dtype)
    if kind is Mul:
        return const(1, dtype)
    if _dt.is_float(dtype):
        return FloatImm(float("-inf") if kind is Max else float("inf"), dtype)
    info = np.iinfo(np.dtype(dtype))
    return IntImm(int(info.min if kind is Max else info.max), dtype)


def combine(kind: type, a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a op b`` for the reducer ``kind``."""
    return kind(a, b) if kind in (Max, Min) else (a + b if kind is Add else a * b)


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
