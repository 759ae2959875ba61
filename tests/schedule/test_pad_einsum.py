"""pad_einsum: expected scripts, numbers, trace round trips, refused requests."""

from __future__ import annotations

import pytest

import tir
from schedule import Schedule
from schedule.errors import ArgumentError
from schedule.pad_einsum import NotEinsumBlockError, PaddedReductionError
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip


@T.prim_func
def matmul(
    A: T.Buffer((8, 15), "float32"), B: T.Buffer((13, 15), "float32"), C: T.Buffer((8, 13), "float32")
):
    for i, j, k in T.grid(8, 13, 15):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]


@T.prim_func
def matmul_padded(
    A: T.Buffer((8, 15), "float32"), B: T.Buffer((13, 15), "float32"), C: T.Buffer((8, 13), "float32")
):
    A_pad = T.alloc_buffer((8, 16))
    B_pad = T.alloc_buffer((16, 16))
    C_pad = T.alloc_buffer((8, 16))
    for ax0, ax1 in T.grid(8, 16):
        with T.block("A_pad"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[v0, v1])
            T.writes(A_pad[v0, v1])
            A_pad[v0, v1] = T.if_then_else(v1 < 15, A[v0, v1], T.float32(0))
    for ax0, ax1 in T.grid(16, 16):
        with T.block("B_pad"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(B[v0, v1])
            T.writes(B_pad[v0, v1])
            B_pad[v0, v1] = T.if_then_else(v0 < 13 and v1 < 15, B[v0, v1], T.float32(0))
    for i, j, k in T.grid(8, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A_pad[vi, vk], B_pad[vj, vk])
            T.writes(C_pad[vi, vj])
            with T.init():
                C_pad[vi, vj] = T.float32(0)
            C_pad[vi, vj] = C_pad[vi, vj] + A_pad[vi, vk] * B_pad[vj, vk]
    for ax0, ax1 in T.grid(8, 13):
        with T.block("C_pad"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(C_pad[v0, v1])
            T.writes(C[v0, v1])
            C[v0, v1] = C_pad[v0, v1]


@T.prim_func
def row_sum_of_sums(
    A: T.Buffer((6, 7), "float32"), B: T.Buffer((7,), "float32"), C: T.Buffer((6,), "float32")
):
    for i, k in T.grid(6, 7):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + (A[vi, vk] + B[vk])


@T.prim_func
def shifted(A: T.Buffer((9,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi + 1]


@T.prim_func
def accumulate(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "float32")):
    for i in range(6):
        with T.block("B"):
            vi = T.axis.spatial(6, i)
            B[vi] = B[vi] + A[vi]


def test_pad_einsum_of_a_matmul():
    sch = Schedule(matmul)
    sch.pad_einsum(sch.get_block("C"), [4, 8, 8])
    tir.assert_structural_equal(sch.mod["main"], matmul_padded)
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod["main"])


def test_pad_einsum_then_split_evenly():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    sch.pad_einsum(block, [1, 4, 4])
    _, j, k = sch.get_loops(block)
    sch.split(j, [None, 4])
    sch.split(k, [None, 4])
    assert "T.where" not in sch.mod["main"].script()
    assert_same_numbers(matmul, sch.mod["main"])


def test_pad_einsum_with_spatial_padding_only():
    sch = Schedule(row_sum_of_sums)
    sch.pad_einsum(sch.get_block("C"), [4, 1])
    assert sch.block_names() == ["A_pad", "C", "C_pad"]
    verify_trace_roundtrip(sch, row_sum_of_sums)
    assert_same_numbers(row_sum_of_sums, sch.mod["main"])


def test_pad_einsum_with_nothing_to_pad_changes_nothing():
    sch = Schedule(matmul)
    sch.pad_einsum(sch.get_block("C"), [1, 1, 1])
    tir.assert_structural_equal(sch.mod["main"], matmul)


def test_pad_einsum_refuses_a_reduction_whose_padding_would_add():
    sch = Schedule(row_sum_of_sums)
    block = sch.get_block("C")
    assert_fails_unchanged(sch, PaddedReductionError, "add zero", sch.pad_einsum, block, [1, 4])


@pytest.mark.parametrize(
    "func, padding, error, phrase",
    [
        (shifted, [4], NotEinsumBlockError, "einsum"),
        (accumulate, [4], NotEinsumBlockError, "without T.init"),
        (matmul, [4, 4], ArgumentError, "one factor per block iterator"),
        (matmul, [4, 0, 4], ArgumentError, "positive"),
    ],
)
def test_pad_einsum_refuses(func, padding, error, phrase):
    sch = Schedule(func)
    block = sch.get_block(sch.block_names()[0])
    assert_fails_unchanged(sch, error, phrase, sch.pad_einsum, block, padding)


@T.prim_func
def scale_rows(A: T.Buffer((6, 10), "float32"), B: T.Buffer((6, 10), "float32")):
    for i, j in T.grid(6, 10):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)


def test_pad_einsum_of_an_elementwise_block_without_init():
    sch = Schedule(scale_rows)
    sch.pad_einsum(sch.get_block("B"), [4, 4])
    assert sch.block_names() == ["A_pad", "B", "B_pad"]
    verify_trace_roundtrip(sch, scale_rows)
    assert_same_numbers(scale_rows, sch.mod["main"])


@T.prim_func
def matmul_of_n_rows(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (16, 16), "float32")
    B = T.match_buffer(b, (n, 16), "float32")
    C = T.match_buffer(c, (16, n), "float32")
    for i0, i1, i2 in T.grid(16, n, 16):
        with T.block("C"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            with T.init():
                C[i, j] = T.float32(0)
            C[i, j] = C[i, j] + A[i, k] * B[j, k]


def test_pad_einsum_rounds_a_dynamic_extent_up_as_tvm_does():
    # The loop over n runs to (n + 7) // 8 * 8 through zero-padded copies; numbers for n = 5 and 13,
    # in the executor and in a bounds-checked C build.
    import numpy as np

    from codegen import build

    sch = Schedule(matmul_of_n_rows)
    sch.pad_einsum(sch.get_block("C"), [8, 8, 8])
    text = sch.mod["main"].script()
    assert "B_pad = T.alloc_buffer(((n + 7) // 8 * 8, 16))" in text
    assert "T.if_then_else(v0 < n, B[v0, v1], T.float32(0.0))" in text
    verify_trace_roundtrip(sch, matmul_of_n_rows)
    module = build(sch.mod, "c", check_bounds=True)
    for n in (5, 13):
        rng = np.random.default_rng(n)
        a, b = rng.random((16, 16), "float32"), rng.random((n, 16), "float32")
        c, c_built = np.zeros((16, n), "float32"), np.zeros((16, n), "float32")
        tir.interpret(sch.mod, a, b, c)
        module["main"](a, b, c_built)
        np.testing.assert_allclose(c, a @ b.T, rtol=1e-5)
        np.testing.assert_allclose(c_built, a @ b.T, rtol=1e-5)
