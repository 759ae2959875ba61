"""The Metal runtime on hand-written MSL in the printer's convention (tests marked ``metal`` need a Mac)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from codegen.errors import BuildError, CompileError
from codegen.metal.runtime import MetalUnavailableError, load
from codegen.program import BufferSpec, CompiledFunction, KernelLaunch
from codegen.target import Target

WINDOW_SOURCE = """#include <metal_stdlib>
using namespace metal;

kernel void window_kernel0(device float* A [[buffer(0)]],
                           device float* B [[buffer(1)]],
                           uint3 blockIdx [[threadgroup_position_in_grid]],
                           uint3 threadIdx [[thread_position_in_threadgroup]]) {
  threadgroup float A_shared[130];
  const int blockIdx_x = blockIdx.x;
  const int threadIdx_x = threadIdx.x;
  const int t = threadIdx_x;
  for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {
    int j = ax0_0 * 128 + threadIdx_x;
    if (j < 130) {
      A_shared[j] = A[blockIdx_x * 128 + j];
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  B[blockIdx_x * 128 + t] = A_shared[t] + A_shared[t + 1] + A_shared[t + 2];
}
"""

# D = 2 A + A[gather] through the workspace C: float4 loads and stores, then a second kernel.
SCALE_SOURCE = """#include <metal_stdlib>
using namespace metal;

kernel void scale_kernel0(device float* A [[buffer(0)]],
                          device float* C [[buffer(1)]],
                          uint3 blockIdx [[threadgroup_position_in_grid]],
                          uint3 threadIdx [[thread_position_in_threadgroup]]) {
  const int i = ((int)blockIdx.x * 64 + (int)threadIdx.x) * 4;
  float4 v = *(device float4*)(A + i);
  *(device float4*)(C + i) = v * float4(2.0f);
}

kernel void scale_kernel1(device float* A [[buffer(0)]],
                          device float* C [[buffer(1)]],
                          device float* D [[buffer(2)]],
                          uint3 blockIdx [[threadgroup_position_in_grid]],
                          uint3 threadIdx [[thread_position_in_threadgroup]]) {
  const int i = (int)blockIdx.x * 64 + (int)threadIdx.x;
  D[i] = C[i] + A[(i * 5) % 1024];
}
"""

SCALE = CompiledFunction(
    name="scale",
    params=(BufferSpec("A", "float32", (1024,), written=False), BufferSpec("D", "float32", (1024,))),
    flops=2048,
    launches=(
        KernelLaunch("scale_kernel0", (4, 1, 1), (64, 1, 1), ("A", "C")),
        KernelLaunch("scale_kernel1", (16, 1, 1), (64, 1, 1), ("A", "C", "D")),
    ),
    workspaces=(BufferSpec("C", "float32", (1024,)),),
)

METAL = Target.parse("metal")


def _window(block: tuple[int, int, int] = (128, 1, 1)) -> CompiledFunction:
    return CompiledFunction(
        name="window",
        params=(BufferSpec("A", "float32", (1026,), written=False), BufferSpec("B", "float32", (1024,))),
        flops=2048,
        launches=(KernelLaunch("window_kernel0", (8, 1, 1), block, ("A", "B"), shared_bytes=520),),
    )


def _metal_ready() -> bool:
    if sys.platform != "darwin":
        return False
    try:
        import Metal
    except ImportError:
        return False
    return Metal.MTLCreateSystemDefaultDevice() is not None


requires_metal = pytest.mark.skipif(
    not _metal_ready(), reason="needs macOS with Metal and pyobjc-framework-Metal"
)


def _random(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.skipif(sys.platform == "darwin", reason="the message for machines without Metal")
def test_elsewhere_the_error_points_to_the_simulator():
    with pytest.raises(MetalUnavailableError, match=r"device='sim'") as error:
        load(WINDOW_SOURCE, [_window()], METAL)
    assert isinstance(error.value, ImportError)


@pytest.mark.metal
@requires_metal
def test_window_sum_with_threadgroup_memory():
    module = load(WINDOW_SOURCE, [_window()], METAL)
    a = _random(1026, 0)
    b = np.full(1024, np.nan, dtype=np.float32)
    module.run("window", [a, b])
    np.testing.assert_allclose(b, a[:-2] + a[1:-1] + a[2:], rtol=1e-5, atol=1e-6)
    assert module.device_name


@pytest.mark.metal
@requires_metal
def test_two_kernels_through_a_workspace():
    module = load(SCALE_SOURCE, [SCALE], METAL)
    a = _random(1024, 1)
    d = np.zeros(1024, dtype=np.float32)
    module.run("scale", [a, d])
    np.testing.assert_allclose(d, 2 * a + a[(np.arange(1024) * 5) % 1024], rtol=1e-6)


@pytest.mark.metal
@requires_metal
def test_time_returns_positive_seconds():
    module = load(SCALE_SOURCE, [SCALE], METAL)
    a, d = _random(1024, 2), np.zeros(1024, dtype=np.float32)
    times = module.time("scale", [a, d], number=4, repeat=3)
    assert len(times) == 3
    assert all(isinstance(t, float) and 0 < t < 0.1 for t in times)
    np.testing.assert_allclose(d, 2 * a + a[(np.arange(1024) * 5) % 1024], rtol=1e-6)


@pytest.mark.metal
@requires_metal
def test_compile_error_points_at_the_source_line():
    source = WINDOW_SOURCE.replace("threadgroup_barrier", "float w = undefined_value;\n  threadgroup_barrier")
    with pytest.raises(CompileError) as error:
        load(source, [_window()], METAL)
    line = next(n for n, text in enumerate(source.splitlines(), 1) if "undefined_value" in text)
    assert error.value.tool == "Metal"
    assert line in error.value.lines


@pytest.mark.metal
@requires_metal
def test_too_many_threads_per_threadgroup_names_the_kernel():
    with pytest.raises(BuildError, match="kernel 'window_kernel0' of 'window' needs 2048 threads"):
        load(WINDOW_SOURCE, [_window(block=(2048, 1, 1))], METAL)
