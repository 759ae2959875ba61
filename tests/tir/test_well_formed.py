"""Tests of tir.verify_well_formed: accepted programs, and each failure class with its message."""

from __future__ import annotations

import numpy as np
import pytest

import tir
from tests.tir.test_interpret import (
    TRUE,
    block,
    cached_window_sum,
    lowered_window_sum,
    matmul,
    nest,
    prim_func,
    scaled_copy,
    split_elementwise,
    window_sum,
)
from tir import (
    Allocate,
    Block,
    BlockRealize,
    Buffer,
    BufferRegion,
    BufferStore,
    FloatImm,
    For,
    ForKind,
    IRModule,
    IterKind,
    IterVar,
    Let,
    LetStmt,
    PrimFunc,
    Range,
    T,
    Var,
    const,
)
from tir.analysis.well_formed import WellFormedError


@pytest.mark.parametrize(
    "func",
    [
        matmul(16),
        window_sum(16),
        split_elementwise(1000, 128),
        cached_window_sum(),
        lowered_window_sum(),
        scaled_copy(),
    ],
    ids=["matmul", "window_sum", "split_with_predicate", "cache_read", "lowered", "symbolic"],
)
def test_well_formed_programs_pass(func):
    assert tir.verify_well_formed(func) is True


def test_module_is_checked_function_by_function():
    assert tir.verify_well_formed(IRModule({"main": matmul(4), "w": window_sum(4)}))
    bad = IRModule({"main": matmul(4), "w": split_elementwise(1000, 128, predicate=False)})
    with pytest.raises(WellFormedError, match=r"w: block 'B': iterator vi has domain \[0, 1000\)"):
        tir.verify_well_formed(bad)


def test_loop_variable_used_outside_its_loop():
    A = Buffer("A", (4,))
    i, j = Var("i"), Var("j")
    body = tir.stmt.seq(
        For(i, const(0), const(4), ForKind.SERIAL, BufferStore(A, FloatImm(1.0), (i,))),
        For(j, const(0), const(4), ForKind.SERIAL, BufferStore(A, FloatImm(2.0), (i,))),
    )
    with pytest.raises(WellFormedError, match="loop j: variable i is used outside the scope that defines it"):
        tir.verify_well_formed(PrimFunc((A,), body))


def test_let_variable_used_outside_its_let():
    A = Buffer("A", (4,))
    t, u = Var("t"), Var("u", "float32")
    body = tir.stmt.seq(
        LetStmt(t, const(1), BufferStore(A, FloatImm(1.0), (t,))),
        BufferStore(A, Let(u, FloatImm(2.0), u), (t,)),
    )
    with pytest.raises(WellFormedError, match="function 'main': variable t is used outside the scope"):
        tir.verify_well_formed(PrimFunc((A,), body))


def test_block_using_an_outer_loop_variable_directly():
    A, B = Buffer("A", (8,)), Buffer("B", (8,))
    i, vi = Var("i"), Var("vi")
    body = block("B", [(vi, 8, "S", i)], BufferStore(B, A[i], (vi,)))
    with pytest.raises(
        WellFormedError,
        match=r"block 'B' uses loop variable i of loop i, defined outside the block; "
        r".*bind one to i with T.axis",
    ):
        tir.verify_well_formed(prim_func([A, B], nest([(i, 8)], body)))


def test_iterator_of_another_block():
    A, B, C = Buffer("A", (8,)), Buffer("B", (8,)), Buffer("C", (8,))
    i, j, vi, vj = Var("i"), Var("j"), Var("vi"), Var("vj")
    first = nest([(i, 8)], block("B", [(vi, 8, "S", i)], BufferStore(B, A[vi], (vi,))))
    second = nest([(j, 8)], block("C", [(vj, 8, "S", j)], BufferStore(C, B[vi], (vj,))))
    with pytest.raises(
        WellFormedError, match="block 'C': variable vi is used outside the scope that defines it"
    ):
        tir.verify_well_formed(prim_func([A, B, C], tir.stmt.seq(first, second)))


def test_variable_defined_again_inside_its_own_scope():
    A = Buffer("A", (4, 4))
    i = Var("i")
    body = For(
        i,
        const(0),
        const(4),
        ForKind.SERIAL,
        For(i, const(0), const(4), ForKind.SERIAL, BufferStore(A, FloatImm(1.0), (i, i))),
    )
    with pytest.raises(
        WellFormedError,
        match="loop i: loop variable i is defined again inside the scope that already defines it",
    ):
        tir.verify_well_formed(PrimFunc((A,), body))


def test_duplicate_block_names_are_well_formed_as_in_tvm():
    A, B = Buffer("A", (8,)), Buffer("B", (8,))
    i, j, vi, vj = Var("i"), Var("j"), Var("vi"), Var("vj")
    first = nest([(i, 8)], block("B", [(vi, 8, "S", i)], BufferStore(B, A[vi], (vi,))))
    second = nest([(j, 8)], block("B", [(vj, 8, "S", j)], BufferStore(B, A[vj], (vj,))))
    tir.verify_well_formed(prim_func([A, B], tir.stmt.seq(first, second)))  # names are hints


def test_binding_outside_the_iterator_domain():
    with pytest.raises(
        WellFormedError,
        match=r"block 'B': iterator vi has domain \[0, 1000\) but is bound to i0 \* 128 \+ i1, "
        r"which ranges over \[0, 1023\]; guard the block with T.where",
    ):
        tir.verify_well_formed(split_elementwise(1000, 128, predicate=False))


def test_binding_with_negative_offset():
    A, B = Buffer("A", (8,)), Buffer("B", (8,))
    i, vi = Var("i"), Var("vi")
    body = block("B", [(vi, 8, "S", i - 1)], BufferStore(B, A[vi], (vi,)))
    with pytest.raises(WellFormedError, match=r"ranges over \[-1, 6\]"):
        tir.verify_well_formed(prim_func([A, B], nest([(i, 8)], body)))


def test_binding_count_mismatch():
    A = Buffer("A", (8,))
    i, vi = Var("i"), Var("vi")
    realize = BlockRealize(
        (),
        TRUE,
        Block(
            "A",
            (IterVar(vi, Range.from_min_extent(0, 8), IterKind.SPATIAL),),
            (),
            (),
            BufferStore(A, FloatImm(1.0), (vi,)),
        ),
    )
    with pytest.raises(WellFormedError, match="block 'A' has 1 iterators but its realize binds 0 values"):
        tir.verify_well_formed(prim_func([A], nest([(i, 8)], realize)))


def test_unallocated_buffer():
    A = Buffer("A", (8,))
    cache = Buffer("A_local", (8,), scope="local")
    i, vi = Var("i"), Var("vi")
    body = block("A", [(vi, 8, "S", i)], BufferStore(A, cache[vi], (vi,)))
    with pytest.raises(
        WellFormedError,
        match="block 'A' loads buffer A_local, which is neither a parameter nor allocated around the access",
    ):
        tir.verify_well_formed(prim_func([A], nest([(i, 8)], body)))


def test_allocation_is_scoped_to_its_allocate():
    A = Buffer("A", (8,))
    scratch = Buffer("scratch", (8,), scope="local")
    i = Var("i")
    body = tir.stmt.seq(
        Allocate(scratch, BufferStore(scratch, FloatImm(1.0), (const(0),))),
        For(i, const(0), const(8), ForKind.SERIAL, BufferStore(scratch, A[i], (i,))),
    )
    with pytest.raises(
        WellFormedError, match="loop i stores to buffer scratch, which is neither a parameter"
    ):
        tir.verify_well_formed(PrimFunc((A,), body))


def test_index_rank_mismatch_in_loads_stores_and_regions():
    A, B = Buffer("A", (8, 8)), Buffer("B", (8,))
    i, vi = Var("i"), Var("vi")
    store = BufferStore(B, A[vi, vi], (vi, vi))
    realize = BlockRealize(
        (i,),
        TRUE,
        Block(
            "B",
            (IterVar(vi, Range.from_min_extent(0, 8), IterKind.SPATIAL),),
            (BufferRegion(A, (Range(vi, const(1)),)),),
            (),
            store,
        ),
    )
    with pytest.raises(WellFormedError) as info:
        tir.verify_well_formed(prim_func([A, B], nest([(i, 8)], realize)))
    message = str(info.value)
    assert "block 'B' stores to buffer B of 1 dimensions with 2 indices" in message
    assert "block 'B' reads buffer A of 2 dimensions with 1 indices" in message


def test_all_problems_are_reported_together_and_raise_error_false_returns_false():
    A, B = Buffer("A", (8,)), Buffer("B", (8,))
    stray = Buffer("stray", (8,))
    i, vi, k = Var("i"), Var("vi"), Var("k")
    body = block("B", [(vi, 4, "S", i)], BufferStore(B, A[i] + stray[k], (vi,)))
    func = prim_func([A, B], nest([(i, 8)], body))
    assert tir.verify_well_formed(func, raise_error=False) is False
    with pytest.raises(WellFormedError, match=r"function 'main' is not well formed \(4 problems\):") as info:
        tir.verify_well_formed(func)
    lines = str(info.value).splitlines()[1:]
    assert len(lines) == 4
    assert any("iterator vi has domain [0, 4)" in line for line in lines)
    assert any("uses loop variable i" in line for line in lines)
    assert any("variable k is used outside" in line for line in lines)
    assert any("buffer stray" in line for line in lines)


def test_opaque_blocks_may_use_outer_loop_variables():
    # A block without iterators (as after convert_blocks_to_opaque) sees its context.
    A = Buffer("A", (8,))
    i = Var("i")
    opaque = BlockRealize((), TRUE, Block("A", (), (), (), BufferStore(A, FloatImm(1.0), (i,))))
    assert tir.verify_well_formed(prim_func([A], nest([(i, 8)], opaque)))


def test_block_domain_bound_to_symbolic_extent():
    n = Var("n")
    A = Buffer("A", (n,))
    i, vi = Var("i"), Var("vi")
    body = For(
        i, const(0), n, ForKind.SERIAL, block("A", [(vi, n, "S", i)], BufferStore(A, FloatImm(1.0), (vi,)))
    )
    assert tir.verify_well_formed(prim_func([A], body))


@T.prim_func
def row_blocks_reading_the_row_iterator(A: T.Buffer((6, 5), "float32"), B: T.Buffer((6, 5), "float32")):
    for r in range(6):
        with T.block("row"):
            vr = T.axis.spatial(6, r)
            for c in range(5):
                with T.block("cell"):
                    vc = T.axis.spatial(5, c)
                    B[vr, vc] = A[vr, vc] * T.Cast("float32", vr + 1) + T.Cast("float32", vc)


def test_inner_blocks_may_use_the_iterators_of_the_blocks_around_them():
    # As in TVM (its own test programs nest blocks this way): an iterator is in scope in its
    # block's whole body, nested blocks included. Numbers from the executor and a C build.
    import numpy as np

    from codegen import build

    assert tir.verify_well_formed(row_blocks_reading_the_row_iterator)
    a = np.random.default_rng(3).random((6, 5)).astype("float32") + 0.5
    expected = a * (np.arange(6, dtype="float32")[:, None] + 1) + np.arange(5, dtype="float32")
    b = np.zeros((6, 5), "float32")
    tir.interpret(row_blocks_reading_the_row_iterator, a, b)
    np.testing.assert_allclose(b, expected, rtol=1e-6)
    c = np.zeros((6, 5), "float32")
    build(row_blocks_reading_the_row_iterator, "c")["row_blocks_reading_the_row_iterator"](a, c)
    np.testing.assert_allclose(c, expected, rtol=1e-6)


def test_iterator_domains_are_read_outside_the_block_and_may_use_its_loops():
    # A triangular nest: the inner iterator's domain is the outer loop variable.
    A = Buffer("A", (8, 8))
    i, j, vi, vj = Var("i"), Var("j"), Var("vi"), Var("vj")
    body = block("A", [(vi, 8, "S", i), (vj, i, "S", j)], BufferStore(A, FloatImm(1.0), (vi, vj)))
    assert tir.verify_well_formed(prim_func([A], nest([(i, 8), (j, i)], body)))


@T.prim_func
def lower_triangle_copy(A: T.Buffer((6, 6), "float32"), B: T.Buffer((6, 6), "float32")):
    for i in range(6):
        for j in range(i + 1):
            with T.block("B"):
                vi = T.axis.spatial(6, i)
                vj = T.axis.spatial(i + 1, j)
                B[vi, vj] = A[vi, vj] + T.float32(1)


def test_a_parsed_iterator_domain_may_use_the_loops_around_the_block():
    import numpy as np

    a = np.random.default_rng(4).random((6, 6)).astype("float32")
    b = np.zeros((6, 6), "float32")
    tir.interpret(lower_triangle_copy, a, b)
    np.testing.assert_allclose(b, np.tril(a + 1), rtol=1e-6)


def test_a_block_under_a_loop_of_extent_zero_binds_nothing_to_check():
    func = tir.parse(
        """
@T.prim_func
def main(out: T.Buffer((1, 8), "int32")):
    act = T.alloc_buffer((1, 8), "int32")
    for z, y in T.grid(0, 8):
        with T.block("never"):
            vz, vy = T.axis.remap("SS", [z, y])
            out[vz, vy] = act[vz + 1, vy]
    for y in range(8):
        with T.block("runs"):
            vy = T.axis.spatial(8, y)
            out[0, vy] = vy
"""
    )
    out = np.full((1, 8), -1, "int32")
    tir.interpret(func, out)
    np.testing.assert_array_equal(out[0], np.arange(8))
