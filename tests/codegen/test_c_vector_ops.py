"""The C printer's vector max, min and select, and its stack scratch: source shape and numbers.

A vectorized ``T.max``/``T.min``/``T.Select`` prints as one call of a mask-based
inline helper per vector (gcc -O3 makes it ``vmaxps`` or a masked move), never
as one ``fmaxf`` per lane; it computes what the scalar path computes, NaNs
included (``fmaxf``: a NaN operand loses). A scratch buffer of constant size
is an array on the stack, not a ``malloc`` per tile; a larger one read as vectors is
``aligned_alloc``ed on a cache line.
"""

from __future__ import annotations

import numpy as np
import pytest

import tir
from codegen import build
from codegen.build import generate_source
from examples.seeds.seed003_conv_layer import check, halide_schedule, random_inputs
from schedule import Schedule
from tuner import workloads

N = 64


def binary_program(expression: str, dtype: str = "float32") -> tir.IRModule:
    return tir.parse(
        f"""
@T.prim_func
def main(A: T.Buffer(({N},), "{dtype}"), B: T.Buffer(({N},), "{dtype}"), C: T.Buffer(({N},), "{dtype}")):
    for i in range({N}):
        with T.block("C"):
            vi = T.axis.spatial({N}, i)
            C[vi] = {expression}
"""
    )


def vectorized(mod, lanes: int = 16) -> tir.IRModule:
    sch = Schedule(mod)
    (i,) = sch.get_loops(sch.get_block("C"))
    _, inner = sch.split(i, [None, lanes])
    sch.vectorize(inner)
    return sch.mod


def run(mod, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    c = np.empty_like(a)
    build(mod, "c")["main"](a, b, c)
    return c


def inputs_with_nans(dtype: str = "float32") -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    a, b = rng.uniform(-1, 1, N).astype(dtype), rng.uniform(-1, 1, N).astype(dtype)
    a[::5], b[::7] = np.nan, np.nan
    return a, b


@pytest.mark.parametrize(
    ("expression", "helper", "numpy_op"),
    [
        ("T.max(A[vi], B[vi])", "tir_max_float16(", np.fmax),
        ("T.min(A[vi], B[vi])", "tir_min_float16(", np.fmin),
    ],
)
def test_vector_float_max_min_are_vector_helpers_with_fmax_nan_rules(expression, helper, numpy_op):
    mod = vectorized(binary_program(expression))
    source, _ = generate_source(mod, "c")
    assert helper in source
    assert "fmaxf" not in source and "fminf" not in source
    a, b = inputs_with_nans()
    result = run(mod, a, b)
    np.testing.assert_array_equal(result, numpy_op(a, b))
    np.testing.assert_array_equal(result, run(binary_program(expression), a, b))


def test_vector_int_max_is_a_vector_helper():
    mod = vectorized(binary_program("T.max(A[vi], B[vi])", "int32"), lanes=8)
    source, _ = generate_source(mod, "c")
    assert "tir_max_int8(" in source
    rng = np.random.default_rng(3)
    a, b = (rng.integers(-100, 100, N).astype("int32") for _ in range(2))
    np.testing.assert_array_equal(run(mod, a, b), np.maximum(a, b))


def test_vector_select_on_the_loop_index_falls_back_to_lanes():
    mod = vectorized(binary_program("T.Select(vi < 37, A[vi], B[vi])"))
    assert "i_0 * 16 + 15 < 37 ? A[i_0 * 16 + 15] : B[i_0 * 16 + 15];" in generate_source(mod, "c")[0]
    rng = np.random.default_rng(5)
    a, b = rng.uniform(-1, 1, N).astype("float32"), rng.uniform(-1, 1, N).astype("float32")
    np.testing.assert_array_equal(run(mod, a, b), np.where(np.arange(N) < 37, a, b))


def test_vector_select_on_a_comparison_is_one_helper_call():
    mod = vectorized(binary_program("T.Select(A[vi] > B[vi], A[vi], B[vi] * T.float32(0.5))"))
    source, _ = generate_source(mod, "c")
    assert "tir_select_float16(*(float16*)(A + " in source
    rng = np.random.default_rng(11)
    a, b = rng.uniform(-1, 1, N).astype("float32"), rng.uniform(-1, 1, N).astype("float32")
    np.testing.assert_array_equal(run(mod, a, b), np.where(a > b, a, b * np.float32(0.5)))


def test_halide_conv_tile_is_on_the_stack_and_its_relu_is_vector_max():
    source, _ = generate_source(halide_schedule(workloads.conv_layer(1, 2, 10, 16, 64)).mod, "c")
    assert "float conv[320] __attribute__((aligned(64)));" in source
    assert "malloc" not in source
    assert source.count("tir_max_float16(") == 20 + 1  # 5 x 4 vectors per tile, and the helper itself


def test_scratch_above_the_stack_limit_is_still_malloced():
    source, _ = generate_source(workloads.elementwise_chain(1 << 16), "c")
    assert source.count("malloc(") == 2 and source.count("free(") == 2


def test_scratch_above_the_stack_limit_read_as_vectors_is_cache_line_aligned():
    """seed 003's packed filter (590 KB, read as 16-lane vectors): one aligned_alloc, right numbers."""
    sizes = {"N": 1, "H": 2, "W": 10, "CI": 128, "CO": 128}
    mod = workloads.conv_layer(**sizes)
    scheduled = halide_schedule(mod, pack_filter=True).mod
    source, _ = generate_source(scheduled, "c")
    assert "(float*)aligned_alloc(64, (sizeof(float) * 147456 + 63) / 64 * 64);" in source
    assert source.count("free(filter_global);") == 1
    arrays = random_inputs(mod, seed=4)
    build(scheduled, "c")["main"](*arrays)
    check(mod, arrays, sizes)
