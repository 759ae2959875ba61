"""On an NVIDIA GPU (``pytest -m gpu``): dynamic shapes on the CUDA runtime, against numpy.

The schedules of dynamic_schedules.py, each built once and called at sizes the tiles do and do
not divide (and n = 0, which launches nothing), with numpy arrays and with CuPy arrays used in
place. test_dynamic_shapes_gpu.py runs the same schedules on the Metal simulator and nvcc.
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen import RuntimeUnavailableError, build
from tests.codegen.dynamic_schedules import (
    matmul_arrays,
    rows_matmul_shared,
    rows_softmax_cross_thread,
    rows_softmax_split,
    softmax_arrays,
)

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def matmul_module():
    module = build(rows_matmul_shared(), "cuda")
    try:
        module.loaded  # noqa: B018 - compiles here, or says why it cannot
    except RuntimeUnavailableError as error:
        pytest.skip(f"no CUDA runtime here: {error}")
    return module


def test_tiled_matmul_at_several_sizes_with_one_build(matmul_module):
    for n in (1, 8, 37, 1000, 0):
        a, b, c, expected = matmul_arrays(n)
        matmul_module["main"](a, b, c)
        np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-4)
    a, b, c, _ = matmul_arrays(4096)
    assert matmul_module.benchmark("main", a, b, c, repeat=3).seconds > 0


def test_softmax_rows_with_call_sized_workspaces(matmul_module):
    module = build(rows_softmax_split(), "cuda", check_bounds=True)
    for n in (3, 77, 2049):
        a, b, expected = softmax_arrays(n)
        module["main"](a, b)
        np.testing.assert_allclose(b, expected, rtol=1e-5, atol=1e-7)


def test_softmax_rows_one_thread_block_each_with_cross_thread_reductions(matmul_module):
    module = build(rows_softmax_cross_thread(), "cuda")
    for n in (1, 77, 5000, 0):
        a, b, expected = softmax_arrays(n)
        module["main"](a, b)
        np.testing.assert_allclose(b, expected, rtol=1e-5, atol=1e-7)


def test_cupy_arrays_in_place_and_a_mismatch_refused(matmul_module):
    cupy = pytest.importorskip("cupy")
    a, b, c, expected = matmul_arrays(129)
    a_gpu, b_gpu, c_gpu = cupy.asarray(a), cupy.asarray(b), cupy.zeros((129, 32), "float32")
    matmul_module["main"](a_gpu, b_gpu, c_gpu)
    np.testing.assert_allclose(c_gpu.get(), expected, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match=r"\('n', 32\) = \(129, 32\)"):
        matmul_module["main"](a_gpu, b_gpu, cupy.zeros((128, 32), "float32"))
