"""unsafe_hide_buffer_access: the signature loses the listed entries, the body and the numbers stay."""

from __future__ import annotations

import numpy as np
import pytest

import tir
from schedule import Schedule, ScheduleError
from schedule.hide_buffer_access import HideBufferAccessError
from tir import T

from .util import assert_fails_unchanged, verify_trace_roundtrip


@T.prim_func
def scatter_gather(
    A: T.Buffer((32,), "float32"),
    IA: T.Buffer((8,), "int32"),
    B: T.Buffer((32,), "float32"),
    IB: T.Buffer((8,), "int32"),
):
    for i in range(8):
        with T.block("move"):
            vi = T.axis.spatial(8, i)
            T.reads(A[IA[vi]], IA[vi])
            T.writes(B[IB[vi]], IB[vi])
            B[IB[vi]] = A[IA[vi]] + T.float32(1)


@T.prim_func
def scatter_gather_index_read_hidden(
    A: T.Buffer((32,), "float32"),
    IA: T.Buffer((8,), "int32"),
    B: T.Buffer((32,), "float32"),
    IB: T.Buffer((8,), "int32"),
):
    for i in range(8):
        with T.block("move"):
            vi = T.axis.spatial(8, i)
            T.reads(A[IA[vi]])
            T.writes(B[IB[vi]], IB[vi])
            B[IB[vi]] = A[IA[vi]] + T.float32(1)


@T.prim_func
def scatter_gather_both_writes_hidden(
    A: T.Buffer((32,), "float32"),
    IA: T.Buffer((8,), "int32"),
    B: T.Buffer((32,), "float32"),
    IB: T.Buffer((8,), "int32"),
):
    for i in range(8):
        with T.block("move"):
            vi = T.axis.spatial(8, i)
            T.reads(A[IA[vi]], IA[vi])
            T.writes()
            B[IB[vi]] = A[IA[vi]] + T.float32(1)


def _distinct_indices():
    """Random inputs where IA and IB hold distinct positions (so the scatter is well defined)."""
    rng = np.random.default_rng(7)
    return [
        rng.random(32).astype("float32"),
        rng.permutation(32)[:8].astype("int32"),
        rng.random(32).astype("float32"),
        rng.permutation(32)[:8].astype("int32"),
    ]


def test_hide_a_read_keeps_the_body():
    sch = Schedule(scatter_gather)
    sch.unsafe_hide_buffer_access(sch.get_block("move"), "read", [1])
    tir.assert_structural_equal(sch.mod["main"], scatter_gather_index_read_hidden)
    verify_trace_roundtrip(sch, scatter_gather)
    before, after = _distinct_indices(), _distinct_indices()
    tir.interpret(scatter_gather, *before)
    tir.interpret(sch.mod["main"], *after)
    np.testing.assert_array_equal(before[2], after[2])


def test_hide_several_writes_by_block_name():
    sch = Schedule(scatter_gather)
    sch.unsafe_hide_buffer_access("move", "write", [1, 0])
    tir.assert_structural_equal(sch.mod["main"], scatter_gather_both_writes_hidden)
    verify_trace_roundtrip(sch, scatter_gather)


@pytest.mark.parametrize(
    ("buf_type", "indices", "message"),
    [
        ("opaque", [0], "buf_type must be 'read' or 'write', got 'opaque'"),
        ("read", [2], "buf_index_array 2 is out of range: block 'move' reads 2 buffer(s)"),
        ("write", [-1], "buf_index_array -1 is out of range"),
    ],
)
def test_hide_refuses_unknown_kinds_and_indices(buf_type, indices, message):
    sch = Schedule(scatter_gather)
    block = sch.get_block("move")
    assert_fails_unchanged(
        sch, HideBufferAccessError, message, sch.unsafe_hide_buffer_access, block, buf_type, indices
    )


def test_schedule_errors_are_runtime_errors_as_in_tvm():
    sch = Schedule(scatter_gather)
    with pytest.raises(RuntimeError):
        sch.unsafe_hide_buffer_access(sch.get_block("move"), "read", [5])
    assert issubclass(ScheduleError, RuntimeError)
