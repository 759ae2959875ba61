"""Sampling primitives: seeded determinism, decision replay, distributions, argument errors."""

# ruff: noqa: F821  (script parameters and buffers are names only the parser resolves)

from __future__ import annotations

import math
from collections import Counter
from itertools import product

import pytest

import tir
from schedule import Schedule, Trace
from schedule.errors import ArgumentError
from schedule.sampling import (
    InvalidDecisionError,
    InvalidProbabilitiesError,
    InvalidTileError,
)
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip

# fmt: off
# ---------------------------------------------------------------- fixtures


@T.prim_func
def vector_add(A: T.Buffer((96,), "float32"), B: T.Buffer((96,), "float32")):
    for i in range(96):
        with T.block("B"):
            vi = T.axis.spatial(96, i)
            B[vi] = A[vi] + T.float32(1)


@T.prim_func
def elementwise(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def matmul_relu(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                D: T.Buffer((16, 16), "float32")):
    C = T.alloc_buffer((16, 16))
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))


@T.prim_func
def symbolic(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi]
# fmt: on


def _tilings(extent: int, n: int, max_innermost: int) -> set[tuple[int, ...]]:
    divisors = [d for d in range(1, extent + 1) if extent % d == 0]
    return {t for t in product(divisors, repeat=n) if math.prod(t) == extent and t[-1] <= max_innermost}


def _tile(seed: int, n: int = 3, max_innermost_factor: int = 16, func=vector_add) -> tuple[int, ...]:
    sch = Schedule(func, seed=seed)
    (loop,) = sch.get_loops(sch.get_block("B"))
    return tuple(sch.get(rv) for rv in sch.sample_perfect_tile(loop, n, max_innermost_factor))


# ---------------------------------------------------------------- sample_perfect_tile


def test_perfect_tile_same_seed_same_tiles():
    assert [_tile(seed) for seed in range(20)] == [_tile(seed) for seed in range(20)]
    assert len({_tile(seed) for seed in range(20)}) > 1


def test_perfect_tile_products_are_exact_and_bounded():
    for seed in range(200):
        tiles = _tile(seed, n=4, max_innermost_factor=4)
        assert math.prod(tiles) == 96 and tiles[-1] <= 4 and len(tiles) == 4


def test_perfect_tile_reaches_every_tiling_uniformly():
    valid = _tilings(96, 3, 16)
    counts = Counter(_tile(seed) for seed in range(40 * len(valid)))
    assert set(counts) == valid
    expected = 40
    chi_square = sum((counts[t] - expected) ** 2 / expected for t in valid)
    assert chi_square < 2 * len(valid)  # a uniform draw lands near len(valid); a skewed one far above


def test_perfect_tile_no_innermost_limit():
    valid = _tilings(96, 2, 96)
    assert {_tile(seed, n=2, max_innermost_factor=-1) for seed in range(400)} == valid


def test_perfect_tile_replays_decision_and_splits():
    if not hasattr(Schedule, "split"):
        pytest.skip("split is not available yet")
    sch = Schedule(vector_add, seed=1)
    (loop,) = sch.get_loops(sch.get_block("B"))
    tiles = sch.sample_perfect_tile(loop, 3, decision=[4, 3, 8])
    assert [sch.get(t) for t in tiles] == [4, 3, 8]
    outer, middle, inner = sch.split(loop, tiles)
    assert [sch.get(x).extent.value for x in (outer, middle, inner)] == [4, 3, 8]
    verify_trace_roundtrip(sch, vector_add)
    assert_same_numbers(vector_add, sch.mod)
    assert sch.trace.decisions == {2: [4, 3, 8]}


def test_changed_decision_changes_the_split():
    if not hasattr(Schedule, "split"):
        pytest.skip("split is not available yet")
    sch = Schedule(vector_add, seed=3)
    (loop,) = sch.get_loops(sch.get_block("B"))
    sch.split(loop, sch.sample_perfect_tile(loop, 2))
    (index,) = sch.trace.decisions
    new_decision = [12, 8] if sch.trace.decisions[index] != [12, 8] else [8, 12]

    replayed = Schedule(vector_add)
    sch.trace.with_decision(index, new_decision).apply_to_schedule(replayed)
    extents = [lp.extent.value for lp in replayed.state.loops_of(replayed.state.index.blocks["B"])]
    assert extents == new_decision
    assert replayed.trace.decisions[index] == new_decision

    again = Schedule(vector_add)
    sch.trace.apply_to_schedule(again, decisions={index: new_decision})
    tir.assert_structural_equal(again.mod, replayed.mod)
    assert_same_numbers(vector_add, replayed.mod)


def test_perfect_tile_trace_json_roundtrip():
    sch = Schedule(vector_add, seed=5)
    (loop,) = sch.get_loops(sch.get_block("B"))
    tiles = sch.sample_perfect_tile(loop, 4, max_innermost_factor=8)
    replayed = Schedule(vector_add, seed=999)
    Trace.apply_json_to_schedule(sch.trace.as_json(), replayed)
    assert replayed.trace.as_json() == sch.trace.as_json()
    assert "decision=" in sch.trace.as_python()
    assert [sch.get(t) for t in tiles] == sch.trace.decisions[2]


def test_perfect_tile_wrong_product_fails():
    sch = Schedule(vector_add)
    (loop,) = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(
        sch, InvalidDecisionError, "multiplies to 64", sch.sample_perfect_tile, loop, 2, decision=[8, 8]
    )


def test_perfect_tile_innermost_too_large_fails():
    sch = Schedule(vector_add)
    (loop,) = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(
        sch,
        InvalidDecisionError,
        "above max_innermost_factor=16",
        sch.sample_perfect_tile,
        loop,
        2,
        decision=[3, 32],
    )


def test_perfect_tile_decision_of_wrong_length_fails():
    sch = Schedule(vector_add)
    (loop,) = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(
        sch,
        InvalidDecisionError,
        "list of 3 positive integers",
        sch.sample_perfect_tile,
        loop,
        3,
        decision=[12, 8],
    )


def test_perfect_tile_single_tile_too_large_fails():
    sch = Schedule(vector_add)
    (loop,) = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(sch, InvalidTileError, "can't be one tile", sch.sample_perfect_tile, loop, 1)


def test_perfect_tile_bad_n_fails():
    sch = Schedule(vector_add)
    (loop,) = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(sch, InvalidTileError, "n must be at least 1", sch.sample_perfect_tile, loop, 0)


def test_perfect_tile_of_a_symbolic_extent_is_tvms_fallback():
    sch = Schedule(symbolic)
    (loop,) = sch.get_loops(sch.get_block("B"))
    factors = sch.sample_perfect_tile(loop, 3)
    assert factors[0] is None and [sch.get(f) for f in factors[1:]] == [1, 1]  # None: split infers it
    assert sch.trace.decisions[len(sch.trace) - 1] == [-1, 1, 1]
    outer, middle, inner = sch.split(loop, factors)
    assert sch.get(outer).extent is sch.mod["main"].params[0].shape[0]
    verify_trace_roundtrip(sch, symbolic)
    assert_fails_unchanged(
        sch, InvalidDecisionError, "must be [-1, 1]", sch.sample_perfect_tile, outer, 2, decision=[2, 1]
    )


# ---------------------------------------------------------------- sample_categorical


def _categorical(seed: int, probs=(0.5, 0.25, 0.25)) -> int:
    sch = Schedule(vector_add, seed=seed)
    return sch.get(sch.sample_categorical([0, 16, 64], list(probs)))


def test_categorical_same_seed_same_choice_and_frequencies():
    draws = [_categorical(seed) for seed in range(400)]
    assert draws == [_categorical(seed) for seed in range(400)]
    counts = Counter(draws)
    assert set(counts) == {0, 16, 64}
    assert 150 < counts[0] < 250 and 60 < counts[16] < 140 and 60 < counts[64] < 140


def test_categorical_zero_weight_never_drawn():
    assert {_categorical(seed, probs=(0, 3, 0)) for seed in range(50)} == {16}


def test_categorical_decision_is_the_index():
    sch = Schedule(vector_add, seed=0)
    rv = sch.sample_categorical([0, 16, 64], [0.5, 0.25, 0.25], decision=2)
    assert sch.get(rv) == 64
    assert sch.trace.decisions == {0: 2}
    replayed = Schedule(vector_add)
    sch.trace.with_decision(0, 1).apply_to_schedule(replayed)
    assert replayed.trace.decisions == {0: 1}


def test_categorical_bad_probabilities_fail():
    sch = Schedule(vector_add)
    assert_fails_unchanged(
        sch, InvalidProbabilitiesError, "non-negative", sch.sample_categorical, [1, 2], [0.5, -1]
    )
    assert_fails_unchanged(
        sch, InvalidProbabilitiesError, "positive sum", sch.sample_categorical, [1, 2], [0, 0]
    )
    assert_fails_unchanged(
        sch,
        InvalidProbabilitiesError,
        "2 candidates and 3 probabilities",
        sch.sample_categorical,
        [1, 2],
        [0.2, 0.3, 0.5],
    )


def test_categorical_non_integer_candidates_fail():
    sch = Schedule(vector_add)
    assert_fails_unchanged(sch, ArgumentError, "draws integers", sch.sample_categorical, [1.5, 2], [1, 1])


def test_categorical_decision_out_of_range_fails():
    sch = Schedule(vector_add)
    assert_fails_unchanged(
        sch,
        InvalidDecisionError,
        "index into the 2 candidates",
        sch.sample_categorical,
        [1, 2],
        [1, 1],
        decision=2,
    )


# ---------------------------------------------------------------- sample_compute_location


def _location(sch: Schedule, block_name: str, decision=None):
    loop = sch.sample_compute_location(sch.get_block(block_name), decision=decision)
    return None if loop is None else sch.get(loop).loop_var.name


def test_compute_location_candidates_of_elementwise_producer():
    decisions = set()
    for seed in range(60):
        sch = Schedule(elementwise, seed=seed)
        _location(sch, "B")
        decisions.update(sch.trace.decisions.values())
    assert decisions == {-2, -1, 0, 1}


def test_compute_location_replays_decisions():
    sch = Schedule(elementwise)
    assert _location(sch, "B", decision=1) == "j"
    assert _location(sch, "B", decision=0) == "i"
    assert _location(sch, "B", decision=-1) is None
    assert _location(sch, "B", decision=-2) is None
    assert list(sch.trace.decisions.values()) == [1, 0, -1, -2]
    verify_trace_roundtrip(sch, elementwise)


def test_every_compute_location_candidate_computes_the_same():
    if not hasattr(Schedule, "compute_at"):
        pytest.skip("compute_at is not available yet")
    for func, producer in ((elementwise, "B"), (matmul_relu, "C")):
        for decision in (0, 1):
            sch = Schedule(func)
            block = sch.get_block(producer)
            loop = sch.sample_compute_location(block, decision=decision)
            sch.compute_at(block, loop)
            assert sch.trace.decisions == {1: decision}
            verify_trace_roundtrip(sch, func)
            assert_same_numbers(func, sch.mod)


def test_compute_location_stale_decision_falls_back():
    sch = Schedule(elementwise)
    assert _location(sch, "B", decision=7) == "j"
    assert sch.trace.decisions == {1: 1}


def test_compute_location_of_reduction_cannot_inline():
    sch = Schedule(matmul_relu)
    assert _location(sch, "C", decision=-2) is None
    assert sch.trace.decisions == {1: -1}


def test_compute_location_same_seed_same_choice():
    def draw(seed):
        sch = Schedule(elementwise, seed=seed)
        _location(sch, "B")
        return sch.trace.decisions

    assert [draw(s) for s in range(10)] == [draw(s) for s in range(10)]


def test_compute_location_without_consumer_is_root():
    sch = Schedule(elementwise)
    assert _location(sch, "C") is None
    assert sch.trace.decisions == {1: -1}


def test_compute_location_bad_decision_type_fails():
    sch = Schedule(elementwise)
    assert_fails_unchanged(
        sch,
        InvalidDecisionError,
        "must be an integer",
        sch.sample_compute_location,
        sch.get_block("B"),
        decision="i",
    )


def test_decisions_are_found_by_index_and_by_instruction_as_in_tvm():
    sch = Schedule(vector_add, seed=5)
    (loop,) = sch.get_loops(sch.get_block("B"))
    sch.sample_perfect_tile(loop, 2, decision=[32, 3])
    last = sch.trace.insts[-1]
    assert sch.trace.decisions[last] == sch.trace.decisions[len(sch.trace) - 1] == [32, 3]
    assert last in sch.trace.decisions and sch.trace.insts[0] not in sch.trace.decisions
    assert sch.trace.decisions.get(last) == [32, 3] and sch.trace.decisions.get(sch.trace.insts[0]) is None
    assert dict(sch.trace.decisions) == {len(sch.trace) - 1: [32, 3]}


def test_an_integer_decision_found_by_instruction_reads_as_tvms_integer():
    sch = Schedule(vector_add, seed=5)
    sch.sample_categorical([16, 32, 64], [0.2, 0.3, 0.5], decision=2)
    decision = sch.trace.decisions[sch.trace.insts[-1]]
    assert decision == 2 and decision.value == 2 and type(decision.value) is int
    assert type(sch.trace.decisions[len(sch.trace) - 1]) is int  # by index: the plain int, as stored
