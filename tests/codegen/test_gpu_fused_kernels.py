"""On an NVIDIA GPU (``pytest -m gpu``): padded and vectorized fetches, fused epilogues, fused rows.

The kernels that tests/codegen/test_storage_align.py and tests/tuner/test_fusion_rules.py
check on C and in the Metal simulator, run through CuPy on random inputs and compared
with the reference executor: the seed's shared-memory matmul with padded tiles and
float4 fetches (and with fetches that cannot be proven aligned), the hand-fused
epilogue, and the tuner's candidates for matmul_bias_relu, a matmul with two outputs,
softmax and layer norm (one kernel each). Skipped where CuPy or a GPU is missing.
"""

from __future__ import annotations

import numpy as np
import pytest

import tir
from codegen import RuntimeUnavailableError, build
from schedule import Schedule
from tests.codegen.copy_schedules import matmul_and_relu, matmul_epilogue, shared_matmul
from tests.schedule.util import random_args
from tuner import workloads
from tuner.space import SpaceGenerator

pytestmark = pytest.mark.gpu

TWO_OUTPUTS = tir.IRModule({"main": matmul_and_relu})


@pytest.fixture(scope="module", autouse=True)
def gpu_available():
    try:
        build(workloads.reduction_sum(4, 4), "cuda").loaded  # noqa: B018
    except RuntimeUnavailableError as error:
        pytest.skip(f"no CUDA runtime here: {error}")


def _check_on_cuda(sch: Schedule, original: tir.IRModule, seed: int = 0) -> None:
    func = original.main_function()
    expected, got = random_args(func, seed), random_args(func, seed)
    tir.interpret(func, *expected)
    build(sch.mod, "cuda")["main"](*got)
    for param, want, have in zip(func.params, expected, got):
        np.testing.assert_allclose(have, want, rtol=1e-4, atol=1e-4, err_msg=f"buffer {param.name}")


@pytest.mark.parametrize("align", [None, (32, 4), (32, 1), (16, 8)])
def test_padded_shared_matmul_on_cuda(align):
    _check_on_cuda(shared_matmul(256, 256, 128, align), workloads.matmul(256, 256, 128))


def test_fetch_that_cannot_be_proven_aligned_on_cuda():
    mod = workloads.matmul(128, 128, 66)
    replayed = Schedule(mod)
    shared_matmul(128, 128, 72).trace.apply_to_schedule(replayed)
    _check_on_cuda(replayed, mod)


@pytest.mark.parametrize("case", ["bias_relu", "two_outputs"])
def test_hand_fused_epilogue_on_cuda(case):
    mod, epilogue = (
        (workloads.matmul_bias_relu(128, 96, 80), "T_relu") if case == "bias_relu" else (TWO_OUTPUTS, "D")
    )
    _check_on_cuda(matmul_epilogue(mod, epilogue), mod)


@pytest.mark.parametrize(
    "mod",
    [
        workloads.matmul_bias_relu(256, 128, 64),
        TWO_OUTPUTS,
        workloads.matmul(128, 128, 128),
        workloads.softmax(7, 300),
        workloads.layer_norm(7, 300),
    ],
    ids=["matmul_bias_relu", "two_outputs", "matmul", "softmax", "layer_norm"],
)
def test_space_candidates_on_cuda(mod):
    for seed in range(4):
        _check_on_cuda(SpaceGenerator("cuda").sample(mod, seed), mod, seed)
