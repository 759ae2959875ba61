"""The tensor-expression front end (tir/te, issue 16): te programs become the blocks TVM makes.

Each workload is written twice, in te and as the TensorIR TVM's ``create_prim_func`` gives for
it (one block per compute named after it, loops named after the axes, ``v_`` iterators bound
by ``T.axis.remap``, ``T.init`` for reductions, intermediates as root allocations,
``tir.noalias``); the two must be structurally equal, and the executor's numbers on random
inputs must equal numpy's.
"""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import tir
from tir import T, te


def random_floats(*shape: int) -> np.ndarray:
    return np.random.default_rng(16).random(shape).astype("float32")


@T.prim_func
def matmul_expected(
    A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 12), "float32"), C: T.Buffer((16, 12), "float32")
):
    T.func_attr({"tir.noalias": True})
    for i, j, k in T.grid(16, 12, 8):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]


def te_matmul() -> tir.PrimFunc:
    A = te.placeholder((16, 8), "float32", name="A")
    B = te.placeholder((8, 12), "float32", name="B")
    k = te.reduce_axis((0, 8), name="k")
    C = te.compute((16, 12), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def test_matmul_is_the_block_tvm_makes():
    func = te_matmul()
    tir.assert_structural_equal(func, matmul_expected)
    a, b, c = random_floats(16, 8), random_floats(8, 12), np.full((16, 12), np.nan, "float32")
    tir.interpret(func, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


@T.prim_func
def scale_then_row_max_expected(A: T.Buffer((6, 10), "float32"), M: T.Buffer((6,), "float32")):
    T.func_attr({"tir.noalias": True})
    S = T.alloc_buffer((6, 10))
    for i, j in T.grid(6, 10):
        with T.block("S"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])
            T.writes(S[v_i, v_j])
            S[v_i, v_j] = A[v_i, v_j] * T.float32(3)
    for i, r in T.grid(6, 10):
        with T.block("M"):
            v_i, v_r = T.axis.remap("SR", [i, r])
            T.reads(S[v_i, v_r])
            T.writes(M[v_i])
            with T.init():
                M[v_i] = T.min_value("float32")
            M[v_i] = T.max(M[v_i], S[v_i, v_r])


def test_intermediate_tensors_are_root_allocations_and_max_starts_at_the_lowest_value():
    A = te.placeholder((6, 10), name="A")
    S = te.compute((6, 10), lambda i, j: A[i, j] * 3.0, name="S")
    r = te.reduce_axis((0, 10), name="r")
    M = te.compute((6,), lambda i: te.max(S[i, r], axis=r), name="M")
    func = te.create_prim_func([A, M])
    tir.assert_structural_equal(func, scale_then_row_max_expected)
    a, m = random_floats(6, 10) - 0.5, np.zeros(6, "float32")
    tir.interpret(func, a, m)
    np.testing.assert_allclose(m, (a * 3).max(axis=1), rtol=1e-6)


def test_min_over_two_axes_and_a_reduction_axis_that_starts_later():
    A = te.placeholder((5, 4, 6), name="A")
    r, s = te.reduce_axis((0, 4), name="r"), te.reduce_axis((2, 6), name="s")
    B = te.compute((5,), lambda i: te.min(A[i, r, s], axis=[r, s]), name="B")
    func = te.create_prim_func([A, B])
    kinds = [iv.kind.value for iv in func.body.block.body.body.body.body.block.iter_vars]
    assert kinds == ["S", "R", "R"]
    assert "for s in range(2, 6):" in func.script()
    a, b = random_floats(5, 4, 6), np.zeros(5, "float32")
    tir.interpret(func, a, b)
    np.testing.assert_allclose(b, a[:, :, 2:].min(axis=(1, 2)), rtol=1e-6)


def test_symbolic_shapes_from_te_var():
    n = te.var("n")
    A = te.placeholder((n, 4), name="A")
    B = te.compute((n, 4), lambda i, j: A[i, j] + te.const(1.5, "float32"), name="B")
    func = te.create_prim_func([A, B])
    assert func.params[0].shape[0] is n and func.params[1].shape[0] is n
    tir.assert_structural_equal(tir.parse(func.script()), func)
    a, b = random_floats(7, 4), np.zeros((7, 4), "float32")
    tir.interpret(func, a, b)  # n is bound from the array's shape
    np.testing.assert_allclose(b, a + 1.5, rtol=1e-6)


def test_a_te_function_schedules_like_a_script():
    from schedule import Schedule

    sch = Schedule(te_matmul())
    i, j, k = sch.get_loops(sch.get_block("C"))
    sch.split(i, [4, 4])
    a, b, c = random_floats(16, 8), random_floats(8, 12), np.zeros((16, 12), "float32")
    tir.interpret(sch.mod, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_a_placeholder_missing_from_the_arguments_is_named():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 2.0, name="B")
    with pytest.raises(ValueError, match="placeholder A is read by B but is not among the arguments"):
        te.create_prim_func([B])


def test_reductions_need_reduction_axes():
    A = te.placeholder((4,), name="A")
    with pytest.raises(TypeError, match="te.sum reduces over te.reduce_axis axes"):
        te.compute((4,), lambda i: te.sum(A[i], axis=i), name="B")


def test_the_module_docstring_example_runs():
    assert doctest.testmod(te, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0
