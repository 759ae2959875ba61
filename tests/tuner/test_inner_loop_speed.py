"""The tuner's inner-loop shortcuts (issue 13) give exactly what the long way gives.

A mutant replayed from its parent's checkpoint (``Schedule.replay_prefix``) has the
trace JSON and the module of a full replay, for every mutable decision of CUDA and C
matmul candidates, mutants of mutants included; a checkpoint is a copy that later
primitives on the parent do not change, and belongs to the module it was made from.
The tensor-core rule drafts its tiles within shared memory. IR nodes built by the
fast constructor are still frozen and take their defaults as before, and the
simplifier's value classes still compare and hash by value.
"""

from __future__ import annotations

import random
from dataclasses import FrozenInstanceError, field, replace

import pytest

from codegen.target import Target
from schedule import Schedule
from tests.schedule.seed_notebook import MyModuleMatmul
from tir import For, ForKind, IntImm, PrimExpr, Var
from tir.arith.canonical import SplitTerm, SumForm
from tir.arith.const_bound import ConstIntBound
from tir.expr import node
from tir.structural import assert_structural_equal
from tuner import workloads
from tuner.space import SpaceError, SpaceGenerator, check_limits
from tuner.space.generator import _can_mutate, _mutated_decision
from tuner.space.tensor_core import MAX_DRAFTS, _draft, _Limits

SHAPES = {"cuda": (64, 64, 64), "c": (32, 32, 32)}


def _mutable(sch: Schedule) -> list[int]:
    return [i for i in sch.trace.decisions if _can_mutate(sch.trace.insts[i])]


@pytest.mark.parametrize("target", sorted(SHAPES))
def test_replay_from_a_checkpoint_equals_a_full_replay(target):
    mod = workloads.matmul(*SHAPES[target])
    space = SpaceGenerator(target)
    rng = random.Random(7)
    compared = 0
    for seed in range(3):
        parent = space.sample(mod, seed)
        for _ in range(2 * len(_mutable(parent))):
            # drawn from the current parent: a mutated decision (register fragments or not) can change
            # which instructions follow it
            index = rng.choice(_mutable(parent))
            decision = _mutated_decision(parent.trace.insts[index], rng)
            try:
                full = space.replay(parent.trace, mod, {index: decision})
            except Exception as error:  # noqa: BLE001 - the shortcut must fail the same way
                with pytest.raises(type(error)):
                    space.replay(parent, mod, {index: decision})
                continue
            resumed = space.replay(parent, mod, {index: decision})
            assert resumed.trace.as_json() == full.trace.as_json()
            assert_structural_equal(resumed.mod, full.mod)
            compared += 1
            parent = resumed  # the next mutant starts from a schedule that was itself resumed
    assert compared >= 10


def test_mutate_from_the_schedule_gives_the_trace_mutants():
    mod, space = workloads.matmul(*SHAPES["cuda"]), SpaceGenerator("cuda")
    parent = space.sample(mod, 1)
    for seed in range(6):
        by_trace = space.mutate(parent.trace, mod, random.Random(seed))
        by_schedule = space.mutate(parent, mod, random.Random(seed))
        assert by_trace.trace.as_json() == by_schedule.trace.as_json()
        assert_structural_equal(by_trace.mod, by_schedule.mod)


def test_a_checkpoint_does_not_follow_later_primitives():
    sch = Schedule(MyModuleMatmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    factors = sch.sample_perfect_tile(i, n=2, decision=[128, 8])
    before = sch.mod
    sch.split(i, factors)
    sch.bind(j, "threadIdx.x")
    prefix = sch.replay_prefix(MyModuleMatmul, 2)
    assert prefix.mod is before and len(prefix.trace) == 2
    assert prefix.get(i) is before["main"].body.block.body  # the handle finds the unsplit loop
    prefix.split(i, [None, 4])  # the copy changes alone
    again = sch.replay_prefix(MyModuleMatmul, 2)
    assert again.mod is before and sch.get(j).kind is ForKind.THREAD_BINDING


def test_a_checkpoint_belongs_to_its_module():
    sch = Schedule(MyModuleMatmul)
    sch.sample_categorical([1, 2], [0.5, 0.5], decision=1)
    assert sch.replay_prefix(MyModuleMatmul, 0) is not None
    assert sch.replay_prefix(workloads.matmul(8, 8, 8), 0) is None
    assert sch.replay_prefix(MyModuleMatmul, 1) is None  # no sampling instruction there


def test_tensor_core_drafts_fit_in_shared_memory():
    # WMMA tiles of float16 with a float16 C, 12 KiB of shared memory: every draft's padded A and
    # B tiles (rows of 32k + 16 bytes) fit.
    target = replace(Target.parse("cuda"), max_shared_memory_bytes=12 * 1024)
    limits = _Limits("cuda", 2, 2, target)
    sch = Schedule(workloads.matmul(16, 16, 16))
    for seed in range(40):
        sch.seed(seed)
        (_, wm, fm), (_, wn, fn), (_, fk) = draft = _draft(sch, [64, 64, 64], limits)
        rows, columns, depth = wm * fm * 16, wn * fn * 16, fk * 16
        assert limits.shared_bytes(draft) <= 12 * 1024
        assert limits.shared_bytes(draft) >= (rows + columns) * depth * 2  # the padding only adds
    assert MAX_DRAFTS > 0


def test_tensor_core_samples_are_not_redrawn_for_shared_memory(monkeypatch):
    """Every draft fits, so no sample is built and then thrown away at the limit check (before,
    seeds 67 and 99 drew tiles over 48 KiB and were built two and three times)."""
    import tuner.space.generator as generator

    checks = []

    def counted(*args, **kwargs):
        checks.append(args)
        return check_limits(*args, **kwargs)

    monkeypatch.setattr(generator, "check_limits", counted)
    mod, space = workloads.matmul(1024, 1024, 1024, "float16"), SpaceGenerator("cuda")
    for seed in (67, 99, 119):
        sch = space.sample(mod, seed)
        assert sum(inst.kind == "tensorize" for inst in sch.trace.insts) > 0
    assert len(checks) == 3


def test_tight_shared_memory_still_names_its_limit_or_falls_back():
    tight = replace(Target.parse("cuda"), max_shared_memory_bytes=2048)
    sch = None
    try:
        sch = SpaceGenerator(tight).sample(workloads.matmul(256, 256, 256, "float16"), 0)
    except SpaceError as error:
        assert error.limit == "max_shared_memory_bytes"
    if sch is not None:
        check_limits(sch.mod, tight)


def test_nodes_stay_frozen_and_keep_their_defaults():
    var = Var("i", "int32")
    loop = For(var, IntImm(0), IntImm(4), ForKind.SERIAL, IntImm(0))
    other = For(var, IntImm(0), IntImm(4), ForKind.SERIAL, IntImm(0))
    assert IntImm(3).dtype == "int32" and loop.thread_tag is None
    assert loop.annotations == {} and loop.annotations is not other.annotations
    with pytest.raises(FrozenInstanceError):
        loop.extent = IntImm(8)
    with pytest.raises(TypeError):
        For(var, IntImm(0))


def test_simplifier_values_compare_and_hash_by_value():
    assert ConstIntBound(0, 3) == ConstIntBound(0, 3) and hash(ConstIntBound(0, 3)) == hash(
        ConstIntBound(0, 3)
    )
    var = Var("x", "int32")
    term = SplitTerm(var, var, 1, None, 2)
    assert term == SplitTerm(var, var, 1, None, 2) and len({term, SplitTerm(var, var, 1, None, 2)}) == 1
    assert SumForm((term,), 1, "int32") == SumForm((term,), 1, "int32")


def test_node_constructor_keeps_post_init_and_fields_outside_init():
    calls = []

    @node
    class Checked(PrimExpr):
        a: int
        b: int = 2

        def __post_init__(self):
            calls.append((self.a, self.b))

    @node
    class Derived(PrimExpr):
        a: int
        c: int = field(default=5, init=False)

    Checked(1)
    assert calls == [(1, 2)]
    assert (Derived(3).a, Derived(3).c) == (3, 5)
    with pytest.raises(TypeError):
        Derived(3, 4)
