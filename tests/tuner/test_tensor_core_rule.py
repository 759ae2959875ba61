"""The space's tensor-core rule: matmuls whose dtypes a GPU target's intrinsics take run on matrix units.

Metal candidates of float16 and float16 -> float32 matmuls are tensorized
(simdgroup_matrix), compute the workload in the Metal simulator, replay from their
trace and mutate to other warp and fragment counts; CUDA float16 candidates use
mma.sync (float32 accumulators) or WMMA (float16 ones), compile with nvcc and compute
the workload in the executor; they sample software pipelines of 16-byte cp.async
fetches within the shared-memory limit, at the first draw. Where no intrinsic
fits (float32 on CUDA, sizes that are not tile multiples, the CPU), and for float32
on Metal (pipelined scalar tiling until simdgroup floats are measured), the scalar
multi-level tiling stays.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import tir
from codegen import build
from codegen.build import generate_source
from codegen.cuda import nvcc
from schedule import Schedule, Trace
from tests.codegen.tensor_core_schedules import mixed_matmul
from tests.codegen.test_tensor_cores import TOLERANCE, random_operands
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
        ("metal", workloads.matmul(60, 64, 64, "float16")),
        ("c", workloads.matmul(64, 64, 64, "float16")),
    ],
    ids=["float32-on-cuda", "float32-on-metal", "not-a-tile-multiple", "cpu"],
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
