"""The seed notebook's four scheduled programs, built with its verbatim schedule functions.

The matmul and window sum are tuner.workloads' (the notebook's programs at any size);
vector add is written here.

``SEED_KERNELS[name](size)`` returns the scheduled IRModule: vector add (split and
bind), window sum (cache_read to shared memory with cooperative fetching), matmul
with local blocking (``blocking(sch, 8, 8, 8, 8, 4)``) and matmul with shared-memory
blocking (``blocking_with_shared(sch, 8, 8, 8, 8, 8)``), as the notebook calls them.
Golden sources use the notebook's sizes (1024); number checks use small ones.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import tir
from schedule import Schedule
from tests.schedule.seed_notebook import blocking, blocking_with_shared
from tir import T
from tuner import workloads


def vector_add_program(n: int) -> tir.IRModule:
    @T.prim_func
    def main(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), C: T.Buffer((n,), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in T.grid(n):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = A[vi] + B[vi]

    return tir.IRModule.from_func(main)


def vector_add(n: int = 1024) -> tir.IRModule:
    sch = Schedule(vector_add_program(n))
    block_C = sch.get_block("C", "main")
    (i,) = sch.get_loops(block_C)
    i0, i1 = sch.split(i, [None, 128])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    return sch.mod


def window_sum(n: int = 1024) -> tir.IRModule:
    sch = Schedule(workloads.window_sum(n))
    block_B = sch.get_block("B", "main")
    (i,) = sch.get_loops(block_B)
    i0, i1 = sch.split(i, [None, 128])
    sch.bind(i0, "blockIdx.x")
    sch.bind(i1, "threadIdx.x")
    A_shared = sch.cache_read(block_B, 0, "shared")
    sch.compute_at(A_shared, i1)
    ax = sch.get_loops(A_shared)[-1]
    _, ax1 = sch.split(ax, [None, 128])
    sch.bind(ax1, "threadIdx.x")
    return sch.mod


def matmul_local(n: int = 1024) -> tir.IRModule:
    return blocking(Schedule(workloads.matmul(n, n, n)), 8, 8, 8, 8, 4).mod


def matmul_shared(n: int = 1024) -> tir.IRModule:
    return blocking_with_shared(Schedule(workloads.matmul(n, n, n)), 8, 8, 8, 8, 8).mod


SEED_KERNELS: dict[str, Callable[[int], tir.IRModule]] = {
    "vector_add": vector_add,
    "window_sum": window_sum,
    "matmul_local": matmul_local,
    "matmul_shared": matmul_shared,
}
SMALL_SIZES = {"vector_add": 512, "window_sum": 512, "matmul_local": 128, "matmul_shared": 128}


def random_arguments(mod: tir.IRModule, seed: int = 0) -> list[np.ndarray]:
    """Random inputs in [0.5, 1.5) for every buffer parameter of ``main`` (outputs too: garbage)."""
    rng = np.random.default_rng(seed)
    return [
        (rng.random(buffer.static_shape()) + 0.5).astype(buffer.dtype) for buffer in mod["main"].buffer_params
    ]


REFERENCES: dict[str, Callable[..., np.ndarray]] = {
    "vector_add": lambda a, b, c: a.astype("float64") + b,
    "window_sum": lambda a, b: a[:-2].astype("float64") + a[1:-1] + a[2:],
    "matmul_local": lambda a, b, c: a.astype("float64") @ b,
    "matmul_shared": lambda a, b, c: a.astype("float64") @ b,
}
"""numpy's result for the output (the last parameter) of each seed kernel."""
