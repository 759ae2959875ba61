"""split, fuse and reorder: expected scripts, trace round trips, same numbers, and refused requests."""

from __future__ import annotations

import pytest

import tir
from schedule import Schedule, StaleHandleError
from schedule.analysis import WrongLoopKindError
from schedule.errors import ArgumentError
from schedule.loop_transformation import (
    AnnotatedLoopError,
    DependentLoopError,
    DuplicateLoopError,
    LoopNotStartingAtZeroError,
    LoopsNotAChainError,
    MixedReductionLoopError,
    NonPositiveFactorError,
    NotOnlyChildError,
    NotSingleInferFactorError,
    OpaqueIterTypeError,
    WrongFactorProductError,
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
def vector_add_split(
    A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"), C: T.Buffer((1024,), "float32")
):
    for i_0, i_1 in T.grid(8, 128):
        with T.block("C"):
            vi = T.axis.spatial(1024, i_0 * 128 + i_1)
            C[vi] = A[vi] + B[vi]


@T.prim_func
def vector_add_split_unit_dropped(
    A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"), C: T.Buffer((1024,), "float32")
):
    for i_0, i_1 in T.grid(1, 1024):  # noqa: B007 (the unit loop stays, unused)
        with T.block("C"):
            vi = T.axis.spatial(1024, i_1)
            C[vi] = A[vi] + B[vi]


@T.prim_func
def vector_add_split_unit_kept(
    A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"), C: T.Buffer((1024,), "float32")
):
    for i_0, i_1 in T.grid(1, 1024):
        with T.block("C"):
            vi = T.axis.spatial(1024, i_0 * 1024 + i_1)
            C[vi] = A[vi] + B[vi]


@T.prim_func
def scale(A: T.Buffer((1000,), "float32"), B: T.Buffer((1000,), "float32")):
    for i in range(1000):
        with T.block("B"):
            vi = T.axis.spatial(1000, i)
            B[vi] = A[vi] * T.float32(3)


@T.prim_func
def scale_split_predicate(A: T.Buffer((1000,), "float32"), B: T.Buffer((1000,), "float32")):
    for i_0, i_1 in T.grid(8, 128):
        with T.block("B"):
            vi = T.axis.spatial(1000, i_0 * 128 + i_1)
            T.where(i_0 * 128 + i_1 < 1000)
            B[vi] = A[vi] * T.float32(3)


@T.prim_func
def scale_split_three_predicate(A: T.Buffer((1000,), "float32"), B: T.Buffer((1000,), "float32")):
    for i_0, i_1, i_2 in T.grid(3, 7, 50):
        with T.block("B"):
            vi = T.axis.spatial(1000, i_0 * 350 + i_1 * 50 + i_2)
            T.where((i_0 * 7 + i_1) * 50 + i_2 < 1000)
            B[vi] = A[vi] * T.float32(3)


@T.prim_func
def scale_split_twice_predicate(A: T.Buffer((1000,), "float32"), B: T.Buffer((1000,), "float32")):
    for i_0, i_1_0, i_1_1 in T.grid(8, 43, 3):
        with T.block("B"):
            vi = T.axis.spatial(1000, i_0 * 128 + i_1_0 * 3 + i_1_1)
            T.where(i_0 * 128 + i_1_0 * 3 + i_1_1 < 1000 and i_1_0 * 3 + i_1_1 < 128)
            B[vi] = A[vi] * T.float32(3)


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
def matmul_split_reorder(
    A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")
):
    for i_0, j_0, k_0, i_1, j_1, k_1 in T.grid(4, 4, 8, 8, 8, 4):
        with T.block("C"):
            vi = T.axis.spatial(32, i_0 * 8 + i_1)
            vj = T.axis.spatial(32, j_0 * 8 + j_1)
            vk = T.axis.reduce(32, k_0 * 4 + k_1)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_fuse(
    A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")
):
    for i_j_fused, k in T.grid(1024, 32):
        with T.block("C"):
            vi = T.axis.spatial(32, i_j_fused // 32)
            vj = T.axis.spatial(32, i_j_fused % 32)
            vk = T.axis.reduce(32, k)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_fuse_three(
    A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")
):
    for i_j_k_fused in range(32768):
        with T.block("C"):
            vi = T.axis.spatial(32, i_j_k_fused // 1024)
            vj = T.axis.spatial(32, i_j_k_fused % 1024 // 32)
            vk = T.axis.reduce(32, i_j_k_fused % 32)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_fuse_split(
    A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")
):
    for i_j_fused_0, i_j_fused_1, k in T.grid(32, 32, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i_j_fused_0, i_j_fused_1, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_reorder_ends(
    A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")
):
    for k, j, i in T.grid(32, 32, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def two_blocks(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i in range(16):
        for j in range(16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def two_blocks_split(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i_0, i_1 in T.grid(3, 6):
        for j in range(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i_0 * 6 + i_1)
                vj = T.axis.spatial(16, j)
                T.where(i_0 * 6 + i_1 < 16)
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i_0 * 6 + i_1)
                vj = T.axis.spatial(16, j)
                T.where(i_0 * 6 + i_1 < 16)
                C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def shifted_loop(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(2, 66):
        with T.block("B"):
            vi = T.axis.spatial(64, i - 2)
            B[vi] = A[vi]


@T.prim_func
def dynamic_length(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi]


@T.prim_func
def annotated_loop(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in T.serial(64, annotations={"pragma_unroll_explicit": 1}):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = A[vi]


@T.prim_func
def triangle(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i in range(16):
        for j in range(i + 1):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(16, j)
                B[vi, vj] = A[vi, vj]


@T.prim_func
def opaque_iter(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.opaque(16, j)
            B[vi, vj] = A[vi, vj]


@T.prim_func
def prefix_sum_scan(A: T.Buffer((4, 12), "float32"), B: T.Buffer((4, 12), "float32")):
    for r, c in T.grid(4, 12):
        with T.block("B"):
            vr = T.axis.spatial(4, r)
            vc = T.axis.scan(12, c)
            B[vr, vc] = A[vr, vc] + T.if_then_else(vc > 0, B[vr, vc - 1], T.float32(0))


def _loops(sch: Schedule, block: str):
    return sch.get_loops(sch.get_block(block))


# ---------------------------------------------------------------- split


def test_split_inferred_factor():
    sch = Schedule(vector_add)
    (i,) = _loops(sch, "C")
    i_0, i_1 = sch.split(i, [None, 128])
    tir.assert_structural_equal(sch.mod["main"], vector_add_split)
    assert [sch.get(loop).loop_var.name for loop in (i_0, i_1)] == ["i_0", "i_1"]
    verify_trace_roundtrip(sch, vector_add)
    assert_same_numbers(vector_add, sch.mod)


def test_split_given_factors_that_divide_add_no_predicate():
    sch = Schedule(vector_add)
    (i,) = _loops(sch, "C")
    sch.split(i, [8, 128])
    tir.assert_structural_equal(sch.mod["main"], vector_add_split)
    verify_trace_roundtrip(sch, vector_add)


def test_split_trace_prints_the_call():
    sch = Schedule(vector_add)
    (i,) = _loops(sch, "C")
    sch.split(i, [None, 128])
    assert (
        "l2, l3 = sch.split(loop=l1, factors=[None, 128], preserve_unit_iters=True)" in sch.trace.as_python()
    )


def test_split_non_dividing_factor_adds_predicate():
    sch = Schedule(scale)
    (i,) = _loops(sch, "B")
    sch.split(i, [None, 128])
    tir.assert_structural_equal(sch.mod["main"], scale_split_predicate)
    verify_trace_roundtrip(sch, scale)
    assert_same_numbers(scale, sch.mod)


def test_split_over_covering_given_factors_add_predicate():
    sch = Schedule(scale)
    (i,) = _loops(sch, "B")
    sch.split(i, [3, 7, 50])
    tir.assert_structural_equal(sch.mod["main"], scale_split_three_predicate)
    verify_trace_roundtrip(sch, scale)
    assert_same_numbers(scale, sch.mod)


def test_split_of_split_conjoins_predicates():
    sch = Schedule(scale)
    (i,) = _loops(sch, "B")
    _, i_1 = sch.split(i, [None, 128])
    sch.split(i_1, [None, 3])
    tir.assert_structural_equal(sch.mod["main"], scale_split_twice_predicate)
    verify_trace_roundtrip(sch, scale)
    assert_same_numbers(scale, sch.mod)


def test_split_rebinds_every_block_under_the_loop():
    sch = Schedule(two_blocks)
    i = _loops(sch, "B")[0]
    sch.split(i, [None, 6])
    tir.assert_structural_equal(sch.mod["main"], two_blocks_split)
    verify_trace_roundtrip(sch, two_blocks)
    assert_same_numbers(two_blocks, sch.mod)


@pytest.mark.parametrize(
    "preserve, expected", [(True, vector_add_split_unit_kept), (False, vector_add_split_unit_dropped)]
)
def test_split_unit_factor_and_preserve_unit_iters(preserve, expected):
    sch = Schedule(vector_add)
    (i,) = _loops(sch, "C")
    sch.split(i, [1, None], preserve_unit_iters=preserve)
    tir.assert_structural_equal(sch.mod["main"], expected)
    verify_trace_roundtrip(sch, vector_add)
    assert_same_numbers(vector_add, sch.mod)


def test_split_by_sampled_tiles_replays_from_the_trace():
    sch = Schedule(vector_add, seed=3)
    (i,) = _loops(sch, "C")
    tiles = sch.sample_perfect_tile(i, n=2, max_innermost_factor=128, decision=[8, 128])
    sch.split(i, tiles)
    tir.assert_structural_equal(sch.mod["main"], vector_add_split)
    assert "sch.split(loop=l1, factors=[v2, v3], preserve_unit_iters=True)" in sch.trace.as_python()
    verify_trace_roundtrip(sch, vector_add)


def test_split_accepts_numpy_integers_and_records_ints():
    np = pytest.importorskip("numpy")
    sch = Schedule(vector_add)
    (i,) = _loops(sch, "C")
    sch.split(i, [None, np.int64(128)])
    tir.assert_structural_equal(sch.mod["main"], vector_add_split)
    assert sch.trace.as_json()["insts"][-1]["args"]["factors"] == [None, 128]


def test_split_old_handle_is_stale_and_names_split():
    sch = Schedule(vector_add)
    (i,) = _loops(sch, "C")
    sch.split(i, [None, 128])
    err = assert_fails_unchanged(sch, StaleHandleError, "split removed", sch.split, i, [None, 4])
    assert "loop i" in str(err)


# ---------------------------------------------------------------- fuse


def test_fuse_two_loops():
    sch = Schedule(matmul)
    i, j, _ = _loops(sch, "C")
    fused = sch.fuse(i, j)
    assert sch.get(fused).loop_var.name == "i_j_fused"
    tir.assert_structural_equal(sch.mod["main"], matmul_fuse)
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod, rtol=1e-4)


def test_fuse_three_loops_including_the_reduction():
    sch = Schedule(matmul)
    sch.fuse(*_loops(sch, "C"))
    tir.assert_structural_equal(sch.mod["main"], matmul_fuse_three)
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod, rtol=1e-4)


def test_fuse_then_split_round_trip_gives_the_original_bindings():
    sch = Schedule(matmul)
    i, j, _ = _loops(sch, "C")
    sch.split(sch.fuse(i, j), [None, 32])
    tir.assert_structural_equal(sch.mod["main"], matmul_fuse_split)
    tir.assert_structural_equal(sch.mod["main"], matmul)
    verify_trace_roundtrip(sch, matmul)
    assert "l4 = sch.fuse(l1, l2, preserve_unit_iters=True)" in sch.trace.as_python()


# ---------------------------------------------------------------- reorder


def test_split_and_reorder_matmul_tiles():
    sch = Schedule(matmul)
    i, j, k = _loops(sch, "C")
    i_0, i_1 = sch.split(i, [None, 8])
    j_0, j_1 = sch.split(j, [None, 8])
    k_0, k_1 = sch.split(k, [None, 4])
    sch.reorder(i_0, j_0, k_0, i_1, j_1, k_1)
    tir.assert_structural_equal(sch.mod["main"], matmul_split_reorder)
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod, rtol=1e-4)


def test_reorder_leaves_loops_not_given_in_place():
    sch = Schedule(matmul)
    i, j, k = _loops(sch, "C")
    sch.reorder(k, i)
    tir.assert_structural_equal(sch.mod["main"], matmul_reorder_ends)
    assert [sch.get(loop).loop_var.name for loop in (i, j, k)] == ["i", "j", "k"]  # handles survive
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod, rtol=1e-4)


def test_reorder_of_one_loop_changes_nothing():
    sch = Schedule(matmul)
    i, _, _ = _loops(sch, "C")
    sch.reorder(i)
    tir.assert_structural_equal(sch.mod["main"], matmul)
    verify_trace_roundtrip(sch, matmul)


# ---------------------------------------------------------------- refused: split


@pytest.mark.parametrize(
    "factors, error, phrase",
    [
        ([0, None], NonPositiveFactorError, "position 0 is 0"),
        ([None, -4], NonPositiveFactorError, "position 1 is -4"),
        ([None, None], NotSingleInferFactorError, "only one factor can be None"),
        ([3, 5], WrongFactorProductError, "multiply to 15"),
        ([None, 2.5], ArgumentError, "position 1 is 2.5"),
        ([None, True], ArgumentError, "position 1 is True"),
        ([], ArgumentError, "non-empty list"),
    ],
)
def test_split_refuses_bad_factors(factors, error, phrase):
    sch = Schedule(vector_add)
    (i,) = _loops(sch, "C")
    assert_fails_unchanged(sch, error, phrase, sch.split, i, factors)


def test_split_refuses_a_thread_bound_loop():
    sch = Schedule(vector_add)
    (i,) = _loops(sch, "C")
    sch.bind(i, "threadIdx.x")
    assert_fails_unchanged(sch, WrongLoopKindError, "bound to threadIdx.x", sch.split, i, [None, 4])


def test_split_refuses_a_loop_not_starting_at_zero():
    sch = Schedule(shifted_loop)
    (i,) = _loops(sch, "B")
    assert_fails_unchanged(sch, LoopNotStartingAtZeroError, "starts at 2", sch.split, i, [None, 4])


def test_split_of_a_dynamic_extent_infers_a_ceiling_and_guards():
    sch = Schedule(dynamic_length)
    (i,) = _loops(sch, "B")
    outer, inner = sch.split(i, [None, 4])
    assert "for i_0, i_1 in T.grid((n + 3) // 4, 4):" in sch.mod.script()
    assert "T.where(i_0 * 4 + i_1 < n)" in sch.mod.script()
    verify_trace_roundtrip(sch, dynamic_length)


def test_split_refuses_an_annotated_loop():
    sch = Schedule(annotated_loop)
    (i,) = _loops(sch, "B")
    assert_fails_unchanged(sch, AnnotatedLoopError, "pragma_unroll_explicit", sch.split, i, [None, 4])


def test_split_refuses_a_block_handle():
    sch = Schedule(vector_add)
    block = sch.get_block("C")
    assert_fails_unchanged(sch, ArgumentError, "needs a loop handle", sch.split, block, [None, 4])


# ---------------------------------------------------------------- refused: fuse


def test_fuse_refuses_a_loop_with_two_children():
    sch = Schedule(two_blocks)
    i, j = _loops(sch, "B")
    assert_fails_unchanged(sch, NotOnlyChildError, "other statements", sch.fuse, i, j)


def test_fuse_refuses_loops_given_inner_first():
    sch = Schedule(matmul)
    i, j, _ = _loops(sch, "C")
    assert_fails_unchanged(sch, LoopsNotAChainError, "not directly inside", sch.fuse, j, i)


def test_fuse_refuses_loops_that_are_not_adjacent():
    sch = Schedule(matmul)
    i, _, k = _loops(sch, "C")
    assert_fails_unchanged(sch, LoopsNotAChainError, "not directly inside", sch.fuse, i, k)


def test_fuse_refuses_a_loop_given_twice():
    sch = Schedule(matmul)
    i, _, _ = _loops(sch, "C")
    assert_fails_unchanged(sch, DuplicateLoopError, "more than once", sch.fuse, i, i)


def test_fuse_refuses_a_dependent_extent():
    sch = Schedule(triangle)
    i, j = _loops(sch, "B")
    assert_fails_unchanged(sch, DependentLoopError, "depends on loop i", sch.fuse, i, j)


def test_fuse_refuses_a_vectorized_loop():
    sch = Schedule(vector_add)
    (i,) = _loops(sch, "C")
    i_0, i_1 = sch.split(i, [None, 4])
    sch.vectorize(i_1)
    assert_fails_unchanged(sch, WrongLoopKindError, "is vectorized", sch.fuse, i_0, i_1)


def test_fuse_refuses_a_parallel_loop():
    sch = Schedule(matmul)
    i, j, _ = _loops(sch, "C")
    sch.parallel(i)
    assert_fails_unchanged(sch, WrongLoopKindError, "is parallel", sch.fuse, i, j)


def test_fuse_refuses_no_loops():
    sch = Schedule(matmul)
    assert_fails_unchanged(sch, ArgumentError, "at least one loop", sch.fuse)


# ---------------------------------------------------------------- refused: reorder


def test_reorder_refuses_a_loop_given_twice():
    sch = Schedule(matmul)
    i, j, _ = _loops(sch, "C")
    assert_fails_unchanged(sch, DuplicateLoopError, "loop i is given more than once", sch.reorder, i, j, i)


def test_reorder_refuses_loops_of_different_nests():
    sch = Schedule(two_blocks)
    _, j_b = _loops(sch, "B")
    _, j_c = _loops(sch, "C")
    assert_fails_unchanged(sch, LoopsNotAChainError, "not nested one in the other", sch.reorder, j_c, j_b)


def test_reorder_refuses_a_branching_nest():
    sch = Schedule(two_blocks)
    i, j = _loops(sch, "C")
    assert_fails_unchanged(sch, LoopsNotAChainError, "loop i has other statements", sch.reorder, j, i)


def test_reorder_refuses_moving_a_loop_inside_one_that_depends_on_it():
    sch = Schedule(triangle)
    i, j = _loops(sch, "B")
    assert_fails_unchanged(sch, DependentLoopError, "depends on loop i", sch.reorder, j, i)


def test_reorder_refuses_an_opaque_iterator():
    sch = Schedule(opaque_iter)
    i, j = _loops(sch, "B")
    assert_fails_unchanged(sch, OpaqueIterTypeError, "opaque", sch.reorder, j, i)


def test_reorder_refuses_a_scan_iterator_whose_steps_read_earlier_ones():
    sch = Schedule(prefix_sum_scan)
    r, c = _loops(sch, "B")
    assert_fails_unchanged(sch, OpaqueIterTypeError, "is a scan", sch.reorder, c, r)


def test_split_with_disable_predication_adds_no_predicate_and_records_the_option():
    sch = Schedule(scale)
    (i,) = _loops(sch, "B")
    sch.split(i, [None, 128], disable_predication=True)
    assert "T.where" not in sch.mod["main"].script()
    assert "disable_predication=True" in sch.trace.as_python()
    verify_trace_roundtrip(sch, scale)


# fmt: off
@T.prim_func
def row_sums(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 16):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
# fmt: on


def test_reorder_refuses_a_fused_row_and_reduction_loop_of_a_block_with_an_init():
    """Found by the random-schedule test: fuse(i, k), split by 3, swap the halves. Row 1's first
    instance (k = 0) then comes after k = 2, 5, ... and its init wiped their sums."""
    sch = Schedule(row_sums)
    block = sch.get_block("B")
    outer, inner = sch.split(sch.fuse(*sch.get_loops(block)), [None, 3])
    assert_fails_unchanged(
        sch, MixedReductionLoopError, "drives both spatial and reduction iterators", sch.reorder, inner, outer
    )
    sch.decompose_reduction(block, outer)  # without the init in the block, the order is free
    outer, inner = sch.get_loops(block)
    sch.reorder(inner, outer)
    assert_same_numbers(row_sums, sch.mod)


def test_reorder_of_split_reduction_loops_keeps_the_init_first():
    sch = Schedule(row_sums)
    block = sch.get_block("B")
    _, k = sch.get_loops(block)
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(k1, k0)
    assert_same_numbers(row_sums, sch.mod)
