"""storage_align lowered, and vectorized cooperative fetches: padded strides, float4 only where proven.

``sch.storage_align(block, buffer_index, axis, factor, offset)`` pads the allocated
buffer's stride to ``factor * k + offset`` (TVM's semantics): compact_buffer_allocation
sets the strides, flatten_buffer indexes and sizes by them, the limits count them.
The padded kernels compute what the reference executor computes on C and in the
Metal simulator, and compile with nvcc. A fetch vectorized by 4 is one float4 load
and one float4 store where both addresses are provably multiples of 4 elements, and
scalar accesses otherwise.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tir
from codegen import build
from codegen.build import generate_source
from codegen.cuda import nvcc
from codegen.pipeline import planned_allocations
from codegen.target import Target
from schedule import Schedule
from tests.codegen.copy_schedules import shared_matmul
from tests.schedule.util import random_args
from tir import T
from tir.transform.compact_buffer_allocation import compact_buffer_allocation
from tuner import workloads
from tuner.space import SpaceError, SpaceGenerator, check_limits
from tuner.space.multi_level_tiling import FETCH_VECTOR_LANES

RUNNERS = {"c": ("c", None), "metal-sim": ("metal", "sim")}


def _allocated(func: tir.PrimFunc) -> dict[str, tir.Buffer]:
    found = {}
    tir.post_order_visit(
        func.body,
        lambda n: found.update({b.name: b for b in n.alloc_buffers}) if isinstance(n, tir.Block) else None,
    )
    return found


def _tvm_strides(shape: list[int], aligns: dict[int, tuple[int, int]]) -> list[int]:
    """TVM's rule, written out: inner to outer, an aligned stride rounded up to factor * k + offset."""
    strides, stride = [], 1
    for axis in reversed(range(len(shape))):
        if axis in aligns:
            factor, offset = aligns[axis]
            while stride % factor != offset:
                stride += 1
        strides.insert(0, stride)
        stride *= shape[axis]
    return strides


def _check_on(sch: Schedule, original: tir.IRModule, runner: str, seed: int = 0) -> None:
    func = original.main_function()
    expected = random_args(func, seed)
    tir.interpret(func, *expected)
    got = random_args(func, seed)
    target, device = RUNNERS[runner]
    build(sch.mod, target, device=device)["main"](*got)
    np.testing.assert_allclose(got[-1], expected[-1], rtol=1e-4, atol=1e-4)


# ---------------------------------------------------------------- the strides


@T.prim_func
def copy_through_shared(A: T.Buffer((6, 5, 7), "float32"), B: T.Buffer((6, 5, 7), "float32")):
    A_shared = T.alloc_buffer((6, 5, 7), scope="shared")
    for i, j, k in T.grid(6, 5, 7):
        with T.block("A_shared"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            A_shared[vi, vj, vk] = A[vi, vj, vk]
    for i, j, k in T.grid(6, 5, 7):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A_shared[vi, vj, vk] * T.float32(2)


@pytest.mark.parametrize(
    "aligns",
    [{1: (8, 1)}, {0: (16, 3)}, {0: (32, 4), 1: (8, 2)}, {1: (4, 3)}, {1: (1, 0)}],
    ids=lambda a: "-".join(f"{axis}:{f},{o}" for axis, (f, o) in a.items()),
)
def test_strides_follow_tvm_rule(aligns):
    sch = Schedule(copy_through_shared)
    for axis, (factor, offset) in aligns.items():
        sch.storage_align(sch.get_block("A_shared"), 0, axis, factor, offset)
    buffer = _allocated(compact_buffer_allocation(sch.mod.main_function()))["A_shared"]
    strides = [s.value for s in buffer.strides]
    assert strides == _tvm_strides([6, 5, 7], aligns)
    assert all(strides[axis] % factor == offset for axis, (factor, offset) in aligns.items())
    assert buffer.static_nbytes() == 4 * 6 * strides[0]


@T.prim_func
def copy_rows_through_shared(A: T.Buffer((6, 5, 7), "float32"), B: T.Buffer((6, 5, 7), "float32")):
    A_shared = T.alloc_buffer((6, 5, 7), scope="shared")
    for i in T.thread_binding(6, thread="blockIdx.x"):
        for t in T.thread_binding(5, thread="threadIdx.x"):
            for k in range(7):
                with T.block("A_shared"):
                    vi, vj, vk = T.axis.remap("SSS", [i, t, k])
                    A_shared[vi, vj, vk] = A[vi, vj, vk]
        for t in T.thread_binding(5, thread="threadIdx.x"):
            for k in range(7):
                with T.block("B"):
                    vi, vj, vk = T.axis.remap("SSS", [i, t, k])
                    B[vi, vj, vk] = A_shared[vi, 4 - vj, vk] * T.float32(2)


@pytest.mark.parametrize("runner", sorted(RUNNERS))
@pytest.mark.parametrize("axis", [1, -1])
def test_padded_copy_computes_on_every_runner(runner, axis):
    sch = Schedule(copy_rows_through_shared)
    sch.storage_align(sch.get_block("A_shared"), 0, axis, 16, 5)
    _check_on(sch, tir.IRModule.from_func(copy_rows_through_shared), runner)


def test_printed_strides_parse_back_and_differ_structurally():
    sch = Schedule(copy_through_shared)
    sch.storage_align(sch.get_block("A_shared"), 0, 1, 8, 1)
    assert "strides=(45, 9, 1)" in compact_buffer_allocation(sch.mod.main_function()).script()
    text = copy_through_shared.script().replace('scope="shared")', 'scope="shared", strides=(45, 9, 1))')
    padded = tir.parse(text)
    assert _allocated(padded)["A_shared"].strides[1].value == 9
    tir.assert_structural_equal(tir.parse(padded.script()), padded)
    assert not tir.structural_equal(padded, copy_through_shared)
    assert not tir.structural_equal(padded, tir.parse(text.replace("(45, 9, 1)", "(54, 9, 1)")))


def test_strided_buffer_refuses_a_wrong_stride_count():
    with pytest.raises(ValueError, match="has 3 dimensions but 2 strides"):
        tir.Buffer("S", (2, 3, 4), strides=(12, 1))


# ---------------------------------------------------------------- the seed's shared matmul, padded


@pytest.mark.parametrize("runner", sorted(RUNNERS))
@pytest.mark.parametrize("align", [(32, 4), (32, 1), (16, 8)])
def test_padded_shared_matmul_computes(runner, align):
    _check_on(shared_matmul(128, 128, 64, align), workloads.matmul(128, 128, 64), runner)


def test_padded_tiles_are_allocated_padded_on_every_target():
    sch = shared_matmul(128, 128, 64, (32, 4))
    # A_shared is 64 rows of 8 (row stride 8 -> 36), B_shared 8 rows of 64 (64 -> 68).
    for target in ("cuda", "metal", "c"):
        source, _ = generate_source(sch.mod, target)
        assert re.search(r"A_shared\[2304\]", source), target
        assert re.search(r"B_shared\[544\]", source), target


def test_limits_count_the_padding():
    sch = shared_matmul(128, 128, 64, (32, 4))
    planned = _allocated(planned_allocations(sch.mod.main_function()))
    assert planned["A_shared"].static_nbytes() == 64 * 36 * 4
    check_limits(shared_matmul(128, 128, 64).mod, Target.parse("cuda"))
    # A_shared's rows of 8 floats padded to 200: 64 * 200 * 4 = 51,200 bytes, above 48 KB.
    with pytest.raises(SpaceError, match="max_shared_memory_bytes"):
        check_limits(shared_matmul(128, 128, 64, (256, 200)).mod, Target.parse("cuda"))


@pytest.mark.skipif(not nvcc.nvcc_available(), reason="needs nvcc (the CUDA toolkit)")
@pytest.mark.parametrize("align", [(32, 4), (32, 1)])
def test_padded_shared_matmul_compiles_with_nvcc(align):
    source, _ = generate_source(shared_matmul(256, 256, 256, align).mod, "cuda")
    assert nvcc.compile_with_nvcc(source, "sm_90")[:4] == b"\x7fELF"


# ---------------------------------------------------------------- float4 fetches, only where proven

CUDA_STORE = r"\*\(float4\*\)\({name} \+"
CUDA_LOAD = r"\*\(const float4\*\)\({name} \+"
METAL_STORE = r"\*\(threadgroup float4\*\)\({name} \+"
METAL_LOAD = r"\*\(device const float4\*\)\({name} \+"


def _vector_accesses(source: str, store: str, load: str) -> dict[str, int]:
    return {
        "A_shared store": len(re.findall(store.format(name="A_shared"), source)),
        "B_shared store": len(re.findall(store.format(name="B_shared"), source)),
        "A load": len(re.findall(load.format(name="A"), source)),
        "B load": len(re.findall(load.format(name="B"), source)),
    }


@pytest.mark.parametrize(
    ("target", "store", "load"), [("cuda", CUDA_STORE, CUDA_LOAD), ("metal", METAL_STORE, METAL_LOAD)]
)
def test_aligned_fetch_is_float4_on_both_sides(target, store, load):
    source, _ = generate_source(shared_matmul(128, 128, 64, (32, 4)).mod, target)
    assert _vector_accesses(source, store, load) == dict.fromkeys(
        ("A_shared store", "B_shared store", "A load", "B load"), 1
    )


@pytest.mark.parametrize(
    ("target", "store", "load"), [("cuda", CUDA_STORE, CUDA_LOAD), ("metal", METAL_STORE, METAL_LOAD)]
)
def test_rows_padded_off_four_make_the_shared_side_scalar(target, store, load):
    # Row strides of 33 and 65 floats: the shared addresses are not multiples of 4, so the copy is
    # four scalar statements (each loading one element; the printer does not split a vector copy).
    source, _ = generate_source(shared_matmul(128, 128, 64, (32, 1)).mod, target)
    assert set(_vector_accesses(source, store, load).values()) == {0}
    assert re.search(r"A_shared\[[^\]]*\* 33 [^\]]*\+ 3\] = A\[", source)


@pytest.mark.parametrize(
    ("target", "store", "load"), [("cuda", CUDA_STORE, CUDA_LOAD), ("metal", METAL_STORE, METAL_LOAD)]
)
def test_global_rows_off_four_make_the_global_side_scalar(target, store, load):
    # K = 66: A's rows start at multiples of 66 floats, so A's fetch cannot be proven aligned.
    sch = shared_matmul(128, 128, 72)
    mod = workloads.matmul(128, 128, 66)
    sch = _retarget(sch, mod)
    source, _ = generate_source(sch.mod, target)
    found = _vector_accesses(source, store, load)
    assert found["A load"] == 0
    assert found["B load"] == 1 and found["B_shared store"] == 1


def _retarget(sch: Schedule, mod: tir.IRModule) -> Schedule:
    """``sch``'s trace replayed on ``mod`` (same block names, other sizes)."""
    replayed = Schedule(mod)
    sch.trace.apply_to_schedule(replayed)
    return replayed


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_misaligned_fetch_still_computes(runner):
    mod = workloads.matmul(128, 128, 66)
    _check_on(_retarget(shared_matmul(128, 128, 72), mod), mod, runner)


# ---------------------------------------------------------------- the tuner's space


def _fetch_lanes(sch: Schedule) -> list[int]:
    return [
        i.args["candidates"][i.decision]
        for i in sch.trace.insts
        if i.kind == "sample_categorical" and i.args["candidates"] == FETCH_VECTOR_LANES
    ]


def test_space_pads_shared_tiles_and_vectorizes_fetches():
    mod = workloads.matmul(128, 128, 128)
    vector_fetches = 0
    for seed in range(16):
        sch = SpaceGenerator("cuda").sample(mod, seed)
        aligns = [i for i in sch.trace.insts if i.kind == "storage_align"]
        assert [(i.args["factor"], i.args["offset"]) for i in aligns] == [(32, 4), (32, 4)]
        shared = [
            b
            for b in _allocated(planned_allocations(sch.mod.main_function())).values()
            if b.scope == "shared"
        ]
        assert len(shared) == 2 and all(b.strides[0].value % 32 == 4 for b in shared)
        source, _ = generate_source(sch.mod, "cuda")
        found = _vector_accesses(source, CUDA_STORE, CUDA_LOAD)
        if found["A_shared store"] and found["A load"]:
            vector_fetches += 1
            assert _fetch_lanes(sch)[0] == 4
    assert vector_fetches > 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_space_candidates_with_padded_tiles_compute_in_the_simulator(seed):
    mod = workloads.matmul(64, 64, 64)
    _check_on(SpaceGenerator("metal").sample(mod, seed), mod, "metal-sim", seed)
