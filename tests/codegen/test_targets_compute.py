"""Every fixture program and every seed schedule computes numpy's result on C and in the Metal simulator.

Inputs are random (outputs pre-filled with garbage); each program is built with
``build`` exactly as a user would and compared with the fixture's numpy
reference. CUDA sources of the same programs are compiled with nvcc for sm_90
where nvcc exists (no GPU needed); ``-m gpu`` runs them on a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen import BuildError, build
from codegen.build import generate_source
from tests.codegen.seed_kernels import REFERENCES, SEED_KERNELS, SMALL_SIZES, random_arguments
from tests.fixtures.programs import FIXTURES

RUNNABLE = [f for f in FIXTURES if f.executable]
# Metal has no float64 (checked in test_bad_input.py); everything else runs everywhere.
UNSUPPORTED = {("metal", "axpy_float64")}
TARGETS = {"c": ("c", None), "metal-sim": ("metal", "sim")}


def check_fixture(fixture, target: str, device: str | None) -> None:
    module = build(fixture.func, target, device=device)
    rng = np.random.default_rng(7)
    arrays = fixture.inputs(rng)
    expected = fixture.reference(*[a.copy() if isinstance(a, np.ndarray) else a for a in arrays])
    module[fixture.func.name](*arrays)
    for output, value in zip(fixture.outputs, expected):
        tolerance = 1e-2 if arrays[output].dtype == np.float16 else 1e-4
        np.testing.assert_allclose(
            arrays[output], value, rtol=tolerance, atol=tolerance, err_msg=fixture.name
        )


@pytest.mark.parametrize("fixture", RUNNABLE, ids=lambda f: f.name)
@pytest.mark.parametrize("where", sorted(TARGETS))
def test_fixture_computes_numpy_result(fixture, where):
    target, device = TARGETS[where]
    if (target, fixture.name) in UNSUPPORTED:
        with pytest.raises(BuildError, match="does not have"):
            build(fixture.func, target, device=device)
        return
    check_fixture(fixture, target, device)


@pytest.mark.parametrize("kernel", sorted(SEED_KERNELS))
@pytest.mark.parametrize("where", sorted(TARGETS))
def test_seed_schedule_computes_numpy_result(kernel, where):
    target, device = TARGETS[where]
    mod = SEED_KERNELS[kernel](SMALL_SIZES[kernel])
    arrays = random_arguments(mod)
    expected = REFERENCES[kernel](*arrays)
    build(mod, target, device=device)["main"](*arrays)
    np.testing.assert_allclose(arrays[-1], expected, rtol=1e-4, atol=1e-4)


def cuda_sources() -> list[tuple[str, object]]:
    cases = [(f.name, f.func) for f in FIXTURES if ("cuda", f.name) not in UNSUPPORTED]
    return cases + [(f"seed_{name}", make(1024)) for name, make in sorted(SEED_KERNELS.items())]


@pytest.mark.parametrize("name, program", cuda_sources(), ids=[name for name, _ in cuda_sources()])
def test_cuda_source_compiles_with_nvcc(name, program):
    nvcc = pytest.importorskip("codegen.cuda.nvcc")
    if not nvcc.nvcc_available():
        pytest.skip("nvcc is not installed")
    source, _ = generate_source(program, "cuda")
    assert nvcc.compile_with_nvcc(source, "sm_90")
