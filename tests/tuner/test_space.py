"""The design space: sampled candidates compute what the workload computes, replay, and fit the target.

For every built-in workload kind (small shapes) and both a CPU and a GPU target,
20 candidates drawn by ``SpaceGenerator.sample`` must match the unscheduled
function on random inputs (the executor), replay from their JSON trace to the same
module, stay within the target's limits, and on the GPU leave no loop that holds a
block unbound. Then the structure the rules promise (shared-memory tiles, inlined
padding and epilogues, parallel and vector loops), mutation, and the limit errors.
"""

from __future__ import annotations

import doctest
import json
import random
from dataclasses import replace

import numpy as np
import pytest

import tir
from codegen.target import Target
from schedule import Schedule, Trace
from tests.fixtures.programs import FIXTURES_BY_NAME
from tests.schedule.util import assert_same_numbers
from tir import BlockRealize, For, ForKind, T, Visitor
from tuner import workloads
from tuner.space import SpaceError, SpaceGenerator, check_limits
from tuner.space.limits import kernels

CANDIDATES = 20
TARGETS = {"c": Target.parse("c"), "cuda": Target.parse("cuda")}


@T.prim_func
def matmul_relu(
    A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 16), "float32"), D: T.Buffer((16, 16), "float32")
):
    C = T.alloc_buffer((16, 16))
    for i, j, k in T.grid(16, 16, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))


WORKLOADS = {
    "matmul": workloads.matmul(24, 32, 16),
    "batch_matmul": workloads.batch_matmul(2, 8, 16, 8),
    "conv2d_nhwc": workloads.conv2d_nhwc(1, 6, 6, 4, 8, 3, 3, 1, 1),
    "depthwise_conv2d": workloads.depthwise_conv2d(1, 6, 6, 8, 3, 3, 1, 1),
    "softmax": workloads.softmax(4, 16),
    "reduction_sum": workloads.reduction_sum(8, 16),
    "elementwise_chain": workloads.elementwise_chain(64),
    "window_sum": workloads.window_sum(32),
    "conv_layer": workloads.conv_layer(1, 2, 4, 8, 8),  # its init reads the bias
    "full_sum": FIXTURES_BY_NAME["full_sum"].func,
    "matmul_relu": matmul_relu,
}


def _blocks_outside_threads(func: tir.PrimFunc) -> list[str]:
    """Blocks of a kernel that is not a blockIdx loop, or that no threadIdx loop encloses."""
    bad: list[str] = []

    class _Walk(Visitor):
        def __init__(self):
            self.tags: list[str] = []

        def visit_For(self, loop: For) -> None:
            self.tags.append(loop.thread_tag or "")
            self.generic_visit(loop)
            self.tags.pop()

        def visit_BlockRealize(self, realize: BlockRealize) -> None:
            if not any(t.startswith("threadIdx") for t in self.tags):
                bad.append(realize.block.name)
            self.generic_visit(realize)

    for kernel in kernels(func):
        if isinstance(kernel, For) and not (kernel.thread_tag or "").startswith("blockIdx"):
            bad.append(f"kernel loop {kernel.loop_var.name}")
        _Walk().visit(kernel)
    return bad


def _threads_per_group(func: tir.PrimFunc) -> int:
    """The most threads any kernel uses (threadIdx extents multiplied, one extent per axis)."""
    most = 1
    for kernel in kernels(func):
        extents: dict[str, set[int]] = {}

        def record(node, extents=extents) -> None:
            if isinstance(node, For) and (node.thread_tag or "").startswith("threadIdx"):
                extents.setdefault(node.thread_tag, set()).add(node.extent.value)

        tir.post_order_visit(kernel, record)
        assert all(len(e) == 1 for e in extents.values()), extents
        most = max(most, int(np.prod([e.pop() for e in extents.values()])))
    return most


def _check_candidate(sch: Schedule, mod, target: Target, seed: int) -> None:
    assert_same_numbers(mod, sch.mod, seed=seed, rtol=1e-4, atol=1e-5)
    if target.is_gpu:
        assert _blocks_outside_threads(sch.mod["main"]) == []
        assert _threads_per_group(sch.mod["main"]) <= target.max_threads_per_group
    replayed = Schedule(mod)
    Trace.apply_json_to_schedule(json.loads(json.dumps(sch.trace.as_json())), replayed)
    tir.assert_structural_equal(replayed.mod, sch.mod)


def _has_choices(trace: Trace) -> bool:
    return any(
        (i.kind == "sample_perfect_tile" and sum(f > 1 for f in i.decision) > 0)
        or (i.kind == "sample_categorical" and len(i.args["candidates"]) > 1)
        for i in trace.insts
    )


@pytest.mark.parametrize("target_name", list(TARGETS))
@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_sampled_candidates_compute_the_workload(workload: str, target_name: str):
    mod, target = WORKLOADS[workload], TARGETS[target_name]
    space = SpaceGenerator(target)
    traces = set()
    for seed in range(CANDIDATES):
        sch = space.sample(mod, seed)
        _check_candidate(sch, mod, target, seed)
        traces.add(sch.trace.as_json_str())
    if _has_choices(sch.trace):
        assert len(traces) > 1, "every seed drew the same candidate"


def test_trace_replays_with_a_changed_decision():
    """The trace is the candidate: replayed with another unroll depth or tiling it is another one."""
    mod = WORKLOADS["matmul"]
    trace = SpaceGenerator("cuda").sample(mod, 2).trace
    unroll = max(i for i, inst in enumerate(trace.insts) if inst.kind == "sample_categorical")
    tile = next(i for i, inst in enumerate(trace.insts) if inst.kind == "sample_perfect_tile")
    extent = int(np.prod(trace.insts[tile].decision))
    for index, decision in ((unroll, (trace.insts[unroll].decision + 1) % 5), (tile, [1, 1, extent, 1])):
        sch = Schedule(mod)
        trace.with_decision(index, decision).apply_to_schedule(sch)
        assert sch.trace.insts[index].decision == decision
        assert_same_numbers(mod, sch.mod)


def test_same_seed_same_candidate():
    space = SpaceGenerator("cuda")
    first = space.sample(WORKLOADS["matmul"], 7).trace.as_json()
    assert space.sample(WORKLOADS["matmul"], 7).trace.as_json() == first


# ---------------------------------------------------------------- what the rules build


def _block_names(sch: Schedule) -> set[str]:
    return set(sch.state.index.blocks)


def _loops(sch: Schedule) -> list[For]:
    return list(sch.state.index.loops.values())


def test_gpu_matmul_tiles_through_shared_and_local_memory():
    sch = SpaceGenerator("cuda").sample(WORKLOADS["matmul"], 0)
    assert {"A_shared", "B_shared", "C_local", "C_init"} <= _block_names(sch)
    tags = {lp.thread_tag for lp in _loops(sch) if lp.kind is ForKind.THREAD_BINDING}
    assert tags == {"blockIdx.x", "threadIdx.x"}
    kinds = [inst.kind for inst in sch.trace.insts]
    assert kinds.count("sample_perfect_tile") == 3
    assert "pragma_auto_unroll_max_step" in next(iter(kernels(sch.mod["main"]))).annotations


def test_gpu_threads_fill_a_warp_when_the_loops_allow():
    target = TARGETS["cuda"]
    for seed in range(5):
        sch = SpaceGenerator(target).sample(WORKLOADS["matmul"], seed)
        threads = {lp.extent.value for lp in _loops(sch) if lp.thread_tag == "threadIdx.x"}
        assert len(threads) == 1 and target.warp_size <= threads.pop() <= target.max_threads_per_group


def test_cpu_matmul_is_parallel_and_vectorized():
    """The outer tiles run in parallel and the inner loop fills a 64-byte vector (16 floats: j is 32);
    so does the copy of each input packed in tile order."""
    for seed in range(5):
        sch = SpaceGenerator("c").sample(WORKLOADS["matmul"], seed)
        kinds = [lp.kind for lp in _loops(sch)]
        packed = sch.trace.as_python().count("storage_scope='global'")
        assert kinds.count(ForKind.PARALLEL) == 1 + packed and ForKind.THREAD_BINDING not in kinds
        compute_loops = sch.state.loops_of(sch.state.index.blocks["C"])
        assert [lp.kind for lp in compute_loops].count(ForKind.PARALLEL) == 1
        assert compute_loops[-1].kind is ForKind.VECTORIZED and compute_loops[-1].extent.value >= 16
        assert {"C_local", "C_init"} <= _block_names(sch)


@pytest.mark.parametrize("target_name", list(TARGETS))
def test_conv2d_padding_is_inlined(target_name: str):
    sch = SpaceGenerator(target_name).sample(WORKLOADS["conv2d_nhwc"], 0)
    assert "X_pad" not in _block_names(sch)
    assert "Y_local" in _block_names(sch)


@pytest.mark.parametrize("target_name", list(TARGETS))
def test_epilogue_is_computed_from_the_accumulator_tile(target_name: str):
    sch = SpaceGenerator(target_name).sample(matmul_relu, 0)
    names = _block_names(sch)
    assert "D" not in names and "C_local" in names
    assert "reverse_compute_inline" in [inst.kind for inst in sch.trace.insts]


def test_elementwise_chain_becomes_one_block():
    sch = SpaceGenerator("cuda").sample(WORKLOADS["elementwise_chain"], 0)
    assert _block_names(sch) == {"root", "C"}


def test_every_fixture_program_gets_a_candidate():
    """No crash on valid programs, hand-scheduled ones included: a rule that does not fit a block
    hands it to a simpler rule or leaves it as it is."""
    space = {name: SpaceGenerator(target) for name, target in TARGETS.items()}
    for fixture in FIXTURES_BY_NAME.values():
        if not fixture.executable:
            continue
        for target_name in TARGETS:
            sch = space[target_name].sample(fixture.func, 1)
            expected = fixture.inputs(np.random.default_rng(0))
            got = [a.copy() if isinstance(a, np.ndarray) else a for a in expected]
            tir.interpret(fixture.func, *expected)
            tir.interpret(sch.mod["main"], *got)
            for index in fixture.outputs:
                np.testing.assert_allclose(
                    got[index], expected[index], rtol=1e-4, atol=1e-4, err_msg=fixture.name
                )


# ---------------------------------------------------------------- mutation


def _decisions(trace: Trace) -> list:
    """The decisions in trace order (a replay may drop a vectorize, shifting instruction numbers)."""
    return [inst.decision for inst in trace.insts if inst.kind.startswith("sample_")]


@pytest.mark.parametrize("target_name", list(TARGETS))
def test_mutate_changes_one_decision_and_stays_valid(target_name: str):
    target, mod = TARGETS[target_name], WORKLOADS["matmul"]
    space = SpaceGenerator(target)
    original = space.sample(mod, 3)
    rng = random.Random(0)
    for number in range(4):
        mutant = space.mutate(original.trace, mod, rng)
        assert mutant is not None
        before, after = _decisions(original.trace), _decisions(mutant.trace)
        assert len(before) == len(after)
        assert sum(a != b for a, b in zip(before, after)) == 1, (before, after)
        _check_candidate(mutant, mod, target, seed=number)
        check_limits(mutant.mod, target)


def test_mutated_tile_keeps_the_product():
    mod = WORKLOADS["matmul"]
    space = SpaceGenerator("cuda")
    trace = space.sample(mod, 1).trace
    rng = random.Random(5)
    tiles_seen = 0
    for _ in range(10):
        mutant = space.mutate(trace, mod, rng)
        for old, new in zip(_decisions(trace), _decisions(mutant.trace)):
            if isinstance(old, list) and old != new:
                assert np.prod(old) == np.prod(new) and len(old) == len(new)
                tiles_seen += 1
    assert tiles_seen > 0


def test_mutate_returns_none_when_replay_fails():
    space = SpaceGenerator("cuda")
    matmul_trace = space.sample(WORKLOADS["matmul"], 0).trace
    for other in ("softmax", "batch_matmul", "conv2d_nhwc"):
        assert space.mutate(matmul_trace, WORKLOADS[other], random.Random(0)) is None
    assert space.mutate(Trace(), WORKLOADS["matmul"], random.Random(0)) is None


def test_docstring_examples():
    import tuner.space.generator

    assert doctest.testmod(tuner.space.generator).failed == 0


def test_mutants_stay_within_tight_limits():
    """Mutated tilings are checked against the memory limits: with 1 KiB of shared memory, every
    mutant returned fits."""
    mod, target = WORKLOADS["matmul"], replace(TARGETS["cuda"], max_shared_memory_bytes=1024)
    space = SpaceGenerator(target)
    original = space.sample(mod, 0)
    check_limits(original.mod, target)
    trace, rng = original.trace, random.Random(1)
    for _ in range(6):
        mutant = space.mutate(trace, mod, rng)
        if mutant is not None:
            check_limits(mutant.mod, target)


# ---------------------------------------------------------------- limits


def test_sample_names_the_shared_memory_limit():
    tiny = replace(TARGETS["cuda"], max_shared_memory_bytes=4)
    with pytest.raises(SpaceError, match="max_shared_memory_bytes") as info:
        SpaceGenerator(tiny).sample(WORKLOADS["matmul"], 0)
    assert info.value.limit == "max_shared_memory_bytes"


def test_check_limits_names_the_thread_limit():
    sch = Schedule(WORKLOADS["elementwise_chain"])
    block = sch.get_block("C")
    (loop,) = sch.get_loops(block)
    outer, inner = sch.split(loop, [None, 64])
    sch.bind(outer, "blockIdx.x")
    sch.bind(inner, "threadIdx.x")
    check_limits(sch.mod, TARGETS["cuda"])
    with pytest.raises(SpaceError, match="max_threads_per_group=32") as info:
        check_limits(sch.mod, replace(TARGETS["cuda"], max_threads_per_group=32))
    assert info.value.limit == "max_threads_per_group"


def test_check_limits_names_one_extent_per_thread_axis():
    """A cooperative fetch with fewer threads than the compute is caught (the lowering would refuse it)."""
    mod = WORKLOADS["matmul"]
    trace = SpaceGenerator("cuda").sample(mod, 0).trace
    fetch_split = next(i for i in trace.insts if i.kind == "split" and i.args["factors"][0] is None)
    unit_threads = [None] + [1] * (len(fetch_split.args["factors"]) - 1)
    insts = [
        replace(i, args={**i.args, "factors": unit_threads}) if i is fetch_split else i for i in trace.insts
    ]
    sch = Schedule(mod)
    Trace(insts).apply_to_schedule(sch)
    with pytest.raises(SpaceError, match="threadIdx.x") as info:
        check_limits(sch.mod, TARGETS["cuda"])
    assert info.value.limit == "thread_extent"


def test_check_limits_names_the_local_array_limit():
    sch = Schedule(workloads.matmul(256, 128, 4))
    block = sch.get_block("C")
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, sch.get_loops(block)[0])
    check_limits(sch.mod, TARGETS["c"])  # one row of C_local: 512 bytes
    sch = Schedule(workloads.matmul(256, 128, 4))
    sch.cache_write(sch.get_block("C"), 0, "local")  # all of C: 128 KiB
    with pytest.raises(SpaceError, match="max_local_bytes") as info:
        check_limits(sch.mod, TARGETS["c"])
    assert info.value.limit == "max_local_bytes"


@pytest.mark.parametrize("target_name", list(TARGETS))
def test_large_tiles_are_drawn_within_the_memory_limits(target_name: str):
    """At sizes where most tilings would not fit, sampled ones do (checked by compacting the buffers)."""
    big = workloads.matmul(512, 512, 512)
    target = TARGETS[target_name]
    if target.is_gpu:
        target = replace(target, max_shared_memory_bytes=8 * 1024)
    for seed in range(3):
        check_limits(SpaceGenerator(target).sample(big, seed).mod, target)
