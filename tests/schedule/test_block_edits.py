"""reorder_block_iter_var, add_unit_loop, remove_rv, unsafe_set_dtype: scripts, numbers, traces,
refused requests."""

from __future__ import annotations

import numpy as np
import pytest

import tir
from schedule import Schedule, StaleHandleError, UnknownHandleError
from schedule.block_iters import IterOrderError
from schedule.index_maps import BufferIndexError
from schedule.set_dtype import SetDtypeBufferError
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, random_args, verify_trace_roundtrip


@T.prim_func
def matmul(A: T.Buffer((8, 6), "float32"), B: T.Buffer((6, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    for i, j, k in T.grid(8, 4, 6):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_k_first(
    A: T.Buffer((8, 6), "float32"), B: T.Buffer((6, 4), "float32"), C: T.Buffer((8, 4), "float32")
):
    for i, j, k in T.grid(8, 4, 6):
        with T.block("C"):
            vk = T.axis.reduce(6, k)
            vi = T.axis.spatial(8, i)
            vj = T.axis.spatial(4, j)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def scalar_then_vector(
    A: T.Buffer((4,), "float32"), B: T.Buffer((1,), "float32"), C: T.Buffer((4,), "float32")
):
    with T.block("B"):
        B[0] = A[0] + A[3]
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = A[vi] * B[0]


@T.prim_func
def staged(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(3)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] - T.float32(1)


# ---------------------------------------------------------------- reorder_block_iter_var


def test_reorder_block_iter_var():
    sch = Schedule(matmul)
    sch.reorder_block_iter_var(sch.get_block("C"), [2, 0, 1])
    tir.assert_structural_equal(sch.mod["main"], matmul_k_first)
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod["main"])


@pytest.mark.parametrize("order", [[0, 1], [0, 1, 1], [0, 1, 3], "012"])
def test_reorder_block_iter_var_refuses_non_permutations(order):
    sch = Schedule(matmul)
    block = sch.get_block("C")
    assert_fails_unchanged(sch, IterOrderError, "permutation", sch.reorder_block_iter_var, block, order)


# ---------------------------------------------------------------- add_unit_loop


def test_add_unit_loop_above_a_block_without_loops_then_compute_at():
    sch = Schedule(scalar_then_vector)
    u = sch.add_unit_loop(sch.get_block("B"))
    assert int(sch.get(u).extent) == 1 and sch.get(u).loop_var.name == "u"
    verify_trace_roundtrip(sch, scalar_then_vector)
    assert_same_numbers(scalar_then_vector, sch.mod["main"])


def test_add_unit_loop_above_a_loop():
    sch = Schedule(staged)
    i = sch.get_loops(sch.get_block("C"))[0]
    u = sch.add_unit_loop(i)
    assert [sch.get(x) for x in sch.get_loops(sch.get_block("C"))] == [sch.get(u), sch.get(i)]
    verify_trace_roundtrip(sch, staged)
    assert_same_numbers(staged, sch.mod["main"])


# ---------------------------------------------------------------- remove_rv


def test_remove_rv_forgets_the_handle_and_replays():
    sch = Schedule(staged)
    block = sch.get_block("B")
    loop = sch.get_loops(block)[0]
    sch.remove_rv(loop)
    with pytest.raises(StaleHandleError, match="remove_rv"):
        sch.split(loop, [4, 4])
    assert sch.get(block).name == "B"
    verify_trace_roundtrip(sch, staged)
    assert "sch.remove_rv(rv=l1)" in sch.trace.as_python()


def test_a_forgotten_or_foreign_handle_is_an_index_error_as_in_tvm():
    sch = Schedule(staged)
    other = Schedule(staged)
    foreign = other.get_block("B")
    block = sch.get_block("B")
    sch.remove_rv(block)
    for handle in (block, foreign):
        with pytest.raises(IndexError):
            sch.get(handle)
    with pytest.raises(UnknownHandleError, match="does not belong to this schedule"):
        sch.get(foreign)


# ---------------------------------------------------------------- unsafe_set_dtype


def test_unsafe_set_dtype_to_float16():
    sch = Schedule(staged)
    sch.unsafe_set_dtype(sch.get_block("B"), 0, "float16")
    assert sch.mod["main"].body.block.alloc_buffers[0].dtype == "float16"
    verify_trace_roundtrip(sch, staged)
    a, c = random_args(staged)
    expected = (a * 3).astype("float16").astype("float32") - 1
    tir.interpret(sch.mod["main"], a, c)
    np.testing.assert_allclose(c, expected, rtol=1e-6)


def test_unsafe_set_dtype_to_the_same_type_changes_nothing():
    sch = Schedule(staged)
    sch.unsafe_set_dtype(sch.get_block("B"), 0, "float32")
    tir.assert_structural_equal(sch.mod["main"], staged)


def test_unsafe_set_dtype_refuses_a_parameter():
    sch = Schedule(staged)
    block = sch.get_block("C")
    assert_fails_unchanged(sch, SetDtypeBufferError, "parameter", sch.unsafe_set_dtype, block, 0, "float16")


def test_unsafe_set_dtype_refuses_a_bad_index():
    sch = Schedule(staged)
    block = sch.get_block("B")
    assert_fails_unchanged(
        sch, BufferIndexError, "buffer_index 1 is out of range", sch.unsafe_set_dtype, block, 1, "float16"
    )
