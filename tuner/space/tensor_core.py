"""Multi-level tiling on matrix units: the rule for matmuls whose dtypes a target intrinsic takes.

MetaSchedule's MultiLevelTilingTensorCore, for one simple shape: a block of two
spatial loops and one reduction loop, in that order (a 2-D matmul), on a GPU target
with tensor intrinsics (tir/tensor_intrin) for its dtypes: Metal simdgroup_matrix
(float16, float16 -> float32), CUDA mma.sync m16n8k16 with ldmatrix (float16 or
bfloat16 -> float32) and WMMA (float16 -> float16, which mma.sync lacks here).
float32 matmuls keep the scalar multi-level tiling, with its software pipelines,
until Metal's float simdgroup path is measured against it on a Mac (the hand schedule
and the float32 intrinsics are there for that). Each extent must be a multiple of the
intrinsic's tile (8 on Metal, 16 on CUDA); a leading batch loop goes on blockIdx.z.
tensor_core_gemm_form.py chooses the blocks and brings them to this form first (batch
matmuls, convolutions as im2col GEMMs, other extents padded to the tile); for any
shape the intrinsics do not match, the block gets the scalar multi-level tiling
(generator.py hands it over when tensorize fails).

The loops are split into ``[blocks, warps, fragments, tile]`` (M and N) and
``[steps, fragments, tile]`` (K); the block tiles go on blockIdx, the warps on
threadIdx.y (32 lanes each on threadIdx.x), each warp keeps ``fragments_m x
fragments_n`` accumulator fragments and multiplies ``fragments_k`` fragments deep per
step; A and B tiles are fetched into shared memory by all the block's threads
(``vector`` elements a load: 8 halfs are one 16-byte ``cp.async`` or ``uint4``), then
into each warp's fragments. The staging is CUTLASS's sm80 "multistage": the k-step
loop is software-pipelined (``pipeline_copies``: the copies ``last_stage`` steps ahead,
asynchronous where the target has cp.async) and the shared tiles' rows are padded so
that ldmatrix reads 8 rows from 8 distinct bank groups (``pad_for_fragment_loads``).
``tensorize_matmul`` applies this with given sizes (``tensorized_matmul``: the hand
schedule of the README, tests and benchmarks) and ``tensor_core_gpu`` with sampled
ones (the tuner's rule): warps and fragments come from ``sample_perfect_tile``, drafted
within the warps, shared-memory (padded, one stage) and fragment-register limits, the
fetch width and the pipeline depth (those whose stages fit the shared memory) from
``sample_categorical``; the tiles are always padded.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import NamedTuple

from codegen.target import Target
from schedule import BlockRV, ExprRV, LoopRV, Schedule, ScheduleError, draw_perfect_tile
from tir import IntImm, IRModule
from tir.dtype import bytes_of
from tir.functor import post_order_visit
from tir.stmt import SeqStmt
from tir.transform.inject_software_pipeline import ASYNC_STAGES_KEY, ORDER_KEY, STAGE_KEY

from .structure import fuse_loops, try_vectorize

# matrix unit -> (tile m, n, k; fragment scopes of A, B, C); a target's default unit has its name.
UNITS = {
    "metal": ((8, 8, 8), ("metal.simdgroup",) * 3),
    "cuda": ((16, 16, 16), ("wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator")),
    "cuda-mma": ((16, 8, 16), ("warp",) * 3),
}
_SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
MAX_WARPS = 8
MAX_FRAGMENTS = 8
MAX_DRAFTS = 256
# 32-bit registers per thread that a warp's fragments (A, B and the accumulators) may take: 64x64
# accumulators of mma.sync m16n8k16 with two k steps of A and B fit (ptxas: no spills).
MAX_FRAGMENT_REGISTERS = 192
# Bytes one thread fetches global -> shared at a time, and their odds: 16 (cp.async.cg, one uint4)
# is favoured, narrower fetches stay for tiles with fewer elements than threads x 16 bytes.
FETCH_BYTES = [4, 8, 16]
FETCH_ODDS = [0.2, 0.3, 0.5]
# Warp tiles (rows, columns, k step; elements) the rule drafts first with odds PREFERRED_ODDS, 2 x 2
# warps a block: the fastest hand tilings on the H200 (docs/BENCHMARKS.md), largest first; a tiling
# is taken if it launches MIN_BLOCKS blocks (about a block per SM of a large GPU).
PREFERRED_TILES = [(64, 64, 32), (32, 64, 32), (32, 32, 32)]
PREFERRED_ODDS = 0.5
MIN_BLOCKS = 128
# How a warp loads its fragments (tensorize_matmul's fragment_loads).
FRAGMENT_LOADS = ("step", "step-ahead", "k", "k-double")
# Software pipeline depths of the k-step loop the rule draws from (1: no pipeline).
PIPELINE_STAGES = [1, 2, 3, 4]

Size = int | ExprRV | None


class Sizes(NamedTuple):
    """What ``tensorize_matmul``'s ``choose`` returns: ``[blocks, warps, fragments]`` of M and of N (in
    tiles; blocks may be None), fragments of K per step, the fetch's vector lanes, and the stage of
    the fragment loads and mma in the k-step loop's software pipeline (the copies are stage 0, so
    ``last_stage + 1`` tiles are in flight; 0: no pipeline)."""

    m: list[Size]
    n: list[Size]
    frags_k: Size
    vector: Size
    last_stage: Size = 0


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
    sch: Schedule,
    block: BlockRV,
    unit: str,
    choose: Callable[[list[LoopRV]], Sizes],
    pad: bool = False,
    async_copies: bool = False,
    fragment_loads: str = "step",
) -> None:
    """Tile, stage and tensorize the matmul ``block`` on matrix ``unit`` (a key of ``UNITS``: a
    target kind, or "cuda-mma") as the module docstring says. ``choose`` gets
    the M, N and K loops with the tile split off (their extents count tiles) and returns their
    ``Sizes``, each an int or a sampled handle. ``pad``: storage_align the shared tiles' rows
    (``pad_for_fragment_loads``); ``async_copies``: the pipeline's copies are cp.async;
    ``fragment_loads``: "step" loads each warp's A and B fragments of a whole k step at its top;
    "k" one k fragment at a time (the k fragment loop outside the warp's M and N fragments: fewer
    fragment registers live); "k-double" as "k", double-buffered (``double_buffer_fragments``);
    "step-ahead" loads a whole step's fragments one k step before its mma (two versions of each
    fragment; with ``last_stage`` 0, only the fragments are pipelined)."""
    if fragment_loads not in FRAGMENT_LOADS:
        raise ScheduleError(f"fragment_loads must be one of {FRAGMENT_LOADS}, got {fragment_loads!r}")
    per_k = fragment_loads in ("k", "k-double")
    (tm, tn, tk), (scope_a, scope_b, scope_c) = UNITS[unit]
    node = sch.get(block)
    names = intrinsic_names(unit, node.reads[-1].buffer.dtype, node.writes[0].buffer.dtype)
    if names is None:
        raise ScheduleError(f"no {unit} tensor intrinsics for the dtypes of block {node.name}")
    *batch, i, j, k = sch.get_loops(block)  # batch: a batch matmul's leading loop, on blockIdx.z
    (i, i2), (j, j2), (k, k2) = (sch.split(lp, [None, t]) for lp, t in zip((i, j, k), (tm, tn, tk)))
    tiles_m, tiles_n, frags_k, vector, last_stage = choose([i, j, k])
    i0, iw, i1 = sch.split(i, tiles_m)
    j0, jw, j1 = sch.split(j, tiles_n)
    k0, k1 = sch.split(k, [None, frags_k])
    if per_k or fragment_loads == "step-ahead":  # k fragments outermost: 2 mma on one accumulator far apart
        sch.reorder(*batch, i0, j0, iw, jw, k0, k1, i1, j1, i2, j2, k2)
    else:
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
        sch.compute_at(fragment, k1 if per_k else k0)  # one warp's tiles, never shared between warps
        shared = sch.cache_read(fragment, 0, "shared")
        sch.compute_at(shared, k0)  # the whole thread block's tile
        fused = fuse_loops(sch, sch.get_loops(shared)[4 + len(batch) :])
        _, warp_m, warp_n, lane, lanes = sch.split(fused, [None, tiles_m[1], tiles_n[1], 32, vector])
        sch.bind(sch.fuse(warp_m, warp_n), "threadIdx.y")
        sch.bind(lane, "threadIdx.x")
        try_vectorize(sch, lanes)
        if pad:
            pad_for_fragment_loads(sch, shared)
        _tensorize_tiles(sch, fragment, tile, load)
    _tensorize_tiles(sch, c_frag, (tm, tn), names["store"])
    init = sch.decompose_reduction(block, k0)
    sch.tensorize(sch.get_loops(init)[-2], names["fill"])
    sch.tensorize(i2, names["mma"])
    if fragment_loads == "step-ahead":  # a pipeline even without one for the copies (last_stage 0)
        if isinstance(last_stage, ExprRV):
            raise ScheduleError("fragment_loads='step-ahead' needs a fixed pipeline depth, not a sampled one")
        pipeline_copies(sch, k0, last_stage, async_copies and last_stage > 0, fragments_ahead=True)
    elif isinstance(last_stage, ExprRV) or last_stage > 0:  # a sampled stage is annotated even if 0
        pipeline_copies(sch, k0, last_stage, async_copies)
    if fragment_loads == "k-double" and sch.get(k1).extent.value > 1:
        double_buffer_fragments(sch, k1)


def double_buffer_fragments(sch: Schedule, loop: LoopRV) -> None:
    """Software-pipeline the k fragment ``loop`` in two stages: the fragment loads of fragment
    ``k + 1`` are issued before the mma of fragment ``k`` (two versions of each fragment).

    Before: ``for k1: A_frag; B_frag; mma``; after: the loop annotated
    ``software_pipeline_stage=[0, 0, 1]``: load 0; (load k + 1, mma k) for each k; mma last.
    """
    count = len(sch.get(loop).body.seq)
    sch.annotate(loop, STAGE_KEY, [0] * (count - 1) + [1])
    sch.annotate(loop, ORDER_KEY, list(range(count)))


def pad_for_fragment_loads(sch: Schedule, shared: BlockRV) -> None:
    """storage_align the rows of the shared tile that ``shared`` writes (its last two dimensions; a
    batch matmul's has a leading one) to a stride of ``32k + 16``
    bytes: the 8 rows of 16 bytes that an ldmatrix (or a WMMA load's phase) reads then fall into the
    8 distinct 16-byte bank groups of a 128-byte line (a stride of an odd number of 16-byte units),
    and every row still starts 16-byte aligned. Padding is the least that does it: a row of 32 halfs
    (64 bytes) gets 8 more, one of 16 halfs 8 more (48 bytes), where a 32-element factor pads 16 to 40.

    Before: ``A_shared = T.alloc_buffer((128, 32), "float16", scope="shared")`` (row stride 64 bytes:
    rows 0 and 2 share banks); after: the same buffer allocated with a row stride of 40 halfs (80 bytes).
    """
    buffer = sch.get(shared).writes[0].buffer
    element = bytes_of(buffer.dtype)
    sch.storage_align(shared, 0, buffer.ndim - 2, 32 // element, 16 // element)


def pipeline_copies(
    sch: Schedule, loop: LoopRV, last_stage: int | ExprRV, async_copies: bool, fragments_ahead: bool = False
) -> None:
    """Software-pipeline the k-step ``loop``: its global -> shared copies in stage 0, first, and
    everything else (fragment loads, mma) in ``last_stage``, after them in the order written; the
    copies are asynchronous (stage 0 in ``software_pipeline_async_stages``) when ``async_copies``.
    With ``fragments_ahead`` the mma (the last statement) runs one stage after its fragment loads.

    Before: ``for k0: A_shared; A_frag; B_shared; B_frag; mma``; after (last_stage 2), the same loop
    annotated ``software_pipeline_stage=[0, 2, 0, 2, 2]``, ``software_pipeline_order=[0, 2, 1, 3, 4]``:
    the lowering copies the tiles of step ``k + 2`` while step ``k`` multiplies (three shared versions).
    """
    body = sch.get(loop).body
    statements = body.seq if isinstance(body, SeqStmt) else (body,)
    copies = [_writes_shared(stmt) for stmt in statements]
    running = [j for j, copy in enumerate(copies) if copy] + [j for j, copy in enumerate(copies) if not copy]
    stages = [0 if copy else last_stage for copy in copies]
    if fragments_ahead:  # the mma (last) one step after its fragment loads: two versions of each fragment
        stages[-1] = last_stage + 1
    sch.annotate(loop, STAGE_KEY, stages)
    sch.annotate(loop, ORDER_KEY, [running.index(j) for j in range(len(statements))])
    if async_copies:
        sch.annotate(loop, ASYNC_STAGES_KEY, [0])


def _writes_shared(stmt) -> bool:
    """Whether a statement of the k-step loop holds a block that writes shared memory (a copy)."""
    scopes: set[str] = set()
    post_order_visit(stmt, lambda n: scopes.update(w.buffer.scope for w in getattr(n, "writes", ())))
    return "shared" in scopes


def tensorized_matmul(
    mod: IRModule,
    target: str,
    frags: tuple[int, int, int] = (2, 2, 1),
    warps: tuple[int, int] = (1, 1),
    vector: int = 1,
    unit: str | None = None,
    stages: int = 1,
    pad: bool = False,
    fragment_loads: str = "step",
) -> Schedule:
    """A schedule of ``mod``'s matmul block "C" on ``target``'s matrix unit with fixed sizes (the hand
    schedule): a thread block has ``warps[0] x warps[1]`` simdgroups (warps), each computing
    ``frags[0] x frags[1]`` tiles of C, ``frags[2]`` tiles deep per step of k; the fetches load
    ``vector`` elements at a time. ``unit`` picks the matrix unit when the target has several:
    "cuda-mma" is mma.sync m16n8k16 with ldmatrix instead of CUDA's default, WMMA. ``stages > 1``
    software-pipelines the k steps (cp.async where the target copies asynchronously: CUDA sm_80+);
    ``pad`` pads the shared tiles' rows against bank conflicts (``pad_for_fragment_loads``);
    ``fragment_loads`` as ``tensorize_matmul`` takes it."""
    sch = Schedule(mod)
    sizes = Sizes([None, warps[0], frags[0]], [None, warps[1], frags[1]], frags[2], vector, stages - 1)
    parsed = Target.parse(target)

    def choose(_loops: list[LoopRV]) -> Sizes:
        return sizes

    block = sch.get_block("C")
    tensorize_matmul(sch, block, unit or parsed.kind, choose, pad, parsed.has_async_copy, fragment_loads)
    return sch


def _tensorize_tiles(sch: Schedule, block: BlockRV, tile: tuple[int, int], intrin: str) -> None:
    """Cut the last two loops of ``block`` into ``tile``s and tensorize each tile with ``intrin``."""
    r, c = sch.get_loops(block)[-2:]
    r0, r1 = sch.split(r, [None, tile[0]])
    c0, c1 = sch.split(c, [None, tile[1]])
    sch.reorder(r0, c0, r1, c1)
    sch.tensorize(r1, intrin)


def tensor_core_gpu(sch: Schedule, name: str, target: Target) -> None:
    """The tuner's rule: ``tensorize_matmul`` with warps and fragments drafted within the thread,
    shared-memory and register limits and recorded as ``sample_perfect_tile`` decisions, the fetch
    width (4, 8 or 16 bytes a thread) and the pipeline depth sampled; shared tiles always padded.
    CUDA takes mma.sync m16n8k16 where its intrinsics match the dtypes (float32 accumulators),
    WMMA otherwise."""
    node = sch.get(sch.get_block(name))
    in_dtype, acc_dtype = node.reads[-1].buffer.dtype, node.writes[0].buffer.dtype
    unit = "cuda-mma" if intrinsic_names(f"{target.kind}-mma", in_dtype, acc_dtype) else target.kind
    limits = _Limits(unit, bytes_of(in_dtype), bytes_of(acc_dtype), target)

    def sample(loops: list[LoopRV]) -> Sizes:
        extents = [sch.get(loop).extent.value for loop in loops]
        draft = _draft(sch, extents, limits)
        m, n, k = (
            sch.sample_perfect_tile(loop, n=len(d), max_innermost_factor=MAX_FRAGMENTS, decision=d)
            for loop, d in zip(loops, draft)
        )
        fetches = [(size // limits.in_bytes, p) for size, p in zip(FETCH_BYTES, FETCH_ODDS)]
        fetches = [(lanes, p) for lanes, p in fetches if lanes > 0]
        odds = sum(p for _, p in fetches)
        vector = sch.sample_categorical([lanes for lanes, _ in fetches], [p / odds for _, p in fetches])
        tile_bytes, steps = limits.shared_bytes(draft), draft[2][0]
        depths = [d - 1 for d in PIPELINE_STAGES if d <= steps and d * tile_bytes <= limits.max_shared]
        last_stage = sch.sample_categorical(depths, [1 / len(depths)] * len(depths)) if len(depths) > 1 else 0
        return Sizes([None, *m[1:]], [None, *n[1:]], k[1], vector, last_stage)

    tensorize_matmul(sch, sch.get_block(name), unit, sample, pad=True, async_copies=target.has_async_copy)


class _Limits:
    """What a draft must fit: warps per block, the padded shared tiles of A and B (one pipeline
    stage) within the target's shared memory, and the warp's fragments within
    ``MAX_FRAGMENT_REGISTERS`` 32-bit registers a thread."""

    def __init__(self, unit: str, in_bytes: int, acc_bytes: int, target: Target):
        self.tile = UNITS[unit][0]
        self.in_bytes, self.acc_bytes = in_bytes, acc_bytes
        self.max_warps = min(MAX_WARPS, target.max_threads_per_group // 32)
        self.max_shared = target.max_shared_memory_bytes

    def shared_bytes(self, draft: list[list[int]]) -> int:
        """Bytes of one stage of the padded shared tiles of A (rows x k) and B (k x columns)."""
        (_, wm, fm), (_, wn, fn), (_, fk) = draft
        tm, tn, tk = self.tile
        rows, columns, depth = wm * fm * tm, wn * fn * tn, fk * tk
        return (rows * self.padded(depth) + depth * self.padded(columns)) * self.in_bytes

    def padded(self, elements: int) -> int:
        """A row's stride after ``pad_for_fragment_loads``: the next ``32k + 16`` bytes."""
        factor, offset = 32 // self.in_bytes, 16 // self.in_bytes
        return elements + (offset - elements) % factor

    def fits(self, draft: list[list[int]]) -> bool:
        (_, wm, fm), (_, wn, fn), (_, fk) = draft
        tm, tn, tk = self.tile
        inputs = (fm * fk * tm * tk + fk * fn * tk * tn) * self.in_bytes
        registers = (inputs + fm * fn * tm * tn * self.acc_bytes) // (4 * 32)  # 4-byte registers, 32 lanes
        return (
            wm * wn <= self.max_warps
            and registers <= MAX_FRAGMENT_REGISTERS
            and self.shared_bytes(draft) <= self.max_shared
        )


def _draft(sch: Schedule, extents: list[int], limits: _Limits) -> list[list[int]]:
    """Tilings ``[blocks, warps, fragments]`` of M and N and ``[steps, fragments]`` of K (in tiles)
    that fit ``limits``: with odds ``PREFERRED_ODDS`` a preferred tiling (``_preferred``), else (or
    when none fits) the first of up to ``MAX_DRAFTS`` uniform draws."""
    rng = random.Random(sch.fork_seed())
    if rng.random() < PREFERRED_ODDS:
        preferred = _preferred(extents, limits)
        if preferred is not None:
            return preferred
    for _ in range(MAX_DRAFTS):
        draft = [draw_perfect_tile(_Extent(e), lv, MAX_FRAGMENTS, rng) for e, lv in zip(extents, (3, 3, 2))]
        if limits.fits(draft):
            return draft
    raise ScheduleError(
        f"no tensor-core tiling of {extents} tiles within {limits.max_warps} warps, "
        f"{limits.max_shared} bytes of shared memory and {MAX_FRAGMENT_REGISTERS} fragment registers a thread"
    )


def _preferred(extents: list[int], limits: _Limits) -> list[list[int]] | None:
    """The first of ``PREFERRED_TILES`` (2 x 2 warps; the H200's fastest hand tilings) that divides
    the extents, fits the limits and launches at least ``MIN_BLOCKS`` blocks, else the last that
    divides and fits, else None."""
    tm, tn, tk = limits.tile
    found = None
    for rows, columns, depth in PREFERRED_TILES:
        fm, fn, fk = rows // tm, columns // tn, depth // tk
        m, n, k = extents
        if min(fm, fn, fk) < 1 or m % (2 * fm) or n % (2 * fn) or k % fk:
            continue
        draft = [[m // (2 * fm), 2, fm], [n // (2 * fn), 2, fn], [k // fk, fk]]
        if max(fm, fn, fk) <= MAX_FRAGMENTS and limits.fits(draft):
            found = draft
            if draft[0][0] * draft[1][0] >= MIN_BLOCKS:
                return draft
    return found


class _Extent:
    """What draw_perfect_tile reads of a loop: its extent."""

    def __init__(self, extent: int):
        self.extent = IntImm(extent, "int32")
