"""annotate_buffer_access: the declared region in the script, kept by region inference, sizing the
compacted buffer, computing right on C, replaying from its trace, and refused requests."""

from __future__ import annotations

import numpy as np
import pytest

import tir
from codegen import build
from schedule import Schedule
from schedule.buffer_access import BufferAccessRangeError
from schedule.index_maps import BufferIndexError, IndexMapNotApplicableError
from tests.schedule.util import (
    assert_fails_unchanged,
    assert_same_numbers,
    random_args,
    verify_trace_roundtrip,
)
from tir import T
from tir.analysis.block_access import infer_access_regions
from tir.transform.compact_buffer_allocation import compact_buffer_allocation
from tir.transform.plan_buffer_allocation import plan_buffer_allocation


@T.prim_func
def staged(A: T.Buffer((32,), "float32"), C: T.Buffer((32,), "float32")):
    B = T.alloc_buffer((32,))
    for i in range(32):
        with T.block("B"):
            vi = T.axis.spatial(32, i)
            B[vi] = A[vi] * T.float32(3)
    for i in range(32):
        with T.block("C"):
            vi = T.axis.spatial(32, i)
            C[vi] = B[vi] - T.float32(1)


@T.prim_func
def matmul(A: T.Buffer((8, 6), "float32"), B: T.Buffer((6, 4), "float32"), C: T.Buffer((8, 4), "float32")):
    for i, j, k in T.grid(8, 4, 6):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def _tiled(declare: bool) -> Schedule:
    """B computed per 8-element tile of C; with ``declare``, C reads a 10-element window per tile."""
    sch = Schedule(staged)
    outer, _ = sch.split(sch.get_loops(sch.get_block("C"))[0], [4, 8])
    sch.compute_at(sch.get_block("B"), outer)
    if declare:
        sch.annotate_buffer_access(sch.get_block("B"), 0, "write", lambda vi: ((vi, vi + 3),))
    return sch


def _compacted_extent(sch: Schedule) -> int:
    compacted = compact_buffer_allocation(plan_buffer_allocation(sch.mod.main_function()))
    found = []
    tir.post_order_visit(
        compacted.body,
        lambda n: (
            found.extend(b for b in n.alloc_buffers if b.name == "B") if isinstance(n, tir.Block) else None
        ),
    )
    return found[0].shape[0].value


def test_declared_read_region_is_printed_and_annotated():
    sch = Schedule(matmul)
    sch.annotate_buffer_access("C", 1, "read", lambda vi, vj, vk: ((vk, vk + 2), (0, 4)))
    block = sch.get(sch.get_block("C"))
    assert [(str(r.min), str(r.extent)) for r in block.reads[1].region] == [("vk", "2"), ("0", "4")]
    assert block.annotations == {"explicit_read_region": [1]}
    assert "T.reads(A[vi, vk], B[vk:vk + 2, 0:4])" in sch.mod["main"].script()
    verify_trace_roundtrip(sch, matmul)
    assert_same_numbers(matmul, sch.mod["main"])


def test_single_index_means_one_element_and_annotating_twice_keeps_one_index():
    sch = Schedule(matmul)
    sch.annotate_buffer_access("C", 0, "read", lambda vi, vj, vk: (vi, (0, 6)))
    sch.annotate_buffer_access("C", 0, "read", lambda vi, vj, vk: (vi, (vk, vk + 1)))
    block = sch.get(sch.get_block("C"))
    assert [(str(r.min), str(r.extent)) for r in block.reads[0].region] == [("vi", "1"), ("vk", "1")]
    assert block.annotations == {"explicit_read_region": [0]}
    verify_trace_roundtrip(sch, matmul)


def test_region_inference_keeps_the_declared_region():
    sch = Schedule(matmul)
    sch.annotate_buffer_access("C", 1, "read", lambda vi, vj, vk: ((vk, vk + 2), (0, 4)))
    block = sch.get(sch.get_block("C"))
    reads, writes = infer_access_regions(block)
    tir.assert_structural_equal(reads[1], block.reads[1])
    tir.assert_structural_equal(writes[0], block.writes[0])
    assert str(reads[0].region[1].extent) == "1"  # A's region is still inferred


def test_larger_declared_write_region_grows_the_compacted_buffer_and_computes_right():
    assert _compacted_extent(_tiled(declare=False)) == 8
    sch = _tiled(declare=True)
    assert _compacted_extent(sch) == 10  # the last element of a tile declares two more
    verify_trace_roundtrip(sch, staged)
    assert_same_numbers(staged, sch.mod["main"])
    args = random_args(staged, seed=3)
    expected = args[0] * np.float32(3) - np.float32(1)
    build(sch.mod, "c")["main"](*args)
    np.testing.assert_allclose(args[1], expected, rtol=1e-6)


def test_a_declared_region_smaller_than_the_body_never_shrinks_the_buffer():
    # Declaring element 0 where the body writes 8 a tile: TVM would allocate 1 element and write
    # past it; the compacted buffer still holds what the body touches, and the C build computes right.
    sch = Schedule(staged)
    outer, _ = sch.split(sch.get_loops(sch.get_block("C"))[0], [4, 8])
    sch.compute_at(sch.get_block("B"), outer)
    sch.annotate_buffer_access(sch.get_block("B"), 0, "write", lambda vi: ((0, 1),))
    sch.annotate_buffer_access(sch.get_block("C"), 0, "read", lambda vi: ((0, 1),))
    assert _compacted_extent(sch) >= 8
    args = random_args(staged, seed=4)
    expected = args[0] * np.float32(3) - np.float32(1)
    build(sch.mod, "c")["main"](*args)
    np.testing.assert_allclose(args[1], expected, rtol=1e-6)


def test_declared_region_survives_compute_at_region_inference():
    sch = Schedule(staged)
    sch.annotate_buffer_access("B", 0, "write", lambda vi: ((vi, vi + 3),))
    outer, _ = sch.split(sch.get_loops(sch.get_block("C"))[0], [4, 8])
    sch.compute_at(sch.get_block("B"), outer)
    assert _compacted_extent(sch) == 10
    assert_same_numbers(staged, sch.mod["main"])


@pytest.mark.parametrize(
    ("index", "kind", "error", "phrase"),
    [
        (2, "read", BufferIndexError, "is out of range"),
        (-1, "write", BufferIndexError, "is out of range"),
        (0, "store", BufferIndexError, "'read' or 'write'"),
    ],
)
def test_refuses_a_bad_buffer_index_or_type(index, kind, error, phrase):
    sch = Schedule(matmul)
    block = sch.get_block("C")
    assert_fails_unchanged(
        sch, error, phrase, sch.annotate_buffer_access, block, index, kind, lambda vi, vj, vk: (vi, vk)
    )


def test_refuses_ranges_of_the_wrong_rank_or_arity():
    sch = Schedule(matmul)
    block = sch.get_block("C")
    assert_fails_unchanged(
        sch,
        BufferAccessRangeError,
        "2 dimension",
        sch.annotate_buffer_access,
        block,
        0,
        "read",
        lambda vi, vj, vk: (vi,),
    )
    assert_fails_unchanged(
        sch,
        IndexMapNotApplicableError,
        "takes 2 indices",
        sch.annotate_buffer_access,
        block,
        0,
        "read",
        "lambda a, b: (a, a + 1, b, b + 1)",
    )
