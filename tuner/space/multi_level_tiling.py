"""Multi-level tiling: the rule for reductions with data reuse (matmul, batch matmul, convolutions).

MetaSchedule's MultiLevelTiling, for a GPU and for the CPU. Every spatial loop is
split into levels by ``sample_perfect_tile`` and every reduction loop likewise, the
levels are interleaved so that inner tiles stay in fast memory while the outer ones
walk the problem, and a "local" write cache keeps each tile's accumulators until
they are stored (with elementwise epilogues folded into that store, see
auto_inline.py). All sizes are sampled decisions, and everything else follows from
the block's structure, so the trace replays with any decisions.

GPU, "SSRRSRS" (TVM's "SSSRRSRS" without the vthread level): spatial levels
blockIdx / threadIdx / two register levels, reduction levels outer (one shared-memory
tile) / two inner ones. A vthread level is left out on purpose: emulated as a serial
loop inside the thread loop, each thread's register tile becomes strided, and the
write-back of that tile, placed under the thread loop, covers the hull of the strides,
which overlaps the neighbours' tiles (a race on hardware, invisible to the serial
executor); placed outside the thread loop, it only re-fetches every shared tile. Each
input is read through a "shared" cache computed at the outer reduction loop and
fetched cooperatively: its loops are fused and split into ``[rest, threads..., vec]``
where the thread factors are the very handles of the sampled thread tiles (so the
fetch always uses the compute's thread count) and ``vec`` is drawn from [1, 2, 4].

CPU, "SSRSRS": spatial levels parallel / outer / register / vector, reduction levels
outer / inner; the outer spatial levels are fused into one ``parallel`` loop, the
innermost spatial level of the last spatial loop (the store's contiguous axis) is
vectorized, and the reduction's init is split off (``decompose_reduction``) so it
vectorizes too.

The rule draws tiles first and checks the thread count, the shared-memory tile and
the register tile against the limits (limits.py) right away, raising ``SpaceError``
before any loop is split, so the generator's re-sampling costs little.
"""

from __future__ import annotations

from math import prod

from schedule import Schedule, ScheduleError
from schedule.instruction import BlockRV, ExprRV, LoopRV
from tir import Block, IntImm, IterKind, Range, Var
from tir.arith import Analyzer
from tir.arith.int_set import eval_set
from tir.dtype import bytes_of

from codegen.target import Target

from .auto_inline import inline_epilogues
from .limits import MAX_LOCAL_BYTES, SpaceError
from .structure import annotate_unroll, fuse_loops, loop_iters, try_vectorize

MAX_INNERMOST_FACTOR = 64
FETCH_VECTOR_LANES = [1, 2, 4]


class _Tiles:
    """The sampled tile handles of one block, with the loops' iterators and extents."""

    def __init__(self, sch: Schedule, loops: list[LoopRV], iters, spatial_levels: int, reduce_levels: int):
        self.spatial = [lp for lp, iv in zip(loops, iters) if iv.kind is IterKind.SPATIAL]
        self.reduce = [lp for lp, iv in zip(loops, iters) if iv.kind is IterKind.REDUCE]
        self.spatial_vars = [iv.var for iv in iters if iv.kind is IterKind.SPATIAL]
        self.reduce_vars = [iv.var for iv in iters if iv.kind is IterKind.REDUCE]
        self.spatial_tiles = [
            sch.sample_perfect_tile(lp, n=spatial_levels, max_innermost_factor=MAX_INNERMOST_FACTOR)
            for lp in self.spatial
        ]
        self.reduce_tiles = [
            sch.sample_perfect_tile(lp, n=reduce_levels, max_innermost_factor=MAX_INNERMOST_FACTOR)
            for lp in self.reduce
        ]
        self.values = {rv: sch.get(rv) for tiles in self.spatial_tiles + self.reduce_tiles for rv in tiles}

    def product(self, tiles: list[ExprRV]) -> int:
        return prod(self.values[rv] for rv in tiles)

    def extents(self, first_spatial: int, first_reduce: int) -> dict[Var, int]:
        """Iterator -> tile extent, counting the spatial levels from ``first_spatial`` on and the
        reduction levels from ``first_reduce`` on (one thread block's or one thread's tile)."""
        extents = {v: self.product(t[first_spatial:]) for v, t in zip(self.spatial_vars, self.spatial_tiles)}
        extents.update({v: self.product(t[first_reduce:]) for v, t in zip(self.reduce_vars, self.reduce_tiles)})
        return extents

    def split(self, sch: Schedule) -> tuple[list[list[LoopRV]], list[list[LoopRV]]]:
        spatial = [sch.split(lp, tiles) for lp, tiles in zip(self.spatial, self.spatial_tiles)]
        reduce = [sch.split(lp, tiles) for lp, tiles in zip(self.reduce, self.reduce_tiles)]
        return spatial, reduce


def _level(loops: list[list[LoopRV]], level: int) -> list[LoopRV]:
    return [levels[level] for levels in loops]


def _prepare(sch: Schedule, name: str) -> tuple[BlockRV, BlockRV, list[LoopRV], list]:
    """The block, its write cache (epilogues inlined into it), its loops and their iterators."""
    block = sch.get_block(name)
    iters = loop_iters(sch.state, sch.get(block))
    if iters is None:
        raise ScheduleError(f"block {name}: multi-level tiling needs one plain loop per iterator")
    write_back = sch.cache_write(block, 0, "local")
    inline_epilogues(sch, write_back)
    return block, write_back, sch.get_loops(block), iters


def footprint_bytes(block: Block, extents: dict[Var, int]) -> int:
    """Bytes of the inputs ``block`` reads while each iterator ranges over ``extents`` (one tile)."""
    analyzer = Analyzer()
    domain = {var: Range(IntImm(0, var.dtype), IntImm(extent, var.dtype)) for var, extent in extents.items()}
    written = {w.buffer for w in block.writes}
    total = 0
    for region in block.reads:
        if region.buffer in written:
            continue
        elements = 1
        for rng, dim in zip(region.region, region.buffer.shape):
            low = eval_set(rng.min, domain, analyzer).min_value
            high = eval_set(rng.min + rng.extent - 1, domain, analyzer).max_value
            span = high.value - low.value + 1 if isinstance(low, IntImm) and isinstance(high, IntImm) else None
            if isinstance(dim, IntImm):
                span = dim.value if span is None else min(span, dim.value)
            elements *= span or 1
        total += elements * bytes_of(region.buffer.dtype)
    return total


def _check_local(tiles: _Tiles, block: Block, first_level: int, target: Target) -> None:
    dtype = block.writes[0].buffer.dtype
    local = prod(tiles.product(t[first_level:]) for t in tiles.spatial_tiles) * bytes_of(dtype)
    limit = MAX_LOCAL_BYTES["gpu" if target.is_gpu else "c"]
    if local > limit:
        raise SpaceError(
            f"block {block.name}: the sampled tiles give each thread {local} bytes of accumulators, above "
            f"the space's max_local_bytes={limit}",
            limit="max_local_bytes",
        )


def _check_gpu_tiles(sch: Schedule, tiles: _Tiles, block: Block, target: Target, want_full_warp: bool) -> None:
    threads = prod(tiles.values[t[1]] for t in tiles.spatial_tiles)
    if threads > target.max_threads_per_group:
        raise SpaceError(
            f"block {block.name}: the sampled thread tiles give {threads} threads per group, above the "
            f"target's max_threads_per_group={target.max_threads_per_group} ({target})",
            limit="max_threads_per_group",
        )
    most = prod(sch.get(lp).extent.value for lp in tiles.spatial)
    if want_full_warp and threads < target.warp_size <= most:
        raise SpaceError(
            f"block {block.name}: the sampled thread tiles give {threads} threads per group, fewer than "
            f"one warp ({target.warp_size})",
            limit="warp_size",
        )
    shared = footprint_bytes(block, tiles.extents(first_spatial=1, first_reduce=1))
    if shared > target.max_shared_memory_bytes:
        raise SpaceError(
            f"block {block.name}: the sampled tiles need {shared} bytes of shared memory per group, above "
            f"the target's max_shared_memory_bytes={target.max_shared_memory_bytes} ({target})",
            limit="max_shared_memory_bytes",
        )
    _check_local(tiles, block, 2, target)


def multi_level_tiling_gpu(sch: Schedule, name: str, target: Target, want_full_warp: bool = True) -> None:
    """Tile block ``name`` as "SSRRSRS" with shared-memory inputs and a local accumulator tile."""
    block, write_back, loops, iters = _prepare(sch, name)
    tiles = _Tiles(sch, loops, iters, spatial_levels=4, reduce_levels=3)
    _check_gpu_tiles(sch, tiles, sch.get(block), target, want_full_warp)
    s, r = tiles.split(sch)
    sch.reorder(*_level(s, 0), *_level(s, 1), *_level(r, 0), *_level(r, 1), *_level(s, 2), *_level(r, 2), *_level(s, 3))
    block_x = fuse_loops(sch, _level(s, 0))
    sch.bind(block_x, "blockIdx.x")
    thread_x = fuse_loops(sch, _level(s, 1))
    sch.bind(thread_x, "threadIdx.x")
    sch.reverse_compute_at(write_back, thread_x, preserve_unit_loops=True)
    fetch_at, depth = _level(r, 0)[-1], 2 + len(r)
    thread_tiles = [t[1] for t in tiles.spatial_tiles]
    for index in range(len(sch.get(block).reads)):
        _cooperative_fetch(sch, block, index, fetch_at, depth, thread_tiles)
    sch.decompose_reduction(block, _level(r, 0)[0])
    annotate_unroll(sch, block_x)


def _cooperative_fetch(
    sch: Schedule, block: BlockRV, index: int, at: LoopRV, depth: int, thread_tiles: list[ExprRV]
) -> None:
    """Copy input ``index`` of ``block`` to shared memory at loop ``at``, all threads of the group
    loading consecutive elements, ``vec`` at a time."""
    cache = sch.cache_read(block, index, "shared")
    sch.compute_at(cache, at, preserve_unit_loops=True)
    fused = fuse_loops(sch, sch.get_loops(cache)[depth:])
    vec = sch.sample_categorical(FETCH_VECTOR_LANES, [1 / len(FETCH_VECTOR_LANES)] * len(FETCH_VECTOR_LANES))
    parts = sch.split(fused, [None, *thread_tiles, vec])
    sch.bind(fuse_loops(sch, parts[1:-1]), "threadIdx.x")
    try_vectorize(sch, parts[-1])


def multi_level_tiling_cpu(sch: Schedule, name: str, target: Target) -> None:
    """Tile block ``name`` as "SSRSRS": parallel outer tiles, a local accumulator tile, vectorized inner loop."""
    block, write_back, loops, iters = _prepare(sch, name)
    tiles = _Tiles(sch, loops, iters, spatial_levels=4, reduce_levels=2)
    _check_local(tiles, sch.get(block), 2, target)
    s, r = tiles.split(sch)
    sch.reorder(*_level(s, 0), *_level(s, 1), *_level(r, 0), *_level(s, 2), *_level(r, 1), *_level(s, 3))
    outer = fuse_loops(sch, _level(s, 0))
    sch.parallel(outer)
    sch.reverse_compute_at(write_back, _level(s, 1)[-1], preserve_unit_loops=True)
    init = sch.decompose_reduction(block, _level(r, 0)[0])
    for vector_loop in (_level(s, 3)[-1], sch.get_loops(init)[-1], sch.get_loops(write_back)[-1]):
        try_vectorize(sch, vector_loop)
    annotate_unroll(sch, outer)

