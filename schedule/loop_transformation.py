"""Loop transformations: split, fuse, reorder (TVM's loop_transformation family).

They reshape a loop nest without changing which block instances run: split
makes ``i`` into ``i_0, i_1`` and rebinds ``vi = i`` to ``i_0 * 128 + i_1``
(adding ``T.where(i_0 * 128 + i_1 < extent)`` when the factors over-cover the
extent), fuse makes ``i, j`` into ``i_j_fused`` with ``fused // n`` and
``fused % n`` bindings, reorder permutes loops of a single-branch nest. Block
iterators, and so the blocks' bodies and read/write regions, stay as they were;
only the bindings in each ``BlockRealize`` change, simplified with the analyzer
under the loop ranges so the script reads like TVM's.
"""

from __future__ import annotations

from dataclasses import replace
from math import prod

from tir import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    And,
    Block,
    BlockRealize,
    For,
    ForKind,
    IntImm,
    IterKind,
    Mutator,
    Not,
    Or,
    PrimExpr,
    Range,
    Var,
    op,
)
from tir import dtype as _dt
from tir.arith import Analyzer
from tir.functor import collect_vars, substitute, uses_var

from .analysis import NonPositiveFactorError as NonPositiveFactorError  # this family's error
from .analysis import NotSingleInferFactorError as NotSingleInferFactorError  # this family's error
from .analysis import check_factor_list, check_serial, plain_factor, realizes_under
from .block_properties import check_affine_binding
from .errors import ArgumentError, ScheduleError
from .instruction import ExprRV, LoopRV, primitive
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class WrongFactorProductError(ScheduleError):
    """The split factors multiply to less than the loop's extent, so some iterations would be lost."""

    tvm_phrase = "The product of factors is not larger than or equal to the extent of loop"


class LoopNotStartingAtZeroError(ScheduleError):
    """The loop starts at a value other than 0 (``range(a, b)``); split and fuse need loops from 0."""

    tvm_phrase = "The primitive only supports loop starting with 0"


class AnnotatedLoopError(ScheduleError):
    """The loop has annotations that split or fuse would lose."""

    tvm_phrase = "The primitive can't be applied because the loop has annotation or thread binding"


class NotOnlyChildError(ScheduleError):
    """A loop to fuse has more in its body than the next loop to fuse."""

    tvm_phrase = "The inner loop is not the only child of outer loop"


class LoopsNotAChainError(ScheduleError):
    """The loops are not nested one in another along a single-branch path inside one block."""

    tvm_phrase = "The loops are not in a chain"


class DuplicateLoopError(ScheduleError):
    """The same loop is given twice."""

    tvm_phrase = "Some loop appears in the input array for multiple times"


class DependentLoopError(ScheduleError):
    """A loop's extent or start depends on a loop that the rewrite would put inside it, or merge with it."""

    tvm_phrase = "is dependent on another loop"


class MixedReductionLoopError(ScheduleError):
    """reorder: a moved loop drives both spatial and reduction iterators of a block with an init."""


class OpaqueIterTypeError(ScheduleError):
    """A block under the loops has an opaque iterator, whose iterations may not be reordered."""

    tvm_phrase = "have block iter type other than data-parallel or reduction"


# ---------------------------------------------------------------- helpers


def _check_plain(loop: For, primitive_name: str) -> None:
    """A serial loop from 0 without annotations: what split and fuse can rewrite without loss."""
    name = loop.loop_var.name
    check_serial(
        loop,
        primitive_name,
        f"Apply {primitive_name} first and then give the new loops their kinds (bind after split)",
    )
    if loop.annotations:
        raise AnnotatedLoopError(
            f"can't {primitive_name} loop {name}: it has the annotations {loop.annotations}, which "
            f"{primitive_name} would drop. Remove them with unannotate, {primitive_name}, then annotate "
            "the new loops",
            loop,
        )
    if not (isinstance(loop.min, IntImm) and loop.min.value == 0):
        raise LoopNotStartingAtZeroError(
            f"can't {primitive_name} loop {name}: it starts at {loop.min!r}, and {primitive_name} needs "
            f"loops that start at 0. Write it as range({loop.extent!r}) and add the start to the uses "
            f"of {name}",
            loop,
        )


def _is_unit(extent: PrimExpr) -> bool:
    return isinstance(extent, IntImm) and extent.value == 1


def _bind_loop(
    analyzer: Analyzer, var: Var, start: PrimExpr, extent: PrimExpr, preserve_unit_iters: bool
) -> None:
    """Tell the analyzer a loop's range; a unit loop kept in bindings stays unknown, or it would fold to 0."""
    if not (preserve_unit_iters and _is_unit(extent)):
        analyzer.bind(var, Range(start, extent))


def _outer_analyzer(state: ScheduleState, stmt, preserve_unit_iters: bool) -> Analyzer:
    """An analyzer that knows the ranges of the loops around ``stmt``."""
    analyzer = Analyzer()
    for outer in state.ancestors(stmt):
        if isinstance(outer, For):
            _bind_loop(analyzer, outer.loop_var, outer.min, outer.extent, preserve_unit_iters)
    return analyzer


_COMPARE = {LT: op.lt, LE: op.le, GT: op.gt, GE: op.ge, EQ: op.eq, NE: op.ne}


def _simplify_condition(analyzer: Analyzer, cond: PrimExpr) -> PrimExpr:
    """Simplify the index operands of a predicate, keeping its comparisons as written."""
    if isinstance(cond, And):
        return op.logical_and(_simplify_condition(analyzer, cond.a), _simplify_condition(analyzer, cond.b))
    if isinstance(cond, Or):
        return op.logical_or(_simplify_condition(analyzer, cond.a), _simplify_condition(analyzer, cond.b))
    if isinstance(cond, Not):
        return op.logical_not(_simplify_condition(analyzer, cond.a))
    if type(cond) in _COMPARE and _dt.is_integer(cond.a.dtype):
        return _COMPARE[type(cond)](analyzer.simplify(cond.a), analyzer.simplify(cond.b))
    return cond


class _LoopVarRewriter(Mutator):
    """Replaces the old loop variables below the rewritten loops and re-simplifies the bindings.

    Only bindings that change are simplified (under every loop range known at that
    point), so blocks the rewrite does not touch print exactly as before. With
    ``preserve_unit_iters=False`` loops of extent 1 are dropped from those bindings,
    as TVM does. ``predicate`` is conjoined to the first BlockRealizes met (not to
    blocks nested inside them).
    """

    def __init__(
        self,
        vmap: dict[Var, PrimExpr],
        analyzer: Analyzer,
        preserve_unit_iters: bool,
        unit_vars: set[Var],
        predicate: PrimExpr | None = None,
    ):
        self.vmap = vmap
        self.analyzer = analyzer
        self.preserve_unit_iters = preserve_unit_iters
        self.unit_vars = unit_vars
        self.predicate = predicate

    def visit_Var(self, var: Var) -> PrimExpr:
        return self.vmap.get(var, var)

    def visit_For(self, loop: For) -> For:
        start, extent = self.visit(loop.min), self.visit(loop.extent)
        _bind_loop(self.analyzer, loop.loop_var, start, extent, self.preserve_unit_iters)
        if _is_unit(extent):
            self.unit_vars.add(loop.loop_var)
        body = self.visit(loop.body)
        if start is loop.min and extent is loop.extent and body is loop.body:
            return loop
        return replace(loop, min=start, extent=extent, body=body)

    def _rebind(self, value: PrimExpr) -> PrimExpr:
        new = substitute(value, self.vmap)
        if new is value:
            return value
        if not self.preserve_unit_iters:
            new = substitute(new, {v: IntImm(0, v.dtype) for v in self.unit_vars})
        return self.analyzer.simplify(new)

    def visit_BlockRealize(self, realize: BlockRealize) -> BlockRealize:
        values = tuple(self._rebind(v) for v in realize.iter_values)
        predicate = substitute(realize.predicate, self.vmap)
        if predicate is not realize.predicate:
            predicate = _simplify_condition(self.analyzer, predicate)
        if self.predicate is not None:
            predicate = op.logical_and(predicate, self.predicate)
        outer_predicate, self.predicate = self.predicate, None
        block = self.visit(realize.block)
        self.predicate = outer_predicate
        if (
            block is realize.block
            and predicate is realize.predicate
            and all(a is b for a, b in zip(values, realize.iter_values))
        ):
            return realize
        return BlockRealize(values, predicate, block)


# ---------------------------------------------------------------- split


def _check_factors(loop: For, factors, extent: int | None) -> list[int | None]:
    """The factors as ints, the one None (if any) inferred as ceil(extent / product of the others);
    for a symbolic extent (``extent`` None) the None stays, to become an expression of the extent."""
    factors = check_factor_list(loop, factors, "split")
    known = prod(f for f in factors if f is not None)
    if extent is None:
        return factors
    if None in factors:
        return [-(-extent // known) if f is None else f for f in factors]
    if known < extent:
        raise WrongFactorProductError(
            f"can't split loop {loop.loop_var.name} of extent {extent} by {factors}: the factors multiply "
            f"to {known}, fewer iterations than the loop has. Make the product at least {extent}, or write "
            "None for one factor to infer it",
            loop,
        )
    return factors


def _split_extents(
    analyzer: Analyzer, extent: PrimExpr, sizes: list[int | None], dtype: str
) -> list[PrimExpr]:
    """The new loops' extents; the factor left as None (a symbolic extent) is ceil(extent / the others)."""
    known = prod(size for size in sizes if size is not None)
    inferred = analyzer.simplify(op.floordiv(op.add(op.cast(dtype, extent), known - 1), known))
    return [inferred if size is None else IntImm(size, dtype) for size in sizes]


@primitive()
def split(
    state: ScheduleState,
    loop: For,
    factors: list,
    preserve_unit_iters: bool = True,
    disable_predication: bool = False,
) -> list[For]:
    _check_plain(loop, "split")
    symbolic = not isinstance(loop.extent, IntImm)
    sizes = _check_factors(loop, factors, None if symbolic else loop.extent.value)

    old_var = loop.loop_var
    dtype = old_var.dtype
    new_vars = [Var(f"{old_var.name}_{position}", dtype) for position in range(len(sizes))]
    analyzer = _outer_analyzer(state, loop, preserve_unit_iters)
    extents = _split_extents(analyzer, loop.extent, sizes, dtype)
    horner: PrimExpr = IntImm(0, dtype)
    for var, size in zip(new_vars, extents):
        _bind_loop(analyzer, var, IntImm(0, dtype), size, preserve_unit_iters)
        horner = horner * size + var
    fused = analyzer.simplify(horner)
    # The new loops cover [0, product) exactly, so they stay in range iff the product is the extent
    # (for a symbolic extent, when the analyzer proves the guard, as TVM). The guard keeps the
    # nested form TVM prints, `(i0 * 2 + i1) * 3 + i2 < 128`.
    exact = not symbolic and prod(sizes) == loop.extent.value
    if symbolic:  # n * 32 split by 32: the inferred n times 32 is the extent itself
        exact = analyzer.can_prove_equal(prod(extents), op.cast(dtype, loop.extent))
    guard = op.lt(horner, op.cast(dtype, loop.extent))
    needed = not (exact or disable_predication or (symbolic and analyzer.can_prove(guard)))
    predicate = guard if needed else None

    unit_vars = {var for var, size in zip(new_vars, sizes) if size == 1}
    rewriter = _LoopVarRewriter({old_var: fused}, analyzer, preserve_unit_iters, unit_vars, predicate)
    body = rewriter.visit(loop.body)
    for var, size in reversed(list(zip(new_vars, extents))):
        body = For(var, IntImm(0, dtype), size, ForKind.SERIAL, body)
    state.replace({loop: body})
    return [state.index.loops[var] for var in new_vars]


# ---------------------------------------------------------------- fuse and reorder: chains of loops


def _check_distinct(loops: list[For], primitive_name: str) -> None:
    seen: set[Var] = set()
    for loop in loops:
        if loop.loop_var in seen:
            raise DuplicateLoopError(
                f"can't {primitive_name}: loop {loop.loop_var.name} is given more than once; give each "
                "loop once",
                loop,
            )
        seen.add(loop.loop_var)


def _check_not_dependent(inner: For, outer_loops: list[For], primitive_name: str, fix: str) -> None:
    """``inner``'s start and extent use none of the variables of ``outer_loops``."""
    for outer in outer_loops:
        var = outer.loop_var
        if uses_var(inner.extent, lambda v, var=var: v is var) or uses_var(
            inner.min, lambda v, var=var: v is var
        ):
            raise DependentLoopError(
                f"can't {primitive_name}: the range of loop {inner.loop_var.name} "
                f"(extent {inner.extent!r}) depends on loop {var.name}. {fix}",
                inner,
                outer,
            )


def _check_fuse_chain(state: ScheduleState, loops: list[For]) -> None:
    for outer, inner in zip(loops, loops[1:]):
        if outer.body is inner:
            continue
        parent = state.parent(inner)
        names = f"{outer.loop_var.name} and {inner.loop_var.name}"
        if (
            parent is not None
            and state.parent(parent) is outer
            and not isinstance(parent, (For, Block, BlockRealize))
        ):
            raise NotOnlyChildError(
                f"can't fuse loops {names}: loop {outer.loop_var.name} has other statements in its body "
                f"besides loop {inner.loop_var.name}. Fuse needs each loop to be the only child of the "
                "one before it",
                outer,
                inner,
            )
        raise LoopsNotAChainError(
            f"can't fuse loops {names}: loop {inner.loop_var.name} is not directly inside loop "
            f"{outer.loop_var.name}. Give consecutive nested loops, outermost first (as get_loops lists "
            "them)",
            outer,
            inner,
        )


@primitive(varargs="loops")
def fuse(state: ScheduleState, loops: list[For], preserve_unit_iters: bool = True) -> For:
    if not loops:
        raise ArgumentError("fuse needs at least one loop")
    _check_distinct(loops, "fuse")
    for position, loop in enumerate(loops):
        _check_plain(loop, "fuse")
        _check_not_dependent(
            loop, loops[:position], "fuse", "Loops whose ranges depend on each other can't be fused"
        )
    _check_fuse_chain(state, loops)

    dtype = "int64" if any(loop.loop_var.dtype == "int64" for loop in loops) else loops[0].loop_var.dtype
    fused_var = Var("_".join(loop.loop_var.name for loop in loops) + "_fused", dtype)
    analyzer = _outer_analyzer(state, loops[0], preserve_unit_iters)
    extent = analyzer.simplify(prod((op.cast(dtype, loop.extent) for loop in loops), start=IntImm(1, dtype)))
    _bind_loop(analyzer, fused_var, IntImm(0, dtype), extent, preserve_unit_iters)
    vmap: dict[Var, PrimExpr] = {}
    lower: PrimExpr = IntImm(1, dtype)
    for position in range(len(loops) - 1, -1, -1):
        loop = loops[position]
        loop_extent = op.cast(dtype, loop.extent)
        if _is_unit(loop_extent):
            value: PrimExpr = IntImm(0, dtype)  # as TVM: a unit loop is 0 whatever preserve_unit_iters says
        elif position == 0:
            value = fused_var // lower
        else:
            value = fused_var % (lower * loop_extent) // lower
        vmap[loop.loop_var] = op.cast(loop.loop_var.dtype, analyzer.simplify(value))
        lower = lower * loop_extent

    rewriter = _LoopVarRewriter(vmap, analyzer, preserve_unit_iters, set())
    body = rewriter.visit(loops[-1].body)
    new_loop = For(fused_var, IntImm(0, dtype), extent, ForKind.SERIAL, body)
    state.replace({loops[0]: new_loop})
    return state.index.loops[fused_var]


def _reorder_chain(state: ScheduleState, loops: list[For]) -> list[For]:
    """Every loop from the outermost given loop down to the innermost, checked to be a single-branch nest."""
    by_depth = sorted(loops, key=lambda loop: len(state.ancestors(loop)))
    top, bottom = by_depth[0], by_depth[-1]
    above_bottom = state.ancestors(bottom)
    for loop in by_depth[:-1]:
        if not any(a is loop for a in above_bottom):
            raise LoopsNotAChainError(
                f"can't reorder: loops {loop.loop_var.name} and {bottom.loop_var.name} are not nested one "
                "in the other. Reorder loops of one loop nest (as get_loops lists them for one block)",
                loop,
                bottom,
            )
    chain = [bottom]
    for node in above_bottom:
        if node is top:
            chain.append(top)
            break
        if isinstance(node, For):
            chain.append(node)
            continue
        if isinstance(node, (Block, BlockRealize)):
            block = node.block if isinstance(node, BlockRealize) else node
            reason = f"block {block.name!r} lies between them"
        else:
            owner = next(a for a in state.ancestors(node) if isinstance(a, For))
            below = chain[-1].loop_var.name
            reason = f"loop {owner.loop_var.name} has other statements in its body besides loop {below}"
        raise LoopsNotAChainError(
            f"can't reorder loops {top.loop_var.name} and {bottom.loop_var.name}: {reason}. Reorder "
            "needs a single-branch nest of loops (each the only child of the one above)",
            top,
            bottom,
        )
    return chain[::-1]


def _check_blocks_below(state: ScheduleState, top: For, bottom: For) -> None:
    """TVM's conditions on the blocks under the loops: no opaque iterator, and bindings that are
    affine over all their loops or at least over the loops from ``top`` down."""
    above_top = next((node for node in state.ancestors(top) if isinstance(node, (For, Block))), None)
    for realize in realizes_under(bottom.body):
        for iv in realize.block.iter_vars:
            if iv.kind in (IterKind.OPAQUE, IterKind.SCAN):
                raise OpaqueIterTypeError(
                    f"can't reorder loops around block {realize.block.name!r}: its iterator {iv.var.name} is "
                    f"{'opaque' if iv.kind is IterKind.OPAQUE else 'a scan'}, so the order of its iterations "
                    "may matter. Declare it spatial or reduce if it is one",
                    realize.block,
                )
        check_affine_binding(
            state, realize.block, "reorder", top, above_top if isinstance(above_top, For) else None
        )


def _check_init_stays_first(bottom: For, loops: list[For], given: set) -> None:
    """A block with an init runs it at the first instance of each output (every reduction iterator at
    its start). Reordering a loop that drives spatial and reduction iterators at once (a fused ``i, k``)
    can visit other instances of an output first, and the init would then wipe what they added."""
    for realize in realizes_under(bottom.body):
        if realize.block.init is None:
            continue
        kinds: dict[Var, set[IterKind]] = {}
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            for var in collect_vars(value):
                kinds.setdefault(var, set()).add(iv.kind)
        for loop in loops:
            if kinds.get(loop.loop_var, set()) >= {IterKind.SPATIAL, IterKind.REDUCE}:
                raise MixedReductionLoopError(
                    f"can't reorder loop {loop.loop_var.name}: it drives both spatial and reduction "
                    f"iterators of block {realize.block.name!r}, whose init must run before the other "
                    "instances of each output; moving it would run the init after some of them. "
                    "decompose_reduction the block first, or reorder before fusing.",
                    loop,
                    realize.block,
                )


@primitive(varargs="ordered_loops")
def reorder(state: ScheduleState, ordered_loops: list[For]) -> None:
    loops = list(ordered_loops)
    _check_distinct(loops, "reorder")
    if len(loops) < 2:
        return
    chain = _reorder_chain(state, loops)
    _check_blocks_below(state, chain[0], chain[-1])
    given = {loop.loop_var for loop in loops}
    _check_init_stays_first(chain[-1], loops, given)
    positions = [position for position, loop in enumerate(chain) if loop.loop_var in given]
    new_chain = list(chain)
    for position, loop in zip(positions, loops):
        new_chain[position] = loop
    for position, loop in enumerate(new_chain):
        _check_not_dependent(
            loop,
            new_chain[position + 1 :],
            "reorder",
            "Keep that loop outside it",
        )
    body = chain[-1].body
    for loop in reversed(new_chain):
        body = replace(loop, body=body)
    state.replace({chain[0]: body})


# ---------------------------------------------------------------- public methods


class LoopTransformationMethods:
    def split(
        self,
        loop: LoopRV,
        factors: list[int | ExprRV | None],
        preserve_unit_iters: bool = True,
        disable_predication: bool = False,
    ) -> list[LoopRV]:
        """Split a loop into nested loops whose extents are ``factors``, outermost first.

        ``split`` in TVM and Halide (Halide splits in two; TVM takes any number of factors).
        The new loops are named ``i_0, i_1, ...``; block bindings that used ``i`` use
        ``i_0 * f1 + i_1``. When the factors multiply to more than the extent, every block
        under the loop gets the predicate ``T.where(i_0 * f1 + i_1 < extent)``.

        Requirements: the loop is serial, starts at 0, has a constant extent and no
        annotations (split first, then bind, vectorize or annotate the new loops).
        Factors are positive; at most one is None and is inferred as
        ``ceil(extent / product of the others)``; without a None they must multiply to
        at least the extent.

        Parameters
        ----------
        loop : the loop to split.
        factors : ints, sampled ExprRVs, and at most one None.
        preserve_unit_iters : keep loops of extent 1 in the block bindings (TVM's default).
        disable_predication : add no ``T.where`` when the factors over-cover the extent (TVM's
            option for callers that guard the accesses themselves; the extra iterations then
            run, and may index past the buffers).

        Returns
        -------
        The new loops, outermost first; the old loop's handle is no longer valid.

        Example
        -------
        >>> sch = Schedule(tir.parse(_VECTOR_ADD))
        >>> i_0, i_1 = sch.split(sch.get_loops(sch.get_block("B"))[0], [None, 32])
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
            # with T.block("root"):
            for i_0, i_1 in T.grid(4, 32):
                with T.block("B"):
                    vi = T.axis.spatial(100, i_0 * 32 + i_1)
                    T.where(i_0 * 32 + i_1 < 100)
                    T.reads(A[vi])
                    T.writes(B[vi])
                    B[vi] = A[vi] + T.float32(1.0)
        """
        factors = [plain_factor(f) for f in factors] if isinstance(factors, (list, tuple)) else factors
        # Recorded only when set, so traces of ordinary splits read as they always did.
        extra = {"disable_predication": True} if disable_predication else {}
        return self._run(
            "split", loop=loop, factors=factors, preserve_unit_iters=preserve_unit_iters, **extra
        )

    def fuse(self, *loops: LoopRV, preserve_unit_iters: bool = True) -> LoopRV:
        """Fuse consecutive nested loops into one loop over the product of their extents.

        ``fuse`` in TVM and Halide. The new loop is named ``i_j_fused``; bindings that used
        ``i`` and ``j`` (extent n) use ``i_j_fused // n`` and ``i_j_fused % n``.

        Requirements: the loops are given outermost first, each is the only statement in
        the body of the one before, all are serial, start at 0, have no annotations, and
        none's extent depends on another's variable.

        Parameters
        ----------
        loops : the loops to fuse, outermost first.
        preserve_unit_iters : keep loops of extent 1 in the block bindings.

        Returns
        -------
        The fused loop; the handles of the fused loops are no longer valid.

        Example
        -------
        >>> sch = Schedule(tir.parse(_TRANSPOSE))
        >>> i, j = sch.get_loops(sch.get_block("B"))
        >>> fused = sch.fuse(i, j)
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((16, 8), "float32")):
            # with T.block("root"):
            for i_j_fused in range(128):
                with T.block("B"):
                    vi = T.axis.spatial(8, i_j_fused // 16)
                    vj = T.axis.spatial(16, i_j_fused % 16)
                    T.reads(A[vi, vj])
                    T.writes(B[vj, vi])
                    B[vj, vi] = A[vi, vj]
        """
        return self._run("fuse", loops=list(loops), preserve_unit_iters=preserve_unit_iters)

    def reorder(self, *ordered_loops: LoopRV) -> None:
        """Reorder loops of one nest: the given loops take the given order, outermost first.

        ``reorder`` in TVM and Halide (Halide lists innermost first; we list outermost first,
        as TVM does). Loops between the outermost and innermost given loops that are not
        given keep their places.

        Requirements: the loops lie on one single-branch path of loops (each the only child
        of the one above, no block in between); no loop is given twice; no loop's range
        depends on a loop that would move inside it; no block below has an opaque iterator.

        Example
        -------
        >>> sch = Schedule(tir.parse(_TRANSPOSE))
        >>> i, j = sch.get_loops(sch.get_block("B"))
        >>> sch.reorder(j, i)
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((16, 8), "float32")):
            # with T.block("root"):
            for j, i in T.grid(16, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vj, vi])
                    B[vj, vi] = A[vi, vj]
        """
        return self._run("reorder", ordered_loops=list(ordered_loops))


# The programs the examples above schedule (doctest globals: tir, Schedule).
_VECTOR_ADD = """
@T.prim_func
def main(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
    for i in range(100):
        with T.block("B"):
            vi = T.axis.spatial(100, i)
            B[vi] = A[vi] + T.float32(1.0)
"""

_TRANSPOSE = """
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((16, 8), "float32")):
    for i, j in T.grid(8, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vj, vi] = A[vi, vj]
"""
