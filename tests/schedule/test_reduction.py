"""decompose_reduction and rfactor: expected scripts, trace round trips, numbers, errors."""

# ruff: noqa: F821, B007  (script names only the parser resolves; loops a block ignores on purpose)

from __future__ import annotations

import numpy as np
import pytest

import tir
from schedule import Schedule
from schedule.reduction import (
    FactorAxisError,
    InitNotIdentityError,
    InitReadsLaterWriteError,
    LoopBelowReductionError,
    LoopNotAncestorError,
    LoopStructureError,
    MixedLoopError,
    NotReductionBlockError,
    NotReductionLoopError,
    NotSerialLoopError,
    NotSingleBlockLoopError,
    ReducerPatternError,
)
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip

# fmt: off
# ---------------------------------------------------------------- fixtures


@T.prim_func
def matmul(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
           C: T.Buffer((32, 32), "float32")):
    for i, j, k in T.grid(32, 32, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_decompose_at_k(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                          C: T.Buffer((32, 32), "float32")):
    for i, j in T.grid(32, 32):
        with T.block("C_init"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads()
            T.writes(C[vi, vj])
            C[vi, vj] = T.float32(0)
        for k in range(32):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(C[vi, vj], A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_decompose_at_i(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                          C: T.Buffer((32, 32), "float32")):
    for i_init, j_init in T.grid(32, 32):
        with T.block("C_init"):
            vi, vj = T.axis.remap("SS", [i_init, j_init])
            T.reads()
            T.writes(C[vi, vj])
            C[vi, vj] = T.float32(0)
    for i, j, k in T.grid(32, 32, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(C[vi, vj], A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_tiled(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                 C: T.Buffer((32, 32), "float32")):
    for i_0, j_0, i_1, j_1, k_0, k_1, i_2, j_2 in T.grid(4, 4, 2, 2, 8, 4, 4, 4):
        with T.block("C"):
            vi = T.axis.spatial(32, i_0 * 8 + i_1 * 4 + i_2)
            vj = T.axis.spatial(32, j_0 * 8 + j_1 * 4 + j_2)
            vk = T.axis.reduce(32, k_0 * 4 + k_1)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_tiled_decompose_at_k0(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                                 C: T.Buffer((32, 32), "float32")):
    for i_0, j_0, i_1, j_1 in T.grid(4, 4, 2, 2):
        for i_2_init, j_2_init in T.grid(4, 4):
            with T.block("C_init"):
                vi = T.axis.spatial(32, i_0 * 8 + i_1 * 4 + i_2_init)
                vj = T.axis.spatial(32, j_0 * 8 + j_1 * 4 + j_2_init)
                T.reads()
                T.writes(C[vi, vj])
                C[vi, vj] = T.float32(0)
        for k_0, k_1, i_2, j_2 in T.grid(8, 4, 4, 4):
            with T.block("C"):
                vi = T.axis.spatial(32, i_0 * 8 + i_1 * 4 + i_2)
                vj = T.axis.spatial(32, j_0 * 8 + j_1 * 4 + j_2)
                vk = T.axis.reduce(32, k_0 * 4 + k_1)
                T.reads(C[vi, vj], A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def rowsum_spatial_predicate(A: T.Buffer((30, 16), "float32"), B: T.Buffer((30,), "float32")):
    for i_0, i_1, k in T.grid(4, 8, 16):
        with T.block("B"):
            vi = T.axis.spatial(30, i_0 * 8 + i_1)
            vk = T.axis.reduce(16, k)
            T.where(i_0 * 8 + i_1 < 30)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def rowsum_spatial_predicate_decompose(A: T.Buffer((30, 16), "float32"), B: T.Buffer((30,), "float32")):
    for i_0 in range(4):
        for i_1_init in range(8):
            with T.block("B_init"):
                vi = T.axis.spatial(30, i_0 * 8 + i_1_init)
                T.where(i_0 * 8 + i_1_init < 30)
                T.reads()
                T.writes(B[vi])
                B[vi] = T.float32(0)
        for i_1, k in T.grid(8, 16):
            with T.block("B"):
                vi = T.axis.spatial(30, i_0 * 8 + i_1)
                vk = T.axis.reduce(16, k)
                T.where(i_0 * 8 + i_1 < 30)
                T.reads(B[vi], A[vi, vk])
                T.writes(B[vi])
                B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def rowsum_reduce_predicate(A: T.Buffer((16, 30), "float32"), B: T.Buffer((16,), "float32")):
    for i, k_0, k_1 in T.grid(16, 8, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            vk = T.axis.reduce(30, k_0 * 4 + k_1)
            T.where(k_0 * 4 + k_1 < 30)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def rowsum_reduce_predicate_decompose(A: T.Buffer((16, 30), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B_init"):
            vi = T.axis.spatial(16, i)
            T.reads()
            T.writes(B[vi])
            B[vi] = T.float32(0)
        for k_0, k_1 in T.grid(8, 4):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                vk = T.axis.reduce(30, k_0 * 4 + k_1)
                T.where(k_0 * 4 + k_1 < 30)
                T.reads(B[vi], A[vi, vk])
                T.writes(B[vi])
                B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def rowsum(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16,), "float32")):
    for i, k_0, k_1 in T.grid(16, 8, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            vk = T.axis.reduce(32, k_0 * 4 + k_1)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def rowsum_rfactor_k1(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16,), "float32")):
    B_rf = T.alloc_buffer((4, 16))
    for i, k_0, k_1 in T.grid(16, 8, 4):
        with T.block("B_rf"):
            vk_1 = T.axis.spatial(4, k_1)
            vi = T.axis.spatial(16, i)
            vk_0 = T.axis.reduce(8, k_0)
            with T.init():
                B_rf[vk_1, vi] = T.float32(0)
            B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 4 + vk_1]
    for i, k_1 in T.grid(16, 4):
        with T.block("B"):
            vk_1, vi = T.axis.remap("RS", [k_1, i])
            T.reads(B_rf[vk_1, vi])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + B_rf[vk_1, vi]


@T.prim_func
def rowmax(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16,), "float32")):
    for i, k_0, k_1 in T.grid(16, 8, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            vk = T.axis.reduce(32, k_0 * 4 + k_1)
            with T.init():
                B[vi] = T.float32(-3.4028234663852886e38)
            B[vi] = T.max(B[vi], A[vi, vk])


@T.prim_func
def rowmax_rfactor_k0(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16,), "float32")):
    B_rf = T.alloc_buffer((16, 8))
    for i, k_0, k_1 in T.grid(16, 8, 4):
        with T.block("B_rf"):
            vk_0 = T.axis.spatial(8, k_0)
            vi = T.axis.spatial(16, i)
            vk_1 = T.axis.reduce(4, k_1)
            with T.init():
                B_rf[vi, vk_0] = T.float32(-3.4028234663852886e38)
            B_rf[vi, vk_0] = T.max(B_rf[vi, vk_0], A[vi, vk_0 * 4 + vk_1])
    for i, k_0 in T.grid(16, 8):
        with T.block("B"):
            vk_0, vi = T.axis.remap("RS", [k_0, i])
            T.reads(B_rf[vi, vk_0])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(-3.4028234663852886e38)
            B[vi] = T.max(B[vi], B_rf[vi, vk_0])


@T.prim_func
def matmul_rfactor_k(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
                     C: T.Buffer((32, 32), "float32")):
    C_rf = T.alloc_buffer((32, 32, 32))
    for i, j, k in T.grid(32, 32, 32):
        with T.block("C_rf"):
            vk, vi, vj = T.axis.remap("SSS", [k, i, j])
            C_rf[vi, vj, vk] = A[vi, vk] * B[vk, vj]
    for i, j, k in T.grid(32, 32, 32):
        with T.block("C"):
            vk, vi, vj = T.axis.remap("RSS", [k, i, j])
            T.reads(C_rf[vi, vj, vk])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + C_rf[vi, vj, vk]


@T.prim_func
def elementwise(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
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
def matmul_ikj(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"),
               C: T.Buffer((32, 32), "float32")):
    for i, k, j in T.grid(32, 32, 32):
        with T.block("C"):
            vi, vk, vj = T.axis.remap("SRS", [i, k, j])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def scatter_reduction(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 16):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vk] = T.float32(0)
            B[vk] = B[vk] + A[vi, vk]


@T.prim_func
def odd_reductions(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32"),
                   C: T.Buffer((16,), "float32"), D: T.Buffer((16,), "float32"),
                   E: T.Buffer((16,), "float32"), F: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 16):
        with T.block("minus"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] - A[vi, vk]
    for i, k in T.grid(16, 16):
        with T.block("one_based"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(1)
            C[vi] = C[vi] + A[vi, vk]
    for i in range(16):
        for k in T.unroll(16):
            with T.block("unrolled"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    D[vi] = T.float32(0)
                D[vi] = D[vi] + A[vi, vk]
    for f in range(256):
        with T.block("fused"):
            vi = T.axis.spatial(16, f // 16)
            vk = T.axis.reduce(16, f % 16)
            with T.init():
                E[vi] = T.float32(0)
            E[vi] = E[vi] + A[vi, vk]
    for i, k, x in T.grid(16, 16, 2):
        with T.block("unbound"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                F[vi] = T.float32(0)
            F[vi] = F[vi] + A[vi, vk]


@T.prim_func
def shared_outer_loop(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32"),
                      C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi, 0]
        for k in range(16):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
# fmt: on


# ---------------------------------------------------------------- decompose_reduction


def test_decompose_reduction_at_k():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    _, _, k = sch.get_loops(block)
    init = sch.decompose_reduction(block, k)
    assert sch.get(init).name == "C_init"
    assert sch.get(block).name == "C" and sch.get(block).init is None
    tir.assert_structural_equal(sch.func, matmul_decompose_at_k)
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod)


def test_decompose_reduction_at_outermost_loop():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    i, _, _ = sch.get_loops(block)
    sch.decompose_reduction(block, i)
    tir.assert_structural_equal(sch.func, matmul_decompose_at_i)
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod)


def test_decompose_reduction_tiled_at_k0():
    """The seed notebook's blocking schedule (In [33]): decompose at k0 after the reorder."""
    sch = Schedule(matmul_tiled)
    block = sch.get_block("C")
    k0 = sch.get_loops(block)[4]
    sch.decompose_reduction(block, k0)
    tir.assert_structural_equal(sch.func, matmul_tiled_decompose_at_k0)
    verify_trace_roundtrip(sch, matmul_tiled)
    assert_same_numbers(matmul_tiled, sch.mod)


def test_decompose_reduction_after_split_and_reorder():
    if not hasattr(Schedule, "split"):
        pytest.skip("split is not available yet")
    sch = Schedule(matmul)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, i1, i2 = sch.split(i, [None, 2, 4])
    j0, j1, j2 = sch.split(j, [None, 2, 4])
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.decompose_reduction(block, k0)
    tir.assert_structural_equal(sch.func, matmul_tiled_decompose_at_k0)
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod)


# fmt: off
@T.prim_func
def row_sum_from_bias(A: T.Buffer((8, 16), "float32"), bias: T.Buffer((8,), "float32"),
                      B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 16):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = bias[vi]
            B[vi] = B[vi] + A[vi, vk]
# fmt: on


def test_decompose_reduction_gives_the_init_the_reads_it_makes():
    sch = Schedule(row_sum_from_bias)
    block = sch.get_block("B")
    init = sch.decompose_reduction(block, sch.get_loops(block)[1])
    assert [r.buffer.name for r in sch.get(init).reads] == ["bias"]
    assert_same_numbers(row_sum_from_bias, sch.mod)


def test_decompose_reduction_refuses_to_put_the_init_before_the_fetch_it_reads():
    """The tuner's conv_layer bug: bias fetched to shared memory inside the k loop, the init (which
    starts each output from the bias) decomposed before that loop would read the cache unfilled."""
    sch = Schedule(row_sum_from_bias)
    block = sch.get_block("B")
    _, k = sch.get_loops(block)
    k0, _ = sch.split(k, [None, 4])
    cache = sch.cache_read(block, 0, "shared")  # the init's read comes first
    sch.compute_at(cache, k0)
    assert sch.get(cache).writes[0].buffer.name == "bias_shared"
    assert_fails_unchanged(
        sch,
        InitReadsLaterWriteError,
        "which block bias_shared writes inside that loop",
        sch.decompose_reduction,
        block,
        k0,
    )

    sch = Schedule(row_sum_from_bias)  # fetched above the k loops instead, the init can go before them
    block = sch.get_block("B")
    i, k = sch.get_loops(block)
    k0, _ = sch.split(k, [None, 4])
    sch.compute_at(sch.cache_read(block, 0, "shared"), i)
    sch.decompose_reduction(block, k0)
    assert_same_numbers(row_sum_from_bias, sch.mod)


def test_decompose_reduction_in_seed_blocking_schedule():
    """The seed notebook's In [33] verbatim (tiles 2x4 for 32x32x32): C_init lands right before k_0."""
    needed = ("cache_write", "split", "unroll", "reorder", "reverse_compute_at", "bind")
    if not all(hasattr(Schedule, name) for name in needed):
        pytest.skip("the blocking schedule needs the other primitive families")
    sch = Schedule(matmul)
    block_C = sch.get_block("C")
    C_local = sch.cache_write(block_C, 0, "local")
    i, j, k = sch.get_loops(block_C)
    i0, i1, i2 = sch.split(i, [None, 2, 4])
    j0, j1, j2 = sch.split(j, [None, 2, 4])
    k0, k1 = sch.split(k, [None, 4])
    sch.unroll(k1)
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(C_local, j1)
    sch.bind(i0, "blockIdx.x")
    sch.bind(j0, "blockIdx.y")
    sch.bind(i1, "threadIdx.x")
    sch.bind(j1, "threadIdx.y")
    init = sch.decompose_reduction(block_C, k0)
    init_loops = [sch.get(loop) for loop in sch.get_loops(init)]
    assert [loop.loop_var.name for loop in init_loops] == ["i_0", "j_0", "i_1", "j_1", "i_2_init", "j_2_init"]
    children = sch.get(j1).body.seq
    assert children[0] is init_loops[4] and children[1] is sch.get(k0)
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod)


def test_decompose_reduction_keeps_spatial_predicate():
    sch = Schedule(rowsum_spatial_predicate)
    block = sch.get_block("B")
    sch.decompose_reduction(block, sch.get_loops(block)[1])
    tir.assert_structural_equal(sch.func, rowsum_spatial_predicate_decompose)
    verify_trace_roundtrip(sch, rowsum_spatial_predicate)
    assert_same_numbers(rowsum_spatial_predicate, sch.mod)


def test_decompose_reduction_drops_reduction_predicate():
    sch = Schedule(rowsum_reduce_predicate)
    block = sch.get_block("B")
    sch.decompose_reduction(block, sch.get_loops(block)[1])
    tir.assert_structural_equal(sch.func, rowsum_reduce_predicate_decompose)
    verify_trace_roundtrip(sch, rowsum_reduce_predicate)
    assert_same_numbers(rowsum_reduce_predicate, sch.mod)


# ---------------------------------------------------------------- rfactor


def test_rfactor_row_sum_inner_loop():
    sch = Schedule(rowsum)
    block = sch.get_block("B")
    i, k0, k1 = sch.get_loops(block)
    rf = sch.rfactor(k1, 0)
    assert sch.get(rf).name == "B_rf"
    assert sch.get(block).name == "B"
    assert [sch.get(loop) for loop in sch.get_loops(block)] == [sch.get(i), sch.get(k1)]
    tir.assert_structural_equal(sch.func, rowsum_rfactor_k1)
    verify_trace_roundtrip(sch, rowsum)
    assert_same_numbers(rowsum, sch.mod)


def test_rfactor_max_reduction_outer_loop_last_axis():
    sch = Schedule(rowmax)
    _, k0, _ = sch.get_loops(sch.get_block("B"))
    sch.rfactor(k0, 1)
    tir.assert_structural_equal(sch.func, rowmax_rfactor_k0)
    verify_trace_roundtrip(sch, rowmax)
    assert_same_numbers(rowmax, sch.mod)


def test_rfactor_negative_factor_axis():
    sch = Schedule(rowmax)
    _, k0, _ = sch.get_loops(sch.get_block("B"))
    sch.rfactor(k0, -1)
    tir.assert_structural_equal(sch.func, rowmax_rfactor_k0)
    assert_same_numbers(rowmax, sch.mod)


def test_rfactor_matmul():
    sch = Schedule(matmul)
    _, _, k = sch.get_loops(sch.get_block("C"))
    sch.rfactor(k, 2)
    tir.assert_structural_equal(sch.func, matmul_rfactor_k)
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod)


def test_rfactor_then_decompose_both_blocks():
    sch = Schedule(rowsum)
    block = sch.get_block("B")
    _, _, k1 = sch.get_loops(block)
    rf = sch.rfactor(k1, 0)
    sch.decompose_reduction(rf, sch.get_loops(rf)[1])
    sch.decompose_reduction(block, sch.get_loops(block)[1])
    verify_trace_roundtrip(sch, rowsum)
    assert_same_numbers(rowsum, sch.mod)


# ---------------------------------------------------------------- illegal decompose_reduction


def test_decompose_loop_of_other_block_fails():
    sch = Schedule(elementwise)
    i, _ = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(
        sch, LoopNotAncestorError, "does not enclose", sch.decompose_reduction, sch.get_block("C"), i
    )


def test_decompose_block_without_init_fails():
    sch = Schedule(elementwise)
    block = sch.get_block("C")
    assert_fails_unchanged(
        sch,
        NotReductionBlockError,
        "has no T.init()",
        sch.decompose_reduction,
        block,
        sch.get_loops(block)[0],
    )


def test_decompose_below_reduction_loop_fails():
    sch = Schedule(matmul_ikj)
    block = sch.get_block("C")
    _, _, j = sch.get_loops(block)
    assert_fails_unchanged(sch, LoopBelowReductionError, "loop k above it", sch.decompose_reduction, block, j)


def test_decompose_reduction_index_in_output_fails():
    sch = Schedule(scatter_reduction)
    block = sch.get_block("B")
    assert_fails_unchanged(
        sch,
        NotReductionBlockError,
        "depends on a reduction iterator",
        sch.decompose_reduction,
        block,
        sch.get_loops(block)[0],
    )


def test_decompose_twice_fails():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    _, _, k = sch.get_loops(block)
    sch.decompose_reduction(block, k)
    assert_fails_unchanged(sch, NotReductionBlockError, "has no T.init()", sch.decompose_reduction, block, k)


# ---------------------------------------------------------------- illegal rfactor


def test_rfactor_loop_with_two_blocks_fails():
    sch = Schedule(shared_outer_loop)
    (i,) = sch.get_loops(sch.get_block("C"))
    assert_fails_unchanged(sch, NotSingleBlockLoopError, "encloses 2 blocks", sch.rfactor, i, 0)


def test_rfactor_block_without_init_fails():
    sch = Schedule(elementwise)
    _, j = sch.get_loops(sch.get_block("C"))
    assert_fails_unchanged(sch, NotReductionBlockError, "has no T.init()", sch.rfactor, j, 0)


def test_rfactor_unrolled_loop_fails():
    sch = Schedule(odd_reductions)
    _, k = sch.get_loops(sch.get_block("unrolled"))
    assert_fails_unchanged(sch, NotSerialLoopError, "needs a serial loop", sch.rfactor, k, 0)


def test_rfactor_spatial_loop_fails():
    sch = Schedule(rowsum)
    i, _, _ = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(sch, NotReductionLoopError, "feeds a spatial iterator", sch.rfactor, i, 0)


def test_rfactor_unbound_loop_fails():
    sch = Schedule(odd_reductions)
    _, _, x = sch.get_loops(sch.get_block("unbound"))
    assert_fails_unchanged(sch, NotReductionLoopError, "no reduction iterator", sch.rfactor, x, 0)


def test_rfactor_loop_under_reduction_bound_to_nothing_fails():
    sch = Schedule(odd_reductions)
    _, k, _ = sch.get_loops(sch.get_block("unbound"))
    assert_fails_unchanged(sch, LoopStructureError, "loop x under a reduction loop", sch.rfactor, k, 0)


def test_rfactor_fused_loop_fails():
    sch = Schedule(odd_reductions)
    (f,) = sch.get_loops(sch.get_block("fused"))
    assert_fails_unchanged(sch, MixedLoopError, "feeds both spatial and reduction", sch.rfactor, f, 0)


def test_rfactor_subtraction_fails():
    sch = Schedule(odd_reductions)
    _, k = sch.get_loops(sch.get_block("minus"))
    assert_fails_unchanged(
        sch, ReducerPatternError, "not a recognized commutative reduction", sch.rfactor, k, 0
    )


def test_rfactor_sum_from_one_fails():
    sch = Schedule(odd_reductions)
    _, k = sch.get_loops(sch.get_block("one_based"))
    assert_fails_unchanged(sch, InitNotIdentityError, "starts from", sch.rfactor, k, 0)


def test_rfactor_factor_axis_out_of_range_fails():
    sch = Schedule(rowsum)
    _, _, k1 = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(sch, FactorAxisError, "must be in [-2, 1]", sch.rfactor, k1, 2)
    assert_fails_unchanged(sch, FactorAxisError, "must be in [-2, 1]", sch.rfactor, k1, -3)


def test_rfactor_block_not_first_under_outer_loop_fails():
    sch = Schedule(shared_outer_loop)
    _, k = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(sch, LoopStructureError, "must be the first block under loop i", sch.rfactor, k, 0)


def test_rfactor_keeps_the_guard_of_a_non_divisible_spatial_split():
    sch = Schedule(rowsum)
    i, _, k1 = sch.get_loops(sch.get_block("B"))
    sch.split(i, [None, 3])  # 3 does not divide the rows: the block gets a T.where
    sch.rfactor(k1, 0)
    write_back = sch.state.realize_of(sch.get(sch.get_block("B")))
    assert not isinstance(write_back.predicate, tir.IntImm)  # else it runs past the last row
    tir.verify_well_formed(sch.func)
    verify_trace_roundtrip(sch, rowsum)
    assert_same_numbers(rowsum, sch.mod)


@T.prim_func
def row_sum_through_a_let(A: T.Buffer((6, 32), "float32"), B: T.Buffer((6,), "float32")):
    for i, k0, k1 in T.grid(6, 8, 4):
        with T.block("B"):
            vi = T.axis.spatial(6, i)
            vk = T.axis.reduce(32, k0 * 4 + k1)
            with T.init():
                B[vi] = T.float32(0)
            total: T.float32 = B[vi] + A[vi, vk]
            B[vi] = total


def test_rfactor_reads_an_update_written_through_a_let():
    # TVM's printer writes updates as `v: T.float32 = B[vi] + ...; B[vi] = v`; rfactor sees the sum.
    sch = Schedule(row_sum_through_a_let)
    _, _, k1 = sch.get_loops(sch.get_block("B"))
    sch.rfactor(k1, 0)
    assert "B_rf[vk1, vi] = B_rf[vk1, vi] + A[vi, vk0 * 4 + vk1]" in sch.mod["main"].script()
    verify_trace_roundtrip(sch, row_sum_through_a_let)
    assert_same_numbers(row_sum_through_a_let, sch.mod)


@T.prim_func
def total_of_a_vector(A: T.Buffer((64,), "float32"), total: T.Buffer((), "float32")):
    for k in range(64):
        with T.block("total"):
            vk = T.axis.reduce(64, k)
            with T.init():
                total[()] = T.float32(0)
            total[()] = total[()] + A[vk]


@T.prim_func
def total_of_a_vector_rfactor(A: T.Buffer((64,), "float32"), total: T.Buffer((), "float32")):
    total_rf = T.alloc_buffer((64,))
    for k in range(64):
        with T.block("total_rf"):
            vk = T.axis.spatial(64, k)
            total_rf[vk] = A[vk]
    for k in range(64):
        with T.block("total"):
            vk = T.axis.reduce(64, k)
            with T.init():
                total[()] = T.float32(0)
            total[()] = total[()] + total_rf[vk]


def test_rfactor_of_the_only_reduction_loop_stores_each_term():
    # No reduction iterator is left in the rfactor block: each partial result is a single
    # term, stored without an init or a read of the partial buffer.
    sch = Schedule(total_of_a_vector)
    (k,) = sch.get_loops(sch.get_block("total"))
    rf = sch.rfactor(k, 0)
    assert sch.get(rf).init is None
    tir.assert_structural_equal(sch.func, total_of_a_vector_rfactor)
    verify_trace_roundtrip(sch, total_of_a_vector)
    assert_same_numbers(total_of_a_vector, sch.mod)


@T.prim_func
def row_sum_under_a_unit_loop(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4,), "float32")):
    for i, k, unit in T.grid(4, 16, 1):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def row_sum_under_a_unit_loop_rfactor(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4,), "float32")):
    B_rf = T.alloc_buffer((1, 4))
    for i, k, unit in T.grid(4, 16, 1):
        with T.block("B_rf"):
            vunit, vi, vk = T.axis.remap("SSR", [unit, i, k])
            with T.init():
                B_rf[vunit, vi] = T.float32(0)
            B_rf[vunit, vi] = B_rf[vunit, vi] + A[vi, vk]
    for i, unit in T.grid(4, 1):
        with T.block("B"):
            vunit, vi = T.axis.remap("RS", [unit, i])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + B_rf[vunit, vi]


def test_rfactor_of_a_unit_loop_bound_to_nothing_keeps_one_partial_slot():
    # As TVM: the loop of extent 1 drives no iterator, so the partial buffer has one slot and
    # the reduction stays in the rfactor block.
    sch = Schedule(row_sum_under_a_unit_loop)
    *_, unit = sch.get_loops(sch.get_block("B"))
    sch.rfactor(unit, 0)
    tir.assert_structural_equal(sch.func, row_sum_under_a_unit_loop_rfactor)
    verify_trace_roundtrip(sch, row_sum_under_a_unit_loop)
    assert_same_numbers(row_sum_under_a_unit_loop, sch.mod)


@T.prim_func
def row_argmax(
    V: T.Buffer((8, 64), "float32"), best_at: T.Buffer((8,), "int32"), best: T.Buffer((8,), "float32")
):
    for i, k in T.grid(8, 64):
        with T.block("argmax"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                best_at[vi] = -1
                best[vi] = T.min_value("float32")
            v_at: T.int32 = T.Select(best[vi] >= V[vi, vk], best_at[vi], vk)
            v_best: T.float32 = T.Select(best[vi] >= V[vi, vk], best[vi], V[vi, vk])
            best_at[vi] = v_at
            best[vi] = v_best


def test_rfactor_of_an_argmax_factors_both_buffers():
    sch = Schedule(row_argmax)
    _, k = sch.get_loops(sch.get_block("argmax"))
    _, k_1 = sch.split(k, [8, 8])
    rf = sch.rfactor(k_1, 1)
    assert [b.name for b in sch.mod["main"].body.block.alloc_buffers] == ["best_at_rf", "best_rf"]
    assert sch.get(rf).init is not None
    verify_trace_roundtrip(sch, row_argmax)
    values = np.random.default_rng(4).random((8, 64)).astype("float32")  # no ties
    at, best = np.zeros(8, "int32"), np.zeros(8, "float32")
    tir.interpret(sch.mod["main"], values, at, best)
    np.testing.assert_array_equal(at, values.argmax(axis=1))
    np.testing.assert_array_equal(best, values.max(axis=1))


def test_rfactor_refuses_an_argmax_that_does_not_start_from_its_identity():
    text = row_argmax.script().replace("best_at[vi] = -1", "best_at[vi] = 0")
    sch = Schedule(tir.parse(text))
    _, k = sch.get_loops(sch.get_block("argmax"))
    assert_fails_unchanged(sch, ReducerPatternError, "starts from index -1", sch.rfactor, k, 0)
