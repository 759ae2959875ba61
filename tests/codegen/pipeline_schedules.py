"""A hand-scheduled fp32 matmul with a software-pipelined k loop, for tests, goldens and benchmarks.

``pipelined_matmul(n, stages, ...)``: block tiles of ``rows x cols`` outputs, one
thread per ``reg x reg`` register tile, A and B tiles of depth ``depth`` copied to
shared memory cooperatively (``lanes`` per thread per copy, vectorized when above 1),
the accumulators in a local write cache, and the outer k loop annotated as
MetaSchedule does: ``software_pipeline_stage = [0, 0, stages - 1]``, order ``[0, 1, 2]``,
``software_pipeline_async_stages = [0]`` when ``async_copy`` (cp.async on CUDA sm_80+;
every other target copies synchronously). ``stages=1`` leaves the loop unannotated.
"""

from __future__ import annotations

import tir
from schedule import Schedule
from tuner import workloads


def pipelined_matmul(
    n: int,
    stages: int = 3,
    async_copy: bool = True,
    lanes: int = 4,
    rows: int = 64,
    cols: int = 64,
    depth: int = 16,
    reg: int = 4,
) -> tir.IRModule:
    """The scheduled ``n x n x n`` matmul (``n`` a multiple of the tiles)."""
    sch = Schedule(workloads.matmul(n, n, n))
    block = sch.get_block("C")
    write_back = sch.cache_write(block, 0, "local")
    i, j, k = sch.get_loops(block)
    i0, i1, i2 = sch.split(i, [None, rows // reg, reg])
    j0, j1, j2 = sch.split(j, [None, cols // reg, reg])
    k0, k1 = sch.split(k, [None, depth])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    block_x = sch.fuse(i0, j0)
    thread_x = sch.fuse(i1, j1)
    sch.bind(block_x, "blockIdx.x")
    sch.bind(thread_x, "threadIdx.x")
    sch.reverse_compute_at(write_back, thread_x)
    threads = (rows // reg) * (cols // reg)
    for index in (0, 1):
        cache = sch.cache_read(block, index, "shared")
        sch.compute_at(cache, k0)
        fused = sch.fuse(*sch.get_loops(cache)[-2:])
        _, tx, vec = sch.split(fused, [None, threads, lanes])
        sch.bind(tx, "threadIdx.x")
        if lanes > 1:
            sch.vectorize(vec)
    sch.decompose_reduction(block, k0)
    if stages > 1:
        sch.annotate(k0, "software_pipeline_stage", [0, 0, stages - 1])
        sch.annotate(k0, "software_pipeline_order", [0, 1, 2])
        if async_copy:
            sch.annotate(k0, "software_pipeline_async_stages", [0])
    return sch.mod
