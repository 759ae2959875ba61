"""Hand schedules that run matmuls on matrix units, shared by the tests, the golden sources and the benchmark.

``tensorized_matmul(mod, target)`` (tuner/space/tensor_core.py) tiles C over thread blocks of one or more
simdgroups / warps of 32 threads (threadIdx.y picks the warp), stages A and B tiles
in shared memory (fetched by all the block's threads together), loads each warp's
tiles into fragments and multiplies them with the target's intrinsics
(tir/tensor_intrin): Metal simdgroup_matrix 8x8x8, CUDA WMMA 16x16x16. The
accumulator lives in a fragment, zeroed by the fill intrinsic (decompose_reduction)
and stored to C at the end. ``mixed_matmul`` is the float16 x float16 -> float32
workload that the half intrinsics with float accumulators match.
"""

from __future__ import annotations

from tir import IRModule, parse
from tuner.space.tensor_core import tensorized_matmul

__all__ = ["mixed_matmul", "tensorized_matmul"]


def mixed_matmul(M: int, N: int, K: int) -> IRModule:
    """C[M, N] (float32) = A[M, K] @ B[K, N] (float16), products in float32."""
    return IRModule(
        {
            "main": parse(f"""
@T.prim_func
def main(A: T.Buffer(({M}, {K}), "float16"), B: T.Buffer(({K}, {N}), "float16"),
         C: T.Buffer(({M}, {N}), "float32")):
    for i, j, k in T.grid({M}, {N}, {K}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
""")
        }
    )
