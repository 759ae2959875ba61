"""ScheduleState._get_cached_flags: affine binding, region cover and stage pipeline of a block, as TVM
computes them; region cover compares what a consumer reads with what its producers write in the same
iteration of the loops they share, and never bridges a gap between two producers."""

from __future__ import annotations

import tir
from schedule import Schedule, ScheduleState
from schedule.state import CachedFlags
from tir import T


@T.prim_func
def split_producers(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    X = T.alloc_buffer((16,))
    for i in range(8):
        with T.block("low"):
            vi = T.axis.spatial(8, i)
            X[vi] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("high"):
            vi = T.axis.spatial(8, i)
            X[vi + 8] = A[vi + 8] * T.float32(2)
    for i in range(16):
        with T.block("use"):
            vi = T.axis.spatial(16, i)
            B[vi] = X[vi]


@T.prim_func
def split_producers_with_gap(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    X = T.alloc_buffer((16,))
    for i in range(7):
        with T.block("low"):
            vi = T.axis.spatial(7, i)
            X[vi] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("high"):
            vi = T.axis.spatial(8, i)
            X[vi + 8] = A[vi + 8] * T.float32(2)
    for i in range(16):
        with T.block("use"):
            vi = T.axis.spatial(16, i)
            B[vi] = X[vi]


@T.prim_func
def previous_iteration(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    X = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("make"):
            vi = T.axis.spatial(16, i)
            X[vi] = A[vi]
        with T.block("use"):
            vi = T.axis.spatial(16, i)
            B[vi] = T.if_then_else(vi >= 1, X[vi - 1], T.float32(0))


@T.prim_func
def same_iteration(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    X = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("make"):
            vi = T.axis.spatial(16, i)
            X[vi] = A[vi]
        with T.block("use"):
            vi = T.axis.spatial(16, i)
            B[vi] = X[vi] * T.float32(3)


def test_adjacent_producers_cover_their_consumer():
    state = ScheduleState(split_producers)
    sch = Schedule(split_producers)
    for name in ("low", "high", "use", "root"):
        flags = state._get_cached_flags(state.get_sref(sch.get(sch.get_block(name))))
        assert flags == CachedFlags(affine_binding=True, region_cover=True, stage_pipeline=True), name


def test_a_gap_between_producers_is_not_covered():
    state = ScheduleState(split_producers_with_gap)
    sch = Schedule(split_producers_with_gap)
    use = state._get_cached_flags(state.get_sref(sch.get(sch.get_block("use"))))
    root = state._get_cached_flags(state.get_sref(sch.get(sch.get_block("root"))))
    assert use == CachedFlags(affine_binding=True, region_cover=False, stage_pipeline=True)
    assert root == CachedFlags(affine_binding=True, region_cover=True, stage_pipeline=False)


def test_reading_the_previous_iteration_is_not_covered():
    for func, covered in ((previous_iteration, False), (same_iteration, True)):
        state = ScheduleState(func)
        sch = Schedule(func)
        use = state._get_cached_flags(state.get_sref(sch.get(sch.get_block("use"))))
        root = state._get_cached_flags(state.get_sref(sch.get(sch.get_block("root"))))
        assert use.region_cover is covered and root.stage_pipeline is covered


def test_a_scope_state_takes_a_prim_func():
    state = ScheduleState(same_iteration)
    assert isinstance(state.mod, tir.IRModule) and state.func_name == "main"
