"""reindex: expected scripts, numbers, trace round trips, refused requests."""

from __future__ import annotations

import pytest

import tir
from schedule import Schedule
from schedule.index_maps import BufferIndexError
from schedule.reindex import ReindexAccessError, ReindexBlockError
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip

# ---------------------------------------------------------------- workloads


@T.prim_func
def transpose_scale(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32, 16), "float32")):
    for i, j in T.grid(32, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi] * T.float32(2)


@T.prim_func
def transpose_scale_reindex_read(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32, 16), "float32")):
    A_reindex = T.alloc_buffer((32, 16))
    for ax0, ax1 in T.grid(32, 16):
        with T.block("A_reindex"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            A_reindex[v0, v1] = A[v1, v0]
    for i, j in T.grid(32, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A_reindex[vi, vj] * T.float32(2)


@T.prim_func
def matmul(
    A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 12), "float32"), C: T.Buffer((16, 12), "float32")
):
    for i, j, k in T.grid(16, 12, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_reindex_write(
    A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 12), "float32"), C: T.Buffer((16, 12), "float32")
):
    C_reindex = T.alloc_buffer((16, 12))
    for i, j, k in T.grid(16, 12, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C_reindex[vi, vj])
            with T.init():
                C_reindex[vi, vj] = T.float32(0)
            C_reindex[vi, vj] = C_reindex[vi, vj] + A[vi, vk] * B[vk, vj]
    for ax0, ax1 in T.grid(16, 12):
        with T.block("C_reindex"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            C[v0, v1] = C_reindex[v0, v1]


@T.prim_func
def conv1d(A: T.Buffer((18,), "float32"), W: T.Buffer((3, 4), "float32"), B: T.Buffer((8, 4), "float32")):
    for i, c, r in T.grid(8, 4, 3):
        with T.block("B"):
            vi, vc, vr = T.axis.remap("SSR", [i, c, r])
            with T.init():
                B[vi, vc] = T.float32(0)
            B[vi, vc] = B[vi, vc] + A[vi * 2 + vr + vc // 4] * W[vr, vc]


@T.prim_func
def two_patterns(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi] + A[vi, vj]


@T.prim_func
def accumulate_without_init(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = B[vi] + A[vi]


# ---------------------------------------------------------------- reindex


@pytest.mark.parametrize("by_name", [False, True])
def test_reindex_read_of_a_transposed_access(by_name):
    sch = Schedule(transpose_scale)
    block = "B" if by_name else sch.get_block("B")
    copy = sch.reindex(block, "A" if by_name else ("read", 0))
    assert sch.get(copy).name == "A_reindex"
    tir.assert_structural_equal(sch.mod["main"], transpose_scale_reindex_read)
    verify_trace_roundtrip(sch, transpose_scale)
    assert_same_numbers(transpose_scale, sch.mod["main"])


def test_reindex_write_of_a_reduction():
    sch = Schedule(matmul)
    sch.reindex(sch.get_block("C"), ("write", 0))
    tir.assert_structural_equal(sch.mod["main"], matmul_reindex_write)
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod["main"])


def test_reindex_window_read_drops_iterators_the_access_does_not_use():
    sch = Schedule(conv1d)
    sch.reindex(sch.get_block("B"), "A")
    reindexed = sch.mod["main"].body.block.alloc_buffers[0]
    assert (reindexed.name, [int(s) for s in reindexed.shape]) == ("A_reindex", [8, 3])
    verify_trace_roundtrip(sch, conv1d)
    assert_same_numbers(conv1d, sch.mod["main"])


def test_reindex_then_transform_layout_of_the_copy():
    sch = Schedule(matmul)
    sch.reindex(sch.get_block("C"), ("read", 1))
    sch.transform_layout(sch.get_block("C"), "B_reindex", lambda k, j: (j, k))
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod["main"])


def test_reindex_refuses_two_access_patterns():
    sch = Schedule(two_patterns)
    block = sch.get_block("B")
    assert_fails_unchanged(sch, ReindexAccessError, "2 different index patterns", sch.reindex, block, "A")


def test_reindex_refuses_a_write_that_reads_old_values():
    sch = Schedule(accumulate_without_init)
    block = sch.get_block("B")
    assert_fails_unchanged(sch, ReindexAccessError, "old values", sch.reindex, block, ("write", 0))


def test_reindex_refuses_a_read_of_a_written_buffer():
    sch = Schedule(accumulate_without_init)
    block = sch.get_block("B")
    assert_fails_unchanged(sch, ReindexAccessError, "writes it too", sch.reindex, block, ("read", 0))


def test_reindex_refuses_a_write_under_a_predicate():
    sch = Schedule(transpose_scale)
    block = sch.get_block("B")
    sch.split(sch.get_loops(block)[0], [None, 5])
    assert_fails_unchanged(sch, ReindexBlockError, "never wrote", sch.reindex, block, ("write", 0))


def test_reindex_refuses_a_buffer_the_block_does_not_access():
    sch = Schedule(transpose_scale)
    block = sch.get_block("B")
    assert_fails_unchanged(sch, BufferIndexError, "neither reads nor writes", sch.reindex, block, "Q")


# ---------------------------------------------------------------- reindex_cache_read / reindex_cache_write


def test_reindex_cache_read_packs_the_operand():
    sch = Schedule(matmul)
    copy = sch.reindex_cache_read("C", 1, "shared", lambda i, j, k: (j // 4, k, j % 4))
    stage = sch.get(copy)
    assert (stage.name, [int(n) for n in stage.writes[0].buffer.shape]) == ("B_shared", [3, 8, 4])
    assert stage.writes[0].buffer.scope == "shared"
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod["main"])


def test_reindex_cache_read_then_compute_at():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    copy = sch.reindex_cache_read(block, 0, "local", lambda i, j, k: (k, i))
    sch.compute_at(copy, sch.get_loops(block)[0])
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod["main"])


def test_reindex_cache_write_transposes_the_result():
    sch = Schedule(matmul)
    copy = sch.reindex_cache_write(sch.get_block("C"), 0, "local", lambda i, j, k: (j, i))
    assert [int(n) for n in sch.get(copy).reads[0].buffer.shape] == [12, 16]
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod["main"])


@pytest.mark.parametrize(
    "index_map, phrase",
    [
        (lambda i, j, k: (i, j, k), "does not"),
        (lambda i, j, k: (i // 2,), "not a one-to-one"),
        (lambda i, j: (i,), "takes 2 indices"),
    ],
)
def test_reindex_cache_read_refuses_bad_maps(index_map, phrase):
    from schedule.index_maps import IndexMapNotApplicableError

    sch = Schedule(matmul)
    block = sch.get_block("C")
    assert_fails_unchanged(
        sch, IndexMapNotApplicableError, phrase, sch.reindex_cache_read, block, 0, "shared", index_map
    )


def test_reindex_cache_read_refuses_an_unknown_scope():
    from schedule.cache_stage import StorageScopeError

    sch = Schedule(matmul)
    block = sch.get_block("C")
    swap = "lambda i, j, k: (k, i)"
    assert_fails_unchanged(
        sch, StorageScopeError, "'texture'", sch.reindex_cache_read, block, 0, "texture", swap
    )


@T.prim_func
def guarded_shift(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            T.where(i < 15)
            B[vi] = A[vi + 1]


def test_reindex_refuses_a_read_its_predicate_keeps_in_bounds():
    sch = Schedule(guarded_shift)
    block = sch.get_block("B")
    assert_fails_unchanged(sch, ReindexAccessError, "may leave [0, 16)", sch.reindex, block, "A")


@T.prim_func
def dot_into_one_element(
    A: T.Buffer((1, 24), "float32"), B: T.Buffer((24, 1), "float32"), C: T.Buffer((1, 1), "float32")
):
    for i0, i1, i2 in T.grid(1, 1, 24):
        with T.block("dot"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            with T.init():
                C[i, j] = T.float32(0)
            C[i, j] = C[i, j] + A[i, k] * B[k, j]


def test_reindex_of_unit_iterators_keeps_them_as_tvm_does():
    # TVM stages C[i, j] through C_reindex[i, j] (1 x 1) even though i and j take one value.
    sch = Schedule(dot_into_one_element)
    sch.reindex(sch.get_block("dot"), ("write", 0))
    text = sch.mod["main"].script()
    assert "C_reindex[i, j] = C_reindex[i, j] + A[i, k] * B[k, j]" in text
    assert "C_reindex = T.alloc_buffer((1, 1))" in text
    verify_trace_roundtrip(sch, dot_into_one_element)
    assert_same_numbers(dot_into_one_element, sch.mod)


@T.prim_func
def rows_of_int64_count(A: T.Buffer((T.int64(3), 16), "float32"), B: T.Buffer((T.int64(3), 16), "float32")):
    for r, c in T.grid(T.int64(3), 16):
        with T.block("B"):
            vr = T.axis.spatial(T.int64(3), r)
            vc = T.axis.spatial(16, c)
            B[vr, vc] = A[vr, vc] + T.float32(1)


def test_reindex_buffer_axes_keep_the_dtype_of_their_index():
    sch = Schedule(rows_of_int64_count)
    sch.reindex(sch.get_block("B"), ("write", 0))
    (new,) = sch.mod["main"].body.block.alloc_buffers
    assert [s.dtype for s in new.shape] == ["int64", "int32"]
    assert_same_numbers(rows_of_int64_count, sch.mod)


@T.prim_func
def produce_and_use_per_row(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32")):
    B = T.alloc_buffer((8, 16))
    for i in range(8):
        for j in range(16):
            with T.block("produce"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(16):
            with T.block("use"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)


def test_reindex_cache_read_refuses_a_writer_in_the_same_loop_nest():
    # the copy would go before the whole `for i` nest, where "produce" has not written B yet
    sch = Schedule(produce_and_use_per_row)
    use = sch.get_block("use")
    stage = sch.reindex_cache_read
    assert_fails_unchanged(
        sch,
        ReindexBlockError,
        "block 'produce' writes B in the same loop nest",
        stage,
        use,
        0,
        "shared",
        lambda i, j: (j, i),
    )
    assert_fails_unchanged(
        sch, ReindexBlockError, "writes B in the same loop nest", sch.reindex, use, ("read", 0)
    )
