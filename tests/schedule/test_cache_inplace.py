"""cache_inplace: expected scripts, numbers, trace round trips, refused requests."""

from __future__ import annotations

import tir
from schedule import Schedule
from schedule.cache_inplace import InplaceBufferError
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip


@T.prim_func
def add_rows_in_place(A: T.Buffer((4, 16), "float32"), B: T.Buffer((16,), "float32")):
    for i, j in T.grid(4, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("RS", [i, j])
            B[vj] = B[vj] + A[vi, vj]


@T.prim_func
def add_rows_in_place_cached(A: T.Buffer((4, 16), "float32"), B: T.Buffer((16,), "float32")):
    B_shared = T.alloc_buffer((16,), scope="shared")
    for ax0 in range(16):
        with T.block("B_shared"):
            v0 = T.axis.spatial(16, ax0)
            B_shared[v0] = B[v0]
    for i, j in T.grid(4, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("RS", [i, j])
            B_shared[vj] = B_shared[vj] + A[vi, vj]
    for ax0 in range(16):
        with T.block("B_shared_1"):
            v0 = T.axis.spatial(16, ax0)
            B[v0] = B_shared[v0]


@T.prim_func
def shift_window(A: T.Buffer((32,), "float32")):
    for i in range(8):
        with T.block("A"):
            vi = T.axis.spatial(8, i)
            A[vi + 4] = A[vi + 4] * T.float32(2) + A[vi + 8]


@T.prim_func
def scale_then_update(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B0"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
        with T.block("B1"):
            vj = T.axis.spatial(16, i)
            B[vj] = B[vj] + T.float32(1)


def test_cache_inplace_of_an_accumulation():
    sch = Schedule(add_rows_in_place)
    copy_in, copy_back = sch.cache_inplace(sch.get_block("B"), 0, "shared")
    assert [sch.get(copy_in).name, sch.get(copy_back).name] == ["B_shared", "B_shared_1"]
    tir.assert_structural_equal(sch.mod["main"], add_rows_in_place_cached)
    verify_trace_roundtrip(sch, add_rows_in_place)
    assert_same_numbers(add_rows_in_place, sch.mod["main"])


def test_cache_inplace_copies_only_the_touched_region():
    sch = Schedule(shift_window)
    copy_in, copy_back = sch.cache_inplace(sch.get_block("A"), 0, "local")
    region = sch.get(copy_in).reads[0]
    loop = sch.get(sch.get_loops(copy_in)[0])
    assert (int(loop.extent), str(region.region[0].min)) == (12, "v0")
    verify_trace_roundtrip(sch, shift_window)
    assert_same_numbers(shift_window, sch.mod["main"])


def test_cache_inplace_refuses_a_buffer_the_block_only_reads():
    sch = Schedule(add_rows_in_place)
    block = sch.get_block("B")
    assert_fails_unchanged(sch, InplaceBufferError, "use cache_read", sch.cache_inplace, block, 1, "shared")


def test_cache_inplace_refuses_a_nest_shared_with_another_writer():
    sch = Schedule(scale_then_update)
    block = sch.get_block("B1")
    assert_fails_unchanged(sch, InplaceBufferError, "'B0'", sch.cache_inplace, block, 0, "local")
