"""read_at, write_at: expected regions, numbers, trace round trips, refused requests."""

from __future__ import annotations

from schedule import Schedule
from schedule.read_write_at import StageAtError
from tir import T

from .util import assert_fails_unchanged, assert_same_numbers, verify_trace_roundtrip


@T.prim_func
def matmul(
    A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")
):
    for i, j, k in T.grid(32, 32, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def scale_then_shift(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
        with T.block("C"):
            vj = T.axis.spatial(16, i)
            C[vj] = B[vj] + T.float32(1)


@T.prim_func
def two_nests(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for j in range(16):
        with T.block("C"):
            vj = T.axis.spatial(16, j)
            C[vj] = B[vj] + T.float32(1)


@T.prim_func
def accumulate(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = B[vi] + A[vi]


def _gpu_tiled(sch: Schedule):
    """Blocks of 16x16 outputs, 4x4 threads of 4x4 each, k in steps of 8 (the seed GPU tiling)."""
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    bi, ti, ii = sch.split(i, [2, 4, 4])
    bj, tj, jj = sch.split(j, [2, 4, 4])
    ko, ki = sch.split(k, [4, 8])
    sch.reorder(bi, bj, ti, tj, ko, ki, ii, jj)
    sch.bind(bi, "blockIdx.y")
    sch.bind(bj, "blockIdx.x")
    sch.bind(ti, "threadIdx.y")
    sch.bind(tj, "threadIdx.x")
    return block, ko, tj


def test_read_at_shared_covers_the_threads_of_the_block():
    sch = Schedule(matmul)
    block, ko, _ = _gpu_tiled(sch)
    copy = sch.read_at(ko, block, 0, "shared")
    region = sch.get(copy).reads[0].region
    assert [int(r.extent) for r in region] == [16, 8]
    assert sch.get(copy).annotations == {"auto_copy": True}
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod["main"])


def test_read_at_both_operands_then_write_at_the_result():
    sch = Schedule(matmul)
    block, ko, tj = _gpu_tiled(sch)
    sch.read_at(ko, block, 0, "shared")
    sch.read_at(ko, block, 1, "shared")
    back = sch.write_at(tj, block, 0, "local")
    assert [int(r.extent) for r in sch.get(back).writes[0].region] == [4, 4]
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod["main"])


def test_read_at_refuses_a_buffer_another_block_under_the_loop_writes():
    sch = Schedule(scale_then_shift)
    block = sch.get_block("C")
    loop = sch.get_loops(block)[0]
    assert_fails_unchanged(sch, StageAtError, "touch it too", sch.read_at, loop, block, 0, "local")


def test_read_at_refuses_a_loop_that_is_not_around_the_block():
    sch = Schedule(two_nests)
    block = sch.get_block("C")
    other = sch.get_loops(sch.get_block("B"))[0]
    assert_fails_unchanged(sch, StageAtError, "not around", sch.read_at, other, block, 0, "local")


def test_write_at_refuses_a_block_reading_old_values():
    sch = Schedule(accumulate)
    block = sch.get_block("B")
    loop = sch.get_loops(block)[0]
    assert_fails_unchanged(sch, StageAtError, "old values", sch.write_at, loop, block, 0, "local")


def test_copies_staged_under_one_loop_keep_their_order_and_follow_the_buffer_dimensions():
    # As TVM: the second copy goes right before the statement holding the block, after the first;
    # B's copy moves along (ko, bj) for B[k, j], so its iterators come in that order.
    sch = Schedule(matmul)
    block, ko, _ = _gpu_tiled(sch)
    first = sch.read_at(ko, block, 0, "shared")
    second = sch.read_at(ko, block, 1, "shared")
    text = sch.mod["main"].script()
    assert text.index(f'T.block("{sch.get(first).name}")') < text.index(f'T.block("{sch.get(second).name}")')
    assert 'v0_1, v1_1 = T.axis.remap("SS", [k_0, j_0])' in text
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod["main"])
