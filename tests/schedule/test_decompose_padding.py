"""decompose_padding: expected scripts, numbers, trace round trips, refused requests."""

from __future__ import annotations

import tir
from schedule import Schedule
from schedule.decompose_padding import LoopNotAboveBlockError, NotPaddingBlockError
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip


@T.prim_func
def pad_1d(x: T.Buffer((12,), "int32"), y: T.Buffer((18,), "int32")):
    for i in range(18):
        with T.block("y"):
            vi = T.axis.spatial(18, i)
            y[vi] = T.if_then_else(vi >= 3 and vi < 15, x[vi - 3], 7)


@T.prim_func
def pad_1d_decomposed(x: T.Buffer((12,), "int32"), y: T.Buffer((18,), "int32")):
    for i in range(18):
        with T.block("y_pad_const"):
            vi = T.axis.spatial(18, i)
            T.reads()
            T.writes(y[vi])
            y[vi] = 7
    for i in range(12):
        with T.block("y"):
            vi = T.axis.spatial(12, i)
            T.reads(x[vi])
            T.writes(y[vi + 3])
            y[vi + 3] = x[vi]


@T.prim_func
def pad_then_pool(x: T.Buffer((2, 20, 20), "float32"), out: T.Buffer((2, 20, 20), "float32")):
    padded = T.alloc_buffer((2, 22, 22))
    for c, h, w in T.grid(2, 22, 22):
        with T.block("padded"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            padded[vc, vh, vw] = T.if_then_else(
                vh < 1 or vh >= 21 or vw < 1 or vw >= 21, T.float32(0), x[vc, vh - 1, vw - 1]
            )
    for c, h, w, rh, rw in T.grid(2, 20, 20, 3, 3):
        with T.block("out"):
            vc, vh, vw, vrh, vrw = T.axis.remap("SSSRR", [c, h, w, rh, rw])
            with T.init():
                out[vc, vh, vw] = T.float32(0)
            out[vc, vh, vw] = out[vc, vh, vw] + padded[vc, vh + vrh, vw + vrw]


@T.prim_func
def plain_copy(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("y"):
            vi = T.axis.spatial(8, i)
            y[vi] = x[vi]


def test_decompose_padding_of_a_1d_pad():
    sch = Schedule(pad_1d)
    block = sch.get_block("y")
    fill = sch.decompose_padding(block, sch.get_loops(block)[0])
    assert sch.get(fill).name == "y_pad_const"
    tir.assert_structural_equal(sch.mod["main"], pad_1d_decomposed)
    verify_trace_roundtrip(sch, pad_1d)
    assert_same_numbers(pad_1d, sch.mod["main"])


def test_decompose_padding_with_the_pad_in_the_then_branch():
    sch = Schedule(pad_then_pool)
    pad = sch.get_block("padded")
    sch.decompose_padding(pad, sch.get_loops(pad)[1])
    assert len(sch.get_loops(sch.get_block("padded_pad_const"))) == 3
    verify_trace_roundtrip(sch, pad_then_pool)
    assert_same_numbers(pad_then_pool, sch.mod["main"])


def test_decompose_padding_after_compute_at():
    sch = Schedule(pad_then_pool)
    pool, pad = sch.get_block("out"), sch.get_block("padded")
    c, h, w, rh, rw = sch.get_loops(pool)
    h_outer, _ = sch.split(h, [4, 5])
    sch.compute_at(pad, h_outer)
    inner = sch.get_loops(pad)[2]
    sch.decompose_padding(pad, inner)
    fill_loops = sch.get_loops(sch.get_block("padded_pad_const"))
    assert [sch.get(x).loop_var.name for x in fill_loops[:2]] == ["c", "h_0"]
    verify_trace_roundtrip(sch, pad_then_pool)
    assert_same_numbers(pad_then_pool, sch.mod["main"])


def test_decompose_padding_at_the_outermost_shared_loop():
    sch = Schedule(pad_then_pool)
    pool, pad = sch.get_block("out"), sch.get_block("padded")
    c = sch.get_loops(pool)[0]
    sch.compute_at(pad, c)
    sch.decompose_padding(pad, sch.get_loops(pad)[0])
    assert sch.block_names() == ["padded_pad_const", "padded", "out"]
    assert sch.get(sch.get_loops(sch.get_block("padded_pad_const"))[0]) is not sch.get(c)
    assert_same_numbers(pad_then_pool, sch.mod["main"])


def test_decompose_padding_refuses_a_block_without_padding():
    sch = Schedule(plain_copy)
    block = sch.get_block("y")
    loop = sch.get_loops(block)[0]
    assert_fails_unchanged(sch, NotPaddingBlockError, "T.if_then_else", sch.decompose_padding, block, loop)


def test_decompose_padding_refuses_a_loop_of_another_block():
    sch = Schedule(pad_then_pool)
    pad = sch.get_block("padded")
    other = sch.get_loops(sch.get_block("out"))[0]
    assert_fails_unchanged(
        sch, LoopNotAboveBlockError, "not one of the loops", sch.decompose_padding, pad, other
    )


@T.prim_func
def copy_with_a_condition_that_always_holds(A: T.Buffer((12,), "float32"), B: T.Buffer((12,), "float32")):
    for i in range(12):
        with T.block("B"):
            vi = T.axis.spatial(12, i)
            B[vi] = T.if_then_else(vi >= 0 and vi < 12, A[vi], T.float32(0))


def test_can_decompose_padding_answers_without_recording_and_refuses_a_trivial_condition():
    sch = Schedule(copy_with_a_condition_that_always_holds)
    (loop,) = sch.get_loops(sch.get_block("B"))
    recorded = len(sch.trace)
    assert not sch.can_decompose_padding("B", loop)
    assert len(sch.trace) == recorded


@T.prim_func
def pad_2d_tiled(x: T.Buffer((10, 10), "float32"), y: T.Buffer((14, 14), "float32")):
    for h_0, h_1, w in T.grid(2, 7, 14):
        with T.block("y"):
            vh = T.axis.spatial(14, h_0 * 7 + h_1)
            vw = T.axis.spatial(14, w)
            y[vh, vw] = T.if_then_else(
                vh >= 2 and vh < 12 and vw >= 2 and vw < 12, x[vh - 2, vw - 2], T.float32(-1)
            )


@T.prim_func
def pad_2d_tiled_decomposed(x: T.Buffer((10, 10), "float32"), y: T.Buffer((14, 14), "float32")):
    for h_0 in range(2):
        for h_1, w in T.grid(7, 14):
            with T.block("y_pad_const"):
                vh = T.axis.spatial(14, h_0 * 7 + h_1)
                vw = T.axis.spatial(14, w)
                T.reads()
                T.writes(y[vh, vw])
                y[vh, vw] = T.float32(-1)
        for h_1, w in T.grid(7, 10):
            with T.block("y"):
                vh = T.axis.spatial(10, h_0 * 7 + h_1 - 2)
                vw = T.axis.spatial(10, w)
                T.where(h_0 * 7 + h_1 >= 2 and h_0 * 7 + h_1 < 12)
                T.reads(x[vh, vw])
                T.writes(y[vh + 2, vw + 2])
                y[vh + 2, vw + 2] = x[vh, vw]


def test_decompose_padding_shrinks_the_loops_it_can_and_predicates_the_others():
    # w drives vw alone: its loop shrinks to the 10 in-bound columns; vh is bound to a split
    # expression, so it keeps its loops and the rows are guarded by T.where.
    sch = Schedule(pad_2d_tiled)
    block = sch.get_block("y")
    sch.decompose_padding(block, sch.get_loops(block)[1])
    tir.assert_structural_equal(sch.mod["main"], pad_2d_tiled_decomposed)
    verify_trace_roundtrip(sch, pad_2d_tiled)
    assert_same_numbers(pad_2d_tiled, sch.mod["main"])


@T.prim_func
def pad_under_a_shorter_loop(x: T.Buffer((12,), "int32"), y: T.Buffer((18,), "int32")):
    for i in range(10):
        with T.block("y"):
            vi = T.axis.spatial(18, i)
            y[vi] = T.if_then_else(vi >= 3 and vi < 15, x[vi - 3], 7)


@T.prim_func
def pad_next_to_a_sibling(
    x: T.Buffer((12,), "int32"), y: T.Buffer((18,), "int32"), z: T.Buffer((18,), "int32")
):
    for i in range(18):
        with T.block("y"):
            vi = T.axis.spatial(18, i)
            y[vi] = T.if_then_else(vi >= 3 and vi < 15, x[vi - 3], 7)
        with T.block("z"):
            vi = T.axis.spatial(18, i)
            z[vi] = vi


def test_decompose_padding_keeps_a_loop_that_covers_less_than_the_domain_or_holds_siblings():
    # Shrinking i to [3, 15) would write elements 10..14 that the loop never reached, or cut
    # the sibling block z short: both keep their loop and predicate the copy instead.
    for func in (pad_under_a_shorter_loop, pad_next_to_a_sibling):
        sch = Schedule(func)
        block = sch.get_block("y")
        sch.decompose_padding(block, sch.get_loops(block)[0])
        assert (
            sch.get(sch.get_loops(sch.get_block("y"))[0]).extent.value
            == sch.get(sch.get_loops("y_pad_const")[0]).extent.value
        )
        verify_trace_roundtrip(sch, func)
        assert_same_numbers(func, sch.mod["main"])
