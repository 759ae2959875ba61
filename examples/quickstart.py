"""Quick start: write the seed notebook's matmul as TVMScript, print it, run it on numpy.

    python examples/quickstart.py

The reference executor runs any program on numpy arrays (serial semantics), so
this works on any machine. Sizes are small because the executor is an oracle,
not a fast path; the code generators (C, CUDA, Metal) are the fast path.
"""

import time

import numpy as np

import tir
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


if __name__ == "__main__":
    main()
