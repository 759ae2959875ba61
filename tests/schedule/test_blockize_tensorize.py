"""blockize and tensorize: expected scripts, trace round trips, numbers, and each kind of mismatch."""

# ruff: noqa: F821, F841, B007, E501  (script names only the parser resolves; unit iterators and loops a block
# ignores on purpose; scripts spelled as the printer prints them)

from __future__ import annotations

import pytest

import tir
from schedule import Schedule
from schedule.blockize import NonSeparableBindingError, NotSingleBlockError
from schedule.tensorize import (
    TensorIntrinNotFoundError,
    TensorizeAccessMismatchError,
    TensorizeBodyMismatchError,
    TensorizeBufferMismatchError,
    TensorizeIterMismatchError,
    TensorizeLoopMismatchError,
)
from tir import T
from tir.tensor_intrin import TensorIntrin

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip

# fmt: off
# ---------------------------------------------------------------- fixtures


@T.prim_func
def elementwise(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)


@T.prim_func
def elementwise_blockize_inner(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
    for i in range(128):
        with T.block("B_o"):
            vi = T.axis.spatial(128, i)
            vj_o = T.axis.spatial(1, 0)
            T.reads(A[vi, 0:128])
            T.writes(B[vi, 0:128])
            for j in range(128):
                with T.block("B"):
                    vj = T.axis.spatial(128, j)
                    B[vi, vj] = A[vi, vj] * T.float32(2)


@T.prim_func
def rowsum(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    for k, i in T.grid(16, 16):
        with T.block("B"):
            vk, vi = T.axis.remap("RS", [k, i])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def rowsum_blockize_k(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    with T.block("B_o"):
        vk_o = T.axis.reduce(1, 0)
        vi_o = T.axis.spatial(1, 0)
        T.reads(A[0:16, 0:16])
        T.writes(B[0:16])
        with T.init():
            for i_init in range(16):
                with T.block("B_init"):
                    vi_init = T.axis.spatial(16, i_init)
                    B[vi_init] = T.float32(0)
        for k, i in T.grid(16, 16):
            with T.block("B"):
                vk, vi = T.axis.remap("RS", [k, i])
                B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def two_blocks(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi]
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            A[vi] = B[vi]


@T.prim_func
def shifted(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i0, i1 in T.grid(4, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i0 * 3 + i1)
            B[vi] = A[vi]


def fragment_matmul(dtype="float32", scope="metal.simdgroup", n=32, transpose_b=False, op="+", init=False):
    """An n x n x n matmul over fragments (what the mma intrinsics match), built as a script."""
    b_access = "B[vj, vk]" if transpose_b else "B[vk, vj]"
    init_stmt = f"with T.init():\n                C[vi, vj] = T.{dtype}(0)" if init else ""
    return tir.parse(f"""
@T.prim_func
def main(A: T.Buffer(({n}, {n}), "{dtype}", scope="{scope}"), B: T.Buffer(({n}, {n}), "{dtype}", scope="{scope}"),
         C: T.Buffer(({n}, {n}), "{dtype}", scope="{scope}")):
    for i0, j0, k0, i1, j1, k1 in T.grid({n // 8}, {n // 8}, {n // 8}, 8, 8, 8):
        with T.block("C"):
            vi = T.axis.spatial({n}, i0 * 8 + i1)
            vj = T.axis.spatial({n}, j0 * 8 + j1)
            vk = T.axis.reduce({n}, k0 * 8 + k1)
            {init_stmt}
            C[vi, vj] = C[vi, vj] {op} A[vi, vk] * {b_access}
""")


@T.prim_func
def fragment_matmul_tensorized(A: T.Buffer((32, 32), "float32", scope="metal.simdgroup"),
                               B: T.Buffer((32, 32), "float32", scope="metal.simdgroup"),
                               C: T.Buffer((32, 32), "float32", scope="metal.simdgroup")):
    for i0, j0, k0 in T.grid(4, 4, 4):
        with T.block("C_o"):
            vi_o, vj_o, vk_o = T.axis.remap("SSR", [i0, j0, k0])
            T.reads(C[vi_o * 8:vi_o * 8 + 8, vj_o * 8:vj_o * 8 + 8], A[vi_o * 8:vi_o * 8 + 8, vk_o * 8:vk_o * 8 + 8],
                    B[vk_o * 8:vk_o * 8 + 8, vj_o * 8:vj_o * 8 + 8])
            T.writes(C[vi_o * 8:vi_o * 8 + 8, vj_o * 8:vj_o * 8 + 8])
            T.simdgroup_multiply_accumulate(C[vi_o * 8:vi_o * 8 + 8, vj_o * 8:vj_o * 8 + 8],
                                            A[vi_o * 8:vi_o * 8 + 8, vk_o * 8:vk_o * 8 + 8],
                                            B[vk_o * 8:vk_o * 8 + 8, vj_o * 8:vj_o * 8 + 8],
                                            C[vi_o * 8:vi_o * 8 + 8, vj_o * 8:vj_o * 8 + 8])
# fmt: on


# ---------------------------------------------------------------- blockize


def test_blockize_inner_loop():
    sch = Schedule(elementwise)
    _, j = sch.get_loops(sch.get_block("B"))
    outer = sch.blockize(j)
    assert sch.get(outer).name == "B_o"
    tir.assert_structural_equal(sch.mod["main"], elementwise_blockize_inner)
    verify_trace_roundtrip(sch, elementwise)
    assert_same_numbers(elementwise, sch.mod["main"])


def test_blockize_moves_the_init_out():
    sch = Schedule(rowsum)
    k, _ = sch.get_loops(sch.get_block("B"))
    sch.blockize(k)
    tir.assert_structural_equal(sch.mod["main"], rowsum_blockize_k)
    verify_trace_roundtrip(sch, rowsum)
    assert_same_numbers(rowsum, sch.mod["main"])


@pytest.mark.parametrize("preserve_unit_iters", [True, False])
def test_blockize_split_loops_computes_the_same(preserve_unit_iters):
    sch = Schedule(fragment_matmul())
    loops = sch.get_loops(sch.get_block("C"))
    sch.blockize(loops[3], preserve_unit_iters=preserve_unit_iters)
    verify_trace_roundtrip(sch, fragment_matmul())
    assert_same_numbers(fragment_matmul(), sch.mod["main"])


@T.prim_func
def one_tile_of_rows(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16, 64), "float32")):
    for i0, j0, i1, j1 in T.grid(1, 4, 16, 16):
        with T.block("B"):
            vi = T.axis.spatial(16, i0 * 16 + i1)
            vj = T.axis.spatial(64, j0 * 16 + j1)
            B[vi, vj] = A[vi, vj] + T.float32(1)


@T.prim_func
def one_tile_of_rows_blockized(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16, 64), "float32")):
    for i0, j0 in T.grid(1, 4):
        with T.block("B_o"):
            vi_o = T.axis.spatial(1, i0)
            vj_o = T.axis.spatial(4, j0)
            for i1, j1 in T.grid(16, 16):
                with T.block("B"):
                    vi_i, vj_i = T.axis.remap("SS", [i1, j1])
                    B[vi_i, vj_o * 16 + vj_i] = A[vi_i, vj_o * 16 + vj_i] + T.float32(1)


def test_blockize_drops_an_outer_iterator_of_one_value_from_the_inner_block():
    sch = Schedule(one_tile_of_rows)
    sch.blockize(sch.get_loops(sch.get_block("B"))[2])
    tir.assert_structural_equal(sch.mod["main"], one_tile_of_rows_blockized)
    assert_same_numbers(one_tile_of_rows, sch.mod["main"])


def test_blockize_of_two_blocks_fails_unchanged():
    sch = Schedule(two_blocks)
    (i,) = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(sch, NotSingleBlockError, "exactly one block", sch.blockize, i)


def test_blockize_of_an_overlapping_binding_fails_unchanged():
    sch = Schedule(shifted)
    _, i1 = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(
        sch, NonSeparableBindingError, "is not a multiple of the inner extent", sch.blockize, i1
    )


# ---------------------------------------------------------------- tensorize


def test_tensorize_loop_with_the_simdgroup_mma():
    sch = Schedule(fragment_matmul())
    loops = sch.get_loops(sch.get_block("C"))
    sch.tensorize(loops[3], "metal_simdgroup_mma_8x8x8_f32")
    tir.assert_structural_equal(sch.mod["main"], fragment_matmul_tensorized)
    verify_trace_roundtrip(sch, fragment_matmul())
    assert_same_numbers(fragment_matmul(), sch.mod["main"], rtol=1e-5, atol=1e-5)


def test_tensorize_a_blockized_block():
    sch = Schedule(fragment_matmul())
    outer = sch.blockize(sch.get_loops(sch.get_block("C"))[3])
    sch.tensorize(outer, "metal_simdgroup_mma_8x8x8_f32")
    tir.assert_structural_equal(sch.mod["main"], fragment_matmul_tensorized)
    verify_trace_roundtrip(sch, fragment_matmul())


def _tensorize_fails(func, intrin, error, phrase, loop_index=3):
    sch = Schedule(func)
    outer = sch.blockize(sch.get_loops(sch.get_block("C"))[loop_index])
    assert_fails_unchanged(sch, error, phrase, sch.tensorize, outer, intrin)


def test_tensorize_names_a_loop_of_another_extent():
    _tensorize_fails(
        fragment_matmul(),
        "metal_simdgroup_mma_8x8x8_f32",
        TensorizeLoopMismatchError,
        "it has 5 loops inside, the intrinsic 3",
        1,
    )


@T.prim_func
def row_reduce(
    A: T.Buffer((8, 8), "float32", scope="metal.simdgroup"),
    B: T.Buffer((8, 8), "float32", scope="metal.simdgroup"),
):
    for i, k in T.grid(8, 8):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            B[vi, 0] = B[vi, 0] + A[vi, vk]


def test_tensorize_names_an_iterator_of_another_kind():
    _tensorize_fails(
        row_reduce,
        "metal_simdgroup_load_8x8_f32_shared",
        TensorizeIterMismatchError,
        "iterator vk (intrinsic: vj) is reduce, not spatial",
        0,
    )


def test_tensorize_names_a_buffer_of_another_dtype():
    _tensorize_fails(
        fragment_matmul(),
        "metal_simdgroup_mma_8x8x8_f16",
        TensorizeBufferMismatchError,
        "buffer C (intrinsic: C) has dtype float32, the intrinsic needs float16",
    )


def test_tensorize_names_a_buffer_in_another_scope():
    _tensorize_fails(
        fragment_matmul(scope="global"),
        "metal_simdgroup_mma_8x8x8_f32",
        TensorizeBufferMismatchError,
        "is in scope 'global', the intrinsic needs 'metal.simdgroup'",
    )


def test_tensorize_names_an_access_that_does_not_follow_the_intrinsic():
    _tensorize_fails(
        fragment_matmul(transpose_b=True),
        "metal_simdgroup_mma_8x8x8_f32",
        TensorizeAccessMismatchError,
        "the offset",
    )


def test_tensorize_names_another_computation():
    _tensorize_fails(
        fragment_matmul(op="-"),
        "metal_simdgroup_mma_8x8x8_f32",
        TensorizeBodyMismatchError,
        "where the intrinsic computes",
    )


def test_tensorize_asks_for_decompose_reduction_when_the_block_has_an_init():
    sch = Schedule(fragment_matmul(n=8, init=True))
    outer = sch.blockize(sch.get_loops(sch.get_block("C"))[3])
    assert_fails_unchanged(
        sch,
        TensorizeBodyMismatchError,
        "decompose_reduction first",
        sch.tensorize,
        outer,
        "metal_simdgroup_mma_8x8x8_f32",
    )


def test_tensorize_with_an_unknown_intrinsic_lists_the_known_ones():
    sch = Schedule(fragment_matmul())
    err = assert_fails_unchanged(
        sch,
        TensorIntrinNotFoundError,
        "no tensor intrinsic 'mma_9x9'",
        sch.tensorize,
        sch.get_loops(sch.get_block("C"))[3],
        "mma_9x9",
    )
    assert "metal_simdgroup_mma_8x8x8_f32" in str(err)


def test_looking_up_an_unknown_intrinsic_raises_or_gives_none_when_allowed():
    from tir.tensor_intrin import TensorIntrin

    assert TensorIntrin.get("mma_9x9", allow_missing=True) is None
    with pytest.raises(ValueError, match="no tensor intrinsic 'mma_9x9'"):  # TVM's error class
        TensorIntrin.get("mma_9x9")
    with pytest.raises(KeyError, match="no tensor intrinsic 'mma_9x9'"):
        TensorIntrin.get("mma_9x9")


# fmt: off
@T.prim_func
def batched_fragment_matmul(A: T.Buffer((2, 8, 8), "float32", scope="metal.simdgroup"),
                            B: T.Buffer((2, 8, 8), "float32", scope="metal.simdgroup"),
                            C: T.Buffer((2, 8, 8), "float32", scope="metal.simdgroup")):
    for b, i, j, k in T.grid(2, 8, 8, 8):
        with T.block("C"):
            vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
            C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[vb, vk, vj]


@T.prim_func
def batched_fragment_matmul_tensorized(A: T.Buffer((2, 8, 8), "float32", scope="metal.simdgroup"),
                                       B: T.Buffer((2, 8, 8), "float32", scope="metal.simdgroup"),
                                       C: T.Buffer((2, 8, 8), "float32", scope="metal.simdgroup")):
    for b in range(2):
        with T.block("C_o"):
            vb = T.axis.spatial(2, b)
            vi_o = T.axis.spatial(1, 0)
            vj_o = T.axis.spatial(1, 0)
            vk_o = T.axis.reduce(1, 0)
            T.reads(C[vb, 0:8, 0:8], A[vb, 0:8, 0:8], B[vb, 0:8, 0:8])
            T.writes(C[vb, 0:8, 0:8])
            T.simdgroup_multiply_accumulate(C[vb, 0:8, 0:8], A[vb, 0:8, 0:8], B[vb, 0:8, 0:8], C[vb, 0:8, 0:8])


@T.prim_func
def diagonal_batch_matmul(A: T.Buffer((8, 8, 8), "float32", scope="metal.simdgroup"),
                          B: T.Buffer((8, 8, 8), "float32", scope="metal.simdgroup"),
                          C: T.Buffer((8, 8, 8), "float32", scope="metal.simdgroup")):
    for b, i, j, k in T.grid(1, 8, 8, 8):
        with T.block("C"):
            vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
            C[vi, vi, vj] = C[vi, vi, vj] + A[vb, vi, vk] * B[vb, vk, vj]
# fmt: on


def test_tensorize_keeps_a_leading_batch_index_of_its_buffers():
    sch = Schedule(batched_fragment_matmul)
    sch.tensorize(sch.get_loops(sch.get_block("C"))[1], "metal_simdgroup_mma_8x8x8_f32")
    tir.assert_structural_equal(sch.mod["main"], batched_fragment_matmul_tensorized)
    verify_trace_roundtrip(sch, batched_fragment_matmul)
    assert_same_numbers(batched_fragment_matmul, sch.mod["main"], rtol=1e-5, atol=1e-5)


def test_tensorize_names_a_leading_index_that_moves_with_the_tile():
    sch = Schedule(diagonal_batch_matmul)
    outer = sch.blockize(sch.get_loops(sch.get_block("C"))[1])
    assert_fails_unchanged(
        sch,
        TensorizeAccessMismatchError,
        "is not fixed",
        sch.tensorize,
        outer,
        "metal_simdgroup_mma_8x8x8_f32",
    )


# ---------------------------------------------------------------- TensorIntrin


def test_register_and_get_a_tensor_intrinsic():
    known = TensorIntrin.get("metal_simdgroup_mma_8x8x8_f32")
    with pytest.raises(ValueError, match="already registered; pass override=True"):
        TensorIntrin.register(known.name, known.desc, known.impl)
    again = TensorIntrin.register("test_mma_copy", known.desc, known.impl)
    assert TensorIntrin.get("test_mma_copy") is again
    assert TensorIntrin.register("test_mma_copy", known.desc, known.impl, override=True) is not again


def test_register_rejects_desc_and_impl_over_different_buffers():
    mma = TensorIntrin.get("metal_simdgroup_mma_8x8x8_f32")
    fill = TensorIntrin.get("metal_simdgroup_fill_8x8_f32")
    with pytest.raises(ValueError, match="desc and impl must take the same number of buffers"):
        TensorIntrin.register("test_bad", mma.desc, fill.impl)
    half = TensorIntrin.get("metal_simdgroup_mma_8x8x8_f16")
    with pytest.raises(ValueError, match="buffer 0 differs between desc"):
        TensorIntrin.register("test_bad", mma.desc, half.impl)


def test_get_of_an_unknown_name_lists_the_known_ones():
    with pytest.raises(KeyError, match="registered: .*wmma_sync_16x16x16_f16f32"):
        TensorIntrin.get("nope")
