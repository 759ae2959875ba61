"""float16 and bfloat16 kernels on every target: numbers against the executor, sources through nvcc.

One elementwise function (``D = max(A * B + C, 0)``), a matmul of 16-bit inputs
that accumulates in float32 (mixed precision) and one that accumulates in the
16-bit type, each scheduled for a GPU (blockIdx/threadIdx) and run on the C
target (bfloat16 as its software type) and the Metal host simulator on random
inputs, compared with ``tir.interpret`` within a tolerance that fits the dtype
(the kernels round after each operation, the executor once per store). A
float32-to-bfloat16 cast runs through C and the simulator on random bit
patterns (NaN, infinities, subnormals, ties) and must give the bits
``tir.bfloat16`` gives. CUDA sources compile with ``nvcc -arch=sm_90`` where
nvcc exists, and run on a GPU under ``pytest -m gpu``.
"""

from __future__ import annotations

import numpy as np
import pytest

import tir
from codegen import BuildError, RuntimeUnavailableError, build
from codegen.cuda import nvcc
from schedule import Schedule
from tir.bfloat16 import from_bfloat16_bits, to_bfloat16_bits

DTYPES = ("float16", "bfloat16")
# (rtol, atol): a few roundings of an 11-bit (float16) or 8-bit (bfloat16) significand.
TOLERANCE = {"float16": 1e-2, "bfloat16": 5e-2}

ELEMENTWISE = """
@T.prim_func
def elementwise(A: T.Buffer((256,), "{dtype}"), B: T.Buffer((256,), "{dtype}"),
                C: T.Buffer((256,), "{dtype}"), D: T.Buffer((256,), "{dtype}")):
    for i in range(256):
        with T.block("D"):
            vi = T.axis.spatial(256, i)
            D[vi] = T.max(A[vi] * B[vi] + C[vi], T.{dtype}(0))
"""

MATMUL = """
@T.prim_func
def matmul(A: T.Buffer((64, {k}), "{dtype}"), B: T.Buffer(({k}, 32), "{dtype}"),
           C: T.Buffer((64, 32), "{out}")):
    for i, j, k in T.grid(64, 32, {k}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.{out}(0)
            C[vi, vj] = C[vi, vj] + T.Cast("{out}", A[vi, vk]) * T.Cast("{out}", B[vk, vj])
"""

CAST = """
@T.prim_func
def cast(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "bfloat16")):
    for i in range(4096):
        with T.block("B"):
            vi = T.axis.spatial(4096, i)
            B[vi] = T.bfloat16(A[vi])
"""


SCALE = """
@T.prim_func
def scale(A: T.Buffer((256,), "{dtype}"), alpha: T.{dtype}):
    for i in range(256):
        with T.block("A"):
            vi = T.axis.spatial(256, i)
            A[vi] = A[vi] * alpha
"""


def gpu_schedule(func: tir.PrimFunc) -> tir.IRModule:
    """The first block's spatial loops fused, split into 64-thread groups and bound."""
    sch = Schedule(func)
    block = sch.get_block(_block_name(func))
    loops = sch.get_loops(block)
    spatial = loops[:2] if len(loops) == 3 else loops[:1]
    fused = sch.fuse(*spatial) if len(spatial) > 1 else spatial[0]
    outer, inner = sch.split(fused, [None, 64])
    sch.bind(outer, "blockIdx.x")
    sch.bind(inner, "threadIdx.x")
    return sch.mod


def _block_name(func: tir.PrimFunc) -> str:
    return {"elementwise": "D", "matmul": "C", "cast": "B"}[func.name]


def programs(dtype: str) -> dict[str, tir.PrimFunc]:
    return {
        "elementwise": tir.parse(ELEMENTWISE.format(dtype=dtype)),
        "matmul_float32_accumulator": tir.parse(MATMUL.format(dtype=dtype, k=64, out="float32")),
        "matmul_16_bit_accumulator": tir.parse(MATMUL.format(dtype=dtype, k=16, out=dtype)),
    }


PROGRAMS = ("elementwise", "matmul_float32_accumulator", "matmul_16_bit_accumulator")


def random_inputs(func: tir.PrimFunc, rng: np.random.Generator) -> list[np.ndarray]:
    """float32 arrays for bfloat16 buffers (the runtimes round them in), the buffer's dtype otherwise."""
    arrays = []
    for buffer in func.params:
        shape = tuple(int(d) for d in buffer.shape)
        dtype = "float32" if buffer.dtype == "bfloat16" else buffer.dtype
        arrays.append(rng.uniform(-1.0, 1.5, shape).astype(dtype))
    return arrays


def check_against_executor(func: tir.PrimFunc, target: str, device: str | None, dtype: str) -> None:
    module = build(gpu_schedule(func), target, device=device)
    arrays = random_inputs(func, np.random.default_rng(3))
    expected = [a.copy() for a in arrays]
    tir.interpret(func, *expected)
    arrays[-1].fill(np.nan)
    module["main"](*arrays)
    tolerance = TOLERANCE[dtype]
    np.testing.assert_allclose(arrays[-1], expected[-1], rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("program", PROGRAMS)
def test_metal_simulator_computes_16_bit_kernels(program, dtype):
    check_against_executor(programs(dtype)[program], "metal", "sim", dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("program", PROGRAMS)
def test_c_computes_16_bit_kernels(program, dtype):
    check_against_executor(programs(dtype)[program], "c", None, dtype)


def test_c_rejects_a_bfloat16_variable_with_what_to_do():
    func = tir.parse(SCALE.format(dtype="bfloat16"))
    with pytest.raises(
        BuildError, match="alpha is a bfloat16 variable; the C target holds bfloat16 only in buffers"
    ):
        build(func, "c")


@pytest.mark.parametrize("target", [("c", None), ("metal", "sim")], ids=lambda t: t[0])
def test_float32_to_bfloat16_rounds_to_nearest_even_bit_exactly(target):
    rng = np.random.default_rng(5)
    words = rng.integers(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32)
    words[:1024] = (words[:1024] & 0xFFFF0000) | 0x8000  # ties
    words[1024:2048] &= 0x807FFFFF  # subnormals
    values = words.view(np.float32)
    values[2048:2056] = [np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0, 3.3961e38, -3.3961e38]
    bits = np.zeros(4096, np.uint16)
    build(gpu_schedule(tir.parse(CAST)), *target)["main"](values, bits)
    np.testing.assert_array_equal(bits, to_bfloat16_bits(values))


def test_metal_source_spells_bfloat():
    source = build(gpu_schedule(programs("bfloat16")["elementwise"]), "metal", device="sim").get_source()
    assert "device const bfloat* A" in source and "(bfloat)0.0f" in source


def cuda_sources() -> dict[str, str]:
    funcs = {f"{name}_{dtype}": f for dtype in DTYPES for name, f in programs(dtype).items()}
    funcs["cast"] = tir.parse(CAST)
    return {name: build(gpu_schedule(f), "cuda").get_source() for name, f in funcs.items()}


def test_cuda_source_includes_the_header_of_each_16_bit_type():
    sources = cuda_sources()
    assert "#include <cuda_bf16.h>" in sources["elementwise_bfloat16"]
    assert "__nv_bfloat16* __restrict__ D" in sources["elementwise_bfloat16"]
    assert "#include <cuda_fp16.h>" in sources["elementwise_float16"]
    assert "cuda_bf16.h" not in sources["elementwise_float16"]


@pytest.mark.skipif(not nvcc.nvcc_available(), reason="needs nvcc (the CUDA toolkit)")
def test_cuda_sources_compile_for_sm_90():
    for name, source in cuda_sources().items():
        assert nvcc.compile_with_nvcc(source, "sm_90"), name


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_16_bit_kernels_on_cuda(dtype):
    try:
        build(gpu_schedule(tir.parse(CAST)), "cuda").loaded  # noqa: B018
    except RuntimeUnavailableError as error:
        pytest.skip(f"no CUDA runtime here: {error}")
    for func in programs(dtype).values():
        check_against_executor(func, "cuda", None, dtype)


@pytest.mark.gpu
def test_bfloat16_cast_on_cuda_rounds_to_nearest_even():
    try:
        module = build(gpu_schedule(tir.parse(CAST)), "cuda")
        module.loaded  # noqa: B018
    except RuntimeUnavailableError as error:
        pytest.skip(f"no CUDA runtime here: {error}")
    values = np.random.default_rng(6).standard_normal(4096).astype(np.float32) * 2.0 ** np.arange(
        -64, 64, 1 / 32
    )
    bits = np.zeros(4096, np.uint16)
    module["main"](values.astype(np.float32), bits)
    np.testing.assert_array_equal(bits, to_bfloat16_bits(values.astype(np.float32)))
    assert np.isfinite(from_bfloat16_bits(bits)).sum() >= 4000


@pytest.mark.gpu
def test_bfloat16_takes_ml_dtypes_arrays_on_cuda():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    try:
        module = build(gpu_schedule(programs("bfloat16")["elementwise"]), "cuda")
        module.loaded  # noqa: B018
    except RuntimeUnavailableError as error:
        pytest.skip(f"no CUDA runtime here: {error}")
    rng = np.random.default_rng(8)
    arrays = [rng.uniform(-1, 1.5, 256).astype(ml_dtypes.bfloat16) for _ in range(3)]
    out = np.zeros(256, ml_dtypes.bfloat16)
    module["main"](*arrays, out)
    expected = np.zeros(256, np.uint16)
    tir.interpret(programs("bfloat16")["elementwise"], *(a.view(np.uint16) for a in arrays), expected)
    np.testing.assert_allclose(out.astype(np.float32), from_bfloat16_bits(expected), rtol=5e-2, atol=5e-2)


def test_fast_math_simulator_leaves_the_process_subnormals_alone():
    """Loading a "metal -fast-math" module once turned on flush-to-zero for the whole process."""
    smallest = float.fromhex("0x1p-149")
    module = build(gpu_schedule(programs("float16")["elementwise"]), "metal -fast-math", device="sim")
    arrays = [np.ones(256, np.float16) for _ in range(4)]
    module["main"](*arrays)
    assert float(np.float32(smallest)) == smallest
    assert float(np.float32(smallest) * np.float32(2.0)) == 2 * smallest
