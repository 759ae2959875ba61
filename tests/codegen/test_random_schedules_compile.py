"""Random GPU-style schedules compile and compute numpy's result on C and in the Metal simulator.

A small generator (split, reorder, fuse, bind, cache_write to local with
reverse_compute_at, cache_read to shared with compute_at and a cooperative
fetch, vectorize, storage_align of the shared tile with a drawn outer axis, factor and
offset) draws schedules of a matmul and a conv2d with hypothesis.
Some schedules software-pipeline a reduction loop (copies in stage 0, the rest
in a drawn later stage, async copies or not). Every schedule is built for both
targets and run on random inputs; a step the schedule refuses is simply not taken.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codegen import build
from codegen.errors import BuildError
from schedule import Schedule, ScheduleError
from tir import SeqStmt, T


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
def conv2d(
    I: T.Buffer((1, 10, 10, 8), "float32"),
    W: T.Buffer((3, 3, 8, 16), "float32"),
    O: T.Buffer((1, 8, 8, 16), "float32"),
):
    for n, h, w, co, rh, rw, ci in T.grid(1, 8, 8, 16, 3, 3, 8):
        with T.block("O"):
            vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
            with T.init():
                O[vn, vh, vw, vco] = T.float32(0)
            O[vn, vh, vw, vco] = O[vn, vh, vw, vco] + I[vn, vh + vrh, vw + vrw, vci] * W[vrh, vrw, vci, vco]


def matmul_reference(a, b):
    return a.astype("float64") @ b


def conv2d_reference(i, w):
    out = np.zeros((1, 8, 8, 16))
    for rh in range(3):
        for rw in range(3):
            out += np.einsum("nhwc,co->nhwo", i[:, rh : rh + 8, rw : rw + 8, :].astype("float64"), w[rh, rw])
    return out


# workload: (function, block, the two spatial loops tiled, reduction loops, reference)
WORKLOADS = {
    "matmul": (matmul, "C", (0, 1), (2,), matmul_reference),
    "conv2d": (conv2d, "O", (2, 3), (4, 5, 6), conv2d_reference),
}


def divisor(draw, extent: int, at_most: int) -> int:
    return draw(st.sampled_from([d for d in range(1, min(extent, at_most) + 1) if extent % d == 0]))


def attempt(sch: Schedule, step) -> bool:
    """Apply ``step``; a refused step leaves the schedule as it was (ScheduleError's promise)."""
    try:
        step()
    except ScheduleError:
        return False
    return True


def random_gpu_schedule(draw, name: str) -> Schedule:
    func, block_name, spatial, reduction, _ = WORKLOADS[name]
    sch = Schedule(func)
    block = sch.get_block(block_name)
    loops = sch.get_loops(block)
    tiles = []
    for position in spatial:
        extent = sch.get(loops[position]).extent.value
        threads = divisor(draw, extent, 8)
        inner = divisor(draw, extent // threads, 4)
        tiles.append(sch.split(loops[position], [None, threads, inner]))
    others = [loop for i, loop in enumerate(loops) if i not in spatial and i not in reduction]
    reductions = [loops[i] for i in reduction]
    (b0, t0, i0), (b1, t1, i1) = tiles
    sch.reorder(*others, b0, b1, t0, t1, *reductions, i0, i1)
    if others:
        sch.bind(sch.fuse(*others) if len(others) > 1 else others[0], "blockIdx.z")
    sch.bind(b0, "blockIdx.x")
    sch.bind(b1, "blockIdx.y")
    tx = sch.fuse(t0, t1)
    sch.bind(tx, "threadIdx.x")
    threads = sch.get(tx).extent.value
    if draw(st.booleans()):
        local = sch.cache_write(block, 0, "local")
        attempt(sch, lambda: sch.reverse_compute_at(local, tx))
    for read_index in (0, 1):
        if not draw(st.booleans()):
            continue
        cache = sch.cache_read(block, read_index, "shared")
        at = draw(st.sampled_from(reductions + [tx]))
        if not attempt(sch, lambda cache=cache, at=at: sch.compute_at(cache, at)):
            continue
        depth = [sch.get(loop) for loop in sch.get_loops(cache)].index(sch.get(at)) + 1
        fetch_loops = sch.get_loops(cache)[depth:]
        if not fetch_loops:
            continue
        fused = sch.fuse(*fetch_loops) if len(fetch_loops) > 1 else fetch_loops[0]
        vector = draw(st.sampled_from([1, 2, 4]))
        parts = sch.split(fused, [None, threads, vector] if vector > 1 else [None, threads])
        sch.bind(parts[1], "threadIdx.x")
        if vector > 1:
            attempt(sch, lambda parts=parts: sch.vectorize(parts[2]))
        if draw(st.booleans()):
            ndim = sch.get(cache).writes[0].buffer.ndim
            factor = draw(st.sampled_from([1, 4, 8, 32]))
            # Not the innermost axis: padding its stride spreads the elements (32x the bytes at
            # factor 32), past Metal's 32 KB of threadgroup memory; tuners align axis -2.
            axis, offset = draw(st.integers(0, max(ndim - 2, 0))), draw(st.integers(0, factor - 1))
            sch.storage_align(cache, 0, axis, factor, offset)
    if draw(st.booleans()):
        pipeline(sch, draw(st.sampled_from(reductions)), draw(st.integers(0, 3)), draw(st.booleans()))
    return sch


def pipeline(sch: Schedule, loop, last_stage: int, asynchronous: bool) -> None:
    """MetaSchedule's pipeline on ``loop``: every statement of its body in stage 0 but the last."""
    body = sch.get(loop).body
    statements = len(body.seq) if isinstance(body, SeqStmt) else 1
    sch.annotate(loop, "software_pipeline_stage", [0] * (statements - 1) + [last_stage])
    if asynchronous and statements > 1:
        sch.annotate(loop, "software_pipeline_async_stages", [0])


@pytest.mark.parametrize("name", sorted(WORKLOADS))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_schedule_computes_on_c_and_simulator(name, data):
    sch = random_gpu_schedule(data.draw, name)
    func, _, _, _, reference = WORKLOADS[name]
    rng = np.random.default_rng(3)
    inputs = [(rng.random(b.static_shape()) + 0.5).astype("float32") for b in func.buffer_params[:2]]
    expected = reference(*inputs)
    for target, device in (("c", None), ("metal", "sim")):
        out = np.full(func.buffer_params[2].static_shape(), 1e3, dtype="float32")
        try:
            module = build(sch.mod, target, device=device)
        except BuildError as err:  # a random tiling may stage more than Metal's 32 KB: refused, not run
            assert target == "metal" and "threadgroup memory, over the metal limit" in str(err), err
            continue
        module["main"](*inputs, out)
        np.testing.assert_allclose(
            out, expected, rtol=1e-4, atol=1e-4, err_msg=f"{target}\n{sch.mod.script()}"
        )
