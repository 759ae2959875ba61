"""The Schedule itself: copies, handles, error rendering and restoring, trace data checks."""

from __future__ import annotations

import pytest

import tir
from schedule import Schedule, ScheduleError, StaleHandleError, Trace
from schedule.analysis import is_output_block
from schedule.errors import ArgumentError, NotFoundError
from schedule.instruction import PRIMITIVES, Primitive
from tir import T

from .util import assert_fails_unchanged, verify_trace_roundtrip


@T.prim_func
def vector_add(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = A[vi] + T.float32(1)


def test_prim_func_is_scheduled_as_main():
    sch = Schedule(vector_add)
    assert list(sch.mod.functions) == ["main"]
    assert sch.get(sch.get_block("B")).name == "B"


def test_copy_is_independent():
    sch = Schedule(vector_add)
    (i,) = sch.get_loops(sch.get_block("B"))
    other = sch.copy()
    sch.split(i, [None, 8])
    assert len(other.trace) == 2 and len(sch.trace) == 3
    other.split(i, [None, 16])  # the handle is still valid in the copy
    extents = [int(sch.get(lp).extent) for lp in sch.get_loops(sch.get_block("B"))]
    assert extents == [8, 8]
    extents = [int(other.get(lp).extent) for lp in other.get_loops(other.get_block("B"))]
    assert extents == [4, 16]


def test_stale_handle_names_the_primitive_that_removed_it():
    sch = Schedule(vector_add)
    (i,) = sch.get_loops(sch.get_block("B"))
    sch.split(i, [None, 8])
    err = assert_fails_unchanged(sch, StaleHandleError, "split removed", sch.unroll, i)
    assert "loop i" in str(err)


def test_unknown_block_suggests_a_name():
    sch = Schedule(vector_add)
    with pytest.raises(NotFoundError, match="Did you mean 'B'"):
        sch.get_block("BB")


def test_handle_from_another_schedule_is_refused():
    first, second = Schedule(vector_add), Schedule(vector_add)
    block = first.get_block("B")
    assert_fails_unchanged(second, NotFoundError, "does not belong to this schedule", second.get_loops, block)


def test_internal_error_is_rendered_and_restores_state(monkeypatch):
    def broken(state, loop):
        state.set_func(state.func.with_body(tir.Evaluate(tir.const(0))))
        raise RuntimeError("boom")

    monkeypatch.setitem(PRIMITIVES, "unroll", Primitive("unroll", broken))
    sch = Schedule(vector_add)
    (i,) = sch.get_loops(sch.get_block("B"))
    err = assert_fails_unchanged(sch, ScheduleError, "internal error (RuntimeError: boom)", sch.unroll, i)
    assert isinstance(err.__cause__, RuntimeError)


def test_trace_json_is_checked_before_anything_runs():
    with pytest.raises(ValueError, match="version"):
        Trace.from_json({"version": 99, "insts": []})
    with pytest.raises(ValueError, match="unknown kind 'os_system'"):
        Trace.from_json({"version": 1, "insts": [{"kind": "os_system", "args": {}, "outputs": []}]})
    bad_ref = {"kind": "get_loops", "args": {"block": {"rv": "b7"}}, "outputs": ["l0"]}
    with pytest.raises(ValueError, match="before it is defined"):
        Trace.from_json({"version": 1, "insts": [bad_ref]})


def test_replay_with_a_changed_decision_changes_the_schedule():
    sch = Schedule(vector_add, seed=3)
    (i,) = sch.get_loops(sch.get_block("B"))
    factors = sch.sample_perfect_tile(i, n=2, max_innermost_factor=64)
    sch.split(i, factors)
    index = next(iter(sch.trace.decisions))
    replayed = Schedule(vector_add)
    sch.trace.with_decision(index, [2, 32]).apply_to_schedule(replayed)
    extents = [int(replayed.get(lp).extent) for lp in replayed.get_loops(replayed.get_block("B"))]
    assert extents == [2, 32]


# ---------------------------------------------------------------- get_output_blocks


@T.prim_func
def tiles_into_output(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(4):
        with T.block("tile"):
            vi = T.axis.spatial(4, i)
            for x in range(4):
                with T.block("C"):
                    vx = T.axis.spatial(16, vi * 4 + x)
                    C[vx] = B[vx] + T.float32(1)


def test_get_output_blocks_lists_the_writers_of_unallocated_buffers():
    sch = Schedule(tiles_into_output)
    assert [sch.get(b).name for b in sch.get_output_blocks()] == ["tile", "C"]
    tile = sch.get_block("tile")
    assert [sch.get(b).name for b in sch.get_output_blocks(tile)] == ["C"]
    assert [inst.kind for inst in sch.trace.insts] == ["get_output_blocks", "get_block", "get_output_blocks"]
    verify_trace_roundtrip(sch, tiles_into_output)


def test_is_output_block_takes_a_schedule_and_a_handle_as_in_tvm():
    sch = Schedule(tiles_into_output)
    assert is_output_block(sch, sch.get_block("C")) and not is_output_block(sch, sch.get_block("B"))
    assert len(sch.trace.insts) == 2  # the two get_block calls, nothing for the query


def test_get_output_blocks_refuses_an_unknown_scope_and_a_loop():
    sch = Schedule(tiles_into_output)
    assert_fails_unchanged(
        sch, NotFoundError, "Cannot find a block with the name: tiles", sch.get_output_blocks, "tiles"
    )
    (i,) = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(sch, ArgumentError, "got loop i", sch.get_output_blocks, i)


@pytest.mark.parametrize(
    ("level", "text"),
    [
        ("detail", "Cannot find a block with the name: missing; no block named 'missing'"),
        ("fast", "Cannot find a block with the specified name"),
        ("none", "(not rendered)"),
    ],
)
def test_error_render_level_chooses_how_much_an_error_says(level, text):
    sch = Schedule(vector_add, error_render_level=level)
    with pytest.raises(NotFoundError) as info:
        sch.get_block("missing")
    (message,) = info.value.args
    assert text in message and text in str(info.value)
    if level != "detail":
        assert "Current program" not in str(info.value)
    assert len(sch.trace.insts) == 0
    assert sch.copy()._error_render_level == level


def test_error_render_level_must_be_known():
    with pytest.raises(ValueError, match="error_render_level must be one of detail, fast, none"):
        Schedule(vector_add, error_render_level="verbose")
