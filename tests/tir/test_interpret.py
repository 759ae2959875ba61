"""Tests of the reference executor, tir.interpret, on IR built by hand.

Programs are built from tir nodes with the small builders below (``nest``,
``block``, ``prim_func``), which test_flops.py and test_well_formed.py reuse.
Every numeric check runs on random inputs against numpy; every error case checks
the error class and the phrases a user needs (argument, buffer, block, element).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import tir
from tir import (
    Allocate,
    Block,
    BlockRealize,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Call,
    Cast,
    Div,
    Evaluate,
    FloatImm,
    FloorDiv,
    FloorMod,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IRModule,
    IterKind,
    IterVar,
    Let,
    LetStmt,
    Mod,
    PrimFunc,
    Ramp,
    Range,
    Select,
    Var,
    const,
    op,
)
from tir.interpret import ArgumentError, BindingError, IRError, OutOfBoundsError, python_source
from tir.stmt import seq

TRUE = IntImm(1, "bool")
RNG = np.random.default_rng(20240611)


# ---------------------------------------------------------------- builders (shared with other tests)


def nest(loops, body, kind: ForKind = ForKind.SERIAL, thread_tag: str | None = None):
    """``for v0 in range(e0): for v1 in range(e1): ... body`` from ``[(v0, e0), (v1, e1), ...]``."""
    for var, extent in reversed(loops):
        body = For(var, const(0), const(extent), kind, body, thread_tag)
    return body


def block(name, bindings, body, init=None, alloc=(), predicate=TRUE):
    """A BlockRealize; ``bindings`` holds ``(iter_var, extent, "S" or "R", value)``."""
    iter_vars = tuple(
        IterVar(v, Range.from_min_extent(0, extent), IterKind(kind)) for v, extent, kind, _ in bindings
    )
    values = tuple(const(value) for *_, value in bindings)
    return BlockRealize(values, predicate, Block(name, iter_vars, (), (), body, init, tuple(alloc)))


def prim_func(params, body, alloc=(), name="main") -> PrimFunc:
    root = BlockRealize((), TRUE, Block("root", (), (), (), body, None, tuple(alloc)))
    return PrimFunc(tuple(params), root, {}, name)


def matmul(n: int, dtype: str = "float32") -> PrimFunc:
    A, B, C = Buffer("A", (n, n), dtype), Buffer("B", (n, n), dtype), Buffer("C", (n, n), dtype)
    i, j, k, vi, vj, vk = (Var(name) for name in ("i", "j", "k", "vi", "vj", "vk"))
    update = BufferStore(C, C[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj))
    init = BufferStore(C, FloatImm(0.0, dtype), (vi, vj))
    body = block("C", [(vi, n, "S", i), (vj, n, "S", j), (vk, n, "R", k)], update, init)
    return prim_func([A, B, C], nest([(i, n), (j, n), (k, n)], body))


def vector_add(n: int = 1024) -> PrimFunc:
    A, B, C = Buffer("A", (n,)), Buffer("B", (n,)), Buffer("C", (n,))
    i, vi = Var("i"), Var("vi")
    return prim_func(
        [A, B, C], nest([(i, n)], block("C", [(vi, n, "S", i)], BufferStore(C, A[vi] + B[vi], (vi,))))
    )


def window_sum(n: int = 1024, a_extent: int | None = None) -> PrimFunc:
    A, B = Buffer("A", (a_extent or n + 2,)), Buffer("B", (n,))
    i, vi = Var("i"), Var("vi")
    value = A[vi] + A[vi + 1] + A[vi + 2]
    return prim_func([A, B], nest([(i, n)], block("B", [(vi, n, "S", i)], BufferStore(B, value, (vi,)))))


def window_reference(a: np.ndarray) -> np.ndarray:
    a = a.astype("float64")
    return a[:-2] + a[1:-1] + a[2:]


def rand(*shape, dtype="float32"):
    """Random values of either sign in 0.5..1.5 in magnitude (never zero)."""
    return (RNG.uniform(0.5, 1.5, shape) * RNG.choice([-1.0, 1.0], shape)).astype(dtype)


# ---------------------------------------------------------------- basic programs


def test_vector_add():
    a, b = rand(1024), rand(1024)
    c = np.full(1024, 7.0, "float32")
    tir.interpret(vector_add(), a, b, c)
    np.testing.assert_allclose(c, a + b, rtol=1e-6)


def test_window_sum():
    a, b = rand(1026), np.full(1024, 7.0, "float32")
    tir.interpret(window_sum(), a, b)
    np.testing.assert_allclose(b, window_reference(a), rtol=1e-6, atol=1e-6)


def test_matmul_with_init_matches_numpy():
    a, b = rand(32, 32), rand(32, 32)
    c = np.full((32, 32), 7.0, "float32")
    tir.interpret(matmul(32), a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_matmul_64_is_fast():
    func = matmul(64)
    a, b, c = rand(64, 64), rand(64, 64), np.zeros((64, 64), "float32")
    tir.interpret(func, a, b, c)  # compiles
    start = time.perf_counter()
    tir.interpret(func, a, b, c)
    elapsed = time.perf_counter() - start
    print(f"\n64x64x64 matmul in the executor: {elapsed * 1e3:.1f} ms")
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    assert elapsed < 2.0


def test_float64_and_results_rounded_on_store():
    a, b = rand(16, 16, dtype="float64"), rand(16, 16, dtype="float64")
    c = np.zeros((16, 16), "float64")
    tir.interpret(matmul(16, "float64"), a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-13)


def test_float16_buffers_round_each_store():
    a, b = rand(8, 8, dtype="float16"), rand(8, 8, dtype="float16")
    c = np.zeros((8, 8), "float16")
    tir.interpret(matmul(8, "float16"), a, b, c)
    # Each step's sum is rounded to float16, exactly as a float16 accumulator would be.
    expected = np.zeros((8, 8), "float16")
    for k in range(8):
        expected = (
            expected.astype("float64") + a[:, k : k + 1].astype("float64") * b[k].astype("float64")
        ).astype("float16")
    np.testing.assert_array_equal(c, expected)


# ---------------------------------------------------------------- scheduled forms


def split_elementwise(n: int, factor: int, predicate: bool = True) -> PrimFunc:
    A, B = Buffer("A", (n,)), Buffer("B", (n,))
    i0, i1, vi = Var("i0"), Var("i1"), Var("vi")
    outer = -(-n // factor)
    guard = (i0 * factor + i1) < n if predicate else TRUE
    store = BufferStore(B, A[vi] * FloatImm(2.0), (vi,))
    body = block("B", [(vi, n, "S", i0 * factor + i1)], store, predicate=guard)
    return prim_func([A, B], nest([(i0, outer), (i1, factor)], body))


def test_split_with_predicate_over_covering_extent():
    a, b = rand(1000), np.full(1000, 7.0, "float32")
    tir.interpret(split_elementwise(1000, 128), a, b)
    np.testing.assert_allclose(b, 2 * a)


def test_split_without_predicate_reports_the_binding():
    a, b = rand(1000), np.zeros(1000, "float32")
    with pytest.raises(
        BindingError, match=r"block 'B': iterator vi is bound to 1000 .*outside its domain \[0, 1000\)"
    ):
        tir.interpret(split_elementwise(1000, 128, predicate=False), a, b)


def test_thread_bound_vectorized_unrolled_and_parallel_loops_run_serially():
    n = 256
    A, B = Buffer("A", (n,)), Buffer("B", (n,))
    bx, tx, v, u, vi = Var("bx"), Var("tx"), Var("v"), Var("u"), Var("vi")
    body = block(
        "B", [(vi, n, "S", ((bx * 8 + tx) * 4 + v) * 2 + u)], BufferStore(B, A[vi] + FloatImm(1.0), (vi,))
    )
    body = For(u, const(0), const(2), ForKind.UNROLLED, body)
    body = For(v, const(0), const(4), ForKind.VECTORIZED, body)
    body = For(tx, const(0), const(8), ForKind.THREAD_BINDING, body, "threadIdx.x")
    body = For(bx, const(0), const(4), ForKind.PARALLEL, body)
    a, b = rand(n), np.zeros(n, "float32")
    tir.interpret(prim_func([A, B], body), a, b)
    np.testing.assert_allclose(b, a + 1)


def test_reduction_split_runs_init_once_per_output():
    # k split in two: init must run only when vk == 0, i.e. k0 == 0 and k1 == 0.
    n = 32
    A, B = Buffer("A", (n, n)), Buffer("B", (n,))
    i, k0, k1, vi, vk = Var("i"), Var("k0"), Var("k1"), Var("vi"), Var("vk")
    update = BufferStore(B, B[vi] + A[vi, vk], (vi,))
    body = block(
        "B", [(vi, n, "S", i), (vk, n, "R", k0 * 8 + k1)], update, init=BufferStore(B, FloatImm(0.0), (vi,))
    )
    a, b = rand(n, n), np.full(n, 7.0, "float32")
    tir.interpret(prim_func([A, B], nest([(i, n), (k0, 4), (k1, 8)], body)), a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def cached_window_sum() -> PrimFunc:
    """cache_read of A into a shared buffer computed at the thread-block loop, then the sum."""
    A, B = Buffer("A", (1026,)), Buffer("B", (1024,))
    A_shared = Buffer("A_shared", (1026,), scope="shared")
    bx, tx, ax, v0, vi = Var("i_0"), Var("i_1"), Var("ax0"), Var("v0"), Var("vi")
    fetch = block("A_shared", [(v0, 1026, "S", bx * 128 + ax)], BufferStore(A_shared, A[v0], (v0,)))
    compute_value = A_shared[vi] + A_shared[vi + 1] + A_shared[vi + 2]
    compute = block("B", [(vi, 1024, "S", bx * 128 + tx)], BufferStore(B, compute_value, (vi,)))
    body = seq(nest([(ax, 130)], fetch), nest([(tx, 128)], compute, ForKind.THREAD_BINDING, "threadIdx.x"))
    return prim_func([A, B], nest([(bx, 8)], body, ForKind.THREAD_BINDING, "blockIdx.x"), alloc=[A_shared])


def test_shared_cache_block_then_compute():
    a, b = rand(1026), np.zeros(1024, "float32")
    tir.interpret(cached_window_sum(), a, b)
    np.testing.assert_allclose(b, window_reference(a), rtol=1e-6, atol=1e-6)


def test_local_cache_write_block_allocates_per_instance():
    # C_local lives in the block "C_o", allocated fresh for every output row.
    n = 16
    A, C = Buffer("A", (n, n)), Buffer("C", (n, n))
    C_local = Buffer("C_local", (n,), scope="local")
    i, j, j2, vi, vj, vj2 = Var("i"), Var("j"), Var("j2"), Var("vi"), Var("vj"), Var("vj2")
    compute = block("C_local", [(vj, n, "S", j)], BufferStore(C_local, A[vi, vj] * FloatImm(3.0), (vj,)))
    write_back = block("C", [(vj2, n, "S", j2)], BufferStore(C, C_local[vj2], (vi, vj2)))
    outer_body = seq(nest([(j, n)], compute), nest([(j2, n)], write_back))
    outer = BlockRealize(
        (i,),
        TRUE,
        Block(
            "C_o",
            (IterVar(vi, Range.from_min_extent(0, n), IterKind.SPATIAL),),
            (),
            (),
            outer_body,
            None,
            (C_local,),
        ),
    )
    a, c = rand(n, n), np.zeros((n, n), "float32")
    tir.interpret(prim_func([A, C], nest([(i, n)], outer)), a, c)
    np.testing.assert_allclose(c, 3 * a, rtol=1e-6)


def test_unwritten_cache_memory_reads_as_nan():
    A_cache, B = Buffer("A_cache", (4,), scope="shared"), Buffer("B", (4,))
    i, vi = Var("i"), Var("vi")
    body = nest([(i, 4)], block("B", [(vi, 4, "S", i)], BufferStore(B, A_cache[vi] + FloatImm(1.0), (vi,))))
    b = np.zeros(4, "float32")
    tir.interpret(prim_func([B], body, alloc=[A_cache]), b)
    assert np.isnan(b).all()


# ---------------------------------------------------------------- lowered IR


def lowered_window_sum() -> PrimFunc:
    """The seed's lowered kernel shape: Allocate, a guarded vector fetch, then the sum."""
    A, B = Buffer("A", (1026,)), Buffer("B", (1024,))
    A_shared = Buffer("A_shared", (130,), scope="shared")
    bx, tx, tx2 = Var("blockIdx_x"), Var("threadIdx_x"), Var("threadIdx_x2")
    # 65 of 66 threads fetch 2 floats each: the 130 the thread block needs.
    fetch = BufferStore(
        A_shared, BufferLoad(A, (Ramp(bx * 128 + tx * 2, const(1), 2),)), (Ramp(tx * 2, const(1), 2),)
    )
    fetch_loop = For(
        tx, const(0), const(66), ForKind.THREAD_BINDING, IfThenElse(tx < 65, fetch), "threadIdx.x"
    )
    total = A_shared[tx2] + A_shared[tx2 + 1] + A_shared[tx2 + 2]
    store = BufferStore(B, total, (bx * 128 + tx2,))
    compute = For(tx2, const(0), const(128), ForKind.THREAD_BINDING, store, "threadIdx.x")
    sync = Evaluate(Call("int32", "tvm_storage_sync", (tir.StringImm("shared"),)))
    body = Allocate(A_shared, seq(fetch_loop, sync, compute))
    return PrimFunc((A, B), For(bx, const(0), const(8), ForKind.THREAD_BINDING, body, "blockIdx.x"))


def test_lowered_allocate_if_and_vector_ramp():
    a, b = rand(1026), np.zeros(1024, "float32")
    tir.interpret(lowered_window_sum(), a, b)
    np.testing.assert_allclose(b, window_reference(a), rtol=1e-6, atol=1e-6)


def test_vector_arithmetic_broadcast_and_let_statement():
    A, B = Buffer("A", (64,)), Buffer("B", (64,))
    i, base = Var("i"), Var("base")
    index = Ramp(base, const(1), 4)
    value = BufferLoad(A, (index,)) * Broadcast(FloatImm(2.0), 4) + Broadcast(FloatImm(1.0), 4)
    body = For(i, const(0), const(16), ForKind.SERIAL, LetStmt(base, i * 4, BufferStore(B, value, (index,))))
    a, b = rand(64), np.zeros(64, "float32")
    tir.interpret(PrimFunc((A, B), body), a, b)
    np.testing.assert_allclose(b, 2 * a + 1, rtol=1e-6)


def test_vector_out_of_bounds_names_the_buffer():
    A, B = Buffer("A", (8,)), Buffer("B", (8,))
    i = Var("i")
    body = For(
        i,
        const(0),
        const(3),
        ForKind.SERIAL,
        BufferStore(B, BufferLoad(A, (Ramp(i * 3, const(1), 3),)), (Ramp(i * 3, const(1), 3),)),
    )
    with pytest.raises(
        OutOfBoundsError,
        match=r"function 'main' reads A\[8\] \(lane 2 of a vector access\) outside its shape \(8,\).* at i=2",
    ):
        tir.interpret(PrimFunc((A, B), body), rand(8), np.zeros(8, "float32"))


# ---------------------------------------------------------------- expression semantics


def scalar_program(values, dtype: str, *, inputs=(), input_dtype: str = "int32") -> PrimFunc:
    """Out[k] = values[k] for a list of expressions over the inputs' element 0."""
    out = Buffer("Out", (len(values),), dtype)
    body = seq(*(BufferStore(out, value, (const(k),)) for k, value in enumerate(values)))
    return PrimFunc((*inputs, out), body)


def test_integer_division_floor_and_truncation_on_negatives():
    X = Buffer("X", (2,), "int32")
    a, b = X[0], X[1]
    values = [FloorDiv(a, b), FloorMod(a, b), Div(a, b), Mod(a, b)]
    func = scalar_program(values, "int32", inputs=(X,))
    for x, y in [(-7, 2), (7, -2), (-7, -2), (7, 2), (-8, 3)]:
        out = np.zeros(4, "int32")
        tir.interpret(func, np.array([x, y], "int32"), out)
        assert list(out) == [x // y, x % y, int(x / y), x - y * int(x / y)], (x, y)


def test_integer_division_by_zero_is_an_error():
    X = Buffer("X", (2,), "int32")
    func = scalar_program([FloorDiv(X[0], X[1])], "int32", inputs=(X,))
    with pytest.raises(ZeroDivisionError, match="while running 'main'"):
        tir.interpret(func, np.array([3, 0], "int32"), np.zeros(1, "int32"))


def test_casts():
    F = Buffer("F", (2,), "float32")
    D = Buffer("D", (1,), "float64")
    I = Buffer("I", (1,), "int32")
    out_i = Buffer("OutI", (4,), "int32")
    out_f = Buffer("OutF", (3,), "float32")
    stores = seq(
        BufferStore(out_i, Cast("int32", F[0]), (const(0),)),  # truncation toward zero
        BufferStore(out_i, Cast("int32", F[1]), (const(1),)),
        BufferStore(out_i, Cast("int32", Cast("int8", I[0])), (const(2),)),  # wraps to int8
        BufferStore(out_i, Cast("int32", Cast("bool", F[0])), (const(3),)),
        BufferStore(out_f, Cast("float32", I[0]), (const(0),)),
        # float64 -> float32 -> float64 must round through float32 in the middle.
        BufferStore(
            out_f,
            Cast("float32", Cast("float64", Cast("float32", D[0])) * FloatImm(3.0, "float64")),
            (const(1),),
        ),
        BufferStore(out_f, Cast("float32", Cast("float16", F[1])), (const(2),)),
    )
    f = np.array([-2.75, 3.3], "float32")
    d = np.array([1.0 / 3.0], "float64")
    i = np.array([300], "int32")
    oi, of = np.zeros(4, "int32"), np.zeros(3, "float32")
    tir.interpret(PrimFunc((F, D, I, out_i, out_f), stores), f, d, i, oi, of)
    assert list(oi) == [-2, 3, 44, 1]
    assert of[0] == 300.0
    assert of[1] == np.float32(np.float64(np.float32(1.0 / 3.0)) * 3.0)
    assert of[2] == np.float32(np.float16(np.float32(3.3)))


def test_select_min_max_and_intrinsics():
    X = Buffer("X", (1,), "float32")
    x = X[0]
    values = [
        Select(x > FloatImm(0.0), x, -x),
        op.max_value(x, FloatImm(0.25)),
        op.min_value(x, FloatImm(0.25)),
        op.call("exp", x),
        op.call("sqrt", op.call("fabs", x)),
        op.call("tanh", x),
        op.call("sigmoid", x),
        op.call("fma", x, x, FloatImm(1.0)),
        op.call("pow", op.call("fabs", x), FloatImm(1.5)),
        op.call("floor", x),
        op.call("ceil", x),
        op.call("if_then_else", x < FloatImm(0.0), FloatImm(-1.0), FloatImm(1.0)),
        op.call("log", op.call("fabs", x)),
        op.call("rsqrt", op.call("fabs", x)),
    ]
    func = scalar_program(values, "float32", inputs=(X,))
    for value in (-0.7, 1.3):
        out = np.zeros(len(values), "float32")
        tir.interpret(func, np.array([value], "float32"), out)
        x64 = float(np.float32(value))
        expected = [
            abs(x64),
            max(x64, 0.25),
            min(x64, 0.25),
            np.exp(x64),
            np.sqrt(abs(x64)),
            np.tanh(x64),
            1 / (1 + np.exp(-x64)),
            x64 * x64 + 1,
            abs(x64) ** 1.5,
            np.floor(x64),
            np.ceil(x64),
            -1.0 if x64 < 0 else 1.0,
            np.log(abs(x64)),
            1 / np.sqrt(abs(x64)),
        ]
        np.testing.assert_allclose(out, np.array(expected, "float32"), rtol=1e-6)


def test_round_goes_half_away_from_zero():
    X = Buffer("X", (4,), "float32")
    func = scalar_program([op.call("round", X[k]) for k in range(4)], "float32", inputs=(X,))
    out = np.zeros(4, "float32")
    tir.interpret(func, np.array([0.5, 1.5, -2.5, 2.4], "float32"), out)
    assert list(out) == [1.0, 2.0, -3.0, 2.0]


def test_math_errors_give_inf_and_nan_like_c():
    X = Buffer("X", (2,), "float32")
    values = [
        op.call("log", X[0]),  # log(-1) -> nan
        op.call("exp", X[1]),  # exp(100) overflows float32 -> inf on store
        op.call("exp", X[1] * FloatImm(10.0)),  # exp(1000) overflows double -> inf
        Div(X[1], X[0] - X[0]),  # 100 / 0 -> inf
        op.call("sqrt", X[0]),
        op.call("log", X[0] - X[0]),  # log(0) -> -inf
    ]
    out = np.zeros(len(values), "float32")
    tir.interpret(scalar_program(values, "float32", inputs=(X,)), np.array([-1.0, 100.0], "float32"), out)
    assert np.isnan(out[0]) and np.isnan(out[4])
    assert out[1] == np.inf and out[2] == np.inf and out[3] == np.inf and out[5] == -np.inf


def test_integer_store_wraps_like_c():
    X = Buffer("X", (1,), "int32")
    out = Buffer("Out", (1,), "int8")
    func = PrimFunc((X, out), BufferStore(out, Cast("int8", X[0] * 2), (const(0),)))
    o = np.zeros(1, "int8")
    tir.interpret(func, np.array([100], "int32"), o)
    assert o[0] == np.int8(-56)


def test_let_expression_and_bool_buffer():
    X = Buffer("X", (1,), "float32")
    flags = Buffer("Flags", (2,), "bool")
    t = Var("t", "float32")
    squared = Let(t, X[0] * X[0], t > FloatImm(1.0))
    func = PrimFunc(
        (X, flags),
        seq(BufferStore(flags, squared, (const(0),)), BufferStore(flags, X[0] < FloatImm(0.0), (const(1),))),
    )
    f = np.zeros(2, bool)
    tir.interpret(func, np.array([-1.5], "float32"), f)
    assert list(f) == [True, True]


# ---------------------------------------------------------------- parameters


def scaled_copy() -> PrimFunc:
    """B[i] = A[i] * alpha + offset over a symbolic length n."""
    n = Var("n")
    alpha, offset = Var("alpha", "float32"), Var("offset", "int32")
    A, B = Buffer("A", (n,)), Buffer("B", (n,))
    i, vi = Var("i"), Var("vi")
    value = A[vi] * alpha + Cast("float32", offset)
    body = For(i, const(0), n, ForKind.SERIAL, block("B", [(vi, n, "S", i)], BufferStore(B, value, (vi,))))
    return prim_func([A, alpha, B, offset], body)


def test_scalar_params_positional_and_keyword_with_symbolic_shape():
    func = scaled_copy()
    for n in (5, 37):
        a, b = rand(n), np.zeros(n, "float32")
        tir.interpret(func, a, 2.5, b, 3)
        np.testing.assert_allclose(b, a.astype("float64") * 2.5 + 3, rtol=1e-6)
        b2 = np.zeros(n, "float32")
        tir.interpret(func, a, b2, alpha=np.float32(2.5), offset=3)
        np.testing.assert_array_equal(b, b2)


def test_symbolic_shapes_must_agree():
    with pytest.raises(
        ArgumentError,
        match=r"argument 2 \(B\) has shape \(6,\) but 'main' expects \(n\) = \(5,\); "
        r"n = 5 from argument 0 \(A\)",
    ):
        tir.interpret(scaled_copy(), rand(5), 1.0, np.zeros(6, "float32"), 0)


def test_symbolic_bounds_are_checked_when_not_provable():
    n = Var("n")
    A, B = Buffer("A", (n,)), Buffer("B", (n,))
    i = Var("i")
    func = PrimFunc((A, B), For(i, const(0), n, ForKind.SERIAL, BufferStore(B, A[i + 1], (i,))))
    with pytest.raises(OutOfBoundsError, match=r"reads A\[4\] outside its shape \(n,\).* at i=3"):
        tir.interpret(func, rand(4), np.zeros(4, "float32"))


def test_module_runs_main_or_the_named_function():
    other = window_sum(8)
    mod = IRModule({"main": vector_add(8), "window": other})
    a, b, c = rand(8), rand(8), np.zeros(8, "float32")
    tir.interpret(mod, a, b, c)
    np.testing.assert_allclose(c, a + b)
    w_in, w_out = rand(10), np.zeros(8, "float32")
    tir.interpret(mod, w_in, w_out, func_name="window")
    np.testing.assert_allclose(w_out, window_reference(w_in), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            (rand(8), rand(8)),
            r"'main' takes 3 positional argument\(s\) "
            r"\(A: float32\[8\], B: float32\[8\], C: float32\[8\]\), got 2",
        ),
        (
            (rand(8), [1.0] * 8, rand(8)),
            r"argument 1 \(B\) must be a numpy array \(B: float32\[8\]\), got list",
        ),
        (
            (rand(8), rand(8, dtype="float64"), rand(8)),
            r"argument 1 \(B\) has dtype float64 but 'main' expects float32 .*astype\('float32'\)",
        ),
        ((rand(8), rand(9), rand(8)), r"argument 1 \(B\) has shape \(9,\) but 'main' expects \(8\) = \(8,\)"),
        (
            (rand(8), rand(2, 4), rand(8)),
            r"argument 1 \(B\) has shape \(2, 4\) \(2 dimensions\) but 'main' expects 1 dimensions",
        ),
        (
            (rand(8), rand(16)[::2], rand(8)),
            r"argument 1 \(B\) is not C-contiguous; pass np.ascontiguousarray",
        ),
    ],
)
def test_argument_errors(args, message):
    with pytest.raises(ArgumentError, match=message):
        tir.interpret(vector_add(8), *args)


def test_read_only_output_is_rejected_but_read_only_input_is_fine():
    a, b = rand(8), rand(8)
    a.flags.writeable = False
    c = np.zeros(8, "float32")
    tir.interpret(vector_add(8), a, b, c)
    c.flags.writeable = False
    with pytest.raises(ArgumentError, match=r"argument 2 \(C\) is read-only but 'main' writes to it"):
        tir.interpret(vector_add(8), a, b, c)


def test_argument_errors_come_before_any_work():
    c = np.full(8, 7.0, "float32")
    with pytest.raises(ArgumentError):
        tir.interpret(vector_add(8), rand(8), rand(8, dtype="float64"), c)
    assert (c == 7.0).all()


def test_scalar_argument_errors():
    func = scaled_copy()
    with pytest.raises(ArgumentError, match=r"argument 3 \(offset\) must be a int32 number, got float 1.5"):
        tir.interpret(func, rand(4), 1.0, np.zeros(4, "float32"), 1.5)
    with pytest.raises(
        ArgumentError, match=r"'main' has no scalar parameter 'beta' \(its scalar parameters: alpha, offset\)"
    ):
        tir.interpret(func, rand(4), np.zeros(4, "float32"), 3, beta=1.0)


def test_argument_error_is_both_type_and_value_error():
    assert issubclass(ArgumentError, TypeError) and issubclass(ArgumentError, ValueError)


# ---------------------------------------------------------------- bounds


def test_out_of_bounds_read_names_block_buffer_and_element():
    func = window_sum(1024, a_extent=1024)
    with pytest.raises(
        OutOfBoundsError,
        match=r"block 'B' reads A\[1024\] outside its shape \(1024,\) "
        r"\(dimension 0 has extent 1024\) at i=1022, vi=1022",
    ):
        tir.interpret(func, rand(1024), np.zeros(1024, "float32"))


def test_out_of_bounds_within_the_flat_array_is_caught_per_dimension():
    # A[vi, vj + 1] on a (4, 16) array: the flat index stays inside the array for
    # vj = 15 but the column 16 is past the row (the aliasing bug class of schedules).
    A, B = Buffer("A", (4, 16)), Buffer("B", (4, 16))
    i, j, vi, vj = Var("i"), Var("j"), Var("vi"), Var("vj")
    body = block("B", [(vi, 4, "S", i), (vj, 16, "S", j)], BufferStore(B, A[vi, vj + 1], (vi, vj)))
    func = prim_func([A, B], nest([(i, 4), (j, 16)], body))
    with pytest.raises(
        OutOfBoundsError, match=r"block 'B' reads A\[0, 16\] outside its shape \(4, 16\) \(dimension 1"
    ):
        tir.interpret(func, rand(4, 16), np.zeros((4, 16), "float32"))


def test_out_of_bounds_write():
    A = Buffer("A", (4,))
    i = Var("i")
    func = PrimFunc((A,), For(i, const(0), const(5), ForKind.SERIAL, BufferStore(A, FloatImm(1.0), (i,))))
    with pytest.raises(OutOfBoundsError, match=r"function 'main' writes A\[4\] outside its shape \(4,\)"):
        tir.interpret(func, np.zeros(4, "float32"))


def test_provable_accesses_have_no_checks():
    source = python_source(matmul(8))
    assert "_ck(" not in source and "raise" not in source
    assert "_ck(" in python_source(window_sum(8, a_extent=8))


# ---------------------------------------------------------------- compilation


def test_compiled_once_per_function():
    func = vector_add(8)
    assert python_source(func) is python_source(func)


def test_invalid_ir_is_reported_at_compile_time():
    A = Buffer("A", (4,))
    stray = Buffer("Stray", (4,))
    i, j = Var("i"), Var("j")
    with pytest.raises(IRError, match="accesses buffer Stray, which is neither a parameter"):
        tir.interpret(
            PrimFunc((A,), For(i, const(0), const(4), ForKind.SERIAL, BufferStore(A, stray[i], (i,)))),
            rand(4),
        )
    with pytest.raises(IRError, match="uses variable j, which is not defined there"):
        tir.interpret(
            PrimFunc((A,), For(i, const(0), const(4), ForKind.SERIAL, BufferStore(A, FloatImm(1.0), (j,)))),
            rand(4),
        )
    with pytest.raises(IRError, match="indexes buffer A of 1 dimensions with 2 indices"):
        tir.interpret(PrimFunc((A,), BufferStore(A, FloatImm(1.0), (const(0), const(0)))), rand(4))


def test_identifiers_from_the_script_are_not_trusted():
    # A hostile variable name must not reach the generated code unmangled.
    A = Buffer("A; import os", (4,))
    i = Var("i):\n    import os\n    (x")
    func = PrimFunc((A,), For(i, const(0), const(4), ForKind.SERIAL, BufferStore(A, FloatImm(2.0), (i,))))
    a = np.zeros(4, "float32")
    tir.interpret(func, a)
    assert (a == 2.0).all()
    assert "import" not in python_source(func).replace("import_os", "")


def test_deep_loop_nests_beyond_python_block_limits():
    # 24 nested loops (Python allows 20 nested blocks in one function).
    loops = [(Var(f"l{k}"), 1) for k in range(23)] + [(Var("i"), 4)]
    A = Buffer("A", (4,))
    i = loops[-1][0]
    func = PrimFunc((A,), nest(loops, BufferStore(A, A[i] + FloatImm(1.0), (i,))))
    a = rand(4)
    expected = a + 1
    tir.interpret(func, a)
    np.testing.assert_allclose(a, expected)


def test_tir_interpret_stays_callable_after_importing_the_module():
    import tir.interpret as module

    assert callable(tir.interpret) and callable(module)
    a, b, c = rand(8), rand(8), np.zeros(8, "float32")
    module(vector_add(8), a, b, c)
    np.testing.assert_allclose(c, a + b)


# ---------------------------------------------------------------- scripts (through the parser)

TILED_MATMUL_64 = """
@T.prim_func
def main(
    A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")
):
    C_local = T.alloc_buffer((64, 64), "float32", scope="local")
    A_shared = T.alloc_buffer((64, 64), "float32", scope="shared")
    B_shared = T.alloc_buffer((64, 64), "float32", scope="shared")
    for i_0 in T.thread_binding(8, thread="blockIdx.x"):
        for j_0 in T.thread_binding(8, thread="blockIdx.y"):
            for t in T.thread_binding(4, thread="threadIdx.x"):
                for k_0 in range(8):
                    for f_0 in range(16):
                        for f_1 in T.thread_binding(4, thread="threadIdx.x"):
                            with T.block("A_shared"):
                                v0 = T.axis.spatial(64, i_0 * 8 + (f_0 * 4 + f_1) // 8)
                                v1 = T.axis.spatial(64, k_0 * 8 + (f_0 * 4 + f_1) % 8)
                                A_shared[v0, v1] = A[v0, v1]
                    for f_0 in range(16):
                        for f_1 in T.thread_binding(4, thread="threadIdx.x"):
                            with T.block("B_shared"):
                                v0 = T.axis.spatial(64, k_0 * 8 + (f_0 * 4 + f_1) // 8)
                                v1 = T.axis.spatial(64, j_0 * 8 + (f_0 * 4 + f_1) % 8)
                                B_shared[v0, v1] = B[v0, v1]
                    for k_1, i_2, j_2 in T.grid(8, 4, 4):
                        with T.block("C"):
                            vi = T.axis.spatial(64, i_0 * 8 + t // 2 * 4 + i_2)
                            vj = T.axis.spatial(64, j_0 * 8 + t % 2 * 4 + j_2)
                            vk = T.axis.reduce(64, k_0 * 8 + k_1)
                            with T.init():
                                C_local[vi, vj] = T.float32(0)
                            C_local[vi, vj] = C_local[vi, vj] + A_shared[vi, vk] * B_shared[vk, vj]
                for ax0, ax1 in T.grid(4, 4):
                    with T.block("C_local"):
                        v0 = T.axis.spatial(64, i_0 * 8 + t // 2 * 4 + ax0)
                        v1 = T.axis.spatial(64, j_0 * 8 + t % 2 * 4 + ax1)
                        C[v0, v1] = C_local[v0, v1]
"""


def test_tiled_shared_local_matmul_script_is_fast_and_correct():
    pytest.importorskip("tir.script.parser")
    func = tir.parse(TILED_MATMUL_64)
    a, b, c = rand(64, 64), rand(64, 64), np.full((64, 64), 7.0, "float32")
    tir.interpret(func, a, b, c)
    start = time.perf_counter()
    tir.interpret(func, a, b, c)
    elapsed = time.perf_counter() - start
    print(f"\ntiled 64x64x64 matmul (shared and local caches) in the executor: {elapsed * 1e3:.1f} ms")
    np.testing.assert_allclose(c, a.astype("float64") @ b.astype("float64"), rtol=1e-5, atol=1e-5)
    assert "_ck(" not in python_source(func)  # every index proved in range
    assert tir.flop_count(func) == 2 * 64**3
    assert tir.verify_well_formed(func)
    assert elapsed < 2.0


@pytest.mark.parametrize("dtype", ["float16", "int8"])
def test_vector_loads_and_stores_of_narrow_types(dtype):
    # float16 lives as uint16 bits; int8 products wrap on store as in C.
    A, B = Buffer("A", (8,), dtype), Buffer("B", (8,), dtype)
    i = Var("i")
    index = Ramp(i * 4, const(1), 4)
    three = FloatImm(3.0, dtype) if dtype == "float16" else IntImm(3, dtype)
    store = BufferStore(B, BufferLoad(A, (index,)) * Broadcast(three, 4), (index,))
    func = PrimFunc((A, B), For(i, const(0), const(2), ForKind.VECTORIZED, store))
    a = rand(8, dtype=dtype) if dtype == "float16" else (np.arange(8) * 20 + 1).astype(dtype)
    b = np.zeros(8, dtype)
    tir.interpret(func, a, b)
    wide = "float64" if dtype == "float16" else "int64"
    np.testing.assert_array_equal(b, (a.astype(wide) * 3).astype(dtype))
