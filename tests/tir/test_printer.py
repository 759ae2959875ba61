"""Tests of the TVMScript printer: exact text for hand-built IR, round trips through the parser, marks."""

from __future__ import annotations

import ast
import importlib.util

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tir
from tir import (
    Allocate,
    Block,
    BlockRealize,
    Buffer,
    BufferRegion,
    BufferStore,
    Call,
    Evaluate,
    FloatImm,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IRModule,
    IterKind,
    IterVar,
    Let,
    LetStmt,
    PrimFunc,
    Range,
    SeqStmt,
    StringImm,
    Var,
    const,
    op,
)
from tir.expr import (
    EQ,
    And,
    Broadcast,
    Cast,
    Div,
    FloorDiv,
    Max,
    Min,
    Mod,
    Not,
    Or,
    Ramp,
    Select,
    Sub,
)
from tir.script.highlight import show, to_html
from tir.script.printer import expr_to_str, to_script

TRUE = IntImm(1, "bool")


# ---------------------------------------------------------------- IR builders


def root(body, alloc=()):
    return BlockRealize((), TRUE, Block("root", (), (), (), body, alloc_buffers=tuple(alloc)))


def loop(var, extent, body, kind=ForKind.SERIAL, start=0, **kwargs):
    return For(var, const(start), const(extent), kind, body, **kwargs)


def axis(var, extent, kind=IterKind.SPATIAL, start=0):
    return IterVar(var, Range.from_min_extent(start, extent), kind)


def point(buffer, *indices):
    return BufferRegion(buffer, tuple(Range.from_min_extent(i, 1) for i in indices))


def block(name, bindings, reads, writes, body, predicate=TRUE, **kwargs):
    iter_vars = tuple(iv for iv, _ in bindings)
    values = tuple(const(v) for _, v in bindings)
    return BlockRealize(
        values, predicate, Block(name, iter_vars, tuple(reads), tuple(writes), body, **kwargs)
    )


ATTRS = {"global_symbol": "main", "tir.noalias": True}


def vector_add():
    A, B, C = (Buffer(n, (1024,)) for n in "ABC")
    i, vi = Var("i"), Var("vi")
    store = BufferStore(C, A[vi] + B[vi], (vi,))
    body = loop(
        i, 1024, block("C", [(axis(vi, 1024), i)], [point(A, vi), point(B, vi)], [point(C, vi)], store)
    )
    return PrimFunc((A, B, C), root(body), dict(ATTRS))


def matmul(n=1024, dtype="float32"):
    A, B, C = (Buffer(name, (n, n), dtype) for name in "ABC")
    i, j, k, vi, vj, vk = (Var(name) for name in ("i", "j", "k", "vi", "vj", "vk"))
    update = BufferStore(C, C[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj))
    init = BufferStore(C, FloatImm(0.0, dtype), (vi, vj))
    realize = block(
        "C",
        [(axis(vi, n), i), (axis(vj, n), j), (axis(vk, n, IterKind.REDUCE), k)],
        [point(A, vi, vk), point(B, vk, vj)],
        [point(C, vi, vj)],
        update,
        init=init,
    )
    body = loop(i, n, loop(j, n, loop(k, n, realize)))
    return PrimFunc((A, B, C), root(body), dict(ATTRS))


def scheduled_nest():
    """A tiled matmul as a schedule leaves it: thread bindings, a local cache, odd loop kinds."""
    A, B, C = (Buffer(n, (1000, 1024)) for n in "ABC")
    C_local = Buffer("C_local", (1000, 1024), scope="local")
    i_0, i_1, j_0, j_1, k = (Var(n) for n in ("i_0", "i_1", "j_0", "j_1", "k"))
    vi, vj, vk = Var("vi"), Var("vj"), Var("vk")
    row = i_0 * 8 + i_1
    compute = block(
        "C",
        [(axis(vi, 1000), row), (axis(vj, 1024), j_0 * 4 + j_1), (axis(vk, 1024, IterKind.REDUCE), k)],
        [point(A, vi, vk), point(B, vi, vk)],
        [point(C_local, vi, vj)],
        BufferStore(C_local, C_local[vi, vj] + A[vi, vk] * B[vi, vk], (vi, vj)),
        predicate=row < 1000,
        init=BufferStore(C_local, FloatImm(0.0), (vi, vj)),
        annotations={"meta": 1},
    )
    inner = loop(
        k,
        1024,
        loop(j_0, 256, loop(j_1, 4, compute, ForKind.VECTORIZED), ForKind.UNROLLED),
        annotations={"pragma": "x"},
    )
    v0, v1, ax0, ax1 = Var("v0"), Var("v1"), Var("ax0"), Var("ax1")
    write_back = loop(
        ax0,
        8,
        loop(
            ax1,
            1024,
            block(
                "C_local",
                [(axis(v0, 1000), i_0 * 8 + ax0), (axis(v1, 1024), ax1)],
                [point(C_local, v0, v1)],
                [point(C, v0, v1)],
                BufferStore(C, C_local[v0, v1], (v0, v1)),
                predicate=i_0 * 8 + ax0 < 1000,
            ),
            ForKind.PARALLEL,
            start=0,
        ),
    )
    body = loop(
        i_0,
        125,
        loop(i_1, 8, SeqStmt((inner, write_back)), ForKind.THREAD_BINDING, thread_tag="threadIdx.x"),
        ForKind.THREAD_BINDING,
        thread_tag="blockIdx.x",
    )
    return PrimFunc((A, B, C), root(body, [C_local]), dict(ATTRS))


def offsets_and_scopes():
    """Loops not starting at 0, region slices, block-level allocations, every scope."""
    A = Buffer("A", (130,))
    B = Buffer("B", (128,), "int32")
    S = Buffer("S", (16, 16), scope="shared")
    tmp = Buffer("tmp", (4,), "int32", scope="local")
    i, j, vi, vr = Var("i"), Var("j"), Var("vi"), Var("vr")
    region = BufferRegion(A, (Range(vi, const(3)),))
    body_stmt = SeqStmt(
        (
            BufferStore(tmp, IntImm(0), (IntImm(0),)),
            BufferStore(B, Cast("int32", A[vi] + A[vi + 2]) + tmp[0], (vi,)),
        )
    )
    realize = block(
        "B",
        [(axis(vi, 128), i), (axis(vr, 4, IterKind.OPAQUE, start=2), j)],
        [region, BufferRegion(S, (Range.from_min_extent(0, 16), Range.from_min_extent(0, 16)))],
        [point(B, vi)],
        body_stmt,
        alloc_buffers=(tmp,),
    )
    body = loop(i, 128, loop(j, 4, realize, ForKind.UNROLLED, start=2), ForKind.SERIAL, start=0)
    return PrimFunc((A, B), root(body, [S]), {})


def name_collisions():
    """Different variables and buffers with one name, and names Python would not accept."""
    A = Buffer("A", (16,))
    A_again = Buffer("A", (16,), scope="local")
    i_first, i_second, i_nested = Var("i"), Var("i"), Var("i")
    weird = Var("for")
    dotted = Var("i.outer")
    vi1, vi2 = Var("vi"), Var("vi")
    first = loop(
        i_first,
        16,
        block(
            "A", [(axis(vi1, 16), i_first)], [], [point(A_again, vi1)], BufferStore(A_again, A[vi1], (vi1,))
        ),
    )
    second = loop(
        i_second,
        4,
        loop(
            i_nested,
            4,
            loop(
                weird,
                1,
                loop(
                    dotted,
                    1,
                    block(
                        "A_1",
                        [(axis(vi2, 16), i_second * 4 + i_nested + weird + dotted)],
                        [point(A_again, vi2)],
                        [point(A, vi2)],
                        BufferStore(A, A_again[vi2], (vi2,)),
                    ),
                ),
            ),
        ),
    )
    return PrimFunc((A,), root(SeqStmt((first, second)), [A_again]), {})


def lowered():
    """Block-free IR as the lowering passes leave it."""
    A = Buffer("A", (1026,))
    B = Buffer("B", (1024,))
    A_shared = Buffer("A_shared", (130,), scope="shared")
    acc = Buffer("acc", (1,), scope="local")
    n = Var("n")
    bx, tx, ax0, x = Var("blockIdx_x"), Var("threadIdx_x"), Var("ax0_0"), Var("x")
    fetch = loop(
        ax0,
        2,
        IfThenElse(
            ax0 * 128 + tx < 130,
            BufferStore(A_shared, A[bx * 128 + ax0 * 128 + tx], (ax0 * 128 + tx,)),
        ),
    )
    sync = Evaluate(Call("int32", "tvm_storage_sync", (StringImm("shared"),)))
    compute = LetStmt(
        x,
        tx + 1,
        IfThenElse(
            x < n,
            BufferStore(B, A_shared[x - 1] + A_shared[x] + A_shared[x + 1], (bx * 128 + tx,)),
            BufferStore(B, FloatImm(0.0), (bx * 128 + tx,)),
        ),
    )
    after = BufferStore(acc, FloatImm(1.0), (IntImm(0),))
    kernel = Allocate(A_shared, SeqStmt((fetch, sync, compute)))
    body = loop(
        bx,
        8,
        loop(
            tx, 128, SeqStmt((kernel, Allocate(acc, after))), ForKind.THREAD_BINDING, thread_tag="threadIdx.x"
        ),
        ForKind.THREAD_BINDING,
        thread_tag="blockIdx.x",
    )
    return PrimFunc((A, B, n), body, {"global_symbol": "main"})


def symbolic_shapes():
    """A scalar parameter and a shape variable that only the buffer shapes bind."""
    n, m = Var("n"), Var("m")
    A = Buffer("A", (n, m))
    B = Buffer("B", (n,))
    i, j, vi, vj = Var("i"), Var("j"), Var("vi"), Var("vj")
    realize = block(
        "B",
        [
            (IterVar(vi, Range(IntImm(0), n), IterKind.SPATIAL), i),
            (IterVar(vj, Range(IntImm(0), m), IterKind.REDUCE), j),
        ],
        [point(A, vi, vj)],
        [point(B, vi)],
        BufferStore(B, Max(B[vi], A[vi, vj]), (vi,)),
        init=BufferStore(B, FloatImm(float("-inf")), (vi,)),
    )
    body = For(i, IntImm(0), n, ForKind.SERIAL, For(j, IntImm(0), m, ForKind.SERIAL, realize))
    return PrimFunc((A, B, n), root(body), {})


def let_not_last():
    """A LetStmt and an Allocate followed by more statements need the ``with`` forms."""
    A = Buffer("A", (4,))
    tmp = Buffer("tmp", (4,), scope="local")
    x = Var("x")
    let = LetStmt(x, IntImm(2), BufferStore(A, FloatImm(1.0), (x,)))
    alloc = Allocate(tmp, BufferStore(tmp, FloatImm(2.0), (IntImm(0),)))
    return PrimFunc((A,), SeqStmt((let, alloc, BufferStore(A, FloatImm(3.0), (IntImm(1),)))), {})


def module_of_two():
    return IRModule({"main": matmul(16), "add": vector_add()}, name="Module")


FIXTURES = {
    "vector_add": vector_add,
    "matmul": matmul,
    "matmul_fp16": lambda: matmul(64, "float16"),
    "scheduled_nest": scheduled_nest,
    "offsets_and_scopes": offsets_and_scopes,
    "name_collisions": name_collisions,
    "lowered": lowered,
    "symbolic_shapes": symbolic_shapes,
    "let_not_last": let_not_last,
}


# ---------------------------------------------------------------- exact text


def test_vector_add_text():
    assert vector_add().script() == (
        "# from tir import T\n"
        "\n"
        "@T.prim_func\n"
        'def main(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"), '
        'C: T.Buffer((1024,), "float32")):\n'
        '    T.func_attr({"global_symbol": "main", "tir.noalias": True})\n'
        '    # with T.block("root"):\n'
        "    for i in range(1024):\n"
        '        with T.block("C"):\n'
        "            vi = T.axis.spatial(1024, i)\n"
        "            T.reads(A[vi], B[vi])\n"
        "            T.writes(C[vi])\n"
        "            C[vi] = A[vi] + B[vi]"
    )


def test_matmul_in_module_text():
    mod = IRModule({"main": matmul()})
    assert (
        mod.script()
        == """# from tir import T, I

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"),
             C: T.Buffer((1024, 1024), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        # with T.block("root"):
        for i, j, k in T.grid(1024, 1024, 1024):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]"""
    )


def test_scheduled_nest_text():
    body = scheduled_nest().script().split("\n", 5)[5]
    assert (
        body
        == """    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    # with T.block("root"):
    C_local = T.alloc_buffer((1000, 1024), scope="local")
    for i_0 in T.thread_binding(125, thread="blockIdx.x"):
        for i_1 in T.thread_binding(8, thread="threadIdx.x"):
            for k in T.serial(1024, annotations={"pragma": "x"}):
                for j_0 in T.unroll(256):
                    for j_1 in T.vectorized(4):
                        with T.block("C"):
                            vi = T.axis.spatial(1000, i_0 * 8 + i_1)
                            vj = T.axis.spatial(1024, j_0 * 4 + j_1)
                            vk = T.axis.reduce(1024, k)
                            T.where(i_0 * 8 + i_1 < 1000)
                            T.reads(A[vi, vk], B[vi, vk])
                            T.writes(C_local[vi, vj])
                            T.block_attr({"meta": 1})
                            with T.init():
                                C_local[vi, vj] = T.float32(0.0)
                            C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vi, vk]
            for ax0 in range(8):
                for ax1 in T.parallel(1024):
                    with T.block("C_local"):
                        v0 = T.axis.spatial(1000, i_0 * 8 + ax0)
                        v1 = T.axis.spatial(1024, ax1)
                        T.where(i_0 * 8 + ax0 < 1000)
                        T.reads(C_local[v0, v1])
                        T.writes(C[v0, v1])
                        C[v0, v1] = C_local[v0, v1]"""
    )


def test_offsets_scopes_and_slices_text():
    text = offsets_and_scopes().script()
    assert 'def main(A: T.Buffer((130,), "float32"), B: T.Buffer((128,), "int32")):' in text
    assert "T.func_attr" not in text
    assert '    S = T.alloc_buffer((16, 16), scope="shared")\n' in text
    assert "        for j in T.unroll(2, 6):\n" in text
    assert "                vr = T.axis.opaque((2, 6), j)\n" in text
    assert "                T.reads(A[vi:vi + 3], S[0:16, 0:16])\n" in text
    assert '                tmp = T.alloc_buffer((4,), "int32", scope="local")\n' in text
    assert '                B[vi] = T.Cast("int32", A[vi] + A[vi + 2]) + tmp[0]' in text


def test_unique_names():
    text = name_collisions().script()
    assert 'A_1 = T.alloc_buffer((16,), scope="local")' in text
    assert "for i in range(16):" in text
    assert "for i_1, i_2, for_1, i_outer in T.grid(4, 4, 1, 1):" in text
    assert "vi_1 = T.axis.spatial(16, i_1 * 4 + i_2 + for_1 + i_outer)" in text
    assert "A[vi_1] = A_1[vi_1]" in text
    assert "A_1[vi] = A[vi]" in text


def test_lowered_text():
    assert (
        lowered().script().split("\n", 3)[3]
        == """def main(A: T.Buffer((1026,), "float32"), B: T.Buffer((1024,), "float32"), n: T.int32):
    T.func_attr({"global_symbol": "main"})
    for blockIdx_x in T.thread_binding(8, thread="blockIdx.x"):
        for threadIdx_x in T.thread_binding(128, thread="threadIdx.x"):
            with T.decl_buffer((130,), "float32", scope="shared") as A_shared:
                for ax0_0 in range(2):
                    if ax0_0 * 128 + threadIdx_x < 130:
                        A_shared[ax0_0 * 128 + threadIdx_x] = A[blockIdx_x * 128 + ax0_0 * 128 + threadIdx_x]
                T.evaluate(T.tvm_storage_sync("shared"))
                x: T.int32 = threadIdx_x + 1
                if x < n:
                    B[blockIdx_x * 128 + threadIdx_x] = A_shared[x - 1] + A_shared[x] + A_shared[x + 1]
                else:
                    B[blockIdx_x * 128 + threadIdx_x] = T.float32(0.0)
            acc = T.decl_buffer((1,), "float32", scope="local")
            acc[0] = T.float32(1.0)"""
    )


def test_symbolic_shape_vars_are_declared():
    lines = symbolic_shapes().script().splitlines()
    assert lines[3] == 'def main(A: T.Buffer((n, m), "float32"), B: T.Buffer((n,), "float32"), n: T.int32):'
    assert lines[4] == "    m = T.int32()"
    assert "    for i, j in T.grid(n, m):" in lines
    assert '            vi, vj = T.axis.remap("SR", [i, j])' in lines
    assert '                B[vi] = T.float32("-inf")' in lines


def test_let_and_allocate_followed_by_statements_use_with_forms():
    text = let_not_last().script()
    assert "    with T.LetStmt(2) as x:\n        A[x] = T.float32(1.0)\n" in text
    assert '    with T.decl_buffer((4,), "float32", scope="local") as tmp:\n' in text
    assert text.endswith("\n    A[1] = T.float32(3.0)")


def test_module_prints_every_function():
    text = module_of_two().script()
    assert text.count("@T.prim_func") == 2
    assert "    def main(A: T.Buffer((16, 16)" in text
    assert "    def add(A: T.Buffer((1024,)" in text
    assert "\n\n    @T.prim_func\n    def add(" in text


# ---------------------------------------------------------------- expressions

i, j, k = Var("i"), Var("j"), Var("k")
x, y = Var("x", "float32"), Var("y", "float32")
p, q = Var("p", "bool"), Var("q", "bool")
n64 = Var("n", "int64")


EXPRESSION_CASES = [
    (i * 128 + j, "i * 128 + j"),
    ((i + j) * k, "(i + j) * k"),
    (i - (j - k), "i - (j - k)"),
    ((i - j) - k, "i - j - k"),
    (i + (j + k), "i + (j + k)"),
    (i // 4 * 4 + i % 4, "i // 4 * 4 + i % 4"),
    (i * (j // k), "i * (j // k)"),
    (Div(i, j), "T.truncdiv(i, j)"),
    (Mod(i, j), "T.truncmod(i, j)"),
    (x / y, "x / y"),
    (x / (y * x), "x / (y * x)"),
    (FloorDiv(x, y), "T.floordiv(x, y)"),
    (Min(i, j + 1), "T.min(i, j + 1)"),
    (Max(i, j), "T.max(i, j)"),
    (EQ(i, j), "i == j"),
    (i.not_equal(j), "i != j"),
    (EQ(i < j, p), "(i < j) == p"),
    (And(i < j, Or(p, q)), "i < j and (p or q)"),
    (Or(And(p, q), p), "p and q or p"),
    (And(p, And(q, p)), "p and (q and p)"),
    (Not(And(p, q)), "not (p and q)"),
    (Not(i < j), "not i < j"),
    (Select(p, x, y), "T.Select(p, x, y)"),
    (Cast("float32", i), 'T.Cast("float32", i)'),
    (op.call("exp", x), "T.exp(x)"),
    (op.call("if_then_else", p, x, y), "T.if_then_else(p, x, y)"),
    (Ramp(i, IntImm(1), 4), "T.Ramp(i, 1, 4)"),
    (Broadcast(x, 4), "T.Broadcast(x, 4)"),
    (Sub(IntImm(0), i), "0 - i"),
    (i * -3, "i * -3"),
    (i - IntImm(-3), "i - -3"),
    (n64 * 2, "n * T.int64(2)"),
    (IntImm(5, "uint8"), "T.uint8(5)"),
    (IntImm(1, "bool"), "True"),
    (IntImm(0, "bool"), "False"),
    (FloatImm(0.1), "T.float32(0.1)"),
    (FloatImm(1e-30, "float64"), "T.float64(1e-30)"),
    (FloatImm(float("inf")), 'T.float32("inf")'),
    (FloatImm(float("nan"), "float16"), 'T.float16("nan")'),
    (StringImm('say "hi"'), '"say \\"hi\\""'),
]


@pytest.mark.parametrize("expr, text", EXPRESSION_CASES)
def test_expression_text(expr, text):
    assert expr_to_str(expr) == text


def test_let_expression_text():
    v = Var("v")
    assert expr_to_str(Let(v, i + 1, v * v)) == "T.Let(v * v, where={v: i + 1})"


def test_parenthesised_text_evaluates_like_the_tree():
    """Python's own precedence must read our text back as the same arithmetic."""
    a, b, c = Var("a"), Var("b"), Var("c")
    cases = [a - (b - c), (a - b) - c, a * (b // c), a // b * c, a - b * c, (a - b) * c, a % (b + c)]
    env = {"a": 29, "b": 7, "c": 3}
    for expr in cases:
        assert eval(expr_to_str(expr), {}, env) == _evaluate(expr, env), expr_to_str(expr)


def _evaluate(expr, env):
    from tir.expr import Add, FloorMod, Mul

    if isinstance(expr, Var):
        return env[expr.name]
    if isinstance(expr, IntImm):
        return expr.value
    a, b = _evaluate(expr.a, env), _evaluate(expr.b, env)
    return {Add: a + b, Sub: a - b, Mul: a * b, FloorDiv: a // b, FloorMod: a % b}[type(expr)]


# ---------------------------------------------------------------- marks


def test_mark_on_a_thread_bound_loop():
    func = scheduled_nest()
    inner_loop = func.body.block.body.body  # the threadIdx.x loop
    text = to_script(func, {inner_loop: "loop bound twice to threadIdx.x"})
    lines = text.splitlines()
    at = lines.index('        for i_1 in T.thread_binding(8, thread="threadIdx.x"):')
    caret_line = lines[at + 1]
    assert caret_line == " " * 8 + "^" * len('for i_1 in T.thread_binding(8, thread="threadIdx.x"):') + (
        " loop bound twice to threadIdx.x"
    )
    assert text.count("^") == caret_line.count("^")


def test_mark_on_block_store_and_expression():
    func = matmul(16)
    realize = func.body.block.body.body.body.body
    store = realize.block.body
    product = store.value.b
    text = to_script(func, {realize: "this block", store: "this store", product: "this product"})
    lines = text.splitlines()
    at = lines.index('        with T.block("C"):')
    assert lines[at + 1] == "        " + "^" * len('with T.block("C"):') + " this block"
    at = lines.index("            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]")
    column = lines[at].index("A[vi, vk]")
    assert (
        lines[at + 1]
        == "            " + "^" * len("C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]") + " this store"
    )
    assert lines[at + 2] == " " * column + "^" * len("A[vi, vk] * B[vk, vj]") + " this product"


def test_marked_loop_leaves_the_grid_and_missing_marks_are_ignored():
    func = matmul(16)
    j_loop = func.body.block.body.body
    text = to_script(func, {j_loop: "here", Var("nowhere"): "ignored", IntImm(3): "ignored too"})
    expected = "    for i in range(16):\n        for j in range(16):\n        " + "^" * 19 + " here\n"
    assert expected + "            for k in range(16):\n" in text
    assert "ignored" not in text and text.count("^") == len("for j in range(16):")
    outer_marked = to_script(func, {func.body.block.body: "outer"})
    expected = "    for i in range(16):\n    " + "^" * 19 + " outer\n        for j, k in T.grid(16, 16):\n"
    assert expected in outer_marked


def test_mark_on_a_parameter_buffer_and_multiline_message():
    func = vector_add()
    text = to_script(func, {func.params[1]: "wrong shape\nexpected (512,)"})
    lines = text.splitlines()
    column = lines[3].index("B: T.Buffer")
    assert lines[4] == " " * column + "^" * len('B: T.Buffer((1024,), "float32")') + " wrong shape"
    assert lines[5] == " " * column + "expected (512,)"


def test_marks_do_not_change_unmarked_output():
    func = scheduled_nest()
    assert to_script(func, {}) == func.script() == to_script(func, None)


# ---------------------------------------------------------------- display


def test_show_is_plain_when_not_a_tty(capsys):
    func = vector_add()
    show(func)
    out = capsys.readouterr().out
    assert out == func.script() + "\n"
    assert "\x1b[" not in out


def test_show_colors_a_terminal(monkeypatch, capsys):
    import sys

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    vector_add().show()
    out = capsys.readouterr().out
    assert "\x1b[" in out and "T.axis.spatial" in out


def test_to_html_is_self_contained():
    html = to_html(vector_add().script())
    assert html.startswith("<div") and "monospace" in html
    assert '<span style="' in html and "class=" not in html.replace('class="highlight"', "")
    assert vector_add()._repr_html_() == html


# ---------------------------------------------------------------- round trips


def _parse(text):
    if importlib.util.find_spec("tir.script.parser") is None:
        pytest.skip("the script parser (tir/script/parser.py) is not there yet")
    return tir.parse(text)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_round_trip(name):
    func = FIXTURES[name]()
    text = func.script()
    parsed = _parse(text)
    if isinstance(parsed, IRModule):
        parsed = parsed[func.name]
    tir.assert_structural_equal(parsed, func)
    assert parsed.script() == text


def test_module_round_trip():
    mod = module_of_two()
    parsed = _parse(mod.script())
    tir.assert_structural_equal(parsed, mod)
    assert parsed.script() == mod.script()


# ---------------------------------------------------------------- random expressions

_PY_OPS = {
    ast.Add: "Add",
    ast.Sub: "Sub",
    ast.Mult: "Mul",
    ast.FloorDiv: "FloorDiv",
    ast.Mod: "FloorMod",
    ast.Lt: "LT",
    ast.Eq: "EQ",
    ast.And: "And",
    ast.Or: "Or",
}


def _shape_of_python(node):
    """The operator tree Python reads from printed text, in the IR's class names."""
    if isinstance(node, ast.Expression):
        return _shape_of_python(node.body)
    if isinstance(node, ast.BinOp):
        return (_PY_OPS[type(node.op)], _shape_of_python(node.left), _shape_of_python(node.right))
    if isinstance(node, ast.Compare):
        assert len(node.ops) == 1, "printed a chained comparison"
        return (
            _PY_OPS[type(node.ops[0])],
            _shape_of_python(node.left),
            _shape_of_python(node.comparators[0]),
        )
    if isinstance(node, ast.BoolOp):
        shape = _shape_of_python(node.values[0])
        for value in node.values[1:]:
            shape = (_PY_OPS[type(node.op)], shape, _shape_of_python(value))
        return shape
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return ("Not", _shape_of_python(node.operand))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -node.operand.value
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant):
        return node.value
    raise AssertionError(f"unexpected Python node {ast.dump(node)}")


def _shape_of_ir(e):
    if isinstance(e, Var):
        return e.name
    if isinstance(e, IntImm):
        return bool(e.value) if e.dtype == "bool" else e.value
    if isinstance(e, Not):
        return ("Not", _shape_of_ir(e.a))
    return (type(e).__name__, _shape_of_ir(e.a), _shape_of_ir(e.b))


_INT_LEAVES = st.sampled_from([Var("a"), Var("b"), Var("c")]) | st.integers(-5, 9).map(IntImm)


def _int_trees(leaves):
    classes = st.sampled_from([tir.Add, Sub, tir.Mul, FloorDiv, tir.FloorMod])
    return st.tuples(classes, leaves, leaves).map(lambda t: t[0](t[1], t[2]))


INT_EXPRS = st.recursive(_INT_LEAVES, _int_trees, max_leaves=12)


def _bool_trees(leaves):
    return st.one_of(
        st.tuples(st.sampled_from([And, Or]), leaves, leaves).map(lambda t: t[0](t[1], t[2])),
        leaves.map(Not),
    )


BOOL_LEAVES = st.one_of(
    st.tuples(st.sampled_from([tir.LT, EQ]), INT_EXPRS, INT_EXPRS).map(lambda t: t[0](t[1], t[2])),
    st.sampled_from([Var("p", "bool"), Var("q", "bool")]),
)
BOOL_EXPRS = st.recursive(BOOL_LEAVES, _bool_trees, max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(INT_EXPRS | BOOL_EXPRS)
def test_python_reads_printed_expressions_as_the_same_tree(expr):
    text = expr_to_str(expr)
    assert _shape_of_python(ast.parse(text, mode="eval")) == _shape_of_ir(expr), text


def test_expressions_round_trip_as_free_variables_and_evaluates():
    """Every expression above, inside one function whose free variables the printer declares."""
    v = Var("v")
    # A bare string is an expression only as an argument (T.tvm_storage_sync("shared")).
    exprs = [expr for expr, _ in EXPRESSION_CASES if not isinstance(expr, StringImm)] + [Let(v, i + 1, v * v)]
    func = PrimFunc((), SeqStmt(tuple(Evaluate(expr) for expr in exprs)), {})
    text = func.script()
    assert "    i = T.int32()\n    j = T.int32()\n    k = T.int32()\n    x = T.float32()\n" in text
    parsed = _parse(text)
    tir.assert_structural_equal(parsed, func, map_free_vars=True)
    assert parsed.script() == text
