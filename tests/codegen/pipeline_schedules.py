"""A hand-scheduled fp32 matmul with a software-pipelined k loop, for tests, goldens and benchmarks.

``pipelined_matmul(n, stages, ...)``: block tiles of ``rows x cols`` outputs, one
thread per ``reg x reg_cols`` register tile, A and B tiles of depth ``depth`` copied to
shared memory cooperatively (``lanes`` per thread per copy, vectorized when above 1),
the accumulators in a local write cache, and the outer k loop annotated as
MetaSchedule does: ``software_pipeline_stage = [0, 0, stages - 1]``, order ``[0, 1, 2]``,
``software_pipeline_async_stages = [0]`` when ``async_copy`` (cp.async on CUDA sm_80+;
every other target copies synchronously). ``stages=1`` leaves the loop unannotated.

``fragments=True`` schedules what fast SGEMMs do on top (``register_fragments``):
every k step first loads the thread's column of A and row of B from shared memory
into local register fragments as float4s, then runs the ``reg x reg_cols`` FMAs from
registers; A is stored transposed in shared memory so that its column is contiguous;
both tiles store a thread's rows (columns) as groups of 4 spread
one float4 per thread apart, so that the float4 reads of a warp are conflict-free; A's
transposing copy moves one element per thread-lane (4-byte cp.async) with its rows
padded by 4 floats (conflict-free stores); C is stored as float4s; the k-step loop
is unrolled.
"""

from __future__ import annotations

import tir
from schedule import Schedule
from schedule.instruction import BlockRV, LoopRV
from tuner import workloads

# Floats per fragment vector: the float4 of a 128-bit shared-memory load.
FRAGMENT_LANES = 4


def pipelined_matmul(
    n: int,
    stages: int = 3,
    async_copy: bool = True,
    lanes: int = 4,
    rows: int = 64,
    cols: int = 64,
    depth: int = 16,
    reg: int = 4,
    fragments: bool = False,
    reg_cols: int | None = None,
    spread: bool = True,
    transpose_a: bool = True,
) -> tir.IRModule:
    """The scheduled ``n x n x n`` matmul (``n`` a multiple of the tiles); each thread's register
    tile is ``reg x reg_cols`` (``reg_cols`` defaults to ``reg``; multiples of 4 with ``fragments``;
    ``spread=False`` keeps a thread's rows contiguous in shared memory, A only transposed;
    ``transpose_a=False`` gives only B a fragment, A copied and read as without fragments)."""
    reg_cols = reg if reg_cols is None else reg_cols
    sch = Schedule(workloads.matmul(n, n, n))
    block = sch.get_block("C")
    write_back = sch.cache_write(block, 0, "local")
    i, j, k = sch.get_loops(block)
    i0, i1, i2 = sch.split(i, [None, rows // reg, reg])
    j0, j1, j2 = sch.split(j, [None, cols // reg_cols, reg_cols])
    k0, k1 = sch.split(k, [None, depth])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    block_x = sch.fuse(i0, j0)
    thread_x = sch.fuse(i1, j1)
    sch.bind(block_x, "blockIdx.x")
    sch.bind(thread_x, "threadIdx.x")
    sch.reverse_compute_at(write_back, thread_x)
    threads = (rows // reg) * (cols // reg_cols)
    shared = []
    for index in (0, 1):
        cache = sch.cache_read(block, index, "shared")
        shared.append(cache)
        sch.compute_at(cache, k0)
        fused = sch.fuse(*sch.get_loops(cache)[-2:])
        copy_lanes = 1 if fragments and transpose_a and index == 0 else lanes
        _, tx, vec = sch.split(fused, [None, threads, copy_lanes])
        sch.bind(tx, "threadIdx.x")
        if copy_lanes > 1:
            sch.vectorize(vec)
    if fragments:
        regs = (reg, reg_cols) if spread else (FRAGMENT_LANES, FRAGMENT_LANES)
        inputs = (0, 1) if transpose_a else (1,)
        register_fragments(sch, block, k1, shared, regs, write_back, inputs)
    sch.decompose_reduction(block, k0)
    if stages > 1:
        sch.annotate(k0, "software_pipeline_stage", [0, 0, stages - 1])
        sch.annotate(k0, "software_pipeline_order", [0, 1, 2])
        if async_copy:
            sch.annotate(k0, "software_pipeline_async_stages", [0])
    return sch.mod


def register_fragments(
    sch: Schedule,
    block: BlockRV,
    k1: LoopRV,
    shared: list[BlockRV],
    regs: tuple[int, int],
    write_back: BlockRV,
    inputs: tuple[int, ...] = (0, 1),
) -> None:
    """Per k step, float4 register fragments of A's column and B's row (the ``inputs`` of the
    two) read from shared tiles stored as ``[k, group, thread, 4]`` for ``regs`` rows and
    columns per thread (A transposed, its rows padded; ``(4, 4)``: the plain layouts), and
    float4 C stores."""
    fragments = [sch.cache_read(block, index, "local") for index in inputs]
    for fragment in fragments:
        sch.compute_at(fragment, k1)
    if 0 in inputs:
        sch.transform_layout(fragments[0], ("write", 0), lambda r, k: (k, r))
        sch.storage_align(shared[0], 0, 0, 32, FRAGMENT_LANES)
    for index in inputs:
        layout = _spread(regs[index], transposed=index == 0)
        if layout is not None:
            sch.transform_layout(shared[index], ("write", 0), layout)
    for fragment in fragments:
        _vectorize_innermost(sch, fragment)
    _vectorize_innermost(sch, write_back)
    # The k-step loop allocates the fragments, so it is never copied; unroll asks for
    # `#pragma unroll` whatever its size (the automatic pragma stops at 1,024 statements).
    sch.unroll(k1)


def _spread(reg: int, transposed: bool):
    """``(row, k)`` (or ``(k, col)``) -> ``(k, group, thread, lane)``: a thread's ``reg``
    consecutive rows become ``reg / 4`` float4s one thread-row of float4s apart; None
    where that is B's own layout (one group)."""
    if reg == FRAGMENT_LANES:
        return (lambda x, k: (k, x)) if transposed else None

    def spread(k, x):
        return (k, x % reg // FRAGMENT_LANES, x // reg, x % FRAGMENT_LANES)

    return (lambda x, k: spread(k, x)) if transposed else spread


def _vectorize_innermost(sch: Schedule, block: BlockRV) -> None:
    _, lanes = sch.split(sch.get_loops(block)[-1], [None, FRAGMENT_LANES])
    sch.vectorize(lanes)
