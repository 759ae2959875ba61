"""Cache primitives: cache_read, cache_write and set_scope (TVM's cache_read_write.cc).

A cache stage is a copy block between a buffer and a new buffer in another memory
scope ("shared" for a thread block's common data, "local" for one thread's
registers). ``cache_read`` makes readers read the copy, ``cache_write`` makes the
writer write the copy and adds a write-back block after it; ``set_scope`` moves an
allocated buffer to another scope without a copy. The new copy block covers the
whole buffer, under new loops ``ax0, ax1, ...``; ``compute_at`` (compute_at.py)
then moves it next to its users and shrinks it to the region they need.
Placement follows TVM: the copy of a function input goes first in the scope, the
copy of a buffer written inside the scope goes right after its writer, before its
first reader, and a write-back goes after the writer, before its first reader
(at the end of the scope when nothing reads it).
"""

from __future__ import annotations

from dataclasses import replace

from tir import (
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    For,
    ForKind,
    IterKind,
    IterVar,
    Range,
    SeqStmt,
    Stmt,
    Var,
    const,
)
from tir.arith import Analyzer
from tir.buffer import SCOPE_ALIASES, SCOPES, BufferRegion, normalize_scope
from tir.functor import Mutator, post_order_visit, substitute_buffers
from tir.stmt import BufferStore, seq

from .analysis import child_blocks, loop_domains, relaxed_region, writers_of
from .errors import ArgumentError, ScheduleError
from .instruction import BlockRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class StorageScopeError(ScheduleError):
    """The storage scope is not one we know ("global", "shared", "local" or a Metal alias)."""


class BufferIndexError(ScheduleError):
    """``read_buffer_index`` / ``write_buffer_index`` / ``buffer_index`` is outside the block's list."""


class NotSingleWriteBlockError(ScheduleError):
    """The buffer to cache is written by more than one block of the scope, so no copy point is right."""


class ConsumerBlockError(ScheduleError):
    """A block in ``consumer_blocks`` is not in the cached block's scope or does not read the buffer."""


class NonAllocatedBufferError(ScheduleError):
    """set_scope on a buffer the function does not allocate (a parameter has no scope to change)."""


# ---------------------------------------------------------------- shared checks


def _storage_scope(scope: str, primitive_name: str) -> str:
    try:
        return normalize_scope(scope)
    except (ValueError, TypeError):
        aliases = ", ".join(f"{alias!r} for {SCOPE_ALIASES[alias]!r}" for alias in SCOPE_ALIASES)
        raise StorageScopeError(
            f"{primitive_name}: unknown storage scope {scope!r}; use one of "
            f"{', '.join(repr(s) for s in SCOPES)} (also accepted: {aliases})"
        ) from None


def _region_list(regions: tuple[BufferRegion, ...]) -> str:
    return ", ".join(f"[{i}] {r!r}" for i, r in enumerate(regions)) or "nothing"


def _nth_buffer(block: Block, index, kind: str, argument: str) -> Buffer:
    """The buffer of ``block.reads[index]`` (kind "read") or ``block.writes[index]``."""
    regions = block.reads if kind == "read" else block.writes
    verb = "reads" if kind == "read" else "writes"
    if not isinstance(index, int) or isinstance(index, bool):
        raise ArgumentError(
            f"{argument} must be an int indexing what block {block.name} {verb}, got {index!r}"
        )
    if not 0 <= index < len(regions):
        raise BufferIndexError(
            f"{argument} {index} is out of range: block {block.name} {verb} {len(regions)} buffer(s): "
            f"{_region_list(regions)}. Pick an index from that list.",
            block,
        )
    return regions[index].buffer


def _single_writer(scope_blocks: list[Block], buffer: Buffer) -> Block | None:
    writers = writers_of(scope_blocks, buffer)
    if len(writers) > 1:
        raise NotSingleWriteBlockError(
            f"buffer {buffer.name} is written by {len(writers)} blocks "
            f"({', '.join(b.name for b in writers)}); a cache needs exactly one writer in the scope. "
            "Cache before splitting the computation into several blocks (e.g. before decompose_reduction).",
            *writers,
        )
    return writers[0] if writers else None


def _consumer_set(state: ScheduleState, consumer_blocks, scope: Block, buffer: Buffer) -> set[str] | None:
    """Names of the blocks that should use the cache, their nested blocks included; None means all."""
    if consumer_blocks is None:
        return None
    if not isinstance(consumer_blocks, (list, tuple)):
        consumer_blocks = [consumer_blocks]
    names: set[str] = set()
    for consumer in consumer_blocks:
        if state.parent_block(state.realize_of(consumer)) is not scope:
            raise ConsumerBlockError(
                f"consumer block {consumer.name} is not in the same scope as the cached block "
                f"(scope {scope.name}); pass blocks that sit next to it",
                consumer,
            )
        if not any(r.buffer is buffer for r in consumer.reads):
            raise ConsumerBlockError(
                f"consumer block {consumer.name} does not read {buffer.name} (it reads "
                f"{_region_list(consumer.reads)}); leave it out of consumer_blocks",
                consumer,
            )
        names.add(consumer.name)
        names.update(b.name for b in _nested_blocks(consumer))
    return names


def _nested_blocks(block: Block) -> list[Block]:
    out: list[Block] = []
    post_order_visit(block.body, lambda n: out.append(n) if isinstance(n, Block) else None)
    return out


# ---------------------------------------------------------------- names and placement


def _body_size(stmt: Stmt) -> int:
    return len(stmt.seq) if isinstance(stmt, SeqStmt) else 1


def _location_before_first(state: ScheduleState, scope: Block, anchor: Block, related: list[Block]):
    """``(loc, pos)``: insert into ``loc``'s body (a For or the scope Block) at ``pos``.

    The point is in the lowest statement holding both ``anchor`` and the first of
    ``related`` that follows it, right before that related block's subtree (TVM's
    CacheLocDetector). With nothing related, the end of the scope.
    """
    order = child_blocks(scope)
    first = next((b for b in order[order.index(anchor) + 1 :] if b in related), None)
    if first is None:
        return scope, _body_size(scope.body)
    anchor_ids = {id(s) for s in state.ancestors(state.realize_of(anchor))}
    first_path = [state.realize_of(first), *state.ancestors(state.realize_of(first))]
    for child, node in zip(first_path, first_path[1:]):
        owner = state.parent(node)
        if isinstance(node, SeqStmt) and id(node) in anchor_ids and isinstance(owner, (For, Block)):
            return owner, next(i for i, s in enumerate(node.seq) if s is child)
    return scope, _body_size(scope.body)


def _insert(body: Stmt, pos: int, stage: Stmt) -> Stmt:
    items = list(body.seq) if isinstance(body, SeqStmt) else [body]
    items.insert(pos, stage)
    return seq(*items)


# ---------------------------------------------------------------- the copy stage


def _copy_stage(original: Buffer, cache: Buffer, region: tuple[Range, ...], compact: bool, into_cache: bool):
    """Loops ``ax*`` over ``region`` around a block named like ``cache`` that copies between the two.

    ``into_cache`` copies original -> cache (cache_read), else cache -> original
    (the write-back of cache_write). A ``compact`` cache starts at the region's
    minimum: the original's index is then ``min + v`` and the cache's ``v``.
    """
    analyzer = Analyzer()
    loop_vars = [Var(f"ax{i}", r.extent.dtype) for i, r in enumerate(region)]
    iter_vars, values, original_idx, cache_idx = [], [], [], []
    for i, (r, ax, extent) in enumerate(zip(region, loop_vars, cache.shape)):
        v = Var(f"v{i}", r.extent.dtype)
        iter_vars.append(IterVar(v, Range(const(0, extent.dtype), extent), IterKind.SPATIAL))
        values.append(ax if compact else analyzer.simplify(r.min + ax))
        original_idx.append(analyzer.simplify(r.min + v) if compact else v)
        cache_idx.append(v)
    src, dst = (original, cache) if into_cache else (cache, original)
    src_idx, dst_idx = (original_idx, cache_idx) if into_cache else (cache_idx, original_idx)
    block = Block(
        name=cache.name,
        iter_vars=tuple(iter_vars),
        reads=(BufferRegion(src, _points(src_idx)),),
        writes=(BufferRegion(dst, _points(dst_idx)),),
        body=BufferStore(dst, BufferLoad(src, tuple(src_idx)), tuple(dst_idx)),
    )
    stmt: Stmt = BlockRealize(tuple(values), const(True), block)
    for ax, r in reversed(list(zip(loop_vars, region))):
        stmt = For(ax, const(0, r.extent.dtype), r.extent, ForKind.SERIAL, stmt)
    return stmt, block


def _points(indices) -> tuple[Range, ...]:
    return tuple(Range(i, const(1, i.dtype)) for i in indices)


def _cache_buffer(state: ScheduleState, buffer: Buffer, scope: str, region, compact: bool) -> Buffer:
    shape = tuple(r.extent for r in region) if compact else buffer.shape
    return Buffer(state.unique_name(f"{buffer.name}_{scope}"), shape, buffer.dtype, scope)


def _shift(indices, region, compact: bool, analyzer: Analyzer):
    if not compact:
        return tuple(indices)
    return tuple(analyzer.simplify(i - r.min) for i, r in zip(indices, region))


class _CacheRewriter(Mutator):
    """Points accesses of ``old`` at ``new`` in the chosen blocks and inserts the copy stage.

    ``uses(block)`` says whether a block's accesses move to the cache; ``skip(block)``
    leaves a block (and all inside it) alone; ``regions`` names the region lists of
    a chosen block to rewrite ("reads", or "reads" and "writes"). The stage goes into
    loop ``loc`` at ``pos``; when ``loc`` is the scope block, ``_rewrite_scope`` does it.
    """

    def __init__(self, old, new, region, compact, uses, skip, regions, loc, pos, stage):
        self.old, self.new, self.region, self.compact = old, new, region, compact
        self.uses, self.skip, self.regions = uses, skip, regions
        self.loc, self.pos, self.stage = loc, pos, stage
        self.active = False
        self.analyzer = Analyzer()

    def visit_Block(self, block: Block):
        if self.skip(block):
            return block
        saved, self.active = self.active, self.uses(block)
        new_block = self.generic_visit(block)
        if self.active:
            changes = {name: self._regions(getattr(new_block, name)) for name in self.regions}
            new_block = replace(new_block, **changes)
        self.active = saved
        return new_block

    def visit_For(self, loop: For):
        new_loop = self.generic_visit(loop)
        if loop is self.loc:
            new_loop = replace(new_loop, body=_insert(new_loop.body, self.pos, self.stage))
        return new_loop

    def _regions(self, regions):
        out = []
        for r in regions:
            if r.buffer is self.old:
                ranges = tuple(
                    Range(self.analyzer.simplify(x.min - c.min) if self.compact else x.min, x.extent)
                    for x, c in zip(r.region, self.region)
                )
                r = BufferRegion(self.new, ranges)
            out.append(r)
        return tuple(out)

    def visit_BufferLoad(self, load: BufferLoad):
        load = self.generic_visit(load)
        if self.active and load.buffer is self.old:
            return BufferLoad(self.new, _shift(load.indices, self.region, self.compact, self.analyzer))
        return load

    def visit_BufferStore(self, store: BufferStore):
        store = self.generic_visit(store)
        if self.active and store.buffer is self.old and "writes" in self.regions:
            return BufferStore(
                self.new, store.value, _shift(store.indices, self.region, self.compact, self.analyzer)
            )
        return store


def _rewrite_scope(state: ScheduleState, scope: Block, rewriter: _CacheRewriter, cache: Buffer) -> None:
    body = rewriter.visit(scope.body)
    if scope is rewriter.loc:
        body = _insert(body, rewriter.pos, rewriter.stage)
    init = rewriter.visit(scope.init) if scope.init is not None else None
    new_scope = replace(scope, body=body, init=init, alloc_buffers=(*scope.alloc_buffers, cache))
    state.replace({scope: new_scope})


# ---------------------------------------------------------------- primitives


@primitive()
def cache_read(
    state: ScheduleState,
    block: Block,
    read_buffer_index: int,
    storage_scope: str,
    consumer_blocks: Block | list[Block] | None = None,
) -> Block:
    # Step 1. Check the scope, the index, the writers and the consumers.
    scope_name = _storage_scope(storage_scope, "cache_read")
    buffer = _nth_buffer(block, read_buffer_index, "read", "read_buffer_index")
    scope = state.parent_block(state.realize_of(block))
    scope_blocks = child_blocks(scope)
    writer = _single_writer(scope_blocks, buffer)
    consumers = _consumer_set(state, consumer_blocks, scope, buffer)

    # Step 2. Where the copy goes and which region it copies.
    if writer is None:
        loc, pos = scope, 0
        region = next((r.region for r in scope.reads if r.buffer is buffer), buffer.full_region().region)
    else:
        related = [
            b
            for b in scope_blocks
            if b is not writer
            and any(r.buffer is buffer for r in b.reads)
            and (consumers is None or b.name in consumers)
        ]
        loc, pos = _location_before_first(state, scope, writer, related)
        region = _written_region(state, writer, buffer, loc)
    compact = isinstance(loc, Block)
    cache = _cache_buffer(state, buffer, scope_name, region, compact)

    # Step 3. Build the copy block and point the consumers at the cache.
    stage, copy_block = _copy_stage(buffer, cache, region, compact, into_cache=True)
    writer_name = writer.name if writer is not None else None
    rewriter = _CacheRewriter(
        buffer,
        cache,
        region,
        compact,
        uses=lambda b: consumers is None or b.name in consumers,
        skip=lambda b: b.name == writer_name,
        regions=("reads",),
        loc=loc,
        pos=pos,
        stage=stage,
    )
    _rewrite_scope(state, scope, rewriter, cache)
    return copy_block


def _written_region(state: ScheduleState, writer: Block, buffer: Buffer, loc) -> tuple[Range, ...]:
    """What ``writer`` writes of ``buffer`` over all its loops below ``loc``."""
    realize = state.realize_of(writer)
    written = next(w for w in writer.writes if w.buffer is buffer)
    high = loc if isinstance(loc, For) else None
    dom = loop_domains(state, realize, high, relax_scope="global")
    return relaxed_region(realize, written, dom, Analyzer())


@primitive()
def cache_write(
    state: ScheduleState,
    block: Block,
    write_buffer_index: int,
    storage_scope: str,
    consumer_blocks: Block | list[Block] | None = None,
) -> Block:
    # Step 1. Check the scope, the index, that the block is the only writer, and the consumers.
    scope_name = _storage_scope(storage_scope, "cache_write")
    buffer = _nth_buffer(block, write_buffer_index, "write", "write_buffer_index")
    scope = state.parent_block(state.realize_of(block))
    scope_blocks = child_blocks(scope)
    _single_writer(scope_blocks, buffer)
    consumers = _consumer_set(state, consumer_blocks, scope, buffer)

    # Step 2. The write-back goes after the block, before the first reader left on the original buffer.
    related = [
        b
        for b in scope_blocks
        if b is not block
        and any(r.buffer is buffer for r in b.reads)
        and (consumers is None or b.name not in consumers)
    ]
    loc, pos = _location_before_first(state, scope, block, related)
    region = _written_region(state, block, buffer, loc)
    compact = isinstance(loc, Block)
    cache = _cache_buffer(state, buffer, scope_name, region, compact)

    # Step 3. The block writes the cache; a new block copies it back.
    stage, write_back = _copy_stage(buffer, cache, region, compact, into_cache=False)
    chosen = {block.name} | {b.name for b in _nested_blocks(block)} | (consumers or set())
    rewriter = _CacheRewriter(
        buffer,
        cache,
        region,
        compact,
        uses=lambda b: b.name in chosen,
        skip=lambda b: False,
        regions=("reads", "writes"),
        loc=loc,
        pos=pos,
        stage=stage,
    )
    _rewrite_scope(state, scope, rewriter, cache)
    return write_back


@primitive()
def set_scope(state: ScheduleState, block: Block, buffer_index: int, storage_scope: str) -> None:
    # Step 1. Find the buffer and where it is allocated.
    buffer = _nth_buffer(block, buffer_index, "write", "buffer_index")
    scope_name = _storage_scope(storage_scope, "set_scope")
    if buffer.scope == scope_name:
        return None
    owner = next((b for b in state.index.blocks.values() if buffer in b.alloc_buffers), None)
    if owner is None:
        raise NonAllocatedBufferError(
            f"buffer {buffer.name} written by block {block.name} is a parameter of function "
            f"{state.func.name}, not allocated in it, so its storage scope is the caller's. Use "
            f"cache_write(block, {buffer_index}, {storage_scope!r}) to stage it in {scope_name} memory "
            "instead.",
            block,
        )
    # Step 2. Replace it everywhere under its allocating block by a buffer of the new scope.
    new_buffer = Buffer(
        state.unique_name(f"{buffer.name}_{scope_name}"), buffer.shape, buffer.dtype, scope_name
    )
    body = substitute_buffers(owner.body, {buffer: new_buffer})
    init = substitute_buffers(owner.init, {buffer: new_buffer}) if owner.init is not None else None
    allocs = tuple(new_buffer if b is buffer else b for b in owner.alloc_buffers)
    state.replace({owner: replace(owner, body=body, init=init, alloc_buffers=allocs)})
    return None


# ---------------------------------------------------------------- public methods


class CacheReadWriteMethods:
    def cache_read(
        self,
        block: BlockRV,
        read_buffer_index: int,
        storage_scope: str,
        consumer_blocks: list[BlockRV] | None = None,
    ) -> BlockRV:
        """Copy a buffer that ``block`` reads into a new buffer of ``storage_scope``, and read the copy.

        cache_read in TVM (``cache_read`` in Halide's older API, ``in()`` today). The new
        buffer, named ``<buffer>_<scope>`` (``A_shared``), has the same shape and is
        allocated in the block's scope; a new block of the same name copies the whole
        buffer under loops ``ax0, ax1, ...``. It goes first in the scope when the buffer is
        a function input, else right after the buffer's writer. Every reader (or only
        ``consumer_blocks``) then reads the copy. Follow with ``compute_at`` to copy only
        what one iteration of a loop needs.

        Requirements
        ------------
        - ``read_buffer_index`` indexes ``block``'s reads (``T.reads``).
        - ``storage_scope`` is "global", "shared" or "local" (Metal's "threadgroup" and
          "thread" are accepted and stored as "shared" and "local").
        - At most one block of the scope writes the buffer.

        Parameters
        ----------
        block : the block that reads the buffer.
        read_buffer_index : position of the buffer in ``block``'s reads.
        storage_scope : the memory scope of the copy.
        consumer_blocks : the blocks that should read the copy (default: every reader).

        Returns
        -------
        The copy block (``A_shared``).

        Example
        -------
        >>> func = tir.parse('''
        ... @T.prim_func
        ... def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        ...     for i in range(8):
        ...         with T.block("B"):
        ...             vi = T.axis.spatial(8, i)
        ...             B[vi] = A[vi] * T.float32(2)
        ... ''')
        >>> sch = Schedule(func)
        >>> A_shared = sch.cache_read(sch.get_block("B"), 0, "shared")
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            # with T.block("root"):
            A_shared = T.alloc_buffer((8,), scope="shared")
            for ax0 in range(8):
                with T.block("A_shared"):
                    v0 = T.axis.spatial(8, ax0)
                    T.reads(A[v0])
                    T.writes(A_shared[v0])
                    A_shared[v0] = A[v0]
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    T.reads(A_shared[vi])
                    T.writes(B[vi])
                    B[vi] = A_shared[vi] * T.float32(2.0)
        """
        return self._run(
            "cache_read",
            block=block,
            read_buffer_index=read_buffer_index,
            storage_scope=storage_scope,
            consumer_blocks=consumer_blocks,
        )

    def cache_write(
        self,
        block: BlockRV,
        write_buffer_index: int,
        storage_scope: str,
        consumer_blocks: list[BlockRV] | None = None,
    ) -> BlockRV:
        """Make ``block`` write a new buffer of ``storage_scope``, and copy it back afterwards.

        cache_write in TVM (Halide stages an output through a wrapper ``Func`` instead).
        ``block`` now writes ``<buffer>_<scope>`` (``C_local``) instead of the buffer; a
        new block, named like the cache, copies it back to the buffer under loops
        ``ax0, ax1, ...``, right after ``block`` (before the first block that reads the
        buffer, or at the end of the scope). ``consumer_blocks`` may list readers that
        should read the cache directly. Follow with ``reverse_compute_at`` on the
        returned block to write back one tile at a time.

        Requirements
        ------------
        - ``write_buffer_index`` indexes ``block``'s writes (``T.writes``).
        - ``storage_scope`` is "global", "shared" or "local" (or a Metal alias).
        - ``block`` is the only block of its scope that writes the buffer.

        Parameters
        ----------
        block : the block that writes the buffer.
        write_buffer_index : position of the buffer in ``block``'s writes.
        storage_scope : the memory scope of the cache.
        consumer_blocks : readers of the buffer that should read the cache instead.

        Returns
        -------
        The write-back block (``C_local``), which copies the cache to the buffer.

        Example
        -------
        >>> func = tir.parse('''
        ... @T.prim_func
        ... def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        ...     for i in range(8):
        ...         with T.block("B"):
        ...             vi = T.axis.spatial(8, i)
        ...             B[vi] = A[vi] * T.float32(2)
        ... ''')
        >>> sch = Schedule(func)
        >>> B_local = sch.cache_write(sch.get_block("B"), 0, "local")
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            # with T.block("root"):
            B_local = T.alloc_buffer((8,), scope="local")
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    T.reads(A[vi])
                    T.writes(B_local[vi])
                    B_local[vi] = A[vi] * T.float32(2.0)
            for ax0 in range(8):
                with T.block("B_local"):
                    v0 = T.axis.spatial(8, ax0)
                    T.reads(B_local[v0])
                    T.writes(B[v0])
                    B[v0] = B_local[v0]
        """
        return self._run(
            "cache_write",
            block=block,
            write_buffer_index=write_buffer_index,
            storage_scope=storage_scope,
            consumer_blocks=consumer_blocks,
        )

    def set_scope(self, block: BlockRV, buffer_index: int, storage_scope: str) -> None:
        """Move a buffer that ``block`` writes to another storage scope, without a copy.

        set_scope in TVM (``store_in`` in Halide). The buffer keeps its shape and
        accesses and is renamed ``<buffer>_<scope>``, as in TVM. Nothing happens when it
        is already in that scope.

        Requirements
        ------------
        - ``buffer_index`` indexes ``block``'s writes.
        - The buffer is allocated in the function (``T.alloc_buffer``), not a parameter.
        - ``storage_scope`` is "global", "shared" or "local" (or a Metal alias).

        Parameters
        ----------
        block : a block that writes the buffer.
        buffer_index : position of the buffer in ``block``'s writes.
        storage_scope : the new scope.

        Example
        -------
        >>> func = tir.parse('''
        ... @T.prim_func
        ... def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        ...     B = T.alloc_buffer((8,))
        ...     for i in range(8):
        ...         with T.block("B"):
        ...             vi = T.axis.spatial(8, i)
        ...             B[vi] = A[vi] * T.float32(2)
        ...     for i in range(8):
        ...         with T.block("C"):
        ...             vi = T.axis.spatial(8, i)
        ...             C[vi] = B[vi] + T.float32(1)
        ... ''')
        >>> sch = Schedule(func)
        >>> sch.set_scope(sch.get_block("B"), 0, "threadgroup")
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
            # with T.block("root"):
            B_shared = T.alloc_buffer((8,), scope="shared")
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    T.reads(A[vi])
                    T.writes(B_shared[vi])
                    B_shared[vi] = A[vi] * T.float32(2.0)
            for i_1 in range(8):
                with T.block("C"):
                    vi_1 = T.axis.spatial(8, i_1)
                    T.reads(B_shared[vi_1])
                    T.writes(C[vi_1])
                    C[vi_1] = B_shared[vi_1] + T.float32(1.0)
        """
        return self._run("set_scope", block=block, buffer_index=buffer_index, storage_scope=storage_scope)
