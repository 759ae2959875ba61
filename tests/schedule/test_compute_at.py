"""compute_at and reverse_compute_at: expected scripts, trace round trips, same numbers, refused requests.

The seed notebook's pieces are here at sizes the executor runs quickly: the window
sum's shared-memory fetch (130 elements per thread block, then a cooperative
fetch), the matmul's local write-back per thread tile, and its shared-memory
blocking with cooperative fetches of A and B.
"""

from __future__ import annotations

import tir
from schedule import Schedule, StaleHandleError
from schedule.compute_at import (
    InsertionPointError,
    LoopAncestorError,
    NoConsumerError,
    NoProducerError,
    NotAncestorOfConsumerError,
    NotAncestorOfProducerError,
    NotCompleteOrReductionBlockError,
    NotInSameScopeError,
    NotSingleWriterError,
    OutputBlockError,
    RegionPatternError,
)
from schedule.errors import ArgumentError
from tir import I, T

from .seed_notebook import MyModuleWindowSun
from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip

# ---------------------------------------------------------------- workloads


@T.prim_func
def window_sum(A: T.Buffer((258,), "float32"), B: T.Buffer((256,), "float32")):
    for i in range(256):
        with T.block("B"):
            vi = T.axis.spatial(256, i)
            B[vi] = A[vi] + A[vi + 1] + A[vi + 2]


@T.prim_func
def window_sum_shared_compute_at(A: T.Buffer((258,), "float32"), B: T.Buffer((256,), "float32")):
    A_shared = T.alloc_buffer((258,), scope="shared")
    for i_0 in T.thread_binding(2, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            for ax0 in range(130):
                with T.block("A_shared"):
                    v0 = T.axis.spatial(258, i_0 * 128 + ax0)
                    A_shared[v0] = A[v0]
            with T.block("B"):
                vi = T.axis.spatial(256, i_0 * 128 + i_1)
                B[vi] = A_shared[vi] + A_shared[vi + 1] + A_shared[vi + 2]


@T.prim_func
def window_sum_shared_cooperative(A: T.Buffer((258,), "float32"), B: T.Buffer((256,), "float32")):
    A_shared = T.alloc_buffer((258,), scope="shared")
    for i_0 in T.thread_binding(2, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            for ax0_0 in range(2):
                for ax0_1 in T.thread_binding(128, thread="threadIdx.x"):
                    with T.block("A_shared"):
                        v0 = T.axis.spatial(258, i_0 * 128 + ax0_0 * 128 + ax0_1)
                        T.where(ax0_0 * 128 + ax0_1 < 130)
                        A_shared[v0] = A[v0]
            with T.block("B"):
                vi = T.axis.spatial(256, i_0 * 128 + i_1)
                B[vi] = A_shared[vi] + A_shared[vi + 1] + A_shared[vi + 2]


@T.prim_func
def window_sum_local_compute_at(A: T.Buffer((258,), "float32"), B: T.Buffer((256,), "float32")):
    A_local = T.alloc_buffer((258,), scope="local")
    for i_0 in T.thread_binding(2, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            for ax0 in range(3):
                with T.block("A_local"):
                    v0 = T.axis.spatial(258, i_0 * 128 + i_1 + ax0)
                    A_local[v0] = A[v0]
            with T.block("B"):
                vi = T.axis.spatial(256, i_0 * 128 + i_1)
                B[vi] = A_local[vi] + A_local[vi + 1] + A_local[vi + 2]


@T.prim_func
def window_sum_ragged(A: T.Buffer((102,), "float32"), B: T.Buffer((100,), "float32")):
    for i in range(100):
        with T.block("B"):
            vi = T.axis.spatial(100, i)
            B[vi] = A[vi] + A[vi + 1] + A[vi + 2]


@T.prim_func
def window_sum_ragged_shared_compute_at(A: T.Buffer((102,), "float32"), B: T.Buffer((100,), "float32")):
    A_shared = T.alloc_buffer((102,), scope="shared")
    for i_0 in T.thread_binding(4, thread="blockIdx.x"):
        for i_1 in T.thread_binding(32, thread="threadIdx.x"):
            for ax0 in range(34):
                with T.block("A_shared"):
                    v0 = T.axis.spatial(102, i_0 * 32 + ax0)
                    T.where(i_0 * 32 + ax0 < 102)
                    A_shared[v0] = A[v0]
            with T.block("B"):
                vi = T.axis.spatial(100, i_0 * 32 + i_1)
                T.where(i_0 * 32 + i_1 < 100)
                B[vi] = A_shared[vi] + A_shared[vi + 1] + A_shared[vi + 2]


@T.prim_func
def two_stage(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def two_stage_compute_at_j(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def two_stage_compute_at_j_unit_loops(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        for ax0, ax1 in T.grid(1, 1):
            with T.block("B"):
                vi = T.axis.spatial(16, i + ax0)
                vj = T.axis.spatial(16, j + ax1)
                B[vi, vj] = A[vi, vj] * T.float32(2)
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def two_stage_reverse_compute_at_i(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i in range(16):
        for j in range(16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for ax0 in range(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, ax0)
                C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def shifted_tiles(A: T.Buffer((33,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((33,))
    for i in range(33):
        with T.block("B"):
            vi = T.axis.spatial(33, i)
            B[vi] = A[vi] * T.float32(2)
    for i_0, i_1 in T.grid(4, 4):
        with T.block("C"):
            vi = T.axis.spatial(16, i_0 * 4 + i_1)
            C[vi] = B[vi * 2 + 1]


@T.prim_func
def shifted_tiles_compute_at(A: T.Buffer((33,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((33,))
    for i_0 in range(4):
        for ax0 in range(7):
            with T.block("B"):
                vi = T.axis.spatial(33, i_0 * 8 + 1 + ax0)
                B[vi] = A[vi] * T.float32(2)
        for i_1 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(16, i_0 * 4 + i_1)
                C[vi] = B[vi * 2 + 1]


@T.prim_func
def row_sum(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i, k in T.grid(16, 16):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] * T.float32(2)


@T.prim_func
def row_sum_compute_at(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        for ax0 in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                vk = T.axis.reduce(16, ax0)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] * T.float32(2)


@T.prim_func
def prefix_sum(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = T.float32(0)
            for k in range(vi + 1):
                C[vi] = C[vi] + B[k]


@T.prim_func
def prefix_sum_compute_at(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        for ax0 in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, ax0)
                T.where(ax0 < i + 1)
                B[vi] = A[vi] * T.float32(2)
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = T.float32(0)
            for k in range(vi + 1):
                C[vi] = C[vi] + B[k]


@T.prim_func
def side_by_side(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    X = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("X"):
            vi = T.axis.spatial(16, i)
            X[vi] = A[vi] + T.float32(1)
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] + X[vi]


@T.prim_func
def side_by_side_first_position(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    X = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
        with T.block("X"):
            vi = T.axis.spatial(16, i)
            X[vi] = A[vi] + T.float32(1)
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] + X[vi]


@T.prim_func
def matmul(
    A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")
):
    for i, j, k in T.grid(32, 32, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_local_blocking(
    A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")
):
    C_local = T.alloc_buffer((32, 32), scope="local")
    for i_0 in T.thread_binding(4, thread="blockIdx.x"):
        for j_0 in T.thread_binding(4, thread="blockIdx.y"):
            for i_1 in T.thread_binding(2, thread="threadIdx.x"):
                for j_1 in T.thread_binding(2, thread="threadIdx.y"):
                    for k_0 in range(8):
                        for k_1 in T.unroll(4):
                            for i_2, j_2 in T.grid(4, 4):
                                with T.block("C"):
                                    vi = T.axis.spatial(32, i_0 * 8 + i_1 * 4 + i_2)
                                    vj = T.axis.spatial(32, j_0 * 8 + j_1 * 4 + j_2)
                                    vk = T.axis.reduce(32, k_0 * 4 + k_1)
                                    T.reads(A[vi, vk], B[vk, vj])
                                    T.writes(C_local[vi, vj])
                                    with T.init():
                                        C_local[vi, vj] = T.float32(0)
                                    C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
                    for ax0, ax1 in T.grid(4, 4):
                        with T.block("C_local"):
                            v0 = T.axis.spatial(32, i_0 * 8 + i_1 * 4 + ax0)
                            v1 = T.axis.spatial(32, j_0 * 8 + j_1 * 4 + ax1)
                            C[v0, v1] = C_local[v0, v1]


@T.prim_func
def two_consumers(
    A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32"), D: T.Buffer((16,), "float32")
):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] + T.float32(1)
    for i in range(16):
        with T.block("D"):
            vi = T.axis.spatial(16, i)
            D[vi] = B[vi] * A[vi]


@T.prim_func
def nested_scope(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    with T.block("outer"):
        T.reads(B[0:16])
        T.writes(C[0:16])
        for j in range(16):
            with T.block("C"):
                vj = T.axis.spatial(16, j)
                C[vj] = B[vj] + T.float32(1)


@T.prim_func
def dead_store(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi] + T.float32(1)


@T.prim_func
def accumulate_in_place(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = B[vi] + A[vi]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] * T.float32(2)


@T.prim_func
def two_writers(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B_first"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi]
    for i in range(16):
        with T.block("B_second"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(3)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] * T.float32(2)


@T.prim_func
def flattened_producer(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi * 4 + vj] = A[vi * 4 + vj] * T.float32(2)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] + T.float32(1)


@I.ir_module
class TwoFunctions:
    @T.prim_func
    def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        for i in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi] * T.float32(2)
        for i in range(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi] + T.float32(1)

    @T.prim_func
    def other(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("D"):
                vi = T.axis.spatial(16, i)
                C[vi] = A[vi]


# ---------------------------------------------------------------- helpers


def split_bind(sch: Schedule, block_name: str, inner: int):
    block = sch.get_block(block_name)
    (i,) = sch.get_loops(block)
    i0, i1 = sch.split(i, [None, inner])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    return block, i0, i1


def loops_of(func: tir.PrimFunc) -> list[tuple[str, int]]:
    out = []
    tir.post_order_visit(
        func.body, lambda n: out.append((n.loop_var.name, int(n.extent))) if isinstance(n, tir.For) else None
    )
    return out


# ---------------------------------------------------------------- window sum (seed In [8]-[13])


def test_window_sum_shared_fetch_covers_the_thread_block():
    sch = Schedule(window_sum)
    block, _, i1 = split_bind(sch, "B", 128)
    cache = sch.cache_read(block, 0, "shared")
    sch.compute_at(cache, i1)
    tir.assert_structural_equal(sch.mod["main"], window_sum_shared_compute_at)
    verify_trace_roundtrip(sch, window_sum)
    assert_same_numbers(window_sum, sch.mod)


def test_window_sum_cooperative_fetch_computes_the_same():
    sch = Schedule(window_sum)
    block, _, i1 = split_bind(sch, "B", 128)
    cache = sch.cache_read(block, 0, "shared")
    sch.compute_at(cache, i1)
    fetch = sch.get_loops(cache)[-1]
    _, threads = sch.split(fetch, [None, 128])
    sch.bind(threads, "threadIdx.x")
    tir.assert_structural_equal(sch.mod["main"], window_sum_shared_cooperative)
    verify_trace_roundtrip(sch, window_sum)
    assert_same_numbers(window_sum, sch.mod)


def test_window_sum_seed_size_cache_is_1026_and_fetch_is_130():
    sch = Schedule(MyModuleWindowSun)
    block, _, i1 = split_bind(sch, "B", 128)
    cache = sch.cache_read(block, 0, "shared")
    sch.compute_at(cache, i1)
    func = sch.mod["main"]
    (alloc,) = func.body.block.alloc_buffers
    assert (alloc.name, alloc.scope, [int(s) for s in alloc.shape]) == ("A_shared", "shared", [1026])
    assert ("ax0", 130) in loops_of(func)
    copy = sch.get(cache)
    assert int(copy.iter_vars[0].dom.extent) == 1026
    assert "v0 = T.axis.spatial(1026, i_0 * 128 + ax0)" in func.script()


def test_local_cache_relaxes_no_thread_loop():
    sch = Schedule(window_sum)
    block, _, i1 = split_bind(sch, "B", 128)
    cache = sch.cache_read(block, 0, "local")
    sch.compute_at(cache, i1)
    tir.assert_structural_equal(sch.mod["main"], window_sum_local_compute_at)
    verify_trace_roundtrip(sch, window_sum)
    assert_same_numbers(window_sum, sch.mod)


def test_global_cache_relaxes_no_thread_loop_either():
    sch = Schedule(window_sum)
    block, _, i1 = split_bind(sch, "B", 128)
    cache = sch.cache_read(block, 0, "global")
    sch.compute_at(cache, i1)
    assert ("ax0", 3) in loops_of(sch.mod["main"])
    assert_same_numbers(window_sum, sch.mod)


def test_shared_cache_relaxes_vthread_and_threadidx_but_not_blockidx():
    sch = Schedule(window_sum)
    block = sch.get_block("B")
    (i,) = sch.get_loops(block)
    i0, i1, i2 = sch.split(i, [None, 2, 64])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "vthread.x")
    sch.bind(i2, "threadIdx.x")
    cache = sch.cache_read(block, 0, "shared")
    sch.compute_at(cache, i2)
    assert ("ax0", 130) in loops_of(sch.mod["main"])
    assert "v0 = T.axis.spatial(258, i_0 * 128 + ax0)" in sch.mod["main"].script()
    assert_same_numbers(window_sum, sch.mod)


def test_ragged_split_keeps_the_fetch_inside_the_buffer():
    sch = Schedule(window_sum_ragged)
    block, _, i1 = split_bind(sch, "B", 32)
    cache = sch.cache_read(block, 0, "shared")
    sch.compute_at(cache, i1)
    tir.assert_structural_equal(sch.mod["main"], window_sum_ragged_shared_compute_at)
    verify_trace_roundtrip(sch, window_sum_ragged)
    assert_same_numbers(window_sum_ragged, sch.mod)


# ---------------------------------------------------------------- compute_at


def test_compute_at_inner_loop_drops_unit_loops():
    sch = Schedule(two_stage)
    _, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), j)
    tir.assert_structural_equal(sch.mod["main"], two_stage_compute_at_j)
    verify_trace_roundtrip(sch, two_stage)
    assert_same_numbers(two_stage, sch.mod)


def test_compute_at_preserve_unit_loops():
    sch = Schedule(two_stage)
    _, j = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), j, preserve_unit_loops=True)
    tir.assert_structural_equal(sch.mod["main"], two_stage_compute_at_j_unit_loops)
    verify_trace_roundtrip(sch, two_stage)
    assert_same_numbers(two_stage, sch.mod)


def test_compute_at_solves_a_strided_offset_index():
    sch = Schedule(shifted_tiles)
    i_0, _ = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i_0)
    tir.assert_structural_equal(sch.mod["main"], shifted_tiles_compute_at)
    verify_trace_roundtrip(sch, shifted_tiles)
    assert_same_numbers(shifted_tiles, sch.mod)


def test_compute_at_reduction_block_covers_the_whole_reduction():
    sch = Schedule(row_sum)
    (i,) = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i)
    tir.assert_structural_equal(sch.mod["main"], row_sum_compute_at)
    verify_trace_roundtrip(sch, row_sum)
    assert_same_numbers(row_sum, sch.mod)


def test_compute_at_symbolic_extent_becomes_a_bound_and_a_predicate():
    sch = Schedule(prefix_sum)
    (i,) = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i)
    tir.assert_structural_equal(sch.mod["main"], prefix_sum_compute_at)
    verify_trace_roundtrip(sch, prefix_sum)
    assert_same_numbers(prefix_sum, sch.mod)


def test_compute_at_index_picks_the_position():
    sch = Schedule(side_by_side)
    (i,) = sch.get_loops(sch.get_block("C"))
    sch.compute_at(sch.get_block("B"), i, index=-2)
    tir.assert_structural_equal(sch.mod["main"], side_by_side_first_position)
    verify_trace_roundtrip(sch, side_by_side)
    assert_same_numbers(side_by_side, sch.mod)
    last = Schedule(side_by_side)
    (i,) = last.get_loops(last.get_block("C"))
    last.compute_at(last.get_block("B"), i)
    body = last.mod["main"].body.block.body.body
    assert [s.block.name for s in body.seq] == ["X", "B", "C"]


# ---------------------------------------------------------------- reverse_compute_at


def test_reverse_compute_at_outer_loop():
    sch = Schedule(two_stage)
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.reverse_compute_at(sch.get_block("C"), i)
    tir.assert_structural_equal(sch.mod["main"], two_stage_reverse_compute_at_i)
    verify_trace_roundtrip(sch, two_stage)
    assert_same_numbers(two_stage, sch.mod)


def test_matmul_local_blocking_seed_schedule():
    sch = Schedule(matmul)
    block_c = sch.get_block("C")
    c_local = sch.cache_write(block_c, 0, "local")
    i, j, k = sch.get_loops(block_c)
    i0, i1, i2 = sch.split(i, [None, 2, 4])
    j0, j1, j2 = sch.split(j, [None, 2, 4])
    k0, k1 = sch.split(k, [None, 4])
    sch.unroll(k1)
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(c_local, j1)
    sch.bind(i0, "blockIdx.x")
    sch.bind(j0, "blockIdx.y")
    sch.bind(i1, "threadIdx.x")
    sch.bind(j1, "threadIdx.y")
    tir.assert_structural_equal(sch.mod["main"], matmul_local_blocking)
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod, rtol=1e-4)


def test_matmul_shared_blocking_seed_schedule():
    sch = Schedule(matmul)
    block_c = sch.get_block("C")
    c_local = sch.cache_write(block_c, 0, "local")
    i, j, k = sch.get_loops(block_c)
    i0, i1, i2 = sch.split(i, [None, 2, 4])
    j0, j1, j2 = sch.split(j, [None, 2, 4])
    k0, k1 = sch.split(k, [None, 8])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    tx = sch.fuse(i1, j1)
    sch.reverse_compute_at(c_local, tx)
    sch.bind(i0, "blockIdx.x")
    sch.bind(j0, "blockIdx.y")
    sch.bind(tx, "threadIdx.x")
    fetch_extents = []
    for read_index in (0, 1):
        cache = sch.cache_read(block=block_c, read_buffer_index=read_index, storage_scope="shared")
        sch.compute_at(cache, k0)
        ax0, ax1 = sch.get_loops(cache)[-2:]
        fetch_extents.append((int(sch.get(ax0).extent), int(sch.get(ax1).extent)))
        fused = sch.fuse(ax0, ax1)
        _, threads, vec = sch.split(fused, [None, 4, 4])
        sch.bind(threads, "threadIdx.x")
        sch.vectorize(vec)
    # A tile: 2 * 4 rows of the thread block by 8 of k; B tile: 8 of k by 2 * 4 columns
    assert fetch_extents == [(8, 8), (8, 8)]
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod, rtol=1e-4)


# ---------------------------------------------------------------- refused requests


def test_compute_at_loop_not_around_the_consumer():
    sch = Schedule(two_consumers)
    (i,) = sch.get_loops(sch.get_block("C"))
    assert_fails_unchanged(
        sch,
        NotAncestorOfConsumerError,
        "is not an ancestor of consumer(s) D",
        sch.compute_at,
        sch.get_block("B"),
        i,
    )


def test_compute_at_loop_around_the_block_itself():
    sch = Schedule(two_stage)
    i, _ = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(
        sch, LoopAncestorError, "already encloses block B", sch.compute_at, sch.get_block("B"), i
    )


def test_compute_at_loop_of_another_scope():
    sch = Schedule(nested_scope)
    (j,) = sch.get_loops(sch.get_block("C"))
    assert_fails_unchanged(
        sch, NotInSameScopeError, "in the scope of block outer", sch.compute_at, sch.get_block("B"), j
    )


def test_compute_at_loop_inside_the_block_itself():
    sch = Schedule(nested_scope)
    (j,) = sch.get_loops(sch.get_block("C"))
    assert_fails_unchanged(
        sch, NotInSameScopeError, "inside block outer itself", sch.compute_at, sch.get_block("outer"), j
    )


def test_compute_at_output_block():
    sch = Schedule(two_stage)
    i, _ = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(sch, OutputBlockError, "writes C", sch.compute_at, sch.get_block("C"), i)


def test_compute_at_block_without_consumer():
    sch = Schedule(dead_store)
    (i,) = sch.get_loops(sch.get_block("C"))
    assert_fails_unchanged(
        sch, NoConsumerError, "block B has no consumer", sch.compute_at, sch.get_block("B"), i
    )


def test_compute_at_block_reading_what_it_writes():
    sch = Schedule(accumulate_in_place)
    (i,) = sch.get_loops(sch.get_block("C"))
    assert_fails_unchanged(
        sch,
        NotCompleteOrReductionBlockError,
        "reads a buffer it writes",
        sch.compute_at,
        sch.get_block("B"),
        i,
    )


def test_compute_at_buffer_with_two_writers():
    sch = Schedule(two_writers)
    (i,) = sch.get_loops(sch.get_block("C"))
    assert_fails_unchanged(
        sch,
        NotSingleWriterError,
        "written by B_first, B_second",
        sch.compute_at,
        sch.get_block("B_second"),
        i,
    )
    assert_fails_unchanged(
        sch,
        NotSingleWriterError,
        "TVM says: neither a local complete block",
        sch.compute_at,
        sch.get_block("B_first"),
        i,
    )


def test_compute_at_index_out_of_range():
    sch = Schedule(side_by_side)
    (i,) = sch.get_loops(sch.get_block("C"))
    err = assert_fails_unchanged(
        sch,
        InsertionPointError,
        "index 2 is not a valid position",
        sch.compute_at,
        sch.get_block("B"),
        i,
        index=2,
    )
    assert "0..1" in err.message


def test_compute_at_with_a_block_as_the_loop():
    sch = Schedule(two_stage)
    assert_fails_unchanged(
        sch, ArgumentError, "needs a loop", sch.compute_at, sch.get_block("B"), sch.get_block("C")
    )


def test_compute_at_flattened_index_is_not_solved():
    sch = Schedule(flattened_producer)
    (i,) = sch.get_loops(sch.get_block("C"))
    assert_fails_unchanged(sch, RegionPatternError, "is not a * v + b", sch.compute_at, sch.get_block("B"), i)


def test_compute_at_loop_of_another_function():
    sch = Schedule(TwoFunctions)
    block_b = sch.get_block("B", "main")
    (loop,) = sch.get_loops(sch.get_block("D", "other"))
    assert_fails_unchanged(sch, StaleHandleError, "block 'B'", sch.compute_at, block_b, loop)


def test_reverse_compute_at_loop_not_around_the_producer():
    sch = Schedule(two_consumers)
    (i,) = sch.get_loops(sch.get_block("C"))
    assert_fails_unchanged(
        sch,
        NotAncestorOfProducerError,
        "not an ancestor of producer(s) B",
        sch.reverse_compute_at,
        sch.get_block("D"),
        i,
    )


def test_reverse_compute_at_block_without_producer():
    sch = Schedule(two_stage)
    _, j = sch.get_loops(sch.get_block("C"))
    assert_fails_unchanged(
        sch, NoProducerError, "block B has no producer", sch.reverse_compute_at, sch.get_block("B"), j
    )


@T.prim_func
def mirrored(X: T.Buffer((8, 6), "float32"), Z: T.Buffer((6, 8), "float32")):
    Y = T.alloc_buffer((8, 6))
    for i, j in T.grid(8, 6):
        with T.block("mirror"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[7 - vi, 5 - vj] = X[vi, vj] * T.float32(3)
    for i, j in T.grid(6, 8):
        with T.block("transpose"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vj, vi] + T.float32(1)


@T.prim_func
def mirrored_at_row(X: T.Buffer((8, 6), "float32"), Z: T.Buffer((6, 8), "float32")):
    Y = T.alloc_buffer((8, 6))
    for i in range(6):
        for ax0 in range(8):
            with T.block("mirror"):
                vi = T.axis.spatial(8, ax0)
                vj = T.axis.spatial(6, 5 - i)
                Y[7 - vi, 5 - vj] = X[vi, vj] * T.float32(3)
        for j in range(8):
            with T.block("transpose"):
                vi, vj = T.axis.remap("SS", [i, j])
                Z[vi, vj] = Y[vj, vi] + T.float32(1)


def test_compute_at_solves_a_reversed_index():
    sch = Schedule(mirrored)
    i, _ = sch.get_loops(sch.get_block("transpose"))
    sch.compute_at(sch.get_block("mirror"), i)
    tir.assert_structural_equal(sch.mod["main"], mirrored_at_row)
    verify_trace_roundtrip(sch, mirrored)
    assert_same_numbers(mirrored, sch.mod)


@T.prim_func
def blur(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    C = T.alloc_buffer((32,))
    for i in range(32):
        with T.block("copy"):
            vi = T.axis.spatial(32, i)
            C[vi] = A[vi] * T.float32(2)
    for o, i in T.grid(4, 8):
        with T.block("blur"):
            vi = T.axis.spatial(32, o * 8 + i)
            B[vi] = T.if_then_else(vi >= 1, C[vi - 1], T.float32(0)) + C[vi]


def test_compute_at_writes_a_halo_bound_with_the_constant_moved_out():
    sch = Schedule(blur)
    o, _ = sch.get_loops(sch.get_block("blur"))
    sch.compute_at(sch.get_block("copy"), o)
    script = sch.mod.script()
    # the copy starts one element early: 0 <= o * 8 - 1 + ax0 is written 1 <= o * 8 + ax0, as TVM writes it
    assert "T.where(1 <= o * 8 + ax0)" in script, script
    verify_trace_roundtrip(sch, blur)
    assert_same_numbers(blur, sch.mod)


@T.prim_func
def digits_of_one_iterator(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((4, 2, 2))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi // 4, vi % 4 // 2, vi % 2] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi // 4, vi % 4 // 2, vi % 2] + T.float32(1)


def test_reverse_compute_at_through_a_middle_digit_of_an_iterator():
    """The consumer reads ``B[vi // 4, vi % 4 // 2, vi % 2]``: the first digit pins vi to the 4 instances
    of one iteration of ``io``; the middle and last digits wrap and pin nothing, and each iteration
    produces those two dimensions whole, so the cut is safe."""
    sch = Schedule(digits_of_one_iterator)
    (i,) = sch.get_loops(sch.get_block("B"))
    io, _ = sch.split(i, [4, 4])
    sch.reverse_compute_at(sch.get_block("C"), io)
    consumer_loops = sch.get_loops(sch.get_block("C"))
    assert [sch.get(lp).extent.value for lp in consumer_loops] == [4, 4]
    verify_trace_roundtrip(sch, digits_of_one_iterator)
    assert_same_numbers(digits_of_one_iterator, sch.mod)
