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
fetch always uses the compute's thread count) and ``vec`` is drawn from [1, 2, 4]
(MetaSchedule's cooperative-fetch vector lanes; the printers emit one 128-bit access
per ``vec = 4`` chunk only where they prove both addresses multiples of 4 elements,
scalar accesses otherwise). Each shared cache of two or more dimensions is
``storage_align``ed (rows padded to a stride of ``32 * k + 16 bytes``, MetaSchedule's
(32, 8) for half precision): the threads of a warp reading one column of the tile
then hit different banks, and a 16-byte row start keeps the vector fetch aligned.

Epilogues: an elementwise consumer of the tiled block that ``reverse_compute_inline``
cannot fold into the write-back (the tile's output is itself an output of the
function, say) is moved into the tile with ``reverse_compute_at`` under the same
loop as the write-back (MetaSchedule's "fuse consumer"), so each thread applies it to
its own tile right after storing it, in the same kernel.

The loop around the fetches is software-pipelined as MetaSchedule does: the depth
is drawn from 1 (no pipeline), 2, 3 and 4 stages among those whose multiplied shared
tiles fit the target (and not above the loop's extent), and the loop is annotated
``software_pipeline_stage = [0, ..., 0, depth - 1]`` (the copies in stage 0, the
compute last), ``software_pipeline_order = [0, 1, ...]`` and, where the target copies
asynchronously (CUDA sm_80+), ``software_pipeline_async_stages = [0]`` (cp.async).

Register fragments (fast SGEMMs' inner loop): in half the GPU samples the innermost
reduction level is drafted as 1 and each k step first copies the thread's slice of
every shared tile (matmul's column of A, row of B) into a local fragment, vectorized,
the shared tile transposed where the slice is not a row and spread in float4 groups
one thread apart where a thread reads 8 or more elements, the k-step loop unrolled;
the write-back of the accumulators is vectorized too (see _register_fragments).

CPU, "SSRSRS": spatial levels parallel / outer / register / vector, reduction levels
outer / inner; the outer spatial levels are fused into one ``parallel`` loop, the
innermost spatial level of the last spatial loop (the store's contiguous axis) is
vectorized, and the reduction's init is split off (``decompose_reduction``) so it
vectorizes too. In half the CPU samples the inputs read at plain iterators (a conv
filter, matmul's operands) are first copied in the loop order of their tile levels
(``_pack_inputs``: MetaSchedule's layout rewrite of weights, as a copy), so each tile
streams them contiguously.

Limits by construction: the tilings are drafted with the sampling primitive's own
draw (``schedule.draw_perfect_tile``, uniform over the valid tilings) without
touching the schedule, and the first
draft whose thread count, shared-memory tile and accumulator tile fit the limits
(limits.py), with at least a warp of threads (GPU) or a vector loop as wide as a
vector register (CPU) where the loops allow it, is recorded
with ``sample_perfect_tile(..., decision=draft)``. Drafting costs microseconds, so a
few hundred drafts are cheap; when none fits, ``SpaceError`` names the limit. For a
GPU matmul, a quarter of the samples first try the fastest hand tilings
(``PREFERRED_GPU_TILES``), which uniform draws over thousands of tilings rarely meet
within 64 trials; they are recorded the same way, so mutation and replay treat them
like any other draft.
"""

from __future__ import annotations

import random
from math import prod

from codegen.target import Target
from schedule import BlockRV, ExprRV, LoopRV, Schedule, ScheduleError, draw_perfect_tile
from schedule.analysis import bindings_of, realizes_under
from tir import Block, Buffer, BufferLoad, For, IntImm, IterKind, IterVar, PrimExpr, Var, structural_equal
from tir.arith import Analyzer
from tir.dtype import bytes_of
from tir.functor import collect_vars, post_order_visit, substitute
from tir.stmt import BufferStore, SeqStmt
from tir.transform.inject_software_pipeline import ASYNC_STAGES_KEY, ORDER_KEY, STAGE_KEY

from .auto_inline import inline_epilogues
from .limits import MAX_LOCAL_BYTES, SpaceError
from .structure import CPU_UNROLL_STEPS, annotate_unroll, fuse_loops, is_spatial, try_vectorize

MAX_INNERMOST_FACTOR = 64
FETCH_VECTOR_LANES = [1, 2, 4]
# Software pipeline depths the GPU rule draws from (1: no pipeline).
PIPELINE_STAGES = [1, 2, 3, 4]
MAX_DRAFTS = 1024
# Matmul tilings (block tile edge, register tile edge, k step; 16 x 16 threads) drafted first with
# odds PREFERRED_ODDS where they divide the extents and make MIN_PREFERRED_BLOCKS thread groups or
# more: the fastest hand schedules on the H200 (docs/BENCHMARKS.md: 128x128x8 with 8x8 a thread at
# 4096^3, 64x64x16 with 4x4 at 1024^3), which 64 uniform draws rarely meet. The other decisions
# (fragments, fetch width, pipeline depth) are drawn as always, and mutations move away from them.
PREFERRED_GPU_TILES = [(128, 8, 8), (64, 4, 16)]
PREFERRED_ODDS = 0.25
MIN_PREFERRED_BLOCKS = 256
# The share of GPU samples whose innermost reduction step reads its inputs through register
# fragments (_register_fragments); a structural choice, kept by mutations of the other decisions.
FRAGMENT_SHARE = 0.5
# Elements per spread group of a shared tile read through fragments (one float4).
SPREAD_LANES = 4
# storage_align of the shared caches: row strides of 32 * k + (16 bytes in elements).
BANK_ALIGN_FACTOR = 32
BANK_ALIGN_BYTES = 16
# Spatial levels from this one inward make one thread's accumulator tile (GPU: block, thread,
# register, register; CPU: parallel, outer, register, vector).
REGISTER_LEVEL = 2
# The CPU rule's loop order, "SSRSRS", as (iterator kind, level) pairs.
CPU_LEVELS = [
    (IterKind.SPATIAL, 0),
    (IterKind.SPATIAL, 1),
    (IterKind.REDUCE, 0),
    (IterKind.SPATIAL, 2),
    (IterKind.REDUCE, 1),
    (IterKind.SPATIAL, 3),
]
# The share of CPU samples whose plainly indexed inputs are packed in tile order (_pack_inputs);
# a structural choice, kept by mutations of the other decisions.
PACK_SHARE = 0.5


# ---------------------------------------------------------------- tile sizes within the limits


class Footprint:
    """Bytes of the inputs a block reads over one tile of its iterators.

    Read indices are affine in the block's iterators (one loop per iterator), so a
    region's span along a dimension is ``sum(|coefficient| * (tile - 1)) + extent``,
    capped by the buffer's shape; the coefficients are found once, and each draft
    costs a few multiplications. A non-affine index counts the whole dimension. With
    ``pad_rows``, a region of two or more dimensions counts its rows padded as
    ``_pad_rows`` pads the shared tiles.
    """

    def __init__(self, block: Block):
        analyzer = Analyzer()
        variables = [iv.var for iv in block.iter_vars]
        written = {w.buffer for w in block.writes}
        self.regions = [
            (
                bytes_of(r.buffer.dtype),
                [
                    _span_terms(rng.min, rng.extent, dim, variables, analyzer)
                    for rng, dim in zip(r.region, r.buffer.shape)
                ],
            )
            for r in block.reads
            if r.buffer not in written
        ]

    def bytes(self, tile: dict[Var, int], pad_rows: bool = False) -> int:
        total = 0
        for element_bytes, dims in self.regions:
            spans = [
                min(dim, extent + sum(abs(c) * (tile[v] - 1) for v, c in coefficients.items()))
                if coefficients is not None
                else dim
                for coefficients, extent, dim in dims
            ]
            if pad_rows and len(spans) >= 2:
                spans[-1] = _padded_row(spans[-1], element_bytes)
            total += prod(spans) * element_bytes
        return total


def _padded_row(elements: int, element_bytes: int) -> int:
    """A row's stride after ``_pad_rows``'s storage_align: the next ``BANK_ALIGN_FACTOR * k + offset``."""
    offset = max(1, BANK_ALIGN_BYTES // element_bytes)
    return elements + (BANK_ALIGN_FACTOR + offset - elements % BANK_ALIGN_FACTOR) % BANK_ALIGN_FACTOR


def _span_terms(index: PrimExpr, extent: PrimExpr, dim: PrimExpr, variables: list[Var], analyzer: Analyzer):
    """(coefficient per iterator, region extent, dimension), or None coefficients if not affine."""
    dim_value = dim.value if isinstance(dim, IntImm) else 1 << 62
    if not isinstance(extent, IntImm):
        return None, 0, dim_value
    zero = {v: IntImm(0, v.dtype) for v in variables}
    base = analyzer.simplify(substitute(index, zero))
    coefficients: dict[Var, int] = {}
    for var in variables:
        step = analyzer.simplify(substitute(index, {**zero, var: IntImm(1, var.dtype)}) - base)
        if not isinstance(step, IntImm):
            return None, 0, dim_value
        if step.value:
            coefficients[var] = step.value
    rebuilt = base
    for var, coefficient in coefficients.items():
        rebuilt = rebuilt + var * coefficient
    if not analyzer.can_prove_equal(index, rebuilt):
        return None, 0, dim_value
    return coefficients, extent.value, dim_value


class _TileLimits:
    """Checks a draft of tile sizes (one list of factors per loop) against the limits."""

    def __init__(self, block: Block, iters: list[IterVar], extents: list[int], target: Target):
        self.name, self.iters, self.target = block.name, iters, target
        self.footprint = Footprint(block) if target.is_gpu else None
        self.element_bytes = bytes_of(block.writes[0].buffer.dtype)
        self.most_threads = prod(e for iv, e in zip(iters, extents) if iv.kind is IterKind.SPATIAL)
        # The vector loop should fill a vector register where the last spatial loop allows it.
        lanes = max(1, target.vector_bytes // self.element_bytes)
        last = [e for iv, e in zip(iters, extents) if iv.kind is IterKind.SPATIAL][-1]
        self.vector_lanes = max(d for d in range(1, lanes + 1) if last % d == 0)

    def check(self, draft: list[list[int]], prefer: bool) -> None:
        """Raise ``SpaceError`` for a broken limit, and, when ``prefer``, for a missed preference (a warp
        of threads on a GPU, a full vector on the CPU)."""
        spatial = [f for iv, f in zip(self.iters, draft) if iv.kind is IterKind.SPATIAL]
        self._check_accumulators(prod(prod(f[REGISTER_LEVEL:]) for f in spatial))
        if not self.target.is_gpu:
            if prefer and spatial[-1][-1] < self.vector_lanes:
                raise SpaceError(
                    f"block {self.name}: the vector loop has {spatial[-1][-1]} lanes, fewer than "
                    f"{self.vector_lanes}",
                    limit="vector_lanes",
                )
        else:
            self._check_threads(prod(f[1] for f in spatial), prefer)
            self._check_shared(self.shared_bytes(draft))

    def shared_bytes(self, draft: list[list[int]]) -> int:
        """Shared memory of one thread group's input tiles: every level but the outermost
        (blockIdx for a spatial loop, the loop around the shared-memory fetch for a reduction loop)."""
        return self.footprint.bytes({iv.var: prod(f[1:]) for iv, f in zip(self.iters, draft)}, pad_rows=True)

    def _check_accumulators(self, elements: int) -> None:
        size, limit = elements * self.element_bytes, MAX_LOCAL_BYTES["gpu" if self.target.is_gpu else "c"]
        if size > limit:
            raise SpaceError(
                f"block {self.name}: the sampled tiles give each thread {size} bytes of accumulators, "
                f"above the space's max_local_bytes={limit}",
                limit="max_local_bytes",
            )

    def _check_threads(self, threads: int, want_full_warp: bool) -> None:
        target = self.target
        if threads > target.max_threads_per_group:
            raise SpaceError(
                f"block {self.name}: the sampled thread tiles give {threads} threads per group, above the "
                f"target's max_threads_per_group={target.max_threads_per_group} ({target})",
                limit="max_threads_per_group",
            )
        if want_full_warp and threads < target.warp_size <= self.most_threads:
            raise SpaceError(
                f"block {self.name}: the sampled thread tiles give {threads} threads per group, fewer "
                f"than one warp ({target.warp_size})",
                limit="warp_size",
            )

    def _check_shared(self, size: int) -> None:
        target = self.target
        if size > target.max_shared_memory_bytes:
            raise SpaceError(
                f"block {self.name}: the sampled tiles need {size} bytes of shared memory per group, "
                f"above the target's max_shared_memory_bytes={target.max_shared_memory_bytes} ({target})",
                limit="max_shared_memory_bytes",
            )


def _draft_tiles(
    sch: Schedule,
    loops: list[For],
    counts: list[int],
    limits: _TileLimits,
    unit_innermost: list[bool],
    preferred: list[list[list[int]]] = (),
) -> list[list[int]]:
    """The first draft of tilings (``counts[i]`` levels for ``loops[i]``, the innermost one 1 where
    ``unit_innermost[i]``) within the limits; the preferences (a warp of threads, a full vector)
    are asked for in the first half of the drafts only. With odds ``PREFERRED_ODDS`` the first of
    the ``preferred`` drafts within the limits comes first."""
    rng = random.Random(sch.fork_seed())
    if preferred and rng.random() < PREFERRED_ODDS:
        for draft in preferred:
            try:
                limits.check(draft, prefer=True)
            except SpaceError:
                continue
            return draft
    broken: SpaceError | None = None
    for number in range(MAX_DRAFTS):
        draft = [
            draw_perfect_tile(loop, n=n - unit, max_innermost_factor=MAX_INNERMOST_FACTOR, rng=rng)
            + [1] * unit
            for loop, n, unit in zip(loops, counts, unit_innermost)
        ]
        try:
            limits.check(draft, prefer=number < MAX_DRAFTS // 2)
        except SpaceError as err:
            broken = err
            continue
        return draft
    raise SpaceError(f"no tiling within the limits in {MAX_DRAFTS} drafts: {broken}", limit=broken.limit)


def _preferred_gpu_drafts(
    iters: list[IterVar], extents: list[int], counts: list[int]
) -> list[list[list[int]]]:
    """For a matrix multiply (two spatial loops and one reduction loop of extent > 1, tiled
    "SSRRSRS"), the drafts of ``PREFERRED_GPU_TILES`` that divide its extents and launch at least
    ``MIN_PREFERRED_BLOCKS`` thread groups, in that order; none for another block."""
    if counts != [4 if iv.kind is IterKind.SPATIAL else 3 for iv in iters]:
        return []
    wide = [(iv.kind, e) for iv, e in zip(iters, extents) if e > 1]
    if [kind for kind, _ in wide] != [IterKind.SPATIAL, IterKind.SPATIAL, IterKind.REDUCE]:
        return []
    (_, rows), (_, columns), (_, depth) = wide
    drafts = []
    for tile, register, step in PREFERRED_GPU_TILES:
        blocks = (rows // tile) * (columns // tile)
        if rows % tile or columns % tile or depth % step or blocks < MIN_PREFERRED_BLOCKS:
            continue
        wide_tiles = [
            [rows // tile, tile // register, 1, register],
            [columns // tile, tile // register, 1, register],
            [depth // step, step, 1],
        ]
        # the three loops of extent > 1 take those tilings in order; the others stay whole (all 1)
        tiles = iter(wide_tiles)
        drafts.append([next(tiles) if e > 1 else [1] * count for e, count in zip(extents, counts)])
    return drafts


class _Tiles:
    """The recorded tile handles of one block's loops, by loop kind, outermost level first."""

    def __init__(
        self,
        sch: Schedule,
        loops: list[LoopRV],
        iters: list[IterVar],
        draft: list[list[int]],
        shared_bytes: int,
    ):
        self.shared_bytes = shared_bytes
        tiles = [
            sch.sample_perfect_tile(
                loop, n=len(factors), max_innermost_factor=MAX_INNERMOST_FACTOR, decision=factors
            )
            for loop, factors in zip(loops, draft)
        ]
        self.factors = {iv.var: (iv.kind, factors) for iv, factors in zip(iters, draft)}
        self.spatial = [(lp, t) for lp, t, iv in zip(loops, tiles, iters) if iv.kind is IterKind.SPATIAL]
        self.reduce = [(lp, t) for lp, t, iv in zip(loops, tiles, iters) if iv.kind is IterKind.REDUCE]

    def split(self, sch: Schedule) -> tuple[list[list[LoopRV]], list[list[LoopRV]]]:
        # Unit tiles leave no trace in the bindings, so that the accesses of a shared tile and of
        # its fetch (which compute_at writes without them) have the same form, and the buffer
        # compaction can tell that they cover the same region.
        def split(loop: LoopRV, tiles: list[ExprRV]) -> list[LoopRV]:
            return sch.split(loop, tiles, preserve_unit_iters=False)

        return [split(lp, t) for lp, t in self.spatial], [split(lp, t) for lp, t in self.reduce]

    def thread_tiles(self) -> list[ExprRV]:
        return [t[1] for _, t in self.spatial]


def _level(loops: list[list[LoopRV]], level: int) -> list[LoopRV]:
    return [levels[level] for levels in loops]


def _sample_tiles(
    sch: Schedule,
    name: str,
    target: Target,
    spatial_levels: int,
    reduce_levels: int,
    unit_reduce: bool = False,
):
    """The block, its write cache (epilogues inlined into it) and its recorded tiles (``unit_reduce``:
    the innermost reduction level drafted as 1)."""
    block = sch.get_block(name)
    node = sch.get(block)
    iters = sch.loop_iters(node)
    if iters is None:
        raise ScheduleError(f"block {name}: multi-level tiling needs one plain loop per iterator")
    loops = sch.get_loops(block)
    nodes = [sch.get(lp) for lp in loops]
    counts = [spatial_levels if iv.kind is IterKind.SPATIAL else reduce_levels for iv in iters]
    limits = _TileLimits(node, iters, [n.extent.value for n in nodes], target)
    unit_innermost = [unit_reduce and iv.kind is IterKind.REDUCE for iv in iters]
    extents = [n.extent.value for n in nodes]
    preferred = _preferred_gpu_drafts(iters, extents, counts) if target.is_gpu else []
    draft = _draft_tiles(sch, nodes, counts, limits, unit_innermost, preferred)
    tiles = _Tiles(sch, loops, iters, draft, limits.shared_bytes(draft) if target.is_gpu else 0)
    write_back = sch.cache_write(block, 0, "local")
    inline_epilogues(sch, write_back)
    return block, write_back, tiles


# ---------------------------------------------------------------- the rules


def multi_level_tiling_gpu(sch: Schedule, name: str, target: Target) -> None:
    """Tile block ``name`` as "SSRRSRS" with shared-memory inputs and a local accumulator tile."""
    fragments = random.Random(sch.fork_seed()).random() < FRAGMENT_SHARE
    block, write_back, tiles = _sample_tiles(sch, name, target, 4, 3, unit_reduce=fragments)
    s, r = tiles.split(sch)
    sch.reorder(
        *_level(s, 0),
        *_level(s, 1),
        *_level(r, 0),
        *_level(r, 1),
        *_level(s, 2),
        *_level(r, 2),
        *_level(s, 3),
    )
    block_x = fuse_loops(sch, _level(s, 0))
    sch.bind(block_x, "blockIdx.x")
    thread_x = fuse_loops(sch, _level(s, 1))
    sch.bind(thread_x, "threadIdx.x")
    sch.reverse_compute_at(write_back, thread_x, preserve_unit_loops=True)
    fuse_consumers(sch, write_back, thread_x)
    fetch_at, depth = _level(r, 0)[-1], 2 + len(r)
    inputs = _body_reads(sch.get(block))
    caches = [
        _cooperative_fetch(sch, block, index, fetch_at, depth, tiles.thread_tiles()) for index in inputs
    ]
    if fragments:
        _register_fragments(sch, block, _level(r, 1)[-1], list(zip(inputs, caches)))
        try_vectorize(sch, sch.get_loops(write_back)[-1])
    sch.decompose_reduction(block, _level(r, 0)[0])
    _sample_pipeline(sch, fetch_at, tiles.shared_bytes, target)
    annotate_unroll(sch, block_x)


def _sample_pipeline(sch: Schedule, loop: LoopRV, shared_bytes: int, target: Target) -> None:
    """Draw a software pipeline depth for the loop around the fetches and annotate it (MetaSchedule's
    stages: the copies first, the compute ``depth - 1`` iterations behind)."""
    node = sch.get(loop)
    statements = len(node.body.seq) if isinstance(node.body, SeqStmt) else 1
    depths = [
        d
        for d in PIPELINE_STAGES
        if d == 1 or (d <= node.extent.value and d * shared_bytes <= target.max_shared_memory_bytes)
    ]
    if statements < 2 or len(depths) < 2:
        return
    last_stage = sch.sample_categorical([d - 1 for d in depths], [1 / len(depths)] * len(depths))
    sch.annotate(loop, STAGE_KEY, [0] * (statements - 1) + [last_stage])
    sch.annotate(loop, ORDER_KEY, list(range(statements)))
    if target.has_async_copy:
        sch.annotate(loop, ASYNC_STAGES_KEY, [0])


def _body_reads(block: Block) -> list[int]:
    """Indices of the reads of ``block`` that its body makes: a buffer only the init reads (a bias the
    accumulator starts from) is read once per output, before the reduction loop, so it is not fetched
    in the loop (the init, decomposed before that loop, would read the fetch before it happens)."""
    read = set()
    post_order_visit(block.body, lambda n: read.add(n.buffer) if isinstance(n, BufferLoad) else None)
    return [i for i, region in enumerate(block.reads) if region.buffer in read]


def _cooperative_fetch(
    sch: Schedule, block: BlockRV, index: int, at: LoopRV, depth: int, thread_tiles: list[ExprRV]
) -> BlockRV:
    """Copy input ``index`` of ``block`` to shared memory at loop ``at``, all threads of the group
    loading consecutive elements, ``vec`` at a time; returns the copy."""
    cache = sch.cache_read(block, index, "shared")
    sch.compute_at(cache, at, preserve_unit_loops=True)
    fused = fuse_loops(sch, sch.get_loops(cache)[depth:])
    vec = sch.sample_categorical(FETCH_VECTOR_LANES, [1 / len(FETCH_VECTOR_LANES)] * len(FETCH_VECTOR_LANES))
    parts = sch.split(fused, [None, *thread_tiles, vec])
    sch.bind(fuse_loops(sch, parts[1:-1]), "threadIdx.x")
    try_vectorize(sch, parts[-1])
    _pad_rows(sch, cache)
    return cache


def _register_fragments(sch: Schedule, block: BlockRV, at: LoopRV, caches: list[tuple[int, BlockRV]]) -> None:
    """Each step of loop ``at`` (the middle reduction level, around the register tile) first loads
    what it reads of each shared tile into a local fragment, as vectors where the slice is a
    row (the rule drafts the innermost reduction level as 1 for it). A slice along another
    dimension (matmul's column of A) is made a row by storing the shared tile, and the
    fragment, with that dimension last (a transpose). A slice of 8 or more elements is also
    spread in the shared tile as float4 groups one thread apart (``_shared_tile_layout``), so
    that the float4 reads of neighbouring threads fall on different banks. ``caches``: each
    fetched input's read index and shared copy."""
    for index, cache in caches:
        fragment = sch.cache_read(block, index, "local")
        sch.compute_at(fragment, at)
        moved = _moved_dimension(sch, fragment, at)
        if moved is None:
            continue
        dim, extent = moved
        buffer = sch.get(fragment).writes[0].buffer
        spread = extent % (2 * SPREAD_LANES) == 0 and buffer.shape[dim].value % extent == 0
        if dim != buffer.ndim - 1 or spread:
            sch.transform_layout(cache, ("write", 0), _shared_tile_layout(dim, extent if spread else None))
        if dim != buffer.ndim - 1:
            sch.transform_layout(fragment, ("write", 0), _shared_tile_layout(dim, None))
        try_vectorize(sch, sch.get_loops(fragment)[-1])
    # The k step allocates the fragments, so it is never copied; unroll gives it `#pragma unroll`
    # whatever its size (the automatic pragma stops at 1,024 statements).
    sch.unroll(at)


def _moved_dimension(sch: Schedule, fragment: BlockRV, at: LoopRV) -> tuple[int, int] | None:
    """The dimension of the fragment that the one loop between ``at`` and the copy moves, and that
    loop's extent (None when there is not exactly one such loop: a single element, or a slice of
    several dimensions)."""
    nodes = [sch.get(loop) for loop in sch.get_loops(fragment)]
    at_node = sch.get(at)
    inner = nodes[next(i for i, node in enumerate(nodes) if node is at_node) + 1 :]
    if len(inner) != 1 or not isinstance(inner[0].extent, IntImm):
        return None
    (realize,) = realizes_under(inner[0])
    bindings = bindings_of(realize)
    store = realize.block.body
    moved = [d for d, index in enumerate(store.indices) if inner[0].loop_var in collect_vars(bindings[index])]
    return (moved[0], inner[0].extent.value) if len(moved) == 1 else None


def _shared_tile_layout(dim: int, spread: int | None):
    """The index map that moves dimension ``dim`` last (``(i, k) -> (k, i)`` for ``dim = 0``), and
    with ``spread`` (a thread's slice of that many elements) splits it as
    ``(x % spread // 4, x // spread, x % 4)``: a thread's float4 groups one thread's float4 apart.

    ``spread`` is the drafted tile, a constant in the trace: under mutated tile sizes the map is
    still a bijection of the whole dimension (what is computed is the same), only the reads may
    lose their conflict-free pattern or their vectors."""

    def layout(*indices):
        rest, x = (*indices[:dim], *indices[dim + 1 :]), indices[dim]
        if spread is None:
            return (*rest, x)
        return (*rest, x % spread // SPREAD_LANES, x // spread, x % SPREAD_LANES)

    return layout


def _pad_rows(sch: Schedule, cache: BlockRV) -> None:
    """storage_align the shared tile's rows against bank conflicts (tiles of two or more dimensions)."""
    buffer = sch.get(cache).writes[0].buffer
    if buffer.ndim >= 2:
        offset = _padded_row(0, bytes_of(buffer.dtype))
        sch.storage_align(cache, 0, buffer.ndim - 2, BANK_ALIGN_FACTOR, offset)


def fuse_consumers(sch: Schedule, write_back: BlockRV, loop: LoopRV) -> list[BlockRV]:
    """``reverse_compute_at`` each elementwise consumer of ``write_back`` left at the root (one
    ``reverse_compute_inline`` refused) under ``loop``, after the write-back; a refusal leaves it.
    An intermediate tile that only the moved consumers read becomes a per-thread ("local")
    array: it never reaches global memory. Returns the consumers moved."""
    moved = []
    consumers = sch.get_consumers(write_back)
    output = sch.get(write_back).writes[0].buffer
    for consumer in consumers:
        node = sch.get(consumer)
        # Only a pointwise consumer: one that reads the tile elsewhere (C[i, j + 1]) would read
        # what another iteration or thread has not computed yet.
        if is_spatial(node) and _reads_pointwise(node, output):
            try:
                sch.reverse_compute_at(consumer, loop, preserve_unit_loops=True)
            except ScheduleError:
                continue
            moved.append(consumer)
    if moved and len(moved) == len(consumers) and output not in sch.func.params:
        sch.set_scope(write_back, 0, "local")
    return moved


def _reads_pointwise(block: Block, buffer: Buffer) -> bool:
    """True when ``block`` stores one element and reads ``buffer`` only at that element's indices."""
    stores: list[BufferStore] = []
    loads: list[BufferLoad] = []
    post_order_visit(
        block.body,
        lambda n: (
            stores.append(n)
            if isinstance(n, BufferStore)
            else (loads.append(n) if isinstance(n, BufferLoad) and n.buffer is buffer else None)
        ),
    )
    if len(stores) != 1:
        return False
    return all(
        len(load.indices) == len(stores[0].indices)
        and all(structural_equal(a, b) for a, b in zip(load.indices, stores[0].indices))
        for load in loads
    )


def multi_level_tiling_cpu(sch: Schedule, name: str, target: Target) -> None:
    """Tile block ``name`` as "SSRSRS": parallel outer tiles, a local accumulator tile, a vector loop
    (in ``PACK_SHARE`` of the samples with its plainly indexed inputs packed in tile order first)."""
    pack = random.Random(sch.fork_seed()).random() < PACK_SHARE
    block, write_back, tiles = _sample_tiles(sch, name, target, spatial_levels=4, reduce_levels=2)
    if pack:
        _pack_inputs(sch, block, tiles.factors, CPU_LEVELS)
    s, r = tiles.split(sch)
    sch.reorder(*_level(s, 0), *_level(s, 1), *_level(r, 0), *_level(s, 2), *_level(r, 1), *_level(s, 3))
    outer = fuse_loops(sch, _level(s, 0))
    sch.parallel(outer)
    sch.reverse_compute_at(write_back, _level(s, 1)[-1], preserve_unit_loops=True)
    epilogues = fuse_consumers(sch, write_back, _level(s, 1)[-1])
    init = sch.decompose_reduction(block, _level(r, 0)[0])
    try_vectorize(sch, _level(s, 3)[-1])
    for stage in (init, write_back, *epilogues):
        try_vectorize(sch, sch.get_loops(stage)[-1])
    annotate_unroll(sch, outer, CPU_UNROLL_STEPS)


def _pack_inputs(
    sch: Schedule, block: BlockRV, factors: dict[Var, tuple[IterKind, list[int]]], levels: list[tuple]
) -> None:
    """Copy each function input that ``block`` reads at plain iterators (``W[vk, vj]``, not
    ``I[vy + vr]``) once, at the start, into the order the tiled loops walk it (MetaSchedule's
    layout rewrite of constant weights, done here as a copy, parallel over its outer loop): the
    tile levels of its dimensions in loop order, so each tile streams it contiguously. ``levels``: the loop
    order as (iterator kind, level) pairs. An input already in that order is left alone."""
    node = sch.get(block)
    params = set(sch.func.buffer_params)
    written = {w.buffer for w in node.writes}
    for region in node.reads:
        buffer = region.buffer
        if buffer not in params or buffer in written:
            continue
        indices = [rng.min for rng in region.region]
        if not all(isinstance(v, Var) and v in factors for v in indices) or len(set(indices)) < len(indices):
            continue
        parts = [
            (dim, level)
            for kind, level in levels
            for dim, var in enumerate(indices)
            if factors[var][0] is kind and factors[var][1][level] > 1
        ]
        if parts == sorted(parts):
            continue
        reads = [r.buffer for r in sch.get(block).reads]
        cache = sch.cache_read(block, reads.index(buffer), "global")
        sch.transform_layout(cache, ("write", 0), _tile_order([factors[v][1] for v in indices], parts))
        sch.parallel(sch.get_loops(cache)[0])


def _tile_order(dim_factors: list[list[int]], parts: list[tuple[int, int]]):
    """The index map of ``_pack_inputs``: each (dimension, level) of ``parts``, in that order."""

    def layout(*indices):
        def part(dim: int, level: int):
            inner = prod(dim_factors[dim][level + 1 :])
            value = indices[dim] // inner if inner > 1 else indices[dim]
            return value % dim_factors[dim][level] if level else value

        return tuple(part(dim, level) for dim, level in parts)

    return layout
