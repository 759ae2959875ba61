"""Hand schedules that run matmuls on matrix units, shared by the tests, the golden sources and the benchmark.

``tensorized_matmul(mod, target)`` tiles C over thread blocks of one or more
simdgroups / warps of 32 threads (threadIdx.y picks the warp), stages A and B tiles
in shared memory (fetched by all the block's threads together), loads each warp's
tiles into fragments and multiplies them with the target's intrinsics
(tir/tensor_intrin): Metal simdgroup_matrix 8x8x8, CUDA WMMA 16x16x16. The
accumulator lives in a fragment, zeroed by the fill intrinsic (decompose_reduction)
and stored to C at the end. ``mixed_matmul`` is the float16 x float16 -> float32
workload that the half intrinsics with float accumulators match.
"""

from __future__ import annotations

from schedule import Schedule
from tir import IRModule, parse

# target -> (tile edge, fragment scopes for A, B, C, intrinsic name stems)
_TARGETS = {
    "metal": (8, ("metal.simdgroup",) * 3),
    "cuda": (16, ("wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator")),
}
_SHORT = {"float32": "f32", "float16": "f16"}


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


def intrinsic_names(target: str, in_dtype: str, acc_dtype: str) -> dict[str, str]:
    """The intrinsics a tensorized matmul of these dtypes uses on ``target``."""
    i, a = _SHORT[in_dtype], _SHORT[acc_dtype]
    if target == "metal":
        mma = i if i == a else f"{i}{a}"
        return {
            "load_a": f"metal_simdgroup_load_8x8_{i}_shared",
            "load_b": f"metal_simdgroup_load_8x8_{i}_shared",
            "fill": f"metal_simdgroup_fill_8x8_{a}",
            "mma": f"metal_simdgroup_mma_8x8x8_{mma}",
            "store": f"metal_simdgroup_store_8x8_{a}_global",
        }
    if (i, a) != ("f16", "f32"):
        raise ValueError(
            f"the CUDA WMMA intrinsics take float16 inputs and a float32 accumulator, not {i}/{a}"
        )
    return {
        "load_a": "wmma_load_16x16x16_f16_a_shared",
        "load_b": "wmma_load_16x16x16_f16_b_shared",
        "fill": "wmma_fill_16x16x16_f32",
        "mma": "wmma_sync_16x16x16_f16f32",
        "store": "wmma_store_16x16x16_f32_global",
    }


def tensorized_matmul(
    mod: IRModule,
    target: str,
    frags: tuple[int, int, int] = (2, 2, 1),
    warps: tuple[int, int] = (1, 1),
    vector: int = 1,
) -> Schedule:
    """``mod``'s matmul block "C" on ``target``'s matrix unit. A thread block has ``warps[0] x
    warps[1]`` simdgroups (warps) on threadIdx.y, 32 lanes each on threadIdx.x; each computes
    ``frags[0] x frags[1]`` tiles of C, ``frags[2]`` tiles deep per step of k. The block's A and
    B tiles are fetched into shared memory by all its threads together, ``vector`` elements
    per thread and load."""
    tile, (scope_a, scope_b, scope_c) = _TARGETS[target]
    func = mod["main"]
    A, B, C = func.buffer_params
    names = intrinsic_names(target, A.dtype, C.dtype)
    threads_y = warps[0] * warps[1]
    sch = Schedule(mod)
    block = sch.get_block("C")
    i, j, k = sch.get_loops(block)
    i0, iw, i1, i2 = sch.split(i, [None, warps[0], frags[0], tile])
    j0, jw, j1, j2 = sch.split(j, [None, warps[1], frags[1], tile])
    k0, k1, k2 = sch.split(k, [None, frags[2], tile])
    sch.reorder(i0, j0, iw, jw, k0, i1, j1, k1, i2, j2, k2)
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(sch.fuse(iw, jw), "threadIdx.y")
    c_frag = sch.cache_write(block, 0, scope_c)
    sch.reverse_compute_at(c_frag, sch.get_loops(block)[2])
    for index, scope, load in ((0, scope_a, names["load_a"]), (1, scope_b, names["load_b"])):
        fragment = sch.cache_read(block, index, scope)
        sch.compute_at(fragment, k0)  # one warp's tiles: fragments are never shared between warps
        shared = sch.cache_read(fragment, 0, "shared")
        sch.compute_at(shared, k0)  # the whole block's tile: shared memory is
        fused = sch.fuse(*sch.get_loops(shared)[4:])
        _, ty, tx, lanes = sch.split(fused, [None, threads_y, 32, vector])
        sch.bind(ty, "threadIdx.y")
        sch.bind(tx, "threadIdx.x")
        if vector > 1:
            sch.vectorize(lanes)
        _tensorize_tiles(sch, fragment, tile, load)
    _tensorize_tiles(sch, c_frag, tile, names["store"])
    init = sch.decompose_reduction(block, k0)
    sch.tensorize(sch.get_loops(init)[-2], names["fill"])
    sch.tensorize(i2, names["mma"])
    return sch


def _tensorize_tiles(sch: Schedule, block, tile: int, intrin: str) -> None:
    """Cut the last two loops of ``block`` into tiles and tensorize each tile with ``intrin``."""
    r, c = sch.get_loops(block)[-2:]
    r0, r1 = sch.split(r, [None, tile])
    c0, c1 = sch.split(c, [None, tile])
    sch.reorder(r0, c0, r1, c1)
    sch.tensorize(r1, intrin)
