"""The Metal host simulator on hand-written MSL in the printer's conventions (docs: .agents/CODEGEN.md).

Numbers against numpy on random inputs (window sum with a cooperative fetch, a
tiled matmul with float4 loads into threadgroup memory, int32/half elementwise,
the header's math and vector operators, a workspace shared by two launches), then
the failures a user can meet: a compile error pointing at the MSL line, a
deadlock, barriers that threads of one threadgroup disagree on, a misaligned
vector access, and timing, which the simulator refuses.
"""
# ruff: noqa: E501  (the MSL sources are spelled as the printer emits them, one statement per line)

from __future__ import annotations

import time

import numpy as np
import pytest

from codegen.errors import CompileError, LaunchError
from codegen.metal.sim import SimulatorError, load, simulator
from codegen.program import BufferSpec, CompiledFunction, KernelLaunch
from codegen.target import Target

METAL = Target.parse("metal")
KERNEL_INDICES = """uint3 blockIdx [[threadgroup_position_in_grid]],
    uint3 threadIdx [[thread_position_in_threadgroup]]"""

# The seed notebook's window sum, B[i] = A[i] + A[i + 1] + A[i + 2], as TVM prints it for Metal.
WINDOW_SUM = f"""kernel void window_sum_kernel0(device float* A [[buffer(0)]],
    device float* B [[buffer(1)]],
    {KERNEL_INDICES}) {{
  threadgroup float A_shared[130];
  const int blockIdx_x = blockIdx.x;
  const int threadIdx_x = threadIdx.x;
  for (int ax0_0 = 0; ax0_0 < 2; ++ax0_0) {{
    if (((ax0_0 * 64) + (threadIdx_x >> 1)) < 65) {{
      A_shared[((ax0_0 * 128) + threadIdx_x)] = A[(((blockIdx_x * 128) + (ax0_0 * 128)) + threadIdx_x)];
    }}
  }}
  threadgroup_barrier(mem_flags::mem_threadgroup);
  B[((blockIdx_x * 128) + threadIdx_x)] = ((A_shared[threadIdx_x] + A_shared[(threadIdx_x + 1)]) + A_shared[(threadIdx_x + 2)]);
}}
"""

# C = A @ B (64x64x64): 32x32 tiles of C per threadgroup of 8x32 threads, each thread computing a
# float4 of C; 16-wide k tiles of A and B fetched into threadgroup memory with float4 loads by the
# first 128 threads.
MATMUL = f"""kernel void matmul_kernel0(device float* A [[buffer(0)]],
    device float* B [[buffer(1)]],
    device float* C [[buffer(2)]],
    {KERNEL_INDICES}) {{
  threadgroup float A_shared[512];
  threadgroup float B_shared[512];
  const int blockIdx_x = blockIdx.x;
  const int blockIdx_y = blockIdx.y;
  const int threadIdx_x = threadIdx.x;
  const int threadIdx_y = threadIdx.y;
  float4 C_local = float4(0.000000e+00f);
  for (int k_0 = 0; k_0 < 4; ++k_0) {{
    if (((threadIdx_y * 8) + threadIdx_x) < 128) {{
      *(threadgroup float4*)(A_shared + (((threadIdx_y * 8) + threadIdx_x) * 4)) = *(device float4*)(A + (((((blockIdx_y * 32) + (((threadIdx_y * 8) + threadIdx_x) >> 2)) * 64) + (k_0 * 16)) + ((((threadIdx_y * 8) + threadIdx_x) & 3) * 4)));
      *(threadgroup float4*)(B_shared + (((threadIdx_y * 8) + threadIdx_x) * 4)) = *(device float4*)(B + (((((k_0 * 16) + (((threadIdx_y * 8) + threadIdx_x) >> 3)) * 64) + (blockIdx_x * 32)) + ((((threadIdx_y * 8) + threadIdx_x) & 7) * 4)));
    }}
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (int k_1 = 0; k_1 < 16; ++k_1) {{
      C_local = (C_local + (float4(A_shared[((threadIdx_y * 16) + k_1)]) * *(threadgroup float4*)(B_shared + ((k_1 * 32) + (threadIdx_x * 4)))));
    }}
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }}
  *(device float4*)(C + (((((blockIdx_y * 32) + threadIdx_y) * 64) + (blockIdx_x * 32)) + (threadIdx_x * 4))) = C_local;
}}
"""

ELEMENTWISE = f"""kernel void elementwise_kernel0(device int* A [[buffer(0)]],
    device int* B [[buffer(1)]],
    device half* X [[buffer(2)]],
    device half* Y [[buffer(3)]],
    device int* C [[buffer(4)]],
    device half* D [[buffer(5)]],
    {KERNEL_INDICES}) {{
  const int blockIdx_x = blockIdx.x;
  const int threadIdx_x = threadIdx.x;
  C[((blockIdx_x * 128) + threadIdx_x)] = ((A[((blockIdx_x * 128) + threadIdx_x)] < B[((blockIdx_x * 128) + threadIdx_x)]) ? (A[((blockIdx_x * 128) + threadIdx_x)] * 3) : max((B[((blockIdx_x * 128) + threadIdx_x)] - A[((blockIdx_x * 128) + threadIdx_x)]), 7));
  D[((blockIdx_x * 128) + threadIdx_x)] = (max((X[((blockIdx_x * 128) + threadIdx_x)] * Y[((blockIdx_x * 128) + threadIdx_x)]), (half)0.000000e+00f) + exp(X[((blockIdx_x * 128) + threadIdx_x)]));
}}
"""

# One row of F per thread: the float math functions, then float4 arithmetic lane by lane; one row
# of G: half math and half4 arithmetic.
MATH = f"""kernel void math_kernel0(device float* X [[buffer(0)]],
    device float* F [[buffer(1)]],
    device half* G [[buffer(2)]],
    {KERNEL_INDICES}) {{
  const int threadIdx_x = threadIdx.x;
  const float x = X[threadIdx_x];
  F[((threadIdx_x * 20) + 0)] = exp(x);
  F[((threadIdx_x * 20) + 1)] = exp2(x);
  F[((threadIdx_x * 20) + 2)] = log(x);
  F[((threadIdx_x * 20) + 3)] = log2(x);
  F[((threadIdx_x * 20) + 4)] = sqrt(x);
  F[((threadIdx_x * 20) + 5)] = rsqrt(x);
  F[((threadIdx_x * 20) + 6)] = sin(x);
  F[((threadIdx_x * 20) + 7)] = cos(x);
  F[((threadIdx_x * 20) + 8)] = tanh(x);
  F[((threadIdx_x * 20) + 9)] = fabs((0.000000e+00f - x));
  F[((threadIdx_x * 20) + 10)] = floor((x * 3.000000e+00f));
  F[((threadIdx_x * 20) + 11)] = ceil((x * 3.000000e+00f));
  F[((threadIdx_x * 20) + 12)] = round((x * 3.000000e+00f));
  F[((threadIdx_x * 20) + 13)] = pow(x, 1.500000e+00f);
  F[((threadIdx_x * 20) + 14)] = fma(x, x, 1.000000e+00f) + min(x, 1.000000e+00f) + max(x, 1.000000e+00f);
  float4 v = float4(x, (x + 1.000000e+00f), (x + 2.000000e+00f), (x + 3.000000e+00f));
  float4 w = ((((v * 2.000000e+00f) - float4(1.000000e+00f)) / v) + (v * v));
  F[((threadIdx_x * 20) + 15)] = w.x;
  F[((threadIdx_x * 20) + 16)] = w.y;
  F[((threadIdx_x * 20) + 17)] = w[2];
  F[((threadIdx_x * 20) + 18)] = w.w;
  F[((threadIdx_x * 20) + 19)] = INFINITY;
  const half h = (half)x;
  half4 u = half4(h, (h + (half)1.000000e+00f), sqrt(h), tanh(h));
  u = ((u * u) + half4((half)5.000000e-01f));
  G[((threadIdx_x * 4) + 0)] = u[0];
  G[((threadIdx_x * 4) + 1)] = u.y;
  G[((threadIdx_x * 4) + 2)] = u.z;
  G[((threadIdx_x * 4) + 3)] = max(exp(h), (half)2.000000e+00f);
}}
"""

# W = 2 * A + 1 by one kernel, then B[i] = W[255 - i] * W[i] by another: W must survive between launches.
WORKSPACE = f"""kernel void staged_kernel0(device float* A [[buffer(0)]],
    device float* W [[buffer(1)]],
    {KERNEL_INDICES}) {{
  W[((blockIdx.x * 128) + threadIdx.x)] = ((A[((blockIdx.x * 128) + threadIdx.x)] * 2.000000e+00f) + 1.000000e+00f);
}}

kernel void staged_kernel1(device float* W [[buffer(0)]],
    device float* B [[buffer(1)]],
    {KERNEL_INDICES}) {{
  B[((blockIdx.x * 128) + threadIdx.x)] = (W[(255 - ((blockIdx.x * 128) + threadIdx.x))] * W[((blockIdx.x * 128) + threadIdx.x)]);
}}
"""

# Scalar parameters arrive as `constant T&` bound at their buffer index.
SCALE = f"""kernel void scale_kernel0(device float* A [[buffer(0)]],
    device float* B [[buffer(1)]],
    constant float& alpha [[buffer(2)]],
    constant int& offset [[buffer(3)]],
    {KERNEL_INDICES}) {{
  B[threadIdx.x] = ((A[threadIdx.x] * alpha) + ((float)offset));
}}
"""

PRELUDE = "#include <metal_stdlib>\nusing namespace metal;\n\n"
NUMERIC_SOURCE = PRELUDE + "\n".join([WINDOW_SUM, MATMUL, ELEMENTWISE, MATH, WORKSPACE, SCALE])


def function(name: str, params, launches, workspaces=()) -> CompiledFunction:
    return CompiledFunction(
        name, tuple(params), flops=1, launches=tuple(launches), workspaces=tuple(workspaces)
    )


def read(name: str, dtype: str, *shape: int) -> BufferSpec:
    return BufferSpec(name, dtype, shape, written=False)


def kernel(name: str, grid: tuple[int, ...], block: tuple[int, ...], *buffers: str) -> KernelLaunch:
    return KernelLaunch(name, (*grid, 1, 1)[:3], (*block, 1, 1)[:3], buffers)


NUMERIC_FUNCTIONS = [
    function(
        "window_sum",
        [read("A", "float32", 258), BufferSpec("B", "float32", (256,))],
        [kernel("window_sum_kernel0", (2,), (128,), "A", "B")],
    ),
    function(
        "matmul",
        [read("A", "float32", 64, 64), read("B", "float32", 64, 64), BufferSpec("C", "float32", (64, 64))],
        [kernel("matmul_kernel0", (2, 2), (8, 32), "A", "B", "C")],
    ),
    function(
        "elementwise",
        [
            read("A", "int32", 256),
            read("B", "int32", 256),
            read("X", "float16", 256),
            read("Y", "float16", 256),
            BufferSpec("C", "int32", (256,)),
            BufferSpec("D", "float16", (256,)),
        ],
        [kernel("elementwise_kernel0", (2,), (128,), "A", "B", "X", "Y", "C", "D")],
    ),
    function(
        "math",
        [read("X", "float32", 64), BufferSpec("F", "float32", (64, 20)), BufferSpec("G", "float16", (64, 4))],
        [kernel("math_kernel0", (1,), (64,), "X", "F", "G")],
    ),
    function(
        "staged",
        [read("A", "float32", 256), BufferSpec("B", "float32", (256,))],
        [kernel("staged_kernel0", (2,), (128,), "A", "W"), kernel("staged_kernel1", (2,), (128,), "W", "B")],
        workspaces=[BufferSpec("W", "float32", (256,))],
    ),
    function(
        "scale",
        [
            read("A", "float32", 32),
            BufferSpec("B", "float32", (32,)),
            BufferSpec("alpha", "float32", (), written=False, scalar=True),
            BufferSpec("offset", "int32", (), written=False, scalar=True),
        ],
        [kernel("scale_kernel0", (1,), (32,), "A", "B", "alpha", "offset")],
    ),
]


@pytest.fixture(scope="module")
def numeric():
    return load(NUMERIC_SOURCE, NUMERIC_FUNCTIONS, METAL)


@pytest.fixture
def rng():
    return np.random.default_rng(2024)


def test_only_threadgroup_declarations_become_statics():
    lines = [
        "  threadgroup float A_shared[130];",
        "    threadgroup half4 tile[8];",
        "  threadgroup float* row = A_shared + 4;",
        "  threadgroup_barrier(mem_flags::mem_threadgroup);",
        "  *(threadgroup float4*)(A_shared + 4) = v;",
    ]
    unit = simulator.host_translation_unit("\n".join(lines), []).splitlines()
    assert unit[1:6] == [
        "  alignas(16) static float A_shared[130];",
        "    alignas(16) static half4 tile[8];",
        *lines[2:],
    ]


def test_device_name_names_the_simulator_and_compiler(numeric):
    assert numeric.device_name == f"Metal host simulator (g++ {simulator.compiler_version()})"


def test_window_sum_with_cooperative_fetch(numeric, rng):
    a = rng.standard_normal(258, dtype=np.float32)
    b = np.zeros(256, np.float32)
    numeric.run("window_sum", [a, b])
    np.testing.assert_allclose(b, a[:-2] + a[1:-1] + a[2:], rtol=1e-6)


def test_tiled_matmul_with_float4_loads_and_two_barriers(numeric, rng):
    a = rng.standard_normal((64, 64), dtype=np.float32)
    b = rng.standard_normal((64, 64), dtype=np.float32)
    c = np.zeros((64, 64), np.float32)
    numeric.run("matmul", [a, b, c])
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_int32_and_half_elementwise(numeric, rng):
    a, b = rng.integers(-1000, 1000, size=(2, 256), dtype=np.int32)
    x, y = rng.uniform(-2, 2, size=(2, 256)).astype(np.float16)
    c = np.zeros(256, np.int32)
    d = np.zeros(256, np.float16)
    numeric.run("elementwise", [a, b, x, y, c, d])
    np.testing.assert_array_equal(c, np.where(a < b, a * 3, np.maximum(b - a, 7)))
    expected = np.maximum(x * y, np.float16(0)) + np.exp(x.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(d.astype(np.float32), expected.astype(np.float32), rtol=2e-3, atol=2e-3)


def test_math_functions_and_vector_arithmetic(numeric, rng):
    x = rng.uniform(0.25, 2.0, size=64).astype(np.float32)
    f = np.zeros((64, 20), np.float32)
    g = np.zeros((64, 4), np.float16)
    numeric.run("math", [x, f, g])
    v = np.stack([x, x + 1, x + 2, x + 3], axis=1)
    columns = [np.exp(x), np.exp2(x), np.log(x), np.log2(x), np.sqrt(x), 1 / np.sqrt(x), np.sin(x), np.cos(x)]
    columns += [np.tanh(x), x, np.floor(3 * x), np.ceil(3 * x), np.round(3 * x), x**1.5]
    columns += [x * x + 1 + np.minimum(x, 1) + np.maximum(x, 1), *((2 * v - 1) / v + v * v).T]
    np.testing.assert_allclose(f[:, :19], np.stack(columns, axis=1), rtol=1e-5)
    assert np.all(np.isposinf(f[:, 19]))
    h = x.astype(np.float16)
    u = np.stack([h, h + np.float16(1), np.sqrt(h), np.tanh(h)], axis=1)
    expected = np.concatenate(
        [u[:, :3] * u[:, :3] + np.float16(0.5), np.maximum(np.exp(h), 2)[:, None]], axis=1
    )
    np.testing.assert_allclose(g.astype(np.float32), expected.astype(np.float32), rtol=4e-3, atol=4e-3)


def test_workspace_survives_between_launches_and_strided_output_is_copied_back(numeric, rng):
    a = rng.standard_normal(256, dtype=np.float32)
    out = np.zeros(512, np.float32)
    numeric.run("staged", [a, out[::2]])
    w = 2 * a + 1
    np.testing.assert_allclose(out[::2], w[::-1] * w, rtol=1e-6)
    assert not out[1::2].any()


def test_scalar_parameters_are_passed_by_value(numeric, rng):
    a = rng.standard_normal(32, dtype=np.float32)
    b = np.zeros(32, np.float32)
    numeric.run("scale", [a, b, 1.5, np.int32(-3)])
    np.testing.assert_allclose(b, a * 1.5 - 3, rtol=1e-6)


def test_cached_module_loads_without_compiling(numeric, monkeypatch):
    def no_compiler(*args):
        raise AssertionError("g++ ran for a module that is in the cache")

    monkeypatch.setattr(simulator, "_run_compiler", no_compiler)
    again = load(NUMERIC_SOURCE, NUMERIC_FUNCTIONS, METAL)
    a = np.arange(258, dtype=np.float32)
    b = np.zeros(256, np.float32)
    again.run("window_sum", [a, b])
    assert b[5] == 5 + 6 + 7


def test_cache_directory_holds_only_finished_files(tmp_path, monkeypatch):
    monkeypatch.setenv("TIR_CACHE_DIR", str(tmp_path))
    load(PRELUDE + WINDOW_SUM, NUMERIC_FUNCTIONS[:1], METAL)
    files = sorted(path.name for path in (tmp_path / "metal_sim").iterdir())
    assert [name.split("-")[0] for name in files] == ["launcher", "module"]
    assert files[0].endswith(".o") and files[1].endswith(".so")


def test_compile_error_points_at_the_msl_line():
    source = PRELUDE + WINDOW_SUM.replace("A_shared[(threadIdx_x + 2)]", "A_shard[(threadIdx_x + 2)]")
    with pytest.raises(CompileError) as caught:
        load(source, NUMERIC_FUNCTIONS[:1], METAL)
    line = next(n for n, text in enumerate(source.splitlines(), 1) if "A_shard[" in text)
    assert caught.value.lines == [line]
    assert "A_shard" in str(caught.value) and f"generated source line {line}:" in str(caught.value)


def test_buffer_dtype_that_disagrees_with_the_msl_fails_to_compile():
    halves = function(
        "window_sum",
        [read("A", "float16", 258), BufferSpec("B", "float32", (256,))],
        [kernel("window_sum_kernel0", (2,), (128,), "A", "B")],
    )
    with pytest.raises(CompileError, match="window_sum_kernel0") as caught:
        load(PRELUDE + WINDOW_SUM, [halves], METAL)
    assert caught.value.lines == []


def test_time_refuses(numeric):
    with pytest.raises(SimulatorError, match="use a Mac for GFLOPS") as caught:
        numeric.time("matmul", [], number=1, repeat=1)
    assert isinstance(caught.value, LaunchError)


def test_unknown_function_is_named(numeric):
    with pytest.raises(SimulatorError, match="no function named 'mm'.*matmul"):
        numeric.run("mm", [])


# Failures. Thread 0 of `spin` waits for a flag that thread 1 sets only after a barrier thread 0
# never reaches: a deadlock the barrier's timeout must end.
FAULTY_SOURCE = (
    PRELUDE
    + f"""kernel void partial_barrier_kernel0(device int* A [[buffer(0)]],
    {KERNEL_INDICES}) {{
  const int threadIdx_x = threadIdx.x;
  if (threadIdx_x < 3) {{
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }}
  A[threadIdx_x] = threadIdx_x;
}}

kernel void uneven_loop_kernel0(device int* A [[buffer(0)]],
    {KERNEL_INDICES}) {{
  const int threadIdx_x = threadIdx.x;
  for (int k = 0; k < ((threadIdx_x & 1) + 1); ++k) {{
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }}
  A[threadIdx_x] = threadIdx_x;
}}

kernel void spin_kernel0(device int* A [[buffer(0)]],
    {KERNEL_INDICES}) {{
  threadgroup int flag[1];
  const int threadIdx_x = threadIdx.x;
  if (threadIdx_x == 0) {{
    flag[0] = 0;
  }}
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (threadIdx_x == 0) {{
    while (((volatile threadgroup int*)flag)[0] == 0) {{
    }}
  }}
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (threadIdx_x == 1) {{
    ((volatile threadgroup int*)flag)[0] = 1;
  }}
  A[threadIdx_x] = threadIdx_x;
}}

kernel void misaligned_kernel0(device float* A [[buffer(0)]],
    device float* B [[buffer(1)]],
    {KERNEL_INDICES}) {{
  const float4 v = *(device float4*)(A + 1);
  B[threadIdx.x] = v[threadIdx.x];
}}
"""
)

FAULTY_FUNCTIONS = [
    function(name, [BufferSpec("A", "int32", (8,))], [kernel(f"{name}_kernel0", (1,), (8,), "A")])
    for name in ("partial_barrier", "uneven_loop", "spin")
] + [
    function(
        "misaligned",
        [read("A", "float32", 8), BufferSpec("B", "float32", (4,))],
        [kernel("misaligned_kernel0", (1,), (4,), "A", "B")],
    )
]


@pytest.fixture(scope="module")
def faulty():
    return load(FAULTY_SOURCE, FAULTY_FUNCTIONS, METAL, barrier_timeout_s=0.5)


@pytest.mark.parametrize("name", ["partial_barrier", "uneven_loop"])
def test_barrier_count_disagreement_is_reported_at_once(faulty, name):
    start = time.monotonic()
    with pytest.raises(LaunchError, match=rf"{name}_kernel0.*threadgroup \(0,0,0\) disagree on the number"):
        faulty.run(name, [np.zeros(8, np.int32)])
    assert time.monotonic() - start < 0.5


def test_deadlock_is_reported_after_the_timeout(faulty):
    start = time.monotonic()
    with pytest.raises(
        LaunchError, match=r"spin_kernel0.*deadlock: not all 8 threads of threadgroup \(0,0,0\)"
    ):
        faulty.run("spin", [np.zeros(8, np.int32)])
    assert 0.5 <= time.monotonic() - start < 5


def test_misaligned_vector_access_names_the_buffer(faulty, rng):
    a = rng.standard_normal(8, dtype=np.float32)
    assert a.ctypes.data % 16 == 0, "numpy allocations are 16-byte aligned on 64-bit hosts"
    with pytest.raises(LaunchError, match="misaligned_kernel0.*misaligned.*byte offset 4 of buffer A"):
        faulty.run("misaligned", [a, np.zeros(4, np.float32)])


def test_load_rejects_other_targets():
    with pytest.raises(SimulatorError, match="not 'metal'"):
        load(NUMERIC_SOURCE, NUMERIC_FUNCTIONS, Target.parse("cuda"))
