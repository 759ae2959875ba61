"""Software pipelining (software_pipeline_stage/order/async_stages): the pass, the targets, the errors.

The pass's output on a small copy-then-compute loop is compared with the expected
script and run by the reference executor; the pipelined matmul of
tests/codegen/pipeline_schedules.py (2, 3 and 4 stages, async and not, scalar and
float4 fetches) computes numpy's result on C and in the Metal simulator, and its
CUDA source compiles with nvcc for sm_80 and sm_90 (tests/codegen/test_gpu.py runs
it on a GPU); malformed annotations are BuildErrors naming the loop.
"""

from __future__ import annotations

import numpy as np
import pytest

import tir
from codegen import BuildError, build
from codegen.build import generate_source
from codegen.cuda import nvcc
from schedule import Schedule
from tests.codegen.pipeline_schedules import pipelined_matmul
from tests.schedule.util import random_args
from tir import T
from tir.transform.inject_software_pipeline import (
    SoftwarePipelineError,
    inject_software_pipeline,
    remove_software_pipeline,
)

# ---------------------------------------------------------------- the pass


@T.prim_func
def copy_then_compute(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16,), scope="shared")
    for tx in T.thread_binding(16, thread="threadIdx.x"):
        for k in T.serial(
            8, annotations={"software_pipeline_stage": [0, 1], "software_pipeline_order": [0, 1]}
        ):
            with T.block("B"):
                T.reads(A[tx, k])
                T.writes(B[tx])
                B[tx] = A[tx, k] * T.float32(2)
            with T.block("C"):
                T.reads(B[tx])
                T.writes(C[tx, k])
                C[tx, k] = B[tx] + T.float32(1)


@T.prim_func
def copy_then_compute_pipelined(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    T.func_attr({"software_pipeline_synchronized": ["B"]})
    B = T.alloc_buffer((2, 16), scope="shared")
    for tx in T.thread_binding(16, thread="threadIdx.x"):
        T.evaluate(T.tvm_storage_sync("shared"))
        with T.block("B_prologue0"):
            T.reads(A[tx, 0])
            T.writes(B[0, tx])
            B[0, tx] = A[tx, 0] * T.float32(2)
        for k in range(1, 8):
            T.evaluate(T.tvm_storage_sync("shared"))
            with T.block("B"):
                T.reads(A[tx, k])
                T.writes(B[k % 2, tx])
                B[k % 2, tx] = A[tx, k] * T.float32(2)
            with T.block("C"):
                T.reads(B[(k - 1) % 2, tx])
                T.writes(C[tx, k - 1])
                C[tx, k - 1] = B[(k - 1) % 2, tx] + T.float32(1)
        T.evaluate(T.tvm_storage_sync("shared"))
        with T.block("C_epilogue0"):
            T.reads(B[1, tx])
            T.writes(C[tx, 7])
            C[tx, 7] = B[1, tx] + T.float32(1)


def test_two_stages_version_the_buffer_and_unroll_prologue_and_epilogue():
    """B gets 2 versions; the pass places one barrier per pipeline iteration and names B so that
    inject_thread_sync leaves it alone."""
    pipelined = inject_software_pipeline(copy_then_compute)
    tir.assert_structural_equal(pipelined, copy_then_compute_pipelined)
    # A value computed only in the pipeline is not a plain copy: async_copies leaves it alone.
    tir.assert_structural_equal(inject_software_pipeline(copy_then_compute, async_copies=True), pipelined)
    expected, got = random_args(copy_then_compute), random_args(copy_then_compute)
    tir.interpret(copy_then_compute, *expected)
    tir.interpret(pipelined, *got)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-6)


def test_remove_software_pipeline_keeps_the_plain_loop():
    plain = remove_software_pipeline(copy_then_compute)
    loops = [n for n in tir.functor.stmts_pre_order(plain.body) if isinstance(n, tir.For)]
    assert all(not loop.annotations for loop in loops)
    assert [loop.extent.value for loop in loops] == [16, 8]


@T.prim_func
def register_then_compute(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    B = T.alloc_buffer((16,), scope="local")
    for tx in T.thread_binding(16, thread="threadIdx.x"):
        for k in T.serial(
            8, annotations={"software_pipeline_stage": [0, 1], "software_pipeline_order": [0, 1]}
        ):
            with T.block("B"):
                T.reads(A[tx, k])
                T.writes(B[tx])
                B[tx] = A[tx, k] * T.float32(2)
            with T.block("C"):
                T.reads(B[tx])
                T.writes(C[tx, k])
                C[tx, k] = B[tx] + T.float32(1)


def _version_indices(func) -> list:
    """The first index of every access to a versioned buffer (a leading dimension of 2)."""
    found = []

    def visit(node):
        if isinstance(node, (tir.BufferLoad, tir.BufferStore)) and node.buffer.name == "B":
            found.append(node.indices[0])

    tir.functor.post_order_visit(func.body, visit)
    return found


def test_register_versions_unroll_the_steady_loop_so_each_version_index_is_a_constant():
    """A register buffer (local, warp, fragments) indexed by ``k % 2`` would live in local memory
    in CUDA; the steady loop holds two pipeline iterations instead, each with constant versions,
    and the odd iteration left over runs after it (8 iterations: prologue 1, 3 x 2 steady, 1 left,
    epilogue 1)."""
    pipelined = inject_software_pipeline(register_then_compute)
    indices = _version_indices(pipelined)
    assert indices and all(isinstance(index, tir.IntImm) for index in indices), indices
    loops = [n for n in tir.functor.stmts_pre_order(pipelined.body) if isinstance(n, tir.For)]
    assert [loop.extent.value for loop in loops if not loop.thread_tag] == [3]
    expected, got = random_args(register_then_compute), random_args(register_then_compute)
    tir.interpret(register_then_compute, *expected)
    tir.interpret(pipelined, *got)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-6)
    c = np.full((16, 8), 1e3, "float32")
    build(register_then_compute, "c")["register_then_compute"](expected[0], c)
    np.testing.assert_allclose(c, expected[1], rtol=1e-6)


# ---------------------------------------------------------------- the targets

CASES = [
    (stages, async_copy, lanes) for stages in (2, 3, 4) for async_copy in (True, False) for lanes in (1, 4)
]


def _case_id(case) -> str:
    stages, async_copy, lanes = case
    return f"{stages}stages-{'async' if async_copy else 'sync'}-x{lanes}"


def check_pipelined_matmul(target: str, device: str | None, case, n: int = 128) -> None:
    """The pipelined matmul for ``case`` computes numpy's product on random inputs."""
    stages, async_copy, lanes = case
    mod = pipelined_matmul(n, stages, async_copy, lanes)
    rng = np.random.default_rng(stages * 10 + lanes)
    a, b = (rng.random((n, n)) + 0.5).astype("float32"), (rng.random((n, n)) + 0.5).astype("float32")
    c = np.full((n, n), 1e3, dtype="float32")
    build(mod, target, device=device)["main"](a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b, rtol=1e-4, err_msg=f"{target} {case}")


@pytest.mark.parametrize("case", CASES, ids=_case_id)
@pytest.mark.parametrize("target, device", [("c", None), ("metal", "sim")], ids=["c", "metal-sim"])
def test_pipelined_matmul_computes(target, device, case):
    check_pipelined_matmul(target, device, case)


def test_the_executor_agrees_with_the_pipelined_schedule():
    mod = pipelined_matmul(64, 3)
    expected, got = random_args(mod["main"]), random_args(mod["main"])
    tir.interpret(pipelined_matmul(64, 1), *expected)
    build(mod, "metal", device="sim")["main"](*got)
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-4, atol=1e-4)


def test_one_barrier_per_pipeline_iteration():
    """Versions make one barrier per iteration enough: the pipeline places it; without a pipeline
    the loop has two (before the copies and before the compute)."""
    for stages, barriers in ((1, 2), (3, 1)):
        source, _ = generate_source(pipelined_matmul(256, stages, async_copy=False), "metal")
        body = source[source.index("for (int k_0") :]
        body = body[: body.index("\n  }\n")]
        assert body.count("threadgroup_barrier") == barriers, (stages, body)


def test_a_pipeline_without_versions_leaves_the_barriers_to_inject_thread_sync():
    """All statements in one stage: no versions, so the barriers are inject_thread_sync's two."""
    mod = _annotated(stage=[0, 0, 0]).mod
    source, _ = generate_source(mod, "metal")
    body = source[source.index("for (int k_0") :]
    assert body[: body.index("\n  }\n")].count("threadgroup_barrier") == 2
    expected, got = random_args(mod["main"]), random_args(mod["main"])
    tir.interpret(mod, *expected)
    build(mod, "metal", device="sim")["main"](*got)
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-4, atol=1e-4)


def test_versions_multiply_shared_memory_and_c_keeps_one_copy():
    cuda, _ = generate_source(pipelined_matmul(256, 3), "cuda")
    metal, _ = generate_source(pipelined_matmul(256, 3), "metal")
    c_source, _ = generate_source(pipelined_matmul(256, 3), "c")
    assert "__shared__ __align__(16) float A_shared[3072];" in cuda  # 3 versions of 64 x 16
    assert "threadgroup float A_shared[3072];" in metal
    assert "A_shared[1024]" in c_source and "3072" not in c_source


def test_async_stages_use_cp_async_from_sm_80_only():
    mod = pipelined_matmul(256, 3)
    for arch in ("sm_80", "sm_90"):
        source, _ = generate_source(mod, f"cuda -arch={arch}")
        assert "cp.async.cg.shared.global [d32], [%1], 16;" in source
        # Commits: two prologue iterations, the steady loop, two epilogue iterations (empty groups).
        # Waits at the top of each iteration that computes, before its one barrier: the group
        # of two iterations ago must have landed, the last one may be in flight.
        assert source.count("cp.async.wait_group 1;") == 3 and source.count("cp.async.commit_group;") == 5
        steady = source[source.index("for (int k_0 = 2;") :]
        assert steady.index("wait_group 1") < steady.index("__syncthreads()") < steady.index("tir_cp_async")
    for target in ("cuda -arch=sm_75", "metal"):
        source, _ = generate_source(mod, target)
        assert "cp.async" not in source and "async_copy" not in source
    scalar, _ = generate_source(pipelined_matmul(256, 3, lanes=1), "cuda")
    assert "cp.async.ca.shared.global [d32], [%1], 4;" in scalar and ", 16;" not in scalar


@pytest.mark.skipif(not nvcc.nvcc_available(), reason="needs nvcc (the CUDA toolkit)")
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_cuda_sources_compile_with_nvcc(case):
    stages, async_copy, lanes = case
    source, _ = generate_source(pipelined_matmul(256, stages, async_copy, lanes), "cuda")
    nvcc.compile_with_nvcc(source, "sm_90")


# ---------------------------------------------------------------- malformed annotations


def _annotated(**annotations) -> Schedule:
    """The 3-statement k_0 loop (copy A, copy B, compute) of the pipelined matmul, annotated."""
    sch = Schedule(pipelined_matmul(64, 1))
    k0 = sch.get_loops(sch.get_block("C"))[2]
    for key, value in annotations.items():
        sch.annotate(k0, f"software_pipeline_{key}", value)
    return sch


@pytest.mark.parametrize(
    "annotations, phrase",
    [
        ({"stage": [0, 1]}, "software_pipeline_stage has 2 entries but the loop body has 3 statements"),
        ({"stage": [0, 0, 1], "order": [0, 1, 1]}, "must be a permutation of 0..2"),
        ({"stage": [0, 0, 0], "order": [0, 2, 1]}, "would read B_shared before it is written"),
        ({"stage": [0, 1, 0]}, "stages must not decrease along a dependence"),
        ({"stage": [0, 0, 1], "async_stages": [2]}, "lists [2], not stages of [0, 0, 1]"),
        ({"stage": [0, -1, 1]}, "has a negative stage"),
        ({"order": [0, 1, 2]}, "needs software_pipeline_stage on the same loop"),
        ({"stage": "0, 0, 1"}, "must be a list of integers"),
    ],
)
@pytest.mark.parametrize("target", ["c", "cuda", "metal"])
def test_malformed_annotations_are_build_errors_naming_the_loop(annotations, phrase, target):
    sch = _annotated(**annotations)
    with pytest.raises(BuildError) as error:
        generate_source(sch.mod, target)
    assert "loop k_0" in str(error.value) and phrase in str(error.value)


@T.prim_func
def symbolic_extent(a: T.handle, c: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    B = T.alloc_buffer((1,), scope="shared")
    for _tx in T.thread_binding(1, thread="threadIdx.x"):
        for k in T.serial(n, annotations={"software_pipeline_stage": [0, 1]}):
            with T.block("B"):
                vk = T.axis.remap("S", [k])
                B[0] = A[vk]
            with T.block("C"):
                vk = T.axis.remap("S", [k])
                C[vk] = B[0]


def test_a_symbolic_extent_is_refused():
    # (builds need constant shapes anyway; the pass says what it needs on its own)
    with pytest.raises(SoftwarePipelineError, match="loop k: software pipelining needs a constant extent"):
        inject_software_pipeline(symbolic_extent)
