"""Tests of structural equality and hashing: renaming is invisible, every real change is not."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tir
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
    IntImm,
    IRModule,
    IterKind,
    IterVar,
    Let,
    LetStmt,
    PrimFunc,
    Range,
    SeqStmt,
    Var,
    const,
)
from tir.structural import assert_structural_equal, structural_equal, structural_hash

ROOT = Path(__file__).resolve().parents[2]
TRUE = IntImm(1, "bool")


def make_matmul(
    n=64,
    dtype="float32",
    kind=ForKind.SERIAL,
    block_name="C",
    scope="local",
    annotations=None,
    init_value=0.0,
    names=("i", "j", "k", "vi", "vj", "vk", "A", "B", "C", "C_local"),
):
    """A matmul into a local cache; each argument is one thing a test can change."""
    i, j, k, vi, vj, vk = (Var(name) for name in names[:6])
    A, B, C = (Buffer(name, (n, n), dtype) for name in names[6:9])
    C_local = Buffer(names[9], (n, n), dtype, scope)

    def dom():
        return Range(IntImm(0), IntImm(n))

    def at(buffer, a, b):
        return BufferRegion(buffer, (Range(a, IntImm(1)), Range(b, IntImm(1))))

    compute = Block(
        block_name,
        (
            IterVar(vi, dom(), IterKind.SPATIAL),
            IterVar(vj, dom(), IterKind.SPATIAL),
            IterVar(vk, dom(), IterKind.REDUCE),
        ),
        (at(A, vi, vk), at(B, vk, vj)),
        (at(C_local, vi, vj),),
        BufferStore(C_local, C_local[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj)),
        init=BufferStore(C_local, FloatImm(init_value, dtype), (vi, vj)),
    )
    nest = For(
        i,
        IntImm(0),
        IntImm(n),
        kind,
        For(
            j,
            IntImm(0),
            IntImm(n),
            ForKind.SERIAL,
            For(k, IntImm(0), IntImm(n), ForKind.SERIAL, BlockRealize((i, j, k), TRUE, compute)),
            annotations=annotations or {},
        ),
    )
    copy_i, copy_j, v0, v1 = Var("ax0"), Var("ax1"), Var("v0"), Var("v1")
    copy = Block(
        "C_copy",
        (IterVar(v0, dom(), IterKind.SPATIAL), IterVar(v1, dom(), IterKind.SPATIAL)),
        (at(C_local, v0, v1),),
        (at(C, v0, v1),),
        BufferStore(C, C_local[v0, v1], (v0, v1)),
    )
    copy_nest = For(
        copy_i,
        IntImm(0),
        IntImm(n),
        ForKind.SERIAL,
        For(copy_j, IntImm(0), IntImm(n), ForKind.SERIAL, BlockRealize((copy_i, copy_j), TRUE, copy)),
    )
    root = Block("root", (), (), (), SeqStmt((nest, copy_nest)), alloc_buffers=(C_local,))
    return PrimFunc((A, B, C), BlockRealize((), TRUE, root), {"global_symbol": "main", "tir.noalias": True})


RENAMED = ("a", "b", "c", "x", "y", "z", "P", "Q", "R", "S")

# name: (arguments of the base function, arguments of the changed one)
CHANGES = {
    "extent": ({}, dict(n=32)),
    "dtype": ({}, dict(dtype="float16")),
    "loop kind": ({}, dict(kind=ForKind.PARALLEL)),
    "buffer scope": ({}, dict(scope="shared")),
    "annotation added": ({}, dict(annotations={"pragma_unroll": 4})),
    "annotation value": (dict(annotations={"pragma_unroll": 4}), dict(annotations={"pragma_unroll": 8})),
    "annotation bool vs int": (
        dict(annotations={"pragma_unroll": 1}),
        dict(annotations={"pragma_unroll": True}),
    ),
    "constant": ({}, dict(init_value=1.0)),
}


def test_block_names_are_hints_and_take_no_part():
    # As in TVM: a block's name is a hint, so blocks that differ only in name are equal and hash alike.
    a, b = make_matmul(), make_matmul(block_name="D")
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    assert_structural_equal(a, b)


def test_alpha_renamed_functions_are_equal_and_hash_alike():
    a, b = make_matmul(), make_matmul(names=RENAMED)
    assert structural_equal(a, b)
    assert structural_hash(a) == structural_hash(b)
    assert_structural_equal(a, b)


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_each_change_is_seen_by_equality_and_hash(change):
    base_args, changed_args = CHANGES[change]
    base, changed = make_matmul(**base_args), make_matmul(**changed_args)
    assert not structural_equal(base, changed)
    assert not structural_equal(changed, base)
    assert structural_hash(base) != structural_hash(changed)
    renamed = make_matmul(names=RENAMED, **changed_args)
    assert structural_equal(changed, renamed)
    assert structural_hash(changed) == structural_hash(renamed)


def test_negative_zero_equals_zero_and_nan_equals_nan():
    assert structural_equal(FloatImm(0.0), FloatImm(-0.0))
    assert structural_hash(FloatImm(0.0)) == structural_hash(FloatImm(-0.0))
    assert structural_equal(FloatImm(float("nan")), FloatImm(float("nan")))
    assert not structural_equal(FloatImm(0.1), FloatImm(0.1 + 1e-17 * 3))
    assert not structural_equal(FloatImm(1.0, "float32"), FloatImm(1.0, "float64"))
    assert not structural_equal(IntImm(1, "bool"), IntImm(1, "int32"))


def test_annotation_dicts_compare_by_value_not_order():
    a = make_matmul(annotations={"x": 1, "y": "s"})
    b = make_matmul(annotations={"y": "s", "x": 1})
    assert structural_equal(a, b) and structural_hash(a) == structural_hash(b)


def test_an_int32_constant_in_an_annotation_is_the_plain_int():
    zero, sixteen = IntImm(0, "int32"), IntImm(16, "int32")
    written = make_matmul(annotations={"explicit_read_region": [zero], "step": sixteen})
    plain = make_matmul(annotations={"explicit_read_region": [0], "step": 16})
    assert structural_equal(written, plain) and structural_hash(written) == structural_hash(plain)
    assert not structural_equal(make_matmul(annotations={"step": IntImm(16, "int64")}), plain)


def test_func_attrs_are_compared():
    a = make_matmul()
    b = dataclasses.replace(a, attrs={"global_symbol": "main"})
    assert not structural_equal(a, b)


def test_free_variables_compare_by_identity_unless_mapped():
    x, y = Var("x"), Var("x")
    assert structural_equal(x + 1, x + 1)
    assert not structural_equal(x + 1, y + 1)
    assert structural_equal(x + 1, y + 1, map_free_vars=True)
    assert not structural_equal(x + x, x + y, map_free_vars=True)
    assert structural_hash(x + 1) == structural_hash(y + 1)


def test_bound_variables_map_one_to_one():
    i, j, k = Var("i"), Var("j"), Var("k")
    A = Buffer("A", (4, 4))

    def nest(outer, inner, index_a, index_b):
        store = BufferStore(A, FloatImm(1.0), (index_a, index_b))
        return For(
            outer,
            IntImm(0),
            IntImm(4),
            ForKind.SERIAL,
            For(inner, IntImm(0), IntImm(4), ForKind.SERIAL, store),
        )

    assert structural_equal(nest(i, j, i, j), nest(j, k, j, k))
    assert not structural_equal(nest(i, j, i, j), nest(i, j, j, i))
    assert not structural_equal(nest(i, j, i, j), nest(i, j, i, i))


def test_buffers_map_by_definition_and_compare_their_shape():
    def alloc(shape, dtype="float32"):
        buffer = Buffer("t", shape, dtype, "local")
        return Allocate(buffer, BufferStore(buffer, FloatImm(0.0, dtype), (IntImm(0),)))

    assert structural_equal(alloc((4,)), alloc((4,)))
    assert not structural_equal(alloc((4,)), alloc((8,)))
    assert not structural_equal(alloc((4,), "float16"), alloc((4,), "float32"))
    free_a, free_b = Buffer("A", (4,)), Buffer("A", (4,))
    store_a = BufferStore(free_a, FloatImm(1.0), (IntImm(0),))
    store_b = BufferStore(free_b, FloatImm(1.0), (IntImm(0),))
    assert not structural_equal(store_a, store_b)
    assert structural_equal(store_a, store_b, map_free_vars=True)


def test_symbolic_shape_variables_are_bound_by_the_parameters():
    def func(scalar_param):
        n = Var("n")
        A = Buffer("A", (n,))
        i = Var("i")
        body = For(i, IntImm(0), n, ForKind.SERIAL, BufferStore(A, FloatImm(0.0), (i,)))
        return PrimFunc((A, n) if scalar_param else (A,), body)

    assert structural_equal(func(True), func(True))
    assert structural_equal(func(False), func(False))
    assert not structural_equal(func(True), func(False))


def test_let_statement_and_expression_bind_their_variable():
    x, y = Var("x"), Var("y")
    A = Buffer("A", (4,), "int32")
    assert structural_equal(
        LetStmt(x, IntImm(1), BufferStore(A, x, (IntImm(0),))),
        LetStmt(y, IntImm(1), BufferStore(A, y, (IntImm(0),))),
    )
    assert structural_equal(Let(x, IntImm(2), x * x), Let(y, IntImm(2), y * y))
    assert not structural_equal(Let(x, IntImm(2), x * x), Let(y, IntImm(3), y * y))


def test_modules_compare_function_by_function_name():
    f, g = make_matmul(), make_matmul(names=RENAMED)
    assert structural_equal(IRModule({"main": f}), IRModule({"main": g}, name="Other"))
    assert not structural_equal(IRModule({"main": f}), IRModule({"mm": g}))
    assert structural_hash(IRModule({"main": f})) != structural_hash(IRModule({"mm": f}))


def test_other_node_kinds():
    assert structural_equal(Range(IntImm(0), IntImm(4)), Range(IntImm(0), IntImm(4)))
    assert not structural_equal(Range(IntImm(0), IntImm(4)), Range(IntImm(1), IntImm(4)))
    assert structural_equal(Buffer("A", (4,)), Buffer("B", (4,)))
    assert not structural_equal(Buffer("A", (4,)), Buffer("A", (4,), scope="shared"))
    assert not structural_equal(make_matmul(), make_matmul().body)


def test_hash_is_stable_across_processes():
    script = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); sys.path.insert(0, {str(ROOT)!r})\n"
        "from test_structural import make_matmul\n"
        "from tir import ForKind\n"
        "from tir.structural import structural_hash\n"
        "print(structural_hash(make_matmul()), structural_hash(make_matmul(kind=ForKind.PARALLEL)))\n"
    )
    outputs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        result = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        )
        outputs.add(result.stdout.strip())
    assert len(outputs) == 1
    first, second = (int(v) for v in outputs.pop().split())
    assert first == structural_hash(make_matmul())
    assert first != second
    assert 0 <= first < 2**63


def test_assert_message_names_path_subnodes_and_marks_both_scripts():
    a, b = make_matmul(), make_matmul(names=RENAMED)
    store = b.body.block.body.seq[0].body.body.body.block.body
    product = store.value.b
    changed_store = dataclasses.replace(store, value=store.value.a + (product.a - product.b))
    b = _replace_compute_body(b, changed_store)
    with pytest.raises(AssertionError) as info:
        assert_structural_equal(a, b)
    message = str(info.value)
    assert "structural mismatch at body.block.body[0].body.body.body.block.body.value.b" in message
    assert "lhs:\n    A[vi, vk] * B[vk, vj]\nrhs:\n    P[x, z] - Q[z, y]\n" in message
    lhs_script, rhs_script = message.split("lhs script:\n")[1].split("rhs script:\n")
    assert "C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]\n" in lhs_script
    assert "^^^^ first mismatch (lhs), at body.block.body[0]" in lhs_script
    assert "S[x, y] = S[x, y] + (P[x, z] - Q[z, y])\n" in rhs_script
    assert "^^^^ first mismatch (rhs)" in rhs_script


def test_assert_message_for_a_loop_kind():
    with pytest.raises(AssertionError) as info:
        assert_structural_equal(make_matmul(), make_matmul(kind=ForKind.PARALLEL))
    message = str(info.value)
    assert "structural mismatch at body.block.body[0]\n" in message
    assert "for i, j, k in T.grid(64, 64, 64):" in message and "for i in T.parallel(64):" in message
    lines = message.splitlines()
    marked = lines.index("        for i in T.parallel(64):")
    assert lines[marked + 1].strip().startswith("^^^^^^^") and "first mismatch (rhs)" in lines[marked + 1]


def test_assert_message_for_expressions_alone():
    x = Var("x")
    with pytest.raises(AssertionError, match=r"(?s)at b\n.*lhs:\n    1\nrhs:\n    2"):
        assert_structural_equal(x + 1, x + 2)


def _replace_compute_body(func, new_store):
    class Swap(tir.Mutator):
        def visit_Block(self, block):
            if block.name != "C":
                return self.generic_visit(block)
            return dataclasses.replace(block, body=new_store)

    return func.with_body(Swap().visit(func.body))


def test_twenty_loop_functions_compare_fast():
    def deep(n_loops):
        A = Buffer("A", (2,) * n_loops)
        loops = [Var(f"i{d}") for d in range(n_loops)]
        body = BufferStore(A, A[tuple(loops)] + FloatImm(1.0), tuple(loops))
        for var in reversed(loops):
            body = For(var, IntImm(0), IntImm(2), ForKind.SERIAL, body)
        return PrimFunc((A,), body)

    a, b = deep(20), deep(20)
    assert structural_equal(a, b)
    start = time.perf_counter()
    for _ in range(100):
        structural_equal(a, b)
        structural_hash(a)
    per_call = (time.perf_counter() - start) / 100
    assert per_call < 2e-3, f"structural_equal + structural_hash took {per_call * 1e3:.2f} ms"
    assert structural_equal(deep(50), deep(50))
    assert not structural_equal(deep(50), deep(49))


def test_const_helper_nodes_are_plain_values():
    assert structural_equal(const(3), IntImm(3))
    assert not structural_equal(const(3), IntImm(3, "int64"))


def test_a_rebound_variable_does_not_alias_another():
    A = Buffer("A", (4,), "int32")

    def nest(outer, middle, inner, used):
        store = BufferStore(A, used, (IntImm(0),))
        rebinding = For(
            outer,
            IntImm(0),
            IntImm(2),
            ForKind.SERIAL,
            For(inner, IntImm(0), IntImm(2), ForKind.SERIAL, store),
        )
        return For(
            outer,
            IntImm(0),
            IntImm(2),
            ForKind.SERIAL,
            For(middle, IntImm(0), IntImm(2), ForKind.SERIAL, rebinding),
        )

    a, b, c, x, y, z = (Var(name) for name in "abcxyz")
    assert structural_equal(nest(a, b, c, c), nest(x, y, z, z))
    assert not structural_equal(nest(a, b, c, c), nest(x, y, z, x))
    assert structural_hash(nest(a, b, c, c)) != structural_hash(nest(x, y, z, x))
