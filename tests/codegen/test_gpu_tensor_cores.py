"""On an NVIDIA GPU (``pytest -m gpu``; benchmarks/tensor_core_gpu_check.sh): matmuls on tensor cores.

The hand schedule (tuner/space/tensor_core.py) with WMMA and with mma.sync m16n8k16
(ldmatrix loads, PTX's register layouts: checked here first), and mma.sync with the pipelined
staging (16-byte cp.async fetches, padded tiles, 2 to 4 stages over more k steps than stages),
is built for "cuda", run through CuPy on random float16 (and bfloat16) inputs and compared
with numpy's float64 product of the same inputs (float32 accumulation: a tolerance that fits
K products of halves). The tuner's own candidates for the workloads it brings to GEMM form
(batch matmul, conv2d as an im2col GEMM in float16 and bfloat16, a matmul padded to the tile;
tuner/space/tensor_core_gemm_form.py) run the same way against the workloads' numpy
references. Skipped where CuPy or a GPU is missing.
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen import RuntimeUnavailableError, build
from tests.codegen.tensor_core_schedules import mixed_matmul, tensorized_matmul
from tests.codegen.test_tensor_cores import random_operands
from tests.tuner.test_tensor_core_rule import TOLERANCE_BY_DTYPE, relative_error, workload_arrays
from tir.bfloat16 import from_bfloat16_bits, to_bfloat16_bits
from tuner import workloads
from tuner.space import SpaceGenerator

pytestmark = pytest.mark.gpu


def _loaded(sch):
    """``sch`` built for CUDA and loaded on the GPU; the test is skipped where there is none."""
    try:
        module = build(sch.mod, "cuda")
        module.loaded  # noqa: B018
    except RuntimeUnavailableError as error:
        pytest.skip(f"no CUDA runtime here: {error}")
    return module


@pytest.mark.parametrize(
    ("size", "frags", "warps"),
    [
        ((64, 64, 64), (2, 2, 1), (1, 1)),
        ((256, 128, 192), (2, 2, 2), (2, 2)),
        ((1024, 1024, 1024), (2, 4, 2), (4, 2)),
    ],
)
@pytest.mark.parametrize("unit", ["cuda", "cuda-mma"], ids=["wmma", "mma.sync"])
def test_tensor_core_matmul_on_the_gpu(size, frags, warps, unit):
    sch = tensorized_matmul(mixed_matmul(*size), "cuda", frags=frags, warps=warps, vector=2, unit=unit)
    module = _loaded(sch)
    a, b, c = random_operands("float16", "float32", *size)
    module["main"](a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-3, atol=1e-3)
    assert module.benchmark("main", a, b, c, repeat=3).gflops > 0


@pytest.mark.parametrize("unit", ["cuda", "cuda-mma"], ids=["wmma", "mma.sync"])
def test_bfloat16_matmul_on_the_gpu(unit):
    sch = tensorized_matmul(
        workloads.matmul(256, 256, 256, "bfloat16"),
        "cuda",
        frags=(2, 2, 2),
        warps=(2, 2),
        vector=2,
        unit=unit,
    )
    module = _loaded(sch)
    rng = np.random.default_rng(0)
    a, b = to_bfloat16_bits(rng.random((256, 256)) - 0.5), to_bfloat16_bits(rng.random((256, 256)) - 0.5)
    c = np.zeros((256, 256), np.float32)
    module["main"](a, b, c)
    expected = from_bfloat16_bits(a).astype("float64") @ from_bfloat16_bits(b).astype("float64")
    np.testing.assert_allclose(c, expected, rtol=1e-3, atol=1e-3)


# 128x128 and 128x256 block tiles (64x64 or 64x32 per warp) with 16-byte cp.async fetches into padded
# tiles, pipelined over k steps (more of them than stages): the benchmark's configurations. From the
# fifth on they declare over 48 KB (dynamic shared memory); the last two load fragments per k
# fragment, double-buffered or not (k steps of 64).
PIPELINED_CONFIGS = [
    ((4, 8, 2), (2, 2), 2, "step"),
    ((4, 8, 1), (2, 2), 4, "step"),
    ((4, 4, 2), (2, 4), 2, "step"),
    ((4, 4, 2), (2, 2), 3, "step"),
    ((4, 8, 2), (2, 2), 4, "step"),
    ((4, 8, 2), (2, 4), 3, "step"),
    ((4, 8, 2), (2, 2), 3, "k-double"),
    ((4, 8, 4), (2, 2), 3, "k"),
    ((4, 8, 1), (2, 2), 3, "step-ahead"),
    ((4, 4, 2), (2, 2), 4, "step-ahead"),
]


@pytest.mark.parametrize(("frags", "warps", "stages", "loads"), PIPELINED_CONFIGS)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_pipelined_mma_sync_matmul_on_the_gpu(dtype, frags, warps, stages, loads):
    M, N, K = size = (256, 512, 384)  # 6 to 24 k steps
    mod = mixed_matmul(*size) if dtype == "float16" else workloads.matmul(*size, dtype)
    staging = {"vector": 8, "unit": "cuda-mma", "stages": stages, "pad": True, "fragment_loads": loads}
    sch = tensorized_matmul(mod, "cuda", frags=frags, warps=warps, **staging)
    module = _loaded(sch)
    rng = np.random.default_rng(1)
    a, b = rng.random((M, K)) - 0.5, rng.random((K, N)) - 0.5
    if dtype == "bfloat16":
        a, b, values = to_bfloat16_bits(a), to_bfloat16_bits(b), from_bfloat16_bits
    else:
        a, b, values = a.astype(dtype), b.astype(dtype), np.asarray
    c = np.full((M, N), 1000.0, np.float32)
    module["main"](a, b, c)
    expected = values(a).astype("float64") @ values(b).astype("float64")
    np.testing.assert_allclose(c, expected, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("loads", ["step", "k-double", "step-ahead"])
def test_pipelined_wmma_matmul_on_the_gpu(loads):
    M, N, K = 256, 256, 384
    staging = {"vector": 8, "unit": "cuda", "stages": 3, "pad": True, "fragment_loads": loads}
    sch = tensorized_matmul(mixed_matmul(M, N, K), "cuda", frags=(4, 4, 2), warps=(2, 2), **staging)
    module = _loaded(sch)
    a, b, c = random_operands("float16", "float32", M, N, K)
    module["main"](a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-3, atol=1e-3)


# (workload, shape, dtype) at the tuner's default shapes where they are tile multiples
SPACE_CASES = {
    "batch_matmul-float16": ("batch_matmul", (16, 128, 128, 64), "float16"),
    "batch_matmul-bfloat16": ("batch_matmul", (16, 128, 128, 64), "bfloat16"),
    "conv2d_nhwc-float16": ("conv2d_nhwc", (1, 56, 56, 64, 64, 3, 3, 1, 1), "float16"),
    "conv2d_nhwc-bfloat16": ("conv2d_nhwc", (1, 56, 56, 64, 64, 3, 3, 1, 1), "bfloat16"),
    "conv2d_nhwc-strided-float16": ("conv2d_nhwc", (2, 28, 28, 32, 48, 3, 3, 2, 1), "float16"),
    "matmul-100x72x40-float16": ("matmul", (100, 72, 40), "float16"),
}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("case", sorted(SPACE_CASES))
def test_space_candidates_on_tensor_cores_on_the_gpu(case, seed):
    name, shape, dtype = SPACE_CASES[case]
    mod, arrays, expected = workload_arrays(name, shape, dtype, seed)
    sch = SpaceGenerator("cuda").sample(mod, seed=seed)
    assert sum(1 for inst in sch.trace.insts if inst.kind == "tensorize") == 5
    module = _loaded(sch)
    module["main"](*arrays)
    assert relative_error(arrays[-1], expected) < TOLERANCE_BY_DTYPE[dtype]
