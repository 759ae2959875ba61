"""reverse_compute_at of consumers that are not pointwise in the producer's loop: the consumer's
loops are cut to what one iteration produces, every instance still runs (checked against the
reference executor on random inputs, outputs included, so a lost instance shows), and a read
that one iteration cannot serve (a window across a tile edge) is refused, never computed wrong."""

from __future__ import annotations

import pytest

from schedule import Schedule
from schedule.compute_at import ReadOutsideIterationError
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip


@T.prim_func
def shifted_pair(A: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 15), "float32")):
    C = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 15):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] + C[vi, vj + 1]


@T.prim_func
def shifted_pair_read_apart(A: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 15), "float32")):
    C = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 15):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(C[vi, vj], C[vi, vj + 1])
            T.writes(D[vi, vj])
            D[vi, vj] = C[vi, vj] + C[vi, vj + 1]


@T.prim_func
def transposed(A: T.Buffer((16, 8), "float32"), D: T.Buffer((8, 16), "float32")):
    C = T.alloc_buffer((16, 8))
    for i, j in T.grid(16, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vj, vi] + T.float32(1)


@T.prim_func
def strided(A: T.Buffer((15,), "float32"), D: T.Buffer((7,), "float32")):
    C = T.alloc_buffer((15,))
    for i in range(15):
        with T.block("C"):
            vi = T.axis.spatial(15, i)
            C[vi] = A[vi] * T.float32(2)
    for i in range(7):
        with T.block("D"):
            vi = T.axis.spatial(7, i)
            D[vi] = C[vi * 2 + 1]


def _producer_loop(sch: Schedule, where: str):
    """The loop of block C to move D under: ``i``, ``j``, or the outer part of a split of one."""
    loops = sch.get_loops(sch.get_block("C"))
    if where in ("i", "j"):
        return loops["ij".index(where)]
    outer, _ = sch.split(loops["ij".index(where[0])], [None, 3 if len(loops) == 1 else 4])
    return outer


@pytest.mark.parametrize("func", [shifted_pair, shifted_pair_read_apart])
@pytest.mark.parametrize("where", ["i", "i_0"])
def test_a_window_inside_what_each_iteration_produces_is_kept(where, func):
    sch = Schedule(func)
    sch.reverse_compute_at(sch.get_block("D"), _producer_loop(sch, where))
    assert_same_numbers(func, sch.mod)
    verify_trace_roundtrip(sch, func)


@pytest.mark.parametrize("func", [shifted_pair, shifted_pair_read_apart])
@pytest.mark.parametrize("where", ["j", "j_0"])
def test_a_window_across_the_iterations_is_refused(where, func):
    sch = Schedule(func)
    loop = _producer_loop(sch, where)
    assert_fails_unchanged(
        sch, ReadOutsideIterationError, "dimension 1 of C", sch.reverse_compute_at, sch.get_block("D"), loop
    )


@pytest.mark.parametrize("where", ["i", "j", "i_0", "j_0"])
def test_a_transposing_consumer_is_cut_to_each_tile(where):
    sch = Schedule(transposed)
    sch.reverse_compute_at(sch.get_block("D"), _producer_loop(sch, where))
    assert_same_numbers(transposed, sch.mod)
    verify_trace_roundtrip(sch, transposed)


def test_a_strided_consumer_is_cut_to_each_tile():
    sch = Schedule(strided)
    sch.reverse_compute_at(sch.get_block("D"), _producer_loop(sch, "i_0"))
    assert_same_numbers(strided, sch.mod)
    verify_trace_roundtrip(sch, strided)


# fmt: off
@T.prim_func
def two_producers_two_tiles(A: T.Buffer((16,), "float32"), B: T.Buffer((32,), "float32"),
                            D: T.Buffer((16,), "float32")):
    X = T.alloc_buffer((16,))
    Y = T.alloc_buffer((32,))
    for i in range(4):
        for j in range(4):
            with T.block("X"):
                v = T.axis.spatial(16, i * 4 + j)
                X[v] = A[v] * T.float32(2)
        for j in range(8):
            with T.block("Y"):
                v = T.axis.spatial(32, i * 8 + j)
                Y[v] = B[v] + T.float32(1)
    for i in range(16):
        with T.block("D"):
            v = T.axis.spatial(16, i)
            D[v] = X[v] + Y[v]
# fmt: on


def test_producers_of_different_tiles_in_one_iteration_are_refused():
    """Review find: iteration i writes X[4i, 4i + 4) and Y[8i, 8i + 8); cutting D to both tiles at
    once left D[4:16] computed by no iteration."""
    sch = Schedule(two_producers_two_tiles)
    i = sch.get_loops(sch.get_block("X"))[0]
    assert_fails_unchanged(
        sch,
        ReadOutsideIterationError,
        "produce different tiles",
        sch.reverse_compute_at,
        sch.get_block("D"),
        i,
    )
    assert_same_numbers(two_producers_two_tiles, sch.mod)
