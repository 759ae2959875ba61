"""Affine and modular facts about integer index expressions, read off their canonical form.

Two questions the vectorizer and the printers ask of a flat buffer index, both
answered from the canonical sum (``canonical.py``) under an Analyzer's facts:

- ``linear_form(e, v)``: is ``e == base + stride * v`` with ``base`` free of ``v``
  and ``stride`` a constant? (``coefficient_of`` gives just the stride.) The
  vectorizer turns such an index into ``Ramp(base, stride, lanes)``.
- ``modular_set(e)``: ``e == coeff * k + base`` for some integer ``k`` (TVM's
  ModularSet). A Ramp base that is a multiple of its lane count (``is_multiple_of``)
  lets a printer emit one aligned vector access (``float4``) instead of a gather.

Both are conservative: an answer is always true; a missed fact only costs speed.
"""

from __future__ import annotations

from math import gcd
from typing import NamedTuple

from .. import dtype as _dt
from ..expr import ExprLike, Max, Min, PrimExpr, Select, Var, const
from ..functor import uses_var
from .analyzer import Analyzer
from .canonical import Simplifier, SplitTerm, SumForm


class ModularSet(NamedTuple):
    """``{coeff * k + base | k integer}``; ``coeff == 0`` means exactly ``base``.

    ``base`` is reduced to ``[0, coeff)`` when ``coeff > 0``.
    """

    coeff: int
    base: int


def _check_index(expr: PrimExpr, question: str) -> None:
    if not (_dt.is_integer(expr.dtype) and _dt.lanes_of(expr.dtype) == 1):
        raise TypeError(f"{question} needs a scalar integer expression, got {expr.dtype} ({expr!r})")


def _make(coeff: int, base: int) -> ModularSet:
    coeff = abs(coeff)
    return ModularSet(coeff, base % coeff if coeff else base)


def _union(a: ModularSet, b: ModularSet) -> ModularSet:
    return _make(gcd(a.coeff, b.coeff, a.base - b.base), a.base)


def _sum(a: ModularSet, b: ModularSet) -> ModularSet:
    return _make(gcd(a.coeff, b.coeff), a.base + b.base)


def _term_set(simp: Simplifier, term: SplitTerm) -> ModularSet:
    """The values ``((index mod upper) // lower) * scale`` can take."""
    if term.lower == 1 and term.upper is None:
        inner = _atom_set(simp, term.index)
    else:
        inner = ModularSet(1, 0)
    return _make(inner.coeff * term.scale, inner.base * term.scale)


def _atom_set(simp: Simplifier, atom: PrimExpr) -> ModularSet:
    """An expression the canonical form keeps whole: look through min, max and select."""
    if isinstance(atom, (Min, Max)):
        sides = (atom.a, atom.b)
    elif isinstance(atom, Select):
        sides = (atom.true_value, atom.false_value)
    else:
        return ModularSet(1, 0)
    return _union(*(_form_set(simp, simp.to_sum(side)) for side in sides))


def _form_set(simp: Simplifier, form: SumForm) -> ModularSet:
    total = ModularSet(0, form.base)
    for term in form.terms:
        total = _sum(total, _term_set(simp, term))
    return total


def modular_set(expr: ExprLike, analyzer: Analyzer | None = None) -> ModularSet:
    """``(coeff, base)`` such that ``expr == coeff * k + base`` for some integer ``k``.

    ``modular_set(i * 16 + j * 4 + 2)`` is ``(4, 2)``; a constant 12 is ``(0, 12)``;
    ``i % 8 * 4`` is ``(4, 0)``. Variables the analyzer binds to expressions are
    replaced first; nothing is known about free variables.
    """
    expr = const(expr)
    _check_index(expr, "modular_set")
    simp = Simplifier(analyzer or Analyzer())
    return _form_set(simp, simp.to_sum(expr))


def is_multiple_of(expr: ExprLike, factor: int, analyzer: Analyzer | None = None) -> bool:
    """Whether ``expr`` is always a multiple of ``factor`` (e.g. a Ramp base of ``factor`` lanes)."""
    if factor <= 0:
        raise ValueError(f"is_multiple_of needs a positive factor, got {factor}")
    coeff, base = modular_set(expr, analyzer)
    return coeff % factor == 0 and base % factor == 0


def linear_form(expr: ExprLike, var: Var, analyzer: Analyzer | None = None) -> tuple[PrimExpr, int] | None:
    """``(base, stride)`` with ``expr == base + stride * var`` and ``base`` free of ``var``, or None.

    The expression is put in canonical form under the analyzer's facts first, so
    ``(f * 4 + v) % 16`` with ``0 <= v < 4`` known is ``(f % 4 * 4, 1)``. None means
    ``var`` appears other than as a constant multiple (``v * v``, ``v // 2`` or
    ``B[v]``). A ``base`` comes back simplified; ``stride`` is 0 when ``var`` cancels.
    """
    expr = const(expr)
    _check_index(expr, "linear_form")
    simp = Simplifier(analyzer or Analyzer())
    form = simp.to_sum(expr)
    stride, rest = 0, []
    for term in form.terms:
        if not uses_var(term.index, lambda v: v is var):
            rest.append(term)
        elif term.index is var and term.lower == 1 and term.upper is None:
            stride += term.scale
        else:
            return None
    return simp.to_expr(SumForm(tuple(rest), form.base, form.dtype)), stride


def coefficient_of(expr: ExprLike, var: Var, analyzer: Analyzer | None = None) -> int | None:
    """The constant ``c`` with ``expr == base + c * var`` (``base`` free of ``var``), or None."""
    form = linear_form(expr, var, analyzer)
    return None if form is None else form[1]


__all__ = ["ModularSet", "coefficient_of", "is_multiple_of", "linear_form", "modular_set"]
