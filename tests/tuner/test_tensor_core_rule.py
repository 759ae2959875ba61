"""The space's tensor-core rule: matmuls whose dtypes a GPU target's intrinsics take run on matrix units.

Metal candidates of float16 and float16 -> float32 matmuls are tensorized
(simdgroup_matrix), compute the workload in the Metal simulator, replay from their
trace and mutate to other warp and fragment counts; CUDA float16 candidates use
mma.sync (float32 accumulators) or WMMA (float16 ones), compile with nvcc and compute
the workload in the executor; they sample software pipelines of 16-byte cp.async
fetches within the shared-memory limit, at the first draw. The same holds for
blocks brought to GEMM form first (tensor_core_gemm_form.py): batch matmuls, conv2d
as an im2col GEMM, and shapes padded up to the tile. Where no intrinsic fits (float32
on CUDA, the CPU, an extent below the tile, depthwise convolution), and for float32
on Metal (pipelined scalar tiling until simdgroup floats are measured), the scalar
multi-level tiling stays, and the space says why.
"""

from __future__ import annotations

import doctest
import json
import random

import numpy as np
import pytest

import tir
import tuner.space.tensor_core_gemm_form
from codegen import build
from codegen.build import generate_source
from codegen.cuda import nvcc
from schedule import Schedule, Trace
from tests.codegen.tensor_core_schedules import mixed_matmul
from tests.codegen.test_tensor_cores import TOLERANCE, random_operands
from tir.bfloat16 import to_bfloat16_bits
from tuner import workloads
from tuner.features import extract_features
from tuner.space import SpaceGenerator


def _matmul(in_dtype: str, acc_dtype: str, n: int):
    return mixed_matmul(n, n, n) if in_dtype != acc_dtype else workloads.matmul(n, n, n, in_dtype)


def _tensorized(sch: Schedule) -> int:
    return sum(1 for inst in sch.trace.insts if inst.kind == "tensorize")


@pytest.mark.parametrize(
    "dtypes", [("float16", "float16"), ("float16", "float32")], ids=["float16", "float16-float32"]
)
def test_metal_candidates_run_on_simdgroup_matrices(dtypes):
    mod = _matmul(*dtypes, 64)
    space = SpaceGenerator("metal")
    sch = space.sample(mod, seed=5)
    assert _tensorized(sch) == 5  # two loads, fill, mma, store
    other = space.mutate(sch.trace, mod, random.Random(1))
    assert other is not None and _tensorized(other) == 5
    rtol, atol = TOLERANCE[dtypes]
    for candidate in (sch, other):
        a, b, c = random_operands(*dtypes, 64, 64, 64)
        build(candidate.mod, "metal", device="sim")["main"](a, b, c)
        np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=rtol, atol=atol)
        assert np.isfinite(extract_features(candidate.mod, "metal")).all()


def test_a_candidate_replays_from_its_json_trace():
    mod = workloads.matmul(64, 64, 64, "float16")
    sch = SpaceGenerator("metal").sample(mod, seed=2)
    replayed = Schedule(mod)
    Trace.apply_json_to_schedule(json.loads(json.dumps(sch.trace.as_json())), replayed)
    tir.assert_structural_equal(replayed.mod, sch.mod)


@pytest.mark.parametrize(
    ("acc_dtype", "call"), [("float16", "wmma::mma_sync("), ("float32", "tir_mma_m16n8k16(")]
)
def test_cuda_float16_candidates_use_tensor_cores(acc_dtype, call):
    # float32 accumulators take mma.sync m16n8k16 (ldmatrix); float16 ones, which it lacks, WMMA.
    mod = _matmul("float16", acc_dtype, 128)
    sch = SpaceGenerator("cuda").sample(mod, seed=3)
    assert _tensorized(sch) == 5
    source, _ = generate_source(sch.mod, "cuda")
    assert call in source
    if nvcc.nvcc_available():
        assert nvcc.compile_with_nvcc(source, "sm_90")[:4] == b"\x7fELF"
    a, b, c = random_operands("float16", acc_dtype, 128, 128, 128)
    tir.interpret(sch.mod["main"], a, b, c)
    tolerance = 1e-2 if acc_dtype == "float16" else 1e-4
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize(
    ("target", "mod"),
    [
        ("cuda", workloads.matmul(64, 64, 64)),
        ("metal", workloads.matmul(64, 64, 64)),
        ("c", workloads.matmul(64, 64, 64, "float16")),
    ],
    ids=["float32-on-cuda", "float32-on-metal", "cpu"],
)
def test_without_a_fitting_intrinsic_the_scalar_tiling_stays(target, mod):
    sch = SpaceGenerator(target).sample(mod, seed=0)
    assert _tensorized(sch) == 0


def test_cuda_candidates_pipeline_16_byte_fetches_within_the_limits_at_the_first_draw():
    # One attempt per seed: a draft over the shared-memory or register limit would raise SpaceError.
    mod = mixed_matmul(512, 512, 512)
    space = SpaceGenerator("cuda", max_attempts=1)
    sources = [generate_source(space.sample(mod, seed=seed).mod, "cuda")[0] for seed in range(24)]
    assert any("cp.async.commit_group" in source for source in sources)  # pipelined, cp.async
    assert any("tir_cp_async_16(&" in source for source in sources)  # 8 halfs a thread


def test_a_pipelined_cuda_candidate_computes_the_matmul():
    mod = mixed_matmul(128, 128, 128)
    for seed in range(40):
        sch = SpaceGenerator("cuda").sample(mod, seed=seed)
        if "cp.async.wait_group" in generate_source(sch.mod, "cuda")[0]:
            break
    else:
        pytest.fail("no pipelined candidate in 40 seeds")
    a, b, c = random_operands("float16", "float32", 128, 128, 128)
    tir.interpret(sch.mod["main"], a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-4, atol=1e-4)


def test_the_rule_often_drafts_the_preferred_tiling_first():
    # 1024^3 bfloat16 on mma.sync: 64x128x32 blocks of 2 x 2 warps (128 blocks, the fastest hand
    # tiling at that size); the other candidates are uniform draws.
    space = SpaceGenerator("cuda", max_attempts=1)
    mod = workloads.matmul(1024, 1024, 1024, "bfloat16")
    traces = [space.sample(mod, seed=seed).trace for seed in range(12)]
    tiles = "sample_perfect_tile"
    drafts = [[inst.decision for inst in trace.insts if inst.kind == tiles] for trace in traces]
    preferred = [[16, 2, 2], [8, 2, 8], [32, 2]]
    assert preferred in drafts and any(d != preferred for d in drafts)


# ---------------------------------------------------------------- GEMM form: batch, convolution, padding

# (workload, shape, dtype): a batch loop on blockIdx.z, conv2d as an im2col GEMM, a shape padded to the tile
GEMM_CASES = {
    "batch_matmul-float16": ("batch_matmul", (3, 32, 48, 32), "float16"),
    "conv2d_nhwc-float16": ("conv2d_nhwc", (1, 6, 6, 16, 16, 3, 3, 1, 1), "float16"),
    "conv2d_nhwc-strided-float16": ("conv2d_nhwc", (2, 9, 9, 16, 32, 3, 3, 2, 1), "float16"),
    "matmul-100x72x40-float16": ("matmul", (100, 72, 40), "float16"),
}
CUDA_ONLY_CASES = {
    "conv2d_nhwc-bfloat16": ("conv2d_nhwc", (1, 6, 6, 16, 16, 3, 3, 1, 1), "bfloat16"),
    "batch_matmul-bfloat16": ("batch_matmul", (2, 20, 32, 24), "bfloat16"),
}
# Max error relative to the largest output. A half accumulator rounds every partial sum: summed one
# product at a time in float16, K = 576 (the default conv2d's) loses up to 7e-3 on random inputs.
# bfloat16 workloads accumulate in float32.
TOLERANCE_BY_DTYPE = {"float16": 1e-2, "bfloat16": 1e-4}


def workload_arrays(name: str, shape, dtype: str, seed: int):
    """Random inputs (an output of garbage) for a built-in workload, and the numpy reference's output."""
    mod = workloads.make(name, shape, dtype)
    rng = np.random.default_rng(seed)
    arrays = []
    for param in mod["main"].buffer_params:
        values = rng.random([int(d) for d in param.shape]) - 0.5
        arrays.append(to_bfloat16_bits(values) if param.dtype == "bfloat16" else values.astype(param.dtype))
    arrays[-1] = np.full(arrays[-1].shape, 77, arrays[-1].dtype)  # every element must be written
    return mod, arrays, workloads.reference_for(name, shape, dtype)(arrays[:-1])[0]


def relative_error(actual, expected) -> float:
    return float(np.abs(actual.astype("float64") - expected).max() / max(1.0, np.abs(expected).max()))


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("case", sorted(GEMM_CASES))
def test_metal_gemm_form_candidates_compute_the_workload_on_simdgroup_matrices(case, seed):
    name, shape, dtype = GEMM_CASES[case]
    mod, arrays, expected = workload_arrays(name, shape, dtype, seed)
    space = SpaceGenerator("metal")
    sch = space.sample(mod, seed=seed)
    assert _tensorized(sch) == 5 and not space.reasons
    source, _ = generate_source(sch.mod, "metal")
    assert "simdgroup_multiply_accumulate(" in source
    build(sch.mod, "metal", device="sim")["main"](*arrays)
    assert relative_error(arrays[-1], expected) < TOLERANCE_BY_DTYPE[dtype]
    assert np.isfinite(extract_features(sch.mod, "metal")).all()


@pytest.mark.parametrize("case", sorted(GEMM_CASES) + sorted(CUDA_ONLY_CASES))
def test_cuda_gemm_form_candidates_use_tensor_cores_and_compute_the_workload(case):
    name, shape, dtype = {**GEMM_CASES, **CUDA_ONLY_CASES}[case]
    mod, arrays, expected = workload_arrays(name, shape, dtype, seed=2)
    sch = SpaceGenerator("cuda").sample(mod, seed=2)
    assert _tensorized(sch) == 5
    source, _ = generate_source(sch.mod, "cuda")
    assert "wmma::mma_sync(" in source or "mma.sync.aligned.m16n8k16" in source  # WMMA or mma.sync
    if nvcc.nvcc_available():
        assert nvcc.compile_with_nvcc(source, "sm_90")[:4] == b"\x7fELF"
    tir.interpret(sch.mod["main"], *arrays)
    assert relative_error(arrays[-1], expected) < TOLERANCE_BY_DTYPE[dtype]


def test_a_batch_matmul_puts_its_batch_on_blockidx_z():
    sch = SpaceGenerator("cuda").sample(workloads.batch_matmul(3, 32, 48, 32, "float16"), seed=0)
    binds = [inst.args.get("thread_axis") for inst in sch.trace.insts if inst.kind == "bind"]
    assert "blockIdx.z" in binds
    assert "reindex" not in [inst.kind for inst in sch.trace.insts]  # already in GEMM form


def test_conv2d_is_an_im2col_gemm_fetched_straight_from_its_input():
    sch = SpaceGenerator("cuda").sample(
        workloads.make("conv2d_nhwc", GEMM_CASES["conv2d_nhwc-float16"][1], "float16"), seed=0
    )
    kinds = [inst.kind for inst in sch.trace.insts]
    assert kinds.count("reindex") == 3 and "transform_block_layout" in kinds and "pad_einsum" in kinds
    # the im2col and padding copies are folded into the shared-memory fetches: no kernel writes them
    assert not {"X_pad", "X_pad_reindex", "X_pad_reindex_pad", "W_reindex"} & set(sch.block_names(scope=None))


@pytest.mark.parametrize("case", ["batch_matmul-float16", "conv2d_nhwc-float16", "matmul-100x72x40-float16"])
def test_gemm_form_candidates_replay_from_json_and_mutate(case):
    name, shape, dtype = GEMM_CASES[case]
    mod = workloads.make(name, shape, dtype)
    space = SpaceGenerator("metal")
    sch = space.sample(mod, seed=4)
    replayed = Schedule(mod)
    Trace.apply_json_to_schedule(json.loads(json.dumps(sch.trace.as_json())), replayed)
    tir.assert_structural_equal(replayed.mod, sch.mod)
    other = space.mutate(sch.trace, mod, random.Random(0))
    assert other is not None and _tensorized(other) == 5


@pytest.mark.parametrize(
    ("target", "name", "shape", "reason"),
    [
        ("metal", "matmul", (4, 64, 64), "M extent 4 of block 'C' is smaller than the 8-wide tile"),
        ("cuda", "batch_matmul", (4, 64, 8, 64), "N extent 8 of block 'C' is smaller than the 16-wide tile"),
        (
            "cuda",
            "depthwise_conv2d",
            (1, 8, 8, 16, 3, 3, 1, 1),
            "has no N iterator (spatial, indexing B and C only)",
        ),
    ],
    ids=["matmul-M-below-the-tile", "batch_matmul-N-below-the-tile", "depthwise_conv2d"],
)
def test_a_shape_the_matrix_unit_cannot_take_falls_back_to_the_scalar_space_with_its_reason(
    target, name, shape, reason
):
    mod, arrays, expected = workload_arrays(name, shape, "float16", seed=0)
    space = SpaceGenerator(target)
    sch = space.sample(mod, seed=0)
    assert _tensorized(sch) == 0
    assert reason in " ".join(space.reasons.values())
    tir.interpret(sch.mod["main"], *arrays)
    assert relative_error(arrays[-1], expected) < 4e-3


def test_gemm_form_docstring_example():
    assert doctest.testmod(tuner.space.tensor_core_gemm_form).failed == 0


@pytest.mark.parametrize(
    "update",
    ["C[vi, vj] + T.max(A[vi, vk], B[vk, vj])", "T.max(C[vi, vj], A[vi, vk] * B[vk, vj])"],
    ids=["sum-of-max", "max-of-products"],
)
def test_a_gemm_shaped_block_that_is_no_multiply_accumulate_falls_back_before_any_tiling(update):
    mod = tir.IRModule(
        {
            "main": tir.parse(
                """
@T.prim_func
def main(A: T.Buffer((32, 32), "float16"), B: T.Buffer((32, 32), "float16"),
         C: T.Buffer((32, 32), "float16")):
    for i, j, k in T.grid(32, 32, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float16(0)
            C[vi, vj] = UPDATE
""".replace("UPDATE", update)
            )
        }
    )
    space = SpaceGenerator("metal")
    sch = space.sample(mod, seed=0)
    assert _tensorized(sch) == 0
    assert "GEMM-shaped but its body is not out = out + A * B" in space.reasons["C"]
    rng = np.random.default_rng(0)
    a, b = ((rng.random((32, 32)) - 0.5).astype("float16") for _ in range(2))
    c = np.zeros((32, 32), "float16")
    build(sch.mod, "metal", device="sim")["main"](a, b, c)
    if update.startswith("T.max"):
        expected = np.maximum((a[:, None, :].astype("float64") * b.T[None, :, :]).max(-1), 0)
    else:
        expected = np.maximum(a[:, None, :].astype("float64"), b.T[None, :, :]).sum(-1)
    np.testing.assert_allclose(c, expected, rtol=1e-2, atol=1e-1)
