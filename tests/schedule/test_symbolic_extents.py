"""Schedules of dynamic shapes (issue 16): loops of symbolic extent ``n`` through split, fuse,
sample_perfect_tile and compute_at, as TVM schedules them.

split infers the missing factor as a ceiling (``(n + 15) // 16``) and guards the block with
``T.where`` unless the analyzer proves the guard; fuse multiplies the extents; a loop of
symbolic extent gets TVM's tiling ``[-1, 1, ...]``. Every result is checked by the executor on
several sizes, including ones the factors do not divide.
"""

from __future__ import annotations

import numpy as np
import pytest

import tir
from schedule import Schedule
from tir import T

from .util import verify_trace_roundtrip


@T.prim_func
def scale_then_shift(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 8), "float32")
    C = T.match_buffer(c, (n, 8), "float32")
    B = T.alloc_buffer((n, 8))
    for i, j in T.grid(n, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(n, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def scale_then_shift_split_at(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 8), "float32")
    C = T.match_buffer(c, (n, 8), "float32")
    B = T.alloc_buffer((n, 8))
    for i_0 in range((n + 15) // 16):
        for ax0, ax1 in T.grid(16, 8):
            with T.block("B"):
                vi = T.axis.spatial(n, i_0 * 16 + ax0)
                vj = T.axis.spatial(8, ax1)
                T.where(i_0 * 16 + ax0 < n)
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i_1, j in T.grid(16, 8):
            with T.block("C"):
                vi = T.axis.spatial(n, i_0 * 16 + i_1)
                vj = T.axis.spatial(8, j)
                T.where(i_0 * 16 + i_1 < n)
                C[vi, vj] = B[vi, vj] + T.float32(1)


def assert_computes_for_sizes(func, sizes=(1, 5, 16, 37)) -> None:
    for n in sizes:
        a = np.random.default_rng(n).random((n, 8)).astype("float32")
        c = np.full((n, 8), np.nan, "float32")
        tir.interpret(func, a, c)
        np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6, err_msg=f"n={n}")


def test_split_and_compute_at_on_a_symbolic_extent():
    sch = Schedule(scale_then_shift)
    i, _ = sch.get_loops(sch.get_block("C"))
    outer, _ = sch.split(i, [None, 16])
    sch.compute_at(sch.get_block("B"), outer)
    tir.assert_structural_equal(sch.mod["main"], scale_then_shift_split_at)
    verify_trace_roundtrip(sch, scale_then_shift)
    assert_computes_for_sizes(sch.mod)


@pytest.mark.parametrize("factors", [[None, 4], [4, None], [2, None, 3], [3, 4]])
def test_split_factors_on_a_symbolic_extent(factors):
    sch = Schedule(scale_then_shift)
    sch.compute_inline(sch.get_block("B"))
    i, _ = sch.get_loops(sch.get_block("C"))
    sch.split(i, factors)
    assert "T.where(" in sch.mod.script()
    verify_trace_roundtrip(sch, scale_then_shift)
    # [3, 4] covers only 12 rows, as TVM allows: the check stops at what it covers.
    assert_computes_for_sizes(sch.mod, (1, 5, 12) if None not in factors else (1, 5, 16, 37))


def test_fuse_then_split_a_symbolic_extent():
    sch = Schedule(scale_then_shift)
    sch.compute_inline(sch.get_block("B"))
    fused = sch.fuse(*sch.get_loops(sch.get_block("C")))
    assert str(sch.get(fused).extent) == "n * 8"
    sch.split(fused, [None, 32])
    verify_trace_roundtrip(sch, scale_then_shift)
    assert_computes_for_sizes(sch.mod)


def test_a_sampled_tiling_of_a_symbolic_extent_replays():
    sch = Schedule(scale_then_shift, seed=3)
    i, _ = sch.get_loops(sch.get_block("C"))
    tiles = sch.sample_perfect_tile(i, 2)
    sch.split(i, tiles)
    verify_trace_roundtrip(sch, scale_then_shift)
    assert_computes_for_sizes(sch.mod)


def test_split_of_n_times_8_by_8_needs_no_guard_nor_does_compute_at_under_it():
    sch = Schedule(scale_then_shift)
    fused = sch.fuse(*sch.get_loops(sch.get_block("C")))
    outer, inner = sch.split(fused, [None, 8])
    assert str(sch.get(outer).extent) == "n" and sch.get(inner).extent.value == 8
    sch.compute_at(sch.get_block("B"), outer)
    # the outer loop covers [0, n) and the inner one [0, 8): every index is provably in range
    assert "T.where(" not in sch.mod.script()
    verify_trace_roundtrip(sch, scale_then_shift)
    assert_computes_for_sizes(sch.mod)
