"""Tests of tir.flop_count on IR built by hand (builders from test_interpret.py)."""

from __future__ import annotations

import pytest

import tir
from tests.tir.test_interpret import (
    TRUE,
    block,
    matmul,
    nest,
    prim_func,
    split_elementwise,
    vector_add,
    window_sum,
)
from tir import (
    Block,
    BlockRealize,
    Broadcast,
    Buffer,
    BufferLoad,
    BufferStore,
    Cast,
    FloatImm,
    For,
    ForKind,
    IfThenElse,
    IRModule,
    IterKind,
    IterVar,
    PrimFunc,
    Ramp,
    Range,
    Var,
    const,
    op,
)
from tir.analysis.flops import FlopCountError


def test_matmul_counts_two_flops_per_multiply_add_and_not_the_init():
    assert tir.flop_count(matmul(1024)) == 2 * 1024**3


def test_elementwise_add_and_window_sum():
    assert tir.flop_count(vector_add(1000)) == 1000
    assert tir.flop_count(window_sum(1024)) == 2 * 1024


def test_split_with_predicate_counts_the_domain_not_the_loops():
    # 8 * 128 = 1024 loop iterations, but the block's domain is 1000 points.
    assert tir.flop_count(split_elementwise(1000, 128)) == 1000


def test_index_arithmetic_and_integer_math_are_not_counted():
    A, B = Buffer("A", (64,)), Buffer("B", (64,), "int32")
    X = Buffer("X", (64,), "int32")
    i, vi = Var("i"), Var("vi")
    int_value = X[(vi * 3 + 1) % 64] * 2 + 1
    body = block("B", [(vi, 64, "S", i)], BufferStore(B, int_value, (vi,)))
    assert tir.flop_count(prim_func([A, X, B], nest([(i, 64)], body))) == 0


def test_softmax_like_expression_counts_intrinsics_comparisons_and_fma():
    A, B = Buffer("A", (16,)), Buffer("B", (16,))
    i, vi = Var("i"), Var("vi")
    x = A[vi]
    # exp (1) + sub (1) + div (1) + max (1) + fma (2) + comparison (1); the select itself is free.
    value = op.call("exp", x - FloatImm(1.0)) / op.max_value(x, FloatImm(0.5))
    value = op.select(x > FloatImm(0.0), op.call("fma", value, x, x), value)
    body = block("B", [(vi, 16, "S", i)], BufferStore(B, value, (vi,)))
    assert tir.flop_count(prim_func([A, B], nest([(i, 16)], body))) == 16 * (1 + 1 + 1 + 1 + 2 + 1) + 16 * 4


def test_if_then_else_counts_the_dearer_branch():
    A, B = Buffer("A", (16,)), Buffer("B", (16,))
    i, vi = Var("i"), Var("vi")
    x = A[vi]
    value = op.call("if_then_else", vi < 8, x * x + x, x)
    body = block("B", [(vi, 16, "S", i)], BufferStore(B, value, (vi,)))
    assert tir.flop_count(prim_func([A, B], nest([(i, 16)], body))) == 16 * 2


def test_casts_count_nothing_but_float_math_after_them_does():
    A, B = Buffer("A", (8,), "int32"), Buffer("B", (8,))
    i, vi = Var("i"), Var("vi")
    value = Cast("float32", A[vi]) * FloatImm(0.5)
    body = block("B", [(vi, 8, "S", i)], BufferStore(B, value, (vi,)))
    assert tir.flop_count(prim_func([A, B], nest([(i, 8)], body))) == 8


def test_lowered_ir_multiplies_loop_trip_counts_and_vector_lanes():
    A, B = Buffer("A", (256,)), Buffer("B", (256,))
    i, j = Var("i"), Var("j")
    index = Ramp(i * 4, const(1), 4)
    vector_value = BufferLoad(A, (index,)) * Broadcast(FloatImm(2.0), 4)
    body = For(i, const(0), const(64), ForKind.SERIAL, BufferStore(B, vector_value, (index,)))
    scalar = For(
        j, const(0), const(256), ForKind.SERIAL, IfThenElse(j < 100, BufferStore(B, B[j] + A[j], (j,)))
    )
    func = PrimFunc((A, B), tir.stmt.seq(body, scalar))
    assert tir.flop_count(func) == 64 * 4 + 256


def test_nested_blocks_multiply_their_domains():
    # A blockized elementwise op: outer block over 4 tiles, inner block over 16 elements each.
    A, B = Buffer("A", (64,)), Buffer("B", (64,))
    io, ii, vo, vi = Var("io"), Var("ii"), Var("vo"), Var("vi")
    inner = block("B", [(vi, 16, "S", ii)], BufferStore(B, A[vo * 16 + vi] + FloatImm(1.0), (vo * 16 + vi,)))
    outer = BlockRealize(
        (io,),
        TRUE,
        Block(
            "B_o",
            (IterVar(vo, Range.from_min_extent(0, 4), IterKind.SPATIAL),),
            (),
            (),
            nest([(ii, 16)], inner),
        ),
    )
    assert tir.flop_count(prim_func([A, B], nest([(io, 4)], outer))) == 64


def test_symbolic_extents_need_shape_vars():
    n = Var("n")
    A, B = Buffer("A", (n,)), Buffer("B", (n,))
    i, vi = Var("i"), Var("vi")
    body = For(
        i, const(0), n, ForKind.SERIAL, block("B", [(vi, n, "S", i)], BufferStore(B, A[vi] * A[vi], (vi,)))
    )
    func = prim_func([A, B], body)
    with pytest.raises(
        FlopCountError, match=r"block 'B': iterator vi has the extent n, which is not a constant"
    ):
        tir.flop_count(func)
    assert tir.flop_count(func, shape_vars={"n": 100}) == 100
    assert tir.flop_count(func, shape_vars={n: 7}) == 7
    with pytest.raises(ValueError, match="shape_vars names 'm', which is not a variable of 'main'"):
        tir.flop_count(func, shape_vars={"m": 3})


def test_module_counts_main_or_the_named_function():
    mod = IRModule({"main": vector_add(10), "window": window_sum(10)})
    assert tir.flop_count(mod) == 10
    assert tir.flop_count(mod, func_name="window") == 20


def test_symbolic_loop_in_lowered_ir_names_the_loop():
    n = Var("n")
    A = Buffer("A", (n,))
    i = Var("i")
    func = PrimFunc((A,), For(i, const(0), n, ForKind.SERIAL, BufferStore(A, A[i] * A[i], (i,))))
    with pytest.raises(FlopCountError, match=r"loop i has the extent n, .*shape_vars=\{'n': 1024\}"):
        tir.flop_count(func)
    assert tir.flop_count(func, shape_vars={"n": 5}) == 5


def test_loops_around_a_block_may_be_symbolic():
    # The block's domain is constant: the symbolic loop around it does not matter.
    n = Var("n")
    A = Buffer("A", (8,))
    i, vi = Var("i"), Var("vi")
    body = block("A", [(vi, 8, "S", i)], BufferStore(A, A[vi] + FloatImm(1.0), (vi,)), predicate=i < 8)
    assert tir.flop_count(prim_func([A, n], For(i, const(0), n, ForKind.SERIAL, body))) == 8
