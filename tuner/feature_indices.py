"""Index arithmetic for the features (tuner/features.py): the loads in an expression, an index
evaluated over the lanes of a warp or an inner loop (numpy), flat addresses, and the bytes a
loop nest's accesses touch (its working set).

``evaluate_index`` takes numpy arrays for some loop variables (the others are 0) and returns the
index for every combination, so one call gives the addresses a warp's threads (or an inner
loop's iterations) touch at once; forms that are not plain integer arithmetic give None, and
the features then skip the access in their transaction and bank-conflict counts.
"""

from __future__ import annotations

import math

import numpy as np

from tir import dtype as _dt
from tir import expr as ir
from tir.arith import Analyzer
from tir.buffer import Buffer
from tir.expr import BufferLoad, IntImm, PrimExpr, Ramp, Var
from tir.functor import Visitor, collect_vars


class _Loads(Visitor):
    """The loads in an expression, each before the loads in its indices."""

    def __init__(self):
        self.found: list[BufferLoad] = []

    def visit_BufferLoad(self, load: BufferLoad) -> None:
        self.found.append(load)
        self.generic_visit(load)


def loads_of(expr: PrimExpr) -> list[BufferLoad]:
    loads = _Loads()
    loads.visit(expr)
    return loads.found


_NUMPY_BINARY = {
    ir.Add: np.add,
    ir.Sub: np.subtract,
    ir.Mul: np.multiply,
    ir.FloorDiv: np.floor_divide,
    ir.FloorMod: np.mod,
    ir.Div: np.floor_divide,  # indices are non-negative, where truncation and floor agree
    ir.Mod: np.mod,
    ir.Min: np.minimum,
    ir.Max: np.maximum,
}


def evaluate_index(expr: PrimExpr, env: dict[Var, np.ndarray]):
    """An index expression evaluated with numpy arrays for some variables (others are 0);
    None for forms that are not plain integer arithmetic."""
    kind = type(expr)
    if kind is IntImm:
        return expr.value
    if kind is Var:
        return env.get(expr, 0)
    operation = _NUMPY_BINARY.get(kind)
    if operation is not None:
        a, b = evaluate_index(expr.a, env), evaluate_index(expr.b, env)
        if a is None or b is None:
            return None
        if kind in (ir.FloorDiv, ir.FloorMod, ir.Div, ir.Mod) and np.any(np.asarray(b) == 0):
            return None
        return operation(a, b)
    if kind is ir.Cast:
        return evaluate_index(expr.value, env)
    if kind is ir.Broadcast:
        return evaluate_index(expr.value, env)
    if kind is Ramp:
        base, stride = evaluate_index(expr.base, env), evaluate_index(expr.stride, env)
        if base is None or stride is None:
            return None
        # Lanes go on the last axis, which the features' lane values (features.py) leave at size 1.
        return np.asarray(base) + np.asarray(stride) * np.arange(expr.lanes)
    return None


def flat_address(buffer: Buffer, indices: tuple[PrimExpr, ...], env: dict[Var, np.ndarray]):
    shape = buffer.static_shape()
    if len(indices) > 1 and shape is None:
        indices = indices[-1:]
        shape = (1,)
    address, stride = 0, 1
    for index, extent in zip(reversed(indices), reversed(shape or (1,))):
        value = evaluate_index(index, env)
        if value is None:
            return None
        address = address + np.asarray(value) * stride
        stride *= extent
    return address


def working_set(
    accesses: list[tuple[Buffer, tuple[PrimExpr, ...]]], analyzer: Analyzer, inner: dict[Var, int]
) -> float:
    """Distinct bytes of the accesses while the ``inner`` loops run (``analyzer`` bounds the
    others to one point): per buffer, the product over its indices of the distinct values of
    each, which is at most the index's span (its constant bounds) and at most the product of
    the extents of the inner loops it uses (the span of a flattened ``k * 1024 + j`` over 16
    values of ``j`` is 1024 k's wide, but it takes 16 values per k), and the buffer."""
    spans: dict[Buffer, float] = {}
    for buffer, indices in accesses:
        shape = buffer.static_shape() or (None,) * len(indices)
        elements = 1.0
        for index, extent in zip(indices, shape):
            lanes = index.lanes if isinstance(index, Ramp) else 1
            scalar = index.base if isinstance(index, Ramp) else index
            bound = analyzer.const_int_bound(scalar)
            values = math.prod(inner.get(v, 1) for v in collect_vars(scalar)) * lanes
            if bound.is_finite:
                values = min(values, bound.max_value - bound.min_value + lanes)
            elements *= min(values, extent) if extent else values
        nbytes = elements * _dt.bytes_of(_dt.element_of(buffer.dtype))
        spans[buffer] = max(spans.get(buffer, 0.0), nbytes)
    return sum(spans.values())
