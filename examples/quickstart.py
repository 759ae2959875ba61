"""Quick start: write the seed notebook's matmul, schedule it, print it, run it on numpy.

    python examples/quickstart.py

The reference executor runs any program on numpy arrays (serial semantics), so
this works on any machine. Sizes are small because the executor is an oracle,
not a fast path; the code generators (C, CUDA, Metal) are the fast path.
"""

import time

import numpy as np

import tir
from schedule import Schedule
from tir import I, T

N = 64


@I.ir_module
class MyModuleMatmul:
    @T.prim_func
    def main(
        A: T.Buffer((N, N), "float32"),
        B: T.Buffer((N, N), "float32"),
        C: T.Buffer((N, N), "float32"),
    ):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, j, k in T.grid(N, N, N):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def main() -> None:
    MyModuleMatmul.show()
    rng = np.random.default_rng(0)
    a = rng.random((N, N), dtype=np.float32)
    b = rng.random((N, N), dtype=np.float32)
    c = np.empty((N, N), dtype=np.float32)
    start = time.perf_counter()
    tir.interpret(MyModuleMatmul, a, b, c)
    elapsed = time.perf_counter() - start
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    flops = tir.flop_count(MyModuleMatmul["main"])
    print(f"\nexecutor: {N}x{N}x{N} matmul matches numpy ({flops:,} FLOP, {elapsed * 1e3:.0f} ms)")

    # The notebook's local-memory blocking, at this size: tiles of 4x4 threads x 4x4 per thread.
    sch = Schedule(MyModuleMatmul)
    block_c = sch.get_block("C")
    c_local = sch.cache_write(block_c, 0, "local")
    i, j, k = sch.get_loops(block_c)
    i0, i1, i2 = sch.split(i, [None, 4, 4])
    j0, j1, j2 = sch.split(j, [None, 4, 4])
    k0, k1 = sch.split(k, [None, 4])
    sch.unroll(k1)
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(c_local, j1)
    sch.bind(i0, "blockIdx.x")
    sch.bind(j0, "blockIdx.y")
    sch.bind(i1, "threadIdx.x")
    sch.bind(j1, "threadIdx.y")
    sch.decompose_reduction(block_c, k0)
    print()
    sch.mod.show()
    c[:] = np.nan
    tir.interpret(sch.mod, a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    print(f"\nscheduled ({len(sch.trace)} traced instructions) matches numpy; the trace as Python:")
    print(sch.trace.as_python())


if __name__ == "__main__":
    main()
