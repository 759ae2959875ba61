"""Which instances of a block compute_at and reverse_compute_at regenerate under the target loop.

compute_at.py moves a block under a loop; this module solves, per block iterator,
the range it runs over during one iteration of that loop. ``provided`` is the
block's own region per instance (its writes for compute_at, its reads for
reverse_compute_at); ``required`` is the other side's region relaxed over one
iteration (the consumers' reads, or the producers' writes). An index ``a * v + b``,
``v // c`` or ``v % c`` of one iterator is solved dimension by dimension (TVM's
SolveBlockVarDomain; RegionPatternError for anything else).

compute_at covers: the producer runs over every instance any consumer needs (the
union of the solutions). reverse_compute_at cuts, as TVM does: the consumer runs
over the instances whose reads lie inside what the producers wrote in that same
iteration (the intersection, with ``ceil`` at a strided lower edge so no instance
runs in two iterations). Where the consumer's read in a dimension does not pin an
iterator (a window ``C[vi, vj:vj + 2]``, a constant index, ``v % c`` or a middle digit
``v % m // c``), the cut
would either lose instances or read elements a later iteration writes, so that
read must provably lie inside every iteration's produced range (a dimension the
loop produces whole), and ReadOutsideIterationError refuses the move otherwise;
TVM itself stops on such reads with an internal pattern-match error.
"""

from __future__ import annotations

from functools import reduce

from tir import Block, IntImm, PrimExpr, Range, Var, const, op
from tir.arith import Analyzer
from tir.arith.int_set import IntervalSet, eval_set, intersect, union
from tir.buffer import BufferRegion
from tir.expr import FloorDiv, FloorMod
from tir.functor import collect_vars, substitute
from tir.structural import structural_equal

from .errors import ScheduleError


class RegionPatternError(ScheduleError):
    """The block's write (read) indices are not ``a * v + b``, ``v // c`` or ``v % c`` of one iterator."""


class ReadOutsideIterationError(ScheduleError):
    """reverse_compute_at of a consumer whose read in some dimension is not inside what one
    iteration of the loop produces there, so cutting its loops to that iteration would read
    elements a later iteration writes or leave instances out."""


class _Domain:
    """The values a block iterator must take (``dom``) and may take (``bound``), as intervals."""

    def __init__(self):
        self.dom: list[IntervalSet] = []
        self.bound: list[IntervalSet] = []


def _ceildiv(a: PrimExpr, c: int) -> PrimExpr:
    return op.neg(op.floordiv(op.neg(a), c))


def _solve_dim(provided: Range, required: IntervalSet, dim_max: PrimExpr, block: Block, analyzer, reverse):
    """``(var, dom, bound)`` for one buffer dimension, or None when it constrains nothing."""
    index = analyzer.simplify(provided.min)
    iter_vars = {iv.var for iv in block.iter_vars}
    used = [v for v in collect_vars(index) if v in iter_vars]
    if not used:
        return None
    # A side the analysis could not bound is cut at the buffer's edge.
    low = required.min_value if isinstance(required.min_value, PrimExpr) else const(0, dim_max.dtype)
    high = required.max_value if isinstance(required.max_value, PrimExpr) else dim_max
    if len(used) == 1:
        v = used[0]
        if _wraps(index, v):
            return None
        if isinstance(index, FloorDiv) and index.a is v and isinstance(index.b, IntImm) and index.b.value > 0:
            c = index.b.value
            return v, IntervalSet(low * c, high * c + (c - 1)), IntervalSet(const(0), dim_max * c + (c - 1))
        b = analyzer.simplify(substitute(index, {v: const(0, v.dtype)}))
        a = analyzer.simplify(substitute(index, {v: const(1, v.dtype)}) - b)
        if isinstance(a, IntImm) and a.value == -1 and analyzer.can_prove_equal(index, b - v):
            # a reversed index (``9 - v``): the instances producing [low, high] are v in [b - high, b - low]
            return v, IntervalSet(b - high, b - low), IntervalSet(b - dim_max, b)
        if isinstance(a, IntImm) and a.value > 0 and analyzer.can_prove_equal(index, a * v + b):
            a = a.value
            if a == 1:
                return v, IntervalSet(low - b, high - b), IntervalSet(op.neg(b), dim_max - b)
            # Covering takes the instance reaching back below ``low``; cutting starts above it.
            first = _ceildiv(low - b, a) if reverse else op.floordiv(low - b, a)
            dom = IntervalSet(first, op.floordiv(high - b, a))
            return v, dom, IntervalSet(_ceildiv(op.neg(b), a), op.floordiv(dim_max - b, a))
    raise RegionPatternError(
        f"cannot tell which instances of block {block.name} produce the needed region: its index "
        f"{index!r} is not a * v + b (a > 0 or a == -1), v // c or v % c of a single block iterator. "
        "Simplify the block's indexing (e.g. with transform_layout) before moving it",
        block,
    )


def _pins_an_iterator(provided: Range, block: Block, analyzer: Analyzer) -> bool:
    """Whether the read in this dimension is one element per instance, ``a * v + b`` or ``v // c``
    of an iterator: then cutting the iterator to the produced range keeps exactly its readers."""
    extent = analyzer.simplify(provided.extent)
    if not (isinstance(extent, IntImm) and extent.value == 1):
        return False
    index = analyzer.simplify(provided.min)
    iter_vars = {iv.var for iv in block.iter_vars}
    used = [v for v in collect_vars(index) if v in iter_vars]
    return bool(used) and not isinstance(index, FloorMod) and not any(_wraps(index, v) for v in used)


def _wraps(index: PrimExpr, v: Var) -> bool:
    """Whether ``index`` is a digit of ``v`` that wraps around: ``v % m``, or a middle digit,
    ``v % m // c`` or ``v // c % m``. Such an index pins no range of ``v``."""
    if isinstance(index, FloorMod):
        inner = index.a
        return inner is v or (isinstance(inner, FloorDiv) and inner.a is v)
    return isinstance(index, FloorDiv) and isinstance(index.a, FloorMod) and index.a.a is v


def _check_read_inside(region: BufferRegion, dim: int, produced: IntervalSet, block: Block, analyzer) -> None:
    """Raise ReadOutsideIterationError unless the block's read of ``region`` in dimension ``dim``,
    over all its instances, lies inside ``produced`` in every iteration of the loop."""
    sets = {iv.var: IntervalSet.from_range(iv.dom, analyzer) for iv in block.iter_vars}
    r = region.region[dim]
    low = eval_set(r.min, sets, analyzer).min_value
    high = eval_set(r.min + r.extent - 1, sets, analyzer).max_value
    bounded = all(isinstance(x, PrimExpr) for x in (low, high, produced.min_value, produced.max_value))
    if (
        bounded
        and analyzer.can_prove(produced.min_value <= low)
        and analyzer.can_prove(high <= produced.max_value)
    ):
        return
    raise ReadOutsideIterationError(
        f"can't reverse_compute_at block {block.name}: in dimension {dim} of {region.buffer.name} it reads "
        f"{r.min!r} (extent {r.extent!r}), which does not follow one iteration of the loop: that iteration "
        f"produces only [{produced.min_value!r}, {produced.max_value!r}] there, so an instance would read "
        "elements another iteration writes. Move it under a loop whose iterations produce that dimension "
        "whole (an outer loop), or make the read one element per instance",
        block,
    )


def _one_region_per_buffer(regions: tuple[BufferRegion, ...], analyzer: Analyzer) -> list[BufferRegion]:
    """The reads of each buffer as one region (TVM unions them too): ``C[vj]`` and ``C[vj + 1]``
    read separately are the window ``C[vj:vj + 2]``, which cutting must treat as one."""
    grouped: dict = {}
    for region in regions:
        grouped.setdefault(region.buffer, []).append(region)
    merged = []
    for buffer, same in grouped.items():
        ranges = []
        for dim_ranges in zip(*(r.region for r in same)):
            first = dim_ranges[0]
            if all(structural_equal(r, first) for r in dim_ranges[1:]):
                ranges.append(first)
                continue
            low = analyzer.simplify(reduce(op.min_value, [r.min for r in dim_ranges]))
            high = analyzer.simplify(reduce(op.max_value, [r.min + r.extent for r in dim_ranges]))
            ranges.append(Range(low, analyzer.simplify(high - low)))
        merged.append(BufferRegion(buffer, tuple(ranges)))
    return merged


def iteration_domains(block, provided_regions, required, analyzer, reverse: bool) -> list[tuple]:
    """Per block iterator: ``(min, max, bounds)``, bounds being intervals it must stay in."""
    domains: dict[Var, _Domain] = {iv.var: _Domain() for iv in block.iter_vars}
    if reverse:
        provided_regions = _one_region_per_buffer(provided_regions, analyzer)
    for provided in provided_regions:
        needed = required.get(provided.buffer)
        if not needed:
            continue
        for d, (p, extent) in enumerate(zip(provided.region, provided.buffer.shape)):
            hull = union([sets[d] for sets in needed], analyzer)
            if reverse and not _pins_an_iterator(p, block, analyzer):
                _check_read_inside(provided, d, hull, block, analyzer)
                continue
            solved = _solve_dim(p, hull, extent - 1, block, analyzer, reverse)
            if solved is not None:
                var, dom, bound = solved
                domains[var].dom.append(dom)
                domains[var].bound.append(bound)
    out = []
    for iv in block.iter_vars:
        info = domains[iv.var]
        full = IntervalSet.from_range(iv.dom, analyzer)
        if not info.dom:
            out.append((full.min_value, full.max_value, []))
            continue
        if reverse:
            _check_same_tiles(iv.var, info.dom, block, analyzer)
        dom = intersect(info.dom, analyzer) if reverse else union(info.dom, analyzer)
        low, high = analyzer.simplify(dom.min_value), analyzer.simplify(dom.max_value)
        bound = intersect([union(info.bound, analyzer), full], analyzer)
        bounds = [bound]
        if _contains(bound, low, high, analyzer):
            bounds = []
        elif _contains(dom, bound.min_value, bound.max_value, analyzer):
            low, high, bounds = bound.min_value, bound.max_value, []
        out.append((low, high, bounds))
    return out


def _check_same_tiles(var: Var, doms: list[IntervalSet], block, analyzer: Analyzer) -> None:
    """A consumer runs, in each iteration, the instances whose reads that iteration produced: with
    several reads pinning one iterator, their tiles must be the same, or the instances that only one
    producer's tile holds in a given iteration would run in none."""
    first = doms[0]
    for other in doms[1:]:
        same = _contains(first, other.min_value, other.max_value, analyzer) and _contains(
            other, first.min_value, first.max_value, analyzer
        )
        if not same:
            raise ReadOutsideIterationError(
                f"can't reverse_compute_at block {block.name}: its reads produce different tiles of "
                f"iterator {var.name} in one iteration of the loop ([{first.min_value!r}, "
                f"{first.max_value!r}] and [{other.min_value!r}, {other.max_value!r}]), so some "
                "instances would run in no iteration. Move it under a loop where its producers write the "
                "same tile, or below the loop nest",
                block,
            )


def _contains(s: IntervalSet, low: PrimExpr, high: PrimExpr, analyzer: Analyzer) -> bool:
    return analyzer.can_prove(s.min_value <= low) and analyzer.can_prove(high <= s.max_value)
