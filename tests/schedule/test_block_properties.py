"""The block properties TVM requires (affine bindings, compact data flow, stage pipelines, reduction
blocks): the requests TVM refuses are refused here too, unchanged and rendered, with TVM's phrase;
the neighbouring requests TVM accepts still apply and compute the same numbers."""

from __future__ import annotations

import tir
from schedule import Schedule
from schedule.block_properties import NotAffineBindingError, NotCompactDataFlowError, NotStagePipelineError
from schedule.reduction import BlockPredicateError, NotReductionBlockError
from tests.fixtures.programs import matmul
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip

# ---------------------------------------------------------------- workloads


@T.prim_func
def row_sum_squared_index(A: T.Buffer((32, 64), "float32"), B: T.Buffer((32,), "float32")):
    # k * k // 2 visits 0 twice and skips most columns: not an affine binding.
    for i, k in T.grid(32, 10):
        with T.block("B"):
            vi = T.axis.spatial(32, i)
            vk = T.axis.reduce(64, T.floordiv(k * k, 2))
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def column_sum_indexed_by_reduction(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    # Every row adds into all of B: the rows race if they run at once.
    for i, k in T.grid(16, 16):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vk] = T.float32(0)
            B[vk] = B[vk] + A[vi, vk]


@T.prim_func
def prefix_sum(A: T.Buffer((24,), "float32")):
    for i in range(23):
        with T.block("scan"):
            A[i + 1] = A[i + 1] + A[i]


@T.prim_func
def strided_copy(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4, 64), "float32")):
    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            vj = T.axis.spatial(64, j * 8)
            B[vi, vj] = A[vi, vj] * T.float32(3)


@T.prim_func
def squared_row(A: T.Buffer((12, 5), "float32"), B: T.Buffer((12, 5), "float32")):
    for a, b, c in T.grid(3, 4, 5):
        with T.block("B"):
            vi = T.axis.spatial(12, a * a + b)
            vj = T.axis.spatial(5, c)
            B[vi, vj] = A[vi, vj] + T.float32(1)


@T.prim_func
def squared_row_inner_reordered(A: T.Buffer((12, 5), "float32"), B: T.Buffer((12, 5), "float32")):
    for a, c, b in T.grid(3, 5, 4):
        with T.block("B"):
            vi = T.axis.spatial(12, a * a + b)
            vj = T.axis.spatial(5, c)
            B[vi, vj] = A[vi, vj] + T.float32(1)


@T.prim_func
def overlapping_rows(A: T.Buffer((10, 3), "float32"), B: T.Buffer((10, 3), "float32")):
    for a, b, c in T.grid(4, 4, 3):
        with T.block("B"):
            vi = T.axis.spatial(10, a * 2 + b)
            vj = T.axis.spatial(3, c)
            B[vi, vj] = A[vi, vj] + T.float32(1)


@T.prim_func
def overlapping_rows_reordered(A: T.Buffer((10, 3), "float32"), B: T.Buffer((10, 3), "float32")):
    for a, c, b in T.grid(4, 3, 4):
        with T.block("B"):
            vi = T.axis.spatial(10, a * 2 + b)
            vj = T.axis.spatial(3, c)
            B[vi, vj] = A[vi, vj] + T.float32(1)


@T.prim_func
def first_hundred(A: T.Buffer((8, 8, 8), "float32"), B: T.Buffer((8, 8, 8), "float32")):
    # The predicate counts i, j, k as one number; the iterators take its digits apart.
    for i, j, k in T.grid(8, 8, 8):
        with T.block("B"):
            T.where(i * 64 + j * 8 + k < 100)
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)


@T.prim_func
def matmul_partly_computed(
    A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")
):
    # C covers an 8x8 corner, D reads all of it.
    C = T.alloc_buffer((16, 16))
    for i, j, k in T.grid(8, 8, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj]


@T.prim_func
def row_sum_split_unevenly(A: T.Buffer((8, 18), "float32"), B: T.Buffer((8,), "float32")):
    for i, k_0, k_1 in T.grid(8, 4, 5):
        with T.block("B"):
            T.where(k_0 * 5 + k_1 < 18)
            vi = T.axis.spatial(8, i)
            vk = T.axis.reduce(18, k_0 * 5 + k_1)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


# ---------------------------------------------------------------- the wrong-number case: rfactor


def test_rfactor_of_a_non_affine_row_sum_is_refused():
    # Accepting it used to compute a different sum (the duplicated column counted once per row).
    sch = Schedule(row_sum_squared_index)
    _, k = sch.get_loops(sch.get_block("B"))
    err = assert_fails_unchanged(sch, NotReductionBlockError, "is not a reduction block", sch.rfactor, k, 0)
    assert "condition #2" in str(err) and "k * k // 2" in str(err)


def test_rfactor_of_a_block_that_is_no_reduction_names_the_condition():
    sch = Schedule(strided_copy)
    i, _ = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(sch, NotReductionBlockError, "violates condition #1", sch.rfactor, i, 0)


def test_rfactor_outside_a_stage_pipeline_is_refused():
    sch = Schedule(matmul_partly_computed)
    _, _, k = sch.get_loops(sch.get_block("C"))
    err = assert_fails_unchanged(sch, NotStagePipelineError, "is not a stage pipeline", sch.rfactor, k, 0)
    assert "block 'D' reads C[0:16, 0:16]" in str(err)


def test_rfactor_under_a_predicate_is_refused():
    sch = Schedule(row_sum_split_unevenly)
    _, k_0, _ = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(sch, BlockPredicateError, "under the predicate", sch.rfactor, k_0, 1)


def test_rfactor_of_a_plain_matmul_still_applies():
    sch = Schedule(matmul)
    _, _, k = sch.get_loops(sch.get_block("C"))
    k_0, _ = sch.split(k, [None, 4])
    sch.rfactor(k_0, 0)
    assert_same_numbers(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)


# ---------------------------------------------------------------- reorder


def test_reorder_with_a_strided_binding_is_refused():
    sch = Schedule(strided_copy)
    i, j = sch.get_loops(sch.get_block("B"))
    err = assert_fails_unchanged(
        sch, NotAffineBindingError, "is required to have an affine binding", sch.reorder, j, i
    )
    assert "j * 8" in str(err) and "leaves gaps" in str(err)


def test_reorder_across_a_squared_loop_is_refused():
    sch = Schedule(squared_row)
    a, b, c = sch.get_loops(sch.get_block("B"))
    err = assert_fails_unchanged(
        sch, NotAffineBindingError, "is required to have an affine binding", sch.reorder, a, c, b
    )
    assert "a * a + b" in str(err)


def test_reorder_below_the_squared_loop_applies():
    # Under loop a the binding a * a + b is affine (a is a constant there), as TVM's partial check says.
    sch = Schedule(squared_row)
    _, b, c = sch.get_loops(sch.get_block("B"))
    sch.reorder(c, b)
    tir.assert_structural_equal(sch.mod["main"], squared_row_inner_reordered)
    assert_same_numbers(squared_row, sch.mod)
    verify_trace_roundtrip(sch, squared_row)


def test_reorder_with_overlapping_binding_pieces_applies():
    sch = Schedule(overlapping_rows)
    a, b, c = sch.get_loops(sch.get_block("B"))
    sch.reorder(a, c, b)
    tir.assert_structural_equal(sch.mod["main"], overlapping_rows_reordered)
    assert_same_numbers(overlapping_rows, sch.mod)
    verify_trace_roundtrip(sch, overlapping_rows)


def test_reorder_under_a_predicate_over_several_loops_is_refused():
    sch = Schedule(first_hundred)
    i, j, k = sch.get_loops(sch.get_block("B"))
    err = assert_fails_unchanged(
        sch, NotAffineBindingError, "is required to have an affine binding", sch.reorder, k, j, i
    )
    assert "T.where(i * 64 + j * 8 + k < 100)" in str(err)


def test_reorder_after_an_uneven_split_applies():
    sch = Schedule(matmul)
    i, j, _ = sch.get_loops(sch.get_block("C"))
    _, i_1 = sch.split(i, [None, 5])
    sch.reorder(i_1, j)
    assert_same_numbers(matmul, sch.mod)


# ---------------------------------------------------------------- parallel, vectorize, bind


def test_parallel_over_a_non_affine_block_is_refused():
    sch = Schedule(row_sum_squared_index)
    i, _ = sch.get_loops(sch.get_block("B"))
    err = assert_fails_unchanged(
        sch, NotCompactDataFlowError, "does not have compact dataflow", sch.parallel, i
    )
    assert "k * k // 2" in str(err)


def test_parallel_of_rows_that_write_one_shared_row_is_refused():
    sch = Schedule(column_sum_indexed_by_reduction)
    i, _ = sch.get_loops(sch.get_block("B"))
    err = assert_fails_unchanged(
        sch, NotCompactDataFlowError, "does not have compact dataflow", sch.parallel, i
    )
    assert "depends on a reduction iterator" in str(err)


def test_vectorize_of_a_scan_is_refused():
    sch = Schedule(prefix_sum)
    (i,) = sch.get_loops(sch.get_block("scan"))
    err = assert_fails_unchanged(
        sch, NotCompactDataFlowError, "does not have compact dataflow", sch.vectorize, i
    )
    assert "block 'scan'" in str(err)


def test_bind_over_a_strided_block_is_refused():
    sch = Schedule(strided_copy)
    i, _ = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(
        sch, NotAffineBindingError, "is required to have an affine binding", sch.bind, i, "blockIdx.x"
    )


def test_parallel_and_vectorize_after_decompose_reduction_apply():
    # The update block reads exactly what it writes: its rows and lanes stay independent.
    sch = Schedule(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    sch.reorder(i, k, j)
    sch.decompose_reduction(block, k)
    sch.parallel(i)
    sch.vectorize(j)
    assert_same_numbers(matmul, sch.mod)
    verify_trace_roundtrip(sch, matmul)
