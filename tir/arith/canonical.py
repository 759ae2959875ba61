"""Canonical form of integer index expressions: a sum of scaled splits plus a constant.

Every scalar integer expression built from ``+ - *`` by constants, ``//`` and ``%``
becomes ``SumForm(terms, base)`` where each term is a ``SplitTerm``: the value
``((index mod upper) // lower) * scale`` of an atomic ``index`` (a variable, or an
expression we cannot open further). This is TVM's SplitExpr/SumExpr idea: it
makes ``x // 8 * 8 + x % 8`` one term ``x``, ``(x // 4) // 2`` one term
``x // 8``, and lets floordiv/floormod by a constant drop the parts that are
multiples of the divisor, using constant bounds (``const_bound``) for the
remainder. Every rule holds for all integers (floor semantics); truncating
``Div``/``Mod`` enter the form only when the dividend's sign is known.
``Simplifier`` drives the whole rewrite: it sends index arithmetic through this
form and everything else through ``rewrite.py``. ``Analyzer`` is its front door.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from math import gcd
from typing import TYPE_CHECKING

from .. import dtype as _dt
from ..expr import Add, Div, FloatImm, FloorDiv, FloorMod, IntImm, Mod, Mul, PrimExpr, Sub, Var
from . import rewrite
from .const_bound import (
    POS_INF,
    ConstIntBound,
    add_bounds,
    floordiv_bounds,
    floormod_bounds,
    scale_bound,
)

if TYPE_CHECKING:
    from .analyzer import Analyzer

_SUM_TYPES = (IntImm, Var, Add, Sub, Mul, FloorDiv, FloorMod, Div, Mod)
_field_names: dict[type, tuple[str, ...]] = {}


def expr_key(e) -> object:
    """A hashable structural key: equal keys mean structurally equal expressions.

    Variables and buffers stand for themselves (identity), so keys are only
    meaningful while the expression they came from is alive.
    """
    cls = type(e)
    names = _field_names.get(cls)  # the common case first: an operator node
    if names is not None:
        return (cls, *[expr_key(getattr(e, n)) for n in names])
    if cls is Var:
        return e
    if cls is IntImm or cls is FloatImm:
        return (cls, e.value, e.dtype)
    if cls is tuple:
        return tuple(expr_key(x) for x in e)
    if not isinstance(e, PrimExpr):
        return e
    _field_names[cls] = tuple(f.name for f in fields(cls))
    return expr_key(e)


# Not frozen (nothing assigns its fields): a frozen dataclass is built ~2.5x slower, and the
# simplifier builds millions of these per tuning run. Hashable and compared by value as before.
@dataclass(slots=True, unsafe_hash=True)
class SplitTerm:
    """``((index mod upper) // lower) * scale``; ``upper`` None means no modulo."""

    index: PrimExpr
    key: object
    lower: int
    upper: int | None
    scale: int

    def same_slot(self, other: SplitTerm) -> bool:
        return self.lower == other.lower and self.upper == other.upper and self.key == other.key

    def scaled(self, factor: int) -> SplitTerm:
        return SplitTerm(self.index, self.key, self.lower, self.upper, self.scale * factor)


# Not frozen (nothing assigns its fields): a frozen dataclass is built ~2.5x slower, and the
# simplifier builds millions of these per tuning run. Hashable and compared by value as before.
@dataclass(slots=True, unsafe_hash=True)
class SumForm:
    """``sum(terms) + base``."""

    terms: tuple[SplitTerm, ...]
    base: int
    dtype: str

    @property
    def is_const(self) -> bool:
        return not self.terms


def _is_index_type(e: PrimExpr) -> bool:
    dtype = e.dtype
    return _dt.is_integer(dtype) and _dt.lanes_of(dtype) == 1


def _candidate_strides(terms, c: int) -> list[int]:
    """Common factors of ``c`` and the term scales, largest first (1 excluded)."""
    return sorted({gcd(c, abs(t.scale)) for t in terms} - {1}, reverse=True)


class Simplifier:
    """One simplification run under an Analyzer's facts (bounds are cached per run)."""

    def __init__(self, analyzer: Analyzer):
        self.analyzer = analyzer
        self._bound_cache: dict[object, ConstIntBound] = {}

    # ------------------------------------------------------------ entry points

    def simplify(self, e: PrimExpr) -> PrimExpr:
        if type(e) in _SUM_TYPES and _is_index_type(e):
            return self.to_expr(self.to_sum(e))
        return rewrite.rewrite(self, e)

    def to_sum(self, e: PrimExpr) -> SumForm:
        """The canonical form of a scalar integer expression."""
        method = _TO_SUM.get(type(e))
        if method is not None:
            return method(self, e)
        return self._opaque(e)

    def bound(self, form: SumForm) -> ConstIntBound:
        total = ConstIntBound(form.base, form.base)
        for t in form.terms:
            total = add_bounds(total, self._term_bound(t))
        return total

    def index_bound(self, index: PrimExpr, key: object) -> ConstIntBound:
        known = self._bound_cache.get(key)
        if known is None:
            known = self._bound_cache[key] = self.analyzer.const_int_bound(index)
        return known

    # ------------------------------------------------------------ building sums

    def const(self, value: int, dtype: str) -> SumForm:
        return SumForm((), value, dtype)

    def add(self, a: SumForm, b: SumForm) -> SumForm:
        terms = list(a.terms)
        for t in b.terms:
            _add_term(terms, t)
        form = SumForm(tuple(terms), a.base + b.base, a.dtype)
        return self._merge_splits(form) if len(terms) > 1 else form

    def scale(self, a: SumForm, factor: int) -> SumForm:
        if factor == 0:
            return self.const(0, a.dtype)
        return SumForm(tuple(t.scaled(factor) for t in a.terms), a.base * factor, a.dtype)

    def sub(self, a: SumForm, b: SumForm) -> SumForm:
        return self.add(a, self.scale(b, -1))

    def split(self, index: PrimExpr, key: object, lower: int, upper: int | None, scale: int) -> SumForm:
        """The form of ``((index mod upper) // lower) * scale``, with the trivial cases folded."""
        dtype = index.dtype
        if scale == 0 or (upper is not None and upper <= lower):
            return self.const(0, dtype)
        bound = self.index_bound(index, key)
        if upper is not None and bound.within(0, upper - 1):
            upper = None
        if upper is None and bound.min_value // lower == bound.max_value // lower and bound.is_finite:
            return self.const(bound.min_value // lower * scale, dtype)
        return SumForm((SplitTerm(index, key, lower, upper, scale),), 0, dtype)

    def _opaque(self, e: PrimExpr) -> SumForm:
        """An expression the form cannot open: simplify it and keep it whole."""
        done = rewrite.rewrite(self, e)
        if type(done) in _SUM_TYPES and done is not e:
            return self.to_sum(done)
        if isinstance(done, IntImm):
            return self.const(done.value, done.dtype)
        return self.split(done, expr_key(done), 1, None, 1)

    def _atom(self, e: PrimExpr, lower: int = 1, upper: int | None = None) -> SumForm:
        return self.split(e, expr_key(e), lower, upper, 1)

    # ------------------------------------------------------------ merging

    def _merge_splits(self, form: SumForm) -> SumForm:
        terms = list(form.terms)
        for i, a in enumerate(terms):
            for j, b in enumerate(terms):
                if i == j or a.key != b.key:
                    continue
                merged = _merge_pair(a, b)
                if merged is None:
                    continue
                rest = [t for k, t in enumerate(terms) if k not in (i, j)]
                others = SumForm(tuple(rest), form.base, form.dtype)
                lower, upper, scale = merged
                if lower == 1 and upper is None:
                    # The whole index is back: open it again so its terms can meet the others.
                    return self.add(others, self.scale(self.to_sum(a.index), scale))
                return self.add(others, self.split(a.index, a.key, lower, upper, scale))
        return form

    # ------------------------------------------------------------ division by constants

    def floordiv_const(self, a: SumForm, c: int) -> SumForm:
        """``a // c`` for ``c > 0``: multiples of ``c`` leave exactly, the rest is divided."""
        if c == 1:
            return a
        quotient = SumForm(
            tuple(
                SplitTerm(t.index, t.key, t.lower, t.upper, t.scale // c) for t in a.terms if t.scale % c == 0
            ),
            a.base // c,
            a.dtype,
        )
        rest = SumForm(tuple(t for t in a.terms if t.scale % c != 0), a.base % c, a.dtype)
        divided = self._divide_rest(rest, c)
        if divided is None:
            # Unresolved: keep the constant inside, ``(x + 5) // 4`` rather than ``(x + 1) // 4 + 1``.
            whole_base = SumForm(quotient.terms, 0, a.dtype)
            rest = SumForm(rest.terms, a.base, a.dtype)
            return self.add(whole_base, self._atom(self.to_expr(rest), lower=c))
        return self.add(quotient, divided)

    def _divide_rest(self, rest: SumForm, c: int) -> SumForm | None:
        """``rest // c`` when a rule resolves it (``0 <= rest.base < c``), else None."""
        if rest.is_const:
            return self.const(rest.base // c, rest.dtype)
        bound = self.bound(rest)
        if bound.is_finite and bound.min_value // c == bound.max_value // c:
            return self.const(bound.min_value // c, rest.dtype)
        if len(rest.terms) == 1 and rest.base == 0 and rest.terms[0].scale == 1:
            return self._split_floordiv(rest.terms[0], c)
        for stride in _candidate_strides(rest.terms, c):
            big, small = self._part_by_stride(rest, stride)
            if big is not None:
                return self.floordiv_const(big, c // stride)
        return None

    def floormod_const(self, a: SumForm, c: int) -> SumForm:
        """``a % c`` for ``c > 0``."""
        if c == 1:
            return self.const(0, a.dtype)
        rest = SumForm(tuple(t for t in a.terms if t.scale % c != 0), a.base % c, a.dtype)
        if rest.is_const:
            return rest
        bound = self.bound(rest)
        if bound.is_finite and bound.min_value // c == bound.max_value // c:
            return self.add(rest, self.const(-(bound.min_value // c) * c, a.dtype))
        if len(rest.terms) == 1 and rest.base == 0 and rest.terms[0].scale == 1:
            return self._split_floormod(rest.terms[0], c)
        for stride in _candidate_strides(rest.terms, c):
            big, small = self._part_by_stride(rest, stride)
            if big is not None:
                return self.add(self.scale(self.floormod_const(big, c // stride), stride), small)
        return self._atom(self.to_expr(rest), upper=c)

    def _part_by_stride(self, form: SumForm, stride: int) -> tuple[SumForm | None, SumForm]:
        """Write ``form`` as ``stride * big + small`` with ``0 <= small < stride``, if possible.

        Then ``form // (stride*m) == big // m`` and ``form % (stride*m) == stride*(big % m) + small``.
        """
        big = tuple(
            SplitTerm(t.index, t.key, t.lower, t.upper, t.scale // stride)
            for t in form.terms
            if t.scale % stride == 0
        )
        small = SumForm(tuple(t for t in form.terms if t.scale % stride != 0), form.base, form.dtype)
        if not big or not self.bound(small).within(0, stride - 1):
            return None, small
        return SumForm(big, 0, form.dtype), small

    def _split_floordiv(self, t: SplitTerm, c: int) -> SumForm:
        lower = t.lower * c
        if t.upper is None and _is_opened_sum(t.index):
            # ``(a*8 + b*4) // 3 // 2``: the larger divisor may share factors with the sum.
            return self.floordiv_const(self.to_sum(t.index), lower)
        if t.upper is None or t.upper % lower == 0:
            return self.split(t.index, t.key, lower, t.upper, 1)
        return self._atom(self._term_expr(t, 1), lower=c)

    def _split_floormod(self, t: SplitTerm, c: int) -> SumForm:
        upper = t.lower * c
        if t.upper is None or t.upper % upper == 0:
            return self.split(t.index, t.key, t.lower, upper, 1)
        return self._atom(self._term_expr(t, 1), upper=c)

    def _term_bound(self, t: SplitTerm) -> ConstIntBound:
        bound = self.index_bound(t.index, t.key)
        if t.upper is not None:
            bound = floormod_bounds(bound, ConstIntBound(t.upper, t.upper))
        bound = floordiv_bounds(bound, ConstIntBound(t.lower, t.lower))
        return scale_bound(bound, t.scale)

    # ------------------------------------------------------------ back to expressions

    def to_expr(self, form: SumForm) -> PrimExpr:
        """Print order: positive terms in order of appearance, then negative ones, constant last."""
        dtype = form.dtype
        positive = [t for t in form.terms if t.scale > 0]
        negative = [t for t in form.terms if t.scale < 0]
        result = None
        for t in positive:
            e = self._term_expr(t, t.scale)
            result = e if result is None else Add(result, e)
        if result is None and form.base > 0 and negative:
            result = IntImm(form.base, dtype)
            form = SumForm(form.terms, 0, dtype)
        for t in negative:
            if result is None:
                result = self._term_expr(t, t.scale)
            else:
                result = Sub(result, self._term_expr(t, -t.scale))
        if result is None:
            return IntImm(form.base, dtype)
        if form.base > 0:
            return Add(result, IntImm(form.base, dtype))
        if form.base < 0:
            return Sub(result, IntImm(-form.base, dtype))
        return result

    def _term_expr(self, t: SplitTerm, scale: int) -> PrimExpr:
        dtype = t.index.dtype
        e = t.index
        if t.upper is None:
            if t.lower != 1:
                e = FloorDiv(e, IntImm(t.lower, dtype))
        elif t.lower == 1:
            e = FloorMod(e, IntImm(t.upper, dtype))
        else:
            e = FloorDiv(FloorMod(e, IntImm(t.upper, dtype)), IntImm(t.lower, dtype))
        return e if scale == 1 else Mul(e, IntImm(scale, dtype))

    # ------------------------------------------------------------ per node type

    def _imm(self, e: IntImm) -> SumForm:
        return self.const(e.value, e.dtype)

    def _var(self, e: Var) -> SumForm:
        value = self.analyzer.substitution(e)
        if value is not None:
            return self.to_sum(value)
        return SumForm((SplitTerm(e, e, 1, None, 1),), 0, e.dtype)

    def _add(self, e: Add) -> SumForm:
        return self.add(self.to_sum(e.a), self.to_sum(e.b))

    def _sub(self, e: Sub) -> SumForm:
        return self.sub(self.to_sum(e.a), self.to_sum(e.b))

    def _mul(self, e: Mul) -> SumForm:
        a, b = self.to_sum(e.a), self.to_sum(e.b)
        if b.is_const:
            return self.scale(a, b.base)
        if a.is_const:
            return self.scale(b, a.base)
        return self._atom(Mul(self.to_expr(a), self.to_expr(b)))

    def _floordiv(self, e: FloorDiv) -> SumForm:
        a, b = self.to_sum(e.a), self.to_sum(e.b)
        if b.is_const and b.base > 0:
            return self.floordiv_const(a, b.base)
        if b.is_const and b.base < 0:
            return self.floordiv_const(self.scale(a, -1), -b.base)
        return self._atom(FloorDiv(self.to_expr(a), self.to_expr(b)))

    def _floormod(self, e: FloorMod) -> SumForm:
        a, b = self.to_sum(e.a), self.to_sum(e.b)
        if b.is_const and b.base > 0:
            return self.floormod_const(a, b.base)
        if b.is_const and b.base < 0:
            # x mod -c == -((-x) mod c): the remainder takes the divisor's sign.
            return self.scale(self.floormod_const(self.scale(a, -1), -b.base), -1)
        return self._atom(FloorMod(self.to_expr(a), self.to_expr(b)))

    def _truncdiv(self, e: Div) -> SumForm:
        a, b = self.to_sum(e.a), self.to_sum(e.b)
        if b.is_const and b.base != 0:
            c, sign = abs(b.base), (1 if b.base > 0 else -1)
            bound = self.bound(a)
            if bound.min_value >= 0:
                return self.scale(self.floordiv_const(a, c), sign)
            if bound.max_value <= 0:
                return self.scale(self.floordiv_const(self.scale(a, -1), c), -sign)
        return self._atom(Div(self.to_expr(a), self.to_expr(b)))

    def _truncmod(self, e: Mod) -> SumForm:
        a, b = self.to_sum(e.a), self.to_sum(e.b)
        if b.is_const and b.base != 0:
            c = abs(b.base)
            bound = self.bound(a)
            if bound.min_value >= 0:
                return self.floormod_const(a, c)
            if bound.max_value <= 0:
                return self.scale(self.floormod_const(self.scale(a, -1), c), -1)
        return self._atom(Mod(self.to_expr(a), self.to_expr(b)))


_TO_SUM = {
    IntImm: Simplifier._imm,
    Var: Simplifier._var,
    Add: Simplifier._add,
    Sub: Simplifier._sub,
    Mul: Simplifier._mul,
    FloorDiv: Simplifier._floordiv,
    FloorMod: Simplifier._floormod,
    Div: Simplifier._truncdiv,
    Mod: Simplifier._truncmod,
}


def _is_opened_sum(index: PrimExpr) -> bool:
    """Whether ``index`` is a sum the canonical form produced (and can open again)."""
    if isinstance(index, (Add, Sub)):
        return True
    return isinstance(index, Mul) and isinstance(index.b, IntImm)


def _add_term(terms: list[SplitTerm], t: SplitTerm) -> None:
    for i, u in enumerate(terms):
        if u.same_slot(t):
            scale = u.scale + t.scale
            if scale == 0:
                del terms[i]
            else:
                terms[i] = SplitTerm(u.index, u.key, u.lower, u.upper, scale)
            return
    terms.append(t)


def _merge_pair(a: SplitTerm, b: SplitTerm) -> tuple[int, int | None, int] | None:
    """(lower, upper, scale) of one split equal to ``a + b``, or None.

    ``(x mod u) // l * s + (x mod w) // u * (s * u / l) == (x mod w) // l * s``
    when ``l | u | w`` (the digits of ``x`` in mixed radix, put back together), and
    ``x // l * s - x // (l*m) * (s*m) == (x mod l*m) // l * s``.
    """
    digits_meet = a.upper is not None and a.upper == b.lower and a.upper % a.lower == 0
    digits_meet = digits_meet and (b.upper is None or b.upper % b.lower == 0)
    if digits_meet and b.scale == a.scale * (a.upper // a.lower):
        return a.lower, b.upper, a.scale
    quotients = a.upper is None and b.upper is None and b.lower > a.lower and b.lower % a.lower == 0
    if quotients and b.scale == -a.scale * (b.lower // a.lower):
        return a.lower, b.lower, a.scale
    return None


__all__ = ["POS_INF", "Simplifier", "SplitTerm", "SumForm", "expr_key"]
