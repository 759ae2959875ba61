"""read_at and write_at: stage a block's buffer through a cache at a loop, in one copy block per
iteration (TVM's read_at / write_at, the "auto_copy" stages).

``read_at(loop, block, i, "shared")`` puts, first in ``loop``'s body, a block that
copies the region of the block's ``i``-th read buffer the iteration needs (relaxed
over the loops inside ``loop`` and, for shared memory, over the threads outside it
that share the cache) into a cache of the scope, and points the block at the cache.
``write_at`` puts, last in ``loop``'s body, a block that copies back what the block
wrote in the iteration. The copy block's iterators are the loops the region moves
with; its body is plain loops over the region, and it carries ``auto_copy`` for
the lowering, as in TVM. The cache keeps the buffer's shape, as TVM's.
"""

from __future__ import annotations

from dataclasses import replace

from tir import (
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferStore,
    For,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    Range,
    SeqStmt,
    Var,
    const,
)
from tir.arith import Analyzer
from tir.buffer import BufferRegion
from tir.functor import collect_vars, stmts_pre_order, substitute, substitute_buffers
from tir.stmt import seq

from .analysis import loads_of, loop_domains
from .cache_stage import checked_scope
from .cache_write_region import PartialWriteError, predicated_region, written_condition, written_region
from .errors import ScheduleError
from .index_maps import BlockArgumentMethods, access_region
from .instruction import BlockRV, LoopRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class StageAtError(ScheduleError):
    """The loop is not around the block, another block under the loop touches the buffer, or the
    region is not of constant size."""


# ---------------------------------------------------------------- the copy block


def _check_stage(state: ScheduleState, loop: For, block: Block, buffer: Buffer, kind: str) -> None:
    name = f"{kind}_at"
    if not any(x is loop for x in state.loops_of(block)):
        raise StageAtError(
            f"can't {name} block {block.name!r} at loop {loop.loop_var.name}: the loop is not around "
            "the block",
            block,
            loop,
        )
    others = [
        s.name
        for s in stmts_pre_order(loop.body)
        if isinstance(s, Block)
        and s.name != block.name
        and any(r.buffer is buffer for r in (*s.reads, *s.writes))
    ]
    if others:
        raise StageAtError(
            f"can't {name} buffer {buffer.name} of block {block.name!r} at loop {loop.loop_var.name}: "
            f"blocks {others} under the loop touch it too, and would not see the cache",
            block,
        )


def _copy_block(
    name: str, src: Buffer, dst: Buffer, region: tuple[Range, ...], outer: list[For], where: Block
):
    """A block over the loops ``region`` moves with, copying ``region`` from ``src`` to ``dst``."""
    # One iterator per loop the region moves with, in the order of the dimensions they move (TVM's).
    moving = []
    for r in region:
        moving += [x for x in outer if x.loop_var in collect_vars(r.min) and x not in moving]
    iters = {x.loop_var: Var(f"v{k}", x.loop_var.dtype) for k, x in enumerate(moving)}
    iter_vars = tuple(IterVar(iters[x.loop_var], Range(x.min, x.extent), IterKind.SPATIAL) for x in moving)
    inner = []
    for r in region:
        if not isinstance(r.extent, IntImm):
            raise StageAtError(
                f"can't stage buffer {src.name} of block {where.name!r}: the region it needs per iteration "
                f"has the symbolic extent {r.extent}",
                where,
            )
        inner.append(Var(f"ax{len(inner)}", r.extent.dtype))
    mins = [substitute(r.min, iters) for r in region]
    indices = tuple(m + ax for m, ax in zip(mins, inner))
    body = BufferStore(dst, BufferLoad(src, indices), indices)
    for ax, r in reversed(list(zip(inner, region))):
        body = For(ax, const(0, r.extent.dtype), r.extent, ForKind.SERIAL, body)
    boxes = tuple(Range(m, r.extent) for m, r in zip(mins, region))
    block = Block(
        name=name,
        iter_vars=iter_vars,
        reads=(BufferRegion(src, boxes),),
        writes=(BufferRegion(dst, boxes),),
        body=body,
        annotations={"auto_copy": True},
    )
    return BlockRealize(tuple(x.loop_var for x in moving), const(True), block)


def _stage(
    state: ScheduleState, loop: For, block: Block, old: Buffer, cache: Buffer, realize_copy, after: bool
):
    state.replace({block: substitute_buffers(block, {old: cache})})
    current = state.index.loops[loop.loop_var]
    # As TVM: right before (a read) or after (a write) the statement of the loop body that holds the
    # block, so copies staged earlier under the same loop keep their places.
    children = list(current.body.seq) if isinstance(current.body, SeqStmt) else [current.body]
    holder = next(
        i
        for i, child in enumerate(children)
        if any(isinstance(s, Block) and s.name == block.name for s in stmts_pre_order(child))
    )
    children.insert(holder + 1 if after else holder, realize_copy)
    state.replace({current: replace(current, body=seq(*children))})
    scope = state.parent_block(state.index.loops[loop.loop_var])
    state.replace({scope: replace(scope, alloc_buffers=(*scope.alloc_buffers, cache))})
    return state.index.blocks[realize_copy.block.name]


@primitive()
def read_at(
    state: ScheduleState, loop: For, block: Block, read_buffer_index: int, storage_scope: str
) -> Block:
    scope = checked_scope(storage_scope, "read_at")
    read = access_region(block, "read", read_buffer_index, "read_buffer_index")
    buffer = read.buffer
    _check_stage(state, loop, block, buffer, "read")
    if any(w.buffer is buffer for w in block.writes):
        raise StageAtError(f"can't read_at buffer {buffer.name}: block {block.name!r} writes it too", block)
    realize = state.realize_of(block)
    narrowed = predicated_region(realize, read, loop_domains(state, realize, loop, scope), Analyzer())
    if not isinstance(narrowed, tuple):
        raise StageAtError(
            f"can't read_at buffer {buffer.name}: block {block.name!r} runs only when {narrowed!r}, which "
            "can't be restated as a region of the buffer, so the copy could read past what the block reads",
            block,
        )
    region = narrowed[0]
    cache = Buffer(state.unique_name(f"{buffer.name}_{scope}"), buffer.shape, buffer.dtype, scope)
    outer = [x for x in state.loops_of(block)][: state.loops_of(block).index(loop) + 1]
    copy = _copy_block(cache.name, buffer, cache, region, outer, block)
    return _stage(state, loop, block, buffer, cache, copy, after=False)


@primitive()
def write_at(
    state: ScheduleState, loop: For, block: Block, write_buffer_index: int, storage_scope: str
) -> Block:
    scope = checked_scope(storage_scope, "write_at")
    buffer = access_region(block, "write", write_buffer_index, "write_buffer_index").buffer
    _check_stage(state, loop, block, buffer, "write")
    if loads_of(block.body, buffer) and block.init is None:
        raise StageAtError(
            f"can't write_at buffer {buffer.name}: block {block.name!r} reads its old values, which the "
            "cache would not hold (only a reduction with T.init may read what it writes)",
            block,
        )
    if written_condition(block, buffer) is not None:
        raise PartialWriteError(
            f"can't write_at buffer {buffer.name}: block {block.name!r} writes it under a condition, so the "
            "copy back would write elements it never wrote; use cache_write",
            block,
        )
    region = written_region(state, block, buffer, loop, exact=True)
    cache = Buffer(state.unique_name(f"{buffer.name}_{scope}"), buffer.shape, buffer.dtype, scope)
    outer = [x for x in state.loops_of(block)][: state.loops_of(block).index(loop) + 1]
    copy = _copy_block(cache.name, cache, buffer, region, outer, block)
    return _stage(state, loop, block, buffer, cache, copy, after=True)


# ---------------------------------------------------------------- public methods


class ReadWriteAtMethods(BlockArgumentMethods):
    def read_at(
        self, loop: LoopRV, block: BlockRV | str, read_buffer_index: int, storage_scope: str
    ) -> BlockRV:
        """Copy, at the start of each iteration of ``loop``, the region of the block's
        ``read_buffer_index``-th read buffer that the iteration needs into a cache of
        ``storage_scope``, and read the cache; return the copy block.

        ``read_at`` in TVM (cache_read and compute_at in one step, the copy annotated
        ``auto_copy``). For "shared", the region also covers the threads outside ``loop``
        that share the cache.

        Requirements: ``loop`` is around ``block``; no other block under ``loop`` touches
        the buffer; the block does not write it; the region has a constant size.

        Example
        -------
        >>> sch = Schedule(tir.parse(_TILED_MATMUL))
        >>> block = sch.get_block("C")
        >>> k_0 = sch.get_loops(block)[2]
        >>> copy = sch.read_at(k_0, block, 0, "shared")
        >>> print(sch.get(copy).reads[0], sch.get(copy).annotations)
        A[v0 * 4:v0 * 4 + 4, v1 * 4:v1 * 4 + 4] {'auto_copy': True}
        """
        block = self._block_argument(block)
        return self._run(
            "read_at",
            loop=loop,
            block=block,
            read_buffer_index=read_buffer_index,
            storage_scope=storage_scope,
        )

    def write_at(
        self, loop: LoopRV, block: BlockRV | str, write_buffer_index: int, storage_scope: str
    ) -> BlockRV:
        """Write the block's ``write_buffer_index``-th buffer through a cache of ``storage_scope``,
        copied back at the end of each iteration of ``loop``; return the copy-back block.

        ``write_at`` in TVM (cache_write and reverse_compute_at in one step, annotated
        ``auto_copy``). The copy covers exactly what the block wrote in the iteration.

        Requirements: ``loop`` is around ``block``; no other block under ``loop`` touches
        the buffer; the block reads the buffer's old values only as a reduction with
        ``T.init``, writes it unconditionally, without gaps, and the region has a
        constant size.

        Example
        -------
        >>> sch = Schedule(tir.parse(_TILED_MATMUL))
        >>> block = sch.get_block("C")
        >>> copy = sch.write_at(sch.get_loops(block)[1], block, 0, "local")
        >>> print(sch.get(copy).writes[0])
        C[v0 * 4:v0 * 4 + 4, v1 * 4:v1 * 4 + 4]
        """
        block = self._block_argument(block)
        return self._run(
            "write_at",
            loop=loop,
            block=block,
            write_buffer_index=write_buffer_index,
            storage_scope=storage_scope,
        )


# The program the examples above schedule (doctest globals: tir, Schedule).
_TILED_MATMUL = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i_0, j_0, k_0, i_1, j_1, k_1 in T.grid(2, 2, 2, 4, 4, 4):
        with T.block("C"):
            vi = T.axis.spatial(8, i_0 * 4 + i_1)
            vj = T.axis.spatial(8, j_0 * 4 + j_1)
            vk = T.axis.reduce(8, k_0 * 4 + k_1)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""
