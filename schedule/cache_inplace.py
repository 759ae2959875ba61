"""cache_inplace: stage a buffer that one block updates in place through a cache (TVM's cache_inplace).

A block that both reads and writes a buffer (an in-place update, an opaque call
that takes the buffer) gets a cache of ``storage_scope``: a copy block fills the
cache with the region the block touches before the block's loop nest, the block
reads and writes the cache, and a second copy block writes that region back
after the nest. The cache keeps the buffer's shape (the block's indices do not
change), and both copies cover the whole touched region, so the write-back also
returns the elements the block only read, unchanged. No other block may touch the
buffer inside the same loop nest, where the copies would reorder its accesses.
"""

from __future__ import annotations

from dataclasses import replace

from tir import Block, Buffer, Range, SeqStmt, op
from tir.arith import Analyzer
from tir.functor import substitute_buffers

from .analysis import child_blocks, loop_domains, relaxed_region
from .cache_stage import checked_scope, copy_stage
from .errors import ScheduleError
from .index_maps import BlockArgumentMethods, access_region
from .instruction import BlockRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class InplaceBufferError(ScheduleError):
    """The buffer is not both read and written by the block, or another block in the same loop nest
    touches it."""


# ---------------------------------------------------------------- cache_inplace


def _touched_region(state: ScheduleState, block: Block, buffer: Buffer) -> tuple[Range, ...]:
    """The hull of the block's read and write regions of ``buffer`` over the loops around it."""
    realize = state.realize_of(block)
    dom = loop_domains(state, realize, None, "global")
    analyzer = Analyzer()
    regions = [
        relaxed_region(realize, r, dom, analyzer) for r in (*block.reads, *block.writes) if r.buffer is buffer
    ]
    hull = []
    for ranges in zip(*regions):
        low = ranges[0].min
        high = ranges[0].min + ranges[0].extent
        for r in ranges[1:]:
            low, high = op.min_value(low, r.min), op.max_value(high, r.min + r.extent)
        low = analyzer.simplify(low)
        hull.append(Range(low, analyzer.simplify(high - low)))
    return tuple(hull)


@primitive()
def cache_inplace(
    state: ScheduleState, block: Block, read_buffer_index: int, storage_scope: str
) -> list[Block]:
    # Step 1. the buffer is read and written by the block, and by no other block of its loop nest
    scope_name = checked_scope(storage_scope, "cache_inplace")
    buffer = access_region(block, "read", read_buffer_index, "read_buffer_index").buffer
    if not any(w.buffer is buffer for w in block.writes):
        raise InplaceBufferError(
            f"can't cache_inplace buffer {buffer.name}: block {block.name!r} reads it but does not write "
            "it (use cache_read)",
            block,
        )
    realize = state.realize_of(block)
    scope = state.parent_block(realize)
    holder = scope.body if isinstance(scope.body, SeqStmt) else scope
    top = next(s for s in [realize, *state.ancestors(realize)] if state.parent(s) is holder)
    nest = child_blocks(top) if top is not realize else []
    others = [b for b in nest if b is not block and any(r.buffer is buffer for r in (*b.reads, *b.writes))]
    if others:
        raise InplaceBufferError(
            f"can't cache_inplace buffer {buffer.name} of block {block.name!r}: block "
            f"{others[0].name!r} in the same loop nest touches it too",
            block,
            others[0],
        )

    # Step 2. the cache, the block using it, the copy in before and the copy back after
    region = _touched_region(state, block, buffer)
    cache = Buffer(state.unique_name(f"{buffer.name}_{scope_name}"), buffer.shape, buffer.dtype, scope_name)
    state.replace({block: substitute_buffers(block, {buffer: cache})})
    copy_in, _ = copy_stage(buffer, cache, region, compact=False, into_cache=True)
    state.insert_beside(state.index.blocks[block.name], copy_in, after=False)
    back_name = state.unique_name(cache.name)
    copy_back, _ = copy_stage(buffer, cache, region, compact=False, into_cache=False, name=back_name)
    state.insert_beside(state.index.blocks[block.name], copy_back, after=True)
    scope = state.parent_block(state.realize_of(state.index.blocks[block.name]))
    state.replace({scope: replace(scope, alloc_buffers=(*scope.alloc_buffers, cache))})
    return [state.index.blocks[cache.name], state.index.blocks[back_name]]


# ---------------------------------------------------------------- public methods


class CacheInplaceMethods(BlockArgumentMethods):
    def cache_inplace(
        self, block: BlockRV | str, read_buffer_index: int, storage_scope: str
    ) -> list[BlockRV]:
        """Stage a buffer that ``block`` reads and writes through a cache of ``storage_scope``; return
        the copy-in and the copy-back blocks.

        ``cache_inplace`` in TVM, for in-place updates (an accumulation without ``T.init``,
        an opaque call on the buffer). The cache has the buffer's shape; the copies cover
        the region the block touches over its loops, before and after its loop nest.

        Requirements: ``read_buffer_index`` indexes the block's reads, and that buffer is
        also written by the block and touched by no other block in the same loop nest.

        Example
        -------
        >>> sch = Schedule(tir.parse(_INCREMENT))
        >>> copy_in, copy_back = sch.cache_inplace(sch.get_block("B"), 0, "local")
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            # with T.block("root"):
            B_local = T.alloc_buffer((8,), scope="local")
            for ax0 in range(8):
                with T.block("B_local"):
                    v0 = T.axis.spatial(8, ax0)
                    T.reads(B[v0])
                    T.writes(B_local[v0])
                    B_local[v0] = B[v0]
            for i in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    T.reads(B_local[vi], A[vi])
                    T.writes(B_local[vi])
                    B_local[vi] = B_local[vi] + A[vi]
            for ax0_1 in range(8):
                with T.block("B_local_1"):
                    v0_1 = T.axis.spatial(8, ax0_1)
                    T.reads(B_local[v0_1])
                    T.writes(B[v0_1])
                    B[v0_1] = B_local[v0_1]
        """
        block = self._block_argument(block)
        return self._run(
            "cache_inplace", block=block, read_buffer_index=read_buffer_index, storage_scope=storage_scope
        )


# The program the example above schedules (doctest globals: tir, Schedule).
_INCREMENT = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = B[vi] + A[vi]
"""
