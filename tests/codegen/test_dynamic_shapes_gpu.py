"""Dynamic shapes on the GPU targets (issue 16): one build, any n, on the Metal simulator and nvcc.

A shape variable is a scalar kernel argument (CUDA ``int n``, Metal ``constant int& n``), the
grid is computed at call time from it (``(n + 7) // 8`` threadgroups; none at all for n = 0),
global workspaces are sized per call, and the split's predicate guards the tail. The module
binds n from the arrays and refuses arrays that disagree before any launch. The programs and
schedules are in dynamic_schedules.py; test_gpu_dynamic_shapes.py runs them on a GPU.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from codegen import build
from codegen.build import generate_source
from codegen.cuda import nvcc
from codegen.cuda.runtime import CudaModule
from codegen.errors import BoundsCheckError, BuildError, LaunchError
from codegen.program import CompiledFunction, KernelLaunch
from schedule import Schedule
from tests.codegen import metal_standin
from tests.codegen.dynamic_schedules import (
    matmul_arrays,
    rows_matmul_shared,
    rows_softmax_cross_thread,
    rows_softmax_split,
    softmax_arrays,
)
from tests.schedule.test_symbolic_extents import scale_then_shift
from tir import T


def test_one_build_runs_the_tiled_matmul_at_several_sizes_on_the_simulator():
    module = build(rows_matmul_shared(), "metal", device="sim")
    source = module.get_source()
    assert "constant int& n [[buffer(3)]]" in source
    assert "threadgroup float A_shared[256];" in source  # one 8 x 32 tile, whatever n is
    assert "if (blockIdx_x * 8 + threadIdx_y < n) {" in source  # the split's tail
    (launch,) = module.functions["main"].launches
    assert str(launch.grid[0]) == "(n + 7) // 8" and launch.block == (32, 8, 1)
    for n in (5, 8, 37):
        a, b, c, expected = matmul_arrays(n)
        module["main"](a, b, c)
        np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-4)


def test_a_row_per_thread_block_with_cross_thread_reductions():
    module = build(rows_softmax_cross_thread(), "metal", device="sim")
    (launch,) = module.functions["main"].launches
    assert (str(launch.grid[0]), launch.block) == ("n", (32, 1, 1))
    assert "simd_max" in module.get_source()
    for n in (3, 0, 50):
        a, b, expected = softmax_arrays(n)
        module["main"](a, b)
        np.testing.assert_allclose(b, expected, rtol=1e-5, atol=1e-7)


def test_workspaces_are_sized_per_call_and_an_empty_grid_launches_nothing():
    module = build(rows_softmax_split(), "metal", device="sim")
    function = module.functions["main"]
    assert [str(w.shape[0]) for w in function.workspaces] == ["n", "n"]
    for n in (77, 0, 3):
        a, b, expected = softmax_arrays(n)
        module["main"](a, b)
        np.testing.assert_allclose(b, expected, rtol=1e-5, atol=1e-7)
    assert function.for_call((np.zeros((0, 64)), np.zeros((0, 64)), 0)).launches == ()


@pytest.mark.skipif(not nvcc.nvcc_available(), reason="needs nvcc (the CUDA toolkit)")
@pytest.mark.parametrize(
    "schedule", [rows_matmul_shared, rows_softmax_split, rows_softmax_cross_thread], ids=lambda f: f.__name__
)
@pytest.mark.parametrize("check_bounds", [False, True], ids=["plain", "checked"])
def test_cuda_sources_compile_with_nvcc(schedule, check_bounds):
    source, _ = generate_source(schedule(), "cuda", check_bounds=check_bounds)
    assert "int n" in source
    assert nvcc.compile_with_nvcc(source, "sm_90")[:4] == b"\x7fELF"


def test_arrays_that_disagree_on_n_are_refused_before_any_launch():
    module = build(rows_matmul_shared(), "metal", device="sim")
    a, b, c, _ = matmul_arrays(9)
    expected_message = r"argument 2 \(C\) must be a float32 array of shape \('n', 32\) = \(9, 32\)"
    with pytest.raises(ValueError, match=expected_message):
        module["main"](a, b, c[:8])
    assert np.isnan(c).all()


@pytest.mark.parametrize("schedule", [rows_matmul_shared, rows_softmax_split], ids=lambda f: f.__name__)
def test_a_checked_build_proves_the_guarded_accesses_in_bounds(schedule):
    # Under the split's guard (i_0 * 8 + i_1 < n) every access of an (n, ...) buffer is proved in
    # bounds, so the checked kernel is the plain one: no check costs anything.
    checked = build(schedule(), "metal", device="sim", check_bounds=True)
    assert "tir_check_index" not in checked.get_source()
    assert checked.get_source() == build(schedule(), "metal", device="sim").get_source()


@T.prim_func
def shift_left(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi + 1]  # reads one past the end for the last element


def test_an_out_of_bounds_read_at_a_dynamic_size_is_caught_by_a_checked_build():
    sch = Schedule(shift_left)
    outer, inner = sch.split(sch.get_loops(sch.get_block("B"))[0], [None, 4])
    sch.bind(outer, "blockIdx.x")
    sch.bind(inner, "threadIdx.x")
    module = build(sch.mod, "metal", device="sim", check_bounds=True)
    with pytest.raises(BoundsCheckError, match="A"):
        module["main"](np.ones(6, "float32"), np.zeros(6, "float32"))


@pytest.mark.parametrize("target", ["cuda", "metal"])
def test_unscheduled_dynamic_loops_get_the_default_binding(target):
    source, (function,) = generate_source(scale_then_shift, target)
    assert "blockIdx_x * 256 + threadIdx_x < n * 8" in source
    assert {str(launch.grid[0]) for launch in function.launches} == {"(n * 8 + 255) // 256"}


def test_the_default_binding_runs_any_size_on_the_simulator():
    module = build(scale_then_shift, "metal", device="sim")
    for n in (1, 32, 77):
        a = np.random.default_rng(n).random((n, 8), "float32")
        c = np.full((n, 8), np.nan, "float32")
        module["scale_then_shift"](a, c)
        np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


def test_a_dynamic_thread_extent_is_a_build_error():
    sch = Schedule(shift_left)
    sch.bind(sch.get_loops(sch.get_block("B"))[0], "threadIdx.x")
    with pytest.raises(BuildError, match=r"extent n, which is not a constant.*Split the loop by a constant"):
        generate_source(sch.mod, "cuda")


def test_the_metal_runtime_remakes_its_buffers_when_n_changes(monkeypatch):
    ledger = metal_standin.install(monkeypatch)
    module = build(rows_softmax_split(), "metal")
    for n in (4, 4, 40):
        a, b, expected = softmax_arrays(n)
        module["main"](a, b)
        np.testing.assert_allclose(b, expected, rtol=1e-5, atol=1e-7)
    assert ledger.buffers_created == 8  # A, B and two workspaces for n = 4, then again for n = 40
    assert ledger.live_bytes == 4 * (2 * 40 * 64 + 2 * 40)  # the n = 4 buffers were released


def test_export_describes_the_grid_as_an_expression_of_n(tmp_path):
    module = build(rows_matmul_shared(), "metal", device="sim")
    paths = module.export(tmp_path)
    launches = json.loads((tmp_path / "kernels.json").read_text())["functions"][0]["launches"]
    assert launches[0]["grid"] == ["(n + 7) // 8", 1, 1]
    swift = (tmp_path / "kernels.swift").read_text()
    assert "var main_n: Int32 = 0" in swift
    assert "MTLSize(width: (Int(main_n) + 7) / 8, height: 1, depth: 1)" in swift
    assert "length: max(Int(main_n) * 64 * 4, 4)" in swift
    assert len(paths) == 3


@T.prim_func
def add_one_of_length(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] + T.float32(1)


@pytest.mark.parametrize("target, device", [("c", None), ("metal", "sim")])
def test_a_size_passed_as_a_scalar_must_match_the_arrays(target, device):
    module = build(add_one_of_length, target, device=device)
    a, b = np.random.default_rng(5).random(300, "float32"), np.zeros(300, "float32")
    module["add_one_of_length"](a, b, 300)
    np.testing.assert_allclose(b, a + 1, rtol=1e-6)
    with pytest.raises(
        ValueError, match=r"argument 2 \(n\) is a dimension of the arrays, which have n = 300"
    ):
        module["add_one_of_length"](a, b, 100000)


def test_the_cuda_runtime_refuses_a_grid_past_cudas_limits():
    # No GPU is needed: the limit is checked before anything reaches the driver.
    runtime = object.__new__(CudaModule)
    function = CompiledFunction("main", (), 0)
    with pytest.raises(LaunchError, match=r"grid of \(1, 70000, 1\) thread blocks, over CUDA's limits"):
        runtime._launch(function, KernelLaunch("main_kernel0", (1, 70000, 1), (32, 1, 1), ()), {})
