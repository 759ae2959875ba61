"""Block properties TVM's primitives require, with the errors that name them.

TVM defines a few properties of blocks and scopes that several primitives check
before they rewrite. An *affine binding*: every iterator is a quasi-affine,
gap-free function of the loops (reorder, parallel, vectorize, bind, rfactor).
A *complete* block (spatial iterators only, reads nothing it writes) and a
*reduction* block (an init, affine bindings, spatial and reduction iterators,
the only writer of its outputs, outputs not indexed by a reduction iterator).
*Compact data flow* under a loop: every block below is a local complete or
local reduction block, so the loop's iterations touch disjoint data (parallel,
vectorize, bind). A *stage pipeline* scope: every read of a buffer produced in
the scope is covered by what its producers write, and nothing is written after
another block read it (rfactor). The errors carry TVM's own phrases ("is
required to have an affine binding", "does not have compact dataflow", "is not
a stage pipeline"; reduction.py's NotReductionBlockError says "is not a
reduction block") so users who grep for them find them. Family files import
this module like analysis.py, which it builds on.
"""

from __future__ import annotations

from tir import (
    LT,
    And,
    Block,
    BlockRealize,
    BufferLoad,
    Call,
    Div,
    FloorDiv,
    FloorMod,
    For,
    IntImm,
    IterKind,
    Mod,
    Mul,
    PrimExpr,
    Range,
    Select,
    Var,
    const,
)
from tir.arith import Analyzer, detect_iter_map
from tir.arith.int_set import IntervalSet, union
from tir.buffer import BufferRegion
from tir.functor import collect_vars, post_order_visit, substitute, uses_var
from tir.structural import structural_equal

from .analysis import child_blocks, loop_domains, realizes_under, relaxed_region, verb, writers_of
from .errors import ScheduleError
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class NotAffineBindingError(ScheduleError):
    """A block's iterators are not quasi-affine, gap-free functions of its loops (TVM's affine binding)."""


class NotCompactDataFlowError(ScheduleError):
    """A block under the loop is neither a local complete nor a local reduction block, so the loop's
    iterations may read what other iterations write."""


class NotStagePipelineError(ScheduleError):
    """The block's scope is not a stage pipeline: a read is not covered by what its producers write,
    or a buffer is written after another block read it."""


# ---------------------------------------------------------------- affine bindings


def affine_binding_problem(state: ScheduleState, realize: BlockRealize, high_exclusive: For | None = None):
    """Why the bindings of ``realize`` are not affine in the loops between it and ``high_exclusive``
    (None: up to its enclosing block), or None when they are or might be. Loops further out count as
    constants.

    A binding is refused when it is certainly not one of TVM's affine (surjective) iteration maps: it
    multiplies loops (``k * k // 2``) or divides by one, it steps by more than 1 and leaves gaps
    (``l * 16``), or the predicate bounds a fused number of several loops (``i * 64 + j * 8 + k <
    100``) that the bindings cut into digits the bound does not divide. What our iteration-map
    detection can't decide (overlapping pieces such as ``v0 * 2 + v1`` with ``v1 < 4``, pieces of a
    fused loop bounded by a predicate, ``(f // 2) % 6``) is accepted, as TVM accepts those.
    """
    block = realize.block
    dom = loop_domains(state, realize, high_exclusive, relax_scope="global")
    if not block.iter_vars or not dom:
        return None
    # The answer reads only the realize and the loops' variables and ranges (not their kinds), so
    # it holds while those objects do: bind and vectorize ask again for loops they did not touch.
    key = ("affine_binding", realize, *((var, r.min, r.extent) for var, r in dom.items()))
    memo = state.analysis_memo
    if key not in memo:
        memo[key] = _affine_binding_problem(realize, dom)
    return memo[key]


def _affine_binding_problem(realize: BlockRealize, dom: dict[Var, Range]) -> str | None:
    block = realize.block
    shift: dict[Var, PrimExpr] = {}
    ranges: dict[Var, Range] = {}
    for var, loop_range in dom.items():
        if isinstance(loop_range.min, IntImm) and loop_range.min.value == 0:
            ranges[var] = loop_range
        else:  # the detection counts loops from 0
            fresh = Var(var.name, var.dtype)
            shift[var] = fresh + loop_range.min
            ranges[fresh] = Range(const(0, loop_range.extent.dtype), loop_range.extent)
    values = [substitute(value, shift) for value in realize.iter_values]
    predicate = substitute(realize.predicate, shift)
    for iv, value, written in zip(block.iter_vars, values, realize.iter_values):
        if _nonlinear(value, set(ranges)):
            return f"its iterator {iv.var.name} is bound to {written!r}, which is not linear in the loops"
        detected = detect_iter_map([value], ranges, predicate)
        if detected is not None and detected[0].args and detected[0].args[-1].scale != 1:
            return (
                f"its iterator {iv.var.name} is bound to {written!r}, which steps by "
                f"{detected[0].args[-1].scale} and leaves gaps"
            )
    return _uneven_predicate(realize.predicate, predicate, values, ranges)


def _nonlinear(value: PrimExpr, loops: set[Var]) -> bool:
    """Whether ``value`` multiplies two loop-dependent terms, divides by one, or uses a loop in a
    load, call or select (nothing an affine map can be)."""
    found = False

    def varies(node) -> bool:
        return uses_var(node, lambda v: v in loops)

    def visit(node) -> None:
        nonlocal found
        product = isinstance(node, Mul) and varies(node.a) and varies(node.b)
        quotient = isinstance(node, (FloorDiv, FloorMod, Div, Mod)) and varies(node.b)
        opaque = isinstance(node, (BufferLoad, Call, Select)) and varies(node)
        found = found or product or quotient or opaque

    post_order_visit(value, visit)
    return found


def _conjuncts(condition: PrimExpr) -> list[PrimExpr]:
    if isinstance(condition, And):
        return _conjuncts(condition.a) + _conjuncts(condition.b)
    return [condition]


def _uneven_predicate(written: PrimExpr, predicate: PrimExpr, values, ranges: dict[Var, Range]) -> str | None:
    loops = set(ranges)
    bound = [collect_vars(value) & loops for value in values]
    for condition in _conjuncts(predicate):
        tied = collect_vars(condition) & loops
        if (
            len(tied) < 2
            or any(tied <= used for used in bound)
            or not _cuts_digits(condition, values, ranges)
        ):
            continue
        names = ", ".join(sorted(v.name for v in tied))
        return (
            f"its predicate T.where({written!r}) bounds loops {names} as one number, and its iterators "
            "cut that number into digits the bound does not divide"
        )
    return None


def _cuts_digits(condition: PrimExpr, values, ranges: dict[Var, Range]) -> bool:
    """Whether ``condition`` is ``S < L`` for a fused loop number ``S`` that the bindings provably cut
    into digits (weights 1, e1, e1 * e2, ...) where ``L`` is not a multiple of a digit's span. A split
    fetch loop (``f1 * 4 + f2 < 128`` with bindings ``f1 // 2`` and ``f1 % 2 * 4 + f2``) is fine; loops
    ``i, j, k`` bound to three iterators and bounded by ``i * 64 + j * 8 + k < 100`` are not, as in
    TVM's iteration maps. False when anything is undecided."""
    if not (isinstance(condition, LT) and isinstance(condition.b, IntImm)):
        return False
    total, limit = condition.a, condition.b.value
    sums = detect_iter_map([total], ranges)
    if sums is None or any(not isinstance(a.source.source, Var) or a.lower_factor != 1 for a in sums[0].args):
        return False
    place = {a.source.source: a.scale for a in sums[0].args}
    analyzer = Analyzer()
    for var, loop_range in ranges.items():
        analyzer.bind(var, loop_range)
    digits = []
    for value in values:
        others = _zeros(v for v in collect_vars(value) if v not in place)
        part = analyzer.simplify(substitute(value, others) - substitute(value, {**others, **_zeros(place)}))
        used = collect_vars(part) & set(place)
        if not used:
            continue
        detected = detect_iter_map([part], {v: ranges[v] for v in place})
        if detected is None or detected[0].extent is None:
            return False
        digits.append((min(place[v] for v in used), detected[0].extent, part))
    digits.sort(key=lambda digit: digit[0])
    weight, rebuilt, uneven = 1, const(0, total.dtype), False
    for position, (_, extent, part) in enumerate(digits):
        rebuilt = rebuilt + part * weight
        span = weight if position == len(digits) - 1 else weight * extent
        uneven = uneven or limit % span != 0
        weight *= extent
    difference = analyzer.simplify(total - rebuilt)
    return uneven and isinstance(difference, IntImm) and difference.value == 0


def _zeros(variables) -> dict[Var, PrimExpr]:
    return {v: const(0, v.dtype) for v in variables}


def check_affine_binding(
    state: ScheduleState, block: Block, primitive_name: str, subject: For, high_exclusive: For | None = None
) -> None:
    """Raise ``NotAffineBindingError`` unless ``block``'s bindings are affine, over all its loops or
    (as TVM's partial check) over the loops below ``high_exclusive``."""
    realize = state.realize_of(block)
    problem = affine_binding_problem(state, realize)
    if problem is None or (
        high_exclusive is not None and affine_binding_problem(state, realize, high_exclusive) is None
    ):
        return
    under = f" under loop {high_exclusive.loop_var.name}" if high_exclusive is not None else ""
    raise NotAffineBindingError(
        f"can't {verb(primitive_name)} loop {subject.loop_var.name}: block {block.name!r} is required to "
        f"have an affine binding{under}, and {problem}. Bind each iterator to a sum of loop parts, as "
        "split and fuse write them",
        subject,
        block,
    )


# ---------------------------------------------------------------- complete and reduction blocks

REDUCTION_CONDITIONS = (
    "it has a T.init() statement",
    "all its bindings are quasi-affine expressions of the loops",
    "all its iterators are spatial or reduction iterators",
    "dominant: it is the only block of its scope that writes its outputs",
    "its reduction iterators do not index the buffers it writes",
)


def _reads_only_what_it_writes(block: Block) -> bool:
    """Every read of a buffer the block writes is of exactly a region it writes (an in-place update
    such as decompose_reduction's ``C[i, j] = C[i, j] + ...``)."""
    written = {w.buffer for w in block.writes}
    return all(
        any(w.buffer is r.buffer and structural_equal(w, r) for w in block.writes)
        for r in block.reads
        if r.buffer in written
    )


def complete_block_problem(state: ScheduleState, block: Block, local: bool = False) -> str | None:
    """Why ``block`` is not a complete block (a ``local`` one skips dominance, as TVM's under a loop),
    or None. Reads of exactly the elements it writes count as no overlap (see
    ``_reads_only_what_it_writes``); TVM refuses those too."""
    other = next((iv for iv in block.iter_vars if iv.kind is not IterKind.SPATIAL), None)
    if other is not None:
        return f"its iterator {other.var.name} is not spatial"
    if not local and not _dominant(state, block):
        return "another block of its scope writes its outputs too"
    if not _reads_only_what_it_writes(block):
        return "it reads elements of a buffer that it writes elsewhere"
    return None


def reduction_block_problem(state: ScheduleState, block: Block, local: bool = False):
    """``(condition number, reason)`` for the first of ``REDUCTION_CONDITIONS`` that ``block`` breaks,
    or None. A ``local`` check (compact data flow) skips dominance and takes an in-place update without
    init (decompose_reduction's update block) for a reduction."""
    if block.init is None and not (local and block.writes and _reads_only_what_it_writes(block)):
        return 1, "it has no T.init()"
    problem = affine_binding_problem(state, state.realize_of(block))
    if problem is not None:
        return 2, problem
    other = next((iv for iv in block.iter_vars if iv.kind not in (IterKind.SPATIAL, IterKind.REDUCE)), None)
    if other is not None:
        return 3, f"its iterator {other.var.name} is {other.kind.value}"
    if not local and not _dominant(state, block):
        return 4, "another block of its scope writes its outputs too"
    reduce_vars = {iv.var for iv in block.iter_vars if iv.kind is IterKind.REDUCE}
    for region in block.writes:
        if any(uses_var(r.min, lambda v: v in reduce_vars) for r in region.region):
            return 5, f"it writes {region.buffer.name} at an index that depends on a reduction iterator"
    return None


def _dominant(state: ScheduleState, block: Block) -> bool:
    scope_blocks = child_blocks(state.parent_block(state.realize_of(block)))
    return all(writers_of(scope_blocks, w.buffer) == [block] for w in block.writes)


def check_compact_data_flow(state: ScheduleState, loop: For, primitive_name: str) -> None:
    """Raise ``NotCompactDataFlowError`` unless every block directly under ``loop`` is a local complete
    or local reduction block (TVM's CheckSubtreeCompactDataflow)."""
    for block in child_blocks(loop):
        not_complete = complete_block_problem(state, block, local=True)
        not_reduction = reduction_block_problem(state, block, local=True)
        if not_complete is None or not_reduction is None:
            continue
        raise NotCompactDataFlowError(
            f"can't {verb(primitive_name)} loop {loop.loop_var.name}: the loop does not have compact "
            f"dataflow, because block {block.name!r} under it is neither a local complete block "
            f"({not_complete}) nor a local reduction block ({not_reduction[1]}), so its iterations may "
            "read what other iterations write",
            loop,
            block,
        )


# ---------------------------------------------------------------- stage pipelines


def _region_of(
    state: ScheduleState, block: Block, region: BufferRegion, analyzer: Analyzer, lca: For | None = None
) -> list:
    """What ``region`` of ``block`` covers over its loops below ``lca`` (None: all its loops in the
    scope), and over the thread loops whose threads share the buffer, as one interval per axis."""
    realize = state.realize_of(block)
    dom = loop_domains(state, realize, lca, region.buffer.scope)
    dims = relaxed_region(realize, region, dom, analyzer)
    return [IntervalSet(d.min, analyzer.simplify(d.min + d.extent - 1)) for d in dims]


def _same_interval(a: IntervalSet, b: IntervalSet, analyzer: Analyzer) -> bool:
    return analyzer.can_prove(a.min_value == b.min_value) and analyzer.can_prove(a.max_value == b.max_value)


def _merged(a: list[IntervalSet], b: list[IntervalSet], analyzer: Analyzer) -> list[IntervalSet] | None:
    """The union of boxes ``a`` and ``b`` when it is a box itself (equal on every axis but one, and
    overlapping or touching on that one), else None."""
    differing = [axis for axis, (x, y) in enumerate(zip(a, b)) if not _same_interval(x, y, analyzer)]
    if len(differing) > 1:
        return None
    if not differing:
        return a
    axis = differing[0]
    x, y = a[axis], b[axis]
    touching = analyzer.can_prove(x.min_value <= y.max_value + 1) and analyzer.can_prove(
        y.min_value <= x.max_value + 1
    )
    if not touching:
        return None
    return [*a[:axis], union([x, y], analyzer), *a[axis + 1 :]]


def _covers(have: list[list[IntervalSet]], need: list[IntervalSet], analyzer: Analyzer) -> bool:
    """Whether the boxes ``have`` together certainly contain ``need``: boxes are merged only where
    their union is a box, so a gap between two producers' regions is never papered over."""
    boxes = list(have)
    merged_some = True
    while merged_some and len(boxes) > 1:
        merged_some = False
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                both = _merged(boxes[i], boxes[j], analyzer)
                if both is not None:
                    boxes = [*boxes[:i], both, *boxes[i + 1 : j], *boxes[j + 1 :]]
                    merged_some = True
                    break
            if merged_some:
                break
    return any(
        all(
            analyzer.can_prove(box[axis].min_value <= want.min_value)
            and analyzer.can_prove(want.max_value <= box[axis].max_value)
            for axis, want in enumerate(need)
        )
        for box in boxes
    )


def _interval_text(sets: list[IntervalSet]) -> str:
    return ", ".join(f"{s.min_value!r}:{s.max_value + 1!r}" for s in sets)


def _common_loop(state: ScheduleState, blocks: list[Block]) -> For | None:
    """The innermost loop of the scope enclosing all of ``blocks``, or None."""
    nests = [state.loops_of(b) for b in blocks]
    common = None
    for loops in zip(*nests):
        if any(loop is not loops[0] for loop in loops):
            break
        common = loops[0]
    return common


def region_cover_problem(state: ScheduleState, blocks: list[Block], position: int, analyzer: Analyzer):
    """Why some read of ``blocks[position]`` is not covered by what the blocks before it in the same
    scope write (TVM's *region cover*), or None. Regions are compared per iteration of the loops the
    consumer shares with its producers: what a consumer reads in iteration ``i`` must be written in
    iteration ``i`` (a read of the previous iteration's data is not covered)."""
    consumer = blocks[position]
    earlier = blocks[:position]
    for read in consumer.reads:
        producers = writers_of(earlier, read.buffer)
        if not producers:
            continue
        lca = _common_loop(state, [consumer, *producers])
        have = [
            _region_of(state, p, w, analyzer, lca)
            for p in producers
            for w in p.writes
            if w.buffer is read.buffer
        ]
        need = _region_of(state, consumer, read, analyzer, lca)
        if not _covers(have, need, analyzer):
            written = " and ".join(f"[{_interval_text(sets)}]" for sets in have)
            return (
                f"block {consumer.name!r} reads {read.buffer.name}[{_interval_text(need)}], but the "
                f"blocks before it write only {written} of it"
            )
    return None


def stage_pipeline_problem(state: ScheduleState, scope: Block) -> str | None:
    """Why the blocks directly in ``scope`` are not a stage pipeline, or None."""
    analyzer = Analyzer()
    blocks = child_blocks(scope)
    for position, consumer in enumerate(blocks):
        problem = region_cover_problem(state, blocks, position, analyzer)
        if problem is not None:
            return problem
        for write in consumer.writes:
            reader = next(
                (b for b in blocks[:position] if any(r.buffer is write.buffer for r in b.reads)), None
            )
            if reader is not None and not any(w.buffer is write.buffer for w in reader.writes):
                return (
                    f"block {consumer.name!r} writes {write.buffer.name} after block {reader.name!r} read it "
                    "(a write-after-read dependency)"
                )
    return None


def check_stage_pipeline(state: ScheduleState, block: Block, primitive_name: str) -> None:
    """Raise ``NotStagePipelineError`` unless ``block``'s scope is a stage pipeline."""
    scope = state.parent_block(state.realize_of(block))
    problem = stage_pipeline_problem(state, scope)
    if problem is not None:
        raise NotStagePipelineError(
            f"can't {primitive_name} block {block.name!r}: the scope {scope.name!r} is not a stage "
            f"pipeline: {problem}. Make every block read only what the blocks before it write",
            block,
        )


def check_blocks_affine(state: ScheduleState, loop: For, primitive_name: str) -> None:
    """Every block under ``loop`` has an affine binding (TVM's check before a loop kind changes)."""
    for realize in realizes_under(loop.body):
        check_affine_binding(state, realize.block, primitive_name, loop)
