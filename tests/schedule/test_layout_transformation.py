"""transform_layout, transform_block_layout: expected scripts, numbers, traces, refused requests."""

from __future__ import annotations

import numpy as np
import pytest

import tir
from schedule import Schedule
from schedule.index_maps import BufferIndexError, IndexMapNotApplicableError
from schedule.layout_transformation import TransformationPaddingError, TransformBlockLayoutError
from tir import IndexMap, T

from .util import assert_fails_unchanged, assert_same_numbers, random_args, verify_trace_roundtrip

QUARTERS = IndexMap.from_func(lambda i: (i // 4, i % 4))

# ---------------------------------------------------------------- workloads


@T.prim_func
def scale_then_shift(A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
    B = T.alloc_buffer((32, 32))
    for i, j in T.grid(32, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for x, y in T.grid(32, 32):
        with T.block("C"):
            vx, vy = T.axis.remap("SS", [x, y])
            C[vx, vy] = B[vx, vy] + T.float32(1)


@T.prim_func
def scale_then_shift_tiled_b(A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
    B = T.alloc_buffer((2, 2, 16, 16))
    for i, j in T.grid(32, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi // 16, vj // 16, vi % 16, vj % 16] = A[vi, vj] * T.float32(2)
    for x, y in T.grid(32, 32):
        with T.block("C"):
            vx, vy = T.axis.remap("SS", [x, y])
            C[vx, vy] = B[vx // 16, vy // 16, vx % 16, vy % 16] + T.float32(1)


@T.prim_func
def scale_then_shift_tiled_a(A: T.Buffer((2, 2, 16, 16), "float32"), C: T.Buffer((32, 32), "float32")):
    B = T.alloc_buffer((32, 32))
    for i, j in T.grid(32, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi // 16, vj // 16, vi % 16, vj % 16] * T.float32(2)
    for x, y in T.grid(32, 32):
        with T.block("C"):
            vx, vy = T.axis.remap("SS", [x, y])
            C[vx, vy] = B[vx, vy] + T.float32(1)


@T.prim_func
def double14(A: T.Buffer((14,), "int32"), C: T.Buffer((14,), "int32")):
    B = T.alloc_buffer((14,), "int32")
    for i in range(14):
        with T.block("B"):
            vi = T.axis.spatial(14, i)
            B[vi] = A[vi] * 2
    for x in range(14):
        with T.block("C"):
            vx = T.axis.spatial(14, x)
            C[vx] = B[vx] + 1


@T.prim_func
def double14_padded(A: T.Buffer((14,), "int32"), C: T.Buffer((14,), "int32")):
    B = T.alloc_buffer((4, 4), "int32")
    for i in range(14):
        with T.block("B"):
            vi = T.axis.spatial(14, i)
            B[vi // 4, vi % 4] = A[vi] * 2
    for ax0, ax1 in T.grid(4, 4):
        with T.block("B_pad_B"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.where(ax0 == 3 and 2 <= ax1)  # noqa: SIM300 - the tail of the last row, as TVM writes it
            B[v0, v1] = 7
    for x in range(14):
        with T.block("C"):
            vx = T.axis.spatial(14, x)
            C[vx] = B[vx // 4, vx % 4] + 1


@T.prim_func
def double14_out(A: T.Buffer((14,), "float32"), B: T.Buffer((14,), "float32")):
    for i in range(14):
        with T.block("B"):
            vi = T.axis.spatial(14, i)
            B[vi] = A[vi] * T.float32(2)


@T.prim_func
def row_sum_opaque_loop(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = T.float32(0)
            for k in range(16):
                B[vi] = B[vi] + A[vi, k]


@T.prim_func
def sum_3d(A: T.Buffer((4, 6, 8), "float32"), B: T.Buffer((4, 6), "float32")):
    for i, j, k in T.grid(4, 6, 8):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                B[vi, vj] = T.float32(0)
            B[vi, vj] = B[vi, vj] + A[vi, vj, vk]


@T.prim_func
def sum_3d_fused(A: T.Buffer((4, 6, 8), "float32"), B: T.Buffer((4, 6), "float32")):
    for ax0, k in T.grid(24, 8):
        with T.block("B"):
            v0, vk = T.axis.remap("SR", [ax0, k])
            with T.init():
                B[v0 // 6, v0 % 6] = T.float32(0)
            B[v0 // 6, v0 % 6] = B[v0 // 6, v0 % 6] + A[v0 // 6, v0 % 6, vk]


@T.prim_func
def sum_3d_swapped(A: T.Buffer((4, 6, 8), "float32"), B: T.Buffer((4, 6), "float32")):
    for k, j, i in T.grid(8, 6, 4):
        with T.block("B"):
            vk, vj, vi = T.axis.remap("RSS", [k, j, i])
            with T.init():
                B[vi, vj] = T.float32(0)
            B[vi, vj] = B[vi, vj] + A[vi, vj, vk]


# ---------------------------------------------------------------- transform_layout


@pytest.mark.parametrize("by_name", [False, True])
def test_transform_layout_intermediate_buffer(by_name):
    sch = Schedule(scale_then_shift)
    tile = lambda i, j: (i // 16, j // 16, i % 16, j % 16)  # noqa: E731
    if by_name:
        sch.transform_layout(block="B", buffer="B", index_map=tile)
    else:
        sch.transform_layout(sch.get_block("B"), ("write", 0), tile)
    tir.assert_structural_equal(sch.mod["main"], scale_then_shift_tiled_b)
    verify_trace_roundtrip(sch, scale_then_shift)
    assert_same_numbers(scale_then_shift, sch.mod["main"])


def test_transform_layout_of_a_parameter_changes_the_signature():
    sch = Schedule(scale_then_shift)
    tile = IndexMap.from_func(lambda i, j: (i // 16, j // 16, i % 16, j % 16))
    sch.transform_layout(sch.get_block("B"), ("read", 0), tile)
    tir.assert_structural_equal(sch.mod["main"], scale_then_shift_tiled_a)
    verify_trace_roundtrip(sch, scale_then_shift)
    a, c = random_args(scale_then_shift)
    tiled = np.ascontiguousarray(a.reshape(2, 16, 2, 16).transpose(0, 2, 1, 3))
    c_after = np.zeros_like(c)
    tir.interpret(scale_then_shift, a, c)
    tir.interpret(sch.mod["main"], tiled, c_after)
    np.testing.assert_allclose(c_after, c, rtol=1e-6)


def test_transform_layout_with_pad_value_writes_the_padding():
    sch = Schedule(double14)
    sch.transform_layout("B", "B", lambda i: (i // 4, i % 4), pad_value=7)
    tir.assert_structural_equal(sch.mod["main"], double14_padded)
    verify_trace_roundtrip(sch, double14)
    assert_same_numbers(double14, sch.mod["main"])


def test_transform_layout_padding_of_an_output_holds_pad_value():
    sch = Schedule(double14_out)
    sch.transform_layout("B", "B", lambda i: (i // 4, i % 4), pad_value=-1.5)
    a = np.random.default_rng(3).random(14).astype("float32") + 0.5
    out = np.full((4, 4), np.nan, dtype="float32")
    tir.interpret(sch.mod["main"], a, out)
    np.testing.assert_allclose(out.reshape(-1)[:14], a * 2, rtol=1e-6)
    np.testing.assert_array_equal(out.reshape(-1)[14:], [-1.5, -1.5])


def test_transform_layout_assume_injective_leaves_padding_unwritten():
    sch = Schedule(double14)
    sch.transform_layout("B", "B", lambda i: (i // 4, i % 4), assume_injective_transform=True)
    assert sch.block_names() == ["B", "C"]
    assert [int(s) for s in sch.mod["main"].body.block.alloc_buffers[0].shape] == [4, 4]
    assert_same_numbers(double14, sch.mod["main"])
    verify_trace_roundtrip(sch, double14)


def test_transform_layout_maps_ranges_of_a_region():
    sch = Schedule(row_sum_opaque_loop)
    sch.transform_layout("B", "A", lambda i, j: (j // 4, i, j % 4))
    reads = {r.buffer.name: r for r in sch.get(sch.get_block("B")).reads}
    assert [int(s) for s in reads["A"].buffer.shape] == [4, 8, 4]
    assert [(str(r.min), str(r.extent)) for r in reads["A"].region] == [("0", "4"), ("vi", "1"), ("0", "4")]
    a, b = random_args(row_sum_opaque_loop)
    b_after = np.zeros_like(b)
    tir.interpret(row_sum_opaque_loop, a, b)
    tir.interpret(sch.mod["main"], np.ascontiguousarray(a.reshape(8, 4, 4).transpose(1, 0, 2)), b_after)
    np.testing.assert_allclose(b_after, b, rtol=1e-5)


def test_transform_layout_star_indices():
    sch = Schedule(sum_3d)
    sch.transform_layout("B", "A", lambda *rest, k: (*rest, k // 4, k % 4))
    assert [int(s) for s in sch.mod["main"].params[0].shape] == [4, 6, 2, 4]
    verify_trace_roundtrip(sch, sum_3d)


def test_transform_layout_identity_changes_nothing():
    sch = Schedule(scale_then_shift)
    sch.transform_layout("B", "B", lambda i, j: (i, j))
    tir.assert_structural_equal(sch.mod["main"], scale_then_shift)


@T.prim_func
def one_row_scaled(A: T.Buffer((1, 64), "float32"), C: T.Buffer((1, 64), "float32")):
    B = T.alloc_buffer((1, 64))
    for i, j in T.grid(1, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(1, 64):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


def test_transform_layout_keeps_iterators_of_extent_one():
    # B[vi, vj] stays B[vi, vj]: a unit iterator is not replaced by 0, as in TVM
    sch = Schedule(one_row_scaled)
    sch.transform_layout("B", "B", lambda i, j: (i, j))
    tir.assert_structural_equal(sch.mod["main"], one_row_scaled)


@T.prim_func
def one_row_scaled_swapped(A: T.Buffer((1, 64), "float32"), C: T.Buffer((1, 64), "float32")):
    B = T.alloc_buffer((1, 64))
    for j, i in T.grid(64, 1):
        with T.block("B"):
            vj, vi = T.axis.remap("SS", [j, i])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(1, 64):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


def test_transform_block_layout_permutes_an_iterator_of_extent_one():
    sch = Schedule(one_row_scaled)
    sch.transform_block_layout("B", lambda i, j: (j, i))
    tir.assert_structural_equal(sch.mod["main"], one_row_scaled_swapped)
    verify_trace_roundtrip(sch, one_row_scaled)
    assert_same_numbers(one_row_scaled, sch.mod["main"])


@T.prim_func
def scale_int64(
    A: T.Buffer((T.int64(8), T.int64(8)), "float32"), B: T.Buffer((T.int64(8), T.int64(8)), "float32")
):
    for i, j in T.grid(T.int64(8), T.int64(8)):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)


def test_transform_block_layout_of_int64_iterators_replays_from_its_python_trace():
    sch = Schedule(scale_int64)
    sch.transform_block_layout("B", lambda i, j: (i * 8 + j,))
    assert sch.trace.as_python().startswith("from tir import T\n")  # the map's text reads T.int64(8)
    verify_trace_roundtrip(sch, scale_int64)
    assert_same_numbers(scale_int64, sch.mod["main"])


def test_transform_layout_refuses_padding_without_pad_value():
    sch = Schedule(double14)
    block = sch.get_block("B")
    assert_fails_unchanged(
        sch, TransformationPaddingError, "requires padding", sch.transform_layout, block, "B", QUARTERS
    )


@pytest.mark.parametrize("pad_value", [0, tir.const(0, "int8")])
def test_transform_layout_refuses_pad_value_of_another_type(pad_value):
    sch = Schedule(double14_out)
    block = sch.get_block("B")
    assert_fails_unchanged(
        sch, TransformationPaddingError, "pad_value", sch.transform_layout, block, "B", QUARTERS, pad_value
    )


def test_transform_layout_refuses_padding_from_a_reader():
    sch = Schedule(double14)
    block = sch.get_block("C")
    assert_fails_unchanged(
        sch, TransformationPaddingError, "only reads", sch.transform_layout, block, "B", QUARTERS, 0
    )


@pytest.mark.parametrize(
    "index_map, phrase",
    [
        (lambda i, j: (i + j,), "not a one-to-one"),
        (lambda i, j: (i, i), "not a one-to-one"),
        (lambda i: (i,), "takes 1 indices"),
        (lambda i, j: (i, 2.5), "index expressions"),
    ],
)
def test_transform_layout_refuses_maps_that_are_not_bijective(index_map, phrase):
    sch = Schedule(scale_then_shift)
    block = sch.get_block("B")
    transform = sch.transform_layout
    assert_fails_unchanged(sch, IndexMapNotApplicableError, phrase, transform, block, "B", index_map)


@pytest.mark.parametrize("buffer", ["Z", ("read", 3), ("write", 1)])
def test_transform_layout_refuses_a_buffer_the_block_does_not_access(buffer):
    sch = Schedule(scale_then_shift)
    block = sch.get_block("B")
    swap = lambda i, j: (j, i)  # noqa: E731
    assert_fails_unchanged(sch, BufferIndexError, "block 'B'", sch.transform_layout, block, buffer, swap)


# ---------------------------------------------------------------- transform_block_layout


@pytest.mark.parametrize("by_name", [False, True])
def test_transform_block_layout_fuses_spatial_iterators(by_name):
    sch = Schedule(sum_3d)
    block = "B" if by_name else sch.get_block("B")
    sch.transform_block_layout(block, lambda i, j, k: (i * 6 + j, k))
    tir.assert_structural_equal(sch.mod["main"], sum_3d_fused)
    verify_trace_roundtrip(sch, sum_3d)
    assert_same_numbers(sum_3d, sch.mod["main"])


def test_transform_block_layout_permutes_iterators():
    sch = Schedule(sum_3d)
    sch.transform_block_layout(sch.get_block("B"), lambda i, j, k: (k, j, i))
    tir.assert_structural_equal(sch.mod["main"], sum_3d_swapped)
    verify_trace_roundtrip(sch, sum_3d)
    assert_same_numbers(sum_3d, sch.mod["main"])


@pytest.mark.parametrize(
    "index_map, phrase",
    [
        (lambda i, j, k: (i * 48 + j * 8 + k,), "mixes spatial and reduction"),
        (lambda i, j, k: (i + j, k), "not a one-to-one"),
        (lambda i, j: (i, j), "takes 2 indices"),
    ],
)
def test_transform_block_layout_refuses_bad_maps(index_map, phrase):
    sch = Schedule(sum_3d)
    block = sch.get_block("B")
    transform = sch.transform_block_layout
    assert_fails_unchanged(sch, IndexMapNotApplicableError, phrase, transform, block, index_map)


def test_transform_block_layout_refuses_split_loops():
    sch = Schedule(sum_3d)
    block = sch.get_block("B")
    sch.split(sch.get_loops(block)[0], [2, 2])
    transform = sch.transform_block_layout
    swap = "lambda i, j, k: (j, i, k)"
    assert_fails_unchanged(sch, TransformBlockLayoutError, "trivial bindings", transform, block, swap)


def test_transform_layout_reads_tvm_axis_separator_markers():
    # lambda i, j: [i, IndexMap.AXIS_SEPARATOR, j] keeps the layout and sets separators [1], as two
    # instructions (TVM records them so).
    sch = Schedule(scale_then_shift)
    sch.transform_layout("B", "B", lambda i, j: [i, IndexMap.AXIS_SEPARATOR, j])
    (buffer,) = [b for b in sch.mod["main"].body.block.alloc_buffers if b.name == "B"]
    assert buffer.axis_separators == (1,)
    assert [inst.kind for inst in sch.trace.insts][-2:] == ["transform_layout", "set_axis_separator"]
    verify_trace_roundtrip(sch, scale_then_shift)


def test_transform_layout_takes_te_axis_separator_and_refuses_a_pad_value_function():
    from tir import te

    sch = Schedule(scale_then_shift)
    sch.transform_layout("B", "B", lambda i, j: [i, te.AXIS_SEPARATOR, j])
    (buffer,) = [b for b in sch.mod["main"].body.block.alloc_buffers if b.name == "B"]
    assert buffer.axis_separators == (1,)
    other = tir.decl_buffer(1, "float32", name="other")  # TVM refuses pad values read from another buffer
    assert other.shape[0].value == 1 and other.name == "other"
    block = sch.get_block("C")
    assert_fails_unchanged(
        sch,
        TransformationPaddingError,
        "function",
        sch.transform_layout,
        block,
        "C",
        lambda i, j: (i // 3, j),
        pad_value=lambda i, j: other[0],
    )
