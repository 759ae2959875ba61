"""Constant integer bounds of index expressions: interval arithmetic over Python ints.

``const_int_bound(expr, var_bounds)`` gives inclusive ``[min_value, max_value]``
bounds of an integer expression when every variable is known to lie in its bound
(variables without one are unbounded). Infinity is the sentinel pair
``NEG_INF``/``POS_INF`` (as in TVM's ConstIntBound); arithmetic on bounds
saturates at them. The canonical simplifier asks this module whether a remainder
fits a divisor and whether a difference has a known sign; interval sets fall back
on it for expressions they cannot follow symbolically.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .. import dtype as _dt
from ..expr import (
    Add,
    Broadcast,
    Cast,
    CmpOp,
    Div,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    PrimExpr,
    Ramp,
    Select,
    Sub,
    Var,
)

POS_INF = 2**63 - 1
NEG_INF = -POS_INF
_INFS = (POS_INF, NEG_INF)


# Not frozen (nothing assigns its fields): a frozen dataclass is built ~2.5x slower, and the
# simplifier builds millions of these per tuning run. Hashable and compared by value as before.
@dataclass(slots=True, unsafe_hash=True)
class ConstIntBound:
    """Inclusive bounds; ``NEG_INF``/``POS_INF`` mean unbounded on that side."""

    min_value: int
    max_value: int

    POS_INF = POS_INF
    NEG_INF = NEG_INF

    @property
    def is_const(self) -> bool:
        return self.min_value == self.max_value and self.min_value not in _INFS

    @property
    def is_finite(self) -> bool:
        return self.min_value not in _INFS and self.max_value not in _INFS

    def within(self, low: int, high: int) -> bool:
        """Whether every value lies in ``[low, high]``."""
        return low <= self.min_value and self.max_value <= high

    def union(self, other: ConstIntBound) -> ConstIntBound:
        return ConstIntBound(min(self.min_value, other.min_value), max(self.max_value, other.max_value))

    def intersect(self, other: ConstIntBound) -> ConstIntBound:
        return ConstIntBound(max(self.min_value, other.min_value), min(self.max_value, other.max_value))


EVERYTHING = ConstIntBound(NEG_INF, POS_INF)


def _clamp(x: int) -> int:
    return POS_INF if x >= POS_INF else NEG_INF if x <= NEG_INF else x


def sat_add(x: int, y: int, toward: int) -> int:
    """``x + y`` saturating at the sentinels; ``toward`` decides ``inf + -inf``."""
    if x in _INFS or y in _INFS:
        if {x, y} == {POS_INF, NEG_INF}:
            return toward
        return x if x in _INFS else y
    return _clamp(x + y)


def sat_mul(x: int, y: int) -> int:
    if x == 0 or y == 0:
        return 0
    if x in _INFS or y in _INFS:
        return POS_INF if (x > 0) == (y > 0) else NEG_INF
    return _clamp(x * y)


def sat_floordiv(x: int, c: int) -> int:
    """``x // c`` for a finite nonzero ``c``."""
    if x in _INFS:
        return x if c > 0 else -x
    return x // c


def _trunc_div(x: int, c: int) -> int:
    if x in _INFS:
        return x if c > 0 else -x
    q = abs(x) // abs(c)
    return q if (x >= 0) == (c > 0) else -q


def bound_of_dtype(dtype: str) -> ConstIntBound:
    """The values a dtype can hold (64-bit types are treated as unbounded)."""
    base = _dt.element_of(dtype)
    if base == "bool":
        return ConstIntBound(0, 1)
    if not _dt.is_integer(base) or _dt.bits_of(base) >= 64:
        return ConstIntBound(0, POS_INF) if _dt.is_uint(base) else EVERYTHING
    bits = _dt.bits_of(base)
    if _dt.is_uint(base):
        return ConstIntBound(0, 2**bits - 1)
    return ConstIntBound(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def add_bounds(a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:
    return ConstIntBound(
        sat_add(a.min_value, b.min_value, NEG_INF), sat_add(a.max_value, b.max_value, POS_INF)
    )


def neg_bound(a: ConstIntBound) -> ConstIntBound:
    return ConstIntBound(-a.max_value, -a.min_value)


def mul_bounds(a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:
    corners = [sat_mul(x, y) for x in (a.min_value, a.max_value) for y in (b.min_value, b.max_value)]
    return ConstIntBound(min(corners), max(corners))


def scale_bound(a: ConstIntBound, c: int) -> ConstIntBound:
    return mul_bounds(a, ConstIntBound(c, c))


def floordiv_bounds(a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:
    # For a divisor of fixed sign, floor division is monotone in each operand, so the
    # extremes sit at the corners; a divisor range that holds 0 tells nothing.
    if b.min_value <= 0 <= b.max_value:
        return EVERYTHING
    return _corners(a, b, sat_floordiv)


def truncdiv_bounds(a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:
    if b.min_value <= 0 <= b.max_value:
        return EVERYTHING
    return _corners(a, b, _trunc_div)


def _corners(a: ConstIntBound, b: ConstIntBound, divide) -> ConstIntBound:
    values = []
    for y in (b.min_value, b.max_value):
        if y in _INFS:
            values.append(0)
            y = POS_INF - 1 if y > 0 else NEG_INF + 1
        values.extend(divide(x, y) for x in (a.min_value, a.max_value))
    return ConstIntBound(min(values), max(values))


def floormod_bounds(a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:
    if b.min_value > 0:
        if b.is_const and a.min_value not in _INFS and a.max_value not in _INFS:
            c = b.min_value
            if a.min_value // c == a.max_value // c:
                shift = a.min_value // c * c
                return ConstIntBound(a.min_value - shift, a.max_value - shift)
        top = b.max_value - 1 if b.max_value not in _INFS else POS_INF
        if a.min_value >= 0:
            top = min(top, a.max_value)
        return ConstIntBound(0, top)
    if b.max_value < 0:
        return ConstIntBound(b.min_value + 1 if b.min_value not in _INFS else NEG_INF, 0)
    return EVERYTHING


def truncmod_bounds(a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:
    largest = max(abs(b.min_value), abs(b.max_value))
    if b.min_value <= 0 <= b.max_value and b.min_value != b.max_value:
        largest = POS_INF
    limit = largest - 1 if largest not in _INFS else POS_INF
    low = 0 if a.min_value >= 0 else max(a.min_value, -limit)
    high = 0 if a.max_value <= 0 else min(a.max_value, limit)
    return ConstIntBound(low, high)


def const_int_bound(expr: PrimExpr, var_bounds: Mapping[Var, ConstIntBound] | None = None) -> ConstIntBound:
    """Bounds of an integer (or bool) expression; vars absent from ``var_bounds`` are unbounded."""
    return _Bounder(var_bounds or {}).bound(expr)


class _Bounder:
    def __init__(self, var_bounds: Mapping[Var, ConstIntBound]):
        self.var_bounds = var_bounds

    def bound(self, e: PrimExpr) -> ConstIntBound:
        method = _BOUND_RULES.get(type(e))
        if method is not None:
            return method(self, e)
        if isinstance(e, CmpOp):
            return ConstIntBound(0, 1)
        return bound_of_dtype(e.dtype) if not _dt.is_float(e.dtype) else EVERYTHING

    def _imm(self, e: IntImm) -> ConstIntBound:
        return ConstIntBound(e.value, e.value)

    def _var(self, e: Var) -> ConstIntBound:
        known = self.var_bounds.get(e)
        return known if known is not None else bound_of_dtype(e.dtype)

    def _add(self, e: Add) -> ConstIntBound:
        return add_bounds(self.bound(e.a), self.bound(e.b))

    def _sub(self, e: Sub) -> ConstIntBound:
        return add_bounds(self.bound(e.a), neg_bound(self.bound(e.b)))

    def _mul(self, e: Mul) -> ConstIntBound:
        return mul_bounds(self.bound(e.a), self.bound(e.b))

    def _floordiv(self, e: FloorDiv) -> ConstIntBound:
        return floordiv_bounds(self.bound(e.a), self.bound(e.b))

    def _floormod(self, e: FloorMod) -> ConstIntBound:
        return floormod_bounds(self.bound(e.a), self.bound(e.b))

    def _div(self, e: Div) -> ConstIntBound:
        if _dt.is_float(e.dtype):
            return EVERYTHING
        return truncdiv_bounds(self.bound(e.a), self.bound(e.b))

    def _mod(self, e: Mod) -> ConstIntBound:
        return truncmod_bounds(self.bound(e.a), self.bound(e.b))

    def _min(self, e: Min) -> ConstIntBound:
        a, b = self.bound(e.a), self.bound(e.b)
        return ConstIntBound(min(a.min_value, b.min_value), min(a.max_value, b.max_value))

    def _max(self, e: Max) -> ConstIntBound:
        a, b = self.bound(e.a), self.bound(e.b)
        return ConstIntBound(max(a.min_value, b.min_value), max(a.max_value, b.max_value))

    def _select(self, e: Select) -> ConstIntBound:
        return self.bound(e.true_value).union(self.bound(e.false_value))

    def _cast(self, e: Cast) -> ConstIntBound:
        target = bound_of_dtype(e.dtype)
        if _dt.is_float(e.value.dtype) or _dt.is_float(e.dtype):
            return target if not _dt.is_float(e.dtype) else EVERYTHING
        inner = self.bound(e.value)
        return inner if inner.within(target.min_value, target.max_value) else target

    def _let(self, e: Let) -> ConstIntBound:
        inner = dict(self.var_bounds)
        inner[e.var] = self.bound(e.value)
        return _Bounder(inner).bound(e.body)

    def _ramp(self, e: Ramp) -> ConstIntBound:
        spread = mul_bounds(self.bound(e.stride), ConstIntBound(0, e.lanes - 1))
        return add_bounds(self.bound(e.base), spread)

    def _broadcast(self, e: Broadcast) -> ConstIntBound:
        return self.bound(e.value)


_BOUND_RULES = {
    IntImm: _Bounder._imm,
    Var: _Bounder._var,
    Add: _Bounder._add,
    Sub: _Bounder._sub,
    Mul: _Bounder._mul,
    FloorDiv: _Bounder._floordiv,
    FloorMod: _Bounder._floormod,
    Div: _Bounder._div,
    Mod: _Bounder._mod,
    Min: _Bounder._min,
    Max: _Bounder._max,
    Select: _Bounder._select,
    Cast: _Bounder._cast,
    Let: _Bounder._let,
    Ramp: _Bounder._ramp,
    Broadcast: _Bounder._broadcast,
}
