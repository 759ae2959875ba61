"""The register-fragment matmul (``pipelined_matmul(..., fragments=True)``): it computes, as fast SGEMMs do.

Per k step every thread loads its column of A and row of B from shared memory into
local fragments as float4s (A stored transposed, a thread's rows spread in float4
groups), multiplies from registers, and stores C as float4s. Each tiling computes
numpy's product on random inputs on C and in the Metal simulator and agrees with the
reference executor; its CUDA source has 128-bit shared loads (``ld.shared.v4.f32`` in
nvcc's PTX), float4 C stores, the k step loop under ``#pragma unroll`` although it
allocates the fragments, and compiles for sm_90 (tests/codegen/test_gpu.py runs it on
a GPU).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tir
from codegen import build
from codegen.build import generate_source
from codegen.cuda import nvcc
from tests.codegen.pipeline_schedules import pipelined_matmul
from tests.schedule.util import random_args

# (rows, cols, depth, reg, reg_cols, stages): a block tile of rows x cols, k tiles of depth,
# reg x reg_cols outputs per thread.
FRAGMENT_CASES = [
    (64, 64, 16, 4, 4, 3),
    (128, 128, 8, 8, 8, 2),
    (128, 64, 8, 8, 4, 3),
    (32, 32, 8, 8, 8, 1),
    (64, 64, 8, 4, 4, 4),
]


def fragment_case_id(case) -> str:
    rows, cols, depth, reg, reg_cols, stages = case
    return f"{rows}x{cols}x{depth}-r{reg}x{reg_cols}-{stages}stages"


def fragment_matmul(n: int, case) -> tir.IRModule:
    rows, cols, depth, reg, reg_cols, stages = case
    return pipelined_matmul(n, stages, True, 4, rows, cols, depth, reg, fragments=True, reg_cols=reg_cols)


def check_fragment_matmul(target: str, device: str | None, case, n: int = 128) -> None:
    """The register-fragment matmul for ``case`` computes numpy's product on random inputs."""
    rng = np.random.default_rng(sum(case))
    a, b = (rng.random((n, n)) - 0.5).astype("float32"), (rng.random((n, n)) - 0.5).astype("float32")
    c = np.full((n, n), 1e3, dtype="float32")
    build(fragment_matmul(n, case), target, device=device)["main"](a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b, rtol=1e-4, atol=1e-4, err_msg=f"{target} {case}")


@pytest.mark.parametrize("case", FRAGMENT_CASES, ids=fragment_case_id)
@pytest.mark.parametrize("target, device", [("c", None), ("metal", "sim")], ids=["c", "metal-sim"])
def test_fragment_matmul_computes(target, device, case):
    check_fragment_matmul(target, device, case)


@pytest.mark.parametrize("target, device", [("c", None), ("metal", "sim")], ids=["c", "metal-sim"])
def test_fragments_without_the_spread_layout_compute(target, device):
    """``spread=False``: A only transposed, a thread's rows contiguous (the space's layout)."""
    n, rng = 128, np.random.default_rng(11)
    a, b = (rng.random((n, n)) - 0.5).astype("float32"), (rng.random((n, n)) - 0.5).astype("float32")
    mod = pipelined_matmul(n, 3, True, 4, 128, 128, 8, 8, fragments=True, spread=False)
    source, _ = generate_source(mod, "cuda")
    assert "k_1 * 132 + threadIdx_x / 16 * 8" in source  # the column of A: 8 contiguous floats
    c = np.full((n, n), 1e3, dtype="float32")
    build(mod, target, device=device)["main"](a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("reg", [4, 8])
@pytest.mark.parametrize("target, device", [("c", None), ("metal", "sim")], ids=["c", "metal-sim"])
def test_fragments_of_b_only_compute(target, device, reg):
    """``transpose_a=False``: A copied with 16-byte copies and read row-major, B through fragments."""
    n, rng = 128, np.random.default_rng(13)
    a, b = (rng.random((n, n)) - 0.5).astype("float32"), (rng.random((n, n)) - 0.5).astype("float32")
    depth = 64 * 64 // reg // reg * 4 // 64  # one float4 of A per thread per k tile
    mod = pipelined_matmul(n, 3, True, 4, 64, 64, depth, reg, fragments=True, transpose_a=False)
    source, _ = generate_source(mod, "cuda")
    assert "A_shared_local" not in source and "tir_cp_async_16(&A_shared[" in source
    c = np.full((n, n), 1e3, dtype="float32")
    build(mod, target, device=device)["main"](a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b, rtol=1e-4, atol=1e-4)


def test_the_executor_agrees_with_the_fragment_schedule():
    mod = fragment_matmul(32, (32, 32, 8, 8, 8, 2))
    expected, got = random_args(mod["main"]), random_args(mod["main"])
    tir.interpret(pipelined_matmul(32, 1), *expected)
    tir.interpret(mod, *got)
    np.testing.assert_allclose(got[2], expected[2], rtol=1e-5, atol=1e-5)


def test_fragments_are_float4_loads_of_spread_transposed_tiles():
    source, _ = generate_source(fragment_matmul(1024, (128, 128, 8, 8, 8, 3)), "cuda")
    steady = source[source.index("for (int k_0 = 2;") :]
    # Two float4s of A's column and two of B's row per k step, 64 floats apart, A's rows padded to 132.
    a_read = "*(float4*)(A_shared + (k_0 + 1) % 3 * 1056 + k_1 * 132 + ax0_0 * 64 + threadIdx_x / 16 * 4)"
    b_read = "*(float4*)(B_shared + (k_0 + 1) % 3 * 1024 + k_1 * 128 + ax0_0_1 * 64 + threadIdx_x % 16 * 4)"
    assert f"*(float4*)(A_shared_local + ax0_0 * 4) = {a_read}" in steady
    assert f"*(float4*)(B_shared_local + ax0_0_1 * 4) = {b_read}" in steady
    # The k step loop allocates the fragments and is still unrolled by nvcc.
    k_step = r"#pragma unroll\n\s+for \(int k_1 = 0; k_1 < 8; \+\+k_1\) \{\n\s+"
    assert re.search(k_step + r"__align__\(16\) float A_shared_local\[8\];", steady)
    # A's transposing copy moves single floats (4-byte cp.async); B's moves float4s; C leaves as float4s.
    assert "tir_cp_async_4(&A_shared[" in steady and "tir_cp_async_16(&B_shared[" in steady
    assert "*(float4*)(C + " in source


@pytest.mark.skipif(not nvcc.nvcc_available(), reason="needs nvcc (the CUDA toolkit)")
@pytest.mark.parametrize("case", FRAGMENT_CASES, ids=fragment_case_id)
def test_fragment_reads_are_128_bit_shared_loads_in_ptx(case):
    _, _, depth, reg, reg_cols, stages = case
    source, _ = generate_source(fragment_matmul(256, case), "cuda")
    ptx = nvcc.compile_with_nvcc(source, "sm_90", output="ptx").decode()
    loads = len(re.findall(r"ld\.shared\.v4\.f32", ptx))
    # The k tile's code appears `stages` times (the steady loop and stages - 1 epilogue copies).
    assert loads == stages * depth * (reg + reg_cols) // 4 and "ld.shared.f32" not in ptx
    assert len(re.findall(r"st\.global\.v4\.f32", ptx)) == reg * reg_cols // 4


def test_a_k_step_loop_above_the_automatic_pragma_limit_is_still_unrolled():
    """16 steps of 68 statements (1,088) are above the automatic pragma's 1,024: the schedule's
    ``unroll`` asks for it (without it this tiling measured 0.71x cuBLAS on the H200 at 4096^3,
    below depth 8's 0.84x)."""
    source, _ = generate_source(fragment_matmul(1024, (128, 128, 16, 8, 8, 2)), "cuda")
    assert re.search(r"#pragma unroll\n\s+for \(int k_1 = 0; k_1 < 16; \+\+k_1\)", source)
