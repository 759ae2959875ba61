"""Rules for blocks without data reuse: elementwise blocks and simple reductions.

Elementwise (spatial iterators only; what auto-inline left: outputs, transposes,
blocks read by several consumers): on a GPU all loops are fused and split into
``[blocks, threads]`` with the thread count drawn from [64, 128, 256, 512] (those the
target allows), bound to blockIdx.x / threadIdx.x; on the CPU the fused loop is split
by a sampled perfect tile whose inner part, at most one vector register wide, is
vectorized where the stores are contiguous, and the outer part runs in parallel.

Simple reductions (a row sum, softmax's maximum and sum, pooling): the spatial loops
are put outside the reduction loops and bound or parallelized as above, each thread
reducing its own outputs serially, with a sampled auto-unroll depth on the outer
loop. A reduction with no spatial loop at all (a full sum) runs on one thread of one
group on a GPU: unit loops split off the reduction loop carry the bindings, so no
loop of the kernel is left unbound. On a GPU, a reduction over at least
``CROSS_THREAD_MIN_EXTENT`` elements per output is a cross-thread reduction instead
(MetaSchedule's CrossThreadReduction): one thread group per output (the fused spatial
loops on blockIdx.x) whose threads, a sampled 32 to 512, share the fused reduction
loop (its inner part on threadIdx.x) and combine with warp shuffles. Which form a
block gets depends on its extents only, never on a decision, so traces replay with
any decisions.
"""

from __future__ import annotations

import math

from codegen.target import Target
from schedule import LoopRV, Schedule
from tir import IterKind
from tir.dtype import bytes_of

from .structure import CPU_UNROLL_STEPS, annotate_unroll, fuse_loops, loop_extent, try_vectorize

THREAD_CANDIDATES = [64, 128, 256, 512]
# Reductions at least this long per output are shared by a group's threads (cross-thread).
CROSS_THREAD_MIN_EXTENT = 64
CROSS_THREAD_CANDIDATES = [32, 64, 128, 256, 512]


def thread_candidates(target: Target, extent: int | None) -> list[int]:
    """The thread counts to draw from: those within the target's limit, and not all idle."""
    fitting = [t for t in THREAD_CANDIDATES if t <= target.max_threads_per_group]
    fitting = fitting or [target.max_threads_per_group]
    useful = [t for t in fitting if extent is None or t <= extent]
    return useful or fitting[:1]


def bind_blocks_and_threads(sch: Schedule, loop: LoopRV, target: Target) -> LoopRV:
    """Split ``loop`` into ``[blocks, threads]`` with a sampled thread count and bind both; returns
    the block loop."""
    candidates = thread_candidates(target, loop_extent(sch, loop))
    threads = sch.sample_categorical(candidates, [1 / len(candidates)] * len(candidates))
    block_x, thread_x = sch.split(loop, [None, threads])
    sch.bind(block_x, "blockIdx.x")
    sch.bind(thread_x, "threadIdx.x")
    return block_x


def elementwise_gpu(sch: Schedule, name: str, target: Target) -> None:
    """All loops fused, split into thread groups of a sampled size, bound."""
    loops = sch.get_loops(sch.get_block(name))
    if loops:
        bind_blocks_and_threads(sch, fuse_loops(sch, loops), target)


def elementwise_cpu(sch: Schedule, name: str, target: Target) -> None:
    """All loops fused, split by a sampled tile at most a vector wide: parallel outside, vector inside."""
    block = sch.get_block(name)
    loops = sch.get_loops(block)
    if not loops:
        return
    lanes = max(1, target.vector_bytes // bytes_of(sch.get(block).writes[0].buffer.dtype))
    fused = fuse_loops(sch, loops)
    outer, inner = sch.split(fused, sch.sample_perfect_tile(fused, n=2, max_innermost_factor=lanes))
    sch.parallel(outer)
    try_vectorize(sch, inner)


def _spatial_first(sch: Schedule, name: str) -> tuple[list[LoopRV], list[LoopRV]]:
    """The block's spatial and reduction loops, reordered so that the spatial ones are outside."""
    block = sch.get_block(name)
    iters = sch.loop_iters(block)
    loops = sch.get_loops(block)
    spatial = [lp for lp, iv in zip(loops, iters) if iv.kind is IterKind.SPATIAL]
    reduce = [lp for lp, iv in zip(loops, iters) if iv.kind is not IterKind.SPATIAL]
    if loops != spatial + reduce:
        sch.reorder(*spatial, *reduce)
    return spatial, reduce


def reduction_gpu(sch: Schedule, name: str, target: Target) -> None:
    """One thread per output (spatial loops bound), each reducing serially; one thread if no output loop;
    a group of threads per output when the reduction is long (cross-thread)."""
    spatial, reduce = _spatial_first(sch, name)
    extents = [loop_extent(sch, loop) for loop in reduce]
    if spatial and None not in extents and math.prod(extents) >= CROSS_THREAD_MIN_EXTENT:
        _cross_thread_reduction(sch, spatial, reduce, math.prod(extents), target)
        return
    if spatial:
        outer = bind_blocks_and_threads(sch, fuse_loops(sch, spatial), target)
    else:
        outer, rest = sch.split(reduce[0], [1, None], preserve_unit_iters=False)
        sch.bind(outer, "blockIdx.x")
        thread, _ = sch.split(rest, [1, None], preserve_unit_iters=False)
        sch.bind(thread, "threadIdx.x")
    annotate_unroll(sch, outer)


def _cross_thread_reduction(
    sch: Schedule, spatial: list[LoopRV], reduce: list[LoopRV], extent: int, target: Target
) -> None:
    outer = fuse_loops(sch, spatial)
    sch.bind(outer, "blockIdx.x")
    limit = min(target.max_threads_per_group, extent)
    candidates = [t for t in CROSS_THREAD_CANDIDATES if t <= limit] or [CROSS_THREAD_CANDIDATES[0]]
    threads = sch.sample_categorical(candidates, [1 / len(candidates)] * len(candidates))
    _, thread_x = sch.split(fuse_loops(sch, reduce), [None, threads])
    sch.bind(thread_x, "threadIdx.x")
    annotate_unroll(sch, outer)


def reduction_cpu(sch: Schedule, name: str, target: Target) -> None:
    """The spatial loops fused and parallel, each output reduced serially."""
    spatial, reduce = _spatial_first(sch, name)
    outer = fuse_loops(sch, spatial) if spatial else reduce[0]
    if spatial:
        sch.parallel(outer)
    annotate_unroll(sch, outer, CPU_UNROLL_STEPS)
