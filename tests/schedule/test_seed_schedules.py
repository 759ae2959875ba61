"""The seed notebook's schedules (shared/seeds/002) run with only the imports changed.

Structure is checked at the notebook's 1024 sizes (the window-sum cache is 1026
long and its fetch covers 130 elements per thread block); numbers are checked
with the executor at sizes it runs quickly.
"""

from __future__ import annotations

import numpy as np

import tir

from .seed_notebook import (
    N_SMALL,
    MatmulSmall,
    MyModuleMatmul,
    MyModuleVecAdd,
    MyModuleWindowSun,
    blocking,
    blocking_with_shared,
    tvm,
)
from .util import assert_same_numbers, verify_trace_roundtrip

# ---------------------------------------------------------------- helpers


def loop_nest(func: tir.PrimFunc) -> list[tuple[str, int, str, str | None]]:
    """(name, extent, kind, thread tag) of every loop, in program order."""
    loops = []

    def visit(node):
        if isinstance(node, tir.For):
            loops.append((node.loop_var.name, int(node.extent), node.kind.value, node.thread_tag))

    pre_order(func.body, visit)
    return loops


def pre_order(node, callback) -> None:
    class _Pre(tir.Visitor):
        def visit(self, n):
            callback(n)
            super().visit(n)

    _Pre().visit(node)


def blocks_of(func: tir.PrimFunc) -> dict[str, tir.Block]:
    out = {}
    pre_order(func.body, lambda n: out.__setitem__(n.name, n) if isinstance(n, tir.Block) else None)
    return out


def allocs_of(func: tir.PrimFunc) -> dict[str, tir.Buffer]:
    return {b.name: b for block in blocks_of(func).values() for b in block.alloc_buffers}


# ---------------------------------------------------------------- vector add


def test_vector_add_split_bind():
    sch = tvm.tir.Schedule(MyModuleVecAdd)
    block_C = sch.get_block("C", "main")
    (i,) = sch.get_loops(block_C)
    i0, i1 = sch.split(i, [None, 128])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    assert loop_nest(sch.mod["main"]) == [
        ("i_0", 8, "thread_binding", "blockIdx.x"),
        ("i_1", 128, "thread_binding", "threadIdx.x"),
    ]
    verify_trace_roundtrip(sch, MyModuleVecAdd)
    assert_same_numbers(MyModuleVecAdd, sch.mod)


# ---------------------------------------------------------------- window sum


def window_sum_schedule(mod):
    sch = tvm.tir.Schedule(mod)
    block_B = sch.get_block("B", "main")
    (i,) = sch.get_loops(block_B)
    i0, i1 = sch.split(i, [None, 128])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    A_shared = sch.cache_read(block_B, 0, "shared")
    before_compute_at = sch.mod
    sch.compute_at(A_shared, i1)
    after_compute_at = sch.mod
    ax = sch.get_loops(A_shared)[-1]
    ax0, ax1 = sch.split(ax, [None, 128])
    sch.bind(ax1, "threadIdx.x")
    return sch, before_compute_at, after_compute_at


def test_window_sum_cooperative_fetch_structure():
    sch, before, after = window_sum_schedule(MyModuleWindowSun)
    # cache_read makes a 1026-long shared copy of A
    a_shared = allocs_of(before["main"])["A_shared"]
    assert a_shared.scope == "shared" and [int(s) for s in a_shared.shape] == [1026]
    # compute_at covers the thread block's 130 elements: 128 threads + 2 halo
    nest = loop_nest(after["main"])
    assert ("ax0", 130, "serial", None) in nest
    copy = blocks_of(after["main"])["A_shared"]
    assert "i_0 * 128 + ax0" in after["main"].script()
    assert copy.iter_vars[0].dom.extent.value == 1026
    # the fetch loop is split and bound to the same threads
    final = loop_nest(sch.mod["main"])
    assert ("ax0_1", 128, "thread_binding", "threadIdx.x") in final
    assert ("ax0_0", 2, "serial", None) in final
    verify_trace_roundtrip(sch, MyModuleWindowSun)
    assert_same_numbers(MyModuleWindowSun, sch.mod)


# ---------------------------------------------------------------- matmul


def test_matmul_local_blocking_structure():
    sch = blocking(tvm.tir.Schedule(MyModuleMatmul), 8, 8, 8, 8, 4)
    nest = loop_nest(sch.mod["main"])
    assert nest[:4] == [
        ("i_0", 16, "thread_binding", "blockIdx.x"),
        ("j_0", 16, "thread_binding", "blockIdx.y"),
        ("i_1", 8, "thread_binding", "threadIdx.x"),
        ("j_1", 8, "thread_binding", "threadIdx.y"),
    ]
    names = {name for name, *_ in nest}
    assert {"k_0", "k_1", "i_2", "j_2"} <= names
    assert ("k_1", 4, "unroll", None) in nest
    blocks = blocks_of(sch.mod["main"])
    assert {"C_init", "C", "C_local"} <= set(blocks)
    assert blocks["C"].init is None and blocks["C_init"].init is None
    assert allocs_of(sch.mod["main"])["C_local"].scope == "local"
    verify_trace_roundtrip(sch, MyModuleMatmul)


def test_matmul_local_blocking_numbers():
    sch = blocking(tvm.tir.Schedule(MatmulSmall), 4, 4, 4, 4, 4)
    assert_same_numbers(MatmulSmall, sch.mod, rtol=1e-4)


def test_matmul_shared_blocking_structure():
    sch = blocking_with_shared(tvm.tir.Schedule(MyModuleMatmul), 8, 8, 8, 8, 8)
    nest = loop_nest(sch.mod["main"])
    assert ("i_1_j_1_fused", 64, "thread_binding", "threadIdx.x") in nest
    allocs = allocs_of(sch.mod["main"])
    assert allocs["A_shared"].scope == "shared" and allocs["B_shared"].scope == "shared"
    vectorized = [n for n in nest if n[2] == "vectorized"]
    assert [n[1] for n in vectorized] == [4, 4]
    fetch_threads = [n for n in nest if n[3] == "threadIdx.x" and n[1] == 64]
    assert len(fetch_threads) == 3  # the compute loop and the two cooperative fetches
    verify_trace_roundtrip(sch, MyModuleMatmul)


def test_matmul_shared_blocking_numbers():
    sch = blocking_with_shared(tvm.tir.Schedule(MatmulSmall), 4, 4, 4, 4, 8)
    assert_same_numbers(MatmulSmall, sch.mod, rtol=1e-4)


def test_seed_schedules_compute_matmul_exactly_like_numpy():
    sch = blocking(tvm.tir.Schedule(MatmulSmall), 4, 4, 4, 4, 4)
    rng = np.random.default_rng(1)
    a, b = (rng.random((N_SMALL, N_SMALL), dtype=np.float32) for _ in range(2))
    c = np.full((N_SMALL, N_SMALL), np.nan, dtype=np.float32)
    tir.interpret(sch.mod, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
