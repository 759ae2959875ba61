"""Schedule analysis: what the primitive families ask of the program before they rewrite it.

The family files (loop_transformation.py, compute_at.py, ...) depend only on the
core (state, errors, instruction) and on this module, never on one another. What
more than one family needs is here: which blocks sit below a statement, which
write or read a buffer (``child_blocks``, ``writers_of``, ``producers_of``,
``consumers_of``, ``loads_of``, ``realizes_under``), how a block's iterators are
bound to loops and which region its accesses cover over some of those loops
(``bindings_of``, ``loop_iters``, ``loop_domains``, ``relaxed_sets``,
``relaxed_region``), the loop checks shared by the loop-kind and loop
transformation primitives (``check_serial``, ``check_constant_extent`` and their
errors), and ``can_apply``, which asks another family's primitive whether it
would apply (sample_compute_location's candidates) without importing that family.
"""

from __future__ import annotations

from tir import (
    Block,
    BlockRealize,
    BufferLoad,
    For,
    ForKind,
    IntImm,
    IterVar,
    PrimExpr,
    Range,
    Stmt,
    Var,
    Visitor,
    const,
)
from tir.arith import Analyzer
from tir.arith.int_set import IntervalSet, eval_set
from tir.buffer import Buffer, BufferRegion
from tir.functor import stmts_pre_order, substitute

from .errors import ScheduleError
from .instruction import PRIMITIVES
from .state import ScheduleState, child_stmts

# ---------------------------------------------------------------- errors of the shared loop checks


class WrongLoopKindError(ScheduleError):
    """The loop is not a plain serial loop (already parallel, vectorized, unrolled or bound)."""


class NonConstantExtentError(ScheduleError):
    """The primitive needs a loop whose extent is a known integer, and the loop's is symbolic."""


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


def writers_of(blocks: list[Block], buffer: Buffer) -> list[Block]:
    """The blocks of ``blocks`` that write ``buffer``."""
    return [b for b in blocks if any(w.buffer is buffer for w in b.writes)]


def loads_of(node, buffer: Buffer) -> list[BufferLoad]:
    """Every load of ``buffer`` in ``node``, inner loads first."""
    loads: list[BufferLoad] = []

    class _Finder(Visitor):
        def visit_BufferLoad(self, load: BufferLoad) -> None:
            self.generic_visit(load)
            if load.buffer is buffer:
                loads.append(load)

    _Finder().visit(node)
    return loads


def realizes_under(stmt) -> list[BlockRealize]:
    """Every BlockRealize below ``stmt``, nested blocks included, in program order."""
    return [s for s in stmts_pre_order(stmt) if isinstance(s, BlockRealize)]


# ---------------------------------------------------------------- bindings and regions

# TVM's storage ranks: a buffer is shared by every thread of a level at or below its rank.
_STORAGE_RANK = {"global": 0, "shared": 1, "local": 3}


def _thread_rank(tag: str) -> int:
    return 0 if tag.startswith("blockIdx") else 1


def bindings_of(realize: BlockRealize) -> dict[Var, PrimExpr]:
    """Each block iterator's bound value."""
    return {iv.var: value for iv, value in zip(realize.block.iter_vars, realize.iter_values)}


def loop_iters(state: ScheduleState, block: Block) -> list[IterVar] | None:
    """The iterator each loop around ``block`` drives (outermost first), or None when the loops are
    not one per iterator: a loop driving two iterators, an iterator bound to several loops or to an
    expression, a predicate, or a loop that is not a plain serial loop from 0."""
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
        if loop.loop_var not in iter_of or not plain or not isinstance(loop.extent, IntImm):
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
    rank = _STORAGE_RANK[relax_scope]
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
