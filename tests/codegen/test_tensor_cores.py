"""Tensorized matmuls on matrix units: the Metal host simulator, nvcc, the lowering's checks, FLOPs.

The hand schedule (tensor_core_schedules.py) runs each supported dtype pair through
the Metal simulator, whose simdgroup_matrix operations are collective over the
simdgroup, against numpy on random inputs; the CUDA WMMA kernel compiles with nvcc
for sm_90 and runs on a GPU under ``pytest -m gpu`` (test_gpu_tensor_cores.py).
"""
# ruff: noqa: E501  (the MSL source is spelled as the printer emits it, one statement per line)

from __future__ import annotations

import re

import numpy as np
import pytest

import tir
from codegen import BuildError, build
from codegen.build import generate_source
from codegen.cuda import nvcc
from codegen.errors import LaunchError
from codegen.metal.sim import load
from codegen.program import BufferSpec, CompiledFunction, KernelLaunch
from codegen.target import Target
from schedule import Schedule, ScheduleError
from tests.codegen.tensor_core_schedules import mixed_matmul, tensorized_matmul
from tir.bfloat16 import from_bfloat16_bits, to_bfloat16_bits
from tuner import workloads
from tuner.space.tensor_core import Sizes, tensorize_matmul

# dtype pair -> (rtol, atol) against a float64 numpy product of the same (rounded) inputs
TOLERANCE = {
    ("float32", "float32"): (1e-5, 1e-5),
    ("float16", "float16"): (1e-2, 1e-2),
    ("float16", "float32"): (1e-5, 1e-5),
}


def matmul_for(in_dtype: str, acc_dtype: str, M: int, N: int, K: int):
    return mixed_matmul(M, N, K) if in_dtype != acc_dtype else workloads.matmul(M, N, K, in_dtype)


def random_operands(in_dtype: str, acc_dtype: str, M: int, N: int, K: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = (rng.random((M, K)) - 0.5).astype(in_dtype)
    b = (rng.random((K, N)) - 0.5).astype(in_dtype)
    c = np.full((M, N), 1000.0, acc_dtype)  # garbage: every element must be written
    return a, b, c


@pytest.mark.parametrize("dtypes", sorted(TOLERANCE), ids=lambda d: f"{d[0]}-{d[1]}")
@pytest.mark.parametrize(
    ("size", "frags", "warps", "vector"),
    [((48, 32, 40), (2, 2, 1), (1, 1), 1), ((64, 96, 48), (2, 2, 2), (2, 3), 2)],
    ids=["one-simdgroup", "six-simdgroups"],
)
def test_tensorized_matmul_on_the_metal_simulator(dtypes, size, frags, warps, vector):
    M, N, K = size
    sch = tensorized_matmul(matmul_for(*dtypes, M, N, K), "metal", frags=frags, warps=warps, vector=vector)
    a, b, c = random_operands(*dtypes, M, N, K)
    build(sch.mod, "metal", device="sim")["main"](a, b, c)
    rtol, atol = TOLERANCE[dtypes]
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=rtol, atol=atol)


def test_tensorized_matmul_matches_the_executor():
    sch = tensorized_matmul(matmul_for("float16", "float32", 32, 32, 32), "metal", frags=(1, 2, 2))
    a, b, c = random_operands("float16", "float32", 32, 32, 32)
    c_exec = c.copy()
    tir.interpret(sch.mod["main"], a, b, c_exec)
    build(sch.mod, "metal", device="sim")["main"](a, b, c)
    np.testing.assert_allclose(c, c_exec, rtol=1e-6, atol=1e-6)


def test_tensorized_matmul_counts_its_flops():
    sch = tensorized_matmul(workloads.matmul(32, 32, 32), "metal")
    assert tir.flop_count(sch.mod["main"]) == 2 * 32**3


def test_metal_source_uses_simdgroup_matrices():
    source, _ = generate_source(tensorized_matmul(workloads.matmul(32, 32, 32), "metal").mod, "metal")
    assert "#include <metal_simdgroup_matrix>" in source
    assert "simdgroup_float8x8 C_metal_simdgroup[4];" in source
    assert "simdgroup_multiply_accumulate(" in source and "device float* C" in source


@pytest.mark.skipif(not nvcc.nvcc_available(), reason="needs nvcc (the CUDA toolkit)")
@pytest.mark.parametrize(("size", "warps"), [((64, 64, 64), (1, 1)), ((128, 128, 96), (2, 2))])
@pytest.mark.parametrize(("unit", "call"), [("cuda", "wmma::mma_sync("), ("cuda-mma", "tir_mma_m16n8k16(")])
def test_cuda_tensor_core_matmul_compiles_with_nvcc(size, warps, unit, call):
    sch = tensorized_matmul(mixed_matmul(*size), "cuda", frags=(2, 2, 2), warps=warps, vector=2, unit=unit)
    source, _ = generate_source(sch.mod, "cuda")
    assert call in source and "__shared__ __align__(32) half A_shared" in source
    assert nvcc.compile_with_nvcc(source, "sm_90")[:4] == b"\x7fELF"


@pytest.mark.parametrize("unit", ["cuda", "cuda-mma"])
def test_cuda_tensor_core_matmul_matches_numpy_in_the_executor(unit):
    sch = tensorized_matmul(mixed_matmul(64, 64, 48), "cuda", frags=(1, 2, 1), warps=(2, 1), unit=unit)
    a, b, c = random_operands("float16", "float32", 64, 64, 48)
    tir.interpret(sch.mod["main"], a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- what the lowering rejects


def test_a_fragment_touched_outside_an_intrinsic_is_a_build_error():
    sch = Schedule(workloads.matmul(16, 16, 16))
    sch.cache_write(sch.get_block("C"), 0, "metal.simdgroup")
    with pytest.raises(
        BuildError,
        match=r"fragment C_metal_simdgroup \(scope 'metal.simdgroup'\) is read or written outside a matrix operation",
    ):
        generate_source(sch.mod, "metal")


def test_a_metal_intrinsic_in_a_cuda_build_is_a_build_error():
    sch = tensorized_matmul(workloads.matmul(16, 16, 16), "metal", frags=(1, 1, 1))
    with pytest.raises(
        BuildError, match="simdgroup_fill is a metal matrix operation; this build targets cuda"
    ):
        generate_source(sch.mod, "cuda")


def test_matrix_operations_have_no_c_spelling():
    sch = tensorized_matmul(workloads.matmul(16, 16, 16), "metal", frags=(1, 1, 1))
    with pytest.raises(BuildError, match="this build targets c"):
        generate_source(sch.mod, "c")


# ---------------------------------------------------------------- the simulator's collective semantics

_MATRIX_SOURCE = """#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;

kernel void partial_kernel0(device float* A [[buffer(0)]], uint3 blockIdx [[threadgroup_position_in_grid]], uint3 threadIdx [[thread_position_in_threadgroup]]) {
  simdgroup_float8x8 m[1];
  simdgroup_load(m[0], &A[0], 8);
  simdgroup_store(m[0], &A[0], 8);
}

kernel void divergent_kernel0(device float* A [[buffer(0)]], uint3 blockIdx [[threadgroup_position_in_grid]], uint3 threadIdx [[thread_position_in_threadgroup]]) {
  simdgroup_float8x8 m[1];
  if (threadIdx.x < 16) {
    simdgroup_load(m[0], &A[0], 8);
  }
}

kernel void transpose_kernel0(device float* A [[buffer(0)]], uint3 blockIdx [[threadgroup_position_in_grid]], uint3 threadIdx [[thread_position_in_threadgroup]]) {
  simdgroup_float8x8 m[2];
  simdgroup_load(m[0], &A[0], 8);
  m[1] = make_filled_simdgroup_matrix<float, 8, 8>(2.0f);
  simdgroup_multiply_accumulate(m[0], m[0], m[1], m[0]);
  simdgroup_store(m[0], &A[64], 8);
}
"""


def _function(name: str, threads: int, elements: int) -> CompiledFunction:
    launch = KernelLaunch(f"{name}_kernel0", (1, 1, 1), (threads, 1, 1), ("A",))
    return CompiledFunction(name, (BufferSpec("A", "float32", (elements,)),), flops=1, launches=(launch,))


@pytest.fixture(scope="module")
def matrix_module():
    functions = [
        _function("partial", 40, 64),
        _function("divergent", 32, 64),
        _function("transpose", 32, 128),
    ]
    return load(_MATRIX_SOURCE, functions, Target.parse("metal"), barrier_timeout_s=2.0)


def test_simdgroup_matrix_operations_compute_on_the_simulator(matrix_module):
    a = np.random.default_rng(1).random(128).astype(np.float32)
    expected = a[:64].reshape(8, 8) @ np.full((8, 8), 2.0, np.float32) + a[:64].reshape(8, 8)
    matrix_module.run("transpose", [a])
    np.testing.assert_allclose(a[64:].reshape(8, 8), expected, rtol=1e-6)


def test_a_partial_simdgroup_is_rejected(matrix_module):
    with pytest.raises(
        LaunchError, match=r"simdgroup_matrix operation \(MSL line \d+\) in a simdgroup of 8 threads"
    ):
        matrix_module.run("partial", [np.ones(64, np.float32)])


def test_a_matrix_operation_reached_by_part_of_a_simdgroup_is_rejected(matrix_module):
    with pytest.raises(
        LaunchError, match=r"divergent simdgroup function: .* wait at simdgroup_matrix operation"
    ):
        matrix_module.run("divergent", [np.ones(64, np.float32)])


@pytest.mark.parametrize("unit", ["cuda", "cuda-mma"])
def test_bfloat16_matmul_on_cuda_matrix_units(unit):
    sch = tensorized_matmul(
        workloads.matmul(64, 64, 48, "bfloat16"), "cuda", frags=(1, 2, 1), warps=(2, 1), unit=unit
    )
    source, _ = generate_source(sch.mod, "cuda")
    assert "__nv_bfloat16 A_shared" in source
    if nvcc.nvcc_available():
        assert nvcc.compile_with_nvcc(source, "sm_90")[:4] == b"\x7fELF"
    rng = np.random.default_rng(0)
    a, b = to_bfloat16_bits(rng.random((64, 48)) - 0.5), to_bfloat16_bits(rng.random((48, 64)) - 0.5)
    c = np.full((64, 64), 1000.0, "float32")
    tir.interpret(sch.mod["main"], a, b, c)
    expected = from_bfloat16_bits(a).astype("float64") @ from_bfloat16_bits(b).astype("float64")
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)


MISALIGNED_TILE = """
@T.prim_func
def main(A: T.Buffer((16, 20), "float16"), B: T.Buffer((16, 16), "float16"), C: T.Buffer((16, 16), "float32")):
    for w in T.thread_binding(32, thread="threadIdx.x"):
        with T.block("tile"):
            Af = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_a")
            Bf = T.alloc_buffer((16, 16), "float16", scope="wmma.matrix_b")
            Cf = T.alloc_buffer((16, 16), "float32", scope="wmma.accumulator")
            T.evaluate(T.wmma_load_matrix_sync(Af[0:16, 0:16], A[0:16, START:START + 16]))
            T.evaluate(T.wmma_load_matrix_sync(Bf[0:16, 0:16], B[0:16, 0:16]))
            T.evaluate(T.wmma_fill_fragment(Cf[0:16, 0:16], T.float32(0)))
            T.evaluate(T.wmma_mma_sync(Cf[0:16, 0:16], Af[0:16, 0:16], Bf[0:16, 0:16], Cf[0:16, 0:16]))
            T.evaluate(T.wmma_store_matrix_sync(Cf[0:16, 0:16], C[0:16, 0:16]))
"""


def test_a_tensor_core_tile_that_is_not_aligned_is_a_build_error():
    # Rows of 20 halfs are 40 bytes apart and a tile starting at column 2 is 4 bytes in: WMMA
    # needs 32-byte starts and rows a multiple of 16 bytes apart, or the GPU reads garbage.
    func = tir.parse(MISALIGNED_TILE.replace("START", "2"))
    with pytest.raises(BuildError, match="must start at a multiple of 32 bytes"):
        generate_source(func, "cuda")


# ---------------------------------------------------------------- pipelined staging (16-byte fetches, padding)


@pytest.mark.parametrize("dtypes", [("float16", "float32"), ("float32", "float32")], ids=["half", "float"])
@pytest.mark.parametrize("stages", [2, 3])
def test_pipelined_tensorized_matmul_on_the_metal_simulator(dtypes, stages):
    # 8 k steps of 8 through a pipeline of 2 or 3 stages (Metal copies synchronously), padded tiles.
    sch = tensorized_matmul(
        matmul_for(*dtypes, 64, 32, 64),
        "metal",
        frags=(2, 2, 1),
        warps=(2, 1),
        vector=4,
        stages=stages,
        pad=True,
    )
    a, b, c = random_operands(*dtypes, 64, 32, 64)
    build(sch.mod, "metal", device="sim")["main"](a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-5, atol=1e-5)


PIPELINED = {"frags": (2, 2, 2), "warps": (2, 2), "vector": 8, "stages": 3, "pad": True}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("unit", ["cuda", "cuda-mma"])
def test_pipelined_cuda_tensor_core_matmul(unit, dtype):
    # 128 / 32 = 4 k steps through 3 stages: cp.async of 16 bytes (8 halfs) into padded tiles.
    mod = mixed_matmul(128, 64, 128) if dtype == "float16" else workloads.matmul(128, 64, 128, dtype)
    sch = tensorized_matmul(mod, "cuda", unit=unit, **PIPELINED)
    source, _ = generate_source(sch.mod, "cuda")
    assert source.count("tir_cp_async_16(&") == 6 and "cp.async.wait_group 1;" in source
    # Rows padded by 16 bytes: A 64 x 32 halfs to 40; B 32 x 64 (WMMA) to 72, 32 x 32 (mma.sync) to 40.
    b_row = 40 if unit == "cuda-mma" else 72
    assert f"A_shared[{3 * 64 * 40}];" in source and f"B_shared[{3 * 32 * b_row}];" in source
    if nvcc.nvcc_available():
        assert nvcc.compile_with_nvcc(source, "sm_90")[:4] == b"\x7fELF"
    rng = np.random.default_rng(0)
    a, b = rng.random((128, 128)) - 0.5, rng.random((128, 64)) - 0.5
    if dtype == "bfloat16":
        a, b = to_bfloat16_bits(a), to_bfloat16_bits(b)
        values = from_bfloat16_bits
    else:
        a, b = a.astype(dtype), b.astype(dtype)
        values = np.asarray
    c = np.full((128, 64), 1000.0, "float32")
    tir.interpret(sch.mod["main"], a, b, c)
    expected = values(a).astype("float64") @ values(b).astype("float64")
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)


def test_without_async_copies_16_byte_fetches_are_one_uint4_copy():
    sch = tensorized_matmul(mixed_matmul(64, 64, 64), "cuda -arch=sm_75", unit="cuda", **PIPELINED)
    source, _ = generate_source(sch.mod, "cuda -arch=sm_75")
    assert "cp.async" not in source
    assert "*(uint4*)&A_shared[" in source and "= *(const uint4*)&A[" in source


COPY_HALFS = """
@T.prim_func
def main(A: T.Buffer((72,), "float16"), B: T.Buffer((64,), "float16")):
    for t in T.thread_binding(8, thread="threadIdx.x"):
        for v in T.vectorized(8):
            with T.block("B"):
                vi = T.axis.spatial(64, t * 8 + v)
                B[vi] = A[vi + OFFSET]
"""


@pytest.mark.parametrize(("offset", "vector"), [(8, True), (4, False)])
def test_a_16_byte_copy_of_halfs_needs_proven_alignment(offset, vector):
    # 8 halfs from A[t * 8 + 4] start 8 bytes into a 16-byte unit: one uint4 access would be misaligned.
    source, _ = generate_source(tir.parse(COPY_HALFS.replace("OFFSET", str(offset))), "cuda")
    assert ("*(uint4*)" in source) is vector
    assert source.count("B[") == (1 if vector else 8)


def test_a_kernel_over_48_kb_takes_dynamic_shared_memory():
    # 128x128x32 padded tiles, 4 stages: 4 * (128 * 40 + 32 * 136) halfs = 75776 bytes.
    sizes = {"frags": (4, 8, 2), "warps": (2, 2), "vector": 8, "stages": 4, "pad": True}
    sch = tensorized_matmul(mixed_matmul(256, 256, 256), "cuda", unit="cuda-mma", **sizes)
    source, functions = generate_source(sch.mod, "cuda")
    (launch,) = functions[0].launches
    assert launch.shared_bytes == 75776 and launch.dynamic_shared_bytes == 75776
    assert "extern __shared__ __align__(128) unsigned char tir_dynamic_shared[];" in source
    assert "half* B_shared = (half*)(tir_dynamic_shared + 0);" in source
    assert "half* A_shared = (half*)(tir_dynamic_shared + 34816);" in source  # 4 * 32 * 136 * 2
    if nvcc.nvcc_available():
        assert nvcc.compile_with_nvcc(source, "sm_90")[:4] == b"\x7fELF"
    with pytest.raises(
        BuildError, match=r"declares 75776 bytes of shared memory, over the cuda limit of 65536 "
    ):
        generate_source(sch.mod, "cuda -arch=sm_75")


@pytest.mark.parametrize("loads", ["k", "k-double", "step-ahead"])
@pytest.mark.parametrize("dtypes", [("float16", "float32"), ("float32", "float32")], ids=["half", "float"])
def test_fragments_loaded_per_k_fragment_on_the_metal_simulator(dtypes, loads):
    # k-double nests a 2-stage pipeline of the fragment loads in the 3-stage pipeline of the copies.
    sizes = {**PIPELINED, "warps": (2, 1), "vector": 4, "fragment_loads": loads}
    sch = tensorized_matmul(matmul_for(*dtypes, 64, 32, 96), "metal", **sizes)
    a, b, c = random_operands(*dtypes, 64, 32, 96)
    build(sch.mod, "metal", device="sim")["main"](a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("unit", ["cuda", "cuda-mma"])
def test_double_buffered_fragments_on_cuda(unit):
    sizes = {**PIPELINED, "fragment_loads": "k-double"}
    sch = tensorized_matmul(mixed_matmul(128, 64, 128), "cuda", unit=unit, **sizes)
    source, _ = generate_source(sch.mod, "cuda")
    # The k-step pipeline's unrolled epilogue allocates the fragments again, each in its own scope.
    fragment = (
        "unsigned A_warp[4][4];" if unit == "cuda-mma" else "half, wmma::row_major> A_wmma_matrix_a[4];"
    )
    assert source.count(fragment) == 3 and source.count("\n  {\n") == 2
    if nvcc.nvcc_available():
        assert nvcc.compile_with_nvcc(source, "sm_90")[:4] == b"\x7fELF"
    a, b, c = random_operands("float16", "float32", 128, 64, 128)
    tir.interpret(sch.mod["main"], a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("unit", ["cuda", "cuda-mma"])
def test_fragments_loaded_a_step_ahead_stay_in_registers_on_cuda(unit):
    """step-ahead loads the fragments of k step s + 1 before the mma of step s: two versions of each
    fragment, and the steady loop holds two steps so that every version index is a constant."""
    sizes = {**PIPELINED, "fragment_loads": "step-ahead"}
    sch = tensorized_matmul(mixed_matmul(128, 64, 160), "cuda", unit=unit, **sizes)  # 5 k steps: odd
    source, _ = generate_source(sch.mod, "cuda")
    assert not re.search(r"k_0_0[^\]\n]*% 2", source)  # no version indexed by the k-step loop
    if nvcc.nvcc_available():
        assert nvcc.compile_with_nvcc(source, "sm_90")[:4] == b"\x7fELF"
    a, b, c = random_operands("float16", "float32", 128, 64, 160)
    tir.interpret(sch.mod["main"], a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("stages", [1, 2])
def test_fragments_a_step_ahead_without_or_with_a_short_copy_pipeline_on_the_metal_simulator(stages):
    sizes = {**PIPELINED, "warps": (2, 1), "vector": 4, "stages": stages, "fragment_loads": "step-ahead"}
    sch = tensorized_matmul(matmul_for("float16", "float32", 64, 32, 112), "metal", **sizes)  # 7 k steps
    a, b, c = random_operands("float16", "float32", 64, 32, 112)
    build(sch.mod, "metal", device="sim")["main"](a, b, c)
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-5, atol=1e-5)


def test_an_unknown_fragment_loading_is_refused_with_the_schedule_unchanged():
    mod = mixed_matmul(64, 64, 64)
    sch = Schedule(mod)
    sizes = Sizes([None, 1, 2], [None, 1, 2], 1, 8)
    with pytest.raises(
        ScheduleError,
        match=r"fragment_loads must be one of \('step', 'step-ahead', 'k', 'k-double'\), got 'k2'",
    ):
        tensorize_matmul(sch, sch.get_block("C"), "cuda-mma", lambda _loops: sizes, fragment_loads="k2")
    tir.assert_structural_equal(sch.mod, mod)
    assert [inst.kind for inst in sch.trace.insts] == ["get_block"]  # the test's own
