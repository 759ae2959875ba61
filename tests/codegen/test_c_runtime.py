"""The C runtime on hand-written sources in the printer's convention: numbers, cache, errors, timing."""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from codegen.c import compiler
from codegen.c.compiler import CompilerNotFoundError, compiler_description
from codegen.c.runtime import load
from codegen.errors import BuildError, CompileError
from codegen.program import BufferSpec, CompiledFunction
from codegen.target import Target

MATMUL_SOURCE = """#include <math.h>
#include <stdlib.h>
void tir_matmul(float* __restrict__ A, float* __restrict__ B, float* __restrict__ C) {
  #pragma omp parallel for
  for (int i = 0; i < 64; ++i) {
    for (int j = 0; j < 48; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < 32; ++k) {
        acc = acc + A[i * 32 + k] * B[k * 48 + j];
      }
      C[i * 48 + j] = acc;
    }
  }
}
"""

MATMUL = CompiledFunction(
    name="matmul",
    params=(
        BufferSpec("A", "float32", (64, 32), written=False),
        BufferSpec("B", "float32", (32, 48), written=False),
        BufferSpec("C", "float32", (64, 48)),
    ),
    flops=2 * 64 * 48 * 32,
    entry="tir_matmul",
)

# B[i] = 2 A[i + 1] + A[i + 3] * A[g + 3], g the first i of its group of 4: unaligned loads, a lane read.
VECTOR_SOURCE = """#include <math.h>
#include <stdlib.h>
typedef float float4 __attribute__((vector_size(16), aligned(4)));
void tir_shift(float* __restrict__ A, float* __restrict__ B) {
  for (int i = 0; i < 64; i += 4) {
    float4 x = *(float4*)(A + (i + 1));
    float4 y = *(float4*)(A + (i + 3));
    *(float4*)(B + i) = x * (float4){2.0f, 2.0f, 2.0f, 2.0f} + y * (float4){y[0], y[0], y[0], y[0]};
  }
}
"""

SHIFT = CompiledFunction(
    name="shift",
    params=(BufferSpec("A", "float32", (67,), written=False), BufferSpec("B", "float32", (64,))),
    flops=64 * 3,
    entry="tir_shift",
)

THREADS_SOURCE = """int omp_get_num_threads(void);
void tir_threads(int* __restrict__ out) {
  #pragma omp parallel
  {
    #pragma omp single
    out[0] = omp_get_num_threads();
  }
}
"""

THREADS = CompiledFunction(
    name="threads", params=(BufferSpec("out", "int32", (1,)),), flops=0, entry="tir_threads"
)

C_TARGET = Target.parse("c")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TIR_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def compile_calls(monkeypatch) -> list[list[str]]:
    """The compiler commands that compiled a module (probes excluded), recorded as they run."""
    calls: list[list[str]] = []
    real_run = compiler._run

    def counting_run(command, *args, **kwargs):
        if compiler.SOURCE_NAME in command:
            calls.append(command)
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(compiler, "_run", counting_run)
    return calls


def _random(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_openmp_matmul_matches_numpy():
    module = load(MATMUL_SOURCE, [MATMUL], C_TARGET)
    a, b = _random((64, 32), 0), _random((32, 48), 1)
    c = np.full((64, 48), np.nan, dtype=np.float32)
    module.run("matmul", [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_vector_extension_with_unaligned_loads():
    module = load(VECTOR_SOURCE, [SHIFT], C_TARGET)
    a = _random((67,), 2)
    b = np.zeros(64, dtype=np.float32)
    module.run("shift", [a, b])
    lane0 = np.repeat(a[3:67:4], 4)
    np.testing.assert_allclose(b, 2 * a[1:65] + a[3:67] * lane0, rtol=1e-6)


def test_non_contiguous_arrays_are_copied_in_and_back():
    module = load(MATMUL_SOURCE, [MATMUL], C_TARGET)
    a = np.asfortranarray(_random((64, 32), 3))
    b = _random((48, 32), 4).T
    c_storage = np.zeros((64, 96), dtype=np.float32)
    c = c_storage[:, ::2]
    module.run("matmul", [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    assert not c_storage[:, 1::2].any()


def test_second_load_of_the_same_source_does_not_compile(compile_calls, private_cache):
    load(MATMUL_SOURCE, [MATMUL], C_TARGET)
    assert len(compile_calls) == 1
    compiler._probe.cache_clear()  # as a new process would: probe again, find the library on disk
    module = load(MATMUL_SOURCE, [MATMUL], C_TARGET)
    assert len(compile_calls) == 1
    assert [path.name for path in (private_cache / "c").iterdir()] == [module.library_path.name]
    load(MATMUL_SOURCE.replace("64", "65", 1), [MATMUL], C_TARGET)
    assert len(compile_calls) == 2


def test_compile_error_points_at_the_source_line():
    source = MATMUL_SOURCE.replace("acc = acc +", "acc = acc + undefined_value +")
    with pytest.raises(CompileError) as error:
        load(source, [MATMUL], C_TARGET)
    line = source.splitlines().index(next(li for li in source.splitlines() if "undefined_value" in li)) + 1
    assert error.value.tool == "cc"
    assert error.value.lines == [line]
    assert f"generated source line {line}: acc = acc + undefined_value" in str(error.value)


def test_missing_compiler_says_how_to_fix(monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent")
    with pytest.raises(CompilerNotFoundError, match="no C compiler found.*set CC"):
        load(MATMUL_SOURCE, [MATMUL], C_TARGET)


def test_time_returns_positive_seconds_and_keeps_results():
    module = load(MATMUL_SOURCE, [MATMUL], C_TARGET)
    a, b = _random((64, 32), 5), _random((32, 48), 6)
    c = np.zeros((64, 48), dtype=np.float32)
    times = module.time("matmul", [a, b, c], number=3, repeat=4)
    assert len(times) == 4
    assert all(isinstance(t, float) and 0 < t < 1 for t in times)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_description_names_the_machine_compiled_for():
    description = compiler_description(C_TARGET)
    assert " -O3 -march=native (" in description or " -O3 -mcpu=native (" in description
    module = load(MATMUL_SOURCE, [MATMUL], C_TARGET)
    assert description in module.device_name
    assert "cores" in module.device_name


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="x86-64 feature levels")
def test_description_tells_generic_from_modern_x86():
    assert "AVX2: no" in compiler_description(Target.parse("c -march=x86-64"))
    assert "AVX2: yes" in compiler_description(Target.parse("c -march=x86-64-v3"))


def test_gcc_allocates_registers_over_the_whole_function_and_clang_gets_no_gcc_flag():
    probed = compiler.find_compiler(C_TARGET)
    as_gcc = dataclasses.replace(probed, name="gcc 12.2.0")
    as_clang = dataclasses.replace(probed, name="clang 17.0.6")
    assert "-fira-region=one" in as_gcc.flags
    assert "-fira-region=one" not in as_clang.flags
    assert as_gcc.cache_key("void f(void) {}") != as_clang.cache_key("void f(void) {}")


def test_unknown_march_is_a_build_error():
    with pytest.raises(BuildError, match="rejects -march=not-a-cpu"):
        compiler_description(Target.parse("c -march=not-a-cpu"))


def _has_openmp() -> bool:
    try:
        return compiler.find_compiler(C_TARGET).openmp
    except CompilerNotFoundError:
        return False


@pytest.mark.skipif(not _has_openmp(), reason="the C compiler has no OpenMP")
def test_omp_num_threads_is_respected(monkeypatch):
    module = load(THREADS_SOURCE, [THREADS], C_TARGET)
    out = np.zeros(1, dtype=np.int32)
    for threads in (1, 3):
        monkeypatch.setenv("OMP_NUM_THREADS", str(threads))
        module.run("threads", [out])
        assert out[0] == threads


_AFFINITY_CHILD = """
import json, os, subprocess, sys
import numpy as np
from codegen.c.runtime import load
from tests.codegen.test_c_runtime import C_TARGET, THREADS, THREADS_SOURCE
before = sorted(os.sched_getaffinity(0))
load(THREADS_SOURCE, [THREADS], C_TARGET).run("threads", [np.zeros(1, dtype=np.int32)])
child = subprocess.run([sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"],
                       capture_output=True, text=True, check=True).stdout
print(json.dumps([before, sorted(os.sched_getaffinity(0)), json.loads(child), "OMP_PROC_BIND" in os.environ]))
"""


@pytest.mark.skipif(
    not _has_openmp() or len(getattr(os, "sched_getaffinity", lambda _: ())(0)) < 2,
    reason="needs OpenMP and 2 cores",
)
def test_running_a_parallel_kernel_leaves_the_caller_and_its_children_on_all_their_cores():
    # OpenMP binds the thread that loads it to one core for good; a fresh process shows it.
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    out = subprocess.run([sys.executable, "-c", _AFFINITY_CHILD], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    before, after, child, leaked = json.loads(out.stdout)
    assert after == before and child == before and not leaked


def test_argument_errors_are_clear():
    module = load(MATMUL_SOURCE, [MATMUL], C_TARGET)
    a, b = _random((64, 32), 7), _random((32, 48), 8)
    frozen = np.zeros((64, 48), dtype=np.float32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="writes 'C'.*read-only"):
        module.run("matmul", [a, b, frozen])
    with pytest.raises(KeyError, match="no function named 'mm'.*matmul"):
        module.run("mm", [a, b, frozen])
