"""On an NVIDIA GPU (``pytest -m gpu``, through the device tool): the same programs on the CUDA runtime.

Every fixture program and every seed schedule is built for "cuda", run through
CuPy on random inputs and compared with numpy, exactly as the C and simulator
runs in test_targets_compute.py. Skipped where CuPy or a GPU is missing.
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen import RuntimeUnavailableError, build
from tests.codegen.seed_kernels import REFERENCES, SEED_KERNELS, random_arguments
from tests.codegen.test_register_fragments import FRAGMENT_CASES, check_fragment_matmul, fragment_case_id
from tests.codegen.test_scalar_arguments import check_scalar_kinds
from tests.codegen.test_software_pipeline import CASES, check_pipelined_matmul
from tests.codegen.test_targets_compute import RUNNABLE, UNSUPPORTED, check_fixture

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module", autouse=True)
def gpu_available():
    try:
        build(SEED_KERNELS["vector_add"](256), "cuda").loaded  # noqa: B018
    except RuntimeUnavailableError as error:
        pytest.skip(f"no CUDA runtime here: {error}")


@pytest.mark.parametrize(
    "fixture", [f for f in RUNNABLE if ("cuda", f.name) not in UNSUPPORTED], ids=lambda f: f.name
)
def test_fixture_on_cuda(fixture):
    check_fixture(fixture, "cuda", None)


@pytest.mark.parametrize("kernel", sorted(SEED_KERNELS))
@pytest.mark.parametrize("size", [256, 1024])
def test_seed_schedule_on_cuda(kernel, size):
    mod = SEED_KERNELS[kernel](size)
    arrays = random_arguments(mod)
    expected = REFERENCES[kernel](*arrays)
    module = build(mod, "cuda")
    module["main"](*arrays)
    np.testing.assert_allclose(arrays[-1], expected, rtol=1e-4, atol=1e-3)
    assert module.benchmark("main", *arrays, repeat=3).gflops > 0


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("n", [128, 512])
def test_pipelined_matmul_on_cuda(case, n):
    """Software pipelines with cp.async (sm_80+) and synchronous copies, against numpy."""
    check_pipelined_matmul("cuda", None, case, n)


def test_scalar_arguments_of_every_kind_on_cuda():
    check_scalar_kinds("cuda", None)


@pytest.mark.parametrize("case", FRAGMENT_CASES, ids=fragment_case_id)
@pytest.mark.parametrize("n", [256, 1024])
def test_register_fragment_matmul_on_cuda(case, n):
    """Float4 register fragments from transposed, spread shared tiles with cp.async pipelines."""
    check_fragment_matmul("cuda", None, case, n)
