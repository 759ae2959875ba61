"""decompose_reduction and rfactor: restructure a reduction block.

``decompose_reduction`` moves a block's ``T.init()`` into a block of its own,
``C_init``, under copies of the loops it needs, placed right before a chosen
loop, so the update no longer tests for its first iteration. ``rfactor`` splits a
commutative reduction along one of its loops into partial results in a new
buffer ``C_rf`` (the ``C_rf`` block) and a write-back block that combines them,
which is how a reduction is parallelized. Both follow TVM's ``reduction.cc``.
"""

from __future__ import annotations

from dataclasses import replace

from tir import (
    Add,
    Block,
    BlockRealize,
    Buffer,
    BufferLoad,
    BufferRegion,
    BufferStore,
    For,
    ForKind,
    IntImm,
    IterKind,
    IterVar,
    LetStmt,
    Max,
    Min,
    Mul,
    PrimExpr,
    Range,
    Var,
    const,
)
from tir.analysis.block_access import infer_access_regions
from tir.analysis.reducer import identity_of, match_reducer
from tir.expr import And
from tir.functor import Mutator, Visitor, collect_vars, substitute, uses_var
from tir.stmt import seq
from tir.structural import structural_equal

from .analysis import child_blocks
from .block_properties import REDUCTION_CONDITIONS, check_stage_pipeline, reduction_block_problem
from .errors import ScheduleError
from .instruction import BlockRV, LoopRV, primitive
from .rfactor_reducer import Reducer, ReducerPatternError, arg_reducer, single_store_reducer
from .state import ScheduleState

# ---------------------------------------------------------------- errors


class NotReductionBlockError(ScheduleError):
    """The block has no ``T.init()``, or indexes its output with a reduction iterator."""


class LoopNotAncestorError(ScheduleError):
    """decompose_reduction: the loop does not enclose the block."""


class LoopBelowReductionError(ScheduleError):
    """decompose_reduction: a reduction loop of the block lies above the chosen loop."""


class InitReadsLaterWriteError(ScheduleError):
    """decompose_reduction: the init reads a buffer that a block inside the chosen loop writes."""


class NotSingleBlockLoopError(ScheduleError):
    """rfactor: the loop encloses more than one block (or none)."""


class NotSerialLoopError(ScheduleError):
    """rfactor: the loop is parallel, vectorized, unrolled or bound to a thread."""


class NotReductionLoopError(ScheduleError):
    """rfactor: the loop is not bound to any reduction iterator of the block."""


class MixedLoopError(ScheduleError):
    """rfactor: a loop feeds both a spatial and a reduction iterator of the block."""


class LoopStructureError(ScheduleError):
    """rfactor: the loop nest around the block is not a plain reduction nest."""


class InitNotIdentityError(ScheduleError):
    """rfactor: a sum or product starts from a value other than its identity."""


class FactorAxisError(ScheduleError):
    """rfactor: ``factor_axis`` is outside ``[-(ndim + 1), ndim]``."""


class BlockPredicateError(ScheduleError):
    """rfactor: a ``T.where`` predicate of the block bounds its reduction loops, so some partial results
    would never be started (a predicate on the spatial loops is kept by the write-back)."""


# ---------------------------------------------------------------- shared checks


def _check_reduction_block(block: Block, action: str) -> None:
    """Check that ``block`` is a reduction block TVM's way: it has an init and a fixed output element."""
    if block.init is None:
        raise NotReductionBlockError(
            f"can't {action}: block {block.name} has no T.init(), so it is not a reduction block.",
            block,
        )
    reduce_vars = {iv.var for iv in block.iter_vars if iv.kind is IterKind.REDUCE}
    for region in block.writes:
        for dim in region.region:
            if uses_var(dim.min, lambda v: v in reduce_vars):
                raise NotReductionBlockError(
                    f"can't {action}: block {block.name} writes {region.buffer.name} at an index that "
                    "depends on a reduction iterator; a reduction must write the same element on every "
                    "reduction step.",
                    block,
                )


def _guard_without(predicate: PrimExpr, dropped: set[Var]) -> PrimExpr:
    """The conjuncts of ``predicate`` that use none of the ``dropped`` loop variables."""
    kept = const(True)
    for condition in _conjuncts(predicate):
        if not uses_var(condition, lambda v: v in dropped):
            kept = kept & condition
    return kept


def _conjuncts(predicate: PrimExpr) -> list[PrimExpr]:
    if isinstance(predicate, And):
        return _conjuncts(predicate.a) + _conjuncts(predicate.b)
    return [] if getattr(predicate, "value", None) == 1 else [predicate]


def _nest(loops: list[For], body, var_map: dict[Var, Var]):
    """Copies of ``loops`` (outermost first) around ``body``, each with its new variable."""
    for loop in reversed(loops):
        body = replace(loop, loop_var=var_map[loop.loop_var], body=body)
    return body


# ---------------------------------------------------------------- decompose_reduction


def _check_loop_above_reduction(block: Block, realize: BlockRealize, loops: list[For], loop: For) -> None:
    for outer in loops[: loops.index(loop)]:
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.kind is IterKind.REDUCE and uses_var(value, lambda v, var=outer.loop_var: v is var):
                raise LoopBelowReductionError(
                    f"can't decompose block {block.name} at loop {loop.loop_var.name}: loop "
                    f"{outer.loop_var.name} above it feeds the reduction iterator {iv.var.name}. Choose "
                    f"loop {outer.loop_var.name} or a loop above it.",
                    loop,
                    block,
                )


@primitive()
def decompose_reduction(state: ScheduleState, block: Block, loop: For) -> Block:
    loops = state.loops_of(block)
    if not any(loop is candidate for candidate in loops):
        raise LoopNotAncestorError(
            f"can't decompose block {block.name} at loop {loop.loop_var.name}: the loop does not "
            f"enclose the block. Pick one of sch.get_loops(block).",
            loop,
            block,
        )
    _check_reduction_block(block, f"decompose block {block.name}")
    realize = state.realize_of(block)
    _check_loop_above_reduction(block, realize, loops, loop)

    iter_map: dict[Var, Var] = {}
    init_iters, init_values = [], []
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if iv.kind is IterKind.SPATIAL:
            iter_map[iv.var] = Var(iv.var.name, iv.var.dtype)
            init_iters.append(IterVar(iter_map[iv.var], iv.dom, iv.kind))
            init_values.append(value)
    inner = loops[loops.index(loop) :]
    chosen = [
        lp for lp in inner if any(uses_var(v, lambda x, var=lp.loop_var: x is var) for v in init_values)
    ]
    discarded = {lp.loop_var for lp in inner} - {lp.loop_var for lp in chosen}
    loop_map = {lp.loop_var: Var(lp.loop_var.name + "_init", lp.loop_var.dtype) for lp in chosen}
    predicate = _guard_without(realize.predicate, discarded)
    init_block = Block(
        name=state.unique_name(block.name + "_init"),
        iter_vars=tuple(init_iters),
        reads=(),
        writes=tuple(substitute(w, iter_map) for w in block.writes),
        body=substitute(block.init, iter_map),
        annotations=dict(block.annotations),
    )
    init_block = replace(init_block, reads=infer_access_regions(init_block)[0])
    _check_init_inputs_ready(block, init_block, loop)
    init_realize = BlockRealize(
        tuple(substitute(v, loop_map) for v in init_values), substitute(predicate, loop_map), init_block
    )
    init_nest = _nest([replace(lp, annotations={}) for lp in chosen], init_realize, loop_map)
    read_buffers = {r.buffer for r in block.reads}
    reads = tuple(w for w in block.writes if w.buffer not in read_buffers) + block.reads
    state.replace({block: replace(block, init=None, reads=reads)})
    loop = state.index.loops[loop.loop_var]
    state.replace({loop: seq(init_nest, loop)})
    return init_block


def _check_init_inputs_ready(block: Block, init_block: Block, loop: For) -> None:
    """The init goes before ``loop``: a buffer it reads (a bias in shared memory) must not be written
    inside ``loop``, where it would be read before it is filled."""
    read = {region.buffer for region in init_block.reads}
    for producer in _blocks_under(loop):
        late = [w.buffer.name for w in producer.writes if w.buffer in read]
        if producer is not block and late:
            raise InitReadsLaterWriteError(
                f"can't decompose block {block.name} at loop {loop.loop_var.name}: its init reads "
                f"{late[0]}, which block {producer.name} writes inside that loop, so the init would read "
                f"it before it is written. Decompose at a loop outside block {producer.name}, or "
                f"compute {producer.name} at a loop above {loop.loop_var.name}.",
                loop,
                block,
            )


def _blocks_under(stmt) -> list[Block]:
    """Every block below ``stmt``, nested ones included."""
    found, stack = [], child_blocks(stmt)
    while stack:
        block = stack.pop()
        found.append(block)
        stack.extend(child_blocks(block))
    return found


# ---------------------------------------------------------------- reducers


_COMBINER_NAMES = {Add: "+", Mul: "*", Max: "max", Min: "min"}


def _check_rfactor_block(state: ScheduleState, block: Block) -> None:
    """TVM's five conditions of a reduction block, numbered as TVM numbers them."""
    problem = reduction_block_problem(state, block)
    if problem is not None:
        number, reason = problem
        raise NotReductionBlockError(
            f"can't rfactor block {block.name}: it is not a reduction block - it violates condition "
            f"#{number} ({REDUCTION_CONDITIONS[number - 1]}): {reason}.",
            block,
        )


def _check_identity(block: Block, kind: type, init: BufferStore) -> None:
    """Sums and products must start from 0 and 1; max and min may start anywhere (idempotent)."""
    if kind not in (Add, Mul):
        return
    identity = identity_of(kind, init.value.dtype).value
    if getattr(init.value, "value", None) != identity:
        raise InitNotIdentityError(
            f"can't rfactor block {block.name}: its reduction with {_COMBINER_NAMES[kind]} starts from "
            f"{init.value!r}, not {identity}, so partial results would count it several times. "
            f"Initialize with {identity} and add the start value in a separate block.",
            block,
        )


def _without_lets(stmt):
    """A body ``v = e; C[...] = f(v)`` read as the single store ``C[...] = f(e)``: TVM's printer
    writes an update through a let (``v_C: T.float32 = C[vi] + A[vi, vk]``), and TVM's rfactor
    reads through it the same way."""
    bindings: dict = {}
    while isinstance(stmt, LetStmt):
        bindings[stmt.var] = substitute(stmt.value, bindings)
        stmt = stmt.body
    return substitute(stmt, bindings) if bindings else stmt


def _match_reduction(block: Block) -> Reducer:
    update, init = _without_lets(block.body), block.init
    if not isinstance(update, BufferStore) or not isinstance(init, BufferStore):
        return arg_reducer(block)
    kind, rhs = match_reducer(update)
    same_target = init.buffer is update.buffer and all(
        structural_equal(a, b) for a, b in zip(init.indices, update.indices)
    )
    if kind is None or not same_target:
        raise ReducerPatternError(
            f"can't rfactor block {block.name}: the update {update.buffer.name}[...] = "
            f"{update.value!r} is not a recognized commutative reduction; rfactor knows C = C + x, "
            "C = C * x, C = T.max(C, x) and C = T.min(C, x), with init storing to the same element.",
            block,
        )
    _check_identity(block, kind, init)
    return single_store_reducer(kind, rhs, update, init)


# ---------------------------------------------------------------- rfactor


def _touched_loops(realize: BlockRealize, kind: IterKind) -> set[Var]:
    """Variables (loop variables among them) in the bindings of the iterators of ``kind``."""
    values = [v for iv, v in zip(realize.block.iter_vars, realize.iter_values) if iv.kind is kind]
    return set().union(*(collect_vars(v) for v in values))


def _is_unit_loop(loop: For) -> bool:
    return isinstance(loop.extent, IntImm) and loop.extent.value == 1


def _check_rfactor_loops(
    state: ScheduleState, block: Block, loops: list[For], rf_loop, spatial_loops, reduce_loops
) -> None:
    for loop in loops:
        if loop.loop_var in spatial_loops and loop.loop_var in reduce_loops:
            raise MixedLoopError(
                f"can't rfactor block {block.name}: loop {loop.loop_var.name} feeds both spatial and "
                "reduction iterators; split or reorder so that each loop feeds one kind.",
                loop,
            )
    name = rf_loop.loop_var.name
    if rf_loop.loop_var in spatial_loops:
        raise NotReductionLoopError(
            f"can't rfactor loop {name}: it feeds a spatial iterator of block {block.name}; rfactor "
            "needs a loop of the reduction (like k or k_1 after a split).",
            rf_loop,
        )
    # A loop of extent 1 that drives no iterator is accepted as TVM accepts it: its partial
    # buffer has one slot (a longer unbound loop would run the same reduction steps again).
    unit_unbound = _is_unit_loop(rf_loop) and rf_loop.loop_var not in spatial_loops
    if rf_loop.loop_var not in reduce_loops and not unit_unbound:
        raise NotReductionLoopError(
            f"can't rfactor loop {name}: no reduction iterator of block {block.name} depends on it.",
            rf_loop,
        )
    if child_blocks(loops[0])[0] is not block:
        raise LoopStructureError(
            f"can't rfactor block {block.name}: it must be the first block under loop "
            f"{loops[0].loop_var.name}, the outermost loop around it.",
            loops[0],
        )
    outermost_reduction = next(lp for lp in loops if lp.loop_var in reduce_loops)
    if len(child_blocks(outermost_reduction)) != 1:
        raise LoopStructureError(
            f"can't rfactor block {block.name}: loop {outermost_reduction.loop_var.name}, its outermost "
            "reduction loop, holds other blocks too.",
            outermost_reduction,
        )
    below = loops[loops.index(outermost_reduction) :]
    for loop in below:
        bound = loop.loop_var in spatial_loops or loop.loop_var in reduce_loops
        if not bound and getattr(loop.extent, "value", 0) != 1:
            raise LoopStructureError(
                f"can't rfactor block {block.name}: loop {loop.loop_var.name} under a reduction loop is "
                "bound to no block iterator.",
                loop,
            )


def _check_factor_axis(block: Block, buffer: Buffer, factor_axis: int) -> int:
    ndim = len(buffer.shape)
    if not isinstance(factor_axis, int) or not -(ndim + 1) <= factor_axis <= ndim:
        raise FactorAxisError(
            f"can't rfactor block {block.name}: factor_axis={factor_axis!r} is out of range; "
            f"{buffer.name} has {ndim} dimension(s), so factor_axis must be in [{-(ndim + 1)}, {ndim}].",
            block,
        )
    return factor_axis + ndim + 1 if factor_axis < 0 else factor_axis


class _RFactorPlan:
    """The new iterators, indices and regions of the rfactor and write-back blocks."""

    def __init__(self, realize: BlockRealize, rf_loop: For, loops: list[For], factor_axis: int):
        block = realize.block
        self.rf_var = Var("v" + rf_loop.loop_var.name, rf_loop.loop_var.dtype)
        self.rf_iters = [IterVar(self.rf_var, Range(rf_loop.min, rf_loop.extent), IterKind.SPATIAL)]
        self.rf_values: list[PrimExpr] = [rf_loop.loop_var]
        self.old_to_new: dict[Var, PrimExpr] = {}
        loop_to_iter: dict[Var, Var] = {rf_loop.loop_var: self.rf_var}
        loop_by_var = {lp.loop_var: lp for lp in loops}
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if iv.kind is IterKind.SPATIAL or not uses_var(value, lambda v: v is rf_loop.loop_var):
                self.rf_iters.append(iv)
                self.rf_values.append(value)
                continue
            for var in _vars_in_order(value):
                if var in loop_by_var and var not in loop_to_iter:
                    loop = loop_by_var[var]
                    loop_to_iter[var] = Var("v" + var.name, var.dtype)
                    self.rf_iters.append(
                        IterVar(loop_to_iter[var], Range(loop.min, loop.extent), IterKind.REDUCE)
                    )
                    self.rf_values.append(var)
            self.old_to_new[iv.var] = substitute(value, loop_to_iter)
        self.factor_axis = factor_axis

    def rf_indices(self, indices, extra: PrimExpr) -> tuple[PrimExpr, ...]:
        indices = list(indices)
        indices.insert(self.factor_axis, extra)
        return tuple(indices)


def _vars_in_order(expr: PrimExpr) -> list[Var]:
    found: list[Var] = []

    class _Collector(Visitor):
        def visit_Var(self, var: Var) -> None:
            if var not in found:
                found.append(var)

    _Collector().visit(expr)
    return found


def _rf_block(plan: _RFactorPlan, block: Block, rf_buffers: list[Buffer], reducer: Reducer) -> Block:
    indices = plan.rf_indices(reducer.indices, plan.rf_var)
    rf_of = dict(zip(reducer.buffers, rf_buffers))

    def region(r: BufferRegion) -> BufferRegion:
        if r.buffer not in rf_of:
            return substitute(r, plan.old_to_new)
        dims = list(r.region)
        dims.insert(plan.factor_axis, Range(plan.rf_var, const(1, plan.rf_var.dtype)))
        return substitute(BufferRegion(rf_of[r.buffer], tuple(dims)), plan.old_to_new)

    if not any(iv.kind is IterKind.REDUCE for iv in plan.rf_iters):
        # Every reduction loop became the rfactor loop: each partial result is one term, stored
        # as it is (TVM's form; no init, no read of the partial buffers).
        return Block(
            name=block.name + "_rf",
            iter_vars=tuple(plan.rf_iters),
            reads=tuple(region(r) for r in block.reads if r.buffer not in rf_of),
            writes=tuple(region(w) for w in block.writes),
            body=substitute(reducer.store(rf_buffers, indices, reducer.incoming), plan.old_to_new),
            annotations=dict(block.annotations),
        )
    partials = [BufferLoad(b, indices) for b in rf_buffers]
    return Block(
        name=block.name + "_rf",
        iter_vars=tuple(plan.rf_iters),
        reads=tuple(region(r) for r in block.reads),
        writes=tuple(region(w) for w in block.writes),
        body=substitute(
            reducer.store(rf_buffers, indices, reducer.combine(partials, list(reducer.incoming))),
            plan.old_to_new,
        ),
        init=substitute(reducer.init_stores(rf_buffers, indices), plan.old_to_new),
        annotations=dict(block.annotations),
    )


def _write_back(plan, realize: BlockRealize, rf_loop: For, rf_buffers: list[Buffer], reducer: Reducer):
    block = realize.block
    wb_rf_var = Var(plan.rf_var.name, plan.rf_var.dtype)
    iters = [IterVar(wb_rf_var, Range(rf_loop.min, rf_loop.extent), IterKind.REDUCE)]
    values: list[PrimExpr] = [rf_loop.loop_var]
    var_map: dict[Var, PrimExpr] = {}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if iv.kind is IterKind.SPATIAL:
            var_map[iv.var] = Var(iv.var.name, iv.var.dtype)
            iters.append(IterVar(var_map[iv.var], iv.dom, iv.kind))
            values.append(value)
    indices = tuple(substitute(i, var_map) for i in reducer.indices)
    partials = [BufferLoad(b, plan.rf_indices(indices, wb_rf_var)) for b in rf_buffers]
    outputs = [BufferLoad(b, indices) for b in reducer.buffers]
    wb_block = Block(
        name=block.name,
        iter_vars=tuple(iters),
        reads=tuple(_point_region(p) for p in partials),
        writes=tuple(_point_region(o) for o in outputs),
        body=reducer.store(reducer.buffers, indices, reducer.combine(outputs, partials)),
        init=substitute(reducer.init_stores(reducer.buffers, indices), var_map),
        annotations=dict(block.annotations),
    )
    return BlockRealize(tuple(values), const(True), wb_block)


def _point_region(load: BufferLoad) -> BufferRegion:
    return BufferRegion(load.buffer, tuple(Range(i, const(1, i.dtype)) for i in load.indices))


class _WriteBackNest(Mutator):
    """The original nest with the reduction loops (but the rfactor loop) removed around the new block."""

    def __init__(self, loop_vars: set[Var], keep: set[Var], old: BlockRealize, new: BlockRealize):
        self.loop_vars, self.keep, self.old, self.new = loop_vars, keep, old, new

    def visit_For(self, loop: For):
        if loop.loop_var not in self.loop_vars:
            return loop
        body = self.visit(loop.body)
        if loop.loop_var not in self.keep:
            return body
        return loop if body is loop.body else replace(loop, body=body)

    def visit_BlockRealize(self, realize: BlockRealize):
        return self.new if realize is self.old else realize


@primitive()
def rfactor(state: ScheduleState, loop: For, factor_axis: int) -> Block:
    blocks = child_blocks(loop)
    if len(blocks) != 1:
        raise NotSingleBlockLoopError(
            f"can't rfactor loop {loop.loop_var.name}: it encloses {len(blocks)} blocks "
            f"({', '.join(b.name for b in blocks) or 'none'}); rfactor needs a loop around exactly one "
            "reduction block.",
            loop,
        )
    block = blocks[0]
    check_stage_pipeline(state, block, "rfactor")
    _check_rfactor_block(state, block)
    if loop.kind is not ForKind.SERIAL:
        raise NotSerialLoopError(
            f"can't rfactor loop {loop.loop_var.name}: it is {loop.kind.value}; rfactor needs a serial "
            "loop (apply rfactor first, then parallelize or bind the new loops).",
            loop,
        )
    realize = state.realize_of(block)
    loops = state.loops_of(block)
    spatial_loops = _touched_loops(realize, IterKind.SPATIAL)
    reduce_loops = _touched_loops(realize, IterKind.REDUCE)
    on_reduction = [c for c in _conjuncts(realize.predicate) if uses_var(c, reduce_loops.__contains__)]
    if on_reduction:
        raise BlockPredicateError(
            f"can't rfactor block {block.name}: it runs under the predicate T.where({on_reduction[0]!r}) on "
            "its reduction loops, which rfactor can't carry to the partial results (TVM refuses it too). "
            "Split the reduction loop by a factor that divides its extent instead.",
            block,
        )
    _check_rfactor_loops(state, block, loops, loop, spatial_loops, reduce_loops)
    reducer = _match_reduction(block)
    axis = _check_factor_axis(block, reducer.buffers[0], factor_axis)

    rf_buffers = []
    for buffer in reducer.buffers:
        rf_shape = list(buffer.shape)
        rf_shape.insert(axis, loop.extent)
        rf_buffers.append(
            Buffer(state.unique_name(buffer.name + "_rf"), tuple(rf_shape), buffer.dtype, buffer.scope)
        )
    plan = _RFactorPlan(realize, loop, loops, axis)
    rf_block = replace(
        _rf_block(plan, block, rf_buffers, reducer), name=state.unique_name(block.name + "_rf")
    )
    loop_map = {lp.loop_var: Var(lp.loop_var.name, lp.loop_var.dtype) for lp in loops}
    rf_realize = BlockRealize(
        tuple(substitute(v, loop_map) for v in plan.rf_values),
        substitute(realize.predicate, loop_map),
        rf_block,
    )
    rf_nest = _nest(loops, rf_realize, loop_map)
    wb_realize = _write_back(plan, realize, loop, rf_buffers, reducer)
    keep = {lp.loop_var for lp in loops if lp is loop or lp.loop_var not in reduce_loops}
    # The write-back keeps the guard of a non-divisible split of its spatial loops (else it runs past them).
    dropped = {lp.loop_var for lp in loops} - keep
    wb_realize = replace(wb_realize, predicate=_guard_without(realize.predicate, dropped))
    wb_nest = _WriteBackNest({lp.loop_var for lp in loops}, keep, realize, wb_realize).visit(loops[0])
    scope = state.parent_block(realize)
    state.replace({loops[0]: seq(rf_nest, wb_nest)})
    scope = state.index.blocks[scope.name]
    state.replace({scope: replace(scope, alloc_buffers=scope.alloc_buffers + tuple(rf_buffers))})
    return rf_block


# ---------------------------------------------------------------- public methods


class ReductionMethods:
    def decompose_reduction(self, block: BlockRV, loop: LoopRV) -> BlockRV:
        """Move a reduction block's ``T.init()`` into its own block, placed right before ``loop``.

        The new block ``C_init`` has the spatial iterators of ``C`` and runs under
        copies of the loops (from ``loop`` inward) that its bindings need, named
        ``i_init``; ``C`` keeps its name, loses its init and now also reads the
        buffer it accumulates into. ``decompose_reduction`` in TVM (which also
        renames the update block to ``C_update``; here the name stays, so handles
        to the block stay valid).

        Requirements
        ------------
        - ``block`` has a ``T.init()`` and writes the same element on every
          reduction step;
        - ``loop`` encloses ``block``, and no loop above ``loop`` feeds a
          reduction iterator (``loop`` is at or above the outermost reduction loop).

        Parameters
        ----------
        block : the reduction block.
        loop : the loop before which the init block is placed.

        Returns
        -------
        The init block.

        Example
        -------
        >>> func = tir.parse('''
        ... @T.prim_func
        ... def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
        ...     for i, k in T.grid(4, 8):
        ...         with T.block("B"):
        ...             vi, vk = T.axis.remap("SR", [i, k])
        ...             with T.init():
        ...                 B[vi] = T.float32(0)
        ...             B[vi] = B[vi] + A[vi, vk]
        ... ''')
        >>> sch = Schedule(func)
        >>> block = sch.get_block("B")
        >>> i, k = sch.get_loops(block)
        >>> init = sch.decompose_reduction(block, k)
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
            # with T.block("root"):
            for i in range(4):
                with T.block("B_init"):
                    vi = T.axis.spatial(4, i)
                    T.reads()
                    T.writes(B[vi])
                    B[vi] = T.float32(0.0)
                for k in range(8):
                    with T.block("B"):
                        vi_1, vk = T.axis.remap("SR", [i, k])
                        T.reads(B[vi_1], A[vi_1, vk])
                        T.writes(B[vi_1])
                        B[vi_1] = B[vi_1] + A[vi_1, vk]
        """
        return self._run("decompose_reduction", block=block, loop=loop)

    def rfactor(self, loop: LoopRV, factor_axis: int) -> BlockRV:
        """Factor a reduction along ``loop`` into partial results and a write-back block.

        For a block ``C`` reducing over ``loop``, a new buffer ``C_rf`` (``C``'s
        shape with ``loop``'s extent inserted at ``factor_axis``) receives one
        partial result per iteration of ``loop`` from the new block ``C_rf`` (under
        copies of all of ``C``'s loops), and ``C`` becomes the write-back block
        that combines the partials over ``loop`` (its other reduction loops are
        removed). ``rfactor`` in TVM and Halide.

        Requirements
        ------------
        - ``loop`` is a serial loop enclosing exactly one block, a reduction block
          whose update is ``C = C + x``, ``C * x``, ``T.max(C, x)`` or ``T.min(C, x)``
          (a sum starts from 0, a product from 1), or an argmax/argmin over two
          buffers (schedule/rfactor_reducer.py: both get a partial buffer);
        - ``loop`` feeds a reduction iterator of the block and no spatial one (or is a
          loop of extent 1 that feeds none, as TVM allows: one partial slot); no
          loop feeds both kinds; the block is the first block under its outermost
          loop, and its outermost reduction loop holds only it;
        - ``factor_axis`` is in ``[-(ndim + 1), ndim]`` for ``C``'s ``ndim``.

        Parameters
        ----------
        loop : the reduction loop to factor out.
        factor_axis : where the new dimension goes in ``C_rf``.

        Returns
        -------
        The rfactor block ``C_rf``.

        Example
        -------
        >>> func = tir.parse('''
        ... @T.prim_func
        ... def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
        ...     for i, k in T.grid(4, 8):
        ...         with T.block("B"):
        ...             vi, vk = T.axis.remap("SR", [i, k])
        ...             with T.init():
        ...                 B[vi] = T.float32(0)
        ...             B[vi] = B[vi] + A[vi, vk]
        ... ''')
        >>> sch = Schedule(func)
        >>> i, k = sch.get_loops(sch.get_block("B"))
        >>> k_0, k_1 = sch.split(k, [2, 4])
        >>> rf = sch.rfactor(k_1, 0)
        >>> print(sch.mod["main"].script())
        # from tir import T
        <BLANKLINE>
        @T.prim_func
        def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
            # with T.block("root"):
            B_rf = T.alloc_buffer((4, 4))
            for i, k_0, k_1 in T.grid(4, 2, 4):
                with T.block("B_rf"):
                    vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
                    T.reads(A[vi, vk_0 * 4 + vk_1])
                    T.writes(B_rf[vk_1, vi])
                    with T.init():
                        B_rf[vk_1, vi] = T.float32(0.0)
                    B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 4 + vk_1]
            for i_1, k_1_1 in T.grid(4, 4):
                with T.block("B"):
                    vk_1_1, vi_1 = T.axis.remap("RS", [k_1_1, i_1])
                    T.reads(B_rf[vk_1_1, vi_1])
                    T.writes(B[vi_1])
                    with T.init():
                        B[vi_1] = T.float32(0.0)
                    B[vi_1] = B[vi_1] + B_rf[vk_1_1, vi_1]

        When ``loop`` is the block's only reduction loop, each partial result is one term:
        ``B_rf`` is then stored without an init (``B_rf[vk, vi] = A[vi, vk]``), as in TVM.
        """
        return self._run("rfactor", loop=loop, factor_axis=factor_axis)
