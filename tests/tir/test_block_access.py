"""Read/write region inference of blocks built by hand from IR nodes."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from tir import Block, BlockRealize, Buffer, BufferStore, For, ForKind, IterKind, IterVar, Range, Var, const
from tir.analysis.block_access import infer_access_regions, region_of
from tir.arith import Analyzer
from tir.expr import BufferPointer, Call, Min, Ramp
from tir.stmt import Evaluate, IfThenElse, seq

from .test_arith import evaluate


def dom(n: int) -> Range:
    return Range.from_min_extent(0, n)


def spatial(var: Var, n: int) -> IterVar:
    return IterVar(var, dom(n), IterKind.SPATIAL)


def loop(var: Var, n: int, body, start: int = 0) -> For:
    return For(var, const(start), const(n), ForKind.SERIAL, body)


def block(name, iter_vars, body, init=None, alloc_buffers=()) -> Block:
    return Block(name, tuple(iter_vars), (), (), body, init=init, alloc_buffers=tuple(alloc_buffers))


def regions_text(regions) -> list[str]:
    """``A[lo:hi, ...]`` with ``hi`` simplified, so the expected strings read naturally."""
    simplify = Analyzer().simplify
    return [
        r.buffer.name + "[" + ", ".join(f"{d.min!r}:{simplify(d.min + d.extent)!r}" for d in r.region) + "]"
        for r in regions
    ]


def test_reduction_block_reads_inputs_and_writes_accumulator():
    A, B, C = (Buffer(n, (64, 64)) for n in "ABC")
    vi, vj, vk = Var("vi"), Var("vj"), Var("vk")
    body = BufferStore(C, C[vi, vj] + A[vi, vk] * B[vk, vj], (vi, vj))
    init = BufferStore(C, const(0.0), (vi, vj))
    iters = [spatial(vi, 64), spatial(vj, 64), IterVar(vk, dom(64), IterKind.REDUCE)]
    reads, writes = infer_access_regions(block("C", iters, body, init=init))
    # As TVM prints it: the accumulator of a block with T.init is a write only.
    assert regions_text(reads) == ["A[vi:vi + 1, vk:vk + 1]", "B[vk:vk + 1, vj:vj + 1]"]
    assert regions_text(writes) == ["C[vi:vi + 1, vj:vj + 1]"]
    assert reads[0].buffer is A and writes[0].buffer is C


def test_read_modify_write_without_init_reads_and_writes():
    A, C = Buffer("A", (64,)), Buffer("C", (64,))
    vi = Var("vi")
    body = BufferStore(C, C[vi] + A[vi], (vi,))
    reads, writes = infer_access_regions(block("C", [spatial(vi, 64)], body))
    assert regions_text(reads) == ["C[vi:vi + 1]", "A[vi:vi + 1]"]
    assert regions_text(writes) == ["C[vi:vi + 1]"]


def test_window_sum_is_one_hull_per_buffer():
    A, B = Buffer("A", (1026,)), Buffer("B", (1024,))
    vi = Var("vi")
    body = BufferStore(B, A[vi] + A[vi + 1] + A[vi + 2], (vi,))
    reads, writes = infer_access_regions(block("B", [spatial(vi, 1024)], body))
    assert regions_text(reads) == ["A[vi:vi + 3]"]
    assert regions_text(writes) == ["B[vi:vi + 1]"]
    assert reads[0].region[0].min is vi
    assert reads[0].region[0].extent.value == 3


def test_loops_inside_the_block_are_relaxed():
    A, B = Buffer("A", (1030,)), Buffer("B", (1024,))
    vi, i1 = Var("vi"), Var("i1")
    body = loop(i1, 128, BufferStore(B, A[vi * 128 + i1] + A[vi * 128 + i1 + 2], (vi * 128 + i1,)))
    reads, writes = infer_access_regions(block("B", [spatial(vi, 8)], body))
    assert regions_text(reads) == ["A[vi * 128:vi * 128 + 130]"]
    assert regions_text(writes) == ["B[vi * 128:vi * 128 + 128]"]


def test_matmul_tile_relaxed_over_inner_loops():
    A, C = Buffer("A", (512, 512)), Buffer("C", (512, 512))
    v0, k0, i1, i2, k1 = Var("v0"), Var("k0"), Var("i1"), Var("i2"), Var("k1")
    row = v0 * 64 + i1 * 8 + i2
    store = BufferStore(C, C[row, 0] + A[row, k0 * 8 + k1], (row, const(0)))
    body = loop(i1, 8, loop(i2, 8, loop(k1, 8, store)))
    reads, writes = infer_access_regions(block("T", [spatial(v0, 8), spatial(k0, 64)], body))
    assert regions_text(reads) == [
        "C[v0 * 64:v0 * 64 + 64, 0:1]",
        "A[v0 * 64:v0 * 64 + 64, k0 * 8:k0 * 8 + 8]",
    ]
    assert regions_text(writes) == ["C[v0 * 64:v0 * 64 + 64, 0:1]"]


def test_nested_block_iterators_are_replaced_by_their_bindings():
    # The compute_at shape: an outer block over i_0 holding a loop over i_1 and a
    # block whose iterator is bound to i_0 * 128 + i_1.
    A, B = Buffer("A", (1026,)), Buffer("B", (1024,))
    v0, i1, vi = Var("v0"), Var("i1"), Var("vi")
    inner = block("B", [spatial(vi, 1024)], BufferStore(B, A[vi] + A[vi + 1] + A[vi + 2], (vi,)))
    realize = BlockRealize((v0 * 128 + i1,), const(True), inner)
    reads, writes = infer_access_regions(block("outer", [spatial(v0, 8)], loop(i1, 128, realize)))
    assert regions_text(reads) == ["A[v0 * 128:v0 * 128 + 130]"]
    assert regions_text(writes) == ["B[v0 * 128:v0 * 128 + 128]"]


def test_allocated_buffers_are_excluded_here_and_in_nested_blocks():
    A, B = Buffer("A", (16,)), Buffer("B", (16,))
    tmp, local = Buffer("tmp", (16,), scope="shared"), Buffer("acc", (1,), scope="local")
    vi, i, vj = Var("vi"), Var("i"), Var("vj")
    inner = block(
        "inner",
        [spatial(vj, 16)],
        seq(BufferStore(local, tmp[vj] * 2.0, (const(0),)), BufferStore(B, local[0], (vj,))),
        alloc_buffers=[local],
    )
    body = seq(
        loop(i, 16, BufferStore(tmp, A[i], (i,))),
        loop(i, 16, BlockRealize((i,), const(True), inner)),
    )
    reads, writes = infer_access_regions(block("outer", [spatial(vi, 1)], body, alloc_buffers=[tmp]))
    assert regions_text(reads) == ["A[0:16]"]
    assert regions_text(writes) == ["B[0:16]"]


def test_loads_in_conditions_and_indices_are_reads():
    A, B, M = Buffer("A", (32,)), Buffer("B", (32,)), Buffer("M", (32,))
    idx = Buffer("idx", (32,), dtype="int32")
    vi = Var("vi")
    body = IfThenElse(M[vi] > 0.0, BufferStore(B, A[idx[vi]], (vi,)))
    reads, writes = infer_access_regions(block("g", [spatial(vi, 32)], body))
    # As in TVM, a gathered index nothing relaxes is a (data-dependent) point.
    assert regions_text(reads) == ["M[vi:vi + 1]", "idx[vi:vi + 1]", "A[idx[vi]:idx[vi] + 1]"]
    assert regions_text(writes) == ["B[vi:vi + 1]"]


def test_gather_inside_a_relaxed_loop_covers_the_buffer():
    A, B, idx = Buffer("A", (32,)), Buffer("B", (4,)), Buffer("idx", (8,), dtype="int32")
    vi, k = Var("vi"), Var("k")
    body = loop(k, 8, BufferStore(B, B[vi] + A[idx[k]], (vi,)))
    reads, _ = infer_access_regions(block("g", [spatial(vi, 4)], body))
    assert regions_text(reads) == ["B[vi:vi + 1]", "idx[0:8]", "A[0:32]"]


def test_split_and_fused_indices_simplify_through_block_ranges():
    A, B = Buffer("A", (64,)), Buffer("B", (8, 8))
    vf, j = Var("vf"), Var("j")
    body = loop(j, 8, BufferStore(B, A[vf // 8 * 8 + j], (vf // 8, j)))
    reads, writes = infer_access_regions(block("b", [spatial(vf, 64)], body))
    assert regions_text(reads) == ["A[vf // 8 * 8:vf // 8 * 8 + 8]"]
    assert regions_text(writes) == ["B[vf // 8:vf // 8 + 1, 0:8]"]


def test_vector_index_covers_every_lane():
    A, B = Buffer("A", (64,)), Buffer("B", (64,))
    vi = Var("vi")
    body = BufferStore(B, A[Ramp(vi * 4, const(1), 4)], (Ramp(vi * 4, const(1), 4),))
    reads, writes = infer_access_regions(block("v", [spatial(vi, 16)], body))
    assert regions_text(reads) == ["A[vi * 4:vi * 4 + 4]"]
    assert regions_text(writes) == ["B[vi * 4:vi * 4 + 4]"]


def test_loop_with_offset_and_region_of_helper():
    A = Buffer("A", (40,))
    vi, k = Var("vi"), Var("k")
    body = loop(k, 5, BufferStore(A, A[vi * 4 + k], (vi * 4 + k - 2,)), start=2)
    reads, writes = infer_access_regions(block("s", [spatial(vi, 8)], body))
    assert regions_text(reads) == ["A[vi * 4 + 2:vi * 4 + 7]"]
    assert regions_text(writes) == ["A[vi * 4:vi * 4 + 5]"]
    i0, ax0 = Var("i_0"), Var("ax0")
    (rng,) = region_of([i0 * 128 + ax0], {ax0: Range.from_min_extent(0, 130)})
    assert repr(rng.min) == "i_0 * 128" and rng.extent.value == 130


def test_unit_iterators_stay_named_and_unit_loops_vanish():
    A, B = Buffer("A", (4, 8)), Buffer("B", (4, 8))
    vi, vj, k = Var("vi"), Var("vj"), Var("k")
    body = loop(k, 1, BufferStore(B, A[vi, vj + k], (vi, vj)))
    reads, writes = infer_access_regions(block("u", [spatial(vi, 1), spatial(vj, 8)], body))
    assert regions_text(reads) == ["A[vi:vi + 1, vj:vj + 1]"]
    assert regions_text(writes) == ["B[vi:vi + 1, vj:vj + 1]"]


def test_symbolic_shapes_and_loop_extents():
    n = Var("n")
    A, B = Buffer("A", (n, 16)), Buffer("B", (16,))
    vj, k = Var("vj"), Var("k")
    body = For(k, const(0), n, ForKind.SERIAL, BufferStore(B, B[vj] + A[k, vj], (vj,)))
    reads, writes = infer_access_regions(block("s", [spatial(vj, 16)], body))
    assert regions_text(reads) == ["B[vj:vj + 1]", "A[0:n, vj:vj + 1]"]
    assert regions_text(writes) == ["B[vj:vj + 1]"]


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32))
def test_every_accessed_element_lies_in_its_region(seed):
    rng = random.Random(seed)
    A = Buffer("A", (4096,))
    vi, k1, k2 = Var("vi"), Var("k1"), Var("k2")
    e1, e2, scale = rng.choice([1, 2, 3, 4, 8]), rng.choice([1, 2, 5, 8]), rng.choice([1, 4, 8, 16])
    candidates = [
        vi * scale + k1 * e2 + k2,
        (vi * scale + k1) // rng.choice([2, 3, 4]),
        (vi + k1 * 3 + k2) % rng.choice([4, 6, 16]),
        Min(vi * 2 + k2, vi + k1),
        vi * scale - k1 + 7,
        (k1 * e2 + k2) // 4 + vi,
    ]
    index = rng.choice(candidates)
    body = loop(k1, e1, loop(k2, e2, BufferStore(A, A[index] + 1.0, (index,))))
    reads, _ = infer_access_regions(block("r", [spatial(vi, 16)], body))
    (rng_region,) = reads[0].region
    for value in range(16):
        low = evaluate(rng_region.min, {vi: value})
        high = low + evaluate(rng_region.extent, {vi: value})
        for a in range(e1):
            for b in range(e2):
                assert low <= evaluate(index, {vi: value, k1: a, k2: b}) < high, (index.script(), rng_region)


def test_a_point_access_keeps_the_index_the_body_uses():
    # co < 64 makes co // 64 zero, but the region names the index as the load does (TVM's form),
    # so a schedule comparing the two sees one access.
    A, B = Buffer("A", (8,)), Buffer("B", (64,))
    co, rc = Var("co"), Var("rc")
    body = BufferStore(B, A[co // 64 * 3 + rc], (co,))
    reads, _ = infer_access_regions(block("b", [spatial(co, 64), spatial(rc, 3)], body))
    assert regions_text(reads) == ["A[co // 64 * 3 + rc:co // 64 * 3 + rc + 1]"]


def test_a_pointer_with_an_access_mask_reaches_the_whole_buffer():
    # TVM's access_ptr("r") / ("w") tells how a callee uses the buffer: a read or a write of all
    # of it, for all we know; a bare B.data names no access.
    table, scratch, out, bare = (
        Buffer("table", (64,)),
        Buffer("scratch", (8, 4)),
        Buffer("out", (8,)),
        Buffer("bare", (4,)),
    )
    vi = Var("vi")
    call = Call(
        "int32",
        "lookup",
        (
            BufferPointer(table, const(0), "r"),
            BufferPointer(scratch, const(0), "w"),
            BufferPointer(bare, const(0)),
        ),
    )
    body = seq(Evaluate(call), BufferStore(out, const(1.0), (vi,)))
    reads, writes = infer_access_regions(block("b", [spatial(vi, 8)], body))
    assert regions_text(reads) == ["table[0:64]"]
    assert regions_text(writes) == ["scratch[0:8, 0:4]", "out[vi:vi + 1]"]
