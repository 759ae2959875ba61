"""The shared analysis, the signature-driven handle checks and the queries that record nothing."""

from __future__ import annotations

import random

import pytest

from schedule import Schedule, ScheduleError, draw_perfect_tile
from schedule.analysis import can_apply, child_blocks, consumers_of, loop_iters, producers_of, writers_of
from schedule.errors import ArgumentError, NotFoundError
from schedule.instruction import PRIMITIVES
from schedule.sampling import InvalidDecisionError, InvalidTileError
from tests.fixtures.programs import fused_add_relu as producer_consumer
from tests.fixtures.programs import row_sum
from tir import Block

from .util import assert_fails_unchanged

# ---------------------------------------------------------------- handle checks from the signature


def _handle_cases():
    """(primitive, handle parameter) for every registered primitive that takes handles."""
    return [(name, param.name) for name, prim in sorted(PRIMITIVES.items()) for param in prim.handles]


def test_every_primitive_with_node_arguments_has_handle_checks():
    names = {name for name, _ in _handle_cases()}
    for name in ["split", "fuse", "reorder", "bind", "compute_at", "cache_read", "annotate", "rfactor"]:
        assert name in names, name
    assert "sample_categorical" not in names and "get_block" not in names


def _arguments_with(sch: Schedule, kind: str, argument: str, value) -> dict:
    """Arguments for primitive ``kind``: right handles everywhere but ``argument``, which gets ``value``."""
    block = sch.get_block("C")
    loop = sch.get_loops(block)[0]
    prim = PRIMITIVES[kind]
    code = prim.fn.__code__
    args = {p: 0 for p in code.co_varnames[1 : code.co_argcount] if p not in ("rng", "decision")}
    for param in prim.handles:
        args[param.name] = block if Block in param.types else loop
    args[argument] = value
    return args


@pytest.mark.parametrize("kind, argument", _handle_cases())
def test_a_wrong_handle_kind_names_the_argument(kind, argument):
    sch = Schedule(producer_consumer)
    args = _arguments_with(sch, kind, argument, 2.5)
    err = assert_fails_unchanged(sch, ArgumentError, f"for argument {argument!r}", sch._run, kind, **args)
    assert f"{kind} needs a" in str(err) and "got float 2.5" in str(err)


@pytest.mark.parametrize(
    "kind, argument",
    [
        (k, a)
        for k, a in _handle_cases()
        if any(Block in p.types for p in PRIMITIVES[k].handles if p.name == a)
    ],
)
def test_a_name_where_a_block_is_taken_is_looked_up_as_tvm_does(kind, argument):
    sch = Schedule(producer_consumer)
    args = _arguments_with(sch, kind, argument, "no_such_block")
    assert_fails_unchanged(
        sch, NotFoundError, "Cannot find a block with the name: no_such_block", sch._run, kind, **args
    )


def test_a_block_where_a_loop_is_needed_is_named_and_marked():
    sch = Schedule(producer_consumer)
    block = sch.get_block("C")
    err = assert_fails_unchanged(sch, ArgumentError, "needs a loop handle", sch.split, block, [None, 4])
    assert "for argument 'loop', got block 'C'" in str(err)
    assert err.nodes == (sch.get(block),)


def test_a_block_in_a_list_of_loops_gives_its_position():
    sch = Schedule(producer_consumer)
    block = sch.get_block("C")
    i, j = sch.get_loops(block)
    assert_fails_unchanged(
        sch, ArgumentError, "for each of 'loops', got block 'C' at position 1", sch.fuse, i, block
    )


def test_consumer_blocks_take_a_block_or_a_list_of_blocks():
    sch = Schedule(producer_consumer)
    c = sch.get_block("C")
    (i, _) = sch.get_loops(c)
    assert_fails_unchanged(
        sch, ArgumentError, "at position 0", sch.cache_read, c, 0, "shared", consumer_blocks=[i]
    )
    assert_fails_unchanged(
        sch, ArgumentError, "or a list of them for argument 'consumer_blocks', got loop i", sch.cache_read,
        c, 0, "shared", consumer_blocks=i,
    )  # fmt: skip
    sch.cache_read(c, 0, "shared", consumer_blocks=c)
    assert "D_shared" in sch.mod.script()


# ---------------------------------------------------------------- analysis helpers


def test_blocks_producers_consumers_writers():
    sch = Schedule(producer_consumer)
    b, c = sch.find_block("D"), sch.find_block("C")
    assert child_blocks(sch.find_block("root")) == [b, c]
    assert producers_of(sch.state, c) == [b] and consumers_of(sch.state, b) == [c]
    assert writers_of([b, c], b.writes[0].buffer) == [b]
    (i, _) = sch.get_loops(sch.get_block("C"))
    assert child_blocks(sch.get(i)) == [c]


def test_loop_iters_needs_one_plain_loop_per_iterator():
    sch = Schedule(row_sum)
    block = sch.get_block("B")
    assert [iv.var.name for iv in loop_iters(sch.state, sch.get(block))] == ["vi", "vk"]
    i, k = sch.get_loops(block)
    sch.split(k, [None, 4])
    assert sch.loop_iters(block) is None


def test_can_apply_changes_and_records_nothing():
    sch = Schedule(producer_consumer)
    mod, trace = sch.mod, sch.trace.as_json()
    assert sch.can_apply("compute_inline", block=sch.find_block("D"))
    assert not sch.can_apply("compute_inline", block=sch.find_block("C"))  # C writes an output
    assert can_apply(sch.state, "parallel", loop=sch.state.loops_of(sch.find_block("C"))[0])
    assert sch.mod is mod and sch.trace.as_json() == trace
    with pytest.raises(NotFoundError, match="no primitive 'inline'"):
        sch.can_apply("inline", block=sch.find_block("D"))


def test_queries_record_nothing():
    sch = Schedule(producer_consumer)
    assert sch.block_names() == ["D", "C"]
    assert sch.block_names(scope=None) == ["root", "D", "C"]
    assert sch.find_block("C").name == "C" and sch.find_block("E") is None
    assert len(sch.trace) == 0
    with pytest.raises(NotFoundError, match="no block named 'E'"):
        sch.block_names("E")


# ---------------------------------------------------------------- drafting tiles


def test_draw_perfect_tile_draws_what_the_primitive_draws():
    sch = Schedule(producer_consumer)
    i, _ = sch.get_loops(sch.get_block("D"))
    loop = sch.get(i)
    for seed in range(20):
        drafted = draw_perfect_tile(loop, n=3, max_innermost_factor=4, rng=random.Random(seed))
        other = Schedule(producer_consumer, seed=seed)
        (j, _) = other.get_loops(other.get_block("D"))
        other._rng = random.Random(seed)
        sampled = [other.get(v) for v in other.sample_perfect_tile(j, n=3, max_innermost_factor=4)]
        assert drafted == sampled
        assert drafted[0] * drafted[1] * drafted[2] == 16 and drafted[2] <= 4


def test_draw_perfect_tile_refuses_what_the_primitive_refuses():
    sch = Schedule(producer_consumer)
    i, _ = sch.get_loops(sch.get_block("D"))
    loop = sch.get(i)
    with pytest.raises(InvalidTileError, match="n must be at least 1"):
        draw_perfect_tile(loop, n=0)
    with pytest.raises(InvalidDecisionError, match="multiplies to 8"):
        draw_perfect_tile(loop, n=2, decision=[2, 4])
    assert draw_perfect_tile(loop, n=2, decision=[4, 4]) == [4, 4]
    assert issubclass(InvalidTileError, ScheduleError)
