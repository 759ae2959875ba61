"""Rewrite rules for what is not index arithmetic: min/max, comparisons, logic, select.

The canonical form (``canonical.py``) handles sums, products by constants,
floordiv and floormod. Everything else comes here: ``min``/``max`` drop the side
that is provably not chosen, comparisons fold when the sign of ``a - b`` is known
from constant bounds, logical operators and ``select`` fold constant conditions,
and all other nodes (floats, vectors, loads, calls, casts) get their children
simplified and constants folded through ``tir.op``.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import TYPE_CHECKING

from .. import dtype as _dt
from .. import op as _op
from ..expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Call,
    CmpOp,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Select,
    Sub,
)

if TYPE_CHECKING:
    from .canonical import Simplifier

_TRUE = IntImm(1, "bool")
_FALSE = IntImm(0, "bool")

# Builders that fold constants (floats included) when children become constant.
_BUILDERS = {
    Add: _op.add,
    Sub: _op.sub,
    Mul: _op.mul,
    Div: _op.div,
    Mod: _op.truncmod,
    FloorDiv: _op.floordiv,
    FloorMod: _op.floormod,
    Min: _op.min_value,
    Max: _op.max_value,
}
# Each order comparison as (what proves it, what disproves it), each a triple
# (smaller side, larger side, gap) for ``at_most``: ``a < b`` is ``a + 1 <= b``.
_ORDERS = {
    LT: lambda a, b: ((a, b, 1), (b, a, 0)),
    LE: lambda a, b: ((a, b, 0), (b, a, 1)),
    GT: lambda a, b: ((b, a, 1), (a, b, 0)),
    GE: lambda a, b: ((b, a, 0), (a, b, 1)),
}
_CMP_BUILDERS = {LT: _op.lt, LE: _op.le, GT: _op.gt, GE: _op.ge, EQ: _op.eq, NE: _op.ne}
_NEGATED = {LT: GE, LE: GT, GT: LE, GE: LT, EQ: NE, NE: EQ}


def _is_index(e: PrimExpr) -> bool:
    return _dt.is_integer(e.dtype) and _dt.lanes_of(e.dtype) == 1


def difference_bound(simp: Simplifier, a: PrimExpr, b: PrimExpr):
    """Constant bounds of ``a - b`` after canonicalization (so shared terms cancel)."""
    return simp.bound(simp.sub(simp.to_sum(a), simp.to_sum(b)))


def at_most(simp: Simplifier, a: PrimExpr, b: PrimExpr, gap: int) -> bool:
    """Whether ``a + gap <= b`` is provable, looking through min and max on either side."""
    if difference_bound(simp, a, b).max_value <= -gap:
        return True
    if isinstance(a, Min):
        return at_most(simp, a.a, b, gap) or at_most(simp, a.b, b, gap)
    if isinstance(a, Max):
        return at_most(simp, a.a, b, gap) and at_most(simp, a.b, b, gap)
    if isinstance(b, Max):
        return at_most(simp, a, b.a, gap) or at_most(simp, a, b.b, gap)
    if isinstance(b, Min):
        return at_most(simp, a, b.a, gap) and at_most(simp, a, b.b, gap)
    return False


def rewrite(simp: Simplifier, e: PrimExpr) -> PrimExpr:
    rule = _RULES.get(type(e))
    if rule is not None:
        return rule(simp, e)
    if isinstance(e, CmpOp):
        return _compare(simp, e)
    return _generic(simp, e)


def _generic(simp: Simplifier, e: PrimExpr) -> PrimExpr:
    builder = _BUILDERS.get(type(e))
    if builder is not None:
        a, b = simp.simplify(e.a), simp.simplify(e.b)
        if a is e.a and b is e.b and not (_is_const(a) and _is_const(b)):
            return e
        return builder(a, b)
    changes = {}
    for f in fields(e):
        value = getattr(e, f.name)
        if isinstance(value, PrimExpr):
            new = simp.simplify(value)
        elif isinstance(value, tuple) and value and isinstance(value[0], PrimExpr):
            new = tuple(simp.simplify(v) for v in value)
            new = value if all(x is y for x, y in zip(new, value)) else new
        else:
            continue
        if new is not value:
            changes[f.name] = new
    return replace(e, **changes) if changes else e


def _is_const(e: PrimExpr) -> bool:
    return isinstance(e, (IntImm, FloatImm))


def _min_max(simp: Simplifier, e: Min | Max) -> PrimExpr:
    a, b = simp.simplify(e.a), simp.simplify(e.b)
    if _is_index(a):
        a_smaller = at_most(simp, a, b, 0)
        b_smaller = not a_smaller and at_most(simp, b, a, 0)
        if isinstance(e, Min) and (a_smaller or b_smaller):
            return a if a_smaller else b
        if isinstance(e, Max) and (a_smaller or b_smaller):
            return b if a_smaller else a
    return _BUILDERS[type(e)](a, b)


def _compare(simp: Simplifier, e: CmpOp) -> PrimExpr:
    a, b = simp.simplify(e.a), simp.simplify(e.b)
    if _is_index(a):
        decided = _decide(simp, type(e), a, b)
        if decided is not None:
            return decided
        if isinstance(e, EQ) and isinstance(b, IntImm) and b.value == 0:
            split = _zero_sum(simp, a)
            if split is not None:
                return split
    if a is e.a and b is e.b:
        return e
    return _CMP_BUILDERS[type(e)](a, b)


def _zero_sum(simp: Simplifier, total: PrimExpr) -> PrimExpr | None:
    """``k_0 * 8 + k_1 == 0`` as ``k_0 == 0 and k_1 == 0`` when every term is non-negative.

    A reduction's init condition takes this form after its loop is split; once a
    code generator unrolls the inner loop, each copy's test folds to a constant.
    """
    terms: list[PrimExpr] = []
    stack = [total]
    while stack:
        node = stack.pop()
        if isinstance(node, Add):
            stack.extend((node.b, node.a))
        else:
            terms.append(node)
    if len(terms) < 2 or any(simp.analyzer.const_int_bound(t).min_value < 0 for t in terms):
        return None
    parts = []
    for term in terms:
        if isinstance(term, Mul) and isinstance(term.b, IntImm) and term.b.value > 0:
            term = term.a
        parts.append(_op.eq(term, IntImm(0, term.dtype)))
    condition = parts[0]
    for part in parts[1:]:
        condition = _op.logical_and(condition, part)
    return condition


def _decide(simp: Simplifier, kind: type, a: PrimExpr, b: PrimExpr) -> PrimExpr | None:
    if kind in _ORDERS:
        if_true, if_false = _ORDERS[kind](a, b)
        if at_most(simp, *if_true):
            return _TRUE
        return _FALSE if at_most(simp, *if_false) else None
    bound = difference_bound(simp, a, b)
    if bound.min_value == bound.max_value == 0:
        return _TRUE if kind is EQ else _FALSE
    if bound.min_value > 0 or bound.max_value < 0:
        return _FALSE if kind is EQ else _TRUE
    return None


def _and(simp: Simplifier, e: And) -> PrimExpr:
    a = simp.simplify(e.a)
    if isinstance(a, IntImm) and not a.value:
        return a
    return _op.logical_and(a, simp.simplify(e.b))


def _or(simp: Simplifier, e: Or) -> PrimExpr:
    a = simp.simplify(e.a)
    if isinstance(a, IntImm) and a.value:
        return a
    return _op.logical_or(a, simp.simplify(e.b))


def _not(simp: Simplifier, e: Not) -> PrimExpr:
    a = simp.simplify(e.a)
    # Flipping a float comparison would be wrong for NaN; integer ones are safe.
    if type(a) in _NEGATED and _is_index(a.a):
        return simp.simplify(_NEGATED[type(a)](a.a, a.b))
    return _op.logical_not(a)


def _select(simp: Simplifier, e: Select) -> PrimExpr:
    condition = simp.simplify(e.condition)
    if isinstance(condition, IntImm):
        return simp.simplify(e.true_value if condition.value else e.false_value)
    true_value, false_value = simp.simplify(e.true_value), simp.simplify(e.false_value)
    if _is_index(true_value):
        bound = difference_bound(simp, true_value, false_value)
        if bound.min_value == bound.max_value == 0:
            return true_value
    return Select(condition, true_value, false_value)


def _call(simp: Simplifier, e: Call) -> PrimExpr:
    if e.op == "if_then_else":
        condition = simp.simplify(e.args[0])
        if isinstance(condition, IntImm):
            return simp.simplify(e.args[1] if condition.value else e.args[2])
    return _generic(simp, e)


_RULES = {
    Min: _min_max,
    Max: _min_max,
    And: _and,
    Or: _or,
    Not: _not,
    Select: _select,
    Call: _call,
}
