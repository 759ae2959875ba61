"""Iteration axes of tensor expressions: the spatial axes ``te.compute`` makes and ``te.reduce_axis``.

An ``Axis`` is a variable and its range. In an expression it stands for its variable, as a TVM
IterVar does: ``k <= i`` and ``k + 1`` build IR (``tir.expr.const`` honours ``__tir_expr__``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .. import op
from ..expr import Range, Var, const


@dataclass(frozen=True, eq=False)
class Axis:
    """An iteration axis: a variable and its range, spatial (from te.compute) or reduction."""

    var: Var
    dom: Range
    reduce: bool = False

    def __repr__(self) -> str:
        kind = "reduce_axis" if self.reduce else "axis"
        return f"{kind}({self.var.name}, [{self.dom.min}, {self.dom.min + self.dom.extent}))"

    def __tir_expr__(self) -> Var:
        """In an expression an axis is its variable, as a TVM IterVar is (``where=k <= i``)."""
        return self.var


def _forward_to_var(operator: str) -> Callable:
    def forwarded(self: Axis, *others):
        return getattr(self.var, operator)(*others)

    forwarded.__name__ = operator
    return forwarded


for _operator in (
    *("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__neg__"),
    *("__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__lt__", "__le__", "__gt__", "__ge__"),
):
    setattr(Axis, _operator, _forward_to_var(_operator))


def reduce_axis(dom, name: str = "rv") -> Axis:
    """A reduction axis over ``range(extent)`` or ``(min, max)``: ``k = te.reduce_axis((0, n), name="k")``."""
    if isinstance(dom, (tuple, list)):
        lo, hi = dom
    else:
        lo, hi = 0, dom
    lo, hi = const(lo), const(hi)
    dtype = "int64" if "int64" in (lo.dtype, hi.dtype) else "int32"
    lo, hi = op.cast(dtype, lo), op.cast(dtype, hi)
    return Axis(Var(name, dtype), Range(lo, op.sub(hi, lo)), reduce=True)
