"""Symbolic integer intervals: the values an index takes while some variables vary.

``eval_set(expr, dom_map)`` follows an expression with interval arithmetic, where
the variables in ``dom_map`` range over their sets and every other variable is a
fixed (symbolic) point. ``relax_region`` turns buffer indices into the Ranges a
loop nest touches: relaxing ``i_1`` in ``[0, 128)`` in ``A[i_0 * 128 + i_1 + 2]``
gives ``Range(i_0 * 128 + 2, 128)``. Region inference for blocks, compute_at and
the buffer-compaction pass use it. Bounds are simplified with an ``Analyzer``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .. import dtype as _dt
from .. import op as _op
from ..expr import (
    Add,
    Broadcast,
    Cast,
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
    Range,
    Select,
    Sub,
    Var,
    const,
)
from ..functor import uses_var
from .analyzer import Analyzer
from .const_bound import NEG_INF, POS_INF, ConstIntBound


class Infinity:
    """The marker for an unbounded side of an IntervalSet (``neg_inf`` or ``pos_inf``)."""

    __slots__ = ("sign",)

    def __init__(self, sign: int):
        self.sign = sign

    def __repr__(self) -> str:
        return "pos_inf" if self.sign > 0 else "neg_inf"


pos_inf = Infinity(1)
neg_inf = Infinity(-1)
Bound = PrimExpr | Infinity


@dataclass(frozen=True, slots=True, eq=False)
class IntervalSet:
    """All integers ``v`` with ``min_value <= v <= max_value`` (inclusive, either side may be infinite)."""

    min_value: Bound
    max_value: Bound

    @staticmethod
    def point(value: PrimExpr) -> IntervalSet:
        return IntervalSet(value, value)

    @staticmethod
    def everything() -> IntervalSet:
        return IntervalSet(neg_inf, pos_inf)

    @staticmethod
    def from_range(dom: Range, analyzer: Analyzer | None = None) -> IntervalSet:
        analyzer = analyzer or Analyzer()
        return IntervalSet(analyzer.simplify(dom.min), analyzer.simplify(dom.min + dom.extent - 1))

    @property
    def is_point(self) -> bool:
        return self.min_value is self.max_value and isinstance(self.min_value, PrimExpr)

    @property
    def is_bounded(self) -> bool:
        return isinstance(self.min_value, PrimExpr) and isinstance(self.max_value, PrimExpr)

    def __repr__(self) -> str:
        return f"IntervalSet({self.min_value!r}, {self.max_value!r})"


def _as_set(value: IntervalSet | Range, analyzer: Analyzer) -> IntervalSet:
    return value if isinstance(value, IntervalSet) else IntervalSet.from_range(value, analyzer)


def union(sets: Sequence[IntervalSet], analyzer: Analyzer | None = None) -> IntervalSet:
    """The smallest interval holding every set (the hull)."""
    analyzer = analyzer or Analyzer()
    low, high = sets[0].min_value, sets[0].max_value
    for s in sets[1:]:
        low = _combine(low, s.min_value, _op.min_value, analyzer, neg_inf)
        high = _combine(high, s.max_value, _op.max_value, analyzer, pos_inf)
    return IntervalSet(low, high)


def intersect(sets: Sequence[IntervalSet], analyzer: Analyzer | None = None) -> IntervalSet:
    analyzer = analyzer or Analyzer()
    low, high = sets[0].min_value, sets[0].max_value
    for s in sets[1:]:
        low = _combine(low, s.min_value, _op.max_value, analyzer, neg_inf, absorbing=False)
        high = _combine(high, s.max_value, _op.min_value, analyzer, pos_inf, absorbing=False)
    return IntervalSet(low, high)


def _combine(
    a: Bound, b: Bound, build, analyzer: Analyzer, infinity: Infinity, absorbing: bool = True
) -> Bound:
    """min/max of two bounds; ``infinity`` wins when ``absorbing``, else it is neutral."""
    if a is infinity or b is infinity:
        return infinity if absorbing else (b if a is infinity else a)
    return analyzer.simplify(build(a, b))


def eval_set(
    expr: PrimExpr,
    dom_map: Mapping[Var, IntervalSet | Range],
    analyzer: Analyzer | None = None,
) -> IntervalSet:
    """The interval ``expr`` ranges over while each var in ``dom_map`` ranges over its set."""
    analyzer = analyzer or Analyzer()
    sets = {v: _as_set(s, analyzer) for v, s in dom_map.items()}
    return _SetEvaluator(sets, analyzer).eval(const(expr))


class _SetEvaluator:
    def __init__(self, dom: dict[Var, IntervalSet], analyzer: Analyzer):
        self.dom = dom
        self.analyzer = analyzer

    def eval(self, e: PrimExpr) -> IntervalSet:
        rule = _SET_RULES.get(type(e))
        if rule is not None:
            return rule(self, e)
        return self._opaque(e)

    def _point(self, value: PrimExpr) -> IntervalSet:
        return IntervalSet.point(self.analyzer.simplify(value))

    def _opaque(self, e: PrimExpr) -> IntervalSet:
        """An expression we cannot follow: a point if nothing in it varies, else its constant bounds."""
        if not uses_var(e, lambda v: v in self.dom):
            return self._point(e)
        return self._const_bounds(e)

    def _const_bounds(self, e: PrimExpr) -> IntervalSet:
        inner = self.analyzer.copy()
        for var, s in self.dom.items():
            low = (
                self.analyzer.const_int_bound(s.min_value).min_value
                if s.min_value is not neg_inf
                else NEG_INF
            )
            high = (
                self.analyzer.const_int_bound(s.max_value).max_value
                if s.max_value is not pos_inf
                else POS_INF
            )
            inner.update_bound(var, ConstIntBound(low, high))
        bound = inner.const_int_bound(e)
        dtype = _dt.element_of(e.dtype)
        low = IntImm(bound.min_value, dtype) if bound.min_value != NEG_INF else neg_inf
        high = IntImm(bound.max_value, dtype) if bound.max_value != POS_INF else pos_inf
        return IntervalSet(low, high)

    def _bound_op(self, build, a: Bound, b: Bound, infinite: Bound) -> Bound:
        if isinstance(a, Infinity) or isinstance(b, Infinity):
            return infinite
        return self.analyzer.simplify(build(a, b))

    def _var(self, e: Var) -> IntervalSet:
        known = self.dom.get(e)
        return known if known is not None else IntervalSet.point(e)

    def _imm(self, e: PrimExpr) -> IntervalSet:
        return IntervalSet.point(e)

    def _add(self, e: Add) -> IntervalSet:
        a, b = self.eval(e.a), self.eval(e.b)
        return IntervalSet(
            self._bound_op(_op.add, a.min_value, b.min_value, neg_inf),
            self._bound_op(_op.add, a.max_value, b.max_value, pos_inf),
        )

    def _sub(self, e: Sub) -> IntervalSet:
        a, b = self.eval(e.a), self.eval(e.b)
        return IntervalSet(
            self._bound_op(_op.sub, a.min_value, b.max_value, neg_inf),
            self._bound_op(_op.sub, a.max_value, b.min_value, pos_inf),
        )

    def _mul(self, e: Mul) -> IntervalSet:
        a, b = self.eval(e.a), self.eval(e.b)
        if a.is_point and b.is_point:
            return self._point(_op.mul(a.min_value, b.min_value))
        if a.is_point:
            a, b = b, a
        if not b.is_point:
            return self._const_bounds(e)
        sign = self._sign(b.min_value)
        if sign == 0:
            return self._const_bounds(e)
        low, high = (a.min_value, a.max_value) if sign > 0 else (a.max_value, a.min_value)
        return IntervalSet(
            self._bound_op(_op.mul, low, b.min_value, neg_inf),
            self._bound_op(_op.mul, high, b.min_value, pos_inf),
        )

    def _sign(self, value: PrimExpr) -> int:
        """1 if ``value >= 0`` is provable, -1 if ``value <= 0`` is, else 0 (unknown sign)."""
        bound = self.analyzer.const_int_bound(value)
        return 1 if bound.min_value >= 0 else -1 if bound.max_value <= 0 else 0

    def _floordiv(self, e: FloorDiv | Div) -> IntervalSet:
        a, b = self.eval(e.a), self.eval(e.b)
        if a.is_point and b.is_point:
            return self._point(_EXACT_BUILDERS[type(e)](a.min_value, b.min_value))
        if not b.is_point or self.analyzer.const_int_bound(b.min_value).min_value <= 0:
            return self._const_bounds(e)
        if isinstance(e, Div) and not self._nonnegative(a):
            return self._const_bounds(e)
        # Floor division by a fixed positive divisor is monotone in the dividend.
        return IntervalSet(
            self._bound_op(_op.floordiv, a.min_value, b.min_value, neg_inf),
            self._bound_op(_op.floordiv, a.max_value, b.min_value, pos_inf),
        )

    def _nonnegative(self, s: IntervalSet) -> bool:
        return (
            not isinstance(s.min_value, Infinity)
            and self.analyzer.const_int_bound(s.min_value).min_value >= 0
        )

    def _floormod(self, e: FloorMod | Mod) -> IntervalSet:
        a, b = self.eval(e.a), self.eval(e.b)
        if a.is_point and b.is_point:
            return self._point(_EXACT_BUILDERS[type(e)](a.min_value, b.min_value))
        if not b.is_point or self.analyzer.const_int_bound(b.min_value).min_value <= 0:
            return self._const_bounds(e)
        if isinstance(e, Mod) and not self._nonnegative(a):
            return self._const_bounds(e)
        divisor = b.min_value
        if a.is_bounded:
            same_block = _op.sub(_op.floordiv(a.max_value, divisor), _op.floordiv(a.min_value, divisor))
            if self.analyzer.can_prove_equal(same_block, 0):
                return IntervalSet(
                    self.analyzer.simplify(_op.floormod(a.min_value, divisor)),
                    self.analyzer.simplify(_op.floormod(a.max_value, divisor)),
                )
        return IntervalSet(IntImm(0, e.dtype), self.analyzer.simplify(_op.sub(divisor, 1)))

    def _min(self, e: Min) -> IntervalSet:
        a, b = self.eval(e.a), self.eval(e.b)
        return IntervalSet(
            _combine(a.min_value, b.min_value, _op.min_value, self.analyzer, neg_inf),
            _combine(a.max_value, b.max_value, _op.min_value, self.analyzer, pos_inf, absorbing=False),
        )

    def _max(self, e: Max) -> IntervalSet:
        a, b = self.eval(e.a), self.eval(e.b)
        return IntervalSet(
            _combine(a.min_value, b.min_value, _op.max_value, self.analyzer, neg_inf, absorbing=False),
            _combine(a.max_value, b.max_value, _op.max_value, self.analyzer, pos_inf),
        )

    def _select(self, e: Select) -> IntervalSet:
        return union([self.eval(e.true_value), self.eval(e.false_value)], self.analyzer)

    def _cast(self, e: Cast) -> IntervalSet:
        if not (_dt.is_integer(e.dtype) and _dt.is_integer(e.value.dtype)):
            return self._opaque(e)
        inner = self.eval(e.value)
        if inner.is_point:
            return self._point(_op.cast(e.dtype, inner.min_value))
        return IntervalSet(
            *(
                b if isinstance(b, Infinity) else _op.cast(e.dtype, b)
                for b in (inner.min_value, inner.max_value)
            )
        )

    def _let(self, e: Let) -> IntervalSet:
        inner = dict(self.dom)
        inner[e.var] = self.eval(e.value)
        return _SetEvaluator(inner, self.analyzer).eval(e.body)

    def _ramp(self, e: Ramp) -> IntervalSet:
        """A vector index covers every lane: ``base + stride * [0, lanes)``."""
        lane = Var("lane", e.base.dtype)
        inner = dict(self.dom)
        inner[lane] = IntervalSet(IntImm(0, lane.dtype), IntImm(e.lanes - 1, lane.dtype))
        return _SetEvaluator(inner, self.analyzer).eval(Add(e.base, Mul(e.stride, lane)))

    def _broadcast(self, e: Broadcast) -> IntervalSet:
        return self.eval(e.value)


_EXACT_BUILDERS = {FloorDiv: _op.floordiv, Div: _op.div, FloorMod: _op.floormod, Mod: _op.truncmod}
_SET_RULES = {
    Var: _SetEvaluator._var,
    IntImm: _SetEvaluator._imm,
    Add: _SetEvaluator._add,
    Sub: _SetEvaluator._sub,
    Mul: _SetEvaluator._mul,
    FloorDiv: _SetEvaluator._floordiv,
    Div: _SetEvaluator._floordiv,
    FloorMod: _SetEvaluator._floormod,
    Mod: _SetEvaluator._floormod,
    Min: _SetEvaluator._min,
    Max: _SetEvaluator._max,
    Select: _SetEvaluator._select,
    Cast: _SetEvaluator._cast,
    Let: _SetEvaluator._let,
    Ramp: _SetEvaluator._ramp,
    Broadcast: _SetEvaluator._broadcast,
}


def set_to_range(s: IntervalSet, analyzer: Analyzer, extent_limit: PrimExpr | None = None) -> Range:
    """``Range(min, max - min + 1)``, cut to ``[0, extent_limit)`` where a side is unbounded or constant.

    Accesses are assumed in bounds, so cutting at the buffer shape loses nothing.
    """
    low, high = s.min_value, s.max_value
    if isinstance(low, Infinity) or (isinstance(low, IntImm) and low.value < 0):
        low = IntImm(0, "int32" if extent_limit is None else extent_limit.dtype)
    if isinstance(extent_limit, IntImm) and isinstance(high, IntImm) and high.value >= extent_limit.value:
        high = IntImm(extent_limit.value - 1, high.dtype)
    if isinstance(high, Infinity):
        if extent_limit is None:
            raise ValueError(
                f"the region {s!r} has no upper bound; pass the buffer shape to relax_region to cut it"
            )
        high = _op.sub(extent_limit, 1)
    return Range(low, analyzer.simplify(_op.add(_op.sub(high, low), 1)))


def relax_region(
    indices: Sequence[PrimExpr],
    dom_map: Mapping[Var, IntervalSet | Range],
    analyzer: Analyzer | None = None,
    shape: Sequence[PrimExpr] | None = None,
) -> tuple[Range, ...]:
    """The Ranges that ``buffer[indices]`` touches while the vars in ``dom_map`` vary.

    An index whose set is unbounded on a side is cut to the buffer ``shape`` there.
    """
    analyzer = analyzer or Analyzer()
    sets = relax_indices(indices, dom_map, analyzer)
    limits = shape if shape is not None else [None] * len(sets)
    return tuple(
        set_to_range(s, analyzer, const(limit) if limit is not None else None)
        for s, limit in zip(sets, limits)
    )


def relax_indices(
    indices: Sequence[PrimExpr], dom_map: Mapping[Var, IntervalSet | Range], analyzer: Analyzer
) -> list[IntervalSet]:
    """One IntervalSet per index; each index is simplified first so shared terms cancel."""
    sets = {v: _as_set(s, analyzer) for v, s in dom_map.items()}
    evaluator = _SetEvaluator(sets, analyzer)
    return [evaluator.eval(analyzer.simplify(index)) for index in indices]


def estimate_region_extent(region: Sequence[Range], analyzer: Analyzer | None = None) -> int | None:
    """An upper bound on the number of elements in ``region``, or None when unbounded."""
    analyzer = analyzer or Analyzer()
    total = 1
    for r in region:
        high = analyzer.const_int_bound(r.extent).max_value
        if high >= POS_INF:
            return None
        total *= max(high, 0)
    return total
