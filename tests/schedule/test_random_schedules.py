"""Random sequences of primitives never change what a program computes.

Hypothesis draws a sequence of primitive applications with random arguments on
several workloads. Each step is tried on the current schedule: a legal step
must keep the executor's numbers, an illegal one must raise a ScheduleError and
leave module and trace exactly as they were. At the end the trace must replay
to the same module.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tir
from schedule import Schedule, ScheduleError
from tir import T

from .util import assert_same_numbers, verify_trace_roundtrip


@T.prim_func
def matmul(
    A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")
):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def conv2d_nhwc(
    I: T.Buffer((1, 6, 6, 4), "float32"),
    W: T.Buffer((3, 3, 4, 4), "float32"),
    O: T.Buffer((1, 4, 4, 4), "float32"),
):
    for n, h, w, co, rh, rw, ci in T.grid(1, 4, 4, 4, 3, 3, 4):
        with T.block("conv"):
            vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, ci])
            with T.init():
                O[vn, vh, vw, vco] = T.float32(0)
            O[vn, vh, vw, vco] = O[vn, vh, vw, vco] + I[vn, vh + vrh, vw + vrw, vci] * W[vrh, vrw, vci, vco]


@T.prim_func
def softmax(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
    A_max = T.alloc_buffer((4,))
    A_exp = T.alloc_buffer((4, 16))
    A_sum = T.alloc_buffer((4,))
    for i, k in T.grid(4, 16):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                A_max[vi] = T.min_value("float32")
            A_max[vi] = T.max(A_max[vi], A[vi, vk])
    for i, j in T.grid(4, 16):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            A_exp[vi, vj] = T.exp(A[vi, vj] - A_max[vi])
    for i, k in T.grid(4, 16):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                A_sum[vi] = T.float32(0)
            A_sum[vi] = A_sum[vi] + A_exp[vi, vk]
    for i, j in T.grid(4, 16):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A_exp[vi, vj] / A_sum[vi]


@T.prim_func
def elementwise_chain(A: T.Buffer((8, 24), "float32"), D: T.Buffer((8, 24), "float32")):
    B = T.alloc_buffer((8, 24))
    C = T.alloc_buffer((8, 24))
    for i, j in T.grid(8, 24):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 24):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
    for i, j in T.grid(8, 24):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))


WORKLOADS = {
    "matmul": matmul,
    "conv2d_nhwc": conv2d_nhwc,
    "softmax": softmax,
    "elementwise_chain": elementwise_chain,
}
SCOPES = ["shared", "local", "global"]
ACTIONS = [
    "split",
    "fuse",
    "reorder",
    "parallel",
    "vectorize",
    "unroll",
    "cache_read",
    "cache_write",
    "compute_at",
    "reverse_compute_at",
    "compute_inline",
    "reverse_compute_inline",
    "decompose_reduction",
    "rfactor",
]


def _block_names(sch: Schedule) -> list[str]:
    return [name for name in sch.state.index.blocks if name != "root"]


def _plan(sch: Schedule, action: str, data):
    """Look up handles and draw arguments; return the primitive call to try (or None)."""
    names = _block_names(sch)
    block = sch.get_block(data.draw(st.sampled_from(names)))
    loops = sch.get_loops(block)

    def pick(seq):
        return seq[data.draw(st.integers(0, len(seq) - 1))]

    if action == "split" and loops:
        return sch.split, (pick(loops), [None, data.draw(st.sampled_from([2, 3, 4, 8]))])
    if action == "fuse" and len(loops) >= 2:
        start = data.draw(st.integers(0, len(loops) - 2))
        return sch.fuse, (loops[start], loops[start + 1])
    if action == "reorder" and len(loops) >= 2:
        a, b = sorted(
            data.draw(st.lists(st.integers(0, len(loops) - 1), min_size=2, max_size=2, unique=True))
        )
        return sch.reorder, (loops[b], loops[a])
    if action in ("parallel", "vectorize", "unroll") and loops:
        return getattr(sch, action), (pick(loops),)
    if action in ("cache_read", "cache_write"):
        regions = sch.get(block).reads if action == "cache_read" else sch.get(block).writes
        if regions:
            index = data.draw(st.integers(0, len(regions) - 1))
            return getattr(sch, action), (block, index, data.draw(st.sampled_from(SCOPES)))
    if action in ("compute_at", "reverse_compute_at"):
        target_loops = sch.get_loops(sch.get_block(data.draw(st.sampled_from(names))))
        if target_loops:
            return getattr(sch, action), (block, pick(target_loops))
    if action in ("compute_inline", "reverse_compute_inline"):
        return getattr(sch, action), (block,)
    if action == "decompose_reduction" and loops:
        return sch.decompose_reduction, (block, pick(loops))
    if action == "rfactor" and loops:
        return sch.rfactor, (pick(loops), 0)
    return None


@pytest.mark.parametrize("name", list(WORKLOADS))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_legal_sequences_keep_numbers(name, data):
    func = WORKLOADS[name]
    sch = Schedule(func, seed=0)
    steps = data.draw(st.lists(st.sampled_from(ACTIONS), min_size=1, max_size=6))
    for action in steps:
        planned = _plan(sch, action, data)
        if planned is None:
            continue
        primitive, args = planned
        mod_before, trace_before = sch.mod, sch.trace.as_json()
        try:
            primitive(*args)
        except ScheduleError:
            assert sch.mod is mod_before
            assert sch.trace.as_json() == trace_before
    tir.verify_well_formed(sch.mod["main"])
    assert_same_numbers(func, sch.mod, rtol=1e-4, atol=1e-5)
    verify_trace_roundtrip(sch, func)
