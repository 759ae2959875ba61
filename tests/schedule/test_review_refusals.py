"""Requests the new primitives used to accept and turn into out-of-bounds or ill-formed programs:
each is now refused with the reason, and the schedule is left as it was."""

from __future__ import annotations

import tir
from schedule import Schedule
from schedule.blockize import NonSeparableBindingError
from schedule.index_maps import IndexMapNotApplicableError, IteratorOffsetError
from schedule.read_write_at import StageAtError
from schedule.tensorize import TensorizeLoopMismatchError
from tests.schedule.util import assert_fails_unchanged

SHIFTED_TILE = tir.parse(
    """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32", scope="metal.simdgroup"),
         B: T.Buffer((8, 8), "float32", scope="metal.simdgroup"),
         C: T.Buffer((8, 8), "float32", scope="metal.simdgroup")):
    with T.block("C_o"):
        for i in range(4, 12):
            for j in range(8):
                for k in range(8):
                    with T.block("C"):
                        vi = T.axis.spatial(8, i - 4)
                        vj, vk = T.axis.remap("SR", [j, k])
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""
)

ONE_LOOP_ROW_SUM = tir.parse(
    """
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((4,), "float32")):
    for f in range(16):
        with T.block("C"):
            vi = T.axis.spatial(4, f // 4)
            vk = T.axis.reduce(4, f % 4)
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]
"""
)

SCALE = tir.parse(
    """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[(vi * 3) % 16] * T.float32(2)
"""
)

STAGED = tir.parse(
    """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""
)


def test_tensorize_refuses_a_loop_that_does_not_start_where_the_intrinsics_does():
    sch = Schedule(SHIFTED_TILE)
    block = sch.get_block("C_o")
    assert_fails_unchanged(
        sch, TensorizeLoopMismatchError, "starts at 4", sch.tensorize, block, "metal_simdgroup_mma_8x8x8_f32"
    )


def test_blockize_refuses_a_loop_driving_both_a_spatial_and_a_reduction_iterator():
    sch = Schedule(ONE_LOOP_ROW_SUM)
    (loop,) = sch.get_loops(sch.get_block("C"))
    assert_fails_unchanged(sch, NonSeparableBindingError, "split that loop first", sch.blockize, loop)


def test_transform_layout_refuses_a_map_with_a_constant_offset():
    sch = Schedule(STAGED)
    block = sch.get_block("B")
    assert_fails_unchanged(
        sch,
        IndexMapNotApplicableError,
        "constant offset 1",
        sch.transform_layout,
        block,
        ("write", 0),
        lambda i, j: (i + 1, j),
    )


def test_reindex_and_cache_index_refuse_iterators_that_loop_partition_started_past_zero():
    sch = Schedule(SCALE)
    sch.loop_partition(sch.get_loops(sch.get_block("B"))[0], [12])
    tail = sch.get_block("B_i1")
    assert_fails_unchanged(sch, IteratorOffsetError, "not from 0", sch.reindex, tail, ("read", 0))
    assert_fails_unchanged(sch, IteratorOffsetError, "not from 0", sch.cache_index, tail, "global")


def test_read_at_refuses_a_predicated_tail_whose_region_per_iteration_is_symbolic():
    sch = Schedule(
        tir.parse(
            """
@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in range(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = A[vi] * T.float32(2)
"""
        )
    )
    block = sch.get_block("B")
    outer, _ = sch.split(sch.get_loops(block)[0], [3, 4])
    # the predicate i_0 * 4 + i_1 < 10 clips the index, leaving a last tile of 2 elements, not 4
    assert_fails_unchanged(sch, StageAtError, "symbolic extent", sch.read_at, outer, block, 0, "local")
