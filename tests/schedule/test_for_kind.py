"""bind, parallel, vectorize, unroll: expected scripts, trace round trips, same numbers, refused requests."""

from __future__ import annotations

import pytest

import tir
from schedule import Schedule
from schedule.analysis import NonConstantExtentError, WrongLoopKindError
from schedule.errors import ArgumentError
from schedule.for_kind import (
    BindReductionError,
    NonUnitStrideVectorizeError,
    ParallelReductionError,
    ThreadTagConflictError,
    UnknownThreadTagError,
    VectorizeReductionError,
    WrongBlockIterTypeError,
)
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip

# ---------------------------------------------------------------- workloads


@T.prim_func
def vector_add(
    A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"), C: T.Buffer((1024,), "float32")
):
    for i in range(1024):
        with T.block("C"):
            vi = T.axis.spatial(1024, i)
            C[vi] = A[vi] + B[vi]


@T.prim_func
def vector_add_split_bind(
    A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"), C: T.Buffer((1024,), "float32")
):
    for i_0 in T.thread_binding(8, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("C"):
                vi = T.axis.spatial(1024, i_0 * 128 + i_1)
                T.reads(A[vi], B[vi])
                T.writes(C[vi])
                C[vi] = A[vi] + B[vi]


@T.prim_func
def vector_add_parallel_vectorize(
    A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"), C: T.Buffer((1024,), "float32")
):
    for i_0 in T.parallel(256):
        for i_1 in T.vectorized(4):
            with T.block("C"):
                vi = T.axis.spatial(1024, i_0 * 4 + i_1)
                C[vi] = A[vi] + B[vi]


@T.prim_func
def matmul(
    A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")
):
    for i, j, k in T.grid(32, 32, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_kinds(
    A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")
):
    for i in T.thread_binding(32, thread="blockIdx.x"):
        for j in T.thread_binding(32, thread="threadIdx.x"):
            for k in T.unroll(32):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def copy_2d(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]


@T.prim_func
def copy_2d_cooperative(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i_j_fused_0 in range(4):
        for i_j_fused_1 in T.thread_binding(16, thread="threadIdx.x"):
            for i_j_fused_2 in T.vectorized(4):
                with T.block("B"):
                    vi = T.axis.spatial(16, i_j_fused_0 * 4 + i_j_fused_1 // 4)
                    vj = T.axis.spatial(16, i_j_fused_1 % 4 * 4 + i_j_fused_2)
                    B[vi, vj] = A[vi, vj]


@T.prim_func
def window_sum_cached(A: T.Buffer((66,), "float32"), B: T.Buffer((64,), "float32")):
    A_cache = T.alloc_buffer((66,), "float32")
    for i_0 in T.thread_binding(2, thread="blockIdx.x"):
        for i_1 in T.thread_binding(32, thread="threadIdx.x"):
            for ax0 in range(34):
                with T.block("A_cache"):
                    v0 = T.axis.spatial(66, i_0 * 32 + ax0)
                    A_cache[v0] = A[v0]
            with T.block("B"):
                vi = T.axis.spatial(64, i_0 * 32 + i_1)
                B[vi] = A_cache[vi] + A_cache[vi + 1] + A_cache[vi + 2]


@T.prim_func
def window_sum_cooperative(A: T.Buffer((66,), "float32"), B: T.Buffer((64,), "float32")):
    A_cache = T.alloc_buffer((66,), "float32")
    for i_0 in T.thread_binding(2, thread="blockIdx.x"):
        for i_1 in T.thread_binding(32, thread="threadIdx.x"):
            for ax0_0 in range(2):
                for ax0_1 in T.thread_binding(32, thread="threadIdx.x"):
                    with T.block("A_cache"):
                        v0 = T.axis.spatial(66, i_0 * 32 + ax0_0 * 32 + ax0_1)
                        T.where(ax0_0 * 32 + ax0_1 < 34)
                        A_cache[v0] = A[v0]
            with T.block("B"):
                vi = T.axis.spatial(64, i_0 * 32 + i_1)
                B[vi] = A_cache[vi] + A_cache[vi + 1] + A_cache[vi + 2]


@T.prim_func
def transpose(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vj, vi] = A[vi, vj]


@T.prim_func
def strided_store(A: T.Buffer((16,), "float32"), B: T.Buffer((32,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi * 2] = A[vi]


@T.prim_func
def broadcast_store(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i, j in T.grid(16, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.spatial(4, j)  # noqa: F841 (the block iterates j without using it)
            B[vi] = A[vi] + T.float32(1)


@T.prim_func
def dynamic_length(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi]


@T.prim_func
def matmul_cross_thread(
    A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")
):
    for i in T.thread_binding(32, thread="blockIdx.x"):
        for j in range(32):
            for k in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def _loops(sch: Schedule, block: str):
    return sch.get_loops(sch.get_block(block))


# ---------------------------------------------------------------- legal


def test_seed_vector_add_split_and_bind():
    sch = Schedule(vector_add)
    block_C = sch.get_block("C", "main")
    (i,) = sch.get_loops(block_C)
    i0, i1 = sch.split(i, [None, 128])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    tir.assert_structural_equal(sch.mod["main"], vector_add_split_bind)
    script = sch.mod["main"].script()
    assert 'for i_0 in T.thread_binding(8, thread="blockIdx.x"):' in script
    assert 'for i_1 in T.thread_binding(128, thread="threadIdx.x"):' in script
    verify_trace_roundtrip(sch, vector_add)
    assert "sch.bind(loop=l2, thread_axis='blockIdx.x')" in sch.trace.as_python()
    assert_same_numbers(vector_add, sch.mod)


def test_parallel_and_vectorize_after_split():
    sch = Schedule(vector_add)
    (i,) = _loops(sch, "C")
    i_0, i_1 = sch.split(i, [None, 4])
    sch.parallel(i_0)
    sch.vectorize(i_1)
    tir.assert_structural_equal(sch.mod["main"], vector_add_parallel_vectorize)
    verify_trace_roundtrip(sch, vector_add)
    assert_same_numbers(vector_add, sch.mod)


def test_bind_spatial_loops_and_unroll_the_reduction():
    sch = Schedule(matmul)
    i, j, k = _loops(sch, "C")
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")
    sch.unroll(k)
    tir.assert_structural_equal(sch.mod["main"], matmul_kinds)
    assert [sch.get(loop).kind for loop in (i, j, k)] == [
        tir.ForKind.THREAD_BINDING,
        tir.ForKind.THREAD_BINDING,
        tir.ForKind.UNROLLED,
    ]
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod, rtol=1e-4)


def test_cooperative_fetch_vectorizes_the_fused_inner_lanes():
    sch = Schedule(copy_2d)
    i, j = _loops(sch, "B")
    _, tx, vec = sch.split(sch.fuse(i, j), [None, 16, 4])
    sch.bind(tx, "threadIdx.x")
    sch.vectorize(vec)
    tir.assert_structural_equal(sch.mod["main"], copy_2d_cooperative)
    verify_trace_roundtrip(sch, copy_2d)
    assert_same_numbers(copy_2d, sch.mod)


def test_a_fetch_inside_a_thread_loop_may_reuse_its_axis():
    sch = Schedule(window_sum_cached)
    _, ax0_1 = sch.split(_loops(sch, "A_cache")[-1], [None, 32])
    sch.bind(ax0_1, "threadIdx.x")
    tir.assert_structural_equal(sch.mod["main"], window_sum_cooperative)
    verify_trace_roundtrip(sch, window_sum_cached)
    assert_same_numbers(window_sum_cached, sch.mod)


def test_sibling_loops_may_share_a_thread_axis():
    sch = Schedule(copy_2d)
    i, j = _loops(sch, "B")
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")
    assert sch.get(j).thread_tag == "threadIdx.x"
    verify_trace_roundtrip(sch, copy_2d)


# ---------------------------------------------------------------- refused


def test_bind_refuses_an_unknown_thread_axis_and_lists_the_known_ones():
    sch = Schedule(vector_add)
    (i,) = _loops(sch, "C")
    err = assert_fails_unchanged(sch, UnknownThreadTagError, "threadIdx.w", sch.bind, i, "threadIdx.w")
    assert "blockIdx.x" in str(err) and "vthread.z" in str(err)


def test_bind_refuses_a_thread_axis_that_is_not_a_string():
    sch = Schedule(vector_add)
    (i,) = _loops(sch, "C")
    assert_fails_unchanged(sch, UnknownThreadTagError, "unknown thread axis 0", sch.bind, i, 0)


def test_bind_a_reduction_loop_to_threadidx_is_a_cross_thread_reduction():
    sch = Schedule(matmul)
    i, _, k = _loops(sch, "C")
    sch.bind(i, "blockIdx.x")
    sch.bind(k, "threadIdx.x")
    tir.assert_structural_equal(sch.mod["main"], matmul_cross_thread)
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod["main"], rtol=1e-4)


@pytest.mark.parametrize("axis", ["blockIdx.x", "vthread.x", "vthread"])
def test_bind_refuses_a_reduction_loop_on_blocks_and_vthreads(axis):
    sch = Schedule(matmul)
    _, _, k = _loops(sch, "C")
    err = assert_fails_unchanged(sch, BindReductionError, "reduction iterator vk", sch.bind, k, axis)
    assert isinstance(err, WrongBlockIterTypeError)
    assert "Only threadIdx.x/y/z can carry a reduction" in str(err)


def test_bind_of_a_bound_loop_replaces_its_axis():
    # As TVM: binding again moves the loop to the new axis.
    sch = Schedule(vector_add)
    (i,) = _loops(sch, "C")
    sch.bind(i, "blockIdx.x")
    sch.bind(i, "threadIdx.x")
    assert sch.get(i).thread_tag == "threadIdx.x"
    assert_same_numbers(vector_add, sch.mod)
    verify_trace_roundtrip(sch, vector_add)


def test_bind_refuses_a_parallel_loop():
    sch = Schedule(vector_add)
    (i,) = _loops(sch, "C")
    sch.parallel(i)
    assert_fails_unchanged(sch, WrongLoopKindError, "it is parallel", sch.bind, i, "threadIdx.x")


def test_bind_refuses_the_same_axis_on_nested_loops_that_both_index_the_block():
    sch = Schedule(copy_2d)
    i, j = _loops(sch, "B")
    sch.bind(i, "threadIdx.x")
    assert_fails_unchanged(sch, ThreadTagConflictError, "depends on loop i", sch.bind, j, "threadIdx.x")


def test_bind_takes_a_dynamic_extent_as_tvm_does():
    # The launch size is read at call time (tests/codegen/test_dynamic_shapes_gpu.py).
    sch = Schedule(dynamic_length)
    (i,) = _loops(sch, "B")
    sch.bind(i, "blockIdx.x")
    assert sch.get(i).thread_tag == "blockIdx.x"


def test_parallel_refuses_a_reduction_loop():
    sch = Schedule(matmul)
    _, _, k = _loops(sch, "C")
    assert_fails_unchanged(sch, ParallelReductionError, "in block 'C'", sch.parallel, k)


def test_parallel_refuses_a_vectorized_loop():
    sch = Schedule(copy_2d)
    _, j = _loops(sch, "B")
    sch.vectorize(j)
    assert_fails_unchanged(sch, WrongLoopKindError, "it is vectorized", sch.parallel, j)


def test_vectorize_refuses_a_reduction_loop():
    sch = Schedule(matmul)
    _, _, k = _loops(sch, "C")
    assert_fails_unchanged(sch, VectorizeReductionError, "reduction iterator vk", sch.vectorize, k)


def test_vectorize_refuses_a_loop_that_moves_an_outer_axis():
    sch = Schedule(copy_2d)
    i, _ = _loops(sch, "B")
    assert_fails_unchanged(sch, NonUnitStrideVectorizeError, "axis 0", sch.vectorize, i)


def test_vectorize_refuses_a_transposed_store():
    sch = Schedule(transpose)
    _, j = _loops(sch, "B")
    assert_fails_unchanged(
        sch, NonUnitStrideVectorizeError, "store to B moves along axis 0", sch.vectorize, j
    )


def test_vectorize_refuses_a_stride_two_store():
    sch = Schedule(strided_store)
    (i,) = _loops(sch, "B")
    assert_fails_unchanged(sch, NonUnitStrideVectorizeError, "does not advance by 1", sch.vectorize, i)


def test_vectorize_refuses_lanes_that_write_one_element():
    sch = Schedule(broadcast_store)
    _, j = _loops(sch, "B")
    assert_fails_unchanged(sch, NonUnitStrideVectorizeError, "same element of B", sch.vectorize, j)


def test_vectorize_refuses_a_dynamic_extent():
    sch = Schedule(dynamic_length)
    (i,) = _loops(sch, "B")
    assert_fails_unchanged(sch, NonConstantExtentError, "not a constant", sch.vectorize, i)


def test_unroll_of_a_bound_loop_drops_the_binding():
    sch = Schedule(vector_add)
    (i,) = _loops(sch, "C")
    sch.bind(i, "threadIdx.x")
    sch.unroll(i)
    assert sch.get(i).kind is tir.ForKind.UNROLLED and sch.get(i).thread_tag is None
    assert_same_numbers(vector_add, sch.mod)
    verify_trace_roundtrip(sch, vector_add)


@pytest.mark.parametrize("method", ["parallel", "vectorize", "unroll"])
def test_loop_kinds_refuse_a_block_handle(method):
    sch = Schedule(vector_add)
    block = sch.get_block("C")
    assert_fails_unchanged(sch, ArgumentError, "needs a loop handle", getattr(sch, method), block)


def test_vectorize_accepts_any_loop_of_extent_one():
    """One lane is a plain iteration (TVM accepts it too): a tiling whose vector level is 1 replays,
    on a spatial loop that moves an outer axis and on a reduction loop alike."""
    sch = Schedule(matmul)
    i, j, k = _loops(sch, "C")
    _, i_1 = sch.split(i, [None, 1])
    _, k_1 = sch.split(k, [None, 1])
    sch.vectorize(i_1)
    sch.vectorize(k_1)
    assert sch.get(i_1).kind is sch.get(k_1).kind is tir.ForKind.VECTORIZED
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod, rtol=1e-4)
