"""Programs TVM accepts whose blocks share a name or use ordered (scan) iterators (issue 16).

TVM lets two blocks of a function share a name; a handle names one block, so ``get_block`` of
a repeated name fails with TVM's phrase ("blocks with the name") and the schedule stays as it
was, while the other blocks schedule as usual. A scan iterator (``T.axis.scan``) is neither
spatial nor a reduction: parallelizing its loop is refused, splitting it is not.
"""

from __future__ import annotations

import numpy as np

import tir
from schedule import Schedule
from schedule.errors import NotFoundError, ScheduleError
from tests.tir.test_tvm_script_constructs import running_sum
from tir import T

from .util import assert_fails_unchanged, verify_trace_roundtrip


@T.prim_func
def scale_twice(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("S"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("S"):
            vi = T.axis.spatial(16, i)
            B[vi] = B[vi] + T.float32(1)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] * B[vi]


@T.prim_func
def scale_twice_split_c(
    A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")
):
    for i in range(16):
        with T.block("S"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("S"):
            vi = T.axis.spatial(16, i)
            B[vi] = B[vi] + T.float32(1)
    for i_0, i_1 in T.grid(4, 4):
        with T.block("C"):
            vi = T.axis.spatial(16, i_0 * 4 + i_1)
            C[vi] = B[vi] * B[vi]


def test_get_block_of_a_repeated_name_says_how_many():
    sch = Schedule(scale_twice)
    assert_fails_unchanged(sch, NotFoundError, "Found 2 blocks with the name: 'S'", sch.get_block, "S")


def test_the_other_blocks_schedule_as_usual():
    sch = Schedule(scale_twice)
    (i,) = sch.get_loops(sch.get_block("C"))
    sch.split(i, [4, 4])
    tir.assert_structural_equal(sch.mod["main"], scale_twice_split_c)
    verify_trace_roundtrip(sch, scale_twice)
    rng = np.random.default_rng(16)
    a = rng.random(16).astype("float32")
    before = [a, np.zeros(16, "float32"), np.zeros(16, "float32")]
    after = [a, np.zeros(16, "float32"), np.zeros(16, "float32")]
    tir.interpret(scale_twice, *before)
    tir.interpret(sch.mod, *after)
    np.testing.assert_allclose(after[2], before[2], rtol=1e-6)
    np.testing.assert_allclose(after[2], (a * 2 + 1) ** 2, rtol=1e-6)


def test_get_block_of_a_missing_name_uses_tvms_phrase():
    sch = Schedule(scale_twice)
    assert_fails_unchanged(sch, NotFoundError, "Cannot find a block with the name: D", sch.get_block, "D")


def test_a_scan_loop_is_not_parallelized_but_splits():
    sch = Schedule(running_sum)
    (i,) = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(sch, ScheduleError, "does not have compact dataflow", sch.parallel, i)
    sch.split(i, [4, 4])
    verify_trace_roundtrip(sch, running_sum)
    a, b = np.random.default_rng(5).random(16).astype("float32"), np.zeros(16, "float32")
    tir.interpret(sch.mod, a, b)
    np.testing.assert_allclose(b, np.cumsum(a), rtol=1e-5)


def test_split_takes_minus_one_for_the_inferred_factor_and_quotes_tvm():
    sch = Schedule(running_sum)
    (i,) = sch.get_loops(sch.get_block("B"))
    outer, inner = sch.split(i, [-1, 4])
    assert [int(sch.get(loop).extent) for loop in (outer, inner)] == [4, 4]
    sch = Schedule(running_sum)
    (i,) = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(
        sch, ScheduleError, "Only one factor can be specified as -1 or none", sch.split, i, [-1, None]
    )
    assert_fails_unchanged(
        sch,
        ScheduleError,
        "The product of factors is not larger than or equal to the extent of loop",
        sch.split,
        i,
        [2, 4],
    )
