"""rolling_buffer: expected scripts, numbers, trace round trips, refused requests."""

from __future__ import annotations

import numpy as np

import tir
from codegen import build
from schedule import Schedule
from schedule.rolling_buffer import RollingBufferError
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, random_args, verify_trace_roundtrip


@T.prim_func
def two_box_sums(A: T.Buffer((4, 12), "int32"), C: T.Buffer((4, 8), "int32")):
    B = T.alloc_buffer((4, 10), "int32")
    for c, i, k in T.grid(4, 10, 3):
        with T.block("B"):
            cc, vi, vk = T.axis.remap("SSR", [c, i, k])
            with T.init():
                B[cc, vi] = 0
            B[cc, vi] = B[cc, vi] + A[cc, vi + vk]
    for c, i, k in T.grid(4, 8, 3):
        with T.block("C"):
            cc, vi, vk = T.axis.remap("SSR", [c, i, k])
            with T.init():
                C[cc, vi] = 0
            C[cc, vi] = C[cc, vi] + B[cc, vi + vk]


@T.prim_func
def two_box_sums_rolled(A: T.Buffer((4, 12), "int32"), C: T.Buffer((4, 8), "int32")):
    B = T.alloc_buffer((4, 6), "int32")
    for c, i_0 in T.grid(4, 2):
        for ax0, ax1 in T.grid(6, 3):
            with T.block("B"):
                T.where(i_0 < 1 or 2 <= ax0)  # noqa: SIM300 - as printed; the 2 rows the previous window computed
                cc = T.axis.spatial(4, c)
                vi = T.axis.opaque(10, i_0 * 4 + ax0)
                vk = T.axis.reduce(3, ax1)
                T.reads(A[cc, vi + vk])
                T.writes(B[cc, vi % 6])
                with T.init():
                    B[cc, vi % 6] = 0
                B[cc, vi % 6] = B[cc, vi % 6] + A[cc, vi + vk]
        for i_1, k in T.grid(4, 3):
            with T.block("C"):
                cc = T.axis.spatial(4, c)
                vi = T.axis.opaque(8, i_0 * 4 + i_1)
                vk = T.axis.reduce(3, k)
                T.reads(B[cc, (vi + vk) % 6])
                T.writes(C[cc, vi])
                with T.init():
                    C[cc, vi] = 0
                C[cc, vi] = C[cc, vi] + B[cc, (vi + vk) % 6]


@T.prim_func
def max_pool_twice(A: T.Buffer((12, 12), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((10, 10))
    for h, w, rh, rw in T.grid(10, 10, 3, 3):
        with T.block("B"):
            vh, vw, vrh, vrw = T.axis.remap("SSRR", [h, w, rh, rw])
            with T.init():
                B[vh, vw] = T.float32(-1000)
            B[vh, vw] = T.max(B[vh, vw], A[vh + vrh, vw + vrw])
    for h, w, rh, rw in T.grid(8, 8, 3, 3):
        with T.block("C"):
            vh, vw, vrh, vrw = T.axis.remap("SSRR", [h, w, rh, rw])
            with T.init():
                C[vh, vw] = T.float32(-1000)
            C[vh, vw] = T.max(C[vh, vw], B[vh + vrh, vw + vrw])


def _tile_and_compute_at(sch: Schedule, h_factor: int, w_factor: int):
    h, w, _, _ = sch.get_loops(sch.get_block("C"))
    ho, hi = sch.split(h, [None, h_factor])
    wo, wi = sch.split(w, [None, w_factor])
    sch.reorder(ho, wo, hi, wi)
    sch.compute_at(sch.get_block("B"), wo)


def test_rolling_buffer_of_a_box_filter():
    sch = Schedule(two_box_sums)
    _, i, _ = sch.get_loops(sch.get_block("C"))
    i_0, _ = sch.split(i, [2, 4])
    sch.compute_at(sch.get_block("B"), i_0)
    sch.rolling_buffer(sch.get_block("B"), 0)
    tir.assert_structural_equal(sch.mod["main"], two_box_sums_rolled)
    verify_trace_roundtrip(sch, two_box_sums)
    assert_same_numbers(two_box_sums, sch.mod["main"])


def test_rolling_buffer_of_a_pooling_tiled_in_h():
    sch = Schedule(max_pool_twice)
    _tile_and_compute_at(sch, 4, 8)
    sch.rolling_buffer(sch.get_block("B"), 0)
    shape = [int(n) for n in sch.mod["main"].body.block.alloc_buffers[0].shape]
    assert shape == [6, 10]
    verify_trace_roundtrip(sch, max_pool_twice)
    assert_same_numbers(max_pool_twice, sch.mod["main"])


def test_rolling_buffer_of_a_pooling_tiled_in_h_and_w():
    sch = Schedule(max_pool_twice)
    _tile_and_compute_at(sch, 4, 4)
    sch.rolling_buffer(sch.get_block("B"), 0)
    shape = [int(n) for n in sch.mod["main"].body.block.alloc_buffers[0].shape]
    assert shape == [6, 10]  # the first axis whose window overlaps rolls, as TVM
    assert_same_numbers(max_pool_twice, sch.mod["main"])


def test_rolling_buffer_skips_what_the_previous_tile_computed_along_each_sliding_axis():
    sch = Schedule(max_pool_twice)
    _tile_and_compute_at(sch, 4, 4)
    sch.rolling_buffer(sch.get_block("B"), 0)
    assert "T.where((h_0 < 1 or 2 <= ax0) and (w_0 < 1 or 2 <= ax1))" in sch.mod["main"].script()
    verify_trace_roundtrip(sch, max_pool_twice)
    assert_same_numbers(max_pool_twice, sch.mod["main"])


def test_rolled_buffer_outlives_its_sliding_loop_in_compiled_c():
    # The producer skips rows the previous tile computed, so the compiled kernel must keep the
    # rolled buffer alive across iterations of the sliding loop (allocated above it).
    sch = Schedule(max_pool_twice)
    _tile_and_compute_at(sch, 4, 4)
    sch.rolling_buffer(sch.get_block("B"), 0)
    args = random_args(max_pool_twice, seed=3)
    want = [a.copy() for a in args]
    tir.interpret(max_pool_twice, *want)
    build(sch.mod["main"], "c")["main"](*args)
    np.testing.assert_allclose(args[1], want[1], rtol=1e-6)


@T.prim_func
def doubled_then_shifted(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(2)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi] + T.float32(1)


def test_rolling_buffer_refuses_windows_that_do_not_overlap():
    sch = Schedule(doubled_then_shifted)
    i_0, _ = sch.split(sch.get_loops(sch.get_block("C"))[0], [2, 4])
    sch.compute_at(sch.get_block("B"), i_0)
    block = sch.get_block("B")
    assert_fails_unchanged(sch, RollingBufferError, "overlap", sch.rolling_buffer, block, 0)


def test_rolling_buffer_refuses_a_producer_not_computed_at_its_consumer():
    sch = Schedule(two_box_sums)
    block = sch.get_block("B")
    assert_fails_unchanged(sch, RollingBufferError, "compute_at", sch.rolling_buffer, block, 0)


def test_rolling_buffer_refuses_a_parallel_sliding_loop():
    sch = Schedule(two_box_sums)
    _, i, _ = sch.get_loops(sch.get_block("C"))
    i_0, _ = sch.split(i, [2, 4])
    sch.compute_at(sch.get_block("B"), i_0)
    sch.parallel(i_0)
    block = sch.get_block("B")
    assert_fails_unchanged(sch, RollingBufferError, "serial", sch.rolling_buffer, block, 0)


def test_rolling_buffer_refuses_a_function_output():
    sch = Schedule(two_box_sums)
    block = sch.get_block("C")
    assert_fails_unchanged(sch, RollingBufferError, "parameter", sch.rolling_buffer, block, 0)


def test_rolling_buffer_refuses_a_window_cut_by_a_predicate():
    sch = Schedule(max_pool_twice)
    _tile_and_compute_at(sch, 6, 8)
    block = sch.get_block("B")
    # the predicate clips B's last window (T.min(..., 9)), which no longer holds what C reads
    assert_fails_unchanged(
        sch, RollingBufferError, "what the block writes in the same iteration", sch.rolling_buffer, block, 0
    )
