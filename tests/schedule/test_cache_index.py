"""cache_index: expected scripts, numbers, trace round trips, refused requests."""

from __future__ import annotations

import pytest

import tir
from schedule import Schedule
from schedule.errors import ArgumentError
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip


@T.prim_func
def resize(A: T.Buffer((1, 3, 20, 20), "float32"), B: T.Buffer((1, 3, 40, 40), "float32")):
    for i0, i1, i2, i3 in T.grid(1, 3, 40, 40):
        with T.block("A"):
            n, c, vi, vj = T.axis.remap("SSSS", [i0, i1, i2, i3])
            B[n, c, vi, vj] = A[n, c, vi // 4 + vj // 4, vj // 2]


@T.prim_func
def resize_cached(A: T.Buffer((1, 3, 20, 20), "float32"), B: T.Buffer((1, 3, 40, 40), "float32")):
    index_var_0 = T.alloc_buffer((40, 40), "int32")
    index_var_1 = T.alloc_buffer((40,), "int32")
    for ax0, ax1 in T.grid(40, 40):
        with T.block("index_0"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads()
            T.writes(index_var_0[v0, v1])
            index_var_0[v0, v1] = v0 // 4 + v1 // 4
    for ax0 in range(40):
        with T.block("index_1"):
            v0 = T.axis.spatial(40, ax0)
            T.reads()
            T.writes(index_var_1[v0])
            index_var_1[v0] = v0 // 2
    for i0, i1, i2, i3 in T.grid(1, 3, 40, 40):
        with T.block("A"):
            n, c, vi, vj = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(A[n, c, vi // 4 + vj // 4, vj // 2], index_var_0[vi, vj], index_var_1[vj])
            T.writes(B[n, c, vi, vj])
            B[n, c, vi, vj] = A[n, c, index_var_0[vi, vj], index_var_1[vj]]


@T.prim_func
def copy(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi]


def test_cache_index_of_a_resize():
    sch = Schedule(resize)
    blocks = sch.cache_index(sch.get_block("A"), "global")
    assert [sch.get(b).name for b in blocks] == ["index_0", "index_1"]
    tir.assert_structural_equal(sch.mod["main"], resize_cached)
    verify_trace_roundtrip(sch, resize)
    assert_same_numbers(resize, sch.mod["main"])


def test_cache_index_without_index_arithmetic_changes_nothing():
    sch = Schedule(copy)
    assert sch.cache_index(sch.get_block("B"), "global") == []
    tir.assert_structural_equal(sch.mod["main"], copy)


def test_cache_index_refuses_common_subexpression_caching():
    sch = Schedule(resize)
    block = sch.get_block("A")
    assert_fails_unchanged(sch, ArgumentError, "not implemented", sch.cache_index, block, "global", 2)


@pytest.mark.parametrize("scope", ["texture", 3])
def test_cache_index_refuses_unknown_scopes(scope):
    from schedule.cache_stage import StorageScopeError

    sch = Schedule(resize)
    block = sch.get_block("A")
    assert_fails_unchanged(sch, StorageScopeError, "unknown storage scope", sch.cache_index, block, scope)
