"""What kind of block a design-space rule is looking at, and the small steps the rules share.

``classify`` sorts the blocks at the root: a reduction with data reuse (matmul,
convolution: two or more inputs, one of them the same for several output elements)
gets the tensor-core rule on a GPU whose matrix unit takes it
(tensor_core_gemm_form.py says when) and multi-level tiling otherwise, any other
reduction (a row sum, a softmax maximum) the simple reduction rule, and a block of
spatial iterators only the elementwise rule. The rules need to know which loop
drives which kind of iterator, which ``Schedule.loop_iters`` answers from the IR
without touching the schedule's trace. The shared steps (fuse a list of loops,
vectorize where legal, sample an unroll depth) are written once here.
"""

from __future__ import annotations

from enum import Enum

from codegen.target import Target
from schedule import LoopRV, Schedule, ScheduleError
from tir import Block, IntImm, IterKind, Var
from tir.functor import collect_vars

# Auto-unroll depths sampled on GPUs and on CPUs (TVM MetaSchedule's defaults for CUDA and LLVM).
# The CPU list stops at 512: at 1024 the C compiler spent 6-8 s on each of the 2,000-line unrolled
# sources (70% of a 64-trial C run's compiling, docs/BENCHMARKS.md) for kernels that were all slower
# than the best.
UNROLL_STEPS = [0, 16, 64, 512, 1024]
CPU_UNROLL_STEPS = [0, 16, 64, 512]
UNROLL_KEY = "pragma_auto_unroll_max_step"


class BlockKind(Enum):
    """The rule a block gets (UNSCHEDULED: none; the lowering binds what is left on a GPU)."""

    TENSOR_CORE = "tensor_core"
    MULTI_LEVEL_TILING = "multi_level_tiling"
    FUSED_ROWS = "fused_rows"
    REDUCTION = "reduction"
    ELEMENTWISE = "elementwise"
    UNSCHEDULED = "unscheduled"


# A rule that fails on a block hands it to the next simpler one.
FALLBACK = {
    BlockKind.TENSOR_CORE: BlockKind.MULTI_LEVEL_TILING,
    BlockKind.MULTI_LEVEL_TILING: BlockKind.REDUCTION,
    BlockKind.FUSED_ROWS: BlockKind.ELEMENTWISE,
    BlockKind.REDUCTION: BlockKind.UNSCHEDULED,
    BlockKind.ELEMENTWISE: BlockKind.UNSCHEDULED,
    BlockKind.UNSCHEDULED: BlockKind.UNSCHEDULED,
}


def is_spatial(block: Block) -> bool:
    """All iterators spatial and no init: each element is computed once, from values already there."""
    return (
        bool(block.iter_vars)
        and block.init is None
        and all(iv.kind is IterKind.SPATIAL for iv in block.iter_vars)
    )


def has_reuse(block: Block) -> bool:
    """Two or more buffers read, and one read that stays the same along some spatial iterator (an
    input element used for several outputs, as A's rows in a matmul): what tiling exploits."""
    written = {w.buffer for w in block.writes}
    reads = [r for r in block.reads if r.buffer not in written]
    if len({r.buffer for r in reads}) < 2:
        return False
    spatial = {iv.var for iv in block.iter_vars if iv.kind is IterKind.SPATIAL}
    for region in reads:
        used: set[Var] = set()
        for rng in region.region:
            used |= set(collect_vars(rng.min)) | set(collect_vars(rng.extent))
        if spatial - used:
            return True
    return False


def classify(
    sch: Schedule, block: Block, target: Target | None = None, reasons: dict[str, str] | None = None
) -> BlockKind:
    """The rule for ``block`` by its structure (see the module docstring); on a GPU ``target``, a
    reduction with reuse that the target's matrix unit takes gets the tensor-core rule, and
    ``reasons`` (if given) gets why a block that could have had it did not."""
    kinds = {iv.kind for iv in block.iter_vars}
    if not kinds or kinds - {IterKind.SPATIAL, IterKind.REDUCE}:
        return BlockKind.UNSCHEDULED
    if IterKind.REDUCE not in kinds:
        return BlockKind.ELEMENTWISE
    if sch.loop_iters(block) is None:
        return BlockKind.UNSCHEDULED
    if IterKind.SPATIAL in kinds and has_reuse(block):
        if target is None or not target.is_gpu:
            return BlockKind.MULTI_LEVEL_TILING
        # tensor_core_gemm_form imports the rules, which import this module
        from .tensor_core_gemm_form import matrix_unit_misfit

        misfit = matrix_unit_misfit(sch, block, target)
        if misfit is None:
            return BlockKind.TENSOR_CORE
        if reasons is not None:
            reasons[block.name] = misfit
        return BlockKind.MULTI_LEVEL_TILING
    return BlockKind.REDUCTION


# ---------------------------------------------------------------- steps the rules share


def fuse_loops(sch: Schedule, loops: list[LoopRV]) -> LoopRV:
    """One loop over all of ``loops`` (the loop itself when there is one)."""
    return loops[0] if len(loops) == 1 else sch.fuse(*loops)


def try_vectorize(sch: Schedule, loop: LoopRV) -> bool:
    """Vectorize ``loop`` if its stores are contiguous; otherwise leave it serial (nothing recorded)."""
    try:
        sch.vectorize(loop)
    except ScheduleError:
        return False
    return True


def annotate_unroll(sch: Schedule, loop: LoopRV, steps: list[int] = UNROLL_STEPS) -> None:
    """Sample an auto-unroll depth from ``steps`` and put it on ``loop``; the decision stays mutable
    in the trace."""
    step = sch.sample_categorical(steps, [1 / len(steps)] * len(steps))
    sch.annotate(loop, UNROLL_KEY, step)


def loop_extent(sch: Schedule, loop: LoopRV) -> int | None:
    """The loop's extent when it is a constant."""
    extent = sch.get(loop).extent
    return extent.value if isinstance(extent, IntImm) else None
