"""Affine iteration maps: recognizing the index patterns that split, fuse and reorder make.

``detect_iter_map(indices, input_iters)`` writes each index as an ``IterSumExpr``:
a sum of ``IterSplitExpr`` pieces (``(source // lower_factor) % extent * scale``)
of the input iterators plus a base that does not vary. It succeeds when every
iterator is cut into disjoint pieces (the digits of a mixed-radix number) and
every sum puts its pieces together without overlap, so ``i0 * 128 + i1``
(``i1 < 128``), ``f // 8`` and ``f % 8``, or ``(a * 3 + b) // 2`` are affine while
``i0 * 128 + i1`` with ``i1 < 129``, ``i * i`` or ``A[i]`` are not. With
``check_bijective`` every iterator must also be used completely and every sum
must step by 1, which is what a block's bindings need to be a one-to-one
relabelling of the loops. This is a small take on TVM's DetectIterMap; the
schedule's legality checks (affine bindings, ``fuse``/``split`` results) use it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .. import op as _op
from ..expr import LT, Add, And, IntImm, PrimExpr, Range, Sub, Var, const
from ..functor import uses_var
from .analyzer import Analyzer
from .canonical import Simplifier, SplitTerm, SumForm


@dataclass(frozen=True, slots=True, eq=False)
class IterMark:
    """An iterator being cut into pieces: an input Var, or a fused IterSumExpr; values in ``[0, extent)``."""

    source: Var | IterSumExpr
    extent: int | None  # None: a symbolic extent (the iterator may only be used whole)

    def to_expr(self) -> PrimExpr:
        return self.source if isinstance(self.source, Var) else self.source.to_expr()


@dataclass(frozen=True, slots=True, eq=False)
class IterSplitExpr:
    """``(source // lower_factor) % extent * scale``."""

    source: IterMark
    lower_factor: int
    extent: int | None
    scale: int

    def to_expr(self) -> PrimExpr:
        e = self.source.to_expr()
        if self.lower_factor != 1:
            e = _op.floordiv(e, self.lower_factor)
        whole = self.source.extent is None or self.extent is None
        if not whole and self.lower_factor * self.extent < self.source.extent:
            e = _op.floormod(e, self.extent)
        return _op.mul(e, self.scale)


@dataclass(frozen=True, slots=True, eq=False)
class IterSumExpr:
    """``sum(args) + base``; ``args`` run from the largest scale to the smallest."""

    args: tuple[IterSplitExpr, ...]
    base: PrimExpr
    limit: int | None = None  # from a predicate ``sum < limit`` (a split that does not divide)

    def to_expr(self) -> PrimExpr:
        total = const(0, self.base.dtype)
        for arg in self.args:
            total = _op.add(total, arg.to_expr())
        return _op.add(total, self.base)

    @property
    def extent(self) -> int | None:
        """How many values the sum steps through (before scaling by the smallest scale)."""
        if self.limit is not None:
            return self.limit
        total = 1
        for arg in self.args:
            if arg.extent is None:
                return None
            total *= arg.extent
        return total


class _NotAffine(Exception):
    """Raised inside detection when an index is not an affine map of the iterators."""


def detect_iter_map(
    indices: Sequence[PrimExpr],
    input_iters: Mapping[Var, Range],
    predicate: PrimExpr | bool = True,
    check_bijective: bool = False,
    analyzer: Analyzer | None = None,
) -> list[IterSumExpr] | None:
    """The affine form of each index in the iterators of ``input_iters`` (Ranges from 0), or None.

    ``predicate`` (``T.where``) may bound a fused index, ``i0 * 128 + i1 < 1000``,
    which sets that sum's extent for the bijectivity check; other conditions are
    ignored (they only shrink the domain).
    """
    try:
        return _Detector(input_iters, analyzer).detect(indices, const(predicate), check_bijective)
    except _NotAffine:
        return None


def iter_map_simplify(
    indices: Sequence[PrimExpr],
    input_iters: Mapping[Var, Range],
    predicate: PrimExpr | bool = True,
    analyzer: Analyzer | None = None,
) -> list[PrimExpr]:
    """The indices rewritten in their normalized affine form (simplified as they are when not affine)."""
    analyzer = _analyzer_with(input_iters, analyzer)
    sums = detect_iter_map(indices, input_iters, predicate, analyzer=analyzer)
    if sums is None:
        return [analyzer.simplify(i) for i in indices]
    return [analyzer.simplify(s.to_expr()) for s in sums]


def _analyzer_with(input_iters: Mapping[Var, Range], analyzer: Analyzer | None) -> Analyzer:
    analyzer = analyzer.copy() if analyzer is not None else Analyzer()
    for var, dom in input_iters.items():
        analyzer.bind(var, dom)
    return analyzer


class _Detector:
    def __init__(self, input_iters: Mapping[Var, Range], analyzer: Analyzer | None):
        self.analyzer = _analyzer_with(input_iters, analyzer)
        self.simplifier = Simplifier(self.analyzer)
        self.marks: dict[Var, IterMark] = {}
        for var, dom in input_iters.items():
            if not (isinstance(dom.min, IntImm) and dom.min.value == 0):
                raise _NotAffine
            extent = dom.extent.value if isinstance(dom.extent, IntImm) else None
            self.marks[var] = IterMark(var, extent)
        self.fused: dict[object, IterMark] = {}
        self.uses: dict[IterMark, list[IterSplitExpr]] = {m: [] for m in self.marks.values()}
        self.limits: dict[object, int] = {}

    def detect(self, indices: Sequence[PrimExpr], predicate: PrimExpr, check_bijective: bool) -> list:
        self._read_predicate(predicate)
        sums = [self._sum(self.simplifier.to_sum(const(index)), check_bijective) for index in indices]
        for mark, splits in self.uses.items():
            self._check_disjoint(mark, splits, check_bijective)
        return sums

    def _read_predicate(self, predicate: PrimExpr) -> None:
        conditions = [predicate]
        while conditions:
            c = conditions.pop()
            if isinstance(c, And):
                conditions += [c.a, c.b]
            elif isinstance(c, LT) and isinstance(c.b, IntImm):
                self.limits[_form_key(self.simplifier.to_sum(c.a))] = c.b.value

    # ------------------------------------------------------------ sums

    def _sum(self, form: SumForm, check_bijective: bool) -> IterSumExpr:
        """One index: its iterator pieces must fit together like the digits of one number."""
        splits, fixed = [], []
        for term in form.terms:
            split = self._split(term)
            if split is None:
                fixed.append(term)
            else:
                splits.append(split)
        base = self.simplifier.to_expr(SumForm(tuple(fixed), form.base, form.dtype))
        splits.sort(key=lambda s: s.scale)
        expected = splits[0].scale if splits else 1
        if check_bijective and expected != 1:
            raise _NotAffine
        for split in splits:
            if split.scale != expected or split.extent is None and split is not splits[-1]:
                raise _NotAffine
            expected = split.scale * split.extent if split.extent is not None else None
        limit = self.limits.get(_form_key(SumForm(form.terms, 0, form.dtype)))
        result = IterSumExpr(tuple(reversed(splits)), base)
        if limit is not None and result.extent is not None and limit < result.extent:
            result = IterSumExpr(result.args, base, limit)
        return result

    def _split(self, term: SplitTerm) -> IterSplitExpr | None:
        """The iterator piece a canonical term stands for; None for a term that does not vary."""
        mark = self._mark(term.index, term.key)
        if mark is None:
            return None
        if term.scale <= 0:
            raise _NotAffine
        total = mark.extent
        if total is None:
            if term.lower != 1 or term.upper is not None:
                raise _NotAffine
            split = IterSplitExpr(mark, 1, None, term.scale)
        else:
            top = total if term.upper is None else term.upper
            if term.upper is not None and (term.upper % term.lower or total % term.upper):
                raise _NotAffine
            split = IterSplitExpr(mark, term.lower, -(-min(top, total) // term.lower), term.scale)
        self.uses[mark].append(split)
        return split

    def _mark(self, index: PrimExpr, key: object) -> IterMark | None:
        if isinstance(index, Var):
            if index in self.marks:
                return self.marks[index]
            return None
        if not self._varies(index):
            return None
        if not isinstance(index, (Add, Sub)):
            raise _NotAffine  # a product of iterators, a load indexed by one, ...
        known = self.fused.get(key)
        if known is None:
            inner = self._sum(self.simplifier.to_sum(index), check_bijective=False)
            if not isinstance(inner.base, IntImm) or inner.base.value != 0 or inner.args[-1].scale != 1:
                raise _NotAffine
            known = self.fused[key] = IterMark(inner, inner.extent)
            self.uses[known] = []
        return known

    def _varies(self, index: PrimExpr) -> bool:
        return uses_var(index, lambda v: v in self.marks)

    # ------------------------------------------------------------ pieces of one iterator

    def _check_disjoint(self, mark: IterMark, splits: list[IterSplitExpr], check_bijective: bool) -> None:
        """Pieces of one iterator may not overlap; bijective maps use every digit exactly once."""
        splits = sorted(splits, key=lambda s: s.lower_factor)
        covered = 1
        for split in splits:
            if split.lower_factor < covered or (check_bijective and split.lower_factor != covered):
                raise _NotAffine
            covered = split.lower_factor * split.extent if split.extent is not None else None
            if covered is None and split is not splits[-1]:
                raise _NotAffine
        if check_bijective and mark.extent != 1 and mark.extent != covered:
            # An iterator left out (covered == 1) or cut short loses values.
            raise _NotAffine


def _form_key(form: SumForm) -> object:
    """Equal for equal sums whatever the order of their terms."""
    return frozenset((t.key, t.lower, t.upper, t.scale) for t in form.terms), form.base


def inverse_affine_iter_map(sums: Sequence[IterSumExpr], outputs: Sequence[PrimExpr]) -> dict[Var, PrimExpr]:
    """Each input iterator of a bijective map (``detect_iter_map(..., check_bijective=True)``) as an
    expression of the map's ``outputs``: the inverse that TVM's InverseAffineIterMap gives.

    Each output is read as the mixed-radix number its sum spells, digit by digit; a fused iterator
    (a mark whose source is itself a sum) is rebuilt from its digits and read again.

    >>> # i (extent 4), j (extent 8): f = i * 8 + j  ->  i = f // 8, j = f % 8      # doctest: +SKIP
    """
    values: dict[IterMark, PrimExpr] = {}

    def read_digits(total: IterSumExpr, value: PrimExpr) -> None:
        rest = _op.sub(value, total.base)
        for arg in total.args:
            digit = _op.floordiv(rest, arg.scale) if arg.scale != 1 else rest
            if arg is not total.args[0] and arg.extent is not None:
                digit = _op.floormod(digit, arg.extent)
            piece = _op.mul(digit, arg.lower_factor) if arg.lower_factor != 1 else digit
            # Lower digits first, as TVM's inverse writes the sum (`vm + vi * 16`).
            values[arg.source] = _op.add(piece, values[arg.source]) if arg.source in values else piece

    for total, output in zip(sums, outputs):
        read_digits(total, output)
    while any(isinstance(mark.source, IterSumExpr) for mark in values):
        mark = next(m for m in values if isinstance(m.source, IterSumExpr))
        read_digits(mark.source, values.pop(mark))
    return {mark.source: value for mark, value in values.items()}
