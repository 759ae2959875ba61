"""blockize of a list of blocks: the wrapped program, its numbers, replay from the trace, the
iterator kinds the outer block gets, and refused lists that leave the schedule unchanged."""

from __future__ import annotations

import tir
from schedule import Schedule
from schedule.blockize_blocks import BlockizeBlocksError
from tests.schedule.util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip
from tir import T


@T.prim_func
def halves(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64, 32), "float32")):
    for r in range(5):
        for i, j in T.grid(4, 1):
            with T.block("left"):
                vr, vi, vj = T.axis.remap("SSS", [r, i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2) + T.Cast("float32", vr)
        for i, j in T.grid(64, 16):
            with T.block("right"):
                vr, vi, vj = T.axis.remap("SSS", [r, i, j])
                B[vi, vj + 16] = A[vi, vj + 16] * T.float32(5)


@T.prim_func
def halves_blockized(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64, 32), "float32")):
    for r in range(5):
        with T.block("outer_left_right_"):
            vr = T.axis.spatial(5, r)
            T.reads(A[0:64, 0:32])
            T.writes(B[0:64, 0:32])
            for i, j in T.grid(4, 1):
                with T.block("left"):
                    vr_i = T.axis.spatial(5, vr)
                    vi_i, vj_i = T.axis.remap("SS", [i, j])
                    T.reads(A[vi_i, vj_i])
                    T.writes(B[vi_i, vj_i])
                    B[vi_i, vj_i] = A[vi_i, vj_i] * T.float32(2) + T.Cast("float32", vr_i)
            for i, j in T.grid(64, 16):
                with T.block("right"):
                    vr_i = T.axis.spatial(5, vr)
                    vi_i, vj_i = T.axis.remap("SS", [i, j])
                    T.reads(A[vi_i, vj_i + 16])
                    T.writes(B[vi_i, vj_i + 16])
                    B[vi_i, vj_i + 16] = A[vi_i, vj_i + 16] * T.float32(5)


@T.prim_func
def three_stages(A: T.Buffer((4, 8), "float32"), D: T.Buffer((4, 8), "float32")):
    B = T.alloc_buffer((4, 8))
    C = T.alloc_buffer((4, 8))
    for i in range(4):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] * T.float32(2)
        for j in range(8):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = C[vi, vj] - A[vi, vj]


@T.prim_func
def row_sums(A: T.Buffer((4, 8), "float32"), S: T.Buffer((4,), "float32"), T_: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("S"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]
    for i, k in T.grid(4, 8):
        with T.block("T"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                T_[vi] = T.float32(0)
            T_[vi] = T_[vi] + A[vi, vk] * A[vi, vk]


def test_blockize_two_blocks_under_one_loop():
    sch = Schedule(halves)
    outer = sch.blockize([sch.get_block("left"), sch.get_block("right")], preserve_unit_iters=False)
    assert sch.get(outer).name == "outer_left_right_"
    tir.assert_structural_equal(sch.mod["main"], halves_blockized)
    verify_trace_roundtrip(sch, halves)
    assert_same_numbers(halves, sch.mod["main"])


def test_blockize_consecutive_blocks_leaves_the_rest_outside():
    sch = Schedule(three_stages)
    outer = sch.blockize([sch.get_block("C"), sch.get_block("D")])
    block = sch.get(outer)
    assert [iv.var.name for iv in block.iter_vars] == ["vi"]
    assert [sch.get(b).name for b in sch.get_child_blocks(outer)] == ["C", "D"]
    assert sch.get(sch.get_loops(sch.get_block("B"))[0]) is sch.get(sch.get_loops(outer)[0])
    verify_trace_roundtrip(sch, three_stages)
    assert_same_numbers(three_stages, sch.mod["main"])


def test_blocks_without_a_common_loop_wrap_at_the_root_with_no_iterators():
    sch = Schedule(row_sums)
    outer = sch.blockize([sch.get_block("S"), sch.get_block("T")])
    assert sch.get(outer).iter_vars == () and sch.get_loops(outer) == []
    verify_trace_roundtrip(sch, row_sums)
    assert_same_numbers(row_sums, sch.mod["main"])


def test_iterator_kinds_follow_the_bindings_that_use_each_loop():
    sch = Schedule(row_sums)
    sch.reorder(*reversed(sch.get_loops(sch.get_block("S"))))
    outer = sch.blockize([sch.get_block("S")])  # one block: wrapped under its innermost loop
    assert [(iv.var.name, iv.kind) for iv in sch.get(outer).iter_vars] == [
        ("vk", tir.IterKind.REDUCE),
        ("vi", tir.IterKind.SPATIAL),
    ]
    verify_trace_roundtrip(sch, row_sums)
    assert_same_numbers(row_sums, sch.mod["main"])


def test_refuses_an_unlisted_block_among_the_wrapped_statements():
    sch = Schedule(three_stages)
    blocks = [sch.get_block("B"), sch.get_block("D")]
    assert_fails_unchanged(sch, BlockizeBlocksError, "'C' lies among the blocks", sch.blockize, blocks)


def test_refuses_an_empty_list_and_a_repeated_block():
    sch = Schedule(three_stages)
    assert_fails_unchanged(sch, BlockizeBlocksError, "at least one block", sch.blockize, [])
    b = sch.get_block("B")
    assert_fails_unchanged(sch, BlockizeBlocksError, "the same block twice", sch.blockize, [b, b])


def test_refuses_a_block_together_with_the_block_that_holds_it():
    sch = Schedule(halves)
    outer = sch.blockize([sch.get_block("left"), sch.get_block("right")])
    blocks = [outer, sch.get_block("left")]
    assert_fails_unchanged(sch, BlockizeBlocksError, "which holds it", sch.blockize, blocks)
