"""Shrink each block-allocated buffer to the region its accesses touch, and re-index them.

TVM's CompactBufferAllocation, on block-form IR after plan_buffer_allocation. For every
buffer a block allocates (parameters excepted), the accesses below the block are relaxed
to an interval per dimension: block iterators are replaced by the values bound to them,
and loops below the accesses' LCA vary over their ranges. A "shared" buffer's threadIdx
and vthread loops vary too, wherever they are, because the threads of a block fill and
read it together; blockIdx loops never do (each thread block has its own copy). Serial
loops between the allocation and the LCA stay fixed: every access lies inside one of
their iterations, so one iteration's region is enough (the k0 loop of a shared-memory
matmul gets one k-tile, as in TVM). ``T.where`` and ``if`` conditions of the form
``index_part < bound`` cut the region (the window sum's fetch of 130 out of 2 * 128).

The buffer becomes a new Buffer of the region's extents (a dimension that would not shrink
keeps its shape and offset 0), and every load, store and block region of it is rewritten
to ``index - region.min``. The rewritten indices are written over loop variables (the
block bindings substituted), as after TVM's ConvertBlocksToOpaque: ``A_shared[ax0_0 * 128
+ ax0_1]`` and ``A_shared[i_1 + 1]`` for the seed window sum. The regions of the blocks
that access a compacted buffer are inferred again, unless ``infer_regions=False`` (as in
plan_buffer_allocation: then they are left empty, for the pipeline's later passes, which
never read them).

Then, as TVM's CompactBufferAllocation does, a buffer that a block's ``buffer_dim_align``
annotation names (``sch.storage_align(block, buffer_index, axis, factor, offset)``) gets
``strides``: from the innermost dimension out, each stride is the next one times its
extent, and an aligned axis's stride is padded up to the next value with
``stride % factor == offset`` (a 16 x 16 shared tile aligned with (32, 4) gets strides
(36, 1)). flatten_buffer indexes and sizes the buffer by these strides, so every
target allocates the padded rows; what is computed does not change.
"""

from __future__ import annotations

from dataclasses import replace

from .. import op
from ..analysis.block_access import (
    EXPLICIT_READ_REGION,
    EXPLICIT_WRITE_REGION,
    explicit_regions,
    infer_access_regions,
)
from ..arith import Analyzer, eval_set
from ..arith.const_bound import POS_INF
from ..arith.int_set import Infinity, IntervalSet
from ..buffer import Buffer, BufferRegion
from ..expr import GE, GT, LE, LT, And, BufferLoad, IntImm, PrimExpr, Range, Var
from ..function import PrimFunc
from ..functor import Mutator, StmtMutator, Visitor, collect_vars, post_order_visit, substitute
from ..stmt import Block, BlockRealize, BufferStore, For, IfThenElse, Stmt
from .plan_buffer_allocation import buffer_access_lca

_COOPERATIVE_TAGS = ("threadIdx", "vthread")
# The block annotation storage_align records: [[buffer_index, axis, factor, offset], ...].
BUFFER_DIM_ALIGN = "buffer_dim_align"


class _Access:
    """One load or store, with what holds around it: substitutions, loops, conditions."""

    def __init__(self, buffer, indices, bindings, loops, conditions):
        self.buffer = buffer
        self.indices = tuple(substitute(i, bindings) for i in indices)
        self.loops = loops
        self.conditions = conditions


class _AccessCollector(Visitor):
    """Every access below a block, with the loops (outermost first) and conditions around it."""

    def __init__(self, outer_loops: list[For]):
        self.loops: list[For] = list(outer_loops)
        self.bindings: dict[Var, PrimExpr] = {}
        self.conditions: list[PrimExpr] = []
        self.accesses: list[_Access] = []

    def visit_For(self, loop: For) -> None:
        self.loops.append(loop)
        self.generic_visit(loop)
        self.loops.pop()

    def visit_BlockRealize(self, realize: BlockRealize) -> None:
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            self.bindings[iv.var] = substitute(value, self.bindings)
        self.conditions.append(substitute(realize.predicate, self.bindings))
        block = realize.block
        # A declared region (annotate_buffer_access) widens the buffer's hull by its first and last
        # corner. Unlike TVM it never narrows it: the body's own accesses count too, so a region
        # declared smaller than what the body touches cannot make the buffer too small.
        declared = {
            **explicit_regions(block, EXPLICIT_READ_REGION),
            **explicit_regions(block, EXPLICIT_WRITE_REGION),
        }
        for region in declared.values():
            self._record(region.buffer, [r.min for r in region.region])
            self._record(region.buffer, [r.min + r.extent - 1 for r in region.region])
        if block.init is not None:
            self.visit(block.init)
        self.visit(block.body)
        self.conditions.pop()

    def visit_IfThenElse(self, stmt: IfThenElse) -> None:
        self.visit(stmt.condition)
        self.conditions.append(substitute(stmt.condition, self.bindings))
        self.visit(stmt.then_case)
        self.conditions.pop()
        if stmt.else_case is not None:
            self.visit(stmt.else_case)

    def _record(self, buffer: Buffer, indices) -> None:
        self.accesses.append(
            _Access(buffer, indices, self.bindings, tuple(self.loops), tuple(self.conditions))
        )

    def visit_BufferLoad(self, load: BufferLoad) -> None:
        self._record(load.buffer, load.indices)
        self.generic_visit(load)

    def visit_BufferStore(self, store: BufferStore) -> None:
        self._record(store.buffer, store.indices)
        self.generic_visit(store)


def _conjuncts(cond: PrimExpr) -> list[PrimExpr]:
    if isinstance(cond, And):
        return _conjuncts(cond.a) + _conjuncts(cond.b)
    return [cond]


def _bounds_of(cond: PrimExpr) -> list[tuple[PrimExpr, PrimExpr, bool]]:
    """``(expr, bound, is_upper)`` facts ``expr <= bound`` / ``expr >= bound`` a condition gives."""
    facts = []
    for c in _conjuncts(cond):
        if isinstance(c, LT):
            facts.append((c.a, c.b - 1, True))
        elif isinstance(c, LE):
            facts.append((c.a, c.b, True))
        elif isinstance(c, GT):
            facts.append((c.a, c.b + 1, False))
        elif isinstance(c, GE):
            facts.append((c.a, c.b, False))
    return facts


def _index_set(
    index: PrimExpr, access: _Access, relaxed: dict[Var, IntervalSet], analyzer: Analyzer
) -> IntervalSet:
    index = analyzer.canonical_simplify(index)
    found = eval_set(index, relaxed, analyzer)
    low, high = found.min_value, found.max_value
    for cond in access.conditions:
        for expr, bound, is_upper in _bounds_of(cond):
            # index = expr + rest with rest free of relaxed vars: the fact bounds the index.
            rest = analyzer.canonical_simplify(index - expr)
            if any(v in relaxed for v in collect_vars(rest) | collect_vars(bound)):
                continue
            limit = analyzer.canonical_simplify(bound + rest)
            if is_upper and (isinstance(high, Infinity) or analyzer.can_prove(LT(limit, high))):
                high = limit
            if not is_upper and (isinstance(low, Infinity) or analyzer.can_prove(GT(limit, low))):
                low = limit
    return IntervalSet(low, high)


def _relaxed_loops(access: _Access, lca_depth: int, shared: bool) -> dict[Var, Range]:
    relaxed = {}
    for depth, loop in enumerate(access.loops):
        cooperative = shared and (loop.thread_tag or "").startswith(_COOPERATIVE_TAGS)
        if depth >= lca_depth or cooperative:
            relaxed[loop.loop_var] = Range(loop.min, loop.extent)
    return relaxed


def _compact_region(
    buffer: Buffer, accesses: list[_Access], lca_depth: int, analyzer: Analyzer
) -> tuple[Buffer, tuple[PrimExpr, ...]] | None:
    """The compacted buffer and the offset per dimension, or None when nothing shrinks."""
    lows: list[list[PrimExpr]] = [[] for _ in buffer.shape]
    highs: list[list[PrimExpr]] = [[] for _ in buffer.shape]
    for access in accesses:
        loops = _relaxed_loops(access, lca_depth, buffer.scope == "shared")
        # As sets once per access, not once per index inside eval_set.
        relaxed = {var: IntervalSet.from_range(r, analyzer) for var, r in loops.items()}
        for dim, index in enumerate(access.indices):
            s = _index_set(index, access, relaxed, analyzer)
            lows[dim].append(s.min_value)
            highs[dim].append(s.max_value)
    shape, offsets = [], []
    for dim, full in enumerate(buffer.shape):
        low, extent = _dim_range(lows[dim], highs[dim], full, analyzer)
        shape.append(extent)
        offsets.append(low)
    unchanged = all(s is f for s, f in zip(shape, buffer.shape))
    if unchanged and all(isinstance(o, IntImm) and o.value == 0 for o in offsets):
        return None
    return Buffer(buffer.name, tuple(shape), buffer.dtype, buffer.scope), tuple(offsets)


def _dim_range(
    lows: list[PrimExpr], highs: list[PrimExpr], full: PrimExpr, analyzer: Analyzer
) -> tuple[PrimExpr, PrimExpr]:
    """(offset, extent) of one dimension; the full dimension when the hull is unknown or not smaller."""
    keep = (IntImm(0, full.dtype), full)
    if not lows or any(isinstance(b, Infinity) for b in lows + highs):
        return keep
    low = _hull_end(lows, analyzer, lower=True)
    high = _hull_end(highs, analyzer, lower=False)
    extent = analyzer.canonical_simplify(high - low + 1)
    if not isinstance(extent, IntImm):
        bound = analyzer.const_int_bound(extent).max_value
        if bound >= POS_INF or not isinstance(full, IntImm):
            return keep  # a dynamic dimension (n) is exact; a bound from n's dtype is not a size
        extent = IntImm(bound, full.dtype)
    if isinstance(full, IntImm) and extent.value >= full.value:
        return keep
    return low, extent


def _hull_end(values: list[PrimExpr], analyzer: Analyzer, lower: bool) -> PrimExpr:
    """The least (``lower``) or greatest of ``values``, symbolic when no order is provable."""
    out = values[0]
    for v in values[1:]:
        keep_out = LE(out, v) if lower else GE(out, v)
        take_v = LE(v, out) if lower else GE(v, out)
        if analyzer.can_prove(keep_out):
            continue
        if analyzer.can_prove(take_v):
            out = v
            continue
        out = analyzer.canonical_simplify(op.min_value(out, v) if lower else op.max_value(out, v))
    return out


class _Reindexer(Mutator):
    """Rewrites accesses to compacted buffers as ``index - offset`` over loop variables."""

    def __init__(
        self,
        remap: dict[Buffer, tuple[Buffer, tuple[PrimExpr, ...]]],
        analyzer: Analyzer,
        infer_regions: bool,
    ):
        self.remap = remap
        self.analyzer = analyzer
        self.infer_regions = infer_regions
        self.bindings: dict[Var, PrimExpr] = {}

    def _indices(self, buffer: Buffer, indices) -> tuple[Buffer, tuple[PrimExpr, ...]]:
        new, offsets = self.remap[buffer]
        return new, tuple(
            self.analyzer.canonical_simplify(substitute(i, self.bindings) - off)
            for i, off in zip(indices, offsets)
        )

    def visit_BlockRealize(self, realize: BlockRealize) -> Stmt:
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            self.bindings[iv.var] = substitute(value, self.bindings)
        return self.generic_visit(realize)

    def visit_Block(self, block: Block) -> Stmt:
        touched = any(r.buffer in self.remap for r in block.reads + block.writes)
        if not self.infer_regions:
            return self._without_regions(block, touched)
        new = self.generic_visit(block)
        if new is block or not touched:
            return new
        # Regions are re-inferred from the rewritten body: an outer block's regions were over
        # loops below it, which the offsets may name (k0 in the matmul's tile offsets).
        reads, writes = infer_access_regions(new) if self.infer_regions else ((), ())
        return Block(
            new.name, new.iter_vars, reads, writes, new.body, new.init, new.alloc_buffers, new.annotations
        )

    def _without_regions(self, block: Block, touched: bool) -> Block:
        """``visit_Block`` when regions are not inferred: the regions of a block that names a
        compacted buffer are left empty and the others name none, so neither is rewritten."""
        body = self.visit(block.body)
        init = self.visit(block.init) if block.init is not None else None
        if touched:
            reads, writes = (), ()
        elif body is block.body and init is block.init:
            return block
        else:
            reads, writes = block.reads, block.writes
        return Block(
            block.name, block.iter_vars, reads, writes, body, init, block.alloc_buffers, block.annotations
        )

    def visit_BufferRegion(self, region: BufferRegion) -> BufferRegion:
        # Inference replaces these, but for a declared one (annotate_buffer_access), which it keeps.
        if region.buffer not in self.remap:
            return region
        new, mins = self._indices(region.buffer, [r.min for r in region.region])
        return BufferRegion(new, tuple(Range(m, r.extent) for m, r in zip(mins, region.region)))

    def visit_BufferLoad(self, load: BufferLoad) -> PrimExpr:
        load = self.generic_visit(load)
        if load.buffer not in self.remap:
            return load
        new, indices = self._indices(load.buffer, load.indices)
        return BufferLoad(new, indices)

    def visit_BufferStore(self, store: BufferStore) -> Stmt:
        store = self.generic_visit(store)
        if store.buffer not in self.remap:
            return store
        new, indices = self._indices(store.buffer, store.indices)
        return BufferStore(new, store.value, indices)


def _storage_alignments(body: Stmt) -> dict[Buffer, dict[int, tuple[int, int]]]:
    """Buffer -> {axis: (factor, offset)} from the ``buffer_dim_align`` annotations of the blocks."""
    found: dict[Buffer, dict[int, tuple[int, int]]] = {}

    def visit(node) -> None:
        if isinstance(node, Block):
            for buffer_index, axis, factor, offset in node.annotations.get(BUFFER_DIM_ALIGN, ()):
                buffer = node.writes[buffer_index].buffer
                found.setdefault(buffer, {})[axis % buffer.ndim] = (factor, offset)

    post_order_visit(body, visit)
    return found


def _aligned_strides(shape: tuple[PrimExpr, ...], aligns: dict[int, tuple[int, int]], analyzer: Analyzer):
    """TVM's padded strides: row-major from the inside out, an aligned axis rounded up to
    ``factor * k + offset``."""
    strides: list[PrimExpr] = []
    stride: PrimExpr = IntImm(1, shape[-1].dtype)
    for axis in reversed(range(len(shape))):
        if axis in aligns:
            factor, offset = aligns[axis]
            pad = op.floormod(IntImm(factor + offset, stride.dtype) - op.floormod(stride, factor), factor)
            stride = analyzer.simplify(stride + pad)
        strides.append(stride)
        stride = analyzer.simplify(stride * shape[axis])
    return tuple(reversed(strides))


class _Compactor(StmtMutator):
    def __init__(self, params: set[Buffer], infer_regions: bool, aligns: dict):
        self.params = params
        self.infer_regions = infer_regions
        self.aligns = aligns
        self.loops: list[For] = []
        self.analyzer = Analyzer()

    def visit_For(self, loop: For) -> Stmt:
        self.loops.append(loop)
        new = self.generic_visit(loop)
        self.loops.pop()
        return new

    def visit_Block(self, block: Block) -> Stmt:
        block = self.generic_visit(block)
        targets = [b for b in block.alloc_buffers if b not in self.params]
        if not targets:
            return block
        collector = _AccessCollector(self.loops)
        if block.init is not None:
            collector.visit(block.init)
        collector.visit(block.body)
        paths = buffer_access_lca(block.body)
        remap = {}
        for buffer in targets:
            accesses = [a for a in collector.accesses if a.buffer is buffer]
            lca_depth = len(self.loops) + sum(isinstance(s, For) for s in paths.get(buffer, ()))
            compacted = _compact_region(buffer, accesses, lca_depth, self.analyzer)
            if buffer in self.aligns:
                new, offsets = compacted or (buffer, tuple(IntImm(0, d.dtype) for d in buffer.shape))
                strides = _aligned_strides(new.shape, self.aligns[buffer], self.analyzer)
                compacted = replace(new, strides=strides), offsets
            if compacted is not None:
                remap[buffer] = compacted
        if not remap:
            return block
        reindexer = _Reindexer(remap, self.analyzer, self.infer_regions)
        body = reindexer.visit(block.body)
        init = reindexer.visit(block.init) if block.init is not None else None
        allocs = tuple(remap[b][0] if b in remap else b for b in block.alloc_buffers)
        return Block(
            block.name, block.iter_vars, block.reads, block.writes, body, init, allocs, block.annotations
        )


def compact_buffer_allocation(func: PrimFunc, infer_regions: bool = True) -> PrimFunc:
    """Shrink every intermediate buffer allocated in a block to the region it is accessed in."""
    aligns = _storage_alignments(func.body)
    return func.with_body(_Compactor(set(func.buffer_params), infer_regions, aligns).visit(func.body))
