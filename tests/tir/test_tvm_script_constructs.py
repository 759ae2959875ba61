"""TVMScript constructs of TVM's printed programs (issue 16): parsed, printed back, executed.

Each program below uses one construct the way TVM's own printer writes it. The checks: the
parsed function prints and parses back to a structurally equal one, and the executor's numbers
on random inputs equal numpy's. Constructs that call code outside the IR (``T.call_extern``,
``T.call_packed``, the tensor-core intrinsics, ``A.data``) are carried and printed; the executor
refuses them with a message naming the call. Builds are tested in tests/codegen.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import tir
from tir import T
from tir.expr import BufferPointer, Call, IterKind
from tir.interpret.runtime import IRError
from tir.script.errors import ParseError
from tir.stmt import For, ForKind


def assert_round_trip(func: tir.PrimFunc) -> str:
    text = func.script()
    tir.assert_structural_equal(tir.parse(text), func)
    return text


def random_floats(*shape: int) -> np.ndarray:
    return (np.random.default_rng(16).random(shape) + 0.5).astype("float32")


# ---------------------------------------------------------------- vectors, hints, bit casts


@T.prim_func
def lower_case_ramp_broadcast(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(2):
        B[T.ramp(i * 4, 1, 4)] = A[T.ramp(i * 4, 1, 4)] * T.broadcast(T.float32(3), 4)


def test_lower_case_ramp_and_broadcast_are_the_vector_nodes():
    assert "T.Ramp(i * 4, 1, 4)" in assert_round_trip(lower_case_ramp_broadcast)
    a, b = random_floats(8), np.zeros(8, "float32")
    tir.interpret(lower_case_ramp_broadcast, a, b)
    np.testing.assert_allclose(b, a * 3, rtol=1e-6)


@T.prim_func
def likely_guard_and_typed_select(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        if T.likely(i < 6):
            B[i] = T.if_then_else(i < 3, A[i], T.exp(A[i]), dtype="float32")


def test_likely_is_a_hint_and_if_then_else_takes_a_dtype():
    text = assert_round_trip(likely_guard_and_typed_select)
    assert "if T.likely(i < 6):" in text
    a, b = random_floats(8), np.zeros(8, "float32")
    tir.interpret(likely_guard_and_typed_select, a, b)
    expected = np.concatenate([a[:3], np.exp(a[3:6]), [0, 0]]).astype("float32")
    np.testing.assert_allclose(b, expected, rtol=1e-6)


@T.prim_func
def bits_of_floats(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        B[i] = T.reinterpret("int32", A[i])
        C[i] = T.reinterpret("float32", B[i] + 1)


def test_reinterpret_reads_the_bits_as_another_dtype():
    assert 'T.reinterpret("int32", A[i])' in assert_round_trip(bits_of_floats)
    a, b, c = random_floats(8), np.zeros(8, "int32"), np.zeros(8, "float32")
    tir.interpret(bits_of_floats, a, b, c)
    np.testing.assert_array_equal(b, a.view("int32"))
    np.testing.assert_array_equal(c, (a.view("int32") + 1).view("float32"))


def test_reinterpret_refuses_dtypes_of_different_widths():
    with pytest.raises(ParseError, match="one width; float32 cannot be read as int64"):
        tir.parse(
            """
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "int64")):
    for i in range(8):
        B[i] = T.reinterpret("int64", A[i])
"""
        )


@T.prim_func
def more_math(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        B[i] = T.erf(A[i]) + T.log10(A[i]) + T.tan(A[i]) + T.trunc(A[i] * 3.0) + T.atan2(A[i], 2.0)


def test_more_math_intrinsics_compute_what_libm_computes():
    assert_round_trip(more_math)
    a, b = random_floats(8), np.zeros(8, "float32")
    tir.interpret(more_math, a, b)
    values = [float(x) for x in a]
    expected = [
        math.erf(x) + math.log10(x) + math.tan(x) + math.trunc(x * 3) + math.atan2(x, 2) for x in values
    ]
    np.testing.assert_allclose(b, np.float32(expected), rtol=1e-5)


# ---------------------------------------------------------------- calls out of the IR


@T.prim_func
def extern_calls(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        B[i] = T.call_extern("float32", "expf", A[i])
    T.evaluate(T.call_extern("int32", "log_buffers", A.access_ptr("r", offset=4), B.data))
    T.evaluate(T.call_packed("tvm_callback", B.access_ptr("rw")))
    T.evaluate(T.tvm_fill_fragment(B.data, 16, 16, 16, 0, T.float32(0)))
    T.evaluate(T.call_extern("int32", "log_span", A.access_ptr("r", offset=2, extent=8)))


def test_external_calls_are_carried_and_printed_as_tvm_writes_them():
    text = assert_round_trip(extern_calls)
    assert 'T.call_extern("float32", "expf", A[i])' in text
    assert 'T.call_extern("int32", "log_buffers", A.access_ptr("r", offset=4), B.data)' in text
    assert 'T.call_packed("tvm_callback", B.access_ptr("rw"))' in text
    assert "T.tvm_fill_fragment(B.data, 16, 16, 16, 0, T.float32(0.0))" in text
    assert 'A.access_ptr("r", offset=2, extent=8)' in text  # TVM's extent= is carried
    pointers = []
    tir.functor.post_order_visit(
        extern_calls.body, lambda n: pointers.append(n) if isinstance(n, BufferPointer) else None
    )
    assert [(p.buffer.name, p.access) for p in pointers] == [
        ("A", "r"),
        ("B", ""),
        ("B", "rw"),
        ("B", ""),
        ("A", "r"),
    ]
    assert pointers[-1].extent.value == 8


def test_call_extern_takes_tvms_dtype_keyword_and_the_void_dtype():
    func = tir.parse(
        """
@T.prim_func
def main(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32")):
    T.evaluate(T.call_extern("call_impl", A.data, dtype=""))
    for i in range(8):
        B[i] = T.call_extern("sqrtf", B[i], dtype="float32")
"""
    )
    text = func.script()
    assert 'T.call_extern("int32", "call_impl", A.data)' in text
    assert 'T.call_extern("float32", "sqrtf", B[i])' in text
    tir.assert_structural_equal(tir.parse(text), func)


def test_the_executor_refuses_calls_out_of_the_ir_by_name():
    with pytest.raises(IRError, match="cannot run T.call_extern"):
        tir.interpret(extern_calls, random_floats(16), np.zeros(16, "float32"))


def test_opaque_intrinsics_keep_their_dtype():
    func = tir.parse(
        """
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    T.evaluate(T.tvm_mma_sync(A.data, 0, A.data, 0, A.data, 0, A.data, 0, dtype="int32"))
"""
    )
    (call,) = [func.body.value] if hasattr(func.body, "value") else []
    assert isinstance(call, Call) and call.op == "tvm_mma_sync" and call.dtype == "int32"
    assert 'dtype="int32"' in assert_round_trip(func)


def test_access_ptr_refuses_an_unknown_mask():
    with pytest.raises(ParseError, match='the access mask is "r", "w" or "rw"'):
        tir.parse(
            """
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    T.evaluate(T.call_extern("int32", "g", A.access_ptr("x")))
"""
        )


# ---------------------------------------------------------------- threads launched TVM's old way


@T.prim_func
def launched_threads(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4, 32), "float32")):
    bx = T.launch_thread("blockIdx.x", 4)
    tx = T.env_thread("threadIdx.x")
    with T.launch_thread(tx, 32):
        B[bx, tx] = A[bx, tx] + T.float32(1)


def test_launch_thread_and_env_thread_become_thread_bound_loops():
    outer = launched_threads.body
    assert (
        isinstance(outer, For) and outer.kind is ForKind.THREAD_BINDING and outer.thread_tag == "blockIdx.x"
    )
    assert outer.body.thread_tag == "threadIdx.x" and outer.body.extent.value == 32
    assert 'T.thread_binding(32, thread="threadIdx.x")' in assert_round_trip(launched_threads)
    a, b = random_floats(4, 32), np.zeros((4, 32), "float32")
    tir.interpret(launched_threads, a, b)
    np.testing.assert_allclose(b, a + 1, rtol=1e-6)


@T.prim_func
def launched_with_as(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4, 32), "float32")):
    bx = T.launch_thread("blockIdx.x", T.ceildiv(125, 32))
    with T.launch_thread("threadIdx.x", 32) as tx:
        B[bx, tx] = A[bx, tx] + T.float32(1)


def test_launch_thread_as_a_name_and_ceildiv():
    tir.assert_structural_equal(launched_with_as, launched_threads)
    a, b = random_floats(4, 32), np.zeros((4, 32), "float32")
    tir.interpret(launched_with_as, a, b)
    np.testing.assert_allclose(b, a + 1, rtol=1e-6)
    ceil = tir.parse(
        """
@T.prim_func
def f(A: T.Buffer((9,), "int32"), B: T.Buffer((9,), "int32")):
    for i in range(9):
        B[i] = T.ceildiv(A[i], 4)
"""
    )
    a, b = np.arange(-4, 5, dtype="int32"), np.zeros(9, "int32")
    tir.interpret(ceil, a, b)
    np.testing.assert_array_equal(b, -(-a // 4))


def test_launch_thread_needs_a_tag_or_an_env_thread():
    with pytest.raises(ParseError, match="takes a thread tag or a T.env_thread variable"):
        tir.parse(
            """
@T.prim_func
def f(A: T.Buffer((4,), "float32"), n: T.int32):
    with T.launch_thread(n, 4):
        A[0] = T.float32(1)
"""
        )


# ---------------------------------------------------------------- buffer layout keywords


@T.prim_func
def matched_with_layout(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (4, 8), "float32", align=128, offset_factor=1)
    B = T.match_buffer(b, (4, 8), "float32", strides=(8, 1), elem_offset=0)
    for i, j in T.grid(4, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.Cast("float32", A.elem_offset)


def test_match_buffer_keeps_strides_offset_factor_and_align():
    a_buffer, b_buffer = matched_with_layout.params
    assert (a_buffer.align, a_buffer.offset_factor) == (128, 1)
    assert a_buffer.elem_offset.name == "A_elem_offset"  # made for offset_factor, as in TVM
    assert [s.value for s in b_buffer.strides] == [8, 1] and b_buffer.elem_offset is None
    text = assert_round_trip(matched_with_layout)
    assert 'A: T.Buffer((4, 8), "float32", align=128, offset_factor=1)' in text
    assert 'T.Cast("float32", A.elem_offset)' in text
    a, b = random_floats(4, 8), np.zeros((4, 8), "float32")
    tir.interpret(matched_with_layout, a, b)  # an array starts at its first element: offset 0
    np.testing.assert_allclose(b, a, rtol=1e-6)


def test_layouts_take_part_in_structural_equality():
    def buffer_with(keywords: str) -> tir.PrimFunc:
        return tir.parse(
            f"""
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"{keywords})):
    A[0, 0] = T.float32(1)
"""
        )

    assert tir.structural_equal(buffer_with(", align=16"), buffer_with(", align=16"))
    assert not tir.structural_equal(buffer_with(", align=16"), buffer_with(", align=32"))
    assert not tir.structural_equal(buffer_with(", strides=(8, 1)"), buffer_with(""))
    assert tir.structural_equal(buffer_with(", elem_offset=0"), buffer_with(""))


def test_tvm_default_layout_keywords_spell_the_plain_buffer():
    # TVM prints `elem_offset=0, align=64, offset_factor=1` for a plain buffer: its defaults.
    tvm_spelling = tir.parse(
        """
@T.prim_func
def f(a: T.handle):
    A = T.match_buffer(a, (4, 8), elem_offset=0, align=64, offset_factor=1)
    A[0, 0] = T.float32(1)
"""
    )
    plain = tir.parse(
        """
@T.prim_func
def f(A: T.Buffer((4, 8), "float32")):
    A[0, 0] = T.float32(1)
"""
    )
    (buffer,) = tvm_spelling.params
    assert (buffer.elem_offset, buffer.align, buffer.offset_factor) == (None, 0, 0)
    tir.assert_structural_equal(tvm_spelling, plain)


def test_dtype_constants_evaluate_in_parameter_annotations():
    # Python evaluates annotations when it defines the function: T.int64(8) must be a value there.
    @T.prim_func
    def int64_shape(A: T.Buffer((T.int64(8),), "float32")):
        for i in range(T.int64(8)):
            with T.block("A"):
                vi = T.axis.spatial(T.int64(8), i)
                A[vi] = A[vi] * T.float32(2)

    (buffer,) = int64_shape.params
    assert buffer.shape[0].dtype == "int64" and buffer.shape[0].value == 8
    assert T.int64(8).dtype == "int64" and T.float32(0.5).value == 0.5
    a = random_floats(8)
    expected = a * 2
    tir.interpret(int64_shape, a)
    np.testing.assert_allclose(a, expected)


def test_tvm_node_spellings_name_hint_same_as_from_expr_with_attr():
    module = tir.IRModule.from_expr(matched_with_layout.with_attr("global_symbol", "main"))
    func = module["main"]
    assert func.attrs["global_symbol"] == "main" and "global_symbol" not in matched_with_layout.attrs
    blocks = []
    tir.post_order_visit(func.body, lambda node: blocks.append(node) if isinstance(node, tir.Block) else None)
    block = blocks[0]
    assert block.name_hint == block.name
    assert block.same_as(block) and not block.same_as(func.body)
    assert block.iter_vars[0].var.same_as(block.iter_vars[0].var) and func.same_as(module["main"])


def test_the_executor_refuses_a_strided_view():
    func = tir.parse(
        """
@T.prim_func
def f(A: T.Buffer((4, 8), "float32", strides=(16, 1)), B: T.Buffer((4, 8), "float32")):
    for i, j in T.grid(4, 8):
        B[i, j] = A[i, j]
"""
    )
    with pytest.raises(IRError, match="buffer A declares strides or an element offset"):
        tir.interpret(func, random_floats(4, 8), np.zeros((4, 8), "float32"))


def test_an_unknown_buffer_keyword_names_the_known_ones():
    with pytest.raises(ParseError, match="(?s)has no argument 'stride'.*strides, elem_offset"):
        tir.parse(
            """
@T.prim_func
def f(a: T.handle):
    A = T.match_buffer(a, (4,), "float32", stride=(1,))
    A[0] = T.float32(1)
"""
        )


# ---------------------------------------------------------------- blocks


@T.prim_func
def two_blocks_one_name(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = B[vi] * T.float32(2)


def test_two_blocks_may_share_a_name_as_in_tvm():
    assert assert_round_trip(two_blocks_one_name).count('T.block("B")') == 2
    a, b = random_floats(8), np.zeros(8, "float32")
    tir.interpret(two_blocks_one_name, a, b)
    np.testing.assert_allclose(b, a * 2, rtol=1e-6)


@T.prim_func
def running_sum(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.scan(16, i)
            T.reads(A[vi], B[vi - 1])
            T.writes(B[vi])
            B[vi] = T.if_then_else(vi > 0, B[vi - 1], T.float32(0)) + A[vi]


def test_axis_scan_is_an_ordered_iterator():
    (iter_var,) = running_sum.body.block.body.body.block.iter_vars
    assert iter_var.kind is IterKind.SCAN
    assert "vi = T.axis.scan(16, i)" in assert_round_trip(running_sum)
    a, b = random_floats(16), np.zeros(16, "float32")
    tir.interpret(running_sum, a, b)
    np.testing.assert_allclose(b, np.cumsum(a), rtol=1e-5)


@T.prim_func
def int64_everywhere(A: T.Buffer((T.int64(6), T.int64(4)), "float32"), B: T.Buffer((T.int64(6),), "float32")):
    for i, k in T.grid(T.int64(6), T.int64(4)):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


def test_int64_shapes_and_loop_variables():
    loop = int64_everywhere.body.block.body
    assert loop.loop_var.dtype == "int64" and int64_everywhere.params[0].shape[0].dtype == "int64"
    assert_round_trip(int64_everywhere)
    a, b = random_floats(6, 4), np.zeros(6, "float32")
    tir.interpret(int64_everywhere, a, b)
    np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def test_buffer_annotations_with_layout_keywords_evaluate_when_python_defines_the_function():
    @T.prim_func
    def separated(
        A: T.Buffer(shape=(4, 8), dtype="float32", axis_separators=(1,)), B: T.Buffer((4, 8), "float32")
    ):
        for i, j in T.grid(4, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]

    assert separated.params[0].axis_separators == (1,)


@T.prim_func
def _two_stages(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            B[vi] = A[vi]
    for i in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            A[vi] = B[vi]


def test_a_sequence_is_indexed_as_tvm_indexes_it():
    sequence = _two_stages.body.block.body
    assert sequence[1] is sequence.seq[1] and sequence[-1].body.block.name == "C"


# ---------------------------------------------------------------- T.match_buffer of a region


@T.prim_func
def window_through_a_view(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 4), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            pair = T.match_buffer(A[vi, vj * 2 : vj * 2 + 2], (2,), offset_factor=1)
            cell = T.match_buffer(B[vi, vj], (), "float32")
            cell[()] = pair[0] + pair[1] * T.float32(10)


@T.prim_func
def window_written_out(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 4), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj * 2] + A[vi, vj * 2 + 1] * T.float32(10)


def test_a_block_match_buffer_of_a_region_indexes_the_region():
    # Lowered as it is parsed (TVM's LowerMatchBuffer): the block reads A and writes B directly.
    tir.assert_structural_equal(window_through_a_view, window_written_out)
    block = window_through_a_view.body.block.body.body.body.block
    assert [r.buffer.name for r in block.reads] == ["A"] and [w.buffer.name for w in block.writes] == ["B"]
    a = random_floats(8, 8)
    b = np.zeros((8, 4), "float32")
    tir.interpret(window_through_a_view, a, b)
    np.testing.assert_allclose(b, a[:, 0::2] + a[:, 1::2] * 10, rtol=1e-6)


@pytest.mark.parametrize(
    ("match", "phrase"),
    [
        ("T.match_buffer(A[vi, 0:4], (3,))", r"extents \(1, 4\), which shape \(3\) does not match"),
        ('T.match_buffer(A[vi, 0:4], (4,), "int32")', "declares int32"),
        ("T.match_buffer(A[vi, 0:4], (4,), strides=(1,))", "takes no strides="),
    ],
)
def test_a_region_match_that_does_not_fit_its_region_is_refused(match, phrase):
    source = f"""
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            row = {match}
            B[vi] = row[0]
"""
    with pytest.raises(ParseError, match=phrase):
        tir.parse(source)


def test_call_extern_takes_tvms_dtype_keyword_spelling():
    @T.prim_func
    def keyword(A: T.Buffer((4,), "float32")):
        T.evaluate(T.call_extern("vec4add", A.data, 4, dtype="int32"))

    @T.prim_func
    def positional(A: T.Buffer((4,), "float32")):
        T.evaluate(T.call_extern("int32", "vec4add", A.data, 4))

    tir.assert_structural_equal(keyword, positional)
    assert 'T.call_extern("int32", "vec4add", A.data, 4)' in keyword.script()
