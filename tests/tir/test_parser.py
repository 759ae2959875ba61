"""Tests of the TVMScript parser: the seed notebook's programs, every construct, the namespaces.

The three seed programs (shared/seeds/002_*.txt) appear verbatim twice: as decorated
classes (with the three decorator spellings @I.ir_module, @tir.script.ir_module and the
notebook's own @tvm.script.ir_module through ``import tir as tvm``) and as text through
``tir.parse``. Structure is checked node by node; numbers come from the executor on
random inputs; printing and parsing back must give the same function.
"""

# ruff: noqa: UP037, UP039, F821  (the notebook quotes dtypes in annotations and writes `class Name():`)

from __future__ import annotations

import importlib.util
import sys
import textwrap

import numpy as np
import pytest

import tir
import tir as tvm
from tir import (
    Allocate,
    BlockRealize,
    Buffer,
    BufferStore,
    Evaluate,
    FloatImm,
    For,
    ForKind,
    I,
    IfThenElse,
    IntImm,
    IRModule,
    IterKind,
    LetStmt,
    PrimFunc,
    T,
    Var,
    op,
)
from tir.expr import Broadcast, Call, Cast, FloorDiv, Let, Max, Min, Mod, Ramp, Select
from tir.script import namespace
from tir.script.parser import _HANDLERS

N = 16  # a module-level constant the scripts below use as a free name

# ---------------------------------------------------------------- the seed programs, verbatim

VECTOR_ADD = """
@tvm.script.ir_module
class MyModuleVecAdd():
    @T.prim_func
    def main(A: T.Buffer[(1024,), 'float32'],
             B: T.Buffer[(1024,), 'float32'],
             C: T.Buffer[(1024,), 'float32']):
        T.func_attr({"global_symbol": "main", "tir.noalias":True})
        for i in T.grid(1024):
            with T.block("C"):
                vi = T.axis.spatial((0, 1024), i)
                C[vi] = A[vi] + B[vi]
"""

WINDOW_SUM = """
@tvm.script.ir_module
class MyModuleWindowSun():
    @T.prim_func
    def main(A: T.Buffer[(1026,), 'float32'],
             B: T.Buffer[(1024,), 'float32']):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in T.grid(1024):
            with T.block('B'):
                vi = T.axis.spatial((0, 1024), i)
                B[vi] = A[vi] + A[vi+1] + A[vi+2]
"""

MATMUL = """
@tvm.script.ir_module
class MyModuleMatmul():
    @T.prim_func
    def main(A: T.Buffer[(1024, 1024), 'float32'],
             B: T.Buffer[(1024, 1024), 'float32'],
             C: T.Buffer[(1024, 1024), 'float32']):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(1024, 1024, 1024):
            with T.block('C'):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


# fmt: off
@I.ir_module
class MyModuleVecAdd():
    @T.prim_func
    def main(A: T.Buffer[(1024,), 'float32'],
             B: T.Buffer[(1024,), 'float32'],
             C: T.Buffer[(1024,), 'float32']):
        T.func_attr({"global_symbol": "main", "tir.noalias":True})
        for i in T.grid(1024):
            with T.block("C"):
                vi = T.axis.spatial((0, 1024), i)
                C[vi] = A[vi] + B[vi]


@tir.script.ir_module
class MyModuleWindowSun():
    @T.prim_func
    def main(A: T.Buffer[(1026,), 'float32'],
             B: T.Buffer[(1024,), 'float32']):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in T.grid(1024):
            with T.block('B'):
                vi = T.axis.spatial((0, 1024), i)
                B[vi] = A[vi] + A[vi+1] + A[vi+2]


@tvm.script.ir_module
class MyModuleMatmul():
    @T.prim_func
    def main(A: T.Buffer[(1024, 1024), 'float32'],
             B: T.Buffer[(1024, 1024), 'float32'],
             C: T.Buffer[(1024, 1024), 'float32']):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(1024, 1024, 1024):
            with T.block('C'):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
# fmt: on


def _root_body(func: PrimFunc):
    assert isinstance(func.body, BlockRealize) and func.body.block.name == "root"
    return func.body.block.body


def _region_text(region) -> list[tuple[str, str]]:
    return [(r.min.script(), r.extent.script()) for r in region.region]


@pytest.mark.parametrize(
    "module, text",
    [(MyModuleVecAdd, VECTOR_ADD), (MyModuleWindowSun, WINDOW_SUM), (MyModuleMatmul, MATMUL)],
    ids=["vector_add", "window_sum", "matmul"],
)
def test_seed_classes_equal_their_text(module, text):
    parsed = tir.parse(text)
    assert isinstance(module, IRModule) and isinstance(parsed, IRModule)
    assert module.name == parsed.name and list(module.functions) == ["main"]
    tir.assert_structural_equal(module, parsed)


def test_vector_add_structure():
    func = MyModuleVecAdd["main"]
    assert func.name == "main"
    assert func.attrs == {"global_symbol": "main", "tir.noalias": True}
    assert [(p.name, p.static_shape(), p.dtype) for p in func.params] == [
        ("A", (1024,), "float32"),
        ("B", (1024,), "float32"),
        ("C", (1024,), "float32"),
    ]
    loop = _root_body(func)
    assert isinstance(loop, For) and loop.kind is ForKind.SERIAL
    assert (loop.min.value, loop.extent.value, loop.loop_var.dtype) == (0, 1024, "int32")
    realize = loop.body
    assert realize.iter_values == (loop.loop_var,)
    (iv,) = realize.block.iter_vars
    assert iv.kind is IterKind.SPATIAL and (iv.dom.min.value, iv.dom.extent.value) == (0, 1024)
    assert [r.buffer.name for r in realize.block.reads] == ["A", "B"]
    assert [r.buffer.name for r in realize.block.writes] == ["C"]
    assert _region_text(realize.block.reads[0]) == [("vi", "1")]


def test_window_sum_reads_are_inferred_as_a_window():
    block = _root_body(MyModuleWindowSun["main"]).body.block
    (read,) = block.reads
    assert read.buffer.name == "A"
    assert _region_text(read) == [("vi", "3")]
    assert block.reads[0].region[0].min is block.iter_vars[0].var
    assert _region_text(block.writes[0]) == [("vi", "1")]


def test_matmul_structure():
    func = MyModuleMatmul["main"]
    loops = []
    node = _root_body(func)
    while isinstance(node, For):
        loops.append(node)
        node = node.body
    assert [(lp.loop_var.name, lp.extent.value) for lp in loops] == [("i", 1024), ("j", 1024), ("k", 1024)]
    block = node.block
    assert [iv.kind for iv in block.iter_vars] == [IterKind.SPATIAL, IterKind.SPATIAL, IterKind.REDUCE]
    assert node.iter_values == tuple(lp.loop_var for lp in loops)
    assert all(iv.dom.extent.value == 1024 for iv in block.iter_vars)
    assert isinstance(block.init, BufferStore)
    assert isinstance(block.init.value, FloatImm) and block.init.value.value == 0.0
    assert block.init.value.dtype == "float32"
    assert [r.buffer.name for r in block.reads] == ["A", "B"]  # as TVM: the accumulator is a write
    assert [r.buffer.name for r in block.writes] == ["C"]
    assert isinstance(node.predicate, IntImm) and node.predicate.value == 1


def test_window_sum_computes_the_window():
    a = np.random.default_rng(0).uniform(0.5, 1.5, 1026).astype("float32")
    b = np.full(1024, 7.0, dtype="float32")
    tir.interpret(MyModuleWindowSun, a, b)
    np.testing.assert_allclose(b, a[:-2] + a[1:-1] + a[2:], rtol=1e-6)


def test_seed_modules_print_and_parse_back():
    for module in (MyModuleVecAdd, MyModuleWindowSun, MyModuleMatmul):
        text = module.script()
        again = tir.parse(text)
        tir.assert_structural_equal(again, module)
        assert again.script() == text


# ---------------------------------------------------------------- parameters and free names


def _func(text: str, **extra) -> PrimFunc:
    result = tir.parse(textwrap.dedent(text), extra_vars=extra or None)
    assert isinstance(result, PrimFunc)
    return result


def test_buffer_spellings_agree():
    new = _func(
        """
        @T.prim_func
        def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8,), "int8", scope="shared")):
            T.evaluate(0)
        """
    )
    old = _func(
        """
        @T.prim_func
        def f(A: T.Buffer[(4, 8), "float32"], B: T.Buffer[(8,), "int8", "shared"]):
            T.evaluate(0)
        """
    )
    default = _func(
        """
        def f(A: T.Buffer((4, 8)), B: T.Buffer(8, dtype="int8", scope="threadgroup")):
            T.evaluate(0)
        """
    )
    for func in (new, old, default):
        assert [(p.static_shape(), p.dtype, p.scope) for p in func.params] == [
            ((4, 8), "float32", "global"),
            ((8,), "int8", "shared"),
        ]
    tir.assert_structural_equal(new, old)
    tir.assert_structural_equal(new, default)


def test_match_buffer_makes_the_handle_parameter_a_buffer():
    func = _func(
        """
        @T.prim_func
        def add(a: T.handle, b: T.handle, n: T.int32):
            A = T.match_buffer(a, (128, 128), "float32")
            B = T.match_buffer(b, (128, 128))
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
        """
    )
    a_buf, b_buf, n = func.params
    assert isinstance(a_buf, Buffer) and a_buf.name == "A" and a_buf.static_shape() == (128, 128)
    assert isinstance(b_buf, Buffer) and b_buf.dtype == "float32"
    assert isinstance(n, Var) and n.dtype == "int32"
    store = _root_body(func).body.body.block.body
    assert store.buffer is b_buf and store.value.a.buffer is a_buf


def test_module_constant_and_closure_constant():
    scale = 3.0
    rows = 8

    @T.prim_func
    def scaled(A: T.Buffer((rows, N), "float32"), B: T.Buffer((rows, N), "float32")):
        for i, j in T.grid(rows, N):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * scale

    assert scaled.name == "scaled"
    assert [p.static_shape() for p in scaled.params] == [(8, 16), (8, 16)]
    a = np.random.default_rng(1).uniform(0.5, 1.5, (8, 16)).astype("float32")
    b = np.zeros_like(a) + 99
    tir.interpret(scaled, a, b)
    np.testing.assert_allclose(b, a * 3.0, rtol=1e-6)


def test_free_names_from_extra_vars():
    func = _func(
        """
        def f(A: T.Buffer(SHAPE, DTYPE)):
            for i in range(SHAPE[0]):
                A[i] = T.Cast(DTYPE, i) * GAIN
        """,
        SHAPE=(6,),
        DTYPE="float64",
        GAIN=0.5,
    )
    assert func.params[0].static_shape() == (6,) and func.params[0].dtype == "float64"
    a = np.full(6, -1.0)
    tir.interpret(func, a)
    np.testing.assert_allclose(a, np.arange(6) * 0.5)


def test_namespace_aliases_are_recognised():
    func = _func(
        """
        @tx.prim_func
        def f(A: tx.Buffer((4,), "float32")):
            for i in tx.serial(4):
                A[i] = f32(1)
        """,
        tx=T,
        f32=T.float32,
    )
    assert func.params[0].static_shape() == (4,)
    module = tir.parse(
        """
        @tvm.script.ir_module
        class M:
            @tvm.script.tir.prim_func
            def main(A: T.Buffer((4,), "float32")):
                A[0] = T.float32(1)
        """
    )
    assert isinstance(module, IRModule) and list(module.functions) == ["main"]


def test_decorated_module_file_without_future_annotations(tmp_path):
    """Annotations evaluate at def time here: T.Buffer[...] and T.Buffer(...) must be harmless."""
    source = textwrap.dedent(
        """
        from tir import T, I

        ROWS = 4

        @I.ir_module
        class Mod:
            @T.prim_func
            def main(A: T.Buffer[(ROWS,), "float32"], B: T.Buffer((ROWS,), "float32"), n: T.int32):
                for i in range(ROWS):
                    with T.block("B"):
                        vi = T.axis.spatial(ROWS, i)
                        B[vi] = A[vi] + T.Cast("float32", n)
        """
    )
    path = tmp_path / "user_module.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("user_module", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["user_module"] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["user_module"]
    mod = module.Mod
    assert isinstance(mod, IRModule) and mod.name == "Mod"
    a = np.random.default_rng(2).uniform(0.5, 1.5, 4).astype("float32")
    b = np.zeros(4, dtype="float32")
    tir.interpret(mod, a, b, n=3)
    np.testing.assert_allclose(b, a + 3, rtol=1e-6)


def test_symbolic_shape_vars_and_scalar_params():
    func = _func(
        """
        def f(A: T.Buffer((n, m), "float32"), B: T.Buffer((n,), "float32"), n: T.int32):
            m = T.int32()
            k = T.var("int64")
            for i, j in T.grid(n, m):
                with T.block("B"):
                    vi, vj = T.axis.remap("SR", [i, j])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vj]
        """
    )
    a_buf, b_buf, n = func.params
    assert a_buf.shape[0] is n and b_buf.shape[0] is n
    m = a_buf.shape[1]
    assert isinstance(m, Var) and m.name == "m" and m.dtype == "int32"
    outer = _root_body(func)
    assert outer.extent is n and outer.body.extent is m
    a = np.random.default_rng(3).uniform(0.5, 1.5, (3, 5)).astype("float32")
    b = np.full(3, 42.0, dtype="float32")
    tir.interpret(func, a, b, n=3)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


# ---------------------------------------------------------------- blocks


def test_an_integer_expression_stored_into_a_float_buffer_is_cast():
    func = _func(
        """
        @T.prim_func
        def f(B: T.Buffer((6,), "float32")):
            for i in range(6):
                with T.block("B"):
                    vi = T.axis.spatial(6, i)
                    B[vi] = vi * 3 + 1
        """
    )
    store = func.body.block.body.body.block.body
    assert isinstance(store.value, tir.Cast) and store.value.dtype == "float32"
    b = np.zeros(6, "float32")
    tir.interpret(func, b)
    np.testing.assert_array_equal(b, np.arange(6) * 3 + 1)


def test_empty_scope_name_means_global():
    func = _func(
        """
        @T.prim_func
        def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            tmp = T.alloc_buffer((4,), scope="")
            for i in range(4):
                with T.block("copy"):
                    vi = T.axis.spatial(4, i)
                    tmp[vi] = A[vi] * T.float32(2)
            for i in range(4):
                with T.block("out"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = tmp[vi]
        """
    )
    assert [(b.name, b.scope) for b in func.body.block.alloc_buffers] == [("tmp", "global")]
    a, b = np.random.rand(4).astype("float32"), np.zeros(4, "float32")
    tir.interpret(func, a, b)
    np.testing.assert_allclose(b, a * 2)


def test_nested_blocks_and_alloc_buffer_scopes():
    func = _func(
        """
        @T.prim_func
        def f(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32")):
            A_shared = T.alloc_buffer((8, 4), scope="shared")
            for i in range(8):
                with T.block("outer"):
                    vi = T.axis.spatial(8, i)
                    T.reads(A[vi, 0:4])
                    T.writes(B[vi])
                    acc = T.alloc_buffer((1,), scope="local")
                    for j in range(4):
                        with T.block("copy"):
                            vj = T.axis.spatial(4, j)
                            A_shared[vi, vj] = A[vi, vj]
                    acc[0] = T.float32(0)
                    for j in range(4):
                        with T.block("sum"):
                            vj = T.axis.reduce(4, j)
                            acc[0] = acc[0] + A_shared[vi, vj]
                    B[vi] = acc[0]
        """
    )
    root = func.body.block
    assert [(b.name, b.scope) for b in root.alloc_buffers] == [("A_shared", "shared")]
    outer = root.body.body.block
    assert outer.name == "outer"
    assert [(b.name, b.scope) for b in outer.alloc_buffers] == [("acc", "local")]
    assert _region_text(outer.reads[0]) == [("vi", "1"), ("0", "4")]
    copy, init, total, store = outer.body.seq
    assert copy.body.block.name == "copy" and total.body.block.name == "sum"
    assert total.body.block.iter_vars[0].kind is IterKind.REDUCE
    assert [r.buffer.name for r in copy.body.block.writes] == ["A_shared"]
    a = np.random.default_rng(4).uniform(0.5, 1.5, (8, 4)).astype("float32")
    b = np.zeros(8, dtype="float32")
    tir.interpret(func, a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def test_block_statements():
    func = _func(
        """
        def f(A: T.Buffer((130,), "float32"), B: T.Buffer((128,), "float32")):
            for i_0 in T.thread_binding(8, thread="blockIdx.x"):
                for i_1 in T.thread_binding(0, 16, thread="threadIdx.x"):
                    with T.block("B"):
                        vi = T.axis.spatial((0, 128), i_0 * 16 + i_1)
                        vo = T.axis.opaque(1, 0)
                        T.where(i_0 * 16 + i_1 < 100)
                        T.reads(A[vi:vi + 3], [A])
                        T.writes(B[vi])
                        T.block_attr({"meta": 1, "name": "x"})
                        B[vi] = A[vi] + A[vi + 2]
        """
    )
    outer = func.body.block.body
    assert outer.kind is ForKind.THREAD_BINDING and outer.thread_tag == "blockIdx.x"
    inner = outer.body
    assert inner.thread_tag == "threadIdx.x" and (inner.min.value, inner.extent.value) == (0, 16)
    realize = inner.body
    block = realize.block
    assert realize.predicate.script() == "i_0 * 16 + i_1 < 100"
    assert [iv.kind for iv in block.iter_vars] == [IterKind.SPATIAL, IterKind.OPAQUE]
    assert realize.iter_values[0].script() == "i_0 * 16 + i_1"
    assert [_region_text(r) for r in block.reads] == [[("vi", "3")], [("0", "130")]]
    assert block.annotations == {"meta": 1, "name": "x"}


def test_region_extents_are_taken_as_written():
    func = _func(
        """
        def f(A: T.Buffer((64,), "float32"), B: T.Buffer((16,), "float32"), n: T.int32):
            for i in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    T.reads(A[vi * 4:vi * 4 + 4], A[vi:vi + (n - vi)], A[2:n], A[:8], A[vi:])
                    T.writes(B[vi])
                    B[vi] = A[vi * 4]
        """
    )
    reads = func.body.block.body.body.block.reads
    assert [_region_text(r) for r in reads] == [
        [("vi * 4", "4")],
        [("vi", "n - vi")],
        [("2", "n - 2")],
        [("0", "8")],
        [("vi", "64 - vi")],
    ]


def test_explicit_root_block_and_axis_shortcuts():
    func = _func(
        """
        def f(A: T.Buffer((4, 4), "float32")):
            with T.block("root"):
                T.reads()
                T.writes()
                S = T.alloc_buffer((4,))
                for i, j in T.grid(4, 4):
                    with T.block("A"):
                        vi = T.axis.S(4, i)
                        vj = T.axis.R((0, 4), j)
                        A[vi, vj] = S[vi]
        """
    )
    root = func.body.block
    assert root.name == "root" and [b.name for b in root.alloc_buffers] == ["S"]
    block = root.body.body.body.block
    assert [iv.kind for iv in block.iter_vars] == [IterKind.SPATIAL, IterKind.REDUCE]


def test_function_without_blocks_is_not_wrapped_in_a_root_block():
    func = _func(
        """
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = T.float32(1)
        """
    )
    assert isinstance(func.body, For)


# ---------------------------------------------------------------- loops and lowered statements


def test_loop_kinds_annotations_and_dtypes():
    func = _func(
        """
        def f(A: T.Buffer((64,), "float32")):
            for i in T.parallel(2):
                for j in T.unroll(2, 6, annotations={"pragma_unroll": True}):
                    for k in T.vectorized(4):
                        A[i * 32 + j * 4 + k] = T.float32(1)
            for w in range(T.int64(3)):
                A[w] = T.float32(2)
            for u in T.serial(1, 3):
                A[u] = T.float32(3)
        """
    )
    first, wide, serial = func.body.seq
    assert first.kind is ForKind.PARALLEL
    unroll = first.body
    assert unroll.kind is ForKind.UNROLLED and (unroll.min.value, unroll.extent.value) == (2, 4)
    assert unroll.annotations == {"pragma_unroll": True}
    assert unroll.body.kind is ForKind.VECTORIZED
    assert wide.loop_var.dtype == "int64" and wide.min.dtype == "int64" and wide.extent.dtype == "int64"
    assert serial.kind is ForKind.SERIAL and (serial.min.value, serial.extent.value) == (1, 2)


def test_lowered_statements():
    func = _func(
        """
        def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), n: T.int32):
            for t in T.thread_binding(16, thread="threadIdx.x"):
                A_shared = T.decl_buffer((16,), "float32", scope="shared")
                A_shared[t] = A[t]
                T.evaluate(T.tvm_storage_sync("shared"))
                x: T.int32 = (t + 1) % 16
                if x < n:
                    B[t] = A_shared[t]
                elif x == n:
                    B[t] = T.float32(-1)
                else:
                    B[t] = T.float32(0)
        """
    )
    loop = func.body
    allocate = loop.body
    assert isinstance(allocate, Allocate) and allocate.buffer.scope == "shared"
    copy, sync, let = allocate.body.seq
    assert isinstance(copy, BufferStore) and copy.buffer is allocate.buffer
    assert isinstance(sync, Evaluate) and isinstance(sync.value, Call) and sync.value.op == "tvm_storage_sync"
    assert isinstance(let, LetStmt) and let.var.dtype == "int32"
    branch = let.body
    assert isinstance(branch, IfThenElse) and isinstance(branch.else_case, IfThenElse)
    assert branch.else_case.else_case.value.value == 0.0
    a = np.random.default_rng(5).uniform(0.5, 1.5, 16).astype("float32")
    b = np.full(16, 9.0, dtype="float32")
    tir.interpret(func, a, b, n=7)
    x = (np.arange(16) + 1) % 16
    expected = np.where(x < 7, a, np.where(x == 7, -1.0, 0.0))
    np.testing.assert_allclose(b, expected, rtol=1e-6)


def test_with_forms_of_let_and_decl_buffer():
    func = _func(
        """
        def f(A: T.Buffer((4,), "float32")):
            with T.LetStmt(2) as x:
                A[x] = T.float32(1)
            with T.decl_buffer((4,), "float32", scope="local") as tmp:
                tmp[0] = T.float32(2)
            A[1] = T.float32(3)
        """
    )
    let, allocate, store = func.body.seq
    assert isinstance(let, LetStmt) and let.body.indices[0] is let.var
    assert isinstance(allocate, Allocate) and allocate.buffer.name == "tmp"
    assert isinstance(store, BufferStore) and store.value.value == 3.0


def test_static_if_on_python_constants():
    func = _func(
        """
        def f(A: T.Buffer((4,), "float32")):
            if BIG:
                A[0] = T.float32(1)
            else:
                A[0] = T.float32(2)
        """,
        BIG=False,
    )
    assert isinstance(func.body, BufferStore) and func.body.value.value == 2.0


# ---------------------------------------------------------------- expressions


def _expr_func(target: str, expr: str) -> PrimFunc:
    return _func(
        f"""
        def f(A: T.Buffer((4,), "float32"), I8: T.Buffer((4,), "int8"), n: T.int32, x: T.float32):
            {target}[0] = {expr}
        """
    )


EXPRESSIONS = [
    ("A", "A[n] + x * T.float32(2)", lambda A, n, x: op.add(A[n], op.mul(x, FloatImm(2.0)))),
    ("A", "A[n % 4] - x / 2.0", lambda A, n, x: op.sub(A[op.floormod(n, 4)], op.div(x, 2.0))),
    ("A", "-x", lambda A, n, x: op.neg(x)),
    ("A", "T.max(x, 1.5)", lambda A, n, x: Max(x, FloatImm(1.5))),
    ("A", "T.min(A[0], x)", lambda A, n, x: Min(A[0], x)),
    ("A", "T.Cast('float32', n // 2)", lambda A, n, x: Cast("float32", op.floordiv(n, 2))),
    ("A", "T.cast(n, 'float32')", lambda A, n, x: Cast("float32", n)),
    ("A", "T.float32(n)", lambda A, n, x: Cast("float32", n)),
    ("A", "T.Select(n < 2, x, T.float32(0))", lambda A, n, x: Select(op.lt(n, 2), x, FloatImm(0.0))),
    ("A", "x if n >= 2 else x * 2.0", lambda A, n, x: Select(op.ge(n, 2), x, op.mul(x, 2.0))),
    ("A", "T.if_then_else(n == 1, x, A[1])", lambda A, n, x: op.call("if_then_else", op.eq(n, 1), x, A[1])),
    ("A", "T.exp(x) + T.sqrt(x)", lambda A, n, x: op.add(op.call("exp", x), op.call("sqrt", x))),
    ("A", "T.fabs(x) + T.abs(x)", lambda A, n, x: op.add(op.call("fabs", x), op.call("fabs", x))),
    ("A", "T.pow(x, 2.0)", lambda A, n, x: op.call("pow", x, 2.0)),
    ("A", "x ** 2.0", lambda A, n, x: op.call("pow", x, 2.0)),
    ("A", "T.fma(x, x, A[2])", lambda A, n, x: op.call("fma", x, x, A[2])),
    ("A", "T.tanh(T.sigmoid(x))", lambda A, n, x: op.call("tanh", op.call("sigmoid", x))),
    ("A", "T.max_value('float32')", lambda A, n, x: FloatImm(3.4028234663852886e38)),
    ("A", "T.min_value('float32')", lambda A, n, x: FloatImm(-3.4028234663852886e38)),
    ("A", "T.floordiv(x, 2.0)", lambda A, n, x: FloorDiv(x, FloatImm(2.0))),
    ("A", "T.float32('inf')", lambda A, n, x: FloatImm(float("inf"))),
    ("A", "T.Let(v * v, where={v: x + 1.0})", None),
    ("I8", "1 + 2 * 3", lambda A, n, x: IntImm(7, "int8")),
    ("I8", "T.int8(n)", lambda A, n, x: Cast("int8", n)),
    ("I8", "T.max_value('int8')", lambda A, n, x: IntImm(127, "int8")),
    ("I8", "T.truncmod(T.int8(n), T.int8(3))", lambda A, n, x: Mod(Cast("int8", n), IntImm(3, "int8"))),
    ("I8", "T.Select(n < 2 and not n == 0 or n > 9, T.int8(1), T.int8(2))", None),
    ("I8", "T.int8(1) if 0 < n < 3 else T.int8(2)", None),
]


@pytest.mark.parametrize("target, text, expected", EXPRESSIONS, ids=[e[1] for e in EXPRESSIONS])
def test_expressions(target, text, expected):
    func = _expr_func(target, text)
    A, _, n, x = func.params
    value = func.body.value
    if expected is not None:
        tir.assert_structural_equal(value, expected(A, n, x))
    again = tir.parse(func.script())
    tir.assert_structural_equal(again, func)


def test_let_expression_binds_its_variable():
    value = _expr_func("A", "T.Let(v * v, where={v: x + 1.0})").body.value
    assert isinstance(value, Let) and value.var.name == "v" and value.body.a is value.var


def test_logical_operators_build_bool_nodes():
    value = _expr_func("I8", "T.Select(n < 2 and not n == 0 or n > 9, T.int8(1), T.int8(2))").body.value
    assert value.condition.script() == "n < 2 and not n == 0 or n > 9"
    chained = _expr_func("I8", "T.int8(1) if 0 < n < 3 else T.int8(2)").body.value
    assert chained.condition.script() == "0 < n and n < 3"


def test_constants_take_the_buffer_dtype():
    func = _func(
        """
        def f(A: T.Buffer((4,), "float16"), B: T.Buffer((4,), "int64"), C: T.Buffer((4,), "bool")):
            A[0] = 0
            A[1] = T.float32(0.5)
            B[0] = 3000000000
            B[1] = 7
            C[0] = True
        """
    )
    values = [s.value for s in func.body.seq]
    assert [(v.dtype, v.value) for v in values] == [
        ("float16", 0.0),
        ("float16", 0.5),
        ("int64", 3000000000),
        ("int64", 7),
        ("bool", 1),
    ]


def test_vector_expressions():
    func = _func(
        """
        def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
            for i in range(2):
                B[T.Ramp(i * 4, 1, 4)] = A[T.Ramp(i * 4, 1, 4)] + T.Broadcast(T.float32(1), 4)
        """
    )
    store = func.body.body
    assert isinstance(store.indices[0], Ramp) and store.indices[0].lanes == 4
    assert store.value.dtype == "float32x4" and isinstance(store.value.b, Broadcast)


def test_augmented_assignment_and_int64_literal():
    func = _func(
        """
        def f(C: T.Buffer((4,), "int64")):
            for i in range(4):
                C[i] += 3000000000
                C[i] *= 2
        """
    )
    add, mul = func.body.body.seq
    assert add.value.script() == "C[i] + T.int64(3000000000)"
    assert mul.value.script() == "C[i] * T.int64(2)"
    c = np.arange(1, 5, dtype="int64")
    tir.interpret(func, c)
    np.testing.assert_array_equal(c, (np.arange(1, 5) + 3000000000) * 2)


def test_zero_dimensional_buffer_and_docstring():
    func = _func(
        '''
        def f(A: T.Buffer((), "float32"), B: T.Buffer((4,), "float32")):
            """Sums B into the scalar A."""
            for i in range(4):
                with T.block("sum"):
                    vi = T.axis.reduce(4, i)
                    T.reads(B[vi])
                    T.writes(A[()])
                    with T.init():
                        A[()] = T.float32(0)
                    A[()] = A[()] + B[vi]
        '''
    )
    block = func.body.block.body.body.block
    assert block.writes[0].region == () and block.body.indices == ()
    a = np.zeros((), dtype="float32")
    b = np.random.default_rng(6).uniform(0.5, 1.5, 4).astype("float32")
    tir.interpret(func, a, b)
    np.testing.assert_allclose(a, b.sum(), rtol=1e-6)


# ---------------------------------------------------------------- round trips and namespaces

ROUND_TRIP_SCRIPTS = {
    "blocks": """
        @T.prim_func
        def f(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
            T.func_attr({"global_symbol": "f"})
            S = T.alloc_buffer((128,), scope="shared")
            for i_0 in T.thread_binding(4, thread="blockIdx.x"):
                for i_1 in T.thread_binding(32, thread="threadIdx.x"):
                    with T.block("S"):
                        v = T.axis.spatial(128, i_0 * 32 + i_1)
                        S[v] = A[v]
                    with T.block("B"):
                        v = T.axis.spatial(128, i_0 * 32 + i_1)
                        T.where(i_0 * 32 + i_1 < 120)
                        B[v] = T.max(S[v], T.float32(0))
    """,
    "lowered": """
        def f(A: T.Buffer((16,), "int32"), n: T.int32):
            for t in T.vectorized(4):
                for u in T.unroll(4):
                    x: T.int32 = T.truncdiv(t * 4 + u, n)
                    if x >= 2:
                        A[t * 4 + u] = x
                    else:
                        A[t * 4 + u] = T.Select(x == 1, 3, -4)
    """,
}


TVM_PRINTED = """
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1026,), "float32"), B: T.Buffer((1024,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    A_shared = T.alloc_buffer((1026,), scope="shared")
    for i_0 in T.thread_binding(8, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            for ax0_0 in range(2):
                for ax0_1 in T.thread_binding(128, thread="threadIdx.x"):
                    with T.block("A_shared"):
                        v0 = T.axis.spatial(1026, i_0 * 128 + (ax0_0 * 128 + ax0_1))
                        T.where(ax0_0 * 128 + ax0_1 < 130)
                        T.reads(A[v0])
                        T.writes(A_shared[v0])
                        A_shared[v0] = A[v0]
            with T.block("B"):
                vi = T.axis.spatial(1024, i_0 * 128 + i_1)
                T.reads(A_shared[vi:vi + 3])
                T.writes(B[vi])
                B[vi] = A_shared[vi] + A_shared[vi + 1] + A_shared[vi + 2]
"""


def test_script_as_tvm_prints_the_scheduled_window_sum():
    func = tir.parse(TVM_PRINTED)
    assert func.attrs == {"global_symbol": "main", "tir.noalias": True}
    assert type(func.attrs["tir.noalias"]) is bool
    root = func.body.block
    assert [(b.name, b.scope) for b in root.alloc_buffers] == [("A_shared", "shared")]
    a = np.random.default_rng(7).uniform(0.5, 1.5, 1026).astype("float32")
    b = np.zeros(1024, dtype="float32")
    tir.interpret(func, a, b)
    np.testing.assert_allclose(b, a[:-2] + a[1:-1] + a[2:], rtol=1e-6)
    tir.assert_structural_equal(tir.parse(func.script()), func)


@pytest.mark.parametrize("name", ROUND_TRIP_SCRIPTS)
def test_printed_scripts_parse_back(name):
    func = _func(ROUND_TRIP_SCRIPTS[name])
    text = func.script()
    again = tir.parse(text)
    tir.assert_structural_equal(again, func)
    assert again.script() == text


def test_every_parser_name_exists_on_the_namespace():
    for name in _HANDLERS:
        *parents, last = name.split(".")
        owner = T
        for part in parents:
            owner = getattr(owner, part)
        assert last in dir(owner), name
        if name == "Buffer":
            continue
        if name in namespace.T_DTYPES:  # a number makes a constant, as in TVM
            assert getattr(owner, last)(1).dtype == name
        else:
            with pytest.raises(RuntimeError, match="only has meaning inside a @T.prim_func"):
                getattr(owner, last)(1)
    script_names = set(namespace.T_FUNCTIONS) | set(namespace.T_DTYPES) | set(namespace.T_INTRINSICS)
    assert script_names <= set(_HANDLERS)
    assert "prim_func" in dir(T) and "ir_module" in dir(I) and "remap" in dir(T.axis)


def test_annotation_objects_evaluate():
    assert T.Buffer((4, 4), "float16").shape == (4, 4)
    assert T.Buffer[(4,), "int8"].dtype == "int8"
    assert repr(T.handle) == "T.handle" and repr(T.int32) == "T.int32"
    with pytest.raises(AttributeError, match="did you mean T.serial"):
        T.serail  # noqa: B018


def test_script_package_aliases():
    from tir import script as _s

    assert _s.ir_module is I.ir_module and _s.prim_func is T.prim_func and _s.parse is tir.parse

    @_s.prim_func
    def ones(A: T.Buffer((3,), "float32")):
        for i in range(3):
            A[i] = T.float32(1)

    a = np.zeros(3, dtype="float32")
    tir.interpret(ones, a)
    np.testing.assert_array_equal(a, np.ones(3))


def test_module_with_two_functions_keeps_their_order():
    module = tir.parse(
        """
        @I.ir_module
        class Two:
            @T.prim_func
            def second(A: T.Buffer((4,), "float32")):
                A[0] = T.float32(2)

            @T.prim_func(private=True)
            def first(A: T.Buffer((4,), "float32")):
                A[0] = T.float32(1)
        """
    )
    assert list(module.functions) == ["second", "first"] and module.name == "Two"
    assert module["first"].body.value.value == 1.0 and module["second"].body.value.value == 2.0


def test_two_shape_variables_declared_in_one_assignment():
    # TVM's printer writes `N, M = T.int32(), T.int32()`.
    func = tir.parse(
        """
@T.prim_func
def scale(a: T.handle, b: T.handle):
    N, M = T.int32(), T.int32()
    A = T.match_buffer(a, (N, M))
    B = T.match_buffer(b, (N, M))
    for i, j in T.grid(N, M):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""
    )
    a = np.random.default_rng(2).random((3, 5)).astype("float32")
    b = np.zeros_like(a)
    tir.interpret(func, a, b)
    np.testing.assert_allclose(b, 2 * a, rtol=1e-6)
    assert [str(s) for s in func.params[0].shape] == ["N", "M"]
