"""Fused rows: a row-wise output and the long reductions it reads, in one GPU kernel.

MetaSchedule's CrossThreadReduction fuses a reduction into its consumer's loop when it
can. Softmax is a row max, a row sum of exponentials and a normalize; layer norm two
row sums and a normalize. Scheduled block by block they are three kernels, each
reading the whole input from global memory. Here the consumer (the normalize) is
scheduled first: its row loops fused and bound to blockIdx.x, its last loop split by
a sampled thread count bound to threadIdx.x; then each reduction it reads is
``compute_at`` that row loop (the later reduction first, so the earlier one finds its
consumer there), its reduction loop split by the same thread count and bound to
threadIdx.x (a cross-thread reduction), and its result moved to shared memory so that
all the row's threads see it. One thread group per row does all the work.

``row_reductions`` says, from structure only, whether a block is such a consumer: a
spatial block of two or more loops reading the outputs of root reductions that have
as many spatial iterators as the block has row loops and reduce at least
``CROSS_THREAD_MIN_EXTENT`` elements per output. Whether ``compute_at`` accepts each
one is the schedule's own check: a refusal fails the rule, and the generator falls
back to scheduling the blocks one by one.
"""

from __future__ import annotations

import math

from codegen.target import Target
from schedule import Schedule
from tir import Block, IterKind

from .elementwise import CROSS_THREAD_CANDIDATES, CROSS_THREAD_MIN_EXTENT
from .structure import BlockKind, annotate_unroll, classify, fuse_loops, is_spatial


def row_reductions(sch: Schedule, name: str, reductions: list[tuple[str, Block]] | None = None) -> list[str]:
    """The root reductions, in program order, that block ``name`` can share its row kernel with
    (see the module docstring); empty when it is no such consumer. ``reductions`` is
    ``long_reductions(sch)`` when the caller asks for several blocks of one schedule (each
    block is classified once, not once per consumer)."""
    block = sch.find_block(name)
    if block is None or not is_spatial(block) or sch.loop_iters(block) is None:
        return []
    rows = len(block.iter_vars) - 1
    if rows < 1:
        return []
    read = {r.buffer for r in block.reads}
    found = []
    for other, producer in long_reductions(sch) if reductions is None else reductions:
        spatial = [iv for iv in producer.iter_vars if iv.kind is IterKind.SPATIAL]
        if producer is not block and producer.writes[0].buffer in read and len(spatial) == rows:
            found.append(other)
    return found


def long_reductions(sch: Schedule) -> list[tuple[str, Block]]:
    """The blocks of ``sch`` that ``classify`` gives the reduction rule and that reduce a constant
    number of at least ``CROSS_THREAD_MIN_EXTENT`` elements per output, with their names, in
    program order: the producers ``row_reductions`` may fuse."""
    found = []
    for name in sch.block_names():
        block = sch.find_block(name)
        if classify(sch, block) is not BlockKind.REDUCTION:
            continue
        extents = [iv.dom.extent for iv in block.iter_vars if iv.kind is IterKind.REDUCE]
        if all(hasattr(e, "value") for e in extents) and math.prod(e.value for e in extents) >= (
            CROSS_THREAD_MIN_EXTENT
        ):
            found.append((name, block))
    return found


def fused_rows_gpu(sch: Schedule, name: str, reductions: list[str], target: Target) -> None:
    """Block ``name`` and its ``reductions`` in one kernel: a thread group per row."""
    *rows, cols = sch.get_loops(sch.get_block(name))
    row = fuse_loops(sch, rows)
    sch.bind(row, "blockIdx.x")
    longest = max(_reduction_extent(sch, r) for r in reductions)
    limit = min(target.max_threads_per_group, longest)
    candidates = [t for t in CROSS_THREAD_CANDIDATES if t <= limit] or [CROSS_THREAD_CANDIDATES[0]]
    threads = sch.sample_categorical(candidates, [1 / len(candidates)] * len(candidates))
    _, thread_x = sch.split(cols, [None, threads])
    sch.bind(thread_x, "threadIdx.x")
    for reduction in reversed(reductions):
        block = sch.get_block(reduction)
        sch.compute_at(block, row)
        # Under the row loop only the reduction's loops are left (its row iterators are bound to it).
        _, reduce_x = sch.split(fuse_loops(sch, sch.get_loops(block)[1:]), [None, threads])
        sch.bind(reduce_x, "threadIdx.x")
        sch.set_scope(block, 0, "shared")
    annotate_unroll(sch, row)


def _reduction_extent(sch: Schedule, name: str) -> int:
    block = sch.find_block(name)
    return math.prod(iv.dom.extent.value for iv in block.iter_vars if iv.kind is IterKind.REDUCE)
