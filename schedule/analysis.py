"""Schedule analysis: what the primitive families ask of the program before they rewrite it.

The family files (loop_transformation.py, compute_at.py, ...) depend only on the
core (state, errors, instruction), on this module and on block_properties.py (TVM's
named block properties, built on this module), never on one another. What
more than one family needs is here: which blocks sit below a statement, which
write or read a buffer (``child_blocks``, ``writers_of``, ``producers_of``,
``consumers_of``, ``loads_of``, ``realizes_under``, ``guarded_stores``: which stores
of a buffer run under which condition, and ``predicate_bounds``: a block's
``T.where`` as loop ranges and index bounds), how a block's iterators are
bound to loops and which region its accesses cover over some of those loops
(``bindings_of``, ``loop_iters``, ``loop_domains``, ``relaxed_sets``,
``relaxed_region``), the loop checks shared by the loop-kind and loop
transformation primitives (``check_serial``, ``check_constant_extent`` and their
errors), the factor list split and loop_partition both take (``check_factor_list``,
``plain_factor``: positive ints and one None, -1 being TVM's spelling of it), and
``can_apply``, which asks another family's primitive whether it would apply
(sample_compute_location's candidates) without importing that family.
"""

from __future__ import annotations

from dataclasses import dataclass

from tir import (
    GE,
    GT,
    LE,
    LT,
    And,
    Block,
    BlockRealize,
    BufferLoad,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    IntImm,
    IterVar,
    PrimExpr,
    Range,
    Stmt,
    Var,
    Visitor,
    const,
    op,
)
from tir.arith import Analyzer
from tir.arith.int_set import IntervalSet, eval_set
from tir.buffer import Buffer, BufferRegion, storage_class
from tir.functor import collect_vars, stmts_pre_order, substitute, uses_var
from tir.structural import structural_equal

from .errors import ArgumentError, ScheduleError
from .instruction import PRIMITIVES, ExprRV
from .state import ScheduleState, child_stmts

# ---------------------------------------------------------------- errors of the shared loop checks


class WrongLoopKindError(ScheduleError):
    """The loop is not a plain serial loop (already parallel, vectorized, unrolled or bound)."""


class NonConstantExtentError(ScheduleError):
    """The primitive needs a loop whose extent is a known integer, and the loop's is symbolic."""


class NonPositiveFactorError(ScheduleError):
    """A split or partition factor is zero or negative."""


class NotSingleInferFactorError(ScheduleError):
    """More than one factor is None; only one can be inferred from the others."""

    tvm_phrase = "Only one factor can be specified as -1 or none"


# ---------------------------------------------------------------- blocks and buffers


def child_blocks(node: Stmt) -> list[Block]:
    """Blocks directly below a block's body or any other statement (not inside another block),
    in program order."""
    out: list[Block] = []
    stack = list(reversed(child_stmts(node.body if isinstance(node, Block) else node)))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, BlockRealize):
            out.append(stmt.block)
            continue
        stack.extend(reversed(child_stmts(stmt)))
    return out


def sibling_blocks(state: ScheduleState, block: Block) -> list[Block]:
    """The blocks of ``block``'s scope (``block`` included), in program order."""
    return child_blocks(state.parent_block(state.realize_of(block)))


def producers_of(state: ScheduleState, block: Block) -> list[Block]:
    """Blocks in the same scope that write a buffer ``block`` reads, before it."""
    reads = {r.buffer for r in block.reads}
    out = []
    for other in sibling_blocks(state, block):
        if other is block:
            break
        if any(w.buffer in reads for w in other.writes):
            out.append(other)
    return out


def consumers_of(state: ScheduleState, block: Block) -> list[Block]:
    """Blocks in the same scope that read a buffer ``block`` writes, after it."""
    writes = {w.buffer for w in block.writes}
    siblings = sibling_blocks(state, block)
    after = siblings[siblings.index(block) + 1 :]
    return [other for other in after if any(r.buffer in writes for r in other.reads)]


def writes_outside_scope(state: ScheduleState, block: Block) -> bool:
    """Whether ``block`` writes a buffer its scope does not allocate: TVM's output block."""
    allocated = state.parent_block(state.realize_of(block)).alloc_buffers
    return any(w.buffer not in allocated for w in block.writes)


def is_output_block(sch, block) -> bool:
    """TVM's ``tir.schedule.analysis.is_output_block(sch, block)``: whether the block behind the
    handle writes a buffer its scope does not allocate (a function output). Records nothing.

    >>> is_output_block(sch, sch.get_block("C"))    # doctest: +SKIP
    True
    """
    return writes_outside_scope(sch.state, sch.get(block))


def writers_of(blocks: list[Block], buffer: Buffer) -> list[Block]:
    """The blocks of ``blocks`` that write ``buffer``."""
    return [b for b in blocks if any(w.buffer is buffer for w in b.writes)]


def loads_of(node, buffer: Buffer | None = None) -> list[BufferLoad]:
    """Every load of ``buffer`` (None: of any buffer) in ``node``, inner loads first."""
    loads: list[BufferLoad] = []

    class _Finder(Visitor):
        def visit_BufferLoad(self, load: BufferLoad) -> None:
            self.generic_visit(load)
            if buffer is None or load.buffer is buffer:
                loads.append(load)

    _Finder().visit(node)
    return loads


def accesses_of(block: Block) -> list[tuple[Buffer, tuple[PrimExpr, ...], bool]]:
    """Every load and store in ``block``'s init and body: ``(buffer, indices, is_store)``."""
    found: list[tuple[Buffer, tuple[PrimExpr, ...], bool]] = []

    class _Walk(Visitor):
        def visit_BufferLoad(self, load: BufferLoad) -> None:
            found.append((load.buffer, load.indices, False))
            self.generic_visit(load)

        def visit_BufferStore(self, store: BufferStore) -> None:
            found.append((store.buffer, store.indices, True))
            self.generic_visit(store)

    for part in (block.init, block.body):
        if part is not None:
            _Walk().visit(part)
    return found


def realizes_under(stmt) -> list[BlockRealize]:
    """Every BlockRealize below ``stmt``, nested blocks included, in program order."""
    return [s for s in stmts_pre_order(stmt) if isinstance(s, BlockRealize)]


@dataclass(frozen=True)
class GuardedStore:
    """A store of a buffer inside a block, with the condition under which it runs (the predicates of
    the nested blocks and the ``if`` conditions around it) and its indices, both written in the
    block's own iterators (nested bindings substituted). ``local_vars`` are the variables of loops
    inside the block that either uses."""

    guard: PrimExpr
    indices: tuple[PrimExpr, ...]
    local_vars: frozenset[Var]


def guarded_stores(block: Block, buffer: Buffer) -> list[GuardedStore]:
    """Every store of ``buffer`` in ``block`` (its init included), with its guard."""
    found: list[GuardedStore] = []

    class _Walk(Visitor):
        def __init__(self):
            self.guard: PrimExpr = const(True)
            self.bindings: dict[Var, PrimExpr] = {}
            self.loops: set[Var] = set()

        def _under(self, condition: PrimExpr, node) -> None:
            saved, self.guard = self.guard, op.logical_and(self.guard, substitute(condition, self.bindings))
            self.visit(node)
            self.guard = saved

        def visit_For(self, loop: For) -> None:
            self.loops.add(loop.loop_var)
            self.generic_visit(loop)

        def visit_IfThenElse(self, branch: IfThenElse) -> None:
            self._under(branch.condition, branch.then_case)
            if branch.else_case is not None:
                self._under(op.logical_not(branch.condition), branch.else_case)

        def visit_BlockRealize(self, realize: BlockRealize) -> None:
            saved = dict(self.bindings)
            for iv, value in zip(realize.block.iter_vars, realize.iter_values):
                self.bindings[iv.var] = substitute(value, saved)
            self._under(realize.predicate, realize.block)
            self.bindings = saved

        def visit_BufferStore(self, store: BufferStore) -> None:
            if store.buffer is buffer:
                indices = tuple(substitute(i, self.bindings) for i in store.indices)
                used = set().union(*(collect_vars(e) for e in (self.guard, *indices)))
                found.append(GuardedStore(self.guard, indices, frozenset(used & self.loops)))
            self.generic_visit(store)

    walk = _Walk()
    for part in (block.init, block.body):
        if part is not None:
            walk.visit(part)
    return found


# ---------------------------------------------------------------- bindings and regions

# TVM's storage ranks: a buffer is shared by every thread of a level at or below its rank.
_STORAGE_RANK = {"global": 0, "shared": 1, "local": 3}


def _thread_rank(tag: str) -> int:
    return 0 if tag.startswith("blockIdx") else 1


def bindings_of(realize: BlockRealize) -> dict[Var, PrimExpr]:
    """Each block iterator's bound value."""
    return {iv.var: value for iv, value in zip(realize.block.iter_vars, realize.iter_values)}


def loop_iters(state: ScheduleState, block: Block, symbolic: bool = False) -> list[IterVar] | None:
    """The iterator each loop around ``block`` drives (outermost first), or None when the loops are
    not one per iterator: a loop driving two iterators, an iterator bound to several loops or to an
    expression, a predicate, or a loop that is not a plain serial loop from 0 (of constant extent,
    unless ``symbolic``)."""
    realize = state.realize_of(block)
    loops = state.loops_of(block)
    predicate = realize.predicate
    if len(loops) != len(block.iter_vars) or not (isinstance(predicate, IntImm) and predicate.value == 1):
        return None
    iter_of: dict[Var, IterVar] = {}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if not isinstance(value, Var) or value in iter_of:
            return None
        iter_of[value] = iv
    driven = []
    for loop in loops:
        plain = loop.kind is ForKind.SERIAL and isinstance(loop.min, IntImm) and loop.min.value == 0
        if loop.loop_var not in iter_of or not plain or not (symbolic or isinstance(loop.extent, IntImm)):
            return None
        driven.append(iter_of[loop.loop_var])
    return driven


def loop_domains(
    state: ScheduleState, realize: BlockRealize, high_exclusive: For | None, relax_scope: str
) -> dict[Var, Range]:
    """Ranges of the loops between ``realize`` and ``high_exclusive`` (None: the enclosing block).

    For a non-global ``relax_scope``, the thread loops further out whose threads share
    such a buffer are added: threadIdx and vthread loops for "shared", none for "local".
    """
    dom: dict[Var, Range] = {}
    ancestors = state.ancestors(realize)
    rest = len(ancestors)
    for i, node in enumerate(ancestors):
        if node is high_exclusive or isinstance(node, Block):
            rest = i
            break
        if isinstance(node, For):
            dom[node.loop_var] = Range(node.min, node.extent)
    rank = _STORAGE_RANK[storage_class(relax_scope)]
    if rank == 0:
        return dom
    for node in ancestors[rest:]:
        if (
            isinstance(node, For)
            and node.kind is ForKind.THREAD_BINDING
            and rank <= _thread_rank(node.thread_tag)
        ):
            dom[node.loop_var] = Range(node.min, node.extent)
    return dom


def relaxed_sets(
    realize: BlockRealize, region: BufferRegion, dom: dict[Var, Range], analyzer: Analyzer
) -> list[IntervalSet]:
    """Per dimension, the indices ``region`` covers with the bindings substituted and ``dom`` varying."""
    binding = bindings_of(realize)
    # The loop ranges as sets once, not once per index (every eval_set would convert them all).
    sets = {var: IntervalSet.from_range(r, analyzer) for var, r in dom.items()}
    out = []
    for r in region.region:
        low = eval_set(substitute(r.min, binding), sets, analyzer).min_value
        high = eval_set(substitute(r.min + r.extent - 1, binding), sets, analyzer).max_value
        out.append(IntervalSet(low, high))
    return out


def relaxed_region(
    realize: BlockRealize, region: BufferRegion, dom: dict[Var, Range], analyzer: Analyzer
) -> tuple[Range, ...]:
    """``relaxed_sets`` as Ranges, cut at the buffer's edges.

    A side is cut when it is unbounded or a constant outside the buffer: a split
    whose factors over-cover the extent relaxes to indices past the end, which
    the block's predicate never lets it touch.
    """
    ranges = []
    for s, extent in zip(relaxed_sets(realize, region, dom, analyzer), region.buffer.shape):
        low = s.min_value if isinstance(s.min_value, PrimExpr) else const(0, extent.dtype)
        high = s.max_value if isinstance(s.max_value, PrimExpr) else extent - 1
        if isinstance(low, IntImm) and low.value < 0:
            low = const(0, extent.dtype)
        if isinstance(high, IntImm) and isinstance(extent, IntImm) and high.value >= extent.value:
            high = extent - 1
        ranges.append(Range(low, analyzer.simplify(high - low + 1)))
    return tuple(ranges)


def predicate_bounds(
    realize: BlockRealize, region: BufferRegion, dom: dict[Var, Range], analyzer: Analyzer
) -> tuple[dict[Var, Range], dict[int, tuple]] | PrimExpr:
    """The block's predicate as bounds: loop ranges in ``dom`` narrowed by conditions on one loop
    (``x < 3``), and per axis of ``region`` an interval from conditions on that axis's index
    (``i_0 * 32 + i_1 < 100`` where the index is ``i_0 * 32 + i_1``). Returns the first condition that
    is neither (it can't be turned into a region) instead."""
    dom = dict(dom)
    clips: dict[int, tuple] = {}  # axis -> (lowest, highest), None where unbounded
    binding = bindings_of(realize)
    indices = [analyzer.simplify(substitute(r.min, binding)) for r in region.region]
    for condition in _conjuncts(realize.predicate):
        if type(condition) not in (LT, LE, GT, GE):
            return condition
        lhs, rhs = condition.a, condition.b
        if uses_var(rhs, lambda v: v in dom):
            return condition
        high = rhs - 1 if isinstance(condition, LT) else rhs if isinstance(condition, LE) else None
        low = rhs + 1 if isinstance(condition, GT) else rhs if isinstance(condition, GE) else None
        if isinstance(lhs, Var) and lhs in dom and high is not None and isinstance(rhs, IntImm):
            loop_range = dom[lhs]
            extent = analyzer.simplify(op.min_value(loop_range.extent, high - loop_range.min + 1))
            dom[lhs] = Range(loop_range.min, extent)
            continue
        axis = next((a for a, i in enumerate(indices) if structural_equal(i, analyzer.simplify(lhs))), None)
        if axis is None or not _is_one(region.region[axis].extent) or _shares_loops(indices, axis, dom):
            return condition
        known_low, known_high = clips.get(axis, (None, None))
        clips[axis] = (known_low if low is None else low, known_high if high is None else high)
    return dom, clips


def _is_one(extent: PrimExpr) -> bool:
    return isinstance(extent, IntImm) and extent.value == 1


def _shares_loops(indices: list[PrimExpr], axis: int, dom: dict[Var, Range]) -> bool:
    """Whether the index of ``axis`` uses a loop another axis's index uses too: clipping that axis
    alone would then leave elements of the others that no iteration writes."""
    mine = {v for v in collect_vars(indices[axis]) if v in dom}
    return any(uses_var(index, lambda x: x in mine) for other, index in enumerate(indices) if other != axis)


def _conjuncts(condition: PrimExpr) -> list[PrimExpr]:
    if isinstance(condition, And):
        return _conjuncts(condition.a) + _conjuncts(condition.b)
    if isinstance(condition, IntImm) and condition.value:
        return []
    return [condition]


# ---------------------------------------------------------------- loop checks


def verb(primitive_name: str) -> str:
    """The primitive's name as a verb in a sentence ("can't parallelize loop i")."""
    return "parallelize" if primitive_name == "parallel" else primitive_name


def describe_kind(loop: For) -> str:
    """The loop's kind in words: "parallel", "bound to threadIdx.x", ..."""
    if loop.kind is ForKind.THREAD_BINDING:
        return f"bound to {loop.thread_tag}"
    return {ForKind.PARALLEL: "parallel", ForKind.VECTORIZED: "vectorized", ForKind.UNROLLED: "unrolled"}.get(
        loop.kind, loop.kind.value
    )


def check_serial(loop: For, primitive_name: str, fix: str) -> None:
    """Raise ``WrongLoopKindError`` (ending with ``fix``) unless ``loop`` is serial."""
    if loop.kind is not ForKind.SERIAL:
        name = loop.loop_var.name
        raise WrongLoopKindError(
            f"can't {verb(primitive_name)} loop {name}: it is {describe_kind(loop)}, and {primitive_name} "
            f"needs a serial loop. {fix}",
            loop,
        )


def check_constant_extent(loop: For, primitive_name: str) -> int:
    """The loop's extent, or ``NonConstantExtentError`` when it is symbolic."""
    if not isinstance(loop.extent, IntImm):
        name = loop.loop_var.name
        raise NonConstantExtentError(
            f"can't {primitive_name} loop {name}: its extent {loop.extent!r} is not a constant, and "
            f"{primitive_name} needs a loop with a known trip count. Schedule a version of the "
            "function with constant shapes",
            loop,
        )
    return loop.extent.value


def plain_factor(factor):
    """A factor as a trace records it: sampled handles and None stay, integer-like values (numpy
    ints, IntImm) become ints, and -1, TVM's spelling of None (the factor to infer), becomes None."""
    if factor is None or isinstance(factor, (ExprRV, bool)) or not hasattr(factor, "__index__"):
        return factor
    return None if int(factor) == -1 else int(factor)


def check_factor_list(loop: For, factors, primitive_name: str) -> list[int | None]:
    """split's and loop_partition's factors checked as TVM checks them: a non-empty list of positive
    ints (sampled values resolved) with at most one None, which -1 also spells; the list, -1 as None."""
    name = loop.loop_var.name
    if not isinstance(factors, (list, tuple)) or not factors:
        raise ArgumentError(
            f"{primitive_name} needs a non-empty list of factors for loop {name} (ints, sampled values or "
            f"one None), got {factors!r}",
            loop,
        )
    factors = [None if f == -1 and isinstance(f, int) and not isinstance(f, bool) else f for f in factors]
    if sum(f is None for f in factors) > 1:
        raise NotSingleInferFactorError(
            f"can't {primitive_name} loop {name} by {list(factors)}: only one factor can be None "
            "(inferred from the others); give the others as integers",
            loop,
        )
    for position, f in enumerate(factors):
        if f is None:
            continue
        if isinstance(f, bool) or not isinstance(f, int):
            raise ArgumentError(
                f"can't {primitive_name} loop {name}: the factor at position {position} is {f!r} "
                f"({type(f).__name__}); factors must be positive integers, sampled values or None",
                loop,
            )
        if f <= 0:
            raise NonPositiveFactorError(
                f"can't {primitive_name} loop {name}: the factor at position {position} is {f}; factors "
                "must be positive",
                loop,
            )
    return factors


# ---------------------------------------------------------------- asking another primitive


def can_apply(state: ScheduleState, kind: str, **args) -> bool:
    """Whether primitive ``kind`` would apply to ``args`` (nodes, not handles) now; ``state`` is
    left as it is. A primitive registered with a ``check`` (its legality analysis) is asked that;
    any other is applied to a scratch copy of the state (the IR is immutable, so nothing leaks)."""
    prim = PRIMITIVES[kind]
    try:
        if prim.check is not None:
            prim.check(state, **args)
        else:
            prim.fn(ScheduleState(state.mod, state.func_name), **args)
    except ScheduleError:
        return False
    return True
