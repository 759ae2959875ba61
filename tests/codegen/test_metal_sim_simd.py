"""The Metal host simulator's simdgroup functions on hand-written MSL: Metal's semantics, and divergence.

A simdgroup is 32 consecutive threads of a threadgroup by linear thread index; a
threadgroup of 40 threads has a second simdgroup of 8 active lanes. simd_shuffle,
simd_shuffle_down and simd_sum/product/max/min are collective over the active
lanes. A simdgroup function reached by only part of a simdgroup is undefined in
Metal, and the simulator fails the launch saying so.
"""
# ruff: noqa: E501  (the MSL sources are spelled as the printer emits them, one statement per line)

from __future__ import annotations

import time

import numpy as np
import pytest

from codegen.errors import LaunchError
from codegen.metal.sim import load
from codegen.program import BufferSpec, CompiledFunction, KernelLaunch
from codegen.target import Target

INDICES = """uint3 blockIdx [[threadgroup_position_in_grid]],
    uint3 threadIdx [[thread_position_in_threadgroup]]"""

SOURCE = f"""#include <metal_stdlib>
using namespace metal;

kernel void collectives_kernel0(device float* A [[buffer(0)]],
    device float* B [[buffer(1)]],
    device int* C [[buffer(2)]],
    {INDICES}) {{
  const int t = threadIdx.y * 8 + threadIdx.x;
  const float a = A[blockIdx.x * 40 + t];
  B[(blockIdx.x * 40 + t) * 6 + 0] = simd_sum(a);
  B[(blockIdx.x * 40 + t) * 6 + 1] = simd_max(a);
  B[(blockIdx.x * 40 + t) * 6 + 2] = simd_min(a);
  B[(blockIdx.x * 40 + t) * 6 + 3] = simd_product(a);
  B[(blockIdx.x * 40 + t) * 6 + 4] = simd_shuffle_down(a, (ushort)(3));
  B[(blockIdx.x * 40 + t) * 6 + 5] = simd_shuffle(a, (ushort)(5));
  C[blockIdx.x * 40 + t] = simd_sum(t);
}}

kernel void half_shuffle_kernel0(device float* A [[buffer(0)]],
    {INDICES}) {{
  const int threadIdx_x = threadIdx.x;
  if (threadIdx_x < 16) {{
    A[threadIdx_x] = simd_shuffle_down(A[threadIdx_x], (ushort)(1));
  }}
}}

kernel void two_calls_kernel0(device float* A [[buffer(0)]],
    {INDICES}) {{
  const int threadIdx_x = threadIdx.x;
  if (threadIdx_x < 16) {{
    A[threadIdx_x] = simd_sum(A[threadIdx_x]);
  }} else {{
    A[threadIdx_x] = simd_sum(A[threadIdx_x]);
  }}
}}
"""


def _launch(name: str, grid, block, *buffers: str) -> KernelLaunch:
    return KernelLaunch(name, (*grid, 1, 1)[:3], (*block, 1, 1)[:3], buffers)


FUNCTIONS = [
    CompiledFunction(
        "collectives",
        (
            BufferSpec("A", "float32", (80,), written=False),
            BufferSpec("B", "float32", (80, 6)),
            BufferSpec("C", "int32", (80,)),
        ),
        flops=1,
        launches=(_launch("collectives_kernel0", (2,), (8, 5), "A", "B", "C"),),
    ),
    *(
        CompiledFunction(
            name,
            (BufferSpec("A", "float32", (32,)),),
            flops=1,
            launches=(_launch(f"{name}_kernel0", (1,), (32,), "A"),),
        )
        for name in ("half_shuffle", "two_calls")
    ),
]


@pytest.fixture(scope="module")
def module():
    return load(SOURCE, FUNCTIONS, Target.parse("metal"), barrier_timeout_s=2.0)


def _expected(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What Metal defines for each lane of two threadgroups of 40 threads (simdgroups of 32 and 8)."""
    out = np.full((80, 6), np.nan, np.float32)
    sums = np.zeros(80, np.int32)
    for group in range(2):
        for first, count in ((0, 32), (32, 8)):
            base = group * 40 + first
            lanes = a[base : base + count]
            for lane in range(count):
                row = out[base + lane]
                row[:4] = lanes.sum(), lanes.max(), lanes.min(), np.prod(lanes)
                source = lane + 3
                row[4] = lanes[source] if source < count else (lanes[lane] if source >= 32 else np.nan)
                row[5] = lanes[5] if count > 5 else np.nan
                sums[base + lane] = sum(range(first, first + count))
    return out, sums


def test_collectives_follow_metal_simdgroups(module):
    rng = np.random.default_rng(0)
    a = (1 + rng.standard_normal(80) * 0.1).astype(np.float32)
    b, c = np.zeros((80, 6), np.float32), np.zeros(80, np.int32)
    module.run("collectives", [a, b, c])
    expected, sums = _expected(a)
    np.testing.assert_allclose(b, expected, rtol=1e-5)  # NaN where Metal leaves the value undefined
    np.testing.assert_array_equal(c, sums)


def test_shuffle_reached_by_half_a_simdgroup_is_reported(module):
    start = time.monotonic()
    with pytest.raises(
        LaunchError,
        match=r"half_shuffle_kernel0.*divergent simdgroup function: lane \d+ of simdgroup 0 .* reached the end "
        r"of the kernel while \d+ of its 32 lanes wait at simd_shuffle_down \(MSL line \d+\)",
    ):
        module.run("half_shuffle", [np.zeros(32, np.float32)])
    assert time.monotonic() - start < 2.0, "reported at once, not by the timeout"


def test_lanes_at_different_calls_are_reported(module):
    with pytest.raises(
        LaunchError,
        match=r"two_calls_kernel0.*met at different simdgroup functions: lane 0 at simd_sum \(MSL line",
    ):
        module.run("two_calls", [np.ones(32, np.float32)])
