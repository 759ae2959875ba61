"""Multi-level tiling on matrix units: the rule for matmuls whose dtypes a target intrinsic takes.

MetaSchedule's MultiLevelTilingTensorCore, for one simple shape: a block of two
spatial loops and one reduction loop, in that order (a 2-D matmul), on a GPU target
with tensor intrinsics (tir/tensor_intrin) for its dtypes: Metal simdgroup_matrix
(float16, float16 -> float32), CUDA WMMA (float16 -> float32 or float16, bfloat16 ->
float32). float32 matmuls keep the scalar multi-level tiling, with its software
pipelines, until Metal's float simdgroup path is measured against it on a Mac (the
hand schedule and the float32 intrinsics are there for that).
Each extent must be a multiple of the intrinsic's tile (8 on Metal, 16 with WMMA;
mma.sync m16n8k16, a unit the hand schedule can pick, tiles N by 8); a leading
batch loop goes on blockIdx.z. tensor_core_gemm_form.py chooses the blocks and
brings them to this form first (batch matmuls, convolutions as im2col GEMMs, other
extents padded to the tile); for any shape the intrinsics do not match, the block
gets the scalar multi-level tiling (generator.py hands it over when tensorize fails).

The loops are split into ``[blocks, warps, fragments, tile]`` (M and N) and
``[steps, fragments, tile]`` (K); the block tiles go on blockIdx, the warps on
threadIdx.y (32 lanes each on threadIdx.x), each warp keeps ``fragments_m x
fragments_n`` accumulator fragments and multiplies ``fragments_k`` fragments deep per
step; A and B tiles are fetched into shared memory by all the block's threads
(``vector`` elements a load), then into each warp's fragments. ``tensorize_matmul``
applies this with given sizes (``tensorized_matmul``: the hand schedule of the README,
tests and benchmarks) and ``tensor_core_gpu`` with sampled ones (the tuner's rule): warps and fragments come
from ``sample_perfect_tile``, the fetch width from ``sample_categorical``.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from codegen.target import Target
from schedule import BlockRV, ExprRV, LoopRV, Schedule, ScheduleError, draw_perfect_tile
from tir import IntImm, IRModule

from .multi_level_tiling import FETCH_VECTOR_LANES
from .structure import fuse_loops, try_vectorize

# matrix unit -> (tile m, n, k; fragment scopes of A, B, C); a target's default unit has its name.
UNITS = {
    "metal": ((8, 8, 8), ("metal.simdgroup",) * 3),
    "cuda": ((16, 16, 16), ("wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator")),
    "cuda-mma": ((16, 8, 16), ("warp",) * 3),
}
_SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
MAX_WARPS = 8
MAX_FRAGMENTS = 4
MAX_DRAFTS = 256

Size = int | ExprRV | None
Sizes = tuple[list[Size], list[Size], Size, Size]


def intrinsic_names(unit: str, in_dtype: str, acc_dtype: str) -> dict[str, str] | None:
    """The intrinsics a tensorized matmul of these dtypes uses on matrix ``unit``, or None."""
    i, a = _SHORT.get(in_dtype), _SHORT.get(acc_dtype)
    if i is None or a is None:
        return None
    if unit == "metal":
        if (i, a) == ("f32", "f16") or "bf16" in (i, a):
            return None
        mma = i if i == a else f"{i}{a}"
        return {
            "load_a": f"metal_simdgroup_load_8x8_{i}_shared",
            "load_b": f"metal_simdgroup_load_8x8_{i}_shared",
            "fill": f"metal_simdgroup_fill_8x8_{a}",
            "mma": f"metal_simdgroup_mma_8x8x8_{mma}",
            "store": f"metal_simdgroup_store_8x8_{a}_global",
        }
    if unit == "cuda" and (i, a) in (("f16", "f16"), ("f16", "f32"), ("bf16", "f32")):
        return {
            "load_a": f"wmma_load_16x16x16_{i}_a_shared",
            "load_b": f"wmma_load_16x16x16_{i}_b_shared",
            "fill": f"wmma_fill_16x16x16_{a}",
            "mma": f"wmma_sync_16x16x16_{i}f32" if a == "f32" else "wmma_sync_16x16x16_f16",
            "store": f"wmma_store_16x16x16_{a}_global",
        }
    if unit == "cuda-mma" and (i, a) in (("f16", "f32"), ("bf16", "f32")):
        return {
            "load_a": f"mma_ldmatrix_16x16_{i}_a_shared",
            "load_b": f"mma_ldmatrix_16x8_{i}_b_shared",
            "fill": "mma_fill_16x8_f32",
            "mma": f"mma_sync_m16n8k16_{i}f32",
            "store": "mma_store_16x8_f32_global",
        }
    return None


def tensorize_matmul(
    sch: Schedule, block: BlockRV, unit: str, choose: Callable[[list[LoopRV]], Sizes]
) -> None:
    """Tile, stage and tensorize the matmul ``block`` on matrix ``unit`` (a key of ``UNITS``: a
    target kind, or "cuda-mma") as the module docstring says. ``choose`` gets
    the M, N and K loops with the tile split off (their extents count tiles) and returns
    ``([blocks, warps, fragments] of M, the same of N, fragments of K, fetch vector width)``,
    each an int or a sampled handle (blocks may be None)."""
    (tm, tn, tk), (scope_a, scope_b, scope_c) = UNITS[unit]
    node = sch.get(block)
    names = intrinsic_names(unit, node.reads[-1].buffer.dtype, node.writes[0].buffer.dtype)
    if names is None:
        raise ScheduleError(f"no {unit} tensor intrinsics for the dtypes of block {node.name}")
    *batch, i, j, k = sch.get_loops(block)  # batch: a batch matmul's leading loop, on blockIdx.z
    (i, i2), (j, j2), (k, k2) = (sch.split(lp, [None, t]) for lp, t in zip((i, j, k), (tm, tn, tk)))
    tiles_m, tiles_n, frags_k, vector = choose([i, j, k])
    i0, iw, i1 = sch.split(i, tiles_m)
    j0, jw, j1 = sch.split(j, tiles_n)
    k0, k1 = sch.split(k, [None, frags_k])
    sch.reorder(*batch, i0, j0, iw, jw, k0, i1, j1, k1, i2, j2, k2)
    for loop in batch:
        sch.bind(loop, "blockIdx.z")
    sch.bind(i0, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(sch.fuse(iw, jw), "threadIdx.y")
    c_frag = sch.cache_write(block, 0, scope_c)
    sch.reverse_compute_at(c_frag, sch.get_loops(block)[2 + len(batch)])
    for index, scope, load, tile in (
        (0, scope_a, names["load_a"], (tm, tk)),
        (1, scope_b, names["load_b"], (tk, tn)),
    ):
        fragment = sch.cache_read(block, index, scope)
        sch.compute_at(fragment, k0)  # one warp's tiles: fragments are never shared between warps
        shared = sch.cache_read(fragment, 0, "shared")
        sch.compute_at(shared, k0)  # the whole thread block's tile
        fused = fuse_loops(sch, sch.get_loops(shared)[4 + len(batch) :])
        _, warp_m, warp_n, lane, lanes = sch.split(fused, [None, tiles_m[1], tiles_n[1], 32, vector])
        sch.bind(sch.fuse(warp_m, warp_n), "threadIdx.y")
        sch.bind(lane, "threadIdx.x")
        try_vectorize(sch, lanes)
        _tensorize_tiles(sch, fragment, tile, load)
    _tensorize_tiles(sch, c_frag, (tm, tn), names["store"])
    init = sch.decompose_reduction(block, k0)
    sch.tensorize(sch.get_loops(init)[-2], names["fill"])
    sch.tensorize(i2, names["mma"])


def tensorized_matmul(
    mod: IRModule,
    target: str,
    frags: tuple[int, int, int] = (2, 2, 1),
    warps: tuple[int, int] = (1, 1),
    vector: int = 1,
    unit: str | None = None,
) -> Schedule:
    """A schedule of ``mod``'s matmul block "C" on ``target``'s matrix unit with fixed sizes (the hand
    schedule): a thread block has ``warps[0] x warps[1]`` simdgroups (warps), each computing
    ``frags[0] x frags[1]`` tiles of C, ``frags[2]`` tiles deep per step of k; the fetches load
    ``vector`` elements at a time. ``unit`` picks the matrix unit when the target has several:
    "cuda-mma" is mma.sync m16n8k16 with ldmatrix instead of CUDA's default, WMMA."""
    sch = Schedule(mod)
    sizes = ([None, warps[0], frags[0]], [None, warps[1], frags[1]], frags[2], vector)
    tensorize_matmul(sch, sch.get_block("C"), unit or target, lambda _loops: sizes)
    return sch


def _tensorize_tiles(sch: Schedule, block: BlockRV, tile: tuple[int, int], intrin: str) -> None:
    """Cut the last two loops of ``block`` into ``tile``s and tensorize each tile with ``intrin``."""
    r, c = sch.get_loops(block)[-2:]
    r0, r1 = sch.split(r, [None, tile[0]])
    c0, c1 = sch.split(c, [None, tile[1]])
    sch.reorder(r0, c0, r1, c1)
    sch.tensorize(r1, intrin)


def tensor_core_gpu(sch: Schedule, name: str, target: Target) -> None:
    """The tuner's rule: ``tensorize_matmul`` with warps and fragments drafted within the thread
    limit and recorded as ``sample_perfect_tile`` decisions, the fetch width sampled."""
    max_warps = min(MAX_WARPS, target.max_threads_per_group // 32)

    def sample(loops: list[LoopRV]) -> Sizes:
        extents = [sch.get(loop).extent.value for loop in loops]
        draft = _draft(sch, extents, max_warps)
        m, n, k = (
            sch.sample_perfect_tile(loop, n=len(d), max_innermost_factor=MAX_FRAGMENTS, decision=d)
            for loop, d in zip(loops, draft)
        )
        probs = [1 / len(FETCH_VECTOR_LANES)] * len(FETCH_VECTOR_LANES)
        return [None, *m[1:]], [None, *n[1:]], k[1], sch.sample_categorical(FETCH_VECTOR_LANES, probs)

    tensorize_matmul(sch, sch.get_block(name), target.kind, sample)


def _draft(sch: Schedule, extents: list[int], max_warps: int) -> list[list[int]]:
    """Tilings ``[blocks, warps, fragments]`` of M and N and ``[steps, fragments]`` of K (in tiles)
    with at most ``max_warps`` warps and ``MAX_FRAGMENTS`` fragments per level."""
    rng = random.Random(sch.fork_seed())
    for _ in range(MAX_DRAFTS):
        m, n, k = (draw_perfect_tile(_Extent(e), lv, MAX_FRAGMENTS, rng) for e, lv in zip(extents, (3, 3, 2)))
        if m[1] * n[1] <= max_warps and max(m[2], n[2], k[1]) <= MAX_FRAGMENTS:
            return [m, n, k]
    raise ScheduleError(f"no tensor-core tiling of {extents} tiles within {max_warps} warps")


class _Extent:
    """What draw_perfect_tile reads of a loop: its extent."""

    def __init__(self, extent: int):
        self.extent = IntImm(extent, "int32")
