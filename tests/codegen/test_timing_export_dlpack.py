"""The one timer (repeats, spread, number grown to min_repeat), Module.export per target, and DLPack.

The exported C library is linked into a small C program that reads random inputs
from a file, calls the kernel and writes the result; numpy checks it.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest

from codegen import build
from codegen.cuda.nvcc import nvcc_available
from codegen.timing import TimingResult, significant, time_calls
from schedule import Schedule
from tuner import workloads

N = 32


def fake_runtime(per_call: float):
    """A runtime timer whose calls take ``per_call`` seconds each; it records what it was asked."""
    asked: list[tuple[int, int]] = []

    def run(number: int, repeat: int) -> list[float]:
        asked.append((number, repeat))
        return [per_call * (1 + 0.01 * i) for i in range(repeat)]

    return run, asked


def test_number_grows_until_one_repeat_lasts_min_repeat_seconds():
    run, asked = fake_runtime(1e-4)
    timing = time_calls(run, repeat=4, min_repeat_seconds=0.05)
    assert timing.number * 1e-4 >= 0.05 and timing.repeat == 4
    assert asked[-1] == (timing.number, 4) and all(r == 1 for _, r in asked[:-1])
    fixed, asked = fake_runtime(1e-4)
    assert time_calls(fixed, number=7, repeat=2).number == 7 and asked == [(7, 2)]


def test_timing_reports_median_and_spread():
    timing = TimingResult((1.0, 1.1, 0.9, 1.0), number=3)
    assert timing.median == 1.0 and timing.spread == pytest.approx(0.2)
    assert "median of 4 x 3 calls" in str(timing) and "spread 20%" in str(timing)
    with pytest.raises(ValueError, match="repeat >= 1"):
        time_calls(fake_runtime(1.0)[0], repeat=0)


@pytest.mark.parametrize(
    "value, text", [(107.94, "108"), (0.012345, "0.0123"), (1234.5, "1,230"), (9.999, "10.0"), (0.0, "0")]
)
def test_three_significant_digits(value, text):
    assert significant(value) == text


@pytest.fixture(scope="module")
def matmul_c():
    sch = Schedule(workloads.make("matmul", f"{N},{N},{N}"))
    rows, _, _ = sch.get_loops(sch.get_block("C"))
    sch.parallel(rows)
    return build(sch.mod, "c")


def random_matrices(count: int = 2):
    rng = np.random.default_rng(12)
    return [rng.standard_normal((N, N), dtype=np.float32) for _ in range(count)]


def test_benchmark_reports_every_repeat_with_its_spread(matmul_c):
    a, b = random_matrices()
    c = np.zeros((N, N), np.float32)
    result = matmul_c.benchmark("main", a, b, c, repeat=4, min_repeat_seconds=0.002)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    assert len(result.timing.results) == 4 and result.seconds == result.timing.median
    assert result.timing.number * result.timing.results[0] > 0
    assert "spread" in str(result) and f"median of 4 x {result.timing.number} calls" in str(result)
    evaluator = matmul_c.time_evaluator("main", number=2, repeat=3)
    assert evaluator(a, b, c).number == 2


C_PROGRAM = r"""
#include <stdio.h>
#include "kernels.h"

static float A[32][32], B[32][32], C[32][32];

int main(int argc, char **argv) {
  FILE *in = fopen(argv[1], "rb");
  if (!in || fread(A, sizeof A, 1, in) != 1 || fread(B, sizeof B, 1, in) != 1) return 1;
  fclose(in);
  tir_main(&A[0][0], &B[0][0], &C[0][0]);
  FILE *out = fopen(argv[2], "wb");
  fwrite(C, sizeof C, 1, out);
  fclose(out);
  return 0;
}
"""


def test_exported_c_library_is_called_from_a_c_program(matmul_c, tmp_path):
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler")
    folder = tmp_path / "export"
    written = matmul_c.export(folder)
    assert [p.name for p in written] == ["libkernels.so", "kernels.h", "kernels.c"]
    header = (folder / "kernels.h").read_text()
    assert "void tir_main(float* __restrict__ A, float* __restrict__ B, float* __restrict__ C);" in header
    (tmp_path / "app.c").write_text(C_PROGRAM)
    linked = subprocess.run(
        [compiler, "app.c", f"-I{folder}", f"-L{folder}", "-lkernels", f"-Wl,-rpath,{folder}", "-o", "app"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert linked.returncode == 0, linked.stderr
    a, b = random_matrices()
    (tmp_path / "in.bin").write_bytes(a.tobytes() + b.tobytes())
    ran = subprocess.run([str(tmp_path / "app"), "in.bin", "out.bin"], cwd=tmp_path, capture_output=True)
    assert ran.returncode == 0, ran.stderr
    c = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.float32).reshape(N, N)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def gpu_schedule():
    sch = Schedule(workloads.make("matmul", f"{N},{N},{N}"))
    i, j, _ = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")
    return sch.mod


def test_exported_cuda_files_describe_every_launch(tmp_path):
    module = build(gpu_schedule(), "cuda")
    written = {p.name for p in module.export(tmp_path, "mm")}
    assert {"mm.cu", "mm.json"} <= written
    assert ("mm.ptx" in written and "mm.cubin" in written) == nvcc_available()
    description = json.loads((tmp_path / "mm.json").read_text())
    (function,) = description["functions"]
    (launch,) = function["launches"]
    assert (launch["grid"], launch["block"], launch["arguments"]) == ([N, 1, 1], [N, 1, 1], ["A", "B", "C"])
    assert [p["name"] for p in function["params"]] == ["A", "B", "C"]
    assert launch["kernel"] in (tmp_path / "mm.cu").read_text()
    if nvcc_available():
        assert f".entry {launch['kernel']}(" in (tmp_path / "mm.ptx").read_text()


def test_exported_metal_files_dispatch_in_argument_order(tmp_path):
    module = build(gpu_schedule(), "metal", device="sim")
    assert [p.name for p in module.export(tmp_path)] == ["kernels.metal", "kernels.json", "kernels.swift"]
    (launch,) = json.loads((tmp_path / "kernels.json").read_text())["functions"][0]["launches"]
    swift = (tmp_path / "kernels.swift").read_text()
    assert f'makeFunction(name: "{launch["kernel"]}")' in swift
    for index, name in enumerate(launch["arguments"]):
        assert f"setBuffer(main_{name}, offset: 0, index: {index})" in swift
    assert f"MTLSize(width: {N}, height: 1, depth: 1)" in swift


def test_export_name_must_be_an_identifier(matmul_c, tmp_path):
    with pytest.raises(ValueError, match="identifier"):
        matmul_c.export(tmp_path, "my kernels")


class DLPackOnly:
    """An array from another library: nothing but the DLPack protocol (as CuPy, PyTorch, JAX give)."""

    def __init__(self, array: np.ndarray, device: tuple[int, int] | None = None):
        self._array = array
        self._device = device

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._device or self._array.__dlpack_device__()


def test_dlpack_arguments_are_used_in_place(matmul_c):
    a, b = random_matrices()
    c = np.full((N, N), np.nan, np.float32)
    matmul_c["main"](DLPackOnly(a), DLPackOnly(b), DLPackOnly(c))
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    assert np.shares_memory(np.from_dlpack(c), c)  # what the module wrote, another library takes as is
    assert matmul_c.benchmark("main", DLPackOnly(a), DLPackOnly(b), DLPackOnly(c), repeat=2).seconds > 0


def test_a_gpu_dlpack_array_on_the_c_target_is_a_clear_error(matmul_c):
    a, b = random_matrices()
    c = np.zeros((N, N), np.float32)
    with pytest.raises(TypeError, match="DLPack device type 2 .* pass a CPU array"):
        matmul_c["main"](a, b, DLPackOnly(c, device=(2, 0)))
