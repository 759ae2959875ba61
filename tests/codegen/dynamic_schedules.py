"""Dynamic-shape programs and GPU schedules shared by the Metal-simulator, nvcc and ``-m gpu`` tests.

``rows_matmul_program()`` multiplies an (n, 64) matrix by a constant (64, 32) one: its schedule splits the
row loop by 8 (blockIdx.x gets ``(n + 7) // 8`` and the tail is the split's predicate), binds the
rows of a tile to threadIdx.y and the columns to threadIdx.x, and stages a constant 8 x 32 tile
of A in shared memory per step of k. ``rows_softmax`` normalizes n rows of 64 in three kernels
whose row maxima and sums are global workspaces of n floats, allocated per call, or in one kernel
of n thread blocks that reduce each row across their threads.
"""

from __future__ import annotations

import numpy as np

import tir
from schedule import Schedule
from tests.codegen.cross_thread_schedules import rows_with_reductions
from tir import T
from tir.function import PrimFunc


def rows_matmul_program(rows: int | None = None) -> PrimFunc:
    """C (rows, 32) = A (rows, 64) @ B (64, 32); ``rows=None`` makes the row count the variable n."""
    n = "n" if rows is None else str(rows)
    declare = "n = T.int32()" if rows is None else ""
    return tir.parse(
        f"""
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    {declare}
    A = T.match_buffer(a, ({n}, 64), "float32")
    B = T.match_buffer(b, (64, 32), "float32")
    C = T.match_buffer(c, ({n}, 32), "float32")
    for i, j, k in T.grid({n}, 32, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""
    )


@T.prim_func
def rows_softmax(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 64), "float32")
    B = T.match_buffer(b, (n, 64), "float32")
    A_max = T.alloc_buffer((n,))
    A_sum = T.alloc_buffer((n,))
    for i, k in T.grid(n, 64):
        with T.block("A_max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                A_max[vi] = T.float32(-3.4e38)
            A_max[vi] = T.max(A_max[vi], A[vi, vk])
    for i, k in T.grid(n, 64):
        with T.block("A_sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                A_sum[vi] = T.float32(0)
            A_sum[vi] = A_sum[vi] + T.exp(A[vi, vk] - A_max[vi])
    for i, j in T.grid(n, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.exp(A[vi, vj] - A_max[vi]) / A_sum[vi]


def rows_matmul_shared(rows: int | None = None) -> PrimFunc:
    """rows_matmul_program(rows) tiled 8 rows x 32 columns per threadgroup with A's tile in shared memory."""
    sch = Schedule(rows_matmul_program(rows))
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i_0, i_1 = sch.split(i, [None, 8])
    k_0, _ = sch.split(k, [None, 32])
    sch.reorder(i_0, i_1, j, k_0)
    sch.bind(i_0, "blockIdx.x")
    sch.bind(i_1, "threadIdx.y")
    sch.bind(j, "threadIdx.x")
    A_shared = sch.cache_read(block, 0, "shared")
    sch.compute_at(A_shared, k_0)
    fused = sch.fuse(*sch.get_loops(A_shared)[-2:])
    _, rows, columns = sch.split(fused, [None, 8, 32])
    sch.bind(rows, "threadIdx.y")
    sch.bind(columns, "threadIdx.x")
    return sch.mod["main"]


def rows_softmax_split() -> PrimFunc:
    """rows_softmax with each stage's rows split by 32 over blockIdx.x and threadIdx.x."""
    sch = Schedule(rows_softmax)
    for name in ("A_max", "A_sum", "B"):
        rows = sch.get_loops(sch.get_block(name))[0]
        outer, inner = sch.split(rows, [None, 32])
        sch.bind(outer, "blockIdx.x")
        sch.bind(inner, "threadIdx.x")
    return sch.mod["main"]


def rows_softmax_cross_thread() -> PrimFunc:
    """rows_softmax with each row one thread block (n blocks) and its max and sum reduced by 32
    threads into shared memory (a cross-thread reduction), as tests/codegen/cross_thread_schedules.py
    schedules the static softmax."""
    return rows_with_reductions(rows_softmax, "B", ("A_sum", "A_max"), 32).mod["main"]


def matmul_arrays(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Random A (n, 64) and B (64, 32), C full of NaN, and the expected C."""
    rng = np.random.default_rng(n)
    a, b = rng.standard_normal((n, 64), "float32"), rng.standard_normal((64, 32), "float32")
    return a, b, np.full((n, 32), np.nan, "float32"), a @ b


def softmax_arrays(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random A (n, 64), B full of NaN, and the expected B."""
    a = np.random.default_rng(n).standard_normal((n, 64), "float32")
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return a, np.full((n, 64), np.nan, "float32"), e / e.sum(axis=1, keepdims=True)
