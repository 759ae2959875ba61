"""vectorize_loop, unroll_loop and the index facts they stand on (tir.arith.modular).

Every transformed function must give ``tir.interpret`` the same numbers as its
input on random inputs; the structure (vector dtypes, Ramp indices, which loops
are left and of what kind) is checked on top. Inputs are the seed's scheduled
programs lowered with ``tir.transform.lower``, and small lowered functions
written directly in TVMScript.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import tir
from schedule import Schedule
from tests.tir.test_transform_threads import matmul, matmul_scheduled
from tir import Broadcast, BufferLoad, Call, IntImm, Ramp, Range, Select, T, Var, const
from tir.arith import Analyzer
from tir.arith.modular import ModularSet, coefficient_of, is_multiple_of, linear_form, modular_set
from tir.functor import post_order_visit, substitute
from tir.stmt import BufferStore, For, ForKind
from tir.transform import lower
from tir.transform.compact_buffer_allocation import compact_buffer_allocation
from tir.transform.inject_thread_sync import inject_thread_sync
from tir.transform.plan_buffer_allocation import plan_buffer_allocation
from tir.transform.unify_thread_binding import unify_thread_binding
from tir.transform.unroll_loop import unroll_loop
from tir.transform.vectorize_loop import vectorize_loop

# ---------------------------------------------------------------- helpers


def random_arrays(func: tir.PrimFunc, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = []
    for param in func.buffer_params:
        shape = param.static_shape()
        values = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
        arrays.append(values.astype(param.dtype))
    return arrays


def assert_same_numbers(before: tir.PrimFunc, after: tir.PrimFunc, seed: int = 0) -> None:
    arrays = random_arrays(before, seed)
    expected = [a.copy() for a in arrays]
    actual = [a.copy() for a in arrays]
    tir.interpret(before, *expected)
    # A flattened parameter takes a flat view of the same array.
    tir.interpret(after, *[a.reshape(p.static_shape()) for a, p in zip(actual, after.buffer_params)])
    assert any(not np.array_equal(want, given) for want, given in zip(expected, arrays)), (
        "nothing was written"
    )
    for param, want, got in zip(before.params, expected, actual):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=param.name)


def nodes(func: tir.PrimFunc, cls: type) -> list:
    found: list = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, cls) else None)
    return found


def loops(func: tir.PrimFunc, kind: ForKind | None = None) -> list[For]:
    return [loop for loop in nodes(func, For) if kind is None or loop.kind is kind]


def vector_stores(func: tir.PrimFunc) -> list[BufferStore]:
    return [s for s in nodes(func, BufferStore) if isinstance(s.indices[0], Ramp)]


def assert_scalar_fallback(func: tir.PrimFunc, **options) -> tir.PrimFunc:
    """The vectorized loop became a serial loop with the same body, and computes the same."""
    out = vectorize_loop(func, **options)
    assert out is not func
    assert not loops(out, ForKind.VECTORIZED)
    assert not nodes(out, Ramp) and not nodes(out, Broadcast)
    (before,) = loops(func, ForKind.VECTORIZED)
    after = next(loop for loop in loops(out) if loop.loop_var is before.loop_var)
    assert after.kind is ForKind.SERIAL and after.body is before.body
    assert_same_numbers(func, out)
    return out


# ---------------------------------------------------------------- arith.modular


def _value(expr, env: dict) -> int:
    folded = Analyzer().simplify(substitute(expr, {v: const(x, v.dtype) for v, x in env.items()}))
    assert isinstance(folded, IntImm), folded
    return folded.value


def test_modular_set_of_index_sums():
    i, j = Var("i"), Var("j")
    assert modular_set(i * 16 + j * 4 + 2) == ModularSet(4, 2)
    assert modular_set(const(12)) == ModularSet(0, 12)
    assert modular_set(i % 8 * 4) == ModularSet(4, 0)
    assert modular_set(i * 6 + 9) == ModularSet(6, 3)
    assert modular_set(i * 6 + j * 4) == ModularSet(2, 0)
    assert modular_set(tir.Min(i * 8, j * 4 + 4) + 2) == ModularSet(4, 2)
    assert modular_set(i // 4 + 1) == ModularSet(1, 0)


def test_modular_set_follows_bound_variables():
    i, x = Var("i"), Var("x")
    analyzer = Analyzer()
    analyzer.bind(x, i * 8 + 4)
    assert modular_set(x + 2, analyzer) == ModularSet(8, 6)
    assert modular_set(x * 3 + Var("j") * 2, analyzer) == ModularSet(2, 0)
    assert modular_set(x, analyzer) == ModularSet(8, 4)


def test_modular_set_and_linear_form_hold_on_random_values():
    i, j, v = Var("i"), Var("j"), Var("v")
    analyzer = Analyzer()
    analyzer.bind(v, Range(const(0), const(4)))
    analyzer.bind(i, Range(const(0), const(64)))
    exprs = [
        i * 12 + j * 8 + 4,
        (i * 4 + v) % 16 + j * 32,
        (i * 4 + v) // 16 * 64 + (i * 4 + v) % 16,
        i % 3 * 6 + v * 2 + 1,
        tir.Max(i * 4, j * 8) + v * 4,
    ]
    rng = random.Random(0)
    for expr in exprs:
        coeff, base = modular_set(expr, analyzer)
        form = linear_form(expr, v, analyzer)
        assert form is not None, expr
        ramp_base, stride = form
        for _ in range(40):
            env = {i: rng.randrange(64), j: rng.randrange(-50, 50), v: rng.randrange(4)}
            value = _value(expr, env)
            assert value % coeff == base if coeff else value == base
            assert value == _value(ramp_base, env) + stride * env[v]


def test_linear_form_uses_the_loop_range():
    f, v = Var("f"), Var("v")
    analyzer = Analyzer()
    analyzer.bind(v, Range(const(0), const(4)))
    base, stride = linear_form((f * 4 + v) % 16, v, analyzer)
    assert (base.script(), stride) == ("f % 4 * 4", 1)
    assert linear_form((f * 4 + v) % 16, v) is None  # without the range, v may carry into the next 16
    assert coefficient_of(f * 3 + v * 5 - v, v) == 4
    assert coefficient_of(f * 3 + v - v, v) == 0
    assert coefficient_of(v * v, v) is None
    assert coefficient_of(v // 2, v) is None


def test_is_multiple_of_decides_aligned_vector_access():
    f, t = Var("f"), Var("t")
    assert is_multiple_of(f * 16 + t % 2 * 4, 4)
    assert not is_multiple_of(f * 16 + t % 2 * 4, 8)
    assert not is_multiple_of(f * 16 + t, 4)
    assert is_multiple_of(const(12), 4)
    with pytest.raises(ValueError, match="positive factor"):
        is_multiple_of(f, 0)
    with pytest.raises(TypeError, match="scalar integer"):
        modular_set(tir.FloatImm(1.0))


# ---------------------------------------------------------------- vectorize_loop: the seed's matmul


def test_seed_matmul_fetch_loops_become_float4_loads_and_stores():
    func = lower(matmul_scheduled())
    out = vectorize_loop(func)
    assert not loops(out, ForKind.VECTORIZED)
    stores = vector_stores(out)
    assert sorted(s.buffer.name for s in stores) == ["A_shared", "B_shared"]
    for store in stores:
        ramp = store.indices[0]
        assert ramp.lanes == 4 and ramp.stride.value == 1
        assert isinstance(store.value, BufferLoad) and store.value.dtype == "float32x4"
        assert store.value.indices[0].stride.value == 1
        assert is_multiple_of(ramp.base, 4)
    assert_same_numbers(matmul_scheduled(), out)
    assert_same_numbers(func, out, seed=1)


def test_seed_matmul_gpu_lowering_vectorizes_under_threads():
    func = matmul_scheduled()
    for gpu_pass in (
        plan_buffer_allocation,
        compact_buffer_allocation,
        inject_thread_sync,
        unify_thread_binding,
    ):
        func = gpu_pass(func)
    out = vectorize_loop(lower(func))
    text = out.script()
    assert "A_shared[T.Ramp(ax0_ax1_fused_0 * 16 + threadIdx_x * 4, 1, 4)] = A[T.Ramp(" in text
    assert "B_shared[T.Ramp(ax0_ax1_fused_0_1 * 16 + threadIdx_x * 4, 1, 4)] = B[T.Ramp(" in text
    assert "T.vectorized" not in text
    assert len(vector_stores(out)) == 2


# ---------------------------------------------------------------- vectorize_loop: vector forms


@T.prim_func
def scale_by_row(A: T.Buffer((64,), "float32"), C: T.Buffer((16,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(16):
        for v in T.vectorized(4):
            B[i * 4 + v] = A[i * 4 + v] * C[i] + T.float32(1.0)


def test_loop_invariant_operand_is_broadcast():
    out = vectorize_loop(scale_by_row)
    (store,) = vector_stores(out)
    assert store.value.dtype == "float32x4"
    expected = "A[T.Ramp(i * 4, 1, 4)] * T.Broadcast(C[i], 4) + T.Broadcast(T.float32(1.0), 4)"
    assert store.script() == f"B[T.Ramp(i * 4, 1, 4)] = {expected}"
    assert_same_numbers(scale_by_row, out)


@T.prim_func
def transpose_rows(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(16):
        for v in T.vectorized(4):
            B[i * 4 + v] = A[v * 16 + i]


def test_strided_load_is_a_gather_ramp():
    out = vectorize_loop(transpose_rows)
    (store,) = vector_stores(out)
    gather = store.value.indices[0]
    assert isinstance(gather, Ramp) and gather.stride.value == 16 and gather.lanes == 4
    assert gather.base.script() == "i"
    assert_same_numbers(transpose_rows, out)


@T.prim_func
def lanewise_math(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        for v in T.vectorized(4):
            B[i * 4 + v] = (
                T.max(T.exp(A[i * 4 + v] * T.float32(0.5)), T.Cast("float32", v) - C[i])
                + T.Select(v < 2, A[i * 4 + v], T.float32(-1.0))
                + T.if_then_else(i < 4, A[31 - i * 4 - v], T.float32(2.0))
                + T.if_then_else(i * 4 + v < 20, T.float32(3.0), T.float32(4.0))
            )


def test_math_select_cast_and_guards_are_lanewise():
    out = vectorize_loop(lanewise_math)
    (store,) = vector_stores(out)
    assert store.value.dtype == "float32x4"
    calls = {c.op: c for c in nodes(out, Call)}
    assert calls["exp"].dtype == "float32x4"
    guard = calls["if_then_else"]  # the invariant guard stays a guard, on vectors
    assert guard.dtype == "float32x4" and guard.args[0].dtype == "bool"
    assert guard.args[1].indices[0].stride.value == -1
    selects = nodes(out, Select)
    assert {s.condition.dtype for s in selects} == {"boolx4"}  # T.Select and the load-free if_then_else
    assert any(c.dtype == "float32x4" and isinstance(c.value, Ramp) for c in nodes(out, tir.Cast))
    assert_same_numbers(lanewise_math, out)


@T.prim_func
def eight_wide(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(8):
        for v in T.vectorized(8):
            B[i * 8 + v] = A[i * 8 + v] + T.float32(2.0)


def test_extent_8_splits_into_two_float4_chunks():
    out = vectorize_loop(eight_wide, vector_bytes=16)
    (chunk,) = loops(out, ForKind.UNROLLED)
    assert chunk.extent.value == 2
    (store,) = vector_stores(out)
    assert store.indices[0].script() == f"T.Ramp(i * 8 + {chunk.loop_var.name} * 4, 1, 4)"
    assert store.value.dtype == "float32x4"
    assert_same_numbers(eight_wide, out)
    wide = vectorize_loop(eight_wide, vector_bytes=32)
    assert not loops(wide, ForKind.UNROLLED) and vector_stores(wide)[0].value.dtype == "float32x8"
    assert_same_numbers(eight_wide, wide)


def test_split_then_unroll_gives_two_vector_statements():
    out = unroll_loop(vectorize_loop(eight_wide))
    assert [loop.loop_var.name for loop in loops(out)] == ["i"]
    stores = vector_stores(out)
    assert [s.indices[0].base.script() for s in stores] == ["i * 8", "i * 8 + 4"]
    assert_same_numbers(eight_wide, out)


@T.prim_func
def double_precision(A: T.Buffer((16,), "float64"), B: T.Buffer((16,), "float64")):
    for i in range(4):
        for v in T.vectorized(4):
            B[i * 4 + v] = A[i * 4 + v] * T.float64(3.0)


def test_lanes_are_limited_by_the_element_size():
    out = vectorize_loop(double_precision, vector_bytes=16)
    (chunk,) = loops(out, ForKind.UNROLLED)
    assert chunk.extent.value == 2 and vector_stores(out)[0].value.dtype == "float64x2"
    assert_same_numbers(double_precision, out)
    assert_scalar_fallback(double_precision, vector_bytes=8)


@T.prim_func
def offset_under_if(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), n: T.int32):
    for i in range(2):
        for v in T.vectorized(2, 6):
            if n > 3:
                B[i * 8 + v] = A[i * 8 + v] + T.float32(1.0)
            else:
                B[i * 8 + v] = A[15 - i * 8 - v]


def test_loop_min_and_invariant_if_are_kept():
    out = vectorize_loop(offset_under_if)
    (branch,) = nodes(out, tir.IfThenElse)
    assert branch.then_case.script() == (
        "B[T.Ramp(i * 8 + 2, 1, 4)] = A[T.Ramp(i * 8 + 2, 1, 4)] + T.Broadcast(T.float32(1.0), 4)"
    )
    assert branch.else_case.script() == "B[T.Ramp(i * 8 + 2, 1, 4)] = A[T.Ramp(13 - i * 8, -1, 4)]"
    for n in (1, 5):
        a, b = random_arrays(offset_under_if, seed=n)
        want, got = b.copy(), b.copy()
        tir.interpret(offset_under_if, a, want, n=n)
        tir.interpret(out, a, got, n=n)
        assert not np.array_equal(want, b)
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    "func", [lanewise_math, eight_wide, scale_by_row, transpose_rows], ids=lambda f: f.name
)
def test_vector_ir_prints_and_parses_back(func):
    out = vectorize_loop(func)
    tir.assert_structural_equal(tir.parse(out.script()), out)


def test_nothing_to_vectorize_returns_the_same_function():
    func = lower(tir.parse(matmul.script()))
    assert vectorize_loop(func) is func


# ---------------------------------------------------------------- vectorize_loop: scalar fallbacks


@T.prim_func
def inner_loop(A: T.Buffer((64,), "float32"), B: T.Buffer((16,), "float32")):
    for v in T.vectorized(4):
        for k in range(4):
            B[k * 4 + v] = A[v * 16 + k] + T.float32(1.0)


@T.prim_func
def if_on_lane(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(4):
        for v in T.vectorized(4):
            if i + v < 5:
                B[i * 4 + v] = A[i * 4 + v] * T.float32(2.0)


@T.prim_func
def guarded_load(A: T.Buffer((18,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(4):
        for v in T.vectorized(4):
            B[i * 4 + v] = T.if_then_else(i * 4 + v < 14, A[i * 4 + v + 4], T.float32(0.0))


@T.prim_func
def strided_store(A: T.Buffer((16,), "float32"), B: T.Buffer((32,), "float32")):
    for i in range(4):
        for v in T.vectorized(4):
            B[i * 8 + v * 2] = A[i * 4 + v]


@T.prim_func
def non_affine_load(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(4):
        for v in T.vectorized(4):
            B[i * 4 + v] = A[v * v]


@T.prim_func
def reduction(A: T.Buffer((16,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        for v in T.vectorized(4):
            B[i] = B[i] + A[i * 4 + v]


@T.prim_func
def carried(B: T.Buffer((17,), "float32")):
    for v in T.vectorized(16):
        B[v + 1] = B[v] * T.float32(0.5) + T.float32(1.0)


@T.prim_func
def barrier(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for v in T.vectorized(4):
        B[v] = A[v]
        T.evaluate(T.tvm_storage_sync("shared"))


@T.prim_func
def lane_let(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for v in T.vectorized(4):
        x: T.float32 = A[v] * T.float32(3.0)
        B[v] = x + T.float32(1.0)


@T.prim_func
def six_wide(A: T.Buffer((12,), "float32"), B: T.Buffer((12,), "float32")):
    for i in range(2):
        for v in T.vectorized(6):
            B[i * 6 + v] = A[i * 6 + v] + T.float32(1.0)


@T.prim_func
def three_wide(A: T.Buffer((12,), "float32"), B: T.Buffer((12,), "float32")):
    for i in range(4):
        for v in T.vectorized(3):
            B[i * 3 + v] = A[i * 3 + v] + T.float32(1.0)


@pytest.mark.parametrize(
    "func",
    [
        inner_loop,
        if_on_lane,
        guarded_load,
        strided_store,
        non_affine_load,
        reduction,
        carried,
        barrier,
        lane_let,
        six_wide,
        three_wide,
    ],
    ids=lambda f: f.name,
)
def test_not_vectorizable_becomes_a_serial_loop(func):
    assert_scalar_fallback(func)


def test_loop_carried_dependence_would_change_the_numbers():
    """Why ``carried`` must stay serial: a vector store sees only the old values."""
    wrong = tir.PrimFunc(
        carried.params,
        BufferStore(
            carried.params[0],
            BufferLoad(carried.params[0], (Ramp(const(0), const(1), 16),)) * Broadcast(tir.FloatImm(0.5), 16)
            + Broadcast(tir.FloatImm(1.0), 16),
            (Ramp(const(1), const(1), 16),),
        ),
    )
    data = random_arrays(carried)[0]
    serial, vector = data.copy(), data.copy()
    tir.interpret(vectorize_loop(carried), serial)
    tir.interpret(wrong, vector)
    assert not np.allclose(serial, vector)


# ---------------------------------------------------------------- unroll_loop


@T.prim_func
def unrolled(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32")):
    for u in T.unroll(4):
        if u < 2:
            B[u] = A[u * 2] + A[u * 2 + 1]
        else:
            x: T.float32 = A[u * 2] * T.float32(2.0)
            B[u] = x + T.float32(1.0)


def test_unroll_copies_the_body_with_constant_indices():
    out = unroll_loop(unrolled)
    assert not loops(out)
    assert not nodes(out, tir.IfThenElse)
    stores = nodes(out, BufferStore)
    assert [s.indices[0].value for s in stores] == [0, 1, 2, 3]
    loads = [load.indices[0] for load in nodes(out, BufferLoad)]
    assert all(isinstance(index, IntImm) for index in loads)
    assert sorted(index.value for index in loads) == [0, 1, 2, 3, 4, 6]
    lets = nodes(out, tir.LetStmt)
    assert len(lets) == 2 and lets[0].var is not lets[1].var  # each copy defines its own
    tir.verify_well_formed(out)
    assert_same_numbers(unrolled, out)


def test_unroll_leaves_a_too_large_loop_with_pragma_unroll():
    out = unroll_loop(unrolled, max_statements=15)  # 4 copies x 5 statements = 20
    (loop,) = loops(out)
    assert loop.kind is ForKind.UNROLLED and loop.annotations == {"pragma_unroll": True}
    assert loop.body is unrolled.body.body
    assert unroll_loop(out, max_statements=15) is out
    assert_same_numbers(unrolled, out)
    assert not loops(unroll_loop(unrolled, max_statements=20))


@T.prim_func
def symbolic_unroll(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), n: T.int32):
    for u in T.unroll(n):
        B[u] = A[u] + T.float32(1.0)


def test_unroll_with_symbolic_extent_gets_pragma_unroll():
    out = unroll_loop(symbolic_unroll)
    (loop,) = loops(out)
    assert loop.annotations == {"pragma_unroll": True}


@T.prim_func
def unrolled_allocation(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for u in T.unroll(2):
        tmp = T.decl_buffer((4,), "float32", scope="local")
        for k in range(4):
            tmp[k] = A[u * 4 + k] * T.float32(2.0)
        for k in range(4):
            B[u * 4 + k] = tmp[k] + T.float32(1.0)


@T.prim_func
def serial_allocation(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for u in range(2):
        tmp = T.decl_buffer((4,), "float32", scope="local")
        for k in range(4):
            tmp[k] = A[u * 4 + k] * T.float32(2.0)
        for k in range(4):
            B[u * 4 + k] = tmp[k] + T.float32(1.0)


def test_unroll_never_copies_an_allocation():
    """Copies would declare ``tmp`` twice in one scope: the loop stays, asking the compiler to unroll."""
    (outer,) = _loops_named(unroll_loop(unrolled_allocation), "u")
    assert outer.extent.value == 2 and outer.annotations == {"pragma_unroll": True}


def test_a_small_serial_nest_that_allocates_gets_pragma_unroll_on_gpus():
    """A matmul's k-step loop declares its register fragments: nvcc still unrolls it (GPU pipelines)."""
    (outer,) = _loops_named(unroll_loop(serial_allocation, pragma_max_steps=1024), "u")
    assert outer.annotations == {"pragma_unroll": True}
    (outer,) = _loops_named(unroll_loop(serial_allocation, pragma_max_steps=8), "u")
    assert outer.annotations == {}
    assert unroll_loop(serial_allocation) is serial_allocation


def _loops_named(func: tir.PrimFunc, name: str) -> list[For]:
    return [loop for loop in loops(func) if loop.loop_var.name == name]


def test_unroll_without_unrolled_loops_returns_the_same_function():
    assert unroll_loop(scale_by_row) is scale_by_row


def auto_unrolled_matmul(max_step: int) -> tir.PrimFunc:
    sch = Schedule(matmul)
    i, j, k = sch.get_loops(sch.get_block("C"))
    i_0, i_1 = sch.split(i, [None, 4])
    j_0, j_1 = sch.split(j, [None, 4])
    k_0, k_1 = sch.split(k, [None, 4])
    sch.reorder(i_0, j_0, k_0, i_1, j_1, k_1)
    sch.annotate(i_0, "pragma_auto_unroll_max_step", max_step)
    return sch.mod["main"]


def test_auto_unroll_annotation_survives_lowering():
    func = lower(auto_unrolled_matmul(64))
    (outer,) = [loop for loop in loops(func) if loop.loop_var.name == "i_0"]
    assert outer.annotations == {"pragma_auto_unroll_max_step": 64}


def test_auto_unroll_unrolls_inner_nests_up_to_max_step():
    func = lower(auto_unrolled_matmul(64))
    out = unroll_loop(func)
    # k_1 runs an if and a store 4 times (8), j_1 32 statements, i_1 128 > 64.
    assert [loop.loop_var.name for loop in loops(out)] == ["i_1", "k_0", "j_0", "i_0"]
    assert all(loop.kind is ForKind.SERIAL and not loop.annotations for loop in loops(out))
    assert len(nodes(out, BufferStore)) == 4 * 4 + 4  # 16 updates and 4 guarded inits
    assert_same_numbers(func, out)
    tir.verify_well_formed(out)
    small = unroll_loop(lower(auto_unrolled_matmul(8)))
    assert [loop.loop_var.name for loop in loops(small)] == ["j_1", "i_1", "k_0", "j_0", "i_0"]
    assert_same_numbers(func, small)


def test_auto_unroll_needs_an_int():
    func = lower(auto_unrolled_matmul(64))
    outer = func.body
    bad = func.with_body(
        tir.stmt.For(
            outer.loop_var,
            outer.min,
            outer.extent,
            outer.kind,
            outer.body,
            None,
            {"pragma_auto_unroll_max_step": "many"},
        )
    )
    with pytest.raises(TypeError, match="pragma_auto_unroll_max_step = 'many'"):
        unroll_loop(bad)
