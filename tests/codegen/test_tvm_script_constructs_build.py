"""TVM's script constructs through the build (issue 16): what each target prints or refuses.

One program with a bit cast, a branch hint, a typed ``if_then_else``, lower-case vector nodes,
the new math intrinsics and a buffer with ``offset_factor`` runs on C and in the Metal simulator
and must equal the executor on random inputs; its CUDA source compiles with nvcc where nvcc
exists. ``T.call_extern`` prints as a plain call with ``A.access_ptr`` as a pointer;
``T.call_packed`` and the tensor-core intrinsics are a BuildError naming the call; a strided
view is a BuildError naming the buffer.
"""

from __future__ import annotations

import numpy as np
import pytest

import tir
from codegen import BuildError, RuntimeUnavailableError, build
from codegen.build import generate_source
from codegen.cuda import nvcc
from tir import T


@T.prim_func
def mixed_constructs(
    A: T.Buffer((32,), "float32"),
    B: T.Buffer((32,), "int32"),
    C: T.Buffer((32,), "float32", offset_factor=1),
):
    with T.block("root"):
        for t in T.thread_binding(8, thread="threadIdx.x"):
            C[T.ramp(t * 4, 1, 4)] = A[T.ramp(t * 4, 1, 4)] * T.broadcast(T.float32(2), 4)
        for t in T.thread_binding(32, thread="threadIdx.x"):
            B[t] = T.reinterpret("int32", A[t])
        for t in T.thread_binding(32, thread="threadIdx.x"):
            if T.likely(t < 30):
                C[t] = T.if_then_else(
                    t < 4,
                    C[t],
                    T.log10(A[t]) + T.tan(A[t]) + T.trunc(A[t] * 5.0) + T.Cast("float32", C.elem_offset),
                    dtype="float32",
                )


def executor_result() -> tuple[np.ndarray, ...]:
    a = (np.random.default_rng(16).random(32) + 0.5).astype("float32")
    b, c = np.zeros(32, "int32"), np.full(32, 7.0, "float32")
    tir.interpret(mixed_constructs, a, b, c)
    return a, b, c


@pytest.mark.parametrize(
    "target, device", [("c", None), ("metal", "sim"), pytest.param("cuda", None, marks=pytest.mark.gpu)]
)
def test_constructs_compute_the_executors_numbers(target, device):
    a, expected_b, expected_c = executor_result()
    b, c = np.full(32, -1, "int32"), np.full(32, 7.0, "float32")
    module = build(mixed_constructs, target, device=device)
    try:
        module.loaded  # noqa: B018 - the CUDA case needs CuPy and a GPU
    except RuntimeUnavailableError as error:
        pytest.skip(str(error))
    module["mixed_constructs"](a, b, c)
    np.testing.assert_array_equal(b, expected_b)
    np.testing.assert_allclose(c, expected_c, rtol=1e-5, atol=1e-6)


def test_reinterpret_spellings_per_target():
    assert "((union { float from; int to; }){A[t_1]}).to" in generate_source(mixed_constructs, "c")[0]
    assert "__float_as_int(A[threadIdx_x])" in generate_source(mixed_constructs, "cuda")[0]
    assert "as_type<int>(A[" in generate_source(mixed_constructs, "metal")[0]


@pytest.mark.skipif(not nvcc.nvcc_available(), reason="needs nvcc (the CUDA toolkit)")
def test_cuda_source_compiles_with_nvcc():
    source, _ = generate_source(mixed_constructs, "cuda")
    assert nvcc.compile_with_nvcc(source, "sm_90")[:4] == b"\x7fELF"


@T.prim_func
def calls_libm(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    with T.block("root"):
        for i in range(16):
            B[i] = T.call_extern("float32", "expf", A[i])
        T.evaluate(T.call_extern("int32", "memset", B.access_ptr("w", offset=12), 0, 16))


def test_call_extern_prints_a_call_and_access_ptr_a_pointer():
    source = generate_source(calls_libm, "c")[0]
    assert "B[i] = expf(A[i]);" in source and "memset((B + 12), 0, 16);" in source
    a, b = np.random.default_rng(3).random(16).astype("float32"), np.full(16, 5.0, "float32")
    build(calls_libm, "c")["calls_libm"](a, b)
    np.testing.assert_allclose(b[:12], np.exp(a[:12]), rtol=1e-6)
    np.testing.assert_array_equal(b[12:], 0)  # memset wrote 16 zero bytes: four floats


@pytest.mark.parametrize(
    "statement, phrase",
    [
        ('T.call_packed("callback", A.data)', "T.call_packed cannot be built for target 'c'"),
        ("T.tvm_fill_fragment(A.data, 16, 16, 16, 0, T.float32(0))", "T.tvm_fill_fragment cannot be built"),
    ],
)
def test_calls_no_target_has_are_build_errors(statement, phrase):
    func = tir.parse(
        f"""
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    with T.block("root"):
        T.evaluate({statement})
"""
    )
    with pytest.raises(BuildError, match=phrase):
        build(func, "c")


def test_a_strided_view_is_a_build_error_naming_the_buffer():
    func = tir.parse(
        """
@T.prim_func
def f(A: T.Buffer((4, 8), "float32", strides=(16, 1)), B: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
"""
    )
    with pytest.raises(BuildError, match="buffer A declares strides or an element offset"):
        build(func, "c")


def test_an_allocated_buffer_with_padded_rows_builds_and_computes():
    # Rows of 8 floats stored 12 apart (what storage_align lowers to): not a view of the caller's memory.
    func = tir.parse(
        """
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
    S = T.alloc_buffer((4, 8), strides=(12, 1))
    for i, j in T.grid(4, 8):
        with T.block("S"):
            vi, vj = T.axis.remap("SS", [i, j])
            S[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = S[vi, 7 - vj] + T.float32(1)
"""
    )
    a = np.random.default_rng(3).standard_normal((4, 8)).astype("float32")
    b = np.full((4, 8), np.nan, dtype="float32")
    build(func, "c")["f"](a, b)
    np.testing.assert_allclose(b, a[:, ::-1] * 2 + 1, rtol=1e-6)


def test_erf_has_no_metal_spelling():
    func = tir.parse(
        """
@T.prim_func
def f(A: T.Buffer((32,), "float32")):
    for t in T.thread_binding(32, thread="threadIdx.x"):
        with T.block("A"):
            vt = T.axis.spatial(32, t)
            A[vt] = T.erf(A[vt])
"""
    )
    with pytest.raises(BuildError, match="erf has no Metal spelling"):
        generate_source(func, "metal")
    assert "erff(A[" in generate_source(func, "cuda")[0]
