"""Lane extraction: the scalar expression that computes one lane of a vector expression.

The printers emit a vector statement natively when the dialect has the vector
type and operations; otherwise (CUDA has no ``min`` on float4, a store whose
index is not aligned, a cast between vector types) they emit one scalar
statement per lane, built with ``lane(expr, i)``.

Before: ``C[T.Ramp(i, 1, 4)] = T.max(A[T.Ramp(i, 1, 4)], T.Broadcast(x, 4))``
lane 2: ``C[i + 2] = T.max(A[i + 2], x)``
"""

from __future__ import annotations

from dataclasses import replace

from tir import dtype as _dt
from tir import op as _op
from tir.expr import (
    BinaryOp,
    Broadcast,
    BufferLoad,
    Call,
    Cast,
    Not,
    PrimExpr,
    Ramp,
    Select,
)


def lanes_of(expr: PrimExpr) -> int:
    return _dt.lanes_of(expr.dtype)


def lane(expr: PrimExpr, index: int) -> PrimExpr:
    """The scalar value of lane ``index`` of ``expr`` (a scalar is its own every lane)."""
    if lanes_of(expr) == 1:
        return expr
    if isinstance(expr, Ramp):
        return _op.add(expr.base, _op.mul(expr.stride, index)) if index else expr.base
    if isinstance(expr, Broadcast):
        return expr.value
    if isinstance(expr, BufferLoad):
        return BufferLoad(expr.buffer, tuple(lane(i, index) for i in expr.indices))
    if isinstance(expr, BinaryOp):
        return type(expr)(lane(expr.a, index), lane(expr.b, index))
    if isinstance(expr, Not):
        return Not(lane(expr.a, index))
    if isinstance(expr, Select):
        return Select(
            lane(expr.condition, index), lane(expr.true_value, index), lane(expr.false_value, index)
        )
    if isinstance(expr, Cast):
        return Cast(_dt.element_of(expr.dtype), lane(expr.value, index))
    if isinstance(expr, Call):
        return replace(expr, dtype=_dt.element_of(expr.dtype), args=tuple(lane(a, index) for a in expr.args))
    raise NotImplementedError(f"cannot take a lane of {type(expr).__name__}")
