"""Moving a block under another block's loop: compute_at and reverse_compute_at (TVM's compute_at.cc).

``compute_at`` moves a producer under a loop of its consumers and regenerates
loops ``ax0, ax1, ...`` that make exactly the region the consumers need during
one iteration of that loop; ``reverse_compute_at`` moves a consumer under a loop
of its producers, running the instances that read what they wrote during one
iteration (a read no iteration serves whole is refused). The needed
region is the consumers' read regions with their bindings substituted, relaxed
over the loops inside the target loop, and, for a "shared" buffer, also over
the thread loops (threadIdx, vthread) outside it: the whole thread block shares
the buffer, so one fetch serves every thread. A "local" or "global" buffer
relaxes nothing more (TVM's LoopDomainOfSRefTreePath). The producer's iterators
are then solved from its write region (an index ``a * v + b``, ``v // c`` or
``v % c`` of one iterator; TVM's inverse of multi-iterator affine maps is not
done, RegionPatternError says so), kept inside the buffer with a ``T.where``
when that cannot be proven. Where TVM would emit a loop of symbolic extent, the
loop gets the extent's constant upper bound and a ``T.where``. The solving is in
compute_at_domain.py; the region helpers (``loop_domains``, ``relaxed_sets``) are in
analysis.py, shared with the caches.
"""

from __future__ import annotations

from dataclasses import replace

from tir import (
    Add,
    Block,
    BlockRealize,
    For,
    ForKind,
    IntImm,
    PrimExpr,
    Range,
    SeqStmt,
    Stmt,
    Sub,
    Var,
    const,
    op,
)
from tir.arith import POS_INF, Analyzer
from tir.arith.int_set import IntervalSet, eval_set
from tir.buffer import Buffer
from tir.expr import IterKind
from tir.stmt import seq

from .analysis import child_blocks, loop_domains, relaxed_sets, writers_of
from .compute_at_domain import ReadOutsideIterationError as ReadOutsideIterationError  # this family's error
from .compute_at_domain import RegionPatternError as RegionPatternError  # this family's error
from .compute_at_domain import iteration_domains
from .errors import ArgumentError, ScheduleError
from .instruction import BlockRV, LoopRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class NotInSameScopeError(ScheduleError):
    """The loop is not in the block's scope (it is inside another block, or inside the block itself)."""

    tvm_phrase = "Expected the block and loop to be under the same block scope"


class LoopAncestorError(ScheduleError):
    """The loop already encloses the block; there is nothing to move it under."""

    tvm_phrase = "and loop not to be the ancestor of block"


class NotCompleteOrReductionBlockError(ScheduleError):
    """The block is neither complete (spatial iterators only) nor a reduction block with an init."""


class OutputBlockError(ScheduleError):
    """compute_at of a block that writes a buffer the scope does not allocate (a function output)."""

    tvm_phrase = "Cannot operate on an output block"


class NotSingleWriterError(ScheduleError):
    """A buffer the block touches has several writers in the scope, so moving the block is unsafe.

    TVM counts a block with a co-writer as not "complete", so its message names that.
    """

    tvm_phrase = "neither a local complete block nor a local reduction block"


class NoConsumerError(ScheduleError):
    """compute_at of a block that no later block of its scope reads from."""


class NoProducerError(ScheduleError):
    """reverse_compute_at of a block that reads nothing written earlier in its scope."""


class NotAncestorOfConsumerError(ScheduleError):
    """compute_at to a loop that does not enclose every consumer of the block."""

    tvm_phrase = (
        "The primitive requires all the consumer(s) of the given block to be present under the target loop"
    )


class NotAncestorOfProducerError(ScheduleError):
    """reverse_compute_at to a loop that does not enclose every producer of the block."""

    tvm_phrase = (
        "The primitive requires all the producer(s) of the given block to be present under the target loop"
    )


class InsertionPointError(ScheduleError):
    """No position in the loop body (or not ``index``) lies after the producers and before the consumers."""


class OnlyLeafError(ScheduleError):
    """The block is the only statement of its scope, so removing it would leave the scope empty."""

    tvm_phrase = "Cannot remove the only leaf in the scope"


# ---------------------------------------------------------------- checks


def _check_same_scope(state: ScheduleState, block: Block, loop: For, scope: Block, name: str) -> None:
    loop_scope = state.parent_block(loop)
    if loop_scope is not scope:
        inside = loop_scope is block or any(a is block for a in state.ancestors(loop))
        where = f"inside block {block.name} itself" if inside else f"in the scope of block {loop_scope.name}"
        raise NotInSameScopeError(
            f"loop {loop.loop_var.name} is {where}, but block {block.name} sits in the scope of block "
            f"{scope.name}; {name} needs a loop of the same scope (a loop around the block's "
            f"{'consumers' if name == 'compute_at' else 'producers'})",
            loop,
            block,
        )
    if any(a is loop for a in state.ancestors(state.realize_of(block))):
        raise LoopAncestorError(
            f"loop {loop.loop_var.name} already encloses block {block.name}; {name} moves a block under a "
            f"loop of its {'consumers' if name == 'compute_at' else 'producers'}, which must not enclose it",
            loop,
            block,
        )


def _check_complete_or_reduction(block: Block, name: str) -> None:
    kinds = {iv.kind for iv in block.iter_vars}
    if IterKind.OPAQUE in kinds:
        opaque = [iv.var.name for iv in block.iter_vars if iv.kind is IterKind.OPAQUE]
        raise NotCompleteOrReductionBlockError(
            f"block {block.name} has opaque iterators ({', '.join(opaque)}), so {name} cannot tell which "
            "instances produce which elements; declare them T.axis.spatial or T.axis.reduce",
            block,
        )
    written = {w.buffer for w in block.writes}
    if IterKind.REDUCE in kinds and block.init is None:
        raise NotCompleteOrReductionBlockError(
            f"block {block.name} has reduction iterators but no T.init(), so it is neither a complete "
            f"block nor a reduction block; {name} cannot move it",
            block,
        )
    if IterKind.REDUCE not in kinds and any(r.buffer in written for r in block.reads):
        raise NotCompleteOrReductionBlockError(
            f"block {block.name} reads a buffer it writes without being a reduction (no reduction "
            f"iterator), so {name} cannot move it",
            block,
        )


def _check_single_writers(block: Block, scope_blocks: list[Block], name: str) -> None:
    for buffer in {r.buffer for r in (*block.reads, *block.writes)}:
        writers = writers_of(scope_blocks, buffer)
        if len(writers) > 1:
            raise NotSingleWriterError(
                f"buffer {buffer.name}, which block {block.name} accesses, is written by "
                f"{', '.join(b.name for b in writers)}; {name} needs one writer per buffer in the scope. "
                "Apply it before decompose_reduction or before splitting the computation.",
                *writers,
            )


def _check_not_output(block: Block, scope: Block) -> None:
    outputs = [w.buffer.name for w in block.writes if w.buffer not in scope.alloc_buffers]
    if outputs:
        raise OutputBlockError(
            f"block {block.name} writes {', '.join(outputs)}, which the scope does not allocate (a function "
            "output), so nothing consumes it inside; compute_at moves producers of intermediate buffers. "
            f"Use reverse_compute_at on the consumer, or cache_write on {block.name} first",
            block,
        )


def _producers_consumers(block: Block, scope_blocks: list[Block]) -> tuple[list[Block], list[Block]]:
    position = scope_blocks.index(block)
    reads = {r.buffer for r in block.reads}
    writes = {w.buffer for w in block.writes}
    producers = [b for b in scope_blocks[:position] if any(w.buffer in reads for w in b.writes)]
    consumers = [b for b in scope_blocks[position + 1 :] if any(r.buffer in writes for r in b.reads)]
    return producers, consumers


def _subtrees(loop: For) -> list[Stmt]:
    return list(loop.body.seq) if isinstance(loop.body, SeqStmt) else [loop.body]


def _insert_position(state, block, loop, producers, consumers, index, reverse: bool) -> int:
    """TVM's FindInsertionPoint: after the last producer and no later than the first consumer."""
    name = "reverse_compute_at" if reverse else "compute_at"
    subtrees = _subtrees(loop)
    last_producer, first_consumer = -1, len(subtrees)
    seen_producers, seen_consumers = set(), set()
    for i, subtree in enumerate(subtrees):
        for b in child_blocks(subtree) if not isinstance(subtree, BlockRealize) else [subtree.block]:
            if b in producers:
                last_producer = i
                seen_producers.add(b.name)
            if b in consumers:
                first_consumer = min(first_consumer, i)
                seen_consumers.add(b.name)
    loop_name = loop.loop_var.name
    if not reverse and len(seen_consumers) < len(consumers):
        missing = [b for b in consumers if b.name not in seen_consumers]
        raise NotAncestorOfConsumerError(
            f"loop {loop_name} is not an ancestor of consumer(s) {', '.join(b.name for b in missing)} of "
            f"block {block.name}; compute_at needs a loop that encloses every consumer. Pick a loop "
            "around all of them (see get_loops of the consumer)",
            loop,
            *missing,
        )
    if reverse and len(seen_producers) < len(producers):
        missing = [b for b in producers if b.name not in seen_producers]
        raise NotAncestorOfProducerError(
            f"loop {loop_name} is not an ancestor of producer(s) {', '.join(b.name for b in missing)} of "
            f"block {block.name}; reverse_compute_at needs a loop that encloses every producer. Pick a "
            "loop around all of them (see get_loops of the producer)",
            loop,
            *missing,
        )
    if last_producer >= first_consumer:
        raise InsertionPointError(
            f"under loop {loop_name}, a producer of block {block.name} comes after one of its consumers, "
            f"so no position satisfies both; {name} cannot keep the data flow",
            loop,
        )
    if not isinstance(index, int) or isinstance(index, bool):
        raise ArgumentError(f"{name}: index must be an int (-1, -2 or a position), got {index!r}")
    if index == -1:
        return first_consumer
    if index == -2:
        return last_producer + 1
    if last_producer + 1 <= index <= first_consumer:
        return index
    raise InsertionPointError(
        f"{name}: index {index} is not a valid position under loop {loop_name}; valid: -1 (last possible), "
        f"-2 (first possible) or {last_producer + 1}..{first_consumer} (after the producers, before the "
        "consumers)",
        loop,
    )


def _removal_point(state: ScheduleState, block: Block) -> Stmt:
    """The outermost statement holding only ``block``; it sits in a sequence and can be dropped."""
    node = state.realize_of(block)
    parent = state.parent(node)
    while isinstance(parent, For):
        node, parent = parent, state.parent(parent)
    if not isinstance(parent, SeqStmt):
        scope = state.parent_block(node)
        raise OnlyLeafError(
            f"block {block.name} is the only statement of its scope (block {scope.name}); moving it would "
            "leave the scope empty",
            block,
        )
    return node


# ---------------------------------------------------------------- the rewrite


def _within(analyzer: Analyzer, ranges: dict[Var, Range], low: PrimExpr, high: PrimExpr) -> bool:
    """Whether ``low <= high`` for every value of the loops: by the analyzer's constant bounds, or,
    for symbolic ranges (``k_0`` in ``[0, n)``), by the value's interval over those ranges."""
    if analyzer.can_prove(low <= high):
        return True
    low_set, high_set = eval_set(low, ranges, analyzer), eval_set(high, ranges, analyzer)
    if not (isinstance(low_set.max_value, PrimExpr) and isinstance(high_set.min_value, PrimExpr)):
        return False
    return analyzer.can_prove(analyzer.simplify(low_set.max_value - high_set.min_value) <= 0)


def _without_constant(value: PrimExpr, analyzer: Analyzer) -> tuple[PrimExpr, int]:
    """``value`` as ``rest + k`` with ``k`` its constant term, so that a bound ``0 <= x * 8 - 1 + ax``
    reads ``1 <= x * 8 + ax`` (TVM's form of the same predicate)."""
    terms: list[tuple[PrimExpr, int]] = []

    def flatten(e: PrimExpr, sign: int) -> None:
        if isinstance(e, Add):
            flatten(e.a, sign)
            flatten(e.b, sign)
        elif isinstance(e, Sub):
            flatten(e.a, sign)
            flatten(e.b, -sign)
        else:
            terms.append((e, sign))

    flatten(analyzer.simplify(value), 1)
    k = sum(sign * t.value for t, sign in terms if isinstance(t, IntImm))
    rest = [(t, sign) for t, sign in terms if not isinstance(t, IntImm)]
    if not k or not rest or rest[0][1] < 0:
        return value, 0
    out = rest[0][0]
    for t, sign in rest[1:]:
        out = op.add(out, t) if sign > 0 else op.sub(out, t)
    return out, k


def _new_nest(
    block, domains, preserve_unit_loops: bool, analyzer: Analyzer, ranges: dict[Var, Range]
) -> Stmt:
    ranges = dict(ranges)
    loop_vars, extents, values, predicate = [], [], [], const(True)
    for iv, (low, high, bounds) in zip(block.iter_vars, domains):
        extent = analyzer.simplify(high - low + 1)
        if isinstance(extent, IntImm) and extent.value == 1 and not preserve_unit_loops:
            value = analyzer.simplify(low)
        else:
            ax = Var(f"ax{len(loop_vars)}", iv.var.dtype)
            loop_extent = extent
            if not isinstance(extent, IntImm):
                upper = analyzer.const_int_bound(extent).max_value
                if upper != POS_INF:
                    loop_extent = IntImm(upper, extent.dtype)
                    predicate = op.logical_and(predicate, ax < extent)
            analyzer.bind(ax, Range(const(0, loop_extent.dtype), loop_extent))
            ranges[ax] = Range(const(0, loop_extent.dtype), loop_extent)
            loop_vars.append(ax)
            extents.append(loop_extent)
            # TVM leaves ``min + ax`` as is (min is simplified already), which keeps unit loops visible.
            value = op.add(low, ax)
        values.append(value)
        for b in bounds:
            rest, k = _without_constant(value, analyzer)
            if not _within(analyzer, ranges, b.min_value, value):
                predicate = op.logical_and(predicate, analyzer.simplify(b.min_value - k) <= rest)
            if not _within(analyzer, ranges, value, b.max_value):
                predicate = op.logical_and(predicate, rest < analyzer.simplify(b.max_value + 1 - k))
    nest: Stmt = BlockRealize(tuple(values), analyzer.simplify(predicate), block)
    for ax, extent in reversed(list(zip(loop_vars, extents))):
        nest = For(ax, const(0, extent.dtype), extent, ForKind.SERIAL, nest)
    return nest


def _bind_loop_ranges(state: ScheduleState, loop: For, analyzer: Analyzer) -> dict[Var, Range]:
    """Tell ``analyzer`` the ranges of ``loop`` and the loops around it in the scope; return them."""
    ranges = {}
    for node in [loop, *state.ancestors(loop)]:
        if isinstance(node, Block):
            break
        if isinstance(node, For):
            analyzer.bind(node.loop_var, Range(node.min, node.extent))
            ranges[node.loop_var] = Range(node.min, node.extent)
    return ranges


def _move(state: ScheduleState, block, loop, preserve_unit_loops, index, reverse: bool) -> None:
    name = "reverse_compute_at" if reverse else "compute_at"
    # Step 1. Check that the move is legal.
    realize = state.realize_of(block)
    scope = state.parent_block(realize)
    _check_same_scope(state, block, loop, scope, name)
    _check_complete_or_reduction(block, name)
    if not reverse:
        _check_not_output(block, scope)
    scope_blocks = child_blocks(scope)
    _check_single_writers(block, scope_blocks, name)
    producers, consumers = _producers_consumers(block, scope_blocks)
    if not reverse and not consumers:
        raise NoConsumerError(
            f"block {block.name} has no consumer in its scope (no later block reads "
            f"{', '.join(w.buffer.name for w in block.writes)}); compute_at has nothing to follow",
            block,
        )
    if reverse and not producers:
        raise NoProducerError(
            f"block {block.name} has no producer in its scope (no earlier block writes "
            f"{', '.join(r.buffer.name for r in block.reads)}); reverse_compute_at has nothing to follow",
            block,
        )
    position = _insert_position(state, block, loop, producers, consumers, index, reverse)
    removed = _removal_point(state, block)

    # Step 2. The region the block must cover in one iteration of the loop.
    analyzer = Analyzer()
    ranges = _bind_loop_ranges(state, loop, analyzer)
    required: dict[Buffer, list[list[IntervalSet]]] = {}
    provided = block.reads if reverse else block.writes
    wanted = {r.buffer for r in provided}
    for other in producers if reverse else consumers:
        other_realize = state.realize_of(other)
        for region in other.writes if reverse else other.reads:
            if region.buffer not in wanted:
                continue
            relax_scope = "global" if reverse else region.buffer.scope
            dom = loop_domains(state, other_realize, loop, relax_scope)
            required.setdefault(region.buffer, []).append(relaxed_sets(other_realize, region, dom, analyzer))
    domains = iteration_domains(block, provided, required, analyzer, reverse)

    # Step 3. Regenerate the block's loops under the target loop and drop the old ones.
    nest = _new_nest(block, domains, preserve_unit_loops, analyzer, ranges)
    subtrees = _subtrees(loop)
    subtrees.insert(position, nest)
    state.replace({removed: None, loop: replace(loop, body=seq(*subtrees))})


# ---------------------------------------------------------------- primitives


@primitive()
def compute_at(
    state: ScheduleState, block: Block, loop: For, preserve_unit_loops: bool = False, index: int = -1
) -> None:
    _move(state, block, loop, preserve_unit_loops, index, reverse=False)


@primitive()
def reverse_compute_at(
    state: ScheduleState, block: Block, loop: For, preserve_unit_loops: bool = False, index: int = -1
) -> None:
    _move(state, block, loop, preserve_unit_loops, index, reverse=True)


# ---------------------------------------------------------------- public methods


class ComputeAtMethods:
    def compute_at(
        self, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool = False, index: int = -1
    ) -> None:
        """Move a producer block under a loop of its consumers, computing only what they need there.

        compute_at in TVM and Halide. The block's loops are replaced by new loops
        ``ax0, ax1, ...`` at the start of ``loop``'s body (before the consumers), which
        cover the region of each written buffer that the consumers read during one
        iteration of ``loop``. For a "shared" buffer that region also spans the
        threadIdx (and vthread) loops outside ``loop``: the thread block fetches once for
        all its threads (cooperative fetching: split the new loop and bind a part to
        threadIdx). Iterators are bound to ``region_min + ax``, with a ``T.where`` when
        the region may leave the buffer.

        Requirements
        ------------
        - ``loop`` is in the block's scope, encloses every consumer, and not the block.
        - The block is complete (spatial iterators only) or a reduction with an init, is
          the only writer of what it writes, and writes only buffers of its scope.
        - Unit loops are dropped unless ``preserve_unit_loops``.

        Parameters
        ----------
        block : the producer to move.
        loop : a loop around its consumers.
        preserve_unit_loops : keep loops of extent 1.
        index : position in ``loop``'s body: -1 the last possible (before the first
            consumer), -2 the first possible (after the last producer), or a number.

        Example
        -------
        >>> func = tir.parse('''
        ... @T.prim_func
        ... def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        ...     B = T.alloc_buffer((8, 8))
        ...     for i, j in T.grid(8, 8):
        ...         with T.block("B"):
        ...             vi, vj = T.axis.remap("SS", [i, j])
        ...             B[vi, vj] = A[vi, vj] * T.float32(2)
        ...     for i, j in T.grid(8, 8):
        ...         with T.block("C"):
        ...             vi, vj = T.axis.remap("SS", [i, j])
        ...             C[vi, vj] = B[vi, vj] + T.float32(1)
        ... ''')
        >>> sch = Schedule(func)
        >>> i, j = sch.get_loops(sch.get_block("C"))
        >>> sch.compute_at(sch.get_block("B"), i)
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((8, 8))
            for i in range(8):
                for ax0 in range(8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, ax0])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
                for j in range(8):
                    with T.block("C"):
                        vi_1, vj_1 = T.axis.remap("SS", [i, j])
                        T.reads(B[vi_1, vj_1])
                        T.writes(C[vi_1, vj_1])
                        C[vi_1, vj_1] = B[vi_1, vj_1] + T.float32(1.0)
        """
        return self._run(
            "compute_at", block=block, loop=loop, preserve_unit_loops=preserve_unit_loops, index=index
        )

    def reverse_compute_at(
        self, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool = False, index: int = -1
    ) -> None:
        """Move a consumer block under a loop of its producers, consuming what they just made.

        reverse_compute_at in TVM (Halide's ``compute_at`` seen from the consumer). The
        block's loops are replaced by loops ``ax0, ax1, ...`` at the end of ``loop``'s body
        (after the producers) running the instances whose reads the producers wrote during
        that iteration of ``loop`` (TVM's cut); typical after ``cache_write``, to write each
        tile back. A transposing or strided consumer is cut the same way.

        Requirements
        ------------
        - ``loop`` is in the block's scope, encloses every producer, and not the block.
        - The block is complete or a reduction with an init, and the only writer of
          what it writes.
        - In each dimension, its read is one element per instance (``a * v + b`` or
          ``v // c`` of an iterator), or lies inside what every iteration of ``loop``
          produces there: a window ``C[i, j:j + 2]`` is refused under a loop over tiles
          of ``j`` (ReadOutsideIterationError), since an instance at a tile's edge would
          read the next tile.

        Parameters
        ----------
        block : the consumer to move.
        loop : a loop around its producers.
        preserve_unit_loops : keep loops of extent 1.
        index : position in ``loop``'s body: -1 the last possible, -2 the first possible
            (after the last producer), or a number.

        Example
        -------
        >>> func = tir.parse('''
        ... @T.prim_func
        ... def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
        ...     B = T.alloc_buffer((8, 8))
        ...     for i, j in T.grid(8, 8):
        ...         with T.block("B"):
        ...             vi, vj = T.axis.remap("SS", [i, j])
        ...             B[vi, vj] = A[vi, vj] * T.float32(2)
        ...     for i, j in T.grid(8, 8):
        ...         with T.block("C"):
        ...             vi, vj = T.axis.remap("SS", [i, j])
        ...             C[vi, vj] = B[vi, vj] + T.float32(1)
        ... ''')
        >>> sch = Schedule(func)
        >>> i, j = sch.get_loops(sch.get_block("B"))
        >>> sch.reverse_compute_at(sch.get_block("C"), i)
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
            # with T.block("root"):
            B = T.alloc_buffer((8, 8))
            for i in range(8):
                for j in range(8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
                for ax0 in range(8):
                    with T.block("C"):
                        vi_1, vj_1 = T.axis.remap("SS", [i, ax0])
                        T.reads(B[vi_1, vj_1])
                        T.writes(C[vi_1, vj_1])
                        C[vi_1, vj_1] = B[vi_1, vj_1] + T.float32(1.0)
        """
        return self._run(
            "reverse_compute_at", block=block, loop=loop, preserve_unit_loops=preserve_unit_loops, index=index
        )
