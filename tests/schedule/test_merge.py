"""merge: expected scripts, numbers, trace round trips, refused requests."""

from __future__ import annotations

import tir
from schedule import Schedule
from schedule.merge import MergeDependenceError, MergeShapeError
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip


@T.prim_func
def two_consumers(
    A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32"), D: T.Buffer((16, 16), "float32")
):
    B = T.alloc_buffer((32, 32))
    for i, j in T.grid(32, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i_0, j_0, i_1, j_1 in T.grid(4, 4, 8, 8):
        with T.block("C"):
            vi = T.axis.spatial(32, i_0 * 8 + i_1)
            vj = T.axis.spatial(32, j_0 * 8 + j_1)
            C[vi, vj] = B[vi, vj] + T.float32(1)
    for i_0, j_0, i_1, j_1 in T.grid(4, 4, 4, 4):
        with T.block("D"):
            vi = T.axis.spatial(16, i_0 * 4 + i_1)
            vj = T.axis.spatial(16, j_0 * 4 + j_1)
            D[vi, vj] = B[vi, vj] + T.float32(2)


@T.prim_func
def two_consumers_merged(
    A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32"), D: T.Buffer((16, 16), "float32")
):
    B = T.alloc_buffer((32, 32))
    for i, j in T.grid(32, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i_0_m, j_0_m in T.grid(4, 4):
        for i_1, j_1 in T.grid(8, 8):
            with T.block("C"):
                vi = T.axis.spatial(32, i_0_m * 8 + i_1)
                vj = T.axis.spatial(32, j_0_m * 8 + j_1)
                C[vi, vj] = B[vi, vj] + T.float32(1)
        for i_1, j_1 in T.grid(4, 4):
            with T.block("D"):
                vi = T.axis.spatial(16, i_0_m * 4 + i_1)
                vj = T.axis.spatial(16, j_0_m * 4 + j_1)
                D[vi, vj] = B[vi, vj] + T.float32(2)


def test_merge_two_levels():
    sch = Schedule(two_consumers)
    c_loops, d_loops = sch.get_loops(sch.get_block("C")), sch.get_loops(sch.get_block("D"))
    merged = sch.merge(c_loops[1], d_loops[1])
    assert sch.get(merged).loop_var.name == "j_0_m"
    tir.assert_structural_equal(sch.mod["main"], two_consumers_merged)
    verify_trace_roundtrip(sch, two_consumers)
    assert_same_numbers(two_consumers, sch.mod["main"])


def test_merge_one_level():
    sch = Schedule(two_consumers)
    c_loops, d_loops = sch.get_loops(sch.get_block("C")), sch.get_loops(sch.get_block("D"))
    sch.merge(c_loops[0], d_loops[0])
    assert len(sch.get_loops(sch.get_block("D"))) == 4
    verify_trace_roundtrip(sch, two_consumers)
    assert_same_numbers(two_consumers, sch.mod["main"])


def test_merge_refuses_a_producer_and_its_consumer():
    sch = Schedule(two_consumers)
    b_loop, c_loop = sch.get_loops(sch.get_block("B"))[0], sch.get_loops(sch.get_block("C"))[0]
    sch.split(b_loop, [4, 8])
    b_loop = sch.get_loops(sch.get_block("B"))[0]
    assert_fails_unchanged(sch, MergeDependenceError, "['B']", sch.merge, b_loop, c_loop)


def test_merge_refuses_different_extents():
    sch = Schedule(two_consumers)
    c_loops, d_loops = sch.get_loops(sch.get_block("C")), sch.get_loops(sch.get_block("D"))
    assert_fails_unchanged(sch, MergeShapeError, "same extent", sch.merge, c_loops[2], d_loops[2])


def test_merge_refuses_loops_at_different_depths():
    sch = Schedule(two_consumers)
    c_loops, d_loops = sch.get_loops(sch.get_block("C")), sch.get_loops(sch.get_block("D"))
    assert_fails_unchanged(sch, MergeShapeError, "same depth", sch.merge, c_loops[0], d_loops[1])


def test_merge_refuses_a_single_loop():
    from schedule.errors import ArgumentError

    sch = Schedule(two_consumers)
    loop = sch.get_loops(sch.get_block("C"))[0]
    assert_fails_unchanged(sch, ArgumentError, "at least two", sch.merge, loop)
