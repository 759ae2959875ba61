"""Read/write region inference for blocks (TVM's GetBlockAccessRegion).

``infer_access_regions(block)`` returns the regions a block reads and writes,
from the loads and stores in its ``init`` and ``body``, nested blocks included.
The block's own iterators are points; loops inside the block are relaxed over
their ranges; a nested block's iterators are replaced by the values bound to
them. There is one region per buffer, the hull of all its accesses, in order of
first appearance; buffers the block (or a nested block) allocates are left out.
The parser calls this for blocks without ``T.reads``/``T.writes``, and the
schedule calls it whenever a primitive rewrites a block body.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..arith import Analyzer
from ..arith.int_set import IntervalSet, relax_indices, set_to_range, union
from ..buffer import Buffer, BufferRegion
from ..expr import BufferLoad, BufferPointer, Let, PrimExpr, Range, Var, const
from ..functor import Visitor, substitute, uses_var
from ..matrix_ops import matrix_op_of
from ..stmt import (
    Allocate,
    Block,
    BlockRealize,
    BufferStore,
    Evaluate,
    For,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
)

# TVM's block annotations naming the reads / writes a user declared (annotate_buffer_access):
# a list of indices into the block's T.reads / T.writes that inference keeps as they are.
EXPLICIT_READ_REGION = "explicit_read_region"
EXPLICIT_WRITE_REGION = "explicit_write_region"


def explicit_regions(block: Block, key: str) -> dict[Buffer, BufferRegion]:
    """The declared regions of ``block`` under ``key``, by buffer."""
    regions = block.reads if key == EXPLICIT_READ_REGION else block.writes
    indices = block.annotations.get(key, ())
    return {regions[i].buffer: regions[i] for i in indices if isinstance(i, int) and 0 <= i < len(regions)}


def infer_access_regions(
    block: Block,
) -> tuple[tuple[BufferRegion, ...], tuple[BufferRegion, ...]]:
    """``(reads, writes)`` of ``block``.

    A buffer both read and written appears in both, except in a reduction block
    (one with ``T.init``): there the accumulator is only a write, as TVM prints
    it (``T.reads(A[vi, vk], B[vk, vj])`` for matmul), so ``cache_read(block, 0)``
    means A, as users of TVM expect.
    """
    collector = _AccessCollector(block)
    if block.init is not None:
        collector.stmt(block.init)
    collector.stmt(block.body)
    reads = collector.reads
    if block.init is not None:
        reads = {buf: sets for buf, sets in reads.items() if buf not in collector.writes}
    return (
        _keep_declared(collector.regions(reads), explicit_regions(block, EXPLICIT_READ_REGION)),
        _keep_declared(collector.regions(collector.writes), explicit_regions(block, EXPLICIT_WRITE_REGION)),
    )


def _keep_declared(
    inferred: tuple[BufferRegion, ...], declared: dict[Buffer, BufferRegion]
) -> tuple[BufferRegion, ...]:
    """The inferred regions, with a declared one (annotate_buffer_access) in place of its buffer's."""
    return tuple(declared.get(r.buffer, r) for r in inferred)


def _is_point(s: IntervalSet) -> bool:
    return s.min_value is s.max_value


def region_of(
    indices: Sequence[PrimExpr],
    dom_map: Mapping[Var, IntervalSet | Range],
    analyzer: Analyzer | None = None,
) -> tuple[Range, ...]:
    """The Ranges ``buffer[indices]`` covers while the vars in ``dom_map`` vary (others fixed)."""
    analyzer = analyzer or Analyzer()
    return tuple(set_to_range(s, analyzer) for s in relax_indices(indices, dom_map, analyzer))


class _AccessCollector:
    def __init__(self, block: Block):
        self.analyzer = Analyzer()
        for iv in block.iter_vars:
            # A range, never a substitution: regions keep naming the block's iterators.
            self.analyzer.update_range(iv.var, iv.dom)
        self.plain = Analyzer()  # no facts: simplifies a point index without the iterators' ranges
        self.relaxed: dict[Var, IntervalSet] = {}
        self.bindings: dict[Var, PrimExpr] = {}
        self.allocated: set[Buffer] = set(block.alloc_buffers)
        self.reads: dict[Buffer, list[IntervalSet]] = {}
        self.writes: dict[Buffer, list[IntervalSet]] = {}

    # ------------------------------------------------------------ recording

    def record(self, table: dict[Buffer, list[IntervalSet]], buffer: Buffer, indices) -> None:
        indices = [substitute(i, self.bindings) for i in indices]
        sets = relax_indices(indices, self.relaxed, self.analyzer)
        # A point access (no loop inside the block varies it) keeps its index as written, as TVM's
        # region detection does: simplified, but not under the iterators' ranges, which would turn
        # `co // 64 * 3 + rc` into `rc` for co < 64 and make the region disagree with the body.
        sets = [
            IntervalSet.point(self.plain.simplify(index)) if _is_point(s) and not self._relaxes(index) else s
            for index, s in zip(indices, sets)
        ]
        self._merge(table, buffer, sets)

    def record_whole(self, table: dict[Buffer, list[IntervalSet]], buffer: Buffer) -> None:
        """The whole buffer: what a pointer into it (``B.access_ptr("r")``) may reach."""
        self._merge(table, buffer, [IntervalSet(const(0, e.dtype), e - 1) for e in buffer.shape])

    def _merge(self, table: dict[Buffer, list[IntervalSet]], buffer: Buffer, sets: list[IntervalSet]) -> None:
        known = table.get(buffer)
        if known is None:
            table[buffer] = sets
        else:
            table[buffer] = [union([a, b], self.analyzer) for a, b in zip(known, sets)]

    def regions(self, table: dict[Buffer, list[IntervalSet]]) -> tuple[BufferRegion, ...]:
        return tuple(
            BufferRegion(
                buffer,
                tuple(set_to_range(s, self.analyzer, extent) for s, extent in zip(sets, buffer.shape)),
            )
            for buffer, sets in table.items()
            if buffer not in self.allocated
        )

    def _relaxes(self, index: PrimExpr) -> bool:
        return uses_var(index, self.relaxed.__contains__)

    # ------------------------------------------------------------ walking

    def expr(self, e: PrimExpr) -> None:
        _LoadFinder(self).visit(e)

    def stmt(self, s: Stmt) -> None:
        handler = _STMT_HANDLERS.get(type(s))
        if handler is None:
            raise TypeError(f"region inference does not know the statement {type(s).__name__}")
        handler(self, s)

    def _store(self, s: BufferStore) -> None:
        self.expr(s.value)
        for index in s.indices:
            self.expr(index)
        self.record(self.writes, s.buffer, s.indices)

    def _for(self, s: For) -> None:
        low = substitute(s.min, self.bindings)
        high = substitute(s.min + s.extent - 1, self.bindings)
        low_set, high_set = relax_indices([low, high], self.relaxed, self.analyzer)
        self.relaxed[s.loop_var] = IntervalSet(low_set.min_value, high_set.max_value)
        self.analyzer.bind(s.loop_var, Range(low, substitute(s.extent, self.bindings)))
        self.stmt(s.body)

    def _realize(self, s: BlockRealize) -> None:
        inner = s.block
        for iv, value in zip(inner.iter_vars, s.iter_values):
            self.expr(value)
            self.bindings[iv.var] = substitute(value, self.bindings)
        self.expr(s.predicate)
        self.allocated.update(inner.alloc_buffers)
        if inner.init is not None:
            self.stmt(inner.init)
        self.stmt(inner.body)

    def _seq(self, s: SeqStmt) -> None:
        for child in s.seq:
            self.stmt(child)

    def _if(self, s: IfThenElse) -> None:
        self.expr(s.condition)
        self.stmt(s.then_case)
        if s.else_case is not None:
            self.stmt(s.else_case)

    def _let(self, s: LetStmt) -> None:
        self.expr(s.value)
        self.bindings[s.var] = substitute(s.value, self.bindings)
        self.stmt(s.body)

    def _allocate(self, s: Allocate) -> None:
        self.allocated.add(s.buffer)
        self.stmt(s.body)

    def _evaluate(self, s: Evaluate) -> None:
        matrix_op = matrix_op_of(s.value)
        if matrix_op is None:
            self.expr(s.value)
            return
        # A matrix operation writes its destination tile (both corners) and reads the others.
        for position, arg in enumerate(s.value.args):
            if position in matrix_op.written_positions:
                for corner in arg.args:
                    self.record(self.writes, corner.buffer, corner.indices)
            else:
                self.expr(arg)


_STMT_HANDLERS = {
    BufferStore: _AccessCollector._store,
    For: _AccessCollector._for,
    BlockRealize: _AccessCollector._realize,
    SeqStmt: _AccessCollector._seq,
    IfThenElse: _AccessCollector._if,
    LetStmt: _AccessCollector._let,
    Allocate: _AccessCollector._allocate,
    Evaluate: _AccessCollector._evaluate,
}


class _LoadFinder(Visitor):
    """Records every BufferLoad in an expression as a read (inner loads first)."""

    def __init__(self, collector: _AccessCollector):
        self.collector = collector

    def visit_BufferLoad(self, load: BufferLoad) -> None:
        self.generic_visit(load)
        self.collector.record(self.collector.reads, load.buffer, load.indices)

    def visit_BufferPointer(self, pointer: BufferPointer) -> None:
        # TVM's access_ptr mask says how the callee uses the buffer ("r", "w", "rw"); a bare
        # `B.data` says nothing, as in TVM, and counts as no access.
        self.generic_visit(pointer)
        if "r" in pointer.access:
            self.collector.record_whole(self.collector.reads, pointer.buffer)
        if "w" in pointer.access:
            self.collector.record_whole(self.collector.writes, pointer.buffer)

    def visit_Let(self, let: Let) -> None:
        self.visit(let.value)
        self.collector.bindings[let.var] = substitute(let.value, self.collector.bindings)
        self.visit(let.body)
