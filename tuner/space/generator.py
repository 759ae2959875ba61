"""The design space: ``SpaceGenerator`` turns a workload into sampled schedules and mutates them.

``sample(mod, seed)`` applies the rules to a fresh ``Schedule``: auto-inline first
(auto_inline.py), on a GPU the fused-rows rule for a row-wise output and the long
reductions it reads (softmax and layer norm in one kernel, fused_rows.py), then one
rule per block left at the root, chosen by the block's
structure (structure.py): tensor-core tiling for a matmul whose 16-bit dtypes a GPU
target's matrix intrinsics take (tensor_core.py), multi-level tiling for other
reductions with data reuse,
the simple reduction rule for other reductions, the elementwise rule for the rest,
each in its GPU or CPU variant by the target. Every size, vector width, thread count
and unroll depth comes from a sampling primitive, so ``sch.trace`` is the candidate:
it replays onto the workload, and with changed decisions it is another candidate.

A sample that breaks a limit (limits.py) is drawn again from the next seed of the
same stream; a rule that cannot be applied to a block (a structure it does not
handle) hands the block to the next simpler rule. So ``sample`` returns a schedule
within the target's limits for every program the rules understand, or raises
``SpaceError`` naming the limit that no draw could meet.

``mutate(trace, mod, rng)`` changes one decision (a perfect tile moves a factor
between two of its levels, keeping the product; a categorical draws another
candidate) and replays it. Structure that only some decisions allow (a vectorized
loop that a new tile makes non-contiguous) is dropped on replay instead of failing
the candidate; anything else that fails, or breaks a limit, gives None.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from codegen.target import Target
from schedule import Schedule, ScheduleError, Trace
from tir import Block, IRModule, PrimFunc
from tir.functor import stmts_pre_order
from tir.transform.inject_software_pipeline import STAGE_KEY

from .auto_inline import inline_producers
from .elementwise import elementwise_cpu, elementwise_gpu, reduction_cpu, reduction_gpu
from .fused_rows import fused_rows_gpu, long_reductions, row_reductions
from .limits import SpaceError, check_limits, kernels
from .multi_level_tiling import multi_level_tiling_cpu, multi_level_tiling_gpu
from .structure import FALLBACK, BlockKind, classify
from .tensor_core_gemm_form import read_stages, tensor_core_gemm_gpu, to_gemm_form

# Instructions that only make a loop faster, never change what it computes: a replay may skip
# one that the replayed decisions make illegal.
OPTIONAL_ON_REPLAY = frozenset({"vectorize"})

MUTATION_ATTEMPTS = 8

Rule = Callable[[Schedule, str, Target], None]

# Block kind -> (GPU rule, CPU rule).
_RULES: dict[BlockKind, tuple[Rule, Rule]] = {
    BlockKind.TENSOR_CORE: (tensor_core_gemm_gpu, multi_level_tiling_cpu),
    BlockKind.MULTI_LEVEL_TILING: (multi_level_tiling_gpu, multi_level_tiling_cpu),
    BlockKind.REDUCTION: (reduction_gpu, reduction_cpu),
    BlockKind.ELEMENTWISE: (elementwise_gpu, elementwise_cpu),
}


class _RuleFailed(Exception):
    def __init__(self, block: str, kind: BlockKind, cause: ScheduleError):
        super().__init__(f"{kind.value} on block {block}: {cause.message}")
        self.block = block
        self.kind = kind


class SpaceGenerator:
    """The tuner's design space for one target.

    >>> from tuner.workloads import matmul
    >>> space = SpaceGenerator("cuda")
    >>> sch = space.sample(matmul(64, 64, 64), seed=0)
    >>> sorted(sch.block_names(scope=None))
    ['A_shared', 'A_shared_local', 'B_shared', 'B_shared_local', 'C', 'C_init', 'C_local', 'root']
    >>> other = space.mutate(sch.trace, matmul(64, 64, 64), random.Random(0))
    >>> changed = [a.decision != b.decision for a, b in zip(sch.trace.insts, other.trace.insts)]
    >>> sum(changed)
    1
    """

    def __init__(self, target: Target | str, max_attempts: int = 8):
        self.target = Target.parse(target)
        self.max_attempts = max_attempts
        # block name -> why it got a simpler rule than it might have (no matrix unit for it, a rule
        # that failed on it), from the samples drawn so far of the module last sampled
        self.reasons: dict[str, str] = {}
        self._reasons_of: IRModule | PrimFunc | None = None

    # ------------------------------------------------------------ sampling

    def sample(self, mod: IRModule | PrimFunc, seed: int) -> Schedule:
        """A fresh schedule of ``mod`` with the rules applied and every choice drawn from ``seed``."""
        if mod is not self._reasons_of:  # another workload: its blocks' names say nothing of these
            self.reasons, self._reasons_of = {}, mod
        seeds = random.Random(seed)
        fallback: dict[str, BlockKind] = {}
        broken: SpaceError | None = None
        for _ in range(self.max_attempts):
            sch = Schedule(mod, seed=seeds.randrange(1 << 31))
            try:
                self._apply_rules(sch, fallback)
                # The rules draw tiles within the memory limits, but a cooperative fetch with more
                # thread slots than elements may be compacted to more than its tile (the lowering
                # cuts the region by its predicate only in simple forms), so GPU candidates are
                # measured as the lowering will allocate them. CPU tiles have no predicates.
                check_limits(sch.mod, self.target, memory=self.target.is_gpu)
            except _RuleFailed as failed:
                fallback[failed.block] = FALLBACK[failed.kind]
                self.reasons[failed.block] = str(failed)
                continue
            except SpaceError as err:
                broken = err
                continue
            return sch
        if broken is None:
            raise SpaceError(f"the rules could not be applied in {self.max_attempts} draws for {self.target}")
        raise SpaceError(
            f"no candidate within the limits after {self.max_attempts} draws for target {self.target}; "
            f"the last one broke {broken.limit}: {broken}",
            limit=broken.limit,
        )

    def _apply_rules(self, sch: Schedule, fallback: dict[str, BlockKind]) -> None:
        kinds, stages = self._gemm_forms(sch, fallback)
        inline_producers(sch, keep=stages)
        done = self._fuse_rows(sch, fallback) if self.target.is_gpu else set()
        done |= stages  # inlined by their GEMM's rule
        for name in sch.block_names():
            block = sch.find_block(name)
            if block is None or name in done:  # folded into an earlier block's epilogue, or fused
                continue
            kind = fallback.get(name) or kinds.get(name) or classify(sch, block, self.target, self.reasons)
            if kind is BlockKind.UNSCHEDULED:
                continue
            before = _nest_blocks(sch, name)
            try:
                gpu_rule, cpu_rule = _RULES[kind]
                (gpu_rule if self.target.is_gpu else cpu_rule)(sch, name, self.target)
            except ScheduleError as err:
                raise _RuleFailed(name, kind, err) from err
            done |= _nest_blocks(sch, name) - before

    def _gemm_forms(
        self, sch: Schedule, fallback: dict[str, BlockKind]
    ) -> tuple[dict[str, BlockKind], frozenset[str]]:
        """Bring each block that gets the tensor-core rule to GEMM form before auto-inline
        (tensor_core_gemm_form.py); their kinds, and the names of the input copies made."""
        kinds: dict[str, BlockKind] = {}
        stages: set[str] = set()
        if not self.target.is_gpu:
            return kinds, frozenset()
        for name in sch.block_names():
            if (
                name in fallback
                or classify(sch, sch.find_block(name), self.target) is not BlockKind.TENSOR_CORE
            ):
                continue
            try:
                to_gemm_form(sch, name, self.target)
            except ScheduleError as err:
                raise _RuleFailed(name, BlockKind.TENSOR_CORE, err) from err
            kinds[name] = BlockKind.TENSOR_CORE
            stages |= set(read_stages(sch, name))
        return kinds, frozenset(stages)

    def _fuse_rows(self, sch: Schedule, fallback: dict[str, BlockKind]) -> set[str]:
        """Apply the fused-rows rule to every block it fits (unless it failed on it before); the
        names of the consumers it scheduled."""
        done = set()
        producers = long_reductions(sch)  # classified once; again only after a fusion moved blocks
        for name in sch.block_names():
            reductions = [] if name in fallback else row_reductions(sch, name, producers)
            if not reductions:
                continue
            try:
                fused_rows_gpu(sch, name, reductions, self.target)
            except ScheduleError as err:
                raise _RuleFailed(name, BlockKind.FUSED_ROWS, err) from err
            done |= _nest_blocks(sch, name)
            producers = long_reductions(sch)
        return done

    # ------------------------------------------------------------ mutation and replay

    def mutate(
        self, parent: Schedule | Trace, mod: IRModule | PrimFunc, rng: random.Random
    ) -> Schedule | None:
        """A candidate that differs from ``parent`` (a candidate of this space, or its trace) in one
        decision, replayed on ``mod``; None when no mutation tried (up to a few) replays to a
        candidate within the limits. Never raises for a trace that does not fit ``mod``: that is
        None too. Given the schedule, the replay starts at the changed decision (see ``replay``)."""
        trace = parent.trace if isinstance(parent, Schedule) else parent
        decisions = trace.decisions
        mutable = [i for i in decisions if _can_mutate(trace.insts[i])]
        for _ in range(MUTATION_ATTEMPTS if mutable else 0):
            index = rng.choice(mutable)
            decision = _mutated_decision(trace.insts[index], rng)
            try:
                sch = self.replay(parent, mod, {index: decision})
                # A new tiling or pipeline depth can outgrow the memory limits; other decisions leave
                # the buffers as they were.
                check_limits(sch.mod, self.target, memory=_sizes_buffers(trace, index))
            except (ScheduleError, SpaceError):
                continue
            return sch
        return None

    @staticmethod
    def replay(
        parent: Schedule | Trace, mod: IRModule | PrimFunc, decisions: dict[int, Any] | None = None
    ) -> Schedule:
        """``parent``'s trace replayed on a fresh schedule of ``mod`` with ``decisions`` changed,
        skipping the optional instructions (vectorize) that the new decisions make illegal
        (``Trace.apply_to_schedule`` with ``OPTIONAL_ON_REPLAY``). Given a schedule made from
        ``mod`` rather than a trace, the instructions before the first changed decision are not
        replayed: they give what they gave ``parent``, whose checkpoint there is the start
        (``Schedule.replay_prefix``; the same trace gives the same program)."""
        trace = parent.trace if isinstance(parent, Schedule) else parent
        start = min(decisions) if decisions else len(trace.insts)
        sch = parent.replay_prefix(mod, start) if isinstance(parent, Schedule) else None
        if sch is None:
            sch, start = Schedule(mod), 0
        trace.apply_to_schedule(sch, decisions, optional=OPTIONAL_ON_REPLAY, start=start)
        return sch


def _nest_blocks(sch: Schedule, name: str) -> set[str]:
    """Names of the blocks in the top-level loop nest that holds block ``name``: the blocks a rule
    moved into it (an epilogue, fused reductions) are scheduled with it. Records nothing."""
    for nest in kernels(sch.func):
        names = {n.name for n in stmts_pre_order(nest) if isinstance(n, Block)}
        if name in names:
            return names
    return set()


# ---------------------------------------------------------------- decision mutators


def _sizes_buffers(trace: Trace, index: int) -> bool:
    """Whether decision ``index`` decides buffer sizes: a tiling, or a software pipeline depth
    (the stage annotation that uses it multiplies the shared tiles)."""
    inst = trace.insts[index]
    if inst.kind == "sample_perfect_tile":
        return True
    outputs = set(inst.outputs)
    return any(
        other.kind == "annotate"
        and other.args.get("ann_key") == STAGE_KEY
        and outputs & set(_flat(other.args.get("ann_val")))
        for other in trace.insts
    )


def _flat(value) -> list:
    return [v for item in value for v in _flat(item)] if isinstance(value, (list, tuple)) else [value]


def _can_mutate(inst) -> bool:
    if inst.kind == "sample_perfect_tile" and isinstance(inst.decision, list):
        return len(_tile_moves(inst.decision, _max_innermost(inst))) > 0
    if inst.kind == "sample_categorical" and isinstance(inst.decision, int):
        return sum(1 for p in inst.args["probs"] if p > 0) > 1
    return False


def _max_innermost(inst) -> int | None:
    limit = inst.args.get("max_innermost_factor", 16)
    return None if limit in (None, -1) else limit


def _tile_moves(factors: list[int], max_innermost: int | None) -> list[tuple[int, int, int]]:
    """Every (from, to, divisor) moving a prime-or-composite divisor of one level to another level,
    keeping the product and the innermost limit (MetaSchedule's MutateTileSize)."""
    moves = []
    for src, factor in enumerate(factors):
        for divisor in range(2, factor + 1):
            if factor % divisor:
                continue
            for dst in range(len(factors)):
                last_ok = dst != len(factors) - 1 or max_innermost is None
                if dst != src and (last_ok or factors[dst] * divisor <= max_innermost):
                    moves.append((src, dst, divisor))
    return moves


def _mutated_decision(inst, rng: random.Random):
    if inst.kind == "sample_perfect_tile":
        factors = list(inst.decision)
        src, dst, divisor = rng.choice(_tile_moves(factors, _max_innermost(inst)))
        factors[src] //= divisor
        factors[dst] *= divisor
        return factors
    choices = [i for i, p in enumerate(inst.args["probs"]) if p > 0 and i != inst.decision]
    return rng.choice(choices)
