"""cache_read, cache_write, set_scope: expected scripts, trace round trips, same numbers, refused requests."""

from __future__ import annotations

import tir
from schedule import Schedule
from schedule.cache_read_write import (
    ConsumerBlockError,
    NonAllocatedBufferError,
    NotSingleWriteBlockError,
    PartialWriteError,
    StorageScopeError,
)
from schedule.errors import ArgumentError
from schedule.index_maps import BufferIndexError
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip

# ---------------------------------------------------------------- workloads


@T.prim_func
def elementwise(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def elementwise_cache_read_input(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    A_shared = T.alloc_buffer((16, 16), scope="shared")
    for ax0, ax1 in T.grid(16, 16):
        with T.block("A_shared"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            A_shared[v0, v1] = A[v0, v1]
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A_shared[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def elementwise_cache_read_intermediate(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    B_local = T.alloc_buffer((16, 16), scope="local")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for ax0, ax1 in T.grid(16, 16):
        with T.block("B_local"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            B_local[v0, v1] = B[v0, v1]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B_local[vi, vj] + T.float32(1)


@T.prim_func
def elementwise_cache_write_output(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    C_local = T.alloc_buffer((16, 16), scope="local")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C_local[vi, vj] = B[vi, vj] + T.float32(1)
    for ax0, ax1 in T.grid(16, 16):
        with T.block("C_local"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            C[v0, v1] = C_local[v0, v1]


@T.prim_func
def elementwise_cache_write_intermediate(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    B_shared = T.alloc_buffer((16, 16), scope="shared")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B_shared[vi, vj] = A[vi, vj] * T.float32(2)
    for ax0, ax1 in T.grid(16, 16):
        with T.block("B_shared"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            B[v0, v1] = B_shared[v0, v1]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def elementwise_cache_write_consumer(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    B_shared = T.alloc_buffer((16, 16), scope="shared")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B_shared[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B_shared[vi, vj] + T.float32(1)
    for ax0, ax1 in T.grid(16, 16):
        with T.block("B_shared"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            B[v0, v1] = B_shared[v0, v1]


@T.prim_func
def elementwise_set_scope(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B_shared = T.alloc_buffer((16, 16), scope="shared")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B_shared[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B_shared[vi, vj] + T.float32(1)


@T.prim_func
def two_readers(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] + A[vi]


@T.prim_func
def two_readers_cache_read_consumer(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    A_local = T.alloc_buffer((16,), scope="local")
    for ax0 in range(16):
        with T.block("A_local"):
            v0 = T.axis.spatial(16, ax0)
            A_local[v0] = A[v0]
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] + A_local[vi]


@T.prim_func
def matmul(
    A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")
):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_cache_write_local(
    A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")
):
    C_local = T.alloc_buffer((16, 16), scope="local")
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C_local[vi, vj])
            with T.init():
                C_local[vi, vj] = T.float32(0)
            C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
    for ax0, ax1 in T.grid(16, 16):
        with T.block("C_local"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            C[v0, v1] = C_local[v0, v1]


@T.prim_func
def two_writers(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B_even"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi]
    for i in range(16):
        with T.block("B_odd"):
            vi = T.axis.spatial(16, i)
            B[vi] = B[vi] + A[vi]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] * T.float32(2)


# ---------------------------------------------------------------- cache_read


def test_cache_read_input_goes_first_in_scope():
    sch = Schedule(elementwise)
    cache = sch.cache_read(sch.get_block("B"), 0, "shared")
    assert sch.get(cache).name == "A_shared"
    tir.assert_structural_equal(sch.mod["main"], elementwise_cache_read_input)
    verify_trace_roundtrip(sch, elementwise)
    assert_same_numbers(elementwise, sch.mod)


def test_cache_read_intermediate_goes_after_its_writer():
    sch = Schedule(elementwise)
    sch.cache_read(sch.get_block("C"), 0, "local")
    tir.assert_structural_equal(sch.mod["main"], elementwise_cache_read_intermediate)
    verify_trace_roundtrip(sch, elementwise)
    assert_same_numbers(elementwise, sch.mod)


def test_cache_read_only_for_the_given_consumers():
    sch = Schedule(two_readers)
    c = sch.get_block("C")
    sch.cache_read(c, 1, "local", consumer_blocks=[c])
    tir.assert_structural_equal(sch.mod["main"], two_readers_cache_read_consumer)
    verify_trace_roundtrip(sch, two_readers)
    assert_same_numbers(two_readers, sch.mod)


def test_cache_read_consumers_may_be_named():
    by_name = Schedule(two_readers)
    by_name.cache_read("C", 1, "local", consumer_blocks=["C"])
    tir.assert_structural_equal(by_name.mod["main"], two_readers_cache_read_consumer)
    verify_trace_roundtrip(by_name, two_readers)
    assert_same_numbers(two_readers, by_name.mod)


def test_cache_write_consumers_may_be_named():
    sch = Schedule(elementwise)
    sch.cache_write("B", 0, "shared", consumer_blocks=["C"])
    tir.assert_structural_equal(sch.mod["main"], elementwise_cache_write_consumer)
    verify_trace_roundtrip(sch, elementwise)
    assert_same_numbers(elementwise, sch.mod)


def test_cache_read_threadgroup_is_stored_as_shared():
    sch = Schedule(elementwise)
    sch.cache_read(sch.get_block("B"), 0, "threadgroup")
    tir.assert_structural_equal(sch.mod["main"], elementwise_cache_read_input)
    root = sch.mod["main"].body.block
    assert [(b.name, b.scope) for b in root.alloc_buffers] == [("B", "global"), ("A_shared", "shared")]
    assert sch.trace.as_json()["insts"][-1]["args"]["storage_scope"] == "threadgroup"
    verify_trace_roundtrip(sch, elementwise)


def test_cache_read_twice_gets_unique_names():
    sch = Schedule(two_readers)
    b, c = sch.get_block("B"), sch.get_block("C")
    first = sch.cache_read(b, 0, "shared", consumer_blocks=[b])
    second = sch.cache_read(c, 1, "shared", consumer_blocks=[c])
    assert (sch.get(first).name, sch.get(second).name) == ("A_shared", "A_shared_1")
    allocs = [buf.name for buf in sch.mod["main"].body.block.alloc_buffers]
    assert allocs == ["B", "A_shared", "A_shared_1"]
    verify_trace_roundtrip(sch, two_readers)
    assert_same_numbers(two_readers, sch.mod)


# ---------------------------------------------------------------- cache_write


def test_cache_write_output_writes_back_at_the_end():
    sch = Schedule(elementwise)
    write_back = sch.cache_write(sch.get_block("C"), 0, "local")
    assert sch.get(write_back).name == "C_local"
    tir.assert_structural_equal(sch.mod["main"], elementwise_cache_write_output)
    verify_trace_roundtrip(sch, elementwise)
    assert_same_numbers(elementwise, sch.mod)


def test_cache_write_intermediate_writes_back_before_the_reader():
    sch = Schedule(elementwise)
    sch.cache_write(sch.get_block("B"), 0, "shared")
    tir.assert_structural_equal(sch.mod["main"], elementwise_cache_write_intermediate)
    verify_trace_roundtrip(sch, elementwise)
    assert_same_numbers(elementwise, sch.mod)


def test_cache_write_consumers_read_the_cache():
    sch = Schedule(elementwise)
    sch.cache_write(sch.get_block("B"), 0, "shared", consumer_blocks=[sch.get_block("C")])
    tir.assert_structural_equal(sch.mod["main"], elementwise_cache_write_consumer)
    verify_trace_roundtrip(sch, elementwise)
    assert_same_numbers(elementwise, sch.mod)


def test_cache_write_reduction_rewrites_init_and_update():
    sch = Schedule(matmul)
    sch.cache_write(sch.get_block("C"), 0, "local")
    tir.assert_structural_equal(sch.mod["main"], matmul_cache_write_local)
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod, rtol=1e-4)


# ---------------------------------------------------------------- set_scope


def test_set_scope_renames_and_moves_the_buffer():
    sch = Schedule(elementwise)
    sch.set_scope(sch.get_block("B"), 0, "shared")
    tir.assert_structural_equal(sch.mod["main"], elementwise_set_scope)
    verify_trace_roundtrip(sch, elementwise)
    assert_same_numbers(elementwise, sch.mod)


def test_set_scope_to_the_same_scope_changes_nothing():
    sch = Schedule(elementwise_set_scope)
    block = sch.get_block("B")
    before = sch.mod
    sch.set_scope(block, 0, "threadgroup")
    assert sch.mod is before


# ---------------------------------------------------------------- refused requests


def test_cache_read_unknown_scope_lists_the_scopes():
    sch = Schedule(elementwise)
    err = assert_fails_unchanged(
        sch,
        StorageScopeError,
        "unknown storage scope 'texture'",
        sch.cache_read,
        sch.get_block("B"),
        0,
        "texture",
    )
    assert "'global', 'shared', 'local'" in str(err) and "threadgroup" in str(err)


def test_cache_write_unknown_scope():
    sch = Schedule(elementwise)
    assert_fails_unchanged(
        sch, StorageScopeError, "'texture'", sch.cache_write, sch.get_block("B"), 0, "texture"
    )


def test_set_scope_unknown_scope():
    sch = Schedule(elementwise)
    assert_fails_unchanged(
        sch, StorageScopeError, "'register'", sch.set_scope, sch.get_block("B"), 0, "register"
    )


def test_cache_read_index_out_of_range_lists_the_reads():
    sch = Schedule(elementwise)
    err = assert_fails_unchanged(
        sch,
        BufferIndexError,
        "read_buffer_index 3 is out of range",
        sch.cache_read,
        sch.get_block("C"),
        3,
        "shared",
    )
    assert "[0] B[" in str(err)


def test_cache_write_index_out_of_range():
    sch = Schedule(elementwise)
    assert_fails_unchanged(
        sch,
        BufferIndexError,
        "write_buffer_index 1 is out of range",
        sch.cache_write,
        sch.get_block("B"),
        1,
        "local",
    )


def test_set_scope_index_out_of_range():
    sch = Schedule(elementwise)
    assert_fails_unchanged(
        sch,
        BufferIndexError,
        "buffer_index -1 is out of range",
        sch.set_scope,
        sch.get_block("B"),
        -1,
        "shared",
    )


def test_cache_read_index_must_be_an_int_or_a_buffer_name():
    sch = Schedule(elementwise)
    assert_fails_unchanged(
        sch, ArgumentError, "must be an int", sch.cache_read, sch.get_block("B"), 0.5, "shared"
    )
    assert_fails_unchanged(
        sch, BufferIndexError, "no buffer of that name", sch.cache_read, sch.get_block("B"), "Z", "shared"
    )


def test_buffers_and_blocks_given_by_name_schedule_as_their_handles_do():
    by_handle = Schedule(elementwise)
    by_handle.cache_read(by_handle.get_block("B"), 0, "shared")
    by_name = Schedule(elementwise)
    by_name.cache_read("B", "A", "shared")
    tir.assert_structural_equal(by_name.mod, by_handle.mod)
    verify_trace_roundtrip(by_name, elementwise)


def test_cache_read_of_a_buffer_with_two_writers():
    sch = Schedule(two_writers)
    assert_fails_unchanged(
        sch, NotSingleWriteBlockError, "written by 2 blocks", sch.cache_read, sch.get_block("C"), 0, "shared"
    )


def test_cache_write_of_a_buffer_with_two_writers():
    sch = Schedule(two_writers)
    assert_fails_unchanged(
        sch, NotSingleWriteBlockError, "B_even, B_odd", sch.cache_write, sch.get_block("B_odd"), 0, "local"
    )


def test_cache_read_consumer_that_does_not_read_the_buffer():
    sch = Schedule(two_readers)
    assert_fails_unchanged(
        sch,
        ConsumerBlockError,
        "consumer block B does not read B",
        sch.cache_read,
        sch.get_block("C"),
        0,
        "shared",
        consumer_blocks=[sch.get_block("B")],
    )


def test_cache_read_with_a_loop_handle_instead_of_a_block():
    sch = Schedule(elementwise)
    (i, _j) = sch.get_loops(sch.get_block("B"))
    assert_fails_unchanged(sch, ArgumentError, "needs a block handle", sch.cache_read, i, 0, "shared")


def test_set_scope_of_a_parameter():
    sch = Schedule(elementwise)
    assert_fails_unchanged(
        sch,
        NonAllocatedBufferError,
        "C written by block C is a parameter",
        sch.set_scope,
        sch.get_block("C"),
        0,
        "local",
    )


# ---------------------------------------------------------------- cache_write of partial writes


@T.prim_func
def two_corners(A: T.Buffer((12, 24), "float32"), C: T.Buffer((12, 24), "float32")):
    # "top" fills rows 0-7, "left" columns 0-15: the 4x8 corner past both keeps C's old values.
    for i, j in T.grid(12, 24):
        with T.block("outer"):
            vi, vj = T.axis.remap("SS", [i, j])
            with T.block("top"):
                T.where(vi < 8)
                C[vi, vj] = A[vi, vj] * T.float32(2)
            with T.block("left"):
                T.where(vj < 16)
                C[vi, vj] = A[vi, vj] * T.float32(3)


@T.prim_func
def two_corners_cache_write(A: T.Buffer((12, 24), "float32"), C: T.Buffer((12, 24), "float32")):
    C_local = T.alloc_buffer((12, 24), scope="local")
    for i, j in T.grid(12, 24):
        with T.block("outer"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(C_local[vi, vj])
            with T.block("top"):
                T.where(vi < 8)
                T.reads(A[vi, vj])
                T.writes(C_local[vi, vj])
                C_local[vi, vj] = A[vi, vj] * T.float32(2)
            with T.block("left"):
                T.where(vj < 16)
                T.reads(A[vi, vj])
                T.writes(C_local[vi, vj])
                C_local[vi, vj] = A[vi, vj] * T.float32(3)
    for ax0, ax1 in T.grid(12, 24):
        with T.block("C_local"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(C_local[v0, v1])
            T.writes(C[v0, v1])
            if v0 < 8 or v1 < 16:
                C[v0, v1] = C_local[v0, v1]


@T.prim_func
def upper_triangle(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            if vi <= vj:
                B[vi, vj] = A[vi, vj] + T.float32(1)


@T.prim_func
def tile_with_inner_guard(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(4):
        with T.block("tile"):
            vi = T.axis.spatial(4, i)
            for x in range(4):
                with T.block("B"):
                    T.where(x < 3)
                    vx = T.axis.spatial(16, vi * 4 + x)
                    B[vx] = A[vx] + T.float32(1)


def test_cache_write_copies_back_only_what_the_nested_blocks_wrote():
    sch = Schedule(two_corners)
    sch.cache_write(sch.get_block("outer"), 0, "local")
    tir.assert_structural_equal(sch.mod["main"], two_corners_cache_write)
    assert_same_numbers(two_corners, sch.mod)
    verify_trace_roundtrip(sch, two_corners)


def test_cache_write_of_an_if_guarded_store_keeps_the_guard_through_reverse_compute_at():
    sch = Schedule(upper_triangle)
    write_back = sch.cache_write(sch.get_block("B"), 0, "local")
    assert "if v0 <= v1:" in sch.mod["main"].script()
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.reverse_compute_at(write_back, i)
    assert_same_numbers(upper_triangle, sch.mod)
    verify_trace_roundtrip(sch, upper_triangle)


def test_cache_write_refuses_a_guard_it_cannot_restate():
    # The guard x < 3 is on a loop inside the tile: no condition on B's index says which were written.
    sch = Schedule(tile_with_inner_guard)
    assert_fails_unchanged(
        sch, PartialWriteError, "only when x < 3", sch.cache_write, sch.get_block("tile"), 0, "local"
    )


def test_cache_write_of_the_nested_block_itself_applies():
    sch = Schedule(tile_with_inner_guard)
    sch.cache_write(sch.get_block("B"), 0, "local")
    assert_same_numbers(tile_with_inner_guard, sch.mod)


@T.prim_func
def even_elements(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi * 2] = A[vi * 2] + T.float32(1)


def test_cache_write_refuses_a_strided_write():
    # A write-back of B[0:15] would copy the odd elements, which nobody wrote.
    sch = Schedule(even_elements)
    assert_fails_unchanged(
        sch, PartialWriteError, "with stride 2", sch.cache_write, sch.get_block("B"), 0, "local"
    )


@T.prim_func
def fused_tail(A: T.Buffer((60,), "float32"), B: T.Buffer((60,), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            v = T.axis.spatial(60, i * 8 + j)
            T.where(i * 8 + j < 60)
            B[v] = A[v] * T.float32(2)


@T.prim_func
def fused_tail_cached(A: T.Buffer((60,), "float32"), B: T.Buffer((60,), "float32")):
    B_local = T.alloc_buffer((60,), scope="local")
    for i, j in T.grid(8, 8):
        with T.block("B"):
            v = T.axis.spatial(60, i * 8 + j)
            T.where(i * 8 + j < 60)
            B_local[v] = A[v] * T.float32(2)
    for ax0 in range(60):
        with T.block("B_local"):
            v0 = T.axis.spatial(60, ax0)
            B[v0] = B_local[v0]


@T.prim_func
def fused_tail_with_row(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8, 64), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            r = T.axis.spatial(8, i)
            v = T.axis.spatial(64, i * 8 + j)
            T.where(i * 8 + j < 60)
            B[r, v] = A[r, v] * T.float32(2)


def test_cache_write_under_a_predicate_on_its_index_writes_back_exactly_that_range():
    sch = Schedule(fused_tail)
    sch.cache_write(sch.get_block("B"), 0, "local")
    tir.assert_structural_equal(sch.mod["main"], fused_tail_cached)
    verify_trace_roundtrip(sch, fused_tail)
    assert_same_numbers(fused_tail, sch.mod)


def test_cache_write_keeps_refusing_a_predicate_on_an_index_that_shares_loops_with_another():
    # clipping axis 1 to < 60 alone would still copy back B[7, 0:56], which no iteration writes
    sch = Schedule(fused_tail_with_row)
    block = sch.get_block("B")
    assert_fails_unchanged(sch, PartialWriteError, "i * 8 + j < 60", sch.cache_write, block, 0, "local")


@T.prim_func
def read_then_overwrite(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("use"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("overwrite"):
            vi = T.axis.spatial(16, i)
            A[vi] = T.float32(7)


@T.prim_func
def read_then_overwrite_cached(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    A_local = T.alloc_buffer((16,), scope="local")
    for ax0 in range(16):
        with T.block("A_local"):
            v0 = T.axis.spatial(16, ax0)
            A_local[v0] = A[v0]
    for i in range(16):
        with T.block("use"):
            vi = T.axis.spatial(16, i)
            C[vi] = A_local[vi] * T.float32(2)
    for i in range(16):
        with T.block("overwrite"):
            vi = T.axis.spatial(16, i)
            A[vi] = T.float32(7)


@T.prim_func
def read_overwrite_read(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("first"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi]
    for i in range(16):
        with T.block("overwrite"):
            vi = T.axis.spatial(16, i)
            A[vi] = T.float32(7)
    for i in range(16):
        with T.block("second"):
            vi = T.axis.spatial(16, i)
            C[vi] = C[vi] + A[vi]


def test_cache_read_of_a_buffer_read_before_its_writer_copies_the_value_on_entry():
    sch = Schedule(read_then_overwrite)
    sch.cache_read(sch.get_block("use"), 0, "local")
    tir.assert_structural_equal(sch.mod["main"], read_then_overwrite_cached)
    verify_trace_roundtrip(sch, read_then_overwrite)
    assert_same_numbers(read_then_overwrite, sch.mod)


def test_cache_read_refuses_readers_on_both_sides_of_the_writer():
    sch = Schedule(read_overwrite_read)
    first = sch.get_block("first")
    assert_fails_unchanged(
        sch, ConsumerBlockError, "before block overwrite writes it", sch.cache_read, first, 0, "local"
    )
    sch.cache_read(first, 0, "local", consumer_blocks=[first])
    assert_same_numbers(read_overwrite_read, sch.mod)


@T.prim_func
def read_then_overwrite_in_one_loop(A: T.Buffer((17,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("use"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi] * T.float32(2)
        with T.block("overwrite"):
            vi = T.axis.spatial(16, i)
            A[vi + 1] = C[vi] + T.float32(1)


def test_cache_read_of_a_reader_in_a_loop_with_the_writer_is_refused():
    """Iteration i + 1 of "use" reads the A[i + 1] that "overwrite" wrote in iteration i: a copy of A
    made once on entry would hand it the old value (15 of 17 elements wrong)."""
    sch = Schedule(read_then_overwrite_in_one_loop)
    assert_fails_unchanged(
        sch,
        ConsumerBlockError,
        "in a loop around block overwrite",
        sch.cache_read,
        sch.get_block("use"),
        0,
        "local",
    )
