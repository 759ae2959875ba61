"""The Analyzer: what is known about variables, and the questions asked of it.

Like TVM's ``arith.Analyzer``, one object holds the facts (variable ranges,
variables bound to expressions, conditions in scope) and answers: ``simplify``,
``const_int_bound``, ``can_prove``, ``can_prove_equal``. The schedule binds loop
and block variables to their ranges before asking, the lowering passes do the
same while walking loops. Analyzers are cheap; make one per analysis.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .. import dtype as _dt
from .. import op as _op
from ..expr import EQ, GE, GT, LE, LT, And, ExprLike, IntImm, Or, PrimExpr, Range, Var, const
from .canonical import Simplifier, expr_key
from .const_bound import ConstIntBound, const_int_bound, sat_add


class Analyzer:
    """Facts about variables and the simplifier, bound prover and constant bounds that use them."""

    def __init__(self) -> None:
        self._bounds: dict[Var, ConstIntBound] = {}
        self._substitutions: dict[Var, PrimExpr] = {}
        self._fact_keys: set[object] = set()
        # Structural key -> (first expression of that key, its simplified form), valid while the
        # facts stay as they are (every method that changes a fact clears it): the passes and
        # the schedule simplify the same index many times under the same facts.
        self._simplified: dict[object, tuple[PrimExpr, PrimExpr]] = {}

    # ------------------------------------------------------------ facts

    def bind(self, var: Var, value: Range | ExprLike) -> None:
        """Declare ``var`` to range over ``value`` (a Range) or to equal it (an expression).

        A variable bound to an expression is replaced by it when simplifying; so is
        one bound to a Range of extent 1 (it can only be ``dom.min``), as in TVM.
        """
        if isinstance(value, Range):
            if not (isinstance(value.extent, IntImm) and value.extent.value == 1):
                self.update_range(var, value)
                return
            value = value.min
        value = self.simplify(const(value, var.dtype))
        self._substitutions[var] = value
        self._bounds[var] = self.const_int_bound(value)
        self._simplified.clear()

    def update_range(self, var: Var, dom: Range) -> None:
        """Declare ``dom.min <= var < dom.min + dom.extent`` (replacing what was known)."""
        low = self.const_int_bound(dom.min)
        extent = self.const_int_bound(dom.extent)
        high = sat_add(
            low.max_value, sat_add(extent.max_value, -1, ConstIntBound.POS_INF), ConstIntBound.POS_INF
        )
        self._bounds[var] = ConstIntBound(low.min_value, high)
        self._simplified.clear()

    def update_bound(self, var: Var, bound: ConstIntBound) -> None:
        """Declare constant bounds for ``var`` (replacing what was known)."""
        self._bounds[var] = bound
        self._simplified.clear()

    def copy(self) -> Analyzer:
        """An independent analyzer that starts with the same facts."""
        other = Analyzer()
        other._bounds = dict(self._bounds)
        other._substitutions = dict(self._substitutions)
        other._fact_keys = set(self._fact_keys)
        return other

    def substitution(self, var: Var) -> PrimExpr | None:
        """The expression ``var`` was bound to, if any."""
        return self._substitutions.get(var)

    @contextmanager
    def constraint_scope(self, condition: ExprLike) -> Iterator[None]:
        """Within the ``with`` body, also assume ``condition`` (e.g. ``x < 100``)."""
        saved_bounds, saved_facts = dict(self._bounds), set(self._fact_keys)
        condition = self.simplify(const(condition))
        for fact in _conjuncts(condition):
            self._fact_keys.add(expr_key(fact))
            self._tighten(fact)
        self._simplified.clear()
        try:
            yield
        finally:
            self._bounds, self._fact_keys = saved_bounds, saved_facts
            self._simplified.clear()

    def _tighten(self, fact: PrimExpr) -> None:
        """Narrow a variable's bound from ``var < e``, ``e <= var``, ``var == e`` and similar."""
        if type(fact) not in (LT, LE, GT, GE, EQ):
            return
        flipped = {LT: GT, LE: GE, GT: LT, GE: LE, EQ: EQ}
        var, other, kind = fact.a, fact.b, type(fact)
        if not isinstance(var, Var):
            var, other, kind = fact.b, fact.a, flipped[kind]
        if not isinstance(var, Var) or not _dt.is_integer(var.dtype):
            return
        other_bound = self.const_int_bound(other)
        low, high = self.const_int_bound(var).min_value, self.const_int_bound(var).max_value
        if kind in (LT, LE, EQ):
            limit = other_bound.max_value
            high = min(high, limit - 1 if kind is LT and limit != ConstIntBound.POS_INF else limit)
        if kind in (GT, GE, EQ):
            limit = other_bound.min_value
            low = max(low, limit + 1 if kind is GT and limit != ConstIntBound.NEG_INF else limit)
        self._bounds[var] = ConstIntBound(low, high)

    # ------------------------------------------------------------ questions

    def const_int_bound(self, expr: ExprLike) -> ConstIntBound:
        """Inclusive constant bounds of an integer expression under the known facts."""
        return const_int_bound(const(expr), self._bounds)

    def simplify(self, expr: ExprLike) -> PrimExpr:
        """An equal expression in canonical, folded form (never changes the value)."""
        expr = const(expr)
        key = expr_key(expr)
        found = self._simplified.get(key)
        if found is None:
            simplified = Simplifier(self).simplify(expr)
            # An expression already in simple form comes back as itself, as without the memo.
            self._simplified[key] = found = (expr, simplified)
        original, simplified = found
        return expr if simplified is original else simplified

    def canonical_simplify(self, expr: ExprLike) -> PrimExpr:
        """Same engine as ``simplify`` (kept for TVM's spelling)."""
        return self.simplify(expr)

    def can_prove(self, condition: ExprLike) -> bool:
        """True only when ``condition`` holds for every value the facts allow."""
        condition = self.simplify(const(condition))
        if isinstance(condition, IntImm):
            return bool(condition.value)
        if expr_key(condition) in self._fact_keys:
            return True
        if isinstance(condition, And):
            return self.can_prove(condition.a) and self.can_prove(condition.b)
        if isinstance(condition, Or):
            return self.can_prove(condition.a) or self.can_prove(condition.b)
        return False

    def can_prove_equal(self, a: ExprLike, b: ExprLike) -> bool:
        difference = self.simplify(_op.sub(a, b))
        return isinstance(difference, IntImm) and difference.value == 0


def _conjuncts(condition: PrimExpr) -> list[PrimExpr]:
    if isinstance(condition, And):
        return _conjuncts(condition.a) + _conjuncts(condition.b)
    return [condition]
