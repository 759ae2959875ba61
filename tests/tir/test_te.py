"""The tensor-expression front end (tir/te, issue 16): te programs become the blocks TVM makes.

Each workload is written twice, in te and as the TensorIR TVM's ``create_prim_func`` gives for
it (one block per compute named after it, loops named after the axes, ``v_`` iterators bound
by ``T.axis.remap``, ``T.init`` for reductions, intermediates as root allocations,
``tir.noalias``); the two must be structurally equal, and the executor's numbers on random
inputs must equal numpy's. Multi-output computes and ``where=`` on reductions (issue 16, item 3)
are at the end.
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


@T.prim_func
def two_outputs_expected(a0: T.handle, a1: T.handle, b0: T.handle, b1: T.handle):
    T.func_attr({"tir.noalias": True})
    m = T.int32()
    n = T.int32()
    A0 = T.match_buffer(a0, (m, n))
    A1 = T.match_buffer(a1, (m, n))
    B0 = T.match_buffer(b0, (m, n))
    B1 = T.match_buffer(b1, (m, n))
    for i, j in T.grid(m, n):
        with T.block("B.v0"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B0[v_i, v_j] = A0[v_i, v_j] - T.float32(1)
        with T.block("B.v1"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B1[v_i, v_j] = A0[v_i, v_j] * A1[v_i, v_j]


def test_a_tuple_of_expressions_is_one_loop_nest_with_a_block_per_output():
    m, n = te.var("m"), te.var("n")
    A0, A1 = te.placeholder((m, n), name="A0"), te.placeholder((m, n), name="A1")
    B0, B1 = te.compute((m, n), lambda i, j: (A0[i, j] - 1.0, A0[i, j] * A1[i, j]), name="B")
    assert (B0.name, B1.name, B0.op is B1.op) == ("B.v0", "B.v1", True)
    func = te.create_prim_func([A0, A1, B0, B1])
    tir.assert_structural_equal(func, two_outputs_expected)
    a0, a1 = random_floats(5, 3), random_floats(5, 3) + 1
    b0, b1 = np.full((5, 3), np.nan, "float32"), np.full((5, 3), np.nan, "float32")
    tir.interpret(func, a0, a1, b0, b1)
    np.testing.assert_allclose(b0, a0 - 1, rtol=1e-6)
    np.testing.assert_allclose(b1, a0 * a1, rtol=1e-6)


def test_an_output_left_out_of_the_arguments_is_a_root_allocation():
    A = te.placeholder((8,), name="A")
    low, high = te.compute((8,), lambda i: (A[i] - 0.5, A[i] * 3.0), name="clip")
    C = te.compute((8,), lambda i: high[i] - low[i], name="C")
    func = te.create_prim_func([A, C])
    assert [b.name for b in func.body.block.alloc_buffers] == ["clip.v0", "clip.v1"]
    a, c = random_floats(8), np.zeros(8, "float32")
    tir.interpret(func, a, c)
    np.testing.assert_allclose(c, a * 3 - (a - 0.5), rtol=1e-6)


def test_separate_reductions_in_one_compute_are_refused_with_the_reason():
    A = te.placeholder((4, 4), name="A")
    k = te.reduce_axis((0, 4), name="k")
    with pytest.raises(TypeError, match="must be the outputs of one reducer call"):
        te.compute((4,), lambda i: (te.sum(A[i, k], axis=k), te.max(A[i, k], axis=k)), name="B")
    with pytest.raises(TypeError, match="must be the outputs of one reducer call"):
        te.compute((4,), lambda i: (te.sum(A[i, k], axis=k), A[i, 0]), name="C")


def argmax_reducer() -> te.CommReducer:
    def combine(x, y):
        keep = x[1] >= y[1]
        return tir.op.select(keep, x[0], y[0]), tir.op.select(keep, x[1], y[1])

    def identity(index_dtype, value_dtype):
        return te.const(-1, index_dtype), tir.op.limit_value(value_dtype, largest=False)

    return te.comm_reducer(combine, identity, name="argmax")


@T.prim_func
def argmax_expected(i_: T.handle, v_: T.handle, o0: T.handle, o1: T.handle):
    T.func_attr({"tir.noalias": True})
    m = T.int32()
    n = T.int32()
    idx = T.match_buffer(i_, (m, n), "int32")
    val = T.match_buffer(v_, (m, n), "float32")
    argmax_v0 = T.match_buffer(o0, (m,), "int32")
    argmax_v1 = T.match_buffer(o1, (m,), "float32")
    for i, k in T.grid(m, n):
        with T.block("argmax"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(val[v_i, v_k], idx[v_i, v_k])
            T.writes(argmax_v0[v_i], argmax_v1[v_i])
            with T.init():
                argmax_v0[v_i] = -1
                argmax_v1[v_i] = T.min_value("float32")
            v_argmax_v0: T.int32 = T.Select(argmax_v1[v_i] >= val[v_i, v_k], argmax_v0[v_i], idx[v_i, v_k])
            v_argmax_v1: T.float32 = T.Select(argmax_v1[v_i] >= val[v_i, v_k], argmax_v1[v_i], val[v_i, v_k])
            argmax_v0[v_i] = v_argmax_v0
            argmax_v1[v_i] = v_argmax_v1


def test_a_reducer_of_two_values_is_one_block_updating_both_outputs():
    m, n = te.var("m"), te.var("n")
    idx = te.placeholder((m, n), "int32", name="idx")
    val = te.placeholder((m, n), "float32", name="val")
    k = te.reduce_axis((0, n), name="k")
    max_idx, max_val = te.compute(
        (m,), lambda i: argmax_reducer()((idx[i, k], val[i, k]), axis=k), name="argmax"
    )
    assert (max_idx.name, max_val.name, max_idx.dtype) == ("argmax.v0", "argmax.v1", "int32")
    func = te.create_prim_func([idx, val, max_idx, max_val])
    tir.assert_structural_equal(func, argmax_expected)
    values = random_floats(5, 7)
    indices = np.tile(np.arange(7, dtype="int32") * 10, (5, 1))
    got_idx, got_val = np.zeros(5, "int32"), np.zeros(5, "float32")
    tir.interpret(func, indices, values, got_idx, got_val)
    np.testing.assert_array_equal(got_val, values.max(axis=1))
    np.testing.assert_array_equal(got_idx, values.argmax(axis=1) * 10)


def test_a_reducer_of_two_values_honours_where():
    val = te.placeholder((4, 6), "float32", name="val")
    idx = te.placeholder((4, 6), "int32", name="idx")
    k = te.reduce_axis((0, 6), name="k")
    outputs = te.compute(
        (4,), lambda i: argmax_reducer()((idx[i, k], val[i, k]), axis=k, where=k >= 2), name="best"
    )
    func = te.create_prim_func([val, idx, *outputs])
    values, indices = random_floats(4, 6), np.tile(np.arange(6, dtype="int32"), (4, 1))
    got_idx, got_val = np.zeros(4, "int32"), np.zeros(4, "float32")
    tir.interpret(func, values, indices, got_idx, got_val)
    np.testing.assert_array_equal(got_idx, values[:, 2:].argmax(axis=1) + 2)


def test_a_comm_reducer_of_one_value():
    A = te.placeholder((3, 5), name="A")
    k = te.reduce_axis((0, 5), name="k")
    product = te.comm_reducer(lambda x, y: x * y, lambda dtype: te.const(1.0, dtype), name="product")
    P = te.compute((3,), lambda i: product(A[i, k], axis=k), name="P")
    func = te.create_prim_func([A, P])
    a, p = random_floats(3, 5) + 0.5, np.zeros(3, "float32")
    tir.interpret(func, a, p)
    np.testing.assert_allclose(p, a.prod(axis=1), rtol=1e-5)


@T.prim_func
def causal_row_sum_expected(A: T.Buffer((6, 6), "float32"), S: T.Buffer((6,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(6, 6):
        with T.block("S"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(S[v_i])
            with T.init():
                S[v_i] = T.float32(0)
            S[v_i] = S[v_i] + T.if_then_else(v_k <= v_i, A[v_i, v_k], T.float32(0))


def test_where_on_a_sum_masks_the_elements_outside_the_condition():
    A = te.placeholder((6, 6), name="A")
    k = te.reduce_axis((0, 6), name="k")
    S = te.compute((6,), lambda i: te.sum(A[i, k], axis=k, where=k <= i), name="S")
    func = te.create_prim_func([A, S])
    tir.assert_structural_equal(func, causal_row_sum_expected)
    a, s = random_floats(6, 6), np.full(6, np.nan, "float32")
    tir.interpret(func, a, s)
    np.testing.assert_allclose(s, np.tril(a).sum(axis=1), rtol=1e-6)


def test_where_on_a_max_schedules_and_builds():
    from codegen import build
    from schedule import Schedule

    A = te.placeholder((16, 16), name="A")
    k = te.reduce_axis((0, 16), name="k")
    M = te.compute((16,), lambda i: te.max(A[i, k] * 2.0, axis=k, where=i < k), name="M")
    sch = Schedule(te.create_prim_func([A, M]))
    i, _ = sch.get_loops(sch.get_block("M"))
    sch.split(i, [None, 4])
    a, m = random_floats(16, 16), np.full(16, np.nan, "float32")
    build(sch.mod, "c")["main"](a, m)
    expected = np.where(np.triu(np.ones((16, 16), bool), k=1), a * 2, -np.inf).max(axis=1)
    np.testing.assert_allclose(m[:-1], expected[:-1], rtol=1e-6)
    assert m[-1] == np.finfo("float32").min  # the last row has no element: the identity


def test_where_needs_a_condition():
    A = te.placeholder((4, 4), name="A")
    k = te.reduce_axis((0, 4), name="k")
    with pytest.raises(TypeError, match="takes a bool expression"):
        te.compute((4,), lambda i: te.sum(A[i, k], axis=k, where=k + 1), name="B")


def test_block_names_are_made_unique_as_tvm_makes_them():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] * 2.0, name="main")
    C = te.compute((4,), lambda i: B[i] + 1.0, name="main")
    func = te.create_prim_func([A, C])
    names = []
    tir.post_order_visit(func.body, lambda n: isinstance(n, tir.Block) and names.append(n.name))
    assert names[:2] == ["main", "main_1"]


def test_astype_casts_an_element_in_a_te_compute():
    X = te.placeholder((4, 8), "int8", name="X")
    W = te.placeholder((6, 8), "int8", name="W")
    k = te.reduce_axis((0, 8), name="k")
    C = te.compute((4, 6), lambda i, j: te.sum(X[i, k].astype("int32") * W[j, k].astype("int32"), axis=k))
    func = te.create_prim_func([X, W, C])
    rng = np.random.default_rng(5)
    x = rng.integers(-100, 100, (4, 8)).astype("int8")
    w = rng.integers(-100, 100, (6, 8)).astype("int8")
    out = np.zeros((4, 6), "int32")
    tir.interpret(func, x, w, out)
    np.testing.assert_array_equal(out, x.astype("int32") @ w.astype("int32").T)
    assert X[0, 0].astype("int8").dtype == "int8"
