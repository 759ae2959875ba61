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

from tir import (
    Block,
    Buffer,
)
from tir.functor import post_order_visit, substitute_buffers

from .analysis import (
    child_blocks,
    writers_of,
)
from .cache_stage import (
    CacheRewriter,
    cache_buffer,
    checked_scope,
    copy_stage,
    location_before_first,
    rewrite_scope,
)
from .cache_stage import StorageScopeError as StorageScopeError  # this family's error
from .cache_write_region import PartialWriteError as PartialWriteError  # this family's error
from .cache_write_region import written_condition, written_region
from .errors import ScheduleError
from .index_maps import access_region, region_list
from .instruction import BlockRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class NotSingleWriteBlockError(ScheduleError):
    """The buffer to cache is written by more than one block of the scope, so no copy point is right."""


class ConsumerBlockError(ScheduleError):
    """A block in ``consumer_blocks`` is not in the cached block's scope or does not read the buffer."""


class NonAllocatedBufferError(ScheduleError):
    """set_scope on a buffer the function does not allocate (a parameter has no scope to change)."""


# ---------------------------------------------------------------- shared checks


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
                f"{region_list(consumer.reads)}); leave it out of consumer_blocks",
                consumer,
            )
        names.add(consumer.name)
        names.update(b.name for b in _nested_blocks(consumer))
    return names


def _nested_blocks(block: Block) -> list[Block]:
    out: list[Block] = []
    post_order_visit(block.body, lambda n: out.append(n) if isinstance(n, Block) else None)
    return out


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
    scope_name = checked_scope(storage_scope, "cache_read")
    buffer = access_region(block, "read", read_buffer_index, "read_buffer_index").buffer
    scope = state.parent_block(state.realize_of(block))
    scope_blocks = child_blocks(scope)
    writer = _single_writer(scope_blocks, buffer)
    consumers = _consumer_set(state, consumer_blocks, scope, buffer)

    # Step 2. Where the copy goes and which region it copies. Readers before the writer read the
    # buffer's value on entry, readers after it what it wrote: one copy serves one of the two.
    related = [
        b
        for b in scope_blocks
        if b is not writer
        and any(r.buffer is buffer for r in b.reads)
        and (consumers is None or b.name in consumers)
    ]
    writer_name = writer.name if writer is not None else None
    if writer is not None:
        position = {id(b): i for i, b in enumerate(scope_blocks)}
        before = [b for b in related if position[id(b)] < position[id(writer)]]
        if before and len(before) < len(related):
            raise ConsumerBlockError(
                f"blocks {', '.join(b.name for b in before)} read {buffer.name} before block {writer.name} "
                f"writes it and the others after, so one copy can't serve them all; pass consumer_blocks "
                "from one side",
                *before,
            )
        writer_loops = {id(loop) for loop in state.loops_of(writer)}
        shared = [b for b in before if any(id(loop) in writer_loops for loop in state.loops_of(b))]
        if shared:
            raise ConsumerBlockError(
                f"blocks {', '.join(b.name for b in shared)} read {buffer.name} in a loop around block "
                f"{writer.name}, which writes it: a later iteration reads what an earlier one wrote, so a "
                "copy made once on entry would hand it stale values",
                *shared,
            )
        if before:  # every reader runs before the writer: copy the value on entry
            writer = None
    if writer is None:
        loc, pos = scope, 0
        region = next((r.region for r in scope.reads if r.buffer is buffer), buffer.full_region().region)
    else:
        loc, pos = location_before_first(state, scope, writer, related)
        region = written_region(state, writer, buffer, loc)
    compact = isinstance(loc, Block)
    cache = cache_buffer(state, buffer, scope_name, region, compact)

    # Step 3. Build the copy block and point the consumers at the cache.
    stage, copy_block = copy_stage(buffer, cache, region, compact, into_cache=True)
    rewriter = CacheRewriter(
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
    rewrite_scope(state, scope, rewriter, cache)
    return copy_block


@primitive()
def cache_write(
    state: ScheduleState,
    block: Block,
    write_buffer_index: int,
    storage_scope: str,
    consumer_blocks: Block | list[Block] | None = None,
) -> Block:
    # Step 1. Check the scope, the index, that the block is the only writer, and the consumers.
    scope_name = checked_scope(storage_scope, "cache_write")
    buffer = access_region(block, "write", write_buffer_index, "write_buffer_index").buffer
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
    loc, pos = location_before_first(state, scope, block, related)
    region = written_region(state, block, buffer, loc, exact=True)
    compact = isinstance(loc, Block)
    cache = cache_buffer(state, buffer, scope_name, region, compact)

    # Step 3. The block writes the cache; a new block copies back what it wrote.
    written = written_condition(block, buffer)
    stage, write_back = copy_stage(buffer, cache, region, compact, into_cache=False, written=written)
    chosen = {block.name} | {b.name for b in _nested_blocks(block)} | (consumers or set())
    rewriter = CacheRewriter(
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
    rewrite_scope(state, scope, rewriter, cache)
    return write_back


@primitive()
def set_scope(state: ScheduleState, block: Block, buffer_index: int, storage_scope: str) -> None:
    # Step 1. Find the buffer and where it is allocated.
    buffer = access_region(block, "write", buffer_index).buffer
    scope_name = checked_scope(storage_scope, "set_scope")
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
        state.unique_name(f"{buffer.name}_{scope_name.replace('.', '_')}"),
        buffer.shape,
        buffer.dtype,
        scope_name,
    )
    state.replace({owner: substitute_buffers(owner, {buffer: new_buffer})})
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
