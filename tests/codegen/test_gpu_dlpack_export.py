"""On an NVIDIA GPU (``pytest -m gpu``): DLPack arrays of CuPy and PyTorch in place, and exported files run.

The exported cubin is loaded by CuPy alone and launched as the exported JSON
says, so an application without tensorir-py gets the same answer. Skipped where
CuPy or a GPU is missing (PyTorch tests also where torch is missing).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from codegen import RuntimeUnavailableError, build
from codegen.cuda.nvcc import nvcc_available
from tests.codegen.test_timing_export_dlpack import N, gpu_schedule, random_matrices

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def matmul_cuda():
    module = build(gpu_schedule(), "cuda")
    try:
        module.loaded  # noqa: B018
    except RuntimeUnavailableError as error:
        pytest.skip(f"no CUDA runtime here: {error}")
    return module


def expected(a, b):
    return a.astype(np.float64) @ b


def test_cupy_and_torch_arrays_are_used_in_place(matmul_cuda):
    import cupy

    a, b = random_matrices()
    c = cupy.full((N, N), cupy.nan, dtype=cupy.float32)
    matmul_cuda["main"](cupy.asarray(a), cupy.asarray(b), c)
    np.testing.assert_allclose(c.get(), expected(a, b), rtol=1e-4, atol=1e-4)
    torch = pytest.importorskip("torch")
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    tc = torch.full((N, N), float("nan"), device="cuda")
    matmul_cuda["main"](ta, tb, tc)
    torch.cuda.synchronize()
    np.testing.assert_allclose(tc.cpu().numpy(), expected(a, b), rtol=1e-4, atol=1e-4)
    result = matmul_cuda.benchmark("main", ta, tb, tc, repeat=3)
    assert len(result.timing.results) == 3 and result.gflops > 0
    assert torch.from_dlpack(np.zeros(3, np.float32)).shape == (3,)  # numpy results go the other way


def test_exported_cubin_runs_as_its_json_says(matmul_cuda, tmp_path):
    import cupy

    if not nvcc_available():
        pytest.skip("nvcc is not installed: the export has no cubin")
    device = cupy.cuda.Device()
    arch = f"sm_{device.compute_capability}"
    module = build(gpu_schedule(), f"cuda -arch={arch}")
    module.export(tmp_path, "mm")
    (function,) = json.loads((tmp_path / "mm.json").read_text())["functions"]
    loaded = cupy.RawModule(path=str(tmp_path / "mm.cubin"))
    a, b = random_matrices()
    arrays = {"A": cupy.asarray(a), "B": cupy.asarray(b), "C": cupy.full((N, N), cupy.nan, cupy.float32)}
    for launch in function["launches"]:
        kernel = loaded.get_function(launch["kernel"])
        kernel(tuple(launch["grid"]), tuple(launch["block"]), tuple(arrays[n] for n in launch["arguments"]))
    cupy.cuda.get_current_stream().synchronize()
    np.testing.assert_allclose(arrays["C"].get(), expected(a, b), rtol=1e-4, atol=1e-4)
