"""The ``pragma_prefetch`` loop annotation: the C printer's ``__builtin_prefetch`` of a loop's streams.

Each distinct vector load of the annotated loop's body whose address moves with
the loop is prefetched ``d`` iterations ahead at the top of each iteration;
scalar loads and loads indexed by loops inside the body are not. The kernel
computes what it computed without the annotation (checked against numpy on
random inputs); a distance that is not a positive integer, and a GPU target,
are BuildErrors that name the loop and the annotation.
"""

from __future__ import annotations

import numpy as np
import pytest

import tir
from codegen import build
from codegen.build import generate_source
from codegen.errors import BuildError
from examples.seeds.seed003_conv_layer import check, halide_schedule, random_inputs
from schedule import Schedule
from tuner import workloads

ROWS = tir.parse(
    """
@T.prim_func
def main(A: T.Buffer((8, 64), "float32"), S: T.Buffer((8,), "float32"), W: T.Buffer((4, 64), "float32"),
         B: T.Buffer((8, 64), "float32")):
    for i, k, j in T.grid(8, 4, 64):
        with T.block("B"):
            vi, vk, vj = T.axis.remap("SRS", [i, k, j])
            with T.init():
                B[vi, vj] = T.float32(0)
            B[vi, vj] = B[vi, vj] + A[vi, vj] * S[vi] * W[vk, vj]
"""
)


def rows_prefetched(distance, unroll: bool = True) -> tir.IRModule:
    sch = Schedule(ROWS)
    i, _, j = sch.get_loops(sch.get_block("B"))
    j_0, lanes = sch.split(j, [None, 16])
    sch.vectorize(lanes)
    if unroll:
        sch.unroll(j_0)
    sch.annotate(i, "pragma_prefetch", distance)
    return sch.mod


def prefetch_lines(mod: tir.IRModule) -> list[str]:
    source, _ = generate_source(mod, "c")
    return [line.strip() for line in source.splitlines() if "__builtin_prefetch" in line]


def test_vector_streams_that_move_with_the_loop_are_prefetched():
    """A's and B's rows move with i (4 vectors each); S is read as a scalar and W moves with k."""
    offsets = ["", " + 16", " + 32", " + 48"]
    expected = {f"__builtin_prefetch({name} + (i + 1) * 64{o});" for name in "AB" for o in offsets}
    lines = prefetch_lines(rows_prefetched(1))
    assert sorted(lines) == sorted(expected)
    rng = np.random.default_rng(2)
    a, s, w = (rng.uniform(-1, 1, shape).astype("float32") for shape in ((8, 64), (8,), (4, 64)))
    b = np.full((8, 64), np.nan, "float32")
    build(rows_prefetched(1), "c")["main"](a, s, w, b)
    np.testing.assert_allclose(b, a * s[:, None] * w.sum(0), rtol=1e-5, atol=1e-5)


def test_loads_indexed_by_a_loop_inside_are_not_prefetched():
    assert prefetch_lines(rows_prefetched(1, unroll=False)) == []


GATHER = tir.parse(
    """
@T.prim_func
def main(A: T.Buffer((64, 16), "float32"), idx: T.Buffer((8,), "int32"), B: T.Buffer((8, 16), "float32")):
    for i, j in T.grid(8, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[idx[vi], vj]
"""
)


def test_a_gather_is_not_prefetched_since_its_index_load_would_read_past_its_buffer():
    """``A[idx[i], :]`` two iterations ahead would load ``idx[8]`` and ``idx[9]`` of an 8-element
    buffer: an ordinary load, not a prefetch, so it could fault."""
    sch = Schedule(GATHER)
    i, j = sch.get_loops(sch.get_block("B"))
    sch.vectorize(j)
    sch.annotate(i, "pragma_prefetch", 2)
    assert prefetch_lines(sch.mod) == []
    rng = np.random.default_rng(3)
    a, ids = rng.uniform(-1, 1, (64, 16)).astype("float32"), rng.integers(0, 64, 8).astype("int32")
    b = np.zeros((8, 16), "float32")
    build(sch.mod, "c")["main"](a, ids, b)
    np.testing.assert_array_equal(b, a[ids])


@pytest.mark.parametrize("channel_unroll", [1, 2])
def test_halide_conv_prefetches_its_filter_and_computes(channel_unroll):
    sizes = {"N": 1, "H": 2, "W": 10, "CI": 16, "CO": 64}
    mod = workloads.conv_layer(**sizes)
    scheduled = halide_schedule(mod, prefetch=2, channel_unroll=channel_unroll).mod
    prefetches = prefetch_lines(scheduled)
    assert len(prefetches) == 4 * channel_unroll  # 4 filter vectors for each unrolled input channel
    loop = "ax4_0" if channel_unroll > 1 else "ax4"
    assert all(
        p.startswith(f"__builtin_prefetch(filter + ({loop} + 2) * {64 * 9 * channel_unroll}")
        for p in prefetches
    )
    arrays = random_inputs(mod, seed=8)
    build(scheduled, "c")["main"](*arrays)
    check(mod, arrays, sizes)


@pytest.mark.parametrize("distance", [0, -1, 1.5])
def test_a_distance_that_is_not_a_positive_integer_is_an_error(distance):
    with pytest.raises(BuildError, match=r"loop i: pragma_prefetch is .*positive integer"):
        generate_source(rows_prefetched(distance), "c")


def test_gpu_targets_reject_the_annotation():
    sch = Schedule(rows_prefetched(1, unroll=False))
    i, _, j_0, _ = sch.get_loops(sch.get_block("B"))
    sch.bind(i, "blockIdx.x")
    sch.bind(j_0, "threadIdx.x")
    with pytest.raises(BuildError, match="loop i has annotation 'pragma_prefetch'.*only the C target"):
        generate_source(sch.mod, "cuda")


@pytest.mark.parametrize("kind", ["vectorize", "unroll"])
def test_a_loop_that_disappears_in_the_lowering_cannot_prefetch(kind):
    sch = Schedule(ROWS)
    _, _, j = sch.get_loops(sch.get_block("B"))
    j_0, lanes = sch.split(j, [None, 16])
    getattr(sch, kind)(lanes)
    sch.annotate(lanes, "pragma_prefetch", 1)
    with pytest.raises(
        BuildError, match=r"loop j_1 is (vectorized|unrolled) and has annotation 'pragma_prefetch'"
    ):
        generate_source(sch.mod, "c")
