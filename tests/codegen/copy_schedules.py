"""Hand schedules for vectorized cooperative fetches, storage_align and epilogue fusion.

Shared by the C / Metal-simulator / nvcc tests and the GPU tests. ``shared_matmul``
is the seed notebook's shared-memory matmul (``blocking_with_shared``: 64 threads,
each fetch split ``[rest, 64 threads, 4 lanes]`` and vectorized) on any sizes, with
its two shared tiles optionally ``storage_align``ed. ``matmul_epilogue`` tiles the
matmul of ``matmul_bias_relu`` (or of a program with two outputs) with a local write
cache and moves the elementwise epilogue under the same thread loop with
``reverse_compute_at``, MetaSchedule's "fuse consumer"; an intermediate product then
lives in a per-thread array (a global buffer cannot be allocated inside a kernel).
"""

from __future__ import annotations

import tir
from schedule import Schedule
from tests.schedule.seed_notebook import blocking_with_shared
from tir import T
from tuner import workloads


def shared_matmul(m: int, n: int, k: int, align: tuple[int, int] | None = None) -> Schedule:
    """The seed's shared-memory matmul (8 x 8 threads, 8 x 8 per thread, k tiles of 8); ``align``
    = (factor, offset) pads both shared tiles' rows."""
    sch = blocking_with_shared(Schedule(workloads.matmul(m, n, k)), 8, 8, 8, 8, 8)
    if align is not None:
        for name in ("A_shared", "B_shared"):
            sch.storage_align(sch.get_block(name), 0, 0, *align)
    return sch


@T.prim_func
def matmul_and_relu(
    A: T.Buffer((64, 32), "float32"),
    B: T.Buffer((32, 64), "float32"),
    C: T.Buffer((64, 64), "float32"),
    D: T.Buffer((64, 64), "float32"),
):
    for i, j, k in T.grid(64, 64, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(64, 64):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))


def matmul_epilogue(mod: tir.IRModule | tir.PrimFunc, epilogue: str) -> Schedule:
    """Block "C" tiled 16 x 16 per thread block and 4 x 4 per thread, a local write cache under the
    thread loop, and block ``epilogue`` (inlined producers first) moved after it."""
    sch = Schedule(mod)
    for name in sch.block_names():
        if name not in ("C", epilogue) and sch.can_apply("compute_inline", block=sch.find_block(name)):
            sch.compute_inline(sch.get_block(name))
    block = sch.get_block("C")
    write_back = sch.cache_write(block, 0, "local")
    i, j, k = sch.get_loops(block)
    i0, i1, i2 = sch.split(i, [None, 4, 4])
    j0, j1, j2 = sch.split(j, [None, 4, 4])
    sch.reorder(i0, j0, i1, j1, k, i2, j2)
    blocks = sch.fuse(i0, j0)
    threads = sch.fuse(i1, j1)
    sch.bind(blocks, "blockIdx.x")
    sch.bind(threads, "threadIdx.x")
    sch.reverse_compute_at(write_back, threads)
    sch.reverse_compute_at(sch.get_block(epilogue), threads)
    if sch.get(write_back).writes[0].buffer not in sch.func.params:
        sch.set_scope(write_back, 0, "local")  # the tile never leaves the thread
    sch.decompose_reduction(block, k)
    return sch
