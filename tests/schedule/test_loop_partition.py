"""loop_partition: expected scripts, numbers, trace round trips, refused requests."""

from __future__ import annotations

import numpy as np
import pytest

import tir
from schedule import Schedule
from schedule.analysis import NonPositiveFactorError, NotSingleInferFactorError, WrongLoopKindError
from schedule.errors import ArgumentError
from schedule.loop_partition import PartitionFactorError
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip


@T.prim_func
def scale(A: T.Buffer((20, 8), "float32"), B: T.Buffer((20, 8), "float32")):
    for i, j in T.grid(20, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)


@T.prim_func
def scale_partitioned(A: T.Buffer((20, 8), "float32"), B: T.Buffer((20, 8), "float32")):
    # TVM's form: the parts in one opaque block, each in its own; regions cover each part (the
    # opaque blocks' regions, empty in TVM, are inferred here: see the cache_read test)
    with T.block("B_i_common"):
        with T.block("B_i0_partition"):
            for i0, j in T.grid(3, 8):
                with T.block("B_i0"):
                    vi, vj = T.axis.remap("SS", [i0, j])
                    T.reads(A[0:3, 0:8])
                    T.writes(B[0:3, 0:8])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
        with T.block("B_i1_partition"):
            for i1 in range(3, 4):
                for j in range(8):
                    with T.block("B_i1"):
                        vi = T.axis.spatial((3, 4), i1)
                        vj = T.axis.spatial(8, j)
                        T.reads(A[3, 0:8])
                        T.writes(B[3, 0:8])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
        with T.block("B_i2_partition"):
            for i2 in range(4, 20):
                for j in range(8):
                    with T.block("B_i2"):
                        vi = T.axis.spatial((4, 20), i2)
                        vj = T.axis.spatial(8, j)
                        T.reads(A[4:20, 0:8])
                        T.writes(B[4:20, 0:8])
                        B[vi, vj] = A[vi, vj] * T.float32(2)


@T.prim_func
def produce_consume(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi] + T.float32(1)
        with T.block("C"):
            vj = T.axis.spatial(16, i)
            C[vj] = C[vj] * T.float32(3)


def _computing_blocks(sch: Schedule) -> list[str]:
    """The blocks with iterators, leaving out loop_partition's opaque wrappers."""
    return [n for n in sch.block_names(None) if sch.get(sch.get_block(n)).iter_vars]


def test_loop_partition_with_a_remainder_part():
    sch = Schedule(scale)
    parts = sch.loop_partition(sch.get_loops(sch.get_block("B"))[0], [3, 1])
    assert len(parts) == 3
    tir.assert_structural_equal(sch.mod["main"], scale_partitioned)
    verify_trace_roundtrip(sch, scale)
    assert_same_numbers(scale, sch.mod["main"])


def test_loop_partition_with_an_inferred_part_then_again_inside():
    sch = Schedule(scale)
    head, middle, tail = sch.loop_partition(sch.get_loops(sch.get_block("B"))[0], [None, 1, 4])
    assert [int(sch.get(loop).extent) for loop in (head, middle, tail)] == [15, 1, 4]
    inner = sch.get_loops(sch.get_block("B_i1"))[1]
    sch.loop_partition(inner, [2, None])
    assert _computing_blocks(sch) == ["B_i0", "B_i1_j0", "B_i1_j1", "B_i2"]
    verify_trace_roundtrip(sch, scale)
    assert_same_numbers(scale, sch.mod["main"])


def test_loop_partition_copies_every_block_of_the_body():
    sch = Schedule(produce_consume)
    sch.loop_partition(sch.get_loops(sch.get_block("B"))[0], [10])
    assert _computing_blocks(sch) == ["B_i0", "C_i0", "B_i1", "C_i1"]
    verify_trace_roundtrip(sch, produce_consume)
    assert_same_numbers(produce_consume, sch.mod["main"])


@T.prim_func
def two_stages(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] * T.float32(3)


def test_loop_partition_keeps_the_parts_visible_to_a_later_cache_read():
    # Empty regions on the wrapper blocks (TVM's) would let cache_read copy B before it is written.
    sch = Schedule(two_stages)
    sch.loop_partition(sch.get_loops(sch.get_block("B"))[0], [10])
    assert [sch.get(b).name for b in sch.get_producers(sch.get_block("C"))] == ["B_i_common"]
    sch.cache_read(sch.get_block("C"), 0, "global")
    assert_same_numbers(two_stages, sch.mod["main"])


def test_loop_partition_without_unit_loops():
    sch = Schedule(scale)
    parts = sch.loop_partition(sch.get_loops(sch.get_block("B"))[0], [1, None], preserve_unit_iters=False)
    assert len(parts) == 1
    assert len(sch.get_loops(sch.get_block("B_i0"))) == 1
    assert_same_numbers(scale, sch.mod["main"])


def test_loop_partition_then_vectorize_the_main_part():
    sch = Schedule(scale)
    i = sch.get_loops(sch.get_block("B"))[0]
    sch.loop_partition(i, [16])
    sch.vectorize(sch.get_loops(sch.get_block("B_i0"))[1])
    assert_same_numbers(scale, sch.mod["main"])


@pytest.mark.parametrize("infer", [None, -1, np.int64(-1)])
def test_loop_partition_takes_tvms_spellings_of_the_inferred_part(infer):
    sch = Schedule(scale)
    parts = sch.loop_partition(sch.get_loops(sch.get_block("B"))[0], [np.int64(3), infer, 4])
    assert [int(sch.get(loop).extent) for loop in parts] == [3, 13, 4]
    assert "-1" not in sch.trace.as_python()[-1]  # recorded as None, as split records it
    verify_trace_roundtrip(sch, scale)
    assert_same_numbers(scale, sch.mod["main"])


def test_loop_partition_takes_a_sampled_factor():
    sch = Schedule(scale)
    i = sch.get_loops(sch.get_block("B"))[0]
    _, inner = sch.sample_perfect_tile(i, n=2, max_innermost_factor=4)  # 1, 2 or 4: room for None
    head, tail = sch.loop_partition(i, [None, inner])
    assert int(sch.get(tail).extent) == int(sch.get(inner)) and int(sch.get(head).extent) == 20 - int(
        sch.get(inner)
    )
    assert_same_numbers(scale, sch.mod["main"])


@pytest.mark.parametrize(
    "factors, error, phrase",
    [
        ([None, None], NotSingleInferFactorError, "only one factor can be None"),
        ([None, -1], NotSingleInferFactorError, "only one factor can be None"),
        ([0, 4], NonPositiveFactorError, "position 0 is 0"),
        ([4, -2], NonPositiveFactorError, "position 1 is -2"),
        ([2.5, 4], ArgumentError, "position 0 is 2.5"),
        ([], ArgumentError, "non-empty list"),
        ([12, 9], PartitionFactorError, "add up to 21"),
        ([20, None], PartitionFactorError, "nothing"),
    ],
)
def test_loop_partition_refuses_bad_factors_as_split_does(factors, error, phrase):
    sch = Schedule(scale)
    loop = sch.get_loops(sch.get_block("B"))[0]
    assert_fails_unchanged(sch, error, phrase, sch.loop_partition, loop, factors)


def test_loop_partition_refuses_a_parallel_loop():
    sch = Schedule(scale)
    loop = sch.get_loops(sch.get_block("B"))[0]
    sch.parallel(loop)
    assert_fails_unchanged(sch, WrongLoopKindError, "serial", sch.loop_partition, loop, [4])


def test_loop_partition_refuses_an_annotated_loop():
    sch = Schedule(scale)
    loop = sch.get_loops(sch.get_block("B"))[0]
    sch.annotate(loop, "pragma_unroll_explicit", 1)
    assert_fails_unchanged(sch, ArgumentError, "annotations", sch.loop_partition, loop, [4])
