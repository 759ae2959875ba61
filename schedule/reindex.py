"""reindex: stage a buffer through a copy laid out by the block's own iterators (TVM's reindex).

A block that reads ``A[vj, vi]`` (a transposed access) or ``Input[n, h * 2 + rh, ...]``
(a convolution window) gets a new buffer ``A_reindex[vi, vj]`` indexed by the block
iterators the access uses, in the block's order; a copy block fills it before the
block (a read) or writes it back after the block (a write), and the block's
accesses become plain ``A_reindex[vi, vj]``. This is the step before
``transform_layout`` or tensorization, which want accesses that are the
iterators themselves. The copy covers the iterators' whole domains, so the block
must be a leaf with one access pattern of the buffer, and a write-back needs the
block to run over its whole domain (no ``T.where``) and to write only through
spatial iterators: a partial write-back would copy elements the block never
wrote (the cache_write bug issue 16 describes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from tir import (
    Block,
    Buffer,
    BufferLoad,
    BufferStore,
    IndexMap,
    IntImm,
    IterKind,
    Mutator,
    PrimExpr,
    Range,
    SeqStmt,
    Var,
    const,
    op,
)
from tir.arith import Analyzer
from tir.buffer import BufferRegion
from tir.functor import collect_vars, substitute
from tir.structural import structural_equal

from .analysis import accesses_of, child_blocks, realizes_under
from .cache_stage import checked_scope, spatial_stage
from .errors import ScheduleError
from .index_maps import (
    BlockArgumentMethods,
    IndexMapNotApplicableError,
    as_index_map,
    bijection,
    buffer_position,
    check_iterators_start_at_zero,
    static_extents,
)
from .instruction import BlockRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class ReindexAccessError(ScheduleError):
    """The block accesses the buffer through more than one index pattern, or through none it can
    index by (a constant access), or reads what it writes without ``T.init``."""


class ReindexBlockError(ScheduleError):
    """The block is not a leaf, or (for a write) runs under a predicate or writes through a
    reduction iterator, so a full-domain copy would not match what it does."""


# ---------------------------------------------------------------- analysis


def _simplifier(pairs) -> Analyzer:
    """An analyzer that knows the ranges of ``(var, range)`` pairs, except ranges of one value: an
    iterator of extent 1 stays an iterator (``C[i, j]``, as TVM writes it) instead of becoming 0."""
    analyzer = Analyzer()
    for var, dom in pairs:
        if not (isinstance(dom.extent, IntImm) and dom.extent.value == 1):
            analyzer.bind(var, dom)
    return analyzer


def _single_pattern(block: Block, buffer: Buffer, what: str) -> tuple[PrimExpr, ...]:
    analyzer = _simplifier((iv.var, iv.dom) for iv in block.iter_vars)
    patterns: list[tuple[PrimExpr, ...]] = []
    for found, indices, _ in accesses_of(block):
        if found is not buffer:
            continue
        simplified = tuple(analyzer.simplify(i) for i in indices)
        if not any(structural_equal(simplified, p) for p in patterns):
            patterns.append(simplified)
    if len(patterns) != 1:
        shown = "; ".join(f"{buffer.name}[{', '.join(map(str, p))}]" for p in patterns)
        raise ReindexAccessError(
            f"{what}: it is accessed through "
            f"{len(patterns)} different index patterns ({shown}); reindex needs exactly one",
            block,
        )
    return patterns[0]


# ---------------------------------------------------------------- the staged copy


def _stage_through(
    state: ScheduleState, block: Block, kind: str, index: int, primitive_name: str, scope: str, index_map
) -> Block:
    """Point ``block``'s accesses of its ``kind`` buffer ``index`` at a new buffer of ``scope`` indexed by
    ``index_map`` of the block's iterators (None: the iterators the access uses), with a copy block
    before (a read) or after (a write) the block; return the copy block."""
    # Step 1. a leaf block with one access pattern of the buffer
    old = (block.reads if kind == "read" else block.writes)[index].buffer
    what = f"can't {primitive_name} buffer {old.name} of block {block.name!r}"
    if child_blocks(block):
        raise ReindexBlockError(f"{what}: the block holds other blocks", block)
    pattern = _single_pattern(block, old, what)
    iter_vars = {iv.var for iv in block.iter_vars}
    used_vars = set().union(*(collect_vars(i) for i in pattern))
    used = [iv for iv in block.iter_vars if iv.var in used_vars]
    if not used or not used_vars <= iter_vars:
        raise ReindexAccessError(
            f"{what}: its access {old.name}[{', '.join(map(str, pattern))}] must be an expression of the "
            "block's iterators and use at least one",
            block,
        )
    _check_access_kind(state, block, old, kind, used, what)
    _check_nest_alone(state, block, old, kind, what)
    bounds = Analyzer()
    for iv in used:
        bounds.bind(iv.var, iv.dom)
    for index, size in zip(pattern, old.shape):
        if not bounds.can_prove(op.logical_and(op.ge(index, 0), op.lt(index, size))):
            raise ReindexAccessError(
                f"{what}: over the iterators' whole domains its index {index} may leave [0, {size}), "
                "and the copy covers those domains (the block's T.where no longer guards it)",
                block,
            )

    # Step 2. the new layout: index_map of the used iterators, one-to-one onto a box
    if index_map is None:
        index_map = IndexMap(tuple(iv.var for iv in block.iter_vars), tuple(iv.var for iv in used))
    to_iters = dict(zip(index_map.initial_indices, (iv.var for iv in block.iter_vars)))
    outputs = tuple(substitute(e, to_iters) for e in index_map.final_indices)
    if not set().union(*(collect_vars(e) for e in outputs)) <= used_vars:
        raise IndexMapNotApplicableError(
            f"{what}: index map {index_map} uses block iterators the access {old.name}"
            f"[{', '.join(map(str, pattern))}] does not; the copy iterates only those it uses",
            block,
        )
    on_used = IndexMap(tuple(iv.var for iv in used), outputs)
    check_iterators_start_at_zero(used, block)
    extents = static_extents([iv.dom.extent for iv in used], f"block {block.name!r}", block)
    sums = bijection(on_used, extents, block)
    if sums is None:
        raise IndexMapNotApplicableError(
            f"{what}: index map {index_map} is not a one-to-one affine map of the iterators {extents} "
            "the access uses, so copy elements would collide",
            block,
        )
    name = f"{old.name}_reindex" if primitive_name == "reindex" else f"{old.name}_{scope}"
    shape = tuple(const(s.extent, e.dtype) for s, e in zip(sums, outputs))  # each axis in its index's dtype
    new = Buffer(state.unique_name(name), shape, old.dtype, scope)

    # Step 3. the block accesses the new buffer; the copy stage iterates the used iterators
    analyzer = _simplifier((iv.var, iv.dom) for iv in block.iter_vars)
    new_indices = tuple(analyzer.simplify(e) for e in outputs)
    point = BufferRegion(new, tuple(Range(i, const(1, i.dtype)) for i in new_indices))
    rewritten = replace(
        _Redirect(old, new, new_indices).visit(block),
        reads=tuple(point if r.buffer is old else r for r in block.reads),
        writes=tuple(point if r.buffer is old else r for r in block.writes),
    )
    state.replace({block: rewritten})
    scope_block = state.parent_block(state.realize_of(rewritten))
    state.replace({scope_block: replace(scope_block, alloc_buffers=(*scope_block.alloc_buffers, new))})

    def body(iters: list[Var]):
        stage_analyzer = _simplifier((var, iv.dom) for var, iv in zip(iters, used))
        to_stage = dict(zip((iv.var for iv in used), iters))
        old_idx = tuple(stage_analyzer.simplify(substitute(i, to_stage)) for i in pattern)
        new_idx = tuple(stage_analyzer.simplify(substitute(i, to_stage)) for i in new_indices)
        old_point = BufferRegion(old, tuple(Range(i, const(1, i.dtype)) for i in old_idx))
        new_point = BufferRegion(new, tuple(Range(i, const(1, i.dtype)) for i in new_idx))
        if kind == "read":
            return BufferStore(new, BufferLoad(old, old_idx), new_idx), (old_point,), (new_point,)
        return BufferStore(old, BufferLoad(new, new_idx), old_idx), (new_point,), (old_point,)

    stage = spatial_stage(new.name, [iv.dom.extent for iv in used], body)
    state.insert_beside(state.index.blocks[block.name], stage, after=kind == "write")
    return state.index.blocks[new.name]


def _check_nest_alone(state: ScheduleState, block: Block, old: Buffer, kind: str, what: str) -> None:
    """The copy goes before (a read) or after (a write-back) the whole loop nest of the scope that
    holds the block; another block in that nest writing the buffer (or, for a write-back, touching
    it at all) would run on the wrong side of the copy."""
    realize = state.realize_of(block)
    scope = state.parent_block(realize)
    top = realize
    for node in state.ancestors(realize):
        if node is scope:
            break
        if not isinstance(node, SeqStmt):
            top = node
    for other in (r.block for r in realizes_under(top)):
        if other is block:
            continue
        writes = any(w.buffer is old for w in other.writes)
        reads = any(r.buffer is old for r in other.reads)
        if writes or (kind == "write" and reads):
            raise ReindexBlockError(
                f"{what}: block {other.name!r} {'writes' if writes else 'reads'} {old.name} in the same loop "
                f"nest as block {block.name!r}, and the copy goes {'before' if kind == 'read' else 'after'} "
                "that whole nest, so it would see the buffer in the wrong state. Move the blocks apart "
                "(e.g. with compute_at or fission) first",
                block,
                other,
            )


def _check_access_kind(state: ScheduleState, block: Block, old: Buffer, kind: str, used: list, what: str):
    """A read stage needs a buffer the block only reads; a write-back needs the block to have written
    every element it copies back (no predicate, spatial indices, no read of old values)."""
    kinds = {is_store for buffer, _, is_store in accesses_of(block) if buffer is old}
    loads, stores = False in kinds, True in kinds
    if kind == "read":
        if stores:
            raise ReindexAccessError(
                f"{what} as a read: the block writes it too; stage ('write', n) instead", block
            )
        return
    realize = state.realize_of(block)
    if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        raise ReindexBlockError(
            f"{what}: the block runs under T.where({realize.predicate}), so the write-back would copy "
            "elements it never wrote",
            block,
        )
    if any(iv.kind is not IterKind.SPATIAL for iv in used):
        raise ReindexBlockError(f"{what}: the written index uses a reduction iterator", block)
    if loads and block.init is None:
        raise ReindexAccessError(
            f"{what}: the block reads the buffer's old values, which the new buffer would not hold "
            "(only a reduction with T.init may read what it writes)",
            block,
        )


# ---------------------------------------------------------------- primitives


@primitive()
def reindex(state: ScheduleState, block: Block, buffer) -> Block:
    kind, index = buffer_position(block, buffer)
    return _stage_through(state, block, kind, index, "reindex", "global", None)


@primitive()
def reindex_cache_read(
    state: ScheduleState, block: Block, read_buffer_index: int, storage_scope: str, index_map
) -> Block:
    kind, index = buffer_position(block, ("read", read_buffer_index), "read_buffer_index")
    scope = checked_scope(storage_scope, "reindex_cache_read")
    index_map = as_index_map(index_map, len(block.iter_vars), _iter_dtype(block), block)
    return _stage_through(state, block, kind, index, "reindex_cache_read", scope, index_map)


@primitive()
def reindex_cache_write(
    state: ScheduleState, block: Block, write_buffer_index: int, storage_scope: str, index_map
) -> Block:
    kind, index = buffer_position(block, ("write", write_buffer_index), "write_buffer_index")
    scope = checked_scope(storage_scope, "reindex_cache_write")
    index_map = as_index_map(index_map, len(block.iter_vars), _iter_dtype(block), block)
    return _stage_through(state, block, kind, index, "reindex_cache_write", scope, index_map)


def _iter_dtype(block: Block) -> str:
    return block.iter_vars[0].var.dtype if block.iter_vars else "int32"


class _Redirect(Mutator):
    """Points every load and store of ``old`` at ``new[indices]``."""

    def __init__(self, old: Buffer, new: Buffer, indices: tuple[PrimExpr, ...]):
        self.old, self.new, self.indices = old, new, indices

    def visit_BufferLoad(self, load: BufferLoad):
        load = self.generic_visit(load)
        return BufferLoad(self.new, self.indices) if load.buffer is self.old else load

    def visit_BufferStore(self, store: BufferStore):
        store = self.generic_visit(store)
        return replace(store, buffer=self.new, indices=self.indices) if store.buffer is self.old else store


# ---------------------------------------------------------------- public methods


class ReindexMethods(BlockArgumentMethods):
    def reindex(self, block: BlockRV | str, buffer: tuple[str, int] | str | Buffer) -> BlockRV:
        """Stage ``buffer`` through a copy indexed by the block's iterators; return the copy block.

        ``reindex`` in TVM. ``buffer`` is ``("read", n)``, ``("write", n)`` or a buffer
        name; ``block`` may be a name. The new buffer ``<name>_reindex`` has one axis
        per block iterator the access uses (in the block's order); a copy block fills
        it before the block (a read) or copies it back after the block (a write).

        Requirements: the block holds no other block and accesses the buffer through
        one index pattern of its iterators; a read is not also written; a write runs
        without ``T.where``, through spatial iterators, and reads the buffer only as a
        reduction with ``T.init``.

        Example
        -------
        >>> sch = Schedule(tir.parse(_TRANSPOSE))
        >>> copy = sch.reindex("B", ("read", 0))
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
            # with T.block("root"):
            A_reindex = T.alloc_buffer((8, 4))
            for ax0, ax1 in T.grid(8, 4):
                with T.block("A_reindex"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(A[v1, v0])
                    T.writes(A_reindex[v0, v1])
                    A_reindex[v0, v1] = A[v1, v0]
            for i, j in T.grid(8, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A_reindex[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A_reindex[vi, vj] * T.float32(2.0)
        """
        block = self._block_argument(block)
        node = self.get(block)
        position = self._prepared("reindex", lambda: buffer_position(node, buffer))
        return self._run("reindex", block=block, buffer=position)

    def _index_map_text(self, kind: str, node: Block, index_map) -> str:
        return self._prepared(
            kind, lambda: str(as_index_map(index_map, len(node.iter_vars), _iter_dtype(node), node))
        )

    def reindex_cache_read(
        self,
        block: BlockRV | str,
        read_buffer_index: int,
        storage_scope: str,
        index_map: Callable | IndexMap | str,
    ) -> BlockRV:
        """Cache the buffer ``block`` reads at ``read_buffer_index`` in ``storage_scope``, laid out by
        ``index_map`` of the block's iterators; return the cache block.

        ``reindex_cache_read`` in TVM: ``reindex`` into a cache whose layout the caller
        chooses (a packed layout for a micro-kernel, say). The copy block iterates the
        block iterators the access uses, in the block's order, before the block; move it
        with ``compute_at``. Only this block reads the cache (use ``cache_read`` for
        several consumers).

        Requirements: those of ``reindex`` for a read; ``index_map`` takes every block
        iterator, uses only those the access uses, and maps them one-to-one onto a box.

        Example
        -------
        >>> sch = Schedule(tir.parse(_TRANSPOSE))
        >>> copy = sch.reindex_cache_read("B", 0, "shared", lambda i, j: (i // 4, j, i % 4))
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
            # with T.block("root"):
            A_shared = T.alloc_buffer((2, 4, 4), scope="shared")
            for ax0, ax1 in T.grid(8, 4):
                with T.block("A_shared"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(A[v1, v0])
                    T.writes(A_shared[v0 // 4, v1, v0 % 4])
                    A_shared[v0 // 4, v1, v0 % 4] = A[v1, v0]
            for i, j in T.grid(8, 4):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A_shared[vi // 4, vj, vi % 4])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A_shared[vi // 4, vj, vi % 4] * T.float32(2.0)
        """
        block = self._block_argument(block)
        text = self._index_map_text("reindex_cache_read", self.get(block), index_map)
        return self._run(
            "reindex_cache_read",
            block=block,
            read_buffer_index=read_buffer_index,
            storage_scope=storage_scope,
            index_map=text,
        )

    def reindex_cache_write(
        self,
        block: BlockRV | str,
        write_buffer_index: int,
        storage_scope: str,
        index_map: Callable | IndexMap | str,
    ) -> BlockRV:
        """Write the buffer ``block`` writes at ``write_buffer_index`` through a cache in
        ``storage_scope`` laid out by ``index_map`` of the block's iterators, copied back after the
        block; return the copy-back block.

        ``reindex_cache_write`` in TVM: ``reindex`` of a write into a cache whose layout
        the caller chooses.

        Requirements: those of ``reindex`` for a write (no ``T.where``, spatial written
        indices, old values read only by a reduction with ``T.init``); ``index_map`` takes
        every block iterator, uses only those the access uses, and is one-to-one onto a box.

        Example
        -------
        >>> sch = Schedule(tir.parse(_TRANSPOSE))
        >>> copy = sch.reindex_cache_write("B", 0, "local", lambda i, j: (j, i))
        >>> print(sch.get(copy).name, [int(n) for n in sch.get(sch.get_block("B")).writes[0].buffer.shape])
        B_local [4, 8]
        """
        block = self._block_argument(block)
        text = self._index_map_text("reindex_cache_write", self.get(block), index_map)
        return self._run(
            "reindex_cache_write",
            block=block,
            write_buffer_index=write_buffer_index,
            storage_scope=storage_scope,
            index_map=text,
        )


# The program the example above schedules (doctest globals: tir, Schedule).
_TRANSPOSE = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi] * T.float32(2)
"""
