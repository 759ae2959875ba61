"""Golden sources: the seed notebook's four schedules printed for C, CUDA and Metal.

A change to a printer or a lowering pass must not silently change emitted code
(tinygrad's "process replay"). The files in tests/codegen/golden/ are the
reviewed sources; ``pytest tests/codegen/test_golden_sources.py --update-golden``
rewrites them, and the diff is reviewed like any other change.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.build import generate_source
from tests.codegen.copy_schedules import matmul_epilogue, shared_matmul
from tests.codegen.cross_thread_schedules import cross_thread_softmax
from tests.codegen.pipeline_schedules import pipelined_matmul
from tests.codegen.seed_kernels import SEED_KERNELS
from tests.codegen.tensor_core_schedules import mixed_matmul, tensorized_matmul
from tuner import workloads

GOLDEN = Path(__file__).parent / "golden"
SUFFIX = {"c": "c", "cuda": "cu", "metal": "metal"}


@pytest.mark.parametrize("target", sorted(SUFFIX))
@pytest.mark.parametrize("kernel", sorted(SEED_KERNELS))
def test_golden_source(kernel, target, request):
    source, _ = generate_source(SEED_KERNELS[kernel](1024), target)
    assert_matches_golden(source, f"{kernel}.{SUFFIX[target]}", request)


def assert_matches_golden(source: str, file_name: str, request) -> None:
    """``source`` equals tests/codegen/golden/``file_name`` (rewritten first under --update-golden)."""
    path = GOLDEN / file_name
    if request.config.getoption("--update-golden"):
        path.write_text(source)
    assert path.exists(), f"{path} is missing; run pytest {request.path} --update-golden and review it"
    assert source == path.read_text(), f"{path.name} changed; review and rerun with --update-golden"


def test_window_sum_metal_matches_the_seed_shape():
    source, _ = generate_source(SEED_KERNELS["window_sum"](1024), "metal")
    assert "threadgroup float A_shared[130];" in source
    assert source.count("threadgroup_barrier(mem_flags::mem_threadgroup);") == 1
    assert "if (ax0_0 * 128 + threadIdx_x < 130)" in source


def test_matmul_shared_uses_float4_loads_on_gpus():
    for target, load in (("cuda", "*(const float4*)(A + "), ("metal", "*(device const float4*)(A + ")):
        source, _ = generate_source(SEED_KERNELS["matmul_shared"](1024), target)
        assert load in source, target
        assert source.count("__syncthreads();" if target == "cuda" else "threadgroup_barrier") == 2


@pytest.mark.parametrize("target", ["cuda", "metal"])
def test_golden_cross_thread_softmax(target, request):
    """Row max and row sum each reduced across the block's 128 threads (shuffles; simd_max, simd_sum)."""
    source, _ = generate_source(cross_thread_softmax(128, rows=256, cols=1024).mod, target)
    path = GOLDEN / f"softmax_cross_thread.{SUFFIX[target]}"
    if request.config.getoption("--update-golden"):
        path.write_text(source)
    assert path.exists(), f"{path} is missing; run pytest {__file__} --update-golden and review it"
    assert source == path.read_text(), f"{path.name} changed; review and rerun with --update-golden"


@pytest.mark.parametrize("target", ["cuda", "metal"])
def test_golden_tensorized_matmul(target, request):
    """The hand tensor-core matmul: simdgroup_matrix 8x8x8 (Metal, float32), WMMA 16x16x16 (CUDA, half in)."""
    mod = workloads.matmul(64, 64, 64) if target == "metal" else mixed_matmul(128, 128, 128)
    sch = tensorized_matmul(mod, target, frags=(2, 2, 2), warps=(2, 2), vector=2)
    source, _ = generate_source(sch.mod, target)
    assert_matches_golden(source, f"matmul_tensorized.{SUFFIX[target]}", request)


def test_golden_mma_sync_matmul(request):
    """The same with mma.sync m16n8k16: ldmatrix loads and PTX's register layouts (the prelude's helpers)."""
    sch = tensorized_matmul(
        mixed_matmul(128, 128, 128), "cuda", frags=(2, 2, 2), warps=(2, 2), vector=2, unit="cuda-mma"
    )
    source, _ = generate_source(sch.mod, "cuda")
    assert_matches_golden(source, "matmul_mma_sync.cu", request)


@pytest.mark.parametrize("target", ["cuda", "metal"])
def test_golden_pipelined_matmul(target, request):
    """A 3-stage software pipeline with float4 fetches: cp.async groups on CUDA, synchronous on Metal."""
    source, _ = generate_source(pipelined_matmul(1024, stages=3), target)
    assert_matches_golden(source, f"matmul_pipelined.{SUFFIX[target]}", request)


@pytest.mark.parametrize("target", ["cuda", "metal"])
def test_golden_register_fragment_matmul(target, request):
    """128x128x8, 8x8 per thread, 3 stages: float4 fragments per k step from A transposed and both
    tiles spread in float4 groups, A's transposing copy 4 bytes at a time, float4 C stores."""
    mod = pipelined_matmul(1024, 3, rows=128, cols=128, depth=8, reg=8, fragments=True)
    source, _ = generate_source(mod, target)
    assert_matches_golden(source, f"matmul_register_fragments.{SUFFIX[target]}", request)


@pytest.mark.parametrize("target", ["cuda", "metal"])
def test_golden_padded_shared_matmul(target, request):
    """The seed's shared-memory matmul with both tiles storage_aligned (32, 4): rows of 8 and 64 floats
    padded to 36 and 68, float4 fetches on both sides."""
    source, _ = generate_source(shared_matmul(1024, 1024, 1024, (32, 4)).mod, target)
    assert_matches_golden(source, f"matmul_shared_padded.{SUFFIX[target]}", request)


@pytest.mark.parametrize("target", ["cuda", "metal"])
def test_golden_fused_epilogue(target, request):
    """matmul_bias_relu with the bias + ReLU moved after the local write-back (reverse_compute_at)."""
    sch = matmul_epilogue(workloads.matmul_bias_relu(1024, 1024, 1024), "T_relu")
    source, _ = generate_source(sch.mod, target)
    assert_matches_golden(source, f"matmul_bias_relu_epilogue.{SUFFIX[target]}", request)


def test_golden_pipelined_mma_sync_matmul(request):
    """mma.sync with the CUTLASS-style staging: 16-byte cp.async fetches of 8 halfs in a 3-stage
    pipeline over 4 k steps, shared rows padded to 40 and 72 halfs for conflict-free ldmatrix."""
    sch = tensorized_matmul(
        mixed_matmul(128, 128, 128),
        "cuda",
        frags=(2, 4, 2),
        warps=(2, 2),
        vector=8,
        unit="cuda-mma",
        stages=3,
        pad=True,
    )
    source, _ = generate_source(sch.mod, "cuda")
    assert_matches_golden(source, "matmul_mma_sync_pipelined.cu", request)
